//! The look-back scan's tile staged in shared memory (CUB's `BLOCK_LOAD_WARP_TRANSPOSE` and
//! `BLOCK_SCAN_WARP_SCANS` with a blocked arrangement): the tile is copied from global to
//! shared memory with asynchronous 16-byte copies (`cp.async`, which hold no registers while in
//! flight), each thread then scans its own contiguous run of elements from shared memory in two
//! passes (its total for the block's scan and the look-back; then its outputs, written back in
//! place), and the block stores the tile from shared memory with coalesced 16-byte stores.
//! Shared memory is laid out in 16-byte units with an XOR swizzle, so that both the striped
//! copies and the blocked passes are free of bank conflicts.

use super::ScanOp;
use super::lookback::{MAX_WARPS, TileArgs, block_look_back, take_ticket};
use crate::reduce::ops::{Max, Sum};
use gpu_std::{
    DynamicShared, FULL_MASK, SharedArray, block_dim, copy_async_16, copy_async_commit,
    copy_async_wait_all, kernel, load_shared_v4_u32, shfl_up_sync, static_shared,
    store_global_v4_u32, store_shared_v4_u32, syncthreads, thread_idx,
};

/// Runs `$body` with `$i` bound to each of `0..$n` (`$n` a constant up to 16), one copy per
/// index.
macro_rules! unroll16 {
    ($i:ident < $n:expr => $body:block) => {
        unroll16!(@ $i, $n, $body, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $i:ident, $n:expr, $body:block, $($k:literal)*) => {
        $(
            #[allow(clippy::reversed_empty_ranges, unused_comparisons)]
            if $k < $n {
                let $i: usize = $k;
                $body
            }
        )*
    };
}

/// A 16-byte unit of the staged tile.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub(crate) struct Unit(pub(crate) [u32; 4]);

/// The shared-memory slot of the tile's 16-byte unit `u` when each thread owns `U` consecutive
/// units (`U` a power of two): rows of eight units (128 bytes, the 32 banks) with the unit's
/// column XORed by the low three bits of its row (`U <= 8`) or of its owner (`U >= 8`), so that
/// any eight consecutive units, and the units `t * U + i` of eight consecutive threads, fall
/// in distinct banks.
#[inline(always)]
pub const fn swizzle<const U: usize>(u: usize) -> usize {
    let shift = if U > 8 { U.trailing_zeros() } else { 3 };
    u ^ ((u >> shift) & 7)
}

/// Bytes of dynamic shared memory the staged tile of `block` threads takes for elements of
/// `item_bytes` bytes (each thread's [`lookback_items`](super::lookback_items) elements).
pub const fn staged_shared_bytes(block: u32, item_bytes: usize) -> usize {
    block as usize * super::lookback_items(item_bytes) * item_bytes
}

/// Copies tile `tile` (whole and 16-byte aligned) into `buf` (`threads * U` units) with
/// asynchronous 16-byte copies, striped (unit `k * threads + tid`: each warp one 512-byte run),
/// and commits them as one batch.
///
/// # Safety
/// `input` holds the tile's `threads * U * 16` bytes, 16-byte aligned; `buf` is this block's
/// shared memory of `threads * U` units that nothing reads until the batch lands and a barrier.
#[inline(always)]
unsafe fn copy_tile<const U: usize>(src: *const u8, buf: u32, threads: usize, tid: usize) {
    // SAFETY: forwarded to the caller.
    unsafe {
        for k in 0..U {
            let u = k * threads + tid;
            copy_async_16(buf + 16 * swizzle::<U>(u) as u32, src.add(16 * u));
        }
    }
    copy_async_commit();
}

/// Scans the tile `tile` (elements `base..base + tile_items`), whose elements are in `buf`
/// (written and made visible by a barrier; `buf_address` is its shared-window address), and
/// stores it: each thread's total (pass 1), the block's scan of the totals, the look-back, each
/// thread's outputs in place (pass 2), and the striped store. Every thread of the block must
/// call it; it ends with the stores issued.
///
/// # Safety
/// As [`staged_tile`]; `buf` holds the tile as [`copy_tile`] lays it out.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn scan_in_shared<S: ScanOp, const U: usize, const LOOK: bool>(
    args: TileArgs<S>,
    lift: &impl Fn(usize, S::Item) -> S::Acc,
    shared: (
        &SharedArray<u32, 1>,
        &SharedArray<S::Acc, MAX_WARPS>,
        &SharedArray<S::Acc, 1>,
    ),
    tile: usize,
    buf: *mut Unit,
    buf_address: u32,
    direct: bool,
) {
    let (_input, output, n, status, _counter, epoch, exclusive, init) = args;
    let (_ticket, warp_totals, tile_prefix) = shared;
    let size = size_of::<S::Item>();
    let per_unit = 16 / size;
    let items = U * per_unit;
    let tid = thread_idx().x as usize;
    let lane = (tid % 32) as u32;
    let warp = tid / 32;
    let threads = block_dim().x as usize;
    let warps = threads / 32;
    let tile_items = threads * items;
    let base = tile * tile_items;
    let full = base + tile_items <= n;
    let buf_items = buf.cast::<S::Item>();
    let slot = |e: usize| swizzle::<U>(e / per_unit) * per_unit + e % per_unit;
    // SAFETY: as the caller's; shared unit indices are below `threads * U`.
    unsafe {
        // Pass 1: this thread's elements `tid * items ..`, combined in order.
        let first = base + tid * items;
        let mut total = S::IDENTITY;
        for i in 0..U {
            let w = load_shared_v4_u32(buf_address + 16 * swizzle::<U>(tid * U + i) as u32);
            let elements = (&raw const w).cast::<S::Item>();
            unroll16!(j < per_unit => {
                let index = first + i * per_unit + j;
                if full || index < n {
                    total = S::combine(total, lift(index, elements.add(j).read()));
                }
            });
        }

        // The block's scan of the threads' totals: lanes (shuffles), then warps (shared).
        let scanned = super::warp_inclusive::<S>(total, lane);
        let up = shfl_up_sync(FULL_MASK, scanned, 1);
        let lane_prefix = if lane == 0 { S::IDENTITY } else { up };
        if lane == 31 {
            warp_totals.write(warp, scanned);
        }
        syncthreads();
        if warp == 0 {
            let prefix = if LOOK {
                block_look_back::<S>(warp_totals, warps, status, tile, epoch, init, lane).0
            } else {
                init
            };
            if lane == 0 {
                tile_prefix.write(0, prefix);
            }
        }
        syncthreads();
        let mut running = tile_prefix.read(0);
        for w in 0..warp {
            running = S::combine(running, warp_totals.read(w));
        }
        running = S::combine(running, lane_prefix);

        // Pass 2: the outputs, in place.
        for i in 0..U {
            let p = buf_address + 16 * swizzle::<U>(tid * U + i) as u32;
            let mut w = load_shared_v4_u32(p);
            let elements = (&raw mut w).cast::<S::Item>();
            unroll16!(j < per_unit => {
                let index = first + i * per_unit + j;
                if full || index < n {
                    let next = S::combine(running, lift(index, elements.add(j).read()));
                    elements
                        .add(j)
                        .write(S::store(if exclusive { running } else { next }));
                    running = next;
                }
            });
            store_shared_v4_u32(p, w);
        }
        let _ = running;
        syncthreads();

        // Shared to global, striped.
        if full && direct {
            let dst = output.add(base).cast::<u8>();
            for k in 0..U {
                let u = k * threads + tid;
                let w = load_shared_v4_u32(buf_address + 16 * swizzle::<U>(u) as u32);
                store_global_v4_u32(dst.add(16 * u).cast::<u32>(), w);
            }
        } else {
            for k in 0..items {
                let e = k * threads + tid;
                if base + e < n {
                    *output.add(base + e) = buf_items.add(slot(e)).read();
                }
            }
        }
    }
}

