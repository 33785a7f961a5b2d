//! GPU trials of `reduce_op`: every (operator, type) pair of `cpu::reduce::ops` (`Sum`,
//! `Product`, `Min`, `Max`, `ArgMin`, `ArgMax` of `i8`..`i64`, `u8`..`u64`, `f32`, `f64`,
//! `f16`) at 1, 2, 31, 1000003 and 2^24 + 1 elements against the CPU, plus NaN, ties, signed
//! zeros, infinities, empty inputs and views that start off a 16-byte boundary.
//!
//! Integer results are exact (wrapping sums and products of odd numbers, which never reach 0).
//! Float products are exact too: the inputs are `±1` with at most 64 factors of 2, 64 of 0.5
//! and 8 of 3, so every partial product in any order is a representable number. Float sums are
//! checked against an `f64` sum within the rounding bound of the launch's depth.
//!
//! The segmented reductions (`reduce::segmented_reduce`) run every operator of every type over
//! CSR offsets with many short and empty segments and one long one (the arg-reductions without
//! the empty ones, which they refuse by name), and refuse offsets that decrease or pass the
//! input's end; segments whose every element is the identity's value name their first element;
//! code bounded by `T: Element` alone runs.

use cpu::reduce::{
    self, ArgMax, ArgMin, Element, F16, Max, Min, Product, Reduce, ReduceKind, SegmentedKind, Sum,
};
use cudarc::driver::CudaSlice;
use cpu::reduce::reference;
use cpu::reduce::samples::{Sample, SumReference};
use cudarc::driver::LaunchConfig;
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The sizes every pair runs at.
const SIZES: [(&str, usize); 5] = [
    ("1", 1),
    ("2", 2),
    ("31", 31),
    ("1000003", 1_000_003),
    ("2e24_plus_1", (1 << 24) + 1),
];

/// Runs the reduction `K` over `input` with a fresh workspace; returns the result and the launch.
fn run<K: ReduceKind>(
    gpu: &cpu::Gpu,
    input: &[K::Input],
    offset: usize,
) -> Result<(K::Output, LaunchConfig), Failed> {
    let e = |e: cpu::Error| e.to_string();
    let d = gpu.upload(input).map_err(e)?;
    let view = d.slice(offset..);
    let mut ws = Reduce::<K>::new(gpu).map_err(e)?;
    let cfg = ws.launch(gpu, &view).map_err(e)?;
    let acc = ws.result(gpu).map_err(e)?;
    Ok((K::output(acc, input.len() - offset).map_err(e)?, cfg))
}

/// `got == expected`, or a message naming the trial.
fn same<V: std::fmt::Debug + PartialEq>(what: &str, got: V, expected: V) -> Result<(), Failed> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, expected {expected:?}").into())
    }
}

/// Arg-results are equal when the indices are and the values are (both NaN counts as equal).
fn same_arg<T: Sample>(what: &str, got: (usize, T), expected: (usize, T)) -> Result<(), Failed> {
    let values = got.1 == expected.1
        || (reference::Ordered::is_nan(got.1) && reference::Ordered::is_nan(expected.1));
    if got.0 == expected.0 && values {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, expected {expected:?}").into())
    }
}

/// Min/max values are equal, or both NaN.
fn same_value<T: Sample>(what: &str, got: T, expected: T) -> Result<(), Failed> {
    if got == expected || (reference::Ordered::is_nan(got) && reference::Ordered::is_nan(expected))
    {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, expected {expected:?}").into())
    }
}

