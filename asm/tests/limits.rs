//! Sources at and beyond the assembler's limits: expressions nested as deep as the
//! file is long, more declarations or longer names than a binary can hold, values
//! that do not fit their type, and unusual text encodings. Each gets a diagnostic at
//! its span (or assembles), never a crash, a wrapped value, or a binary the tools
//! would refuse to read.

use spu_asm::{Diagnostics, assemble};

/// Assembles; what assembles must read back (the reader's limits hold).
fn asm(src: &str) -> Result<Vec<u8>, Diagnostics> {
    let (bin, _) = assemble("t.spu", src)?;
    spu_isa::format::read_module(&bin).expect("the assembler's output reads back");
    Ok(bin)
}

/// The first error's message and the source text its span covers.
fn first_error(src: &str) -> (String, String) {
    let diags = asm(src).expect_err("must not assemble");
    let d = diags
        .items
        .iter()
        .find(|d| d.severity == spu_asm::Severity::Error)
        .expect("an error");
    let text = src.get(d.span.clone()).unwrap_or_default();
    (d.message.clone(), text.chars().take(60).collect())
}

fn kernel(decls: &str, body: &str) -> String {
    format!(
        "{decls}\n.entry k {{\n    .reg .u32 %r<4>;\n    .reg .f32 %f<2>;\n{body}\n    exit;\n}}\n"
    )
}

/// `1+1+...+1`, `((...(2)...))` and `- - ... - 3` with `n` terms each.
fn deep(n: usize) -> [String; 3] {
    [
        vec!["1"; n].join("+"),
        format!("{}2{}", "(".repeat(n), ")".repeat(n)),
        format!("{}3", "- ".repeat(n)),
    ]
}

#[test]
fn deep_expressions_assemble_without_recursion() {
    // 11 650 terms overflowed the main thread's 8 MiB stack; test threads have 2 MiB.
    let [sum, parens, negs] = deep(200_000);
    let src = kernel(
        "",
        &format!(
            "    mov.u32 %r0, {sum};\n    mov.u32 %r1, {parens};\n    mov.u32 %r2, -({negs}) + 9;\n    ld.global.u32 %r3, [%r0 + {parens}];"
        ),
    );
    let bin = asm(&src).unwrap_or_else(|d| panic!("{}", d.render("t.spu", &src)));
    let module = spu_isa::format::read_module(&bin).unwrap();
    let listing = spu_asm::disasm::disassemble(&module, Default::default());
    assert!(listing.contains("mov.u32 %r0, 200000;"), "{listing}");
    assert!(listing.contains("mov.u32 %r1, 2;"), "{listing}");
    assert!(listing.contains("mov.u32 %r2, 6;"), "{listing}");
}

#[test]
fn deep_expressions_with_errors_are_reported_and_dropped() {
    let [sum, parens, negs] = deep(200_000);
    for e in [
        format!("{sum} + x"),
        format!("{parens} / 0"),
        format!("{negs} + 1.5"),
    ] {
        let src = kernel("", &format!("    mov.u32 %r0, {e};"));
        asm(&src).expect_err("must not assemble");
    }
    // A stored expression over parameters, too long for a binary.
    let src = kernel(
        &format!(".param .u32 N = 1;\n.global .u32 A[N + {sum}];"),
        "",
    );
    let (msg, at) = first_error(&src);
    assert_eq!(msg, "this expression has 400001 terms and operators");
    assert!(at.starts_with("N + 1+1"), "{at}");
    // The 800 KB line is located, not printed.
    let rendered = asm(&src).unwrap_err().render("t.spu", &src);
    assert!(rendered.len() < 1000, "{rendered}");
    assert!(
        rendered.contains("--> t.spu:2:16") && rendered.contains("bytes long and not shown"),
        "{rendered}"
    );
}

