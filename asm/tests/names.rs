//! Listings of allocated code keep the source's register names: `spu-asm -d` carries
//! them (and the instructions the assembler added) on its `.loc` lines and
//! re-assembles to the same bytes; `--no-loc` shows them as comments. The kernel is
//! the emulator's `emu/tests/names/smooth.spu`, whose immediate 1/3 needs a
//! temporary. Snapshots in `snapshots/names__*.snap`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

const KERNEL: &str = "emu/tests/names/smooth.spu";

fn assemble(name: &str, src: &str) -> Vec<u8> {
    spu_asm::assemble(name, src)
        .unwrap_or_else(|d| panic!("{}", d.render(name, src)))
        .0
}

fn listing(bin: &[u8], extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("smooth.bin");
    std::fs::write(&path, bin).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .arg("-d")
        .arg(&path)
        .args(extra)
        .output()
        .expect("spu-asm runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn kernel() -> Vec<u8> {
    let src = std::fs::read_to_string(root().join(KERNEL)).unwrap();
    assemble("smooth.spu", &src)
}

#[test]
fn a_listing_carries_source_names_and_reassembles_to_the_same_bytes() {
    let bin = kernel();
    let text = listing(&bin, &[]);
    for expected in [
        ".loc 0 37 5, regs \"f2 i\";",
        ".loc 0 39 5, hidden \"tmp0\";",
        ".loc 0 39 5, regs \"f1 f1 tmp0\";",
    ] {
        assert!(text.contains(expected), "`{expected}` in\n{text}");
    }
    assert_eq!(assemble("again.spu", &text), bin, "{text}");
    insta::assert_snapshot!("listing", text);
}

#[test]
fn a_listing_without_locations_shows_source_names_in_comments() {
    let text = listing(&kernel(), &["--no-loc"]);
    for expected in [
        "  // ld.cb.west.f32 %f2, [%i];",
        "  // mov.f32 %tmp0, 0.33333334; (added by the assembler)",
    ] {
        assert!(text.contains(expected), "`{expected}` in\n{text}");
    }
    insta::assert_snapshot!("listing_no_loc", text);
}

/// Names and marks survive a second round trip, and a listing edited to drop them
/// gives a binary without debug information (registers then show their numbers).
#[test]
fn listing_names_are_kept_or_dropped_with_their_loc_attributes() {
    let bin = kernel();
    let text = listing(&bin, &[]);
    let again = assemble("again.spu", &text);
    assert_eq!(listing(&again, &[]), text);
    let bare: String = text
        .lines()
        .map(|l| match l.split_once(", ") {
            Some((loc, _)) if l.trim_start().starts_with(".loc ") => format!("{loc};"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let m = spu_isa::format::read_module(&assemble("bare.spu", &bare)).unwrap();
    assert!(m.debug.is_empty());
    let original = spu_isa::format::read_module(&bin).unwrap();
    assert_eq!(m.code, original.code);
    let text = spu_asm::disasm::instr_text(&m, 17).unwrap();
    assert!(text.starts_with("ld.cb.west.f32 %r"), "{text}");
}

/// Debug information the reader would refuse is refused on writing too.
#[test]
fn inconsistent_debug_information_is_refused() {
    let mut m = spu_isa::format::read_module(&kernel()).unwrap();
    let mut short = m.clone();
    short.debug.instrs.pop();
    let e = spu_isa::format::write_module(&short)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("debug information has 24 entries for 25 instructions"),
        "{e}"
    );
    m.debug.names[0] = "two words".into();
    let e = spu_isa::format::write_module(&m).unwrap_err().to_string();
    assert!(
        e.contains("register name `two words` is not an identifier"),
        "{e}"
    );
    m.debug.names[0] = "f\"2".into();
    let e = spu_isa::format::write_module(&m).unwrap_err().to_string();
    assert!(e.contains("is not an identifier"), "{e}");
}

/// A precondition message comes back from `-d` as written, and a binary whose
/// message holds what a source string cannot (a quote, an escape character) is
/// refused when read, so every listing re-assembles to the same bytes.
#[test]
fn precondition_messages_round_trip_and_patched_ones_are_refused() {
    let src = ".param .u32 N = 64;\n.assert N > 0, \"N must be positive: 'N' > 0\";\n.entry k {\n    exit;\n}\n";
    let bin = assemble("assert.spu", src);
    let text = listing(&bin, &[]);
    assert!(
        text.contains(".assert N > 0, \"N must be positive: 'N' > 0\";"),
        "{text}"
    );
    assert_eq!(assemble("again.spu", &text), bin, "{text}");
    for patch in [&b"N \"ust"[..], &b"N \x1bust"[..]] {
        let mut bad = bin.clone();
        let at = bad
            .windows(6)
            .position(|w| w == b"N must")
            .expect("the message is stored as written");
        bad[at..at + 6].copy_from_slice(patch);
        let err = spu_isa::format::read_module(&bad).expect_err("a patched message is refused");
        assert!(err.to_string().contains("precondition message"), "{err}");
    }
}
