//! The PTX samples (`samples/ptx/`, kernels written the way nvcc writes them, each
//! launched by a `.spu` launch file) run unchanged and match references computed
//! here, independently of the emulator, on several machines.

use spu_emu::Machine;
use spu_tests::{assert_close, repo_path, run_loaded, run_with};

fn machines() -> Vec<(&'static str, Machine)> {
    let mut out = vec![("spu-4x4", Machine::default())];
    let mut m = Machine::default();
    for s in ["grid.cols=3", "grid.rows=2", "passes.mode=sequential"] {
        m.set(s).unwrap();
    }
    out.push(("3x2 sequential", m));
    out
}

#[test]
fn vecadd_ptx_matches_elementwise_sum() {
    for (name, m) in machines() {
        // 1000 is not a multiple of the block size: the bounds test matters.
        let ran = run_with(&repo_path("samples/ptx/vecadd.spu"), &m, &["N=1000"]);
        let (a, b) = (ran.in_f32("A"), ran.in_f32("B"));
        let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| f64::from(*x + *y)).collect();
        assert_close(&ran.out_f32("C"), &want, 0.0, name);
    }
}

#[test]
fn reduce_ptx_block_sums_match_a_serial_sum() {
    let (n, blocks, threads) = (20_000usize, 16usize, 256usize);
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/ptx/reduce.spu"), &m, &[]);
        let x = ran.in_f32("X");
        assert_eq!(x.len(), n);
        // Block b's threads read the grid-stride slots b*256 .. b*256+255 of every
        // round of blocks*256 elements.
        let mut want = vec![0f64; blocks];
        for (i, v) in x.iter().enumerate() {
            want[(i % (blocks * threads)) / threads] += f64::from(*v);
        }
        // f32 sums of ~1250 values in [-1, 1]: a few 1e-5 of rounding.
        assert_close(&ran.out_f32("S"), &want, 1e-4, name);
    }
}

/// One hotspot step, in the operation order of the kernel (`fma` where it fuses),
/// in f32 or in f64 on f32 data.
fn hotspot(t: &[f32], p: &[f32], rows: usize, cols: usize, wide: bool) -> Vec<f64> {
    let (cap, rx, ry, rz, amb) = (0.5f32, 0.125f32, 0.0625f32, 0.01f32, 80.0f32);
    let mut out = vec![0f64; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            let i = r * cols + c;
            let tc = t[i];
            let n = if r > 0 { t[i - cols] } else { tc };
            let s = if r + 1 < rows { t[i + cols] } else { tc };
            let w = if c > 0 { t[i - 1] } else { tc };
            let e = if c + 1 < cols { t[i + 1] } else { tc };
            out[i] = if wide {
                let f = f64::from;
                let two_t = f(tc) + f(tc);
                let acc = (f(s) + f(n) - two_t).mul_add(f(ry), f(p[i]));
                let acc = (f(e) + f(w) - two_t).mul_add(f(rx), acc);
                let acc = (f(amb) - f(tc)).mul_add(f(rz), acc);
                f64::from(acc.mul_add(f(cap), f(tc)) as f32)
            } else {
                let two_t = tc + tc;
                let acc = (s + n - two_t).mul_add(ry, p[i]);
                let acc = (e + w - two_t).mul_add(rx, acc);
                let acc = (amb - tc).mul_add(rz, acc);
                f64::from(acc.mul_add(cap, tc))
            };
        }
    }
    out
}

#[test]
fn hotspot_ptx_matches_the_stencil_in_f32_and_f64() {
    // 40 x 56 is not a multiple of the 16 x 16 blocks: edges and bounds both matter.
    let (rows, cols) = (40, 56);
    for (file, wide) in [
        ("samples/ptx/hotspot.spu", false),
        ("samples/ptx/hotspot64.spu", true),
    ] {
        for (name, m) in machines() {
            let ran = run_with(&repo_path(file), &m, &[]);
            let want = hotspot(&ran.in_f32("T"), &ran.in_f32("P"), rows, cols, wide);
            assert_close(
                &ran.out_f32("OUT"),
                &want,
                0.0,
                &format!("{file} on {name}"),
            );
        }
    }
}

