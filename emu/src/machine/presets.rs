//! Named machine presets, stored as machine files under `emu/machines/` and compiled
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
        toml: include_str!("../../machines/spu-4x4.toml"),
    },
    Preset {
        name: "spu-8x8",
        description: "the same SMs on an 8x8 grid",
        toml: include_str!("../../machines/spu-8x8.toml"),
    },
    Preset {
        name: "spu-4x4-cb16k",
        description: "4x4 with 16 KiB CBs (thesis Appendix A)",
        toml: include_str!("../../machines/spu-4x4-cb16k.toml"),
    },
    Preset {
        name: "spu-4x4-dma",
        description: "4x4 with DMA engines in place of Interface Units (thesis 7.2)",
        toml: include_str!("../../machines/spu-4x4-dma.toml"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Boundary;

    #[test]
    fn presets_parse_and_differ_as_described() {
        assert_eq!(preset("spu-4x4").unwrap(), Machine::default());
        let big = preset("spu-8x8").unwrap();
        assert_eq!((big.grid_cols, big.grid_rows), (8, 8));
        assert_eq!(preset("spu-4x4-cb16k").unwrap().cb_size_kib, 16);
        assert_eq!(preset("spu-4x4-dma").unwrap().boundary, Boundary::Dma);
        let e = preset("spu-3x3").unwrap_err().to_string();
        assert!(e.contains("`spu-4x4`"), "{e}");
    }
}
