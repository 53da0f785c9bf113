//! Kernel parameters and buffer options: `-D NAME=VALUE` over the declared
//! defaults, the parameter space's words, and the buffers `--load`/`--dump`
//! name.

use super::image::LoadError;
use crate::machine::param::shorten;
use spu_isa::Ty;
use spu_isa::format::{Module, ParamDecl};
use std::path::PathBuf;

/// The buffers and files of every `option BUF=FILE` in `args`, one per buffer: a
/// second `--load` of a buffer would silently replace the first.
pub(super) fn buffer_args(
    module: &Module,
    option: &'static str,
    args: &[String],
) -> Result<Vec<(usize, PathBuf)>, LoadError> {
    let mut out: Vec<(usize, PathBuf)> = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        let (index, path) = buffer_arg(module, option, arg)?;
        if let Some(j) = out.iter().position(|(b, _)| *b == index) {
            return Err(LoadError::BufferTwice {
                option,
                first: shorten(&args[j]),
                second: shorten(&args[i]),
                name: shorten(&module.buffers[index].name),
            });
        }
        out.push((index, path));
    }
    Ok(out)
}

pub(super) fn buffer_arg(
    module: &Module,
    option: &'static str,
    arg: &str,
) -> Result<(usize, PathBuf), LoadError> {
    let (name, path) = arg
        .split_once('=')
        .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        .ok_or_else(|| LoadError::BufferArgSyntax {
            option,
            arg: shorten(arg),
        })?;
    let index = module
        .buffers
        .iter()
        .position(|b| b.name == name)
        .ok_or_else(|| LoadError::UnknownBuffer {
            option,
            name: shorten(name),
            list: quoted(module.buffers.iter().map(|b| b.name.as_str())),
        })?;
    Ok((index, PathBuf::from(path)))
}

pub(super) fn quoted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    const SHOWN: usize = 20;
    let mut v: Vec<String> = Vec::new();
    let mut more = 0usize;
    for n in names {
        if v.len() < SHOWN {
            v.push(format!("`{}`", shorten(n)));
        } else {
            more += 1;
        }
    }
    if v.is_empty() {
        "none".into()
    } else if more > 0 {
        format!("{} and {more} more", v.join(", "))
    } else {
        v.join(", ")
    }
}

/// Parameter space as words (see [`Image::params`]).
pub(super) fn param_words(params: &[ParamDecl], values: &[u64]) -> Vec<u32> {
    let (offsets, size) = spu_isa::format::param_layout(params.iter().map(|p| p.ty));
    let mut words = vec![0u32; size as usize / 4];
    for ((p, at), v) in params.iter().zip(offsets).zip(values) {
        let w = at as usize / 4;
        words[w] = *v as u32;
        if p.ty.bits() == 64 {
            words[w + 1] = (*v >> 32) as u32;
        }
    }
    words
}

/// Each parameter's value as a bit pattern, in declaration order: its default,
/// or the `-D NAME=VALUE` naming it (at most one may).
pub(super) fn resolve_params(module: &Module, defines: &[String]) -> Result<Vec<u64>, LoadError> {
    spu_machine::resources::check_repeated_defines(defines).map_err(LoadError::RepeatedDefine)?;
    let mut values: Vec<Option<u64>> = module.params.iter().map(|p| p.default).collect();
    for d in defines {
        let (name, text) = d
            .split_once('=')
            .filter(|(n, v)| !n.trim().is_empty() && !v.trim().is_empty())
            .ok_or_else(|| LoadError::DefineSyntax(shorten(d)))?;
        let name = name.trim();
        let i = module
            .params
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| LoadError::UnknownParam {
                name: shorten(name),
                list: if module.params.is_empty() {
                    "it declares no parameters".into()
                } else {
                    format!(
                        "parameters are {}",
                        quoted(module.params.iter().map(|p| p.name.as_str()))
                    )
                },
            })?;
        let ty = module.params[i].ty;
        values[i] = Some(
            spu_isa::format::parse_param_value(text.trim(), ty).map_err(|why| {
                LoadError::BadParamValue {
                    name: name.to_string(),
                    ty,
                    value: shorten(text.trim()),
                    why,
                }
            })?,
        );
    }
    module
        .params
        .iter()
        .zip(values)
        .map(|(p, v)| {
            v.ok_or_else(|| LoadError::MissingParam {
                name: p.name.clone(),
                hint: if p.ty == Ty::U64 || p.ty == Ty::B64 {
                    " (if it is a pointer, bind a buffer to it instead: launch the kernel from a `.spu` file with `.bind kernel(A, B, N);`, see \"Launching a PTX kernel\" in asm/LANGUAGE.md)"
                } else {
                    ""
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_space_puts_64_bit_values_low_word_first_and_aligned() {
        let p = |name: &str, ty| ParamDecl {
            name: name.into(),
            ty,
            default: None,
        };
        let params = [p("N", Ty::U32), p("A", Ty::F64), p("K", Ty::S32)];
        let words = param_words(&params, &[7, 0x4002_0000_0000_0001, 0xffff_fffe]);
        assert_eq!(words, vec![7, 0, 1, 0x4002_0000, 0xffff_fffe]);
    }
}
