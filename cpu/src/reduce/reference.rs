//! CPU references of the reductions and the error bounds float sums are checked with.

use cudarc::driver::LaunchConfig;

use crate::verify::Mismatch;

/// CPU reference for the `i32` reductions: the sum modulo 2^32 (the GPU's integer add wraps,
/// and wrapping addition is associative, so it is exact for every summation order).
pub fn sum_i32(input: &[i32]) -> i32 {
    input.iter().fold(0i32, |a, &x| a.wrapping_add(x))
}

/// CPU reference of the square sum: `sum(x * x)` in `i32` modulo 2^32, exact for every
/// summation order.
pub fn square_sum_i32(input: &[i32]) -> i32 {
    input
        .iter()
        .fold(0i32, |a, &x| a.wrapping_add(x.wrapping_mul(x)))
}

/// Bytes a reduction of `n` 4-byte elements must read: each element once.
pub fn bytes_read(n: usize) -> u64 {
    4 * n as u64
}

/// The sum of `x` in `f64` and the sum of `|x|` (the scale of the rounding error bound).
pub fn reference_f32(input: &[f32]) -> (f64, f64) {
    input.iter().fold((0.0, 0.0), |(s, a), &x| {
        (s + x as f64, a + (x as f64).abs())
    })
}

/// Longest chain of dependent roundings in a `reduce_sum` launch of `cfg` over `n` elements:
/// each thread's sequential sum, the shuffle tree of a warp and of warp 0 (5 each), then in
/// the last block a strided pass over the `gridDim.x` partials and two trees again.
pub fn reduce_sum_depth(n: usize, cfg: &LaunchConfig) -> u64 {
    reduce_depth(n, 4, cfg)
}

/// [`reduce_sum_depth`] for elements of `element_bytes` bytes (16 / `element_bytes` per 16-byte
/// group): the longest chain of dependent roundings of any `gpu_std::reduce::device_reduce`
/// launch of `cfg` over `n` elements.
pub fn reduce_depth(n: usize, element_bytes: usize, cfg: &LaunchConfig) -> u64 {
    // Each block reads an even share of tiles of `REDUCE_SUM_UNROLL` groups per thread; a
    // thread also adds at most one head and one tail element.
    let per_group = (16 / element_bytes.clamp(1, 16)) as u64;
    let unroll = gpu::reduce::REDUCE_SUM_UNROLL as u64;
    let tiles = (n as u64 / per_group).div_ceil(unroll * cfg.block_dim.0 as u64);
    let per_thread = per_group * unroll * tiles.div_ceil(cfg.grid_dim.0 as u64) + 2;
    per_thread + 10 + (cfg.grid_dim.0 as u64).div_ceil(cfg.block_dim.0 as u64) + 10
}

/// Bound on `|gpu - exact|` for a sum whose longest rounding chain is `depth` additions with
/// unit roundoff `eps / 2`: `depth * eps * sum|x|` (the classic `gamma_depth` bound, first
/// order), plus the same for an `f64` reference of `n` sequential additions.
pub fn sum_error_bound(n: usize, depth: u64, eps: f64, sum_abs: f64) -> f64 {
    (depth as f64 * eps + n as f64 * f64::EPSILON) * sum_abs
}

/// Compares a float sum with its `f64` reference within `bound`; NaN must meet NaN and an
/// infinite reference must be met exactly.
///
/// # Errors
/// A [`Mismatch`] at index 0 describing the difference.
pub fn check_sum(got: f64, expected: f64, bound: f64) -> Result<(), Mismatch> {
    let ok = if expected.is_nan() {
        got.is_nan()
    } else if expected.is_infinite() {
        got == expected
    } else {
        (got - expected).abs() <= bound
    };
    if ok {
        Ok(())
    } else {
        Err(Mismatch {
            index: 0,
            got: format!("{got:e}"),
            expected: format!("{expected:e} (bound {bound:e})"),
            count: 1,
        })
    }
}

/// An element whose comparison follows PyTorch's `amax`/`argmax` (CUB's `ArgMax` on floats
/// without NaN): a NaN is larger than every number and smaller than every number, so it wins
/// both a maximum and a minimum. For integers, `is_nan` is `false`.
pub trait Ordered: Copy + PartialOrd {
    /// Whether the value is a NaN.
    fn is_nan(self) -> bool;
}

macro_rules! ordered_int {
    ($($t:ty),*) => {$(
        impl Ordered for $t {
            fn is_nan(self) -> bool {
                false
            }
        }
    )*};
}
ordered_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Ordered for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

impl Ordered for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

impl Ordered for super::F16 {
    fn is_nan(self) -> bool {
        super::F16::is_nan(self)
    }
}

