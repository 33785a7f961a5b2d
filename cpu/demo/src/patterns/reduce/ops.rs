//! `demo reduce`'s operator table and `demo sweep reduce-max-f32 ...`: the reductions of
//! `cpu::reduce::ops` (`Sum`, `Product`, `Min`, `Max`, `ArgMin`, `ArgMax` of every primitive
//! type), each checked against the CPU and timed with the L2 flushed.
//!
//! `--dump DIR` writes, for every type `<type>` (`i8`..`u64`, `f32`, `f64`, `f16`), the input
//! `input_<type>` and the product's exact factors `input_product_<type>`, and for every
//! operator `<op>` (`sum`, `product`, `min`, `max`, `argmin`, `argmax`) the result the table
//! verified, `output_<op>_<type>` (one element of the accumulator's type: `i64` for the sum of
//! `i8`, `f32` for the sum of `f16`); the arg-reductions' index is `output_<op>_<type>` (one
//! `u64`) and their value `output_<op>_<type>_value`.

use anyhow::Result;
use cpu::reduce::samples::{Sample, SumReference};
use cpu::reduce::{ArgMax, ArgMin, F16, Max, Min, Product, Reduce, ReduceKind, Sum, reference};
use cpu::{Gpu, verify};
use cudarc::driver::LaunchConfig;

use super::sweep::reduce_footprint;
use super::{Bench, Checked};
use crate::engine::harness::{Plan, Trial};
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::{Case, Sweep};
use crate::engine::timing::L2Flush;

/// An operator's result as the arrays `--dump` writes: a scalar as one element, an arg-result
/// as its index (`u64`) and its value (`<name>_value`).
pub(super) trait DumpResult: Copy {
    /// `check()`, with the result written under `name` as the table's verified output.
    fn verify<V>(self, out: &Out, name: &str, check: impl FnOnce() -> V) -> Result<V>;
}

macro_rules! dump_scalar {
    ($($t:ty),*) => {$(
        impl DumpResult for $t {
            fn verify<V>(self, out: &Out, name: &str, check: impl FnOnce() -> V) -> Result<V> {
                out.verify(name, &[], &[self], |_| check())
            }
        }
    )*};
}
dump_scalar!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, F16);

impl<T: DumpResult + npyz::AutoSerialize> DumpResult for (usize, T) {
    fn verify<V>(self, out: &Out, name: &str, check: impl FnOnce() -> V) -> Result<V> {
        let verdict = out.verify(name, &[], &[self.0 as u64], |_| check())?;
        out.verify(&format!("{name}_value"), &[], &[self.1], |_| ())?;
        Ok(verdict)
    }
}

/// The name an operator's result is dumped under: `output_argmax_u8`.
pub(super) fn output_name(op: &str, ty: &str) -> String {
    format!("output_{op}_{ty}")
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
    match reference_sum {
        SumReference::Exact(e) => (verify::exact(&[got], &[*e]), 0.0),
        SumReference::Float { sum, sum_abs } => {
            let depth = reference::reduce_depth(n, size_of::<T>(), cfg);
            let eps = T::EPS.unwrap_or(0.0);
            let bound = reference::sum_error_bound(n, depth, eps, *sum_abs);
            let got = T::wide_f64(got);
            (
                reference::check_sum(got, *sum, bound),
                (got - sum).abs() / bound,
            )
        }
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
        check: &mut dyn FnMut(&LaunchConfig, Option<&Out>) -> Result<Checked>,
    ) -> Result<()>;
}

/// Runs the reduction `K` through `runner`, checking its output with `check` (and, where the
/// runner dumps, writing it as `output_<op>_<type>`).
fn run_kind<K: ReduceKind>(
    gpu: &Gpu,
    d_input: &cudarc::driver::CudaSlice<K::Input>,
    runner: &mut dyn Runner,
    (op, ty): (&str, &str),
    check: impl Fn(K::Output, &LaunchConfig) -> Checked,
) -> Result<()>
where
    K::Output: DumpResult,
{
    let n = d_input.len();
    let ws = std::cell::RefCell::new(Reduce::<K>::new(gpu)?);
    runner.run(
        K::KERNEL_NAME,
        (n * size_of::<K::Input>()) as u64,
        &mut || ws.borrow_mut().launch(gpu, d_input),
        &mut |cfg, out| {
            let acc = ws.borrow().result(gpu)?;
            let got = K::output(acc, n)?;
            match out {
                Some(out) => got.verify(out, &output_name(op, ty), || check(got, cfg)),
                None => Ok(check(got, cfg)),
            }
        },
    )
}

