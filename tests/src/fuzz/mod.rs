//! Entry points shared by the fuzz targets in `fuzz/` and their bounded versions
//! in the test suite: each takes arbitrary bytes and must return without panicking
//! (errors are fine; crashes, hangs and unbounded allocation are not). The
//! `expect`s and `assert`s below are the invariants being fuzzed: a panic there is
//! a found bug.
//!
//! [`generate`] writes structured `.spu` sources, [`ptx`] sets of files (PTX
//! kernels, launch files, headers of macros), [`mutate`] makes structure-aware
//! edits of binaries, modules and statistics files; [`sweep`] holds the entry
//! points for sweep specs and Slurm job scripts, [`models`] those for energy model
//! files and `--compare` reports.

pub mod generate;
pub mod models;
pub mod mutate;
pub mod ptx;
pub mod sweep;

use arbitrary::Unstructured;
use spu_emu::{Machine, RunControl};
use std::sync::OnceLock;

/// The assembler on arbitrary text; what assembles must read back and disassemble
/// to text that reassembles to the same bytes.
pub fn assemble_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = assemble_checked(&text);
}

/// Assembles and checks the round trip; the binary if the source assembles.
fn assemble_checked(text: &str) -> Option<Vec<u8>> {
    let (bin, _) = spu_asm::assemble("fuzz.spu", text).ok()?;
    round_trip(&bin);
    Some(bin)
}

/// The assembler's output reads back and disassembles to text that reassembles to
/// the same bytes.
fn round_trip(bin: &[u8]) {
    let module = spu_isa::format::read_module(bin).expect("own output reads back");
    let listing = spu_asm::disasm::disassemble(&module, spu_asm::disasm::Options::default());
    let (again, _) = spu_asm::assemble("fuzz.spu", &listing).unwrap_or_else(|d| {
        panic!(
            "disassembly reassembles:\n{}\n{listing}",
            d.render("fuzz.spu", &listing)
        )
    });
    assert_eq!(again, bin, "round trip changed the binary");
}

/// The assembler on a set of files written by [`ptx::files`] (a PTX kernel, the
/// launch file that includes and binds it, headers of macros), read from memory;
/// what assembles must round-trip as [`assemble_text`]'s output does.
pub fn assemble_generated_files(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(set) = ptx::files(&mut u) else {
        return;
    };
    let Some(main) = set.text(&set.main) else {
        return;
    };
    let mut read = |p: &std::path::Path| {
        p.to_str()
            .and_then(|n| set.text(n))
            .map(str::to_string)
            .ok_or_else(|| format!("no file `{}`", p.display()))
    };
    let Ok((module, _)) = spu_asm::assemble_with(&set.main, main, &mut read) else {
        return;
    };
    if let Ok(bin) = spu_isa::format::write_module(&module) {
        round_trip(&bin);
    }
}

/// The assembler on a source written by [`generate::source`] from `data`.
pub fn assemble_generated(data: &[u8]) {
    let mut u = Unstructured::new(data);
    if let Ok(text) = generate::source(&mut u) {
        let _ = assemble_checked(&text);
    }
}

/// The binary reader on arbitrary bytes; what it accepts must disassemble and load.
pub fn read_binary(data: &[u8]) {
    if let Ok(module) = spu_isa::format::read_module(data) {
        let _ = spu_asm::disasm::disassemble(&module, spu_asm::disasm::Options::default());
        let _ = spu_emu::load(module, &small_machine(), &Default::default());
    }
}

/// The reader on a seed binary edited inside one section ([`mutate::mutate_section`]).
pub fn read_mutated_sections(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let seeds = seed_binaries();
    let Ok(seed) = u.choose(seeds) else {
        return;
    };
    let mut bin = seed.clone();
    if mutate::mutate_section(&mut u, &mut bin).is_ok() {
        read_binary(&bin);
    }
}

