//! The timing model and the grid that runs a kernel: resolved latencies and
//! pipelines ([`params`]), one SM or IU's schedulers and issue ([`unit`]), memory and
//! CB accesses and what they cost ([`access`], reading the machine-wide state in
//! [`env`]), Communication Buffer links ([`cb`]), the data caches of GPU machines
//! ([`cache`]), the DRAM queue ([`dram`]) and the deferred global accesses that feed
//! them in sequential order ([`effects`]), DMA
//! engines and virtual IUs ([`engine`]), functional mode's windows of global memory
//! ([`window`]), and the grid's cycle loop with its
//! rendezvous, passes and deadlock detection ([`grid`]).
//!
//! Layer 5: may use every layer below ([`crate::machine`], [`crate::exec`],
//! [`crate::load`], [`crate::observe`]).

pub mod access;
pub mod banks;
pub mod cache;
pub mod cb;
pub mod dram;
pub mod effects;
pub mod engine;
pub mod env;
pub mod grid;
pub mod params;
pub mod unit;
pub mod window;
