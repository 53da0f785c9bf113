//! Text from the user reaches the terminal escaped, through every surface of
//! `spu-sweep`: spec errors quoting names and keys, the plan table, progress lines,
//! status (with a failed run's error) and its JSON, and folder names. ESC, OSC,
//! BEL, CR, a second byte order mark and other control characters
//! ([`spu_io::testing::HOSTILE`]) never come out raw and never forge a line. In a
//! plot they are escaped the same way, so the SVG stays well-formed XML.

use spu_io::testing::{HOSTILE, quoted_string, terminal_hazards};
use std::path::Path;
use std::process::Output;

mod common;
use common::sweep_in;

fn clean(name: &str, out: &Output) -> String {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let hazards = terminal_hazards(bytes);
        assert!(
            hazards.is_empty(),
            "{name}: {stream} carries {hazards:?}:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The start of [`HOSTILE`] escaped (messages shorten long names after it).
const ESCAPED: &str = "\\u{1b}]0;pwned\\u{7}\\u{1b}[31mRED\\r\\u{feff}";

#[test]
fn control_characters_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let vecadd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu");
    std::fs::copy(vecadd, tmp.join("vecadd.spu")).unwrap();
    let h = quoted_string(HOSTILE);
    let spec = |name: &str, body: &str| {
        std::fs::write(tmp.join(name), body).unwrap();
        name.to_string()
    };
    let bad_name = spec(
        "name.toml",
        &format!("name = {h}\nmetrics = [\"cycles\"]\n[base]\nkernel = \"vecadd.spu\"\n"),
    );
    let bad_key = spec(
        "key.toml",
        &format!(
            "name = \"k\"\nmetrics = [\"cycles\"]\n[base]\nkernel = \"vecadd.spu\"\n{h} = 1\n"
        ),
    );
    let runs = spec(
        "runs.toml",
        &format!(
            "name = \"runs\"\nmetrics = [\"cycles\"]\n[base]\nkernel = \"vecadd.spu\"\n[[axis]]\nlabel.x = [{h}, \"plain\"]\nmax_cycles = [10, 100000]\n"
        ),
    );
    // A spec file whose name forges a line (a newline, then `error: fake`).
    let file_name = spec(
        &format!("sp{HOSTILE}.toml"),
        "name = \"fk\"\nmetrics = [\"cycles\"]\n[base]\nkernel = \"vecadd.spu\"\n",
    );
    let missing = format!("none{HOSTILE}.toml");
    for (name, args, ok) in [
        (
            "spec_file_name",
            vec![
                "run",
                &file_name,
                "--slurm",
                "--dry-run",
                "--out",
                "fk.sweep",
            ],
            true,
        ),
        ("spec_file_missing", vec!["plan", &missing], false),
        ("spec_name", vec!["plan", bad_name.as_str()], false),
        ("spec_key", vec!["plan", &bad_key], false),
        ("plan", vec!["plan", &runs], true),
        ("plan_json", vec!["plan", &runs, "--format", "json"], true),
        ("run", vec!["run", &runs, "--jobs", "1"], false),
        ("status", vec!["status", "runs.sweep"], true),
        (
            "status_json",
            vec!["status", "runs.sweep", "--format", "json"],
            true,
        ),
        (
            "status_of_no_folder",
            vec!["status", &format!("none{HOSTILE}")],
            false,
        ),
    ] {
        let out = sweep_in(tmp, &args);
        let text = clean(name, &out);
        assert_eq!(out.status.success(), ok, "{name}:\n{text}");
        match name {
            "plan"
            | "spec_key"
            | "status_of_no_folder"
            | "run"
            | "spec_file_name"
            | "spec_file_missing" => {
                assert!(
                    text.contains(ESCAPED),
                    "{name} names the text escaped:\n{text}"
                )
            }
            "plan_json" => {
                let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                assert!(plan.to_string().contains("\\u001b]0;pwned"), "{plan}");
            }
            "status" => assert!(text.contains("failed "), "a failed run is listed:\n{text}"),
            _ => {}
        }
    }
}

/// A sweep of one finished run in `tmp` (`ok.sweep`): its record's path and its
/// text as JSON, to edit.
fn one_record(tmp: &Path) -> (std::path::PathBuf, serde_json::Value) {
    let vecadd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu");
    std::fs::copy(vecadd, tmp.join("vecadd.spu")).unwrap();
    std::fs::write(
        tmp.join("ok.toml"),
        "name = \"ok\"\n[base]\nkernel = \"vecadd.spu\"\nD.N = 256\n",
    )
    .unwrap();
    let o = sweep_in(tmp, &["run", "ok.toml", "--jobs", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let record = std::fs::read_dir(tmp.join("ok.sweep/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let r = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    (record, r)
}

#[test]
fn metric_names_of_an_edited_record_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let (record, mut r) = one_record(tmp);
    r["metrics"][HOSTILE] = 1.into();
    r["metrics"]["note"] = HOSTILE.into();
    std::fs::write(&record, serde_json::to_vec(&r).unwrap()).unwrap();
    let out = sweep_in(tmp, &["metrics", "ok.sweep"]);
    let text = clean("metrics", &out);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.matches(ESCAPED).count(), 2, "{text}");
}

#[test]
fn strings_of_an_edited_record_reach_the_reports_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let (record, mut r) = one_record(tmp);
    // Each word a run reports (kernel and machine names, modes), and an error text.
    for (_, v) in r["metrics"].as_object_mut().unwrap() {
        if v.is_string() {
            *v = HOSTILE.into();
        }
    }
    r["error"] = HOSTILE.into();
    std::fs::write(&record, serde_json::to_vec(&r).unwrap()).unwrap();
    let out = sweep_in(tmp, &["collect", "ok.sweep"]);
    let text = clean("collect", &out);
    assert!(!text.contains("damaged"), "{text}");
    for report in ["results.csv", "results.jsonl"] {
        let bytes = std::fs::read(tmp.join("ok.sweep").join(report)).unwrap();
        let hazards = terminal_hazards(&bytes);
        assert!(
            hazards.is_empty(),
            "{report} carries {hazards:?}:\n{}",
            String::from_utf8_lossy(&bytes)
        );
    }
    let csv = std::fs::read_to_string(tmp.join("ok.sweep/results.csv")).unwrap();
    assert!(csv.contains(ESCAPED), "{csv}");
}

/// A string where a run reports a number (a hand-edited record) makes the record
/// damaged: `collect` and `status` name the record and the key, with the string
/// escaped, and the run counts as not run.
#[test]
fn a_string_for_a_number_makes_a_damaged_record() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let (record, mut r) = one_record(tmp);
    r["metrics"]["cycles"] = HOSTILE.into();
    std::fs::write(&record, serde_json::to_vec(&r).unwrap()).unwrap();
    let says = format!("its metric `cycles` holds the string \"{ESCAPED}");
    let out = sweep_in(tmp, &["collect", "ok.sweep"]);
    let text = clean("collect", &out);
    assert!(
        text.contains(&format!(
            "warning: the record `{}` of run ",
            record.strip_prefix(tmp).unwrap().display()
        )) && text.contains(&says)
            && text.contains("`spu-sweep run SPEC`"),
        "{text}"
    );
    let csv = std::fs::read_to_string(tmp.join("ok.sweep/results.csv")).unwrap();
    assert!(!csv.contains("pwned"), "{csv}");
    let out = sweep_in(tmp, &["status", "ok.sweep"]);
    let text = clean("status", &out);
    assert!(
        text.contains("damaged record `") && text.contains(&says) && text.contains("remaining  1"),
        "{text}"
    );
}

/// A record no run writes is damaged too: a negative count (`"cycles": -5`),
/// or a metric given twice (JSON keeps the last without a word).
#[test]
fn a_negative_or_repeated_metric_makes_a_damaged_record() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let (record, mut r) = one_record(tmp);
    let good = std::fs::read_to_string(&record).unwrap();
    r["metrics"]["cycles"] = (-5).into();
    std::fs::write(&record, serde_json::to_vec(&r).unwrap()).unwrap();
    let out = sweep_in(tmp, &["status", "ok.sweep"]);
    let text = clean("status", &out);
    assert!(
        text.contains("damaged record `")
            && text.contains("its metric `cycles` holds -5, but no metric is negative")
            && text.contains("remaining  1"),
        "{text}"
    );
    let twice = good.replacen("\"metrics\": {", "\"metrics\": {\"cycles\": 1,", 1);
    assert_ne!(twice, good, "the record has a metrics object");
    std::fs::write(&record, twice).unwrap();
    let out = sweep_in(tmp, &["status", "ok.sweep"]);
    let text = clean("status", &out);
    assert!(
        text.contains("damaged record `") && text.contains("the metric `cycles` is given twice"),
        "{text}"
    );
}

