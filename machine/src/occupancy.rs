//! How many blocks of a kernel fit on one SM at once under Fermi's limits: blocks,
//! threads, warps, registers and shared memory per SM, counted as GPGPU-Sim counts
//! them for the GTX 480 (`shader_core_config::max_cta` in `src/gpgpu-sim/shader.cc`
//! of gpgpu-sim/gpgpu-sim_distribution): a block's threads are padded to whole
//! warps, registers per thread are rounded up to a multiple of 4, and shared memory
//! is counted without an allocation granularity. A block that does not fit once
//! ([`never_resident`]) is refused at load time, as GPGPU-Sim refuses it.

use super::Machine;
use std::fmt;

/// The resource that caps the blocks resident on one SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `sm.max_blocks`.
    Blocks,
    /// `sm.max_resident_threads`.
    Threads,
    /// `sm.max_warps`.
    Warps,
    /// `sm.registers`.
    Registers,
    /// `sm.shared_kib`.
    SharedMemory,
}

impl Limit {
    /// Every limit, in the order ties are broken.
    pub const ALL: [Limit; 5] = [
        Limit::Blocks,
        Limit::Threads,
        Limit::Warps,
        Limit::Registers,
        Limit::SharedMemory,
    ];

    /// The machine key of the limit.
    pub fn key(self) -> &'static str {
        match self {
            Limit::Blocks => "sm.max_blocks",
            Limit::Threads => "sm.max_resident_threads",
            Limit::Warps => "sm.max_warps",
            Limit::Registers => "sm.registers",
            Limit::SharedMemory => "sm.shared_kib",
        }
    }
}

impl Limit {
    /// What the limit counts, in a few words: `block slots`, `registers`.
    pub fn resource(self) -> &'static str {
        match self {
            Limit::Blocks => "block slots",
            Limit::Threads => "thread slots",
            Limit::Warps => "warp slots",
            Limit::Registers => "registers",
            Limit::SharedMemory => "shared memory",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Blocks => "blocks per SM",
            Limit::Threads => "threads per SM",
            Limit::Warps => "warps per SM",
            Limit::Registers => "registers per SM",
            Limit::SharedMemory => "shared memory per SM",
        })
    }
}

/// Resident blocks per SM and the limit that set the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    pub blocks: u32,
    pub limit: Limit,
}

/// What one block of a kernel asks of an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockDemand {
    pub threads: u32,
    /// General registers per thread.
    pub registers: u32,
    pub shared_bytes: u32,
}

/// What one block of `demand` holds of each counted resource while resident:
/// warps, threads padded to whole warps, registers (per thread rounded up to a
/// multiple of 4).
fn held(demand: BlockDemand) -> (u32, u32, u32) {
    let warps = demand.threads.div_ceil(32).max(1);
    let padded = warps * 32;
    let regs = (demand.registers + 3) & !3;
    (warps, padded, padded.saturating_mul(regs))
}

/// How many blocks of `demand` each limit alone would let one SM of `m` hold, in
/// the order blocks, threads, warps, registers, shared memory (`u32::MAX` where
/// the block holds none of the resource).
pub fn allowances(m: &Machine, demand: BlockDemand) -> [(Limit, u32); 5] {
    let (warps, padded, registers) = held(demand);
    [
        (Limit::Blocks, m.sm_max_blocks),
        (Limit::Threads, m.sm_max_resident_threads / padded),
        (Limit::Warps, m.sm_max_warps / warps),
        (
            Limit::Registers,
            m.sm_registers.checked_div(registers).unwrap_or(u32::MAX),
        ),
        (
            Limit::SharedMemory,
            (m.sm_shared_kib * 1024)
                .checked_div(demand.shared_bytes)
                .unwrap_or(u32::MAX),
        ),
    ]
}

