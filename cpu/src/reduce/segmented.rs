//! Segmented reduction over CSR offsets (CUB's `DeviceSegmentedReduce`): segment `s` of the
//! input is `input[offsets[s]..offsets[s + 1]]`, reduced with any operator of [`ops`](super::ops)
//! into `output[s]`; an empty segment gives the identity; an arg-reduction's index is relative
//! to its segment's start (as CUB's).
//!
//! An arg-reduction of an empty segment has no value, as [`argmin`](super::argmin) of an empty
//! input has none: [`segmented_reduce`] refuses it ([`Error::EmptySegment`], naming the
//! segment) rather than return the kernel's identity `(0, T::MAX)`, which a segment whose first
//! element is `T::MAX` also gives. The arg-reductions have no [`segmented_reduce_into`]: their
//! accumulator, [`ArgPair`](super::ArgPair), is the `gpu` crate's type and cudarc's
//! `DeviceRepr` is neither crate's, so no device buffer of pairs can be named; a device output
//! of them would need a sentinel index for empty segments, which the kernel does not write.
//!
//! One launch of `gpu::reduce::segmented::segmented_reduce_<operator>_<type>`: a warp per segment
//! when the mean segment is shorter than [`WARP_PER_SEGMENT_BELOW`] elements, else a block of
//! 256 threads per segment; the grid is one wave of resident blocks (fewer when there are fewer
//! segments).

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};
use gpu::reduce::ops::{ArgMax, ArgMin, Max, Min, Product, Sum};

use super::ops::Element;
use super::ops::sealed::Instances;
use super::sum::ReduceKind;
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch;

/// Segments shorter than this on average get a warp each; longer ones a block.
pub const WARP_PER_SEGMENT_BELOW: usize = 1024;
/// Threads per block of the segmented reduction.
pub const SEGMENTED_BLOCK: u32 = 256;

/// A segmented reduction kernel: `(input: *const In, n: usize, offsets: *const u64, segments:
/// usize, output: *mut Acc, bad: *mut u64, per_warp: u32)`.
pub type SegmentedKernel<In, Acc> =
    Kernel<(*const In, usize, *const u64, usize, *mut Acc, *mut u64, u32)>;

/// A [`ReduceKind`] of [`ops`](super::ops) with its segmented kernel.
pub trait SegmentedKind: ReduceKind {
    /// The segmented kernel.
    const SEGMENTED: SegmentedKernel<Self::Input, Self::Acc>;
}

macro_rules! segmented_kind {
    ($($op:ident => $kernel:ident;)*) => {$(
        impl<T: Element> SegmentedKind for $op<T> {
            const SEGMENTED: SegmentedKernel<T, Self::Acc> = <T as Instances>::$kernel;
        }
    )*};
}
segmented_kind! {
    Sum => SEGMENTED_SUM; Product => SEGMENTED_PRODUCT; Min => SEGMENTED_MIN;
    Max => SEGMENTED_MAX; ArgMin => SEGMENTED_ARG_MIN; ArgMax => SEGMENTED_ARG_MAX;
}

/// The reduction `K` of every segment of `input` over the CSR `offsets` (`segments + 1`
/// non-decreasing `u64` offsets on the device, the last at most `input.len()`), as host values
/// (`segments` of them). Waits for `gpu`'s stream.
///
/// # Errors
/// [`Error::InvalidOffsets`] if a segment's offsets decrease or pass the input's end (the kernel
/// clamps such a segment, reads nothing out of bounds, and reports it); [`Error::EmptySegment`]
/// for an arg-reduction ([`ArgMin`], [`ArgMax`]) with an empty segment (the first one);
/// [`Error::LengthMismatch`] for an empty `offsets`; [`Error::WrongContext`],
/// [`Error::OutOfMemory`], [`Error::Driver`] as [`reduce`](fn@super::reduce).
pub fn segmented_reduce<K: SegmentedKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Input>,
    offsets: &impl DevicePtr<u64>,
) -> Result<Vec<K::Output>> {
    let segments = segment_count(offsets)?;
    let words = (segments * size_of::<K::Acc>()).div_ceil(8).max(1);
    let mut output = gpu.zeros::<u64>(words)?;
    // SAFETY: `words` 8-byte words hold `segments` accumulators (alignment 4 or 8).
    let view = unsafe { output.transmute_mut::<K::Acc>(segments) };
    let Some(mut view) = view else {
        return Err(Error::Unsupported {
            what: "output",
            requirement: "room for one accumulator per segment",
        });
    };
    let bad = queue::<K>(gpu, input, offsets, &mut view)?;
    let kernel = K::SEGMENTED.name();
    let all = gpu.download(offsets, kernel)?;
    check_bad(gpu, &bad, &all, input.len(), kernel)?;
    let words = gpu.download(&output, kernel)?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let accs: Vec<K::Acc> = (0..segments)
        .map(|s| {
            // SAFETY: the kernel wrote `segments` accumulators at the start of the words;
            // `Acc: Pod` has any bits as a value; `read_unaligned` needs no alignment.
            unsafe {
                bytes
                    .as_ptr()
                    .add(s * size_of::<K::Acc>())
                    .cast::<K::Acc>()
                    .read_unaligned()
            }
        })
        .collect();
    results::<K>(&accs, &all)
}

