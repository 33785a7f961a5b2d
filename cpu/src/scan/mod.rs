//! Prefix scan (prefix sum) of device memory: the entry points to call, the textbook ladder,
//! and their CPU references.
//!
//! # Calling it
//! ```no_run
//! use cpu::{Gpu, scan};
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = Gpu::new(0)?; // or Gpu::from_stream(your_stream)?
//! let x = gpu.upload(&[3i32, 1, 4, 1, 5])?;
//! let mut y = gpu.zeros::<i32>(5)?;
//! scan::inclusive_sum(&gpu, &x, &mut y)?; // [3, 4, 8, 9, 14], queued on gpu's stream
//! scan::exclusive_sum(&gpu, &x, &mut y)?; // [0, 3, 4, 8, 9]
//! let mut data = gpu.upload(&[0.5f32; 1000])?;
//! scan::inclusive_sum_in_place(&gpu, &mut data.slice_mut(10..))?; // any view
//! let mut kept = gpu.zeros::<i32>(5)?;
//! let range = scan::Predicate::InRange { lower: 1, upper: 4 }; // 1 <= x < 4
//! let n = scan::select_if_count(&gpu, &x, range, &mut kept)?; // kept [3, 1, 1, ..], n = 3
//! # Ok(())
//! # }
//! ```
//!
//! - [`inclusive_sum`], [`exclusive_sum`] and their `_in_place` forms: one launch of the
//!   single-pass scan with decoupled look-back (`gpu::scan::lookback`, Merrill and Garland
//!   2016), for `i32` and `u32` (wrapping, exact) and `f32`, any length (0 included), on the
//!   caller's views and stream, no host synchronisation. The tile status words live in a
//!   [`ScanWorkspace`] the [`Gpu`] handle keeps for its stream (the first call of a type
//!   allocates, later calls reuse it; it grows with the longest input); a workspace of your own
//!   does the same without the handle's lock.
//! - [`ladder`]: the textbook steps (*Programming Massively Parallel Processors*, ch. 11):
//!   Kogge-Stone, double-buffered Kogge-Stone, Brent-Kung and the coarsened three-phase block
//!   scans, the hierarchical scan, the stream-based scan, and the look-back scan, on `i32`.
//! - [`select_if`]: stream compaction (CUB's `DeviceSelect::If`) on the same look-back: the
//!   elements of an `f32`, `i32` or `u32` input that pass a [`Predicate`] (a comparison with a
//!   value, or a half-open range), in their order, and their count (into a device scalar, or
//!   returned to the host by [`select_if_count`]), in one pass.
//! - [`reference`](mod@reference): the CPU scans and the bound `f32` results are checked with.

pub mod ladder;
pub mod reference;

use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig};
use gpu::scan::{self as k, lookback};

/// The look-back scan's tile shape, as the docs and the `f32` error bound
/// ([`reference::f32_bound`]) name it: [`LOOKBACK_TILE`] elements per tile with blocks of
/// [`LOOKBACK_BLOCK`] threads (16384 with 512), [`LOOKBACK_MIN_TILE`] with the smallest blocks
/// (4096 with [`LOOKBACK_MIN_BLOCK`], 128).
pub use gpu::scan::{LOOKBACK_BLOCK, LOOKBACK_MIN_BLOCK, LOOKBACK_MIN_TILE, LOOKBACK_TILE};

use crate::context::Gpu;
use crate::error::{Error, Result, expect_len};
use crate::kernel::{DeviceAddress, Kernel};
use crate::launch;

/// What the workspace's launches return for an empty input, which launches nothing: a grid of
/// no blocks.
pub const EMPTY_LAUNCH: LaunchConfig = LaunchConfig {
    grid_dim: (0, 1, 1),
    block_dim: (k::LOOKBACK_MIN_BLOCK, 1, 1),
    shared_mem_bytes: 0,
};

/// The look-back scan kernel of element type `T`: `(input: *const T, output: *mut T, n: usize,
/// status: *mut u64, counter: *mut u32, epoch: u32, exclusive: u32)`.
pub type LookbackKernel<T> = Kernel<(*const T, *mut T, usize, *mut u64, *mut u32, u32, u32)>;

mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
}

/// An element type the scan adds: `i32` and `u32` (wrapping, as `wrapping_add`) and `f32`.
pub trait ScanElement: DeviceRepr + Copy + Default + Send + 'static + sealed::Sealed {
    /// The look-back kernel for this type.
    const KERNEL: LookbackKernel<Self>;
}

impl ScanElement for i32 {
    const KERNEL: LookbackKernel<i32> = lookback::scan_lookback_i32;
}
impl ScanElement for u32 {
    const KERNEL: LookbackKernel<u32> = lookback::scan_lookback_u32;
}
impl ScanElement for f32 {
    const KERNEL: LookbackKernel<f32> = lookback::scan_lookback_f32;
}

/// Inclusive or exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `y[i] = x[0] + ... + x[i]`.
    Inclusive,
    /// `y[i] = x[0] + ... + x[i - 1]` (`y[0] = 0`).
    Exclusive,
}

/// `y = inclusive prefix sum of x`, queued on `gpu`'s stream: `output[i] = input[0] + ... +
/// input[i]`. `input` and `output` are any device memory of `gpu`'s context of the same
/// length (a `CudaSlice` or a view). One launch of the look-back scan: one block per tile of
/// 32 elements per thread, blocks of up to [`LOOKBACK_BLOCK`] threads (tiles
/// of 16384 elements) on long inputs, down to 128 (tiles of 4096) where that keeps four tiles
/// per SM ([`gpu::scan::lookback_block`]); 16-byte loads and stores where both views start on a
/// 16-byte boundary, 4-byte ones otherwise. An empty input launches nothing.
///
/// Integers wrap as `wrapping_add` (exact). `f32`: the additions happen in an order that
/// depends on the look-back's timing, so the last bits may differ between runs; the error of
/// `output[i]` is at most `(tile(i) + 64) * f32::EPSILON * (|x[0]| + ... + |x[i]|)` (see
/// [`reference::f32_bound`]). NaN and infinities propagate.
///
/// Uses the scan workspace `gpu` keeps for its stream ([`ScanWorkspace`]), made or grown on
/// first need.
///
/// # Errors
/// [`Error::LengthMismatch`] if the lengths differ; [`Error::WrongContext`] if a buffer lives
/// in another context; [`Error::GridTooLarge`] beyond `(2^31 - 1) * 4096` elements (far
/// beyond any device's memory);
/// [`Error::OutOfMemory`] for the workspace; [`Error::Driver`] if the launch fails.
pub fn inclusive_sum<T: ScanElement>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    output: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    gpu.with_workspace(ScanWorkspace::<T>::new, |ws| {
        ws.scan(gpu, Kind::Inclusive, input, output).map(drop)
    })
}

/// `y = exclusive prefix sum of x`: `output[i] = input[0] + ... + input[i - 1]`, `output[0] =
/// 0`. As [`inclusive_sum`] otherwise.
///
/// # Errors
/// As [`inclusive_sum`].
pub fn exclusive_sum<T: ScanElement>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    output: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    gpu.with_workspace(ScanWorkspace::<T>::new, |ws| {
        ws.scan(gpu, Kind::Exclusive, input, output).map(drop)
    })
}

/// [`inclusive_sum`] of `data` into itself (each tile is read before it is written, by the
/// same block).
///
/// # Errors
/// As [`inclusive_sum`].
pub fn inclusive_sum_in_place<T: ScanElement>(
    gpu: &Gpu,
    data: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    gpu.with_workspace(ScanWorkspace::<T>::new, |ws| {
        ws.scan_in_place(gpu, Kind::Inclusive, data).map(drop)
    })
}

/// [`exclusive_sum`] of `data` into itself.
///
/// # Errors
/// As [`inclusive_sum`].
pub fn exclusive_sum_in_place<T: ScanElement>(
    gpu: &Gpu,
    data: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    gpu.with_workspace(ScanWorkspace::<T>::new, |ws| {
        ws.scan_in_place(gpu, Kind::Exclusive, data).map(drop)
    })
}

