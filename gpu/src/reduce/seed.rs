//! The seed's nine reduction kernels, made correct on Volta and newer (see the
//! [`reduce`](super) module docs for the pattern).
//!
//! Each block reduces its own slice of the array **in place in global memory** (as the book
//! does) and writes one partial sum per block to `partials[blockIdx.x]`; the host adds the
//! partials. The array is `i32` and sums wrap modulo 2^32 (the GPU's integer add), so every
//! order of summation gives the same result and the CPU reference is exact.
//!
//! Their contract is the book's with the ragged tail made explicit: `data` holds exactly
//! `gridDim.x * blockDim.x * UNROLL` elements (`UNROLL` is 1, 2, 4 or 8 data blocks per thread
//! block), the block size is a power of two (at least 64 for the kernels that unroll the last
//! warp), and the host pads the array with zeros (the identity of `+`) up to that length, so
//! no element is dropped whatever `n` is. The host keeps the input elsewhere: the kernels
//! destroy `data`.
//!
//! # Volta and the "last warp" trick
//! The book unrolls the last six steps for the 32 threads of warp 0 without barriers, relying
//! on the warp running in lock step (`volatile int *vmem`). Since Volta (independent thread
//! scheduling) lanes of a warp may interleave arbitrarily, so that code is a data race. The
//! kernels here keep its shape (no block barrier, volatile accesses, lanes halving each step)
//! but order the steps with `__syncwarp()` ([`syncwarp`]), and each step only lets the lanes
//! that add write, so no lane reads a word another lane writes in the same step.

use super::coordinates;
use gpu_std::kernel;
use gpu_std::{FULL_MASK, block_idx, syncthreads, syncwarp, thread_idx};

/// `*p += *q` on global memory, wrapping.
///
/// # Safety
/// Both pointers are valid; no other thread accesses them concurrently.
#[inline(always)]
unsafe fn add_into(p: *mut i32, q: *const i32) {
    // SAFETY: forwarded to the caller.
    unsafe { *p = (*p).wrapping_add(*q) };
}

/// The seed's interleaved tree over one block's `blockDim.x` words at `idata`, from stride
/// `blockDim.x / 2` down to `stop` (exclusive), one block barrier per step.
///
/// # Safety
/// `idata` is valid for `blockDim.x` words owned by this block; every thread of the block
/// calls it (it contains barriers).
#[inline(always)]
unsafe fn interleaved_tree(idata: *mut i32, tid: usize, block: usize, stop: usize) {
    let mut stride = block / 2;
    while stride > stop {
        if tid < stride {
            // SAFETY: `tid + stride < block`; in this step only thread `tid` writes word
            // `tid`, and word `tid + stride` is not written (it is at least `stride`).
            unsafe { add_into(idata.add(tid), idata.add(tid + stride)) };
        }
        syncthreads();
        stride /= 2;
    }
}

/// The book's unrolled last warp, race-free since Volta: lanes `0..32` of warp 0 add the
/// words `[tid + 32]`, `[tid + 16]`, ..., `[tid + 1]` into `[tid]` with volatile accesses;
/// in the step of offset `k` only lanes `tid < k` write, and `__syncwarp` orders the steps.
///
/// # Safety
/// Called by all 32 lanes of warp 0 (and only them) after a block barrier; `idata` is valid
/// for 64 words owned by this block.
#[inline(always)]
unsafe fn last_warp(idata: *mut i32, tid: usize) {
    let mut offset = 32;
    while offset > 0 {
        if tid < offset {
            // SAFETY: `tid + offset < 64`; the written word (`tid < offset`) is never read
            // in this step (reads are at `offset` or above); volatile keeps every access.
            unsafe {
                let sum = idata
                    .add(tid)
                    .read_volatile()
                    .wrapping_add(idata.add(tid + offset).read_volatile());
                idata.add(tid).write_volatile(sum);
            }
        }
        syncwarp(FULL_MASK);
        offset /= 2;
    }
}

