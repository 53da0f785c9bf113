//! Reports of a [`Breakdown`]: the default table (components sorted by energy,
//! leakage by unit type, static vs dynamic, power, time, energy-delay product),
//! JSON and CSV with the documented keys, the kernel source annotated with energy
//! per line (two runs side by side are [`crate::compare`]'s). Text from the user (kernel and file names,
//! source lines, names in a statistics file or model) is escaped
//! ([`spu_io::quote`]) in every format.

use crate::energy::Breakdown;
use crate::legend;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets};
use spu_io::quote::escape;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A number with `decimals` places, or in exponent form when fixed notation would
/// print dozens of digits (a model may price a run at up to 1e308 J).
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.abs() >= 1e9 {
        format!("{v:.decimals$e}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// A number for a CSV cell: exact, in exponent form when very large.
pub(crate) fn csv_number(v: f64) -> String {
    if v.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// Joules with a readable unit (ASCII, for stable output).
pub fn joules(j: f64) -> String {
    let a = j.abs();
    if a >= 1e9 {
        format!("{j:.4e} J")
    } else if a >= 1.0 {
        format!("{j:.4} J")
    } else if a >= 1e-3 {
        format!("{:.4} mJ", j * 1e3)
    } else if a >= 1e-6 {
        format!("{:.4} uJ", j * 1e6)
    } else if a == 0.0 {
        "0 J".into()
    } else {
        format!("{:.4} nJ", j * 1e9)
    }
}

pub(crate) fn seconds(s: f64) -> String {
    spu_emu::observe::report::seconds(s)
}

/// `part` as a percentage of `whole`, divided first: `100 * part` overflows for
/// a part near the largest double (a model may price a run that high).
fn percent(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{}%", fixed(part / whole * 100.0, 1))
    } else {
        "-".into()
    }
}

pub(crate) fn table(header: &[&str], right_from: usize) -> Table {
    let mut t = Table::new();
    t.load_style(presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.to_vec());
    for i in right_from..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The components, largest first (ties by name).
fn sorted(map: &BTreeMap<String, f64>) -> Vec<(&String, f64)> {
    let mut v: Vec<(&String, f64)> = map.iter().map(|(k, j)| (k, *j)).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v
}

/// The source text of `file:line`, trimmed and shortened for a table cell.
fn quote(key: &str, source: &dyn Fn(&str) -> Option<String>) -> String {
    const MAX: usize = 48;
    let Some((file, line)) = key.rsplit_once(':') else {
        return String::new();
    };
    let (Ok(n), Some(text)) = (line.parse::<usize>(), source(file)) else {
        return String::new();
    };
    let Some(text) = text.lines().nth(n.saturating_sub(1)) else {
        return String::new();
    };
    // The statement, without a trailing comment.
    let text = escape(text.split("//").next().unwrap_or("").trim());
    if text.chars().count() > MAX {
        format!("{}...", text.chars().take(MAX - 3).collect::<String>())
    } else {
        text.to_string()
    }
}

/// The default report. `source` gives a file's text by name, for quoting the
/// hottest lines.
pub fn table_report(b: &Breakdown, source: &dyn Fn(&str) -> Option<String>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} on {} (model `{}`)",
        escape(&b.kernel),
        escape(&b.machine),
        escape(&b.model)
    );
    let _ = writeln!(
        s,
        "time    {} ({} cycles at {} MHz)",
        seconds(b.time_s),
        spu_emu::observe::report::grouped(b.cycles),
        b.freq_mhz
    );
    let _ = writeln!(
        s,
        "energy  {}: static {} ({}), dynamic {} ({})",
        joules(b.total_j),
        joules(b.static_j),
        percent(b.static_j, b.total_j),
        joules(b.dynamic_j),
        percent(b.dynamic_j, b.total_j)
    );
    let _ = writeln!(
        s,
        "power   {} W average: leakage {} W, dynamic {} W",
        fixed(b.avg_power_w, 2),
        fixed(b.leakage_w, 2),
        fixed(b.dynamic_power_w, 2)
    );
    let _ = writeln!(s, "EDP     {:.4e} J*s\n", b.edp_js);
    let mut t = table(
        &[
            "dynamic component",
            "energy",
            "share",
            "per",
            "what it counts",
        ],
        1,
    );
    for col in [3, 4] {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Left);
        }
    }
    let mut timed = Vec::new();
    for (name, j) in sorted(&b.components) {
        let (basis, text) = legend::component(name);
        if basis.time_based() {
            timed.push(name.as_str());
        }
        t.add_row(vec![
            escape(name).into_owned(),
            joules(j),
            percent(j, b.dynamic_j),
            basis.label().to_string(),
            escape(&text).into_owned(),
        ]);
    }
    let _ = writeln!(s, "{t}");
    if !timed.is_empty() {
        let _ = writeln!(
            s,
            "{} {} time-based: they grow with run time, not with\nthe work done (GPUWattch's idle-core power per idle unit-cycle, constant power per\nchip cycle). Every other term is events x energy per event.",
            escape(&timed.join(" and ")),
            if timed.len() == 1 { "is" } else { "are" }
        );
    }
    let _ = writeln!(s);
    let mut t = table(&["leakage", "each", "total", "share"], 1);
    for u in &b.leakage_by_unit {
        t.add_row(vec![
            escape(if u.what.is_empty() { &u.unit } else { &u.what }).into_owned(),
            format!("{} W", fixed(u.each_w, 6)),
            format!("{} W", fixed(u.total_w, 3)),
            percent(u.total_w, b.leakage_w),
        ]);
    }
    let _ = writeln!(s, "{t}\n");
    let mut t = table(
        &[
            "hottest source lines",
            "energy",
            "share of dynamic",
            "source",
        ],
        1,
    );
    if let Some(c) = t.column_mut(3) {
        c.set_cell_alignment(CellAlignment::Left);
    }
    let mut lines = sorted(&b.lines);
    lines.truncate(8);
    let mut pseudo = Vec::new();
    for (line, j) in lines {
        let text = match legend::pseudo_line(line) {
            Some(meaning) => {
                pseudo.push((line, meaning));
                "(not an instruction: see below)".to_string()
            }
            None => quote(line, source),
        };
        t.add_row(vec![
            escape(line).into_owned(),
            joules(j),
            percent(j, b.dynamic_j),
            text,
        ]);
    }
    let _ = writeln!(s, "{t}");
    for (line, meaning) in pseudo {
        let _ = writeln!(s, "{}: {meaning}", escape(line));
    }
    s
}

