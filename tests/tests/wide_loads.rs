//! Loads into registers wider than the access, as clang writes them: PTX's rule is
//! that the value extends to the register's width by the instruction's type (sign
//! for `.s8 .s16 .s32`, zero for the unsigned and bit types), in every state space
//! the SPU has (entry parameters, global, shared, local). Each kernel runs through
//! `spu-emu --dump` in timing and functional mode.

use spu_tests::binary;
use std::path::Path;
use std::process::Command;

/// The 64-bit elements of the `.npy` file `spu-emu --dump` wrote.
fn dumped_u64(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap();
    let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    bytes[10 + header..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// `OUT` after running `launch` in `dir`, in timing mode and in functional mode.
fn run_both(dir: &Path, launch: &str) -> Vec<(&'static str, Vec<u64>)> {
    [("timing", None), ("functional", Some("--functional"))]
        .into_iter()
        .map(|(name, mode)| {
            let o = Command::new(binary("spu-emu"))
                .args([launch, "-q", "--dump", "OUT=out.npy"])
                .args(mode)
                .current_dir(dir)
                .env_remove("SPU_CLANG")
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            (name, dumped_u64(&dir.join("out.npy")))
        })
        .collect()
}

/// `v`'s low `bits` extended by signedness to 64 bits, then cut to a register of
/// `reg` bits.
fn extended(v: u64, bits: u32, signed: bool, reg: u32) -> u64 {
    let mask = (1u64 << bits) - 1;
    let negative = signed && (v >> (bits - 1)) & 1 == 1;
    (if negative { v | !mask } else { v & mask }) & (u64::MAX >> (64 - reg))
}

/// Loads of 8 to 32 bits into 16-, 32- and 64-bit registers from entry parameters
/// given a kernel parameter (`N`) or a constant, and from global, shared and local
/// memory. Each result is stored at its own 8 bytes of `OUT`, with the width of its
/// register.
const EXTEND: &str = "\
.version 7.5
.target sm_52
.address_size 64

.visible .entry ext(
	.param .u64 ext_param_0,
	.param .u64 ext_param_1,
	.param .u32 ext_param_2,
	.param .u32 ext_param_3,
	.param .u16 ext_param_4,
	.param .u8 ext_param_5
)
{
	.reg .b16 	%rs<4>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<32>;
	.shared .align 4 .b8 SH[4];
	.local .align 4 .b8 LO[4];
	ld.param.u64 	%rd1, [ext_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.param.u64 	%rd3, [ext_param_1];
	cvta.to.global.u64 	%rd4, %rd3;
	ld.global.u32 	%r1, [%rd4];
	st.shared.u32 	[SH], %r1;
	st.local.u32 	[LO], %r1;
	ld.param.s32 	%rd5, [ext_param_2];
	st.global.u64 	[%rd2], %rd5;
	ld.param.u32 	%rd5, [ext_param_2];
	st.global.u64 	[%rd2+8], %rd5;
	ld.param.s32 	%rd5, [ext_param_3];
	st.global.u64 	[%rd2+16], %rd5;
	ld.param.b32 	%rd5, [ext_param_3];
	st.global.u64 	[%rd2+24], %rd5;
	ld.param.s16 	%rd5, [ext_param_4];
	st.global.u64 	[%rd2+32], %rd5;
	ld.param.u16 	%rd5, [ext_param_4];
	st.global.u64 	[%rd2+40], %rd5;
	ld.param.s16 	%r2, [ext_param_4];
	st.global.u32 	[%rd2+48], %r2;
	ld.param.s8 	%rd5, [ext_param_5];
	st.global.u64 	[%rd2+56], %rd5;
	ld.param.u8 	%r2, [ext_param_5];
	st.global.u32 	[%rd2+64], %r2;
	ld.param.s8 	%rs1, [ext_param_5];
	st.global.u16 	[%rd2+72], %rs1;
	ld.global.s32 	%rd5, [%rd4];
	st.global.u64 	[%rd2+80], %rd5;
	ld.global.u32 	%rd5, [%rd4];
	st.global.u64 	[%rd2+88], %rd5;
	ld.global.s16 	%rd5, [%rd4+2];
	st.global.u64 	[%rd2+96], %rd5;
	ld.global.s8 	%r2, [%rd4];
	st.global.u32 	[%rd2+104], %r2;
	ld.global.s8 	%rs1, [%rd4];
	st.global.u16 	[%rd2+112], %rs1;
	ld.shared.s32 	%rd5, [SH];
	st.global.u64 	[%rd2+120], %rd5;
	ld.shared.b32 	%rd5, [SH];
	st.global.u64 	[%rd2+128], %rd5;
	ld.shared.s8 	%rd5, [SH+1];
	st.global.u64 	[%rd2+136], %rd5;
	ld.shared.u16 	%r2, [SH+2];
	st.global.u32 	[%rd2+144], %r2;
	ld.local.s32 	%rd5, [LO];
	st.global.u64 	[%rd2+152], %rd5;
	ld.local.u16 	%rd5, [LO+2];
	st.global.u64 	[%rd2+160], %rd5;
	ld.local.s16 	%r2, [LO];
	st.global.u32 	[%rd2+168], %r2;
	ld.local.s8 	%rs1, [LO+3];
	st.global.u16 	[%rd2+176], %rs1;
	ret;
}
";

#[test]
fn loads_into_wider_registers_extend_by_type_in_every_space() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ext.ptx"), EXTEND).unwrap();
    std::fs::write(
        dir.path().join("ext.spu"),
        "#include \"ext.ptx\"\n.param .s32 N = -5;\n.global .u32 IN[1] = { 0x80018090 };\n.global .u64 OUT[23] = zeros;\n.launch grid(1) block(1);\n.bind ext(OUT, IN, N, 0x80000001, 0x8001, 0x90);\n",
    )
    .unwrap();
    // (the value read, the load's width and signedness, the register's width).
    let (n, k, h, b, w) = (-5i32 as u32 as u64, 0x8000_0001, 0x8001, 0x90, 0x8001_8090);
    let loads: [(u64, u32, bool, u32); 23] = [
        // ld.param of a kernel parameter, then of constants.
        (n, 32, true, 64),
        (n, 32, false, 64),
        (k, 32, true, 64),
        (k, 32, false, 64),
        (h, 16, true, 64),
        (h, 16, false, 64),
        (h, 16, true, 32),
        (b, 8, true, 64),
        (b, 8, false, 32),
        (b, 8, true, 16),
        // ld.global
        (w, 32, true, 64),
        (w, 32, false, 64),
        (w >> 16, 16, true, 64),
        (w, 8, true, 32),
        (w, 8, true, 16),
        // ld.shared
        (w, 32, true, 64),
        (w, 32, false, 64),
        (w >> 8, 8, true, 64),
        (w >> 16, 16, false, 32),
        // ld.local
        (w, 32, true, 64),
        (w >> 16, 16, false, 64),
        (w, 16, true, 32),
        (w >> 24, 8, true, 16),
    ];
    let want: Vec<u64> = loads
        .iter()
        .map(|&(v, bits, signed, reg)| extended(v, bits, signed, reg))
        .collect();
    for (mode, out) in run_both(dir.path(), "ext.spu") {
        assert_eq!(out, want, "{mode}");
    }
}

/// clang loads a signed `int` parameter used as an offset with `ld.param.s32` into
/// a 64-bit register; narrower parameters go through 16-bit registers or as
/// `ld.param.s16`/`.u16` into 64-bit ones. Negative offsets reach before `b`.
#[test]
fn clangs_int_parameters_used_as_offsets_extend_by_their_type() {
    if spu_tests::clang::skip("int parameters as offsets") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cu"),
        "extern \"C\" __global__ void k(char *g, int n, unsigned u, short s, unsigned short us, signed char c, unsigned char uc) {\n  char *b = g + 32;\n  b[n] = 1; b[u] = 2; b[s] = 3; b[us] = 4; b[c] = 5; b[uc] = 6;\n  long long *q = (long long *)(g + 400);\n  q[0] = n; q[1] = u; q[2] = s; q[3] = us; q[4] = c; q[5] = uc;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("k.spu"),
        "#include \"k.cu\"\n.param .s32 N = -5;\n.global .u64 OUT[56] = zeros;\n.launch grid(1) block(1);\n.bind k(OUT, N, 7, 0xfffd, 3, 0xfe, 0x80);\n",
    )
    .unwrap();
    // Without a launch file the parameters are the kernel's own.
    let o = Command::new(binary("spu-asm"))
        .args(["--check", "k.cu"])
        .current_dir(dir.path())
        .env_remove("SPU_CLANG")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut bytes = [0u8; 448];
    for (offset, v) in [(-5, 1), (7, 2), (-3, 3), (3, 4), (-2, 5), (128, 6)] {
        bytes[(32 + offset) as usize] = v;
    }
    for (k, v) in [-5i64, 7, -3, 3, -2, 128].into_iter().enumerate() {
        bytes[400 + 8 * k..408 + 8 * k].copy_from_slice(&v.to_le_bytes());
    }
    let want: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for (mode, out) in run_both(dir.path(), "k.spu") {
        assert_eq!(out, want, "{mode}");
    }
}
