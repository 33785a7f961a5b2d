//! 2D convolution of row-major images: [`conv2d`] (the one to call), [`conv2d_with`] (a
//! chosen seed version), [`conv2d_values`], the host one-shot [`run_2d`], then the kernels as
//! [`Variant2d`] with their launch configurations and the seed's access ratios.

use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu::convolution::{self as k, basic, separable};

use super::Mask2d;
use crate::context::Gpu;
use crate::error::expect_len;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch::{self, VEC4_ALIGNMENT};

pub use super::variant2d::Variant2d;

/// A 2D kernel that reads the mask from [`k::C_MASK_2D`]: `(input: *const f32,
/// output: *mut f32, mask_width: usize, rows: usize, cols: usize)`. The basic kernel takes a
/// pointer to the mask as well ([`basic::convolution_2d_basic`]).
pub type ConstantMaskKernel2d = Kernel<(*const f32, *mut f32, usize, usize, usize)>;

/// The temporary image of [`Variant2d::Convolution2dSeparableTwoPass`] (the row pass's
/// output), kept per handle (`Gpu::with_workspace`) and grown to the largest image it has
/// served; one launch at a time uses it (the handle's stream orders them).
struct SeparableWorkspace {
    temp: Option<cudarc::driver::CudaSlice<f32>>,
}

/// The smallest image, in elements (2^22, 2048 x 2048), on which [`conv2d`] takes the fused
/// separable kernel for a separable mask up to 9 x 9. There the dense vec4 tile is
/// memory-bound too, and on small images the fused kernel's walk down short segments (a
/// prologue of `2r` rows, three barriers a chunk) costs more than the multiply-adds it saves:
/// H100, Sobel-x on 640 x 480, 0.0058-0.0077 ms against the vec4 tile's 0.0052 ms; from
/// 4096 x 4096 up the fused kernel is ahead (5 x 5 Gaussian: 0.054 ms against 0.058 ms).
pub const SEPARABLE_NARROW_MIN_ELEMENTS: usize = 1 << 22;

/// Queues `output = input * mask` on `gpu`'s stream for row-major `rows x cols` images,
/// `P[y][x] = sum_{jy, jx} N[y + jy - r][x + jx - r] M[jy][jx]` (ghosts read as 0), with the
/// fastest variant that is correct for the buffers given. Nothing synchronises.
///
/// `input` and `output` are any device memory of the handle's context holding `rows * cols`
/// floats: a `CudaSlice<f32>` or a view of one.
///
/// Variant ([`Variant2d::choose`]): a separable mask ([`Mask2d::factors`]) of width 3 or more
/// takes [`Variant2d::Convolution2dSeparableFused`] (`2w` multiply-adds per output; up to
/// 9 x 9 only on images of at least [`SEPARABLE_NARROW_MIN_ELEMENTS`]); a dense
/// mask up to 9 x 9 [`Variant2d::Convolution2dTiledVec4`], a wider one
/// [`Variant2d::Convolution2dWide`]. All three load image rows as `float4` only when
/// `cols % 4 == 0` (and store `float4`s only where `output` is 16-byte aligned); when
/// `cols % 4 == 0` and `input` does not start on a 16-byte boundary,
/// [`Variant2d::Convolution2dBasic`], the fastest of the variants that take any alignment,
/// runs instead.
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
/// As [`conv2d`]; also [`Error::Misaligned`] if `variant` needs an aligned input
/// ([`Variant2d::needs_aligned_input`]), `cols % 4 == 0` and `input` does not start on a
/// 16-byte boundary (checked only for a non-empty image); [`Error::MaskWidth`] if `variant`
/// has no kernel for the mask's width ([`Variant2d::supports_width`]);
/// [`Error::Unsupported`] (`what: "mask"`) if `variant` is separable and the mask is not
/// ([`Variant2d::needs_separable_mask`]); [`Error::OutOfMemory`] if the two-pass variant
/// cannot allocate its temporary image (before any launch).
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
/// [`MAX_MASK_WIDTH_2D`](super::MAX_MASK_WIDTH_2D) (both also for an empty image); as [`conv2d`].
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
    run_2d_mask(gpu, variant, input, rows, cols, &mask)
}

