//! GPU trials of `cpu::multi_gpu`: the sharded sum, NCCL's all-reduce (out of place and in
//! place) and the lab's ring all-reduce on random data of awkward lengths (empty, one element,
//! 2^20 + 3, a prime that is no multiple of any GPU count), each against the CPU reference on
//! every GPU, on one GPU (`one_gpu`) and on every GPU (`all_gpus`, listed only where there are
//! at least 2). Trials that need NCCL fail with the typed error's sentence where it cannot be
//! loaded; every trial is ignored where no GPU is.
//!
//! The trials take one lock: groups on the same GPUs running collectives at the same time from
//! several threads can deadlock (NCCL orders a communicator's operations, not two
//! communicators').

use std::sync::{Mutex, MutexGuard};

use cpu::multi_gpu::{
    self, GpuGroup, RingAllReduce, ShardedSum, all_reduce_bound, all_reduce_reference, ring,
};
use cpu::reduce::reference;
use cpu::{Error, Gpu};
use cudarc::driver::CudaSlice;
use lab_tests::{expect_err, fast_floats, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};

/// Poison of every output before a collective, compared bit for bit.
const POISON: f32 = f32::from_bits(0x7fc0_5a5a);

/// The lengths the issue names: empty, one element, 2^20 + 3, and a prime (no multiple of any
/// GPU count from 2 up).
const LENGTHS: [(&str, usize); 4] = [
    ("empty", 0),
    ("one", 1),
    ("2e20_plus_3", (1 << 20) + 3),
    ("prime_7919", 7919),
];

fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Which GPUs a trial's group has.
#[derive(Clone, Copy)]
enum Devices {
    /// GPU 0 alone.
    One,
    /// Every visible GPU.
    All,
}

impl Devices {
    fn name(self) -> &'static str {
        match self {
            Devices::One => "one_gpu",
            Devices::All => "all_gpus",
        }
    }

    fn group(self) -> Result<GpuGroup, Failed> {
        match self {
            Devices::One => GpuGroup::new(&[0]),
            Devices::All => GpuGroup::all(),
        }
        .map_err(|e| e.to_string().into())
    }
}

fn e(err: Error) -> Failed {
    err.to_string().into()
}

/// The groups the trials run on: one GPU always, every GPU where there are at least 2.
fn groups() -> Vec<Devices> {
    let count = Gpu::device_count().unwrap_or(0);
    if count < 2 {
        eprintln!(
            "multi_gpu: {count} GPU(s) visible; the all_gpus trials (2 GPUs or more) are not listed"
        );
        vec![Devices::One]
    } else {
        vec![Devices::One, Devices::All]
    }
}

/// The sharded sum of `total` random floats split over the group (`lopsided`: all on the last
/// GPU, the others empty), against the `f64` reference within [`ShardedSum::error_bound`], on
/// every rank.
fn check_sharded_sum(
    group: &GpuGroup,
    total: usize,
    lopsided: bool,
    seed: u64,
) -> Result<(), Failed> {
    let k = group.len();
    let data = fast_floats(seed, total);
    let ranges: Vec<_> = (0..k)
        .map(|r| match (lopsided, r + 1 == k) {
            (true, true) => 0..total,
            (true, false) => 0..0,
            (false, _) => ring::chunk(total, k, r),
        })
        .collect();
    let shards: Vec<CudaSlice<f32>> = group
        .gpus()
        .iter()
        .zip(&ranges)
        .map(|(g, r)| g.upload(&data[r.clone()]))
        .collect::<cpu::Result<_>>()
        .map_err(e)?;
    let (expected, sum_abs) = reference::reference_f32(&data);
    let mut sum = ShardedSum::new(group).map_err(e)?;
    let cfgs = sum.launch(group, &shards).map_err(e)?;
    let lengths: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
    let bound = ShardedSum::error_bound(&lengths, &cfgs, sum_abs);
    let first = sum.result(group, 0).map_err(e)?;
    for rank in 0..k {
        let got = sum.result(group, rank).map_err(e)?;
        reference::check_sum(got, expected, bound).map_err(|m| {
            format!("sharded sum of {total} on rank {rank} (shards {lengths:?}) seed={seed}: {m}")
        })?;
        if got.to_bits() != first.to_bits() {
            return Err(format!("rank {rank} holds {got:e}, rank 0 {first:e}").into());
        }
    }
    // The device-scalar form into the caller's buffers, and the one-call form.
    let mut results: Vec<CudaSlice<f64>> = group
        .gpus()
        .iter()
        .map(|g| g.zeros(1))
        .collect::<cpu::Result<_>>()
        .map_err(e)?;
    group.sharded_sum_into(&shards, &mut results).map_err(e)?;
    for (rank, (g, r)) in group.gpus().iter().zip(&results).enumerate() {
        let got = g.download(r, "sharded_sum_into").map_err(e)?[0];
        reference::check_sum(got, expected, bound)
            .map_err(|m| format!("sharded_sum_into on rank {rank} seed={seed}: {m}"))?;
    }
    let got = group.sharded_sum(&shards).map_err(e)?;
    reference::check_sum(got, expected, bound)
        .map_err(|m| format!("sharded_sum seed={seed}: {m}").into())
}

