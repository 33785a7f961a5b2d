//! Histograms of device memory: the entry points to call, the textbook ladder, and their CPU
//! references.
//!
//! # Calling it
//! ```no_run
//! use cpu::{Gpu, histogram::{self, Update}};
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = Gpu::new(0)?; // or Gpu::from_stream(your_stream)?
//! let image = gpu.upload(&[7u8, 7, 200, 0, 7])?;
//! let mut counts = gpu.zeros::<u32>(histogram::BYTE_BINS)?;
//! histogram::bytes(&gpu, &image, &mut counts, Update::Overwrite)?; // counts[7] = 3, ...
//! histogram::bytes(&gpu, &image.slice(1..), &mut counts, Update::Accumulate)?; // any view
//!
//! let samples = gpu.upload(&[0.1f32, 0.5, 0.99, 1.0, f32::NAN])?;
//! let mut bins = gpu.zeros::<u64>(4)?;
//! // 4 bins over [0, 1): [1, 0, 1, 1]; 1.0 and NaN are dropped.
//! histogram::even(&gpu, &samples, 4, 0.0, 1.0, &mut bins, Update::Overwrite)?;
//! # Ok(())
//! # }
//! ```
//!
//! - [`bytes`]: the 256-bin histogram of bytes into `u32` counts, one launch of
//!   `gpu::histogram::bytes::histogram_bytes` (a sub-histogram per warp in shared memory,
//!   16-byte loads, runs of equal bytes aggregated per thread), built to run at a large share
//!   of the DRAM bandwidth.
//! - [`even`]: CUB's `DeviceHistogram::HistogramEven`, `bins` equal-width bins over `[lower,
//!   upper)` of `u8`, `u16`, `i32` or `f32` samples into `u32` or `u64` counts, privatised in
//!   shared memory while the counters fit in 48 KiB, with global atomics beyond.
//! - [`ladder`]: the textbook steps (*Programming Massively Parallel Processors*, 4th ed.,
//!   ch. 9): global atomics, privatisation, coarsening (contiguous and interleaved),
//!   aggregation, and [`bytes`]; and the shared-atomic microbenchmark behind their ceiling.
//! - [`reference`](mod@reference): the CPU histograms, the bin rule [`reference::bin_of`], and
//!   histogram equalisation's lookup table.
//!
//! Every entry point works on the caller's views and stream, checks its arguments before
//! anything reaches the driver, and queues its work without a host synchronisation;
//! [`Update::Overwrite`] queues a memset of the counts first.

pub mod ladder;
pub mod reference;

use cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, ValidAsZeroBits};
use gpu::histogram::even::{self as kernels, EvenSample};
use gpu::histogram::{self as k, bytes::histogram_bytes};

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result, expect_len};
use crate::kernel::{DeviceCopy, Kernel};
use crate::launch;

/// Bins of [`bytes`]: one per byte value.
pub const BYTE_BINS: usize = k::BYTE_BINS;
/// The most bins [`even`] takes (2^20).
pub const MAX_BINS: usize = k::MAX_BINS;

/// Whether an entry point overwrites `counts` or adds to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// `counts` is zeroed first (a memset queued on the stream), then counted into.
    Overwrite,
    /// The counts are added to what `counts` holds (wrapping past the counter's maximum).
    Accumulate,
}

/// A kernel of [`even`]: `(input: *const T, n: usize, bins: u32, lower: T, upper: T, counts:
/// *mut C)`.
pub type EvenKernel<T, C> = Kernel<(*const T, usize, u32, T, T, *mut C)>;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
    impl Sealed for u64 {}
    impl Sealed for u32 {}
}

/// A sample type [`even`] bins: `u8`, `u16`, `i32` and `f32`. Its bin rule is
/// [`EvenSample`] (`gpu::histogram::even`), which the kernels and [`reference::bin_of`] share.
pub trait HistogramElement:
    DeviceRepr
    + DeviceCopy
    + Copy
    + PartialOrd
    + std::fmt::Debug
    + Send
    + 'static
    + sealed::Sealed
    + EvenSample
{
    /// The kernels into `u32` counts: privatised in shared memory, then global atomics.
    const KERNELS_U32: [EvenKernel<Self, u32>; 2];
    /// The kernels into `u64` counts.
    const KERNELS_U64: [EvenKernel<Self, u64>; 2];

    /// Whether `[lower, upper)` can be binned: `lower < upper` (so neither is NaN) and, for
    /// `f32`, `upper - lower` finite (so both bounds are).
    fn valid_range(lower: Self, upper: Self) -> bool;
}

