//! Convolution with a small odd-width mask, 1D and 2D (seed "大规模并行处理器编程实战 第八章",
//! PMPP chapter 8): launchers for the kernels in `gpu::convolution`, masks placed in
//! `__constant__` (and global) memory, the CPU references in `f64`, the seed's access ratios,
//! and the named image masks of `demo conv2d`.
//!
//! Semantics: `P[i] = sum_j N[i + j - r] M[j]` (1D) and
//! `P[y][x] = sum_{jy, jx} N[y + jy - r][x + jx - r] M[jy][jx]` (2D, row-major), `r = w / 2`,
//! ghost elements outside the input read as 0. The mask is not flipped (a correlation, as in
//! the seed and in image-processing practice).
//!
//! Usage: validate and place the mask once with [`Mask::new_1d`] / [`Mask::new_2d`] (which
//! holds the module's constant memory until dropped), then [`launch_1d`] / [`launch_2d`] as
//! often as needed; or the one-shot [`run_1d`] / [`run_2d`].

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gpu::convolution as k;

use crate::context::{ConstantMemory, Gpu};
use crate::error::{DriverContext, Error, Result};
use crate::launch;
use crate::verify::Mismatch;

pub use gpu::convolution::{MAX_MASK_WIDTH, MAX_MASK_WIDTH_2D};

/// Relative tolerance of a GPU output against the `f64` reference, scaled per output by
/// `sum |M[j] N[i + j - r]|` (the size of the terms summed, which bounds the `f32` rounding).
pub const RELATIVE_TOLERANCE: f64 = 1e-5;

/// The 1D kernels, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant1d {
    /// Seed 1.2: one output per thread, mask in global memory.
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-basic"))]
    Convolution1dBasic,
    /// Seed 2.1.4: mask in `__constant__` memory.
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-constant-mask"))]
    Convolution1dConstantMask,
    /// Seed 3.1: tile plus halo cells in shared memory, ghosts as 0.
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-tiled-halo"))]
    Convolution1dTiledHalo,
    /// Seed 3.3: internal cells in shared memory, halo cells from global memory (L2).
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-tiled-cached-halo"))]
    Convolution1dTiledCachedHalo,
    /// The one to call: 4096-output tiles, 16-byte global and shared accesses, the next tile
    /// prefetched, 16 outputs per thread; one kernel per mask width.
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-tiled-vec4"))]
    Convolution1dTiledVec4,
}

impl Variant1d {
    /// Every variant.
    pub const ALL: [Variant1d; 5] = [
        Variant1d::Convolution1dBasic,
        Variant1d::Convolution1dConstantMask,
        Variant1d::Convolution1dTiledHalo,
        Variant1d::Convolution1dTiledCachedHalo,
        Variant1d::Convolution1dTiledVec4,
    ];

