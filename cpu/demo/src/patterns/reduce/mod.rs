//! `demo reduce`: the seed's nine reductions, the template's block sizes, `reduce_sum`.

mod ops;
mod sweep;

use ops::op_sweep;

use anyhow::{Result, bail};
use cpu::reduce::seed::{self, SeedWork};
use cpu::reduce::{ReduceSum, SumF32, SumF32F64, SumI32, SumKind, reference};
use cpu::{Gpu, verify};
use cudarc::driver::{CudaSlice, LaunchConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::args::power_of_two;
use crate::engine::harness::{Footprint, Plan, SMALL, Speedups, Trial, array};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, kernels_each, variant, variant_name};
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::SweepSpec;
use crate::engine::timing::{Ceiling, L2Flush};

/// An exact integer sum's check.
fn exact(got: i32, expected: i32) -> Result<(), verify::Mismatch> {
    verify::exact(&[got], &[expected])
}

/// A check against the CPU and the error the table shows (0 for exact integer sums).
type Checked = (Result<(), verify::Mismatch>, f64);

/// The `reduce_sum` sizes: the two checkpoints at the seed's size, else `size`.
fn reduce_sum_sizes(size: usize) -> Vec<usize> {
    if size == gpu::reduce::SEED_N {
        vec![1 << 20, 1 << 26]
    } else {
        vec![size]
    }
}

/// Peak memory of `demo reduce --size n --block b`, with `flush` bytes of L2 flush buffer
/// (twice the L2) held throughout. Device: the flush buffer, the i32 input (4n), and the
/// larger of one seed kernel's working copy (4 (n + 8b), padded to whole blocks, plus one
/// partial per block) and the `reduce_sum` table's inputs (i32 and f32 of m elements: 8m,
/// m = 2^26 at the seed's size). Host: the input (4n) and the `reduce_sum` inputs (8m).
pub fn footprint(n: usize, block: u32, flush: usize) -> Footprint {
    let m = reduce_sum_sizes(n).into_iter().max().unwrap_or(n);
    let (n64, b) = (n as u64, u64::from(block.max(1)));
    let work = n64
        .checked_add(8 * b)
        .and_then(|w| w.checked_add(n64 / b + 1))
        .and_then(|w| w.checked_mul(4));
    let sums = array::<i32>(1, m).and_then(|i| i.checked_add(array::<f32>(1, m)?));
    // The operator table: random and exact-product inputs of up to 8 bytes per element.
    let ops = array::<u64>(2, n);
    let phase = work.zip(sums).zip(ops).map(|((w, s), o)| w.max(s).max(o));
    Footprint::new(format!("reduce of {n} elements"))
        .device::<i32>(1, n)
        .device_bytes(phase)
        .device_bytes(flush as u64 + SMALL)
        .host::<i32>(1, n)
        .host::<i32>(1, m)
        .host::<f32>(1, m)
        .host::<u64>(2, n)
        .with_ceiling()
}

/// Parallel reduction: the seed's nine kernels (table as in the seed), the template kernel
/// per block size, `reduce_sum` (i32, f32, f32 in f64) at 2^20 and 2^26 elements, and every
/// operator of `reduce::ops` (sum, product, min, max, argmin, argmax) of every primitive type at
/// `--size` elements.
#[derive(clap::Args)]
pub(crate) struct Reduce {
    /// Elements (default 2^24 i32, as the seed).
    #[arg(long, default_value_t = gpu::reduce::SEED_N)]
    size: usize,
    /// Threads per block of the seed kernels (a power of two, 64..=1024 for all of them).
    #[arg(long, default_value_t = gpu::reduce::SEED_BLOCK, value_parser = power_of_two::<64, 1024>)]
    block: u32,
}

