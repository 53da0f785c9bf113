//! What a run must satisfy before it starts, beyond the launch's own limits:
//! the kernel's `.assert` preconditions, 32-bit words where the machine moves
//! words (parameters, DMA), the size of the state the run would allocate, and
//! whether the kernel fits the machine (a GPU has no CBs, IUs or DMA engines).

use super::error::{LINE_NAMES_BYTES, LoadError, MAX_STATE_BYTES, RUN_BYTES, StateEstimate};
use crate::exec::ops::{Program, Run};
use crate::exec::warp::LOCAL_LIMIT_BYTES;
use crate::machine::{Boundary, Machine, PassMode};
use spu_isa::Ty;
use spu_isa::format::{Expr, Module};

/// Refuses the run when an `.assert` of the kernel does not hold with the final
/// parameter values.
pub(super) fn check_preconditions(
    module: &Module,
    value_of: &dyn Fn(u16) -> Option<i64>,
    eval: &dyn Fn(&Expr, &str) -> Result<i64, LoadError>,
) -> Result<(), LoadError> {
    for a in &module.preconditions {
        let names = |i: u16| module.param_name(i);
        let what = format!("the precondition `{}`", a.display(&names));
        let (l, r) = (eval(&a.lhs, &what)?, eval(&a.rhs, &what)?);
        if a.op.holds(l, r) {
            continue;
        }
        let values: Vec<String> = a
            .params()
            .into_iter()
            .map(|i| match value_of(i) {
                Some(v) => format!("{} = {v}", names(i)),
                None => format!("{} unset", names(i)),
            })
            .collect();
        return Err(LoadError::Precondition {
            message: spu_io::quote::escape(&a.message).to_string(),
            condition: a.display(&names),
            values: if values.is_empty() {
                "any parameters".into()
            } else {
                values.join(", ")
            },
        });
    }
    Ok(())
}

/// DMA moves 32-bit words, so a buffer a `.dma` descriptor names must have a
/// 32-bit element type. (Parameters may have any type: each takes its own size in
/// parameter space, see [`spu_isa::format::param_layout`]; buffers and shared
/// arrays are byte-addressed and packed by element size.)
pub(super) fn check_word_types(module: &Module) -> Result<(), LoadError> {
    let word = |t: Ty| t.bits() == 32;
    for d in &module.dma {
        if let Some(b) = module.buffers.get(usize::from(d.buffer))
            && !word(b.ty)
        {
            return Err(LoadError::Machine(format!(
                "`.dma {}` moves buffer `{}`, which is .{}: DMA engines move 32-bit words; declare the buffer .u32, .s32, .b32 or .f32",
                d.side, b.name, b.ty
            )));
        }
    }
    Ok(())
}

/// What [`check_state_size`] leaves a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StateRoom {
    /// The local memory each thread may use ([`local_allowance`]).
    pub local_bytes: u32,
    /// The state the run may allocate: the estimate, and the local memory its
    /// threads may use when the kernel uses local memory at all.
    pub state_bytes: u64,
    /// What the run's budget leaves beside the buffers and that state (for
    /// spilled CB tiles).
    pub spare_bytes: u64,
}

/// The most a run's global memory and state may take together: [`RUN_BYTES`],
/// or `memory.global_mib` where the user set that higher.
pub(super) fn run_budget(machine: &Machine) -> u64 {
    RUN_BYTES.max(u64::from(machine.global_mib) << 20)
}

/// The bytes a cache keeps per line: the tag, the LRU stamp, the cycle its
/// data arrives and the dirty bit (`timing::cache`, whose test holds the two
/// equal).
pub const CACHE_LINE_STATE_BYTES: u64 = 32;

/// Counters and decoded form of one instruction, once per run.
const PER_INSTRUCTION: u64 = 640;

/// Refuses, before anything is decoded or laid out, a kernel whose
/// instructions alone (decoded, with the run's counters of each) pass
/// [`MAX_STATE_BYTES`]: decoding them would take that memory before
/// [`check_state_size`] could refuse it.
pub(super) fn check_code_size(instructions: usize) -> Result<(), LoadError> {
    let bytes = (instructions as u64).saturating_mul(PER_INSTRUCTION);
    if bytes > MAX_STATE_BYTES {
        return Err(LoadError::CodeTooLarge {
            count: spu_io::numbers::grouped(instructions as u64),
            bytes,
        });
    }
    Ok(())
}

