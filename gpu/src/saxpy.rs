//! SAXPY, `y[i] = a * x[i] + y[i]` on `f32` (BLAS level 1): the kernel of
//! `docs/writing_a_kernel.md`, the guide to adding a kernel of your own to this crate and
//! launching it from your own program (`cpu/examples/04_your_own_kernel.rs`).
//!
//! Each element costs one FMA and 12 bytes of DRAM traffic (two loads, one store): memory-bound,
//! like vector add.

/// Threads per block the guide launches with (any block size works).
pub const BLOCK_SIZE: u32 = 256;

/// The kernels (typed handles on the host, PTX entries on the device).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::math::fmaf32;
    use gpu_std::{global_index_x, grid_stride_x};

    /// `y[i] = a * x[i] + y[i]` for `i < x.len()`, with a grid-stride loop.
    ///
    /// Algorithm: thread `blockIdx.x * blockDim.x + threadIdx.x` handles that element and
    /// every `blockDim.x * gridDim.x`-th after it, so any grid covers any length.
    ///
    /// Launch: any block size, any grid of at least one block (e.g. `ceil(n / 256)` blocks of
    /// [`BLOCK_SIZE`](super::BLOCK_SIZE)).
    ///
    /// Parameters: `a` the scale; `x` the `n` input floats (a slice: the host passes its
    /// pointer and length); `y` points to `n` floats, updated in place.
    ///
    /// # Safety
    /// `y` is valid for `x.len()` elements and does not overlap `x`.
    ///
    /// Performance: 12 bytes per element, one FMA: memory-bound.
    #[kernel]
    pub unsafe fn saxpy(a: f32, x: &[f32], y: *mut f32) {
        let mut i = global_index_x();
        let stride = grid_stride_x();
        while i < x.len() {
            // SAFETY: `i < x.len()`, and the caller guarantees `y` holds as many elements,
            // disjoint from `x`.
            unsafe { *y.add(i) = fmaf32(a, x[i], *y.add(i)) };
            i += stride;
        }
    }
}