#[test]
fn hotspot_f64_ptx_on_f64_buffers_matches_the_stencil_in_f64() {
    // The same step on `.f64` data loaded and stored 8 bytes per element; the
    // reference repeats the kernel's operation order in f64 (fma where it fuses),
    // so the results are equal bit for bit.
    let (rows, cols) = (40, 56);
    let (cap, rx, ry, rz, amb) = (0.5f32, 0.125f32, 0.0625f32, 0.01f32, 80.0f32);
    let f = f64::from;
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/ptx/hotspot_f64.spu"), &m, &[]);
        let (t, p) = (ran.in_f64("T"), ran.in_f64("P"));
        assert_eq!(t.len(), rows * cols);
        // Real doubles, not widened floats: random(3, 60.0, 100.0) draws f64s.
        assert!(t.iter().any(|v| f64::from(*v as f32) != *v));
        let got = ran.out_f64("OUT");
        for r in 0..rows {
            for c in 0..cols {
                let i = r * cols + c;
                let tc = t[i];
                let n = if r > 0 { t[i - cols] } else { tc };
                let s = if r + 1 < rows { t[i + cols] } else { tc };
                let w = if c > 0 { t[i - 1] } else { tc };
                let e = if c + 1 < cols { t[i + 1] } else { tc };
                let two_t = tc + tc;
                let acc = (s + n - two_t).mul_add(f(ry), p[i]);
                let acc = (e + w - two_t).mul_add(f(rx), acc);
                let acc = (f(amb) - tc).mul_add(f(rz), acc);
                let want = acc.mul_add(f(cap), tc);
                assert_eq!(
                    got[i].to_bits(),
                    want.to_bits(),
                    "{name}: OUT[{r}][{c}] is {}, want {want}",
                    got[i]
                );
            }
        }
    }
}

#[test]
fn matmul_ptx_matches_a_triple_loop() {
    let n = 64;
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/ptx/matmul.spu"), &m, &[]);
        let (a, b) = (ran.in_f32("A"), ran.in_f32("B"));
        // The kernel accumulates with one fma per k, in k order, tile after tile.
        let mut want = vec![0f64; n * n];
        for i in 0..n {
            for j in 0..n {
                let sum = (0..n).fold(0f32, |s, k| a[i * n + k].mul_add(b[k * n + j], s));
                want[i * n + j] = f64::from(sum);
            }
        }
        assert_close(&ran.out_f32("C"), &want, 0.0, name);
    }
}

#[test]
fn rowscan_ptx_running_sums_through_cbs_match_on_every_grid() {
    let (p, q) = (6usize, 4usize);
    let mut first: Option<Vec<u32>> = None;
    for grid in ["4x4", "2x2", "3x1", "6x4"] {
        let (cols, rows) = grid.split_once('x').unwrap();
        let mut m = Machine::default();
        m.set(&format!("grid.cols={cols}")).unwrap();
        m.set(&format!("grid.rows={rows}")).unwrap();
        let ran = run_with(&repo_path("samples/ptx/rowscan.spu"), &m, &[]);
        let x = ran.in_f32("x");
        let mut want = Vec::new();
        for r in 0..q {
            let mut running = 0f64;
            for c in 0..p {
                let at = (r * p + c) * 32;
                running += x[at..at + 32].iter().map(|v| f64::from(*v)).sum::<f64>();
                want.push(running);
            }
        }
        assert_close(&ran.out_f32("out"), &want, 1e-5, grid);
        // The order of every addition is fixed by the kernel, not by the grid.
        let words = ran.out_u32("out");
        match &first {
            None => first = Some(words),
            Some(f) => assert_eq!(f, &words, "{grid}: results differ from the 4x4 grid's"),
        }
    }
}