/// A seed module edited field by field: if the writer accepts it, the reader must
/// accept the bytes and writing what it read must give the same bytes.
pub fn module_round_trip(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(seed) = u.choose(seed_binaries()) else {
        return;
    };
    let mut module = spu_isa::format::read_module(seed).expect("seeds read");
    if mutate::mutate_module(&mut u, &mut module).is_err() {
        return;
    }
    if let Ok(bin) = spu_isa::format::write_module(&module) {
        let back = spu_isa::format::read_module(&bin).expect("what the writer accepts reads back");
        let again = spu_isa::format::write_module(&back).expect("a read module writes");
        assert_eq!(again, bin, "write, read, write changed the bytes");
        read_binary(&bin);
    }
}

/// A small machine with little memory, so hostile sizes fail fast.
pub fn small_machine() -> Machine {
    let mut m = Machine::default();
    m.set_grid("2x2").expect("valid grid");
    m.set("memory.global_mib=16").expect("valid key");
    m
}

/// Sources of the seed binaries, with `-D` values that keep their runs short.
const SEED_SOURCES: [(&str, &str); 3] = [
    ("vecadd.spu", include_str!("../../../samples/vecadd.spu")),
    (
        "pass_token.spu",
        include_str!("../../../samples/pass_token.spu"),
    ),
    (
        "stencil_pc.spu",
        include_str!("../../../samples/stencil2d/stencil_pc.spu"),
    ),
];

fn seed_binaries() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        SEED_SOURCES
            .iter()
            .map(|(name, src)| spu_asm::assemble(name, src).expect("sample assembles").0)
            .collect()
    })
}

/// Both execution modes, each bounded in cycles and in warp instructions.
fn run_both_modes(bin: &[u8], defines: &[String]) {
    let Ok(module) = spu_isa::format::read_module(bin) else {
        return;
    };
    let machine = small_machine();
    let options = spu_emu::LoadOptions {
        defines: defines.to_vec(),
        ..Default::default()
    };
    for functional in [false, true] {
        let Ok(mut image) = spu_emu::load(module.clone(), &machine, &options) else {
            return;
        };
        // Millions of one-thread blocks run in seconds in a release build
        // (2 148 552 in 4.3 s), but take over 20 s and 1 GB under the sanitizer:
        // the fuzzer keeps to launches of at most 65 536 blocks.
        let [gx, gy] = image.launch.grid;
        if u64::from(gx) * u64::from(gy) > 1 << 16 {
            return;
        }
        // The seeds finish in under 4 000 cycles and 500 warp instructions; an edit
        // that makes a run go on is stopped well inside the fuzzer's 20 s per input
        // (2 000 000 instructions took 13 s of CPU under the sanitizer).
        let control = RunControl {
            max_cycles: 50_000,
            max_instructions: 200_000,
            functional,
            ..RunControl::default()
        };
        let _ = spu_emu::simulate(&mut image, &machine, control, &mut |_| {});
    }
}

/// The emulator, in both modes, on a seed binary mutated by `data`: the first byte
/// picks the seed, then come (little-endian u16 offset, byte to XOR) triples.
pub fn run_mutated(data: &[u8]) {
    let Some((&pick, edits)) = data.split_first() else {
        return;
    };
    let seeds = seed_binaries();
    let which = usize::from(pick) % seeds.len();
    let mut bin = seeds[which].clone();
    for chunk in edits.chunks_exact(3) {
        let offset = usize::from(u16::from_le_bytes([chunk[0], chunk[1]])) % bin.len();
        bin[offset] ^= chunk[2];
    }
    // Small sizes keep the stencil's runs short.
    let defines: Vec<String> = match which {
        2 => vec!["N=16".into(), "K=4".into()],
        _ => vec!["N=64".into()],
    };
    let defines: Vec<String> = defines
        .into_iter()
        .filter(|d| {
            spu_isa::format::read_module(&bin).is_ok_and(|m| {
                m.params
                    .iter()
                    .any(|p| d.starts_with(&format!("{}=", p.name)))
            })
        })
        .collect();
    run_both_modes(&bin, &defines);
}

/// The emulator, in both modes, on a program written by [`generate::source`].
pub fn run_generated(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(text) = generate::source(&mut u) else {
        return;
    };
    if let Ok((bin, _)) = spu_asm::assemble("fuzz.spu", &text) {
        run_both_modes(&bin, &[]);
    }
}

