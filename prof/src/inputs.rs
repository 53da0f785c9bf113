//! Checking what `spu-prof` reads back (`--from-stats` and `--compare`) as strictly
//! as what a run of its own produces: a statistics file names a machine the machine
//! table allows and may only name the counters, stall reasons, unit kinds, sides
//! and energy classes the emulator writes, its sample series must cover the run
//! and add up to its counters (`samples`), and its numbers must be finite and
//! agree with each other and with its machine (the units' and instructions' counts
//! add up, the cycles give the time and the IPC); a JSON report must hold finite,
//! non-negative numbers whose totals add up, known component names, and a clock
//! the machine table allows; a page's data must hold together so that a page
//! written from them plays (`page`). Units and launches are checked against their
//! machine the same way in statistics and pages (`units`, `launch`). Names and
//! paths longer than a path can be are refused, never printed whole.

mod launch;
mod page;
mod samples;
mod units;

pub use page::check_page;

use crate::energy::Breakdown;
use spu_emu::Machine;
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

use spu_io::numbers::short as num;

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
/// the emulator writes them, on `m`: the machine its `machine` section names,
/// which the caller has rebuilt with [`Stats::machine`] (each key through the
/// machine table's setter, as a machine file's), so that no check here reads a
/// value the machine table refuses.
pub fn check_stats(s: &Stats, m: &Machine) -> Result<(), Damaged> {
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
        units::check_kind(i, &units::Place::of_stats(u))?;
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
    check_totals(s, m)?;
    check_counters(s)?;
    let places: Vec<units::Place> = s.units.iter().map(units::Place::of_stats).collect();
    units::check_on_machine(&places, m, &units::STATS)?;
    let run = launch::Launch {
        grid: s.launch.grid,
        block: s.launch.block,
        passes: [s.passes.x, s.passes.y],
        iu_threads: Some(s.launch.iu_threads),
    };
    launch::check_launch(&run, m, &launch::STATS)?;
    if s.passes.mode != m.pass_mode.name() {
        return Err(damaged(format!(
            "`passes.mode` is `{}`, but the `machine` section's `passes.mode` is `{}`",
            shorten(&s.passes.mode),
            m.pass_mode.name()
        )));
    }
    samples::check_samples(s, &components)?;
    Ok(())
}

/// Checks that the run's totals agree with each other as the emulator writes them:
/// the units' and the instructions' counts add up to the run's, a warp issues at
/// most 32 threads' instructions, and a timed run's cycles cover what its units
/// did and give its `time_s` and `ipc`.
fn check_totals(s: &Stats, m: &Machine) -> Result<(), Damaged> {
    let warp = s.instructions.warp;
    let thread = s.instructions.thread;
    if u128::from(thread) > 32 * u128::from(warp) {
        return Err(damaged(format!(
            "`instructions.thread` is {thread}, more than 32 threads for each of the {warp} \
             warp instructions"
        )));
    }
    let sum = |what: &str, total: u128, expected: u64, of: &str| {
        if total != u128::from(expected) {
            return Err(damaged(format!(
                "the {what} add up to {total}, but `{of}` is {expected}"
            )));
        }
        Ok(())
    };
    let units = |f: fn(&spu_emu::observe::stats::UnitStats) -> u64| {
        s.units.iter().map(|u| u128::from(f(u))).sum::<u128>()
    };
    sum(
        "units' `issued`",
        units(|u| u.issued),
        warp,
        "instructions.warp",
    )?;
    sum(
        "units' `thread_instructions`",
        units(|u| u.thread_instructions),
        thread,
        "instructions.thread",
    )?;
    let pcs = |f: fn(&spu_emu::observe::stats::PcStats) -> u64| {
        s.pcs.iter().map(|p| u128::from(f(p))).sum::<u128>()
    };
    sum(
        "instructions' `issued`",
        pcs(|p| p.issued),
        warp,
        "instructions.warp",
    )?;
    sum(
        "instructions' `threads`",
        pcs(|p| p.threads),
        thread,
        "instructions.thread",
    )?;
    if s.cycles == 0 && warp > 0 {
        return Err(damaged(format!(
            "`cycles` is 0, but the run issued {warp} warp instructions"
        )));
    }
    if s.functional {
        // `cycles` counts scheduling rounds; such a run is refused when priced.
        return Ok(());
    }
    for (i, u) in s.units.iter().enumerate() {
        for (what, n) in [
            ("busy_cycles", u.busy_cycles),
            ("code_cycles", u.code_cycles),
        ] {
            if n > s.cycles {
                return Err(damaged(format!(
                    "unit {i}: `{what}` is {n}, more than the run's {} cycles",
                    s.cycles
                )));
            }
        }
        // Each scheduler issues at most one warp instruction per cycle (a
        // functional run's stats marked as timed fail here).
        let (key, schedulers) = if u.kind == "sm" {
            ("sm.schedulers", m.sm_schedulers)
        } else {
            ("iu.schedulers", m.iu_schedulers)
        };
        if u128::from(u.issued) > u128::from(u.busy_cycles) * u128::from(schedulers) {
            return Err(damaged(format!(
                "unit {i}: `issued` is {}, more than its {} schedulers (`{key}`) can issue in \
                 its {} busy cycles; stats of a `--functional` run cannot be priced",
                u.issued, schedulers, u.busy_cycles
            )));
        }
    }
    let cycles = s.cycles as f64;
    if !agrees(s.ipc, warp as f64 / cycles.max(1.0)) {
        return Err(damaged(format!(
            "`ipc` is {}, but {warp} warp instructions in {} cycles make it {}",
            num(s.ipc),
            s.cycles,
            num(warp as f64 / cycles.max(1.0))
        )));
    }
    let mhz = m.freq_mhz;
    if !agrees(s.time_s, cycles / (mhz * 1e6)) {
        return Err(damaged(format!(
            "`time_s` is {}, but {} cycles at {mhz} MHz make it {}",
            num(s.time_s),
            s.cycles,
            num(cycles / (mhz * 1e6))
        )));
    }
    Ok(())
}

