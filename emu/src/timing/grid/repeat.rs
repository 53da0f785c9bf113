//! The repeat proof: a run caught in a loop it can never leave, found exactly
//! instead of by a clock. It complements the spin check ([`super::spin`]), whose
//! clocks must allow a long computation its time and so take a while to stop
//! many warps spinning.
//!
//! Once the run has gone a little while without progress, the proof samples
//! every warp at the ends of windows: its PC and a digest of its state
//! ([`crate::exec::warp::Warp::fingerprint`]), without the registers its loop
//! only counts with ([`crate::exec::loops`]: `while (*flag == 0) tries++;`
//! goes round forever all the same). A warp is caught when a sample equals one taken
//! earlier in the same epoch and the warp has branched since (a warp that only
//! waited, for a long latency or a barrier's release, never left), an epoch being a stretch in which global memory
//! did not change, no work item finished, no blocksync was released and no unit
//! executed an instruction that reaches beyond its warp (a store, a call,
//! `printf`, a barrier: [`Run::acts_beyond_warp`]; an atomic only when it changes
//! a word, so a compare-and-swap lock that never opens is caught too). Such a
//! warp reads only
//! memory nobody changes, so from the later sample on it repeats what it did
//! since the earlier one, forever. When every warp of the grid is caught or has
//! exited (a warp waiting at a barrier or blocksync counts as caught when its
//! wait, too, was sampled twice: only a warp that arrives could release it), and
//! no engine moves data, nothing can ever change: the run stops at once.
//!
//! A barrier (`bar.sync`) reaches only the warps of its own block, so it does
//! not end an epoch; but while warps wait for each other, a warp's own state no
//! longer decides its future. In kernels with barriers the proof therefore also
//! compares each unit's warps together, and once a barrier has been passed in an
//! epoch only that comparison decides: a unit is caught when all its warps,
//! sampled at one moment, are each in the state they were in at one earlier
//! sampling of the epoch (`L: bar.sync 0; bra L;` in every block, which the
//! clocks took over a minute to stop on a 4 x 4 grid).
//!
//! A kernel that reads `%clock` is left to the clocks (its loops may wait for
//! time to pass); so is any run with an engine at work or an access still to
//! take effect.

use crate::exec::ops::{Program, Run};
use crate::exec::warp::WarpState;
use crate::machine::UnitLabel;
use crate::timing::unit::{Unit, Work};

const NEVER: u64 = u64::MAX;

/// Samples kept per warp: a loop whose instructions the window ends fall on
/// in a cycle of up to this many positions is caught.
const KEPT: usize = 16;

/// The progress clock (warp instructions of one unit, or cycles) from which
/// warps are sampled: beyond the stretches without progress of kernels that
/// work (the stencil at N = K = 128 passed 2^14, and sampling it for nothing
/// cost 0.9% of its host instructions).
const FROM: u64 = 1 << 16;

/// Warp instructions the grid must issue between two samplings per register
/// slot of the warps sampled: digests cost a few host instructions per word,
/// warp instructions hundreds, so sampling adds about 1% at most (1.2% more
/// host instructions measured on 512 warps of 24 registers computing for 2 000
/// iterations without a store, in timing mode; 2.9% at 4 per slot).
const ISSUED_PER_SLOT: u64 = 16;

/// Cycles (in functional mode scheduling rounds) after which warps are sampled
/// again however few instructions issued: warps that wait long on memory (720
/// of them on one flag on a GPU) issue little, yet must be sampled to be seen
/// going round.
const CYCLES_BETWEEN: u64 = 1 << 15;

/// One sample of a warp: its PC (none once it has exited), digest, and the
/// branches it had executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sample {
    pc: Option<u32>,
    digest: u128,
    branches: u64,
}

impl Sample {
    /// Warp `warp` now: its PC, the digest of its state without the registers
    /// its loop only counts with, and its branches.
    fn of(warp: &crate::exec::warp::Warp, program: &Program) -> Sample {
        let pc = warp.pc();
        let counting = pc.and_then(|pc| {
            let block = program.block_of.get(pc as usize)?;
            program.counting.of(*block as usize)
        });
        Sample {
            pc,
            digest: warp.fingerprint(|slot| counting.is_some_and(|c| c.contains(slot))),
            branches: warp.branches,
        }
    }

