//! Emulator speed on the tiled matrix multiply: simulated warp instructions per
//! second of host time. Run with `cargo bench -p spu-emu --bench matmul`
//! (optionally `-- N` for the matrix size, default 256).

use spu_emu::{LoadOptions, Machine};
use std::path::Path;
use std::time::Instant;

fn main() {
    let n: u32 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(256);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/matmul.spu");
    let kernel = spu_emu::read_kernel(&path).expect("matmul sample assembles");
    let machine = Machine::default();
    let options = LoadOptions {
        defines: vec![format!("N={n}")],
        ..LoadOptions::default()
    };
    let image = spu_emu::load(kernel.module, &machine, &options).expect("loads");
    let mut best = f64::MAX;
    let mut summary = (0, 0);
    for _ in 0..3 {
        let mut run = image.clone();
        let start = Instant::now();
        let result =
            spu_emu::simulate(&mut run, &machine, Default::default(), &mut |_| {}).expect("runs");
        let secs = start.elapsed().as_secs_f64();
        best = best.min(secs);
        summary = (
            result.units.iter().map(|u| u.issued).sum::<u64>(),
            result.cycles,
        );
    }
    let (warp_instrs, cycles) = summary;
    println!("matmul N={n} on spu-4x4: {warp_instrs} warp instructions, {cycles} cycles");
    println!(
        "best of 3: {:.3} s host, {:.2} M warp-instructions/s, {:.2} M simulated cycles/s",
        best,
        warp_instrs as f64 / best / 1e6,
        cycles as f64 / best / 1e6
    );
}
