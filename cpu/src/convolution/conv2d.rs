//! 2D convolution of row-major images: [`conv2d`] (the one to call), [`conv2d_with`] (a
//! chosen seed version), [`conv2d_values`], the host one-shot [`run_2d`], then the kernels as
//! [`Variant2d`] with their launch configurations and the seed's access ratios.

use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu::convolution::{self as k, basic, tiled, vec4_2d};

use super::{MAX_MASK_WIDTH_2D, Mask2d};
use crate::context::Gpu;
use crate::error::expect_len;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch::{self, VEC4_ALIGNMENT};

/// A 2D kernel that reads the mask from [`k::C_MASK_2D`]: `(input: *const f32,
/// output: *mut f32, mask_width: usize, rows: usize, cols: usize)`. The basic kernel takes a
/// pointer to the mask as well ([`basic::convolution_2d_basic`]).
pub type ConstantMaskKernel2d = Kernel<(*const f32, *mut f32, usize, usize, usize)>;

/// Queues `output = input * mask` on `gpu`'s stream for row-major `rows x cols` images,
/// `P[y][x] = sum_{jy, jx} N[y + jy - r][x + jx - r] M[jy][jx]` (ghosts read as 0), with the
/// fastest variant that is correct for the buffers given. Nothing synchronises.
///
/// `input` and `output` are any device memory of the handle's context holding `rows * cols`
/// floats: a `CudaSlice<f32>` or a view of one.
///
/// Variant: [`Variant2d::Convolution2dTiledVec4`] unless `cols % 4 == 0` and `input` does not
/// start on a 16-byte boundary (the vec4 kernels load image rows as `float4` only when
/// `cols % 4 == 0`, and write outputs element by element, so `output` may start anywhere);
/// then [`Variant2d::Convolution2dBasic`], the fastest of the variants that take any
/// alignment. See [`Variant2d::fastest`].
///
/// Empty image (`rows` or `cols` 0): nothing is launched.
///
/// # Errors
/// [`Error::WrongContext`] if a buffer or the mask lives in another context than `gpu`'s;
/// [`Error::ShapeOverflow`] if `rows * cols` overflows; [`Error::LengthMismatch`]
/// (`what: "input"` or `"output"`) if a buffer does not hold `rows * cols` floats; as
/// [`Variant2d::launch_config`]; [`Error::Driver`] if the launch fails.
pub fn conv2d(
    gpu: &Gpu,
    input: &impl DevicePtr<f32>,
    mask: &Mask2d,
    output: &mut impl DevicePtrMut<f32>,
    rows: usize,
    cols: usize,
) -> Result<()> {
    queue(gpu, None, input, mask, output, rows, cols).map(drop)
}

/// As [`conv2d`], with the variant chosen by the caller (the seed's versions, for study and
/// measurement); returns the launch configuration it used.
///
/// # Errors
/// As [`conv2d`]; also [`Error::Misaligned`] if `variant` is
/// [`Variant2d::Convolution2dTiledVec4`], `cols % 4 == 0` and `input` does not start on a
/// 16-byte boundary (checked only for a non-empty image).
pub fn conv2d_with(
    gpu: &Gpu,
    variant: Variant2d,
    input: &impl DevicePtr<f32>,
    mask: &Mask2d,
    output: &mut impl DevicePtrMut<f32>,
    rows: usize,
    cols: usize,
) -> Result<LaunchConfig> {
    queue(gpu, Some(variant), input, mask, output, rows, cols)
}

/// As [`conv2d`], with the mask given as row-major `w x w` values, `w = sqrt(mask.len())`:
/// validates them and builds a temporary [`Mask2d`] (an upload and a constant-memory write per
/// call; make a [`Mask2d`] once to launch many times).
///
/// # Errors
/// [`Error::MaskDimensions`] (`mask: 1, convolution: 2`) if `mask.len()` is not a square (a 1D
/// mask of 3 taps, say); [`Error::MaskWidth`] if `w` is even, 0 or over
/// [`MAX_MASK_WIDTH_2D`] (both also for an empty image); as [`conv2d`].
pub fn conv2d_values(
    gpu: &Gpu,
    input: &impl DevicePtr<f32>,
    mask: &[f32],
    output: &mut impl DevicePtrMut<f32>,
    rows: usize,
    cols: usize,
) -> Result<()> {
    let width = mask.len().isqrt();
    if width * width != mask.len() {
        return Err(Error::MaskDimensions {
            mask: 1,
            convolution: 2,
        });
    }
    let mask = Mask2d::new(gpu, mask, width)?;
    conv2d(gpu, input, &mask, output, rows, cols)
}

