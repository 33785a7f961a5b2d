//! `reduce_op`: CUB's `DeviceReduce` operators (and PyTorch's `sum`, `prod`, `amin`, `amax`,
//! `argmin`, `argmax`) over every primitive type, one generic kernel on
//! `gpu_std::reduce::device_reduce` with an instance per (operator, type).
//!
//! | operator | element `T` | accumulator (and result) |
//! |---|---|---|
//! | [`Sum<T>`] | `i8`, `i16`, `i32`, `i64` | `i64`, wrapping (PyTorch's `sum` of integers) |
//! | | `u8`, `u16`, `u32`, `u64` | `u64`, wrapping |
//! | | `f32` | `f64` (the lab's `reduce_sum_f32_f64`) |
//! | | `f64` | `f64` |
//! | | [`F16`] | `f32` |
//! | [`Product<T>`] | integers | as [`Sum<T>`] (`i64` / `u64`, wrapping) |
//! | | `f32`, `f64` | `f32`, `f64` (as `torch.prod`) |
//! | | [`F16`] | `f32` |
//! | [`Min<T>`], [`Max<T>`] | `i8`, `i16` / `u8`, `u16` | `i32` / `u32` (exact; the host narrows back) |
//! | | 32- and 64-bit types | `T` |
//! | | [`F16`] | `f32` (exact) |
//! | [`ArgMin<T>`], [`ArgMax<T>`] | every type | [`ArgPair`] of the value (as `Min`/`Max`) and the index |
//!
//! NaN follows PyTorch: `Min` and `Max` of floats return NaN when any element is NaN
//! (`torch.amin`/`torch.amax`); `ArgMin` and `ArgMax` treat NaN as smaller and larger than
//! every number, so they return the first NaN (`torch.argmin`/`torch.argmax`). Ties go to the
//! first index. `-0.0` and `0.0` compare equal (the first one wins an arg-reduction; `Min`/`Max`
//! return either). An empty input gives the identity: 0, 1, the type's largest or smallest value
//! (for floats, infinity), and an [`ArgPair`] with index 0.

use core::marker::PhantomData;

use gpu_std::reduce::{Reduction, device_reduce};
use gpu_std::{Pod, kernel, static_shared};

/// IEEE half precision: `f16` on the device (rustc's `f16`, the nightly `f16` feature, which the
/// NVPTX backend loads as `b16` and widens with `cvt.f32.f16`), `half::f16` on the host (the
/// same 16 bits).
#[cfg(target_arch = "nvptx64")]
pub type F16 = f16;
/// IEEE half precision: `f16` on the device (rustc's `f16`, the nightly `f16` feature, which the
/// NVPTX backend loads as `b16` and widens with `cvt.f32.f16`), `half::f16` on the host (the
/// same 16 bits).
#[cfg(not(target_arch = "nvptx64"))]
pub type F16 = half::f16;

/// The sum of the elements (see the [module](self) table for the accumulator).
pub struct Sum<T>(PhantomData<T>);
/// The product of the elements.
pub struct Product<T>(PhantomData<T>);
/// The smallest element (NaN if any element is NaN).
pub struct Min<T>(PhantomData<T>);
/// The largest element (NaN if any element is NaN).
pub struct Max<T>(PhantomData<T>);
/// The smallest element and its first index (NaN is smallest).
pub struct ArgMin<T>(PhantomData<T>);
/// The largest element and its first index (NaN is largest).
pub struct ArgMax<T>(PhantomData<T>);

/// A value and its index: the accumulator and result of [`ArgMin`] and [`ArgMax`]. The index is
/// two 32-bit words (low, high), so the pair has no padding whatever `V` is (12 bytes for a
/// 4-byte `V`, 16 for an 8-byte one) and crosses lanes word by word.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArgPair<V> {
    /// The element (widened as the operator's table says).
    pub value: V,
    /// The element's index in the input, low word first.
    pub index: [u32; 2],
}

impl<V> ArgPair<V> {
    /// The pair of `value` at `index`.
    #[inline(always)]
    pub const fn new(value: V, index: usize) -> Self {
        ArgPair {
            value,
            index: [index as u32, (index as u64 >> 32) as u32],
        }
    }

    /// The index.
    #[inline(always)]
    pub const fn index(&self) -> u64 {
        self.index[0] as u64 | (self.index[1] as u64) << 32
    }
}