macro_rules! histogram_element {
    ($t:ty, $s32:ident, $g32:ident, $s64:ident, $g64:ident, $range:expr) => {
        impl HistogramElement for $t {
            const KERNELS_U32: [EvenKernel<$t, u32>; 2] = [kernels::$s32, kernels::$g32];
            const KERNELS_U64: [EvenKernel<$t, u64>; 2] = [kernels::$s64, kernels::$g64];

            fn valid_range(lower: Self, upper: Self) -> bool {
                let valid: fn(Self, Self) -> bool = $range;
                valid(lower, upper)
            }
        }
    };
}

histogram_element!(
    u8,
    histogram_even_shared_u8_u32,
    histogram_even_global_u8_u32,
    histogram_even_shared_u8_u64,
    histogram_even_global_u8_u64,
    |lower, upper| lower < upper
);
histogram_element!(
    u16,
    histogram_even_shared_u16_u32,
    histogram_even_global_u16_u32,
    histogram_even_shared_u16_u64,
    histogram_even_global_u16_u64,
    |lower, upper| lower < upper
);
histogram_element!(
    i32,
    histogram_even_shared_i32_u32,
    histogram_even_global_i32_u32,
    histogram_even_shared_i32_u64,
    histogram_even_global_i32_u64,
    |lower, upper| lower < upper
);
histogram_element!(
    f32,
    histogram_even_shared_f32_u32,
    histogram_even_global_f32_u32,
    histogram_even_shared_f32_u64,
    histogram_even_global_f32_u64,
    |lower, upper| lower < upper && (upper - lower).is_finite()
);

/// A counter type of [`even`]: `u32` (inputs up to `u32::MAX` samples) and `u64` (any).
pub trait Counter:
    DeviceRepr + ValidAsZeroBits + Copy + Default + Send + 'static + sealed::Sealed
{
    /// The longest input this counter is accepted for (a bin may receive every sample).
    const MAX_INPUT: u64;

    /// The `[shared, global]` kernels of samples `T` into this counter.
    fn kernels<T: HistogramElement>() -> [EvenKernel<T, Self>; 2];
}

impl Counter for u32 {
    const MAX_INPUT: u64 = u32::MAX as u64;

    fn kernels<T: HistogramElement>() -> [EvenKernel<T, u32>; 2] {
        T::KERNELS_U32
    }
}

impl Counter for u64 {
    const MAX_INPUT: u64 = u64::MAX;

    fn kernels<T: HistogramElement>() -> [EvenKernel<T, u64>; 2] {
        T::KERNELS_U64
    }
}

/// The 256-bin histogram of bytes, queued on `gpu`'s stream: `counts[b] (+)= #{i : input[i] ==
/// b}` for every byte value `b`. `input` is any device memory of `gpu`'s context (a
/// `CudaSlice<u8>` or a view starting at any byte); `counts` holds exactly [`BYTE_BINS`]
/// `u32`. [`Update::Overwrite`] queues a memset of `counts` first; [`Update::Accumulate`] adds
/// (wrapping past `u32::MAX`). No host synchronisation.
///
/// One launch of `histogram_bytes` (see [`bytes_with`] for its configuration); an empty input
/// launches nothing (and with `Overwrite` only zeroes the counts).
///
/// # Errors
/// [`Error::WrongContext`] if a buffer lives in another context; [`Error::LengthMismatch`]
/// unless `counts` has 256 elements; [`Error::OutOfRange`] for more than `u32::MAX` bytes (a
/// bin could overflow its `u32`); [`Error::Driver`] if the memset or the launch fails.
///
/// Sources: PMPP 4th ed. ch. 9 (privatisation, coarsening, aggregation); the per-warp
/// sub-histograms are those of CUB's and of Podlozhnyuk's "Histogram calculation in CUDA"
/// (NVIDIA, 2007) sample, with `red.shared` atomics.
pub fn bytes(
    gpu: &Gpu,
    input: &impl DevicePtr<u8>,
    counts: &mut impl DevicePtrMut<u32>,
    update: Update,
) -> Result<()> {
    bytes_with(gpu, input, counts, update).map(drop)
}

