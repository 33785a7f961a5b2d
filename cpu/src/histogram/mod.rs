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
//! // 4 bins (the length of `bins`) over [0, 1): [1, 0, 1, 1]; 1.0 and NaN are dropped.
//! histogram::even(&gpu, &samples, 0.0, 1.0, &mut bins, Update::Overwrite)?;
//! // Integer levels are i64: [0, 256) counts every byte, 255 included.
//! let mut every_byte = gpu.zeros::<u32>(16)?;
//! histogram::even(&gpu, &image, 0, 256, &mut every_byte, Update::Overwrite)?;
//! # Ok(())
//! # }
//! ```
//!
//! - [`bytes`]: the 256-bin histogram of bytes into `u32` counts (inputs up to `u32::MAX`
//!   bytes) or `u64` counts (any length), one launch of
//!   `gpu::histogram::bytes::histogram_bytes` (a sub-histogram per warp in shared memory,
//!   16-byte loads, runs of equal bytes aggregated per thread), built to run at a large share
//!   of the DRAM bandwidth.
//! - [`even`]: CUB's `DeviceHistogram::HistogramEven`, `counts.len()` equal-width bins over
//!   `[lower, upper)` of `u8`, `u16`, `i32` or `f32` samples into `u32` or `u64` counts, the
//!   levels in a type of their own ([`EvenSample::Level`]: `i64` for integer samples, so
//!   the range can reach past the type's largest value), privatised in shared memory while
//!   the counters fit in [`EVEN_SHARED_LIMIT_BYTES`] (48 KiB), with global atomics beyond.
//! - [`ladder`]: the textbook steps (*Programming Massively Parallel Processors*, 4th ed.,
//!   ch. 9): global atomics, privatisation, coarsening (contiguous and interleaved),
//!   aggregation, and [`bytes`]; and the shared-atomic microbenchmark behind their ceiling.
//! - [`reference`](mod@reference): the CPU histograms, the bin rule [`reference::bin_of`], and
//!   histogram equalisation's lookup table.
//!
//! The launch constants the docs name are here, beside the entry points (a crate that depends on
//! `cpu` alone can read them):
//!
//! ```
//! use cpu::histogram;
//! assert_eq!(histogram::EVEN_SHARED_LIMIT_BYTES, 48 * 1024);
//! assert_eq!((histogram::BYTES_BLOCK, histogram::EVEN_BLOCK), (512, 256));
//! assert_eq!(histogram::BYTES_PER_BLOCK_STEP, 32 * 1024);
//! assert_eq!((histogram::BYTE_BINS, histogram::MAX_BINS), (256, 1 << 20));
//! ```
//!
//! Every entry point works on the caller's views and stream, checks its arguments before
//! anything reaches the driver, and queues its work without a host synchronisation;
//! [`Update::Overwrite`] queues a memset of the counts first.

pub mod ladder;
pub mod reference;

use cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, ValidAsZeroBits};
use gpu::histogram::even as kernels;

/// The bin rule of [`even`], shared by the kernels and [`reference::bin_of`]; its
/// [`Level`](EvenSample::Level) is the type of the levels (`i64` for integer samples, `f32` for
/// `f32`).
pub use gpu::histogram::EvenSample;
use gpu::histogram::{
    self as k,
    bytes::{histogram_bytes, histogram_bytes_u64},
};

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Level, Result, expect_len};
use crate::kernel::{DeviceCopy, Kernel};
use crate::launch;

/// Bins of [`bytes`]: one per byte value.
pub const BYTE_BINS: usize = k::BYTE_BINS;
/// The most bins [`even`] takes (2^20).
pub const MAX_BINS: usize = k::MAX_BINS;
/// The most bytes of counters [`even`] keeps in shared memory per block (48 KiB: 12288 `u32`
/// or 6144 `u64` bins); more bins take the global-atomics kernel.
pub const EVEN_SHARED_LIMIT_BYTES: usize = k::EVEN_SHARED_LIMIT_BYTES;
/// Threads per block of [`bytes`] (512).
pub const BYTES_BLOCK: u32 = k::BYTES_BLOCK;
/// Bytes a block of [`bytes`] reads per step of its loop (32 KiB).
pub const BYTES_PER_BLOCK_STEP: usize = k::BYTES_PER_BLOCK_STEP;
/// Threads per block of [`even`] (256).
pub const EVEN_BLOCK: u32 = k::EVEN_BLOCK;

