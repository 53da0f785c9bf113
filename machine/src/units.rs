//! The units of a machine by name: SMs by grid position, boundary units (Interface
//! Units or DMA engines) by side and index. Reports, traces and stats name units
//! with these labels.

use std::fmt;

/// Which unit of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnitLabel {
    Sm { x: u32, y: u32 },
    Iu { side: spu_isa::Side, index: u32 },
    Dma { side: spu_isa::Side, index: u32 },
}

impl fmt::Display for UnitLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitLabel::Sm { x, y } => write!(f, "SM ({x}, {y})"),
            UnitLabel::Iu { side, index } => write!(f, "{side} IU {index}"),
            UnitLabel::Dma { side, index } => write!(f, "{side} DMA engine {index}"),
        }
    }
}
