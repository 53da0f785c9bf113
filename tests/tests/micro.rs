//! The microbenchmarks of `samples/micro/` hold the emulator to the figures its
//! machine configuration implies: pointer-chasing latencies of the L1, the L2 and
//! DRAM, shared-memory bank conflicts of every stride, the issue rate of each
//! pipeline, MSHR limits and merging, and occupancy limits. `docs/spu-vs-gpu.md`
//! shows the same table with GPGPU-Sim 3.x's figures.

use spu_emu::Machine;
use spu_emu::machine::preset;
use spu_tests::{Ran, repo_path, run_with};

fn micro(name: &str, m: &Machine, defines: &[&str]) -> Ran {
    run_with(&repo_path(&format!("samples/micro/{name}.spu")), m, defines)
}

fn gtx480() -> Machine {
    preset("gtx480").unwrap()
}

/// Cycles of one pointer-chasing step: the serving level's latency plus the `add`
/// that forms the next address.
fn chase_step(m: &Machine, stride: u32, level: u32) -> u64 {
    let ran = micro(
        "chase",
        m,
        &[&format!("STRIDE={stride}"), &format!("LEVEL={level}")],
    );
    let out = ran.out_u32("out");
    assert_eq!(out[1], 24 * stride, "the chain took 24 steps");
    assert_eq!(out[0] % 16, 0, "16 equal steps: {}", out[0]);
    u64::from(out[0] / 16)
}

