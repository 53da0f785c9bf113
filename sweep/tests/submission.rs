//! Submitting to Slurm and following the job, with fake `sbatch`, `squeue` and
//! `sacct` on PATH: a results folder whose name starts with `-` is submitted as a
//! path `sbatch` cannot read as an option, the commands printed to follow it run
//! as printed, and task states Slurm prints reach the terminal escaped.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::text;

const KERNEL: &str =
    ".global .u32 C[32] = zeros;\n.launch grid(1, 1) block(32);\n.entry k {\n    exit;\n}\n";

/// A folder with `k.spu`, a spec named `name`, and fake Slurm commands in `bin/`:
/// `sbatch` logs each argument on a line of `sbatch.args` and prints a job id;
/// `squeue` and `sacct` print `queue` and `accounting`.
fn bench(name: &str, queue: &str, accounting: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("k.spu"), KERNEL).unwrap();
    std::fs::write(
        d.join("s.toml"),
        format!("name = \"{name}\"\n[base]\nkernel = \"k.spu\"\n"),
    )
    .unwrap();
    std::fs::create_dir(d.join("bin")).unwrap();
    for (cmd, body) in [
        (
            "sbatch",
            "printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/../sbatch.args\"\necho 4242\n".to_string(),
        ),
        ("squeue", format!("printf '{queue}'\n")),
        ("sacct", format!("printf '{accounting}'\n")),
    ] {
        let f = d.join("bin").join(cmd);
        std::fs::write(&f, format!("#!/bin/bash\n{body}")).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// `spu-sweep ARGS` in `dir` with its fake Slurm commands first on PATH.
fn sweep_with_fakes(dir: &Path, args: &[&str]) -> Output {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(env!("CARGO_BIN_EXE_spu-sweep"))
        .args(args)
        .env("PATH", path)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A sweep named `-o` (or `--out=-x.sweep`) was submitted as `sbatch --parsable
/// -o.sweep/slurm/batch-0.sh`, which sbatch reads as its option `-o` and then takes
/// the job script from standard input; `spu-sweep status -o.sweep`, as printed,
/// was a usage error.
#[test]
fn a_results_folder_starting_with_a_dash_is_never_read_as_an_option() {
    for (name, args, folder) in [
        ("-o", &[][..], "-o.sweep"),
        ("plain", &["--out=-x.sweep"][..], "-x.sweep"),
    ] {
        let dir = bench(name, "", "");
        let d = dir.path();
        let mut run = vec!["run", "s.toml", "--slurm"];
        run.extend(args);
        let o = sweep_with_fakes(d, &run);
        let err = text(&o.stderr);
        assert!(o.status.success(), "{name}: {err}");
        let argv = std::fs::read_to_string(d.join("sbatch.args")).unwrap();
        let script = argv.lines().last().unwrap();
        assert!(
            Path::new(script).is_absolute() && !script.starts_with('-'),
            "{name}: {argv}"
        );
        assert_eq!(
            Path::new(script).canonicalize().unwrap(),
            d.join(folder)
                .join("slurm/batch-0.sh")
                .canonicalize()
                .unwrap(),
            "{name}: {argv}"
        );
        // The printed follow-ups run as printed.
        for cmd in ["status", "collect"] {
            let shown = format!("`spu-sweep {cmd} ./{folder}`");
            assert!(err.contains(&shown), "{name}: {err}");
            let o = sweep_with_fakes(d, &[cmd, &format!("./{folder}")]);
            assert!(o.status.success(), "{name} {cmd}: {}", text(&o.stderr));
        }
    }
}

/// `status` printed the states `squeue` and `sacct` gave as they were: a title
/// escape, a hyperlink and a right-to-left override reached the terminal.
#[test]
fn task_states_from_slurm_are_escaped() {
    let dir = bench(
        "st",
        "RUNNING\\033]0;PWNED\\007\\nPENDING\\342\\200\\256\\n",
        "COMPLETED\\033]8;;http://evil.example\\007\\n",
    );
    let d = dir.path();
    let o = sweep_with_fakes(d, &["run", "s.toml", "--slurm"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = sweep_with_fakes(d, &["status", "st.sweep"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    let line = out
        .lines()
        .find(|l| l.contains("slurm job 4242"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        !line.contains('\u{1b}') && !line.contains('\u{202e}'),
        "{line:?}"
    );
    assert!(line.contains("1 running\\u{1b}]0;pwned\\u{7}"), "{line}");
    assert!(line.contains("1 pending\\u{202e}"), "{line}");
    assert!(
        line.contains("1 completed\\u{1b}]8;;http://evil.example\\u{7}"),
        "{line}"
    );
}

/// An `sbatch` that fails after writing hundreds of megabytes of messages is
/// reported with the end of them, in bounded memory (all of it was kept and
/// escaped into one message, which aborted at 3.5 GB).
#[test]
fn a_failing_sbatch_is_reported_by_the_end_of_its_messages() {
    let dir = bench("big", "", "");
    let d = dir.path();
    let f = d.join("bin/sbatch");
    std::fs::write(
        &f,
        "#!/bin/bash\nhead -c 200000000 /dev/zero | tr '\\0' 'x' >&2\necho ' last words' >&2\nexit 1\n",
    )
    .unwrap();
    let o = sweep_with_fakes(d, &["run", "s.toml", "--slurm"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", &err[..err.len().min(2000)]);
    assert!(
        err.contains("`sbatch` failed: (its last 16384 bytes) ...xxx"),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(
        err.contains("last words"),
        "{}",
        &err[err.len().saturating_sub(2000)..]
    );
    assert!(err.len() < 64 * 1024, "{} bytes of messages", err.len());
}
