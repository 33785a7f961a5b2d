//! The textbook ladder below the one-sweep sort (*Programming Massively Parallel Processors*,
//! Hwu, Kirk and El Hajj, 4th ed., ch. 13 "Sorting"), on `u32` keys.
//!
//! **First rung** (§13.2-13.3): one bit per pass, each pass a stable split by a scan. A pass
//! over bit `b`:
//! 1. [`sort_ladder_bits`]: `bits[i] = (key[i] >> b) & 1`, one key per thread (a safe kernel).
//! 2. An exclusive scan of `bits` (the library's `scan::exclusive_sum`): `ones_before[i]`, the
//!    keys before `i` whose bit is 1.
//! 3. [`sort_ladder_split`]: the key with bit 0 goes to `i - ones_before[i]` (the keys with bit
//!    0 before it), the key with bit 1 to `zeros + ones_before[i]`, where `zeros = n -
//!    (ones_before[n - 1] + bits[n - 1])`. Both sides keep their input order: the pass is
//!    stable, so after 32 passes the keys are sorted.
//!
//! Traffic per pass: the keys read twice, the bits written once and read by the scan, the scan
//! written once and read once, the keys written once (scattered: a warp's 32 keys go to two
//! runs, so most of its stores still coalesce): about 28 bytes per key per pass, 32 passes,
//! against 9 bytes per key per 8-bit pass of the one-sweep sort ([`super::onesweep`]).
//!
//! **Second rung** (§13.4-13.5): four bits per pass, 8 passes. [`sort_ladder_local`] sorts each
//! tile of 256 keys by the digit in shared memory (four one-bit splits) and counts its digits;
//! an exclusive scan of the counts, digit-major, gives each tile's start of each digit in the
//! output; [`sort_ladder_scatter`] writes each tile's runs there, coalesced. About 17 bytes per
//! key per pass (the keys read and written twice, the counts and their scan).
//!
//! **Third rung**, reduce-then-scan (CUB's design before one-sweep; Merrill and Grimshaw,
//! 2011): [`sort_ladder_upsweep`] only counts each tile's digits; after the scan,
//! [`sort_ladder_downsweep`] reads the tile again, sorts it in shared memory and scatters it.
//! The sorted tile never goes to global memory: about 13 bytes per key per pass.

use gpu_std::{
    DisjointSlice, FULL_MASK, SharedArray, ballot_sync, block_dim, block_idx, grid_dim, kernel,
    lanemask_lt, red_shared_add, static_shared, syncthreads, thread_idx, thread_index,
};

/// Threads per block of both kernels.
pub const LADDER_BLOCK: u32 = 256;

/// `bits[i] = (keys[i] >> shift) & 1` for every `i` the grid covers (below both lengths). A
/// safe kernel: each thread writes only its own element.
///
/// Launch: blocks of [`LADDER_BLOCK`] threads, `ceil(n / LADDER_BLOCK)` blocks.
///
/// Parameters: `keys` and `bits` of `n` elements; `shift < 32`.
///
/// Performance: 8 bytes per key, one coalesced load and store per warp instruction.
#[kernel]
pub fn sort_ladder_bits(keys: &[u32], shift: u32, mut bits: DisjointSlice<u32>) {
    let i = thread_index();
    let k = i.get();
    if k < keys.len()
        && let Some(out) = bits.get_mut(&i)
    {
        *out = (keys[k] >> (shift & 31)) & 1;
    }
}

/// The stable split of one pass: `keys_out[i - ones_before[i]] = keys_in[i]` for a key whose
/// bit `shift` is 0, `keys_out[zeros + ones_before[i]] = keys_in[i]` for a 1, `zeros = n -
/// ones_before[n - 1] - bit(keys_in[n - 1])`.
///
/// Launch: blocks of [`LADDER_BLOCK`] threads, `ceil(n / LADDER_BLOCK)` blocks (threads past
/// `n` do nothing).
///
/// # Safety
/// `keys_in` and `ones_before` are valid for `n >= 1` reads, `keys_out` for `n` writes and
/// does not overlap `keys_in`; `ones_before` is the exclusive prefix sum of bit `shift` of
/// `keys_in` (what [`sort_ladder_bits`] and an exclusive scan make), so the destinations are a
/// permutation of `0..n`.
#[kernel]
pub unsafe fn sort_ladder_split(
    keys_in: *const u32,
    keys_out: *mut u32,
    ones_before: *const u32,
    n: usize,
    shift: u32,
) {
    let i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    if i >= n {
        return;
    }
    let shift = shift & 31;
    // SAFETY: `i < n` and `n - 1` index the `n` keys and scan values; the destination is below
    // `n` (the scan counts the ones before each key, so a 0 lands in `0..zeros` and a 1 in
    // `zeros..n`), and no two keys share it (the contract).
    unsafe {
        let last = n - 1;
        let ones = *ones_before.add(last) + ((*keys_in.add(last) >> shift) & 1);
        let zeros = n - ones as usize;
        let key = *keys_in.add(i);
        let before = *ones_before.add(i) as usize;
        let dst = if (key >> shift) & 1 == 0 {
            i - before
        } else {
            zeros + before
        };
        *keys_out.add(dst) = key;
    }
}

