//! `gpu_host`: the host side of the kernel kit. With it, a program launches the `#[kernel]`s of a
//! kernel crate of its own (built to PTX by `ptx-builder`, written against `gpu_std`), without
//! this project's kernels or operations:
//!
//! - [`Device`]: a CUDA device's context and the stream a handle's work goes to, with the
//!   buffer helpers a launch needs (upload, zeros, download, context checks, [`Device::bind`]);
//! - [`KernelTable`]: what a kernel crate's build embeds (`ptx_builder`'s `Built::write_table`):
//!   one PTX module per top-level Rust module of its kernels, each as PTX per architecture and,
//!   where the build made them, SASS (cubins), zstd-compressed;
//! - [`Library`] and [`Module`]: a table on a context, each PTX module loaded the first time
//!   one of its kernels is launched, from the best image for the device (SASS of the device's
//!   architecture, no JIT; else the highest PTX not above it). Every handle the crate declares
//!   is checked against the table's `.entry` parameters first ([`Library::check`]: a stale
//!   PTX is [`Error::StalePtx`], not a launch with the wrong arguments), and a handle of
//!   another crate is [`Error::NotInModule`], not a driver error;
//! - [`kernel`]: the typed launch: a [`Kernel`] handle and an argument tuple checked against its
//!   parameters at compile time. A safe kernel is launched with the safe [`Module::launch`];
//!   any other with `unsafe` [`Module::launch_unchecked`] under its contract;
//! - [`Error`]: every failure as a typed value.
//!
//! ```no_run
//! # fn main() -> gpu_host::Result<()> {
//! use gpu_host::{Device, KernelTable, LaunchConfig, Module};
//! # static KERNELS: KernelTable = KernelTable { krate: "gpu", modules: &[] };
//! // In the app: `static KERNELS: KernelTable = gpu_host::include_kernels!("kernels.rs");`
//! let device = Device::new(0)?;
//! let module = Module::from_table(&device, &KERNELS)?;
//! let x = device.upload(&[1.0f32; 1000])?;
//! let mut y = device.upload(&[2.0f32; 1000])?;
//! module.launch(gpu::saxpy::kernels::saxpy, LaunchConfig::for_num_elems(1000), (2.0f32, &x, &mut y))?;
//! let y = device.download(&y)?;
//! # Ok(())
//! # }
//! ```
//!
//! The `cpu` crate, this project's library of operations, is built on this crate: its `Gpu`
//! holds a [`Device`], and its launches go through [`kernel::KernelArgs::queue`].

mod device;
mod error;
mod global;
pub mod kernel;
mod library;
mod module;
mod table;

pub use cudarc;
pub use cudarc::driver::LaunchConfig;
pub use device::Device;
pub use error::{DriverContext, Error, Result, bytes_of};
pub use kernel::{DeviceCopy, Kernel, Safe, Unsafe};
pub use library::Library;
pub use module::Module;
pub use table::{
    Encoding, EntrySignature, Image, ImageBytes, ImageFormat, KernelTable, ModuleTable, fnv1a,
    image_dir,
};
