//! One runner per pattern: each case's inputs made and uploaded, the library's entry point
//! launched once and its output checked against the library's CPU reference, then timed with
//! the L2 flushed before every launch ([`Plan::run_with_setup`]).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use cpu::Gpu;
use cpu::convolution::{self, Comparison, Mask1d, Mask2d, Reference, Variant1d, Variant2d};
use cpu::error::DriverContext;
use cpu::launch::{VEC4_ALIGNMENT, is_aligned};
use cpu::reduce::{ReduceSum, SumF32, SumI32, SumKind, reference};
use cpu::verify::Mismatch;
use cpu::{transpose, vector_add, verify};
use cudarc::driver::LaunchConfig;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::peers::{self, PeerRow};
use super::{
    Case, CaseError, Ceilings, FloorRecord, Row, SameSizeCopy, Skipped, SweepPattern, cases,
};
use crate::Cli;
use crate::harness::{self, Footprint, Plan, SMALL, Verdict, WARMUP};
use crate::timing::{self, Ceiling, Floor, Fp32Throughput, L2Flush};

/// Outputs per chunk of the parallel convolution checks (each chunk's `f64` reference and
/// scale, 16 bytes per output, exist only while it is compared).
const CHECK_CHUNK: usize = 1 << 20;

/// A sweep in progress: the device, the run's ceilings, the L2 flush, the peers' timings, and
/// the rows measured so far.
pub(super) struct Sweep<'a> {
    gpu: &'a Gpu,
    cli: &'a Cli,
    flush: L2Flush,
    copy: Ceiling,
    ceilings: &'a Ceilings,
    fp32: Fp32Throughput,
    peers: &'a [PeerRow],
    max_elements: Option<u64>,
    rows: Vec<Row>,
    skipped: Vec<Skipped>,
    errors: Vec<CaseError>,
}

impl<'a> Sweep<'a> {
    /// A sweep on `gpu` judged against `copy` (the copy ceiling, also in `ceilings`) and
    /// `fp32` (the peak the convolutions' FMA floor assumes, also in `ceilings`).
    ///
    /// # Errors
    /// If the flush buffer cannot be allocated.
    pub(super) fn new(
        gpu: &'a Gpu,
        cli: &'a Cli,
        copy: Ceiling,
        fp32: Fp32Throughput,
        ceilings: &'a Ceilings,
        peers: &'a [PeerRow],
        max_elements: Option<u64>,
    ) -> Result<Self> {
        Ok(Self {
            gpu,
            cli,
            flush: L2Flush::new(gpu)?,
            copy,
            ceilings,
            fp32,
            peers,
            max_elements,
            rows: Vec::new(),
            skipped: Vec::new(),
            errors: Vec::new(),
        })
    }

    /// The rows measured so far.
    pub(super) fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The cases whose entry point returned an error so far.
    pub(super) fn errors(&self) -> &[CaseError] {
        &self.errors
    }

    /// The rows, the skipped cases and the cases that ended in an error.
    pub(super) fn finish(self) -> (Vec<Row>, Vec<Skipped>, Vec<CaseError>) {
        (self.rows, self.skipped, self.errors)
    }

    /// Runs every case of `pattern` that fits.
    ///
    /// # Errors
    /// A library or driver error (a case whose output disagrees with the CPU is a failed row,
    /// not an error).
    pub(super) fn run(&mut self, pattern: SweepPattern) -> Result<()> {
        match pattern {
            SweepPattern::ReduceI32 => self.reduce_i32(),
            SweepPattern::ReduceF32 => self.reduce_f32(),
            SweepPattern::VectorAdd => self.vector_add(),
            SweepPattern::Transpose => self.transpose(),
            SweepPattern::Conv1d => self.conv1d(),
            SweepPattern::Conv2d => self.conv2d(),
        }
    }

    /// A line about a case: on stdout with the tables, else on stderr.
    fn note(&self, text: &str) {
        match self.cli.format {
            crate::Format::Table => println!("{text}"),
            _ => eprintln!("{text}"),
        }
    }

    /// A seed for `case`'s inputs: `--seed` mixed with the case, so every case gets its own.
    fn seed_for(&self, case: &Case, salt: u64) -> u64 {
        let key = format!("{} {:?} {:?} {salt}", case.pattern, case.shape, case.width);
        key.bytes().fold(self.cli.seed, |h, b| {
            h.wrapping_mul(0x100_0000_01b3).wrapping_add(u64::from(b))
        })
    }

