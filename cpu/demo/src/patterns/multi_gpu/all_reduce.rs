//! The all-reduce sweep in nccl-tests' conventions (algbw, busbw): NCCL beside the lab's ring
//! and, with `--peers`, `torch.distributed.all_reduce`; every result verified.

use anyhow::{Context, Result, bail};
use cpu::error::DriverContext;
use cpu::multi_gpu::{GpuGroup, RingAllReduce, all_reduce_bus_factor};
use cpu::verify::Mismatch;
use cudarc::driver::CudaSlice;
use serde::Deserialize;

use super::*;
use crate::engine::harness::require_memory;
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::{self, Timing};

/// A peer timing as `peers.py` writes it, with the number of ranks it ran on.
#[derive(Deserialize)]
pub(super) struct PeerTiming {
    pattern: String,
    table: String,
    pub(super) variant: String,
    pub(super) operation: String,
    pub(super) library: String,
    pub(super) median_ms: f64,
    #[serde(default)]
    ranks: Option<usize>,
}

/// The `--peers` timings of this table that ran on `ranks` GPUs (a line says why others are
/// left out).
pub(super) fn read_peers(opts: &Options, out: &mut Out, ranks: usize) -> Result<Vec<PeerTiming>> {
    let Some(path) = &opts.peers else {
        return Ok(Vec::new());
    };
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let all: Vec<PeerTiming> = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a peers file (a JSON list)", path.display()))?;
    let (mine, other): (Vec<_>, Vec<_>) = all
        .into_iter()
        .filter(|p| p.pattern == "multi-gpu" && p.table == "all-reduce")
        .partition(|p| p.ranks.unwrap_or(ranks) == ranks);
    if let Some(p) = other.first() {
        out.line(format!(
            "peer timings on {} GPU(s) left out: this run has {ranks}",
            p.ranks.unwrap_or(0)
        ));
    }
    if mine.is_empty() {
        out.line(format!(
            "{} has no all-reduce timings on {ranks} GPU(s) (run.sh multi-gpu writes them)",
            path.display()
        ));
    }
    Ok(mine)
}

/// Human bytes: `1 KiB`, `4 GiB`.
pub(super) fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", units[u])
    } else {
        format!("{v:.2} {}", units[u])
    }
}