/// Machine files and energy models from arbitrary text.
pub fn parse_configs(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = Machine::from_toml(&text, "fuzz.toml");
    let _ = spu_prof::model::Model::from_text(&text, "fuzz.toml");
}

/// Statistics of the seed kernels (one timed run with power samples each).
fn seed_stats() -> &'static [serde_json::Value] {
    static STATS: OnceLock<Vec<serde_json::Value>> = OnceLock::new();
    STATS.get_or_init(|| {
        let machine = small_machine();
        seed_binaries()
            .iter()
            .zip(SEED_SOURCES)
            .filter_map(|(bin, (name, _))| {
                let module = spu_isa::format::read_module(bin).ok()?;
                let defines = match name {
                    "stencil_pc.spu" => vec!["N=16".into(), "K=4".into()],
                    "vecadd.spu" => vec!["N=64".into()],
                    _ => vec![],
                };
                let options = spu_emu::LoadOptions {
                    defines,
                    ..Default::default()
                };
                let mut image = spu_emu::load(module, &machine, &options).ok()?;
                let control = RunControl {
                    sample_interval: Some(50),
                    ..RunControl::default()
                };
                let result = spu_emu::simulate(&mut image, &machine, control, &mut |_| {}).ok()?;
                let stats = spu_emu::observe::stats::Stats::new(&result, &image, &machine);
                serde_json::from_str(&stats.to_json_text()).ok()
            })
            .collect()
    })
}

const MODELS: [&str; 3] = [
    include_str!("../../../prof/models/default.toml"),
    include_str!("../../../prof/models/wires.toml"),
    include_str!("../../../prof/models/cyclops64.toml"),
];

/// The profiler on a seed statistics file whose JSON tree `data` edits, priced with
/// a seed model whose text `data` may also edit, through every report format; a
/// JSON report must read back.
pub fn price_stats(data: &[u8]) {
    use spu_prof::heatmap::Metric;
    let mut u = Unstructured::new(data);
    let (Ok(stats), Ok(model_text)) = (u.choose(seed_stats()), u.choose(&MODELS)) else {
        return;
    };
    let mut value = stats.clone();
    if mutate::mutate_json(&mut u, &mut value).is_err() {
        return;
    }
    let mut model_text = model_text.to_string();
    if u.ratio(1, 3).unwrap_or(false) {
        // Replace one number of the model with an extreme one.
        let extreme = *u
            .choose(&["1e308", "0", "1e-320", "123456789012345678", "-0.0"])
            .unwrap_or(&"0");
        if let Some(eq) = model_text
            .match_indices("= ")
            .map(|(i, _)| i)
            .nth(usize::from(u.arbitrary::<u8>().unwrap_or(0)) % 20)
        {
            let end = model_text[eq..]
                .find('\n')
                .map_or(model_text.len(), |e| eq + e);
            if model_text[eq + 2..end].starts_with(|c: char| c.is_ascii_digit()) {
                model_text.replace_range(eq + 2..end, extreme);
            }
        }
    }
    let Ok(model) = spu_prof::model::Model::from_text(&model_text, "fuzz.toml") else {
        return;
    };
    let Ok(stats) = serde_json::from_value::<spu_emu::observe::stats::Stats>(value) else {
        return;
    };
    for metric in [Metric::Energy, Metric::Offchip, Metric::Cb, Metric::Busy] {
        let _ = spu_prof::heatmap::svg(&stats, &model, metric);
    }
    let Ok(b) = spu_prof::energy::price(&stats, &model) else {
        return;
    };
    let _ = spu_prof::report::table_report(&b, &|_| Some("line\n".repeat(3)));
    let _ = spu_prof::report::csv_report(&b);
    let _ = spu_prof::report::by_line_report(&b, &|_| Some("line\n".repeat(3)));
    let _ = spu_prof::svg::power_trace(&b);
    let json = spu_prof::report::json_report(&b);
    let back: spu_prof::energy::Breakdown =
        serde_json::from_str(&json).expect("a JSON report reads back");
    let _ = spu_prof::compare::table_report(&b, "a", &back, "b");
}
