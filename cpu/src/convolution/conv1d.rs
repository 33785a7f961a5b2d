//! 1D convolution: [`conv1d`] (the one to call), [`conv1d_with`] (a chosen seed version),
//! [`conv1d_values`], the host one-shot [`run_1d`], then the kernels as [`Variant1d`] with
//! their launch configurations and the seed's access ratios.

use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu::convolution::{self as k, basic, tiled, vec4_1d};

use super::{MAX_MASK_WIDTH, Mask1d};
use crate::context::Gpu;
use crate::error::Result;
use crate::error::expect_len;
use crate::kernel::Kernel;
use crate::launch::{self, VEC4_ALIGNMENT};

/// A 1D kernel that reads the mask from [`k::C_MASK_1D`]: `(input: *const f32,
/// output: *mut f32, mask_width: usize, n: usize)`. The basic kernel takes a pointer to the
/// mask as well ([`basic::convolution_1d_basic`]).
pub type ConstantMaskKernel1d = Kernel<(*const f32, *mut f32, usize, usize)>;

/// Queues `output = input * mask` on `gpu`'s stream, `P[i] = sum_j N[i + j - r] M[j]` over
/// `n = input.len()` floats (ghosts read as 0), with the fastest variant that is correct for
/// the buffers given. Nothing synchronises.
///
/// `input` and `output` are any device memory of the handle's context: a `CudaSlice<f32>`, or a
/// view of one (`buf.slice(a..b)`, `buf.slice_mut(a..b)`).
///
/// Variant: [`Variant1d::Convolution1dTiledVec4`] when `input` and `output` both start on a
/// 16-byte boundary (its `float4` loads and stores need it; every allocation does, a view of
/// one does when it starts at a multiple of 4 elements), any `n`; otherwise
/// [`Variant1d::Convolution1dBasic`], the fastest of the variants that take any alignment
/// (scalar accesses; the mask from global memory, so no constant-memory write either). See
/// [`Variant1d::fastest`].
///
/// Empty input: nothing is launched.
///
/// # Errors
/// [`Error::WrongContext`](crate::Error::WrongContext) if a buffer or the mask lives in another
/// context than `gpu`'s; [`Error::LengthMismatch`](crate::Error::LengthMismatch)
/// (`what: "output"`) if `output.len() != input.len()`; as [`Variant1d::launch_config`];
/// [`Error::Driver`](crate::Error::Driver) if the launch fails.
pub fn conv1d(
    gpu: &Gpu,
    input: &impl DevicePtr<f32>,
    mask: &Mask1d,
    output: &mut impl DevicePtrMut<f32>,
) -> Result<()> {
    queue(gpu, None, input, mask, output).map(drop)
}

/// As [`conv1d`], with the variant chosen by the caller (the seed's versions, for study and
/// measurement); returns the launch configuration it used.
///
/// # Errors
/// As [`conv1d`]; also [`Error::Misaligned`](crate::Error::Misaligned) if `variant` is
/// [`Variant1d::Convolution1dTiledVec4`] and `input` or `output` does not start on a 16-byte
/// boundary (checked only for a non-empty input).
pub fn conv1d_with(
    gpu: &Gpu,
    variant: Variant1d,
    input: &impl DevicePtr<f32>,
    mask: &Mask1d,
    output: &mut impl DevicePtrMut<f32>,
) -> Result<LaunchConfig> {
    queue(gpu, Some(variant), input, mask, output)
}

/// As [`conv1d`], with the mask given as values: validates them and builds a temporary
/// [`Mask1d`] (an upload of `mask.len()` floats and a constant-memory write per call; make a
/// [`Mask1d`] once to launch many times).
///
/// # Errors
/// [`Error::MaskWidth`](crate::Error::MaskWidth) if the width is even, 0 or over
/// [`MAX_MASK_WIDTH`] (also for an empty input); as [`conv1d`].
pub fn conv1d_values(
    gpu: &Gpu,
    input: &impl DevicePtr<f32>,
    mask: &[f32],
    output: &mut impl DevicePtrMut<f32>,
) -> Result<()> {
    let mask = Mask1d::new(gpu, mask)?;
    conv1d(gpu, input, &mask, output)
}

