//! `demo vector-add`.

use crate::report::{ChartKind, Measurement, Table};
use crate::timing;
use anyhow::{Result, bail};
use cpu::{Gpu, launch, vector_add, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Cli, Out, variant_name, verdict};

pub fn run(gpu: &Gpu, cli: &Cli, out: &mut Out, size: usize) -> Result<()> {
    use gpu::vector_add::{SEED_BLOCK, SEED_GRID, SEED_N};
    let mut rng = StdRng::seed_from_u64(cli.seed);

    // The seed's toy: N = 1024, x[10] = y[10] = 100, add<<<8, 128>>>, print z[10].
    let mut x: Vec<f32> = (0..SEED_N).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut y: Vec<f32> = (0..SEED_N).map(|_| rng.random_range(-1.0..1.0)).collect();
    (x[10], y[10]) = (100.0, 100.0);
    let (d_x, d_y) = (gpu.upload(&x)?, gpu.upload(&y)?);
    let mut d_z = gpu.poisoned(SEED_N, f32::NAN)?;
    let toy = launch::linear(SEED_GRID, SEED_BLOCK, 0);
    vector_add::add_with_config(
        gpu,
        vector_add::Variant::VectorAdd,
        &d_x,
        &d_y,
        &mut d_z,
        toy,
    )?;
    let z = gpu.download(&d_z, "vector_add")?;
    let toy_check = verify::exact(&z, &vector_add::reference(&x, &y));
    out.line(format!(
        "seed toy: N = {SEED_N}, add<<<{SEED_GRID}, {SEED_BLOCK}>>>: z[10] = {} (seed prints 200); all {SEED_N} outputs vs CPU: {}",
        z[10],
        verdict(&toy_check)
    ));

    let ceiling = out.ceiling(gpu, cli.reps)?;
    let x: Vec<f32> = (0..size).map(|_| rng.random_range(-1.0..1.0)).collect();
    let y: Vec<f32> = (0..size).map(|_| rng.random_range(-1.0..1.0)).collect();
    out.dump("x", &[], &x)?;
    out.dump("y", &[], &y)?;
    let expected = vector_add::reference(&x, &y);
    let (d_x, d_y) = (gpu.upload(&x)?, gpu.upload(&y)?);
    let bytes = vector_add::bytes_moved(size);

    let mut table = Table::new(
        "variants",
        format!(
            "vector add, N = {size} f32 ({:.0} MiB moved per launch: 2 reads + 1 write), median of {} reps",
            bytes as f64 / (1 << 20) as f64,
            cli.reps
        ),
        ChartKind::Bars,
        [
            "variant",
            "grid x block",
            "median ms",
            "min ms",
            "GB/s",
            "% of memcpy",
            "max abs err",
            "verdict",
        ],
    );
    let mut failures = 0;
    for variant in vector_add::Variant::ALL {
        let name = variant_name(variant);
        let mut d_z = gpu.poisoned(size, f32::NAN)?;
        let cfg = vector_add::add_with(gpu, variant, &d_x, &d_y, &mut d_z)?;
        let got = gpu.download(&d_z, variant.kernel_name())?;
        out.dump(&format!("z_{name}"), &[], &got)?;
        let check = verify::exact(&got, &expected);
        failures += check.is_err() as usize;
        let t = timing::time_gpu(gpu, variant.kernel_name(), 3, cli.reps as usize, || {
            vector_add::add_with(gpu, variant, &d_x, &d_y, &mut d_z).map(drop)
        })?;
        let m = Measurement::new(&name, &t)
            .kernel(variant.kernel_name())
            .bytes(bytes, Some(&ceiling))
            .launch(&cfg);
        let gbps = m.gbps.unwrap_or_default();
        let err = got
            .iter()
            .zip(&expected)
            .map(|(g, e)| (g - e).abs())
            .fold(0.0f32, f32::max);
        table.measured_row(
            [
                name.clone(),
                launch::describe(&cfg),
                format!("{:.3}", t.median_ms),
                format!("{:.3}", t.min_ms),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                format!("{err:e}"),
                verdict(&check),
            ],
            m.error(f64::from(err)).passed(check.is_ok()),
        );
    }
    out.table(table);
    if failures > 0 || toy_check.is_err() {
        bail!("{failures} vector-add variant(s) disagree with the CPU reference");
    }
    Ok(())
}
