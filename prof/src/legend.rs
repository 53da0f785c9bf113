//! What every name in a report means: one line per dynamic-energy component
//! (GPUWattch's acronyms, `CBP`, the wire terms, instruction classes) saying whether
//! it is charged per event, per bit toggle, per unit-cycle or per chip cycle, and one
//! line per pseudo-line (energy
//! no instruction caused). The table, JSON and CSV reports and `prof/README.md` all
//! say the same thing; a test keeps the README in step with this list.

/// Pseudo-lines: energy no instruction caused, charged to the run rather than a line.
pub const RUNTIME_LINE: &str = "(DMA engines and virtual IUs)";
pub const IDLE_LINE: &str = "(idle units)";
pub const CHIP_LINE: &str = "(chip constant)";
pub const WRITEBACK_LINE: &str = "(L2 write-back at the end)";
pub const NO_LINE: &str = "(no line information)";

/// How a component's energy grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Count of events (accesses, operations, transactions) x energy per event.
    PerEvent,
    /// Count of bit toggles x energy per bit and millimetre x wire length.
    PerToggle,
    /// Idle unit-cycles x a constant: grows with run time, not with work.
    PerUnitCycle,
    /// Cycles of the run x a constant for the whole chip, whatever runs.
    PerChipCycle,
}

impl Basis {
    /// What one charge is: "event", "bit toggle", "unit-cycle", "chip cycle".
    pub const fn label(self) -> &'static str {
        match self {
            Basis::PerEvent => "event",
            Basis::PerToggle => "bit toggle",
            Basis::PerUnitCycle => "unit-cycle",
            Basis::PerChipCycle => "chip cycle",
        }
    }

    /// Whether the charge grows with run time rather than with the work done.
    pub const fn time_based(self) -> bool {
        matches!(self, Basis::PerUnitCycle | Basis::PerChipCycle)
    }
}

/// The components of the `components` models, in the order of [`COMPONENTS`].
pub const COMPONENTS: &[(&str, Basis, &str)] = &[
    ("IBP", Basis::PerEvent, "instruction-buffer reads"),
    ("ICP", Basis::PerEvent, "instruction-cache fetches"),
    ("DCP", Basis::PerEvent, "L1 data cache (none on the SPU)"),
    ("TCP", Basis::PerEvent, "texture cache (none on the SPU)"),
    (
        "CCP",
        Basis::PerEvent,
        "constant-cache reads (kernel parameters)",
    ),
    (
        "SHRDP",
        Basis::PerEvent,
        "shared memory, per bank-conflict wave",
    ),
    ("RFP", Basis::PerEvent, "register-file operand accesses"),
    ("SPP", Basis::PerEvent, "integer ALU operations"),
    ("SFUP", Basis::PerEvent, "special-function unit operations"),
    ("FPUP", Basis::PerEvent, "floating-point operations"),
    ("SCHEDP", Basis::PerEvent, "warp-scheduler issues"),
    ("L2CP", Basis::PerEvent, "L2 cache (none on the SPU)"),
    (
        "MCP",
        Basis::PerEvent,
        "memory-controller transactions, per byte moved",
    ),
    (
        "NOCP",
        Basis::PerEvent,
        "on-chip network transfers to memory, per byte moved",
    ),
    (
        "DRAMP",
        Basis::PerEvent,
        "off-chip DRAM transactions, per byte moved",
    ),
    (
        "PIPEP",
        Basis::PerEvent,
        "pipeline registers, per warp instruction",
    ),
    (
        "IDLE_COREP",
        Basis::PerUnitCycle,
        "idle units (GPUWattch idle-core power)",
    ),
    (
        "CONST_DYNAMICP",
        Basis::PerChipCycle,
        "whole chip, every cycle (GPUWattch constant)",
    ),
    ("CBP", Basis::PerEvent, "Communication Buffer accesses"),
    (
        "WIRE_CB",
        Basis::PerToggle,
        "CB link wires (toggles x length)",
    ),
    (
        "WIRE_OFFCHIP",
        Basis::PerToggle,
        "off-chip wires (toggles x length)",
    ),
    (
        "EngineTransfers",
        Basis::PerEvent,
        "words moved by DMA engines and virtual IUs",
    ),
];

/// The pseudo-lines: energy no single instruction caused.
pub const PSEUDO_LINES: &[(&str, &str)] = &[
    (
        RUNTIME_LINE,
        "runtime traffic: DMA transfers, virtual IU spills and restores (per event)",
    ),
    (
        IDLE_LINE,
        "IDLE_COREP of units present with no work while the kernel runs",
    ),
    (
        CHIP_LINE,
        "CONST_DYNAMICP not spread over instructions: idle units' share and engines' share",
    ),
    (
        WRITEBACK_LINE,
        "DRAMP and MCP of the dirty L2 lines written back when the kernel ended (GPU machines)",
    ),
    (NO_LINE, "instructions of a binary without line information"),
];

/// How component `name` is charged and what it is. Names not in [`COMPONENTS`] are
/// the energy classes of an instruction-class model.
pub fn component(name: &str) -> (Basis, String) {
    COMPONENTS
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|(_, basis, text)| (*basis, (*text).to_string()))
        .unwrap_or_else(|| {
            (
                Basis::PerEvent,
                format!("thread instructions of class {name}"),
            )
        })
}

/// One line: "per event: shared memory, per bank-conflict wave".
pub fn component_line(name: &str) -> String {
    let (basis, text) = component(name);
    let time = if basis.time_based() {
        ", time-based"
    } else {
        ""
    };
    format!("per {}{time}: {text}", basis.label())
}

/// What pseudo-line `key` holds, if it is one.
pub fn pseudo_line(key: &str) -> Option<&'static str> {
    PSEUDO_LINES
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spu_emu::observe::counters::Component;

    #[test]
    fn every_counted_component_has_a_meaning() {
        for c in Component::ALL {
            assert!(
                COMPONENTS.iter().any(|(n, ..)| *n == c.name()),
                "{} has no legend entry",
                c.name()
            );
        }
    }

    #[test]
    fn the_readme_explains_every_component_and_pseudo_line() {
        let readme = include_str!("../README.md");
        for (name, basis, _) in COMPONENTS {
            let row = format!("| `{name}` | {} |", basis.label());
            assert!(readme.contains(&row), "prof/README.md lacks {row}");
        }
        for (line, _) in PSEUDO_LINES {
            assert!(
                readme.contains(&format!("| `{line}` |")),
                "prof/README.md lacks {line}"
            );
        }
    }

    #[test]
    fn the_time_based_terms_are_gpuwattchs_idle_and_constant_power() {
        let timed: Vec<&str> = COMPONENTS
            .iter()
            .filter(|(_, b, _)| b.time_based())
            .map(|(n, ..)| *n)
            .collect();
        assert_eq!(timed, ["IDLE_COREP", "CONST_DYNAMICP"]);
        assert!(component_line("IDLE_COREP").starts_with("per unit-cycle, time-based: "));
        assert!(component_line("CONST_DYNAMICP").starts_with("per chip cycle, time-based: "));
        assert!(component_line("IntAdd").contains("class IntAdd"));
    }
}
