//! One warp: 32 threads' registers as structure-of-arrays, predicates as lane
//! masks, the SIMT reconvergence stack, and the scoreboard the timing model reads.
//!
//! Divergence follows the immediate post-dominator scheme: a divergent `bra`
//! parks the current entry at its reconvergence point (computed by the assembler and
//! stored in the instruction) and pushes one entry per path; an entry whose PC
//! reaches its reconvergence point is popped, merging the paths.

use crate::exec::lanes::Lanes;

/// "No reconvergence point".
const NO_RECONV: u32 = u32::MAX;

/// One SIMT stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frame {
    pc: u32,
    reconv: u32,
    mask: u32,
}

/// Why a warp is not issuing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarpState {
    Running,
    /// Waiting at `bar.sync` (instruction index).
    AtBarrier(u32),
    /// Waiting at a blocksync (instruction index).
    AtBlockSync(u32),
    Done,
}

/// What produced a register's pending value: decides the stall reason charged
/// while a consumer waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Producer {
    Alu,
    Memory,
}

/// A warp.
#[derive(Debug, Clone)]
pub struct Warp {
    /// Index of the warp within its block.
    pub index: u32,
    /// Lanes holding a thread (the last warp of a block may be partial).
    pub valid: u32,
    pub regs: Vec<Lanes>,
    /// Predicate registers as lane masks.
    pub preds: [u32; 16],
    stack: Vec<Frame>,
    pub state: WarpState,
    /// Cycle each register's pending write lands.
    pub reg_ready: Vec<u64>,
    pub reg_producer: Vec<Producer>,
    pub pred_ready: [u64; 16],
    /// Earliest cycle the warp may issue again (branch redirect, release latency).
    next_issue: u64,
    /// When the next instruction's operands are ready and the producer of the last one
    /// (`None`: only the issue time, e.g. a branch redirect); cleared
    /// whenever the PC or the issue time changes (only the warp's own issues write
    /// its scoreboard).
    pub ready: std::cell::Cell<Option<(u64, Option<Producer>)>>,
}

impl Warp {
    /// A fresh warp starting at `pc` with `threads` threads (1..=32).
    pub fn new(index: u32, threads: u32, regs: usize, pc: u32, start: u64) -> Warp {
        let valid = if threads >= 32 {
            u32::MAX
        } else {
            (1u32 << threads) - 1
        };
        Warp {
            index,
            valid,
            regs: vec![[0; 32]; regs],
            preds: [0; 16],
            stack: vec![Frame {
                pc,
                reconv: NO_RECONV,
                mask: valid,
            }],
            state: WarpState::Running,
            reg_ready: vec![0; regs],
            reg_producer: vec![Producer::Alu; regs],
            pred_ready: [0; 16],
            next_issue: start,
            ready: std::cell::Cell::new(None),
        }
    }

    /// Earliest cycle the warp may issue again.
    pub fn next_issue(&self) -> u64 {
        self.next_issue
    }

    /// Sets the earliest next issue and forgets the cached readiness.
    pub fn set_next_issue(&mut self, t: u64) {
        self.next_issue = t;
        self.ready.set(None);
    }

    /// PC of the next instruction, if the warp has threads left.
    #[inline]
    pub fn pc(&self) -> Option<u32> {
        self.stack.last().map(|f| f.pc)
    }

    /// Lanes executing the next instruction.
    #[inline]
    pub fn active(&self) -> u32 {
        self.stack.last().map_or(0, |f| f.mask)
    }

    /// Moves past a non-branch instruction.
    pub fn advance(&mut self) {
        self.ready.set(None);
        if let Some(top) = self.stack.last_mut() {
            top.pc += 1;
        }
        self.reconverge();
    }

    /// Executes a branch: `taken` lanes go to `target`, the other active lanes fall
    /// through; divergent paths meet again at `reconv`.
    pub fn branch(&mut self, taken: u32, target: u32, reconv: Option<u32>) {
        self.ready.set(None);
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        let not_taken = top.mask & !taken;
        let fall = top.pc + 1;
        if not_taken == 0 {
            top.pc = target;
        } else if taken == 0 {
            top.pc = fall;
        } else {
            let outer_reconv = top.reconv;
            let reconv = match reconv {
                Some(r) => {
                    top.pc = r;
                    r
                }
                None => {
                    // No common post-dominator: the paths only end at exits.
                    self.stack.pop();
                    outer_reconv
                }
            };
            self.stack.push(Frame {
                pc: fall,
                reconv,
                mask: not_taken,
            });
            self.stack.push(Frame {
                pc: target,
                reconv,
                mask: taken,
            });
        }
        self.reconverge();
    }

    /// Ends the threads in `lanes`; the rest continue after the instruction.
    pub fn exit(&mut self, lanes: u32) {
        for frame in &mut self.stack {
            frame.mask &= !lanes;
        }
        self.advance();
    }

    /// Pops entries that reached their reconvergence point or have no threads left.
    fn reconverge(&mut self) {
        while let Some(top) = self.stack.last() {
            if top.mask == 0 || top.pc == top.reconv {
                self.stack.pop();
            } else {
                break;
            }
        }
        if self.stack.is_empty() {
            self.state = WarpState::Done;
        }
    }

    /// True when every thread has exited.
    pub fn is_done(&self) -> bool {
        self.state == WarpState::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divergent_paths_reconverge_at_the_post_dominator() {
        // 0: @p bra 3 (reconv 4); 1..2: else path; 3: then path; 4: join
        let mut w = Warp::new(0, 32, 1, 0, 0);
        w.branch(0x0000_ffff, 3, Some(4));
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
        let mut w = Warp::new(0, 32, 1, 0, 0);
        w.branch(u32::MAX, 7, Some(9));
        assert_eq!((w.pc(), w.active()), (Some(7), u32::MAX));
        w.branch(0, 2, Some(9));
        assert_eq!(w.pc(), Some(8));
    }

    #[test]
    fn exits_remove_threads_from_every_entry() {
        let mut w = Warp::new(0, 8, 1, 0, 0);
        assert_eq!(w.active(), 0xff);
        w.branch(0x0f, 5, Some(9));
        w.exit(0x0f); // the taken path ends
        assert_eq!((w.pc(), w.active()), (Some(1), 0xf0));
        w.exit(0xf0);
        assert!(w.is_done());
    }

    #[test]
    fn branches_without_a_post_dominator_run_both_paths_to_their_exits() {
        let mut w = Warp::new(0, 32, 1, 0, 0);
        w.branch(0x1, 10, None);
        assert_eq!((w.pc(), w.active()), (Some(10), 0x1));
        w.exit(0x1);
        assert_eq!((w.pc(), w.active()), (Some(1), !0x1));
    }
}
