//! What one block of a kernel holds (registers, shared, local and parameter memory,
//! CB ports) and how many such blocks an SM of a machine holds at once: the figures
//! `spu-asm -v` prints and the run summary repeats. Shared memory is laid out here
//! ([`shared_layout`]) for the emulator's loader too, so both count the same bytes.

use crate::local::LocalUse;
use crate::occupancy::{self, BlockDemand, Limit};
use crate::{Machine, plural};
use spu_isa::Instr;
use spu_isa::format::{Expr, Module, SharedDecl};
use std::fmt::Write;

/// Where each shared array starts and the bytes of a block's shared memory (a
/// multiple of 4). Arrays start at a multiple of 4 bytes, of their element size and
/// of the alignment the source asked for (`.shared .align 16`); `dim` gives the
/// value of one dimension of an array (not negative), or why it has none.
pub fn shared_layout<E>(
    decls: &[SharedDecl],
    mut dim: impl FnMut(&SharedDecl, &Expr) -> Result<i64, E>,
) -> Result<(Vec<u32>, i64), E> {
    let mut offsets = Vec::with_capacity(decls.len());
    let mut total: i64 = 0;
    for s in decls {
        let elem = i64::from(s.ty.bits() / 8);
        let align = i64::from(s.align).max(elem).max(4);
        total = (total.saturating_add(align - 1) / align).saturating_mul(align);
        offsets.push(total.min(i64::from(u32::MAX)) as u32);
        let mut n: i64 = 1;
        for e in &s.dims {
            n = n.saturating_mul(dim(s, e)?);
        }
        total = total.saturating_add(n.saturating_mul(elem));
    }
    Ok((offsets, total.saturating_add(3) / 4 * 4))
}

/// The CB ports a stretch of code reads and writes, in the order north, south,
/// east, west (reads are from north and west, writes to south and east).
fn cb_ports(code: &[u64]) -> Vec<spu_isa::Side> {
    let mut used = [false; 4];
    for word in code {
        if let Some(side) = Instr::decode(*word)
            .ok()
            .and_then(|i| i.mods.space)
            .and_then(|s| s.cb_side())
        {
            used[side_index(side)] = true;
        }
    }
    spu_isa::Side::ALL
        .iter()
        .copied()
        .filter(|s| used[side_index(*s)])
        .collect()
}

fn side_index(side: spu_isa::Side) -> usize {
    spu_isa::Side::ALL
        .iter()
        .position(|s| *s == side)
        .unwrap_or(0)
}

/// What one block of a kernel holds, with its parameters' values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resources {
    /// Threads of one block.
    pub threads: u32,
    /// General registers per thread, as the binary numbers them.
    pub registers: u32,
    pub predicates: u32,
    /// Bytes of shared memory of one block.
    pub shared_bytes: u32,
    /// Local memory per thread, as far as the code shows it.
    pub local: LocalUse,
    /// Bytes of parameter space.
    pub param_bytes: u32,
    /// CB ports the SM code uses.
    pub sm_cb: Vec<spu_isa::Side>,
    /// Threads per Interface Unit and the CB ports the IU code uses, when the
    /// kernel has IU code.
    pub iu: Option<(u32, Vec<spu_isa::Side>)>,
    /// The kernel has DMA descriptors.
    pub has_dma: bool,
    /// The code accesses CBs or uses `bar.blocksync`.
    pub uses_cbs: bool,
    /// Why the launch is refused whatever the machine (an empty grid or block, or
    /// one beyond a launch's limits), if it is.
    pub launch_refused: Option<String>,
    /// The IU thread count `iu(T)` as the launch gives it, when there is IU code
    /// (checked against a machine by [`Resources::refusal`]).
    pub iu_asked: Option<i64>,
}

impl Resources {
    /// The figures of a loaded kernel: `threads` per block, `iu_threads` per IU,
    /// `registers` per thread and `shared_bytes` per block as the loader found them.
    pub fn new(
        module: &Module,
        threads: u32,
        iu_threads: u32,
        registers: u32,
        shared_bytes: u32,
    ) -> Resources {
        let split = module
            .iu_entry
            .map_or(module.code.len(), |pc| (pc as usize).min(module.code.len()));
        Resources {
            threads,
            registers,
            predicates: module.pred_reg_count(),
            shared_bytes,
            local: crate::local::local_use(
                &module.code,
                &std::iter::once(0)
                    .chain(module.iu_entry)
                    .collect::<Vec<_>>(),
            ),
            param_bytes: module.param_layout().1,
            // IUs that run the kernel from its start (CUDA C's `spu_is_iu()`)
            // share all of its code with the SMs.
            sm_cb: cb_ports(&module.code[..if split == 0 { module.code.len() } else { split }]),
            iu: module
                .iu_entry
                .map(|_| (iu_threads, cb_ports(&module.code[split..]))),
            has_dma: !module.dma.is_empty(),
            uses_cbs: module.code.iter().any(|w| {
                Instr::decode(*w).is_ok_and(|i| {
                    i.opcode == spu_isa::Opcode::BarBlocksync
                        || i.mods.space.and_then(|s| s.cb_side()).is_some()
                })
            }),
            launch_refused: None,
            iu_asked: None,
        }
    }

