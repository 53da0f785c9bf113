//! PTX syntax as nvcc writes it: header directives that end at the line end, a
//! linkage prefix, an entry signature whose parameters become kernel parameters,
//! `$` in labels and names, `.b32` registers and more virtual registers than exist.

const KERNEL: &str = "\
//
// Generated in the style of nvcc; written for this test.
//

.version 7.8
.target sm_52
.address_size 64

\t// .globl\tscale
.visible .entry scale(
\t.param .u32 scale_param_0,
\t.param .f32 scale_param_1
)
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<200>;
\t.reg .f32 \t%f<4>;

\tld.param.u32 \t%r1, [scale_param_0];
\tld.param.f32 \t%f1, [scale_param_1];
\tmov.u32 \t%r2, %tid.x;
\tsetp.ge.u32 \t%p1, %r2, %r1;
\t@%p1 bra \t$L__BB0_2;
\tcvt.rn.f32.u32 \t%f2, %r2;
\tmul.f32 \t%f3, %f2, %f1;

$L__BB0_2:
\tret;

}
";

#[test]
fn nvcc_style_header_signature_and_labels_assemble() {
    let (module, warnings) = spu_asm::assemble_module("scale.ptx", KERNEL)
        .unwrap_or_else(|d| panic!("{}", d.render("scale.ptx", KERNEL)));
    assert!(
        warnings.is_empty(),
        "{}",
        warnings.render("scale.ptx", KERNEL)
    );
    assert_eq!(module.name, "scale");
    let params: Vec<&str> = module.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(params, ["scale_param_0", "scale_param_1"]);
    assert!(module.labels.iter().any(|l| l.name == "$L__BB0_2"));
    // 200 declared registers do not fit, so they were allocated.
    assert!(module.general_reg_count() < 16);
}

#[test]
fn an_unsupported_address_size_is_named() {
    let src = KERNEL.replace(".address_size 64", ".address_size 16");
    let d = spu_asm::assemble_module("scale.ptx", &src).unwrap_err();
    let text = d.render("scale.ptx", &src);
    assert!(
        text.contains("`.address_size 16` is not supported"),
        "{text}"
    );
}

/// Two kernels in one file, in nvcc's style: pointer parameters, 64-bit address
/// arithmetic, an `.extern .shared` array.
const TWO: &str = "\
.version 8.0
.target sm_80
.address_size 64

.visible .entry fill(
\t.param .u64 .ptr .global .align 4 fill_param_0,
\t.param .u32 fill_param_1
)
{
\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<4>;
\t.reg .b64 \t%rd<5>;

\tld.param.u64 \t%rd1, [fill_param_0];
\tld.param.u32 \t%r1, [fill_param_1];
\tmov.u32 \t%r2, %tid.x;
\tsetp.ge.u32 \t%p1, %r2, %r1;
\t@%p1 bra \t$L__BB0_2;
\tcvta.to.global.u64 \t%rd2, %rd1;
\tmul.wide.u32 \t%rd3, %r2, 4;
\tadd.s64 \t%rd4, %rd2, %rd3;
\tst.global.u32 \t[%rd4], %r2;
$L__BB0_2:
\tret;
}

.visible .entry twice(
\t.param .u32 twice_param_0
)
{
\t.reg .b32 \t%r<3>;
\t.extern .shared .align 16 .b8 smem[];
\tld.param.u32 \t%r1, [twice_param_0];
\tadd.s32 \t%r2, %r1, %r1;
\tst.shared.u32 \t[smem+4], %r2;
\tret;
}
";

fn assemble_entry(src: &str, entry: Option<&str>) -> Result<spu_isa::format::Module, String> {
    let options = spu_asm::Options {
        entry: entry.map(str::to_string),
        ..spu_asm::Options::default()
    };
    let mut read = |p: &std::path::Path| -> Result<String, String> {
        match p.file_name().and_then(|f| f.to_str()) {
            Some("two.ptx") => Ok(TWO.to_string()),
            _ => Err(format!("no file `{}`", p.display())),
        }
    };
    spu_asm::assemble_with_options("k.spu", src, &mut read, &options)
        .map(|(m, _)| m)
        .map_err(|d| d.render("k.spu", src))
}

