//! What a sweep writes: its files are no more readable than its inputs, a spec
//! cannot make it read (and quote) files outside its folder, `plot -o` never
//! overwrites a file of the sweep, and functional runs are recorded with the
//! emulator's metrics instead of failing (and `metrics` lists the keys of all
//! finished runs).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

mod common;
use common::{sweep, text};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// A folder with `spec.toml` (`body`) and vecadd; returns (guard, spec, results).
fn setup(body: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        dir.path().join("vecadd.spu"),
    )
    .unwrap();
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, body).unwrap();
    let out = dir.path().join("out");
    (dir, spec.display().to_string(), out.display().to_string())
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn results_are_no_more_readable_than_their_inputs() {
    // A kernel only its owner may read, which does not assemble: its record quotes it.
    let (d, spec, out) =
        setup("name = \"private\"\n[[axis]]\nkernel = [\"vecadd.spu\", \"mine.spu\"]\n");
    let kernel = d.path().join("mine.spu");
    std::fs::write(&kernel, ".entry k {\n    password_hunter2 %r1;\n}\n").unwrap();
    std::fs::set_permissions(&kernel, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let written = files(Path::new(&out));
    assert!(written.len() >= 6, "{written:?}");
    for f in &written {
        if f.starts_with(Path::new(&out).join("running")) {
            continue;
        }
        assert_eq!(mode(f) & 0o077, 0, "{} is {:o}", f.display(), mode(f));
    }
    // The record does quote the kernel, which is why it is private.
    let quoted = written
        .iter()
        .filter(|f| f.starts_with(Path::new(&out).join("runs")))
        .any(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains("password_hunter2")
        });
    assert!(quoted, "the failed run's record holds its diagnostics");
    // Plots drawn later keep the rule.
    let svg = d.path().join("p.svg");
    let o = sweep(&[
        "plot",
        &out,
        "--x",
        "kernel",
        "--y",
        "offchip.words",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(mode(&svg) & 0o077, 0, "{:o}", mode(&svg));

    // Readable inputs keep the usual modes.
    let (_d, spec, out) = setup("name = \"open\"\n[base]\nkernel = \"vecadd.spu\"\nD.N = 64\n");
    std::fs::set_permissions(&spec, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(
        Path::new(&spec).with_file_name("vecadd.spu"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let o = sweep(&["run", &spec, "--out", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = Path::new(&out).join("results.csv");
    let probe = Path::new(&out).join("probe");
    std::fs::write(&probe, "").unwrap();
    assert_eq!(mode(&csv), mode(&probe));
}

#[test]
fn a_spec_cannot_make_a_sweep_quote_a_file_outside_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "root:hunter2:0:0\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let study = dir.path().join("study");
    std::fs::create_dir(&study).unwrap();
    let spec = study.join("spec.toml");
    let out = study.join("out").display().to_string();
    for body in [
        "[base]\nkernel = \"../secret.txt\"\n",
        "[base]\nkernel = \"../../../../../../../etc/shadow\"\n",
        "[base]\nkernel = \"x.spu\"\nmachine = \"/etc/passwd\"\n",
        "model = \"/etc/shadow\"\n[base]\nkernel = \"x.spu\"\n",
        "model = \"../secret.toml\"\n[base]\nkernel = \"x.spu\"\n",
    ] {
        std::fs::write(study.join("x.spu"), "exit;\n").unwrap();
        std::fs::write(dir.path().join("secret.toml"), "root:hunter2:0:0\n").unwrap();
        std::fs::write(&spec, body).unwrap();
        let o = sweep(&["run", spec.to_str().unwrap(), "--out", &out]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{body}: {err}");
        assert!(
            !err.contains("hunter2") && !err.contains("root:x"),
            "{body}: {err}"
        );
        assert!(!Path::new(&out).exists(), "{body}: results were written");
    }
}

#[test]
fn plot_never_overwrites_a_file_of_the_sweep() {
    let (d, spec, out) =
        setup("name = \"p\"\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [64, 128]\n");
    let o = sweep(&["run", &spec, "--out", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let record = std::fs::read_dir(Path::new(&out).join("runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let o = Path::new(&out);
    let victims = [
        o.join("plan.json"),
        record,
        o.join("results.csv"),
        o.join("results.jsonl"),
        o.join("spec.toml"),
        o.join("manifest.json"),
        PathBuf::from(&spec),
        d.path().join("vecadd.spu"),
        // Spelled another way, it is still the plan.
        o.join("runs/../plan.json"),
    ];
    for v in victims {
        let before = std::fs::read(&v).unwrap();
        let r = sweep(&[
            "plot",
            &out,
            "--x",
            "N",
            "--y",
            "offchip.words",
            "-o",
            v.to_str().unwrap(),
        ]);
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{}: {err}", v.display());
        assert!(
            err.contains("would overwrite the input"),
            "{}: {err}",
            v.display()
        );
        assert_eq!(
            std::fs::read(&v).unwrap(),
            before,
            "{} changed",
            v.display()
        );
    }
    // The sweep still works.
    assert!(sweep(&["status", &out]).status.success());
    let r = sweep(&["run", &spec, "--out", &out]);
    assert!(
        text(&r.stderr).contains("nothing to simulate"),
        "{}",
        text(&r.stderr)
    );
}

#[test]
fn functional_runs_are_recorded_without_energy() {
    let (_d, spec, out) = setup(
        "name = \"f\"\n[base]\nkernel = \"vecadd.spu\"\nD.N = 256\n[[axis]]\nfunctional = [true, false]\n",
    );
    let o = sweep(&["run", &spec, "--out", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("warning"), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(Path::new(&out).join("results.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| {
        rows[0]
            .iter()
            .position(|c| *c == name || c.starts_with(&format!("{name} [")))
            .unwrap_or_else(|| panic!("no {name}: {csv}"))
    };
    let (status, words, total, cycles) = (
        col("status"),
        col("offchip.words"),
        col("energy.total_j"),
        col("cycles"),
    );
    // Functional mode moves the same words; it has no time, so no energy.
    assert_eq!(rows[1][status], "done", "{csv}");
    assert_eq!(rows[1][words], "768", "{csv}");
    assert_eq!(rows[1][total], "", "{csv}");
    assert_eq!(rows[1][cycles], "", "{csv}");
    assert_eq!(rows[2][words], "768", "{csv}");
    assert_ne!(rows[2][total], "", "{csv}");
    // `metrics` lists the keys of every finished run, not only the first (functional)
    // one's: the timing run's energy, cycles, ipc and time are there, with its value.
    let o = sweep(&["metrics", &out]);
    let m = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for key in ["energy.total_j", "cycles", "ipc", "time_s", "offchip.words"] {
        assert!(
            m.lines().any(|l| l.split_whitespace().next() == Some(key)),
            "{key} missing:\n{m}"
        );
    }
    let cycles = m.lines().filter(|l| l.trim_start().starts_with("cycles "));
    assert_eq!(cycles.count(), 1, "{m}");
}

#[test]
fn files_replaced_after_planning_are_not_read() {
    // A model and a kernel, planned; then, before the (Slurm) task runs, each is
    // replaced by a link to a private file elsewhere.
    let (d, spec, out) =
        setup("name = \"late\"\nmodel = \"e.toml\"\n[base]\nkernel = \"vecadd.spu\"\nD.N = 64\n");
    std::fs::write(
        d.path().join("e.toml"),
        "[model]\nname = \"e\"\nextends = \"default\"\n",
    )
    .unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--slurm", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let private = tempfile::tempdir().unwrap();
    let secret_model = private.path().join("s.toml");
    std::fs::write(&secret_model, "hunter2 hunter2\n").unwrap();
    let secret_kernel = private.path().join("s.spu");
    std::fs::write(&secret_kernel, "hunter2 hunter2;\n").unwrap();
    for (file, secret) in [("e.toml", &secret_model), ("vecadd.spu", &secret_kernel)] {
        let path = d.path().join(file);
        let saved = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(secret, &path).unwrap();
        // The task as the job script runs it, with the hashes it checks.
        let log = common::run_first_task(Path::new(&out));
        assert!(
            log.contains("changed since the sweep was planned"),
            "{file}: {log}"
        );
        for f in files(Path::new(&out)) {
            let t = std::fs::read_to_string(&f).unwrap_or_default();
            assert!(
                !t.contains("hunter2"),
                "{file}: {} quotes the private file",
                f.display()
            );
        }
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, saved).unwrap();
        for f in files(&Path::new(&out).join("runs")) {
            std::fs::remove_file(f).unwrap();
        }
    }
}

/// A write error names the file once: `plot -o /dev/full` said "cannot write
/// `/dev/full`: cannot write `/dev/full`: No space left on device", and so did a
/// report of the results folder that cannot be written.
#[test]
fn a_write_error_names_the_file_once() {
    let (_d, spec, out) =
        setup("name = \"p\"\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [64, 128]\n");
    let o = sweep(&["run", &spec, "--out", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let r = sweep(&["plot", &out, "--x", "N", "--y", "cycles", "-o", "/dev/full"]);
    let err = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        "error: cannot write `/dev/full`: No space left on device (os error 28)\n"
    );
    let csv = Path::new(&out).join("results.csv");
    std::fs::remove_file(&csv).unwrap();
    std::fs::create_dir(&csv).unwrap();
    let r = sweep(&["collect", &out]);
    let err = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        format!(
            "error: cannot write `{}`: it is a directory; give a file name\n",
            csv.display()
        )
    );
}

/// A spec with a plot and a summary table over two runs, for the link tests.
const LINKED: &str = "name = \"linked\"\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [256, 512]\nlabel.case = [\"a\", \"b\"]\n[[plot]]\nname = \"p\"\nx = \"N\"\ny = \"cycles\"\n[[table]]\nname = \"t\"\nrows = \"case\"\ncolumns = \"N\"\nvalue = \"cycles\"\n";

/// A private file outside the results folder, which a planted link points at.
fn victim(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, "precious\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

fn untouched(p: &Path) {
    assert_eq!(
        std::fs::read_to_string(p).unwrap(),
        "precious\n",
        "{} was written through a link",
        p.display()
    );
    assert_eq!(mode(p), 0o600, "{}", p.display());
}

fn record_ids(out: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.trim_end_matches(".json").to_string()
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn links_planted_in_a_results_folder_are_replaced_not_written_through() {
    let (d, spec, out) = setup(LINKED);
    std::fs::write(&spec, LINKED).unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out_dir = Path::new(&out);
    let ids = record_ids(out_dir);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let victims = d.path().join("victims");
    std::fs::create_dir(&victims).unwrap();
    // A finished run's record, a run to do's marker, and every report: all links.
    let mut planted = vec![
        (format!("runs/{}.json", ids[0]), victim(&victims, "record")),
        (format!("running/{}", ids[1]), victim(&victims, "marker")),
    ];
    std::fs::remove_file(out_dir.join(format!("runs/{}.json", ids[1]))).unwrap();
    for f in [
        "results.csv",
        "results.jsonl",
        "plan.json",
        "manifest.json",
        "spec.toml",
        "tables.md",
        "tables/t.md",
        "plots/p.svg",
    ] {
        planted.push((f.to_string(), victim(&victims, &f.replace('/', "-"))));
    }
    for (name, target) in &planted {
        let at = out_dir.join(name);
        let _ = std::fs::remove_file(&at);
        std::os::unix::fs::symlink(target, &at).unwrap();
    }
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The planted record counts as damaged, so its run is done again.
    assert!(
        text(&o.stderr).contains("2 runs, 0 finished, 2 to run"),
        "{}",
        text(&o.stderr)
    );
    for (name, target) in &planted {
        untouched(target);
        let at = out_dir.join(name);
        if name.starts_with("running/") {
            // The marker of the run was replaced, then removed when it ended.
            assert!(at.symlink_metadata().is_err(), "{name} is left");
        } else {
            let m = at.symlink_metadata().unwrap();
            assert!(m.is_file(), "{name} is not a file the sweep wrote");
            assert!(
                std::fs::read_to_string(&at).unwrap() != "precious\n",
                "{name}"
            );
        }
    }
    // Every record reads back.
    let o = sweep(&["status", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("damaged"), "{}", text(&o.stdout));
}

#[test]
fn folders_of_a_results_folder_that_are_links_are_refused() {
    for sub in ["runs", "running", "plots", "tables", "slurm"] {
        let (d, spec, out) = setup(LINKED);
        let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let out_dir = Path::new(&out);
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let at = out_dir.join(sub);
        if at.exists() {
            std::fs::rename(&at, d.path().join(format!("old-{sub}"))).unwrap();
        }
        std::os::unix::fs::symlink(&elsewhere, &at).unwrap();
        if sub == "slurm" {
            // A batch is written only for runs still to do.
            for f in std::fs::read_dir(out_dir.join("runs")).unwrap() {
                std::fs::remove_file(f.unwrap().path()).unwrap();
            }
        }
        let o = match sub {
            "runs" | "running" => sweep(&["run", &spec, "--out", &out, "--jobs", "1"]),
            "slurm" => sweep(&["run", &spec, "--out", &out, "--slurm", "--dry-run"]),
            _ => sweep(&["collect", &out]),
        };
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{sub}: {err}");
        assert!(
            err.contains(&format!(
                "`{out}/{sub}` is a symbolic link; a results folder holds its own files and folders: remove it"
            )),
            "{sub}: {err}"
        );
        assert!(
            std::fs::read_dir(&elsewhere).unwrap().next().is_none(),
            "{sub}: something was written through the link"
        );
    }
}

/// A machine file kept in the results folder as `spec.toml` (a name `run` writes
/// there) is refused before anything is written, not replaced by the spec.
#[test]
fn run_never_writes_over_an_input_kept_in_the_results_folder() {
    let (dir, spec, out) = setup("[base]\nkernel = \"vecadd.spu\"\n");
    let o = sweep(&["run", &spec, "--out", &out, "-j", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let machine = dir.path().join("out/spec.toml");
    std::fs::write(&machine, "[sm]\nmax_threads = 512\n").unwrap();
    let spec2 = dir.path().join("spec2.toml");
    std::fs::write(
        &spec2,
        "[base]\nkernel = \"vecadd.spu\"\nmachine = \"out/spec.toml\"\n",
    )
    .unwrap();
    let o = sweep(&[
        "run",
        &spec2.display().to_string(),
        "--out",
        &out,
        "-j",
        "1",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a file spu-sweep writes in the results folder"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&machine).unwrap(),
        "[sm]\nmax_threads = 512\n"
    );
}

/// A results folder path that names an existing file (the spec, given again as
/// `--out`) is refused before anything is written, saying so and what to give.
#[test]
fn a_results_folder_path_naming_a_file_is_refused() {
    let (d, spec, _) = setup("name = \"good\"\n[base]\nkernel = \"vecadd.spu\"\n");
    let before = std::fs::read(&spec).unwrap();
    let o = sweep(&["run", &spec, "--out", &spec]);
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("names an existing file, the spec itself, not a results folder")
            && err.contains("`--out good.sweep`"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
    assert_eq!(std::fs::read(&spec).unwrap(), before);
    let other = d.path().join("notes.txt");
    std::fs::write(&other, "x").unwrap();
    let o = sweep(&["run", &spec, "--out", &other.display().to_string()]);
    let err = text(&o.stderr);
    assert!(
        err.contains("names an existing file, not a results folder") && !err.contains("the spec"),
        "{err}"
    );
}

/// A file or folder inside a results folder (its plan.json) names the folder to
/// give instead.
#[test]
fn a_path_inside_a_results_folder_names_the_folder() {
    let d = tempfile::tempdir().unwrap();
    let folder = d.path().join("good.sweep");
    std::fs::create_dir_all(folder.join("runs")).unwrap();
    std::fs::write(folder.join("plan.json"), "{}").unwrap();
    for inside in ["plan.json", "runs"] {
        let o = sweep(&["collect", &folder.join(inside).display().to_string()]);
        let err = text(&o.stderr);
        assert!(!o.status.success());
        assert!(
            err.contains(&format!(
                "is inside the results folder `{}`; give the folder itself",
                folder.display()
            )) && !err.contains("no plan.json"),
            "{err}"
        );
    }
    // A path that is not there says so.
    let o = sweep(&["collect", &folder.join("nope").display().to_string()]);
    assert!(
        text(&o.stderr).contains("nope` does not exist; give the folder"),
        "{}",
        text(&o.stderr)
    );
}

/// A component a model prices at 0 reads 0 in `results.csv` for the runs that
/// model priced (it was an empty cell, which means not measured), and stays
/// empty for a functional run, which is not priced.
#[test]
fn a_component_priced_at_zero_reads_zero_not_empty() {
    let (d, spec, out) = setup(
        "name = \"zero\"\nmetrics = [\"energy.components.FPUP\", \"energy.components.BOGUS\"]\n[base]\nkernel = \"vecadd.spu\"\nD.N = 64\n[[axis]]\nlabel.how = [\"priced\", \"free\", \"functional\"]\nmodel = [\"default\", \"zero.toml\", \"default\"]\nfunctional = [false, false, true]\n",
    );
    std::fs::write(
        d.path().join("zero.toml"),
        "[model]\nname = \"zero\"\nextends = \"default\"\n[event_pj]\nFPUP = 0.0\n",
    )
    .unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "-j", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(Path::new(&out).join("results.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = rows[0]
        .iter()
        .position(|h| h.starts_with("energy.components.FPUP"))
        .unwrap_or_else(|| panic!("{csv}"));
    let cell = |how: &str| {
        rows[1..]
            .iter()
            .find(|r| r.contains(&how))
            .unwrap_or_else(|| panic!("{how}: {csv}"))[col]
            .to_string()
    };
    assert!(cell("priced").parse::<f64>().unwrap() > 0.0, "{csv}");
    assert_eq!(cell("free"), "0.0", "{csv}");
    assert_eq!(cell("functional"), "", "{csv}");
    // A name that is no component is not measured, not free.
    let bogus = rows[0]
        .iter()
        .position(|h| h.starts_with("energy.components.BOGUS"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(rows[1..].iter().all(|r| r[bogus].is_empty()), "{csv}");
    assert!(
        text(&o.stderr).contains("no finished run has the metric `energy.components.BOGUS`"),
        "{}",
        text(&o.stderr)
    );
    let jsonl = std::fs::read_to_string(Path::new(&out).join("results.jsonl")).unwrap();
    assert!(
        jsonl.contains("\"how\":\"free\"") && jsonl.contains("\"energy.components.FPUP\":0.0"),
        "{jsonl}"
    );
}

/// A numeric x whose axis would be infinite once padded (a label `inf`, a
/// parameter at the largest double) is drawn as categories; the drawing used to
/// loop for ever. A metric too large for an axis is refused by name.
#[test]
fn plots_of_values_at_the_edge_of_the_doubles_finish() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.spu"),
        ".param .f64 A = 1.0;\n.param .u32 N = 256;\n.launch grid(1) block(32);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    for (name, axis, x) in [
        ("a", "label.x = [\"1\", \"inf\"]\nD.N = [256, 512]", "x"),
        ("b", "D.A = [0.0, 1.7976931348623157e308]", "A"),
    ] {
        let spec = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &spec,
            format!(
                "name = \"{name}\"\n[base]\nkernel = \"k.spu\"\n[[axis]]\n{axis}\n[[plot]]\nname = \"p\"\nx = \"{x}\"\ny = \"cycles\"\n"
            ),
        )
        .unwrap();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_spu-sweep"))
            .args(["run", spec.to_str().unwrap(), "--jobs", "1", "--out"])
            .arg(dir.path().join(format!("out-{name}")))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (code, err) = spu_io::testing::wait_at_most(child, std::time::Duration::from_secs(120));
        assert_eq!(code, Some(0), "{name}: {err}");
        let svg = std::fs::read_to_string(dir.path().join(format!("out-{name}/plots/p.svg")))
            .unwrap_or_else(|e| panic!("{name}: {e}: {err}"));
        assert!(svg.contains("</svg>"), "{name}");
    }
}

/// The files a run's messages may quote besides the kernel keep its records
/// private too: a private header of a kernel that does not assemble (which
/// files it includes is then not known), and a private source beside a binary
/// whose line table names it.
#[test]
fn records_are_no_more_readable_than_the_files_they_may_quote() {
    let private = |p: &Path| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).unwrap();
    };
    let open = |p: &Path| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    };
    let check = |out: &str, secret: &str| {
        let written = files(Path::new(out));
        let quoted: Vec<&PathBuf> = written
            .iter()
            .filter(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains(secret)))
            .collect();
        assert!(!quoted.is_empty(), "nothing quotes {secret}: {written:?}");
        for f in written
            .iter()
            .filter(|f| !f.starts_with(Path::new(out).join("running")))
        {
            assert_eq!(mode(f) & 0o077, 0, "{} is {:o}", f.display(), mode(f));
        }
    };
    // An included header that does not parse.
    let (d, spec, out) = setup("name = \"inc\"\n[base]\nkernel = \"k.spu\"\n");
    let header = d.path().join("secret.h");
    std::fs::write(&header, "PASSWORD_hunter2 = 1;\n").unwrap();
    private(&header);
    let kernel = d.path().join("k.spu");
    std::fs::write(
        &kernel,
        "#include \"secret.h\"\n.launch grid(1) block(32);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    open(&kernel);
    open(Path::new(&spec));
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    check(&out, "PASSWORD_hunter2");

    // A binary whose line table names a private source beside it, run to a fault.
    let (d, spec, out) = setup("name = \"bin\"\n[base]\nkernel = \"k.bin\"\n");
    let source = d.path().join("priv.spu");
    std::fs::write(&source, "PASSWORD_hunter3\n").unwrap();
    private(&source);
    let listing = d.path().join("src.spu");
    std::fs::write(
        &listing,
        ".launch grid(1) block(32);\n.file 0 \"priv.spu\";\n.entry e {\n    .reg .u32 %r<4>;\n\
         .loc 0 1 1\n    mov.u32 %r1, 0x7;\n.loc 0 1 1\n    ld.global.u32 %r2, [%r1];\n    exit;\n}\n",
    )
    .unwrap();
    let bin = d.path().join("k.bin");
    // The workspace's assembler, built beside the sweep tool.
    let asm = Path::new(env!("CARGO_BIN_EXE_spu-sweep")).with_file_name("spu-asm");
    let o = std::process::Command::new(asm)
        .arg(&listing)
        .arg("-o")
        .arg(&bin)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::remove_file(&listing).unwrap();
    open(&bin);
    open(Path::new(&spec));
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    check(&out, "PASSWORD_hunter3");
}
