//! The execution core: what an instruction does to a warp, independent of time.
//!
//! - [`ops`]: the micro-ops the kernel's code is decoded into once, whose operands
//!   are all register-file slots (constants and special registers included), and
//!   the program of them cut into basic blocks;
//! - [`decode`]: instruction words to micro-ops, with the refusal of forms this
//!   emulator does not execute;
//! - [`lanes`]: instruction semantics on 32-lane values, the one copy every
//!   execution mode calls;
//! - [`ext`], [`scalar`] and [`rounding`]: the general path for the forms the micro-ops do not
//!   cover (64-bit pairs, `.f64`, narrow and vector memory, warp operations), lane
//!   by lane;
//! - [`step`]: executing one instruction of a warp (the one dispatch over the
//!   micro-op kinds), with fast address checks;
//! - [`warp`]: a warp's registers, predicates and SIMT reconvergence stack;
//! - [`cb`]: a unit's end of a Communication Buffer link;
//! - [`memory`]: the global memory image with unmapped guard gaps;
//! - [`fault`]: what a thread can do wrong, with the context to report it.
//!
//! Layer 2: may use [`crate::machine`] only.

pub mod cb;
pub mod decode;
#[cfg(test)]
mod differential;
pub mod ext;
pub mod fault;
pub mod lanes;
pub mod memory;
pub mod ops;
pub mod rounding;
pub mod scalar;
pub mod step;
pub mod warp;
