//! GPU tests of the convolution kernels: every 1D and 2D kernel against the `f64` CPU
//! reference (relative error under 1e-5 of `sum |M N|` per output) on seeded random inputs,
//! for every mask width class and the named lengths and shapes; and the launchers' refusals.

use cpu::Error;
use cpu::convolution::{
    self, Factors, MAX_MASK_WIDTH, MAX_MASK_WIDTH_2D, MAX_MASK_WIDTH_2D_VEC4, Mask2d, Variant1d, Variant2d,
};
use gpu::convolution::{BLOCK_1D, VEC4_TILE_1D};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::Trial;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The 1D mask widths, and 9 and 17: the widest masks whose vec4 window spans one and
/// two neighbouring `float4` groups a side.
const WIDTHS_1D: [usize; 7] = [1, 3, 5, 7, 9, 17, MAX_MASK_WIDTH];
/// The 2D mask widths (`w x w`) of the first kernels.
const WIDTHS_2D: [usize; 5] = [1, 3, 5, 7, MAX_MASK_WIDTH_2D_VEC4];

/// Shapes of the wide and separable trials: a pixel, smaller than the widest mask, not
/// multiples of any tile (rows of 300 floats: `float4` rows; 1023 and 999: scalar loads), and
/// more rows than one segment of the fused kernels.
const WIDE_SHAPES: [(usize, usize); 5] = [(1, 1), (17, 33), (203, 300), (517, 1023), (1000, 999)];

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
        if variant.needs_separable_mask() {
            continue;
        }
        for w in WIDTHS_2D.into_iter().filter(|&w| variant.supports_width(w)) {
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

/// Dense masks from 11 x 11: the wide kernels at every width on every shape (and one
/// 2048 x 2048), the seed kernels at 11, 21 and 31 on the smaller shapes. Checked within the
/// `f32` bound of `w^2` terms.
fn trials_2d_wide() -> Vec<Trial> {
    let mut cases = Vec::new();
    for w in (11..=MAX_MASK_WIDTH_2D).step_by(2) {
        for shape in WIDE_SHAPES {
            cases.push((Variant2d::Convolution2dWide, w, shape));
        }
    }
    cases.push((Variant2d::Convolution2dWide, 13, (2048, 2048)));
    for variant in [
        Variant2d::Convolution2dBasic,
        Variant2d::Convolution2dConstantMask,
        Variant2d::Convolution2dTiledHalo,
    ] {
        for w in [11, 21, MAX_MASK_WIDTH_2D] {
            for shape in &WIDE_SHAPES[..4] {
                cases.push((variant, w, *shape));
            }
        }
    }
    cases
        .into_iter()
        .map(|(variant, w, (rows, cols))| {
            let name = format!(
                "convolution::{}::w{w}::{rows}x{cols}",
                variant.kernel_name()
            );
            let seed = seed_for(&name);
            gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rng = StdRng::seed_from_u64(seed);
                let mask = randoms(&mut rng, w * w);
                let input = randoms(&mut rng, rows * cols);
                let got = convolution::run_2d(&gpu, variant, &input, rows, cols, &mask, w)
                    .map_err(|e| e.to_string())?;
                let reference = convolution::reference_2d(&input, rows, cols, &mask, w);
                convolution::compare_within(&got, &reference, w * w)
                    .result
                    .map_err(|m| {
                        format!("{} w={w} {rows}x{cols} seed={seed}: {m}", variant.entry(w)).into()
                    })
            })
        })
        .collect()
}

/// Separable masks (random factors): both separable variants at every width they take, on
/// every shape, one 2048 x 2048 each; checked against the two-pass `f64` reference within
/// the `f32` bound of `2w` terms.
fn trials_2d_separable() -> Vec<Trial> {
    let mut cases = Vec::new();
    for variant in [
        Variant2d::Convolution2dSeparableFused,
        Variant2d::Convolution2dSeparableTwoPass,
    ] {
        for w in variant.widths() {
            for shape in WIDE_SHAPES {
                cases.push((variant, w, shape));
            }
        }
        cases.push((variant, MAX_MASK_WIDTH_2D, (2048, 2048)));
    }
    cases
        .into_iter()
        .map(|(variant, w, (rows, cols))| {
            let name = format!(
                "convolution::{}::w{w}::{rows}x{cols}",
                variant.kernel_name()
            );
            let seed = seed_for(&name);
            gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rng = StdRng::seed_from_u64(seed);
                let row = randoms(&mut rng, w);
                let col = randoms(&mut rng, w);
                let input = randoms(&mut rng, rows * cols);
                let factors = Factors { x: &row, y: &col };
                let mask = Mask2d::separable(&gpu, factors).map_err(|e| e.to_string())?;
                let got = convolution::run_2d_mask(&gpu, variant, &input, rows, cols, &mask)
                    .map_err(|e| e.to_string())?;
                let reference = convolution::reference_2d_separable(&input, rows, cols, &row, &col);
                convolution::compare_within(&got, &reference, 2 * w)
                    .result
                    .map_err(|m| {
                        format!("{} w={w} {rows}x{cols} seed={seed}: {m}", variant.entry(w)).into()
                    })
            })
        })
        .collect()
}

