//! The 2D convolution's variants ([`Variant2d`]): the seed's kernels, the vec4 and wide tiles
//! and the separable pair, with the widths each has a kernel for, their entry names, their
//! alignment needs and their launch configurations. The entry points that run them are in
//! [`conv2d`](super::conv2d).

use cudarc::driver::LaunchConfig;
use gpu::convolution::{self as k, basic, separable, tiled, vec4_2d, wide};

use super::conv2d::{ConstantMaskKernel2d, SEPARABLE_NARROW_MIN_ELEMENTS, choose_segment};
use super::{MAX_MASK_WIDTH_2D, Mask2d};
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::launch::{self, VEC4_ALIGNMENT};

/// The 2D kernels, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant2d {
    /// One output per thread, mask in global memory (32 x 8 blocks). Any alignment; widths
    /// 1 to 31.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-basic"))]
    Convolution2dBasic,
    /// Mask in `__constant__` memory. Any alignment; widths 1 to 31.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-constant-mask"))]
    Convolution2dConstantMask,
    /// Seed 3.1 in 2D: a 32 x 8 tile plus halo in shared memory, ghosts as 0. Any alignment;
    /// widths 1 to 31.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-tiled-halo"))]
    Convolution2dTiledHalo,
    /// The dense masks up to 9 x 9 [`conv2d`](super::conv2d()) calls: 64 x 64 tiles in a grid-stride loop,
    /// 16-byte global and shared accesses, the next tile prefetched, 4 x 4 outputs per thread;
    /// one kernel per mask width (1 to 9). Any shape; needs `input` 16-byte aligned when
    /// `cols % 4 == 0`.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-tiled-vec4"))]
    Convolution2dTiledVec4,
    /// The dense masks from 11 x 11 to 31 x 31 [`conv2d`](super::conv2d()) calls: 64 x 64 tiles staged with
    /// 16-byte loads, 2 x 8 outputs per thread, every multiply-add an FFMA with a
    /// constant-bank mask operand; one kernel per width (11 to 31). Any shape; needs `input`
    /// 16-byte aligned when `cols % 4 == 0`.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-wide"))]
    Convolution2dWide,
    /// NVIDIA's CUDA sample `convolutionSeparable`: a rows kernel into a temporary image (a
    /// per-handle workspace), then a columns kernel; runtime width (1 to 31). Separable masks
    /// only ([`Mask2d::factors`]). Any alignment.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-separable-two-pass"))]
    Convolution2dSeparableTwoPass,
    /// The separable masks [`conv2d`](super::conv2d()) calls: one kernel, one read and one write of the image,
    /// the row pass kept in shared memory; one kernel per width (3 to 31). Separable masks
    /// only. Any shape; needs `input` 16-byte aligned when `cols % 4 == 0`.
    #[cfg_attr(feature = "clap", value(name = "convolution-2d-separable-fused"))]
    Convolution2dSeparableFused,
}

impl Variant2d {
    /// Every variant.
    pub const ALL: [Variant2d; 7] = [
        Variant2d::Convolution2dBasic,
        Variant2d::Convolution2dConstantMask,
        Variant2d::Convolution2dTiledHalo,
        Variant2d::Convolution2dTiledVec4,
        Variant2d::Convolution2dWide,
        Variant2d::Convolution2dSeparableTwoPass,
        Variant2d::Convolution2dSeparableFused,
    ];

    /// The variant [`conv2d`](super::conv2d()) runs for `mask` on a `rows x cols` image whose input starts on
    /// a 16-byte boundary if `input_aligned`: [`Variant2d::Convolution2dSeparableFused`] for a
    /// separable mask of width 3 or more (up to 9 x 9 only on images of at least
    /// [`SEPARABLE_NARROW_MIN_ELEMENTS`]), else [`Variant2d::Convolution2dTiledVec4`] up to
    /// 9 x 9 and [`Variant2d::Convolution2dWide`] beyond; [`Variant2d::Convolution2dBasic`]
    /// if that one needs an aligned input and does not have one.
    pub fn choose(mask: &Mask2d, rows: usize, cols: usize, input_aligned: bool) -> Variant2d {
        let width = mask.width();
        let narrow = width <= k::MAX_MASK_WIDTH_2D_VEC4;
        let large = rows.saturating_mul(cols) >= SEPARABLE_NARROW_MIN_ELEMENTS;
        let fast = if mask.is_separable() && width >= 3 && (large || !narrow) {
            Variant2d::Convolution2dSeparableFused
        } else if narrow {
            Variant2d::Convolution2dTiledVec4
        } else {
            Variant2d::Convolution2dWide
        };
        if input_aligned || !fast.needs_aligned_input(cols) {
            fast
        } else {
            Variant2d::Convolution2dBasic
        }
    }

