//! Global memory costs memory only where it holds data: loading a kernel whose
//! 768 MiB of buffers are zeros, or a list of a few values, leaves the process's
//! resident memory (`/proc/self/statm`) almost where it was. (A test binary of
//! its own, so no other test allocates meanwhile.)

/// Resident memory of this process, in bytes (Linux).
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn buffers_of_zeros_take_no_memory_until_written() {
    let Some(before) = resident() else {
        eprintln!("skipped: no /proc/self/statm to read resident memory from");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.spu");
    std::fs::write(
        &path,
        ".global .u8 A[536870912] = zeros;\n\
         .global .u32 B[67108864] = {1, 2, 3};\n\
         .launch grid(1) block(32);\n\
         .entry k {\n    exit;\n}\n",
    )
    .unwrap();
    let kernel = spu_emu::read_kernel(&path).expect("the kernel assembles");
    let machine = spu_emu::machine::preset("spu-4x4").unwrap();
    let image = spu_emu::load(kernel.module, &machine, &Default::default()).expect("it loads");
    let grown = resident().unwrap().saturating_sub(before);
    assert!(
        grown < 64 << 20,
        "loading 768 MiB of zero buffers made the process {} MiB larger",
        grown >> 20
    );
    // The values are there, and the rest reads 0.
    let b = &image.memory.buffer(1)[..4];
    assert_eq!(b, [1, 2, 3, 0]);
    assert!(image.memory.buffer(0)[..1024].iter().all(|&w| w == 0));
}
