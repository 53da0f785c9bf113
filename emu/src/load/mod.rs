//! Loading a kernel onto a machine: reading `.bin`/`.spu` files ([`kernel`]),
//! resolving parameters, laying out and initialising buffers ([`init`], [`npy`],
//! [`npy_header`]),
//! decoding the code and evaluating DMA descriptors into an [`Image`]
//! ([`image`]; its checks in `checks`, parameters in `params`, byte counts in `sizes`,
//! its errors and limits in [`error`]), and planning which unit does what in which pass ([`plan`]).
//!
//! Layer 3: may use [`crate::machine`] and [`crate::exec`].

mod checks;
pub mod error;
pub mod image;
pub mod init;
pub mod kernel;
pub mod npy;
pub mod npy_header;
mod params;
pub mod plan;
mod sizes;

pub use checks::{CACHE_LINE_STATE_BYTES, HEADROOM_BYTES};
pub use error::{LoadError, MAX_STATE_BYTES, RUN_BYTES, StateEstimate};
pub use image::{DmaPlan, Image, LaunchDims, LoadOptions, load};
