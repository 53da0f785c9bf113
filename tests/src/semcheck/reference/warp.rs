//! The operations across a warp's 32 lanes, from PTX's manual (9.7.8.6
//! `shfl.sync`, 9.7.8.7 `vote.sync`, `activemask`): they see the lanes that
//! execute them (`exec`, the active lanes whose guard holds).

use spu_isa::{ShflMode, VoteMode};

/// `shfl.sync`'s source lane for `lane` and whether it is in range, by PTX's
/// pseudocode: `c` holds the clamp in bits 0-4 and the segment mask in bits 8-12;
/// out of range a lane reads its own `a`.
pub fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let lane = i64::from(lane);
    let bval = i64::from(b & 31);
    let clamp = i64::from(c & 31);
    let segmask = i64::from((c >> 8) & 31);
    let max_lane = (lane & segmask) | (clamp & !segmask);
    let min_lane = lane & segmask;
    let (j, pval) = match mode {
        ShflMode::Up => (lane - bval, lane - bval >= max_lane),
        ShflMode::Down => (lane + bval, lane + bval <= max_lane),
        ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
        ShflMode::Idx => {
            let j = min_lane | (bval & !segmask);
            (j, j <= max_lane)
        }
    };
    (if pval { j as u32 } else { lane as u32 }, pval)
}

/// `vote.sync.{all,any,uni}` over the lanes of `exec` whose predicate is in `p`.
pub fn vote(mode: VoteMode, p: u32, exec: u32) -> bool {
    let hits = p & exec;
    match mode {
        VoteMode::All => hits == exec,
        VoteMode::Any => hits != 0,
        VoteMode::Uni => hits == 0 || hits == exec,
    }
}
