//! Sum of squares of `i32`: the seven versions of the seed "【转】CUDA优化小记录"
//! (`DATA_SIZE = 1048576` random ints, `THREAD_NUM = 256`, `BLOCK_NUM = 32`), each a step of
//! the classic "CUDA 程序优化" walk from one thread to a tree reduction in shared memory.
//!
//! Arithmetic is `i32` modulo 2^32 (the GPU's `mul.lo.s32` / `add.s32`), so the host's exact
//! wrapping reference matches every summation order. Each kernel writes partial sums (one per
//! thread or per block, as in the seed) and the host adds them, as the seed does on the CPU.
//!
//! Bugs of the seed fixed here, its ideas kept: versions 1-4 accumulated into output memory that
//! was never zeroed (`*pOut += ...`); they now accumulate in a register and store once.
//! Version 2 dropped the last `n % 256` elements (`computeSize = n / THREAD_NUM`); chunks are
//! now `ceil(n / 256)` long and clipped at `n`. Version 5 added into uninitialised shared memory
//! and its serial loop skipped `sharedData[0]`; version 7's last six steps assumed a warp runs in
//! lock step, a race since Volta; it now uses `__syncwarp` between volatile steps.
//!
//! Each kernel is named for what its version changes (`square_sum_single_thread`,
//! `square_sum_one_block_chunked`, ..., `square_sum_shared_tree_unrolled`); the seed's numbers
//! 1 to 7 label them in the docs and in the demo's table.

/// The seed's `THREAD_NUM`: threads per block of versions 2 to 7.
pub const THREAD_NUM: u32 = 256;
/// The seed's `BLOCK_NUM`: blocks of versions 4 to 7.
pub const BLOCK_NUM: u32 = 32;
/// The seed's `DATA_SIZE`.
pub const DATA_SIZE: usize = 1_048_576;

/// The kernels (device build only).
pub mod kernels {
    use super::THREAD_NUM;
    use gpu_std::kernel;
    use gpu_std::reduce::{Reduction, device_reduce};
    use gpu_std::static_shared;
    use gpu_std::{
        FULL_MASK, SharedArray, block_dim, block_idx, grid_dim, syncthreads, syncwarp, thread_idx,
    };

    const THREADS: usize = THREAD_NUM as usize;

    /// `x * x` in `i32` modulo 2^32.
    #[inline(always)]
    fn square(x: i32) -> i32 {
        x.wrapping_mul(x)
    }

    /// This thread's grid-stride sum of squares (the loop of versions 4 to 7): elements
    /// `blockIdx.x * blockDim.x + threadIdx.x`, then every `gridDim.x * blockDim.x`.
    ///
    /// # Safety
    /// `input` is valid for `n` elements.
    #[inline(always)]
    unsafe fn grid_stride_sum(input: *const i32, n: usize) -> i32 {
        let block = block_dim().x as usize;
        let stride = grid_dim().x as usize * block;
        let mut i = block_idx().x as usize * block + thread_idx().x as usize;
        let mut sum = 0i32;
        while i < n {
            // SAFETY: `i < n`.
            sum = sum.wrapping_add(square(unsafe { *input.add(i) }));
            i += stride;
        }
        sum
    }

    /// Seed version 1: one thread walks the whole array and writes `out[0]`.
    ///
    /// Why it is slow: one thread has one load in flight at a time; the GPU's thousands of
    /// threads and its memory bandwidth stay unused. Latency-bound.
    ///
    /// Launch: 1 block of 1 thread. `out` holds 1 `i32`.
    ///
    /// # Safety
    /// `input` is valid for `n` `i32`; `out` for one.
    #[kernel]
    pub unsafe fn square_sum_single_thread(input: *const i32, n: usize, out: *mut i32) {
        let mut sum = 0i32;
        for i in 0..n {
            // SAFETY: `i < n`.
            sum = sum.wrapping_add(square(unsafe { *input.add(i) }));
        }
        // SAFETY: `out` holds one element.
        unsafe { *out = sum };
    }

