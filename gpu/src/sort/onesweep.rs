//! The one-sweep LSD radix sort (Adinets and Merrill, "Onesweep: A Faster Least Significant
//! Digit Radix Sort for GPUs", 2022; CUB's `DeviceRadixSort` since 1.15): the sort a user
//! should call: per 8-bit digit, one read and one write of every key (and value), plus one
//! read of the keys up front for the digit counts of every pass.
//!
//! **`sort_histogram`** ([`sort_histogram_u32`] and the other key widths) reads the keys once and counts, for every pass at once, how many
//! keys have each digit value: one sub-histogram of 256 bins per pass in shared memory (one
//! `red.shared.add` per key and pass), added to the global counts with one atomic per nonzero
//! bin and block.
//!
//! **`sort_onesweep`** ([`sort_onesweep_u32_v32`] and the other key and value widths), one
//! launch per pass, one tile of [`ONESWEEP_TILE`] keys per block of [`ONESWEEP_BLOCK`] threads,
//! tiles handed out in the order blocks start (an atomic ticket):
//! 1. *Load*: each warp loads its `32 * ONESWEEP_ITEMS` consecutive keys, 32 at a time (one
//!    coalesced 128-byte load of 4-byte keys per step). Only the keys' digits stay in
//!    registers; the keys are read again (from L1) when they are placed.
//! 2. *Rank* (the warp-level multisplit of CUB's `BlockRadixRankMatch`): for each of its keys in
//!    turn, a lane finds the lanes with the same digit with one ballot per digit bit
//!    ([`match_bits_sync`]: with `match.any.sync` the whole sort took 1.46x as long, r10); the
//!    lowest of them adds their number to the warp's counter of that digit with one shared
//!    atomic that returns the old count, and a shuffle hands it to the others: each key's rank
//!    among the warp's keys of its digit, in input order. The keys' atomics do not wait for
//!    each other, so their rounds overlap.
//! 3. *Count*: thread `d < 256` adds the warps' counters of digit `d`, publishes the tile's
//!    count of `d` in its status word (tile 0 publishes the digit's global start from the
//!    histogram plus its count), and an exclusive scan over the digits gives where each digit's
//!    run, and each warp's part of it, starts in the tile.
//! 4. *Place*: every key goes to its place in the tile, sorted by digit, in shared memory.
//! 5. *Look back*, while the other warps still place their keys: thread `d` reads the status
//!    words of digit `d` of the tiles before it, eight at a time, nearest first, adding their
//!    counts until one has published its inclusive prefix, and publishes its own.
//! 6. *Scatter*: the block writes the tile out in order, each key to its digit's global start
//!    plus its place in the digit's run: consecutive threads write consecutive addresses within
//!    a run. Values follow their keys through the same shared memory.
//!
//! The sort is stable: within a tile the ranks follow the input order (warp, then key, then
//! lane, which is the order of the warp-striped loads), and tiles take their places in tile
//! order.

use super::{
    HISTOGRAM_UNROLL, ONESWEEP_BLOCK, ONESWEEP_ITEMS, ONESWEEP_TILE, Pair, RADIX, RADIX_BITS,
    RadixBits, STATUS_AGGREGATE, STATUS_PREFIX, STATUS_VALUE, SortPair, ValueBits,
};
use crate::scan::lookback::take_ticket;
use gpu_std::{
    FULL_MASK, SharedArray, atomic_shared_add, ballot_sync, block_dim, block_idx, grid_dim, kernel,
    lanemask_lt, match_bits_sync, red_global_add, red_shared_add, shfl_idx_sync, shfl_up_sync,
    static_shared, syncthreads, thread_idx, unroll,
};

/// Status words each thread of `sort_onesweep`'s look-back reads at once.
const LOOK_BACK_WINDOW: usize = 8;
/// Warps per block of `sort_onesweep`.
const WARPS: usize = ONESWEEP_BLOCK as usize / 32;
/// The most passes (64-bit keys).
const MAX_PASSES: usize = 8;

