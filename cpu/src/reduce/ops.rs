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
//! as the extreme and return the first NaN. A NaN is any pattern with an all-ones exponent and
//! a non-zero mantissa, whatever its sign bit: a negative NaN (`-f32::NAN`, the sign bit set) is
//! a NaN like any other, larger than `+inf` for `ArgMax`, smaller than `-inf` for `ArgMin`, never
//! ordered by its sign or payload; the result carries an input NaN's own bits (for `Min`/`Max`
//! with several NaNs, which one is unspecified; for the arg-reductions, the first by index).
//! Ties go to the first index. An empty input gives the identity (0, 1, `T::MAX` / `T::MIN`,
//! infinities for floats); an arg-reduction of an empty input is [`Error::EmptyInput`].
//!
//! # Code generic over the element type
//! Every operator has every [`Element`], so a bound `T: Element` is all a caller writes: the
//! functions here, [`reduce`](fn@super::reduce)`::<Min<T>>` and
//! [`segmented_reduce`](super::segmented_reduce)`::<ArgMax<T>>` need no bound of their own, and
//! the accumulator types are [`Arithmetic`]'s `T::Wide` and `T::Prod` and [`Ordered`]'s
//! `T::Value`:
//!
//! ```
//! use cpu::reduce::{self, Arithmetic, Element, Min};
//! use cpu::{Gpu, Result};
//! use cudarc::driver::CudaSlice;
//!
//! /// The range of `x`, and its product.
//! fn spread<T: Element>(gpu: &Gpu, x: &CudaSlice<T>) -> Result<(T, T, T::Prod)> {
//!     let lo = reduce::reduce::<Min<T>>(gpu, x)?; // as reduce::min(gpu, x)
//!     Ok((lo, reduce::max(gpu, x)?, reduce::product(gpu, x)?))
//! }
//! # let _ = spread::<i8>;
//! # let _ = spread::<cpu::reduce::F16>;
//! ```

use cudarc::driver::{DevicePtr, DeviceRepr};
use gpu::reduce::ops::reduce_op;
use gpu::reduce::segmented::segmented_reduce;

pub use gpu::reduce::ops::{
    ArgMax, ArgMin, ArgPair, Arithmetic, F16, Max, Min, Ordered, Product, Sum,
};

use super::segmented::SegmentedKernel;
use super::sum::{ReduceKernel, ReduceKind};
use crate::context::Gpu;
use crate::error::{Error, Result};

/// A primitive element type of the [`ops`](self): `i8`..`i64`, `u8`..`u64`, `f32`, `f64` and
/// [`F16`] (`half::f16`). Sealed: these are the types the kernels are instantiated for.
///
/// It implies every operator: for any `T: Element`, [`Sum<T>`], [`Product<T>`], [`Min<T>`],
/// [`Max<T>`], [`ArgMin<T>`] and [`ArgMax<T>`] are [`ReduceKind`]s and [`SegmentedKind`](super::SegmentedKind)s,
/// and `Sum<T>`, `Product<T>`, `Min<T>`, `Max<T>` are [`ScanKind`](crate::scan::ScanKind)s, so
/// generic code needs no `where` clause naming them (see the [module](self) docs).
pub trait Element:
    Ordered + Arithmetic + Scannable + DeviceRepr + Send + Sync + 'static + sealed::Instances
{
    /// The element whose widened value (`Ordered::Value`) is `v` (exact: `v` came from one).
    fn narrow(v: Self::Value) -> Self;
}

pub use gpu::scan::ops::Scannable;

pub(crate) mod sealed {
    use super::super::segmented::SegmentedKernel;
    use super::super::sum::ReduceKernel;
    use super::{ArgPair, Arithmetic, Ordered};
    use crate::scan::ScanKernel;
    use gpu::scan::ops::Scannable;