    /// True when the warp came back to the state of `earlier`: the same state,
    /// reached again after at least one branch (a warp that only waited, for a
    /// long latency or a release, did not come back; it never left). A warp
    /// waiting at a barrier or blocksync (`waits`) repeats by staying.
    fn repeats(&self, earlier: &Sample, waits: bool) -> bool {
        self.pc == earlier.pc
            && self.digest == earlier.digest
            && (waits || self.branches > earlier.branches)
    }
}

/// One warp at a sampling of the unit-wide comparison: `None` once it has
/// exited, else its sample and whether it waits at a barrier or blocksync.
type WarpAt = Option<(Sample, bool)>;

/// What the unit-wide comparison knows of one unit in the current epoch.
#[derive(Debug, Default)]
struct Together {
    /// Its warps at each sampling, oldest first.
    seen: Vec<Vec<WarpAt>>,
    /// Caught: every warp came back to where it was at one earlier sampling,
    /// so the unit repeats for as long as the epoch lasts.
    caught: bool,
}

/// What the proof knows of one warp in the current epoch.
#[derive(Debug, Default)]
struct Watched {
    /// Samples, oldest first.
    seen: Vec<Sample>,
    /// Caught running round a loop, at this PC: it repeats for as long as the
    /// epoch lasts, so it need not be caught again, even when a later sampling
    /// finds its loads still on their way (with many warps reading memory, one
    /// of them nearly always waits for a load). A warp caught waiting at a
    /// barrier is looked at again each time: a release can end its wait
    /// without anything that changes the epoch.
    caught: Option<u32>,
}

/// A run caught repeating: the warps running (not waiting), and one of them,
/// where it was sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Caught {
    pub running: u64,
    pub waiting: u64,
    pub unit: UnitLabel,
    pub pc: u32,
    /// Caught by comparing units as a whole, after barriers were passed.
    pub together: bool,
}

/// The proof's state.
#[derive(Debug, Default)]
pub(super) struct RepeatCheck {
    /// Off for programs that read `%clock`.
    off: bool,
    /// Instructions that reach beyond their warp, barriers excepted.
    acting: Vec<usize>,
    /// Barriers (`bar.sync`), which reach only their block.
    barriers: Vec<usize>,
    /// Barriers passed in the grid when the epoch began; once more are, only
    /// the comparison of units as a whole decides.
    barriers_at_epoch: u64,
    /// Per unit: the unit-wide comparison of this epoch.
    together: Vec<Together>,
    /// The epoch's signature: the progress, the acting instructions executed,
    /// the work begun, and the shared words atomics changed (this one counted
    /// by the warps, so it starts again with a new block, which the work begun
    /// tells).
    epoch: Option<[u64; 4]>,
    /// Per unit, per warp: samples of this epoch, oldest first, and whether
    /// the warp has been caught in it.
    samples: Vec<Vec<Watched>>,
    /// Grid warp instructions and cycle at the last sampling.
    sampled_at: u64,
    sampled_cycle: u64,
}

/// The grid at the end of a window, as the proof needs it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Moment {
    /// The cycle (in functional mode, the scheduling round).
    pub now: u64,
    /// How far the run got without progress (the spin check's first clock).
    pub stalled: u64,
    /// The spin check's signature of progress: global memory's changes,
    /// finished work items and blocksyncs.
    pub progress: u64,
    /// Every access has taken effect.
    pub settled: bool,
}

impl RepeatCheck {
    pub fn new(program: &Program) -> RepeatCheck {
        RepeatCheck {
            off: program.block_checked.iter().any(|c| c.clock),
            acting: (0..program.len())
                .filter(|&pc| {
                    // Atomics count by what they change: global words in the
                    // progress, shared ones in the warps' own counts.
                    let run = &program.ops[pc].run;
                    run.acts_beyond_warp() && !matches!(run, Run::BarSync | Run::Atomic { .. })
                })
                .collect(),
            barriers: (0..program.len())
                .filter(|&pc| matches!(program.ops[pc].run, Run::BarSync))
                .collect(),
            ..RepeatCheck::default()
        }
    }