#[test]
fn several_entries_need_a_choice() {
    let err = assemble_entry(TWO, None).unwrap_err();
    assert!(
        err.contains("this file has 2 kernels: `fill`, `twice`") && err.contains("--entry fill"),
        "{err}"
    );
    let err = assemble_entry(TWO, Some("twise")).unwrap_err();
    assert!(
        err.contains("no kernel is named `twise`") && err.contains("did you mean `--entry twice`?"),
        "{err}"
    );
}

#[test]
fn unbound_parameters_of_any_width_are_kernel_parameters() {
    let m = assemble_entry(TWO, Some("fill")).unwrap();
    let params: Vec<(&str, spu_isa::Ty)> =
        m.params.iter().map(|p| (p.name.as_str(), p.ty)).collect();
    assert_eq!(
        params,
        [
            ("fill_param_0", spu_isa::Ty::U64),
            ("fill_param_1", spu_isa::Ty::U32)
        ]
    );
    assert_eq!(m.param_layout(), (vec![0, 8], 12));
    let text = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options { no_locations: true });
    assert!(
        text.contains("ld.param.u64 %rd") && text.contains("[fill_param_0]"),
        "{text}"
    );
    assert!(
        text.contains("ld.param.u32 %r") && text.contains("[fill_param_1]"),
        "{text}"
    );
}

#[test]
fn dynamic_shared_memory_is_sized_at_launch() {
    let err = assemble_entry(TWO, Some("twice")).unwrap_err();
    assert!(
        err.contains("the size of this dynamic shared array is not given")
            && err.contains("shared(4096)"),
        "{err}"
    );
    let launch = "#include \"two.ptx\"\n.launch grid(1) block(32) shared(10);\n.bind twice(7);\n";
    let m = assemble_entry(launch, None).unwrap();
    assert_eq!(m.name, "twice");
    assert!(m.params.is_empty(), "a bound scalar is no kernel parameter");
    assert_eq!(m.shared.len(), 1);
    assert_eq!(m.shared[0].align, 16);
    // 10 bytes of .b8 elements.
    let n = m.shared[0].dims[0].eval(&|_| None).unwrap();
    assert_eq!(n, 10);
}

#[test]
fn bind_gives_pointer_parameters_buffers_and_scalars_parameters() {
    let launch = "\
#include \"two.ptx\"
.param .u32 N = 100;
.global .u32 OUT[N] = zeros;
.launch grid(1) block(128);
.bind fill(OUT, N);
";
    let m = assemble_entry(launch, None).unwrap();
    assert_eq!(m.name, "fill");
    let params: Vec<&str> = m.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(params, ["N"]);
    let text = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options { no_locations: true });
    assert!(
        text.contains("mov.u32 %r") && text.contains(", OUT;"),
        "{text}"
    );
    assert!(
        text.contains("ld.param.u32 %r") && text.contains("[N]"),
        "{text}"
    );
    // The other kernel's statements are not assembled.
    assert!(!text.contains("smem"), "{text}");
}