/// Checks every operator on `input[offset..]`.
fn check_all<T: Sample>(gpu: &cpu::Gpu, input: &[T], offset: usize, what: &str) -> Result<(), Failed>
where
    Sum<T>: ReduceKind<Input = T, Output = T::Wide>,
    Product<T>: ReduceKind<Input = T, Output = T::Prod>,
    Min<T>: ReduceKind<Input = T, Output = T>,
    Max<T>: ReduceKind<Input = T, Output = T>,
    ArgMin<T>: ReduceKind<Input = T, Output = (usize, T)>,
    ArgMax<T>: ReduceKind<Input = T, Output = (usize, T)>,
    T::Wide: std::fmt::Debug + PartialEq,
    T::Prod: std::fmt::Debug + PartialEq,
{
    let x = &input[offset..];
    check_sum::<T>(gpu, input, offset, what)?;
    let (got, _) = run::<Min<T>>(gpu, input, offset)?;
    let expected = reference::argmin(x).map_or(T::from_f64(f64::INFINITY), |(_, v)| v);
    same_value(&format!("min {what}"), got, expected)?;
    let (got, _) = run::<Max<T>>(gpu, input, offset)?;
    let expected = reference::argmax(x).map_or(T::from_f64(f64::NEG_INFINITY), |(_, v)| v);
    same_value(&format!("max {what}"), got, expected)?;
    if let Some(expected) = reference::argmin(x) {
        let (got, _) = run::<ArgMin<T>>(gpu, input, offset)?;
        same_arg(&format!("argmin {what}"), got, expected)?;
    }
    if let Some(expected) = reference::argmax(x) {
        let (got, _) = run::<ArgMax<T>>(gpu, input, offset)?;
        same_arg(&format!("argmax {what}"), got, expected)?;
    }
    Ok(())
}

/// Checks `Sum<T>` on `input[offset..]`: exact for integers, within the depth's bound for floats.
fn check_sum<T: Sample>(gpu: &cpu::Gpu, input: &[T], offset: usize, what: &str) -> Result<(), Failed>
where
    Sum<T>: ReduceKind<Input = T, Output = T::Wide>,
    T::Wide: std::fmt::Debug + PartialEq,
{
    let x = &input[offset..];
    let (got, cfg) = run::<Sum<T>>(gpu, input, offset)?;
    match T::sum_reference(x) {
        SumReference::Exact(exact) => same(&format!("sum {what}"), got, exact),
        SumReference::Float { sum, sum_abs } => {
            let depth = reference::reduce_depth(x.len(), size_of::<T>(), &cfg);
            let eps = T::EPS.unwrap_or(0.0);
            let bound = reference::sum_error_bound(x.len(), depth, eps, sum_abs);
            reference::check_sum(T::wide_f64(got), sum, bound)
                .map_err(|m| format!("sum {what}: {m}").into())
        }
    }
}

