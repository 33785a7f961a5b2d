//! The byte-histogram tables of `demo histogram`: the ladder, the inputs and the shared-memory
//! atomics.

use anyhow::Result;
use cpu::histogram::{self, Counter, Update, ladder};
use cpu::verify;

use super::*;
use crate::engine::harness::{Plan, Trial};
use crate::engine::out::Out;
use crate::engine::registry::variant_name;
use crate::engine::report::{ChartKind, Table};

/// `x` atomics per byte: three significant figures.
pub(super) fn per_byte(x: f64) -> String {
    if x == 0.0 || x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.2e}")
    }
}

/// Bins holding at least one count, and the share of the largest bin.
pub(super) fn spread(counts: &[u64]) -> (usize, f64) {
    let total: u64 = counts.iter().sum();
    let used = counts.iter().filter(|&&c| c > 0).count();
    let top = counts.iter().copied().max().unwrap_or(0);
    (used, 100.0 * top as f64 / total.max(1) as f64)
}

/// The columns the ladder and the inputs tables share.
pub(super) fn bytes_header(last: &'static str) -> [&'static str; 9] {
    [
        "variant",
        "input",
        "grid x block",
        "median ms",
        "GB/s",
        "% of read ceiling",
        "atomics / byte",
        last,
        "verdict",
    ]
}

/// One row of the ladder or the inputs table.
pub(super) fn bytes_row(
    table: &mut Table,
    bench: &Bench,
    trial: Trial<Result<(), verify::Mismatch>>,
    (label, input): (&str, &str),
    atomics: f64,
    speedup: Option<f64>,
) {
    let gbps = trial.gbps();
    let read = 100.0 * gbps / bench.read.gbps;
    table.measured_row(
        [
            label.to_string(),
            input.to_string(),
            trial.grid_block(),
            format!("{:.4}", trial.timing.median_ms),
            format!("{gbps:.1}"),
            format!("{read:.1}%"),
            per_byte(atomics),
            speedup.map_or("-".into(), |s| format!("{s:.2}x")),
            trial.verdict(),
        ],
        trial
            .measurement
            .extra("percent_of_read_ceiling", read)
            .extra("atomics_per_byte", atomics),
    );
}

/// Every step of the ladder on the `--input` bytes: returns the failed checks.
pub(super) fn ladder_table(bench: &mut Bench, out: &mut Out, args: &Histogram) -> Result<usize> {
    let n = args.size;
    let input = make_input(args.input, args.file.as_deref(), bench.opts.seed, n)?;
    let expected = expected_bytes(&input.bytes);
    let (used, top) = spread(&expected);
    let d_in = bench.gpu.upload(&input.bytes)?;
    out.dump("input", &[], &input.bytes)?;
    drop(input.bytes);
    let mut table = Table::new(
        "ladder",
        format!(
            "histogram of {n} bytes into 256 u32 bins ({}; {used} bins used, the largest {top:.1}% of the bytes), \
             median of {} reps, L2 flushed before each; GB/s = bytes read / time; atomics / byte: \
             global + shared atomics per input byte on uniform bytes (the variant's formula)",
            input.what, bench.opts.reps
        ),
        ChartKind::Bars,
        bytes_header("speedup"),
    );
    let mut failures = 0;
    let mut previous: Option<f64> = None;
    let short = variant_name(args.input);
    for variant in ladder::Variant::ALL {
        let name = variant_name(variant);
        let gpu = bench.gpu;
        let trial = bench.bytes_trial(
            out,
            (&name, variant.kernel_name(), &dump::ladder_output(variant)),
            &expected,
            None,
            |counts| ladder::run(gpu, variant, &d_in, counts),
            n as u64,
        )?;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        let atomics = variant.atomics_per_byte(n, &trial.cfg);
        let speedup = previous.map(|p| p / ms);
        bytes_row(&mut table, bench, trial, (&name, &short), atomics, speedup);
        previous = Some(ms);
    }
    out.table(table);
    Ok(failures)
}

