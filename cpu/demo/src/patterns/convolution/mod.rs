//! `demo conv1d` and `demo conv2d`.

mod check;
mod masks;
mod picture;
mod sweep;
mod tables;

use check::*;
use masks::*;
use sweep::*;
use tables::*;

use std::path::{Path, PathBuf};

use crate::engine::args::{ArgError, count_in, odd_width};
use crate::engine::harness::{Footprint, Plan, SMALL, Trial, array, elements};
use crate::engine::registry::{Pattern, VariantInfo, kernels_each, variant, widths};
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::sweep::{Case, Sweep, SweepSpec, powers, random_floats};
use crate::engine::timing::{self, Ceiling, Floor, Fp32Throughput};
use anyhow::{Context, Result, bail};
use cpu::Gpu;
use cpu::convolution::{
    self, Comparison, Factors, Mask1d, Mask2d, Reference, Variant1d, Variant2d,
};
use cpu::lab::memory::fma_stream::{self, FmaStream};
use cpu::launch::{VEC4_ALIGNMENT, is_aligned};
use cpu::verify::Mismatch;
use cudarc::driver::CudaSlice;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::variant_name;

/// 1D convolution: the seed's four kernels (basic, __constant__ mask, tiled halo, cached
/// halo) and the vec4 tile, verified and timed.
#[derive(clap::Args)]
pub(crate) struct Conv1d {
    /// Elements (default 2^26: 512 MiB moved per launch).
    #[arg(long, default_value_t = 1 << 26)]
    size: usize,
    /// Mask width (odd, 1..=31).
    #[arg(long, default_value_t = 7, value_parser = odd_width::<{ convolution::MAX_MASK_WIDTH }>)]
    mask_width: usize,
}

impl Pattern for Conv1d {
    const NAME: &'static str = "conv1d";
    /// `cpu::convolution::conv1d` at 2^16 .. 2^28 (x4) elements with mask width 7, then
    /// widths 1, 3, ..., 31 at 2^26 (7 once).
    const SWEEPS: &'static [SweepSpec] = &[SweepSpec::new(
        "conv1d",
        "cpu::convolution::conv1d",
        "8 bytes per element: 1 read + 1 write",
        |s| {
            let sizes = powers(16, 28, 2).map(|n| s.case(&[n], Some(7)));
            let widths = (1..=convolution::MAX_MASK_WIDTH)
                .step_by(2)
                .filter(|&w| w != 7)
                .map(|w| s.case(&[1 << 26], Some(w)));
            sizes.chain(widths).collect()
        },
        sweep_1d,
    )
    .convolution(7, "by size, mask width 7")];

    fn variants() -> Vec<VariantInfo> {
        kernels_each(&Variant1d::ALL, |v| {
            widths(convolution::MAX_MASK_WIDTH, |w| v.entry(w))
        })
    }

    fn sanitize() -> Vec<String> {
        mask_width_cases(
            "--size 100003",
            7,
            "--size 20011",
            convolution::MAX_MASK_WIDTH,
        )
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(footprint_1d(self.size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_1d(gpu, opts, out, self.size, self.mask_width)
    }
}

/// 2D convolution: basic, __constant__ mask, tiled halo, the vec4 tile (widths up to 9), the
/// register-blocked wide tile (11..31) and, for a separable mask, NVIDIA's two-pass and the
/// fused kernel, timed against the memory and FMA floors; then a PNG (or a generated picture)
/// filtered with a mask.
#[derive(clap::Args)]
pub(crate) struct Conv2d {
    /// Rows of the random image of the timed tables (at least 1).
    #[arg(long, default_value_t = 4096, value_parser = count_in::<1, { u64::MAX }>)]
    rows: usize,
    /// Columns of the random image of the timed tables (at least 1).
    #[arg(long, default_value_t = 4096, value_parser = count_in::<1, { u64::MAX }>)]
    cols: usize,
    /// Width of the random mask of the timed tables (odd, 1..=31); `--mask` replaces it.
    #[arg(
        long,
        default_value_t = 5,
        conflicts_with = "mask",
        value_parser = odd_width::<{ convolution::MAX_MASK_WIDTH_2D }>
    )]
    mask_width: usize,
    /// PNG to filter (read as grayscale); without it, a generated 640 x 480 test picture.
    #[arg(long)]
    image: Option<PathBuf>,
    /// The mask: a name (identity, box3, box5, gaussian5, gaussian7, sharpen3, sobel-x,
    /// sobel-y, laplacian3), `gaussian:SIGMA` (SciPy's truncate=3.0: radius floor(3 SIGMA +
    /// 0.5), at most 15), `box:W` (odd W, 1..=31) or `FILE.npy` (a square f32 array of odd
    /// width up to 31). Replaces the random mask of the timed tables; the picture is filtered
    /// with it (without it: sobel-x).
    #[arg(long, value_name = "MASK", value_parser = parse_mask)]
    mask: Option<MaskArg>,
    /// Where to write the filtered picture (grayscale PNG; derivative masks as magnitude).
    #[arg(long, value_name = "PNG")]
    image_out: Option<PathBuf>,
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
fn separable_width_cases(s: &SweepSpec) -> Vec<Case> {
    const _: () = assert!(fma_stream::MAX_WIDTH == convolution::MAX_MASK_WIDTH_2D);
    (3..=convolution::MAX_MASK_WIDTH_2D)
        .step_by(2)
        .map(|w| s.case(&[SWEEP_SIDE, SWEEP_SIDE], Some(w)))
        .collect()
}

