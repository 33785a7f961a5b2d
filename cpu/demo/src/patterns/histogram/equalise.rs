//! `demo histogram --image IN.png --equalise OUT.png`: the picture's histogram on the GPU, the
//! lookup table from it, applied, against an all-CPU equalisation.

use std::path::Path;

use anyhow::{Context, Result, bail};
use cpu::histogram::{self, Update, ladder, reference};
use cpu::verify;

use super::{Bench, POISON, check_counts, expected_bytes, load_grey};
use crate::engine::harness::Plan;
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Table};

/// `lut` applied to every pixel.
fn apply(lut: &[u8; 256], pixels: &[u8]) -> Vec<u8> {
    pixels.iter().map(|&p| lut[p as usize]).collect()
}

/// `(min, max)` of the pixels.
fn range(pixels: &[u8]) -> (u8, u8) {
    pixels
        .iter()
        .fold((u8::MAX, u8::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)))
}

/// Histogram-equalises the PNG `image` (its grey levels): the histogram on the GPU
/// (`histogram::bytes`, timed), the lookup table from it (`reference::equalise_lut`), applied;
/// checked against an all-CPU equalisation; written to `path`. Reported as the table
/// `equalise`; returns the failed checks.
pub(super) fn equalise(
    bench: &mut Bench,
    out: &mut Out,
    image: &Path,
    path: &Path,
) -> Result<usize> {
    let (pixels, cols, rows) = load_grey(image)?;
    if pixels.is_empty() {
        bail!("demo histogram: {} has no pixels", image.display());
    }
    let gpu = bench.gpu;
    let shape = [rows as u64, cols as u64];
    out.dump("image_input", &shape, &pixels)?;
    let expected = expected_bytes(&pixels);
    let d_in = gpu.upload(&pixels)?;
    let kernel = ladder::Variant::Bytes.kernel_name();
    let mut counts = gpu.poisoned(histogram::BYTE_BINS, POISON)?;
    let mut got = Vec::new();
    let trial = Plan::new(gpu, bench.opts, "histogram::bytes", kernel)
        .bytes(pixels.len() as u64, Some(&bench.copy))
        .run(
            &mut counts,
            |counts| histogram::bytes_with(gpu, &d_in, counts, Update::Overwrite),
            |counts, _| {
                got = gpu.download(counts, kernel)?;
                out.verify("image_counts", &[], &got, |got| {
                    check_counts(got, &expected)
                })
            },
        )?;
    let equalised = apply(&reference::equalise_lut(&got), &pixels);
    let all_cpu = reference::equalise(&pixels);
    let check = out.verify("image_output", &shape, &equalised, |equalised| {
        trial
            .check
            .clone()
            .and_then(|()| verify::exact(equalised, &all_cpu))
    })?;
    let failed = check.is_err() as usize;
    image::GrayImage::from_raw(cols as u32, rows as u32, equalised.clone())
        .context("image size does not match its pixels")?
        .save_with_format(path, image::ImageFormat::Png)
        .with_context(|| format!("writing {}", path.display()))?;
    let levels = |p: &[u8]| {
        let mut seen = [false; 256];
        p.iter().for_each(|&x| seen[x as usize] = true);
        seen.iter().filter(|&&s| s).count()
    };
    let (lo, hi) = range(&pixels);
    let (elo, ehi) = range(&equalised);
    let mut table = Table::new(
        "equalise",
        format!(
            "histogram equalisation of {} ({cols} x {rows} grey): counts on the GPU (histogram::bytes), \
             lookup table round((cdf(v) - cdf_min) / (N - cdf_min) * 255), applied, against an all-CPU \
             equalisation; written to {}",
            image.display(),
            path.display()
        ),
        ChartKind::None,
        [
            "step",
            "pixels",
            "grey range before -> after",
            "levels used before -> after",
            "grid x block",
            "histogram median ms",
            "vs CPU",
        ],
    );
    table.measured_row(
        [
            "histogram::bytes + LUT".to_string(),
            pixels.len().to_string(),
            format!("{lo}..{hi} -> {elo}..{ehi}"),
            format!("{} -> {}", levels(&pixels), levels(&equalised)),
            trial.grid_block(),
            format!("{:.4}", trial.timing.median_ms),
            crate::engine::harness::verdict(&check),
        ],
        trial.measurement.passed(check.is_ok()),
    );
    out.table(table);
    Ok(failed)
}
