//! What `spu-prof --html` adds to the emulator's page: the run's energy (the
//! breakdown, with power over time at the page's frames) and each unit's share of
//! it, and reading pages back, for `--compare A.html B.html`.

use crate::energy::{Breakdown, EnergyError, present, price};
use crate::model::{Kind, Model};
use serde::{Deserialize, Serialize};
use spu_emu::observe::counters::Component;
use spu_emu::observe::html::frames::MAX_FRAMES;
use spu_emu::observe::samples::Samples;
use spu_emu::observe::stats::{SampleStats, Stats};

/// One unit's energy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitEnergy {
    /// Its events priced, plus an equal share of the chip's constant power.
    pub dynamic_j: f64,
    /// Leakage of a unit of its kind.
    pub leakage_w: f64,
}

/// The energy section of a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageEnergy {
    pub breakdown: Breakdown,
    /// Per unit, in the page's unit order; absent for instruction-class models,
    /// which price instructions, not units.
    pub units: Option<Vec<UnitEnergy>>,
}

/// The samples as statistics, so that pricing gives power per page frame.
fn sample_stats(samples: &Samples) -> SampleStats {
    SampleStats {
        interval_cycles: samples.interval_cycles,
        components: Component::ALL
            .iter()
            .map(|c| {
                let series = samples.intervals.iter().map(|i| i.get(*c)).collect();
                (c.name().to_string(), series)
            })
            .collect(),
    }
}

/// The page's energy: `stats` priced with `model`, its power trace at the frames
/// of `frames` (the page's merged samples).
pub fn energy(
    stats: &Stats,
    frames: Option<&Samples>,
    model: &Model,
) -> Result<PageEnergy, EnergyError> {
    let mut priced = stats.clone();
    priced.samples = frames.map(sample_stats);
    // Instruction-class models give no power trace; the page then shows activity.
    let breakdown = price(&priced, model)?;
    let units = unit_energy(stats, model, &breakdown);
    Ok(PageEnergy { breakdown, units })
}

/// Each unit's dynamic energy and leakage, in stats order.
fn unit_energy(stats: &Stats, model: &Model, b: &Breakdown) -> Option<Vec<UnitEnergy>> {
    let Kind::Components { event_pj, .. } = &model.kind else {
        return None;
    };
    let gpu = stats.machine().ok()?.is_gpu();
    let count = present(stats, gpu).count().max(1) as f64;
    let each = |unit: &str| {
        b.leakage_by_unit
            .iter()
            .find(|l| l.unit == unit)
            .map_or(0.0, |l| l.each_w)
    };
    Some(
        stats
            .units
            .iter()
            .map(|u| {
                let dynamic_pj: f64 = Component::ALL
                    .iter()
                    .map(|c| {
                        let n = if *c == Component::ConstDynamicp {
                            // The chip's constant power, shared equally by its units.
                            stats.cycles as f64 / count
                        } else {
                            u.counters.get(c.name()).copied().unwrap_or(0) as f64
                        };
                        n * event_pj[c]
                    })
                    .sum();
                UnitEnergy {
                    dynamic_j: dynamic_pj * 1e-12,
                    leakage_w: each(match u.kind.as_str() {
                        "sm" => "SM",
                        "iu" => "IU",
                        _ => "DMA engine",
                    }),
                }
            })
            .collect(),
    )
}

/// The breakdown a page of one priced run carries, for `--compare`: none when the
/// page has no energy (written by spu-emu, or comparing two runs), or why its
/// energy section is not one this version writes (an unknown key is refused, as
/// everywhere in a page).
pub fn breakdown_of(data: &spu_emu::observe::html::PageData) -> Result<Option<Breakdown>, String> {
    let [run] = data.runs.as_slice() else {
        return Ok(None);
    };
    let Some(energy) = &run.energy else {
        return Ok(None);
    };
    let energy = PageEnergy::deserialize(energy).map_err(|e| e.to_string())?;
    let b = &energy.breakdown;
    if b.cycles != run.cycles || b.kernel != run.kernel {
        return Err(format!(
            "it prices {} cycles of `{}`, but the page's run is {} cycles of `{}`",
            b.cycles,
            spu_io::quote::shorten(&b.kernel),
            run.cycles,
            spu_io::quote::shorten(&run.kernel)
        ));
    }
    if b.machine != run.machine.summary || b.freq_mhz != run.machine.freq_mhz {
        return Err(format!(
            "it prices a run at {} MHz on `{}`, but the page's run is at {} MHz on `{}`",
            b.freq_mhz,
            spu_io::quote::shorten(&b.machine),
            run.machine.freq_mhz,
            spu_io::quote::shorten(&run.machine.summary)
        ));
    }
    if let Some(units) = energy.units.as_ref().filter(|u| u.len() != run.units.len()) {
        return Err(format!(
            "it prices {} units, but the page has {}",
            units.len(),
            run.units.len()
        ));
    }
    if let Some(trace) = &b.power_trace {
        // The trace has a value per sampled interval; the page's frames are those
        // intervals merged pairwise until a page holds them.
        let mut merged = trace.len();
        while merged > MAX_FRAMES {
            merged = merged.div_ceil(2);
        }
        let frames = run.cycles.div_ceil(run.frame_cycles.max(1));
        if merged as u64 != frames {
            return Err(format!(
                "its power trace has {} values, but the page's run has {frames} frames of \
                 {} cycles (`frame_cycles`), one value per sampled interval",
                trace.len(),
                run.frame_cycles
            ));
        }
    }
    Ok(Some(energy.breakdown))
}
