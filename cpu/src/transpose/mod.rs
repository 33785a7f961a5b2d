//! Matrix transpose of a row-major `rows x cols` `f32` matrix into its `cols x rows` transpose,
//! on the caller's device memory and stream (seed "并行计算(二)——CUDA", NVIDIA's `transpose`
//! sample; the kernels are in `gpu::transpose`).
//!
//! [`transpose`] is the one to call: it picks the fastest variant that is correct for the shape
//! and the buffers' alignment. [`transpose_with`] runs a chosen [`Variant`] (the seed versions,
//! and [`Variant::Copy`], the bandwidth baseline); [`run`] is the host one-shot for tests and
//! the demo; [`reference()`] the CPU reference.
//!
//! ```no_run
//! # fn main() -> cpu::Result<()> {
//! let gpu = cpu::Gpu::new(0)?;
//! let (rows, cols) = (1000, 3);
//! let a = gpu.upload(&vec![1.0f32; rows * cols])?;
//! let mut b = gpu.zeros::<f32>(rows * cols)?;
//! cpu::transpose::transpose(&gpu, &a, &mut b, rows, cols)?; // b is cols x rows
//! # Ok(())
//! # }
//! ```

mod reference;

pub use reference::{bytes_moved, reference};

/// The longest short side of a thin matrix (32): [`Variant::TransposeThinVec4`] takes it.
pub use gpu::transpose::THIN_MAX;

use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu::transpose as k;

use crate::context::Gpu;
use crate::error::{Error, Result, expect_len};
use crate::kernel::Kernel;
use crate::launch::{self, VEC4_ALIGNMENT};

/// Queues `output = input^T` on `gpu`'s stream: `input` is a row-major `rows x cols` matrix,
/// `output` becomes its row-major `cols x rows` transpose. Nothing synchronises.
///
/// `input` and `output` are any device memory of the handle's context holding `rows * cols`
/// floats: a `CudaSlice<f32>` or a view of one.
///
/// Variant, when `rows` and `cols` are multiples of 4 and both buffers start on a 16-byte
/// boundary (the `float4` loads and stores of the first two need all of it):
/// [`Variant::TransposeThinVec4`] for a thin matrix (`min(rows, cols) <=`
/// [`THIN_MAX`]), [`Variant::TransposeTiledVec4`] for the others
/// whose grid fits (at most 65535 tiles of 64 rows: `rows <= 4194240`); otherwise
/// [`Variant::TransposeTiledVec4Any`] (16-byte accesses too, for any shape and any element
/// offset, on a one-dimensional grid). See [`Variant::fastest`].
///
/// Empty matrix (`rows` or `cols` 0): nothing is launched.
///
/// # Errors
/// [`Error::WrongContext`] if a buffer lives in another context than `gpu`'s;
/// [`Error::ShapeOverflow`] if `rows * cols` overflows; [`Error::LengthMismatch`]
/// (`what: "input"` or `"output"`) if a buffer does not hold `rows * cols` floats; as
/// [`Variant::launch_config`]; [`Error::Driver`] if the launch fails.
pub fn transpose(
    gpu: &Gpu,
    input: &impl DevicePtr<f32>,
    output: &mut impl DevicePtrMut<f32>,
    rows: usize,
    cols: usize,
) -> Result<()> {
    queue(gpu, None, input, output, rows, cols).map(drop)
}

/// As [`transpose`], with the variant chosen by the caller; for [`Variant::Copy`], `output`
/// becomes a copy of `input` (the bandwidth baseline). Returns the launch configuration used.
///
/// # Errors
/// As [`transpose`]; for [`Variant::TransposeTiledVec4`] and [`Variant::TransposeThinVec4`]
/// also [`Error::UnsupportedShape`] if `rows` or `cols` is not a multiple of 4 (or, for the
/// thin kernel, neither is at most [`THIN_MAX`]), and
/// [`Error::Misaligned`] if a buffer does not start on a 16-byte boundary (both checked only
/// for a non-empty matrix).
pub fn transpose_with(
    gpu: &Gpu,
    variant: Variant,
    input: &impl DevicePtr<f32>,
    output: &mut impl DevicePtrMut<f32>,
    rows: usize,
    cols: usize,
) -> Result<LaunchConfig> {
    queue(gpu, Some(variant), input, output, rows, cols)
}

