//! The collectives' sweep of a multi-process run: NCCL's all-reduce, reduce-scatter,
//! all-gather, broadcast and reduce from 1 KiB to `--max-bytes` per GPU, in nccl-tests'
//! conventions (`doc/PERFORMANCE.md`: algbw = size / time, busbw = algbw x the collective's
//! factor), the all-reduce beside `torch.distributed.all_reduce` (one process per GPU) from
//! `--peers`; every result checked exactly on every rank.

use anyhow::Result;
use cpu::error::DriverContext;
use cpu::multi_gpu::rank::{RankCommunicator, ReduceOp};
use cpu::verify::Mismatch;
use cudarc::driver::CudaSlice;

use super::all_reduce::{human, read_peers, sweep_measurement};
use super::*;
use crate::engine::report::{ChartKind, Table};
use crate::engine::timing::{self, Timing};

/// The five collectives, in the table's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Collective {
    AllReduce,
    ReduceScatter,
    AllGather,
    Broadcast,
    Reduce,
}

impl Collective {
    const ALL: [Collective; 5] = [
        Collective::AllReduce,
        Collective::ReduceScatter,
        Collective::AllGather,
        Collective::Broadcast,
        Collective::Reduce,
    ];

    /// The measurement's variant (`nccl` for the all-reduce, as the peers file names it).
    fn variant(self) -> &'static str {
        match self {
            Collective::AllReduce => "nccl",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::AllGather => "all-gather",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
        }
    }

    /// nccl-tests' busbw factor on `n` ranks: 2(n-1)/n for the all-reduce, (n-1)/n for the
    /// reduce-scatter and all-gather (whose size is the whole, n blocks), 1 for the broadcast
    /// and the reduce.
    fn bus_factor(self, n: usize) -> f64 {
        let n = n.max(1) as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::ReduceScatter | Collective::AllGather => (n - 1.0) / n,
            Collective::Broadcast | Collective::Reduce => 1.0,
        }
    }
}

/// Every rank's buffers for the sweep: its input (rank `r` holds `input_value(key_r, i)`) and
/// an output, `n_max` floats each.
struct Buffers {
    input: CudaSlice<f32>,
    output: CudaSlice<f32>,
}

/// Queues `c` on `n` floats per GPU (`n / world` per block for the reduce-scatter and the
/// all-gather; root 0 for the broadcast and the reduce, the broadcast in place on the output).
fn queue(comm: &RankCommunicator, c: Collective, b: &mut Buffers, n: usize) -> cpu::Result<()> {
    let block = n / comm.world_size();
    let w = comm.world_size();
    match c {
        Collective::AllReduce => comm.all_reduce(
            &b.input.slice(..n),
            &mut b.output.slice_mut(..n),
            ReduceOp::Sum,
        ),
        Collective::ReduceScatter => comm.reduce_scatter(
            &b.input.slice(..block * w),
            &mut b.output.slice_mut(..block),
            ReduceOp::Sum,
        ),
        Collective::AllGather => comm.all_gather(
            &b.input.slice(..block),
            &mut b.output.slice_mut(..block * w),
        ),
        Collective::Broadcast => comm.broadcast(&mut b.output.slice_mut(..n), 0),
        Collective::Reduce => comm.reduce(
            &b.input.slice(..n),
            &mut b.output.slice_mut(..n),
            ReduceOp::Sum,
            0,
        ),
    }
}

/// The output elements `c` writes on this rank, and the expected value of each.
fn expected(
    c: Collective,
    rank: usize,
    keys: &[u64],
    n: usize,
) -> (usize, Box<dyn Fn(usize) -> f32 + Sync + '_>) {
    let w = keys.len();
    let block = n / w;
    let sum_at = move |i: usize| keys.iter().map(|&k| input_value(k, i)).sum::<f32>();
    match c {
        Collective::AllReduce => (n, Box::new(sum_at)),
        Collective::ReduceScatter => (block, Box::new(move |i| sum_at(rank * block + i))),
        Collective::AllGather => (
            block * w,
            Box::new(move |i| input_value(keys[i / block.max(1)], i % block.max(1))),
        ),
        Collective::Broadcast => (n, Box::new(move |i| input_value(keys[0], i))),
        Collective::Reduce if rank == 0 => (n, Box::new(sum_at)),
        Collective::Reduce => (n, Box::new(|_| f32::from_bits(POISON_BITS))),
    }
}

