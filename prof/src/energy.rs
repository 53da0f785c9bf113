//! Pricing a run: from the emulator's statistics and a model to leakage per unit
//! type, static energy (leakage power x cycles / clock, thesis Eq. 6.1), dynamic
//! energy per component and per source line, and an optional power trace. Every
//! joule of dynamic energy lands on exactly one component and one line.

pub use crate::leakage::{UnitLeakage, leakage_units, leakage_w};
use crate::legend::{CHIP_LINE, IDLE_LINE, NO_LINE, RUNTIME_LINE, WRITEBACK_LINE};
use crate::model::{Kind, Model, ModelError};
use serde::{Deserialize, Serialize};
use spu_emu::observe::counters::Component;
use spu_emu::observe::stats::{Stats, UnitStats};
use std::collections::BTreeMap;

mod finite;
use finite::{check_finite, key_list};

/// The units the chip has. A GPU has SMs only; statistics written by earlier
/// versions of the emulator also list unused boundary positions for a GPU, and
/// those are left out.
pub fn present(stats: &Stats, gpu: bool) -> impl Iterator<Item = &UnitStats> {
    stats.units.iter().filter(move |u| !gpu || u.kind == "sm")
}

/// Events of a component in a run. `CONST_DYNAMICP` is GPUWattch's constant
/// dynamic power: the chip draws it every cycle whatever runs, so its events are
/// the run's cycles; `IDLE_COREP` counts the idle cycles of the units present;
/// `DRAMP` and `MCP` add the dirty L2 lines written back when the kernel ended;
/// every other component counts the emulator's events.
pub fn events(stats: &Stats, c: Component, gpu: bool) -> u64 {
    let counted = || stats.counters.get(c.name()).copied().unwrap_or(0);
    match c {
        Component::ConstDynamicp => stats.cycles,
        Component::Dramp | Component::Mcp => {
            counted().saturating_add(stats.caches.as_ref().map_or(0, |k| k.end_writeback_lines))
        }
        Component::IdleCorep if gpu => present(stats, gpu)
            .map(|u| u.counters.get(c.name()).copied().unwrap_or(0))
            .fold(0u64, u64::saturating_add),
        _ => stats.counters.get(c.name()).copied().unwrap_or(0),
    }
}

/// Energy per counted event of each component on `machine`: `event_pj`, except
/// for the components the model prices per byte (`event_bytes`), whose events
/// cost `event_pj` x the bytes one event moves / the bytes `event_pj` prices. An
/// event moves a cache line on machines with data caches (their DRAM, memory
/// controller and network events are lines past the caches), a coalesced
/// transaction otherwise.
pub fn pj_per_event(
    machine: &spu_emu::Machine,
    event_pj: &BTreeMap<Component, f64>,
    event_bytes: &BTreeMap<Component, f64>,
) -> BTreeMap<Component, f64> {
    let moved = if machine.l1_kib > 0 || machine.l2_kib > 0 {
        machine.line_bytes
    } else {
        machine.transaction_bytes
    };
    event_pj
        .iter()
        .map(|(c, pj)| {
            let scale = event_bytes.get(c).map_or(1.0, |b| f64::from(moved) / b);
            (*c, pj * scale)
        })
        .collect()
}

/// Energy and work attributed to one source line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineEnergy {
    /// The line's dynamic energy: `event_j + waiting_j` (as in [`Breakdown::lines`]).
    pub joules: f64,
    /// Energy of the line's own events (fetch, registers, ALUs, memories, CBs,
    /// off-chip transfers and their wires): what the instructions did.
    #[serde(default)]
    pub event_j: f64,
    /// The chip's constant dynamic power over the scheduler cycles the line held
    /// (its issue cycles and the stalls while it was next): what waiting cost.
    #[serde(default)]
    pub waiting_j: f64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
}

/// Power in one sampling interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSample {
    /// Interval start, seconds.
    pub t_s: f64,
    pub dynamic_w: f64,
}

