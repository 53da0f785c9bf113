//! Fuzz entry points for what `spu-prof` reads besides a kernel: energy model
//! files with `extends` chains, on disk beside a private model they must never
//! reach; and `--compare` reports, edited, which are refused or compared with
//! short lines and read back unchanged.

use arbitrary::{Result, Unstructured};
use spu_prof::energy::Breakdown;
use std::path::Path;
use std::sync::OnceLock;

/// What the private model holds; no loaded model or message may show it.
const SECRET: &str = "hunter2";

/// Where an `extends` may point: built-ins, files in the folder, and ways out.
const TARGETS: &[&str] = &[
    "default",
    "wires",
    "cyclops64",
    "sub/base.toml",
    "./sub/../sub/base.toml",
    "top.toml",
    "sub",
    "../private/secret.toml",
    "sub/../../private/secret.toml",
    "link.toml",
    "sub/link.toml",
    "/dev/zero",
    "PRIVATE_ABSOLUTE",
    "nonesuch.toml",
];

const SEEDS: [&str; 3] = [
    include_str!("../../../prof/models/default.toml"),
    include_str!("../../../prof/models/wires.toml"),
    include_str!("../../../prof/models/cyclops64.toml"),
];

/// A model file's text: a seed model or arbitrary text, its `extends` pointed
/// at one of [`TARGETS`], possibly with arbitrary text appended.
fn model_text(u: &mut Unstructured, private: &Path) -> Result<String> {
    let (mut text, kind) = if u.ratio(1, 4)? {
        (u.arbitrary::<&str>()?.to_string(), String::new())
    } else {
        // The seed's sections but its [model] one, whose `kind` is kept: the
        // header below, with `extends`, replaces it.
        let seed = *u.choose(&SEEDS)?;
        let start = seed.find("[model]").unwrap_or(0);
        let end = seed[start..]
            .find("\n[")
            .map_or(seed.len(), |e| start + e + 1);
        let kind = seed[start..end]
            .lines()
            .find(|l| l.starts_with("kind"))
            .map(|l| format!("{l}\n"))
            .unwrap_or_default();
        (format!("{}{}", &seed[..start], &seed[end..]), kind)
    };
    let target = u.choose(TARGETS)?.replace(
        "PRIVATE_ABSOLUTE",
        &private.join("secret.toml").display().to_string(),
    );
    let name = if u.arbitrary()? { "m" } else { "" };
    let head = format!("[model]\nname = \"{name}\"\n{kind}extends = \"{target}\"\n");
    if u.ratio(1, 3)? {
        text.push_str(u.arbitrary::<&str>()?);
    }
    Ok(format!("{head}{text}"))
}

/// Two model files in a folder (`top.toml` and `sub/base.toml`, written from
/// `data`) beside a private valid model, with links into it; `top.toml` is
/// loaded. What loads never comes from outside the folder, and no message shows
/// the private model. True when the model loaded.
pub fn model_files(data: &[u8]) -> bool {
    let mut u = Unstructured::new(data);
    let Ok(dir) = tempfile::tempdir() else {
        return false;
    };
    let models = dir.path().join("models");
    let private = dir.path().join("private");
    for d in [models.join("sub"), private.clone()] {
        std::fs::create_dir_all(d).expect("a folder");
    }
    std::fs::write(
        private.join("secret.toml"),
        format!(
            "[model]\nname = \"{SECRET}\"\ndescription = \"{SECRET}\"\nextends = \"default\"\n"
        ),
    )
    .expect("a file");
    let _ = std::os::unix::fs::symlink(private.join("secret.toml"), models.join("link.toml"));
    let _ = std::os::unix::fs::symlink(private.join("secret.toml"), models.join("sub/link.toml"));
    let (Ok(top), Ok(base)) = (model_text(&mut u, &private), model_text(&mut u, &private)) else {
        return false;
    };
    if top.contains(SECRET) || base.contains(SECRET) {
        return false;
    }
    std::fs::write(models.join("top.toml"), &top).expect("a file");
    std::fs::write(models.join("sub/base.toml"), &base).expect("a file");
    let root = models.canonicalize().expect("the folder resolves");
    match spu_prof::model::Model::load(&models.join("top.toml").display().to_string()) {
        Ok(m) => {
            assert!(!m.name.contains(SECRET) && !m.description.contains(SECRET));
            for f in &m.files {
                let real = f.canonicalize().expect("a loaded file resolves");
                assert!(real.starts_with(&root), "read {}", real.display());
            }
            true
        }
        Err(e) => {
            let message = e.to_string();
            assert!(!message.contains(SECRET), "{message}");
            assert!(message.len() < 16 << 10, "{} bytes", message.len());
            false
        }
    }
}

