//! CUB's `DeviceHistogram::HistogramEven`: `bins` equal-width bins over `[lower, upper)`,
//! for `u8`, `u16`, `i32` and `f32` samples into `u32` or `u64` counters.
//!
//! The levels `lower` and `upper` have a type of their own ([`EvenSample::Level`], as CUB's
//! `LevelT`): `i64` for the integer samples, so that `upper` can lie above the sample type's
//! largest value (`[0, 256)` counts every `u8`, `255` included), and `f32` for `f32` samples.
//!
//! The bin of a sample is [`EvenSample::bin`], which the CPU reference
//! (`cpu::histogram::reference::bin_of`) calls too, so host and device compute every bin with
//! the same operations:
//! - integers: `floor((x - lower) * bins / (upper - lower))`, exact: the comparisons and the
//!   difference in `i64`, the product and quotient in `u32` when the range fits in 32 bits and
//!   `(upper - lower - 1) * bins` does too (every byte histogram), else in `u64` (it always
//!   fits: the range is at most 2^32 values, `bins` at most 2^20);
//! - `f32`, as CUB: `(x - lower) * scale` with `scale = bins / (upper - lower)`, each step
//!   rounded in `f32`, truncated towards zero and clamped to `bins - 1` (rounding may carry a
//!   sample just below `upper` to `bins`);
//! - samples below `lower`, at or above `upper`, and NaN belong to no bin and are dropped.
//!
//! Two kernels per pair of types, stamped out by `even_kernels!` (a `#[kernel]` has concrete
//! types):
//! - `histogram_even_shared_<sample>_<counter>`: privatisation (PMPP §9.4) with the block's
//!   histogram in dynamic shared memory (`bins * size_of::<counter>()` bytes, at most
//!   [`EVEN_SHARED_LIMIT_BYTES`](super::EVEN_SHARED_LIMIT_BYTES)), runs of equal bins
//!   aggregated per thread (§9.6), one global atomic per nonzero bin per block at the end;
//! - `histogram_even_global_<sample>_<counter>`: the same loop with the runs added straight
//!   to `counts` in global memory, for any number of bins.

use crate::coordinates;
use gpu_std::{
    DynamicShared, ReduceAdd, grid_dim, kernel, red_global_add, red_shared_add, syncthreads,
};

/// What [`EvenSample::bin`] returns for a sample that belongs to no bin.
pub const NO_BIN: u32 = u32::MAX;

/// A sample type of the even histogram, and its bin rule.
pub trait EvenSample: Copy {
    /// The type of the levels `lower` and `upper`: `i64` for integer samples, `f32` for `f32`.
    type Level: Copy;

    /// The launch's constants of the rule, computed once from `bins`, `lower` and `upper`.
    type Rule: Copy;

    /// The rule for `bins` bins over `[lower, upper)`. Precondition (the host checks it):
    /// `1 <= bins <= MAX_BINS`, `lower < upper`, both finite; for integer levels
    /// `upper - lower <= 2^32`.
    fn rule(bins: u32, lower: Self::Level, upper: Self::Level) -> Self::Rule;

    /// The bin of `self` under `rule`, or [`NO_BIN`] when it is below `lower`, at or above
    /// `upper`, or NaN.
    fn bin(self, rule: &Self::Rule) -> u32;
}

/// The rule of the integer samples: the lower level, `last = upper - lower - 1` (the range less
/// one, below 2^32), the bins, and whether the range and `(range - 1) * bins` fit in 32 bits.
/// Levels that miss every value of the sample type move `lower` to `MIN - 2^33`, where every
/// sample is more than `last` above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntegerRule {
    lower: i64,
    last: u32,
    bins: u32,
    narrow: bool,
}

