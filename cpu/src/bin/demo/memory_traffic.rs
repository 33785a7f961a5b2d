//! `demo coalescing`, `demo layout`, `demo bandwidth`, `demo texture`: the global-memory
//! and transfer topics of the memory hierarchy lab.

use std::time::Instant;

use anyhow::{Result, bail};
use clap::Subcommand;
use comfy_table::{Table, presets::ASCII_MARKDOWN};
use cpu::error::DriverContext;
use cpu::memory::bandwidth::{self, Direction, HostBuffer, HostMemory};
use cpu::memory::coalescing::{self, Access, LINE_BYTES, Load, SECTOR_BYTES};
use cpu::memory::{layout, texture};
use cpu::timing;
use cpu::{Gpu, launch, verify};
use cudarc::driver::CudaSlice;
use gpu::memory::layout::InnerStruct;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Cli, Out, variant_name, verdict};

const WARMUP: usize = 3;

/// The global-memory and transfer topics.
#[derive(Subcommand)]
pub enum Topic {
    /// Global-memory coalescing: a copy whose read is misaligned by 0..=32 floats, then strided
    /// by 1..=32 floats, with cached (ld.ca) and L2-only (ld.cg) loads; effective GB/s and load
    /// efficiency per point.
    Coalescing {
        /// Elements of the array read (default 2^26 f32, 256 MiB, five times an H100's L2).
        #[arg(long, default_value_t = 1 << 26)]
        size: usize,
        /// Largest misalignment offset of the sweep, in elements (at most 32).
        #[arg(long, default_value_t = gpu::memory::coalescing::MAX_OFFSET)]
        max_offset: usize,
        /// Largest stride of the sweep, in elements (at most 32).
        #[arg(long, default_value_t = gpu::memory::coalescing::MAX_STRIDE)]
        max_stride: usize,
    },
    /// Array of structs against struct of arrays (simpleMathAoS / simpleMathSoA: x += 10,
    /// y += 20), with the 8-byte aligned struct as the AoS fix.
    Layout {
        /// Structs (default 2^25: 256 MiB read and 256 MiB written per launch).
        #[arg(long, default_value_t = 1 << 25)]
        size: usize,
    },
    /// Host-device bandwidth like bandwidthTest: pageable, pinned, write-combined and
    /// zero-copy, at the seed's 32 MiB and over 1 KiB .. --max-size; device-to-device beside
    /// the memcpy ceiling; the launch overhead of an empty kernel.
    Bandwidth {
        /// Largest transfer of the sweep in bytes (powers of 4 from 1 KiB; default 1 GiB).
        #[arg(long, default_value_t = 1 << 30)]
        max_size: usize,
        /// Back-to-back launches of the empty kernel.
        #[arg(long, default_value_t = 1000)]
        launches: usize,
    },
    /// A 1D lookup out[i] = table[idx[i]] through a texture object (tex1Dfetch), plain global
    /// loads and the read-only path (__ldg), with random and sequential indices.
    Texture {
        /// Lookups (default 2^24).
        #[arg(long, default_value_t = 1 << 24)]
        size: usize,
        /// Table elements (default 2^20 f32: 4 MiB, resident in L2).
        #[arg(long, default_value_t = 1 << 20)]
        table: usize,
    },
}

