//! The seed's first kernels, one output per thread straight from global memory: the basic
//! kernels (mask in global memory, seed 1.2) and the same with the mask in `__constant__`
//! memory (seed 2.1.4), in 1D and 2D.

use gpu_std::kernel;
use gpu_std::math::fmaf32;

use super::{C_MASK_1D, C_MASK_2D};
use gpu_std::{global_index_x, global_index_y};

/// Seed 1.2, `convolution_1D_basic_kernel`: one output per thread, the mask in global
/// memory, ghost elements skipped by a bounds test inside the loop.
///
/// Algorithm: thread `i = blockIdx.x * blockDim.x + threadIdx.x` sums
/// `input[i + j - r] * mask[j]` over `j < w` in a register and stores it once.
///
/// Launch: any block size (the host uses [`BLOCK_1D`](super::BLOCK_1D)); grid covering `n`.
///
/// Parameters: `input`, `output`: `n` floats; `mask`: `mask_width` floats, `mask_width` odd.
///
/// # Safety
/// The pointers are valid for those lengths; `output` overlaps neither input.
///
/// Performance: per multiply-add two global loads (`N` and `M`): CGMA 1. Neighbouring
/// threads load overlapping inputs, so L1/L2 absorb most of the `w`-fold re-reading, but
/// every load is still an instruction through the memory pipeline.
#[kernel]
pub unsafe fn convolution_1d_basic(
    input: *const f32,
    mask: *const f32,
    output: *mut f32,
    mask_width: usize,
    n: usize,
) {
    let i = global_index_x();
    if i >= n {
        return;
    }
    let r = mask_width / 2;
    let mut acc = 0.0f32;
    for j in 0..mask_width {
        let k = (i + j).wrapping_sub(r);
        if k < n {
            // SAFETY: `k < n`, `j < mask_width`.
            acc = fmaf32(unsafe { *input.add(k) }, unsafe { *mask.add(j) }, acc);
        }
    }
    // SAFETY: `i < n`.
    unsafe { *output.add(i) = acc };
}

/// Seed 2.1.4: [`convolution_1d_basic`] with the mask in `__constant__` memory
/// ([`C_MASK_1D`]): all lanes of a warp read the same `M[j]`, which the constant cache
/// broadcasts in one transaction.
///
/// Launch: any block size (the host uses [`BLOCK_1D`](super::BLOCK_1D)); grid covering `n`.
/// [`C_MASK_1D`] holds the mask.
///
/// Parameters: `input`, `output`: `n` floats; `mask_width` odd, at most
/// [`MAX_MASK_WIDTH`](super::MAX_MASK_WIDTH) (larger traps).
///
/// # Safety
/// `input` and `output` are valid for `n` floats and do not overlap.
///
/// Performance: one global load per multiply-add: CGMA 2.
#[kernel]
pub unsafe fn convolution_1d_constant_mask(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    n: usize,
) {
    let i = global_index_x();
    if i >= n {
        return;
    }
    let r = mask_width / 2;
    let mut acc = 0.0f32;
    for j in 0..mask_width {
        let k = (i + j).wrapping_sub(r);
        if k < n {
            // SAFETY: `k < n`.
            acc = fmaf32(unsafe { *input.add(k) }, C_MASK_1D::read(j), acc);
        }
    }
    // SAFETY: `i < n`.
    unsafe { *output.add(i) = acc };
}

/// Seed chapter 8's 2D counterpart of [`convolution_1d_basic`]: one output per thread,
/// the row-major `w x w` mask in global memory, ghost cells skipped.
///
/// Launch: any 2D block (the host uses [`TILE_2D_X`](super::TILE_2D_X) x
/// [`TILE_2D_Y`](super::TILE_2D_Y)); grid covering `cols` along x and `rows` along y.
///
/// Parameters: `input`, `output`: row-major `rows x cols`; `mask`: `mask_width^2` floats.
///
/// # Safety
/// The pointers are valid for those lengths; `output` overlaps neither input.
///
/// Performance: two global loads per multiply-add (CGMA 1).
#[kernel]
pub unsafe fn convolution_2d_basic(
    input: *const f32,
    mask: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
) {
    let (x, y) = (global_index_x(), global_index_y());
    if x >= cols || y >= rows {
        return;
    }
    let r = mask_width / 2;
    let mut acc = 0.0f32;
    for jy in 0..mask_width {
        let yy = (y + jy).wrapping_sub(r);
        if yy >= rows {
            continue;
        }
        for jx in 0..mask_width {
            let xx = (x + jx).wrapping_sub(r);
            if xx < cols {
                // SAFETY: `yy < rows`, `xx < cols`, `jy, jx < mask_width`.
                let (v, m) =
                    unsafe { (*input.add(yy * cols + xx), *mask.add(jy * mask_width + jx)) };
                acc = fmaf32(v, m, acc);
            }
        }
    }
    // SAFETY: `y < rows`, `x < cols`.
    unsafe { *output.add(y * cols + x) = acc };
}

/// [`convolution_2d_basic`] with the mask in `__constant__` memory ([`C_MASK_2D`]).
///
/// Launch: as [`convolution_2d_basic`]. [`C_MASK_2D`] holds the mask.
///
/// Parameters: `input`, `output`: row-major `rows x cols`; `mask_width` odd, at most
/// [`MAX_MASK_WIDTH_2D`](super::MAX_MASK_WIDTH_2D) (larger traps).
///
/// # Safety
/// `input` and `output` are valid for `rows * cols` floats and do not overlap.
///
/// Performance: one global load per multiply-add (CGMA 2).
#[kernel]
pub unsafe fn convolution_2d_constant_mask(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
) {
    let (x, y) = (global_index_x(), global_index_y());
    if x >= cols || y >= rows {
        return;
    }
    let r = mask_width / 2;
    let mut acc = 0.0f32;
    for jy in 0..mask_width {
        let yy = (y + jy).wrapping_sub(r);
        if yy >= rows {
            continue;
        }
        for jx in 0..mask_width {
            let xx = (x + jx).wrapping_sub(r);
            if xx < cols {
                // SAFETY: `yy < rows`, `xx < cols`.
                let v = unsafe { *input.add(yy * cols + xx) };
                acc = fmaf32(v, C_MASK_2D::read(jy * mask_width + jx), acc);
            }
        }
    }
    // SAFETY: `y < rows`, `x < cols`.
    unsafe { *output.add(y * cols + x) = acc };
}
