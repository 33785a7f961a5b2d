//! GPU trials of the memory hierarchy lab (global-memory and transfer topics): the coalescing
//! copies at every offset and a range of strides, the three data layouts, transfers through every
//! host memory kind (zero-copy included), the read-only stream of the bandwidth ceiling, the
//! texture lookups, and the refusals of bad input.

use cpu::lab::memory::bandwidth::{self, Direction, HostBuffer, HostMemory};
use cpu::lab::memory::coalescing::{self, Access, Load};
use cpu::lab::memory::fma_rate::{self, FmaRate};
use cpu::lab::memory::fma_stream::{self, FmaStream};
use cpu::lab::memory::read_stream::{self, InFlight, ReadShape, ReadStream};
use cpu::lab::memory::{layout, texture};
use cpu::{Error, verify};
use gpu::memory::layout::InnerStruct;
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::Trial;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Input lengths: tiny, around a block of 256, odd, large.
const CASES: [(&str, usize); 6] = [
    ("one", 1),
    ("33", 33),
    ("block_plus_1", 257),
    ("odd_prime", 4099),
    ("not_a_power_of_two", 100_003),
    ("large_2e20_plus_3", (1 << 20) + 3),
];

fn random_f32(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-1e3..1e3)).collect()
}

fn coalescing_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let accesses = [0, 1, 7, 8, 31, 32]
        .map(Access::Offset)
        .into_iter()
        .chain([1, 2, 3, 8, 17, 32].map(Access::Stride));
    for access in accesses {
        for load in Load::ALL {
            for (case, n) in CASES {
                let kernel = access.kernel_name(load);
                let what = match access {
                    Access::Offset(o) => format!("offset_{o}"),
                    Access::Stride(s) => format!("stride_{s}"),
                };
                let name = format!("memory::coalescing::{kernel}::{what}::{case}");
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let x = random_f32(seed, n);
                    let got = coalescing::run(&gpu, access, load, &x).map_err(|e| e.to_string())?;
                    verify::exact(&got, &coalescing::reference(access, &x))
                        .map_err(|m| format!("{kernel} {what} n={n} seed={seed}: {m}").into())
                }));
            }
        }
    }
    trials
}

fn layout_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in layout::Variant::ALL {
        for (case, n) in [("empty", 0)].into_iter().chain(CASES) {
            let name = format!("memory::layout::{}::{case}", variant.kernel_name());
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let v = random_f32(seed, 2 * n);
                let data: Vec<InnerStruct> = v
                    .chunks_exact(2)
                    .map(|p| InnerStruct { x: p[0], y: p[1] })
                    .collect();
                let got = layout::run(&gpu, variant, &data).map_err(|e| e.to_string())?;
                verify::exact(&got, &layout::reference(&data))
                    .map_err(|m| format!("{} n={n} seed={seed}: {m}", variant.kernel_name()).into())
            }));
        }
    }
    trials
}

fn bandwidth_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for kind in HostMemory::ALL {
        for bytes in [16usize, 1024, 4096 + 16, 1 << 20, (3 << 20) + 48] {
            let name = format!("memory::bandwidth::{kind:?}::{bytes}_bytes");
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut host = HostBuffer::new(&gpu, kind, bytes).map_err(|e| e.to_string())?;
                let mut device = gpu.zeros::<u8>(bytes).map_err(|e| e.to_string())?;
                bandwidth::fill_pattern(seed, host.as_mut_slice());
                let run = |host: &mut HostBuffer, device: &mut _| -> cpu::Result<Vec<u8>> {
                    bandwidth::transfer(&gpu, kind, Direction::HostToDevice, host, device, bytes)?;
                    let on_device = gpu.download(device, "host-to-device transfer")?;
                    host.as_mut_slice().fill(0);
                    bandwidth::transfer(&gpu, kind, Direction::DeviceToHost, host, device, bytes)?;
                    gpu.synchronize("device-to-host transfer")?;
                    Ok(on_device)
                };
                let on_device = run(&mut host, &mut device).map_err(|e| e.to_string())?;
                for (what, buf) in [("device", &on_device[..]), ("host", host.as_slice())] {
                    if let Some(i) = bandwidth::first_pattern_mismatch(seed, buf, 1) {
                        return Err(format!(
                            "{kind:?} {bytes} B seed={seed}: {what} copy wrong at byte {i}"
                        )
                        .into());
                    }
                }
                Ok(())
            }));
        }
    }
    trials.push(gpu_trial(
        "memory::bandwidth::kernel_copy_and_launch_overhead".into(),
        || {
            let gpu = gpu()?;
            let bytes = (1 << 20) + 16;
            let mut host = vec![0u8; bytes];
            bandwidth::fill_pattern(5, &mut host);
            let src = gpu.upload(&host).map_err(|e| e.to_string())?;
            let mut dst = gpu.zeros::<u8>(bytes).map_err(|e| e.to_string())?;
            bandwidth::kernel_copy(&gpu, &src, &mut dst, bytes).map_err(|e| e.to_string())?;
            let got = gpu
                .download(&dst, "bandwidth_copy_v4")
                .map_err(|e| e.to_string())?;
            verify::exact(&got, &host).map_err(|m| m.to_string())?;
            let o = bandwidth::launch_overhead(&gpu, 20).map_err(|e| e.to_string())?;
            if !(o.gpu_us > 0.0 && o.round_trip_us > 0.0) {
                return Err(format!("implausible launch overhead {o:?}").into());
            }
            Ok(())
        },
    ));
    trials
}

