//! The single-pass scan with decoupled look-back (Merrill and Garland, "Single-pass Parallel
//! Prefix Scan with Decoupled Look-back", NVIDIA Research, 2016; CUB's `DeviceScan`): the scan
//! a user should call, one read and one write per element.
//!
//! Each block takes the next tile of `blockDim.x * 32` elements ([`LOOKBACK_TILE`](super::LOOKBACK_TILE)
//! for blocks of 512; an atomic ticket, so tiles are handed out in the order blocks start),
//! loads it with 16-byte loads (eight per thread, each warp instruction one coalesced 512-byte
//! run), scans it in registers (each thread's four elements of a vector in sequence, then warp
//! shuffles across lanes and across the eight vectors, then the warp totals through shared
//! memory), and
//! publishes its aggregate in its status word. Warp 0 then looks back: each lane reads the
//! status word of one of the 32 tiles before it; if the nearest tile that has published its
//! inclusive prefix is among them, the sum of the aggregates up to it and its prefix is this
//! tile's exclusive prefix; if none has, the warp adds the 32 aggregates and moves its window
//! 32 tiles further back. It publishes the inclusive prefix, and every thread adds the
//! prefix to its elements and stores them with 16-byte stores. A tile therefore never waits
//! for its predecessors to finish, only for them to publish their aggregates, which they do
//! as soon as their own elements are scanned: the chain of dependent global-memory round trips
//! of the stream-based scan becomes one look-back of a few status words per tile, and the scan
//! runs at the speed of the copy it has to do.

use super::{
    LOOKBACK_VECTORS, LOOKBACK_WARP_ITEMS, STATUS_AGGREGATE, STATUS_PREFIX, ScanOp, pack_status,
    warp_inclusive, warp_total,
};
use core::sync::atomic::Ordering;
use gpu_std::atomic::mid::{atomic_load_64_device, atomic_store_64_device};
use gpu_std::{
    FULL_MASK, SharedArray, atomic_add, ballot_sync, block_dim, grid_dim, kernel,
    load_global_nc_v4_u32, load_global_v4_u32, shfl_idx_sync, shfl_up_sync, static_shared,
    store_global_v4_u32, syncthreads, thread_idx,
};

/// Slots for warp totals: up to 32 warps (1024 threads).
pub(crate) const MAX_WARPS: usize = 32;
const V: usize = LOOKBACK_VECTORS;

