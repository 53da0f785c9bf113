//! One warp: 32 threads' registers as structure-of-arrays, predicates as lane
//! masks, and the SIMT reconvergence stack. (What time it is for a warp, its
//! scoreboard, belongs to the timing model.)
//!
//! Divergence follows the immediate post-dominator scheme: a divergent `bra`
//! parks the current entry at its reconvergence point (computed by the assembler and
//! stored in the instruction) and pushes one entry per path; an entry whose PC
//! reaches its reconvergence point is popped, merging the paths.
//!
//! Calls nest on the same stack: a `call` parks the running entry after the call
//! (with every lane it had) and pushes the callee's entry one call deeper; `ret`
//! removes its lanes from the entries of that depth, so they wait in the parked
//! entry until the others return too. When the last entry of a call is popped, the
//! caller's registers and predicates, saved at the call, come back (PTX gives every
//! activation its own registers), and the local frame base goes back to the
//! caller's. Each thread's local memory (`.local` data, call parameters) is kept
//! here too, grown as it is used up to [`LOCAL_LIMIT_BYTES`].

use crate::exec::lanes::Lanes;
use crate::machine::UnitLabel;
use spu_isa::{Side, Special};

/// "No reconvergence point".
const NO_RECONV: u32 = u32::MAX;

/// Most calls a thread may have in progress at once (recursion included).
pub const MAX_CALL_DEPTH: usize = 64;

/// Most bytes of local memory (local data and call frames together) a thread may use.
pub const LOCAL_LIMIT_BYTES: u32 = 64 * 1024;

/// One SIMT stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Frame {
    pc: u32,
    reconv: u32,
    mask: u32,
    /// Calls in progress for the entry's lanes (0 in the kernel itself).
    depth: u32,
}

/// A call in progress: what comes back when it returns.
#[derive(Debug, Clone)]
struct CallRecord {
    /// The caller's registers (the warp's own slots) and predicates.
    regs: Vec<Lanes>,
    preds: [u32; 16],
    /// The caller's local frame base.
    base: u32,
    /// The callee's first instruction (for messages).
    target: u32,
}

/// Why a call could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallError {
    /// [`MAX_CALL_DEPTH`] calls are already in progress.
    TooDeep,
    /// The callee's frame would start at `base`, and with the `saved` bytes of
    /// registers the calls in progress keep, pass the thread's local memory.
    FrameTooLarge { base: u32, saved: u32 },
}

/// Why a warp is not issuing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WarpState {
    #[default]
    Running,
    /// Waiting at `bar.sync` (instruction index).
    AtBarrier(u32),
    /// Waiting at a blocksync (instruction index).
    AtBlockSync(u32),
    /// Waiting for its atomics, which functional mode completes at the end of a
    /// window of cycles.
    AtMemory,
    Done,
}

/// What a unit runs: the values its special registers read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkCtx {
    pub ctaid: [u32; 2],
    pub nctaid: [u32; 2],
    /// The launch's y extent: a 3-D grid (x, y, z) runs as the 2-D grid (x, y*z), and
    /// its row `r` reads `%ctaid.y = r % grid_y`, `%ctaid.z = r / grid_y`.
    pub grid_y: u32,
    /// Block dimensions (IUs: threads, 1, 1).
    pub ntid: [u32; 3],
    /// Interface Units: side and index along it in the launched grid.
    pub iu: Option<(Side, u32)>,
    pub entry: u32,
    pub shared_bytes: u32,
    /// The machine's SM grid: columns, rows (`%smid`, `%nsmid`).
    pub sm_grid: [u32; 2],
}