/// `conv2d` (the automatic choice) on 517 x 1023 and 203 x 300 (and 2048 x 2051 for masks up
/// to 9 x 9) against the dense `f64` reference of the mask's values, within `2w + 8` terms for
/// the separable kernels (the values are the `f32` products of the factors, or within `8 eps`
/// of the detected ones), `w^2` for the dense ones; `expected` is the choice on large images
/// (a narrow separable mask takes the vec4 tile below 2^22 elements).
fn check_conv2d(
    gpu: &cpu::Gpu,
    mask: &Mask2d,
    expected: Variant2d,
    seed: u64,
) -> Result<(), libtest_mimic::Failed> {
    let w = mask.width();
    // A narrow separable mask takes the fused kernel only from 2^22 elements: 2048 x 2051
    // checks that side (narrow masks only: the dense reference is `w^2` per output).
    let narrow = w <= convolution::MAX_MASK_WIDTH_2D_VEC4;
    let large = [(2048, 2051)];
    let shapes = [(517, 1023), (203, 300)]
        .into_iter()
        .chain(large.into_iter().filter(|_| narrow));
    for (rows, cols) in shapes {
        let mut rng = StdRng::seed_from_u64(seed ^ rows as u64);
        let input = randoms(&mut rng, rows * cols);
        let expected = if expected == Variant2d::Convolution2dSeparableFused
            && narrow
            && rows * cols < convolution::SEPARABLE_NARROW_MIN_ELEMENTS
        {
            Variant2d::Convolution2dTiledVec4
        } else {
            expected
        };
        let chosen = Variant2d::choose(mask, rows, cols, true);
        if chosen != expected {
            return Err(format!("conv2d chose {chosen:?}, expected {expected:?}").into());
        }
        let d_in = gpu.upload(&input).map_err(|e| e.to_string())?;
        let mut d_out = gpu
            .poisoned(rows * cols, f32::NAN)
            .map_err(|e| e.to_string())?;
        convolution::conv2d(gpu, &d_in, mask, &mut d_out, rows, cols).map_err(|e| e.to_string())?;
        let got = gpu.download(&d_out, "conv2d").map_err(|e| e.to_string())?;
        let reference = convolution::reference_2d(&input, rows, cols, mask.values(), w);
        let terms = if expected.needs_separable_mask() {
            2 * w + 8
        } else {
            w * w
        };
        convolution::compare_within(&got, &reference, terms)
            .result
            .map_err(|m| format!("w={w} {rows}x{cols} seed={seed}: {m}"))?;
    }
    Ok(())
}

