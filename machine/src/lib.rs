//! The machine description: every timing and size parameter of the emulated SPU,
//! declared once in `machine_params!` with its key, unit, default, valid range and
//! meaning. That one table gives the typed [`Machine`] struct, its defaults (the
//! thesis's optimised 4x4 SPU at 700 MHz, Table 6.1), machine-file and `--set`
//! parsing with range checks (in `settings`), the resolved configuration in `--stats`, and the
//! generated parameter reference `machine/MACHINE.md`; the names of the units a
//! machine has ([`UnitLabel`]); how many blocks an SM holds ([`occupancy`]); and a
//! kernel's resource summary ([`resources`], `spu-asm -v`).
//!
//! The layer between the ISA (`spu-isa`) and its users: the assembler reads it for
//! `-v`, the emulator (as `spu_emu::machine`) for everything it times.

mod caches;
pub mod local;
pub mod occupancy;
pub mod param;
mod presets;
mod reference;
pub mod resources;
mod settings;
use settings::unknown_key;
mod units;

use param::{ParamType, Range, RawValue, word_enum};
pub use presets::{PRESETS, Preset, is_file_like, named, preset};
pub use reference::{reference_markdown, reference_table};
use spu_isa::TimingClass;
pub use units::UnitLabel;

word_enum! {
    /// What kind of chip the machine is.
    ChipKind {
        /// SMs on a grid joined by Communication Buffers, with boundary units.
        Spu = "spu",
        /// SMs sharing only global memory: no CBs and no boundary units.
        Gpu = "gpu",
    }
}

word_enum! {
    /// What sits on the grid boundary (thesis 2.2.2 and 7.2).
    Boundary { Iu = "iu", Dma = "dma" }
}

word_enum! {
    /// How passes follow one another (thesis 4.3).
    PassMode { Overlapped = "overlapped", Sequential = "sequential" }
}

word_enum! {
    /// What a spilling virtual IU moves at each rendezvous.
    SpillExtent {
        /// The whole CB, as the thesis's runtime does (Algorithm 2): it cannot tell
        /// which syncs carried data (thesis 4.1).
        Full = "full",
        /// Only the words the producer wrote since the last switch: a hypothetical
        /// dirty-tracking improvement the thesis's hardware does not have.
        Written = "written",
    }
}

word_enum! {
    /// What a store that misses in the L2 does.
    L2WriteMiss {
        /// Writes through to DRAM and fetches the line into the L2 (GPGPU-Sim 3.x's
        /// write-allocate policy `W`, the GTX 480 of the thesis).
        Fetch = "fetch",
        /// Allocates the line dirty without reading it (GPGPU-Sim 4.x's lazy
        /// fetch-on-read policy `L`).
        Allocate = "allocate",
    }
}

word_enum! {
    /// Warp scheduling policy of each scheduler.
    SchedulerPolicy {
        /// Loose round-robin: start after the warp issued last.
        Lrr = "lrr",
        /// Greedy-then-oldest: keep issuing from one warp until it stalls.
        Gto = "gto",
    }
}

/// What is wrong with a machine description.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MachineError {
    #[error("unknown machine key `{key}`{hint}; `spu-emu --list-params` shows every key")]
    UnknownKey { key: String, hint: String },
    #[error("machine key `{key}`: {why}")]
    BadValue { key: String, why: String },
    #[error("unknown machine preset `{name}`; presets are {list}, or give a .toml file")]
    UnknownPreset { name: String, list: String },
    #[error("machine file {file}: {why}")]
    Syntax { file: String, why: String },
    #[error("`--set {0}` needs the form KEY=VALUE, e.g. `--set sm.schedulers=4`")]
    SetSyntax(String),
    /// A bad key or value in a machine file, with the line it is on when known.
    #[error("machine file {file}{}: {inner}", line.map_or_else(String::new, |l| format!(", line {l}")))]
    InFile {
        file: String,
        line: Option<usize>,
        inner: Box<MachineError>,
    },
    /// A bad key or value given with `--set` (not in the `--machine` file).
    #[error("`--set {assignment}`: {inner}")]
    FromSet {
        assignment: String,
        inner: Box<MachineError>,
    },
    #[error("`--grid {0}` needs the form PxQ with P, Q >= 1, e.g. `--grid 8x8`")]
    GridSyntax(String),
    /// A shortcut option (`--grid`, `--boundary`, `--passes`) and a `--set` that give
    /// one key different values.
    #[error("{option} but `--set {assignment}` sets it to {second}; give only one of them")]
    Conflict {
        /// The option, the key and its value: "`--grid 2x2` sets `grid.cols` to 2".
        option: String,
        assignment: String,
        second: String,
    },
}