/// Each segment's result from its accumulator and its length (`offsets`, valid: checked by the
/// kernel): [`Error::EmptySegment`] for the first empty segment of an arg-reduction.
fn results<K: ReduceKind>(accs: &[K::Acc], offsets: &[u64]) -> Result<Vec<K::Output>> {
    accs.iter()
        .zip(offsets.windows(2))
        .enumerate()
        .map(|(segment, (&acc, w))| {
            let len = w[1].saturating_sub(w[0]) as usize;
            K::output(acc, len).map_err(|e| match e {
                Error::EmptyInput { operation } => Error::EmptySegment { operation, segment },
                other => other,
            })
        })
        .collect()
}

/// Queues the reduction `K` of every segment of `input` into the device buffer `output` (one
/// accumulator per segment: `i64` for `Sum<i8>`, `f32` for `Max<f32>`), without a host
/// synchronisation. Offsets that decrease or pass the input's end are clamped into it (the
/// segment's result is then of the clamped range); [`segmented_reduce`] refuses them instead.
///
/// Not for the arg-reductions: `K::Acc: DeviceRepr` holds for the kinds whose accumulator is
/// a primitive ([`Sum`], [`Product`], [`Min`], [`Max`]), not for [`ArgMin`] and [`ArgMax`]'s
/// [`ArgPair`](super::ArgPair) (see the [module](self) docs); [`segmented_reduce`] takes them.
///
/// # Errors
/// [`Error::LengthMismatch`] unless `output` holds one accumulator per segment; otherwise as
/// [`segmented_reduce`] (but for [`Error::InvalidOffsets`] and [`Error::EmptySegment`]).
pub fn segmented_reduce_into<K: SegmentedKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Input>,
    offsets: &impl DevicePtr<u64>,
    output: &mut impl DevicePtrMut<K::Acc>,
) -> Result<()>
where
    K::Acc: DeviceRepr,
{
    crate::error::expect_len("output", segment_count(offsets)?, output.len())?;
    queue::<K>(gpu, input, offsets, output).map(drop)
}

/// `offsets.len() - 1`, refusing an empty `offsets`.
fn segment_count(offsets: &impl DevicePtr<u64>) -> Result<usize> {
    offsets.len().checked_sub(1).ok_or(Error::LengthMismatch {
        what: "offsets",
        expected: 1,
        actual: 0,
    })
}

/// Queues one launch; returns the device word the kernel reports clamped segments in.
fn queue<K: SegmentedKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Input>,
    offsets: &impl DevicePtr<u64>,
    output: &mut impl DevicePtrMut<K::Acc>,
) -> Result<CudaSlice<u64>> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("offsets", offsets)?;
    gpu.check_buffer("output", output)?;
    let segments = segment_count(offsets)?;
    let mut bad = gpu.zeros::<u64>(1)?;
    if segments == 0 {
        return Ok(bad);
    }
    let n = input.len();
    let per_warp = n / segments < WARP_PER_SEGMENT_BELOW;
    let per_block = if per_warp {
        (SEGMENTED_BLOCK / 32) as usize
    } else {
        1
    };
    let max_grid = gpu.one_wave(K::SEGMENTED.name(), SEGMENTED_BLOCK, 0)? as usize;
    let grid = segments.div_ceil(per_block).clamp(1, max_grid) as u32;
    let cfg = launch::linear(grid, SEGMENTED_BLOCK, 0);
    // SAFETY: `segmented_reduce` takes `(input, n, offsets, segments, output, bad, per_warp)`;
    // `input` holds `n` elements aligned for its type and is only read; `offsets` holds
    // `segments + 1` words (its length); `output` holds `segments` accumulators (checked by the
    // callers) and is borrowed mutably, so it overlaps neither; `bad` is one zeroed word; the
    // blocks are one-dimensional, 256 threads.
    unsafe {
        gpu.launch_unchecked(
            K::SEGMENTED,
            cfg,
            (
                input,
                n,
                offsets,
                segments,
                output,
                &mut bad,
                u32::from(per_warp),
            ),
        )?;
    }
    Ok(bad)
}

