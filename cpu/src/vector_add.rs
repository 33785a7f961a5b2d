//! Vector add, `z = x + y` on `f32`, on the caller's device memory and stream (seed
//! "并行计算(二)——CUDA", NVIDIA's `vectorAdd` sample; the kernels are in `gpu::vector_add`).
//!
//! [`add`] is the one to call: it picks the fastest variant that is correct for the buffers'
//! alignment. [`add_with`] runs a chosen [`Variant`] with its own launch configuration,
//! [`add_with_config`] with the caller's (the seed's `add<<<8, 128>>>`); [`run`] is the host
//! one-shot for tests and the demo; [`reference()`] the CPU reference.
//!
//! ```no_run
//! # fn main() -> cpu::Result<()> {
//! let gpu = cpu::Gpu::new(0)?;
//! let x = gpu.upload(&[1.0f32; 1000])?;
//! let y = gpu.upload(&[2.0f32; 1000])?;
//! let mut z = gpu.zeros::<f32>(1000)?;
//! cpu::vector_add::add(&gpu, &x, &y, &mut z)?;
//! // Views work too: the first 500 elements only.
//! cpu::vector_add::add(&gpu, &x.slice(..500), &y.slice(..500), &mut z.slice_mut(..500))?;
//! # Ok(())
//! # }
//! ```

use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu::vector_add::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result, expect_len};
use crate::launch::{self, VEC4_ALIGNMENT};

/// Queues `z = x + y` (`n = x.len()` floats) on `gpu`'s stream with the fastest variant that
/// is correct for the buffers given. Nothing synchronises.
///
/// `x`, `y` and `z` are any device memory of the handle's context: a `CudaSlice<f32>` or a
/// view of one.
///
/// Variant: [`Variant::VectorAddVec4`] when all three buffers start on a 16-byte boundary (its
/// `float4` loads and stores need it; any `n`, the `n % 4` tail is added element by element),
/// else [`Variant::VectorAddGridStride`]. See [`Variant::fastest`].
///
/// Empty input: nothing is launched.
///
/// # Errors
/// [`Error::WrongContext`] if a buffer lives in another context than `gpu`'s;
/// [`Error::LengthMismatch`] (`what: "y"` or `"z"`) if `y` or `z` differ in length from `x`;
/// [`Error::GridTooLarge`] if `n` needs more blocks than a grid holds; [`Error::Driver`] if
/// the launch fails.
pub fn add(
    gpu: &Gpu,
    x: &impl DevicePtr<f32>,
    y: &impl DevicePtr<f32>,
    z: &mut impl DevicePtrMut<f32>,
) -> Result<()> {
    queue(gpu, None, x, y, z, None).map(drop)
}

/// As [`add`], with the variant chosen by the caller and its own launch configuration
/// ([`Variant::launch_config`]), which it returns.
///
/// # Errors
/// As [`add`]; also [`Error::Misaligned`] if `variant` is [`Variant::VectorAddVec4`] and a
/// buffer does not start on a 16-byte boundary (checked only for a non-empty input).
pub fn add_with(
    gpu: &Gpu,
    variant: Variant,
    x: &impl DevicePtr<f32>,
    y: &impl DevicePtr<f32>,
    z: &mut impl DevicePtrMut<f32>,
) -> Result<LaunchConfig> {
    queue(gpu, Some(variant), x, y, z, None)
}

/// As [`add_with`], with a launch configuration chosen by the caller (the seed's toy runs
/// [`Variant::VectorAdd`] as 8 blocks of 128 threads).
///
/// # Errors
/// As [`add_with`]; also [`Error::InvalidBlock`] if the block is not 1..=1024 threads;
/// [`Error::LaunchShape`] if the grid or block is not one-dimensional, the grid has no blocks,
/// the grid of a [`Variant::VectorAdd`] launch does not cover `n`, or a
/// [`Variant::VectorAddVec4`] grid has fewer threads than the `n % 4` tail elements.
pub fn add_with_config(
    gpu: &Gpu,
    variant: Variant,
    x: &impl DevicePtr<f32>,
    y: &impl DevicePtr<f32>,
    z: &mut impl DevicePtrMut<f32>,
    cfg: LaunchConfig,
) -> Result<()> {
    queue(gpu, Some(variant), x, y, z, Some(cfg)).map(drop)
}

/// Copies `x` and `y` to the device, runs the variant into an output poisoned with NaN, and
/// returns `z`. Synchronises (it returns host data).
///
/// # Errors
/// [`Error::LengthMismatch`] if `y` differs in length from `x`; as [`add_with`].
pub fn run(gpu: &Gpu, variant: Variant, x: &[f32], y: &[f32]) -> Result<Vec<f32>> {
    expect_len("y", x.len(), y.len())?;
    if x.is_empty() {
        return Ok(Vec::new());
    }
    let (d_x, d_y) = (gpu.upload(x)?, gpu.upload(y)?);
    let mut d_z = gpu.poisoned(x.len(), f32::NAN)?;
    add_with(gpu, variant, &d_x, &d_y, &mut d_z)?;
    gpu.download(&d_z, variant.kernel_name())
}

