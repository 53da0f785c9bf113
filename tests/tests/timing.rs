//! Timing sanity: the cycle model behaves like the machine file says. A dependent
//! chain costs its class latency per instruction, an independent stream approaches
//! the issue limit, and a streaming kernel achieves (and is bounded by) the
//! configured DRAM bandwidth.

use spu_emu::Machine;
use spu_isa::TimingClass;
use spu_tests::{repo_path, run_with};
use std::path::PathBuf;

fn write_kernel(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(format!("{name}.spu"));
    std::fs::write(&path, text).unwrap();
    path
}

/// One warp running `n` copies of `instr`, each depending on the previous.
fn chain_kernel(instr: &str, n: usize) -> String {
    format!(
        ".global .u32 out[1] = zeros;\n.launch grid(1, 1) block(32) iu(32);\n\
         .entry chain {{\n    .reg .u32 %r<4>;\n    .reg .f32 %f<4>;\n\
         mov.u32 %r1, 3;\n    mov.f32 %f1, 1.5;\n{}\
         mov.u32 %r2, out;\n    st.global.u32 [%r2], %r1;\n    exit;\n}}\n",
        format!("    {instr}\n").repeat(n)
    )
}

fn one_sm() -> Machine {
    let mut m = Machine::default();
    m.set_grid("1x1").unwrap();
    m
}

#[test]
fn a_dependent_chain_costs_its_latency_per_instruction() {
    let dir = tempfile::tempdir().unwrap();
    let m = one_sm();
    for (instr, class) in [
        ("add.u32 %r1, %r1, 1;", TimingClass::IntAlu),
        ("mul.lo.u32 %r1, %r1, 3;", TimingClass::IntMul),
        ("fma.f32 %f1, %f1, %f1, %f1;", TimingClass::Fpu),
        ("sqrt.f32 %f1, %f1;", TimingClass::Sfu),
    ] {
        let cycles = |n| {
            let path = write_kernel(&dir, "chain", &chain_kernel(instr, n));
            run_with(&path, &m, &[]).result.cycles
        };
        let (short, long) = (cycles(50), cycles(250));
        let per_instr = (long - short) as f64 / 200.0;
        let latency = f64::from(m.latency(class));
        assert!(
            (per_instr - latency).abs() <= 0.05 * latency,
            "`{instr}`: {per_instr} cycles per dependent instruction, latency {latency}"
        );
    }
}

/// `warps` warps, each with eight independent accumulators.
fn stream_kernel(warps: u32, rounds: usize) -> String {
    let body: String = (0..rounds)
        .flat_map(|_| (0..8).map(|r| format!("    add.u32 %r{r}, %r{r}, 1;\n")))
        .collect();
    format!(
        ".global .u32 out[1] = zeros;\n.launch grid(1, 1) block({}) iu(32);\n\
         .entry independent {{\n    .reg .u32 %r<10>;\n{body}    exit;\n}}\n",
        warps * 32
    )
}

#[test]
fn an_independent_stream_approaches_the_issue_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_kernel(&dir, "independent", &stream_kernel(16, 40));
    for schedulers in [1u32, 2, 4] {
        let mut m = one_sm();
        m.set(&format!("sm.schedulers={schedulers}")).unwrap();
        let r = run_with(&path, &m, &[]).result;
        let issued: u64 = r.units.iter().map(|u| u.issued).sum();
        let ipc = issued as f64 / r.cycles as f64;
        // The limit: one instruction per scheduler, and core pipes / interval (the
        // final `exit`s need no pipe, hence the 1% allowance above it).
        let limit =
            f64::from(schedulers).min(f64::from(m.core_pipes) / f64::from(m.int_alu_interval));
        assert!(
            ipc >= 0.9 * limit && ipc <= 1.01 * limit,
            "{schedulers} schedulers: IPC {ipc:.3}, limit {limit}"
        );
    }
}

fn stream(m: &Machine) -> (u64, f64) {
    let ran = run_with(&repo_path("tests/timing/stream.spu"), m, &[]);
    assert_eq!(ran.out_u32("y"), ran.in_u32("x"), "the copy is exact");
    let t = &ran.result.traffic;
    let bytes = (t.load_transactions + t.store_transactions) * u64::from(m.transaction_bytes);
    (ran.result.cycles, bytes as f64 / ran.result.cycles as f64)
}