/// The look-back scan's scratch: one 64-bit status word per tile (the tile's aggregate or
/// inclusive prefix, tagged with the launch's epoch) and the tile ticket. Launches on one
/// workspace pass consecutive epochs, so the status words are never cleared between them
/// (only when the 30-bit epoch wraps, once in about 10^9 launches); the ticket counter is left
/// at 0 by every launch. It grows to the longest input it has scanned (8 bytes per 4096
/// elements, the smallest tile: 2 MiB for 2^30).
///
/// One workspace serves one launch at a time: cudarc's stream synchronisation orders launches
/// that share it, also across streams. For concurrent scans on several streams use one
/// workspace per stream (as the handles of [`Gpu::with_new_stream`] do).
pub struct ScanWorkspace<T> {
    status: CudaSlice<u64>,
    counter: CudaSlice<u32>,
    epoch: u32,
    /// [`select_if_count`]'s count (made on its first call).
    selected: Option<CudaSlice<u32>>,
    element: PhantomData<fn() -> T>,
}

impl<T: ScanElement> ScanWorkspace<T> {
    /// A workspace for inputs up to 2^20 elements (it grows when a longer one comes).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; [`Error::Driver`] if an allocation fails.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::with_capacity(gpu, 1 << 20)
    }

    /// A workspace for inputs up to `n` elements without growing.
    ///
    /// # Errors
    /// As [`ScanWorkspace::new`].
    pub fn with_capacity(gpu: &Gpu, n: usize) -> Result<Self> {
        Ok(Self {
            status: gpu.zeros(n.div_ceil(k::LOOKBACK_MIN_TILE).max(1))?,
            counter: gpu.zeros(1)?,
            epoch: 0,
            selected: None,
            element: PhantomData,
        })
    }

    /// Queues `output = scan of input` ([`inclusive_sum`] or [`exclusive_sum`]) on this
    /// workspace, and returns the launch's configuration ([`EMPTY_LAUNCH`] for an empty input).
    ///
    /// # Errors
    /// As [`inclusive_sum`].
    pub fn scan(
        &mut self,
        gpu: &Gpu,
        kind: Kind,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("output", output)?;
        let n = input.len();
        expect_len("output", n, output.len())?;
        let Some((cfg, epoch)) = self.prepare(gpu, T::KERNEL.name(), n)? else {
            return Ok(EMPTY_LAUNCH);
        };
        // SAFETY: `T::KERNEL` takes `(input: *const T, output: *mut T, n, status: *mut u64,
        // counter: *mut u32, epoch, exclusive)`; `input` and `output` are views of `n`
        // elements (checked) in `gpu`'s context (checked), aligned for `T`, and do not overlap
        // (one is borrowed mutably while the other is borrowed); the grid has one block per
        // tile of `lookback_tile(block)` elements, blocks a multiple of 32 (`launch_config`);
        // `status` holds at least `grid` words, none tagged with the fresh `epoch`
        // (`prepare`); `counter` is 0 (zeroed at allocation, left 0 by each launch) and cudarc
        // orders the launches that share it.
        unsafe {
            gpu.launch_unchecked(
                T::KERNEL,
                cfg,
                (
                    input,
                    output,
                    n,
                    &mut self.status,
                    &mut self.counter,
                    epoch,
                    (kind == Kind::Exclusive) as u32,
                ),
            )?;
        }
        Ok(cfg)
    }

    /// Queues the scan of `data` into itself; returns the launch's configuration as
    /// [`scan`](Self::scan).
    ///
    /// # Errors
    /// As [`inclusive_sum`].
    pub fn scan_in_place(
        &mut self,
        gpu: &Gpu,
        kind: Kind,
        data: &mut impl DevicePtrMut<T>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("data", data)?;
        let n = data.len();
        let Some((cfg, epoch)) = self.prepare(gpu, T::KERNEL.name(), n)? else {
            return Ok(EMPTY_LAUNCH);
        };
        let data = gpu.bind_mut(data);
        // SAFETY: the address is `data`'s, valid for `n` elements on `gpu`'s stream while
        // `data` (bound for writing, which records the launch's use) lives.
        let input = unsafe { DeviceAddress::<T>::new(data.address(), n, gpu.stream()) };
        // SAFETY: as in `scan`, with `input` and `output` the same address, which the kernel
        // allows (each tile is read, then written, by one block, through the coherent path).
        unsafe {
            gpu.launch_unchecked(
                T::KERNEL,
                cfg,
                (
                    &input,
                    data,
                    n,
                    &mut self.status,
                    &mut self.counter,
                    epoch,
                    (kind == Kind::Exclusive) as u32,
                ),
            )?;
        }
        Ok(cfg)
    }

    /// The launch of the scan for `n` elements: blocks of [`gpu::scan::lookback_block`]
    /// threads on this device, at most [`gpu::scan::lookback_max_block`] of the kernel's
    /// registers, one per tile.
    ///
    /// # Errors
    /// [`Error::GridTooLarge`] for more tiles than a grid holds; [`Error::Driver`] if the SM
    /// count or the kernel's registers cannot be read.
    pub fn launch_config(gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
        Self::launch_config_of(gpu, T::KERNEL.name(), n)
    }

    /// The launch of the look-back kernel `kernel` (a scan or a compaction) for `n` elements:
    /// at most [`gpu::scan::lookback_max_block`] of its registers on this device.
    fn launch_config_of(gpu: &Gpu, kernel: &'static str, n: usize) -> Result<LaunchConfig> {
        let max_block = k::lookback_max_block(gpu.kernel_resources(kernel)?.registers);
        let block = k::lookback_block(n, gpu.sm_count()?, max_block);
        let grid = launch::blocks_to_cover(kernel, n, k::lookback_tile(block) as u64)?;
        Ok(launch::linear(grid, block, 0))
    }

    /// The launch of `kernel` for `n` elements and the launch's epoch, after growing the status words if
    /// needed and clearing them when the epoch wraps; `None` for `n == 0`.
    fn prepare(
        &mut self,
        gpu: &Gpu,
        kernel: &'static str,
        n: usize,
    ) -> Result<Option<(LaunchConfig, u32)>> {
        if n == 0 {
            return Ok(None);
        }
        let cfg = Self::launch_config_of(gpu, kernel, n)?;
        let grid = cfg.grid_dim.0 as usize;
        if grid > self.status.len() {
            self.status = gpu.zeros(grid)?;
            self.epoch = 0;
        }
        if self.epoch >= k::MAX_EPOCH {
            gpu.stream()
                .memset_zeros(&mut self.status)
                .map_err(|source| Error::Driver {
                    during: format!("{kernel}: clearing the tile status words"),
                    source,
                })?;
            self.epoch = 0;
        }
        self.epoch += 1;
        Ok(Some((cfg, self.epoch)))
    }
}

