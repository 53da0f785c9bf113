//! The SPU energy profiler: prices an emulator run (thesis Ch. 5) with an energy
//! model held as data ([`model`]) into leakage per unit type, static and dynamic
//! energy, energy per component and per source line, and power over time
//! ([`energy`], leakage in [`leakage`]), and reports it as a table, JSON, CSV, an annotated listing, an SVG
//! power trace, a grid heat map or a side-by-side comparison ([`report`], [`svg`],
//! [`heatmap`], [`compare`]), every name explained ([`legend`]), and adds energy to the page
//! that replays a run ([`page`]). Files read back (statistics, reports, pages) are
//! checked as strictly as a run's own ([`inputs`]).

pub mod compare;
pub mod energy;
pub mod heatmap;
pub mod inputs;
pub mod leakage;
pub mod legend;
pub mod model;
pub mod page;
pub mod report;
pub mod svg;