    /// The figures of a module with its parameters' default values, overridden by
    /// `defines` (`NAME=VALUE`, as `-D` gives them).
    pub fn evaluate(module: &Module, defines: &[String]) -> Result<Resources, String> {
        let values = param_values(module, defines)?;
        let value_of = |i: u16| -> Option<i64> {
            let p = module.params.get(usize::from(i))?;
            spu_isa::format::param_int(p.ty, values[usize::from(i)]?)
        };
        let eval = |e: &Expr, what: &str| -> Result<i64, String> {
            e.eval(&value_of).map_err(|err| {
                let text = e.display(&|i| module.param_name(i)).to_string();
                match err {
                    spu_isa::format::EvalError::MissingParam(i) => format!(
                        "{what} (`{text}`) needs parameter `{name}`, which has no default value; give it one with `-D {name}=VALUE`",
                        name = module.param_name(i)
                    ),
                    other => format!("{what} (`{text}`): {other}"),
                }
            })
        };
        let size = |v: i64, what: &str| {
            u32::try_from(v).map_err(|_| {
                format!("{what} is {v}, more than any machine holds (at most 4294967295); use smaller sizes or parameter values")
            })
        };
        let mut launch_refused = None;
        let mut iu_asked = None;
        for (grid, what, dims) in [
            (true, "launch grid dimension", &module.launch.grid),
            (false, "block dimension", &module.launch.block),
        ] {
            for (d, e) in dims.iter().enumerate() {
                let v = eval(e, what)?;
                let (most, why) = occupancy::launch_dim_limit(grid, d);
                let axis = ["x", "y", "z"][d];
                let refused = if v < 1 {
                    Some(format!("{what} {axis} is {v}, but it must be positive"))
                } else if v > most {
                    Some(format!("{what} {axis} is {v}, but {why}"))
                } else {
                    None
                };
                launch_refused = launch_refused.or(refused);
            }
        }
        if launch_refused.is_none() {
            let mut blocks: i64 = 1;
            for e in &module.launch.grid {
                blocks = blocks.saturating_mul(eval(e, "the launch grid")?.max(0));
            }
            launch_refused = occupancy::check_launch_blocks(blocks).err();
        }
        let mut threads: i64 = 1;
        for e in &module.launch.block {
            threads = threads.saturating_mul(eval(e, "the block size")?.max(0));
        }
        let threads = size(threads, "the block size in threads")?;
        let iu_threads = match module.iu_entry {
            Some(_) => {
                let v = eval(&module.launch.iu_threads, "the IU thread count")?;
                iu_asked = Some(v);
                size(v.max(0), "the IU thread count")?
            }
            None => 0,
        };
        let (_, shared) = shared_layout(&module.shared, |s, e| {
            let what = format!("a dimension of shared array `{}`", s.name);
            let v = eval(e, &what)?;
            if v < 0 {
                return Err(format!("{what} is {v}; it must not be negative"));
            }
            Ok(v)
        })?;
        let shared = size(shared, "the shared memory of a block in bytes")?;
        let mut r = Resources::new(
            module,
            threads,
            iu_threads,
            module.general_reg_count(),
            shared,
        );
        r.launch_refused = launch_refused;
        r.iu_asked = iu_asked;
        Ok(r)
    }

    /// Why spu-emu refuses to run this launch on `machine`, if it does: an empty
    /// grid or block, a block larger than an SM runs or holds, or (on a GPU) CBs,
    /// `bar.blocksync` or boundary code; the checks are spu-emu's own.
    pub fn refusal(&self, machine: &Machine) -> Option<String> {
        if let Some(why) = &self.launch_refused {
            return Some(why.clone());
        }
        occupancy::check_gpu_fit(machine, self.iu.is_some(), self.has_dma, self.uses_cbs)
            .and_then(|()| {
                self.iu_asked
                    .map_or(Ok(()), |t| occupancy::check_iu_threads(machine, t))
            })
            .and_then(|()| occupancy::check_block_threads(machine, u64::from(self.threads)))
            .and_then(|()| occupancy::check_block_shared(machine, u64::from(self.shared_bytes)))
            .and_then(
                |()| match occupancy::never_resident(machine, self.demand()) {
                    Some(unfit) if machine.is_gpu() => Err(unfit.to_string()),
                    _ => Ok(()),
                },
            )
            .err()
    }

