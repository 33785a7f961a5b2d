//! Reductions at the three levels CUB offers them (`WarpReduce`, `BlockReduce`,
//! `DeviceReduce`), over any [`Reduction`]: an element type, an accumulator, an identity and an
//! associative `combine`. A [`Monoid`] of your own (a `#[repr(C)]` type with an identity and an
//! associative operator) is one through [`Fold`], so a kernel crate reduces its own types with the
//! same device-wide body the lab's `reduce` kernels use:
//!
//! ```
//! use gpu_std::reduce::{Fold, Monoid};
//!
//! /// The smallest and the largest of some floats (NaN ignored, as `f32::min` does).
//! #[repr(C)]
//! #[derive(Clone, Copy)]
//! pub struct MinMax { pub min: f32, pub max: f32 }
//! // SAFETY: two `f32`s, no padding, any bits are a value.
//! unsafe impl gpu_std::Pod for MinMax {}
//!
//! impl Monoid for MinMax {
//!     const IDENTITY: Self = MinMax { min: f32::INFINITY, max: f32::NEG_INFINITY };
//!     fn combine(a: Self, b: Self) -> Self {
//!         MinMax { min: a.min.min(b.min), max: a.max.max(b.max) }
//!     }
//! }
//!
//! /// One launch: `*result` is the `MinMax` of `input[..n]` (see `device_reduce`).
//! ///
//! /// # Safety
//! /// As `gpu_std::reduce::device_reduce`.
//! #[gpu_std::kernel(instantiate(M = MinMax))]
//! pub unsafe fn min_max<M: Monoid>(
//!     input: *const M, n: usize, partials: *mut M, counter: *mut u32, result: *mut M,
//! ) {
//!     let warp_totals = gpu_std::static_shared!(s_min_max: [M; 32]);
//!     // SAFETY: forwarded to the caller's contract.
//!     unsafe {
//!         gpu_std::reduce::device_reduce::<Fold<M>>(input, n, partials, counter, result, &warp_totals)
//!     }
//! }
//! ```
//!
//! The host side of such a kernel allocates `partials` (one accumulator per block), a zeroed
//! `counter` and `result`, and launches blocks of [`REDUCE_BLOCK`] threads, at most one wave
//! ([`device_reduce`] says how); the lab's `cpu::reduce::Reduce` is that workspace for its own
//! instances.

use core::marker::PhantomData;

use crate::{
    FULL_MASK, Pod, SharedArray, WarpShuffle, atomic_add_acq_rel, block_dim, block_idx, grid_dim,
    load_global_nc_v4_u32, load_relaxed_gpu_words, shfl_down_sync, syncthreads, syncthreads_or,
    thread_idx,
};

/// Threads per block of [`device_reduce`] launches (16 warps; the last block reduces at most
/// `gridDim.x` partials with them). On an H200, 512 measured as fast as 1024 and 1-5% faster
/// than 256 from 2^22 elements up.
pub const REDUCE_BLOCK: u32 = 512;
/// 16-byte loads (or elements, for element types that do not divide 16 bytes) each thread of
/// [`device_reduce`] issues per loop trip before it combines any of them (memory-level
/// parallelism).
pub const REDUCE_UNROLL: usize = 4;

