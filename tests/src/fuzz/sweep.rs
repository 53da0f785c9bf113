//! Fuzz entry points for `spu-sweep`: specs from arbitrary text, parsed and planned
//! in a folder beside a private one they must never reach; and Slurm job scripts
//! from arbitrary names, paths and options, which must either be refused or hold
//! exactly the lines the tool means to write, each `#SBATCH` line one option and
//! the command line one command.

use arbitrary::{Result, Unstructured};
use spu_sweep::slurm::{Batch, SlurmOptions, script};
use std::path::{Path, PathBuf};

/// What a private file outside the spec's folder holds; no message may show it.
const SECRET: &str = "hunter2";

/// A study folder (`study/`: vecadd, a machine file, a model extending the
/// default) beside a private one (`private/`: a kernel, a machine file and a
/// model holding [`SECRET`]), with links from the study into the private folder.
struct Fixture {
    _dir: tempfile::TempDir,
    study: PathBuf,
}

impl Fixture {
    /// The folders, made once per thread and removed when it ends (making them
    /// per input would slow the fuzzer sevenfold).
    fn with<T>(f: impl FnOnce(&Fixture) -> T) -> Option<T> {
        thread_local! {
            static FIXTURE: Option<Fixture> = Fixture::new();
        }
        FIXTURE.with(|x| x.as_ref().map(f))
    }

    fn new() -> Option<Fixture> {
        let dir = tempfile::tempdir().ok()?;
        let study = dir.path().join("study");
        let private = dir.path().join("private");
        for d in [&study, &private] {
            std::fs::create_dir(d).ok()?;
        }
        let write = |p: PathBuf, text: &str| std::fs::write(p, text).ok();
        write(
            study.join("vecadd.spu"),
            include_str!("../../../samples/vecadd.spu"),
        )?;
        write(
            study.join("m.toml"),
            include_str!("../../../machine/machines/spu-4x4.toml"),
        )?;
        write(
            study.join("e.toml"),
            "[model]\nname = \"e\"\nextends = \"default\"\n",
        )?;
        write(
            private.join("k.spu"),
            &format!(".param .u32 {SECRET} = 1;\n{SECRET} {SECRET};\n"),
        )?;
        write(private.join("m.toml"), &format!("{SECRET} = \n"))?;
        write(
            private.join("e.toml"),
            &format!("[model]\nname = \"{SECRET}\"\nextends = \"default\"\n{SECRET}\n"),
        )?;
        for name in ["k.spu", "m.toml", "e.toml"] {
            let _ = std::os::unix::fs::symlink(private.join(name), study.join(format!("l{name}")));
        }
        let study = study.canonicalize().ok()?;
        Some(Fixture { _dir: dir, study })
    }
}

/// Largest plan planned (bigger ones are parsed only: planning resolves every run).
const MAX_FUZZ_RUNS: usize = 2000;

/// A spec from arbitrary text in the study folder, parsed and planned with every
/// extra it names. A plan reads only files in the folder; a message never shows
/// the private files' text, and stays short however long the spec's values.
/// True when the spec planned.
pub fn spec_plan(data: &[u8]) -> bool {
    Fixture::with(|f| plan_in(f, data)).unwrap_or(false)
}

fn plan_in(f: &Fixture, data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    let spec = match spu_sweep::spec::Spec::parse("fuzz.toml", &text, &f.study, "fuzz") {
        Ok(s) => s,
        Err(e) => {
            check_message(&text, &e.rendered(), e.problems.len());
            return false;
        }
    };
    let runs = spec.axes.iter().try_fold(1usize, |n, a| {
        let extra: usize = a
            .extra
            .iter()
            .map(|(_, _, c)| c.first().map_or(0, |c| c.values.len()))
            .sum();
        n.checked_mul(a.len() + extra)
    });
    if runs.is_none_or(|n| n > MAX_FUZZ_RUNS) {
        return false;
    }
    match spu_sweep::plan::plan(&spec, &spec.extra_names()) {
        Ok(plan) => {
            assert!(plan.runs.len() <= spu_sweep::plan::MAX_RUNS);
            for p in &plan.inputs {
                assert!(p.starts_with(&f.study), "the plan read {}", p.display());
            }
            for r in &plan.runs {
                assert!(r.kernel.starts_with(&f.study), "{}", r.kernel.display());
                let model = Path::new(&r.model);
                assert!(
                    !model.is_absolute() || model.starts_with(&f.study),
                    "{}",
                    r.model
                );
                assert!(
                    !r.model.contains(SECRET) && !r.machine.iter().any(|(_, v)| v.contains(SECRET))
                );
            }
            // The plan file reads back as the plan it was written from.
            let bytes = spu_sweep::plan::file::to_bytes(&plan);
            assert_eq!(bytes.len() as u64, spu_sweep::plan::file::size(&plan));
            let back = spu_sweep::plan::file::from_bytes(&bytes, "plan.json");
            assert_eq!(back.as_ref(), Ok(&plan));
            true
        }
        Err(spu_sweep::Error::Spec(e)) => {
            check_message(&text, &e.rendered(), e.problems.len());
            false
        }
        Err(other) => {
            check_message(&text, &other.to_string(), 1);
            false
        }
    }
}