/// As [`run_2d`], with a [`Mask2d`] made by the caller (a separable one from
/// [`Mask2d::separable`], say). Synchronises.
///
/// # Errors
/// As [`conv2d_with`].
pub fn run_2d_mask(
    gpu: &Gpu,
    variant: Variant2d,
    input: &[f32],
    rows: usize,
    cols: usize,
    mask: &Mask2d,
) -> Result<Vec<f32>> {
    let n = crate::error::elements(rows, cols)?;
    expect_len("input", n, input.len())?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(n, f32::NAN)?;
    conv2d_with(gpu, variant, &d_in, mask, &mut d_out, rows, cols)?;
    gpu.download(&d_out, variant.entry(mask.width()))
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
            variant.check_mask(mask)?;
            variant.check_alignment(cols, input_ptr)?;
            variant
        }
        None => Variant2d::choose(
            mask,
            rows,
            cols,
            launch::is_aligned(input_ptr, VEC4_ALIGNMENT),
        ),
    };
    let (cfg, segment) = variant.plan(gpu, rows, cols, width)?;
    match variant {
        Variant2d::Convolution2dBasic => {
            // SAFETY: the arguments match `convolution_2d_basic(input: *const f32,
            // mask: *const f32, output: *mut f32, mask_width: usize, rows: usize,
            // cols: usize)`. `input` and `output` are device views of `rows * cols` floats each
            // (checked, no overflow) in `gpu`'s context (checked); they do not overlap, since
            // `output` is borrowed mutably while `input` is borrowed. The mask holds
            // `mask_width^2` floats, `mask_width` odd and at most MAX_MASK_WIDTH_2D (validated
            // by `Mask2d::new`), in `gpu`'s context (checked). Blocks are 32 x 8 and the grid
            // covers the image (`launch_config`).
            unsafe {
                gpu.launch_unchecked(
                    basic::convolution_2d_basic,
                    cfg,
                    (input, mask.device(), output, width, rows, cols),
                )
            }?;
        }
        Variant2d::Convolution2dSeparableFused => {
            let kernel = separable::CONVOLUTION_2D_SEPARABLE_FUSED_BY_RADIUS[width / 2]
                .expect("widths from 3 (check_mask, choose)");
            let mut constants = gpu.constant_memory()?;
            mask.write_factors(&mut constants)?;
            // SAFETY: the arguments match `convolution_2d_separable_fused_w*(input: *const
            // f32, output: *mut f32, mask_width: usize, rows: usize, cols: usize, segment:
            // usize)`, the entry compiled for this width (odd, 3 to 31: `check_mask`).
            // `input` and `output` are device views of `rows * cols` floats each (checked) in
            // `gpu`'s context, not overlapping (`output` is borrowed mutably). `input` starts on
            // a 16-byte boundary whenever `cols % 4 == 0` (`check_alignment`, or `choose`
            // picked it only then); both sides are at most SEPARABLE_MAX_SIDE and `segment` a
            // multiple of 32 up to 1024, the one `plan` sized the grid with; blocks of 256 and a
            // grid of `ceil(cols / 64)` x `ceil(rows / segment)`. C_MASK_ROW / C_MASK_COL hold
            // the mask's factors, written under `constants`, held until the launch is queued.
            unsafe {
                gpu.launch_unchecked(kernel, cfg, (input, output, width, rows, cols, segment))
            }?;
            drop(constants);
        }
        Variant2d::Convolution2dSeparableTwoPass => {
            let n = rows * cols;
            gpu.with_workspace(
                |_| Ok(SeparableWorkspace { temp: None }),
                |ws| {
                    if ws.temp.as_ref().is_none_or(|t| t.len() < n) {
                        // Freed first, so that the larger one can take its place.
                        ws.temp = None;
                        ws.temp = Some(gpu.zeros::<f32>(n)?);
                    }
                    let temp = ws.temp.as_mut().expect("allocated above");
                    let mut temp = temp.slice_mut(..n);
                    let cols_cfg = two_pass_cols_config(rows, cols)?;
                    let mut constants = gpu.constant_memory()?;
                    mask.write_factors(&mut constants)?;
                    // SAFETY: the arguments match `convolution_2d_separable_rows` and
                    // `convolution_2d_separable_cols` (`(input: *const f32, output: *mut f32,
                    // mask_width: usize, rows: usize, cols: usize)`). `input`, `temp` and
                    // `output` are device views of `rows * cols` floats in `gpu`'s context;
                    // `temp` is the workspace's own allocation, so it overlaps neither, and
                    // `output` is borrowed mutably while `input` is borrowed. `mask_width` is
                    // odd and at most 31 (`Mask2d`). The blocks are the kernels' (16 x 4 and
                    // 16 x 8) and the grids cover the image (`launch_config`,
                    // `two_pass_cols_config`). C_MASK_ROW / C_MASK_COL hold the factors,
                    // written under `constants`, held until both launches are queued; the
                    // columns kernel follows the rows kernel on the same stream.
                    unsafe {
                        gpu.launch_unchecked(
                            separable::convolution_2d_separable_rows,
                            cfg,
                            (input, &mut temp, width, rows, cols),
                        )
                    }?;
                    // SAFETY: as above.
                    unsafe {
                        gpu.launch_unchecked(
                            separable::convolution_2d_separable_cols,
                            cols_cfg,
                            (&temp, &mut *output, width, rows, cols),
                        )
                    }?;
                    drop(constants);
                    Ok(())
                },
            )?;
        }
        _ => {
            let kernel = variant
                .constant_mask_kernel(width)
                .expect("every other variant reads C_MASK_2D");
            // Held from the mask's write to the launch: orders this launch after every earlier
            // user of the module's constant memory, on any stream, and the next user after it.
            let mut constants = gpu.constant_memory()?;
            mask.write_constant(&mut constants)?;
            // SAFETY: the arguments match `(input: *const f32, output: *mut f32,
            // mask_width: usize, rows: usize, cols: usize)`, the signature of every kernel that
            // reads the constant mask (`ConstantMaskKernel2d`). `input` and `output` are device
            // views of `rows * cols` floats each (checked, no overflow) in `gpu`'s context
            // (checked); they do not overlap, since `output` is borrowed mutably while `input`
            // is borrowed. For the vec4 and wide entries `input` starts on a 16-byte boundary
            // whenever `cols % 4 == 0`, the only case in which they load `float4`s (checked by
            // `check_alignment`, or `choose` chose them only then); they store `float4`s only
            // where `output` is 16-byte aligned (their own check), and the vec4 kernels' sides
            // are at most VEC4_MAX_SIDE_2D (`launch_config`). C_MASK_2D holds the mask's
            // `mask_width^2` values, `mask_width` odd and at most MAX_MASK_WIDTH_2D (validated
            // by `Mask2d::new`) and one the variant has an entry for (`check_mask`, `choose`),
            // written under `constants`, which keeps every other writer out until this launch
            // is queued. The vec4 and wide entries are the ones compiled for this width; the
            // blocks are the variant's (32 x 8, or 256 for the wide kernels) and the grids
            // cover the image (`launch_config`).
            unsafe { gpu.launch_unchecked(kernel, cfg, (input, output, width, rows, cols)) }?;
            drop(constants);
        }
    }
    Ok(cfg)
}

