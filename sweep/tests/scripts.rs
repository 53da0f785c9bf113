//! Slurm job scripts from hostile inputs: a spec file, results folder, partition or
//! `sbatch` option holding a newline is refused before anything is written or
//! submitted; odd but harmless values (spaces, quotes, `$(...)`, backticks, `#`,
//! `%`) are quoted, so the script passes `bash -n`, `sbatch` reads each `#SBATCH`
//! line back as the one option meant, and running it (as a recording fake `sbatch`
//! does) runs nothing but `spu-sweep exec-task`. Numbers that would wrap are
//! refused, and `--dry-run` writes the script without submitting it. A task
//! refuses a batch or plan edited after submission, and one that does not fit
//! its plan.

use spu_sweep::slurm::{Batch, SlurmError, SlurmOptions, script};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::text;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_spu-sweep")
}

/// A folder with a spec (`spec.toml` unless named), vecadd beside it, and a fake
/// `sbatch` on PATH that logs its arguments, runs the script as Slurm would
/// (under `bash -x`, which traces every command), and prints a job id.
struct Bench {
    dir: tempfile::TempDir,
    spec: PathBuf,
}

impl Bench {
    fn new(spec_name: &str) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
            dir.path().join("vecadd.spu"),
        )
        .unwrap();
        let spec = dir.path().join(spec_name);
        std::fs::write(
            &spec,
            "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [64, 128]\n",
        )
        .unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let fake = bin.join("sbatch");
        std::fs::write(
            &fake,
            "#!/bin/bash\n\
             printf '%s\\n' \"$@\" >> \"$FAKE_DIR/sbatch.args\"\n\
             printf '%s' \"$SLURM_UMASK\" > \"$FAKE_DIR/umask\"\n\
             script=\"$(realpath \"${@: -1}\")\"\n\
             bash -n \"$script\" || exit 9\n\
             (cd \"$FAKE_DIR/cwd\" && SLURM_ARRAY_TASK_ID=0 bash -x \"$script\" \
                > \"$FAKE_DIR/task.out\" 2> \"$FAKE_DIR/trace\")\n\
             echo 4242\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir(dir.path().join("cwd")).unwrap();
        Bench { dir, spec }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(&self, args: &[&str]) -> Output {
        let path = format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new(exe())
            .arg("run")
            .arg(&self.spec)
            .args(args)
            .env("PATH", path)
            .env("FAKE_DIR", self.dir.path())
            .current_dir(self.dir.path())
            .output()
            .unwrap()
    }

    /// True when the fake `sbatch` was called.
    fn submitted(&self) -> bool {
        self.path("sbatch.args").exists()
    }

    /// Files named PWNED anywhere under the folder (an injected command's mark).
    fn pwned(&self) -> Vec<PathBuf> {
        fn walk(d: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.file_name().is_some_and(|n| n == "PWNED") {
                    out.push(p.clone());
                }
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    walk(&p, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self.dir.path(), &mut out);
        out
    }
}

/// The arguments `sbatch` reads from an `#SBATCH` line (Slurm's own rules: quotes
/// group, a backslash escapes the next character, an unquoted `#` ends the line).
fn sbatch_arguments(line: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return args;
        }
        let mut arg = String::new();
        let mut quote: Option<char> = None;
        while let Some(&c) = chars.peek() {
            if quote.is_none() && c.is_ascii_whitespace() {
                break;
            }
            chars.next();
            match (quote, c) {
                (_, '\\') => arg.extend(chars.next()),
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => arg.push(c),
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => {
                    if !arg.is_empty() {
                        args.push(arg);
                    }
                    return args;
                }
                (None, c) => arg.push(c),
            }
        }
        args.push(arg);
    }
}

#[test]
fn the_sbatch_reader_of_this_test_follows_slurm() {
    assert_eq!(sbatch_arguments(" --a=1 --b # c"), ["--a=1", "--b"]);
    assert_eq!(sbatch_arguments("\"--c=a b\\\"c#d\""), ["--c=a b\"c#d"]);
    assert_eq!(sbatch_arguments("--x='y z'"), ["--x=y z"]);
}

