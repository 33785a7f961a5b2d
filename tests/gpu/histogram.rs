//! GPU trials of the histograms: every ladder step and `histogram::bytes` on uniform random,
//! constant, Zipf-skewed and text-like bytes at lengths around the 16-byte vector; `bytes` on
//! views that start at every offset 1..15 and adding to existing counts; `histogram::even` for
//! every sample type (`u8`, `u16`, `i32`, `f32`) into `u32` and `u64` counts, from one bin to
//! past the shared-memory limit (the global-atomics kernel), with samples below, above and at
//! the bounds, NaN and infinities; the refusals of bad arguments; and, with `large_memory`,
//! more than 2^32 bytes into `u64` counts. Every output is poisoned before the launch and
//! compared bin by bin with `cpu::histogram::reference`.

use cpu::histogram::{self, Counter, HistogramElement, Update, ladder, reference};
use cpu::error::Level;
use cpu::{Error, Gpu};
use lab_tests::{expect_err, gpu, gpu_trial, large_memory, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// What the counts hold before an `Overwrite` launch.
const POISON: u32 = 0xdead_beef;

/// Lengths around the 16-byte vector and the 32 KiB block step, and long enough for a full
/// wave with several steps per block.
const LENGTHS: [(&str, usize); 8] = [
    ("empty", 0),
    ("one", 1),
    ("15", 15),
    ("16", 16),
    ("17", 17),
    ("4095", 4095),
    ("prime_100003", 100_003),
    ("2e24_plus_5", (1 << 24) + 5),
];

/// The kinds of input bytes.
#[derive(Clone, Copy, Debug)]
enum Input {
    /// Uniform random bytes: every bin, few runs (the shared atomics' bank conflicts).
    Uniform,
    /// One value repeated: every atomic on one bin.
    Constant,
    /// Zipf-like: value `k` (of a random permutation) with probability proportional to
    /// `1 / (k + 1)^1.2`, so a few bins take most bytes.
    Zipf,
    /// Words of English text, spaces and newlines: about 30 values, short runs.
    Text,
}

const INPUTS: [Input; 4] = [Input::Uniform, Input::Constant, Input::Zipf, Input::Text];

/// `n` bytes of `kind` from `seed`.
fn make_bytes(kind: Input, seed: u64, n: usize) -> Vec<u8> {
    let mut rng = StdRng::seed_from_u64(seed);
    match kind {
        Input::Uniform => {
            let mut v = vec![0u8; n];
            rng.fill(&mut v[..]);
            v
        }
        Input::Constant => vec![rng.random::<u8>(); n],
        Input::Zipf => {
            let mut values: Vec<u8> = (0..=255).collect();
            for i in (1..256).rev() {
                values.swap(i, rng.random_range(0..=i));
            }
            let mut cdf = Vec::with_capacity(256);
            let mut total = 0.0f64;
            for k in 0..256 {
                total += 1.0 / ((k + 1) as f64).powf(1.2);
                cdf.push(total);
            }
            (0..n)
                .map(|_| {
                    let u = rng.random::<f64>() * total;
                    values[cdf.partition_point(|&c| c < u).min(255)]
                })
                .collect()
        }
        Input::Text => {
            const WORDS: [&str; 24] = [
                "the", "of", "and", "a", "to", "in", "is", "histogram", "that", "for", "it",
                "with", "as", "was", "on", "bins", "be", "at", "by", "this", "atomic", "from",
                "or", "shared",
            ];
            let mut v = Vec::with_capacity(n + 16);
            while v.len() < n {
                v.extend_from_slice(WORDS[rng.random_range(0..WORDS.len())].as_bytes());
                v.push(match rng.random_range(0..12) {
                    0 => b'\n',
                    1 => b'.',
                    _ => b' ',
                });
            }
            v.truncate(n);
            v
        }
    }
}

/// The first bins that differ, as a message; `None` if all agree.
fn compare<C: Copy + Into<u64>>(got: &[C], expected: &[u64]) -> Option<String> {
    if got.len() != expected.len() {
        return Some(format!("{} bins, expected {}", got.len(), expected.len()));
    }
    let wrong: Vec<usize> = (0..got.len())
        .filter(|&b| got[b].into() != expected[b])
        .collect();
    let &first = wrong.first()?;
    Some(format!(
        "{} bins wrong, first {first}: got {}, expected {} (total got {}, expected {})",
        wrong.len(),
        got[first].into(),
        expected[first],
        got.iter().map(|&c| c.into()).sum::<u64>(),
        expected.iter().sum::<u64>()
    ))
}

/// The expected `u32` counts: `init + reference` (wrapping).
fn plus(init: &[u32], reference: &[u64]) -> Vec<u64> {
    init.iter()
        .zip(reference)
        .map(|(&i, &r)| i.wrapping_add(r as u32) as u64)
        .collect()
}

fn ladder_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for variant in ladder::Variant::ALL {
        for (case, n) in LENGTHS {
            for kind in INPUTS {
                let name = format!("histogram::ladder::{variant:?}::{kind:?}::{case}");
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let input = make_bytes(kind, seed, n);
                    let got = (|| {
                        let d_in = gpu.upload(&input)?;
                        let mut counts = gpu.poisoned(histogram::BYTE_BINS, POISON)?;
                        // Twice: the second launch must overwrite the first's counts.
                        ladder::run(&gpu, variant, &d_in, &mut counts)?;
                        ladder::run(&gpu, variant, &d_in, &mut counts)?;
                        gpu.download(&counts, variant.kernel_name())
                    })()
                    .map_err(|e| e.to_string())?;
                    match compare(&got, &reference::bytes(&input)) {
                        None => Ok(()),
                        Some(d) => Err(format!("n={n} seed={seed}: {d}").into()),
                    }
                }));
            }
        }
    }
    trials
}

