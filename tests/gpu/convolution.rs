//! GPU tests of the convolution kernels: every 1D and 2D kernel against the `f64` CPU
//! reference (relative error under 1e-5 of `sum |M N|` per output) on seeded random inputs,
//! for every mask width class and the named lengths and shapes; and the launchers' refusals.

use cpu::Error;
use cpu::convolution::{self, MAX_MASK_WIDTH, MAX_MASK_WIDTH_2D, Variant1d, Variant2d};
use gpu::convolution::{BLOCK_1D, VEC4_TILE_1D};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::Trial;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The 1D mask widths, and 9 and 17: the widest masks whose vec4 window spans one and
/// two neighbouring `float4` groups a side.
const WIDTHS_1D: [usize; 7] = [1, 3, 5, 7, 9, 17, MAX_MASK_WIDTH];
/// The 2D mask widths (`w x w`).
const WIDTHS_2D: [usize; 5] = [1, 3, 5, 7, MAX_MASK_WIDTH_2D];

/// Named 1D lengths for a mask of width `w` (zero-length cases are the refusals below).
fn lengths(w: usize) -> Vec<(String, usize)> {
    let block = BLOCK_1D as usize;
    let mut cases = vec![
        ("one".to_string(), 1),
        ("two".to_string(), 2),
        ("block_minus_1".to_string(), block - 1),
        ("block_plus_1".to_string(), block + 1),
        ("vec4_tile_plus_3".to_string(), VEC4_TILE_1D + 3),
        ("large_2e20_plus_3".to_string(), (1 << 20) + 3),
    ];
    if w > 1 {
        cases.push(("mask_minus_1".to_string(), w - 1));
    }
    cases
}

/// Named 2D shapes `(rows, cols)`: single pixel, a row, a column, smaller than the mask,
/// not multiples of any tile, non-square both ways, one exact vec4 tile, and rows of a
/// multiple of 4 floats but not of the 64-column tile (300 x 516, 516 x 300), whose inner
/// tiles take the vec4 kernel's interior paths (unchecked `float4` loads and stores) and
/// whose edge tiles its checked ones.
const SHAPES: [(usize, usize); 10] = [
    (1, 1),
    (1, 37),
    (37, 1),
    (2, 3),
    (33, 65),
    (1023, 517),
    (517, 1023),
    (64, 64),
    (300, 516),
    (516, 300),
];

fn randoms(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

fn trials_1d() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in Variant1d::ALL {
        for w in WIDTHS_1D {
            for (case, n) in lengths(w) {
                let name = format!("convolution::{}::w{w}::{case}", variant.kernel_name());
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let mut rng = StdRng::seed_from_u64(seed);
                    let mask = randoms(&mut rng, w);
                    let input = randoms(&mut rng, n);
                    let got = convolution::run_1d(&gpu, variant, &input, &mask)
                        .map_err(|e| e.to_string())?;
                    convolution::compare(&got, &convolution::reference_1d(&input, &mask))
                        .result
                        .map_err(|m| {
                            format!("{} w={w} n={n} seed={seed}: {m}", variant.entry(w)).into()
                        })
                }));
            }
        }
    }
    trials
}

fn trials_2d() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in Variant2d::ALL {
        for w in WIDTHS_2D {
            for (rows, cols) in SHAPES {
                let name = format!(
                    "convolution::{}::w{w}::{rows}x{cols}",
                    variant.kernel_name()
                );
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let mut rng = StdRng::seed_from_u64(seed);
                    let mask = randoms(&mut rng, w * w);
                    let input = randoms(&mut rng, rows * cols);
                    let got = convolution::run_2d(&gpu, variant, &input, rows, cols, &mask, w)
                        .map_err(|e| e.to_string())?;
                    let reference = convolution::reference_2d(&input, rows, cols, &mask, w);
                    convolution::compare(&got, &reference).result.map_err(|m| {
                        format!("{} w={w} {rows}x{cols} seed={seed}: {m}", variant.entry(w)).into()
                    })
                }));
            }
        }
    }
    trials
}