    /// What one block asks of an SM.
    pub fn demand(&self) -> BlockDemand {
        BlockDemand {
            threads: self.threads,
            registers: self.registers,
            shared_bytes: self.shared_bytes,
        }
    }

    /// One line for the run summary: `24 registers per thread, 8712 B shared
    /// per block, 0 B local, 8 B params, CBs north west south east`.
    pub fn line(&self) -> String {
        format!(
            "{} per thread, {} B shared per block, {} local per thread, {} B params, {}",
            plural(self.registers, "register"),
            self.shared_bytes,
            match self.local.unbounded {
                None => format!("{} B", self.local.bytes),
                Some(why) => format!("at least {} B ({})", self.local.bytes, why.words()),
            },
            self.param_bytes,
            match (&self.iu, self.sm_cb.is_empty()) {
                (None, true) => "no CBs".to_string(),
                _ => format!("CB ports {}", self.ports()),
            }
        )
    }

    /// The CB ports in words: `SM north west east, IU south`.
    fn ports(&self) -> String {
        let words = |sides: &[spu_isa::Side]| {
            if sides.is_empty() {
                "none".to_string()
            } else {
                sides.iter().map(|s| s.name()).collect::<Vec<_>>().join(" ")
            }
        };
        match &self.iu {
            None => format!("SM {}", words(&self.sm_cb)),
            Some((_, iu)) => format!("SM {}, IU {}", words(&self.sm_cb), words(iu)),
        }
    }

    /// The resource summary `spu-asm -v` prints for kernel `name` on machine
    /// `machine` (called `machine_name`).
    pub fn report(&self, name: &str, machine: &Machine, machine_name: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "kernel `{}` on {machine_name} ({})",
            spu_io::quote::escape(name),
            machine.summary()
        );
        let warps = self.threads.div_ceil(32).max(1);
        let _ = writeln!(
            s,
            "  block          {} ({})",
            plural(self.threads, "thread"),
            plural(warps, "warp")
        );
        let _ = writeln!(
            s,
            "  registers      {} per thread, {}",
            self.registers,
            plural(self.predicates, "predicate")
        );
        let _ = writeln!(s, "  shared memory  {} bytes per block", self.shared_bytes);
        let _ = match self.local.unbounded {
            None => writeln!(s, "  local memory   {} bytes per thread", self.local.bytes),
            Some(why) => writeln!(
                s,
                "  local memory   at least {} bytes per thread; no static bound ({})",
                self.local.bytes,
                why.words()
            ),
        };
        let _ = writeln!(s, "  parameters     {} bytes", self.param_bytes);
        match &self.iu {
            Some((t, _)) => {
                let _ = writeln!(s, "  CB ports       {}", self.ports());
                let _ = writeln!(s, "  IU             {}", plural(*t, "thread"));
            }
            None if self.sm_cb.is_empty() => {
                let _ = writeln!(s, "  CB ports       none");
            }
            None => {
                let _ = writeln!(s, "  CB ports       {}", self.ports());
            }
        }
        let demand = self.demand();
        // An empty or oversized grid or block is refused, whatever an SM holds.
        let iu = self
            .iu_asked
            .and_then(|t| occupancy::check_iu_threads(machine, t).err());
        if let Some(why) = self.launch_refused.as_ref().or(iu.as_ref()) {
            let _ = writeln!(s, "  launch         refused: {why}");
            return s;
        }
        if let Some(why) = self.refusal(machine) {
            let _ = writeln!(
                s,
                "  occupancy      0 blocks fit on an SM, so the launch is refused: {why}"
            );
            return s;
        }
        if !machine.is_gpu() {
            // An SPU SM runs the one block of its work item at a time.
            let regs = self.registers.saturating_mul(warps * 32);
            let shared = machine.sm_shared_kib * 1024;
            let fits = regs <= machine.sm_registers
                && self.shared_bytes <= shared
                && self.threads <= machine.sm_max_threads;
            let _ = writeln!(
                s,
                "  occupancy      {} (an SPU SM runs one block at a time)",
                if fits {
                    "1 block per SM"
                } else {
                    "0 blocks fit on an SM, so the launch is refused"
                }
            );
            let _ = writeln!(
                s,
                "    {:<14} a block holds {} of the SM's {} (`sm.max_threads`)",
                "threads", self.threads, machine.sm_max_threads
            );
            let _ = writeln!(
                s,
                "    {:<14} a block holds {regs} of the SM's {} (`sm.registers`)",
                "registers", machine.sm_registers
            );
            let _ = writeln!(
                s,
                "    {:<14} a block holds {} of the SM's {shared} bytes (`sm.shared_kib`)",
                "shared memory", self.shared_bytes
            );
            return s;
        }
        let o = occupancy::occupancy(machine, demand);
        if occupancy::allowances(machine, demand)
            .iter()
            .any(|(_, n)| *n == 0)
        {
            let _ = writeln!(
                s,
                "  occupancy      0 blocks fit on an SM, so the launch is refused: {} allows none (`{}`)",
                o.limit.resource(),
                o.limit.key()
            );
            return s;
        }
        let resident = o.blocks * warps;
        let _ = writeln!(
            s,
            "  occupancy      {} per SM, {} of {} warps ({:.0}%), limited by {}; each limit alone allows:",
            plural(o.blocks, "block"),
            resident,
            machine.sm_max_warps,
            f64::from(resident) * 100.0 / f64::from(machine.sm_max_warps.max(1)),
            o.limit.resource()
        );
        let allow = occupancy::allowances(machine, demand);
        let holds = occupancy::holdings(demand);
        for ((limit, blocks), (_, held)) in allow.into_iter().zip(holds) {
            let (has, unit) = capacity(machine, limit);
            let _ = writeln!(
                s,
                "    {:<14} {:>6}   a block holds {held} of the SM's {has}{unit} (`{}`)",
                limit.resource(),
                if blocks == u32::MAX {
                    "any".to_string()
                } else {
                    format!("{blocks}")
                },
                limit.key()
            );
        }
        s
    }
}

