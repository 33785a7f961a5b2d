//! The fast byte histogram, [`histogram_bytes`] (into `u32` counts) and
//! [`histogram_bytes_u64`] (the same kernel into `u64` counts, for inputs of more than
//! `u32::MAX` bytes), and the microbenchmark of the shared-memory atomics that bound it,
//! [`histogram_shared_atomic_rate`].
//!
//! [`histogram_bytes`] is the end of the ladder of [`ladder`](super::ladder), with what each
//! step taught and three changes more:
//! - **a sub-histogram per warp** (16 per block of 512), not per block: the shared atomics of a
//!   warp instruction only ever meet those of its own lanes on one address, and 16 warps
//!   counting the same value (a constant input) update 16 different words;
//! - **16-byte loads**: each thread reads 16 bytes per load (`ld.global.nc.v4.u32`, the
//!   read-only path), [`BYTES_UNROLL`] loads in flight before it counts any of them, in a
//!   block-stride loop over a grid of one wave (as many blocks as the device holds at once);
//!   the head before the first 16-byte boundary and the tail after the last whole vector (at
//!   most 15 bytes each: a view may start at any byte) are counted byte by byte;
//! - **runs aggregated per thread across all its bytes** (PMPP §9.6): one `red.shared.add` per
//!   run of equal values in the order the thread counts them, so a constant input issues one
//!   atomic per thread instead of one per byte.
//!
//! At the end the block adds the warps' sub-histograms bin by bin and adds each nonzero bin to
//! global memory with one atomic: at most 256 global atomics per block, so at most 256 times
//! the grid (one wave) per launch, whatever `n`.

use super::even::EvenCounter;
use super::{ATOMIC_ONE_ADDRESS, ATOMIC_RANDOM_BINS, BYTE_BINS, BYTES_UNROLL, BYTES_WARPS};
use crate::coordinates;
use gpu_std::{
    SharedArray, grid_dim, kernel, load_global_nc_v4_u32, red_global_add, red_shared_add,
    static_shared, syncthreads,
};

/// The shared memory of [`histogram_bytes`]: a sub-histogram of 256 `u32` per warp.
type WarpHistograms = SharedArray<u32, { BYTES_WARPS * BYTE_BINS }>;

// The body of `histogram_bytes` names its four vectors in flight.
const _: () = assert!(BYTES_UNROLL == 4);

/// One thread's run of equal byte values: the value and its length so far, flushed to the
/// warp's sub-histogram with one atomic when another value comes.
struct Run {
    /// The shared-window address of the warp's 256 bins.
    base: u32,
    bin: u32,
    len: u32,
}

impl Run {
    /// Counts byte value `b`.
    ///
    /// # Safety
    /// `base` is the shared-window address of 256 `u32` this block may update; `b < 256`.
    #[inline(always)]
    unsafe fn push(&mut self, b: u32) {
        if b == self.bin {
            self.len += 1;
        } else {
            // SAFETY: `self.bin < 256` (a byte, or 0 at the start with a length of 0, which
            // adds nothing).
            unsafe { red_shared_add(self.base + 4 * self.bin, self.len) };
            self.bin = b;
            self.len = 1;
        }
    }

    /// Counts the four bytes of `word`, lowest address first.
    ///
    /// # Safety
    /// As [`Run::push`].
    #[inline(always)]
    unsafe fn push_word(&mut self, word: u32) {
        // SAFETY: forwarded; each value is `< 256`.
        unsafe {
            self.push(word & 0xff);
            self.push((word >> 8) & 0xff);
            self.push((word >> 16) & 0xff);
            self.push(word >> 24);
        }
    }

    /// Counts the 16 bytes of a vector, lowest address first (written out, so that the
    /// vector stays in registers: a loop that LLVM leaves rolled indexes it in local memory).
    ///
    /// # Safety
    /// As [`Run::push`].
    #[inline(always)]
    unsafe fn push_vector(&mut self, v: [u32; 4]) {
        // SAFETY: forwarded.
        unsafe {
            self.push_word(v[0]);
            self.push_word(v[1]);
            self.push_word(v[2]);
            self.push_word(v[3]);
        }
    }

    /// Flushes the last run.
    ///
    /// # Safety
    /// As [`Run::push`].
    #[inline(always)]
    unsafe fn finish(&self) {
        if self.len > 0 {
            // SAFETY: forwarded.
            unsafe { red_shared_add(self.base + 4 * self.bin, self.len) };
        }
    }
}