    /// The element count of `case` if it runs: not beyond `--max-elements`, and `footprint(n)`
    /// fits comfortably ([`harness::roomy`]). Otherwise records and prints why not.
    fn admit(
        &mut self,
        case: &Case,
        footprint: impl Fn(usize) -> Footprint,
    ) -> Result<Option<usize>> {
        let reason = match case.elements() {
            None => Some("the element count overflows".to_string()),
            Some(n) => match self.max_elements {
                Some(max) if n as u64 > max => Some(format!("more than --max-elements {max}")),
                _ => harness::roomy(self.gpu, &footprint(n))?,
            },
        };
        match reason {
            None => Ok(case.elements()),
            Some(reason) => {
                self.note(&format!(
                    "sweep: {} {}: skipped: {reason}",
                    case.pattern,
                    case.label()
                ));
                self.skipped.push(Skipped {
                    case: case.clone(),
                    reason,
                });
                Ok(None)
            }
        }
    }

    /// Launches once through `launch` and checks the output with `verify`, then times
    /// `launch` (the L2 flushed before every warm-up and timed launch) and adds the row.
    /// `x` is what both closures work on (the output buffer, the workspace). An error from
    /// the entry point (a shape it refuses, a fault) is recorded as the case's error, and the
    /// sweep goes on.
    #[allow(clippy::too_many_arguments)]
    fn measure<X, V: Verdict>(
        &mut self,
        case: Case,
        kernel: &str,
        bytes: u64,
        floor: Option<Floor>,
        x: &mut X,
        mut launch: impl FnMut(&mut X) -> cpu::Result<LaunchConfig>,
        verify: impl FnOnce(&mut X, &LaunchConfig) -> Result<V>,
    ) -> Result<()> {
        let gpu = self.gpu;
        let mut state = (&mut self.flush, x);
        let trial = match Plan::new(gpu, self.cli, case.label(), kernel)
            .bytes(bytes, Some(&self.copy))
            .run_with_setup(
                &mut state,
                |s| s.0.flush(gpu),
                |s| launch(s.1),
                |s, cfg| verify(s.1, cfg),
            ) {
            Ok(trial) => trial,
            Err(e) => {
                let error = format!("{e:#}");
                self.note(&format!(
                    "sweep: {} {}: error: {error}",
                    case.pattern,
                    case.label()
                ));
                self.errors.push(CaseError {
                    case,
                    kernel: kernel.to_string(),
                    error,
                });
                return Ok(());
            }
        };
        let t = trial.timing;
        let gbps = t.gbps(bytes);
        let (gx, gy, gz) = trial.cfg.grid_dim;
        let (bx, by, bz) = trial.cfg.block_dim;
        let peers = peers::matching(self.peers, &case);
        let row = Row {
            elements: case.elements().unwrap_or_default() as u64,
            kernel: kernel.to_string(),
            grid: [gx, gy, gz],
            block: [bx, by, bz],
            median_ms: t.median_ms,
            min_ms: t.min_ms,
            max_ms: t.max_ms,
            reps: t.reps,
            bytes,
            gbps,
            percent_of_copy: 100.0 * gbps / self.copy.gbps,
            percent_of_read: 100.0 * gbps / self.ceilings.read.gbps,
            percent_of_theoretical: 100.0 * gbps / self.ceilings.theoretical_gbps,
            floor: floor.map(|f| FloorRecord {
                memory_ms: f.memory_ms,
                fma_ms: f.fma_ms,
                floor_ms: f.ms(),
                bound: f.bound().into(),
                ratio: f.ratio(t.median_ms),
            }),
            same_size_copy: None,
            max_error: trial.check.max_error(),
            passed: trial.passed(),
            verdict: trial.verdict(),
            peers,
            case,
        };
        eprintln!(
            "sweep: {} {}: {:.4} ms, {:.1} GB/s, {}",
            row.case.pattern,
            row.case.label(),
            row.median_ms,
            row.gbps,
            row.verdict
        );
        self.rows.push(row);
        Ok(())
    }

    fn reduce_i32(&mut self) -> Result<()> {
        let gpu = self.gpu;
        let mut sum = ReduceSum::<SumI32>::new(gpu)?;
        for case in cases(SweepPattern::ReduceI32) {
            let Some(n) = self.admit(&case, |n| reduce_footprint::<i32>(&case, n))? else {
                continue;
            };
            let mut input = vec![0i32; n];
            StdRng::seed_from_u64(self.seed_for(&case, 0)).fill(&mut input[..]);
            let expected = reference::sum_i32(&input);
            let d_input = gpu.upload(&input)?;
            drop(input);
            self.measure(
                case,
                SumI32::KERNEL_NAME,
                reference::bytes_read(n),
                None,
                &mut sum,
                |s| s.launch(gpu, &d_input),
                |s, _| Ok(crate::reduce::exact(s.result(gpu)?, expected)),
            )?;
        }
        Ok(())
    }

