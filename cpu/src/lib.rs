//! The lab's host side.
//!
//! - [`Gpu`]: one device's context, stream and the PTX module built from the `gpu` crate.
//! - One module per pattern, named as in the `gpu` crate ([`vector_add`], [`smoke`]): a
//!   `Variant` enum listing its kernels, launchers that validate their inputs and return typed
//!   [`Error`]s, and the CPU reference each kernel is checked against.
//! - [`timing`]: CUDA-event timing (warm-up, median of many reps) and the device-to-device
//!   memcpy bandwidth every kernel is judged against.
//! - [`verify`]: comparisons of GPU output with the CPU reference.
//! - [`report`]: a run's tables and measurements as data; markdown, JSON, CSV and charts.

pub mod context;
pub mod convolution;
pub mod error;
pub mod launch;
pub mod memory;
pub mod ptx;
pub mod reduction;
pub mod report;
pub mod smoke;
pub mod square_sum;
pub mod timing;
pub mod transpose;
pub mod vector_add;
pub mod verify;

pub use context::Gpu;
pub use error::{Error, Result};
