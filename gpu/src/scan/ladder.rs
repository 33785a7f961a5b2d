//! The textbook scans of *Programming Massively Parallel Processors* ch. 11 on `i32` (wrapping
//! adds), each a step of the ladder that ends at [`lookback`](super::lookback).
//!
//! The four block scans ([`scan_kogge_stone`], [`scan_kogge_stone_double_buffer`],
//! [`scan_brent_kung`], [`scan_coarsened`]) scan each block's section of the input on its own
//! (section `b` of the output is the inclusive scan of section `b` of the input) and write the
//! section's total to `sums[b]`; the hierarchical scan runs [`scan_coarsened`], scans `sums`
//! the same way, and adds `sums[b - 1]` to section `b` with [`scan_add_sums`]. The
//! stream-based scan [`scan_stream_based`] is one pass: each block waits for its left
//! neighbour's prefix.

use super::{
    BRENT_KUNG_BLOCK, COARSENED_BLOCK, COARSENED_ITEMS, COARSENED_SECTION, KOGGE_STONE_BLOCK,
};
use crate::coordinates;
use core::sync::atomic::Ordering;
use gpu_std::atomic::mid::{atomic_load_32_device, atomic_store_32_device};
use gpu_std::{SharedArray, atomic_add, grid_dim, kernel, static_shared, syncthreads};

/// Kogge-Stone in one block (PMPP Fig. 11.3): thread `t` holds element `t` of the section in
/// shared memory; at step `s` (stride `2^s`) it adds the element `2^s` to its left. `log2(B)`
/// steps and about `B log2(B)` adds for `B` elements (work-inefficient: the sequential scan does
/// `B - 1`); two barriers per step, one so that every read of a step precedes its writes.
///
/// Launch: blocks of at most [`KOGGE_STONE_BLOCK`] threads, a power of
/// two; `ceil(n / blockDim.x)` blocks, each scanning the section of `blockDim.x` elements.
///
/// # Safety
/// `input` and `output` are valid for `n` `i32` and do not overlap; `sums` holds `gridDim.x`
/// `i32`.
///
/// Performance: one read and one write per element, plus `log2(B)` shared-memory steps.
#[kernel]
pub unsafe fn scan_kogge_stone(input: *const i32, output: *mut i32, n: usize, sums: *mut i32) {
    let xy = static_shared!(s_scan_kogge_stone: [i32; KOGGE_STONE_BLOCK as usize]);
    let (tid, block, bid) = coordinates();
    let i = bid * block + tid;
    // SAFETY: `tid < block <= KOGGE_STONE_BLOCK` indexes the shared array; `i < n` guards the
    // global accesses; `bid < gridDim.x` indexes `sums`.
    unsafe {
        xy.write(tid, if i < n { *input.add(i) } else { 0 });
        let mut stride = 1;
        while stride < block {
            syncthreads();
            let sum = if tid >= stride {
                xy.read(tid).wrapping_add(xy.read(tid - stride))
            } else {
                0
            };
            syncthreads();
            if tid >= stride {
                xy.write(tid, sum);
            }
            stride *= 2;
        }
        if i < n {
            *output.add(i) = xy.read(tid);
        }
        if tid == block - 1 {
            *sums.add(bid) = xy.read(tid);
        }
    }
}