#[test]
fn values_with_newlines_never_reach_a_script() {
    let injected = "\ntouch PWNED\n#";
    let cases: Vec<(String, Vec<String>, &str)> = vec![
        (format!("inj{injected}.toml"), vec![], "cannot name a sweep"),
        (
            "spec.toml".into(),
            vec!["--out".into(), format!("out{injected}")],
            "the results folder",
        ),
        (
            "spec.toml".into(),
            vec!["--partition".into(), format!("short{injected}")],
            "the partition",
        ),
        (
            "spec.toml".into(),
            vec![format!("--sbatch-arg=--account=abc{injected}")],
            "the sbatch option",
        ),
        (
            "spec.toml".into(),
            vec!["--partition".into(), "short; touch PWNED".into()],
            "a partition name is letters",
        ),
        (
            "spec.toml".into(),
            vec!["--sbatch-arg=touch PWNED".into()],
            "give an option of `sbatch`",
        ),
    ];
    for (spec, args, needle) in cases {
        let bench = Bench::new(&spec);
        let mut all = vec!["--slurm"];
        all.extend(args.iter().map(String::as_str));
        let o = bench.run(&all);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{spec:?} {args:?}: {err}");
        assert!(err.contains(needle), "{spec:?} {args:?}: {err}");
        assert!(!bench.submitted(), "{spec:?} {args:?}: submitted");
        assert!(bench.pwned().is_empty(), "{spec:?} {args:?}: ran a command");
        // Nothing was written for the refused options.
        assert!(
            std::fs::read_dir(bench.dir.path())
                .unwrap()
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().ends_with(".sweep")
                    && !e.file_name().to_string_lossy().starts_with("out")),
            "{spec:?} {args:?}: a results folder was made"
        );
    }
}

#[test]
fn odd_values_are_quoted_and_only_the_task_runs() {
    let bench = Bench::new("spec.toml");
    let out = "we ird $(touch PWNED) `touch PWNED` \"q\" 'q' #%j";
    let comment = "--comment=a b\"c#d $(touch PWNED)";
    let o = bench.run(&[
        "--slurm",
        "--out",
        out,
        "--partition",
        "short,long",
        "--sbatch-arg",
        comment,
        "--sbatch-arg=--qos=normal",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("submitted job 4242"),
        "{}",
        text(&o.stderr)
    );
    let dir = bench.path(out).canonicalize().unwrap();
    let script_path = dir.join("slurm/batch-0.sh");
    let script = std::fs::read_to_string(&script_path).unwrap();
    let check = Command::new("bash")
        .arg("-n")
        .arg(&script_path)
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check.stderr));
    // Every line is one the tool writes, and each `#SBATCH` line is one option.
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(lines[0], "#!/bin/bash");
    assert!(lines[1].starts_with("# spu-sweep: batch 0 of sweep `spec`"));
    let directives: Vec<Vec<String>> = lines[2..lines.len() - 1]
        .iter()
        .map(|l| {
            let rest = l.strip_prefix("#SBATCH ").unwrap_or_else(|| panic!("{l}"));
            sbatch_arguments(rest)
        })
        .collect();
    let logs = format!(
        "--output={}/slurm/logs/batch-0-%a.out",
        dir.display().to_string().replace('%', "%%")
    );
    let expected = [
        "--job-name=spu-sweep-spec",
        "--array=0-0",
        &logs,
        "--ntasks=1",
        "--cpus-per-task=1",
        "--mem=4352M",
        "--time=125",
        "--partition=short,long",
        comment,
        "--qos=normal",
    ];
    let got: Vec<Vec<String>> = expected.iter().map(|e| vec![e.to_string()]).collect();
    assert_eq!(directives, got, "{script}");
    assert!(lines[lines.len() - 1].starts_with("exec '"), "{script}");
    // The fake sbatch ran the script: exactly one command, the task.
    let trace = std::fs::read_to_string(bench.path("trace")).unwrap();
    let commands: Vec<&str> = trace.lines().filter(|l| l.starts_with('+')).collect();
    assert_eq!(commands.len(), 1, "{trace}");
    assert!(
        commands[0].starts_with(&format!("+ exec {} exec-task ", exe())),
        "{trace}"
    );
    assert!(bench.pwned().is_empty(), "an injected command ran");
    // And the task did its runs into the odd folder.
    let task = std::fs::read_to_string(bench.path("task.out")).unwrap();
    assert!(task.contains("2 done, 0 failed"), "{task}\n{trace}");
    assert_eq!(std::fs::read_dir(dir.join("runs")).unwrap().count(), 2);
}

