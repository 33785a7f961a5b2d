//! Across several GPUs: the one kernel of the lab's teaching all-reduce (a ring of peer-to-peer
//! copies, `cpu::multi_gpu::ring`), the elementwise accumulation `dst += src` of a chunk that
//! arrived from the previous GPU of the ring. The collective a user should call is NCCL's
//! (`cpu::multi_gpu::GpuGroup::all_reduce_sum`), which needs no kernel of ours; the sharded sum
//! reuses [`reduce`](crate::reduce)'s `reduce_sum_f32_f64`.
//!
//! Each element costs one add and 12 bytes of DRAM traffic (two 4-byte loads, one 4-byte
//! store), as [`vector_add`](crate::vector_add): memory-bound, and in the ring far cheaper than
//! the copy over NVLink or PCIe before it.

/// Threads per block the host launches [`add_into`](kernels::add_into) with.
pub const ADD_INTO_BLOCK: u32 = 256;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::{DisjointSlice, grid_stride};

    /// `dst[i] += src[i]` for `i < n`: one reduce-scatter step of the ring all-reduce adds the
    /// chunk received from the previous GPU (`src`, a staging buffer on this GPU) into this
    /// GPU's own chunk (`dst`).
    ///
    /// Algorithm: a grid-stride loop (the seed `vector_add_grid_stride` with `z = x`): thread
    /// `i` handles `i, i + stride, ...`; a warp reads 128 contiguous bytes of each input and
    /// writes 128 contiguous bytes. Scalar accesses, so the chunk may start at any element
    /// (the ring splits buffers at arbitrary element boundaries).
    ///
    /// Launch: [`ADD_INTO_BLOCK`](super::ADD_INTO_BLOCK) threads per block, any grid (the host
    /// uses at most one wave of resident blocks).
    ///
    /// Parameters: `dst` and `src` hold `n` floats each in this GPU's device memory (the host
    /// passes each with its length; elements of `dst` past `src.len()` are left alone).
    ///
    /// A safe kernel: each thread updates only its own elements of `dst`.
    ///
    /// Performance: 12 bytes per element, one FADD: memory-bound.
    #[kernel]
    pub fn add_into(mut dst: DisjointSlice<f32>, src: &[f32]) {
        for i in grid_stride(dst.len().min(src.len())) {
            let s = src[i.get()];
            if let Some(d) = dst.get_mut(&i) {
                *d += s;
            }
        }
    }
}
