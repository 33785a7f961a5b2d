//! GPU parallel patterns in Rust: the host library.
//!
//! # Operations
//! Each takes a [`Gpu`] (your stream, or one of its own) and your device memory (any cudarc
//! `CudaSlice` or view of one), validates before anything reaches the driver (typed
//! [`Error`]s carrying the offending values), picks the fastest correct kernel for the shape and
//! the alignment, and queues it on the handle's stream without a host synchronisation unless it
//! returns a host value:
//!
//! | operation | entry point | the seed versions |
//! |---|---|---|
//! | sum, sum of squares | [`reduce::sum()`], [`reduce::sum_into`], [`reduce::square_sum()`] | [`reduce::seed`] |
//! | sum, product, min, max, argmin, argmax of every primitive type; segmented over CSR offsets | [`reduce::reduce()`], [`reduce::min()`], [`reduce::max()`], [`reduce::argmin()`], [`reduce::argmax()`], [`reduce::product()`], [`reduce::segmented_reduce()`] | |
//! | `z = x + y` | [`vector_add::add`] | [`vector_add::add_with`] |
//! | transpose | [`transpose::transpose`] | [`transpose::transpose_with`] |
//! | prefix sum, stream compaction | [`scan::inclusive_sum`], [`scan::exclusive_sum`], [`scan::select_if`], [`scan::select_if_count`] | [`scan::ladder`] |
//! | scans with sum, product, min, max of every primitive type; scan by key | [`scan::inclusive_scan`], [`scan::exclusive_scan`], [`scan::cummax`], [`scan::inclusive_scan_by_key`] | |
//! | histogram (bytes; equal-width bins) | [`histogram::bytes`], [`histogram::even`] | [`histogram::ladder`] |
//! | 1D / 2D convolution | [`convolution::conv1d`], [`convolution::conv2d`] | [`convolution::conv1d_with`], [`convolution::conv2d_with`] |
//! | reduction and all-reduce across GPUs (NCCL) | [`multi_gpu::GpuGroup`] | [`multi_gpu::ring`] |
//!
//! The `_with` forms run a chosen variant (the seed's versions, for study and measurement) and
//! return its launch configuration. Every module keeps its CPU reference beside it, and
//! [`verify`] compares GPU output with it.
//!
//! # Your own kernels
//! [`kernel`]: typed launches of any `#[kernel]` of the `gpu` crate
//! (`unsafe { gpu.launch_unchecked(kernel, cfg, (args...)) }`, checked by the compiler);
//! [`cuda_std_style`]: two kernels written with cuda_std's names, launched.
//!
//! # The lab
//! [`lab`]: the memory hierarchy, molecular dynamics and the device-support smoke kernels, the
//! measurements behind `demo <topic>`. The `demo` command, its timing harness and its reports
//! live in the `demo` crate (`cpu/demo`), the first client of this library.

pub mod context;
pub mod convolution;
pub mod cuda_std_style;
pub mod error;
pub mod gemm;
pub mod histogram;
pub mod kernel;
pub mod lab;
pub mod launch;
pub mod multi_gpu;
pub mod ptx;
pub mod reduce;
pub mod scan;
pub mod sort;
pub mod transpose;
pub mod vector_add;
pub mod verify;

pub use context::Gpu;
/// The cudarc this library is built on (driver and NCCL), for the types of your buffers and
/// streams (`cpu::cudarc::driver::{CudaSlice, CudaStream}`) without a second dependency line.
pub use cudarc;
pub use error::{Error, Result};
/// The kit's host side (device handle, modules of a kernel crate of one's own, typed launch),
/// which this library is built on.
pub use gpu_host;
pub use gpu_host::Module;