/// `histogram::bytes` on every input kind (the file's where one is given), and once adding
/// to counts already there: returns the failed checks.
pub(super) fn inputs_table(bench: &mut Bench, out: &mut Out, args: &Histogram) -> Result<usize> {
    let n = args.size;
    let mut table = Table::new(
        "inputs",
        format!(
            "histogram::bytes on {n} bytes of each input, median of {} reps, L2 flushed before each; \
             atomics / byte as on uniform bytes; vs uniform: uniform's time over this one's",
            bench.opts.reps
        ),
        ChartKind::Bars,
        bytes_header("vs uniform"),
    );
    let mut kinds = vec![InputKind::Uniform, InputKind::Constant, InputKind::Zipf];
    if args.input.reads_file() {
        kinds.push(args.input);
    }
    let kernel = ladder::Variant::Bytes.kernel_name();
    let mut failures = 0;
    let mut uniform_ms = None;
    for (i, kind) in kinds.iter().copied().enumerate() {
        let input = make_input(kind, args.file.as_deref(), bench.opts.seed ^ 1, n)?;
        let expected = expected_bytes(&input.bytes);
        let (used, top) = spread(&expected);
        let d_in = bench.gpu.upload(&input.bytes)?;
        let short = variant_name(kind);
        out.dump(&dump::bytes_input(&short), &[], &input.bytes)?;
        drop(input.bytes);
        let gpu = bench.gpu;
        // Uniform three times: overwriting the counts, adding to counts of 1 each, and into
        // u64 counts (`histogram_bytes_u64`, which takes inputs past u32::MAX bytes).
        let updates: &[(Update, Option<u32>, bool)] = if i == 0 {
            &[
                (Update::Overwrite, None, false),
                (Update::Accumulate, Some(1), false),
                (Update::Overwrite, None, true),
            ]
        } else {
            &[(Update::Overwrite, None, false)]
        };
        for &(update, start, wide) in updates {
            let label = match (update, wide) {
                (_, true) => "bytes (u64 counts)".to_string(),
                (Update::Overwrite, _) => "bytes".to_string(),
                (Update::Accumulate, _) => "bytes (Update::Accumulate)".to_string(),
            };
            let dump = dump::bytes_output(&short, update == Update::Accumulate);
            let name = format!("{label} [{short}]");
            let trial = if wide {
                bench.bytes_trial::<u64>(
                    out,
                    (&name, u64::BYTES.name(), &dump::bytes_output_u64(&short)),
                    &expected,
                    start,
                    |counts| histogram::bytes_with(gpu, &d_in, counts, update),
                    n as u64,
                )?
            } else {
                bench.bytes_trial::<u32>(
                    out,
                    (&name, kernel, &dump),
                    &expected,
                    start,
                    |counts| histogram::bytes_with(gpu, &d_in, counts, update),
                    n as u64,
                )?
            };
            failures += !trial.passed() as usize;
            let ms = trial.timing.median_ms;
            let atomics = ladder::Variant::Bytes.atomics_per_byte(n, &trial.cfg);
            let vs = uniform_ms.map(|u: f64| u / ms);
            uniform_ms.get_or_insert(ms);
            let what = format!("{} ({used} bins, top {top:.1}%)", input.what);
            bytes_row(&mut table, bench, trial, (&label, &what), atomics, vs);
        }
    }
    out.table(table);
    // The summary's row for this pattern: the entry point on uniform bytes.
    out.headline("inputs", "bytes [uniform]");
    Ok(failures)
}

/// Shared atomics each thread of the microbenchmark issues: `--size / 2^14`, from 16 to 4096
/// (4096 at the default size: a launch of a fraction of a millisecond on an H100 without
/// conflicts; small sizes, as the sanitizer runs, stay small).
pub(super) fn atomic_iterations(size: usize) -> u32 {
    (size >> 14).clamp(16, 4096) as u32
}