/// `histogram::bytes` on a view starting `offset` bytes into its buffer (the buffer's bytes
/// outside the view are 0xff, which the view must not count), with `update` onto `init`.
fn run_bytes<C: Count>(
    gpu: &Gpu,
    input: &[u8],
    offset: usize,
    update: Update,
    init: &[C],
) -> cpu::Result<Vec<C>> {
    let n = input.len();
    let mut padded = vec![0xffu8; offset + n + 16];
    padded[offset..offset + n].copy_from_slice(input);
    let d_in = gpu.upload(&padded)?;
    let mut counts = gpu.upload(init)?;
    histogram::bytes(gpu, &d_in.slice(offset..offset + n), &mut counts, update)?;
    gpu.download(&counts, "histogram_bytes")
}

fn bytes_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let lengths = [
        ("one", 1),
        ("15", 15),
        ("17", 17),
        ("40", 40),
        ("4095", 4095),
        ("prime_100003", 100_003),
    ];
    for offset in 1..16 {
        for (case, n) in lengths {
            for kind in [Input::Uniform, Input::Constant] {
                let name = format!("histogram::bytes::misaligned_{offset}::{kind:?}::{case}");
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let input = make_bytes(kind, seed, n);
                    let got = run_bytes::<u32>(&gpu, &input, offset, Update::Overwrite, &[POISON; 256])
                        .map_err(|e| e.to_string())?;
                    match compare(&got, &reference::bytes(&input)) {
                        None => Ok(()),
                        Some(d) => Err(format!("n={n} offset={offset} seed={seed}: {d}").into()),
                    }
                }));
            }
        }
    }
    // Into u64 counts: the same kernel, its block sums added in 64 bits.
    for offset in [0, 5] {
        for (case, n) in [("one", 1), ("40", 40), ("prime_100003", 100_003)] {
            for update in [Update::Overwrite, Update::Accumulate] {
                let name = format!("histogram::bytes_u64::offset_{offset}::{update:?}::{case}")
                    .to_lowercase();
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let input = make_bytes(Input::Uniform, seed, n);
                    let init: Vec<u64> = match update {
                        Update::Overwrite => vec![u64::MAX; 256],
                        Update::Accumulate => (0..256u64).map(|b| b << 33).collect(),
                    };
                    let got = run_bytes(&gpu, &input, offset, update, &init)
                        .map_err(|e| e.to_string())?;
                    let mut expected = reference::bytes(&input);
                    if update == Update::Accumulate {
                        for (e, i) in expected.iter_mut().zip(&init) {
                            *e += i;
                        }
                    }
                    match compare(&got, &expected) {
                        None => Ok(()),
                        Some(d) => Err(format!("n={n} offset={offset} seed={seed}: {d}").into()),
                    }
                }));
            }
        }
    }
    for (case, n, offset) in [
        ("empty", 0, 0),
        ("prime_100003", 100_003, 0),
        ("misaligned_7_2e24_plus_5", (1 << 24) + 5, 7),
    ] {
        for kind in INPUTS {
            let name = format!("histogram::bytes::accumulate::{kind:?}::{case}");
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let input = make_bytes(kind, seed, n);
                // Counts near the top of u32 too: the sums wrap as the GPU's adds do.
                let mut rng = StdRng::seed_from_u64(seed ^ 1);
                let init: Vec<u32> = (0..256)
                    .map(|b| {
                        if b % 17 == 0 {
                            u32::MAX - rng.random_range(0..1000)
                        } else {
                            rng.random_range(0..1_000_000)
                        }
                    })
                    .collect();
                let got = run_bytes(&gpu, &input, offset, Update::Accumulate, &init)
                    .map_err(|e| e.to_string())?;
                match compare(&got, &plus(&init, &reference::bytes(&input))) {
                    None => Ok(()),
                    Some(d) => Err(format!("n={n} seed={seed}: {d}").into()),
                }
            }));
        }
    }
    trials
}

