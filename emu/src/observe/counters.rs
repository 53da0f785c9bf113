//! Activity counters, named once: the GPUWattch dynamic-power components (thesis
//! Table 5.1) plus the Communication Buffer component `CBP` (thesis 5.3), collected
//! per unit, and issue and stall counts per instruction address, so the profiler can
//! attribute energy to components, units and source lines without re-running.

use crate::exec::ops::Program;
use serde::Serialize;
use spu_isa::{Space, TimingClass};

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
    Dcp = "DCP": "L1 data cache line accesses (0 on the SPU, which has no data caches, thesis Table 6.1)",
    Tcp = "TCP": "texture cache accesses (always 0 on the SPU)",
    Ccp = "CCP": "constant cache accesses (kernel parameter reads, one per distinct address of a warp access)",
    Shrdp = "SHRDP": "shared-memory accesses (one per bank-conflict wave of a warp access)",
    Rfp = "RFP": "register-file operand accesses (per thread: registers read plus written)",
    Spp = "SPP": "integer ALU and complex-ALU thread operations",
    Sfup = "SFUP": "special-function-unit thread operations",
    Fpup = "FPUP": "floating-point thread operations",
    Schedp = "SCHEDP": "warp-scheduler issue events",
    L2cp = "L2CP": "L2 cache line accesses (0 on the SPU)",
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
    /// Words threads loaded from and stored to their local memory (not in the
    /// off-chip counts above: see `RUNTIME.md`, Calls and local memory).
    pub local_load_words: u64,
    pub local_store_words: u64,
    /// Transactions of those accesses where local memory is cached DRAM traffic
    /// (machines with data caches); zero elsewhere.
    pub local_load_transactions: u64,
    pub local_store_transactions: u64,
}

impl Traffic {
    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Traffic) {
        self.load_words += other.load_words;
        self.store_words += other.store_words;
        self.spill_words += other.spill_words;
        self.restore_words += other.restore_words;
        self.load_transactions += other.load_transactions;
        self.store_transactions += other.store_transactions;
        self.toggles += other.toggles;
        self.engine_load_words += other.engine_load_words;
        self.engine_store_words += other.engine_store_words;
        self.local_load_words += other.local_load_words;
        self.local_store_words += other.local_store_words;
        self.local_load_transactions += other.local_load_transactions;
        self.local_store_transactions += other.local_store_transactions;
    }

    /// Adds `times` more of what was counted since `before`, as if what happened
    /// in between happened `times` more times.
    pub fn add_repeats(&mut self, before: &Traffic, times: u64) {
        let Traffic {
            load_words,
            store_words,
            spill_words,
            restore_words,
            load_transactions,
            store_transactions,
            toggles,
            engine_load_words,
            engine_store_words,
            local_load_words,
            local_store_words,
            local_load_transactions,
            local_store_transactions,
        } = before;
        let more = |n: &mut u64, was: u64| *n += (*n - was) * times;
        more(&mut self.load_words, *load_words);
        more(&mut self.store_words, *store_words);
        more(&mut self.spill_words, *spill_words);
        more(&mut self.restore_words, *restore_words);
        more(&mut self.load_transactions, *load_transactions);
        more(&mut self.store_transactions, *store_transactions);
        more(&mut self.toggles, *toggles);
        more(&mut self.engine_load_words, *engine_load_words);
        more(&mut self.engine_store_words, *engine_store_words);
        more(&mut self.local_load_words, *local_load_words);
        more(&mut self.local_store_words, *local_store_words);
        more(&mut self.local_load_transactions, *local_load_transactions);
        more(
            &mut self.local_store_transactions,
            *local_store_transactions,
        );
    }

    /// Counts a local access of the lanes of `exec`, `words` words each.
    pub fn add_local(&mut self, store: bool, words: u8, exec: u32) {
        let n = u64::from(exec.count_ones()) * u64::from(words);
        if store {
            self.local_store_words += n;
        } else {
            self.local_load_words += n;
        }
    }
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

