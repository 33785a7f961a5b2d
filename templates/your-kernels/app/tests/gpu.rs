//! The kernels against their CPU references, and the PTX against the kernels' handles.
//!
//! - GPU trials: every kernel (the generic one at every type it is instantiated for) on seeded
//!   random inputs of sizes that are not multiples of the block, outputs poisoned (NaN) before
//!   each launch (`axpy` updates its input in place, which is its own poison), compared exactly
//!   where the GPU rounds as the CPU does and within a derived bound where it does not; and the
//!   launchers' refusals. Where no GPU can be opened they are reported as ignored, never as
//!   passed; `cargo test -- --include-ignored` runs them anyway (and they fail, saying why).
//! - Host trials (any machine): the embedded PTX holds an entry for every kernel, with the
//!   parameters of its handle, and a PTX with one parameter removed is refused as stale.
//!
//! A failure names the trial, the seed (replay with `APP_SEED=<seed>`) and the first
//! mismatching index.

use std::sync::OnceLock;

use app::{AxpyElement, BLOCK_SUM_THREADS, Error, reference};
use gpu_host::{Device, Module};
use libtest_mimic::{Arguments, Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Sizes of every GPU trial: empty, one element, under one warp, one past a block, and a
/// million and three (a partial last block; more blocks than the GPU runs at once).
const SIZES: [usize; 5] = [0, 1, 31, 257, 1_000_003];

/// Device 0 and the kernels' module on it, opened once per test binary (trials run in parallel
/// threads and queue their work on its stream). `None` where no GPU can be opened.
fn device() -> Option<&'static (Device, Result<Module, String>)> {
    static DEVICE: OnceLock<Option<(Device, Result<Module, String>)>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            let device = Device::new(0).ok()?;
            let module = app::load(&device).map_err(|e| e.to_string());
            Some((device, module))
        })
        .as_ref()
}

/// The device and the module, or why not (a module that fails to load fails the trial).
fn gpu() -> Result<(&'static Device, &'static Module), Failed> {
    let Some((device, module)) = device() else {
        return Err(no_gpu().into());
    };
    let module = module
        .as_ref()
        .map_err(|e| format!("loading the kernels: {e}"))?;
    Ok((device, module))
}

/// Why device 0 cannot be opened (the kit's one sentence).
fn no_gpu() -> String {
    Device::new(0)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

/// A GPU trial: ignored where no GPU can be opened.
fn gpu_trial(name: String, test: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    Trial::test(name, test).with_ignored_flag(device().is_none())
}

/// The run's base seed: `APP_SEED` if set (to replay a failure), else fresh.
fn base_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        std::env::var("APP_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(rand::random)
    })
}

/// The seed of one named trial: every trial gets its own data, replayable with `APP_SEED`.
fn seed_for(name: &str) -> u64 {
    name.bytes().fold(base_seed(), |h, b| {
        h.wrapping_mul(0x100_0000_01b3).wrapping_add(b.into())
    })
}

/// An element type of the random inputs: floats uniform in `[-1, 1)`, integers over their
/// whole range (the kernels wrap).
trait Sample: AxpyElement + Default {
    /// A random value.
    fn sample(rng: &mut StdRng) -> Self;
}

impl Sample for f32 {
    fn sample(rng: &mut StdRng) -> f32 {
        rng.random_range(-1.0..1.0)
    }
}

impl Sample for f64 {
    fn sample(rng: &mut StdRng) -> f64 {
        rng.random_range(-1.0..1.0)
    }
}

impl Sample for i32 {
    fn sample(rng: &mut StdRng) -> i32 {
        rng.random()
    }
}

impl Sample for u32 {
    fn sample(rng: &mut StdRng) -> u32 {
        rng.random()
    }
}

fn random<T: Sample>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::sample(rng)).collect()
}

/// Fails naming the first index where `got` and `want` differ (by `==`, so a NaN left by an
/// unwritten element never matches).
fn expect_equal<T: AxpyElement>(
    case: &str,
    seed: u64,
    got: &[T],
    want: &[T],
) -> Result<(), Failed> {
    if got.len() != want.len() {
        return Err(format!(
            "{case} (seed {seed}): {} elements, expected {}",
            got.len(),
            want.len()
        )
        .into());
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{case} (seed {seed}): element {i} is {:?}, expected {:?}",
            got[i], want[i]
        )
        .into()),
    }
}