/// Validates, copies the `rows x cols` image and the `mask_width x mask_width` mask to the
/// device, runs the 2D `variant` into an output poisoned with NaN, and returns the result.
/// Synchronises (it returns host data).
///
/// # Errors
/// As [`Mask2d::new`] and [`conv2d_with`].
pub fn run_2d(
    gpu: &Gpu,
    variant: Variant2d,
    input: &[f32],
    rows: usize,
    cols: usize,
    mask: &[f32],
    mask_width: usize,
) -> Result<Vec<f32>> {
    let mask = Mask2d::new(gpu, mask, mask_width)?;
    let n = crate::error::elements(rows, cols)?;
    expect_len("input", n, input.len())?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(n, f32::NAN)?;
    conv2d_with(gpu, variant, &d_in, &mask, &mut d_out, rows, cols)?;
    gpu.download(&d_out, variant.entry(mask_width))
}

/// The launcher behind [`conv2d`] (`chosen` is `None`) and [`conv2d_with`].
fn queue(
    gpu: &Gpu,
    chosen: Option<Variant2d>,
    input: &impl DevicePtr<f32>,
    mask: &Mask2d,
    output: &mut impl DevicePtrMut<f32>,
    rows: usize,
    cols: usize,
) -> Result<LaunchConfig> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("output", output)?;
    gpu.check_buffer("mask", mask.device())?;
    let n = crate::error::elements(rows, cols)?;
    expect_len("input", n, input.len())?;
    expect_len("output", n, output.len())?;
    if n == 0 {
        return Ok(LaunchConfig {
            grid_dim: (0, 1, 1),
            block_dim: (k::TILE_2D_X, k::TILE_2D_Y, 1),
            shared_mem_bytes: 0,
        });
    }
    let width = mask.width();
    // The input's address is taken once, for the checks and the launch.
    let input = gpu.bind(input);
    let input_ptr = input.address();
    let variant = match chosen {
        Some(variant) => {
            variant.check_alignment(cols, input_ptr)?;
            variant
        }
        None => Variant2d::fastest(cols, launch::is_aligned(input_ptr, VEC4_ALIGNMENT)),
    };
    let cfg = variant.launch_config(gpu, rows, cols, width)?;
    match variant.constant_mask_kernel(width) {
        None => {
            // SAFETY: the arguments match `convolution_2d_basic(input: *const f32,
            // mask: *const f32, output: *mut f32, mask_width: usize, rows: usize,
            // cols: usize)`. `input` and `output` are device views of `rows * cols` floats each
            // (checked, no overflow) in `gpu`'s context (checked); they do not overlap, since
            // `output` is borrowed mutably while `input` is borrowed. The mask holds
            // `mask_width^2` floats, `mask_width` odd and at most MAX_MASK_WIDTH_2D (validated
            // by `Mask2d::new`), in `gpu`'s context (checked). Blocks are 32 x 8 and the grid
            // covers the image (`launch_config`).
            unsafe {
                gpu.launch(
                    basic::convolution_2d_basic,
                    cfg,
                    (input, mask.device(), output, width, rows, cols),
                )
            }?;
        }
        Some(kernel) => {
            // Held from the mask's write to the launch: orders this launch after every earlier
            // user of the module's constant memory, on any stream, and the next user after it.
            let mut constants = gpu.constant_memory()?;
            mask.write_constant(&mut constants)?;
            // SAFETY: the arguments match `(input: *const f32, output: *mut f32,
            // mask_width: usize, rows: usize, cols: usize)`, the signature of every kernel that
            // reads the constant mask (`ConstantMaskKernel2d`). `input` and `output` are device
            // views of `rows * cols` floats each (checked, no overflow) in `gpu`'s context
            // (checked); they do not overlap, since `output` is borrowed mutably while `input`
            // is borrowed. For the vec4 entry `input` starts on a 16-byte boundary whenever
            // `cols % 4 == 0`, the only case in which it loads `float4`s (checked by
            // `check_alignment`, or `fastest` chose it only then); it stores `float4`s only
            // where `output` is 16-byte aligned (its own check), and both sides are at most
            // VEC4_MAX_SIDE_2D (`launch_config`). C_MASK_2D holds the mask's `mask_width^2`
            // values, `mask_width` odd and at most MAX_MASK_WIDTH_2D (validated by
            // `Mask2d::new`), written under `constants`, which keeps every other writer out
            // until this launch is queued. The vec4 entry is the one compiled for this width;
            // blocks are 32 x 8, as every 2D kernel needs, and the seed kernels' grid covers
            // the image (`launch_config`).
            unsafe { gpu.launch(kernel, cfg, (input, output, width, rows, cols)) }?;
            drop(constants);
        }
    }
    Ok(cfg)
}

