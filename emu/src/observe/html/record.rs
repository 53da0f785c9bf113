//! What a page knows of one run, as plain data written into the page as JSON: the
//! machine and its units with their links, each unit's activity stretches and
//! rendezvous at the page's resolution ([`super::frames`]), its counters and the
//! source lines it spent its time on, activity per frame, and the kernel's lines
//! with their counts, source text and when they ran ([`super::when`]). `spu-prof` adds energy. Everything is
//! ordered, so the same run gives the same bytes.

use super::frames;
use crate::load::Image;
use crate::machine::{Machine, UnitLabel};
use crate::observe::activity::{Activity, Segment};
use crate::observe::counters::Component;
use crate::observe::outcome::RunResult;
use crate::observe::samples::Samples;
use crate::observe::stats::{Counts, Stats};
use serde::{Deserialize, Serialize};
use spu_isa::Side;
use std::collections::BTreeMap;

/// The activities a page colours units by, in code order: the code of an
/// activity is its index here (0: idle).
pub const STATES: &[Activity] = &[
    Activity::Idle,
    Activity::Compute,
    Activity::IuCode,
    Activity::Load,
    Activity::Store,
    Activity::Spill,
    Activity::Restore,
    Activity::SpillWait,
    Activity::Wait(Some(Side::North)),
    Activity::Wait(Some(Side::West)),
    Activity::Wait(Some(Side::South)),
    Activity::Wait(Some(Side::East)),
    Activity::Wait(None),
];

/// The code of an activity in [`STATES`].
pub fn state_code(a: Activity) -> u64 {
    STATES.iter().position(|s| *s == a).unwrap_or(0) as u64
}

/// A state's legend entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateView {
    pub name: String,
    pub colour: String,
    /// Computing, moving tiles, waiting, or idle: what a student should read.
    pub group: String,
}

/// The machine as drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineView {
    /// `spu` or `gpu`.
    pub kind: String,
    pub summary: String,
    pub cols: u32,
    pub rows: u32,
    /// `iu` or `dma` (SPU).
    pub boundary: String,
    pub freq_mhz: f64,
    pub cb_kib: u32,
    pub l1_kib: u32,
    pub l2_kib: u32,
}

/// One end of a CB link, seen from a unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortView {
    pub side: String,
    /// The unit at the other end (index into `units`).
    pub partner: usize,
    /// Words read and written through this end.
    pub reads: u64,
    pub writes: u64,
    pub read_toggles: u64,
    pub write_toggles: u64,
    /// Rendezvous completed on this link.
    pub handovers: u64,
}

/// One unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitView {
    pub name: String,
    /// `sm`, `iu` or `dma`.
    pub kind: String,
    pub x: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    /// Activity stretches, four numbers each: start, end, state code, pass.
    pub stretches: Vec<u64>,
    /// Completed rendezvous, two numbers each: cycle, side code.
    pub handovers: Vec<u64>,
    pub ports: Vec<PortView>,
    pub work_items: u64,
    pub busy_cycles: u64,
    pub code_cycles: u64,
    pub spill_wait_cycles: u64,
    pub issued: u64,
    pub thread_instructions: u64,
    pub stall_cycles: Counts,
    pub counters: Counts,
    /// Source lines the unit spent time on, three numbers each: index into
    /// `lines`, warp instructions issued, stall cycles.
    pub lines: Vec<u64>,
}

/// One source line with instructions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineView {
    /// Index into `sources`, or none for code without line information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<usize>,
    pub line: u32,
    /// `file:line` as the profiler keys energy.
    pub key: String,
    /// The instructions on the line, as disassembled.
    pub instructions: Vec<String>,
    pub issued: u64,
    pub threads: u64,
    pub stall_cycles: u64,
    pub stalls: Counts,
}

