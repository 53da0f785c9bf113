//! Why a run stopped, rendered for the terminal: a fault with the instruction, its
//! source line, the unit, block and thread (and, for a CB checker error, the link
//! and the sync that is probably missing); a deadlock (rendered by [`deadlock`]);
//! the cycle limit; an interruption; a stuck run (with the notes of [`stuck`]).
//! The words for units, roles and counts that these use live here.

mod deadlock;
mod stuck;

use stuck::{lock_note, one_block_note};

use crate::exec::fault::FaultKind;
use crate::load::Image;
use crate::load::kernel::Kernel;
use crate::load::plan::Role;
use crate::machine::UnitLabel;
use crate::observe::outcome::{CbLink, DEEP, ROUND_WEIGHT, SYNC_WEIGHT, Stop};
use crate::observe::report::grouped;
use spu_isa::Side;
use std::fmt::Write;

/// `n` and a noun, singular or plural ("1 time", "3 times").
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", grouped(n))
    }
}

/// What a unit runs, in words: "block (1, 0)", "the north IU code for position 2",
/// "the restore of block (3, 1)'s east output for block (4, 1)".
fn role_text(role: Role, unit: UnitLabel) -> String {
    match role {
        Role::Block { bx, by } => format!("block ({bx}, {by})"),
        Role::Boundary { side, iuid } => match unit {
            UnitLabel::Dma { .. } => format!("the {side} DMA descriptor for position {iuid}"),
            _ => format!("the {side} IU code for position {iuid}"),
        },
        Role::Spill { key, .. } => format!(
            "the spill of block {}'s {} output (pass {})",
            xy(key.block),
            key.side,
            xy(key.at)
        ),
        Role::Restore { key } => format!(
            "the restore of block {}'s {} output for block {}",
            xy(key.block),
            key.side,
            xy(key.consumer_block())
        ),
    }
}

/// A block of a 3-D grid, which runs folded as (x, y*z), named by its launch
/// coordinates `(x, y, z)`; other roles and 2-D grids as `text` says.
fn block_3d(text: String, role: Role, launch: &crate::load::image::LaunchDims) -> String {
    match role {
        Role::Block { bx, by } if is_3d(launch) => {
            format!("block {}", block_coords([bx, by], launch))
        }
        _ => text,
    }
}

/// The launch is a 3-D grid (whose z extent is not 1).
fn is_3d(launch: &crate::load::image::LaunchDims) -> bool {
    launch.grid_y > 0 && launch.grid[1] != launch.grid_y
}

/// A block's coordinates as the launch names them: `(x, y)`, or `(x, y, z)` in a
/// 3-D grid, which runs folded as (x, y*z).
pub fn block_coords([x, by]: [u32; 2], launch: &crate::load::image::LaunchDims) -> String {
    if is_3d(launch) {
        format!("({x}, {}, {})", by % launch.grid_y, by / launch.grid_y)
    } else {
        format!("({x}, {by})")
    }
}

fn xy([x, y]: [u32; 2]) -> String {
    format!("({x}, {y})")
}

/// Longest source line a message quotes (the assembler's bound too).
const MAX_QUOTED_LINE: usize = 1000;

/// `file:line:col` and the source line of instruction `pc`, if known, escaped for
/// the terminal.
fn location(kernel: &Kernel, pc: u32) -> (String, Option<(u32, String)>) {
    use spu_io::quote::{escape, escape_lines};
    let m = &kernel.module;
    match m.lines.locs.get(pc as usize) {
        Some(loc) => {
            let file = m
                .lines
                .files
                .get(usize::from(loc.file))
                .cloned()
                .unwrap_or_else(|| "?".into());
            // A line too long to read in a message is named by its length, as
            // the assembler does.
            let text = kernel.source_line(&file, loc.line).map(|t| {
                let shown = if t.len() <= MAX_QUOTED_LINE {
                    escape_lines(t).into_owned()
                } else {
                    format!("(the line is {} bytes long and not shown)", t.len())
                };
                (loc.line, shown)
            });
            (format!("{}:{}:{}", escape(&file), loc.line, loc.col), text)
        }
        None => (format!("instruction {pc}"), None),
    }
}

/// `file:line` of instruction `pc`.
pub(super) fn line_of(kernel: &Kernel, pc: u32) -> String {
    let (at, _) = location(kernel, pc);
    match at.rsplit_once(':') {
        Some((file_line, _col)) if kernel.module.lines.locs.get(pc as usize).is_some() => {
            file_line.to_string()
        }
        _ => at,
    }
}

