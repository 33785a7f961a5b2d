//! `demo conv1d` and `demo conv2d`.

mod picture;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::args::{ArgError, count_in, odd_width};
use crate::harness::{Footprint, Plan, SMALL, Trial, array, elements};
use crate::registry::{Pattern, VariantInfo, kernels_each, variant, widths};
use crate::report::{ChartKind, Measurement, Table};
use crate::sweep::{Case, Sweep, SweepSpec, powers, random_floats};
use crate::timing::{self, Ceiling, Floor, Fp32Throughput};
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

use crate::{Options, Out, variant_name};

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

/// Columns of the variants tables: the floors of the row's variant (memory: 1 read + 1 write
/// at this run's copy bandwidth; FMA: its FMAs at the FP32 peak), "x floor" = median / the
/// larger floor (1 at the floor), "% of FP32 peak" = its FMA rate over the peak.
const HEADER: [&str; 14] = [
    "variant",
    "seed",
    "grid x block",
    "median ms",
    "GB/s",
    "% of memcpy",
    "memory floor ms",
    "FMA floor ms",
    "x floor",
    "% of FP32 peak",
    "access ratio",
    "speedup vs basic",
    "max rel err",
    "verdict",
];

/// Columns of the separable table: as [`HEADER`], with the FMAs per output in place of the
/// seed section and the speed against the dense path on the same mask.
const SEPARABLE_HEADER: [&str; 13] = [
    "variant",
    "FMAs per output",
    "grid x block",
    "median ms",
    "GB/s",
    "% of memcpy",
    "memory floor ms",
    "FMA floor ms",
    "x floor",
    "% of FP32 peak",
    "speedup vs dense",
    "max rel err",
    "verdict",
];

/// The cells both tables share, from "grid x block" to "% of FP32 peak".
fn timed_cells(trial: &Trial<Comparison>, ceiling: &Ceiling, floor: &Floor) -> [String; 8] {
    let ms = trial.timing.median_ms;
    let gbps = trial.gbps();
    [
        trial.grid_block(),
        format!("{ms:.3}"),
        format!("{gbps:.1}"),
        format!("{:.1}%", ceiling.percent(gbps)),
        format!("{:.3}", floor.memory_ms),
        format!("{:.3}", floor.fma_ms),
        format!("{:.2}x", floor.ratio(ms)),
        format!("{:.1}%", 100.0 * floor.fma_ms / ms),
    ]
}

/// Adds a verified, timed variant to a variants table (cells as in [`HEADER`]): `basic` is
/// the median ms of the basic kernel (the speedup's base), `floor` the variant's floors.
fn variant_row(
    table: &mut Table,
    ceiling: &Ceiling,
    floor: &Floor,
    trial: Trial<Comparison>,
    seed: &str,
    basic: f64,
    access_ratio: f64,
) {
    let speedup = basic / trial.timing.median_ms;
    let mut cells = vec![trial.measurement.variant.clone(), seed.to_string()];
    cells.extend(timed_cells(&trial, ceiling, floor));
    cells.extend([
        format!("{access_ratio:.2}"),
        format!("{speedup:.2}x"),
        format!("{:.1e}", trial.check.max_relative_error),
        trial.verdict(),
    ]);
    let m = floor_extras(trial.measurement, floor, trial.timing.median_ms)
        .extra("access_ratio", access_ratio)
        .extra("speedup_vs_basic", speedup);
    table.measured_row(cells, m);
}

/// The floors of a measurement as its extras.
fn floor_extras(m: Measurement, floor: &Floor, ms: f64) -> Measurement {
    m.extra("floor_ms", floor.ms())
        .extra("memory_floor_ms", floor.memory_ms)
        .extra("fma_floor_ms", floor.fma_ms)
        .extra("ratio_to_floor", floor.ratio(ms))
        .extra("percent_of_fp32_peak", 100.0 * floor.fma_ms / ms)
}

/// The floors of `outputs` outputs of `fmas_per_output` multiply-adds each: 1 read + 1 write
/// at the copy bandwidth, and the FMAs at the FP32 peak.
fn floor_of(outputs: usize, fmas_per_output: u64, copy: &Ceiling, fp32: &Fp32Throughput) -> Floor {
    let memory = timing::conv_floor(outputs, 1, 1, copy, fp32);
    Floor {
        fma_ms: fmas_per_output as f64 * outputs as f64 / fp32.fma_per_second() * 1e3,
        ..memory
    }
}

