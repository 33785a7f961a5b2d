//! The textbook histograms of *Programming Massively Parallel Processors* (4th ed., ch. 9) over
//! bytes into 256 `u32` bins, each a step of the ladder that ends at
//! [`histogram_bytes`](super::bytes::histogram_bytes).
//!
//! Every kernel takes `(input: *const u8, n: usize, counts: *mut u32)` and adds the counts of
//! `input[..n]` to `counts[..256]` (the host zeroes them first to overwrite). The book bins
//! letters into groups of four; here every byte value is its own bin, so the kernels are the
//! book's with the bin index `input[i]`.
//!
//! 1. [`histogram_global_atomics`] (§9.2): one thread per byte, one global atomic each. Every
//!    update of a bin is a read-modify-write at the L2, serialised per address: throughput is
//!    bound by the L2's atomic units, and a constant input puts every update on one address.
//! 2. [`histogram_shared`] (§9.4, privatisation): each block counts into its own 256 bins in
//!    shared memory, then adds each nonzero bin to global memory once. Shared atomics are
//!    served by the SM, far faster than the L2's, and contention spreads over the blocks.
//! 3. [`histogram_contiguous`] (§9.5, coarsening): fewer blocks, each thread counting
//!    [`LADDER_ITEMS`] consecutive bytes, so the merge into global memory is paid once per
//!    8192 bytes instead of once per 256. The threads of a warp read bytes 32 apart: each
//!    load instruction touches 32 different sectors.
//! 4. [`histogram_interleaved`] (§9.5): the same coarsening with a grid-stride partition, so
//!    the 32 lanes of a warp read 32 consecutive bytes (one sector per load instruction).
//! 5. [`histogram_aggregated`] (§9.6): the interleaved kernel counting runs of equal
//!    consecutive values in a register and issuing one atomic per run: on skewed data (an
//!    image's sky, a constant block) most atomics disappear.

use super::{BYTE_BINS, LADDER_ITEMS};
use crate::coordinates;
use gpu_std::syncthreads;
use gpu_std::{SharedArray, grid_dim, kernel, red_global_add, red_shared_add, static_shared};

/// Zeroes a block's 256 private bins, then waits for the whole block.
///
/// # Safety
/// Every thread of the block calls it.
#[inline(always)]
unsafe fn zero_bins(bins: &SharedArray<u32, BYTE_BINS>) {
    let (tid, block, _) = coordinates();
    let mut b = tid;
    while b < BYTE_BINS {
        // SAFETY: `b < BYTE_BINS`; each bin is written by one thread, before the barrier.
        unsafe { bins.write(b, 0) };
        b += block;
    }
    syncthreads();
}

/// Waits for the whole block, then adds each nonzero private bin to `counts` with one global
/// atomic.
///
/// # Safety
/// Every thread of the block calls it; `counts` holds 256 `u32`.
#[inline(always)]
unsafe fn merge_bins(bins: &SharedArray<u32, BYTE_BINS>, counts: *mut u32) {
    syncthreads();
    let (tid, block, _) = coordinates();
    let mut b = tid;
    while b < BYTE_BINS {
        // SAFETY: `b < BYTE_BINS` indexes the private bins and `counts`; after the barrier no
        // thread writes the bins.
        unsafe {
            let v = bins.read(b);
            if v != 0 {
                red_global_add(counts.add(b), v);
            }
        }
        b += block;
    }
}

/// Adds `count` to bin `bin` of the private histogram at shared-window address `base`.
///
/// # Safety
/// `base` is the shared-window address of 256 `u32`; `bin < 256`.
#[inline(always)]
unsafe fn add_private(base: u32, bin: u32, count: u32) {
    // SAFETY: forwarded from the caller.
    unsafe { red_shared_add(base + 4 * bin, count) }
}

/// One global atomic per byte (PMPP Fig. 9.6): thread `i` adds 1 to `counts[input[i]]`.
///
/// Launch: blocks of [`LADDER_BLOCK`](super::LADDER_BLOCK) threads (any size works),
/// `ceil(n / blockDim.x)` blocks.
///
/// Parameters: `input` holds `n` bytes; `counts` 256 `u32` bins, added to.
///
/// # Safety
/// `input` is valid for `n` bytes; `counts` for 256 `u32`, not overlapping `input`.
///
/// Performance: one byte read and one L2 atomic per byte; bound by the atomic throughput of
/// the L2 slices, and by one address's serialised updates when the input is skewed.
#[kernel]
pub unsafe fn histogram_global_atomics(input: *const u8, n: usize, counts: *mut u32) {
    let (tid, block, bid) = coordinates();
    let i = bid * block + tid;
    if i < n {
        // SAFETY: `i < n` indexes `input`; a byte indexes the 256 bins.
        unsafe { red_global_add(counts.add(*input.add(i) as usize), 1u32) };
    }
}

