//! `demo coalescing`, `demo layout`, `demo bandwidth`, `demo texture`: the global-memory
//! and transfer topics of the memory hierarchy lab.

use std::time::Instant;

use crate::args::count_in;
use crate::harness::{Footprint, Plan, SMALL, Trial, WARMUP};
use crate::registry::{Pattern, VariantInfo, one_kernel_each, variant};
use crate::report::{ChartKind, Measurement, Table};
use crate::timing::{self, Ceiling, Timing};
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

use crate::{Options, Out, variant_name};

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

/// Timed repetitions for a transfer of `bytes`: at most 20 from 16 MiB on (a 1 GiB pageable
/// copy takes about 0.1 s), still a median of 20.
fn transfer_reps(opts: &Options, bytes: usize) -> usize {
    let reps = opts.reps as usize;
    if bytes >= 16 << 20 {
        reps.min(20)
    } else {
        reps
    }
}

/// Times one transfer kind and direction at `bytes`.
fn time_transfer(
    gpu: &Gpu,
    opts: &Options,
    kind: HostMemory,
    direction: Direction,
    host: &mut HostBuffer,
    device: &mut CudaSlice<u8>,
    bytes: usize,
) -> Result<Timing> {
    let reps = transfer_reps(opts, bytes);
    let warmup = if bytes >= 256 << 20 { 1 } else { WARMUP };
    Ok(timing::time_gpu(
        gpu,
        "host-device transfer",
        warmup,
        reps,
        || bandwidth::transfer(gpu, kind, direction, host, device, bytes),
    )?)
}

/// The measurement of a host-device transfer of `bytes` (`label` its direction, the host
/// memory kind its series), `passed` from the verification of that kind and direction; the
/// zero-copy kernel and its launch for mapped memory.
fn transfer_measurement(
    gpu: &Gpu,
    label: &str,
    kind: HostMemory,
    bytes: usize,
    t: &Timing,
    passed: bool,
) -> Result<Measurement> {
    let m = Measurement::new(label, t)
        .series(variant_name(kind))
        .bytes(bytes as u64, None)
        .passed(passed);
    Ok(if kind == HostMemory::ZeroCopy {
        m.kernel(bandwidth_copy_v4.name())
            .launch(&bandwidth::copy_config(gpu, bytes)?)
    } else {
        m
    })
}

/// Times a device-to-device copy of `bytes` (the driver's memcpy, or the copy kernel); its
/// bandwidth counts bytes read plus written, as the memcpy ceiling does.
fn time_d2d(
    gpu: &Gpu,
    opts: &Options,
    src: &CudaSlice<u8>,
    dst: &mut CudaSlice<u8>,
    bytes: usize,
    kernel: bool,
) -> Result<Timing> {
    let reps = transfer_reps(opts, bytes);
    Ok(timing::time_gpu(
        gpu,
        "device-to-device copy",
        WARMUP,
        reps,
        || {
            if kernel {
                bandwidth::kernel_copy(gpu, src, dst, bytes).map(drop)
            } else {
                gpu.stream()
                    .memcpy_dtod(&src.slice(..bytes), &mut dst.slice_mut(..bytes))
                    .during("device-to-device memcpy")
            }
        },
    )?)
}

/// The seed's bandwidthTest size, bytes.
const SEED_BYTES: usize = 33_554_432;

fn run_bandwidth(
    gpu: &Gpu,
    out: &mut Out,
    opts: &Options,
    max_size: usize,
    launches: usize,
) -> Result<()> {
    // No `--dump` here: the buffers are a byte pattern checked in place and host-device
    // copies of it, nothing an array file would show.
    let sizes = bandwidth::sweep_sizes(max_size);
    if sizes.is_empty() {
        bail!("--max-size {max_size}: the sweep starts at 1 KiB");
    }
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let started = Instant::now();
    let (mut transfers, checks) = Transfers::verified(gpu, opts, &ceiling, &sizes)?;
    out.line(format!(
        "verified: {} MiB through each host memory kind both ways, and device to device (memcpy, copy kernel): {}",
        transfers.buffer >> 20,
        if checks.is_empty() {
            "PASS".into()
        } else {
            checks.join("; ")
        }
    ));
    out.table(transfers.seed_table()?);
    transfers.sweeps(out, &sizes)?;
    out.table(read_stream_table(gpu, opts, &ceiling)?);
    out.table(launch_overhead(gpu, launches)?);
    out.line(format!(
        "bandwidth demo: {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    if !checks.is_empty() {
        bail!("{} transfer(s) delivered wrong bytes", checks.len());
    }
    Ok(())
}

/// The buffers every bandwidth measurement uses, and what their verification found.
struct Transfers<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    ceiling: &'a Ceiling,
    /// Bytes of every buffer: the sweep's largest size, at least the seed's 32 MiB.
    buffer: usize,
    d_a: CudaSlice<u8>,
    d_b: CudaSlice<u8>,
    /// Per host memory kind: its buffer and whether [host-to-device, device-to-host] verified.
    hosts: Vec<(HostMemory, HostBuffer, [bool; 2])>,
    /// Whether the device-to-device copies [memcpy, copy kernel] verified.
    d2d_ok: [bool; 2],
}

