//! `spu-sweep` end to end on small sweeps: the CSV holds what the emulator and the
//! profiler compute (checked against direct library runs and the thesis's leakage
//! numbers), a finished sweep re-runs nothing, an extended one runs only the new
//! runs, failures and runaway runs are recorded without stopping the sweep, and
//! Ctrl-C keeps every finished run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime};

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_spu-sweep")
}

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

fn sweep(args: &[&str]) -> Output {
    Command::new(exe()).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes `spec.toml` into a fresh folder, with copies of the samples it names (a
/// spec may only name files in its folder); returns (folder guard, spec path,
/// results folder).
fn setup(spec: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    for s in ["vecadd.spu", "divergent.spu"] {
        std::fs::copy(sample(s), dir.path().join(s)).unwrap();
    }
    let path = dir.path().join("spec.toml");
    std::fs::write(&path, spec).unwrap();
    let out = dir.path().join("out").display().to_string();
    (dir, path.display().to_string(), out)
}

fn vecadd_spec(ns: &str) -> String {
    format!(
        r#"
name = "small"
metrics = ["offchip.words", "offchip.load_words", "cycles", "energy.leakage_w"]

[base]
kernel = "vecadd.spu"

[[axis]]
D.N = [{ns}]

[[axis]]
machine = ["spu-4x4", "spu-4x4-dma"]
"#
    )
}

fn csv(out: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(Path::new(out).join("results.csv"))
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn records(out: &str) -> Vec<(PathBuf, SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(Path::new(out).join("runs"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.path(), e.metadata().unwrap().modified().unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Cycles of a run through the library, as `spu-emu` would run it.
fn cycles_of(kernel: &str, preset: &str, n: u32) -> u64 {
    let machine = spu_emu::machine::preset(preset).unwrap();
    let options = spu_emu::LoadOptions {
        defines: vec![format!("N={n}")],
        ..Default::default()
    };
    spu_emu::cli::session::run_file(Path::new(kernel), &machine, &options, Default::default())
        .unwrap()
        .result
        .cycles
}

#[test]
fn a_small_sweep_reports_what_the_tools_compute() {
    let (_d, spec, out) = setup(&vecadd_spec("256, 1024"));
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rows = csv(&out);
    assert_eq!(
        rows[0].join(","),
        "run,status,N,machine,offchip.words [words],offchip.load_words [words],cycles [cycles],energy.leakage_w [W],error"
    );
    assert_eq!(rows.len(), 5);
    let expected = [
        ("256", "spu-4x4"),
        ("256", "spu-4x4-dma"),
        ("1024", "spu-4x4"),
        ("1024", "spu-4x4-dma"),
    ];
    for (row, (n, machine)) in rows[1..].iter().zip(expected) {
        assert_eq!(row[1], "done");
        assert_eq!((row[2].as_str(), row[3].as_str()), (n, machine));
        let n: u64 = n.parse().unwrap();
        // Vector add reads A and B and writes C: 3 words per element.
        assert_eq!(row[4], (3 * n).to_string(), "{row:?}");
        assert_eq!(row[5], (2 * n).to_string(), "{row:?}");
        let cycles = cycles_of(&sample("vecadd.spu"), machine, n as u32);
        assert_eq!(row[6], cycles.to_string(), "{row:?}");
        // Thesis Table 6.4 and Section 7.2.
        let leakage = if machine == "spu-4x4" { "79.1" } else { "66.8" };
        assert!(row[7].starts_with(leakage), "{row:?}");
        assert_eq!(row[8], "");
    }
    let jsonl = std::fs::read_to_string(Path::new(&out).join("results.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["machine"], "spu-4x4-dma");
    assert_eq!(lines[3]["offchip.words"], 3072);
    assert_eq!(lines[3]["run"].as_str(), Some(rows[4][0].as_str()));
    // Provenance.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&out).join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["runs"].as_array().unwrap().len(), 4);
    assert_eq!(manifest["tool_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["sources"].as_str().unwrap().len(), 16);
    assert_eq!(
        manifest["runs"][0]["kernel_sha256"].as_str().unwrap().len(),
        64
    );
}

#[test]
fn finished_runs_are_never_run_again() {
    let (_d, spec, out) = setup(&vecadd_spec("256"));
    assert!(sweep(&["run", &spec, "--out", &out]).status.success());
    let before = records(&out);
    let csv_before = std::fs::read(Path::new(&out).join("results.csv")).unwrap();
    assert_eq!(before.len(), 2);
    let again = sweep(&["run", &spec, "--out", &out]);
    assert!(again.status.success());
    let err = text(&again.stderr);
    assert!(
        err.contains("2 finished, 0 to run") && err.contains("nothing to simulate"),
        "{err}"
    );
    assert_eq!(records(&out), before, "records were rewritten");
    assert_eq!(
        std::fs::read(Path::new(&out).join("results.csv")).unwrap(),
        csv_before
    );
    // One more value on an axis: only its two runs are simulated.
    std::fs::write(&spec, vecadd_spec("256, 512")).unwrap();
    let extended = sweep(&["run", &spec, "--out", &out]);
    assert!(extended.status.success());
    let err = text(&extended.stderr);
    assert!(err.contains("4 runs, 2 finished, 2 to run"), "{err}");
    assert!(err.contains("2 done, 0 failed"), "{err}");
    let after = records(&out);
    assert_eq!(after.len(), 4);
    for r in &before {
        assert!(after.contains(r), "{r:?} was rewritten");
    }
    assert_eq!(csv(&out).len(), 5);
}

fn write_kernels(dir: &Path) {
    std::fs::write(
        dir.join("bad.spu"),
        ".launch grid(1, 1) block(32);\n.entry bad {\n    add.u32 %r0, %r1;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("spin.spu"),
        // A global sync each round, and nothing else: with `spin_limit = 0`
        // only the sweep's bounds stop it.
        "// Never ends.\n.launch grid(1, 1) block(32);\n.entry spin {\nLOOP:\n    bar.blocksync;\n    bra LOOP;\n}\n",
    )
    .unwrap();
}

/// `spin_limit` is `spu-emu --spin-limit` for a run: a loop that synchronises
/// forever fails with the emulator's explanation at a small limit, and a value
/// that is not a whole number is refused at its line.
#[test]
fn spin_limit_bounds_a_run_and_is_checked() {
    let (d, spec, out) = setup("");
    write_kernels(d.path());
    std::fs::write(
        &spec,
        "metrics = [\"cycles\"]\n[base]\nkernel = \"spin.spu\"\nspin_limit = 1000\n",
    )
    .unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let rows = csv(&out);
    assert_eq!(rows[1][1], "failed");
    assert!(
        rows[1]
            .last()
            .unwrap()
            .contains("looks stuck in a loop that synchronises forever"),
        "{:?}",
        rows[1]
    );
    std::fs::write(&spec, "[base]\nkernel = \"spin.spu\"\nspin_limit = -5\n").unwrap();
    let o = sweep(&["plan", &spec]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("`-5` is not a spin limit") && err.contains(":3:14"),
        "{err}"
    );
}

#[test]
fn failed_runs_are_recorded_and_the_sweep_goes_on() {
    let (d, spec, out) = setup("");
    write_kernels(d.path());
    std::fs::write(
        &spec,
        r#"
metrics = ["offchip.words"]
[[axis]]
kernel = ["vecadd.spu", "bad.spu", "spin.spu"]
max_cycles = [1000000000, 1000000000, 5000]
"#,
    )
    .unwrap();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let rows = csv(&out);
    assert_eq!(rows[1][1], "done");
    assert_eq!(rows[1][4], "12288", "vecadd's default N = 4096");
    assert_eq!(rows[2][1], "failed");
    assert!(rows[2][5].contains("does not assemble"), "{:?}", rows[2]);
    assert_eq!(rows[3][1], "failed");
    assert!(
        rows[3][5].contains("exceeded --max-cycles 5 000"),
        "{:?}",
        rows[3]
    );
    let status = sweep(&["status", &out]);
    let s = text(&status.stdout);
    assert!(
        s.contains("done       1") && s.contains("failed     2"),
        "{s}"
    );
    assert!(s.contains("does not assemble"), "{s}");
    // A failure is a result: running again does not repeat it unless asked.
    let again = text(&sweep(&["run", &spec, "--out", &out]).stderr);
    assert!(again.contains("0 to run"), "{again}");
    let retry = text(&sweep(&["run", &spec, "--out", &out, "--retry-failed"]).stderr);
    assert!(retry.contains("2 to run"), "{retry}");
}

#[test]
fn time_and_memory_bounds_stop_runaway_runs() {
    let (d, spec, out) = setup("");
    write_kernels(d.path());
    std::fs::write(
        &spec,
        "timeout_s = 1\n[base]\nspin_limit = 0\n[[axis]]\nkernel = [\"spin.spu\", \"vecadd.spu\"]\n",
    )
    .unwrap();
    let started = Instant::now();
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(started.elapsed() < Duration::from_secs(30));
    let rows = csv(&out);
    assert_eq!(rows[1][1], "failed");
    assert!(
        rows[1].last().unwrap().contains("timed out after 1 s"),
        "{:?}",
        rows[1]
    );
    assert_eq!(rows[2][1], "done");
    // Vector add of 4M elements needs 48 MiB for its buffers alone.
    std::fs::write(&spec, "[base]\nkernel = \"vecadd.spu\"\nD.N = 4194304\n").unwrap();
    let mem_out = d.path().join("mem").display().to_string();
    let o = sweep(&[
        "run",
        &spec,
        "--out",
        &mem_out,
        "--memory",
        "24",
        "--timeout",
        "60",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let rows = csv(&mem_out);
    assert_eq!(rows[1][1], "failed", "{:?}", rows[1]);
    assert!(
        rows[1].last().unwrap().contains("memory bound of 24 MiB"),
        "{:?}",
        rows[1]
    );
}

#[test]
fn ctrl_c_keeps_finished_runs_and_the_sweep_resumes() {
    let (d, spec, out) = setup("");
    write_kernels(d.path());
    std::fs::write(
        &spec,
        "timeout_s = 120\n[base]\nspin_limit = 0\n[[axis]]\nkernel = [\"vecadd.spu\", \"spin.spu\", \"divergent.spu\"]\n",
    )
    .unwrap();
    let child = Command::new(exe())
        .args(["run", &spec, "--out", &out, "--jobs", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first run is recorded and the endless one is running.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(Path::new(&out).join("running").exists()
        && std::fs::read_dir(Path::new(&out).join("running"))
            .map(|d| d.count() == 1)
            .unwrap_or(false)
        && records(&out).len() == 1)
    {
        assert!(Instant::now() < deadline, "the sweep did not get going");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("resume"), "{}", text(&o.stderr));
    assert_eq!(
        records(&out).len(),
        1,
        "the interrupted run must not be recorded"
    );
    let status = text(&sweep(&["status", &out]).stdout);
    assert!(
        status.contains("done       1") && status.contains("remaining  2"),
        "{status}"
    );
    // Resuming runs the other two (the endless one now bounded by --timeout).
    let o = sweep(&["run", &spec, "--out", &out, "--timeout", "1"]);
    assert!(
        text(&o.stderr).contains("1 finished, 2 to run"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(records(&out).len(), 3);
}

/// The live `spu-sweep exec-run` processes whose parent is `parent`.
fn exec_runs_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `PID (COMMAND) STATE PPID ...`
            let mut fields = stat[stat.rfind(')')? + 2..].split(' ');
            let state = fields.next()?;
            let ppid: u32 = fields.next()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            (ppid == parent && state != "Z" && text(&cmdline).contains("exec-run")).then_some(pid)
        })
        .collect()
}

/// True once `pid` has ended (no such process, or one nobody has waited for yet).
fn ended(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rfind(')').is_some_and(|i| s[i + 2..].starts_with('Z'))
    })
}

/// Kills, when dropped, the processes a failed test would leave behind.
struct Reap(Vec<u32>);

impl Drop for Reap {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if !ended(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// A sweep whose one run spins for ever, once its `exec-run` child is running:
/// (folder guard, results folder, the sweep, the run's pid). The sweep leads a
/// process group of its own, as a command a shell starts does.
fn spinning_sweep() -> (tempfile::TempDir, String, std::process::Child, u32) {
    use std::os::unix::process::CommandExt;
    let (d, spec, out) = setup("");
    write_kernels(d.path());
    std::fs::write(
        &spec,
        "timeout_s = 600\n[base]\nkernel = \"spin.spu\"\nspin_limit = 0\n",
    )
    .unwrap();
    let mut sweep = Command::new(exe())
        .args(["run", &spec, "--out", &out, "--jobs", "1"])
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = started_run(&mut sweep, &out);
    (d, out, sweep, run)
}

/// The pid of the `exec-run` child of `sweep` once it runs and its marker is
/// written (within 60 s, else the sweep is stopped and the test fails).
fn started_run(sweep: &mut std::process::Child, out: &str) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let runs = exec_runs_of(sweep.id());
        let marked =
            std::fs::read_dir(Path::new(out).join("running")).is_ok_and(|mut d| d.next().is_some());
        if let (Some(&run), true) = (runs.first(), marked) {
            return run;
        }
        if Instant::now() > deadline {
            let _ = sweep.kill();
            let _ = sweep.wait();
            panic!("the run did not start");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits at most 20 s for `pid` to end.
fn ends_within_20_s(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ended(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

#[test]
fn sigterm_and_sighup_stop_the_runs_as_ctrl_c_does() {
    use nix::sys::signal::Signal;
    for (signal, code) in [(Signal::SIGTERM, 143), (Signal::SIGHUP, 129)] {
        let (_d, out, mut sweep, run) = spinning_sweep();
        let _reap = Reap(vec![sweep.id(), run]);
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(sweep.id() as i32), signal).unwrap();
        assert!(ends_within_20_s(sweep.id()), "{signal}: the sweep goes on");
        let status = sweep.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut sweep.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(code), "{signal}: {status:?} {err}");
        assert!(
            err.contains("interrupted: finished runs are kept"),
            "{signal}: {err}"
        );
        assert!(ended(run), "{signal}: the run outlived its sweep");
        let markers: Vec<_> = std::fs::read_dir(Path::new(&out).join("running"))
            .unwrap()
            .collect();
        assert!(markers.is_empty(), "{signal}: markers left: {markers:?}");
    }
}

/// The exit status and standard error of a sweep that ends within 20 s.
fn ended_sweep(mut sweep: std::process::Child, what: &str) -> (Option<i32>, String) {
    assert!(ends_within_20_s(sweep.id()), "{what}: the sweep goes on");
    let status = sweep.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut sweep.stderr.take().unwrap(), &mut err).unwrap();
    (status.code(), err)
}

/// A signal sent to the sweep's whole process group (a shell's Ctrl-C, `kill --
/// -PGID`, a closed terminal) kills the run too: it was stopped, not failed, so
/// it is not recorded and the next `run` runs it.
#[test]
fn a_signal_to_the_process_group_leaves_the_run_to_resume() {
    use nix::sys::signal::Signal;
    for (signal, code) in [
        (Signal::SIGTERM, 143),
        (Signal::SIGHUP, 129),
        (Signal::SIGINT, 130),
    ] {
        let (_d, out, sweep, run) = spinning_sweep();
        let _reap = Reap(vec![sweep.id(), run]);
        let group = nix::unistd::Pid::from_raw(-(sweep.id() as i32));
        nix::sys::signal::kill(group, signal).unwrap();
        let (status, err) = ended_sweep(sweep, signal.as_str());
        assert_eq!(status, Some(code), "{signal}: {err}");
        assert!(
            err.contains("run the same command again to resume"),
            "{signal}: {err}"
        );
        assert!(
            records(&out).is_empty(),
            "{signal}: the stopped run was recorded: {err}"
        );
        let status = text(&sweep_status(&out));
        assert!(
            status.contains("failed     0") && status.contains("remaining  1"),
            "{signal}: {status}"
        );
    }
}

/// A run killed on its own (`kill` of just the run, the out-of-memory killer)
/// while the sweep goes on is a failure, and its record names the signal.
#[test]
fn a_run_killed_alone_is_a_failure_naming_the_signal() {
    let (_d, out, sweep, run) = spinning_sweep();
    let _reap = Reap(vec![sweep.id(), run]);
    let pid = nix::unistd::Pid::from_raw(run as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let (status, err) = ended_sweep(sweep, "SIGTERM to the run");
    assert_eq!(status, Some(3), "{err}");
    let records = records(&out);
    assert_eq!(records.len(), 1, "{err}");
    let record = std::fs::read_to_string(&records[0].0).unwrap();
    assert!(
        record.contains("\"status\": \"failed\"") && record.contains("signal 15 (SIGTERM)"),
        "{record}"
    );
}

#[test]
fn a_run_ends_when_its_sweep_is_killed() {
    let (_d, out, mut sweep, run) = spinning_sweep();
    let _reap = Reap(vec![sweep.id(), run]);
    sweep.kill().unwrap();
    sweep.wait().unwrap();
    assert!(ends_within_20_s(run), "the run outlived its killed sweep");
    // The killed sweep's marker is recognised as one of a dead process.
    let status = text(&sweep_status(&out));
    assert!(
        status.contains("1 of the remaining was running when its process died")
            && status.contains(": 1 run\n"),
        "{status}"
    );
}

fn sweep_status(out: &str) -> Vec<u8> {
    sweep(&["status", out]).stdout
}

#[test]
fn plan_status_plot_and_metrics_commands() {
    let (_d, spec, out) = setup(&vecadd_spec("256, 512"));
    let plan = sweep(&["plan", &spec, "--out", &out]);
    assert!(plan.status.success());
    let p = text(&plan.stdout);
    assert_eq!(p.matches("pending").count(), 4, "{p}");
    assert!(p.contains("4 runs; 0 finished"), "{p}");
    assert!(sweep(&["run", &spec, "--out", &out]).status.success());
    let p = text(&sweep(&["plan", &spec, "--out", &out]).stdout);
    assert_eq!(p.matches("done").count(), 4, "{p}");
    let json = sweep(&["status", &out, "--format", "json"]);
    let s: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        (s["total"].as_u64(), s["done"].as_u64()),
        (Some(4), Some(4))
    );

    let svg_path = Path::new(&out).join("words.svg").display().to_string();
    let o = sweep(&[
        "plot",
        &out,
        "--x",
        "N",
        "--y",
        "offchip.words",
        "-o",
        &svg_path,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    // One series per machine by default.
    for label in ["spu-4x4", "spu-4x4-dma", "offchip.words [words]"] {
        assert!(
            texts.iter().any(|t| t.trim() == label),
            "{label} missing: {texts:?}"
        );
    }
    // A spec's plot says what its axes show, in units that suit the values: a
    // run of microseconds is drawn in µs, not as ticks of 0.000001 s.
    let labelled = format!(
        "{}\n[[plot]]\nname = \"time\"\nx = \"N\"\ny = \"time_s\"\nx_label = \"vector length\"\ny_label = \"execution time\"\n",
        vecadd_spec("256, 512")
    );
    std::fs::write(&spec, labelled).unwrap();
    let o = sweep(&["run", &spec, "--out", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let svg = std::fs::read_to_string(Path::new(&out).join("plots/time.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    for label in ["vector length", "execution time [µs]"] {
        assert!(
            texts.iter().any(|t| t.trim() == label),
            "{label} missing: {texts:?}"
        );
    }
    let o = sweep(&["plot", &out, "--x", "N", "--y", "nonesuch", "-o", &svg_path]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("`nonesuch` is not a metric of the finished runs"),
        "{}",
        text(&o.stderr)
    );

    let m = text(&sweep(&["metrics", &out]).stdout);
    assert!(
        m.lines()
            .any(|l| l.contains("energy.total_j") && l.contains(" J ")),
        "{m}"
    );
    assert!(m.lines().any(|l| l.contains("machine.cb.size_kib")), "{m}");
}

#[test]
fn bad_specs_and_folders_get_clear_errors() {
    let (d, spec, out) = setup("[base]\nkernel = \"x.spu\"\nmachne = \"spu-4x4\"\n");
    let o = sweep(&["run", &spec, "--out", &out]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("unknown key `machne`"), "{err}");
    assert!(err.contains("spec.toml:3:1"), "{err}");
    // The hint names the likely key first and lists the keys whole.
    assert!(err.contains("did you mean `machine`?"), "{err}");
    assert!(
        err.contains("`max_cycles`") && !err.contains("bytes)"),
        "{err}"
    );
    assert!(
        !Path::new(&out).exists(),
        "nothing is written for a bad spec"
    );

    // A folder that does not exist is named as missing, for every command
    // that reads one.
    let gone = d.path().join("gone").display().to_string();
    for cmd in ["status", "collect"] {
        let o = sweep(&[cmd, &gone]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            text(&o.stderr).contains(&format!("`{gone}` does not exist; give the folder")),
            "{cmd}: {}",
            text(&o.stderr)
        );
    }

    std::fs::write(&spec, vecadd_spec("64")).unwrap();
    let busy = d.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("thesis.tex"), "keep me").unwrap();
    let o = sweep(&["run", &spec, "--out", &busy.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("is not a sweep results folder"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(busy.join("thesis.tex")).unwrap(),
        "keep me"
    );

    // A folder holding a file named plan.json that is no plan is the user's too:
    // nothing in it is replaced.
    let mine = d.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    for (name, body) in [
        ("plan.json", "x\n"),
        ("results.csv", "my data\n"),
        ("spec.toml", "my notes\n"),
    ] {
        std::fs::write(mine.join(name), body).unwrap();
    }
    let o = sweep(&["run", &spec, "--out", &mine.display().to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("is not a sweep results folder")
            && err.contains("not a valid plan.json")
            && err.contains("choose another --out"),
        "{err}"
    );
    for (name, body) in [
        ("plan.json", "x\n"),
        ("results.csv", "my data\n"),
        ("spec.toml", "my notes\n"),
    ] {
        assert_eq!(std::fs::read_to_string(mine.join(name)).unwrap(), body);
    }
    assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 3);

    let o = sweep(&["status", &d.path().display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("no plan.json"),
        "{}",
        text(&o.stderr)
    );

    let o = sweep(&["run", &spec, "--out", &out, "--extra", "huge"]);
    assert!(
        text(&o.stderr).contains("no axis of"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_child_refuses_a_bad_request() {
    use std::io::Write;
    let mut child = Command::new(exe())
        .args(["exec-run", "--memory-mib", "1024", "--cpu-s", "10"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"hello").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["failed"]["message"]
            .as_str()
            .unwrap()
            .contains("not a run request"),
        "{v}"
    );
}

#[test]
fn a_closed_standard_output_ends_quietly() {
    // `spu-sweep plan spec.toml | head -1`: the tool ends like one stopped by SIGPIPE
    // (141), with no panic, when its reader has gone.
    let (_d, spec, out) = setup(&vecadd_spec("256, 512"));
    let Some(closed) = spu_io::testing::closed_pipe() else {
        return;
    };
    let o = Command::new(exe())
        .args(["plan", &spec, "--out", &out])
        .stdout(closed)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(141), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("panicked"), "{}", text(&o.stderr));
}

#[test]
fn a_spec_error_on_a_long_line_quotes_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("long.toml");
    std::fs::write(&spec, format!("x = {}\n", "k".repeat(2_000_000))).unwrap();
    let out = sweep(&["plan", spec.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", &err[..err.len().min(400)]);
    assert!(err.len() < 1000, "{} bytes of error", err.len());
    assert!(
        err.contains(&format!("1 | x = {}... (2000008 bytes)", "k".repeat(92))),
        "{err}"
    );
}

/// A machine value that is wrong in every run it is part of is one error, which
/// says how many runs it hit.
#[test]
fn a_bad_grid_is_reported_once_for_all_its_runs() {
    let spec = "[base]\nkernel = \"vecadd.spu\"\n\n[[axis]]\ngrid = [\"3\", \"4x4\"]\n\n[[axis]]\nD.N = [256, 512, 1024]\n";
    let (_d, spec, _out) = setup(spec);
    let o = sweep(&["plan", &spec]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert_eq!(err.matches("`--grid 3` needs the form").count(), 1, "{err}");
    assert!(err.contains("(in 3 runs, the first grid=3 N=256)"), "{err}");
    assert!(err.contains("(1 problem)"), "{err}");
}

/// The files the help's examples name exist.
#[test]
fn the_help_examples_name_files_that_exist() {
    let help = text(&sweep(&["--help"]).stdout);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let named: Vec<&str> = help
        .split_whitespace()
        .filter(|w| w.ends_with(".toml") && w.contains('/'))
        .collect();
    assert!(!named.is_empty(), "no example files in\n{help}");
    for f in named {
        assert!(
            root.join(f).is_file(),
            "the help names `{f}`, which does not exist"
        );
    }
}

#[test]
fn summary_tables_show_cells_ratios_and_means() {
    let spec = format!(
        "{}\n{}",
        vecadd_spec("256, 1024"),
        r#"
[[table]]
name = "words"
title = "Off-chip words"
rows = "N"
value = "offchip.words"
columns = "machine"

[[table]]
name = "ratio"
rows = "N"
value = ["offchip.load_words", "offchip.words"]
columns = "machine"
relative_to = "spu-4x4"
format = "percent"
mean = ["256", "1024"]

[[table]]
name = "speed"
rows = "machine"
value = "offchip.words"
columns = "N"
relative_to = "256"
format = "speedup"

[[table]]
name = "parts"
columns = "machine"
where = { N = "1024" }
rows = [["loads", "offchip.load_words"], ["all", "offchip.words"]]
scale = 0.5
digits = 1

[[table]]
name = "broken"
rows = "N"
value = "caches.l1.hits"
columns = "machine"
"#
    );
    let (_d, spec, out) = setup(&spec);
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("table `broken`: no finished run has the metric `caches.l1.hits`"),
        "{err}"
    );
    let read = |name: &str| std::fs::read_to_string(Path::new(&out).join(name)).unwrap();
    // Words: 3 N on both machines, grouped by thousands.
    assert_eq!(
        read("tables/words.md"),
        "**Off-chip words**\n\n| N | spu-4x4 | spu-4x4-dma |\n|---|---:|---:|\n\
         | 256 | 768 | 768 |\n| 1024 | 3 072 | 3 072 |\n"
    );
    // The same traffic on both machines: +0.0% everywhere, and in the mean.
    let ratio = read("tables/ratio.md");
    assert!(
        ratio.contains("| 1024 | +0.0% | +0.0% |\n| mean of 256, 1024 | +0.0% | +0.0% |"),
        "{ratio}"
    );
    // A speed-up is the base column's value over the cell's: 768 / 3 072 words.
    let speed = read("tables/speed.md");
    assert!(
        speed.contains("| spu-4x4 | 1.00x | 0.25x |\n| spu-4x4-dma | 1.00x | 0.25x |"),
        "{speed}"
    );
    // Fixed rows of summed metrics, halved, one decimal: 2 N and 3 N at N = 1024.
    assert!(
        read("tables/parts.md")
            .contains("| loads | 1 024.0 | 1 024.0 |\n| all | 1 536.0 | 1 536.0 |"),
        "{}",
        read("tables/parts.md")
    );
    // Every table written, in one file too; the broken one nowhere.
    let all = read("tables.md");
    assert!(all.contains("Off-chip words") && all.contains("| all |"));
    assert!(!Path::new(&out).join("tables/broken.md").exists());
}

/// A `|` or a line break in a label or a title stays inside its cell or line:
/// the table keeps its shape and no heading is injected.
#[test]
fn summary_tables_escape_bars_and_line_breaks() {
    let spec = r#"name = "s5"
[base]
kernel = "vecadd.spu"
[[axis]]
D.N = [256, 512]
label.case = ["a|b", "c\nd"]
[[table]]
name = "t"
title = "T | x\n# injected heading"
rows = "case"
columns = "N"
value = "cycles"
"#;
    let (_d, spec, out) = setup(spec);
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("wrote 1 summary table into"),
        "{}",
        text(&o.stderr)
    );
    let md = std::fs::read_to_string(Path::new(&out).join("tables/t.md")).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "**T \\| x\\n# injected heading**", "{md}");
    assert!(!lines.iter().any(|l| l.starts_with('#')), "{md}");
    // Title, blank line, header, rule, two rows; each table line has 3 cells,
    // so 4 bars that are not escaped.
    assert_eq!(lines.len(), 6, "{md}");
    for l in &lines[2..] {
        let bars = l.matches('|').count() - l.matches("\\|").count();
        assert_eq!(bars, 4, "{l:?} in\n{md}");
    }
    assert!(lines[4].starts_with("| a\\|b | "), "{md}");
    assert!(lines[5].starts_with("| c\\nd | "), "{md}");
}

/// A run record that cannot be read (cut short, another run's) is reported as
/// damaged, by file, by `collect`, `status` and `plan`, with how to redo the run;
/// running the sweep again redoes exactly those runs and replaces the records.
#[test]
fn damaged_run_records_are_named_and_redone() {
    let (_d, spec, out) = setup(&vecadd_spec("256"));
    assert!(sweep(&["run", &spec, "--out", &out]).status.success());
    let recs = records(&out);
    assert_eq!(recs.len(), 2);
    let (cut, other) = (&recs[0].0, &recs[1].0);
    std::fs::write(cut, "{").unwrap();
    let other_text = std::fs::read_to_string(other).unwrap();
    let other_id = other.file_stem().unwrap().to_str().unwrap().to_string();
    let id_of = |p: &Path| p.file_stem().unwrap().to_str().unwrap().to_string();
    let o = sweep(&["collect", &out]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "warning: the record `{}` of run {} is damaged",
            cut.display(),
            id_of(cut)
        )) && err.contains("it is not a run record: EOF")
            && err.contains("`spu-sweep run SPEC`"),
        "{err}"
    );
    // A record copied over another run's is damaged too.
    std::fs::write(other, other_text.replace(&other_id, &id_of(cut))).unwrap();
    let o = sweep(&["status", &out]);
    let status = text(&o.stdout);
    assert!(
        status.contains(&format!("damaged record `{}`", other.display()))
            && status.contains(&format!("holds the record of run `{}`", id_of(cut)))
            && status.contains("remaining  2"),
        "{status}"
    );
    let o = sweep(&["status", &out, "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["damaged"].as_array().map(Vec::len), Some(2), "{json}");
    let o = sweep(&["plan", &spec, "--out", &out]);
    assert_eq!(
        text(&o.stdout).matches(" damaged ").count(),
        2,
        "{}",
        text(&o.stdout)
    );
    let o = sweep(&["run", &spec, "--out", &out]);
    let err = text(&o.stderr);
    assert!(
        o.status.success() && err.contains("2 done, 0 failed"),
        "{err}"
    );
    let o = sweep(&["collect", &out]);
    assert!(!text(&o.stderr).contains("damaged"), "{}", text(&o.stderr));
}

/// Under an inherited hard memory limit lower than the runs' bound (`ulimit -v`
/// in the shell), the runs are bound to that limit, with a note naming `--memory`:
/// every run failed with "cannot limit memory to 4096 MiB: EPERM".
#[test]
fn an_inherited_memory_limit_bounds_the_runs() {
    let (_d, spec, out) = setup(&vecadd_spec("256"));
    // The shell lowers its own hard limit (3000000 KiB, 2929 MiB), then runs the
    // sweep with the default bound of 4096 MiB.
    let o = Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 3000000 && exec \"$0\" run \"$1\" --out \"$2\" -j 1")
        .args([exe(), &spec, &out])
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("may use at most 2929 MiB")
            && err.contains("runs are bound to 2929 MiB")
            && err.contains("`--memory`"),
        "{err}"
    );
    assert!(err.contains("2 done, 0 failed"), "{err}");
    // A bound below the limit is kept, without a note.
    let o = Command::new("bash")
        .arg("-c")
        .arg(
            "ulimit -v 3000000 && exec \"$0\" run \"$1\" --out \"$2\" --memory 1024 --retry-failed",
        )
        .args([exe(), &spec, &out])
        .output()
        .unwrap();
    assert!(
        o.status.success() && !text(&o.stderr).contains("note:"),
        "{}",
        text(&o.stderr)
    );
}

/// A run whose parameters the kernel's `.assert` refuses is recorded as `refused`
/// with the kernel's message: not a crash, not a failure to retry, no exit code 3.
#[test]
fn a_run_refused_by_a_precondition_is_recorded_as_refused() {
    let (d, spec, out) = setup(
        "name = \"tiles\"\nmetrics = [\"cycles\"]\n[base]\nkernel = \"tiled.spu\"\n[[axis]]\nD.N = [64, 100]\n",
    );
    std::fs::write(
        d.path().join("tiled.spu"),
        ".param .u32 N = 64;\n\
         .assert N % 32 == 0, \"N must be a multiple of the tile size\";\n\
         .launch grid(N / 32, 1) block(32);\n\
         .entry tiled {\n    exit;\n}\n",
    )
    .unwrap();
    let o = sweep(&["run", &spec, "--out", &out]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("1 done, 0 failed, 1 refused by the kernel's preconditions"),
        "{err}"
    );
    let rows = csv(&out);
    let refused = rows
        .iter()
        .find(|r| r[1] == "refused")
        .expect("a refused row");
    assert_eq!(refused[2], "100");
    assert!(
        refused.last().unwrap().contains(
            "N must be a multiple of the tile size: `N % 32 == 0` does not hold with N = 100"
        ),
        "{refused:?}"
    );
    let status = text(&sweep(&["status", &out]).stdout);
    assert!(status.contains("  refused    1"), "{status}");
    assert!(!status.contains("--retry-failed"), "{status}");
    // Nothing to retry: the refusal is the kernel's answer to these parameters.
    let again = text(&sweep(&["run", &spec, "--out", &out, "--retry-failed"]).stderr);
    assert!(again.contains("2 finished, 0 to run"), "{again}");
}

/// SIGTERM or Ctrl-C while planning compiles a `.cu` kernel stops clang and what it
/// started (a clang left behind had no time or memory bound any more), and exits
/// as the signal asks; no later clang starts.
#[test]
fn a_signal_while_planning_stops_clang() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::ExitStatusExt;
    for (signal, code) in [
        (nix::sys::signal::Signal::SIGTERM, 143),
        (nix::sys::signal::Signal::SIGINT, 130),
    ] {
        let (d, spec, _out) = setup("");
        let dir = d.path();
        let fake = dir.join("clang");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/bash\nsleep 300 &\necho $! >> {0}/pids\necho $$ >> {0}/pids\nwait\n",
                dir.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("k.cu"), "extern \"C\" __global__ void k() {}\n").unwrap();
        std::fs::write(&spec, "[base]\nkernel = \"k.cu\"\n").unwrap();
        let mut plan = Command::new(exe())
            .args(["plan", &spec])
            .env("SPU_CLANG", &fake)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pids = dir.join("pids");
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::fs::read_to_string(&pids).map_or(0, |t| t.lines().count()) < 2 {
            assert!(Instant::now() < deadline, "clang did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let started: Vec<u32> = std::fs::read_to_string(&pids)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        let _reap = Reap(started.clone());
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(plan.id() as i32), signal).unwrap();
        let status = plan.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{signal}: {status:?}");
        assert!(status.signal().is_none());
        for pid in started {
            assert!(
                ends_within_20_s(pid),
                "{signal}: process {pid} outlived the sweep"
            );
        }
        std::thread::sleep(Duration::from_millis(300));
        let lines = std::fs::read_to_string(&pids).unwrap().lines().count();
        assert_eq!(lines, 2, "{signal}: a clang started after the signal");
    }
}

/// A plot of a metric only timed runs report (energy) in a sweep that also has
/// functional runs is drawn from the timed runs (it was dropped with a warning
/// that the metric was unknown).
#[test]
fn an_energy_plot_of_a_mixed_sweep_draws_the_timed_runs() {
    let (_d, spec, out) = setup(
        "[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nfunctional = [false, true]\n\
         [[axis]]\nD.N = [256, 512]\n[[plot]]\nname = \"e\"\nx = \"N\"\ny = \"energy.total_j\"\n",
    );
    let o = sweep(&["run", &spec, "--out", &out, "--jobs", "1"]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("plot `e`"), "{err}");
    let svg = std::fs::read_to_string(Path::new(&out).join("plots/e.svg")).expect("plot e");
    assert!(svg.contains("<svg"), "{svg}");
}
