//! Matrix transpose of a row-major `rows x cols` `f32` matrix into its `cols x rows` transpose
//! (seed "并行计算(二)——CUDA", NVIDIA's `transpose` sample): launchers for the kernels in
//! `gpu::transpose`, the copy baseline, and the CPU reference.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gpu::transpose as k;

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
use crate::launch;

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
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 8] = [
        Variant::Copy,
        Variant::TransposeNaiveRow,
        Variant::TransposeNaiveCol,
        Variant::TransposeSharedTile,
        Variant::TransposeL1_8x32,
        Variant::TransposeL1_4x32,
        Variant::TransposeSharedPadded,
        Variant::TransposeTiledVec4,
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

    /// Whether the variant accepts a `rows x cols` matrix (only [`Variant::TransposeTiledVec4`]
    /// has a precondition: both multiples of 4).
    pub fn supports(self, rows: usize, cols: usize) -> bool {
        self != Variant::TransposeTiledVec4 || (rows.is_multiple_of(4) && cols.is_multiple_of(4))
    }

    /// The launch for a `rows x cols` input (see each kernel's doc for the formula).
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] if the grid would exceed CUDA's limits (2^31 - 1 blocks along
    /// x, 65535 along y) or the shape breaks the variant's precondition.
    pub fn launch_config(self, rows: usize, cols: usize) -> Result<LaunchConfig> {
        let kernel = self.kernel_name();
        if !self.supports(rows, cols) {
            return Err(Error::UnsupportedShape {
                kernel,
                rows,
                cols,
                requirement: "rows and cols must be multiples of 4 for 16-byte accesses",
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
            Variant::TransposeTiledVec4 => (
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

/// Queues the variant on `gpu`'s stream: `output` (`cols x rows`) becomes the transpose of
/// `input` (`rows x cols`, row-major); for [`Variant::Copy`], a copy. Nothing is launched for an
/// empty matrix.
///
/// # Errors
/// [`Error::InvalidInput`] if `rows * cols` overflows; [`Error::LengthMismatch`] if a buffer
/// does not hold `rows * cols` floats; [`Error::InvalidLaunch`] as in [`Variant::launch_config`].
pub fn launch(
    gpu: &Gpu,
    variant: Variant,
    input: &CudaSlice<f32>,
    output: &mut CudaSlice<f32>,
    rows: usize,
    cols: usize,
) -> Result<LaunchConfig> {
    let n = crate::error::elements(rows, cols)?;
    for (what, len) in [("input", input.len()), ("output", output.len())] {
        if len != n {
            return Err(Error::LengthMismatch {
                what,
                expected: n,
                actual: len,
            });
        }
    }
    let cfg = variant.launch_config(rows, cols)?;
    if n == 0 {
        return Ok(cfg);
    }
    let kernel = variant.kernel_name();
    let f = gpu.function(kernel)?;
    let mut args = gpu.stream().launch_builder(&f);
    args.arg(input).arg(output).arg(&rows).arg(&cols);
    // SAFETY: every transpose kernel is `(a: *const f32, b: *mut f32, rows: usize, cols: usize)`;
    // both buffers hold rows * cols floats (checked), do not overlap (one is borrowed mutably),
    // are 256-byte aligned (cudarc allocations), and the launch shape is the kernel's own.
    unsafe { args.launch(cfg) }.during(format!("launching {kernel}"))?;
    Ok(cfg)
}

/// Copies `input` to the device, runs the variant into an output poisoned with NaN, and returns
/// the result (`cols x rows` row-major; `rows x cols` for [`Variant::Copy`]).
pub fn run(
    gpu: &Gpu,
    variant: Variant,
    input: &[f32],
    rows: usize,
    cols: usize,
) -> Result<Vec<f32>> {
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(input.len(), f32::NAN)?;
    launch(gpu, variant, &d_in, &mut d_out, rows, cols)?;
    gpu.download(&d_out, variant.kernel_name())
}

/// The transpose to call: [`Variant::TransposeTiledVec4`] when both dimensions are multiples
/// of 4, otherwise [`Variant::TransposeSharedPadded`].
pub fn best_variant(rows: usize, cols: usize) -> Variant {
    if Variant::TransposeTiledVec4.supports(rows, cols) {
        Variant::TransposeTiledVec4
    } else {
        Variant::TransposeSharedPadded
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
        assert_eq!(best_variant(1023, 517), Variant::TransposeSharedPadded);
        assert_eq!(best_variant(4096, 4096), Variant::TransposeTiledVec4);
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