impl<'a> Transfers<'a> {
    /// Allocates the buffers and verifies every transfer once at the full buffer: through each
    /// host memory kind both ways, then device to device. Returns them and the failures, one
    /// sentence each.
    fn verified(
        gpu: &'a Gpu,
        opts: &'a Options,
        ceiling: &'a Ceiling,
        sizes: &[usize],
    ) -> Result<(Self, Vec<String>)> {
        let buffer = sizes.last().copied().unwrap_or(1024).max(SEED_BYTES);
        let mut t = Self {
            gpu,
            opts,
            ceiling,
            buffer,
            d_a: gpu.zeros::<u8>(buffer)?,
            d_b: gpu.zeros::<u8>(buffer)?,
            hosts: Vec::new(),
            d2d_ok: [true; 2],
        };
        let mut check_buf = vec![0u8; buffer];
        let mut checks = Vec::new();
        for kind in HostMemory::ALL {
            let (host, h2d, d2h) = t.verify_host_kind(kind, &mut check_buf)?;
            for (what, bad) in [("host-to-device", h2d), ("device-to-host", d2h)] {
                if let Some(i) = bad {
                    checks.push(format!(
                        "{}: {what} copy wrong at byte {i}",
                        variant_name(kind)
                    ));
                }
            }
            t.hosts.push((kind, host, [h2d.is_none(), d2h.is_none()]));
        }
        // Device to device, memcpy and kernel.
        let seed = opts.seed;
        for (slot, kernel) in [false, true].into_iter().enumerate() {
            gpu.stream().memset_zeros(&mut t.d_b)?;
            if kernel {
                bandwidth::kernel_copy(gpu, &t.d_a, &mut t.d_b, buffer)?;
            } else {
                gpu.stream().memcpy_dtod(&t.d_a, &mut t.d_b)?;
            }
            gpu.stream().memcpy_dtoh(&t.d_b, &mut check_buf)?;
            gpu.synchronize("checking a device-to-device copy")?;
            if let Some(i) = bandwidth::first_pattern_mismatch(seed, &check_buf, 1) {
                t.d2d_ok[slot] = false;
                checks.push(format!(
                    "device-to-device (kernel: {kernel}) wrong at byte {i}"
                ));
            }
        }
        Ok((t, checks))
    }

    /// One host memory kind at the full buffer: host -> device (checked on `check_buf`, a
    /// pageable copy of the device buffer), then device -> host into the cleared host buffer.
    /// Returns the buffer and the first wrong byte of each direction.
    fn verify_host_kind(
        &mut self,
        kind: HostMemory,
        check_buf: &mut [u8],
    ) -> Result<(HostBuffer, Option<usize>, Option<usize>)> {
        let (gpu, seed, buffer) = (self.gpu, self.opts.seed, self.buffer);
        let mut host = HostBuffer::new(gpu, kind, buffer)?;
        bandwidth::fill_pattern(seed, host.as_mut_slice());
        gpu.stream().memset_zeros(&mut self.d_a)?;
        let h2d = Direction::HostToDevice;
        bandwidth::transfer(gpu, kind, h2d, &mut host, &mut self.d_a, buffer)?;
        gpu.stream().memcpy_dtoh(&self.d_a, check_buf)?;
        gpu.synchronize("checking a host-to-device copy")?;
        let h2d = bandwidth::first_pattern_mismatch(seed, check_buf, 1);
        host.as_mut_slice().fill(0);
        let d2h = Direction::DeviceToHost;
        bandwidth::transfer(gpu, kind, d2h, &mut host, &mut self.d_a, buffer)?;
        gpu.synchronize("checking a device-to-host copy")?;
        // Write-combined memory is uncached for CPU reads: check one byte per 4 KiB and the tail.
        let step = if kind == HostMemory::WriteCombined {
            4096
        } else {
            1
        };
        let d2h = bandwidth::first_pattern_mismatch(seed, host.as_slice(), step);
        Ok((host, h2d, d2h))
    }