    /// The kernel's name: its `.entry` in the PTX, or for [`Variant1d::Convolution1dTiledVec4`]
    /// the family name (see [`Variant1d::entry`]).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant1d::Convolution1dBasic => k::CONVOLUTION_1D_BASIC,
            Variant1d::Convolution1dConstantMask => k::CONVOLUTION_1D_CONSTANT_MASK,
            Variant1d::Convolution1dTiledHalo => k::CONVOLUTION_1D_TILED_HALO,
            Variant1d::Convolution1dTiledCachedHalo => k::CONVOLUTION_1D_TILED_CACHED_HALO,
            Variant1d::Convolution1dTiledVec4 => k::CONVOLUTION_1D_TILED_VEC4,
        }
    }

    /// The `.entry` launched for a mask of `mask_width` taps (odd, at most
    /// [`MAX_MASK_WIDTH`]; the vec4 kernels have one entry per width).
    ///
    /// # Panics
    /// If `mask_width` is even or larger than [`MAX_MASK_WIDTH`] (launchers validate first).
    pub fn entry(self, mask_width: usize) -> &'static str {
        assert!(mask_width % 2 == 1 && mask_width <= MAX_MASK_WIDTH);
        match self {
            Variant1d::Convolution1dTiledVec4 => {
                k::CONVOLUTION_1D_TILED_VEC4_BY_RADIUS[mask_width / 2]
            }
            other => other.kernel_name(),
        }
    }

    /// The seed section the kernel implements (`None`: beyond the seed).
    pub fn seed_section(self) -> Option<&'static str> {
        match self {
            Variant1d::Convolution1dBasic => Some("1.2"),
            Variant1d::Convolution1dConstantMask => Some("2.1.4"),
            Variant1d::Convolution1dTiledHalo => Some("3.1"),
            Variant1d::Convolution1dTiledCachedHalo => Some("3.3"),
            Variant1d::Convolution1dTiledVec4 => None,
        }
    }

    /// The launch for `n` outputs and a mask of `mask_width` taps: blocks of [`k::BLOCK_1D`]
    /// threads; a grid covering `n` (one output per thread) for the seed kernels; for
    /// [`Variant1d::Convolution1dTiledVec4`] one wave of resident blocks (SMs x blocks per SM
    /// from the occupancy calculator), at most one block per 4096-output tile.
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] if `n` needs more blocks than a grid holds; [`Error::Driver`]
    /// from the device queries.
    pub fn launch_config(self, gpu: &Gpu, n: usize, mask_width: usize) -> Result<LaunchConfig> {
        let kernel = self.kernel_name();
        let grid = match self {
            Variant1d::Convolution1dTiledVec4 => {
                let tiles = launch::blocks_to_cover(kernel, n, k::VEC4_TILE_1D as u64)?;
                one_wave(gpu, self.entry(mask_width), k::BLOCK_1D)?.min(tiles)
            }
            _ => launch::blocks_to_cover(kernel, n, k::BLOCK_1D as u64)?,
        };
        Ok(launch::linear(grid, k::BLOCK_1D, 0))
    }

    /// The seed's access ratio for this kernel with mask radius `r = w / 2` and `block`
    /// threads per block: loads of `N` the untiled kernels make for a block's outputs
    /// (`w` per output) over the loads this kernel makes. 1 for the untiled kernels;
    /// `B (2r + 1) / (B + 2r)` for the tiled halo (10.20 for `B` = 128, `r` = 5; the seed
    /// prints 10.13);
    /// `B (2r + 1) / (B + r (r + 1))` when the halo cells are read from global memory;
    /// `T (2r + 1) / (T + 32)` for the vec4 tile of `T = 8 B` outputs and its 16-cell halos.
    pub fn access_ratio(self, mask_width: usize, block: u32) -> f64 {
        let (b, r) = (block as f64, (mask_width / 2) as f64);
        let w = 2.0 * r + 1.0;
        match self {
            Variant1d::Convolution1dBasic | Variant1d::Convolution1dConstantMask => 1.0,
            Variant1d::Convolution1dTiledHalo => b * w / (b + 2.0 * r),
            Variant1d::Convolution1dTiledCachedHalo => b * w / (b + r * (r + 1.0)),
            Variant1d::Convolution1dTiledVec4 => {
                let t = b * k::VEC4_OUTPUTS_PER_THREAD_1D as f64;
                t * w / (t + 2.0 * k::VEC4_HALO_1D as f64)
            }
        }
    }
}

/// The 2D kernels, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant2d {
    /// One output per thread, mask in global memory (32 x 8 blocks).
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-basic"))]
    Convolution2dBasic,
    /// Mask in `__constant__` memory.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-constant-mask"))]
    Convolution2dConstantMask,
    /// Seed 3.1 in 2D: a 32 x 8 tile plus halo in shared memory, ghosts as 0.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-tiled-halo"))]
    Convolution2dTiledHalo,
    /// The one to call: 64 x 64 tiles in a grid-stride loop, 16-byte global and shared
    /// accesses, the next tile prefetched, 2 x 8 outputs per thread from a rolling window of
    /// accumulators; one kernel per mask width.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-tiled-vec4"))]
    Convolution2dTiledVec4,
}

impl Variant2d {
    /// Every variant.
    pub const ALL: [Variant2d; 4] = [
        Variant2d::Convolution2dBasic,
        Variant2d::Convolution2dConstantMask,
        Variant2d::Convolution2dTiledHalo,
        Variant2d::Convolution2dTiledVec4,
    ];

