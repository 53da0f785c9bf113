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
    let totals = [
        ("the leakage power", b.leakage_w),
        ("the static energy", b.static_j),
        ("the dynamic energy", b.dynamic_j),
        ("the total energy", b.total_j),
        ("the average power", b.avg_power_w),
        ("the energy-delay product", b.edp_js),
    ];
    let traced = b
        .power_trace
        .iter()
        .flatten()
        .map(|p| ("the power trace", p.dynamic_w));
    let lines = b.lines.values().map(|j| ("a line's energy", *j));
    if let Some((what, v)) = totals
        .into_iter()
        .chain(traced)
        .chain(lines)
        .find(|(_, v)| !v.is_finite())
    {
        // The largest component or leakage is the likely cause.
        let biggest = b
            .components
            .iter()
            .map(|(n, j)| (n.as_str(), *j))
            .chain(
                b.leakage_by_unit
                    .iter()
                    .map(|u| (u.unit.as_str(), u.total_w)),
            )
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or_else(Vec::new, |(n, _)| key_of(model, n));
        return Err(fail(what.to_string(), v, biggest));
    }
    Ok(())
}