fn is_mask_error(e: &Error) -> bool {
    matches!(e, Error::MaskWidth { .. })
}

fn error_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for w in [0, 2, 4, MAX_MASK_WIDTH + 2] {
        trials.push(gpu_trial(
            format!("convolution::errors::mask_width_{w}_1d"),
            move || {
                let gpu = gpu()?;
                expect_err(
                    convolution::run_1d(
                        &gpu,
                        Variant1d::Convolution1dTiledVec4,
                        &[1.0; 100],
                        &vec![1.0; w],
                    ),
                    is_mask_error,
                )
            },
        ));
    }
    for w in [0, 2, MAX_MASK_WIDTH_2D + 2] {
        trials.push(gpu_trial(
            format!("convolution::errors::mask_width_{w}_2d"),
            move || {
                let gpu = gpu()?;
                expect_err(
                    convolution::run_2d(
                        &gpu,
                        Variant2d::Convolution2dTiledVec4,
                        &[1.0; 100],
                        10,
                        10,
                        &vec![1.0; w * w],
                        w,
                    ),
                    is_mask_error,
                )
            },
        ));
    }
    trials.push(gpu_trial(
        "convolution::errors::mask_not_square_2d".into(),
        || {
            let gpu = gpu()?;
            expect_err(
                convolution::run_2d(
                    &gpu,
                    Variant2d::Convolution2dBasic,
                    &[1.0; 100],
                    10,
                    10,
                    &[1.0; 8],
                    3,
                ),
                |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "mask",
                            expected: 9,
                            actual: 8
                        }
                    )
                },
            )
        },
    ));
    trials.push(gpu_trial(
        "convolution::empty_input_1d_is_empty_output".into(),
        || {
            let gpu = gpu()?;
            let got = convolution::run_1d(&gpu, Variant1d::Convolution1dBasic, &[], &[1.0; 3])
                .map_err(|e| e.to_string())?;
            if got.is_empty() {
                Ok(())
            } else {
                Err(format!("{} outputs for an empty input", got.len()).into())
            }
        },
    ));
    trials.push(gpu_trial(
        "convolution::empty_image_2d_is_empty_output".into(),
        || {
            let gpu = gpu()?;
            let got = convolution::run_2d(
                &gpu,
                Variant2d::Convolution2dTiledHalo,
                &[],
                0,
                7,
                &[1.0; 9],
                3,
            )
            .map_err(|e| e.to_string())?;
            if got.is_empty() {
                Ok(())
            } else {
                Err(format!("{} outputs for an empty image", got.len()).into())
            }
        },
    ));
    trials.push(gpu_trial(
        "convolution::errors::image_shape_mismatch".into(),
        || {
            let gpu = gpu()?;
            expect_err(
                convolution::run_2d(
                    &gpu,
                    Variant2d::Convolution2dTiledVec4,
                    &[1.0; 100],
                    9,
                    10,
                    &[1.0; 9],
                    3,
                ),
                |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "input",
                            expected: 90,
                            actual: 100
                        }
                    )
                },
            )
        },
    ));
    trials.push(gpu_trial(
        "convolution::errors::mask_dimension_mismatch".into(),
        || {
            let gpu = gpu()?;
            let input = gpu.upload(&[1.0f32; 16]).map_err(|e| e.to_string())?;
            let mut output = gpu.zeros::<f32>(16).map_err(|e| e.to_string())?;
            // Three taps are a 1D mask: no square mask has 3 values.
            expect_err(
                convolution::conv2d_values(&gpu, &input, &[1.0; 3], &mut output, 4, 4),
                |e| {
                    matches!(
                        e,
                        Error::MaskDimensions {
                            mask: 1,
                            convolution: 2
                        }
                    )
                },
            )
        },
    ));
    trials
}

/// Every convolution trial.
pub fn trials() -> Vec<Trial> {
    let mut trials = trials_1d();
    trials.extend(trials_2d());
    trials.extend(error_trials());
    trials
}