/// The look-back compaction kernel of element type `T`: `(input: *const T, n: usize, op: u32,
/// lower: T, upper: T, output: *mut T, count: *mut u32, status: *mut u64, counter: *mut u32,
/// epoch: u32)`, `op` one of `gpu::scan::select`'s `SELECT_*` constants.
pub type SelectKernel<T> = Kernel<(
    *const T,
    usize,
    u32,
    T,
    T,
    *mut T,
    *mut u32,
    *mut u64,
    *mut u32,
    u32,
)>;

/// An element type [`select_if`] compacts: `f32`, `i32` and `u32` (the scan's types).
pub trait SelectElement: ScanElement + PartialOrd + gpu_std::DeviceCopy {
    /// The compaction kernel for this type.
    const SELECT: SelectKernel<Self>;
}

impl SelectElement for f32 {
    const SELECT: SelectKernel<f32> = gpu::scan::select::select_if_f32;
}
impl SelectElement for i32 {
    const SELECT: SelectKernel<i32> = gpu::scan::select::select_if_i32;
}
impl SelectElement for u32 {
    const SELECT: SelectKernel<u32> = gpu::scan::select::select_if_u32;
}

/// Which elements [`select_if`] keeps: a comparison with one value, or a half-open range.
///
/// Comparisons are Rust's (and IEEE's) for `f32`: a NaN, as the element or as a bound, fails
/// every predicate except [`NotEqual`](Predicate::NotEqual), which it always passes (NaN is
/// equal to nothing, itself included); `-0.0` and `0.0` are equal. [`Predicate::passes`] is the
/// same test on the CPU, and the GPU keeps exactly the elements it passes.
///
/// `#[non_exhaustive]`: more predicates may come in a minor release, so a `match` on one
/// outside this crate needs a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Predicate<T> {
    /// `x > threshold`.
    Greater(T),
    /// `x >= threshold`.
    GreaterEqual(T),
    /// `x < threshold`.
    Less(T),
    /// `x <= threshold`.
    LessEqual(T),
    /// `x == threshold` (for `f32`, never true of NaN).
    Equal(T),
    /// `x != threshold` (for `f32`, NaN is never equal, so NaN is kept).
    NotEqual(T),
    /// `lower <= x < upper`: the half-open range of a histogram bin, as
    /// `(lower..upper).contains(&x)`. Empty (nothing kept, not an error) when `lower >= upper`
    /// or a bound is NaN. An `upper` of the type's `MAX` leaves `MAX` out: for a range open
    /// at the top use [`GreaterEqual`](Predicate::GreaterEqual).
    InRange {
        /// The smallest value kept (inclusive).
        lower: T,
        /// The first value above the range (exclusive).
        upper: T,
    },
}