/// The 2D kernels, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant2d {
    /// One output per thread, mask in global memory (32 x 8 blocks). Any alignment.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-basic"))]
    Convolution2dBasic,
    /// Mask in `__constant__` memory. Any alignment.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-constant-mask"))]
    Convolution2dConstantMask,
    /// Seed 3.1 in 2D: a 32 x 8 tile plus halo in shared memory, ghosts as 0. Any alignment.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-tiled-halo"))]
    Convolution2dTiledHalo,
    /// The one [`conv2d`] calls: 64 x 64 tiles in a grid-stride loop, 16-byte global and
    /// shared accesses, the next tile prefetched, 2 x 8 outputs per thread from a rolling
    /// window of accumulators; one kernel per mask width. Any shape; needs `input` 16-byte
    /// aligned when `cols % 4 == 0`.
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

    /// The variant [`conv2d`] runs for a `cols`-wide image whose input starts on a 16-byte
    /// boundary if `input_aligned`: [`Variant2d::Convolution2dTiledVec4`] unless it needs an
    /// aligned input and does not have one ([`Variant2d::needs_aligned_input`]), else
    /// [`Variant2d::Convolution2dBasic`], the fastest of the others (H100,
    /// `docs/patterns/convolution.md`: 10.0% of memcpy against 9.3% and 8.0%).
    pub fn fastest(cols: usize, input_aligned: bool) -> Variant2d {
        let vec4 = Variant2d::Convolution2dTiledVec4;
        if input_aligned || !vec4.needs_aligned_input(cols) {
            vec4
        } else {
            Variant2d::Convolution2dBasic
        }
    }

    /// Whether the variant needs `input` to start on a 16-byte boundary for a `cols`-wide
    /// image: only [`Variant2d::Convolution2dTiledVec4`] when `cols % 4 == 0`, when it loads
    /// each row's groups of 4 columns with `ld.global.v4` (for other widths it loads element
    /// by element). No variant needs an aligned `output`: all store one float at a time.
    pub fn needs_aligned_input(self, cols: usize) -> bool {
        self == Variant2d::Convolution2dTiledVec4 && cols.is_multiple_of(4)
    }

    /// Checks the variant's alignment precondition for a `cols`-wide image whose input starts
    /// at the device address `input`.
    ///
    /// # Errors
    /// [`Error::Misaligned`] (`what: "input"`) if [`Variant2d::needs_aligned_input`] and
    /// `input` is not 16-byte aligned.
    pub fn check_alignment(self, cols: usize, input: u64) -> Result<()> {
        if self.needs_aligned_input(cols) {
            launch::check_aligned(self.kernel_name(), "input", input, VEC4_ALIGNMENT)?;
        }
        Ok(())
    }

    /// Whether the kernel reads the mask from `__constant__` memory ([`k::C_MASK_2D`]): all but
    /// [`Variant2d::Convolution2dBasic`], which takes a pointer to the global copy.
    pub fn reads_constant_mask(self) -> bool {
        self != Variant2d::Convolution2dBasic
    }

    /// The kernel's name: its `.entry` in the PTX, or for [`Variant2d::Convolution2dTiledVec4`]
    /// the family name (see [`Variant2d::entry`]).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant2d::Convolution2dTiledVec4 => k::CONVOLUTION_2D_TILED_VEC4,
            // Any width: only the vec4 family has one entry per width.
            other => other.entry(1),
        }
    }

    /// The kernel launched for a `mask_width x mask_width` mask, for the variants that read
    /// the mask from constant memory (all but [`Variant2d::Convolution2dBasic`], which takes a
    /// pointer to it: `None`). The vec4 kernels have one entry per width.
    ///
    /// # Panics
    /// If `mask_width` is even or larger than [`MAX_MASK_WIDTH_2D`] (launchers validate first).
    pub fn constant_mask_kernel(self, mask_width: usize) -> Option<ConstantMaskKernel2d> {
        assert!(mask_width % 2 == 1 && mask_width <= MAX_MASK_WIDTH_2D);
        Some(match self {
            Variant2d::Convolution2dBasic => return None,
            Variant2d::Convolution2dConstantMask => basic::convolution_2d_constant_mask,
            Variant2d::Convolution2dTiledHalo => tiled::convolution_2d_tiled_halo,
            Variant2d::Convolution2dTiledVec4 => {
                vec4_2d::CONVOLUTION_2D_TILED_VEC4_BY_RADIUS[mask_width / 2]
            }
        })
    }

    /// The `.entry` launched for a `mask_width x mask_width` mask (odd, at most
    /// [`MAX_MASK_WIDTH_2D`]; the vec4 kernels have one entry per width).
    ///
    /// # Panics
    /// If `mask_width` is even or larger than [`MAX_MASK_WIDTH_2D`] (launchers validate first).
    pub fn entry(self, mask_width: usize) -> &'static str {
        match self.constant_mask_kernel(mask_width) {
            Some(kernel) => kernel.name(),
            None => basic::convolution_2d_basic.name(),
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
    /// [`Error::GridTooLarge`] if the grid exceeds CUDA's limits (more than 65535 blocks along
    /// y: over 524280 rows for the seed kernels), or for the vec4 kernels if `rows` or `cols`
    /// exceeds [`k::VEC4_MAX_SIDE_2D`] (2^31, their 32-bit tile coordinates);
    /// [`Error::ShapeOverflow`] if the tile count
    /// overflows; [`Error::Driver`] from the device queries.
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
            check_vec4_sides(rows, cols)?;
            let tiles = (cols.div_ceil(tx) as u64)
                .checked_mul(rows.div_ceil(ty) as u64)
                .ok_or(Error::ShapeOverflow { rows, cols })?;
            let wave = gpu.one_wave(self.entry(mask_width), k::TILE_2D_X * k::TILE_2D_Y, 0)?;
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

/// The `convolution_2d_tiled_vec4_w*` kernels walk 64 x 64 tiles with 32-bit coordinates:
/// each side at most [`k::VEC4_MAX_SIDE_2D`].
fn check_vec4_sides(rows: usize, cols: usize) -> Result<()> {
    for (axis, side, tile) in [
        ("x", cols, k::VEC4_TILE_2D_X),
        ("y", rows, k::VEC4_TILE_2D_Y),
    ] {
        if side > k::VEC4_MAX_SIDE_2D {
            return Err(Error::GridTooLarge {
                kernel: k::CONVOLUTION_2D_TILED_VEC4,
                axis,
                elements: side as u64,
                blocks: side.div_ceil(tile) as u64,
                limit: (k::VEC4_MAX_SIDE_2D / tile) as u64,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vec4_sides_fit_32_bit_tile_coordinates() {
        assert!(check_vec4_sides(k::VEC4_MAX_SIDE_2D, 1).is_ok());
        assert!(check_vec4_sides(1, k::VEC4_MAX_SIDE_2D).is_ok());
        assert!(matches!(
            check_vec4_sides(1, k::VEC4_MAX_SIDE_2D + 1),
            Err(Error::GridTooLarge { axis: "x", elements, .. }) if elements == k::VEC4_MAX_SIDE_2D as u64 + 1
        ));
        assert!(matches!(
            check_vec4_sides(k::VEC4_MAX_SIDE_2D + 1, 1),
            Err(Error::GridTooLarge { axis: "y", .. })
        ));
    }

    #[test]
    fn seed_access_ratio_in_2d() {
        let t2 = Variant2d::Convolution2dTiledHalo.access_ratio(5);
        assert!((t2 - 256.0 * 25.0 / (36.0 * 12.0)).abs() < 1e-12);
    }

    #[test]
    fn entries_cover_every_width() {
        let v = Variant2d::Convolution2dTiledVec4;
        assert_eq!(
            v.constant_mask_kernel(5),
            Some(vec4_2d::convolution_2d_tiled_vec4_w5)
        );
        assert_eq!(
            v.constant_mask_kernel(1),
            Some(vec4_2d::convolution_2d_tiled_vec4_w1)
        );
        assert_eq!(v.entry(9), vec4_2d::convolution_2d_tiled_vec4_w9.name());
        let global_mask = Variant2d::Convolution2dBasic;
        assert_eq!(global_mask.constant_mask_kernel(5), None);
        assert_eq!(global_mask.entry(5), basic::convolution_2d_basic.name());
    }

    #[test]
    fn fallback_only_for_aligned_width_and_misaligned_input() {
        let vec4 = Variant2d::Convolution2dTiledVec4;
        assert_eq!(Variant2d::fastest(64, true), vec4);
        assert_eq!(Variant2d::fastest(65, true), vec4);
        // Rows of 65 floats are loaded element by element: any input alignment will do.
        assert_eq!(Variant2d::fastest(65, false), vec4);
        assert_eq!(Variant2d::fastest(64, false), Variant2d::Convolution2dBasic);
        assert!(vec4.check_alignment(65, 0x1004).is_ok());
        assert!(matches!(
            vec4.check_alignment(64, 0x1004),
            Err(Error::Misaligned {
                what: "input",
                alignment: 16,
                ..
            })
        ));
        for v in Variant2d::ALL {
            if v != vec4 {
                assert!(v.check_alignment(64, 0x1004).is_ok(), "{v:?}");
            }
        }
    }

    #[test]
    #[cfg(feature = "clap")]
    fn names_are_kernel_names() {
        for v in Variant2d::ALL {
            let value = clap::ValueEnum::to_possible_value(&v).unwrap();
            assert_eq!(value.get_name().replace('-', "_"), v.kernel_name());
        }
    }
}
