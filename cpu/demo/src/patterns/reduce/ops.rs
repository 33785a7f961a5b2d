//! `demo reduce`'s operator table and `demo sweep reduce-max-f32 ...`: the reductions of
//! `cpu::reduce::ops` (`Sum`, `Product`, `Min`, `Max`, `ArgMin`, `ArgMax` of every primitive
//! type), each checked against the CPU and timed with the L2 flushed.

use anyhow::Result;
use cpu::reduce::{
    ArgMax, ArgMin, Element, F16, Max, Min, Product, Reduce, ReduceKind, Sum, reference,
};
use cpu::verify::Mismatch;
use cpu::{Gpu, verify};
use cudarc::driver::LaunchConfig;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::sweep::reduce_footprint;
use super::{Bench, Checked};
use crate::engine::harness::{Plan, Trial};
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::{Case, Sweep};
use crate::engine::timing::L2Flush;

/// An element type of the operator table and sweeps: its inputs and references.
pub(crate) trait Sample: Element + reference::Ordered + std::fmt::Debug + PartialEq {
    /// Its name in the table.
    const NAME: &'static str;
    /// `n` random elements (integers over their whole range, floats in `[-1, 1)`).
    fn random(seed: u64, n: usize) -> Vec<Self>;
    /// `n` elements whose product is exact in any order: `±1`, with up to 64 factors of 2 and
    /// 64 of 0.5 for floats; odd numbers for integers (their product never reaches 0).
    fn factors(seed: u64, n: usize) -> Vec<Self>;
    /// The sum's reference: the exact (wrapping) sum for integers; for floats, the `f64` sum
    /// and the sum of magnitudes.
    fn sum_reference(x: &[Self]) -> SumReference<Self::Wide>;
    /// The exact product (inputs from [`Sample::factors`]).
    fn product_reference(x: &[Self]) -> Self::Prod;
    /// A float sum as `f64`, with its accumulator's epsilon (`None` for integers).
    fn float_sum(w: Self::Wide) -> Option<(f64, f64)>;
}

/// The reference of a sum.
pub(crate) enum SumReference<W> {
    /// Integers: the wrapping sum.
    Exact(W),
    /// Floats: the `f64` sum and the sum of magnitudes.
    Float(f64, f64),
}

macro_rules! int_sample {
    ($($t:ty => $w:ty;)*) => {$(
        impl Sample for $t {
            const NAME: &'static str = stringify!($t);
            fn random(seed: u64, n: usize) -> Vec<Self> {
                let mut rng = StdRng::seed_from_u64(seed);
                (0..n).map(|_| rng.random::<$t>()).collect()
            }
            fn factors(seed: u64, n: usize) -> Vec<Self> {
                let mut rng = StdRng::seed_from_u64(seed);
                (0..n).map(|_| rng.random::<$t>() | 1).collect()
            }
            fn sum_reference(x: &[Self]) -> SumReference<$w> {
                SumReference::Exact(x.iter().fold(0 as $w, |a, &v| a.wrapping_add(v as $w)))
            }
            fn product_reference(x: &[Self]) -> $w {
                x.iter().fold(1 as $w, |a, &v| a.wrapping_mul(v as $w))
            }
            fn float_sum(_: $w) -> Option<(f64, f64)> {
                None
            }
        }
    )*};
}
int_sample! {
    i8 => i64; i16 => i64; i32 => i64; i64 => i64;
    u8 => u64; u16 => u64; u32 => u64; u64 => u64;
}

/// `n` exact factors as `f64`: `±1`, then up to 64 positions times 2 and 64 times 0.5.
fn float_factors(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut x: Vec<f64> = (0..n)
        .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
        .collect();
    for value in [2.0, 0.5] {
        for _ in 0..64.min(n / 4) {
            let i = rng.random_range(0..n);
            x[i] *= value;
        }
    }
    x
}

