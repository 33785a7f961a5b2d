//! Vector add, `z[i] = x[i] + y[i]` on `f32`: the seed "并行计算(二)——CUDA" (its first kernel,
//! `vecAdd`), the "hello world" of CUDA (NVIDIA's `vectorAdd` sample).
//!
//! Each output element costs one add and 12 bytes of DRAM traffic (two 4-byte loads, one
//! 4-byte store), so the kernel is bound by memory bandwidth: its ceiling is the device-to-device
//! copy bandwidth.

/// Threads per block the host launches both kernels with (a multiple of the warp size; any
/// block size works).
pub const BLOCK_SIZE: u32 = 256;

/// The seed's toy launch: N = 1024 elements, 8 blocks of 128 threads.
pub const SEED_N: usize = 1024;
/// Blocks in the seed's launch.
pub const SEED_GRID: u32 = 8;
/// Threads per block in the seed's launch.
pub const SEED_BLOCK: u32 = 128;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::{
        DisjointSlice, global_index_x, grid_stride, grid_stride_x, load_global_v4, store_global_v4,
        thread_index,
    };

    /// `z[i] = x[i] + y[i]`, one element per thread (the seed's `vecAdd`), for every `i <
    /// z.len()` the grid covers (and `x` and `y` hold). A safe kernel: its thread writes only
    /// the element of its own [`ThreadIndex`](gpu_std::ThreadIndex), so no launch can make it
    /// write out of bounds or race, and the host launches it without `unsafe`.
    ///
    /// Algorithm: thread `i = blockIdx.x * blockDim.x + threadIdx.x` handles element `i`;
    /// threads past the end do nothing. A warp reads 32 consecutive floats of `x` and of `y`
    /// (128 bytes each, fully coalesced) and writes 128 consecutive bytes of `z`.
    ///
    /// Launch: any block size; grid `ceil(n / block)` blocks (elements past the grid are not
    /// written).
    ///
    /// Parameters: `x`, `y`, `z` hold `n` floats each in device memory.
    ///
    /// Performance: 12 bytes per element, one FADD: memory-bound.
    #[kernel]
    pub fn vector_add(x: &[f32], y: &[f32], mut z: DisjointSlice<f32>) {
        let i = thread_index();
        let k = i.get();
        // Indexing after the length checks: no second check, and no `Option<&f32>` to test.
        if k < x.len()
            && k < y.len()
            && let Some(out) = z.get_mut(&i)
        {
            *out = x[k] + y[k];
        }
    }

    /// `z[i] = x[i] + y[i]` with a grid-stride loop: each thread handles elements
    /// `i, i + stride, i + 2*stride, ...` below `z.len()` with `stride` the grid's thread count
    /// (`blockDim.x * gridDim.x` for a one-dimensional launch). Safe, as [`vector_add`].
    ///
    /// Algorithm: the grid is sized to the GPU (a few waves of resident blocks), not to `n`, so
    /// block scheduling costs are paid once and any `n` (beyond 2^32 too) is covered by one
    /// launch. Each warp instruction is still one coalesced 128-byte access.
    ///
    /// Launch: any block size and grid size.
    ///
    /// Parameters: as [`vector_add`].
    ///
    /// Performance: 12 bytes per element, one FADD: memory-bound.
    #[kernel]
    pub fn vector_add_grid_stride(x: &[f32], y: &[f32], mut z: DisjointSlice<f32>) {
        let n = z.len().min(x.len()).min(y.len());
        for i in grid_stride(n) {
            let k = i.get();
            if let Some(out) = z.get_mut(&i) {
                *out = x[k] + y[k];
            }
        }
    }

    /// `z = x + y` with 16-byte accesses: `n / 4` groups of four floats, each moved with one
    /// `float4` load per input and one `float4` store, one group per thread of a grid that
    /// covers them (a grid-stride loop for smaller grids); the last `n % 4` elements are added
    /// one by one by the first threads of the grid.
    ///
    /// Algorithm: a warp instruction moves 512 contiguous bytes instead of 128, so a quarter of
    /// the memory instructions keep the same bytes in flight. One group per thread and a grid
    /// of `n / 1024` blocks (PyTorch's elementwise launch) measured 4-7% faster on an H200 at
    /// 2^24..2^28 than a one-wave grid-stride loop with two groups per trip: the block
    /// scheduler hands out new blocks as old ones retire, which keeps every SM's loads in
    /// flight to the last block (`docs/patterns/vector_add.md`).
    ///
    /// Launch: any block size and grid size (the host covers the `n / 4` groups with blocks of
    /// [`BLOCK_SIZE`](super::BLOCK_SIZE)).
    ///
    /// # Safety
    /// As [`vector_add`], and the three pointers are 16-byte aligned (device allocations are).
    ///
    /// Performance: 12 bytes per element, one FADD: memory-bound.
    #[kernel]
    pub unsafe fn vector_add_vec4(x: *const f32, y: *const f32, z: *mut f32, n: usize) {
        let groups = n / 4;
        let stride = grid_stride_x();
        let mut g = global_index_x();
        while g < groups {
            // SAFETY: `4g + 3 < n`; 16-byte aligned because the bases are and `4g` floats is
            // 16g bytes.
            unsafe {
                let a = load_global_v4(x.add(4 * g));
                let b = load_global_v4(y.add(4 * g));
                store_global_v4(
                    z.add(4 * g),
                    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]],
                );
            }
            g += stride;
        }
        let tail = 4 * groups + global_index_x();
        if tail < n {
            // SAFETY: `tail < n`.
            unsafe { *z.add(tail) = *x.add(tail) + *y.add(tail) };
        }
    }
}
