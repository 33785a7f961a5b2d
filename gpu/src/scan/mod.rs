//! Prefix scan (prefix sum): `y[i] = x[0] + ... + x[i]` (inclusive) or `x[0] + ... + x[i - 1]`
//! (exclusive), the ladder of *Programming Massively Parallel Processors* (Hwu, Kirk and El
//! Hajj, 4th ed., ch. 11) up to Merrill and Garland's single-pass scan with decoupled
//! look-back ("Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA, 2016).
//!
//! - [`ladder`]: the textbook kernels on `i32`: Kogge-Stone in one block, Kogge-Stone with
//!   double buffering, Brent-Kung, the coarsened three-phase block scan (each scans the
//!   section of one block and leaves the section's total), the add-back kernel of the
//!   hierarchical scan, and the stream-based single-pass scan (each block waits for its left
//!   neighbour's prefix).
//! - [`lookback`]: the single-pass scan with decoupled look-back, the version to call: sums,
//!   products, minima and maxima ([`ScanOp`], [`ops`]) of every primitive type, inclusive or
//!   exclusive from an initial value; each tile staged in shared memory ([`staged`]: asynchronous
//!   16-byte copies, 32 elements per thread (16 of 1-byte, 8 of 8-byte ones), scanned in a blocked
//!   arrangement), and a warp that looks back over the status of up to 32 earlier tiles at a
//!   time.
//!
//! This module holds what host and device share: block sizes, sections and tiles, and the
//! layout of the look-back's status words.

pub mod by_key;
pub mod ladder;
pub mod lookback;
pub mod ops;
pub mod select;
pub mod staged;

use gpu_std::{FULL_MASK, Pod, WarpShuffle, shfl_up_sync};

pub use lookback::status_words;
pub use ops::Scannable;

/// Threads per block (and elements per section) of the Kogge-Stone kernels.
pub const KOGGE_STONE_BLOCK: u32 = 1024;
/// Threads per block of the Brent-Kung kernel; its section is twice as long.
pub const BRENT_KUNG_BLOCK: u32 = 512;
/// Threads per block of the coarsened three-phase kernel and the stream-based scan.
pub const COARSENED_BLOCK: u32 = 256;
/// Elements each thread of the coarsened kernel scans sequentially (its sub-section).
pub const COARSENED_ITEMS: usize = 16;
/// Elements per section of the coarsened kernel and the stream-based scan (4096).
pub const COARSENED_SECTION: usize = COARSENED_BLOCK as usize * COARSENED_ITEMS;
/// Threads per block of the add-back kernel of the hierarchical scan.
pub const ADD_SUMS_BLOCK: u32 = 256;

/// Threads per block of the look-back kernels that keep their tile in registers (the
/// compaction and the tile copy) on long inputs (16 warps); shorter inputs get
/// [`lookback_block`]'s smaller blocks, so that their fewer tiles still spread over the SMs. The
/// scan's own blocks are [`SCAN_BLOCK`].
pub const LOOKBACK_BLOCK: u32 = 512;
/// The largest block of the look-back scan ([`scan_lookback_*`](lookback::scan_lookback_i32),
/// [`by_key`]): 256
/// threads, whose tile staged in shared memory is 32 KiB, so that six blocks fit in an SM's
/// shared memory and, at the kernel's 40 registers, in its register file.
pub const SCAN_BLOCK: u32 = 256;
/// The smallest block [`lookback_block`] picks.
pub const LOOKBACK_MIN_BLOCK: u32 = 128;
/// 16-byte vectors (4 elements each) every thread of the compaction and the tile copy loads
/// into registers: 32 elements per thread. On an H100 the register-tile scan ran at 82% of the
/// copy with 8, 68% with 4 and 57% with 2 (the fixed cost of each tile, its ticket, barriers
/// and look-back, spread over more bytes; see `docs/patterns/scan.md`).
pub const LOOKBACK_VECTORS: usize = 8;
/// Elements per warp of the look-back scan (1024).
pub const LOOKBACK_WARP_ITEMS: usize = 32 * 4 * LOOKBACK_VECTORS;
/// Elements per tile of the look-back scan with blocks of [`LOOKBACK_BLOCK`] (16384, 64 KiB
/// of 32-bit elements); a block of `b` threads scans a tile of `b * 4 * LOOKBACK_VECTORS`.
pub const LOOKBACK_TILE: usize = lookback_tile(LOOKBACK_BLOCK);
/// The smallest tile (blocks of [`LOOKBACK_MIN_BLOCK`], 4096 elements).
pub const LOOKBACK_MIN_TILE: usize = lookback_tile(LOOKBACK_MIN_BLOCK);

/// Elements per tile of the look-back scan of 4-byte elements with blocks of `block` threads.
pub const fn lookback_tile(block: u32) -> usize {
    block as usize * 4 * LOOKBACK_VECTORS
}

