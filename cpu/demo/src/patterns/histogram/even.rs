//! The `even` table of `demo histogram`: `histogram::even` (CUB's `HistogramEven`) on u8, u16,
//! i32 and f32 samples into u32 and u64 counts, each row checked exactly against
//! `reference::even` and dumped.

use anyhow::Result;
use cpu::histogram::{self, Counter, HistogramElement, Update, reference};
use cpu::verify;
use cudarc::driver::CudaSlice;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{Bench, Histogram, POISON, dump, uniform_bytes};
use crate::engine::harness::Plan;
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::random_floats;

/// Bins a block's shared-memory histogram of `C` counters holds at most (12288 `u32`, 6144
/// `u64`): one more takes the global-atomics kernel.
pub(super) fn shared_limit_bins<C>() -> usize {
    gpu::histogram::EVEN_SHARED_LIMIT_BYTES / std::mem::size_of::<C>()
}

/// A counter type of the `even` table.
pub(super) trait EvenCounter: Counter + From<u32> + Into<u64> {
    const NAME: &'static str;
}

impl EvenCounter for u32 {
    const NAME: &'static str = "u32";
}

impl EvenCounter for u64 {
    const NAME: &'static str = "u64";
}

/// `[shared, global]` kernels of samples `T` into u32, then into u64 counts.
fn even_kernels_of<T: HistogramElement>() -> [&'static str; 4] {
    let [s32, g32] = u32::kernels::<T>();
    let [s64, g64] = u64::kernels::<T>();
    [s32.name(), g32.name(), s64.name(), g64.name()]
}

/// Every kernel behind `histogram::even`.
pub(super) fn even_kernels() -> Vec<&'static str> {
    [
        even_kernels_of::<u8>(),
        even_kernels_of::<u16>(),
        even_kernels_of::<i32>(),
        even_kernels_of::<f32>(),
    ]
    .concat()
}

/// `histogram::even` on u8, u16, i32 and f32 inputs of `--size` bytes each, with `--bins`,
/// 4096 and one more than the u32 shared-memory limit bins, into u32 and into u64 counts:
/// returns the failed checks.
pub(super) fn even_table(bench: &mut Bench, out: &mut Out, args: &Histogram) -> Result<usize> {
    let n = args.size;
    let mut bins = vec![args.bins];
    for b in [4096, shared_limit_bins::<u32>() + 1] {
        if !bins.contains(&b) {
            bins.push(b);
        }
    }
    let mut table = Table::new(
        "even",
        format!(
            "histogram::even (CUB's HistogramEven: equal-width bins over [lower, upper), values outside \
             and NaN dropped) on {n} bytes of each type, median of {} reps, L2 flushed before each; \
             a block privatises its bins in shared memory up to {} bytes of counters ({} u32, {} u64 bins), \
             global atomics beyond",
            bench.opts.reps,
            gpu::histogram::EVEN_SHARED_LIMIT_BYTES,
            shared_limit_bins::<u32>(),
            shared_limit_bins::<u64>(),
        ),
        ChartKind::Bars,
        [
            "samples",
            "range",
            "bins",
            "counts",
            "kernel",
            "grid x block",
            "median ms",
            "GB/s",
            "% of read ceiling",
            "verdict",
        ],
    );
    let seed = bench.opts.seed ^ 2;
    let mut failures = 0;
    let mut rng = StdRng::seed_from_u64(seed);
    failures += even_rows(
        bench,
        out,
        &mut table,
        &uniform_bytes(seed, n),
        &bins,
        (0, 256),
    )?;
    {
        let mut input = vec![0u16; (n / 2).max(1)];
        rng.fill(&mut input[..]);
        failures += even_rows(bench, out, &mut table, &input, &bins, (0, 65_536))?;
    }
    {
        let input: Vec<i32> = (0..(n / 4).max(1))
            .map(|_| rng.random_range(-1_100_000..1_100_000))
            .collect();
        failures += even_rows(
            bench,
            out,
            &mut table,
            &input,
            &bins,
            (-1_000_000, 1_000_000),
        )?;
    }
    {
        // [-1.1, 1.1) with a NaN every 4099 elements: the values outside [-1, 1) and the NaNs
        // are dropped.
        let input: Vec<f32> = random_floats(seed ^ 3, (n / 4).max(1))
            .into_iter()
            .enumerate()
            .map(|(i, x)| if i % 4099 == 7 { f32::NAN } else { 1.1 * x })
            .collect();
        failures += even_rows(bench, out, &mut table, &input, &bins, (-1.0, 1.0))?;
    }
    out.table(table);
    Ok(failures)
}