/// The trials of one type: every operator at every size, random inputs; the exact products.
fn type_trials<T: Sample>() -> Vec<Trial>
where
    Sum<T>: ReduceKind<Input = T, Output = T::Wide>,
    Product<T>: ReduceKind<Input = T, Output = T::Prod>,
    Min<T>: ReduceKind<Input = T, Output = T>,
    Max<T>: ReduceKind<Input = T, Output = T>,
    ArgMin<T>: ReduceKind<Input = T, Output = (usize, T)>,
    ArgMax<T>: ReduceKind<Input = T, Output = (usize, T)>,
    T::Wide: std::fmt::Debug + PartialEq,
    T::Prod: std::fmt::Debug + PartialEq,
{
    let mut trials = Vec::new();
    for (case, n) in SIZES {
        let name = format!("reduce::ops::{}::{case}", T::NAME);
        let seed = seed_for(&name);
        trials.push(gpu_trial(name.clone(), move || {
            let gpu = gpu()?;
            let input = T::random(seed, n);
            check_all(&gpu, &input, 0, &format!("{name} seed={seed}"))
        }));
        let name = format!("reduce::ops::product_{}::{case}", T::NAME);
        let seed = seed_for(&name);
        trials.push(gpu_trial(name.clone(), move || {
            let gpu = gpu()?;
            let input = T::factors(seed, n);
            let (got, _) = run::<Product<T>>(&gpu, &input, 0)?;
            same(
                &format!("{name} seed={seed}"),
                got,
                T::product_reference(&input),
            )
        }));
    }
    // A view that starts one element past a 16-byte boundary: the head elements before the
    // first boundary are read one by one, with their indices.
    let name = format!("reduce::ops::{}::view_at_1", T::NAME);
    let seed = seed_for(&name);
    trials.push(gpu_trial(name.clone(), move || {
        let gpu = gpu()?;
        let mut input = T::random(seed, 100_003);
        // The largest and smallest at the first element of the view, tied later on.
        input[1] = T::from_f64(if T::EPS.is_some() { 2.0 } else { f64::INFINITY });
        input[50_000] = input[1];
        check_all(&gpu, &input, 1, &format!("{name} seed={seed}"))
    }));
    // Ties everywhere: the first index wins; the identity's value met by every element.
    let name = format!("reduce::ops::{}::all_equal", T::NAME);
    trials.push(gpu_trial(name.clone(), move || {
        let gpu = gpu()?;
        for v in [0.0, 1.0, -1.0] {
            let all: Vec<T> = std::iter::repeat_n(T::from_f64(v), 70_001).collect();
            check_all(&gpu, &all, 0, &name)?;
        }
        Ok(())
    }));
    // Empty input: the identities, and no index.
    let name = format!("reduce::ops::{}::empty", T::NAME);
    trials.push(gpu_trial(name.clone(), move || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| e.to_string();
        let d = gpu.upload(&[T::from_f64(0.0)]).map_err(e)?;
        let empty = d.slice(0..0);
        check_all(&gpu, &[T::from_f64(0.0)], 1, &name)?;
        expect_err(reduce::argmax(&gpu, &empty), |e| {
            matches!(e, cpu::Error::EmptyInput { .. })
        })?;
        expect_err(reduce::argmin(&gpu, &empty), |e| {
            matches!(e, cpu::Error::EmptyInput { .. })
        })?;
        let one = reduce::product(&gpu, &empty).map_err(e)?;
        same(&name, one, T::product_reference(&[]))
    }));
    if T::EPS.is_some() {
        float_trials::<T>(&mut trials);
    }
    trials
}