macro_rules! integer_sample {
    ($($t:ty),*) => {$(
        impl EvenSample for $t {
            type Level = i64;
            type Rule = IntegerRule;

            #[inline(always)]
            fn rule(bins: u32, lower: i64, upper: i64) -> IntegerRule {
                // Levels that miss every sample value count nothing: range 0. Any other range
                // ends above `MIN` and is at most 2^32 wide (precondition), so `lower` lies in
                // `MIN - 2^32 .. MAX` and `x - lower` cannot overflow for any sample `x`.
                if upper <= <$t>::MIN as i64 || lower > <$t>::MAX as i64 {
                    return IntegerRule {
                        lower: <$t>::MIN as i64 - (1 << 33),
                        last: 0,
                        bins,
                        narrow: true,
                    };
                }
                // `upper - lower` lies in 1..=2^32 (precondition), so it does not wrap.
                let range = upper.wrapping_sub(lower) as u64;
                IntegerRule {
                    lower,
                    last: (range - 1) as u32,
                    bins,
                    narrow: range <= u32::MAX as u64
                        && (range - 1) * bins as u64 <= u32::MAX as u64,
                }
            }

            #[inline(always)]
            fn bin(self, rule: &IntegerRule) -> u32 {
                // One unsigned compare: a sample below `lower` wraps to above any range (the
                // rule keeps `x - lower` within i64), one above `upper` is beyond `last`.
                let d = (self as i64).wrapping_sub(rule.lower) as u64;
                if d > rule.last as u64 {
                    return NO_BIN;
                }
                // `0 <= x - lower < range <= 2^32`.
                if rule.narrow {
                    // `d * bins <= (range - 1) * bins`, which fits, as does `range`.
                    d as u32 * rule.bins / (rule.last + 1)
                } else {
                    // `d * bins < 2^32 * 2^20`.
                    (d * rule.bins as u64 / (rule.last as u64 + 1)) as u32
                }
            }
        }
    )*};
}
integer_sample!(u8, u16, i32);

/// The rule of `f32` samples, as CUB's: the bounds, `scale = bins / (upper - lower)` (in
/// `f32`), and the last bin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatRule {
    lower: f32,
    upper: f32,
    scale: f32,
    last: u32,
}

impl EvenSample for f32 {
    type Level = f32;
    type Rule = FloatRule;

    #[inline(always)]
    fn rule(bins: u32, lower: f32, upper: f32) -> FloatRule {
        FloatRule {
            lower,
            upper,
            scale: bins as f32 / (upper - lower),
            last: bins.saturating_sub(1),
        }
    }

    #[inline(always)]
    fn bin(self, rule: &FloatRule) -> u32 {
        // Written so that NaN fails the test.
        if !(self >= rule.lower && self < rule.upper) {
            return NO_BIN;
        }
        // Both operations round to nearest in f32 (no fused multiply-add: the subtraction
        // comes first); `as` truncates towards zero (a NaN from `0 * inf` becomes 0).
        let b = ((self - rule.lower) * rule.scale) as u32;
        b.min(rule.last)
    }
}

/// A counter of the even histogram and of the byte histogram: `u32` or `u64`.
pub trait EvenCounter: ReduceAdd + From<u32> + PartialEq + Default {}
impl EvenCounter for u32 {}
impl EvenCounter for u64 {}

/// One thread's run of equal bins: flushed with one atomic through `add` when another bin
/// comes (PMPP §9.6).
///
/// # Safety
/// `input` is valid for `n` samples; `add` is sound for every bin the rule returns (below
/// `bins`). Every thread of the block calls it (no barrier inside, but the callers have one
/// on each side).
#[inline(always)]
unsafe fn count_runs<T: EvenSample>(
    input: *const T,
    n: usize,
    rule: &T::Rule,
    mut add: impl FnMut(u32, u32),
) {
    let (tid, block, bid) = coordinates();
    let stride = block * grid_dim().x as usize;
    let mut i = bid * block + tid;
    let mut run_bin = NO_BIN;
    let mut run_len = 0u32;
    while i < n {
        // SAFETY: `i < n`.
        let b = unsafe { *input.add(i) }.bin(rule);
        if b != NO_BIN {
            if b == run_bin {
                run_len += 1;
            } else {
                if run_len > 0 {
                    add(run_bin, run_len);
                }
                run_bin = b;
                run_len = 1;
            }
        }
        i += stride;
    }
    if run_len > 0 {
        add(run_bin, run_len);
    }
}

/// The privatised kernel's body (see the module docs).
///
/// # Safety
/// As the `histogram_even_shared_*` kernels.
#[inline(always)]
unsafe fn even_shared<T: EvenSample, C: EvenCounter>(
    input: *const T,
    n: usize,
    bins: u32,
    lower: T::Level,
    upper: T::Level,
    counts: *mut C,
) {
    let hist = DynamicShared::<C>::get();
    let (tid, block, _) = coordinates();
    let bins = bins as usize;
    // SAFETY: the launch gives at least `bins` counters of dynamic shared memory, so every
    // index below `bins` is inside `hist` (reads and writes also check it) and every address
    // `base + bin * size_of::<C>()` with `bin < bins` too; `counts` holds `bins` counters.
    unsafe {
        let mut j = tid;
        while j < bins {
            hist.write(j, C::default());
            j += block;
        }
        syncthreads();
        let base = hist.shared_address();
        let rule = T::rule(bins as u32, lower, upper);
        count_runs(input, n, &rule, |bin, len| {
            red_shared_add(base + bin * size_of::<C>() as u32, C::from(len))
        });
        syncthreads();
        let mut j = tid;
        while j < bins {
            let v = hist.read(j);
            if v != C::default() {
                red_global_add(counts.add(j), v);
            }
            j += block;
        }
    }
}

