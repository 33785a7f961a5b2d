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
    // Each block reads an even share of tiles of `REDUCE_SUM_UNROLL` groups per thread; a
    // thread also adds at most one head and one tail element.
    let unroll = gpu::reduce::REDUCE_SUM_UNROLL as u64;
    let tiles = (n as u64 / 4).div_ceil(unroll * cfg.block_dim.0 as u64);
    let per_thread = 4 * unroll * tiles.div_ceil(cfg.grid_dim.0 as u64) + 2;
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
}
