//! Metrics: every scalar of a run's `--stats` document and of its energy breakdown
//! as one flat map of dotted keys (`cycles`, `offchip.load_words`, `counters.IDLE_COREP`,
//! `machine.cb.size_kib`, `energy.total_j`, ...), the unit of each key, and which keys
//! a sweep reports (exact keys and `*` patterns, with defaults).

use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Metric key -> value (a number, string or boolean).
pub type Metrics = BTreeMap<String, Json>;

/// What a sweep reports when its spec names no metrics: time, off-chip words,
/// cache and CB counts, synchronisation, static and dynamic energy.
pub const DEFAULT_METRICS: &[&str] = &[
    "cycles",
    "time_s",
    "offchip.words",
    "offchip.load_words",
    "offchip.store_words",
    "offchip.spill_words",
    "offchip.restore_words",
    "caches.*",
    "cb.reads",
    "cb.writes",
    "blocksyncs.global",
    "blocksyncs.link",
    "energy.leakage_w",
    "energy.static_j",
    "energy.dynamic_j",
    "energy.total_j",
];

/// Stats sections that are per unit, per instruction or per interval, not totals.
const SKIPPED_STATS: &[&str] = &["units", "pcs", "samples", "counter_events", "machine"];
/// Breakdown sections that are per line or per unit, or text (the legend).
const SKIPPED_ENERGY: &[&str] = &[
    "lines",
    "line_detail",
    "power_trace",
    "leakage_by_unit",
    "legend",
];

/// Metrics a functional run has but which mean nothing without timing (its
/// `cycles` count scheduling rounds).
const TIMING_ONLY: &[&str] = &["cycles", "time_s", "ipc"];

/// Whether only a timing run reports `key` (exact, or a pattern with `*`): energy
/// and the timing-only metrics, which a functional run does not have.
pub fn needs_timing(key: &str) -> bool {
    key.starts_with("energy.") || TIMING_ONLY.contains(&key)
}

/// The metrics of a finished run; `energy` is `None` for a functional run, which
/// gets no timing metrics either.
pub fn collect(
    stats: &spu_emu::observe::stats::Stats,
    energy: Option<&spu_prof::energy::Breakdown>,
) -> Metrics {
    let mut out = Metrics::new();
    // Plain structs of numbers, strings and maps: serialising cannot fail.
    let stats_json = serde_json::to_value(stats).expect("stats serialise");
    flatten("", &stats_json, SKIPPED_STATS, &mut out);
    for (k, v) in &stats.machine {
        out.insert(format!("machine.{k}"), v.clone());
    }
    match energy {
        Some(energy) => {
            let energy_json = serde_json::to_value(energy).expect("breakdown serialises");
            flatten("energy", &energy_json, SKIPPED_ENERGY, &mut out);
        }
        None => {
            for k in TIMING_ONLY {
                out.remove(*k);
            }
        }
    }
    // Every word that crossed the chip boundary (thesis Table 6.3 counts these).
    out.insert(
        "offchip.words".into(),
        Json::from(stats.offchip.load_words + stats.offchip.store_words),
    );
    out
}

fn flatten(prefix: &str, v: &Json, skip: &[&str], out: &mut Metrics) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Json::Object(map) => {
            for (k, v) in map {
                if prefix.is_empty() && skip.contains(&k.as_str())
                    || prefix == "energy" && skip.contains(&k.as_str())
                {
                    continue;
                }
                flatten(&join(k), v, &[], out);
            }
        }
        Json::Array(items) => {
            if items.iter().all(|i| !i.is_object() && !i.is_array()) {
                for (i, item) in items.iter().enumerate() {
                    out.insert(format!("{prefix}.{i}"), item.clone());
                }
            }
        }
        Json::Null => {}
        scalar => {
            out.insert(prefix.to_string(), scalar.clone());
        }
    }
}