/// Whether an entry point overwrites `counts` or adds to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// `counts` is zeroed first (a memset queued on the stream), then counted into.
    Overwrite,
    /// The counts are added to what `counts` holds (wrapping past the counter's maximum).
    Accumulate,
}

/// A kernel of [`even`]: `(input: *const T, n: usize, bins: u32, lower: L, upper: L, counts:
/// *mut C)`, `L` the level type ([`EvenSample::Level`]).
pub type EvenKernel<T, C> = Kernel<(
    *const T,
    usize,
    u32,
    <T as EvenSample>::Level,
    <T as EvenSample>::Level,
    *mut C,
)>;

/// A kernel of [`bytes`]: `(input: *const u8, n: usize, counts: *mut C)`.
pub type BytesKernel<C> = Kernel<(*const u8, usize, *mut C)>;

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
/// [`EvenSample`] (`gpu::histogram::even`), which the kernels and [`reference::bin_of`] share;
/// its levels (`lower`, `upper`) have the type [`EvenSample::Level`]: `i64` for the integer
/// samples, `f32` for `f32`.
pub trait HistogramElement:
    DeviceRepr
    + DeviceCopy
    + Copy
    + PartialOrd
    + std::fmt::Debug
    + Send
    + 'static
    + sealed::Sealed
    + EvenSample<Level: DeviceRepr + DeviceCopy + Copy + PartialOrd + std::fmt::Debug + Send>
{
    /// The kernels into `u32` counts: privatised in shared memory, then global atomics.
    const KERNELS_U32: [EvenKernel<Self, u32>; 2];
    /// The kernels into `u64` counts.
    const KERNELS_U64: [EvenKernel<Self, u64>; 2];

    /// Whether `[lower, upper)` can be binned: `lower < upper` (so neither is NaN) and, for
    /// `f32`, `upper - lower` finite (so both bounds are); for integers, `upper - lower` at
    /// most 2^32 (the rule's arithmetic; every 32-bit sample type's whole range fits).
    fn valid_range(lower: Self::Level, upper: Self::Level) -> bool;

    /// A level as the error [`Error::InvalidRange`] carries it.
    fn level(level: Self::Level) -> Level;
}

/// Whether `[lower, upper)` of integer levels is a range [`even`] bins: `lower < upper` and
/// at most 2^32 values.
fn valid_integer_range(lower: i64, upper: i64) -> bool {
    lower < upper && (upper as i128 - lower as i128) <= 1 << 32
}