macro_rules! float_sample {
    ($($t:ty => $name:literal, $eps:expr, |$v:ident| $to:expr, |$f:ident| $from:expr;)*) => {$(
        impl Sample for $t {
            const NAME: &'static str = $name;
            fn random(seed: u64, n: usize) -> Vec<Self> {
                let mut bits = vec![0u32; n];
                StdRng::seed_from_u64(seed).fill(&mut bits[..]);
                bits.into_iter()
                    .map(|b| (b >> 8) as f64 * (2.0 / (1u32 << 24) as f64) - 1.0)
                    .map(|$f| $from)
                    .collect()
            }
            fn factors(seed: u64, n: usize) -> Vec<Self> {
                float_factors(seed, n).into_iter().map(|$f| $from).collect()
            }
            fn sum_reference(x: &[Self]) -> SumReference<Self::Wide> {
                let (s, a) = x.iter().fold((0.0, 0.0), |(s, a), &$v| {
                    let v: f64 = $to;
                    (s + v, a + v.abs())
                });
                SumReference::Float(s, a)
            }
            fn product_reference(x: &[Self]) -> Self::Prod {
                x.iter().fold(1.0f64, |p, &$v| p * $to) as Self::Prod
            }
            fn float_sum(w: Self::Wide) -> Option<(f64, f64)> {
                Some((w as f64, $eps))
            }
        }
    )*};
}
float_sample! {
    f32 => "f32", f64::EPSILON, |v| v as f64, |f| f as f32;
    f64 => "f64", f64::EPSILON, |v| v, |f| f;
    F16 => "f16", f32::EPSILON as f64, |v| v.to_f64(), |f| F16::from_f64(f);
}

/// The check of a sum of `n` elements against its reference.
fn check_sum<T: Sample>(
    reference_sum: &SumReference<T::Wide>,
    got: T::Wide,
    n: usize,
    cfg: &LaunchConfig,
) -> Checked
where
    T::Wide: std::fmt::Debug + PartialEq,
{
    match (reference_sum, T::float_sum(got)) {
        (SumReference::Exact(e), _) => (verify::exact(&[got], &[*e]), 0.0),
        (SumReference::Float(e, sum_abs), Some((got, eps))) => {
            let depth = reference::reduce_depth(n, size_of::<T>(), cfg);
            let bound = reference::sum_error_bound(n, depth, eps, *sum_abs);
            (
                reference::check_sum(got, *e, bound),
                (got - e).abs() / bound,
            )
        }
        (SumReference::Float(..), None) => (Err(mismatch("a float sum")), f64::NAN),
    }
}

fn mismatch(what: &str) -> Mismatch {
    Mismatch {
        index: 0,
        got: what.into(),
        expected: "its reference".into(),
        count: 1,
    }
}

/// `got == expected` (both NaN counts as equal).
fn same<V: std::fmt::Debug + PartialEq>(got: V, expected: V, nan: bool) -> Checked {
    if got == expected || nan {
        (Ok(()), 0.0)
    } else {
        (verify::exact(&[got], &[expected]), 0.0)
    }
}

/// One operator of the table or a sweep: the kind, its input and its check.
pub(super) struct Op<T: Sample> {
    /// `sum`, `product`, `min`, `max`, `argmin`, `argmax`.
    pub name: &'static str,
    /// Its input of `n` elements.
    input: fn(u64, usize) -> Vec<T>,
    /// Runs, checks and times it on `d_input` (its host copy `x`).
    measure: MeasureFn<T>,
}

type MeasureFn<T> = fn(&Gpu, &[T], &cudarc::driver::CudaSlice<T>, &mut dyn Runner) -> Result<()>;

/// What runs a kind: the demo's table row or a sweep case.
pub(super) trait Runner {
    /// Times `launch` (the L2 flushed first) after one checked run.
    fn run(
        &mut self,
        kernel: &'static str,
        bytes: u64,
        launch: &mut dyn FnMut() -> cpu::Result<LaunchConfig>,
        check: &mut dyn FnMut(&LaunchConfig) -> Result<Checked>,
    ) -> Result<()>;
}

/// Runs the reduction `K` through `runner`, checking its output with `check`.
fn run_kind<K: ReduceKind>(
    gpu: &Gpu,
    d_input: &cudarc::driver::CudaSlice<K::Input>,
    runner: &mut dyn Runner,
    check: impl Fn(K::Output, &LaunchConfig) -> Checked,
) -> Result<()> {
    let n = d_input.len();
    let ws = std::cell::RefCell::new(Reduce::<K>::new(gpu)?);
    runner.run(
        K::KERNEL_NAME,
        (n * size_of::<K::Input>()) as u64,
        &mut || ws.borrow_mut().launch(gpu, d_input),
        &mut |cfg| {
            let acc = ws.borrow().result(gpu)?;
            Ok(check(K::output(acc, n)?, cfg))
        },
    )
}