/// Kogge-Stone with double buffering (PMPP §11.3): each step reads one shared buffer and writes
/// the other, so one barrier per step suffices (the write of step `s` cannot race the reads of
/// step `s`, which use the other buffer). Same steps and adds as [`scan_kogge_stone`].
///
/// Launch: as [`scan_kogge_stone`].
///
/// # Safety
/// As [`scan_kogge_stone`].
///
/// Performance: as [`scan_kogge_stone`], with half its barriers.
#[kernel]
pub unsafe fn scan_kogge_stone_double_buffer(
    input: *const i32,
    output: *mut i32,
    n: usize,
    sums: *mut i32,
) {
    let a = static_shared!(s_scan_kogge_stone_db_a: [i32; KOGGE_STONE_BLOCK as usize]);
    let b = static_shared!(s_scan_kogge_stone_db_b: [i32; KOGGE_STONE_BLOCK as usize]);
    let (tid, block, bid) = coordinates();
    let i = bid * block + tid;
    // SAFETY: as in `scan_kogge_stone`; each step's barrier orders the previous step's writes
    // of `src` before its reads, and the reads of `dst` (the previous step's `src`) before
    // its writes.
    unsafe {
        a.write(tid, if i < n { *input.add(i) } else { 0 });
        let mut in_a = true;
        let mut stride = 1;
        while stride < block {
            syncthreads();
            let (src, dst) = if in_a { (&a, &b) } else { (&b, &a) };
            let mut v = src.read(tid);
            if tid >= stride {
                v = v.wrapping_add(src.read(tid - stride));
            }
            dst.write(tid, v);
            in_a = !in_a;
            stride *= 2;
        }
        let last = if in_a { &a } else { &b };
        if i < n {
            *output.add(i) = last.read(tid);
        }
        if tid == block - 1 {
            *sums.add(bid) = last.read(tid);
        }
    }
}

/// Brent-Kung (PMPP Fig. 11.7): a reduction tree up the section, then a distribution tree
/// down it; each thread owns two elements, so a block of `B` threads scans `2B`. About `2 log2(2B)`
/// steps and `2(2B) - 2 - log2(2B)` adds per section: work-efficient, but half the threads idle
/// at most steps.
///
/// Launch: blocks of at most [`BRENT_KUNG_BLOCK`] threads, a power of
/// two; `ceil(n / (2 blockDim.x))` blocks.
///
/// # Safety
/// As [`scan_kogge_stone`].
///
/// Performance: one read and one write per element; `2 log2(2B) - 1` barriers.
#[kernel]
pub unsafe fn scan_brent_kung(input: *const i32, output: *mut i32, n: usize, sums: *mut i32) {
    let xy = static_shared!(s_scan_brent_kung: [i32; 2 * BRENT_KUNG_BLOCK as usize]);
    let (tid, block, bid) = coordinates();
    let section = 2 * block;
    let start = bid * section;
    // SAFETY: every shared index is below `section <= 2 BRENT_KUNG_BLOCK`; the global ones are
    // guarded by `< n`; `bid < gridDim.x` indexes `sums`.
    unsafe {
        for j in [tid, tid + block] {
            xy.write(
                j,
                if start + j < n {
                    *input.add(start + j)
                } else {
                    0
                },
            );
        }
        let mut stride = 1;
        while stride <= block {
            syncthreads();
            let index = (tid + 1) * 2 * stride - 1;
            if index < section {
                xy.write(index, xy.read(index).wrapping_add(xy.read(index - stride)));
            }
            stride *= 2;
        }
        let mut stride = section / 4;
        while stride > 0 {
            syncthreads();
            let index = (tid + 1) * 2 * stride - 1;
            if index + stride < section {
                xy.write(
                    index + stride,
                    xy.read(index + stride).wrapping_add(xy.read(index)),
                );
            }
            stride /= 2;
        }
        syncthreads();
        for j in [tid, tid + block] {
            if start + j < n {
                *output.add(start + j) = xy.read(j);
            }
        }
        if tid == 0 {
            *sums.add(bid) = xy.read(section - 1);
        }
    }
}

/// Shared-memory words of a coarsened section: one padding word every 32.
const COARSENED_SHARED: usize = COARSENED_SECTION + COARSENED_SECTION / 32;

/// Shared-memory index of element `i` of a coarsened section, padded by one word every 32 so
/// that the threads of a warp, each walking its own run of [`COARSENED_ITEMS`] elements, hit
/// 32 different banks.
#[inline(always)]
fn padded(i: usize) -> usize {
    i + i / 32
}