/// Prints the floors of a table of `outputs` outputs on `mask_width`-wide masks in `dims`
/// dimensions: the memory floor, and the FMA floor of a dense mask (`w^dims` FMAs per output)
/// and, in 2D where `separable`, of a separable one (`2w`). Returns the peak it assumed.
fn floor_line(
    gpu: &Gpu,
    out: &mut Out,
    ceiling: &Ceiling,
    outputs: usize,
    mask_width: usize,
    dims: u32,
    separable: bool,
) -> Result<Fp32Throughput> {
    let fp32 = Fp32Throughput::of(gpu)?;
    let fma = timing::fma_ceiling(gpu, 3, 10)?;
    let w = mask_width as u64;
    let dense = floor_of(outputs, w.pow(dims), ceiling, &fp32);
    let separable = if separable && dims == 2 {
        let f = floor_of(outputs, 2 * w, ceiling, &fp32);
        format!(
            "; separable: 2 x {mask_width} x {outputs} FMAs, {:.3} ms (floor {:.3} ms, {}-bound)",
            f.fma_ms,
            f.ms(),
            f.bound()
        )
    } else {
        String::new()
    };
    out.line(format!(
        "floors: memory {:.3} ms (1 read + 1 write at this run's memcpy {:.1} GB/s); FMA at the FP32 peak \
         {:.2} TFMA/s ({} SMs x {} FP32 lanes x {} MHz): dense {mask_width}^{dims} x {outputs} FMAs, {:.3} ms \
         (floor {:.3} ms, {}-bound){separable}; x floor = median / max(memory, FMA floor of the row's variant); \
         FMA rate measured (fma_rate, 16 independent FMA chains a thread, {} x 256): {:.2} TFMA/s, {:.1}% of the peak",
        dense.memory_ms,
        ceiling.gbps,
        fp32.fma_per_second() / 1e12,
        fp32.sm_count,
        fp32.lanes_per_sm,
        fp32.sm_clock_khz / 1000,
        dense.fma_ms,
        dense.ms(),
        dense.bound(),
        fma.launch.grid_dim.0,
        fma.fma_per_second() / 1e12,
        100.0 * fma.fma_per_second() / fp32.fma_per_second(),
    ));
    Ok(fp32)
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

/// Outputs per chunk of the parallel convolution checks (each chunk's `f64` reference and
/// scale, 16 bytes per output, exist only while it is compared).
const CHECK_CHUNK: usize = 1 << 20;

/// The convolution cases grouped by shape (in order of first appearance): one input per
/// shape, uploaded once for every mask width at it.
fn by_shape(cases: Vec<Case>) -> Vec<(Vec<usize>, Vec<Case>)> {
    let mut groups: Vec<(Vec<usize>, Vec<Case>)> = Vec::new();
    for case in cases {
        match groups.iter_mut().find(|(s, _)| *s == case.shape) {
            Some((_, g)) => g.push(case),
            None => groups.push((case.shape.clone(), vec![case])),
        }
    }
    groups
}

/// The cases grouped by shape ([`by_shape`]), each group cut to the cases the sweep admits
/// (room on the device and the host, [`conv_footprint`]); groups left empty are dropped.
fn admitted_by_shape(
    sweep: &mut Sweep<'_>,
    cases: Vec<Case>,
) -> Result<Vec<(Vec<usize>, Vec<Case>)>> {
    let mut groups = Vec::new();
    for (shape, group) in by_shape(cases) {
        let mut admitted = Vec::new();
        for case in group {
            if sweep.admit(&case, |n| conv_footprint(&case, n))?.is_some() {
                admitted.push(case);
            }
        }
        if !admitted.is_empty() {
            groups.push((shape, admitted));
        }
    }
    Ok(groups)
}

fn sweep_1d(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    for (shape, admitted) in admitted_by_shape(sweep, cases)? {
        let n = shape[0];
        let first = &admitted[0];
        let input = random_floats(sweep.seed_for(first, 0), n);
        let d_in = gpu.upload(&input)?;
        for case in admitted {
            let w = case.width.unwrap_or(1);
            let values = random_floats(sweep.seed_for(&case, 1), w);
            let mask = Mask1d::new(gpu, &values)?;
            let mut d_out = gpu.poisoned(n, f32::NAN)?;
            let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT)
                && is_aligned(gpu.address(&d_out), VEC4_ALIGNMENT);
            let variant = Variant1d::fastest(aligned);
            let (kernel, launch) = (variant.entry(w), variant.launch_config(gpu, n, w)?);
            let floor = timing::conv_floor(n, w, 1, sweep.copy(), sweep.fp32());
            let input = &input;
            sweep.measure(
                case,
                kernel,
                convolution::bytes_moved(n),
                Some(floor),
                &mut d_out,
                |o| convolution::conv1d(gpu, &d_in, &mask, o).map(|()| launch),
                |o, _| {
                    let got = gpu.download(o, kernel)?;
                    Ok(compare_1d(&got, input, &values))
                },
            )?;
        }
    }
    Ok(())
}