/// Copies `input` to the device, runs the variant into an output poisoned with NaN, and returns
/// the result (`cols x rows` row-major; `rows x cols` for [`Variant::Copy`]). Synchronises (it
/// returns host data).
///
/// # Errors
/// As [`transpose_with`].
pub fn run(
    gpu: &Gpu,
    variant: Variant,
    input: &[f32],
    rows: usize,
    cols: usize,
) -> Result<Vec<f32>> {
    let n = crate::error::elements(rows, cols)?;
    expect_len("input", n, input.len())?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(n, f32::NAN)?;
    transpose_with(gpu, variant, &d_in, &mut d_out, rows, cols)?;
    gpu.download(&d_out, variant.kernel_name())
}

/// The launcher behind [`transpose`] (`chosen` is `None`) and [`transpose_with`].
fn queue(
    gpu: &Gpu,
    chosen: Option<Variant>,
    input: &impl DevicePtr<f32>,
    output: &mut impl DevicePtrMut<f32>,
    rows: usize,
    cols: usize,
) -> Result<LaunchConfig> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("output", output)?;
    let n = crate::error::elements(rows, cols)?;
    expect_len("input", n, input.len())?;
    expect_len("output", n, output.len())?;
    if n == 0 {
        return Ok(LaunchConfig {
            grid_dim: (0, 1, 1),
            block_dim: (k::TILE, k::BLOCK_ROWS, 1),
            shared_mem_bytes: 0,
        });
    }
    // Each buffer's address is taken once, for the checks and the launch.
    let (input, output) = (gpu.bind(input), gpu.bind_mut(output));
    let (input_ptr, output_ptr) = (input.address(), output.address());
    let variant = match chosen {
        Some(variant) => {
            variant.check(rows, cols, input_ptr, output_ptr)?;
            variant
        }
        None => Variant::fastest(
            rows,
            cols,
            launch::is_aligned(input_ptr, VEC4_ALIGNMENT)
                && launch::is_aligned(output_ptr, VEC4_ALIGNMENT),
        ),
    };
    let cfg = variant.launch_config(rows, cols)?;
    // SAFETY: both buffers are device views of `rows * cols` floats (checked, no overflow) in
    // `gpu`'s context (checked); they do not overlap, since `output` is borrowed mutably while
    // `input` is borrowed. For the vec4 and thin kernels `rows` and `cols` are multiples of 4
    // and both views start on a 16-byte boundary (checked by `Variant::check`, or `fastest`
    // chose them only then); the others, `transpose_tiled_vec4_any` included, need only the
    // `f32` alignment every view has. The launch shape is the kernel's own (`launch_config`).
    unsafe { gpu.launch_unchecked(variant.kernel(), cfg, (input, output, rows, cols)) }?;
    Ok(cfg)
}

