//! GPU trials of the memory hierarchy lab (on-chip topics): registers and local memory, the
//! shared-memory example, bank-conflict patterns, constant memory and `__device__` globals,
//! each against its CPU reference on fresh seeded random inputs.

use cpu::Error;
use cpu::lab::memory::{bank_conflicts, constant_memory, device_globals, registers, shared_memory};
use cpu::verify;
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn fail(what: &str, seed: u64, m: verify::Mismatch) -> Failed {
    format!("{what} seed={seed}: {m}").into()
}

fn registers_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in registers::Variant::ALL {
        for n in [0usize, 1, 255, 257, 100_003, (1 << 20) + 3] {
            let name = format!("memory::registers::{}::{n}", variant.kernel_name());
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rng = StdRng::seed_from_u64(seed);
                let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
                let got = registers::run(&gpu, variant, &x).map_err(|e| e.to_string())?;
                verify::exact(&got, &registers::reference(&x))
                    .map_err(|m| fail(variant.kernel_name(), seed, m))
            }));
        }
    }
    trials
}

fn shared_memory_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in shared_memory::Variant::ALL {
        for (block, blocks) in [(4u32, 1usize), (1, 7), (256, 37), (1000, 3), (1024, 5)] {
            let name = format!(
                "memory::shared_memory::{}::{blocks}x{block}",
                variant.kernel_name()
            );
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rng = StdRng::seed_from_u64(seed);
                let n = block as usize * blocks;
                let mut u: Vec<f32> = (0..n).map(|_| rng.random_range(-1e5..1e5)).collect();
                // Conversion edge cases: saturation and NaN (C's float-to-int is undefined
                // there; PTX's cvt.rzi saturates and maps NaN to 0, as Rust's `as` does).
                if n >= 4 {
                    (u[0], u[1], u[2]) = (3e9, -3e9, f32::NAN);
                }
                let got =
                    shared_memory::run(&gpu, variant, &u, block).map_err(|e| e.to_string())?;
                verify::exact(&got, &shared_memory::reference(&u, block as usize))
                    .map_err(|m| fail(variant.kernel_name(), seed, m))
            }));
        }
    }
    trials
}

fn bank_conflict_trials() -> Vec<Trial> {
    bank_conflicts::PATTERNS
        .iter()
        .map(|p| {
            let p = *p;
            gpu_trial(format!("memory::bank_conflicts::{}", p.name), move || {
                let gpu = gpu()?;
                let m = bank_conflicts::measure(&gpu, p.stride, p.group, 100)
                    .map_err(|e| e.to_string())?;
                m.check.map_err(|e| format!("{}: {e}", p.name))?;
                if m.cycles_per_access.is_finite() && m.cycles_per_access > 0.0 {
                    Ok(())
                } else {
                    Err(format!("{}: {} cycles per access", p.name, m.cycles_per_access).into())
                }
            })
        })
        .collect()
}

fn constant_memory_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in constant_memory::Variant::ALL {
        for access in constant_memory::Access::ALL {
            for (n, reads) in [(1usize, 1u32), (33, 1500), (100_003, 64)] {
                let name = format!(
                    "memory::constant_memory::{}::{access:?}::{n}x{reads}",
                    variant.kernel_name()
                );
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let mut rng = StdRng::seed_from_u64(seed);
                    let values: Vec<f32> = (0..gpu::memory::constant_memory::TABLE_LEN)
                        .map(|_| rng.random_range(-1.0..1.0))
                        .collect();
                    let got = constant_memory::run(&gpu, variant, access, &values, n, reads)
                        .map_err(|e| e.to_string())?;
                    let table =
                        constant_memory::Table::new(&gpu, &values).map_err(|e| e.to_string())?;
                    verify::exact(&got, &table.reference(n, access, reads))
                        .map_err(|m| fail(variant.kernel_name(), seed, m))
                }));
            }
        }
    }
    for threads in [1u32, 4, 1024] {
        let name = format!("memory::constant_memory::dev_var::{threads}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let dev_var = StdRng::seed_from_u64(seed).random_range(-1_000_000..1_000_000);
            let got = constant_memory::dev_var_example(&gpu, dev_var, threads)
                .map_err(|e| e.to_string())?;
            let expected: Vec<i32> = (0..threads as i32).map(|i| dev_var + i).collect();
            verify::exact(&got, &expected).map_err(|m| fail("constant_memory_dev_var", seed, m))
        }));
    }
    trials
}