#[test]
fn control_characters_in_plot_text_leave_the_svg_well_formed() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let vecadd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/vecadd.spu");
    std::fs::copy(vecadd, tmp.join("vecadd.spu")).unwrap();
    std::fs::write(
        tmp.join("p.toml"),
        concat!(
            "name = \"p\"\nmetrics = [\"cycles\"]\n[base]\nkernel = \"vecadd.spu\"\n",
            "[[axis]]\nD.N = [256, 512]\nlabel.case = [\"a\\u001b[31mred\", \"b\\u0007bell\"]\n",
            "[[plot]]\nname = \"e\"\nx = \"N\"\ny = \"cycles\"\nseries = \"case\"\n",
            "title = \"T\\u001b]0;x\\u0007 & <b>\"\nx_label = \"xl\\u0001\"\ny_label = \"y\\r\\n<\"\n",
            "[[plot]]\nname = \"bars\"\nx = \"case\"\ny = \"cycles\"\nseries = \"N\"\n",
        ),
    )
    .unwrap();
    let o = sweep_in(tmp, &["run", "p.toml", "--jobs", "1"]);
    clean("run", &o);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (plot, shown) in [
        (
            "e",
            &[
                "T\\u{1b}]0;x\\u{7} & <b>",
                "xl\\u{1}",
                "y\\r\\n< [cycles]",
                "a\\u{1b}[31mred",
            ][..],
        ),
        ("bars", &["a\\u{1b}[31mred", "b\\u{7}bell"][..]),
    ] {
        let svg = std::fs::read_to_string(tmp.join(format!("p.sweep/plots/{plot}.svg"))).unwrap();
        let raw: Vec<char> = svg
            .chars()
            .filter(|c| c.is_control() && !matches!(c, '\n' | '\t'))
            .collect();
        assert!(raw.is_empty(), "{plot}.svg holds raw {raw:?}");
        let doc = roxmltree::Document::parse(&svg)
            .unwrap_or_else(|e| panic!("{plot}.svg is not well-formed XML: {e}"));
        let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        for s in shown {
            assert!(
                texts.iter().any(|t| t.trim() == *s),
                "{plot}.svg: {s} missing: {texts:?}"
            );
        }
    }
}
