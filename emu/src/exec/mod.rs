//! The execution core: what an instruction does to a warp, independent of time.
//!
//! - [`ops`]: the kernel's code decoded once into micro-ops (operands resolved to
//!   registers or immediates, execution classes from the ISA table);
//! - [`lanes`]: instruction semantics on 32-lane values, the one copy every
//!   execution mode calls;
//! - [`warp`]: a warp's registers, predicates and SIMT reconvergence stack;
//! - [`memory`]: the global memory image with unmapped guard gaps;
//! - [`fault`]: what a thread can do wrong, with the context to report it.
//!
//! Layer 2: may use [`crate::machine`] only.

pub mod fault;
pub mod lanes;
pub mod memory;
pub mod ops;
pub mod warp;
