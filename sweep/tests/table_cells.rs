//! A summary-table cell never shows a number that is not finite, nor a zero that
//! is no measurement: a cell divided by a `per` or a `relative_to` of 0, or
//! scaled past the largest number, is `-` with a warning naming its table, row,
//! column and why; a functional run's timing metrics (energy, cycles) are `-`
//! without a word, and enter no mean and no ratio.

use std::path::Path;

mod common;
use common::{sweep_in, text};

/// Runs `spec` (with `vecadd.spu` beside it) into `o/`: the tables and stderr.
fn run(spec: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        dir.path().join("vecadd.spu"),
    )
    .unwrap();
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    let o = sweep_in(dir.path(), &["run", "spec.toml", "--out", "o", "-j", "2"]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let tables = std::fs::read_to_string(dir.path().join("o/tables.md")).unwrap();
    (dir, tables, err)
}

fn no_odd_numbers(tables: &str) {
    for bad in ["NaN", "inf", "0.00x", "e+", "e-"] {
        assert!(!tables.contains(bad), "`{bad}` in:\n{tables}");
    }
}

#[test]
fn cells_divided_by_zero_or_overflowing_are_empty_and_named() {
    let spec = r#"name = "t"
[base]
kernel = "vecadd.spu"
[[axis]]
D.N = [256, 512]
[[axis]]
label.case = ["a", "b"]
[[table]]
name = "ratio"
rows = "case"
columns = "N"
value = "offchip.spill_words"
relative_to = "256"
format = "ratio"
where = { case = "a" }
[[table]]
name = "speedup"
rows = "case"
columns = "N"
value = "offchip.spill_words"
relative_to = "256"
format = "speedup"
[[table]]
name = "percent"
rows = "case"
columns = "N"
value = "offchip.spill_words"
relative_to = "256"
format = "percent"
mean = ["a", "b"]
[[table]]
name = "per"
rows = "case"
columns = "N"
value = "cycles"
per = "offchip.spill_words"
where = { case = "a" }
[[table]]
name = "huge"
rows = "case"
columns = "N"
value = "cycles"
scale = -1e308
mean = ["a", "b"]
"#;
    let (_dir, tables, err) = run(spec);
    no_odd_numbers(&tables);
    assert!(tables.contains("| a | - | - |\n"), "{tables}");
    assert!(tables.contains("| mean of a, b | - | - |\n"), "{tables}");
    for table in ["ratio", "speedup", "percent"] {
        assert!(
            err.contains(&format!(
                "warning: table `{table}`: row `a`, column `256` is left empty: its `relative_to` cell is 0"
            )),
            "{table}: {err}"
        );
    }
    assert!(
        err.contains("warning: table `per`: row `a`, column `512` is left empty: its `per` metrics are 0 there"),
        "{err}"
    );
    assert!(
        err.contains("warning: table `huge`: row `b`, column `256` is left empty: multiplied by its `scale` it is too large for a number"),
        "{err}"
    );
    // Four cells and the two means of `huge`: five named, the rest counted.
    assert!(
        err.contains("warning: table `huge`: 1 other cell left empty for these reasons"),
        "{err}"
    );
}

#[test]
fn a_functional_runs_timing_cells_are_empty_and_enter_no_mean_or_ratio() {
    let spec = r#"name = "xf"
[base]
kernel = "vecadd.spu"
[[axis]]
functional = [true, false]
[[axis]]
D.N = [256, 512]
[[table]]
name = "e"
rows = "functional"
columns = "N"
value = "energy.total_j"
digits = 9
mean = ["true", "false"]
[[table]]
name = "r"
rows = "N"
columns = "functional"
value = "cycles"
relative_to = "false"
format = "ratio"
[[table]]
name = "per"
rows = "N"
columns = "functional"
value = "offchip.words"
per = "cycles"
digits = 3
"#;
    let (_dir, tables, err) = run(spec);
    no_odd_numbers(&tables);
    assert!(!tables.contains("0.000000000"), "{tables}");
    assert!(tables.contains("| true | - | - |\n"), "{tables}");
    assert!(
        tables.contains("| mean of true, false | - | - |\n"),
        "{tables}"
    );
    // The timing runs' own cells are there.
    assert!(tables.contains("| 256 | - | 1.00x |\n"), "{tables}");
    assert!(tables.contains("| 512 | - | 1.00x |\n"), "{tables}");
    // Divided by a functional run's (absent) cycles: empty, not infinite.
    let per = tables.split("| N | true | false |").nth(2).unwrap();
    assert!(per.contains("| 256 | - | 0."), "{tables}");
    // Functional runs have no timing by design: nothing to warn about.
    assert!(!err.contains("left empty"), "{err}");
}
