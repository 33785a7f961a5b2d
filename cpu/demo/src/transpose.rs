//! `demo transpose`.

use crate::report::{ChartKind, Measurement, Table};
use crate::timing;
use anyhow::{Context, Result, bail};
use cpu::{Gpu, launch, transpose, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Cli, Out, variant_name, verdict};

pub fn run(gpu: &Gpu, cli: &Cli, out: &mut Out, rows: usize, cols: usize) -> Result<()> {
    let n = rows.checked_mul(cols).context("rows x cols overflows")?;
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.random()).collect();
    let expected = transpose::reference(&input, rows, cols);
    let d_in = gpu.upload(&input)?;
    let bytes = transpose::bytes_moved(rows, cols);
    let seed_size = rows == 8192 && cols == 8192;

    out.dump("input", &[rows as u64, cols as u64], &input)?;
    let best = variant_name(transpose::Variant::fastest(rows, cols, true));
    let mut table = Table::new(
        "variants",
        format!(
            "transpose, {rows} x {cols} f32 ({:.0} MiB moved per launch: 1 read + 1 write), median of {} reps; best for this shape: {best}",
            bytes as f64 / (1 << 20) as f64,
            cli.reps,
        ),
        ChartKind::Bars,
        [
            "variant",
            "seed",
            "grid x block",
            "median ms",
            "GB/s",
            "% of memcpy",
            "seed laptop ms",
            "verdict",
        ],
    );
    out.headline("variants", &best);
    let mut failures = 0;
    for variant in transpose::Variant::ALL {
        let seed_cols = variant.seed().map_or(("-".into(), "-".into()), |(v, ms)| {
            (
                format!("v{v}"),
                if seed_size {
                    format!("{ms:.2}")
                } else {
                    "(8192 only)".into()
                },
            )
        });
        if !variant.supports(rows, cols) {
            table.row([
                variant_name(variant),
                seed_cols.0,
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                seed_cols.1,
                "skipped: needs rows, cols multiples of 4".into(),
            ]);
            continue;
        }
        let mut d_out = gpu.poisoned(n, f32::NAN)?;
        let cfg = transpose::transpose_with(gpu, variant, &d_in, &mut d_out, rows, cols)?;
        let got = gpu.download(&d_out, variant.kernel_name())?;
        let shape = if variant.transposes() {
            [cols as u64, rows as u64]
        } else {
            [rows as u64, cols as u64]
        };
        out.dump(&format!("output_{}", variant_name(variant)), &shape, &got)?;
        let check = verify::exact(
            &got,
            if variant.transposes() {
                &expected
            } else {
                &input
            },
        );
        failures += check.is_err() as usize;
        let t = timing::time_gpu(gpu, variant.kernel_name(), 3, cli.reps as usize, || {
            transpose::transpose_with(gpu, variant, &d_in, &mut d_out, rows, cols).map(drop)
        })?;
        let m = Measurement::new(variant_name(variant), &t)
            .kernel(variant.kernel_name())
            .bytes(bytes, Some(&ceiling))
            .launch(&cfg)
            .passed(check.is_ok());
        let gbps = m.gbps.unwrap_or_default();
        table.measured_row(
            [
                variant_name(variant),
                seed_cols.0,
                launch::describe(&cfg),
                format!("{:.3}", t.median_ms),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                seed_cols.1,
                verdict(&check),
            ],
            m,
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} transpose variant(s) disagree with the CPU reference");
    }
    Ok(())
}