/// Where the energy of a run went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Breakdown {
    pub model: String,
    pub kernel: String,
    pub machine: String,
    pub cycles: u64,
    pub freq_mhz: f64,
    pub time_s: f64,
    pub leakage_w: f64,
    pub leakage_by_unit: Vec<UnitLeakage>,
    pub static_j: f64,
    pub dynamic_j: f64,
    pub total_j: f64,
    pub avg_power_w: f64,
    pub dynamic_power_w: f64,
    /// Energy-delay product, J·s.
    pub edp_js: f64,
    /// Component -> joules.
    pub components: BTreeMap<String, f64>,
    /// `file:line` (or a pseudo-line) -> joules.
    pub lines: BTreeMap<String, f64>,
    /// Instruction counts per line.
    pub line_detail: BTreeMap<String, LineEnergy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_trace: Option<Vec<PowerSample>>,
    /// What each component and pseudo-line present means, and whether it is charged
    /// per event, per unit-cycle or per chip cycle (see [`crate::legend`]).
    #[serde(default)]
    pub legend: BTreeMap<String, String>,
}

/// Why a run cannot be priced.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnergyError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("the statistics name an invalid machine: {0}")]
    Machine(String),
    #[error("power traces need a components model; `{0}` prices instructions")]
    TraceNeedsComponents(String),
    #[error(
        "cannot price a --functional run: it models no cycles, so its time, static energy and power would be wrong; run it (or rerun spu-emu) without --functional to price it"
    )]
    Functional,
    #[error("the statistics are damaged: {0}; rerun `spu-emu --stats`")]
    BadStats(String),
    #[error(
        "model `{model}` makes {what} {value} ({}); such values cannot be priced: check {}",
        key_list(keys),
        if keys.len() == 1 { "that key" } else { "those keys" }
    )]
    NotFinite {
        model: String,
        what: String,
        value: f64,
        /// The model keys behind the value (several when it is their product),
        /// each with the file (or built-in model) that set it.
        keys: Vec<(String, String)>,
    },
}

/// Joules per source line, with each instruction's line key formatted once.
struct Lines {
    /// Line key of each instruction, by PC.
    keys: Vec<String>,
    joules: BTreeMap<String, f64>,
    /// Of `joules`, the events' and the waiting share of instruction lines.
    events: BTreeMap<String, f64>,
    waiting: BTreeMap<String, f64>,
}

impl Lines {
    fn new(stats: &Stats) -> Lines {
        Lines {
            keys: stats
                .pcs
                .iter()
                .map(|pc| line_key(&pc.file, pc.line))
                .collect(),
            joules: BTreeMap::new(),
            events: BTreeMap::new(),
            waiting: BTreeMap::new(),
        }
    }

    /// Adds energy of the events of instruction `pc` (an index into `stats.pcs`).
    fn add_pc(&mut self, pc: usize, j: f64) {
        *self.joules.entry(self.keys[pc].clone()).or_default() += j;
        *self.events.entry(self.keys[pc].clone()).or_default() += j;
    }

    /// Adds time-based energy charged to instruction `pc` for the cycles it held.
    fn add_pc_waiting(&mut self, pc: usize, j: f64) {
        *self.joules.entry(self.keys[pc].clone()).or_default() += j;
        *self.waiting.entry(self.keys[pc].clone()).or_default() += j;
    }

    /// Adds energy to a pseudo-line.
    fn add(&mut self, key: &str, j: f64) {
        *self.joules.entry(key.into()).or_default() += j;
    }
}

fn line_key(file: &Option<String>, line: Option<u32>) -> String {
    match (file, line) {
        (Some(f), Some(l)) => format!("{f}:{l}"),
        _ => NO_LINE.into(),
    }
}

