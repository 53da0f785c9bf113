//! The `--stats` JSON document: the contract's keys (`cycles`, `offchip.*`, `cb.*`,
//! `passes.*`, `machine`, `counters`) plus per-unit and per-instruction detail the
//! profiler reads. Maps are sorted, so the same run always gives the same bytes.

use crate::counters::{Component, ComponentCounts, StallReason};
use crate::fault::UnitLabel;
use crate::load::Image;
use crate::machine::Machine;
use crate::outcome::RunResult;
use serde_json::{Value, json};

/// Version of the stats layout, bumped on incompatible changes.
pub const STATS_VERSION: u32 = 1;

/// Builds the stats document.
pub fn stats_json(result: &RunResult, image: &Image, machine: &Machine) -> Value {
    let t = &result.traffic;
    let issued: u64 = result.units.iter().map(|u| u.issued).sum();
    let threads: u64 = result.units.iter().map(|u| u.thread_instrs).sum();
    let mut totals = ComponentCounts::default();
    for u in &result.units {
        totals.merge(&u.counters);
    }
    let units: Vec<Value> = result
        .units
        .iter()
        .map(|u| {
            let kind = crate::report::unit_kind(u.label);
            let pos = match u.label {
                UnitLabel::Sm { x, y } => json!({"x": x, "y": y}),
                UnitLabel::Iu { side, index } | UnitLabel::Dma { side, index } => {
                    json!({"side": side.name(), "index": index})
                }
            };
            json!({
                "kind": kind,
                "position": pos,
                "work_items": u.items_done,
                "busy_cycles": u.busy_cycles,
                "code_cycles": u.code_cycles,
                "issued": u.issued,
                "thread_instructions": u.thread_instrs,
                "stall_cycles": stalls(&u.stalls),
                "counters": u.counters.to_json(),
            })
        })
        .collect();
    let lines = &image.module.lines;
    let pcs: Vec<Value> = result
        .pcs
        .iter()
        .enumerate()
        .map(|(pc, c)| {
            let (file, line) = lines.locs.get(pc).map_or((Value::Null, Value::Null), |l| {
                (
                    lines.files.get(usize::from(l.file)).cloned().into(),
                    l.line.into(),
                )
            });
            json!({
                "pc": pc,
                "file": file,
                "line": line,
                "text": spu_asm::disasm::instr_text(&image.module, pc),
                "energy_class": format!("{:?}", image.ops[pc].class.energy),
                "issued": c.issued,
                "threads": c.threads,
                "transactions": c.transactions,
                "conflict_waves": c.conflict_waves,
                "stall_cycles": stalls(&c.stalls),
            })
        })
        .collect();
    let l = &image.launch;
    json!({
        "stats_version": STATS_VERSION,
        "kernel": image.module.name,
        "cycles": result.cycles,
        "time_s": result.cycles as f64 / (machine.freq_mhz * 1e6),
        "instructions": {"warp": issued, "thread": threads},
        "ipc": issued as f64 / result.cycles.max(1) as f64,
        "offchip": {
            "load_words": t.load_words,
            "store_words": t.store_words,
            "spill_words": t.spill_words,
            "restore_words": t.restore_words,
            "load_transactions": t.load_transactions,
            "store_transactions": t.store_transactions,
            "dram_busy_cycles": result.dram_busy_cycles,
        },
        "cb": {
            "reads": result.cb.reads,
            "writes": result.cb.writes,
            "read_toggles": result.cb.read_toggles,
            "write_toggles": result.cb.write_toggles,
            "switches": result.cb.switches,
        },
        "passes": {
            "x": result.passes[0],
            "y": result.passes[1],
            "mode": machine.pass_mode.name(),
        },
        "blocksyncs": {"global": result.global_syncs, "link": result.link_syncs},
        "launch": {"grid": l.grid, "block": l.block, "iu_threads": l.iu_threads},
        "machine": machine.to_json(),
        "counters": totals.to_json(),
        "counter_events": Value::Object(Component::ALL.iter().map(|c| (c.name().to_string(), c.event().into())).collect()),
        "units": units,
        "pcs": pcs,
    })
}

fn stalls(s: &[u64]) -> Value {
    Value::Object(
        StallReason::ALL
            .iter()
            .map(|r| (r.name().to_string(), s[*r as usize].into()))
            .collect(),
    )
}