/// The segment for a fused separable launch: of the multiples of 32 rows from 64 to 1024, the
/// one with the least modelled time `ceil(blocks / wave) x (segment + 32)`, the longest of
/// equals: the waves of `wave` resident blocks (SMs x blocks per SM) the
/// `ceil(cols / 64) x ceil(rows / segment)` blocks take, times the rows each block walks (its
/// segment and about one chunk of halo rows). A last wave that is mostly empty costs a whole
/// one: 8192 x 8192 at 4 blocks per SM on 132 SMs takes 1024-row segments (1024 blocks, 1.9
/// waves) rather than 512 (2048 blocks, 3.9 waves: 4 waves of 544 rows against 2 of 1056), and
/// a longer segment repeats the row pass of its `2R` halo rows less often. Small images get
/// short segments (2048 x 2048: 128 rows, one wave).
pub(super) fn choose_segment(rows: usize, cols: usize, wave: u32) -> usize {
    let strips = cols.div_ceil(separable::SEPARABLE_TILE_X).max(1);
    let wave = wave.max(1) as usize;
    let chunk = separable::SEPARABLE_CHUNK_Y;
    let (mut best, mut best_cost) = (separable::SEPARABLE_MAX_SEGMENT, usize::MAX);
    let mut segment = separable::SEPARABLE_MAX_SEGMENT;
    while segment >= 2 * chunk {
        // At most 2^25 strips x 2^25 segments (sides up to 2^31): no overflow in 64 bits.
        let blocks = strips.saturating_mul(rows.div_ceil(segment).max(1));
        let cost = blocks.div_ceil(wave).saturating_mul(segment + chunk);
        if cost < best_cost {
            (best, best_cost) = (segment, cost);
        }
        segment -= chunk;
    }
    best
}

