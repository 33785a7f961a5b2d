//! The first rung of the textbook ladder: a radix sort of `u32` keys one bit per pass, each
//! pass a stable split by a scan (*Programming Massively Parallel Processors*, Hwu, Kirk and
//! El Hajj, 4th ed., ch. 13 "Sorting", §13.2-13.3: the radix sort's first kernel).
//!
//! A pass over bit `b`:
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

use gpu_std::{DisjointSlice, block_dim, block_idx, kernel, thread_idx, thread_index};

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
