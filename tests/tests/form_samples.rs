//! The samples of `samples/cuda/` for PTX forms that lower onto rows of the ISA
//! table, in nvcc's and clang's forms: immediate predicates (`predicates_*`),
//! registers wider than the access (`wide_*`), a file of several kernels where one
//! is not supported (`entries_*`), module-scope tables with initialiser lists
//! (`tables_nvcc`). Each is checked against results computed here, on the SPU, on
//! `gtx480` and in `--functional`.

use spu_tests::{Ran, repo_path};

/// Runs `samples/cuda/{file}` with `defines` on every configuration.
fn everywhere(file: &str, defines: &[&str]) -> Vec<(&'static str, Ran)> {
    let path = repo_path(&format!("samples/cuda/{file}"));
    spu_tests::every_mode()
        .into_iter()
        .map(|(name, machine, functional)| {
            (
                name,
                spu_tests::run_in_mode(&path, &machine, defines, &[], functional),
            )
        })
        .collect()
}

/// What `rowflags` writes for row `i` of `k` values of `x`: bit 0 if any is above
/// `t`, bit 1 if all are, bit 2 if `i` is odd.
fn rowflags(x: &[f32], k: usize, t: f32, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| {
            let row = &x[i * k..i * k + k];
            let any = row.iter().any(|v| *v > t);
            let all = row.iter().all(|v| *v > t);
            u32::from(any) | u32::from(all) << 1 | (i as u32 & 1) << 2
        })
        .collect()
}

#[test]
fn immediate_predicate_samples_match_a_reference_everywhere() {
    for file in ["predicates_nvcc.spu", "predicates_clang.spu"] {
        for (k, defines) in [(3usize, &[][..]), (0, &["K=0"][..])] {
            for (name, ran) in everywhere(file, defines) {
                let x = ran.in_f32("X");
                let want = rowflags(&x, k, 0.0, 300);
                if k == 3 {
                    // The rows reach every combination of `any` and `all`.
                    for bits in [0, 1, 3] {
                        assert!(want.iter().any(|w| w & 3 == bits), "{bits}");
                    }
                } else {
                    assert!(want.iter().all(|w| w & 3 == 2));
                }
                assert_eq!(ran.out_u32("OUT"), want, "{file} K={k} {name}");
            }
        }
    }
}

#[test]
fn wide_register_samples_match_a_reference_everywhere() {
    for file in ["wide_nvcc.spu", "wide_clang.spu"] {
        for (name, ran) in everywhere(file, &[]) {
            let b = ran.in_bits("B");
            let h = ran.in_bits("H");
            assert_eq!(b.len(), 200);
            // Negative bytes, and sums whose low words and bytes differ in sign.
            assert!(b.iter().any(|v| (*v as u8 as i8) < -100));
            let v: Vec<i64> = b
                .iter()
                .zip(&h)
                .map(|(b, h)| i64::from(*b as u8 as i8) * 70001 + i64::from(*h as u16))
                .collect();
            let w: Vec<u64> = v.iter().map(|v| *v as u64).collect();
            let lo: Vec<u64> = v.iter().map(|v| u64::from(*v as u32)).collect();
            let c: Vec<u64> = v.iter().map(|v| u64::from((v >> 3) as u8)).collect();
            let s: Vec<u64> = v
                .iter()
                .map(|v| u64::from((v >> 5) as i16 as u16))
                .collect();
            assert_eq!(ran.out_bits("W"), w, "{file} {name}: W");
            assert_eq!(ran.out_bits("LO"), lo, "{file} {name}: LO");
            assert_eq!(ran.out_bits("C"), c, "{file} {name}: C");
            assert_eq!(ran.out_bits("S"), s, "{file} {name}: S");
        }
    }
}

#[test]
fn each_kernel_of_a_file_with_an_unsupported_one_runs_alone() {
    for (name, ran) in everywhere("entries_axpy.spu", &[]) {
        let (x, y) = (ran.in_f32("X"), ran.in_f32("Y"));
        let want: Vec<u32> = x
            .iter()
            .zip(&y)
            .map(|(x, y)| x.mul_add(-1.75, *y).to_bits())
            .collect();
        let got: Vec<u32> = ran.out_f32("Y").iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "axpy {name}");
    }
    for (name, ran) in everywhere("entries_stamp.spu", &[]) {
        let want: Vec<u32> = ran
            .in_u32("V")
            .iter()
            .enumerate()
            .map(|(i, v)| v.wrapping_mul(3).wrapping_add(i as u32))
            .collect();
        assert_eq!(ran.out_u32("V"), want, "stamp {name}");
    }
    // The texture read of the kernel in between is a warning that names it.
    for (file, chose) in [
        ("entries_axpy.spu", "_Z4axpyPfPKffi"),
        ("entries_stamp.spu", "_Z5stampPii"),
    ] {
        let kernel = spu_emu::read_kernel(&repo_path(&format!("samples/cuda/{file}")))
            .unwrap_or_else(|e| panic!("{e}"));
        let w = &kernel.warnings;
        assert!(
            w.contains("warning: texture and surface instructions (`tex`) are not supported")
                && w.contains(&format!(
                    "in kernel `_Z5fetchPfyi`, which is not assembled (the launch chose `{chose}`)"
                ))
                && !w.contains("error"),
            "{file}: {w}"
        );
    }
}

#[test]
fn the_tables_sample_matches_a_reference_everywhere() {
    let n = 300;
    for (name, ran) in everywhere("tables_nvcc.spu", &[]) {
        let u = ran.in_u32("U");
        let x = ran.in_f32("X");
        let bits: Vec<u32> = u.iter().map(|w| w.count_ones() + 1000).collect();
        let f: Vec<u32> = (0..n)
            .map(|i: i32| {
                let mut s = 0.0f32;
                for (off, w) in [(-1, 0.25f32), (0, 0.5), (1, 0.25)] {
                    let j = (i + off).clamp(0, n - 1) as usize;
                    s = w.mul_add(x[j], s);
                }
                (s * 1.5).to_bits()
            })
            .collect();
        let d: Vec<u64> = (0..n as usize)
            .map(|i| {
                let scale = [0.1f64, -2.5][i & 1];
                let delta = [-300.0f64, 7.0, 32767.0, -32768.0][i & 3];
                (scale * delta).to_bits()
            })
            .collect();
        let h: Vec<u64> = (0..n as u64)
            .map(|i| [0x9E37_79B9_7F4A_7C15u64, u64::MAX][(i & 1) as usize] ^ i)
            .collect();
        assert_eq!(ran.out_u32("BITS"), bits, "{name}: BITS");
        let got: Vec<u32> = ran.out_f32("F").iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, f, "{name}: F");
        assert_eq!(ran.out_bits("D"), d, "{name}: D");
        assert_eq!(ran.out_bits("H"), h, "{name}: H");
    }
}