impl<T: Copy> Predicate<T> {
    /// The kernel's `op`, `lower` and `upper` (a comparison passes its threshold as both).
    fn encode(self) -> (u32, T, T) {
        use gpu::scan::select as s;
        match self {
            Predicate::Greater(t) => (s::SELECT_GREATER, t, t),
            Predicate::GreaterEqual(t) => (s::SELECT_GREATER_EQUAL, t, t),
            Predicate::Less(t) => (s::SELECT_LESS, t, t),
            Predicate::LessEqual(t) => (s::SELECT_LESS_EQUAL, t, t),
            Predicate::Equal(t) => (s::SELECT_EQUAL, t, t),
            Predicate::NotEqual(t) => (s::SELECT_NOT_EQUAL, t, t),
            Predicate::InRange { lower, upper } => (s::SELECT_IN_RANGE, lower, upper),
        }
    }

    /// Whether `x` passes (the CPU's reading, for references): `x > t`, `x >= t`, `x < t`,
    /// `x <= t`, `x == t`, `x != t` or `lower <= x && x < upper`, with `PartialOrd`'s
    /// comparisons (IEEE's for `f32`).
    pub fn passes(self, x: T) -> bool
    where
        T: PartialOrd,
    {
        match self {
            Predicate::Greater(t) => x > t,
            Predicate::GreaterEqual(t) => x >= t,
            Predicate::Less(t) => x < t,
            Predicate::LessEqual(t) => x <= t,
            Predicate::Equal(t) => x == t,
            Predicate::NotEqual(t) => x != t,
            Predicate::InRange { lower, upper } => lower <= x && x < upper,
        }
    }
}

/// Stream compaction, queued on `gpu`'s stream: the elements of `input` that pass `predicate`
/// go to the start of `output` in their order (stable), and their number to the device scalar
/// `count`; `output` past that number is left as it was. `output` needs room for every
/// element of the input, so at least `input.len()` elements; a longer one is fine (its tail is
/// never written). One launch of the look-back kernel (`gpu::scan::select`): each block
/// evaluates the predicate on its tile, scans the 0/1 flags, learns the number of selected
/// elements before its tile by the decoupled look-back, and writes its selected elements at
/// their ranks. Reads the input once, writes each selected element once. Uses the scan
/// workspace of `T` that `gpu` keeps for its stream. No host synchronisation: read `count`
/// when you need it, or call [`select_if_count`], which returns it.
///
/// # Errors
/// [`Error::LengthMismatch`] if `output` is shorter than `input` (`expected` is the input's
/// length, the least accepted) or `count` is not exactly one element; [`Error::OutOfRange`]
/// for more than `u32::MAX` elements (the count is a `u32`); otherwise as [`inclusive_sum`].
pub fn select_if<T: SelectElement>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    predicate: Predicate<T>,
    output: &mut impl DevicePtrMut<T>,
    count: &mut impl DevicePtrMut<u32>,
) -> Result<()> {
    gpu.with_workspace(ScanWorkspace::<T>::new, |ws| {
        ws.select_if(gpu, input, predicate, output, count).map(drop)
    })
}

