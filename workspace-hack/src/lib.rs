//! No code: this crate's manifest turns on, in every build, the features that
//! some build of the workspace turns on in a shared dependency (see its
//! `Cargo.toml`), so each dependency is compiled once.
