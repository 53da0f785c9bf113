//! The `--stats` JSON document as typed structs: the documented keys (`cycles`,
//! `offchip.*`, `cb.*`, `passes.*`, `machine`, `counters`) plus per-unit,
//! per-instruction and (optionally) per-interval detail. `spu-emu` writes it and
//! `spu-prof` reads it back, so a run can be profiled without re-running. Maps are
//! sorted, so the same run always gives the same bytes.

use crate::load::Image;
use crate::machine::Machine;
use crate::machine::UnitLabel;
use crate::observe::counters::{Component, ComponentCounts, StallReason};
use crate::observe::outcome::{CacheTotals, RunResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the stats layout, bumped on incompatible changes.
pub const STATS_VERSION: u32 = 2;

/// Component name -> count.
pub type Counts = BTreeMap<String, u64>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    pub stats_version: u32,
    pub kernel: String,
    /// True for `--functional` runs: `cycles` then counts scheduling rounds.
    #[serde(default)]
    pub functional: bool,
    pub cycles: u64,
    pub time_s: f64,
    pub instructions: Instructions,
    pub ipc: f64,
    pub offchip: Offchip,
    /// Threads' local memory traffic (only in runs that have some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalTraffic>,
    pub cb: Cb,
    /// Data caches (machines with `cache.l1_kib` or `cache.l2_kib` > 0, timing mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches: Option<CacheTotals>,
    pub passes: Passes,
    /// GPU runs: resident blocks per SM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<Occupancy>,
    pub blocksyncs: Blocksyncs,
    pub launch: LaunchStats,
    /// The resolved machine, every key.
    #[serde(deserialize_with = "crate::observe::json::scalar_map")]
    pub machine: BTreeMap<String, serde_json::Value>,
    /// Totals per GPUWattch component (plus `CBP`).
    pub counters: Counts,
    /// What one count of each counter is.
    pub counter_events: BTreeMap<String, String>,
    pub units: Vec<UnitStats>,
    pub pcs: Vec<PcStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<SampleStats>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instructions {
    pub warp: u64,
    pub thread: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Offchip {
    pub load_words: u64,
    pub store_words: u64,
    pub spill_words: u64,
    pub restore_words: u64,
    pub engine_load_words: u64,
    pub engine_store_words: u64,
    pub load_transactions: u64,
    pub store_transactions: u64,
    /// Bits that changed between consecutive words moved off-chip.
    pub toggles: u64,
    pub dram_busy_cycles: f64,
}

/// Words threads moved to and from their local memory (`ld.local`, `st.local`:
/// local arrays, call parameters and results); a 64-bit value counts two.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalTraffic {
    pub load_words: u64,
    pub store_words: u64,
    /// Transactions (aligned segments of `memory.transaction_bytes`) of those
    /// words where local memory is cached DRAM traffic (machines with data
    /// caches, timing mode); 0 elsewhere.
    #[serde(default)]
    pub load_transactions: u64,
    #[serde(default)]
    pub store_transactions: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cb {
    pub reads: u64,
    pub writes: u64,
    pub read_toggles: u64,
    pub write_toggles: u64,
    pub switches: u64,
    /// Runs with several blocks per SM (`sm.fold_x` or `sm.fold_y` > 1): words
    /// read and written on inner links (between two block slots of one SM, carved
    /// from its shared memory), included in `reads` and `writes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inner_words: Option<u64>,
    /// The same runs: warp accesses to inner links, included in `counters.CBP`;
    /// `spu-prof` prices them as shared-memory accesses (`SHRDP`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inner_accesses: Option<u64>,
}

/// Occupancy of a GPU run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Occupancy {
    /// Blocks that fit on one SM at once.
    pub blocks_per_sm: u32,
    /// The machine key of the resource that limits `blocks_per_sm`.
    pub limit: String,
    pub warps_per_block: u32,
    /// Most blocks resident on one SM at any time.
    pub peak_blocks_per_sm: u32,
    /// Resident warps averaged over SMs and cycles, as a fraction of
    /// `sm.max_warps`.
    pub achieved: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Passes {
    pub x: u32,
    pub y: u32,
    pub mode: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blocksyncs {
    pub global: u64,
    pub link: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchStats {
    pub grid: [u32; 2],
    pub block: [u32; 3],
    pub iu_threads: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitStats {
    /// `sm`, `iu` or `dma`.
    pub kind: String,
    /// SM column or boundary position.
    pub x: u32,
    /// SM row; absent for boundary units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<u32>,
    /// Side of a boundary unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    pub work_items: u64,
    pub busy_cycles: u64,
    pub code_cycles: u64,
    /// Cycles a restoring virtual IU waited for its spill stream (not in
    /// `busy_cycles`); left out when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spill_wait_cycles: u64,
    pub issued: u64,
    pub thread_instructions: u64,
    pub stall_cycles: Counts,
    pub counters: Counts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcStats {
    pub pc: u32,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub text: Option<String>,
    /// The assembler added this instruction to its line's statement (the `mov` of
    /// an immediate the instruction cannot hold, ...): it is part of the line's
    /// energy and time, but not of the line's count of executed statements.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    pub energy_class: String,
    pub issued: u64,
    pub threads: u64,
    pub transactions: u64,
    pub conflict_waves: u64,
    pub stall_cycles: Counts,
    /// Component events this instruction caused (non-zero ones).
    pub components: Counts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleStats {
    pub interval_cycles: u64,
    /// Component name -> count per interval.
    pub components: BTreeMap<String, Vec<u64>>,
}

fn counts(c: &ComponentCounts, skip_zero: bool) -> Counts {
    c.iter()
        .filter(|(_, n)| !skip_zero || *n > 0)
        .map(|(k, n)| (k.name().to_string(), n))
        .collect()
}

fn stalls(s: &[u64]) -> Counts {
    StallReason::ALL
        .iter()
        .map(|r| (r.name().to_string(), s[*r as usize]))
        .collect()
}

impl Stats {
    /// A document with every optional section present, zeros and empty maps: the
    /// shape of every `--stats` document, for tools that check key names before
    /// any run. A struct literal, so that a new field cannot be left out.
    pub fn shape() -> Stats {
        Stats {
            stats_version: STATS_VERSION,
            kernel: String::new(),
            functional: false,
            cycles: 0,
            time_s: 0.0,
            instructions: Instructions::default(),
            ipc: 0.0,
            offchip: Offchip::default(),
            local: Some(LocalTraffic::default()),
            cb: Cb::default(),
            caches: Some(CacheTotals::default()),
            passes: Passes::default(),
            occupancy: Some(Occupancy::default()),
            blocksyncs: Blocksyncs::default(),
            launch: LaunchStats::default(),
            machine: BTreeMap::new(),
            counters: Counts::new(),
            counter_events: BTreeMap::new(),
            units: Vec::new(),
            pcs: Vec::new(),
            samples: None,
        }
    }

    /// Builds the document of a finished run.
    pub fn new(result: &RunResult, image: &Image, machine: &Machine) -> Stats {
        let t = &result.traffic;
        let issued: u64 = result.units.iter().map(|u| u.issued).sum();
        let threads: u64 = result.units.iter().map(|u| u.thread_instrs).sum();
        let mut totals = ComponentCounts::default();
        for u in &result.units {
            totals.merge(&u.counters);
        }
        let units = result
            .units
            .iter()
            .map(|u| {
                let (x, y, side) = match u.label {
                    UnitLabel::Sm { x, y } => (x, Some(y), None),
                    UnitLabel::Iu { side, index } | UnitLabel::Dma { side, index } => {
                        (index, None, Some(side.name().to_string()))
                    }
                };
                UnitStats {
                    kind: crate::observe::report::unit_kind(u.label).to_string(),
                    x,
                    y,
                    side,
                    work_items: u.items_done,
                    busy_cycles: u.busy_cycles,
                    code_cycles: u.code_cycles,
                    spill_wait_cycles: u.spill_wait_cycles,
                    issued: u.issued,
                    thread_instructions: u.thread_instrs,
                    stall_cycles: stalls(&u.stalls),
                    counters: counts(&u.counters, false),
                }
            })
            .collect();
        let lines = &image.module.lines;
        let pcs = result
            .pcs
            .iter()
            .enumerate()
            .map(|(pc, c)| {
                let loc = lines.locs.get(pc);
                PcStats {
                    pc: pc as u32,
                    file: loc.and_then(|l| lines.files.get(usize::from(l.file)).cloned()),
                    line: loc.map(|l| l.line),
                    text: spu_asm::disasm::instr_text(&image.module, pc),
                    hidden: image.module.debug.hidden(pc),
                    energy_class: format!("{:?}", image.program.info[pc].class.energy),
                    issued: c.issued,
                    threads: c.threads,
                    transactions: c.transactions,
                    conflict_waves: c.conflict_waves,
                    stall_cycles: stalls(&c.stalls),
                    components: counts(&c.components, true),
                }
            })
            .collect();
        let samples = result.samples.as_ref().map(|s| SampleStats {
            interval_cycles: s.interval_cycles,
            components: Component::ALL
                .iter()
                .map(|c| {
                    let series = s.intervals.iter().map(|i| i.get(*c)).collect();
                    (c.name().to_string(), series)
                })
                .collect(),
        });
        let l = &image.launch;
        Stats {
            stats_version: STATS_VERSION,
            kernel: image.module.name.clone(),
            functional: result.functional,
            cycles: result.cycles,
            time_s: result.cycles as f64 / (machine.freq_mhz * 1e6),
            instructions: Instructions {
                warp: issued,
                thread: threads,
            },
            ipc: issued as f64 / result.cycles.max(1) as f64,
            offchip: Offchip {
                load_words: t.load_words,
                store_words: t.store_words,
                spill_words: t.spill_words,
                restore_words: t.restore_words,
                engine_load_words: t.engine_load_words,
                engine_store_words: t.engine_store_words,
                load_transactions: t.load_transactions,
                store_transactions: t.store_transactions,
                toggles: t.toggles,
                dram_busy_cycles: result.dram_busy_cycles,
            },
            local: (t.local_load_words + t.local_store_words > 0).then_some(LocalTraffic {
                load_words: t.local_load_words,
                store_words: t.local_store_words,
                load_transactions: t.local_load_transactions,
                store_transactions: t.local_store_transactions,
            }),
            cb: Cb {
                reads: result.cb.reads,
                writes: result.cb.writes,
                read_toggles: result.cb.read_toggles,
                write_toggles: result.cb.write_toggles,
                switches: result.cb.switches,
                inner_words: machine.is_folded().then_some(result.cb.inner_words),
                inner_accesses: machine.is_folded().then_some(result.cb.inner_accesses),
            },
            caches: result.caches,
            passes: Passes {
                x: result.passes[0],
                y: result.passes[1],
                mode: machine.pass_mode.name().to_string(),
            },
            occupancy: result.occupancy.map(|o| Occupancy {
                blocks_per_sm: o.blocks_per_sm,
                limit: o.limit.key().to_string(),
                warps_per_block: o.warps_per_block,
                peak_blocks_per_sm: o.peak_blocks_per_sm,
                achieved: o.achieved,
            }),
            blocksyncs: Blocksyncs {
                global: result.global_syncs,
                link: result.link_syncs,
            },
            launch: LaunchStats {
                grid: l.grid,
                block: l.block,
                iu_threads: l.iu_threads,
            },
            machine: machine
                .entries()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            counters: counts(&totals, false),
            counter_events: Component::ALL
                .iter()
                .map(|c| (c.name().to_string(), c.event().to_string()))
                .collect(),
            units,
            pcs,
            samples,
        }
    }

    /// The machine the run used, rebuilt from `machine`.
    pub fn machine(&self) -> Result<Machine, crate::machine::MachineError> {
        use crate::machine::param::RawValue;
        let mut m = Machine::default();
        // Typed as in a machine file: a quoted number is text, and refused as there.
        for (key, value) in &self.machine {
            let raw = match value {
                serde_json::Value::String(s) => RawValue::Text(s.clone()),
                serde_json::Value::Number(n) => match n.as_i64() {
                    Some(i) => RawValue::Int(i),
                    None if n.is_u64() => RawValue::BigInt(n.to_string()),
                    None => RawValue::Float(n.as_f64().unwrap_or(f64::NAN)),
                },
                other => {
                    return Err(crate::machine::MachineError::BadValue {
                        key: key.clone(),
                        why: format!(
                            "`{}` is not valid here: machine values are numbers or words",
                            spu_io::quote::escape(&crate::machine::param::shorten(
                                &other.to_string()
                            ))
                        ),
                    });
                }
            };
            m.set_raw(key, &raw)?;
        }
        Ok(m)
    }

    /// Pretty JSON with a trailing newline; file names and source text in it hold
    /// no raw control or invisible character ([`spu_io::quote::json`]).
    pub fn to_json_text(&self) -> String {
        let mut text = Vec::new();
        // Into memory, of plain structs with string keys and finite-or-null
        // numbers: cannot fail.
        self.write_json(&mut text).expect("stats serialise");
        String::from_utf8(text).expect("JSON is UTF-8")
    }

    /// [`Stats::to_json_text`] written to `w` as it is made: the text of a long
    /// kernel's statistics (a kilobyte per instruction) is never held whole.
    pub fn write_json(&self, w: impl std::io::Write) -> std::io::Result<()> {
        let mut w = spu_io::quote::JsonWriter::new(std::io::BufWriter::new(w));
        serde_json::to_writer_pretty(&mut w, self)?;
        std::io::Write::write_all(&mut w, b"\n")?;
        w.finish()?
            .into_inner()
            .map_err(|e| e.into_error())?
            .flush()
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