/// What one unit counted per instruction address while it ran. Component counts
/// are not kept while running: they follow from these and the instruction classes
/// ([`UnitCounts::components`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitCounts {
    /// Warp instructions run in all (the sum over instructions of
    /// [`UnitCounts::of`], kept as they run for `--max-instructions`).
    pub warp_instructions: u64,
    /// Warp instructions issued, per instruction.
    pub issued: Vec<u64>,
    /// Thread instructions executed, per instruction.
    pub threads: Vec<u64>,
    /// Off-chip transactions caused.
    pub transactions: Vec<u64>,
    /// Extra shared-memory or CB waves caused by bank conflicts.
    pub conflict_waves: Vec<u64>,
    /// Memory events (waves, distinct parameter words, transactions) caused.
    pub mem_events: Vec<u64>,
    /// Scheduler cycles lost while this instruction was next, by reason.
    pub stalls: Vec<[u64; StallReason::ALL.len()]>,
    /// Scheduler cycles with every warp of the scheduler exited.
    pub idle: u64,
    /// Functional mode counts whole basic blocks: runs of each block, and the
    /// active threads summed over those runs.
    pub block_runs: Vec<u64>,
    pub block_threads: Vec<u64>,
    /// Threads whose guard held, for guarded instructions run in blocks.
    pub guard_threads: Vec<u64>,
    /// Set on machines whose global accesses go through data caches (timing
    /// mode): the global and local accesses' `NOCP`, `MCP` and `DRAMP` events are
    /// then the traffic past the L1 in `cached_lines`, not their transactions.
    pub cached: bool,
    /// Per instruction: lines sent from the unit to the L2 (or DRAM), and DRAM
    /// lines read and written, that its accesses caused.
    pub cached_lines: Vec<[u64; 2]>,
}

/// The components a global access's transaction counts.
const DRAM: &[Component] = &[Component::Mcp, Component::Nocp, Component::Dramp];

/// The components one event of instruction `pc`'s memory access counts.
pub fn memory_components(program: &Program, pc: usize) -> &'static [Component] {
    match program.access_of(pc) {
        Some((Space::Global, _)) => DRAM,
        Some((Space::Shared, _)) => &[Component::Shrdp],
        Some((Space::Param, _)) => &[Component::Ccp],
        // Beside the SM (the SPU); through the caches on GPUs (see `components_of`).
        Some((Space::Local, _)) => &[Component::Shrdp],
        Some(_) => &[Component::Cbp],
        None => &[],
    }
}

impl UnitCounts {
    pub fn new(program: &Program) -> UnitCounts {
        let instructions = program.len();
        let blocks = program.block_starts.len();
        UnitCounts {
            issued: vec![0; instructions],
            threads: vec![0; instructions],
            transactions: vec![0; instructions],
            conflict_waves: vec![0; instructions],
            mem_events: vec![0; instructions],
            stalls: vec![[0; StallReason::ALL.len()]; instructions],
            idle: 0,
            block_runs: vec![0; blocks],
            block_threads: vec![0; blocks],
            guard_threads: vec![0; instructions],
            cached: false,
            cached_lines: vec![[0; 2]; instructions],
            warp_instructions: 0,
        }
    }

    /// Adds `times` more of what was counted since `before` (the same unit's
    /// counts earlier), as if what happened in between happened `times` more
    /// times.
    pub fn add_repeats(&mut self, before: &UnitCounts, times: u64) {
        fn more(now: &mut [u64], was: &[u64], times: u64) {
            for (n, w) in now.iter_mut().zip(was) {
                *n += (*n - w) * times;
            }
        }
        let UnitCounts {
            warp_instructions,
            issued,
            threads,
            transactions,
            conflict_waves,
            mem_events,
            stalls,
            idle,
            block_runs,
            block_threads,
            guard_threads,
            cached: _,
            cached_lines,
        } = before;
        self.warp_instructions += (self.warp_instructions - warp_instructions) * times;
        self.idle += (self.idle - idle) * times;
        more(&mut self.issued, issued, times);
        more(&mut self.threads, threads, times);
        more(&mut self.transactions, transactions, times);
        more(&mut self.conflict_waves, conflict_waves, times);
        more(&mut self.mem_events, mem_events, times);
        more(&mut self.block_runs, block_runs, times);
        more(&mut self.block_threads, block_threads, times);
        more(&mut self.guard_threads, guard_threads, times);
        more(self.stalls.as_flattened_mut(), stalls.as_flattened(), times);
        more(
            self.cached_lines.as_flattened_mut(),
            cached_lines.as_flattened(),
            times,
        );
    }