pub fn run(gpu: &Gpu, cli: &Cli, out: &mut Out, topic: &Topic) -> Result<()> {
    match *topic {
        Topic::Coalescing {
            size,
            max_offset,
            max_stride,
        } => run_coalescing(gpu, out, cli, size, max_offset, max_stride),
        Topic::Layout { size } => run_layout(gpu, out, cli, size),
        Topic::Bandwidth { max_size, launches } => run_bandwidth(gpu, out, cli, max_size, launches),
        Topic::Texture { size, table } => run_texture(gpu, out, cli, size, table),
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn run_coalescing(
    gpu: &Gpu,
    out: &mut Out,
    cli: &Cli,
    size: usize,
    max_offset: usize,
    max_stride: usize,
) -> Result<()> {
    Access::Offset(max_offset).validate()?;
    Access::Stride(max_stride).validate()?;
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    // In [1, 2): never zero, so an output the kernel misses (left at 0) is caught.
    let x: Vec<f32> = (0..size).map(|_| rng.random_range(1.0..2.0)).collect();
    let d_x = gpu.upload(&x)?;
    let mut host_y = vec![0f32; size];
    let mut failures = 0;

    // One point: both load paths, each verified, then timed. Returns the GB/s (requested
    // bytes) per load path and the verdicts.
    let mut point = |access: Access| -> Result<([f64; 2], u64, f64, String)> {
        let n = access.outputs(size);
        let mut y = gpu.zeros::<f32>(n)?;
        let mut gbps = [0.0; 2];
        let mut ms_cg = 0.0;
        let mut verdicts = Vec::new();
        for (slot, load) in Load::ALL.into_iter().enumerate() {
            let kernel = access.kernel_name(load);
            gpu.stream()
                .memset_zeros(&mut y)
                .map_err(|e| anyhow::anyhow!("clearing the output: {e}"))?;
            coalescing::launch(gpu, access, load, &d_x, &mut y)?;
            gpu.stream()
                .memcpy_dtoh(&y, &mut host_y[..n])
                .map_err(|e| anyhow::anyhow!("{kernel} (running, or copying back): {e}"))?;
            let check = coalescing::check(access, &x, &host_y[..n]);
            failures += check.is_err() as usize;
            if check.is_err() {
                verdicts.push(format!("{kernel}: {}", verdict(&check)));
            }
            let t = timing::time_gpu(gpu, kernel, WARMUP, cli.reps as usize, || {
                coalescing::launch(gpu, access, load, &d_x, &mut y).map(drop)
            })?;
            gbps[slot] = t.gbps(coalescing::bytes_requested(n));
            if load == Load::Cg {
                ms_cg = t.median_ms;
            }
        }
        let dram = access.dram_read_bytes(n) + 4 * n as u64;
        let v = if verdicts.is_empty() {
            "PASS".to_string()
        } else {
            verdicts.join("; ")
        };
        Ok((gbps, dram, ms_cg, v))
    };

    let header = |what: &str| {
        let mut t = Table::new();
        t.load_preset(ASCII_MARKDOWN).set_header([
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
        ]);
        t
    };
    let mut add_row =
        |table: &mut Table, label: String, access: Access, first: usize| -> Result<()> {
            let (gbps, dram, ms_cg, v) = point(access)?;
            table.add_row([
                label,
                first.to_string(),
                access.segments_per_warp(SECTOR_BYTES).to_string(),
                pct(access.load_efficiency(SECTOR_BYTES)),
                pct(access.load_efficiency(LINE_BYTES)),
                format!("{:.1}", gbps[0]),
                format!("{:.1}", gbps[1]),
                format!("{:.1}%", ceiling.percent(gbps[0])),
                format!("{:.1}%", ceiling.percent(gbps[1])),
                format!("{:.1}", timing::gbps(dram, ms_cg)),
                v,
            ]);
            Ok(())
        };

    let mut offsets = header("offset (floats)");
    for o in 0..=max_offset {
        add_row(
            &mut offsets,
            o.to_string(),
            Access::Offset(o),
            (4 * o) % 128,
        )?;
    }
    println!(
        "misaligned copy y[i] = x[i + offset]: x of {size} f32, {} reps; GB/s = (4 B read + 4 B written) per element / median time",
        cli.reps
    );
    println!("{offsets}");

    let mut strides = header("stride (floats)");
    for s in 1..=max_stride {
        add_row(&mut strides, s.to_string(), Access::Stride(s), 0)?;
    }
    println!(
        "strided copy y[i] = x[i * stride]: x of {size} f32, ceil({size} / stride) outputs; DRAM GB/s counts every 32-byte sector read once plus the writes"
    );
    println!("{strides}");
    if failures > 0 {
        bail!("{failures} coalescing copies disagree with the CPU reference");
    }
    Ok(())
}

fn run_layout(gpu: &Gpu, out: &mut Out, cli: &Cli, size: usize) -> Result<()> {
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let data: Vec<InnerStruct> = (0..size)
        .map(|_| InnerStruct {
            x: rng.random_range(-1.0..1.0),
            y: rng.random_range(-1.0..1.0),
        })
        .collect();
    let expected = layout::reference(&data);
    let bytes = layout::bytes_moved(size);
    let mut table = Table::new();
    table.load_preset(ASCII_MARKDOWN).set_header([
        "variant",
        "kernel",
        "grid x block",
        "median ms",
        "min ms",
        "GB/s",
        "% of memcpy",
        "speedup vs aos",
        "verdict",
    ]);
    let mut failures = 0;
    let mut aos_ms = None;
    for variant in layout::Variant::ALL {
        let mut d = layout::DeviceData::new(gpu, variant, &data)?;
        let cfg = d.launch(gpu)?;
        let check = verify::exact(&d.result(gpu)?, &expected);
        failures += check.is_err() as usize;
        let t = timing::time_gpu(
            gpu,
            variant.kernel_name(),
            WARMUP,
            cli.reps as usize,
            || d.launch(gpu).map(drop),
        )?;
        let base = *aos_ms.get_or_insert(t.median_ms);
        let gbps = t.gbps(bytes);
        table.add_row([
            variant_name(variant),
            variant.kernel_name().to_string(),
            launch::describe(&cfg),
            format!("{:.4}", t.median_ms),
            format!("{:.4}", t.min_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            format!("{:.2}", base / t.median_ms),
            verdict(&check),
        ]);
    }
    println!(
        "x += 10, y += 20 on {size} structs of two f32 ({} MiB read + written per launch), {} reps",
        bytes >> 20,
        cli.reps
    );
    println!("{table}");
    if failures > 0 {
        bail!("{failures} layout variant(s) disagree with the CPU reference");
    }
    Ok(())
}

/// Timed repetitions for a transfer of `bytes`: fewer for the large ones.
fn transfer_reps(cli: &Cli, bytes: usize) -> usize {
    let reps = cli.reps as usize;
    match bytes {
        b if b >= 256 << 20 => reps.min(3),
        b if b >= 16 << 20 => reps.min(10),
        _ => reps,
    }
}

/// Times one transfer kind and direction at `bytes`, returning the median GB/s.
fn time_transfer(
    gpu: &Gpu,
    cli: &Cli,
    kind: HostMemory,
    direction: Direction,
    host: &mut HostBuffer,
    device: &mut CudaSlice<u8>,
    bytes: usize,
) -> Result<f64> {
    let reps = transfer_reps(cli, bytes);
    let warmup = if bytes >= 256 << 20 { 1 } else { WARMUP };
    let t = timing::time_gpu(gpu, "host-device transfer", warmup, reps, || {
        bandwidth::transfer(gpu, kind, direction, host, device, bytes)
    })?;
    Ok(t.gbps(bytes as u64))
}

/// Times a device-to-device copy of `bytes` (the driver's memcpy, or the copy kernel),
/// returning GB/s counting bytes read plus written, as the memcpy ceiling does.
fn time_d2d(
    gpu: &Gpu,
    cli: &Cli,
    src: &CudaSlice<u8>,
    dst: &mut CudaSlice<u8>,
    bytes: usize,
    kernel: bool,
) -> Result<f64> {
    let reps = transfer_reps(cli, bytes);
    let t = timing::time_gpu(gpu, "device-to-device copy", WARMUP, reps, || {
        if kernel {
            bandwidth::kernel_copy(gpu, src, dst, bytes).map(drop)
        } else {
            gpu.stream()
                .memcpy_dtod(&src.slice(..bytes), &mut dst.slice_mut(..bytes))
                .during("device-to-device memcpy")
        }
    })?;
    Ok(t.gbps(2 * bytes as u64))
}

fn run_bandwidth(
    gpu: &Gpu,
    out: &mut Out,
    cli: &Cli,
    max_size: usize,
    launches: usize,
) -> Result<()> {
    const SEED_BYTES: usize = 33_554_432;
    let sizes = bandwidth::sweep_sizes(max_size);
    if sizes.is_empty() {
        bail!("--max-size {max_size}: the sweep starts at 1 KiB");
    }
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let largest = *sizes.last().unwrap_or(&1024);
    let buffer = largest.max(SEED_BYTES);
    let seed = cli.seed;
    let started = Instant::now();
    let mut d_a = gpu.zeros::<u8>(buffer)?;
    let mut d_b = gpu.zeros::<u8>(buffer)?;
    let mut check_buf = vec![0u8; buffer];
    let mut hosts = Vec::new();
    let mut checks = Vec::new();
    let mut failures = 0;

    // Verification, once per kind at the full buffer: host -> device (checked on a pageable
    // copy of the device buffer), then device -> host into the cleared host buffer.
    for kind in HostMemory::ALL {
        let mut host = HostBuffer::new(gpu, kind, buffer)?;
        bandwidth::fill_pattern(seed, host.as_mut_slice());
        gpu.stream().memset_zeros(&mut d_a)?;
        bandwidth::transfer(
            gpu,
            kind,
            Direction::HostToDevice,
            &mut host,
            &mut d_a,
            buffer,
        )?;
        gpu.stream().memcpy_dtoh(&d_a, &mut check_buf)?;
        gpu.synchronize("checking a host-to-device copy")?;
        let h2d = bandwidth::first_pattern_mismatch(seed, &check_buf, 1);
        host.as_mut_slice().fill(0);
        bandwidth::transfer(
            gpu,
            kind,
            Direction::DeviceToHost,
            &mut host,
            &mut d_a,
            buffer,
        )?;
        gpu.synchronize("checking a device-to-host copy")?;
        // Write-combined memory is uncached for CPU reads: check one byte per 4 KiB and the tail.
        let step = if kind == HostMemory::WriteCombined {
            4096
        } else {
            1
        };
        let d2h = bandwidth::first_pattern_mismatch(seed, host.as_slice(), step);
        for (what, bad) in [("host-to-device", h2d), ("device-to-host", d2h)] {
            if let Some(i) = bad {
                failures += 1;
                checks.push(format!(
                    "{}: {what} copy wrong at byte {i}",
                    variant_name(kind)
                ));
            }
        }
        hosts.push((kind, host));
    }
    // Device to device, memcpy and kernel.
    for kernel in [false, true] {
        gpu.stream().memset_zeros(&mut d_b)?;
        if kernel {
            bandwidth::kernel_copy(gpu, &d_a, &mut d_b, buffer)?;
        } else {
            gpu.stream().memcpy_dtod(&d_a, &mut d_b)?;
        }
        gpu.stream().memcpy_dtoh(&d_b, &mut check_buf)?;
        gpu.synchronize("checking a device-to-device copy")?;
        if let Some(i) = bandwidth::first_pattern_mismatch(seed, &check_buf, 1) {
            failures += 1;
            checks.push(format!(
                "device-to-device (kernel: {kernel}) wrong at byte {i}"
            ));
        }
    }
    drop(check_buf);
    println!(
        "verified: {} MiB through each host memory kind both ways, and device to device (memcpy, copy kernel): {}",
        buffer >> 20,
        if checks.is_empty() {
            "PASS".into()
        } else {
            checks.join("; ")
        }
    );

    // The seed's table: 32 MiB each way, MB/s.
    let mut seed_table = Table::new();
    seed_table.load_preset(ASCII_MARKDOWN).set_header([
        "direction (33554432 B)",
        "seed K80 MB/s",
        "pageable MB/s",
        "pinned MB/s",
        "write-combined MB/s",
        "zero-copy MB/s",
    ]);
    let mut sweep_h2d = Table::new();
    let mut sweep_d2h = Table::new();
    for (t, dir) in [
        (&mut sweep_h2d, "host to device"),
        (&mut sweep_d2h, "device to host"),
    ] {
        t.load_preset(ASCII_MARKDOWN).set_header([
            format!("{dir} bytes"),
            "pageable GB/s".into(),
            "pinned GB/s".into(),
            "write-combined GB/s".into(),
            "zero-copy GB/s".into(),
        ]);
    }
    for (direction, label, k80) in [
        (Direction::HostToDevice, "host to device", 7443.8),
        (Direction::DeviceToHost, "device to host", 8784.2),
    ] {
        let mut row = vec![label.to_string(), format!("{k80:.1}")];
        for (kind, host) in hosts.iter_mut() {
            let g = time_transfer(gpu, cli, *kind, direction, host, &mut d_a, SEED_BYTES)?;
            row.push(format!("{:.1}", g * 1e3));
        }
        seed_table.add_row(row);
    }
    let d2d_seed = time_d2d(gpu, cli, &d_a, &mut d_b, SEED_BYTES, false)?;
    seed_table.add_row([
        "device to device (read + written)".to_string(),
        "152045.6".into(),
        format!("{:.1} (memcpy)", d2d_seed * 1e3),
        format!("{:.1} (ceiling, 512 MiB)", ceiling.gbps * 1e3),
        "-".into(),
        "-".into(),
    ]);
    println!(
        "seed's bandwidthTest size, 33554432 bytes; MB/s = 10^6 bytes/s (the K80's bandwidthTest divided by 1.024e6)"
    );
    println!("{seed_table}");

    let mut sweep_d2d = Table::new();
    sweep_d2d.load_preset(ASCII_MARKDOWN).set_header([
        "device to device bytes",
        "memcpy GB/s (read + written)",
        "% of ceiling",
        "copy kernel GB/s",
        "% of ceiling",
    ]);
    for &bytes in &sizes {
        for (direction, table) in [
            (Direction::HostToDevice, &mut sweep_h2d),
            (Direction::DeviceToHost, &mut sweep_d2h),
        ] {
            let mut row = vec![bytes.to_string()];
            for (kind, host) in hosts.iter_mut() {
                let g = time_transfer(gpu, cli, *kind, direction, host, &mut d_a, bytes)?;
                row.push(format!("{g:.2}"));
            }
            table.add_row(row);
        }
        let m = time_d2d(gpu, cli, &d_a, &mut d_b, bytes, false)?;
        let k = time_d2d(gpu, cli, &d_a, &mut d_b, bytes, true)?;
        sweep_d2d.add_row([
            bytes.to_string(),
            format!("{m:.1}"),
            format!("{:.1}%", ceiling.percent(m)),
            format!("{k:.1}"),
            format!("{:.1}%", ceiling.percent(k)),
        ]);
    }
    println!(
        "size sweep, median GB/s (10^9 bytes/s); up to {} reps, 10 from 16 MiB, 3 from 256 MiB on",
        cli.reps
    );
    println!("{sweep_h2d}");
    println!("{sweep_d2h}");
    println!("{sweep_d2d}");

    let o = bandwidth::launch_overhead(gpu, launches)?;
    let mut overhead = Table::new();
    overhead
        .load_preset(ASCII_MARKDOWN)
        .set_header(["empty kernel <<<1, 1>>>", "us per launch"]);
    overhead.add_row([
        format!(
            "GPU time, events around {} back-to-back launches",
            o.launches
        ),
        format!("{:.2}", o.gpu_us),
    ]);
    overhead.add_row([
        "host time to queue one launch".to_string(),
        format!("{:.2}", o.enqueue_us),
    ]);
    overhead.add_row([
        "host wall clock, launch + synchronize (median)".to_string(),
        format!("{:.2}", o.round_trip_us),
    ]);
    println!("{overhead}");
    println!("bandwidth demo: {:.1} s", started.elapsed().as_secs_f64());
    if failures > 0 {
        bail!("{failures} transfer(s) delivered wrong bytes");
    }
    Ok(())
}

fn run_texture(gpu: &Gpu, out: &mut Out, cli: &Cli, size: usize, table_len: usize) -> Result<()> {
    if table_len == 0 {
        bail!("--table 0: the lookup table needs at least one element");
    }
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let table: Vec<f32> = (0..table_len)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let d_table = gpu.upload(&table)?;
    let patterns: [(&str, Vec<u32>); 2] = [
        (
            "sequential (i mod table)",
            (0..size).map(|i| (i % table_len) as u32).collect(),
        ),
        (
            "random",
            (0..size)
                .map(|_| rng.random_range(0..table_len as u32))
                .collect(),
        ),
    ];
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header([
        "indices",
        "variant",
        "kernel",
        "median ms",
        "G lookups/s",
        "GB/s (12 B per lookup)",
        "vs global",
        "verdict",
    ]);
    let mut failures = 0;
    for (name, idx) in &patterns {
        let expected = texture::reference(&table, idx);
        let mut lookup = texture::Lookup::new(gpu, &d_table, idx)?;
        let mut global_ms = None;
        let mut rows = Vec::new();
        for variant in texture::Variant::ALL {
            gpu.stream().memset_zeros(&mut lookup.out)?;
            lookup.launch(gpu, variant)?;
            let check = verify::exact(
                &gpu.download(&lookup.out, variant.kernel_name())?,
                &expected,
            );
            failures += check.is_err() as usize;
            let tm = timing::time_gpu(
                gpu,
                variant.kernel_name(),
                WARMUP,
                cli.reps as usize,
                || lookup.launch(gpu, variant).map(drop),
            )?;
            if variant == texture::Variant::Global {
                global_ms = Some(tm.median_ms);
            }
            rows.push((variant, tm, check));
        }
        for (variant, tm, check) in rows {
            t.add_row([
                name.to_string(),
                variant_name(variant),
                variant.kernel_name().to_string(),
                format!("{:.4}", tm.median_ms),
                format!("{:.2}", size as f64 / (tm.median_ms * 1e-3) / 1e9),
                format!("{:.1}", tm.gbps(texture::bytes_moved(size))),
                format!("{:.2}", global_ms.unwrap_or(tm.median_ms) / tm.median_ms),
                verdict(&check),
            ]);
        }
    }
    println!(
        "out[i] = table[idx[i]]: {size} lookups in a table of {table_len} f32 ({} KiB), {} reps",
        (table_len * 4) >> 10,
        cli.reps
    );
    println!("{t}");
    if failures > 0 {
        bail!("{failures} lookup(s) disagree with the CPU reference");
    }
    Ok(())
}