/// The digit counts of every pass: `counts[p * 256 + d] += #{i < n : digit_p(key i) == d}`,
/// where pass `p`'s digit is the `mask`-wide field at bit `begin_bit + 8 p` of the key's
/// ordered pattern ([`RadixBits::ordered`] with `kind` and `flip`).
///
/// Launch: blocks of [`HISTOGRAM_BLOCK`](super::HISTOGRAM_BLOCK) threads (any count), any
/// grid (the host launches one wave, fewer blocks for short inputs); 8 KiB of static shared
/// memory.
///
/// Parameters: `passes` at most 8, `end_bit <= B::BITS`; the last pass's digit is
/// `end_bit - (begin_bit + 8 (passes - 1))` bits wide.
///
/// # Safety
/// `keys` is valid for `n` elements; `counts` for `passes * 256` `u32`, added to (the host
/// zeroes them and refuses `n` past [`MAX_SORT_LEN`](super::MAX_SORT_LEN)).
#[kernel(launch_bounds(256, 4), instantiate(B = u8, u16, u32, u64))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sort_histogram<B: RadixBits>(
    keys: *const B,
    n: usize,
    kind: u32,
    flip: B,
    begin_bit: u32,
    end_bit: u32,
    passes: u32,
    counts: *mut u32,
) {
    let hist = static_shared!(s_sort_histogram: [u32; MAX_PASSES * RADIX]);
    let passes = (passes as usize).min(MAX_PASSES);
    let tid = thread_idx().x as usize;
    let threads = block_dim().x as usize;
    // SAFETY: `i < passes * 256 <= 2048` indexes `hist`; every key read is `< n`; every count
    // written is `< passes * 256`.
    unsafe {
        let mut i = tid;
        while i < passes * RADIX {
            hist.write(i, 0);
            i += threads;
        }
        syncthreads();
        let base = hist.shared_address();
        let count = |key: B| {
            let o = key.ordered(kind, flip);
            let mut shift = begin_bit;
            for p in 0..passes {
                let width = (end_bit - shift).min(super::RADIX_BITS);
                let d = o.digit(shift, (1 << width) - 1);
                red_shared_add(base + 4 * (p * RADIX) as u32 + 4 * d, 1u32);
                shift += super::RADIX_BITS;
            }
        };
        let stride = threads * grid_dim().x as usize;
        let mut i = block_idx().x as usize * threads + tid;
        while i + (HISTOGRAM_UNROLL - 1) * stride < n {
            let mut k = [B::ZERO; HISTOGRAM_UNROLL];
            unroll!(u < HISTOGRAM_UNROLL => {
                k[u] = *keys.add(i + u * stride);
            });
            unroll!(u < HISTOGRAM_UNROLL => {
                count(k[u]);
            });
            i += HISTOGRAM_UNROLL * stride;
        }
        while i < n {
            count(*keys.add(i));
            i += stride;
        }
        syncthreads();
        let mut i = tid;
        while i < passes * RADIX {
            let c = hist.read(i);
            if c != 0 {
                red_global_add(counts.add(i), c);
            }
            i += threads;
        }
    }
}

/// The inclusive sum of `value` over the lanes up to this one.
#[inline(always)]
fn warp_inclusive_sum(mut value: u32, lane: u32) -> u32 {
    let mut delta = 1;
    while delta < 32 {
        let up = shfl_up_sync(FULL_MASK, value, delta);
        if lane >= delta {
            value += up;
        }
        delta *= 2;
    }
    value
}

/// The exclusive sum of `value` over the threads of the block before this one (every thread
/// of a block of [`ONESWEEP_BLOCK`] must call it).
///
/// # Safety
/// `totals` is this block's shared array, not in use by another call between the barriers.
#[inline(always)]
pub(super) unsafe fn block_exclusive_sum(
    value: u32,
    tid: usize,
    totals: &SharedArray<u32, WARPS>,
) -> u32 {
    let lane = tid as u32 & 31;
    let warp = tid / 32;
    let inclusive = warp_inclusive_sum(value, lane);
    // SAFETY: `warp < WARPS` and `lane < WARPS` index `totals`.
    unsafe {
        if lane == 31 {
            totals.write_unchecked(warp, inclusive);
        }
        syncthreads();
        let t = if (lane as usize) < WARPS {
            totals.read_unchecked(lane as usize)
        } else {
            0
        };
        let scanned = warp_inclusive_sum(t, lane);
        let before = shfl_idx_sync(FULL_MASK, scanned, (warp as u32).wrapping_sub(1) & 31);
        syncthreads();
        let before = if warp == 0 { 0 } else { before };
        before + inclusive - value
    }
}

