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

use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg};
use gpu::transpose as k;

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result, expect_len};
use crate::launch::{self, VEC4_ALIGNMENT};

/// Queues `output = input^T` on `gpu`'s stream: `input` is a row-major `rows x cols` matrix,
/// `output` becomes its row-major `cols x rows` transpose; returns the launch configuration.
/// Nothing synchronises.
///
/// `input` and `output` are any device memory of the handle's context holding `rows * cols`
/// floats: a `CudaSlice<f32>` or a view of one.
///
/// Variant, when `rows` and `cols` are multiples of 4 and both buffers start on a 16-byte
/// boundary (the `float4` loads and stores of the first two need all of it):
/// [`Variant::TransposeThinVec4`] for a thin matrix (`min(rows, cols) <=`
/// [`THIN_MAX`](gpu::transpose::THIN_MAX)), [`Variant::TransposeTiledVec4`] for the others
/// whose grid fits (at most 65535 tiles of 64 rows: `rows <= 4194240`); otherwise
/// [`Variant::TransposeTiledVec4Any`] (16-byte accesses too, for any shape and any element
/// offset, on a one-dimensional grid). See [`Variant::fastest`].
///
/// Empty matrix (`rows` or `cols` 0): nothing is launched (a grid of 0 blocks is returned).
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
) -> Result<LaunchConfig> {
    queue(gpu, None, input, output, rows, cols)
}