/// NaN, infinities and signed zeros of a float type.
fn float_trials<T: Sample>(trials: &mut Vec<Trial>)
where
    Sum<T>: ReduceKind<Input = T, Output = T::Wide>,
    Product<T>: ReduceKind<Input = T, Output = T::Prod>,
    Min<T>: ReduceKind<Input = T, Output = T>,
    Max<T>: ReduceKind<Input = T, Output = T>,
    ArgMin<T>: ReduceKind<Input = T, Output = (usize, T)>,
    ArgMax<T>: ReduceKind<Input = T, Output = (usize, T)>,
    T::Wide: std::fmt::Debug + PartialEq,
    T::Prod: std::fmt::Debug + PartialEq,
{
    let name = format!("reduce::ops::{}::nan_infinities_signed_zeros", T::NAME);
    let seed = seed_for(&name);
    trials.push(gpu_trial(name.clone(), move || {
        let gpu = gpu()?;
        let n = 1_000_003;
        let mut input = T::random(seed, n);
        input[7] = T::from_f64(-0.0);
        input[8] = T::from_f64(0.0);
        input[n - 2] = T::from_f64(f64::INFINITY);
        input[3] = T::from_f64(f64::NEG_INFINITY);
        check_all(&gpu, &input, 0, &format!("{name} infinities"))?;
        // Two NaNs: the first wins both arg-reductions; min and max are NaN; the sum is NaN.
        input[n / 3] = T::from_f64(f64::NAN);
        input[n / 2] = T::from_f64(f64::NAN);
        check_all(&gpu, &input, 0, &format!("{name} NaN"))?;
        // Only zeros of both signs: the first zero is the argmin and the argmax.
        let zeros: Vec<T> = (0..4099)
            .map(|i| T::from_f64(if i % 3 == 1 { 0.0 } else { -0.0 }))
            .collect();
        let (i, _) = reduce::argmax(&gpu, &gpu.upload(&zeros).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        same(&format!("{name} zeros"), i, 0)
    }));
}

/// CSR offsets over `n` elements: many short segments (0 to 20 elements, empty ones included),
/// then one segment of half the input, then short ones again.
fn offsets(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut offsets = vec![0u64];
    let mut at = 0usize;
    let mut long_done = false;
    while at < n {
        let len = if !long_done && at > n / 4 {
            long_done = true;
            n / 2
        } else {
            rng.random_range(0..=20)
        };
        at = (at + len).min(n);
        offsets.push(at as u64);
    }
    offsets
}

/// Segmented reduction `K` of `x` over `offsets` against `expected(segment)`.
fn check_segmented<K: SegmentedKind>(
    gpu: &cpu::Gpu,
    x: &[K::Input],
    offsets: &[u64],
    what: &str,
    expected: impl Fn(&[K::Input]) -> Result<(), String>,
    compare: impl Fn(&K::Output, &[K::Input]) -> Result<(), String>,
) -> Result<(), Failed> {
    let e = |e: cpu::Error| e.to_string();
    let d = gpu.upload(x).map_err(e)?;
    let d_offsets = gpu.upload(offsets).map_err(e)?;
    let got = reduce::segmented_reduce::<K>(gpu, &d, &d_offsets).map_err(e)?;
    if got.len() + 1 != offsets.len() {
        return Err(format!("{what}: {} results for {} segments", got.len(), offsets.len() - 1).into());
    }
    for (s, w) in offsets.windows(2).enumerate() {
        let seg = &x[w[0] as usize..w[1] as usize];
        expected(seg).map_err(|m| format!("{what} segment {s}: {m}"))?;
        compare(&got[s], seg).map_err(|m| format!("{what} segment {s} (len {}): {m}", seg.len()))?;
    }
    Ok(())
}

/// Segmented trials of one type: every operator over short, empty and one long segment.
fn segmented_trials<T: Sample>() -> Vec<Trial>
where
    Sum<T>: SegmentedKind<Input = T, Output = T::Wide>,
    Product<T>: SegmentedKind<Input = T, Output = T::Prod>,
    Min<T>: SegmentedKind<Input = T, Output = T>,
    Max<T>: SegmentedKind<Input = T, Output = T>,
    ArgMin<T>: SegmentedKind<Input = T, Output = (usize, T)>,
    ArgMax<T>: SegmentedKind<Input = T, Output = (usize, T)>,
    T::Wide: std::fmt::Debug + PartialEq,
    T::Prod: std::fmt::Debug + PartialEq,
{
    let mut trials = Vec::new();
    for (case, n) in [("31", 31usize), ("1000003", 1_000_003), ("2e24_plus_1", (1 << 24) + 1)] {
        let name = format!("reduce::segmented::{}::{case}", T::NAME);
        let seed = seed_for(&name);
        trials.push(gpu_trial(name.clone(), move || {
            let gpu = gpu()?;
            let offs = offsets(seed, n);
            let x = T::random(seed, n);
            let ok = |_: &[T]| Ok(());
            check_segmented::<Sum<T>>(&gpu, &x, &offs, &format!("{name} sum"), ok, |got, seg| {
                match T::sum_reference(seg) {
                    SumReference::Exact(e) if *got == e => Ok(()),
                    SumReference::Exact(e) => Err(format!("got {got:?}, expected {e:?}")),
                    SumReference::Float { sum, sum_abs } => {
                        // One warp or block per segment: each lane adds its strided elements,
                        // then a tree of at most 10 levels.
                        let depth = seg.len() as u64 + 12;
                        let eps = T::EPS.unwrap_or(0.0);
                        let bound = reference::sum_error_bound(seg.len(), depth, eps, sum_abs);
                        reference::check_sum(T::wide_f64(*got), sum, bound)
                            .map_err(|m| m.to_string())
                    }
                }
            })?;
            let ext = |e: Option<(usize, T)>, lowest: bool| {
                e.map_or(T::from_f64(if lowest { f64::INFINITY } else { f64::NEG_INFINITY }), |(_, v)| v)
            };
            let same_v = |got: T, e: T| {
                if got == e || (reference::Ordered::is_nan(got) && reference::Ordered::is_nan(e)) {
                    Ok(())
                } else {
                    Err(format!("got {got:?}, expected {e:?}"))
                }
            };
            check_segmented::<Min<T>>(&gpu, &x, &offs, &format!("{name} min"), ok, |got, seg| {
                same_v(*got, ext(reference::argmin(seg), true))
            })?;
            check_segmented::<Max<T>>(&gpu, &x, &offs, &format!("{name} max"), ok, |got, seg| {
                same_v(*got, ext(reference::argmax(seg), false))
            })?;
            // The arg-reductions over the same segments without the empty ones (an empty one is
            // refused: `segmented_empty_trials`).
            let mut full = offs.clone();
            full.dedup();
            check_segmented::<ArgMin<T>>(&gpu, &x, &full, &format!("{name} argmin"), ok, |got, seg| {
                match reference::argmin(seg) {
                    Some(e) if e.0 == got.0 => same_v(got.1, e.1),
                    Some(e) => Err(format!("got {got:?}, expected {e:?}")),
                    None => Err("an empty segment".into()),
                }
            })?;
            check_segmented::<ArgMax<T>>(&gpu, &x, &full, &format!("{name} argmax"), ok, |got, seg| {
                match reference::argmax(seg) {
                    Some(e) if e.0 == got.0 => same_v(got.1, e.1),
                    Some(e) => Err(format!("got {got:?}, expected {e:?}")),
                    None => Err("an empty segment".into()),
                }
            })?;
            let factors = T::factors(seed, n);
            check_segmented::<Product<T>>(&gpu, &factors, &offs, &format!("{name} product"), ok, |got, seg| {
                let e = T::product_reference(seg);
                if *got == e { Ok(()) } else { Err(format!("got {got:?}, expected {e:?}")) }
            })
        }));
    }
    trials
}

/// Offsets that pass the input's end or decrease are refused with the segment named.
fn segmented_error_trials() -> Vec<Trial> {
    vec![gpu_trial("reduce::segmented::invalid_offsets".into(), || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| e.to_string();
        let d = gpu.upload(&[1i32; 100]).map_err(e)?;
        for (offsets, bad) in [(vec![0u64, 50, 101], 1usize), (vec![0, 60, 40, 100], 1)] {
            let d_offsets = gpu.upload(&offsets).map_err(e)?;
            expect_err(reduce::segmented_reduce::<Sum<i32>>(&gpu, &d, &d_offsets), |e| {
                matches!(e, cpu::Error::InvalidOffsets { segment, .. } if *segment == bad)
            })?;
        }
        let none = gpu.upload::<u64>(&[0]).map_err(e)?;
        let got = reduce::segmented_reduce::<Sum<i32>>(&gpu, &d, &none).map_err(e)?;
        if !got.is_empty() {
            return Err("no segments gave results".into());
        }
        Ok(())
    })]
}