    /// The kernel's name: its `.entry` in the PTX, or for [`Variant2d::Convolution2dTiledVec4`]
    /// the family name (see [`Variant2d::entry`]).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant2d::Convolution2dBasic => k::CONVOLUTION_2D_BASIC,
            Variant2d::Convolution2dConstantMask => k::CONVOLUTION_2D_CONSTANT_MASK,
            Variant2d::Convolution2dTiledHalo => k::CONVOLUTION_2D_TILED_HALO,
            Variant2d::Convolution2dTiledVec4 => k::CONVOLUTION_2D_TILED_VEC4,
        }
    }

    /// The `.entry` launched for a `mask_width x mask_width` mask (odd, at most
    /// [`MAX_MASK_WIDTH_2D`]; the vec4 kernels have one entry per width).
    ///
    /// # Panics
    /// If `mask_width` is even or larger than [`MAX_MASK_WIDTH_2D`] (launchers validate first).
    pub fn entry(self, mask_width: usize) -> &'static str {
        assert!(mask_width % 2 == 1 && mask_width <= MAX_MASK_WIDTH_2D);
        match self {
            Variant2d::Convolution2dTiledVec4 => {
                k::CONVOLUTION_2D_TILED_VEC4_BY_RADIUS[mask_width / 2]
            }
            other => other.kernel_name(),
        }
    }

    /// The seed section the kernel carries to 2D (`None`: beyond the seed).
    pub fn seed_section(self) -> Option<&'static str> {
        match self {
            Variant2d::Convolution2dBasic => Some("1.2 in 2D"),
            Variant2d::Convolution2dConstantMask => Some("2.1.4 in 2D"),
            Variant2d::Convolution2dTiledHalo => Some("3.1 in 2D"),
            Variant2d::Convolution2dTiledVec4 => None,
        }
    }

    /// Outputs per block along x and y.
    fn tile(self) -> (usize, usize) {
        match self {
            Variant2d::Convolution2dTiledVec4 => (k::VEC4_TILE_2D_X, k::VEC4_TILE_2D_Y),
            _ => (k::TILE_2D_X as usize, k::TILE_2D_Y as usize),
        }
    }

    /// The launch for a `rows x cols` image and a `mask_width x mask_width` mask: blocks of
    /// [`k::TILE_2D_X`] x [`k::TILE_2D_Y`] threads; grid `(ceil(cols / 32), ceil(rows / 8))`
    /// for the seed kernels; for the vec4 kernels a one-dimensional grid of one wave of
    /// resident blocks, at most one per 64 x 64 tile.
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] if the grid exceeds CUDA's limits; [`Error::Driver`] from the
    /// device queries.
    pub fn launch_config(
        self,
        gpu: &Gpu,
        rows: usize,
        cols: usize,
        mask_width: usize,
    ) -> Result<LaunchConfig> {
        let kernel = self.kernel_name();
        let (tx, ty) = self.tile();
        let block_dim = (k::TILE_2D_X, k::TILE_2D_Y, 1);
        if self == Variant2d::Convolution2dTiledVec4 {
            let tiles = (cols.div_ceil(tx) as u64)
                .checked_mul(rows.div_ceil(ty) as u64)
                .ok_or(Error::ShapeOverflow { rows, cols })?;
            let wave = one_wave(gpu, self.entry(mask_width), k::TILE_2D_X * k::TILE_2D_Y)?;
            return Ok(LaunchConfig {
                grid_dim: ((wave as u64).min(tiles) as u32, 1, 1),
                block_dim,
                shared_mem_bytes: 0,
            });
        }
        launch::covering_2d(kernel, (cols, rows), (tx as u64, ty as u64), block_dim)
    }

    /// The seed's access ratio carried to 2D, for a `w x w` mask: loads of `N` the untiled
    /// kernels make for a tile of `X x Y` outputs (`w^2` each) over the loads this kernel
    /// makes: `X Y w^2 / ((X + 2r)(Y + 2r))` for the tiled halo (32 x 8 tile), and
    /// `X Y w^2 / ((X + 8)(Y + 2r))` for the vec4 tile (64 x 64, 4 aligned halo columns a side).
    pub fn access_ratio(self, mask_width: usize) -> f64 {
        let r = (mask_width / 2) as f64;
        let w2 = (mask_width * mask_width) as f64;
        let (x, y) = self.tile();
        let (x, y) = (x as f64, y as f64);
        match self {
            Variant2d::Convolution2dBasic | Variant2d::Convolution2dConstantMask => 1.0,
            Variant2d::Convolution2dTiledHalo => x * y * w2 / ((x + 2.0 * r) * (y + 2.0 * r)),
            Variant2d::Convolution2dTiledVec4 => {
                let halo = 2.0 * k::VEC4_HALO_2D_X as f64;
                x * y * w2 / ((x + halo) * (y + 2.0 * r))
            }
        }
    }
}

/// Blocks of `block` threads of `entry` that fit on the device at once: SMs x blocks per SM
/// (the occupancy calculator), at least one.
fn one_wave(gpu: &Gpu, entry: &'static str, block: u32) -> Result<u32> {
    let per_sm = gpu
        .function(entry)?
        .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
        .during(format!("occupancy of {entry}"))?;
    Ok(gpu.sm_count()? * per_sm.max(1))
}

