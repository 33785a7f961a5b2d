//! CUB's `DeviceReduce` operators (PyTorch's `sum`, `prod`, `amin`, `amax`, `argmin`,
//! `argmax`) over every primitive type: the [`ReduceKind`]s of `gpu::reduce::ops::reduce_op`,
//! one kernel instance per (operator, type), each a one-launch [`Reduce`](super::Reduce).
//!
//! | kind | element `T` | result (the accumulator's type) |
//! |---|---|---|
//! | [`Sum<T>`] | `i8`, `i16`, `i32`, `i64` / `u8`, `u16`, `u32`, `u64` | `i64` / `u64`, wrapping |
//! | | `f32`, `f64`, [`F16`] (`half::f16`) | `f64`, `f64`, `f32` |
//! | [`Product<T>`] | integers | `i64` / `u64`, wrapping |
//! | | `f32`, `f64`, [`F16`] | `f32`, `f64`, `f32` |
//! | [`Min<T>`], [`Max<T>`] | every type | `T` |
//! | [`ArgMin<T>`], [`ArgMax<T>`] | every type | `(index, T)` |
//!
//! NaN as PyTorch: `Min`/`Max` return NaN if any element is NaN; `ArgMin`/`ArgMax` count NaN
//! as the extreme and return the first NaN. Ties go to the first index. An empty input gives
//! the identity (0, 1, `T::MAX` / `T::MIN`, infinities for floats); an arg-reduction of an
//! empty input is [`Error::EmptyInput`].

use cudarc::driver::{DevicePtr, DeviceRepr};
use gpu::reduce::ops::{Arithmetic, Ordered, reduce_op};
use gpu_std::reduce::Reduction;

pub use gpu::reduce::ops::{ArgMax, ArgMin, ArgPair, F16, Max, Min, Product, Sum};

use super::sum::{ReduceKernel, ReduceKind};
use crate::context::Gpu;
use crate::error::{Error, Result};

/// The kernel instances `gpu::reduce::ops::reduce_op` has (the types its `instantiate` lists).
use gpu::reduce::ops::__gpu_std_instance_of_reduce_op as Instance;

/// A primitive element type of the [`ops`](self): `i8`..`i64`, `u8`..`u64`, `f32`, `f64` and
/// [`F16`] (`half::f16`).
pub trait Element: Ordered + Arithmetic + DeviceRepr + Send + Sync + 'static {
    /// The element whose widened value (`Ordered::Value`) is `v` (exact: `v` came from one).
    fn narrow(v: Self::Value) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn narrow(v: Self::Value) -> Self {
                v as $t
            }
        }
    )*};
}
element!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl Element for F16 {
    fn narrow(v: f32) -> Self {
        F16::from_f32(v)
    }
}

impl<T: Element> ReduceKind for Sum<T>
where
    Sum<T>: Instance + Reduction<Item = T, Acc = T::Wide>,
{
    type Input = T;
    type Acc = T::Wide;
    type Output = T::Wide;
    const KERNEL: ReduceKernel<T, T::Wide> = reduce_op::<Self>();
    fn output(acc: T::Wide, _n: usize) -> Result<T::Wide> {
        Ok(acc)
    }
}

impl<T: Element> ReduceKind for Product<T>
where
    Product<T>: Instance + Reduction<Item = T, Acc = T::Prod>,
{
    type Input = T;
    type Acc = T::Prod;
    type Output = T::Prod;
    const KERNEL: ReduceKernel<T, T::Prod> = reduce_op::<Self>();
    fn output(acc: T::Prod, _n: usize) -> Result<T::Prod> {
        Ok(acc)
    }
}

impl<T: Element> ReduceKind for Min<T>
where
    Min<T>: Instance + Reduction<Item = T, Acc = T::Value>,
{
    type Input = T;
    type Acc = T::Value;
    type Output = T;
    const KERNEL: ReduceKernel<T, T::Value> = reduce_op::<Self>();
    fn output(acc: T::Value, _n: usize) -> Result<T> {
        Ok(T::narrow(acc))
    }
}

