//! Vector add, `z = x + y` on `f32` (seed "并行计算(二)——CUDA", NVIDIA's `vectorAdd` sample):
//! launchers for the kernels in `gpu::vector_add` and their CPU reference.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gpu::vector_add as k;

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
use crate::launch;

/// The vector-add kernels, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// One element per thread, grid covering `n` (the seed's `vecAdd`).
    VectorAdd,
    /// Grid-stride loop over a grid sized to the GPU (one wave of resident blocks).
    VectorAddGridStride,
    /// Grid-stride loop with 16-byte (`float4`) loads and stores.
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
            Variant::VectorAdd => k::VECTOR_ADD,
            Variant::VectorAddGridStride => k::VECTOR_ADD_GRID_STRIDE,
            Variant::VectorAddVec4 => k::VECTOR_ADD_VEC4,
        }
    }

    /// The launch the host uses for `n` elements: blocks of [`k::BLOCK_SIZE`] threads; a grid
    /// covering `n` for [`Variant::VectorAdd`], one wave of resident blocks (SMs x blocks per
    /// SM, at most enough to cover `n`, or `n / 4` groups of four for
    /// [`Variant::VectorAddVec4`]) for the grid-stride variants.
    pub fn launch_config(self, gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
        let covering = launch::blocks_to_cover(self.kernel_name(), n, k::BLOCK_SIZE as u64)?;
        let wave = || -> Result<u32> {
            Ok(gpu.sm_count()? * (gpu.max_threads_per_sm()? / k::BLOCK_SIZE).max(1))
        };
        let grid = match self {
            Variant::VectorAdd => covering,
            Variant::VectorAddGridStride => wave()?.min(covering),
            Variant::VectorAddVec4 => wave()?.min(covering.div_ceil(4)).max(1),
        };
        Ok(launch::linear(grid, k::BLOCK_SIZE, 0))
    }
}

/// Queues `z = x + y` on `gpu`'s stream with the variant's own launch configuration and
/// returns it. Nothing is launched for `n = 0`.
///
/// # Errors
/// [`Error::LengthMismatch`] if `y` or `z` differ in length from `x`; [`Error::InvalidLaunch`]
/// if `n` needs more blocks than a grid holds; [`Error::Driver`] if the launch fails.
pub fn launch(
    gpu: &Gpu,
    variant: Variant,
    x: &CudaSlice<f32>,
    y: &CudaSlice<f32>,
    z: &mut CudaSlice<f32>,
) -> Result<LaunchConfig> {
    let cfg = variant.launch_config(gpu, x.len())?;
    launch_with_config(gpu, variant, x, y, z, cfg)?;
    Ok(cfg)
}

/// As [`launch`], with a launch configuration chosen by the caller (the seed's toy runs
/// [`Variant::VectorAdd`] as 8 blocks of 128 threads).
///
/// # Errors
/// As [`launch`]; also [`Error::InvalidLaunch`] if the block is not 1..=1024 threads, or if the
/// grid of a [`Variant::VectorAdd`] launch does not cover `n`.
pub fn launch_with_config(
    gpu: &Gpu,
    variant: Variant,
    x: &CudaSlice<f32>,
    y: &CudaSlice<f32>,
    z: &mut CudaSlice<f32>,
    cfg: LaunchConfig,
) -> Result<()> {
    let kernel = variant.kernel_name();
    let n = x.len();
    for (what, len) in [("y", y.len()), ("z", z.len())] {
        if len != n {
            return Err(Error::LengthMismatch {
                what,
                expected: n,
                actual: len,
            });
        }
    }
    launch::check_block(kernel, cfg.block_dim.0, false)?;
    if cfg.block_dim.1 != 1 || cfg.block_dim.2 != 1 || cfg.grid_dim.1 != 1 || cfg.grid_dim.2 != 1 {
        return Err(Error::LaunchShape {
            kernel,
            grid: cfg.grid_dim,
            block: cfg.block_dim,
            requirement: "the kernel indexes along x only: grid and block must be one-dimensional",
        });
    }
    let threads = cfg.grid_dim.0 as u64 * cfg.block_dim.0 as u64;
    if variant == Variant::VectorAdd && threads < n as u64 {
        return Err(Error::LaunchShape {
            kernel,
            grid: cfg.grid_dim,
            block: cfg.block_dim,
            requirement: "one thread per element: the grid must cover every element",
        });
    }
    if variant == Variant::VectorAddVec4 && threads < (n % 4) as u64 {
        return Err(Error::LaunchShape {
            kernel,
            grid: cfg.grid_dim,
            block: cfg.block_dim,
            requirement: "the grid needs a thread for each of the n % 4 tail elements",
        });
    }
    if n == 0 {
        return Ok(());
    }
    if cfg.grid_dim.0 == 0 {
        return Err(Error::LaunchShape {
            kernel,
            grid: cfg.grid_dim,
            block: cfg.block_dim,
            requirement: "the grid has no blocks",
        });
    }
    let f = gpu.function(kernel)?;
    let mut args = gpu.stream().launch_builder(&f);
    args.arg(x).arg(y).arg(z).arg(&n);
    // SAFETY: the arguments match `vector_add(x: *const f32, y: *const f32, z: *mut f32, n: usize)`
    // (and its grid-stride and vec4 twins): three device buffers of `n` f32 each (lengths
    // checked above; cudarc allocations are at least 256-byte aligned, as the vec4 kernel
    // needs), `z` distinct from the inputs (it is borrowed mutably), `n` as a 64-bit count.
    unsafe { args.launch(cfg) }.during(format!("launching {kernel}"))?;
    Ok(())
}

/// Copies `x` and `y` to the device, runs the variant into an output poisoned with NaN, and
/// returns `z`.
pub fn run(gpu: &Gpu, variant: Variant, x: &[f32], y: &[f32]) -> Result<Vec<f32>> {
    if y.len() != x.len() {
        return Err(Error::LengthMismatch {
            what: "y",
            expected: x.len(),
            actual: y.len(),
        });
    }
    let (d_x, d_y) = (gpu.upload(x)?, gpu.upload(y)?);
    let mut d_z = gpu.poisoned(x.len(), f32::NAN)?;
    launch(gpu, variant, &d_x, &d_y, &mut d_z)?;
    gpu.download(&d_z, variant.kernel_name())
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
    fn variants_name_their_kernels() {
        let names: Vec<_> = Variant::ALL.iter().map(|v| v.kernel_name()).collect();
        assert_eq!(
            names,
            ["vector_add", "vector_add_grid_stride", "vector_add_vec4"]
        );
    }
}
