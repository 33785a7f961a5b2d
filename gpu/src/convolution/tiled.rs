//! The seed's tiled kernels, the input tile in shared memory: tile plus halo cells (seed 3.1,
//! in 1D and 2D) and internal cells only, halo cells from global memory through the caches
//! (seed 3.3, 1D).

use gpu_std::kernel;
use gpu_std::math::fmaf32;

use super::common::read_or_ghost;
use super::{
    BLOCK_1D, C_MASK_1D, C_MASK_2D, MAX_MASK_WIDTH, MAX_MASK_WIDTH_2D, TILE_2D_X, TILE_2D_Y,
};
use gpu_std::{block_idx, syncthreads, thread_idx};

/// Seed 3.1: each block stages its tile of `blockDim.x` inputs plus `r` halo cells on each
/// side in `__shared__ float N_ds[TILE_SIZE + MAX_MASK_WIDTH - 1]`; boundary blocks write
/// 0 for the ghost cells, so the compute loop has no bounds test.
///
/// Algorithm (the seed's): the last `r` threads load the left halo (the previous tile's
/// last elements), every thread its internal element, the first `r` threads the right halo;
/// barrier; thread `t` sums `N_ds[t + j] * M[j]`. The seed assumes `n` is a multiple of the
/// block; here elements past `n` are staged as 0 and their outputs not stored.
///
/// Launch: block [`BLOCK_1D`] (the shared array is sized for it; a larger block traps);
/// grid `ceil(n / BLOCK_1D)`. [`C_MASK_1D`] holds the mask.
///
/// Parameters: as [`convolution_1d_constant_mask`](super::basic::convolution_1d_constant_mask).
///
/// # Safety
/// `input` and `output` are valid for `n` floats and do not overlap.
///
/// Performance: `B + 2r` global loads of `N` per block of `B` outputs instead of `B w`:
/// the seed's ratio `B (2n + 1) / (B + 2n)`, 6.84 for `B` = 256, `w` = 7.
#[kernel]
pub unsafe fn convolution_1d_tiled_halo(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    n: usize,
) {
    let n_ds = gpu_std::static_shared!(
        s_convolution_1d_tiled_halo: [f32; BLOCK_1D as usize + MAX_MASK_WIDTH - 1]
    );
    let b = block_idx().x as usize;
    let block = BLOCK_1D as usize;
    let t = thread_idx().x as usize;
    let r = mask_width / 2;
    let i = b * block + t;
    if t >= block - r {
        // The previous tile's element `t` (`i - block`); block 0 has ghosts there (the
        // index wraps below 0 and reads as a ghost).
        // SAFETY: slot `t - (block - r) < r` has this one writer.
        unsafe {
            n_ds.write(
                t - (block - r),
                read_or_ghost(input, i.wrapping_sub(block), n),
            )
        };
    }
    // SAFETY: slot `r + t` has this one writer; out-of-range reads are ghosts.
    unsafe { n_ds.write(r + t, read_or_ghost(input, i, n)) };
    if t < r {
        // SAFETY: slot `r + block + t` has this one writer.
        unsafe { n_ds.write(r + block + t, read_or_ghost(input, i + block, n)) };
    }
    syncthreads();
    if i < n {
        let mut acc = 0.0f32;
        for j in 0..mask_width {
            // SAFETY: slots `t .. t + 2r` were written before the barrier.
            acc = fmaf32(unsafe { n_ds.read(t + j) }, C_MASK_1D::read(j), acc);
        }
        // SAFETY: `i < n`.
        unsafe { *output.add(i) = acc };
    }
}

