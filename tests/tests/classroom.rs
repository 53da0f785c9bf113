//! Runs every command of `docs/classroom.md` (the ```console lines starting with
//! `$ `, through `sh` with the built tools first on the `PATH`) in a scratch folder,
//! checks that each prints what the document shows under it, that every page they
//! write is a page, and, when a Chromium is found, that each opens with no console
//! errors and no network requests.

use spu_tests::browser::{self, Browser};
use spu_tests::console::steps;
use spu_tests::{binary, repo_path};
use std::path::{Path, PathBuf};
use std::process::Command;

fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            pages(&e.path(), out);
        } else if t.is_file() && e.path().extension().is_some_and(|x| x == "html") {
            out.push(e.path());
        }
    }
}

#[test]
fn every_classroom_command_runs_and_its_pages_open() {
    let markdown = std::fs::read_to_string(repo_path("docs/classroom.md")).unwrap();
    let steps = steps(&markdown);
    assert!(steps.len() >= 10, "the exercises have their commands");
    let dir = tempfile::tempdir().unwrap();
    for link in ["samples", "docs"] {
        std::os::unix::fs::symlink(repo_path(link), dir.path().join(link)).unwrap();
    }
    let tools = binary("spu-prof")
        .parent()
        .expect("the tools' folder")
        .to_path_buf();
    binary("spu-emu");
    let path = std::env::join_paths(std::iter::once(tools).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    for step in &steps {
        let out = Command::new("sh")
            .arg("-c")
            .arg(&step.command)
            .env("PATH", &path)
            .current_dir(dir.path())
            .output()
            .expect("sh runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "`{}` failed:\n{stderr}", step.command);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout, step.expected, "`{}` printed", step.command);
    }
    let mut written = Vec::new();
    pages(dir.path(), &mut written);
    written.retain(|p| {
        !p.starts_with(dir.path().join("samples")) && !p.starts_with(dir.path().join("docs"))
    });
    written.sort();
    let samples = std::fs::read_dir(repo_path("samples"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "spu")
        })
        .count();
    assert!(samples >= 5);
    assert!(
        written.len() >= 10 + samples,
        "{} pages: {written:?}",
        written.len()
    );
    for p in &written {
        let text = std::fs::read_to_string(p).unwrap();
        spu_emu::observe::html::read(&text).unwrap_or_else(|e| panic!("`{}` {e}", p.display()));
    }
    let mut b = match browser::find_chromium() {
        Ok(exe) => Browser::launch(&exe, 1200, 900).unwrap(),
        Err(why) if browser::required() => panic!("SPU_REQUIRE_CHROMIUM=1 but {why}"),
        Err(why) => {
            eprintln!("the pages were not opened: {why}");
            return;
        }
    };
    for p in &written {
        b.open(p).unwrap_or_else(|e| panic!("{e}"));
        assert!(b.errors().is_empty(), "`{}`: {:?}", p.display(), b.errors());
        assert!(
            b.network_requests().is_empty(),
            "`{}`: {:?}",
            p.display(),
            b.network_requests()
        );
    }
}
