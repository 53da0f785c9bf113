//! The plan file a sweep writes is one its own commands read back: it stays small
//! per run (what runs share is written once), a spec whose plan would be larger
//! than the commands read is refused when it is planned, a plan of another format
//! is refused with the way out, and `status` names a damaged Slurm batch record.

use std::path::{Path, PathBuf};

mod common;
use common::{sweep_in, text};

/// A folder with `vecadd.spu` and `spec.toml` holding `spec`.
fn setup(spec: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        dir.path().join("vecadd.spu"),
    )
    .unwrap();
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    dir
}

/// A spec of `n` runs (one `D.N` axis) and two machines, planned as a Slurm dry run
/// into `o/`; returns the folder.
fn planned(n: usize) -> (tempfile::TempDir, PathBuf) {
    let values: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    let dir = setup(&format!(
        "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nmachine = [\"spu-4x4\", \"spu-8x8\"]\n[[axis]]\nD.N = [{}]\n",
        values.join(", ")
    ));
    let o = sweep_in(
        dir.path(),
        &["run", "spec.toml", "--slurm", "--dry-run", "--out", "o"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = dir.path().join("o");
    (dir, out)
}

#[test]
fn a_plan_costs_little_per_run_and_its_commands_read_it() {
    let (dir, out) = planned(500);
    for file in ["plan.json", "slurm/batch-0.plan.json"] {
        let bytes = std::fs::metadata(out.join(file)).unwrap().len();
        // Each run once cost its whole machine (about 4.7 KB); 100 000 runs must
        // stay far below the 64 MiB the commands read.
        assert!(bytes / 1000 < 200, "{file}: {bytes} bytes for 1000 runs");
    }
    let o = sweep_in(dir.path(), &["status", "o"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("1000 runs"), "{}", text(&o.stdout));
    // The plan read back holds both machines, whole.
    let o = sweep_in(dir.path(), &["plan", "spec.toml", "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["machines"].as_array().unwrap().len(), 2, "{plan}");
    assert_eq!(plan["runs"].as_array().unwrap().len(), 1000);
}

#[test]
fn a_spec_whose_plan_would_be_too_large_to_read_back_is_refused_when_planned() {
    // 100 x 100 runs, each with a 10 000-character label: about 100 MB of plan.
    let long: Vec<String> = (0..100)
        .map(|i| format!("\"{i}{}\"", "x".repeat(10_000)))
        .collect();
    let ns: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    let dir = setup(&format!(
        "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nlabel.case = [{}]\n[[axis]]\nD.N = [{}]\n",
        long.join(", "),
        ns.join(", ")
    ));
    let o = sweep_in(
        dir.path(),
        &["run", "spec.toml", "--slurm", "--dry-run", "--out", "o"],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the plan of these 10000 runs would")
            && err.contains("the 64 MiB the sweep's commands read back")
            && err.contains("at most about 6"),
        "{err}"
    );
    assert!(!dir.path().join("o/plan.json").exists());
}

#[test]
fn a_plan_of_an_older_format_is_refused_with_the_way_out() {
    let (dir, out) = planned(2);
    let path = out.join("plan.json");
    let mut plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    plan.as_object_mut().unwrap().remove("format");
    std::fs::write(&path, serde_json::to_vec(&plan).unwrap()).unwrap();
    for cmd in ["status", "collect"] {
        let o = sweep_in(dir.path(), &[cmd, "o"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("plan.json") && err.contains("planned by an older spu-sweep"),
            "{cmd}: {err}"
        );
        assert!(err.contains("plan again"), "{cmd}: {err}");
    }
}

#[test]
fn status_names_a_damaged_batch_record() {
    let (dir, out) = planned(2);
    std::fs::write(
        out.join("slurm/batch-0.json"),
        "{\"batch\": 0, \"tasks\": [",
    )
    .unwrap();
    let o = sweep_in(dir.path(), &["status", "o"]);
    let report = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        report.contains("damaged Slurm batch record") && report.contains("slurm/batch-0.json"),
        "{report}"
    );
    let o = sweep_in(dir.path(), &["status", "o", "--format", "json"]);
    let status: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let file = status["damaged_batches"][0]["file"].as_str().unwrap();
    assert!(file.ends_with("slurm/batch-0.json"), "{status}");
}

#[test]
fn planning_stops_as_soon_as_the_plan_is_too_large() {
    // 100 000 runs of 40 000-character labels: 4 GB of plan, which planning must
    // not hold; it stops after the first runs that fill the limit.
    let long: Vec<String> = (0..100)
        .map(|i| format!("\"{i}{}\"", "y".repeat(40_000)))
        .collect();
    let ns: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
    let dir = setup(&format!(
        "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nlabel.case = [{}]\n[[axis]]\nD.N = [{}]\n",
        long.join(", "),
        ns.join(", ")
    ));
    let o = sweep_in(dir.path(), &["plan", "spec.toml"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the plan of these 100000 runs would be larger than the 64 MiB")
            && err.contains("the first 16")
            && err.contains("at most about 16"),
        "{err}"
    );
}

/// `status` and `collect` of `o/`: both must fail naming `plan.json`, `what`, and
/// the way out.
fn refused(dir: &Path, what: &str) {
    for cmd in ["status", "collect"] {
        let o = sweep_in(dir, &[cmd, "o"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("plan.json") && err.contains(what) && err.contains("plan again"),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn a_plan_edited_to_break_its_runs_is_refused_naming_the_entry() {
    let (dir, out) = planned(2);
    let path = out.join("plan.json");
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut plan = original.clone();
        f(&mut plan);
        std::fs::write(&path, serde_json::to_vec(&plan).unwrap()).unwrap();
    };
    // Two different runs given one id: `status` and `collect` would count them
    // apart.
    edit(&|p| p["runs"][1]["id"] = p["runs"][0]["id"].clone());
    refused(dir.path(), "runs 0 and 1 have the same id");
    // More runs than a sweep may have.
    edit(&|p| {
        let run = p["runs"][0].clone();
        *p["runs"].as_array_mut().unwrap() = vec![run; 120_000];
    });
    refused(dir.path(), "it has 120000 runs, more than the 100000");
    edit(&|p| p["runs"].as_array_mut().unwrap().clear());
    refused(dir.path(), "it has no runs");
    // An id names the run's record file.
    edit(&|p| p["runs"][2]["id"] = "../../x".into());
    refused(
        dir.path(),
        "run 2 has the id `../../x`, but run ids are 16 hex digits",
    );
    edit(&|p| p["runs"][3]["model"] = 5.into());
    refused(dir.path(), "run 3 names model 5, but the plan has 1");
    // Records get at most the inputs' permission bits: set-id bits are none.
    edit(&|p| p["file_mode"] = 0o4777.into());
    refused(dir.path(), "its `file_mode` is 0o4777, not permission bits");
    // Rows that differ only in their column values are one run, with one id.
    edit(&|p| {
        let mut run = p["runs"][0].clone();
        run["values"][1] = "99".into();
        p["runs"][1] = run;
    });
    let o = sweep_in(dir.path(), &["status", "o"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("3 runs"), "{}", text(&o.stdout));
}