/// The value of a special register in every lane of warp `warp` (`%clock` reads 0
/// here; its slot is filled at issue).
pub fn special(sp: Special, ctx: &WorkCtx, label: UnitLabel, warp: u32) -> Lanes {
    let thread = |l: usize| warp * 32 + l as u32;
    let [nx, ny, _] = ctx.ntid;
    let (smx, smy) = match label {
        UnitLabel::Sm { x, y } => (x, y),
        _ => (u32::MAX, u32::MAX),
    };
    let uniform = |v: u32| [v; 32];
    match sp {
        Special::TidX => std::array::from_fn(|l| thread(l) % nx),
        Special::TidY => std::array::from_fn(|l| thread(l) / nx % ny),
        Special::TidZ => std::array::from_fn(|l| thread(l) / (nx * ny)),
        Special::NtidX => uniform(ctx.ntid[0]),
        Special::NtidY => uniform(ctx.ntid[1]),
        Special::NtidZ => uniform(ctx.ntid[2]),
        Special::CtaidX => uniform(ctx.ctaid[0]),
        Special::CtaidY => uniform(ctx.ctaid[1] % ctx.grid_y),
        Special::CtaidZ => uniform(ctx.ctaid[1] / ctx.grid_y),
        Special::NctaidX => uniform(ctx.nctaid[0]),
        Special::NctaidY => uniform(ctx.grid_y),
        Special::NctaidZ => uniform(ctx.nctaid[1] / ctx.grid_y),
        Special::LaneId => std::array::from_fn(|l| l as u32),
        Special::WarpId => uniform(warp),
        Special::SmidX => uniform(smx),
        Special::SmidY => uniform(smy),
        Special::IsIu => uniform(u32::from(ctx.iu.is_some())),
        Special::IuDir => uniform(ctx.iu.map_or(u32::MAX, |(s, _)| u32::from(s.code()))),
        Special::IuId => uniform(ctx.iu.map_or(u32::MAX, |(_, i)| i)),
        Special::Clock => uniform(0),
        Special::NWarpId => uniform((ctx.ntid[0] * ctx.ntid[1] * ctx.ntid[2]).div_ceil(32)),
        Special::Smid => uniform(if smx == u32::MAX {
            u32::MAX
        } else {
            smy * ctx.sm_grid[0] + smx
        }),
        Special::NSmid => uniform(ctx.sm_grid[0] * ctx.sm_grid[1]),
        Special::LanemaskEq => std::array::from_fn(|l| 1 << l),
        Special::LanemaskLe => std::array::from_fn(|l| ((2u64 << l) - 1) as u32),
        Special::LanemaskLt => std::array::from_fn(|l| (1u32 << l) - 1),
        Special::LanemaskGe => std::array::from_fn(|l| !((1u32 << l) - 1)),
        Special::LanemaskGt => std::array::from_fn(|l| !(((2u64 << l) - 1) as u32)),
    }
}

/// A warp.
#[derive(Debug, Clone)]
pub struct Warp {
    /// Index of the warp within its block.
    pub index: u32,
    /// Lanes holding a thread (the last warp of a block may be partial).
    pub valid: u32,
    /// The warp's own register slots: general registers, then special registers
    /// ([`RegLayout`]). Read operands through [`Warp::reg`], which also sees the
    /// constants.
    pub regs: Vec<Lanes>,
    /// The kernel's constant slots (after the warp's own), shared by every warp.
    constants: std::sync::Arc<[Lanes]>,
    /// Predicate registers as lane masks.
    pub preds: [u32; 16],
    /// The top of the SIMT stack (what runs), valid while `live`; the entries
    /// below it wait in `below`.
    top: Frame,
    live: bool,
    below: Vec<Frame>,
    pub state: WarpState,
    /// Barriers (`bar.sync`, blocksyncs) the warp has arrived at: two warps'
    /// accesses with the same count have no barrier between them
    /// ([`crate::exec::race`]).
    pub syncs: u32,
    /// Calls in progress, innermost last.
    calls: Vec<CallRecord>,
    /// The running call's local frame base, in bytes.
    base: u32,
    /// Local memory: word `i` of every lane (empty until used).
    pub local: Vec<Lanes>,
    /// Where the block's `printf` output goes among the grid's: blocks in launch
    /// order (row-major), then Interface Units.
    pub print_order: u64,
    /// Branches executed: a warp that came back to a state it was in has
    /// branched meanwhile; one that merely waited has not.
    pub branches: u64,
    /// Shared-memory words its atomics changed (a failed compare-and-swap
    /// changes none): the repeat proof's sign that the warp acted.
    pub shared_changes: u64,
}

