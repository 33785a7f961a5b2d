//! GPU tests: every kernel against its CPU reference on fresh seeded random inputs, outputs
//! poisoned before each launch, sizes that are not multiples of the block; and the launchers'
//! refusals of bad input. Where no NVIDIA driver or device is present every trial is reported
//! as ignored; `cargo test -- --include-ignored` (or the bundle's `run.sh`) runs them anyway.
//!
//! A failure names the variant, the case, the seed (replay with `GPU_LAB_SEED=<seed>`) and the
//! first mismatching index.

use cpu::lab::smoke;
use cpu::{Error, transpose, vector_add, verify};

use lab_tests::{base_seed, expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Arguments, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The test modules of `tests/gpu/`, each with a `trials()`: a new module's name here is its
/// only entry (its `mod` line and its trials come from this list).
macro_rules! modules {
    ($($module:ident),* $(,)?) => {
        #[path = "gpu"]
        mod modules {
            $(pub mod $module;)*
        }

        /// The trials of every module of `tests/gpu/`, in the order listed.
        fn module_trials() -> Vec<Trial> {
            let mut trials = Vec::new();
            $(trials.extend(modules::$module::trials());)*
            trials
        }
    };
}

modules![
    modules,
    transpose_any,
    transpose_thin,
    reduce,
    reduce_ops,
    memory_on_chip,
    memory_traffic,
    hostile,
    soundness,
    properties,
    convolution,
    entry_points,
    cuda_std_style,
    scan,
    scan_ops,
    histogram,
    md,
    multi_gpu,
    sort,
    gemm,
];

/// Named sizes: empty, one element, around one block of 256, not a power of two, large.
const CASES: [(&str, usize); 8] = [
    ("empty", 0),
    ("one", 1),
    ("under_a_warp", 31),
    ("block_minus_1", 255),
    ("block_plus_1", 257),
    ("odd_prime", 4099),
    ("not_a_power_of_two", 100_003),
    ("large_2e20_plus_3", (1 << 20) + 3),
];

fn vector_add_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in vector_add::Variant::ALL {
        for (case, n) in CASES {
            let name = format!("vector_add::{}::{case}", variant.kernel_name());
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rng = StdRng::seed_from_u64(seed);
                let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
                let y: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
                let got = vector_add::run(&gpu, variant, &x, &y).map_err(|e| e.to_string())?;
                verify::exact(&got, &vector_add::reference(&x, &y))
                    .map_err(|m| format!("{} n={n} seed={seed}: {m}", variant.kernel_name()).into())
            }));
        }
    }
    trials
}

fn smoke_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in smoke::Variant::ALL {
        for (case, n) in CASES {
            let name = format!("smoke::{}::{case}", variant.kernel_name());
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let outcome = smoke::check(&gpu, variant, n, seed).map_err(|e| e.to_string())?;
                outcome
                    .result
                    .map_err(|m| format!("{} n={n} seed={seed}: {m}", variant.kernel_name()).into())
            }));
        }
    }
    trials
}

/// The shapes: single element, one row, odd sizes around a tile, non-square, large.
const SHAPES: [(usize, usize); 8] = [
    (1, 1),
    (1, 8193),
    (8193, 1),
    (31, 33),
    (1023, 517),
    (4096, 4096),
    (8192, 8192),
    (8191, 8193),
];

fn transpose_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in transpose::Variant::ALL {
        for (rows, cols) in SHAPES {
            let name = format!("transpose::{}::{rows}x{cols}", variant.kernel_name());
            let seed = seed_for(&name);
            let trial = gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rng = StdRng::seed_from_u64(seed);
                let input: Vec<f32> = (0..rows * cols).map(|_| rng.random()).collect();
                let got =
                    transpose::run(&gpu, variant, &input, rows, cols).map_err(|e| e.to_string())?;
                let expected = if variant.transposes() {
                    transpose::reference(&input, rows, cols)
                } else {
                    input
                };
                verify::exact(&got, &expected).map_err(|m| {
                    format!("{} {rows}x{cols} seed={seed}: {m}", variant.kernel_name()).into()
                })
            });
            // The vec4 kernel refuses shapes that are not multiples of 4 (tested below).
            if variant.supports(rows, cols) {
                trials.push(trial);
            }
        }
    }
    trials
}

