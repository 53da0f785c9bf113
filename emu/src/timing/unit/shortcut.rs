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
//! such blocks in a row (fewer if its last run skipped a loop, more, up to
//! [`WATCH_AT_MOST`], if its loops did not repeat): it saves the warp's state at
//! instructions 256, 512, 1024, ... of the stretch and compares it with the
//! warp's at later starts of the same block (the saved state moves on at each
//! doubling, so a loop of any length is caught once the stretch is twice as long
//! as the loop; after many comparisons that differ, only every second, fourth,
//! ... visit is compared, which still meets a multiple of the loop's period). Once the
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
/// skip.
pub const WATCH_FROM: u32 = 256;

/// The same for a warp whose last run skipped a loop: a warp spinning on a flag
/// spins again in the next step, until the flag changes.
const WATCH_SPINNER_FROM: u32 = 8;

/// A warp whose loops did not repeat in its last run, which ran no other blocks
/// (a loop that counts, for a whole slice), is watched later and later in the
/// next, and past this not at all, until it runs another kind of block or
/// skips a loop.
const WATCH_AT_MOST: u32 = 8192;

/// Comparisons with one saved state after which only every second visit of its
/// block is compared, then every fourth, ... (up to every [`MAX_STEP`]th): a loop
/// whose state changes every turn (a counter) costs less and less, and one that
/// repeats is still caught, at a visit that is a multiple of both its period and
/// the step.
const MISSES_PER_STEP: u32 = 16;
const MAX_STEP: u32 = 4096;

/// No stretch of pure blocks is running, no state is saved, no turn is measured.
const NONE: u32 = u32::MAX;

/// What a warp's run of blocks knows about its current stretch of pure blocks.
pub(super) struct Shortcut {
    /// The warp's instruction count where the stretch began (`NONE`: not in one).
    from: u32,
    /// The instruction count at which the state is saved next.
    next_save: u32,
    /// The PC of the block start where the state was saved (`NONE`: none), the
    /// instruction count then, and the warp's state.
    at: u32,
    since: u32,
    state: Snapshot,
    /// Visits of `at` since the save, the comparisons that failed, the visits
    /// between two comparisons, and the register that differed last.
    visits: u32,
    misses: u32,
    step: u32,
    hint: usize,
    /// One more turn is being run: it ends at this instruction count (`NONE`:
    /// none), and these are the counts from before it.
    ends: u32,
    turn: Option<Box<Turn>>,
    /// When to watch a stretch (from the warp's last run; `NONE`: never).
    watch_from: u32,
    /// The run went through a block that is not pure.
    impure: bool,
    /// Turns were skipped in this run.
    skipped: bool,
}

struct Turn {
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
    /// The shortcut of a warp that is watched from the `watch_from`th
    /// instruction of a stretch of pure blocks (as its last run left it:
    /// [`Shortcut::next_watch`]).
    pub fn new(watch_from: u32) -> Shortcut {
        #[cfg(test)]
        let watch_from = if tests::OFF.with(|o| o.get()) {
            NONE
        } else {
            watch_from
        };
        Shortcut {
            from: NONE,
            next_save: NONE,
            at: NONE,
            since: 0,
            state: Snapshot::default(),
            visits: 0,
            misses: 0,
            step: 1,
            hint: 0,
            ends: NONE,
            turn: None,
            watch_from,
            impure: false,
            skipped: false,
        }
    }

    /// When to watch the warp in its next run: soon after a skip, later after
    /// comparisons that found no loop, as before otherwise.
    pub fn next_watch(&self) -> u32 {
        let later = self.watch_from.saturating_mul(2).max(WATCH_FROM);
        match () {
            _ if self.skipped => WATCH_SPINNER_FROM,
            // Loops that did not repeat: later, and not at all in a warp that
            // ran nothing else, until it does.
            _ if self.misses >= MISSES_PER_STEP && !self.impure && later > WATCH_AT_MOST => NONE,
            _ if self.misses >= MISSES_PER_STEP => later.min(WATCH_AT_MOST),
            _ if self.impure => self.watch_from.min(WATCH_AT_MOST),
            _ => self.watch_from,
        }
    }

