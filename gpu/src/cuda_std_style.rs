//! Two kernels written against rust-cuda's `cuda_std` 0.2 API alone (the names `gpu_std`
//! offers for it: `thread`, `shared_array!`, `#[kernel]` and its `&[T]` parameters), as a
//! kernel ported from a rust-cuda project reads here: a vector add (cuda_std's own example)
//! and a block sum through a shared array.
//!
//! Nothing below uses the lab's own spelling (`global_index_x`, `static_shared!`,
//! `syncthreads`): with `cuda_std = { package = "gpu_std", path = "gpu/std" }` as the
//! dependency line, `use cuda_std::prelude::*` and `cuda_std::shared_array` build this module
//! unchanged. The host side is `cpu::cuda_std_style`.

/// Threads per block of both kernels: [`cuda_std_block_sum`](kernels::cuda_std_block_sum)
/// needs exactly this many (its shared array and its tree), the vector add takes any block
/// size and is launched with this one.
pub const BLOCK_SIZE: u32 = 256;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::prelude::*;
    use gpu_std::shared_array;

    use super::BLOCK_SIZE;

    /// `c[i] = a[i] + b[i]` for `i < a.len()`, one element per thread: rust-cuda's example
    /// kernel, written with cuda_std's `thread::index_1d()`.
    ///
    /// Algorithm: thread `i = threadIdx.x + blockIdx.x * blockDim.x` (`index_1d`, a `u32`)
    /// adds element `i`; threads past `a.len()` return. A warp reads 128 consecutive bytes of
    /// each input and writes 128 of `c`. `a` and `b` are slices (pointer and length on the
    /// wire): `b[i]` is bounds-checked, so a `b` shorter than `a` traps instead of reading past
    /// its end.
    ///
    /// Launch: one-dimensional; any block size; a grid that covers `a.len()` elements, which
    /// is at most 2^32 (`index_1d` is a `u32`).
    ///
    /// # Safety
    /// `c` is valid for writes of `a.len()` floats and overlaps neither input; `a` and `b` are
    /// valid for reads of their lengths and unmodified during the launch.
    ///
    /// Performance: 12 bytes per element, one FADD: memory-bound (as `vector_add`).
    #[kernel]
    pub unsafe fn cuda_std_vector_add(a: &[f32], b: &[f32], c: *mut f32) {
        let i = thread::index_1d() as usize;
        if i < a.len() {
            // SAFETY: `i < a.len()` and `c` holds `a.len()` floats that no other thread
            // writes (one element per thread).
            unsafe { *c.add(i) = a[i] + b[i] };
        }
    }

    /// `partial[blockIdx.x]` = the sum of the block's [`BLOCK_SIZE`] elements of `input`
    /// (elements past `input.len()` count as 0): the first pass of a reduction, through a
    /// cuda_std `shared_array!` and `thread::sync_threads()`.
    ///
    /// Algorithm: each thread loads one element (`thread::index_1d()`) into the block's shared
    /// array of [`BLOCK_SIZE`] floats; then a tree: at stride `s = BLOCK_SIZE / 2, ..., 1`,
    /// thread `t < s` adds element `t + s` into element `t`, with a `sync_threads()` after
    /// each step (every thread of the block reaches it: the loop bounds are uniform). Thread 0
    /// writes element 0. Within a block the additions are a fixed binary tree, so the result
    /// is deterministic; its rounding error grows with `log2(BLOCK_SIZE)` rather than with the
    /// block's length.
    ///
    /// Launch: one-dimensional; blocks of exactly [`BLOCK_SIZE`] threads (the shared array
    /// and the tree assume it); `ceil(input.len() / BLOCK_SIZE)` blocks (at most 2^32 threads
    /// in all: `index_1d` is a `u32`), each writing `partial[blockIdx.x]`.
    ///
    /// # Safety
    /// `blockDim == (BLOCK_SIZE, 1, 1)` (a larger block indexes past the shared array);
    /// `partial` is valid for writes of `gridDim.x` floats and does not overlap `input`;
    /// `input` is valid for reads of its length and unmodified during the launch.
    ///
    /// Performance: 4 bytes read per element, memory-bound; 9 barriers per block (one after the
    /// loads, one per tree step).
    #[kernel]
    pub unsafe fn cuda_std_block_sum(input: &[f32], partial: *mut f32) {
        let shared = shared_array![f32; BLOCK_SIZE as usize];
        let t = thread::thread_idx_x() as usize;
        let i = thread::index_1d() as usize;
        let value = if i < input.len() { input[i] } else { 0.0 };
        // SAFETY: `t < BLOCK_SIZE` (the launch's contract) and each thread writes its own
        // element.
        unsafe { *shared.add(t) = value };
        thread::sync_threads();
        let mut stride = BLOCK_SIZE as usize / 2;
        while stride > 0 {
            if t < stride {
                // SAFETY: `t + stride < BLOCK_SIZE`; element `t + stride` was written before
                // the last barrier and element `t` belongs to this thread until the next.
                unsafe { *shared.add(t) += *shared.add(t + stride) };
            }
            thread::sync_threads();
            stride /= 2;
        }
        if t == 0 {
            // SAFETY: `blockIdx.x < gridDim.x`, the length of `partial`; element 0 is final
            // after the last barrier.
            unsafe { *partial.add(thread::block_idx_x() as usize) = *shared };
        }
    }
}