fn instr_line(kernel: &Kernel, pc: u32) -> String {
    spu_asm::disasm::instr_text(&kernel.module, pc as usize).map_or_else(
        || format!("instruction {pc}"),
        |t| format!("instruction {pc}: `{}`", spu_io::quote::escape(&t)),
    )
}

/// Quotes the source line of `pc` under a `-->` arrow; returns the gutter width
/// the notes below it align to.
pub(super) fn quote_source(s: &mut String, kernel: &Kernel, pc: u32) -> usize {
    let (at, text) = location(kernel, pc);
    let w = text.as_ref().map_or(2, |(line, _)| line.to_string().len());
    let _ = writeln!(s, "{:w$} --> {at}", "");
    if let Some((line, text)) = text {
        let _ = writeln!(s, "{:w$} |", "");
        let _ = writeln!(s, "{line:>w$} | {text}");
        let _ = writeln!(s, "{:w$} |", "");
    }
    w
}

pub(super) fn note(s: &mut String, w: usize, text: &str) {
    let _ = writeln!(s, "{:w$} = {text}", "");
}

/// The link of a CB checker error: its ends and their sync counts.
fn cb_link_text(cb: &CbLink) -> String {
    let what = cb.partner_role.map_or_else(
        || "now idle".to_string(),
        |r| format!("running {}", role_text(r, cb.partner.unit)),
    );
    let switched = count(cb.switches, "time");
    let syncs = if cb.global_sync {
        format!("the link switched {switched} (at every global blocksync)")
    } else {
        format!(
            "producer synced on it {}, consumer {}; it switched {switched}",
            count(cb.arrivals[0], "time"),
            count(cb.arrivals[1], "time"),
        )
    };
    let end = if cb.reader_consumes {
        "producer"
    } else {
        "consumer"
    };
    format!("{} link: {end} {} ({what}); {syncs}", cb.side, cb.partner)
}

fn opposite(side: Side) -> Side {
    match side {
        Side::North => Side::South,
        Side::South => Side::North,
        Side::East => Side::West,
        Side::West => Side::East,
    }
}

/// What probably lacks before a read of an unwritten CB word; `held` is how many
/// words of the buffer the producer wrote.
fn cb_missing(cb: &CbLink, held: u32) -> String {
    let (read, write) = (cb.side, opposite(cb.side));
    if !cb.reader_consumes {
        return format!(
            "this unit reads back its own outgoing {read} buffer, which it has not written since the last switch; write it (`st.cb.{read}`) before reading it"
        );
    }
    if cb.global_sync {
        return if cb.pending {
            format!(
                "a `bar.blocksync` between the producer's `st.cb.{write}` and this read: the word is written but not yet handed over"
            )
        } else {
            format!(
                "the producer's `st.cb.{write}` of this word before the last global `bar.blocksync`; check in which step it writes the word and in which step this read happens"
            )
        };
    }
    let [producer, consumer] = cb.arrivals;
    if cb.pending && producer > consumer {
        format!(
            "no `bar.blocksync.{read}` before this read: the producer wrote this word and synced, but this unit has not synced to receive it"
        )
    } else if cb.pending {
        format!(
            "no `bar.blocksync.{read}` before this read (and the producer's `bar.blocksync.{write}` after its write): the word is written but the link has not switched since"
        )
    } else if cb.switches == 0 {
        format!(
            "no `bar.blocksync.{read}` before this read: the link has never switched, so nothing the producer writes (`st.cb.{write}`, then `bar.blocksync.{write}`) can have reached this unit"
        )
    } else {
        // Restored data was written by the block of the previous pass.
        let (who, restored) = match cb.partner_role {
            Some(Role::Restore { key }) => (
                format!("block {}'s", xy(key.block)),
                "; the runtime restores that block's output here",
            ),
            _ => ("the producer's".to_string(), ""),
        };
        if held == 0 {
            format!(
                "a `st.cb.{write}` before {who} last `bar.blocksync.{write}`, which handed over an empty buffer, or that sync is one too many (the two ends then pair the wrong syncs){restored}"
            )
        } else {
            format!(
                "{who} `st.cb.{write}` of this word before its last `bar.blocksync.{write}`: it handed over a buffer without this word (check its addresses, or whether this read belongs after the next `bar.blocksync.{read}`){restored}"
            )
        }
    }
}