/// The `shade` kernel's outputs for one pixel, computed here: (level, flags).
fn shade_pixel(px: u32, d: f32, near: f32, far: f32) -> (u8, u8) {
    let (r, g, b) = (px & 255, (px >> 8) & 255, (px >> 16) & 255);
    // Quarters and halves of integers up to 255: every step is exact in f32.
    let luma = r as f32 * 0.25 + g as f32 * 0.5 + b as f32 * 0.25;
    let dither = (px.rotate_left(7) & 3) as f32;
    let level = (luma * 0.75 + dither * 0.25).ceil().min(255.0) as u8;
    // PTX's unordered compares: true when either operand is NaN, else the ordered
    // comparison (near and far are numbers, so only d can make them unordered).
    let nan = d.is_nan();
    let in_range = nan || (d >= near && d <= far);
    let shown = in_range && !nan;
    let bits = [
        nan,
        !nan && !luma.is_nan(),
        nan || d == near,
        nan || d != far,
        nan || d < near,
        nan || d > far,
        in_range,
        px >> 31 == 1,
    ];
    let flags = bits
        .iter()
        .enumerate()
        .fold(0u8, |f, (k, &b)| f | (u8::from(b) << k));
    (if shown { level } else { 0 }, flags)
}

#[test]
fn shade_ptx_u8_outputs_and_unordered_compares_on_nan_depths_match() {
    // Depths straddling NEAR = 1 and FAR = 3 exactly, NaNs of both signs and with
    // payloads, infinities; the rest from a fixed pattern. Loaded from a `<f4` file.
    let n = 1000;
    let special = [
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(0xff80_0001),
        1.0,
        3.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.999_999_94,
        3.000_000_2,
        -0.0,
    ];
    let depth: Vec<u32> = (0..n)
        .map(|i| match special.get(i % 37) {
            Some(v) => *v,
            None => ((i * 7919) % 4001) as f32 / 1000.0,
        })
        .map(|v: f32| v.to_bits())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("depth.npy");
    spu_emu::load::npy::write(&path, spu_isa::Ty::F32, &[n as u64], &depth).unwrap();
    let loads = [format!("DEPTH={}", path.display())];
    for (name, m) in machines() {
        let ran = run_loaded(&repo_path("samples/ptx/shade.spu"), &m, &[], &loads);
        let rgba = ran.in_u32("RGBA");
        let d = ran.in_f32("DEPTH");
        assert_eq!(d.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), depth);
        let (level, flags) = (ran.out_bits("LEVEL"), ran.out_bits("FLAGS"));
        assert_eq!((level.len(), flags.len()), (n, n));
        for i in 0..n {
            let want = shade_pixel(rgba[i], d[i], 1.0, 3.0);
            let got = (level[i] as u8, flags[i] as u8);
            assert_eq!(
                got, want,
                "{name}: pixel {i} (rgba {:#010x}, depth {:?})",
                rgba[i], d[i]
            );
        }
        // The data reach every case: shown and hidden pixels, every flag bit set
        // and clear somewhere.
        assert!(level.iter().any(|&l| l > 0) && level.contains(&0));
        for k in 0..8 {
            assert!(flags.iter().any(|f| f >> k & 1 == 1), "bit {k} never set");
            assert!(flags.iter().any(|f| f >> k & 1 == 0), "bit {k} never clear");
        }
    }
}

