//! The loader: turns a kernel module plus run options into a ready machine image.
//! It resolves parameters (`-D NAME=VALUE` over the declared defaults, in
//! `params`), evaluates the launch and buffer-size expressions, checks them
//! against the machine (the launch's limits here, the rest in `checks`), lays out
//! and initialises global memory, applies `--load` files and decodes the code.

use super::checks::{
    check_code_size, check_host_memory, check_line_names, check_machine_fit, check_preconditions,
    check_state_size, check_word_types,
};
use super::error::LoadError;
use super::params::{buffer_args, expr_context, param_words, resolve_params};
use crate::exec::decode::decode_program;
use crate::exec::memory::GlobalMemory;
use crate::exec::ops::{Program, SymbolAddresses};
use crate::load::npy;
use crate::machine::{Boundary, Machine};
use spu_isa::Ty;
use spu_isa::format::{Expr, Module};
use std::path::PathBuf;

/// Most blocks a launch may have.
const MAX_BLOCKS: i64 = crate::machine::occupancy::MAX_LAUNCH_BLOCKS;
/// Most CB storage the emulator allocates, in MiB.
const MAX_CB_MIB: i64 = 1024;

/// What the user asked for besides the machine.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `-D NAME=VALUE`, in order (later wins).
    pub defines: Vec<String>,
    /// `--load BUF=file.npy`.
    pub loads: Vec<String>,
    /// `--dump BUF=file.npy` (checked here so a typo fails before a long run).
    pub dumps: Vec<String>,
    /// `--race-check` will be on: its record of every shared word counts in the
    /// estimate of the run's state.
    pub race_check: bool,
    /// Host threads the run will use (`--threads`; 0 is taken as 1): each
    /// counts in the memory checked before the run.
    pub host_threads: usize,
    /// The most the run's recordings (samples, activity for pages and
    /// timelines) and the outputs made from them may take: counted in the
    /// memory checked before the run.
    pub recording_bytes: u64,
}

/// Evaluated launch dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    /// The grid as it runs: a 3-D launch (x, y, z) folds into (x, y*z).
    pub grid: [u32; 2],
    /// The launch's own y extent (`%nctaid.y`); `grid[1] / grid_y` is its z.
    pub grid_y: u32,
    pub block: [u32; 3],
    /// Threads per Interface Unit instance (0 when the kernel has no IU code).
    pub iu_threads: u32,
}

impl LaunchDims {
    pub fn block_threads(&self) -> u32 {
        self.block.iter().product()
    }
}

/// A DMA descriptor with its fields evaluated (all in elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaPlan {
    pub buffer: usize,
    pub offset: i64,
    pub rows: u32,
    pub cols: u32,
    pub row_stride: i64,
    pub tile_stride: i64,
    pub iu_stride: i64,
    pub tiles: u64,
    pub delay: u64,
    pub iu_delay: u64,
}

/// A kernel ready to run.
#[derive(Debug, Clone)]
pub struct Image {
    pub module: Module,
    /// The decoded code.
    pub program: Program,
    /// Parameter space as 32-bit words: each parameter's value at its byte offset
    /// ([`Module::param_layout`]), a 64-bit value low word first; the words of
    /// alignment gaps are zero.
    pub params: Vec<u32>,
    pub launch: LaunchDims,
    pub memory: GlobalMemory,
    /// Byte offset of each shared array, and the total.
    pub shared_offsets: Vec<u32>,
    pub shared_bytes: u32,
    /// The local memory a thread may use in this run (up to
    /// [`crate::exec::warp::LOCAL_LIMIT_BYTES`]: less when the run holds so many
    /// threads at once that their local memory would pass [`MAX_STATE_BYTES`]).
    pub local_bytes: u32,
    /// What the run's budget of memory ([`RUN_BYTES`]) leaves beside the
    /// buffers and the state: the most spilled CB tiles may take.
    pub spare_bytes: u64,
    /// `--dump` requests: buffer index and file.
    pub dumps: Vec<(usize, PathBuf)>,
    /// DMA descriptors by side code, evaluated.
    pub dma: [Option<DmaPlan>; 4],
}