/// The transpose kernels and the copy baseline, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// Copy with the tiled kernels' access pattern: the ceiling a transpose can reach.
    Copy,
    /// Seed version 2: coalesced reads, strided writes (32 x 32 blocks).
    TransposeNaiveRow,
    /// Seed version 1: strided reads, coalesced writes (32 x 32 blocks).
    TransposeNaiveCol,
    /// Seed version 3: 8 x 32 tile in `__shared__ float t[32][8]` (8-way bank conflicts).
    TransposeSharedTile,
    /// Seed version 4: no shared memory, a warp per 8 x 4 sub-block through L1 (8 x 32 blocks).
    #[cfg_attr(feature = "clap", value(name = "transpose-l1-8x32"))]
    TransposeL1_8x32,
    /// Seed version 5: a warp per 4 x 8 sub-block through L1 (4 x 32 blocks).
    #[cfg_attr(feature = "clap", value(name = "transpose-l1-4x32"))]
    TransposeL1_4x32,
    /// NVIDIA's padded 32 x 33 shared tile: coalesced both ways, no bank conflicts.
    TransposeSharedPadded,
    /// 64 x 64 tile with 16-byte accesses (needs `rows` and `cols` multiples of 4).
    TransposeTiledVec4,
    /// 64 x 64 tile with 16-byte accesses for any shape and element offset: each row's
    /// aligned `float4`s, its partial chunks at the ends element by element.
    TransposeTiledVec4Any,
    /// Thin matrices (one side at most [`THIN_MAX`], both multiples
    /// of 4): 4 x 4 blocks transposed in registers, `float4` loads and stores, no shared
    /// memory.
    TransposeThinVec4,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 10] = [
        Variant::Copy,
        Variant::TransposeNaiveRow,
        Variant::TransposeNaiveCol,
        Variant::TransposeSharedTile,
        Variant::TransposeL1_8x32,
        Variant::TransposeL1_4x32,
        Variant::TransposeSharedPadded,
        Variant::TransposeTiledVec4,
        Variant::TransposeTiledVec4Any,
        Variant::TransposeThinVec4,
    ];

    /// The kernel: every transpose kernel is `(a: *const f32, b: *mut f32, rows: usize,
    /// cols: usize)`.
    pub fn kernel(self) -> Kernel<(*const f32, *mut f32, usize, usize)> {
        use k::{any_shape::kernels as any, seed, thin::kernels as thin, tiled};
        match self {
            Variant::Copy => seed::copy,
            Variant::TransposeNaiveRow => seed::transpose_naive_row,
            Variant::TransposeNaiveCol => seed::transpose_naive_col,
            Variant::TransposeSharedTile => seed::transpose_shared_tile,
            Variant::TransposeL1_8x32 => seed::transpose_l1_8x32,
            Variant::TransposeL1_4x32 => seed::transpose_l1_4x32,
            Variant::TransposeSharedPadded => seed::transpose_shared_padded,
            Variant::TransposeTiledVec4 => tiled::transpose_tiled_vec4,
            Variant::TransposeTiledVec4Any => any::transpose_tiled_vec4_any,
            Variant::TransposeThinVec4 => thin::transpose_thin_vec4,
        }
    }

    /// The kernel's `.entry` name in the PTX.
    pub fn kernel_name(self) -> &'static str {
        self.kernel().name()
    }

    /// Whether the variant transposes (every variant but [`Variant::Copy`]).
    pub fn transposes(self) -> bool {
        self != Variant::Copy
    }

    /// The variant [`transpose`] runs for a `rows x cols` matrix whose buffers both start on a
    /// 16-byte boundary if `aligned`:
    /// - [`Variant::TransposeThinVec4`] for thin aligned shapes (4 x 4 register blocks, where a
    ///   64 x 64 tile would be mostly empty);
    /// - [`Variant::TransposeTiledVec4Any`] when both sides hold at least one whole tile
    ///   (64): on whole tiles it takes its whole-tile path, with the same 16-byte accesses as
    ///   the aligned tile, and its blocks walk down columns of tiles. On an H200 it moved
    ///   97.9% of the copy bandwidth at 8192 x 8192 and 98.3% at 16384 x 16384, against 95.5%
    ///   and 95.0% for [`Variant::TransposeTiledVec4`] in the same run
    ///   (`docs/patterns/transpose.md`);
    /// - [`Variant::TransposeTiledVec4`] for the other aligned multiples of 4 whose grid fits
    ///   ([`Variant::launch_config`] is `Ok`: one block per 64 rows along y, at most 65535):
    ///   a side of 36 to 63 leaves the any-shape kernel only partial tiles, and the aligned
    ///   tile moved 97.7% at 32 x 2097152 where the any-shape kernel moved 64.6%;
    /// - [`Variant::TransposeTiledVec4Any`] for everything else (any shape and any element
    ///   offset, one-dimensional grid). So every shape gets a variant that can launch:
    ///   4194304 x 36 (65536 tiles of rows) takes the any-shape kernel, 4194304 x 4 the thin
    ///   one.
    pub fn fastest(rows: usize, cols: usize, aligned: bool) -> Variant {
        let tile = k::VEC4_TILE as usize;
        let launches =
            |v: Variant| aligned && v.supports(rows, cols) && v.launch_config(rows, cols).is_ok();
        if launches(Variant::TransposeThinVec4) {
            Variant::TransposeThinVec4
        } else if rows.min(cols) < tile && launches(Variant::TransposeTiledVec4) {
            Variant::TransposeTiledVec4
        } else {
            Variant::TransposeTiledVec4Any
        }
    }

    /// Whether the variant accepts a `rows x cols` matrix. Two have a precondition:
    /// [`Variant::TransposeTiledVec4`], both multiples of 4, so that every `float4` it reads
    /// from a row of `input` or writes to a row of `output` lies wholly inside the matrix and,
    /// rows starting at multiples of 4 elements, on a 16-byte boundary; and
    /// [`Variant::TransposeThinVec4`], the same and one side at most
    /// [`THIN_MAX`] (its block spans the short side).
    /// [`Variant::TransposeTiledVec4Any`] finds each row's 16-byte boundaries itself.
    pub fn supports(self, rows: usize, cols: usize) -> bool {
        match self {
            Variant::TransposeTiledVec4 => rows.is_multiple_of(4) && cols.is_multiple_of(4),
            Variant::TransposeThinVec4 => k::thin::is_thin(rows, cols),
            _ => true,
        }
    }

    /// What the variant requires of the shape, for those that do not take every shape
    /// ([`Variant::supports`]).
    pub fn requirement(self) -> Option<&'static str> {
        match self {
            Variant::TransposeTiledVec4 => {
                Some("rows and cols must be multiples of 4 for 16-byte accesses")
            }
            Variant::TransposeThinVec4 => Some(concat!(
                "rows and cols must be multiples of 4 for 16-byte accesses, ",
                "one of them at most 32 (THIN_MAX)"
            )),
            _ => None,
        }
    }

    /// Whether the variant needs both buffers to start on a 16-byte boundary:
    /// [`Variant::TransposeTiledVec4`] and [`Variant::TransposeThinVec4`] (`ld.global.v4`
    /// from the input, `st.global.v4` to the output at fixed places).
    /// [`Variant::TransposeTiledVec4Any`] takes any `f32` view: it places its 16-byte
    /// accesses from the buffers' actual addresses.
    pub fn needs_alignment(self) -> bool {
        matches!(
            self,
            Variant::TransposeTiledVec4 | Variant::TransposeThinVec4
        )
    }

    /// Checks the variant's preconditions for a `rows x cols` matrix whose buffers start at
    /// the device addresses `input` and `output`.
    ///
    /// # Errors
    /// [`Error::UnsupportedShape`] unless it [supports](Variant::supports) the shape;
    /// [`Error::Misaligned`] naming the first buffer not 16-byte aligned, if
    /// [`Variant::needs_alignment`].
    pub fn check(self, rows: usize, cols: usize, input: u64, output: u64) -> Result<()> {
        let kernel = self.kernel_name();
        self.check_shape(rows, cols)?;
        if self.needs_alignment() {
            launch::check_aligned(kernel, "input", input, VEC4_ALIGNMENT)?;
            launch::check_aligned(kernel, "output", output, VEC4_ALIGNMENT)?;
        }
        Ok(())
    }

    /// [`Error::UnsupportedShape`] unless the variant [supports](Variant::supports) the shape.
    fn check_shape(self, rows: usize, cols: usize) -> Result<()> {
        if !self.supports(rows, cols) {
            return Err(Error::UnsupportedShape {
                kernel: self.kernel_name(),
                rows,
                cols,
                requirement: self.requirement().unwrap_or("a shape it supports"),
            });
        }
        Ok(())
    }

    /// The launch for a `rows x cols` input (see each kernel's doc for the formula).
    ///
    /// [`Variant::TransposeTiledVec4Any`] numbers its tiles along x only (one block per
    /// 64 x 64 tile, row of tiles after row of tiles), so neither side of the matrix meets
    /// the 65535 limit of `gridDim.y`: a 10^7 x 1 column is one launch.
    /// [`Variant::TransposeThinVec4`] too: blocks of `(s/4, 256 / (s/4))` threads
    /// ([`Thin::block`](gpu::transpose::thin::Thin::block), `s` the short side), each over
    /// `2 * 256 / (s/4)` groups of 4 along the long side.
    ///
    /// # Errors
    /// [`Error::GridTooLarge`] if the grid would exceed CUDA's limits (2^31 - 1 blocks along
    /// x, 65535 along y); [`Error::UnsupportedShape`] if the variant does not
    /// [support](Variant::supports) the shape.
    pub fn launch_config(self, rows: usize, cols: usize) -> Result<LaunchConfig> {
        let kernel = self.kernel_name();
        self.check_shape(rows, cols)?;
        if self == Variant::TransposeThinVec4 {
            let thin = k::thin::Thin::new(rows, cols);
            let blocks = launch::blocks_to_cover(
                kernel,
                thin.long_groups,
                thin.long_groups_per_block() as u64,
            )?;
            let (bx, by) = thin.block();
            return Ok(LaunchConfig {
                grid_dim: (if thin.short_groups == 0 { 0 } else { blocks }, 1, 1),
                block_dim: (bx, by, 1),
                shared_mem_bytes: 0,
            });
        }
        if self == Variant::TransposeTiledVec4Any {
            // No overflow: at most `rows * cols` tiles, and the caller's `rows * cols` fits.
            let tiles = k::any_shape::tiles(rows, cols);
            let blocks = launch::blocks_to_cover(kernel, tiles, 1)?;
            return Ok(LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (k::VEC4_THREADS, k::VEC4_THREADS, 1),
                shared_mem_bytes: 0,
            });
        }
        // (elements along x per block, along y per block, block x, block y, x covers rows?)
        let (per_x, per_y, bx, by, x_is_rows) = match self {
            Variant::Copy | Variant::TransposeSharedPadded => {
                (k::TILE, k::TILE, k::TILE, k::BLOCK_ROWS, false)
            }
            Variant::TransposeNaiveRow => (32, 32, 32, 32, false),
            Variant::TransposeNaiveCol => (32, 32, 32, 32, true),
            Variant::TransposeSharedTile | Variant::TransposeL1_8x32 => (8, 32, 8, 32, true),
            Variant::TransposeL1_4x32 => (4, 32, 4, 32, true),
            Variant::TransposeTiledVec4
            | Variant::TransposeTiledVec4Any
            | Variant::TransposeThinVec4 => (
                k::VEC4_TILE,
                k::VEC4_TILE,
                k::VEC4_THREADS,
                k::VEC4_THREADS,
                false,
            ),
        };
        let (along_x, along_y) = if x_is_rows {
            (rows, cols)
        } else {
            (cols, rows)
        };
        launch::covering_2d(
            kernel,
            (along_x, along_y),
            (per_x as u64, per_y as u64),
            (bx, by, 1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_launches_at_8192() {
        let cfg = |v: Variant| {
            let c = v.launch_config(8192, 8192).unwrap();
            (c.grid_dim, c.block_dim)
        };
        assert_eq!(
            cfg(Variant::TransposeNaiveCol),
            ((256, 256, 1), (32, 32, 1))
        );
        assert_eq!(
            cfg(Variant::TransposeSharedTile),
            ((1024, 256, 1), (8, 32, 1))
        );
        assert_eq!(cfg(Variant::TransposeL1_4x32), ((2048, 256, 1), (4, 32, 1)));
        assert_eq!(
            cfg(Variant::TransposeSharedPadded),
            ((256, 256, 1), (32, 8, 1))
        );
    }

    #[test]
    fn vec4_needs_multiples_of_four() {
        assert!(
            Variant::TransposeTiledVec4
                .launch_config(1023, 517)
                .is_err()
        );
        assert_eq!(
            Variant::fastest(1023, 517, true),
            Variant::TransposeTiledVec4Any
        );
        assert_eq!(
            Variant::fastest(4096, 36, true),
            Variant::TransposeTiledVec4
        );
    }

    #[test]
    fn vec4_needs_aligned_buffers() {
        assert_eq!(
            Variant::fastest(4096, 4096, false),
            Variant::TransposeTiledVec4Any
        );
        let vec4 = Variant::TransposeTiledVec4;
        assert!(vec4.check(8, 8, 0x1000, 0x2000).is_ok());
        assert!(matches!(
            vec4.check(8, 8, 0x1000, 0x2004),
            Err(Error::Misaligned {
                what: "output",
                alignment: 16,
                ..
            })
        ));
        assert!(matches!(
            vec4.check(9, 8, 0x1000, 0x2000),
            Err(Error::UnsupportedShape { rows: 9, .. })
        ));
        for v in Variant::ALL {
            if !v.needs_alignment() {
                assert!(v.check(9, 7, 0x1004, 0x2008).is_ok(), "{v:?}");
            }
        }
        let thin = Variant::TransposeThinVec4;
        assert!(thin.check(8, 1000, 0x1000, 0x2000).is_ok());
        assert!(matches!(
            thin.check(8, 1000, 0x1004, 0x2000),
            Err(Error::Misaligned { what: "input", .. })
        ));
    }

    #[test]
    fn thin_needs_multiples_of_four_and_a_short_side() {
        use gpu::transpose::THIN_MAX;
        let thin = Variant::TransposeThinVec4;
        for (rows, cols) in [
            (4, 4),
            (4, 1 << 22),
            (1 << 22, 4),
            (THIN_MAX, 8192),
            (8192, THIN_MAX),
        ] {
            assert!(thin.supports(rows, cols), "{rows}x{cols}");
            assert!(thin.launch_config(rows, cols).is_ok(), "{rows}x{cols}");
        }
        for (rows, cols) in [
            (THIN_MAX + 4, THIN_MAX + 4),
            (3, 8),
            (8, 1001),
            (4096, 4096),
        ] {
            assert!(!thin.supports(rows, cols), "{rows}x{cols}");
            assert!(matches!(
                thin.launch_config(rows, cols),
                Err(Error::UnsupportedShape { requirement, .. })
                    if requirement.contains(&THIN_MAX.to_string())
            ));
        }
        assert!(
            Variant::ALL
                .iter()
                .all(|v| v.supports(7, 9) == v.requirement().is_none())
        );
    }

    #[test]
    fn thin_launch_config() {
        let cfg = |rows, cols| {
            let c = Variant::TransposeThinVec4
                .launch_config(rows, cols)
                .unwrap();
            (c.grid_dim, c.block_dim, c.shared_mem_bytes)
        };
        // 2^20 long groups, 512 per block of 1 x 256 threads.
        assert_eq!(cfg(4, 4194304), ((2048, 1, 1), (1, 256, 1), 0));
        assert_eq!(cfg(4194304, 4), ((2048, 1, 1), (1, 256, 1), 0));
        // 8 short groups: 8 x 32 threads, 64 long groups per block.
        assert_eq!(cfg(32, 1000), ((4, 1, 1), (8, 32, 1), 0));
        assert_eq!(cfg(1000, 32), ((4, 1, 1), (8, 32, 1), 0));
        // 3 short groups: 3 x 85 = 255 threads, 170 long groups per block.
        assert_eq!(cfg(12, 1000), ((2, 1, 1), (3, 85, 1), 0));
        assert_eq!(cfg(4, 4), ((1, 1, 1), (1, 256, 1), 0));
        // Square and thin: the rows are the short side.
        assert_eq!(cfg(8, 8), ((1, 1, 1), (2, 128, 1), 0));
        // Empty: nothing to launch.
        assert_eq!(cfg(0, 8).0, (0, 1, 1));
        assert_eq!(cfg(8, 0).0, (0, 1, 1));
        for (rows, cols) in [(4, 4194304), (12, 1000), (1000, 28), (0, 8)] {
            let t = gpu::transpose::thin::Thin::new(rows, cols);
            assert_eq!(cfg(rows, cols).0.0 as usize, t.blocks(), "{rows}x{cols}");
        }
    }

    #[test]
    fn fastest_rules() {
        use Variant::{
            TransposeThinVec4 as Thin, TransposeTiledVec4 as Tiled, TransposeTiledVec4Any as Any,
        };
        let cases = [
            // Thin multiples of 4, aligned: the thin kernel, at THIN_MAX too.
            ((4, 4194304, true), Thin),
            ((4194304, 4, true), Thin),
            ((4, 4, true), Thin),
            ((32, 8192, true), Thin),
            ((8192, 32, true), Thin),
            ((32, 32, true), Thin),
            // Past THIN_MAX, a side below one tile: the aligned tile.
            ((36, 8192, true), Tiled),
            ((8192, 36, true), Tiled),
            ((60, 8192, true), Tiled),
            // Whole tiles both ways: the any-shape kernel's whole-tile path.
            ((64, 8192, true), Any),
            ((4096, 4096, true), Any),
            ((8192, 8192, true), Any),
            // The tile's grid: 65535 tiles of 64 rows along y fit, one more does not.
            ((65_535 * 64, 36, true), Tiled),
            ((65_535 * 64 + 4, 36, true), Any),
            ((4194304, 36, true), Any),
            ((4194304, 32, true), Thin),
            // Misaligned, or not multiples of 4: the any-shape kernel.
            ((4, 4194304, false), Any),
            ((4096, 4096, false), Any),
            ((3, 8192, true), Any),
            ((4, 8190, true), Any),
            ((1023, 517, true), Any),
        ];
        for ((rows, cols, aligned), want) in cases {
            assert_eq!(
                Variant::fastest(rows, cols, aligned),
                want,
                "{rows}x{cols} aligned={aligned}"
            );
        }
        // Whatever the shape that fits in a device's memory, the choice can launch.
        for rows in [1, 4, 32, 36, 64 * 65_535, 64 * 65_535 + 4, 1 << 23, 1 << 26] {
            for cols in [1, 4, 32, 36, 4096, 1 << 22] {
                if rows * cols > 1 << 36 {
                    continue;
                }
                for aligned in [false, true] {
                    let v = Variant::fastest(rows, cols, aligned);
                    assert!(v.launch_config(rows, cols).is_ok(), "{rows}x{cols}: {v:?}");
                    assert!(v.supports(rows, cols));
                    assert!(aligned || !v.needs_alignment());
                }
            }
        }
    }

    /// The launches of the thin and any-shape kernels are the ones the simulations in the
    /// tests of `gpu::transpose::thin` and `gpu::transpose::any_shape` run: the block and the
    /// one-dimensional grid of their geometry, for the shapes simulated there.
    #[test]
    fn launches_are_the_simulated_geometry() {
        use gpu::transpose::{VEC4_THREADS, any_shape, thin, thin::Thin};
        // The thin plan's simulated shapes, and wider and taller thin ones.
        let thin_shapes = thin::PLAN_SHAPES.iter().copied().chain([
            (8, 4096),
            (4096, 8),
            (16, 4096),
            (4096, 16),
            (32, 4096),
            (4096, 32),
            (4, 4096),
            (4096, 4),
        ]);
        for (rows, cols) in thin_shapes {
            let thin = Thin::new(rows, cols);
            let cfg = Variant::TransposeThinVec4
                .launch_config(rows, cols)
                .unwrap();
            let (bx, by) = thin.block();
            assert_eq!(cfg.block_dim, (bx, by, 1), "{rows}x{cols}");
            assert_eq!(cfg.grid_dim, (thin.blocks() as u32, 1, 1), "{rows}x{cols}");
        }
        // The any-shape plan's simulated shapes, and a few more partial tiles.
        let any_shapes =
            any_shape::PLAN_SHAPES
                .iter()
                .copied()
                .chain([(1025, 1027), (132, 200), (136, 200)]);
        for (rows, cols) in any_shapes {
            let cfg = Variant::TransposeTiledVec4Any
                .launch_config(rows, cols)
                .unwrap();
            assert_eq!(
                cfg.block_dim,
                (VEC4_THREADS, VEC4_THREADS, 1),
                "{rows}x{cols}"
            );
            let tiles = any_shape::tiles(rows, cols) as u32;
            assert_eq!(cfg.grid_dim, (tiles, 1, 1), "{rows}x{cols}");
        }
    }

    #[test]
    fn any_shape_grid_is_one_dimensional() {
        let any = Variant::TransposeTiledVec4Any;
        let cfg = any.launch_config(8191, 8193).unwrap();
        assert_eq!(
            (cfg.grid_dim, cfg.block_dim),
            ((128 * 129, 1, 1), (16, 16, 1))
        );
        // A column of 10^7 rows: 156250 tiles, over gridDim.y's limit for a 2D grid.
        let cfg = any.launch_config(10_000_000, 1).unwrap();
        assert_eq!(cfg.grid_dim, (156_250, 1, 1));
        assert!(
            Variant::TransposeSharedPadded
                .launch_config(10_000_000, 1)
                .is_err()
        );
    }

    #[test]
    #[cfg(feature = "clap")]
    fn names_are_kernel_names() {
        for v in Variant::ALL {
            let value = clap::ValueEnum::to_possible_value(&v).unwrap();
            assert_eq!(value.get_name().replace('-', "_"), v.kernel_name());
        }
    }
}
