//! What nvcc writes around the instructions: line information (`-lineinfo`, `-G`),
//! launch bounds, module-scope variables and the like, each assembled from a small
//! kernel written for this test in nvcc's style.

use spu_isa::format::Module;

/// A one-entry PTX kernel with `pre` at module scope, `attrs` after the signature
/// and `body` before `ret`.
fn kernel(pre: &str, attrs: &str, body: &str) -> String {
    format!(
        "\
.version 8.0
.target sm_80
.address_size 64
{pre}
.visible .entry probe(
\t.param .u64 probe_param_0,
\t.param .u32 probe_param_1
){attrs}
{{
\t.reg .pred \t%p<4>;
\t.reg .b16 \t%rs<4>;
\t.reg .b32 \t%r<16>;
\t.reg .b64 \t%rd<8>;

\tld.param.u64 \t%rd1, [probe_param_0];
\tld.param.u32 \t%r9, [probe_param_1];
\tcvta.to.global.u64 \t%rd2, %rd1;
\tmov.u32 \t%r1, %tid.x;
\tmul.wide.u32 \t%rd3, %r1, 4;
\tadd.s64 \t%rd4, %rd2, %rd3;
{body}
\tst.global.u32 \t[%rd4], %r2;
\tret;
}}
"
    )
}

fn assemble(name: &str, src: &str) -> Result<Module, String> {
    spu_asm::assemble_with(name, src, &mut |p| Err(format!("no file {}", p.display())))
        .map(|(m, _)| m)
        .map_err(|d| d.render(name, src))
}

/// The launch file of [`kernel`]: 32 threads, `OUT` for the pointer, 5 for `n`.
const LAUNCH: &str = "#include \"k.ptx\"\n.global .u32 OUT[64] = zeros;\n.launch grid(1) block(32);\n.bind probe(OUT, 5);\n";

/// Assembles `ptx` as `k.ptx`, included by `launch` (`k.spu`).
fn launch(launch: &str, ptx: &str) -> Result<Module, String> {
    let mut read = |p: &std::path::Path| {
        if p.file_name().is_some_and(|n| n == "k.ptx") {
            Ok(ptx.to_string())
        } else {
            Err(format!("no file {}", p.display()))
        }
    };
    spu_asm::assemble_with("k.spu", launch, &mut read)
        .map(|(m, _)| m)
        .map_err(|d| format!("{d:?}"))
}

#[test]
fn lineinfo_points_the_line_table_at_the_cuda_source() {
    for file in [
        ".file\t1 \"/home/user/kern.cu\"",
        ".file\t1 \"/home/user/kern.cu\";",
        ".file\t1 \"/home/user/kern.cu\", 1700000000, 2345",
    ] {
        let body = "\t.loc\t1 12 3\n\tmov.u32 \t%r2, %r1;\n\t.loc 1 14 5, function_name $L__info_string0, inlined_at 1 30 7\n\tadd.u32 \t%r2, %r2, 1;";
        let src = kernel(file, "", body);
        let m = launch(LAUNCH, &src).unwrap_or_else(|e| panic!("{file}:\n{e}"));
        let cu = m
            .lines
            .files
            .iter()
            .position(|f| f == "/home/user/kern.cu")
            .expect("the CUDA file is in the line table");
        let ptx = m.lines.files.iter().position(|f| f == "k.ptx").unwrap();
        assert_ne!(cu, ptx);
        let locs = &m.lines.locs;
        // Before the first `.loc`: the PTX lines.
        assert_eq!(usize::from(locs[0].file), ptx);
        assert!((15..=20).contains(&locs[0].line), "{:?}", locs[0]);
        // `.loc` holds for every instruction up to the next one, `ret` included.
        let first = locs.iter().position(|l| usize::from(l.file) == cu).unwrap();
        assert!(locs[first..].iter().all(|l| usize::from(l.file) == cu));
        assert_eq!((locs[first].line, locs[first].col), (12, 3));
        let last = locs.last().unwrap();
        assert_eq!((last.line, last.col), (14, 5));
    }
}