/// Table (2): NCCL's all-reduce and the lab's ring from 1 KiB to the capped `--max-bytes` per
/// GPU, every result verified, busbw charted.
pub(super) fn all_reduce_sweep(
    group: &GpuGroup,
    opts: &Options,
    out: &mut Out,
    max_bytes: u64,
) -> Result<usize> {
    let k = group.len();
    // The strong-scaling buffers were freed on the streams: wait, so the free memory shows it.
    group.synchronize("freeing the sharded sum's buffers")?;
    let max = capped_max_bytes(group, max_bytes)?;
    if max < max_bytes {
        out.line(format!(
            "--max-bytes {max_bytes} capped at {max} bytes per GPU ({}) by the free device memory \
             (input, output and the ring's staging chunk, {} GiB left to NCCL)",
            human(max),
            NCCL_RESERVE >> 30
        ));
    }
    let sizes = sweep_sizes(max);
    let Some(&largest) = sizes.last() else {
        bail!("--max-bytes {max_bytes}: no all-reduce size fits (the smallest is 4 bytes)");
    };
    for g in group.gpus() {
        require_memory(g, &sweep_footprint(largest, k))?;
    }
    let peers = read_peers(opts, out, k)?;
    let n_max = (largest / 4) as usize;
    let keys: Vec<u64> = (0..k).map(|r| rank_key(opts.seed, r)).collect();
    let expected = |i: usize| -> f32 { keys.iter().map(|&key| input_value(key, i)).sum() };
    let mut inputs = Vec::with_capacity(k);
    let mut outputs = Vec::with_capacity(k);
    {
        let mut host = vec![0f32; n_max];
        for (g, &key) in group.gpus().iter().zip(&keys) {
            fill_parallel(&mut host, |i| input_value(key, i));
            inputs.push(g.upload(&host)?);
            outputs.push(g.zeros::<f32>(n_max)?);
        }
    }
    let mut ring = RingAllReduce::new(group, n_max)?;
    let factor = all_reduce_bus_factor(k);
    let with_peers = !peers.is_empty();
    let mut header = vec![
        "bytes per GPU",
        "elements",
        "NCCL us",
        "NCCL algbw GB/s",
        "NCCL busbw GB/s",
    ];
    if with_peers {
        header.extend(["torch busbw GB/s", "NCCL / torch"]);
    }
    header.extend(["ring us", "ring busbw GB/s", "ring / NCCL", "verdict"]);
    let mut table = Table::new(
        "all-reduce",
        format!(
            "all-reduce (sum) of f32 on {k} GPU(s), out of place (NCCL) and in place (ring: \
             reduce-scatter then all-gather, one kernel per step reading the neighbour's chunk over peer access: ring_reduce_peer, ring_copy_peer; peer access {}), inputs \
             small integers from a seeded hash so every result is checked exactly on every GPU; \
             time per run = the slowest GPU's time between CUDA events on its own stream, runs \
             queued back to back, median of {} reps after {WARMUP} warm-up runs; algbw = bytes / \
             time, busbw = algbw x 2(n-1)/n = algbw x {factor} (nccl-tests)",
            if ring.peer_access() {
                "on"
            } else {
                "off: copies staged through the host and add_into"
            },
            opts.reps
        ),
        ChartKind::Sweep {
            x_label: "bytes per GPU".into(),
            log2_x: true,
        },
        header,
    )
    .chart_extra("busbw_gbps");
    let mut failures = 0;
    let mut worst_vs_peer: Option<(f64, u64)> = None;
    for &bytes in &sizes {
        let n = (bytes / 4) as usize;
        // NCCL, out of place: poisoned outputs, one verified run, then timed runs.
        for (g, o) in group.gpus().iter().zip(outputs.iter_mut()) {
            poison(g, o, n)?;
        }
        let in_views: Vec<_> = inputs.iter().map(|x| x.slice(..n)).collect();
        {
            let mut out_views: Vec<_> = outputs.iter_mut().map(|x| x.slice_mut(..n)).collect();
            group.all_reduce_sum(&in_views, &mut out_views)?;
        }
        let nccl_check = verify_all(group, &outputs, n, &expected)?;
        let nccl = timing::time_group_per_gpu(
            group,
            "NCCL all-reduce",
            WARMUP,
            opts.reps as usize,
            &mut outputs,
            |_| Ok(()),
            |outputs| {
                let mut out_views: Vec<_> = outputs.iter_mut().map(|x| x.slice_mut(..n)).collect();
                group.all_reduce_sum(&in_views, &mut out_views)
            },
        )?;
        // The ring, in place on the outputs: each run starts from a copy of the inputs (made
        // outside the timed brackets).
        let restore = |outputs: &mut Vec<CudaSlice<f32>>| -> cpu::Result<()> {
            for ((g, o), x) in group.gpus().iter().zip(outputs.iter_mut()).zip(&in_views) {
                g.stream()
                    .memcpy_dtod(x, &mut o.slice_mut(..n))
                    .during("restoring the ring's input")?;
            }
            Ok(())
        };
        restore(&mut outputs)?;
        {
            let mut views: Vec<_> = outputs.iter_mut().map(|x| x.slice_mut(..n)).collect();
            ring.all_reduce_sum(group, &mut views)?;
        }
        let ring_check = verify_all(group, &outputs, n, &expected)?;
        let ring_t = timing::time_group_per_gpu(
            group,
            "ring all-reduce",
            WARMUP,
            opts.reps as usize,
            &mut outputs,
            restore,
            |outputs| {
                let mut views: Vec<_> = outputs.iter_mut().map(|x| x.slice_mut(..n)).collect();
                ring.all_reduce_sum(group, &mut views)
            },
        )?;
        failures += nccl_check.is_err() as usize + ring_check.is_err() as usize;
        let busbw = |t: &Timing| timing::gbps(bytes, t.median_ms) * factor;
        let nccl_m = sweep_measurement("nccl", &nccl, bytes, factor, &nccl_check);
        let ring_m = sweep_measurement("ring", &ring_t, bytes, factor, &ring_check);
        let mut row = vec![
            human(bytes),
            n.to_string(),
            format!("{:.2}", nccl.median_ms * 1e3),
            format!("{:.2}", timing::gbps(bytes, nccl.median_ms)),
            format!("{:.2}", busbw(&nccl)),
        ];
        if with_peers {
            let key = nccl_m.key();
            match peers.iter().find(|p| p.variant == key) {
                Some(p) => {
                    let ratio = p.median_ms / nccl.median_ms;
                    row.push(format!("{:.2}", timing::gbps(bytes, p.median_ms) * factor));
                    row.push(format!("{ratio:.3}"));
                    if bytes >= 1 << 20 && worst_vs_peer.is_none_or(|(w, _)| ratio < w) {
                        worst_vs_peer = Some((ratio, bytes));
                    }
                }
                None => row.extend(["-".into(), "-".into()]),
            }
        }
        row.extend([
            format!("{:.2}", ring_t.median_ms * 1e3),
            format!("{:.2}", busbw(&ring_t)),
            format!("{:.3}", nccl.median_ms / ring_t.median_ms),
            match (&nccl_check, &ring_check) {
                (Ok(()), Ok(())) => "PASS".into(),
                (Err(m), _) => format!("FAIL (nccl): {m}"),
                (_, Err(m)) => format!("FAIL (ring): {m}"),
            },
        ]);
        table.measured_row(row, nccl_m);
        let mut ring_m = ring_m;
        ring_m.row = table.rows.len() - 1;
        table.measurements.push(ring_m);
    }
    out.table(table);
    if let Some(p) = peers.first() {
        out.line(format!("peer: {} ({})", p.operation, p.library));
    }
    if let Some((ratio, bytes)) = worst_vs_peer {
        out.line(format!(
            "NCCL through this library against {} from 1 MiB up: lowest busbw ratio {ratio:.3} at {} \
             (target >= 0.95)",
            peers.first().map_or("the peer", |p| p.operation.as_str()),
            human(bytes)
        ));
    }
    Ok(failures)
}

