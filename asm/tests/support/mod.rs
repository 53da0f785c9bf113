//! Fixture files of the snapshot tests: each file of a folder gets a snapshot of
//! its own, named `TEST@FILE.snap` (as `insta::glob!` would name it, without the
//! feature that pulls a regex engine into the test build).

use std::path::{Path, PathBuf};

/// Runs `check` on every file of `tests/DIR` whose name ends in `.EXT`, in name
/// order, with the snapshot suffix and input file set to that file.
pub fn each_fixture(dir: &str, ext: &str, mut check: impl FnMut(&Path)) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", base.display()))
        .map(|entry| entry.expect("a readable folder entry").path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some(ext))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no .{ext} fixtures in {}",
        base.display()
    );
    for path in &files {
        let mut settings = insta::Settings::clone_current();
        settings.set_input_file(path);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 names");
        settings.set_snapshot_suffix(name);
        settings.bind(|| check(path));
    }
}
