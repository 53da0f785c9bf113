//! The data caches of GPU machines against hand-computed counts: streaming (every
//! line misses once), reuse within a line, conflict misses (more lines in one set
//! than it has ways), write-through stores and write-back of dirty lines, MSHR
//! merging of two warps missing on one line, cache operators, the DRAM-side
//! energy counters following the traffic after the caches, both L2 write-miss
//! policies (GPGPU-Sim 3.x's fetch-on-write, 4.x's lazy allocation), the write-back
//! of dirty L2 lines when the kernel ends, and no caches on the SPU.

use spu_emu::Machine;
use spu_emu::observe::counters::Component;
use spu_emu::observe::outcome::{CacheLevel, CacheTotals};
use spu_tests::{Ran, run_with};

/// One SM of the GTX 480 preset (16 KiB 4-way L1, 768 KiB L2, 128-byte lines) with
/// `sets` applied.
fn gpu(sets: &[&str]) -> Machine {
    let mut m = spu_emu::machine::preset("gtx480").unwrap();
    m.set("grid.cols=1").unwrap();
    for s in sets {
        m.set(s).unwrap();
    }
    m
}

/// A kernel of `threads` threads running `body` with `%r2` = `src` + 4 x thread
/// index and `%r3` = `out` + 4 x thread index. `src` (64 KiB) holds zeros, so a
/// load's value added to an address changes nothing but orders the next access
/// after the load's data.
fn kernel(threads: u32, body: &str) -> String {
    format!(
        ".global .u32 src[16384] = zeros;\n.global .u32 out[16384] = zeros;\n\
         .launch grid(1, 1) block({threads});\n\
         .entry caches {{\n    .reg .u32 %r<12>;\n    .reg .pred %p<2>;\n\
         mov.u32 %r0, %tid.x;\n    shl.b32 %r1, %r0, 2;\n\
         mov.u32 %r2, src;\n    add.u32 %r2, %r2, %r1;\n\
         mov.u32 %r3, out;\n    add.u32 %r3, %r3, %r1;\n{body}    exit;\n}}\n"
    )
}

/// Loads at byte offsets `offsets` from `%r2`, each after the previous one's data.
fn chained_loads(offsets: &[u32]) -> String {
    chained("ld.global.u32", offsets)
}

/// `chained_loads` with the load instruction `ld`.
fn chained(ld: &str, offsets: &[u32]) -> String {
    offsets
        .iter()
        .map(|o| format!("    {ld} %r4, [%r2+{o}];\n    add.u32 %r2, %r2, %r4;\n"))
        .collect()
}

fn run(m: &Machine, threads: u32, body: &str) -> (Ran, CacheTotals) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("caches.spu");
    std::fs::write(&path, kernel(threads, body)).unwrap();
    let ran = run_with(&path, m, &[]);
    let caches = ran.result.caches.expect("the GTX 480 has caches");
    (ran, caches)
}

/// (hits, misses, MSHR merges) of a level.
fn hmm(l: &CacheLevel) -> (u64, u64, u64) {
    (l.hits, l.misses, l.mshr_merges)
}

#[test]
fn streaming_misses_every_line_once() {
    // Sixteen warp-wide loads of consecutive 128-byte lines.
    let offsets: Vec<u32> = (0..16).map(|i| 128 * i).collect();
    let (_, c) = run(&gpu(&[]), 32, &chained_loads(&offsets));
    assert_eq!(hmm(&c.l1), (0, 16, 0));
    assert_eq!(hmm(&c.l2), (0, 16, 0));
    assert_eq!((c.dram_read_lines, c.dram_write_lines), (16, 0));
}

#[test]
fn reuse_within_a_line_hits() {
    // Four loads of one line, each after the previous one's data; then a load
    // of another word of the same line by half the warp.
    let body = format!(
        "{}    setp.lt.u32 %p1, %r0, 16;\n    @%p1 ld.global.u32 %r5, [%r2+64];\n",
        chained_loads(&[0, 0, 0, 0])
    );
    let (_, c) = run(&gpu(&[]), 32, &body);
    assert_eq!(hmm(&c.l1), (4, 1, 0));
    assert_eq!(hmm(&c.l2), (0, 1, 0));
    assert_eq!(c.dram_read_lines, 1);
}

#[test]
fn more_lines_in_a_set_than_ways_miss_every_time() {
    // A 1 KiB 2-way L1 of 128-byte lines has 4 sets: lines 512 bytes apart share
    // one. Three of them read twice in turn, LRU: every access misses in L1; the
    // L2 misses the first round and hits the second.
    let m = gpu(&["cache.l1_kib=1", "cache.l1_ways=2"]);
    let (_, c) = run(&m, 32, &chained_loads(&[0, 512, 1024, 0, 512, 1024]));
    assert_eq!(hmm(&c.l1), (0, 6, 0));
    assert_eq!(hmm(&c.l2), (3, 3, 0));
    assert_eq!(c.dram_read_lines, 3);
    // With three ways they fit.
    let m = gpu(&["cache.l1_kib=3", "cache.l1_ways=3"]);
    let (_, c) = run(&m, 32, &chained_loads(&[0, 512, 1024, 0, 512, 1024]));
    assert_eq!(hmm(&c.l1), (3, 3, 0), "3 KiB, 3 ways: 8 sets, no conflict");
}

