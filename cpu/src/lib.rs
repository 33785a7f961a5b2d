//! The lab's host side.
//!
//! - [`Gpu`]: one device's context, stream and the PTX module built from the `gpu` crate.
//! - One module per pattern, named as in the `gpu` crate ([`vector_add`], [`smoke`]): a
//!   `Variant` enum listing its kernels, launchers that validate their inputs and return typed
//!   [`Error`]s, and the CPU reference each kernel is checked against. The patterns a user
//!   calls have one entry point each that takes the caller's device memory (any `CudaSlice`
//!   or view of one) and queues the fastest correct variant on the handle's stream:
//!   [`convolution::conv1d`], [`convolution::conv2d`], [`transpose::transpose`],
//!   [`vector_add::add`].
//! - [`multi_gpu`]: reduction and all-reduce across every GPU of a machine through NCCL
//!   ([`multi_gpu::GpuGroup`]), and a ring all-reduce of the lab's own to learn from.
//! - [`verify`]: comparisons of GPU output with the CPU reference.
//!
//! The `demo` command, its timing harness and its reports live in the `demo` crate
//! (`cpu/demo`), the first client of this library.

pub mod context;
pub mod convolution;
pub mod cuda_std_style;
pub mod error;
pub mod kernel;
pub mod launch;
pub mod md;
pub mod memory;
pub mod multi_gpu;
pub mod ptx;
pub mod reduce;
pub mod smoke;
pub mod transpose;
pub mod vector_add;
pub mod verify;

pub use context::Gpu;
/// The cudarc this library is built on (driver and NCCL), for the types of your buffers and
/// streams (`cpu::cudarc::driver::{CudaSlice, CudaStream}`) without a second dependency line.
pub use cudarc;
pub use error::{Error, Result};