/// Elements each thread of the look-back scan scans for elements of `item_bytes` bytes: 32 of
/// 4-byte elements (eight 16-byte units of its tile in shared memory) and of 2-byte ones (four
/// units), 16 of 1-byte ones (one unit) and 8 of 8-byte ones (four units): more units of 1- and
/// 8-byte elements took their instances past the kernel's 40 registers into local memory (the
/// 1-byte ones on sm_90, the 8-byte ones in the sm_70 PTX's Volta code).
pub const fn lookback_items(item_bytes: usize) -> usize {
    match item_bytes {
        8.. => 8,
        1 => 16,
        _ => 32,
    }
}

/// Elements per tile of the look-back scan of `item_bytes`-byte elements with blocks of `block`
/// threads.
pub const fn lookback_tile_of(block: u32, item_bytes: usize) -> usize {
    block as usize * lookback_items(item_bytes)
}

/// The block size of the look-back scan for `n` elements on a device of `sms` SMs, at most
/// `max_block` (a power of two from 128 to [`LOOKBACK_BLOCK`]): the largest block that still
/// gives at least four tiles per SM, and never below [`LOOKBACK_MIN_BLOCK`]. `max_block` comes
/// from [`lookback_max_block`] of the kernel's registers on the device.
pub const fn lookback_block(n: usize, sms: u32, max_block: u32) -> u32 {
    lookback_block_of(n, 4, sms, max_block)
}

/// The block size of the look-back scan ([`scan_lookback_*`](lookback::scan_lookback_i32),
/// [`by_key`]) for `n`
/// elements of `item_bytes` bytes on a device of `sms` SMs: [`SCAN_BLOCK`], or 128 where that
/// leaves fewer than four tiles per SM.
pub const fn scan_block(n: usize, item_bytes: usize, sms: u32) -> u32 {
    lookback_block_of(n, item_bytes, sms, SCAN_BLOCK)
}

/// [`lookback_block`] for elements of `item_bytes` bytes (tiles of [`lookback_tile_of`]).
pub const fn lookback_block_of(n: usize, item_bytes: usize, sms: u32, max_block: u32) -> u32 {
    let mut block = max_block;
    while block > LOOKBACK_MIN_BLOCK
        && n.div_ceil(lookback_tile_of(block, item_bytes)) < 4 * sms as usize
    {
        block /= 2;
    }
    block
}

/// The largest block of the look-back kernels (a power of two from [`LOOKBACK_MIN_BLOCK`] to
/// [`LOOKBACK_BLOCK`]) of which two fit in an SM's 65536 registers when each thread uses
/// `registers` (allocated in units of 8): 512 up to 64 registers (every look-back kernel on
/// sm_90), 256 up to 128. A single resident block per SM would leave the SM without loads in
/// flight while that block looks back.
pub const fn lookback_max_block(registers: u32) -> u32 {
    let per_thread = registers.div_ceil(8) * 8;
    let mut block = LOOKBACK_BLOCK;
    while block > LOOKBACK_MIN_BLOCK && 2 * block * per_thread > 65536 {
        block /= 2;
    }
    block
}

/// Status of a tile whose aggregate (the sum of its own elements) is published.
pub const STATUS_AGGREGATE: u64 = 1;
/// Status of a tile whose inclusive prefix (the sum of every element up to its end) is
/// published.
pub const STATUS_PREFIX: u64 = 2;
/// Bits of the launch's epoch in a status word: a word is valid only for the launch whose
/// epoch it carries, so a workspace is reused without clearing it (epochs run from 1 to
/// `2^EPOCH_BITS - 1`; the host clears the status words when they wrap).
pub const EPOCH_BITS: u32 = 30;
/// The largest epoch a launch may pass.
pub const MAX_EPOCH: u32 = (1 << EPOCH_BITS) - 1;

/// A status word: the value's 32 bits in bits 0..32, the status in bits 32..34, the epoch in
/// bits 34..64. One 64-bit word, written and read as one single-copy-atomic access, so a
/// reader that sees the status also sees the value it was published with.
#[inline(always)]
pub const fn pack_status(status: u64, epoch: u32, value_bits: u32) -> u64 {
    ((epoch as u64) << 34) | (status << 32) | value_bits as u64
}

/// An operator of the look-back scan (`scan_lookback`): elements of `Item` in memory, lifted into
/// the accumulator `Acc` (of 4 or 8 bytes), combined by an associative and commutative `combine`
/// with identity `IDENTITY`, and stored back as `Item`. Implemented for
/// [`Sum`](crate::reduce::ops::Sum), [`Product`](crate::reduce::ops::Product),
/// [`Min`](crate::reduce::ops::Min) and [`Max`](crate::reduce::ops::Max) of every primitive type
/// ([`ops`](crate::reduce::ops)' markers): `i8`,
/// `i16`, `u8`, `u16` and `f16` are scanned in 32 bits (`i32`, `u32`, `f32`) and narrowed as they
/// are stored, which for wrapping sums and products gives the bits of the narrow type's own
/// arithmetic (CUB's result for an output of the input's type), and for `f16` rounds each
/// output once from an `f32` scan (PyTorch's `cumsum` of `half`).
pub trait ScanOp {
    /// The element in memory.
    type Item: Copy;
    /// The accumulator: 4 or 8 bytes, crossing lanes with shuffles.
    type Acc: Pod + WarpShuffle;
    /// `combine(IDENTITY, a) == a`: what a partial tile reads past the end.
    const IDENTITY: Self::Acc;
    /// The element as an accumulator.
    fn lift(x: Self::Item) -> Self::Acc;
    /// `a ⊕ b` (`a` the earlier elements).
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The accumulator stored as an element (narrowed where the accumulator is wider).
    fn store(a: Self::Acc) -> Self::Item;
}