impl Warp {
    /// A fresh warp starting at `pc` with `threads` threads (1..=32), its constant
    /// and special-register slots filled.
    pub fn new(
        index: u32,
        threads: u32,
        layout: &RegLayout,
        ctx: &WorkCtx,
        label: UnitLabel,
    ) -> Warp {
        let valid = if threads >= 32 {
            u32::MAX
        } else {
            (1u32 << threads) - 1
        };
        let mut regs = vec![[0; 32]; layout.first_constant()];
        for (slot, &sp) in regs[layout.first_special()..]
            .iter_mut()
            .zip(&layout.specials)
        {
            *slot = special(sp, ctx, label, index);
        }
        Warp {
            index,
            valid,
            regs,
            constants: layout.constant_slots().clone(),
            preds: [0; 16],
            top: Frame {
                pc: ctx.entry,
                reconv: NO_RECONV,
                mask: valid,
                depth: 0,
            },
            live: true,
            below: Vec::new(),
            state: WarpState::Running,
            syncs: 0,
            calls: Vec::new(),
            base: 0,
            local: Vec::new(),
            print_order: match ctx.iu {
                None => (u64::from(ctx.ctaid[1]) << 32) | u64::from(ctx.ctaid[0]),
                Some((side, i)) => (1 << 63) | (u64::from(side.code()) << 32) | u64::from(i),
            },
            branches: 0,
            shared_changes: 0,
        }
    }

    /// Ends the warp as if it had exited (an empty block slot).
    pub fn retire(&mut self) {
        self.below.clear();
        self.calls.clear();
        self.live = false;
        self.state = WarpState::Done;
    }

    /// The value of register slot `slot` in every lane: one of the warp's own
    /// slots, or a shared constant.
    #[inline(always)]
    pub fn reg(&self, slot: usize) -> &Lanes {
        match self.regs.get(slot) {
            Some(r) => r,
            None => &self.constants[slot - self.regs.len()],
        }
    }

    /// PC of the next instruction, if the warp has threads left.
    #[inline(always)]
    pub fn pc(&self) -> Option<u32> {
        self.live.then_some(self.top.pc)
    }

    /// Lanes executing the next instruction.
    #[inline(always)]
    pub fn active(&self) -> u32 {
        if self.live { self.top.mask } else { 0 }
    }

    /// Sets the PC of the running entry (the warp ran a basic block up to `pc`
    /// without moving it).
    #[inline]
    pub fn set_pc(&mut self, pc: u32) {
        if self.live {
            self.top.pc = pc;
        }
    }

    /// Moves past a non-branch instruction.
    #[inline(always)]
    pub fn advance(&mut self) {
        if self.live {
            self.top.pc += 1;
            if self.top.pc != self.top.reconv && self.top.mask != 0 {
                return;
            }
        }
        self.reconverge();
    }

    /// Pops the top entry; the next one below (if any) runs.
    fn pop(&mut self) {
        match self.below.pop() {
            Some(f) => self.top = f,
            None => self.live = false,
        }
    }

    /// Pushes `frame` on the stack (it runs next).
    fn push(&mut self, frame: Frame) {
        if self.live {
            self.below.push(self.top);
        }
        self.top = frame;
        self.live = true;
    }

