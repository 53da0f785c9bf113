//! A 64-bit address is its register plus the instruction's offset, summed in
//! 64 bits as PTX does: a register below zero (an array at address 0 minus an
//! index, as clang writes `s[31 - t]`) plus an offset that brings it back into
//! the space is a valid address; only the sum must fit in 32 bits. An offset
//! past the instruction's 16 bits (`x[i + 16384]`) is added to the register
//! by instructions the assembler inserts.

use spu_tests::{every_mode, run_in_mode};

fn kernel(dir: &std::path::Path, name: &str, offset: i32) -> std::path::PathBuf {
    let ptx = format!(
        ".version 7.0\n.target sm_52\n.address_size 64\n\
         .visible .entry rev(.param .u64 rev_param_0)\n{{\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<12>;\n.shared .align 4 .b8 s[128];\n\
         ld.param.u64 %rd1, [rev_param_0];\ncvta.to.global.u64 %rd2, %rd1;\n\
         mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\n\
         ld.global.u32 %r2, [%rd4];\nmov.u64 %rd5, s;\nadd.s64 %rd6, %rd5, %rd3;\n\
         st.shared.u32 [%rd6], %r2;\nbar.sync 0;\n\
         sub.s64 %rd7, %rd5, %rd3;\nld.shared.u32 %r3, [%rd7+{offset}];\n\
         st.global.u32 [%rd4], %r3;\nret;\n}}\n"
    );
    std::fs::write(dir.join(format!("{name}.ptx")), ptx).unwrap();
    let launch = dir.join(format!("{name}.spu"));
    std::fs::write(
        &launch,
        format!(
            "#include \"{name}.ptx\"\n.global .u32 D[32] = ramp(0, 1);\n\
             .launch grid(1) block(32);\n.bind rev(D);\n"
        ),
    )
    .unwrap();
    launch
}

#[test]
fn a_negative_base_plus_an_offset_is_an_address_in_the_space() {
    let dir = tempfile::tempdir().unwrap();
    let launch = kernel(dir.path(), "rev", 124);
    let want: Vec<u32> = (0..32).rev().collect();
    for (mode, machine, functional) in every_mode() {
        let ran = run_in_mode(&launch, &machine, &[], &[], functional);
        assert_eq!(ran.out_u32("D"), want, "{mode}");
    }
    // A sum still below zero is no address: the run stops, naming the sum.
    let launch = kernel(dir.path(), "below", 0);
    let o = std::process::Command::new(spu_tests::binary("spu-emu"))
        .arg(&launch)
        .arg("-q")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("the 64-bit address (register plus offset) is 0xffffffff_fffffffc, above 4 GiB"),
        "{e}"
    );
}

#[test]
fn offsets_past_sixteen_bits_are_added_to_the_register_first() {
    let dir = tempfile::tempdir().unwrap();
    let ptx = ".version 7.0\n.target sm_52\n.address_size 64\n\
         .visible .entry far(.param .u64 far_param_0)\n{\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<12>;\n\
         ld.param.u64 %rd1, [far_param_0];\ncvta.to.global.u64 %rd2, %rd1;\n\
         mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\n\
         ld.global.u32 %r2, [%rd4+65536];\nadd.s64 %rd5, %rd4, 131072;\n\
         st.global.u32 [%rd5+-131072], %r2;\n\
         cvt.u32.u64 %r3, %rd4;\nst.global.u32 [%r3+40000], %r1;\nret;\n}\n";
    std::fs::write(dir.path().join("far.ptx"), ptx).unwrap();
    let launch = dir.path().join("far.spu");
    std::fs::write(
        &launch,
        "#include \"far.ptx\"\n.global .u32 X[16416] = ramp(0, 1);\n\
         .launch grid(1) block(32);\n.bind far(X);\n",
    )
    .unwrap();
    for (mode, machine, functional) in every_mode() {
        let x = run_in_mode(&launch, &machine, &[], &[], functional).out_u32("X");
        for (i, v) in x.iter().enumerate() {
            let want = match i {
                0..32 => i as u32 + 16384,
                10000..10032 => i as u32 - 10000,
                _ => i as u32,
            };
            assert_eq!(*v, want, "{mode}: X[{i}]");
        }
    }
}