/// The look-back scan of `n` 32-bit elements of type `S` (see the module docs).
///
/// # Safety
/// See [`scan_lookback_i32`]; `ticket`, `warp_totals` and `tile_prefix` are this block's shared
/// arrays.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn lookback<S: ScanOp>(
    input: *const u32,
    output: *mut u32,
    n: usize,
    status: *mut u64,
    counter: *mut u32,
    epoch: u32,
    exclusive: bool,
    shared: (
        &SharedArray<u32, 1>,
        &SharedArray<S, MAX_WARPS>,
        &SharedArray<S, 1>,
    ),
) {
    let (ticket, warp_totals, tile_prefix) = shared;
    let tid = thread_idx().x as usize;
    let lane = (tid % 32) as u32;
    let warp = tid / 32;
    let warps = block_dim().x as usize / 32;
    let tile_items = warps * LOOKBACK_WARP_ITEMS;

    // SAFETY (the whole body): the caller's contract covers `counter`, `status` (one word per
    // tile, `tile < gridDim.x`) and the element pointers; element accesses are either inside
    // a whole tile (`full`) or guarded by `< n`; shared indices are below their lengths.
    unsafe {
        let tile = take_ticket(counter, ticket);
        let base = tile * tile_items;
        let seg = base + warp * LOOKBACK_WARP_ITEMS;
        let full = base + tile_items <= n;
        let vectors = ((input as usize | output as usize) & 15) == 0;
        let in_place = core::ptr::eq(input, output.cast_const());

        // Load: vector k of lane l holds elements seg + 4 (32 k + l) .. + 4.
        let mut x = [[S::ZERO; 4]; V];
        if full && vectors {
            for (k, xk) in x.iter_mut().enumerate() {
                let p = input.add(seg + 4 * (32 * k + lane as usize));
                // The read-only path only when no thread of this launch writes the input.
                let w = if in_place {
                    load_global_v4_u32(p)
                } else {
                    load_global_nc_v4_u32(p)
                };
                *xk = w.map(S::from_bits);
            }
        } else {
            for (k, xk) in x.iter_mut().enumerate() {
                for (j, xkj) in xk.iter_mut().enumerate() {
                    let i = seg + 4 * (32 * k + lane as usize) + j;
                    if i < n {
                        *xkj = S::from_bits(*input.add(i));
                    }
                }
            }
        }

        // Scan in registers: each vector in sequence, then across the lanes (warp shuffles),
        // then across the warp's four vectors.
        let mut incl = x;
        for v in incl.iter_mut() {
            for j in 1..4 {
                v[j] = S::add(v[j - 1], v[j]);
            }
        }
        // The warp's part of vector k's offset: its vectors before k plus the lanes before
        // this one in k, added now (the same additions in the same order as after the
        // look-back) so that one register per vector lives through the look-back, not two.
        let mut before = [S::ZERO; V];
        let mut warp_sum = S::ZERO;
        for (k, b) in before.iter_mut().enumerate() {
            let scanned = warp_inclusive(incl[k][3], lane);
            let up = shfl_up_sync(FULL_MASK, scanned, 1);
            let lane_prefix = if lane == 0 { S::ZERO } else { up };
            *b = S::add(warp_sum, lane_prefix);
            warp_sum = S::add(warp_sum, shfl_idx_sync(FULL_MASK, scanned, 31));
        }
        if lane == 0 {
            warp_totals.write(warp, warp_sum);
        }
        syncthreads();

        // Warp 0: the tile's aggregate, published at once; then the look-back.
        if warp == 0 {
            let (prefix, _) = block_look_back(warp_totals, warps, status, tile, epoch, lane);
            if lane == 0 {
                tile_prefix.write(0, prefix);
            }
        }
        syncthreads();

        // The offset of this warp: the tile's prefix and the warps before it.
        let mut offset = tile_prefix.read(0);
        for w in 0..warp {
            offset = S::add(offset, warp_totals.read(w));
        }
        let mut out = [[0u32; 4]; V];
        for k in 0..V {
            let o = S::add(offset, before[k]);
            for j in 0..4 {
                let own = if exclusive {
                    if j == 0 { S::ZERO } else { incl[k][j - 1] }
                } else {
                    incl[k][j]
                };
                out[k][j] = S::add(o, own).to_bits();
            }
        }
        if full && vectors {
            for (k, ok) in out.iter().enumerate() {
                store_global_v4_u32(output.add(seg + 4 * (32 * k + lane as usize)), *ok);
            }
        } else {
            for (k, ok) in out.iter().enumerate() {
                for (j, okj) in ok.iter().enumerate() {
                    let i = seg + 4 * (32 * k + lane as usize) + j;
                    if i < n {
                        *output.add(i) = *okj;
                    }
                }
            }
        }
    }
}

/// The tile of this block: the next ticket of `counter`, broadcast through `ticket`. Tiles are
/// handed out in the order blocks start, so a tile only ever waits for tiles whose blocks are
/// already running (forward progress whatever the scheduler does). The block that takes the
/// last ticket resets the counter for the next launch (every other block has taken its ticket
/// by then). Every thread of the block must call it.
///
/// # Safety
/// `counter` is a valid global `u32` that no concurrent launch uses; `ticket` is this block's
/// shared array.
#[inline(always)]
pub(crate) unsafe fn take_ticket(counter: *mut u32, ticket: &SharedArray<u32, 1>) -> usize {
    // SAFETY: forwarded to the caller's contract.
    unsafe {
        if thread_idx().x == 0 {
            let t = atomic_add(counter, 1u32);
            if t == grid_dim().x - 1 {
                atomic_store_32(counter, 0);
            }
            ticket.write(0, t);
        }
        syncthreads();
        ticket.read(0) as usize
    }
}

/// Warp 0's part of a tile: the tile's aggregate from the first `warps` warp totals in shared
/// memory, then [`look_back`]. Returns the tile's exclusive prefix and its aggregate (in every
/// lane). Every lane of warp 0 must call it, after a barrier that follows the totals' writes.
///
/// # Safety
/// As [`look_back`]; `warps <= MAX_WARPS` slots of `warp_totals` are written.
#[inline(always)]
pub(crate) unsafe fn block_look_back<S: ScanOp>(
    warp_totals: &SharedArray<S, MAX_WARPS>,
    warps: usize,
    status: *mut u64,
    tile: usize,
    epoch: u32,
    lane: u32,
) -> (S, S) {
    // SAFETY: `lane < warps <= MAX_WARPS` indexes written slots; the rest is the caller's.
    unsafe {
        let mine = if (lane as usize) < warps {
            warp_totals.read(lane as usize)
        } else {
            S::ZERO
        };
        let aggregate = shfl_idx_sync(FULL_MASK, warp_inclusive(mine, lane), 31);
        (look_back(status, tile, epoch, aggregate, lane), aggregate)
    }
}