    /// Executes a branch: `taken` lanes go to `target`, the other active lanes fall
    /// through; divergent paths meet again at `reconv`.
    /// ([`NO_PC`](crate::exec::ops::NO_PC) when the paths only end at exits).
    pub fn branch(&mut self, taken: u32, target: u32, reconv: u32) {
        if !self.live {
            return;
        }
        self.branches += 1;
        let top = &mut self.top;
        let not_taken = top.mask & !taken;
        let fall = top.pc + 1;
        if not_taken == 0 {
            top.pc = target;
        } else if taken == 0 {
            top.pc = fall;
        } else {
            let outer_reconv = top.reconv;
            let depth = top.depth;
            let reconv = if reconv != NO_RECONV {
                top.pc = reconv;
                reconv
            } else {
                // No common post-dominator: the paths only end at exits.
                self.pop();
                outer_reconv
            };
            self.push(Frame {
                pc: fall,
                reconv,
                mask: not_taken,
                depth,
            });
            self.push(Frame {
                pc: target,
                reconv,
                mask: taken,
                depth,
            });
        }
        self.reconverge();
    }

    /// Ends the threads in `lanes`; the rest continue after the instruction.
    pub fn exit(&mut self, lanes: u32) {
        self.top.mask &= !lanes;
        for frame in &mut self.below {
            frame.mask &= !lanes;
        }
        self.advance();
    }

    /// Pops entries that reached their reconvergence point or have no threads left;
    /// calls whose entries are all gone have returned.
    fn reconverge(&mut self) {
        while self.live && (self.top.mask == 0 || self.top.pc == self.top.reconv) {
            self.pop();
        }
        if !self.live {
            self.state = WarpState::Done;
            return;
        }
        while self.calls.len() > self.top.depth as usize {
            self.returned();
        }
    }

    /// Calls in progress for the running lanes.
    #[inline]
    pub fn depth(&self) -> usize {
        if self.live {
            self.top.depth as usize
        } else {
            0
        }
    }

    /// The running call's local frame base, in bytes.
    #[inline(always)]
    pub fn frame_base(&self) -> u32 {
        self.base
    }