    /// Forgets the stretch of pure blocks (the warp ran something else); the
    /// saved state's room is kept for the next.
    fn restart(&mut self) {
        (self.from, self.next_save, self.at, self.ends, self.turn) = (NONE, NONE, NONE, NONE, None);
    }

    /// At the start of the block at `pc`, which is `pure` (or not), after `ran`
    /// instructions of the warp's run: true when [`Shortcut::look`] has work to
    /// do.
    #[inline(always)]
    pub fn due(&mut self, pure: bool, pc: u32, ran: u32) -> bool {
        if !pure {
            self.impure = true;
            if self.from != NONE {
                self.restart();
            }
            return false;
        }
        if self.watch_from == NONE {
            return false;
        }
        if self.from == NONE {
            self.from = ran;
            self.next_save = ran.saturating_add(self.watch_from);
            return false;
        }
        if pc == self.at {
            // Visits between comparisons pass here, without a call.
            self.visits += 1;
            if self.visits & (self.step - 1) == 0 {
                return true;
            }
        }
        ran >= self.next_save || ran >= self.ends
    }

    /// At the start of the pure block at `pc`, after `ran` of the `left`
    /// instructions the warp may run: saves its state, starts a measured turn,
    /// or adds the whole turns left. Returns the instructions added (0: none).
    #[cold]
    #[inline(never)]
    pub fn look(&mut self, pc: u32, ran: u32, left: u32, warp: &mut Warp, tally: Tally) -> u32 {
        if self.turn.is_some() {
            if ran < self.ends {
                return 0;
            }
            let turn = self.turn.take().expect("checked");
            return self.end_turn(&turn, pc, ran, left, warp, tally);
        }
        if pc == self.at && self.visits & (self.step - 1) == 0 {
            if warp.is_in(&self.state, &mut self.hint) {
                self.start_turn(ran, left, warp, tally);
                return 0;
            }
            self.misses += 1;
            if self.misses % MISSES_PER_STEP == 0 && self.step < MAX_STEP {
                self.step *= 2;
            }
        }
        if ran >= self.next_save {
            warp.save(&mut self.state);
            (self.at, self.since, self.visits) = (pc, ran, 0);
            self.next_save = self
                .from
                .saturating_add((ran - self.from).saturating_mul(2));
        }
        0
    }

    /// The warp is back in the saved state after `ran` instructions: one more
    /// turn of the same length is run from here with the counts saved, if the
    /// slice holds it and at least one more.
    fn start_turn(&mut self, ran: u32, left: u32, warp: &Warp, tally: Tally) {
        let period = ran - self.since;
        if period == 0 || ran.saturating_add(period.saturating_mul(2)) >= left {
            // Not worth it: stop watching this stretch.
            (self.at, self.next_save) = (NONE, NONE);
            return;
        }
        self.turn = Some(Box::new(Turn {
            counts: tally.counts.clone(),
            traffic: tally.traffic.clone(),
            toggles: *tally.toggles,
            branches: warp.branches,
        }));
        (self.since, self.ends) = (ran, ran + period);
    }

    /// At the first block start at or past the measured turn's end: the whole
    /// turns left in the slice added at once.
    fn end_turn(
        &mut self,
        turn: &Turn,
        pc: u32,
        ran: u32,
        left: u32,
        warp: &mut Warp,
        tally: Tally,
    ) -> u32 {
        let period = ran - self.since;
        let back = ran == self.ends && pc == self.at && warp.is_in(&self.state, &mut self.hint);
        // Whole turns that start before the slice's end, as the run would.
        let times = if back { (left - 1 - ran) / period } else { 0 };
        if times == 0 {
            // Not a loop after all (which cannot happen: the turn repeated a
            // path from an equal state), or no turn left; watch again from here.
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
        tests::SKIPPED.with(|k| k.set(k.get() + n));
        times * period
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
