//! The host side of the kernels in `../kernels`: their PTX, embedded at build time
//! (`build.rs`), [`load`] to put it on a GPU, one launcher per kernel that checks its arguments
//! and then launches, and the CPU references the results are checked against.
//!
//! ```no_run
//! # fn main() -> app::Result<()> {
//! let device = gpu_host::Device::new(0)?;
//! let module = app::load(&device)?; // every kernel handle checked against the PTX
//! let x = device.upload(&[1.0f32; 1000])?;
//! let y = device.upload(&[2.0f32; 1000])?;
//! let mut z = device.zeros::<f32>(1000)?;
//! app::add(&module, &x, &y, &mut z)?; // queued on the device's stream
//! let z = device.download(&z)?; // waits for it
//! # Ok(())
//! # }
//! ```

use gpu_host::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};
use gpu_host::kernel::{Disjoint, Slice};
use gpu_host::{Device, Kernel, LaunchConfig, Module, Safe};

pub use kernels::BLOCK_SUM_THREADS;

/// Threads per block of the [`add`] and [`axpy`] launches (any block size works for them).
pub const BLOCK: u32 = 256;

/// The most blocks a grid holds along x (2^31 - 1).
pub const MAX_GRID_X: u64 = (1 << 31) - 1;

/// The kernel crate's library name: the crate whose handles [`Module::check`] checks.
pub const KERNEL_CRATE: &str = "kernels";

/// The kernels of the kernel crate, as `build.rs` embeds them (`ptx_builder`'s
/// `Built::write_table`): one PTX module per top-level module of the crate (here one, the
/// crate's root), each with its PTX for sm_70 and sm_90, the prebuilt files of `app/ptx/`
/// (zstd-compressed) or a fresh build's.
pub static KERNELS: gpu_host::KernelTable = gpu_host::include_kernels!("kernels.rs");

/// The PTX of every module for each architecture, decompressed and joined: `(sm, text)`,
/// ascending; for checks that read the PTX (loading needs none of this).
///
/// # Errors
/// [`gpu_host::Error::KernelImage`] if an image does not decompress.
pub fn ptx_by_arch() -> gpu_host::Result<Vec<(u32, String)>> {
    KERNELS
        .ptx_sms()
        .into_iter()
        .map(|sm| {
            let texts = KERNELS.ptx_texts(sm)?;
            Ok((sm, texts.into_iter().map(|(_, text)| text).collect()))
        })
        .collect()
}

/// Whether the embedded PTX is the prebuilt one of `app/ptx/` (this build compiled no kernel)
/// rather than a fresh build.
pub const PTX_PREBUILT: bool = matches!(env!("KERNELS_PTX_PREBUILT").as_bytes(), b"true");

/// What a launcher refuses, and the kit's errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two buffers whose lengths must agree do not.
    #[error("{what}: expected {expected} elements, got {actual}")]
    LengthMismatch {
        /// Which argument.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// An input that needs more blocks than a grid holds.
    #[error("{kernel}: {elements} elements need {blocks} blocks, more than the limit {limit}")]
    GridTooLarge {
        /// The kernel.
        kernel: &'static str,
        /// Elements to cover.
        elements: usize,
        /// Blocks needed.
        blocks: u64,
        /// The most a grid holds along x.
        limit: u64,
    },
    /// An error of the kit (`gpu_host`): no driver or device, a PTX that does not match the
    /// kernels, a buffer of another context, a launch or copy that failed.
    #[error(transparent)]
    Host(#[from] gpu_host::Error),
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// [`Error::LengthMismatch`] naming `what` unless `actual == expected`.
fn expect_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if actual == expected {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            actual,
        })
    }
}

