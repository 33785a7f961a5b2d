//! GPU trials of the scans with operators (`cpu::scan::ops`: `Sum`, `Product`, `Min`, `Max` of
//! `i8`..`i64`, `u8`..`u64`, `f32`, `f64`, `f16`; inclusive, inclusive from an initial value,
//! exclusive from an initial value; in place), the scan by key and the segmented reductions, each
//! against the CPU on seeded random inputs at 1, 2, 31, 1000003 and 2^24 + 1 elements, outputs
//! poisoned before each launch.
//!
//! Integer scans are exact (wrapping). Min and max are exact for every type. Float sums are
//! checked within `(2 * 16384 + 64) * eps * (|x_0| + ... + |x_i|)` of an `f64` scan (the
//! look-back's order: one rounding per earlier tile, at most 16385 tiles at 2^24 + 1 elements,
//! plus under 96 inside a tile); float products use exact factors (`±1` with a few 2s and halves) and
//! must be exact.

use cpu::reduce::{F16, Max, Min, Product, Sum};
use cpu::reduce::reference as reduce_reference;
use cpu::reduce::samples::Sample;
use cpu::scan::{self, Kind, ScanKind};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The sizes every scan runs at.
const SIZES: [(&str, usize); 5] = [
    ("1", 1),
    ("2", 2),
    ("31", 31),
    ("1000003", 1_000_003),
    ("2e24_plus_1", (1 << 24) + 1),
];

/// The machine epsilon of `T`'s scans, which run in the element type (`f32` for `f16`).
fn scan_eps<T: Sample>() -> Option<f64> {
    T::EPS.map(|_| {
        if T::NAME == "f64" {
            f64::EPSILON
        } else {
            f32::EPSILON as f64
        }
    })
}

/// An operator of the trials: its name, CPU operation and identity.
#[derive(Clone, Copy)]
enum Op {
    Sum,
    Product,
    Min,
    Max,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Product => "product",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    /// The CPU's combination: wrapping for integers; floats in `f64` (rounded to the type for
    /// min/max, which are exact anyway).
    fn combine<T: Sample>(self, a: T, b: T) -> T {
        let nan = |x: T| reduce_reference::Ordered::is_nan(x);
        match self {
            Op::Sum => T::wrapping_add(a, b),
            Op::Product => T::wrapping_mul(a, b),
            Op::Min => {
                if nan(a) || (!nan(b) && a <= b) { a } else { b }
            }
            Op::Max => {
                if nan(a) || (!nan(b) && a >= b) { a } else { b }
            }
        }
    }
}

/// The CPU scan of `x` (floats in `f64`: `f64` partial sums and `|x|` sums for the bound).
fn cpu_scan<T: Sample>(op: Op, x: &[T], kind: Kind, init: Option<T>) -> (Vec<f64>, Vec<f64>, Vec<T>) {
    let mut exact = Vec::with_capacity(x.len());
    let (mut sums, mut mags) = (Vec::with_capacity(x.len()), Vec::with_capacity(x.len()));
    let mut acc: Option<T> = init;
    let (mut s, mut m) = (init.map_or(0.0, T::to_f64), init.map_or(0.0, |v| v.to_f64().abs()));
    for &v in x {
        if kind == Kind::Exclusive {
            exact.push(acc.unwrap_or_default());
            sums.push(s);
            mags.push(m);
        }
        acc = Some(match acc {
            None => v,
            Some(a) => op.combine(a, v),
        });
        s += v.to_f64();
        m += v.to_f64().abs();
        if kind == Kind::Inclusive {
            exact.push(acc.unwrap_or(v));
            sums.push(s);
            mags.push(m);
        }
    }
    (sums, mags, exact)
}

/// Compares a scan's output with the CPU: exact, but float sums within the look-back's bound.
fn check<T: Sample>(op: Op, got: &[T], x: &[T], kind: Kind, init: Option<T>, what: &str) -> Result<(), Failed> {
    let (sums, mags, exact) = cpu_scan(op, x, kind, init);
    for i in 0..got.len() {
        let ok = match (op, scan_eps::<T>()) {
            (Op::Sum, Some(eps)) => {
                let bound = (2.0 * 16384.0 + 64.0) * eps * mags[i] + if T::NAME == "f16" { mags[i].max(1.0) * 1e-3 } else { 0.0 };
                (got[i].to_f64() - sums[i]).abs() <= bound
            }
            _ => {
                got[i] == exact[i]
                    || (reduce_reference::Ordered::is_nan(got[i]) && reduce_reference::Ordered::is_nan(exact[i]))
            }
        };
        if !ok {
            return Err(format!(
                "{what}: first mismatch at {i}: got {:?}, expected {:?} (f64 {})",
                got[i], exact[i], sums[i]
            )
            .into());
        }
    }
    Ok(())
}

