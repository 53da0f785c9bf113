//! SPU timing emulator (library). It will own loading `.bin` kernels, SIMT execution
//! on a configurable SM grid, the SPU runtime (Communication Buffers, blocksync,
//! Interface Units, DMA engines, passes) and the counters the profiler reads.
//!
//! Nothing is implemented yet: this crate only reserves its place in the workspace
//! and depends on `spu-isa`, the single source of instruction semantics.