/// What one block of `demand` holds of each limit's resource while resident:
/// a block slot, thread slots (whole warps), warps, registers (each thread's
/// rounded up to a multiple of 4) and bytes of shared memory.
pub fn holdings(demand: BlockDemand) -> [(Limit, u32); 5] {
    let (warps, padded, registers) = held(demand);
    [
        (Limit::Blocks, 1),
        (Limit::Threads, padded),
        (Limit::Warps, warps),
        (Limit::Registers, registers),
        (Limit::SharedMemory, demand.shared_bytes),
    ]
}

/// Blocks of `demand` that fit on one SM of `m` at once; at least 1 (a block that
/// does not fit at all is refused at load time, see [`never_resident`]). Ties go
/// to the first limit in the order blocks, threads, warps, registers, shared
/// memory.
pub fn occupancy(m: &Machine, demand: BlockDemand) -> Occupancy {
    let (limit, blocks) =
        allowances(m, demand)
            .into_iter()
            .fold((Limit::Blocks, u32::MAX), |best, (l, n)| {
                if n < best.1 { (l, n) } else { best }
            });
    Occupancy {
        blocks: blocks.max(1),
        limit,
    }
}

/// Most blocks a launch may have, on any machine.
pub const MAX_LAUNCH_BLOCKS: i64 = 1 << 22;

/// Most threads a block may have on any machine: the largest `sm.max_threads`
/// the machine table allows.
pub const MAX_BLOCK_THREADS: i64 = 4096;

/// Most threads an Interface Unit may run on any machine: the largest
/// `iu.max_threads` the machine table allows.
pub const MAX_IU_THREADS: i64 = 4096;

/// Most shared memory, in KiB, an SM may have on any machine: the largest
/// `sm.shared_kib` the machine table allows.
pub const MAX_SHARED_KIB: i64 = 1024;

/// The largest extent of a launch's grid (`grid`) or block along `axis` (0 is x,
/// 2 is z) on any machine, and the sentence that says so; spu-emu refuses a launch
/// beyond it and `spu-asm -v` reports the refusal.
pub fn launch_dim_limit(grid: bool, axis: usize) -> (i64, &'static str) {
    match (grid, axis) {
        (true, 2) => (
            65535,
            "a launch grid has at most 65535 blocks along z, as in CUDA",
        ),
        (true, _) => (
            1 << 24,
            "a launch grid has at most 16777216 blocks along x and along y",
        ),
        (false, 2) => (64, "a block has at most 64 threads along z, as in CUDA"),
        (false, _) => (
            4096,
            "a block has at most 4096 threads along x and along y (and no more in all than `sm.max_threads`, 1024 as in CUDA unless raised)",
        ),
    }
}

/// Why a block of `threads` threads cannot run on `m` at all: more threads than
/// an SM runs per block (`sm.max_threads`). spu-emu refuses such a launch.
pub fn check_block_threads(m: &Machine, threads: u64) -> Result<(), String> {
    if threads > u64::from(m.sm_max_threads) {
        return Err(format!(
            "the block size in threads is {threads}, but an SM runs at most {} threads per block (`sm.max_threads`); launch fewer threads per block{}",
            m.sm_max_threads,
            crate::raise_limit("sm.max_threads", threads)
        ));
    }
    Ok(())
}

/// The upper bound of an IU thread count on `m`, with the fix for `threads`.
pub fn iu_threads_limit(m: &Machine, threads: i64) -> String {
    format!(
        "an Interface Unit runs at most {} threads (`iu.max_threads`); launch fewer IU threads{}",
        m.iu_max_threads,
        crate::raise_limit("iu.max_threads", threads.max(0) as u64)
    )
}

/// Why an Interface Unit of `m` cannot run `threads` threads of IU code: none, or
/// more than it runs (`iu.max_threads`). spu-emu refuses such a launch.
pub fn check_iu_threads(m: &Machine, threads: i64) -> Result<(), String> {
    let what = "the IU thread count iu(T)";
    if threads < 1 {
        return Err(format!("{what} is {threads}, but it must be positive"));
    }
    if threads > i64::from(m.iu_max_threads) {
        return Err(format!(
            "{what} is {threads}, but {}",
            iu_threads_limit(m, threads)
        ));
    }
    Ok(())
}