/// The unit of a metric key, from its name.
pub fn unit(key: &str) -> Option<&'static str> {
    let last = key.rsplit('.').next().unwrap_or(key);
    if key.starts_with("energy.components.") {
        return Some("J");
    }
    if key.starts_with("counters.") {
        return Some("events");
    }
    let by_suffix: &[(&str, &str)] = &[
        ("_js", "J*s"),
        ("_j", "J"),
        ("_w", "W"),
        ("_mhz", "MHz"),
        ("_s", "s"),
        ("_words", "words"),
        ("_cycles", "cycles"),
        ("_kib", "KiB"),
        ("_bytes", "B"),
    ];
    if last == "cycles" || key == "offchip.words" {
        return Some(if last == "cycles" { "cycles" } else { "words" });
    }
    by_suffix
        .iter()
        .find(|(s, _)| last.ends_with(s))
        .map(|(_, u)| *u)
}

/// A CSV header cell: the key and its unit, e.g. `energy.total_j [J]`.
pub fn header(key: &str) -> String {
    match unit(key) {
        Some(u) => format!("{key} [{u}]"),
        None => key.to_string(),
    }
}

/// Whether a key matches a pattern where `*` stands for any characters.
pub fn matches(pattern: &str, key: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = key.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The metric columns of a report: each exact key in order (even if no run has
/// it), each pattern expanded to the matching keys of `available` in sorted order.
pub fn select<'a>(patterns: &[String], available: impl Iterator<Item = &'a String>) -> Vec<String> {
    let available: std::collections::BTreeSet<&String> = available.collect();
    let defaults: Vec<String>;
    let patterns = if patterns.is_empty() {
        defaults = DEFAULT_METRICS.iter().map(|s| s.to_string()).collect();
        &defaults
    } else {
        patterns
    };
    let mut out: Vec<String> = Vec::new();
    for p in patterns {
        if p.contains('*') {
            for k in available.iter().filter(|k| matches(p, k)) {
                if !out.contains(k) {
                    out.push((*k).clone());
                }
            }
        } else if !out.contains(p) {
            out.push(p.clone());
        }
    }
    out
}

/// Sections whose keys depend on the energy model (a model that prices
/// instructions names its own components).
const OPEN_SECTIONS: &[&str] = &["energy.components."];

/// Every metric key some run can report, known before any run: the keys of the
/// stats document and of the energy breakdown with every optional section
/// present, one per activity counter and one per machine key; keys under
/// [`OPEN_SECTIONS`] are taken on trust.
#[derive(Debug)]
pub struct Catalogue {
    keys: std::collections::BTreeSet<String>,
    /// The keys whose values are numbers (the others hold words or booleans).
    numeric: std::collections::BTreeSet<String>,
}

impl Catalogue {
    pub fn new() -> Catalogue {
        let shape = spu_emu::observe::stats::Stats::shape();
        let mut typed = collect(&shape, Some(&spu_prof::energy::Breakdown::default()));
        for c in spu_emu::observe::counters::Component::ALL {
            typed.insert(format!("counters.{}", c.name()), Json::from(0));
        }
        for (k, v) in spu_emu::Machine::default().entries() {
            typed.insert(format!("machine.{k}"), v);
        }
        let numeric = typed
            .iter()
            .filter(|(_, v)| v.is_number())
            .map(|(k, _)| k.clone())
            .collect();
        Catalogue {
            keys: typed.into_keys().collect(),
            numeric,
        }
    }

    /// The catalogue, made once.
    pub fn shared() -> &'static Catalogue {
        static SHARED: std::sync::LazyLock<Catalogue> = std::sync::LazyLock::new(Catalogue::new);
        &SHARED
    }

    /// Checks that every metric a run reports as a number (and every energy of an
    /// open section) holds one; `Err` names the first that does not and what it
    /// holds. Keys the catalogue does not know are left alone.
    pub fn check_values(&self, metrics: &Metrics) -> Result<(), String> {
        let numeric = |k: &str| {
            self.numeric.contains(k)
                || OPEN_SECTIONS
                    .iter()
                    .any(|s| k.len() > s.len() && k.starts_with(s))
        };
        // Every count, time, energy and machine value is at least zero.
        let negative = |v: &Json| v.as_f64().is_some_and(|x| x < 0.0);
        if let Some((key, value)) = metrics.iter().find(|(k, v)| numeric(k) && negative(v)) {
            return Err(format!(
                "its metric `{}` holds {value}, but no metric is negative",
                spu_io::quote::shorten(key)
            ));
        }
        let Some((key, value)) = metrics.iter().find(|(k, v)| numeric(k) && !v.is_number()) else {
            return Ok(());
        };
        let held = match value {
            Json::String(s) => format!("the string \"{}\"", spu_io::quote::shorten(s)),
            Json::Array(_) => "an array".to_string(),
            Json::Object(_) => "an object".to_string(),
            other => other.to_string(),
        };
        Err(format!(
            "its metric `{}` holds {held}, not a number",
            spu_io::quote::shorten(key)
        ))
    }

    /// Whether `key` (exact, or a pattern with `*`) names at least one metric.
    pub fn knows(&self, key: &str) -> bool {
        let open = |k: &str| {
            OPEN_SECTIONS
                .iter()
                .any(|s| k.len() > s.len() && k.starts_with(s))
        };
        if key.contains('*') {
            self.keys.iter().any(|k| matches(key, k))
                || OPEN_SECTIONS.iter().any(|s| matches(key, &format!("{s}X")))
        } else {
            self.keys.contains(key) || open(key)
        }
    }

    /// The known key closest to a misspelt one.
    pub fn closest(&self, key: &str) -> Option<&str> {
        if key.len() > 200 {
            return None;
        }
        spu_io::suggest::closest(key, self.keys.iter().map(String::as_str))
    }
}

