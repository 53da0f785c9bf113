//! PTX device functions end to end: `samples/cuda/calls_nvcc.spu` and
//! `calls_clang.spu` (a helper called from a divergent branch, a recursive
//! factorial as deep as `i % 10` per lane) against a reference computed here, on the
//! SPU, on `gtx480` and in functional mode.

use spu_emu::Machine;
use spu_tests::repo_path;

/// The buffers X, Y and F after a run of `file` on `machine`.
fn run(file: &str, machine: &Machine, functional: bool) -> (Vec<f32>, Vec<f32>, Vec<u32>) {
    let path = repo_path(file);
    let kernel = spu_emu::read_kernel(&path).unwrap_or_else(|e| match e {
        spu_emu::load::kernel::KernelError::Assembly { rendered, .. } => panic!("{rendered}"),
        other => panic!("{other}"),
    });
    let before = spu_emu::load(kernel.module.clone(), machine, &Default::default()).unwrap();
    let mut after = before.clone();
    let control = spu_emu::RunControl {
        functional,
        ..Default::default()
    };
    let result =
        spu_emu::simulate(&mut after, machine, control, &mut |_| {}).unwrap_or_else(|stop| {
            panic!(
                "{}",
                spu_emu::observe::stopped::render_stop(&stop, &kernel, &after)
            )
        });
    let ran = spu_tests::Ran {
        before,
        after,
        result,
    };
    (ran.in_f32("X"), ran.out_f32("Y"), ran.out_u32("F"))
}

#[test]
fn device_function_samples_match_a_reference_everywhere() {
    let gtx480 = spu_emu::machine::preset("gtx480").unwrap();
    for file in [
        "samples/cuda/calls_nvcc.spu",
        "samples/cuda/calls_clang.spu",
    ] {
        for (name, machine, functional) in [
            ("spu", Machine::default(), false),
            ("gtx480", gtx480.clone(), false),
            ("functional", Machine::default(), true),
        ] {
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
