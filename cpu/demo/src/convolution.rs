//! `demo conv1d` and `demo conv2d`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::harness::{Footprint, Plan, SMALL, Trial, array, elements};
use crate::registry::{Pattern, VariantInfo, kernels_each, widths};
use crate::report::{ChartKind, Table};
use crate::sweep::{Case, Sweep, SweepSpec, powers, random_floats};
use crate::timing::{self, Ceiling, Floor, Fp32Throughput};
use anyhow::{Context, Result, bail};
use cpu::Gpu;
use cpu::convolution::{self, Comparison, Mask1d, Mask2d, Reference, Variant1d, Variant2d};
use cpu::launch::{VEC4_ALIGNMENT, is_aligned};
use cpu::verify::Mismatch;
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
    #[arg(long, default_value_t = 7)]
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

/// 2D convolution: basic, __constant__ mask, tiled halo and the vec4 tile on a random image,
/// timed; then a PNG (or a generated picture) filtered with a named mask.
#[derive(clap::Args)]
pub(crate) struct Conv2d {
    /// Rows of the random image of the timed table.
    #[arg(long, default_value_t = 4096)]
    rows: usize,
    /// Columns of the random image of the timed table.
    #[arg(long, default_value_t = 4096)]
    cols: usize,
    /// Mask width of the timed table (odd, 1..=9).
    #[arg(long, default_value_t = 5)]
    mask_width: usize,
    /// PNG to filter (read as grayscale); without it, a generated 640 x 480 test picture.
    #[arg(long)]
    image: Option<PathBuf>,
    /// Named mask the picture is filtered with.
    #[arg(long, value_enum, default_value = "sobel-x")]
    mask: NamedMask,
    /// Where to write the filtered picture (grayscale PNG; derivative masks as magnitude).
    #[arg(long, value_name = "PNG")]
    image_out: Option<PathBuf>,
}

impl Pattern for Conv2d {
    const NAME: &'static str = "conv2d";
    /// `cpu::convolution::conv2d` on 1024^2 .. 16384^2 with a 5 x 5 mask, then widths 1, 3,
    /// ..., 9 at 8192^2 (5 once).
    const SWEEPS: &'static [SweepSpec] = &[SweepSpec::new(
        "conv2d",
        "cpu::convolution::conv2d",
        "8 bytes per element: 1 read + 1 write",
        |s| {
            let sizes = powers(10, 14, 1).map(|n| s.case(&[n, n], Some(5)));
            let widths = (1..=convolution::MAX_MASK_WIDTH_2D)
                .step_by(2)
                .filter(|&w| w != 5)
                .map(|w| s.case(&[8192, 8192], Some(w)));
            sizes.chain(widths).collect()
        },
        sweep_2d,
    )
    .convolution(5, "by size, 5 x 5 mask")];

    fn variants() -> Vec<VariantInfo> {
        kernels_each(&Variant2d::ALL, |v| {
            widths(convolution::MAX_MASK_WIDTH_2D, |w| v.entry(w))
        })
    }

    /// 1023 columns: the scalar edge path (rows not a multiple of 4 floats); 300 columns:
    /// `float4` rows whose inner tiles take the interior paths.
    fn sanitize() -> Vec<String> {
        mask_width_cases(
            "--rows 517 --cols 1023",
            5,
            "--rows 203 --cols 300",
            convolution::MAX_MASK_WIDTH_2D,
        )
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let picture = picture_dims(self.image.as_deref())?;
        footprint_2d(self.rows, self.cols, picture).map(Some)
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_2d(gpu, opts, out, self)
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
    let device = array::<f32>(2, n)
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

/// Columns of both tables ("x floor": median / floor, 1 at the floor).
const HEADER: [&str; 12] = [
    "variant",
    "seed",
    "grid x block",
    "median ms",
    "GB/s",
    "% of memcpy",
    "floor ms",
    "x floor",
    "access ratio",
    "speedup vs basic",
    "max rel err",
    "verdict",
];

/// Adds a verified, timed variant to a variants table (cells as in [`HEADER`]): `basic` is
/// the median ms of the basic kernel (the speedup's base), `floor` the table's floor.
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
    let to_floor = floor.ratio(trial.timing.median_ms);
    let gbps = trial.gbps();
    let cells = [
        trial.measurement.variant.clone(),
        seed.to_string(),
        trial.grid_block(),
        format!("{:.3}", trial.timing.median_ms),
        format!("{gbps:.1}"),
        format!("{:.1}%", ceiling.percent(gbps)),
        format!("{:.3}", floor.ms()),
        format!("{to_floor:.2}x"),
        format!("{access_ratio:.2}"),
        format!("{speedup:.2}x"),
        format!("{:.1e}", trial.check.max_relative_error),
        trial.verdict(),
    ];
    let m = trial
        .measurement
        .extra("floor_ms", floor.ms())
        .extra("ratio_to_floor", to_floor)
        .extra("access_ratio", access_ratio)
        .extra("speedup_vs_basic", speedup);
    table.measured_row(cells, m);
}