#[test]
fn stored_expressions_stop_at_the_readers_limit() {
    let max = spu_isa::format::MAX_EXPR_NODES as usize;
    // `N+1+...`: 2k - 1 nodes for k terms.
    let fits = vec!["N"; max.div_ceil(2)].join("+");
    let src = kernel(&format!(".param .u32 N = 1;\n.global .u32 A[{fits}];"), "");
    asm(&src).unwrap_or_else(|d| panic!("{}", d.render("t.spu", &src)));
    let over = format!("{fits}+N");
    let src = kernel(&format!(".param .u32 N = 1;\n.global .u32 A[{over}];"), "");
    let (msg, _) = first_error(&src);
    assert_eq!(
        msg,
        format!("this expression has {} terms and operators", max + 1)
    );
}

#[test]
fn the_65537th_parameter_is_refused_not_wrapped_to_the_first() {
    let mut decls: String = (0..=65536)
        .map(|i| format!(".param .u32 p{i} = {i};\n"))
        .collect();
    decls.push_str(".global .u32 A[p65536];");
    let (msg, at) = first_error(&kernel(&decls, ""));
    assert_eq!(msg, "too many parameters");
    assert_eq!(at, "p65536");
}

#[test]
fn parameters_beyond_the_offset_range_are_named() {
    let decls: String = (0..8193).map(|i| format!(".param .u32 p{i};\n")).collect();
    let (msg, at) = first_error(&kernel(&decls, "    ld.param.u32 %r0, [p8192];"));
    assert_eq!(
        msg,
        "parameter `p8192` is at byte 32768 of the parameter space"
    );
    assert_eq!(at, "p8192");
}

#[test]
fn more_buffers_than_an_instruction_can_name_are_refused() {
    let max = spu_isa::MAX_SYMBOLS;
    let decls: String = (0..=max)
        .map(|i| format!(".global .u32 b{i}[1];\n"))
        .collect();
    let (msg, at) = first_error(&kernel(&decls, ""));
    assert_eq!(msg, "too many buffers");
    assert_eq!(at, format!("b{max}"));
}

#[test]
fn names_longer_than_a_binary_stores_are_refused() {
    let long = "a".repeat(70_000);
    for src in [
        kernel(&format!(".global .u32 {long}[1];"), ""),
        kernel(&format!(".file 1 \"{long}\";"), ""),
        format!(".entry {long} {{\n    exit;\n}}\n"),
    ] {
        let (msg, _) = first_error(&src);
        assert_eq!(msg, "this name is 70000 bytes long");
    }
}

#[test]
fn parameter_defaults_take_the_values_dash_d_takes() {
    for (decl, msg) in [
        (".param .u32 N = -1;", "`-1` is not a valid .u32 value"),
        (
            ".param .u32 N = 4294967296;",
            "`4294967296` is not a valid .u32 value",
        ),
        (
            ".param .s32 N = 2147483648;",
            "`2147483648` is not a valid .s32 value",
        ),
        (".param .f32 X = 1e39;", "`1e39` does not fit in .f32"),
        // A double first (PTX's rule), as an initialiser reads it: this one is
        // the double half way between f32's largest and 2^128, which rounds to
        // infinity as an f32.
        (
            ".param .f32 X = 3.4028235677973366e38;",
            "`3.4028235677973366e38` does not fit in .f32",
        ),
    ] {
        assert_eq!(first_error(&kernel(decl, "")).0, msg, "{decl}");
    }
    asm(&kernel(
        ".param .u32 N = 4294967295;\n.param .s32 M = -2147483648;\n.param .f32 X = 0f7F800000;",
        "",
    ))
    .expect("the extremes and bit patterns are valid");
}

/// An `.f64` immediate past the f64 range is refused as `.param .f64` refuses
/// it (it was taken as an infinity); bit patterns of an infinity stay valid.
#[test]
fn f64_immediates_must_fit() {
    for (body, msg) in [
        (
            "    mov.f64 %d0, 1.8e308;",
            "`1.8e308` does not fit in .f64",
        ),
        (
            "    add.f64 %d0, %d0, 1e309;",
            "`1e309` does not fit in .f64",
        ),
        ("    mov.f64 %d0, -1e400;", "`1e400` does not fit in .f64"),
    ] {
        let src = kernel("", &format!("    .reg .f64 %d<1>;\n{body}"));
        assert_eq!(first_error(&src).0, msg, "{body}");
    }
    asm(&kernel(
        "",
        "    .reg .f64 %d<1>;\n    mov.f64 %d0, 0d7FF0000000000000;\n    mov.f64 %d0, 1.7976931348623157e308;",
    ))
    .expect("an infinity's bit pattern and the largest finite value are valid");
}