// SAFETY: a `Pod` value (whole 4-byte words, alignment 4 or 8) followed by two `u32`s: when `V`
// is 8-byte aligned its size is a multiple of 8, so the index starts without a gap and ends the
// struct on its alignment; no padding anywhere, and any bits are a value.
unsafe impl<V: Pod> Pod for ArgPair<V> {}

/// How an element type is compared and widened: the value type of its `Min`, `Max` and
/// arg-reductions, and the ordering with PyTorch's NaN rules.
pub trait Ordered: Copy {
    /// The value an accumulator keeps (`T` itself, or a wider type that holds it exactly).
    type Value: Pod + PartialOrd;
    /// The smallest and largest value (`-inf` and `inf` for floats).
    const LOWEST: Self::Value;
    /// See [`Ordered::LOWEST`].
    const HIGHEST: Self::Value;
    /// The element as a [`Ordered::Value`].
    fn value(self) -> Self::Value;
    /// Whether `v` is NaN (never, for integers).
    fn is_nan(v: Self::Value) -> bool;
}

macro_rules! ordered_int {
    ($($t:ty => $v:ty;)*) => {$(
        impl Ordered for $t {
            type Value = $v;
            const LOWEST: $v = <$t>::MIN as $v;
            const HIGHEST: $v = <$t>::MAX as $v;
            #[inline(always)]
            fn value(self) -> $v {
                self as $v
            }
            #[inline(always)]
            fn is_nan(_: $v) -> bool {
                false
            }
        }
    )*};
}
ordered_int! {
    i8 => i32; i16 => i32; i32 => i32; i64 => i64;
    u8 => u32; u16 => u32; u32 => u32; u64 => u64;
}

macro_rules! ordered_float {
    ($($t:ty;)*) => {$(
        impl Ordered for $t {
            type Value = $t;
            const LOWEST: $t = <$t>::NEG_INFINITY;
            const HIGHEST: $t = <$t>::INFINITY;
            #[inline(always)]
            fn value(self) -> $t {
                self
            }
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn is_nan(v: $t) -> bool {
                v != v
            }
        }
    )*};
}
ordered_float! { f32; f64; }

impl Ordered for F16 {
    type Value = f32;
    const LOWEST: f32 = f32::NEG_INFINITY;
    const HIGHEST: f32 = f32::INFINITY;
    #[inline(always)]
    fn value(self) -> f32 {
        widen_f16(self)
    }
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn is_nan(v: f32) -> bool {
        v != v
    }
}

/// An [`F16`] as the `f32` of the same value (exact).
#[inline(always)]
pub fn widen_f16(x: F16) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        x as f32
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.to_f32()
    }
}

/// `a > b`, where NaN is larger than every number (PyTorch's `argmax` and `amax`).
#[inline(always)]
fn above<T: Ordered>(a: T::Value, b: T::Value) -> bool {
    a > b || (T::is_nan(a) && !T::is_nan(b))
}

/// `a < b`, where NaN is smaller than every number (PyTorch's `argmin` and `amin`).
#[inline(always)]
fn below<T: Ordered>(a: T::Value, b: T::Value) -> bool {
    a < b || (T::is_nan(a) && !T::is_nan(b))
}

impl<T: Ordered> Reduction for Max<T> {
    type Item = T;
    type Acc = T::Value;
    const IDENTITY: T::Value = T::LOWEST;
    #[inline(always)]
    fn lift(item: T, _index: usize) -> T::Value {
        item.value()
    }
    #[inline(always)]
    fn combine(a: T::Value, b: T::Value) -> T::Value {
        // NaN propagates from either side: `b` replaces `a` when it is above it or NaN while
        // `a` is not; a NaN `a` stays.
        if !above::<T>(b, a) { a } else { b }
    }
}

impl<T: Ordered> Reduction for Min<T> {
    type Item = T;
    type Acc = T::Value;
    const IDENTITY: T::Value = T::HIGHEST;
    #[inline(always)]
    fn lift(item: T, _index: usize) -> T::Value {
        item.value()
    }
    #[inline(always)]
    fn combine(a: T::Value, b: T::Value) -> T::Value {
        if !below::<T>(b, a) { a } else { b }
    }
}

/// Whether `b` replaces `a` in an arg-reduction whose order is `better`: `b` is better, or
/// they tie (equal, or both NaN) and `b` comes first.
#[inline(always)]
fn arg_takes<T: Ordered>(
    a: &ArgPair<T::Value>,
    b: &ArgPair<T::Value>,
    better: fn(T::Value, T::Value) -> bool,
) -> bool {
    better(b.value, a.value) || (!better(a.value, b.value) && b.index() < a.index())
}