    /// The seed's table: 32 MiB each way, MB/s.
    fn seed_table(&mut self) -> Result<Table> {
        let (gpu, opts, ceiling) = (self.gpu, self.opts, self.ceiling);
        let mut seed_table = Table::new(
            "seed-bandwidth-test",
            "seed's bandwidthTest size, 33554432 bytes; MB/s = 10^6 bytes/s (the K80's bandwidthTest divided by 1.024e6)",
            ChartKind::Bars,
            [
                "direction (33554432 B)",
                "seed K80 MB/s",
                "pageable MB/s",
                "pinned MB/s",
                "write-combined MB/s",
                "zero-copy MB/s",
            ],
        );
        for (slot, direction, label, k80) in [
            (0, Direction::HostToDevice, "host to device", 7443.8),
            (1, Direction::DeviceToHost, "device to host", 8784.2),
        ] {
            let mut row = vec![label.to_string(), format!("{k80:.1}")];
            let mut measurements = Vec::new();
            for (kind, host, ok) in self.hosts.iter_mut() {
                let t =
                    time_transfer(gpu, opts, *kind, direction, host, &mut self.d_a, SEED_BYTES)?;
                let m = transfer_measurement(gpu, label, *kind, SEED_BYTES, &t, ok[slot])?;
                row.push(format!("{:.1}", m.gbps.unwrap_or_default() * 1e3));
                measurements.push(m);
            }
            multi_row(&mut seed_table, row, measurements);
        }
        let t = time_d2d(gpu, opts, &self.d_a, &mut self.d_b, SEED_BYTES, false)?;
        let m = Measurement::new("device to device", &t)
            .series("memcpy")
            .bytes(2 * SEED_BYTES as u64, Some(ceiling))
            .passed(self.d2d_ok[0]);
        let d2d_seed = m.gbps.unwrap_or_default();
        seed_table.measured_row(
            [
                "device to device (read + written)".to_string(),
                "152045.6".into(),
                format!("{:.1} (memcpy)", d2d_seed * 1e3),
                format!("{:.1} (ceiling, 512 MiB)", ceiling.gbps * 1e3),
                "-".into(),
                "-".into(),
            ],
            m,
        );
        Ok(seed_table)
    }

    /// The size sweeps: host to device and device to host per host memory kind, device to
    /// device by memcpy and by the copy kernel.
    fn sweeps(&mut self, out: &mut Out, sizes: &[usize]) -> Result<()> {
        let opts = self.opts;
        let sweep = |id: &str, title: String, dir: &str| {
            Table::new(
                id,
                title,
                ChartKind::Sweep {
                    x_label: "transfer bytes".into(),
                    log2_x: true,
                },
                [
                    format!("{dir} bytes"),
                    "pageable GB/s".into(),
                    "pinned GB/s".into(),
                    "write-combined GB/s".into(),
                    "zero-copy GB/s".into(),
                ],
            )
        };
        let mut sweep_h2d = sweep(
            "h2d-sweep",
            format!(
                "size sweep, median GB/s (10^9 bytes/s); up to {} reps, at most 20 from 16 MiB on",
                opts.reps
            ),
            "host to device",
        );
        let mut sweep_d2h = sweep(
            "d2h-sweep",
            "size sweep, device to host".into(),
            "device to host",
        );
        let mut sweep_d2d = Table::new(
            "d2d-sweep",
            "size sweep, device to device",
            ChartKind::Sweep {
                x_label: "transfer bytes".into(),
                log2_x: true,
            },
            [
                "device to device bytes",
                "memcpy GB/s (read + written)",
                "% of ceiling",
                "copy kernel GB/s",
                "% of ceiling",
            ],
        );
        for &bytes in sizes {
            self.host_sweep_rows(bytes, &mut sweep_h2d, &mut sweep_d2h)?;
            self.d2d_sweep_row(bytes, &mut sweep_d2d)?;
        }
        // The topic's figure is the pinned host-to-device copy at the largest size, not the
        // fastest transfer (device to device).
        let pinned = variant_name(HostMemory::Pinned);
        let largest = sizes.last().copied().unwrap_or(1024);
        if let Some(m) = sweep_h2d
            .measurements
            .iter()
            .find(|m| m.series.as_deref() == Some(&pinned) && m.x == Some(largest as f64))
        {
            let key = m.key();
            out.headline("h2d-sweep", &key);
        }
        out.table(sweep_h2d);
        out.table(sweep_d2h);
        out.table(sweep_d2d);
        Ok(())
    }