#[test]
fn bind_arguments_are_checked() {
    let cases = [
        (
            ".bind fill(OUT);",
            "`fill` takes 2 arguments, `.bind` gives 1",
        ),
        (
            ".bind fill(OUT, S);",
            "parameter `S` is .f32, but `fill_param_1` is a .u32",
        ),
        (
            ".bind fill(OUT, N, N);",
            "`fill` takes 2 arguments, `.bind` gives 3",
        ),
        (
            ".bind fil(OUT, N);",
            "`.bind` names `fil`, but no kernel has that name",
        ),
        (
            ".bind fill(OUT, X);",
            "`X` is not a buffer or parameter of the launch",
        ),
        // A 64-bit value does not narrow into a 32-bit parameter.
        (
            ".bind fill(OUT, W);",
            "parameter `W` is .u64, but `fill_param_1` is a .u32",
        ),
    ];
    for (bind, want) in cases {
        let src = format!(
            "#include \"two.ptx\"\n.param .u32 N = 100;\n.param .f32 S = 1.0;\n.param .u64 W = 1;\n.global .u32 OUT[N] = zeros;\n{bind}\n"
        );
        let err = assemble_entry(&src, None).unwrap_err();
        assert!(err.contains(want), "{bind}: {err}");
    }
}

#[test]
fn setp_combines_with_a_predicate_and_writes_a_complement() {
    let src = "\
.entry k {
    .reg .pred %p<5>;
    .reg .b32 %r<3>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1|%p2, %r1, 7;
    setp.gt.and.u32 %p3|%p4, %r1, 2, !%p1;
    setp.ne.or.u32 %p1, %r1, 5, %p1;
    @%p4 bra DONE;
    @%p3 mov.u32 %r2, 1;
DONE:
    exit;
}
";
    let (m, _) = spu_asm::assemble_module("k.spu", src)
        .unwrap_or_else(|d| panic!("{}", d.render("k.spu", src)));
    let text = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options { no_locations: true });
    for want in ["not.pred", "and.pred", "or.pred", "mov.pred"] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let bad = src.replace("!%p1;", "%r1;");
    let err = spu_asm::assemble_module("k.spu", &bad)
        .unwrap_err()
        .render("k.spu", &bad);
    assert!(
        err.contains("`%r1` is a .b32 register, not a predicate"),
        "{err}"
    );
}

#[test]
fn old_shuffle_and_vote_spellings_and_warp_barriers() {
    let src = "\
.entry k {
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %laneid;
    shfl.down.b32 %r2|%p1, %r1, 1, 31;
    vote.any.pred %p2, %p1;
    vote.ballot.b32 %r3, %p1;
    bar.warp.sync -1;
    exit;
}
";
    let (m, _) = spu_asm::assemble_module("k.spu", src)
        .unwrap_or_else(|d| panic!("{}", d.render("k.spu", src)));
    let text = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options { no_locations: true });
    assert!(text.contains("shfl.sync.down.b32"), "{text}");
    assert!(text.contains("vote.sync.any.pred"), "{text}");
    assert!(text.contains("vote.sync.ballot.b32"), "{text}");
    assert_eq!(m.code.len(), 5, "bar.warp.sync is no instruction: {text}");
}

#[test]
fn an_uncalled_device_function_that_does_not_parse_only_warns() {
    let src = "\
.func (.reg .b32 r) helper(.reg .b32 a)
{
    add.s32 r, a, 1;
    ret;
}
.entry k {
    .const .align 4 .b8 stack[16];
    exit;
}
";
    let err = spu_asm::assemble_module("k.ptx", src)
        .unwrap_err()
        .render("k.ptx", src);
    // The kernel calls no function, so the `.func` that does not parse only warns.
    assert!(
        err.contains("warning: unexpected `.reg`")
            && err.contains("in a device function the assembled kernel does not call"),
        "{err}"
    );
    assert!(
        err.contains("error: constant memory (`.const`) is not supported"),
        "{err}"
    );
    // The function's body is skipped whole: no error about its statements.
    assert!(!err.contains("outside any kernel"), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "{err}");
}