/// The dense sweep `conv2d`: a random `w x w` mask per case.
fn sweep_2d(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    sweep_2d_with(sweep, cases, |sweep, case, w| {
        let values = random_floats(sweep.seed_for(case, 1), w * w);
        Ok(Mask2d::new(sweep.gpu(), &values, w)?)
    })
}

/// The standard deviation of the Gaussian of width `w` the separable sweep and table use:
/// `(w - 1) / 6`, so that SciPy's radius `floor(3 sigma + 0.5)` (`truncate=3.0`) is
/// `(w - 1) / 2`.
fn gaussian_sigma(w: usize) -> f32 {
    (w - 1) as f32 / 6.0
}

/// The separable sweep `conv2d-separable`: the Gaussian of each case's width
/// ([`gaussian_sigma`]), through the same entry point.
fn sweep_2d_separable(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    sweep_2d_with(sweep, cases, |sweep, _, w| {
        let mask = Mask2d::gaussian(sweep.gpu(), gaussian_sigma(w), GAUSSIAN_TRUNCATE)?;
        if mask.width() != w {
            bail!(
                "Mask2d::gaussian({}) is {} wide, the sweep expected {w}",
                gaussian_sigma(w),
                mask.width()
            );
        }
        Ok(mask)
    })
}

/// The sweep `fma-stream`: [`FmaStream`] at each case's width on one random image, each row's
/// floor that of the fused separable kernel of that width (`2w` FMAs per output); every 7th
/// element and the last 4 checked bit for bit.
fn sweep_fma_stream(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    for (shape, admitted) in admitted_by_shape(sweep, cases)? {
        let n = shape.iter().product::<usize>();
        let first = &admitted[0];
        let input = random_floats(sweep.seed_for(first, 0), n);
        let mut stream = FmaStream::new(gpu, &input)?;
        for case in admitted {
            let w = case.width.unwrap_or(3);
            let kernel = fma_stream::kernel(w)?.name();
            let floor = floor_of(n, 2 * w as u64, sweep.copy(), sweep.fp32());
            let input = &input;
            sweep.measure(
                case,
                kernel,
                stream.bytes(),
                Some(floor),
                &mut stream,
                |s| s.launch(gpu, w),
                |s, _| Ok(s.check(gpu, w, input, STREAM_CHECK_STRIDE)?),
            )?;
        }
    }
    Ok(())
}

/// A 2D sweep: one input per shape, `make_mask` for each case, `conv2d` timed; each row's
/// floor is that of the variant `conv2d` runs ([`Variant2d::fmas_per_output`]: `w^2` dense,
/// `2w` separable).
fn sweep_2d_with(
    sweep: &mut Sweep<'_>,
    cases: Vec<Case>,
    make_mask: impl Fn(&Sweep<'_>, &Case, usize) -> Result<Mask2d>,
) -> Result<()> {
    let gpu = sweep.gpu();
    for (shape, admitted) in admitted_by_shape(sweep, cases)? {
        let (rows, cols) = (shape[0], shape[1]);
        let first = &admitted[0];
        let n = rows * cols;
        let input = random_floats(sweep.seed_for(first, 0), n);
        let d_in = gpu.upload(&input)?;
        for case in admitted {
            let w = case.width.unwrap_or(1);
            let mask = make_mask(sweep, &case, w)?;
            let mut d_out = gpu.poisoned(n, f32::NAN)?;
            let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT);
            let variant = Variant2d::choose(&mask, rows, cols, aligned);
            let kernel = variant.entry(w);
            let launch = variant.launch_config(gpu, rows, cols, w)?;
            let floor = floor_of(n, variant.fmas_per_output(w), sweep.copy(), sweep.fp32());
            let input = &input;
            let check = CheckMask::of(&mask);
            sweep.measure(
                case,
                kernel,
                convolution::bytes_moved(n),
                Some(floor),
                &mut d_out,
                |o| convolution::conv2d(gpu, &d_in, &mask, o, rows, cols).map(|()| launch),
                |o, _| {
                    let got = gpu.download(o, kernel)?;
                    Ok(compare_2d(&got, input, rows, cols, check))
                },
            )?;
        }
    }
    Ok(())
}

