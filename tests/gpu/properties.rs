//! Property tests on the GPU (proptest): for each public launcher, random lengths and shapes
//! (0 up to 2 million elements, and deliberately awkward ones: primes, block and tile sizes
//! plus and minus one), random values including negatives and, for floats, NaN and +-inf; the
//! GPU result must equal the CPU reference (float sums within their rounding bound, NaN
//! propagated).
//!
//! Cases per launcher: `GPU_LAB_PROPTEST_CASES` (default 200). Each trial's runner is seeded
//! from the run's `GPU_LAB_SEED`, so a failure replays; proptest then shrinks the length.

use cpu::lab::memory::bandwidth;
use cpu::lab::memory::{
    coalescing, constant_memory, device_globals, layout, registers, shared_memory, texture,
};
use cpu::lab::smoke;
use cpu::reduce::{self, reference, seed, square_sum};
use cpu::{convolution, transpose, vector_add};
use lab_tests::{gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Lengths that sit on or next to the block and tile sizes the kernels use, and primes.
const AWKWARD: [usize; 22] = [
    0, 1, 2, 3, 31, 32, 33, 63, 65, 255, 256, 257, 511, 513, 1023, 1025, 4095, 4097, 65_521,
    65_537, 1_000_003, 2_000_003,
];

fn cases() -> u32 {
    std::env::var("GPU_LAB_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

fn runner(name: &str) -> TestRunner {
    let seed = seed_for(name);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// A length: mostly uniform in `0..=2_000_000`, one time in four an awkward one.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![3 => 0usize..=2_000_000, 1 => proptest::sample::select(AWKWARD.to_vec())]
}

/// Uniform floats in `[-1e3, 1e3)`; with `special`, about one element in 1000 is NaN, +inf or
/// -inf.
fn floats(seed: u64, n: usize, special: bool) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            if special && rng.random_ratio(1, 1000) {
                [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][rng.random_range(0..3)]
            } else {
                rng.random_range(-1e3..1e3)
            }
        })
        .collect()
}

fn ints(seed: u64, n: usize) -> Vec<i32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = vec![0i32; n];
    rng.fill(&mut v[..]);
    v
}

/// Equal, or both NaN (the GPU's NaN payload may differ from the CPU's).
fn same_f32(got: &[f32], expected: &[f32]) -> Result<(), TestCaseError> {
    if got.len() != expected.len() {
        return Err(TestCaseError::fail(format!(
            "{} elements, expected {}",
            got.len(),
            expected.len()
        )));
    }
    match got
        .iter()
        .zip(expected)
        .position(|(g, e)| !(g == e || (g.is_nan() && e.is_nan())))
    {
        None => Ok(()),
        Some(i) => Err(TestCaseError::fail(format!(
            "index {i}: got {}, expected {}",
            got[i], expected[i]
        ))),
    }
}

fn same<T: PartialEq + std::fmt::Debug>(got: &[T], expected: &[T]) -> Result<(), TestCaseError> {
    cpu::verify::exact(got, expected).map_err(|m| TestCaseError::fail(m.to_string()))
}