impl Pattern for Reduce {
    const NAME: &'static str = "reduce";
    const ALIASES: &'static [&'static str] = &["reduction"];
    /// `reduce_sum` of `i32` (wrapping) and of `f32`, at 2^16, 2^18, ..., 2^30 elements.
    const SWEEPS: &'static [SweepSpec] = &[
        SweepSpec::new(
            "reduce-i32",
            "cpu::reduce::ReduceSum::<SumI32>::launch",
            "4 bytes read per element",
            sweep::sweep_cases,
            sweep::sweep_i32,
        )
        .reads_only(),
        SweepSpec::new(
            "reduce-f32",
            "cpu::reduce::ReduceSum::<SumF32>::launch",
            "4 bytes read per element",
            sweep::sweep_cases,
            sweep::sweep_f32,
        )
        .reads_only(),
        op_sweep!(
            "reduce-max-f32",
            f32,
            "max",
            "cpu::reduce::max::<f32>",
            "4 bytes read per element"
        ),
        op_sweep!(
            "reduce-min-f32",
            f32,
            "min",
            "cpu::reduce::min::<f32>",
            "4 bytes read per element"
        ),
        op_sweep!(
            "reduce-argmax-f32",
            f32,
            "argmax",
            "cpu::reduce::argmax::<f32>",
            "4 bytes read per element"
        ),
        op_sweep!(
            "reduce-prod-f32",
            f32,
            "product",
            "cpu::reduce::product::<f32>",
            "4 bytes read per element"
        ),
        op_sweep!(
            "reduce-max-i32",
            i32,
            "max",
            "cpu::reduce::max::<i32>",
            "4 bytes read per element"
        ),
        op_sweep!(
            "reduce-min-i32",
            i32,
            "min",
            "cpu::reduce::min::<i32>",
            "4 bytes read per element"
        ),
        op_sweep!(
            "reduce-argmax-i32",
            i32,
            "argmax",
            "cpu::reduce::argmax::<i32>",
            "4 bytes read per element"
        ),
        op_sweep!(
            "reduce-prod-i32",
            i32,
            "product",
            "cpu::reduce::product::<i32> (i64 accumulator)",
            "4 bytes read per element"
        ),
        op_sweep!(
            "reduce-sum-i64",
            i64,
            "sum",
            "cpu::reduce::sum::<Sum<i64>>",
            "8 bytes read per element"
        ),
        op_sweep!(
            "reduce-sum-f64",
            f64,
            "sum",
            "cpu::reduce::sum::<Sum<f64>>",
            "8 bytes read per element"
        ),
    ];

    /// The seed kernels (the template once per block size it is instantiated for), then the
    /// `reduce_sum` kernels.
    fn variants() -> Vec<VariantInfo> {
        let blocks = (0..=10).map(|b| 1u32 << b);
        let mut v = kernels_each(&seed::Variant::ALL, |v| {
            let mut names: Vec<&'static str> = Vec::new();
            for name in blocks.clone().filter_map(|b| v.kernel_for(b)) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            names
        });
        v.extend(cpu::reduce::SumVariant::ALL.iter().map(|&s| {
            variant(
                format!("reduce-sum-{}", variant_name(s)),
                &[s.kernel_name()],
            )
        }));
        v.extend(ops::variants());
        v
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003 --block 256".into()]
    }

    fn footprint(&self, gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(footprint(self.size, self.block, L2Flush::bytes(gpu)?)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self.size, self.block)
    }
}