/// Seed 3.3: only the block's internal elements go to shared memory
/// (`__shared__ float N_ds[TILE_SIZE]`); halo cells are read from global memory, where the
/// neighbouring block's loads have usually left them in L2 (and L1).
///
/// Algorithm (the seed's): stage `N_ds[t] = N[i]`; barrier; for each tap, read the element
/// from `N_ds` if it lies in this tile, from `N` if it is a halo cell, skip it if a ghost.
///
/// Launch: block [`BLOCK_1D`] (larger traps); grid `ceil(n / BLOCK_1D)`. [`C_MASK_1D`]
/// holds the mask.
///
/// Parameters: as [`convolution_1d_constant_mask`](super::basic::convolution_1d_constant_mask).
///
/// # Safety
/// `input` and `output` are valid for `n` floats and do not overlap.
///
/// Performance: `B` staged loads plus `r (r + 1)` halo loads per block (cache hits):
/// ratio `B (2n + 1) / (B + n (n + 1))`, simpler code than [`convolution_1d_tiled_halo`]
/// at the price of a branch per tap.
#[kernel]
pub unsafe fn convolution_1d_tiled_cached_halo(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    n: usize,
) {
    let n_ds =
        gpu_std::static_shared!(s_convolution_1d_tiled_cached_halo: [f32; BLOCK_1D as usize]);
    let block = BLOCK_1D as usize;
    let t = thread_idx().x as usize;
    let tile_start = block_idx().x as usize * block;
    let i = tile_start + t;
    // SAFETY: slot `t` has this one writer; past `n` it holds a ghost.
    unsafe { n_ds.write(t, read_or_ghost(input, i, n)) };
    syncthreads();
    if i < n {
        let r = mask_width / 2;
        let next_tile_start = tile_start + block;
        let mut acc = 0.0f32;
        for j in 0..mask_width {
            let k = (i + j).wrapping_sub(r);
            if k < n {
                let v = if k >= tile_start && k < next_tile_start {
                    // SAFETY: `k - tile_start < block`, written before the barrier.
                    unsafe { n_ds.read(k - tile_start) }
                } else {
                    // SAFETY: `k < n`.
                    unsafe { *input.add(k) }
                };
                acc = fmaf32(v, C_MASK_1D::read(j), acc);
            }
        }
        // SAFETY: `i < n`.
        unsafe { *output.add(i) = acc };
    }
}

/// Seed 3.1 in 2D: each block stages its `32 x 8` output tile plus `r` halo cells on every
/// side in shared memory, ghost cells as 0, then computes from shared memory alone.
///
/// Algorithm: the `(32 + 2r) x (8 + 2r)` input tile is loaded by the block's 256 threads in
/// a block-stride loop (consecutive threads, consecutive columns: coalesced); barrier;
/// thread `(tx, ty)` sums `tile[ty + jy][tx + jx] * M[jy][jx]` (a warp reads 32 consecutive
/// words: no bank conflicts).
///
/// Launch: block [`TILE_2D_X`] x [`TILE_2D_Y`]; grid `(ceil(cols / 32), ceil(rows / 8))`.
/// [`C_MASK_2D`] holds the mask.
///
/// Parameters: as [`convolution_2d_constant_mask`](super::basic::convolution_2d_constant_mask).
///
/// # Safety
/// `input` and `output` are valid for `rows * cols` floats and do not overlap; the block
/// is 32 x 8.
///
/// Performance: `(32 + 2r)(8 + 2r)` loads per 256 outputs instead of `256 w^2`: ratio
/// `256 w^2 / ((32 + 2r)(8 + 2r))`, 14.8 for a 5 x 5 mask. Thin tiles pay a large halo; the
/// ratio grows with the tile, as the seed notes.
#[kernel]
pub unsafe fn convolution_2d_tiled_halo(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
) {
    const TX: usize = TILE_2D_X as usize;
    const TY: usize = TILE_2D_Y as usize;
    const PITCH: usize = TX + MAX_MASK_WIDTH_2D - 1;
    let n_ds = gpu_std::static_shared!(
        s_convolution_2d_tiled_halo: [f32; (TILE_2D_X as usize + MAX_MASK_WIDTH_2D - 1)
            * (TILE_2D_Y as usize + MAX_MASK_WIDTH_2D - 1)]
    );
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let col0 = block_idx().x as usize * TX;
    let row0 = block_idx().y as usize * TY;
    let r = mask_width / 2;
    let (in_w, in_h) = (TX + 2 * r, TY + 2 * r);
    let mut e = ty * TX + tx;
    while e < in_w * in_h {
        let (ly, lx) = (e / in_w, e % in_w);
        let (yy, xx) = ((row0 + ly).wrapping_sub(r), (col0 + lx).wrapping_sub(r));
        let v = if yy < rows && xx < cols {
            // SAFETY: in bounds.
            unsafe { *input.add(yy * cols + xx) }
        } else {
            0.0
        };
        // SAFETY: slot `(ly, lx)` has this one writer (`e` is distinct per thread and step).
        unsafe { n_ds.write(ly * PITCH + lx, v) };
        e += TX * TY;
    }
    syncthreads();
    let (x, y) = (col0 + tx, row0 + ty);
    if x < cols && y < rows {
        let mut acc = 0.0f32;
        for jy in 0..mask_width {
            for jx in 0..mask_width {
                // SAFETY: written before the barrier.
                let v = unsafe { n_ds.read((ty + jy) * PITCH + tx + jx) };
                acc = fmaf32(v, C_MASK_2D::read(jy * mask_width + jx), acc);
            }
        }
        // SAFETY: `y < rows`, `x < cols`.
        unsafe { *output.add(y * cols + x) = acc };
    }
}