/// A private histogram per block (PMPP Fig. 9.10): the block's threads add 1 per byte to 256
/// bins in shared memory, then add each nonzero bin to `counts` with one global atomic.
///
/// Launch: blocks of [`LADDER_BLOCK`](super::LADDER_BLOCK) threads (any size works),
/// `ceil(n / blockDim.x)` blocks; 1 KiB of static shared memory.
///
/// Parameters, safety: as [`histogram_global_atomics`].
///
/// # Safety
/// As [`histogram_global_atomics`].
///
/// Performance: one byte read and one shared atomic per byte, plus up to 256 global atomics
/// per block of 256 bytes: the merge still costs up to one global atomic per byte on uniform
/// data, which the coarsened kernels fix.
#[kernel]
pub unsafe fn histogram_shared(input: *const u8, n: usize, counts: *mut u32) {
    let bins = static_shared!(s_histogram_shared: [u32; BYTE_BINS]);
    let (tid, block, bid) = coordinates();
    let i = bid * block + tid;
    // SAFETY: the caller's contract covers `input[..n]` and `counts`; `i < n` guards the read;
    // a byte indexes the 256 private bins.
    unsafe {
        zero_bins(&bins);
        if i < n {
            add_private(bins.shared_address(), *input.add(i) as u32, 1);
        }
        merge_bins(&bins, counts);
    }
}

/// A private histogram per block with thread coarsening over a contiguous partition (PMPP
/// Fig. 9.12): thread `t` of the grid counts bytes `t * LADDER_ITEMS .. (t + 1) *
/// LADDER_ITEMS`.
///
/// Launch: blocks of [`LADDER_BLOCK`](super::LADDER_BLOCK) threads (any size works),
/// `ceil(n / (blockDim.x * LADDER_ITEMS))` blocks; 1 KiB of static shared memory.
///
/// # Safety
/// As [`histogram_global_atomics`]; the grid covers `n` as above (bytes past
/// `gridDim.x * blockDim.x * LADDER_ITEMS` are not counted).
///
/// Performance: one shared atomic per byte and up to 256 global atomics per
/// `blockDim.x * LADDER_ITEMS` bytes; each warp load instruction reads 32 bytes 32 apart, 32
/// sectors (the later bytes of each sector come from L1).
#[kernel]
pub unsafe fn histogram_contiguous(input: *const u8, n: usize, counts: *mut u32) {
    let bins = static_shared!(s_histogram_contiguous: [u32; BYTE_BINS]);
    let (tid, block, bid) = coordinates();
    let start = (bid * block + tid) * LADDER_ITEMS;
    let end = n.min(start + LADDER_ITEMS);
    // SAFETY: as in `histogram_shared`; every read is below `end <= n`.
    unsafe {
        zero_bins(&bins);
        let base = bins.shared_address();
        let mut i = start;
        while i < end {
            add_private(base, *input.add(i) as u32, 1);
            i += 1;
        }
        merge_bins(&bins, counts);
    }
}

/// A private histogram per block with thread coarsening over an interleaved partition (PMPP
/// Fig. 9.14): a grid-stride loop, so the lanes of a warp read consecutive bytes.
///
/// Launch: blocks of [`LADDER_BLOCK`](super::LADDER_BLOCK) threads (any size works), any grid
/// (the host launches `ceil(n / (blockDim.x * LADDER_ITEMS))` blocks: about
/// [`LADDER_ITEMS`] bytes per thread); 1 KiB of static shared memory.
///
/// # Safety
/// As [`histogram_global_atomics`].
///
/// Performance: one shared atomic per byte and up to 256 global atomics per
/// `blockDim.x * LADDER_ITEMS` bytes; coalesced byte loads (one sector per warp instruction,
/// so 4 bytes per thread-load would move 4 times more per instruction: see `histogram_bytes`).
#[kernel]
pub unsafe fn histogram_interleaved(input: *const u8, n: usize, counts: *mut u32) {
    let bins = static_shared!(s_histogram_interleaved: [u32; BYTE_BINS]);
    let (tid, block, bid) = coordinates();
    let stride = block * grid_dim().x as usize;
    // SAFETY: as in `histogram_shared`; every read is below `n`.
    unsafe {
        zero_bins(&bins);
        let base = bins.shared_address();
        let mut i = bid * block + tid;
        while i < n {
            add_private(base, *input.add(i) as u32, 1);
            i += stride;
        }
        merge_bins(&bins, counts);
    }
}

/// [`histogram_interleaved`] with aggregation (PMPP Fig. 9.15): each thread keeps the bin of
/// its last byte and how many equal bytes it has seen in a row, and issues one shared atomic
/// per run instead of one per byte.
///
/// Launch: as [`histogram_interleaved`].
///
/// # Safety
/// As [`histogram_global_atomics`].
///
/// Performance: on uniform random bytes a run is 256/255 bytes long, so as many atomics as
/// [`histogram_interleaved`] plus a compare per byte; on skewed data (long runs of one value
/// in each thread's bytes) up to one atomic per thread.
#[kernel]
pub unsafe fn histogram_aggregated(input: *const u8, n: usize, counts: *mut u32) {
    let bins = static_shared!(s_histogram_aggregated: [u32; BYTE_BINS]);
    let (tid, block, bid) = coordinates();
    let stride = block * grid_dim().x as usize;
    // SAFETY: as in `histogram_shared`; every read is below `n`; `run_bin` is a byte whenever
    // `run_len > 0`.
    unsafe {
        zero_bins(&bins);
        let base = bins.shared_address();
        let mut run_bin = 0u32;
        let mut run_len = 0u32;
        let mut i = bid * block + tid;
        while i < n {
            let b = *input.add(i) as u32;
            if b == run_bin {
                run_len += 1;
            } else {
                if run_len > 0 {
                    add_private(base, run_bin, run_len);
                }
                run_bin = b;
                run_len = 1;
            }
            i += stride;
        }
        if run_len > 0 {
            add_private(base, run_bin, run_len);
        }
        merge_bins(&bins, counts);
    }
}