macro_rules! histogram_element {
    ($t:ty, $s32:ident, $g32:ident, $s64:ident, $g64:ident, $range:expr, $level:expr) => {
        impl HistogramElement for $t {
            const KERNELS_U32: [EvenKernel<$t, u32>; 2] = [kernels::$s32, kernels::$g32];
            const KERNELS_U64: [EvenKernel<$t, u64>; 2] = [kernels::$s64, kernels::$g64];

            fn valid_range(lower: Self::Level, upper: Self::Level) -> bool {
                let valid: fn(Self::Level, Self::Level) -> bool = $range;
                valid(lower, upper)
            }

            fn level(level: Self::Level) -> Level {
                let wrap: fn(Self::Level) -> Level = $level;
                wrap(level)
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
    valid_integer_range,
    Level::Integer
);
histogram_element!(
    u16,
    histogram_even_shared_u16_u32,
    histogram_even_global_u16_u32,
    histogram_even_shared_u16_u64,
    histogram_even_global_u16_u64,
    valid_integer_range,
    Level::Integer
);
histogram_element!(
    i32,
    histogram_even_shared_i32_u32,
    histogram_even_global_i32_u32,
    histogram_even_shared_i32_u64,
    histogram_even_global_i32_u64,
    valid_integer_range,
    Level::Integer
);
histogram_element!(
    f32,
    histogram_even_shared_f32_u32,
    histogram_even_global_f32_u32,
    histogram_even_shared_f32_u64,
    histogram_even_global_f32_u64,
    |lower, upper| lower < upper && (upper - lower).is_finite(),
    |level| Level::Float(level.into())
);

/// A counter type of [`even`]: `u32` (inputs up to `u32::MAX` samples) and `u64` (any).
pub trait Counter:
    DeviceRepr + ValidAsZeroBits + Copy + Default + Send + 'static + sealed::Sealed
{
    /// The longest input this counter is accepted for (a bin may receive every sample).
    const MAX_INPUT: u64;

    /// The byte histogram's kernel into this counter.
    const BYTES: BytesKernel<Self>;

    /// The least blocks [`bytes`] launches for `n` bytes into this counter (the `u64` kernel's
    /// blocks count at most [`BYTES_U64_MAX_PER_BLOCK`](gpu::histogram::BYTES_U64_MAX_PER_BLOCK)
    /// bytes each).
    fn bytes_min_blocks(n: usize) -> u32;

    /// The `[shared, global]` kernels of samples `T` into this counter.
    fn kernels<T: HistogramElement>() -> [EvenKernel<T, Self>; 2];
}

impl Counter for u32 {
    const MAX_INPUT: u64 = u32::MAX as u64;
    const BYTES: BytesKernel<u32> = histogram_bytes;

    fn bytes_min_blocks(_: usize) -> u32 {
        1
    }

    fn kernels<T: HistogramElement>() -> [EvenKernel<T, u32>; 2] {
        T::KERNELS_U32
    }
}

impl Counter for u64 {
    const MAX_INPUT: u64 = u64::MAX;
    const BYTES: BytesKernel<u64> = histogram_bytes_u64;

    fn bytes_min_blocks(n: usize) -> u32 {
        // At most 2^64 / 2^31 = 2^33 in principle; a device holds at most 2^63 bytes, and
        // `blocks_to_cover` refuses a grid beyond its limit anyway.
        n.div_ceil(k::BYTES_U64_MAX_PER_BLOCK)
            .clamp(1, u32::MAX as usize) as u32
    }

    fn kernels<T: HistogramElement>() -> [EvenKernel<T, u64>; 2] {
        T::KERNELS_U64
    }
}

/// The 256-bin histogram of bytes, queued on `gpu`'s stream: `counts[b] (+)= #{i : input[i] ==
/// b}` for every byte value `b`. `input` is any device memory of `gpu`'s context (a
/// `CudaSlice<u8>` or a view starting at any byte); `counts` holds exactly [`BYTE_BINS`]
/// counters `C` ([`Counter`]): `u32` for inputs of up to `u32::MAX` bytes, `u64` for any
/// length. [`Update::Overwrite`] queues a memset of `counts` first; [`Update::Accumulate`]
/// adds (wrapping past the counter's maximum). No host synchronisation.
///
/// One launch of `histogram_bytes` (`u32`) or `histogram_bytes_u64` (the same kernel, its
/// block sums added with 64-bit atomics; see [`bytes_with`] for the configuration); an empty
/// input launches nothing (and with `Overwrite` only zeroes the counts).
///
/// # Errors
/// [`Error::WrongContext`] if a buffer lives in another context; [`Error::LengthMismatch`]
/// unless `counts` has 256 elements; [`Error::OutOfRange`] for more than `u32::MAX` bytes
/// into `u32` counts (a bin could overflow); [`Error::Driver`] if the memset or the launch
/// fails.
///
/// Sources: PMPP 4th ed. ch. 9 (privatisation, coarsening, aggregation); the per-warp
/// sub-histograms are those of CUB's and of Podlozhnyuk's "Histogram calculation in CUDA"
/// (NVIDIA, 2007) sample, with `red.shared` atomics.
pub fn bytes<C: Counter>(
    gpu: &Gpu,
    input: &impl DevicePtr<u8>,
    counts: &mut impl DevicePtrMut<C>,
    update: Update,
) -> Result<()> {
    bytes_with(gpu, input, counts, update).map(drop)
}

/// [`bytes`], returning the launch's configuration (for tables): blocks of
/// [`BYTES_BLOCK`] (512) threads with 16 KiB of static shared memory, one wave of them (the
/// blocks the device holds at once, from the occupancy of the kernel's registers) or fewer:
/// one per [`BYTES_PER_BLOCK_STEP`] (32 KiB) of input; for `u64` counts at least one per
/// 2^31 bytes. A grid of 0 blocks for an empty input.
///
/// # Errors
/// As [`bytes`].
pub fn bytes_with<C: Counter>(
    gpu: &Gpu,
    input: &impl DevicePtr<u8>,
    counts: &mut impl DevicePtrMut<C>,
    update: Update,
) -> Result<LaunchConfig> {
    let n = check_bytes(gpu, input, counts)?;
    let cfg = bytes_config::<C>(gpu, n)?;
    if update == Update::Overwrite {
        zero_counts(gpu, C::BYTES.name(), counts)?;
    }
    if n == 0 {
        return Ok(cfg);
    }
    // SAFETY: `C::BYTES` takes `(input: *const u8, n, counts: *mut C)`; `input` is a view of
    // `n` bytes in `gpu`'s context (checked), not written during the launch (it is borrowed
    // shared while `counts` is borrowed mutably, so they do not overlap); `counts` holds 256
    // `C` (checked); blocks of BYTES_BLOCK threads, a multiple of 32; for `u64` at least
    // `ceil(n / 2^31)` blocks (`bytes_config`); `u32` counts take at most `u32::MAX` bytes
    // (checked).
    unsafe { gpu.launch_unchecked(C::BYTES, cfg, (input, n, counts)) }?;
    Ok(cfg)
}

/// The launch of the byte histogram into `C` counts for `n` bytes (see [`bytes_with`]).
///
/// # Errors
/// [`Error::Driver`] if the occupancy cannot be read.
pub fn bytes_config<C: Counter>(gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
    let kernel = C::BYTES.name();
    if n == 0 {
        return Ok(launch::linear(0, k::BYTES_BLOCK, 0));
    }
    let wave = gpu.one_wave(kernel, k::BYTES_BLOCK, 0)?;
    let cover = launch::blocks_to_cover(kernel, n, k::BYTES_PER_BLOCK_STEP as u64)?;
    let blocks = cover.min(wave).max(C::bytes_min_blocks(n)).max(1);
    Ok(launch::linear(blocks, k::BYTES_BLOCK, 0))
}

/// The checks of [`bytes`] (and of the ladder): the buffers' contexts, 256 counts, at most
/// `C::MAX_INPUT` bytes. Returns `n`.
pub(crate) fn check_bytes<C: Counter>(
    gpu: &Gpu,
    input: &impl DevicePtr<u8>,
    counts: &impl DevicePtrMut<C>,
) -> Result<usize> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("counts", counts)?;
    expect_len("counts", BYTE_BINS, counts.len())?;
    let n = input.len();
    if n as u64 > C::MAX_INPUT {
        return Err(Error::OutOfRange {
            what: "input length",
            value: n as u64,
            min: 0,
            max: C::MAX_INPUT,
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

/// CUB's `HistogramEven`, queued on `gpu`'s stream: `bins = counts.len()` equal-width bins
/// over `[lower, upper)`; `counts[b] (+)= #{i : bin(input[i]) == b}` with bin
/// `floor((x - lower) * bins / (upper - lower))`: for integers exact (in 64-bit arithmetic);
/// for `f32` as CUB computes it, `(x - lower) * scale` in `f32` with
/// `scale = bins / (upper - lower)`, truncated and clamped to `bins - 1`. Samples below
/// `lower`, at or above `upper`, and NaN are dropped. [`reference::bin_of`] is the rule,
/// shared with the kernels.
///
/// The levels have their own type, as CUB's `LevelT` ([`EvenSample::Level`]): `i64`
/// for `u8`, `u16` and `i32` samples, so that `upper` may lie above the type's largest value
/// (`[0, 256)` counts every `u8`, `[i32::MIN, i32::MAX + 1)` every `i32`); `f32` for `f32`
/// samples (whose largest finite value no finite exclusive bound can reach: the width must
/// be finite; CUB's rule, kept).
///
/// `input` and `counts` are any device memory of `gpu`'s context; `counts` holds the bins'
/// counters, of type `C` ([`Counter`]: `u32` or `u64`); [`Update`] as for [`bytes`]. No host
/// synchronisation.
///
/// One launch: while `bins * size_of::<C>()` is at most [`EVEN_SHARED_LIMIT_BYTES`] (48 KiB:
/// 12288 `u32` or 6144 `u64` bins) the kernel that counts into a histogram per block in
/// dynamic shared memory, beyond it the one that counts with global atomics; blocks of
/// [`EVEN_BLOCK`] (256) threads, at most one wave of them (see [`even_with`]). An empty input
/// launches nothing.
///
/// # Errors
/// [`Error::WrongContext`] if a buffer lives in another context; [`Error::OutOfRange`] for
/// `counts` of 0 or more than [`MAX_BINS`] bins, or (`u32` counts) more than `u32::MAX`
/// samples; [`Error::InvalidRange`] unless `lower < upper` (a NaN bound is refused) and, for
/// `f32`, `upper - lower` is finite, for integers at most 2^32; [`Error::Driver`] if the
/// memset or the launch fails.
pub fn even<T: HistogramElement, C: Counter>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    lower: T::Level,
    upper: T::Level,
    counts: &mut impl DevicePtrMut<C>,
    update: Update,
) -> Result<()> {
    even_with(gpu, input, lower, upper, counts, update).map(drop)
}

/// [`even`], returning the launch's configuration: blocks of [`EVEN_BLOCK`] threads,
/// `min(one wave, ceil(n / (EVEN_BLOCK * EVEN_ITEMS)))` blocks (a grid-stride loop covers the
/// rest), and `bins * size_of::<C>()` bytes of dynamic shared memory for the privatised kernel
/// (0 for the global one). A grid of 0 blocks for an empty input.
///
/// # Errors
/// As [`even`].
pub fn even_with<T: HistogramElement, C: Counter>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    lower: T::Level,
    upper: T::Level,
    counts: &mut impl DevicePtrMut<C>,
    update: Update,
) -> Result<LaunchConfig> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("counts", counts)?;
    let bins = counts.len();
    if bins == 0 || bins > MAX_BINS {
        return Err(Error::OutOfRange {
            what: "bins",
            value: bins as u64,
            min: 1,
            max: MAX_BINS as u64,
        });
    }
    if !T::valid_range(lower, upper) {
        return Err(Error::InvalidRange {
            lower: T::level(lower),
            upper: T::level(upper),
        });
    }
    let n = input.len();
    if n as u64 > C::MAX_INPUT {
        return Err(Error::OutOfRange {
            what: "input length",
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
    // SAFETY: every even kernel takes `(input: *const T, n, bins: u32, lower: T::Level,
    // upper: T::Level, counts: *mut C)`; `input` is a view of `n` samples and `counts` of
    // `bins` counters, both in `gpu`'s context (checked), not overlapping (one is borrowed
    // mutably); `1 <= bins <= MAX_BINS` and a valid range (checked: the rule's
    // precondition), so every bin it returns is below `bins`; the privatised kernel gets
    // `bins * size_of::<C>()` bytes of dynamic shared memory (`even_config`).
    unsafe { gpu.launch_unchecked(kernel, cfg, (input, n, bins as u32, lower, upper, counts)) }?;
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
