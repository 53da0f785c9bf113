//! The registers a loop only counts with (`spu_emu::exec::loops`), on kernels
//! whose loops we know: a wait that counts its tries in two registers, a wait
//! that compares its count, and a late flag beside a count that ends a loop.

use spu_emu::exec::ops::{Program, Run};
use std::path::Path;

/// The decoded program of kernel `file` (relative to the crate) on `spu-4x4`.
fn program(file: &str) -> Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let kernel = spu_emu::read_kernel(&path).expect("the kernel assembles");
    let machine = spu_emu::machine::preset("spu-4x4").expect("a preset");
    spu_emu::load(kernel.module, &machine, &Default::default())
        .expect("it loads")
        .program
}

/// The general registers counting in the loop of the block with the
/// instruction at `pc`.
fn counting_at(p: &Program, pc: usize) -> Vec<usize> {
    let block = p.block_of[pc] as usize;
    p.counting
        .of(block)
        .map(|c| {
            (0..usize::from(p.layout.general))
                .filter(|&s| c.contains(s))
                .collect()
        })
        .unwrap_or_default()
}

/// `tries++` and a second count fed by it are counting; the flag's address and
/// value are not; outside the loop nothing is.
#[test]
fn a_wait_that_counts_its_tries_counts_in_two_registers() {
    let p = program("tests/faults/flag_spin_tries.spu");
    // mov, mov, mov, then the loop: add, mad, ld, setp, bra (the assembler may
    // renumber registers: the add's and the mad's).
    let mut counts = vec![usize::from(p.ops[3].d), usize::from(p.ops[4].d)];
    counts.sort_unstable();
    assert_eq!(counting_at(&p, 3), counts);
    assert_eq!(counting_at(&p, 7), counts);
    assert!(counting_at(&p, 0).is_empty());
    assert!(counting_at(&p, 8).is_empty());
}

/// A count that decides when the loop ends, and one feeding a register that
/// decides it, are not counting.
#[test]
fn a_count_the_loop_compares_is_not_counting() {
    let p = program("tests/faults/flag_spin_counting.spu");
    assert!((0..p.len()).all(|pc| counting_at(&p, pc).is_empty()));
    // Block 0 counts to 200 000; the others count their tries.
    let p = program("tests/waits/late_flag_tries.spu");
    let loops: Vec<usize> = (0..p.len())
        .filter_map(|pc| match p.ops[pc].run {
            Run::Bra { target, .. } if (target as usize) < pc => Some(target as usize),
            _ => None,
        })
        .collect();
    assert_eq!(loops.len(), 2);
    assert!(counting_at(&p, loops[0]).is_empty());
    // Its first instruction is the count's add.
    assert_eq!(
        counting_at(&p, loops[1]),
        vec![usize::from(p.ops[loops[1]].d)]
    );
}
