//! Parallel reduction: the sum of an array, one value from many, in three families of kernels.
//!
//! - [`seed`]: the nine kernels of the seed "cuda 并行归约" (from *Professional CUDA C
//!   Programming*, chapter 3, `reduceInteger.cu`), from neighbored pairs to the completely
//!   unrolled template kernel, made correct on Volta and newer. Each block reduces its slice in
//!   place in global memory and leaves one partial sum for the host.
//! - [`sum`]: [`reduce_sum`](sum::reduce_sum_f32), the one-launch reduction a user should call
//!   (`i32`, `f32`, and `f32` accumulated in `f64`): 16-byte loads over an even share of the
//!   input per block, warp shuffles,
//!   and the last block to finish adds the partials on the GPU.
//! - [`square_sum`]: the sum of squares, the seven versions of the seed "【转】CUDA优化小记录"
//!   and `square_sum_reduce`, which is `reduce_sum` with `x * x` applied on load.
//!
//! This module holds what host and device share for [`seed`] and [`sum`]: their entry names,
//! the seed's launch size and the block and unroll constants of `reduce_sum`; [`square_sum`]
//! holds its own. The kernels themselves exist only in the device build.

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

/// Entry name of [`reduce_sum_i32`](sum::reduce_sum_i32).
pub const REDUCE_SUM_I32: &str = "reduce_sum_i32";
/// Entry name of [`reduce_sum_f32`](sum::reduce_sum_f32).
pub const REDUCE_SUM_F32: &str = "reduce_sum_f32";
/// Entry name of [`reduce_sum_f32_f64`](sum::reduce_sum_f32_f64).
pub const REDUCE_SUM_F32_F64: &str = "reduce_sum_f32_f64";

/// Block size of the seed's launches (grid 32768 x 512 for 2^24 elements).
pub const SEED_BLOCK: u32 = 512;
/// Elements in the seed's array: 2^24 `int`s.
pub const SEED_N: usize = 1 << 24;

/// Threads per block of the `reduce_sum` kernels (16 warps; the last-block pass reduces at most
/// `gridDim.x` partials with them). On an H200, 512 measured as fast as 1024 and 1-5% faster
/// than 256 from 2^22 elements up (`docs/patterns/reduce.md`).
pub const REDUCE_SUM_BLOCK: u32 = 512;
/// `float4`/`int4` loads each thread issues per loop trip of `reduce_sum` before adding any of
/// them (memory-level parallelism).
pub const REDUCE_SUM_UNROLL: usize = 4;

// The kernel families. `seed` and `sum` are kernels only (device build); `square_sum` also
// holds its host-visible constants, with its kernels in `square_sum::kernels`.
pub mod seed;
pub mod square_sum;
pub mod sum;

/// This thread's index in the block and the block's size and index, as `usize`.
#[inline(always)]
fn coordinates() -> (usize, usize, usize) {
    use gpu_std::{block_dim, block_idx, thread_idx};
    (
        thread_idx().x as usize,
        block_dim().x as usize,
        block_idx().x as usize,
    )
}