    /// The first instruction of each call in progress, outermost first.
    pub fn call_targets(&self) -> impl Iterator<Item = u32> + '_ {
        self.calls.iter().map(|c| c.target)
    }

    /// Executes a `call` at the running PC: the lanes of `taken` run the function at
    /// `target` with a local frame `frame_bytes` past the caller's; every lane of the
    /// entry continues after the call once they have all returned.
    ///
    /// A call keeps the caller's registers until it returns: they count, per
    /// thread, against its local memory of `limit` bytes (at most
    /// [`LOCAL_LIMIT_BYTES`]), as a GPU keeps them in its call stack there.
    pub fn call(
        &mut self,
        taken: u32,
        target: u32,
        frame_bytes: u32,
        limit: u32,
    ) -> Result<(), CallError> {
        if !self.live {
            return Ok(());
        }
        if taken == 0 {
            self.advance();
            return Ok(());
        }
        if self.calls.len() >= MAX_CALL_DEPTH {
            return Err(CallError::TooDeep);
        }
        let base = self.base.saturating_add(frame_bytes);
        let saved = u32::try_from((self.calls.len() + 1) * self.regs.len() * 4).unwrap_or(u32::MAX);
        if base >= LOCAL_LIMIT_BYTES || base.saturating_add(saved) > limit.min(LOCAL_LIMIT_BYTES) {
            return Err(CallError::FrameTooLarge { base, saved });
        }
        // The warp's own slots (general and special registers); constants never change.
        self.calls.push(CallRecord {
            regs: self.regs.clone(),
            preds: self.preds,
            base: self.base,
            target,
        });
        self.base = base;
        let depth = self.top.depth + 1;
        self.top.pc += 1;
        self.push(Frame {
            pc: target,
            reconv: NO_RECONV,
            mask: taken,
            depth,
        });
        Ok(())
    }

    /// Executes `ret` for the lanes of `lanes`: inside a call they leave its entries
    /// (and wait after the call for the others); outside any call they end.
    pub fn ret(&mut self, lanes: u32) {
        let depth = self.depth();
        if depth == 0 {
            self.exit(lanes);
            return;
        }
        self.top.mask &= !lanes;
        for frame in self.below.iter_mut().rev() {
            if (frame.depth as usize) < depth {
                break;
            }
            frame.mask &= !lanes;
        }
        self.advance();
    }

    /// The innermost call has returned: the caller's registers, predicates and
    /// frame come back.
    fn returned(&mut self) {
        let Some(call) = self.calls.pop() else {
            return;
        };
        let general = call.regs.len();
        self.regs[..general].copy_from_slice(&call.regs);
        self.preds = call.preds;
        self.base = call.base;
    }

    /// True when every thread has exited.
    pub fn is_done(&self) -> bool {
        matches!(self.state, WarpState::Done)
    }

    /// Copies into `s` what decides the warp's next instructions besides memory
    /// (as [`Warp::fingerprint`] digests it), reusing `s`'s allocation.
    pub fn save(&self, s: &mut Snapshot) {
        s.regs.clone_from(&self.regs);
        s.below.clone_from(&self.below);
        (s.preds, s.top, s.live, s.valid, s.state) =
            (self.preds, self.top, self.live, self.valid, self.state);
    }

    /// True when the warp is in the state `s` saved: exactly, not by digest.
    /// Register `hint` is compared first, and becomes the first register that
    /// differs: a loop that counts differs in its counter turn after turn.
    pub fn is_in(&self, s: &Snapshot, hint: &mut usize) -> bool {
        if (self.preds, self.top, self.live, self.valid, self.state)
            != (s.preds, s.top, s.live, s.valid, s.state)
            || self.regs.len() != s.regs.len()
            || self.regs.get(*hint) != s.regs.get(*hint)
        {
            return false;
        }
        if let Some(r) = self.regs.iter().zip(&s.regs).position(|(a, b)| a != b) {
            *hint = r;
            return false;
        }
        self.below == s.below
    }

    /// A 128-bit digest of what decides the warp's next instructions besides
    /// memory: its SIMT stack (PCs, masks, reconvergence points), state,
    /// predicates and own registers. Two equal digests of one warp mean the
    /// same state (two independent 64-bit mixes; a chance collision is
    /// negligible). Local memory and the calls in progress are left out: only
    /// stores and calls change them.
    ///
    /// The register slots `counting` names are left out too when nothing waits
    /// below the top of the SIMT stack: the registers its loop only counts with
    /// ([`crate::exec::loops`]). Between two such moments at the same place the
    /// warp ran only instructions of that loop (every path it took, a
    /// divergent one's other side included, leads back to the place), so those
    /// registers did not steer it.
    pub fn fingerprint(&self, counting: impl Fn(usize) -> bool) -> u128 {
        let whole = !self.below.is_empty();
        let mut d = Digest::default();
        let state = match self.state {
            WarpState::Running => 0,
            WarpState::AtBarrier(pc) => (1 << 32) | u64::from(pc),
            WarpState::AtBlockSync(pc) => (2 << 32) | u64::from(pc),
            WarpState::AtMemory => 3 << 32,
            WarpState::Done => 4 << 32,
        };
        d.add(state);
        d.add(u64::from(self.valid) | (u64::from(self.live) << 32));
        for f in self.below.iter().chain(std::iter::once(&self.top)) {
            d.add(u64::from(f.pc) | (u64::from(f.reconv) << 32));
            d.add(u64::from(f.mask) | (u64::from(f.depth) << 32));
        }
        for pair in self.preds.chunks(2) {
            d.add(u64::from(pair[0]) | (u64::from(pair[1]) << 32));
        }
        for (slot, lanes) in self.regs.iter().enumerate() {
            if !whole && counting(slot) {
                continue;
            }
            for pair in lanes.chunks(2) {
                d.add(u64::from(pair[0]) | (u64::from(pair[1]) << 32));
            }
        }
        d.finish()
    }
}

