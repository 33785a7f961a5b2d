//! Segmented radix sort (CUB's `DeviceSegmentedRadixSort`/`DeviceSegmentedSort`): segment `s`
//! of the keys is `keys[offsets[s]..offsets[s + 1]]`, each sorted on its own, stably, by the
//! same LSD passes as the one-sweep sort, one block per segment.
//!
//! **`sort_segments_check`** ([`sort_segments_check`]) checks the CSR offsets first: every
//! segment within the keys and no offset below the one before it, so that the segments are
//! disjoint; the sort does nothing at all if one is not.
//!
//! **`sort_segmented`** ([`sort_segmented_u32_v32`] and the other key and value widths): block
//! `s` sorts segment `s` by 8-bit digits, least significant first. Per pass it counts the
//! segment's digits in shared memory (one read of the segment), scans them into each digit's
//! start, then takes the segment's tiles of [`ONESWEEP_TILE`] keys in order and places each
//! as a pass of the one-sweep sort places a tile (the same warp-level ranking, the same
//! scatter through shared memory: [`super::onesweep`]), each digit's run after the runs of the
//! tiles before it. The passes go back and forth between the keys and a second buffer; with
//! an odd count of passes (1-byte keys) the block copies its segment back.

use super::onesweep::{Pass, RunStarts, block_exclusive_sum, onesweep_tile, shared_arrays};
use super::{ONESWEEP_BLOCK, ONESWEEP_TILE, Pair, RADIX, RADIX_BITS, RadixBits, SortPair};
use gpu_std::{
    SharedArray, atomic_max, block_dim, block_idx, grid_dim, kernel, red_shared_add, static_shared,
    syncthreads, thread_idx,
};

/// Writes `s + 1` into `*bad` (an atomic maximum) for every segment `s < segments` whose
/// offsets decrease (`offsets[s] > offsets[s + 1]`) or whose end passes `n`.
///
/// Launch: any one-dimensional grid and block (a grid-stride loop over the segments).
///
/// # Safety
/// `offsets` is valid for `segments + 1` reads; `bad` is one `u64`.
#[kernel]
pub unsafe fn sort_segments_check(offsets: *const u64, segments: usize, n: usize, bad: *mut u64) {
    let stride = (block_dim().x * grid_dim().x) as usize;
    let mut s = (block_idx().x * block_dim().x + thread_idx().x) as usize;
    // SAFETY: `s + 1 <= segments` indexes `offsets`; `bad` is the caller's word.
    unsafe {
        while s < segments {
            let (begin, end) = (*offsets.add(s), *offsets.add(s + 1));
            if begin > end || end > n as u64 {
                atomic_max(bad, s as u64 + 1);
            }
            s += stride;
        }
    }
}

/// Where a segment's tiles put each digit's run: after the runs of the tiles before (thread
/// `d` keeps digit `d`'s next place in `running`).
struct Running {
    running: SharedArray<u32, RADIX>,
}

impl RunStarts for Running {
    #[inline(always)]
    unsafe fn before_load(&self, _tid: usize) {}

    #[inline(always)]
    unsafe fn counted(&self, _d: usize, _count: u32) {}

    #[inline(always)]
    unsafe fn start(&self, d: usize, count: u32) -> u32 {
        // SAFETY: `d < 256`; only thread `d` touches `running[d]` between the barriers.
        unsafe {
            let start = self.running.read_unchecked(d);
            self.running.write_unchecked(d, start + count);
            start
        }
    }
}