/// Renders why a run stopped, for the terminal.
pub fn render_stop(stop: &Stop, kernel: &Kernel, image: &Image) -> String {
    let mut s = String::new();
    match stop {
        Stop::Fault {
            fault,
            unit,
            role,
            cycle,
            ntid,
            cb,
        } => {
            let _ = writeln!(s, "error: {}", fault.kind);
            let w = quote_source(&mut s, kernel, fault.pc);
            note(&mut s, w, &instr_line(kernel, fault.pc));
            let t = fault.warp * 32 + fault.lane;
            let [nx, ny, _] = [ntid[0].max(1), ntid[1].max(1), ntid[2]];
            note(
                &mut s,
                w,
                &format!(
                    "in {} on {unit}, thread ({}, {}, {}) (warp {}, lane {}){}",
                    block_3d(role_text(*role, *unit), *role, &image.launch),
                    t % nx,
                    t / nx % ny,
                    t / (nx * ny),
                    fault.warp,
                    fault.lane,
                    at_cycle(*cycle)
                ),
            );
            if let FaultKind::Unmapped { addr, .. } | FaultKind::PastEnd { addr, .. } = fault.kind
                && let Some(r) = image.memory.nearest(addr)
            {
                note(
                    &mut s,
                    w,
                    &format!(
                        "nearest buffer: `{}` at {:#010x}..{:#010x} ({} elements)",
                        r.name,
                        r.base,
                        r.end(),
                        r.len
                    ),
                );
            }
            if let FaultKind::CallTooDeep { target, .. } | FaultKind::FrameTooLarge { target, .. } =
                fault.kind
                && let Some(l) = kernel.module.labels.iter().find(|l| l.pc == target)
            {
                note(&mut s, w, &format!("the function called: `{}`", l.name));
            }
            if let (Some(cb), FaultKind::UnwrittenCb { held, .. }) = (cb, &fault.kind) {
                note(&mut s, w, &cb_link_text(cb));
                note(
                    &mut s,
                    w,
                    &format!("probably missing: {}", cb_missing(cb, *held)),
                );
            }
            note(&mut s, w, &format!("help: {}", fault.kind.help()));
        }
        Stop::Engine {
            kind,
            unit,
            role,
            cycle,
        } => {
            let _ = writeln!(s, "error: {kind}");
            note(
                &mut s,
                2,
                &format!(
                    "in {} on {unit}{}",
                    role_text(*role, *unit),
                    at_cycle(*cycle)
                ),
            );
            note(&mut s, 2, &format!("help: {}", kind.help()));
        }
        Stop::Deadlock {
            cycle,
            chain,
            end,
            others,
        } => deadlock::render(&mut s, *cycle, chain, end, others, kernel, image),
        Stop::Interrupted {
            cycle,
            blocks_done,
            blocks_total,
        } => {
            // Functional mode has no cycles: it names none.
            let at = cycle.map_or(String::new(), |c| format!(" at cycle {}", grouped(c)));
            let _ = writeln!(
                s,
                "error: interrupted{at} with {blocks_done} of {blocks_total} blocks finished"
            );
        }
        Stop::OutputMemory { needed } => {
            let _ = writeln!(
                s,
                "error: the run finished, but this process cannot allocate the {} MiB the statistics and reports of its recordings (--sample-interval samples, --html activity) need (a memory limit such as `ulimit -v`, or too little free memory)",
                needed.div_ceil(1 << 20)
            );
            note(
                &mut s,
                2,
                "help: raise the memory limit, or record less: a larger --sample-interval, no --html, or a smaller launch",
            );
        }
        Stop::HostMemory {
            cycle,
            headroom,
            blocks_done,
            blocks_total,
        } => {
            let at = cycle.map_or(String::new(), |c| format!(" at cycle {}", grouped(c)));
            let _ = writeln!(
                s,
                "error: the run stopped{at} with {blocks_done} of {blocks_total} blocks finished: this process could no longer allocate the {} MiB a run keeps free beside what it holds (a memory limit such as `ulimit -v`, or too little free memory); what grows during a run (recordings for --html and --sample-interval, kept printf text, spilled CB tiles, threads' local memory) reached it",
                headroom >> 20
            );
            note(
                &mut s,
                2,
                "help: raise the memory limit, or record less (a smaller --printf-limit, a larger --sample-interval, no --html), or run a smaller launch",
            );
        }
        Stop::InstructionLimit {
            limit,
            blocks_done,
            blocks_total,
        } => {
            let _ = writeln!(
                s,
                "error: the run exceeded --max-instructions {} with {blocks_done} of {blocks_total} blocks finished",
                count(*limit, "warp instruction")
            );
            note(
                &mut s,
                2,
                "help: raise --max-instructions, or look for a loop that never ends",
            );
            lock_note(&mut s, image);
        }
        Stop::Spinning {
            limit,
            by_cycles,
            cycle,
            blocks_done,
            blocks_total,
            one_block_per_sm,
        } => {
            // Functional mode has no cycles: it names none.
            let at = cycle_at(*cycle);
            let _ = writeln!(
                s,
                "error: {} passed without a change to global memory, a finished block or a blocksync anywhere ({at}{blocks_done} of {blocks_total} blocks finished): the kernel looks stuck in a loop, such as a wait for a flag nobody sets",
                spun(*limit, *by_cycles, cycle.is_none()),
            );
            one_block_note(&mut s, 2, one_block_per_sm, true, *blocks_total);
            note(
                &mut s,
                2,
                "help: if the kernel really computes that long without changing global memory or synchronising, raise --spin-limit (0 turns the check off)",
            );
            lock_note(&mut s, image);
        }
        Stop::Repeating {
            running,
            waiting,
            unit,
            pc,
            together,
            unstarted,
            cycle,
            blocks_done,
            blocks_total,
            one_block_per_sm,
        } => {
            let at = cycle_at(*cycle);
            let others = match waiting {
                0 => String::new(),
                n => format!(
                    ", and {} waiting for them at a barrier or blocksync",
                    count(*n, "other warp")
                ),
            };
            let how = if *together {
                "with the warps beside it to a state they had all been in at one moment (the same instructions, predicates and registers, counters that decide nothing aside), passing only barriers of its own block and storing nothing"
            } else {
                "to a state it had been in (the same instruction, predicates and registers, counters that decide nothing aside) without storing or synchronising"
            };
            let _ = writeln!(
                s,
                "error: the kernel is stuck: {} came back {how}, while nothing changed memory{others}, so the run would repeat forever ({at}{blocks_done} of {blocks_total} blocks finished)",
                match running {
                    1 => "its one running warp".to_string(),
                    n => format!("each of its {} running warps", grouped(*n)),
                },
            );
            let w = quote_source(&mut s, kernel, *pc);
            note(
                &mut s,
                w,
                &format!("note: a warp of {unit} loops here, for instance"),
            );
            if *unstarted > 0 {
                note(
                    &mut s,
                    w,
                    &format!(
                        "note: {} only as running blocks finish, so a running block that waits for {} (for its flag, its result) waits forever",
                        match unstarted {
                            1 => "1 block has not started: it starts".to_string(),
                            n => format!("{} blocks have not started: they start", grouped(*n)),
                        },
                        if *unstarted == 1 { "it" } else { "one of them" },
                    ),
                );
            }
            one_block_note(&mut s, w, one_block_per_sm, false, *blocks_total);
            note(
                &mut s,
                w,
                if *together {
                    "help: look for a loop around a barrier whose exit depends on nothing the loop changes"
                } else {
                    "help: look for a wait on a flag or a value that no thread sets, or sets only after the wait"
                },
            );
            lock_note(&mut s, image);
        }
        Stop::Rewriting {
            limit,
            by_cycles,
            words,
            cycle,
            blocks_done,
            blocks_total,
            one_block_per_sm,
        } => {
            let at = cycle_at(*cycle);
            let what = same_words(*words);
            let _ = writeln!(
                s,
                "error: {} passed without a finished block or a blocksync anywhere, and the last of them changed global memory only in words changed before, {what} in all ({at}{blocks_done} of {blocks_total} blocks finished): the kernel looks stuck in a loop that rewrites a counter, a flag or an array over and over",
                spun(*limit, *by_cycles, cycle.is_none()),
            );
            one_block_note(&mut s, 2, one_block_per_sm, true, *blocks_total);
            note(
                &mut s,
                2,
                "help: if the kernel really works that long on the same words without finishing a block or synchronising, raise --spin-limit (0 turns the check off)",
            );
            lock_note(&mut s, image);
        }
        Stop::Synchronising {
            limit,
            by_cycles,
            syncs,
            words,
            cycle,
            blocks_done,
            blocks_total,
            one_block_per_sm,
        } => {
            let at = cycle_at(*cycle);
            let clock = if *by_cycles {
                spun(*limit, true, cycle.is_none())
            } else {
                format!(
                    "{} of one unit (a blocksync it takes part in counting as {})",
                    count(*limit, "warp instruction"),
                    grouped(SYNC_WEIGHT)
                )
            };
            let what = match words {
                0 => "changing no global memory".to_string(),
                n => format!("changing only {}", same_words(*n)),
            };
            let _ = writeln!(
                s,
                "error: {clock} passed with {} but no finished block, {what} ({at}{blocks_done} of {blocks_total} blocks finished): the kernel looks stuck in a loop that synchronises forever",
                count(*syncs, "blocksync"),
            );
            one_block_note(&mut s, 2, one_block_per_sm, true, *blocks_total);
            note(
                &mut s,
                2,
                &format!(
                    "help: syncs alone are not progress; a kernel that really iterates that long in place, synchronising each step without finishing a block or writing a new word, needs a larger --spin-limit (this check allows {} times it; 0 turns the checks off)",
                    DEEP
                ),
            );
            lock_note(&mut s, image);
        }
        Stop::SpillFull {
            bytes,
            tiles,
            room,
            blocks_done,
            blocks_total,
        } => {
            let mib = |b: u64| grouped(b.div_ceil(1 << 20));
            let _ = writeln!(
                s,
                "error: the virtual IUs spilled {} ({} MiB), more than the {} MiB kept for them (the global memory the buffers leave, at most 1 GiB) ({blocks_done} of {blocks_total} blocks finished): the launch runs in several passes, and each tile a pass sends on is kept for the next, so a pass that synchronises in an endless loop fills any memory",
                count(*tiles, "CB tile"),
                mib(*bytes),
                mib(*room),
            );
            note(
                &mut s,
                2,
                "help: look for a loop that never ends (each sync on a link at a pass boundary spills a tile); a kernel that really sends that much on needs a larger `memory.global_mib`, a grid with fewer passes (`--grid`), or `--set viu.spill=written` (only the words written are kept)",
            );
        }
        Stop::CycleLimit {
            limit,
            blocks_done,
            blocks_total,
        } => {
            let _ = writeln!(
                s,
                "error: the run exceeded --max-cycles {} with {blocks_done} of {blocks_total} blocks finished",
                grouped(*limit)
            );
            // Every block done: the run was draining its last stores.
            let help = if blocks_done == blocks_total {
                "help: raise --max-cycles: every block had finished, and the run was still completing its last stores"
            } else {
                "help: raise --max-cycles, or look for a loop that never ends"
            };
            note(&mut s, 2, help);
            lock_note(&mut s, image);
        }
    }
    s
}