#[test]
fn debug_sections_and_the_debug_target_are_ignored() {
    let pre = ".file\t1 \"/home/user/kern.cu\"\n\
.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 95,90,0\n\t}\n\
.section\t.debug_loc\t{\t}";
    let src = kernel(pre, "", "\t.loc\t1 12 3\n\tmov.u32 \t%r2, %r1;")
        .replace(".target sm_80", ".target sm_52, debug")
        + "\t.section\t.debug_info\n\t{\n.b32 67\n.b8 2\n.b64 $L__func_begin0\n\t}\n";
    let m = launch(LAUNCH, &src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.name, "probe");
    assert!(m.labels.iter().all(|l| l.name != "$L__info_string0"));
}

#[test]
fn line_directives_of_a_spu_file_keep_their_meaning() {
    // The disassembler's `.file`/`.loc`: indices into the line table, `.loc` for the
    // next instruction only.
    let src = ".file 0 \"orig.spu\";\n.entry k {\n.loc 0 40 2;\nnop;\nnop;\nexit;\n}\n";
    let m = assemble("k.spu", src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.lines.files[0], "orig.spu");
    assert_eq!(m.lines.locs[0].line, 40);
    assert_eq!(m.lines.locs[1].line, 5);
}

#[test]
fn launch_bounds_are_accepted_and_a_fitting_launch_assembles() {
    for attrs in [
        "\n.maxntid 256, 1, 1",
        "\n.maxntid 32\n.minnctapersm 4",
        "\n.reqntid 32, 1, 1\n.maxnreg 40",
        " .reqntid 32",
    ] {
        let src = kernel("", attrs, "\tmov.u32 \t%r2, %r1;");
        launch(LAUNCH, &src).unwrap_or_else(|e| panic!("{attrs}:\n{e}"));
        // Checking the PTX alone needs no launch.
        assemble("k.ptx", &src).unwrap_or_else(|e| panic!("{attrs}:\n{e}"));
    }
}

#[test]
fn a_launch_breaking_the_bounds_is_refused() {
    for (attrs, block, message) in [
        (
            "\n.maxntid 256, 1, 1",
            "block(512)",
            "the launch's block has 512 threads; the kernel allows at most 256",
        ),
        ("\n.maxntid 16, 2", "block(8, 8)", "at most 32"),
        (
            "\n.reqntid 32, 2",
            "block(64)",
            "the launch's block (64, 1, 1) differs from the kernel's required block (32, 2, 1)",
        ),
    ] {
        let src = kernel("", attrs, "\tmov.u32 \t%r2, %r1;");
        let err = launch(&LAUNCH.replace("block(32)", block), &src).unwrap_err();
        assert!(err.contains(message), "{attrs} {block}:\n{err}");
    }
    // A parameter's default counts; a value known only at launch is not checked.
    let src = kernel("", "\n.maxntid 64", "\tmov.u32 \t%r2, %r1;");
    let with_param = |p: &str| {
        LAUNCH.replace(
            ".launch grid(1) block(32)",
            &format!("{p}\n.launch grid(1) block(T)"),
        )
    };
    assert!(
        launch(&with_param(".param .u32 T = 128;"), &src)
            .unwrap_err()
            .contains("at most 64")
    );
    launch(&with_param(".param .u32 T = 64;"), &src).unwrap();
}

#[test]
fn a_64_bit_value_moves_to_and_from_two_halves() {
    // Run by tests/conformance/mov.halves.spu; here: each becomes two moves, and
    // the forms not supported are refused by name.
    let body = "\tmov.b64 \t{%r2, %r3}, %rd4;\n\tmov.b64 \t%rd5, {%r3, %r2};";
    let m = launch(LAUNCH, &kernel("", "", body)).unwrap_or_else(|e| panic!("{e}"));
    let movs = (0..m.code.len())
        .filter_map(|pc| spu_asm::disasm::instr_text(&m, pc))
        .filter(|t| t.starts_with("mov.b32"))
        .count();
    assert!(movs >= 4, "{movs} mov.b32");
    for (body, message) in [
        (
            "\tmov.b32 \t%r2, {%rs1, %rs2};",
            "`mov.b32` with 2 halves is not supported",
        ),
        (
            "\tmov.b64 \t{%r2, %r3}, 5;",
            "needs a register on the other side",
        ),
        ("\tmov.b64 \t{%r2, %r3, %r4}, %rd1;", "with 3 halves"),
    ] {
        let err = launch(LAUNCH, &kernel("", "", body)).unwrap_err();
        assert!(err.contains(message), "{body}:\n{err}");
    }
}