    /// The kernel instances of one element type: what makes every operator of it a kind.
    pub trait Instances:
        Ordered + Arithmetic + Scannable<Acc: gpu_std::DeviceCopy> + Sized
    {
        const SUM: ReduceKernel<Self, Self::Wide>;
        const PRODUCT: ReduceKernel<Self, Self::Prod>;
        const MIN: ReduceKernel<Self, Self::Value>;
        const MAX: ReduceKernel<Self, Self::Value>;
        const ARG_MIN: ReduceKernel<Self, ArgPair<Self::Value>>;
        const ARG_MAX: ReduceKernel<Self, ArgPair<Self::Value>>;
        const SEGMENTED_SUM: SegmentedKernel<Self, Self::Wide>;
        const SEGMENTED_PRODUCT: SegmentedKernel<Self, Self::Prod>;
        const SEGMENTED_MIN: SegmentedKernel<Self, Self::Value>;
        const SEGMENTED_MAX: SegmentedKernel<Self, Self::Value>;
        const SEGMENTED_ARG_MIN: SegmentedKernel<Self, ArgPair<Self::Value>>;
        const SEGMENTED_ARG_MAX: SegmentedKernel<Self, ArgPair<Self::Value>>;
        const SCAN_SUM: ScanKernel<Self, <Self as Scannable>::Acc>;
        const SCAN_PRODUCT: ScanKernel<Self, <Self as Scannable>::Acc>;
        const SCAN_MIN: ScanKernel<Self, <Self as Scannable>::Acc>;
        const SCAN_MAX: ScanKernel<Self, <Self as Scannable>::Acc>;
    }
}

macro_rules! element {
    ($($t:ty => |$v:ident| $narrow:expr;)*) => {$(
        impl sealed::Instances for $t {
            const SUM: ReduceKernel<$t, Self::Wide> = reduce_op::<Sum<$t>>();
            const PRODUCT: ReduceKernel<$t, Self::Prod> = reduce_op::<Product<$t>>();
            const MIN: ReduceKernel<$t, Self::Value> = reduce_op::<Min<$t>>();
            const MAX: ReduceKernel<$t, Self::Value> = reduce_op::<Max<$t>>();
            const ARG_MIN: ReduceKernel<$t, ArgPair<Self::Value>> = reduce_op::<ArgMin<$t>>();
            const ARG_MAX: ReduceKernel<$t, ArgPair<Self::Value>> = reduce_op::<ArgMax<$t>>();
            const SEGMENTED_SUM: SegmentedKernel<$t, Self::Wide> = segmented_reduce::<Sum<$t>>();
            const SEGMENTED_PRODUCT: SegmentedKernel<$t, Self::Prod> =
                segmented_reduce::<Product<$t>>();
            const SEGMENTED_MIN: SegmentedKernel<$t, Self::Value> = segmented_reduce::<Min<$t>>();
            const SEGMENTED_MAX: SegmentedKernel<$t, Self::Value> = segmented_reduce::<Max<$t>>();
            const SEGMENTED_ARG_MIN: SegmentedKernel<$t, ArgPair<Self::Value>> =
                segmented_reduce::<ArgMin<$t>>();
            const SEGMENTED_ARG_MAX: SegmentedKernel<$t, ArgPair<Self::Value>> =
                segmented_reduce::<ArgMax<$t>>();
            const SCAN_SUM: crate::scan::ScanKernel<$t, <$t as Scannable>::Acc> =
                gpu::scan::lookback::scan_lookback::<Sum<$t>>();
            const SCAN_PRODUCT: crate::scan::ScanKernel<$t, <$t as Scannable>::Acc> =
                gpu::scan::lookback::scan_lookback::<Product<$t>>();
            const SCAN_MIN: crate::scan::ScanKernel<$t, <$t as Scannable>::Acc> =
                gpu::scan::lookback::scan_lookback::<Min<$t>>();
            const SCAN_MAX: crate::scan::ScanKernel<$t, <$t as Scannable>::Acc> =
                gpu::scan::lookback::scan_lookback::<Max<$t>>();
        }

        impl Element for $t {
            fn narrow($v: Self::Value) -> Self {
                $narrow
            }
        }
    )*};
}
element! {
    i8 => |v| v as i8; i16 => |v| v as i16; i32 => |v| v; i64 => |v| v;
    u8 => |v| v as u8; u16 => |v| v as u16; u32 => |v| v; u64 => |v| v;
    f32 => |v| v; f64 => |v| v; F16 => |v| F16::from_f32(v);
}

impl<T: Element> ReduceKind for Sum<T> {
    type Input = T;
    type Acc = T::Wide;
    type Output = T::Wide;
    const KERNEL: ReduceKernel<T, T::Wide> = T::SUM;
    fn output(acc: T::Wide, _n: usize) -> Result<T::Wide> {
        Ok(acc)
    }
}

