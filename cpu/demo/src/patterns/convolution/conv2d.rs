//! `demo conv2d`: its definition (arguments and `impl Pattern`), the variants each mask width
//! runs, footprint and run.

use std::path::PathBuf;

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::convolution::{self, Mask2d, Variant2d};
use cpu::lab::memory::fma_stream::{self};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::engine::args::{ArgError, count_in, odd_width};
use crate::engine::harness::{Footprint, SMALL, array, elements};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, kernels_each, variant};
use crate::engine::sweep::{Case, SweepSpec, powers};

/// 2D convolution: basic, __constant__ mask, tiled halo, the vec4 tile (widths up to 9), the
/// register-blocked wide tile (11..31) and, for a separable mask, NVIDIA's two-pass and the
/// fused kernel, timed against the memory and FMA floors; then a PNG (or a generated picture)
/// filtered with a mask.
#[derive(clap::Args)]
pub(crate) struct Conv2d {
    /// Rows of the random image of the timed tables (at least 1).
    #[arg(long, default_value_t = 4096, value_parser = count_in::<1, { u64::MAX }>)]
    pub(super) rows: usize,
    /// Columns of the random image of the timed tables (at least 1).
    #[arg(long, default_value_t = 4096, value_parser = count_in::<1, { u64::MAX }>)]
    pub(super) cols: usize,
    /// Width of the random mask of the timed tables (odd, 1..=31); `--mask` replaces it.
    #[arg(
        long,
        default_value_t = 5,
        conflicts_with = "mask",
        value_parser = odd_width::<{ convolution::MAX_MASK_WIDTH_2D }>
    )]
    pub(super) mask_width: usize,
    /// PNG to filter (read as grayscale); without it, a generated 640 x 480 test picture.
    #[arg(long)]
    pub(super) image: Option<PathBuf>,
    /// The mask: a name (identity, box3, box5, gaussian5, gaussian7, sharpen3, sobel-x,
    /// sobel-y, laplacian3), `gaussian:SIGMA` (SciPy's truncate=3.0: radius floor(3 SIGMA +
    /// 0.5), at most 15), `box:W` (odd W, 1..=31) or `FILE.npy` (a square f32 array of odd
    /// width up to 31). Replaces the random mask of the timed tables; the picture is filtered
    /// with it (without it: sobel-x).
    #[arg(long, value_name = "MASK", value_parser = parse_mask)]
    pub(super) mask: Option<MaskArg>,
    /// Where to write the filtered picture (grayscale PNG; derivative masks as magnitude).
    #[arg(long, value_name = "PNG")]
    pub(super) image_out: Option<PathBuf>,
}