fn driver(e: cpu::Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// A trial that runs `property` over `strategy` with a seeded runner.
fn property_trial<S>(
    name: String,
    strategy: S,
    property: impl Fn(&cpu::Gpu, S::Value) -> Result<(), TestCaseError> + Send + 'static,
) -> Trial
where
    S: Strategy + Send + 'static,
    S::Value: std::fmt::Debug,
{
    let trial_name = name.clone();
    gpu_trial(trial_name, move || {
        let gpu = gpu()?;
        runner(&name)
            .run(&strategy, |value| property(&gpu, value))
            .map_err(|e| Failed::from(format!("{name}: {e}")))
    })
}

fn vector_add_properties() -> Vec<Trial> {
    vector_add::Variant::ALL
        .into_iter()
        .map(|variant| {
            property_trial(
                format!("properties::vector_add::{}", variant.kernel_name()),
                (length(), any::<u64>(), any::<bool>()),
                move |gpu, (n, seed, special)| {
                    let x = floats(seed, n, special);
                    let y = floats(seed ^ 1, n, special);
                    let got = vector_add::run(gpu, variant, &x, &y).map_err(driver)?;
                    same_f32(&got, &vector_add::reference(&x, &y))
                },
            )
        })
        .collect()
}

fn transpose_properties() -> Vec<Trial> {
    transpose::Variant::ALL
        .into_iter()
        .map(|variant| {
            let dims = prop_oneof![
                3 => (1usize..=2048, 1usize..=2048),
                1 => (proptest::sample::select(AWKWARD[1..18].to_vec()),
                      proptest::sample::select(AWKWARD[1..18].to_vec())),
            ];
            property_trial(
                format!("properties::transpose::{}", variant.kernel_name()),
                (dims, any::<u64>()),
                move |gpu, ((rows, cols), seed)| {
                    // The vec4 kernels take multiples of 4 only, the thin one also a side of
                    // at most THIN_MAX (refusals are tested elsewhere).
                    let (rows, cols) = if variant.supports(rows, cols) {
                        (rows, cols)
                    } else {
                        (rows.div_ceil(4) * 4, cols.div_ceil(4) * 4)
                    };
                    let thin_max = gpu::transpose::THIN_MAX;
                    let (rows, cols) = if variant.supports(rows, cols) {
                        (rows, cols)
                    } else if rows <= cols {
                        (rows.min(thin_max), cols)
                    } else {
                        (rows, cols.min(thin_max))
                    };
                    let input = floats(seed, rows * cols, true);
                    let got = transpose::run(gpu, variant, &input, rows, cols).map_err(driver)?;
                    let expected = if variant.transposes() {
                        transpose::reference(&input, rows, cols)
                    } else {
                        input
                    };
                    // Transposes move bits: compare them exactly, NaN payloads included.
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    same(&bits(&got), &bits(&expected))
                },
            )
        })
        .collect()
}

fn reduction_properties() -> Vec<Trial> {
    let mut trials: Vec<Trial> = seed::Variant::ALL
        .into_iter()
        .map(|variant| {
            property_trial(
                format!("properties::reduce::{}", variant.kernel_name()),
                (
                    length(),
                    proptest::sample::select(vec![64u32, 128, 256, 512, 1024]),
                    any::<u64>(),
                ),
                move |gpu, (n, block, seed)| {
                    let input = ints(seed, n);
                    let got = seed::run_seed(gpu, variant, &input, block).map_err(driver)?;
                    same(&[got], &[reference::sum_i32(&input)])
                },
            )
        })
        .collect();
    trials.push(property_trial(
        "properties::reduce::reduce_sum_i32".into(),
        (length(), any::<u64>()),
        |gpu, (n, seed)| {
            let input = ints(seed, n);
            let got = gpu
                .upload(&input)
                .and_then(|d| reduce::sum::<reduce::SumI32>(gpu, &d))
                .map_err(driver)?;
            same(&[got], &[reference::sum_i32(&input)])
        },
    ));
    trials.push(property_trial(
        "properties::reduce::reduce_sum_f32_and_f32_f64".into(),
        (length(), any::<u64>(), any::<bool>()),
        |gpu, (n, seed, special)| {
            let input = floats(seed, n, special);
            let (expected, sum_abs) = reference::reference_f32(&input);
            let d_input = gpu.upload(&input).map_err(driver)?;
            let mut narrow = reduce::ReduceSum::<reduce::SumF32>::new(gpu).map_err(driver)?;
            let cfg = narrow.launch(gpu, &d_input).map_err(driver)?;
            let got = narrow.result(gpu).map_err(driver)?;
            let depth = reference::reduce_sum_depth(n, &cfg);
            let bound = reference::sum_error_bound(n, depth, f32::EPSILON as f64, sum_abs);
            // An f32 sum of finite values may overflow where the f64 reference does not; the
            // inputs here stay far below that (|x| < 1e3, n <= 2e6).
            reference::check_sum(got as f64, expected, bound)
                .map_err(|m| TestCaseError::fail(format!("reduce_sum_f32: {m}")))?;
            let mut wide = reduce::ReduceSum::<reduce::SumF32F64>::new(gpu).map_err(driver)?;
            let cfg = wide.launch(gpu, &d_input).map_err(driver)?;
            let got = wide.result(gpu).map_err(driver)?;
            let depth = reference::reduce_sum_depth(n, &cfg);
            let bound = reference::sum_error_bound(n, depth, f64::EPSILON, sum_abs);
            reference::check_sum(got, expected, bound)
                .map_err(|m| TestCaseError::fail(format!("reduce_sum_f32_f64: {m}")))
        },
    ));
    trials.extend(square_sum::Variant::ALL.into_iter().map(|variant| {
        property_trial(
            format!("properties::square_sum::{}", variant.kernel_name()),
            (length(), any::<u64>()),
            move |gpu, (n, seed)| {
                let input = ints(seed, n);
                let got = square_sum::run(gpu, variant, &input).map_err(driver)?;
                same(&[got], &[reference::square_sum_i32(&input)])
            },
        )
    }));
    trials
}

fn memory_properties() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in registers::Variant::ALL {
        trials.push(property_trial(
            format!("properties::memory::registers::{}", variant.kernel_name()),
            (length(), any::<u64>()),
            move |gpu, (n, seed)| {
                let mut rng = StdRng::seed_from_u64(seed);
                let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
                let got = registers::run(gpu, variant, &x).map_err(driver)?;
                same(&got, &registers::reference(&x))
            },
        ));
    }
    for variant in shared_memory::Variant::ALL {
        trials.push(property_trial(
            format!(
                "properties::memory::shared_memory::{}",
                variant.kernel_name()
            ),
            (1u32..=1024, 0usize..=1500, any::<u64>()),
            move |gpu, (block, blocks, seed)| {
                let mut u = floats(seed, block as usize * blocks, true);
                // Beyond i32: the conversion saturates.
                if let Some(first) = u.first_mut() {
                    *first *= 1e7;
                }
                let got = shared_memory::run(gpu, variant, &u, block).map_err(driver)?;
                same_f32(&got, &shared_memory::reference(&u, block as usize))
            },
        ));
    }
    for variant in constant_memory::Variant::ALL {
        trials.push(property_trial(
            format!(
                "properties::memory::constant_memory::{}",
                variant.kernel_name()
            ),
            (
                0usize..=200_000,
                1u32..=64,
                proptest::sample::select(constant_memory::Access::ALL.to_vec()),
                any::<u64>(),
            ),
            move |gpu, (n, reads, access, seed)| {
                let values = floats(seed, gpu::memory::constant_memory::TABLE_LEN, true);
                let got = constant_memory::run(gpu, variant, access, &values, n, reads)
                    .map_err(driver)?;
                let table = constant_memory::Table::new(gpu, &values).map_err(driver)?;
                same_f32(&got, &table.reference(n, access, reads))
            },
        ));
    }
    for by_symbol in [true, false] {
        let how = if by_symbol { "by_symbol" } else { "by_pointer" };
        trials.push(property_trial(
            format!("properties::memory::device_globals::{how}"),
            (
                0usize..=gpu::memory::device_globals::DEVICE_GLOBAL_LEN,
                any::<u64>(),
            ),
            move |gpu, (n, seed)| {
                let u = floats(seed, n, true);
                let v = floats(seed ^ 1, n, true);
                let got = if by_symbol {
                    device_globals::add_by_symbol(gpu, &u, &v)
                } else {
                    device_globals::add_by_pointer(gpu, &u, &v)
                }
                .map_err(driver)?;
                same_f32(&got, &device_globals::reference(&u, &v))
            },
        ));
    }
    trials
}

