//! GPU trials of the reduction pattern: the seed's nine kernels, `reduce_sum` for `i32`, `f32`
//! and `f32` accumulated in `f64`, and the square sum's seven versions plus its one-launch
//! version, each against its CPU reference on fresh seeded random inputs.

use cpu::Error;
use cpu::reduce::{self, reference, seed, square_sum};
use lab_tests::{expect_err, fast_floats, gpu, gpu_trial, large_memory, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The lengths around a block of `block` threads.
fn lengths(block: usize) -> [(String, usize); 9] {
    [
        ("empty".into(), 0),
        ("one".into(), 1),
        ("31".into(), 31),
        ("32".into(), 32),
        ("33".into(), 33),
        (format!("block_minus_1_{}", block - 1), block - 1),
        (format!("block_plus_1_{}", block + 1), block + 1),
        ("2e20_plus_7".into(), (1 << 20) + 7),
        ("2e24".into(), 1 << 24),
    ]
}

fn random_i32(seed: u64, n: usize) -> Vec<i32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = vec![0i32; n];
    rng.fill(&mut v[..]);
    v
}

fn exact(kernel: &str, n: usize, seed: u64, got: i32, expected: i32) -> Result<(), Failed> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("{kernel} n={n} seed={seed}: got {got}, expected {expected}").into())
    }
}

fn seed_kernel_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let mut add = |variant: seed::Variant, block: u32, case: String, n: usize| {
        let kernel = variant.kernel_for(block).unwrap_or("?");
        let name = format!("reduce::{kernel}::block_{block}::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let input = random_i32(seed, n);
            let got = seed::run_seed(&gpu, variant, &input, block).map_err(|e| e.to_string())?;
            exact(kernel, n, seed, got, reference::sum_i32(&input))
        }));
    };
    for variant in seed::Variant::ALL {
        for (case, n) in lengths(gpu::reduce::SEED_BLOCK as usize) {
            add(variant, gpu::reduce::SEED_BLOCK, case, n);
        }
        // Other block sizes: the smallest each kernel takes, and the largest.
        for block in [variant.min_block().max(64), 128, 1024] {
            for (case, n) in [
                ("block_plus_1", block as usize + 1),
                ("2e20_plus_7", (1 << 20) + 7),
            ] {
                add(variant, block, case.into(), n);
            }
        }
    }
    // The one template instance the loop above does not reach.
    add(
        seed::Variant::CompleteUnroll,
        256,
        "2e20_plus_7".into(),
        (1 << 20) + 7,
    );
    trials
}

fn reduce_sum_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let block = gpu::reduce::REDUCE_SUM_BLOCK as usize;
    let mut cases: Vec<(String, usize)> = lengths(block).into();
    cases.push(("one_wave_plus_3".into(), 1056 * 256 * 16 + 3));
    // Tiles of 4 x 512 groups not a multiple of the one-wave grid (uneven shares), the last
    // tile partial, a tail of 2.
    cases.push((
        "uneven_shares".into(),
        2048 * 4 * (528 * 3 + 17) + 4 * 100 + 2,
    ));
    for (case, n) in cases {
        let name = format!("reduce::reduce_sum_i32::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let input = random_i32(seed, n);
            let got = gpu
                .upload(&input)
                .and_then(|d| reduce::sum::<reduce::SumI32>(&gpu, &d))
                .map_err(|e| e.to_string())?;
            exact("reduce_sum_i32", n, seed, got, reference::sum_i32(&input))
        }));
        let name = format!("reduce::reduce_sum_f32::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            check_float_sums(&gpu, &fast_floats(seed, n), seed)
        }));
    }
    trials.push(gpu_trial(
        "reduce::reduce_sum_f32::nan_and_infinities".into(),
        || {
            let gpu = gpu()?;
            let n = (1 << 20) + 7;
            let mut input = fast_floats(seed_for("nan_and_infinities"), n);
            input[n - 1] = f32::INFINITY;
            check_float_sums(&gpu, &input, 0)?;
            input[n / 2] = f32::NAN;
            check_float_sums(&gpu, &input, 0)?;
            input[n / 2] = f32::NEG_INFINITY;
            check_float_sums(&gpu, &input, 0)
        },
    ));
    // Beyond 2^31 elements: 32-bit indices would wrap (8.6 GB per array).
    let n = (1usize << 31) + 5;
    let name = "reduce::reduce_sum_i32::2e31_plus_5".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let _big = large_memory();
        let gpu = gpu()?;
        let input = random_i32(seed, n);
        let got = gpu
            .upload(&input)
            .and_then(|d| reduce::sum::<reduce::SumI32>(&gpu, &d))
            .map_err(|e| e.to_string())?;
        exact("reduce_sum_i32", n, seed, got, reference::sum_i32(&input))
    }));
    let name = "reduce::reduce_sum_f32::2e31_plus_5".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let _big = large_memory();
        let gpu = gpu()?;
        check_float_sums(&gpu, &fast_floats(seed, n), seed)
    }));
    trials
}

