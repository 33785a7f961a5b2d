//! Host side of the two kernels written against cuda_std 0.2's API (`gpu::cuda_std_style`):
//! a vector add and a block sum, on the caller's device memory and stream.
//!
//! [`vector_add`] and [`block_sums`] are the entry points (one launch each, nothing
//! synchronises); [`run_vector_add`] and [`run_block_sums`] are the host one-shots the tests
//! use; [`vector_add_reference`] and [`block_sums_reference`] the CPU references.
//!
//! ```no_run
//! # fn main() -> cpu::Result<()> {
//! use cpu::cuda_std_style::{block_sums, partial_count};
//! let gpu = cpu::Gpu::new(0)?;
//! let input = gpu.upload(&[1.0f32; 1000])?;
//! let mut partial = gpu.zeros::<f32>(partial_count(1000))?;
//! block_sums(&gpu, &input, &mut partial)?;
//! let sums = gpu.download(&partial, "cuda_std_block_sum")?;
//! assert_eq!(sums, [256.0, 256.0, 256.0, 232.0]);
//! # Ok(())
//! # }
//! ```

use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu::cuda_std_style::{BLOCK_SIZE, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result, expect_len};
use crate::launch;

/// Most elements either kernel takes: `thread::index_1d()`, cuda_std's element index, is a
/// `u32`, so a launch may not have more than 2^32 threads.
pub const MAX_ELEMENTS: usize = 1 << 32;

/// Partial sums [`block_sums`] writes for `n` input elements: one per block of
/// [`BLOCK_SIZE`] elements, `ceil(n / BLOCK_SIZE)`.
pub fn partial_count(n: usize) -> usize {
    n.div_ceil(BLOCK_SIZE as usize)
}

/// Queues `c = a + b` (`n = a.len()` floats) with `cuda_std_vector_add` on `gpu`'s stream,
/// and returns its launch configuration: blocks of [`BLOCK_SIZE`] threads, a grid covering
/// `n`. Nothing synchronises. `a`, `b` and `c` are any device memory of the handle's context
/// (a `CudaSlice<f32>` or a view of one); the kernel receives `a` and `b` as slices.
///
/// Empty input: nothing is launched.
///
/// # Errors
/// [`Error::WrongContext`] if a buffer lives in another context than `gpu`'s;
/// [`Error::LengthMismatch`] (`what: "b"` or `"c"`) if `b` or `c` differ in length from `a`;
/// [`Error::OutOfRange`] (`what: "a length"`) beyond [`MAX_ELEMENTS`]; [`Error::Driver`] if
/// the launch fails.
pub fn vector_add(
    gpu: &Gpu,
    a: &impl DevicePtr<f32>,
    b: &impl DevicePtr<f32>,
    c: &mut impl DevicePtrMut<f32>,
) -> Result<LaunchConfig> {
    let kernel = kernels::cuda_std_vector_add;
    gpu.check_buffer("a", a)?;
    gpu.check_buffer("b", b)?;
    gpu.check_buffer("c", c)?;
    let n = a.len();
    expect_len("b", n, b.len())?;
    expect_len("c", n, c.len())?;
    let cfg = covering_launch(kernel.name(), "a length", n)?;
    if n == 0 {
        return Ok(cfg);
    }
    // SAFETY: `cuda_std_vector_add(a: &[f32], b: &[f32], c: *mut f32)`: `a` and `b` travel as
    // slices of their own lengths, both `n` (checked), and `c` holds `n` floats (checked); all
    // three are in `gpu`'s context (checked); `c` overlaps neither input, since it is borrowed
    // mutably while they are borrowed. The launch is one-dimensional and covers `n <= 2^32`
    // elements (`covering_launch`).
    unsafe { gpu.launch_unchecked(kernel, cfg, (a, b, c)) }?;
    Ok(cfg)
}

/// Queues `cuda_std_block_sum` on `gpu`'s stream: `partial[j]` becomes the sum of `input`'s
/// block `j` of [`BLOCK_SIZE`] elements (the last block's may be fewer), computed by a
/// shared-memory tree, and returns the launch configuration. Nothing synchronises. The sum of
/// the partials is the sum of `input`; [`partial_count`] gives the length `partial` needs.
///
/// Empty input: nothing is launched (`partial` must be empty too).
///
/// # Errors
/// [`Error::WrongContext`] if a buffer lives in another context than `gpu`'s;
/// [`Error::LengthMismatch`] (`what: "partial"`) unless `partial.len()` is
/// [`partial_count`]`(input.len())`; [`Error::OutOfRange`] (`what: "input length"`) beyond
/// [`MAX_ELEMENTS`]; [`Error::Driver`] if the launch fails.
pub fn block_sums(
    gpu: &Gpu,
    input: &impl DevicePtr<f32>,
    partial: &mut impl DevicePtrMut<f32>,
) -> Result<LaunchConfig> {
    let kernel = kernels::cuda_std_block_sum;
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("partial", partial)?;
    let n = input.len();
    expect_len("partial", partial_count(n), partial.len())?;
    let cfg = covering_launch(kernel.name(), "input length", n)?;
    if n == 0 {
        return Ok(cfg);
    }
    // SAFETY: `cuda_std_block_sum(input: &[f32], partial: *mut f32)`: blocks of exactly
    // `BLOCK_SIZE` threads, one-dimensional (`covering_launch`); `partial` holds
    // `ceil(n / BLOCK_SIZE)` floats, which is `gridDim.x` (checked); both buffers are in
    // `gpu`'s context (checked) and do not overlap (one borrowed mutably, one shared);
    // `n <= 2^32` (`covering_launch`).
    unsafe { gpu.launch_unchecked(kernel, cfg, (input, partial)) }?;
    Ok(cfg)
}