/// A source file of the kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceView {
    pub name: String,
    /// The text, when the file may be quoted (the kernel or a file beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// Activity per frame, summed over units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// Unit-cycles with work.
    pub busy: Vec<u64>,
    /// Warp instructions issued (`PIPEP`).
    pub instructions: Vec<u64>,
    /// DRAM transactions (`DRAMP`).
    pub dram: Vec<u64>,
    /// CB accesses (`CBP`).
    pub cb: Vec<u64>,
    /// L2 line accesses (`L2CP`).
    pub l2: Vec<u64>,
}

/// The run's headline numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Totals {
    pub warp_instructions: u64,
    pub offchip_words: u64,
    pub spill_words: u64,
    pub restore_words: u64,
    pub cb_words: u64,
    pub link_rendezvous: u64,
    pub global_blocksyncs: u64,
}

/// Everything a page shows of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageRun {
    pub title: String,
    pub kernel: String,
    pub machine: MachineView,
    pub cycles: u64,
    pub passes: [u32; 2],
    pub pass_mode: String,
    pub grid: [u32; 2],
    pub block: [u32; 3],
    /// Cycles per frame: the player's step and the series' interval.
    pub frame_cycles: u64,
    /// 1 when stretches are exact, else the frame length they were drawn at.
    pub resolution_cycles: u64,
    /// 1 when every rendezvous is listed, else only the first on each side of a
    /// unit in each stretch of this many cycles is.
    pub handover_resolution_cycles: u64,
    pub states: Vec<StateView>,
    /// What one count of each counter is.
    pub component_events: BTreeMap<String, String>,
    pub units: Vec<UnitView>,
    pub series: Series,
    pub totals: Totals,
    pub sources: Vec<SourceView>,
    pub lines: Vec<LineView>,
    /// When each line ran (pages written since this was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_times: Option<super::when::LineTimes>,
    /// Added by `spu-prof`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::observe::json::bounded_value"
    )]
    pub energy: Option<serde_json::Value>,
}

fn group(a: Activity) -> &'static str {
    match a {
        Activity::Idle => "idle",
        Activity::Compute | Activity::IuCode => "computing",
        Activity::Load | Activity::Store | Activity::Spill | Activity::Restore => "moving tiles",
        Activity::SpillWait => "waiting for a spill",
        Activity::Wait(_) => "waiting at a blocksync",
    }
}

/// The unit at the other end of `label`'s link on `side`.
fn partner(label: UnitLabel, side: Side, machine: &Machine) -> Option<UnitLabel> {
    let (p, q) = (machine.grid_cols, machine.grid_rows);
    let edge = |side, index| match machine.boundary {
        crate::machine::Boundary::Iu => UnitLabel::Iu { side, index },
        crate::machine::Boundary::Dma => UnitLabel::Dma { side, index },
    };
    Some(match (label, side) {
        (UnitLabel::Sm { x, y }, Side::East) if x + 1 < p => UnitLabel::Sm { x: x + 1, y },
        (UnitLabel::Sm { y, .. }, Side::East) => edge(Side::East, y),
        (UnitLabel::Sm { x, y }, Side::West) if x > 0 => UnitLabel::Sm { x: x - 1, y },
        (UnitLabel::Sm { y, .. }, Side::West) => edge(Side::West, y),
        (UnitLabel::Sm { x, y }, Side::South) if y + 1 < q => UnitLabel::Sm { x, y: y + 1 },
        (UnitLabel::Sm { x, .. }, Side::South) => edge(Side::South, x),
        (UnitLabel::Sm { x, y }, Side::North) if y > 0 => UnitLabel::Sm { x, y: y - 1 },
        (UnitLabel::Sm { x, .. }, Side::North) => edge(Side::North, x),
        (UnitLabel::Iu { side: s, index } | UnitLabel::Dma { side: s, index }, _) => match s {
            Side::North => UnitLabel::Sm { x: index, y: 0 },
            Side::South => UnitLabel::Sm { x: index, y: q - 1 },
            Side::West => UnitLabel::Sm { x: 0, y: index },
            Side::East => UnitLabel::Sm { x: p - 1, y: index },
        },
    })
}