#[test]
fn window_ptx_dynamic_shared_sums_match_in_64_bits() {
    // 1000 is not a multiple of the 128-thread blocks: the halos past both ends of
    // X are zeros, and the last block has threads without an element.
    let (n, r) = (1000usize, 32i64);
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/ptx/window.spu"), &m, &[]);
        let x: Vec<i64> = ran
            .in_bits("X")
            .iter()
            .map(|&v| i64::from(v as u16 as i16))
            .collect();
        let scale: Vec<i64> = ran
            .in_bits("SCALE")
            .iter()
            .map(|&v| i64::from(v as u32 as i32))
            .collect();
        let bias: Vec<i64> = ran
            .in_bits("BIAS")
            .iter()
            .map(|&v| i64::from(v as u32 as i32))
            .collect();
        assert_eq!(scale, [3, 20]);
        assert!(x.iter().any(|&v| v < 0) && x.iter().any(|&v| v > 16384));
        let out = ran.out_bits("OUT");
        for i in 0..n {
            let sum: i64 = (i as i64 - r..=i as i64 + r)
                .filter(|&j| (0..n as i64).contains(&j))
                .map(|j| x[j as usize])
                .sum();
            let want = ((sum * scale[0]) << scale[1]) + bias[i];
            assert_eq!(out[i] as i64, want, "{name}: OUT[{i}]");
        }
        assert!(
            out.iter().any(|&v| (v as i64).abs() > 1 << 32),
            "64-bit results"
        );
    }
}

#[test]
fn histogram_ptx_atomics_count_every_byte_exactly() {
    // Three kernels of one file: `red.global` straight to memory, `atom.global`
    // with the old value used, and per-block shared-memory counts (`atom.shared`)
    // merged with `red.global`. 10001 bytes: the last block is partly empty and the
    // input's last word is padding, which no thread may read.
    for file in ["histogram", "histogram_atom", "histogram_smem"] {
        for (name, m) in machines() {
            let ran = run_with(&repo_path(&format!("samples/ptx/{file}.spu")), &m, &[]);
            let input = ran.in_bits("IN");
            assert_eq!(input.len(), 10_001);
            let mut want = vec![0u32; 256];
            for &b in &input {
                want[b as usize] += 1;
            }
            assert!(want.iter().all(|&c| c > 10), "every bin is hit");
            assert_eq!(ran.out_u32("BINS"), want, "{file} on {name}");
            if file == "histogram_atom" {
                assert_eq!(ran.out_u32("FLAG"), [0], "{name}");
            }
        }
    }
}

/// `a + b` in f64, checked to be exact (the two-sum error is zero), so that a
/// directed rounding of it to f32 is the rounding of the true value.
fn exact_sum(a: f64, b: f64) -> f64 {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    assert_eq!(err, 0.0, "{a} + {b} is not exact in f64; pick other data");
    s
}

#[derive(Clone, Copy)]
enum Dir {
    Zero,
    Down,
    Up,
}

/// The next f32 above (`up`) or below `r` (finite `r`; `f32::next_up` is newer
/// than the workspace's minimum Rust).
fn step_f32(r: f32, up: bool) -> f32 {
    if r == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = r.to_bits();
    f32::from_bits(if (r > 0.0) == up { bits + 1 } else { bits - 1 })
}

/// The f32 nearest to the exact value `v` in direction `dir` (finite values).
fn round_f32(v: f64, dir: Dir) -> f32 {
    let r = v as f32;
    let rv = f64::from(r);
    match dir {
        Dir::Down if rv > v => step_f32(r, false),
        Dir::Up if rv < v => step_f32(r, true),
        Dir::Zero if rv.abs() > v.abs() => step_f32(r, v < 0.0),
        _ => r,
    }
}

