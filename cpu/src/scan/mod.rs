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
pub mod ops;
pub mod reference;
mod workspace;

use cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig};
use gpu::scan::{self as k, lookback};

pub use ops::{
    ByKeyKernel, ByKeyKind, ScanKernel, ScanKey, ScanKeys, ScanKind, cummax, cummin, cumprod,
    cumsum, exclusive_scan, inclusive_scan, inclusive_scan_by_key, inclusive_scan_init,
};
pub use workspace::ScanWorkspace;

/// The look-back kernels' tile shapes, as the docs and the `f32` error bound
/// ([`reference::f32_bound`]) name them: [`LOOKBACK_TILE`] elements per tile with blocks of
/// [`LOOKBACK_BLOCK`] threads (16384 with 512: the compaction's and the tile copy's largest;
/// the scan's are [`gpu::scan::lookback_tile_of`] of [`gpu::scan::SCAN_BLOCK`], 8192),
/// [`LOOKBACK_MIN_TILE`] with the smallest blocks (4096 with [`LOOKBACK_MIN_BLOCK`], 128).
pub use gpu::scan::{LOOKBACK_BLOCK, LOOKBACK_MIN_BLOCK, LOOKBACK_MIN_TILE, LOOKBACK_TILE};

use crate::context::Gpu;
#[allow(unused_imports)] // doc links
use crate::error::Error;
use crate::error::Result;
use crate::kernel::Kernel;

/// What the workspace's launches return for an empty input, which launches nothing: a grid of
/// no blocks.
pub const EMPTY_LAUNCH: LaunchConfig = LaunchConfig {
    grid_dim: (0, 1, 1),
    block_dim: (k::LOOKBACK_MIN_BLOCK, 1, 1),
    shared_mem_bytes: 0,
};

/// The look-back sum scan kernel of element type `T`: `(input: *const T, output: *mut T, n:
/// usize, status: *mut u64, counter: *mut u32, epoch: u32, exclusive: u32, init: T)`.
pub type LookbackKernel<T> = ScanKernel<T, T>;

mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
}

/// An element type of [`inclusive_sum`] and its siblings: `i32` and `u32` (wrapping, as
/// `wrapping_add`) and `f32`. (Every primitive type has its sums, products, minima and maxima
/// through [`inclusive_scan`] and [`ScanKind`].)
pub trait ScanElement: DeviceRepr + Copy + Default + Send + 'static + sealed::Sealed {
    /// The sum of this type, as a [`ScanKind`].
    type SumOp: ScanKind<Item = Self, Acc = Self>;
    /// The look-back kernel for this type.
    const KERNEL: LookbackKernel<Self>;
}

impl ScanElement for i32 {
    type SumOp = gpu::reduce::ops::Sum<i32>;
    const KERNEL: LookbackKernel<i32> = lookback::scan_lookback_i32;
}
impl ScanElement for u32 {
    type SumOp = gpu::reduce::ops::Sum<u32>;
    const KERNEL: LookbackKernel<u32> = lookback::scan_lookback_u32;
}
impl ScanElement for f32 {
    type SumOp = gpu::reduce::ops::Sum<f32>;
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
/// 32 elements per thread, blocks of [`SCAN_BLOCK`](gpu::scan::SCAN_BLOCK) (256) threads (tiles
/// of 8192 elements, staged in 32 KiB of shared memory) on long inputs, 128 (tiles of 4096)
/// where that keeps four tiles per SM ([`gpu::scan::scan_block`]); 16-byte copies and stores
/// where both views start on a 16-byte boundary, element by element otherwise. An empty input
/// launches nothing.
///
/// Integers wrap as `wrapping_add` (exact). `f32`: the additions happen in an order that
/// depends on the look-back's timing, so the last bits may differ between runs; the error of
/// `output[i]` is at most `(tile(i) + 96) * f32::EPSILON * (|x[0]| + ... + |x[i]|)` (see
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