/// A sample type of the even trials: random samples spread past both bounds, the bounds, and
/// values at and next to them.
trait Sample: HistogramElement {
    /// `(lower, upper)` of the trials.
    const RANGE: (Self::Level, Self::Level);
    /// Levels that take in the type's whole range, its largest value included (`None` for
    /// `f32`, whose largest value no finite exclusive bound reaches).
    const WHOLE: Option<(Self::Level, Self::Level)>;
    /// A random sample, from a little below `lower` to a little above `upper`.
    fn random(rng: &mut StdRng) -> Self;
    /// Values at, just inside and just outside the bounds, and the type's extremes (NaN and
    /// the infinities for `f32`).
    fn specials() -> Vec<Self>;
}

impl Sample for u8 {
    const RANGE: (i64, i64) = (10, 250);
    const WHOLE: Option<(i64, i64)> = Some((0, 256));
    fn random(rng: &mut StdRng) -> u8 {
        rng.random()
    }
    fn specials() -> Vec<u8> {
        vec![0, 9, 10, 11, 249, 250, 251, 255]
    }
}

impl Sample for u16 {
    const RANGE: (i64, i64) = (1000, 60_000);
    const WHOLE: Option<(i64, i64)> = Some((0, 65_536));
    fn random(rng: &mut StdRng) -> u16 {
        rng.random()
    }
    fn specials() -> Vec<u16> {
        vec![0, 999, 1000, 1001, 59_999, 60_000, 60_001, u16::MAX]
    }
}

impl Sample for i32 {
    const RANGE: (i64, i64) = (-1_000_003, 3_000_017);
    const WHOLE: Option<(i64, i64)> = Some((i32::MIN as i64, i32::MAX as i64 + 1));
    fn random(rng: &mut StdRng) -> i32 {
        rng.random_range(-2_000_000..4_000_000)
    }
    fn specials() -> Vec<i32> {
        let (lo, hi) = (Self::RANGE.0 as i32, Self::RANGE.1 as i32);
        vec![i32::MIN, lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, i32::MAX]
    }
}