/// Documentation of one parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    pub key: &'static str,
    pub unit: &'static str,
    pub range: Range,
    pub doc: &'static str,
}

macro_rules! machine_params {
    ($($field:ident : $ty:ty = $default:expr, $key:literal, $unit:literal, $range:expr, $doc:literal;)*) => {
        /// A resolved machine configuration. Build it with [`Machine::default`] or
        /// [`Machine::from_toml`], then adjust with [`Machine::set`].
        #[derive(Debug, Clone, PartialEq)]
        pub struct Machine { $(#[doc = $doc] pub $field: $ty,)* }

        impl Default for Machine {
            fn default() -> Self {
                Machine { $($field: $default,)* }
            }
        }

        /// Every parameter, in documentation order.
        pub const PARAMS: &[ParamInfo] = &[$(ParamInfo { key: $key, unit: $unit, range: $range, doc: $doc },)*];

        impl Machine {
            /// Sets one parameter from a raw value.
            pub fn set_raw(&mut self, key: &str, raw: &RawValue) -> Result<(), MachineError> {
                let bad = |why| MachineError::BadValue { key: key.to_string(), why };
                match key {
                    $($key => self.$field = <$ty as ParamType>::from_raw(raw, $range).map_err(bad)?,)*
                    _ => return Err(unknown_key(key)),
                }
                Ok(())
            }

            /// Every parameter with its current value, in documentation order.
            pub fn entries(&self) -> Vec<(&'static str, serde_json::Value)> {
                vec![$(($key, ParamType::to_json(self.$field)),)*]
            }

            /// The current value of every parameter as machine-file text.
            pub fn entry_texts(&self) -> Vec<(&'static str, String)> {
                vec![$(($key, ParamType::to_text(self.$field)),)*]
            }
        }
    };
}

const CLASS_LATENCY_RANGE: Range = Range::Int(1, 100_000);
const INTERVAL_RANGE: Range = Range::Int(1, 1024);
const PIPES: Range = Range::Int(1, 16);

machine_params! {
    kind: ChipKind = ChipKind::Spu, "machine.kind", "", Range::Choice(ChipKind::NAMES),
        "spu: SMs on a grid joined by Communication Buffers, with boundary units (thesis Ch. 2); gpu: SMs that share only global memory, with no CBs and no boundary units (a Fermi GPU such as the GTX 480): kernels with CB accesses, `bar.blocksync` or boundary code are rejected, and the `boundary.*` and `cb.*` keys are ignored";
    grid_cols: u32 = 4, "grid.cols", "SMs", Range::Int(1, 256),
        "P: SM columns, west to east (thesis Table 6.1: 4x4)";
    grid_rows: u32 = 4, "grid.rows", "SMs", Range::Int(1, 256),
        "Q: SM rows, north to south";
    freq_mhz: f64 = 700.0, "clock.freq_mhz", "MHz", Range::Float(1.0, 10_000.0),
        "core clock (thesis Table 6.1: 700 MHz)";
    boundary: Boundary = Boundary::Iu, "boundary.kind", "", Range::Choice(Boundary::NAMES),
        "units on the grid edge: programmable Interface Units or DMA engines (thesis 7.2)";
    pass_mode: PassMode = PassMode::Overlapped, "passes.mode", "", Range::Choice(PassMode::NAMES),
        "overlapped: each unit starts its next pass as soon as it is free; sequential: a pass starts when the previous one has finished (thesis 4.3)";
    viu_spill: SpillExtent = SpillExtent::Full, "viu.spill", "", Range::Choice(SpillExtent::NAMES),
        "what a spilling virtual IU moves per rendezvous: the whole CB, as the thesis runtime does (Algorithm 2, Table 6.3), or only the words written since the last switch (`written`: hypothetical dirty tracking, not thesis hardware)";
    cb_size_kib: u32 = 4, "cb.size_kib", "KiB", Range::Int(1, 1024),
        "size of one Communication Buffer (thesis 6.1.2: 4 KiB; Appendix A: 16 KiB)";
    sm_schedulers: u32 = 2, "sm.schedulers", "schedulers", Range::Int(1, 8),
        "warp schedulers per SM, each issuing at most one warp instruction per cycle (Fermi: 2)";
    scheduler_policy: SchedulerPolicy = SchedulerPolicy::Lrr, "sm.scheduler_policy", "", Range::Choice(SchedulerPolicy::NAMES),
        "warp scheduling policy of SMs and IUs: loose round-robin or greedy-then-oldest";
    sm_max_threads: u32 = 1024, "sm.max_threads", "threads", Range::Int(1, occupancy::MAX_BLOCK_THREADS),
        "most threads in one block (Fermi: 1024)";
    sm_max_blocks: u32 = 8, "sm.max_blocks", "blocks", Range::Int(1, 64),
        "most blocks resident on one SM at once, on a GPU (`machine.kind = \"gpu\"`) (GPGPU-Sim GTX 480: `-gpgpu_shader_cta 8`); 1 gives one block per SM. An SPU runs one block per SM in passes, or the `sm.fold_x` x `sm.fold_y` blocks of a fold, at most this many";
    sm_fold_x: u32 = 1, "sm.fold_x", "blocks", Range::Int(1, 8),
        "SPU only: block columns one SM holds at once (several blocks per SM, thesis 7.1's open question): an SM runs a `sm.fold_x` x `sm.fold_y` tile of neighbouring blocks of the launch, a pass covers `grid.cols * sm.fold_x` block columns, and blocks on one SM exchange data through CBs carved from its shared memory (`emu/RUNTIME.md`, Several blocks per SM). 1: one block per SM, as in the thesis";
    sm_fold_y: u32 = 1, "sm.fold_y", "blocks", Range::Int(1, 8),
        "SPU only: block rows one SM holds at once (see `sm.fold_x`)";
    sm_max_resident_threads: u32 = 1536, "sm.max_resident_threads", "threads", Range::Int(32, 65_536),
        "most threads resident on one SM at once, counting each block's threads padded to whole warps (GPGPU-Sim GTX 480: `-gpgpu_shader_core_pipeline 1536:32`)";
    sm_max_warps: u32 = 48, "sm.max_warps", "warps", Range::Int(1, 2048),
        "most warps resident on one SM at once (Fermi: 48)";
    sm_registers: u32 = 32768, "sm.registers", "32-bit registers", Range::Int(32, 1 << 20),
        "register file of one SM; a block needs threads x declared registers (Fermi: 32768)";
    sm_shared_kib: u32 = 48, "sm.shared_kib", "KiB", Range::Int(0, occupancy::MAX_SHARED_KIB),
        "shared memory of one SM (Fermi: 48 KiB)";
    shared_banks: u32 = 32, "sm.shared_banks", "banks", Range::Int(1, 64),
        "shared-memory banks, 4 bytes wide; distinct words in one bank serialise";
    core_pipes: u32 = 2, "sm.core_pipes", "pipelines", PIPES,
        "integer/FP pipelines per SM, each accepting one warp instruction per interval (Fermi: 2 groups of 16 cores at twice the core clock)";
    sfu_pipes: u32 = 1, "sm.sfu_pipes", "pipelines", PIPES,
        "special-function pipelines per SM";
    mem_pipes: u32 = 1, "sm.mem_pipes", "pipelines", PIPES,
        "load/store pipelines per unit (shared, global, param, CB accesses)";
    iu_schedulers: u32 = 1, "iu.schedulers", "schedulers", Range::Int(1, 8),
        "warp schedulers per Interface Unit";
    iu_max_threads: u32 = 1024, "iu.max_threads", "threads", Range::Int(1, occupancy::MAX_IU_THREADS),
        "most threads an Interface Unit runs (the launch's iu(T))";
    iu_registers: u32 = 32768, "iu.registers", "32-bit registers", Range::Int(32, 1 << 20),
        "register file of one Interface Unit (thesis Table 5.2: IUs keep a register file)";
    lat_int_alu: u32 = 4, "latency_cycles.int_alu", "cycles", CLASS_LATENCY_RANGE,
        "integer add, logic, compare, move, select (GPGPU-Sim GTX 480 configuration)";
    lat_int_mul: u32 = 5, "latency_cycles.int_mul", "cycles", CLASS_LATENCY_RANGE,
        "integer multiply and multiply-add";
    lat_int_div: u32 = 145, "latency_cycles.int_div", "cycles", CLASS_LATENCY_RANGE,
        "integer divide and remainder";
    lat_fpu: u32 = 4, "latency_cycles.fpu", "cycles", CLASS_LATENCY_RANGE,
        "f32 add, multiply, fused multiply-add, compare, convert";
    lat_sfu: u32 = 20, "latency_cycles.sfu", "cycles", CLASS_LATENCY_RANGE,
        "reciprocal, square root, f32 divide";
    lat_dp: u32 = 8, "latency_cycles.dp", "cycles", CLASS_LATENCY_RANGE,
        "f64 add, multiply, fused multiply-add, compare, convert (GPGPU-Sim GTX 480: 8; the GTX 480 has no DP units and runs them on the SFU pipeline)";
    lat_dp_div: u32 = 330, "latency_cycles.dp_div", "cycles", CLASS_LATENCY_RANGE,
        "f64 divide, reciprocal, square root (GPGPU-Sim GTX 480: 330)";
    lat_shuffle: u32 = 32, "latency_cycles.shuffle", "cycles", CLASS_LATENCY_RANGE,
        "warp shuffle (GPGPU-Sim's SHFL latency: 32)";
    lat_shared: u32 = 24, "latency_cycles.shared", "cycles", CLASS_LATENCY_RANGE,
        "shared-memory access without bank conflicts";
    lat_param: u32 = 8, "latency_cycles.param", "cycles", CLASS_LATENCY_RANGE,
        "kernel parameter read (constant cache hit)";
    lat_cb: u32 = 24, "latency_cycles.cb", "cycles", CLASS_LATENCY_RANGE,
        "Communication Buffer access (modelled like shared memory, thesis 5.2.1)";
    lat_control: u32 = 4, "latency_cycles.control", "cycles", CLASS_LATENCY_RANGE,
        "branch, exit, nop: cycles before the warp can issue again";
    lat_barrier: u32 = 4, "latency_cycles.barrier", "cycles", CLASS_LATENCY_RANGE,
        "bar.sync: cycles from the last warp's arrival to the release";
    lat_blocksync: u32 = 16, "latency_cycles.blocksync", "cycles", CLASS_LATENCY_RANGE,
        "blocksync handshake: cycles from the last arrival to the release and CB switch";
    int_alu_interval: u32 = 1, "interval_cycles.int_alu", "cycles", INTERVAL_RANGE,
        "cycles an integer ALU instruction occupies a core pipeline";
    int_mul_interval: u32 = 2, "interval_cycles.int_mul", "cycles", INTERVAL_RANGE,
        "cycles an integer multiply occupies a core pipeline";
    int_div_interval: u32 = 8, "interval_cycles.int_div", "cycles", INTERVAL_RANGE,
        "cycles an integer divide occupies a core pipeline";
    fpu_interval: u32 = 1, "interval_cycles.fpu", "cycles", INTERVAL_RANGE,
        "cycles an f32 instruction occupies a core pipeline";
    sfu_interval: u32 = 8, "interval_cycles.sfu", "cycles", INTERVAL_RANGE,
        "cycles an SFU instruction occupies an SFU pipeline (4 SFUs per SM: 32 lanes / 4)";
    dp_interval: u32 = 8, "interval_cycles.dp", "cycles", INTERVAL_RANGE,
        "cycles an f64 instruction occupies an SFU pipeline (GPGPU-Sim GTX 480: 8; with one SFU pipeline against two f32 pipelines of interval 1, f64 issues at 1/16 of the f32 rate, where the GTX 480 itself has 1/8)";
    dp_div_interval: u32 = 130, "interval_cycles.dp_div", "cycles", INTERVAL_RANGE,
        "cycles an f64 divide, reciprocal or square root occupies an SFU pipeline (GPGPU-Sim GTX 480: 130)";
    shuffle_interval: u32 = 4, "interval_cycles.shuffle", "cycles", INTERVAL_RANGE,
        "cycles a warp shuffle occupies a core pipeline (GPGPU-Sim's SHFL initiation interval: 4)";
    mem_interval: u32 = 2, "interval_cycles.mem", "cycles", INTERVAL_RANGE,
        "cycles per conflict-free shared, param or CB warp access on the load/store pipeline; each further bank-conflict wave adds as many more; global accesses take one cycle per transaction. The SPU presets keep 2 (16 lanes per cycle, Fermi's load/store width at the hot clock); the GPU presets follow GPGPU-Sim 3.x's GTX 480 with 1 (`-gpgpu_shmem_warp_parts 1` with 32 banks: a whole warp per core cycle)";
    dram_latency: u32 = 400, "memory.dram_latency_cycles", "cycles", Range::Int(1, 100_000),
        "cycles from a global access to its data from DRAM, without queueing. The SPU presets keep 400 (no data caches, thesis Table 6.1); the GPU presets use 255, GPGPU-Sim 3.x's GTX 480 path: crossbar 3 (`vc_alloc_delay` + `sw_alloc_delay` + a link cycle) + ROP 120 (`-rop_latency`) + L2 access 4 + DRAM queue 100 (`-dram_latency`) + GDDR5 activate and read 18 (tRCD 12 + CL 12 at 924 MHz) + a 128-byte burst 3 + crossbar back 7 (5 flits of 32 bytes)";
    dram_bandwidth_gbs: f64 = 177.4, "memory.bandwidth_gbs", "GB/s", Range::Float(0.001, 100_000.0),
        "off-chip bandwidth shared by every unit (GTX 480 GDDR5: 177.4 GB/s)";
    transaction_bytes: u32 = 32, "memory.transaction_bytes", "bytes", Range::PowerOfTwo(4, 256),
        "coalescing segment: a warp's global access costs one transaction per distinct aligned segment (uncached Fermi accesses: 32 bytes); a power of two, as segments are found by address bits";
    l1_kib: u32 = 0, "cache.l1_kib", "KiB", Range::Int(0, 1024),
        "L1 data cache of each SM, 0 for none (SPU: none, thesis Table 6.1; GTX 480: 16 KiB); also sets the cache's leakage in `spu-prof`. Sets = size / (ways x line): a whole number, at least one";
    l1_ways: u32 = 4, "cache.l1_ways", "ways", Range::Int(1, 64),
        "L1 associativity (GTX 480: 4)";
    l1_latency: u32 = 24, "cache.l1_latency_cycles", "cycles", CLASS_LATENCY_RANGE,
        "cycles from a global load's issue to its data on an L1 hit (GPGPU-Sim 3.x has no such option: a hit returns through the load/store pipeline like a shared-memory access, so it takes `latency_cycles.shared`; 4.x's `SM2_GTX480`: `-gpgpu_l1_latency 35`)";
    l1_mshrs: u32 = 32, "cache.l1_mshrs", "entries", Range::Int(1, 4096),
        "outstanding L1 misses per SM; a further miss waits for the earliest to complete (GPGPU-Sim 3.x GTX 480: 32, `-gpgpu_cache:dl1 ...,A:32:8`; 4.x: 64); merges into an outstanding miss are not limited";
    l2_kib: u32 = 0, "cache.l2_kib", "KiB", Range::Int(0, 65_536),
        "shared L2 cache, 0 for none (SPU: none; GTX 480: 768 KiB); also sets the leakage of the L2 and of the network that reaches it in `spu-prof`. Split into `cache.l2_banks` banks by line address, each of size / banks / (ways x line) sets: a whole number, at least one";
    l2_banks: u32 = 12, "cache.l2_banks", "banks", Range::Int(1, 256),
        "L2 banks, chosen by line address modulo the count (GTX 480: 6 memory partitions x 2 sub-partitions = 12)";
    l2_ways: u32 = 8, "cache.l2_ways", "ways", Range::Int(1, 64),
        "L2 associativity (GTX 480: 8)";
    l2_latency: u32 = 134, "cache.l2_latency_cycles", "cycles", CLASS_LATENCY_RANGE,
        "cycles from a global access's issue to its data on an L2 hit, as GPGPU-Sim 3.x's GTX 480 composes it: crossbar 3 + ROP 120 (`-rop_latency`) + L2 access 4 (a 128-byte line through a 32-byte data port) + crossbar back 7";
    l2_mshrs: u32 = 32, "cache.l2_mshrs", "entries", Range::Int(1, 65_536),
        "outstanding L2 misses per bank; a further miss waits for the earliest to complete (GPGPU-Sim 3.x GTX 480: 32, `-gpgpu_cache:dl2 ...,A:32:4`; 4.x: 256); merges are not limited";
    l2_write_miss: L2WriteMiss = L2WriteMiss::Fetch, "cache.l2_write_miss", "", Range::Choice(L2WriteMiss::NAMES),
        "a store that misses in the L2: `fetch` writes through to DRAM and reads the line into the L2 (GPGPU-Sim 3.x's write-allocate `W`: `-gpgpu_cache:dl2 ...,L:B:m:W`); `allocate` allocates it dirty without reading (4.x's lazy fetch-on-read `L`)";
    line_bytes: u32 = 128, "cache.line_bytes", "bytes", Range::PowerOfTwo(32, 512),
        "cache line of the L1 and the L2: a miss fetches, and an eviction of a dirty line writes, one line from or to DRAM (GTX 480: 128)";
    global_mib: u32 = 1536, "memory.global_mib", "MiB", Range::Int(1, 4000),
        "global memory capacity for buffers (GTX 480: 1536 MiB)";
}

/// `1 block`, `8 blocks`.
pub fn plural(n: u32, what: &str) -> String {
    spu_io::numbers::counted(u64::from(n), what)
}

/// The end of a limit's advice: ", or raise the limit with `--set KEY=N`" for the
/// smallest value `KEY` takes that covers `needs`, or, when no value of `KEY` is
/// that large, that no machine allows it.
pub fn raise_limit(key: &str, needs: u64) -> String {
    let range = PARAMS.iter().find(|p| p.key == key).map(|p| p.range);
    let value = match range {
        Some(Range::PowerOfTwo(_, hi)) => (needs.checked_next_power_of_two(), hi),
        Some(Range::Int(_, hi)) => (Some(needs), hi),
        _ => (Some(needs), i64::MAX),
    };
    match value {
        (Some(v), hi) if i64::try_from(v).is_ok_and(|v| v <= hi) => {
            format!(", or raise the limit with `--set {key}={v}`")
        }
        (_, hi) => format!(" (no machine allows more: `{key}` is at most {hi})"),
    }
}

impl Machine {
    /// The latency of a timing class.
    pub fn latency(&self, class: TimingClass) -> u32 {
        match class {
            TimingClass::IntAlu => self.lat_int_alu,
            TimingClass::IntMul => self.lat_int_mul,
            TimingClass::IntDiv => self.lat_int_div,
            TimingClass::Fpu => self.lat_fpu,
            TimingClass::Sfu => self.lat_sfu,
            TimingClass::Dp => self.lat_dp,
            TimingClass::DpDiv => self.lat_dp_div,
            TimingClass::Shuffle => self.lat_shuffle,
            TimingClass::Shared => self.lat_shared,
            TimingClass::Global | TimingClass::Atomic => self.dram_latency,
            TimingClass::Param => self.lat_param,
            TimingClass::Cb => self.lat_cb,
            TimingClass::Control => self.lat_control,
            TimingClass::Barrier => self.lat_barrier,
            TimingClass::BlockSync => self.lat_blocksync,
        }
    }

    /// Cycles one warp instruction of a class occupies its pipeline.
    pub fn interval(&self, class: TimingClass) -> u32 {
        match class {
            TimingClass::IntAlu => self.int_alu_interval,
            TimingClass::IntMul => self.int_mul_interval,
            TimingClass::IntDiv => self.int_div_interval,
            TimingClass::Fpu => self.fpu_interval,
            TimingClass::Sfu => self.sfu_interval,
            TimingClass::Dp => self.dp_interval,
            TimingClass::DpDiv => self.dp_div_interval,
            TimingClass::Shuffle => self.shuffle_interval,
            TimingClass::Shared | TimingClass::Param | TimingClass::Cb => self.mem_interval,
            TimingClass::Global | TimingClass::Atomic => 1,
            TimingClass::Control | TimingClass::Barrier | TimingClass::BlockSync => 1,
        }
    }

    /// Off-chip bandwidth in bytes per core cycle.
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.dram_bandwidth_gbs * 1e3 / self.freq_mhz
    }

    /// Size of one CB in bytes.
    pub fn cb_bytes(&self) -> u32 {
        self.cb_size_kib * 1024
    }

    /// The resolved configuration as a JSON object keyed by parameter.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.entries()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// True for a GPU (no CBs, no boundary units).
    pub fn is_gpu(&self) -> bool {
        self.kind == ChipKind::Gpu
    }

    /// Blocks one SPU SM holds at once: `[sm.fold_x, sm.fold_y]`.
    pub fn fold(&self) -> [u32; 2] {
        [self.sm_fold_x, self.sm_fold_y]
    }

    /// True when an SPU SM holds more than one block at once.
    pub fn is_folded(&self) -> bool {
        self.sm_fold_x * self.sm_fold_y > 1
    }

    /// Number of SMs.
    pub fn sms(&self) -> u32 {
        self.grid_cols * self.grid_rows
    }

    /// One line for summaries: `4x4 SMs, iu boundary, overlapped passes, 700 MHz`.
    pub fn summary(&self) -> String {
        if self.is_gpu() {
            return format!(
                "GPU, {} SMs, up to {} per SM, {} KiB L1 per SM, {} KiB L2, {} MHz",
                self.sms(),
                plural(self.sm_max_blocks, "block"),
                self.l1_kib,
                self.l2_kib,
                self.freq_mhz
            );
        }
        let fold = if self.is_folded() {
            format!(", {}x{} blocks per SM", self.sm_fold_x, self.sm_fold_y)
        } else {
            String::new()
        };
        format!(
            "{}x{} SMs{fold}, {} boundary, {} passes, {} KiB CBs, {} MHz",
            self.grid_cols,
            self.grid_rows,
            self.boundary,
            self.pass_mode,
            self.cb_size_kib,
            self.freq_mhz
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_file_of_more_than_a_mebibyte_is_refused_before_parsing() {
        // 60 MiB of short keys once took 3.2 GB to parse before the first error.
        let keys: String = (0..100_000).map(|i| format!("k{i} = 1\n")).collect();
        let text = format!("[grid]\n{keys}");
        assert!(text.len() > 1 << 20);
        let e = Machine::from_toml(&text, "`m.toml`")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`m.toml`") && e.contains("but a machine file is at most 1 048 576 bytes"),
            "{e}"
        );
    }

    #[test]
    fn machine_file_overrides_defaults() {
        let m = Machine::from_toml(
            "[grid]\ncols = 8\n[sm]\nscheduler_policy = \"gto\"\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(m.grid_cols, 8);
        assert_eq!(m.grid_rows, 4);
        assert_eq!(m.scheduler_policy, SchedulerPolicy::Gto);
    }

    #[test]
    fn unknown_keys_name_the_key_and_a_suggestion() {
        let e = Machine::from_toml("[sm]\nschedulrs = 4\n", "t.toml").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("`sm.schedulrs`") && text.contains("`sm.schedulers`"),
            "{text}"
        );
    }

    /// Value errors name the file and the key's line, however the key is spelt;
    /// `--set` errors say they come from `--set` (#23 item H11).
    #[test]
    fn errors_say_where_the_bad_value_was_given() {
        for (text, line, says) in [
            ("[sm]\nmax_threads = 0\n", 2, "`sm.max_threads`"),
            ("# c\n\nsm.max_threads = 0\n", 3, "`sm.max_threads`"),
            (
                "sm = { schedulers = 2, max_threads = 0 }\n",
                1,
                "`sm.max_threads`",
            ),
            ("extends = \"gtx480\"\n", 1, "machine/machines/"),
            ("[cb]\nsize_kib = \"16\"\n", 2, "remove the quotes"),
            ("[sm]\n\nmax_threads = [1]\n", 3, "an array is not valid"),
        ] {
            let e = Machine::from_toml(text, "`m.toml`")
                .unwrap_err()
                .to_string();
            let head = format!("machine file `m.toml`, line {line}: ");
            assert!(e.starts_with(&head) && e.contains(says), "{text:?}: {e}");
        }
        let mut m = Machine::default();
        let e = m.set_from_command_line("sm.max_threads=0").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("`--set sm.max_threads=0`: machine key `sm.max_threads`"),
            "{e}"
        );
        let e = m.set_from_command_line("sm.max_threads").unwrap_err();
        assert!(matches!(e, MachineError::SetSyntax(_)), "{e}");
    }

    /// The advice for `extends` names the folder that holds the preset files.
    #[test]
    fn extends_advice_names_the_presets_folder() {
        let e = Machine::from_toml("extends = \"gtx480\"\n", "`m.toml`")
            .unwrap_err()
            .to_string();
        let folder = e
            .split("copy a preset's file from ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no folder named: {e}"));
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = root.join(folder);
        assert!(
            dir.join("gtx480.toml").is_file(),
            "{e}: no `{}`",
            dir.display()
        );
    }

    /// The advice for a limit names a value the key can take, or none (#23 H10).
    #[test]
    fn raising_a_limit_stays_within_the_keys_range() {
        assert_eq!(
            raise_limit("sm.shared_kib", 79),
            ", or raise the limit with `--set sm.shared_kib=79`"
        );
        assert_eq!(
            raise_limit("sm.shared_kib", 15_625_000),
            " (no machine allows more: `sm.shared_kib` is at most 1024)"
        );
        assert!(raise_limit("sm.max_threads", 4097).contains("at most 4096"));
        let pow2 = PARAMS
            .iter()
            .find_map(|p| match p.range {
                Range::PowerOfTwo(lo, hi) if lo < hi => Some((p.key, lo)),
                _ => None,
            })
            .expect("a power-of-two key");
        let v = u64::try_from(pow2.1).unwrap() + 1;
        assert_eq!(
            raise_limit(pow2.0, v),
            format!(
                ", or raise the limit with `--set {}={}`",
                pow2.0,
                v.next_power_of_two()
            )
        );
    }

    #[test]
    fn out_of_range_values_name_the_range() {
        let mut m = Machine::default();
        let text = m.set("grid.cols=0").unwrap_err().to_string();
        assert!(
            text.contains("grid.cols") && text.contains("1..=256"),
            "{text}"
        );
        let text = m.set("passes.mode=fast").unwrap_err().to_string();
        assert!(text.contains("`overlapped`"), "{text}");
        assert!(matches!(
            m.set("grid.cols"),
            Err(MachineError::SetSyntax(_))
        ));
        assert!(matches!(
            m.set_grid("4by4"),
            Err(MachineError::GridSyntax(_))
        ));
        m.set_grid("8x2").unwrap();
        assert_eq!((m.grid_cols, m.grid_rows), (8, 2));
    }

    #[test]
    fn sizes_found_by_address_bits_must_be_powers_of_two() {
        // Global accesses coalesce by the address bits above the segment size, so
        // 12-byte segments would silently count as 4-byte ones.
        for (value, near) in [(12, "8 or 16"), (48, "32 or 64"), (100, "64 or 128")] {
            let mut m = Machine::default();
            let text = m
                .set(&format!("memory.transaction_bytes={value}"))
                .unwrap_err()
                .to_string();
            assert!(
                text.contains("memory.transaction_bytes")
                    && text.contains(&format!("{value} is not a power of two"))
                    && text.contains(near),
                "{text}"
            );
            let toml = format!("[memory]\ntransaction_bytes = {value}\n");
            let text = Machine::from_toml(&toml, "m.toml").unwrap_err().to_string();
            assert!(
                text.contains("transaction_bytes") && text.contains(near),
                "{text}"
            );
        }
        let mut m = Machine::default();
        for value in [4, 64, 256] {
            m.set(&format!("memory.transaction_bytes={value}")).unwrap();
            assert_eq!(m.transaction_bytes, value);
        }
        let text = m.set("cache.line_bytes=96").unwrap_err().to_string();
        assert!(text.contains("64 or 128"), "{text}");
    }

    #[test]
    fn every_key_is_settable_with_its_default() {
        for (key, text) in Machine::default().entry_texts() {
            let mut m = Machine::default();
            m.set(&format!("{key}={text}")).unwrap();
            assert_eq!(m, Machine::default(), "{key}");
        }
    }

    #[test]
    fn bandwidth_per_cycle_follows_clock() {
        let m = Machine::default();
        assert!((m.dram_bytes_per_cycle() - 253.428).abs() < 0.01);
    }

    #[test]
    fn machine_md_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("MACHINE.md");
        let fresh = reference_markdown();
        if std::env::var_os("UPDATE_MACHINE_MD").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == fresh,
            "machine/MACHINE.md is stale; run `UPDATE_MACHINE_MD=1 cargo test -p spu-machine machine_md`"
        );
    }
}