/// Gaussian and box masks, and the rank-1 detection, through `conv2d`.
fn trials_2d_named_masks() -> Vec<Trial> {
    let mut trials = Vec::new();
    for sigma in [0.3f32, 1.0, 2.5, 5.1] {
        let name = format!("convolution::conv2d::gaussian_sigma_{sigma}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let mask = Mask2d::gaussian(&gpu, sigma, 3.0).map_err(|e| e.to_string())?;
            let Factors { x: row, y: col } = mask.factors().ok_or("a Gaussian is separable")?;
            let sum: f32 = row.iter().sum();
            if row != col || (sum - 1.0).abs() > 1e-6 {
                return Err(format!("factors {row:?} / {col:?} (sum {sum})").into());
            }
            let expected = if mask.width() >= 3 {
                Variant2d::Convolution2dSeparableFused
            } else {
                Variant2d::Convolution2dTiledVec4
            };
            check_conv2d(&gpu, &mask, expected, seed)
        }));
    }
    for w in [1, 3, 15, MAX_MASK_WIDTH_2D] {
        let name = format!("convolution::conv2d::box_w{w}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let mask = Mask2d::box_filter(&gpu, w).map_err(|e| e.to_string())?;
            let expected = if w >= 3 {
                Variant2d::Convolution2dSeparableFused
            } else {
                Variant2d::Convolution2dTiledVec4
            };
            check_conv2d(&gpu, &mask, expected, seed)
        }));
    }
    for w in [5, 13, MAX_MASK_WIDTH_2D] {
        let name = format!("convolution::conv2d::rank1_detection_w{w}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let mut rng = StdRng::seed_from_u64(seed);
            let row = randoms(&mut rng, w);
            let col = randoms(&mut rng, w);
            let outer: Vec<f32> = col
                .iter()
                .flat_map(|&c| row.iter().map(move |&r| c * r))
                .collect();
            let mask = Mask2d::new(&gpu, &outer, w).map_err(|e| e.to_string())?;
            if !mask.is_separable() {
                return Err("an outer product was not detected as separable".into());
            }
            check_conv2d(&gpu, &mask, Variant2d::Convolution2dSeparableFused, seed)?;
            let dense = if w <= MAX_MASK_WIDTH_2D_VEC4 {
                Variant2d::Convolution2dTiledVec4
            } else {
                Variant2d::Convolution2dWide
            };
            // The same values through `Mask2d::dense`: no factors, the dense path.
            let mask = Mask2d::dense(&gpu, &outer, w).map_err(|e| e.to_string())?;
            if mask.is_separable() || mask.factors().is_some() {
                return Err("Mask2d::dense kept factors".into());
            }
            check_conv2d(&gpu, &mask, dense, seed)?;
            // One entry off by 1e-3 relative: dense.
            let mut perturbed = outer.clone();
            perturbed[w * w / 2 + 1] *= 1.001;
            let mask = Mask2d::new(&gpu, &perturbed, w).map_err(|e| e.to_string())?;
            if mask.is_separable() {
                return Err("a perturbed outer product was taken as separable".into());
            }
            check_conv2d(&gpu, &mask, dense, seed)
        }));
    }
    trials
}