impl Sample for f32 {
    const RANGE: (f32, f32) = (-1.0, 2.0);
    const WHOLE: Option<(f32, f32)> = None;
    fn random(rng: &mut StdRng) -> f32 {
        rng.random_range(-1.5f32..2.5)
    }
    fn specials() -> Vec<f32> {
        let below_upper = f32::from_bits(2.0f32.to_bits() - 1);
        let below_lower = f32::from_bits((-1.0f32).to_bits() + 1);
        vec![
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -1.0,
            below_lower,
            -0.999_999_9,
            below_upper,
            2.0,
            -0.0,
            0.0,
            f32::MAX,
            f32::MIN,
            f32::from_bits(1),
        ]
    }
}

/// A counter type of the even trials.
trait Count: Counter + From<u32> + Into<u64> + PartialEq + std::fmt::Debug {}
impl Count for u32 {}
impl Count for u64 {}

/// `n` samples: random, with the specials sprinkled over the input (every 97th sample) and
/// runs of one value every 1000 samples (so that the aggregation's flushes are exercised).
fn make_samples<T: Sample>(seed: u64, n: usize) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(seed);
    let specials = T::specials();
    let mut v: Vec<T> = (0..n).map(|_| T::random(&mut rng)).collect();
    for i in (0..n).step_by(97) {
        v[i] = specials[(i / 97) % specials.len()];
    }
    for start in (0..n).step_by(1000) {
        let x = v[start];
        for s in v.iter_mut().skip(start).take(40) {
            *s = x;
        }
    }
    v
}

/// `even::<T, C>` over `levels` on `input` with `update` onto `init` (as many bins as
/// counters), downloaded.
fn run_even<T: Sample, C: Count>(
    gpu: &Gpu,
    input: &[T],
    levels: (T::Level, T::Level),
    update: Update,
    init: &[C],
) -> cpu::Result<(Vec<C>, &'static str)> {
    let d_in = gpu.upload(input)?;
    let mut counts = gpu.upload(init)?;
    let (lower, upper) = levels;
    histogram::even(gpu, &d_in, lower, upper, &mut counts, update)?;
    let kernel = histogram::even_config::<T, C>(gpu, input.len(), init.len())?.0.name();
    Ok((gpu.download(&counts, kernel)?, kernel))
}

fn even_trials_of<T: Sample, C: Count>(type_name: &str) -> Vec<Trial> {
    let mut trials = Vec::new();
    let past_shared = gpu::histogram::EVEN_SHARED_LIMIT_BYTES / size_of::<C>() + 1;
    let bin_counts = [1, 7, 256, 1000, 4096, past_shared];
    let lengths = [("empty", 0), ("17", 17), ("prime_100003", 100_003)];
    for bins in bin_counts {
        for (case, n) in lengths {
            for update in [Update::Overwrite, Update::Accumulate] {
                let name =
                    format!("histogram::even_{type_name}::bins_{bins}::{update:?}::{case}")
                        .to_lowercase();
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let input = make_samples::<T>(seed, n);
                    let init: Vec<C> = match update {
                        Update::Overwrite => vec![C::from(POISON); bins],
                        Update::Accumulate => (0..bins as u32).map(|b| C::from(b * 3)).collect(),
                    };
                    let (got, kernel) = run_even::<T, C>(&gpu, &input, T::RANGE, update, &init)
                        .map_err(|e| e.to_string())?;
                    let (lower, upper) = T::RANGE;
                    let mut expected = reference::even(&input, bins, lower, upper);
                    if update == Update::Accumulate {
                        for (e, &i) in expected.iter_mut().zip(&init) {
                            *e += i.into();
                        }
                    }
                    match compare(&got, &expected) {
                        None => Ok(()),
                        Some(d) => Err(format!("{kernel} n={n} seed={seed}: {d}").into()),
                    }
                }));
            }
        }
    }
    // Levels that reach past the type's largest value: every sample falls in a bin, the
    // largest in the last one.
    if let Some((lower, upper)) = T::WHOLE {
        for bins in [1, 7, 256] {
            let name = format!("histogram::even_{type_name}::whole_type::bins_{bins}");
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let input = make_samples::<T>(seed, 100_003);
                let init = vec![C::from(POISON); bins];
                let (got, kernel) =
                    run_even::<T, C>(&gpu, &input, (lower, upper), Update::Overwrite, &init)
                        .map_err(|e| e.to_string())?;
                let expected = reference::even(&input, bins, lower, upper);
                let total: u64 = expected.iter().sum();
                if total != input.len() as u64 {
                    return Err(format!("the reference dropped {} samples", input.len() as u64 - total).into());
                }
                match compare(&got, &expected) {
                    None => Ok(()),
                    Some(d) => Err(format!("{kernel} seed={seed}: {d}").into()),
                }
            }));
        }
    }
    trials
}