/// One pass of the one-sweep radix sort (see the [module docs](self)): the keys of
/// `keys_in` stably sorted by their digit at bit `shift` (`mask` its width's mask) of the
/// ordered pattern ([`RadixBits::ordered`] with `kind` and `flip`) into `keys_out`, and their
/// values with them into `values_out` unless it is null: the values of `values_in`, or where
/// `values_in` is null each key's index in `keys_in` (an argsort's first pass).
///
/// Launch: blocks of [`ONESWEEP_BLOCK`] threads exactly, one block per tile of
/// [`ONESWEEP_TILE`] keys (`ceil(n / ONESWEEP_TILE)`, at least 1); about 10 KiB of static
/// shared memory and [`onesweep_shared_bytes`](super::onesweep_shared_bytes) of dynamic (a tile
/// of keys or values, the larger).
///
/// Parameters: `digit_counts` holds this pass's 256 counts (from `sort_histogram`);
/// `status` 256 words per tile, all 0; `counter` a `u32` that is 0 (it is 0 again when the
/// kernel ends).
///
/// # Safety
/// `keys_in` and `keys_out` are valid for `n` keys and do not overlap; so are `values_in` and
/// `values_out` where they are not null (`values_in` is read only if `values_out` is not
/// null); `n <= MAX_SORT_LEN`; `digit_counts` are the counts
/// of this digit over exactly these `n` keys; `status` holds `256 * gridDim.x` zeroed words and
/// `counter` a zero word that no concurrent launch uses; the grid is `ceil(n / ONESWEEP_TILE)`
/// blocks of `ONESWEEP_BLOCK` threads with
/// `onesweep_shared_bytes(size_of::<P::Bits>(), size_of::<P::Value>())` bytes of dynamic shared
/// memory (or the keys' alone when `values_out` is null).
#[kernel(launch_bounds(256, 3), instantiate(P =
    Pair<u8, u32> as u8_v32, Pair<u16, u32> as u16_v32, Pair<u32, u32> as u32_v32,
    Pair<u64, u32> as u64_v32, Pair<u8, u64> as u8_v64, Pair<u16, u64> as u16_v64,
    Pair<u32, u64> as u32_v64, Pair<u64, u64> as u64_v64,
))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sort_onesweep<P: SortPair>(
    keys_in: *const P::Bits,
    keys_out: *mut P::Bits,
    values_in: *const P::Value,
    values_out: *mut P::Value,
    n: usize,
    kind: u32,
    flip: P::Bits,
    shift: u32,
    mask: u32,
    digit_counts: *const u32,
    status: *mut u32,
    counter: *mut u32,
) {
    let ticket = static_shared!(s_sort_ticket: [u32; 1]);
    let shared = shared_arrays();
    let pass = Pass::<P> {
        keys_in,
        keys_out,
        values_in,
        values_out,
        n,
        kind,
        flip,
        shift,
        mask,
    };
    // SAFETY: the caller's contract; `shared` holds this block's arrays.
    unsafe {
        let tile = take_ticket(counter, &ticket);
        let starts = LookBack {
            digit_counts,
            status,
            tile,
            shared: &shared,
        };
        let base = tile * ONESWEEP_TILE;
        // Every tile but the last is whole: its keys need no bounds checks.
        if n - base >= ONESWEEP_TILE {
            onesweep_tile::<P, true, _>(&pass, &shared, &starts, base);
        } else {
            onesweep_tile::<P, false, _>(&pass, &shared, &starts, base);
        }
    }
}

/// The parameters of one pass over one run of keys: `sort_onesweep`'s launch, or one pass of
/// a segment of `sort_segmented`.
pub(super) struct Pass<P: SortPair> {
    pub(super) keys_in: *const P::Bits,
    pub(super) keys_out: *mut P::Bits,
    pub(super) values_in: *const P::Value,
    pub(super) values_out: *mut P::Value,
    /// The end of the keys (of the segment): no key at or past it is read.
    pub(super) n: usize,
    pub(super) kind: u32,
    pub(super) flip: P::Bits,
    pub(super) shift: u32,
    pub(super) mask: u32,
}

