//! The execution core: what an instruction does to a warp, independent of time.
//!
//! - [`ops`]: the ops the kernel's code is decoded into once, whose operands are
//!   all register-file slots (constants and special registers included), and the
//!   program of them cut into basic blocks;
//! - [`loops`]: the registers a loop only counts with, which the repeat proof
//!   may leave out of a warp's state;
//! - [`decode`]: instruction words to ops, stamped from the ISA table;
//! - [`apply`]: the semantics of [`crate::sem`] applied over a warp's lanes;
//! - [`lanes`]: values of 32 lanes, masks, coalescing and toggles;
//! - [`step`]: executing one instruction of a warp (the one dispatch over the
//!   op kinds);
//! - [`space`]: the memory an instruction reaches (the unit's own, the mode's
//!   global memory) and the kind of access it made;
//! - [`access`]: loads, stores and atomics, with fast address checks;
//! - [`words`]: plain 32-bit shared and CB accesses in one pass over the lanes;
//! - [`warp`]: a warp's registers, predicates and SIMT reconvergence stack;
//! - [`cb`]: a unit's end of a Communication Buffer link;
//! - [`memory`]: the global memory image with unmapped guard gaps;
//! - [`fault`]: what a thread can do wrong, with the context to report it;
//! - [`race`]: the shared-memory race checker;
//! - [`printf`]: the built-in `vprintf`; [`cformat`]: C's `printf` formatting it
//!   applies; [`printlog`]: the output it keeps for after the run.
//!
//! Layer 2: may use [`crate::machine`] and [`crate::sem`] only.

pub mod access;
pub mod apply;
pub mod cb;
pub mod cformat;
pub mod decode;
pub mod fault;
pub mod lanes;
pub mod loops;
pub mod memory;
pub mod ops;
pub mod printf;
pub mod printlog;
pub mod race;
pub mod space;
pub mod step;
pub mod warp;
pub mod words;