/// The seed's preamble of the unrolled kernels: thread `tid` of block `b` adds the `U`
/// data blocks `b*U .. b*U + U` element-wise into the first, in registers, and returns a
/// pointer to that first data block.
///
/// # Safety
/// `data` holds `gridDim.x * blockDim.x * U` words.
#[inline(always)]
unsafe fn unroll_data_blocks<const U: usize>(data: *mut i32) -> *mut i32 {
    let (tid, block, bid) = coordinates();
    let base = bid * block * U;
    let idx = base + tid;
    // SAFETY: `idx + (U - 1) * block < (bid + 1) * block * U <= len(data)`; each thread
    // touches only its own column `idx + j * block`.
    unsafe {
        let mut sum = *data.add(idx);
        let mut j = 1;
        while j < U {
            sum = sum.wrapping_add(*data.add(idx + j * block));
            j += 1;
        }
        *data.add(idx) = sum;
        data.add(base)
    }
}

/// Seed version 1, "相邻(分化)" (`reduceNeighbored`): neighbored pairs. In step `s`
/// (stride 1, 2, 4, ...) threads whose index is a multiple of `2s` add word `tid + s` into
/// word `tid`.
///
/// Why it is slow: the working threads are spread over every warp (`tid % (2s) == 0`), so
/// each step keeps all warps busy while most of their lanes idle (warp divergence), and
/// the accesses are strided.
///
/// Launch: block a power of two (1..=1024); `gridDim.x * blockDim.x` = `len(data)`.
///
/// # Safety
/// `data` is a device array of `gridDim.x * blockDim.x` `i32` (destroyed); `partials` holds
/// `gridDim.x` `i32`.
#[kernel]
pub unsafe fn reduce_neighbored(data: *mut i32, partials: *mut i32) {
    let (tid, block, bid) = coordinates();
    // SAFETY: the block owns `data[bid*block .. (bid+1)*block]`.
    let idata = unsafe { data.add(bid * block) };
    let mut stride = 1;
    while stride < block {
        if tid % (2 * stride) == 0 {
            // SAFETY: `tid` is a multiple of `2*stride` below `block`, a power of two, so
            // `tid + stride < block`; in this step word `tid + stride` is not written
            // (it is an odd multiple of `stride`).
            unsafe { add_into(idata.add(tid), idata.add(tid + stride)) };
        }
        syncthreads();
        stride *= 2;
    }
    if tid == 0 {
        // SAFETY: `bid < gridDim.x = len(partials)`; the tree finished at the barrier.
        unsafe { *partials.add(bid) = *idata };
    }
}

/// Seed version 2, "相邻(无分化)" (`reduceNeighboredLess`): the same pairs as
/// [`reduce_neighbored`], but thread `tid` works on word `2 * s * tid`, so the working
/// threads are the first `block / 2s`: whole warps work or idle (less divergence).
///
/// Launch: As [`reduce_neighbored`].
///
/// # Safety
/// As [`reduce_neighbored`].
#[kernel]
pub unsafe fn reduce_neighbored_less(data: *mut i32, partials: *mut i32) {
    let (tid, block, bid) = coordinates();
    // SAFETY: the block owns `data[bid*block .. (bid+1)*block]`.
    let idata = unsafe { data.add(bid * block) };
    let mut stride = 1;
    while stride < block {
        let index = 2 * stride * tid;
        if index < block {
            // SAFETY: `index` is a multiple of `2*stride` below `block` (a power of two),
            // so `index + stride < block`; odd multiples of `stride` are not written.
            unsafe { add_into(idata.add(index), idata.add(index + stride)) };
        }
        syncthreads();
        stride *= 2;
    }
    if tid == 0 {
        // SAFETY: as in `reduce_neighbored`.
        unsafe { *partials.add(bid) = *idata };
    }
}

/// Seed version 3, "交错" (`reduceInterleaved`): interleaved pairs. The stride starts at
/// half the block and halves each step; thread `tid < stride` adds word `tid + stride`.
/// Working threads stay packed at the front (like version 2) and a warp's accesses are now
/// consecutive words.
///
/// Launch: As [`reduce_neighbored`].
///
/// # Safety
/// As [`reduce_neighbored`].
#[kernel]
pub unsafe fn reduce_interleaved(data: *mut i32, partials: *mut i32) {
    let (tid, block, bid) = coordinates();
    // SAFETY: the block owns `data[bid*block .. (bid+1)*block]`; all threads call the tree.
    unsafe {
        let idata = data.add(bid * block);
        interleaved_tree(idata, tid, block, 0);
        if tid == 0 {
            *partials.add(bid) = *idata;
        }
    }
}

