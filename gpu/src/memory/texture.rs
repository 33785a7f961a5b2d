//! Texture memory: a 1D lookup through a CUDA texture object (`tex1Dfetch`, PTX
//! `tex.1d.v4.f32.s32`) against plain global loads and the read-only data path (`__ldg`,
//! `ld.global.nc`) (seed "cuda 学习之内存层次结构", texture memory).
//!
//! A texture object is a 64-bit handle, created on the host (`cuTexObjectCreate`) over device
//! memory and passed to the kernel as a plain `u64` parameter; PTX's unified texture mode takes
//! that handle in a register as the texture operand. rustc's nvptx backend has no texture
//! intrinsics, but inline PTX reaches the instruction.
//!
//! Since Maxwell the texture cache and L1 are one unit, and `ld.global.nc` uses the same
//! non-coherent path without a texture object: the experiment shows how close the three are on
//! a gather, `out[i] = table[idx[i]]`.

/// Threads per block of every lookup kernel.
pub const BLOCK_SIZE: u32 = 256;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::{global_index_x, load_global_nc, tex1d_fetch_f32};

    /// `out[i] = table[idx[i]]` through a texture object (`tex1Dfetch`).
    ///
    /// Algorithm: one lookup per thread; the index is read coalesced, the table through the
    /// texture unit (texture cache, shared with L1 since Maxwell).
    ///
    /// Launch: blocks of [`BLOCK_SIZE`](super::BLOCK_SIZE); a grid covering `n`.
    ///
    /// Parameters: `table` is a texture object over the table's `f32`s; `idx` and `out` hold
    /// `n` elements in device memory.
    ///
    /// # Safety
    /// `table` is a live texture object; `idx` and `out` are valid for `n` elements and do not
    /// overlap; every index is below the table's length (the host checks).
    ///
    /// Performance: 4 bytes of index, one table lookup and 4 bytes of output per element.
    #[kernel]
    pub unsafe fn texture_lookup_tex1d(table: u64, idx: *const u32, out: *mut f32, n: usize) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i < n`; the index fits in i32 because the host limits the table to the
            // device's 1D linear texture width (2^28 at most).
            unsafe { *out.add(i) = tex1d_fetch_f32(table, *idx.add(i) as i32) };
        }
    }

    /// `out[i] = table[idx[i]]` with plain global loads (cached in L1 by default).
    ///
    /// Launch, performance: as [`texture_lookup_tex1d`].
    ///
    /// Parameters: `table` holds `len` floats; `idx`, `out` hold `n` elements.
    ///
    /// # Safety
    /// `table` is valid for every index in `idx`, `idx` and `out` for `n` elements; `out`
    /// overlaps nothing.
    #[kernel]
    pub unsafe fn texture_lookup_global(
        table: *const f32,
        idx: *const u32,
        out: *mut f32,
        n: usize,
    ) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i < n`; the caller guarantees every index is inside the table.
            unsafe { *out.add(i) = *table.add(*idx.add(i) as usize) };
        }
    }

    /// `out[i] = __ldg(&table[idx[i]])`: the read-only data path (`ld.global.nc`) without a
    /// texture object.
    ///
    /// Launch, parameters, performance: as [`texture_lookup_global`].
    ///
    /// # Safety
    /// As [`texture_lookup_global`], and no thread writes `table` during the launch.
    #[kernel]
    pub unsafe fn texture_lookup_ldg(table: *const f32, idx: *const u32, out: *mut f32, n: usize) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i < n`; the caller guarantees every index is inside the read-only table.
            unsafe { *out.add(i) = load_global_nc(table.add(*idx.add(i) as usize)) };
        }
    }
}