fn even_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    trials.extend(even_trials_of::<u8, u32>("u8_u32"));
    trials.extend(even_trials_of::<u8, u64>("u8_u64"));
    trials.extend(even_trials_of::<u16, u32>("u16_u32"));
    trials.extend(even_trials_of::<u16, u64>("u16_u64"));
    trials.extend(even_trials_of::<i32, u32>("i32_u32"));
    trials.extend(even_trials_of::<i32, u64>("i32_u64"));
    trials.extend(even_trials_of::<f32, u32>("f32_u32"));
    trials.extend(even_trials_of::<f32, u64>("f32_u64"));
    // The most bins, over the whole i32 range (the 64-bit division), global atomics.
    let name = "histogram::even_i32_u32::max_bins_whole_range::prime_1000003".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let gpu = gpu()?;
        let mut rng = StdRng::seed_from_u64(seed);
        let mut input: Vec<i32> = (0..1_000_003).map(|_| rng.random()).collect();
        input[..4].copy_from_slice(&[i32::MIN, i32::MAX, i32::MAX - 1, 0]);
        let bins = histogram::MAX_BINS;
        let got = (|| {
            let d_in = gpu.upload(&input)?;
            let mut counts = gpu.poisoned(bins, POISON)?;
            let (lower, upper) = (i32::MIN.into(), i32::MAX.into());
            histogram::even(&gpu, &d_in, lower, upper, &mut counts, Update::Overwrite)?;
            gpu.download(&counts, "histogram_even_global_i32_u32")
        })()
        .map_err(|e| e.to_string())?;
        match compare(&got, &reference::even(&input, bins, i32::MIN.into(), i32::MAX.into())) {
            None => Ok(()),
            Some(d) => Err(format!("seed={seed}: {d}").into()),
        }
    }));
    trials
}

/// Runs `f` on a fresh handle with a few small buffers, for the refusals.
fn refusal(
    name: &str,
    f: impl FnOnce(&Gpu) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    gpu_trial(format!("histogram::refuses::{name}"), move || f(&gpu()?))
}