/// A report of each seed kernel's run (as `spu-prof --format json` writes it).
fn seed_reports() -> &'static [serde_json::Value] {
    static REPORTS: OnceLock<Vec<serde_json::Value>> = OnceLock::new();
    REPORTS.get_or_init(|| {
        let model = spu_prof::model::Model::load("default").expect("built-in model");
        super::seed_stats()
            .iter()
            .filter_map(|v| {
                let stats = serde_json::from_value(v.clone()).ok()?;
                let b = spu_prof::energy::price(&stats, &model).ok()?;
                serde_json::from_str(&spu_prof::report::json_report(&b)).ok()
            })
            .collect()
    })
}

/// Makes a report's totals agree with its parts again, so edits with extreme
/// values also reach the comparison, not only the refusal.
fn repair(b: &mut Breakdown) {
    b.time_s = b.cycles as f64 / (b.freq_mhz * 1e6);
    for u in &mut b.leakage_by_unit {
        u.total_w = u.count * u.each_w;
    }
    b.leakage_w = b.leakage_by_unit.iter().map(|u| u.total_w).sum();
    b.static_j = b.leakage_w * b.time_s;
    b.dynamic_j = b.components.values().sum();
    b.total_j = b.static_j + b.dynamic_j;
    b.edp_js = b.total_j * b.time_s;
}

/// A seed report whose JSON tree `data` edits (and sometimes repairs), read as
/// `--compare` reads it: refused, or compared against another seed with every
/// line of bounded length and no number printed digit by digit across dozens of
/// places; an accepted report writes and reads back to the same report. True when
/// the edited report was accepted.
pub fn compare_reports(data: &[u8]) -> bool {
    let mut u = Unstructured::new(data);
    let seeds = seed_reports();
    let (Ok(a), Ok(b)) = (u.choose(seeds), u.choose(seeds)) else {
        return false;
    };
    let mut value = b.clone();
    if super::mutate::mutate_json(&mut u, &mut value).is_err() {
        return false;
    }
    let Ok(mut report) = serde_json::from_value::<Breakdown>(value) else {
        return false;
    };
    if u.arbitrary().unwrap_or(false) {
        repair(&mut report);
    }
    if spu_prof::inputs::check_report(&report).is_err() {
        return false;
    }
    let a: Breakdown = serde_json::from_value(a.clone()).expect("seed reports read");
    let text = spu_prof::compare::table_report(&a, "a.json", &report, "b.json");
    let longest = 3 * spu_prof::inputs::MAX_NAME_BYTES + 400;
    for line in text.lines() {
        assert!(line.len() <= longest, "a line of {} bytes", line.len());
        let digits = line
            .split(|c: char| !c.is_ascii_digit())
            .map(str::len)
            .max()
            .unwrap_or(0);
        assert!(digits <= 30, "a number of {digits} digits: {line}");
    }
    let json = spu_prof::report::json_report(&report);
    let back: Breakdown = serde_json::from_str(&json).expect("an accepted report writes and reads");
    spu_prof::inputs::check_report(&back).expect("and is accepted again");
    true
}