/// [`Error::InvalidOffsets`] naming the segment the kernel reported, if any.
fn check_bad(
    gpu: &Gpu,
    bad: &CudaSlice<u64>,
    all: &[u64],
    len: usize,
    kernel: &'static str,
) -> Result<()> {
    let reported = gpu.download(bad, kernel)?[0];
    if reported == 0 {
        return Ok(());
    }
    let segment = (reported - 1) as usize;
    Err(Error::InvalidOffsets {
        segment,
        begin: all[segment],
        end: all[segment + 1],
        len,
    })
}

#[cfg(test)]
mod tests {
    use gpu::reduce::ops::ArgPair;
    use gpu_std::reduce::Reduction;

    use super::*;

    #[test]
    fn an_empty_arg_segment_is_refused_by_name_and_other_kinds_give_the_identity() {
        // Segments of 2, 0 and 1 elements; the accumulators as the kernel leaves them (the
        // empty one is the identity).
        let offsets = [0u64, 2, 2, 3];
        let accs = [
            ArgPair::new(-4i32, 1),
            <ArgMin<i32> as Reduction>::IDENTITY,
            ArgPair::new(7, 0),
        ];
        let e = results::<ArgMin<i32>>(&accs, &offsets).unwrap_err();
        assert!(
            matches!(e, Error::EmptySegment { segment: 1, operation } if operation.contains("arg_min")),
            "{e:?}"
        );
        assert!(e.to_string().contains("segment 1 is empty"), "{e}");
        let ok = results::<ArgMin<i32>>(&[accs[0], accs[2]], &[0, 2, 3]).unwrap();
        assert_eq!(ok, vec![(1, -4), (0, 7)]);
        let sums = results::<Sum<i32>>(&[-3, 0, 7], &offsets).unwrap();
        assert_eq!(sums, vec![-3, 0, 7]);
        let mins = results::<Min<u8>>(&[3, u8::MAX as u32, 9], &offsets).unwrap();
        assert_eq!(mins, vec![3, u8::MAX, 9]);
    }

    /// The kernel's shapes on the host: 32 lanes (or threads) each accumulate their strided
    /// elements from the identity, then a tree combines them (lower half first).
    fn strided<R: Reduction<Item = T>, T: Copy>(x: &[T], lanes: usize) -> R::Acc {
        let mut acc: Vec<R::Acc> = (0..lanes)
            .map(|lane| {
                (lane..x.len())
                    .step_by(lanes)
                    .fold(R::IDENTITY, |a, i| R::accumulate(a, x[i], i))
            })
            .collect();
        while acc.len() > 1 {
            let half = acc.len() / 2;
            acc = (0..half)
                .map(|i| R::combine(acc[i], acc[i + half]))
                .collect();
        }
        acc[0]
    }

    #[test]
    fn segments_of_the_identitys_value_name_their_first_element() {
        // Every element equal to the identity's value (`T::MAX` for ArgMin, `T::MIN` for
        // ArgMax, infinities for floats): the identity's index 0 is then the first element's,
        // so idle lanes tie with it and the first index wins, as with real ties.
        for len in [1usize, 2, 31, 33, 100, 1000] {
            for lanes in [32, 256] {
                let x = vec![i32::MAX; len];
                assert_eq!(
                    strided::<ArgMin<i32>, _>(&x, lanes).index(),
                    0,
                    "{len} {lanes}"
                );
                let x = vec![u8::MIN; len];
                assert_eq!(strided::<ArgMax<u8>, _>(&x, lanes).index(), 0);
                let x = vec![f32::INFINITY; len];
                let got = strided::<ArgMin<f32>, _>(&x, lanes);
                assert_eq!((got.index(), got.value), (0, f32::INFINITY));
                // One element below the others, anywhere: its index.
                let mut x = vec![i64::MAX; len];
                x[len / 2] = i64::MAX - 1;
                assert_eq!(
                    strided::<ArgMin<i64>, _>(&x, lanes).index(),
                    (len / 2) as u64
                );
                // A NaN among infinities: the first NaN (a negative NaN is a NaN too).
                let mut x = vec![f64::NEG_INFINITY; len];
                x[len - 1] = -f64::NAN;
                let got = strided::<ArgMax<f64>, _>(&x, lanes);
                assert_eq!(got.index(), (len - 1) as u64);
                assert!(got.value.is_nan());
            }
        }
    }
}