fn refusal_trials() -> Vec<Trial> {
    let up = |gpu: &Gpu| -> Result<_, Failed> {
        Ok((
            gpu.upload(&[1.0f32, 2.0, 3.0]).map_err(|e| e.to_string())?,
            gpu.zeros::<u32>(4).map_err(|e| e.to_string())?,
        ))
    };
    vec![
        refusal("zero_bins", move |gpu| {
            let (x, _) = up(gpu)?;
            let mut c = gpu.zeros::<u32>(0).map_err(|e| e.to_string())?;
            expect_err(
                histogram::even(gpu, &x, 0.0, 1.0, &mut c, Update::Overwrite),
                |e| {
                    matches!(
                        e,
                        Error::OutOfRange {
                            what: "bins",
                            value: 0,
                            ..
                        }
                    )
                },
            )
        }),
        refusal("more_than_max_bins", move |gpu| {
            let x = gpu.upload(&[1i32]).map_err(|e| e.to_string())?;
            let n = histogram::MAX_BINS + 1;
            let mut c = gpu.zeros::<u64>(n).map_err(|e| e.to_string())?;
            expect_err(
                histogram::even(gpu, &x, 0, 10, &mut c, Update::Overwrite),
                |e| matches!(e, Error::OutOfRange { value, .. } if *value == n as u64),
            )
        }),
        refusal("lower_equal_to_upper", move |gpu| {
            let x = gpu.upload(&[1u16]).map_err(|e| e.to_string())?;
            let mut c = gpu.zeros::<u32>(4).map_err(|e| e.to_string())?;
            expect_err(
                histogram::even(gpu, &x, 5, 5, &mut c, Update::Overwrite),
                |e| {
                    matches!(
                        e,
                        Error::InvalidRange {
                            lower: Level::Integer(5),
                            upper: Level::Integer(5),
                            ..
                        }
                    )
                },
            )
        }),
        refusal("lower_above_upper", move |gpu| {
            let x = gpu.upload(&[1u8]).map_err(|e| e.to_string())?;
            let mut c = gpu.zeros::<u32>(4).map_err(|e| e.to_string())?;
            expect_err(
                histogram::even(gpu, &x, 9, 2, &mut c, Update::Accumulate),
                |e| matches!(e, Error::InvalidRange { .. }),
            )
        }),
        refusal("nan_bounds", move |gpu| {
            let (x, mut c) = up(gpu)?;
            expect_err(
                histogram::even(gpu, &x, f32::NAN, 1.0, &mut c, Update::Overwrite),
                |e| matches!(e, Error::InvalidRange { .. }),
            )?;
            expect_err(
                histogram::even(gpu, &x, 0.0, f32::NAN, &mut c, Update::Overwrite),
                |e| matches!(e, Error::InvalidRange { .. }),
            )
        }),
        refusal("infinite_bounds", move |gpu| {
            let (x, mut c) = up(gpu)?;
            expect_err(
                histogram::even(gpu, &x, 0.0, f32::INFINITY, &mut c, Update::Overwrite),
                |e| matches!(e, Error::InvalidRange { .. }),
            )?;
            expect_err(
                histogram::even(gpu, &x, -3e38, 3e38, &mut c, Update::Overwrite),
                |e| {
                    matches!(
                        e,
                        Error::InvalidRange {
                            lower: Level::Float(l),
                            upper: Level::Float(u),
                            ..
                        } if *l == f64::from(-3e38f32) && *u == f64::from(3e38f32)
                    )
                },
            )
        }),
        refusal("integer_range_over_2e32_values", move |gpu| {
            let x = gpu.upload(&[1i32]).map_err(|e| e.to_string())?;
            let mut c = gpu.zeros::<u32>(4).map_err(|e| e.to_string())?;
            let (lower, upper) = (i32::MIN as i64 - 1, i32::MAX as i64 + 1);
            expect_err(
                histogram::even(gpu, &x, lower, upper, &mut c, Update::Overwrite),
                |e| {
                    matches!(
                        e,
                        Error::InvalidRange {
                            lower: Level::Integer(l),
                            upper: Level::Integer(u),
                            ..
                        } if *l == lower && *u == upper
                    )
                },
            )
        }),
        refusal("bytes_counts_of_the_wrong_length", move |gpu| {
            let x = gpu.upload(&[1u8, 2, 3]).map_err(|e| e.to_string())?;
            let mut c = gpu.zeros::<u32>(255).map_err(|e| e.to_string())?;
            expect_err(
                histogram::bytes(gpu, &x, &mut c, Update::Overwrite),
                |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            expected: 256,
                            actual: 255,
                            ..
                        }
                    )
                },
            )?;
            expect_err(
                ladder::run(gpu, ladder::Variant::Shared, &x, &mut c),
                |e| matches!(e, Error::LengthMismatch { actual: 255, .. }),
            )
        }),
        refusal("shared_atomic_rate_sink_of_two", move |gpu| {
            let mut sink = gpu.zeros::<u32>(2).map_err(|e| e.to_string())?;
            expect_err(
                ladder::shared_atomic_rate(gpu, ladder::AtomicPattern::OneAddress, 8, &mut sink),
                |e| matches!(e, Error::LengthMismatch { expected: 1, .. }),
            )
        }),
    ]
}

