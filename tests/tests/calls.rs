//! PTX device functions end to end: `samples/cuda/calls_nvcc.spu` and
//! `calls_clang.spu` (a helper called from a divergent branch, a recursive
//! factorial as deep as `i % 10` per lane) against a reference computed here, on the
//! SPU, on `gtx480` and in functional mode.

use spu_emu::Machine;
use spu_tests::repo_path;

/// The buffers X, Y and F after a run of `file` on `machine`.
fn run(file: &str, machine: &Machine, functional: bool) -> (Vec<f32>, Vec<f32>, Vec<u32>) {
    let ran = spu_tests::run_in_mode(&repo_path(file), machine, &[], &[], functional);
    (ran.in_f32("X"), ran.out_f32("Y"), ran.out_u32("F"))
}

#[test]
fn device_function_samples_match_a_reference_everywhere() {
    for file in [
        "samples/cuda/calls_nvcc.spu",
        "samples/cuda/calls_clang.spu",
    ] {
        for (name, machine, functional) in spu_tests::every_mode() {
            let (x, y, f) = run(file, &machine, functional);
            assert_eq!(x.len(), 1000, "{file} {name}");
            // The inputs reach past the clamp on both sides.
            assert!(x.iter().any(|v| *v > 1.0) && x.iter().any(|v| *v < -1.0));
            for i in 0..x.len() {
                let want = if i % 2 == 1 {
                    x[i].clamp(-1.0, 1.0)
                } else {
                    x[i]
                };
                assert_eq!(y[i].to_bits(), want.to_bits(), "{file} {name}: Y[{i}]");
                let fact: u32 = (1..=(i as u32 % 10)).product();
                assert_eq!(f[i], fact, "{file} {name}: F[{i}]");
            }
        }
    }
}