impl<T: Element> ReduceKind for Product<T> {
    type Input = T;
    type Acc = T::Prod;
    type Output = T::Prod;
    const KERNEL: ReduceKernel<T, T::Prod> = T::PRODUCT;
    fn output(acc: T::Prod, _n: usize) -> Result<T::Prod> {
        Ok(acc)
    }
}

impl<T: Element> ReduceKind for Min<T> {
    type Input = T;
    type Acc = T::Value;
    type Output = T;
    const KERNEL: ReduceKernel<T, T::Value> = T::MIN;
    fn output(acc: T::Value, _n: usize) -> Result<T> {
        Ok(T::narrow(acc))
    }
}

impl<T: Element> ReduceKind for Max<T> {
    type Input = T;
    type Acc = T::Value;
    type Output = T;
    const KERNEL: ReduceKernel<T, T::Value> = T::MAX;
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

impl<T: Element> ReduceKind for ArgMin<T> {
    type Input = T;
    type Acc = ArgPair<T::Value>;
    type Output = (usize, T);
    const KERNEL: ReduceKernel<T, ArgPair<T::Value>> = T::ARG_MIN;
    fn output(acc: ArgPair<T::Value>, n: usize) -> Result<(usize, T)> {
        arg_output(acc, n, Self::KERNEL_NAME)
    }
}

impl<T: Element> ReduceKind for ArgMax<T> {
    type Input = T;
    type Acc = ArgPair<T::Value>;
    type Output = (usize, T);
    const KERNEL: ReduceKernel<T, ArgPair<T::Value>> = T::ARG_MAX;
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
pub fn min<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<T> {
    super::reduce::<Min<T>>(gpu, input)
}

/// The largest element of `input` (`torch.amax`; NaN if any element is NaN; `T::MIN` or
/// minus infinity for an empty input), as a host value. Waits for `gpu`'s stream.
///
/// # Errors
/// As [`sum`](fn@super::sum).
pub fn max<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<T> {
    super::reduce::<Max<T>>(gpu, input)
}

/// The product of `input`'s elements (`torch.prod`) in [`Product<T>`]'s accumulator,
/// [`Arithmetic::Prod`] (`i64` / `u64` wrapping for integers, `f32` for `f32` and [`F16`],
/// `f64` for `f64`; 1 for an empty input), as a host value. Waits for `gpu`'s stream.
///
/// # Errors
/// As [`sum`](fn@super::sum).
pub fn product<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<T::Prod> {
    super::reduce::<Product<T>>(gpu, input)
}

/// The index of the smallest element of `input` and its value (`torch.argmin`: the first index
/// on ties, the first NaN if any), as host values. Waits for `gpu`'s stream.
///
/// # Errors
/// [`Error::EmptyInput`] for an empty `input` (before any device work); otherwise as
/// [`sum`](fn@super::sum).
pub fn argmin<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<(usize, T)> {
    super::reduce::<ArgMin<T>>(gpu, input)
}

/// The index of the largest element of `input` and its value (`torch.argmax`: the first index
/// on ties, the first NaN if any), as host values. Waits for `gpu`'s stream.
///
/// # Errors
/// As [`argmin`].
pub fn argmax<T: Element>(gpu: &Gpu, input: &impl DevicePtr<T>) -> Result<(usize, T)> {
    super::reduce::<ArgMax<T>>(gpu, input)
}

#[cfg(test)]
mod tests {
    use cudarc::driver::{CudaSlice, CudaView};

    use super::*;
    use crate::reduce::{self, SegmentedKind, segmented_reduce};
    use crate::scan;

