//! PTX local memory end to end: `samples/cuda/local_nvcc.spu` and `local_clang.spu`
//! (per-thread arrays in the kernel's and a device function's frame, indexed by
//! computed values, reached through `%SPL`, by name and through generic addresses)
//! against a reference computed here, on the SPU, on `gtx480` and in functional
//! mode; and the assembler's refusals of what local memory cannot do here.

use spu_emu::Machine;
use spu_tests::repo_path;

/// Runs `file` on `machine` and returns the `(X, OUT)` buffers.
fn run(file: &str, machine: &Machine, functional: bool) -> (Vec<u32>, Vec<u32>) {
    let ran = spu_tests::run_in_mode(&repo_path(file), machine, &[], &[], functional);
    (ran.in_u32("X"), ran.out_u32("OUT"))
}

/// The kernel of the samples, in Rust.
fn reference(v: u32) -> u32 {
    let mut h = [0u32; 8];
    for k in 0..8 {
        h[((v >> (3 * k)) & 7) as usize] += k + 1;
    }
    let s = h
        .iter()
        .fold(0u32, |s, &x| s.wrapping_mul(31).wrapping_add(x));
    let t: Vec<u32> = (0..4).map(|k| v >> (8 * k)).collect();
    s.wrapping_add(t[(v & 3) as usize])
        .wrapping_add(t[((v >> 2) & 3) as usize])
}

#[test]
fn local_array_samples_match_a_reference_everywhere() {
    for file in [
        "samples/cuda/local_nvcc.spu",
        "samples/cuda/local_clang.spu",
    ] {
        for (name, machine, functional) in spu_tests::every_mode() {
            let (x, out) = run(file, &machine, functional);
            assert_eq!(x.len(), 1000, "{file} {name}");
            for i in 0..x.len() {
                assert_eq!(
                    out[i],
                    reference(x[i]),
                    "{file} {name}: OUT[{i}] of X = {}",
                    x[i]
                );
            }
        }
    }
}

/// The assembler's messages for `src` (a `.ptx` file), which must not assemble.
fn refusal(src: &str) -> String {
    match spu_asm::assemble_module("k.ptx", src) {
        Ok(_) => panic!("assembled:\n{src}"),
        Err(d) => d.render("k.ptx", src),
    }
}

const HEAD: &str = ".version 7.0\n.target sm_52\n.address_size 64\n";

#[test]
fn a_local_address_given_to_a_device_function_is_refused() {
    let src = format!(
        "{HEAD}.func (.param .b32 func_retval0) g(.param .b64 g_param_0)
{{
\t.reg .b32 %r<2>;
\tmov.u32 %r1, 0;
\tst.param.b32 [func_retval0+0], %r1;
\tret;
}}
.visible .entry k()
{{
\t.local .align 4 .b8 __local_depot0[8];
\t.reg .b64 %SP;
\t.reg .b64 %SPL;
\t.reg .b64 %rd<3>;
\t.reg .b32 %r<3>;
\tmov.u64 %SPL, __local_depot0;
\tcvta.local.u64 %SP, %SPL;
\tadd.u64 %rd1, %SP, 0;
\t{{
\t.param .b64 param0;
\tst.param.b64 [param0+0], %rd1;
\t.param .b32 retval0;
\tcall.uni (retval0), g, (param0);
\tld.param.b32 %r1, [retval0+0];
\t}}
\tret;
}}
"
    );
    let text = refusal(&src);
    assert!(
        text.contains("`g` is given the address of a local array"),
        "{text}"
    );
    assert!(text.contains("k.ptx:23:27"), "{text}");
}

#[test]
fn local_declarations_are_checked() {
    let body = |decl: &str| {
        format!(
            "{HEAD}.func f()\n{{\n\tret;\n}}\n.visible .entry k()\n{{\n\tcall.uni f;\n{decl}\n\tret;\n}}\n"
        )
    };
    for (decl, want) in [
        (
            "\t.local .b32 late;",
            "a local array is declared after a call",
        ),
        ("\t.local .pred p;", "local arrays cannot hold predicates"),
    ] {
        let text = refusal(&body(decl));
        assert!(text.contains(want), "{decl}: {text}");
    }
    let alone = |decl: &str| format!("{HEAD}.visible .entry k()\n{{\n{decl}\n\tret;\n}}\n");
    for (decl, want) in [
        (
            "\t.local .b8 big[5000];",
            "`big` does not fit in a thread's frame",
        ),
        (
            "\t.local .align 32 .b8 d[8];",
            "alignment `32` is not supported",
        ),
        ("\t.local .b32 z[0];", "dimension is 0"),
        (
            "\t.local .b32 twice[2];\n\t.local .b32 twice[2];",
            "`twice` is declared twice",
        ),
    ] {
        let text = refusal(&alone(decl));
        assert!(text.contains(want), "{decl}: {text}");
    }
}

