//! Named machine presets, stored as machine files under `machine/machines/` and compiled
//! into the binary so `--machine spu-8x8` works from anywhere.

use super::{Machine, MachineError};

/// A preset: its name, what it is, and its machine file.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    pub toml: &'static str,
}

/// Every preset, default first.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "spu-4x4",
        description: "the thesis's optimised SPU: 4x4 SMs, IUs, overlapped passes, 4 KiB CBs, 700 MHz (Table 6.1); the default",
        toml: include_str!("../machines/spu-4x4.toml"),
    },
    Preset {
        name: "spu-8x8",
        description: "the same SMs on an 8x8 grid",
        toml: include_str!("../machines/spu-8x8.toml"),
    },
    Preset {
        name: "spu-4x4-cb16k",
        description: "4x4 with 16 KiB CBs (thesis Appendix A)",
        toml: include_str!("../machines/spu-4x4-cb16k.toml"),
    },
    Preset {
        name: "spu-4x4-dma",
        description: "4x4 with DMA engines in place of Interface Units (thesis 7.2)",
        toml: include_str!("../machines/spu-4x4-dma.toml"),
    },
    Preset {
        name: "gtx480",
        description: "the thesis's GPU baseline: a GTX 480 as GPGPU-Sim 3.x configures it (`configs/GTX480`, the version the thesis ran: 15 SMs, up to 8 resident blocks per SM, 2 GTO schedulers, 16 KiB L1 and 768 KiB L2 with 32 MSHRs each, a write-allocate L2 that fetches on write, 700 MHz, Table 6.1); no CBs or boundary units; the machine file cites every value's source line",
        toml: include_str!("../machines/gtx480.toml"),
    },
    Preset {
        name: "gtx480-1cta",
        description: "the GTX 480 with one resident block per SM (`sm.max_blocks = 1`): the thesis's gpu-sim-1CTA/SM (Figure 6.2)",
        toml: include_str!("../machines/gtx480-1cta.toml"),
    },
    Preset {
        name: "gtx480-sm2",
        description: "the GTX 480 as GPGPU-Sim 4.x configures it (`configs/tested-cfgs/SM2_GTX480`): `gtx480` with a 35-cycle L1, 26-cycle shared memory, 64 L1 and 256 L2 MSHRs and a lazy fetch-on-read L2",
        toml: include_str!("../machines/gtx480-sm2.toml"),
    },
];

/// The machine of a preset name.
pub fn preset(name: &str) -> Result<Machine, MachineError> {
    let p = PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| MachineError::UnknownPreset {
            name: super::param::shorten(name),
            list: PRESETS
                .iter()
                .map(|p| format!("`{}`", p.name))
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    Machine::from_toml(p.toml, &format!("preset `{}`", p.name))
}

/// True when a `--machine` value names a file rather than a preset.
pub fn is_file_like(name: &str) -> bool {
    name.ends_with(".toml") || name.contains('/') || std::path::Path::new(name).is_file()
}

/// The machine a `--machine` value names: a machine file, or else a preset.
pub fn named(name: &str) -> Result<Machine, MachineError> {
    if !is_file_like(name) {
        // A folder or pipe of that name is what the user meant, not a preset.
        return preset(name).map_err(|e| match std::fs::metadata(name) {
            Ok(m) => MachineError::Syntax {
                file: format!("`{}`", spu_io::quote::escape(name)),
                why: format!(
                    "it is a {}, not a .toml file or a preset; give a machine file (ending in .toml) or one of the presets ({})",
                    if m.is_dir() { "folder" } else { "pipe or device" },
                    PRESETS.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", ")
                ),
            },
            Err(_) => e,
        });
    }
    let file = format!("`{}`", spu_io::quote::escape(name));
    let text =
        spu_io::input::read_text_without_waiting(std::path::Path::new(name)).map_err(|e| {
            MachineError::Syntax {
                file: file.clone(),
                why: format!("cannot be read: {}", e.reason()),
            }
        })?;
    Machine::from_toml(&text, &file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Boundary;

    #[test]
    fn presets_parse_and_differ_as_described() {
        assert_eq!(preset("spu-4x4").unwrap(), Machine::default());
        let big = preset("spu-8x8").unwrap();
        assert_eq!((big.grid_cols, big.grid_rows), (8, 8));
        assert_eq!(preset("spu-4x4-cb16k").unwrap().cb_size_kib, 16);
        assert_eq!(preset("spu-4x4-dma").unwrap().boundary, Boundary::Dma);
        let gpu = preset("gtx480").unwrap();
        assert!(gpu.is_gpu() && !Machine::default().is_gpu());
        assert_eq!((gpu.sms(), gpu.l1_kib, gpu.l2_kib), (15, 16, 768));
        assert_eq!(gpu.scheduler_policy, crate::SchedulerPolicy::Gto);
        assert_eq!(
            (
                gpu.sm_max_blocks,
                gpu.sm_max_resident_threads,
                gpu.sm_max_warps
            ),
            (8, 1536, 48)
        );
        let mut one = preset("gtx480-1cta").unwrap();
        assert_eq!(one.sm_max_blocks, 1);
        one.sm_max_blocks = 8;
        assert_eq!(
            one, gpu,
            "gtx480-1cta differs from gtx480 only in sm.max_blocks"
        );
        for p in PRESETS.iter().filter(|p| p.name.starts_with("spu")) {
            let m = preset(p.name).unwrap();
            assert_eq!((m.l1_kib, m.l2_kib), (0, 0), "{}: caches off", p.name);
        }
        let sm2 = preset("gtx480-sm2").unwrap();
        assert_eq!(
            (sm2.l1_latency, sm2.lat_shared, sm2.l1_mshrs, sm2.l2_mshrs),
            (35, 26, 64, 256)
        );
        assert_eq!(sm2.l2_write_miss, crate::L2WriteMiss::Allocate);
        assert_eq!(
            (gpu.l1_latency, gpu.l1_mshrs, gpu.l2_mshrs, gpu.mem_interval),
            (24, 32, 32, 1),
            "GPGPU-Sim 3.x's configs/GTX480"
        );
        assert_eq!(gpu.l2_write_miss, crate::L2WriteMiss::Fetch);
        let e = preset("spu-3x3").unwrap_err().to_string();
        assert!(e.contains("`spu-4x4`"), "{e}");
    }
}