/// The floor of a table (one size and mask width), and the line that explains it.
fn floor_line(
    gpu: &Gpu,
    out: &mut Out,
    ceiling: &Ceiling,
    outputs: usize,
    mask_width: usize,
    dims: u32,
) -> Result<Floor> {
    let fp32 = Fp32Throughput::of(gpu)?;
    let floor = timing::conv_floor(outputs, mask_width, dims, ceiling, &fp32);
    out.line(format!(
        "floor: {:.3} ms ({}-bound) = max(memory {:.3} ms: 1 read + 1 write at this run's memcpy {:.1} GB/s, \
         FMA {:.3} ms: {mask_width}^{dims} x {outputs} FMAs at {} SMs x {} FP32 lanes x {} MHz)",
        floor.ms(),
        floor.bound(),
        floor.memory_ms,
        ceiling.gbps,
        floor.fma_ms,
        fp32.sm_count,
        fp32.lanes_per_sm,
        fp32.sm_clock_khz / 1000
    ));
    Ok(floor)
}

/// Side of the generated test picture when no `--image` is given.
const PICTURE: (usize, usize) = (480, 640);

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
    let floor = floor_line(gpu, out, &ceiling, size, mask_width, 1)?;

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
                    out.dump(&format!("output_{name}"), &[], &got)?;
                    Ok(convolution::compare(&got, &reference))
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