/// Bits per pass of the second rung ([`sort_ladder_local`], [`sort_ladder_scatter`]).
pub const LADDER_DIGIT_BITS: u32 = 4;
/// Digit values per pass of the second rung.
pub const LADDER_DIGITS: usize = 1 << LADDER_DIGIT_BITS;
/// Keys per tile (one per thread of a [`LADDER_BLOCK`]-thread block) of the second rung.
pub const LADDER_TILE: usize = LADDER_BLOCK as usize;
/// Warps per block of the second rung.
const LADDER_WARPS: usize = LADDER_TILE / 32;

/// The second rung's first step for one pass (PMPP 4th ed., §13.4-13.5: several bits per pass,
/// a local sort in shared memory, coalesced writes): each block sorts its tile of
/// [`LADDER_TILE`] keys by the [`LADDER_DIGIT_BITS`]-bit digit at `shift` with four one-bit
/// splits in shared memory (each a block-wide scan of the bit: a ballot per warp, then the
/// warps' totals), writes the tile in that order to `tiles_out`, and its count of each digit
/// `d` to `counts[d * blocks + block]` (digit-major, so that one exclusive scan of `counts`
/// gives every tile's start of every digit in the output).
///
/// The tile's last block is padded with `u32::MAX` keys, which sort after its real keys (all
/// their bits are 1 and the splits are stable) and are neither written nor counted.
///
/// Launch: `blocks = ceil(n / LADDER_TILE)` blocks of [`LADDER_BLOCK`] threads, no dynamic
/// shared memory.
///
/// # Safety
/// `keys_in` is valid for `n` reads, `tiles_out` for `n` writes and does not overlap it;
/// `counts` is valid for `LADDER_DIGITS * blocks` writes; `shift <= 28`; the launch is as above.
#[kernel]
pub unsafe fn sort_ladder_local(
    keys_in: *const u32,
    tiles_out: *mut u32,
    counts: *mut u32,
    n: usize,
    shift: u32,
) {
    let s_keys = static_shared!(s_ladder_keys: [u32; LADDER_TILE]);
    let s_warps = static_shared!(s_ladder_warps: [u32; LADDER_WARPS]);
    let s_counts = static_shared!(s_ladder_counts: [u32; LADDER_DIGITS]);
    let tid = thread_idx().x as usize;
    let block = block_idx().x as usize;
    let blocks = grid_dim().x as usize;
    let i = block * LADDER_TILE + tid;
    let valid = (n - block * LADDER_TILE).min(LADDER_TILE);
    // SAFETY: `i < n` guards every global read and write; `d * blocks + block` is below
    // `LADDER_DIGITS * blocks`; `tile_sort`'s contract holds (every thread of the block calls
    // it, after the barrier-free writes of `s_counts`, which it does not touch).
    unsafe {
        if tid < LADDER_DIGITS {
            s_counts.write(tid, 0);
        }
        let key = if i < n { *keys_in.add(i) } else { u32::MAX };
        let key = tile_sort(key, shift, &s_keys, &s_warps);
        let d = ((key >> shift) as usize) & (LADDER_DIGITS - 1);
        if tid < valid {
            red_shared_add(s_counts.shared_address() + 4 * d as u32, 1u32);
            *tiles_out.add(i) = key;
        }
        syncthreads();
        if tid < LADDER_DIGITS {
            *counts.add(tid * blocks + block) = s_counts.read(tid);
        }
    }
}

