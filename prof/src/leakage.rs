//! Leakage power per unit type of a machine under a model: SMs, IUs or DMA
//! engines, CBs by size (thesis 5.2, Eq. 5.1), caches, the network to the L2 and
//! the uncore. Static energy is this power over the run's time (Eq. 6.1).

use crate::model::{Kind, Model, ModelError};
use serde::{Deserialize, Serialize};
use spu_emu::machine::Boundary;

/// Leakage of one kind of unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitLeakage {
    pub unit: String,
    /// How many and how big, as the table prints it ("80 CBs x 4 KiB").
    #[serde(default)]
    pub what: String,
    pub count: f64,
    pub each_w: f64,
    pub total_w: f64,
}

/// Leakage per unit type of a machine under a model (thesis 5.2, Eq. 5.1 for CBs).
pub fn leakage_units(
    machine: &spu_emu::Machine,
    model: &Model,
) -> Result<Vec<UnitLeakage>, ModelError> {
    let unit = |unit: &str, what: String, count: u64, each_w: f64| UnitLeakage {
        unit: unit.into(),
        what,
        count: count as f64,
        each_w,
        total_w: count as f64 * each_w,
    };
    let leakage = match &model.kind {
        Kind::InstructionClasses { static_w, .. } => {
            return Ok(vec![unit("chip (e0)", "chip (e0)".into(), 1, *static_w)]);
        }
        Kind::Components { leakage, .. } => leakage,
    };
    let need = |v: Option<f64>, key: &str, what: String| {
        v.ok_or_else(|| ModelError::MissingLeakage {
            file: model.file.clone(),
            key: key.into(),
            what,
        })
    };
    let (p, q) = (u64::from(machine.grid_cols), u64::from(machine.grid_rows));
    let sms = p * q;
    let mut units = vec![unit(
        "SM",
        format!("{sms} SMs"),
        sms,
        need(leakage.sm, "leakage_w.sm", format!("{sms} SMs"))?,
    )];
    if !machine.is_gpu() {
        let boundary = 2 * (p + q);
        // Two buffers per link = 4 per SM + 1 per boundary unit (Eq. 5.1). With
        // several blocks per SM, links join blocks: the SMs' CBs hold a lane per
        // block along each edge, and the links inside an SM live in its shared
        // memory (`emu/RUNTIME.md`, Several blocks per SM).
        let fold = machine.fold();
        let (w, h) = (p * u64::from(fold[0]), q * u64::from(fold[1]));
        let inner = p * q * u64::from(spu_emu::machine::occupancy::inner_links(fold));
        let cbs = 2 * (w * (h + 1) + h * (w + 1) - inner);
        let kib = u64::from(machine.cb_size_kib);
        let cb_kib = cbs * kib;
        units.push(match machine.boundary {
            Boundary::Iu => unit(
                "IU",
                format!("{boundary} IUs"),
                boundary,
                need(
                    leakage.iu,
                    "leakage_w.iu",
                    format!("{boundary} Interface Units"),
                )?,
            ),
            Boundary::Dma => unit(
                "DMA engine",
                format!("{boundary} DMA engines"),
                boundary,
                need(
                    leakage.dma,
                    "leakage_w.dma",
                    format!("{boundary} DMA engines"),
                )?,
            ),
        });
        units.push(unit(
            "CB",
            format!("{cbs} CBs x {kib} KiB"),
            cbs,
            kib as f64
                * need(
                    leakage.cb_per_kib,
                    "leakage_w.cb_per_kib",
                    format!("{cb_kib} KiB of CBs"),
                )?,
        ));
    }
    let l1_kib = sms * u64::from(machine.l1_kib);
    if l1_kib > 0 {
        let each = need(
            leakage.l1_per_kib,
            "leakage_w.l1_per_kib",
            format!("{l1_kib} KiB of L1 data cache"),
        )?;
        let l1 = machine.l1_kib;
        units.push(unit(
            "L1",
            format!("{sms} L1s x {l1} KiB"),
            sms,
            f64::from(l1) * each,
        ));
    }
    let l2_kib = u64::from(machine.l2_kib);
    if l2_kib > 0 {
        let what = format!("a {l2_kib} KiB L2");
        let each = need(leakage.l2_per_kib, "leakage_w.l2_per_kib", what.clone())?;
        units.push(unit(
            "L2",
            format!("1 L2 x {l2_kib} KiB"),
            1,
            l2_kib as f64 * each,
        ));
        units.push(unit(
            "network to L2",
            "network to L2".into(),
            1,
            need(leakage.noc, "leakage_w.noc", what)?,
        ));
    }
    if leakage.uncore > 0.0 {
        units.push(unit("uncore", "uncore".into(), 1, leakage.uncore));
    }
    Ok(units)
}

/// Total leakage power of a machine under a model.
pub fn leakage_w(machine: &spu_emu::Machine, model: &Model) -> Result<f64, ModelError> {
    Ok(leakage_units(machine, model)?
        .iter()
        .map(|u| u.total_w)
        .sum())
}