/// Loads tile `tile` into `buf` element by element (a partial tile, or a view off 16 bytes).
///
/// # Safety
/// As [`scan_in_shared`].
#[inline(always)]
unsafe fn load_tile_scalar<S: ScanOp, const U: usize>(
    input: *const S::Item,
    n: usize,
    tile: usize,
    buf: *mut Unit,
) {
    let per_unit = 16 / size_of::<S::Item>();
    let items = U * per_unit;
    let tid = thread_idx().x as usize;
    let threads = block_dim().x as usize;
    let base = tile * threads * items;
    let buf_items = buf.cast::<S::Item>();
    // SAFETY: guarded by `< n`; shared indices below `threads * U`.
    unsafe {
        for k in 0..items {
            let e = k * threads + tid;
            if base + e < n {
                let slot = swizzle::<U>(e / per_unit) * per_unit + e % per_unit;
                buf_items.add(slot).write(*input.add(base + e));
            }
        }
    }
}

/// One tile of the look-back scan staged in shared memory (see the module docs), each thread
/// scanning `U` 16-byte units (`U * 16 / size_of::<S::Item>() == lookback_items`).
///
/// # Safety
/// As [`lookback`](super::lookback::lookback); the launch's dynamic shared memory holds
/// [`staged_shared_bytes`] bytes.
#[inline(always)]
pub(crate) unsafe fn staged_tile<S: ScanOp, const U: usize, const LOOK: bool>(
    args: TileArgs<S>,
    lift: impl Fn(usize, S::Item) -> S::Acc,
    shared: (
        &SharedArray<u32, 1>,
        &SharedArray<S::Acc, MAX_WARPS>,
        &SharedArray<S::Acc, 1>,
    ),
) {
    let (input, output, n, _status, counter, ..) = args;
    let items = U * 16 / size_of::<S::Item>();
    let tid = thread_idx().x as usize;
    let threads = block_dim().x as usize;
    let smem = gpu_std::shared::dynamic_shared_mem::<Unit>();
    // SAFETY: the caller's contract.
    unsafe {
        let tile = take_ticket(counter, shared.0);
        let base = tile * threads * items;
        let full = base + threads * items <= n;
        let direct = ((input as usize | output as usize) & 15) == 0;
        let buf_address = DynamicShared::<Unit>::get().shared_address();
        if full && direct {
            copy_tile::<U>(input.add(base).cast(), buf_address, threads, tid);
            copy_async_wait_all();
        } else {
            load_tile_scalar::<S, U>(input, n, tile, smem);
        }
        syncthreads();
        scan_in_shared::<S, U, LOOK>(args, &lift, shared, tile, smem, buf_address, direct);
    }
}

