//! The sharded sum's strong scaling over 1..N GPUs (`demo multi-gpu`'s first table).

use std::ops::Range;

use anyhow::Result;
use cpu::multi_gpu::{GpuGroup, ShardedSum, ring};
use cpu::reduce::reference;
use cudarc::driver::CudaSlice;

use super::*;
use crate::engine::harness::{require_memory, verdict};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::{self};

/// Table (1): the sum of `size` f32 sharded over the first 1, 2, .. N GPUs of the group.
pub(super) fn strong_scaling(
    group: &GpuGroup,
    opts: &Options,
    out: &mut Out,
    size: usize,
) -> Result<usize> {
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
             reduces its shard (shards start on 2 MiB pages where each spans at least 512 MiB, else on 128-byte boundaries: ring::shard) with reduce_sum_f32_f64 into an f64 scalar, then one NCCL all-reduce \
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
        let ranges: Vec<Range<usize>> = (0..k).map(|r| ring::shard(size, k, r)).collect();
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