/// `demo reduce`: the seed's table for this GPU, then the template kernel per block size,
/// then `reduce_sum` at 2^20 and 2^26 elements (at `size` when it is not the seed's 2^24).
/// Its footprint, checked before, refuses a size that does not fit.
fn run(gpu: &Gpu, opts: &Options, out: &mut Out, size: usize, block: u32) -> Result<()> {
    for variant in seed::Variant::ALL {
        seed::SeedLaunch::new(variant, size, block)?;
    }
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut flush = L2Flush::new(gpu)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    // The book's data: `(int)(rand() & 0xFF)`.
    let input: Vec<i32> = (0..size).map(|_| rng.random_range(0..=255)).collect();
    let expected = reference::sum_i32(&input);
    let d_input = gpu.upload(&input)?;
    out.dump("input", &[], &input)?;
    let bench = Bench {
        gpu,
        opts,
        ceiling: &ceiling,
    };
    let seed = SeedRun {
        bench,
        d_input: &d_input,
        expected,
    };
    let mut failures = seed_table(&seed, out, &mut flush, block)?;
    failures += block_sweep(&seed, out, &mut flush)?;
    failures += reduce_sum_table(bench, out, &mut flush, size)?;
    failures += ops::operator_table(bench, out, &mut flush, size)?;
    if failures > 0 {
        bail!("{failures} reduction result(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The seed's nine kernels at `block` threads, then `reduce_sum_i32` on the same data, with
/// step and cumulative speedups. Returns the failures.
fn seed_table(seed: &SeedRun, out: &mut Out, flush: &mut L2Flush, block: u32) -> Result<usize> {
    let (opts, ceiling) = (seed.bench.opts, seed.bench.ceiling);
    let size = seed.d_input.len();
    let mut table = Table::new(
        "seed-kernels",
        format!(
            "reduce: sum of {size} i32 (values 0..=255, {:.0} MiB read), seed kernels at {block} threads per block; \
             median of {} reps, L2 flushed and the in-place input restored before each (untimed); \
             GB/s = bytes read / time",
            reference::bytes_read(size) as f64 / (1 << 20) as f64,
            opts.reps
        ),
        ChartKind::Bars,
        [
            "kernel",
            "seed",
            "grid x block",
            "median ms",
            "step speedup",
            "cumulative",
            "GB/s",
            "% of memcpy",
            "seed K80 ms",
            "verdict",
        ],
    );
    let seed_size = size == gpu::reduce::SEED_N && block == gpu::reduce::SEED_BLOCK;
    let mut speedups = Speedups::default();
    let mut failures = 0;
    let cell = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.2}"));
    let mut add_row = |table: &mut Table, trial: Trial<Checked>, seed_name: &str, k80: String| {
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        let (step, cumulative, m) = speedups.next(ms, trial.measurement);
        let gbps = m.gbps.unwrap_or_default();
        table.measured_row(
            [
                m.variant.clone(),
                seed_name.to_string(),
                crate::engine::harness::describe(&trial.cfg),
                format!("{ms:.4}"),
                cell(step),
                cell(cumulative),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                k80,
                crate::engine::harness::verdict(&trial.check.0),
            ],
            m,
        );
    };
    for variant in seed::Variant::ALL {
        let mut trial = seed.measure(out, flush, variant, block, "output")?;
        let (seed_name, seed_s) = seed_row(variant);
        let k80 = if seed_size {
            trial.measurement = trial.measurement.extra("seed_k80_ms", seed_s * 1e3);
            format!("{:.3}", seed_s * 1e3)
        } else {
            "(2^24 x 512 only)".into()
        };
        add_row(&mut table, trial, seed_name, k80);
    }
    // The one a user should call, on the same data.
    let trial = reduce_sum::<SumI32>(seed.bench, out, flush, seed.d_input, "", |got, _| {
        (exact(got, seed.expected), 0.0)
    })?;
    add_row(&mut table, trial, "(beyond the seed)", "-".into());
    out.table(table);
    Ok(failures)
}

/// The template kernel (seed version 9) at every block size it is instantiated for.
fn block_sweep(seed: &SeedRun, out: &mut Out, flush: &mut L2Flush) -> Result<usize> {
    let mut table = Table::new(
        "block-sizes",
        "template kernel (seed version 9) per block size, same input:",
        ChartKind::Bars,
        [
            "kernel",
            "grid x block",
            "median ms",
            "GB/s",
            "% of memcpy",
            "verdict",
        ],
    );
    let mut failures = 0;
    for (block, _) in gpu::reduce::REDUCE_COMPLETE_UNROLL {
        let variant = seed::Variant::CompleteUnroll;
        let trial = seed.measure(out, flush, variant, block, "output_block_sizes")?;
        failures += !trial.passed() as usize;
        let gbps = trial.gbps();
        table.measured_row(
            [
                trial.measurement.variant.clone(),
                trial.grid_block(),
                format!("{:.4}", trial.timing.median_ms),
                format!("{gbps:.1}"),
                format!("{:.1}%", seed.bench.ceiling.percent(gbps)),
                trial.verdict(),
            ],
            trial.measurement,
        );
    }
    out.table(table);
    Ok(failures)
}

/// What every timed row shares: the device, the options and the run's memcpy ceiling.
#[derive(Clone, Copy)]
struct Bench<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    ceiling: &'a Ceiling,
}

/// What every timed row of the seed kernels shares: the bench, the input and its sum.
struct SeedRun<'a> {
    bench: Bench<'a>,
    d_input: &'a CudaSlice<i32>,
    expected: i32,
}