fn error_trials() -> Vec<Trial> {
    vec![
        gpu_trial("errors::vector_add_length_mismatch".into(), || {
            let gpu = gpu()?;
            expect_err(
                vector_add::run(&gpu, vector_add::Variant::VectorAdd, &[1.0; 10], &[1.0; 9]),
                |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "y",
                            expected: 10,
                            actual: 9,
                            ..
                        }
                    )
                },
            )
        }),
        gpu_trial("errors::vector_add_grid_does_not_cover".into(), || {
            let gpu = gpu()?;
            let (x, y) = (
                gpu.upload(&[1.0f32; 2000]).unwrap(),
                gpu.upload(&[1.0f32; 2000]).unwrap(),
            );
            let mut z = gpu.zeros::<f32>(2000).unwrap();
            let cfg = cpu::launch::linear(8, 128, 0);
            expect_err(
                vector_add::add_with_config(
                    &gpu,
                    vector_add::Variant::VectorAdd,
                    &x,
                    &y,
                    &mut z,
                    cfg,
                ),
                |e| matches!(e, Error::LaunchShape { .. }),
            )
        }),
        gpu_trial("errors::dynamic_shared_block_too_large".into(), || {
            let gpu = gpu()?;
            expect_err(smoke::dynamic_shared_reverse(&gpu, &[1.0; 10], 2048), |e| {
                matches!(e, Error::InvalidBlock { block: 2048, .. })
            })
        }),
        gpu_trial("errors::warp_shuffle_partial_warp_block".into(), || {
            let gpu = gpu()?;
            expect_err(smoke::warp_shuffle(&gpu, &[1; 10], 48), |e| {
                matches!(e, Error::InvalidBlock { block: 48, .. })
            })
        }),
        gpu_trial(
            "errors::constant_polynomial_wrong_coefficient_count".into(),
            || {
                let gpu = gpu()?;
                expect_err(smoke::constant_polynomial(&gpu, &[1.0; 9], &[1.0]), |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "coefficients",
                            ..
                        }
                    )
                })
            },
        ),
        gpu_trial("errors::constant_symbol_too_small".into(), || {
            let gpu = gpu()?;
            let symbol = gpu::smoke::C_SMOKE_COEFFICIENTS::SYMBOL;
            let mut constants = gpu.constant_memory().map_err(|e| e.to_string())?;
            expect_err(constants.write(symbol, &[0.0f32; 9]), |e| {
                matches!(
                    e,
                    Error::ConstantTooLarge {
                        capacity: 32,
                        requested: 36,
                        ..
                    }
                )
            })
        }),
        gpu_trial("errors::transpose_vec4_needs_multiples_of_4".into(), || {
            let gpu = gpu()?;
            expect_err(
                transpose::run(
                    &gpu,
                    transpose::Variant::TransposeTiledVec4,
                    &[0.0; 31 * 33],
                    31,
                    33,
                ),
                |e| {
                    matches!(
                        e,
                        Error::UnsupportedShape {
                            rows: 31,
                            cols: 33,
                            ..
                        }
                    )
                },
            )
        }),
        gpu_trial("errors::transpose_shape_mismatch".into(), || {
            let gpu = gpu()?;
            expect_err(
                transpose::run(
                    &gpu,
                    transpose::Variant::TransposeSharedPadded,
                    &[0.0; 10],
                    3,
                    4,
                ),
                |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "input",
                            expected: 12,
                            actual: 10,
                            ..
                        }
                    )
                },
            )
        }),
        gpu_trial("errors::transpose_grid_y_limit".into(), || {
            let gpu = gpu()?;
            let input = gpu.zeros::<f32>(1 << 22).map_err(|e| e.to_string())?;
            let mut output = gpu.zeros::<f32>(1 << 22).map_err(|e| e.to_string())?;
            // 4M rows x 1 column: 131072 blocks of 32 rows along y, over the 65535 limit.
            expect_err(
                transpose::transpose_with(
                    &gpu,
                    transpose::Variant::TransposeNaiveRow,
                    &input,
                    &mut output,
                    1 << 22,
                    1,
                ),
                |e| {
                    matches!(
                        e,
                        Error::GridTooLarge {
                            axis: "y",
                            blocks: 131_072,
                            ..
                        }
                    )
                },
            )
        }),
        gpu_trial("errors::device_out_of_range".into(), || {
            expect_err(cpu::Gpu::new(1 << 20), |e| {
                matches!(e, Error::DeviceOutOfRange { .. })
            })
        }),
    ]
}

fn main() {
    // SAFETY: the first statement of main: no other thread exists yet to touch the environment.
    unsafe { cpu::multi_gpu::keep_nvls_off() };
    let args = Arguments::from_args();
    let mut trials = vector_add_trials();
    trials.extend(smoke_trials());
    trials.extend(transpose_trials());
    trials.extend(module_trials());
    trials.extend(error_trials());
    if !lab_tests::gpu_available() {
        eprintln!("no CUDA device could be opened: the GPU tests are reported as ignored");
    } else {
        eprintln!(
            "GPU tests: base seed {} (replay with GPU_LAB_SEED)",
            base_seed()
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
