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
    use gpu_std::{DisjointSlice, grid_stride};

    /// `y[i] = a * x[i] + y[i]` for `i < y.len()` (and `x.len()`), with a grid-stride loop. A
    /// safe kernel: each thread updates only its own elements of `y`.
    ///
    /// Algorithm: thread `blockIdx.x * blockDim.x + threadIdx.x` handles that element and
    /// every `blockDim.x * gridDim.x`-th after it, so any grid covers any length.
    ///
    /// Launch: any block size, any grid of at least one block (e.g. `ceil(n / 256)` blocks of
    /// [`BLOCK_SIZE`](super::BLOCK_SIZE)).
    ///
    /// Parameters: `a` the scale; `x` the `n` input floats and `y` the `n` floats updated in
    /// place (each a buffer the host passes with its length).
    ///
    /// Performance: 12 bytes per element, one FMA: memory-bound.
    #[kernel]
    pub fn saxpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        for i in grid_stride(y.len().min(x.len())) {
            let xi = x[i.get()];
            if let Some(yi) = y.get_mut(&i) {
                *yi = fmaf32(a, xi, *yi);
            }
        }
    }
}