impl SeedRun<'_> {
    /// Runs one seed kernel at `block` threads: verified once (its sum dumped as
    /// `<dump_prefix>_<kernel>`), then timed with the input restored and the L2 flushed before
    /// each rep.
    fn measure(
        &self,
        out: &Out,
        flush: &mut L2Flush,
        variant: seed::Variant,
        block: u32,
        dump_prefix: &str,
    ) -> Result<Trial<Checked>> {
        let Bench { gpu, opts, ceiling } = self.bench;
        let mut work = SeedWork::new(gpu, variant, self.d_input, block)?;
        let kernel = work.launch_info().kernel.name();
        Plan::new(gpu, opts, kernel, kernel)
            .bytes(reference::bytes_read(self.d_input.len()), Some(ceiling))
            .run_with_setup(
                &mut (&mut work, flush),
                |(work, flush)| {
                    work.restore(gpu, self.d_input)?;
                    flush.flush(gpu)
                },
                |(work, _)| work.launch(gpu),
                |(work, _), _| {
                    let got = work.sum(gpu)?;
                    out.verify(&format!("{dump_prefix}_{kernel}"), &[], &[got], |_| ())?;
                    Ok((exact(got, self.expected), 0.0))
                },
            )
    }
}

/// One `reduce_sum` kernel on `d_input`: verified by `check` (of the sum and the launch; its
/// sum dumped as `output_<kernel><dump_suffix>`), then timed with the L2 flushed before each
/// launch.
fn reduce_sum<K: SumKind>(
    bench: Bench,
    out: &Out,
    flush: &mut L2Flush,
    d_input: &CudaSlice<K::Input>,
    dump_suffix: &str,
    check: impl FnOnce(K::Acc, &LaunchConfig) -> Checked,
) -> Result<Trial<Checked>>
where
    K::Acc: npyz::AutoSerialize,
{
    let Bench { gpu, opts, ceiling } = bench;
    let mut reducer = ReduceSum::<K>::new(gpu)?;
    Plan::new(gpu, opts, K::KERNEL_NAME, K::KERNEL_NAME)
        .bytes(reference::bytes_read(d_input.len()), Some(ceiling))
        .run_with_setup(
            &mut (&mut reducer, flush),
            |(_, flush)| flush.flush(gpu),
            |(reducer, _)| reducer.launch(gpu, d_input),
            |(reducer, _), cfg| {
                let got = reducer.result(gpu)?;
                out.verify(
                    &format!("output_{}{dump_suffix}", K::KERNEL_NAME),
                    &[],
                    &[got],
                    |_| (),
                )?;
                Ok(check(got, cfg))
            },
        )
}

/// `reduce_sum` for each element and accumulator type at 2^20 and 2^26 elements (or at `size`
/// when it is not the seed's).
fn reduce_sum_table(
    bench: Bench,
    out: &mut Out,
    flush: &mut L2Flush,
    size: usize,
) -> Result<usize> {
    let Bench { gpu, opts, ceiling } = bench;
    let mut table = reduce_sum_header(opts.reps);
    let mut failures = 0;
    let mut summary = Vec::new();
    let mut headline = None;
    for n in reduce_sum_sizes(size) {
        let mut rng = StdRng::seed_from_u64(opts.seed ^ n as u64);
        let ints: Vec<i32> = (0..n).map(|_| rng.random()).collect();
        let floats: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        out.dump(&format!("input_i32_{n}"), &[], &ints)?;
        out.dump(&format!("input_f32_{n}"), &[], &floats)?;
        let (expected_f, sum_abs) = reference::reference_f32(&floats);
        let (d_ints, d_floats) = (gpu.upload(&ints)?, gpu.upload(&floats)?);
        let suffix = format!("_{n}");
        // The error against the bound of a float sum.
        let float_check = |got: f64, cfg: &LaunchConfig, eps: f64| -> Checked {
            let depth = reference::reduce_sum_depth(n, cfg);
            let bound = reference::sum_error_bound(n, depth, eps, sum_abs);
            let err = (got - expected_f).abs() / bound;
            (reference::check_sum(got, expected_f, bound), err)
        };
        let expected_i = reference::sum_i32(&ints);
        let trials = [
            reduce_sum::<SumI32>(bench, out, flush, &d_ints, &suffix, |got, _| {
                (exact(got, expected_i), 0.0)
            })?,
            reduce_sum::<SumF32>(bench, out, flush, &d_floats, &suffix, |got, cfg| {
                float_check(got as f64, cfg, f32::EPSILON as f64)
            })?,
            reduce_sum::<SumF32F64>(bench, out, flush, &d_floats, &suffix, |got, cfg| {
                float_check(got, cfg, f64::EPSILON)
            })?,
        ];
        for trial in trials {
            failures += !trial.passed() as usize;
            let kernel = trial.measurement.variant.clone();
            let exact_sum = kernel == SumI32::KERNEL_NAME;
            let (key, gbps, ms) = reduce_sum_row(&mut table, ceiling, trial, n, exact_sum);
            if kernel == SumF32::KERNEL_NAME {
                summary.push((n, gbps, ms));
                // The largest size's f32 row (2^26 at the seed's size).
                headline = Some(key);
            }
        }
    }
    out.table(table);
    if let Some(key) = headline {
        out.headline("reduce-sum", &key);
    }
    for (n, gbps, ms) in summary {
        match n {
            n if n == 1 << 26 => out.line(format!(
                "reduce_sum_f32 at 2^26: {gbps:.1} GB/s = {:.1}% of this run's memcpy (target >= 95%)",
                ceiling.percent(gbps)
            )),
            n if n == 1 << 20 => out.line(format!(
                "reduce_sum_f32 at 2^20: {:.2} us of GPU time (target < 10 us)",
                ms * 1e3
            )),
            _ => {}
        }
    }
    Ok(failures)
}