#[test]
fn initialisers_must_fit_their_buffer() {
    for (decl, msg, at) in [
        (
            ".global .u32 A[4] = const(4294967296);",
            "`4294967296` does not fit in .u32",
            "4294967296",
        ),
        (
            ".global .u32 A[4] = const(1.5);",
            "`1.5` is not an integer",
            "1.5",
        ),
        (
            ".global .s32 A[4] = const(-2147483649);",
            "`-2147483649` does not fit in .s32",
            "-2147483649",
        ),
        (
            ".global .u32 A[4] = ramp(0, 0.5);",
            "`0.5` is not an integer",
            "0.5",
        ),
        (
            ".global .f32 A[4] = const(1e39);",
            "`1e39` does not fit in .f32",
            "1e39",
        ),
        (
            ".global .s32 A[4] = random(1, 5, -5);",
            "`random` has lo 5 above hi -5",
            "random(1, 5, -5)",
        ),
        (
            ".global .f32 A[4] = random(1e17);",
            "the seed is too large",
            "1e17",
        ),
        // 2^53 + 1 is checked as the integer written, not as the double it rounds to.
        (
            ".global .f32 A[4] = random(9007199254740993, 0, 1);",
            "the seed is too large",
            "9007199254740993",
        ),
        (
            ".global .f32 A[4] = random(-1);",
            "the seed must not be negative",
            "-1",
        ),
        (
            ".global .f32 A[4] = random(2.5);",
            "the seed must be an integer",
            "2.5",
        ),
        // Every element type has its own range.
        (
            ".global .u8 A[4] = const(256);",
            "`256` does not fit in .u8",
            "256",
        ),
        (
            ".global .s8 A[4] = const(-129);",
            "`-129` does not fit in .s8",
            "-129",
        ),
        (
            ".global .b8 A[4] = const(-1);",
            "`-1` does not fit in .b8",
            "-1",
        ),
        (
            ".global .u16 A[4] = random(1, 0, 65536);",
            "`65536` does not fit in .u16",
            "65536",
        ),
        (
            ".global .s16 A[4] = ramp(32768, 1);",
            "`32768` does not fit in .s16",
            "32768",
        ),
        (
            ".global .u64 A[4] = const(-1);",
            "`-1` does not fit in .u64",
            "-1",
        ),
        (
            ".global .s64 A[4] = const(1e19);",
            "`10000000000000000000` does not fit in .s64",
            "1e19",
        ),
    ] {
        let (m, a) = first_error(&kernel(decl, ""));
        assert_eq!((m.as_str(), a.as_str()), (msg, at), "{decl}");
    }
    let (_, label) = first_error_label(&kernel(".global .u8 A[4] = const(256);", ""));
    assert_eq!(label, "expected 0..=255");
    let (_, label) = first_error_label(&kernel(".global .s16 A[4] = const(-40000);", ""));
    assert_eq!(label, "expected -32768..=32767");
    asm(&kernel(
        ".global .u32 A[4] = const(4294967295);\n.global .s32 B[4] = ramp(-2147483648, 1);\n.global .u32 C[4] = ramp(10, -1);",
        "",
    ))
    .expect("in range");
}

/// The first error's message and label.
fn first_error_label(src: &str) -> (String, String) {
    let d = asm(src).unwrap_err();
    let e = &d.items[0];
    (e.message.clone(), e.label.clone())
}

#[test]
fn negating_the_most_negative_integer_is_an_overflow() {
    let min = "(-9223372036854775807 - 1)";
    for (body, msg) in [
        (
            format!("    mov.u32 %r0, -{min};"),
            "constant expression overflows",
        ),
        (
            format!("    ld.global.u32 %r0, [%r1 - {min}];"),
            "address offset `-(-9223372036854775808)` does not fit in 16 bits",
        ),
    ] {
        assert_eq!(first_error(&kernel("", &body)).0, msg, "{body}");
    }
    let (msg, _) = first_error(&kernel(&format!(".global .u32 A[-{min}];"), ""));
    assert_eq!(msg, "constant expression overflows");
}