fn add_trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = SIZES
        .iter()
        .map(|&n| {
            let name = format!("add::n_{n}");
            gpu_trial(name.clone(), move || {
                let (device, module) = gpu()?;
                let seed = seed_for(&name);
                let mut rng = StdRng::seed_from_u64(seed);
                let (x, y) = (random::<f32>(&mut rng, n), random::<f32>(&mut rng, n));
                let (d_x, d_y) = (device.upload(&x)?, device.upload(&y)?);
                let mut d_z = device.upload(&vec![f32::NAN; n])?;
                app::add(module, &d_x, &d_y, &mut d_z)?;
                let z = device.download(&d_z)?;
                // One rounding on both sides: equal.
                expect_equal(&name, seed, &z, &reference::add(&x, &y))
            })
        })
        .collect();
    trials.push(gpu_trial("add::refuses_unequal_lengths".into(), || {
        let (device, module) = gpu()?;
        let (d_x, d_y) = (device.zeros::<f32>(10)?, device.zeros::<f32>(9)?);
        let mut d_z = device.zeros::<f32>(10)?;
        match app::add(module, &d_x, &d_y, &mut d_z) {
            Err(Error::LengthMismatch {
                what: "add: y",
                expected: 10,
                actual: 9,
            }) => Ok(()),
            other => Err(format!("expected a length mismatch of y, got {other:?}").into()),
        }
    }));
    trials
}

fn block_sum_trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = SIZES
        .iter()
        .map(|&n| {
            let name = format!("block_sum::n_{n}");
            gpu_trial(name.clone(), move || {
                let (device, module) = gpu()?;
                let seed = seed_for(&name);
                let x = random::<f32>(&mut StdRng::seed_from_u64(seed), n);
                let d_x = device.upload(&x)?;
                let blocks = n.div_ceil(BLOCK_SUM_THREADS as usize);
                let mut d_sums = device.upload(&vec![f32::NAN; blocks])?;
                app::block_sums(module, &d_x, &mut d_sums)?;
                let sums = device.download(&d_sums)?;
                let want = reference::block_sums(&x);
                for (b, block) in x.chunks(BLOCK_SUM_THREADS as usize).enumerate() {
                    let error = (f64::from(sums[b]) - want[b]).abs();
                    let bound = reference::block_sum_tolerance(block);
                    // A NaN (an unwritten sum) is not within any bound.
                    let within = error <= bound;
                    if !within {
                        return Err(format!(
                            "{name} (seed {seed}): block {b} sums to {}, expected {} (error \
                             {error:e}, bound {bound:e})",
                            sums[b], want[b]
                        )
                        .into());
                    }
                }
                Ok(())
            })
        })
        .collect();
    trials.push(gpu_trial(
        "block_sum::refuses_a_sums_buffer_of_another_length".into(),
        || {
            let (device, module) = gpu()?;
            let d_x = device.zeros::<f32>(257)?;
            let mut d_sums = device.zeros::<f32>(1)?;
            match app::block_sums(module, &d_x, &mut d_sums) {
                Err(Error::LengthMismatch {
                    expected: 2,
                    actual: 1,
                    ..
                }) => Ok(()),
                other => Err(format!("expected a length mismatch of sums, got {other:?}").into()),
            }
        },
    ));
    trials
}

