//! Comparison of GPU output with the CPU reference.
//!
//! Integer results must match exactly. Float results are compared as `approx`'s `relative_eq!`
//! does (see [`Tolerance::accepts`]), with an absolute floor and a relative bound that the caller
//! scales with the work behind each element (number of roundings, magnitude of the terms). NaN
//! never passes.

use std::fmt::Debug;

/// The first element where GPU and reference differ, and the worst error seen.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Index of the first element outside the tolerance.
    pub index: usize,
    /// GPU value there.
    pub got: String,
    /// Reference value there.
    pub expected: String,
    /// Number of elements outside the tolerance.
    pub count: usize,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} mismatching element(s), first at index {}: got {}, expected {}",
            self.count, self.index, self.got, self.expected
        )
    }
}

/// A [`Mismatch`] at the shorter length unless the two lengths are equal.
pub fn same_length(got: usize, expected: usize) -> Result<(), Mismatch> {
    if got == expected {
        return Ok(());
    }
    Err(Mismatch {
        index: got.min(expected),
        got: format!("{got} elements"),
        expected: format!("{expected} elements"),
        count: got.abs_diff(expected),
    })
}

/// Exact comparison; lengths must match (a length difference is reported at the shorter length).
pub fn exact<T: PartialEq + Debug>(got: &[T], expected: &[T]) -> Result<(), Mismatch> {
    same_length(got.len(), expected.len())?;
    let mut bad = got
        .iter()
        .zip(expected)
        .enumerate()
        .filter(|(_, (g, e))| g != e);
    match bad.next() {
        None => Ok(()),
        Some((index, (g, e))) => Err(Mismatch {
            index,
            got: format!("{g:?}"),
            expected: format!("{e:?}"),
            count: 1 + bad.count(),
        }),
    }
}

/// Tolerance for comparing an `f32` result with an `f64` reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative bound (`approx`'s `max_relative`).
    pub relative: f64,
    /// Absolute floor (`approx`'s `epsilon`), for values near zero.
    pub absolute: f64,
}

impl Tolerance {
    /// Whether `got` matches `expected`: equal (infinities included), or finite and within
    /// `absolute`, or within `relative` of the larger magnitude. NaN never matches. This is
    /// `approx::relative_eq!(got, expected, epsilon = absolute, max_relative = relative)`.
    pub fn accepts(&self, got: f64, expected: f64) -> bool {
        approx::relative_eq!(
            got,
            expected,
            epsilon = self.absolute,
            max_relative = self.relative
        )
    }

    /// A bound for results of `roundings` successive `f32` roundings: `roundings * 2^-24`
    /// relative, with `absolute` as the floor.
    pub fn f32_roundings(roundings: usize, absolute: f64) -> Self {
        Self {
            relative: roundings.max(1) as f64 * f32::EPSILON as f64 / 2.0,
            absolute,
        }
    }
}

/// Largest absolute difference between `got` and `expected` (NaN if any element is NaN).
pub fn max_abs_error(got: &[f32], expected: &[f64]) -> f64 {
    got.iter()
        .zip(expected)
        .map(|(&g, &e)| (g as f64 - e).abs())
        .fold(0.0, |acc, d| {
            if d.is_nan() || acc.is_nan() {
                f64::NAN
            } else {
                acc.max(d)
            }
        })
}

/// Compares an `f32` GPU result with an `f64` reference within `tol`. NaN never matches.
pub fn close(got: &[f32], expected: &[f64], tol: Tolerance) -> Result<(), Mismatch> {
    if got.len() != expected.len() {
        return exact(&vec![0u8; got.len()], &vec![0u8; expected.len()]);
    }
    let ok = |g: f32, e: f64| tol.accepts(g as f64, e);
    let mut bad = got
        .iter()
        .zip(expected)
        .enumerate()
        .filter(|(_, (g, e))| !ok(**g, **e));
    match bad.next() {
        None => Ok(()),
        Some((index, (g, e))) => Err(Mismatch {
            index,
            got: format!("{g:e}"),
            expected: format!("{e:e}"),
            count: 1 + bad.count(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_finds_first_and_counts() {
        assert!(exact(&[1, 2, 3], &[1, 2, 3]).is_ok());
        let m = exact(&[1, 9, 3, 8], &[1, 2, 3, 4]).unwrap_err();
        assert_eq!((m.index, m.count), (1, 2));
        assert!(exact(&[1, 2], &[1, 2, 3]).is_err());
    }

    #[test]
    fn close_respects_tolerance_and_rejects_nan() {
        let tol = Tolerance::f32_roundings(1, 0.0);
        assert!(close(&[1.0, 2.0], &[1.0, 2.0], tol).is_ok());
        assert!(close(&[1.0 + 1e-3], &[1.0], tol).is_err());
        assert!(close(&[f32::NAN], &[1.0], tol).is_err());
        assert!(close(&[1.0], &[1.0, 2.0], tol).is_err());
        let loose = Tolerance::f32_roundings(100_000, 0.0);
        assert!(close(&[1.0 + 1e-3], &[1.0], loose).is_ok());
    }

    #[test]
    fn accepts_is_relative_eq_with_a_floor() {
        let tol = Tolerance {
            relative: 1e-3,
            absolute: 1e-6,
        };
        assert!(tol.accepts(1000.0, 1000.9));
        assert!(!tol.accepts(1000.0, 1001.1));
        assert!(tol.accepts(0.0, 9e-7));
        assert!(!tol.accepts(0.0, 2e-6));
        assert!(tol.accepts(f64::INFINITY, f64::INFINITY));
        assert!(!tol.accepts(f64::INFINITY, f64::NEG_INFINITY));
        assert!(!tol.accepts(f64::MAX, f64::INFINITY));
        assert!(!tol.accepts(f64::NAN, f64::NAN));
        assert!(!tol.accepts(1.0, f64::NAN));
    }

    #[test]
    fn max_abs_error_is_nan_aware() {
        assert_eq!(max_abs_error(&[1.0, 2.5], &[1.0, 2.0]), 0.5);
        assert!(max_abs_error(&[f32::NAN], &[1.0]).is_nan());
    }
}
