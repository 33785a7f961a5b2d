//! `demo multi-gpu`: reduction across every GPU of the machine through NCCL. (1) Strong scaling
//! of a sharded sum of `--size` f32 over 1..N GPUs; (2) an all-reduce sweep from 1 KiB to
//! `--max-bytes` per GPU in nccl-tests' conventions (algbw, busbw), NCCL beside the lab's ring
//! and, with `--peers`, beside `torch.distributed.all_reduce`; every result verified.

use std::ops::Range;

use anyhow::{Context, Result, bail};
use cpu::multi_gpu::{self, GpuGroup, RingAllReduce, ShardedSum, all_reduce_bus_factor, ring};
use cpu::reduce::reference;
use cpu::verify::Mismatch;
use cpu::{Gpu, error::DriverContext};
use cudarc::driver::{CudaSlice, DevicePtrMut, sys};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::Deserialize;

use crate::engine::args::{bytes_from, refuse};
use crate::engine::harness::verdict;
use crate::engine::harness::{Footprint, SMALL, require_memory};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, kernels_each};
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::{self, Timing};

/// What every output holds before an all-reduce: a NaN no sum of small integers produces.
const POISON_BITS: u32 = 0x7fc0_5a5a;

/// Untimed runs before the timed ones.
const WARMUP: usize = 5;

/// Device memory left to NCCL (its buffers grow at the first collectives) and the contexts.
const NCCL_RESERVE: u64 = 1 << 30;

/// The smallest all-reduce of the sweep, bytes per GPU.
const MIN_BYTES: u64 = 1 << 10;

/// Reduction across every GPU through NCCL: strong scaling of a sharded sum over 1..N GPUs,
/// and an all-reduce sweep (NCCL and the lab's ring; algbw, busbw) from 1 KiB up.
#[derive(clap::Args)]
pub(crate) struct MultiGpu {
    /// Devices of the group, comma-separated (default: every visible GPU).
    #[arg(long, value_delimiter = ',')]
    devices: Vec<usize>,
    /// f32 elements of the sharded sum (default 2^30: 4 GiB, a copy on each GPU).
    #[arg(long, default_value_t = 1 << 30)]
    size: usize,
    /// Largest all-reduce, bytes per GPU (default 4 GiB, at least 1 KiB; capped by the free
    /// device memory).
    #[arg(long, default_value_t = 4 << 30, value_parser = bytes_from::<MIN_BYTES>)]
    max_bytes: u64,
}

/// What `demo multi-gpu` runs, for `demo list` and the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub(crate) enum Variant {
    /// [`ShardedSum`](multi_gpu::ShardedSum): `reduce_sum_f32_f64` per shard, then NCCL's all-reduce of the partials.
    ShardedSum,
    /// [`GpuGroup::all_reduce_sum`](multi_gpu::GpuGroup::all_reduce_sum): NCCL's all-reduce (its own kernels).
    NcclAllReduce,
    /// [`ring`](multi_gpu::ring): the lab's ring over peer copies and `add_into`.
    RingAllReduce,
}

impl Variant {
    /// Every variant.
    pub(crate) const ALL: [Variant; 3] = [
        Variant::ShardedSum,
        Variant::NcclAllReduce,
        Variant::RingAllReduce,
    ];

    /// The lab's kernels it launches (none for NCCL's all-reduce).
    pub(crate) fn kernel_names(self) -> &'static [&'static str] {
        match self {
            Variant::ShardedSum => const { &[gpu::reduce::sum::reduce_sum_f32_f64.name()] },
            Variant::NcclAllReduce => &[],
            Variant::RingAllReduce => const { &[gpu::multi_gpu::kernels::add_into.name()] },
        }
    }
}

impl Pattern for MultiGpu {
    const NAME: &'static str = "multi-gpu";

    fn variants() -> Vec<VariantInfo> {
        kernels_each(&Variant::ALL, |v| v.kernel_names().to_vec())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003 --max-bytes 1048576".into()]
    }

    fn unavailable() -> Option<String> {
        (!multi_gpu::nccl_available()).then(|| {
            format!(
                "NCCL could not be loaded (looked for {})",
                multi_gpu::nccl_library_names().join(", ")
            )
        })
    }

    /// Each device of the group is checked by itself, phase by phase.
    /// A device named twice (exit status 2); whether each exists is the driver's to say.
    fn check(&self) -> Result<()> {
        for (i, d) in self.devices.iter().enumerate() {
            if self.devices[..i].contains(d) {
                refuse!("--devices names device {d} twice: each GPU of the group once");
            }
        }
        Ok(())
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(None)
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self)
    }
}