/// As [`transpose`], with the variant chosen by the caller; for [`Variant::Copy`], `output`
/// becomes a copy of `input` (the bandwidth baseline).
///
/// # Errors
/// As [`transpose`]; for [`Variant::TransposeTiledVec4`] and [`Variant::TransposeThinVec4`]
/// also [`Error::UnsupportedShape`] if `rows` or `cols` is not a multiple of 4 (or, for the
/// thin kernel, neither is at most [`THIN_MAX`](gpu::transpose::THIN_MAX)), and
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
    let stream = gpu.stream();
    // The guards record this launch's use of the buffers when dropped, after the launch.
    let (input_ptr, _read) = input.device_ptr(stream);
    let (output_ptr, _write) = output.device_ptr_mut(stream);
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
    let kernel = variant.kernel_name();
    let f = gpu.function(kernel)?;
    let mut args = stream.launch_builder(&f);
    args.arg(&input_ptr).arg(&output_ptr).arg(&rows).arg(&cols);
    // SAFETY: every transpose kernel is `(a: *const f32, b: *mut f32, rows: usize, cols: usize)`.
    // Both pointers are device views of `rows * cols` floats (checked, no overflow) in `gpu`'s
    // context (checked); they do not overlap, since `output` is borrowed mutably while `input`
    // is borrowed. For the vec4 and thin kernels `rows` and `cols` are multiples of 4 and both
    // views start on a 16-byte boundary (checked by `Variant::check`, or `fastest` chose them
    // only then); the others, `transpose_tiled_vec4_any` included, need only the `f32`
    // alignment every view has. The launch shape is the kernel's own (`launch_config`).
    unsafe { args.launch(cfg) }.during(format!("launching {kernel}"))?;
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
    /// Thin matrices (one side at most [`THIN_MAX`](gpu::transpose::THIN_MAX), both multiples
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

    /// The kernel's `.entry` name in the PTX.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant::Copy => k::COPY,
            Variant::TransposeNaiveRow => k::TRANSPOSE_NAIVE_ROW,
            Variant::TransposeNaiveCol => k::TRANSPOSE_NAIVE_COL,
            Variant::TransposeSharedTile => k::TRANSPOSE_SHARED_TILE,
            Variant::TransposeL1_8x32 => k::TRANSPOSE_L1_8X32,
            Variant::TransposeL1_4x32 => k::TRANSPOSE_L1_4X32,
            Variant::TransposeSharedPadded => k::TRANSPOSE_SHARED_PADDED,
            Variant::TransposeTiledVec4 => k::TRANSPOSE_TILED_VEC4,
            Variant::TransposeTiledVec4Any => k::TRANSPOSE_TILED_VEC4_ANY,
            Variant::TransposeThinVec4 => k::TRANSPOSE_THIN_VEC4,
        }
    }

    /// Whether the variant transposes (every variant but [`Variant::Copy`]).
    pub fn transposes(self) -> bool {
        self != Variant::Copy
    }

    /// The seed's version number and its time for 8192 x 8192 on the author's laptop (nvprof).
    pub fn seed(self) -> Option<(u32, f64)> {
        match self {
            Variant::TransposeNaiveCol => Some((1, 66.586)),
            Variant::TransposeNaiveRow => Some((2, 50.46)),
            Variant::TransposeSharedTile => Some((3, 41.09)),
            Variant::TransposeL1_8x32 => Some((4, 43.32)),
            Variant::TransposeL1_4x32 => Some((5, 41.35)),
            _ => None,
        }
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
    /// [`THIN_MAX`](gpu::transpose::THIN_MAX) (its block spans the short side).
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

/// CPU reference: the `cols x rows` row-major transpose of the `rows x cols` row-major `input`.
///
/// # Panics
/// If `input.len() != rows * cols`.
pub fn reference(input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    assert_eq!(input.len(), rows * cols, "input is not rows x cols");
    let mut out = vec![0.0; input.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

/// Bytes a transpose (or copy) of `rows x cols` floats must move: each element read and written once.
pub fn bytes_moved(rows: usize, cols: usize) -> u64 {
    8 * rows as u64 * cols as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_by_hand() {
        // [[1, 2, 3], [4, 5, 6]] -> [[1, 4], [2, 5], [3, 6]]
        assert_eq!(
            reference(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3),
            vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
        assert_eq!(reference(&[7.0], 1, 1), vec![7.0]);
    }

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

    /// One warp instruction of a simulated `transpose_thin_vec4` launch: the byte offsets of
    /// its lanes' 16-byte accesses in the input (loads) or output (stores) buffer.
    #[derive(Debug)]
    struct WarpAccess {
        store: bool,
        /// Whether all 32 lanes of the warp take part.
        full: bool,
        offsets: Vec<usize>,
    }

    impl WarpAccess {
        /// 32-byte sectors touched, and whether each is filled whole by this instruction.
        fn sectors(&self) -> (usize, bool) {
            let mut bytes = std::collections::BTreeMap::<usize, usize>::new();
            for &o in &self.offsets {
                *bytes.entry(o / 32).or_default() += 16;
            }
            (bytes.len(), bytes.values().all(|&b| b == 32))
        }
    }

    /// One `float4` store of the thin kernel, simulated: output row `4 cg + q` of the 4 x 4
    /// cell `(rg, cg)` whose input rows are `v`, written into `out` (counted in `writes`) after
    /// the bounds and alignment checks; returns the store's byte offset.
    fn store_cell_row(
        out: &mut [f32],
        writes: &mut [u8],
        rows: usize,
        cols: usize,
        (rg, cg, v): (usize, usize, &[[f32; 4]; 4]),
        q: usize,
    ) -> usize {
        let (r, c) = (4 * cg + q, 4 * rg);
        assert!(r < cols && c + 4 <= rows, "store outside the output");
        let e = r * rows + c;
        assert_eq!((4 * e) % 16, 0, "misaligned store");
        for (p, row) in v.iter().enumerate() {
            out[e + p] = row[q];
            writes[e + p] += 1;
        }
        4 * e
    }

    /// `transpose_thin_vec4` on the CPU, block by block, warp by warp, in the kernel's
    /// instruction order, with the geometry the kernel uses (`gpu::transpose::thin`). Checks
    /// that the launch is the geometry's, every `float4` lies inside its matrix and is
    /// 16-byte aligned (buffers at offset 0 of an allocation), every output element is
    /// written exactly once; returns the output and every warp instruction.
    fn simulate_thin(input: &[f32], rows: usize, cols: usize) -> (Vec<f32>, Vec<WarpAccess>) {
        use gpu::transpose::{THIN_CELLS, thin::Thin};
        let n = rows * cols;
        let thin = Thin::new(rows, cols);
        let cfg = Variant::TransposeThinVec4
            .launch_config(rows, cols)
            .unwrap();
        let (bx, by) = thin.block();
        assert_eq!(cfg.block_dim, (bx, by, 1));
        assert_eq!(cfg.grid_dim, (thin.blocks() as u32, 1, 1));
        let (bx, threads) = (bx as usize, (bx * by) as usize);
        let mut out = vec![f32::NAN; n];
        let mut writes = vec![0u8; n];
        let mut accesses = Vec::new();
        // s = 4: the staged path; its blocks are simulated there, none here.
        let register_blocks = if thin.staged() {
            simulate_thin_staged(input, rows, cols, &mut out, &mut writes, &mut accesses);
            0
        } else {
            cfg.grid_dim.0 as usize
        };
        for block in 0..register_blocks {
            for warp in 0..threads.div_ceil(32) {
                let lanes: Vec<(usize, usize)> = (32 * warp..threads.min(32 * warp + 32))
                    .map(|t| (t % bx, t / bx))
                    .collect();
                let cells = |k| lanes.iter().map(move |&(x, y)| thin.cell(block, x, y, k));
                let mut held = vec![[[0.0f32; 4]; 4]; lanes.len() * THIN_CELLS];
                for k in 0..THIN_CELLS {
                    let full = lanes.len() == 32 && cells(k).all(|c| c.is_some());
                    // One instruction per row `i` of the cell.
                    let mut offsets: [Vec<usize>; 4] = Default::default();
                    for (lane, cell) in cells(k).enumerate() {
                        let Some((rg, cg)) = cell else { continue };
                        let rows_held = &mut held[lane * THIN_CELLS + k];
                        for (i, (row, offsets)) in
                            rows_held.iter_mut().zip(&mut offsets).enumerate()
                        {
                            let (r, c) = (4 * rg + i, 4 * cg);
                            assert!(r < rows && c + 4 <= cols, "load outside the matrix");
                            let e = r * cols + c;
                            assert_eq!((4 * e) % 16, 0, "misaligned load");
                            row.copy_from_slice(&input[e..e + 4]);
                            offsets.push(4 * e);
                        }
                    }
                    accesses.extend(offsets.map(|offsets| WarpAccess {
                        store: false,
                        full,
                        offsets,
                    }));
                }
                for k in 0..THIN_CELLS {
                    let full = lanes.len() == 32 && cells(k).all(|c| c.is_some());
                    // One instruction per output row `4cg + q`.
                    let mut offsets: [Vec<usize>; 4] = Default::default();
                    for (lane, cell) in cells(k).enumerate() {
                        let Some((rg, cg)) = cell else { continue };
                        let v = &held[lane * THIN_CELLS + k];
                        for (q, offsets) in offsets.iter_mut().enumerate() {
                            let cell = (rg, cg, v);
                            offsets.push(store_cell_row(
                                &mut out,
                                &mut writes,
                                rows,
                                cols,
                                cell,
                                q,
                            ));
                        }
                    }
                    accesses.extend(offsets.map(|offsets| WarpAccess {
                        store: true,
                        full,
                        offsets,
                    }));
                }
            }
        }
        assert!(
            writes.iter().all(|&w| w == 1),
            "an element not written exactly once"
        );
        (out, accesses)
    }

    /// Checks that one warp instruction's 16-byte shared accesses, at the given stage
    /// positions (`None`: lane not taking part), are conflict-free: served 8 lanes at a time,
    /// each octet's positions differ modulo 8 (8 x 16 bytes span the 32 banks once).
    fn assert_conflict_free(positions: &[Option<usize>]) {
        for octet in positions.chunks(8) {
            let mut banks = [false; 8];
            for &p in octet.iter().flatten() {
                assert!(!banks[p % 8], "bank conflict: {positions:?}");
                banks[p % 8] = true;
            }
        }
    }

    /// The staged path of `transpose_thin_vec4` (`s = 4`), block by block, warp by warp, in
    /// the kernel's instruction order, with the geometry the kernel uses
    /// (`Thin::region`, `region_slot`, `stage_slot`): all loads first, then per cell round
    /// the stage writes, `syncwarp`, the stage reads and the stores. Checks, besides what
    /// [`simulate_thin`] checks, that `Thin::region`'s slots are the rows of
    /// `Thin::slot_cell`'s cells, that every stage read finds what this round's writer put
    /// there (the lane and round it expects), that no two lanes write one stage position in a
    /// round, and that every shared access is free of bank conflicts.
    fn simulate_thin_staged(
        input: &[f32],
        rows: usize,
        cols: usize,
        out: &mut [f32],
        writes: &mut [u8],
        accesses: &mut Vec<WarpAccess>,
    ) {
        use gpu::transpose::THIN_CELLS;
        use gpu::transpose::thin::{STAGE_SLOTS, Thin, region_slot, stage_slot};
        let n = rows * cols;
        let thin = Thin::new(rows, cols);
        assert!(thin.staged() && thin.block() == (1, 256));
        let wide = thin.short_rows;
        // `float4` `f` of the short side's buffer (the output of a short-wide matrix, the input
        // of a tall-narrow one) as `(rg, cg, row of the cell on the short side)`.
        let slot_of = |block: usize, y0: usize, k: usize, t: usize| {
            let (first, slots) = thin.region(block, y0, k);
            (t < slots).then(|| {
                let (rg, cg) = thin
                    .slot_cell(block, y0, t, k)
                    .expect("a slot past the matrix");
                // Slot `t` is row `t % 4` (short side) of that cell: element offset
                // `4 (first + t)` in the short side's buffer.
                let e = if wide {
                    (4 * cg + t % 4) * rows + 4 * rg
                } else {
                    (4 * rg + t % 4) * cols + 4 * cg
                };
                assert_eq!(e, 4 * (first + t), "region and cells disagree");
                assert!(e + 4 <= n, "access outside the matrix");
                assert_eq!((4 * e) % 16, 0, "misaligned access");
                e
            })
        };
        for block in 0..thin.blocks() {
            for warp in 0..8 {
                let y0 = 32 * warp;
                if thin.cell(block, 0, y0, 0).is_none() {
                    // The kernel's warp-uniform early return.
                    assert!((0..32).all(|l| {
                        (0..THIN_CELLS).all(|k| thin.cell(block, 0, y0 + l, k).is_none())
                    }));
                    continue;
                }
                let own = |lane: usize, k| thin.cell(block, 0, y0 + lane, k);
                // Loads, both rounds, into per-lane registers `held[lane][k][i]`.
                let mut held = vec![[[[0.0f32; 4]; 4]; THIN_CELLS]; 32];
                for k in 0..THIN_CELLS {
                    for i in 0..4 {
                        let mut offsets = Vec::new();
                        for (lane, held) in held.iter_mut().enumerate() {
                            let e = if wide {
                                // The lane's own cell, input row `4rg + i` (`rg = 0`).
                                own(lane, k).map(|(rg, cg)| {
                                    let (r, c) = (4 * rg + i, 4 * cg);
                                    assert!(r < rows && c + 4 <= cols, "load outside");
                                    r * cols + c
                                })
                            } else {
                                slot_of(block, y0, k, region_slot(lane, i))
                            };
                            if let Some(e) = e {
                                assert_eq!((4 * e) % 16, 0, "misaligned load");
                                held[k][i].copy_from_slice(&input[e..e + 4]);
                                offsets.push(4 * e);
                            }
                        }
                        accesses.push(WarpAccess {
                            store: false,
                            full: offsets.len() == 32,
                            offsets,
                        });
                    }
                }
                for k in 0..THIN_CELLS {
                    // The stage: per position, (writer lane, contents); cleared per round
                    // (the `syncwarp` between rounds orders reads before rewrites).
                    let mut stage: Vec<Option<(usize, [f32; 4])>> = vec![None; STAGE_SLOTS];
                    // Writes: short-wide, lane `l` writes its cell's column `q` to slot
                    // `4l + q`; tall-narrow, its loaded slot `l + 32j`. Every lane writes.
                    for step in 0..4 {
                        let mut positions = Vec::new();
                        for (lane, held) in held.iter().enumerate() {
                            let (t, v) = if wide {
                                let c = &held[k];
                                (4 * lane + step, c.map(|row| row[step]))
                            } else {
                                (region_slot(lane, step), held[k][step])
                            };
                            let p = stage_slot(t);
                            assert!(p < STAGE_SLOTS);
                            assert!(stage[p].is_none(), "two writers of one stage slot");
                            stage[p] = Some((lane, v));
                            positions.push(Some(p));
                        }
                        assert_conflict_free(&positions);
                    }
                    // `syncwarp`, then reads and stores.
                    if wide {
                        // Lane `l` reads slot `l + 32j` (written by lane `(l + 32j) / 4`)
                        // and stores it to `float4` `first + l + 32j` of the output.
                        for j in 0..4 {
                            let mut positions = vec![None; 32];
                            let mut offsets = Vec::new();
                            for (lane, position) in positions.iter_mut().enumerate() {
                                let t = region_slot(lane, j);
                                let Some(e) = slot_of(block, y0, k, t) else {
                                    continue;
                                };
                                let p = stage_slot(t);
                                *position = Some(p);
                                let (writer, v) = stage[p].expect("stage read before its write");
                                assert_eq!(writer, t / 4, "stage slot from the wrong lane");
                                out[e..e + 4].copy_from_slice(&v);
                                for w in &mut writes[e..e + 4] {
                                    *w += 1;
                                }
                                offsets.push(4 * e);
                            }
                            assert_conflict_free(&positions);
                            accesses.push(WarpAccess {
                                store: true,
                                full: offsets.len() == 32,
                                offsets,
                            });
                        }
                    } else {
                        // Lane `l` with a cell reads its input rows `i` from slots `4l + i`
                        // (written by lane `(4l + i) % 32`), then stores them transposed.
                        let mut cell_rows = vec![[[0.0f32; 4]; 4]; 32];
                        for i in 0..4 {
                            let mut positions = vec![None; 32];
                            for (lane, rows_held) in cell_rows.iter_mut().enumerate() {
                                if own(lane, k).is_none() {
                                    continue;
                                }
                                let t = 4 * lane + i;
                                let p = stage_slot(t);
                                positions[lane] = Some(p);
                                let (writer, v) = stage[p].expect("stage read before its write");
                                assert_eq!(writer, t % 32, "stage slot from the wrong lane");
                                rows_held[i] = v;
                            }
                            assert_conflict_free(&positions);
                        }
                        for q in 0..4 {
                            let mut offsets = Vec::new();
                            for (lane, v) in cell_rows.iter().enumerate() {
                                let Some((rg, cg)) = own(lane, k) else {
                                    continue;
                                };
                                let cell = (rg, cg, v);
                                offsets.push(store_cell_row(out, writes, rows, cols, cell, q));
                            }
                            accesses.push(WarpAccess {
                                store: true,
                                full: offsets.len() == 32,
                                offsets,
                            });
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn thin_plan_is_exact() {
        use gpu::transpose::THIN_MAX;
        let shapes = [
            (4, 4),
            (4, 8),
            (8, 4),
            (4, 1000),
            (1000, 4),
            (16, 4092),
            (4092, 16),
            (12, 1000),
            (1000, 12),
            (20, 20),
            (28, 8),
            (24, 2052),
            (2052, 24),
            (THIN_MAX, THIN_MAX),
            (THIN_MAX, 4100),
            (4100, THIN_MAX),
            (THIN_MAX, THIN_MAX + 4),
            (THIN_MAX + 4, THIN_MAX),
            (4, 4096 + 4),
            (4, 3236),
            (3236, 4),
            (4, 4 * 512 * 3),
            (4 * 512 * 3, 4),
        ];
        for (rows, cols) in shapes {
            let input: Vec<f32> = (0..rows * cols).map(|e| e as f32).collect();
            let (got, _) = simulate_thin(&input, rows, cols);
            assert!(got == reference(&input, rows, cols), "{rows}x{cols}");
        }
    }

    #[test]
    fn thin_accesses_fill_whole_sectors() {
        for s in [8, 16, 32] {
            for (rows, cols) in [(s, 4096), (4096, s)] {
                let input = vec![0.0; rows * cols];
                let (_, accesses) = simulate_thin(&input, rows, cols);
                for a in accesses.iter().filter(|a| a.full) {
                    let (sectors, whole) = a.sectors();
                    assert!(whole, "{rows}x{cols}: {a:?}");
                    assert_eq!(sectors, 16, "{rows}x{cols}");
                }
            }
        }
        // s = 4 (the staged path): on both sides every warp instruction is 32 consecutive
        // float4s, 512 contiguous bytes (16 whole sectors when the long side's rows start on
        // sector boundaries, `l` a multiple of 8); the partial ones (the last warp's region)
        // contiguous too. On the staged side (short-wide stores, tall-narrow loads) each
        // starts on a 512-byte boundary whatever `l`.
        for (rows, cols) in [
            (4, 4096),
            (4096, 4),
            (4, 3236),
            (3236, 4),
            (4, 1000),
            (1000, 4),
        ] {
            let input = vec![0.0; rows * cols];
            let (_, accesses) = simulate_thin(&input, rows, cols);
            let long = rows.max(cols);
            for a in &accesses {
                assert!(a.offsets.windows(2).all(|w| w[1] == w[0] + 16), "{a:?}");
                let staged_side = a.store == (rows == 4);
                if staged_side && let Some(&o) = a.offsets.first() {
                    assert_eq!(o % 512, 0, "{rows}x{cols}: {a:?}");
                }
                if a.full && (staged_side || long % 8 == 0) {
                    let (sectors, whole) = a.sectors();
                    assert!(whole && sectors == 16, "{rows}x{cols}: {a:?}");
                }
            }
            assert!(accesses.iter().any(|a| a.full && a.store));
            assert!(accesses.iter().any(|a| a.full && !a.store));
        }
    }

    #[test]
    fn any_shape_slots_cover_each_chunk_once() {
        use gpu::transpose::any_shape::{OUT_CHUNKS, SLOTS, STAGED_ROWS, slot};
        let staged = STAGED_ROWS as usize;
        let mut seen = vec![0u32; staged * OUT_CHUNKS];
        for y in 0..16 {
            for x in 0..16 {
                for k in 0..SLOTS as u32 {
                    if let Some((i, j)) = slot(k, x, y) {
                        seen[i as usize * OUT_CHUNKS + j as usize] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
    }

    #[test]
    fn any_shape_leads_put_spans_on_sectors() {
        use gpu::transpose::any_shape::{SECTOR, STAGED_ROWS, lead, lead_max, output_span};
        for rows in [1, 2, 3, 4, 6, 8, 12, 64, 71, 8191, 8192, 8196] {
            for base in (0..32).map(|e| 0x100 + 4 * e) {
                let leads: Vec<u32> = (0..16).map(|c| lead(base, c * rows)).collect();
                assert_eq!(
                    leads.iter().max().copied(),
                    Some(lead_max(leads[0], rows)),
                    "rows {rows} base {base:#x}"
                );
                for (c, &l) in leads.iter().enumerate() {
                    assert!(l < SECTOR);
                    let row0 = 64;
                    let (first, end) = output_span(row0, 1 << 20, l);
                    assert_eq!((base + 4 * (c * rows + first)) % 32, 0);
                    assert_eq!((base + 4 * (c * rows + end)) % 32, 0);
                    assert!(end - row0 <= STAGED_ROWS as usize);
                }
            }
        }
    }

    /// Every thread `(x, y)` of a 16 x 16 block with each of its slots `k`, as `(y, x, k)`.
    fn threads() -> impl Iterator<Item = (u32, u32, u32)> {
        use gpu::transpose::any_shape::SLOTS;
        let slots = SLOTS as u32;
        (0..16).flat_map(move |y| (0..16).flat_map(move |x| (0..slots).map(move |k| (y, x, k))))
    }

    /// Elements a simulated launch moved with 16-byte and with 4-byte accesses.
    #[derive(Debug, Default)]
    struct Moved {
        vector_loads: usize,
        scalar_loads: usize,
        vector_stores: usize,
        scalar_stores: usize,
    }

    /// `transpose_tiled_vec4_any` on the CPU, block by block and thread by thread, with the
    /// geometry the kernel's general path uses (`gpu::transpose::any_shape`): the input view
    /// starts `in_offset` floats and the output view `out_offset` floats into 256-byte aligned
    /// allocations. Checks that every read lies inside the input view, every 16-byte access is
    /// aligned, every tile slot read was written once, every output element is written exactly
    /// once by the block whose span holds it; returns the output and the access counts.
    fn simulate_any(
        input: &[f32],
        rows: usize,
        cols: usize,
        in_offset: usize,
        out_offset: usize,
    ) -> (Vec<f32>, Moved) {
        use gpu::transpose::any_shape::{
            Access, STAGED_ROWS, access, lead, lead_max, output_span, position, shift, slot,
            tile_origin,
        };
        const N: usize = 64;
        const PITCH: usize = N + 1;
        let n = rows * cols;
        let (a, b) = (0x1000 + 4 * in_offset, 0x9_0000 + 4 * out_offset);
        let mut out = vec![f32::NAN; n];
        let mut writes = vec![0u8; n];
        let mut moved = Moved::default();
        let cfg = Variant::TransposeTiledVec4Any
            .launch_config(rows, cols)
            .unwrap();
        assert_eq!(
            (cfg.grid_dim.1, cfg.grid_dim.2, cfg.block_dim),
            (1, 1, (16, 16, 1))
        );
        for block in 0..cfg.grid_dim.0 as usize {
            let (row0, col0) = tile_origin(block as u32, rows);
            let lead_of = |i: usize| lead(b, (col0 + i) * rows);
            let most = lead_max(lead_of(0), rows) as usize;
            let (staged, width) = ((rows - row0).min(N + most), (cols - col0).min(N));
            assert!(staged <= STAGED_ROWS as usize);
            let width32 = width as u32;
            let mut tile: Vec<Option<f32>> = vec![None; STAGED_ROWS as usize * PITCH];
            for (ty, tx, k) in threads() {
                let Some((i, j)) = slot(k, tx, ty) else {
                    continue;
                };
                let (i, j) = (i as usize, j as usize);
                if i >= staged {
                    continue;
                }
                let start = (row0 + i) * cols + col0;
                let s = shift(a, start);
                let mut v = [None; 4];
                match access(j as u32, s, width32, start, n) {
                    Access::Vector => {
                        let first = start + 4 * j - s as usize;
                        assert_eq!((a + 4 * first) % 16, 0, "misaligned load");
                        assert!(first + 4 <= n, "load past the matrix");
                        for (q, x) in v.iter_mut().enumerate() {
                            *x = Some(input[first + q]);
                        }
                        moved.vector_loads += 4;
                    }
                    Access::Scalar => {
                        for (q, x) in (0..4).zip(v.iter_mut()) {
                            if let Some(p) = position(j as u32, q, s, width32) {
                                *x = Some(input[start + p as usize]);
                                moved.scalar_loads += 1;
                            }
                        }
                    }
                    Access::Skip => {}
                }
                for (q, x) in (0..4).zip(v.iter()) {
                    if let Some(p) = position(j as u32, q, s, width32) {
                        let slot = &mut tile[i * PITCH + p as usize];
                        assert!(slot.is_none(), "tile[{i}][{p}] written twice");
                        *slot = Some(x.expect("placed an element that was not loaded"));
                    }
                }
            }
            for (ty, tx, k) in threads() {
                let Some((i, j)) = slot(k, tx, ty) else {
                    continue;
                };
                let (i, j) = (i as usize, j as usize);
                if i >= width {
                    continue;
                }
                let (first, end) = output_span(row0, rows, lead_of(i));
                if first >= end {
                    continue;
                }
                let (len, off) = ((end - first) as u32, first - row0);
                let start = (col0 + i) * rows + first;
                let s = shift(b, start);
                let mut store = |p: usize| {
                    assert!(p < len as usize, "store outside the span");
                    writes[start + p] += 1;
                    out[start + p] =
                        tile[(off + p) * PITCH + i].expect("read a tile slot never written");
                };
                match access(j as u32, s, len, 0, len as usize) {
                    Access::Vector => {
                        let p = 4 * j - s as usize;
                        assert_eq!((b + 4 * (start + p)) % 16, 0, "misaligned store");
                        for q in 0..4 {
                            store(p + q);
                        }
                        moved.vector_stores += 4;
                    }
                    Access::Scalar => {
                        for q in 0..4 {
                            if let Some(p) = position(j as u32, q, s, len) {
                                store(p as usize);
                                moved.scalar_stores += 1;
                            }
                        }
                    }
                    Access::Skip => {}
                }
            }
        }
        assert!(
            writes.iter().all(|&w| w == 1),
            "an element not written exactly once"
        );
        (out, moved)
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
        // Column of tiles after column of tiles: 8191 rows are 128 tiles down.
        assert_eq!(gpu::transpose::any_shape::tile_origin(1, 8191), (64, 0));
        assert_eq!(
            gpu::transpose::any_shape::tile_origin(127, 8191),
            (127 * 64, 0)
        );
        assert_eq!(gpu::transpose::any_shape::tile_origin(128, 8191), (0, 64));
        assert_eq!(gpu::transpose::any_shape::tile_origin(130, 8191), (128, 64));
    }

    #[test]
    fn any_shape_plan_is_exact_at_every_offset() {
        let shapes = [
            (1, 1),
            (1, 1000),
            (1000, 1),
            (5, 5),
            (3, 8191),
            (8193, 7),
            (63, 65),
            (65, 63),
            (127, 129),
            (1001, 3),
            (64, 64),
            (68, 36),
            (130, 67),
        ];
        for (rows, cols) in shapes {
            let input: Vec<f32> = (0..rows * cols).map(|e| e as f32).collect();
            let expected = reference(&input, rows, cols);
            for in_offset in 0..4 {
                for out_offset in 0..4 {
                    let (got, _) = simulate_any(&input, rows, cols, in_offset, out_offset);
                    assert!(
                        got == expected,
                        "{rows}x{cols} in+{in_offset} out+{out_offset}"
                    );
                }
            }
        }
    }

    #[test]
    fn any_shape_moves_almost_everything_in_16_byte_accesses() {
        let (rows, cols) = (1025, 1027);
        let input: Vec<f32> = (0..rows * cols).map(|e| e as f32).collect();
        let (got, m) = simulate_any(&input, rows, cols, 1, 3);
        assert!(got == reference(&input, rows, cols));
        let n = rows * cols;
        // Loads: every chunk inside the matrix is read whole (the first and last may not be).
        assert!(m.scalar_loads <= 6, "{m:?}");
        // Stores: spans start and end on 32-byte boundaries, so only an output row's two
        // ends (at most 3 + 3 elements) are stored element by element.
        assert!(m.scalar_stores <= 6 * cols, "{m:?}");
        assert_eq!(m.vector_stores + m.scalar_stores, n);
        // Aligned multiples of 4: nothing but float4s. Output rows of 132 floats alternate
        // leads 0 and 4, so the tiles stage 4 rows more than their 64 (read twice, the
        // second time from L2); rows of a multiple of 8 floats on an aligned `b` have lead
        // 0, and the tile moves exactly transpose_tiled_vec4's float4s.
        for (rows, extra) in [(132, 4), (136, 0)] {
            let cols = 200;
            let input: Vec<f32> = (0..rows * cols).map(|e| e as f32).collect();
            let (_, m) = simulate_any(&input, rows, cols, 4, 0);
            assert_eq!((m.scalar_loads, m.scalar_stores), (0, 0), "{m:?}");
            let restaged = (rows.div_ceil(64) - 1) * extra * cols;
            assert_eq!(
                (m.vector_loads, m.vector_stores),
                (rows * cols + restaged, rows * cols)
            );
        }
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