    fn reduce_f32(&mut self) -> Result<()> {
        let gpu = self.gpu;
        let mut sum = ReduceSum::<SumF32>::new(gpu)?;
        for case in cases(SweepPattern::ReduceF32) {
            let Some(n) = self.admit(&case, |n| reduce_footprint::<f32>(&case, n))? else {
                continue;
            };
            let input = random_floats(self.seed_for(&case, 0), n);
            let (expected, sum_abs) = reference::reference_f32(&input);
            let d_input = gpu.upload(&input)?;
            drop(input);
            // The error over the bound of this launch's rounding chain (below 1 passes).
            let check = move |got: f32, cfg: &LaunchConfig| {
                let depth = reference::reduce_sum_depth(n, cfg);
                let bound = reference::sum_error_bound(n, depth, f64::from(f32::EPSILON), sum_abs);
                let got = f64::from(got);
                (
                    reference::check_sum(got, expected, bound),
                    (got - expected).abs() / bound,
                )
            };
            self.measure(
                case,
                SumF32::KERNEL_NAME,
                reference::bytes_read(n),
                None,
                &mut sum,
                |s| s.launch(gpu, &d_input),
                |s, cfg| Ok(check(s.result(gpu)?, cfg)),
            )?;
        }
        Ok(())
    }

    fn vector_add(&mut self) -> Result<()> {
        let gpu = self.gpu;
        for case in cases(SweepPattern::VectorAdd) {
            // Device: x, y, z. Host: x, y, the output and the reference.
            let Some(n) = self.admit(&case, |n| {
                Footprint::new(format!("vector-add of {n} elements"))
                    .device::<f32>(3, n)
                    .host::<f32>(4, n)
            })?
            else {
                continue;
            };
            let x = random_floats(self.seed_for(&case, 0), n);
            let y = random_floats(self.seed_for(&case, 1), n);
            let (d_x, d_y) = (gpu.upload(&x)?, gpu.upload(&y)?);
            let mut d_z = gpu.poisoned(n, f32::NAN)?;
            let aligned = [gpu.address(&d_x), gpu.address(&d_y), gpu.address(&d_z)]
                .into_iter()
                .all(|a| is_aligned(a, VEC4_ALIGNMENT));
            let variant = vector_add::Variant::fastest(aligned);
            let (kernel, launch) = (variant.kernel_name(), variant.launch_config(gpu, n)?);
            self.measure(
                case,
                kernel,
                vector_add::bytes_moved(n),
                None,
                &mut d_z,
                |z| vector_add::add(gpu, &d_x, &d_y, z).map(|()| launch),
                |z, _| {
                    let got = gpu.download(z, kernel)?;
                    Ok(verify::exact(&got, &vector_add::reference(&x, &y)))
                },
            )?;
        }
        Ok(())
    }

