//! A store of an immediate value (`st.global.u8 [%rd0], 7;`) at every width, in
//! both modes: the value goes through a register of the store's type and memory
//! holds exactly its bytes afterwards.

use spu_isa::Ty;
use std::process::Command;

/// The store type, the two immediates stored, and the bytes each leaves in memory.
type Case = (&'static str, Ty, [&'static str; 2], [&'static [u8]; 2]);

const CASES: &[Case] = &[
    ("u8", Ty::U8, ["200", "0"], [&[200], &[0]]),
    ("s8", Ty::S8, ["-9", "127"], [&[0xf7], &[0x7f]]),
    ("b8", Ty::B8, ["0xab", "1"], [&[0xab], &[1]]),
    ("u16", Ty::U16, ["60000", "1"], [&[0x60, 0xea], &[1, 0]]),
    (
        "s16",
        Ty::S16,
        ["-300", "-1"],
        [&[0xd4, 0xfe], &[0xff, 0xff]],
    ),
    ("b16", Ty::B16, ["0xbeef", "0"], [&[0xef, 0xbe], &[0, 0]]),
    (
        "u32",
        Ty::U32,
        ["0xdeadbeef", "0"],
        [&[0xef, 0xbe, 0xad, 0xde], &[0; 4]],
    ),
    (
        "s32",
        Ty::S32,
        ["-5", "7"],
        [&[0xfb, 0xff, 0xff, 0xff], &[7, 0, 0, 0]],
    ),
    (
        "b32",
        Ty::B32,
        ["0x01020304", "0"],
        [&[4, 3, 2, 1], &[0; 4]],
    ),
    (
        "u64",
        Ty::U64,
        ["0x100000002", "0"],
        [&[2, 0, 0, 0, 1, 0, 0, 0], &[0; 8]],
    ),
    (
        "s64",
        Ty::S64,
        ["-2", "3"],
        [
            &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[3, 0, 0, 0, 0, 0, 0, 0],
        ],
    ),
    (
        "b64",
        Ty::B64,
        ["0x123456789abcdef0", "0"],
        [&[0xf0, 0xde, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12], &[0; 8]],
    ),
    (
        "f32",
        Ty::F32,
        ["1.5", "0f40490fdb"],
        [&[0, 0, 0xc0, 0x3f], &[0xdb, 0x0f, 0x49, 0x40]],
    ),
    (
        "f64",
        Ty::F64,
        ["2.5", "0d3fb999999999999a"],
        [
            &[0, 0, 0, 0, 0, 0, 4, 0x40],
            &[0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f],
        ],
    ),
];

#[test]
fn immediates_of_every_width_are_stored_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    for &(name, ty, values, bytes) in CASES {
        let kernel = dir.path().join(format!("{name}.spu"));
        std::fs::write(
            &kernel,
            format!(
                ".global .{name} OUT[2] = zeros;\n.launch grid(1) block(32);\n.entry k {{\n    \
                 .reg .u64 %rd<2>;\n    mov.u64 %rd0, OUT;\n    \
                 st.global.{name} [%rd0], {};\n    st.global.{name} [%rd0+{}], {};\n    exit;\n}}\n",
                values[0],
                ty.bytes(),
                values[1],
            ),
        )
        .unwrap();
        for mode in [None, Some("--functional")] {
            let dump = dir.path().join(format!("{name}.npy"));
            let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
                .arg(&kernel)
                .args(["-q", "--dump"])
                .arg(format!("OUT={}", dump.display()))
                .args(mode)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{name} {mode:?}: {err}");
            let words = spu_emu::load::npy::read(&dump, "OUT", ty, &[2]).unwrap();
            let got: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let want = [bytes[0], bytes[1]].concat();
            assert_eq!(&got[..want.len()], &want[..], "{name} {mode:?}");
        }
    }
}
