//! Histograms: `counts[b] += #{i : bin(input[i]) == b}`, the ladder of *Programming Massively
//! Parallel Processors* (Hwu, Kirk and El Hajj, 4th ed., ch. 9 "Parallel histogram") up to a
//! byte histogram that runs at a large share of the DRAM bandwidth, and CUB's
//! `DeviceHistogram::HistogramEven` (equal-width bins over any range) for `u8`, `u16`, `i32`
//! and `f32` samples into `u32` or `u64` counters.
//!
//! - [`ladder`]: the textbook kernels over bytes into 256 `u32` bins: one global atomic per
//!   element (§9.2), a private histogram per block in shared memory (§9.4), thread coarsening
//!   with a contiguous and with an interleaved partition (§9.5), and aggregation of runs of
//!   equal values (§9.6).
//! - [`bytes`]: [`histogram_bytes`](bytes::histogram_bytes), the fast byte histogram (one
//!   sub-histogram per warp, 16-byte loads, runs aggregated per thread, `red.shared`), the
//!   same into `u64` counts ([`histogram_bytes_u64`](bytes::histogram_bytes_u64)), and
//!   [`histogram_shared_atomic_rate`](bytes::histogram_shared_atomic_rate), the
//!   microbenchmark of the shared-memory atomics that bound it.
//! - [`even`]: the `HistogramEven` kernels, shared-memory privatisation while the bins fit in
//!   [`EVEN_SHARED_LIMIT_BYTES`], global atomics beyond, and the bin rule ([`EvenSample`]) that
//!   the CPU reference calls too, so that host and device compute every bin with the same
//!   arithmetic.
//!
//! This module holds what host and device share: bin counts, block sizes, items per thread.

pub mod bytes;
pub mod even;
pub mod ladder;

pub use even::{EvenSample, NO_BIN};

/// Bins of a byte histogram: one per value of a `u8`.
pub const BYTE_BINS: usize = 256;

/// Threads per block of every ladder kernel (8 warps, one bin per thread in the merges of the
/// shared-memory variants).
pub const LADDER_BLOCK: u32 = 256;
/// Elements each thread of the coarsened ladder kernels (contiguous, interleaved, aggregated)
/// handles: the host launches `ceil(n / (LADDER_BLOCK * LADDER_ITEMS))` blocks, so that the
/// merge of a block's 256 bins into global memory is spread over 8192 elements.
pub const LADDER_ITEMS: usize = 32;

/// Threads per block of [`histogram_bytes`](bytes::histogram_bytes): 16 warps, so 16
/// sub-histograms of 256 `u32` (16 KiB of shared memory) per block.
pub const BYTES_BLOCK: u32 = 512;
/// Warps (and so sub-histograms) per block of [`histogram_bytes`](bytes::histogram_bytes).
pub const BYTES_WARPS: usize = BYTES_BLOCK as usize / 32;
/// 16-byte loads each thread of [`histogram_bytes`](bytes::histogram_bytes) has in flight
/// per step of its loop (64 bytes per thread, 32 KiB per block).
pub const BYTES_UNROLL: usize = 4;
/// Bytes a block of [`histogram_bytes`](bytes::histogram_bytes) reads per step of its loop
/// (32 KiB): the host gives each block at least one step's worth.
pub const BYTES_PER_BLOCK_STEP: usize = BYTES_BLOCK as usize * 16 * BYTES_UNROLL;

/// The most bytes one block of [`histogram_bytes_u64`](bytes::histogram_bytes_u64) may count
/// (2^31: its warps' sub-histograms and block sums are `u32`): the host launches at least
/// `ceil(n / BYTES_U64_MAX_PER_BLOCK)` blocks.
pub const BYTES_U64_MAX_PER_BLOCK: usize = 1 << 31;

/// Threads per block of the `even` kernels.
pub const EVEN_BLOCK: u32 = 256;
/// Elements per thread the host aims the `even` grid at (fewer blocks than the device holds
/// when the input is short): `ceil(n / (EVEN_BLOCK * EVEN_ITEMS))`, at most one wave.
pub const EVEN_ITEMS: usize = 16;
/// The most bytes of counters the privatised `even` kernels keep in (dynamic) shared memory:
/// 48 KiB, the most a launch may ask for without opting in to more (12288 `u32` bins, 6144
/// `u64`). More bins go to the global-atomics kernels.
pub const EVEN_SHARED_LIMIT_BYTES: usize = 48 * 1024;
/// The most bins [`even`] takes (the CPU entry point refuses more).
pub const MAX_BINS: usize = 1 << 20;

/// Threads per block of [`histogram_shared_atomic_rate`](bytes::histogram_shared_atomic_rate)
/// (16 warps, each with its own 256 words).
pub const ATOMIC_RATE_BLOCK: u32 = 512;
/// `pattern` of [`histogram_shared_atomic_rate`](bytes::histogram_shared_atomic_rate): lane
/// `l` always adds to word `l` of its warp's 256 (32 banks, no conflict).
pub const ATOMIC_DISTINCT_BANKS: u32 = 0;
/// `pattern`: every lane adds to word 0 of its warp's 256 (one address).
pub const ATOMIC_ONE_ADDRESS: u32 = 1;
/// `pattern`: each lane adds to a pseudo-random word of its warp's 256 at each step (the
/// accesses of a histogram of uniform random bytes).
pub const ATOMIC_RANDOM_BINS: u32 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_memory_fits() {
        assert_eq!(BYTES_WARPS * BYTE_BINS * 4, 16 * 1024);
        assert_eq!(BYTES_PER_BLOCK_STEP, 32 * 1024);
        assert_eq!(EVEN_SHARED_LIMIT_BYTES / 4, 12288);
        assert_eq!(EVEN_SHARED_LIMIT_BYTES / 8, 6144);
    }
}