fn memory_traffic_properties() -> Vec<Trial> {
    let mut trials = Vec::new();
    for load in coalescing::Load::ALL {
        trials.push(property_trial(
            format!("properties::memory::coalescing::offset_and_stride::{load:?}"),
            (
                length(),
                any::<bool>(),
                0usize..=gpu::memory::coalescing::MAX_OFFSET,
                any::<u64>(),
            ),
            move |gpu, (n, by_offset, k, seed)| {
                let access = if by_offset {
                    coalescing::Access::Offset(k)
                } else {
                    coalescing::Access::Stride(k.clamp(1, gpu::memory::coalescing::MAX_STRIDE))
                };
                let x = floats(seed, n, true);
                let got = coalescing::run(gpu, access, load, &x).map_err(driver)?;
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                same(&bits(&got), &bits(&coalescing::reference(access, &x)))
            },
        ));
    }
    for variant in layout::Variant::ALL {
        trials.push(property_trial(
            format!("properties::memory::layout::{}", variant.kernel_name()),
            (length(), any::<u64>()),
            move |gpu, (n, seed)| {
                let x = floats(seed, n, true);
                let y = floats(seed ^ 1, n, true);
                let data: Vec<gpu::memory::layout::InnerStruct> = x
                    .iter()
                    .zip(&y)
                    .map(|(&x, &y)| gpu::memory::layout::InnerStruct { x, y })
                    .collect();
                let got = layout::run(gpu, variant, &data).map_err(driver)?;
                let expected = layout::reference(&data);
                let flat = |v: &[gpu::memory::layout::InnerStruct]| {
                    v.iter().flat_map(|s| [s.x, s.y]).collect::<Vec<_>>()
                };
                same_f32(&flat(&got), &flat(&expected))
            },
        ));
    }
    for variant in texture::Variant::ALL {
        trials.push(property_trial(
            format!("properties::memory::texture::{}", variant.kernel_name()),
            (1usize..=100_000, length(), any::<u64>()),
            move |gpu, (table_len, n, seed)| {
                let table = floats(seed, table_len, true);
                let mut rng = StdRng::seed_from_u64(seed ^ 2);
                let idx: Vec<u32> = (0..n)
                    .map(|_| rng.random_range(0..table_len as u32))
                    .collect();
                let got = texture::run(gpu, variant, &table, &idx).map_err(driver)?;
                same_f32(&got, &texture::reference(&table, &idx))
            },
        ));
    }
    trials
}

