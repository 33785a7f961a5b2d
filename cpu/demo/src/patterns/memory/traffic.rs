//! `demo coalescing`, `demo layout`, `demo bandwidth`, `demo texture`: the global-memory
//! and transfer topics of the memory hierarchy lab.

mod transfers;

use std::time::Instant;
use transfers::*;

use crate::engine::args::count_in;
use crate::engine::harness::{Footprint, Plan, SMALL, Trial, WARMUP};
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant};
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::{self, Ceiling, Timing};
use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::error::DriverContext;
use cpu::lab::memory::bandwidth::{self, Direction, HostBuffer, HostMemory};
use cpu::lab::memory::coalescing::{self, Access, LINE_BYTES, Load, SECTOR_BYTES};
use cpu::lab::memory::{layout, texture};
use cpu::verify::{self, Mismatch};
use cudarc::driver::CudaSlice;
use gpu::memory::bandwidth::kernels::bandwidth_copy_v4;
use gpu::memory::layout::InnerStruct;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::variant_name;

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

/// Host-device bandwidth like bandwidthTest: pageable, pinned, write-combined and zero-copy,
/// at the seed's 32 MiB and over 1 KiB .. --max-size; device-to-device beside the memcpy
/// ceiling; the read-only ceiling (a read stream); the launch overhead of an empty kernel.
#[derive(clap::Args)]
pub(crate) struct Bandwidth {
    /// Largest transfer of the sweep in bytes (powers of 4 from 1 KiB; default 1 GiB; at least
    /// 1024).
    #[arg(long, default_value_t = 1 << 30, value_parser = count_in::<1024, { u64::MAX }>)]
    max_size: usize,
    /// Back-to-back launches of the empty kernel (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = count_in::<1, { u64::MAX }>)]
    launches: usize,
}

impl Pattern for Bandwidth {
    const NAME: &'static str = "bandwidth";

    /// The host memory kinds (driver copies, and the zero-copy kernel), device to device, the
    /// empty kernel of the launch overhead, and the read stream of the read-only ceiling.
    fn variants() -> Vec<VariantInfo> {
        use gpu::memory::bandwidth::kernels::bandwidth_empty_kernel;
        let mut v: Vec<VariantInfo> = bandwidth::HostMemory::ALL
            .iter()
            .map(|&kind| {
                if kind == bandwidth::HostMemory::ZeroCopy {
                    variant(variant_name(kind), &[bandwidth_copy_v4.name()])
                } else {
                    variant(format!("{} (driver copy)", variant_name(kind)), &[])
                }
            })
            .collect();
        v.push(variant("device-to-device memcpy (driver copy)", &[]));
        v.push(variant(
            "device-to-device copy kernel",
            &[bandwidth_copy_v4.name()],
        ));
        v.push(variant("launch overhead", &[bandwidth_empty_kernel.name()]));
        v.push(variant(
            "device read stream (read-only ceiling)",
            cpu::lab::memory::read_stream::KERNELS,
        ));
        v
    }

    fn sanitize() -> Vec<String> {
        vec!["--max-size 1048576 --launches 50".into()]
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(bandwidth_footprint(self.max_size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_bandwidth(gpu, out, opts, self.max_size, self.launches)
    }
}

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

/// Peak memory of `demo coalescing --size n`: the input and one point's output (at most n)
/// on the device (8n bytes); the input and the buffer outputs are copied back into on the
/// host (8n).
fn coalescing_footprint(n: usize) -> Footprint {
    Footprint::new(format!("coalescing of {n} elements"))
        .device::<f32>(2, n)
        .host::<f32>(2, n)
        .with_ceiling()
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

/// Peak memory of `demo bandwidth --max-size B`, with buffers of b = max(the sweep's largest
/// size, 32 MiB) bytes: two on the device (2b) and the read-only ceiling's buffer (1 GiB); one
/// per host memory kind (pageable, pinned, write-combined, zero-copy) and the check buffer on
/// the host (5b).
fn bandwidth_footprint(max_size: usize) -> Footprint {
    let largest = bandwidth::sweep_sizes(max_size).last().copied();
    let b = largest.unwrap_or(1024).max(SEED_BYTES);
    Footprint::new(format!("bandwidth up to {max_size} bytes"))
        .device::<u8>(2, b)
        .device_bytes(timing::CEILING_READ_BYTES as u64)
        .host::<u8>(5, b)
        .with_ceiling()
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

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// Adds a row that displays several measurements (one per load path, per host-memory kind):
/// the first through `measured_row`, the others pointed at the same row.
fn multi_row(table: &mut Table, cells: Vec<String>, measurements: Vec<Measurement>) {
    let mut measurements = measurements.into_iter();
    match measurements.next() {
        Some(first) => table.measured_row(cells, first),
        None => table.row(cells),
    }
    let row = table.rows.len() - 1;
    for mut m in measurements {
        m.row = row;
        table.measurements.push(m);
    }
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
