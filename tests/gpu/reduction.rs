//! GPU trials of the reduction pattern: the seed's nine kernels, `reduce_sum` for `i32`, `f32`
//! and `f32` accumulated in `f64`, and the square sum's seven versions plus its one-launch
//! version, each against its CPU reference on fresh seeded random inputs.

use cpu::{Error, reduction, square_sum};
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
    let mut add = |variant: reduction::Variant, block: u32, case: String, n: usize| {
        let kernel = variant.kernel_for(block).unwrap_or("?");
        let name = format!("reduction::{kernel}::block_{block}::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let input = random_i32(seed, n);
            let got =
                reduction::run_seed(&gpu, variant, &input, block).map_err(|e| e.to_string())?;
            exact(kernel, n, seed, got, reduction::reference(&input))
        }));
    };
    for variant in reduction::Variant::ALL {
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
        reduction::Variant::CompleteUnroll,
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
    for (case, n) in cases {
        let name = format!("reduction::reduce_sum_i32::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let input = random_i32(seed, n);
            let got = reduction::reduce_sum::<reduction::SumI32>(&gpu, &input)
                .map_err(|e| e.to_string())?;
            exact("reduce_sum_i32", n, seed, got, reduction::reference(&input))
        }));
        let name = format!("reduction::reduce_sum_f32::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            check_float_sums(&gpu, &fast_floats(seed, n), seed)
        }));
    }
    trials.push(gpu_trial(
        "reduction::reduce_sum_f32::nan_and_infinities".into(),
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
    let name = "reduction::reduce_sum_i32::2e31_plus_5".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let _big = large_memory();
        let gpu = gpu()?;
        let input = random_i32(seed, n);
        let got =
            reduction::reduce_sum::<reduction::SumI32>(&gpu, &input).map_err(|e| e.to_string())?;
        exact("reduce_sum_i32", n, seed, got, reduction::reference(&input))
    }));
    let name = "reduction::reduce_sum_f32::2e31_plus_5".to_string();
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
    let (expected, sum_abs) = reduction::reference_f32(input);
    let d_input = gpu.upload(input).map_err(|e| e.to_string())?;
    let mut f32_sum =
        reduction::ReduceSum::<reduction::SumF32>::new(gpu).map_err(|e| e.to_string())?;
    let cfg = f32_sum.launch(gpu, &d_input).map_err(|e| e.to_string())?;
    let got = f32_sum.result(gpu).map_err(|e| e.to_string())?;
    let depth = reduction::reduce_sum_depth(n, &cfg);
    let bound = reduction::sum_error_bound(n, depth, f32::EPSILON as f64, sum_abs);
    reduction::check_sum(got as f64, expected, bound)
        .map_err(|m| format!("reduce_sum_f32 n={n} seed={seed}: {m}"))?;
    let mut f64_sum =
        reduction::ReduceSum::<reduction::SumF32F64>::new(gpu).map_err(|e| e.to_string())?;
    let cfg = f64_sum.launch(gpu, &d_input).map_err(|e| e.to_string())?;
    let got = f64_sum.result(gpu).map_err(|e| e.to_string())?;
    let depth = reduction::reduce_sum_depth(n, &cfg);
    let bound = reduction::sum_error_bound(n, depth, f64::EPSILON, sum_abs);
    reduction::check_sum(got, expected, bound)
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
                    square_sum::reference(&input),
                )
            }));
        }
    }
    trials
}

fn error_trials() -> Vec<Trial> {
    vec![
        gpu_trial("errors::reduction_block_not_power_of_two".into(), || {
            let gpu = gpu()?;
            expect_err(
                reduction::run_seed(&gpu, reduction::Variant::Interleaved, &[1; 100], 384),
                |e| matches!(e, Error::InvalidBlock { .. }),
            )
        }),
        gpu_trial(
            "errors::reduction_last_warp_needs_64_threads".into(),
            || {
                let gpu = gpu()?;
                expect_err(
                    reduction::run_seed(&gpu, reduction::Variant::UnrollWarps8, &[1; 100], 32),
                    |e| matches!(e, Error::InvalidBlock { .. }),
                )
            },
        ),
        gpu_trial("errors::reduction_restore_length_mismatch".into(), || {
            let gpu = gpu()?;
            let a = gpu.upload(&[1i32; 100]).map_err(|e| e.to_string())?;
            let b = gpu.upload(&[1i32; 99]).map_err(|e| e.to_string())?;
            let mut work = reduction::SeedWork::new(&gpu, reduction::Variant::Unroll2, &a, 64)
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
pub fn trials() -> Vec<Trial> {
    let mut trials = seed_kernel_trials();
    trials.extend(reduce_sum_trials());
    trials.extend(square_sum_trials());
    trials.extend(error_trials());
    trials
}
