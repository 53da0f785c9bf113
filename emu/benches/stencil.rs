//! Emulator speed on the producer-consumer 2-D stencil (the targets):
//! wall time, simulated warp instructions and cycles, warp instructions per second
//! and peak memory, in timing and functional mode. Each case runs in a fresh
//! process so peak memory is its own.
//!
//! `cargo bench -p spu-emu --bench stencil` runs N = K = 256 and 512 on one and
//! two threads; `-- --large` adds N = K = 1024; `-- --threads 1,2,4` picks the
//! thread counts. `-- --cb-check [REPEATS]` measures the CB checker's cost at
//! N = K = 256 on one thread: runs with and without it, alternating, REPEATS times
//! each (default 7), and prints the medians. `-- --case N timing|functional
//! THREADS [nocheck]` runs one case (used internally).

use spu_emu::{LoadOptions, Machine, RunControl};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn run_case(n: u32, functional: bool, threads: usize, cb_check: bool) -> f64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/stencil2d/stencil_pc.spu");
    let kernel = spu_emu::read_kernel(&path).expect("stencil sample assembles");
    let machine = Machine::default();
    let options = LoadOptions {
        defines: vec![format!("N={n}"), format!("K={n}")],
        ..LoadOptions::default()
    };
    let mut image = spu_emu::load(kernel.module, &machine, &options).expect("loads");
    let control = RunControl {
        functional,
        threads,
        cb_check,
        ..RunControl::default()
    };
    let start = Instant::now();
    let result = spu_emu::simulate(&mut image, &machine, control, &mut |_| {}).expect("runs");
    let secs = start.elapsed().as_secs_f64();
    let warp: u64 = result.units.iter().map(|u| u.issued).sum();
    println!(
        "| {n} | {} | {threads} | {secs:.2} s | {warp} | {} | {:.2} M/s | {:.0} MiB |",
        if functional { "functional" } else { "timing" },
        if functional {
            "-".to_string()
        } else {
            result.cycles.to_string()
        },
        warp as f64 / secs / 1e6,
        peak_rss_mib()
    );
    secs
}

/// Runs one case in a fresh process; returns its wall time.
fn child(n: u32, mode: &str, check: bool) -> f64 {
    let me = std::env::current_exe().expect("bench binary path");
    let mut args = vec![
        "--case".to_string(),
        n.to_string(),
        mode.to_string(),
        "1".to_string(),
    ];
    if !check {
        args.push("nocheck".into());
    }
    let out = Command::new(&me).args(&args).output().expect("case runs");
    assert!(out.status.success(), "case N={n} {mode} failed");
    let line = String::from_utf8_lossy(&out.stdout);
    line.split('|')
        .nth(4)
        .and_then(|w| w.trim().trim_end_matches(" s").parse().ok())
        .expect("wall time in the case's row")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The CB checker's cost: N = K = 256, with and without, alternating.
fn cb_check_cost(repeats: usize) {
    println!(
        "CB checker cost, stencil_pc N = K = 256, spu-4x4, median of {repeats} alternating runs"
    );
    println!("| mode | checker on | checker off | cost |");
    println!("|---|---|---|---|");
    for mode in ["timing", "functional"] {
        let (mut on, mut off) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            on.push(child(256, mode, true));
            off.push(child(256, mode, false));
        }
        let (on, off) = (median(on), median(off));
        println!(
            "| {mode} | {on:.3} s | {off:.3} s | {:+.1}% |",
            (on / off - 1.0) * 100.0
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--case") {
        let n = args[i + 1].parse().expect("N");
        let threads = args[i + 3].parse().expect("threads");
        let check = args.get(i + 4).is_none_or(|a| a != "nocheck");
        run_case(n, args[i + 2] == "functional", threads, check);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--cb-check") {
        let repeats = args.get(i + 1).and_then(|r| r.parse().ok()).unwrap_or(7);
        cb_check_cost(repeats);
        return;
    }
    let thread_counts: Vec<usize> = match args.iter().position(|a| a == "--threads") {
        Some(i) => args[i + 1]
            .split(',')
            .map(|t| t.parse().expect("--threads takes a list like 1,2"))
            .collect(),
        None => vec![1, 2],
    };
    let sizes: &[u32] = if args.iter().any(|a| a == "--large") {
        &[256, 512, 1024]
    } else {
        &[256, 512]
    };
    println!("stencil_pc, N = K, spu-4x4 (IUs, overlapped passes)");
    println!(
        "| N | mode | threads | wall | warp instructions | cycles | warp-instr/s | peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let me = std::env::current_exe().expect("bench binary path");
    for &n in sizes {
        for mode in ["timing", "functional"] {
            for &threads in &thread_counts {
                let status = Command::new(&me)
                    .args(["--case", &n.to_string(), mode, &threads.to_string()])
                    .status()
                    .expect("case runs");
                assert!(status.success(), "case N={n} {mode} {threads} failed");
            }
        }
    }
}