/// Peak memory of the strong-scaling phase on each GPU: the whole input (each GPU holds a copy
/// and sums its shard of it as a view), plus the reducers' scratch; on the host, the input.
pub fn scaling_footprint(size: usize) -> Footprint {
    Footprint::new(format!(
        "multi-gpu sharded sum of {size} f32 (a copy per GPU)"
    ))
    .device::<f32>(1, size)
    .device_bytes(SMALL)
    .host::<f32>(1, size)
}

/// Peak memory of the all-reduce sweep on each GPU for `bytes` per GPU on `ranks` GPUs: input,
/// output and the ring's staging chunk (bytes / ranks), plus NCCL's reserve; on the host, one
/// input being generated and one output being checked.
pub fn sweep_footprint(bytes: u64, ranks: usize) -> Footprint {
    let n = (bytes / 4) as usize;
    Footprint::new(format!(
        "multi-gpu all-reduce of {bytes} bytes per GPU on {ranks} GPU(s)"
    ))
    .device::<f32>(2, n)
    .device::<f32>(1, n.div_ceil(ranks.max(1)))
    .device_bytes(NCCL_RESERVE + SMALL)
    .host::<f32>(2, n)
}

/// The sweep's sizes: powers of two from 1 KiB up to `max` bytes (at least one size).
pub fn sweep_sizes(max: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut b = MIN_BYTES;
    while b <= max {
        sizes.push(b);
        b *= 2;
    }
    if sizes.is_empty() && max >= 4 {
        sizes.push(max / 4 * 4);
    }
    sizes
}

/// `--max-bytes` capped by the free memory of the fullest GPU: the largest power of two whose
/// [`sweep_footprint`] fits, not above `max_bytes`.
fn capped_max_bytes(group: &GpuGroup, max_bytes: u64) -> Result<u64> {
    let mut free = u64::MAX;
    for g in group.gpus() {
        free = free.min(g.memory_info()?.0 as u64);
    }
    let k = group.len() as u64;
    // input + output + staging (bytes / k) + reserve.
    let budget = free.saturating_sub(NCCL_RESERVE + SMALL);
    let fits = budget.saturating_mul(k) / (2 * k + 1);
    let cap = max_bytes.min(fits);
    Ok(if cap >= MIN_BYTES {
        1u64 << (63 - cap.leading_zeros())
    } else {
        cap / 4 * 4
    })
}

/// `demo multi-gpu`.
fn run(_gpu: &Gpu, opts: &Options, out: &mut Out, args: &MultiGpu) -> Result<()> {
    let devices: Vec<usize> = if args.devices.is_empty() {
        (0..Gpu::device_count()?).collect()
    } else {
        args.devices.to_vec()
    };
    let group = GpuGroup::new(&devices)?;
    let (major, minor, patch) = multi_gpu::nccl_version()?;
    let k = group.len();
    let names = group
        .gpus()
        .iter()
        .map(|g| Ok(format!("{}: {}", g.ordinal(), g.name()?)))
        .collect::<Result<Vec<_>>>()?;
    out.line(format!(
        "{k} GPU(s) [{}], NCCL {major}.{minor}.{patch}, {}={} (NVLink SHARP off)",
        names.join("; "),
        multi_gpu::NVLS_ENV.0,
        std::env::var(multi_gpu::NVLS_ENV.0).unwrap_or_default()
    ));
    if k == 1 {
        out.line(
            "only one GPU: the sharded sum runs on it alone, and an all-reduce over one GPU is a \
             copy (busbw factor 2(n-1)/n = 0); both still run and are verified",
        );
    }
    let mut failures = strong_scaling(&group, opts, out, args.size)?;
    failures += all_reduce_sweep(&group, opts, out, args.max_bytes)?;
    if failures > 0 {
        bail!("{failures} multi-GPU result(s) disagree with the CPU reference");
    }
    Ok(())
}

/// `n` floats uniform in `[-1, 1)` from 24 random bits each (fast enough for 2^30).
fn random_floats(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut bits = vec![0u32; n];
    rng.fill(&mut bits[..]);
    bits.into_iter()
        .map(|b| (b >> 8) as f32 * (2.0 / (1u32 << 24) as f32) - 1.0)
        .collect()
}