/// Validates, copies `input` and `mask` to the device, runs the 1D `variant` into an output
/// poisoned with NaN, and returns the result. Synchronises (it returns host data).
///
/// # Errors
/// As [`Mask1d::new`] and [`conv1d_with`].
pub fn run_1d(gpu: &Gpu, variant: Variant1d, input: &[f32], mask: &[f32]) -> Result<Vec<f32>> {
    let mask = Mask1d::new(gpu, mask)?;
    if input.is_empty() {
        return Ok(Vec::new());
    }
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(input.len(), f32::NAN)?;
    conv1d_with(gpu, variant, &d_in, &mask, &mut d_out)?;
    gpu.download(&d_out, variant.entry(mask.width()))
}

/// The launcher behind [`conv1d`] (`chosen` is `None`) and [`conv1d_with`].
fn queue(
    gpu: &Gpu,
    chosen: Option<Variant1d>,
    input: &impl DevicePtr<f32>,
    mask: &Mask1d,
    output: &mut impl DevicePtrMut<f32>,
) -> Result<LaunchConfig> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("output", output)?;
    gpu.check_buffer("mask", mask.device())?;
    let n = input.len();
    expect_len("output", n, output.len())?;
    if n == 0 {
        return Ok(launch::linear(0, k::BLOCK_1D, 0));
    }
    let width = mask.width();
    // Each buffer's address is taken once, for the checks and the launch.
    let (input, output) = (gpu.bind(input), gpu.bind_mut(output));
    let (input_ptr, output_ptr) = (input.address(), output.address());
    let variant = match chosen {
        Some(variant) => {
            variant.check_alignment(input_ptr, output_ptr)?;
            variant
        }
        None => Variant1d::fastest(
            launch::is_aligned(input_ptr, VEC4_ALIGNMENT)
                && launch::is_aligned(output_ptr, VEC4_ALIGNMENT),
        ),
    };
    let cfg = variant.launch_config(gpu, n, width)?;
    match variant.constant_mask_kernel(width) {
        None => {
            // SAFETY: the arguments match `convolution_1d_basic(input: *const f32,
            // mask: *const f32, output: *mut f32, mask_width: usize, n: usize)`. `input` and
            // `output` are device views of `n` floats each (lengths checked) in `gpu`'s context
            // (checked); they do not overlap, since `output` is borrowed mutably while `input`
            // is borrowed. The mask holds `mask_width` floats, `mask_width` odd and at most
            // MAX_MASK_WIDTH (validated by `Mask1d::new`), in `gpu`'s context (checked). The
            // grid covers `n` with blocks of BLOCK_1D (`launch_config`).
            unsafe {
                gpu.launch_unchecked(
                    basic::convolution_1d_basic,
                    cfg,
                    (input, mask.device(), output, width, n),
                )
            }?;
        }
        Some(kernel) => {
            // Held from the mask's write to the launch: orders this launch after every earlier
            // user of the module's constant memory, on any stream, and the next user after it.
            let mut constants = gpu.constant_memory()?;
            mask.write_constant(&mut constants)?;
            // SAFETY: the arguments match `(input: *const f32, output: *mut f32,
            // mask_width: usize, n: usize)`, the signature of every kernel that reads the
            // constant mask (`ConstantMaskKernel1d`). `input` and `output` are device views of
            // `n` floats each (lengths checked) in `gpu`'s context (checked); they do not
            // overlap, since `output` is borrowed mutably while `input` is borrowed. For the
            // vec4 entry both start on a 16-byte boundary (checked by `check_alignment`, or
            // `fastest` chose it only then). C_MASK_1D holds the mask's `mask_width` values,
            // `mask_width` odd and at most MAX_MASK_WIDTH (validated by `Mask1d::new`), written
            // under `constants`, which keeps every other writer out until this launch is
            // queued and orders their later writes after it. The vec4 entry is the one
            // compiled for this width; the block is BLOCK_1D, as every 1D kernel needs, and the
            // seed kernels' grid covers `n` (`launch_config`).
            unsafe { gpu.launch_unchecked(kernel, cfg, (input, output, width, n)) }?;
            drop(constants);
        }
    }
    Ok(cfg)
}

