//! `demo smoke`: the smallest pattern (one kernel, one table): the worked example of
//! `docs/adding_a_pattern.md`.

use anyhow::{Context, Result, bail};
use cpu::Gpu;
use cpu::lab::smoke;

use crate::engine::harness::{Footprint, SMALL, verdict};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each};
use crate::engine::report::{ChartKind, Measurement, Table};

/// Peak memory of `demo smoke --size n`, at the largest kernel (the warp shuffle: an input and
/// three outputs of 4-byte elements): 16n bytes on the device; the input, the three downloaded
/// outputs and their references on the host (28n).
pub fn footprint(n: usize) -> Footprint {
    Footprint::new(format!("smoke of {n} elements"))
        .device::<i32>(4, n)
        .device_bytes(SMALL)
        .host::<i32>(7, n)
}

/// One kernel per device-support feature, each checked against the CPU.
#[derive(clap::Args)]
pub(crate) struct Smoke {
    /// Elements per smoke kernel (not a multiple of the block size by default).
    #[arg(long, default_value_t = 100_003)]
    size: usize,
}

impl Pattern for Smoke {
    const NAME: &'static str = "smoke";

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&smoke::Variant::ALL, |v| v.kernel_name())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 20000".into()]
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(footprint(self.size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self.size)
    }
}

fn run(gpu: &Gpu, opts: &Options, out: &mut Out, size: usize) -> Result<()> {
    // The kernels are checked, not timed: each row's measurement carries the verdict only (zero
    // timing), and the table is not charted.
    let mut table = Table::new(
        "kernels",
        "",
        ChartKind::None,
        ["kernel", "feature", "n", "seed", "verdict"],
    );
    let mut failures = 0;
    for variant in smoke::Variant::ALL {
        let kernel = variant.kernel_name();
        let outcome = smoke::check(gpu, variant, size, opts.seed)
            .with_context(|| format!("smoke kernel {kernel}"))?;
        failures += outcome.result.is_err() as usize;
        table.measured_row(
            [
                kernel.to_string(),
                variant.feature().to_string(),
                outcome.n.to_string(),
                outcome.seed.to_string(),
                verdict(&outcome.result),
            ],
            Measurement {
                variant: kernel.to_string(),
                kernel: Some(kernel.to_string()),
                passed: outcome.result.is_ok(),
                ..Default::default()
            },
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} smoke kernel(s) disagree with the CPU reference");
    }
    Ok(())
}