/// Refuses a kernel whose line table, with each instruction's file name written
/// out, passes [`LINE_NAMES_BYTES`]: the statistics and every report built from
/// them would take that memory (and that much of a file) for names alone.
pub(super) fn check_line_names(module: &Module) -> Result<(), LoadError> {
    let files = &module.lines.files;
    let mut uses = vec![0u64; files.len()];
    for l in &module.lines.locs {
        if let Some(n) = uses.get_mut(usize::from(l.file)) {
            *n += 1;
        }
    }
    let bytes = |(f, n): (&String, &u64)| (f.len() as u64).saturating_mul(*n);
    let total = files
        .iter()
        .zip(&uses)
        .map(bytes)
        .fold(0u64, u64::saturating_add);
    if total <= LINE_NAMES_BYTES {
        return Ok(());
    }
    let (file, count) = files
        .iter()
        .zip(&uses)
        .max_by_key(|p| bytes(*p))
        .expect("a total above zero has a file");
    Err(LoadError::LineNamesTooLarge {
        file: spu_io::quote::shorten(file),
        count: spu_io::numbers::grouped(*count),
        total,
    })
}

/// Estimates, before the run's state is allocated, the memory of every unit's
/// warps (registers, scoreboards, stacks) and shared memory, the CBs and the
/// per-instruction counters, and refuses runs above [`MAX_STATE_BYTES`], or
/// whose state and `global_bytes` of buffers (as laid out, written or not)
/// together pass the run's budget ([`run_budget`]). Returns the local memory each
/// thread may use and what is left.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_state_size(
    machine: &Machine,
    program: &Program,
    grid: [u32; 2],
    threads: u64,
    iu_threads: u32,
    shared_bytes: u32,
    race_check: bool,
    global_bytes: u64,
) -> Result<StateRoom, LoadError> {
    /// A warp's bookkeeping besides its registers (stack, scoreboard, state).
    const WARP_OVERHEAD: u64 = 1 << 10;
    /// A unit's own state (counters, pipelines, schedulers, ports).
    const UNIT_OVERHEAD: u64 = 4 << 10;

    /// Every unit's own counters of one instruction (issued, threads,
    /// transactions, stalls by reason, cache lines, ...), measured at 161 bytes.
    const PER_UNIT_INSTRUCTION: u64 = 168;
    /// The run's bookkeeping of one pass (blocks left, spilled tiles, ...).
    const PER_PASS: u64 = 48;
    let slots = program.layout.slots() as u64;
    let regs = u64::from(program.layout.general);
    let warp = slots * 32 * 4 + regs * 16 + WARP_OVERHEAD;
    let (cols, rows) = (u64::from(machine.grid_cols), u64::from(machine.grid_rows));
    let sms = cols * rows;
    let busy_sms = sms.min(u64::from(grid[0]) * u64::from(grid[1]));
    // A GPU has SMs only: no boundary units and no CBs.
    let gpu = machine.is_gpu();
    // With a fold every boundary lane runs its own work.
    let [fx, fy] = if gpu { [1, 1] } else { machine.fold() };
    let boundary = if gpu {
        0
    } else {
        2 * (cols * u64::from(fx) + rows * u64::from(fy))
    };
    // A GPU SM holds several resident blocks.
    let resident = if gpu {
        let demand = crate::machine::occupancy::BlockDemand {
            threads: u32::try_from(threads).unwrap_or(u32::MAX),
            registers: u32::from(program.layout.general),
            shared_bytes,
        };
        u64::from(crate::machine::occupancy::occupancy(machine, demand).blocks)
    } else {
        u64::from(fx * fy)
    };
    // The race checker keeps a record of every word of the shared memory a block
    // slot holds (a power of two of words).
    let race_cells = if race_check {
        u64::from(shared_bytes / 4).next_power_of_two() * crate::exec::race::CELL_BYTES
    } else {
        0
    };
    let per_sm = resident * (threads.div_ceil(32) * warp + u64::from(shared_bytes) + race_cells)
        + UNIT_OVERHEAD;
    let per_boundary = u64::from(iu_threads).div_ceil(32) * warp + UNIT_OVERHEAD;
    let links = if gpu {
        0
    } else {
        let (w, h) = (cols * u64::from(fx), rows * u64::from(fy));
        w * (h + 1) + h * (w + 1)
    };
    let cbs = 2 * links * u64::from(machine.cb_size_kib) * 1024;
    // Every unit's queue of work items, one per block and per boundary unit a
    // pass (a queue grows by doubling, so up to twice that), and the per-pass
    // counts; a GPU hands blocks out as SMs free up.
    let queues = if gpu {
        0
    } else {
        let [gx, gy] = grid.map(u64::from);
        let passes = gx.div_ceil(cols * u64::from(fx)) * gy.div_ceil(rows * u64::from(fy));
        let items = gx * gy + passes * boundary;
        2 * items * std::mem::size_of::<crate::load::plan::WorkItem>() as u64 + passes * PER_PASS
    };
    let instructions = program.len() as u64;
    let units = sms + boundary;
    // Every unit's L1 and the L2's banks keep each line's state.
    let l1_lines = u64::from(machine.l1_sets()) * u64::from(machine.l1_ways);
    let l2_lines = u64::from(machine.l2_bank_sets())
        * u64::from(machine.l2_ways)
        * u64::from(machine.l2_banks);
    let caches = units
        .saturating_mul(l1_lines)
        .saturating_add(l2_lines)
        .saturating_mul(CACHE_LINE_STATE_BYTES);
    let per_code = instructions * PER_INSTRUCTION
        + units.saturating_mul(instructions.saturating_mul(PER_UNIT_INSTRUCTION));
    let total = busy_sms * per_sm
        + (sms - busy_sms) * UNIT_OVERHEAD
        + boundary * per_boundary
        + cbs
        + caches
        + queues
        + per_code;
    let race_record = busy_sms * resident * race_cells;
    let budget = run_budget(machine);
    if total > MAX_STATE_BYTES || global_bytes + total > budget {
        return Err(LoadError::StateTooLarge(StateEstimate {
            total,
            busy_sms,
            per_sm,
            boundary,
            per_boundary,
            cbs,
            caches,
            queues,
            instructions,
            units,
            per_code,
            race_record,
            global_bytes,
            budget,
        }));
    }
    // Every thread a unit holds at once keeps its own local memory (a warp's grows
    // for all 32 lanes together).
    let local_threads = (busy_sms * resident * threads.div_ceil(32)
        + boundary * u64::from(iu_threads).div_ceil(32))
        * 32;
    let room = (MAX_STATE_BYTES - total).min(budget - global_bytes - total);
    let local_bytes = local_allowance(program, room, local_threads)?;
    let local = if program.may_use_local() {
        local_threads * u64::from(local_bytes)
    } else {
        0
    };
    Ok(StateRoom {
        local_bytes,
        state_bytes: total + local,
        spare_bytes: budget - global_bytes - total - local,
    })
}

