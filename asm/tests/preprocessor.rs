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

/// Assembles `src` (no includes) and disassembles it, or panics with the errors.
fn listing(src: &str) -> String {
    let mut read = |_: &Path| -> Result<String, String> { Err("no includes".into()) };
    let (module, _) = spu_asm::assemble_with("m.spu", src, &mut read)
        .unwrap_or_else(|d| panic!("{}", d.render("m.spu", src)));
    spu_asm::disasm::disassemble(&module, spu_asm::disasm::Options::default())
}

/// The messages of the errors `src` gets, in order.
fn errors(src: &str) -> Vec<String> {
    let mut read = |p: &Path| -> Result<String, String> {
        match p.to_str() {
            Some("inc.h") => Ok("#define INC 1\n".into()),
            _ => Err("no such file".into()),
        }
    };
    let diags = spu_asm::assemble_with("m.spu", src, &mut read).expect_err("must fail");
    diags.items.iter().map(|d| d.message.clone()).collect()
}

#[test]
fn a_macro_may_be_invoked_in_its_own_argument() {
    // Arguments are expanded before they are substituted (C11 6.10.3.1); the macro is
    // hidden only while its replacement is rescanned.
    let text = listing(
        "#define ADD(a, b) ((a) + (b))\n#define A(x) x\n.param .u32 N = ADD(ADD(1, 2), 3);\n#if A(A(1)) == 1 && ADD(ADD(1, 2), ADD(3, 4)) == 10\n.param .u32 M = A(A(A(7)));\n#endif\n.entry k {\n    .reg .u32 %r<2>;\n    mov.u32 %r0, A(A(5));\n    exit;\n}\n",
    );
    for want in [
        ".param .u32 N = 6;",
        ".param .u32 M = 7;",
        "mov.u32 %r0, 5;",
    ] {
        assert!(text.contains(want), "{want}:\n{text}");
    }
}

#[test]
fn nested_invocations_reach_the_documented_depth_limit() {
    let nested = |n: usize| {
        format!(
            "#define A(x) x\n.param .u32 N = {}1{};\n.entry k {{ exit; }}\n",
            "A(".repeat(n),
            ")".repeat(n)
        )
    };
    assert!(listing(&nested(60)).contains(".param .u32 N = 1;"));
    assert!(listing(&nested(64)).contains(".param .u32 N = 1;"));
    let errs = errors(&nested(65));
    assert_eq!(errs[0], "macro expansion nests too deeply", "{errs:?}");
    assert_eq!(
        errs.iter()
            .filter(|e| e.contains("nests too deeply"))
            .count(),
        1,
        "reported once: {errs:?}"
    );
}

#[test]
fn wrong_argument_counts_inside_arguments_are_named() {
    let src = "#define A(x) x x\n#define B(x) A(A(x))\n.entry k {\n    .reg .u32 %r<2>;\n    B(B(add.u32 %r0, %r0, 1;))\n    exit;\n}\n";
    assert_eq!(errors(src), ["macro `B` takes 1 argument, found 3"]);
}

#[test]
fn mutually_recursive_macros_stop_as_in_c() {
    // `X` expands to `Y`, which expands to `X`, which stops: `X` is left.
    let src = "#define X Y\n#define Y X\n.param .u32 N = X;\n.entry k { exit; }\n";
    assert_eq!(errors(src), ["`X` is not a constant"]);
}

#[test]
fn if_arithmetic_that_overflows_is_an_error() {
    for (cond, what) in [
        (
            "(-9223372036854775807 - 1) / -1",
            "-9223372036854775808 / -1",
        ),
        (
            "(-9223372036854775807 - 1) % -1",
            "-9223372036854775808 % -1",
        ),
        ("1 << 64", "1 << 64"),
        ("1 << 200", "1 << 200"),
        ("1 << -1", "1 << -1"),
        ("1 >> 64", "1 >> 64"),
        ("1 << 63", "1 << 63"),
        ("9223372036854775807 + 1", "9223372036854775807 + 1"),
        ("-9223372036854775807 - 2", "-9223372036854775807 - 2"),
        ("3037000500 * 3037000500", "3037000500 * 3037000500"),
        ("-(-9223372036854775807 - 1)", "-(-9223372036854775808)"),
    ] {
        let src = format!("#if {cond}\n#endif\n.entry k {{ exit; }}\n");
        assert_eq!(
            errors(&src),
            [format!("`#if` arithmetic overflows: `{what}`")],
            "{cond}"
        );
    }
    // What `&&` and `||` do not evaluate cannot fail; results in range are exact.
    listing(
        "#if 0 && (1 << 64)\n#error no\n#endif\n#if !(1 || 1 / 0) || (-1 << 1) != -2 || (1 << 62) != 4611686018427387904 || (-8 >> 1) != -4\n#error no\n#endif\n.entry k { exit; }\n",
    );
}

#[test]
fn a_duplicate_macro_parameter_is_refused() {
    let src = "#define F(a, a) a + 1\n.param .u32 N = F(1, 2);\n.entry k { exit; }\n";
    let mut read = |_: &Path| -> Result<String, String> { Err("no includes".into()) };
    let diags = spu_asm::assemble_with("m.spu", src, &mut read).unwrap_err();
    assert_eq!(diags.error_count(), 1, "{}", diags.render("m.spu", src));
    let d = &diags.items[0];
    assert_eq!(d.message, "macro `F` has two parameters named `a`");
    assert_eq!(
        (d.span.clone(), d.secondary[0].span.clone()),
        (13..14, 10..11)
    );
}

#[test]
fn text_after_an_include_file_name_is_an_error() {
    assert_eq!(
        errors("#include \"inc.h\" garbage tokens\n.entry k { exit; }\n"),
        ["unexpected `garbage` after the `#include` file name"]
    );
    let mut read = |_: &Path| -> Result<String, String> { Ok("#define INC 1\n".into()) };
    let src = "#include \"inc.h\" // why\n#include \"inc.h\" /* why */ \n.param .u32 N = INC;\n.entry k { exit; }\n";
    spu_asm::assemble_with("m.spu", src, &mut read)
        .unwrap_or_else(|d| panic!("{}", d.render("m.spu", src)));
}

#[test]
fn an_unterminated_string_is_named_before_anything_it_causes() {
    let src = ".global .u8 S[4] = \"abc\n.entry k { exit; }\n";
    let errs = errors(src);
    assert_eq!(errs, ["unterminated string"]);
    // Without a kernel, the string is still the one error.
    assert_eq!(
        errors(".global .u8 S[4] = \"abc\n"),
        ["unterminated string"]
    );
}