/// An arg-reduction of an empty segment is refused naming it (as `argmin` of an empty input),
/// the other operators give their identity there; segments whose every element is the
/// identity's value (`T::MAX` for ArgMin) name their first element, in both kernel shapes.
fn segmented_empty_trials<T: Sample>() -> Vec<Trial>
where
    T::Prod: std::fmt::Debug + PartialEq,
{
    let name = format!("reduce::segmented::{}::empty_and_identity_valued", T::NAME);
    vec![gpu_trial(name.clone(), move || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| e.to_string();
        let x = T::random(seed_for(&name), 100);
        let d = gpu.upload(&x).map_err(e)?;
        let offsets = gpu.upload(&[0u64, 10, 10, 100]).map_err(e)?;
        expect_err(reduce::segmented_reduce::<ArgMin<T>>(&gpu, &d, &offsets), |e| {
            matches!(e, cpu::Error::EmptySegment { segment: 1, .. })
        })?;
        expect_err(reduce::segmented_reduce::<ArgMax<T>>(&gpu, &d, &offsets), |e| {
            matches!(e, cpu::Error::EmptySegment { segment: 1, .. })
        })?;
        let mins = reduce::segmented_reduce::<Min<T>>(&gpu, &d, &offsets).map_err(e)?;
        same_value(&name, mins[1], T::from_f64(f64::INFINITY))?;
        let products = reduce::segmented_reduce::<Product<T>>(&gpu, &d, &offsets).map_err(e)?;
        same(&name, products[1], T::product_reference(&[]))?;
        // Many short segments (a warp each) and one long one (a block each).
        for (len, segments) in [(7usize, 100usize), (5000, 1)] {
            let n = len * segments;
            let offsets: Vec<u64> = (0..=segments).map(|s| (s * len) as u64).collect();
            let d_offsets = gpu.upload(&offsets).map_err(e)?;
            let highest = gpu.upload(&vec![T::from_f64(f64::INFINITY); n]).map_err(e)?;
            let got = reduce::segmented_reduce::<ArgMin<T>>(&gpu, &highest, &d_offsets).map_err(e)?;
            let lowest = gpu.upload(&vec![T::from_f64(f64::NEG_INFINITY); n]).map_err(e)?;
            let got_max = reduce::segmented_reduce::<ArgMax<T>>(&gpu, &lowest, &d_offsets).map_err(e)?;
            for s in 0..segments {
                same(&format!("{name} argmin {len} x {segments}"), got[s].0, 0)?;
                same(&format!("{name} argmax {len} x {segments}"), got_max[s].0, 0)?;
            }
        }
        Ok(())
    })]
}

