//! Seeded inputs and CPU references for every primitive type of [`ops`](super::ops) (`i8`..`i64`,
//! `u8`..`u64`, `f32`, `f64`, [`F16`]): what the GPU tests and the demo's operator tables and
//! sweeps draw their inputs from and check against (feature `rand`).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::ops::{Element, F16};
use super::reference::Ordered;

/// The reference of a sum: exact (wrapping) for integers; for floats the `f64` sum and the sum
/// of magnitudes (the scale of the rounding bound).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SumReference<W> {
    /// The wrapping sum in the accumulator type.
    Exact(W),
    /// The `f64` sum and the sum of `|x|`.
    Float {
        /// The sum.
        sum: f64,
        /// The sum of magnitudes.
        sum_abs: f64,
    },
}

/// A primitive element type with its seeded inputs and CPU arithmetic.
pub trait Sample: Element + Ordered + std::fmt::Debug + PartialEq + Default {
    /// The type's name in kernel entries (`i8`, `f16`).
    const NAME: &'static str;
    /// The machine epsilon of the type's float sums (`f64`'s for `f32` and `f64`, which the
    /// reductions sum in `f64`; `f32`'s for `f16`); `None` for integers.
    const EPS: Option<f64>;
    /// `n` random elements: integers over their whole range, floats in `[-1, 1)`.
    fn random(seed: u64, n: usize) -> Vec<Self>;
    /// `n` elements whose product is exact in any order and never 0: odd integers; for floats
    /// `±1` with up to 64 factors of 2 and 64 of 0.5 (8 each for `f16`, which keeps every
    /// partial product in its range).
    fn factors(seed: u64, n: usize) -> Vec<Self>;
    /// The element nearest `x` (integers saturate: infinity is the type's largest value).
    fn from_f64(x: f64) -> Self;
    /// The element as `f64` (exact).
    fn to_f64(self) -> f64;
    /// `a + b`: wrapping for integers; for floats in `f64`, rounded to the type.
    fn wrapping_add(a: Self, b: Self) -> Self;
    /// `a * b`: wrapping for integers; for floats in `f64`, rounded to the type.
    fn wrapping_mul(a: Self, b: Self) -> Self;
    /// The reference of [`Sum<T>`](super::Sum) over `x`.
    fn sum_reference(x: &[Self]) -> SumReference<Self::Wide>;
    /// The exact product of `x` in [`Product<T>`](super::Product)'s accumulator (inputs from
    /// [`Sample::factors`]).
    fn product_reference(x: &[Self]) -> Self::Prod;
    /// A sum's accumulator as `f64`.
    fn wide_f64(w: Self::Wide) -> f64;
    /// A value an output is filled with before a launch, which a kernel never leaves there
    /// by chance.
    fn poison() -> Self;
}

macro_rules! int_sample {
    ($($t:ty => $w:ty;)*) => {$(
        impl Sample for $t {
            const NAME: &'static str = stringify!($t);
            const EPS: Option<f64> = None;
            fn random(seed: u64, n: usize) -> Vec<Self> {
                let mut rng = StdRng::seed_from_u64(seed);
                (0..n).map(|_| rng.random::<$t>()).collect()
            }
            fn factors(seed: u64, n: usize) -> Vec<Self> {
                let mut rng = StdRng::seed_from_u64(seed);
                (0..n).map(|_| rng.random::<$t>() | 1).collect()
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn wrapping_add(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn wrapping_mul(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
            fn sum_reference(x: &[Self]) -> SumReference<$w> {
                SumReference::Exact(x.iter().fold(0 as $w, |a, &v| a.wrapping_add(v as $w)))
            }
            fn product_reference(x: &[Self]) -> $w {
                x.iter().fold(1 as $w, |a, &v| a.wrapping_mul(v as $w))
            }
            fn wide_f64(w: $w) -> f64 {
                w as f64
            }
            fn poison() -> Self {
                <$t>::MAX / 3
            }
        }
    )*};
}
int_sample! {
    i8 => i64; i16 => i64; i32 => i64; i64 => i64;
    u8 => u64; u16 => u64; u32 => u64; u64 => u64;
}

/// `n` exact factors as `f64`: `±1`, then up to `twos` positions times 2 and as many times 0.5.
fn float_factors(seed: u64, n: usize, twos: usize) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut x: Vec<f64> = (0..n)
        .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
        .collect();
    for value in [2.0, 0.5] {
        for _ in 0..twos.min(n / 4) {
            let i = rng.random_range(0..n);
            x[i] *= value;
        }
    }
    x
}

/// `n` values uniform in `[-1, 1)` from 24 random bits each (exact in every float type but the
/// rounding to `f16`).
fn uniform(seed: u64, n: usize) -> impl Iterator<Item = f64> {
    let mut bits = vec![0u32; n];
    StdRng::seed_from_u64(seed).fill(&mut bits[..]);
    bits.into_iter()
        .map(|b| (b >> 8) as f64 * (2.0 / (1u32 << 24) as f64) - 1.0)
}

macro_rules! float_sample {
    ($($t:ty => $name:literal, $eps:expr, $twos:expr, |$v:ident| $to:expr, |$f:ident| $from:expr;)*) => {$(
        impl Sample for $t {
            const NAME: &'static str = $name;
            const EPS: Option<f64> = Some($eps);
            fn random(seed: u64, n: usize) -> Vec<Self> {
                uniform(seed, n).map(Self::from_f64).collect()
            }
            fn factors(seed: u64, n: usize) -> Vec<Self> {
                float_factors(seed, n, $twos).into_iter().map(Self::from_f64).collect()
            }
            fn from_f64($f: f64) -> Self {
                $from
            }
            fn to_f64(self) -> f64 {
                let $v = self;
                $to
            }
            fn wrapping_add(a: Self, b: Self) -> Self {
                Self::from_f64(a.to_f64() + b.to_f64())
            }
            fn wrapping_mul(a: Self, b: Self) -> Self {
                Self::from_f64(a.to_f64() * b.to_f64())
            }
            fn sum_reference(x: &[Self]) -> SumReference<Self::Wide> {
                let (sum, sum_abs) = x.iter().fold((0.0, 0.0), |(s, a), &v| {
                    let v = v.to_f64();
                    (s + v, a + v.abs())
                });
                SumReference::Float { sum, sum_abs }
            }
            fn product_reference(x: &[Self]) -> Self::Prod {
                x.iter().fold(1.0f64, |p, &v| p * v.to_f64()) as Self::Prod
            }
            fn wide_f64(w: Self::Wide) -> f64 {
                w as f64
            }
            fn poison() -> Self {
                Self::from_f64(1234.5)
            }
        }
    )*};
}
float_sample! {
    f32 => "f32", f64::EPSILON, 64, |v| v as f64, |f| f as f32;
    f64 => "f64", f64::EPSILON, 64, |v| v, |f| f;
    F16 => "f16", f32::EPSILON as f64, 8, |v| v.to_f64(), |f| F16::from_f64(f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_have_exact_products_and_inputs_are_seeded() {
        let x = f32::factors(3, 10_000);
        let p = f32::product_reference(&x);
        assert!(p != 0.0 && p.is_finite());
        assert_eq!(f32::random(5, 100), f32::random(5, 100));
        assert!(u8::factors(1, 1000).iter().all(|v| v % 2 == 1));
        let h = F16::factors(2, 100_000);
        assert!(F16::product_reference(&h).is_finite());
        assert_eq!(i8::from_f64(f64::INFINITY), i8::MAX);
    }
}