/// The second rung's last step for one pass: each block reads its tile, sorted by digit (from
/// [`sort_ladder_local`]), finds where each digit's run starts in the tile (an exclusive sum of
/// its own counts), and writes each key to `starts[d * blocks + block]` plus its place in its
/// run: the keys of one digit go to consecutive addresses, so a warp's stores coalesce.
///
/// Launch: as [`sort_ladder_local`].
///
/// # Safety
/// `tiles` and `keys_out` are valid for `n` elements and do not overlap; `counts` holds the
/// tiles' digit counts from [`sort_ladder_local`] of these tiles, at this `shift`, and
/// `starts` their exclusive prefix sum (`LADDER_DIGITS * blocks` each), so the destinations
/// are a permutation of `0..n`; the launch is as above.
#[kernel]
pub unsafe fn sort_ladder_scatter(
    tiles: *const u32,
    keys_out: *mut u32,
    counts: *const u32,
    starts: *const u32,
    n: usize,
    shift: u32,
) {
    let s_local = static_shared!(s_ladder_local: [u32; LADDER_DIGITS]);
    let s_global = static_shared!(s_ladder_global: [u32; LADDER_DIGITS]);
    let tid = thread_idx().x as usize;
    let block = block_idx().x as usize;
    let blocks = grid_dim().x as usize;
    let i = block * LADDER_TILE + tid;
    // SAFETY: `d * blocks + block < LADDER_DIGITS * blocks`; `i < n` guards the tile's reads;
    // the destination is below `n` and unique (the contract); thread 0 alone writes `s_local`
    // before the barrier, threads `< 16` their own `s_global` element.
    unsafe {
        if tid == 0 {
            let mut sum = 0;
            for d in 0..LADDER_DIGITS {
                s_local.write(d, sum);
                sum += *counts.add(d * blocks + block);
            }
        }
        if tid < LADDER_DIGITS {
            s_global.write(tid, *starts.add(tid * blocks + block));
        }
        syncthreads();
        if i < n {
            let key = *tiles.add(i);
            let d = ((key >> shift) as usize) & (LADDER_DIGITS - 1);
            let dst = s_global.read(d) as usize + (tid - s_local.read(d) as usize);
            *keys_out.add(dst) = key;
        }
    }
}

/// Sorts the block's tile of [`LADDER_TILE`] keys (one per thread, `key`) stably by the
/// [`LADDER_DIGIT_BITS`]-bit digit at `shift` with four one-bit splits in shared memory, each a
/// block-wide scan of the bit (a ballot per warp, then the warps' totals); returns the key at
/// thread `tid`'s place in the sorted tile.
///
/// # Safety
/// Called by every thread of a [`LADDER_BLOCK`]-thread block at once (it synchronises the
/// block), with `shift <= 28`.
#[inline(always)]
unsafe fn tile_sort(
    mut key: u32,
    shift: u32,
    s_keys: &SharedArray<u32, LADDER_TILE>,
    s_warps: &SharedArray<u32, LADDER_WARPS>,
) -> u32 {
    let tid = thread_idx().x as usize;
    let (warp, lane) = (tid / 32, tid % 32);
    // SAFETY: `warp < 8` and `dst < 256` (the split sends the zeros to `0..zeros` and the ones
    // to `zeros..256`, a permutation) index the arrays; the barriers separate every write of a
    // shared element from the reads of other threads, before and after.
    unsafe {
        for b in 0..LADDER_DIGIT_BITS {
            let bit = (key >> (shift + b)) & 1;
            let mask = ballot_sync(FULL_MASK, bit != 0);
            if lane == 0 {
                s_warps.write(warp, mask.count_ones());
            }
            syncthreads();
            let (mut before, mut ones) = (0, 0);
            for w in 0..LADDER_WARPS {
                let c = s_warps.read(w);
                before += if w < warp { c } else { 0 };
                ones += c;
            }
            let before = (before + (mask & lanemask_lt()).count_ones()) as usize;
            let zeros = LADDER_TILE - ones as usize;
            let dst = if bit == 0 {
                tid - before
            } else {
                zeros + before
            };
            s_keys.write(dst, key);
            syncthreads();
            key = s_keys.read(tid);
            syncthreads();
        }
    }
    key
}

