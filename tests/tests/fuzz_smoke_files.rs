//! Bounded versions of the fuzz targets for the files the tools read besides
//! kernels and statistics (`fuzz/fuzz_targets/{sweep,slurm,model,compare}.rs`): the
//! same entry points on random and seeded inputs, so every CI run exercises them.

use proptest::prelude::*;
use spu_tests::fuzz::{models, sweep};

/// `seed` with byte edits: set, remove, insert a character that matters to TOML
/// or a path, or cut.
fn mutate(seed: &[u8], edits: &[(u16, u8)]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for &(at, b) in edits {
        if v.is_empty() {
            break;
        }
        let i = usize::from(at) % v.len();
        match b % 4 {
            0 => v[i] = b,
            1 => {
                v.remove(i);
            }
            2 => v.insert(i, b"\"[]=.,/\n#0x9-\\"[usize::from(b) % 14]),
            _ => v.truncate(i),
        }
    }
    v
}

const SPECS: &[&str] = &[
    include_str!("../../fuzz/seeds/sweep/axes.toml"),
    include_str!("../../fuzz/seeds/sweep/files.toml"),
    include_str!("../../fuzz/seeds/sweep/params.toml"),
];

fn edits() -> impl Strategy<Value = Vec<(u16, u8)>> {
    proptest::collection::vec((any::<u16>(), any::<u8>()), 0..10)
}

#[test]
fn the_seed_specs_plan_or_fail_cleanly() {
    let planned: Vec<bool> = SPECS
        .iter()
        .map(|s| sweep::spec_plan(s.as_bytes()))
        .collect();
    assert_eq!(
        planned,
        [true, false, false],
        "the first seed plans, the others are refused"
    );
}

/// Inputs of `n` bytes from a fixed generator (xorshift), so the counts below do
/// not change from run to run.
fn inputs(count: usize, n: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..count).map(move |_| {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    })
}

/// Each target both accepts and refuses some of a few hundred inputs, so the
/// smoke tests reach the checks of accepted inputs, not only the refusals.
#[test]
fn every_target_reaches_its_accepted_path() {
    for (name, target, n) in [
        ("slurm", sweep::slurm_script as fn(&[u8]) -> bool, 256),
        ("model", models::model_files, 128),
        ("compare", models::compare_reports, 64),
    ] {
        let accepted = inputs(300, n).filter(|d| target(d)).count();
        assert!(
            (1..300).contains(&accepted),
            "{name}: {accepted} of 300 inputs accepted"
        );
    }
    // Most mutations break the spec's syntax or a name it checks; a few hundred
    // leave some that plan.
    let planned = inputs(400, 6)
        .map(|e| {
            let edits: Vec<(u16, u8)> = e
                .chunks(3)
                .map(|c| (u16::from(c[0]) << 8 | u16::from(c[1]), c[2]))
                .collect();
            sweep::spec_plan(&mutate(SPECS[0].as_bytes(), &edits))
        })
        .filter(|p| *p)
        .count();
    assert!(
        (1..400).contains(&planned),
        "sweep: {planned} of 400 specs planned"
    );
}

#[test]
fn the_checkers_of_the_script_fuzz_target_read_as_sbatch_and_bash_do() {
    assert_eq!(
        sweep::sbatch_arguments("--a=1 \"--b=x y\" # c"),
        ["--a=1", "--b=x y"]
    );
    assert_eq!(sweep::sbatch_arguments("\"a\\\"b\"\nc"), ["a\"b"]);
    assert_eq!(
        sweep::shell_words("exec '/a b'\\''c' x \"$T\""),
        ["exec", "/a b'c", "x", "$T"]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn specs_survive_mutation(which in 0..SPECS.len(), e in edits()) {
        sweep::spec_plan(&mutate(SPECS[which].as_bytes(), &e));
    }

    #[test]
    fn scripts_hold_only_their_own_lines(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        sweep::slurm_script(&data);
    }

    #[test]
    fn model_files_stay_in_their_folder(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        models::model_files(&data);
    }

    #[test]
    fn compared_reports_are_refused_or_short(data in proptest::collection::vec(any::<u8>(), 0..128)) {
        models::compare_reports(&data);
    }
}
