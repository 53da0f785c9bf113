//! The preprocessor: diagnostics inside included files and macro expansions point at
//! the right file and line (snapshots), and preprocessed kernels assemble with a line
//! table into their included files.

mod support;

use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/preprocessor")
}

/// Assembles a fixture under its file name, reading includes from the fixture folder.
fn assemble(
    name: &str,
) -> (
    String,
    Result<(spu_isa::format::Module, spu_asm::Diagnostics), spu_asm::Diagnostics>,
) {
    let src = std::fs::read_to_string(dir().join(name)).expect("fixture is readable");
    let mut read = |p: &Path| std::fs::read_to_string(dir().join(p)).map_err(|e| e.to_string());
    let result = spu_asm::assemble_with(name, &src, &mut read);
    (src, result)
}

#[test]
fn diagnostics_point_into_includes_and_macro_invocations() {
    support::each_fixture("preprocessor", "spu", |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap();
        let (src, result) = assemble(name);
        let diags = result.expect_err("every fixture has an error");
        let out = format!(
            "{} error(s):\n{}",
            diags.error_count(),
            diags.render(name, &src)
        );
        insta::assert_snapshot!(out);
    });
}

#[test]
fn included_definitions_and_macros_assemble_with_their_source_lines() {
    let src = "#include \"inc/defs.spu\"\n.global .f32 A[ELEMS] = zeros;\n.entry k {\n    .reg .u32 %r<2>;\n    .reg .f32 %f<2>;\n    mov.u32 %r0, A;\n    LOAD(%f0, %r0);\n#if TILE == 32\n    add.f32 %f1, %f0, %f0;\n#else\n    sub.f32 %f1, %f0, %f0;\n#endif\n    exit;\n}\n";
    let mut read = |p: &Path| std::fs::read_to_string(dir().join(p)).map_err(|e| e.to_string());
    let (module, _) = spu_asm::assemble_with("main.spu", src, &mut read)
        .unwrap_or_else(|d| panic!("{}", d.render("main.spu", src)));
    let text: Vec<String> = (0..module.code.len())
        .map(|pc| spu_asm::disasm::instr_text(&module, pc).unwrap())
        .collect();
    assert_eq!(text[1], "ld.global.f32 %f0, [%r0];");
    assert_eq!(text[2], "add.f32 %f1, %f0, %f0;");
    // The macro's instruction is attributed to its invocation in main.spu, line 7.
    let loc = module.lines.locs[1];
    assert_eq!(module.lines.files[usize::from(loc.file)], "main.spu");
    assert_eq!(loc.line, 7);
    assert_eq!(module.buffers[0].dims.len(), 1);
}

#[test]
fn instructions_from_an_included_file_name_it_in_the_line_table() {
    let src =
        "// host\n.entry k {\n    .reg .u32 %r<4>;\n#include \"inc/ok_body.spu\"\n    exit;\n}\n";
    let body = "// body\n    mov.u32 %r0, %tid.x;\n    shl.b32 %r1, %r0, 2;\n";
    let mut read = |p: &Path| {
        if p.ends_with("inc/ok_body.spu") {
            Ok(body.to_string())
        } else {
            Err(format!("no file {}", p.display()))
        }
    };
    let (module, _) = spu_asm::assemble_with("host.spu", src, &mut read)
        .unwrap_or_else(|d| panic!("{}", d.render("host.spu", src)));
    let loc = module.lines.locs[1];
    assert_eq!(module.lines.files[usize::from(loc.file)], "inc/ok_body.spu");
    assert_eq!((loc.line, loc.col), (3, 5));
    let exit = module.lines.locs[2];
    assert_eq!((usize::from(exit.file), exit.line), (0, 5));
}

#[test]
fn includes_that_include_each_other_are_stopped() {
    let mut read = |p: &Path| -> Result<String, String> {
        Ok(if p.ends_with("a.spu") {
            "#include \"b.spu\"\n".to_string()
        } else {
            "#include \"a.spu\"\n".to_string()
        })
    };
    let src = "#include \"a.spu\"\n.entry k { exit; }\n";
    let diags = spu_asm::assemble_with("a.spu", src, &mut read).unwrap_err();
    let text = diags.render("a.spu", src);
    assert!(text.contains("includes itself"), "{text}");
}

#[test]
fn a_directive_continued_over_lines_is_read_from_its_hash() {
    // The `#` was located with the length of the joined lines, so a continued
    // directive was read from the wrong place (a wrong macro, or a panic when that
    // place fell inside a multi-byte character).
    let mut read = |_: &Path| -> Result<String, String> { Err("no includes".into()) };
    for indent in ["", "  ", "\t"] {
        let src = format!(
            "{indent}#define TWICE(x) \\\n    add.u32 x, x, x; \\\n    add.u32 x, x, x;\n// ééé\n.entry k {{\n    .reg .u32 %r<2>;\n    mov.u32 %r0, 3;\n    TWICE(%r0)\n    exit;\n}}\n"
        );
        let (module, _) = spu_asm::assemble_with("c.spu", &src, &mut read)
            .unwrap_or_else(|d| panic!("{}", d.render("c.spu", &src)));
        for pc in [1, 2] {
            let text = spu_asm::disasm::instr_text(&module, pc).unwrap();
            assert_eq!(text, "add.u32 %r0, %r0, %r0;", "indent {indent:?}");
        }
    }
}