    /// The variant [`conv2d`](super::conv2d()) runs for a dense mask up to 9 x 9 on a `cols`-wide image whose
    /// input starts on a 16-byte boundary if `input_aligned`:
    /// [`Variant2d::Convolution2dTiledVec4`] unless it needs an
    /// aligned input and does not have one ([`Variant2d::needs_aligned_input`]), else
    /// [`Variant2d::Convolution2dBasic`], the fastest of the others (H100,
    /// `docs/patterns/convolution.md`: 10.0% of memcpy against 9.3% and 8.0%). See
    /// [`Variant2d::choose`] for every mask.
    pub fn fastest(cols: usize, input_aligned: bool) -> Variant2d {
        let vec4 = Variant2d::Convolution2dTiledVec4;
        if input_aligned || !vec4.needs_aligned_input(cols) {
            vec4
        } else {
            Variant2d::Convolution2dBasic
        }
    }

    /// The mask widths the variant has a kernel for (odd): 1 to 9 for
    /// [`Variant2d::Convolution2dTiledVec4`], 11 to 31 for [`Variant2d::Convolution2dWide`],
    /// 3 to 31 for [`Variant2d::Convolution2dSeparableFused`], 1 to 31 for the others.
    pub fn widths(self) -> impl Iterator<Item = usize> {
        let (min, max) = match self {
            Variant2d::Convolution2dTiledVec4 => (1, k::MAX_MASK_WIDTH_2D_VEC4),
            Variant2d::Convolution2dWide => (wide::WIDE_MIN_WIDTH, MAX_MASK_WIDTH_2D),
            Variant2d::Convolution2dSeparableFused => (3, MAX_MASK_WIDTH_2D),
            _ => (1, MAX_MASK_WIDTH_2D),
        };
        (min..=max).step_by(2)
    }

    /// Whether the variant has a kernel for a `mask_width x mask_width` mask (see
    /// [`Variant2d::widths`]).
    pub fn supports_width(self, mask_width: usize) -> bool {
        mask_width % 2 == 1 && self.widths().any(|w| w == mask_width)
    }

    /// [`Error::MaskWidth`] for a width the variant has no kernel for: its kernel name and its
    /// own range ([`Variant2d::widths`]).
    fn width_error(self, width: usize) -> Error {
        let mut widths = self.widths();
        let min = widths.next().unwrap_or(0);
        Error::MaskWidth {
            dims: 2,
            width,
            kernels: self.kernel_name(),
            min,
            max: widths.last().unwrap_or(min),
        }
    }

    /// Whether the variant needs a separable mask ([`Mask2d::factors`]): the two separable
    /// variants.
    pub fn needs_separable_mask(self) -> bool {
        matches!(
            self,
            Variant2d::Convolution2dSeparableTwoPass | Variant2d::Convolution2dSeparableFused
        )
    }

    /// Checks that the variant can run `mask`.
    ///
    /// # Errors
    /// [`Error::MaskWidth`] (`dims: 2`, the variant's kernel name, narrowest and widest) if the
    /// variant has no kernel for the width; [`Error::Unsupported`] (`what: "mask"`) if the variant is
    /// separable and the mask is not.
    pub fn check_mask(self, mask: &Mask2d) -> Result<()> {
        let width = mask.width();
        if !self.supports_width(width) {
            return Err(self.width_error(width));
        }
        if self.needs_separable_mask() && !mask.is_separable() {
            return Err(Error::Unsupported {
                what: "mask",
                requirement: "a separable mask (Mask2d::separable, gaussian, box_filter, or a \
                              rank-1 mask given to Mask2d::new) for the separable variants",
            });
        }
        Ok(())
    }