/// A load or atomic still in flight when a call or a return switches registers
/// lands in the activation that issued it: the caller's loaded value is there
/// after the call (the callee's own `%b` is gone), a callee's load at `ret` does
/// not overwrite the caller's `%b`, and an atomic's old value survives the call.
/// Each kernel stores `%b` per thread: every thread the same value, or (`None`)
/// the atomic's old values.
#[test]
fn a_load_in_flight_at_a_call_or_return_lands_in_its_own_activation() {
    let head = ".global .u32 Y[128] = const(7);\n.global .u32 OUT[128] = zeros;\n.launch grid(1) block(128);\n.entry k {\n    .reg .u32 %i, %a, %b;\n    mov.u32 %i, %tid.x;\n    shl.b32 %i, %i, 2;\n    mov.u32 %a, Y;\n    add.u32 %a, %a, %i;\n";
    let tail =
        "    mov.u32 %a, OUT;\n    add.u32 %a, %a, %i;\n    st.global.u32 [%a], %b;\n    exit;\n";
    let cases: [(&str, &str, &str, Option<u32>); 3] = [
        (
            "load before call",
            "    ld.global.u32 %b, [%a];\n    call F, 1;\n",
            "F:\n    mov.u32 %b, 99;\n    ret;\n",
            Some(7),
        ),
        (
            "load before ret",
            "    mov.u32 %b, 5;\n    call F, 1;\n",
            "F:\n    ld.global.u32 %b, [%a];\n    ret;\n",
            Some(5),
        ),
        (
            "atomic before call",
            "    mov.u32 %a, Y;\n    atom.global.add.u32 %b, [%a], 1;\n    call F, 1;\n",
            "F:\n    mov.u32 %b, 0;\n    ret;\n",
            None,
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (what, body, func, want) in cases {
        let path = dir.path().join("k.spu");
        std::fs::write(&path, format!("{head}{body}{tail}{func}}}\n")).unwrap();
        for (name, machine, functional) in spu_tests::every_mode() {
            let out = spu_tests::run_in_mode(&path, &machine, &[], &[], functional).out_u32("OUT");
            match want {
                Some(v) => assert!(out.iter().all(|&o| o == v), "{what}, {name}: {out:?}"),
                None => {
                    // The old values of 128 increments of 7, in some order.
                    let mut got = out.clone();
                    got.sort_unstable();
                    assert_eq!(got, (7..135).collect::<Vec<u32>>(), "{what}, {name}");
                }
            }
        }
    }
}

/// A `.func` that calls itself without end: assembled like any recursion, stopped
/// at run time by the machine's bound on nested calls, with the thread named.
#[test]
fn unbounded_recursion_through_a_func_stops_at_the_call_depth_limit() {
    let src = "\
.version 7.5
.target sm_52
.address_size 64
.func forever(.param .b32 forever_param_0)
{
\t.reg .b32 %r<3>;
\tld.param.b32 %r1, [forever_param_0];
\tadd.s32 %r2, %r1, 1;
\t{
\t.param .b32 param0;
\tst.param.b32 [param0+0], %r2;
\tcall.uni forever, (param0);
\t}
\tret;
}
.visible .entry k()
{
\t.reg .b32 %r<2>;
\tmov.u32 %r1, 0;
\tcall.uni forever, (%r1);
\tret;
}
";
    let (module, _) = spu_asm::assemble_module("k.ptx", src)
        .unwrap_or_else(|d| panic!("{}", d.render("k.ptx", src)));
    let machine = Machine::default();
    let mut image = spu_emu::load(module, &machine, &Default::default()).unwrap();
    let stop = spu_emu::simulate(&mut image, &machine, Default::default(), &mut |_| {})
        .expect_err("the recursion never ends");
    let text = format!("{stop:?}");
    assert!(text.contains("CallTooDeep"), "{text}");
}

/// PTX scopes labels per function: the kernel and two functions each define
/// `$L__BB0_2`, and each branch goes to its own function's label.
#[test]
fn labels_of_the_same_name_in_different_functions_are_their_own() {
    let func = |name: &str, limit: u32, add: u32| {
        format!(
            ".func (.param .b32 func_retval0) {name}(.param .b32 {name}_param_0)
{{
\t.reg .pred %p<2>;
\t.reg .b32 %r<3>;
\tld.param.u32 %r1, [{name}_param_0];
\tsetp.lt.u32 %p1, %r1, {limit};
\t@%p1 bra $L__BB0_2;
\tadd.s32 %r1, %r1, {add};
$L__BB0_2:
\tst.param.b32 [func_retval0+0], %r1;
\tret;
}}
"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let ptx = format!(
        ".version 7.0\n.target sm_52\n.address_size 64\n{}{}.visible .entry k(.param .u64 k_param_0)
{{
\t.reg .pred %p<2>;
\t.reg .b32 %r<6>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [k_param_0];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, %tid.x;
\tsetp.gt.u32 %p1, %r1, 100;
\t@%p1 bra $L__BB0_2;
\tcall.uni (%r2), f, (%r1);
\tcall.uni (%r3), g, (%r1);
\tadd.s32 %r4, %r2, %r3;
\tmul.wide.u32 %rd3, %r1, 4;
\tadd.s64 %rd3, %rd2, %rd3;
\tst.global.u32 [%rd3], %r4;
$L__BB0_2:
\tret;
}}
",
        func("f", 5, 100),
        func("g", 10, 1000)
    );
    std::fs::write(dir.path().join("lab.ptx"), &ptx).unwrap();
    let launch = dir.path().join("lab.spu");
    std::fs::write(
        &launch,
        "#include \"lab.ptx\"\n.global .u32 O[32] = zeros;\n.launch grid(1) block(32);\n.bind k(O);\n",
    )
    .unwrap();
    let ran = spu_tests::run_with(&launch, &Machine::default(), &[]);
    let want: Vec<u32> = (0..32)
        .map(|t| (if t < 5 { t } else { t + 100 }) + (if t < 10 { t } else { t + 1000 }))
        .collect();
    assert_eq!(ran.out_u32("O"), want);
}

/// A device function whose last statement is no `ret` would run on into the next
/// function's code: refused, at its closing brace.
#[test]
fn a_device_function_that_can_run_past_its_end_is_refused() {
    let src = "\
.version 7.0
.target sm_52
.address_size 64
.func (.param .b32 func_retval0) f(.param .b32 f_param_0)
{
\t.reg .pred %p<2>;
\t.reg .b32 %r<2>;
\tld.param.u32 %r1, [f_param_0];
\tsetp.lt.u32 %p1, %r1, 5;
\t@%p1 ret;
$L__BB0_2:
\tst.param.b32 [func_retval0+0], %r1;
}
.visible .entry k()
{
\t.reg .b32 %r<3>;
\tmov.u32 %r1, %tid.x;
\tcall.uni (%r2), f, (%r1);
\tret;
}
";
    let text = spu_asm::assemble_module("k.ptx", src)
        .unwrap_err()
        .render("k.ptx", src);
    assert!(
        text.contains("error: device function `f` can run past its end")
            && text.contains("k.ptx:13:1"),
        "{text}"
    );
}
