//! Checking what `spu-prof` reads back (`--from-stats` and `--compare`) as strictly
//! as what a run of its own produces: a statistics file may only name the counters,
//! stall reasons, unit kinds, sides and energy classes the emulator writes, its
//! sample series must cover the run, and its numbers must be finite and agree with
//! each other; a JSON report must hold finite, non-negative numbers whose totals
//! add up, known component names, and a clock the machine table allows. Names and
//! paths longer than a path can be are refused, never printed whole.

use crate::energy::Breakdown;
use spu_emu::observe::counters::{Component, StallReason};
use spu_emu::observe::stats::{Counts, Stats};
use spu_io::quote::shorten;
use spu_isa::EnergyClass;
use std::collections::BTreeMap;

/// Longest name or path accepted in a statistics file or a report (Linux's
/// `PATH_MAX`; the emulator never writes a longer one).
pub const MAX_NAME_BYTES: usize = 4096;

/// What is wrong with a file read back; the caller names the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Damaged(pub String);

fn damaged(why: impl Into<String>) -> Damaged {
    Damaged(why.into())
}

fn known<'a>(
    what: &str,
    names: impl IntoIterator<Item = &'a String>,
    allowed: &[&str],
) -> Result<(), Damaged> {
    for n in names {
        if !allowed.contains(&n.as_str()) {
            return Err(damaged(format!(
                "unknown {what} `{}`; expected one of {}",
                shorten(n),
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

fn component_names() -> Vec<&'static str> {
    Component::ALL.iter().map(|c| c.name()).collect()
}

fn stall_names() -> Vec<&'static str> {
    StallReason::ALL.iter().map(|r| r.name()).collect()
}

fn short_name(what: &str, text: &str) -> Result<(), Damaged> {
    if text.len() > MAX_NAME_BYTES {
        return Err(damaged(format!(
            "{what} `{}` is longer than {MAX_NAME_BYTES} bytes",
            shorten(text)
        )));
    }
    Ok(())
}

/// A number for a message: exponent form when plain form would run long.
fn num(v: f64) -> String {
    if v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

fn finite(what: &str, v: f64) -> Result<(), Damaged> {
    if !v.is_finite() || v < 0.0 {
        return Err(damaged(format!(
            "{what} is {}; it must be a finite number >= 0",
            num(v)
        )));
    }
    Ok(())
}

/// True when `a` and `b` agree to about nine significant digits (sums taken in
/// another order may differ in the last bits).
fn agrees(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + f64::MIN_POSITIVE
}

fn consistent(what: &str, stated: f64, expected: f64) -> Result<(), Damaged> {
    if !agrees(stated, expected) {
        return Err(damaged(format!(
            "{what} is {}, but the report's other numbers make it {}",
            num(stated),
            num(expected)
        )));
    }
    Ok(())
}

/// Checks the counters of a statistics file (names, units, samples, numbers) as
/// the emulator writes them. The machine is checked when the run is priced.
pub fn check_stats(s: &Stats) -> Result<(), Damaged> {
    let components = component_names();
    let stalls = stall_names();
    short_name("the kernel name", &s.kernel)?;
    let all_counters = |what: &str, c: &Counts| -> Result<(), Damaged> {
        known(what, c.keys(), &components)?;
        match components.iter().find(|n| !c.contains_key(**n)) {
            Some(missing) => Err(damaged(format!("{what}s lack `{missing}`"))),
            None => Ok(()),
        }
    };
    all_counters("counter", &s.counters)?;
    known("counter", s.counter_events.keys(), &components)?;
    finite("`time_s`", s.time_s)?;
    finite("`ipc`", s.ipc)?;
    finite("`offchip.dram_busy_cycles`", s.offchip.dram_busy_cycles)?;
    if let Some(o) = &s.occupancy {
        finite("`occupancy.achieved`", o.achieved)?;
        short_name("`occupancy.limit`", &o.limit)?;
    }
    short_name("the pass mode", &s.passes.mode)?;
    for (i, u) in s.units.iter().enumerate() {
        let at = |why: String| damaged(format!("unit {i}: {why}"));
        match (u.kind.as_str(), u.y, u.side.as_deref()) {
            ("sm", Some(_), None) => {}
            ("iu" | "dma", None, Some("north" | "south" | "east" | "west")) => {}
            ("sm" | "iu" | "dma", _, _) => {
                return Err(at(format!(
                    "a `{}` unit needs {}",
                    u.kind,
                    if u.kind == "sm" {
                        "a row `y` and no `side`"
                    } else {
                        "a `side` (north, south, east or west) and no row `y`"
                    }
                )));
            }
            (other, _, _) => {
                return Err(at(format!(
                    "unknown unit kind `{}`; expected sm, iu or dma",
                    shorten(other)
                )));
            }
        }
        all_counters(&format!("unit {i} counter"), &u.counters)?;
        known("stall reason", u.stall_cycles.keys(), &stalls)?;
    }
    let classes: Vec<String> = EnergyClass::ALL.iter().map(|c| format!("{c:?}")).collect();
    let classes: Vec<&str> = classes.iter().map(String::as_str).collect();
    for (i, pc) in s.pcs.iter().enumerate() {
        if pc.pc as usize != i {
            return Err(damaged(format!(
                "instruction {i} says it is at pc {}; the list must hold every pc in order",
                pc.pc
            )));
        }
        known("energy class", [&pc.energy_class], &classes)?;
        known("counter", pc.components.keys(), &components)?;
        known("stall reason", pc.stall_cycles.keys(), &stalls)?;
        if let Some(f) = &pc.file {
            short_name("a source file name", f)?;
        }
        if let Some(t) = &pc.text {
            short_name("an instruction's text", t)?;
        }
    }
    if let Some(samples) = &s.samples {
        if samples.interval_cycles == 0 {
            return Err(damaged("`samples.interval_cycles` is 0"));
        }
        known("sampled counter", samples.components.keys(), &components)?;
        let mut series = samples.components.iter();
        let first = series.next().map(|(k, v)| (k, v.len()));
        if let Some((name, n)) = first
            && let Some((other, m)) = series.map(|(k, v)| (k, v.len())).find(|(_, m)| *m != n)
        {
            return Err(damaged(format!(
                "the sample series have different lengths (`{name}` has {n}, `{other}` {m}); \
                 every counter needs one sample per interval"
            )));
        }
        let intervals = s.cycles.div_ceil(samples.interval_cycles);
        if let Some((_, n)) = first
            && n as u64 > intervals
        {
            return Err(damaged(format!(
                "{n} samples of {} cycles cover more than the run's {} cycles",
                samples.interval_cycles, s.cycles
            )));
        }
    }
    Ok(())
}

/// Component names a report may hold: the counters, the wire terms and the
/// instruction classes with the engines' transfers.
fn report_components() -> Vec<String> {
    let mut names: Vec<String> = component_names().iter().map(|s| s.to_string()).collect();
    names.extend(["WIRE_CB", "WIRE_OFFCHIP", "EngineTransfers"].map(String::from));
    names.extend(EnergyClass::ALL.iter().map(|c| format!("{c:?}")));
    names
}

/// Checks a `--format json` report: numbers finite and non-negative, totals that
/// add up, a clock the machine table allows, known components, bounded names.
pub fn check_report(b: &Breakdown) -> Result<(), Damaged> {
    for (what, text) in [
        ("the model name", &b.model),
        ("the kernel name", &b.kernel),
        ("the machine", &b.machine),
    ] {
        short_name(what, text)?;
    }
    let mut clock = spu_emu::Machine::default();
    if clock
        .set(&format!("clock.freq_mhz={}", b.freq_mhz))
        .is_err()
    {
        return Err(damaged(format!(
            "`freq_mhz` is {}, not a clock the machine table allows",
            num(b.freq_mhz)
        )));
    }
    for (what, v) in [
        ("`time_s`", b.time_s),
        ("`leakage_w`", b.leakage_w),
        ("`static_j`", b.static_j),
        ("`dynamic_j`", b.dynamic_j),
        ("`total_j`", b.total_j),
        ("`avg_power_w`", b.avg_power_w),
        ("`dynamic_power_w`", b.dynamic_power_w),
        ("`edp_js`", b.edp_js),
    ] {
        finite(what, v)?;
    }
    let names = report_components();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let keys: Vec<&String> = b.components.keys().collect();
    known("component", keys, &names)?;
    let numbers = |what: &str, map: &BTreeMap<String, f64>| -> Result<(), Damaged> {
        for (k, v) in map {
            short_name(what, k)?;
            finite(&format!("{what} `{}`", shorten(k)), *v)?;
        }
        Ok(())
    };
    numbers("component", &b.components)?;
    numbers("line", &b.lines)?;
    for k in b.line_detail.keys().chain(b.legend.keys()) {
        short_name("a line", k)?;
    }
    for text in b.legend.values() {
        short_name("a legend entry", text)?;
    }
    for u in &b.leakage_by_unit {
        short_name("a leakage unit", &u.unit)?;
        short_name("a leakage unit", &u.what)?;
        for (what, v) in [
            ("count", u.count),
            ("each_w", u.each_w),
            ("total_w", u.total_w),
        ] {
            finite(
                &format!("`{what}` of the leakage unit `{}`", shorten(&u.unit)),
                v,
            )?;
        }
        consistent(
            &format!("`total_w` of the leakage unit `{}`", shorten(&u.unit)),
            u.total_w,
            u.count * u.each_w,
        )?;
    }
    for p in b.power_trace.iter().flatten() {
        finite("a power sample's `t_s`", p.t_s)?;
        finite("a power sample's `dynamic_w`", p.dynamic_w)?;
    }
    consistent("`time_s`", b.time_s, b.cycles as f64 / (b.freq_mhz * 1e6))?;
    consistent(
        "`leakage_w`",
        b.leakage_w,
        b.leakage_by_unit.iter().map(|u| u.total_w).sum(),
    )?;
    consistent("`static_j`", b.static_j, b.leakage_w * b.time_s)?;
    consistent("`dynamic_j`", b.dynamic_j, b.components.values().sum())?;
    consistent("`total_j`", b.total_j, b.static_j + b.dynamic_j)?;
    consistent("`edp_js`", b.edp_js, b.total_j * b.time_s)?;
    Ok(())
}