/// Prices a run.
pub fn price(stats: &Stats, model: &Model) -> Result<Breakdown, EnergyError> {
    if stats.functional {
        return Err(EnergyError::Functional);
    }
    if let Some(s) = &stats.samples
        && s.interval_cycles == 0
    {
        return Err(EnergyError::BadStats(
            "`samples.interval_cycles` is 0".into(),
        ));
    }
    let machine = stats
        .machine()
        .map_err(|e| EnergyError::Machine(e.to_string()))?;
    let freq_hz = machine.freq_mhz * 1e6;
    let time_s = stats.cycles as f64 / freq_hz;
    let sms = u64::from(machine.grid_cols) * u64::from(machine.grid_rows);
    let gpu = machine.is_gpu();
    let absent = (stats.units.len() - present(stats, gpu).count()) as u64;
    let mut components: BTreeMap<String, f64> = BTreeMap::new();
    let mut lines = Lines::new(stats);
    let mut detail: BTreeMap<String, LineEnergy> = BTreeMap::new();
    for (pc, key) in stats.pcs.iter().zip(&lines.keys) {
        let d = detail.entry(key.clone()).or_default();
        // An instruction the assembler added to a statement runs as often as the
        // statement's own: counting it too would double the line's count.
        if !pc.hidden {
            d.warp_instructions += pc.issued;
            d.thread_instructions += pc.threads;
        }
    }
    let leakage_by_unit = leakage_units(&machine, model)?;
    let trace_pj = match &model.kind {
        Kind::Components {
            event_pj,
            event_bytes,
            wires,
            ..
        } => {
            let event_pj = &pj_per_event(&machine, event_pj, event_bytes);
            let inner = InnerLinks::of(stats, event_pj);
            // Component energy, and its split over lines.
            for c in Component::ALL {
                let pj = event_pj[c];
                let total = events(stats, *c, gpu);
                *components.entry(c.name().into()).or_default() += total as f64 * pj * 1e-12;
                let mut by_pc = 0u64;
                for (i, pc) in stats.pcs.iter().enumerate() {
                    let n = pc.components.get(c.name()).copied().unwrap_or(0);
                    if n > 0 {
                        by_pc += n;
                        lines.add_pc(i, n as f64 * inner.pj(*c, pj) * 1e-12);
                    }
                }
                if *c == Component::ConstDynamicp {
                    by_pc = spread_constant(stats, gpu, total, pj, &mut lines);
                }
                let rest = total.saturating_sub(by_pc);
                if rest > 0 {
                    let pseudo = match c {
                        Component::IdleCorep => IDLE_LINE,
                        Component::ConstDynamicp => CHIP_LINE,
                        Component::Dramp | Component::Mcp if stats.caches.is_some() => {
                            WRITEBACK_LINE
                        }
                        _ => RUNTIME_LINE,
                    };
                    lines.add(pseudo, rest as f64 * pj * 1e-12);
                }
            }
            inner.move_energy(&mut components);
            if let Some(w) = wires {
                let cb_toggles = stats.cb.read_toggles + stats.cb.write_toggles;
                let cb_j = cb_toggles as f64 * w.pj_per_bit_mm * w.cb_link_mm * 1e-12;
                let offchip_mm = w.offchip_mm * (sms as f64 / 16.0).sqrt();
                let off_j = stats.offchip.toggles as f64 * w.pj_per_bit_mm * offchip_mm * 1e-12;
                spread(stats, "WIRE_CB", cb_j, "CBP", &mut components, &mut lines);
                spread(
                    stats,
                    "WIRE_OFFCHIP",
                    off_j,
                    "DRAMP",
                    &mut components,
                    &mut lines,
                );
            }
            let trace_pj: Option<Vec<f64>> = stats.samples.as_ref().map(|s| {
                let n = s.components.values().map(Vec::len).max().unwrap_or(0);
                let sampled = |c: Component, i: usize| {
                    s.components
                        .get(c.name())
                        .and_then(|v| v.get(i))
                        .copied()
                        .unwrap_or(0)
                };
                // The interval's cycles (the last may be short).
                let len = |i: usize| {
                    let start = (i as u64).saturating_mul(s.interval_cycles);
                    stats.cycles.saturating_sub(start).min(s.interval_cycles)
                };
                // Idle cycles of the units present: the samples count every unit,
                // so take out the absent ones' cycles and scale to the exact total
                // (absent units are idle nearly throughout).
                let idle: Vec<f64> = (0..n)
                    .map(|i| {
                        sampled(Component::IdleCorep, i)
                            .saturating_sub(absent.saturating_mul(len(i)))
                            as f64
                    })
                    .collect();
                let idle_sum: f64 = idle.iter().sum();
                let idle_total = events(stats, Component::IdleCorep, gpu) as f64;
                let idle_scale = if absent == 0 || idle_sum == 0.0 {
                    1.0
                } else {
                    idle_total / idle_sum
                };
                (0..n)
                    .map(|i| {
                        Component::ALL
                            .iter()
                            .map(|c| {
                                let count = match c {
                                    Component::ConstDynamicp => len(i) as f64,
                                    Component::IdleCorep => idle[i] * idle_scale,
                                    _ => sampled(*c, i) as f64,
                                };
                                count * inner.sampled_pj(*c, event_pj[c])
                            })
                            .sum()
                    })
                    .collect::<Vec<f64>>()
            });
            // The L2's write-back at the end of the kernel lands in the last interval.
            trace_pj.map(|mut pj| {
                let lines = stats.caches.as_ref().map_or(0, |k| k.end_writeback_lines);
                if let Some(last) = pj.last_mut() {
                    *last +=
                        lines as f64 * (event_pj[&Component::Dramp] + event_pj[&Component::Mcp]);
                }
                pj
            })
        }
        Kind::InstructionClasses {
            class_pj,
            engine_load_pj,
            engine_store_pj,
            ..
        } => {
            for (i, pc) in stats.pcs.iter().enumerate() {
                let pj = class_pj.get(&pc.energy_class).copied().unwrap_or(0.0);
                let j = pc.threads as f64 * pj * 1e-12;
                *components.entry(pc.energy_class.clone()).or_default() += j;
                lines.add_pc(i, j);
            }
            let o = &stats.offchip;
            let engine_j = (o.engine_load_words as f64 * engine_load_pj
                + o.engine_store_words as f64 * engine_store_pj)
                * 1e-12;
            if engine_j > 0.0 {
                components.insert("EngineTransfers".into(), engine_j);
                lines.add(RUNTIME_LINE, engine_j);
            }
            None
        }
    };
    components.retain(|_, j| *j > 0.0);
    for (key, d) in detail.iter_mut() {
        d.event_j = lines.events.get(key).copied().unwrap_or(0.0);
        d.waiting_j = lines.waiting.get(key).copied().unwrap_or(0.0);
        d.joules = lines.joules.get(key).copied().unwrap_or(0.0);
    }
    let legend = components
        .keys()
        .map(|name| (name.clone(), crate::legend::component_line(name)))
        .chain(lines.joules.keys().filter_map(|key| {
            crate::legend::pseudo_line(key).map(|text| (key.clone(), text.to_string()))
        }))
        .collect();
    let leakage_w: f64 = leakage_by_unit.iter().map(|u| u.total_w).sum();
    let static_j = leakage_w * time_s;
    let dynamic_j: f64 = components.values().sum();
    let total_j = static_j + dynamic_j;
    let power_trace = trace_pj.zip(stats.samples.as_ref()).map(|(pj, s)| {
        let interval_s = s.interval_cycles as f64 / freq_hz;
        pj.iter()
            .enumerate()
            .map(|(i, e)| {
                let start = i as f64 * interval_s;
                let len = (time_s - start).clamp(1.0 / freq_hz, interval_s);
                PowerSample {
                    t_s: start,
                    dynamic_w: e * 1e-12 / len,
                }
            })
            .collect()
    });
    let b = Breakdown {
        model: model.name.clone(),
        kernel: stats.kernel.clone(),
        machine: machine.summary(),
        cycles: stats.cycles,
        freq_mhz: machine.freq_mhz,
        time_s,
        leakage_w,
        leakage_by_unit,
        static_j,
        dynamic_j,
        total_j,
        avg_power_w: total_j / time_s.max(f64::MIN_POSITIVE),
        dynamic_power_w: dynamic_j / time_s.max(f64::MIN_POSITIVE),
        edp_js: total_j * time_s,
        components,
        lines: lines.joules,
        line_detail: detail,
        power_trace,
        legend,
    };
    check_finite(&b, model)?;
    Ok(b)
}

