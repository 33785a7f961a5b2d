//! `demo registers`: registers against local memory: a private array indexed at compile time
//! against one indexed at run time.

use anyhow::{Result, bail};
use cpu::lab::memory::registers;
use cpu::{Gpu, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Footprint, Plan};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant_name};
use crate::engine::report::{ChartKind, Table};

/// Registers vs local memory: a private array indexed at compile time vs at run time, timed,
/// with each kernel's registers and local memory as the driver reports them.
#[derive(clap::Args)]
pub(crate) struct Registers {
    /// Threads (one element each; default 2^24).
    #[arg(long, default_value_t = 1 << 24)]
    size: usize,
}

impl Pattern for Registers {
    const NAME: &'static str = "registers";

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&registers::Variant::ALL, |v| v.kernel_name())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003".into()]
    }

    /// Input and output on the device (8n bytes); input, reference and one downloaded output
    /// on the host (12n).
    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let size = self.size;
        Ok(Some(
            Footprint::new(format!("registers of {size} threads"))
                .device::<u32>(2, size)
                .host::<u32>(3, size)
                .with_ceiling(),
        ))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        registers_demo(gpu, out, opts, self.size)
    }
}

fn registers_demo(gpu: &Gpu, out: &mut Out, opts: &Options, size: usize) -> Result<()> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let x: Vec<u32> = (0..size).map(|_| rng.random()).collect();
    out.dump("x", &[], &x)?;
    let expected = registers::reference(&x);
    let d_x = gpu.upload(&x)?;
    let bytes = registers::bytes_moved(size);
    let mut table = Table::new(
        "kernels",
        format!(
            "registers vs local memory: {size} threads, a private array of {} u32 each (seed: \"local \
             memory ... 编译期无法确定数组的大小 / 运行时索引\"); registers and local bytes from the \
             driver (cuFuncGetAttribute, the loaded code); {} reps",
            gpu::memory::registers::ARRAY_LEN,
            opts.reps
        ),
        ChartKind::Bars,
        [
            "kernel",
            "registers/thread",
            "local bytes/thread",
            "grid x block",
            "median ms",
            "GB/s (DRAM)",
            "% of memcpy",
            "verdict",
        ],
    );
    let mut failures = 0;
    for variant in registers::Variant::ALL {
        let kernel = variant.kernel_name();
        let resources = gpu.kernel_resources(kernel)?;
        let mut d_out = gpu.poisoned(size, 0xDEAD_BEEFu32)?;
        let trial = Plan::new(gpu, opts, kernel, kernel)
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| registers::launch(gpu, variant, &d_x, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, kernel)?;
                    out.verify(
                        &format!("out_{}", variant_name(variant)),
                        &[],
                        &got,
                        |got| verify::exact(got, &expected),
                    )
                },
            )?;
        failures += !trial.passed() as usize;
        let gbps = trial.gbps();
        let cells = [
            kernel.to_string(),
            resources.registers.to_string(),
            resources.local_bytes.to_string(),
            trial.grid_block(),
            format!("{:.3}", trial.timing.median_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            trial.verdict(),
        ];
        let m = trial
            .measurement
            .extra("registers_per_thread", f64::from(resources.registers))
            .extra("local_bytes_per_thread", f64::from(resources.local_bytes));
        table.measured_row(cells, m);
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} registers kernel(s) disagree with the CPU reference");
    }
    Ok(())
}
