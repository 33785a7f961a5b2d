//! `demo constant-memory`: a table read uniformly and divergently from `__constant__`, global and
//! read-only memory; and the seed's `devVar` example.

use anyhow::{Result, bail};
use cpu::lab::memory::constant_memory;
use cpu::{Gpu, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Footprint, Plan, SMALL, verdict};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant, variant_name};
use crate::engine::report::{ChartKind, Table};

/// Constant memory: a table read uniformly and divergently from `__constant__`, global and
/// read-only memory; and the seed's `devVar` example.
#[derive(clap::Args)]
pub(crate) struct ConstantMemory {
    /// Threads (default 2^20).
    #[arg(long, default_value_t = 1 << 20)]
    size: usize,
    /// Table reads per thread.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    reads: u32,
}

impl Pattern for ConstantMemory {
    const NAME: &'static str = "constant-memory";

    fn variants() -> Vec<VariantInfo> {
        let mut v = one_kernel_each(&constant_memory::Variant::ALL, |v| v.kernel_name());
        v.push(variant(
            "dev-var (seed example)",
            &[gpu::memory::constant_memory::kernels::constant_memory_dev_var.name()],
        ));
        v
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003 --reads 64".into()]
    }

    /// One output on the device (4n, and the 4 KiB table); one reference and one downloaded
    /// output on the host (8n).
    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let size = self.size;
        Ok(Some(
            Footprint::new(format!("constant-memory of {size} threads"))
                .device::<f32>(1, size)
                .device_bytes(SMALL)
                .host::<f32>(2, size),
        ))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        constant_memory_demo(gpu, out, opts, self.size, self.reads)
    }
}

fn constant_memory_demo(
    gpu: &Gpu,
    out: &mut Out,
    opts: &Options,
    size: usize,
    reads: u32,
) -> Result<()> {
    use constant_memory::{Access, Table as ConstTable, Variant};
    let dev_var = constant_memory::dev_var_example(gpu, 100, 4)?;
    out.verify("dev_var", &[], &dev_var, |_| ())?;
    let seed_check = verify::exact(&dev_var, &[100, 101, 102, 103]);
    out.line(format!(
        "seed example: __constant__ int devVar = 100; xminus<<<1, 4>>>: {dev_var:?} (seed prints 100 101 102 103): {}",
        verdict(&seed_check)
    ));
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let values: Vec<f32> = (0..gpu::memory::constant_memory::TABLE_LEN)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    out.dump("table", &[], &values)?;
    let table_data = ConstTable::new(gpu, &values)?;
    let mut table = reads_table(size, reads, opts.reps);
    let mut failures = seed_check.is_err() as usize;
    let mut baseline = None;
    let mut constants = gpu.constant_memory()?;
    table_data.write_constant(&mut constants)?;
    for access in Access::ALL {
        let expected = table_data.reference(size, access, reads);
        for variant in Variant::ALL {
            let kernel = variant.kernel_name();
            let mut d_out = gpu.poisoned(size, f32::NAN)?;
            let trial = Plan::new(gpu, opts, variant_name(variant), kernel).run(
                &mut d_out,
                |d_out| table_data.launch(gpu, variant, access, reads, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, kernel)?;
                    let name = format!("out_{}_{}", variant_name(variant), variant_name(access));
                    out.verify(&name, &[], &got, |got| verify::exact(got, &expected))
                },
            )?;
            failures += !trial.passed() as usize;
            let ms = trial.timing.median_ms;
            let base = *baseline.get_or_insert(ms);
            let greads = size as f64 * reads as f64 / (ms * 1e-3) / 1e9;
            let cells = [
                variant_name(variant),
                match access {
                    Access::Uniform => "one word per warp".to_string(),
                    Access::Divergent => "32 words per warp".to_string(),
                },
                kernel.to_string(),
                format!("{ms:.3}"),
                format!("{greads:.1}"),
                format!("{:.2}", ms / base),
                trial.verdict(),
            ];
            let m = trial
                .measurement
                .series(variant_name(access))
                .extra("g_reads_per_s", greads)
                .extra("x_constant_uniform", ms / base);
            table.measured_row(cells, m);
        }
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} constant-memory run(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The reads table: one row per access pattern and memory the table is in.
fn reads_table(size: usize, reads: u32, reps: u32) -> Table {
    Table::new(
        "reads",
        format!(
            "constant memory: {size} threads x {reads} reads of a {}-float table (4 KiB, cached on \
         chip in every case); {} reps",
            gpu::memory::constant_memory::TABLE_LEN,
            reps
        ),
        ChartKind::Bars,
        [
            "table in",
            "lanes read",
            "kernel",
            "median ms",
            "G reads/s",
            "x constant uniform",
            "verdict",
        ],
    )
}