/// [`bytes`], returning the launch's configuration (for tables): blocks of
/// [`BYTES_BLOCK`](gpu::histogram::BYTES_BLOCK) (512) threads with 16 KiB of static shared
/// memory, one wave of them (the blocks the device holds at once, from the occupancy of the
/// kernel's registers) or fewer: one per
/// [`BYTES_PER_BLOCK_STEP`](gpu::histogram::BYTES_PER_BLOCK_STEP) (32 KiB) of input. A grid
/// of 0 blocks for an empty input.
///
/// # Errors
/// As [`bytes`].
pub fn bytes_with(
    gpu: &Gpu,
    input: &impl DevicePtr<u8>,
    counts: &mut impl DevicePtrMut<u32>,
    update: Update,
) -> Result<LaunchConfig> {
    let n = check_bytes(gpu, input, counts)?;
    let cfg = bytes_config(gpu, n)?;
    if update == Update::Overwrite {
        zero_counts(gpu, histogram_bytes.name(), counts)?;
    }
    if n == 0 {
        return Ok(cfg);
    }
    // SAFETY: `histogram_bytes` takes `(input: *const u8, n, counts: *mut u32)`; `input` is a
    // view of `n` bytes in `gpu`'s context (checked), not written during the launch (it is
    // borrowed shared while `counts` is borrowed mutably, so they do not overlap); `counts`
    // holds 256 `u32` (checked); blocks of BYTES_BLOCK threads, a multiple of 32.
    unsafe { gpu.launch(histogram_bytes, cfg, (input, n, counts)) }?;
    Ok(cfg)
}

/// The launch of `histogram_bytes` for `n` bytes (see [`bytes_with`]).
///
/// # Errors
/// [`Error::Driver`] if the occupancy cannot be read.
pub fn bytes_config(gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
    let kernel = histogram_bytes.name();
    if n == 0 {
        return Ok(launch::linear(0, k::BYTES_BLOCK, 0));
    }
    let wave = gpu.one_wave(kernel, k::BYTES_BLOCK, 0)?;
    let cover = launch::blocks_to_cover(kernel, n, k::BYTES_PER_BLOCK_STEP as u64)?;
    Ok(launch::linear(cover.min(wave).max(1), k::BYTES_BLOCK, 0))
}

/// The checks of [`bytes`] (and of the ladder): the buffers' contexts, 256 counts, at most
/// `u32::MAX` bytes. Returns `n`.
pub(crate) fn check_bytes(
    gpu: &Gpu,
    input: &impl DevicePtr<u8>,
    counts: &impl DevicePtrMut<u32>,
) -> Result<usize> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("counts", counts)?;
    expect_len("counts", BYTE_BINS, counts.len())?;
    let n = input.len();
    if n as u64 > u32::MAX as u64 {
        return Err(Error::OutOfRange {
            what: "histogram input length (bytes into u32 counts)",
            value: n as u64,
            min: 0,
            max: u32::MAX as u64,
        });
    }
    Ok(n)
}

/// Queues a memset of `counts` to 0 on `gpu`'s stream.
pub(crate) fn zero_counts<C: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    kernel: &'static str,
    counts: &mut impl DevicePtrMut<C>,
) -> Result<()> {
    gpu.stream()
        .memset_zeros(counts)
        .during_with(|| format!("{kernel}: zeroing the counts"))
}

/// CUB's `HistogramEven`, queued on `gpu`'s stream: `bins` equal-width bins over `[lower,
/// upper)`; `counts[b] (+)= #{i : bin(input[i]) == b}` with bin `floor((x - lower) * bins /
/// (upper - lower))`: for integers exact (in 64-bit arithmetic); for `f32` as CUB computes it,
/// `(x - lower) * scale` in `f32` with `scale = bins / (upper - lower)`, truncated and clamped
/// to `bins - 1`. Samples below `lower`, at or above `upper`, and NaN are dropped.
/// [`reference::bin_of`] is the rule, shared with the kernels.
///
/// `input` and `counts` are any device memory of `gpu`'s context; `counts` holds exactly
/// `bins` counters of type `C` ([`Counter`]: `u32` or `u64`); [`Update`] as for [`bytes`]. No
/// host synchronisation.
///
/// One launch: while `bins * size_of::<C>()` is at most 48 KiB
/// ([`EVEN_SHARED_LIMIT_BYTES`](gpu::histogram::EVEN_SHARED_LIMIT_BYTES): 12288 `u32` or 6144
/// `u64` bins) the kernel that counts into a histogram per block in dynamic shared memory,
/// beyond it the one that counts with global atomics; blocks of
/// [`EVEN_BLOCK`](gpu::histogram::EVEN_BLOCK) (256) threads, at most one wave of them (see
/// [`even_with`]). An empty input launches nothing.
///
/// # Errors
/// [`Error::WrongContext`] if a buffer lives in another context; [`Error::OutOfRange`] for 0
/// or more than [`MAX_BINS`] bins, or (`u32` counts) more than `u32::MAX` samples;
/// [`Error::InvalidRange`] unless `lower < upper` (a NaN bound is refused) and, for `f32`,
/// `upper - lower` is finite; [`Error::LengthMismatch`] unless `counts` has `bins` elements;
/// [`Error::Driver`] if the memset or the launch fails.
pub fn even<T: HistogramElement, C: Counter>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    bins: usize,
    lower: T,
    upper: T,
    counts: &mut impl DevicePtrMut<C>,
    update: Update,
) -> Result<()> {
    even_with(gpu, input, bins, lower, upper, counts, update).map(drop)
}

