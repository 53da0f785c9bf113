//! Instructions the assembler lowers into several read the machine state of the
//! one they stand for: a guard that the instruction writes is read once, before
//! the write; the halves of a 64-bit `mov` are read before they are written,
//! also when they overlap (a swap); a generic pointer the assembler sends to
//! local memory holds a local address on every path to its use.

use spu_tests::{every_mode, run_in_mode};

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Lane 0 stores what its code computes into `O[0..4]`.
fn lane0(body: &str, regs: &str) -> String {
    format!(
        ".global .u32 O[4] = zeros;\n.launch grid(1) block(32);\n.entry k {{\n\
         .reg .u32 %tid, %addr, %v;\n{regs}\n.reg .pred %skip;\n\
         mov.u32 %tid, %tid.x;\nsetp.ne.u32 %skip, %tid, 0;\n@%skip bra DONE;\n\
         mov.u32 %addr, O;\n{body}\nDONE:\n    exit;\n}}\n"
    )
}

#[test]
fn a_setp_guarded_by_its_own_destination_reads_the_guard_once() {
    let dir = tempfile::tempdir().unwrap();
    let body = "mov.u32 %a, 5;\nmov.u32 %b, 3;\n\
        setp.eq.u32 %p1, %a, %a;\nsetp.ne.u32 %p2, %a, %a;\n\
        @%p1 setp.lt.u32 %p1|%p2, %a, %b;\n\
        setp.eq.u32 %p3, %a, %a;\nsetp.ne.u32 %p4, %a, %a;\n\
        @%p3 setp.lt.and.u32 %p3|%p4, %a, %b, %p3;\n\
        selp.u32 %v, 1, 0, %p1;\nst.global.u32 [%addr], %v;\n\
        selp.u32 %v, 1, 0, %p2;\nst.global.u32 [%addr+4], %v;\n\
        selp.u32 %v, 1, 0, %p3;\nst.global.u32 [%addr+8], %v;\n\
        selp.u32 %v, 1, 0, %p4;\nst.global.u32 [%addr+12], %v;";
    let path = write(
        dir.path(),
        "k.spu",
        &lane0(body, ".reg .u32 %a, %b;\n.reg .pred %p1, %p2, %p3, %p4;"),
    );
    // 5 < 3 is false: p = false, q = true (with `.and`, each combined with p's old true).
    for (mode, machine, functional) in every_mode() {
        let ran = run_in_mode(&path, &machine, &[], &[], functional);
        assert_eq!(ran.out_u32("O"), [0, 1, 0, 1], "{mode}");
    }
}

#[test]
fn overlapping_halves_of_a_64_bit_mov_are_read_before_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let body = "mov.b32 %x.lo, 0x11111111;\nmov.b32 %x.hi, 0x22222222;\n\
        mov.b64 {%x.hi, %x.lo}, %x;\n\
        mov.b32 %y.lo, 0x33333333;\nmov.b32 %y.hi, 0x44444444;\n\
        mov.b64 %y, {%y.hi, %y.lo};\n\
        mov.b32 %z.lo, 0x55555555;\nmov.b32 %z.hi, 0x66666666;\n\
        mov.b64 {%z.hi, %w}, %z;\n\
        st.global.u32 [%addr], %x.lo;\nst.global.u32 [%addr+4], %x.hi;\n\
        st.global.u32 [%addr+8], %y.lo;\nst.global.u32 [%addr+12], %z.hi;";
    let path = write(
        dir.path(),
        "k.spu",
        &lane0(body, ".reg .b64 %x, %y, %z;\n.reg .u32 %w;"),
    );
    // x and y swap their halves; z's low half lands in its high half before
    // the high half is read into %w (which is not stored: z.hi is).
    for (mode, machine, functional) in every_mode() {
        let ran = run_in_mode(&path, &machine, &[], &[], functional);
        assert_eq!(
            ran.out_u32("O"),
            [0x2222_2222, 0x1111_1111, 0x4444_4444, 0x5555_5555],
            "{mode}"
        );
    }
}

/// What clang writes for `int *p = odd ? &sh[t] : &loc[1]; *p = x;` with the
/// two arms in branches: `%rd5` is a shared address on one path and a local
/// one on the other, the local arm last in the text.
const JOINED: &str = r#".version 7.0
.target sm_35
.address_size 64