/// Sorts each segment `keys[offsets[s]..offsets[s + 1]]` in place, stably, by the low
/// `8 * passes` bits (at most the key's: `passes` one per byte of the key) of the ordered pattern ([`RadixBits::ordered`] with `kind` and `flip`: ascending, or descending
/// with `flip` all ones), moving `values` with the keys unless `values` is null.
///
/// Launch: one block of [`ONESWEEP_BLOCK`] threads per segment (`segments` blocks), with the
/// dynamic shared memory of a tile ([`onesweep_shared_bytes`](super::onesweep_shared_bytes)
/// of the key and value sizes, or the keys' alone without values); about 11 KiB of static
/// shared memory. A block does nothing if `*bad` is not 0 (the check found a bad segment), or
/// if its segment holds fewer than 2 keys.
///
/// # Safety
/// `offsets` holds `segments + 1` words, the grid's blocks; `bad` is the word
/// [`sort_segments_check`] wrote over these offsets and `n`, earlier in stream order, so that
/// when it is 0 the segments are disjoint ranges within `0..n <= MAX_SORT_LEN`; `keys` and
/// `alt_keys` are valid for `n` keys and do not overlap, nor do `values` and `alt_values` (or
/// `values` is null); nothing else touches them during the launch.
#[kernel(launch_bounds(256, 2), instantiate(P =
    Pair<u8, u32> as u8_v32, Pair<u16, u32> as u16_v32, Pair<u32, u32> as u32_v32,
    Pair<u64, u32> as u64_v32, Pair<u8, u64> as u8_v64, Pair<u16, u64> as u16_v64,
    Pair<u32, u64> as u32_v64, Pair<u64, u64> as u64_v64,
))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sort_segmented<P: SortPair>(
    keys: *mut P::Bits,
    alt_keys: *mut P::Bits,
    values: *mut P::Value,
    alt_values: *mut P::Value,
    offsets: *const u64,
    bad: *const u64,
    kind: u32,
    flip: P::Bits,
    passes: u32,
) {
    let running = static_shared!(s_segmented_running: [u32; RADIX]);
    let shared = shared_arrays();
    let tid = thread_idx().x as usize;
    let segment = block_idx().x as usize;
    // SAFETY: the caller's contract: with `*bad == 0` the segment is a range within the keys
    // that no other block touches; `tid < 256` indexes `running`; the barriers order the
    // block's shared and global accesses between the passes.
    unsafe {
        if core::ptr::read_volatile(bad) != 0 {
            return;
        }
        // Offsets within a segment are `u32` (`n <= MAX_SORT_LEN`): fewer registers.
        let begin = *offsets.add(segment) as u32;
        let end = *offsets.add(segment + 1) as u32;
        if end - begin < 2 {
            return;
        }
        // A launch parameter, not the key's constant: a loop the compiler does not unroll
        // (unrolled, the passes' code took more registers than the launch bounds allow).
        let passes = passes.min(<P as SortPair>::Bits::BITS / RADIX_BITS);
        let starts = Running { running };
        for p in 0..passes {
            // Even passes read the keys and write the second buffer, odd ones the other way.
            let (keys_in, keys_out) = if p % 2 == 0 {
                (keys, alt_keys)
            } else {
                (alt_keys, keys)
            };
            let (values_in, values_out) = if p % 2 == 0 {
                (values, alt_values)
            } else {
                (alt_values, values)
            };
            let shift = p * RADIX_BITS;
            let digit_of =
                |key: <P as SortPair>::Bits| key.ordered(kind, flip).digit(shift, RADIX as u32 - 1);
            // The segment's digit counts, then each digit's first place.
            running.write_unchecked(tid, 0);
            syncthreads();
            let mut i = begin + tid as u32;
            while i < end {
                red_shared_add(
                    running.shared_address() + 4 * digit_of(*keys_in.add(i as usize)),
                    1u32,
                );
                i += ONESWEEP_BLOCK;
            }
            syncthreads();
            let count = running.read_unchecked(tid);
            let first = block_exclusive_sum(count, tid, &shared.totals);
            running.write_unchecked(tid, begin + first);
            syncthreads();
            let pass = Pass::<P> {
                keys_in: keys_in.cast_const(),
                keys_out,
                values_in: values_in.cast_const(),
                values_out: if values.is_null() {
                    core::ptr::null_mut()
                } else {
                    values_out
                },
                n: end as usize,
                kind,
                flip,
                shift,
                mask: RADIX as u32 - 1,
            };
            // Every tile with bounds checks: one copy of the tile's code, fewer registers.
            let mut base = begin;
            while base < end {
                onesweep_tile::<P, false, _>(&pass, &shared, &starts, base as usize);
                base += ONESWEEP_TILE as u32;
            }
        }
        if passes % 2 == 1 {
            // The sorted segment is in the second buffer: copy it back.
            syncthreads();
            let mut i = (begin + tid as u32) as usize;
            while i < end as usize {
                *keys.add(i) = *alt_keys.add(i);
                if !values.is_null() {
                    *values.add(i) = *alt_values.add(i);
                }
                i += ONESWEEP_BLOCK as usize;
            }
        }
    }
}