/// Peak memory of a convolution case of `n` outputs: input and output on the device (and the
/// mask); on the host the input, the downloaded output, and per checking thread a chunk's
/// `f64` reference and scale and its input window.
fn conv_footprint(case: &Case, n: usize) -> Footprint {
    Footprint::new(format!("{} of {}", case.pattern, case.label()))
        .device::<f32>(2, n)
        .device_bytes(SMALL)
        .host::<f32>(2, n)
        .host::<[u8; 24]>(check_threads() as u64, CHECK_CHUNK)
}

/// Threads the convolution checks use.
fn check_threads() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get())
}

/// `f(item)` for every item of `items`, on every core (at most `items` threads), each thread
/// taking the next item when it is done with one.
fn for_each_on_every_core<I>(items: I, f: impl Fn(I::Item) + Sync)
where
    I: ExactSizeIterator + Send,
{
    let threads = check_threads().min(items.len().max(1));
    let items = Mutex::new(items);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let next = items.lock().unwrap_or_else(|p| p.into_inner()).next();
                    let Some(item) = next else {
                        break;
                    };
                    f(item);
                }
            });
        }
    });
}

/// `f(i)` for chunks `0..chunks`, on every core, in chunk order.
fn parallel_map<T: Send>(chunks: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let parts = Mutex::new(Vec::with_capacity(chunks));
    for_each_on_every_core(0..chunks, |i| {
        let part = f(i);
        parts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((i, part));
    });
    let mut parts = parts.into_inner().unwrap_or_else(|p| p.into_inner());
    parts.sort_by_key(|(i, _)| *i);
    parts.into_iter().map(|(_, p)| p).collect()
}

/// Runs `check(i)` for chunks `0..chunks` on every core and merges the comparisons in chunk
/// order; `check` returns the chunk's first output index and its comparison.
fn parallel_compare(
    chunks: usize,
    check: impl Fn(usize) -> (usize, Comparison) + Sync,
) -> Comparison {
    merge(parallel_map(chunks, check).into_iter())
}

/// One comparison of consecutive chunks: the first mismatch (its index offset by its chunk's
/// start), the mismatches counted, the largest relative error (NaN if any is NaN).
fn merge(parts: impl Iterator<Item = (usize, Comparison)>) -> Comparison {
    let mut result = Ok(());
    let mut worst = 0.0f64;
    for (start, part) in parts {
        worst = if worst.is_nan() || part.max_relative_error.is_nan() {
            f64::NAN
        } else {
            worst.max(part.max_relative_error)
        };
        if let Err(mut m) = part.result {
            match &mut result {
                Ok(()) => {
                    m.index += start;
                    result = Err(m);
                }
                Err(first) => first.count += m.count,
            }
        }
    }
    Comparison {
        result,
        max_relative_error: worst,
    }
}

/// `got` against [`convolution::reference_1d`] of `input` and `mask`, chunk by chunk on every
/// core: each chunk's reference is computed on its input window (the chunk and `r` elements
/// either side, clipped to the input, so the ghosts are where the whole input has them) and
/// compared with [`convolution::compare`].
fn compare_1d(got: &[f32], input: &[f32], mask: &[f32]) -> Comparison {
    compare_1d_in(got, input, mask, CHECK_CHUNK)
}

