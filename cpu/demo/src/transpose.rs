//! `demo transpose`.

use crate::harness::{Footprint, Plan, elements, require_memory};
use crate::report::{ChartKind, Table};
use anyhow::{Result, bail};
use cpu::{Gpu, transpose, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Cli, Out, variant_name};

/// Peak memory of `demo transpose --rows R --cols C` (n = R x C): the input and one
/// variant's output on the device (8n bytes); the input, the reference and one downloaded
/// output on the host (12n bytes).
pub fn footprint(rows: usize, cols: usize) -> Result<Footprint> {
    let n = elements("transpose", rows, cols)?;
    Ok(
        Footprint::new(format!("transpose of {rows} x {cols} elements"))
            .device::<f32>(2, n)
            .host::<f32>(3, n)
            .with_ceiling(),
    )
}

pub fn run(gpu: &Gpu, cli: &Cli, out: &mut Out, rows: usize, cols: usize) -> Result<()> {
    require_memory(gpu, &footprint(rows, cols)?)?;
    let n = rows * cols;
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.random()).collect();
    let expected = transpose::reference(&input, rows, cols);
    let d_in = gpu.upload(&input)?;
    let bytes = transpose::bytes_moved(rows, cols);
    let seed_size = rows == 8192 && cols == 8192;

    out.dump("input", &[rows as u64, cols as u64], &input)?;
    let best = variant_name(transpose::Variant::fastest(rows, cols, true));
    let mut table = variants_table(rows, cols, bytes, cli.reps, &best);
    out.headline("variants", &best);
    let mut failures = 0;
    for variant in transpose::Variant::ALL {
        let seed_cols = seed_cells(variant, seed_size);
        // A shape the variant does not take, or whose grid it cannot launch (a 2D grid past
        // 65535 blocks along y: the seed's kernels and the tile on tall matrices).
        let skip = if !variant.supports(rows, cols) {
            Some(
                variant
                    .requirement()
                    .unwrap_or("unsupported shape")
                    .to_string(),
            )
        } else {
            variant
                .launch_config(rows, cols)
                .err()
                .map(|e| e.to_string())
        };
        if let Some(why) = skip {
            table.row([
                variant_name(variant),
                seed_cols.0,
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                seed_cols.1,
                format!("skipped: {why}"),
            ]);
            continue;
        }
        let mut d_out = gpu.poisoned(n, f32::NAN)?;
        let name = variant_name(variant);
        let trial = Plan::new(gpu, cli, &name, variant.kernel_name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| transpose::transpose_with(gpu, variant, &d_in, d_out, rows, cols),
                |d_out, _| {
                    let got = gpu.download(d_out, variant.kernel_name())?;
                    let (shape, want) = if variant.transposes() {
                        ([cols as u64, rows as u64], &expected)
                    } else {
                        ([rows as u64, cols as u64], &input)
                    };
                    out.dump(&format!("output_{name}"), &shape, &got)?;
                    Ok(verify::exact(&got, want))
                },
            )?;
        failures += !trial.passed() as usize;
        let gbps = trial.gbps();
        table.measured_row(
            [
                name,
                seed_cols.0,
                trial.grid_block(),
                format!("{:.3}", trial.timing.median_ms),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                seed_cols.1,
                trial.verdict(),
            ],
            trial.measurement,
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} transpose variant(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The table of every variant, titled with the shape, the bytes moved and the best variant
/// for the shape.
fn variants_table(rows: usize, cols: usize, bytes: u64, reps: u32, best: &str) -> Table {
    Table::new(
        "variants",
        format!(
            "transpose, {rows} x {cols} f32 ({:.0} MiB moved per launch: 1 read + 1 write), median of {reps} reps; best for this shape: {best}",
            bytes as f64 / (1 << 20) as f64,
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
    )
}

/// The "seed" and "seed laptop ms" cells of a variant (the laptop time at the seed's 8192 x
/// 8192 only).
fn seed_cells(variant: transpose::Variant, seed_size: bool) -> (String, String) {
    variant.seed().map_or(("-".into(), "-".into()), |(v, ms)| {
        (
            format!("v{v}"),
            if seed_size {
                format!("{ms:.2}")
            } else {
                "(8192 only)".into()
            },
        )
    })
}