fn label_name(l: UnitLabel) -> String {
    match l {
        UnitLabel::Sm { x, y } => format!("SM ({x},{y})"),
        UnitLabel::Iu { side, index } => format!("{side} IU {index}"),
        UnitLabel::Dma { side, index } => format!("{side} DMA {index}"),
    }
}

impl PageRun {
    /// The page data of a finished run. `result` must have recorded activity
    /// (`RunControl::activity`); `samples` are the run's samples, merged here to
    /// the page's frames; `source` gives the text of a file the line table names,
    /// where it may be quoted.
    pub fn new(
        result: &RunResult,
        samples: Option<&Samples>,
        image: &Image,
        machine: &Machine,
        source: &dyn Fn(&str) -> Option<String>,
    ) -> PageRun {
        let stats = Stats::new(result, image, machine);
        let cycles = result.cycles;
        let merged = samples.map(frames::merge_samples);
        let frame_cycles = merged.as_ref().map_or_else(
            || cycles.div_ceil(frames::MAX_FRAMES as u64).max(1),
            |s| s.interval_cycles,
        );
        let empty = Vec::new();
        let logs: &[Vec<Segment>] = result.activity.as_ref().map_or(&empty, |a| &a.units);
        let resolution = frames::resolution(logs, frame_cycles);
        let shown = frames::at_resolution(logs, resolution);
        let all_handovers: Vec<&[(u64, Side)]> = result
            .units
            .iter()
            .map(|u| u.detail.as_ref().map_or(&[][..], |d| &d.handovers[..]))
            .collect();
        let (handover_resolution, kept_handovers) =
            frames::thin_handovers(&all_handovers, frame_cycles);
        let labels: Vec<UnitLabel> = result.units.iter().map(|u| u.label).collect();
        let index_of: BTreeMap<UnitLabel, usize> =
            labels.iter().enumerate().map(|(i, l)| (*l, i)).collect();

        // Lines: every (file, line) with instructions, in file and line order.
        let module = &image.module;
        let table = &module.lines;
        let key_of_pc: Vec<(Option<usize>, u32)> = (0..stats.pcs.len())
            .map(|pc| {
                table
                    .locs
                    .get(pc)
                    .map_or((None, 0), |l| (Some(usize::from(l.file)), l.line))
            })
            .collect();
        let mut order = key_of_pc.clone();
        order.sort_unstable();
        order.dedup();
        let line_of_pc: Vec<usize> = key_of_pc
            .iter()
            .map(|k| order.binary_search(k).unwrap_or(0))
            .collect();
        let mut lines: Vec<LineView> = order
            .iter()
            .map(|(file, line)| LineView {
                file: *file,
                line: *line,
                key: match file.and_then(|f| table.files.get(f)) {
                    Some(name) => format!("{name}:{line}"),
                    None => "(no line information)".to_string(),
                },
                instructions: Vec::new(),
                issued: 0,
                threads: 0,
                stall_cycles: 0,
                stalls: Counts::new(),
            })
            .collect();
        for (pc, p) in stats.pcs.iter().enumerate() {
            let l = &mut lines[line_of_pc[pc]];
            if let Some(text) = &p.text {
                l.instructions.push(text.clone());
            }
            l.issued += p.issued;
            l.threads += p.threads;
            for (reason, n) in &p.stall_cycles {
                l.stall_cycles += n;
                *l.stalls.entry(reason.clone()).or_default() += n;
            }
        }
        let sources = table
            .files
            .iter()
            .map(|name| SourceView {
                name: name.clone(),
                text: source(name),
            })
            .collect();

        let units = result
            .units
            .iter()
            .zip(&stats.units)
            .enumerate()
            .map(|(u, (totals, st))| {
                let stretches = shown
                    .get(u)
                    .into_iter()
                    .flatten()
                    .flat_map(|s| [s.start, s.end, state_code(s.activity), u64::from(s.pass)])
                    .collect();
                let detail = totals.detail.as_ref();
                let handovers: Vec<u64> = kept_handovers[u]
                    .iter()
                    .flat_map(|(t, side)| [*t, u64::from(side.code())])
                    .collect();
                let ports = detail
                    .into_iter()
                    .flat_map(|d| {
                        d.ports.iter().enumerate().filter_map(|(code, p)| {
                            let p = p.as_ref()?;
                            let side = Side::ALL[code];
                            let other = partner(totals.label, side, machine)?;
                            Some(PortView {
                                side: side.name().to_string(),
                                partner: *index_of.get(&other)?,
                                reads: p.reads,
                                writes: p.writes,
                                read_toggles: p.read_toggles,
                                write_toggles: p.write_toggles,
                                handovers: d.handover_counts[code],
                            })
                        })
                    })
                    .collect();
                let mut by_line: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
                for t in detail.into_iter().flat_map(|d| &d.pcs) {
                    let e = by_line.entry(line_of_pc[t.pc as usize]).or_default();
                    e.0 += t.issued;
                    e.1 += t.stall_cycles;
                }
                UnitView {
                    name: label_name(totals.label),
                    kind: st.kind.clone(),
                    x: st.x,
                    y: st.y,
                    side: st.side.clone(),
                    stretches,
                    handovers,
                    ports,
                    work_items: st.work_items,
                    busy_cycles: st.busy_cycles,
                    code_cycles: st.code_cycles,
                    spill_wait_cycles: st.spill_wait_cycles,
                    issued: st.issued,
                    thread_instructions: st.thread_instructions,
                    stall_cycles: st.stall_cycles.clone(),
                    counters: st.counters.clone(),
                    lines: by_line
                        .into_iter()
                        .flat_map(|(l, (i, s))| [l as u64, i, s])
                        .collect(),
                }
            })
            .collect();

        let line_times = result.pc_samples.as_ref().map(|per_unit| {
            let units: Vec<(UnitLabel, &crate::observe::pcs::PcSamples)> =
                result.units.iter().map(|u| u.label).zip(per_unit).collect();
            super::when::line_times(&units, &line_of_pc, lines.len(), frame_cycles)
        });
        let series_of = |c: Component| -> Vec<u64> {
            merged
                .iter()
                .flat_map(|s| s.intervals.iter().map(move |i| i.get(c)))
                .collect()
        };
        let t = &result.traffic;
        PageRun {
            title: format!("{} on {}", module.name, machine.summary()),
            kernel: module.name.clone(),
            machine: MachineView {
                kind: if machine.is_gpu() { "gpu" } else { "spu" }.to_string(),
                summary: machine.summary(),
                cols: machine.grid_cols,
                rows: machine.grid_rows,
                boundary: machine.boundary.to_string(),
                freq_mhz: machine.freq_mhz,
                cb_kib: machine.cb_size_kib,
                l1_kib: machine.l1_kib,
                l2_kib: machine.l2_kib,
            },
            cycles,
            passes: result.passes,
            pass_mode: machine.pass_mode.name().to_string(),
            grid: image.launch.grid,
            block: image.launch.block,
            frame_cycles,
            resolution_cycles: resolution,
            handover_resolution_cycles: handover_resolution,
            states: STATES
                .iter()
                .map(|a| StateView {
                    name: a.name().to_string(),
                    colour: match crate::observe::timeline::colour(*a) {
                        "none" => "#ffffff".to_string(),
                        c => c.to_string(),
                    },
                    group: group(*a).to_string(),
                })
                .collect(),
            component_events: stats.counter_events.clone(),
            units,
            series: Series {
                busy: series_of(Component::ConstDynamicp),
                instructions: series_of(Component::Pipep),
                dram: series_of(Component::Dramp),
                cb: series_of(Component::Cbp),
                l2: series_of(Component::L2cp),
            },
            totals: Totals {
                warp_instructions: stats.instructions.warp,
                offchip_words: t.load_words + t.store_words,
                spill_words: t.spill_words,
                restore_words: t.restore_words,
                cb_words: result.cb.reads + result.cb.writes,
                link_rendezvous: result.link_syncs,
                global_blocksyncs: result.global_syncs,
            },
            sources,
            lines,
            line_times,
            energy: None,
        }
    }
}