/// Table (1): the sum of `size` f32 sharded over the first 1, 2, .. N GPUs of the group.
fn strong_scaling(group: &GpuGroup, opts: &Options, out: &mut Out, size: usize) -> Result<usize> {
    for g in group.gpus() {
        require_memory(g, &scaling_footprint(size))?;
    }
    let data = random_floats(opts.seed, size);
    let (expected, sum_abs) = reference::reference_f32(&data);
    out.dump("scaling_input", &[], &data)?;
    let copies: Vec<CudaSlice<f32>> = group
        .gpus()
        .iter()
        .map(|g| g.upload(&data))
        .collect::<cpu::Result<_>>()?;
    drop(data);
    let k_max = group.len();
    let bytes = reference::bytes_read(size);
    let mut table = Table::new(
        "sharded-sum",
        format!(
            "sharded sum of {size} f32 ({:.2} GiB, uniform in [-1, 1)) over 1..{k_max} GPU(s): each GPU \
             reduces its shard with reduce_sum_f32_f64 into an f64 scalar, then one NCCL all-reduce \
             of the partials; time between CUDA events on GPU 0 around the whole sum, every GPU's \
             stream forked from and joined to GPU 0's; median of {} reps; GB/s = bytes read / time; \
             checked against the CPU's f64 sum within (depth + k - 1) f64 roundings of sum|x|",
            bytes as f64 / (1u64 << 30) as f64,
            opts.reps
        ),
        ChartKind::Bars,
        [
            "GPUs",
            "devices",
            "shard elements",
            "median ms",
            "speedup vs 1 GPU",
            "GB/s total",
            "GB/s per GPU",
            "|error| / bound",
            "verdict",
        ],
    );
    let mut failures = 0;
    let mut one_gpu_ms = None;
    let mut headline = None;
    for k in 1..=k_max {
        let sub;
        let g = if k == k_max {
            group
        } else {
            sub = GpuGroup::from_gpus(group.gpus()[..k].to_vec())?;
            &sub
        };
        let ranges: Vec<Range<usize>> = (0..k).map(|r| ring::chunk(size, k, r)).collect();
        let shards: Vec<_> = copies
            .iter()
            .zip(&ranges)
            .map(|(c, r)| c.slice(r.clone()))
            .collect();
        let mut sum = ShardedSum::new(g)?;
        let cfgs = sum.launch(g, &shards)?;
        let got = sum.result(g, 0)?;
        out.verify(&format!("output_sharded_sum_{k}_gpus"), &[], &[got], |_| ())?;
        let lengths: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
        let bound = ShardedSum::error_bound(&lengths, &cfgs, sum_abs);
        let check = reference::check_sum(got, expected, bound);
        let err = if bound > 0.0 {
            (got - expected).abs() / bound
        } else {
            0.0
        };
        let t = timing::time_group(g, "the sharded sum", WARMUP, opts.reps as usize, || {
            sum.launch(g, &shards).map(drop)
        })?;
        failures += check.is_err() as usize;
        let ms = t.median_ms;
        let base = *one_gpu_ms.get_or_insert(ms);
        let gbps = timing::gbps(bytes, ms);
        let m = Measurement::new("sharded-sum", &t)
            .kernel(gpu::reduce::sum::reduce_sum_f32_f64.name())
            .at(k as f64)
            .bytes(bytes, None)
            .error(err)
            .extra("speedup_vs_1_gpu", base / ms)
            .extra("gbps_per_gpu", gbps / k as f64)
            .passed(check.is_ok());
        headline = Some(m.key());
        table.measured_row(
            [
                k.to_string(),
                format!("{:?}", g.devices()),
                format!(
                    "{}..{}",
                    lengths.iter().min().unwrap_or(&0),
                    lengths.iter().max().unwrap_or(&0)
                ),
                format!("{ms:.4}"),
                format!("{:.2}x", base / ms),
                format!("{gbps:.1}"),
                format!("{:.1}", gbps / k as f64),
                format!("{err:.1e}"),
                verdict(&check),
            ],
            m,
        );
    }
    out.table(table);
    if let Some(key) = headline {
        out.headline("sharded-sum", &key);
    }
    Ok(failures)
}

/// A peer timing as `peers.py` writes it, with the number of ranks it ran on.
#[derive(Deserialize)]
struct PeerTiming {
    pattern: String,
    table: String,
    variant: String,
    operation: String,
    library: String,
    median_ms: f64,
    #[serde(default)]
    ranks: Option<usize>,
}

