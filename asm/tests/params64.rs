//! 64-bit kernel parameters (`.u64`, `.s64`, `.b64`, `.f64`) in the assembler:
//! defaults over the whole range of their type (f64 literals kept bit for bit),
//! their 8-byte aligned place in parameter space, reads of the whole value or of
//! one word, and `.bind` of 64-bit PTX entry parameters.

use spu_isa::Ty;
use spu_isa::format::Module;

fn asm(src: &str) -> Result<Module, String> {
    let mut read = |p: &std::path::Path| -> Result<String, String> {
        match p.file_name().and_then(|f| f.to_str()) {
            Some("axpy.ptx") => Ok(AXPY.to_string()),
            _ => Err(format!("no file `{}`", p.display())),
        }
    };
    let (m, _) =
        spu_asm::assemble_with("t.spu", src, &mut read).map_err(|d| d.render("t.spu", src))?;
    let bin = spu_isa::format::write_module(&m).expect("writes");
    Ok(spu_isa::format::read_module(&bin).expect("the assembler's output reads back"))
}

fn kernel(decls: &str, body: &str) -> String {
    format!(
        "{decls}\n.entry k {{\n    .reg .u32 %r<4>;\n    .reg .u64 %rd<2>;\n    .reg .f64 %fd<2>;\n{body}\n    exit;\n}}\n"
    )
}

fn listing(m: &Module) -> String {
    spu_asm::disasm::disassemble(m, spu_asm::disasm::Options { no_locations: true })
}

#[test]
fn defaults_cover_the_range_of_their_type_and_keep_f64_bits() {
    let m = asm(&kernel(
        ".param .u32 K = 3;\n\
         .param .u64 N = 18446744073709551615;\n\
         .param .s64 M = -9223372036854775808;\n\
         .param .f64 A = 0.1;\n\
         .param .f64 B = 0d7FF0000000000001;\n\
         .param .b64 W = 0x8000000000000000;\n\
         .param .f64 C = -3;",
        "",
    ))
    .unwrap();
    let defaults: Vec<(Ty, Option<u64>)> = m.params.iter().map(|p| (p.ty, p.default)).collect();
    assert_eq!(
        defaults,
        [
            (Ty::U32, Some(3)),
            (Ty::U64, Some(u64::MAX)),
            (Ty::S64, Some(1 << 63)),
            (Ty::F64, Some(0.1f64.to_bits())),
            (Ty::F64, Some(0x7ff0_0000_0000_0001)),
            (Ty::B64, Some(1 << 63)),
            (Ty::F64, Some((-3.0f64).to_bits())),
        ]
    );
    // K at 0, then each 64-bit parameter at the next multiple of 8.
    assert_eq!(m.param_layout(), (vec![0, 8, 16, 24, 32, 40, 48], 56));
    // The listing declares the same values, and reassembles to the same defaults.
    let text = listing(&m);
    for decl in [
        ".param .u64 N = 18446744073709551615;",
        ".param .s64 M = -9223372036854775808;",
        ".param .f64 A = 0.1;",
    ] {
        assert!(text.contains(decl), "{decl} in\n{text}");
    }
    let again = asm(&text).unwrap();
    assert_eq!(again.params, m.params);
}

#[test]
fn defaults_out_of_their_type_are_refused_with_the_range() {
    for (decl, want) in [
        (
            ".param .u64 N = 18446744073709551616;",
            "integer literal is out of range",
        ),
        (".param .u64 N = -1;", "`-1` is not a valid .u64 value"),
        (
            ".param .s64 N = 9223372036854775808;",
            "`9223372036854775808` is not a valid .s64 value",
        ),
        (".param .f64 A = 1e400;", "`1e400` does not fit in .f64"),
        (
            ".param .f64 A = 9007199254740993;",
            "`9007199254740993` is not exactly representable as f64",
        ),
    ] {
        let err = asm(&kernel(decl, "")).unwrap_err();
        assert!(err.contains(want), "{decl}: {err}");
    }
    let err = asm(&kernel(".param .u64 N = -1;", "")).unwrap_err();
    assert!(err.contains("declare the parameter .s64"), "{err}");
    let err = asm(&kernel(".param .f64 A = 1.5;\n.global .u32 X[A];", "")).unwrap_err();
    assert!(
        err.contains("parameter `A` is .f64 and cannot be used in an integer expression"),
        "{err}"
    );
}

#[test]
fn reads_take_the_whole_value_or_one_word() {
    let m = asm(&kernel(
        ".param .u32 K = 1;\n.param .u64 N = 5;\n.param .f64 A = 2.5;",
        "    ld.param.u64 %rd0, [N];\n\
         \x20   ld.param.f64 %fd0, [A];\n\
         \x20   ld.param.u32 %r0, [N];\n\
         \x20   ld.param.u32 %r1, [N+4];\n\
         \x20   ld.param.u32 %r2, [4+A];\n\
         \x20   ld.param.u32 %r3, [K];",
    ))
    .unwrap();
    let text = listing(&m);
    for read in [
        "ld.param.u64 %rd0, [N];",
        "ld.param.f64 %fd0, [A];",
        "ld.param.u32 %r0, [N];",
        "ld.param.u32 %r1, [N+4];",
        "ld.param.u32 %r2, [A+4];",
        "ld.param.u32 %r3, [K];",
    ] {
        assert!(text.contains(read), "{read} in\n{text}");
    }
    // The listing reassembles to the same code.
    assert_eq!(asm(&text).unwrap().code, m.code);
}