/// [`compare_1d`] in chunks of `chunk` outputs.
fn compare_1d_in(got: &[f32], input: &[f32], mask: &[f32], chunk: usize) -> Comparison {
    let (n, r) = (input.len(), mask.len() / 2);
    if got.len() != n {
        return length_mismatch(got.len(), n);
    }
    parallel_compare(n.div_ceil(chunk), |i| {
        let (a, b) = (i * chunk, ((i + 1) * chunk).min(n));
        let (lo, hi) = (a.saturating_sub(r), (b + r).min(n));
        let window = convolution::reference_1d(&input[lo..hi], mask);
        (
            a,
            convolution::compare(&got[a..b], &slice(&window, a - lo, b - lo)),
        )
    })
}

/// A 2D mask as the CPU checks see it: `w x w` values, or a separable mask's factors (whose
/// reference costs `2w` per output, not `w^2`).
#[derive(Clone, Copy, Debug)]
enum CheckMask<'a> {
    /// Row-major `w x w` values.
    Dense(&'a [f32], usize),
    /// `M[y][x] = col[y] row[x]`.
    Separable { row: &'a [f32], col: &'a [f32] },
}

impl<'a> CheckMask<'a> {
    /// `mask`'s factors if it has them, else its values.
    fn of(mask: &'a Mask2d) -> Self {
        match mask.factors() {
            Some(Factors { x: row, y: col }) => CheckMask::Separable { row, col },
            None => CheckMask::Dense(mask.values(), mask.width()),
        }
    }

    fn width(self) -> usize {
        match self {
            CheckMask::Dense(_, w) => w,
            CheckMask::Separable { row, .. } => row.len(),
        }
    }

    /// The `f64` reference of a `rows x cols` image.
    fn reference(self, input: &[f32], rows: usize, cols: usize) -> Reference {
        match self {
            CheckMask::Dense(values, w) => convolution::reference_2d(input, rows, cols, values, w),
            CheckMask::Separable { row, col } => {
                convolution::reference_2d_separable(input, rows, cols, row, col)
            }
        }
    }
}

/// Rows `a..b` of the reference of a `rows x cols` image: computed on the band and `r` rows
/// above and below (clipped to the image, so the ghosts are where the whole image has them).
fn band_reference(
    input: &[f32],
    (rows, cols): (usize, usize),
    mask: CheckMask<'_>,
    (a, b): (usize, usize),
) -> Reference {
    let r = mask.width() / 2;
    let (lo, hi) = (a.saturating_sub(r), (b + r).min(rows));
    let window = mask.reference(&input[lo * cols..hi * cols], hi - lo, cols);
    slice(&window, (a - lo) * cols, (b - lo) * cols)
}

/// The whole reference of a `rows x cols` image, in bands of rows on every core, each band
/// written straight into its place: the peak is the whole reference and one band a thread
/// (collecting every band first, then copying, took twice the reference, more than
/// [`footprint_2d`] counts).
fn reference_2d_parallel(
    input: &[f32],
    (rows, cols): (usize, usize),
    mask: CheckMask<'_>,
) -> Reference {
    let n = rows * cols;
    let mut whole = Reference {
        values: vec![0.0; n],
        scale: vec![0.0; n],
    };
    if cols == 0 {
        return whole;
    }
    let band = (CHECK_CHUNK / cols).max(1);
    let bands = whole
        .values
        .chunks_mut(band * cols)
        .zip(whole.scale.chunks_mut(band * cols))
        .enumerate();
    for_each_on_every_core(bands, |(i, (values, scale))| {
        let (a, b) = (i * band, ((i + 1) * band).min(rows));
        let part = band_reference(input, (rows, cols), mask, (a, b));
        values.copy_from_slice(&part.values);
        scale.copy_from_slice(&part.scale);
    });
    whole
}

/// As [`compare_1d`] for a `rows x cols` image, in bands of rows (each band's reference on
/// the band and `r` rows above and below, clipped to the image).
fn compare_2d(
    got: &[f32],
    input: &[f32],
    rows: usize,
    cols: usize,
    mask: CheckMask<'_>,
) -> Comparison {
    compare_2d_in(got, input, (rows, cols), mask, CHECK_CHUNK)
}

