//! `demo vector-add`: its definition and tables (here) and its sweep ([`sweep`]).

mod sweep;

use anyhow::{Result, bail};
use cpu::{Gpu, launch, vector_add, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Footprint, Plan, verdict};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant_name};
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::{SweepSpec, powers};

/// Peak memory of `demo vector-add --size n`: x, y and one variant's z on the device (12n
/// bytes); x, y, the reference and one downloaded z on the host (16n bytes). The seed's toy
/// (1024 elements) is freed before.
pub fn footprint(n: usize) -> Footprint {
    Footprint::new(format!("vector-add of {n} elements"))
        .device::<f32>(3, n)
        .host::<f32>(4, n)
        .with_ceiling()
}

/// z = x + y on f32: the seed's toy launch, then every variant at a large size, timed.
#[derive(clap::Args)]
pub(crate) struct VectorAdd {
    /// Elements (default 2^26: 768 MiB moved per launch, far beyond the L2 cache).
    #[arg(long, default_value_t = 1 << 26)]
    size: usize,
}

impl Pattern for VectorAdd {
    const NAME: &'static str = "vector-add";
    /// `cpu::vector_add::add` at 2^16, 2^18, ..., 2^28 elements.
    const SWEEPS: &'static [SweepSpec] = &[SweepSpec::new(
        "vector-add",
        "cpu::vector_add::add",
        "12 bytes per element: 2 reads + 1 write",
        |s| powers(16, 28, 2).map(|n| s.case(&[n], None)).collect(),
        sweep::measure,
    )];

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&vector_add::Variant::ALL, |v| v.kernel_name())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003".into()]
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(footprint(self.size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self.size)
    }
}

fn run(gpu: &Gpu, opts: &Options, out: &mut Out, size: usize) -> Result<()> {
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let toy_check = seed_toy(gpu, out, &mut rng)?;

    let ceiling = out.ceiling(gpu, opts.reps)?;
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
            opts.reps
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
        let trial = Plan::new(gpu, opts, &name, variant.kernel_name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_z,
                |d_z| vector_add::add_with(gpu, variant, &d_x, &d_y, d_z),
                |d_z, _| {
                    let got = gpu.download(d_z, variant.kernel_name())?;
                    out.verify(&format!("z_{name}"), &[], &got, |_| ())?;
                    let err = got
                        .iter()
                        .zip(&expected)
                        .map(|(g, e)| (g - e).abs())
                        .fold(0.0f32, f32::max);
                    Ok((verify::exact(&got, &expected), err))
                },
            )?;
        failures += !trial.passed() as usize;
        let gbps = trial.gbps();
        table.measured_row(
            [
                name.clone(),
                trial.grid_block(),
                format!("{:.3}", trial.timing.median_ms),
                format!("{:.3}", trial.timing.min_ms),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                format!("{:e}", trial.check.1),
                trial.verdict(),
            ],
            trial.measurement,
        );
    }
    out.table(table);
    if failures > 0 || toy_check.is_err() {
        bail!("{failures} vector-add variant(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The seed's toy: N = 1024, x[10] = y[10] = 100, add<<<8, 128>>>, print z[10]. Its buffers
/// are freed on return.
fn seed_toy(gpu: &Gpu, out: &mut Out, rng: &mut StdRng) -> Result<Result<(), verify::Mismatch>> {
    use gpu::vector_add::{SEED_BLOCK, SEED_GRID, SEED_N};
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
    out.dump("toy_x", &[], &x)?;
    out.dump("toy_y", &[], &y)?;
    let toy_check = out.verify("toy_z", &[], &z, |z| {
        verify::exact(z, &vector_add::reference(&x, &y))
    })?;
    out.line(format!(
        "seed toy: N = {SEED_N}, add<<<{SEED_GRID}, {SEED_BLOCK}>>>: z[10] = {} (seed prints 200); all {SEED_N} outputs vs CPU: {}",
        z[10],
        verdict(&toy_check)
    ));
    Ok(toy_check)
}