/// DRAM or memory-controller events a local word may cause at most: its line
/// read or written through (2 with the L2's write-miss fetch) and an L2 victim,
/// a dirty L1 victim's write to the L2 with the same, and its end-of-run write-back.
const LOCAL_DRAM_EVENTS: u128 = 7;

/// Checks the counters against what they count, as the emulator writes them:
/// the units' counters add up to the run's; DRAM and memory-controller events are
/// at most two per word moved off-chip (a line read, and one written back) and
/// [`LOCAL_DRAM_EVENTS`] per local word; and
/// in a timed run a unit's instruction events are at most its warp instructions
/// and its active and idle cycles at most the run's cycles.
fn check_counters(s: &Stats) -> Result<(), Damaged> {
    for (name, &total) in &s.counters {
        let units: u128 = s
            .units
            .iter()
            .map(|u| u128::from(u.counters.get(name).copied().unwrap_or(0)))
            .sum();
        if units != u128::from(total) {
            return Err(damaged(format!(
                "the units' `{name}` counters add up to {units}, but `counters.{name}` is {total}"
            )));
        }
    }
    let o = &s.offchip;
    let words = [
        o.load_words,
        o.store_words,
        o.spill_words,
        o.restore_words,
        o.engine_load_words,
        o.engine_store_words,
    ]
    .iter()
    .map(|&w| u128::from(w))
    .sum::<u128>();
    // Local memory is DRAM traffic too on machines with caches; a local line access
    // may also write back a dirty L1 line, which may miss in the L2 and evict a
    // dirty line there.
    let local = s
        .local
        .as_ref()
        .map_or(0, |l| u128::from(l.load_words) + u128::from(l.store_words));
    let most = 2 * words + LOCAL_DRAM_EVENTS * local;
    for name in ["DRAMP", "MCP"] {
        let n = s.counters.get(name).copied().unwrap_or(0);
        if u128::from(n) > most {
            let local = if local > 0 {
                format!(" and {local} to and from local memory (`local.*_words`)")
            } else {
                String::new()
            };
            return Err(damaged(format!(
                "`counters.{name}` is {n}, but the run moved {words} words off-chip \
                 (`offchip.*_words`){local}, which make at most {most} such events"
            )));
        }
    }
    let cbp = s.counters.get("CBP").copied().unwrap_or(0);
    if let Some(n) = s.cb.inner_accesses
        && n > cbp
    {
        return Err(damaged(format!(
            "`cb.inner_accesses` is {n}, more than the run's {cbp} CB accesses (`counters.CBP`), which include them"
        )));
    }
    if s.cb.inner_words.unwrap_or(0) > s.cb.reads.saturating_add(s.cb.writes) {
        return Err(damaged(format!(
            "`cb.inner_words` is {}, more than the {} words read and written on all links (`cb.reads` + `cb.writes`), which include them",
            s.cb.inner_words.unwrap_or(0),
            s.cb.reads.saturating_add(s.cb.writes)
        )));
    }
    if s.functional {
        return Ok(());
    }
    for (i, u) in s.units.iter().enumerate() {
        let count = |name: &str| u.counters.get(name).copied().unwrap_or(0);
        for name in ["IBP", "ICP", "PIPEP", "SCHEDP"] {
            if count(name) > u.issued {
                return Err(damaged(format!(
                    "unit {i}: `{name}` is {}, more than its {} warp instructions (`issued`)",
                    count(name),
                    u.issued
                )));
            }
        }
        let cycles = u128::from(count("CONST_DYNAMICP")) + u128::from(count("IDLE_COREP"));
        if cycles > u128::from(s.cycles) {
            return Err(damaged(format!(
                "unit {i}: `CONST_DYNAMICP` and `IDLE_COREP` add up to {cycles} unit-cycles, \
                 more than the run's {} cycles",
                s.cycles
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
    let per_second = |j: f64| j / b.time_s.max(f64::MIN_POSITIVE);
    consistent("`avg_power_w`", b.avg_power_w, per_second(b.total_j))?;
    consistent(
        "`dynamic_power_w`",
        b.dynamic_power_w,
        per_second(b.dynamic_j),
    )?;
    Ok(())
}

/// Why a file read back is not JSON a tool of this project wrote; JSON is read
/// with [`spu_emu::observe::json`], which checks it without building a tree.
pub use spu_emu::observe::json::JsonError;