/// The `even` rows of one input: each bin count, into u32 and into u64 counts, against one
/// CPU reference per bin count.
fn even_rows<T: HistogramElement<Level: npyz::AutoSerialize> + npyz::AutoSerialize>(
    bench: &mut Bench,
    out: &Out,
    table: &mut Table,
    input: &[T],
    bins: &[usize],
    range: (T::Level, T::Level),
) -> Result<usize> {
    let ty = std::any::type_name::<T>();
    out.dump(&dump::even_input(ty), &[], input)?;
    out.dump(&dump::even_range(ty), &[], &[range.0, range.1])?;
    let d_in = bench.gpu.upload(input)?;
    let bytes = std::mem::size_of_val(input) as u64;
    let mut failures = 0;
    for &b in bins {
        let expected = reference::even(input, b, range.0, range.1);
        failures += even_row::<T, u32>(bench, out, table, (&d_in, bytes), b, range, &expected)?;
        failures += even_row::<T, u64>(bench, out, table, (&d_in, bytes), b, range, &expected)?;
    }
    Ok(failures)
}

/// One `even` row: `bins` bins over `[lower, upper)` of `d_in` (`bytes` long) into `C` counts,
/// dumped as `output_even_<type>_<bins>_<counts>`.
fn even_row<T: HistogramElement, C: EvenCounter + npyz::AutoSerialize>(
    bench: &mut Bench,
    out: &Out,
    table: &mut Table,
    (d_in, bytes): (&CudaSlice<T>, u64),
    bins: usize,
    (lower, upper): (T::Level, T::Level),
    expected: &[u64],
) -> Result<usize> {
    let gpu = bench.gpu;
    let label = format!("{} {bins} bins -> {}", std::any::type_name::<T>(), C::NAME);
    let kernel = histogram::even_config::<T, C>(gpu, d_in.len(), bins)?
        .0
        .name();
    let mut state = (gpu.poisoned(bins, C::from(POISON))?, &mut bench.flush);
    let trial = Plan::new(gpu, bench.opts, &label, kernel)
        .bytes(bytes, Some(&bench.copy))
        .run_with_setup(
            &mut state,
            |(_, flush)| flush.flush(gpu),
            |(counts, _)| histogram::even_with(gpu, d_in, lower, upper, counts, Update::Overwrite),
            |(counts, _), _| {
                let got = gpu.download(counts, kernel)?;
                let name = dump::even_output(std::any::type_name::<T>(), bins, C::NAME);
                out.verify(&name, &[], &got, |got| {
                    let got: Vec<u64> = got.iter().map(|&c| c.into()).collect();
                    verify::exact(&got, expected)
                })
            },
        )?;
    let gbps = trial.gbps();
    let read = 100.0 * gbps / bench.read.gbps;
    table.measured_row(
        [
            std::any::type_name::<T>().to_string(),
            format!("[{lower:?}, {upper:?})"),
            bins.to_string(),
            C::NAME.to_string(),
            kernel.to_string(),
            trial.grid_block(),
            format!("{:.4}", trial.timing.median_ms),
            format!("{gbps:.1}"),
            format!("{read:.1}%"),
            trial.verdict(),
        ],
        trial
            .measurement
            .clone()
            .extra("percent_of_read_ceiling", read),
    );
    Ok(!trial.passed() as usize)
}