/// [`even`], returning the launch's configuration: blocks of
/// [`EVEN_BLOCK`](gpu::histogram::EVEN_BLOCK) threads, `min(one wave, ceil(n / (EVEN_BLOCK *
/// EVEN_ITEMS)))` blocks (a grid-stride loop covers the rest), and `bins * size_of::<C>()`
/// bytes of dynamic shared memory for the privatised kernel (0 for the global one). A grid of
/// 0 blocks for an empty input.
///
/// # Errors
/// As [`even`].
pub fn even_with<T: HistogramElement, C: Counter>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    bins: usize,
    lower: T,
    upper: T,
    counts: &mut impl DevicePtrMut<C>,
    update: Update,
) -> Result<LaunchConfig> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("counts", counts)?;
    if bins == 0 || bins > MAX_BINS {
        return Err(Error::OutOfRange {
            what: "histogram bins",
            value: bins as u64,
            min: 1,
            max: MAX_BINS as u64,
        });
    }
    if !T::valid_range(lower, upper) {
        return Err(Error::InvalidRange {
            lower: format!("{lower:?}"),
            upper: format!("{upper:?}"),
        });
    }
    expect_len("counts", bins, counts.len())?;
    let n = input.len();
    if n as u64 > C::MAX_INPUT {
        return Err(Error::OutOfRange {
            what: "histogram input length (u32 counts; u64 counts take any length)",
            value: n as u64,
            min: 0,
            max: C::MAX_INPUT,
        });
    }
    let (kernel, cfg) = even_config::<T, C>(gpu, n, bins)?;
    if update == Update::Overwrite {
        zero_counts(gpu, kernel.name(), counts)?;
    }
    if n == 0 {
        return Ok(cfg);
    }
    // SAFETY: every even kernel takes `(input: *const T, n, bins: u32, lower: T, upper: T,
    // counts: *mut C)`; `input` is a view of `n` samples and `counts` of `bins` counters
    // (checked), both in `gpu`'s context (checked), not overlapping (one is borrowed mutably);
    // `1 <= bins <= MAX_BINS` and `lower < upper` with a finite width (checked: the rule's
    // precondition), so every bin it returns is below `bins`; the privatised kernel gets
    // `bins * size_of::<C>()` bytes of dynamic shared memory (`even_config`).
    unsafe { gpu.launch(kernel, cfg, (input, n, bins as u32, lower, upper, counts)) }?;
    Ok(cfg)
}

/// The kernel [`even`] launches for `n` samples into `bins` counters `C`, and its launch.
///
/// # Errors
/// [`Error::Driver`] if the occupancy cannot be read; [`Error::GridTooLarge`] never in
/// practice (the grid is at most one wave).
pub fn even_config<T: HistogramElement, C: Counter>(
    gpu: &Gpu,
    n: usize,
    bins: usize,
) -> Result<(EvenKernel<T, C>, LaunchConfig)> {
    let [shared, global] = C::kernels::<T>();
    let shared_bytes = bins * size_of::<C>();
    let (kernel, smem) = if shared_bytes <= k::EVEN_SHARED_LIMIT_BYTES {
        (shared, shared_bytes)
    } else {
        (global, 0)
    };
    if n == 0 {
        return Ok((kernel, launch::linear(0, k::EVEN_BLOCK, smem as u32)));
    }
    let wave = gpu.one_wave(kernel.name(), k::EVEN_BLOCK, smem)?;
    let cover = launch::blocks_to_cover(
        kernel.name(),
        n,
        (k::EVEN_BLOCK as usize * k::EVEN_ITEMS) as u64,
    )?;
    Ok((
        kernel,
        launch::linear(cover.min(wave).max(1), k::EVEN_BLOCK, smem as u32),
    ))
}

/// Bytes a histogram of `n` samples of `T` must move: each sample read once (the counts are
/// negligible).
pub fn bytes_moved<T>(n: usize) -> u64 {
    (n * size_of::<T>()) as u64
}