/// Every `.entry` the convolution launchers use (the vec4 families have one per mask width).
pub fn entry_names() -> Vec<&'static str> {
    let mut names = Vec::new();
    for v in Variant1d::ALL {
        if v == Variant1d::Convolution1dTiledVec4 {
            names.extend(k::CONVOLUTION_1D_TILED_VEC4_BY_RADIUS);
        } else {
            names.push(v.kernel_name());
        }
    }
    for v in Variant2d::ALL {
        if v == Variant2d::Convolution2dTiledVec4 {
            names.extend(k::CONVOLUTION_2D_TILED_VEC4_BY_RADIUS);
        } else {
            names.push(v.kernel_name());
        }
    }
    names
}

/// Checks a mask width: odd and `1..=max`.
///
/// # Errors
/// [`Error::InvalidInput`] naming the width and the limit.
pub fn validate_mask_width(width: usize, max: usize, what: &str) -> Result<()> {
    if width == 0 || width.is_multiple_of(2) || width > max {
        return Err(Error::MaskWidth {
            dims: if what == "2D" { 2 } else { 1 },
            width,
            max,
        });
    }
    Ok(())
}

/// A validated mask placed on the device: a global-memory copy (for the basic kernels) and the
/// `__constant__` symbol ([`k::C_MASK_1D`] or [`k::C_MASK_2D`]) written with it.
///
/// Constant memory belongs to the module, so a `Mask` holds [`Gpu::lock_constant_memory`]
/// while it lives, and its `Drop` waits for the stream, so no kernel still reading the symbol
/// can see another mask's values. Make one mask at a time per thread (a second would wait on
/// the first's lock).
pub struct Mask<'g> {
    gpu: &'g Gpu,
    width: usize,
    dims: usize,
    global: CudaSlice<f32>,
    _constants: ConstantMemory<'g>,
}

impl<'g> Mask<'g> {
    /// A 1D mask of `values.len()` taps.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the width is even, 0 or over [`MAX_MASK_WIDTH`];
    /// [`Error::Driver`] from the copies.
    pub fn new_1d(gpu: &'g Gpu, values: &[f32]) -> Result<Self> {
        validate_mask_width(values.len(), MAX_MASK_WIDTH, "1D")?;
        Self::place(gpu, values, values.len(), 1, k::C_MASK_1D::SYMBOL)
    }

    /// A `width x width` 2D mask, row-major in `values`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `width` is even, 0 or over [`MAX_MASK_WIDTH_2D`];
    /// [`Error::LengthMismatch`] if `values` does not hold `width^2` floats.
    pub fn new_2d(gpu: &'g Gpu, values: &[f32], width: usize) -> Result<Self> {
        validate_mask_width(width, MAX_MASK_WIDTH_2D, "2D")?;
        if values.len() != width * width {
            return Err(Error::LengthMismatch {
                what: "mask",
                expected: width * width,
                actual: values.len(),
            });
        }
        Self::place(gpu, values, width, 2, k::C_MASK_2D::SYMBOL)
    }

    fn place(
        gpu: &'g Gpu,
        values: &[f32],
        width: usize,
        dims: usize,
        symbol: &'static str,
    ) -> Result<Self> {
        let mut constants = gpu.constant_memory()?;
        constants.write(symbol, values)?;
        Ok(Self {
            gpu,
            width,
            dims,
            global: gpu.upload(values)?,
            _constants: constants,
        })
    }

    /// Taps along one side.
    pub fn width(&self) -> usize {
        self.width
    }

    fn expect_dims(&self, dims: usize) -> Result<()> {
        if self.dims != dims {
            return Err(Error::MaskDimensions {
                mask: self.dims as u32,
                convolution: dims as u32,
            });
        }
        Ok(())
    }
}

impl Drop for Mask<'_> {
    fn drop(&mut self) {
        // Kernels queued with this mask must finish before the constant memory is released;
        // a failure here resurfaces on the stream's next use.
        let _ = self.gpu.synchronize("waiting for the convolution kernels");
    }
}

fn expect_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected != actual {
        return Err(Error::LengthMismatch {
            what,
            expected,
            actual,
        });
    }
    Ok(())
}