/// The shared-memory atomic microbenchmark (`ladder::shared_atomic_rate`): each pattern's
/// atomics per second, per SM and per SM clock, and the bytes per second they allow at one
/// atomic per byte, beside the read-only ceiling. The sink (one launch's sum of each block's
/// word 0) is checked where the pattern predicts it.
pub(super) fn shared_atomics(bench: &Bench, out: &mut Out, size: usize) -> Result<usize> {
    let gpu = bench.gpu;
    let sms = gpu.sm_count()?;
    let clock_khz = gpu.sm_clock_khz()?;
    let iterations = atomic_iterations(size);
    let kernel = gpu::histogram::bytes::histogram_shared_atomic_rate.name();
    let mut table = Table::new(
        "shared-atomics",
        format!(
            "shared-memory atomics (red.shared.add.u32), one wave of blocks of {} threads, {iterations} per thread, \
             median of {} reps; {sms} SMs at {} MHz; GB/s at one atomic per byte = atomics/s / 1e9",
            gpu::histogram::ATOMIC_RATE_BLOCK,
            bench.opts.reps,
            clock_khz / 1000
        ),
        ChartKind::Bars,
        [
            "pattern",
            "grid x block",
            "median ms",
            "atomics / s / SM",
            "atomics / SM clock",
            "GB/s at 1 atomic / byte",
            "% of read ceiling",
            "sink",
        ],
    )
    .chart_extra("atomics_per_sm_clock");
    let mut failures = 0;
    for pattern in ladder::AtomicPattern::ALL {
        let mut sink = gpu.zeros::<u32>(1)?;
        let mut atomics = 0u64;
        let trial = Plan::new(gpu, bench.opts, variant_name(pattern), kernel).run(
            &mut sink,
            |sink| {
                let launch = ladder::shared_atomic_rate(gpu, pattern, iterations, sink)?;
                atomics = launch.atomics;
                Ok(launch.config)
            },
            |sink, cfg| {
                let sink = gpu.download(sink, kernel)?;
                out.verify(&dump::shared_atomics_output(pattern), &[], &sink, |_| ())?;
                let got = sink[0];
                // Each block adds its word 0: `iterations` from lane 0 of warp 0 when every lane
                // has its own bank, 32 times that when every lane hits word 0.
                let per_block = match pattern {
                    ladder::AtomicPattern::DistinctBanks => Some(iterations),
                    ladder::AtomicPattern::OneAddress => Some(32u32.wrapping_mul(iterations)),
                    ladder::AtomicPattern::RandomBins => None,
                };
                Ok(match per_block {
                    Some(p) => verify::exact(&[got], &[p.wrapping_mul(cfg.grid_dim.0)]),
                    None => Ok(()),
                })
            },
        )?;
        failures += !trial.passed() as usize;
        let per_second = atomics as f64 / (trial.timing.median_ms * 1e-3);
        let per_sm = per_second / f64::from(sms);
        let per_clock = per_sm / (f64::from(clock_khz) * 1e3);
        let gbps = per_second / 1e9;
        let read = 100.0 * gbps / bench.read.gbps;
        let sink = match (pattern, trial.check.as_ref()) {
            (ladder::AtomicPattern::RandomBins, _) => "not predicted".to_string(),
            (_, Ok(())) => "PASS".to_string(),
            (_, Err(m)) => format!("FAIL: {m}"),
        };
        table.measured_row(
            [
                variant_name(pattern),
                trial.grid_block(),
                format!("{:.4}", trial.timing.median_ms),
                format!("{per_sm:.3e}"),
                format!("{per_clock:.2}"),
                format!("{gbps:.1}"),
                format!("{read:.1}%"),
                sink,
            ],
            trial
                .measurement
                .extra("atomics_per_second", per_second)
                .extra("atomics_per_sm_clock", per_clock)
                .extra("percent_of_read_ceiling", read),
        );
    }
    out.table(table);
    Ok(failures)
}
