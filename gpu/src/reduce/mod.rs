//! Parallel reduction (sum): the nine kernels of the seed "cuda 并行归约" (from *Professional
//! CUDA C Programming*, chapter 3, `reduceInteger.cu`), made correct on Volta and newer, and
//! [`reduce_sum`](kernels::reduce_sum_f32), the one-launch reduction a user should call.
//!
//! # The seed's kernels
//! Each block reduces its own slice of the array **in place in global memory** (as the book
//! does) and writes one partial sum per block to `partials[blockIdx.x]`; the host adds the
//! partials. The array is `i32` and sums wrap modulo 2^32 (the GPU's integer add), so every
//! order of summation gives the same result and the CPU reference is exact.
//!
//! Their contract is the book's with the ragged tail made explicit: `data` holds exactly
//! `gridDim.x * blockDim.x * UNROLL` elements (`UNROLL` is 1, 2, 4 or 8 data blocks per thread
//! block), the block size is a power of two (at least 64 for the kernels that unroll the last
//! warp), and the host pads the array with zeros (the identity of `+`) up to that length, so
//! no element is dropped whatever `n` is. The host keeps the input elsewhere: the kernels
//! destroy `data`.
//!
//! # Volta and the "last warp" trick
//! The book unrolls the last six steps for the 32 threads of warp 0 without barriers, relying
//! on the warp running in lock step (`volatile int *vmem`). Since Volta (independent thread
//! scheduling) lanes of a warp may interleave arbitrarily, so that code is a data race. The
//! kernels here keep its shape (no block barrier, volatile accesses, lanes halving each step)
//! but order the steps with `__syncwarp()` ([`syncwarp`](crate::device::syncwarp)), and each
//! step only lets the lanes that add write, so no lane reads a word another lane writes in the
//! same step.

/// Entry name of the seed's "相邻(分化)" kernel, `reduceNeighbored`.
pub const REDUCE_NEIGHBORED: &str = "reduce_neighbored";
/// Entry name of the seed's "相邻(无分化)" kernel, `reduceNeighboredLess`.
pub const REDUCE_NEIGHBORED_LESS: &str = "reduce_neighbored_less";
/// Entry name of the seed's "交错" kernel, `reduceInterleaved`.
pub const REDUCE_INTERLEAVED: &str = "reduce_interleaved";
/// Entry name of the seed's "展开2块" kernel, `reduceUnrolling2`.
pub const REDUCE_UNROLL2: &str = "reduce_unroll2";
/// Entry name of the seed's "展开4块" kernel, `reduceUnrolling4`.
pub const REDUCE_UNROLL4: &str = "reduce_unroll4";
/// Entry name of the seed's "展开8块" kernel, `reduceUnrolling8`.
pub const REDUCE_UNROLL8: &str = "reduce_unroll8";
/// Entry name of the seed's "展开8块+最后的线程束" kernel, `reduceUnrollWarps8`.
pub const REDUCE_UNROLL_WARPS8: &str = "reduce_unroll_warps8";
/// Entry name of the seed's "展开8块+循环+最后的线程束" kernel, `reduceCompleteUnrollWarps8`.
pub const REDUCE_COMPLETE_UNROLL_WARPS8: &str = "reduce_complete_unroll_warps8";

/// The seed's "模板化内核" (`reduceCompleteUnroll<iBlockSize>`): one entry per block size,
/// `(block size, entry name)`, all generated from one const-generic body.
pub const REDUCE_COMPLETE_UNROLL: [(u32, &str); 5] = [
    (64, "reduce_complete_unroll_64"),
    (128, "reduce_complete_unroll_128"),
    (256, "reduce_complete_unroll_256"),
    (512, "reduce_complete_unroll_512"),
    (1024, "reduce_complete_unroll_1024"),
];