/// `demo conv2d`: the timed table on a random `rows x cols` image with a random `mask_width`
/// mask, then a real (or generated) picture filtered with a named mask.
fn run_2d(gpu: &Gpu, opts: &Options, out: &mut Out, args: &Conv2d) -> Result<()> {
    let Conv2d {
        rows,
        cols,
        mask_width,
        ..
    } = *args;
    convolution::validate_mask_width(2, mask_width)?;
    let n = rows * cols;
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mask_values: Vec<f32> = (0..mask_width * mask_width)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let shape = [rows as u64, cols as u64];
    out.dump("input", &shape, &input)?;
    out.dump(
        "mask",
        &[mask_width as u64, mask_width as u64],
        &mask_values,
    )?;
    let reference = convolution::reference_2d(&input, rows, cols, &mask_values, mask_width);
    let bytes = convolution::bytes_moved(n);
    let floor = floor_line(gpu, out, &ceiling, n, mask_width, 2)?;

    let mut table = Table::new(
        "variants",
        format!(
            "conv2d, {rows} x {cols} f32, {mask_width} x {mask_width} mask (random, in __constant__ memory; in global memory for the basic kernel), \
             {:.0} MiB moved per launch (1 read + 1 write), {} reps; access ratio = loads of N by the untiled kernels / by this one (seed 3.2 in 2D)",
            bytes as f64 / (1 << 20) as f64,
            opts.reps
        ),
        ChartKind::Bars,
        HEADER,
    );
    out.headline("variants", &variant_name(Variant2d::Convolution2dTiledVec4));
    let (mut failures, mut basic_ms) = (0, None);
    {
        let mask = Mask2d::new(gpu, &mask_values, mask_width)?;
        let d_in = gpu.upload(&input)?;
        for variant in Variant2d::ALL {
            let name = variant_name(variant);
            let mut d_out = gpu.poisoned(n, f32::NAN)?;
            let entry = variant.entry(mask_width);
            let trial = Plan::new(gpu, opts, &name, entry)
                .bytes(bytes, Some(&ceiling))
                .run(
                    &mut d_out,
                    |d_out| convolution::conv2d_with(gpu, variant, &d_in, &mask, d_out, rows, cols),
                    |d_out, _| {
                        let got = gpu.download(d_out, entry)?;
                        out.dump(&format!("output_{name}"), &shape, &got)?;
                        Ok(convolution::compare(&got, &reference))
                    },
                )?;
            failures += !trial.passed() as usize;
            let basic = *basic_ms.get_or_insert(trial.timing.median_ms);
            let access_ratio = variant.access_ratio(mask_width);
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
    }
    out.table(table);
    failures += filter_picture(gpu, opts, out, args)? as usize;
    if failures > 0 {
        bail!("{failures} conv2d run(s) disagree with the CPU reference");
    }
    Ok(())
}

/// Filters the `--image` PNG (or the generated picture) with the named mask on the GPU, checks
/// it against the CPU, writes `--image-out` if given; reports it as the table `image`. Returns
/// whether the check failed.
fn filter_picture(gpu: &Gpu, opts: &Options, out: &mut Out, args: &Conv2d) -> Result<bool> {
    let (picture, rows, cols, source) = match args.image.as_deref() {
        Some(path) => {
            let (p, r, c) = load_luma(path)?;
            (p, r, c, path.display().to_string())
        }
        None => {
            let (r, c) = PICTURE;
            (test_picture(r, c), r, c, "generated test picture".into())
        }
    };
    let shape = [rows as u64, cols as u64];
    out.dump("image_input", &shape, &picture)?;
    let (w, values) = args.mask.values();
    let variant = Variant2d::Convolution2dTiledVec4;
    let entry = variant.entry(w);
    let mask = Mask2d::new(gpu, &values, w)?;
    let d_in = gpu.upload(&picture)?;
    let mut d_out = gpu.poisoned(picture.len(), f32::NAN)?;
    let mask_name = format!("{} ({w} x {w})", variant_name(args.mask));
    let mut got = Vec::new();
    let trial = Plan::new(gpu, opts, &mask_name, entry).run(
        &mut d_out,
        |d_out| convolution::conv2d_with(gpu, variant, &d_in, &mask, d_out, rows, cols),
        |d_out, _| {
            got = gpu.download(d_out, entry)?;
            out.dump("image_output", &shape, &got)?;
            Ok(convolution::compare(
                &got,
                &convolution::reference_2d(&picture, rows, cols, &values, w),
            ))
        },
    )?;
    let written = match args.image_out.as_deref() {
        Some(path) => {
            save_luma(path, &got, rows, cols, args.mask.is_derivative())?;
            format!(", written to {}", path.display())
        }
        None => String::new(),
    };
    let mut table = Table::new(
        "image",
        format!("image: {source} ({cols} x {rows}, grayscale){written}"),
        ChartKind::None,
        [
            "mask",
            "kernel",
            "grid x block",
            "median ms",
            "max rel err",
            "vs CPU",
        ],
    );
    let failed = !trial.passed();
    table.measured_row(
        [
            mask_name,
            entry.to_string(),
            trial.grid_block(),
            format!("{:.3}", trial.timing.median_ms),
            format!("{:.1e}", trial.check.max_relative_error),
            trial.verdict(),
        ],
        trial.measurement,
    );
    out.table(table);
    Ok(failed)
}

/// `(rows, cols)` of the picture `demo conv2d` filters: the `--image` file's, from its header
/// alone, or the generated picture's.
fn picture_dims(image: Option<&Path>) -> Result<(usize, usize)> {
    let Some(path) = image else {
        return Ok(PICTURE);
    };
    let (cols, rows) = image::ImageReader::open(path)
        .with_context(|| format!("opening {}", path.display()))?
        .with_guessed_format()?
        .into_dimensions()
        .with_context(|| format!("reading the size of {} (PNG expected)", path.display()))?;
    Ok((rows as usize, cols as usize))
}

/// Reads a PNG as grayscale floats in `[0, 1]`: `(pixels, rows, cols)`.
fn load_luma(path: &Path) -> Result<(Vec<f32>, usize, usize)> {
    let image = image::ImageReader::open(path)
        .with_context(|| format!("opening {}", path.display()))?
        .with_guessed_format()?
        .decode()
        .with_context(|| format!("decoding {} (PNG expected)", path.display()))?
        .to_luma32f();
    let (cols, rows) = image.dimensions();
    Ok((image.into_raw(), rows as usize, cols as usize))
}

/// Writes `values` (`rows x cols`) as an 8-bit grayscale PNG: clamped to `[0, 1]`, or for a
/// derivative mask the magnitude scaled by its maximum.
fn save_luma(path: &Path, values: &[f32], rows: usize, cols: usize, signed: bool) -> Result<()> {
    let peak = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let to_byte = |v: f32| -> u8 {
        let x = if signed {
            if peak > 0.0 { v.abs() / peak } else { 0.0 }
        } else {
            v
        };
        (x.clamp(0.0, 1.0) * 255.0).round() as u8
    };
    let pixels: Vec<u8> = values.iter().map(|&v| to_byte(v)).collect();
    let image = image::GrayImage::from_raw(cols as u32, rows as u32, pixels)
        .context("image size does not match its pixels")?;
    image
        .save_with_format(path, image::ImageFormat::Png)
        .with_context(|| format!("writing {}", path.display()))
}

/// A `rows x cols` grayscale test picture in `[0, 1]`: a horizontal gradient with a bright
/// disc, a dark square, a checkerboard and concentric rings, so that smoothing and edge masks
/// both have something to show.
fn test_picture(rows: usize, cols: usize) -> Vec<f32> {
    let mut p = Vec::with_capacity(rows * cols);
    for y in 0..rows {
        for x in 0..cols {
            let (u, v) = (x as f32 / cols as f32, y as f32 / rows as f32);
            let ring = ((u - 0.72).powi(2) + (v - 0.72).powi(2)).sqrt();
            let value = if (u - 0.28).powi(2) + (v - 0.35).powi(2) < 0.03 {
                1.0
            } else if (0.58..0.86).contains(&u) && (0.12..0.4).contains(&v) {
                0.0
            } else if ring < 0.2 {
                0.5 + 0.5 * (ring * 120.0).sin()
            } else if u < 0.45 && v > 0.68 {
                if (x / 16 + y / 16) % 2 == 0 { 0.9 } else { 0.1 }
            } else {
                0.2 + 0.6 * u
            };
            p.push(value);
        }
    }
    p
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

fn sweep_1d(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    for (shape, group) in by_shape(cases) {
        let n = shape[0];
        let mut admitted = Vec::new();
        for case in group {
            if sweep.admit(&case, |n| conv_footprint(&case, n))?.is_some() {
                admitted.push(case);
            }
        }
        let Some(first) = admitted.first() else {
            continue;
        };
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

fn sweep_2d(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    for (shape, group) in by_shape(cases) {
        let (rows, cols) = (shape[0], shape[1]);
        let mut admitted = Vec::new();
        for case in group {
            if sweep.admit(&case, |n| conv_footprint(&case, n))?.is_some() {
                admitted.push(case);
            }
        }
        let Some(first) = admitted.first() else {
            continue;
        };
        let n = rows * cols;
        let input = random_floats(sweep.seed_for(first, 0), n);
        let d_in = gpu.upload(&input)?;
        for case in admitted {
            let w = case.width.unwrap_or(1);
            let values = random_floats(sweep.seed_for(&case, 1), w * w);
            let mask = Mask2d::new(gpu, &values, w)?;
            let mut d_out = gpu.poisoned(n, f32::NAN)?;
            let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT);
            let variant = Variant2d::fastest(cols, aligned);
            let kernel = variant.entry(w);
            let launch = variant.launch_config(gpu, rows, cols, w)?;
            let floor = timing::conv_floor(n, w, 2, sweep.copy(), sweep.fp32());
            let input = &input;
            sweep.measure(
                case,
                kernel,
                convolution::bytes_moved(n),
                Some(floor),
                &mut d_out,
                |o| convolution::conv2d(gpu, &d_in, &mask, o, rows, cols).map(|()| launch),
                |o, _| {
                    let got = gpu.download(o, kernel)?;
                    Ok(compare_2d(&got, input, rows, cols, &values, w))
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

/// Runs `check(i)` for chunks `0..chunks` on every core and merges the comparisons in chunk
/// order; `check` returns the chunk's first output index and its comparison.
fn parallel_compare(
    chunks: usize,
    check: impl Fn(usize) -> (usize, Comparison) + Sync,
) -> Comparison {
    let next = AtomicUsize::new(0);
    let parts = Mutex::new(Vec::with_capacity(chunks));
    std::thread::scope(|s| {
        for _ in 0..check_threads().min(chunks.max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= chunks {
                        break;
                    }
                    let part = check(i);
                    parts
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((i, part));
                }
            });
        }
    });
    let mut parts = parts.into_inner().unwrap_or_else(|p| p.into_inner());
    parts.sort_by_key(|(i, _)| *i);
    merge(parts.into_iter().map(|(_, p)| p))
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

/// As [`compare_1d`] for a `rows x cols` image and a `w x w` mask, in bands of rows (each
/// band's reference on the band and `r` rows above and below, clipped to the image).
fn compare_2d(
    got: &[f32],
    input: &[f32],
    rows: usize,
    cols: usize,
    mask: &[f32],
    w: usize,
) -> Comparison {
    compare_2d_in(got, input, (rows, cols), (mask, w), CHECK_CHUNK)
}

/// [`compare_2d`] in bands of about `chunk` outputs (whole rows, at least one).
fn compare_2d_in(
    got: &[f32],
    input: &[f32],
    (rows, cols): (usize, usize),
    (mask, w): (&[f32], usize),
    chunk: usize,
) -> Comparison {
    let r = w / 2;
    if got.len() != input.len() {
        return length_mismatch(got.len(), input.len());
    }
    if cols == 0 {
        return merge(std::iter::empty());
    }
    let band = (chunk / cols).max(1);
    parallel_compare(rows.div_ceil(band), |i| {
        let (a, b) = (i * band, ((i + 1) * band).min(rows));
        let (lo, hi) = (a.saturating_sub(r), (b + r).min(rows));
        let window =
            convolution::reference_2d(&input[lo * cols..hi * cols], hi - lo, cols, mask, w);
        let (from, to) = ((a - lo) * cols, (b - lo) * cols);
        (
            a * cols,
            convolution::compare(&got[a * cols..b * cols], &slice(&window, from, to)),
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
        assert_eq!(cases.len(), convolution::MAX_MASK_WIDTH_2D / 2 + 1);
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
        for w in [1, 5, 9] {
            let mask = random_floats(4, w * w);
            let whole = convolution::reference_2d(&image, rows, cols, &mask, w);
            let mut got: Vec<f32> = whole.values.iter().map(|&v| v as f32).collect();
            let check = |got: &[f32]| compare_2d_in(got, &image, (rows, cols), (&mask, w), chunk);
            assert!(check(&got).result.is_ok(), "w {w}");
            // A mismatch in a later band, at a band edge.
            let band = chunk / cols;
            got[band * cols + 7] = f32::NAN;
            let c = check(&got);
            assert_eq!(c.result.unwrap_err().index, band * cols + 7);
            assert!(c.max_relative_error.is_nan());
        }
    }
}