    /// The host-to-device and device-to-host rows at `bytes`: every host memory kind.
    fn host_sweep_rows(&mut self, bytes: usize, h2d: &mut Table, d2h: &mut Table) -> Result<()> {
        let (gpu, opts) = (self.gpu, self.opts);
        for (slot, direction, label, table) in [
            (0, Direction::HostToDevice, "host to device", h2d),
            (1, Direction::DeviceToHost, "device to host", d2h),
        ] {
            let mut row = vec![bytes.to_string()];
            let mut measurements = Vec::new();
            for (kind, host, ok) in self.hosts.iter_mut() {
                let t = time_transfer(gpu, opts, *kind, direction, host, &mut self.d_a, bytes)?;
                let m =
                    transfer_measurement(gpu, label, *kind, bytes, &t, ok[slot])?.at(bytes as f64);
                row.push(format!("{:.2}", m.gbps.unwrap_or_default()));
                measurements.push(m);
            }
            multi_row(table, row, measurements);
        }
        Ok(())
    }

    /// The device-to-device row at `bytes`: memcpy and the copy kernel.
    fn d2d_sweep_row(&mut self, bytes: usize, table: &mut Table) -> Result<()> {
        let (gpu, opts, ceiling) = (self.gpu, self.opts, self.ceiling);
        let tm = time_d2d(gpu, opts, &self.d_a, &mut self.d_b, bytes, false)?;
        let tk = time_d2d(gpu, opts, &self.d_a, &mut self.d_b, bytes, true)?;
        let mm = Measurement::new("device to device", &tm)
            .series("memcpy")
            .at(bytes as f64)
            .bytes(2 * bytes as u64, Some(ceiling))
            .passed(self.d2d_ok[0]);
        let mk = Measurement::new("device to device", &tk)
            .series("copy kernel")
            .at(bytes as f64)
            .kernel(bandwidth_copy_v4.name())
            .launch(&bandwidth::copy_config(gpu, bytes)?)
            .bytes(2 * bytes as u64, Some(ceiling))
            .passed(self.d2d_ok[1]);
        let (m, k) = (mm.gbps.unwrap_or_default(), mk.gbps.unwrap_or_default());
        multi_row(
            table,
            vec![
                bytes.to_string(),
                format!("{m:.1}"),
                format!("{:.1}%", ceiling.percent(m)),
                format!("{k:.1}"),
                format!("{:.1}%", ceiling.percent(k)),
            ],
            vec![mm, mk],
        );
        Ok(())
    }
}

/// The read-only ceiling ([`timing::read_ceiling`]): every launch shape of the read stream
/// over 1 GiB, its bandwidth (bytes read) beside the memcpy ceiling (bytes read + written),
/// the fastest marked.
fn read_stream_table(gpu: &Gpu, opts: &Options, ceiling: &Ceiling) -> Result<Table> {
    let read = timing::read_ceiling(gpu, timing::CEILING_READ_BYTES, WARMUP, opts.reps as usize)?;
    let mut table = Table::new(
        "read-stream",
        format!(
            "device read stream (the read-only ceiling of the reductions): {} MiB read with 16-byte loads, one word written per block, median of {} reps; GB/s counts bytes read",
            timing::CEILING_READ_BYTES >> 20,
            opts.reps
        ),
        ChartKind::Bars,
        [
            "loads in flight",
            "blocks per SM",
            "kernel",
            "grid x block",
            "median ms",
            "GB/s (read)",
            "% of memcpy",
            "fastest",
        ],
    );
    for (shape, launch, t) in &read.tried {
        let kernel = shape.in_flight.kernel_name();
        let m = Measurement::new(
            format!(
                "read x{} @ {}/SM",
                shape.in_flight.loads(),
                shape.blocks_per_sm
            ),
            t,
        )
        .kernel(kernel)
        .launch(launch)
        .bytes(read.ceiling.bytes_moved, Some(ceiling));
        let gbps = m.gbps.unwrap_or_default();
        table.measured_row(
            [
                shape.in_flight.loads().to_string(),
                shape.blocks_per_sm.to_string(),
                kernel.to_string(),
                crate::harness::describe(launch),
                format!("{:.3}", t.median_ms),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                if *shape == read.shape { "yes" } else { "" }.to_string(),
            ],
            m,
        );
    }
    Ok(table)
}

/// The launch overhead of the empty kernel: microseconds from the library's own clocks (no
/// per-repetition statistics), plain rows.
fn launch_overhead(gpu: &Gpu, launches: usize) -> Result<Table> {
    let o = bandwidth::launch_overhead(gpu, launches)?;
    let mut overhead = Table::new(
        "launch-overhead",
        "",
        ChartKind::None,
        ["empty kernel <<<1, 1>>>", "us per launch"],
    );
    overhead.row([
        format!(
            "GPU time, events around {} back-to-back launches",
            o.launches
        ),
        format!("{:.2}", o.gpu_us),
    ]);
    overhead.row([
        "host time to queue one launch".to_string(),
        format!("{:.2}", o.enqueue_us),
    ]);
    overhead.row([
        "host wall clock, launch + synchronize (median)".to_string(),
        format!("{:.2}", o.round_trip_us),
    ]);
    Ok(overhead)
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
