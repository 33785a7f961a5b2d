//! The read-only bandwidth ceiling: a kernel that only reads device memory, as fast as a
//! kernel can, so that a reduction (which reads its input and writes almost nothing) is judged
//! against what reading alone reaches in the same run, not against a copy's read + write.
//!
//! Beyond the seeds: the read half of `bandwidthTest`'s device-to-device copy, done by a
//! kernel. The host (`cpu::memory::read_stream`) times both entries at a few grid sizes and
//! keeps the fastest.

/// Threads per block the host launches (any multiple of 32 up to 1024 works).
pub const READ_STREAM_BLOCK: u32 = 256;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::static_shared;
    use gpu_std::{
        FULL_MASK, SharedArray, block_dim, block_idx, grid_dim, load_global_nc_v4_u32,
        shfl_down_sync, syncthreads, thread_idx,
    };

    /// The four words of a 16-byte group added to `acc`, modulo 2^32.
    #[inline(always)]
    fn add4(acc: u32, w: [u32; 4]) -> u32 {
        acc.wrapping_add(w[0])
            .wrapping_add(w[1])
            .wrapping_add(w[2])
            .wrapping_add(w[3])
    }

    /// Sum of a block's `v` (mod 2^32) in thread 0: a shuffle tree per warp, warp totals
    /// through shared memory, a shuffle tree in warp 0. Every thread of the block calls it.
    ///
    /// # Safety
    /// `warp_totals` is this block's shared array; the block has whole warps, at most 1024
    /// threads.
    #[inline(always)]
    unsafe fn block_sum(v: u32, warp_totals: &SharedArray<u32, 32>) -> u32 {
        let tid = thread_idx().x as usize;
        let warps = block_dim().x as usize / 32;
        let warp_tree = |mut v: u32| {
            let mut offset = 16;
            while offset > 0 {
                v = v.wrapping_add(shfl_down_sync(FULL_MASK, v, offset));
                offset /= 2;
            }
            v
        };
        let v = warp_tree(v);
        if tid.is_multiple_of(32) {
            // SAFETY: `tid / 32 < 32`; each warp's lane 0 writes its own slot.
            unsafe { warp_totals.write(tid / 32, v) };
        }
        syncthreads();
        let mut total = 0;
        if tid < 32 {
            if tid < warps {
                // SAFETY: slot `tid < warps` was written before the barrier.
                total = unsafe { warp_totals.read(tid) };
            }
            total = warp_tree(total);
        }
        total
    }

    /// The body of both entries: `LOADS` independent 16-byte loads in flight per thread.
    ///
    /// # Safety
    /// As [`read_stream_x4`].
    #[inline(always)]
    unsafe fn read_stream<const LOADS: usize>(
        input: *const u32,
        n: usize,
        partials: *mut u32,
        warp_totals: &SharedArray<u32, 32>,
    ) {
        let (tid, block, bid) = (
            thread_idx().x as usize,
            block_dim().x as usize,
            block_idx().x as usize,
        );
        let stride = grid_dim().x as usize * block;
        let groups = n / 4;
        let t = bid * block + tid;
        let mut acc = 0u32;
        let mut g = t;
        // Main loop: every load of an iteration is issued before any of them is used.
        while g + (LOADS - 1) * stride < groups {
            let mut w = [[0u32; 4]; LOADS];
            let mut u = 0;
            while u < LOADS {
                // SAFETY: group `g + u * stride < groups`, so its four words are below `n`;
                // 16-byte aligned because `input` is.
                w[u] = unsafe { load_global_nc_v4_u32(input.add(4 * (g + u * stride))) };
                u += 1;
            }
            let mut u = 0;
            while u < LOADS {
                acc = add4(acc, w[u]);
                u += 1;
            }
            g += LOADS * stride;
        }
        while g < groups {
            // SAFETY: as above, for one group.
            acc = add4(acc, unsafe { load_global_nc_v4_u32(input.add(4 * g)) });
            g += stride;
        }
        // The last n % 4 words: one each for the grid's first threads.
        let tail = 4 * groups + t;
        if tail < n {
            // SAFETY: `tail < n`.
            acc = acc.wrapping_add(unsafe { *input.add(tail) });
        }
        // SAFETY: every thread of the block calls `block_sum`; the caller's contract covers
        // `partials` (one word per block).
        unsafe {
            let total = block_sum(acc, warp_totals);
            if tid == 0 {
                *partials.add(bid) = total;
            }
        }
    }

    /// Reads `n` words and writes, per block, the sum (mod 2^32) of the words it read into
    /// `partials[blockIdx.x]`: the sum of `partials` is the sum of the input, so every load
    /// is needed and none can be dropped by the compiler, while the kernel writes only one
    /// word per block.
    ///
    /// Algorithm: grid-stride loop over 16-byte groups (`ld.global.nc.v4.u32`, the read-only
    /// path), 4 loads issued per thread before any is added (memory-level parallelism: 64
    /// bytes in flight per thread); a register accumulator; warp shuffles and shared memory
    /// for the block sum. The `n % 4` words after the last group are added one each by the
    /// grid's first threads.
    ///
    /// Launch: blocks of a multiple of 32 threads up to 1024 (the host uses
    /// [`READ_STREAM_BLOCK`](super::READ_STREAM_BLOCK)), any grid (the host tries one wave of
    /// resident blocks and twice that).
    ///
    /// Parameters: `input`, `n` words; `partials`, `gridDim.x` words.
    ///
    /// # Safety
    /// `input` is 16-byte aligned, valid for `n` words and not written during the launch;
    /// `partials` is valid for `gridDim.x` words that nothing else touches during the launch.
    ///
    /// Performance: 4 bytes read per word, 4 bytes written per block; bound by DRAM read
    /// bandwidth for inputs beyond the L2.
    #[kernel]
    pub unsafe fn read_stream_x4(input: *const u32, n: usize, partials: *mut u32) {
        let warp_totals = static_shared!(s_read_stream_x4: [u32; 32]);
        // SAFETY: forwarded to the caller's contract.
        unsafe { read_stream::<4>(input, n, partials, &warp_totals) }
    }

    /// As [`read_stream_x4`] with 8 loads in flight per thread (128 bytes).
    ///
    /// Launch, Parameters, Performance: as [`read_stream_x4`].
    ///
    /// # Safety
    /// As [`read_stream_x4`].
    #[kernel]
    pub unsafe fn read_stream_x8(input: *const u32, n: usize, partials: *mut u32) {
        let warp_totals = static_shared!(s_read_stream_x8: [u32; 32]);
        // SAFETY: forwarded to the caller's contract.
        unsafe { read_stream::<8>(input, n, partials, &warp_totals) }
    }
}