/// [`compare_2d`] in bands of about `chunk` outputs (whole rows, at least one).
fn compare_2d_in(
    got: &[f32],
    input: &[f32],
    (rows, cols): (usize, usize),
    mask: CheckMask<'_>,
    chunk: usize,
) -> Comparison {
    if got.len() != input.len() {
        return length_mismatch(got.len(), input.len());
    }
    if cols == 0 {
        return merge(std::iter::empty());
    }
    let band = (chunk / cols).max(1);
    parallel_compare(rows.div_ceil(band), |i| {
        let (a, b) = (i * band, ((i + 1) * band).min(rows));
        let reference = band_reference(input, (rows, cols), mask, (a, b));
        (
            a * cols,
            convolution::compare(&got[a * cols..b * cols], &reference),
        )
    })
}

/// A result of the wrong length.
fn length_mismatch(got: usize, expected: usize) -> Comparison {
    Comparison {
        result: Err(Mismatch {
            index: got.min(expected),
            got: format!("{got} elements"),
            expected: format!("{expected} elements"),
            count: got.abs_diff(expected),
        }),
        max_relative_error: f64::NAN,
    }
}

/// Elements `from..to` of a reference.
fn slice(r: &Reference, from: usize, to: usize) -> Reference {
    Reference {
        values: r.values[from..to].to_vec(),
        scale: r.scale[from..to].to_vec(),
    }
}

/// Named 2D masks for filtering images (`demo conv2d --mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub(crate) enum NamedMask {
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
    pub(crate) fn values(self) -> (usize, Vec<f32>) {
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
    pub(crate) fn is_derivative(self) -> bool {
        matches!(
            self,
            NamedMask::SobelX | NamedMask::SobelY | NamedMask::Laplacian3
        )
    }
}

/// What `demo conv2d --mask` names: a [`NamedMask`], `gaussian:SIGMA`, `box:W` or a square f32
/// `FILE.npy`. The parser ([`parse_mask`]) checks the syntax and the widths it can; the file
/// is read when the pattern runs ([`MaskArg::check`], before any GPU work).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MaskArg {
    /// A named mask.
    Named(NamedMask),
    /// [`Mask2d::gaussian`] of this standard deviation (separable).
    Gaussian(f32),
    /// [`Mask2d::box_filter`] of this odd width (separable).
    Box(usize),
    /// A square f32 `.npy` array of odd width up to 31 (separable if it is rank 1).
    Npy(PathBuf),
}

impl std::fmt::Display for MaskArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaskArg::Named(m) => f.write_str(&variant_name(*m)),
            MaskArg::Gaussian(sigma) => write!(f, "gaussian:{sigma}"),
            MaskArg::Box(w) => write!(f, "box:{w}"),
            MaskArg::Npy(path) => write!(f, "{}", path.display()),
        }
    }
}

/// The radius SciPy's `gaussian_filter(..., truncate=3.0)` gives a Gaussian of standard
/// deviation `sigma`: `floor(3 sigma + 0.5)` (`int(truncate * sigma + 0.5)`), the radius of
/// [`Mask2d::gaussian`]; `None` beyond the widest mask.
fn gaussian_radius(sigma: f32) -> Option<usize> {
    let radius = (3.0 * f64::from(sigma) + 0.5).floor();
    (radius <= (convolution::MAX_MASK_WIDTH_2D / 2) as f64).then_some(radius as usize)
}

/// Parses `--mask` (clap's value parser): an error is one sentence.
fn parse_mask(s: &str) -> std::result::Result<MaskArg, String> {
    let max = convolution::MAX_MASK_WIDTH_2D;
    if let Ok(named) = <NamedMask as clap::ValueEnum>::from_str(s, false) {
        return Ok(MaskArg::Named(named));
    }
    if let Some(text) = s.strip_prefix("gaussian:") {
        let sigma: f32 = text.parse().map_err(|_| {
            format!("`{text}` is not a number: gaussian:SIGMA takes a standard deviation, such as gaussian:1.5")
        })?;
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(format!(
                "the Gaussian's sigma must be positive and finite, not {text}"
            ));
        }
        return match gaussian_radius(sigma) {
            Some(_) => Ok(MaskArg::Gaussian(sigma)),
            None => Err(format!(
                "gaussian:{text} is wider than {max} x {max} (its radius is floor(3 sigma + 0.5); sigma must be below {:.4})",
                (max / 2) as f64 / 3.0 + 0.5 / 3.0
            )),
        };
    }
    if let Some(text) = s.strip_prefix("box:") {
        let w: usize = text.parse().map_err(|_| {
            format!("`{text}` is not a width: box:W takes an odd width, such as box:7")
        })?;
        if w.is_multiple_of(2) || w > max {
            return Err(format!("box:{w}: the width must be odd, 1 to {max}"));
        }
        return Ok(MaskArg::Box(w));
    }
    if s.ends_with(".npy") {
        return Ok(MaskArg::Npy(PathBuf::from(s)));
    }
    let names: Vec<String> = <NamedMask as clap::ValueEnum>::value_variants()
        .iter()
        .map(|m| variant_name(*m))
        .collect();
    Err(format!(
        "unknown mask `{s}`: give one of {}, gaussian:SIGMA, box:W or FILE.npy",
        names.join(", ")
    ))
}