#[test]
fn modifiers_ptx_roundings_saturations_and_predicates_match_rust_arithmetic() {
    const THIRD: f32 = f32::from_bits(0x3EAA_AAAB);
    const TENTH: f32 = f32::from_bits(0x3DCC_CCCD);
    // `.approx` forms and `div.full` (2 ulp in PTX) are checked to 1e-6 relative;
    // everything else must be equal bit for bit.
    const APPROX: f64 = 1e-6;
    let f = f64::from;
    let sat = |v: f32| if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    for (name, m) in machines() {
        // 70 is not a multiple of the 32-thread blocks: the last block's idle
        // threads leave zeros in shared memory and still reach the barrier.
        let ran = run_with(&repo_path("samples/ptx/modifiers.spu"), &m, &[]);
        let x = ran.in_f32("X");
        let n = x.len();
        assert_eq!(n, 70);
        let out = ran.out_f32("OUT");
        let ints = ran.out_u32("INTS");
        assert_eq!((out.len(), ints.len()), (16 * n, 8 * n));
        let mut directed = [0usize; 5];
        for (i, &v) in x.iter().enumerate() {
            let at = format!("element {i} (x = {v}) on {name}");
            let first = x[i / 32 * 32];
            let last = x.get(i / 32 * 32 + 31).copied().unwrap_or(0.0);
            let f5 = v.mul_add(2.0, 1.0);
            let f6 = round_f32(f(v) * f(THIRD), Dir::Zero);
            let exact: [f32; 9] = [
                first + last,
                f5,
                f6,
                round_f32(exact_sum(f(v) * f(THIRD), 1.0), Dir::Up),
                round_f32(exact_sum(f(f5), f(f6)), Dir::Down),
                round_f32(f(v) * f(f5), Dir::Down),
                round_f32(exact_sum(f(v), f(TENTH)), Dir::Zero),
                sat(v),
                sat(f5),
            ];
            // Where the directed rounding differs from round-to-nearest, so that a
            // machine ignoring the modifier fails.
            let nearest = [v * THIRD, v.mul_add(THIRD, 1.0), f5 + f6, v * f5, v + TENTH];
            for (k, rn) in nearest.iter().enumerate() {
                directed[k] += usize::from(exact[2 + k] != *rn);
            }
            let got = &out[16 * i..16 * i + 16];
            for (k, want) in exact.iter().enumerate() {
                assert_eq!(got[k].to_bits(), want.to_bits(), "OUT slot {k}, {at}");
            }
            assert_eq!(
                (got[14].to_bits(), got[15].to_bits()),
                (first.to_bits(), last.to_bits()),
                "shared [symbol+offset] loads, {at}"
            );
            let approx = [
                f(v) / 3.0,
                f(sat(v)).exp2(),
                1.0 / f(f5),
                f(v.abs()).sqrt(),
                f(f5) / f(v.abs()) * 0.5,
            ];
            for (k, want) in approx.iter().enumerate() {
                let g = f(got[9 + k]);
                assert!(
                    (g - want).abs() <= APPROX * want.abs(),
                    "OUT slot {}: {g} vs {want}, {at}",
                    9 + k
                );
            }
            // Conversions, immediates and predicate logic.
            let rz = v.trunc() as i32;
            let m = rz.wrapping_mul(1_000_003).wrapping_add(77);
            let a = m.wrapping_add(123_456_789);
            let (p2, p3) = (v > 0.0, v < 10.0);
            let p4 = p2 && p3;
            let p6 = v.is_nan();
            let p8 = p2 ^ p3;
            let flags = u32::from(p4)
                | u32::from(!p4 || p6) << 1
                | u32::from(p8) << 2
                | u32::from(v > 8.0 || p8) << 3
                | u32::from(v < 5.0 && p2) << 4;
            let mask = (0..16).fold(0u32, |acc, j| acc | u32::from(v > (j - 8) as f32) << j);
            let want = [
                rz as u32,
                v.floor() as i32 as u32,
                v.round_ties_even() as i32 as u32,
                v.ceil() as i32 as u32,
                m as u32,
                (a as u32) ^ 0xDEAD_BEEF,
                flags,
                mask,
            ];
            assert_eq!(&ints[8 * i..8 * i + 8], &want, "INTS, {at}");
        }
        // The data reach both sides of every compare and both halves of the mask.
        assert!(x.iter().any(|v| *v > 8.0) && x.iter().any(|v| *v < -8.0));
        assert!(
            directed.iter().all(|c| *c > n / 4),
            "too few elements where the directed roundings matter: {directed:?}"
        );
        // Rounding to nearest and truncation disagree on some elements.
        assert!(x.iter().any(|v| v.round_ties_even() != v.trunc()));
    }
}