#[test]
fn reads_outside_a_parameter_are_refused() {
    let decls = ".param .u32 K = 1;\n.param .u64 N = 5;";
    for (read, want) in [
        (
            "ld.param.u64 %rd0, [K];",
            "`ld.param` reads 8 bytes at byte 0 of parameter `K`, which is .u32 (4 bytes)",
        ),
        (
            "ld.param.u32 %r0, [N+2];",
            "reads 4 bytes at byte 2 of parameter `N`, which is .u64 (8 bytes)",
        ),
        (
            "ld.param.u64 %rd0, [N+4];",
            "reads 8 bytes at byte 4 of parameter `N`",
        ),
        ("ld.param.u32 %r0, [N-4];", "at byte -4 of parameter `N`"),
    ] {
        let err = asm(&kernel(decls, &format!("    {read}"))).unwrap_err();
        assert!(err.contains(want), "{read}: {err}");
    }
    let err = asm(&kernel(decls, "    ld.param.u32 %r0, [N+8];")).unwrap_err();
    assert!(err.contains("`[N+4]` (high)"), "{err}");
}

/// `daxpy(size_t n, double a, const double *x, double *y)` as nvcc declares it.
const AXPY: &str = "\
.version 8.0
.target sm_80
.address_size 64

.visible .entry axpy(
\t.param .u64 axpy_param_0,
\t.param .f64 axpy_param_1,
\t.param .u64 axpy_param_2
)
{
\t.reg .b64 \t%rd<3>;
\t.reg .f64 \t%fd<2>;
\tld.param.u64 \t%rd1, [axpy_param_0];
\tld.param.f64 \t%fd1, [axpy_param_1];
\tld.param.u64 \t%rd2, [axpy_param_2];
\tret;
}
";

#[test]
fn unbound_64_bit_entry_parameters_are_kernel_parameters() {
    let m = asm("#include \"axpy.ptx\"\n").unwrap();
    let params: Vec<(&str, Ty)> = m.params.iter().map(|p| (p.name.as_str(), p.ty)).collect();
    assert_eq!(
        params,
        [
            ("axpy_param_0", Ty::U64),
            ("axpy_param_1", Ty::F64),
            ("axpy_param_2", Ty::U64)
        ]
    );
    let text = listing(&m);
    assert!(
        text.contains("ld.param.f64 %") && text.contains("[axpy_param_1]"),
        "{text}"
    );
}

#[test]
fn bind_passes_64_bit_parameters_and_constants_whole() {
    let m = asm("#include \"axpy.ptx\"\n\
                 .param .u64 N = 4096;\n.param .f64 A = 2.5;\n\
                 .global .f64 X[N] = zeros;\n\
                 .launch grid(1) block(32);\n\
                 .bind axpy(N, A, X);\n")
    .unwrap();
    let text = listing(&m);
    assert!(
        text.contains("ld.param.u64 %") && text.contains("[N]"),
        "{text}"
    );
    assert!(
        text.contains("ld.param.f64 %") && text.contains("[A]"),
        "{text}"
    );
    // An f64 constant keeps all its bits: 0.1 is 0x3FB999999999999A.
    let m = asm("#include \"axpy.ptx\"\n\
                 .global .f64 X[8] = zeros;\n\
                 .launch grid(1) block(32);\n\
                 .bind axpy(18446744073709551615, 0.1, X);\n")
    .unwrap();
    let text = listing(&m);
    for mov in [
        ".hi, 1069128089;", // 0x3FB99999
        ".lo, 2576980378;", // 0x9999999A
        ".hi, 4294967295;",
    ] {
        assert!(text.contains(mov), "{mov} in\n{text}");
    }
    for (bind, want) in [
        (
            ".bind axpy(N, K, X);",
            "parameter `K` is .u64, but `axpy_param_1` is a .f64",
        ),
        (
            ".bind axpy(N, F, X);",
            "parameter `F` is .f32, but `axpy_param_1` is a .f64",
        ),
        (".bind axpy(N, 1e400, X);", "1e400"),
    ] {
        let src = format!(
            "#include \"axpy.ptx\"\n.param .u64 N = 8;\n.param .u64 K = 8;\n.param .f32 F = 1.0;\n\
             .param .f64 A = 2.5;\n.global .f64 X[N] = zeros;\n.launch grid(1) block(32);\n{}\n",
            bind
        );
        let err = asm(&src).unwrap_err();
        assert!(err.contains(want), "{bind}: {err}");
    }
}

#[test]
fn a_32_bit_parameter_with_a_wider_default_is_no_binary() {
    let mut m = asm(&kernel(".param .u32 K = 1;\n.param .u64 N = 1;", "")).unwrap();
    m.params[1].default = Some(1 << 40);
    spu_isa::format::write_module(&m).expect("a 64-bit default may use 64 bits");
    m.params[0].default = Some(1 << 40);
    let err = spu_isa::format::write_module(&m).unwrap_err().to_string();
    assert!(
        err.contains("parameter `K` is .u32 but its default 0x10000000000 is wider than 32 bits"),
        "{err}"
    );
}