/// The launch of both kernels over `n` elements: `ceil(n / BLOCK_SIZE)` blocks of
/// [`BLOCK_SIZE`] threads.
fn covering_launch(kernel: &'static str, what: &'static str, n: usize) -> Result<LaunchConfig> {
    if n > MAX_ELEMENTS {
        return Err(Error::OutOfRange {
            what,
            value: n as u64,
            min: 0,
            max: MAX_ELEMENTS as u64,
        });
    }
    let grid = launch::blocks_to_cover(kernel, n, BLOCK_SIZE as u64)?;
    Ok(launch::linear(grid, BLOCK_SIZE, 0))
}

/// Copies `a` and `b` to the device, runs [`vector_add`] into an output poisoned with NaN, and
/// returns `c`. Synchronises (it returns host data).
///
/// # Errors
/// [`Error::LengthMismatch`] if `b` differs in length from `a`; as [`vector_add`].
pub fn run_vector_add(gpu: &Gpu, a: &[f32], b: &[f32]) -> Result<Vec<f32>> {
    expect_len("b", a.len(), b.len())?;
    if a.is_empty() {
        return Ok(Vec::new());
    }
    let (d_a, d_b) = (gpu.upload(a)?, gpu.upload(b)?);
    let mut d_c = gpu.poisoned(a.len(), f32::NAN)?;
    vector_add(gpu, &d_a, &d_b, &mut d_c)?;
    gpu.download(&d_c, kernels::cuda_std_vector_add.name())
}

/// Copies `input` to the device, runs [`block_sums`] into partials poisoned with NaN, and
/// returns them. Synchronises.
///
/// # Errors
/// As [`block_sums`].
pub fn run_block_sums(gpu: &Gpu, input: &[f32]) -> Result<Vec<f32>> {
    if input.is_empty() {
        return Ok(Vec::new());
    }
    let d_input = gpu.upload(input)?;
    let mut d_partial = gpu.poisoned(partial_count(input.len()), f32::NAN)?;
    block_sums(gpu, &d_input, &mut d_partial)?;
    gpu.download(&d_partial, kernels::cuda_std_block_sum.name())
}

/// CPU reference of [`vector_add`]: `c[i] = a[i] + b[i]`, one correctly rounded `f32` add per
/// element, which the GPU's `add.rn.f32` matches bit for bit.
pub fn vector_add_reference(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// CPU reference of [`block_sums`]: per block of [`BLOCK_SIZE`] elements, the sum in `f64`
/// and the sum of magnitudes (for [`block_sum_error_bound`]).
pub fn block_sums_reference(input: &[f32]) -> Vec<(f64, f64)> {
    input
        .chunks(BLOCK_SIZE as usize)
        .map(|block| {
            block.iter().fold((0.0, 0.0), |(sum, abs), &x| {
                (sum + x as f64, abs + (x as f64).abs())
            })
        })
        .collect()
}

/// Bound on `|gpu - exact|` for one block's sum, whose magnitudes add up to `sum_abs`: every
/// element goes through `log2(BLOCK_SIZE)` additions of the tree, each rounding to `f32`
/// (relative error at most `2^-24`), so `log2(BLOCK_SIZE) * 2^-23 * sum_abs` bounds it with a
/// factor 2 to spare; plus `BLOCK_SIZE` roundings of the `f64` reference.
pub fn block_sum_error_bound(sum_abs: f64) -> f64 {
    let depth = BLOCK_SIZE.ilog2() as f64;
    (depth * f32::EPSILON as f64 + BLOCK_SIZE as f64 * f64::EPSILON) * sum_abs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partials_cover_the_input() {
        assert_eq!(partial_count(0), 0);
        assert_eq!(partial_count(1), 1);
        assert_eq!(partial_count(256), 1);
        assert_eq!(partial_count(257), 2);
    }

    #[test]
    fn launches_cover_and_refuse_beyond_u32_indices() {
        let cfg = covering_launch("k", "n", 1000).unwrap();
        assert_eq!((cfg.grid_dim, cfg.block_dim), ((4, 1, 1), (256, 1, 1)));
        assert_eq!(covering_launch("k", "n", 0).unwrap().grid_dim.0, 0);
        let last = covering_launch("k", "n", MAX_ELEMENTS).unwrap();
        assert_eq!(last.grid_dim.0 as u64 * 256, 1 << 32);
        assert!(matches!(
            covering_launch("k", "n", MAX_ELEMENTS + 1),
            Err(Error::OutOfRange { what: "n", .. })
        ));
    }

    #[test]
    fn references() {
        assert_eq!(
            vector_add_reference(&[1.0, -2.0], &[0.5, 2.0]),
            vec![1.5, 0.0]
        );
        let input: Vec<f32> = (0..300)
            .map(|i| if i % 2 == 0 { 1.0 } else { -2.0 })
            .collect();
        assert_eq!(
            block_sums_reference(&input),
            vec![(-128.0, 384.0), (-22.0, 66.0)]
        );
        assert!(block_sums_reference(&[]).is_empty());
        assert!(block_sum_error_bound(1.0) > 8.0 * f32::EPSILON as f64);
    }

    #[test]
    fn kernels_are_named() {
        assert_eq!(kernels::cuda_std_vector_add.name(), "cuda_std_vector_add");
        assert_eq!(kernels::cuda_std_block_sum.name(), "cuda_std_block_sum");
    }
}
