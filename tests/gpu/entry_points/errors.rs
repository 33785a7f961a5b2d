//! The entry points' refusals: every argument checked before any device work, each with its
//! typed error carrying the offending values.

use super::*;

/// `(input, output)` device buffers of `n` floats for the refusals: random input, poisoned
/// output.
pub(super) fn buffers(gpu: &Gpu, n: usize) -> Result<(CudaSlice<f32>, CudaSlice<f32>), Failed> {
    let host = randoms(&mut StdRng::seed_from_u64(n as u64), n);
    Ok((
        gpu.upload(&host).map_err(fail)?,
        gpu.poisoned(n, POISON).map_err(fail)?,
    ))
}

/// Passes if `result` is the error `matches` expects and `output` still holds only poison.
pub(super) fn refused<T: std::fmt::Debug>(
    gpu: &Gpu,
    result: cpu::Result<T>,
    matches: impl Fn(&Error) -> bool,
    output: &CudaSlice<f32>,
) -> Result<(), Failed> {
    expect_err(result, matches)?;
    let got = gpu.download(output, "nothing").map_err(fail)?;
    untouched(&got, 0..0)
}

pub(super) fn error_trials() -> Vec<Trial> {
    let misaligned = |what: &'static str| {
        move |e: &Error| {
            matches!(e, Error::Misaligned { what: w, alignment: 16, address, .. }
                if *w == what && address % 16 != 0)
        }
    };
    let mut trials = vec![
        gpu_trial("entry_points::errors::mask_width_even_1d".into(), || {
            let gpu = gpu()?;
            expect_err(Mask1d::new(&gpu, &[1.0; 4]), |e| {
                matches!(
                    e,
                    Error::MaskWidth {
                        dims: 1,
                        width: 4,
                        max: 31, ..
                    }
                )
            })
        }),
        gpu_trial("entry_points::errors::mask_width_even_2d".into(), || {
            let gpu = gpu()?;
            expect_err(Mask2d::new(&gpu, &[1.0; 16], 4), |e| {
                matches!(
                    e,
                    Error::MaskWidth {
                        dims: 2,
                        width: 4,
                        max: convolution::MAX_MASK_WIDTH_2D, ..
                    }
                )
            })
        }),
        gpu_trial(
            "entry_points::errors::launch_config_width_without_kernel".into(),
            || {
                let gpu = gpu()?;
                for (variant, width, max) in [
                    (Variant2d::Convolution2dTiledVec4, 11, convolution::MAX_MASK_WIDTH_2D_VEC4),
                    (Variant2d::Convolution2dWide, 9, convolution::MAX_MASK_WIDTH_2D),
                    (Variant2d::Convolution2dSeparableFused, 1, convolution::MAX_MASK_WIDTH_2D),
                    (Variant2d::Convolution2dBasic, 4, convolution::MAX_MASK_WIDTH_2D),
                    (Variant2d::Convolution2dConstantMask, 33, convolution::MAX_MASK_WIDTH_2D),
                ] {
                    expect_err(variant.launch_config(&gpu, 64, 64, width), |e| {
                        matches!(e, Error::MaskWidth { dims: 2, width: w, max: m, .. } if *w == width && *m == max)
                    })
                    .map_err(|e| format!("{variant:?} at width {width}: {e:?}"))?;
                }
                for variant in Variant1d::ALL {
                    for width in [0, 4, convolution::MAX_MASK_WIDTH + 2] {
                        expect_err(variant.launch_config(&gpu, 64, width), |e| {
                            matches!(e, Error::MaskWidth { dims: 1, width: w, .. } if *w == width)
                        })
                        .map_err(|e| format!("{variant:?} at width {width}: {e:?}"))?;
                    }
                }
                Ok(())
            },
        ),
        gpu_trial(
            "entry_points::errors::mask_width_even_conv1d_values".into(),
            || {
                let gpu = gpu()?;
                let (input, mut output) = buffers(&gpu, 100)?;
                let result = convolution::conv1d_values(&gpu, &input, &[1.0; 2], &mut output);
                refused(
                    &gpu,
                    result,
                    |e| {
                        matches!(
                            e,
                            Error::MaskWidth {
                                width: 2,
                                max: 31,
                                ..
                            }
                        )
                    },
                    &output,
                )
            },
        ),
        gpu_trial("entry_points::errors::mask_1d_in_conv2d".into(), || {
            let gpu = gpu()?;
            let (input, mut output) = buffers(&gpu, 100)?;
            let result = convolution::conv2d_values(&gpu, &input, &[1.0; 5], &mut output, 10, 10);
            refused(
                &gpu,
                result,
                |e| {
                    matches!(
                        e,
                        Error::MaskDimensions {
                            mask: 1,
                            convolution: 2, ..
                        }
                    )
                },
                &output,
            )
        }),
    ];
    trials.push(gpu_trial(
        "entry_points::errors::misaligned_conv1d_with_vec4".into(),
        move || {
            let gpu = gpu()?;
            let (input, mut output) = buffers(&gpu, 101)?;
            let mask = Mask1d::new(&gpu, &[1.0; 3]).map_err(fail)?;
            let v = Variant1d::Convolution1dTiledVec4;
            let result = convolution::conv1d_with(
                &gpu,
                v,
                &input.slice(1..),
                &mask,
                &mut output.slice_mut(..100),
            );
            refused(&gpu, result, misaligned("input"), &output)?;
            let result = convolution::conv1d_with(
                &gpu,
                v,
                &input.slice(..100),
                &mask,
                &mut output.slice_mut(1..),
            );
            refused(&gpu, result, misaligned("output"), &output)
        },
    ));
    trials.push(gpu_trial(
        "entry_points::errors::misaligned_conv2d_with_vec4".into(),
        move || {
            let gpu = gpu()?;
            let (input, mut output) = buffers(&gpu, 8 * 12 + 2)?;
            let mask = Mask2d::new(&gpu, &[1.0; 9], 3).map_err(fail)?;
            let result = convolution::conv2d_with(
                &gpu,
                Variant2d::Convolution2dTiledVec4,
                &input.slice(2..),
                &mask,
                &mut output.slice_mut(..96),
                8,
                12,
            );
            refused(&gpu, result, misaligned("input"), &output)
        },
    ));
    trials.push(gpu_trial(
        "entry_points::errors::misaligned_transpose_with_vec4".into(),
        move || {
            let gpu = gpu()?;
            let (input, mut output) = buffers(&gpu, 8 * 12 + 3)?;
            let result = transpose::transpose_with(
                &gpu,
                transpose::Variant::TransposeTiledVec4,
                &input.slice(..96),
                &mut output.slice_mut(3..),
                8,
                12,
            );
            refused(&gpu, result, misaligned("output"), &output)
        },
    ));
    trials.push(gpu_trial(
        "entry_points::errors::unsupported_shape_transpose_with_vec4".into(),
        || {
            let gpu = gpu()?;
            let (input, mut output) = buffers(&gpu, 6 * 10)?;
            let result = transpose::transpose_with(
                &gpu,
                transpose::Variant::TransposeTiledVec4,
                &input,
                &mut output,
                6,
                10,
            );
            refused(
                &gpu,
                result,
                |e| {
                    matches!(
                        e,
                        Error::UnsupportedShape {
                            rows: 6,
                            cols: 10,
                            ..
                        }
                    )
                },
                &output,
            )
        },
    ));
    trials.push(gpu_trial(
        "entry_points::errors::misaligned_vector_add_with_vec4".into(),
        move || {
            let gpu = gpu()?;
            let (x, mut z) = buffers(&gpu, 101)?;
            let y = gpu.upload(&[1.0f32; 101]).map_err(fail)?;
            let v = vector_add::Variant::VectorAddVec4;
            let (xs, ys) = (x.slice(..100), y.slice(1..));
            let result = vector_add::add_with(&gpu, v, &xs, &ys, &mut z.slice_mut(..100));
            refused(&gpu, result, misaligned("y"), &z)?;
            let cfg = cpu::launch::linear(1, 128, 0);
            let (xs, ys) = (x.slice(..100), y.slice(..100));
            let result = vector_add::add_with_config(&gpu, v, &xs, &ys, &mut z.slice_mut(1..), cfg);
            refused(&gpu, result, misaligned("z"), &z)
        },
    ));
    trials.push(gpu_trial(
        "entry_points::errors::length_mismatch".into(),
        || {
            let gpu = gpu()?;
            let (input, mut output) = buffers(&gpu, 100)?;
            let mask = Mask1d::new(&gpu, &[1.0; 3]).map_err(fail)?;
            let mask2 = Mask2d::new(&gpu, &[1.0; 9], 3).map_err(fail)?;
            let result = convolution::conv1d(&gpu, &input, &mask, &mut output.slice_mut(..99));
            let lengths = |what: &'static str, expected: usize, actual: usize| {
                move |e: &Error| {
                    matches!(e, Error::LengthMismatch { what: w, expected: x, actual: a, .. }
                        if *w == what && *x == expected && *a == actual)
                }
            };
            refused(&gpu, result, lengths("output", 100, 99), &output)?;
            let result = convolution::conv2d(&gpu, &input, &mask2, &mut output, 9, 11);
            refused(&gpu, result, lengths("input", 99, 100), &output)?;
            let result = transpose::transpose(&gpu, &input.slice(..90), &mut output, 9, 10);
            refused(&gpu, result, lengths("output", 90, 100), &output)?;
            let result = vector_add::add(&gpu, &input, &input.slice(1..), &mut output);
            refused(&gpu, result, lengths("y", 100, 99), &output)
        },
    ));
    // Needs a second device: on a machine with fewer it is not listed (a trial that cannot run
    // must not pass), and this says so.
    if !Gpu::device_count().is_ok_and(|n| n >= 2) {
        eprintln!("entry_points::errors::mask_on_another_device: skipped, it needs two GPUs");
        return trials;
    }
    trials.push(gpu_trial(
        "entry_points::errors::mask_on_another_device".into(),
        || {
            let (gpu0, gpu1) = (Gpu::new(0).map_err(fail)?, Gpu::new(1).map_err(fail)?);
            let (input, mut output) = buffers(&gpu0, 100)?;
            let mask = Mask1d::new(&gpu1, &[1.0; 3]).map_err(fail)?;
            let result = convolution::conv1d(&gpu0, &input, &mask, &mut output);
            refused(
                &gpu0,
                result,
                |e| {
                    matches!(
                        e,
                        Error::WrongContext {
                            what: "mask",
                            expected: 0,
                            actual: 1,
                            ..
                        }
                    )
                },
                &output,
            )
        },
    ));
    trials
}