    /// Looks at the grid at moment `at`; returns the proof, if the run is
    /// caught.
    pub fn look(&mut self, units: &[Box<Unit>], program: &Program, at: Moment) -> Option<Caught> {
        let Moment {
            now,
            stalled,
            progress,
            settled,
        } = at;
        if self.off || stalled < FROM || !settled {
            self.epoch = None;
            return None;
        }
        let issued: u64 = units.iter().map(|u| u.counts.warp_instructions).sum();
        let slots: u64 = units
            .iter()
            .filter_map(|u| u.code())
            .map(|c| (c.warps.len() * c.warps.first().map_or(0, |w| w.regs.len())) as u64)
            .sum();
        if issued.saturating_sub(self.sampled_at) < slots.saturating_mul(ISSUED_PER_SLOT)
            && now.saturating_sub(self.sampled_cycle) < CYCLES_BETWEEN
        {
            return None;
        }
        self.sampled_at = issued;
        self.sampled_cycle = now;
        // The epoch's counts only grow while the same work runs, so it is the
        // same at two samplings only if none of them changed in between: it
        // need only be taken when sampling (taking it every window cost 5% of a stencil's
        // host instructions).
        let executed = |pcs: &[usize]| -> u64 {
            units
                .iter()
                .map(|u| {
                    pcs.iter()
                        .map(|&pc| u.counts.of(program, pc).0)
                        .sum::<u64>()
                })
                .sum()
        };
        let acted = executed(&self.acting);
        let barriers = executed(&self.barriers);
        // Work begun counts too: a block placed in a free slot is news.
        let begun: u64 = units.iter().map(|u| u.generation).sum();
        let shared: u64 = units
            .iter()
            .filter_map(|u| u.code())
            .flat_map(|c| &c.warps)
            .map(|w| w.shared_changes)
            .sum();
        let epoch = [progress, acted, begun, shared];
        if self.epoch != Some(epoch) {
            self.epoch = Some(epoch);
            self.barriers_at_epoch = barriers;
            self.samples.clear();
            self.together.clear();
        }
        // Units are compared as a whole from the epoch's start in kernels with
        // barriers, so the comparison has its history when a barrier is passed;
        // from then on it alone decides.
        let together = if self.barriers.is_empty() {
            None
        } else {
            self.sample_together(units, program)
        };
        if barriers == self.barriers_at_epoch {
            self.sample(units, program).or(together)
        } else {
            together
        }
    }

    /// Samples every warp; the proof, if every one is caught.
    fn sample(&mut self, units: &[Box<Unit>], program: &Program) -> Option<Caught> {
        self.samples.resize_with(units.len(), Vec::new);
        let mut all = true;
        let mut caught: Option<Caught> = None;
        for (unit, kept) in units.iter().zip(&mut self.samples) {
            let code = match &unit.work {
                Work::Idle => continue,
                // An engine with nothing to do until an event wakes it (a
                // release, a spilled tile) counts as a waiting warp; one that
                // moves data is progress to come.
                Work::Engine(_) => {
                    let now = Sample {
                        pc: None,
                        digest: u128::from(unit.wake == NEVER),
                        branches: 0,
                    };
                    kept.resize_with(1, Watched::default);
                    if unit.wake != NEVER || !kept[0].seen.iter().any(|e| now.repeats(e, true)) {
                        all = false;
                        kept[0].seen = vec![now];
                    }
                    continue;
                }
                Work::Code(code) => code,
            };
            if kept.len() != code.warps.len() {
                kept.clear();
                kept.resize_with(code.warps.len(), Watched::default);
            }
            for (wi, (warp, watched)) in code.warps.iter().zip(kept.iter_mut()).enumerate() {
                let waits = match warp.state {
                    WarpState::Done => continue,
                    WarpState::Running => false,
                    WarpState::AtBarrier(_) | WarpState::AtBlockSync(_) => true,
                    // Its atomics take effect at the end of the window.
                    WarpState::AtMemory => {
                        all = false;
                        continue;
                    }
                };
                let mut tally = |waits: bool, pc: u32| {
                    let c = caught.get_or_insert(Caught {
                        running: 0,
                        waiting: 0,
                        unit: unit.label,
                        pc,
                        together: false,
                    });
                    if waits {
                        c.waiting += 1;
                    } else {
                        c.running += 1;
                        if c.running == 1 {
                            c.unit = unit.label;
                            c.pc = pc;
                        }
                    }
                };
                if let Some(pc) = watched.caught {
                    tally(false, pc);
                    continue;
                }
                if !code.settled(wi) {
                    all = false;
                    continue;
                }
                let now = Sample::of(warp, program);
                let seen = &mut watched.seen;
                if seen.iter().any(|e| now.repeats(e, waits)) {
                    let pc = now.pc.unwrap_or(0);
                    if !waits {
                        watched.caught = Some(pc);
                        seen.clear();
                    }
                    tally(waits, pc);
                } else {
                    all = false;
                    if seen.len() == KEPT {
                        seen.remove(0);
                    }
                    seen.push(now);
                }
            }
        }
        // Warps that only wait would be a deadlock, which the grid reports
        // itself when nothing is left to wake.
        caught.filter(|c| all && c.running > 0)
    }