/// Runs `c` once on poisoned outputs and checks this rank's output exactly.
fn run_checked(
    comm: &RankCommunicator,
    c: Collective,
    b: &mut Buffers,
    keys: &[u64],
    n: usize,
) -> Result<std::result::Result<(), Mismatch>> {
    let gpu = comm.gpu();
    poison(gpu, &mut b.output, n)?;
    if c == Collective::Broadcast && comm.rank() == 0 {
        gpu.stream()
            .memcpy_dtod(&b.input.slice(..n), &mut b.output.slice_mut(..n))
            .during("copying the broadcast's root data")?;
    }
    queue(comm, c, b, n)?;
    comm.synchronize(c.variant())?;
    let (len, want) = expected(c, comm.rank(), keys, n);
    let mut host = vec![0f32; len];
    gpu.stream()
        .memcpy_dtoh(&b.output.slice(..len), &mut host)
        .during("copying a collective's result back")?;
    comm.synchronize(c.variant())?;
    Ok(check_exact(&host, want).map_err(|mut m| {
        m.got = format!("{} on rank {}", m.got, comm.rank());
        m
    }))
}

/// The largest power of two of bytes per GPU (at most `max_bytes`) whose input and output fit
/// the free memory of every rank's GPU, with NCCL's reserve.
fn common_max_bytes(comm: &RankCommunicator, max_bytes: u64) -> Result<u64> {
    let free = comm.gpu().memory_info()?.0 as u64;
    let fits = free.saturating_sub(NCCL_RESERVE + SMALL) / 2;
    let every = comm.gather_host(&[max_bytes.min(fits)])?;
    Ok(sweep_cap(every.iter().map(|c| c[0]).min().unwrap_or(0)))
}