/// [`select_if`] that returns the number of selected elements to the host, waiting for
/// `gpu`'s stream (as [`reduce::sum`](fn@crate::reduce::sum) returns its sum): the first
/// `count` elements of `output` are the ones kept, in their order; the rest of `output` is
/// left as it was. The count goes through a device scalar of the workspace `gpu` keeps for
/// its stream (no allocation after the first call), downloaded before the workspace is given
/// back.
///
/// # Errors
/// As [`select_if`] (less the `count` argument's); [`Error::Driver`] if the kernel faults.
pub fn select_if_count<T: SelectElement>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    predicate: Predicate<T>,
    output: &mut impl DevicePtrMut<T>,
) -> Result<usize> {
    gpu.with_workspace(ScanWorkspace::<T>::new, |ws| {
        ws.select_if_count(gpu, input, predicate, output)
    })
}

impl<T: SelectElement> ScanWorkspace<T> {
    /// The launch of [`select_if`] for `n` elements: as [`launch_config`](Self::launch_config),
    /// for the compaction kernel's registers.
    ///
    /// # Errors
    /// As [`launch_config`](Self::launch_config).
    pub fn select_launch_config(gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
        Self::launch_config_of(gpu, T::SELECT.name(), n)
    }

    /// Queues [`select_if`] on this workspace; returns the launch's configuration
    /// ([`EMPTY_LAUNCH`] for an empty input, which only zeroes `count`).
    ///
    /// # Errors
    /// As [`select_if`].
    pub fn select_if(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<T>,
        predicate: Predicate<T>,
        output: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u32>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("output", output)?;
        gpu.check_buffer("count", count)?;
        let n = input.len();
        if output.len() < n {
            return Err(Error::LengthMismatch {
                what: "select_if output (at least the input's length)",
                expected: n,
                actual: output.len(),
            });
        }
        expect_len("count", 1, count.len())?;
        if n > u32::MAX as usize {
            return Err(Error::OutOfRange {
                what: "select_if input length (the count is a u32)",
                value: n as u64,
                min: 0,
                max: u32::MAX as u64,
            });
        }
        let Some((cfg, epoch)) = self.prepare(gpu, T::SELECT.name(), n)? else {
            gpu.stream()
                .memset_zeros(count)
                .map_err(|source| Error::Driver {
                    during: "select_if: zeroing the count of an empty input".into(),
                    source,
                })?;
            return Ok(EMPTY_LAUNCH);
        };
        let (op, lower, upper) = predicate.encode();
        // SAFETY: `T::SELECT` takes `(input, n, op, lower, upper, output, count, status,
        // counter, epoch)`; `input` is a view of `n` elements and `output` of at least `n`
        // (checked), in `gpu`'s context, that do not overlap (one borrowed mutably, the other
        // shared), nor does `count` (borrowed mutably too), which holds one `u32`; the kernel
        // writes at most `n` elements of `output`; `n <= u32::MAX` (checked); the grid has
        // one block per tile (`launch_config`); `status` holds at least `grid` words, none
        // tagged with the fresh `epoch`; `counter` is 0.
        unsafe {
            gpu.launch_unchecked(
                T::SELECT,
                cfg,
                (
                    input,
                    n,
                    op,
                    lower,
                    upper,
                    output,
                    count,
                    &mut self.status,
                    &mut self.counter,
                    epoch,
                ),
            )?;
        }
        Ok(cfg)
    }

