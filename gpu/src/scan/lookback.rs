//! The single-pass scan with decoupled look-back (Merrill and Garland, "Single-pass Parallel
//! Prefix Scan with Decoupled Look-back", NVIDIA Research, 2016; CUB's `DeviceScan`): the scan
//! a user should call, one read and one write per element.
//!
//! Each block takes the next tile of `blockDim.x *` [`lookback_items`](super::lookback_items)
//! elements (32 per thread, 16 of 1-byte and 8 of 8-byte ones; an atomic ticket, so tiles are handed out in the
//! order blocks start) and stages it in shared memory ([`staged`](super::staged): asynchronous
//! 16-byte copies, each warp's one coalesced 512-byte run, that hold no registers in flight).
//! Each thread combines its own contiguous run of elements, a warp scan and the warp totals
//! give the block's scan of those, and the tile's aggregate is published in its status word.
//! Warp 0 then looks back: each lane reads the status word of one of the 32 tiles before it;
//! if the nearest tile that has published its inclusive prefix is among them, the sum of the
//! aggregates up to it and its prefix is this tile's exclusive prefix; if none has, the warp
//! adds the 32 aggregates and moves its window 32 tiles further back. It publishes the
//! inclusive prefix, every thread writes its outputs over its elements in shared memory, and
//! the block stores the tile with coalesced 16-byte stores. A tile therefore never waits for
//! its predecessors to finish, only for them to publish their aggregates, which they do as soon
//! as their own elements are loaded and combined: the chain of dependent global-memory round
//! trips of the stream-based scan becomes one look-back of a few status words per tile.

use super::staged::staged_tile;
use super::{
    LOOKBACK_VECTORS, LOOKBACK_WARP_ITEMS, STATUS_AGGREGATE, STATUS_PREFIX, ScanOp, pack_status,
    warp_inclusive,
};
use crate::reduce::ops::{F16, Max, Min, Product, Sum};
use core::sync::atomic::Ordering;
use gpu_std::atomic::mid::{atomic_load_64_device, atomic_store_64_device};
use gpu_std::{
    FULL_MASK, Pod, SharedArray, atomic_add, ballot_sync, block_dim, grid_dim, kernel,
    load_global_nc_v4_u32, shfl_down_sync, shfl_idx_sync, static_shared, store_global_v4_u32,
    syncthreads, thread_idx,
};

/// Slots for warp totals: up to 32 warps (1024 threads).
pub(crate) const MAX_WARPS: usize = 32;

/// The look-back scan of `n` elements of `S::Item` (see the module docs), each lifted into the
/// accumulator by `lift(index, element)`: one tile per block, staged in shared memory
/// ([`staged_tile`]) with [`lookback_items`](super::lookback_items) elements per thread (eight
/// 16-byte units of 4- and 8-byte elements, four of 2-byte ones, one of 1-byte ones).
///
/// # Safety
/// See [`scan_lookback_i32`]; `ticket`, `warp_totals` and `tile_prefix` are this block's shared
/// arrays; the launch's dynamic shared memory holds
/// [`staged_shared_bytes`](super::staged::staged_shared_bytes)`(blockDim.x, size_of::<S::Item>())`
/// bytes.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn lookback<S: ScanOp>(
    input: *const S::Item,
    output: *mut S::Item,
    n: usize,
    status: *mut u64,
    counter: *mut u32,
    epoch: u32,
    exclusive: bool,
    init: S::Acc,
    lift: impl Fn(usize, S::Item) -> S::Acc,
    shared: (
        &SharedArray<u32, 1>,
        &SharedArray<S::Acc, MAX_WARPS>,
        &SharedArray<S::Acc, 1>,
    ),
) {
    let args = (input, output, n, status, counter, epoch, exclusive, init);
    // SAFETY: forwarded to the caller's contract; each arm's units hold `lookback_items`
    // elements of its size per thread.
    unsafe {
        match size_of::<S::Item>() {
            1 => staged_tile::<S, 1, true>(args, lift, shared),
            2 => staged_tile::<S, 4, true>(args, lift, shared),
            4 => staged_tile::<S, 8, true>(args, lift, shared),
            _ => staged_tile::<S, 4, true>(args, lift, shared),
        }
    }
}

