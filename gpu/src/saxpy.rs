//! SAXPY, `y[i] = a * x[i] + y[i]` on `f32` (BLAS level 1): the kernel of
//! `docs/writing_a_kernel.md`, the guide to adding a kernel of your own to this crate and
//! launching it from your own program (`cpu/examples/04_your_own_kernel.rs`).
//!
//! Each element costs one FMA and 12 bytes of DRAM traffic (two loads, one store): memory-bound,
//! like vector add.

/// Entry name of [`saxpy`](kernels::saxpy) in the PTX.
pub const SAXPY: &str = "saxpy";

/// Threads per block the guide launches with (any block size works).
pub const BLOCK_SIZE: u32 = 256;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::math::fmaf32;

    use gpu_std::{global_index_x, grid_stride_x};

    /// `y[i] = a * x[i] + y[i]` for `i < n`, with a grid-stride loop.
    ///
    /// Algorithm: thread `blockIdx.x * blockDim.x + threadIdx.x` handles that element and
    /// every `blockDim.x * gridDim.x`-th after it, so any grid covers any `n`.
    ///
    /// Launch: any block size, any grid of at least one block (e.g. `ceil(n / 256)` blocks of
    /// [`BLOCK_SIZE`](super::BLOCK_SIZE)).
    ///
    /// Parameters: `a` the scale; `x` and `y` point to `n` floats each in device memory.
    ///
    /// # Safety
    /// `x` and `y` are valid for `n` elements and do not overlap.
    ///
    /// Performance: 12 bytes per element, one FMA: memory-bound.
    #[kernel]
    pub unsafe fn saxpy(a: f32, x: *const f32, y: *mut f32, n: usize) {
        let mut i = global_index_x();
        let stride = grid_stride_x();
        while i < n {
            // SAFETY: `i < n`, and the caller guarantees `n` valid, disjoint elements.
            unsafe { *y.add(i) = fmaf32(a, *x.add(i), *y.add(i)) };
            i += stride;
        }
    }
}