/// `, at cycle 1 234` after a place; nothing in functional mode, which has no
/// cycles.
fn at_cycle(cycle: Option<u64>) -> String {
    cycle.map_or(String::new(), |c| format!(", at cycle {}", grouped(c)))
}

/// `cycle 1 234, ` for a message's parenthesis; nothing in functional mode,
/// which has no cycles.
fn cycle_at(cycle: Option<u64>) -> String {
    cycle.map_or(String::new(), |c| format!("cycle {}, ", grouped(c)))
}

/// `one word` or `the same 8 192 words`: what a loop kept rewriting.
fn same_words(words: u64) -> String {
    if words == 1 {
        "one word".to_string()
    } else {
        format!("the same {} words", grouped(words))
    }
}

/// How far a spin limit counted: the warp instructions of the unit that issued
/// most, or (a loop waiting on memory latency or on its atomics) cycles, in
/// functional mode scheduling rounds, which weigh [`ROUND_WEIGHT`] warp
/// instructions each.
fn spun(limit: u64, by_cycles: bool, functional: bool) -> String {
    match (by_cycles, functional) {
        (false, _) => format!("{} of one unit", count(limit, "warp instruction")),
        (true, false) => count(limit, "cycle"),
        (true, true) => format!(
            "{} (of {ROUND_WEIGHT} warp instructions' worth each)",
            count(limit / ROUND_WEIGHT, "scheduling round"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_well() {
        assert_eq!(count(1, "time"), "1 time");
        assert_eq!(count(0, "time"), "0 times");
        assert_eq!(count(1234, "sync"), "1 234 syncs");
    }

    #[test]
    fn a_spin_limit_of_one_reads_in_the_singular() {
        assert_eq!(spun(1, true, false), "1 cycle");
        assert_eq!(spun(1, false, false), "1 warp instruction of one unit");
        assert_eq!(
            spun(ROUND_WEIGHT, true, true),
            format!("1 scheduling round (of {ROUND_WEIGHT} warp instructions' worth each)")
        );
        assert_eq!(spun(2, true, false), "2 cycles");
    }
}
