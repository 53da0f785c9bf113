//! The PTX samples (`samples/ptx/`, kernels written the way nvcc writes them, each
//! launched by a `.spu` launch file) run unchanged and match references computed
//! here, independently of the emulator, on several machines.

use spu_emu::Machine;
use spu_tests::{assert_close, repo_path, run_with};

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
