//! GPU trials of the two kernels written against cuda_std 0.2's API (`cpu::cuda_std_style`):
//! the vector add bit for bit against the CPU, every block sum within the rounding bound of its
//! tree (which scales with the magnitudes it adds up), outputs poisoned before each launch,
//! lengths that are not multiples of the block, views of larger buffers, and the typed refusals.

use cpu::Error;
use cpu::cuda_std_style::{
    self as k, block_sum_error_bound, block_sums_reference, partial_count, vector_add_reference,
};
use cpu::verify;
use lab_tests::{expect_err, fast_floats, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Lengths around the block of 256 and a warp, odd ones, and large ones.
const LENGTHS: [(&str, usize); 10] = [
    ("empty", 0),
    ("one", 1),
    ("under_a_warp", 31),
    ("block_minus_1", 255),
    ("block", 256),
    ("block_plus_1", 257),
    ("odd_prime", 4099),
    ("not_a_power_of_two", 100_003),
    ("2e20_plus_3", (1 << 20) + 3),
    ("2e24_plus_7", (1 << 24) + 7),
];

/// Poison of the view trials' padding: a quiet NaN with a payload no kernel writes.
const POISON: f32 = f32::from_bits(0x7fc0_5a5a);

fn fail(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

fn uniform(seed: u64, n: usize, range: f32) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-range..range)).collect()
}

/// Every partial against its block's reference within [`block_sum_error_bound`]; NaN (an
/// unwritten, poisoned partial) never passes.
fn check_partials(got: &[f32], input: &[f32]) -> Result<(), String> {
    let expected = block_sums_reference(input);
    if got.len() != expected.len() {
        return Err(format!(
            "{} partials, expected {}",
            got.len(),
            expected.len()
        ));
    }
    for (j, (&g, &(sum, sum_abs))) in got.iter().zip(&expected).enumerate() {
        let bound = block_sum_error_bound(sum_abs);
        let error = (g as f64 - sum).abs();
        // NaN (a poisoned, unwritten partial) fails too.
        if error.is_nan() || error > bound {
            return Err(format!(
                "partial {j}: got {g:e}, expected {sum:e} (error {error:e}, bound {bound:e})"
            ));
        }
    }
    Ok(())
}

fn vector_add_trials() -> Vec<Trial> {
    LENGTHS
        .iter()
        .map(|&(case, n)| {
            let name = format!("cuda_std_style::cuda_std_vector_add::{case}");
            let seed = seed_for(&name);
            gpu_trial(name, move || {
                let gpu = gpu()?;
                let a = uniform(seed, n, 1e3);
                let b = uniform(seed ^ 0x5eed, n, 1e3);
                let got = k::run_vector_add(&gpu, &a, &b).map_err(fail)?;
                verify::exact(&got, &vector_add_reference(&a, &b))
                    .map_err(|m| format!("n={n} seed={seed}: {m}").into())
            })
        })
        .collect()
}

fn block_sum_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for &(case, n) in &LENGTHS {
        let name = format!("cuda_std_style::cuda_std_block_sum::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let input = fast_floats(seed, n);
            let got = k::run_block_sums(&gpu, &input).map_err(fail)?;
            check_partials(&got, &input).map_err(|m| format!("n={n} seed={seed}: {m}").into())
        }));
    }
    // Magnitudes from 1e-3 to 1e6 with both signs: the bound follows the sum of magnitudes,
    // not the (cancelling) sum.
    let name = "cuda_std_style::cuda_std_block_sum::wide_magnitudes".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let gpu = gpu()?;
        let mut rng = StdRng::seed_from_u64(seed);
        let n = 50_001;
        let input: Vec<f32> = (0..n)
            .map(|_| {
                let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
                sign * 10f32.powf(rng.random_range(-3.0..6.0))
            })
            .collect();
        let got = k::run_block_sums(&gpu, &input).map_err(fail)?;
        check_partials(&got, &input).map_err(|m| format!("n={n} seed={seed}: {m}").into())
    }));
    trials
}

