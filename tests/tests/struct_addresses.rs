//! A struct parameter read through its address in hand-written PTX: the
//! assembler follows the address in straight-line code (a copy, plus or minus a
//! constant) and reads the field every thread's path names; a flow it cannot
//! follow in the order of the text (a guarded write, a loop's step, a join of
//! two paths, a read before the write, a register written again) is refused at
//! its line, never read from other bytes; registers are each function's own.

use spu_tests::{binary, every_mode, run_in_mode};
use std::path::{Path, PathBuf};

/// Two 16-byte structs (fields 1..4 and 5..8) and an output buffer; `body`
/// leaves in `%r2` the value each thread stores; `funcs` follow the entry.
fn kernel(dir: &Path, name: &str, body: &str, funcs: &str) -> PathBuf {
    let ptx = format!(
        ".version 7.0\n.target sm_52\n.address_size 64\n\
         .visible .func (.param .b32 func_retval0) twice(.param .b64 twice_param_0, .param .b32 twice_param_1);\n\
         .visible .entry k(.param .align 4 .b8 k_param_0[16], .param .align 4 .b8 k_param_1[16], .param .u64 k_param_2)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<12>;\n.reg .b64 %rd<16>;\n\
         mov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 16;\n{body}\n\
         ld.param.u64 %rd10, [k_param_2];\ncvta.to.global.u64 %rd11, %rd10;\n\
         mul.wide.u32 %rd12, %r1, 4;\nadd.s64 %rd13, %rd11, %rd12;\n\
         st.global.u32 [%rd13], %r2;\nret;\n}}\n{funcs}"
    );
    std::fs::write(dir.join(format!("{name}.ptx")), ptx).unwrap();
    let launch = dir.join(format!("{name}.spu"));
    std::fs::write(
        &launch,
        format!(
            "#include \"{name}.ptx\"\n.global .u32 O[32] = zeros;\n.launch grid(1) block(32);\n\
             .bind k({{.u32 A0 = 1, .u32 A1 = 2, .u32 A2 = 3, .u32 A3 = 4}}, \
             {{.u32 B0 = 5, .u32 B1 = 6, .u32 B2 = 7, .u32 B3 = 8}}, O);\n"
        ),
    )
    .unwrap();
    launch
}

#[test]
fn struct_addresses_are_followed_in_straight_line_code_only() {
    let dir = tempfile::tempdir().unwrap();
    // Followed: each thread stores the field its path reads.
    let callee = ".visible .func (.param .b32 func_retval0) twice(.param .b64 twice_param_0, .param .b32 twice_param_1)\n{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd5, [twice_param_0];\nld.param.u32 %r1, [twice_param_1];\n\
         add.s32 %r2, %r1, %r1;\nst.param.b32 [func_retval0+0], %r2;\nret;\n}\n";
    let call = "mov.b64 %rd5, k_param_1;\nld.param.u32 %r3, [%rd5+4];\n\
         {\n.param .b64 param0;\nst.param.b64 [param0+0], %rd1;\n.param .b32 param1;\n\
         st.param.b32 [param1+0], %r3;\n.param .b32 retval0;\n\
         call.uni (retval0), twice, (param0, param1);\nld.param.b32 %r2, [retval0+0];\n}";
    for (name, body, funcs, want) in [
        (
            "minus",
            "mov.b64 %rd1, k_param_1;\nadd.s64 %rd3, %rd1, 8;\nld.param.u32 %r2, [%rd3-4];",
            "",
            [6, 6],
        ),
        (
            "paths",
            "mov.b64 %rd1, k_param_0;\nmov.u64 %rd2, %rd1;\nld.param.u32 %r4, [%rd2+12];\n\
             ld.param.u32 %r5, [%rd1];\nselp.b32 %r2, %r4, %r5, %p1;",
            "",
            [1, 4],
        ),
        // The callee's %rd5 is its own, not the entry's struct address.
        ("callee", call, callee, [12, 12]),
    ] {
        let launch = kernel(dir.path(), name, body, funcs);
        for (mode, machine, functional) in every_mode() {
            let out = run_in_mode(&launch, &machine, &[], &[], functional).out_u32("O");
            for (t, v) in out.iter().enumerate() {
                assert_eq!(*v, want[usize::from(t >= 16)], "{name} {mode}: O[{t}]");
            }
        }
    }
    // Refused at the line that makes the flow unfollowable.
    let step = "mov.b64 %rd3, k_param_0;\nmov.u32 %r3, 0;\nmov.u32 %r2, 0;\nLOOP:\n\
         ld.param.u32 %r4, [%rd3];\nadd.s32 %r2, %r2, %r4;\nadd.s64 %rd3, %rd3, 4;\n\
         add.s32 %r3, %r3, 1;\nsetp.lt.u32 %p2, %r3, 4;\n@%p2 bra LOOP;";
    let join = "@%p1 bra A;\nmov.b64 %rd3, k_param_1;\nbra J;\nA:\nmov.b64 %rd3, k_param_0;\nJ:\n\
         ld.param.u32 %r2, [%rd3+4];";
    let before = "bra SET;\nUSE:\nld.param.u32 %r2, [%rd3+8];\nbra OUT;\nSET:\n\
         mov.b64 %rd3, k_param_1;\nbra USE;\nOUT:";
    let again = "mov.b64 %rd3, k_param_0;\nld.param.u32 %r2, [%rd3];\n\
         ld.param.u64 %rd3, [k_param_2];\nld.param.u32 %r2, [%rd3];";
    for (name, body, line, says) in [
        (
            "guard",
            "@%p1 mov.b64 %rd3, k_param_1;\nld.param.u32 %r2, [%rd3];",
            "@%p1 mov.b64",
            "written under a guard",
        ),
        ("step", step, "add.s64 %rd3, %rd3, 4", "written before"),
        ("join", join, "mov.b64 %rd3, k_param_0", "written before"),
        (
            "before",
            before,
            "mov.b64 %rd3, k_param_1",
            "read before this line",
        ),
        ("again", again, "ld.param.u64 %rd3", "written again here"),
        (
            "far",
            "mov.b64 %rd1, k_param_1;\nadd.s64 %rd3, %rd1, 9223372036854775807;\nld.param.u32 %r2, [%rd3];",
            "ld.param.u32 %r2, [%rd3]",
            "this read is outside `k_param_1`",
        ),
    ] {
        let launch = kernel(dir.path(), name, body, "");
        let o = std::process::Command::new(binary("spu-asm"))
            .arg(&launch)
            .arg("--check")
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name}: {e}");
        assert!(e.contains(says), "{name}: {e}");
        assert!(e.contains(line), "{name} points at `{line}`: {e}");
    }
}