/// The wide and separable refusals.
fn error_trials_wide() -> Vec<Trial> {
    fn on_gpu(
        name: &str,
        test: impl FnOnce(&cpu::Gpu) -> Result<(), libtest_mimic::Failed> + Send + 'static,
    ) -> Trial {
        gpu_trial(
            format!("convolution::errors::{name}"),
            move || test(&gpu()?),
        )
    }
    let image = || vec![1.0f32; 100];
    let mut trials = vec![
        on_gpu("separable_width_33", |gpu| {
            expect_err(Mask2d::separable(gpu, Factors { x: &[1.0; 33], y: &[1.0; 33] }), |e| {
                matches!(
                    e,
                    Error::MaskWidth {
                        dims: 2,
                        width: 33,
                        max: 31, ..
                    }
                )
            })
        }),
        on_gpu("dense_width_33", |gpu| {
            expect_err(Mask2d::new(gpu, &[1.0; 33 * 33], 33), |e| {
                matches!(
                    e,
                    Error::MaskWidth {
                        dims: 2,
                        width: 33,
                        max: 31, ..
                    }
                )
            })
        }),
        on_gpu("box_width_33", |gpu| {
            expect_err(Mask2d::box_filter(gpu, 33), |e| {
                matches!(e, Error::MaskWidth { width: 33, .. })
            })
        }),
        on_gpu("separable_even_width", |gpu| {
            expect_err(Mask2d::separable(gpu, Factors { x: &[1.0; 4], y: &[1.0; 4] }), |e| {
                matches!(e, Error::MaskWidth { width: 4, .. })
            })
        }),
        on_gpu("box_even_width", |gpu| {
            expect_err(Mask2d::box_filter(gpu, 0), |e| {
                matches!(e, Error::MaskWidth { width: 0, .. })
            })
        }),
        on_gpu("separable_factor_lengths", |gpu| {
            expect_err(Mask2d::separable(gpu, Factors { x: &[1.0; 5], y: &[1.0; 3] }), |e| {
                matches!(
                    e,
                    Error::LengthMismatch {
                        what: "mask factor y",
                        expected: 5,
                        actual: 3, ..
                    }
                )
            })
        }),
        on_gpu("gaussian_too_wide", |gpu| {
            expect_err(Mask2d::gaussian(gpu, 5.2, 3.0), |e| {
                matches!(
                    e,
                    Error::MaskWidth {
                        width: 33,
                        max: 31,
                        ..
                    }
                )
            })
        }),
        on_gpu("vec4_width_11", move |gpu| {
            expect_err(
                convolution::run_2d(
                    gpu,
                    Variant2d::Convolution2dTiledVec4,
                    &image(),
                    10,
                    10,
                    &[1.0; 121],
                    11,
                ),
                |e| {
                    matches!(
                        e,
                        Error::MaskWidth {
                            width: 11,
                            max: 9,
                            ..
                        }
                    )
                },
            )
        }),
        on_gpu("wide_width_9", move |gpu| {
            expect_err(
                convolution::run_2d(
                    gpu,
                    Variant2d::Convolution2dWide,
                    &image(),
                    10,
                    10,
                    &[1.0; 81],
                    9,
                ),
                |e| {
                    matches!(
                        e,
                        Error::MaskWidth {
                            width: 9,
                            max: 31,
                            ..
                        }
                    )
                },
            )
        }),
        on_gpu("separable_factors_by_axis", |gpu| {
            // Sobel x: the difference along x (a row), the smoothing along y.
            let factors = Factors {
                x: &[-1.0, 0.0, 1.0],
                y: &[1.0, 2.0, 1.0],
            };
            let mask = Mask2d::separable(gpu, factors).map_err(|e| e.to_string())?;
            let sobel_x = [-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0];
            if mask.values() != sobel_x || mask.factors() != Some(factors) {
                return Err(format!("{:?} / {:?}", mask.values(), mask.factors()).into());
            }
            Ok(())
        }),
        on_gpu("wide_width_5_names_its_range", move |gpu| {
            let mask = Mask2d::dense(gpu, &[1.0; 25], 5).map_err(|e| e.to_string())?;
            let e = convolution::run_2d_mask(
                gpu,
                Variant2d::Convolution2dWide,
                &image(),
                10,
                10,
                &mask,
            )
            .err()
            .ok_or("the wide kernel took a 5 x 5 mask")?;
            let says = e.to_string();
            let named = matches!(
                e,
                Error::MaskWidth {
                    dims: 2,
                    width: 5,
                    kernels: "convolution_2d_wide",
                    min: 11,
                    max: 31,
                    ..
                }
            ) && says.contains("11..=31");
            if !named {
                return Err(format!("{e:?}: {says}").into());
            }
            Ok(())
        }),
        on_gpu("fused_width_1", move |gpu| {
            let factors = Factors { x: &[2.0], y: &[3.0] };
            let mask = Mask2d::separable(gpu, factors).map_err(|e| e.to_string())?;
            expect_err(
                convolution::run_2d_mask(
                    gpu,
                    Variant2d::Convolution2dSeparableFused,
                    &image(),
                    10,
                    10,
                    &mask,
                ),
                |e| matches!(e, Error::MaskWidth { width: 1, .. }),
            )
        }),
    ];
    for sigma in [0.0f32, -1.0, f32::NAN, f32::INFINITY] {
        trials.push(on_gpu(&format!("gaussian_sigma_{sigma}"), move |gpu| {
            expect_err(Mask2d::gaussian(gpu, sigma, 3.0), |e| {
                matches!(
                    e,
                    Error::Unsupported {
                        what: "gaussian sigma",
                        ..
                    }
                )
            })
        }));
    }
    for variant in [
        Variant2d::Convolution2dSeparableFused,
        Variant2d::Convolution2dSeparableTwoPass,
    ] {
        trials.push(on_gpu(
            &format!("dense_mask_to_{}", variant.kernel_name()),
            move |gpu| {
                // A Laplacian: not an outer product.
                let laplacian = [0.0, 1.0, 0.0, 1.0, -4.0, 1.0, 0.0, 1.0, 0.0];
                expect_err(
                    convolution::run_2d(gpu, variant, &image(), 10, 10, &laplacian, 3),
                    |e| matches!(e, Error::Unsupported { what: "mask", .. }),
                )
            },
        ));
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
                            actual: 8, ..
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
                            actual: 100, ..
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
                            convolution: 2, ..
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
    trials.extend(trials_2d_wide());
    trials.extend(trials_2d_separable());
    trials.extend(trials_2d_named_masks());
    trials.extend(error_trials());
    trials.extend(error_trials_wide());
    trials
}
