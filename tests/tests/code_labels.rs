//! Names of code addresses: a label after the last instruction of a kernel or
//! function (clang's `Ltmp4:` and `Lfunc_end1:` before the closing brace) sits
//! where the next device function starts, and the function's own name is the one
//! messages and listings use for it.

/// clang's PTX of a recursive device function called by the kernel (the
/// assembler places device functions' code after the kernel's).
const KERNEL: &str = r#".version 7.0
.target sm_35
.address_size 64

.visible .func  (.param .b32 func_retval0) _Z4deepi(
    .param .b32 _Z4deepi_param_0
)
{
    .reg .pred     %p<2>;
    .reg .b32     %r<8>;
    ld.param.u32     %r4, [_Z4deepi_param_0];
    setp.lt.s32     %p1, %r4, 1;
    mov.u32     %r7, 0;
    @%p1 bra     LBB0_2;
    add.s32     %r5, %r4, -1;
    {
    .param .b32 param0;
    st.param.b32     [param0+0], %r5;
    .param .b32 retval0;
    call.uni (retval0), _Z4deepi, (param0);
    ld.param.b32     %r6, [retval0+0];
    }
    mad.lo.s32     %r7, %r6, 3, %r4;
LBB0_2:
    st.param.b32     [func_retval0+0], %r7;
    ret;
Ltmp1:
}

.visible .entry rc(
    .param .u32 rc_param_0,
    .param .u64 rc_param_1
)
{
    .reg .b32     %r<6>;
    .reg .b64     %rd<5>;
    ld.param.u32     %r1, [rc_param_0];
    ld.param.u64     %rd1, [rc_param_1];
    cvta.to.global.u64     %rd2, %rd1;
    mov.u32     %r2, %tid.x;
    {
    .param .b32 param0;
    st.param.b32     [param0+0], %r1;
    .param .b32 retval0;
    call.uni (retval0), _Z4deepi, (param0);
    ld.param.b32     %r5, [retval0+0];
    }
    mul.wide.u32     %rd3, %r2, 4;
    add.s64     %rd4, %rd2, %rd3;
    st.global.u32     [%rd4], %r5;
    ret;
Ltmp4:
Lfunc_end1:

}
"#;

#[test]
fn a_label_after_the_last_instruction_does_not_name_the_next_function() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.ptx"), KERNEL).unwrap();
    let launch = dir.path().join("k.spu");
    std::fs::write(
        &launch,
        "#include \"k.ptx\"\n.param .s32 N = 100;\n.global .s32 O[32] = zeros;\n.launch grid(1) block(32);\n.bind rc(N, O);\n",
    )
    .unwrap();
    // The recursion too deep for the frames names the function.
    let o = std::process::Command::new(spu_tests::binary("spu-emu"))
        .arg(&launch)
        .arg("-q")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("the function called: `_Z4deepi`"), "{e}");
    // The listing calls it by name.
    let bin = dir.path().join("k.bin");
    let o = std::process::Command::new(spu_tests::binary("spu-asm"))
        .arg(&launch)
        .arg("-o")
        .arg(&bin)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = std::process::Command::new(spu_tests::binary("spu-asm"))
        .args(["-d", "--no-loc"])
        .arg(&bin)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&o.stdout);
    let calls: Vec<&str> = listing.lines().filter(|l| l.contains("call")).collect();
    assert!(!calls.is_empty(), "{listing}");
    assert!(calls.iter().all(|l| l.contains("_Z4deepi")), "{calls:?}");
    assert!(!listing.contains("Ltmp4"), "{listing}");
}