#[test]
fn registers_of_a_ptx_file_are_always_allocated() {
    // The declarations (16 + 8 pairs + 4 halves = 36 registers) fit the register
    // file, but a PTX file's registers are virtual: the kernel keeps what it uses.
    let src = kernel("", "", "\tmov.u32 \t%r2, %r1;");
    let m = launch(LAUNCH, &src).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        m.general_reg_count() <= 8,
        "{} registers",
        m.general_reg_count()
    );
    // A `.spu` file's fitting declarations stay where they are.
    let spu = ".global .u32 OUT[32] = zeros;\n.entry k {\n.reg .u32 %r<40>;\nmov.u32 %r39, OUT;\nst.global.u32 [%r39], %r39;\nexit;\n}\n";
    let m = assemble("k.spu", spu).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.general_reg_count(), 40);
}

#[test]
fn a_syntax_error_in_the_included_ptx_comes_before_the_errors_it_causes() {
    // A signature that does not parse (a stray `@`): its error is reported first,
    // and the entry's body is not reported line by line.
    let ptx = kernel("", "", "\tmov.u32 \t%r2, %r1;")
        .replace(".param .u32 probe_param_1", ".param .u32 @ probe_param_1");
    let mut read = |_: &std::path::Path| Ok(ptx.clone());
    let d = spu_asm::assemble_with("k.spu", LAUNCH, &mut read).unwrap_err();
    let messages: Vec<&str> = d.items.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages[0], "unexpected `@`", "{messages:?}");
    assert!(
        !messages.iter().any(|m| m.contains("belongs inside")),
        "{messages:?}"
    );
    // What remains is the signature's: its parameters and the `.bind` arguments.
    assert!(messages.len() <= 4, "{messages:?}");
}

#[test]
fn pragmas_are_accepted_and_ignored() {
    // nvcc writes `.pragma "nounroll";` before a loop whose unrolling `#pragma
    // unroll 1` forbade; other hints have the same form.
    let plain = launch(LAUNCH, &kernel("", "", "\tmov.u32 \t%r2, %r1;")).unwrap();
    let src = kernel(
        ".pragma \"nounroll\";",
        "",
        "\t.pragma \"nounroll\";\n\tmov.u32 \t%r2, %r1;\n\t.pragma \"used_bytes_mask 15\";",
    );
    let m = launch(LAUNCH, &src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.code, plain.code);
}

#[test]
fn module_scope_variables_are_one_element_buffers() {
    // nvcc's `__device__ unsigned int counter;` and `__device__ double scale = 2.5;`
    let src = kernel(
        ".visible .global .align 4 .u32 counter;\n.global .align 8 .f64 scale = 2.5;",
        "",
        "\tred.global.add.u32 \t[counter], 1;\n\tld.global.f64 \t%fd1, [scale];",
    )
    .replace(".reg .pred", ".reg .f64 \t%fd<2>;\n\t.reg .pred");
    let m = launch(LAUNCH, &src).unwrap_or_else(|e| panic!("{e}"));
    let b: Vec<(&str, spu_isa::Ty, spu_isa::format::Init)> = m
        .buffers
        .iter()
        .map(|b| (b.name.as_str(), b.ty, b.init.clone()))
        .collect();
    assert_eq!(
        b[..2],
        [
            ("counter", spu_isa::Ty::U32, spu_isa::format::Init::Zeros),
            ("scale", spu_isa::Ty::F64, spu_isa::format::Init::Const(2.5)),
        ]
    );
    assert_eq!(m.buffers[0].dims, [spu_isa::format::Expr::constant(1)]);
    // An initial value the type cannot hold is refused.
    let bad = kernel(".global .u8 small = 300;", "", "");
    let e = launch(LAUNCH, &bad).unwrap_err();
    assert!(e.contains("300"), "{e}");
}
