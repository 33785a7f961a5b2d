//! Global-memory coalescing: misalignment offset and stride sweeps with cached (`ld.ca`) and
//! L2-only (`ld.cg`) loads (seed "cuda 学习之内存层次结构", 全局内存-对齐与合并; *Professional CUDA C
//! Programming* ch. 4, `readSegment` and the strided copies).
//!
//! Each kernel is a copy `y[i] = x[f(i)]` whose read pattern is the experiment: `f(i) = i +
//! offset` shifts every warp's 128-byte request off the 128-byte (and, for offsets that are not
//! multiples of 8 floats, off the 32-byte sector) boundaries; `f(i) = i * stride` spreads a
//! warp's 32 floats over `stride * 128` bytes. The write `y[i]` stays perfectly coalesced, so the
//! time measures what the read pattern costs.
//!
//! The seed describes two load paths: cached loads (L1 + L2, 128-byte transactions) and uncached
//! loads (L2 only, 32-byte transactions). PTX names them with cache operators: `ld.global.ca`
//! (cache at all levels) and `ld.global.cg` (cache in L2, bypass L1). Since Volta a global load
//! without an operator is cached in L1 (it is `ld.ca`), and L1 fills its 128-byte lines by 32-byte
//! sector, so on an H100 both paths move 32-byte sectors from L2 and DRAM.

/// Threads per block of every coalescing kernel (whole warps; the access pattern of a warp does
/// not depend on it).
pub const BLOCK_SIZE: u32 = 256;
/// Largest misalignment offset, in elements, the host accepts (32 floats = 128 bytes, one
/// full cache line: the sweep ends where it started, aligned again).
pub const MAX_OFFSET: usize = 32;
/// Largest stride, in elements, the host accepts (32 floats = 128 bytes: every lane of a warp
/// in its own cache line).
pub const MAX_STRIDE: usize = 32;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::{global_index_x, load_global_ca, load_global_cg};

    /// `y[i] = x[i + offset]` with cached loads (`ld.global.ca`): *Professional CUDA C
    /// Programming*'s `readOffset`.
    ///
    /// Algorithm: one element per thread. A warp reads 128 contiguous bytes starting at byte
    /// `4 * (32w + offset)`: for `offset % 32 == 0` one 128-byte line (4 sectors), for
    /// `offset % 8 == 0` 4 sectors over two lines, otherwise 5 sectors over one or two lines.
    ///
    /// Launch: blocks of [`BLOCK_SIZE`](super::BLOCK_SIZE) threads (any size works); a grid
    /// covering `n`.
    ///
    /// Parameters: `x` holds `n + offset` floats, `y` holds `n` floats, both in device memory.
    ///
    /// # Safety
    /// `x` is valid for `n + offset` elements and not written during the launch; `y` is valid
    /// for `n` elements and overlaps `x` nowhere.
    ///
    /// Performance: 4 bytes requested read and 4 written per element; the read moves 5/4 of that
    /// between L2 and the SM when misaligned, but neighbouring warps share the extra sector in
    /// L2, so DRAM traffic barely changes.
    #[kernel]
    pub unsafe fn coalescing_read_offset_ca(x: *const f32, y: *mut f32, n: usize, offset: usize) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i + offset < n + offset`, `i < n`, as the caller guarantees.
            unsafe { *y.add(i) = load_global_ca(x.add(i + offset)) };
        }
    }

    /// `y[i] = x[i + offset]` with L2-only loads (`ld.global.cg`): as
    /// [`coalescing_read_offset_ca`], bypassing L1.
    ///
    /// Launch, parameters, performance: as [`coalescing_read_offset_ca`].
    ///
    /// # Safety
    /// As [`coalescing_read_offset_ca`].
    #[kernel]
    pub unsafe fn coalescing_read_offset_cg(x: *const f32, y: *mut f32, n: usize, offset: usize) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i + offset < n + offset`, `i < n`, as the caller guarantees.
            unsafe { *y.add(i) = load_global_cg(x.add(i + offset)) };
        }
    }

    /// `y[i] = x[i * stride]` with cached loads (`ld.global.ca`): a strided gather.
    ///
    /// Algorithm: one element per thread. A warp's 32 floats lie `4 * stride` bytes apart:
    /// `4 * stride` sectors for strides up to 8 floats, 32 sectors (one per lane) from 8 on; the
    /// seed's 128-byte model counts `stride` lines up to 32.
    ///
    /// Launch: blocks of [`BLOCK_SIZE`](super::BLOCK_SIZE) threads; a grid covering `n`.
    ///
    /// Parameters: `x` holds at least `(n - 1) * stride + 1` floats, `y` holds `n` floats.
    ///
    /// # Safety
    /// `x` is valid for every index `i * stride` with `i < n` and not written during the launch;
    /// `y` is valid for `n` elements and overlaps `x` nowhere.
    ///
    /// Performance: 4 bytes requested read and 4 written per element; the read moves
    /// `min(stride, 8) * 4` bytes of sectors per element from DRAM.
    #[kernel]
    pub unsafe fn coalescing_read_stride_ca(x: *const f32, y: *mut f32, n: usize, stride: usize) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i < n`, so `i * stride` is an index the caller guarantees valid.
            unsafe { *y.add(i) = load_global_ca(x.add(i * stride)) };
        }
    }

    /// `y[i] = x[i * stride]` with L2-only loads (`ld.global.cg`): as
    /// [`coalescing_read_stride_ca`], bypassing L1.
    ///
    /// Launch, parameters, performance: as [`coalescing_read_stride_ca`].
    ///
    /// # Safety
    /// As [`coalescing_read_stride_ca`].
    #[kernel]
    pub unsafe fn coalescing_read_stride_cg(x: *const f32, y: *mut f32, n: usize, stride: usize) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i < n`, so `i * stride` is an index the caller guarantees valid.
            unsafe { *y.add(i) = load_global_cg(x.add(i * stride)) };
        }
    }
}