/// The index and value of the element an `argmax` (`largest`) or `argmin` returns: the first
/// NaN if there is one (PyTorch's NaN rule), else the first of the largest (smallest) values.
/// `None` for an empty input.
fn arg_extreme<T: Ordered>(input: &[T], largest: bool) -> Option<(usize, T)> {
    if let Some(i) = input.iter().position(|x| x.is_nan()) {
        return Some((i, input[i]));
    }
    let mut best: Option<(usize, T)> = None;
    for (i, &x) in input.iter().enumerate() {
        let better = match best {
            None => true,
            Some((_, b)) => {
                if largest {
                    x > b
                } else {
                    x < b
                }
            }
        };
        if better {
            best = Some((i, x));
        }
    }
    best
}

/// CPU reference of `argmax`: the first index of the largest element and its value, a NaN
/// counting as the largest (PyTorch's `torch.argmax`, `torch.amax` for the value). `None` for
/// an empty input (PyTorch raises).
pub fn argmax<T: Ordered>(input: &[T]) -> Option<(usize, T)> {
    arg_extreme(input, true)
}

/// CPU reference of `argmin`: as [`argmax`] for the smallest element, a NaN counting as the
/// smallest (`torch.argmin`, `torch.amin`).
pub fn argmin<T: Ordered>(input: &[T]) -> Option<(usize, T)> {
    arg_extreme(input, false)
}

/// CPU reference of a segmented reduction over CSR offsets (CUB's `DeviceSegmentedReduce`):
/// segment `s` is `input[offsets[s]..offsets[s + 1]]`, reduced left to right with `op` from
/// `identity`; an empty segment is `identity`. `offsets` holds one more entry than there are
/// segments.
///
/// # Panics
/// If `offsets` decreases or an offset is past `input.len()` (a reference for tests, given valid
/// offsets; the library's entry point refuses invalid ones with a typed error).
pub fn segmented<T: Copy>(
    input: &[T],
    offsets: &[usize],
    identity: T,
    op: impl Fn(T, T) -> T,
) -> Vec<T> {
    offsets
        .windows(2)
        .map(|w| input[w[0]..w[1]].iter().fold(identity, |a, &x| op(a, x)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch;

    #[test]
    fn reference_wraps() {
        assert_eq!(sum_i32(&[i32::MAX, 1]), i32::MIN);
        assert_eq!(sum_i32(&[]), 0);
        assert_eq!(sum_i32(&[3, -5, 7]), 5);
    }

    #[test]
    fn float_references_and_bounds() {
        let (s, a) = reference_f32(&[1.0, -2.0, 0.5]);
        assert_eq!((s, a), (-0.5, 3.5));
        assert!(check_sum(1.0, 1.0 + 1e-9, 1e-8).is_ok());
        assert!(check_sum(1.0, 1.1, 1e-8).is_err());
        assert!(check_sum(f64::NAN, f64::NAN, 0.0).is_ok());
        assert!(check_sum(1.0, f64::NAN, 1e9).is_err());
        assert!(check_sum(f64::INFINITY, f64::INFINITY, 0.0).is_ok());
        let cfg = launch::linear(528, 512, 0);
        // 2^26 elements: 8192 tiles of 4 x 512 groups over 528 blocks, at most 16 tiles of
        // 16 elements per thread, plus a head and a tail element.
        assert_eq!(reduce_sum_depth(1 << 26, &cfg), 258 + 10 + 2 + 10);
    }

    #[test]
    fn argmax_and_argmin_take_the_first_of_ties() {
        let x = [3, 7, 1, 7, 1, -2, 7];
        assert_eq!(argmax(&x), Some((1, 7)));
        assert_eq!(argmin(&x), Some((5, -2)));
        assert_eq!(argmax(&[5u8, 5, 5]), Some((0, 5)));
        assert_eq!(argmax::<i64>(&[]), None);
        assert_eq!(argmin(&[i32::MIN, i32::MIN]), Some((0, i32::MIN)));
        assert_eq!(argmax(&[u64::MAX, 0, u64::MAX]), Some((0, u64::MAX)));
    }

    #[test]
    fn a_nan_wins_both_ways_and_the_first_one_counts() {
        let x = [1.0f32, f32::NAN, f32::INFINITY, f32::NAN, -f32::INFINITY];
        let (i, v) = argmax(&x).unwrap();
        assert!(i == 1 && v.is_nan());
        let (i, v) = argmin(&x).unwrap();
        assert!(i == 1 && v.is_nan());
        assert_eq!(
            argmax(&[-0.0f64, 0.0]),
            Some((0, -0.0)),
            "-0.0 == 0.0: the first"
        );
        assert_eq!(
            argmin(&[2.0f64, f64::NEG_INFINITY, 1.0]),
            Some((1, f64::NEG_INFINITY))
        );
    }

    #[test]
    fn segments_follow_the_offsets_and_empty_ones_are_the_identity() {
        let x = [1, 2, 3, 4, 5, 6];
        let sums = segmented(&x, &[0, 2, 2, 5, 6], 0, |a, b| a + b);
        assert_eq!(sums, [3, 0, 12, 6]);
        let maxima = segmented(&x, &[0, 0, 6], i32::MIN, i32::max);
        assert_eq!(maxima, [i32::MIN, 6]);
        assert!(segmented(&x, &[0], 0, |a, b| a + b).is_empty());
    }
}
