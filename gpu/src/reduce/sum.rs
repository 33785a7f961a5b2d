//! `reduce_sum` ([`reduce_sum_i32`], [`reduce_sum_f32`], [`reduce_sum_f32_f64`]), the one-launch reduction a user should call (beyond the
//! seed): `gpu_std::reduce::device_reduce` over an even share of the input per block with 16-byte
//! loads, warp shuffles, and the last block to finish combines the block partials, so the total
//! is on the GPU when the kernel ends. [`square_sum_reduce`] and the operators of [`ops`] are
//! the same body over other [`Reduction`]s.
//!
//! [`square_sum_reduce`]: super::square_sum::kernels::square_sum_reduce
//! [`ops`]: super::ops

use gpu_std::kernel;
use gpu_std::reduce::{Reduction, device_reduce};
use gpu_std::static_shared;

/// `i32` summed modulo 2^32 (wrapping, as the GPU's integer add): the [`Reduction`] of
/// [`reduce_sum_i32`].
pub struct SumI32;
/// `f32` summed in `f32`: the [`Reduction`] of [`reduce_sum_f32`].
pub struct SumF32;
/// `f32` summed in `f64`: the [`Reduction`] of [`reduce_sum_f32_f64`].
pub struct WideF32;

impl Reduction for SumI32 {
    type Item = i32;
    type Acc = i32;
    const IDENTITY: i32 = 0;
    #[inline(always)]
    fn lift(item: i32, _index: usize) -> i32 {
        item
    }
    #[inline(always)]
    fn combine(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
}

impl Reduction for SumF32 {
    type Item = f32;
    type Acc = f32;
    const IDENTITY: f32 = 0.0;
    #[inline(always)]
    fn lift(item: f32, _index: usize) -> f32 {
        item
    }
    #[inline(always)]
    fn combine(a: f32, b: f32) -> f32 {
        a + b
    }
}

impl Reduction for WideF32 {
    type Item = f32;
    type Acc = f64;
    const IDENTITY: f64 = 0.0;
    #[inline(always)]
    fn lift(item: f32, _index: usize) -> f64 {
        item as f64
    }
    #[inline(always)]
    fn combine(a: f64, b: f64) -> f64 {
        a + b
    }
}

/// Sum of `n` elements into `*result`, in one launch: `reduce_sum_i32` (wrapping, as the GPU's
/// integer add), `reduce_sum_f32` (accumulated in `f32`) and `reduce_sum_f32_f64` (`f32`
/// accumulated in `f64`, `S =` [`WideF32`]; on an H100, FP64 throughput is high enough that this
/// stays memory-bound).
///
/// Algorithm: each block reads an even share of the input (a contiguous run of tiles of
/// `REDUCE_SUM_UNROLL x blockDim.x` 16-byte groups, as CUB's `DeviceReduce` splits its input)
/// with 16-byte loads through the read-only path (four in flight per thread), a register
/// accumulator, warp shuffles and shared memory for the block sum, last-block-done for the grid
/// sum. Beyond the seed: the version to call.
///
/// Rounding (`f32`, `f64`): each thread adds its elements sequentially (about
/// `n / (gridDim.x * blockDim.x)` of them), then two shuffle trees per block and a strided pass
/// plus trees over the partials; the error is bounded by that depth times the accumulator's
/// epsilon times the sum of magnitudes. NaN and infinities propagate.
///
/// Launch: blocks of [`REDUCE_SUM_BLOCK`](super::REDUCE_SUM_BLOCK) threads (any multiple of
/// 32 up to 1024 works), at most one wave of resident blocks, at least one block (also for
/// `n = 0`: the result is then 0).
///
/// # Safety
/// `input` is 4-byte aligned (any view; 16-byte aligned is fastest), valid for `n` elements
/// and not written during the launch; `partials` holds `gridDim.x` accumulators; `counter`
/// points to a `u32` that is 0 and used by no concurrent launch; `result` points to one
/// accumulator.
///
/// Performance: reads each element once (4 bytes); bound by DRAM bandwidth.
#[kernel(instantiate(S = SumI32 as i32, SumF32 as f32, WideF32 as f32_f64))]
pub unsafe fn reduce_sum<S: Reduction>(
    input: *const S::Item,
    n: usize,
    partials: *mut S::Acc,
    counter: *mut u32,
    result: *mut S::Acc,
) {
    let warp_totals = static_shared!(s_reduce_sum: [S::Acc; 32]);
    // SAFETY: forwarded to the caller's contract.
    unsafe { device_reduce::<S>(input, n, partials, counter, result, &warp_totals) }
}