/// A multi-dimensional size is checked with the defaults as its product is:
/// `A[N][N]` overflows where `A[N*N]` does, at the declaration's line.
#[test]
fn the_product_of_the_dimensions_is_checked_with_the_defaults() {
    let src = ".param .u32 N = 4294967295;\n.global .f32 A[N][N] = zeros;\n.entry k { exit; }\n";
    let diags = asm(src).unwrap_err();
    let shown = diags.render("t.spu", src);
    assert_eq!(diags.error_count(), 1, "{shown}");
    assert_eq!(
        diags.items[0].message, "the element count overflows",
        "{shown}"
    );
    assert!(shown.contains("t.spu:2:"), "{shown}");
    asm(&src.replace("4294967295", "4")).expect("16 elements");
    // Unknown until launch: checked by the loader.
    asm(&src.replace(" = 4294967295", "")).expect("no default");
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let src = format!("\u{feff}{}", kernel("", "    mov.u32 %r0, 1;"));
    let with = asm(&src).unwrap_or_else(|d| panic!("{}", d.render("t.spu", &src)));
    let without = asm(&src['\u{feff}'.len_utf8()..]).unwrap();
    assert_eq!(with, without);
    // Diagnostics still point at the right bytes.
    let src = format!("\u{feff}{}", kernel("", "    mov.u32 %r9, 1;"));
    let (_, at) = first_error(&src);
    assert_eq!(at, "%r9");
}

#[test]
fn bare_carriage_returns_are_named() {
    let src = kernel("", "    mov.u32 %r0, 1; // set").replace('\n', "\r");
    let diags = asm(&src).unwrap_err();
    assert_eq!(diags.items.len(), 1, "{}", diags.render("t.spu", &src));
    assert_eq!(
        diags.items[0].message,
        "a line ends with a bare carriage return (CR)"
    );
    // CR LF is fine.
    asm(&kernel("", "    mov.u32 %r0, 1; // set").replace('\n', "\r\n")).expect("CR LF line ends");
}

#[test]
fn an_unterminated_comment_is_the_only_error() {
    let src = ".entry k {\n    exit; /* the brace below is inside the comment\n}\n";
    let diags = asm(src).unwrap_err();
    let rendered = diags.render("t.spu", src);
    assert_eq!(diags.items.len(), 1, "{rendered}");
    assert!(
        rendered.contains("the rest of the file is ignored"),
        "{rendered}"
    );
    let (msg, at) = first_error(".entry k {\n    exit; */\n}\n");
    assert_eq!(
        (msg.as_str(), at.as_str()),
        ("`*/` closes no comment", "*/")
    );
}