/// Convolution inputs stay finite: its comparison is relative to `sum |M N|` per output, and
/// a NaN or infinity would make every output it touches NaN on both sides.
fn convolution_properties() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in convolution::Variant1d::ALL {
        trials.push(property_trial(
            format!("properties::convolution::{}", variant.kernel_name()),
            (
                length().prop_map(|n| n.max(1)),
                (0usize..=gpu::convolution::MAX_MASK_WIDTH / 2).prop_map(|r| 2 * r + 1),
                any::<u64>(),
            ),
            move |gpu, (n, width, seed)| {
                let input = floats(seed, n, false);
                let mask = floats(seed ^ 1, width, false);
                let got = convolution::run_1d(gpu, variant, &input, &mask).map_err(driver)?;
                convolution::compare(&got, &convolution::reference_1d(&input, &mask))
                    .result
                    .map_err(|m| TestCaseError::fail(m.to_string()))
            },
        ));
    }
    for variant in convolution::Variant2d::ALL {
        // Dense masks up to 9 x 9 (11 x 11 for the wide kernels, their narrowest), so that the
        // CPU reference of 1500 x 1500 stays quick; the separable variants take separable
        // masks: their trials are in `convolution.rs`.
        let widths: Vec<usize> = variant
            .widths()
            .filter(|&w| w <= convolution::MAX_MASK_WIDTH_2D_VEC4 || w == 11)
            .collect();
        if variant.needs_separable_mask() {
            continue;
        }
        trials.push(property_trial(
            format!("properties::convolution::{}", variant.kernel_name()),
            (
                1usize..=1500,
                1usize..=1500,
                proptest::sample::select(widths),
                any::<u64>(),
            ),
            move |gpu, (rows, cols, width, seed)| {
                let input = floats(seed, rows * cols, false);
                let mask = floats(seed ^ 1, width * width, false);
                let got = convolution::run_2d(gpu, variant, &input, rows, cols, &mask, width)
                    .map_err(driver)?;
                let reference = convolution::reference_2d(&input, rows, cols, &mask, width);
                convolution::compare_within(&got, &reference, width * width)
                    .result
                    .map_err(|m| TestCaseError::fail(m.to_string()))
            },
        ));
    }
    trials
}

/// The smoke kernels (one per device-support feature) and the copy kernel of the bandwidth
/// topic, on random lengths.
fn support_properties() -> Vec<Trial> {
    let mut trials: Vec<Trial> = smoke::Variant::ALL
        .into_iter()
        .map(|variant| {
            property_trial(
                format!("properties::smoke::{}", variant.kernel_name()),
                (length(), any::<u64>()),
                move |gpu, (n, seed)| {
                    let outcome = smoke::check(gpu, variant, n, seed).map_err(driver)?;
                    outcome
                        .result
                        .map_err(|m| TestCaseError::fail(m.to_string()))
                },
            )
        })
        .collect();
    trials.push(property_trial(
        "properties::memory::bandwidth::kernel_copy".into(),
        (length(), any::<u64>()),
        |gpu, (groups, seed)| {
            let bytes = 16 * groups;
            let mut host = vec![0u8; bytes];
            bandwidth::fill_pattern(seed, &mut host);
            let src = gpu.upload(&host).map_err(driver)?;
            let mut dst = gpu.zeros::<u8>(bytes.max(16)).map_err(driver)?;
            bandwidth::kernel_copy(gpu, &src, &mut dst, bytes).map_err(driver)?;
            let got = gpu.download(&dst, "bandwidth_copy_v4").map_err(driver)?;
            same(&got[..bytes], &host)
        },
    ));
    trials
}

/// Every property trial.
pub fn trials() -> Vec<Trial> {
    let mut trials = vector_add_properties();
    trials.extend(transpose_properties());
    trials.extend(reduction_properties());
    trials.extend(memory_properties());
    trials.extend(memory_traffic_properties());
    trials.extend(convolution_properties());
    trials.extend(support_properties());
    trials
}