/// How an all-reduce trial runs.
#[derive(Clone, Copy, Debug)]
enum AllReduce {
    /// NCCL, inputs kept, outputs poisoned first.
    NcclOutOfPlace,
    /// NCCL in place.
    NcclInPlace,
    /// The lab's ring, in place.
    Ring,
}

/// One all-reduce of `len` random floats per GPU, every rank's result against the `f64`
/// reference within (ranks - 1) f32 roundings per element; ranks' results identical.
fn check_all_reduce(group: &GpuGroup, how: AllReduce, len: usize, seed: u64) -> Result<(), Failed> {
    let k = group.len();
    let inputs: Vec<Vec<f32>> = (0..k as u64)
        .map(|r| fast_floats(seed.wrapping_add(r), len))
        .collect();
    let refs: Vec<&[f32]> = inputs.iter().map(|v| v.as_slice()).collect();
    let (expected, sum_abs) = all_reduce_reference(&refs);
    let mut d_inputs: Vec<CudaSlice<f32>> = group
        .gpus()
        .iter()
        .zip(&inputs)
        .map(|(g, x)| g.upload(x))
        .collect::<cpu::Result<_>>()
        .map_err(e)?;
    let results = match how {
        AllReduce::NcclOutOfPlace => {
            let mut outputs: Vec<CudaSlice<f32>> = group
                .gpus()
                .iter()
                .map(|g| g.poisoned(len, POISON))
                .collect::<cpu::Result<_>>()
                .map_err(e)?;
            group.all_reduce_sum(&d_inputs, &mut outputs).map_err(e)?;
            // The inputs are left as they were.
            for (r, (g, d)) in group.gpus().iter().zip(&d_inputs).enumerate() {
                if g.download(d, "all-reduce").map_err(e)? != inputs[r] {
                    return Err(
                        format!("rank {r}: the out-of-place all-reduce wrote its input").into(),
                    );
                }
            }
            outputs
        }
        AllReduce::NcclInPlace => {
            group.all_reduce_sum_in_place(&mut d_inputs).map_err(e)?;
            d_inputs
        }
        AllReduce::Ring => {
            let mut ws = RingAllReduce::new(group, len).map_err(e)?;
            ws.all_reduce_sum(group, &mut d_inputs).map_err(e)?;
            d_inputs
        }
    };
    let mut first: Option<Vec<f32>> = None;
    for (rank, (g, d)) in group.gpus().iter().zip(&results).enumerate() {
        let got = g.download(d, "all-reduce").map_err(e)?;
        for i in 0..len {
            let bound = all_reduce_bound(k, sum_abs[i]);
            // A NaN (the poison) fails too.
            let within = (got[i] as f64 - expected[i]).abs() <= bound;
            if !within {
                return Err(format!(
                    "{how:?} of {len} on {k} GPU(s), rank {rank}, seed={seed}: element {i} is {}, expected {} (bound {bound:e})",
                    got[i], expected[i]
                )
                .into());
            }
        }
        match &first {
            None => first = Some(got),
            Some(f) => {
                if f.iter().zip(&got).any(|(a, b)| a.to_bits() != b.to_bits()) {
                    return Err(format!("{how:?}: rank {rank} differs from rank 0").into());
                }
            }
        }
    }
    Ok(())
}

fn collective_trials(groups: &[Devices]) -> Vec<Trial> {
    let mut trials = Vec::new();
    for &devices in groups {
        let g = devices.name();
        for (case, len) in LENGTHS {
            for lopsided in [false, true] {
                let name = format!(
                    "multi_gpu::{g}::sharded_sum::{case}{}",
                    if lopsided {
                        "::all_on_the_last_gpu"
                    } else {
                        ""
                    }
                );
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let _one = lock();
                    check_sharded_sum(&devices.group()?, len, lopsided, seed)
                }));
            }
            for how in [
                AllReduce::NcclOutOfPlace,
                AllReduce::NcclInPlace,
                AllReduce::Ring,
            ] {
                let name = format!("multi_gpu::{g}::all_reduce::{how:?}::{case}");
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let _one = lock();
                    check_all_reduce(&devices.group()?, how, len, seed)
                }));
            }
        }
        // Small integers in f32: every order of addition is exact, so every element is checked
        // for equality (what the demo's sweep relies on).
        let name = format!("multi_gpu::{g}::all_reduce::small_integers_exact");
        trials.push(gpu_trial(name, move || {
            let _one = lock();
            let group = devices.group()?;
            let len = (1 << 16) + 5;
            let input = |r: usize| -> Vec<f32> {
                (0..len)
                    .map(|i| ((i * 7 + r * 3) % 17) as f32 - 8.0)
                    .collect()
            };
            let mut bufs: Vec<CudaSlice<f32>> = group
                .gpus()
                .iter()
                .enumerate()
                .map(|(r, gpu)| gpu.upload(&input(r)))
                .collect::<cpu::Result<_>>()
                .map_err(e)?;
            let mut ring_bufs: Vec<CudaSlice<f32>> = group
                .gpus()
                .iter()
                .enumerate()
                .map(|(r, gpu)| gpu.upload(&input(r)))
                .collect::<cpu::Result<_>>()
                .map_err(e)?;
            group.all_reduce_sum_in_place(&mut bufs).map_err(e)?;
            multi_gpu::ring_all_reduce_sum(&group, &mut ring_bufs).map_err(e)?;
            let expected: Vec<f32> = (0..len)
                .map(|i| (0..group.len()).map(|r| input(r)[i]).sum())
                .collect();
            for (rank, gpu) in group.gpus().iter().enumerate() {
                for (what, d) in [("nccl", &bufs[rank]), ("ring", &ring_bufs[rank])] {
                    let got = gpu.download(d, what).map_err(e)?;
                    cpu::verify::exact(&got, &expected)
                        .map_err(|m| format!("{what} rank {rank}: {m}"))?;
                }
            }
            Ok(())
        }));
    }
    trials
}