#[test]
fn stores_write_through_the_l1_and_back_from_the_l2() {
    // Load a line (L1 and L2 allocate it), store to it (the L1 drops it, the L2
    // takes the write), load it again: the L1 misses, the L2 hits.
    let body = "    ld.global.u32 %r4, [%r3];\n    add.u32 %r3, %r3, %r4;\n\
                    st.global.u32 [%r3], %r0;\n\
                    ld.global.u32 %r4, [%r3];\n    add.u32 %r3, %r3, %r4;\n";
    let (ran, c) = run(&gpu(&[]), 32, body);
    assert_eq!(hmm(&c.l1), (0, 2, 0));
    assert_eq!(c.l1.bypasses, 1, "the store passes the L1");
    assert_eq!(hmm(&c.l2), (2, 1, 0), "the store and the reload hit");
    // The line the store dirtied goes back to DRAM when the kernel ends.
    assert_eq!((c.dram_read_lines, c.dram_write_lines), (1, 1));
    assert_eq!(c.end_writeback_lines, 1);
    assert_eq!(ran.out_u32("out")[..32], (0..32).collect::<Vec<u32>>());
    // A 1 KiB one-bank 2-way L2 (4 sets): three stored lines 512 bytes apart
    // share a set, so the third evicts the first, dirty: one write-back, and the
    // two left dirty go back at the end. Stores allocate without reading (4.x's
    // lazy fetch-on-read).
    let small = ["cache.l2_kib=1", "cache.l2_banks=1", "cache.l2_ways=2"];
    let m = gpu(&[&small[..], &["cache.l2_write_miss=allocate"]].concat());
    let body = "    st.global.u32 [%r3], %r0;\n    st.global.u32 [%r3+512], %r0;\n\
                    st.global.u32 [%r3+1024], %r0;\n";
    let (_, c) = run(&m, 32, body);
    assert_eq!(hmm(&c.l2), (0, 3, 0));
    assert_eq!(c.l2.writebacks, 1);
    assert_eq!((c.dram_read_lines, c.dram_write_lines), (0, 1 + 2));
    assert_eq!(c.end_writeback_lines, 2);
    assert_eq!(c.l1.bypasses, 3);
    // GPGPU-Sim 3.x's write-allocate (the preset): each store that misses writes
    // through to DRAM and fetches its line, which arrives clean, so the eviction
    // writes nothing back and nothing is dirty at the end.
    let (_, c) = run(&gpu(&small), 32, body);
    assert_eq!(hmm(&c.l2), (0, 3, 0));
    assert_eq!(c.l2.writebacks, 0);
    assert_eq!((c.dram_read_lines, c.dram_write_lines), (3, 3));
    assert_eq!(c.end_writeback_lines, 0);
}

#[test]
fn dirty_l2_lines_are_written_back_when_the_kernel_ends() {
    // 32 warps store a line each, then load it again: under the lazy policy every
    // line is dirty at the end, and the run lasts until the last is written back.
    let body = "    st.global.u32 [%r3], %r0;\n";
    let lazy = gpu(&["cache.l2_write_miss=allocate"]);
    let (ran, c) = run(&lazy, 1024, body);
    assert_eq!(c.end_writeback_lines, 32);
    assert_eq!(c.dram_write_lines, 32);
    // Without the write-back (a huge L2 write-back would be the same), the run
    // ends when the last store lands; the write-back adds at least its DRAM
    // latency.
    let (fetch, f) = run(&gpu(&[]), 1024, body);
    assert_eq!(f.end_writeback_lines, 0, "3.x: written through, clean");
    assert!(
        ran.result.cycles >= u64::from(lazy.dram_latency),
        "{} cycles",
        ran.result.cycles
    );
    assert_eq!(fetch.out_u32("out"), ran.out_u32("out"));
}

#[test]
fn two_warps_missing_on_one_line_share_the_miss() {
    // Both warps of a 64-thread block load the first 128 bytes of `src` at once.
    let body = "    and.b32 %r1, %r1, 127;\n    mov.u32 %r2, src;\n    add.u32 %r2, %r2, %r1;\n\
                    ld.global.u32 %r4, [%r2];\n    add.u32 %r4, %r4, 1;\n\
                    st.global.u32 [%r3], %r4;\n";
    let (ran, c) = run(&gpu(&[]), 64, body);
    assert_eq!(hmm(&c.l1), (0, 1, 1), "one miss, one MSHR merge");
    assert_eq!(c.l1.bypasses, 2, "two stores");
    assert_eq!(
        c.l2.misses,
        1 + 2,
        "one line loaded; two stored lines written through and fetched"
    );
    assert_eq!(c.dram_read_lines, 1 + 2);
    assert_eq!(ran.out_u32("out")[..64], [1; 64]);
}