/// Queues the 1D `variant` on `gpu`'s stream: `output = input * mask` (`n` floats each) and
/// returns the launch configuration.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty input or a 2D mask; [`Error::LengthMismatch`] if
/// `output` differs in length from `input`; [`Error::InvalidLaunch`] as in
/// [`Variant1d::launch_config`]; [`Error::Driver`] if the launch fails.
pub fn launch_1d(
    gpu: &Gpu,
    variant: Variant1d,
    input: &CudaSlice<f32>,
    mask: &Mask,
    output: &mut CudaSlice<f32>,
) -> Result<LaunchConfig> {
    mask.expect_dims(1)?;
    let n = input.len();
    expect_len("output", n, output.len())?;
    if n == 0 {
        return Ok(launch::linear(0, k::BLOCK_1D, 0));
    }
    let cfg = variant.launch_config(gpu, n, mask.width)?;
    let kernel = variant.entry(mask.width);
    let f = gpu.function(kernel)?;
    let mut args = gpu.stream().launch_builder(&f);
    args.arg(input);
    if variant == Variant1d::Convolution1dBasic {
        args.arg(&mask.global);
    }
    args.arg(output).arg(&mask.width).arg(&n);
    // SAFETY: the arguments match `(input: *const f32, [mask: *const f32,] output: *mut f32,
    // mask_width: usize, n: usize)` (the mask pointer for the basic kernel only): `input` and
    // `output` hold `n` floats (checked), do not overlap (one is borrowed mutably) and are
    // 256-byte aligned (cudarc allocations), the mask holds `mask_width` floats (validated
    // odd and at most MAX_MASK_WIDTH), is in C_MASK_1D as well, and stays there while `mask`
    // lives; the vec4 entry is the one compiled for this mask width; the block is BLOCK_1D.
    unsafe { args.launch(cfg) }.during(format!("launching {kernel}"))?;
    Ok(cfg)
}

/// Queues the 2D `variant` on `gpu`'s stream: `output = input * mask` for row-major
/// `rows x cols` images, and returns the launch configuration.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty image, `rows * cols` overflowing, or a 1D mask;
/// [`Error::LengthMismatch`] if a buffer does not hold `rows * cols` floats;
/// [`Error::InvalidLaunch`] as in [`Variant2d::launch_config`].
pub fn launch_2d(
    gpu: &Gpu,
    variant: Variant2d,
    input: &CudaSlice<f32>,
    mask: &Mask,
    output: &mut CudaSlice<f32>,
    rows: usize,
    cols: usize,
) -> Result<LaunchConfig> {
    mask.expect_dims(2)?;
    let n = image_len(rows, cols)?;
    expect_len("input", n, input.len())?;
    expect_len("output", n, output.len())?;
    if n == 0 {
        return Ok(launch::linear(0, k::TILE_2D_X * k::TILE_2D_Y, 0));
    }
    let cfg = variant.launch_config(gpu, rows, cols, mask.width)?;
    let kernel = variant.entry(mask.width);
    let f = gpu.function(kernel)?;
    let mut args = gpu.stream().launch_builder(&f);
    args.arg(input);
    if variant == Variant2d::Convolution2dBasic {
        args.arg(&mask.global);
    }
    args.arg(output).arg(&mask.width).arg(&rows).arg(&cols);
    // SAFETY: the arguments match `(input: *const f32, [mask: *const f32,] output: *mut f32,
    // mask_width: usize, rows: usize, cols: usize)` (the mask pointer for the basic kernel
    // only): both images hold rows * cols floats (checked), do not overlap, and are 256-byte
    // aligned; the mask holds mask_width^2 floats, also in C_MASK_2D while `mask` lives; the
    // vec4 entry is the one compiled for this mask width; blocks are 32 x 8.
    unsafe { args.launch(cfg) }.during(format!("launching {kernel}"))?;
    Ok(cfg)
}

/// `rows * cols`, refusing empty images and overflow.
fn image_len(rows: usize, cols: usize) -> Result<usize> {
    crate::error::elements(rows, cols)
}

/// Validates, copies `input` and `mask` to the device, runs the 1D variant into an output
/// poisoned with NaN, and returns the result.
///
/// # Errors
/// As [`Mask::new_1d`] and [`launch_1d`].
pub fn run_1d(gpu: &Gpu, variant: Variant1d, input: &[f32], mask: &[f32]) -> Result<Vec<f32>> {
    let mask = Mask::new_1d(gpu, mask)?;
    if input.is_empty() {
        return Ok(Vec::new());
    }
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(input.len(), f32::NAN)?;
    launch_1d(gpu, variant, &d_in, &mask, &mut d_out)?;
    gpu.download(&d_out, variant.entry(mask.width()))
}