fn device_globals_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for by_symbol in [true, false] {
        for n in [1usize, 4, 1000, 1024] {
            let how = if by_symbol { "by_symbol" } else { "by_pointer" };
            let name = format!("memory::device_globals::{how}::{n}");
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rng = StdRng::seed_from_u64(seed);
                let u: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
                let v: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
                let got = if by_symbol {
                    device_globals::add_by_symbol(&gpu, &u, &v)
                } else {
                    device_globals::add_by_pointer(&gpu, &u, &v)
                }
                .map_err(|e| e.to_string())?;
                verify::exact(&got, &device_globals::reference(&u, &v))
                    .map_err(|m| fail(how, seed, m))
            }));
        }
    }
    trials
}

fn error_trials() -> Vec<Trial> {
    vec![
        gpu_trial("errors::shared_memory_partial_block".into(), || {
            let gpu = gpu()?;
            expect_err(
                shared_memory::run(&gpu, shared_memory::Variant::Static, &[1.0; 10], 4),
                |e| {
                    matches!(
                        e,
                        Error::NotMultiple {
                            value: 10,
                            multiple: 4,
                            ..
                        }
                    )
                },
            )
        }),
        gpu_trial("errors::shared_memory_block_too_large".into(), || {
            let gpu = gpu()?;
            expect_err(
                shared_memory::run(&gpu, shared_memory::Variant::Dynamic, &[1.0; 2048], 2048),
                |e| matches!(e, Error::InvalidBlock { block: 2048, .. }),
            )
        }),
        gpu_trial("errors::bank_conflicts_stride_too_large".into(), || {
            let gpu = gpu()?;
            expect_err(bank_conflicts::measure(&gpu, 1000, 1, 10), |e| {
                matches!(
                    e,
                    Error::OutOfRange {
                        what: "stride",
                        value: 1000,
                        ..
                    }
                )
            })
        }),
        gpu_trial("errors::constant_memory_table_length".into(), || {
            let gpu = gpu()?;
            expect_err(
                constant_memory::Table::new(&gpu, &[0.0; 10]).map(drop),
                |e| matches!(e, Error::LengthMismatch { what: "table", .. }),
            )
        }),
        gpu_trial("errors::constant_memory_dev_var_block".into(), || {
            let gpu = gpu()?;
            expect_err(constant_memory::dev_var_example(&gpu, 1, 2048), |e| {
                matches!(e, Error::InvalidBlock { block: 2048, .. })
            })
        }),
        gpu_trial("errors::device_globals_too_many".into(), || {
            let gpu = gpu()?;
            expect_err(
                device_globals::add_by_symbol(&gpu, &[0.0; 1025], &[0.0; 1025]),
                |e| {
                    matches!(
                        e,
                        Error::OutOfRange {
                            value: 1025,
                            max: 1024,
                            ..
                        }
                    )
                },
            )
        }),
        gpu_trial("errors::device_globals_length_mismatch".into(), || {
            let gpu = gpu()?;
            expect_err(
                device_globals::add_by_pointer(&gpu, &[0.0; 4], &[0.0; 3]),
                |e| matches!(e, Error::LengthMismatch { what: "v", .. }),
            )
        }),
    ]
}

/// Every trial of these topics.
pub fn trials() -> Vec<Trial> {
    let mut trials = registers_trials();
    trials.extend(shared_memory_trials());
    trials.extend(bank_conflict_trials());
    trials.extend(constant_memory_trials());
    trials.extend(device_globals_trials());
    trials.extend(error_trials());
    trials
}