/// The FMA-rate ceiling's kernel: every thread's output equal, bit for bit, to the CPU's
/// chains (the output poisoned with NaN before), at 1 and 3 blocks per SM and a few trip
/// counts; and the refusals of its shape.
fn fma_rate_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for blocks_per_sm in [1u32, 3] {
        for iterations in [1u32, 2, 13] {
            let name = format!("memory::fma_rate::{blocks_per_sm}_blocks_per_sm::{iterations}_iterations");
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rate =
                    FmaRate::new(&gpu, blocks_per_sm, iterations).map_err(|e| e.to_string())?;
                let sms = gpu.sm_count().map_err(|e| e.to_string())? as usize;
                if rate.threads() != sms * blocks_per_sm as usize * 256 {
                    return Err(format!("{} threads for {sms} SMs", rate.threads()).into());
                }
                rate.launch(&gpu).map_err(|e| e.to_string())?;
                let wrong = rate.mismatches(&gpu, 1).map_err(|e| e.to_string())?;
                if wrong != 0 {
                    return Err(format!("{wrong} of {} threads differ from the CPU", rate.threads()).into());
                }
                let expected = rate.threads() as u64 * u64::from(iterations) * fma_rate::FMAS_PER_ITERATION;
                if rate.fmas() != expected {
                    return Err(format!("fmas {} != {expected}", rate.fmas()).into());
                }
                Ok(())
            }));
        }
    }
    for (case, blocks_per_sm, iterations) in [("no_blocks", 0, 1), ("too_many_blocks", fma_rate::MAX_BLOCKS_PER_SM + 1, 1), ("no_iterations", 1, 0)] {
        trials.push(gpu_trial(format!("memory::fma_rate::refuses_{case}"), move || {
            let gpu = gpu()?;
            expect_err(FmaRate::new(&gpu, blocks_per_sm, iterations), |e| {
                matches!(e, Error::OutOfRange { .. })
            })
        }));
    }
    trials
}

/// The FMA stream (the separable floor, measured): every element of a fresh random input
/// equal, bit for bit, to its CPU chain (the output poisoned with NaN before), at widths 3,
/// 17 and 31, on every input length of [`CASES`] (the `n % 4` tail elements included), and
/// the refusals of a width without a kernel and of an empty input.
fn fma_stream_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (case, n) in CASES {
        for w in [3usize, 17, fma_stream::MAX_WIDTH] {
            let name = format!("memory::fma_stream::{case}::width_{w}");
            trials.push(gpu_trial(name.clone(), move || {
                let gpu = gpu()?;
                let input = random_f32(seed_for(&name), n);
                let mut stream = FmaStream::new(&gpu, &input).map_err(|e| e.to_string())?;
                let cfg = stream.launch(&gpu, w).map_err(|e| e.to_string())?;
                if (cfg.grid_dim.0 as usize) * 256 * 4 < n {
                    return Err(format!("grid {:?} does not cover {n}", cfg.grid_dim).into());
                }
                if let Err(m) = stream.check(&gpu, w, &input, 1).map_err(|e| e.to_string())? {
                    return Err(m.to_string().into());
                }
                if stream.fmas(w) != 2 * w as u64 * n as u64 || stream.bytes() != 8 * n as u64 {
                    return Err("fmas or bytes miscounted".into());
                }
                Ok(())
            }));
        }
    }
    for w in [1usize, 2, fma_stream::MAX_WIDTH + 2] {
        trials.push(gpu_trial(format!("memory::fma_stream::refuses_width_{w}"), move || {
            let gpu = gpu()?;
            let mut stream = FmaStream::new(&gpu, &[1.0; 8]).map_err(|e| e.to_string())?;
            expect_err(stream.launch(&gpu, w), |e| matches!(e, Error::OutOfRange { .. }))
        }));
    }
    trials.push(gpu_trial("memory::fma_stream::refuses_an_empty_input".into(), || {
        let gpu = gpu()?;
        expect_err(FmaStream::new(&gpu, &[]), |e| matches!(e, Error::OutOfRange { .. }))
    }));
    trials
}

