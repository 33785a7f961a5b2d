//! `gpu_host`: the host side of the kernel kit. With it, a program launches the `#[kernel]`s of a
//! kernel crate of its own (built to PTX by `ptx-builder`, written against `gpu_std`), without
//! this project's kernels or operations:
//!
//! - [`Device`]: a CUDA device's context and the stream a handle's work goes to, with the
//!   buffer helpers a launch needs (upload, zeros, download, context checks, [`Device::bind`]);
//! - [`Module`]: a kernel crate's PTX loaded on a context ([`Module::from_table`] picks the
//!   highest architecture not above the device from the table `ptx_builder`'s
//!   `Built::write_table` embeds). Every handle the crate declares is checked against its
//!   `.entry` parameters before the load ([`Module::check`]: a stale PTX is
//!   [`Error::StalePtx`], not a launch with the wrong arguments), and a handle of another crate
//!   is [`Error::NotInModule`], not a driver error;
//! - [`kernel`]: the typed launch: a [`Kernel`] handle and an argument tuple checked against its
//!   parameters at compile time. A safe kernel is launched with the safe [`Module::launch`];
//!   any other with `unsafe` [`Module::launch_unchecked`] under its contract;
//! - [`Error`]: every failure as a typed value.
//!
//! ```no_run
//! # fn main() -> gpu_host::Result<()> {
//! use gpu_host::{Device, LaunchConfig, Module};
//! # let table: &[(u32, &'static str)] = &[];
//! // In the app: `static PTX: &[(u32, &str)] = include!(concat!(env!("OUT_DIR"), "/kernels_ptx.rs"));`
//! let device = Device::new(0)?;
//! let module = Module::from_table(&device, "gpu", table)?;
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
pub mod kernel;
mod module;

pub use cudarc;
pub use cudarc::driver::LaunchConfig;
pub use device::Device;
pub use error::{Error, Result, bytes_of};
pub use kernel::{DeviceCopy, Kernel, Safe, Unsafe};
pub use module::Module;

/// The row of `table` (`(sm, text)`, ascending, as `ptx_builder`'s `Built::write_table` writes
/// it) for the highest architecture not above compute capability `major.minor`: an H100 (9.0)
/// gets `sm_90`, an A100 (8.0) `sm_70` of a table of both. `None` if every row is newer.
pub fn pick_ptx(
    table: &[(u32, &'static str)],
    major: i32,
    minor: i32,
) -> Option<(u32, &'static str)> {
    let device = (major.max(0) * 10 + minor.max(0)) as u32;
    table
        .iter()
        .rev()
        .find(|(arch, _)| *arch <= device)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_highest_arch_not_above_the_device() {
        let table: &[(u32, &str)] = &[(70, "a"), (90, "b")];
        assert_eq!(pick_ptx(table, 12, 0), Some((90, "b")));
        assert_eq!(pick_ptx(table, 9, 0), Some((90, "b")));
        assert_eq!(pick_ptx(table, 8, 6), Some((70, "a")));
        assert_eq!(pick_ptx(table, 7, 0), Some((70, "a")));
        assert_eq!(pick_ptx(table, 6, 1), None);
    }
}
