//! The operations across a warp's lanes: `shfl.sync`, `vote.sync` (`all any uni`,
//! `ballot`) and `activemask`. Each takes the lanes executing (`exec`) and gives
//! every lane's result at once.

use spu_isa::{ShflMode, VoteMode};

/// `shfl.sync`: each executing lane's source lane and whether it was in range
/// (PTX ISA semantics: `c` holds the clamp value in bits 0..5 and the segment mask
/// in bits 8..13); out of range, a lane reads its own value.
pub fn shfl(mode: ShflMode, lane: u32, b: u32, c: u32) -> (usize, bool) {
    let lane = i64::from(lane);
    let bval = i64::from(b & 0x1f);
    let cval = i64::from(c & 0x1f);
    let seg = i64::from((c >> 8) & 0x1f);
    let max_lane = (lane & seg) | (cval & !seg);
    let min_lane = lane & seg;
    let (j, ok) = match mode {
        ShflMode::Up => (lane - bval, lane - bval >= max_lane),
        ShflMode::Down => (lane + bval, lane + bval <= max_lane),
        ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
        ShflMode::Idx => {
            let j = min_lane | (bval & !seg);
            (j, j <= max_lane)
        }
    };
    let source = if ok { j as usize } else { lane as usize };
    (source & 31, ok)
}

/// `vote.sync` over the executing lanes `exec`, whose predicate bits are `p`.
pub fn vote(mode: VoteMode, p: u32, exec: u32) -> bool {
    let x = p & exec;
    match mode {
        VoteMode::All => x == exec,
        VoteMode::Any => x != 0,
        VoteMode::Uni => x == 0 || x == exec,
    }
}

/// `vote.sync.ballot`: the executing lanes whose predicate holds.
pub fn ballot(p: u32, exec: u32) -> u32 {
    p & exec
}

/// `activemask`: the executing lanes.
pub fn activemask(exec: u32) -> u32 {
    exec
}
