//! Runs every command of `docs/tutorial.md` and checks its output, so the tutorial
//! cannot go stale. Commands are the ```console lines starting with `$ `; the lines
//! after one, up to the next command, are its expected standard output. Pictures the
//! commands write must equal the ones in `docs/img/`.
//!
//! `UPDATE_TUTORIAL=1 cargo test -p spu-tests --test tutorial` rewrites the outputs
//! and pictures from a fresh run.

use spu_tests::console::steps;
use spu_tests::{binary, repo_path};
use std::path::Path;
use std::process::Command;

fn run(command: &str, cwd: &Path) -> String {
    let mut words = command.split_whitespace();
    let program = words.next().expect("a command");
    assert!(
        program.starts_with("spu-"),
        "tutorial commands run our tools only: {command}"
    );
    let out = Command::new(binary(program))
        .args(words)
        .current_dir(cwd)
        .output()
        .expect("tool runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "`{command}` failed:\n{stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_tutorial_command_runs_with_its_output() {
    let doc_path = repo_path("docs/tutorial.md");
    let markdown = std::fs::read_to_string(&doc_path).expect("docs/tutorial.md");
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo_path("samples"), dir.path().join("samples")).unwrap();
    let update = std::env::var_os("UPDATE_TUTORIAL").is_some();
    let steps = steps(&markdown);
    assert!(steps.len() >= 10, "the tutorial has its commands");
    let mut actual = Vec::new();
    for step in &steps {
        let got = run(&step.command, dir.path());
        if !update {
            assert!(
                got == step.expected,
                "`{}` printed:\n{got}\nbut the tutorial shows:\n{}\n(UPDATE_TUTORIAL=1 refreshes it)",
                step.command,
                step.expected
            );
        }
        actual.push(got);
    }
    // Pictures.
    for entry in std::fs::read_dir(repo_path("docs/img")).unwrap() {
        let committed = entry.unwrap().path();
        let name = committed.file_name().unwrap();
        let fresh = dir.path().join(name);
        let fresh_bytes =
            std::fs::read(&fresh).unwrap_or_else(|_| panic!("no command writes {name:?}"));
        if update {
            std::fs::write(&committed, &fresh_bytes).unwrap();
        } else {
            assert!(
                std::fs::read(&committed).unwrap() == fresh_bytes,
                "docs/img/{name:?} is stale"
            );
        }
    }
    if update {
        let mut out = String::new();
        let mut in_console = false;
        let mut index = 0;
        let mut skipping = false;
        for line in markdown.lines() {
            if line.starts_with("```") {
                in_console = line.trim() == "```console";
                skipping = false;
                out.push_str(line);
                out.push('\n');
                continue;
            }
            if in_console && line.starts_with("$ ") {
                out.push_str(line);
                out.push('\n');
                out.push_str(&actual[index]);
                index += 1;
                skipping = true;
                continue;
            }
            if !skipping {
                out.push_str(line);
                out.push('\n');
            }
        }
        std::fs::write(&doc_path, out).unwrap();
    }
}
