//! Host-device transfer bandwidth (pageable, pinned, write-combined, zero-copy) and launch
//! overhead (seed "cuda 学习之内存层次结构", host memory; seed "cuda 并行归约" section 二, the K80's
//! `bandwidthTest`).
//!
//! The copies themselves are the driver's (`cuMemcpyHtoDAsync`, `cuMemcpyDtoHAsync`,
//! `cuMemcpyDtoDAsync`). The kernels here are the device side of zero-copy: a copy through
//! 16-byte accesses that reads or writes mapped pinned host memory directly over the bus, and
//! an empty kernel whose launches measure the launch overhead.

/// Threads per block of [`bandwidth_copy_v4`](kernels::bandwidth_copy_v4).
pub const BLOCK_SIZE: u32 = 256;
/// Bytes each thread moves per iteration of the copy (one `uint4`).
pub const GROUP_BYTES: usize = 16;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::{global_index_x, grid_stride_x, load_global_v4_u32, store_global_v4_u32};

    /// `dst[g] = src[g]` for `groups` 16-byte groups, with a grid-stride loop: the zero-copy
    /// kernel (either pointer may be mapped pinned host memory, read or written over the bus)
    /// and a kernel copy beside the driver's device-to-device memcpy.
    ///
    /// Algorithm: each thread moves one `uint4` per iteration, so a warp instruction moves 512
    /// contiguous bytes: over PCIe that is whole 128-byte read requests and full write packets.
    ///
    /// Launch: any block and grid size (the host uses [`BLOCK_SIZE`](super::BLOCK_SIZE) and one
    /// wave of resident blocks).
    ///
    /// Parameters: `src` and `dst` are 16-byte aligned and hold `groups` groups of four words;
    /// device pointers or device pointers of mapped host memory (`cuMemHostGetDevicePointer`).
    ///
    /// # Safety
    /// Both pointers are valid for `4 * groups` words, 16-byte aligned, and do not overlap; no
    /// one else writes `src` or touches `dst` during the launch (the host included).
    ///
    /// Performance: 16 bytes read and 16 written per group; over the bus, bound by the link.
    #[kernel]
    pub unsafe fn bandwidth_copy_v4(src: *const u32, dst: *mut u32, groups: usize) {
        let stride = grid_stride_x();
        let mut g = global_index_x();
        while g < groups {
            // SAFETY: `g < groups`; 16-byte aligned because the bases are and `4g` words is 16g bytes.
            unsafe { store_global_v4_u32(dst.add(4 * g), load_global_v4_u32(src.add(4 * g))) };
            g += stride;
        }
    }

    /// Does nothing: back-to-back launches of it measure the launch overhead. A safe kernel.
    ///
    /// Launch: any configuration (the host uses one block of one thread).
    #[kernel]
    pub fn bandwidth_empty_kernel() {}
}