/// `counts[b] += #{i < n : input[i] == b}` for the 256 byte values, at the speed of reading
/// the input (see the [module docs](self) for the algorithm).
///
/// Launch: blocks of [`BYTES_BLOCK`](super::BYTES_BLOCK) threads (any multiple of 32 up to
/// it works), any grid of at least one block; the host launches one wave
/// (`Gpu::one_wave`), fewer blocks when the input has less than
/// [`BYTES_PER_BLOCK_STEP`](super::BYTES_PER_BLOCK_STEP) bytes per block. 16 KiB of static
/// shared memory.
///
/// Parameters: `input` holds `n` bytes at any address; `counts` 256 `u32` bins, added to
/// (wrapping past `u32::MAX`: the host refuses `n > u32::MAX`).
///
/// # Safety
/// `input` is valid for `n` bytes and not written during the launch; `counts` is valid for
/// 256 `u32`; `blockDim.x` is a multiple of 32 and at most `BYTES_BLOCK`.
///
/// Performance: reads each byte once in 16-byte loads; per byte, a shift, a compare and (on
/// uniform random bytes) one `red.shared.add.u32` to a random bank of the warp's
/// sub-histogram: the shared-atomic throughput with bank conflicts
/// ([`histogram_shared_atomic_rate`] with `ATOMIC_RANDOM_BINS`) is its ceiling there; a
/// constant input costs one atomic per thread and runs at the speed of the loads.
#[kernel]
pub unsafe fn histogram_bytes(input: *const u8, n: usize, counts: *mut u32) {
    let hist = static_shared!(s_histogram_bytes: [u32; BYTES_WARPS * BYTE_BINS]);
    // SAFETY: forwarded to the caller's contract; `hist` is this block's.
    unsafe { bytes_into(input, n, counts, &hist) }
}

/// [`histogram_bytes`] into `u64` counts: `counts[b] += #{i < n : input[i] == b}` for inputs
/// of any length. The warps' sub-histograms stay `u32` (so the loop is the same); each
/// block's sums are added to `counts` with 64-bit atomics.
///
/// Launch: as [`histogram_bytes`], with at least `ceil(n / 2^31)` blocks, so that no block
/// counts more than `u32::MAX` bytes (the host's grid for `n` is at least that).
///
/// Parameters: `input` holds `n` bytes at any address; `counts` 256 `u64` bins, added to.
///
/// # Safety
/// As [`histogram_bytes`], with `counts` valid for 256 `u64` and at least `ceil(n / 2^31)`
/// blocks.
///
/// Performance: as [`histogram_bytes`]; the merge's 256 atomics per block are 64-bit.
#[kernel]
pub unsafe fn histogram_bytes_u64(input: *const u8, n: usize, counts: *mut u64) {
    let hist = static_shared!(s_histogram_bytes_u64: [u32; BYTES_WARPS * BYTE_BINS]);
    // SAFETY: forwarded to the caller's contract; `hist` is this block's.
    unsafe { bytes_into(input, n, counts, &hist) }
}

/// The body of [`histogram_bytes`] and [`histogram_bytes_u64`]: counts into the warps'
/// sub-histograms in `hist`, then adds each block's nonzero bins to `counts` as `C`.
///
/// # Safety
/// As the kernels; `hist` is this block's; no block counts more than `u32::MAX` bytes (so
/// the block's `u32` sums cannot wrap) unless `C` is `u32` (where the counts wrap anyway).
#[inline(always)]
unsafe fn bytes_into<C: EvenCounter>(
    input: *const u8,
    n: usize,
    counts: *mut C,
    hist: &WarpHistograms,
) {
    let (tid, block, bid) = coordinates();
    let threads = block * grid_dim().x as usize;
    let warps = block / 32;
    // SAFETY (the whole body): the caller's contract covers `input[..n]` (read only, so the
    // non-coherent path is sound) and `counts`; every global read below is inside `input[..n]`
    // (the head below `head <= n`, the vectors below `head + 16 vectors <= n`, the tail below
    // `n`), 16-byte loads at `body + 16 v` with `body` 16-byte aligned; `warp < warps <=
    // BYTES_WARPS`, so the warp's 256 bins lie inside `hist`.
    unsafe {
        let mut j = tid;
        while j < warps * BYTE_BINS {
            hist.write(j, 0);
            j += block;
        }
        syncthreads();
        let mut run = Run {
            base: hist.shared_address() + (4 * BYTE_BINS * (tid / 32)) as u32,
            bin: 0,
            len: 0,
        };

        // The unaligned head and the tail: byte by byte, by the first threads of block 0.
        let misalign = input as usize & 15;
        let head = if misalign == 0 {
            0
        } else {
            (16 - misalign).min(n)
        };
        let vectors = (n - head) / 16;
        let tail = head + 16 * vectors;
        let body = input.add(head).cast::<u32>();
        if bid == 0 {
            if tid < head {
                red_shared_add(run.base + 4 * *input.add(tid) as u32, 1u32);
            }
            if tail + tid < n {
                red_shared_add(run.base + 4 * *input.add(tail + tid) as u32, 1u32);
            }
        }

        // The body: BYTES_UNROLL (4) vectors in flight, each warp load one 512-byte run; the
        // four are named, not an array, so that they stay in registers.
        let mut v = bid * block + tid;
        while v + (BYTES_UNROLL - 1) * threads < vectors {
            let w0 = load_global_nc_v4_u32(body.add(4 * v));
            let w1 = load_global_nc_v4_u32(body.add(4 * (v + threads)));
            let w2 = load_global_nc_v4_u32(body.add(4 * (v + 2 * threads)));
            let w3 = load_global_nc_v4_u32(body.add(4 * (v + 3 * threads)));
            run.push_vector(w0);
            run.push_vector(w1);
            run.push_vector(w2);
            run.push_vector(w3);
            v += BYTES_UNROLL * threads;
        }
        while v < vectors {
            run.push_vector(load_global_nc_v4_u32(body.add(4 * v)));
            v += threads;
        }
        run.finish();
        syncthreads();

        // The warps' sub-histograms added, and each nonzero bin added to global memory.
        let mut b = tid;
        while b < BYTE_BINS {
            let mut sum = 0u32;
            for w in 0..warps {
                sum = sum.wrapping_add(hist.read(w * BYTE_BINS + b));
            }
            if sum != 0 {
                red_global_add(counts.add(b), C::from(sum));
            }
            b += block;
        }
    }
}

