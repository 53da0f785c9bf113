//! What a run lets you observe, and the documents made from it: the named activity
//! counters ([`counters`]), activity over time ([`samples`], [`activity`] and its
//! SVG [`timeline`], and when each instruction ran, [`pcs`]), a unit's detail for pages ([`detail`]), the instruction trace
//! ([`trace`]), a run's results and stops ([`outcome`]), the `--stats` JSON
//! ([`stats`]) and reading such JSON back ([`json`]), the page that replays a run ([`html`]), the printed summary
//! ([`report`]) and why a run stopped ([`stopped`]); the shared-memory races a run
//! found ([`races`]).
//!
//! Layer 4: may use [`crate::machine`], [`crate::exec`] and [`crate::load`]. The
//! timing model records into these types; nothing here runs the simulation.

pub mod activity;
pub mod counters;
pub mod detail;
pub mod html;
pub mod json;
pub mod outcome;
pub mod pcs;
pub mod races;
pub mod report;
pub mod samples;
pub mod stats;
pub mod stopped;
pub mod timeline;
pub mod trace;