#[test]
fn a_call_of_vprintf_with_a_wrong_signature_is_one_clear_error() {
    let src = "\
.version 7.5
.target sm_52
.address_size 64
.extern .func  (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0,
\t.param .b64 vprintf_param_1
)
;
.visible .entry hello()
{
\t.reg .b32 \t%r<2>;
\t.reg .b64 \t%rd<3>;
\tmov.u64 \t%rd1, 0;
\t{ // callseq 0, 0
\t.reg .b32 temp_param_reg;
\t.param .b64 param0;
\tst.param.b64 \t[param0+0], %rd1;
\t.param .b32 retval0;
\tcall.uni (retval0),
\tvprintf,
\t(
\tparam0
\t);
\tld.param.b32 \t%r1, [retval0+0];
\t} // callseq 0
\tret;
}
";
    let err = spu_asm::assemble_module("k.ptx", src)
        .unwrap_err()
        .render("k.ptx", src);
    assert!(
        err.contains("error: `vprintf` takes 2 arguments; this call gives 1")
            && err.contains("k.ptx:21:2")
            && err.contains("the format string's address and the argument buffer's address"),
        "{err}"
    );
    // The call sequence's block is a scope: the kernel's block still closes after it.
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(!err.contains("outside any kernel"), "{err}");
}

/// A kernel calling `vprintf` as nvcc does, with `extra` lines before the call.
fn printf_kernel(args: &str) -> String {
    format!(
        "\
.version 7.5
.target sm_52
.address_size 64
.extern .func  (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0,
\t.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[4] = {{37, 100, 10, 0}};
.visible .entry hello()
{{
\t.local .align 8 .b8 \t__local_depot0[8];
\t.reg .b64 \t%SP;
\t.reg .b64 \t%SPL;
\t.reg .b32 \t%r<3>;
\t.reg .b64 \t%rd<5>;
\tmov.u64 \t%SPL, __local_depot0;
\tcvta.local.u64 \t%SP, %SPL;
\tmov.u32 \t%r1, %tid.x;
\tadd.u64 \t%rd1, %SP, 0;
\tst.local.u32 \t[%SPL], %r1;
\tmov.u64 \t%rd2, $str;
\tcvta.global.u64 \t%rd3, %rd2;
\t{{ // callseq 0, 0
\t.param .b64 param0;
\tst.param.b64 \t[param0+0], %rd3;
\t.param .b64 param1;
\tst.param.b64 \t[param1+0], %rd1;
\t.param .b32 retval0;
\tcall.uni (retval0), vprintf, ({args});
\tld.param.b32 \t%r2, [retval0+0];
\t}} // callseq 0
\tret;
}}
"
    )
}

#[test]
fn a_call_of_vprintf_lowers_to_the_machine_printf_in_the_callers_frame() {
    let src = printf_kernel("param0, param1");
    let (m, _) = spu_asm::assemble_module("k.ptx", &src)
        .unwrap_or_else(|d| panic!("{}", d.render("k.ptx", &src)));
    let listing = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options { no_locations: true });
    // The depot takes the frame's first 16 bytes: vprintf's frame starts after it,
    // its parameters stored there, its result read back from byte 16 of it.
    for line in [
        "st.local.b64 [16], %",
        "st.local.b64 [24], %",
        "printf 0x1;",
        "ld.local.b32 %",
    ] {
        assert!(listing.contains(line), "no `{line}` in\n{listing}");
    }
    assert!(!listing.contains("call"), "{listing}");
    // The argument buffer's address is a local one: no refusal as for a device function.
    let src = printf_kernel("param0, param1, param0");
    let err = spu_asm::assemble_module("k.ptx", &src)
        .unwrap_err()
        .render("k.ptx", &src);
    assert!(
        err.contains("`vprintf` takes 2 arguments; this call gives 3"),
        "{err}"
    );
}