    /// Multiply-adds per output for a `mask_width x mask_width` mask: `w^2` for the dense
    /// variants, `2w` for the separable ones.
    pub fn fmas_per_output(self, mask_width: usize) -> u64 {
        let w = mask_width as u64;
        if self.needs_separable_mask() {
            2 * w
        } else {
            w * w
        }
    }

    /// Whether the variant needs `input` to start on a 16-byte boundary for a `cols`-wide
    /// image: the vec4, wide and fused separable kernels when `cols % 4 == 0`, when they load
    /// each row's groups of 4 columns with `ld.global.v4` (for other widths they load element
    /// by element). No variant needs an aligned `output`: those that store `float4`s check
    /// its alignment themselves.
    pub fn needs_aligned_input(self, cols: usize) -> bool {
        matches!(
            self,
            Variant2d::Convolution2dTiledVec4
                | Variant2d::Convolution2dWide
                | Variant2d::Convolution2dSeparableFused
        ) && cols.is_multiple_of(4)
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

    /// Whether the kernel reads the dense mask from `__constant__` memory ([`k::C_MASK_2D`]):
    /// all but [`Variant2d::Convolution2dBasic`], which takes a pointer to the global copy,
    /// and the separable variants, which read [`k::C_MASK_ROW`] and [`k::C_MASK_COL`].
    pub fn reads_constant_mask(self) -> bool {
        self != Variant2d::Convolution2dBasic && !self.needs_separable_mask()
    }

    /// The kernel's name: its `.entry` in the PTX, or for the variants with one entry per
    /// width (or two kernels) the family name (see [`Variant2d::entry`],
    /// [`Variant2d::entries`]).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant2d::Convolution2dTiledVec4 => k::CONVOLUTION_2D_TILED_VEC4,
            Variant2d::Convolution2dWide => k::CONVOLUTION_2D_WIDE,
            Variant2d::Convolution2dSeparableTwoPass => k::CONVOLUTION_2D_SEPARABLE_TWO_PASS,
            Variant2d::Convolution2dSeparableFused => k::CONVOLUTION_2D_SEPARABLE_FUSED,
            // Any width: one entry for all.
            other => other.entry(1),
        }
    }

    /// The kernel launched for a `mask_width x mask_width` mask, for the variants whose
    /// kernels read the dense mask from constant memory and take `(input, output,
    /// mask_width, rows, cols)`: `None` for [`Variant2d::Convolution2dBasic`] (it takes a
    /// pointer to the mask) and the separable variants. The vec4 and wide kernels have one
    /// entry per width.
    ///
    /// # Panics
    /// If the variant has no kernel for `mask_width` ([`Variant2d::supports_width`];
    /// launchers validate first).
    pub fn constant_mask_kernel(self, mask_width: usize) -> Option<ConstantMaskKernel2d> {
        assert!(
            self.supports_width(mask_width),
            "{self:?} has no kernel for width {mask_width}"
        );
        Some(match self {
            Variant2d::Convolution2dBasic
            | Variant2d::Convolution2dSeparableTwoPass
            | Variant2d::Convolution2dSeparableFused => return None,
            Variant2d::Convolution2dConstantMask => basic::convolution_2d_constant_mask,
            Variant2d::Convolution2dTiledHalo => tiled::convolution_2d_tiled_halo,
            Variant2d::Convolution2dTiledVec4 => {
                vec4_2d::CONVOLUTION_2D_TILED_VEC4_BY_RADIUS[mask_width / 2]
            }
            Variant2d::Convolution2dWide => {
                wide::CONVOLUTION_2D_WIDE_BY_WIDTH[(mask_width - wide::WIDE_MIN_WIDTH) / 2]
            }
        })
    }

    /// The `.entry` launched for a `mask_width x mask_width` mask (the first of the two for
    /// [`Variant2d::Convolution2dSeparableTwoPass`]: see [`Variant2d::entries`]).
    ///
    /// # Panics
    /// If the variant has no kernel for `mask_width` ([`Variant2d::supports_width`];
    /// launchers validate first).
    pub fn entry(self, mask_width: usize) -> &'static str {
        assert!(
            self.supports_width(mask_width),
            "{self:?} has no kernel for width {mask_width}"
        );
        match self {
            Variant2d::Convolution2dBasic => basic::convolution_2d_basic.name(),
            Variant2d::Convolution2dSeparableTwoPass => {
                separable::convolution_2d_separable_rows.name()
            }
            Variant2d::Convolution2dSeparableFused => {
                separable::CONVOLUTION_2D_SEPARABLE_FUSED_BY_RADIUS[mask_width / 2]
                    .expect("widths from 3")
                    .name()
            }
            other => other
                .constant_mask_kernel(mask_width)
                .expect("reads C_MASK_2D")
                .name(),
        }
    }

    /// Every `.entry` launched for a `mask_width x mask_width` mask, in launch order: one, or
    /// the rows and the columns kernels of [`Variant2d::Convolution2dSeparableTwoPass`].
    ///
    /// # Panics
    /// If the variant has no kernel for `mask_width` ([`Variant2d::supports_width`]).
    pub fn entries(self, mask_width: usize) -> Vec<&'static str> {
        let first = self.entry(mask_width);
        match self {
            Variant2d::Convolution2dSeparableTwoPass => {
                vec![first, separable::convolution_2d_separable_cols.name()]
            }
            _ => vec![first],
        }
    }

    /// The seed section the kernel carries to 2D (`None`: beyond the seed).
    pub fn seed_section(self) -> Option<&'static str> {
        match self {
            Variant2d::Convolution2dBasic => Some("1.2 in 2D"),
            Variant2d::Convolution2dConstantMask => Some("2.1.4 in 2D"),
            Variant2d::Convolution2dTiledHalo => Some("3.1 in 2D"),
            _ => None,
        }
    }

    /// Outputs per block along x and y (for the fused separable kernels, per block and chunk
    /// of its walk; for the two-pass variant, its rows kernel's).
    fn tile(self) -> (usize, usize) {
        match self {
            Variant2d::Convolution2dTiledVec4 => (k::VEC4_TILE_2D_X, k::VEC4_TILE_2D_Y),
            Variant2d::Convolution2dWide => (wide::WIDE_TILE_X, wide::WIDE_TILE_Y),
            Variant2d::Convolution2dSeparableFused => {
                (separable::SEPARABLE_TILE_X, separable::SEPARABLE_CHUNK_Y)
            }
            Variant2d::Convolution2dSeparableTwoPass => (
                separable::ROWS_RESULT_STEPS * separable::ROWS_BLOCKDIM_X as usize,
                separable::ROWS_BLOCKDIM_Y as usize,
            ),
            _ => (k::TILE_2D_X as usize, k::TILE_2D_Y as usize),
        }
    }

    /// The launch for a `rows x cols` image and a `mask_width x mask_width` mask: blocks of
    /// [`k::TILE_2D_X`] x [`k::TILE_2D_Y`] threads; grid `(ceil(cols / 32), ceil(rows / 8))`
    /// for the seed kernels; for the vec4 kernels a one-dimensional grid of one wave of
    /// resident blocks, at most one per 64 x 64 tile; for the wide kernels 256 threads and a
    /// grid `(ceil(cols / 64), ceil(rows / 64))`; for the fused separable kernels 256 threads
    /// and `(ceil(cols / 64), ceil(rows / segment))`, the segment a multiple of 32 rows up to
    /// 1024 chosen by a wave model (`choose_segment`); for the two-pass variant its rows kernel's
    /// (16 x 4 threads, `(ceil(cols / 128), ceil(rows / 4))`; the columns kernel takes
    /// 16 x 8 threads and `(ceil(cols / 16), ceil(rows / 64))`).
    ///
    /// # Errors
    /// [`Error::GridTooLarge`] if the grid exceeds CUDA's limits (more than 65535 blocks along
    /// y: over 524280 rows for the seed kernels), or for the vec4 and fused kernels if `rows`
    /// or `cols` exceeds [`k::VEC4_MAX_SIDE_2D`] (2^31, their 32-bit coordinates);
    /// [`Error::ShapeOverflow`] if the tile count
    /// overflows; [`Error::MaskWidth`] if the variant has no kernel for `mask_width`
    /// ([`Variant2d::supports_width`]); [`Error::Driver`] from the device queries.
    pub fn launch_config(
        self,
        gpu: &Gpu,
        rows: usize,
        cols: usize,
        mask_width: usize,
    ) -> Result<LaunchConfig> {
        Ok(self.plan(gpu, rows, cols, mask_width)?.0)
    }

    /// [`Variant2d::launch_config`] and the segment of a fused separable launch (0 for the
    /// other variants), computed once for both.
    pub(super) fn plan(
        self,
        gpu: &Gpu,
        rows: usize,
        cols: usize,
        mask_width: usize,
    ) -> Result<(LaunchConfig, usize)> {
        if !self.supports_width(mask_width) {
            return Err(self.width_error(mask_width));
        }
        let kernel = self.kernel_name();
        let (tx, ty) = self.tile();
        let block_dim = (k::TILE_2D_X, k::TILE_2D_Y, 1);
        let cfg = match self {
            Variant2d::Convolution2dTiledVec4 => {
                check_vec4_sides(rows, cols)?;
                let tiles = (cols.div_ceil(tx) as u64)
                    .checked_mul(rows.div_ceil(ty) as u64)
                    .ok_or(Error::ShapeOverflow { rows, cols })?;
                let wave = gpu.one_wave(self.entry(mask_width), k::TILE_2D_X * k::TILE_2D_Y, 0)?;
                Ok(LaunchConfig {
                    grid_dim: ((wave as u64).min(tiles) as u32, 1, 1),
                    block_dim,
                    shared_mem_bytes: 0,
                })
            }
            Variant2d::Convolution2dWide => launch::covering_2d(
                kernel,
                (cols, rows),
                (tx as u64, ty as u64),
                (wide::WIDE_BLOCK, 1, 1),
            ),
            Variant2d::Convolution2dSeparableFused => {
                check_vec4_sides(rows, cols)?;
                let wave = gpu.one_wave(self.entry(mask_width), separable::SEPARABLE_BLOCK, 0)?;
                let segment = choose_segment(rows, cols, wave);
                let cfg = launch::covering_2d(
                    kernel,
                    (cols, rows),
                    (tx as u64, segment as u64),
                    (separable::SEPARABLE_BLOCK, 1, 1),
                )?;
                return Ok((cfg, segment));
            }
            Variant2d::Convolution2dSeparableTwoPass => launch::covering_2d(
                kernel,
                (cols, rows),
                (tx as u64, ty as u64),
                (separable::ROWS_BLOCKDIM_X, separable::ROWS_BLOCKDIM_Y, 1),
            ),
            _ => launch::covering_2d(kernel, (cols, rows), (tx as u64, ty as u64), block_dim),
        }?;
        Ok((cfg, 0))
    }

    /// The seed's access ratio carried to 2D, for a `w x w` mask: loads of `N` the untiled
    /// kernels make for a tile of `X x Y` outputs (`w^2` each) over the loads this kernel
    /// makes: `X Y w^2 / ((X + 2r)(Y + 2r))` for the tiled halo (32 x 8 tile),
    /// `X Y w^2 / ((X + 8)(Y + 2r))` for the vec4 tile (64 x 64, 4 aligned halo columns a
    /// side), `X Y w^2 / ((X + 2h)(Y + 2r))` for the wide tile (64 x 64, `h` = `r` rounded up
    /// to 4), `w^2 (64 / (64 + 2h))` for the fused separable kernels (the `2r` rows a segment
    /// adds neglected), and `w^2 / (160 / 128 + 96 / 64)` for the two passes (the rows
    /// kernel's 16-column halos, the columns kernel's 16-row halos, each reading its input).
    pub fn access_ratio(self, mask_width: usize) -> f64 {
        let r = (mask_width / 2) as f64;
        let h = (mask_width / 2).div_ceil(4) as f64 * 4.0;
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
            Variant2d::Convolution2dWide => x * y * w2 / ((x + 2.0 * h) * (y + 2.0 * r)),
            Variant2d::Convolution2dSeparableFused => w2 * x / (x + 2.0 * h),
            Variant2d::Convolution2dSeparableTwoPass => w2 / (160.0 / 128.0 + 96.0 / 64.0),
        }
    }
}

/// The `convolution_2d_tiled_vec4_w*` kernels walk 64 x 64 tiles with 32-bit coordinates:
/// each side at most [`k::VEC4_MAX_SIDE_2D`].
pub(super) fn check_vec4_sides(rows: usize, cols: usize) -> Result<()> {
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
