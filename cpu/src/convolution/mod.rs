//! Convolution with a small odd-width mask, 1D and 2D, on the caller's device memory and
//! stream (seed "大规模并行处理器编程实战 第八章", PMPP chapter 8; the kernels are in
//! `gpu::convolution`).
//!
//! # Semantics
//! `P[i] = sum_j N[i + j - r] M[j]` (1D) and
//! `P[y][x] = sum_{jy, jx} N[y + jy - r][x + jx - r] M[jy][jx]` (2D, row-major), `f32`, with
//! `r = w / 2` for a mask of odd width `w` (at most [`MAX_MASK_WIDTH`] = 31 in 1D,
//! [`MAX_MASK_WIDTH_2D`] = 31, a 31 x 31 mask, in 2D; separable masks, `M[jy][jx] = y[jy]
//! x[jx]` ([`Factors`]), from [`Mask2d::separable`], [`Mask2d::gaussian`], [`Mask2d::box_filter`] or
//! detected by [`Mask2d::new`] (unless made with [`Mask2d::dense`]), take `2w` multiply-adds per output instead of `w^2`); ghost elements outside the input read as 0;
//! the output has the input's shape. The mask is not flipped (a correlation, as in the seed and
//! in image-processing practice).
//!
//! # Calling it
//! Make the mask once ([`Mask1d::new`], [`Mask2d::new`]: validated, copied to the device,
//! immutable, no lock held), then call [`conv1d`] / [`conv2d`] with your own buffers, as often
//! as needed. They queue the fastest variant that is correct for the buffers given on the
//! handle's stream and return its launch configuration; nothing synchronises. Inputs are
//! `&impl DevicePtr<f32>`, outputs `&mut impl DevicePtrMut<f32>`: a `CudaSlice<f32>` or any
//! view of one. To run on your own stream, make the handle with [`Gpu::from_stream`](crate::Gpu::from_stream).
//!
//! ```no_run
//! use cpu::Gpu;
//! use cpu::convolution::{self, Mask1d, Mask2d};
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = Gpu::new(0)?;
//! let signal = gpu.upload(&vec![1.0f32; 1 << 20])?;
//! let mut smoothed = gpu.zeros::<f32>(1 << 20)?;
//! let mask = Mask1d::new(&gpu, &[0.25, 0.5, 0.25])?;
//! convolution::conv1d(&gpu, &signal, &mask, &mut smoothed)?;
//! // Any view works: the second half only (a view that is not 16-byte aligned takes a slower
//! // kernel that accepts any alignment).
//! let half = 1 << 19;
//! convolution::conv1d(&gpu, &signal.slice(half..), &mask, &mut smoothed.slice_mut(half..))?;
//!
//! let (rows, cols) = (480, 640);
//! let image = gpu.upload(&vec![0.5f32; rows * cols])?;
//! let mut blurred = gpu.zeros::<f32>(rows * cols)?;
//! let box3 = Mask2d::new(&gpu, &[1.0 / 9.0; 9], 3)?;
//! convolution::conv2d(&gpu, &image, &box3, &mut blurred, rows, cols)?;
//! let host = gpu.download(&blurred, "conv2d")?; // waits for the stream
//! # Ok(())
//! # }
//! ```
//!
//! - [`conv1d`], [`conv2d`]: the entry points (the vec4 kernels when the alignment allows).
//! - [`conv1d_with`], [`conv2d_with`]: a chosen [`Variant1d`] / [`Variant2d`], the seed's
//!   versions, validated the same way; a variant that needs alignment and gets a misaligned
//!   view returns [`Error::Misaligned`](crate::Error::Misaligned).
//! - [`conv1d_values`], [`conv2d_values`]: the mask as values, for a single launch.
//! - [`run_1d`], [`run_2d`]: host slices in, host `Vec` out (tests and demo).
//! - [`reference_1d`], [`reference_2d`], [`compare`]: the `f64` CPU references and the
//!   comparison with their tolerance.
//!
//! Constant memory: the `__constant__` masks ([`gpu::convolution::C_MASK_1D`],
//! [`gpu::convolution::C_MASK_2D`]) belong to the module, one per context. Each launch of a
//! kernel that reads one takes [`Gpu::constant_memory`](crate::Gpu::constant_memory), writes the mask unless that symbol
//! already holds it, queues the kernel and releases the guard, so masks can be used from many
//! threads, streams and handles at once and every launch reads its own mask.
//!
//! Empty input is valid (see [`crate::error`]): nothing is launched.

mod conv1d;
mod conv2d;
mod mask;
mod reference;
mod variant2d;

pub use conv1d::{Variant1d, conv1d, conv1d_values, conv1d_with, run_1d};
pub use conv2d::{
    SEPARABLE_NARROW_MIN_ELEMENTS, Variant2d, conv2d, conv2d_values, conv2d_with, run_2d,
    run_2d_mask,
};
pub use gpu::convolution::{MAX_MASK_WIDTH, MAX_MASK_WIDTH_2D, MAX_MASK_WIDTH_2D_VEC4};
pub use mask::{
    Factors, Mask1d, Mask2d, RANK1_TOLERANCE_EPS, SCIPY_TRUNCATE, gaussian_taps,
    max_gaussian_sigma, rank1_factors, validate_mask_width,
};
pub use reference::{
    Comparison, RELATIVE_TOLERANCE, Reference, bytes_moved, compare, compare_within,
    f32_error_bound, reference_1d, reference_2d, reference_2d_separable,
};

use gpu::convolution::vec4_1d;

/// Every `.entry` the convolution launchers use (the vec4, wide and fused separable families
/// have one per mask width, the two-pass separable variant two kernels).
pub fn entry_names() -> Vec<&'static str> {
    let mut names = Vec::new();
    for v in Variant1d::ALL {
        if v == Variant1d::Convolution1dTiledVec4 {
            names.extend(vec4_1d::CONVOLUTION_1D_TILED_VEC4_BY_RADIUS.map(|k| k.name()));
        } else {
            names.push(v.kernel_name());
        }
    }
    for v in Variant2d::ALL {
        for w in v.widths() {
            for name in v.entries(w) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_cover_every_width() {
        // 1D: 4 + 16 widths; 2D: basic, constant mask, tiled halo, 5 vec4 widths, 11 wide
        // widths, rows + cols, 15 fused widths.
        assert_eq!(entry_names().len(), 4 + 16 + 3 + 5 + 11 + 2 + 15);
    }
}