impl Pattern for Conv2d {
    const NAME: &'static str = "conv2d";
    /// `cpu::convolution::conv2d` on 1024^2 .. 16384^2 with a 5 x 5 mask, then dense widths 1,
    /// 3, ..., 31 at 8192^2 (5 once); and on Gaussian masks (separable) of widths 3, ..., 31
    /// at 8192^2, sigma = (w - 1) / 6 so that SciPy's radius floor(3 sigma + 0.5) is
    /// (w - 1) / 2.
    const SWEEPS: &'static [SweepSpec] = &[
        SweepSpec::new(
            "conv2d",
            "cpu::convolution::conv2d",
            "8 bytes per element: 1 read + 1 write",
            |s| {
                let sizes = powers(10, 14, 1).map(|n| s.case(&[n, n], Some(5)));
                let widths = (1..=convolution::MAX_MASK_WIDTH_2D)
                    .step_by(2)
                    .filter(|&w| w != 5)
                    .map(|w| s.case(&[SWEEP_SIDE, SWEEP_SIDE], Some(w)));
                sizes.chain(widths).collect()
            },
            sweep_2d,
        )
        .convolution(5, "by size, 5 x 5 mask"),
        SweepSpec::new(
            "conv2d-separable",
            "cpu::convolution::conv2d (Mask2d::gaussian)",
            "8 bytes per element: 1 read + 1 write",
            separable_width_cases,
            sweep_2d_separable,
        )
        .convolution(5, "Gaussian 5 x 5")
        .fmas_per_output("2 x width (a row pass and a column pass)")
        .widths_only(
            "by Gaussian mask width (separable; sigma = (w - 1) / 6, so radius floor(3 sigma + 0.5) = (w - 1) / 2, SciPy's truncate=3.0)",
        ),
        SweepSpec::new(
            "fma-stream",
            "cpu::lab::memory::fma_stream::FmaStream (the floor of conv2d-separable, measured)",
            "8 bytes per element: 1 read + 1 write",
            separable_width_cases,
            sweep_fma_stream,
        )
        .convolution(5, "width 5")
        .fmas_per_output("2 x width, as conv2d-separable, with no halo, shared memory or barrier")
        .widths_only(
            "by width: each element read once, 2 x width FMAs, written once, nothing else (the traffic and arithmetic of conv2d-separable at that width)",
        ),
    ];

    /// The 2D variants, then the FMA-rate ceiling every run measures for its floors line.
    fn variants() -> Vec<VariantInfo> {
        let mut variants = kernels_each(&Variant2d::ALL, |v| {
            let mut names = Vec::new();
            for w in variant_widths(v).step_by(2) {
                for k in v.entries(w) {
                    if !names.contains(&k) {
                        names.push(k);
                    }
                }
            }
            names
        });
        variants.push(variant(
            "FMA-rate ceiling (the floors' measured FP32 rate)",
            cpu::lab::memory::fma_rate::KERNELS,
        ));
        variants.push(variant(
            "FMA stream (the fused separable kernels' floor, measured)",
            fma_stream::KERNELS,
        ));
        variants
    }

    /// 1023 columns: the scalar edge path (rows not a multiple of 4 floats); 300 columns:
    /// `float4` rows whose inner tiles take the interior paths. Every odd width (the vec4,
    /// wide and fused kernels are one entry per width; each run's separable table runs the
    /// fused and two-pass kernels at its width), then a Gaussian of width 13 on the scalar
    /// path and a 31 x 31 box on the `float4` path as `--mask`.
    fn sanitize() -> Vec<String> {
        let mut cases = mask_width_cases(
            "--rows 517 --cols 1023",
            5,
            "--rows 203 --cols 300",
            convolution::MAX_MASK_WIDTH_2D,
        );
        cases.push("--rows 517 --cols 1023 --mask gaussian:2".into());
        cases.push("--rows 203 --cols 300 --mask box:31".into());
        cases
    }

    /// The image's element count (an argument error if it overflows), then the files: the
    /// `--mask` `.npy` and the `--image` PNG's header (exit status 1 if unreadable).
    fn check(&self) -> Result<()> {
        elements("conv2d", self.rows, self.cols).map_err(|e| ArgError(e.to_string()))?;
        if let Some(mask) = &self.mask {
            mask.check()?;
        }
        picture::picture_dims(self.image.as_deref()).map(drop)
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let picture = picture::picture_dims(self.image.as_deref())?;
        footprint_2d(self.rows, self.cols, picture).map(Some)
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_2d(gpu, opts, out, self)
    }
}

/// The cases of the separable sweeps (`conv2d-separable`, `fma-stream`): every odd width from
/// 3 to 31 at [`SWEEP_SIDE`]^2.
pub(super) fn separable_width_cases(s: &SweepSpec) -> Vec<Case> {
    const _: () = assert!(fma_stream::MAX_WIDTH == convolution::MAX_MASK_WIDTH_2D);
    (3..=convolution::MAX_MASK_WIDTH_2D)
        .step_by(2)
        .map(|w| s.case(&[SWEEP_SIDE, SWEEP_SIDE], Some(w)))
        .collect()
}

/// Side of the images the 2D sweeps measure mask widths on.
pub(super) const SWEEP_SIDE: usize = 8192;

/// The widest mask the vec4 tile takes; wider dense masks take the wide tile.
pub(super) const VEC4_MAX_WIDTH: usize = 9;

/// The odd mask widths `variant` runs at (`demo conv2d` shows it at these, `demo list` its
/// kernels): the vec4 tile up to [`VEC4_MAX_WIDTH`], the wide tile beyond it, the separable
/// kernels from 3 (a 1 x 1 mask is a scale), the seed's kernels at every width.
pub(super) fn variant_widths(variant: Variant2d) -> std::ops::RangeInclusive<usize> {
    let max = convolution::MAX_MASK_WIDTH_2D;
    match variant {
        Variant2d::Convolution2dTiledVec4 => 1..=VEC4_MAX_WIDTH,
        Variant2d::Convolution2dWide => VEC4_MAX_WIDTH + 2..=max,
        Variant2d::Convolution2dSeparableTwoPass | Variant2d::Convolution2dSeparableFused => {
            3..=max
        }
        _ => 1..=max,
    }
}

/// Whether `variant` needs a separable mask (it takes the mask's row and column factors).
pub(super) fn needs_separable(variant: Variant2d) -> bool {
    matches!(
        variant,
        Variant2d::Convolution2dSeparableTwoPass | Variant2d::Convolution2dSeparableFused
    )
}

/// Whether `variant` runs on a `w x w` mask that is separable if `separable`.
pub(super) fn runs_on(variant: Variant2d, w: usize, separable: bool) -> bool {
    variant_widths(variant).contains(&w) && (separable || !needs_separable(variant))
}

