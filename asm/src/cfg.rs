//! Control flow of a kernel: successor lists, immediate post-dominators (the SIMT
//! reconvergence point of each divergent branch) and reachability from the SM and
//! IU entry points.

use spu_isa::table::Flow;
use spu_isa::{Guard, Instr, Operand};

/// Successors of every instruction; `len` stands for "the thread has exited".
pub fn successors(code: &[Instr]) -> Vec<Vec<usize>> {
    let exit = code.len();
    code.iter()
        .enumerate()
        .map(|(pc, instr)| {
            let next = pc + 1; // == exit past the last instruction
            let guarded = instr.guard != Guard::Always;
            let flow = instr.opcode.spec().flow;
            if flow == Flow::Branch {
                let target = match instr.operands().first() {
                    Some(Operand::Target(t)) => *t as usize,
                    _ => next,
                };
                if guarded {
                    vec![target, next]
                } else {
                    vec![target]
                }
            } else if flow == Flow::Exit {
                if guarded {
                    vec![exit, next]
                } else {
                    vec![exit]
                }
            } else {
                vec![next]
            }
        })
        .collect()
}

/// Immediate post-dominator of every instruction (`None` when it is the exit or the
/// instruction cannot reach the exit). Cooper-Harvey-Kennedy on the reverse graph.
pub fn immediate_post_dominators(succ: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = succ.len();
    let exit = n;
    // Reverse-graph DFS postorder starting from the exit node.
    let mut preds_rev: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for (pc, ss) in succ.iter().enumerate() {
        for &s in ss {
            preds_rev[s].push(pc);
        }
    }
    let mut order = Vec::with_capacity(n + 1);
    let mut seen = vec![false; n + 1];
    let mut stack = vec![(exit, 0usize)];
    seen[exit] = true;
    while let Some((node, i)) = stack.pop() {
        if i < preds_rev[node].len() {
            stack.push((node, i + 1));
            let next = preds_rev[node][i];
            if !seen[next] {
                seen[next] = true;
                stack.push((next, 0));
            }
        } else {
            order.push(node);
        }
    }
    let mut rank = vec![usize::MAX; n + 1];
    for (i, node) in order.iter().enumerate() {
        rank[*node] = i;
    }
    let mut ipdom: Vec<Option<usize>> = vec![None; n + 1];
    ipdom[exit] = Some(exit);
    let mut changed = true;
    while changed {
        changed = false;
        for &node in order.iter().rev().filter(|x| **x != exit) {
            let mut new: Option<usize> = None;
            for &s in &succ[node] {
                if ipdom[s].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => s,
                    Some(cur) => intersect(cur, s, &ipdom, &rank),
                });
            }
            if new.is_some() && ipdom[node] != new {
                ipdom[node] = new;
                changed = true;
            }
        }
    }
    ipdom.truncate(n);
    ipdom
        .into_iter()
        .map(|d| d.filter(|d| *d != exit))
        .collect()
}

fn intersect(mut a: usize, mut b: usize, ipdom: &[Option<usize>], rank: &[usize]) -> usize {
    let exit = ipdom.len() - 1;
    while a != b {
        while rank[a] < rank[b] {
            a = ipdom[a].unwrap_or(exit);
        }
        while rank[b] < rank[a] {
            b = ipdom[b].unwrap_or(exit);
        }
    }
    a
}

/// Instructions reachable from `entry`.
pub fn reachable(succ: &[Vec<usize>], entry: usize) -> Vec<bool> {
    let mut seen = vec![false; succ.len()];
    let mut stack = vec![entry];
    while let Some(pc) = stack.pop() {
        if pc >= succ.len() || seen[pc] {
            continue;
        }
        seen[pc] = true;
        stack.extend(&succ[pc]);
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_then_else_reconverges_at_the_join() {
        // 0: @p bra 3; 1: a; 2: bra 4; 3: b; 4: join; 5: exit
        let succ = vec![vec![3, 1], vec![2], vec![4], vec![4], vec![5], vec![6]];
        let ipdom = immediate_post_dominators(&succ);
        assert_eq!(ipdom[0], Some(4));
        assert_eq!(ipdom[1], Some(2));
        assert_eq!(ipdom[5], None);
    }

    #[test]
    fn loop_back_edge_reconverges_after_the_loop() {
        // 0: body; 1: @p bra 0; 2: exit
        let succ = vec![vec![1], vec![0, 2], vec![3]];
        assert_eq!(immediate_post_dominators(&succ)[1], Some(2));
    }

    #[test]
    fn guarded_exit_reconverges_at_exit() {
        // 0: @p exit; 1: x; 2: exit
        let succ = vec![vec![3, 1], vec![2], vec![3]];
        let ipdom = immediate_post_dominators(&succ);
        assert_eq!(ipdom[0], None);
    }
}