/// Entry name of [`reduce_sum_i32`](kernels::reduce_sum_i32).
pub const REDUCE_SUM_I32: &str = "reduce_sum_i32";
/// Entry name of [`reduce_sum_f32`](kernels::reduce_sum_f32).
pub const REDUCE_SUM_F32: &str = "reduce_sum_f32";
/// Entry name of [`reduce_sum_f32_f64`](kernels::reduce_sum_f32_f64).
pub const REDUCE_SUM_F32_F64: &str = "reduce_sum_f32_f64";

/// Block size of the seed's launches (grid 32768 x 512 for 2^24 elements).
pub const SEED_BLOCK: u32 = 512;
/// Elements in the seed's array: 2^24 `int`s.
pub const SEED_N: usize = 1 << 24;

/// Threads per block of the `reduce_sum` kernels (8 warps; the last-block pass reduces at most
/// `gridDim.x` partials with them).
pub const REDUCE_SUM_BLOCK: u32 = 256;
/// `float4`/`int4` loads each thread issues per loop trip of `reduce_sum` before adding any of
/// them (memory-level parallelism).
pub const REDUCE_SUM_UNROLL: usize = 4;

pub mod square_sum;

/// The kernels (device build only).
#[cfg(target_arch = "nvptx64")]
pub mod kernels {
    use crate::device::{
        FULL_MASK, SharedArray, WarpShuffle, atomic_add, block_dim, block_idx, grid_dim,
        load_global_nc_v4_u32, shfl_down_sync, syncthreads, syncthreads_or, syncwarp, thread_idx,
        threadfence,
    };
    use crate::static_shared;

    /// This thread's index in the block and the block's size and index, as `usize`.
    #[inline(always)]
    fn coordinates() -> (usize, usize, usize) {
        (
            thread_idx().x as usize,
            block_dim().x as usize,
            block_idx().x as usize,
        )
    }

    /// `*p += *q` on global memory, wrapping.
    ///
    /// # Safety
    /// Both pointers are valid; no other thread accesses them concurrently.
    #[inline(always)]
    unsafe fn add_into(p: *mut i32, q: *const i32) {
        // SAFETY: forwarded to the caller.
        unsafe { *p = (*p).wrapping_add(*q) };
    }

    /// The seed's interleaved tree over one block's `blockDim.x` words at `idata`, from stride
    /// `blockDim.x / 2` down to `stop` (exclusive), one block barrier per step.
    ///
    /// # Safety
    /// `idata` is valid for `blockDim.x` words owned by this block; every thread of the block
    /// calls it (it contains barriers).
    #[inline(always)]
    unsafe fn interleaved_tree(idata: *mut i32, tid: usize, block: usize, stop: usize) {
        let mut stride = block / 2;
        while stride > stop {
            if tid < stride {
                // SAFETY: `tid + stride < block`; in this step only thread `tid` writes word
                // `tid`, and word `tid + stride` is not written (it is at least `stride`).
                unsafe { add_into(idata.add(tid), idata.add(tid + stride)) };
            }
            syncthreads();
            stride /= 2;
        }
    }

    /// The book's unrolled last warp, race-free since Volta: lanes `0..32` of warp 0 add the
    /// words `[tid + 32]`, `[tid + 16]`, ..., `[tid + 1]` into `[tid]` with volatile accesses;
    /// in the step of offset `k` only lanes `tid < k` write, and `__syncwarp` orders the steps.
    ///
    /// # Safety
    /// Called by all 32 lanes of warp 0 (and only them) after a block barrier; `idata` is valid
    /// for 64 words owned by this block.
    #[inline(always)]
    unsafe fn last_warp(idata: *mut i32, tid: usize) {
        let mut offset = 32;
        while offset > 0 {
            if tid < offset {
                // SAFETY: `tid + offset < 64`; the written word (`tid < offset`) is never read
                // in this step (reads are at `offset` or above); volatile keeps every access.
                unsafe {
                    let sum = idata
                        .add(tid)
                        .read_volatile()
                        .wrapping_add(idata.add(tid + offset).read_volatile());
                    idata.add(tid).write_volatile(sum);
                }
            }
            syncwarp(FULL_MASK);
            offset /= 2;
        }
    }