/// The shared-memory atomic microbenchmark: every thread issues `iterations`
/// `red.shared.add.u32` to its warp's 256 words, on the addresses `pattern` names:
/// - [`ATOMIC_DISTINCT_BANKS`](super::ATOMIC_DISTINCT_BANKS): lane `l` always word `l`, 32
///   banks, no conflict (the ceiling);
/// - [`ATOMIC_ONE_ADDRESS`]: every lane word 0 (a constant input
///   without aggregation);
/// - [`ATOMIC_RANDOM_BINS`]: each lane a pseudo-random word of the
///   256 at each step (an LCG per lane: uniform random bytes, with their bank conflicts).
///
/// Then thread 0 of each block adds its block's word 0 to `sink[0]` (so the work is
/// observable).
///
/// Launch: blocks of [`ATOMIC_RATE_BLOCK`](super::ATOMIC_RATE_BLOCK) threads (any multiple of
/// 32 up to it), any grid (the host launches one wave). 16 KiB of static shared memory.
/// Shared atomics issued: `gridDim.x * blockDim.x * iterations`.
///
/// # Safety
/// `sink` is valid for one `u32`; `blockDim.x` is a multiple of 32 and at most
/// `ATOMIC_RATE_BLOCK`.
///
/// Performance: bound by the SM's shared-memory atomic unit: compare the three patterns'
/// rates with what [`histogram_bytes`] needs per second (one atomic per byte on random
/// data).
#[kernel]
pub unsafe fn histogram_shared_atomic_rate(iterations: u32, pattern: u32, sink: *mut u32) {
    let hist = static_shared!(s_histogram_atomic_rate: [u32; BYTES_WARPS * BYTE_BINS]);
    let (tid, block, bid) = coordinates();
    let lane = (tid % 32) as u32;
    // SAFETY: every address is one of the warp's 256 words, `tid / 32 < BYTES_WARPS` (the
    // caller's block size); `sink` is the caller's.
    unsafe {
        let mut j = tid;
        while j < (block / 32) * BYTE_BINS {
            hist.write(j, 0);
            j += block;
        }
        syncthreads();
        let base = hist.shared_address() + (4 * BYTE_BINS * (tid / 32)) as u32;
        if pattern == ATOMIC_RANDOM_BINS {
            let mut x =
                (bid as u32).wrapping_mul(0x9e37_79b9) ^ (tid as u32).wrapping_mul(747_796_405);
            for _ in 0..iterations {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                red_shared_add(base + 4 * (x >> 24), 1u32);
            }
        } else {
            let address = if pattern == ATOMIC_ONE_ADDRESS {
                base
            } else {
                base + 4 * lane
            };
            let mut i = 0;
            while i + 8 <= iterations {
                for _ in 0..8 {
                    red_shared_add(address, 1u32);
                }
                i += 8;
            }
            while i < iterations {
                red_shared_add(address, 1u32);
                i += 1;
            }
        }
        syncthreads();
        if tid == 0 {
            red_global_add(sink, hist.read(0));
        }
    }
}