/// Memory beyond the state estimate that a run is checked to be able to get
/// before it starts (statistics, reports), besides [`THREAD_BYTES`] a host thread.
pub const HEADROOM_BYTES: u64 = 64 << 20;

/// The address space a worker thread may take: its stack and the heap the
/// system's allocator gives each thread (64 MiB of address space with glibc).
const THREAD_BYTES: u64 = 72 << 20;

/// The headroom [`super::load`] checks a run has beside its state, for `threads` host
/// threads (one runs without workers).
fn headroom(threads: usize) -> u64 {
    let workers = if threads > 1 { threads as u64 } else { 0 };
    HEADROOM_BYTES + workers * THREAD_BYTES
}

/// Reserves, and gives back, the run's state and the headroom beside it: a
/// memory limit (`ulimit -v`) that leaves the run less is an error here, not an
/// abort halfway through the run.
pub(super) fn check_host_memory(
    state_bytes: u64,
    global_bytes: u64,
    threads: usize,
    recording_bytes: u64,
) -> Result<(), LoadError> {
    let headroom = headroom(threads).saturating_add(recording_bytes);
    let mut trial: Vec<u8> = Vec::new();
    if trial
        .try_reserve_exact((state_bytes + headroom) as usize)
        .is_err()
    {
        return Err(LoadError::HostMemory {
            state: state_bytes,
            headroom,
            global: global_bytes,
        });
    }
    Ok(())
}