/// The upper bound of the number of blocks in a launch.
pub fn launch_blocks_limit() -> String {
    format!("a launch has at most {MAX_LAUNCH_BLOCKS} blocks")
}

/// Why a launch of `blocks` blocks cannot run: more than any launch has
/// ([`MAX_LAUNCH_BLOCKS`]). spu-emu refuses such a launch.
pub fn check_launch_blocks(blocks: i64) -> Result<(), String> {
    if blocks > MAX_LAUNCH_BLOCKS {
        return Err(format!(
            "the number of blocks in the launch is {blocks}, but {}",
            launch_blocks_limit()
        ));
    }
    Ok(())
}

/// Why a block of `bytes` bytes of shared memory cannot run on `m` at all: more
/// than an SM has (`sm.shared_kib`). spu-emu refuses such a launch.
pub fn check_block_shared(m: &Machine, bytes: u64) -> Result<(), String> {
    let has = u64::from(m.sm_shared_kib) * 1024;
    if bytes > has {
        return Err(format!(
            "the shared memory of a block is {bytes} bytes, but an SM has {} KiB ({has} bytes, `sm.shared_kib`); declare smaller shared arrays{}",
            m.sm_shared_kib,
            crate::raise_limit("sm.shared_kib", bytes.div_ceil(1024))
        ));
    }
    Ok(())
}

/// Why a kernel cannot run on `m` because `m` is a GPU, which has no CBs and no
/// boundary units: the first of IU code, DMA descriptors, and CB accesses or
/// `bar.blocksync` (`uses_cbs`) the kernel has. spu-emu refuses such a kernel.
pub fn check_gpu_fit(
    m: &Machine,
    has_iu: bool,
    has_dma: bool,
    uses_cbs: bool,
) -> Result<(), String> {
    if !m.is_gpu() {
        return Ok(());
    }
    let what = if has_iu {
        "IU code (`.iu`)"
    } else if has_dma {
        "DMA descriptors (`.dma`)"
    } else if uses_cbs {
        "Communication Buffer accesses or `bar.blocksync`"
    } else {
        return Ok(());
    };
    Err(format!(
        "the kernel uses {what}, but the machine is a GPU (`machine.kind = \"gpu\"`) with no CBs and no boundary units; run it on an SPU preset such as `--machine spu-4x4`, or use a kernel written for GPUs"
    ))
}

/// Inner CB links of one SPU SM holding a `fx` x `fy` fold: neighbouring slots
/// west-east and north-south.
pub fn inner_links([fx, fy]: [u32; 2]) -> u32 {
    (fx - 1) * fy + fx * (fy - 1)
}