/// Runs one scan `K` on the GPU into a poisoned output; returns the output.
fn gpu_scan<K: ScanKind>(
    gpu: &cpu::Gpu,
    x: &[K::Item],
    kind: Kind,
    init: Option<K::Item>,
    poison: K::Item,
) -> Result<Vec<K::Item>, Failed>
where
    K::Item: Default + Clone,
{
    let e = |e: cpu::Error| e.to_string();
    let d = gpu.upload(x).map_err(e)?;
    let mut out = gpu.upload(&vec![poison; x.len()]).map_err(e)?;
    match (kind, init) {
        (Kind::Inclusive, None) => scan::inclusive_scan::<K>(gpu, &d, &mut out),
        (Kind::Inclusive, Some(v)) => scan::inclusive_scan_init::<K>(gpu, &d, v, &mut out),
        (Kind::Exclusive, v) => scan::exclusive_scan::<K>(gpu, &d, v.unwrap_or_default(), &mut out),
    }
    .map_err(e)?;
    Ok(gpu.download(&out, "scan").map_err(e)?)
}

/// The trials of one type.
fn type_trials<T: Sample>() -> Vec<Trial>
where
    Sum<T>: ScanKind<Item = T>,
    Product<T>: ScanKind<Item = T>,
    Min<T>: ScanKind<Item = T>,
    Max<T>: ScanKind<Item = T>,
{
    let mut trials = Vec::new();
    for (case, n) in SIZES {
        for op in [Op::Sum, Op::Product, Op::Min, Op::Max] {
            let name = format!("scan::ops::{}::{}::{case}", op.name(), T::NAME);
            let seed = seed_for(&name);
            trials.push(gpu_trial(name.clone(), move || {
                let gpu = gpu()?;
                let x = match op {
                    Op::Product => T::factors(seed, n),
                    _ => T::random(seed, n),
                };
                let float_product = matches!(op, Op::Product) && T::EPS.is_some();
                let init = T::from_f64(if float_product { -1.0 } else { 3.0 });
                for (kind, init) in [
                    (Kind::Inclusive, None),
                    (Kind::Inclusive, Some(init)),
                    (Kind::Exclusive, Some(init)),
                ] {
                    let what = format!("{name} {kind:?} init={init:?} seed={seed}");
                    let got = match op {
                        Op::Sum => gpu_scan::<Sum<T>>(&gpu, &x, kind, init, T::poison()),
                        Op::Product => gpu_scan::<Product<T>>(&gpu, &x, kind, init, T::poison()),
                        Op::Min => gpu_scan::<Min<T>>(&gpu, &x, kind, init, T::poison()),
                        Op::Max => gpu_scan::<Max<T>>(&gpu, &x, kind, init, T::poison()),
                    }?;
                    check(op, &got, &x, kind, init, &what)?;
                }
                Ok(())
            }));
        }
    }
    trials
}

/// `cummax` with NaN: every output from the first NaN on is NaN; in place on a view.
fn special_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    trials.push(gpu_trial("scan::ops::cummax::f32::nan".into(), || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| e.to_string();
        let n = 100_003;
        let mut x = f32::random(seed_for("scan nan"), n);
        x[n / 2] = f32::NAN;
        let d = gpu.upload(&x).map_err(e)?;
        let mut out = gpu.upload(&vec![0.0f32; n]).map_err(e)?;
        scan::cummax(&gpu, &d, &mut out).map_err(e)?;
        let got = gpu.download(&out, "cummax").map_err(e)?;
        check(Op::Max, &got, &x, Kind::Inclusive, None, "cummax nan")
    }));
    trials.push(gpu_trial("scan::ops::cummin::i16::in_place_view".into(), || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| e.to_string();
        let x = i16::random(seed_for("scan in place"), 70_001);
        let mut d = gpu.upload(&x).map_err(e)?;
        let mut ws = scan::ScanWorkspace::<i16>::new(&gpu).map_err(e)?;
        ws.scan_with_in_place::<Min<i16>>(&gpu, Kind::Inclusive, None, &mut d.slice_mut(3..))
            .map_err(e)?;
        let got = gpu.download(&d, "cummin").map_err(e)?;
        if got[..3] != x[..3] {
            return Err("the elements before the view changed".into());
        }
        check(Op::Min, &got[3..], &x[3..], Kind::Inclusive, None, "cummin in place")
    }));
    trials.push(gpu_trial("scan::ops::lengths_differ".into(), || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| e.to_string();
        let d = gpu.upload(&[1u8, 2, 3]).map_err(e)?;
        let mut out = gpu.zeros::<u8>(2).map_err(e)?;
        expect_err(scan::cumsum(&gpu, &d, &mut out), |e| {
            matches!(e, cpu::Error::LengthMismatch { .. })
        })
    }));
    trials
}

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    trials.extend(type_trials::<i8>());
    trials.extend(type_trials::<i16>());
    trials.extend(type_trials::<i32>());
    trials.extend(type_trials::<i64>());
    trials.extend(type_trials::<u8>());
    trials.extend(type_trials::<u16>());
    trials.extend(type_trials::<u32>());
    trials.extend(type_trials::<u64>());
    trials.extend(type_trials::<f32>());
    trials.extend(type_trials::<f64>());
    trials.extend(type_trials::<F16>());
    trials.extend(special_trials());
    trials.extend(by_key_trials());
    trials
}