impl Image {
    /// What one block holds (registers, shared memory, CB ports), as loaded.
    pub fn resources(&self) -> crate::machine::resources::Resources {
        crate::machine::resources::Resources::new(
            &self.module,
            self.launch.block_threads(),
            self.launch.iu_threads,
            u32::from(self.program.layout.general),
            self.shared_bytes,
        )
    }

    /// The sides with kernel boundary work on `boundary` units: all four with IU
    /// code, the declared ones with DMA descriptors.
    pub fn boundary_sides(&self, boundary: Boundary) -> Vec<spu_isa::Side> {
        match boundary {
            Boundary::Iu if self.module.iu_entry.is_some() => spu_isa::Side::ALL.to_vec(),
            Boundary::Iu => Vec::new(),
            Boundary::Dma => self
                .dma
                .iter()
                .zip(spu_isa::Side::ALL)
                .filter(|(d, _)| d.is_some())
                .map(|(_, s)| *s)
                .collect(),
        }
    }
}

/// Loads a module onto a machine.
pub fn load(module: Module, machine: &Machine, options: &LoadOptions) -> Result<Image, LoadError> {
    check_word_types(&module)?;
    check_code_size(module.code.len())?;
    check_line_names(&module)?;
    let values = resolve_params(&module, &options.defines)?;
    let value_of = |i: u16| -> Option<i64> {
        let p = module.params.get(usize::from(i))?;
        spu_isa::format::param_int(p.ty, values[usize::from(i)])
    };
    let eval = |e: &Expr, what: &str| -> Result<i64, LoadError> {
        e.eval(&value_of).map_err(|err| LoadError::BadExpr {
            what: what.to_string(),
            text: e.display(&|i| module.param_name(i)).to_string(),
            why: match err {
                spu_isa::format::EvalError::MissingParam(i) => {
                    let p = module.params.get(usize::from(i));
                    match p.map(|p| (p.ty, values[usize::from(i)])) {
                        Some((ty, v)) if !ty.is_float() => format!(
                            "parameter `{}` is {v}, above the largest value size and launch expressions take ({})",
                            module.param_name(i),
                            i64::MAX
                        ),
                        ty => format!(
                            "parameter `{}` is .{}; sizes need integer parameters",
                            module.param_name(i),
                            ty.map_or(Ty::F32, |t| t.0)
                        ),
                    }
                }
                other => other.to_string(),
            },
            context: String::new(),
        })
    };
    let context = |exprs: &[&Expr], decl: &str, show_text: bool| {
        expr_context(&module, &values, &options.defines, exprs, decl, show_text)
    };
    check_preconditions(&module, &value_of, &eval)?;
    // `why` explains the upper bound (with the number, or a key whose value is added);
    // the lower one speaks for itself.
    let within = |what: String, v: i64, lo: i64, hi: i64, why: &str| -> Result<u32, LoadError> {
        let limit = if v < lo {
            match lo {
                0 => "it must not be negative".to_string(),
                1 => "it must be positive".to_string(),
                _ => format!("it must be at least {lo}"),
            }
        } else if v > hi && why.contains("at most") {
            why.to_string()
        } else if v > hi {
            format!("{why} (at most {hi})")
        } else {
            return Ok(v as u32);
        };
        Err(LoadError::Limit {
            what,
            value: v.to_string(),
            limit,
            context: String::new(),
        })
    };

    let l = &module.launch;
    let mut grid3 = [0; 3];
    for (d, e) in l.grid.iter().enumerate() {
        let what = format!("launch grid dimension {}", ["x", "y", "z"][d]);
        let (max, why) = crate::machine::occupancy::launch_dim_limit(true, d);
        grid3[d] = eval(e, &what)
            .and_then(|v| within(what.clone(), v, 1, max, why))
            .map_err(|err| err.with_context(|t| context(&[e], "`.launch grid(..)`", t)))?;
    }
    // z stacks y-rows: the run sees a 2-D grid of (x, y*z) blocks.
    let grid_y = grid3[1];
    let grid = [
        grid3[0],
        within(
            "launch grid y*z".into(),
            i64::from(grid3[1]) * i64::from(grid3[2]),
            1,
            1 << 24,
            "a 3-D grid runs as (x, y*z) and y*z may be at most 16777216",
        )?,
    ];
    let mut block = [0; 3];
    for (d, e) in l.block.iter().enumerate() {
        let what = format!("block dimension {}", ["x", "y", "z"][d]);
        let (max, why) = crate::machine::occupancy::launch_dim_limit(false, d);
        block[d] = eval(e, &what)
            .and_then(|v| within(what.clone(), v, 1, max, why))
            .map_err(|err| err.with_context(|t| context(&[e], "`.launch block(..)`", t)))?;
    }
    let threads = i64::from(block[0]) * i64::from(block[1]) * i64::from(block[2]);
    crate::machine::occupancy::check_block_threads(machine, threads as u64)
        .map_err(LoadError::Machine)?;
    // Bounds checked before anything is allocated (queues, CBs, buffers).
    within(
        "the number of blocks in the launch".into(),
        i64::from(grid[0]) * i64::from(grid[1]),
        1,
        MAX_BLOCKS,
        &crate::machine::occupancy::launch_blocks_limit(),
    )
    .map_err(|err| {
        let exprs: Vec<&Expr> = l.grid.iter().collect();
        err.with_context(|t| context(&exprs, "`.launch grid(..)`", t))
    })?;
    // A GPU has no CBs (nor boundary units).
    // With a fold, links join positions (blocks), not SMs.
    let links = if machine.is_gpu() {
        0
    } else {
        let w = i64::from(machine.grid_cols) * i64::from(machine.sm_fold_x);
        let h = i64::from(machine.grid_rows) * i64::from(machine.sm_fold_y);
        w * (h + 1) + h * (w + 1)
    };
    within(
        format!(
            "the CB storage of a {}x{} grid in MiB",
            machine.grid_cols, machine.grid_rows
        ),
        2 * links * i64::from(machine.cb_size_kib) / 1024,
        0,
        MAX_CB_MIB,
        "the emulator holds at most 1024 MiB of CBs; use a smaller `--grid` or `cb.size_kib`",
    )?;
    let has_iu_code = module.iu_entry.is_some();
    let iu_threads = if has_iu_code {
        let iu_context = |t| context(&[&l.iu_threads], "`.launch iu(..)`", t);
        let v = eval(&l.iu_threads, "the IU thread count iu(T)")
            .map_err(|err| err.with_context(iu_context))?;
        within(
            "the IU thread count iu(T)".into(),
            v,
            1,
            i64::from(machine.iu_max_threads),
            &crate::machine::occupancy::iu_threads_limit(machine, v),
        )
        .map_err(|err| err.with_context(iu_context))?
    } else {
        0
    };
    let (shared_offsets, shared_total) = crate::machine::resources::shared_layout(
        &module.shared,
        |s, e| {
            let what = format!("a dimension of shared array `{}`", s.name);
            // An `.extern .shared` array's size is `.launch shared(..)`'s.
            let decl = format!(
                "the size of `{}` (its `.shared` declaration, or `.launch shared(..)` for an `.extern .shared` array)",
                s.name
            );
            // Like a launch dimension: a negative size is an error, not an empty array.
            eval(e, &what)
                .and_then(|v| within(what.clone(), v, 0, i64::MAX, "").map(|_| v))
                .map_err(|err| err.with_context(|t| context(&[e], &decl, t)))
        },
    )?;
    crate::machine::occupancy::check_block_shared(machine, shared_total.max(0) as u64)
        .map_err(LoadError::Machine)?;
    let shared_bytes = shared_total as u32;

    let mut layout = Vec::new();
    for b in &module.buffers {
        let mut dims = Vec::new();
        // The exact count: at most 4 dimensions of 32 bits each fit in 128 bits.
        let mut n: Option<u128> = Some(1);
        let decl = format!("the `.global` declaration of `{}`", b.name);
        let all_dims: Vec<&Expr> = b.dims.iter().collect();
        for e in &b.dims {
            let what = format!("a dimension of buffer `{}`", b.name);
            let v = eval(e, &what)
                .and_then(|v| {
                    within(
                        what.clone(),
                        v,
                        1,
                        i64::from(u32::MAX),
                        "a buffer dimension must fit in 32 bits",
                    )
                })
                .map_err(|err| err.with_context(|t| context(&[e], &decl, t)))?;
            dims.push(u64::from(v));
            n = n.and_then(|n| n.checked_mul(u128::from(v)));
        }
        let n = match n {
            Some(n) if n <= 1 << 30 => n as u64,
            n => {
                return Err(LoadError::Limit {
                    what: format!("the element count of buffer `{}`", b.name),
                    value: n.map_or_else(|| "2^128 or more".to_string(), |n| n.to_string()),
                    limit: "a buffer holds at most 2^30 elements".into(),
                    context: context(&all_dims, &decl, true),
                });
            }
        };
        layout.push((b.name.clone(), b.ty, dims, n));
    }
    for (b, (_, _, _, n)) in module.buffers.iter().zip(&layout) {
        super::init::check(&b.init, b.ty, *n).map_err(|why| LoadError::Init {
            name: b.name.clone(),
            why,
        })?;
    }
    let mut memory = GlobalMemory::layout(layout, u64::from(machine.global_mib) << 20)?;
    let loads = buffer_args(&module, "--load", &options.loads)?;
    let dumps = buffer_args(&module, "--dump", &options.dumps)?;
    for (i, b) in module.buffers.iter().enumerate() {
        // A loaded buffer gets every word from its file: its initialiser is moot.
        // Fresh memory is zero already.
        if loads.iter().any(|(index, _)| *index == i)
            || matches!(b.init, spu_isa::format::Init::Zeros)
        {
            continue;
        }
        let elements = memory.regions()[i].len as usize;
        crate::load::init::fill(memory.buffer_mut(i), b.ty, elements, &b.init);
    }
    // Each file is read straight into its buffer, never held a second time.
    for (index, path) in loads {
        let r = &memory.regions()[index];
        let (name, ty, dims) = (r.name.clone(), r.ty, r.dims.clone());
        npy::read_into(&path, &name, ty, &dims, memory.buffer_mut(index))?;
    }

    let buffer_addrs: Vec<u32> = memory.regions().iter().map(|r| r.base).collect();
    let program = decode_program(
        &module.code,
        SymbolAddresses {
            buffers: &buffer_addrs,
            shared: &shared_offsets,
        },
        module.general_reg_count() as usize,
    )?;
    // Registers each thread gets: the declared ones, or more if the code uses more.
    let regs = usize::from(program.layout.general);
    let warps_threads = |t: i64| (t + 31) / 32 * 32;
    let demand = regs as i64 * warps_threads(threads);
    within(
        format!("the register demand of a block ({regs} registers x {threads} threads)"),
        demand,
        0,
        i64::from(machine.sm_registers),
        &format!(
            "the SM register file holds at most {} (`sm.registers`); launch fewer threads per block, keep fewer values live per thread{}",
            machine.sm_registers,
            crate::machine::raise_limit("sm.registers", demand as u64)
        ),
    )?;
    // The blocks of a fold must be resident on one SPU SM together.
    crate::machine::occupancy::check_fold(
        machine,
        crate::machine::occupancy::BlockDemand {
            threads: threads as u32,
            registers: u32::from(program.layout.general),
            shared_bytes,
        },
    )
    .map_err(LoadError::Machine)?;
    // A GPU SM must hold a whole block at once (GPGPU-Sim's occupancy limits).
    if machine.is_gpu() {
        let demand = crate::machine::occupancy::BlockDemand {
            threads: threads as u32,
            registers: u32::from(program.layout.general),
            shared_bytes,
        };
        if let Some(unfit) = crate::machine::occupancy::never_resident(machine, demand) {
            return Err(LoadError::Machine(unfit.to_string()));
        }
    }
    if has_iu_code {
        let demand = regs as i64 * warps_threads(i64::from(iu_threads));
        within(
            format!("the register demand of an IU ({regs} registers x {iu_threads} threads)"),
            demand,
            0,
            i64::from(machine.iu_registers),
            &format!(
                "the IU register file holds at most {} (`iu.registers`); launch fewer IU threads (`.launch iu(N)`), keep fewer values live per thread{}",
                machine.iu_registers,
                crate::machine::raise_limit("iu.registers", demand as u64)
            ),
        )?;
    }

    let global_bytes = memory.bytes();
    let room = check_state_size(
        machine,
        &program,
        grid,
        threads as u64,
        iu_threads,
        shared_bytes,
        options.race_check,
        global_bytes,
    )?;
    check_host_memory(
        room.state_bytes,
        global_bytes,
        options.host_threads,
        options.recording_bytes,
    )?;
    check_machine_fit(&module, &program, machine, grid)?;
    let mut dma = [None; 4];
    for d in &module.dma {
        let what = |f: &str| format!("field `{f}` of `.dma {}`", d.side);
        let mut v = [0i64; 9];
        for (i, e) in d.fields.iter().enumerate() {
            v[i] = eval(e, &what(spu_isa::format::DMA_FIELDS[i]))?;
        }
        let positive = |i: usize| {
            within(
                what(spu_isa::format::DMA_FIELDS[i]),
                v[i],
                1,
                1 << 20,
                "a DMA tile has at most 1048576 rows or columns",
            )
        };
        let count = |i: usize| {
            within(
                what(spu_isa::format::DMA_FIELDS[i]),
                v[i],
                0,
                i64::from(u32::MAX),
                "it must fit in 32 bits",
            )
        };
        let (rows, cols) = (positive(1)?, positive(2)?);
        let (tiles, delay, iu_delay) = (count(6)?, count(7)?, count(8)?);
        if machine.boundary == Boundary::Dma {
            let words = i64::from(rows) * i64::from(cols);
            within(
                format!("the `.dma {}` tile ({rows} x {cols} words)", d.side),
                words,
                1,
                i64::from(machine.cb_bytes() / 4),
                &format!(
                    "a tile must fit one CB, which holds at most {} words ({} KiB, `cb.size_kib`); use a smaller tile{}",
                    machine.cb_bytes() / 4,
                    machine.cb_size_kib,
                    crate::machine::raise_limit("cb.size_kib", (words as u64 * 4).div_ceil(1024))
                ),
            )?;
        }
        dma[d.side.code() as usize] = Some(DmaPlan {
            buffer: usize::from(d.buffer),
            offset: v[0],
            rows,
            cols,
            row_stride: v[3],
            tile_stride: v[4],
            iu_stride: v[5],
            tiles: u64::from(tiles),
            delay: u64::from(delay),
            iu_delay: u64::from(iu_delay),
        });
    }
    let params = param_words(&module.params, &values);
    Ok(Image {
        module,
        program,
        params,
        launch: LaunchDims {
            grid,
            grid_y,
            block,
            iu_threads,
        },
        memory,
        shared_offsets,
        shared_bytes,
        local_bytes: room.local_bytes,
        spare_bytes: room.spare_bytes,
        dumps,
        dma,
    })
}
