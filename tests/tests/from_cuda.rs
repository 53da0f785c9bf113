//! Runs every command of `docs/from-cuda.md` and checks its standard output, so the
//! guide cannot go stale (as `tutorial.rs` does for `docs/tutorial.md`). The
//! commands compile CUDA C, so they need clang (see [`spu_tests::clang`]).

use spu_tests::console::steps;
use spu_tests::{binary, repo_path};
use std::process::Command;

#[test]
fn every_command_of_the_cuda_guide_runs_with_its_output() {
    let markdown = std::fs::read_to_string(repo_path("docs/from-cuda.md")).unwrap();
    let steps = steps(&markdown);
    assert!(steps.len() >= 4, "the guide has its commands");
    if spu_tests::clang::skip("docs/from-cuda.md") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo_path("samples"), dir.path().join("samples")).unwrap();
    for step in &steps {
        let mut words = step.command.split_whitespace();
        let program = words.next().expect("a command");
        assert!(program.starts_with("spu-"), "{}", step.command);
        let out = Command::new(binary(program))
            .args(words)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "`{}` failed:\n{stderr}", step.command);
        let got = String::from_utf8_lossy(&out.stdout);
        assert!(
            got == step.expected,
            "`{}` printed:\n{got}\nbut the guide shows:\n{}",
            step.command,
            step.expected
        );
    }
    // The commands wrote only into the folder they ran in, never beside the samples.
    assert!(!repo_path("samples/cuda/saxpy.bin").exists());
}