/// Validates, copies the `rows x cols` image and the `mask_width x mask_width` mask to the
/// device, runs the 2D variant into an output poisoned with NaN, and returns the result.
///
/// # Errors
/// As [`Mask::new_2d`] and [`launch_2d`].
pub fn run_2d(
    gpu: &Gpu,
    variant: Variant2d,
    input: &[f32],
    rows: usize,
    cols: usize,
    mask: &[f32],
    mask_width: usize,
) -> Result<Vec<f32>> {
    let mask = Mask::new_2d(gpu, mask, mask_width)?;
    let n = image_len(rows, cols)?;
    expect_len("input", n, input.len())?;
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(n, f32::NAN)?;
    launch_2d(gpu, variant, &d_in, &mask, &mut d_out, rows, cols)?;
    gpu.download(&d_out, variant.entry(mask_width))
}

/// The CPU reference: exact-ish values in `f64`, and per output the scale
/// `sum |M N|` of the terms summed, which the comparison's tolerance is relative to.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The convolution in `f64`.
    pub values: Vec<f64>,
    /// `sum_j |M[j] N[i + j - r]|` per output.
    pub scale: Vec<f64>,
}

/// CPU reference of the 1D convolution, ghosts as 0, in `f64`.
///
/// # Panics
/// If the mask width is even.
pub fn reference_1d(input: &[f32], mask: &[f32]) -> Reference {
    assert!(mask.len() % 2 == 1, "mask width must be odd");
    let (n, r) = (input.len() as isize, (mask.len() / 2) as isize);
    let mut values = Vec::with_capacity(input.len());
    let mut scale = Vec::with_capacity(input.len());
    for i in 0..n {
        let (mut sum, mut abs) = (0.0f64, 0.0f64);
        for (j, &m) in mask.iter().enumerate() {
            let k = i + j as isize - r;
            if (0..n).contains(&k) {
                let term = m as f64 * input[k as usize] as f64;
                sum += term;
                abs += term.abs();
            }
        }
        values.push(sum);
        scale.push(abs);
    }
    Reference { values, scale }
}

/// CPU reference of the 2D convolution of a row-major `rows x cols` image with a row-major
/// `w x w` mask, ghosts as 0, in `f64`.
///
/// # Panics
/// If the shapes do not match or `w` is even.
pub fn reference_2d(input: &[f32], rows: usize, cols: usize, mask: &[f32], w: usize) -> Reference {
    assert_eq!(input.len(), rows * cols, "input is not rows x cols");
    assert!(
        w % 2 == 1 && mask.len() == w * w,
        "mask is not w x w with w odd"
    );
    let r = (w / 2) as isize;
    let mut values = Vec::with_capacity(input.len());
    let mut scale = Vec::with_capacity(input.len());
    for y in 0..rows as isize {
        for x in 0..cols as isize {
            let (mut sum, mut abs) = (0.0f64, 0.0f64);
            for jy in 0..w as isize {
                let yy = y + jy - r;
                if !(0..rows as isize).contains(&yy) {
                    continue;
                }
                for jx in 0..w as isize {
                    let xx = x + jx - r;
                    if (0..cols as isize).contains(&xx) {
                        let m = mask[(jy * w as isize + jx) as usize] as f64;
                        let term = m * input[yy as usize * cols + xx as usize] as f64;
                        sum += term;
                        abs += term.abs();
                    }
                }
            }
            values.push(sum);
            scale.push(abs);
        }
    }
    Reference { values, scale }
}

/// A GPU result compared with the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// `Ok` if every output is within `RELATIVE_TOLERANCE * scale` (plus a denormal floor).
    pub result: Result<(), Mismatch>,
    /// Largest `|got - expected| / scale` (0 where the scale is 0 and the output exact; NaN
    /// if any output is NaN).
    pub max_relative_error: f64,
}

/// Compares `got` with `reference`: `|got - expected| <= RELATIVE_TOLERANCE * scale + 1e-30`.
/// NaN never passes.
pub fn compare(got: &[f32], reference: &Reference) -> Comparison {
    if got.len() != reference.values.len() {
        return Comparison {
            result: Err(Mismatch {
                index: got.len().min(reference.values.len()),
                got: format!("{} elements", got.len()),
                expected: format!("{} elements", reference.values.len()),
                count: got.len().abs_diff(reference.values.len()),
            }),
            max_relative_error: f64::NAN,
        };
    }
    let mut first = None;
    let mut count = 0;
    let mut worst = 0.0f64;
    for (i, ((&g, &e), &s)) in got
        .iter()
        .zip(&reference.values)
        .zip(&reference.scale)
        .enumerate()
    {
        let err = (g as f64 - e).abs();
        let ok = err <= RELATIVE_TOLERANCE * s + 1e-30;
        let rel = if s > 0.0 {
            err / s
        } else if err == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        worst = if rel.is_nan() || worst.is_nan() {
            f64::NAN
        } else {
            worst.max(rel)
        };
        if !ok {
            count += 1;
            first.get_or_insert((i, g, e));
        }
    }
    Comparison {
        result: match first {
            None => Ok(()),
            Some((index, g, e)) => Err(Mismatch {
                index,
                got: format!("{g:e}"),
                expected: format!("{e:e}"),
                count,
            }),
        },
        max_relative_error: worst,
    }
}