.visible .entry gs(
    .param .u64 gs_param_0
)
{
    .local .align 4 .b8 __local_depot0[16];
    .shared .align 4 .b8 sh[128];
    .reg .b64 %SPL;
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;

    mov.u64 %SPL, __local_depot0;
    ld.param.u64 %rd1, [gs_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    st.local.u32 [%SPL], 7;
    st.local.u32 [%SPL+4], 7;
    mul.wide.u32 %rd3, %r1, 4;
    mov.u64 %rd6, sh;
    add.s64 %rd7, %rd6, %rd3;
    st.shared.u32 [%rd7], 5;
    bar.sync 0;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 1;
    @!%p1 bra $L_LOC;
    cvta.shared.u64 %rd5, %rd7;         // odd lanes: generic address of sh[tid]
    bra.uni $L_JOIN;
$L_LOC:
    add.u64 %rd5, %SPL, 4;              // even lanes: address of the local word 1
$L_JOIN:
    add.u32 %r3, %r1, 1000;
    st.u32 [%rd5], %r3;                 // generic store
    bar.sync 0;
    ld.shared.u32 %r4, [%rd7];
    ld.local.u32 %r5, [%SPL+4];
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r4;          // O[tid]      = sh[tid]
    st.global.u32 [%rd4+128], %r5;      // O[32 + tid] = local word 1
    ret;
}
"#;

#[test]
fn a_generic_pointer_that_is_local_on_one_path_only_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gs.ptx", JOINED);
    let launch = write(
        dir.path(),
        "gs.spu",
        "#include \"gs.ptx\"\n.global .u32 O[64] = zeros;\n.launch grid(1) block(32);\n.bind gs(O);\n",
    );
    let o = std::process::Command::new(spu_tests::binary("spu-asm"))
        .arg(&launch)
        .arg("--check")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("`st` needs a state space here"), "{e}");
    assert!(e.contains("gs.ptx:36:"), "{e}");
    // Local on both paths, the store goes to local memory.
    let both = JOINED.replace("cvta.shared.u64 %rd5, %rd7;", "add.u64 %rd5, %SPL, 0;");
    write(dir.path(), "gs.ptx", &both);
    for (mode, machine, functional) in every_mode() {
        let ran = run_in_mode(&launch, &machine, &[], &[], functional);
        let out = ran.out_u32("O");
        // Shared memory keeps its 5s; local word 1 is 1000 + t for even t only.
        assert!(out[..32].iter().all(|&v| v == 5), "{mode}: {out:?}");
        let local: Vec<u32> = (0..32)
            .map(|t| if t % 2 == 0 { 1000 + t } else { 7 })
            .collect();
        assert_eq!(out[32..], local[..], "{mode}");
    }
}

/// Which registers hold a local address is found in time proportional to the
/// code: a chain of 65 000 copies, each dropped only once the one after it is,
/// took a pass per copy (195 s); it now takes well under a second.
#[test]
fn a_long_chain_of_copies_is_followed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let n = 65_000;
    let mut ptx = format!(
        ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry k()\n{{\n\
         .local .align 4 .b8 d[16];\n.reg .b64 %rd<{}>;\n.reg .b32 %r<2>;\n",
        n + 2
    );
    for i in 1..n {
        ptx.push_str(&format!("mov.u64 %rd{i}, %rd{};\n", i + 1));
    }
    ptx.push_str(&format!(
        "mov.u64 %rd{n}, 5;\nld.u32 %r1, [%rd1];\nret;\n}}\n"
    ));
    write(dir.path(), "k.ptx", &ptx);
    let launch = write(
        dir.path(),
        "k.spu",
        "#include \"k.ptx\"\n.launch grid(1) block(1);\n",
    );
    let child = std::process::Command::new(spu_tests::binary("spu-asm"))
        .arg(&launch)
        .arg("--check")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (code, err) = spu_io::testing::wait_at_most(child, std::time::Duration::from_secs(120));
    // `%rd1` is no local address (its chain ends in a number): the generic load
    // through it is refused.
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("`ld` needs a state space here"), "{err}");
}