/// Constant dynamic power follows where the units' time went: each unit carries an
/// equal share of the chip's cycles, and the share of time units spent running code
/// is split over instructions by the scheduler cycles each one took (issue plus
/// stalls while it was next). The rest (idle units, engines) stays with the chip.
/// Returns the events assigned to instructions.
fn spread_constant(stats: &Stats, gpu: bool, total: u64, pj: f64, lines: &mut Lines) -> u64 {
    let unit_cycles = (present(stats, gpu).count() as u64).saturating_mul(stats.cycles);
    let code = present(stats, gpu)
        .map(|u| u.code_cycles)
        .fold(0u64, u64::saturating_add);
    let weight =
        |pc: &spu_emu::observe::stats::PcStats| pc.issued + pc.stall_cycles.values().sum::<u64>();
    let all: u64 = stats.pcs.iter().map(weight).sum();
    if unit_cycles == 0 || all == 0 {
        return 0;
    }
    // Events of code, in proportion to the code's share of all unit time.
    let code_events =
        (total as f64 * code.min(unit_cycles) as f64 / unit_cycles as f64).round() as u64;
    let mut assigned = 0u64;
    let mut acc = 0u64;
    for (i, pc) in stats.pcs.iter().enumerate() {
        let w = weight(pc);
        if w == 0 {
            continue;
        }
        // Cumulative rounding keeps the integer events summing exactly.
        acc += w;
        let upto = (code_events as u128 * acc as u128 / all as u128) as u64;
        let n = upto - assigned;
        assigned = upto;
        lines.add_pc_waiting(i, n as f64 * pj * 1e-12);
    }
    assigned
}