/// The block's shared arrays in `sort_onesweep` and `sort_segmented`.
pub(super) struct Shared {
    /// Per warp and digit: the warp's count of the digit, then where the warp's keys of that
    /// digit start in the tile sorted by digit.
    warp_offsets: SharedArray<u32, { WARPS * RADIX }>,
    /// Per digit: its run's global start less its start in the tile.
    offset: SharedArray<u32, RADIX>,
    pub(super) totals: SharedArray<u32, WARPS>,
}

/// The block's [`Shared`] arrays (one declaration, which every kernel that takes them shares).
#[inline(always)]
pub(super) fn shared_arrays() -> Shared {
    Shared {
        warp_offsets: static_shared!(s_sort_warp_offsets: [u32; WARPS * RADIX]),
        offset: static_shared!(s_sort_offset: [u32; RADIX]),
        totals: static_shared!(s_sort_totals: [u32; WARPS]),
    }
}

/// Where the run of each digit of a tile goes in the output: the one-sweep's look-back over
/// the tiles before ([`LookBack`]), or a segment's running places (`sort_segmented`).
pub(super) trait RunStarts {
    /// Called by every thread of the block before the tile's keys load.
    ///
    /// # Safety
    /// Every thread of the block calls it at once; the implementation's own contract.
    unsafe fn before_load(&self, tid: usize);
    /// Thread `d < 256`: the tile holds `count` keys of digit `d`.
    ///
    /// # Safety
    /// Only thread `d` calls it for `d`, once per tile, before [`RunStarts::start`].
    unsafe fn counted(&self, d: usize, count: u32);
    /// Thread `d < 256`: where the tile's run of digit `d` (`count` keys) starts in the output.
    ///
    /// # Safety
    /// As [`RunStarts::counted`], after it.
    unsafe fn start(&self, d: usize, count: u32) -> u32;
}

/// The one-sweep's [`RunStarts`]: tile 0 takes each digit's global start from the histogram's
/// counts, every other tile looks back over the status words of the tiles before it.
struct LookBack<'s> {
    digit_counts: *const u32,
    status: *mut u32,
    tile: usize,
    shared: &'s Shared,
}