/// The arguments every tile of a look-back launch shares: `input`, `output`, `n`, `status`,
/// `counter`, `epoch`, `exclusive`, `init`.
pub(crate) type TileArgs<S> = (
    *const <S as ScanOp>::Item,
    *mut <S as ScanOp>::Item,
    usize,
    *mut u64,
    *mut u32,
    u32,
    bool,
    <S as ScanOp>::Acc,
);

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
    warp_totals: &SharedArray<S::Acc, MAX_WARPS>,
    warps: usize,
    status: *mut u64,
    tile: usize,
    epoch: u32,
    init: S::Acc,
    lane: u32,
) -> (S::Acc, S::Acc) {
    // SAFETY: `lane < warps <= MAX_WARPS` indexes written slots; the rest is the caller's.
    unsafe {
        let mine = if (lane as usize) < warps {
            warp_totals.read(lane as usize)
        } else {
            S::IDENTITY
        };
        let aggregate = shfl_idx_sync(FULL_MASK, warp_inclusive::<S>(mine, lane), 31);
        (
            look_back::<S>(status, tile, epoch, aggregate, init, lane),
            aggregate,
        )
    }
}

/// The status words of each tile: one (the value packed beside the status, see
/// [`pack_status`]) for accumulators of up to 4 bytes; for larger ones the status, then the
/// aggregate and the inclusive prefix, each in `ceil(acc_bytes / 8)` words of its own (CUB's tile
/// state for values that do not fit beside their status: the value is written first, then the
/// status with release semantics, and a reader that acquires the status reads the value it
/// names, which its writer never overwrites in that launch).
pub const fn status_words(acc_bytes: usize) -> usize {
    if acc_bytes <= 4 {
        1
    } else {
        1 + 2 * acc_bytes.div_ceil(8)
    }
}