impl<T: Element> ReduceKind for Max<T>
where
    Max<T>: Instance + Reduction<Item = T, Acc = T::Value>,
{
    type Input = T;
    type Acc = T::Value;
    type Output = T;
    const KERNEL: ReduceKernel<T, T::Value> = reduce_op::<Self>();
    fn output(acc: T::Value, _n: usize) -> Result<T> {
        Ok(T::narrow(acc))
    }
}

/// `(index, value)` of an arg-reduction's pair; none for an empty input.
fn arg_output<T: Element>(
    acc: ArgPair<T::Value>,
    n: usize,
    operation: &'static str,
) -> Result<(usize, T)> {
    if n == 0 {
        return Err(Error::EmptyInput { operation });
    }
    Ok((acc.index() as usize, T::narrow(acc.value)))
}

impl<T: Element> ReduceKind for ArgMin<T>
where
    ArgMin<T>: Instance + Reduction<Item = T, Acc = ArgPair<T::Value>>,
{
    type Input = T;
    type Acc = ArgPair<T::Value>;
    type Output = (usize, T);
    const KERNEL: ReduceKernel<T, ArgPair<T::Value>> = reduce_op::<Self>();
    fn output(acc: ArgPair<T::Value>, n: usize) -> Result<(usize, T)> {
        arg_output(acc, n, Self::KERNEL_NAME)
    }
}

impl<T: Element> ReduceKind for ArgMax<T>
where
    ArgMax<T>: Instance + Reduction<Item = T, Acc = ArgPair<T::Value>>,
{
    type Input = T;
    type Acc = ArgPair<T::Value>;
    type Output = (usize, T);
    const KERNEL: ReduceKernel<T, ArgPair<T::Value>> = reduce_op::<Self>();
    fn output(acc: ArgPair<T::Value>, n: usize) -> Result<(usize, T)> {
        arg_output(acc, n, Self::KERNEL_NAME)
    }
}

/// The smallest element of `input` (`torch.amin`; NaN if any element is NaN; `T::MAX` or
/// infinity for an empty input), as a host value. Waits for `gpu`'s stream. One launch of
/// `reduce_op_min_<T>` with the handle's kept workspace, as [`sum`](fn@super::sum).
///
/// # Errors
/// As [`sum`](fn@super::sum).
pub fn min<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<T>
where
    Min<T>: ReduceKind<Input = T, Output = T>,
{
    super::reduce::<Min<T>>(gpu, input)
}

/// The largest element of `input` (`torch.amax`; NaN if any element is NaN; `T::MIN` or
/// minus infinity for an empty input), as a host value. Waits for `gpu`'s stream.
///
/// # Errors
/// As [`sum`](fn@super::sum).
pub fn max<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<T>
where
    Max<T>: ReduceKind<Input = T, Output = T>,
{
    super::reduce::<Max<T>>(gpu, input)
}

/// The product of `input`'s elements (`torch.prod`) in [`Product<T>`]'s accumulator (`i64` /
/// `u64` wrapping for integers, `f32` for `f32` and [`F16`], `f64` for `f64`; 1 for an empty
/// input), as a host value. Waits for `gpu`'s stream.
///
/// # Errors
/// As [`sum`](fn@super::sum).
pub fn product<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<T::Prod>
where
    Product<T>: ReduceKind<Input = T, Output = T::Prod>,
{
    super::reduce::<Product<T>>(gpu, input)
}

/// The index of the smallest element of `input` and its value (`torch.argmin`: the first index
/// on ties, the first NaN if any), as host values. Waits for `gpu`'s stream.
///
/// # Errors
/// [`Error::EmptyInput`] for an empty `input` (before any device work); otherwise as
/// [`sum`](fn@super::sum).
pub fn argmin<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<(usize, T)>
where
    ArgMin<T>: ReduceKind<Input = T, Output = (usize, T)>,
{
    super::reduce::<ArgMin<T>>(gpu, input)
}

/// The index of the largest element of `input` and its value (`torch.argmax`: the first index
/// on ties, the first NaN if any), as host values. Waits for `gpu`'s stream.
///
/// # Errors
/// As [`argmin`].
pub fn argmax<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<(usize, T)>
where
    ArgMax<T>: ReduceKind<Input = T, Output = (usize, T)>,
{
    super::reduce::<ArgMax<T>>(gpu, input)
}
