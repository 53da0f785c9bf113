//! Commands on a results folder someone changed by hand, and `plot` on it: a
//! record replaced by a folder is named as a folder to remove (by `status`,
//! `collect` and `run` alike, and never removed), a folder of the results folder
//! that is a link is refused by every command that reads it, `plot --y` says
//! what it takes, `plot` makes its default `plots/` folder, after checking
//! the metric, and `plot -o` never writes a new file among the folder's own.

use std::path::Path;

mod common;
use common::{sweep, text};

/// Two runs of vecadd, with a plot and a summary table when `reports`; returns
/// (guard, spec, results folder), the sweep run.
fn finished(reports: bool) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        dir.path().join("vecadd.spu"),
    )
    .unwrap();
    let mut body = "name = \"f\"\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [256, 512]\nlabel.case = [\"a\", \"b\"]\n".to_string();
    if reports {
        body.push_str("[[plot]]\nname = \"p\"\nx = \"N\"\ny = \"cycles\"\n[[table]]\nname = \"t\"\nrows = \"case\"\ncolumns = \"N\"\nvalue = \"cycles\"\n");
    }
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, body).unwrap();
    let out = dir.path().join("out").display().to_string();
    let spec = spec.display().to_string();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    (dir, spec, out)
}

/// The first run record in the results folder `out`.
fn first_record(out: &Path) -> std::path::PathBuf {
    std::fs::read_dir(out.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

#[test]
fn a_record_replaced_by_a_folder_is_named_for_removal_not_promised_a_redo() {
    let (_d, spec, out) = finished(false);
    let record = first_record(Path::new(&out));
    std::fs::remove_file(&record).unwrap();
    std::fs::create_dir(&record).unwrap();
    std::fs::write(record.join("mine.txt"), "kept\n").unwrap();
    let shown = record.display().to_string();
    let remove = format!("remove the folder `{shown}`");
    for cmd in ["status", "collect"] {
        let o = sweep(&[cmd, &out]);
        let all = text(&o.stdout) + &text(&o.stderr);
        assert!(o.status.success(), "{cmd}: {all}");
        assert!(all.contains(&remove), "{cmd}: {all}");
        // The advice to run again is for records `run` can replace; it cannot
        // replace a folder.
        assert!(!all.contains("it replaces each one"), "{cmd}: {all}");
    }
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&remove), "{err}");
    assert!(!err.contains("it is a directory"), "{err}");
    // The folder is the user's: never removed.
    assert_eq!(
        std::fs::read_to_string(record.join("mine.txt")).unwrap(),
        "kept\n"
    );
    // Once it is removed, the run is done again.
    std::fs::remove_dir_all(&record).unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(record.is_file());
}

