//! Functional mode's shortcut through loops that change nothing but their warp.
//!
//! While a warp runs its slice of a step, nothing else touches what it can see:
//! global memory changes only at the end of the window (its own stores are in its
//! unit's log), and the other warps of its unit wait for their turn. A basic
//! block whose instructions only read memory and write the warp's registers,
//! predicates and place ([`crate::exec::ops::Program::block_pure`]) leaves all of
//! that as it was. So a warp that comes back, at the start of a block, to a state
//! it was in (registers, predicates, SIMT stack: [`Warp::is_in`]) having run only
//! such blocks since, runs the same instructions with the same counts again and
//! again until its slice ends: a warp spinning on a flag that another unit sets,
//! or on a value that never changes.
//!
//! The shortcut watches a warp once it has run [`WATCH_FROM`] instructions of
//! such blocks in a row ([`WATCH_SPINNER_FROM`] if its last run skipped a loop):
//! it saves the warp's state at instructions 256, 512, 1024, ... of the stretch
//! and compares it with the warp's at each later start of the same block (the
//! saved state moves on at each doubling, so a loop of any length is caught once
//! the stretch is twice as long as the loop). Once the
//! warp is back in a saved state, one more turn of the loop is run with the
//! counts and traffic saved before it; every whole turn left in the slice is
//! then added at once (each count grows by the turns times what one turn added),
//! and the warp, which is in the same state after any number of turns, runs the
//! rest of its slice as before. Counts, traffic, the warp's state and where its
//! slice ends are exactly those of running every turn.

use crate::exec::warp::{Snapshot, Warp};
use crate::observe::counters::{Traffic, UnitCounts};

/// Instructions of pure blocks a warp runs in a row before it is watched: below
/// that, saving and comparing its state would cost more than the loops it could
/// skip (a loop computing through a long stretch without storing is compared
/// at each turn).
pub const WATCH_FROM: u32 = 256;

/// The same for a warp whose last run ended in a skipped loop: a warp spinning
/// on a flag spins again in the next step, until the flag changes.
pub const WATCH_SPINNER_FROM: u32 = 8;

/// No stretch of pure blocks is running.
const NONE: u32 = u32::MAX;

/// What a warp's run of blocks knows about its current stretch of pure blocks.
pub(super) struct Shortcut {
    /// The warp's instruction count where the stretch began (`NONE`: not in one).
    from: u32,
    /// The instruction count at which the state is saved next.
    next_save: u32,
    /// The saved state: the block start's PC and instruction count, and the warp.
    saved: Option<(u32, u32, Snapshot)>,
    /// One more turn is being run: it ends at this instruction count, and these
    /// are the counts from before it.
    turn: Option<Turn>,
    /// [`WATCH_FROM`] or [`WATCH_SPINNER_FROM`].
    watch_from: u32,
    /// Turns were skipped in this run.
    pub skipped: bool,
}

struct Turn {
    ends: u32,
    counts: UnitCounts,
    traffic: Traffic,
    toggles: u64,
    branches: u64,
}

/// What the run of blocks has counted besides the warp: the unit's counts and
/// traffic, and the toggles of the global words moved (added to the traffic at
/// the end of the run).
pub(super) struct Tally<'a> {
    pub counts: &'a mut UnitCounts,
    pub traffic: &'a mut Traffic,
    pub toggles: &'a mut u64,
}

impl Shortcut {
    /// The shortcut of a warp that skipped turns in its last run (`spinner`) or
    /// not.
    pub fn new(spinner: bool) -> Shortcut {
        #[cfg(test)]
        if tests::OFF.with(|o| o.get()) {
            return Shortcut {
                watch_from: NONE,
                ..Shortcut::new_watching(spinner)
            };
        }
        Shortcut::new_watching(spinner)
    }

    fn new_watching(spinner: bool) -> Shortcut {
        Shortcut {
            from: NONE,
            next_save: NONE,
            saved: None,
            turn: None,
            watch_from: if spinner {
                WATCH_SPINNER_FROM
            } else {
                WATCH_FROM
            },
            skipped: false,
        }
    }

    /// Forgets the stretch of pure blocks (the warp ran something else).
    fn restart(&mut self) {
        (self.from, self.next_save, self.saved, self.turn) = (NONE, NONE, None, None);
    }

    /// At the start of a block that is `pure` (or not), after `ran` instructions
    /// of the warp's run: true when [`Shortcut::look`] has work to do.
    #[inline(always)]
    pub fn due(&mut self, pure: bool, ran: u32) -> bool {
        if !pure {
            if self.from != NONE {
                self.restart();
            }
            return false;
        }
        if self.from == NONE {
            self.from = ran;
            self.next_save = ran.saturating_add(self.watch_from);
            return false;
        }
        ran >= self.next_save || self.saved.is_some()
    }