/// Body of the seed's `reduceUnrollingU`: the preamble adds `U` data blocks, then the
/// interleaved tree reduces the first.
///
/// # Safety
/// `data` holds `gridDim.x * blockDim.x * U` words; `partials` holds `gridDim.x`.
#[inline(always)]
unsafe fn unrolling<const U: usize>(data: *mut i32, partials: *mut i32) {
    let (tid, block, bid) = coordinates();
    // SAFETY: forwarded; every thread runs the preamble and the tree.
    unsafe {
        let idata = unroll_data_blocks::<U>(data);
        syncthreads();
        interleaved_tree(idata, tid, block, 0);
        if tid == 0 {
            *partials.add(bid) = *idata;
        }
    }
}

/// Seed version 4, "展开2块" (`reduceUnrolling2`): each thread first adds the element one
/// block further on (two data blocks per thread block), then the interleaved tree. Half the
/// blocks, and each thread has two independent loads in flight: more memory-level
/// parallelism, fewer tree steps per element.
///
/// Launch: block a power of two (1..=1024); `gridDim.x * blockDim.x * 2` = `len(data)`.
///
/// # Safety
/// `data` holds `gridDim.x * blockDim.x * 2` `i32` (destroyed); `partials` `gridDim.x`.
#[kernel]
pub unsafe fn reduce_unroll2(data: *mut i32, partials: *mut i32) {
    // SAFETY: forwarded to the caller's contract.
    unsafe { unrolling::<2>(data, partials) }
}

/// Seed version 5, "展开4块" (`reduceUnrolling4`): as [`reduce_unroll2`] with four data
/// blocks per thread block (a quarter of the blocks, four loads in flight per thread).
///
/// Launch: As [`reduce_unroll2`] with 4 for 2.
///
/// # Safety
/// As [`reduce_unroll2`] with 4 for 2.
#[kernel]
pub unsafe fn reduce_unroll4(data: *mut i32, partials: *mut i32) {
    // SAFETY: forwarded to the caller's contract.
    unsafe { unrolling::<4>(data, partials) }
}

/// Seed version 6, "展开8块" (`reduceUnrolling8`): eight data blocks per thread block.
///
/// Launch: As [`reduce_unroll2`] with 8 for 2.
///
/// # Safety
/// As [`reduce_unroll2`] with 8 for 2.
#[kernel]
pub unsafe fn reduce_unroll8(data: *mut i32, partials: *mut i32) {
    // SAFETY: forwarded to the caller's contract.
    unsafe { unrolling::<8>(data, partials) }
}

/// Seed version 7, "展开8块+最后的线程束" (`reduceUnrollWarps8`): as [`reduce_unroll8`],
/// but the tree stops at stride 64 and warp 0 finishes the last six steps without block
/// barriers (see the module docs for why `__syncwarp` replaces the book's lock-step
/// assumption). Saves six `__syncthreads` and the idle warps' loop overhead.
///
/// Launch: block a power of two, 64..=1024; `gridDim.x * blockDim.x * 8` = `len(data)`.
///
/// # Safety
/// As [`reduce_unroll8`].
#[kernel]
pub unsafe fn reduce_unroll_warps8(data: *mut i32, partials: *mut i32) {
    let (tid, block, bid) = coordinates();
    // SAFETY: forwarded to the caller's contract; every thread runs the barriers, and only
    // warp 0 (`tid < 32`) the last-warp steps.
    unsafe {
        let idata = unroll_data_blocks::<8>(data);
        syncthreads();
        interleaved_tree(idata, tid, block, 32);
        if tid < 32 {
            last_warp(idata, tid);
        }
        if tid == 0 {
            *partials.add(bid) = *idata;
        }
    }
}