/// Side of the images the 2D sweeps measure mask widths on.
const SWEEP_SIDE: usize = 8192;

/// The widest mask the vec4 tile takes; wider dense masks take the wide tile.
const VEC4_MAX_WIDTH: usize = 9;

/// The odd mask widths `variant` runs at (`demo conv2d` shows it at these, `demo list` its
/// kernels): the vec4 tile up to [`VEC4_MAX_WIDTH`], the wide tile beyond it, the separable
/// kernels from 3 (a 1 x 1 mask is a scale), the seed's kernels at every width.
fn variant_widths(variant: Variant2d) -> std::ops::RangeInclusive<usize> {
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
fn needs_separable(variant: Variant2d) -> bool {
    matches!(
        variant,
        Variant2d::Convolution2dSeparableTwoPass | Variant2d::Convolution2dSeparableFused
    )
}

/// Whether `variant` runs on a `w x w` mask that is separable if `separable`.
fn runs_on(variant: Variant2d, w: usize, separable: bool) -> bool {
    variant_widths(variant).contains(&w) && (separable || !needs_separable(variant))
}

/// The dense variant [`convolution::conv2d`] runs for a dense `w x w` mask on an aligned input
/// (the separable table's comparison).
fn dense_variant(w: usize) -> Variant2d {
    if w <= VEC4_MAX_WIDTH {
        Variant2d::Convolution2dTiledVec4
    } else {
        Variant2d::Convolution2dWide
    }
}

/// The sanitizer cases of a convolution: `args` at the default `width`, then `small` at every
/// other odd width (the vec4 kernels are one entry per width).
fn mask_width_cases(args: &str, width: usize, small: &str, max: usize) -> Vec<String> {
    let mut cases = vec![format!("{args} --mask-width {width}")];
    cases.extend(
        (1..=max)
            .step_by(2)
            .filter(|&w| w != width)
            .map(|w| format!("{small} --mask-width {w}")),
    );
    cases
}

/// Peak memory of `demo conv1d --size n`: the input and one variant's output on the device
/// (8n bytes, and the mask); on the host the input (4n), the f64 reference and its scale
/// (16n) and one downloaded output (4n).
pub fn footprint_1d(n: usize) -> Footprint {
    Footprint::new(format!("conv1d of {n} elements"))
        .device::<f32>(2, n)
        .device_bytes(SMALL)
        .host::<f32>(2, n)
        .host::<f64>(2, n)
        .with_ceiling()
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

fn run_1d(gpu: &Gpu, opts: &Options, out: &mut Out, size: usize, mask_width: usize) -> Result<()> {
    convolution::validate_mask_width(1, mask_width)?;
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let input: Vec<f32> = (0..size).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mask_values: Vec<f32> = (0..mask_width)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    out.dump("input", &[], &input)?;
    out.dump("mask", &[], &mask_values)?;
    let reference = convolution::reference_1d(&input, &mask_values);
    let mask = Mask1d::new(gpu, &mask_values)?;
    let d_in = gpu.upload(&input)?;
    let bytes = convolution::bytes_moved(size);
    let fp32 = floor_line(gpu, out, &ceiling, size, mask_width, 1, false)?;
    let floor = floor_of(size, mask_width as u64, &ceiling, &fp32);

    let mut table = Table::new(
        "variants",
        format!(
            "conv1d, N = {size} f32, mask width {mask_width} (random, in __constant__ memory; in global memory for the basic kernel), \
             {:.0} MiB moved per launch (1 read + 1 write), {} reps; access ratio = loads of N by the untiled kernels / by this one (seed 3.2)",
            bytes as f64 / (1 << 20) as f64,
            opts.reps
        ),
        ChartKind::Bars,
        HEADER,
    );
    out.headline("variants", &variant_name(Variant1d::Convolution1dTiledVec4));
    let (mut failures, mut basic_ms) = (0, None);
    for variant in Variant1d::ALL {
        let name = variant_name(variant);
        let mut d_out = gpu.poisoned(size, f32::NAN)?;
        let entry = variant.entry(mask_width);
        let trial = Plan::new(gpu, opts, &name, entry)
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| convolution::conv1d_with(gpu, variant, &d_in, &mask, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, entry)?;
                    out.verify(&format!("output_{name}"), &[], &got, |got| {
                        convolution::compare(got, &reference)
                    })
                },
            )?;
        failures += !trial.passed() as usize;
        let basic = *basic_ms.get_or_insert(trial.timing.median_ms);
        let access_ratio = variant.access_ratio(mask_width, trial.cfg.block_dim.0);
        let seed = variant.seed_section().unwrap_or("-");
        variant_row(
            &mut table,
            &ceiling,
            &floor,
            trial,
            seed,
            basic,
            access_ratio,
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} conv1d variant(s) disagree with the CPU reference");
    }
    Ok(())
}