impl<T: Ordered> Reduction for ArgMax<T> {
    type Item = T;
    type Acc = ArgPair<T::Value>;
    // Index 0: if every element equals the lowest value, the answer is index 0, which the
    // identity then names too; otherwise it loses to every element above it.
    const IDENTITY: ArgPair<T::Value> = ArgPair::new(T::LOWEST, 0);
    #[inline(always)]
    fn lift(item: T, index: usize) -> Self::Acc {
        ArgPair::new(item.value(), index)
    }
    #[inline(always)]
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc {
        if arg_takes::<T>(&a, &b, above::<T>) {
            b
        } else {
            a
        }
    }
    #[inline(always)]
    fn accumulate(acc: Self::Acc, item: T, index: usize) -> Self::Acc {
        // `index` is past `acc`'s: only a strictly better element replaces it.
        let v = item.value();
        if above::<T>(v, acc.value) {
            ArgPair::new(v, index)
        } else {
            acc
        }
    }
}

impl<T: Ordered> Reduction for ArgMin<T> {
    type Item = T;
    type Acc = ArgPair<T::Value>;
    const IDENTITY: ArgPair<T::Value> = ArgPair::new(T::HIGHEST, 0);
    #[inline(always)]
    fn lift(item: T, index: usize) -> Self::Acc {
        ArgPair::new(item.value(), index)
    }
    #[inline(always)]
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc {
        if arg_takes::<T>(&a, &b, below::<T>) {
            b
        } else {
            a
        }
    }
    #[inline(always)]
    fn accumulate(acc: Self::Acc, item: T, index: usize) -> Self::Acc {
        let v = item.value();
        if below::<T>(v, acc.value) {
            ArgPair::new(v, index)
        } else {
            acc
        }
    }
}

/// The accumulator of [`Sum<T>`] and [`Product<T>`] and the widening into it.
pub trait Arithmetic: Copy {
    /// The accumulator of sums and products (see the [module](self) table).
    type Wide: Pod;
    /// The accumulator of products (`Wide`, except `f32` products stay `f32`).
    type Prod: Pod;
    /// `x` in the accumulator of sums.
    fn wide(self) -> Self::Wide;
    /// `x` in the accumulator of products.
    fn prod(self) -> Self::Prod;
    /// `a + b` (wrapping for integers).
    fn add(a: Self::Wide, b: Self::Wide) -> Self::Wide;
    /// `a * b` (wrapping for integers).
    fn mul(a: Self::Prod, b: Self::Prod) -> Self::Prod;
    /// 0 of the sums.
    const ZERO: Self::Wide;
    /// 1 of the products.
    const ONE: Self::Prod;
}

macro_rules! arithmetic_int {
    ($($t:ty => $w:ty;)*) => {$(
        impl Arithmetic for $t {
            type Wide = $w;
            type Prod = $w;
            const ZERO: $w = 0;
            const ONE: $w = 1;
            #[inline(always)]
            fn wide(self) -> $w { self as $w }
            #[inline(always)]
            fn prod(self) -> $w { self as $w }
            #[inline(always)]
            fn add(a: $w, b: $w) -> $w { a.wrapping_add(b) }
            #[inline(always)]
            fn mul(a: $w, b: $w) -> $w { a.wrapping_mul(b) }
        }
    )*};
}
arithmetic_int! {
    i8 => i64; i16 => i64; i32 => i64; i64 => i64;
    u8 => u64; u16 => u64; u32 => u64; u64 => u64;
}

macro_rules! arithmetic_float {
    ($($t:ty => $w:ty, $p:ty, |$x:ident| $widen:expr;)*) => {$(
        impl Arithmetic for $t {
            type Wide = $w;
            type Prod = $p;
            const ZERO: $w = 0.0;
            const ONE: $p = 1.0;
            #[inline(always)]
            fn wide(self) -> $w { let $x = self; $widen as $w }
            #[inline(always)]
            fn prod(self) -> $p { let $x = self; $widen as $p }
            #[inline(always)]
            fn add(a: $w, b: $w) -> $w { a + b }
            #[inline(always)]
            fn mul(a: $p, b: $p) -> $p { a * b }
        }
    )*};
}
arithmetic_float! {
    f32 => f64, f32, |x| x;
    f64 => f64, f64, |x| x;
    F16 => f32, f32, |x| widen_f16(x);
}

