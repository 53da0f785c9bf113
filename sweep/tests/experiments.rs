//! The experiments in `experiments/`: every spec plans (default and large
//! cases); Table 6.3 and Table 6.4 come out exactly when run (large: `--ignored`).

use spu_sweep::plan::plan;
use spu_sweep::spec::Spec;
use std::path::{Path, PathBuf};
use std::process::Command;

fn experiment(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../experiments")
        .join(name)
}

/// The samples the experiments run, outside the experiments' folder.
fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples")
}

#[test]
fn every_experiment_plans() {
    for (file, runs, large) in [
        ("table-6.3.toml", 4, None),
        ("section-6.2.2.toml", 4, Some(8)),
        ("table-6.4-figure-7.1.toml", 9, Some(24)),
        // Table 6.2's eight cases on seven platforms with 32x32 tiles, Table A.1's
        // four on three with 64x64 tiles.
        ("spu-vs-gpu.toml", 8 * 7 + 4 * 3, None),
        // The suite's 17 cases, each on seven SPU platforms with its SPU kernel
        // (five with one block per SM, two with several) and on two GPU platforms
        // with its GPU kernel.
        ("stencil-suite.toml", 17 * (5 + 2 + 2), None),
    ] {
        let mut spec = Spec::read(&experiment(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        spec.allowed = vec![samples()];
        let p = plan(&spec, &[]).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(p.runs.len(), runs, "{file}");
        assert!(!p.plots.is_empty(), "{file} has no plot");
        if let Some(n) = large {
            let p = plan(&spec, &["large".to_string()]).unwrap();
            assert_eq!(p.runs.len(), n, "{file} --extra large");
        }
    }
}

fn run(file: &str, out: &Path) -> Vec<Vec<String>> {
    let o = Command::new(env!("CARGO_BIN_EXE_spu-sweep"))
        .arg("run")
        .arg(experiment(file))
        .arg("--allow")
        .arg(samples())
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out.join("results.csv"))
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn column(rows: &[Vec<String>], name: &str) -> usize {
    rows[0]
        .iter()
        .position(|c| c == name || c.starts_with(&format!("{name} [")))
        .unwrap_or_else(|| panic!("no column {name}: {:?}", rows[0]))
}

#[test]
#[ignore = "large: about a minute; run with --ignored"]
fn table_6_3_and_table_6_4_come_out_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let rows = run("table-6.3.toml", &dir.path().join("t63"));
    let (sync, n, words) = (
        column(&rows, "sync"),
        column(&rows, "N"),
        column(&rows, "offchip.words"),
    );
    let got: Vec<(&str, &str, &str)> = rows[1..]
        .iter()
        .map(|r| (r[sync].as_str(), r[n].as_str(), r[words].as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("global", "128", "98304"),
            ("global", "256", "1179648"),
            ("localized", "128", "98304"),
            ("localized", "256", "655360"),
        ]
    );
    assert!(dir.path().join("t63/plots/table-6.3.svg").is_file());

    let rows = run("table-6.4-figure-7.1.toml", &dir.path().join("f71"));
    let (machine, leakage) = (column(&rows, "machine"), column(&rows, "energy.leakage_w"));
    for r in &rows[1..] {
        let expected = match r[machine].as_str() {
            "spu-4x4" => 79.1,
            "spu-4x4-cb16k" => 82.4,
            _ => 66.8,
        };
        let w: f64 = r[leakage].parse().unwrap();
        assert!((w - expected).abs() < 1e-9, "{r:?}");
    }
    for plot in ["table-6.4", "figure-7.1"] {
        assert!(dir.path().join(format!("f71/plots/{plot}.svg")).is_file());
    }
}