/// The coarsened three-phase scan of one section of [`COARSENED_SECTION`] elements starting at
/// `start` (PMPP §11.6): a coalesced load into shared memory, each thread's sequential scan of
/// its run of [`COARSENED_ITEMS`], a Kogge-Stone scan of the runs' totals, and each run's
/// offset added back. Leaves the scanned section in `xy` (padded indices) and returns the
/// section's total (in every thread). Every thread of the block must call it.
///
/// # Safety
/// The block has [`COARSENED_BLOCK`] threads; `input` is valid for `n` elements.
#[inline(always)]
unsafe fn coarsened_section(
    xy: &SharedArray<i32, COARSENED_SHARED>,
    totals: &SharedArray<i32, { COARSENED_BLOCK as usize }>,
    input: *const i32,
    n: usize,
    start: usize,
) -> i32 {
    let (tid, block, _) = coordinates();
    // SAFETY: padded indices of `0..COARSENED_SECTION` are inside `xy`; `tid < block =
    // COARSENED_BLOCK` indexes `totals`; global reads are guarded by `< n`.
    unsafe {
        for j in 0..COARSENED_ITEMS {
            let e = j * block + tid;
            let i = start + e;
            xy.write(padded(e), if i < n { *input.add(i) } else { 0 });
        }
        syncthreads();
        // Phase 1: this thread's run, sequentially.
        let run = tid * COARSENED_ITEMS;
        let mut acc = 0i32;
        for j in 0..COARSENED_ITEMS {
            acc = acc.wrapping_add(xy.read(padded(run + j)));
            xy.write(padded(run + j), acc);
        }
        totals.write(tid, acc);
        // Phase 2: Kogge-Stone over the runs' totals.
        let mut stride = 1;
        while stride < block {
            syncthreads();
            let sum = if tid >= stride {
                totals.read(tid).wrapping_add(totals.read(tid - stride))
            } else {
                0
            };
            syncthreads();
            if tid >= stride {
                totals.write(tid, sum);
            }
            stride *= 2;
        }
        syncthreads();
        // Phase 3: the total of the runs to the left, added to this thread's run.
        if tid > 0 {
            let offset = totals.read(tid - 1);
            for j in 0..COARSENED_ITEMS {
                let e = padded(run + j);
                xy.write(e, xy.read(e).wrapping_add(offset));
            }
        }
        syncthreads();
        totals.read(block - 1)
    }
}

/// The coarsened three-phase block scan (PMPP §11.6): each block scans a section of
/// [`COARSENED_SECTION`] elements (16 per thread) through shared
/// memory, sequentially within each thread's run, Kogge-Stone across the 256 runs. `S - 1 +
/// B log2(B) + S` adds for a section of `S` with `B` threads: close to work-efficient, and
/// `log2(B) + 2` parallel steps.
///
/// Launch: blocks of exactly [`COARSENED_BLOCK`] threads,
/// `ceil(n / COARSENED_SECTION)` blocks.
///
/// # Safety
/// As [`scan_kogge_stone`].
///
/// Performance: one read and one write per element, coalesced; shared-memory runs padded
/// against bank conflicts.
#[kernel]
pub unsafe fn scan_coarsened(input: *const i32, output: *mut i32, n: usize, sums: *mut i32) {
    let xy = static_shared!(s_scan_coarsened: [i32; COARSENED_SHARED]);
    let totals = static_shared!(s_scan_coarsened_totals: [i32; COARSENED_BLOCK as usize]);
    let (tid, block, bid) = coordinates();
    let start = bid * COARSENED_SECTION;
    // SAFETY: forwarded to the caller's contract (block size, buffer lengths); writes are
    // guarded by `< n`, `sums` by `bid < gridDim.x`.
    unsafe {
        let total = coarsened_section(&xy, &totals, input, n, start);
        for j in 0..COARSENED_ITEMS {
            let e = j * block + tid;
            if start + e < n {
                *output.add(start + e) = xy.read(padded(e));
            }
        }
        if tid == 0 {
            *sums.add(bid) = total;
        }
    }
}