impl<T: Arithmetic> Reduction for Sum<T> {
    type Item = T;
    type Acc = T::Wide;
    const IDENTITY: T::Wide = T::ZERO;
    #[inline(always)]
    fn lift(item: T, _index: usize) -> T::Wide {
        item.wide()
    }
    #[inline(always)]
    fn combine(a: T::Wide, b: T::Wide) -> T::Wide {
        T::add(a, b)
    }
}

impl<T: Arithmetic> Reduction for Product<T> {
    type Item = T;
    type Acc = T::Prod;
    const IDENTITY: T::Prod = T::ONE;
    #[inline(always)]
    fn lift(item: T, _index: usize) -> T::Prod {
        item.prod()
    }
    #[inline(always)]
    fn combine(a: T::Prod, b: T::Prod) -> T::Prod {
        T::mul(a, b)
    }
}

/// The reduction `R` of `n` elements into `*result`, in one launch
/// (`gpu_std::reduce::device_reduce`): entries `reduce_op_<operator>_<type>`, for example
/// `reduce_op_max_f32`, `reduce_op_arg_max_i8`, `reduce_op_sum_u16`, one per operator of the
/// [module](self) table and element type (`i8`..`i64`, `u8`..`u64`, `f32`, `f64`, `f16`).
///
/// Algorithm: each block reads an even share of the input with 16-byte loads (4 in flight per
/// thread; 16 elements of a 1-byte type per load, 2 of an 8-byte one), each thread accumulates
/// its elements in index order, a block reduction by warp shuffles, and the last block to
/// finish combines the block partials in a fixed order, so the result is deterministic for a
/// given grid. Float sums and products round in that order (the error of a sum is at most its
/// depth times the accumulator's epsilon times the sum of magnitudes).
///
/// Launch: blocks of [`REDUCE_SUM_BLOCK`](super::REDUCE_SUM_BLOCK) threads (any multiple of 32
/// up to 1024), at most one wave of resident blocks, at least one block (also for `n = 0`: the
/// result is then the identity).
///
/// # Safety
/// `input` is aligned for its element type, valid for `n` elements and not written during the
/// launch; `partials` holds `gridDim.x` accumulators; `counter` points to a `u32` that is 0
/// and used by no concurrent launch (0 again when the kernel ends); `result` points to one
/// accumulator.
///
/// Performance: reads each element once; bound by DRAM bandwidth (the arg-reductions of 1-byte
/// types by the issue rate: a compare and two selects per byte).
#[kernel(instantiate(R =
    Sum<i8>, Sum<i16>, Sum<i32>, Sum<i64>, Sum<u8>, Sum<u16>, Sum<u32>, Sum<u64>,
    Sum<f32>, Sum<f64>, Sum<F16>,
    Product<i8>, Product<i16>, Product<i32>, Product<i64>, Product<u8>, Product<u16>,
    Product<u32>, Product<u64>, Product<f32>, Product<f64>, Product<F16>,
    Min<i8>, Min<i16>, Min<i32>, Min<i64>, Min<u8>, Min<u16>, Min<u32>, Min<u64>,
    Min<f32>, Min<f64>, Min<F16>,
    Max<i8>, Max<i16>, Max<i32>, Max<i64>, Max<u8>, Max<u16>, Max<u32>, Max<u64>,
    Max<f32>, Max<f64>, Max<F16>,
    ArgMin<i8>, ArgMin<i16>, ArgMin<i32>, ArgMin<i64>, ArgMin<u8>, ArgMin<u16>, ArgMin<u32>,
    ArgMin<u64>, ArgMin<f32>, ArgMin<f64>, ArgMin<F16>,
    ArgMax<i8>, ArgMax<i16>, ArgMax<i32>, ArgMax<i64>, ArgMax<u8>, ArgMax<u16>, ArgMax<u32>,
    ArgMax<u64>, ArgMax<f32>, ArgMax<f64>, ArgMax<F16>,
))]
pub unsafe fn reduce_op<R: Reduction>(
    input: *const R::Item,
    n: usize,
    partials: *mut R::Acc,
    counter: *mut u32,
    result: *mut R::Acc,
) {
    let warp_totals = static_shared!(s_reduce_op: [R::Acc; 32]);
    // SAFETY: forwarded to the caller's contract.
    unsafe { device_reduce::<R>(input, n, partials, counter, result, &warp_totals) }
}
