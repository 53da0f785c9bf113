//! The notes a stop of a stuck run adds where they apply: that functional mode
//! runs one block per SM of a machine that holds several, and that a spin lock
//! between threads of one warp never ends here.

use super::{count, note};
use crate::load::Image;
use crate::observe::outcome::OneBlockPerSm;
use crate::observe::report::grouped;

/// Why a kernel whose blocks wait for each other can stop in functional mode
/// alone: it runs one block per SM at a time, where the machine holds several
/// (`unstarted`: say how many blocks have not started, which no other note says).
pub(super) fn one_block_note(
    s: &mut String,
    width: usize,
    one: &Option<OneBlockPerSm>,
    unstarted: bool,
    blocks_total: u64,
) {
    let Some(one) = one else {
        return;
    };
    let waiting = match one.unstarted {
        _ if !unstarted => String::new(),
        1 => ", and 1 block has not started".to_string(),
        n => format!(", and {} blocks have not started", grouped(n)),
    };
    // A launch larger than the machine holds cannot wait for all its blocks in
    // timing mode either.
    let timing = if blocks_total > one.held {
        format!(
            "timing mode holds up to {} at once too, fewer than the launch's {}, so a wait for every block of the launch never ends there either",
            count(one.held, "block"),
            grouped(blocks_total),
        )
    } else {
        format!(
            "timing mode (without --functional) runs up to {} at once, co-resident as the machine runs them",
            count(one.held, "block"),
        )
    };
    note(
        s,
        width,
        &format!(
            "note: functional mode runs one block per SM at a time, though this machine holds {} of this kernel per SM at once{waiting}: blocks that wait for other blocks of the launch (a grid barrier, a flag another block sets) may never see them start here; {timing}",
            count(u64::from(one.per_sm), "block"),
        ),
    );
}

/// The note on spin locks, for a kernel that can take one ([`Program::takes_locks`]):
/// other stuck kernels have the general help alone.
///
/// [`Program::takes_locks`]: crate::exec::ops::Program::takes_locks
pub(super) fn lock_note(s: &mut String, image: &Image) {
    if image.program.takes_locks() {
        note(s, 2, SPIN_LOCK_NOTE);
    }
}

/// Why a lock between threads of one warp never ends here.
const SPIN_LOCK_NOTE: &str = "note: a spin lock that threads of one warp take in turn never ends here: the threads of a warp that branch apart run one side at a time until they meet again (as on GPUs before Volta), so the spinning side can starve the lock holder; take such locks with one thread per warp";
