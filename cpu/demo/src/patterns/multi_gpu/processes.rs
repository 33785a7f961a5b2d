//! `demo multi-gpu` as a job of one process per GPU (NCCL's multi-process path,
//! `cpu::multi_gpu::rank`): `--processes N` starts N ranks of this command on this machine with
//! torchrun's variables (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`), and
//! a command started with those variables (by `--processes`, or by `torchrun --nproc-per-node N
//! --no-python demo multi-gpu`) runs as its rank: every rank measures, rank 0 prints the
//! tables. Tables: the sharded sum's strong and weak scaling over 1..N ranks, then the
//! collectives' sweep ([`collectives`](super::collectives)).

use std::ops::Range;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use cpu::multi_gpu::rank::{PeerAllReduce, RankCommunicator, ReduceOp};
use cpu::multi_gpu::rendezvous::RankEnv;
use cpu::multi_gpu::{self, ring};
use cpu::reduce::{ReduceSum, SumF32F64, reference};
use cpu::verify::Mismatch;
use cudarc::driver::{CudaSlice, CudaView, LaunchConfig};

use super::*;
use crate::engine::harness::{require_memory, verdict};
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing;

/// The variable `--processes` sets in its ranks' environment, so that a rank can say who
/// started it.
const LAUNCHER_ENV: &str = "GPU_LAB_LAUNCHER";

/// Whether this process is a rank of a multi-process job (torchrun's `RANK` is set).
pub(super) fn is_rank() -> bool {
    std::env::var_os("RANK").is_some()
}