/// The decoupled look-back of `tile`, run by one whole warp (every lane must call it): publishes
/// the tile's `aggregate` (or, for tile 0, its inclusive prefix at once), then reads the status
/// words of the 32 tiles before it at a time, each lane one, nearest first: if the nearest tile
/// that has published its inclusive prefix is in the window, the sum of the aggregates up to
/// it and its prefix is this tile's exclusive prefix; if none is, the 32 aggregates are added
/// and the window moves 32 tiles back; a tile of the window that has published nothing yet
/// (its status word carries an older epoch) is read again. Publishes the tile's inclusive
/// prefix and returns its exclusive prefix (in every lane).
///
/// # Safety
/// `status` holds a word for every tile up to `tile`, 8-byte aligned, written only by this
/// launch's look-backs with this `epoch` (or carrying another epoch).
#[inline(always)]
pub(crate) unsafe fn look_back<S: ScanOp>(
    status: *mut u64,
    tile: usize,
    epoch: u32,
    aggregate: S,
    lane: u32,
) -> S {
    let mut prefix = S::ZERO;
    // SAFETY: every word read or written is `status[t]` for `t <= tile`.
    unsafe {
        if tile == 0 {
            if lane == 0 {
                publish(status, STATUS_PREFIX, epoch, aggregate);
            }
            return prefix;
        }
        if lane == 0 {
            publish(status.add(tile), STATUS_AGGREGATE, epoch, aggregate);
        }
        // Lane l reads the status of tile `end - 1 - l`.
        let mut end = tile;
        loop {
            let (ready, is_prefix, value) = if end > lane as usize {
                // Relaxed is enough: the status and the value are one 64-bit word, single-copy
                // atomic, and nothing else of the other tile is read.
                let word =
                    atomic_load_64_device(status.add(end - 1 - lane as usize), Ordering::Relaxed);
                let flag = (word >> 32) & 3;
                let ready = (word >> 34) as u32 == epoch && flag != 0;
                (
                    ready,
                    ready && flag == STATUS_PREFIX,
                    S::from_bits(word as u32),
                )
            } else {
                // Before tile 0: nothing to add (tile 0 is always a prefix, so the nearest
                // prefix is found before these lanes count).
                (true, true, S::ZERO)
            };
            let waiting = ballot_sync(FULL_MASK, !ready);
            let prefixes = ballot_sync(FULL_MASK, is_prefix);
            // The lanes that count: up to and including the nearest prefix.
            let stop = prefixes.trailing_zeros(); // 32 if none
            let counted = if stop >= 31 {
                u32::MAX
            } else {
                (2u32 << stop) - 1
            };
            if waiting & counted != 0 {
                continue; // a tile in the window has not published yet: read again
            }
            let window = warp_total(if lane <= stop { value } else { S::ZERO });
            prefix = S::add(window, prefix);
            if stop < 32 {
                break;
            }
            end -= 32;
        }
        if lane == 0 {
            publish(
                status.add(tile),
                STATUS_PREFIX,
                epoch,
                S::add(prefix, aggregate),
            );
        }
    }
    prefix
}

/// Publishes `value` with `status` for this launch's `epoch` in one relaxed 64-bit store (see
/// [`pack_status`]).
///
/// # Safety
/// `word` is a valid, 8-byte aligned global address.
#[inline(always)]
unsafe fn publish<S: ScanOp>(word: *mut u64, status: u64, epoch: u32, value: S) {
    // SAFETY: forwarded to the caller.
    unsafe {
        atomic_store_64_device(
            word,
            Ordering::Relaxed,
            pack_status(status, epoch, value.to_bits()),
        )
    }
}

/// A relaxed GPU-scope store of a `u32`.
///
/// # Safety
/// `word` is a valid, 4-byte aligned global address.
#[inline(always)]
unsafe fn atomic_store_32(word: *mut u32, value: u32) {
    // SAFETY: forwarded to the caller.
    unsafe { gpu_std::atomic::mid::atomic_store_32_device(word, Ordering::Relaxed, value) }
}

