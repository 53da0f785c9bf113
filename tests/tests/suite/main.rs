//! The stencil suite (`samples/suite/`): each SPU and GPU kernel against a plain
//! Rust reference that computes in the kernel's precision and order, on SPU grids of
//! one pass and several (IUs and DMA engines, both pass modes), on `gtx480`, and in
//! `--functional`; and the off-chip words against the formulas of the suite's
//! README.

mod common;
mod fdtd;
mod hotspot;
mod jacobi;
mod stencil3d;
mod wave;