/// A one-dimensional launch of `block` threads per block over `n` elements, one per thread:
/// `ceil(n / block)` blocks, no dynamic shared memory.
///
/// # Errors
/// [`Error::GridTooLarge`] beyond [`MAX_GRID_X`] blocks.
pub fn linear(kernel: &'static str, n: usize, block: u32) -> Result<LaunchConfig> {
    let blocks = (n as u64).div_ceil(block.into());
    if blocks > MAX_GRID_X {
        return Err(Error::GridTooLarge {
            kernel,
            elements: n,
            blocks,
            limit: MAX_GRID_X,
        });
    }
    Ok(LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// The kernels of [`KERNELS`] on `device`'s context, after every kernel handle of the crate has
/// been checked against its `.entry` (name, parameter count, order and byte sizes); each PTX
/// module is loaded when one of its kernels is first launched, from the PTX of the highest
/// architecture not above the device's. The launchers below queue their work on `device`'s
/// stream through the module.
///
/// # Errors
/// [`gpu_host::Error::NoCompatiblePtx`] for a device older than sm_70;
/// [`gpu_host::Error::StalePtx`] if the PTX was built from other kernels than the handles;
/// [`gpu_host::Error::Driver`] if the compute capability cannot be read (a refused PTX is an
/// error of the launch that loads it, [`gpu_host::Error::ModuleLoad`]).
pub fn load(device: &Device) -> gpu_host::Result<Module> {
    Module::from_table(device, &KERNELS)
}

/// `z = x + y` with [`kernels::add`], queued on the stream of the module's device.
///
/// Any device buffer or view of one (`CudaSlice`, `slice.slice(a..b)`) works. An empty `z`
/// launches nothing.
///
/// # Errors
/// [`Error::LengthMismatch`] if `x` or `y` is not as long as `z`; [`Error::GridTooLarge`];
/// [`gpu_host::Error::ForeignArgument`] if a buffer belongs to another context than the
/// module's; [`gpu_host::Error::Driver`] if the launch fails.
pub fn add(
    module: &Module,
    x: &impl DevicePtr<f32>,
    y: &impl DevicePtr<f32>,
    z: &mut impl DevicePtrMut<f32>,
) -> Result<()> {
    let n = z.len();
    expect_len("add: x", n, x.len())?;
    expect_len("add: y", n, y.len())?;
    if n == 0 {
        return Ok(());
    }
    let cfg = linear("add", n, BLOCK)?;
    module.launch(kernels::add, cfg, (x, y, z))?;
    Ok(())
}

/// The partial sums of `x` by blocks of [`BLOCK_SUM_THREADS`] elements, into `sums` (one per
/// block: `ceil(x.len() / 256)`), with [`kernels::block_sum`]; their total is the sum of `x`.
/// Queued on the stream of the module's device. An empty `x` launches nothing.
///
/// The kernel is `unsafe` and its launch checks nothing, so this launcher checks all its
/// contract asks: the lengths, the buffers' context, the launch shape.
///
/// # Errors
/// [`Error::LengthMismatch`] if `sums` does not hold one float per block;
/// [`gpu_host::Error::WrongContext`] if a buffer is not in the module's context;
/// [`Error::GridTooLarge`]; [`gpu_host::Error::Driver`] if the launch fails.
pub fn block_sums(
    module: &Module,
    x: &impl DevicePtr<f32>,
    sums: &mut impl DevicePtrMut<f32>,
) -> Result<()> {
    let n = x.len();
    expect_len(
        "block_sum: sums",
        n.div_ceil(BLOCK_SUM_THREADS as usize),
        sums.len(),
    )?;
    module.device().check_buffer("block_sum: x", x)?;
    module.device().check_buffer("block_sum: sums", sums)?;
    if n == 0 {
        return Ok(());
    }
    let cfg = linear("block_sum", n, BLOCK_SUM_THREADS)?;
    // SAFETY: the contract of `block_sum`: blocks of (BLOCK_SUM_THREADS, 1, 1) threads in a
    // one-dimensional grid of `ceil(n / 256)` blocks, which is `sums.len()` (checked above);
    // `sums` is borrowed mutably for the launch, so no other argument names it, and the stream
    // orders the launch after earlier work on it; both buffers are in the module's context
    // (checked above).
    unsafe { module.launch_unchecked(kernels::block_sum, cfg, (x, sums)) }?;
    Ok(())
}

/// An element type [`kernels::axpy`] is instantiated for (`f32`, `f64`, `i32`, `u32`): the
/// handle of its instance, and `a * x + y` computed as the kernel does, for the CPU reference.
pub trait AxpyElement: kernels::Axpy + DeviceRepr + PartialEq + std::fmt::Debug {
    /// The kernel's instance for this type (`kernels::axpy_f32`, ...).
    const KERNEL: Kernel<(Self, Slice<Self>, Disjoint<Self>), Safe>;

    /// `a * x + y` on the CPU, rounded (or wrapped) as the GPU does it.
    fn reference(a: Self, x: Self, y: Self) -> Self;
}

impl AxpyElement for f32 {
    const KERNEL: Kernel<(f32, Slice<f32>, Disjoint<f32>), Safe> = kernels::axpy::<f32>();

    /// One rounding, as the GPU's `fma.rn.f32`.
    fn reference(a: f32, x: f32, y: f32) -> f32 {
        a.mul_add(x, y)
    }
}

impl AxpyElement for f64 {
    const KERNEL: Kernel<(f64, Slice<f64>, Disjoint<f64>), Safe> = kernels::axpy::<f64>();

    /// One rounding, as the GPU's `fma.rn.f64`.
    fn reference(a: f64, x: f64, y: f64) -> f64 {
        a.mul_add(x, y)
    }
}

impl AxpyElement for i32 {
    const KERNEL: Kernel<(i32, Slice<i32>, Disjoint<i32>), Safe> = kernels::axpy::<i32>();

    /// Two's complement, wrapping.
    fn reference(a: i32, x: i32, y: i32) -> i32 {
        a.wrapping_mul(x).wrapping_add(y)
    }
}

impl AxpyElement for u32 {
    const KERNEL: Kernel<(u32, Slice<u32>, Disjoint<u32>), Safe> = kernels::axpy::<u32>();

    /// Wrapping.
    fn reference(a: u32, x: u32, y: u32) -> u32 {
        a.wrapping_mul(x).wrapping_add(y)
    }
}

/// `y = a * x + y` with the instance of [`kernels::axpy`] for `T`, queued on the stream of the
/// module's device. An empty `y` launches nothing.
///
/// # Errors
/// [`Error::LengthMismatch`] if `x` is not as long as `y`; [`Error::GridTooLarge`];
/// [`gpu_host::Error::ForeignArgument`] if a buffer belongs to another context than the
/// module's; [`gpu_host::Error::Driver`] if the launch fails.
pub fn axpy<T: AxpyElement>(
    module: &Module,
    a: T,
    x: &impl DevicePtr<T>,
    y: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    let n = y.len();
    expect_len("axpy: x", n, x.len())?;
    if n == 0 {
        return Ok(());
    }
    // One element per thread; the kernel's grid-stride loop would cover `n` with any grid.
    let cfg = linear("axpy", n, BLOCK)?;
    module.launch(T::KERNEL, cfg, (a, x, y))?;
    Ok(())
}

/// The smallest and the largest of `values` (each a [`kernels::MinMax`]; `MinMax { min: x,
/// max: x }` per value gives the extremes of the values) with [`kernels::reduce_monoid`]: the
/// kit's device-wide reduction over a type of this crate, whose buffers `MinMax`'s
/// `#[derive(DeviceCopy)]` allows. Waits for the device's stream; `MinMax::IDENTITY` for no
/// values.
///
/// Launch: blocks of 512 threads, one per 2048 values up to 1024 blocks; its scratch (one
/// partial per block, the ticket counter and the result) is allocated per call.
///
/// # Errors
/// [`gpu_host::Error::WrongContext`] if `values` is not in the module's context;
/// [`gpu_host::Error::OutOfMemory`] and [`gpu_host::Error::Driver`] from the allocations, the
/// launch and the copy.
pub fn min_max(module: &Module, values: &CudaSlice<kernels::MinMax>) -> Result<kernels::MinMax> {
    let device = module.device();
    device.check_buffer("values", values)?;
    let n = values.len();
    let block = kernels::REDUCE_MONOID_BLOCK;
    let grid = n.div_ceil(block as usize * 4).clamp(1, 1024);
    // `MinMax` derives `DeviceCopy`: its buffers need no cast.
    let mut partials = device.zeros::<kernels::MinMax>(grid)?;
    let mut counter = device.zeros::<u32>(1)?;
    let mut result = device.zeros::<kernels::MinMax>(1)?;
    let cfg = LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the contract of `reduce_monoid`: `values` holds `n` pairs, only read; `partials`
    // holds `grid` of them; `counter` is a zeroed `u32` of this call alone; `result` one pair;
    // blocks of 512 threads, a one-dimensional grid of at least one block.
    unsafe {
        module.launch_unchecked(
            kernels::reduce_monoid::<kernels::MinMax>(),
            cfg,
            (values, n, &mut partials, &mut counter, &mut result),
        )
    }?;
    Ok(device.download(&result)?[0])
}

/// `y[i] = c[0] + c[1] x[i] + c[2] x[i]^2 + c[3] x[i]^3` with [`kernels::polynomial`]: the
/// coefficients written to its `__constant__` array [`kernels::C_POLYNOMIAL`]
/// (`Module::write_constant`, typed and sized by the kernel crate's declaration), then the
/// launch, both queued on the stream of the module's device. An empty `y` launches nothing
/// (the coefficients are still written).
///
/// Constant memory belongs to the module, not to a call: two threads that wrote their
/// coefficients and then launched could each launch on the other's. So the write and the
/// launch are queued under one lock (stream order then keeps each launch with its own
/// coefficients); a program that launches through several streams orders them itself.
///
/// # Errors
/// [`Error::LengthMismatch`] if `x` is not as long as `y`; [`Error::GridTooLarge`];
/// [`gpu_host::Error::ForeignArgument`] if a buffer belongs to another context than the
/// module's; [`gpu_host::Error::Driver`] if the copy or the launch fails.
pub fn polynomial(
    module: &Module,
    c: &[f32; 4],
    x: &impl DevicePtr<f32>,
    y: &mut impl DevicePtrMut<f32>,
) -> Result<()> {
    let n = y.len();
    expect_len("polynomial: x", n, x.len())?;
    let cfg = linear("polynomial", n.max(1), BLOCK)?;
    static CONSTANTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _queued_together = CONSTANTS.lock().unwrap_or_else(|p| p.into_inner());
    module.write_constant(kernels::C_POLYNOMIAL, c)?;
    if n == 0 {
        return Ok(());
    }
    module.launch(kernels::polynomial, cfg, (x, y))?;
    Ok(())
}

/// The CPU references: plain loops, in the kernels' order of operations where it matters.
pub mod reference {
    use super::{AxpyElement, BLOCK_SUM_THREADS};

    /// `c0 + c1 x + c2 x^2 + c3 x^3` for every `x`, by Horner's rule with fused multiply-adds
    /// (`mul_add`, rounded once each, as the kernel's `fma.rn.f32`): bit for bit the GPU's.
    pub fn polynomial(c: &[f32; 4], x: &[f32]) -> Vec<f32> {
        x.iter()
            .map(|&v| c[3].mul_add(v, c[2]).mul_add(v, c[1]).mul_add(v, c[0]))
            .collect()
    }

    /// `x[i] + y[i]` for every `i` (the shorter length).
    pub fn add(x: &[f32], y: &[f32]) -> Vec<f32> {
        x.iter().zip(y).map(|(a, b)| a + b).collect()
    }

    /// `a * x[i] + y[i]` for every `i`, as [`AxpyElement::reference`].
    pub fn axpy<T: AxpyElement>(a: T, x: &[T], y: &[T]) -> Vec<T> {
        x.iter()
            .zip(y)
            .map(|(&x, &y)| T::reference(a, x, y))
            .collect()
    }

    /// The sum of each block of [`BLOCK_SUM_THREADS`] elements, accumulated in `f64`, whose
    /// rounding (`2^-53`) is negligible beside the kernel's `f32` rounding.
    pub fn block_sums(x: &[f32]) -> Vec<f64> {
        x.chunks(BLOCK_SUM_THREADS as usize)
            .map(|block| block.iter().map(|&v| f64::from(v)).sum())
            .collect()
    }

    /// How far the kernel's `f32` sum of `block` may be from the exact one: twice the
    /// first-order bound of a pairwise (tree) sum, `log2(256) u sum(|x|)` with `u = 2^-24`
    /// the unit roundoff of `f32`: every element passes through 8 rounded additions.
    pub fn block_sum_tolerance(block: &[f32]) -> f64 {
        let levels = f64::from(BLOCK_SUM_THREADS.ilog2());
        let sum_abs: f64 = block.iter().map(|&v| f64::from(v).abs()).sum();
        2.0 * levels * f64::from(f32::EPSILON / 2.0) * sum_abs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_sm_70_and_sm_90() {
        assert_eq!(KERNELS.krate, KERNEL_CRATE);
        for module in KERNELS.modules {
            let archs: Vec<u32> = module.images.iter().map(|i| i.sm).collect();
            assert_eq!(archs, [70, 90], "{}", module.name);
            assert_eq!(module.pick(9, 0, true).map(|i| i.sm), Some(90));
            assert_eq!(module.pick(8, 6, true).map(|i| i.sm), Some(70));
            assert!(module.pick(6, 1, true).is_none());
        }
    }

    #[test]
    fn references_on_hand_computed_cases() {
        assert_eq!(reference::add(&[1.0, -2.5], &[0.5, 2.5]), [1.5, 0.0]);
        assert_eq!(reference::axpy(2i32, &[3, i32::MAX], &[1, 0]), [7, -2]);
        assert_eq!(reference::axpy(3u32, &[u32::MAX], &[5]), [2]);
        assert_eq!(reference::axpy(0.5f64, &[4.0], &[1.0]), [3.0]);
        let x: Vec<f32> = (0..300).map(|i| i as f32).collect();
        // 0 + ... + 255, then 256 + ... + 299.
        assert_eq!(reference::block_sums(&x), [32640.0, 12210.0]);
        assert_eq!(
            reference::block_sum_tolerance(&[1.0; 256]),
            8.0 * 256.0 * f64::from(f32::EPSILON)
        );
    }

    #[test]
    fn launch_shapes_and_refusals() {
        let cfg = linear("add", 1_000_003, 256).unwrap();
        assert_eq!((cfg.grid_dim, cfg.block_dim), ((3907, 1, 1), (256, 1, 1)));
        assert!(matches!(
            linear("add", usize::MAX, 256),
            Err(Error::GridTooLarge { kernel: "add", .. })
        ));
        let e = expect_len("add: x", 3, 2).unwrap_err();
        assert_eq!(e.to_string(), "add: x: expected 3 elements, got 2");
    }
}