#[test]
fn entry_assembles_only_the_chosen_kernel_and_warns_about_the_others() {
    let bad = TWO.replace(
        "\t.extern .shared .align 16 .b8 smem[];",
        "\t.const .align 4 .b8 table[8];\n\tld.global.v8.u32 {%r1, %r1, %r1, %r1, %r1, %r1, %r1, %r1}, [%rd1];",
    );
    assert!(bad.contains(".const .align 4"));
    let options = spu_asm::Options {
        entry: Some("fill".into()),
        ..spu_asm::Options::default()
    };
    let mut read = |_: &std::path::Path| -> Result<String, String> { Err("none".into()) };
    let (m, warnings) = spu_asm::assemble_with_options("two.ptx", &bad, &mut read, &options)
        .unwrap_or_else(|d| panic!("{}", d.render("two.ptx", &bad)));
    assert_eq!(m.name, "fill");
    let text = warnings.render("two.ptx", &bad);
    assert!(
        text.contains("warning: constant memory (`.const`) is not supported")
            && text.contains("in kernel `twice`, which is not assembled (the launch chose `fill`)"),
        "{text}"
    );
    // Asking for the other kernel refuses it, with the errors as errors.
    let options = spu_asm::Options {
        entry: Some("twice".into()),
        ..spu_asm::Options::default()
    };
    let err = spu_asm::assemble_with_options("two.ptx", &bad, &mut read, &options)
        .unwrap_err()
        .render("two.ptx", &bad);
    assert!(
        err.contains("error: constant memory (`.const`) is not supported"),
        "{err}"
    );
}

#[test]
fn a_module_scope_extern_shared_array_the_kernel_does_not_use_needs_no_size() {
    let src = TWO.replace("\t.extern .shared .align 16 .b8 smem[];\n", "");
    let src = src.replace(
        ".visible .entry fill(",
        ".extern .shared .align 16 .b8 smem[];\n\n.visible .entry fill(",
    );
    let (m, _) = spu_asm::assemble_with_options(
        "two.ptx",
        &src,
        &mut |_| Err("none".into()),
        &spu_asm::Options {
            entry: Some("fill".into()),
            ..spu_asm::Options::default()
        },
    )
    .unwrap_or_else(|d| panic!("{}", d.render("two.ptx", &src)));
    // One element, so the disassembly re-assembles to the same module.
    assert_eq!(m.shared[0].dims, [spu_isa::format::Expr::constant(1)]);
    let text = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options::default());
    let (again, _) = spu_asm::assemble_module("again.spu", &text)
        .unwrap_or_else(|d| panic!("{}", d.render("again.spu", &text)));
    assert_eq!(again.shared, m.shared, "{text}");
    // `twice` writes to it, so it still needs a size.
    let err = assemble_entry(&src, Some("twice")).unwrap_err();
    assert!(
        err.contains("the size of this dynamic shared array is not given"),
        "{err}"
    );
}

#[test]
fn shared_alignment_is_kept_and_checked() {
    let src = ".entry k {\n    .shared .align 64 .f32 a[3];\n    .reg .b32 %r;\n    mov.u32 %r, a;\n    exit;\n}\n";
    let (m, _) = spu_asm::assemble_module("k.spu", src).unwrap();
    assert_eq!(m.shared[0].align, 64);
    let text = spu_asm::disasm::disassemble(&m, spu_asm::disasm::Options::default());
    assert!(text.contains(".shared .align 64 .f32 a[3];"), "{text}");
    let bad = src.replace("64", "48");
    let err = spu_asm::assemble_module("k.spu", &bad)
        .unwrap_err()
        .render("k.spu", &bad);
    assert!(err.contains("alignment `48` is not supported"), "{err}");
}

