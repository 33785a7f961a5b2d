//! `segmented_reduce`: CUB's `DeviceSegmentedReduce` over CSR offsets, with every operator of
//! [`ops`](super::ops): segment `s` is `input[offsets[s]..offsets[s + 1]]`, reduced into
//! `output[s]` (an empty segment gives the operator's identity; an arg-reduction's index is
//! relative to the segment's start, as CUB's).
//!
//! Two shapes, chosen by the host from the mean segment length: a warp per segment (many short
//! segments: each warp takes segments `w, w + warps, ...`, its lanes stride over the elements and
//! a shuffle tree combines them), or a block per segment (few long ones: the block's threads
//! stride and a block reduction combines them).

use gpu_std::reduce::{Reduction, block_reduce, warp_reduce};
use gpu_std::{atomic_max, block_dim, block_idx, grid_dim, kernel, static_shared, thread_idx};

use super::ops::{ArgMax, ArgMin, F16, Max, Min, Product, Sum};

/// Segment `s`'s bounds, clamped into `0..=n` with `begin <= end`, and whether they needed it.
///
/// # Safety
/// `offsets` holds `s + 2` words.
#[inline(always)]
unsafe fn bounds(offsets: *const u64, s: usize, n: usize) -> (usize, usize, bool) {
    // SAFETY: forwarded to the caller.
    let (begin, end) = unsafe { (*offsets.add(s) as usize, *offsets.add(s + 1) as usize) };
    let valid = begin <= end && end <= n;
    let end = end.min(n);
    (begin.min(end), end, valid)
}

/// The reduction `R` of each segment of `input[..n]` over CSR `offsets` into `output`, one
/// launch: entries `segmented_reduce_<operator>_<type>`, the instances of
/// [`reduce_op`](super::ops) (`sum`, `product`, `min`, `max`, `arg_min`, `arg_max` of
/// `i8`..`i64`, `u8`..`u64`, `f32`, `f64`, `f16`).
///
/// `per_warp != 0`: each warp of the grid takes segments `w, w + warps, ...` (for many short
/// segments); otherwise each block takes segments `b, b + gridDim.x, ...`. A segment whose
/// offsets decrease or pass `n` is clamped into `0..=n` (never read out of bounds) and its index
/// plus one is written into `*bad` with an atomic maximum, so the host can refuse the result.
///
/// Launch: any grid of one-dimensional blocks of a multiple of 32 threads up to 1024.
///
/// # Safety
/// `input` is aligned for its type and valid for `n` elements; `offsets` holds `segments + 1`
/// words; `output` holds `segments` accumulators and overlaps nothing else; `bad` is one `u64`.
///
/// Performance: reads each element once, with element-sized loads.
#[kernel(instantiate(R =
    Sum<i8>, Sum<i16>, Sum<i32>, Sum<i64>, Sum<u8>, Sum<u16>, Sum<u32>, Sum<u64>,
    Sum<f32>, Sum<f64>, Sum<F16>,
    Product<i8>, Product<i16>, Product<i32>, Product<i64>, Product<u8>, Product<u16>,
    Product<u32>, Product<u64>, Product<f32>, Product<f64>, Product<F16>,
    Min<i8>, Min<i16>, Min<i32>, Min<i64>, Min<u8>, Min<u16>, Min<u32>, Min<u64>,
    Min<f32>, Min<f64>, Min<F16>,
    Max<i8>, Max<i16>, Max<i32>, Max<i64>, Max<u8>, Max<u16>, Max<u32>, Max<u64>,
    Max<f32>, Max<f64>, Max<F16>,
    ArgMin<i8>, ArgMin<i16>, ArgMin<i32>, ArgMin<i64>, ArgMin<u8>, ArgMin<u16>, ArgMin<u32>,
    ArgMin<u64>, ArgMin<f32>, ArgMin<f64>, ArgMin<F16>,
    ArgMax<i8>, ArgMax<i16>, ArgMax<i32>, ArgMax<i64>, ArgMax<u8>, ArgMax<u16>, ArgMax<u32>,
    ArgMax<u64>, ArgMax<f32>, ArgMax<f64>, ArgMax<F16>,
))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn segmented_reduce<R: Reduction>(
    input: *const R::Item,
    n: usize,
    offsets: *const u64,
    segments: usize,
    output: *mut R::Acc,
    bad: *mut u64,
    per_warp: u32,
) {
    let warp_totals = static_shared!(s_segmented_reduce: [R::Acc; 32]);
    let tid = thread_idx().x as usize;
    let block = block_dim().x as usize;
    let grid = grid_dim().x as usize;
    let bid = block_idx().x as usize;
    // SAFETY (the whole body): segment indices are below `segments`, so their two offsets are
    // in `offsets`; element indices lie in the clamped `begin..end`, below `n`.
    unsafe {
        if per_warp != 0 {
            let lane = tid % 32;
            let warps = block / 32 * grid;
            let mut s = bid * (block / 32) + tid / 32;
            while s < segments {
                let (begin, end, valid) = bounds(offsets, s, n);
                let mut acc = R::IDENTITY;
                let mut i = begin + lane;
                while i < end {
                    acc = R::accumulate(acc, input.add(i).read(), i - begin);
                    i += 32;
                }
                let total = warp_reduce::<R>(acc);
                if lane == 0 {
                    *output.add(s) = total;
                    if !valid {
                        atomic_max(bad, s as u64 + 1);
                    }
                }
                s += warps;
            }
        } else {
            let mut s = bid;
            while s < segments {
                let (begin, end, valid) = bounds(offsets, s, n);
                let mut acc = R::IDENTITY;
                let mut i = begin + tid;
                while i < end {
                    acc = R::accumulate(acc, input.add(i).read(), i - begin);
                    i += block;
                }
                let total = block_reduce::<R>(acc, &warp_totals);
                if tid == 0 {
                    *output.add(s) = total;
                    if !valid {
                        atomic_max(bad, s as u64 + 1);
                    }
                }
                s += grid;
            }
        }
    }
}