/// The `--peers` timings of this table that ran on `ranks` GPUs (a line says why others are
/// left out).
fn read_peers(opts: &Options, out: &mut Out, ranks: usize) -> Result<Vec<PeerTiming>> {
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

/// The all-reduce input of rank `rank` at element `i`: a small integer in `-16..=15` from a
/// hash of the seed, the rank and the index, so that every sum of up to 2^19 ranks is exact in
/// `f32` in any order and the expected result is computed per element without storing it.
fn input_value(key: u64, i: usize) -> f32 {
    (((i as u64 ^ key).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 59) as i32 - 16) as f32
}

/// The hash key of rank `rank` (splitmix64 of the seed and the rank).
fn rank_key(seed: u64, rank: usize) -> u64 {
    let mut z = seed ^ (rank as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `out` in parallel (rayon) with `f(i)` for `i` in `0..out.len()`.
fn fill_parallel(out: &mut [f32], f: impl Fn(usize) -> f32 + Sync) {
    out.par_iter_mut()
        .with_min_len(1 << 16)
        .enumerate()
        .for_each(|(i, x)| *x = f(i));
}

/// Compares `got` with `expected(i)` exactly (bit for bit), in parallel (rayon).
fn check_exact(got: &[f32], expected: impl Fn(usize) -> f32 + Sync) -> Result<(), Mismatch> {
    const PER: usize = 1 << 16;
    let found: Vec<(usize, Option<usize>)> = got
        .par_chunks(PER)
        .enumerate()
        .map(|(c, part)| {
            let mut count = 0;
            let mut first = None;
            for (j, &x) in part.iter().enumerate() {
                if x.to_bits() != expected(c * PER + j).to_bits() {
                    count += 1;
                    first.get_or_insert(c * PER + j);
                }
            }
            (count, first)
        })
        .collect();
    let count: usize = found.iter().map(|f| f.0).sum();
    match found.iter().find_map(|f| f.1) {
        None => Ok(()),
        Some(index) => Err(Mismatch {
            index,
            got: format!("{}", got[index]),
            expected: format!("{}", expected(index)),
            count,
        }),
    }
}

/// Sets `n` floats at the start of `buffer` to [`POISON_BITS`] on `gpu`'s stream.
fn poison(gpu: &Gpu, buffer: &mut CudaSlice<f32>, n: usize) -> cpu::Result<()> {
    let (ptr, _write) = buffer.device_ptr_mut(gpu.stream());
    gpu.context()
        .bind_to_thread()
        .during("binding the context")?;
    // SAFETY: `ptr` is the start of `buffer`, which holds at least `n` floats (the callers'
    // sizes never exceed the allocation); cuMemsetD32Async writes `n` 4-byte words on the
    // buffer's own stream.
    unsafe { sys::cuMemsetD32Async(ptr, POISON_BITS, n, gpu.stream().cu_stream()) }
        .result()
        .during("poisoning an output")
}

/// Human bytes: `1 KiB`, `4 GiB`.
fn human(bytes: u64) -> String {
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
fn all_reduce_sweep(
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
             reduce-scatter then all-gather over peer copies and add_into; peer access {}), inputs \
             small integers from a seeded hash so every result is checked exactly on every GPU; \
             time per run = the slowest GPU's time between CUDA events on its own stream, runs \
             queued back to back, median of {} reps after {WARMUP} warm-up runs; algbw = bytes / \
             time, busbw = algbw x 2(n-1)/n = algbw x {factor} (nccl-tests)",
            if ring.peer_access() {
                "on"
            } else {
                "off: copies staged through the host"
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
fn sweep_measurement(
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
fn verify_all(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_from_1_kib() {
        assert_eq!(sweep_sizes(4096), [1024, 2048, 4096]);
        assert_eq!(sweep_sizes(5000), [1024, 2048, 4096]);
        assert_eq!(sweep_sizes(1000), [1000]);
        assert_eq!(sweep_sizes(4 << 30).len(), 23);
    }

    #[test]
    fn inputs_are_small_integers_and_checks_find_mismatches() {
        let key = rank_key(7, 1);
        assert_ne!(key, rank_key(7, 0));
        let mut v = vec![0f32; 100_000];
        fill_parallel(&mut v, |i| input_value(key, i));
        assert!(
            v.iter()
                .all(|x| x.fract() == 0.0 && (-16.0..=15.0).contains(x))
        );
        assert!(v.iter().any(|&x| x != v[0]));
        assert!(check_exact(&v, |i| input_value(key, i)).is_ok());
        v[77_777] += 1.0;
        let m = check_exact(&v, |i| input_value(key, i)).unwrap_err();
        assert_eq!((m.index, m.count), (77_777, 1));
    }

    #[test]
    fn footprints() {
        let (d, h) = sweep_footprint(1 << 30, 2).bytes().unwrap();
        assert_eq!(d, (2 << 30) + (1 << 29) + NCCL_RESERVE + SMALL);
        assert_eq!(h, 2 << 30);
        assert_eq!(human(1 << 30), "1 GiB");
        assert_eq!(human(1536), "1.50 KiB");
    }
}