/// A message about `spec`: it never shows the private files, and each of its
/// problems is a few lines of bounded length.
fn check_message(spec: &str, message: &str, problems: usize) {
    if !spec.contains(SECRET) {
        assert!(
            !message.contains(SECRET),
            "a private file was quoted:\n{message}"
        );
    }
    // A problem quotes at most a few lines of the spec, each cut to ~120 bytes;
    // the messages themselves shorten what they quote.
    let limit = 4096 + problems * 4096;
    assert!(
        message.len() <= limit,
        "{} bytes for {problems} problems",
        message.len()
    );
}

/// Text for a value in a script: mostly printable, sometimes with the characters
/// that matter to a shell or to `sbatch`.
fn nasty(u: &mut Unstructured) -> Result<String> {
    const PIECES: &[&str] = &[
        "\n",
        "\r",
        "\0",
        "\t",
        " ",
        "'",
        "\"",
        "\\",
        "#",
        "%",
        "$(touch PWNED)",
        "`id`",
        ";",
        "&&",
        "|",
        "$SLURM_ARRAY_TASK_ID",
        "\u{2028}",
        "\u{85}",
        "a",
        "short",
        "--x=1",
        "/",
    ];
    let mut s = String::new();
    for _ in 0..u.int_in_range(0..=8)? {
        if u.ratio(1, 3)? {
            s.push_str(u.arbitrary::<&str>()?);
        } else {
            s.push_str(u.choose(PIECES)?);
        }
    }
    Ok(s)
}

/// Mostly one of `plain` (values a user would give, some odd but harmless),
/// otherwise [`nasty`] text.
fn value(u: &mut Unstructured, plain: &[&str]) -> Result<String> {
    if u.ratio(2, 3)? {
        Ok(u.choose(plain)?.to_string())
    } else {
        nasty(u)
    }
}

/// Mostly one of `usual` (including limits), otherwise any number.
fn number(u: &mut Unstructured, usual: &[u64]) -> Result<u64> {
    if u.ratio(3, 4)? {
        Ok(*u.choose(usual)?)
    } else {
        u.arbitrary()
    }
}