impl Default for Catalogue {
    fn default() -> Self {
        Catalogue::new()
    }
}

/// A finished run's value of metric `key`. spu-prof leaves the components of 0 J
/// out of a breakdown (none of their events, or a model that prices them at 0),
/// so in a run that was priced (it has `energy.total_j`) a component it lacks is
/// 0; missing means not measured (a functional run, which is not priced), or a
/// name that is no component (`energy.components.BOGUS`).
pub fn value(metrics: &Metrics, key: &str) -> Option<Json> {
    let component = |k: &str| {
        k.strip_prefix("energy.components.").is_some_and(|name| {
            spu_emu::observe::counters::Component::ALL
                .iter()
                .any(|c| c.name() == name)
        })
    };
    match metrics.get(key) {
        Some(v) => Some(v.clone()),
        None if component(key) && metrics.contains_key("energy.total_j") => Some(Json::from(0.0)),
        None => None,
    }
}

/// A value as a CSV cell.
pub fn cell(v: Option<&Json>) -> String {
    match v {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_like_shell_globs() {
        assert!(matches("caches.*", "caches.l1.hits"));
        assert!(matches("*_words", "offchip.load_words"));
        assert!(matches("offchip.*_words", "offchip.spill_words"));
        assert!(!matches("offchip.*_words", "offchip.toggles"));
        assert!(matches("cycles", "cycles"));
        assert!(!matches("cycles", "cycles2"));
        assert!(!matches("caches.*", "cb.reads"));
        assert!(matches("*", "anything"));
    }

    #[test]
    fn units_follow_key_names() {
        assert_eq!(unit("energy.total_j"), Some("J"));
        assert_eq!(unit("energy.edp_js"), Some("J*s"));
        assert_eq!(unit("energy.leakage_w"), Some("W"));
        assert_eq!(unit("time_s"), Some("s"));
        assert_eq!(unit("cycles"), Some("cycles"));
        assert_eq!(unit("offchip.words"), Some("words"));
        assert_eq!(unit("offchip.dram_busy_cycles"), Some("cycles"));
        assert_eq!(unit("counters.IDLE_COREP"), Some("events"));
        assert_eq!(unit("machine.cb.size_kib"), Some("KiB"));
        assert_eq!(unit("ipc"), None);
        assert_eq!(header("energy.static_j"), "energy.static_j [J]");
        assert_eq!(header("ipc"), "ipc");
    }

    /// The catalogue is what real runs report: every key of a run on the SPU and
    /// on a GPU with caches is known, and every known key (but the counters, which
    /// only list what happened) comes from one of them.
    #[test]
    fn the_catalogue_is_what_runs_report() {
        let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
        let model = spu_prof::model::Model::load("default").unwrap();
        let (mut seen, mut runs) = (std::collections::BTreeSet::new(), Vec::new());
        // Local memory traffic is reported only by runs that have some.
        for (kernel, machine) in [
            ("vecadd.spu", "spu-4x4"),
            ("vecadd.spu", "gtx480"),
            ("cuda/local_nvcc.spu", "spu-4x4"),
        ] {
            let kernel = samples.join(kernel);
            let m = spu_emu::machine::preset(machine).unwrap();
            let options = spu_emu::LoadOptions::default();
            let s = spu_emu::cli::session::run_file(&kernel, &m, &options, Default::default())
                .unwrap_or_else(|e| panic!("{machine}: {e}"));
            let stats = spu_emu::observe::stats::Stats::new(&s.result, &s.image, &s.machine);
            let energy = spu_prof::energy::price(&stats, &model).unwrap();
            runs.push(collect(&stats, Some(&energy)));
        }
        let catalogue = Catalogue::new();
        for metrics in &runs {
            // What a run reports passes the check of an edited record's values.
            assert_eq!(catalogue.check_values(metrics), Ok(()));
            seen.extend(metrics.keys().cloned());
        }
        let unknown: Vec<&String> = seen.iter().filter(|k| !catalogue.knows(k)).collect();
        assert!(
            unknown.is_empty(),
            "keys of real runs the catalogue lacks: {unknown:?}"
        );
        let never: Vec<&String> = catalogue
            .keys
            .iter()
            .filter(|k| !k.starts_with("counters.") && !seen.contains(*k))
            .collect();
        assert!(
            never.is_empty(),
            "catalogue keys no run reported: {never:?}"
        );
        for d in DEFAULT_METRICS {
            assert!(catalogue.knows(d), "default metric `{d}` names nothing");
        }
        assert!(!catalogue.knows("cache.*"));
        assert!(!catalogue.knows("counters.NOPE"));
        assert!(!catalogue.knows("machine.cb.size"));
        assert!(!catalogue.knows("energy.components."));
        assert!(catalogue.knows("energy.components.anything"));
        assert_eq!(
            catalogue.closest("offchip.lod_words"),
            Some("offchip.load_words")
        );
    }

    /// A number where a number is reported passes; a string, boolean or null
    /// there is named with what it holds; keys the catalogue does not know pass.
    #[test]
    fn a_metric_that_should_be_a_number_must_hold_one() {
        let c = Catalogue::shared();
        let metrics = |k: &str, v: Json| Metrics::from([(k.to_string(), v)]);
        assert_eq!(c.check_values(&metrics("cycles", Json::from(3))), Ok(()));
        assert_eq!(c.check_values(&metrics("kernel", Json::from("k"))), Ok(()));
        assert_eq!(c.check_values(&metrics("note", Json::from("x"))), Ok(()));
        for (key, value, says) in [
            ("cycles", Json::from("12"), "holds the string \"12\""),
            ("energy.components.alu", Json::from(true), "holds true"),
            ("machine.cb.size_kib", Json::Null, "holds null"),
            ("counters.IDLE_COREP", Json::from(vec![1]), "holds an array"),
        ] {
            let e = c.check_values(&metrics(key, value)).unwrap_err();
            assert_eq!(e, format!("its metric `{key}` {says}, not a number"));
        }
    }

    #[test]
    fn selection_keeps_exact_keys_and_expands_patterns() {
        let keys: Vec<String> = ["cycles", "counters.B", "counters.A", "ipc"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let pats: Vec<String> = ["ipc", "counters.*", "missing", "ipc"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            select(&pats, keys.iter()),
            ["ipc", "counters.A", "counters.B", "missing"]
        );
        let d = select(&[], keys.iter());
        assert_eq!(d[0], "cycles");
        assert!(!d.iter().any(|k| k.contains('*')), "{d:?}");
    }
}