/// `--processes N`: starts N ranks of this very command line on this machine (rank `r` on
/// device `r`, rendezvous on a free port of 127.0.0.1), rank 0's output on this terminal, and
/// waits for them. A rank that fails ends the others through their communicators' timeout;
/// after that (and a grace of 30 s) any rank still running is killed.
pub(super) fn launch(processes: usize, timeout: Duration) -> Result<()> {
    let count = Gpu::device_count()?;
    if processes > count {
        bail!(
            "--processes {processes}: {count} GPU(s) visible, and each process takes one \
             (CUDA_VISIBLE_DEVICES narrows them)"
        );
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .context("finding a free port for the rendezvous")?
        .port();
    let exe = std::env::current_exe().context("finding this executable")?;
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let mut children: Vec<Child> = Vec::with_capacity(processes);
    for rank in 0..processes {
        let child = Command::new(&exe)
            .args(&args)
            .env("RANK", rank.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("WORLD_SIZE", processes.to_string())
            .env("LOCAL_WORLD_SIZE", processes.to_string())
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", port.to_string())
            .env(LAUNCHER_ENV, "demo multi-gpu --processes")
            .stdin(Stdio::null())
            .spawn()
            .with_context(|| format!("starting rank {rank}"));
        match child {
            Ok(c) => children.push(c),
            Err(e) => {
                for c in &mut children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(e);
            }
        }
    }
    let mut status = vec![None; processes];
    let mut first_failure: Option<Instant> = None;
    let grace = timeout + Duration::from_secs(30);
    while status.iter().any(Option::is_none) {
        for (s, c) in status.iter_mut().zip(children.iter_mut()) {
            if s.is_none()
                && let Some(done) = c.try_wait().context("waiting for a rank")?
            {
                if !done.success() {
                    first_failure.get_or_insert_with(Instant::now);
                }
                *s = Some(done);
            }
        }
        if first_failure.is_some_and(|t| t.elapsed() > grace) {
            for (s, c) in status.iter_mut().zip(children.iter_mut()) {
                if s.is_none() {
                    let _ = c.kill();
                    *s = c.wait().ok();
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let failed: Vec<String> = status
        .iter()
        .enumerate()
        .filter_map(|(r, s)| match s {
            Some(s) if s.success() => None,
            Some(s) => Some(format!("rank {r} ({s})")),
            None => Some(format!("rank {r} (killed)")),
        })
        .collect();
    if !failed.is_empty() {
        bail!(
            "{} of {processes} ranks failed: {} (their errors are above)",
            failed.len(),
            failed.join(", ")
        );
    }
    // Rank 0 printed and wrote the report; this process adds nothing to it.
    Ok(())
}

/// This process as one rank of the job its environment describes: the tables, measured on
/// every rank, printed by rank 0.
pub(super) fn run_rank(gpu: &Gpu, opts: &Options, out: &mut Out, args: &MultiGpu) -> Result<()> {
    let env = RankEnv::from_env()?;
    let timeout = Duration::from_secs(args.timeout);
    let comm = RankCommunicator::new(gpu.clone(), &env, timeout)?;
    let (major, minor, patch) = multi_gpu::nccl_version()?;
    let devices = comm.gather_host(&[gpu.ordinal() as u64])?;
    out.line(format!(
        "rank {} of {} (one process per GPU, started by {}), devices by rank {:?}, {}, NCCL \
         {major}.{minor}.{patch}, {}={} (NVLink SHARP off), watchdog timeout {timeout:?}",
        comm.rank(),
        comm.world_size(),
        std::env::var(LAUNCHER_ENV).unwrap_or_else(|_| "torchrun or another launcher".into()),
        devices.iter().map(|d| d[0]).collect::<Vec<_>>(),
        gpu.name()?,
        multi_gpu::NVLS_ENV.0,
        std::env::var(multi_gpu::NVLS_ENV.0).unwrap_or_default()
    ));
    let (mut failures, sums) = rank_scaling(&comm, opts, out, args.size)?;
    failures += super::collectives::sweep(&comm, opts, out, args.max_bytes)?;
    // What two launchers of the same job must agree on, bit for bit (run.sh multi-process
    // compares the lines).
    out.line(format!(
        "results: {} ranks, seed {}, the scaling tables' sums {sums:?}",
        comm.world_size(),
        opts.seed
    ));
    let every = comm.gather_host(&[failures as u64])?;
    let total: u64 = every.iter().map(|f| f[0]).sum();
    if total > 0 {
        bail!("{total} multi-process result(s) disagree with the CPU reference");
    }
    Ok(())
}

/// Rank 0's `check` on every rank (only rank 0 holds the CPU reference): rank 0's own result,
/// or on the others a mismatch that says rank 0 found one.
fn rank0_verdict(
    comm: &RankCommunicator,
    check: std::result::Result<(), Mismatch>,
) -> Result<std::result::Result<(), Mismatch>> {
    let every = comm.gather_host(&[check.is_ok() as u8])?;
    Ok(match (comm.rank(), every[0][0]) {
        (0, _) => check,
        (_, 1) => Ok(()),
        _ => Err(Mismatch {
            index: 0,
            got: "a sum rank 0 found wrong".into(),
            expected: "rank 0's reference".into(),
            count: 1,
        }),
    })
}

/// The sharded sum's workspace on this rank: a copy of the whole input (each configuration
/// sums a view of it), the reducer and the `f64` partial.
struct Scaling<'a> {
    comm: &'a RankCommunicator,
    copy: &'a CudaSlice<f32>,
    reducer: ReduceSum<SumF32F64>,
    partial: CudaSlice<f64>,
}

/// One row's measurement: the sum (on ranks that took part), the longest rounding chain of
/// any rank, and the time.
struct Point {
    sum: f64,
    depth: u64,
    timing: timing::Timing,
    /// The same with NCCL's all-reduce as the combine.
    with_nccl: timing::Timing,
    /// The shard's reduction alone (no all-reduce), timed the same way.
    reduce_only: timing::Timing,
    /// Whether `timing`'s combine is the all-reduce over peer memory.
    peer: bool,
}

/// The combine of the shards' partials on this rank: the all-reduce over peer memory where the
/// ranks offer it (one machine, peer access), else NCCL's.
enum Combine<'c> {
    Peer(Box<PeerAllReduce<'c>>),
    Nccl(&'c RankCommunicator),
}

impl Combine<'_> {
    /// Queues the sharded sum of `shard` into `partial`: with the peer all-reduce, one fused
    /// launch ([`PeerAllReduce::sum_f32_into`]); else the reduction, then NCCL's all-reduce.
    fn sum(
        &mut self,
        reducer: &mut ReduceSum<SumF32F64>,
        gpu: &Gpu,
        shard: &CudaView<'_, f32>,
        partial: &mut CudaSlice<f64>,
    ) -> cpu::Result<LaunchConfig> {
        match self {
            Combine::Peer(p) => p.sum_f32_into(shard, partial),
            Combine::Nccl(c) => {
                let cfg = reducer.sum_into(gpu, shard, partial)?;
                c.all_reduce_in_place(partial, ReduceOp::Sum)?;
                Ok(cfg)
            }
        }
    }

    fn wait(&self) -> cpu::Result<()> {
        match self {
            Combine::Peer(p) => p.wait(),
            Combine::Nccl(c) => c.synchronize("the sharded sum"),
        }
    }
}

impl Scaling<'_> {
    /// The sum of `shard` (this rank's, on ranks `0..k`) over a communicator of ranks `0..k`
    /// (split from the job's), checked once, then timed with a barrier of every rank before
    /// each run: with the all-reduce over peer memory (or NCCL's where it is not offered), with
    /// NCCL's all-reduce, and without any.
    fn measure(&mut self, k: usize, shard: Range<usize>, reps: usize) -> Result<Point> {
        let (comm, copy) = (self.comm, self.copy);
        let mine = comm.rank() < k;
        let sub = comm.split(mine.then_some(0), comm.rank() as u32)?;
        let gpu = comm.gpu();
        let view = copy.slice(shard.clone());
        let (mut sum, mut depth) = (0.0, 0);
        let mut combine = match &sub {
            Some(s) => Some(match PeerAllReduce::new(s)? {
                Some(p) => Combine::Peer(Box::new(p)),
                None => Combine::Nccl(s),
            }),
            None => None,
        };
        let (reducer, partial) = (&mut self.reducer, &mut self.partial);
        if let Some(c) = &mut combine {
            let cfg = c.sum(reducer, gpu, &view, partial)?;
            c.wait()?;
            sum = gpu.download(partial, "the sharded sum")?[0];
            depth = reference::reduce_sum_depth(shard.len(), &cfg);
        }
        let peer = matches!(combine, Some(Combine::Peer(_)));
        let time = |during: &str, mut run: Box<dyn FnMut() -> cpu::Result<()> + '_>| {
            timing::time_rank(comm, during, WARMUP, reps, true, mine, &mut run)
        };
        let timing = time(
            "the sharded sum",
            Box::new(|| match &mut combine {
                Some(c) => c.sum(reducer, gpu, &view, partial).map(drop),
                None => Ok(()),
            }),
        )?;
        if let Some(c) = &combine {
            c.wait()?;
        }
        let with_nccl = time(
            "the sharded sum with NCCL's all-reduce",
            Box::new(|| match &sub {
                Some(s) => {
                    reducer.sum_into(gpu, &view, partial)?;
                    s.all_reduce_in_place(partial, ReduceOp::Sum)
                }
                None => Ok(()),
            }),
        )?;
        // The same runs without the all-reduce: what the combine and the ranks' skew cost.
        let reduce_only = time(
            "the shard's reduction",
            Box::new(|| {
                reducer.sum_into(gpu, &view, partial)?;
                Ok(())
            }),
        )?;
        drop(combine);
        let depths = comm.gather_host(&[depth])?;
        let depth = depths.iter().map(|d| d[0]).max().unwrap_or(0) + k as u64 - 1;
        Ok(Point {
            sum,
            depth,
            timing,
            with_nccl,
            reduce_only,
            peer,
        })
    }
}

/// Tables (1) and (2) of a multi-process run: the sum of `size` f32 sharded over ranks `0..k`
/// for k = 1..N (strong scaling), then `size / N` elements per rank over k = 1..N (weak
/// scaling). Every rank holds the whole input; rank 0 checks every sum against the CPU's.
/// Returns this rank's failed checks and the sums, in the tables' order.
fn rank_scaling(
    comm: &RankCommunicator,
    opts: &Options,
    out: &mut Out,
    size: usize,
) -> Result<(usize, Vec<f64>)> {
    let (gpu, w, r) = (comm.gpu(), comm.world_size(), comm.rank());
    require_memory(gpu, &scaling_footprint(size))?;
    let data = random_floats(opts.seed, size);
    let copy = gpu.upload(&data)?;
    // Rank 0's references: the whole input (strong scaling) and each weak-scaling shard.
    let per_rank = size / w;
    let (whole, shards) = if r == 0 {
        out.dump("scaling_input", &[], &data)?;
        let shards: Vec<(f64, f64)> = (0..w)
            .map(|q| reference::reference_f32(&data[q * per_rank..(q + 1) * per_rank]))
            .collect();
        (reference::reference_f32(&data), shards)
    } else {
        ((0.0, 0.0), Vec::new())
    };
    drop(data);
    let mut ws = Scaling {
        comm,
        copy: &copy,
        reducer: ReduceSum::new(gpu)?,
        partial: gpu.zeros(1)?,
    };
    let reps = opts.reps as usize;
    let bytes = reference::bytes_read(size);
    let points = (1..=w)
        .map(|k| {
            let shard = if r < k { ring::shard(size, k, r) } else { 0..0 };
            ws.measure(k, shard, reps)
        })
        .collect::<Result<Vec<_>>>()?;
    let combine = match points.iter().filter(|p| p.peer).count() {
        0 => "NCCL's all-reduce (the all-reduce over peer memory is not offered here)",
        n if n == points.len() => {
            "PeerAllReduce::sum_f32_into, one launch per GPU whose last block exchanges the \
             shard's total with every rank over peer memory (one warp reads every rank's partial \
             over NVLink through CUDA IPC)"
        }
        _ => "PeerAllReduce where offered, else NCCL's all-reduce",
    };
    let mut strong = Table::new(
        "rank-scaling",
        format!(
            "strong scaling, one process per GPU: the sum of {size} f32 ({:.2} GiB, uniform in \
             [-1, 1)) sharded over ranks 0..k (shards start on 2 MiB pages where \
             each spans at least 512 MiB, else on 128-byte boundaries: ring::shard), each rank reducing its shard with reduce_sum_f32_f64 into an \
             f64 partial, then one all-reduce of the partials over a communicator of those k \
             ranks (ncclCommSplit): {combine}; each run after a barrier of every rank on the \
             GPU, timed between CUDA events on each rank's own stream, the sample being the \
             slowest rank's; median of {reps} reps; checked against the CPU's f64 sum within \
             (depth + k - 1) f64 roundings of sum|x|. 'reduce only': the same runs without the \
             all-reduce; 'combine': the difference of the medians (the all-reduce and the \
             ranks' skew); 'with NCCL': the same runs with NCCL's all-reduce of the 8-byte \
             partials as the combine, its speedup over its own 1-GPU row; 'bound': the speedup \
             with a free combine",
            bytes as f64 / (1u64 << 30) as f64
        ),
        ChartKind::Bars,
        [
            "GPUs",
            "elements per GPU",
            "median ms",
            "speedup vs 1 GPU",
            "GB/s total",
            "GB/s per GPU",
            "reduce only ms",
            "combine us",
            "with NCCL ms",
            "speedup with NCCL",
            "bound",
            "sum",
            "|error| / bound",
            "verdict",
        ],
    );
    let mut failures = 0;
    let mut sums = Vec::new();
    let mut one = None;
    for (p, k) in points.iter().zip(1..) {
        sums.push(p.sum);
        let lengths: Vec<usize> = (0..k).map(|q| ring::shard(size, k, q).len()).collect();
        let bound = reference::sum_error_bound(size, p.depth, f64::EPSILON, whole.1);
        // Rank 0 holds the reference: its verdict is every rank's.
        let check = rank0_verdict(comm, reference::check_sum(p.sum, whole.0, bound))?;
        failures += (r == 0 && check.is_err()) as usize;
        let (ms, only) = (p.timing.median_ms, p.reduce_only.median_ms);
        let nccl = p.with_nccl.median_ms;
        let (base, nccl_base) = *one.get_or_insert((ms, nccl));
        let gbps = timing::gbps(bytes, ms);
        let err = if bound > 0.0 {
            (p.sum - whole.0).abs() / bound
        } else {
            0.0
        };
        let m = Measurement::new("rank-sharded-sum", &p.timing)
            .kernel(gpu::reduce::sum::reduce_sum_f32_f64.name())
            .at(k as f64)
            .bytes(bytes, None)
            .error(err)
            .extra("speedup_vs_1_gpu", base / ms)
            .extra("gbps_per_gpu", gbps / k as f64)
            .extra("reduce_only_ms", only)
            .extra("with_nccl_ms", nccl)
            .passed(check.is_ok());
        strong.measured_row(
            [
                k.to_string(),
                format!(
                    "{}..{}",
                    lengths.iter().min().unwrap_or(&0),
                    lengths.iter().max().unwrap_or(&0)
                ),
                format!("{ms:.4}"),
                format!("{:.2}x", base / ms),
                format!("{gbps:.1}"),
                format!("{:.1}", gbps / k as f64),
                format!("{only:.4}"),
                format!("{:.1}", (ms - only) * 1e3),
                format!("{nccl:.4}"),
                format!("{:.2}x", nccl_base / nccl),
                format!("{:.2}x", base / only),
                format!("{:?}", p.sum),
                format!("{err:.1e}"),
                verdict(&check),
            ],
            m,
        );
    }
    out.table(strong);
    let mut weak = Table::new(
        "rank-weak-scaling",
        format!(
            "weak scaling, one process per GPU: {per_rank} f32 per rank (the input's first k x \
             {per_rank}) over ranks 0..k, measured as the strong scaling above; efficiency = \
             time on 1 GPU / time on k"
        ),
        ChartKind::Bars,
        [
            "GPUs",
            "elements per GPU",
            "total elements",
            "median ms",
            "efficiency vs 1 GPU",
            "GB/s total",
            "GB/s per GPU",
            "sum",
            "verdict",
        ],
    );
    let mut one = None;
    for k in 1..=w {
        let shard = if r < k {
            r * per_rank..(r + 1) * per_rank
        } else {
            0..0
        };
        let p = ws.measure(k, shard, reps)?;
        sums.push(p.sum);
        let (expected, sum_abs) = shards[..k.min(shards.len())]
            .iter()
            .fold((0.0, 0.0), |(s, a), &(x, y)| (s + x, a + y));
        let total = k * per_rank;
        let bound = reference::sum_error_bound(total, p.depth + k as u64, f64::EPSILON, sum_abs);
        let check = rank0_verdict(comm, reference::check_sum(p.sum, expected, bound))?;
        failures += (r == 0 && check.is_err()) as usize;
        let ms = p.timing.median_ms;
        let base = *one.get_or_insert(ms);
        let gbps = timing::gbps(reference::bytes_read(total), ms);
        let m = Measurement::new("rank-weak-sum", &p.timing)
            .kernel(gpu::reduce::sum::reduce_sum_f32_f64.name())
            .at(k as f64)
            .bytes(reference::bytes_read(total), None)
            .extra("efficiency_vs_1_gpu", base / ms)
            .passed(check.is_ok());
        weak.measured_row(
            [
                k.to_string(),
                per_rank.to_string(),
                total.to_string(),
                format!("{ms:.4}"),
                format!("{:.2}", base / ms),
                format!("{gbps:.1}"),
                format!("{:.1}", gbps / k as f64),
                format!("{:?}", p.sum),
                verdict(&check),
            ],
            m,
        );
    }
    out.table(weak);
    Ok((failures, sums))
}