    fn transpose(&mut self) -> Result<()> {
        let gpu = self.gpu;
        for case in cases(SweepPattern::Transpose) {
            let (rows, cols) = (case.shape[0], case.shape[1]);
            // Device: input and output. Host: input, output and reference.
            let Some(n) = self.admit(&case, |n| {
                Footprint::new(format!("transpose of {rows} x {cols}"))
                    .device::<f32>(2, n)
                    .host::<f32>(3, n)
            })?
            else {
                continue;
            };
            let input = random_floats(self.seed_for(&case, 0), n);
            let d_in = gpu.upload(&input)?;
            let mut d_out = gpu.poisoned(n, f32::NAN)?;
            let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT)
                && is_aligned(gpu.address(&d_out), VEC4_ALIGNMENT);
            let variant = transpose::Variant::fastest(rows, cols, aligned);
            let (kernel, launch) = (variant.kernel_name(), variant.launch_config(rows, cols)?);
            let label = case.clone();
            self.measure(
                case,
                kernel,
                transpose::bytes_moved(rows, cols),
                None,
                &mut d_out,
                |o| transpose::transpose(gpu, &d_in, o, rows, cols).map(|()| launch),
                |o, _| {
                    let got = gpu.download(o, kernel)?;
                    Ok(verify::exact(
                        &got,
                        &transpose::reference(&input, rows, cols),
                    ))
                },
            )?;
            // The copy of the same bytes, once the output has been checked.
            if let Some(row) = self.rows.last_mut().filter(|r| r.case == label) {
                let copy = timing::time_gpu_with_setup(
                    gpu,
                    "same-size device-to-device memcpy",
                    WARMUP,
                    self.cli.reps as usize,
                    &mut (&mut self.flush, &mut d_out),
                    |s| s.0.flush(gpu),
                    |s| {
                        gpu.stream()
                            .memcpy_dtod(&d_in, s.1)
                            .during("same-size device-to-device memcpy")
                    },
                )?;
                row.same_size_copy = Some(SameSizeCopy {
                    median_ms: copy.median_ms,
                    percent: 100.0 * copy.median_ms / row.median_ms,
                });
            }
        }
        Ok(())
    }

    /// The convolution cases grouped by shape (in order of first appearance): one input per
    /// shape, uploaded once for every mask width at it.
    fn by_shape(pattern: SweepPattern) -> Vec<(Vec<usize>, Vec<Case>)> {
        let mut groups: Vec<(Vec<usize>, Vec<Case>)> = Vec::new();
        for case in cases(pattern) {
            match groups.iter_mut().find(|(s, _)| *s == case.shape) {
                Some((_, g)) => g.push(case),
                None => groups.push((case.shape.clone(), vec![case])),
            }
        }
        groups
    }

    fn conv1d(&mut self) -> Result<()> {
        let gpu = self.gpu;
        let pattern = SweepPattern::Conv1d;
        for (shape, group) in Self::by_shape(pattern) {
            let n = shape[0];
            let mut admitted = Vec::new();
            for case in group {
                if self.admit(&case, |n| conv_footprint(&case, n))?.is_some() {
                    admitted.push(case);
                }
            }
            let Some(first) = admitted.first() else {
                continue;
            };
            let input = random_floats(self.seed_for(first, 0), n);
            let d_in = gpu.upload(&input)?;
            for case in admitted {
                let w = case.width.unwrap_or(1);
                let values = random_floats(self.seed_for(&case, 1), w);
                let mask = Mask1d::new(gpu, &values)?;
                let mut d_out = gpu.poisoned(n, f32::NAN)?;
                let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT)
                    && is_aligned(gpu.address(&d_out), VEC4_ALIGNMENT);
                let variant = Variant1d::fastest(aligned);
                let (kernel, launch) = (variant.entry(w), variant.launch_config(gpu, n, w)?);
                let floor = timing::conv_floor(n, w, 1, &self.copy, &self.fp32);
                let input = &input;
                self.measure(
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

    fn conv2d(&mut self) -> Result<()> {
        let gpu = self.gpu;
        let pattern = SweepPattern::Conv2d;
        for (shape, group) in Self::by_shape(pattern) {
            let (rows, cols) = (shape[0], shape[1]);
            let mut admitted = Vec::new();
            for case in group {
                if self.admit(&case, |n| conv_footprint(&case, n))?.is_some() {
                    admitted.push(case);
                }
            }
            let Some(first) = admitted.first() else {
                continue;
            };
            let n = rows * cols;
            let input = random_floats(self.seed_for(first, 0), n);
            let d_in = gpu.upload(&input)?;
            for case in admitted {
                let w = case.width.unwrap_or(1);
                let values = random_floats(self.seed_for(&case, 1), w * w);
                let mask = Mask2d::new(gpu, &values, w)?;
                let mut d_out = gpu.poisoned(n, f32::NAN)?;
                let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT);
                let variant = Variant2d::fastest(cols, aligned);
                let kernel = variant.entry(w);
                let launch = variant.launch_config(gpu, rows, cols, w)?;
                let floor = timing::conv_floor(n, w, 2, &self.copy, &self.fp32);
                let input = &input;
                self.measure(
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
}

/// Peak memory of a reduction case of `n` elements of `T`: the input on the device (and the
/// workspace's partials), the input on the host.
fn reduce_footprint<T>(case: &Case, n: usize) -> Footprint {
    Footprint::new(format!("{} of {n} elements", case.pattern))
        .device::<T>(1, n)
        .device_bytes(SMALL)
        .host::<T>(1, n)
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

/// `n` floats uniform in `[-1, 1)` from 24 random bits each (fast enough for 2^30 elements).
fn random_floats(seed: u64, n: usize) -> Vec<f32> {
    let mut bits = vec![0u32; n];
    StdRng::seed_from_u64(seed).fill(&mut bits[..]);
    bits.into_iter()
        .map(|b| (b >> 8) as f32 * (2.0 / (1u32 << 24) as f32) - 1.0)
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn random_floats_are_in_range_and_seeded() {
        let a = random_floats(9, 1000);
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)));
        assert_eq!(a, random_floats(9, 1000));
        assert_ne!(a, random_floats(10, 1000));
    }
}