/// The launcher behind [`add`] (`chosen` is `None`), [`add_with`] (`cfg` is `None`) and
/// [`add_with_config`].
fn queue(
    gpu: &Gpu,
    chosen: Option<Variant>,
    x: &impl DevicePtr<f32>,
    y: &impl DevicePtr<f32>,
    z: &mut impl DevicePtrMut<f32>,
    cfg: Option<LaunchConfig>,
) -> Result<LaunchConfig> {
    gpu.check_buffer("x", x)?;
    gpu.check_buffer("y", y)?;
    gpu.check_buffer("z", z)?;
    let n = x.len();
    expect_len("y", n, y.len())?;
    expect_len("z", n, z.len())?;
    if let (Some(variant), Some(cfg)) = (chosen, cfg) {
        check_config(variant, n, &cfg)?;
    }
    if n == 0 {
        return Ok(cfg.unwrap_or(launch::linear(0, k::BLOCK_SIZE, 0)));
    }
    // Each buffer's address is taken once, for the checks and the launch.
    let (x, y, z) = (gpu.bind(x), gpu.bind(y), gpu.bind_mut(z));
    let (x_ptr, y_ptr, z_ptr) = (x.address(), y.address(), z.address());
    let variant = match chosen {
        Some(variant) => {
            variant.check_alignment(x_ptr, y_ptr, z_ptr)?;
            variant
        }
        None => Variant::fastest(
            [x_ptr, y_ptr, z_ptr]
                .iter()
                .all(|&p| launch::is_aligned(p, VEC4_ALIGNMENT)),
        ),
    };
    let cfg = match cfg {
        Some(cfg) => cfg,
        None => variant.launch_config(gpu, n)?,
    };
    match variant {
        // Safe kernels: their threads write only their own elements of `z`.
        Variant::VectorAdd => gpu.launch(kernels::vector_add, cfg, (x, y, z))?,
        Variant::VectorAddGridStride => {
            gpu.launch(kernels::vector_add_grid_stride, cfg, (x, y, z))?
        }
        // SAFETY: three device views of `n` floats each (lengths checked) in `gpu`'s context
        // (checked), all starting on a 16-byte boundary (checked by `check_alignment`, or
        // `fastest` chose the variant only then); `z` overlaps neither input, since it is
        // borrowed mutably while they are borrowed. The launch is one-dimensional, and covers
        // the `n % 4` tail (`launch_config`, or `check_config` for a caller's configuration).
        Variant::VectorAddVec4 => {
            unsafe { gpu.launch_unchecked(kernels::vector_add_vec4, cfg, (x, y, z, n)) }?
        }
    }
    Ok(cfg)
}

/// Checks a caller's launch configuration for `variant` over `n` elements.
fn check_config(variant: Variant, n: usize, cfg: &LaunchConfig) -> Result<()> {
    let kernel = variant.kernel_name();
    let shape_error = |requirement| Error::LaunchShape {
        kernel,
        grid: cfg.grid_dim,
        block: cfg.block_dim,
        requirement,
    };
    launch::check_block(kernel, cfg.block_dim.0, false)?;
    if cfg.block_dim.1 != 1 || cfg.block_dim.2 != 1 || cfg.grid_dim.1 != 1 || cfg.grid_dim.2 != 1 {
        return Err(shape_error(
            "the kernel indexes along x only: grid and block must be one-dimensional",
        ));
    }
    let threads = cfg.grid_dim.0 as u64 * cfg.block_dim.0 as u64;
    if variant == Variant::VectorAdd && threads < n as u64 {
        return Err(shape_error(
            "one thread per element: the grid must cover every element",
        ));
    }
    if variant == Variant::VectorAddVec4 && threads < (n % 4) as u64 {
        return Err(shape_error(
            "the grid needs a thread for each of the n % 4 tail elements",
        ));
    }
    if n > 0 && cfg.grid_dim.0 == 0 {
        return Err(shape_error("the grid has no blocks"));
    }
    Ok(())
}