/// A microbenchmark of the scan's tables, not a scan to call: [`scan_lookback`]'s tile with
/// every tile's prefix taken as `init` instead of looked back for (each tile is scanned on its
/// own, so every tile after the first is wrong). Its time less the scan's is what the look-back
/// costs: the wait of each tile for its predecessors' aggregates.
///
/// Launch: as [`scan_lookback`]. Entries `scan_no_look_back_sum_i32`, `_sum_f32`, `_max_f32`.
///
/// # Safety
/// As [`scan_lookback`] (`status` is not read or written).
///
/// [`scan_lookback`]: super::lookback::scan_lookback_i32
#[kernel(launch_bounds(256, 6), instantiate(S = Sum<i32>, Sum<f32>, Max<f32>))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn scan_no_look_back<S: ScanOp>(
    input: *const S::Item,
    output: *mut S::Item,
    n: usize,
    status: *mut u64,
    counter: *mut u32,
    epoch: u32,
    exclusive: u32,
    init: S::Acc,
) {
    let ticket = static_shared!(s_scan_no_look_back_ticket: [u32; 1]);
    let warp_totals = static_shared!(s_scan_no_look_back_warps: [S::Acc; MAX_WARPS]);
    let tile_prefix = static_shared!(s_scan_no_look_back_prefix: [S::Acc; 1]);
    let args = (
        input,
        output,
        n,
        status,
        counter,
        epoch,
        exclusive != 0,
        init,
    );
    let shared = (&ticket, &warp_totals, &tile_prefix);
    // SAFETY: forwarded to the caller's contract.
    unsafe {
        match size_of::<S::Item>() {
            1 => staged_tile::<S, 1, false>(args, |_, x| S::lift(x), shared),
            2 => staged_tile::<S, 4, false>(args, |_, x| S::lift(x), shared),
            4 => staged_tile::<S, 8, false>(args, |_, x| S::lift(x), shared),
            _ => staged_tile::<S, 4, false>(args, |_, x| S::lift(x), shared),
        }
    }
}
