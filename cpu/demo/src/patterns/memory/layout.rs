//! `demo layout`: array of structs against struct of arrays (simpleMathAoS / simpleMathSoA), with
//! the 8-byte aligned struct as the AoS fix.

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::lab::memory::layout;
use cpu::verify::{self};
use gpu::memory::layout::InnerStruct;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Footprint, Plan};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant_name};
use crate::engine::report::{ChartKind, Table};

/// Array of structs against struct of arrays (simpleMathAoS / simpleMathSoA: x += 10,
/// y += 20), with the 8-byte aligned struct as the AoS fix.
#[derive(clap::Args)]
pub(crate) struct Layout {
    /// Structs (default 2^25: 256 MiB read and 256 MiB written per launch).
    #[arg(long, default_value_t = 1 << 25)]
    size: usize,
}

impl Pattern for Layout {
    const NAME: &'static str = "layout";

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&layout::Variant::ALL, |v| v.kernel_name())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003".into()]
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(layout_footprint(self.size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_layout(gpu, out, opts, self.size)
    }
}

/// Peak memory of `demo layout --size n` (structs of two f32): one layout's input and output
/// on the device (16n bytes); the structs, the reference, one result and the library's copy
/// in the layout on the host (32n).
fn layout_footprint(n: usize) -> Footprint {
    Footprint::new(format!("layout of {n} structs"))
        .device::<InnerStruct>(2, n)
        .host::<InnerStruct>(4, n)
        .with_ceiling()
}

/// Structs as an `n x 2` array of floats (x, y), for `--dump`.
fn flatten(structs: &[InnerStruct]) -> Vec<f32> {
    structs.iter().flat_map(|s| [s.x, s.y]).collect()
}

fn run_layout(gpu: &Gpu, out: &mut Out, opts: &Options, size: usize) -> Result<()> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let data: Vec<InnerStruct> = (0..size)
        .map(|_| InnerStruct {
            x: rng.random_range(-1.0..1.0),
            y: rng.random_range(-1.0..1.0),
        })
        .collect();
    let shape = [size as u64, 2];
    if out.dumping() {
        out.dump("input", &shape, &flatten(&data))?;
    }
    let expected = layout::reference(&data);
    let bytes = layout::bytes_moved(size);
    let mut table = Table::new(
        "layouts",
        format!(
            "x += 10, y += 20 on {size} structs of two f32 ({} MiB read + written per launch), {} reps",
            bytes >> 20,
            opts.reps
        ),
        ChartKind::Bars,
        [
            "variant",
            "kernel",
            "grid x block",
            "median ms",
            "min ms",
            "GB/s",
            "% of memcpy",
            "speedup vs aos",
            "verdict",
        ],
    );
    let mut failures = 0;
    let mut aos_ms = None;
    for variant in layout::Variant::ALL {
        let name = variant_name(variant);
        let mut d = layout::DeviceData::new(gpu, variant, &data)?;
        let trial = Plan::new(gpu, opts, &name, variant.kernel_name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d,
                |d| d.launch(gpu),
                |d, _| {
                    let got = d.result(gpu)?;
                    if out.dumping() {
                        out.verify(&format!("output_{name}"), &shape, &flatten(&got), |_| ())?;
                    }
                    Ok(verify::exact(&got, &expected))
                },
            )?;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        let base = *aos_ms.get_or_insert(ms);
        let gbps = trial.gbps();
        let cells = [
            name,
            variant.kernel_name().to_string(),
            trial.grid_block(),
            format!("{ms:.4}"),
            format!("{:.4}", trial.timing.min_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            format!("{:.2}", base / ms),
            trial.verdict(),
        ];
        let m = trial.measurement.extra("speedup_vs_aos", base / ms);
        table.measured_row(cells, m);
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} layout variant(s) disagree with the CPU reference");
    }
    Ok(())
}