/// The read stream of every launch shape the ceiling tries (and a grid smaller than one wave)
/// returns the wrapping sum of random words, at lengths that leave every tail (`n % 4`) and
/// partial grid-stride round; a view that is not 16-byte aligned is refused.
fn read_stream_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for in_flight in InFlight::ALL {
        // `None`: the ceiling's shapes (the occupancy calculator's count and twice it).
        for (grid, blocks_per_sm) in [("ceiling_shapes", None), ("one_block_per_sm", Some(1))] {
            for (case, n) in [("empty", 0)]
                .into_iter()
                .chain(CASES)
                .chain([("large_2e24_plus_7", (1 << 24) + 7)])
            {
                let name = format!(
                    "memory::read_stream::{}::{grid}::{case}",
                    in_flight.kernel_name()
                );
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let mut rng = StdRng::seed_from_u64(seed);
                    let mut words = vec![0u32; n];
                    rng.fill(&mut words[..]);
                    let shapes = match blocks_per_sm {
                        None => ReadShape::candidates(&gpu)
                            .map_err(|e| e.to_string())?
                            .into_iter()
                            .filter(|s| s.in_flight == in_flight)
                            .collect(),
                        Some(blocks_per_sm) => vec![ReadShape {
                            in_flight,
                            blocks_per_sm,
                        }],
                    };
                    let expected = read_stream::reference(&words);
                    for shape in shapes {
                        let got =
                            read_stream::run(&gpu, shape, &words).map_err(|e| e.to_string())?;
                        if got != expected {
                            return Err(format!(
                                "{} n={n} seed={seed}: sum {got:#x}, expected {expected:#x}",
                                shape.describe()
                            )
                            .into());
                        }
                    }
                    Ok(())
                }));
            }
        }
    }
    trials.push(gpu_trial(
        "memory::read_stream::refuses_a_misaligned_view".into(),
        || {
            let gpu = gpu()?;
            let words = gpu.zeros::<u32>(64).map_err(|e| e.to_string())?;
            let shape = ReadShape {
                in_flight: InFlight::X8,
                blocks_per_sm: 1,
            };
            let mut stream = ReadStream::new(&gpu, shape).map_err(|e| e.to_string())?;
            expect_err(stream.launch(&gpu, &words.slice(1..)), |e| {
                matches!(e, Error::Misaligned { what: "input", .. })
            })?;
            expect_err(
                ReadStream::new(
                    &gpu,
                    ReadShape {
                        in_flight: InFlight::X4,
                        blocks_per_sm: 0,
                    },
                ),
                |e| matches!(e, Error::OutOfRange { value: 0, .. }),
            )
        },
    ));
    trials
}

fn texture_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in texture::Variant::ALL {
        for (table_len, (case, n)) in [1usize, 1000, 1 << 20]
            .into_iter()
            .flat_map(|t| [("empty", 0)].into_iter().chain(CASES).map(move |c| (t, c)))
        {
            let name = format!(
                "memory::texture::{}::table_{table_len}::{case}",
                variant.kernel_name()
            );
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let table = random_f32(seed, table_len);
                let mut rng = StdRng::seed_from_u64(seed ^ 1);
                let idx: Vec<u32> = (0..n)
                    .map(|_| rng.random_range(0..table_len as u32))
                    .collect();
                let got = texture::run(&gpu, variant, &table, &idx).map_err(|e| e.to_string())?;
                verify::exact(&got, &texture::reference(&table, &idx)).map_err(|m| {
                    format!(
                        "{} table={table_len} n={n} seed={seed}: {m}",
                        variant.kernel_name()
                    )
                    .into()
                })
            }));
        }
    }
    trials
}

