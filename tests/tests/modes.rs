//! What `--functional` keeps and what it may change, as `spu-emu --help`,
//! `spu-prof --help` and `emu/README.md` say: every sample, and the final words of
//! integer atomics from every thread, come out the same in both modes; sums of
//! float atomic adds (and the old values atomics return) follow the order in which
//! warps reach the word, which differs between the modes.

use spu_emu::cli::session::run_file;
use spu_emu::{LoadOptions, Machine, RunControl};
use spu_tests::{binary, repo_path, sources};
use std::path::Path;

/// Every buffer after a run, by name.
fn buffers(path: &Path, defines: &[&str], functional: bool) -> Vec<(String, Vec<u32>)> {
    let options = LoadOptions {
        defines: defines.iter().map(|d| d.to_string()).collect(),
        ..LoadOptions::default()
    };
    let control = RunControl {
        functional,
        ..RunControl::default()
    };
    let mut machine = Machine::default();
    if path.ends_with("stencil2d/stencil_pc64.spu") {
        // A 64x64 tile of f32 is 16 KiB: Appendix A's CBs.
        machine.set("cb.size_kib=16").unwrap();
    }
    let run = run_file(path, &machine, &options, control)
        .unwrap_or_else(|e| panic!("{} functional={functional}: {e}", path.display()));
    let memory = &run.image.memory;
    memory
        .regions()
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.clone(), memory.buffer(i).to_vec()))
        .collect()
}

fn words_of(buffers: &[(String, Vec<u32>)], name: &str) -> Vec<u32> {
    buffers
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no buffer `{name}`"))
        .1
        .clone()
}

#[test]
fn every_sample_leaves_the_same_buffers_in_both_modes() {
    let samples = sources("samples");
    assert!(samples.len() >= 20, "samples found: {samples:?}");
    for path in &samples {
        // A kernel that reads %clock (the microbenchmarks) sees other values in
        // functional mode, which models no time: the documented exception.
        if std::fs::read_to_string(path).unwrap().contains("%clock") {
            continue;
        }
        let small: &[&str] = if path.to_string_lossy().contains("stencil") {
            &["N=64", "K=64"]
        } else {
            &[]
        };
        let timed = buffers(path, small, false);
        let functional = buffers(path, small, true);
        for ((name, a), (_, b)) in timed.iter().zip(&functional) {
            let differ = a.iter().zip(b).filter(|(x, y)| x != y).count();
            assert!(
                differ == 0,
                "{}: buffer `{name}` differs in {differ} words between the modes",
                path.display()
            );
        }
    }
}

#[test]
fn integer_atomics_from_every_thread_leave_the_same_words_in_both_modes() {
    let path = repo_path("tests/modes/integer_atomics.spu");
    let timed = buffers(&path, &[], false);
    let functional = buffers(&path, &[], true);
    for name in ["words", "ones"] {
        assert_eq!(
            words_of(&timed, name),
            words_of(&functional, name),
            "`{name}`: add, min, max, and, or, xor"
        );
    }
    // The sum is what it must be: threads add (i + 1) x 2654435761, wrapping.
    let want = (1..=64u32 * 256).fold(0u32, |s, i| s.wrapping_add(i.wrapping_mul(2_654_435_761)));
    assert_eq!(words_of(&timed, "words")[0], want);
    // The adds reached the word in another order: the old values they returned
    // differ (which the docs name), though every final word is the same.
    assert_ne!(
        words_of(&timed, "old"),
        words_of(&functional, "old"),
        "the modes order the atomics differently"
    );
}

#[test]
fn float_atomic_sums_may_differ_between_the_modes_as_the_docs_say() {
    let path = repo_path("tests/modes/float_atomics.spu");
    let sum =
        |functional: bool| f32::from_bits(words_of(&buffers(&path, &[], functional), "sum")[0]);
    let (timed, functional) = (sum(false), sum(true));
    // Both are the sum of -0.01 x i for i < 16384 up to f32 rounding in some order.
    let values: Vec<f64> = (0..64 * 256)
        .map(|i| f64::from(i as f32 * -0.01f32))
        .collect();
    let exact: f64 = values.iter().sum();
    let bound =
        values.len() as f64 * f64::from(f32::EPSILON) * values.iter().map(|v| v.abs()).sum::<f64>();
    for (mode, got) in [("timing", timed), ("functional", functional)] {
        assert!(
            (f64::from(got) - exact).abs() <= bound,
            "{mode}: {got} is not the sum {exact} within f32 rounding"
        );
    }
    assert_ne!(
        timed.to_bits(),
        functional.to_bits(),
        "the modes add in another order, so the sums round differently ({timed} and {functional}); \
         if they now agree, the docs' list of what may differ can shrink"
    );
    // The docs name this case: both tools' --help and the emulator's guide.
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let named = "sums of float atomic adds (they round in another order), the old values atomics return, what `atom.exch` and `atom.cas` races leave, and data races (a shared- or global-memory word one warp writes and another reads without a barrier between them)";
    for tool in ["spu-emu", "spu-prof"] {
        let out = std::process::Command::new(binary(tool))
            .arg("--help")
            .output()
            .unwrap();
        let help = words(&String::from_utf8_lossy(&out.stdout));
        assert!(help.contains(named), "{tool} --help should say: {named}");
    }
    let readme = words(&std::fs::read_to_string(repo_path("emu/README.md")).unwrap());
    assert!(readme.contains(named), "emu/README.md should say: {named}");
    assert!(
        readme.contains("`atom.global.add.f32` end with sums that differ"),
        "emu/README.md gives the example"
    );
}
