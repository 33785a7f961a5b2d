//! Shared-memory bank conflicts (seed "cuda 学习之内存层次结构", "共享内存-Bank Conflict"):
//! shared memory is 32 banks of 4-byte words, word `w` in bank `w % 32`. A warp's access is
//! served in as many passes (wavefronts) as the largest number of *distinct* words it touches
//! in one bank: stride 1 or any odd stride is conflict-free, stride 2 is 2-way, stride 2^k is
//! 2^k-way up to 32-way; lanes reading the same word are served together (broadcast when all
//! lanes read one word, multicast when several groups do).
//!
//! One kernel measures every pattern: lane `l` of each warp reads word
//! `(l / group) * stride + 32 * r` in repetition `r` (adding a multiple of 32 keeps the banks),
//! `REPS` times, and the block's SM clock cycles (`clock64`) per warp access are recorded. The
//! padded layout of a transpose tile, `tile[32][33]` read down a column, is stride 33; the
//! unpadded `tile[32][32]` is stride 32.

/// Threads per block: 32 warps, enough to keep the SM's shared-memory pipe busy.
pub const BLOCK_SIZE: u32 = 1024;
/// Words of the shared array (16 KiB).
pub const SHARED_WORDS: usize = 4096;
/// Largest stride the kernel accepts (31 * 128 + 32 * reps stays inside the array via a mask).
pub const MAX_STRIDE: u32 = 128;

/// The kernels (device build only).
pub mod kernels {
    use super::SHARED_WORDS;
    use gpu_std::kernel;
    use gpu_std::static_shared;
    use gpu_std::{block_dim, block_idx, clock64, lane_id, syncthreads, thread_idx};

    /// `ld.volatile.shared.u32` of the word at generic address `p`: an explicit shared-space
    /// load (not a generic one), kept even though its value repeats.
    ///
    /// # Safety
    /// `p` points into this block's shared memory.
    #[inline(always)]
    #[gpu_std::gpu_only]
    unsafe fn load_shared(p: *const u32) -> u32 {
        let v: u32;
        // SAFETY: the caller guarantees a shared-memory address; `cvta.to.shared` converts it.
        unsafe {
            core::arch::asm!(
                "cvta.to.shared.u64 {s}, {p};\n\tld.volatile.shared.u32 {v}, [{s}];",
                v = out(reg32) v, p = in(reg64) p, s = out(reg64) _,
                options(nostack, readonly));
        }
        v
    }

    /// Each lane reads word `((lane / group) * stride + 32 * r) % SHARED_WORDS` for
    /// `r in 0..reps`; thread 0 of each block writes the block's elapsed SM cycles to
    /// `cycles[blockIdx.x]`, and every thread writes the XOR of what it read to
    /// `sink[global index]` (so the loads are not removed, and the host checks the values).
    ///
    /// The array holds `word = index * 2654435761 mod 2^32` so the sink can be verified.
    ///
    /// Launch: blocks of [`BLOCK_SIZE`](super::BLOCK_SIZE) threads (any multiple of 32 works);
    /// any grid (the host uses one block per SM). `group >= 1`.
    ///
    /// # Safety
    /// `cycles` holds `gridDim.x` `u64`; `sink` holds `gridDim.x * blockDim.x` `u32`.
    #[kernel]
    pub unsafe fn bank_conflicts_read(
        stride: u32,
        group: u32,
        reps: u32,
        cycles: *mut u64,
        sink: *mut u32,
    ) {
        let words = static_shared!(s_bank_conflicts: [u32; SHARED_WORDS]);
        let tid = thread_idx().x as usize;
        let block = block_dim().x as usize;
        let mut w = tid;
        while w < SHARED_WORDS {
            // SAFETY: `w < SHARED_WORDS`; each word is written by one thread.
            unsafe { words.write(w, (w as u32).wrapping_mul(2_654_435_761)) };
            w += block;
        }
        syncthreads();
        let base = (lane_id() / group.max(1)).wrapping_mul(stride);
        let mask = SHARED_WORDS as u32 - 1;
        let mut acc = 0u32;
        let start = clock64();
        let mut r = 0;
        while r < reps {
            let index = (base.wrapping_add(32 * r) & mask) as usize;
            // SAFETY: `index < SHARED_WORDS` (masked); the array is only read after the barrier.
            acc ^= unsafe { load_shared(words.as_ptr().add(index)) };
            r += 1;
        }
        syncthreads();
        let end = clock64();
        let b = block_idx().x as usize;
        // SAFETY: `b < gridDim.x` and `b * block + tid < gridDim.x * blockDim.x`.
        unsafe {
            if tid == 0 {
                *cycles.add(b) = end - start;
            }
            *sink.add(b * block + tid) = acc;
        }
    }
}