impl MaskArg {
    /// Checks what the parser could not (reads a `.npy`).
    ///
    /// # Errors
    /// As [`load_npy_mask`].
    fn check(&self) -> Result<()> {
        if let MaskArg::Npy(path) = self {
            load_npy_mask(path)?;
        }
        Ok(())
    }

    /// The mask on `gpu`'s device.
    ///
    /// # Errors
    /// As [`load_npy_mask`], or the library's refusal.
    fn device(&self, gpu: &Gpu) -> Result<Mask2d> {
        Ok(match self {
            MaskArg::Named(m) => {
                let (w, values) = m.values();
                Mask2d::new(gpu, &values, w)?
            }
            MaskArg::Gaussian(sigma) => Mask2d::gaussian(gpu, *sigma, GAUSSIAN_TRUNCATE)?,
            MaskArg::Box(w) => Mask2d::box_filter(gpu, *w)?,
            MaskArg::Npy(path) => {
                let (w, values) = load_npy_mask(path)?;
                Mask2d::new(gpu, &values, w)?
            }
        })
    }

    /// Whether the filtered picture is signed (shown as a magnitude): a derivative named
    /// mask, or a file whose weights sum to 0.
    fn is_derivative(&self, mask: &Mask2d) -> bool {
        match self {
            MaskArg::Named(m) => m.is_derivative(),
            MaskArg::Npy(_) => {
                let sum: f64 = mask.values().iter().map(|&v| f64::from(v)).sum();
                let abs: f64 = mask.values().iter().map(|&v| f64::from(v).abs()).sum();
                sum.abs() <= 1e-6 * abs
            }
            _ => false,
        }
    }
}

/// Reads a mask from a `.npy` file: `(width, row-major values)` of a square f32 array of odd
/// width up to [`convolution::MAX_MASK_WIDTH_2D`], finite (C or Fortran order).
///
/// # Errors
/// One sentence naming the file: unreadable, not `.npy`, not f32, not square, an even or too
/// large width, a value not finite.
fn load_npy_mask(path: &Path) -> Result<(usize, Vec<f32>)> {
    let name = path.display();
    let bytes = std::fs::read(path).with_context(|| format!("cannot read the mask {name}"))?;
    let npy = npyz::NpyFile::new(&bytes[..])
        .map_err(|e| anyhow::anyhow!("the mask {name} is not a .npy file ({e})"))?;
    let descr = npy.dtype().descr();
    if descr != "'<f4'" && descr != "'>f4'" {
        bail!(
            "the mask {name} holds {descr}, not f32: save it as numpy.save(path, m.astype(numpy.float32))"
        );
    }
    let (h, w) = match *npy.shape() {
        [h, w] => (h as usize, w as usize),
        ref other => bail!("the mask {name} has shape {other:?}: a square 2D array expected"),
    };
    let max = convolution::MAX_MASK_WIDTH_2D;
    if h != w || w.is_multiple_of(2) || w > max {
        bail!("the mask {name} is {h} x {w}: a square mask of odd width, 1 to {max}, expected");
    }
    let fortran = matches!(npy.order(), npyz::Order::Fortran);
    let stored: Vec<f32> = npy
        .into_vec()
        .map_err(|e| anyhow::anyhow!("cannot read the values of the mask {name} ({e})"))?;
    let values: Vec<f32> = if fortran {
        (0..w * w).map(|i| stored[(i % w) * w + i / w]).collect()
    } else {
        stored
    };
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        bail!(
            "the mask {name} has {} at row {}, column {}: every weight must be finite",
            values[i],
            i / w,
            i % w
        );
    }
    Ok((w, values))
}

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