    /// The seed's preamble of the unrolled kernels: thread `tid` of block `b` adds the `U`
    /// data blocks `b*U .. b*U + U` element-wise into the first, in registers, and returns a
    /// pointer to that first data block.
    ///
    /// # Safety
    /// `data` holds `gridDim.x * blockDim.x * U` words.
    #[inline(always)]
    unsafe fn unroll_data_blocks<const U: usize>(data: *mut i32) -> *mut i32 {
        let (tid, block, bid) = coordinates();
        let base = bid * block * U;
        let idx = base + tid;
        // SAFETY: `idx + (U - 1) * block < (bid + 1) * block * U <= len(data)`; each thread
        // touches only its own column `idx + j * block`.
        unsafe {
            let mut sum = *data.add(idx);
            let mut j = 1;
            while j < U {
                sum = sum.wrapping_add(*data.add(idx + j * block));
                j += 1;
            }
            *data.add(idx) = sum;
            data.add(base)
        }
    }

    /// Seed version 1, "相邻(分化)" (`reduceNeighbored`): neighbored pairs. In step `s`
    /// (stride 1, 2, 4, ...) threads whose index is a multiple of `2s` add word `tid + s` into
    /// word `tid`.
    ///
    /// Why it is slow: the working threads are spread over every warp (`tid % (2s) == 0`), so
    /// each step keeps all warps busy while most of their lanes idle (warp divergence), and
    /// the accesses are strided.
    ///
    /// Launch: block a power of two (1..=1024); `gridDim.x * blockDim.x` = `len(data)`.
    ///
    /// # Safety
    /// `data` is a device array of `gridDim.x * blockDim.x` `i32` (destroyed); `partials` holds
    /// `gridDim.x` `i32`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_neighbored(data: *mut i32, partials: *mut i32) {
        let (tid, block, bid) = coordinates();
        // SAFETY: the block owns `data[bid*block .. (bid+1)*block]`.
        let idata = unsafe { data.add(bid * block) };
        let mut stride = 1;
        while stride < block {
            if tid % (2 * stride) == 0 {
                // SAFETY: `tid` is a multiple of `2*stride` below `block`, a power of two, so
                // `tid + stride < block`; in this step word `tid + stride` is not written
                // (it is an odd multiple of `stride`).
                unsafe { add_into(idata.add(tid), idata.add(tid + stride)) };
            }
            syncthreads();
            stride *= 2;
        }
        if tid == 0 {
            // SAFETY: `bid < gridDim.x = len(partials)`; the tree finished at the barrier.
            unsafe { *partials.add(bid) = *idata };
        }
    }

    /// Seed version 2, "相邻(无分化)" (`reduceNeighboredLess`): the same pairs as
    /// [`reduce_neighbored`], but thread `tid` works on word `2 * s * tid`, so the working
    /// threads are the first `block / 2s`: whole warps work or idle (less divergence).
    ///
    /// Launch: As [`reduce_neighbored`].
    ///
    /// # Safety
    /// As [`reduce_neighbored`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_neighbored_less(data: *mut i32, partials: *mut i32) {
        let (tid, block, bid) = coordinates();
        // SAFETY: the block owns `data[bid*block .. (bid+1)*block]`.
        let idata = unsafe { data.add(bid * block) };
        let mut stride = 1;
        while stride < block {
            let index = 2 * stride * tid;
            if index < block {
                // SAFETY: `index` is a multiple of `2*stride` below `block` (a power of two),
                // so `index + stride < block`; odd multiples of `stride` are not written.
                unsafe { add_into(idata.add(index), idata.add(index + stride)) };
            }
            syncthreads();
            stride *= 2;
        }
        if tid == 0 {
            // SAFETY: as in `reduce_neighbored`.
            unsafe { *partials.add(bid) = *idata };
        }
    }

    /// Seed version 3, "交错" (`reduceInterleaved`): interleaved pairs. The stride starts at
    /// half the block and halves each step; thread `tid < stride` adds word `tid + stride`.
    /// Working threads stay packed at the front (like version 2) and a warp's accesses are now
    /// consecutive words.
    ///
    /// Launch: As [`reduce_neighbored`].
    ///
    /// # Safety
    /// As [`reduce_neighbored`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_interleaved(data: *mut i32, partials: *mut i32) {
        let (tid, block, bid) = coordinates();
        // SAFETY: the block owns `data[bid*block .. (bid+1)*block]`; all threads call the tree.
        unsafe {
            let idata = data.add(bid * block);
            interleaved_tree(idata, tid, block, 0);
            if tid == 0 {
                *partials.add(bid) = *idata;
            }
        }
    }

    /// Body of the seed's `reduceUnrollingU`: the preamble adds `U` data blocks, then the
    /// interleaved tree reduces the first.
    ///
    /// # Safety
    /// `data` holds `gridDim.x * blockDim.x * U` words; `partials` holds `gridDim.x`.
    #[inline(always)]
    unsafe fn unrolling<const U: usize>(data: *mut i32, partials: *mut i32) {
        let (tid, block, bid) = coordinates();
        // SAFETY: forwarded; every thread runs the preamble and the tree.
        unsafe {
            let idata = unroll_data_blocks::<U>(data);
            syncthreads();
            interleaved_tree(idata, tid, block, 0);
            if tid == 0 {
                *partials.add(bid) = *idata;
            }
        }
    }

    /// Seed version 4, "展开2块" (`reduceUnrolling2`): each thread first adds the element one
    /// block further on (two data blocks per thread block), then the interleaved tree. Half the
    /// blocks, and each thread has two independent loads in flight: more memory-level
    /// parallelism, fewer tree steps per element.
    ///
    /// Launch: block a power of two (1..=1024); `gridDim.x * blockDim.x * 2` = `len(data)`.
    ///
    /// # Safety
    /// `data` holds `gridDim.x * blockDim.x * 2` `i32` (destroyed); `partials` `gridDim.x`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_unroll2(data: *mut i32, partials: *mut i32) {
        // SAFETY: forwarded to the caller's contract.
        unsafe { unrolling::<2>(data, partials) }
    }

    /// Seed version 5, "展开4块" (`reduceUnrolling4`): as [`reduce_unroll2`] with four data
    /// blocks per thread block (a quarter of the blocks, four loads in flight per thread).
    ///
    /// Launch: As [`reduce_unroll2`] with 4 for 2.
    ///
    /// # Safety
    /// As [`reduce_unroll2`] with 4 for 2.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_unroll4(data: *mut i32, partials: *mut i32) {
        // SAFETY: forwarded to the caller's contract.
        unsafe { unrolling::<4>(data, partials) }
    }

    /// Seed version 6, "展开8块" (`reduceUnrolling8`): eight data blocks per thread block.
    ///
    /// Launch: As [`reduce_unroll2`] with 8 for 2.
    ///
    /// # Safety
    /// As [`reduce_unroll2`] with 8 for 2.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_unroll8(data: *mut i32, partials: *mut i32) {
        // SAFETY: forwarded to the caller's contract.
        unsafe { unrolling::<8>(data, partials) }
    }

    /// Seed version 7, "展开8块+最后的线程束" (`reduceUnrollWarps8`): as [`reduce_unroll8`],
    /// but the tree stops at stride 64 and warp 0 finishes the last six steps without block
    /// barriers (see the module docs for why `__syncwarp` replaces the book's lock-step
    /// assumption). Saves six `__syncthreads` and the idle warps' loop overhead.
    ///
    /// Launch: block a power of two, 64..=1024; `gridDim.x * blockDim.x * 8` = `len(data)`.
    ///
    /// # Safety
    /// As [`reduce_unroll8`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_unroll_warps8(data: *mut i32, partials: *mut i32) {
        let (tid, block, bid) = coordinates();
        // SAFETY: forwarded to the caller's contract; every thread runs the barriers, and only
        // warp 0 (`tid < 32`) the last-warp steps.
        unsafe {
            let idata = unroll_data_blocks::<8>(data);
            syncthreads();
            interleaved_tree(idata, tid, block, 32);
            if tid < 32 {
                last_warp(idata, tid);
            }
            if tid == 0 {
                *partials.add(bid) = *idata;
            }
        }
    }

    /// The completely unrolled tree of `reduceCompleteUnrollWarps8` and of the template kernel:
    /// one `if` per possible step from 512 down to 64, then the last warp.
    ///
    /// # Safety
    /// `idata` holds `block` words owned by this block (`block` a power of two, 64..=1024);
    /// every thread calls it.
    #[inline(always)]
    unsafe fn complete_tree(idata: *mut i32, tid: usize, block: usize) {
        let mut stride = 512;
        while stride >= 64 {
            if block >= 2 * stride && tid < stride {
                // SAFETY: `tid + stride < 2 * stride <= block`; as in `interleaved_tree`.
                unsafe { add_into(idata.add(tid), idata.add(tid + stride)) };
            }
            syncthreads();
            stride /= 2;
        }
        if tid < 32 {
            // SAFETY: warp 0 after a barrier; `block >= 64`.
            unsafe { last_warp(idata, tid) };
        }
    }

    /// Seed version 8, "展开8块+循环+最后的线程束" (`reduceCompleteUnrollWarps8`): as
    /// [`reduce_unroll_warps8`] with the tree loop written out as one `if (blockDim.x >= 2s &&
    /// tid < s)` per step (the block size is at most 1024), so there is no loop counter or
    /// branch back; the compiler unrolls the loop in [`complete_tree`] the same way.
    ///
    /// Launch: As [`reduce_unroll_warps8`].
    ///
    /// # Safety
    /// As [`reduce_unroll_warps8`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_complete_unroll_warps8(
        data: *mut i32,
        partials: *mut i32,
    ) {
        let (tid, block, bid) = coordinates();
        // SAFETY: forwarded to the caller's contract; all threads reach every barrier.
        unsafe {
            let idata = unroll_data_blocks::<8>(data);
            syncthreads();
            complete_tree(idata, tid, block);
            if tid == 0 {
                *partials.add(bid) = *idata;
            }
        }
    }

    /// Seed version 9, "模板化内核" (`reduceCompleteUnroll<iBlockSize>`): the block size is a
    /// compile-time constant, so the `blockDim.x >= 2s` tests fold away and only the steps
    /// this block size needs are emitted.
    ///
    /// # Safety
    /// Launched with exactly `B` threads per block; otherwise as [`reduce_unroll_warps8`].
    #[inline(always)]
    unsafe fn complete_unroll<const B: usize>(data: *mut i32, partials: *mut i32) {
        let tid = thread_idx().x as usize;
        let bid = block_idx().x as usize;
        // SAFETY: forwarded to the caller's contract; `B` equals `blockDim.x`.
        unsafe {
            let base = bid * B * 8;
            let idx = base + tid;
            let mut sum = *data.add(idx);
            let mut j = 1;
            while j < 8 {
                sum = sum.wrapping_add(*data.add(idx + j * B));
                j += 1;
            }
            *data.add(idx) = sum;
            let idata = data.add(base);
            syncthreads();
            complete_tree(idata, tid, B);
            if tid == 0 {
                *partials.add(bid) = *idata;
            }
        }
    }

    macro_rules! complete_unroll_entries {
        ($($name:ident = $b:literal),* $(,)?) => {$(
            #[doc = concat!("[`complete_unroll`] for blocks of exactly ", stringify!($b),
                " threads (seed version 9).\n\n# Safety\nLaunched with blocks of ",
                stringify!($b), " threads; otherwise as [`reduce_unroll_warps8`].")]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(data: *mut i32, partials: *mut i32) {
                // SAFETY: forwarded to the caller's contract.
                unsafe { complete_unroll::<$b>(data, partials) }
            }
        )*};
    }

    complete_unroll_entries!(
        reduce_complete_unroll_64 = 64,
        reduce_complete_unroll_128 = 128,
        reduce_complete_unroll_256 = 256,
        reduce_complete_unroll_512 = 512,
        reduce_complete_unroll_1024 = 1024,
    );

    /// An element type `reduce_sum` reads with 16-byte loads and the type it accumulates in.
    pub(crate) trait Summand: Copy {
        /// Accumulator.
        type Acc: Copy + WarpShuffle;
        /// The additive identity of the accumulator.
        const ZERO: Self::Acc;
        /// The element whose 32 bits are `bits`.
        fn from_bits(bits: u32) -> Self;
        /// `acc + self`, in the accumulator's arithmetic.
        fn add_to(self, acc: Self::Acc) -> Self::Acc;
        /// `a + b` of two accumulators.
        fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    }

    impl Summand for i32 {
        type Acc = i32;
        const ZERO: i32 = 0;
        #[inline(always)]
        fn from_bits(bits: u32) -> Self {
            bits as i32
        }
        #[inline(always)]
        fn add_to(self, acc: i32) -> i32 {
            acc.wrapping_add(self)
        }
        #[inline(always)]
        fn combine(a: i32, b: i32) -> i32 {
            a.wrapping_add(b)
        }
    }

    /// `f32` summed in `f32`.
    impl Summand for f32 {
        type Acc = f32;
        const ZERO: f32 = 0.0;
        #[inline(always)]
        fn from_bits(bits: u32) -> Self {
            f32::from_bits(bits)
        }
        #[inline(always)]
        fn add_to(self, acc: f32) -> f32 {
            acc + self
        }
        #[inline(always)]
        fn combine(a: f32, b: f32) -> f32 {
            a + b
        }
    }

    /// `f32` summed in `f64`.
    #[derive(Clone, Copy)]
    struct WideF32(f32);

    impl Summand for WideF32 {
        type Acc = f64;
        const ZERO: f64 = 0.0;
        #[inline(always)]
        fn from_bits(bits: u32) -> Self {
            WideF32(f32::from_bits(bits))
        }
        #[inline(always)]
        fn add_to(self, acc: f64) -> f64 {
            acc + self.0 as f64
        }
        #[inline(always)]
        fn combine(a: f64, b: f64) -> f64 {
            a + b
        }
    }

    /// Warp-shuffle tree: lane 0 ends with the sum of the 32 lanes' values.
    #[inline(always)]
    fn warp_sum<S: Summand>(mut v: S::Acc) -> S::Acc {
        let mut offset = 16;
        while offset > 0 {
            v = S::combine(v, shfl_down_sync(FULL_MASK, v, offset));
            offset /= 2;
        }
        v
    }

    /// Block sum: a shuffle tree per warp, warp totals through shared memory, a shuffle tree
    /// in warp 0. Thread 0 returns the block's sum (other threads: partial values). Every
    /// thread of the block must call it.
    ///
    /// # Safety
    /// `warp_totals` is this block's shared array; the block has at most 1024 threads and a
    /// multiple of 32.
    #[inline(always)]
    unsafe fn block_sum<S: Summand>(v: S::Acc, warp_totals: &SharedArray<S::Acc, 32>) -> S::Acc {
        let tid = thread_idx().x as usize;
        let warps = block_dim().x as usize / 32;
        let v = warp_sum::<S>(v);
        // The shared array is reused by consecutive calls: wait until the last reads are done.
        syncthreads();
        if tid.is_multiple_of(32) {
            // SAFETY: `tid / 32 < 32`; each warp's lane 0 writes its own slot.
            unsafe { warp_totals.write(tid / 32, v) };
        }
        syncthreads();
        let mut total = S::ZERO;
        if tid < 32 {
            if tid < warps {
                // SAFETY: slot `tid < warps` was written before the barrier.
                total = unsafe { warp_totals.read(tid) };
            }
            total = warp_sum::<S>(total);
        }
        total
    }

    /// The one-launch reduction: grid-stride 16-byte loads into a register accumulator, a
    /// block sum by warp shuffles, one partial per block, and the last block to finish (a
    /// ticket from an atomic counter, the CUDA sample `threadFenceReduction`) adds the
    /// partials in a fixed order and writes `*result`, so the sum is deterministic for a given
    /// grid.
    ///
    /// # Safety
    /// `input` is 16-byte aligned and valid for `n` elements, read-only during the launch;
    /// `partials` holds `gridDim.x` accumulators; `counter` is a zero `u32` no other launch
    /// uses concurrently (it is zero again when the kernel ends); `result` is one accumulator.
    /// Block size a multiple of 32 up to 1024.
    #[inline(always)]
    pub(crate) unsafe fn reduce_sum<S: Summand>(
        input: *const u32,
        n: usize,
        partials: *mut S::Acc,
        counter: *mut u32,
        result: *mut S::Acc,
        warp_totals: &SharedArray<S::Acc, 32>,
    ) {
        let (tid, block, bid) = coordinates();
        let grid = grid_dim().x as usize;
        let stride = grid * block;
        let groups = n / 4;
        let mut acc = S::ZERO;
        let mut g = bid * block + tid;
        let add4 = |acc: S::Acc, w: [u32; 4]| {
            let a = S::from_bits(w[0]).add_to(acc);
            let a = S::from_bits(w[1]).add_to(a);
            let a = S::from_bits(w[2]).add_to(a);
            S::from_bits(w[3]).add_to(a)
        };
        // Main loop: REDUCE_SUM_UNROLL independent 16-byte loads in flight per thread.
        while g + (super::REDUCE_SUM_UNROLL - 1) * stride < groups {
            let mut w = [[0u32; 4]; super::REDUCE_SUM_UNROLL];
            let mut u = 0;
            while u < super::REDUCE_SUM_UNROLL {
                // SAFETY: group `g + u*stride < groups`, so its four words are below `n`;
                // 16-byte aligned because `input` is.
                w[u] = unsafe { load_global_nc_v4_u32(input.add(4 * (g + u * stride))) };
                u += 1;
            }
            let mut u = 0;
            while u < super::REDUCE_SUM_UNROLL {
                acc = add4(acc, w[u]);
                u += 1;
            }
            g += super::REDUCE_SUM_UNROLL * stride;
        }
        while g < groups {
            // SAFETY: as above for one group.
            acc = add4(acc, unsafe { load_global_nc_v4_u32(input.add(4 * g)) });
            g += stride;
        }
        // The last n % 4 elements: one each for the grid's first threads.
        let tail = 4 * groups + bid * block + tid;
        if tail < n {
            // SAFETY: `tail < n`.
            acc = S::from_bits(unsafe { *input.add(tail) }).add_to(acc);
        }

        // SAFETY: every thread calls `block_sum`; the caller's contract covers the pointers.
        unsafe {
            let block_total = block_sum::<S>(acc, warp_totals);
            let mut last = false;
            if tid == 0 {
                partials.add(bid).write_volatile(block_total);
                // Make the partial visible to the whole GPU before taking a ticket.
                threadfence();
                last = atomic_add(counter, 1) == grid as u32 - 1;
            }
            if !syncthreads_or(last) {
                return;
            }
            // This is the last block: every other block's partial is visible.
            threadfence();
            let mut acc = S::ZERO;
            let mut i = tid;
            while i < grid {
                // Volatile: read from L2, not a stale L1 line.
                acc = S::combine(acc, partials.add(i).read_volatile());
                i += block;
            }
            let total = block_sum::<S>(acc, warp_totals);
            if tid == 0 {
                *result = total;
                // Ready for the next launch.
                counter.write_volatile(0);
            }
        }
    }

    /// Sum of `n` `i32` (wrapping, as the GPU's integer add) into `*result`, in one launch.
    ///
    /// Algorithm: grid-stride loop of `int4` loads through the read-only path (four in flight
    /// per thread), register accumulator, warp shuffles and shared memory for the block sum,
    /// last-block-done for the grid sum. Beyond the seed: the version to call.
    ///
    /// Launch: blocks of [`REDUCE_SUM_BLOCK`](super::REDUCE_SUM_BLOCK) threads (any multiple of
    /// 32 up to 1024 works), at most one wave of resident blocks, at least one block (also for
    /// `n = 0`: the result is then 0).
    ///
    /// # Safety
    /// `input` is 16-byte aligned, valid for `n` `i32` and not written during the launch;
    /// `partials` holds `gridDim.x` `i32`; `counter` points to a `u32` that is 0 and used by no
    /// concurrent launch; `result` points to one `i32`.
    ///
    /// Performance: reads each element once (4 bytes); bound by DRAM bandwidth.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_sum_i32(
        input: *const i32,
        n: usize,
        partials: *mut i32,
        counter: *mut u32,
        result: *mut i32,
    ) {
        let warp_totals = static_shared!(s_reduce_sum_i32: [i32; 32]);
        // SAFETY: forwarded to the caller's contract.
        unsafe { reduce_sum::<i32>(input.cast(), n, partials, counter, result, &warp_totals) }
    }

    /// Sum of `n` `f32` accumulated in `f32` into `*result`, in one launch: as
    /// [`reduce_sum_i32`] with `float4` loads. Rounding: each thread adds its elements
    /// sequentially (about `n / (gridDim.x * blockDim.x)` of them), then two shuffle trees per
    /// block and a strided pass plus trees over the partials; the error is bounded by that
    /// depth times `f32::EPSILON` times the sum of magnitudes. NaN and infinities propagate.
    ///
    /// Launch: As [`reduce_sum_i32`] with `f32` for `i32`.
    ///
    /// # Safety
    /// As [`reduce_sum_i32`] with `f32` for `i32`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_sum_f32(
        input: *const f32,
        n: usize,
        partials: *mut f32,
        counter: *mut u32,
        result: *mut f32,
    ) {
        let warp_totals = static_shared!(s_reduce_sum_f32: [f32; 32]);
        // SAFETY: forwarded to the caller's contract.
        unsafe { reduce_sum::<f32>(input.cast(), n, partials, counter, result, &warp_totals) }
    }

    /// Sum of `n` `f32` accumulated in `f64` into `*result` (an `f64`), in one launch: as
    /// [`reduce_sum_f32`] with every addition in double precision (on an H100, FP64 throughput
    /// is high enough that this stays memory-bound).
    ///
    /// Launch: As [`reduce_sum_i32`], with `input` of `f32` and `partials` and `result` of `f64`.
    ///
    /// # Safety
    /// As [`reduce_sum_i32`], with `input` of `f32` and `partials` and `result` of `f64`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_sum_f32_f64(
        input: *const f32,
        n: usize,
        partials: *mut f64,
        counter: *mut u32,
        result: *mut f64,
    ) {
        let warp_totals = static_shared!(s_reduce_sum_f32_f64: [f64; 32]);
        // SAFETY: forwarded to the caller's contract.
        unsafe { reduce_sum::<WideF32>(input.cast(), n, partials, counter, result, &warp_totals) }
    }
}