#[test]
fn pointer_chasing_measures_each_level_latency() {
    for name in ["gtx480", "gtx480-1cta", "gtx480-sm2"] {
        let m = preset(name).unwrap();
        let alu = u64::from(m.lat_int_alu);
        // A 128-byte line at the configured bandwidth takes one cycle to transfer.
        let line = 1;
        let dram = u64::from(m.dram_latency) + line + alu;
        assert_eq!(
            chase_step(&m, 0, 0),
            u64::from(m.l1_latency) + alu,
            "{name}: L1"
        );
        assert_eq!(
            chase_step(&m, 0, 1),
            u64::from(m.l2_latency) + alu,
            "{name}: L2"
        );
        assert_eq!(chase_step(&m, 128, 1), dram, "{name}: DRAM past both");
        assert_eq!(chase_step(&m, 128, 0), dram, "{name}: DRAM, L1 missed");
    }
    // GPGPU-Sim 3.x's composition: 24 + 4, 134 + 4, 255 + 1 + 4.
    let m = gtx480();
    assert_eq!(
        (
            chase_step(&m, 0, 0),
            chase_step(&m, 0, 1),
            chase_step(&m, 128, 1)
        ),
        (28, 138, 260)
    );
    // An SPU has no caches: every step goes to DRAM.
    let spu = Machine::default();
    assert_eq!(chase_step(&spu, 0, 0), u64::from(spu.dram_latency) + 1 + 4);
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[test]
fn shared_memory_bank_conflicts_cost_one_wave_each() {
    for name in ["gtx480", "spu-4x4"] {
        let m = preset(name).unwrap();
        let interval = m.mem_interval;
        for stride in [0, 1, 2, 3, 4, 5, 8, 16, 17, 32] {
            let ran = micro("banks", &m, &[&format!("STRIDE={stride}")]);
            // STRIDE 0 is a broadcast (one word); otherwise gcd(STRIDE, 32) words
            // per bank.
            let waves = if stride == 0 { 1 } else { gcd(stride, 32) };
            let per_load = waves * interval;
            // 16 loads back to back; at one cycle a load, the clock read takes an
            // issue cycle of its own.
            let want = if per_load == 1 { 17 } else { 16 * per_load };
            assert_eq!(
                ran.out_u32("out")[0],
                want,
                "{name}: stride {stride}, {waves} waves"
            );
        }
    }
    // GPGPU-Sim 3.x's `-gpgpu_shmem_warp_parts 1`: a conflict-free warp in one cycle.
    assert_eq!(gtx480().mem_interval, 1);
}

#[test]
fn each_pipeline_issues_at_its_configured_rate() {
    let m = gtx480();
    let classes = [
        (0, m.core_pipes, m.fpu_interval),
        (1, m.core_pipes, m.int_mul_interval),
        (2, m.sfu_pipes, m.sfu_interval),
        (3, m.sfu_pipes, m.dp_interval),
    ];
    for (class, pipes, interval) in classes {
        let ran = micro("issue", &m, &[&format!("CLASS={class}")]);
        let out = ran.out_u32("out");
        let span = out[1].max(out[3]) - out[0].min(out[2]);
        // 128 warp instructions of two warps, one issue per scheduler and cycle.
        let want = (128.0 * (f64::from(interval) / f64::from(pipes)).max(0.5)) as u32;
        assert!(
            span.abs_diff(want) <= 8,
            "class {class}: {span} cycles, {want} configured"
        );
    }
}

#[test]
fn l1_mshrs_limit_outstanding_misses_and_merge_same_line_accesses() {
    for (name, mshrs) in [("gtx480", 32), ("gtx480-sm2", 64)] {
        let m = preset(name).unwrap();
        assert_eq!(m.l1_mshrs, mshrs, "{name}");
        for lines in [16u32, 32, 40, 48] {
            let ran = micro("mshr", &m, &["MODE=0", &format!("LINES={lines}")]);
            let l1 = ran.result.caches.unwrap().l1;
            assert_eq!(l1.misses, u64::from(lines), "{name}: {lines} lines");
            assert_eq!(
                l1.mshr_stalls,
                u64::from(lines.saturating_sub(mshrs)),
                "{name}: {lines} lines"
            );
        }
    }
    for warps in [2u32, 4, 8] {
        let ran = micro("mshr", &gtx480(), &["MODE=1", &format!("WARPS={warps}")]);
        let l1 = ran.result.caches.unwrap().l1;
        assert_eq!((l1.misses, l1.mshr_merges), (1, u64::from(warps - 1)));
    }
}

#[test]
fn occupancy_is_set_by_the_scarcest_resource() {
    use spu_emu::machine::occupancy::Limit;
    let m = gtx480();
    for (threads, shared, blocks, limit) in [
        (64, 4, 8, Limit::Blocks),
        (256, 4, 6, Limit::Threads),
        (512, 4, 3, Limit::Threads),
        (64, 8720, 5, Limit::SharedMemory),
        (64, 17168, 2, Limit::SharedMemory),
        (64, 24577, 1, Limit::SharedMemory),
    ] {
        let ran = micro(
            "occupancy",
            &m,
            &[&format!("THREADS={threads}"), &format!("SHARED={shared}")],
        );
        let o = ran.result.occupancy.unwrap();
        assert_eq!(
            (o.blocks_per_sm, o.limit),
            (blocks, limit),
            "{threads} threads, {shared} bytes"
        );
        assert_eq!(o.peak_blocks_per_sm, blocks, "240 blocks fill every SM");
    }
}

/// `spu-asm -v` promises the occupancy the emulator's run then has: the blocks per
/// SM and the limit it names agree with `occupancy` in `spu-emu --stats`.
#[test]
fn the_assemblers_occupancy_is_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let sample = repo_path("samples/micro/occupancy.spu");
    for (threads, shared) in [(64, 4), (256, 4), (64, 8720), (64, 24577)] {
        let defines = [
            "-D".to_string(),
            format!("THREADS={threads}"),
            "-D".to_string(),
            format!("SHARED={shared}"),
        ];
        let asm = std::process::Command::new(spu_tests::binary("spu-asm"))
            .arg(&sample)
            .args(["--check", "-v", "--machine", "gtx480"])
            .args(&defines)
            .output()
            .unwrap();
        assert!(asm.status.success(), "{asm:?}");
        let text = String::from_utf8(asm.stdout).unwrap();
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("occupancy"))
            .unwrap_or_else(|| panic!("no occupancy line:\n{text}"));
        let stats = dir.path().join(format!("{threads}-{shared}.json"));
        let emu = std::process::Command::new(spu_tests::binary("spu-emu"))
            .arg(&sample)
            .args(["--machine", "gtx480", "-q", "--stats"])
            .arg(&stats)
            .args(&defines)
            .output()
            .unwrap();
        assert!(emu.status.success(), "{emu:?}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        let blocks = json["occupancy"]["blocks_per_sm"].as_u64().unwrap();
        let key = json["occupancy"]["limit"].as_str().unwrap();
        let limit = spu_emu::machine::occupancy::Limit::ALL
            .into_iter()
            .find(|l| l.key() == key)
            .unwrap();
        let blocks_text = if blocks == 1 {
            "1 block per SM".to_string()
        } else {
            format!("{blocks} blocks per SM")
        };
        assert!(
            line.contains(&format!("occupancy      {blocks_text},"))
                && line.contains(&format!("limited by {};", limit.resource())),
            "{threads} threads, {shared} bytes: `spu-asm -v` says `{line}`, the run {blocks} per SM limited by `{key}`"
        );
    }
}
