//! Mnemonics and their modifiers resolved against the ISA table, and the
//! diagnostics for wrong mnemonics, modifiers, operand counts and names.

use super::Scope;
use crate::diag::Diagnostic;
use crate::lexer::Span;
use spu_io::suggest::closest;
use spu_isa::table::{ModKind, OperandKind, allowed_names};
use spu_isa::{Mods, Opcode, TABLE};

/// Resolves `ld.cb.north.f32` into a row and its modifier values.
pub(super) fn resolve_mnemonic(text: &str, span: &Span) -> Result<(Opcode, Mods), Diagnostic> {
    let parts: Vec<&str> = text.split('.').collect();
    // Longest row mnemonic that prefixes the dotted parts (`atom.global.cas` before `atom.global`).
    let found = (1..=parts.len())
        .rev()
        .find_map(|k| Opcode::from_mnemonic(&parts[..k].join(".")).map(|op| (op, k)));
    let Some((op, consumed)) = found else {
        return Err(unknown_instruction(text, &parts, span));
    };
    let spec = op.spec();
    let mut mods = Mods::default();
    // Offsets of each part inside the token, for spans on single modifiers.
    let mut offsets = Vec::new();
    let mut at = span.start;
    for p in &parts {
        offsets.push(at..at + p.len());
        at += p.len() + 1;
    }
    // A vector width the machine lacks (`.v8`) would otherwise be read as a
    // misspelt type (`.b8`).
    if spec.modifiers().any(|(k, _, _)| k == ModKind::Vector)
        && let Some(k) = parts.iter().skip(consumed).position(|p| {
            p.len() > 1
                && p.starts_with('v')
                && p[1..].bytes().all(|b| b.is_ascii_digit())
                && !ModKind::Vector.names().contains(p)
        })
    {
        let part = parts[consumed + k];
        return Err(Diagnostic::error(
            format!("vector width `.{part}` is not supported"),
            offsets[consumed + k].clone(),
        )
        .label("`.v2` and `.v4` are")
        .help(format!(
            "split it into `{}.v4` (or `.v2`) accesses at consecutive addresses",
            parts[..consumed + k].join(".")
        )));
    }
    let mut i = consumed;
    for (kind, allowed, optional) in spec.modifiers() {
        let names = kind.names();
        // Values may span two parts (`cb.north`).
        let matched = [2usize, 1].iter().find_map(|&n| {
            (i + n <= parts.len())
                .then(|| parts[i..i + n].join("."))
                .and_then(|joined| {
                    names
                        .iter()
                        .position(|v| *v == joined)
                        .map(|code| (code, n))
                })
        });
        match matched {
            Some((code, n)) if allowed & (1 << code) != 0 || !optional => {
                let mspan = offsets[i].start..offsets[i + n - 1].end;
                if allowed & (1 << code) == 0 {
                    return Err(not_allowed(
                        spec.mnemonic,
                        kind,
                        names[code],
                        allowed,
                        mspan,
                    ));
                }
                mods.set(kind, code as u8);
                i += n;
            }
            _ if optional => {}
            _ if parts
                .get(i)
                .is_some_and(|p| closest(p, allowed_names(kind, allowed)).is_none()) =>
            {
                return Err(misplaced_modifier(
                    op,
                    parts[i],
                    (kind, allowed),
                    offsets[i].clone(),
                ));
            }
            _ => {
                let choices = allowed_names(kind, allowed)
                    .iter()
                    .map(|n| format!(".{n}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let (dspan, label) = match offsets.get(i) {
                    Some(s) => (s.clone(), format!("expected a {} here", kind.describe())),
                    None => (span.clone(), format!("missing a {}", kind.describe())),
                };
                let mut d = Diagnostic::error(
                    format!("`{}` needs a {}: {choices}", spec.mnemonic, kind.describe()),
                    dspan,
                )
                .label(label);
                if let Some(p) = parts.get(i)
                    && let Some(s) = closest(p, allowed_names(kind, allowed))
                {
                    d = d.help(format!("did you mean `.{s}`?"));
                }
                return Err(d);
            }
        }
    }
    if let Some(extra) = parts.get(i) {
        let all: Vec<&str> = spec
            .modifiers()
            .flat_map(|(k, a, _)| allowed_names(k, a))
            .collect();
        if all.contains(extra) {
            return Err(Diagnostic::error(
                format!("modifier `.{extra}` of `{}` is out of order", spec.mnemonic),
                offsets[i].clone(),
            )
            .label("it goes earlier")
            .help(format!("modifiers go in the order of {}", syntax_of(op))));
        }
        let d = Diagnostic::error(
            format!("unknown modifier `.{extra}` for `{}`", spec.mnemonic),
            offsets[i].clone(),
        )
        .label("not a modifier of this instruction");
        return Err(match closest(extra, all.iter().copied()) {
            Some(s) => d.help(format!(
                "did you mean `.{s}`? (modifiers go in the order of {})",
                syntax_of(op)
            )),
            None => d.help(format!("the syntax is {}", syntax_of(op))),
        });
    }
    if let (Some(t), None, true) = (
        mods.ty,
        mods.half,
        spec.rules.contains(&spu_isa::table::Rule::HalfForIntOnly),
    ) && t.is_int()
    {
        return Err(Diagnostic::error(
            format!("integer `{}` needs .lo or .hi", spec.mnemonic),
            span.clone(),
        )
        .label("which half of the double-width product?")
        .help(format!(
            "write `{}.lo.{t}` for the usual wrapping product",
            spec.mnemonic
        )));
    }
    if let Err(why) = spec.check_rules(&mods) {
        return Err(Diagnostic::error(
            format!("`{text}` is not a valid form of `{}`", spec.mnemonic),
            span.clone(),
        )
        .label(why)
        .help(format!("for example: `{}`", spec.example)));
    }
    Ok((op, mods))
}

/// A mnemonic that no row prefixes. The help only ever names instructions
/// that resolve.
fn unknown_instruction(text: &str, parts: &[&str], span: &Span) -> Diagnostic {
    let d = Diagnostic::error(format!("unknown instruction `{text}`"), span.clone())
        .label("not in the instruction set");
    let base = parts[0];
    let rest: String = parts[1..].iter().map(|p| format!(".{p}")).collect();
    let resolves = |m: &str| resolve_mnemonic(m, &(0..m.len())).is_ok();
    // The rows of `atom` and `red` name their state space: `atom.global`, `atom.shared`.
    let spaced: Vec<&str> = TABLE
        .iter()
        .map(|r| r.mnemonic)
        .filter(|m| m.split('.').count() == 2 && m.split('.').next() == Some(base))
        .collect();
    if spaced.is_empty() {
        return match closest(
            base,
            TABLE
                .iter()
                .map(|r| r.mnemonic.split('.').next().unwrap_or("")),
        ) {
            Some(s) => d.help(format!("did you mean `{s}{rest}`?")),
            None => d.help("see isa-spec/ISA.md for the instruction set"),
        };
    }
    let spaces: Vec<String> = spaced
        .iter()
        .map(|m| format!("`.{}`", &m[base.len() + 1..]))
        .collect();
    if let Some(&space) = parts.get(1)
        && (ModKind::Space.names().contains(&space) || space == "const")
    {
        // A state space the instruction lacks (`red.shared`, `atom.local`).
        let lacks = format!(
            "`{base}` works on {} memory, not `.{space}`",
            spaces.join(" or ")
        );
        let tail: String = parts[2..].iter().map(|p| format!(".{p}")).collect();
        let atom = format!("atom.{space}{tail}");
        return d.help(if base == "red" && resolves(&atom) {
            format!(
                "{lacks}; for `.{space}` memory write `{atom} %rN, [addr], b;` with a destination register whose value you ignore"
            )
        } else {
            lacks
        });
    }
    let fits: Vec<String> = spaced
        .iter()
        .map(|m| format!("{m}{rest}"))
        .filter(|m| resolves(m))
        .map(|m| format!("`{m}`"))
        .collect();
    let example = TABLE
        .iter()
        .find(|r| r.mnemonic == spaced[0])
        .map_or("", |r| r.example);
    d.help(if fits.is_empty() {
        format!(
            "`{base}` needs a state space ({}), e.g. `{example}` (generic addresses, PTX without a state space, are not supported)",
            spaces.join(" or ")
        )
    } else {
        format!(
            "`{base}` needs a state space: {} (generic addresses, PTX without a state space, are not supported)",
            fits.join(" or ")
        )
    })
}

/// A part where a required modifier of `kind` goes that is neither one of its
/// values nor close to one: another modifier out of order, or not a modifier of
/// this instruction at all.
fn misplaced_modifier(
    op: Opcode,
    part: &str,
    (kind, allowed): (ModKind, u32),
    span: Span,
) -> Diagnostic {
    let spec = op.spec();
    let own = spec
        .modifiers()
        .any(|(k, a, _)| k != kind && allowed_names(k, a).contains(&part));
    let expected = format!("expected a {} here", kind.describe());
    if own && kind == ModKind::Space && spu_isa::Ty::from_name(part).is_some() {
        // PTX's generic addressing (`ld.u32`, no state space) is what nvcc writes
        // for pointers it cannot place.
        let mnemonic = spec.mnemonic;
        return Diagnostic::error(
            format!("`{mnemonic}` needs a state space here"),
            span,
        )
        .label(expected)
        .help(format!(
            "write `{mnemonic}.global.{part}` for buffers or `{mnemonic}.shared.{part}` for shared arrays: generic addresses (PTX without a state space) are not supported"
        ));
    }
    if own {
        Diagnostic::error(
            format!("modifier `.{part}` of `{}` is out of order", spec.mnemonic),
            span,
        )
        .label(expected)
        .help(format!(
            "modifiers go in the order of {}, e.g. `{}`",
            syntax_of(op),
            spec.example.split_whitespace().next().unwrap_or("")
        ))
    } else {
        Diagnostic::error(
            format!("unknown modifier `.{part}` for `{}`", spec.mnemonic),
            span,
        )
        .label(format!("not a modifier of this instruction; {expected}"))
        .help(format!(
            "the syntax is {}; the {} is one of {}",
            syntax_of(op),
            kind.describe(),
            allowed_names(kind, allowed)
                .iter()
                .map(|n| format!(".{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

pub(super) fn syntax_of(op: Opcode) -> String {
    let spec = op.spec();
    let mut s = spec.mnemonic.to_string();
    for (kind, _, optional) in spec.modifiers() {
        if optional {
            s.push_str(&format!("[.{}]", kind.describe().replace(' ', "_")));
        } else {
            s.push_str(&format!(".{}", kind.describe().replace(' ', "_")));
        }
    }
    format!("`{s}`")
}

pub(super) fn not_allowed(
    mnemonic: &str,
    kind: ModKind,
    value: &str,
    allowed: u32,
    span: Span,
) -> Diagnostic {
    let choices = allowed_names(kind, allowed)
        .iter()
        .map(|n| format!(".{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let base = Diagnostic::error(format!("`{mnemonic}` cannot use .{value}"), span);
    match (mnemonic, value) {
        ("ld", "cb.south" | "cb.east") => base
            .label("a unit reads only its north and west CBs")
            .help(format!("data flows west->east and north->south: read with `ld.cb.north` or `ld.cb.west`, write `.{value}` with `st`")),
        ("st", "cb.north" | "cb.west") => base
            .label("a unit writes only its south and east CBs")
            .help(format!("data flows west->east and north->south: write with `st.cb.south` or `st.cb.east`, read `.{value}` with `ld`")),
        ("st", "param") => base.label("parameters are read-only").help("store to a `.global` buffer instead"),
        _ => base.label(format!("allowed: {choices}")),
    }
}

pub(super) fn operand_count_error(op: Opcode, found: usize, span: Span) -> Diagnostic {
    let spec = op.spec();
    let names: Vec<&str> = spec
        .operands()
        .filter(|o| o.1 != OperandKind::OptPred)
        .map(|o| o.0)
        .collect();
    Diagnostic::error(
        format!(
            "`{}` takes {} operand{}, found {found}",
            spec.mnemonic,
            names.len(),
            if names.len() == 1 { "" } else { "s" }
        ),
        span,
    )
    .label(if names.is_empty() {
        "expected none".to_string()
    } else {
        format!("expected {}", names.join(", "))
    })
    .help(format!("for example: `{}`", spec.example))
}

pub(super) fn undeclared(name: &str, span: &Span, scope: &Scope) -> Diagnostic {
    let d = Diagnostic::error(format!("undeclared register `%{name}`"), span.clone())
        .label("not declared with `.reg`");
    match closest(name, scope.regs.keys().map(String::as_str)) {
        Some(s) => d.help(format!("did you mean `%{s}`?")),
        None => d.help(format!("declare it: `.reg .u32 %{name};`")),
    }
}

pub(super) fn unknown_name(n: &str, span: &Span, scope: &Scope) -> Diagnostic {
    if scope.params.iter().any(|p| p.name == n) {
        return Diagnostic::error(format!("parameter `{n}` is not an immediate"), span.clone())
            .label("parameters can change at launch (-D)")
            .help(format!("read it with `ld.param.u32 %rX, [{n}];`"));
    }
    if scope.funcs.contains(n) {
        return Diagnostic::error(
            format!("`{n}` is a device function; its address (a function pointer) is not supported yet"),
            span.clone(),
        )
        .label("a function used as a value")
        .help(format!("call it by its name (`call (ret), {n}, (a);`); in CUDA C, call it directly instead of through a pointer"));
    }
    let all = scope
        .buffers
        .keys()
        .chain(scope.shared.keys())
        .map(String::as_str);
    let d = Diagnostic::error(format!("unknown symbol `{n}`"), span.clone())
        .label("no buffer or shared array has this name");
    match closest(n, all) {
        Some(s) => d.help(format!("did you mean `{s}`?")),
        None => d,
    }
}