/// Inclusive scan across the 32 lanes of a warp (Kogge-Stone with `shfl.sync.up`, five steps):
/// lane `l` returns `v_0 + ... + v_l`. Every lane of the warp must call it.
#[inline(always)]
pub(crate) fn warp_inclusive<S: ScanOp>(mut v: S::Acc, lane: u32) -> S::Acc {
    let mut delta = 1;
    while delta < 32 {
        let up = shfl_up_sync(FULL_MASK, v, delta);
        if lane >= delta {
            v = S::combine(up, v);
        }
        delta *= 2;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_keep_value_status_and_epoch_apart() {
        let w = pack_status(STATUS_PREFIX, MAX_EPOCH, u32::MAX);
        assert_eq!(w as u32, u32::MAX);
        assert_eq!((w >> 32) & 3, STATUS_PREFIX);
        assert_eq!((w >> 34) as u32, MAX_EPOCH);
        assert_eq!(pack_status(STATUS_AGGREGATE, 1, 0) >> 32, 0b101);
    }

    #[test]
    fn tiles_are_whole_warps_of_vectors() {
        assert_eq!(LOOKBACK_TILE, 16384);
        assert_eq!(LOOKBACK_MIN_TILE, 4096);
        assert_eq!(lookback_max_block(64), 512);
        assert_eq!(lookback_max_block(71), 256);
        assert_eq!(lookback_max_block(128), 256);
        assert_eq!(lookback_max_block(255), LOOKBACK_MIN_BLOCK);
        assert_eq!(
            LOOKBACK_TILE,
            LOOKBACK_WARP_ITEMS * (LOOKBACK_BLOCK as usize / 32)
        );
        assert_eq!(COARSENED_SECTION, 4096);
    }

    #[test]
    fn long_inputs_get_the_large_block() {
        assert_eq!(lookback_block(1 << 30, 132, 512), 512);
        assert_eq!(lookback_block(1 << 30, 132, 256), 256);
        assert_eq!(lookback_block(1 << 24, 132, 512), 512);
        assert_eq!(lookback_block(1 << 23, 132, 512), 256);
        assert_eq!(lookback_block(1 << 22, 132, 512), 128);
        assert_eq!(lookback_block(1 << 20, 132, 512), 128);
        assert_eq!(lookback_block(1, 132, 512), 128);
        assert_eq!(scan_block(1 << 30, 4, 132), 256);
        assert_eq!(scan_block(1 << 30, 8, 132), 256);
        assert_eq!(scan_block(1 << 20, 4, 132), 128);
    }

    #[test]
    fn the_staged_tile_swizzle_permutes_rows_and_spreads_banks() {
        fn check<const U: usize>() {
            let threads = 256;
            let units = threads * U;
            let mut seen = std::vec![false; units];
            for u in 0..units {
                let s = staged::swizzle::<U>(u);
                assert!(s < units && s / 8 == u / 8, "U {U}: unit {u} to slot {s}");
                assert!(!seen[s]);
                seen[s] = true;
            }
            // Eight consecutive units (striped copies), and unit `i` of eight consecutive
            // threads (blocked passes), fall in eight distinct 16-byte bank groups.
            for first in (0..threads).step_by(8) {
                for i in 0..U {
                    let striped: std::vec::Vec<_> = (0..8)
                        .map(|t| staged::swizzle::<U>(i * threads + first + t) % 8)
                        .collect();
                    let blocked: std::vec::Vec<_> = (0..8)
                        .map(|t| staged::swizzle::<U>((first + t) * U + i) % 8)
                        .collect();
                    for groups in [striped, blocked] {
                        let mut sorted = groups.clone();
                        sorted.sort();
                        sorted.dedup();
                        assert_eq!(sorted.len(), 8, "U {U}: {groups:?}");
                    }
                }
            }
        }
        check::<1>();
        check::<2>();
        check::<4>();
        check::<8>();
        check::<16>();
        assert_eq!(staged::staged_shared_bytes(256, 4), 32 * 1024);
        assert_eq!(staged::staged_shared_bytes(256, 8), 16 * 1024);
        assert_eq!(staged::staged_shared_bytes(128, 1), 2 * 1024);
    }
}