/// A generic access through a register that holds no local address is still refused
/// (the assembler cannot tell its space).
#[test]
fn a_generic_access_of_an_unknown_space_is_refused() {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 k_param_0)\n{{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n\tld.param.u64 %rd1, [k_param_0];\n\tld.u32 %r1, [%rd1];\n\tret;\n}}\n"
    );
    let text = refusal(&src);
    assert!(text.contains("needs a state space"), "{text}");
}

/// A local index past the thread's local memory stops the run with the thread and
/// the offset named.
#[test]
fn a_local_index_out_of_range_names_the_thread_and_the_offset() {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u32 k_param_0)
{{
\t.local .align 4 .b8 __local_depot0[32];
\t.reg .b64 %SPL;
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<4>;
\tmov.u64 %SPL, __local_depot0;
\tld.param.u32 %r1, [k_param_0];
\tmov.u32 %r2, %tid.x;
\tmul.lo.s32 %r3, %r2, %r1;
\tmul.wide.u32 %rd1, %r3, 4;
\tadd.s64 %rd2, %SPL, %rd1;
\tst.local.u32 [%rd2], %r2;
\tret;
}}
"
    );
    let (module, _) = spu_asm::assemble_module("k.ptx", &src).unwrap();
    let machine = Machine::default();
    let options = spu_emu::LoadOptions {
        defines: vec!["k_param_0=1000".into()],
        ..Default::default()
    };
    let mut image = spu_emu::load(module, &machine, &options).unwrap();
    let stop = spu_emu::simulate(&mut image, &machine, Default::default(), &mut |_| {})
        .expect_err("thread 17 stores past 64 KiB");
    let text = format!("{stop:?}");
    assert!(text.contains("LocalOutOfRange"), "{text}");
    assert!(text.contains("addr: 68000"), "{text}");
    assert!(text.contains("lane: 17"), "{text}");
}

/// The stats count local memory words apart from off-chip traffic: the local
/// sample's counts follow from its kernel (per thread: the histogram's 8 stores,
/// 8 loads and 8 stores of its updates, 8 loads of its read-back, the call's
/// argument and result, and `mix`'s 4 stores and 2 loads), on every machine and
/// mode; a kernel without local memory has no `local` key.
#[test]
fn local_words_are_counted_apart_in_the_stats() {
    use spu_emu::observe::stats::Stats;
    let gtx480 = spu_emu::machine::preset("gtx480").unwrap();
    for (machine, functional) in [
        (Machine::default(), false),
        (gtx480, false),
        (Machine::default(), true),
    ] {
        let control = spu_emu::RunControl {
            functional,
            ..Default::default()
        };
        let path = repo_path("samples/cuda/local_nvcc.spu");
        let s = spu_emu::cli::session::run_file(&path, &machine, &Default::default(), control)
            .unwrap_or_else(|e| panic!("{e}"));
        let stats = Stats::new(&s.result, &s.image, &machine);
        let local = stats.local.clone().expect("local traffic");
        assert_eq!(
            (local.load_words, local.store_words),
            (20 * 1000, 22 * 1000)
        );
        let json = stats.to_json_text();
        assert!(json.contains("\"local\""));
        let path = repo_path("samples/matmul.spu");
        let s = spu_emu::cli::session::run_file(&path, &machine, &Default::default(), control)
            .unwrap_or_else(|e| panic!("{e}"));
        let stats = Stats::new(&s.result, &s.image, &machine);
        assert!(stats.local.is_none());
        assert!(!stats.to_json_text().contains("\"local\""));
    }
}

/// One warp stores its thread index to a local word, reads it back, and reads it
/// again through an address that depends on the first read (so the second read
/// waits for the first one's line): lane `l` uses local word `l * STRIDE`.
fn probe_kernel() -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u32 k_param_0)
{{
\t.local .align 4 .b8 __local_depot0[128];
\t.reg .b64 %SPL;
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<6>;
\tmov.u64 %SPL, __local_depot0;
\tld.param.u32 %r1, [k_param_0];
\tmov.u32 %r2, %tid.x;
\tmul.lo.s32 %r3, %r2, %r1;
\tmul.wide.u32 %rd1, %r3, 4;
\tadd.s64 %rd2, %SPL, %rd1;
\tst.local.u32 [%rd2], %r2;
\tld.local.u32 %r4, [%rd2];
\tand.b32 %r5, %r4, 0;
\tcvt.u64.u32 %rd3, %r5;
\tadd.s64 %rd4, %rd2, %rd3;
\tld.local.u32 %r6, [%rd4];
\tret;
}}
"
    )
}

/// The stats of the probe kernel with `STRIDE = stride`, one block of 32 threads.
fn probe_stats(stride: u32, machine: &Machine) -> spu_emu::observe::stats::Stats {
    let src = probe_kernel();
    let (module, _) = spu_asm::assemble_module("k.ptx", &src).unwrap();
    let options = spu_emu::LoadOptions {
        defines: vec![format!("k_param_0={stride}")],
        ..Default::default()
    };
    let mut image = spu_emu::load(module, machine, &options).unwrap();
    let result = spu_emu::simulate(&mut image, machine, Default::default(), &mut |_| {})
        .unwrap_or_else(|stop| panic!("{stop:?}"));
    spu_emu::observe::stats::Stats::new(&result, &image, machine)
}