/// The documented JSON keys (`leakage_w`, `static_j`, `dynamic_j`, `total_j`,
/// `cycles`, `components`, `lines`) and the rest of the breakdown.
pub fn json_report(b: &Breakdown) -> String {
    let mut text = Vec::new();
    // Into memory, of plain structs with string keys: cannot fail.
    write_json_report(b, &mut text).expect("breakdown serialises");
    String::from_utf8(text).expect("JSON is UTF-8")
}

/// [`json_report`] written to `w` as it is made, never held whole.
pub fn write_json_report(b: &Breakdown, w: impl std::io::Write) -> std::io::Result<()> {
    let mut w = spu_io::quote::JsonWriter::new(std::io::BufWriter::new(w));
    serde_json::to_writer_pretty(&mut w, b)?;
    std::io::Write::write_all(&mut w, b"\n")?;
    std::io::Write::flush(&mut w.finish()?.into_inner().map_err(|e| e.into_error())?)
}

pub(crate) fn csv_field(s: &str) -> String {
    let s = escape(s);
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row per number: `section,name,value,unit,meaning`; `meaning` explains
/// components (per event, toggle, unit-cycle or chip cycle), leakage rows and pseudo-lines.
pub fn csv_report(b: &Breakdown) -> String {
    let mut s = String::from("section,name,value,unit,meaning\n");
    let mut row = |section: &str, name: &str, value: String, unit: &str, meaning: &str| {
        let _ = writeln!(
            s,
            "{section},{},{value},{unit},{}",
            csv_field(name),
            csv_field(meaning)
        );
    };
    row(
        "run",
        "cycles",
        b.cycles.to_string(),
        "cycles",
        "core cycles",
    );
    row("run", "time", csv_number(b.time_s), "s", "run time");
    row(
        "energy",
        "leakage",
        csv_number(b.leakage_w),
        "W",
        "leakage power",
    );
    row(
        "energy",
        "static",
        csv_number(b.static_j),
        "J",
        "leakage power x time",
    );
    row(
        "energy",
        "dynamic",
        csv_number(b.dynamic_j),
        "J",
        "sum of the components",
    );
    row(
        "energy",
        "total",
        csv_number(b.total_j),
        "J",
        "static + dynamic",
    );
    row(
        "energy",
        "edp",
        csv_number(b.edp_js),
        "J*s",
        "energy-delay product",
    );
    for (name, j) in &b.components {
        row(
            "component",
            name,
            csv_number(*j),
            "J",
            &legend::component_line(name),
        );
    }
    for u in &b.leakage_by_unit {
        let what = format!("{} at {} W each", u.what, csv_number(u.each_w));
        row("leakage", &u.unit, csv_number(u.total_w), "W", &what);
    }
    for (line, j) in &b.lines {
        row(
            "line",
            line,
            csv_number(*j),
            "J",
            legend::pseudo_line(line).unwrap_or(""),
        );
    }
    s
}

/// The kernel source annotated with energy and instruction counts per line (like
/// `perf annotate`). `source` gives a file's text by name.
pub fn by_line_report(b: &Breakdown, source: &dyn Fn(&str) -> Option<String>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: dynamic energy by source line (model `{}`)",
        escape(&b.kernel),
        escape(&b.model)
    );
    let _ = writeln!(s, "total dynamic {}", joules(b.dynamic_j));
    let _ = writeln!(
        s,
        "energy = events (what the line's instructions did) + waiting (the chip's constant\n\
         dynamic power over the scheduler cycles the line held: issue and stalls)\n"
    );
    let mut files: Vec<&str> = Vec::new();
    for key in b.lines.keys().chain(b.line_detail.keys()) {
        if let Some((file, _)) = key.rsplit_once(':')
            && !files.contains(&file)
        {
            files.push(file);
        }
    }
    for file in files {
        let shown = escape(file);
        // Without its text a file's lines still get their totals, text left out.
        let (text, lines): (Option<String>, Vec<usize>) = match source(file) {
            Some(text) => {
                let n = text.lines().count();
                (Some(text), (1..=n).collect())
            }
            None => {
                let mut lines: Vec<usize> = b
                    .lines
                    .keys()
                    .chain(b.line_detail.keys())
                    .filter_map(|k| k.rsplit_once(':'))
                    .filter(|(f, _)| *f == file)
                    .filter_map(|(_, l)| l.parse().ok())
                    .collect();
                lines.sort_unstable();
                lines.dedup();
                (None, lines)
            }
        };
        match &text {
            Some(_) => {
                let _ = writeln!(s, "{shown}");
            }
            None => {
                let _ = writeln!(
                    s,
                    "{shown} (source not quoted; name it with --source FILE, or keep it beside the kernel or statistics file)"
                );
            }
        }
        let _ = writeln!(
            s,
            "{:>12} {:>7} {:>12} {:>12} {:>12}  {:>5} | source",
            "energy", "share", "events", "waiting", "warp instrs", "line"
        );
        let texts: Vec<&str> = text
            .as_deref()
            .map_or_else(Vec::new, |t| t.lines().collect());
        for line in lines {
            let src = texts.get(line - 1).copied().unwrap_or("");
            let key = format!("{file}:{line}");
            let j = b.lines.get(&key).copied();
            let detail = b.line_detail.get(&key);
            let (e, share) = match j {
                Some(j) if j > 0.0 => (joules(j), percent(j, b.dynamic_j)),
                _ => (String::new(), String::new()),
            };
            let part = |j: Option<f64>| match j {
                Some(j) if j > 0.0 => joules(j),
                _ => String::new(),
            };
            let events = part(detail.map(|d| d.event_j));
            let waiting = part(detail.map(|d| d.waiting_j));
            let n = detail
                .map(|d| d.warp_instructions)
                .filter(|n| *n > 0)
                .map(spu_emu::observe::report::grouped)
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "{e:>12} {share:>7} {events:>12} {waiting:>12} {n:>12}  {line:>5} | {}",
                spu_io::quote::escape_lines(src)
            );
        }
        let _ = writeln!(s);
    }
    let pseudo: Vec<(&String, &f64)> = b.lines.iter().filter(|(k, _)| k.starts_with('(')).collect();
    if !pseudo.is_empty() {
        let _ = writeln!(s, "not caused by an instruction:");
        for (k, j) in pseudo {
            let _ = writeln!(
                s,
                "{:>12} {:>7}  {}",
                joules(*j),
                percent(*j, b.dynamic_j),
                escape(k)
            );
            if let Some(meaning) = legend::pseudo_line(k) {
                let _ = writeln!(s, "{:>22}{meaning}", "");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    /// A share of a total near the largest double is a percentage, not `inf%`.
    #[test]
    fn shares_of_huge_totals_are_finite() {
        assert_eq!(super::percent(1.6e308, 1.6e308), "100.0%");
        assert_eq!(super::percent(0.8e308, 1.6e308), "50.0%");
        assert_eq!(super::percent(1.0, 4.0), "25.0%");
    }
}
