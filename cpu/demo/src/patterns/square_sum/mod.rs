//! `demo square-sum`: the seed's seven versions and the one-launch version.

use anyhow::{Result, bail};
use cpu::reduce::{reference, square_sum};
use cpu::{Gpu, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Footprint, Plan, SMALL, Speedups};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each};
use crate::engine::report::{ChartKind, Table};
use crate::engine::timing::L2Flush;

/// Peak memory of `demo square-sum --size n`, with `flush` bytes of L2 flush buffer: the i32
/// input on the device (4n bytes) beside the flush buffer and one version's partial sums (at
/// most BLOCK_NUM x THREAD_NUM); the input on the host (4n bytes).
pub fn footprint(n: usize, flush: usize) -> Footprint {
    Footprint::new(format!("square-sum of {n} elements"))
        .device::<i32>(1, n)
        .device_bytes(flush as u64 + SMALL)
        .host::<i32>(1, n)
        .with_ceiling()
}

/// Sum of squares: the seed's seven versions and the one-launch version.
#[derive(clap::Args)]
pub(crate) struct SquareSum {
    /// Elements (default 1048576 i32, the seed's DATA_SIZE).
    #[arg(long, default_value_t = gpu::reduce::square_sum::DATA_SIZE)]
    size: usize,
}

impl Pattern for SquareSum {
    const NAME: &'static str = "square-sum";

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&square_sum::Variant::ALL, |v| v.kernel_name())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003".into()]
    }

    fn footprint(&self, gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(footprint(self.size, L2Flush::bytes(gpu)?)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self.size)
    }
}

/// `demo square-sum`: the seed's seven versions and the one-launch version.
fn run(gpu: &Gpu, opts: &Options, out: &mut Out, size: usize) -> Result<()> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut flush = L2Flush::new(gpu)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    // The seed series' data: random ints 0..=9.
    let input: Vec<i32> = (0..size).map(|_| rng.random_range(0..=9)).collect();
    out.dump("input", &[], &input)?;
    let expected = reference::square_sum_i32(&input);
    let d_input = gpu.upload(&input)?;
    let bytes = reference::bytes_read(size);
    let mut table = versions_table(size, bytes, opts.reps);
    out.headline("versions", square_sum::Variant::Reduce.kernel_name());
    let mut failures = 0;
    let mut speedups = Speedups::default();
    for variant in square_sum::Variant::ALL {
        let kernel = variant.kernel_name();
        let mut s = square_sum::SquareSum::new(gpu, variant)?;
        let reps = if variant == square_sum::Variant::SingleThread {
            (opts.reps as usize).min(20)
        } else {
            opts.reps as usize
        };
        let trial = Plan::new(gpu, opts, kernel, kernel)
            .warmup(1)
            .reps(reps)
            .bytes(bytes, Some(&ceiling))
            .run_with_setup(
                &mut (&mut s, &mut flush),
                |(_, flush)| flush.flush(gpu),
                |(s, _)| s.launch(gpu, &d_input),
                |(s, _), _| {
                    let got = s.sum(gpu)?;
                    out.verify(&format!("output_{kernel}"), &[], &[got], |_| ())?;
                    Ok((verify::exact(&[got], &[expected]), 0.0))
                },
            )?;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        let (step, cumulative, m) = speedups.next(ms, trial.measurement);
        let gbps = m.gbps.unwrap_or_default();
        table.measured_row(
            [
                kernel.to_string(),
                variant
                    .seed_version()
                    .map_or("-".into(), |v| format!("v{v}")),
                variant.idea().to_string(),
                crate::engine::harness::describe(&trial.cfg),
                format!("{ms:.4}"),
                step.map_or("-".into(), |x| format!("{x:.2}")),
                cumulative.map_or("-".into(), |x| format!("{x:.1}")),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                if variant == square_sum::Variant::Reduce {
                    "0 (total on GPU)".into()
                } else {
                    variant.partials().to_string()
                },
                crate::engine::harness::verdict(&trial.check.0),
            ],
            m,
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} square-sum version(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The versions table, titled with the size, the bytes read and the repetitions.
fn versions_table(size: usize, bytes: u64, reps: u32) -> Table {
    Table::new(
        "versions",
        format!(
            "square sum of {size} i32 (values 0..=9, {:.1} MiB read); median of {} reps ({} for the \
         one-thread v1), L2 flushed before each; times are the kernel only (the host's sum of \
         the partials is not included)",
            bytes as f64 / (1 << 20) as f64,
            reps,
            (reps as usize).min(20)
        ),
        ChartKind::Bars,
        [
            "kernel",
            "seed",
            "idea",
            "grid x block",
            "median ms",
            "step speedup",
            "cumulative",
            "GB/s",
            "% of memcpy",
            "partials on host",
            "verdict",
        ],
    )
}
