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
//! This module holds what host and device share for [`seed`] and [`sum`]: the seed's launch
//! size and the block and unroll constants of `reduce_sum`; [`square_sum`] holds its own. The
//! kernels are in the modules (on the host, their typed handles).

/// The seed's "模板化内核" (`reduceCompleteUnroll<iBlockSize>`): `(block size, kernel)`.
#[cfg(not(target_arch = "nvptx64"))]
pub use seed::REDUCE_COMPLETE_UNROLL;

/// Block size of the seed's launches (grid 32768 x 512 for 2^24 elements).
pub const SEED_BLOCK: u32 = 512;
/// Elements in the seed's array: 2^24 `int`s.
pub const SEED_N: usize = 1 << 24;

/// Threads per block of the `reduce_sum` kernels (16 warps; the last-block pass reduces at most
/// `gridDim.x` partials with them). On an H200, 512 measured as fast as 1024 and 1-5% faster
/// than 256 from 2^22 elements up (`docs/patterns/reduce.md`).
pub const REDUCE_SUM_BLOCK: u32 = gpu_std::reduce::REDUCE_BLOCK;
/// `float4`/`int4` loads each thread issues per loop trip of `reduce_sum` before adding any of
/// them (memory-level parallelism).
pub const REDUCE_SUM_UNROLL: usize = gpu_std::reduce::REDUCE_UNROLL;

// The kernel families. `seed` and `sum` are kernels only (on the host, their typed handles);
// `square_sum` also holds its host-visible constants, with its kernels in `square_sum::kernels`.
pub mod ops;
pub mod seed;
pub mod segmented;
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
