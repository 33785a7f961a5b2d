//! `demo scan`'s operator table: the inclusive scans of `cpu::scan::ops` (`Sum`, `Product`,
//! `Min`, `Max` of every primitive type) and the scan by key, each checked against the CPU and
//! timed with the L2 flushed. `--dump` writes every input and every output the table verifies
//! ([`dump`](super::dump) names them).

use anyhow::Result;
use cpu::Gpu;
use cpu::reduce::{F16, Max, Min, Product, Sum};
use cpu::scan::{ByKeyKind, Kind, ScanKind, ScanWorkspace};
use cpu::verify::{self, Mismatch};
use cudarc::driver::LaunchConfig;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Plan, Trial};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Table};
use crate::engine::timing::{Ceiling, L2Flush};
use cpu::reduce::samples::Sample;

/// An operator of the table and its CPU scan in `f64` (exact for every operator and input here
/// but float sums) or in the element type (wrapping integers).
#[derive(Clone, Copy, PartialEq)]
enum Op {
    Sum,
    Product,
    Min,
    Max,
}

/// `op` of `a` and `b` on the CPU: wrapping integers; floats in `f64`, rounded to the type
/// (exact for the inputs here but float sums, which are checked within a bound instead).
fn apply<T: Sample>(op: Op, a: T, b: T) -> T {
    match op {
        Op::Sum => T::wrapping_add(a, b),
        Op::Product => T::wrapping_mul(a, b),
        Op::Min => {
            if b < a {
                b
            } else {
                a
            }
        }
        Op::Max => {
            if b > a {
                b
            } else {
                a
            }
        }
    }
}

/// Checks `got` against the CPU scan of `x` with `op` (by key: restarting where `keys` change).
fn check<T: Sample>(
    op: Op,
    x: &[T],
    got: &[T],
    keys: Option<&[u32]>,
) -> (Result<(), Mismatch>, f64) {
    let (mut exact, mut sum, mut mag) = (T::default(), 0.0f64, 0.0f64);
    let mut worst = 0.0f64;
    for i in 0..x.len() {
        let head = i == 0 || keys.is_some_and(|k| k[i] != k[i - 1]);
        if head {
            (exact, sum, mag) = (x[i], 0.0, 0.0);
        } else {
            exact = apply(op, exact, x[i]);
        }
        sum += x[i].to_f64();
        mag += x[i].to_f64().abs();
        // Scans run in the element type (`f16` in `f32`).
        let eps = T::EPS.map(|_| {
            if T::NAME == "f64" {
                f64::EPSILON
            } else {
                f32::EPSILON as f64
            }
        });
        let ok = match (op, eps) {
            (Op::Sum, Some(eps)) => {
                // The look-back's order: two tiles' depth of roundings and the trees (f16: the
                // f32 scan, then one rounding to f16 of each output).
                let mut bound = (2.0 * 16384.0 + 64.0) * eps * mag;
                if T::NAME == "f16" {
                    bound += mag.max(1.0) * 1e-3;
                }
                let err = (got[i].to_f64() - sum).abs();
                worst = worst.max(if bound > 0.0 { err / bound } else { err });
                err <= bound
            }
            _ => got[i] == exact,
        };
        if !ok {
            return (
                verify::exact(&[got[i]], &[exact]).map_err(|m| Mismatch { index: i, ..m }),
                worst,
            );
        }
    }
    (Ok(()), worst)
}

/// What each row shares.
struct Bench<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    ceiling: &'a Ceiling,
}