    /// At the start of the pure block at `pc`, after `ran` of the `left`
    /// instructions the warp may run: saves its state, starts a measured turn,
    /// or adds the whole turns left. Returns the instructions added (0: none).
    #[cold]
    #[inline(never)]
    pub fn look(&mut self, pc: u32, ran: u32, left: u32, warp: &mut Warp, tally: Tally) -> u32 {
        if let Some(turn) = &self.turn {
            if ran < turn.ends {
                return 0;
            }
            let back = ran == turn.ends && self.saved.as_ref().is_some_and(|s| s.0 == pc);
            let turn = self.turn.take().expect("checked");
            if !back || !self.saved.as_ref().is_some_and(|s| warp.is_in(&s.2)) {
                // Not a loop after all (it cannot happen: the turn repeated a
                // path from an equal state); watch again from here.
                self.restart();
                return 0;
            }
            let period = ran - self.saved.as_ref().map_or(ran, |s| s.1);
            // Whole turns that start before the slice's end, as the run would.
            let times = (left - 1 - ran) / period.max(1);
            if period == 0 || times == 0 {
                self.restart();
                return 0;
            }
            let n = u64::from(times);
            tally.counts.add_repeats(&turn.counts, n);
            tally.traffic.add_repeats(&turn.traffic, n);
            *tally.toggles += (*tally.toggles - turn.toggles) * n;
            warp.branches += (warp.branches - turn.branches) * n;
            self.restart();
            self.skipped = true;
            #[cfg(test)]
            tests::SKIPPED.with(|k| k.set(k.get() + u64::from(times)));
            return times * period;
        }
        if let Some((at, since, state)) = &self.saved
            && *at == pc
            && warp.is_in(state)
        {
            let period = ran - since;
            // A turn to measure and at least one more to add.
            if ran.saturating_add(period.saturating_mul(2)) < left {
                self.turn = Some(Turn {
                    ends: ran + period,
                    counts: tally.counts.clone(),
                    traffic: tally.traffic.clone(),
                    toggles: *tally.toggles,
                    branches: warp.branches,
                });
                // The turn starts from the saved state: keep it for the check.
                if let Some(s) = &mut self.saved {
                    (s.0, s.1) = (pc, ran);
                }
            } else {
                self.saved = None;
                self.next_save = NONE;
            }
            return 0;
        }
        if ran >= self.next_save {
            let mut state = self.saved.take().map(|s| s.2).unwrap_or_default();
            warp.save(&mut state);
            self.saved = Some((pc, ran, state));
            self.next_save = self
                .from
                .saturating_add((ran - self.from).saturating_mul(2));
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use crate::{LoadOptions, RunControl};
    use std::cell::Cell;

    thread_local! {
        /// Tests: warps started on this thread are never watched.
        pub(super) static OFF: Cell<bool> = const { Cell::new(false) };
        /// Tests: turns skipped on this thread.
        pub(super) static SKIPPED: Cell<u64> = const { Cell::new(0) };
    }

    /// Everything a functional run of `file` on `machine` measured, with the
    /// shortcut on or off, and the turns it skipped.
    fn measured(on: bool, machine: &str, file: &str, set: &[&str]) -> (String, u64) {
        OFF.with(|o| o.set(!on));
        SKIPPED.with(|k| k.set(0));
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let kernel = crate::read_kernel(&path).expect("the kernel assembles");
        let mut machine = crate::machine::preset(machine).expect("a preset");
        for assignment in set {
            machine.set(assignment).expect("a valid machine key");
        }
        let mut image =
            crate::load(kernel.module, &machine, &LoadOptions::default()).expect("it loads");
        let control = RunControl {
            functional: true,
            sample_interval: Some(64),
            ..Default::default()
        };
        let result = crate::simulate(&mut image, &machine, control, &mut |_| {});
        OFF.with(|o| o.set(false));
        let result = result.expect("it runs");
        let dump = format!("{result:?} {:?}", image.memory);
        (dump, SKIPPED.with(|k| k.get()))
    }

    #[test]
    fn skipping_the_turns_of_a_spinning_warp_counts_what_running_them_does() {
        let cases: [(&str, &str, &[&str]); 4] = [
            ("spu-4x4", "tests/waits/spin_shapes.spu", &[]),
            ("gtx480", "tests/waits/spin_shapes.spu", &[]),
            ("spu-4x4", "tests/waits/late_flag.spu", &[]),
            (
                "spu-4x4",
                "tests/waits/release_wait.spu",
                &["latency_cycles.blocksync=3000"],
            ),
        ];
        for (machine, file, set) in cases {
            let (skipping, skipped) = measured(true, machine, file, set);
            let (running, none) = measured(false, machine, file, set);
            assert!(skipped > 0, "{machine} {file}: the shortcut is taken");
            assert_eq!(none, 0, "{machine} {file}: and not when off");
            assert_eq!(skipping, running, "{machine} {file}");
        }
    }
}
