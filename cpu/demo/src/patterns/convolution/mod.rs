//! `demo conv1d` and `demo conv2d`: their definitions ([`conv1d`], [`conv2d`]: arguments,
//! `impl Pattern`, footprints, runs), the 2D tables' bench (here), the seed's tables
//! ([`tables`]), the mask parser and `.npy` loader ([`masks`]), the picture input and output
//! ([`picture`]), the CPU checks ([`check`]) and the sweeps ([`sweep`]).

mod check;
mod conv1d;
mod conv2d;
mod masks;
mod picture;
mod sweep;
mod tables;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use check::*;
pub(crate) use conv1d::Conv1d;
pub(crate) use conv2d::Conv2d;
use conv2d::*;
use cpu::Gpu;
use cpu::convolution::{
    self, Comparison, Factors, Mask1d, Mask2d, Reference, Variant1d, Variant2d,
};
use cpu::lab::memory::fma_stream::{self, FmaStream};
use cpu::launch::{VEC4_ALIGNMENT, is_aligned};
use cpu::verify::Mismatch;
use cudarc::driver::CudaSlice;
use masks::*;
use sweep::*;
use tables::*;

use crate::engine::harness::{Footprint, Plan, SMALL, Trial};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::variant_name;
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::sweep::{Case, Sweep, random_floats};
use crate::engine::timing::{self, Ceiling, Floor, Fp32Throughput};

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
    use crate::engine::registry::Pattern;

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