/// The completely unrolled tree of `reduceCompleteUnrollWarps8` and of the template kernel:
/// one `if` per possible step from 512 down to 64, then the last warp.
///
/// # Safety
/// `idata` holds `block` words owned by this block (`block` a power of two, 64..=1024);
/// every thread calls it.
#[inline(always)]
unsafe fn complete_tree(idata: *mut i32, tid: usize, block: usize) {
    let mut stride = 512;
    while stride >= 64 {
        if block >= 2 * stride && tid < stride {
            // SAFETY: `tid + stride < 2 * stride <= block`; as in `interleaved_tree`.
            unsafe { add_into(idata.add(tid), idata.add(tid + stride)) };
        }
        syncthreads();
        stride /= 2;
    }
    if tid < 32 {
        // SAFETY: warp 0 after a barrier; `block >= 64`.
        unsafe { last_warp(idata, tid) };
    }
}

/// Seed version 8, "展开8块+循环+最后的线程束" (`reduceCompleteUnrollWarps8`): as
/// [`reduce_unroll_warps8`] with the tree loop written out as one `if (blockDim.x >= 2s &&
/// tid < s)` per step (the block size is at most 1024), so there is no loop counter or
/// branch back; the compiler unrolls the loop in `complete_tree` the same way.
///
/// Launch: As [`reduce_unroll_warps8`].
///
/// # Safety
/// As [`reduce_unroll_warps8`].
#[kernel]
pub unsafe fn reduce_complete_unroll_warps8(data: *mut i32, partials: *mut i32) {
    let (tid, block, bid) = coordinates();
    // SAFETY: forwarded to the caller's contract; all threads reach every barrier.
    unsafe {
        let idata = unroll_data_blocks::<8>(data);
        syncthreads();
        complete_tree(idata, tid, block);
        if tid == 0 {
            *partials.add(bid) = *idata;
        }
    }
}

/// Seed version 9, "模板化内核" (`reduceCompleteUnroll<iBlockSize>`): the block size is a
/// compile-time constant, so the `blockDim.x >= 2s` tests fold away and only the steps
/// this block size needs are emitted.
///
/// # Safety
/// Launched with exactly `B` threads per block; otherwise as [`reduce_unroll_warps8`].
#[inline(always)]
unsafe fn complete_unroll<const B: usize>(data: *mut i32, partials: *mut i32) {
    let tid = thread_idx().x as usize;
    let bid = block_idx().x as usize;
    // SAFETY: forwarded to the caller's contract; `B` equals `blockDim.x`.
    unsafe {
        let base = bid * B * 8;
        let idx = base + tid;
        let mut sum = *data.add(idx);
        let mut j = 1;
        while j < 8 {
            sum = sum.wrapping_add(*data.add(idx + j * B));
            j += 1;
        }
        *data.add(idx) = sum;
        let idata = data.add(base);
        syncthreads();
        complete_tree(idata, tid, B);
        if tid == 0 {
            *partials.add(bid) = *idata;
        }
    }
}

/// Seed version 9 (`reduceCompleteUnroll<iBlockSize>`) for blocks of exactly `B` threads, one
/// entry per block size (`reduce_complete_unroll_64` to `reduce_complete_unroll_1024`): the
/// block size is a compile-time constant, so the `blockDim.x >= 2s` tests fold away.
///
/// # Safety
/// Launched with blocks of `B` threads; otherwise as [`reduce_unroll_warps8`].
#[kernel(instantiate(B = 64, 128, 256, 512, 1024))]
pub unsafe fn reduce_complete_unroll<const B: usize>(data: *mut i32, partials: *mut i32) {
    // SAFETY: forwarded to the caller's contract.
    unsafe { complete_unroll::<B>(data, partials) }
}

/// The seed's "模板化内核" (`reduceCompleteUnroll<iBlockSize>`): one entry per block size,
/// `(block size, kernel)`, all generated from one const-generic body (host build).
#[cfg(not(target_arch = "nvptx64"))]
pub const REDUCE_COMPLETE_UNROLL: [(u32, gpu_std::host::Kernel<(*mut i32, *mut i32)>); 5] = [
    (64, reduce_complete_unroll_64),
    (128, reduce_complete_unroll_128),
    (256, reduce_complete_unroll_256),
    (512, reduce_complete_unroll_512),
    (1024, reduce_complete_unroll_1024),
];
