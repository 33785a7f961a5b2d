//! `demo reduce`: the seed's nine reductions, the template's block sizes, `reduce_sum`.

use crate::report::{ChartKind, Measurement, Table};
use crate::timing::{self, Ceiling, L2Flush, Timing};
use anyhow::{Result, bail};
use cpu::reduction::{self, ReduceSum, SeedWork, SumF32, SumF32F64, SumI32, SumKind};
use cpu::{Gpu, launch, verify};
use cudarc::driver::CudaSlice;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Cli, Out, verdict};

const WARMUP: usize = 3;

pub(crate) fn exact(got: i32, expected: i32) -> Result<(), verify::Mismatch> {
    verify::exact(&[got], &[expected])
}

/// `demo reduce`: the seed's table for this GPU, then the template kernel per block size,
/// then `reduce_sum` at 2^20 and 2^26 elements (at `size` when it is not the seed's 2^24).
pub fn run(gpu: &Gpu, cli: &Cli, out: &mut Out, size: usize, block: u32) -> Result<()> {
    // Refuse a bad block size before any GPU work.
    for variant in reduction::Variant::ALL {
        reduction::SeedLaunch::new(variant, size, block)?;
    }
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut flush = L2Flush::new(gpu)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    // The book's data: `(int)(rand() & 0xFF)`.
    let input: Vec<i32> = (0..size).map(|_| rng.random_range(0..=255)).collect();
    let expected = reduction::reference(&input);
    let d_input = gpu.upload(&input)?;
    let bytes = reduction::bytes_read(size);
    let mut failures = 0;

    out.dump("input", &[], &input)?;
    let mut table = Table::new(
        "seed-kernels",
        format!(
            "reduce: sum of {size} i32 (values 0..=255, {:.0} MiB read), seed kernels at {block} threads per block; \
             median of {} reps, L2 flushed and the in-place input restored before each (untimed); \
             GB/s = bytes read / time",
            bytes as f64 / (1 << 20) as f64,
            cli.reps
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
    let seed_size = size == gpu::reduction::SEED_N && block == gpu::reduction::SEED_BLOCK;
    let (mut first, mut previous) = (None::<f64>, None::<f64>);
    // Step and cumulative speedups of a row timed at `ms`, added to its measurement; their
    // cells.
    let mut speedups = |ms: f64, m: Measurement| {
        let step = previous.map(|p| p / ms);
        let cumulative = first.map(|f| f / ms);
        first.get_or_insert(ms);
        previous = Some(ms);
        let cell = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.2}"));
        let (step_cell, cumulative_cell) = (cell(step), cell(cumulative));
        let m = match step {
            Some(x) => m.extra("step_speedup", x),
            None => m,
        };
        let m = match cumulative {
            Some(x) => m.extra("cumulative_speedup", x),
            None => m,
        };
        (step_cell, cumulative_cell, m)
    };
    for variant in reduction::Variant::ALL {
        let seed = SeedRun {
            gpu,
            cli,
            ceiling: &ceiling,
            d_input: &d_input,
            expected,
        };
        let (m, cfg, check) = seed.measure(out, &mut flush, variant, block, "output")?;
        failures += check.is_err() as usize;
        let (kernel, t) = (m.variant.clone(), m.median_ms);
        let (seed_name, seed_s) = variant.seed();
        let m = if seed_size {
            m.extra("seed_k80_ms", seed_s * 1e3)
        } else {
            m
        };
        let (step, cumulative, m) = speedups(t, m);
        let gbps = m.gbps.unwrap_or_default();
        table.measured_row(
            [
                kernel,
                seed_name.to_string(),
                launch::describe(&cfg),
                format!("{t:.4}"),
                step,
                cumulative,
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                if seed_size {
                    format!("{:.3}", seed_s * 1e3)
                } else {
                    "(2^24 x 512 only)".into()
                },
                verdict(&check),
            ],
            m,
        );
    }
    // The one a user should call, on the same data.
    let mut reducer = ReduceSum::<SumI32>::new(gpu)?;
    let (t, cfg, got) = time_reduce_sum(gpu, cli, &mut flush, &mut reducer, &d_input)?;
    out.dump(&format!("output_{}", SumI32::KERNEL), &[], &[got])?;
    let check = exact(got, expected);
    failures += check.is_err() as usize;
    let m = Measurement::new(SumI32::KERNEL, &t)
        .kernel(SumI32::KERNEL)
        .bytes(bytes, Some(&ceiling))
        .launch(&cfg)
        .error(0.0)
        .passed(check.is_ok());
    let (step, cumulative, m) = speedups(t.median_ms, m);
    let gbps = m.gbps.unwrap_or_default();
    table.measured_row(
        [
            SumI32::KERNEL.to_string(),
            "(beyond the seed)".into(),
            launch::describe(&cfg),
            format!("{:.4}", t.median_ms),
            step,
            cumulative,
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            "-".into(),
            verdict(&check),
        ],
        m,
    );
    out.table(table);

    failures += block_sweep(gpu, cli, out, &ceiling, &mut flush, &d_input, expected)?;
    failures += reduce_sum_table(gpu, cli, out, &ceiling, &mut flush, size)?;
    if failures > 0 {
        bail!("{failures} reduction result(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The template kernel (seed version 9) at every block size it is instantiated for.
fn block_sweep(
    gpu: &Gpu,
    cli: &Cli,
    out: &mut Out,
    ceiling: &Ceiling,
    flush: &mut L2Flush,
    d_input: &CudaSlice<i32>,
    expected: i32,
) -> Result<usize> {
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
    let seed = SeedRun {
        gpu,
        cli,
        ceiling,
        d_input,
        expected,
    };
    for (block, _) in gpu::reduction::REDUCE_COMPLETE_UNROLL {
        let variant = reduction::Variant::CompleteUnroll;
        let (m, cfg, check) = seed.measure(out, flush, variant, block, "output_block_sizes")?;
        failures += check.is_err() as usize;
        let gbps = m.gbps.unwrap_or_default();
        table.measured_row(
            [
                m.variant.clone(),
                launch::describe(&cfg),
                format!("{:.4}", m.median_ms),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                verdict(&check),
            ],
            m,
        );
    }
    out.table(table);
    Ok(failures)
}

/// What every timed row of the seed kernels shares: the device, the input and its sum.
struct SeedRun<'a> {
    gpu: &'a Gpu,
    cli: &'a Cli,
    ceiling: &'a Ceiling,
    d_input: &'a CudaSlice<i32>,
    expected: i32,
}

impl SeedRun<'_> {
    /// Runs one seed kernel at `block` threads: verified once (its sum dumped as
    /// `<dump_prefix>_<kernel>`), then timed with the input restored and the L2 flushed before
    /// each rep. Returns the measurement, the launch and the check.
    fn measure(
        &self,
        out: &Out,
        flush: &mut L2Flush,
        variant: reduction::Variant,
        block: u32,
        dump_prefix: &str,
    ) -> Result<(
        Measurement,
        cudarc::driver::LaunchConfig,
        Result<(), verify::Mismatch>,
    )> {
        let gpu = self.gpu;
        let mut work = SeedWork::new(gpu, variant, self.d_input, block)?;
        let cfg = work.launch(gpu)?;
        let kernel = work.launch_info().kernel;
        let got = work.sum(gpu)?;
        out.dump(&format!("{dump_prefix}_{kernel}"), &[], &[got])?;
        let check = exact(got, self.expected);
        let t = timing::time_gpu_with_setup(
            gpu,
            kernel,
            WARMUP,
            self.cli.reps as usize,
            &mut (&mut work, flush),
            |(work, flush)| {
                work.restore(gpu, self.d_input)?;
                flush.flush(gpu)
            },
            |(work, _)| work.launch(gpu).map(drop),
        )?;
        let m = Measurement::new(kernel, &t)
            .kernel(kernel)
            .bytes(
                reduction::bytes_read(self.d_input.len()),
                Some(self.ceiling),
            )
            .launch(&cfg)
            .error(0.0)
            .passed(check.is_ok());
        Ok((m, cfg, check))
    }
}

fn time_reduce_sum<K: SumKind>(
    gpu: &Gpu,
    cli: &Cli,
    flush: &mut L2Flush,
    reducer: &mut ReduceSum<K>,
    d_input: &CudaSlice<K::Input>,
) -> Result<(Timing, cudarc::driver::LaunchConfig, K::Acc)> {
    let cfg = reducer.launch(gpu, d_input)?;
    let got = reducer.result(gpu)?;
    let t = timing::time_gpu_with_setup(
        gpu,
        K::KERNEL,
        WARMUP,
        cli.reps as usize,
        &mut (reducer, flush),
        |(_, flush)| flush.flush(gpu),
        |(reducer, _)| reducer.launch(gpu, d_input).map(drop),
    )?;
    Ok((t, cfg, got))
}

/// `reduce_sum` for each element and accumulator type at 2^20 and 2^26 elements (or at `size`
/// when it is not the seed's).
fn reduce_sum_table(
    gpu: &Gpu,
    cli: &Cli,
    out: &mut Out,
    ceiling: &Ceiling,
    flush: &mut L2Flush,
    size: usize,
) -> Result<usize> {
    let mut table = Table::new(
        "reduce-sum",
        format!(
            "reduce_sum (one launch; random i32, and f32 in [-1, 1) against an f64 reference); \
             median of {} reps, L2 flushed before each:",
            cli.reps
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
    );
    let mut failures = 0;
    // The two checkpoints at the seed's size; the size asked for otherwise.
    let sizes = if size == gpu::reduction::SEED_N {
        vec![1usize << 20, 1 << 26]
    } else {
        vec![size]
    };
    let mut summary = Vec::new();
    let mut headline = None;
    for n in sizes {
        let mut rng = StdRng::seed_from_u64(cli.seed ^ n as u64);
        let ints: Vec<i32> = (0..n).map(|_| rng.random()).collect();
        let floats: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        out.dump(&format!("input_i32_{n}"), &[], &ints)?;
        out.dump(&format!("input_f32_{n}"), &[], &floats)?;
        let (expected_f, sum_abs) = reduction::reference_f32(&floats);
        let d_ints = gpu.upload(&ints)?;
        let d_floats = gpu.upload(&floats)?;
        let bytes = reduction::bytes_read(n);
        // Adds the row of `kernel`; its measurement's key and (GB/s, median ms).
        let mut row = |kernel: &str,
                       t: Timing,
                       cfg: cudarc::driver::LaunchConfig,
                       err: Option<f64>,
                       check: Result<(), verify::Mismatch>| {
            let m = Measurement::new(kernel, &t)
                .kernel(kernel)
                .bytes(bytes, Some(ceiling))
                .launch(&cfg)
                .error(err.unwrap_or(0.0))
                .passed(check.is_ok())
                .at(n as f64);
            let gbps = m.gbps.unwrap_or_default();
            let key = m.key();
            table.measured_row(
                [
                    kernel.to_string(),
                    n.to_string(),
                    launch::describe(&cfg),
                    format!("{:.2}", t.median_ms * 1e3),
                    format!("{gbps:.1}"),
                    format!("{:.1}%", ceiling.percent(gbps)),
                    err.map_or("exact".into(), |e| format!("{e:.1e}")),
                    verdict(&check),
                ],
                m,
            );
            (key, gbps, t.median_ms)
        };

        let mut r = ReduceSum::<SumI32>::new(gpu)?;
        let (t, cfg, got) = time_reduce_sum(gpu, cli, flush, &mut r, &d_ints)?;
        out.dump(&format!("output_{}_{n}", SumI32::KERNEL), &[], &[got])?;
        let check = exact(got, reduction::reference(&ints));
        failures += check.is_err() as usize;
        row(SumI32::KERNEL, t, cfg, None, check);

        let mut r = ReduceSum::<SumF32>::new(gpu)?;
        let (t, cfg, got) = time_reduce_sum(gpu, cli, flush, &mut r, &d_floats)?;
        out.dump(&format!("output_{}_{n}", SumF32::KERNEL), &[], &[got])?;
        let bound = reduction::sum_error_bound(
            n,
            reduction::reduce_sum_depth(n, &cfg),
            f32::EPSILON as f64,
            sum_abs,
        );
        let check = reduction::check_sum(got as f64, expected_f, bound);
        failures += check.is_err() as usize;
        let err = (got as f64 - expected_f).abs() / bound;
        let (key, gbps, ms) = row(SumF32::KERNEL, t, cfg, Some(err), check);
        summary.push((n, gbps, ms));
        // The largest size's f32 row (2^26 at the seed's size).
        headline = Some(key);

        let mut r = ReduceSum::<SumF32F64>::new(gpu)?;
        let (t, cfg, got) = time_reduce_sum(gpu, cli, flush, &mut r, &d_floats)?;
        out.dump(&format!("output_{}_{n}", SumF32F64::KERNEL), &[], &[got])?;
        let bound = reduction::sum_error_bound(
            n,
            reduction::reduce_sum_depth(n, &cfg),
            f64::EPSILON,
            sum_abs,
        );
        let check = reduction::check_sum(got, expected_f, bound);
        failures += check.is_err() as usize;
        let err = (got - expected_f).abs() / bound;
        row(SumF32F64::KERNEL, t, cfg, Some(err), check);
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
