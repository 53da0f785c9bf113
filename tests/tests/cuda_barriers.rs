//! `__syncthreads()` in CUDA C orders shared memory: what one thread stores
//! before the barrier, every thread of the block reads after it, in every mode.
//! (clang's built-in barrier lets its optimiser move a load of a `__shared__`
//! variable across the barrier; the header's does not.) Needs clang; skipped
//! without it (see [`spu_tests::clang`]).

use spu_tests::{every_mode, run_in_mode};

/// Writes `name.cu` (the kernel) and `name.spu` (its launch) into `dir`.
fn kernel(dir: &std::path::Path, name: &str, cu: &str, launch: &str) -> std::path::PathBuf {
    std::fs::write(dir.join(format!("{name}.cu")), cu).unwrap();
    let spu = dir.join(format!("{name}.spu"));
    std::fs::write(&spu, format!("#include \"{name}.cu\"\n{launch}")).unwrap();
    spu
}

/// Thread 0 stores a value, every thread reads it after the barrier; then
/// thread 0 stores another, and every thread reads that after a third barrier.
#[test]
fn a_value_stored_before_syncthreads_is_read_after_it_by_every_thread() {
    if spu_tests::clang::skip("__syncthreads in CUDA C") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let once = kernel(
        dir.path(),
        "once",
        "extern \"C\" __global__ void once(const int *in, int *out) {\n\
         \x20 __shared__ int shared_value;\n\
         \x20 int t = threadIdx.x;\n\
         \x20 if (t == 0) shared_value = in[blockIdx.x] * 3;\n\
         \x20 __syncthreads();\n\
         \x20 out[blockIdx.x * blockDim.x + t] = shared_value + t;\n}\n",
        ".global .s32 IN[4] = ramp(10, 10);\n.global .s32 OUT[256] = zeros;\n\
         .launch grid(4) block(64);\n.bind once(IN, OUT);\n",
    );
    let twice = kernel(
        dir.path(),
        "twice",
        "extern \"C\" __global__ void twice(const int *in, int *out) {\n\
         \x20 __shared__ int s;\n\
         \x20 int t = threadIdx.x, first = -1;\n\
         \x20 if (t == 0) s = in[blockIdx.x] * 2;\n\
         \x20 __syncthreads();\n\
         \x20 if (t != 0) first = s;\n\
         \x20 __syncthreads();\n\
         \x20 if (t == 0) s = in[blockIdx.x] * 3;\n\
         \x20 __syncthreads();\n\
         \x20 out[(blockIdx.x * blockDim.x + t) * 2] = first;\n\
         \x20 out[(blockIdx.x * blockDim.x + t) * 2 + 1] = s;\n}\n",
        ".global .s32 IN[2] = ramp(10, 10);\n.global .s32 OUT[256] = zeros;\n\
         .launch grid(2) block(64);\n.bind twice(IN, OUT);\n",
    );
    for (mode, machine, functional) in every_mode() {
        let ran = run_in_mode(&once, &machine, &[], &[], functional);
        let want: Vec<u32> = (0..256u32)
            .map(|i| (10 + 10 * (i / 64)) * 3 + i % 64)
            .collect();
        assert_eq!(ran.out_u32("OUT"), want, "{mode}: once");
        let ran = run_in_mode(&twice, &machine, &[], &[], functional);
        let want: Vec<u32> = (0..128u32)
            .flat_map(|i| {
                let (b, t) = (i / 64, i % 64);
                let first = if t == 0 { u32::MAX } else { (10 + 10 * b) * 2 };
                [first, (10 + 10 * b) * 3]
            })
            .collect();
        assert_eq!(ran.out_u32("OUT"), want, "{mode}: twice");
    }
}