/// The vector-add kernels, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// One element per thread, grid covering `n` (the seed's `vecAdd`).
    VectorAdd,
    /// Grid-stride loop over a grid sized to the GPU (one wave of resident blocks).
    VectorAddGridStride,
    /// One 16-byte (`float4`) group per thread, grid covering the `n / 4` groups.
    VectorAddVec4,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [
        Variant::VectorAdd,
        Variant::VectorAddGridStride,
        Variant::VectorAddVec4,
    ];

    /// The kernel's `.entry` name in the PTX.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant::VectorAdd => kernels::vector_add.name(),
            Variant::VectorAddGridStride => kernels::vector_add_grid_stride.name(),
            Variant::VectorAddVec4 => kernels::vector_add_vec4.name(),
        }
    }

    /// The variant [`add`] runs: [`Variant::VectorAddVec4`] if `aligned` (`x`, `y` and `z` all
    /// start on a 16-byte boundary), else [`Variant::VectorAddGridStride`], the fastest of the
    /// others (H100, `docs/patterns/vector_add.md`: 96.1% of memcpy for vec4, 92.9% and 92.6%).
    pub fn fastest(aligned: bool) -> Variant {
        if aligned {
            Variant::VectorAddVec4
        } else {
            Variant::VectorAddGridStride
        }
    }

    /// Whether the variant needs `x`, `y` and `z` to start on a 16-byte boundary: only
    /// [`Variant::VectorAddVec4`], whose `float4` loads and stores are at multiples of 4
    /// elements from each base (any `n`: the `n % 4` tail is scalar).
    pub fn needs_alignment(self) -> bool {
        self == Variant::VectorAddVec4
    }

    /// Checks the variant's alignment precondition for buffers starting at the device
    /// addresses `x`, `y` and `z`.
    ///
    /// # Errors
    /// [`Error::Misaligned`] naming the first buffer not 16-byte aligned, if
    /// [`Variant::needs_alignment`].
    pub fn check_alignment(self, x: u64, y: u64, z: u64) -> Result<()> {
        if self.needs_alignment() {
            let kernel = self.kernel_name();
            for (what, address) in [("x", x), ("y", y), ("z", z)] {
                launch::check_aligned(kernel, what, address, VEC4_ALIGNMENT)?;
            }
        }
        Ok(())
    }

    /// The launch the host uses for `n` elements: blocks of [`k::BLOCK_SIZE`] threads; a grid
    /// covering `n` for [`Variant::VectorAdd`], covering the `n / 4` groups of four for
    /// [`Variant::VectorAddVec4`] (at least one block, for the `n % 4` tail), one wave of
    /// resident blocks ([`Gpu::one_wave`], at most enough to cover `n`) for
    /// [`Variant::VectorAddGridStride`].
    ///
    /// # Errors
    /// [`Error::GridTooLarge`] if `n` needs more blocks than a grid holds; [`Error::Driver`]
    /// from the device queries.
    pub fn launch_config(self, gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
        let covering = launch::blocks_to_cover(self.kernel_name(), n, k::BLOCK_SIZE as u64)?;
        let grid = match self {
            Variant::VectorAdd => covering,
            Variant::VectorAddGridStride => gpu
                .one_wave(self.kernel_name(), k::BLOCK_SIZE, 0)?
                .min(covering),
            Variant::VectorAddVec4 => covering.div_ceil(4).max(1),
        };
        Ok(launch::linear(grid, k::BLOCK_SIZE, 0))
    }
}

/// CPU reference: `z[i] = x[i] + y[i]`. One correctly rounded `f32` add per element, so the
/// GPU (`add.rn.f32`) must match it bit for bit.
pub fn reference(x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(a, b)| a + b).collect()
}

/// Bytes a vector add of `n` elements must move through DRAM: two reads and one write of 4 bytes.
pub fn bytes_moved(n: usize) -> u64 {
    12 * n as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_adds_elementwise() {
        assert_eq!(
            reference(&[1.0, -2.0, 0.5], &[3.0, 2.0, 0.25]),
            vec![4.0, 0.0, 0.75]
        );
        assert!(reference(&[], &[]).is_empty());
    }

    #[test]
    fn bytes_per_element() {
        assert_eq!(bytes_moved(1 << 26), 12 << 26);
    }

    #[test]
    fn vec4_only_on_aligned_buffers() {
        assert_eq!(Variant::fastest(true), Variant::VectorAddVec4);
        assert_eq!(Variant::fastest(false), Variant::VectorAddGridStride);
        let vec4 = Variant::VectorAddVec4;
        assert!(vec4.check_alignment(0x100, 0x200, 0x310).is_ok());
        assert!(matches!(
            vec4.check_alignment(0x100, 0x204, 0x300),
            Err(Error::Misaligned {
                what: "y",
                address: 0x204,
                ..
            })
        ));
        assert!(
            Variant::VectorAddGridStride
                .check_alignment(0x104, 0x208, 0x30c)
                .is_ok()
        );
    }

    #[test]
    fn caller_configs_are_checked() {
        let (v, v4) = (Variant::VectorAdd, Variant::VectorAddVec4);
        assert!(check_config(v, 1024, &launch::linear(8, 128, 0)).is_ok());
        assert!(matches!(
            check_config(v, 2000, &launch::linear(8, 128, 0)),
            Err(Error::LaunchShape { .. })
        ));
        assert!(matches!(
            check_config(v, 10, &launch::linear(1, 2048, 0)),
            Err(Error::InvalidBlock { block: 2048, .. })
        ));
        assert!(check_config(v4, 7, &launch::linear(1, 32, 0)).is_ok());
        assert!(check_config(v4, 0, &launch::linear(0, 32, 0)).is_ok());
        assert!(matches!(
            check_config(v4, 7, &launch::linear(0, 32, 0)),
            Err(Error::LaunchShape { .. })
        ));
    }

    #[test]
    fn variants_name_their_kernels() {
        let names: Vec<_> = Variant::ALL.iter().map(|v| v.kernel_name()).collect();
        assert_eq!(
            names,
            [
                kernels::vector_add.name(),
                kernels::vector_add_grid_stride.name(),
                kernels::vector_add_vec4.name()
            ]
        );
    }
}