/// The trials of `axpy::<T>` at every size, named `axpy::<type>::n_<n>`.
fn axpy_trials<T: Sample + Send + 'static>(type_name: &'static str) -> Vec<Trial> {
    SIZES
        .iter()
        .map(|&n| {
            let name = format!("axpy::{type_name}::n_{n}");
            gpu_trial(name.clone(), move || {
                let (device, module) = gpu()?;
                let seed = seed_for(&name);
                let mut rng = StdRng::seed_from_u64(seed);
                let a = T::sample(&mut rng);
                let (x, y) = (random::<T>(&mut rng, n), random::<T>(&mut rng, n));
                let d_x = device.upload(&x)?;
                // `y` is read and written: the input itself is the poison (an element the
                // kernel misses keeps `y[i]`, which is `a x[i] + y[i]` only where `a x[i]`
                // is 0).
                let mut d_y = device.upload(&y)?;
                app::axpy(module, a, &d_x, &mut d_y)?;
                let got = device.download(&d_y)?;
                // The GPU's FMA rounds once, as `mul_add`; integers wrap on both sides.
                expect_equal(&name, seed, &got, &reference::axpy(a, &x, &y))
            })
        })
        .collect()
}

fn axpy_error_trials() -> Vec<Trial> {
    vec![gpu_trial("axpy::refuses_unequal_lengths".into(), || {
        let (device, module) = gpu()?;
        let d_x = device.zeros::<f64>(3)?;
        let mut d_y = device.zeros::<f64>(4)?;
        match app::axpy(module, 1.0, &d_x, &mut d_y) {
            Err(Error::LengthMismatch {
                what: "axpy: x",
                expected: 4,
                actual: 3,
            }) => Ok(()),
            other => Err(format!("expected a length mismatch of x, got {other:?}").into()),
        }
    })]
}

/// `ptx` with the first `.param` line of the entry `entry` removed.
fn without_first_param(ptx: &str, entry: &str) -> String {
    let head = format!(".entry {entry}(");
    let mut lines: Vec<&str> = ptx.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_end().ends_with(&head))
        .expect("the entry is in the PTX");
    let param = start
        + 1
        + lines[start + 1..]
            .iter()
            .position(|l| l.trim_start().starts_with(".param"))
            .expect("the entry has parameters");
    lines.remove(param);
    lines.join("\n")
}

fn host_trials() -> Vec<Trial> {
    vec![
        Trial::test("host::the_ptx_matches_every_kernel_handle", || {
            gpu_host::Library::check(&app::KERNELS)?;
            for (sm, ptx) in app::ptx_by_arch()? {
                Module::check(app::KERNEL_CRATE, &ptx).map_err(|e| format!("sm_{sm}: {e}"))?;
                let entries = entry_names(&ptx);
                for kernel in [
                    "add",
                    "block_sum",
                    "axpy_f32",
                    "axpy_f64",
                    "axpy_i32",
                    "axpy_u32",
                    "polynomial",
                ] {
                    if !entries.iter().any(|e| e == kernel) {
                        return Err(format!("sm_{sm}: no entry {kernel} in {entries:?}").into());
                    }
                }
            }
            Ok(())
        }),
        Trial::test("host::a_ptx_without_a_parameter_is_stale", || {
            for (sm, ptx) in app::ptx_by_arch()? {
                let altered = without_first_param(&ptx, "add");
                match Module::check(app::KERNEL_CRATE, &altered) {
                    Err(gpu_host::Error::StalePtx { krate, .. }) if krate == app::KERNEL_CRATE => {}
                    other => {
                        return Err(format!(
                            "sm_{sm}: expected StalePtx for an `add` without its first \
                             parameter, got {other:?}"
                        )
                        .into());
                    }
                }
            }
            Ok(())
        }),
        Trial::test("host::the_ptx_targets_its_architecture", || {
            for (sm, ptx) in app::ptx_by_arch()? {
                if !ptx.lines().any(|l| l.trim() == format!(".target sm_{sm}")) {
                    return Err(format!("the PTX embedded as sm_{sm} targets another").into());
                }
            }
            Ok(())
        }),
    ]
}

/// The `.entry` names of a PTX text.
fn entry_names(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.split(".entry ").nth(1))
        .map(|rest| rest.trim_end_matches('(').trim().to_string())
        .collect()
}