/// The launch of [`separable::convolution_2d_separable_cols`] for a `rows x cols` image.
fn two_pass_cols_config(rows: usize, cols: usize) -> Result<LaunchConfig> {
    launch::covering_2d(
        separable::convolution_2d_separable_cols.name(),
        (cols, rows),
        (
            separable::COLUMNS_BLOCKDIM_X as u64,
            (separable::COLUMNS_RESULT_STEPS * separable::COLUMNS_BLOCKDIM_Y as usize) as u64,
        ),
        (
            separable::COLUMNS_BLOCKDIM_X,
            separable::COLUMNS_BLOCKDIM_Y,
            1,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convolution::variant2d::check_vec4_sides;
    use gpu::convolution::{vec4_2d, wide};

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
            let aligned_kernels = [
                vec4,
                Variant2d::Convolution2dWide,
                Variant2d::Convolution2dSeparableFused,
            ];
            assert_eq!(v.needs_aligned_input(64), aligned_kernels.contains(&v));
            assert!(!v.needs_aligned_input(65));
            if !aligned_kernels.contains(&v) {
                assert!(v.check_alignment(64, 0x1004).is_ok(), "{v:?}");
            } else {
                assert!(v.check_alignment(64, 0x1004).is_err(), "{v:?}");
            }
        }
    }

    #[test]
    fn widths_and_entries() {
        let widths = |v: Variant2d| v.widths().collect::<Vec<_>>();
        assert_eq!(widths(Variant2d::Convolution2dTiledVec4), [1, 3, 5, 7, 9]);
        assert_eq!(widths(Variant2d::Convolution2dWide).len(), 11);
        assert_eq!(widths(Variant2d::Convolution2dWide)[0], 11);
        assert_eq!(widths(Variant2d::Convolution2dSeparableFused).len(), 15);
        assert_eq!(widths(Variant2d::Convolution2dBasic).len(), 16);
        for v in Variant2d::ALL {
            for w in v.widths() {
                assert!(v.supports_width(w));
                let entries = v.entries(w);
                assert_eq!(entries[0], v.entry(w));
                assert!(entries.iter().all(|e| e.starts_with("convolution_2d_")));
            }
            assert!(!v.supports_width(33) && !v.supports_width(4));
        }
        assert_eq!(
            Variant2d::Convolution2dWide.entry(31),
            wide::convolution_2d_wide_w31.name()
        );
        assert_eq!(
            Variant2d::Convolution2dSeparableFused.entry(3),
            separable::convolution_2d_separable_fused_w3.name()
        );
        assert_eq!(
            Variant2d::Convolution2dSeparableTwoPass.entries(31),
            [
                separable::convolution_2d_separable_rows.name(),
                separable::convolution_2d_separable_cols.name()
            ]
        );
        assert_eq!(Variant2d::Convolution2dWide.fmas_per_output(31), 961);
        assert_eq!(
            Variant2d::Convolution2dSeparableFused.fmas_per_output(31),
            62
        );
    }

    #[test]
    fn fused_segments() {
        // 8192 x 8192 on 132 SMs: 128 strips; at 4 blocks per SM (a wave of 528) 1024-row
        // segments (1024 blocks, 1.9 waves), at 3 (396) 928 rows (1152 blocks, 2.9 waves).
        assert_eq!(choose_segment(8192, 8192, 528), 1024);
        assert_eq!(choose_segment(8192, 8192, 396), 928);
        // 2048 x 2048: 32 strips, 128-row segments (512 blocks, one wave of 528).
        assert_eq!(choose_segment(2048, 2048, 528), 128);
        assert_eq!(choose_segment(1, 1, 528), 64);
        assert_eq!(choose_segment(1 << 31, 1 << 31, 1), 1024);
        for (rows, cols) in [(8192, 8192), (1000, 999), (1, 1), (100_000, 3)] {
            let segment = choose_segment(rows, cols, 396);
            assert!(segment.is_multiple_of(32) && (64..=1024).contains(&segment));
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