    /// Warp instructions issued and thread instructions executed by instruction
    /// `pc`, counted one by one or in blocks.
    pub fn of(&self, program: &Program, pc: usize) -> (u64, u64) {
        let b = program.block_of[pc] as usize;
        let runs = self.block_runs[b];
        let mut issued = self.issued[pc];
        let mut threads = self.threads[pc];
        if runs > 0 {
            issued += runs;
            threads += if program.ops[pc].guard == spu_isa::Guard::Always {
                self.block_threads[b]
            } else {
                self.guard_threads[pc]
            };
        }
        (issued, threads)
    }

    /// Warp instructions issued in total.
    pub fn total_issued(&self, program: &Program) -> u64 {
        (0..self.issued.len())
            .map(|pc| self.of(program, pc).0)
            .sum()
    }

    /// Thread instructions executed in total.
    pub fn total_threads(&self, program: &Program) -> u64 {
        (0..self.issued.len())
            .map(|pc| self.of(program, pc).1)
            .sum()
    }

    /// Stall cycles by reason, summed over instructions (plus idle schedulers).
    pub fn total_stalls(&self) -> [u64; StallReason::ALL.len()] {
        let mut t = [0; StallReason::ALL.len()];
        for s in &self.stalls {
            for (a, b) in t.iter_mut().zip(s) {
                *a += b;
            }
        }
        t[StallReason::Idle as usize] += self.idle;
        t
    }

    /// The component events instruction `pc` caused.
    pub fn components_of(&self, program: &Program, pc: usize) -> ComponentCounts {
        let mut c = ComponentCounts::default();
        let (issued, threads) = self.of(program, pc);
        if issued == 0 {
            return c;
        }
        let info = &program.info[pc];
        for k in [
            Component::Ibp,
            Component::Icp,
            Component::Schedp,
            Component::Pipep,
        ] {
            c.add(k, issued);
        }
        c.add(Component::Rfp, threads * u64::from(info.rf_accesses));
        match info.class.timing {
            TimingClass::IntAlu | TimingClass::IntMul | TimingClass::IntDiv => {
                c.add(Component::Spp, threads)
            }
            TimingClass::Fpu => c.add(Component::Fpup, threads),
            // GPGPU-Sim's GTX 480 runs double precision on the SFU pipeline.
            TimingClass::Sfu | TimingClass::Dp | TimingClass::DpDiv => {
                c.add(Component::Sfup, threads)
            }
            // Shuffles move words through the shared-memory crossbar.
            TimingClass::Shuffle => c.add(Component::Shrdp, issued),
            _ => {}
        }
        // Where local memory is cached DRAM traffic, it is priced as global
        // accesses through the caches are.
        let local_in_dram = self.cached && matches!(program.access_of(pc), Some((Space::Local, _)));
        match memory_components(program, pc) {
            ks if self.cached && ks == DRAM || local_in_dram => {
                let [sent, dram] = self.cached_lines[pc];
                c.add(Component::Nocp, sent);
                c.add(Component::Mcp, dram);
                c.add(Component::Dramp, dram);
            }
            ks => {
                for &k in ks {
                    c.add(k, self.mem_events[pc]);
                }
            }
        }
        c
    }

    /// The component events of every instruction the unit ran.
    pub fn components(&self, program: &Program) -> ComponentCounts {
        let mut c = ComponentCounts::default();
        for pc in 0..self.issued.len() {
            c.merge(&self.components_of(program, pc));
        }
        c
    }

    /// Adds this unit's counts into the per-instruction totals.
    pub fn add_to(&self, program: &Program, pcs: &mut [PcCounters]) {
        for (pc, at) in pcs.iter_mut().enumerate() {
            let (issued, threads) = self.of(program, pc);
            if issued == 0 && self.stalls[pc].iter().all(|&s| s == 0) {
                continue;
            }
            at.issued += issued;
            at.threads += threads;
            at.transactions += self.transactions[pc];
            at.conflict_waves += self.conflict_waves[pc];
            for (a, b) in at.stalls.iter_mut().zip(&self.stalls[pc]) {
                *a += b;
            }
            at.components.merge(&self.components_of(program, pc));
        }
    }
}
