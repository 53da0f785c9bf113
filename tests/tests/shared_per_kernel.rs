//! A file of several kernels declares its shared arrays at module scope, as
//! clang does for `__shared__` at file scope and `extern __shared__` arrays:
//! each kernel holds the arrays it names, and sizes the `.extern .shared` array
//! it names; only a kernel that names two dynamic arrays is refused.

use spu_tests::{every_mode, run_in_mode};

/// Kernel `k` copies thread t's value `t + 1` (times `scale`) through shared
/// array `arr` (`elems` .f32) into `OUT[t ^ 1]`.
fn kernel(k: &str, arr: &str, scale: u32) -> String {
    format!(
        ".visible .entry {k}(.param .u64 {k}_param_0)\n{{\n\
         .reg .b32 %r<8>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<12>;\n\
         ld.param.u64 %rd1, [{k}_param_0];\ncvta.to.global.u64 %rd2, %rd1;\n\
         mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;\nmul.lo.s32 %r2, %r2, {scale};\n\
         cvt.rn.f32.s32 %f1, %r2;\nmov.u64 %rd3, {arr};\nmul.wide.u32 %rd4, %r1, 4;\n\
         add.s64 %rd5, %rd3, %rd4;\nst.shared.f32 [%rd5], %f1;\nbar.sync 0;\n\
         xor.b32 %r3, %r1, 1;\nmul.wide.u32 %rd6, %r3, 4;\nadd.s64 %rd7, %rd3, %rd6;\n\
         ld.shared.f32 %f2, [%rd7];\nadd.s64 %rd8, %rd2, %rd4;\nst.global.f32 [%rd8], %f2;\nret;\n}}\n"
    )
}

#[test]
fn each_kernel_holds_the_shared_arrays_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let ptx = format!(
        ".version 7.0\n.target sm_52\n.address_size 64\n\
         .shared .align 4 .b8 big_a[40000];\n.shared .align 4 .b8 big_b[40000];\n\
         .extern .shared .align 4 .b8 dyn_a[];\n.extern .shared .align 4 .b8 dyn_b[];\n\
         {}{}{}{}",
        kernel("ka", "big_a", 1),
        kernel("kb", "big_b", 2),
        kernel("da", "dyn_a", 3),
        kernel("db", "dyn_b", 4),
    );
    std::fs::write(dir.path().join("k.ptx"), ptx).unwrap();
    for (k, scale, shared) in [
        ("ka", 1, ""),
        ("kb", 2, ""),
        ("da", 3, " shared(128)"),
        ("db", 4, " shared(128)"),
    ] {
        let launch = dir.path().join(format!("{k}.spu"));
        std::fs::write(
            &launch,
            format!(
                "#include \"k.ptx\"\n.global .f32 O[32] = zeros;\n\
                 .launch grid(1) block(32){shared};\n.bind {k}(O);\n"
            ),
        )
        .unwrap();
        let want: Vec<f32> = (0..32u32)
            .map(|t| ((t ^ 1) + 1) as f32 * scale as f32)
            .collect();
        for (mode, machine, functional) in every_mode() {
            let ran = run_in_mode(&launch, &machine, &[], &[], functional);
            assert_eq!(ran.out_f32("O"), want, "{k} {mode}");
        }
    }
    // A kernel naming both dynamic arrays is refused at the second.
    let ptx = ".version 7.0\n.target sm_52\n.address_size 64\n\
         .extern .shared .align 4 .b8 dyn_a[];\n.extern .shared .align 4 .b8 dyn_b[];\n\
         .visible .entry both()\n{\n.reg .b64 %rd<4>;\n\
         mov.u64 %rd1, dyn_a;\nmov.u64 %rd2, dyn_b;\nret;\n}\n";
    std::fs::write(dir.path().join("both.ptx"), ptx).unwrap();
    std::fs::write(
        dir.path().join("both.spu"),
        "#include \"both.ptx\"\n.launch grid(1) block(32) shared(128);\n.bind both();\n",
    )
    .unwrap();
    let o = std::process::Command::new(spu_tests::binary("spu-asm"))
        .arg(dir.path().join("both.spu"))
        .arg("--check")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("the kernel names a second `.extern .shared` array"),
        "{e}"
    );
    assert!(e.contains("dyn_b"), "{e}");
}