fn error_trials(groups: &[Devices]) -> Vec<Trial> {
    let mut trials = vec![
        gpu_trial("multi_gpu::errors::a_device_twice".into(), || {
            expect_err(
                GpuGroup::new(&[0, 0]),
                |e| matches!(e, Error::InvalidDevices { devices, .. } if devices == &[0, 0]),
            )
        }),
        gpu_trial("multi_gpu::errors::no_device".into(), || {
            expect_err(GpuGroup::new(&[]), |e| {
                matches!(e, Error::InvalidDevices { .. })
            })
        }),
        gpu_trial("multi_gpu::errors::device_out_of_range".into(), || {
            expect_err(GpuGroup::new(&[1 << 20]), |e| {
                matches!(
                    e,
                    Error::DeviceOutOfRange {
                        device: 1048576,
                        ..
                    }
                )
            })
        }),
    ];
    for &devices in groups {
        let g = devices.name();
        trials.push(gpu_trial(
            format!("multi_gpu::{g}::errors::unequal_lengths"),
            move || {
                let _one = lock();
                let group = devices.group()?;
                let k = group.len();
                // Output r one element longer than input r on the last rank.
                let inputs: Vec<CudaSlice<f32>> = group
                    .gpus()
                    .iter()
                    .map(|g| g.zeros(10))
                    .collect::<cpu::Result<_>>()
                    .map_err(e)?;
                let mut outputs: Vec<CudaSlice<f32>> = group
                    .gpus()
                    .iter()
                    .enumerate()
                    .map(|(r, g)| g.zeros(10 + (r + 1 == k) as usize))
                    .collect::<cpu::Result<_>>()
                    .map_err(e)?;
                let mut lengths = vec![10; 2 * k];
                lengths[2 * k - 1] = 11;
                expect_err(
                    group.all_reduce_sum(&inputs, &mut outputs),
                    |e| matches!(e, Error::UnequalLengths { lengths: l, .. } if *l == lengths),
                )?;
                if k == 1 {
                    return Ok(()); // one buffer: no two lengths to differ
                }
                expect_err(multi_gpu::ring_all_reduce_sum(&group, &mut outputs), |e| {
                    matches!(e, Error::UnequalLengths { .. })
                })
            },
        ));
        trials.push(gpu_trial(
            format!("multi_gpu::{g}::errors::one_buffer_per_gpu"),
            move || {
                let _one = lock();
                let group = devices.group()?;
                let k = group.len();
                let mut bufs: Vec<CudaSlice<f32>> = group
                    .gpus()
                    .iter()
                    .chain(group.gpus().first())
                    .map(|g| g.zeros(4))
                    .collect::<cpu::Result<_>>()
                    .map_err(e)?;
                expect_err(group.all_reduce_sum_in_place(&mut bufs), |e| {
                    matches!(e, Error::LengthMismatch { expected, actual, .. } if *expected == k && *actual == k + 1)
                })?;
                expect_err(group.sharded_sum(&bufs[..k - 1]), |e| {
                    matches!(e, Error::LengthMismatch { .. })
                })
            },
        ));
        if let Devices::All = devices {
            trials.push(gpu_trial(
                format!("multi_gpu::{g}::errors::buffer_on_another_gpu"),
                move || {
                    let _one = lock();
                    let group = devices.group()?;
                    // Every rank given rank 1's buffer.
                    let bufs: Vec<CudaSlice<f32>> = (0..group.len())
                        .map(|_| group.gpus()[1].zeros(4))
                        .collect::<cpu::Result<_>>()
                        .map_err(e)?;
                    expect_err(group.sharded_sum(&bufs), |e| {
                        matches!(
                            e,
                            Error::WrongContext {
                                expected: 0,
                                actual: 1,
                                ..
                            }
                        )
                    })
                },
            ));
        }
    }
    trials
}

/// Every multi-GPU trial.
pub fn trials() -> Vec<Trial> {
    let groups = groups();
    let mut trials = collective_trials(&groups);
    trials.extend(error_trials(&groups));
    trials
}