fn error_trials() -> Vec<Trial> {
    let invalid = |e: &Error| {
        matches!(
            e,
            Error::OutOfRange { .. } | Error::NotMultiple { .. } | Error::Unsupported { .. }
        )
    };
    vec![
        gpu_trial(
            "memory::errors::coalescing_offset_out_of_range".into(),
            move || {
                let gpu = gpu()?;
                expect_err(
                    coalescing::run(&gpu, Access::Offset(33), Load::Ca, &[0.0; 100]),
                    |e| {
                        matches!(
                            e,
                            Error::OutOfRange {
                                value: 33,
                                max: 32,
                                ..
                            }
                        )
                    },
                )
            },
        ),
        gpu_trial(
            "memory::errors::coalescing_stride_out_of_range".into(),
            move || {
                let gpu = gpu()?;
                expect_err(
                    coalescing::run(&gpu, Access::Stride(0), Load::Cg, &[0.0; 100]),
                    invalid,
                )?;
                expect_err(
                    coalescing::run(&gpu, Access::Stride(33), Load::Cg, &[0.0; 100]),
                    |e| {
                        matches!(
                            e,
                            Error::OutOfRange {
                                value: 33,
                                min: 1,
                                ..
                            }
                        )
                    },
                )
            },
        ),
        gpu_trial("memory::errors::coalescing_input_too_short".into(), || {
            let gpu = gpu()?;
            let x = gpu.zeros::<f32>(100).map_err(|e| e.to_string())?;
            let mut y = gpu.zeros::<f32>(100).map_err(|e| e.to_string())?;
            expect_err(
                coalescing::launch(&gpu, Access::Offset(1), Load::Ca, &x, &mut y),
                |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "x",
                            expected: 101,
                            actual: 100, ..
                        }
                    )
                },
            )
        }),
        gpu_trial(
            "memory::errors::zero_copy_needs_mapped_memory".into(),
            move || {
                let gpu = gpu()?;
                let mut host =
                    HostBuffer::new(&gpu, HostMemory::Pinned, 64).map_err(|e| e.to_string())?;
                let mut device = gpu.zeros::<u8>(64).map_err(|e| e.to_string())?;
                expect_err(
                    bandwidth::zero_copy(&gpu, Direction::HostToDevice, &mut host, &mut device, 64),
                    invalid,
                )
            },
        ),
        gpu_trial(
            "memory::errors::zero_copy_needs_16_byte_groups".into(),
            move || {
                let gpu = gpu()?;
                let mut host =
                    HostBuffer::new(&gpu, HostMemory::ZeroCopy, 64).map_err(|e| e.to_string())?;
                let mut device = gpu.zeros::<u8>(64).map_err(|e| e.to_string())?;
                expect_err(
                    bandwidth::transfer(
                        &gpu,
                        HostMemory::ZeroCopy,
                        Direction::DeviceToHost,
                        &mut host,
                        &mut device,
                        24,
                    ),
                    invalid,
                )
            },
        ),
        gpu_trial(
            "memory::errors::transfer_larger_than_buffers".into(),
            move || {
                let gpu = gpu()?;
                let mut host =
                    HostBuffer::new(&gpu, HostMemory::Pageable, 64).map_err(|e| e.to_string())?;
                let mut device = gpu.zeros::<u8>(64).map_err(|e| e.to_string())?;
                expect_err(
                    bandwidth::transfer(
                        &gpu,
                        HostMemory::Pageable,
                        Direction::HostToDevice,
                        &mut host,
                        &mut device,
                        65,
                    ),
                    invalid,
                )
            },
        ),
        gpu_trial(
            "memory::errors::texture_index_out_of_range".into(),
            move || {
                let gpu = gpu()?;
                expect_err(
                    texture::run(&gpu, texture::Variant::Tex1d, &[1.0; 10], &[3, 10]),
                    |e| {
                        matches!(
                            e,
                            Error::OutOfRange {
                                what: "lookup index",
                                value: 10,
                                max: 9,
                                ..
                            }
                        )
                    },
                )
            },
        ),
        gpu_trial("memory::errors::texture_empty_table".into(), move || {
            let gpu = gpu()?;
            expect_err(
                texture::run(&gpu, texture::Variant::Global, &[], &[]),
                invalid,
            )
        }),
    ]
}

/// Every trial of these topics.
pub fn trials() -> Vec<Trial> {
    let mut trials = coalescing_trials();
    trials.extend(layout_trials());
    trials.extend(bandwidth_trials());
    trials.extend(read_stream_trials());
    trials.extend(fma_rate_trials());
    trials.extend(fma_stream_trials());
    trials.extend(texture_trials());
    trials.extend(error_trials());
    trials
}