    /// Seed version 2: one block of `THREAD_NUM` threads; thread `t` sums the contiguous chunk
    /// `[t*c, (t+1)*c)` with `c = ceil(n / blockDim.x)`, clipped at `n`, into `out[t]`. (The
    /// seed also moves the host array to pinned memory for a faster upload.)
    ///
    /// Why it is only a little faster: 256 loads in flight instead of 1, but the lanes of a
    /// warp read addresses `c` words apart, so each warp load touches 32 different memory
    /// segments (uncoalesced).
    ///
    /// Launch: 1 block of any size; `out` holds `blockDim.x` `i32`.
    ///
    /// # Safety
    /// `input` is valid for `n` `i32`; `out` for `blockDim.x`.
    #[kernel]
    pub unsafe fn square_sum_one_block_chunked(input: *const i32, n: usize, out: *mut i32) {
        let t = thread_idx().x as usize;
        let chunk = n.div_ceil(block_dim().x as usize);
        let start = (t * chunk).min(n);
        let end = (start + chunk).min(n);
        let mut sum = 0i32;
        for i in start..end {
            // SAFETY: `i < end <= n`.
            sum = sum.wrapping_add(square(unsafe { *input.add(i) }));
        }
        // SAFETY: `t < blockDim.x = len(out)`.
        unsafe { *out.add(t) = sum };
    }

    /// Seed version 3: one block; thread `t` sums elements `t, t + blockDim.x, ...` into `out[t]`.
    /// Consecutive lanes now read consecutive words: each warp load is one 128-byte
    /// transaction (coalesced).
    ///
    /// Launch: 1 block of any size; `out` holds `blockDim.x` `i32`.
    ///
    /// # Safety
    /// As [`square_sum_one_block_chunked`].
    #[kernel]
    pub unsafe fn square_sum_one_block_strided(input: *const i32, n: usize, out: *mut i32) {
        let t = thread_idx().x as usize;
        // SAFETY: with one block the grid-stride loop is the block-stride loop; `t < len(out)`.
        unsafe { *out.add(t) = grid_stride_sum(input, n) };
    }

    /// Seed version 4: `BLOCK_NUM` blocks of `THREAD_NUM` threads, grid-stride, one partial per
    /// thread in `out[blockIdx.x * blockDim.x + threadIdx.x]`. Several SMs work at once.
    ///
    /// Launch: any grid and block; `out` holds `gridDim.x * blockDim.x` `i32`.
    ///
    /// # Safety
    /// `input` is valid for `n` `i32`; `out` for `gridDim.x * blockDim.x`.
    #[kernel]
    pub unsafe fn square_sum_grid_stride(input: *const i32, n: usize, out: *mut i32) {
        let g = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
        // SAFETY: `g < gridDim.x * blockDim.x = len(out)`.
        unsafe { *out.add(g) = grid_stride_sum(input, n) };
    }

    /// Stores this thread's sum in the block's shared array and waits for the block.
    ///
    /// # Safety
    /// Every thread of a block of exactly `THREAD_NUM` threads calls it.
    #[inline(always)]
    unsafe fn to_shared(shared: &SharedArray<i32, THREADS>, sum: i32) {
        // SAFETY: `threadIdx.x < THREAD_NUM`; each thread writes its own slot.
        unsafe { shared.write(thread_idx().x as usize, sum) };
        syncthreads();
    }

    /// Seed version 5: as version 4, then each block's partials go to shared memory and thread 0
    /// adds them serially into `out[blockIdx.x]`: 32 partials for the host instead of 8192.
    /// (The block's other 255 threads idle during that serial loop.)
    ///
    /// Launch: blocks of exactly `THREAD_NUM` (256) threads, any grid; `out` holds `gridDim.x`.
    ///
    /// # Safety
    /// `input` is valid for `n` `i32`; `out` for `gridDim.x`.
    #[kernel]
    pub unsafe fn square_sum_shared_serial(input: *const i32, n: usize, out: *mut i32) {
        let shared = static_shared!(s_square_sum_shared_serial: [i32; THREADS]);
        // SAFETY: the caller's contract; every thread reaches the barrier in `to_shared`.
        unsafe {
            to_shared(&shared, grid_stride_sum(input, n));
            if thread_idx().x == 0 {
                let mut sum = 0i32;
                for i in 0..THREADS {
                    sum = sum.wrapping_add(shared.read(i));
                }
                *out.add(block_idx().x as usize) = sum;
            }
        }
    }

    /// Seed version 6: as version 5, but the block's partials are added by a tree in shared
    /// memory (the seed's mask form: in step `k`, threads whose low `k` bits are zero add the
    /// word `2^(k-1)` further on), `log2(256) = 8` steps with a barrier each instead of 255
    /// serial adds.
    ///
    /// Launch: As [`square_sum_shared_serial`].
    ///
    /// # Safety
    /// As [`square_sum_shared_serial`].
    #[kernel]
    pub unsafe fn square_sum_shared_tree(input: *const i32, n: usize, out: *mut i32) {
        let shared = static_shared!(s_square_sum_shared_tree: [i32; THREADS]);
        let t = thread_idx().x as usize;
        // SAFETY: the caller's contract; every thread reaches every barrier.
        unsafe {
            to_shared(&shared, grid_stride_sum(input, n));
            let (mut offset, mut mask) = (1, 1);
            while offset < THREADS {
                if t & mask == 0 {
                    // `t` has its low bits clear, so `t + offset < THREADS`; the word at
                    // `t + offset` has bit `offset` set and is not written in this step.
                    shared.write(t, shared.read(t).wrapping_add(shared.read(t + offset)));
                }
                offset += offset;
                mask += offset;
                syncthreads();
            }
            if t == 0 {
                *out.add(block_idx().x as usize) = shared.read(0);
            }
        }
    }

