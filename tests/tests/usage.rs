//! Command-line answers every tool gives through its argument parser (`--help`,
//! `--version`): written to a full disk they are an error, not a silent success.

use spu_tests::binary;
use std::process::Command;

#[test]
fn help_and_version_to_a_full_disk_are_errors() {
    let Ok(full) = std::fs::File::options().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this system");
        return;
    };
    for tool in ["spu-asm", "spu-emu", "spu-prof", "spu-sweep"] {
        for flag in ["--help", "--version"] {
            let out = Command::new(binary(tool))
                .arg(flag)
                .stdout(full.try_clone().unwrap())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{tool} {flag}: {err}");
            assert_eq!(
                err,
                "error: cannot write to standard output: No space left on device (os error 28)\n",
                "{tool} {flag}"
            );
        }
        // To a working standard output the answer is unchanged.
        let out = Command::new(binary(tool)).arg("--help").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{tool}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage:"),
            "{tool}"
        );
    }
}
