//! `demo conv1d`: its definition (arguments and `impl Pattern`), footprint and run.

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::convolution::{self, Mask1d, Variant1d};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::engine::args::odd_width;
use crate::engine::harness::{Footprint, Plan, SMALL};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, kernels_each, variant_name, widths};
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::{SweepSpec, powers};

/// 1D convolution: the seed's four kernels (basic, __constant__ mask, tiled halo, cached
/// halo) and the vec4 tile, verified and timed.
#[derive(clap::Args)]
pub(crate) struct Conv1d {
    /// Elements (default 2^26: 512 MiB moved per launch).
    #[arg(long, default_value_t = 1 << 26)]
    pub(super) size: usize,
    /// Mask width (odd, 1..=31).
    #[arg(long, default_value_t = 7, value_parser = odd_width::<{ convolution::MAX_MASK_WIDTH }>)]
    pub(super) mask_width: usize,
}

impl Pattern for Conv1d {
    const NAME: &'static str = "conv1d";
    /// `cpu::convolution::conv1d` at 2^16 .. 2^28 (x4) elements with mask width 7, then
    /// widths 1, 3, ..., 31 at 2^26 (7 once).
    const SWEEPS: &'static [SweepSpec] = &[SweepSpec::new(
        "conv1d",
        "cpu::convolution::conv1d",
        "8 bytes per element: 1 read + 1 write",
        |s| {
            let sizes = powers(16, 28, 2).map(|n| s.case(&[n], Some(7)));
            let widths = (1..=convolution::MAX_MASK_WIDTH)
                .step_by(2)
                .filter(|&w| w != 7)
                .map(|w| s.case(&[1 << 26], Some(w)));
            sizes.chain(widths).collect()
        },
        sweep_1d,
    )
    .convolution(7, "by size, mask width 7")];

    fn variants() -> Vec<VariantInfo> {
        kernels_each(&Variant1d::ALL, |v| {
            widths(convolution::MAX_MASK_WIDTH, |w| v.entry(w))
        })
    }

    fn sanitize() -> Vec<String> {
        mask_width_cases(
            "--size 100003",
            7,
            "--size 20011",
            convolution::MAX_MASK_WIDTH,
        )
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(footprint_1d(self.size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_1d(gpu, opts, out, self.size, self.mask_width)
    }
}

/// Peak memory of `demo conv1d --size n`: the input and one variant's output on the device
/// (8n bytes, and the mask); on the host the input (4n), the f64 reference and its scale
/// (16n) and one downloaded output (4n).
pub fn footprint_1d(n: usize) -> Footprint {
    Footprint::new(format!("conv1d of {n} elements"))
        .device::<f32>(2, n)
        .device_bytes(SMALL)
        .host::<f32>(2, n)
        .host::<f64>(2, n)
        .with_ceiling()
}

pub(super) fn run_1d(
    gpu: &Gpu,
    opts: &Options,
    out: &mut Out,
    size: usize,
    mask_width: usize,
) -> Result<()> {
    convolution::validate_mask_width(1, mask_width)?;
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let input: Vec<f32> = (0..size).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mask_values: Vec<f32> = (0..mask_width)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    out.dump("input", &[], &input)?;
    out.dump("mask", &[], &mask_values)?;
    let reference = convolution::reference_1d(&input, &mask_values);
    let mask = Mask1d::new(gpu, &mask_values)?;
    let d_in = gpu.upload(&input)?;
    let bytes = convolution::bytes_moved(size);
    let fp32 = floor_line(gpu, out, &ceiling, size, mask_width, 1, false)?;
    let floor = floor_of(size, mask_width as u64, &ceiling, &fp32);

    let mut table = Table::new(
        "variants",
        format!(
            "conv1d, N = {size} f32, mask width {mask_width} (random, in __constant__ memory; in global memory for the basic kernel), \
             {:.0} MiB moved per launch (1 read + 1 write), {} reps; access ratio = loads of N by the untiled kernels / by this one (seed 3.2)",
            bytes as f64 / (1 << 20) as f64,
            opts.reps
        ),
        ChartKind::Bars,
        HEADER,
    );
    out.headline("variants", &variant_name(Variant1d::Convolution1dTiledVec4));
    let (mut failures, mut basic_ms) = (0, None);
    for variant in Variant1d::ALL {
        let name = variant_name(variant);
        let mut d_out = gpu.poisoned(size, f32::NAN)?;
        let entry = variant.entry(mask_width);
        let trial = Plan::new(gpu, opts, &name, entry)
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| convolution::conv1d_with(gpu, variant, &d_in, &mask, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, entry)?;
                    out.verify(&format!("output_{name}"), &[], &got, |got| {
                        convolution::compare(got, &reference)
                    })
                },
            )?;
        failures += !trial.passed() as usize;
        let basic = *basic_ms.get_or_insert(trial.timing.median_ms);
        let access_ratio = variant.access_ratio(mask_width, trial.cfg.block_dim.0);
        let seed = variant.seed_section().unwrap_or("-");
        variant_row(
            &mut table,
            &ceiling,
            &floor,
            trial,
            seed,
            basic,
            access_ratio,
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} conv1d variant(s) disagree with the CPU reference");
    }
    Ok(())
}