/// What every timed 2D table shares: the device, the options, this run's copy ceiling and FP32
/// peak, and the random image (on the host and the device).
struct Bench2d<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    ceiling: Ceiling,
    fp32: Fp32Throughput,
    rows: usize,
    cols: usize,
    input: Vec<f32>,
    d_in: CudaSlice<f32>,
}

impl Bench2d<'_> {
    fn outputs(&self) -> usize {
        self.rows * self.cols
    }

    /// The floors of `variant` on a `w x w` mask.
    fn floor(&self, variant: Variant2d, w: usize) -> Floor {
        floor_of(
            self.outputs(),
            variant.fmas_per_output(w),
            &self.ceiling,
            &self.fp32,
        )
    }

    /// Runs `variant` on `mask` once into a poisoned output, checks it against `reference`
    /// (dumped as `output_<dump>`), then times it.
    fn trial(
        &self,
        out: &mut Out,
        variant: Variant2d,
        mask: &Mask2d,
        reference: &Reference,
        dump: &str,
    ) -> Result<Trial<Comparison>> {
        let (gpu, rows, cols) = (self.gpu, self.rows, self.cols);
        let entry = variant.entry(mask.width());
        let shape = [rows as u64, cols as u64];
        let mut d_out = gpu.poisoned(self.outputs(), f32::NAN)?;
        Plan::new(gpu, self.opts, variant_name(variant), entry)
            .bytes(
                convolution::bytes_moved(self.outputs()),
                Some(&self.ceiling),
            )
            .run(
                &mut d_out,
                |d_out| convolution::conv2d_with(gpu, variant, &self.d_in, mask, d_out, rows, cols),
                |d_out, _| {
                    let got = gpu.download(d_out, entry)?;
                    out.verify(&format!("output_{dump}"), &shape, &got, |got| {
                        convolution::compare(got, reference)
                    })
                },
            )
    }
}