/// The sweep point of `variant` at `bytes` per GPU: algbw as its bandwidth, busbw as the
/// charted extra.
pub(super) fn sweep_measurement(
    variant: &str,
    t: &Timing,
    bytes: u64,
    factor: f64,
    check: &Result<(), Mismatch>,
) -> Measurement {
    let algbw = timing::gbps(bytes, t.median_ms);
    Measurement::new(variant, t)
        .at(bytes as f64)
        .bytes(bytes, None)
        .extra("busbw_gbps", algbw * factor)
        .passed(check.is_ok())
}

/// Downloads the first `n` floats of every GPU's output and compares them with `expected`.
pub(super) fn verify_all(
    group: &GpuGroup,
    outputs: &[CudaSlice<f32>],
    n: usize,
    expected: &(impl Fn(usize) -> f32 + Sync),
) -> Result<Result<(), Mismatch>> {
    for (rank, (g, o)) in group.gpus().iter().zip(outputs).enumerate() {
        let mut host = vec![0f32; n];
        g.stream()
            .memcpy_dtoh(&o.slice(..n), &mut host)
            .during("copying an all-reduce result back")?;
        g.synchronize("the all-reduce")?;
        if let Err(mut m) = check_exact(&host, expected) {
            m.got = format!("{} on rank {rank}", m.got);
            return Ok(Err(m));
        }
    }
    Ok(Ok(()))
}