/// The six operators of `T`.
pub(super) fn ops<T: Sample + DumpResult + npyz::AutoSerialize>() -> [Op<T>; 6]
where
    T::Wide: std::fmt::Debug + PartialEq + DumpResult,
    T::Prod: std::fmt::Debug + PartialEq + DumpResult,
{
    [
        Op {
            name: "sum",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = T::sum_reference(x);
                run_kind::<Sum<T>>(gpu, d, r, ("sum", T::NAME), |got, cfg| {
                    check_sum::<T>(&e, got, x.len(), cfg)
                })
            },
        },
        Op {
            name: "product",
            input: T::factors,
            measure: |gpu, x, d, r| {
                let e = T::product_reference(x);
                run_kind::<Product<T>>(gpu, d, r, ("product", T::NAME), |got, _| {
                    same(got, e, false)
                })
            },
        },
        Op {
            name: "min",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = reference::argmin(x).map(|(_, v)| v);
                run_kind::<Min<T>>(gpu, d, r, ("min", T::NAME), |got, _| {
                    same(Some(got), e, false)
                })
            },
        },
        Op {
            name: "max",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = reference::argmax(x).map(|(_, v)| v);
                run_kind::<Max<T>>(gpu, d, r, ("max", T::NAME), |got, _| {
                    same(Some(got), e, false)
                })
            },
        },
        Op {
            name: "argmin",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = reference::argmin(x);
                run_kind::<ArgMin<T>>(gpu, d, r, ("argmin", T::NAME), |got, _| {
                    same(Some(got), e, false)
                })
            },
        },
        Op {
            name: "argmax",
            input: T::random,
            measure: |gpu, x, d, r| {
                let e = reference::argmax(x);
                run_kind::<ArgMax<T>>(gpu, d, r, ("argmax", T::NAME), |got, _| {
                    same(Some(got), e, false)
                })
            },
        },
    ]
}

/// A row of `demo reduce`'s operator table.
struct TableRunner<'a, 'b> {
    bench: Bench<'a>,
    out: &'b Out,
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
        check: &mut dyn FnMut(&LaunchConfig, Option<&Out>) -> Result<Checked>,
    ) -> Result<()> {
        let Bench { gpu, opts, ceiling } = self.bench;
        let out = self.out;
        let trial: Trial<Checked> = Plan::new(gpu, opts, kernel, kernel)
            .bytes(bytes, Some(ceiling))
            .run_with_setup(
                &mut *self.flush,
                |flush| flush.flush(gpu),
                |_| launch(),
                |_, cfg| check(cfg, Some(out)),
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
    let (t, f, fl) = (&mut table, flush, &mut failures);
    type_rows::<i8>(bench, out, f, t, fl, n)?;
    type_rows::<i16>(bench, out, f, t, fl, n)?;
    type_rows::<i32>(bench, out, f, t, fl, n)?;
    type_rows::<i64>(bench, out, f, t, fl, n)?;
    type_rows::<u8>(bench, out, f, t, fl, n)?;
    type_rows::<u16>(bench, out, f, t, fl, n)?;
    type_rows::<u32>(bench, out, f, t, fl, n)?;
    type_rows::<u64>(bench, out, f, t, fl, n)?;
    type_rows::<f32>(bench, out, f, t, fl, n)?;
    type_rows::<f64>(bench, out, f, t, fl, n)?;
    type_rows::<F16>(bench, out, f, t, fl, n)?;
    out.table(table);
    Ok(failures)
}

/// The six rows of `T`; with `--dump`, its inputs `input_<type>` and `input_product_<type>`.
fn type_rows<T: Sample + DumpResult + npyz::AutoSerialize>(
    bench: Bench,
    out: &Out,
    flush: &mut L2Flush,
    table: &mut Table,
    failures: &mut usize,
    n: usize,
) -> Result<()>
where
    T::Wide: std::fmt::Debug + PartialEq + DumpResult,
    T::Prod: std::fmt::Debug + PartialEq + DumpResult,
{
    let gpu = bench.gpu;
    let random = T::random(bench.opts.seed ^ n as u64, n);
    out.dump(&format!("input_{}", T::NAME), &[], &random)?;
    let d_random = gpu.upload(&random)?;
    for op in ops::<T>() {
        let mut runner = TableRunner {
            bench,
            out,
            flush: &mut *flush,
            table: &mut *table,
            failures: &mut *failures,
            element: T::NAME,
            op: op.name,
        };
        if op.name == "product" {
            let x = (op.input)(bench.opts.seed ^ n as u64, n);
            out.dump(&format!("input_product_{}", T::NAME), &[], &x)?;
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
        check: &mut dyn FnMut(&LaunchConfig, Option<&Out>) -> Result<Checked>,
    ) -> Result<()> {
        let case = self.case.take().expect("one run per case");
        self.sweep.measure(
            case,
            kernel,
            bytes,
            None,
            &mut (),
            |_| launch(),
            |_, cfg| check(cfg, None),
        )
    }
}

/// One operator sweep of `T` over `cases`.
pub(super) fn sweep_op<T: Sample + DumpResult + npyz::AutoSerialize>(
    sweep: &mut Sweep<'_>,
    cases: Vec<Case>,
    name: &str,
) -> Result<()>
where
    T::Wide: std::fmt::Debug + PartialEq + DumpResult,
    T::Prod: std::fmt::Debug + PartialEq + DumpResult,
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