/// The six operators of `T`.
pub(super) fn ops<T: Sample>() -> [Op<T>; 6]
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
    [
        Op {
            name: "sum",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = T::sum_reference(x);
                run_kind::<Sum<T>>(gpu, d, r, |got, cfg| check_sum::<T>(&e, got, x.len(), cfg))
            },
        },
        Op {
            name: "product",
            input: T::factors,
            measure: |gpu, x, d, r| {
                let e = T::product_reference(x);
                run_kind::<Product<T>>(gpu, d, r, |got, _| same(got, e, false))
            },
        },
        Op {
            name: "min",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = reference::argmin(x).map(|(_, v)| v);
                run_kind::<Min<T>>(gpu, d, r, |got, _| same(Some(got), e, false))
            },
        },
        Op {
            name: "max",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = reference::argmax(x).map(|(_, v)| v);
                run_kind::<Max<T>>(gpu, d, r, |got, _| same(Some(got), e, false))
            },
        },
        Op {
            name: "argmin",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = reference::argmin(x);
                run_kind::<ArgMin<T>>(gpu, d, r, |got, _| same(Some(got), e, false))
            },
        },
        Op {
            name: "argmax",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = reference::argmax(x);
                run_kind::<ArgMax<T>>(gpu, d, r, |got, _| same(Some(got), e, false))
            },
        },
    ]
}

/// A row of `demo reduce`'s operator table.
struct TableRunner<'a, 'b> {
    bench: Bench<'a>,
    flush: &'b mut L2Flush,
    table: &'b mut Table,
    failures: &'b mut usize,
    element: &'static str,
    op: &'static str,
}

impl Runner for TableRunner<'_, '_> {
    fn run(
        &mut self,
        kernel: &'static str,
        bytes: u64,
        launch: &mut dyn FnMut() -> cpu::Result<LaunchConfig>,
        check: &mut dyn FnMut(&LaunchConfig) -> Result<Checked>,
    ) -> Result<()> {
        let Bench { gpu, opts, ceiling } = self.bench;
        let trial: Trial<Checked> = Plan::new(gpu, opts, kernel, kernel)
            .bytes(bytes, Some(ceiling))
            .run_with_setup(
                &mut *self.flush,
                |flush| flush.flush(gpu),
                |_| launch(),
                |_, cfg| check(cfg),
            )?;
        *self.failures += !trial.passed() as usize;
        let gbps = trial.gbps();
        let ms = trial.timing.median_ms;
        self.table.measured_row(
            [
                self.op.to_string(),
                self.element.to_string(),
                kernel.to_string(),
                crate::engine::harness::describe(&trial.cfg),
                format!("{:.2}", ms * 1e3),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                crate::engine::harness::verdict(&trial.check.0),
            ],
            trial.measurement,
        );
        Ok(())
    }
}

