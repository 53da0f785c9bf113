//! A sweep submitted to a real Slurm cluster as one array job gives the same
//! `results.csv` and `results.jsonl`, byte for byte, as the same sweep run locally.
//! Needs `sbatch` and a controller that answers (`.ci/slurm-up.sh` starts a
//! one-node cluster on this machine); skipped with the reason otherwise.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::text;

/// Why the test cannot run here, if it cannot.
fn no_cluster() -> Option<String> {
    let sbatch = Command::new("sbatch").arg("--version").output();
    if sbatch.is_err() {
        return Some(
            "sbatch not found on PATH (run .ci/slurm-up.sh as root to start a local cluster)"
                .into(),
        );
    }
    match Command::new("sinfo").args(["-h", "-o", "%T"]).output() {
        Ok(o) if o.status.success() => {
            let states = text(&o.stdout);
            if states.lines().any(|s| {
                ["idle", "mixed", "allocated"]
                    .iter()
                    .any(|u| s.starts_with(u))
            }) {
                None
            } else {
                Some(format!("no Slurm node is up (sinfo: {})", states.trim()))
            }
        }
        Ok(o) => Some(format!(
            "no Slurm controller answers: {}",
            text(&o.stderr).trim()
        )),
        Err(e) => Some(format!("sinfo cannot run: {e}")),
    }
}

#[test]
fn an_array_job_gives_the_local_results_byte_for_byte() {
    if let Some(why) = no_cluster() {
        eprintln!("skipped: {why}");
        return;
    }
    let exe = env!("CARGO_BIN_EXE_spu-sweep");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        dir.path().join("vecadd.spu"),
    )
    .unwrap();
    let spec = dir.path().join("spec.toml");
    std::fs::write(
        &spec,
        "name = \"slurm-test\"\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [64, 128, 256]\n[[axis]]\nmachine = [\"spu-4x4\", \"spu-4x4-dma\"]\n",
    )
    .unwrap();
    let spec = spec.display().to_string();
    let local = dir.path().join("local");
    let cluster = dir.path().join("cluster");
    let cluster_out = cluster.display().to_string();
    let run = |out: &str, more: &[&str]| {
        let mut c = Command::new(exe);
        c.args(["run", &spec, "--out", out]).args(more);
        c
    };
    let o = run(&local.display().to_string(), &[]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));

    // Six runs, two per task: a three-task array, at most two tasks at once.
    let mut child = run(
        &cluster_out,
        &[
            "--slurm",
            "--runs-per-task",
            "2",
            "--max-parallel",
            "2",
            "--time",
            "10",
            "--wait",
        ],
    )
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(600);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = Command::new("scancel")
                .args(["--name", "spu-sweep-slurm-test"])
                .status();
            panic!(
                "the array job did not finish in 10 minutes; see {}/slurm/logs",
                cluster.display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("in 3 array tasks"),
        "{}",
        text(&o.stderr)
    );

    let script = std::fs::read_to_string(cluster.join("slurm/batch-0.sh")).unwrap();
    assert!(script.contains("#SBATCH --array=0-2%2"), "{script}");
    for file in ["results.csv", "results.jsonl"] {
        let a = std::fs::read(local.join(file)).unwrap();
        let b = std::fs::read(cluster.join(file)).unwrap();
        assert_eq!(
            text(&a),
            text(&b),
            "{file} differs between local and Slurm runs"
        );
    }
    let logs = std::fs::read_dir(cluster.join("slurm/logs"))
        .unwrap()
        .count();
    assert_eq!(logs, 3, "one log per array task");

    let status = Command::new(exe)
        .args(["status", &cluster_out])
        .output()
        .unwrap();
    let s = text(&status.stdout);
    assert!(s.contains("done       6"), "{s}");
    assert!(s.contains("(batch 0, 3 tasks)"), "{s}");

    // Finished: submitting again submits nothing.
    let o = run(&cluster_out, &["--slurm", "--wait"]).output().unwrap();
    assert!(o.status.success());
    assert!(
        text(&o.stderr).contains("nothing to simulate"),
        "{}",
        text(&o.stderr)
    );
    assert!(!cluster.join("slurm/batch-1.json").exists());
}