#[test]
fn a_failed_bind_is_reported_once_not_at_every_read_of_a_parameter() {
    let launch = |bind: &str| {
        format!(
            "#include \"two.ptx\"\n.param .u32 N = 100;\n.global .u32 OUT[N] = zeros;\n.global .f32 F[N] = const(1.5);\n.launch grid(1) block(128);\n{bind}\n"
        )
    };
    for (bind, want) in [
        (
            ".bind fill(OUT);",
            "`fill` takes 2 arguments, `.bind` gives 1",
        ),
        (
            ".bind fill(OUTT, N);",
            "`OUTT` is not a buffer or parameter of the launch",
        ),
        (".bind fill(OUT, -1);", "`-1` is not a valid .u32 value"),
        // A constant for a 64-bit parameter is a value of its type too.
        (".bind fill(-1, N);", "`-1` is not a valid .u64 value"),
        (
            ".bind fill(OUT, 4294967296);",
            "`4294967296` is not a valid .u32 value",
        ),
        (
            ".bind fill(OUT, OUT);",
            "`OUT` is a buffer, but `fill_param_1` is a .u32",
        ),
    ] {
        let src = launch(bind);
        let mut read = |p: &std::path::Path| match p.file_name().and_then(|f| f.to_str()) {
            Some("two.ptx") => Ok(TWO.to_string()),
            _ => Err(String::new()),
        };
        let diags = spu_asm::assemble_with("k.spu", &src, &mut read).unwrap_err();
        let text = diags.render("k.spu", &src);
        assert_eq!(diags.error_count(), 1, "{bind}: {text}");
        assert!(diags.items[0].message.contains(want), "{bind}: {text}");
        assert!(!text.contains("undefined parameter"), "{bind}: {text}");
    }
    // A constant of the parameter's type is fine, and so is a 64-bit one at its top.
    assemble_entry(&launch(".bind fill(OUT, 4294967295);"), None).unwrap();
}

#[test]
fn a_buffer_binds_to_a_pointer_of_the_files_address_size() {
    let ptx32 = TWO
        .replace(".address_size 64", ".address_size 32")
        .replace(
            ".param .u64 .ptr .global .align 4 fill_param_0",
            ".param .u32 fill_param_0",
        )
        .replace("ld.param.u64 \t%rd1", "ld.param.u32 \t%r3")
        .replace(
            "cvta.to.global.u64 \t%rd2, %rd1;",
            "cvt.u64.u32 \t%rd2, %r3;",
        );
    let src = "#include \"two.ptx\"\n.global .u32 OUT[64] = zeros;\n.launch grid(1) block(64);\n.bind fill(OUT, 64);\n";
    let mut read = |_: &std::path::Path| Ok(ptx32.clone());
    let (m, _) = spu_asm::assemble_with("k.spu", src, &mut read)
        .unwrap_or_else(|d| panic!("{}", d.render("k.spu", src)));
    assert_eq!(m.name, "fill");
}

#[test]
fn a_bare_ptx_call_of_an_undefined_function_is_refused_as_a_ptx_call() {
    // `call foo;` and `call.uni foo, (param0);` outside a call sequence are PTX's
    // calls; only `call LABEL, FRAME` (a label and a number) is the machine's.
    for call in [
        "call foo;",
        "call.uni foo, (param0);",
        "call.uni (r), foo, (p);",
    ] {
        let src = format!(
            ".version 7.5\n.target sm_52\n.address_size 64\n.visible .entry k()\n{{\n\t{call}\n\tret;\n}}\n"
        );
        let err = spu_asm::assemble_module("k.ptx", &src)
            .unwrap_err()
            .render("k.ptx", &src);
        assert!(
            err.contains("error: `foo` is not a device function defined in this file")
                && err.contains("k.ptx:6:")
                && !err.contains("takes 2 operands"),
            "{call}: {err}"
        );
    }
}

#[test]
fn stores_of_immediates_assemble_at_every_width() {
    for ty in [
        "u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32", "b32", "u64", "s64", "b64", "f32",
        "f64",
    ] {
        let value = if ty.starts_with('f') { "1.5" } else { "0" };
        let src = format!(
            ".version 7.0\n.target sm_50\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n\t.reg .b64 %rd<3>;\n\
             \tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
             \tst.global.{ty} [%rd2+16], {value};\n\tst.global.{ty} [%rd2+8], -1;\n\tret;\n}}\n"
        );
        if let Err(e) = assemble_entry(&src, None) {
            panic!("st.global.{ty}:\n{e}");
        }
    }
}