    /// Samples every unit's warps together; the proof, if every unit is
    /// caught (its warps all back where they were at one earlier sampling).
    fn sample_together(&mut self, units: &[Box<Unit>], program: &Program) -> Option<Caught> {
        self.together.resize_with(units.len(), Together::default);
        let mut all = true;
        let mut caught: Option<Caught> = None;
        'units: for (unit, kept) in units.iter().zip(&mut self.together) {
            let code = match &unit.work {
                Work::Idle => continue,
                // An engine waits on others or moves data: this comparison is
                // for barriers inside blocks, so it leaves such runs to the
                // clocks.
                Work::Engine(_) => {
                    all = false;
                    continue;
                }
                Work::Code(code) => code,
            };
            let mut now: Vec<WarpAt> = Vec::with_capacity(code.warps.len());
            for (wi, warp) in code.warps.iter().enumerate() {
                let waits = match warp.state {
                    WarpState::Done => {
                        now.push(None);
                        continue;
                    }
                    WarpState::Running => false,
                    WarpState::AtBarrier(_) | WarpState::AtBlockSync(_) => true,
                    // Its atomics take effect at the end of the window.
                    WarpState::AtMemory => {
                        all = false;
                        continue 'units;
                    }
                };
                if !code.settled(wi) {
                    all = false;
                    continue 'units;
                }
                now.push(Some((Sample::of(warp, program), waits)));
            }
            let back = |earlier: &Vec<WarpAt>| {
                earlier.len() == now.len()
                    && now.iter().zip(earlier).all(|(a, b)| match (a, b) {
                        (None, None) => true,
                        (Some((a, waits)), Some((b, was_waiting))) => {
                            waits == was_waiting && a.repeats(b, *waits)
                        }
                        _ => false,
                    })
            };
            if !kept.caught && kept.seen.iter().any(back) {
                kept.caught = true;
                kept.seen.clear();
            }
            if !kept.caught {
                all = false;
                if kept.seen.len() == KEPT {
                    kept.seen.remove(0);
                }
                kept.seen.push(now);
                continue;
            }
            for (sample, waits) in now.iter().flatten() {
                let c = caught.get_or_insert(Caught {
                    running: 0,
                    waiting: 0,
                    unit: unit.label,
                    pc: sample.pc.unwrap_or(0),
                    together: true,
                });
                if *waits {
                    c.waiting += 1;
                } else {
                    c.running += 1;
                    if c.running == 1 {
                        c.unit = unit.label;
                        c.pc = sample.pc.unwrap_or(0);
                    }
                }
            }
        }
        caught.filter(|c| all && c.running > 0)
    }
}

#[cfg(test)]
mod tests {
    use crate::exec::ops::Run;

    #[test]
    fn acting_instructions_are_the_ones_that_reach_beyond_the_warp() {
        assert!(Run::BarSync.acts_beyond_warp());
        assert!(Run::Ret.acts_beyond_warp());
        assert!(!Run::Nop.acts_beyond_warp());
        assert!(!Run::Exit.acts_beyond_warp());
        assert!(
            !Run::Bra {
                target: 0,
                reconv: 0
            }
            .acts_beyond_warp()
        );
    }
}
