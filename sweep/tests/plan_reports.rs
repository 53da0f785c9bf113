//! The plots and tables of a `plan.json` read back keep the rules of the spec
//! they came from: a folder whose plan was edited to name a file outside it, a
//! hidden file, one file for two tables, a scale of 0, more decimals than a cell
//! has or a plot kind that is not drawn is refused as damaged, naming the field,
//! and nothing is written.

use std::path::Path;

mod common;
use common::{sweep_in, text};

const SPEC: &str = r#"name = "t"
[base]
kernel = "vecadd.spu"
[[axis]]
D.N = [256, 512]
[[table]]
name = "tabx"
rows = "N"
columns = "N"
value = "cycles"
[[table]]
name = "taby"
rows = "N"
columns = "N"
value = "cycles"
[[plot]]
name = "plotp"
x = "N"
y = "cycles"
"#;

#[test]
fn edited_plot_and_table_fields_in_a_plan_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("a/b");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        work.join("vecadd.spu"),
    )
    .unwrap();
    std::fs::write(work.join("spec.toml"), SPEC).unwrap();
    let o = sweep_in(&work, &["run", "spec.toml", "--out", "o", "-j", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let plan_path = work.join("o/plan.json");
    let plan = std::fs::read_to_string(&plan_path).unwrap();
    for field in [
        "\"name\":\"tabx\"",
        "\"name\":\"taby\"",
        "\"name\":\"plotp\"",
        "\"digits\":null",
        "\"scale\":1.0",
        "\"kind\":null",
    ] {
        assert!(plan.contains(field), "{field} not in {plan}");
    }
    let victim = dir.path().join("victim.md");
    let outside = dir.path().join("outside.svg");
    let abs = dir.path().join("abs");
    let abs_name = abs.join("pwn").display().to_string();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "\"digits\":null",
            "\"digits\":100000".into(),
            "`digits = 100000`",
        ),
        (
            "\"digits\":null",
            "\"digits\":18446744073709551615".into(),
            "`digits = 18446744073709551615`",
        ),
        (
            "\"name\":\"tabx\"",
            "\"name\":\"../../victim\"".into(),
            "table 0 is named `../../victim`",
        ),
        (
            "\"name\":\"plotp\"",
            "\"name\":\"../../outside\"".into(),
            "plot 0 is named `../../outside`",
        ),
        (
            "\"name\":\"plotp\"",
            format!("\"name\":\"{abs_name}\""),
            "plot 0 is named `/",
        ),
        (
            "\"name\":\"plotp\"",
            "\"name\":\"\"".into(),
            "plot 0 is named ``",
        ),
        (
            "\"name\":\"tabx\"",
            "\"name\":\"\"".into(),
            "table 0 is named ``",
        ),
        (
            "\"name\":\"taby\"",
            "\"name\":\"tabx\"".into(),
            "tables 0 and 1 are both named `tabx`",
        ),
        ("\"scale\":1.0", "\"scale\":0.0".into(), "`scale = 0`"),
        (
            "\"kind\":null",
            "\"kind\":\"pie\"".into(),
            "`kind = \"pie\"`",
        ),
    ];
    for (from, to, why) in &cases {
        std::fs::write(&victim, "PRECIOUS NOTES\n").unwrap();
        let _ = std::fs::remove_file(work.join("o/tables.md"));
        std::fs::write(&plan_path, plan.replacen(from, to, 1)).unwrap();
        for command in ["collect", "plot"] {
            let o = sweep_in(&work, &[command, "o"]);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{command} with {to}: {err}");
            assert!(
                err.contains("not a valid plan.json") && err.contains(why),
                "{command} with {to}: {err}"
            );
            assert!(err.contains("edited or damaged"), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "PRECIOUS NOTES\n"
        );
        assert!(!outside.exists(), "{to}");
        assert!(!abs.exists(), "{to}");
        assert!(!work.join("o/plots/.svg").exists(), "{to}");
        assert!(!work.join("o/tables/.md").exists(), "{to}");
        assert!(!work.join("o/tables.md").exists(), "{to}");
    }
    // The way out the message names: planning again writes a good plan.
    let o = sweep_in(&work, &["run", "spec.toml", "--out", "o", "-j", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        std::fs::read_to_string(&plan_path)
            .unwrap()
            .contains("\"kind\":null")
    );
    assert!(work.join("o/tables/tabx.md").exists());
}

/// A field of the wrong type and a key no plan has are refused with the same way
/// out as other damage (a type error gave serde's message alone, and an unknown
/// key was ignored).
#[test]
fn a_plan_with_a_value_of_the_wrong_type_or_an_unknown_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        work.join("vecadd.spu"),
    )
    .unwrap();
    std::fs::write(work.join("spec.toml"), SPEC).unwrap();
    let o = sweep_in(work, &["run", "spec.toml", "--out", "o", "-j", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let plan_path = work.join("o/plan.json");
    let plan = std::fs::read_to_string(&plan_path).unwrap();
    // The plan as written reads back.
    let o = sweep_in(work, &["collect", "o"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let cases = [
        ("\"digits\":null", "\"digits\":-1", "invalid value"),
        ("\"digits\":null", "\"digits\":2.5", "invalid type"),
        ("\"scale\":1.0", "\"scale\":\"1\"", "invalid type"),
        (
            "\"kind\":null",
            "\"kind\":null,\"bogus\":1",
            "unknown field `bogus`",
        ),
        (
            "\"scale\":1.0",
            "\"scale\":1.0,\"bogus\":1",
            "unknown field `bogus`",
        ),
        (
            "\"format\":2",
            "\"format\":2,\"bogus\":1",
            "unknown field `bogus`",
        ),
        ("\"plots\":[", "\"plots\":null,\"x\":[", "invalid type"),
    ];
    for (from, to, why) in cases {
        assert!(plan.contains(from), "{from} not in {plan}");
        std::fs::write(&plan_path, plan.replacen(from, to, 1)).unwrap();
        let o = sweep_in(work, &["collect", "o"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{to}: {err}");
        assert!(
            err.contains("not a valid plan.json")
                && err.contains(why)
                && err.contains("it was edited or damaged: plan again"),
            "{to}: {err}"
        );
    }
}

/// A plot without a `name` is named after the sweep and numbered (`NAME-2`): a
/// sweep name of the longest length leaves no room for the number, which the
/// spec's check says, rather than writing a plan its own commands would refuse.
#[test]
fn a_default_plot_name_keeps_the_length_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        dir.path().join("vecadd.spu"),
    )
    .unwrap();
    let name = "a".repeat(100);
    let spec = format!(
        "name = \"{name}\"\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nD.N = [256, 512]\n\
         [[plot]]\nx = \"N\"\ny = \"cycles\"\n[[plot]]\nx = \"N\"\ny = \"offchip.words\"\n"
    );
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    let o = sweep_in(dir.path(), &["plan", "spec.toml"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the plot's default name `")
            && err.contains("(102 bytes)` is longer than 100 bytes"),
        "{err}"
    );
}

/// Checking many tables over a column of many values takes time in proportion
/// to the runs, not to the runs times their values per table (1 000 tables over
/// 10 000 labels used to take hours to plan).
#[test]
fn many_tables_over_many_values_plan_at_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu"),
        dir.path().join("vecadd.spu"),
    )
    .unwrap();
    let labels: Vec<String> = (0..10_000).map(|i| format!("\"v{i}\"")).collect();
    let mut spec = format!(
        "name = \"t\"\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nlabel.x = [{}]\n",
        labels.join(", ")
    );
    for t in 0..1_000 {
        spec.push_str(&format!(
            "[[table]]\nname = \"t{t}\"\nrows = \"x\"\ncolumns = \"x\"\nvalue = \"cycles\"\nmean = [\"v9999\"]\n"
        ));
    }
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_spu-sweep"))
        .current_dir(dir.path())
        .args(["plan", "spec.toml"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Minutes on the slowest machine now; hours before.
    let (code, err) = spu_io::testing::wait_at_most(child, std::time::Duration::from_secs(300));
    assert_eq!(code, Some(0), "{err}");
}