/// Times `launch` after one run checked by `check`, and adds its row.
#[allow(clippy::too_many_arguments)]
fn row<T: Sample>(
    bench: &Bench,
    flush: &mut L2Flush,
    table: &mut Table,
    failures: &mut usize,
    (op_name, kernel, n): (&str, &'static str, usize),
    mut launch: impl FnMut() -> cpu::Result<LaunchConfig>,
    check: impl FnOnce() -> Result<(Result<(), Mismatch>, f64)>,
) -> Result<()> {
    let Bench { gpu, opts, ceiling } = *bench;
    let trial: Trial<(Result<(), Mismatch>, f64)> = Plan::new(gpu, opts, kernel, kernel)
        .bytes((2 * n * size_of::<T>()) as u64, Some(ceiling))
        .run_with_setup(
            flush,
            |flush| flush.flush(gpu),
            |_| launch(),
            |_, _| check(),
        )?;
    *failures += !trial.passed() as usize;
    let gbps = trial.gbps();
    table.measured_row(
        [
            op_name.to_string(),
            T::NAME.to_string(),
            kernel.to_string(),
            crate::engine::harness::describe(&trial.cfg),
            format!("{:.2}", trial.timing.median_ms * 1e3),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            crate::engine::harness::verdict(&trial.check.0),
        ],
        trial.measurement,
    );
    Ok(())
}

/// The four inclusive scans of `T` at `n` elements; with `--dump`, their inputs and outputs.
fn type_rows<T: Sample + npyz::AutoSerialize>(
    bench: &Bench,
    dump: &Out,
    flush: &mut L2Flush,
    table: &mut Table,
    failures: &mut usize,
    n: usize,
) -> Result<()> {
    let gpu = bench.gpu;
    let mut ws = ScanWorkspace::<T>::new(gpu)?;
    let random = T::random(bench.opts.seed ^ n as u64, n);
    let factors = T::factors(bench.opts.seed ^ n as u64, n);
    dump.dump(&super::dump::ops_input(false, T::NAME), &[], &random)?;
    dump.dump(&super::dump::ops_input(true, T::NAME), &[], &factors)?;
    let mut out = gpu.upload(&vec![T::default(); n])?;
    macro_rules! scan_row {
        ($op:ident, $name:literal, $torch:literal, $x:expr) => {{
            let x = $x;
            let d = gpu.upload(x)?;
            let kernel = <$op<T> as ScanKind>::KERNEL.name();
            let out = &mut out;
            let ws = &mut ws;
            let cell = std::cell::RefCell::new((ws, out));
            row::<T>(
                bench,
                flush,
                table,
                failures,
                ($name, kernel, n),
                || {
                    let (ws, out) = &mut *cell.borrow_mut();
                    ws.scan_with::<$op<T>>(gpu, Kind::Inclusive, None, &d, *out)
                },
                || {
                    let (_, out) = &*cell.borrow();
                    let got = gpu.download(&**out, kernel)?;
                    let name = super::dump::ops_output($torch, T::NAME);
                    dump.verify(&name, &[], &got, |got| check(Op::$op, x, got, None))
                },
            )?;
        }};
    }
    scan_row!(Sum, "inclusive sum", "cumsum", &random);
    scan_row!(Product, "inclusive product", "cumprod", &factors);
    scan_row!(Min, "cummin", "cummin", &random);
    scan_row!(Max, "cummax", "cummax", &random);
    Ok(())
}

/// One scan by key of `K` (runs of 1 to 64 equal keys); with `--dump`, its keys, values and
/// output.
fn by_key_row<K: ByKeyKind>(
    bench: &Bench,
    dump: &Out,
    flush: &mut L2Flush,
    table: &mut Table,
    failures: &mut usize,
    op: Op,
    n: usize,
) -> Result<()>
where
    K::Item: Sample + npyz::AutoSerialize,
{
    let gpu = bench.gpu;
    let mut rng = StdRng::seed_from_u64(bench.opts.seed ^ 0x6b65);
    let mut keys = Vec::with_capacity(n);
    let mut key = 0u32;
    while keys.len() < n {
        let len = rng.random_range(1..=64usize).min(n - keys.len());
        key += 1;
        keys.extend(std::iter::repeat_n(key, len));
    }
    let x = <K::Item as Sample>::random(bench.opts.seed, n);
    let ty = <K::Item as Sample>::NAME;
    if op == Op::Sum {
        // Both rows' keys are these (the same seed).
        dump.dump(super::dump::BY_KEY_KEYS, &[], &keys)?;
    }
    dump.dump(&super::dump::by_key_input(ty), &[], &x)?;
    let (d_keys, d_x) = (gpu.upload(&keys)?, gpu.upload(&x)?);
    let mut ws = ScanWorkspace::<K::Item>::new(gpu)?;
    let out = std::cell::RefCell::new(gpu.upload(&vec![K::Item::default(); n])?);
    let kernel = K::KERNEL.name();
    let name = if op == Op::Sum {
        "sum by key"
    } else {
        "max by key"
    };
    row::<K::Item>(
        bench,
        flush,
        table,
        failures,
        (name, kernel, n),
        || ws.scan_by_key::<K>(gpu, &d_keys, &d_x, &mut *out.borrow_mut()),
        || {
            let got = gpu.download(&*out.borrow(), kernel)?;
            let short = if op == Op::Sum { "sum" } else { "max" };
            let name = super::dump::by_key_output(short, ty);
            dump.verify(&name, &[], &got, |got| check(op, &x, got, Some(&keys)))
        },
    )
}

/// `demo scan`'s operator table: every scan operator of every type, and two scans by key, at
/// `n` elements. Returns the failures.
pub(super) fn operator_table(gpu: &Gpu, opts: &Options, out: &mut Out, n: usize) -> Result<usize> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut flush = L2Flush::new(gpu)?;
    let bench = Bench {
        gpu,
        opts,
        ceiling: &ceiling,
    };
    let mut table = Table::new(
        "operators",
        format!(
            "scan::ops (one launch of scan_lookback_<operator>_<type>, inclusive) and \
             scan::inclusive_scan_by_key (runs of 1 to 64 keys) over {n} elements of each type, \
             checked against the CPU (products of exact factors); median of {} reps, L2 flushed \
             before each; GB/s = (bytes read + written) / time:",
            opts.reps
        ),
        ChartKind::Bars,
        [
            "operator",
            "type",
            "kernel",
            "grid x block",
            "median us",
            "GB/s",
            "% of memcpy",
            "verdict",
        ],
    );
    let mut failures = 0;
    let (b, f, t, fl) = (&bench, &mut flush, &mut table, &mut failures);
    let d: &Out = out;
    type_rows::<i8>(b, d, f, t, fl, n)?;
    type_rows::<i16>(b, d, f, t, fl, n)?;
    type_rows::<i32>(b, d, f, t, fl, n)?;
    type_rows::<i64>(b, d, f, t, fl, n)?;
    type_rows::<u8>(b, d, f, t, fl, n)?;
    type_rows::<u16>(b, d, f, t, fl, n)?;
    type_rows::<u32>(b, d, f, t, fl, n)?;
    type_rows::<u64>(b, d, f, t, fl, n)?;
    type_rows::<f32>(b, d, f, t, fl, n)?;
    type_rows::<f64>(b, d, f, t, fl, n)?;
    type_rows::<F16>(b, d, f, t, fl, n)?;
    by_key_row::<Sum<f32>>(b, d, f, t, fl, Op::Sum, n)?;
    by_key_row::<Max<i32>>(b, d, f, t, fl, Op::Max, n)?;
    out.table(table);
    Ok(failures)
}

/// The kernels of the operator table, for the pattern's variants.
pub(super) fn kernels() -> Vec<&'static str> {
    fn four<T: cpu::reduce::Element>() -> [&'static str; 4] {
        [
            <Sum<T> as ScanKind>::KERNEL.name(),
            <Product<T> as ScanKind>::KERNEL.name(),
            <Min<T> as ScanKind>::KERNEL.name(),
            <Max<T> as ScanKind>::KERNEL.name(),
        ]
    }
    let mut all = Vec::new();
    all.extend(four::<i8>());
    all.extend(four::<i16>());
    all.extend(four::<i32>());
    all.extend(four::<i64>());
    all.extend(four::<u8>());
    all.extend(four::<u16>());
    all.extend(four::<u32>());
    all.extend(four::<u64>());
    all.extend(four::<f32>());
    all.extend(four::<f64>());
    all.extend(four::<F16>());
    all.push(<Sum<f32> as ByKeyKind>::KERNEL.name());
    all.push(<Max<i32> as ByKeyKind>::KERNEL.name());
    all
}