#[test]
fn a_dry_run_writes_the_script_and_submits_nothing() {
    let bench = Bench::new("spec.toml");
    let o = bench.run(&["--slurm", "--dry-run", "--out", "o"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("2 runs in 1 array task, not submitted"),
        "{}",
        text(&o.stderr)
    );
    assert!(!bench.submitted());
    let script = bench.path("o/slurm/batch-0.sh");
    assert!(script.is_file());
    // The same command without --dry-run submits that batch, under the same number.
    let o = bench.run(&["--slurm", "--out", "o"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(bench.submitted());
    assert!(!bench.path("o/slurm/batch-1.json").exists());
    let batch: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bench.path("o/slurm/batch-0.json")).unwrap())
            .unwrap();
    assert_eq!(batch["job_id"], "4242");
    // --dry-run needs --slurm and cannot wait.
    let o = bench.run(&["--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let o = bench.run(&["--slurm", "--dry-run", "--wait"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn the_task_logs_of_a_private_sweep_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let open = Bench::new("spec.toml");
    let private = Bench::new("spec.toml");
    std::fs::set_permissions(
        private.path("vecadd.spu"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    for (bench, umask) in [(&open, ""), (&private, "0077")] {
        let o = bench.run(&["--slurm", "--out", "o"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        // Slurm creates the task logs with the umask it is given.
        let given = std::fs::read_to_string(bench.path("umask")).unwrap();
        assert_eq!(given, umask);
    }
}

/// A negative number is refused as the option's value, with the option named,
/// not taken for an unknown option.
#[test]
fn negative_numbers_are_refused_as_values_of_their_options() {
    let bench = Bench::new("spec.toml");
    for (args, option) in [
        (vec!["--memory", "-5"], "'--memory <MIB>'"),
        (vec!["--jobs", "-1"], "'--jobs <N>'"),
        (vec!["--timeout", "-1"], "'--timeout <SECONDS>'"),
        (
            vec!["--slurm", "--max-parallel", "-2"],
            "'--max-parallel <K>'",
        ),
        (
            vec!["--slurm", "--runs-per-task", "-1"],
            "'--runs-per-task <M>'",
        ),
        (vec!["--slurm", "--time", "-3"], "'--time <MINUTES>'"),
    ] {
        let o = bench.run(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let value = args[args.len() - 1];
        assert!(
            err.contains(&format!("invalid value '{value}' for {option}"))
                && !err.contains("unexpected argument"),
            "{args:?}: {err}"
        );
        assert!(!bench.submitted());
    }
}

#[test]
fn numbers_that_would_wrap_are_refused() {
    let bench = Bench::new("spec.toml");
    for args in [
        vec!["--slurm", "--memory", "18446744073709551615"],
        vec!["--slurm", "--time", "18446744073709551615"],
        vec!["--slurm", "--timeout", "18446744073709551615"],
        vec!["--slurm", "--runs-per-task", "18446744073709551615"],
        vec!["--memory", "18446744073709551615"],
    ] {
        let o = bench.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("not in"),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert!(!bench.submitted());
    }
    // The default time limit: runs per task x timeout, without overflow.
    let batch = Batch {
        batch: 0,
        tasks: vec![vec!["r".to_string(); 100_000]],
        job_id: None,
        timeout_s: 365 * 24 * 3600,
        memory_mib: 1 << 30,
        plan_sha256: Some("0".repeat(64)),
    };
    let opts = SlurmOptions::default();
    let e = script(Path::new("/d"), Path::new("/x"), "n", &batch, &opts).unwrap_err();
    assert!(matches!(e, SlurmError::TooLong { .. }), "{e}");
    assert!(e.to_string().contains("give `--time MINUTES`"), "{e}");
    let opts = SlurmOptions {
        time_min: Some(60),
        ..SlurmOptions::default()
    };
    let s = script(Path::new("/d"), Path::new("/x"), "n", &batch, &opts).unwrap();
    assert!(s.contains("#SBATCH --mem=1073742080M\n"), "{s}");
    assert!(s.contains("#SBATCH --time=60\n"), "{s}");
}

/// An `--sbatch-arg` that would replace an option the script sets (a second
/// `--array` starts tasks that do not exist; a second `--output` loses the logs)
/// is refused with the flag that sets it, before anything is written.
#[test]
fn sbatch_args_cannot_replace_the_options_of_the_script() {
    let bench = Bench::new("spec.toml");
    for (arg, says) in [
        ("--array=0-999", "--max-parallel"),
        ("--arr=0-999", "--max-parallel"),
        ("-a0-999", "--max-parallel"),
        ("-Qa0-999", "--max-parallel"),
        ("--output=/tmp/x", "slurm/logs"),
        ("-e/tmp/x", "slurm/logs"),
        ("--job-name=x", "`name`"),
        ("-Jx", "`name`"),
        ("--mem=1G", "--memory"),
        ("--mem-per-cpu=1G", "--memory"),
        ("--cpus-per-task=4", "one core"),
        ("--ntasks=2", "one task"),
        ("--time=10", "--time"),
        ("-t10", "--time"),
        ("--partition=x", "--partition"),
        ("-px", "--partition"),
        ("--wrap=hostname", "script"),
    ] {
        let o = bench.run(&["--slurm", "--out", "o", &format!("--sbatch-arg={arg}")]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{arg}: {err}");
        assert!(
            err.contains("spu-sweep writes `--") && err.contains(says),
            "{arg}: {err}"
        );
        assert!(!bench.submitted(), "{arg}");
        assert!(
            !bench.path("o").exists(),
            "{arg}: a results folder was made"
        );
    }
    // Options it does not set pass, including ones whose names start alike.
    let o = bench.run(&[
        "--slurm",
        "--dry-run",
        "--out",
        "o",
        "--sbatch-arg=--time-min=5",
        "--sbatch-arg=--mem-bind=local",
        "--sbatch-arg=--comment=x",
        "--sbatch-arg=-Q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// A batch plan edited after submission (someone else who can write to a shared
/// results folder points a run at another file of the user's) is refused by the
/// task: the job script carries the plan's SHA-256, and the file is never read.
#[test]
fn a_task_refuses_a_batch_plan_edited_after_submission() {
    let bench = Bench::new("spec.toml");
    let secret = bench.path("secret/notes.spu");
    std::fs::create_dir(bench.path("secret")).unwrap();
    std::fs::write(&secret, "TOPSECRET line\n").unwrap();
    let o = bench.run(&["--slurm", "--dry-run", "--out", "o"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let script = std::fs::read_to_string(bench.path("o/slurm/batch-0.sh")).unwrap();
    assert!(script.contains(" --plan-sha256 "), "{script}");
    let plan_path = bench.path("o/slurm/batch-0.plan.json");
    let mut plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&plan_path).unwrap()).unwrap();
    let hash = spu_sweep::plan::sha256_hex(&std::fs::read(&secret).unwrap());
    for kernel in plan["kernels"].as_array_mut().unwrap() {
        *kernel = serde_json::json!([secret.display().to_string(), hash]);
    }
    std::fs::write(&plan_path, serde_json::to_vec(&plan).unwrap()).unwrap();
    let o = Command::new("bash")
        .arg(bench.path("o/slurm/batch-0.sh"))
        .env("SLURM_ARRAY_TASK_ID", "0")
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("changed since the job was submitted"), "{err}");
    let runs: Vec<_> = std::fs::read_dir(bench.path("o/runs"))
        .unwrap()
        .flatten()
        .collect();
    assert!(runs.is_empty(), "records written: {runs:?}");
    assert!(!text(&o.stdout).contains("TOPSECRET") && !err.contains("TOPSECRET"));
}

/// An `sbatch` that exits 0 without printing a job id (a wrapper that prints an
/// error) is not taken as a submission, and a job id edited into a batch record is
/// neither passed to `squeue` nor printed raw.
#[test]
fn a_job_id_that_is_not_a_number_is_refused() {
    let b = Bench::new("spec.toml");
    let fake = b.path("bin/sbatch");
    std::fs::write(&fake, "#!/bin/bash\necho 'error: \u{1b}[31mno partition'\n").unwrap();
    let o = b.run(&["--slurm", "--out", "s.sweep"]);
    let err = text(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("where `--parsable` prints the job id") && !err.contains('\u{1b}'),
        "{err}"
    );
    let record = std::fs::read_to_string(b.path("s.sweep/slurm/batch-0.json")).unwrap();
    assert!(record.contains("\"job_id\": null"), "{record}");
    // A record edited to hold an option where the id goes.
    std::fs::write(
        b.path("s.sweep/slurm/batch-0.json"),
        record.replace(
            "\"job_id\": null",
            "\"job_id\": \"--format=%all\\u001b]0;x\\u0007\"",
        ),
    )
    .unwrap();
    let o = Command::new(exe())
        .args(["status", "s.sweep"])
        .current_dir(b.dir.path())
        .output()
        .unwrap();
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(
        out.contains("not asked (the recorded job id is not a number)") && !out.contains('\u{1b}'),
        "{out}"
    );
}

/// `spu-sweep exec-task` on batch 0 of the results folder `o` of `bench`, task
/// `task`, with the given hashes.
fn exec_task(bench: &Bench, task: &str, hashes: &[&str]) -> Output {
    Command::new(exe())
        .args(["exec-task", "o", "--batch", "0", "--task", task])
        .args(hashes)
        .current_dir(bench.dir.path())
        .output()
        .unwrap()
}

/// A change to a batch record.
type Edit = fn(&mut Batch);

/// A batch record edited after submission (a run id swapped, a bound raised) is
/// refused by the task, which the job script gives the batch's SHA-256; a batch
/// that does not fit its plan is refused entry by entry, naming the file; and the
/// hashes are not optional.
#[test]
fn a_task_refuses_a_batch_that_was_edited_or_does_not_fit_its_plan() {
    let bench = Bench::new("spec.toml");
    let o = bench.run(&["--slurm", "--dry-run", "--out", "o", "--runs-per-task", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let script = std::fs::read_to_string(bench.path("o/slurm/batch-0.sh")).unwrap();
    let record = bench.path("o/slurm/batch-0.json");
    let batch: Batch = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(batch.tasks.len(), 2);
    let plan_hash = batch.plan_sha256.clone().unwrap();
    assert!(
        script.contains(&format!(" --batch-sha256 {}\n", batch.work_sha256())),
        "{script}"
    );
    let run_script = || {
        let o = Command::new("bash")
            .arg(bench.path("o/slurm/batch-0.sh"))
            .env("SLURM_ARRAY_TASK_ID", "0")
            .current_dir(bench.dir.path())
            .output()
            .unwrap();
        (o.status.code(), text(&o.stderr))
    };
    let no_records = || {
        std::fs::read_dir(bench.path("o/runs"))
            .unwrap()
            .next()
            .is_none()
    };
    // The script's own hashes, the record edited.
    let edits: [(&str, Edit); 3] = [
        ("an unknown run", |b| {
            b.tasks[0][0] = "0123456789abcdef".into()
        }),
        ("a run twice", |b| b.tasks[0][0] = b.tasks[1][0].clone()),
        ("a larger bound", |b| b.memory_mib *= 2),
    ];
    for (what, edit) in edits {
        let mut edited = batch.clone();
        edit(&mut edited);
        std::fs::write(&record, serde_json::to_vec(&edited).unwrap()).unwrap();
        let (code, err) = run_script();
        assert_eq!(code, Some(1), "{what}: {err}");
        assert!(
            err.contains("slurm/batch-0.json")
                && err.contains("changed since the job was submitted"),
            "{what}: {err}"
        );
        assert!(no_records(), "{what}: a run was recorded");
    }
    // A batch that fits its hash but not its plan (as an older spu-sweep, or a
    // hand-made script, could give): every entry is checked.
    let plan = ["--plan-sha256", &plan_hash];
    let edits: [(Edit, &str, &str); 4] = [
        (
            |b| b.tasks[1][0] = "0123456789abcdef".into(),
            "0",
            "task 1, entry 0: the batch's plan has no run `0123456789abcdef`",
        ),
        (
            |b| {
                let id = b.tasks[0][0].clone();
                b.tasks[1].push(id);
            },
            "0",
            "task 1, entry 1: run `",
        ),
        (|_| {}, "2", "batch 0 has no task 2: its tasks are 0 to 1"),
        (|b| b.timeout_s = 0, "0", "`timeout_s` 0 is not 1 to"),
    ];
    for (edit, task, says) in edits {
        let mut edited = batch.clone();
        edit(&mut edited);
        std::fs::write(&record, serde_json::to_vec(&edited).unwrap()).unwrap();
        let hash = edited.work_sha256();
        let o = exec_task(&bench, task, &[plan[0], plan[1], "--batch-sha256", &hash]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{says}: {err}");
        assert!(
            err.contains("slurm/batch-0.json") && err.contains(says),
            "{says}: {err}"
        );
        assert!(no_records(), "{says}: a run was recorded");
    }
    // Without the hashes a task runs nothing.
    std::fs::write(&record, serde_json::to_vec(&batch).unwrap()).unwrap();
    let hash = batch.work_sha256();
    for given in [
        vec![],
        vec!["--plan-sha256", &plan_hash],
        vec!["--batch-sha256", &hash],
    ] {
        let o = exec_task(&bench, "0", &given);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{given:?}: {err}");
        assert!(err.contains("required"), "{given:?}: {err}");
        assert!(no_records(), "{given:?}: a run was recorded");
    }
    // The untouched batch runs.
    let (code, err) = run_script();
    assert_eq!(code, Some(0), "{err}");
    assert!(!no_records());
}

/// True once a thread of process `pid` has a child (the task's run started).
fn has_child(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|t| {
            std::fs::read_to_string(t.path().join("children")).is_ok_and(|c| !c.trim().is_empty())
        })
}

/// A task stopped by a signal to all its processes (`scancel` signals every
/// process of the job) leaves its run to do, not failed, and says how to submit
/// it again.
#[test]
fn a_cancelled_task_leaves_its_run_to_do() {
    use std::os::unix::process::CommandExt;
    let bench = Bench::new("spec.toml");
    std::fs::write(
        bench.path("spin.spu"),
        "// Never ends.\n.launch grid(1, 1) block(32);\n.entry spin {\nLOOP:\n    bra LOOP;\n}\n",
    )
    .unwrap();
    std::fs::write(
        &bench.spec,
        "timeout_s = 600\n[base]\nkernel = \"spin.spu\"\nspin_limit = 0\n",
    )
    .unwrap();
    let o = bench.run(&["--slurm", "--dry-run", "--out", "o"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut task = Command::new("bash")
        .arg(bench.path("o/slurm/batch-0.sh"))
        .env("SLURM_ARRAY_TASK_ID", "0")
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !has_child(task.id()) {
        if std::time::Instant::now() > deadline {
            let _ = task.kill();
            panic!("the run did not start");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let group = nix::unistd::Pid::from_raw(-(task.id() as i32));
    nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGTERM).unwrap();
    let o = task.wait_with_output().unwrap();
    let log = text(&o.stdout) + &text(&o.stderr);
    assert_eq!(o.status.code(), Some(143), "{log}");
    assert!(
        log.contains("1 run not run, left to do") && log.contains("--slurm` submits them again"),
        "{log}"
    );
    for sub in ["runs", "running"] {
        let left: Vec<_> = std::fs::read_dir(bench.path("o").join(sub))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{sub}: {left:?}\n{log}");
    }
}
