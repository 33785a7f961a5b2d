//! `demo coalescing`: a copy whose read is misaligned, then strided, with cached and L2-only
//! loads: effective GB/s and load efficiency per point.

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::lab::memory::coalescing::{self, Access, LINE_BYTES, Load, SECTOR_BYTES};
use cpu::verify::Mismatch;
use cudarc::driver::CudaSlice;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::cells::{multi_row, pct};
use crate::engine::args::count_in;
use crate::engine::harness::{Footprint, Plan, Trial};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, variant, variant_name};
use crate::engine::report::{ChartKind, Table};
use crate::engine::timing::{self, Ceiling};

/// Global-memory coalescing: a copy whose read is misaligned by 0..=32 floats, then strided by
/// 1..=32 floats, with cached (ld.ca) and L2-only (ld.cg) loads; effective GB/s and load
/// efficiency per point.
#[derive(clap::Args)]
pub(crate) struct Coalescing {
    /// Elements of the array read (default 2^26 f32, 256 MiB, five times an H100's L2).
    #[arg(long, default_value_t = 1 << 26)]
    size: usize,
    /// Largest misalignment offset of the sweep, in elements (at most 32).
    #[arg(
        long,
        default_value_t = gpu::memory::coalescing::MAX_OFFSET,
        value_parser = count_in::<0, { gpu::memory::coalescing::MAX_OFFSET as u64 }>
    )]
    max_offset: usize,
    /// Largest stride of the sweep, in elements (at most 32).
    #[arg(
        long,
        default_value_t = gpu::memory::coalescing::MAX_STRIDE,
        value_parser = count_in::<1, { gpu::memory::coalescing::MAX_STRIDE as u64 }>
    )]
    max_stride: usize,
}

impl Pattern for Coalescing {
    const NAME: &'static str = "coalescing";

    /// Both sweeps (misaligned, strided), each through both load paths.
    fn variants() -> Vec<VariantInfo> {
        let mut v = Vec::new();
        for (sweep, access) in [
            ("misaligned", Access::Offset(0)),
            ("strided", Access::Stride(1)),
        ] {
            for load in Load::ALL {
                v.push(variant(
                    format!("{sweep} ld.{}", variant_name(load)),
                    &[access.kernel_name(load)],
                ));
            }
        }
        v
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003".into()]
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(coalescing_footprint(self.size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_coalescing(gpu, out, opts, self.size, self.max_offset, self.max_stride)
    }
}

/// Peak memory of `demo coalescing --size n`: the input and one point's output (at most n)
/// on the device (8n bytes); the input and the buffer outputs are copied back into on the
/// host (8n).
fn coalescing_footprint(n: usize) -> Footprint {
    Footprint::new(format!("coalescing of {n} elements"))
        .device::<f32>(2, n)
        .host::<f32>(2, n)
        .with_ceiling()
}

/// A coalescing point's variant (the sweep it belongs to), its offset or stride, and the
/// first byte it reads modulo 128.
fn sweep_point(access: Access) -> (&'static str, usize, usize) {
    match access {
        Access::Offset(o) => ("misaligned copy", o, (4 * o) % 128),
        Access::Stride(s) => ("strided copy", s, 0),
    }
}

fn coalescing_header(what: &str) -> [&str; 11] {
    [
        what,
        "first byte mod 128",
        "sectors / warp",
        "load eff. (32 B sectors)",
        "seed's 128 B-line eff.",
        "ld.ca GB/s",
        "ld.cg GB/s",
        "ld.ca % memcpy",
        "ld.cg % memcpy",
        "DRAM GB/s (ld.cg)",
        "verdict",
    ]
}

/// What every point of the coalescing sweeps shares: the input (host and device), the host
/// buffer outputs are copied back into, and the failures so far.
struct CoalescingPoints<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    ceiling: &'a Ceiling,
    x: Vec<f32>,
    d_x: CudaSlice<f32>,
    host_y: Vec<f32>,
    failures: usize,
}

impl CoalescingPoints<'_> {
    /// One point: both load paths (Load::ALL order: ld.ca, then ld.cg), each verified, then
    /// timed. With `dump`, each kernel's downloaded output is written (the demo dumps the last
    /// point of each sweep only: every point's output would be tens of GiB).
    fn point(
        &mut self,
        out: &Out,
        access: Access,
        dump: bool,
    ) -> Result<Vec<Trial<Result<(), Mismatch>>>> {
        let gpu = self.gpu;
        let n = access.outputs(self.x.len());
        let (variant, param, _) = sweep_point(access);
        let mut y = gpu.zeros::<f32>(n)?;
        let mut trials = Vec::new();
        for load in Load::ALL {
            let kernel = access.kernel_name(load);
            gpu.stream()
                .memset_zeros(&mut y)
                .map_err(|e| anyhow::anyhow!("clearing the output: {e}"))?;
            let (x, d_x, host_y) = (&self.x, &self.d_x, &mut self.host_y[..n]);
            let trial = Plan::new(gpu, self.opts, variant, kernel)
                .bytes(coalescing::bytes_requested(n), Some(self.ceiling))
                .run(
                    &mut y,
                    |y| coalescing::launch(gpu, access, load, d_x, y),
                    |y, _| {
                        gpu.stream().memcpy_dtoh(y, host_y).map_err(|e| {
                            anyhow::anyhow!("{kernel} (running, or copying back): {e}")
                        })?;
                        if dump {
                            out.verify(&format!("y_{kernel}_{param}"), &[], host_y, |_| ())?;
                        }
                        Ok(coalescing::check(access, x, host_y))
                    },
                )?;
            self.failures += !trial.passed() as usize;
            trials.push(trial);
        }
        Ok(trials)
    }