/// `demo reduce`'s operator table: every operator of every type at `n` elements. Returns the
/// failures.
pub(super) fn operator_table(
    bench: Bench,
    out: &mut Out,
    flush: &mut L2Flush,
    n: usize,
) -> Result<usize> {
    let mut table = Table::new(
        "operators",
        format!(
            "reduce::ops (one launch of reduce_op_<operator>_<type>; CUB's and PyTorch's operators) \
             over {n} elements of each type, checked against the CPU (products of exact factors); \
             median of {} reps, L2 flushed before each; GB/s = bytes read / time:",
            bench.opts.reps
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
    let mut rows = |table: &mut Table, flush: &mut L2Flush| -> Result<()> {
        type_rows::<i8>(bench, flush, table, &mut failures, n)?;
        type_rows::<i16>(bench, flush, table, &mut failures, n)?;
        type_rows::<i32>(bench, flush, table, &mut failures, n)?;
        type_rows::<i64>(bench, flush, table, &mut failures, n)?;
        type_rows::<u8>(bench, flush, table, &mut failures, n)?;
        type_rows::<u16>(bench, flush, table, &mut failures, n)?;
        type_rows::<u32>(bench, flush, table, &mut failures, n)?;
        type_rows::<u64>(bench, flush, table, &mut failures, n)?;
        type_rows::<f32>(bench, flush, table, &mut failures, n)?;
        type_rows::<f64>(bench, flush, table, &mut failures, n)?;
        type_rows::<F16>(bench, flush, table, &mut failures, n)
    };
    rows(&mut table, flush)?;
    out.table(table);
    Ok(failures)
}

/// The six rows of `T`.
fn type_rows<T: Sample>(
    bench: Bench,
    flush: &mut L2Flush,
    table: &mut Table,
    failures: &mut usize,
    n: usize,
) -> Result<()>
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
    let gpu = bench.gpu;
    let random = T::random(bench.opts.seed ^ n as u64, n);
    let d_random = gpu.upload(&random)?;
    for op in ops::<T>() {
        let mut runner = TableRunner {
            bench,
            flush: &mut *flush,
            table: &mut *table,
            failures: &mut *failures,
            element: T::NAME,
            op: op.name,
        };
        if op.name == "product" {
            let x = (op.input)(bench.opts.seed ^ n as u64, n);
            let d = gpu.upload(&x)?;
            (op.measure)(gpu, &x, &d, &mut runner)?;
        } else {
            (op.measure)(gpu, &random, &d_random, &mut runner)?;
        }
    }
    Ok(())
}

/// A sweep case through [`Sweep::measure`].
struct SweepRunner<'s, 'a> {
    sweep: &'s mut Sweep<'a>,
    case: Option<Case>,
}

impl Runner for SweepRunner<'_, '_> {
    fn run(
        &mut self,
        kernel: &'static str,
        bytes: u64,
        launch: &mut dyn FnMut() -> cpu::Result<LaunchConfig>,
        check: &mut dyn FnMut(&LaunchConfig) -> Result<Checked>,
    ) -> Result<()> {
        let case = self.case.take().expect("one run per case");
        self.sweep.measure(
            case,
            kernel,
            bytes,
            None,
            &mut (),
            |_| launch(),
            |_, cfg| check(cfg),
        )
    }
}

/// One operator sweep of `T` over `cases`.
pub(super) fn sweep_op<T: Sample>(sweep: &mut Sweep<'_>, cases: Vec<Case>, name: &str) -> Result<()>
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
    let Some(op) = ops::<T>().into_iter().find(|op| op.name == name) else {
        anyhow::bail!("no reduction operator {name}");
    };
    let gpu = sweep.gpu();
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| reduce_footprint::<T>(&case, n))? else {
            continue;
        };
        let x = (op.input)(sweep.seed_for(&case, 0), n);
        let d = gpu.upload(&x)?;
        let mut runner = SweepRunner {
            sweep: &mut *sweep,
            case: Some(case),
        };
        (op.measure)(gpu, &x, &d, &mut runner)?;
    }
    Ok(())
}

/// The [`SweepSpec`] of one operator of one type (`op_sweep!("reduce-max-f32", f32, "max",
/// "cpu::reduce::max::<f32>", "4 bytes read per element")`).
macro_rules! op_sweep {
    ($name:literal, $t:ty, $op:literal, $entry:literal, $bytes:literal) => {
        SweepSpec::new($name, $entry, $bytes, sweep::sweep_cases, |s, c| {
            ops::sweep_op::<$t>(s, c, $op)
        })
        .reads_only()
    };
}
pub(super) use op_sweep;

/// The kernels of one operator over every type, in the table's order.
macro_rules! kernels_of {
    ($op:ident) => {
        vec![
            <$op<i8> as ReduceKind>::KERNEL_NAME,
            <$op<i16> as ReduceKind>::KERNEL_NAME,
            <$op<i32> as ReduceKind>::KERNEL_NAME,
            <$op<i64> as ReduceKind>::KERNEL_NAME,
            <$op<u8> as ReduceKind>::KERNEL_NAME,
            <$op<u16> as ReduceKind>::KERNEL_NAME,
            <$op<u32> as ReduceKind>::KERNEL_NAME,
            <$op<u64> as ReduceKind>::KERNEL_NAME,
            <$op<f32> as ReduceKind>::KERNEL_NAME,
            <$op<f64> as ReduceKind>::KERNEL_NAME,
            <$op<F16> as ReduceKind>::KERNEL_NAME,
        ]
    };
}

/// `demo reduce`'s variants of the operator table: one per operator, its kernel per type.
pub(super) fn variants() -> Vec<crate::engine::registry::VariantInfo> {
    use crate::engine::registry::variant;
    [
        ("reduce-op-sum", kernels_of!(Sum)),
        ("reduce-op-product", kernels_of!(Product)),
        ("reduce-op-min", kernels_of!(Min)),
        ("reduce-op-max", kernels_of!(Max)),
        ("reduce-op-argmin", kernels_of!(ArgMin)),
        ("reduce-op-argmax", kernels_of!(ArgMax)),
    ]
    .into_iter()
    .map(|(name, kernels)| variant(name, &kernels))
    .collect()
}
