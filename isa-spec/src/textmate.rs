//! The TextMate grammar for `.spu` files (VS Code and most editors), generated from
//! the ISA table so every mnemonic, modifier and special register is highlighted.
//! `editors/vscode/syntaxes/spu.tmLanguage.json` is this output; a test fails when it
//! is stale.

use crate::names::{Special, Ty};
use crate::table::{ModKind, TABLE};

fn escape_regex(s: &str) -> String {
    s.replace('.', "\\\\.")
}

fn alternation(mut words: Vec<String>) -> String {
    // Longest first, so `bar.blocksync` wins over `bar`.
    words.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    words.dedup();
    words
        .iter()
        .map(|w| escape_regex(w))
        .collect::<Vec<_>>()
        .join("|")
}

fn rule(name: &str, regex: &str) -> String {
    format!("        {{ \"name\": \"{name}\", \"match\": \"{regex}\" }}")
}

/// The grammar as JSON text.
pub fn grammar() -> String {
    let mnemonics = alternation(TABLE.iter().map(|r| r.mnemonic.to_string()).collect());
    let mut modifiers: Vec<String> = ModKind::ALL
        .iter()
        .filter(|k| !matches!(k, ModKind::Type | ModKind::SrcType))
        .flat_map(|k| k.names().iter().map(|s| s.to_string()))
        .collect();
    modifiers.extend(["cas".to_string(), "wide".to_string(), "ballot".to_string()]);
    let modifiers = alternation(modifiers);
    let types = alternation(
        Ty::NAMES
            .iter()
            .map(|s| s.to_string())
            .chain(["pred".to_string()])
            .collect(),
    );
    let specials = alternation(Special::NAMES.iter().map(|s| s.to_string()).collect());
    let directives = alternation(
        [
            "param",
            "global",
            "shared",
            "reg",
            "launch",
            "assert",
            "entry",
            "iu",
            "dma",
            "file",
            "loc",
            "version",
            "target",
            "address_size",
            "visible",
            "extern",
            "weak",
            "align",
            "equ",
            "bind",
            "maxntid",
            "reqntid",
            "minnctapersm",
            "maxnreg",
            "pragma",
            "section",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    );
    let rules = [
        rule("comment.line.double-slash.spu", "//.*$"),
        rule("string.quoted.double.spu", "\\\"[^\\\"]*\\\""),
        rule(
            "keyword.other.directive.spu",
            &format!("(?<![A-Za-z0-9_])\\\\.({directives})\\\\b"),
        ),
        rule(
            "keyword.control.predicate.spu",
            "@!?%[A-Za-z_][A-Za-z0-9_]*",
        ),
        rule(
            "keyword.instruction.spu",
            &format!("(?<![A-Za-z0-9_.%])({mnemonics})(?=[.\\\\s;]|$)"),
        ),
        rule("storage.type.spu", &format!("\\\\.({types})\\\\b")),
        rule("storage.modifier.spu", &format!("\\\\.({modifiers})\\\\b")),
        rule(
            "variable.language.special.spu",
            &format!("%({specials})\\\\b"),
        ),
        rule("variable.other.register.spu", "%[A-Za-z_][A-Za-z0-9_]*"),
        rule(
            "entity.name.label.spu",
            "^\\\\s*[A-Za-z_][A-Za-z0-9_]*(?=:)",
        ),
        rule(
            "constant.numeric.float-bits.spu",
            "\\\\b0[fF][0-9A-Fa-f]{8}\\\\b",
        ),
        rule("constant.numeric.hex.spu", "\\\\b0x[0-9A-Fa-f]+\\\\b"),
        rule(
            "constant.numeric.spu",
            "-?\\\\b[0-9]+(\\\\.[0-9]+)?([eE][-+]?[0-9]+)?\\\\b",
        ),
        rule(
            "support.function.init.spu",
            "\\\\b(zeros|const|ramp|random|cdiv|min|max|grid|block|iu)(?=\\\\s*\\\\()",
        ),
    ];
    format!(
        "{{\n    \"$schema\": \"https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json\",\n    \"name\": \"SPU assembly\",\n    \"scopeName\": \"source.spu\",\n    \"fileTypes\": [\"spu\", \"ptx\"],\n    \"comment\": \"Generated from isa-spec/src/table.rs by isa-spec/src/textmate.rs; do not edit.\",\n    \"patterns\": [\n{}\n    ]\n}}\n",
        rules.join(",\n")
    )
}