    /// One row: both load paths' measurements (series ld.ca and ld.cg) at the point's offset
    /// or stride; GB/s counts the requested bytes, the DRAM figure (ld.cg) every sector once.
    fn add_row(&mut self, out: &Out, table: &mut Table, access: Access, dump: bool) -> Result<()> {
        let (_, param, first) = sweep_point(access);
        let n = access.outputs(self.x.len());
        let trials = self.point(out, access, dump)?;
        let dram = access.dram_read_bytes(n) + 4 * n as u64;
        let ms_cg = trials
            .iter()
            .find(|t| t.measurement.kernel.as_deref() == Some(access.kernel_name(Load::Cg)))
            .map_or(0.0, |t| t.timing.median_ms);
        let failed: Vec<String> = trials
            .iter()
            .filter(|t| !t.passed())
            .map(|t| {
                format!(
                    "{}: {}",
                    t.measurement.kernel.as_deref().unwrap_or("-"),
                    t.verdict()
                )
            })
            .collect();
        let mut measurements = Vec::new();
        for (load, t) in Load::ALL.into_iter().zip(trials) {
            let mut m = t
                .measurement
                .series(format!("ld.{}", variant_name(load)))
                .at(param as f64)
                .extra(
                    "sectors_per_warp",
                    access.segments_per_warp(SECTOR_BYTES) as f64,
                )
                .extra(
                    "load_efficiency_sectors",
                    access.load_efficiency(SECTOR_BYTES),
                )
                .extra("load_efficiency_lines", access.load_efficiency(LINE_BYTES));
            if load == Load::Cg {
                m = m.extra("dram_gbps", timing::gbps(dram, ms_cg));
            }
            measurements.push(m);
        }
        let gbps: Vec<f64> = measurements
            .iter()
            .map(|m| m.gbps.unwrap_or_default())
            .collect();
        let ceiling = self.ceiling;
        multi_row(
            table,
            vec![
                param.to_string(),
                first.to_string(),
                access.segments_per_warp(SECTOR_BYTES).to_string(),
                pct(access.load_efficiency(SECTOR_BYTES)),
                pct(access.load_efficiency(LINE_BYTES)),
                format!("{:.1}", gbps[0]),
                format!("{:.1}", gbps[1]),
                format!("{:.1}%", ceiling.percent(gbps[0])),
                format!("{:.1}%", ceiling.percent(gbps[1])),
                format!("{:.1}", timing::gbps(dram, ms_cg)),
                if failed.is_empty() {
                    "PASS".to_string()
                } else {
                    failed.join("; ")
                },
            ],
            measurements,
        );
        Ok(())
    }
}

fn run_coalescing(
    gpu: &Gpu,
    out: &mut Out,
    opts: &Options,
    size: usize,
    max_offset: usize,
    max_stride: usize,
) -> Result<()> {
    Access::Offset(max_offset).validate()?;
    Access::Stride(max_stride).validate()?;
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    // In [1, 2): never zero, so an output the kernel misses (left at 0) is caught.
    let x: Vec<f32> = (0..size).map(|_| rng.random_range(1.0..2.0)).collect();
    out.dump("x", &[], &x)?;
    let mut sweep = CoalescingPoints {
        gpu,
        opts,
        ceiling: &ceiling,
        d_x: gpu.upload(&x)?,
        x,
        host_y: vec![0f32; size],
        failures: 0,
    };
    let mut offsets = Table::new(
        "offsets",
        format!(
            "misaligned copy y[i] = x[i + offset]: x of {size} f32, {} reps; GB/s = (4 B read + 4 B written) per element / median time",
            opts.reps
        ),
        ChartKind::Sweep {
            x_label: "offset (floats)".into(),
            log2_x: false,
        },
        coalescing_header("offset (floats)"),
    );
    for o in 0..=max_offset {
        sweep.add_row(out, &mut offsets, Access::Offset(o), o == max_offset)?;
    }
    // The aligned copy through the default (L1-cached) path is the topic's figure, not the
    // fastest point of the sweep.
    if let Some(aligned) = offsets
        .measurements
        .iter()
        .find(|m| m.x == Some(0.0) && m.series.as_deref() == Some("ld.ca"))
    {
        let key = aligned.key();
        out.headline("offsets", &key);
    }
    out.table(offsets);

    let mut strides = Table::new(
        "strides",
        format!(
            "strided copy y[i] = x[i * stride]: x of {size} f32, ceil({size} / stride) outputs; DRAM GB/s counts every 32-byte sector read once plus the writes"
        ),
        ChartKind::Sweep {
            x_label: "stride (floats)".into(),
            log2_x: false,
        },
        coalescing_header("stride (floats)"),
    );
    for s in 1..=max_stride {
        sweep.add_row(out, &mut strides, Access::Stride(s), s == max_stride)?;
    }
    out.table(strides);
    if sweep.failures > 0 {
        bail!(
            "{} coalescing copies disagree with the CPU reference",
            sweep.failures
        );
    }
    Ok(())
}
