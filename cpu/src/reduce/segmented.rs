//! Segmented reduction over CSR offsets (CUB's `DeviceSegmentedReduce`): segment `s` of the
//! input is `input[offsets[s]..offsets[s + 1]]`, reduced with any operator of [`ops`](super::ops)
//! into `output[s]`; an empty segment gives the identity; an arg-reduction's index is relative
//! to its segment's start (as CUB's).
//!
//! One launch of `gpu::reduce::segmented::segmented_reduce_<operator>_<type>`: a warp per segment
//! when the mean segment is shorter than [`WARP_PER_SEGMENT_BELOW`] elements, else a block of
//! 256 threads per segment; the grid is one wave of resident blocks (fewer when there are fewer
//! segments).

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};
use gpu::reduce::ops::{ArgMax, ArgMin, Max, Min, Product, Sum};
use gpu::reduce::segmented::segmented_reduce as kernel;
use gpu_std::reduce::Reduction;

use super::ops::Element;
use super::sum::ReduceKind;
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch;

/// The kernel instances `segmented_reduce` has.
use gpu::reduce::segmented::__gpu_std_instance_of_segmented_reduce as Instance;

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
    ($($op:ident),*) => {$(
        impl<T: Element> SegmentedKind for $op<T>
        where
            $op<T>: ReduceKind<Input = T> + Instance + Reduction<Item = T, Acc = <$op<T> as ReduceKind>::Acc>,
        {
            const SEGMENTED: SegmentedKernel<T, Self::Acc> = kernel::<Self>();
        }
    )*};
}
segmented_kind!(Sum, Product, Min, Max, ArgMin, ArgMax);

/// The reduction `K` of every segment of `input` over the CSR `offsets` (`segments + 1`
/// non-decreasing `u64` offsets on the device, the last at most `input.len()`), as host values
/// (`segments` of them). Waits for `gpu`'s stream.
///
/// # Errors
/// [`Error::InvalidOffsets`] if a segment's offsets decrease or pass the input's end (the kernel
/// clamps such a segment, reads nothing out of bounds, and reports it); [`Error::LengthMismatch`]
/// for an empty `offsets`; [`Error::WrongContext`], [`Error::OutOfMemory`], [`Error::Driver`]
/// as [`reduce`](fn@super::reduce).
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
            what: "segmented reduction output",
            requirement: "room for one accumulator per segment",
        });
    };
    let bad = queue::<K>(gpu, input, offsets, &mut view)?;
    check_bad(gpu, &bad, offsets, input.len(), K::SEGMENTED.name())?;
    let words = gpu.download(&output, K::SEGMENTED.name())?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    (0..segments)
        .map(|s| {
            // SAFETY: the kernel wrote `segments` accumulators at the start of the words;
            // `Acc: Pod` has any bits as a value; `read_unaligned` needs no alignment.
            let acc = unsafe {
                bytes
                    .as_ptr()
                    .add(s * size_of::<K::Acc>())
                    .cast::<K::Acc>()
                    .read_unaligned()
            };
            K::output(acc, 1)
        })
        .collect()
}

/// Queues the reduction `K` of every segment of `input` into the device buffer `output` (one
/// accumulator per segment: `i64` for `Sum<i8>`, `f32` for `Max<f32>`), without a host
/// synchronisation. Offsets that decrease or pass the input's end are clamped into it (the
/// segment's result is then of the clamped range); [`segmented_reduce`] refuses them instead.
///
/// # Errors
/// [`Error::LengthMismatch`] unless `output` holds one accumulator per segment; otherwise as
/// [`segmented_reduce`] (but for [`Error::InvalidOffsets`]).
pub fn segmented_reduce_into<K: SegmentedKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Input>,
    offsets: &impl DevicePtr<u64>,
    output: &mut impl DevicePtrMut<K::Acc>,
) -> Result<()>
where
    K::Acc: DeviceRepr,
{
    crate::error::expect_len("segmented output", segment_count(offsets)?, output.len())?;
    queue::<K>(gpu, input, offsets, output).map(drop)
}

/// `offsets.len() - 1`, refusing an empty `offsets`.
fn segment_count(offsets: &impl DevicePtr<u64>) -> Result<usize> {
    offsets.len().checked_sub(1).ok_or(Error::LengthMismatch {
        what: "segment offsets (segments + 1)",
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
    offsets: &impl DevicePtr<u64>,
    len: usize,
    kernel: &'static str,
) -> Result<()> {
    let reported = gpu.download(bad, kernel)?[0];
    if reported == 0 {
        return Ok(());
    }
    let segment = (reported - 1) as usize;
    let all = gpu.download(offsets, kernel)?;
    Err(Error::InvalidOffsets {
        segment,
        begin: all[segment],
        end: all[segment + 1],
        len,
    })
}
