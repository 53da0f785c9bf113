//! Command-line answers every tool gives through its argument parser: `--help` and
//! `--version` written to a full disk are an error, not a silent success; a usage
//! error shows the user's value escaped.

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

/// A value the argument parser itself refuses (a number that is not one, a value
/// outside a list, an unknown option) is shown escaped in the usage error, like
/// every other message: escape sequences, BEL and bidirectional overrides in it
/// never reach the terminal. The error keeps the parser's exit code and hint.
#[test]
fn a_value_the_parser_refuses_is_shown_escaped() {
    const EVIL: &str = "5\u{1b}]0;PWNED-TITLE\u{7}\u{1b}[31mRED\u{202e}";
    const SHOWN: &str = "5\\u{1b}]0;PWNED-TITLE\\u{7}\\u{1b}[31mRED\\u{202e}";
    let bogus = format!("--bogus{EVIL}");
    let cases: [(&str, Vec<&str>); 4] = [
        ("spu-asm", vec![&bogus]),
        ("spu-emu", vec!["--max-cycles", EVIL, "x.spu"]),
        ("spu-prof", vec!["--heatmap-metric", EVIL]),
        ("spu-sweep", vec!["run", "s.toml", "--jobs", EVIL]),
    ];
    for (tool, args) in cases {
        let out = Command::new(binary(tool)).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool}: {err}");
        assert!(err.contains(SHOWN), "{tool}: {err}");
        assert!(
            !err.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "{tool}: raw control characters in {err:?}"
        );
        assert!(err.contains("try '--help'"), "{tool}: {err}");
        assert!(out.stdout.is_empty(), "{tool}");
    }
}
