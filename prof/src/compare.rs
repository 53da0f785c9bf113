//! Two priced runs side by side with the ratio B / A, as a table, JSON or CSV:
//! the run's figures, then every component either run has; and which energy
//! model each side was priced with ([`models`]).

use crate::energy::Breakdown;
use crate::report::{csv_field, csv_number, fixed, joules, seconds, table};
use spu_io::quote::escape;
use std::fmt::Write;

/// One side of a comparison: its file as named, its breakdown, and whether the
/// file came priced (a report or a page) rather than priced here (statistics).
#[derive(Debug)]
pub struct Side<'a> {
    pub file: &'a str,
    pub breakdown: &'a Breakdown,
    pub priced_before: bool,
}

/// Checks the models the two sides are priced with against `--model` (`model`
/// names it; `given` when it was on the command line). A side that came priced
/// with another model than a given `--model` is refused: the option cannot apply
/// to it. Sides priced with different models are compared, but with a warning,
/// returned here: their ratios compare the models as well as the runs.
pub fn models(sides: [&Side; 2], model: &str, given: bool) -> Result<Option<String>, String> {
    if given {
        for s in sides {
            if s.priced_before && s.breakdown.model != model {
                return Err(format!(
                    "`{}` is already priced with model `{}`, so `--model {}` cannot apply to it; \
                     drop `--model` to compare it as priced, or compare statistics files \
                     (`spu-emu --stats`), which --compare prices with `--model`",
                    escape(s.file),
                    escape(&s.breakdown.model),
                    escape(model)
                ));
            }
        }
    }
    let [a, b] = sides;
    if a.breakdown.model == b.breakdown.model {
        return Ok(None);
    }
    let how = |s: &Side| match (s.priced_before, given) {
        (true, _) => "as the file was priced",
        (false, true) => "by `--model`",
        (false, false) => "the default, as no `--model` was given",
    };
    Ok(Some(format!(
        "A (`{}`) is priced with model `{}` ({}) and B (`{}`) with model `{}` ({}): the \
         ratios B / A compare the models as well as the runs",
        escape(a.file),
        escape(&a.breakdown.model),
        how(a),
        escape(b.file),
        escape(&b.breakdown.model),
        how(b)
    )))
}

/// One compared figure: its section, name and unit, and its value in A and B.
struct Row {
    section: &'static str,
    name: String,
    unit: &'static str,
    a: f64,
    b: f64,
}

impl Row {
    /// B / A; `None` when A is 0.
    fn ratio(&self) -> Option<f64> {
        (self.a != 0.0).then(|| self.b / self.a)
    }
}

fn rows(a: &Breakdown, b: &Breakdown) -> Vec<Row> {
    let row = |section, name: &str, unit, a, b| Row {
        section,
        name: name.to_string(),
        unit,
        a,
        b,
    };
    let mut out = vec![
        row("run", "cycles", "cycles", a.cycles as f64, b.cycles as f64),
        row("run", "time", "s", a.time_s, b.time_s),
        row("power", "leakage", "W", a.leakage_w, b.leakage_w),
        row(
            "power",
            "dynamic",
            "W",
            a.dynamic_power_w,
            b.dynamic_power_w,
        ),
        row("energy", "static", "J", a.static_j, b.static_j),
        row("energy", "dynamic", "J", a.dynamic_j, b.dynamic_j),
        row("energy", "total", "J", a.total_j, b.total_j),
        row("energy", "edp", "J*s", a.edp_js, b.edp_js),
    ];
    let mut names: Vec<&String> = a.components.keys().chain(b.components.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let x = a.components.get(name).copied().unwrap_or(0.0);
        let y = b.components.get(name).copied().unwrap_or(0.0);
        out.push(row("component", name, "J", x, y));
    }
    out
}

/// The table: one line per figure, with the ratio B / A.
pub fn table_report(a: &Breakdown, a_name: &str, b: &Breakdown, b_name: &str) -> String {
    let (a_name, b_name) = (escape(a_name), escape(b_name));
    let mut t = table(&["metric", &a_name, &b_name, "B / A"], 1);
    for r in rows(a, b) {
        let fmt = |v: f64| match (r.section, r.unit) {
            (_, "cycles") => spu_emu::observe::report::grouped(v as u64),
            (_, "s") => seconds(v),
            (_, "W") => format!("{} W", fixed(v, 2)),
            (_, "J*s") => format!("{v:.4e} J*s"),
            _ => joules(v),
        };
        let name = match r.section {
            "run" | "component" => escape(&r.name).into_owned(),
            "power" => format!("{} power", r.name),
            _ if r.name == "edp" => "energy-delay".into(),
            _ => format!("{} energy", r.name),
        };
        let ratio = r.ratio().map_or_else(|| "-".into(), |q| fixed(q, 3));
        t.add_row(vec![name, fmt(r.a), fmt(r.b), ratio]);
    }
    format!(
        "A: {} on {} (model `{}`)\nB: {} on {} (model `{}`)\n{t}\n",
        escape(&a.kernel),
        escape(&a.machine),
        escape(&a.model),
        escape(&b.kernel),
        escape(&b.machine),
        escape(&b.model)
    )
}

/// JSON: each run's file, kernel, machine and model, and the figures with their
/// ratio (`null` when A is 0).
pub fn json_report(a: &Breakdown, a_name: &str, b: &Breakdown, b_name: &str) -> String {
    let run = |r: &Breakdown, file: &str| {
        serde_json::json!({
            "file": file,
            "kernel": r.kernel,
            "machine": r.machine,
            "model": r.model,
        })
    };
    let figures: Vec<serde_json::Value> = rows(a, b)
        .into_iter()
        .map(|r| {
            serde_json::json!({
                "section": r.section,
                "name": r.name,
                "unit": r.unit,
                "a": r.a,
                "b": r.b,
                "b_over_a": r.ratio(),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "a": run(a, a_name),
        "b": run(b, b_name),
        "figures": figures,
    });
    // Plain values with string keys and finite numbers: cannot fail.
    let text = serde_json::to_string_pretty(&doc).expect("comparison serialises");
    format!("{}\n", spu_io::quote::json(&text))
}

/// CSV: `section,name,unit,a,b,b_over_a`, one row per figure (`b_over_a` empty
/// when A is 0).
pub fn csv_report(a: &Breakdown, b: &Breakdown) -> String {
    let mut s = String::from("section,name,unit,a,b,b_over_a\n");
    for r in rows(a, b) {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{}",
            r.section,
            csv_field(&r.name),
            r.unit,
            csv_number(r.a),
            csv_number(r.b),
            r.ratio().map(csv_number).unwrap_or_default()
        );
    }
    s
}