/// Why the blocks of a fold (`sm.fold_x` x `sm.fold_y`) cannot all be resident on
/// one SM of `m`: a GPU places blocks by occupancy instead; on an SPU the fold's
/// blocks must fit under every limit together, their shared memory with the inner
/// CB pairs carved from it (2 x `cb.size_kib` each). spu-emu refuses such a run.
pub fn check_fold(m: &Machine, demand: BlockDemand) -> Result<(), String> {
    let [fx, fy] = m.fold();
    if !m.is_folded() {
        return Ok(());
    }
    if m.is_gpu() {
        return Err(format!(
            "`sm.fold_x` x `sm.fold_y` = {fx}x{fy} places neighbouring blocks of an SPU's CB grid on one SM, but the machine is a GPU (`machine.kind = \"gpu\"`), which places blocks by occupancy (`sm.max_blocks`); set `sm.fold_x=1` and `sm.fold_y=1`, or run on an SPU preset such as `--machine spu-4x4`"
        ));
    }
    let n = fx * fy;
    let fold = format!("`sm.fold_x` x `sm.fold_y` = {fx}x{fy} places {n} blocks on each SM");
    let advice =
        |key: &str, needs: u64| format!("; use a smaller fold{}", crate::raise_limit(key, needs));
    for (limit, per_block) in holdings(demand) {
        let (needs, has, what) = match limit {
            Limit::SharedMemory => continue,
            Limit::Blocks => (
                u64::from(n),
                u64::from(m.sm_max_blocks),
                "blocks".to_string(),
            ),
            Limit::Threads => (
                u64::from(n) * u64::from(per_block),
                u64::from(m.sm_max_resident_threads),
                format!("thread slots ({n} x {per_block}, whole warps)"),
            ),
            Limit::Warps => (
                u64::from(n) * u64::from(per_block),
                u64::from(m.sm_max_warps),
                format!("warps ({n} x {per_block})"),
            ),
            Limit::Registers => (
                u64::from(n) * u64::from(per_block),
                u64::from(m.sm_registers),
                format!("registers ({n} x {per_block})"),
            ),
        };
        if needs > has {
            let hold = if limit == Limit::Blocks {
                String::new()
            } else {
                format!(", which hold {needs} {what}")
            };
            let unit = if limit == Limit::Blocks {
                " blocks"
            } else {
                ""
            };
            return Err(format!(
                "{fold}{hold}, but an SM holds at most {has}{unit} (`{}`){}",
                limit.key(),
                advice(limit.key(), needs)
            ));
        }
    }
    let links = inner_links([fx, fy]);
    let cb = u64::from(m.cb_bytes());
    let needs = u64::from(n) * u64::from(demand.shared_bytes) + u64::from(links) * 2 * cb;
    let has = u64::from(m.sm_shared_kib) * 1024;
    if needs > has {
        return Err(format!(
            "{fold}, which need {needs} bytes of shared memory ({n} x {} bytes of the blocks' own, and {links} inner CB pairs x {} bytes), but an SM has {} KiB ({has} bytes, `sm.shared_kib`){}",
            demand.shared_bytes,
            2 * cb,
            m.sm_shared_kib,
            advice("sm.shared_kib", needs.div_ceil(1024))
        ));
    }
    Ok(())
}

/// A limit one block alone exceeds: what the block holds of it and what one SM has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unfit {
    pub limit: Limit,
    pub needs: u32,
    pub has: u32,
    pub demand: BlockDemand,
}

/// The first of threads (padded to whole warps), warps and registers (rounded as
/// [`occupancy`] counts them) of which one block of `demand` holds more than an
/// SM of `m` has, or `None` if one block fits. Shared memory and `sm.max_threads`
/// are checked where the launch is read.
pub fn never_resident(m: &Machine, demand: BlockDemand) -> Option<Unfit> {
    let (warps, padded, registers) = held(demand);
    [
        (Limit::Threads, padded, m.sm_max_resident_threads),
        (Limit::Warps, warps, m.sm_max_warps),
        (Limit::Registers, registers, m.sm_registers),
    ]
    .into_iter()
    .find(|(_, needs, has)| needs > has)
    .map(|(limit, needs, has)| Unfit {
        limit,
        needs,
        has,
        demand,
    })
}