/// Adds a wire component and spreads it over lines in proportion to the lines'
/// events of a related component (CB accesses, DRAM transactions).
fn spread(
    stats: &Stats,
    name: &str,
    joules: f64,
    related: &str,
    components: &mut BTreeMap<String, f64>,
    lines: &mut Lines,
) {
    if joules <= 0.0 {
        return;
    }
    components.insert(name.into(), joules);
    let total = stats.counters.get(related).copied().unwrap_or(0);
    let mut assigned = 0.0;
    if total > 0 {
        for (i, pc) in stats.pcs.iter().enumerate() {
            let n = pc.components.get(related).copied().unwrap_or(0);
            if n > 0 {
                let j = joules * n as f64 / total as f64;
                assigned += j;
                lines.add_pc(i, j);
            }
        }
    }
    if joules - assigned > 0.0 {
        lines.add(RUNTIME_LINE, joules - assigned);
    }
}

/// Accesses to inner links (two block slots of one SM, `cb.inner_accesses`) are
/// counted in `CBP` with the other CB accesses but are shared-memory accesses:
/// they cost `SHRDP`'s energy per event. Code makes every one of them, so each
/// instruction's `CBP` events carry the inner share `accesses / code's CBP events`.
struct InnerLinks {
    accesses: u64,
    /// Every CB access (`counters.CBP`).
    all: u64,
    /// The share of code's CBP events that are inner accesses.
    share: f64,
    cbp_pj: f64,
    shrdp_pj: f64,
}

impl InnerLinks {
    fn of(stats: &Stats, event_pj: &BTreeMap<Component, f64>) -> InnerLinks {
        let accesses = stats.cb.inner_accesses.unwrap_or(0);
        let by_code: u64 = stats
            .pcs
            .iter()
            .map(|pc| {
                pc.components
                    .get(Component::Cbp.name())
                    .copied()
                    .unwrap_or(0)
            })
            .sum();
        InnerLinks {
            accesses,
            all: stats
                .counters
                .get(Component::Cbp.name())
                .copied()
                .unwrap_or(0)
                .max(1),
            share: if by_code == 0 {
                0.0
            } else {
                (accesses as f64 / by_code as f64).min(1.0)
            },
            cbp_pj: event_pj[&Component::Cbp],
            shrdp_pj: event_pj[&Component::Shrdp],
        }
    }

    /// The energy of one of an instruction's events of component `c`, `pj` but for
    /// CB events, which are inner accesses in the share `share`.
    fn pj(&self, c: Component, pj: f64) -> f64 {
        if c == Component::Cbp && self.accesses > 0 {
            (1.0 - self.share) * self.cbp_pj + self.share * self.shrdp_pj
        } else {
            pj
        }
    }

    /// The energy of one sampled event of component `c`: the samples count every
    /// CB access, the engines' too, so inner ones are the share `accesses / CBP`.
    fn sampled_pj(&self, c: Component, pj: f64) -> f64 {
        if c == Component::Cbp && self.accesses > 0 {
            let share = (self.accesses as f64 / self.all as f64).min(1.0);
            (1.0 - share) * self.cbp_pj + share * self.shrdp_pj
        } else {
            pj
        }
    }

    /// Moves the inner accesses from `CBP` to `SHRDP` in the component totals.
    fn move_energy(&self, components: &mut BTreeMap<String, f64>) {
        if self.accesses == 0 {
            return;
        }
        let n = self.accesses as f64;
        *components.entry(Component::Cbp.name().into()).or_default() -= n * self.cbp_pj * 1e-12;
        *components
            .entry(Component::Shrdp.name().into())
            .or_default() += n * self.shrdp_pj * 1e-12;
    }
}
