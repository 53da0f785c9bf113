//! Kernel parameters and buffer options: `-D NAME=VALUE` over the declared
//! defaults, the parameter space's words, and the buffers `--load`/`--dump`
//! name, and what an error about a launch or size expression says of the
//! parameters it names.

use super::error::LoadError;
use crate::machine::param::shorten;
use spu_isa::Ty;
use spu_isa::format::{Expr, Module, Node, ParamDecl};
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
        // Each byte of the value, little-endian, at its offset (a field of 1 or 2
        // bytes shares its word with its neighbours).
        for (k, byte) in v.to_le_bytes()[..(p.ty.bits() / 8) as usize]
            .iter()
            .enumerate()
        {
            let b = at as usize + k;
            words[b / 4] |= u32::from(*byte) << (8 * (b % 4));
        }
    }
    words
}

/// What an error about a launch or size expression adds to its message: the
/// expression (`text`) and the declaration it belongs to (`decl`), the values of
/// the parameters it names and where each came from (a `-D` or the kernel's
/// default), and how to change them. `show_text`: whether to quote the
/// expression (not when the message already does).
pub(super) fn expr_context(
    module: &Module,
    values: &[u64],
    defines: &[String],
    exprs: &[&Expr],
    decl: &str,
    show_text: bool,
) -> String {
    let names = |i: u16| module.param_name(i);
    let text = exprs
        .iter()
        .map(|e| e.display(&names).to_string())
        .collect::<Vec<_>>();
    let text = match text.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join("][")),
    };
    let mut params: Vec<u16> = Vec::new();
    for e in exprs {
        for n in e.nodes() {
            if let Node::Param(i) = n
                && !params.contains(i)
            {
                params.push(*i);
            }
        }
    }
    let given = |name: &str| {
        defines
            .iter()
            .filter_map(|d| d.split_once('='))
            .any(|(n, _)| n.trim() == name)
    };
    let mut shown = Vec::new();
    let mut names = Vec::new();
    let mut fixes = Vec::new();
    for i in params {
        let (Some(p), Some(&raw)) = (
            module.params.get(usize::from(i)),
            values.get(usize::from(i)),
        ) else {
            continue;
        };
        let value = match spu_isa::format::param_int(p.ty, raw) {
            Some(v) => v.to_string(),
            None if !p.ty.is_float() => raw.to_string(),
            None => format!("{raw:#x}"),
        };
        let name = spu_io::quote::escape(&p.name);
        let from = if given(&p.name) {
            format!("`-D {name}={value}`")
        } else {
            "the kernel's default".to_string()
        };
        shown.push(format!("{name} = {value} ({from})"));
        fixes.push(format!("-D {name}=VALUE"));
        names.push(name.into_owned());
    }
    let what = if show_text {
        format!("`{text}` in {decl}")
    } else {
        format!("in {decl}")
    };
    if shown.is_empty() {
        return format!("; it is {what}: change it there");
    }
    format!(
        "; it is {what}, with {}: give {} {} with `{}`",
        shown.join(", "),
        names.join(", "),
        if names.len() == 1 {
            "another value"
        } else {
            "other values"
        },
        fixes.join(" ")
    )
}

impl LoadError {
    /// Adds to an error about a launch or size expression's value where the
    /// expression comes from and how to change it ([`super::params::expr_context`]).
    /// `context(show_text)` says it, quoting the expression if `show_text`.
    pub(super) fn with_context(self, context: impl FnOnce(bool) -> String) -> LoadError {
        match self {
            LoadError::BadExpr {
                what, text, why, ..
            } => LoadError::BadExpr {
                what,
                text,
                why,
                context: context(false),
            },
            LoadError::Limit {
                what, value, limit, ..
            } => LoadError::Limit {
                what,
                value,
                limit,
                context: context(true),
            },
            other => other,
        }
    }
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