/// The global-atomics kernel's body (see the module docs).
///
/// # Safety
/// As the `histogram_even_global_*` kernels.
#[inline(always)]
unsafe fn even_global<T: EvenSample, C: EvenCounter>(
    input: *const T,
    n: usize,
    bins: u32,
    lower: T::Level,
    upper: T::Level,
    counts: *mut C,
) {
    let rule = T::rule(bins, lower, upper);
    // SAFETY: every bin the rule returns is below `bins`, which `counts` holds.
    unsafe {
        count_runs(input, n, &rule, |bin, len| {
            red_global_add(counts.add(bin as usize), C::from(len))
        })
    }
}

macro_rules! even_kernels {
    ($shared:ident, $global:ident, $t:ty, $c:ty, $l:ty) => {
        #[doc = concat!("`counts[b] += #{i < n : bin(input[i]) == b}` over `", stringify!($t),
            "` samples into `", stringify!($c), "` counters, with the block's histogram in ",
            "shared memory (see the [module docs](self) for the bin rule).")]
        ///
        /// Launch: blocks of [`EVEN_BLOCK`](super::EVEN_BLOCK) threads (any size works), any
        /// grid (a grid-stride loop; the host launches at most one wave,
        /// `ceil(n / (EVEN_BLOCK * EVEN_ITEMS))` blocks for short inputs);
        #[doc = concat!("`bins * ", stringify!($c), "::BITS / 8` bytes of dynamic shared ",
            "memory, at most [`EVEN_SHARED_LIMIT_BYTES`](super::EVEN_SHARED_LIMIT_BYTES).")]
        ///
        /// Parameters: `input` holds `n` samples; `bins`, `lower`, `upper` (levels of type
        #[doc = concat!("`", stringify!($l), "`) as [`EvenSample::rule`]; `counts` holds `bins` ")]
        /// counters, added to (wrapping).
        ///
        /// # Safety
        /// `input` is valid for `n` samples; `counts` for `bins` counters, not overlapping
        /// `input`; the launch's dynamic shared memory holds at least `bins` counters; `bins`,
        /// `lower`, `upper` meet [`EvenSample::rule`]'s precondition.
        ///
        /// Performance: one sample read, one bin computed (a compare and, for integers, a
        /// 32-bit or 64-bit division; for `f32` a subtraction and a multiplication) and at
        /// most one shared atomic per sample; at most `bins` global atomics per block. Launch
        /// bounds of 8 blocks of 256 per SM (32 registers: the whole SM's threads while the
        /// bins leave the shared memory for it).
        #[kernel(launch_bounds(256, 8))]
        pub unsafe fn $shared(
            input: *const $t,
            n: usize,
            bins: u32,
            lower: $l,
            upper: $l,
            counts: *mut $c,
        ) {
            // SAFETY: forwarded to the caller's contract.
            unsafe { even_shared::<$t, $c>(input, n, bins, lower, upper, counts) }
        }

        #[doc = concat!("`counts[b] += #{i < n : bin(input[i]) == b}` over `", stringify!($t),
            "` samples into `", stringify!($c), "` counters, with global atomics (any number ",
            "of bins; see the [module docs](self) for the bin rule).")]
        ///
        /// Launch: blocks of [`EVEN_BLOCK`](super::EVEN_BLOCK) threads (any size works), any
        /// grid (a grid-stride loop; the host launches at most one wave); no shared memory.
        ///
        /// Parameters: as the shared-memory kernel.
        ///
        /// # Safety
        /// `input` is valid for `n` samples; `counts` for `bins` counters, not overlapping
        /// `input`; `bins`, `lower`, `upper` meet [`EvenSample::rule`]'s precondition.
        ///
        /// Performance: one sample read and one bin computed per sample, one L2 atomic per
        /// run of equal bins in a thread's samples (about one per sample on spread data).
        #[kernel]
        pub unsafe fn $global(
            input: *const $t,
            n: usize,
            bins: u32,
            lower: $l,
            upper: $l,
            counts: *mut $c,
        ) {
            // SAFETY: forwarded to the caller's contract.
            unsafe { even_global::<$t, $c>(input, n, bins, lower, upper, counts) }
        }
    };
}