/// Runs `reduce_sum_f32` and `reduce_sum_f32_f64` on one upload of `input` and checks both
/// against the `f64` reference within their rounding bounds.
fn check_float_sums(gpu: &cpu::Gpu, input: &[f32], seed: u64) -> Result<(), Failed> {
    let n = input.len();
    let (expected, sum_abs) = reference::reference_f32(input);
    let d_input = gpu.upload(input).map_err(|e| e.to_string())?;
    let mut f32_sum = reduce::ReduceSum::<reduce::SumF32>::new(gpu).map_err(|e| e.to_string())?;
    let cfg = f32_sum.launch(gpu, &d_input).map_err(|e| e.to_string())?;
    let got = f32_sum.result(gpu).map_err(|e| e.to_string())?;
    let depth = reference::reduce_sum_depth(n, &cfg);
    let bound = reference::sum_error_bound(n, depth, f32::EPSILON as f64, sum_abs);
    reference::check_sum(got as f64, expected, bound)
        .map_err(|m| format!("reduce_sum_f32 n={n} seed={seed}: {m}"))?;
    let mut f64_sum =
        reduce::ReduceSum::<reduce::SumF32F64>::new(gpu).map_err(|e| e.to_string())?;
    let cfg = f64_sum.launch(gpu, &d_input).map_err(|e| e.to_string())?;
    let got = f64_sum.result(gpu).map_err(|e| e.to_string())?;
    let depth = reference::reduce_sum_depth(n, &cfg);
    let bound = reference::sum_error_bound(n, depth, f64::EPSILON, sum_abs);
    reference::check_sum(got, expected, bound)
        .map_err(|m| format!("reduce_sum_f32_f64 n={n} seed={seed}: {m}").into())
}

fn square_sum_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in square_sum::Variant::ALL {
        for (case, n) in lengths(gpu::reduce::square_sum::THREAD_NUM as usize) {
            let name = format!("square_sum::{}::{case}", variant.kernel_name());
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let input = random_i32(seed, n);
                let got = square_sum::run(&gpu, variant, &input).map_err(|e| e.to_string())?;
                exact(
                    variant.kernel_name(),
                    n,
                    seed,
                    got,
                    reference::square_sum_i32(&input),
                )
            }));
        }
    }
    trials
}

fn error_trials() -> Vec<Trial> {
    vec![
        gpu_trial("errors::reduce_block_not_power_of_two".into(), || {
            let gpu = gpu()?;
            expect_err(
                seed::run_seed(&gpu, seed::Variant::Interleaved, &[1; 100], 384),
                |e| matches!(e, Error::InvalidBlock { .. }),
            )
        }),
        gpu_trial("errors::reduce_last_warp_needs_64_threads".into(), || {
            let gpu = gpu()?;
            expect_err(
                seed::run_seed(&gpu, seed::Variant::UnrollWarps8, &[1; 100], 32),
                |e| matches!(e, Error::InvalidBlock { .. }),
            )
        }),
        gpu_trial("errors::reduce_restore_length_mismatch".into(), || {
            let gpu = gpu()?;
            let a = gpu.upload(&[1i32; 100]).map_err(|e| e.to_string())?;
            let b = gpu.upload(&[1i32; 99]).map_err(|e| e.to_string())?;
            let mut work = seed::SeedWork::new(&gpu, seed::Variant::Unroll2, &a, 64)
                .map_err(|e| e.to_string())?;
            expect_err(work.restore(&gpu, &b), |e| {
                matches!(
                    e,
                    Error::LengthMismatch {
                        expected: 100,
                        actual: 99,
                        ..
                    }
                )
            })
        }),
    ]
}