#[test]
fn cache_operators_choose_the_levels() {
    // .ca (the default) and .nc use both levels, .cg and .volatile skip the L1,
    // .cv skips both.
    let twice = |ld: &str| chained(ld, &[0, 0]);
    for ld in ["ld.global.ca.u32", "ld.global.nc.u32"] {
        let (_, ca) = run(&gpu(&[]), 32, &twice(ld));
        assert_eq!((hmm(&ca.l1), hmm(&ca.l2)), ((1, 1, 0), (0, 1, 0)), "{ld}");
    }
    for ld in ["ld.global.cg.u32", "ld.volatile.global.u32"] {
        let (_, cg) = run(&gpu(&[]), 32, &twice(ld));
        assert_eq!(
            (hmm(&cg.l1), cg.l1.bypasses, hmm(&cg.l2)),
            ((0, 0, 0), 2, (1, 1, 0)),
            "{ld}"
        );
    }
    let (_, cv) = run(&gpu(&[]), 32, &twice("ld.global.cv.u32"));
    assert_eq!((hmm(&cv.l1), hmm(&cv.l2)), ((0, 0, 0), (0, 0, 0)));
    assert_eq!(cv.dram_read_lines, 2, "DRAM each time");
    // A 1 KiB 8-way L1 is one set. Line 0, then eight others, then line 0
    // again: normal lines push line 0 out (LRU); streaming (.cs) ones replace
    // each other and leave it.
    let m = gpu(&["cache.l1_kib=1", "cache.l1_ways=8"]);
    let others: Vec<u32> = (1..=8).map(|i| 128 * i).collect();
    for (ld, hits) in [("ld.global.u32", 0), ("ld.global.cs.u32", 1)] {
        let body = format!(
            "{}{}{}",
            chained_loads(&[0]),
            chained(ld, &others),
            chained_loads(&[0])
        );
        let (_, c) = run(&m, 32, &body);
        assert_eq!(hmm(&c.l1), (hits, 10 - hits, 0), "{ld}");
    }
}

/// (`NOCP`, `MCP`, `DRAMP`) of the run, and (`NOCP`, `DRAMP`) of each instruction
/// that has any, in address order.
fn dram_side(ran: &Ran) -> ([u64; 3], Vec<(u64, u64)>) {
    let run = [Component::Nocp, Component::Mcp, Component::Dramp]
        .map(|k| ran.result.units.iter().map(|u| u.counters.get(k)).sum());
    let pcs = ran
        .result
        .pcs
        .iter()
        .map(|p| {
            let c = &p.components;
            (c.get(Component::Nocp), c.get(Component::Dramp))
        })
        .filter(|&n| n != (0, 0))
        .collect();
    (run, pcs)
}

#[test]
fn dram_energy_counts_the_traffic_after_the_caches() {
    // Two warps load one line: the first misses in the L1 and sends it to the L2,
    // which reads it from DRAM; the second merges into the L1's miss and sends
    // nothing. Each warp then stores its own line: two lines sent, allocated in
    // the L2 without a DRAM read (the lazy policy), still there (dirty) when the
    // run ends, then written back: no instruction's counters have those two.
    let body = "    and.b32 %r1, %r1, 127;\n    mov.u32 %r2, src;\n    add.u32 %r2, %r2, %r1;\n\
                    ld.global.u32 %r4, [%r2];\n    add.u32 %r4, %r4, 1;\n\
                    st.global.u32 [%r3], %r4;\n";
    let lazy = ["cache.l2_write_miss=allocate"];
    let (ran, c) = run(&gpu(&lazy), 64, body);
    assert_eq!((c.dram_read_lines, c.dram_write_lines), (1, 2));
    assert_eq!(c.end_writeback_lines, 2);
    assert_eq!(dram_side(&ran), ([3, 1, 1], vec![(1, 1), (2, 0)]));
    // Uncached (.cv) loads of one line, twice: two lines sent, two DRAM reads.
    let (ran, _) = run(&gpu(&lazy), 32, &chained("ld.global.cv.u32", &[0, 0]));
    assert_eq!(dram_side(&ran), ([2, 2, 2], vec![(1, 1), (1, 1)]));
    // Three stored lines in one set of a 2-way L2: the third evicts the first,
    // and its write-back counts for the third store.
    let m = gpu(&[
        "cache.l2_kib=1",
        "cache.l2_banks=1",
        "cache.l2_ways=2",
        "cache.l2_write_miss=allocate",
    ]);
    let body = "    st.global.u32 [%r3], %r0;\n    st.global.u32 [%r3+512], %r0;\n\
                    st.global.u32 [%r3+1024], %r0;\n";
    let (ran, _) = run(&m, 32, body);
    assert_eq!(dram_side(&ran), ([3, 1, 1], vec![(1, 0), (1, 0), (1, 1)]));
}

#[test]
fn the_spu_has_no_caches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.spu");
    std::fs::write(&path, kernel(32, &chained_loads(&[0, 0]))).unwrap();
    let mut m = Machine::default();
    m.set_grid("1x1").unwrap();
    assert!(run_with(&path, &m, &[]).result.caches.is_none());
}