#[test]
fn a_streaming_kernel_is_bounded_by_dram_bandwidth() {
    let full = Machine::default();
    let (cycles, achieved) = stream(&full);
    let configured = full.dram_bytes_per_cycle();
    assert!(
        achieved >= 0.85 * configured && achieved <= configured,
        "achieved {achieved:.1} bytes/cycle of {configured:.1} configured"
    );
    let mut half = Machine::default();
    half.set(&format!(
        "memory.bandwidth_gbs={}",
        full.dram_bandwidth_gbs / 2.0
    ))
    .unwrap();
    let (half_cycles, _) = stream(&half);
    let ratio = half_cycles as f64 / cycles as f64;
    assert!(
        (1.8..=2.2).contains(&ratio),
        "halving the bandwidth scaled cycles by {ratio:.3}"
    );
}

#[test]
fn every_scheduler_cycle_is_an_issue_or_a_charged_stall() {
    for (sample, defines) in [
        ("samples/matmul.spu", &[][..]),
        ("samples/reduction.spu", &[][..]),
        ("samples/divergent.spu", &["N=300"][..]),
    ] {
        let m = Machine::default();
        let r = run_with(&repo_path(sample), &m, defines).result;
        for u in &r.units {
            let schedulers = if matches!(u.label, spu_emu::machine::UnitLabel::Sm { .. }) {
                m.sm_schedulers
            } else {
                m.iu_schedulers
            };
            let stalls: u64 = u.stalls.iter().sum();
            assert_eq!(
                u.issued + stalls,
                u64::from(schedulers) * u.code_cycles,
                "{sample}: {}",
                u.label
            );
        }
    }
}

/// One warp copying 16 or 8 bytes per thread with one vector or 64-bit load and
/// store.
fn wide_kernel(copy: &str, bytes: u32) -> String {
    let shift = bytes.trailing_zeros();
    format!(
        ".global .u32 src[128] = ramp(0, 1);\n.global .u32 out[128] = zeros;\n\
         .launch grid(1, 1) block(32) iu(32);\n\
         .entry wide {{\n    .reg .u32 %r<12>;\n    .reg .u64 %rd<2>;\n\
         mov.u32 %r0, %tid.x;\n    shl.b32 %r1, %r0, {shift};\n\
         mov.u32 %r2, src;\n    add.u32 %r2, %r2, %r1;\n\
         mov.u32 %r3, out;\n    add.u32 %r3, %r3, %r1;\n    {copy}\n    exit;\n}}\n"
    )
}

#[test]
fn vector_and_64_bit_accesses_queue_each_transaction_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = one_sm();
    // 22.4 GB/s at 700 MHz is 32 bytes, one 32-byte transaction, per cycle.
    m.set("memory.bandwidth_gbs=22.4").unwrap();
    m.set("memory.transaction_bytes=32").unwrap();
    for (copy, bytes) in [
        (
            "ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%r2];\n    st.global.v4.u32 [%r3], {%r4, %r5, %r6, %r7};",
            16,
        ),
        (
            "ld.global.u64 %rd1, [%r2];\n    st.global.u64 [%r3], %rd1;",
            8,
        ),
    ] {
        let path = write_kernel(&dir, "wide", &wide_kernel(copy, bytes));
        let ran = run_with(&path, &m, &[]);
        let t = &ran.result.traffic;
        // 32 lanes x `bytes` contiguous bytes in 32-byte transactions, each way.
        let n = u64::from(bytes);
        assert_eq!(
            (t.load_transactions, t.store_transactions),
            (n, n),
            "{copy}"
        );
        assert_eq!((t.load_words, t.store_words), (8 * n, 8 * n), "{copy}");
        // The channel moves each transaction once, one cycle each (not once per
        // 32-bit word of the access): 2n cycles.
        assert_eq!(ran.result.dram_busy_cycles, (2 * n) as f64, "{copy}");
        let copied = ran.out_u32("out");
        assert_eq!(
            copied[..(8 * n) as usize],
            ran.in_u32("src")[..(8 * n) as usize],
            "{copy}"
        );
    }
}
