//! What users read: the run summary, and run-time errors rendered with the
//! instruction, its source line, the unit, block and thread, and how to fix it.

use crate::exec::fault::FaultKind;
use crate::exec::warp::WarpState;
use crate::load::Image;
use crate::load::kernel::Kernel;
use crate::load::plan::Role;
use crate::machine::Machine;
use crate::machine::UnitLabel;
use crate::observe::outcome::{RunResult, Stop};
use std::fmt::Write;

/// Groups digits in threes: `98 304`.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// A duration in seconds with a readable unit.
pub fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.3} us", s * 1e6)
    }
}

/// The human summary printed after a run.
pub fn summary(result: &RunResult, image: &Image, machine: &Machine) -> String {
    let l = &image.launch;
    let issued: u64 = result.units.iter().map(|u| u.issued).sum();
    let threads: u64 = result.units.iter().map(|u| u.thread_instrs).sum();
    let t = &result.traffic;
    let mut s = String::new();
    let _ = writeln!(s, "kernel     {}", image.module.name);
    let _ = writeln!(s, "machine    {}", machine.summary());
    let _ = writeln!(
        s,
        "launch     grid {}x{} blocks of {}x{}x{} threads{}",
        l.grid[0],
        l.grid[1],
        l.block[0],
        l.block[1],
        l.block[2],
        if l.iu_threads > 0 {
            format!(", {} threads per IU", l.iu_threads)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        s,
        "passes     {}x{} ({})",
        result.passes[0], result.passes[1], machine.pass_mode
    );
    if result.functional {
        let _ = writeln!(s, "cycles     not modelled (--functional)");
        let _ = writeln!(
            s,
            "instrs     {} warp, {} thread",
            grouped(issued),
            grouped(threads)
        );
    } else {
        let _ = writeln!(
            s,
            "cycles     {} ({} at {} MHz)",
            grouped(result.cycles),
            seconds(result.cycles as f64 / (machine.freq_mhz * 1e6)),
            machine.freq_mhz
        );
        let _ = writeln!(
            s,
            "instrs     {} warp, {} thread; IPC {:.3} warp instructions per cycle",
            grouped(issued),
            grouped(threads),
            issued as f64 / result.cycles.max(1) as f64
        );
    }
    let _ = writeln!(
        s,
        "off-chip   {} words loaded, {} stored ({} spilled, {} restored)",
        grouped(t.load_words),
        grouped(t.store_words),
        grouped(t.spill_words),
        grouped(t.restore_words)
    );
    let transactions = t.load_transactions + t.store_transactions;
    if result.functional {
        let _ = writeln!(s, "dram       {} transactions", grouped(transactions));
    } else {
        let bytes = transactions * u64::from(machine.transaction_bytes);
        let _ = writeln!(
            s,
            "dram       {} transactions, {:.1} bytes/cycle achieved of {:.1} configured",
            grouped(transactions),
            bytes as f64 / result.cycles.max(1) as f64,
            machine.dram_bytes_per_cycle()
        );
    }
    let _ = writeln!(
        s,
        "cb         {} words read, {} written; {} link rendezvous, {} global blocksyncs",
        grouped(result.cb.reads),
        grouped(result.cb.writes),
        grouped(result.link_syncs),
        grouped(result.global_syncs)
    );
    s
}

fn role_text(role: Role) -> String {
    match role {
        Role::Block { bx, by } => format!("block ({bx}, {by})"),
        Role::Boundary { side, iuid } => format!("the {side} boundary work for position {iuid}"),
        Role::Spill { key, .. } => format!(
            "the spill of pass {}'s {} edge, position {}",
            key.pass, key.side, key.position
        ),
        Role::Restore { key } => format!(
            "the restore of pass {}'s {} edge, position {}",
            key.pass, key.side, key.position
        ),
    }
}

/// `file:line:col` and the source line of instruction `pc`, if known.
fn location(kernel: &Kernel, pc: u32) -> (String, Option<(u32, String)>) {
    let m = &kernel.module;
    match m.lines.locs.get(pc as usize) {
        Some(loc) => {
            let file = m
                .lines
                .files
                .get(usize::from(loc.file))
                .cloned()
                .unwrap_or_else(|| "?".into());
            let text = kernel
                .source_line(&file, loc.line)
                .map(|t| (loc.line, t.to_string()));
            (format!("{file}:{}:{}", loc.line, loc.col), text)
        }
        None => (format!("instruction {pc}"), None),
    }
}

fn instr_line(kernel: &Kernel, pc: u32) -> String {
    spu_asm::disasm::instr_text(&kernel.module, pc as usize).map_or_else(
        || format!("instruction {pc}"),
        |t| format!("instruction {pc}: `{t}`"),
    )
}

fn quote_source(s: &mut String, kernel: &Kernel, pc: u32) {
    let (at, text) = location(kernel, pc);
    let _ = writeln!(s, "  --> {at}");
    if let Some((line, text)) = text {
        let w = line.to_string().len();
        let _ = writeln!(s, "{:w$} |", "");
        let _ = writeln!(s, "{line} | {text}");
        let _ = writeln!(s, "{:w$} |", "");
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
        } => {
            let _ = writeln!(s, "error: {}", fault.kind);
            quote_source(&mut s, kernel, fault.pc);
            let _ = writeln!(s, "   = {}", instr_line(kernel, fault.pc));
            let t = fault.warp * 32 + fault.lane;
            let [nx, ny, _] = [ntid[0].max(1), ntid[1].max(1), ntid[2]];
            let _ = writeln!(
                s,
                "   = in {} on {unit}, thread ({}, {}, {}) (warp {}, lane {}), at cycle {}",
                role_text(*role),
                t % nx,
                t / nx % ny,
                t / (nx * ny),
                fault.warp,
                fault.lane,
                cycle
            );
            if let FaultKind::Unmapped { addr, .. } = fault.kind
                && let Some(r) = image.memory.nearest(addr)
            {
                let _ = writeln!(
                    s,
                    "   = nearest buffer: `{}` at {:#010x}..{:#010x} ({} elements)",
                    r.name,
                    r.base,
                    r.end(),
                    r.len
                );
            }
            let _ = writeln!(s, "   = help: {}", fault.kind.help());
        }
        Stop::Engine {
            kind,
            unit,
            role,
            cycle,
        } => {
            let _ = writeln!(s, "error: {kind}");
            let _ = writeln!(
                s,
                "   = in {} on {unit}, at cycle {cycle}",
                role_text(*role)
            );
            let _ = writeln!(s, "   = help: {}", kind.help());
        }
        Stop::Deadlock { cycle, waiting } => {
            let _ = writeln!(
                s,
                "error: deadlock at cycle {cycle}: no unit can make progress; {} unit{} wait{} forever",
                waiting.len(),
                if waiting.len() == 1 { "" } else { "s" },
                if waiting.len() == 1 { "s" } else { "" }
            );
            for w in waiting {
                let _ = writeln!(
                    s,
                    "   {} running {} in pass ({}, {}):",
                    w.unit,
                    role_text(w.role),
                    w.pass[0],
                    w.pass[1]
                );
                if let Some(e) = &w.engine {
                    let _ = writeln!(s, "     {e}");
                }
                for (warp, pc, state) in &w.warps {
                    let side = match image.program.ops.get(*pc as usize).map(|o| o.kind) {
                        Some(crate::exec::ops::Kind::BlockSync(side)) => side,
                        _ => None,
                    };
                    let what = match (state, side) {
                        (WarpState::AtBarrier(_), _) => "waits at bar.sync".to_string(),
                        (WarpState::AtBlockSync(_), Some(side)) => {
                            format!("waits at blocksync towards {side}")
                        }
                        (WarpState::AtBlockSync(_), None) => {
                            "waits at the global blocksync".to_string()
                        }
                        _ => "is blocked".to_string(),
                    };
                    let (at, _) = location(kernel, *pc);
                    let _ = writeln!(
                        s,
                        "     warp {warp} {what}: {} ({at})",
                        instr_line(kernel, *pc)
                    );
                }
                for l in &w.links {
                    let _ = writeln!(
                        s,
                        "     {} link with {}: producer has synced {} times, consumer {} times",
                        l.side, l.partner, l.arrivals[0], l.arrivals[1]
                    );
                }
            }
            let _ = writeln!(
                s,
                "   = help: every warp of a block must reach the same barriers, and both ends of a link must make the same number of syncs on it"
            );
        }
        Stop::Interrupted {
            cycle,
            blocks_done,
            blocks_total,
        } => {
            let _ = writeln!(
                s,
                "error: interrupted at cycle {} with {blocks_done} of {blocks_total} blocks finished",
                grouped(*cycle)
            );
        }
        Stop::InstructionLimit {
            limit,
            blocks_done,
            blocks_total,
        } => {
            let _ = writeln!(
                s,
                "error: the run issued --max-instructions {} warp instructions with {blocks_done} of {blocks_total} blocks finished",
                grouped(*limit)
            );
            let _ = writeln!(
                s,
                "   = help: raise --max-instructions, or look for a loop that never ends"
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
            let _ = writeln!(
                s,
                "   = help: raise --max-cycles, or look for a loop that never ends"
            );
        }
    }
    s
}

/// Labels for per-unit output.
pub fn unit_kind(label: UnitLabel) -> &'static str {
    match label {
        UnitLabel::Sm { .. } => "sm",
        UnitLabel::Iu { .. } => "iu",
        UnitLabel::Dma { .. } => "dma",
    }
}