    /// Seed version 7: as version 6 with the tree unrolled for 256 threads and the interleaved
    /// (sequential-address) order: `t < 128` adds `t + 128`, then 64, then 32 with barriers;
    /// warp 0 does the last five steps (16, 8, 4, 2, 1) without block barriers. Fewer branches
    /// and no bank conflicts (consecutive lanes touch consecutive words).
    ///
    /// The seed relied on a warp running in lock step there; since Volta that is a race, so
    /// the steps are separated by `__syncwarp()` with volatile shared accesses, and each step
    /// only lets the lanes that add write.
    ///
    /// Launch: As [`square_sum_shared_serial`].
    ///
    /// # Safety
    /// As [`square_sum_shared_serial`].
    #[kernel]
    pub unsafe fn square_sum_shared_tree_unrolled(input: *const i32, n: usize, out: *mut i32) {
        let shared = static_shared!(s_square_sum_shared_tree_unrolled: [i32; THREADS]);
        let t = thread_idx().x as usize;
        // SAFETY: the caller's contract; every thread reaches every block barrier, all 32
        // lanes of warp 0 reach every `__syncwarp`.
        unsafe {
            to_shared(&shared, grid_stride_sum(input, n));
            let mut stride = THREADS / 2;
            while stride >= 32 {
                if t < stride {
                    shared.write(t, shared.read(t).wrapping_add(shared.read(t + stride)));
                }
                syncthreads();
                stride /= 2;
            }
            if t < 32 {
                let mut offset = 16;
                while offset > 0 {
                    if t < offset {
                        let sum = shared
                            .read_volatile(t)
                            .wrapping_add(shared.read_volatile(t + offset));
                        shared.write_volatile(t, sum);
                    }
                    syncwarp(FULL_MASK);
                    offset /= 2;
                }
            }
            if t == 0 {
                *out.add(block_idx().x as usize) = shared.read(0);
            }
        }
    }

    /// `i32` whose contribution to the sum is `x * x`, modulo 2^32.
    struct Squared;

    impl Reduction for Squared {
        type Item = i32;
        type Acc = i32;
        const IDENTITY: i32 = 0;
        #[inline(always)]
        fn lift(item: i32, _index: usize) -> i32 {
            square(item)
        }
        #[inline(always)]
        fn combine(a: i32, b: i32) -> i32 {
            a.wrapping_add(b)
        }
    }

    /// Beyond the seed, the version to call: the sum of squares in one launch, the whole
    /// result on the GPU. It is [`reduce_sum_i32`](crate::reduce::sum::reduce_sum_i32)
    /// with `x * x` applied to each element as it is loaded: grid-stride `int4` loads
    /// (four in flight per thread), a register accumulator, warp shuffles instead of the shared
    /// tree of version 7, and the last block to finish adding the block partials instead of
    /// the host.
    ///
    /// Launch: As `reduce_sum_i32` (blocks of [`REDUCE_SUM_BLOCK`](crate::reduce::REDUCE_SUM_BLOCK) threads; `input` 4-byte aligned (any view), `n` elements; `partials` `gridDim.x`; `counter` a zero `u32`; `result` one `i32`).
    ///
    /// # Safety
    /// As `reduce_sum_i32` (blocks of [`REDUCE_SUM_BLOCK`](crate::reduce::REDUCE_SUM_BLOCK) threads; `input` 4-byte aligned (any view), `n` elements; `partials` `gridDim.x`; `counter` a zero `u32`; `result` one `i32`).
    #[kernel]
    pub unsafe fn square_sum_reduce(
        input: *const i32,
        n: usize,
        partials: *mut i32,
        counter: *mut u32,
        result: *mut i32,
    ) {
        let warp_totals = static_shared!(s_square_sum_reduce: [i32; 32]);
        // SAFETY: forwarded to the caller's contract.
        unsafe { device_reduce::<Squared>(input, n, partials, counter, result, &warp_totals) }
    }
}