/// Keys with runs of random lengths (1 to `max_run`), as `u32`.
fn runs(seed: u64, n: usize, max_run: usize) -> Vec<u32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut keys = Vec::with_capacity(n);
    let mut key = 0u32;
    while keys.len() < n {
        let len = rng.random_range(1..=max_run).min(n - keys.len());
        key = key.wrapping_add(rng.random_range(1..4));
        keys.extend(std::iter::repeat_n(key, len));
    }
    keys
}

/// The CPU's inclusive scan by key.
fn cpu_by_key<T: Sample>(op: Op, keys: &[u32], x: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        let v = if i > 0 && keys[i] == keys[i - 1] {
            op.combine(out[i - 1], x[i])
        } else {
            x[i]
        };
        out.push(v);
    }
    out
}

/// Scan by key of `T` with `op` at every size, runs of up to `max_run` equal keys.
fn by_key_trial<K: scan::ByKeyKind>(op: Op, case: &'static str, n: usize, max_run: usize) -> Trial
where
    K::Item: Sample,
{
    let name = format!("scan::by_key::{}::{}::{case}_runs_{max_run}", op.name(), <K::Item as Sample>::NAME);
    let seed = seed_for(&name);
    gpu_trial(name.clone(), move || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| e.to_string();
        let keys = runs(seed, n, max_run);
        let x = <K::Item as Sample>::random(seed ^ 1, n);
        let (d_keys, d_x) = (gpu.upload(&keys).map_err(e)?, gpu.upload(&x).map_err(e)?);
        let mut out = gpu
            .upload(&vec![<K::Item as Sample>::poison(); n])
            .map_err(e)?;
        scan::inclusive_scan_by_key::<K>(&gpu, &d_keys, &d_x, &mut out).map_err(e)?;
        let got = gpu.download(&out, "scan_by_key").map_err(e)?;
        let expected = cpu_by_key(op, &keys, &x);
        // Float sums: the f64 sum and the sum of magnitudes of each element's segment so far.
        let (mut sum, mut mag) = (0.0f64, 0.0f64);
        for i in 0..n {
            if i == 0 || keys[i] != keys[i - 1] {
                (sum, mag) = (0.0, 0.0);
            }
            sum += x[i].to_f64();
            mag += x[i].to_f64().abs();
            let ok = match (op, scan_eps::<K::Item>()) {
                (Op::Sum, Some(eps)) => {
                    // The look-back's order: at most two tiles' depth of roundings plus trees.
                    let bound = (2.0 * 16384.0 + 64.0) * eps * mag;
                    (got[i].to_f64() - sum).abs() <= bound
                }
                _ => got[i] == expected[i],
            };
            if !ok {
                return Err(format!(
                    "{name} seed={seed}: first mismatch at {i}: got {:?}, expected {:?}",
                    got[i], expected[i]
                )
                .into());
            }
        }
        Ok(())
    })
}

fn by_key_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (case, n) in SIZES {
        for max_run in [1, 7, 5000] {
            trials.push(by_key_trial::<Sum<i32>>(Op::Sum, case, n, max_run));
            trials.push(by_key_trial::<Sum<f32>>(Op::Sum, case, n, max_run));
            trials.push(by_key_trial::<Sum<u64>>(Op::Sum, case, n, max_run));
            trials.push(by_key_trial::<Sum<f64>>(Op::Sum, case, n, max_run));
            trials.push(by_key_trial::<Max<f32>>(Op::Max, case, n, max_run));
            trials.push(by_key_trial::<Min<i64>>(Op::Min, case, n, max_run));
        }
    }
    // One segment spanning every tile: the look-back carries a running value across them all.
    trials.push(by_key_trial::<Sum<i32>>(Op::Sum, "one_run", 1 << 22, 1 << 22));
    trials
}
