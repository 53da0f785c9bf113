//! Refusing a breakdown whose numbers are no longer finite (a model with values
//! near 1e308 overflows when multiplied), naming the model keys behind the
//! number, each with the file or built-in model of the `extends` chain that sets it.

use super::{Breakdown, EnergyError};
use crate::model::{Kind, Model};

/// `key `a` in F`, `keys `a` and `b` in F`, or `key `a` in F and key `b` in G`:
/// each key with the file that set it, keys of one file together.
pub(super) fn key_list(keys: &[(String, String)]) -> String {
    let mut files: Vec<(&str, Vec<String>)> = Vec::new();
    for (key, file) in keys {
        let quoted = format!("`{key}`");
        match files.iter_mut().find(|(f, _)| f == file) {
            Some((_, ks)) => ks.push(quoted),
            None => files.push((file, vec![quoted])),
        }
    }
    let parts: Vec<String> = files
        .iter()
        .map(|(file, ks)| match ks.as_slice() {
            [one] => format!("key {one} in {file}"),
            [rest @ .., last] => format!("keys {} and {last} in {file}", rest.join(", ")),
            [] => String::new(),
        })
        .collect();
    match parts.as_slice() {
        [] => "its largest value".to_string(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The model keys behind a component, class or unit of a breakdown: wire energy
/// is the product of the `[wires]` keys of its wire.
fn key_of(model: &Model, name: &str) -> Vec<String> {
    let key = match (&model.kind, name) {
        (Kind::Components { .. }, "WIRE_CB") => {
            return vec!["wires.pj_per_bit_mm".into(), "wires.cb_link_mm".into()];
        }
        (Kind::Components { .. }, "WIRE_OFFCHIP") => {
            return vec!["wires.pj_per_bit_mm".into(), "wires.offchip_mm".into()];
        }
        (Kind::InstructionClasses { .. }, "EngineTransfers") => {
            return vec!["engine_pj.load".into(), "engine_pj.store".into()];
        }
        (Kind::Components { .. }, "SM") => "leakage_w.sm".into(),
        (Kind::Components { .. }, "IU") => "leakage_w.iu".into(),
        (Kind::Components { .. }, "DMA engine") => "leakage_w.dma".into(),
        (Kind::Components { .. }, "CB") => "leakage_w.cb_per_kib".into(),
        (Kind::Components { .. }, "L1") => "leakage_w.l1_per_kib".into(),
        (Kind::Components { .. }, "L2") => "leakage_w.l2_per_kib".into(),
        (Kind::Components { .. }, "network to L2") => "leakage_w.noc".into(),
        (Kind::Components { .. }, "uncore") => "leakage_w.uncore".into(),
        // A component priced per byte: its energy is `event_pj` scaled by
        // bytes over `event_bytes`, so either may be the cause.
        (Kind::Components { event_bytes, .. }, c) if event_bytes.keys().any(|k| k.name() == c) => {
            return vec![format!("event_pj.{c}"), format!("event_bytes.{c}")];
        }
        (Kind::Components { .. }, c) => format!("event_pj.{c}"),
        (Kind::InstructionClasses { .. }, "chip (e0)") => "static_w.chip".into(),
        (Kind::InstructionClasses { .. }, c) => format!("class_pj.{c}"),
    };
    vec![key]
}

/// Refuses a breakdown with an infinite or undefined number, naming the model key
/// that caused it (a model with values near 1e308 overflows when multiplied).
pub(super) fn check_finite(b: &Breakdown, model: &Model) -> Result<(), EnergyError> {
    let fail = |what: String, value: f64, keys: Vec<String>| EnergyError::NotFinite {
        model: spu_io::quote::shorten(&model.name),
        what,
        value,
        keys: keys
            .into_iter()
            .map(|k| {
                let file = model.file_of(&k).to_string();
                (k, file)
            })
            .collect(),
    };
    for u in &b.leakage_by_unit {
        if !u.total_w.is_finite() {
            return Err(fail(
                format!("the leakage of the {}", u.unit),
                u.total_w,
                key_of(model, &u.unit),
            ));
        }
    }
    for (name, j) in &b.components {
        if !j.is_finite() {
            return Err(fail(
                format!("the energy of `{name}`"),
                *j,
                key_of(model, name),
            ));
        }
    }
    // Which parts each sum adds up: leakage, dynamic energy or both.
    let (leak, dynamic, both) = (Part::Leakage, Part::Dynamic, Part::Both);
    let totals = [
        ("the leakage power", b.leakage_w, leak),
        ("the static energy", b.static_j, leak),
        ("the dynamic energy", b.dynamic_j, dynamic),
        ("the total energy", b.total_j, both),
        ("the average power", b.avg_power_w, both),
        ("the energy-delay product", b.edp_js, both),
    ];
    let traced = b
        .power_trace
        .iter()
        .flatten()
        .map(|p| ("the power trace", p.dynamic_w, dynamic));
    let lines = b.lines.values().map(|j| ("a line's energy", *j, dynamic));
    if let Some((what, v, part)) = totals
        .into_iter()
        .chain(traced)
        .chain(lines)
        .find(|(_, v, _)| !v.is_finite())
    {
        return Err(fail(what.to_string(), v, contributors(b, model, part)));
    }
    Ok(())
}

/// The parts of a breakdown a sum adds up.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Leakage,
    Dynamic,
    Both,
}

/// The keys behind a finite sum's terms that overflow it together: each term of
/// `part` within a millionth of the largest (a sum of finite terms overflows
/// only when the largest are near the limit, and it takes all of them).
fn contributors(b: &Breakdown, model: &Model, part: Part) -> Vec<String> {
    let components = b
        .components
        .iter()
        .filter(|_| part != Part::Leakage)
        .map(|(n, j)| (n.as_str(), *j));
    let leakage = b
        .leakage_by_unit
        .iter()
        .filter(|_| part != Part::Dynamic)
        .map(|u| (u.unit.as_str(), u.total_w));
    let terms: Vec<(&str, f64)> = leakage.chain(components).collect();
    let largest = terms.iter().map(|t| t.1).fold(0.0, f64::max);
    let mut keys = Vec::new();
    for (name, v) in terms {
        if largest > 0.0 && v >= largest * 1e-6 {
            for key in key_of(model, name) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    keys
}