impl RunStarts for LookBack<'_> {
    #[inline(always)]
    unsafe fn before_load(&self, tid: usize) {
        // Tile 0: the digits' global starts, scanned before the keys take registers and kept
        // in `offset` until the look-back's place.
        // SAFETY: `tid < 256` indexes the counts and `offset`; every thread calls the scan.
        unsafe {
            if self.tile == 0 {
                let owns_digit = tid < RADIX;
                let total = if owns_digit {
                    *self.digit_counts.add(tid)
                } else {
                    0
                };
                let start = block_exclusive_sum(total, tid, &self.shared.totals);
                if owns_digit {
                    self.shared.offset.write_unchecked(tid, start);
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn counted(&self, d: usize, count: u32) {
        // SAFETY: `tile * 256 + d` indexes `status` (the caller's contract); tile 0's
        // `offset[d]` was written by thread `d` in `before_load`.
        unsafe {
            if self.tile > 0 {
                core::ptr::write_volatile(
                    self.status.add(self.tile * RADIX + d),
                    STATUS_AGGREGATE | count,
                );
            } else {
                let start = self.shared.offset.read_unchecked(d);
                core::ptr::write_volatile(self.status.add(d), STATUS_PREFIX | (start + count));
            }
        }
    }

    #[inline(always)]
    unsafe fn start(&self, d: usize, count: u32) -> u32 {
        // SAFETY: as `counted`; the look-back reads the status words of tiles `< tile`.
        unsafe {
            if self.tile == 0 {
                self.shared.offset.read_unchecked(d)
            } else {
                let before = look_back(self.status, self.tile, d);
                core::ptr::write_volatile(
                    self.status.add(self.tile * RADIX + d),
                    STATUS_PREFIX | (before + count),
                );
                before
            }
        }
    }
}

/// The look-back over digit `d` of the tiles before `tile` (`tile > 0`): the sum of their
/// counts of `d` plus the digit's global start, read [`LOOK_BACK_WINDOW`] status words at a
/// time (independent loads: one round trip per window), nearest first, up to the nearest
/// inclusive prefix; a window is read again from its first word that is not yet published.
///
/// # Safety
/// `status` holds the status words of tiles `0..tile`, each published by its block.
#[inline(always)]
unsafe fn look_back(status: *const u32, tile: usize, d: usize) -> u32 {
    let mut before = 0u32;
    let mut end = tile; // tiles `< end` are still to be read
    // SAFETY: every word read is of a tile `< tile` (`end > j`).
    unsafe {
        'look: loop {
            let mut s = [0u32; LOOK_BACK_WINDOW];
            unroll!(j < LOOK_BACK_WINDOW => {
                if end > j {
                    s[j] = core::ptr::read_volatile(status.add((end - 1 - j) * RADIX + d));
                }
            });
            let mut read = 0;
            unroll!(j < LOOK_BACK_WINDOW => {
                if read == j && end > j && s[j] != 0 {
                    before += s[j] & STATUS_VALUE;
                    read = j + 1;
                    if s[j] & STATUS_PREFIX != 0 {
                        break 'look;
                    }
                }
            });
            end -= read;
        }
    }
    before
}

/// One tile of `sort_onesweep` (see the [module docs](self)), or of a segment's pass of
/// `sort_segmented`: the keys `base..` (up to [`ONESWEEP_TILE`] of them, none at or past
/// `pass.n`) placed by digit, each digit's run at the place `runs` gives it; `FULL`: the tile
/// holds [`ONESWEEP_TILE`] keys.
///
/// # Safety
/// As `sort_onesweep` (or `sort_segmented`); every thread of the block calls it at once;
/// `shared` holds this block's arrays; `base < pass.n`.
#[inline(always)]
pub(super) unsafe fn onesweep_tile<P: SortPair, const FULL: bool, S: RunStarts>(
    pass: &Pass<P>,
    shared: &Shared,
    runs: &S,
    base: usize,
) {
    let Pass {
        keys_in,
        keys_out,
        values_in,
        values_out,
        n,
        kind,
        flip,
        shift,
        mask,
    } = *pass;
    let Shared {
        warp_offsets,
        offset,
        totals,
    } = shared;
    // The tile in digit order: keys, then values (dynamic, a tile of the larger of the two).
    let exchange = gpu_std::shared::dynamic_shared_mem::<u64>();
    let tid = thread_idx().x as usize;
    let lane = tid as u32 & 31;
    let warp = tid / 32;
    // Threads `d < 256` each own digit `d` for the counts and the look-back.
    let d = tid;
    let owns_digit = d < RADIX;
    let digit_of = |key: P::Bits| key.ordered(kind, flip).digit(shift, mask);
    // SAFETY: every shared index is in range (`w * 256 + d < WARPS * 256`, `d < 256`, a place
    // `< ONESWEEP_TILE` in the dynamic buffer of a tile of keys or values); every global index
    // read or written is `< n` (keys, values) or `< 256 * gridDim.x` (status); the rest is the
    // caller's contract.
    unsafe {
        // Positions within the tile are `u32`: fewer registers than `usize`.
        let tile_len = (n - base).min(ONESWEEP_TILE) as u32;
        let tile_keys = keys_in.add(base);
        unroll!(j < RADIX / 32 => {
            warp_offsets.write_unchecked(j * ONESWEEP_BLOCK as usize + tid, 0);
        });
        runs.before_load(tid);
        // 1. Load: warp `w` holds keys `base + 32 * ITEMS * w + 32 i + lane`. Only their digits
        // stay in registers (the low 8 bits of `place`; the rank goes above them): the keys
        // are read again, from L1, when they are placed.
        let first = (warp * 32 * ONESWEEP_ITEMS) as u32 + lane;
        let mut place = [0u32; ONESWEEP_ITEMS];
        unroll!(i < ONESWEEP_ITEMS => {
            let at = first + 32 * i as u32;
            if FULL || at < tile_len {
                place[i] = digit_of(*tile_keys.add(at as usize));
            }
        });
        syncthreads();
        // 2. Rank within the warp: the lanes holding the same digit are found with one ballot
        // per digit bit; the lowest of them adds their number to the warp's counter of the
        // digit and hands the old count to the others. Atomics that do not wait for each other:
        // the keys' rounds overlap.
        let counters = warp_offsets.shared_address() + (4 * warp * RADIX) as u32;
        let below = lanemask_lt();
        unroll!(i < ONESWEEP_ITEMS => {
            let valid = FULL || first + 32 * (i as u32) < tile_len;
            let digit = place[i];
            let mut peers = match_bits_sync::<RADIX_BITS>(digit);
            if !FULL {
                peers &= ballot_sync(FULL_MASK, valid);
            }
            let ahead = peers & below;
            let mut old = 0;
            if valid && ahead == 0 {
                old = atomic_shared_add(counters + 4 * digit, peers.count_ones());
            }
            let rank = shfl_idx_sync(FULL_MASK, old, peers.trailing_zeros() & 31)
                + ahead.count_ones();
            place[i] = rank << 8 | digit;
        });
        syncthreads();
        // 3. Thread `d`: the tile's count of digit `d`, published at once for the tiles after
        // this one, and where each warp's keys of `d` start among the tile's.
        let mut count = 0u32;
        if owns_digit {
            unroll!(w < WARPS => {
                let c = warp_offsets.read_unchecked(w * RADIX + d);
                warp_offsets.write_unchecked(w * RADIX + d, count);
                count += c;
            });
            runs.counted(d, count);
        }
        let tile_start = block_exclusive_sum(count, tid, totals);
        if owns_digit {
            unroll!(w < WARPS => {
                let start = warp_offsets.read_unchecked(w * RADIX + d);
                warp_offsets.write_unchecked(w * RADIX + d, tile_start + start);
            });
        }
        syncthreads();
        // 4. Every key to its place in the tile sorted by digit.
        let key_slots = exchange as *mut P::Bits;
        let starts = warp_offsets.as_ptr().add(warp * RADIX);
        unroll!(i < ONESWEEP_ITEMS => {
            let at = first + 32 * i as u32;
            if FULL || at < tile_len {
                place[i] = (place[i] >> 8) + *starts.add(place[i] as usize & 0xff);
                *key_slots.add(place[i] as usize) = *tile_keys.add(at as usize);
            }
        });
        // 5. The look-back, while the other warps still place their keys.
        if owns_digit {
            let global_start = runs.start(d, count);
            offset.write_unchecked(d, global_start.wrapping_sub(tile_start));
        }
        syncthreads();
        // 6. Write the tile out in order: each key to its run's global start plus its place.
        // The digits of this thread's slots, four to a word, for the values.
        let mut slot_digits = [0u32; ONESWEEP_ITEMS.div_ceil(4)];
        unroll!(j < ONESWEEP_ITEMS => {
            let at = (j * ONESWEEP_BLOCK as usize + tid) as u32;
            if FULL || at < tile_len {
                let k = *key_slots.add(at as usize);
                let digit = digit_of(k);
                slot_digits[j / 4] |= digit << (8 * (j % 4));
                *keys_out.add(offset.read_unchecked(digit as usize).wrapping_add(at) as usize) = k;
            }
        });
        if !values_out.is_null() {
            // 7. The values the same way: loaded in input order, placed by their keys' places.
            let value_slots = exchange as *mut P::Value;
            syncthreads();
            unroll!(i < ONESWEEP_ITEMS => {
                let at = first + 32 * i as u32;
                if FULL || at < tile_len {
                    *value_slots.add(place[i] as usize) = if values_in.is_null() {
                        P::Value::from_index(base + at as usize)
                    } else {
                        *values_in.add(base + at as usize)
                    };
                }
            });
            syncthreads();
            unroll!(j < ONESWEEP_ITEMS => {
                let at = (j * ONESWEEP_BLOCK as usize + tid) as u32;
                if FULL || at < tile_len {
                    let digit = (slot_digits[j / 4] >> (8 * (j % 4))) & 0xff;
                    let to = offset.read_unchecked(digit as usize).wrapping_add(at);
                    *values_out.add(to as usize) = *value_slots.add(at as usize);
                }
            });
        }
    }
}
