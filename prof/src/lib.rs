//! The SPU energy profiler: prices an emulator run (thesis Ch. 5) with an energy
//! model held as data ([`model`]) into leakage per unit type, static and dynamic
//! energy, energy per component and per source line, and power over time
//! ([`energy`]), and reports it as a table, JSON, CSV, an annotated listing, an SVG
//! power trace, a grid heat map or a side-by-side comparison ([`report`], [`svg`],
//! [`heatmap`]), every name explained ([`legend`]). Files read back (statistics,
//! reports) are checked as strictly as a run's own ([`inputs`]).

pub mod energy;
pub mod heatmap;
pub mod inputs;
pub mod legend;
pub mod model;
pub mod report;
pub mod svg;