/// Adds a `reduce_sum` row at `n` elements (its error cell "exact" for an integer sum);
/// returns its measurement's key, GB/s and median ms.
fn reduce_sum_row(
    table: &mut Table,
    ceiling: &Ceiling,
    trial: Trial<Checked>,
    n: usize,
    exact_sum: bool,
) -> (String, f64, f64) {
    let m = trial.measurement.at(n as f64);
    let gbps = m.gbps.unwrap_or_default();
    let key = m.key();
    let ms = trial.timing.median_ms;
    table.measured_row(
        [
            m.variant.clone(),
            n.to_string(),
            crate::engine::harness::describe(&trial.cfg),
            format!("{:.2}", ms * 1e3),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            if exact_sum {
                "exact".into()
            } else {
                format!("{:.1e}", trial.check.1)
            },
            crate::engine::harness::verdict(&trial.check.0),
        ],
        m,
    );
    (key, gbps, ms)
}

/// The `reduce_sum` table (rows added per size).
fn reduce_sum_header(reps: u32) -> Table {
    Table::new(
        "reduce-sum",
        format!(
            "reduce_sum (one launch; random i32, and f32 in [-1, 1) against an f64 reference); \
         median of {} reps, L2 flushed before each:",
            reps
        ),
        ChartKind::Bars,
        [
            "kernel",
            "n",
            "grid x block",
            "median us",
            "GB/s",
            "% of memcpy",
            "|error| / bound",
            "verdict",
        ],
    )
}

/// The seed's row of `variant`: its name for the kernel and the K80 time in seconds for 2^24
/// ints (the seed's table, beside the measured one).
fn seed_row(variant: seed::Variant) -> (&'static str, f64) {
    use seed::Variant;
    match variant {
        Variant::Neighbored => ("相邻(分化)", 0.008459),
        Variant::NeighboredLess => ("相邻(无分化)", 0.007832),
        Variant::Interleaved => ("交错", 0.005033),
        Variant::Unroll2 => ("展开2块", 0.002877),
        Variant::Unroll4 => ("展开4块", 0.001452),
        Variant::Unroll8 => ("展开8块", 0.000892),
        Variant::UnrollWarps8 => ("展开8块+最后的线程束", 0.000813),
        Variant::CompleteUnrollWarps8 => ("展开8块+循环+最后的线程束", 0.000789),
        Variant::CompleteUnroll => ("模板化内核", 0.000777),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_table_speeds_up() {
        let times: Vec<f64> = seed::Variant::ALL.iter().map(|&v| seed_row(v).1).collect();
        assert!(times.windows(2).all(|w| w[1] < w[0]), "{times:?}");
    }
}