/// Bytes a convolution of `n` outputs must move through DRAM: each input read once, each
/// output written once (the mask is negligible).
pub fn bytes_moved(n: usize) -> u64 {
    8 * n as u64
}

/// Named 2D masks for filtering images (`demo conv2d --mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum NamedMask {
    /// 1 x 1 identity.
    Identity,
    /// 3 x 3 box blur (all 1/9).
    Box3,
    /// 5 x 5 box blur.
    Box5,
    /// 5 x 5 Gaussian, binomial weights `[1 4 6 4 1]^T [1 4 6 4 1] / 256`.
    Gaussian5,
    /// 7 x 7 Gaussian, binomial weights `[1 6 15 20 15 6 1]` outer product `/ 4096`.
    Gaussian7,
    /// 3 x 3 sharpen: `5` at the centre, `-1` at the four neighbours.
    Sharpen3,
    /// 3 x 3 Sobel, horizontal derivative (responds to vertical edges).
    SobelX,
    /// 3 x 3 Sobel, vertical derivative (responds to horizontal edges).
    SobelY,
    /// 3 x 3 Laplacian (4-neighbour).
    Laplacian3,
}

impl NamedMask {
    /// `(width, row-major values)`.
    pub fn values(self) -> (usize, Vec<f32>) {
        let outer = |v: &[f32], norm: f32| -> Vec<f32> {
            v.iter()
                .flat_map(|a| v.iter().map(move |b| a * b / norm))
                .collect()
        };
        match self {
            NamedMask::Identity => (1, vec![1.0]),
            NamedMask::Box3 => (3, vec![1.0 / 9.0; 9]),
            NamedMask::Box5 => (5, vec![1.0 / 25.0; 25]),
            NamedMask::Gaussian5 => (5, outer(&[1.0, 4.0, 6.0, 4.0, 1.0], 256.0)),
            NamedMask::Gaussian7 => (7, outer(&[1.0, 6.0, 15.0, 20.0, 15.0, 6.0, 1.0], 4096.0)),
            NamedMask::Sharpen3 => (3, vec![0.0, -1.0, 0.0, -1.0, 5.0, -1.0, 0.0, -1.0, 0.0]),
            NamedMask::SobelX => (3, vec![-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0]),
            NamedMask::SobelY => (3, vec![-1.0, -2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0]),
            NamedMask::Laplacian3 => (3, vec![0.0, 1.0, 0.0, 1.0, -4.0, 1.0, 0.0, 1.0, 0.0]),
        }
    }

