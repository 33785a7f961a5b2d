//! `demo square-sum`: the seed's seven versions and the one-launch version.

use crate::reduce::exact;
use crate::report::{ChartKind, Measurement, Table};
use crate::timing::{self, L2Flush};
use anyhow::{Result, bail};
use cpu::{Gpu, launch, square_sum};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Cli, Out, verdict};

/// `demo square-sum`: the seed's seven versions and the one-launch version.
pub fn run(gpu: &Gpu, cli: &Cli, out: &mut Out, size: usize) -> Result<()> {
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut flush = L2Flush::new(gpu)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    // The seed series' data: random ints 0..=9.
    let input: Vec<i32> = (0..size).map(|_| rng.random_range(0..=9)).collect();
    out.dump("input", &[], &input)?;
    let expected = square_sum::reference(&input);
    let d_input = gpu.upload(&input)?;
    let bytes = square_sum::bytes_read(size);
    let mut table = Table::new(
        "versions",
        format!(
            "square sum of {size} i32 (values 0..=9, {:.1} MiB read); median of {} reps ({} for the \
             one-thread v1), L2 flushed before each; times are the kernel only (the host's sum of \
             the partials is not included)",
            bytes as f64 / (1 << 20) as f64,
            cli.reps,
            (cli.reps as usize).min(20)
        ),
        ChartKind::Bars,
        [
            "kernel",
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
    );
    out.headline("versions", square_sum::Variant::Reduce.kernel_name());
    let mut failures = 0;
    let (mut first, mut previous) = (None::<f64>, None::<f64>);
    for variant in square_sum::Variant::ALL {
        let kernel = variant.kernel_name();
        let mut s = square_sum::SquareSum::new(gpu, variant)?;
        let cfg = s.launch(gpu, &d_input)?;
        let got = s.sum(gpu)?;
        out.dump(&format!("output_{kernel}"), &[], &[got])?;
        let check = exact(got, expected);
        failures += check.is_err() as usize;
        let reps = if variant == square_sum::Variant::V1 {
            (cli.reps as usize).min(20)
        } else {
            cli.reps as usize
        };
        let t = timing::time_gpu_with_setup(
            gpu,
            kernel,
            1,
            reps,
            &mut (&mut s, &mut flush),
            |(_, flush)| flush.flush(gpu),
            |(s, _)| s.launch(gpu, &d_input).map(drop),
        )?;
        let ms = t.median_ms;
        let mut m = Measurement::new(kernel, &t)
            .kernel(kernel)
            .bytes(bytes, Some(&ceiling))
            .launch(&cfg)
            .error(0.0)
            .passed(check.is_ok());
        if let Some(p) = previous {
            m = m.extra("step_speedup", p / ms);
        }
        if let Some(f) = first {
            m = m.extra("cumulative_speedup", f / ms);
        }
        let step = previous.map_or("-".into(), |p| format!("{:.2}", p / ms));
        let cumulative = first.map_or("-".into(), |f| format!("{:.1}", f / ms));
        first.get_or_insert(ms);
        previous = Some(ms);
        let gbps = m.gbps.unwrap_or_default();
        table.measured_row(
            [
                kernel.to_string(),
                variant.idea().to_string(),
                launch::describe(&cfg),
                format!("{ms:.4}"),
                step,
                cumulative,
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                if variant == square_sum::Variant::Reduce {
                    "0 (total on GPU)".into()
                } else {
                    variant.partials().to_string()
                },
                verdict(&check),
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