/// Code generic over the element type with `T: Element` as its only bound.
fn extremes<T: Element>(gpu: &cpu::Gpu, x: &CudaSlice<T>) -> cpu::Result<(T, (usize, T), T::Prod)> {
    Ok((reduce::min(gpu, x)?, reduce::argmax(gpu, x)?, reduce::product(gpu, x)?))
}

fn generic_trials<T: Sample>() -> Vec<Trial>
where
    T::Prod: std::fmt::Debug + PartialEq,
{
    let name = format!("reduce::generic::{}::element_bound", T::NAME);
    vec![gpu_trial(name.clone(), move || {
        let gpu = gpu()?;
        let x = T::factors(seed_for(&name), 1001);
        let d = gpu.upload(&x).map_err(|e| e.to_string())?;
        let (lo, hi, product) = extremes(&gpu, &d).map_err(|e| e.to_string())?;
        same_value(&name, lo, reference::argmin(&x).expect("1001 elements").1)?;
        same_arg(&name, hi, reference::argmax(&x).expect("1001 elements"))?;
        same(&name, product, T::product_reference(&x))
    })]
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
    trials.extend(segmented_trials::<i8>());
    trials.extend(segmented_trials::<i16>());
    trials.extend(segmented_trials::<i32>());
    trials.extend(segmented_trials::<i64>());
    trials.extend(segmented_trials::<u8>());
    trials.extend(segmented_trials::<u16>());
    trials.extend(segmented_trials::<u32>());
    trials.extend(segmented_trials::<u64>());
    trials.extend(segmented_trials::<f32>());
    trials.extend(segmented_trials::<f64>());
    trials.extend(segmented_trials::<F16>());
    trials.extend(segmented_error_trials());
    trials.extend(segmented_empty_trials::<i8>());
    trials.extend(segmented_empty_trials::<u16>());
    trials.extend(segmented_empty_trials::<i32>());
    trials.extend(segmented_empty_trials::<u64>());
    trials.extend(segmented_empty_trials::<f32>());
    trials.extend(segmented_empty_trials::<F16>());
    trials.extend(generic_trials::<i8>());
    trials.extend(generic_trials::<u32>());
    trials.extend(generic_trials::<f64>());
    trials.extend(generic_trials::<F16>());
    trials
}