    /// [`select_if_count`] on this workspace: [`select_if`](Self::select_if) into the
    /// workspace's own count scalar (allocated on the first call), then the count downloaded,
    /// waiting for `gpu`'s stream.
    ///
    /// # Errors
    /// As [`select_if_count`].
    pub fn select_if_count(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<T>,
        predicate: Predicate<T>,
        output: &mut impl DevicePtrMut<T>,
    ) -> Result<usize> {
        let mut count = match self.selected.take() {
            Some(count) => count,
            None => gpu.zeros::<u32>(1)?,
        };
        let result = self
            .select_if(gpu, input, predicate, output, &mut count)
            .and_then(|_| gpu.download(&count, T::SELECT.name()));
        self.selected = Some(count);
        Ok(result?[0] as usize)
    }
}

impl ScanWorkspace<u32> {
    /// Queues the look-back scan's memory traffic without its scan ([`gpu::scan::lookback::scan_tile_copy`]):
    /// `output = input`, through the tiles, tickets, barrier and 16-byte loads and stores of
    /// [`scan`](Self::scan), launched as the `u32` scan would be for this length. A
    /// microbenchmark: its time is the floor of the scan's tile shape, beside the copy's.
    /// Returns the launch's configuration ([`EMPTY_LAUNCH`] for an empty input).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if the lengths differ; [`Error::WrongContext`] if a buffer
    /// lives in another context; [`Error::Misaligned`] unless both start on a 16-byte
    /// boundary; otherwise as [`inclusive_sum`].
    pub fn tile_copy(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<u32>,
        output: &mut impl DevicePtrMut<u32>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("output", output)?;
        let n = input.len();
        expect_len("output", n, output.len())?;
        if n == 0 {
            return Ok(EMPTY_LAUNCH);
        }
        let kernel = lookback::scan_tile_copy;
        let (input, output) = (gpu.bind(input), gpu.bind_mut(output));
        launch::check_aligned(kernel.name(), "input", input.address(), 16)?;
        launch::check_aligned(kernel.name(), "output", output.address(), 16)?;
        let cfg = Self::launch_config(gpu, n)?;
        // SAFETY: `scan_tile_copy` takes `(input: *const u32, output: *mut u32, n, counter:
        // *mut u32)`; both views hold `n` elements (checked) in `gpu`'s context (checked),
        // start on a 16-byte boundary (checked) and do not overlap (one is borrowed mutably);
        // the grid has one block per tile of `lookback_tile(block)` elements
        // (`launch_config`); `counter` is 0 (zeroed at allocation, left 0 by each launch).
        unsafe { gpu.launch_unchecked(kernel, cfg, (input, output, n, &mut self.counter)) }?;
        Ok(cfg)
    }
}

/// Bytes the scan of `n` 4-byte elements must move: each element read once and written once.
pub fn bytes_moved(n: usize) -> u64 {
    8 * n as u64
}

#[cfg(test)]
mod tests {
    use super::Predicate::{self, *};

    /// Every predicate over `values` and `bounds`: each threshold alone, and each pair as a
    /// range.
    fn every_predicate<T: Copy>(bounds: &[T]) -> Vec<Predicate<T>> {
        let mut all = Vec::new();
        for &t in bounds {
            all.extend([
                Greater(t),
                GreaterEqual(t),
                Less(t),
                LessEqual(t),
                Equal(t),
                NotEqual(t),
            ]);
            for &u in bounds {
                all.push(InRange { lower: t, upper: u });
            }
        }
        all
    }

    /// The host's reading of each predicate is the kernels' (`gpu::scan::select::passes` of
    /// its encoding), for every type, NaN and infinities included.
    fn host_matches_device<T: Copy + PartialOrd + std::fmt::Debug>(values: &[T], bounds: &[T]) {
        for predicate in every_predicate(bounds) {
            let (op, lower, upper) = predicate.encode();
            for &x in values {
                assert_eq!(
                    predicate.passes(x),
                    gpu::scan::select::passes(op, x, lower, upper),
                    "{predicate:?} of {x:?}"
                );
            }
        }
    }

