//! `demo multi-gpu`: reduction across every GPU of the machine through NCCL. (1) Strong scaling
//! of a sharded sum of `--size` f32 over 1..N GPUs; (2) an all-reduce sweep from 1 KiB to
//! `--max-bytes` per GPU in nccl-tests' conventions (algbw, busbw), NCCL beside the lab's ring
//! and, with `--peers`, beside `torch.distributed.all_reduce`; every result verified.

mod all_reduce;
mod collectives;
mod inputs;
mod processes;
mod scaling;

use all_reduce::all_reduce_sweep;
use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::multi_gpu::{self, GpuGroup};
use inputs::{check_exact, fill_parallel, input_value, poison, random_floats, rank_key};
use scaling::strong_scaling;

use crate::engine::args::{bytes_from, refuse};
use crate::engine::harness::{Footprint, SMALL};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, kernels_each};

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
    /// Run as a job of N processes, one per GPU (rank r on device r), through NCCL's
    /// multi-process path: starts N ranks of this command with torchrun's variables (RANK,
    /// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT); rank 0 prints the tables. A command
    /// started with those variables (by torchrun --nproc-per-node N --no-python) runs as its
    /// rank without this option.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    processes: Option<u16>,
    /// Seconds a rank of a multi-process run waits for the others (the rendezvous, each
    /// collective) before it ends with an error.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
}

/// What `demo multi-gpu` runs, for `demo list` and the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub(crate) enum Variant {
    /// [`ShardedSum`](multi_gpu::ShardedSum): `reduce_sum_f32_f64` per shard, then NCCL's all-reduce of the partials.
    ShardedSum,
    /// [`GpuGroup::all_reduce_sum`](multi_gpu::GpuGroup::all_reduce_sum): NCCL's all-reduce (its own kernels).
    NcclAllReduce,
    /// [`ring`](multi_gpu::ring): the lab's ring, one kernel per step reading the neighbour over peer access.
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
            Variant::RingAllReduce => {
                const {
                    &[
                        gpu::multi_gpu::kernels::ring_reduce_peer.name(),
                        gpu::multi_gpu::kernels::ring_copy_peer.name(),
                        gpu::multi_gpu::kernels::add_into.name(),
                    ]
                }
            }
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
        if !self.devices.is_empty() && (self.processes.is_some() || processes::is_rank()) {
            refuse!(
                "--devices names the GPUs of a one-process group; a multi-process run takes one \
                 GPU per rank (LOCAL_RANK; CUDA_VISIBLE_DEVICES narrows them)"
            );
        }
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
    Ok(sweep_cap(max_bytes.min(fits)))
}

/// The largest sweep size at most `cap` bytes: a power of two from [`MIN_BYTES`] up, else `cap`
/// rounded down to whole floats.
fn sweep_cap(cap: u64) -> u64 {
    if cap >= MIN_BYTES {
        1u64 << (63 - cap.leading_zeros())
    } else {
        cap / 4 * 4
    }
}

/// `demo multi-gpu`: one process (every GPU from this one), a rank of a multi-process job,
/// or the launcher of one (`--processes`).
fn run(gpu: &Gpu, opts: &Options, out: &mut Out, args: &MultiGpu) -> Result<()> {
    if processes::is_rank() {
        return processes::run_rank(gpu, opts, out, args);
    }
    if let Some(n) = args.processes {
        let timeout = std::time::Duration::from_secs(args.timeout);
        return processes::launch(n as usize, timeout);
    }
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

#[cfg(test)]
mod tests {
    use super::all_reduce::human;
    use super::*;

    #[test]
    fn sizes_from_1_kib() {
        assert_eq!(sweep_sizes(4096), [1024, 2048, 4096]);
        assert_eq!(sweep_sizes(5000), [1024, 2048, 4096]);
        assert_eq!(sweep_sizes(1000), [1000]);
        assert_eq!(sweep_sizes(4 << 30).len(), 23);
        assert_eq!(sweep_cap(5000), 4096);
        assert_eq!(sweep_cap(1 << 30), 1 << 30);
        assert_eq!(sweep_cap(1001), 1000);
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