#[test]
fn plot_makes_its_default_folder_and_names_a_wrong_metric_first() {
    let (_d, _spec, out) = finished(false);
    let plots = Path::new(&out).join("plots");
    assert!(!plots.exists());
    // A wrong metric is named as such, and nothing is made.
    let o = sweep(&["plot", &out, "--x", "N", "--y", "nonexistent.metric"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`nonexistent.metric` is not a metric of the finished runs"),
        "{err}"
    );
    assert!(!err.contains("does not exist"), "{err}");
    assert!(!plots.exists());
    let o = sweep(&["plot", &out, "--x", "N", "--y", "cycles"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let svg = plots.join("cycles.svg");
    assert_eq!(text(&o.stdout).trim(), svg.display().to_string());
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
}

#[test]
fn plot_y_given_a_column_says_it_takes_a_metric() {
    let (d, _spec, out) = finished(false);
    let svg = d.path().join("n.svg").display().to_string();
    let o = sweep(&["plot", &out, "--x", "case", "--y", "N", "-o", &svg]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`N` is a column of the sweep, not a metric: y takes a metric"),
        "{err}"
    );
    assert!(!err.contains("neither a column nor a metric"), "{err}");
    assert!(!Path::new(&svg).exists());
}

#[test]
fn every_command_refuses_a_folder_of_the_results_folder_that_is_a_link() {
    let (d, spec, out) = finished(true);
    let out_dir = Path::new(&out);
    let elsewhere = d.path().join("elsewhere");
    for sub in ["runs", "running", "plots", "tables", "slurm"] {
        let at = out_dir.join(sub);
        let kept = d.path().join(format!("kept-{sub}"));
        if at.exists() {
            std::fs::rename(&at, &kept).unwrap();
        } else {
            std::fs::create_dir(&kept).unwrap();
        }
        // The folder moved out, and a link to it in its place.
        std::fs::rename(&kept, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &at).unwrap();
        let commands: [&[&str]; 6] = [
            &["status", &out],
            &["status", &out, "--format", "json"],
            &["collect", &out],
            &["metrics", &out],
            &["plot", &out],
            &["plan", &spec, "--out", &out],
        ];
        for args in commands {
            let o = sweep(args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{sub}, {args:?}: {err}");
            assert!(
                err.contains(&format!(
                    "`{out}/{sub}` is a symbolic link; a results folder holds its own files and folders: remove it"
                )),
                "{sub}, {args:?}: {err}"
            );
            assert!(o.stdout.is_empty(), "{sub}, {args:?}: {}", text(&o.stdout));
        }
        std::fs::remove_file(&at).unwrap();
        std::fs::rename(&elsewhere, &at).unwrap();
    }
    let o = sweep(&["status", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// `plot -o` into `runs/`, `running/` or `slurm/`, at a file not there yet, is
/// refused and writes nothing: an SVG named like a pending run's record
/// was taken for a damaged record.
#[test]
fn plot_o_never_writes_a_new_file_among_the_results_folders_own() {
    let (_d, _spec, out) = finished(false);
    let o = Path::new(&out);
    let runs = o.join("runs");
    let record = first_record(o);
    // The run is pending again: its record's name is free.
    std::fs::remove_file(&record).unwrap();
    std::fs::create_dir_all(o.join("running")).unwrap();
    std::fs::create_dir_all(o.join("slurm")).unwrap();
    std::fs::create_dir_all(o.join("tables")).unwrap();
    let id = record.file_stem().unwrap().to_str().unwrap().to_string();
    let spelled = format!("{out}/plots/../runs/x.svg");
    let targets = [
        record.display().to_string(),
        runs.join("anything.svg").display().to_string(),
        o.join("running").join(&id).display().to_string(),
        o.join("slurm/batch-0.sh").display().to_string(),
        o.join("tables/t.md").display().to_string(),
        spelled,
    ];
    std::fs::create_dir_all(o.join("plots")).unwrap();
    for t in &targets {
        let r = sweep(&["plot", &out, "--x", "N", "--y", "cycles", "-o", t]);
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{t}: {err}");
        assert!(
            err.contains("which spu-sweep keeps for itself"),
            "{t}: {err}"
        );
        assert!(!Path::new(t).exists(), "{t} was written");
    }
    // The summary report `collect` writes is not a plot's either.
    let tables = o.join("tables.md");
    let before = std::fs::read(&tables).ok();
    let r = sweep(&[
        "plot",
        &out,
        "--x",
        "N",
        "--y",
        "cycles",
        "-o",
        tables.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r.stderr));
    assert_eq!(std::fs::read(&tables).ok(), before);
    let o = sweep(&["status", &out]);
    let all = text(&o.stdout) + &text(&o.stderr);
    assert!(o.status.success(), "{all}");
    assert!(!all.contains("damaged"), "{all}");
}

/// An input of the sweep inside one of the folders whose files spu-sweep
/// writes (`slurm/` here, where `--slurm --dry-run` writes its job scripts) is
/// refused before anything is written, whether or not a file of spu-sweep's
/// has that name yet.
#[test]
fn an_input_inside_a_folder_spu_sweep_writes_is_refused() {
    let (dir, spec, out) = finished(false);
    let slurm = Path::new(&out).join("slurm");
    std::fs::create_dir_all(&slurm).unwrap();
    let precious = "// my definitions\n";
    let header = slurm.join("batch-0.sh");
    std::fs::write(&header, precious).unwrap();
    let kernel = dir.path().join("vecadd.spu");
    let text_of = std::fs::read_to_string(&kernel).unwrap();
    std::fs::write(
        &kernel,
        format!("#include \"out/slurm/batch-0.sh\"\n{text_of}"),
    )
    .unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--slurm", "--dry-run"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a folder whose files spu-sweep writes"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&header).unwrap(), precious);
}

/// A run's failure is told by what it is, not by the words of its message: an
/// assembly error quoting "could not allocate that much" is an assembly error,
/// not the run's memory bound.
#[test]
fn a_failure_is_classified_by_its_kind_not_its_words() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.spu"),
        "#error could not allocate that much shared memory\n",
    )
    .unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(&spec, "[base]\nkernel = \"bad.spu\"\n").unwrap();
    let out = dir.path().join("res").display().to_string();
    let o = sweep(&[
        "run",
        &spec.display().to_string(),
        "--out",
        &out,
        "--jobs",
        "1",
    ]);
    let all = text(&o.stdout) + &text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{all}");
    assert!(all.contains("does not assemble"), "{all}");
    assert!(!all.contains("memory bound"), "{all}");
    let csv = std::fs::read_to_string(Path::new(&out).join("results.csv")).unwrap();
    assert!(
        csv.contains("does not assemble") && !csv.contains("memory bound"),
        "{csv}"
    );
}