/// A macro with more parameters than the limit is refused at once (checking and
/// replacing 120 000 parameters took 24 s); 256 are fine.
#[test]
fn macros_have_at_most_256_parameters() {
    let params = |n: usize| {
        (0..n)
            .map(|i| format!("p{i}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let src = format!("#define M({}) p0\n.entry k {{\nexit;\n}}\n", params(257));
    let text = spu_asm::assemble("m.spu", &src)
        .unwrap_err()
        .render("m.spu", &src);
    assert!(
        text.contains("macro `M` has 257 parameters, more than the 256 a macro may have"),
        "{text}"
    );
    let args = vec!["1"; 256].join(",");
    let src = format!(
        "#define M({}) p255\n.entry k {{\n.reg .u32 %r<1>;\nmov.u32 %r0, M({args});\nexit;\n}}\n",
        params(256)
    );
    spu_asm::assemble("m.spu", &src).expect("256 parameters are fine");
}

/// A macro bomb: `X39` doubles 39 times. The preprocessor stops at its budget
/// promptly, with one error at the use.
#[test]
fn a_macro_bomb_stops_at_the_expansion_budget() {
    let mut src = String::from("#define X0 nop;\n");
    for i in 1..40 {
        src.push_str(&format!("#define X{i} X{} X{}\n", i - 1, i - 1));
    }
    src.push_str(".entry k {\nX39\nexit;\n}\n");
    let diags = spu_asm::assemble("bomb.spu", &src).unwrap_err();
    let text = diags.render("bomb.spu", &src);
    assert!(
        text.contains("expansion is too large") && text.contains("macro invocations"),
        "{text}"
    );
    assert!(text.contains("bomb.spu:42:1"), "at the use: {text}");
    // Long bodies hit the size budget instead.
    let mut src = format!("#define Y0 {}\n", "; ".repeat(500));
    for i in 1..30 {
        src.push_str(&format!("#define Y{i} Y{} Y{}\n", i - 1, i - 1));
    }
    src.push_str(".entry k {\nY29\nexit;\n}\n");
    let text = spu_asm::assemble("b.spu", &src)
        .unwrap_err()
        .render("b.spu", &src);
    assert!(text.contains("MiB of text"), "{text}");
}

#[test]
fn initialisers_are_range_checked_for_every_element_type() {
    // (declaration, the first error's message, the text it points at)
    let cases = [
        (
            ".global .u8 x[4] = const(256);",
            "`256` does not fit in .u8",
            "256",
        ),
        (
            ".global .b8 x[4] = const(-1);",
            "`-1` does not fit in .b8",
            "-1",
        ),
        (
            ".global .s8 x[4] = ramp(-129, 1);",
            "`-129` does not fit in .s8",
            "-129",
        ),
        (
            ".global .u16 x[4] = random(1, 0, 65536);",
            "`65536` does not fit in .u16",
            "65536",
        ),
        (
            ".global .s16 x[4] = const(32768);",
            "`32768` does not fit in .s16",
            "32768",
        ),
        (
            ".global .u64 x[4] = const(-1);",
            "`-1` does not fit in .u64",
            "-1",
        ),
        (
            ".global .s64 x[4] = const(1.5);",
            "`1.5` is not an integer",
            "1.5",
        ),
        (
            ".global .f64 x[4] = const(1e309);",
            "`inf` does not fit in .f64",
            "1e309",
        ),
        (
            ".global .f32 x[4] = const(1e39);",
            "`1e39` does not fit in .f32",
            "1e39",
        ),
    ];
    for (decl, message, text) in cases {
        let (m, t) = first_error(&kernel(decl, ""));
        assert_eq!((m.as_str(), t.as_str()), (message, text), "{decl}");
    }
    for decl in [
        ".global .u8 x[4] = const(255);",
        ".global .s8 x[4] = ramp(-128, 1);",
        ".global .u16 x[4] = random(1, 0, 65535);",
        ".global .s16 x[4] = const(-32768);",
        ".global .u64 x[4] = const(4294967296);",
        ".global .s64 x[4] = ramp(-9007199254740992, 1);",
        ".global .f64 x[4] = const(1e300);",
        // FLT_MAX as C and NumPy print it: above f32::MAX, but rounding to it.
        ".global .f32 x[4] = const(3.4028235e38);",
        ".global .f32 x[4] = ramp(-3.4028235e38, 1e30);",
    ] {
        assert!(asm(&kernel(decl, "")).is_ok(), "{decl}");
    }
}

#[test]
fn more_labels_or_kernels_than_a_file_may_have_are_one_error() {
    let labels: String = (0..=spu_asm::MAX_LABELS)
        .map(|i| format!("L{i}:\n"))
        .collect();
    let src = format!(".entry k {{\n{labels}    exit;\n}}\n");
    let diags = asm(&src).unwrap_err();
    assert_eq!(diags.error_count(), 1, "{}", diags.render("t.spu", &src));
    assert_eq!(diags.items[0].message, "too many labels");
    let entries: String = (0..=spu_asm::MAX_ENTRIES)
        .map(|i| format!(".entry k{i} {{ exit; }}\n"))
        .collect();
    let diags = asm(&entries).unwrap_err();
    assert_eq!(diags.error_count(), 1);
    assert_eq!(diags.items[0].message, "too many kernels");
}

#[test]
fn a_failed_register_declaration_is_not_repeated_at_every_use() {
    let src = kernel(
        "",
        "    .reg .b32 %q<99999999>;\n    mov.u32 %q1, 1;\n    add.u32 %q2, %q1, %q1;",
    );
    let diags = asm(&src).unwrap_err();
    assert_eq!(diags.error_count(), 1, "{}", diags.render("t.spu", &src));
    assert_eq!(
        diags.items[0].message,
        "register count `99999999` is too large"
    );
}

#[test]
fn sixty_four_bit_integers_stay_exact() {
    use spu_isa::format::Init;
    let init = |decl: &str| {
        let bin = asm(&kernel(decl, "")).unwrap_or_else(|d| panic!("{decl}: {d:?}"));
        spu_isa::format::read_module(&bin).unwrap().buffers[0]
            .init
            .clone()
    };
    // 2^53 + 1 is no double: kept as its bits, not rounded to 2^53.
    assert_eq!(
        init(".global .u64 big = 9007199254740993;"),
        Init::ConstBits(9_007_199_254_740_993)
    );
    assert_eq!(
        init(".global .u64 A[2] = const(9007199254740993);"),
        Init::ConstBits(9_007_199_254_740_993)
    );
    for max in ["18446744073709551615", "0xFFFFFFFFFFFFFFFF"] {
        assert_eq!(
            init(&format!(".global .u64 m = {max};")),
            Init::ConstBits(u64::MAX),
            "{max}"
        );
        assert_eq!(
            init(&format!(".global .b64 m[4] = const({max});")),
            Init::ConstBits(u64::MAX),
            "{max}"
        );
    }
    // -2^63 is a double; values that are doubles stay as they were.
    assert_eq!(
        init(".global .s64 lo = -9223372036854775808;"),
        Init::Const(-9_223_372_036_854_775_808.0)
    );
    assert_eq!(
        init(".global .s64 x = -9223372036854775807;"),
        Init::ConstBits(0x8000_0000_0000_0001)
    );
    assert_eq!(init(".global .u64 A[2] = const(7);"), Init::Const(7.0));
    // Ramps and random values are doubles: one a double cannot hold is refused.
    let (msg, at) = first_error(&kernel(
        ".global .u64 A[4] = ramp(9007199254740993, 1);",
        "",
    ));
    assert_eq!(
        (msg.as_str(), at.as_str()),
        (
            "`9007199254740993` cannot be a `ramp` or `random` value exactly",
            "9007199254740993"
        )
    );
    let (msg, _) = first_error(&kernel(".global .u64 m = 18446744073709551616;", ""));
    assert_eq!(msg, "integer literal is out of range");
    // `mov` of the most negative 64-bit integer.
    let bin = asm(&kernel(
        "",
        "    .reg .s64 %rd<2>;\n    mov.s64 %rd1, -9223372036854775808;\n    mov.u64 %rd0, 0xFFFFFFFFFFFFFFFF;",
    ))
    .unwrap();
    let m = spu_isa::format::read_module(&bin).unwrap();
    let listing = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options { no_locations: true });
    assert!(listing.contains(", 2147483648;"), "{listing}");
}

#[test]
fn buffers_take_alignments_up_to_256() {
    asm(&kernel(
        ".global .align 256 .u32 A[4];\n.visible .global .align 8 .u64 v;",
        "",
    ))
    .expect("up to 256 holds");
    for (decl, at) in [
        (".global .align 1024 .u32 A[4];", "1024"),
        (".visible .global .align 512 .u64 v;", "512"),
        (".global .align 12 .u32 A[4];", "12"),
    ] {
        let (msg, got) = first_error(&kernel(decl, "    ld.global.u32 %r0, [A];"));
        assert_eq!(
            (msg, got.as_str()),
            (
                format!("alignment `{at}` is not supported for a buffer"),
                at
            ),
            "{decl}"
        );
        assert_eq!(
            asm(&kernel(decl, "")).unwrap_err().error_count(),
            1,
            "{decl}"
        );
    }
}

#[test]
fn a_negative_dynamic_shared_size_is_refused() {
    let src = ".extern .shared .align 4 .b8 dyn[];\n.launch grid(1) block(32) shared(-1);\n.entry k {\n    .reg .u32 %r<2>;\n    mov.u32 %r0, dyn;\n    st.shared.u32 [%r0], %r1;\n    exit;\n}\n";
    let diags = asm(src).unwrap_err();
    assert_eq!(diags.error_count(), 1, "{}", diags.render("t.spu", src));
    assert_eq!(
        diags.items[0].message,
        "the dynamic shared size is -1 bytes"
    );
    // An empty one too (the generated-PTX fuzzer found it: its disassembly, a
    // zero-length `.shared` array, did not reassemble).
    let src = src.replace("shared(-1)", "shared(-0)");
    let diags = asm(&src).unwrap_err();
    assert_eq!(diags.items[0].message, "the dynamic shared size is 0 bytes");
    asm(&src.replace("shared(-0)", "shared(1)")).expect("one byte is a size");
}

#[test]
fn a_negative_dynamic_shared_size_is_refused_with_no_array_to_size() {
    for (src, line) in [
        (".launch shared(-1);\n.entry k {\n    exit;\n}\n", 1),
        (
            ".param .s32 S = -1;\n.launch shared(S);\n.entry k {\n    exit;\n}\n",
            2,
        ),
    ] {
        let diags = asm(src).unwrap_err();
        let shown = diags.render("t.spu", src);
        assert_eq!(diags.error_count(), 1, "{shown}");
        assert_eq!(
            diags.items[0].message,
            "the dynamic shared size is -1 bytes"
        );
        assert!(shown.contains(&format!("t.spu:{line}:")), "{shown}");
    }
    // An unused size that is not negative only warns.
    asm(".launch shared(0);\n.entry k {\n    exit;\n}\n").expect("an unused size is a warning");
}

#[test]
fn an_empty_or_negative_grid_or_block_is_refused_at_its_line() {
    let src = ".launch grid(1) block(-256);\n.entry k {\n    exit;\n}\n";
    let diags = asm(src).unwrap_err();
    assert_eq!(diags.error_count(), 1, "{}", diags.render("t.spu", src));
    assert_eq!(diags.items[0].message, "block dimension x is -256");
    let shown = diags.render("t.spu", src);
    assert!(shown.contains("t.spu:1:"), "{shown}");
    for (launch, message) in [
        ("grid(1) block(32, 0)", "block dimension y is 0"),
        ("grid(-1) block(32)", "launch grid dimension x is -1"),
        ("grid(1, 1, 0) block(32)", "launch grid dimension z is 0"),
    ] {
        let src = src.replace("grid(1) block(-256)", launch);
        let diags = asm(&src).unwrap_err();
        assert_eq!(diags.items[0].message, message, "{launch}");
    }
    // Known through a parameter's default too.
    let src = ".param .s32 B = -4;\n.launch grid(1) block(B);\n.entry k {\n    exit;\n}\n";
    assert_eq!(
        asm(src).unwrap_err().items[0].message,
        "block dimension x is -4"
    );
    asm(".launch grid(1) block(1);\n.entry k {\n    exit;\n}\n").expect("one thread is a block");
}

#[test]
fn a_grid_or_block_beyond_any_machine_is_refused_at_its_line() {
    let src = ".launch grid(1) block(1, 1, 65);\n.entry k {\n    exit;\n}\n";
    let diags = asm(src).unwrap_err();
    assert_eq!(diags.error_count(), 1, "{}", diags.render("t.spu", src));
    let shown = diags.render("t.spu", src);
    assert!(
        shown.contains("block dimension z is 65")
            && shown.contains("t.spu:1:29")
            && shown.contains("at most 64")
            && shown.contains("a block has at most 64 threads along z, as in CUDA"),
        "{shown}"
    );
    for (launch, message) in [
        ("grid(1) block(4097)", "block dimension x is 4097"),
        (
            "grid(1, 1, 65536) block(32)",
            "launch grid dimension z is 65536",
        ),
        (
            "grid(16777217) block(32)",
            "launch grid dimension x is 16777217",
        ),
    ] {
        let src = src.replace("grid(1) block(1, 1, 65)", launch);
        let diags = asm(&src).unwrap_err();
        assert_eq!(diags.items[0].message, message, "{launch}");
    }
    // In all: threads a block has, blocks a launch has.
    for (launch, message) in [
        ("grid(1) block(4096, 2)", "the block has 8192 threads"),
        (
            "grid(4194305) block(32)",
            "the launch grid has 4194305 blocks",
        ),
        (
            "grid(2048, 2048, 2) block(32)",
            "the launch grid has 8388608 blocks",
        ),
    ] {
        let src = src.replace("grid(1) block(1, 1, 65)", launch);
        let diags = asm(&src).unwrap_err();
        assert_eq!(diags.items[0].message, message, "{launch}");
    }
    // The largest extents assemble (the loader then checks the machine's limits).
    asm(".launch grid(1, 1, 65535) block(1, 1, 64);\n.entry k {\n    exit;\n}\n")
        .expect("CUDA's largest z extents");
    asm(".launch grid(2048, 2048) block(64, 64);\n.entry k {\n    exit;\n}\n")
        .expect("the most blocks, the most threads");
}

#[test]
fn nan_and_infinity_by_name_get_their_bit_patterns_as_help() {
    for (name, bits) in [
        ("nan", "0f7FC00000"),
        ("Inf", "0f7F800000"),
        ("infinity", "0f7F800000"),
    ] {
        let src = format!(
            ".param .f32 X = {name};\n.launch grid(1) block(32);\n.entry k {{\n    exit;\n}}\n"
        );
        let diags = asm(&src).unwrap_err();
        let shown = diags.render("t.spu", &src);
        assert!(
            shown.contains(&format!("write the float's bits: `{bits}`"))
                && !shown.contains("buffer or shared array"),
            "{shown}"
        );
    }
    // The pattern itself is accepted.
    asm(".param .f32 X = 0f7FC00000;\n.launch grid(1) block(32);\n.entry k {\n    exit;\n}\n")
        .expect("a NaN's bits");
}

/// Blocks nest at most 256 deep, and each level costs only what it declares:
/// 256 nested blocks under 60 000 declared registers assemble, the 257th is
/// refused at its `{`, and a register declared in one block may be declared
/// again in the next.
#[test]
fn blocks_nest_256_deep_and_cost_what_they_declare() {
    let nested = |levels: usize| {
        let decls: String = (0..60)
            .map(|j| format!("    .reg .u32 %w{j}_<1000>;\n"))
            .collect();
        let body = format!(
            "{decls}{}    mov.u32 %r0, %tid.x;\n{}",
            (0..levels)
                .map(|i| format!("    {{ .reg .u32 %x{i};\n"))
                .collect::<String>(),
            "    }\n".repeat(levels)
        );
        kernel("", &body)
    };
    asm(&nested(256)).expect("256 levels assemble");
    let src = nested(257);
    let (msg, at) = first_error(&src);
    assert_eq!(msg, "blocks nest more than 256 deep here");
    assert_eq!(at, "{");
    let again =
        "    { .reg .u32 %t;\n    mov.u32 %t, 1; }\n    { .reg .u32 %t;\n    mov.u32 %t, 2; }";
    asm(&kernel("", again)).expect("a name declared again in the next block");
}

/// A float literal too large for its type is named by its start and length,
/// not repeated whole (a literal of a million digits made a message as long).
#[test]
fn a_huge_float_literal_is_named_by_its_start() {
    let literal = format!("1e{}", "9".repeat(1_000_000));
    for src in [
        kernel("", &format!("    add.f32 %f0, %f0, {literal};")),
        kernel(&format!(".param .f64 A = {literal};"), ""),
    ] {
        let diags = asm(&src).expect_err("must not assemble");
        let d = diags
            .items
            .iter()
            .find(|d| d.severity == spu_asm::Severity::Error)
            .expect("an error");
        assert!(
            d.message.contains("(1000002 bytes)` does not fit in .f"),
            "{}",
            d.message
        );
        assert!(d.message.len() < 200, "{}", d.message.len());
    }
}