/// The dense variant [`convolution::conv2d`] runs for a dense `w x w` mask on an aligned input
/// (the separable table's comparison).
pub(super) fn dense_variant(w: usize) -> Variant2d {
    if w <= VEC4_MAX_WIDTH {
        Variant2d::Convolution2dTiledVec4
    } else {
        Variant2d::Convolution2dWide
    }
}

/// Peak memory of `demo conv2d --rows R --cols C` (n = R x C) and its picture of p pixels:
/// on the device the larger of the table's input and output (8n) and the picture's (8p), and
/// the mask; on the host the table's input, f64 reference and scale and one output (24n), and
/// the picture's decoded file (at most 16 bytes a pixel), grayscale, output and f64 reference
/// and scale (40p).
pub fn footprint_2d(rows: usize, cols: usize, picture: (usize, usize)) -> Result<Footprint> {
    let n = elements("conv2d", rows, cols)?;
    let p = elements("conv2d picture", picture.0, picture.1)?;
    // The image stays on the device while the two-pass runs (its output and temporary) and
    // while `fma-stream` runs (its own input and output): 3 images at most.
    let device = array::<f32>(3, n)
        .zip(array::<f32>(2, p))
        .map(|(a, b)| a.max(b));
    Ok(Footprint::new(format!(
        "conv2d of {rows} x {cols} elements and a {} x {} picture",
        picture.1, picture.0
    ))
    .device_bytes(device)
    .device_bytes(SMALL)
    .host::<f32>(2, n)
    .host::<f64>(2, n)
    .host::<[u8; 16]>(1, p)
    .host::<f32>(2, p)
    .host::<f64>(2, p)
    .with_ceiling())
}

/// `demo conv2d`: the variants table on a random `rows x cols` image with `--mask` (else a
/// random `mask_width` mask), the separable table (that mask if separable, else a Gaussian of
/// its width), then a real (or generated) picture filtered with `--mask`.
pub(super) fn run_2d(gpu: &Gpu, opts: &Options, out: &mut Out, args: &Conv2d) -> Result<()> {
    let (rows, cols) = (args.rows, args.cols);
    let n = elements("conv2d", rows, cols)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let (mask, about) = match &args.mask {
        Some(m) => (m.device(gpu)?, m.to_string()),
        None => {
            let w = args.mask_width;
            convolution::validate_mask_width(2, w)?;
            let values: Vec<f32> = (0..w * w).map(|_| rng.random_range(-1.0..1.0)).collect();
            (Mask2d::new(gpu, &values, w)?, "random".to_string())
        }
    };
    let w = mask.width();
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let input: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    out.dump("input", &[rows as u64, cols as u64], &input)?;
    out.dump("mask", &[w as u64, w as u64], mask.values())?;
    let separable = is_separable(&mask);
    let fp32 = floor_line(gpu, out, &ceiling, n, w, 2, true)?;
    let d_in = gpu.upload(&input)?;
    let bench = Bench2d {
        gpu,
        opts,
        ceiling,
        fp32,
        rows,
        cols,
        input,
        d_in,
    };
    let reference = reference_2d_parallel(&bench.input, (rows, cols), CheckMask::of(&mask));
    let mut failures = variants_table(&bench, out, &mask, &about, &reference)?;
    drop(reference);
    let gaussian;
    let (sep, sep_about) = if separable {
        (&mask, about)
    } else {
        let ws = w.max(3);
        let sigma = gaussian_sigma(ws);
        gaussian = Mask2d::gaussian(gpu, sigma, GAUSSIAN_TRUNCATE)?;
        (
            &gaussian,
            format!("gaussian:{sigma} (the {ws} x {ws} Gaussian, sigma = (w - 1) / 6)"),
        )
    };
    // The separable table's mask, as its 2D values (the random table's is `mask`).
    out.dump("mask_separable", &[sep.width() as u64; 2], sep.values())?;
    failures += separable_table(&bench, out, sep, &sep_about)?;
    drop(bench);
    failures += picture::filter_picture(gpu, opts, out, args)? as usize;
    if failures > 0 {
        bail!("{failures} conv2d run(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The `truncate` of the demo's Gaussians (`gaussian:SIGMA`, the separable table and sweep):
/// 3 standard deviations, as NVIDIA's `convolutionSeparable` sample and OpenCV's
/// `getGaussianKernel` size them (SciPy's default, [`convolution::SCIPY_TRUNCATE`], is 4).
pub const GAUSSIAN_TRUNCATE: f32 = 3.0;

/// Whether `mask` takes the separable path (a rank-1 mask of width 3 or more).
pub(super) fn is_separable(mask: &Mask2d) -> bool {
    mask.factors().is_some() && mask.width() >= 3
}
