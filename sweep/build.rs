//! Fingerprints the sources that determine a run's results (ISA, assembler,
//! machine description and presets, emulator, energy models, and this crate's run
//! and metric code), so a run's identity changes whenever the simulator does, even when the version
//! number does not. Outside this workspace the fingerprint is empty.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Folders, relative to the workspace root, whose files can change results.
const SOURCES: &[&str] = &[
    "isa-spec/src",
    "asm/src",
    "emu/src",
    "machine/src",
    "machine/machines",
    "prof/src",
    "prof/models",
    "sweep/src",
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&manifest).join("..");
    let mut hasher = Sha256::new();
    let mut any = false;
    for dir in SOURCES {
        let path = root.join(dir);
        println!("cargo:rerun-if-changed={}", path.display());
        let mut found = Vec::new();
        files(&path, &mut found);
        found.sort();
        for f in found {
            let Ok(bytes) = std::fs::read(&f) else {
                continue;
            };
            any = true;
            let rel = f.strip_prefix(&root).unwrap_or(&f);
            hasher.update(rel.to_string_lossy().as_bytes());
            hasher.update([0]);
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
    }
    let fingerprint: String = if any {
        hasher.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    } else {
        String::new()
    };
    println!("cargo:rustc-env=SPU_SWEEP_SOURCES={fingerprint}");
}
