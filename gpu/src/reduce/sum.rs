//! `reduce_sum` ([`reduce_sum_i32`], [`reduce_sum_f32`], [`reduce_sum_f32_f64`]), the one-launch reduction a user should call (beyond the
//! seed): 16-byte loads over an even share of the input per block, warp shuffles, and the last block to finish adds the block
//! partials, so the total is on the GPU when the kernel ends. [`square_sum_reduce`] reuses its
//! body through the [`Summand`] trait.
//!
//! [`square_sum_reduce`]: super::square_sum::kernels::square_sum_reduce

use super::coordinates;
use gpu_std::kernel;
use gpu_std::static_shared;
use gpu_std::{
    FULL_MASK, RelaxedLoad, SharedArray, WarpShuffle, atomic_add_acq_rel, block_dim, grid_dim,
    load_global_nc_v4_u32, load_relaxed_gpu, shfl_down_sync, syncthreads, syncthreads_or,
    thread_idx,
};

/// An element type `reduce_sum` ([`reduce_sum_i32`] and its siblings) reads with 16-byte loads and the type it accumulates in:
/// `i32` (wrapping), `f32` (in `f32`) and [`WideF32`] (`f32` in `f64`).
pub trait Summand: Copy {
    /// The element as the input holds it (32 bits).
    type Input: Copy;
    /// Accumulator.
    type Acc: Copy + WarpShuffle + RelaxedLoad;
    /// The additive identity of the accumulator.
    const ZERO: Self::Acc;
    /// The element whose 32 bits are `bits`.
    fn from_bits(bits: u32) -> Self;
    /// `acc + self`, in the accumulator's arithmetic.
    fn add_to(self, acc: Self::Acc) -> Self::Acc;
    /// `a + b` of two accumulators.
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

impl Summand for i32 {
    type Input = i32;
    type Acc = i32;
    const ZERO: i32 = 0;
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
    #[inline(always)]
    fn add_to(self, acc: i32) -> i32 {
        acc.wrapping_add(self)
    }
    #[inline(always)]
    fn combine(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
}

/// `f32` summed in `f32`.
impl Summand for f32 {
    type Input = f32;
    type Acc = f32;
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
    #[inline(always)]
    fn add_to(self, acc: f32) -> f32 {
        acc + self
    }
    #[inline(always)]
    fn combine(a: f32, b: f32) -> f32 {
        a + b
    }
}

/// `f32` summed in `f64`: the [`Summand`] of `reduce_sum_f32_f64`.
#[derive(Clone, Copy, Debug)]
pub struct WideF32(pub f32);

impl Summand for WideF32 {
    type Input = f32;
    type Acc = f64;
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        WideF32(f32::from_bits(bits))
    }
    #[inline(always)]
    fn add_to(self, acc: f64) -> f64 {
        acc + self.0 as f64
    }
    #[inline(always)]
    fn combine(a: f64, b: f64) -> f64 {
        a + b
    }
}

/// Warp-shuffle tree: lane 0 ends with the sum of the 32 lanes' values.
#[inline(always)]
fn warp_sum<S: Summand>(mut v: S::Acc) -> S::Acc {
    let mut offset = 16;
    while offset > 0 {
        v = S::combine(v, shfl_down_sync(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// Block sum: a shuffle tree per warp, warp totals through shared memory, a shuffle tree
/// in warp 0. Thread 0 returns the block's sum (other threads: partial values). Every
/// thread of the block must call it.
///
/// # Safety
/// `warp_totals` is this block's shared array; the block has at most 1024 threads and a
/// multiple of 32.
#[inline(always)]
unsafe fn block_sum<S: Summand>(v: S::Acc, warp_totals: &SharedArray<S::Acc, 32>) -> S::Acc {
    let tid = thread_idx().x as usize;
    let warps = block_dim().x as usize / 32;
    let v = warp_sum::<S>(v);
    // The shared array is reused by consecutive calls: wait until the last reads are done.
    syncthreads();
    if tid.is_multiple_of(32) {
        // SAFETY: `tid / 32 < 32`; each warp's lane 0 writes its own slot.
        unsafe { warp_totals.write(tid / 32, v) };
    }
    syncthreads();
    let mut total = S::ZERO;
    if tid < 32 {
        if tid < warps {
            // SAFETY: slot `tid < warps` was written before the barrier.
            total = unsafe { warp_totals.read(tid) };
        }
        total = warp_sum::<S>(total);
    }
    total
}

/// The one-launch reduction: 16-byte loads into a register accumulator, each block over its
/// even share of the input (a contiguous run of tiles, as CUB's `DeviceReduce` splits its
/// input), a block sum by warp shuffles, one partial per block, and the last block to finish (a
/// ticket from an atomic counter, the CUDA sample `threadFenceReduction`) adds the
/// partials in a fixed order and writes `*result`, so the sum is deterministic for a given
/// grid.
///
/// The ticket is one acquire-release atomic add (`atom.acq_rel.gpu`) instead of the sample's
/// two `__threadfence()`s (`membar.gl`, sequentially consistent fences) around a relaxed one,
/// and the last block reads the partials with relaxed GPU-scope loads, two in flight per
/// thread, instead of one `volatile` load at a time: on an H200 this took 0.2-0.3 us off every
/// launch, 1-3% at 2^20 to 2^24 elements (`docs/patterns/reduce.md`).
///
/// `input` may start at any 4-byte boundary (a view into a larger buffer): the elements
/// before the first 16-byte boundary (at most 3) are added one each by the grid's first
/// threads, like the `n % 4` elements after the last whole group.
///
/// # Safety
/// `input` is 4-byte aligned and valid for `n` elements, read-only during the launch;
/// `partials` holds `gridDim.x` accumulators; `counter` is a zero `u32` no other launch
/// uses concurrently (it is zero again when the kernel ends); `result` is one accumulator.
/// Block size a multiple of 32 up to 1024.
#[inline(always)]
pub(crate) unsafe fn sum_body<S: Summand>(
    input: *const u32,
    n: usize,
    partials: *mut S::Acc,
    counter: *mut u32,
    result: *mut S::Acc,
    warp_totals: &SharedArray<S::Acc, 32>,
) {
    let (tid, block, bid) = coordinates();
    let grid = grid_dim().x as usize;
    // Elements up to the first 16-byte boundary, then whole 16-byte groups from `body`.
    let head = (((16 - (input as usize & 15)) & 15) / 4).min(n);
    // SAFETY: `head <= n`, so `body` is within (or one past) the input.
    let body = unsafe { input.add(head) };
    let groups = (n - head) / 4;
    let add4 = |acc: S::Acc, w: [u32; 4]| {
        let a = S::from_bits(w[0]).add_to(acc);
        let a = S::from_bits(w[1]).add_to(a);
        let a = S::from_bits(w[2]).add_to(a);
        S::from_bits(w[3]).add_to(a)
    };
    // Even share: the input is cut into tiles of `REDUCE_SUM_UNROLL` block-wide rows of
    // 16-byte groups, and block `bid` reads a contiguous run of whole tiles.
    const U: usize = super::REDUCE_SUM_UNROLL;
    let tile = U * block;
    let tiles = groups.div_ceil(tile);
    let (share, extra) = (tiles / grid, tiles % grid);
    let first = bid * share + bid.min(extra);
    let last = first + share + usize::from(bid < extra);
    let mut acc = S::ZERO;
    let mut t = first;
    while t < last {
        // U loads in flight per thread, all issued before the first add. Only the input's
        // last tile can be partial: its missing groups read as zero words (0 in every
        // accumulator type).
        let base = t * tile + tid;
        let mut w = [[0u32; 4]; U];
        let mut u = 0;
        while u < U {
            let g = base + u * block;
            if g < groups {
                // SAFETY: group `g < groups`, so its four words are below `n`; 16-byte
                // aligned because `body` is.
                w[u] = unsafe { load_global_nc_v4_u32(body.add(4 * g)) };
            }
            u += 1;
        }
        let mut u = 0;
        while u < U {
            acc = add4(acc, w[u]);
            u += 1;
        }
        t += 1;
    }
    // The head and the last (n - head) % 4 elements: one each for the grid's first threads.
    let t = bid * block + tid;
    if t < head {
        // SAFETY: `t < head <= n`.
        acc = S::from_bits(unsafe { *input.add(t) }).add_to(acc);
    }
    let tail = head + 4 * groups + t;
    if tail < n {
        // SAFETY: `tail < n`.
        acc = S::from_bits(unsafe { *input.add(tail) }).add_to(acc);
    }

    // SAFETY: every thread calls `block_sum`; the caller's contract covers the pointers.
    unsafe {
        let block_total = block_sum::<S>(acc, warp_totals);
        let mut last = false;
        if tid == 0 {
            partials.add(bid).write(block_total);
            // Release: the partial is visible before the ticket. Acquire: the block that takes
            // the last ticket sees every partial released before it.
            last = atomic_add_acq_rel(counter, 1) == grid as u32 - 1;
        }
        // The barrier carries thread 0's acquire to the whole (last) block.
        if !syncthreads_or(last) {
            return;
        }
        // Every partial, in a fixed order for a given grid: two relaxed loads in flight per
        // thread and trip, served by the L2.
        let (mut acc0, mut acc1) = (S::ZERO, S::ZERO);
        let mut i = tid;
        while i + block < grid {
            let a = load_relaxed_gpu(partials.add(i));
            let b = load_relaxed_gpu(partials.add(i + block));
            acc0 = S::combine(acc0, a);
            acc1 = S::combine(acc1, b);
            i += 2 * block;
        }
        if i < grid {
            acc0 = S::combine(acc0, load_relaxed_gpu(partials.add(i)));
        }
        let total = block_sum::<S>(S::combine(acc0, acc1), warp_totals);
        if tid == 0 {
            *result = total;
            // Ready for the next launch.
            counter.write_volatile(0);
        }
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
#[kernel(instantiate(S = i32, f32, WideF32 as f32_f64))]
pub unsafe fn reduce_sum<S: Summand>(
    input: *const S::Input,
    n: usize,
    partials: *mut S::Acc,
    counter: *mut u32,
    result: *mut S::Acc,
) {
    let warp_totals = static_shared!(s_reduce_sum: [S::Acc; 32]);
    // SAFETY: forwarded to the caller's contract.
    unsafe { sum_body::<S>(input.cast(), n, partials, counter, result, &warp_totals) }
}