/// Table (3) of a multi-process run. Returns this rank's number of failed checks.
pub(super) fn sweep(
    comm: &RankCommunicator,
    opts: &Options,
    out: &mut Out,
    max_bytes: u64,
) -> Result<usize> {
    let (gpu, w, r) = (comm.gpu(), comm.world_size(), comm.rank());
    let max = common_max_bytes(comm, max_bytes)?;
    if max < max_bytes {
        out.line(format!(
            "--max-bytes {max_bytes} capped at {max} bytes per GPU ({}) by the free device memory \
             (input and output, {} GiB left to NCCL)",
            human(max),
            NCCL_RESERVE >> 30
        ));
    }
    let sizes = sweep_sizes(max);
    let Some(&largest) = sizes.last() else {
        anyhow::bail!("--max-bytes {max_bytes}: no collective size fits (the smallest is 4 bytes)");
    };
    let peers = read_peers(opts, out, w)?;
    let n_max = (largest / 4) as usize;
    let keys: Vec<u64> = (0..w).map(|q| rank_key(opts.seed, q)).collect();
    let mut b = {
        let mut host = vec![0f32; n_max];
        fill_parallel(&mut host, |i| input_value(keys[r], i));
        Buffers {
            input: gpu.upload(&host)?,
            output: gpu.zeros(n_max)?,
        }
    };
    let with_peers = !peers.is_empty();
    let mut header = vec!["bytes per GPU", "all-reduce us", "all-reduce busbw GB/s"];
    if with_peers {
        header.extend(["torch busbw GB/s", "NCCL / torch"]);
    }
    header.extend([
        "reduce-scatter busbw",
        "all-gather busbw",
        "broadcast busbw",
        "reduce busbw",
        "verdict",
    ]);
    let mut table = Table::new(
        "collectives",
        format!(
            "NCCL's collectives over {w} processes (one per GPU), f32 (sum; root 0), checked out of \
             place, timed out of place except the broadcast and the all-reduce (in place on \
             zeros, as torch.distributed.all_reduce); size = bytes per GPU of the larger buffer (the reduce-scatter's \
             input, the all-gather's output); inputs small integers from a seeded hash, every \
             rank's output checked exactly; each run between CUDA events on every rank's own \
             stream, runs back to back, the sample being the slowest rank's; median of {} reps \
             after {WARMUP} warm-up runs; busbw = size / time x 2(n-1)/n (all-reduce), (n-1)/n \
             (reduce-scatter, all-gather), 1 (broadcast, reduce), as nccl-tests",
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
        let mut row = vec![human(bytes)];
        let mut measurements = Vec::new();
        let mut verdicts = Vec::new();
        for c in Collective::ALL {
            let check = run_checked(comm, c, &mut b, &keys, n)?;
            if c == Collective::AllReduce {
                // Timed in place on zeros, as the peer's `dist.all_reduce` runs.
                comm.gpu()
                    .stream()
                    .memset_zeros(&mut b.output.slice_mut(..n))
                    .during("zeroing the all-reduce's buffer")?;
            }
            let t: Timing = timing::time_rank(
                comm,
                c.variant(),
                WARMUP,
                opts.reps as usize,
                false,
                true,
                || match c {
                    Collective::AllReduce => {
                        comm.all_reduce_in_place(&mut b.output.slice_mut(..n), ReduceOp::Sum)
                    }
                    _ => queue(comm, c, &mut b, n),
                },
            )?;
            failures += check.is_err() as usize;
            let busbw = timing::gbps(bytes, t.median_ms) * c.bus_factor(w);
            if c == Collective::AllReduce {
                row.push(format!("{:.2}", t.median_ms * 1e3));
                row.push(format!("{busbw:.2}"));
                if with_peers {
                    let key = format!("nccl @ {bytes}");
                    match peers.iter().find(|p| p.variant == key) {
                        Some(p) => {
                            let ratio = p.median_ms / t.median_ms;
                            let theirs = timing::gbps(bytes, p.median_ms) * c.bus_factor(w);
                            row.push(format!("{theirs:.2}"));
                            row.push(format!("{ratio:.3}"));
                            if bytes >= 1 << 20 && worst_vs_peer.is_none_or(|(x, _)| ratio < x) {
                                worst_vs_peer = Some((ratio, bytes));
                            }
                        }
                        None => row.extend(["-".into(), "-".into()]),
                    }
                }
            } else {
                row.push(format!("{busbw:.2}"));
            }
            if let Err(m) = &check {
                verdicts.push(format!("FAIL ({}): {m}", c.variant()));
            }
            measurements.push(sweep_measurement(
                c.variant(),
                &t,
                bytes,
                c.bus_factor(w),
                &check,
            ));
        }
        // Every rank's checks count: the verdict is rank 0's view of all of them.
        let every = comm.gather_host(&[verdicts.len() as u64])?;
        let failed_ranks: Vec<usize> = (0..w).filter(|&q| every[q][0] > 0).collect();
        row.push(match (verdicts.first(), failed_ranks.is_empty()) {
            (_, true) => "PASS".into(),
            (Some(v), false) => v.clone(),
            (None, false) => format!("FAIL on rank(s) {failed_ranks:?}"),
        });
        let mut ms = measurements.into_iter();
        if let Some(first) = ms.next() {
            table.measured_row(row, first);
            let at = table.rows.len() - 1;
            for mut m in ms {
                m.row = at;
                table.measurements.push(m);
            }
        }
    }
    out.table(table);
    if let Some(p) = peers.first() {
        out.line(format!("peer: {} ({})", p.operation, p.library));
    }
    if let Some((ratio, bytes)) = worst_vs_peer {
        out.line(format!(
            "multi-process NCCL all-reduce through this library against {} from 1 MiB up: lowest \
             busbw ratio {ratio:.3} at {} (target >= 0.97)",
            peers.first().map_or("the peer", |p| p.operation.as_str()),
            human(bytes)
        ));
    }
    Ok(failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_factors_as_nccl_tests() {
        assert_eq!(Collective::AllReduce.bus_factor(4), 1.5);
        assert_eq!(Collective::ReduceScatter.bus_factor(4), 0.75);
        assert_eq!(Collective::AllGather.bus_factor(2), 0.5);
        assert_eq!(Collective::Broadcast.bus_factor(8), 1.0);
        assert_eq!(Collective::Reduce.bus_factor(1), 1.0);
    }

    #[test]
    fn expected_outputs() {
        let keys = [rank_key(1, 0), rank_key(1, 1)];
        let (len, f) = expected(Collective::AllGather, 1, &keys, 10);
        assert_eq!(len, 10);
        assert_eq!(f(7).to_bits(), input_value(keys[1], 2).to_bits());
        let (len, f) = expected(Collective::ReduceScatter, 1, &keys, 10);
        assert_eq!(len, 5);
        assert_eq!(f(0), input_value(keys[0], 5) + input_value(keys[1], 5));
        let (_, f) = expected(Collective::Reduce, 1, &keys, 10);
        assert_eq!(f(3).to_bits(), POISON_BITS);
    }
}