/// 64 hexadecimal digits, as a plan's SHA-256 is written.
fn hex64(u: &mut Unstructured) -> Result<String> {
    let bytes: [u8; 32] = u.arbitrary()?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A job script from arbitrary names, paths, options and numbers: refused, or made
/// of exactly the lines the tool writes (shebang, one comment, one `#SBATCH` line
/// per option, each read back by `sbatch` as that one option, and the one `exec`
/// command with exactly its words). True when a script was written.
pub fn slurm_script(data: &[u8]) -> bool {
    let mut u = Unstructured::new(data);
    let Ok((dir, exe, name, opts, batch)) = (|| -> Result<_> {
        let dir = format!(
            "/{}",
            value(
                &mut u,
                &[
                    "home/u/study.sweep",
                    "tmp/we ird $(x) `y` \"q\" 'q' #%j",
                    "p/\u{2028}"
                ]
            )?
        );
        let exe = format!(
            "/{}",
            value(&mut u, &["usr/bin/spu-sweep", "o p/it's/spu-sweep"])?
        );
        let name = value(&mut u, &["ok", "a-b_c.d", ""])?;
        let partition = if u.arbitrary()? {
            Some(value(&mut u, &["short", "long,short", "gpu-a_1.x"])?)
        } else {
            None
        };
        let mut sbatch_args = Vec::new();
        for _ in 0..u.int_in_range(0..=3)? {
            sbatch_args.push(format!(
                "-{}",
                value(
                    &mut u,
                    &["-account=abc", "-comment=a b\"c#d $(x)", "-qos='q'", ""]
                )?
            ));
        }
        let opts = SlurmOptions {
            partition,
            max_parallel: u.arbitrary()?,
            runs_per_task: 1,
            time_min: if u.arbitrary()? {
                Some(number(&mut u, &[1, 60, 4_294_967_293, 4_294_967_294])?)
            } else {
                None
            },
            sbatch_args,
            wait: false,
            dry_run: false,
        };
        let tasks: Vec<Vec<String>> = (0..u.int_in_range(0..=4)?)
            .map(|_| Ok(vec!["r".to_string(); u.int_in_range(1..=3)?]))
            .collect::<Result<_>>()?;
        let batch = Batch {
            batch: u.int_in_range(0..=1000)?,
            tasks,
            job_id: None,
            timeout_s: number(&mut u, &[1, 3600, 365 * 24 * 3600])?,
            memory_mib: number(&mut u, &[16, 4096, 1 << 30, u64::MAX - 255])?,
            // Any text, or a well-formed hash: only 64 hex digits may reach the script.
            plan_sha256: if u.arbitrary()? {
                Some(hex64(&mut u)?)
            } else {
                u.arbitrary::<Option<String>>()?
            },
        };
        Ok((dir, exe, name, opts, batch))
    })() else {
        return false;
    };
    let Ok(text) = script(Path::new(&dir), Path::new(&exe), &name, &batch, &opts) else {
        return false;
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let directives = 7 + usize::from(opts.partition.is_some()) + opts.sbatch_args.len();
    assert_eq!(lines.len(), directives + 4, "a line was added:\n{text}");
    assert_eq!(lines[0], "#!/bin/bash");
    assert!(lines[1].starts_with("# spu-sweep: batch "), "{text}");
    assert_eq!(
        *lines.last().expect("lines"),
        "",
        "the script ends with a newline"
    );
    let mut expected: Vec<String> = Vec::new();
    for d in &lines[2..2 + directives] {
        let rest = d
            .strip_prefix("#SBATCH ")
            .unwrap_or_else(|| panic!("{text}"));
        let args = sbatch_arguments(rest);
        assert_eq!(args.len(), 1, "`{d}` is not one option:\n{text}");
        expected.push(args[0].clone());
    }
    // The options given come last, each exactly as given.
    let given: Vec<String> = opts
        .partition
        .iter()
        .map(|p| format!("--partition={p}"))
        .chain(opts.sbatch_args.iter().cloned())
        .collect();
    assert_eq!(expected[7..], given[..], "{text}");
    assert_eq!(
        expected[2],
        format!(
            "--output={}/slurm/logs/batch-{}-%a.out",
            dir.replace('%', "%%"),
            batch.batch
        )
    );
    let words = shell_words(lines[directives + 2]);
    let batch_number = batch.batch.to_string();
    let mut want = vec![
        "exec",
        exe.as_str(),
        "exec-task",
        dir.as_str(),
        "--batch",
        batch_number.as_str(),
        "--task",
        "$SLURM_ARRAY_TASK_ID",
    ];
    // A script is made only with a well-formed plan hash, which its tasks check
    // with the batch's own.
    let Some(h) = &batch.plan_sha256 else {
        panic!("a script without a plan hash:\n{text}");
    };
    assert!(
        h.len() == 64 && h.bytes().all(|c| c.is_ascii_hexdigit()),
        "a script with the hash `{h}`:\n{text}"
    );
    let work = batch.work_sha256();
    want.extend(["--plan-sha256", h.as_str(), "--batch-sha256", work.as_str()]);
    assert_eq!(words, want, "{text}");
    true
}

/// The arguments `sbatch` reads from the rest of an `#SBATCH` line: quotes group,
/// a backslash takes the next character as it is, an unquoted `#` ends the line,
/// a newline ends everything (as Slurm's `_get_argument` reads them).
pub fn sbatch_arguments(line: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars
            .peek()
            .is_some_and(|c| c.is_ascii_whitespace() && *c != '\n')
        {
            chars.next();
        }
        match chars.peek() {
            None | Some('\n') => return args,
            _ => {}
        }
        let mut arg = String::new();
        let mut quote: Option<char> = None;
        while let Some(&c) = chars.peek() {
            if c == '\n' || quote.is_none() && c.is_ascii_whitespace() {
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

/// The words bash makes of a simple command line of plain, single-quoted and
/// double-quoted parts (enough for the script's one command; a `$` inside double
/// quotes is kept as written). `None`-like input (an unclosed quote) gives a word
/// marking it, so a comparison fails.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        if chars.peek().is_none() {
            return words;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c == ' ' {
                break;
            }
            chars.next();
            match c {
                '\'' => loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return vec!["<unclosed quote>".into()],
                    }
                },
                '"' => loop {
                    match chars.next() {
                        Some('"') => break,
                        Some(c) => word.push(c),
                        None => return vec!["<unclosed quote>".into()],
                    }
                },
                '\\' => word.extend(chars.next()),
                c => word.push(c),
            }
        }
        words.push(word);
    }
}