    /// Whether the mask is a derivative (its weights sum to 0): its output is signed and is
    /// shown as a magnitude.
    pub fn is_derivative(self) -> bool {
        matches!(
            self,
            NamedMask::SobelX | NamedMask::SobelY | NamedMask::Laplacian3
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_1d_by_hand() {
        // [1, 2, 3] * [1, 10, 100] with ghosts: P[0] = 0 + 10 + 200, P[1] = 1 + 20 + 300,
        // P[2] = 2 + 30 + 0.
        let r = reference_1d(&[1.0, 2.0, 3.0], &[1.0, 10.0, 100.0]);
        assert_eq!(r.values, vec![210.0, 321.0, 32.0]);
        assert_eq!(r.scale, r.values);
        let r = reference_1d(&[1.0, -2.0], &[3.0]);
        assert_eq!((r.values, r.scale), (vec![3.0, -6.0], vec![3.0, 6.0]));
    }

    #[test]
    fn reference_2d_by_hand() {
        // 2 x 2 image, 3 x 3 box of ones: every output sums the whole image.
        let r = reference_2d(&[1.0, 2.0, 3.0, 4.0], 2, 2, &[1.0; 9], 3);
        assert_eq!(r.values, vec![10.0; 4]);
        // Sobel-x on a 3 x 2 image of columns 0 | 1: at column 0 the right neighbour is 1
        // (weights 1, 2, 1 over the rows present); at column 1 the right neighbour is a ghost
        // and the left one is 0.
        let (w, sobel) = NamedMask::SobelX.values();
        let r = reference_2d(&[0.0, 1.0, 0.0, 1.0, 0.0, 1.0], 3, 2, &sobel, w);
        assert_eq!(r.values, vec![3.0, 0.0, 4.0, 0.0, 3.0, 0.0]);
    }

    #[test]
    fn reference_2d_of_one_row_is_1d() {
        let input = [0.5f32, -1.0, 2.0, 4.0, -3.0];
        let mask = [1.0f32, 2.0, 3.0];
        let mut mask_2d = vec![0.0f32; 9];
        mask_2d[3..6].copy_from_slice(&mask);
        assert_eq!(
            reference_2d(&input, 1, 5, &mask_2d, 3).values,
            reference_1d(&input, &mask).values
        );
    }

    #[test]
    fn seed_access_ratios() {
        // The seed's formula B (2n + 1) / (B + 2n) for B = 128, n = 5: 1408 / 138 = 10.20 (the
        // seed prints 10.13, i.e. 1408 / 139); for B = 32: 352 / 42 = 8.38 (it prints 8.14).
        let tiled = Variant1d::Convolution1dTiledHalo;
        assert!((tiled.access_ratio(11, 128) - 1408.0 / 138.0).abs() < 1e-12);
        assert!((tiled.access_ratio(11, 32) - 352.0 / 42.0).abs() < 1e-12);
        assert_eq!(Variant1d::Convolution1dBasic.access_ratio(7, 256), 1.0);
        let t2 = Variant2d::Convolution2dTiledHalo.access_ratio(5);
        assert!((t2 - 256.0 * 25.0 / (36.0 * 12.0)).abs() < 1e-12);
    }

    #[test]
    fn mask_widths_are_validated() {
        assert!(validate_mask_width(1, 31, "1D").is_ok());
        assert!(validate_mask_width(31, 31, "1D").is_ok());
        for bad in [0, 2, 4, 33] {
            assert!(matches!(
                validate_mask_width(bad, 31, "1D"),
                Err(Error::MaskWidth { .. })
            ));
        }
    }

    #[test]
    fn compare_scales_with_the_terms() {
        let reference = Reference {
            values: vec![1.0, 0.0],
            scale: vec![100.0, 0.0],
        };
        assert!(compare(&[1.0005, 0.0], &reference).result.is_ok());
        assert!(compare(&[1.01, 0.0], &reference).result.is_err());
        assert!(compare(&[1.0, 1e-20], &reference).result.is_err());
        assert!(compare(&[f32::NAN, 0.0], &reference).result.is_err());
        assert!(compare(&[1.0], &reference).result.is_err());
    }

    #[test]
    fn entries_cover_every_width() {
        let v = Variant2d::Convolution2dTiledVec4;
        assert_eq!(v.entry(5), "convolution_2d_tiled_vec4_w5");
        assert_eq!(v.entry(1), "convolution_2d_tiled_vec4_w1");
        assert_eq!(v.entry(9), "convolution_2d_tiled_vec4_w9");
        let v = Variant1d::Convolution1dTiledVec4;
        assert_eq!(v.entry(7), "convolution_1d_tiled_vec4_w7");
        assert_eq!(v.entry(31), "convolution_1d_tiled_vec4_w31");
        assert_eq!(
            Variant1d::Convolution1dBasic.entry(7),
            "convolution_1d_basic"
        );
        assert_eq!(entry_names().len(), 4 + 16 + 3 + 5);
    }

    #[test]
    #[cfg(feature = "clap")]
    fn named_masks_are_well_formed() {
        for m in <NamedMask as clap::ValueEnum>::value_variants() {
            let (w, v) = m.values();
            assert_eq!(v.len(), w * w);
            assert!(validate_mask_width(w, MAX_MASK_WIDTH_2D, "2D").is_ok());
            let sum: f32 = v.iter().sum();
            if m.is_derivative() {
                assert!(sum.abs() < 1e-6, "{m:?}");
            } else {
                assert!((sum - 1.0).abs() < 1e-5, "{m:?}");
            }
        }
    }

    #[test]
    #[cfg(feature = "clap")]
    fn names_are_kernel_names() {
        for v in Variant1d::ALL {
            let value = clap::ValueEnum::to_possible_value(&v).unwrap();
            assert_eq!(value.get_name().replace('-', "_"), v.kernel_name());
        }
        for v in Variant2d::ALL {
            let value = clap::ValueEnum::to_possible_value(&v).unwrap();
            assert_eq!(value.get_name().replace('-', "_"), v.kernel_name());
        }
    }
}