/// The microbenchmark runs and counts every atomic: word 0 of a block gets `iterations` from
/// each lane that hits it (all 32 lanes of warp 0 for `OneAddress`, lane 0 for
/// `DistinctBanks`).
fn atomic_rate_trials() -> Vec<Trial> {
    ladder::AtomicPattern::ALL
        .into_iter()
        .map(|pattern| {
            gpu_trial(
                format!("histogram::shared_atomic_rate::{pattern:?}"),
                move || {
                    let gpu = gpu()?;
                    let iterations = 1001;
                    let (launch, sink) = (|| {
                        let mut sink = gpu.zeros::<u32>(1)?;
                        let launch =
                            ladder::shared_atomic_rate(&gpu, pattern, iterations, &mut sink)?;
                        Ok::<_, Error>((launch, gpu.download(&sink, "histogram_shared_atomic_rate")?))
                    })()
                    .map_err(|e| e.to_string())?;
                    let blocks = launch.config.grid_dim.0 as u64;
                    let expected = match pattern {
                        ladder::AtomicPattern::DistinctBanks => Some(blocks * iterations as u64),
                        ladder::AtomicPattern::OneAddress => {
                            Some(blocks * 32 * iterations as u64)
                        }
                        ladder::AtomicPattern::RandomBins => None,
                    };
                    if launch.atomics != blocks * 512 * iterations as u64 {
                        return Err(format!("{} atomics reported", launch.atomics).into());
                    }
                    match expected {
                        Some(e) if e as u32 != sink[0] => {
                            Err(format!("sink {}, expected {}", sink[0], e as u32).into())
                        }
                        _ => Ok(()),
                    }
                },
            )
        })
        .collect()
}

/// More than 2^32 bytes: into `u64` counts with `even` and `bytes` (u32 counts would wrap:
/// `bytes` into `u32` refuses the length).
fn large_trials() -> Vec<Trial> {
    let name = "histogram::even_u8_u64::2e32_plus_17".to_string();
    let seed = seed_for(&name);
    vec![gpu_trial(name, move || {
        let _big = large_memory();
        let gpu = gpu()?;
        let n = (1usize << 32) + 17;
        // A cheap hash of the index and the seed: 2^32 random draws would dominate the trial.
        // One value in four is 7, so bin 0 passes 2^32 in `u64`.
        let input: Vec<u8> = (0..n as u64)
            .map(|i| {
                let h = (i ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56;
                if h & 3 == 0 { 7 } else { h as u8 }
            })
            .collect();
        let bins = 5;
        let (got, got_bytes, refused) = (|| {
            let d_in = gpu.upload(&input)?;
            let mut counts = gpu.poisoned(bins, u64::MAX)?;
            histogram::even(&gpu, &d_in, 0, 256, &mut counts, Update::Overwrite)?;
            // `bytes` into u64 counts takes any length, into u32 refuses what they could not
            // hold.
            let mut byte_counts = gpu.poisoned(256, u64::MAX)?;
            histogram::bytes(&gpu, &d_in, &mut byte_counts, Update::Overwrite)?;
            let mut small = gpu.zeros::<u32>(256)?;
            let refused = histogram::bytes(&gpu, &d_in, &mut small, Update::Overwrite);
            Ok::<_, Error>((
                gpu.download(&counts, "histogram_even_shared_u8_u64")?,
                gpu.download(&byte_counts, "histogram_bytes_u64")?,
                refused,
            ))
        })()
        .map_err(|e| e.to_string())?;
        if !matches!(refused, Err(Error::OutOfRange { .. })) {
            return Err(format!("bytes of {n} bytes: {refused:?}, expected OutOfRange").into());
        }
        if let Some(d) = compare(&got_bytes, &reference::bytes(&input)) {
            return Err(format!("bytes into u64, n={n} seed={seed}: {d}").into());
        }
        match compare(&got, &reference::even(&input, bins, 0, 256)) {
            None => Ok(()),
            Some(d) => Err(format!("n={n} seed={seed}: {d}").into()),
        }
    })]
}

pub fn trials() -> Vec<Trial> {
    let mut trials = ladder_trials();
    trials.extend(bytes_trials());
    trials.extend(even_trials());
    trials.extend(refusal_trials());
    trials.extend(atomic_rate_trials());
    trials.extend(large_trials());
    trials
}
