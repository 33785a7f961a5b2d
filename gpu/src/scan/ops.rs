//! The operators of the look-back scan over every primitive type: [`ScanOp`] for
//! [`Sum`], [`Product`], [`Min`] and [`Max`] (the markers of [`reduce::ops`](crate::reduce::ops))
//! of `i8`..`i64`, `u8`..`u64`, `f32`, `f64` and [`F16`].
//!
//! | element | accumulator | stored |
//! |---|---|---|
//! | `i8`, `i16` / `u8`, `u16` | `i32` / `u32` (wrapping) | narrowed: the narrow type's own wrapping result |
//! | `i32`, `i64`, `u32`, `u64`, `f32`, `f64` | the element type | as is |
//! | [`F16`] | `f32` | rounded to `f16` once per output |
//!
//! `Min` and `Max` of floats propagate NaN (`torch.cummin`/`torch.cummax` values: once a NaN
//! is met, every later output is NaN); sums and products of integers wrap.

use gpu_std::{Pod, WarpShuffle};

use super::ScanOp;
use crate::reduce::ops::{F16, Max, Min, Product, Sum, widen_f16};

/// An element type of the scans: its accumulator and the arithmetic and order in it.
pub trait Scannable: Copy {
    /// The accumulator (32 bits for the narrow types, else the type itself).
    type Acc: Pod + WarpShuffle + PartialOrd;
    /// 0, 1, the smallest and the largest accumulator (infinities for floats).
    const ZERO: Self::Acc;
    /// See [`Scannable::ZERO`].
    const ONE: Self::Acc;
    /// See [`Scannable::ZERO`].
    const LOWEST: Self::Acc;
    /// See [`Scannable::ZERO`].
    const HIGHEST: Self::Acc;
    /// The element as an accumulator (exact).
    fn lift(self) -> Self::Acc;
    /// The accumulator as an element (wrapping for integers, rounding for `f16`).
    fn store(a: Self::Acc) -> Self;
    /// `a + b`, wrapping for integers.
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a * b`, wrapping for integers.
    fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// Whether `a` is NaN (never for integers).
    fn is_nan(a: Self::Acc) -> bool;
}

macro_rules! scannable_int {
    ($($t:ty => $a:ty;)*) => {$(
        impl Scannable for $t {
            type Acc = $a;
            const ZERO: $a = 0;
            const ONE: $a = 1;
            const LOWEST: $a = <$t>::MIN as $a;
            const HIGHEST: $a = <$t>::MAX as $a;
            #[inline(always)]
            fn lift(self) -> $a { self as $a }
            #[inline(always)]
            fn store(a: $a) -> Self { a as $t }
            #[inline(always)]
            fn add(a: $a, b: $a) -> $a { a.wrapping_add(b) }
            #[inline(always)]
            fn mul(a: $a, b: $a) -> $a { a.wrapping_mul(b) }
            #[inline(always)]
            fn is_nan(_: $a) -> bool { false }
        }
    )*};
}
scannable_int! {
    i8 => i32; i16 => i32; i32 => i32; i64 => i64;
    u8 => u32; u16 => u32; u32 => u32; u64 => u64;
}

macro_rules! scannable_float {
    ($($t:ty => $a:ty, |$x:ident| $lift:expr, |$y:ident| $store:expr;)*) => {$(
        impl Scannable for $t {
            type Acc = $a;
            const ZERO: $a = 0.0;
            const ONE: $a = 1.0;
            const LOWEST: $a = <$a>::NEG_INFINITY;
            const HIGHEST: $a = <$a>::INFINITY;
            #[inline(always)]
            fn lift(self) -> $a { let $x = self; $lift }
            #[inline(always)]
            fn store(a: $a) -> Self { let $y = a; $store }
            #[inline(always)]
            fn add(a: $a, b: $a) -> $a { a + b }
            #[inline(always)]
            fn mul(a: $a, b: $a) -> $a { a * b }
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn is_nan(a: $a) -> bool { a != a }
        }
    )*};
}
scannable_float! {
    f32 => f32, |x| x, |y| y;
    f64 => f64, |x| x, |y| y;
    F16 => f32, |x| widen_f16(x), |y| narrow_f16(y);
}

/// The [`F16`] nearest to `x` (round to nearest even, as `cvt.rn.f16.f32`).
#[inline(always)]
pub fn narrow_f16(x: f32) -> F16 {
    #[cfg(target_arch = "nvptx64")]
    {
        x as f16
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        F16::from_f32(x)
    }
}

impl<T: Scannable> ScanOp for Sum<T> {
    type Item = T;
    type Acc = T::Acc;
    const IDENTITY: T::Acc = T::ZERO;
    #[inline(always)]
    fn lift(x: T) -> T::Acc {
        x.lift()
    }
    #[inline(always)]
    fn combine(a: T::Acc, b: T::Acc) -> T::Acc {
        T::add(a, b)
    }
    #[inline(always)]
    fn store(a: T::Acc) -> T {
        T::store(a)
    }
}

impl<T: Scannable> ScanOp for Product<T> {
    type Item = T;
    type Acc = T::Acc;
    const IDENTITY: T::Acc = T::ONE;
    #[inline(always)]
    fn lift(x: T) -> T::Acc {
        x.lift()
    }
    #[inline(always)]
    fn combine(a: T::Acc, b: T::Acc) -> T::Acc {
        T::mul(a, b)
    }
    #[inline(always)]
    fn store(a: T::Acc) -> T {
        T::store(a)
    }
}

impl<T: Scannable> ScanOp for Max<T> {
    type Item = T;
    type Acc = T::Acc;
    const IDENTITY: T::Acc = T::LOWEST;
    #[inline(always)]
    fn lift(x: T) -> T::Acc {
        x.lift()
    }
    #[inline(always)]
    fn combine(a: T::Acc, b: T::Acc) -> T::Acc {
        // `b` replaces `a` when it is larger, or NaN while `a` is not (NaN propagates).
        if b > a || (T::is_nan(b) && !T::is_nan(a)) {
            b
        } else {
            a
        }
    }
    #[inline(always)]
    fn store(a: T::Acc) -> T {
        T::store(a)
    }
}

impl<T: Scannable> ScanOp for Min<T> {
    type Item = T;
    type Acc = T::Acc;
    const IDENTITY: T::Acc = T::HIGHEST;
    #[inline(always)]
    fn lift(x: T) -> T::Acc {
        x.lift()
    }
    #[inline(always)]
    fn combine(a: T::Acc, b: T::Acc) -> T::Acc {
        if b < a || (T::is_nan(b) && !T::is_nan(a)) {
            b
        } else {
            a
        }
    }
    #[inline(always)]
    fn store(a: T::Acc) -> T {
        T::store(a)
    }
}
