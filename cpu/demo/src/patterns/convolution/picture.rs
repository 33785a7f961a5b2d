//! The picture `demo conv2d` filters (the table `image`): an `--image` PNG or a generated test
//! picture, filtered with `--mask` through the kernel `conv2d` picks, checked against the CPU,
//! written to `--image-out`.

use std::path::Path;

use anyhow::{Context, Result};
use cpu::Gpu;
use cpu::convolution::{self, Variant2d};
use cpu::launch::{VEC4_ALIGNMENT, is_aligned};

use super::{CheckMask, Conv2d, MaskArg, NamedMask, reference_2d_parallel};
use crate::engine::harness::Plan;
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Table};

/// Side of the generated test picture when no `--image` is given.
const PICTURE: (usize, usize) = (480, 640);

/// Filters the `--image` PNG (or the generated picture) with `--mask` (sobel-x without one)
/// on the GPU through the kernel `conv2d` picks, checks it against the CPU, writes
/// `--image-out` if given; reports it as the table `image`. Returns whether the check failed.
pub(super) fn filter_picture(
    gpu: &Gpu,
    opts: &Options,
    out: &mut Out,
    args: &Conv2d,
) -> Result<bool> {
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
    let named = MaskArg::Named(NamedMask::SobelX);
    let spec = args.mask.as_ref().unwrap_or(&named);
    let mask = spec.device(gpu)?;
    let w = mask.width();
    out.dump("image_mask", &[w as u64; 2], mask.values())?;
    let d_in = gpu.upload(&picture)?;
    let variant = Variant2d::choose(
        &mask,
        rows,
        cols,
        is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT),
    );
    let entry = variant.entry(w);
    let mut d_out = gpu.poisoned(picture.len(), f32::NAN)?;
    let mask_name = format!("{spec} ({w} x {w})");
    let reference = reference_2d_parallel(&picture, (rows, cols), CheckMask::of(&mask));
    let mut got = Vec::new();
    let trial = Plan::new(gpu, opts, &mask_name, entry).run(
        &mut d_out,
        |d_out| convolution::conv2d_with(gpu, variant, &d_in, &mask, d_out, rows, cols),
        |d_out, _| {
            got = gpu.download(d_out, entry)?;
            out.verify("image_output", &shape, &got, |got| {
                convolution::compare(got, &reference)
            })
        },
    )?;
    let written = match args.image_out.as_deref() {
        Some(path) => {
            save_luma(path, &got, rows, cols, spec.is_derivative(&mask))?;
            format!(", written to {}", path.display())
        }
        None => String::new(),
    };
    let mut table = Table::new(
        "image",
        format!(
            "image: {source} ({cols} x {rows}, grayscale){written}; the kernel conv2d picks for the mask"
        ),
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
pub(super) fn picture_dims(image: Option<&Path>) -> Result<(usize, usize)> {
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
