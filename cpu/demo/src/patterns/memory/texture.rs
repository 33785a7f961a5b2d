//! `demo texture`: a 1D lookup `out[i] = table[idx[i]]` through a texture object, plain global
//! loads and the read-only path, with random and sequential indices.

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::lab::memory::texture;
use cpu::verify::{self, Mismatch};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::args::count_in;
use crate::engine::harness::{Footprint, Plan, SMALL, Trial};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant_name};
use crate::engine::report::{ChartKind, Table};

/// A 1D lookup out[i] = table[idx[i]] through a texture object (tex1Dfetch), plain global
/// loads and the read-only path (__ldg), with random and sequential indices.
#[derive(clap::Args)]
pub(crate) struct Texture {
    /// Lookups (default 2^24).
    #[arg(long, default_value_t = 1 << 24)]
    size: usize,
    /// Table elements (default 2^20 f32: 4 MiB, resident in L2; at least 1, at most the
    /// device's 1D linear texture width).
    #[arg(long, default_value_t = 1 << 20, value_parser = count_in::<1, { u64::MAX }>)]
    table: usize,
}

impl Pattern for Texture {
    const NAME: &'static str = "texture";

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&texture::Variant::ALL, |v| v.kernel_name())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003 --table 4099".into()]
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(texture_footprint(self.size, self.table)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_texture(gpu, out, opts, self.size, self.table)
    }
}

/// Peak memory of `demo texture --size n --table t`: the table, one index pattern and the
/// output on the device (4t + 8n bytes); the table, both index patterns, one reference and
/// one downloaded output on the host (4t + 16n).
fn texture_footprint(n: usize, t: usize) -> Footprint {
    Footprint::new(format!("texture of {n} lookups in a table of {t}"))
        .device::<f32>(1, t)
        .device::<u32>(2, n)
        .device_bytes(SMALL)
        .host::<f32>(1, t)
        .host::<u32>(4, n)
}

fn run_texture(
    gpu: &Gpu,
    out: &mut Out,
    opts: &Options,
    size: usize,
    table_len: usize,
) -> Result<()> {
    if table_len == 0 {
        bail!("--table 0: the lookup table needs at least one element");
    }
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let table: Vec<f32> = (0..table_len)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    out.dump("table", &[], &table)?;
    let d_table = gpu.upload(&table)?;
    // (row label, series and dump name, indices)
    let patterns: [(&str, &str, Vec<u32>); 2] = [
        (
            "sequential (i mod table)",
            "sequential",
            (0..size).map(|i| (i % table_len) as u32).collect(),
        ),
        (
            "random",
            "random",
            (0..size)
                .map(|_| rng.random_range(0..table_len as u32))
                .collect(),
        ),
    ];
    let mut lookups = lookups_table(size, table_len, opts.reps);
    let mut failures = 0;
    for (name, series, idx) in &patterns {
        out.dump(&format!("idx_{series}"), &[], idx)?;
        let expected = texture::reference(&table, idx);
        let mut lookup = texture::Lookup::new(gpu, &d_table, idx)?;
        let mut global_ms = None;
        let mut trials = Vec::new();
        for variant in texture::Variant::ALL {
            gpu.stream().memset_zeros(&mut lookup.out)?;
            let kernel = variant.kernel_name();
            let trial = Plan::new(gpu, opts, variant_name(variant), kernel)
                .bytes(texture::bytes_moved(size), None)
                .run(
                    &mut lookup,
                    |lookup| lookup.launch(gpu, variant),
                    |lookup, _| {
                        let got = gpu.download(&lookup.out, kernel)?;
                        let name = format!("out_{series}_{}", variant_name(variant));
                        out.verify(&name, &[], &got, |got| verify::exact(got, &expected))
                    },
                )?;
            failures += !trial.passed() as usize;
            if variant == texture::Variant::Global {
                global_ms = Some(trial.timing.median_ms);
            }
            trials.push((variant, trial));
        }
        for (variant, trial) in trials {
            lookup_row(
                &mut lookups,
                (name, series),
                size,
                variant,
                trial,
                global_ms,
            );
        }
    }
    out.table(lookups);
    if failures > 0 {
        bail!("{failures} lookup(s) disagree with the CPU reference");
    }
    Ok(())
}

/// Adds the row of `variant` on the index pattern `(row label, series)`, against the plain
/// global loads' `global_ms`.
fn lookup_row(
    table: &mut Table,
    (name, series): (&str, &str),
    size: usize,
    variant: texture::Variant,
    trial: Trial<Result<(), Mismatch>>,
    global_ms: Option<f64>,
) {
    let ms = trial.timing.median_ms;
    let glookups = size as f64 / (ms * 1e-3) / 1e9;
    let vs_global = global_ms.unwrap_or(ms) / ms;
    let cells = [
        name.to_string(),
        variant_name(variant),
        variant.kernel_name().to_string(),
        format!("{ms:.4}"),
        format!("{glookups:.2}"),
        format!("{:.1}", trial.gbps()),
        format!("{vs_global:.2}"),
        trial.verdict(),
    ];
    let m = trial
        .measurement
        .series(series)
        .extra("g_lookups_per_s", glookups)
        .extra("vs_global", vs_global);
    table.measured_row(cells, m);
}

/// The lookups table: one row per index pattern and variant.
fn lookups_table(size: usize, table_len: usize, reps: u32) -> Table {
    Table::new(
        "lookups",
        format!(
            "out[i] = table[idx[i]]: {size} lookups in a table of {table_len} f32 ({} KiB), {} reps",
            (table_len * 4) >> 10,
            reps
        ),
        ChartKind::Bars,
        [
            "indices",
            "variant",
            "kernel",
            "median ms",
            "G lookups/s",
            "GB/s (12 B per lookup)",
            "vs global",
            "verdict",
        ],
    )
}
