//! `demo bandwidth`: host-device transfers (pageable, pinned, write-combined, zero-copy) over
//! sizes, the device-to-device copy, the read stream's launch shapes and the launch overhead.

use super::*;

/// Timed repetitions for a transfer of `bytes`: at most 20 from 16 MiB on (a 1 GiB pageable
/// copy takes about 0.1 s), still a median of 20.
pub(super) fn transfer_reps(opts: &Options, bytes: usize) -> usize {
    let reps = opts.reps as usize;
    if bytes >= 16 << 20 {
        reps.min(20)
    } else {
        reps
    }
}

/// Times one transfer kind and direction at `bytes`.
pub(super) fn time_transfer(
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
pub(super) fn transfer_measurement(
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
pub(super) fn time_d2d(
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
pub(super) const SEED_BYTES: usize = 33_554_432;

pub(super) fn run_bandwidth(
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
pub(super) struct Transfers<'a> {
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
    pub(super) fn verified(
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
    pub(super) fn verify_host_kind(
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
    pub(super) fn seed_table(&mut self) -> Result<Table> {
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
    pub(super) fn sweeps(&mut self, out: &mut Out, sizes: &[usize]) -> Result<()> {
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
    pub(super) fn host_sweep_rows(
        &mut self,
        bytes: usize,
        h2d: &mut Table,
        d2h: &mut Table,
    ) -> Result<()> {
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
    pub(super) fn d2d_sweep_row(&mut self, bytes: usize, table: &mut Table) -> Result<()> {
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
pub(super) fn read_stream_table(gpu: &Gpu, opts: &Options, ceiling: &Ceiling) -> Result<Table> {
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
                crate::engine::harness::describe(launch),
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
pub(super) fn launch_overhead(gpu: &Gpu, launches: usize) -> Result<Table> {
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
