//! Activity counters, named once: the GPUWattch dynamic-power components (thesis
//! Table 5.1) plus the Communication Buffer component `CBP` (thesis 5.3), collected
//! per unit, and issue and stall counts per instruction address, so the profiler can
//! attribute energy to components, units and source lines without re-running.

use serde::Serialize;

macro_rules! components {
    ($($variant:ident = $name:literal: $doc:literal,)*) => {
        /// A dynamic-power component and the event its counter counts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Component { $(#[doc = $doc] $variant,)* }

        impl Component {
            /// Every component, in Table 5.1 order with `CBP` last.
            pub const ALL: &'static [Component] = &[$(Component::$variant,)*];

            /// The GPUWattch name.
            pub const fn name(self) -> &'static str {
                match self { $(Component::$variant => $name,)* }
            }

            /// What one count of the counter is.
            pub const fn event(self) -> &'static str {
                match self { $(Component::$variant => $doc,)* }
            }
        }
    };
}

components! {
    Ibp = "IBP": "warp instructions read from the instruction buffer",
    Icp = "ICP": "instruction cache fetches (one per warp instruction; no misses are modelled)",
    Dcp = "DCP": "L1 data cache accesses (always 0: the SPU has no data caches, thesis Table 6.1)",
    Tcp = "TCP": "texture cache accesses (always 0 on the SPU)",
    Ccp = "CCP": "constant cache accesses (kernel parameter reads, one per distinct address of a warp access)",
    Shrdp = "SHRDP": "shared-memory accesses (one per bank-conflict wave of a warp access)",
    Rfp = "RFP": "register-file operand accesses (per thread: registers read plus written)",
    Spp = "SPP": "integer ALU and complex-ALU thread operations",
    Sfup = "SFUP": "special-function-unit thread operations",
    Fpup = "FPUP": "floating-point thread operations",
    Schedp = "SCHEDP": "warp-scheduler issue events",
    L2cp = "L2CP": "L2 cache accesses (always 0 on the SPU)",
    Mcp = "MCP": "memory-controller transactions",
    Nocp = "NOCP": "on-chip network transfers between units and the memory controller (one per transaction)",
    Dramp = "DRAMP": "DRAM transactions (reads and writes)",
    Pipep = "PIPEP": "pipeline stage activity (one per warp instruction issued)",
    IdleCorep = "IDLE_COREP": "unit-cycles a unit is present but has no work while the kernel runs",
    ConstDynamicp = "CONST_DYNAMICP": "unit-cycles a unit has work (constant dynamic power while active)",
    Cbp = "CBP": "Communication Buffer accesses (one per warp access)",
}

/// Counts per component.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComponentCounts([u64; Component::ALL.len()]);

impl ComponentCounts {
    #[inline]
    pub fn add(&mut self, c: Component, n: u64) {
        self.0[c as usize] += n;
    }

    pub fn get(&self, c: Component) -> u64 {
        self.0[c as usize]
    }

    pub fn set(&mut self, c: Component, n: u64) {
        self.0[c as usize] = n;
    }

    /// `self - earlier`, count by count.
    pub fn minus(&self, earlier: &ComponentCounts) -> ComponentCounts {
        let mut out = self.clone();
        for (a, b) in out.0.iter_mut().zip(earlier.0) {
            *a -= b;
        }
        out
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &ComponentCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    /// Every (component, count), in component order.
    pub fn iter(&self) -> impl Iterator<Item = (Component, u64)> + '_ {
        Component::ALL.iter().map(|c| (*c, self.get(*c)))
    }

    /// Name -> count, in component order.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            Component::ALL
                .iter()
                .map(|c| (c.name().to_string(), self.get(*c).into()))
                .collect(),
        )
    }
}

/// Off-chip traffic, in 4-byte words and DRAM transactions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traffic {
    pub load_words: u64,
    pub store_words: u64,
    pub spill_words: u64,
    pub restore_words: u64,
    pub load_transactions: u64,
    pub store_transactions: u64,
    /// Bits that changed between consecutive words moved off-chip (per access, in
    /// lane or element order): the measured toggle activity of the memory paths.
    pub toggles: u64,
    /// Words DMA engines and virtual IUs moved (included in the totals above).
    pub engine_load_words: u64,
    pub engine_store_words: u64,
}

/// Why a scheduler issued nothing in a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StallReason {
    /// Waiting for an arithmetic result (scoreboard).
    Dependency,
    /// Waiting for a memory result (scoreboard).
    Memory,
    /// The pipeline the next instruction needs is busy.
    PipeBusy,
    /// Branch redirect or release latency.
    Control,
    /// Waiting at `bar.sync`.
    Barrier,
    /// Waiting at a blocksync rendezvous.
    BlockSync,
    /// Every warp of this scheduler has exited while others still run.
    Idle,
}

impl StallReason {
    pub const ALL: &'static [StallReason] = &[
        StallReason::Dependency,
        StallReason::Memory,
        StallReason::PipeBusy,
        StallReason::Control,
        StallReason::Barrier,
        StallReason::BlockSync,
        StallReason::Idle,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            StallReason::Dependency => "dependency",
            StallReason::Memory => "memory",
            StallReason::PipeBusy => "pipe_busy",
            StallReason::Control => "control",
            StallReason::Barrier => "barrier",
            StallReason::BlockSync => "blocksync",
            StallReason::Idle => "idle",
        }
    }
}

/// Counts for one instruction address.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PcCounters {
    /// Warp instructions issued.
    pub issued: u64,
    /// Thread instructions executed (lanes whose guard held).
    pub threads: u64,
    /// Off-chip transactions caused.
    pub transactions: u64,
    /// Extra shared-memory or CB waves caused by bank conflicts.
    pub conflict_waves: u64,
    /// Scheduler cycles lost while this instruction was next, by reason.
    #[serde(skip)]
    pub stalls: [u64; StallReason::ALL.len()],
    /// Component events this instruction caused.
    #[serde(skip)]
    pub components: ComponentCounts,
}

impl PcCounters {
    pub fn stall(&self, reason: StallReason) -> u64 {
        self.stalls[reason as usize]
    }
}
