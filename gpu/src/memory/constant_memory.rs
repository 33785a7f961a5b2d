//! Constant memory (seed "cuda 学习之内存层次结构", "constant memory"): 64 KiB of read-only
//! device memory behind a small per-SM cache that serves a warp in one pass when all its lanes
//! read the same address (broadcast) and serialises distinct addresses. Kernel parameters live
//! in constant memory too.
//!
//! Five kernels do the same work, `out[i] = sum_k table[(k + lane * spread) % TABLE_LEN]` for
//! `k < reads`: with `spread = 0` every lane of a warp reads the same word (uniform), with
//! `spread = 1` the 32 lanes read 32 different words (divergent). The table is read from
//! `__constant__` memory, from global memory with ordinary loads, and through the read-only
//! data path (`ld.global.nc`, `__ldg`).
//!
//! Also the seed's example: `__constant__ int devVar = 100; a[i] = devVar + i` (`xminus`).

use gpu_std::constant_memory;

/// Elements of the table (4 KiB of `f32`).
pub const TABLE_LEN: usize = 1024;
/// Threads per block of the table kernels.
pub const BLOCK_SIZE: u32 = 256;

constant_memory!(
    /// The table in `__constant__` memory.
    pub C_TABLE: [f32; TABLE_LEN]
);

constant_memory!(
    /// The seed's `__constant__ int devVar` (the host writes 100, as its initialiser does).
    pub C_DEV_VAR: [i32; 1]
);

/// The kernels (device build only).
pub mod kernels {
    use super::{C_DEV_VAR, C_TABLE, TABLE_LEN};
    use gpu_std::kernel;
    use gpu_std::{global_index_x, lane_id, load_global_nc, thread_idx};

    /// The shared loop: `sum_k read((k + lane * spread) % TABLE_LEN)` for `k < reads`.
    #[inline(always)]
    fn table_sum(reads: u32, spread: u32, read: impl Fn(usize) -> f32) -> f32 {
        let lane = lane_id();
        let mut sum = 0.0f32;
        let mut k = 0u32;
        while k < reads {
            let j = (k.wrapping_add(lane.wrapping_mul(spread)) as usize) % TABLE_LEN;
            sum += read(j);
            k += 1;
        }
        sum
    }

    /// The table read from `__constant__` memory ([`C_TABLE`], `ld.const`).
    ///
    /// Launch: blocks of [`BLOCK_SIZE`](super::BLOCK_SIZE), a grid covering `n`.
    ///
    /// # Safety
    /// `out` is valid for `n` floats; the host wrote [`C_TABLE`] before the launch.
    #[kernel]
    pub unsafe fn constant_memory_table(out: *mut f32, n: usize, reads: u32, spread: u32) {
        let i = global_index_x();
        if i < n {
            let sum = table_sum(reads, spread, C_TABLE::read);
            // SAFETY: `i < n`.
            unsafe { *out.add(i) = sum };
        }
    }

    /// The same table read from global memory with ordinary loads (`ld.global`, cached in L1).
    ///
    /// Launch: as [`constant_memory_table`].
    ///
    /// # Safety
    /// `table` holds [`TABLE_LEN`] floats; `out` holds `n`.
    #[kernel]
    pub unsafe fn constant_memory_global_table(
        table: *const f32,
        out: *mut f32,
        n: usize,
        reads: u32,
        spread: u32,
    ) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `j < TABLE_LEN`, the table's length.
            let sum = table_sum(reads, spread, |j| unsafe { *table.add(j) });
            // SAFETY: `i < n`.
            unsafe { *out.add(i) = sum };
        }
    }

    /// The same table read through the read-only data path (`ld.global.nc`, CUDA's `__ldg`).
    ///
    /// Launch: as [`constant_memory_table`].
    ///
    /// # Safety
    /// As [`constant_memory_global_table`], and nothing writes `table` during the launch.
    #[kernel]
    pub unsafe fn constant_memory_readonly_table(
        table: *const f32,
        out: *mut f32,
        n: usize,
        reads: u32,
        spread: u32,
    ) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `j < TABLE_LEN`; the table is read-only for the launch.
            let sum = table_sum(reads, spread, |j| unsafe { load_global_nc(table.add(j)) });
            // SAFETY: `i < n`.
            unsafe { *out.add(i) = sum };
        }
    }

    /// The seed's `xminus`: `a[i] = devVar + threadIdx.x` with `devVar` in constant memory.
    ///
    /// Launch: one block of up to 1024 threads (the seed: `<<<1, 4>>>`).
    ///
    /// # Safety
    /// `a` holds `blockDim.x` `i32`.
    #[kernel]
    pub unsafe fn constant_memory_dev_var(a: *mut i32) {
        let i = thread_idx().x as usize;
        // SAFETY: `i < blockDim.x`.
        unsafe { *a.add(i) = C_DEV_VAR::read(0).wrapping_add(i as i32) };
    }
}