/// Inclusive (`exclusive == 0`) or exclusive (`exclusive != 0`) prefix sum of `n` elements of
/// `S` (`i32` and `u32` with wrapping adds, as `wrapping_add`; `f32` with IEEE adds in an order
/// that depends on the timing of the look-back, so results may differ in the last bits from run
/// to run), in one pass with decoupled look-back (see the [module docs](self)). Entries
/// `scan_lookback_i32`, `scan_lookback_u32`, `scan_lookback_f32`.
///
/// Launch: blocks of any multiple of 32 threads up to 1024 (the host picks 128, 256 or
/// [`LOOKBACK_BLOCK`](super::LOOKBACK_BLOCK) with [`lookback_block`](super::lookback_block))
/// and one block per tile of [`lookback_tile(blockDim.x)`](super::lookback_tile) elements (at
/// least 1 when `n > 0`).
///
/// Parameters: `status` holds one word per tile (`gridDim.x`); `counter` is the tile ticket;
/// `epoch` tells this launch's status words from earlier launches' (1 to
/// [`MAX_EPOCH`](super::MAX_EPOCH)).
///
/// # Safety
/// `input` and `output` are valid for `n` elements, 4-byte aligned, and either the same address
/// (in place) or not overlapping; `status` holds `gridDim.x` 8-byte aligned words, none of
/// which carries `epoch` (each launch on one workspace passes a new epoch, or the words are
/// zeroed); `counter` points to a `u32` that is 0 and no concurrent launch uses (it is 0 again
/// when the kernel ends).
///
/// Performance: reads and writes each element once, 16 bytes at a time where `input` and
/// `output` are 16-byte aligned; bound by DRAM bandwidth.
#[kernel(instantiate(S = i32, u32, f32))]
pub unsafe fn scan_lookback<S: ScanOp>(
    input: *const S,
    output: *mut S,
    n: usize,
    status: *mut u64,
    counter: *mut u32,
    epoch: u32,
    exclusive: u32,
) {
    let ticket = static_shared!(s_scan_lookback_ticket: [u32; 1]);
    let warp_totals = static_shared!(s_scan_lookback_warps: [S; MAX_WARPS]);
    let tile_prefix = static_shared!(s_scan_lookback_prefix: [S; 1]);
    // SAFETY: forwarded to the caller's contract.
    unsafe {
        lookback::<S>(
            input.cast(),
            output.cast(),
            n,
            status,
            counter,
            epoch,
            exclusive != 0,
            (&ticket, &warp_totals, &tile_prefix),
        )
    }
}

/// The look-back scan's memory traffic without the scan: each block takes a ticket, loads its
/// tile of `blockDim.x * 32` elements with the same 16-byte striped loads into registers,
/// waits at a barrier, and stores them unchanged with the same 16-byte stores. Its time is the
/// floor of that tile shape (one ticket, one barrier and a whole tile in registers between
/// the loads and the stores), which [`scan_lookback_u32`] adds its scan and look-back to: a
/// microbenchmark for the scan's tables, not a copy to call.
///
/// Launch: as [`scan_lookback_u32`] (blocks of a multiple of 32 threads, one per tile of
/// [`lookback_tile(blockDim.x)`](super::lookback_tile) elements).
///
/// # Safety
/// `input` and `output` are valid for `n` elements, 16-byte aligned, and do not overlap;
/// `counter` points to a `u32` that is 0 and no concurrent launch uses (0 again at the end).
///
/// Performance: bound by DRAM bandwidth, like a copy, less each tile's fixed costs.
#[kernel]
pub unsafe fn scan_tile_copy(input: *const u32, output: *mut u32, n: usize, counter: *mut u32) {
    let ticket = static_shared!(s_scan_tile_copy_ticket: [u32; 1]);
    let tid = thread_idx().x as usize;
    let lane = tid % 32;
    let warp = tid / 32;
    let tile_items = block_dim().x as usize / 32 * LOOKBACK_WARP_ITEMS;
    // SAFETY: `counter` and the element pointers are the caller's; accesses are inside a whole
    // tile (`full`) or guarded by `< n`; the vector accesses are 16-byte aligned (contract).
    unsafe {
        let tile = take_ticket(counter, &ticket);
        let seg = tile * tile_items + warp * LOOKBACK_WARP_ITEMS;
        let full = (tile + 1) * tile_items <= n;
        let mut x = [[0u32; 4]; V];
        if full {
            for (k, xk) in x.iter_mut().enumerate() {
                *xk = load_global_nc_v4_u32(input.add(seg + 4 * (32 * k + lane)));
            }
        } else {
            for (k, xk) in x.iter_mut().enumerate() {
                for (j, xkj) in xk.iter_mut().enumerate() {
                    let i = seg + 4 * (32 * k + lane) + j;
                    if i < n {
                        *xkj = *input.add(i);
                    }
                }
            }
        }
        syncthreads();
        if full {
            for (k, xk) in x.iter().enumerate() {
                store_global_v4_u32(output.add(seg + 4 * (32 * k + lane)), *xk);
            }
        } else {
            for (k, xk) in x.iter().enumerate() {
                for (j, xkj) in xk.iter().enumerate() {
                    let i = seg + 4 * (32 * k + lane) + j;
                    if i < n {
                        *output.add(i) = *xkj;
                    }
                }
            }
        }
    }
}