/// A reduction: elements of type `Item`, each lifted (with its index) into an accumulator
/// `Acc`, accumulators combined by `combine` with identity `IDENTITY`. The order in which a
/// device-wide reduction combines is fixed for a given grid but is not the sequential one (a
/// thread's elements are strided over the input, and the threads' accumulators meet in a tree),
/// so `combine` must be associative and commutative, as for CUB's `DeviceReduce`
/// (floating-point sums and products are both up to rounding, which the result then depends
/// on). An `ArgMax` is commutative by comparing indices on ties.
pub trait Reduction {
    /// The element as the input holds it.
    type Item: Copy;
    /// The accumulator: whole 32-bit words ([`Pod`]), so it crosses lanes with shuffles.
    type Acc: Pod + WarpShuffle;
    /// The identity of `combine`: `combine(IDENTITY, a) == combine(a, IDENTITY) == a`.
    const IDENTITY: Self::Acc;
    /// The accumulator of one element at `index` (its position in the input).
    fn lift(item: Self::Item, index: usize) -> Self::Acc;
    /// `a ⊕ b`, associative and commutative.
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `combine(acc, lift(item, index))` where `index` is past every index in `acc` (a thread's
    /// sequential pass, in increasing index order): an `ArgMax` keeps its first maximum here with
    /// one comparison instead of comparing indices too.
    #[inline(always)]
    fn accumulate(acc: Self::Acc, item: Self::Item, index: usize) -> Self::Acc {
        Self::combine(acc, Self::lift(item, index))
    }
}

/// A type with an associative and commutative operator and its identity (a commutative
/// monoid), reduced by [`Fold`]: the element and the accumulator are the type itself.
pub trait Monoid: Pod + WarpShuffle {
    /// `combine(IDENTITY, a) == combine(a, IDENTITY) == a`.
    const IDENTITY: Self;
    /// `a ⊕ b`, associative (`(a ⊕ b) ⊕ c == a ⊕ (b ⊕ c)`) and commutative (`a ⊕ b == b ⊕ a`).
    fn combine(a: Self, b: Self) -> Self;
}

/// The [`Reduction`] of a [`Monoid`]: `Item = Acc = M`.
pub struct Fold<M>(PhantomData<M>);

impl<M: Monoid> Reduction for Fold<M> {
    type Item = M;
    type Acc = M;
    const IDENTITY: M = M::IDENTITY;
    #[inline(always)]
    fn lift(item: M, _index: usize) -> M {
        item
    }
    #[inline(always)]
    fn combine(a: M, b: M) -> M {
        M::combine(a, b)
    }
}

/// Warp-shuffle tree (`shfl.sync.down`, five steps): lane 0 returns the reduction of the 32
/// lanes' values, lane `l` holds the lanes before `l`'s on its left. Every lane of the warp must
/// call it.
#[inline(always)]
pub fn warp_reduce<R: Reduction>(mut v: R::Acc) -> R::Acc {
    let mut offset = 16;
    while offset > 0 {
        v = R::combine(v, shfl_down_sync(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// Block reduction: a shuffle tree per warp, the warps' results through shared memory, a
/// shuffle tree in warp 0. Thread 0 returns the block's reduction (other threads: partial
/// values). Every thread of the block must call it; it starts with a barrier, so consecutive
/// calls may share `warp_totals`.
///
/// # Safety
/// `warp_totals` is this block's shared array; the block is one-dimensional with a multiple of
/// 32 threads, at most 1024.
#[inline(always)]
pub unsafe fn block_reduce<R: Reduction>(
    v: R::Acc,
    warp_totals: &SharedArray<R::Acc, 32>,
) -> R::Acc {
    let tid = thread_idx().x as usize;
    let warps = block_dim().x as usize / 32;
    let v = warp_reduce::<R>(v);
    // The shared array is reused by consecutive calls: wait until the last reads are done.
    syncthreads();
    if tid.is_multiple_of(32) {
        // SAFETY: `tid / 32 < 32`; each warp's lane 0 writes its own slot.
        unsafe { warp_totals.write(tid / 32, v) };
    }
    syncthreads();
    let mut total = R::IDENTITY;
    if tid < 32 {
        if tid < warps {
            // SAFETY: slot `tid < warps` was written before the barrier.
            total = unsafe { warp_totals.read(tid) };
        }
        total = warp_reduce::<R>(total);
    }
    total
}

/// The one-launch device-wide reduction of `input[..n]` into `*result` (CUB's
/// `DeviceReduce::Reduce` in one kernel).
///
/// Algorithm: each block reads an even share of the input (a contiguous run of tiles of
/// [`REDUCE_UNROLL`]` x blockDim.x` 16-byte groups, as CUB's `DeviceReduce` splits its input)
/// with 16-byte loads through the read-only path, all of a trip's loads in flight before the
/// first is combined; each thread accumulates its elements in index order
/// ([`Reduction::accumulate`]); a block reduction by warp shuffles leaves one partial per block;
/// the last block to finish (a ticket from an acquire-release atomic add, the CUDA sample
/// `threadFenceReduction`) combines the partials in a fixed order and writes `*result`, so the
/// result is deterministic for a given grid. An empty input writes the identity.
///
/// Element types aligned to their size, which divides 16 bytes (the primitives of 1, 2, 4, 8
/// and 16 bytes), are read 16 bytes at a time from the first 16-byte boundary on (the elements
/// before it and after the last whole group, at most 15 each, are read one each by the grid's
/// first threads); other types (a `#[repr(C)]` pair of `f32`s: 8 bytes, 4-byte aligned) are
/// read one element at a time with the same even share.
///
/// Launch: a one-dimensional grid of one-dimensional blocks of a multiple of 32 threads up to
/// 1024 ([`REDUCE_BLOCK`] is the lab's choice), at most one wave of resident blocks (a block
/// waits for nothing, so more only costs), at least one block.
///
/// # Safety
/// `input` is aligned for `R::Item`, valid for `n` elements and not written during the launch;
/// `partials` holds `gridDim.x` accumulators; `counter` points to a `u32` that is 0 and used
/// by no concurrent launch (it is 0 again when the kernel ends); `result` points to one
/// accumulator; `warp_totals` is this block's shared array.
#[inline(always)]
pub unsafe fn device_reduce<R: Reduction>(
    input: *const R::Item,
    n: usize,
    partials: *mut R::Acc,
    counter: *mut u32,
    result: *mut R::Acc,
    warp_totals: &SharedArray<R::Acc, 32>,
) {
    // SAFETY: forwarded to the caller's contract.
    if let Some(total) =
        unsafe { device_reduce_last::<R>(input, n, partials, counter, warp_totals) }
        && thread_idx().x == 0
    {
        // SAFETY: `result` points to one accumulator (the caller's contract).
        unsafe { *result = total };
    }
}

/// [`device_reduce`] without the final write: `Some(total)` in every thread of the last block
/// to finish (the total is thread 0's; the other threads hold their share of the last block
/// reduction), `None` in every other block's threads, which may return at once. For a kernel
/// that does more with the grid's total than store it (a sharded sum that all-reduces it
/// across GPUs in the same launch).
///
/// # Safety
/// As [`device_reduce`], without `result`.
#[inline(always)]
pub unsafe fn device_reduce_last<R: Reduction>(
    input: *const R::Item,
    n: usize,
    partials: *mut R::Acc,
    counter: *mut u32,
    warp_totals: &SharedArray<R::Acc, 32>,
) -> Option<R::Acc> {
    let tid = thread_idx().x as usize;
    let block = block_dim().x as usize;
    let bid = block_idx().x as usize;
    let grid = grid_dim().x as usize;
    let size = size_of::<R::Item>();
    // SAFETY: the caller's contract covers the pointers; every element read is below `n`.
    let acc = unsafe {
        if size != 0 && 16 % size == 0 && align_of::<R::Item>() >= size {
            thread_vectors::<R>(input, n, tid, block, bid, grid)
        } else {
            thread_elements::<R>(input, n, tid, block, bid, grid)
        }
    };

    // SAFETY: every thread calls `block_reduce`; the caller's contract covers the pointers.
    unsafe {
        let block_total = block_reduce::<R>(acc, warp_totals);
        let mut last = false;
        if tid == 0 {
            partials.add(bid).write(block_total);
            // Release: the partial is visible before the ticket. Acquire: the block that takes
            // the last ticket sees every partial released before it.
            last = atomic_add_acq_rel(counter, 1) == grid as u32 - 1;
        }
        // The barrier carries thread 0's acquire to the whole (last) block.
        if !syncthreads_or(last) {
            return None;
        }
        // Every partial, in a fixed order for a given grid: two relaxed loads in flight per
        // thread and trip, served by the L2, then the block reduction.
        let (mut acc0, mut acc1) = (R::IDENTITY, R::IDENTITY);
        let mut i = tid;
        while i + block < grid {
            let a = load_relaxed_gpu_words(partials.add(i));
            let b = load_relaxed_gpu_words(partials.add(i + block));
            acc0 = R::combine(acc0, a);
            acc1 = R::combine(acc1, b);
            i += 2 * block;
        }
        if i < grid {
            acc0 = R::combine(acc0, load_relaxed_gpu_words(partials.add(i)));
        }
        let total = block_reduce::<R>(R::combine(acc0, acc1), warp_totals);
        if tid == 0 {
            // Ready for the next launch.
            counter.write_volatile(0);
        }
        Some(total)
    }
}

/// This thread's accumulator over its share of whole 16-byte groups, plus the head and tail
/// elements it owns (see [`device_reduce`]), in increasing index order.
///
/// # Safety
/// As [`device_reduce`], and `size_of::<R::Item>()` divides 16 and is `R::Item`'s alignment.
#[inline(always)]
unsafe fn thread_vectors<R: Reduction>(
    input: *const R::Item,
    n: usize,
    tid: usize,
    block: usize,
    bid: usize,
    grid: usize,
) -> R::Acc {
    let size = size_of::<R::Item>();
    let per_group = 16 / size;
    // Elements up to the first 16-byte boundary, then whole 16-byte groups from `body`.
    let head = ((16 - (input as usize & 15)) & 15) / size;
    let head = head.min(n);
    // SAFETY: `head <= n`, so `body` is within (or one past) the input.
    let body = unsafe { input.add(head) }.cast::<u32>();
    let groups = (n - head) / per_group;
    // Even share: tiles of `REDUCE_UNROLL` block-wide rows of groups; block `bid` reads a
    // contiguous run of whole tiles.
    const U: usize = REDUCE_UNROLL;
    let tile = U * block;
    let tiles = groups.div_ceil(tile);
    let (share, extra) = (tiles / grid, tiles % grid);
    let first = bid * share + bid.min(extra);
    let last = first + share + usize::from(bid < extra);
    let rank = bid * block + tid;
    let mut acc = R::IDENTITY;
    // The head (indices below every group's).
    if rank < head {
        // SAFETY: `rank < head <= n`.
        acc = R::accumulate(acc, unsafe { input.add(rank).read() }, rank);
    }
    // 4- to 16-byte elements: a loop LLVM unrolls (as measured in `docs/patterns/reduce.md`).
    let combine_group = |acc: R::Acc, w: [u32; 4], g: usize| {
        let items = w.as_ptr().cast::<R::Item>();
        let mut acc = acc;
        let mut j = 0;
        while j < per_group {
            // SAFETY: the 16 bytes of `w` hold `per_group` elements of `R::Item`, whose
            // bits the input held.
            let x = unsafe { items.add(j).read_unaligned() };
            acc = R::accumulate(acc, x, head + g * per_group + j);
            j += 1;
        }
        acc
    };
    // 1- and 2-byte elements (8 or 16 per group): written out, see `groups!` below.
    let combine_narrow = |acc: R::Acc, w: [u32; 4], g: usize| {
        // The group as one 128-bit value: element `j` is its bits from `8 size j` up (the
        // words are little-endian), taken with shifts rather than through a pointer into `w`,
        // which would keep `w` in local memory.
        let bits =
            w[0] as u128 | (w[1] as u128) << 32 | (w[2] as u128) << 64 | (w[3] as u128) << 96;
        let mut acc = acc;
        // Written out for every element a group can hold (16 of a 1-byte type), each guarded by
        // the constant `per_group`.
        macro_rules! elements {
            ($($j:literal)*) => {$(
                if $j < per_group {
                    let shifted = bits >> (8 * size * $j);
                    // SAFETY: `R::Item` has `size <= 16` bytes of plain bits, here the low bytes
                    // of `shifted`, which the input held.
                    let x = unsafe { core::mem::transmute_copy::<u128, R::Item>(&shifted) };
                    acc = R::accumulate(acc, x, head + g * per_group + $j);
                }
            )*};
        }
        elements!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        acc
    };
    let mut t = first;
    while t < last {
        // U loads in flight per thread, all issued before the first is combined. Only the
        // input's last tile can be partial.
        let base = t * tile + tid;
        let mut w = [[0u32; 4]; U];
        let mut u = 0;
        while u < U {
            let g = base + u * block;
            if g < groups {
                // SAFETY: group `g < groups` lies below `n`; 16-byte aligned because `body` is.
                w[u] = unsafe { load_global_nc_v4_u32(body.add(4 * g)) };
            }
            u += 1;
        }
        if size <= 2 {
            // Written out per load (`REDUCE_UNROLL` is 4), so that `w` keeps constant indices:
            // a group of 8 or 16 elements is too long for LLVM to unroll a loop around it,
            // and a rolled loop reads `w` from local memory.
            const { assert!(U == 4, "`groups!` below combines four loads") };
            macro_rules! groups {
                ($($u:literal)*) => {$(
                    let g = base + $u * block;
                    if g < groups {
                        acc = combine_narrow(acc, w[$u], g);
                    }
                )*};
            }
            groups!(0 1 2 3);
        } else {
            let mut u = 0;
            while u < U {
                let g = base + u * block;
                if g < groups {
                    acc = combine_group(acc, w[u], g);
                }
                u += 1;
            }
        }
        t += 1;
    }
    // The tail (indices above every group's).
    let tail = head + per_group * groups + rank;
    if tail < n {
        // SAFETY: `tail < n`.
        acc = R::accumulate(acc, unsafe { input.add(tail).read() }, tail);
    }
    acc
}

/// This thread's accumulator over its share of elements read one at a time (element types
/// that do not divide 16 bytes, or misaligned inputs), in increasing index order.
///
/// # Safety
/// As [`device_reduce`].
#[inline(always)]
unsafe fn thread_elements<R: Reduction>(
    input: *const R::Item,
    n: usize,
    tid: usize,
    block: usize,
    bid: usize,
    grid: usize,
) -> R::Acc {
    const U: usize = REDUCE_UNROLL;
    let tile = U * block;
    let tiles = n.div_ceil(tile);
    let (share, extra) = (tiles / grid, tiles % grid);
    let first = bid * share + bid.min(extra);
    let last = first + share + usize::from(bid < extra);
    let mut acc = R::IDENTITY;
    let mut t = first;
    while t < last {
        let base = t * tile + tid;
        let mut u = 0;
        while u < U {
            let i = base + u * block;
            if i < n {
                // SAFETY: `i < n`.
                acc = R::accumulate(acc, unsafe { input.add(i).read() }, i);
            }
            u += 1;
        }
        t += 1;
    }
    acc
}