even_kernels!(
    histogram_even_shared_u8_u32,
    histogram_even_global_u8_u32,
    u8,
    u32,
    i64
);
even_kernels!(
    histogram_even_shared_u8_u64,
    histogram_even_global_u8_u64,
    u8,
    u64,
    i64
);
even_kernels!(
    histogram_even_shared_u16_u32,
    histogram_even_global_u16_u32,
    u16,
    u32,
    i64
);
even_kernels!(
    histogram_even_shared_u16_u64,
    histogram_even_global_u16_u64,
    u16,
    u64,
    i64
);
even_kernels!(
    histogram_even_shared_i32_u32,
    histogram_even_global_i32_u32,
    i32,
    u32,
    i64
);
even_kernels!(
    histogram_even_shared_i32_u64,
    histogram_even_global_i32_u64,
    i32,
    u64,
    i64
);
even_kernels!(
    histogram_even_shared_f32_u32,
    histogram_even_global_f32_u32,
    f32,
    u32,
    f32
);
even_kernels!(
    histogram_even_shared_f32_u64,
    histogram_even_global_f32_u64,
    f32,
    u64,
    f32
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_rules_pick_the_narrow_path_when_it_is_exact() {
        assert!(u8::rule(256, 0, 256).narrow);
        assert!(!i32::rule(1 << 20, i32::MIN.into(), i32::MAX.into()).narrow);
        assert_eq!(
            i32::rule(1 << 20, i32::MIN.into(), i32::MAX.into()).last,
            u32::MAX - 1
        );
        assert_eq!(255u8.bin(&u8::rule(7, 0, 255)), NO_BIN);
        assert_eq!(254u8.bin(&u8::rule(7, 0, 255)), 6);
        assert_eq!(
            (i32::MAX - 1).bin(&i32::rule(1 << 20, i32::MIN.into(), i32::MAX.into())),
            (1 << 20) - 1
        );
    }

    #[test]
    fn integer_levels_reach_past_the_largest_sample() {
        // Every byte, 255 included.
        let bytes = u8::rule(256, 0, 256);
        assert_eq!(255u8.bin(&bytes), 255);
        assert_eq!(0u8.bin(&bytes), 0);
        // The whole i32 range: 2^32 values, one bin of 2^31 each side of 0.
        let whole = i32::rule(2, i32::MIN.into(), i64::from(i32::MAX) + 1);
        assert_eq!(whole.last, u32::MAX);
        assert!(!whole.narrow, "a range of 2^32 does not fit in u32");
        assert_eq!(i32::MAX.bin(&whole), 1);
        assert_eq!(i32::MIN.bin(&whole), 0);
        assert_eq!((-1i32).bin(&whole), 0);
        assert_eq!(0i32.bin(&whole), 1);
        // Levels far outside the sample type.
        let wide = u16::rule(4, -(1 << 31), 1 << 31);
        assert_eq!(u16::MAX.bin(&wide), 2);
        // Levels near i64's ends miss every sample: range 0, nothing binned, no wrap.
        let low = u8::rule(1, i64::MIN, i64::MIN + 10);
        assert_eq!(low.lower, i64::from(u8::MIN) - (1 << 33));
        assert_eq!(0u8.bin(&low), NO_BIN);
        assert_eq!(255u8.bin(&low), NO_BIN);
        let high = i32::rule(1, i64::MAX - 10, i64::MAX);
        assert_eq!(high.lower, i64::from(i32::MIN) - (1 << 33));
        assert_eq!(i32::MAX.bin(&high), NO_BIN);
        assert_eq!(i32::MIN.bin(&high), NO_BIN);
        // A range just touching the type's ends.
        let top = u8::rule(1, 255, 256);
        assert_eq!((254u8.bin(&top), 255u8.bin(&top)), (NO_BIN, 0));
        let bottom = i32::rule(1, i64::from(i32::MIN) - (1 << 31), i64::from(i32::MIN) + 1);
        assert_eq!(
            (i32::MIN.bin(&bottom), (i32::MIN + 1).bin(&bottom)),
            (0, NO_BIN)
        );
        // Below `lower` wraps above every range.
        let mid = i32::rule(4, -10, 10);
        assert_eq!(((-11i32).bin(&mid), (-10i32).bin(&mid)), (NO_BIN, 0));
    }

    #[test]
    fn floats_clamp_and_drop() {
        let r = f32::rule(10, 0.0, 1.0);
        assert_eq!(f32::NAN.bin(&r), NO_BIN);
        assert_eq!(1.0f32.bin(&r), NO_BIN);
        assert_eq!(0.0f32.bin(&r), 0);
        assert_eq!(0.999_999_94f32.bin(&r), 9);
    }
}
