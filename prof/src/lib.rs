//! SPU energy profiler (library). It will own the energy models (data files in
//! `prof/models/`), turning emulator counters into dynamic and leakage energy, and the
//! reports (table, JSON, CSV, per-line, power trace).
//!
//! Nothing is implemented yet: this crate only reserves its place in the workspace.