fn min_max_trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = SIZES
        .iter()
        .map(|&n| {
            let name = format!("reduce_monoid::min_max::n_{n}");
            gpu_trial(name.clone(), move || {
                let (device, module) = gpu()?;
                let seed = seed_for(&name);
                let mut rng = StdRng::seed_from_u64(seed);
                let x = random::<f32>(&mut rng, n);
                // One pair `{ x, x }` per value: a buffer of the kernel crate's own struct.
                let pairs: Vec<kernels::MinMax> = x
                    .iter()
                    .map(|&v| kernels::MinMax { min: v, max: v })
                    .collect();
                let got = app::min_max(module, &device.upload(&pairs)?)?;
                let none = kernels::MinMax {
                    min: f32::INFINITY,
                    max: f32::NEG_INFINITY,
                };
                let expected = x.iter().fold(none, |m, &v| kernels::MinMax {
                    min: m.min.min(v),
                    max: m.max.max(v),
                });
                // Minima and maxima are exact in any order.
                if got == expected {
                    Ok(())
                } else {
                    Err(format!("{name} seed={seed}: got {got:?}, expected {expected:?}").into())
                }
            })
        })
        .collect();
    trials
}

fn polynomial_trials() -> Vec<Trial> {
    // One trial for every size, in turn: the coefficients are the module's, and the read-back
    // below must not see another trial's.
    let mut trials = vec![gpu_trial("polynomial::every_size".into(), || {
        let (device, module) = gpu()?;
        for &n in &SIZES {
            let name = format!("polynomial::n_{n}");
            let seed = seed_for(&name);
            let mut rng = StdRng::seed_from_u64(seed);
            let x = random::<f32>(&mut rng, n);
            let c: [f32; 4] = std::array::from_fn(|_| rng.random_range(-2.0..2.0));
            let mut y = device.upload(&vec![f32::NAN; n])?;
            app::polynomial(module, &c, &device.upload(&x)?, &mut y)?;
            let got = device.download(&y)?;
            // The coefficients are in constant memory, as written.
            let back = module.read_constant(kernels::C_POLYNOMIAL)?;
            if back != c {
                return Err(format!("{name}: C_POLYNOMIAL holds {back:?}, not {c:?}").into());
            }
            // Horner's rule with one rounding per FMA, on both sides: exact.
            let expected = reference::polynomial(&c, &x);
            if let Some(i) = got
                .iter()
                .zip(&expected)
                .position(|(g, e)| g.to_bits() != e.to_bits())
            {
                return Err(format!(
                    "{name} seed={seed}: y[{i}] = {}, expected {}",
                    got[i], expected[i]
                )
                .into());
            }
        }
        Ok(())
    })];
    trials.push(gpu_trial(
        "polynomial::refuses_more_coefficients_than_the_array".into(),
        || {
            let (_, module) = gpu()?;
            match module.write_constant(kernels::C_POLYNOMIAL, &[1.0; 5]) {
                Err(gpu_host::Error::GlobalTooSmall {
                    capacity: 16,
                    requested: 20,
                    ..
                }) => Ok(()),
                other => Err(format!("expected GlobalTooSmall, got {other:?}").into()),
            }
        },
    ));
    trials.push(gpu_trial(
        "polynomial::refuses_a_length_mismatch".into(),
        || {
            let (device, module) = gpu()?;
            let x = device.zeros::<f32>(5)?;
            let mut y = device.zeros::<f32>(6)?;
            match app::polynomial(module, &[0.0; 4], &x, &mut y) {
                Err(Error::LengthMismatch {
                    expected: 6,
                    actual: 5,
                    ..
                }) => Ok(()),
                other => Err(format!("expected a length mismatch, got {other:?}").into()),
            }
        },
    ));
    trials
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = host_trials();
    trials.extend(add_trials());
    trials.extend(block_sum_trials());
    trials.extend(axpy_trials::<f32>("f32"));
    trials.extend(axpy_trials::<f64>("f64"));
    trials.extend(axpy_trials::<i32>("i32"));
    trials.extend(axpy_trials::<u32>("u32"));
    trials.extend(axpy_error_trials());
    trials.extend(min_max_trials());
    trials.extend(polynomial_trials());
    match device() {
        None => eprintln!("{}: the GPU tests are reported as ignored", no_gpu()),
        Some(_) => eprintln!(
            "GPU tests: base seed {} (replay with APP_SEED)",
            base_seed()
        ),
    }
    libtest_mimic::run(&args, trials).exit();
}