/// Every reduction and square-sum trial.
/// The entry points on the caller's memory: sub-slices at every offset (the kernel adds the
/// elements before the first 16-byte boundary one by one), a device scalar filled without a
/// host synchronisation, and a stream the caller made.
fn entry_point_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for offset in 0..5usize {
        for (case, n) in [
            ("one", 1usize),
            ("three", 3),
            ("33", 33),
            ("2e20_plus_7", (1 << 20) + 7),
        ] {
            let name = format!("reduce::entry::sum_of_a_view::offset_{offset}::{case}");
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let e = |e: cpu::Error| e.to_string();
                // The buffer holds poison around the view: a sum that strays past the view's
                // ends is caught by the exact comparison.
                let mut host = vec![i32::MIN / 3; offset + n + 7];
                let input = random_i32(seed, n);
                host[offset..offset + n].copy_from_slice(&input);
                let d = gpu.upload(&host).map_err(e)?;
                let view = d.slice(offset..offset + n);
                let got = reduce::sum::<reduce::SumI32>(&gpu, &view).map_err(e)?;
                exact("sum::<SumI32>", n, seed, got, reference::sum_i32(&input))?;
                let got = reduce::square_sum(&gpu, &view).map_err(e)?;
                exact(
                    "square_sum",
                    n,
                    seed,
                    got,
                    reference::square_sum_i32(&input),
                )?;
                let floats: Vec<f32> = host.iter().map(|&x| (x % 1000) as f32 * 0.25).collect();
                let d_floats = gpu.upload(&floats).map_err(e)?;
                let got = reduce::sum::<reduce::SumF32F64>(&gpu, &d_floats.slice(offset..offset + n))
                    .map_err(e)?;
                let expected: f64 = floats[offset..offset + n].iter().map(|&x| x as f64).sum();
                // Quarter-integers below 2^10 summed in f64: exact.
                if got != expected {
                    return Err(format!(
                        "sum::<SumF32F64> offset {offset} n={n} seed={seed}: got {got}, expected {expected}"
                    )
                    .into());
                }
                Ok(())
            }));
        }
    }
    trials.push(gpu_trial(
        "reduce::entry::sum_into_a_device_scalar_on_the_callers_stream".into(),
        || {
            let gpu0 = gpu()?;
            let e = |e: cpu::Error| e.to_string();
            let stream = gpu0
                .context()
                .new_stream()
                .map_err(|x| format!("new_stream: {x}"))?;
            let gpu = cpu::Gpu::from_stream(stream.clone()).map_err(e)?;
            let seed = seed_for("reduce::entry::sum_into");
            let input = random_i32(seed, (1 << 22) + 3);
            let d = gpu.upload(&input).map_err(e)?;
            // Two results in one buffer, each written through a one-element view, nothing
            // synchronised until the copy back.
            let mut results = gpu.poisoned(2, i32::MIN).map_err(e)?;
            reduce::sum_into::<reduce::SumI32>(&gpu, &d, &mut results.slice_mut(0..1))
                .map_err(e)?;
            reduce::square_sum_into(&gpu, &d.slice(1..), &mut results.slice_mut(1..2))
                .map_err(e)?;
            let got = stream.clone_dtoh(&results).map_err(|x| x.to_string())?;
            let expected = [
                reference::sum_i32(&input),
                reference::square_sum_i32(&input[1..]),
            ];
            if got != expected {
                return Err(format!("got {got:?}, expected {expected:?}").into());
            }
            // An empty input writes 0.
            let mut scalar = gpu.poisoned(1, 7i32).map_err(e)?;
            reduce::sum_into::<reduce::SumI32>(&gpu, &d.slice(0..0), &mut scalar).map_err(e)?;
            let zero = gpu.download(&scalar, "reduce_sum_i32").map_err(e)?;
            if zero != [0] {
                return Err(format!("the empty sum wrote {zero:?}").into());
            }
            // A result of the wrong length is refused before anything is queued.
            let mut two = gpu.zeros::<i32>(2).map_err(e)?;
            expect_err(
                reduce::sum_into::<reduce::SumI32>(&gpu, &d, &mut two),
                |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "result",
                            expected: 1,
                            actual: 2, ..
                        }
                    )
                },
            )
        },
    ));
    trials
}

pub fn trials() -> Vec<Trial> {
    let mut trials = seed_kernel_trials();
    trials.extend(reduce_sum_trials());
    trials.extend(square_sum_trials());
    trials.extend(error_trials());
    trials.extend(entry_point_trials());
    trials
}