    #[test]
    fn predicates_read_the_same_on_host_and_device() {
        let ints = [i32::MIN, -2, -1, 0, 1, 2, 3, i32::MAX];
        host_matches_device(&ints, &ints);
        let uints = [0, 1, 2, 3, 0x8000_0000, u32::MAX];
        host_matches_device(&uints, &uints);
        let floats = [
            f32::NAN,
            f32::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1.5,
            f32::INFINITY,
            f32::MIN_POSITIVE,
        ];
        host_matches_device(&floats, &floats);
    }

    #[test]
    fn each_predicate_has_its_own_op() {
        let mut ops: Vec<u32> = [
            Greater(0),
            GreaterEqual(0),
            Less(0),
            LessEqual(0),
            Equal(0),
            NotEqual(0),
            InRange { lower: 0, upper: 1 },
        ]
        .iter()
        .map(|p| p.encode().0)
        .collect();
        ops.sort();
        ops.dedup();
        assert_eq!(ops.len(), 7);
    }

    /// The truth table around a threshold of 2 (columns: 1, 2, 3), for every element type.
    fn truth_table<T: Copy + PartialOrd + std::fmt::Debug + From<u8>>() {
        let v = T::from;
        let table = [
            (Greater(v(2)), [false, false, true]),
            (GreaterEqual(v(2)), [false, true, true]),
            (Less(v(2)), [true, false, false]),
            (LessEqual(v(2)), [true, true, false]),
            (Equal(v(2)), [false, true, false]),
            (NotEqual(v(2)), [true, false, true]),
            (
                InRange {
                    lower: v(2),
                    upper: v(3),
                },
                [false, true, false],
            ),
            (
                InRange {
                    lower: v(1),
                    upper: v(3),
                },
                [true, true, false],
            ),
            (
                InRange {
                    lower: v(3),
                    upper: v(1),
                },
                [false, false, false],
            ),
            (
                InRange {
                    lower: v(2),
                    upper: v(2),
                },
                [false, false, false],
            ),
        ];
        for (predicate, expected) in table {
            for (x, want) in [1u8, 2, 3].into_iter().zip(expected) {
                assert_eq!(predicate.passes(v(x)), want, "{predicate:?} of {x}");
            }
        }
    }

    #[test]
    fn comparisons_around_the_threshold() {
        truth_table::<u32>();
        truth_table::<i32>();
        truth_table::<f32>();
    }

    #[test]
    fn nan_passes_only_not_equal() {
        for predicate in every_predicate(&[0.0f32, 1.0]) {
            let want = matches!(predicate, NotEqual(_));
            assert_eq!(predicate.passes(f32::NAN), want, "{predicate:?} of NaN");
        }
        for predicate in every_predicate(&[f32::NAN]) {
            let want = matches!(predicate, NotEqual(_));
            assert_eq!(predicate.passes(0.5), want, "{predicate:?} of 0.5");
            assert_eq!(predicate.passes(f32::NAN), want, "{predicate:?} of NaN");
        }
        assert!(
            !InRange {
                lower: 0.0,
                upper: f32::NAN
            }
            .passes(0.5)
        );
        assert!(Equal(0.0f32).passes(-0.0));
        assert!(
            InRange {
                lower: -0.0,
                upper: 1.0
            }
            .passes(0.0f32)
        );
        assert!(
            InRange {
                lower: f32::NEG_INFINITY,
                upper: f32::INFINITY
            }
            .passes(-1e38f32)
        );
        assert!(
            !InRange {
                lower: f32::NEG_INFINITY,
                upper: f32::INFINITY
            }
            .passes(f32::INFINITY)
        );
    }

    #[test]
    fn a_range_leaves_its_upper_bound_out() {
        assert!(
            !InRange {
                lower: 0,
                upper: u32::MAX
            }
            .passes(u32::MAX)
        );
        assert!(GreaterEqual(0u32).passes(u32::MAX));
        assert!(
            InRange {
                lower: i32::MIN,
                upper: 0
            }
            .passes(i32::MIN)
        );
        assert!(
            !InRange {
                lower: i32::MIN,
                upper: 0
            }
            .passes(0)
        );
    }
}