/// What one SM has of a limit's resource, and the unit it is counted in.
fn capacity(m: &Machine, limit: Limit) -> (u32, &'static str) {
    match limit {
        Limit::Blocks => (m.sm_max_blocks, ""),
        Limit::Threads => (m.sm_max_resident_threads, ""),
        Limit::Warps => (m.sm_max_warps, ""),
        Limit::Registers => (m.sm_registers, ""),
        Limit::SharedMemory => (m.sm_shared_kib * 1024, " bytes"),
    }
}

/// Refuses two `-D NAME=VALUE` that set the same parameter (the later one would
/// silently win), naming both.
pub fn check_repeated_defines(defines: &[String]) -> Result<(), String> {
    let name = |d: &str| d.split_once('=').map(|(n, _)| n.trim().to_string());
    for (i, d) in defines.iter().enumerate() {
        let Some(n) = name(d) else { continue };
        if let Some(first) = defines[..i].iter().find(|e| name(e).as_ref() == Some(&n)) {
            return Err(format!(
                "`-D {}` and `-D {}` both set parameter `{}`; give each parameter once",
                crate::param::shorten(first),
                crate::param::shorten(d),
                crate::param::shorten(&n)
            ));
        }
    }
    Ok(())
}

/// Each parameter's value: its default, or the value `defines` gives it; `None`
/// for a parameter with neither.
fn param_values(module: &Module, defines: &[String]) -> Result<Vec<Option<u64>>, String> {
    check_repeated_defines(defines)?;
    let mut values: Vec<Option<u64>> = module.params.iter().map(|p| p.default).collect();
    for d in defines {
        let (name, text) = d
            .split_once('=')
            .map(|(n, v)| (n.trim(), v.trim()))
            .filter(|(n, v)| !n.is_empty() && !v.is_empty())
            .ok_or_else(|| {
                format!(
                    "`-D {}` needs the form NAME=VALUE, e.g. `-D N=256`",
                    crate::param::shorten(d)
                )
            })?;
        let i = module
            .params
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| {
                let list = module
                    .params
                    .iter()
                    .map(|p| format!("`{}`", p.name))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "`-D {}`: the kernel has no parameter `{}`; {}",
                    crate::param::shorten(d),
                    crate::param::shorten(name),
                    if list.is_empty() {
                        "it declares no parameters".to_string()
                    } else {
                        format!("parameters are {list}")
                    }
                )
            })?;
        let ty = module.params[i].ty;
        values[i] = Some(spu_isa::format::parse_param_value(text, ty).map_err(|why| {
            format!(
                "`-D {name}={}`: the value {why}",
                crate::param::shorten(text)
            )
        })?);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(name: &str, ty: spu_isa::Ty, align: u32, dims: &[i64]) -> SharedDecl {
        SharedDecl {
            name: name.into(),
            ty,
            align,
            dims: dims.iter().map(|d| Expr::constant(*d)).collect(),
        }
    }

    #[test]
    fn shared_arrays_are_aligned_and_the_total_rounded_to_words() {
        use spu_isa::Ty;
        let decls = [
            decl("a", Ty::U8, 0, &[3]),
            decl("b", Ty::F64, 0, &[2]),
            decl("c", Ty::U8, 16, &[1]),
            decl("d", Ty::U8, 0, &[1]),
        ];
        let (offsets, total) = shared_layout(&decls, |_, e| e.as_const().ok_or(())).unwrap();
        // a: 0..3; b at 8 (its element size); c at 32 (align 16); d at 36 (4 bytes).
        assert_eq!(offsets, [0, 8, 32, 36]);
        assert_eq!(total, 40);
    }
}
