//! `demo conv1d` and `demo conv2d`.

use std::path::Path;

use crate::harness::{Footprint, Plan, SMALL, Trial, array, elements, require_memory};
use crate::report::{ChartKind, Table};
use crate::timing::{self, Ceiling, Floor, Fp32Throughput};
use anyhow::{Context, Result, bail};
use cpu::Gpu;
use cpu::convolution::{self, Comparison, Mask1d, Mask2d, NamedMask, Variant1d, Variant2d};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Cli, Out, variant_name};

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

pub fn run_1d(gpu: &Gpu, cli: &Cli, out: &mut Out, size: usize, mask_width: usize) -> Result<()> {
    convolution::validate_mask_width(1, mask_width)?;
    require_memory(gpu, &footprint_1d(size))?;
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
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
            cli.reps
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
        let trial = Plan::new(gpu, cli, &name, entry)
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

/// What `demo conv2d` runs: the timed table on a random `rows x cols` image with a random
/// `mask_width` mask, then a real (or generated) picture filtered with a named mask.
pub struct Conv2dArgs<'a> {
    pub rows: usize,
    pub cols: usize,
    pub mask_width: usize,
    pub image: Option<&'a Path>,
    pub mask: NamedMask,
    pub out: Option<&'a Path>,
}

pub fn run_2d(gpu: &Gpu, cli: &Cli, out: &mut Out, args: Conv2dArgs) -> Result<()> {
    let Conv2dArgs {
        rows,
        cols,
        mask_width,
        ..
    } = args;
    convolution::validate_mask_width(2, mask_width)?;
    require_memory(gpu, &footprint_2d(rows, cols, picture_dims(args.image)?)?)?;
    let n = rows * cols;
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
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
            cli.reps
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
            let trial = Plan::new(gpu, cli, &name, entry)
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
    failures += filter_picture(gpu, cli, out, &args)? as usize;
    if failures > 0 {
        bail!("{failures} conv2d run(s) disagree with the CPU reference");
    }
    Ok(())
}

/// Filters the `--image` PNG (or the generated picture) with the named mask on the GPU, checks
/// it against the CPU, writes `--image-out` if given; reports it as the table `image`. Returns
/// whether the check failed.
fn filter_picture(gpu: &Gpu, cli: &Cli, out: &mut Out, args: &Conv2dArgs) -> Result<bool> {
    let (picture, rows, cols, source) = match args.image {
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
    let trial = Plan::new(gpu, cli, &mask_name, entry).run(
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
    let written = match args.out {
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