impl fmt::Display for Unfit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (threads, needs, has) = (self.demand.threads, self.needs, self.has);
        match self.limit {
            Limit::Registers => write!(
                f,
                "a block of {threads} threads x {} registers holds {needs} registers (each thread's rounded up to a multiple of 4)",
                self.demand.registers
            )?,
            Limit::Warps => write!(f, "a block of {threads} threads is {needs} warps")?,
            _ => write!(
                f,
                "a block of {threads} threads holds {needs} thread slots (whole warps of 32)"
            )?,
        }
        let key = self.limit.key();
        write!(
            f,
            ", but an SM of this GPU holds at most {has} at once (`{key}`), so the block can never be resident; launch fewer threads per block{}{}",
            if self.limit == Limit::Registers {
                ", use fewer registers per thread"
            } else {
                ""
            },
            crate::raise_limit(key, u64::from(needs))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gtx480() -> Machine {
        super::super::preset("gtx480").unwrap()
    }

    fn demand(threads: u32, registers: u32, shared_bytes: u32) -> BlockDemand {
        BlockDemand {
            threads,
            registers,
            shared_bytes,
        }
    }

    fn occ(threads: u32, registers: u32, shared_bytes: u32) -> (u32, Limit) {
        let o = occupancy(&gtx480(), demand(threads, registers, shared_bytes));
        (o.blocks, o.limit)
    }

    #[test]
    fn each_fermi_limit_caps_the_resident_blocks() {
        // 64 threads, 8 registers, no shared memory: 8 blocks (the block limit;
        // threads would allow 1536 / 64 = 24, registers 32768 / 512 = 64).
        assert_eq!(occ(64, 8, 0), (8, Limit::Blocks));
        // 512 threads: 1536 / 512 = 3 by threads; warps 48 / 16 = 3 tie, threads first.
        assert_eq!(occ(512, 8, 0), (3, Limit::Threads));
        // 200 threads pad to 224 (7 warps): threads 1536 / 224 = 6, warps 48 / 7 = 6.
        assert_eq!(occ(200, 8, 0), (6, Limit::Threads));
        // 256 threads x 21 registers (rounded to 24): 32768 / 6144 = 5.
        assert_eq!(occ(256, 21, 0), (5, Limit::Registers));
        // 128 threads x 63 registers (64): 32768 / 8192 = 4.
        assert_eq!(occ(128, 63, 0), (4, Limit::Registers));
        // The stencil: 64 threads, 2 x 33 x 33 words of planes = 8712 bytes:
        // 49152 / 8712 = 5 by shared memory.
        assert_eq!(occ(64, 24, 8712), (5, Limit::SharedMemory));
        // 48 KiB of shared memory leaves room for exactly one.
        assert_eq!(occ(64, 8, 49152), (1, Limit::SharedMemory));
    }

    #[test]
    fn the_warp_limit_binds_when_it_is_tighter_than_threads() {
        let mut m = gtx480();
        m.set("sm.max_warps=20").unwrap();
        // 256 threads = 8 warps: 20 / 8 = 2, threads 1536 / 256 = 6.
        let o = occupancy(&m, demand(256, 8, 0));
        assert_eq!((o.blocks, o.limit), (2, Limit::Warps));
        assert_eq!(o.limit.key(), "sm.max_warps");
    }

    #[test]
    fn a_block_always_fits_once() {
        let o = occupancy(&gtx480(), demand(1024, 32, 0));
        assert_eq!((o.blocks, o.limit), (1, Limit::Threads));
        assert_eq!(never_resident(&gtx480(), demand(1024, 32, 0)), None);
    }

    #[test]
    fn a_block_larger_than_an_sm_holds_is_named_with_its_limit() {
        let set = |kv: &str| {
            let mut m = gtx480();
            m.set(kv).unwrap();
            m
        };
        // 256 threads = 8 warps.
        let unfit = never_resident(&set("sm.max_warps=1"), demand(256, 8, 0)).unwrap();
        assert_eq!((unfit.limit, unfit.needs, unfit.has), (Limit::Warps, 8, 1));
        assert!(
            unfit.to_string().contains("`--set sm.max_warps=8`"),
            "{unfit}"
        );
        // 200 threads take 224 thread slots.
        let unfit = never_resident(&set("sm.max_resident_threads=200"), demand(200, 8, 0));
        assert_eq!(
            unfit.map(|u| (u.limit, u.needs)),
            Some((Limit::Threads, 224))
        );
        // 5 registers count as 8: 256 x 8 = 2048.
        let unfit = never_resident(&set("sm.registers=2000"), demand(256, 5, 0));
        assert_eq!(
            unfit.map(|u| (u.limit, u.needs)),
            Some((Limit::Registers, 2048))
        );
        assert_eq!(
            never_resident(&set("sm.max_warps=8"), demand(256, 8, 0)),
            None
        );
    }
}