/// The local memory each of `threads` threads held at once may use: the whole
/// [`LOCAL_LIMIT_BYTES`] when `room` (what the rest of the run's state leaves of
/// [`MAX_STATE_BYTES`]) holds it for all of them, else their share of `room`. A
/// run whose threads would need more stops when one does (the same thread for any
/// number of host threads: each warp's use depends on its own instructions only).
/// The local memory a kernel's calls and `printf`s need (their frames start past
/// the caller's) is known here: a share below it is refused at once.
fn local_allowance(program: &Program, room: u64, threads: u64) -> Result<u32, LoadError> {
    let share = (room / threads.max(1)).min(u64::from(LOCAL_LIMIT_BYTES)) as u32 / 16 * 16;
    let frames = program
        .ops
        .iter()
        .filter_map(|op| match op.run {
            Run::Call { frame_bytes, .. } => Some(u64::from(frame_bytes)),
            // `vprintf`'s result is the word at byte 16 of its frame.
            Run::Printf { frame_bytes } => Some(u64::from(frame_bytes) + 20),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    if frames > u64::from(share) {
        return Err(LoadError::LocalTooLarge {
            threads,
            share,
            frames,
            most: room / frames,
        });
    }
    Ok(share)
}

/// Checks the kernel against the machine's boundary and pass configuration.
pub(super) fn check_machine_fit(
    module: &Module,
    program: &Program,
    m: &Machine,
    grid: [u32; 2],
) -> Result<(), LoadError> {
    let geo = crate::load::plan::Geometry::new(m, grid);
    let [nx, ny] = geo.passes();
    let passes = nx * ny;
    let has_iu = module.iu_entry.is_some();
    let has_dma = !module.dma.is_empty();
    if m.is_gpu() {
        crate::machine::occupancy::check_gpu_fit(m, has_iu, has_dma, program.uses_cbs())
            .map_err(LoadError::Machine)?;
        return Ok(());
    }
    match m.boundary {
        Boundary::Iu if has_dma && !has_iu => {
            return Err(LoadError::Machine(
                "the kernel declares DMA descriptors but no IU code, and the machine has Interface Units; run it with `--boundary dma`".into(),
            ));
        }
        Boundary::Dma if has_iu && !has_dma => {
            return Err(LoadError::Machine(
                "the kernel has IU code but no DMA descriptors, and the machine has DMA engines; run it with `--boundary iu` or add `.dma` descriptors".into(),
            ));
        }
        _ => {}
    }
    // A partial pass hands its east or south role to the position past its last
    // block; with a fold that runs only in slot 0 of an SM holding no blocks.
    let sides: Vec<spu_isa::Side> = match m.boundary {
        Boundary::Iu if has_iu => spu_isa::Side::ALL.to_vec(),
        Boundary::Iu => Vec::new(),
        Boundary::Dma => module.dma.iter().map(|d| d.side).collect(),
    };
    if m.is_folded()
        && let Some(r) = crate::load::plan::stranded_role(geo, &sides)
    {
        let [fx, fy] = m.fold();
        let (w, h) = (geo.width(), geo.height());
        let work = match m.boundary {
            Boundary::Iu => "IU code",
            Boundary::Dma => "DMA descriptor",
        };
        let (along, need) = if r.side == spu_isa::Side::East {
            (
                "row",
                format!("a last pass column a multiple of {fx} blocks wide and `sm.fold_y=1`"),
            )
        } else {
            (
                "column",
                format!("a last pass row a multiple of {fy} blocks high and `sm.fold_x=1`"),
            )
        };
        let one_pass = if grid[0] % fx == 0 && grid[1] % fy == 0 {
            format!("`--grid {}x{}` (one pass), ", grid[0] / fx, grid[1] / fy)
        } else {
            String::new()
        };
        return Err(LoadError::Machine(format!(
            "with `sm.fold_x` x `sm.fold_y` = {fx}x{fy} blocks per SM a pass covers {w}x{h} blocks on the {}x{} grid, and pass ({}, {}) of the launch's {}x{} blocks holds only {}x{}: its {} {work} for block {along} {} falls on position ({}, {}), slot {} of SM ({}, {}), and an SM runs a partial pass's boundary work only in slot 0 with no blocks beside it; use {one_pass}a multiple of {w}x{h} blocks, {need}, or `sm.fold_x=1` and `sm.fold_y=1`",
            m.grid_cols,
            m.grid_rows,
            r.pass[0],
            r.pass[1],
            grid[0],
            grid[1],
            r.blocks[0],
            r.blocks[1],
            r.side,
            if r.side == spu_isa::Side::East {
                r.pass[1] * h + r.position[1]
            } else {
                r.pass[0] * w + r.position[0]
            },
            r.position[0],
            r.position[1],
            r.slot,
            r.sm[0],
            r.sm[1],
        )));
    }
    let global_sync = program.uses_global_sync();
    if global_sync && passes > 1 && m.pass_mode == PassMode::Overlapped {
        return Err(LoadError::Machine(format!(
            "the kernel uses global `bar.blocksync` and needs {passes} passes on a {}x{} grid; global blocksync is ill-defined with overlapped passes (thesis 4.3): run with `--passes sequential`, use a larger `--grid`, or use directional blocksync",
            m.grid_cols, m.grid_rows
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// A kernel too long to decode within the state's limit is refused before
    /// it is decoded (3.6 million instructions took 1.8 GB first).
    #[test]
    fn a_kernel_too_long_to_decode_is_refused_first() {
        assert!(super::check_code_size(100_000).is_ok());
        let err = super::check_code_size(3_600_001).unwrap_err().to_string();
        assert!(
            err.starts_with("the kernel has 3 600 001 instructions; decoded, with their counters, they would take 2.1 GiB, past the 1 GiB"),
            "{err}"
        );
    }
}