/// The third rung's first step for one pass (reduce-then-scan, the design of CUB's
/// `DeviceRadixSort` before one-sweep: Merrill and Grimshaw, "High Performance and Scalable
/// Radix Sorting", 2011): each block counts the digits at `shift` of its tile of
/// [`LADDER_TILE`] keys and writes `counts[d * blocks + block]`, reading the keys and writing
/// nothing else.
///
/// Launch: as [`sort_ladder_local`].
///
/// # Safety
/// `keys` is valid for `n` reads, `counts` for `LADDER_DIGITS * blocks` writes; the launch is as
/// above.
#[kernel]
pub unsafe fn sort_ladder_upsweep(keys: *const u32, counts: *mut u32, n: usize, shift: u32) {
    let s_counts = static_shared!(s_ladder_up_counts: [u32; LADDER_DIGITS]);
    let tid = thread_idx().x as usize;
    let block = block_idx().x as usize;
    let blocks = grid_dim().x as usize;
    let i = block * LADDER_TILE + tid;
    // SAFETY: `i < n` guards the read; `tid * blocks + block < LADDER_DIGITS * blocks`; the
    // barrier separates the zeroing, the additions and the reads of `s_counts`.
    unsafe {
        if tid < LADDER_DIGITS {
            s_counts.write(tid, 0);
        }
        syncthreads();
        if i < n {
            let d = (*keys.add(i) >> shift) & (LADDER_DIGITS as u32 - 1);
            red_shared_add(s_counts.shared_address() + 4 * d, 1u32);
        }
        syncthreads();
        if tid < LADDER_DIGITS {
            *counts.add(tid * blocks + block) = s_counts.read(tid);
        }
    }
}

/// The third rung's last step for one pass: each block reads its tile again, sorts it by the
/// digit in shared memory (as [`sort_ladder_local`]), and writes each key to
/// `starts[d * blocks + block]` plus its place in its run (as [`sort_ladder_scatter`]): the
/// keys are read and written once, with no sorted tile written between the two steps.
///
/// Launch: as [`sort_ladder_local`].
///
/// # Safety
/// `keys_in` and `keys_out` are valid for `n` elements and do not overlap; `counts` are the
/// tiles' digit counts at this `shift` ([`sort_ladder_upsweep`]) and `starts` their exclusive
/// prefix sum (`LADDER_DIGITS * blocks` each), so the destinations are a permutation of
/// `0..n`; `shift <= 28`; the launch is as above.
#[kernel]
pub unsafe fn sort_ladder_downsweep(
    keys_in: *const u32,
    keys_out: *mut u32,
    counts: *const u32,
    starts: *const u32,
    n: usize,
    shift: u32,
) {
    let s_keys = static_shared!(s_ladder_down_keys: [u32; LADDER_TILE]);
    let s_warps = static_shared!(s_ladder_down_warps: [u32; LADDER_WARPS]);
    let s_local = static_shared!(s_ladder_down_local: [u32; LADDER_DIGITS]);
    let s_global = static_shared!(s_ladder_down_global: [u32; LADDER_DIGITS]);
    let tid = thread_idx().x as usize;
    let block = block_idx().x as usize;
    let blocks = grid_dim().x as usize;
    let i = block * LADDER_TILE + tid;
    let valid = (n - block * LADDER_TILE).min(LADDER_TILE);
    // SAFETY: `i < n` guards the read; `d * blocks + block < LADDER_DIGITS * blocks`;
    // `tile_sort`'s contract holds (every thread calls it); thread 0 alone writes `s_local`,
    // threads `< 16` their own `s_global` element, and `tile_sort`'s last barrier orders those
    // writes before the reads; the padding keys (`u32::MAX`) sort after the tile's `valid`
    // keys and are not written; the destination is below `n` and unique (the contract).
    unsafe {
        if tid == 0 {
            let mut sum = 0;
            for d in 0..LADDER_DIGITS {
                s_local.write(d, sum);
                sum += *counts.add(d * blocks + block);
            }
        }
        if tid < LADDER_DIGITS {
            s_global.write(tid, *starts.add(tid * blocks + block));
        }
        let key = if i < n { *keys_in.add(i) } else { u32::MAX };
        let key = tile_sort(key, shift, &s_keys, &s_warps);
        if tid < valid {
            let d = ((key >> shift) as usize) & (LADDER_DIGITS - 1);
            let dst = s_global.read(d) as usize + (tid - s_local.read(d) as usize);
            *keys_out.add(dst) = key;
        }
    }
}