    /// Code generic over the element type, bounded by `Element` alone (no `where` clause
    /// naming an operator): every call below must compile for every `T`.
    fn generic<T: Element>(gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<T> {
        let lo: T = reduce::min(gpu, x)?;
        let _: T = reduce::max(gpu, x)?;
        let _: (usize, T) = reduce::argmin(gpu, x)?;
        let _: (usize, T) = reduce::argmax(gpu, x)?;
        let _: T::Prod = reduce::product(gpu, x)?;
        let _: T::Wide = reduce::reduce::<Sum<T>>(gpu, x)?;
        let _: T = reduce::reduce::<Min<T>>(gpu, x)?;
        let offsets = gpu.upload(&[0u64, x.len() as u64])?;
        let _: Vec<(usize, T)> = segmented_reduce::<ArgMax<T>>(gpu, x, &offsets)?;
        let _: Vec<T::Value> = segmented_reduce::<Max<T>>(gpu, x, &offsets)
            .map(|v| v.into_iter().map(T::value).collect())?;
        scan::cumsum(gpu, x, y)?;
        scan::cummax(gpu, x, y)?;
        scan::inclusive_scan::<Product<T>>(gpu, x, y)?;
        Ok(lo)
    }

    /// The accumulator types are nameable from `cpu` alone.
    fn accumulators<T: Element>() -> [usize; 3] {
        [
            size_of::<<Sum<T> as ReduceKind>::Acc>(),
            size_of::<<ArgMin<T> as ReduceKind>::Acc>(),
            size_of::<<T as Scannable>::Acc>(),
        ]
    }

    #[test]
    fn code_generic_over_the_element_needs_only_element() {
        type G<T> = fn(&Gpu, &CudaSlice<T>, &mut CudaSlice<T>) -> Result<T>;
        let _: G<i8> = generic::<i8>;
        let _: G<i16> = generic::<i16>;
        let _: G<i32> = generic::<i32>;
        let _: G<i64> = generic::<i64>;
        let _: G<u8> = generic::<u8>;
        let _: G<u16> = generic::<u16>;
        let _: G<u32> = generic::<u32>;
        let _: G<u64> = generic::<u64>;
        let _: G<f32> = generic::<f32>;
        let _: G<f64> = generic::<f64>;
        let _: G<F16> = generic::<F16>;
        assert_eq!(accumulators::<i8>(), [8, 12, 4]);
        assert_eq!(accumulators::<F16>(), [4, 12, 4]);
        assert_eq!(accumulators::<f64>(), [8, 16, 8]);
        // Each kind names its own instance.
        assert_eq!(<Min<F16> as ReduceKind>::KERNEL_NAME, "reduce_op_min_f16");
        assert_eq!(
            <ArgMax<u8> as SegmentedKind>::SEGMENTED.name(),
            "segmented_reduce_arg_max_u8"
        );
        assert_eq!(
            <Max<i16> as scan::ScanKind>::KERNEL.name(),
            "scan_lookback_max_i16"
        );
    }

    /// `inclusive_scan_by_key` names the operator only; the key type comes from the keys.
    #[allow(dead_code)]
    fn by_key_infers_the_key_type(
        gpu: &Gpu,
        signed: &CudaSlice<i32>,
        unsigned: CudaView<'_, u32>,
        x: &CudaSlice<f32>,
        y: &mut CudaSlice<f32>,
    ) -> Result<()> {
        scan::inclusive_scan_by_key::<Sum<f32>>(gpu, signed, x, y)?;
        scan::inclusive_scan_by_key::<Max<f32>>(gpu, &unsigned, x, y)
    }

    /// A negative NaN is a NaN: `Min`/`Max` propagate it from either side with its own bits,
    /// and the arg-reductions count it as the extreme.
    #[test]
    fn negative_nans_are_nans() {
        use gpu_std::reduce::Reduction;
        let neg = -f32::NAN;
        for (a, b) in [(1.0, neg), (neg, 1.0), (f32::NEG_INFINITY, neg)] {
            assert_eq!(
                <Min<f32> as Reduction>::combine(a, b).to_bits(),
                neg.to_bits()
            );
            assert_eq!(
                <Max<f32> as Reduction>::combine(a, b).to_bits(),
                neg.to_bits()
            );
        }
        let pair = |v: f32, i| ArgPair::new(v, i);
        let max = <ArgMax<f32> as Reduction>::combine(pair(f32::INFINITY, 0), pair(neg, 3));
        assert_eq!((max.index(), max.value.to_bits()), (3, neg.to_bits()));
        let min = <ArgMin<f32> as Reduction>::combine(pair(neg, 5), pair(f32::NAN, 2));
        assert_eq!(
            min.index(),
            2,
            "NaNs tie whatever their signs: the first index wins"
        );
    }

    #[test]
    fn the_narrowing_is_exact() {
        assert_eq!(i8::narrow(i8::MIN.value()), i8::MIN);
        assert_eq!(u16::narrow(u16::MAX.value()), u16::MAX);
        let h = F16::from_f32(-2.5);
        assert_eq!(F16::narrow(h.value()), h);
    }
}