/// The decoupled look-back of `tile`, run by one whole warp (every lane must call it): publishes
/// the tile's `aggregate` (or, for tile 0, `init ⊕ aggregate` as its inclusive prefix at once),
/// then reads the status of the 32 tiles before it at a time, each lane one, nearest first: if
/// the nearest tile that has published its inclusive prefix is in the window, the aggregates up
/// to it and its prefix make this tile's exclusive prefix; if none is, the 32 aggregates are
/// combined and the window moves 32 tiles back; a tile of the window that has published nothing
/// yet (its status carries an older epoch) is read again. Publishes the tile's inclusive prefix
/// and returns its exclusive prefix (in every lane; `init` for tile 0).
///
/// # Safety
/// `status` holds [`status_words`] words for every tile up to `tile`, 8-byte aligned, written
/// only by this launch's look-backs with this `epoch` (or carrying another epoch).
#[inline(always)]
pub(crate) unsafe fn look_back<S: ScanOp>(
    status: *mut u64,
    tile: usize,
    epoch: u32,
    aggregate: S::Acc,
    init: S::Acc,
    lane: u32,
) -> S::Acc {
    let mut prefix = S::IDENTITY;
    // SAFETY: every word read or written belongs to a tile `t <= tile`.
    unsafe {
        if tile == 0 {
            if lane == 0 {
                publish::<S>(status, 0, STATUS_PREFIX, epoch, S::combine(init, aggregate));
            }
            return init;
        }
        if lane == 0 {
            publish::<S>(status, tile, STATUS_AGGREGATE, epoch, aggregate);
        }
        // Lane l reads the status of tile `end - 1 - l`.
        // Lane l reads the status of tile `end - 1 - l`.
        let mut end = tile;
        loop {
            let (ready, is_prefix, value) = if end > lane as usize {
                read::<S>(status, end - 1 - lane as usize, epoch)
            } else {
                // Before tile 0: nothing to add (tile 0 is always a prefix, so the nearest
                // prefix is found before these lanes count).
                (true, true, S::IDENTITY)
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
            // The window's tiles in order: lane `stop` (the farthest counted) first.
            let counted_value = if lane <= stop { value } else { S::IDENTITY };
            let window = shfl_idx_sync(FULL_MASK, reduce_from_above::<S>(counted_value), 0);
            prefix = S::combine(window, prefix);
            if stop < 32 {
                break;
            }
            end -= 32;
        }
        if lane == 0 {
            publish::<S>(
                status,
                tile,
                STATUS_PREFIX,
                epoch,
                S::combine(prefix, aggregate),
            );
        }
    }
    prefix
}

/// Lane 0 returns `v_31 ⊕ ... ⊕ v_1 ⊕ v_0`: the lanes' values in decreasing lane order (a
/// look-back window holds its nearest tile in lane 0), by a shuffle-down tree whose steps keep
/// that order, so the operator need not be commutative. Every lane of the warp must call it.
#[inline(always)]
fn reduce_from_above<S: ScanOp>(mut v: S::Acc) -> S::Acc {
    let mut delta = 1;
    while delta < 32 {
        v = S::combine(shfl_down_sync(FULL_MASK, v, delta), v);
        delta *= 2;
    }
    v
}

/// The bits of an accumulator of 4 bytes, zero-extended.
#[inline(always)]
fn to_bits<A: Pod>(value: A) -> u32 {
    let mut bits = 0u32;
    // SAFETY: `A: Pod` of 4 bytes (this is only called for those) is initialised bytes.
    unsafe {
        core::ptr::copy_nonoverlapping(
            (&raw const value).cast::<u8>(),
            (&raw mut bits).cast::<u8>(),
            size_of::<A>().min(4),
        )
    };
    bits
}

/// The accumulator of 4 bytes whose bits are `bits`.
#[inline(always)]
fn from_bits<A: Pod>(bits: u32) -> A {
    let mut value = core::mem::MaybeUninit::<A>::uninit();
    // SAFETY: `A: Pod` of 4 bytes: any bits are a value, and all of its bytes are written.
    unsafe {
        core::ptr::copy_nonoverlapping(
            (&raw const bits).cast::<u8>(),
            value.as_mut_ptr().cast::<u8>(),
            size_of::<A>().min(4),
        );
        value.assume_init()
    }
}

/// Publishes `value` with `status` for this launch's `epoch` in tile `tile`'s status words: one
/// relaxed 64-bit store of the packed word for accumulators of up to 4 bytes (see
/// [`pack_status`]); for larger ones, the value's words into the aggregate's or the prefix's
/// slot with relaxed stores, then the status with a release store.
///
/// # Safety
/// `status` holds [`status_words`] valid, 8-byte aligned global words per tile up to `tile`.
#[inline(always)]
unsafe fn publish<S: ScanOp>(status: *mut u64, tile: usize, flag: u64, epoch: u32, value: S::Acc) {
    let size = size_of::<S::Acc>();
    // SAFETY: forwarded to the caller; `value` is `size` initialised bytes (`Pod`), copied into
    // whole zero-padded words.
    unsafe {
        if size <= 4 {
            let word = pack_status(flag, epoch, to_bits(value));
            atomic_store_64_device(status.add(tile), Ordering::Relaxed, word);
        } else {
            let words = size.div_ceil(8);
            let base = status.add(tile * status_words(size));
            let slot = base.add(if flag == STATUS_PREFIX { 1 + words } else { 1 });
            let halves = (&raw const value).cast::<u32>();
            // 32-bit halves of 64-bit words (`Pod` is whole 4-byte words), each index a
            // constant (`words!`), so `value` stays in registers.
            macro_rules! words {
                ($($w:literal)*) => {$(
                    if $w < words {
                        let low = halves.add(2 * $w).read_unaligned() as u64;
                        let high = if 2 * $w + 1 < size / 4 {
                            halves.add(2 * $w + 1).read_unaligned() as u64
                        } else {
                            0
                        };
                        atomic_store_64_device(slot.add($w), Ordering::Relaxed, low | high << 32);
                    }
                )*};
            }
            const {
                assert!(
                    size_of::<S::Acc>() <= 32,
                    "the look-back publishes up to four words"
                )
            };
            words!(0 1 2 3);
            atomic_store_64_device(base, Ordering::Release, pack_status(flag, epoch, 0));
        }
    }
}

/// Tile `tile`'s status for this `epoch`: whether it has published, whether what it published
/// is its inclusive prefix, and the value (the identity when it has not published).
///
/// # Safety
/// As [`publish`].
#[inline(always)]
unsafe fn read<S: ScanOp>(status: *mut u64, tile: usize, epoch: u32) -> (bool, bool, S::Acc) {
    let parse = |word: u64| {
        let flag = (word >> 32) & 3;
        let ready = (word >> 34) as u32 == epoch && flag != 0;
        (ready, ready && flag == STATUS_PREFIX)
    };
    let size = size_of::<S::Acc>();
    // SAFETY: forwarded to the caller; every byte of the value is copied from the words its
    // writer published (`Pod`: any bits are a value).
    unsafe {
        if size <= 4 {
            // Relaxed is enough: the status and the value are one 64-bit word, single-copy
            // atomic, and nothing else of the other tile is read.
            let word = atomic_load_64_device(status.add(tile), Ordering::Relaxed);
            let (ready, is_prefix) = parse(word);
            (ready, is_prefix, from_bits(word as u32))
        } else {
            // Acquire: the value its writer stored before releasing this status is visible.
            let words = size.div_ceil(8);
            let base = status.add(tile * status_words(size));
            let (ready, is_prefix) = parse(atomic_load_64_device(base, Ordering::Acquire));
            let mut value = S::IDENTITY;
            if ready {
                let slot = base.add(if is_prefix { 1 + words } else { 1 });
                let halves = (&raw mut value).cast::<u32>();
                // As in `publish`: constant indices only.
                macro_rules! words {
                    ($($w:literal)*) => {$(
                        if $w < words {
                            let word = atomic_load_64_device(slot.add($w), Ordering::Relaxed);
                            halves.add(2 * $w).write_unaligned(word as u32);
                            if 2 * $w + 1 < size / 4 {
                                halves.add(2 * $w + 1).write_unaligned((word >> 32) as u32);
                            }
                        }
                    )*};
                }
                words!(0 1 2 3);
            }
            (ready, is_prefix, value)
        }
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

/// Inclusive (`exclusive == 0`) or exclusive (`exclusive != 0`) scan of `n` elements with the
/// operator `S`, from the initial value `init` (`output[i] = init ⊕ x[0] ⊕ ... ⊕ x[i]`, or up to
/// `x[i - 1]` when exclusive; `init` is the operator's identity for a plain scan), in one pass
/// with decoupled look-back (see the [module docs](self)).
///
/// Entries: `scan_lookback_i32`, `scan_lookback_u32` and `scan_lookback_f32` are the sums of the
/// 32-bit types (wrapping for the integers, as `wrapping_add`); `scan_lookback_<op>_<type>` the
/// rest of [`ScanOp`]'s table ([`ops`](super::ops)): `sum`, `product`, `min`, `max` of `i8`..
/// `i64`, `u8`..`u64`, `f32`, `f64`, `f16`. Floats combine in an order that depends on the timing
/// of the look-back, so sums and products may differ in the last bits from run to run.
///
/// Launch: blocks of a multiple of 32 threads up to [`SCAN_BLOCK`](super::SCAN_BLOCK) (256:
/// the kernel's registers are capped for six resident blocks of 256 per SM; the host picks 128
/// or 256 with [`scan_block`](super::scan_block)), one block per tile of `blockDim.x *`
/// [`lookback_items`](super::lookback_items) elements (32 per thread, 8 for 8-byte elements; at
/// least 1 when `n > 0`), and
/// [`staged_shared_bytes`](super::staged::staged_shared_bytes)`(blockDim.x, size_of::<S::Item>())`
/// bytes of dynamic shared memory (128 per thread: 32 KiB for 256).
///
/// Parameters: `status` holds [`status_words`] words per tile (`gridDim.x` tiles); `counter` is
/// the tile ticket; `epoch` tells this launch's status words from earlier launches' (1 to
/// [`MAX_EPOCH`](super::MAX_EPOCH)).
///
/// # Safety
/// `input` and `output` are valid for `n` elements, aligned for their type, and either the same
/// address (in place) or not overlapping; `status` holds `status_words(size_of::<S::Acc>()) *
/// gridDim.x` 8-byte aligned words, none of which carries `epoch` (each launch on one workspace
/// passes a new epoch, or the words are zeroed); `counter` points to a `u32` that is 0 and no
/// concurrent launch uses (it is 0 again when the kernel ends).
///
/// Performance: reads and writes each element once, 16 bytes at a time where `input` and
/// `output` are 16-byte aligned; bound by DRAM bandwidth and by each tile's wait for its
/// predecessors' aggregates (see `docs/patterns/scan.md`).
#[kernel(launch_bounds(256, 6), instantiate(S =
    Sum<i32> as i32, Sum<u32> as u32, Sum<f32> as f32,
    Sum<i8>, Sum<i16>, Sum<i64>, Sum<u8>, Sum<u16>, Sum<u64>, Sum<f64>, Sum<F16>,
    Product<i8>, Product<i16>, Product<i32>, Product<i64>, Product<u8>, Product<u16>,
    Product<u32>, Product<u64>, Product<f32>, Product<f64>, Product<F16>,
    Min<i8>, Min<i16>, Min<i32>, Min<i64>, Min<u8>, Min<u16>, Min<u32>, Min<u64>,
    Min<f32>, Min<f64>, Min<F16>,
    Max<i8>, Max<i16>, Max<i32>, Max<i64>, Max<u8>, Max<u16>, Max<u32>, Max<u64>,
    Max<f32>, Max<f64>, Max<F16>,
))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn scan_lookback<S: ScanOp>(
    input: *const S::Item,
    output: *mut S::Item,
    n: usize,
    status: *mut u64,
    counter: *mut u32,
    epoch: u32,
    exclusive: u32,
    init: S::Acc,
) {
    let ticket = static_shared!(s_scan_lookback_ticket: [u32; 1]);
    let warp_totals = static_shared!(s_scan_lookback_warps: [S::Acc; MAX_WARPS]);
    let tile_prefix = static_shared!(s_scan_lookback_prefix: [S::Acc; 1]);
    // SAFETY: forwarded to the caller's contract.
    unsafe {
        lookback::<S>(
            input,
            output,
            n,
            status,
            counter,
            epoch,
            exclusive != 0,
            init,
            |_, x| S::lift(x),
            (&ticket, &warp_totals, &tile_prefix),
        )
    }
}

/// The look-back scan's memory traffic without the scan: each block takes a ticket, loads its
/// tile of `blockDim.x * 32` elements with 16-byte striped loads into registers, waits at a
/// barrier, and stores them unchanged with the same 16-byte stores. Its time is the floor of a
/// tile of that size (one ticket, one barrier and a whole tile between the loads and the
/// stores), which [`scan_lookback_u32`] adds its scan and look-back to, and
/// [`scan_no_look_back_*`](super::staged::scan_no_look_back_sum_i32) its scan alone: a
/// microbenchmark for the scan's tables, not a copy to call.
///
/// Launch: blocks of a multiple of 32 threads, one per tile of
/// [`lookback_tile(blockDim.x)`](super::lookback_tile) elements.
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
        let mut x = [[0u32; 4]; LOOKBACK_VECTORS];
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