/// A warp's state as [`Warp::save`] keeps it, to tell when the warp is back in it.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    regs: Vec<Lanes>,
    preds: [u32; 16],
    top: Frame,
    live: bool,
    valid: u32,
    below: Vec<Frame>,
    state: WarpState,
}

/// Two independent 64-bit mixes of a stream of words (multiply-rotate steps
/// with different odd constants), for [`Warp::fingerprint`].
#[derive(Default)]
struct Digest {
    a: u64,
    b: u64,
    n: u64,
}

impl Digest {
    #[inline(always)]
    fn add(&mut self, w: u64) {
        self.n += 1;
        self.a = (self.a ^ w)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
        self.b = (self.b.rotate_left(17) ^ w ^ self.n).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    }

    fn finish(self) -> u128 {
        let mix = |mut x: u64| {
            x ^= x >> 33;
            x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
            x ^ (x >> 33)
        };
        (u128::from(mix(self.a ^ self.n)) << 64) | u128::from(mix(self.b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warp(threads: u32) -> Warp {
        let layout = RegLayout::new(1, Vec::new(), Vec::new());
        Warp::new(
            0,
            threads,
            &layout,
            &ctx(threads),
            UnitLabel::Sm { x: 0, y: 0 },
        )
    }

    #[test]
    fn constants_are_shared_by_every_warp_not_copied() {
        let layout = RegLayout::new(2, vec![Special::TidX], vec![0, 7, 9]);
        let new = |i| Warp::new(i, 32, &layout, &ctx(64), UnitLabel::Sm { x: 0, y: 0 });
        let (a, b) = (new(0), new(1));
        // A warp owns its general and special registers only.
        assert_eq!(a.regs.len(), 3);
        assert_eq!(a.reg(layout.first_constant() + 1), &[7; 32]);
        assert_eq!(b.reg(layout.first_constant() + 2), &[9; 32]);
        assert_eq!(b.reg(layout.first_special())[1], 33);
        assert!(std::sync::Arc::ptr_eq(&a.constants, &b.constants));
    }

    fn ctx(threads: u32) -> WorkCtx {
        WorkCtx {
            ctaid: [0; 2],
            nctaid: [1; 2],
            grid_y: 1,
            ntid: [threads, 1, 1],
            iu: None,
            entry: 0,
            shared_bytes: 0,
            sm_grid: [1; 2],
        }
    }

    #[test]
    fn divergent_paths_reconverge_at_the_post_dominator() {
        // 0: @p bra 3 (reconv 4); 1..2: else path; 3: then path; 4: join
        let mut w = warp(32);
        w.branch(0x0000_ffff, 3, 4);
        assert_eq!((w.pc(), w.active()), (Some(3), 0x0000_ffff));
        w.advance(); // 3 -> 4 reaches reconv: pop to the else path
        assert_eq!((w.pc(), w.active()), (Some(1), 0xffff_0000));
        w.advance();
        w.advance(); // 1 -> 2 -> 3
        assert_eq!(w.pc(), Some(3));
        w.advance(); // 3 -> 4: both paths merged
        assert_eq!((w.pc(), w.active()), (Some(4), u32::MAX));
    }

    #[test]
    fn uniform_branches_do_not_push() {
        let mut w = warp(32);
        w.branch(u32::MAX, 7, 9);
        assert_eq!((w.pc(), w.active()), (Some(7), u32::MAX));
        w.branch(0, 2, 9);
        assert_eq!(w.pc(), Some(8));
    }

    #[test]
    fn exits_remove_threads_from_every_entry() {
        let mut w = warp(8);
        assert_eq!(w.active(), 0xff);
        w.branch(0x0f, 5, 9);
        w.exit(0x0f); // the taken path ends
        assert_eq!((w.pc(), w.active()), (Some(1), 0xf0));
        w.exit(0xf0);
        assert!(w.is_done());
    }

    #[test]
    fn a_divergent_call_returns_with_the_call_sites_mask_and_registers() {
        // 0: @p call 10; 1: after. 10: @q ret; 11: ret
        let mut w = warp(32);
        w.regs[0] = [7; 32];
        w.call(0x0000_00ff, 10, 16, LOCAL_LIMIT_BYTES).unwrap();
        assert_eq!((w.pc(), w.active(), w.depth()), (Some(10), 0xff, 1));
        assert_eq!(w.frame_base(), 16);
        w.regs[0] = [9; 32]; // the callee's own use of the register
        w.ret(0x0f); // early returns wait for the others
        assert_eq!((w.pc(), w.active()), (Some(11), 0xf0));
        w.ret(0xf0);
        assert_eq!((w.pc(), w.active(), w.depth()), (Some(1), u32::MAX, 0));
        assert_eq!((w.regs[0], w.frame_base()), ([7; 32], 0));
    }

    #[test]
    fn ret_outside_a_call_ends_the_threads_and_calls_nest_to_a_bound() {
        let mut w = warp(32);
        for depth in 0..MAX_CALL_DEPTH {
            assert_eq!(w.depth(), depth);
            w.call(u32::MAX, 5, 0, LOCAL_LIMIT_BYTES).unwrap();
        }
        assert_eq!(
            w.call(u32::MAX, 5, 0, LOCAL_LIMIT_BYTES),
            Err(CallError::TooDeep)
        );
        let mut w = warp(32);
        w.ret(0xffff_0000);
        assert_eq!(w.active(), 0xffff);
        assert!(matches!(
            w.call(1, 5, LOCAL_LIMIT_BYTES, LOCAL_LIMIT_BYTES),
            Err(CallError::FrameTooLarge {
                base: LOCAL_LIMIT_BYTES,
                ..
            })
        ));
        // The registers calls keep count against the thread's local memory.
        let mut w = warp(32);
        let per_call = w.regs.len() as u32 * 4;
        w.call(1, 5, 0, 2 * per_call).unwrap();
        w.call(1, 5, 0, 2 * per_call).unwrap();
        assert_eq!(
            w.call(1, 5, 0, 2 * per_call),
            Err(CallError::FrameTooLarge {
                base: 0,
                saved: 3 * per_call
            })
        );
    }

    #[test]
    fn branches_without_a_post_dominator_run_both_paths_to_their_exits() {
        let mut w = warp(32);
        w.branch(0x1, 10, NO_RECONV);
        assert_eq!((w.pc(), w.active()), (Some(10), 0x1));
        w.exit(0x1);
        assert_eq!((w.pc(), w.active()), (Some(1), !0x1));
    }
}

/// How a warp's register file is laid out: general registers first, then one slot
/// per special register the code reads (both per warp), then one per distinct
/// constant (read-only, shared by every warp: [`RegLayout::constant_slots`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegLayout {
    pub general: u16,
    pub constants: Vec<u32>,
    pub specials: Vec<Special>,
    /// The constant slots' values in every lane, built once per kernel.
    shared: std::sync::Arc<[Lanes]>,
}

impl RegLayout {
    /// A layout of `general` registers, the given special registers and constants.
    pub fn new(general: u16, specials: Vec<Special>, constants: Vec<u32>) -> RegLayout {
        RegLayout {
            general,
            shared: constants.iter().map(|&c| [c; 32]).collect(),
            constants,
            specials,
        }
    }

    /// Slots per warp.
    pub fn slots(&self) -> usize {
        usize::from(self.general) + self.constants.len() + self.specials.len()
    }

    /// First special-register slot.
    pub fn first_special(&self) -> usize {
        usize::from(self.general)
    }

    /// First constant slot: the slots a warp owns end here.
    pub fn first_constant(&self) -> usize {
        usize::from(self.general) + self.specials.len()
    }

    /// The constant slots, shared by every warp (a block start copies nothing
    /// however many distinct immediates the code has).
    pub fn constant_slots(&self) -> &std::sync::Arc<[Lanes]> {
        &self.shared
    }
}