/// On `gtx480` local memory is cached DRAM traffic, laid out per thread
/// interleaved (GPGPU-Sim's mapping): thread `t`'s local word `d` is at
/// `(d * N + t) * 4` past the local area's start, where `N` = 32 threads x 8
/// resident blocks x 15 SMs = 3840. Hand-computed counts (32-byte transactions,
/// 128-byte lines, 16 KiB 4-way L1 of 32 sets, the L2's write-miss policy
/// "fetch": a store that misses writes through to DRAM and fetches the line clean):
///
/// - Coalesced (`STRIDE = 0`, every lane at word 0): each access is 128 contiguous
///   bytes, 4 transactions and 1 line. The store misses in the L1 (no allocation)
///   and in the L2 (1 DRAM write, 1 DRAM read); the first load misses in the L1
///   and merges into the L2's outstanding fetch; the second hits in the L1.
/// - Strided (`STRIDE = 1`, lane `l` at word `l`): lanes are `N * 4` bytes (120
///   lines) apart, 32 transactions and 32 lines per access. The store misses 32
///   times in each cache (32 DRAM writes and reads), the first load misses 32
///   times in the L1 and merges 32 times in the L2. Its lines fall in 4 of the
///   L1's sets (`120 l mod 32`), 8 to a 4-way set, so the re-read finds none of
///   them (least recently used first, each miss evicts the line read next): 32
///   more L1 misses, 32 L2 hits.
#[test]
fn local_memory_on_a_gpu_goes_through_the_caches_as_hand_computed() {
    let gtx480 = spu_emu::machine::preset("gtx480").unwrap();
    // (stride, local load and store transactions, L1 hits, misses, L2 hits,
    // misses, merges, DRAM lines read and written)
    for (stride, want) in [
        (0, [8, 4, 1, 2, 0, 1, 1, 1, 1]),
        (1, [64, 32, 0, 96, 32, 32, 32, 32, 32]),
    ] {
        let s = probe_stats(stride, &gtx480);
        let local = s.local.clone().expect("local traffic");
        let c = s.caches.expect("caches");
        let got = [
            local.load_transactions,
            local.store_transactions,
            c.l1.hits,
            c.l1.misses,
            c.l2.hits,
            c.l2.misses,
            c.l2.mshr_merges,
            c.dram_read_lines,
            c.dram_write_lines,
        ];
        assert_eq!(got, want, "stride {stride}: {c:?}");
        assert_eq!((local.load_words, local.store_words), (64, 32));
        // No global traffic: what reached DRAM is local memory's.
        assert_eq!(s.offchip.load_words + s.offchip.store_words, 0);
    }
}

/// Priced as the traffic it is: on `gtx480` local accesses count the L1 (`DCP`),
/// L2 (`L2CP`), interconnect (`NOCP`) and DRAM (`MCP`, `DRAMP`) components and no
/// shared-memory accesses (`SHRDP`); on the SPU they stay beside the SM, priced
/// and timed as shared memory, with no transactions, no caches and the run's
/// length unchanged (measured before local memory went through the caches).
#[test]
fn local_memory_is_priced_as_cached_traffic_on_a_gpu_and_as_shared_memory_on_the_spu() {
    use spu_emu::observe::counters::Component;
    let gtx480 = spu_emu::machine::preset("gtx480").unwrap();
    let s = probe_stats(1, &gtx480);
    let k = |s: &spu_emu::observe::stats::Stats, c: Component| {
        s.counters.get(c.name()).copied().unwrap_or(0)
    };
    assert_eq!(k(&s, Component::Shrdp), 0);
    // 96 L1 lookups; 32 + 32 + 32 lines sent past the L1; 64 DRAM lines.
    assert_eq!(k(&s, Component::Dcp), 96);
    assert_eq!(k(&s, Component::L2cp), 96);
    assert_eq!(k(&s, Component::Nocp), 96);
    assert_eq!((k(&s, Component::Mcp), k(&s, Component::Dramp)), (64, 64));
    let spu = probe_stats(1, &Machine::default());
    let local = spu.local.clone().expect("local traffic");
    assert_eq!((local.load_transactions, local.store_transactions), (0, 0));
    assert_eq!((local.load_words, local.store_words), (64, 32));
    assert!(spu.caches.is_none());
    // One event per warp access: three accesses.
    assert_eq!(k(&spu, Component::Shrdp), 3);
    assert_eq!(k(&spu, Component::Dramp), 0);
    assert_eq!(spu.cycles, SPU_CYCLES);
}

/// The probe kernel's length on the SPU with `STRIDE = 1`, local memory beside the
/// SM (as before local memory went through the caches on GPUs).
const SPU_CYCLES: u64 = 63;
