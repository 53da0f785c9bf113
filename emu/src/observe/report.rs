//! What users read after a run: the run summary, and number formats shared by the
//! tools' reports (run-time errors are rendered by [`crate::observe::stopped`]).

use crate::load::Image;
use crate::machine::Machine;
use crate::machine::UnitLabel;
use crate::observe::outcome::RunResult;
use std::fmt::Write;

pub use spu_io::numbers::grouped;

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
    let _ = writeln!(
        s,
        "kernel     {}",
        spu_io::quote::escape(&image.module.name)
    );
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
    let _ = writeln!(s, "resources  {}", image.resources().line());
    if !machine.is_gpu() {
        let _ = writeln!(
            s,
            "passes     {}x{} ({})",
            result.passes[0], result.passes[1], machine.pass_mode
        );
    }
    if let Some(idle) = idle_sms(l.grid, machine) {
        let _ = writeln!(s, "sms        {idle}");
    }
    if let Some(o) = &result.occupancy {
        let _ = writeln!(
            s,
            "occupancy  {} per SM ({} each; limited by {}, `{}`), {:.1}% of {} warps achieved",
            crate::machine::plural(o.blocks_per_sm, "block"),
            crate::machine::plural(o.warps_per_block, "warp"),
            o.limit,
            o.limit.key(),
            o.achieved * 100.0,
            machine.sm_max_warps
        );
    }
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
        "off-chip   {} words: {} loaded, {} stored ({} spilled, {} restored)",
        grouped(t.load_words + t.store_words),
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
    if !machine.is_gpu() {
        let _ = writeln!(
            s,
            "cb         {} words read, {} written; {} link rendezvous, {} global blocksyncs",
            grouped(result.cb.reads),
            grouped(result.cb.writes),
            grouped(result.link_syncs),
            grouped(result.global_syncs)
        );
    }
    s
}

/// When a launch of `grid` blocks leaves SMs of `machine` without a block: how many
/// it uses, why, and how to use more.
pub fn idle_sms(grid: [u32; 2], machine: &Machine) -> Option<String> {
    let [gx, gy] = grid.map(u64::from);
    let (p, q) = (u64::from(machine.grid_cols), u64::from(machine.grid_rows));
    let (total, blocks) = (p * q, gx * gy);
    if machine.is_gpu() {
        return (blocks < total).then(|| {
            format!(
                "the launch uses {blocks} of {total} SMs: it has {}; hint: split the work into at least {total} blocks to use them all",
                crate::machine::plural(blocks as u32, "block")
            )
        });
    }
    // Block (bx, by) runs on SM (bx % P, by % Q).
    let (cols, rows) = (gx.min(p), gy.min(q));
    let used = cols * rows;
    if used >= total {
        return None;
    }
    let mut text = format!(
        "the launch uses {used} of {total} SMs: its {gx}x{gy} blocks cover {cols} of {p} SM columns and {rows} of {q} rows"
    );
    // The same number of blocks in the shape that covers the most SMs.
    let best = (1..=p.min(blocks))
        .filter(|a| blocks % a == 0)
        .map(|a| (a.min(p) * (blocks / a).min(q), a))
        .max();
    match best {
        Some((n, a)) if n > used => {
            let _ = write!(
                text,
                "; hint: launched as {a}x{} blocks (if the kernel's indexing allows), the same {blocks} would use {}",
                blocks / a,
                if n == total {
                    "every SM".to_string()
                } else {
                    format!("{n}")
                }
            );
        }
        _ => {
            let _ = write!(
                text,
                "; hint: `--grid {cols}x{rows}` models a machine of just the SMs it uses"
            );
        }
    }
    Some(text)
}

/// Labels for per-unit output.
pub fn unit_kind(label: UnitLabel) -> &'static str {
    match label {
        UnitLabel::Sm { .. } => "sm",
        UnitLabel::Iu { .. } => "iu",
        UnitLabel::Dma { .. } => "dma",
    }
}
