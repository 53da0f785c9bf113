//! The README's first commands: the first builds every tool into `target/release/`
//! (the tutorial puts that folder on `PATH`), the second is the test command, and
//! `.ci/run` runs exactly that command, so what users run is what CI checks.

use spu_tests::repo_path;

/// The shell lines of the README's first ```sh block.
fn first_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo_path("README.md")).expect("README.md reads");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md has a ```sh block");
    block.lines().map(str::to_string).collect()
}

#[test]
fn the_first_command_builds_every_tool_in_release() {
    let cmds = first_commands();
    assert_eq!(cmds.len(), 2, "{cmds:?}");
    assert!(
        cmds[0].starts_with("cargo build --release && target/release/"),
        "{}",
        cmds[0]
    );
    let tutorial = std::fs::read_to_string(repo_path("docs/tutorial.md")).unwrap();
    assert!(tutorial.contains("export PATH=\"$PWD/target/release:$PATH\""));
}

#[test]
fn ci_runs_exactly_the_readme_test_command() {
    let cmds = first_commands();
    let test = &cmds[1];
    assert!(test.starts_with("cargo test "), "{test}");
    // Same profile as the build, so the second command reuses the first's build.
    assert!(test.contains("--release"), "{test}");
    let ci = std::fs::read_to_string(repo_path(".ci/run")).expect(".ci/run reads");
    let cargo_tests: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo test"))
        .collect();
    assert_eq!(cargo_tests, [test.as_str()], ".ci/run's test command");
}

#[test]
fn the_readme_says_how_long_the_first_build_takes() {
    let readme = std::fs::read_to_string(repo_path("README.md")).unwrap();
    let at = readme
        .find("The first build takes")
        .expect("build time stated");
    assert!(
        readme[at..].split('.').next().unwrap().contains("minutes"),
        "the build time is given in minutes"
    );
}