/// The third kernel of the hierarchical scan (PMPP §11.7): adds `sums[b - 1]` (the inclusive
/// scan of the section totals) to every element of section `b`, for `b >= 1`.
///
/// Launch: blocks of any multiple of 32 threads (e.g.
/// [`ADD_SUMS_BLOCK`](super::ADD_SUMS_BLOCK)), one block per section: `ceil(n / section)`.
///
/// # Safety
/// `output` is valid for `n` `i32`; `sums` for `gridDim.x - 1`; no other thread accesses them.
///
/// Performance: one read and one write per element of sections 1 and up.
#[kernel]
pub unsafe fn scan_add_sums(output: *mut i32, n: usize, sums: *const i32, section: usize) {
    let (tid, block, bid) = coordinates();
    if bid == 0 {
        return;
    }
    // SAFETY: `bid - 1 < gridDim.x - 1` indexes `sums`; writes are guarded by `< n`.
    unsafe {
        let offset = *sums.add(bid - 1);
        let start = bid * section;
        let end = (start + section).min(n);
        let mut i = start + tid;
        while i < end {
            *output.add(i) = (*output.add(i)).wrapping_add(offset);
            i += block;
        }
    }
}

/// The stream-based single-pass scan (PMPP §11.8, "adjacent synchronisation"): each block
/// scans its section as [`scan_coarsened`], then waits for its left neighbour to publish the
/// prefix up to the section's start, publishes its own (prefix + total) for the block to its
/// right, and adds the prefix to its section. The prefixes ripple through the grid one block at
/// a time (a chain of `ceil(n / section)` dependent global-memory round trips).
///
/// Sections are handed out by an atomic ticket in the order blocks start, so a block only ever
/// waits for a block that is already running (no deadlock whatever the scheduler does). The
/// block that takes the last ticket sets `counter` back to 0 for the next launch. `flags[s]`
/// equals `epoch` once `prefixes[s]` (the sum of the sections before `s`) is published: a
/// release store after the value, an acquire load before reading it.
///
/// Launch: blocks of exactly [`COARSENED_BLOCK`] threads,
/// `ceil(n / COARSENED_SECTION)` blocks.
///
/// # Safety
/// `input` and `output` valid for `n` `i32`, not overlapping; `flags` and `prefixes` hold
/// `gridDim.x + 1` words, and no word of `flags` equals `epoch` (a fresh epoch per launch of
/// one workspace); `counter` is 0 and used by no concurrent launch.
///
/// Performance: one read and one write per element, and a serial chain of one L2 round trip
/// per section.
#[kernel]
pub unsafe fn scan_stream_based(
    input: *const i32,
    output: *mut i32,
    n: usize,
    flags: *mut u32,
    prefixes: *mut i32,
    counter: *mut u32,
    epoch: u32,
) {
    let xy = static_shared!(s_scan_stream: [i32; COARSENED_SHARED]);
    let totals = static_shared!(s_scan_stream_totals: [i32; COARSENED_BLOCK as usize]);
    let shared = static_shared!(s_scan_stream_ticket: [i32; 2]);
    let (tid, block, _) = coordinates();
    // SAFETY: the caller's contract covers every pointer; `section < gridDim.x` (tickets are
    // 0..gridDim.x) indexes `flags` and `prefixes` up to `section + 1`.
    unsafe {
        if tid == 0 {
            let ticket = atomic_add(counter, 1u32);
            if ticket == grid_dim().x - 1 {
                // Every ticket of this launch is taken: ready for the next one.
                atomic_store_32_device(counter, Ordering::Relaxed, 0);
            }
            shared.write(0, ticket as i32);
        }
        syncthreads();
        let section = shared.read(0) as u32 as usize;
        let start = section * COARSENED_SECTION;
        let total = coarsened_section(&xy, &totals, input, n, start);
        if tid == 0 {
            let mut prefix = 0;
            if section > 0 {
                // Acquire: the left neighbour's prefix, written before its release store of
                // the flag, is visible once the flag is seen.
                while atomic_load_32_device(flags.add(section), Ordering::Acquire) != epoch {}
                prefix = *prefixes.add(section);
            }
            *prefixes.add(section + 1) = prefix.wrapping_add(total);
            // Release: the prefix above is visible to whoever acquires the flag.
            atomic_store_32_device(flags.add(section + 1), Ordering::Release, epoch);
            shared.write(1, prefix);
        }
        syncthreads();
        let prefix = shared.read(1);
        for j in 0..COARSENED_ITEMS {
            let e = j * block + tid;
            if start + e < n {
                *output.add(start + e) = xy.read(padded(e)).wrapping_add(prefix);
            }
        }
    }
}