/// Both entry points on views that start 1 to 3 elements into larger buffers (the slices the
/// kernels receive then start off any 16-byte boundary): results against the reference, and
/// the output buffer's elements outside the view still poison.
fn view_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for offset in 1..=3usize {
        let name = format!("cuda_std_style::views::vector_add_offset_{offset}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let n = 1000;
            let total = n + 8;
            let a = uniform(seed, total, 10.0);
            let b = uniform(seed ^ 1, total, 10.0);
            let (d_a, d_b) = (gpu.upload(&a).map_err(fail)?, gpu.upload(&b).map_err(fail)?);
            let mut d_c = gpu.poisoned(total, POISON).map_err(fail)?;
            let range = offset..offset + n;
            k::vector_add(
                &gpu,
                &d_a.slice(range.clone()),
                &d_b.slice(range.clone()),
                &mut d_c.slice_mut(range.clone()),
            )
            .map_err(fail)?;
            let c = gpu.download(&d_c, "cuda_std_vector_add").map_err(fail)?;
            verify::exact(
                &c[range.clone()],
                &vector_add_reference(&a[range.clone()], &b[range.clone()]),
            )
            .map_err(|m| format!("offset {offset} seed={seed}: {m}"))?;
            let untouched = c[..offset].iter().chain(&c[offset + n..]);
            if untouched
                .into_iter()
                .any(|x| x.to_bits() != POISON.to_bits())
            {
                return Err(
                    format!("offset {offset}: an element outside the view was written").into(),
                );
            }
            Ok(())
        }));
        let name = format!("cuda_std_style::views::block_sum_offset_{offset}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let gpu = gpu()?;
            let n = 1000;
            let input = fast_floats(seed, n + 8);
            let d_input = gpu.upload(&input).map_err(fail)?;
            let parts = partial_count(n);
            let mut d_partial = gpu.poisoned(parts + 2, POISON).map_err(fail)?;
            k::block_sums(
                &gpu,
                &d_input.slice(offset..offset + n),
                &mut d_partial.slice_mut(1..1 + parts),
            )
            .map_err(fail)?;
            let partial = gpu
                .download(&d_partial, "cuda_std_block_sum")
                .map_err(fail)?;
            check_partials(&partial[1..1 + parts], &input[offset..offset + n])
                .map_err(|m| format!("offset {offset} seed={seed}: {m}"))?;
            if partial[0].to_bits() != POISON.to_bits()
                || partial[1 + parts].to_bits() != POISON.to_bits()
            {
                return Err(
                    format!("offset {offset}: a partial outside the view was written").into(),
                );
            }
            Ok(())
        }));
    }
    trials
}

fn error_trials() -> Vec<Trial> {
    vec![
        gpu_trial(
            "cuda_std_style::errors::vector_add_length_mismatch".into(),
            || {
                let gpu = gpu()?;
                expect_err(k::run_vector_add(&gpu, &[1.0; 10], &[1.0; 9]), |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "b",
                            expected: 10,
                            actual: 9, ..
                        }
                    )
                })
            },
        ),
        gpu_trial(
            "cuda_std_style::errors::vector_add_output_length".into(),
            || {
                let gpu = gpu()?;
                let a = gpu.upload(&[1.0f32; 10]).map_err(fail)?;
                let mut c = gpu.zeros::<f32>(11).map_err(fail)?;
                expect_err(k::vector_add(&gpu, &a, &a, &mut c), |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "c",
                            expected: 10,
                            actual: 11, ..
                        }
                    )
                })
            },
        ),
        gpu_trial(
            "cuda_std_style::errors::block_sum_partial_length".into(),
            || {
                let gpu = gpu()?;
                let input = gpu.upload(&[1.0f32; 300]).map_err(fail)?;
                let mut partial = gpu.zeros::<f32>(1).map_err(fail)?;
                expect_err(k::block_sums(&gpu, &input, &mut partial), |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            what: "partial",
                            expected: 2,
                            actual: 1, ..
                        }
                    )
                })
            },
        ),
        gpu_trial(
            "cuda_std_style::empty::nothing_launched_nothing_written".into(),
            || {
                let gpu = gpu()?;
                let input = gpu.upload(&[1.0f32; 16]).map_err(fail)?;
                let mut output = gpu.poisoned(16, POISON).map_err(fail)?;
                for start in 0..4 {
                    let (i, mut o) = (
                        input.slice(start..start),
                        output.slice_mut(start + 1..start + 1),
                    );
                    let add = k::vector_add(&gpu, &i, &i, &mut o).map_err(fail)?;
                    let sum = k::block_sums(&gpu, &i, &mut o).map_err(fail)?;
                    if add.grid_dim.0 != 0 || sum.grid_dim.0 != 0 {
                        return Err(format!("an empty input launched {add:?} / {sum:?}").into());
                    }
                }
                let got = gpu.download(&output, "nothing").map_err(fail)?;
                if got.iter().any(|x| x.to_bits() != POISON.to_bits()) {
                    return Err("an empty launch wrote into the output".into());
                }
                Ok(())
            },
        ),
    ]
}

/// Every trial of this module.
pub fn trials() -> Vec<Trial> {
    let mut trials = vector_add_trials();
    trials.extend(block_sum_trials());
    trials.extend(view_trials());
    trials.extend(error_trials());
    trials
}