/// `demo conv2d`: the variants table on a random `rows x cols` image with `--mask` (else a
/// random `mask_width` mask), the separable table (that mask if separable, else a Gaussian of
/// its width), then a real (or generated) picture filtered with `--mask`.
fn run_2d(gpu: &Gpu, opts: &Options, out: &mut Out, args: &Conv2d) -> Result<()> {
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
fn is_separable(mask: &Mask2d) -> bool {
    mask.factors().is_some() && mask.width() >= 3
}

/// The table `variants`: every variant that runs on `mask` (the seed's three at every width,
/// the vec4 tile up to 9, the wide tile from 11, the separable two for a separable mask).
/// Returns the failures.
fn variants_table(
    b: &Bench2d<'_>,
    out: &mut Out,
    mask: &Mask2d,
    about: &str,
    reference: &Reference,
) -> Result<usize> {
    let (w, opts) = (mask.width(), b.opts);
    let separable = is_separable(mask);
    let bytes = convolution::bytes_moved(b.outputs());
    let mut table = Table::new(
        "variants",
        format!(
            "conv2d, {} x {} f32, {w} x {w} mask ({about}{}; in __constant__ memory, in global memory for the basic kernel), \
             {:.0} MiB moved per launch (1 read + 1 write), {} reps; floors of each row's variant: memory = 1 read + 1 write \
             at this run's memcpy, FMA = its FMAs per output ({w}^2 dense, 2 x {w} separable) x outputs at the FP32 peak; \
             x floor = median / the larger floor; access ratio = loads of N by the untiled kernels / by this one (seed 3.2 in 2D)",
            b.rows,
            b.cols,
            if separable { ", separable" } else { "" },
            bytes as f64 / (1 << 20) as f64,
            opts.reps
        ),
        ChartKind::Bars,
        HEADER,
    );
    let aligned = is_aligned(b.gpu.address(&b.d_in), VEC4_ALIGNMENT);
    out.headline(
        "variants",
        &variant_name(Variant2d::choose(mask, b.rows, b.cols, aligned)),
    );
    let (mut failures, mut basic_ms) = (0, None);
    for variant in Variant2d::ALL {
        if !runs_on(variant, w, separable) {
            continue;
        }
        let name = variant_name(variant);
        let trial = b.trial(out, variant, mask, reference, &name)?;
        failures += !trial.passed() as usize;
        let basic = *basic_ms.get_or_insert(trial.timing.median_ms);
        let access_ratio = variant.access_ratio(w);
        let seed = variant.seed_section().unwrap_or("-");
        let floor = b.floor(variant, w);
        variant_row(
            &mut table,
            &b.ceiling,
            &floor,
            trial,
            seed,
            basic,
            access_ratio,
        );
    }
    out.table(table);
    Ok(failures)
}

/// The table `separable`: on the separable `mask`, the dense path (the kernel `conv2d` runs
/// for a dense mask of this width) beside NVIDIA's two-pass and the fused kernel. Returns the
/// failures.
fn separable_table(b: &Bench2d<'_>, out: &mut Out, mask: &Mask2d, about: &str) -> Result<usize> {
    let w = mask.width();
    let reference = reference_2d_parallel(&b.input, (b.rows, b.cols), CheckMask::of(mask));
    let mut table = Table::new(
        "separable",
        format!(
            "separable {w} x {w} mask, {about}, on the same {} x {} f32 image, {} reps: the dense path ({w}^2 FMAs per output) \
             beside NVIDIA's convolutionSeparable two-pass (a row pass into a temporary image, then a column pass: 2 reads + \
             2 writes) and the fused kernel (1 read + 1 write), 2 x {w} FMAs per output; floors as in the variants table, \
             FMA floor of each row's own FMAs; speedup vs dense = dense median / this median",
            b.rows, b.cols, b.opts.reps
        ),
        ChartKind::Bars,
        SEPARABLE_HEADER,
    );
    let mut failures = 0;
    let mut dense_ms = None;
    for variant in [
        dense_variant(w),
        Variant2d::Convolution2dSeparableTwoPass,
        Variant2d::Convolution2dSeparableFused,
    ] {
        let name = variant_name(variant);
        let trial = b.trial(out, variant, mask, &reference, &format!("separable_{name}"))?;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        let dense = *dense_ms.get_or_insert(ms);
        let floor = b.floor(variant, w);
        let mut cells = vec![name, variant.fmas_per_output(w).to_string()];
        cells.extend(timed_cells(&trial, &b.ceiling, &floor));
        cells.extend([
            format!("{:.2}x", dense / ms),
            format!("{:.1e}", trial.check.max_relative_error),
            trial.verdict(),
        ]);
        let m = floor_extras(trial.measurement, &floor, ms).extra("speedup_vs_dense", dense / ms);
        table.measured_row(cells, m);
    }
    // The floor measured: the fused kernel's traffic and FMAs with no data exchange.
    let trial = stream_trial(b, out, w)?;
    failures += !trial.passed() as usize;
    let ms = trial.timing.median_ms;
    let floor = b.floor(Variant2d::Convolution2dSeparableFused, w);
    let mut cells = vec![STREAM_ROW.to_string(), (2 * w).to_string()];
    cells.extend(timed_cells(&trial, &b.ceiling, &floor));
    cells.extend([
        format!("{:.2}x", dense_ms.unwrap_or(ms) / ms),
        "0".to_string(),
        trial.verdict(),
    ]);
    // A plain row: a reference, not a variant, so never the table's best row or the headline.
    table.row(cells);
    out.table(table);
    Ok(failures)
}

/// Every how many elements the `fma-stream` rows check (and the last 4): the CPU chain of 62
/// FMAs on every element of 8192^2 would take longer than the sweep's GPU work.
const STREAM_CHECK_STRIDE: usize = 7;

/// The separable table's last row: [`FmaStream`] at the table's width.
const STREAM_ROW: &str =
    "fma-stream (the fused kernel's floor, measured: 1 read, 2w FMAs, 1 write, nothing else)";

/// Runs [`FmaStream`] of width `w` on `input` once into a poisoned output, checks every 7th
/// element and the last 4 bit for bit against their CPU chains, then times it: the most a
/// kernel that reads `input` once, does `2w` FMAs per element and writes it once gets in this
/// run.
/// With `--dump`, its output is downloaded once more and dumped as
/// `output_separable_fma-stream`.
fn stream_trial(b: &Bench2d<'_>, out: &Out, w: usize) -> Result<Trial<Comparison>> {
    let (gpu, input) = (b.gpu, &b.input);
    let mut stream = FmaStream::new(gpu, input)?;
    let kernel = fma_stream::kernel(w)?.name();
    Plan::new(gpu, b.opts, "fma-stream", kernel)
        .bytes(stream.bytes(), Some(&b.ceiling))
        .run(
            &mut stream,
            |s| s.launch(gpu, w),
            |s, _| {
                let result = s.check(gpu, w, input, STREAM_CHECK_STRIDE)?;
                if out.dumping() {
                    let shape = [b.rows as u64, b.cols as u64];
                    out.verify(
                        "output_separable_fma-stream",
                        &shape,
                        &s.output(gpu)?,
                        |_| (),
                    )?;
                }
                Ok(Comparison {
                    result,
                    max_relative_error: 0.0,
                })
            },
        )
}

// ---- The sweeps: one input per shape, each mask width on it, checked in parallel chunks.

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_masks_are_well_formed() {
        for m in <NamedMask as clap::ValueEnum>::value_variants() {
            let (w, v) = m.values();
            assert_eq!(v.len(), w * w);
            assert!(convolution::validate_mask_width(2, w).is_ok());
            let sum: f32 = v.iter().sum();
            if m.is_derivative() {
                assert!(sum.abs() < 1e-6, "{m:?}");
            } else {
                assert!((sum - 1.0).abs() < 1e-5, "{m:?}");
            }
        }
    }

    #[test]
    fn the_convolutions_sanitize_every_vec4_width() {
        let cases = Conv1d::sanitize();
        assert_eq!(cases.len(), convolution::MAX_MASK_WIDTH / 2 + 1);
        assert_eq!(cases[0], "--size 100003 --mask-width 7");
        let cases = Conv2d::sanitize();
        assert_eq!(cases.len(), convolution::MAX_MASK_WIDTH_2D / 2 + 1 + 2);
        assert!(cases.contains(&"--rows 203 --cols 300 --mask-width 31".to_string()));
        assert!(cases.iter().any(|c| c.contains("--mask gaussian:")));
    }

    #[test]
    fn every_variant_runs_at_some_width_and_the_widths_partition_the_dense_path() {
        for v in Variant2d::ALL {
            assert!(variant_widths(v).step_by(2).next().is_some(), "{v:?}");
        }
        for w in (1..=convolution::MAX_MASK_WIDTH_2D).step_by(2) {
            let dense: Vec<Variant2d> = [
                Variant2d::Convolution2dTiledVec4,
                Variant2d::Convolution2dWide,
            ]
            .into_iter()
            .filter(|&v| runs_on(v, w, false))
            .collect();
            assert_eq!(dense, [dense_variant(w)], "width {w}");
            assert!(!runs_on(Variant2d::Convolution2dSeparableFused, w, false));
            assert_eq!(
                runs_on(Variant2d::Convolution2dSeparableFused, w, true),
                w >= 3
            );
        }
    }

    #[test]
    fn the_sweep_gaussians_have_the_width_of_their_case() {
        for w in (3..=convolution::MAX_MASK_WIDTH_2D).step_by(2) {
            assert_eq!(
                gaussian_radius(gaussian_sigma(w)),
                Some((w - 1) / 2),
                "w {w}"
            );
        }
        let widths: Vec<Option<usize>> =
            Conv2d::SWEEPS[1].cases().iter().map(|c| c.width).collect();
        assert_eq!(widths, (3..=31).step_by(2).map(Some).collect::<Vec<_>>());
    }

    #[test]
    fn masks_parse_or_are_refused_in_one_sentence() {
        assert_eq!(parse_mask("sobel-x"), Ok(MaskArg::Named(NamedMask::SobelX)));
        assert_eq!(parse_mask("gaussian:1.5"), Ok(MaskArg::Gaussian(1.5)));
        assert_eq!(parse_mask("gaussian:5.1"), Ok(MaskArg::Gaussian(5.1)));
        assert_eq!(parse_mask("box:31"), Ok(MaskArg::Box(31)));
        assert_eq!(parse_mask("m.npy"), Ok(MaskArg::Npy("m.npy".into())));
        assert_eq!(parse_mask("gaussian:2").unwrap().to_string(), "gaussian:2");
        for bad in [
            "gaussian:",
            "gaussian:x",
            "gaussian:0",
            "gaussian:-1",
            "gaussian:inf",
            "gaussian:NaN",
            "gaussian:5.2",
            "box:4",
            "box:33",
            "box:0",
            "box:x",
            "sobel",
            "",
        ] {
            let e = parse_mask(bad).unwrap_err();
            assert!(!e.contains('\n') && !e.is_empty(), "{bad}: {e}");
        }
        assert!(parse_mask("gaussian:5.2").unwrap_err().contains("5.1667"));
    }

    /// Writes `values` of `shape` as a `.npy` of `T` and returns its path.
    fn npy<T: npyz::AutoSerialize + Copy>(
        dir: &Path,
        name: &str,
        shape: &[u64],
        values: &[T],
    ) -> PathBuf {
        use npyz::WriterBuilder;
        let path = dir.join(name);
        let mut file = std::fs::File::create(&path).unwrap();
        let mut w = npyz::WriteOptions::<T>::new()
            .default_dtype()
            .shape(shape)
            .writer(&mut file)
            .begin_nd()
            .unwrap();
        w.extend(values.iter().copied()).unwrap();
        w.finish().unwrap();
        path
    }

    #[test]
    fn npy_masks_load_square_f32_and_refuse_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let values: Vec<f32> = (0..9).map(|i| i as f32).collect();
        let ok = npy(d, "ok.npy", &[3, 3], &values);
        assert_eq!(load_npy_mask(&ok).unwrap(), (3, values.clone()));
        assert!(MaskArg::Npy(ok).check().is_ok());
        let refused = [
            npy(d, "f64.npy", &[3, 3], &[0.5f64; 9]),
            npy(d, "rect.npy", &[3, 5], &[0.5f32; 15]),
            npy(d, "even.npy", &[4, 4], &[0.5f32; 16]),
            npy(d, "wide.npy", &[33, 33], &[0.5f32; 33 * 33]),
            npy(d, "flat.npy", &[9], &[0.5f32; 9]),
            npy(d, "nan.npy", &[1, 1], &[f32::NAN]),
            d.join("absent.npy"),
        ];
        std::fs::write(d.join("junk.npy"), b"not numpy").unwrap();
        for path in refused.iter().chain([&d.join("junk.npy")]) {
            let e = format!("{:#}", load_npy_mask(path).unwrap_err());
            assert!(!e.contains('\n'), "{e}");
            assert!(e.contains(&path.display().to_string()), "{e}");
        }
    }

    #[test]
    fn chunked_checks_agree_with_the_whole_reference() {
        // Chunks of 1000 outputs: several, a ragged end, halos wider and narrower than a chunk.
        let chunk = 1000;
        let n = 5 * chunk + 123;
        let input = random_floats(1, n);
        for w in [1, 7, 31] {
            let mask = random_floats(2, w);
            let whole = convolution::reference_1d(&input, &mask);
            let got: Vec<f32> = whole.values.iter().map(|&v| v as f32).collect();
            let c = compare_1d_in(&got, &input, &mask, chunk);
            assert!(c.result.is_ok(), "w {w}: {:?}", c.result);
            let mut bad = got.clone();
            bad[chunk + 5] += 1.0;
            bad[n - 1] += 1.0;
            let m = compare_1d_in(&bad, &input, &mask, chunk)
                .result
                .unwrap_err();
            assert_eq!((m.index, m.count), (chunk + 5, 2), "w {w}");
        }
        assert!(compare_1d(&[0.0], &input, &[1.0]).result.is_err(), "length");
        let (rows, cols) = (70, 301);
        let image = random_floats(3, rows * cols);
        for w in [1, 5, 9, 31] {
            let mask = random_floats(4, w * w);
            let whole = convolution::reference_2d(&image, rows, cols, &mask, w);
            let mut got: Vec<f32> = whole.values.iter().map(|&v| v as f32).collect();
            let check = |got: &[f32]| {
                compare_2d_in(got, &image, (rows, cols), CheckMask::Dense(&mask, w), chunk)
            };
            assert!(check(&got).result.is_ok(), "w {w}");
            // A mismatch in a later band, at a band edge.
            let band = chunk / cols;
            got[band * cols + 7] = f32::NAN;
            let c = check(&got);
            assert_eq!(c.result.unwrap_err().index, band * cols + 7);
            assert!(c.max_relative_error.is_nan());
        }
    }

    #[test]
    fn the_parallel_reference_is_the_whole_one_band_by_band() {
        // Rows longer than a check chunk: every row is a band of its own.
        let (rows, cols) = (3, CHECK_CHUNK + 3);
        let image = random_floats(5, rows * cols);
        for w in [1, 3] {
            let mask = random_floats(6, w * w);
            let whole = convolution::reference_2d(&image, rows, cols, &mask, w);
            let parallel = reference_2d_parallel(&image, (rows, cols), CheckMask::Dense(&mask, w));
            assert!(
                whole.values == parallel.values && whole.scale == parallel.scale,
                "w {w}"
            );
        }
        let empty = reference_2d_parallel(&[], (3, 0), CheckMask::Dense(&[1.0], 1));
        assert!(empty.values.is_empty() && empty.scale.is_empty());
    }
}