/// The 1D kernels, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant1d {
    /// Seed 1.2: one output per thread, mask in global memory. Any alignment.
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-basic"))]
    Convolution1dBasic,
    /// Seed 2.1.4: mask in `__constant__` memory. Any alignment.
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-constant-mask"))]
    Convolution1dConstantMask,
    /// Seed 3.1: tile plus halo cells in shared memory, ghosts as 0. Any alignment.
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-tiled-halo"))]
    Convolution1dTiledHalo,
    /// Seed 3.3: internal cells in shared memory, halo cells from global memory (L2). Any
    /// alignment.
    #[cfg_attr(feature = "clap", value(name = "convolution-1d-tiled-cached-halo"))]
    Convolution1dTiledCachedHalo,
    /// The one [`conv1d`] calls: 4096-output tiles, 16-byte global and shared accesses, the
    /// next tile prefetched, 16 outputs per thread; one kernel per mask width. Any `n`; needs
    /// `input` and `output` 16-byte aligned.
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

    /// The variant [`conv1d`] runs: [`Variant1d::Convolution1dTiledVec4`] if `aligned` (input
    /// and output both start on a 16-byte boundary), else [`Variant1d::Convolution1dBasic`],
    /// the fastest of the others (H100, `docs/patterns/convolution.md`: 46% of memcpy against
    /// 40%, 32% and 26% for the constant-mask and tiled seed kernels).
    pub fn fastest(aligned: bool) -> Variant1d {
        if aligned {
            Variant1d::Convolution1dTiledVec4
        } else {
            Variant1d::Convolution1dBasic
        }
    }

    /// Whether the variant needs `input` and `output` to start on a 16-byte boundary: only
    /// [`Variant1d::Convolution1dTiledVec4`], whose interior and halo loads are `ld.global.v4`
    /// at multiples of 4 elements from `input`, and whose output groups are `st.global.v4` at
    /// multiples of 4 elements from `output` (`n` itself is free: the ragged end is loaded and
    /// stored element by element).
    pub fn needs_alignment(self) -> bool {
        self == Variant1d::Convolution1dTiledVec4
    }

    /// Checks the variant's alignment precondition for buffers starting at the device
    /// addresses `input` and `output`.
    ///
    /// # Errors
    /// [`Error::Misaligned`](crate::Error::Misaligned) naming the first buffer that is not
    /// 16-byte aligned, if [`Variant1d::needs_alignment`].
    pub fn check_alignment(self, input: u64, output: u64) -> Result<()> {
        if self.needs_alignment() {
            let kernel = self.kernel_name();
            launch::check_aligned(kernel, "input", input, VEC4_ALIGNMENT)?;
            launch::check_aligned(kernel, "output", output, VEC4_ALIGNMENT)?;
        }
        Ok(())
    }

    /// Whether the kernel reads the mask from `__constant__` memory ([`k::C_MASK_1D`]): all but
    /// [`Variant1d::Convolution1dBasic`], which takes a pointer to the global copy.
    pub fn reads_constant_mask(self) -> bool {
        self != Variant1d::Convolution1dBasic
    }

    /// The kernel's name: its `.entry` in the PTX, or for [`Variant1d::Convolution1dTiledVec4`]
    /// the family name (see [`Variant1d::entry`]).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant1d::Convolution1dTiledVec4 => k::CONVOLUTION_1D_TILED_VEC4,
            // Any width: only the vec4 family has one entry per width.
            other => other.entry(1),
        }
    }

    /// The kernel launched for a mask of `mask_width` taps, for the variants that read the
    /// mask from constant memory (all but [`Variant1d::Convolution1dBasic`], which takes a
    /// pointer to it: `None`). The vec4 kernels have one entry per width.
    ///
    /// # Panics
    /// If `mask_width` is even or larger than [`MAX_MASK_WIDTH`] (launchers validate first).
    pub fn constant_mask_kernel(self, mask_width: usize) -> Option<ConstantMaskKernel1d> {
        assert!(mask_width % 2 == 1 && mask_width <= MAX_MASK_WIDTH);
        Some(match self {
            Variant1d::Convolution1dBasic => return None,
            Variant1d::Convolution1dConstantMask => basic::convolution_1d_constant_mask,
            Variant1d::Convolution1dTiledHalo => tiled::convolution_1d_tiled_halo,
            Variant1d::Convolution1dTiledCachedHalo => tiled::convolution_1d_tiled_cached_halo,
            Variant1d::Convolution1dTiledVec4 => {
                vec4_1d::CONVOLUTION_1D_TILED_VEC4_BY_RADIUS[mask_width / 2]
            }
        })
    }

    /// The `.entry` launched for a mask of `mask_width` taps (odd, at most
    /// [`MAX_MASK_WIDTH`]; the vec4 kernels have one entry per width).
    ///
    /// # Panics
    /// If `mask_width` is even or larger than [`MAX_MASK_WIDTH`] (launchers validate first).
    pub fn entry(self, mask_width: usize) -> &'static str {
        match self.constant_mask_kernel(mask_width) {
            Some(kernel) => kernel.name(),
            None => basic::convolution_1d_basic.name(),
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
    /// [`Error::GridTooLarge`](crate::Error::GridTooLarge) if `n` needs more blocks than a grid
    /// holds; [`Error::MaskWidth`](crate::Error::MaskWidth) if `mask_width` is even, 0 or above
    /// [`MAX_MASK_WIDTH`]; [`Error::Driver`](crate::Error::Driver) from the device queries.
    pub fn launch_config(self, gpu: &Gpu, n: usize, mask_width: usize) -> Result<LaunchConfig> {
        super::validate_mask_width(1, mask_width)?;
        let kernel = self.kernel_name();
        let grid = match self {
            Variant1d::Convolution1dTiledVec4 => {
                let tiles = launch::blocks_to_cover(kernel, n, k::VEC4_TILE_1D as u64)?;
                gpu.one_wave(self.entry(mask_width), k::BLOCK_1D, 0)?
                    .min(tiles)
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
    /// `T (2r + 1) / (T + 32)` for the vec4 tile of `T = 16 B` outputs and its 16-cell halos.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn seed_access_ratios() {
        // The seed's formula B (2n + 1) / (B + 2n) for B = 128, n = 5: 1408 / 138 = 10.20 (the
        // seed prints 10.13, i.e. 1408 / 139); for B = 32: 352 / 42 = 8.38 (it prints 8.14).
        let tiled = Variant1d::Convolution1dTiledHalo;
        assert!((tiled.access_ratio(11, 128) - 1408.0 / 138.0).abs() < 1e-12);
        assert!((tiled.access_ratio(11, 32) - 352.0 / 42.0).abs() < 1e-12);
        assert_eq!(Variant1d::Convolution1dBasic.access_ratio(7, 256), 1.0);
    }

    #[test]
    fn entries_cover_every_width() {
        let v = Variant1d::Convolution1dTiledVec4;
        assert_eq!(
            v.constant_mask_kernel(7),
            Some(vec4_1d::convolution_1d_tiled_vec4_w7)
        );
        assert_eq!(
            v.constant_mask_kernel(31),
            Some(vec4_1d::convolution_1d_tiled_vec4_w31)
        );
        assert_eq!(v.entry(1), vec4_1d::convolution_1d_tiled_vec4_w1.name());
        let global_mask = Variant1d::Convolution1dBasic;
        assert_eq!(global_mask.constant_mask_kernel(7), None);
        assert_eq!(global_mask.entry(7), basic::convolution_1d_basic.name());
    }

    #[test]
    fn fallback_on_misaligned_views() {
        assert_eq!(Variant1d::fastest(true), Variant1d::Convolution1dTiledVec4);
        assert_eq!(Variant1d::fastest(false), Variant1d::Convolution1dBasic);
        assert!(!Variant1d::fastest(false).needs_alignment());
        let vec4 = Variant1d::Convolution1dTiledVec4;
        assert!(vec4.check_alignment(0x1000, 0x2010).is_ok());
        assert!(matches!(
            vec4.check_alignment(0x1004, 0x2000),
            Err(Error::Misaligned {
                what: "input",
                address: 0x1004,
                alignment: 16,
                ..
            })
        ));
        assert!(matches!(
            vec4.check_alignment(0x1000, 0x2008),
            Err(Error::Misaligned { what: "output", .. })
        ));
        for v in Variant1d::ALL {
            if v != vec4 {
                assert!(v.check_alignment(0x1004, 0x2008).is_ok(), "{v:?}");
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
    }
}
