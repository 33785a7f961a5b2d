//! CPU references of the scans and the bound `f32` results are checked with.

use super::Kind;
use crate::verify::Mismatch;

/// Sequential scan of `i32` (wrapping, as the GPU's integer add: wrapping addition is
/// associative, so every order of the GPU's adds gives these bits).
pub fn scan_i32(input: &[i32], kind: Kind) -> Vec<i32> {
    scan_with(input, kind, 0, i32::wrapping_add)
}

/// Sequential scan of `u32` (wrapping).
pub fn scan_u32(input: &[u32], kind: Kind) -> Vec<u32> {
    scan_with(input, kind, 0, u32::wrapping_add)
}

/// Each section of `section` elements scanned on its own (inclusive, `i32`): what the ladder's
/// block scans write (section `b` of the output is the inclusive scan of section `b` of the
/// input).
pub fn section_scan_i32(input: &[i32], section: usize) -> Vec<i32> {
    input
        .chunks(section.max(1))
        .flat_map(|c| scan_i32(c, Kind::Inclusive))
        .collect()
}

/// Sequential scan of `input` with the associative `op` from `init`: exclusive, `init`,
/// `init op x0`, `init op x0 op x1`, ...; inclusive, `init op x0`, `init op x0 op x1`, ... (with
/// `init` the identity of `op`, CUB's `InclusiveScan`; `ExclusiveScan` with `init`). The
/// reference of every scan operator (sums, products, `cummax`, `cummin`, a monoid's).
pub fn scan<T: Copy>(input: &[T], kind: Kind, init: T, op: impl Fn(T, T) -> T) -> Vec<T> {
    scan_with(input, kind, init, op)
}

/// Scan by key (CUB's `InclusiveScanByKey` / `ExclusiveScanByKey`): as [`scan`] within each run
/// of equal consecutive `keys`, restarting from `init` where the key changes.
///
/// # Panics
/// If `keys` and `values` differ in length (a reference for tests).
pub fn scan_by_key<K: PartialEq, T: Copy>(
    keys: &[K],
    values: &[T],
    kind: Kind,
    init: T,
    op: impl Fn(T, T) -> T,
) -> Vec<T> {
    assert_eq!(keys.len(), values.len(), "one key per value");
    let mut out = Vec::with_capacity(values.len());
    let mut start = 0;
    while start < values.len() {
        let end = (start + 1..values.len())
            .find(|&i| keys[i] != keys[start])
            .unwrap_or(values.len());
        out.extend(scan_with(&values[start..end], kind, init, &op));
        start = end;
    }
    out
}

fn scan_with<T: Copy>(input: &[T], kind: Kind, zero: T, add: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = zero;
    input
        .iter()
        .map(|&x| {
            let before = acc;
            acc = add(acc, x);
            match kind {
                Kind::Inclusive => acc,
                Kind::Exclusive => before,
            }
        })
        .collect()
}

/// Stream compaction on the CPU: the elements that pass, in order.
pub fn select_if<T: Copy + PartialOrd>(input: &[T], predicate: super::Predicate<T>) -> Vec<T> {
    input
        .iter()
        .copied()
        .filter(|&x| predicate.passes(x))
        .collect()
}

/// The `f32` scan in `f64` and, for each output, the sum of the magnitudes of the elements it
/// adds (the scale of its rounding error).
pub fn scan_f32(input: &[f32], kind: Kind) -> (Vec<f64>, Vec<f64>) {
    let (mut sum, mut mag) = (0.0f64, 0.0f64);
    input
        .iter()
        .map(|&x| {
            let before = (sum, mag);
            sum += x as f64;
            mag += (x as f64).abs();
            match kind {
                Kind::Inclusive => (sum, mag),
                Kind::Exclusive => before,
            }
        })
        .unzip()
}

/// The bound of the look-back scan's `f32` output `i`: `(tile(i) + 96) * f32::EPSILON *
/// magnitude`, with `tile(i) = i / `[`LOOKBACK_MIN_TILE`](super::LOOKBACK_MIN_TILE) (the index of its tile with the smallest
/// tiles, so a bound for every block size) and `magnitude` the sum of `|x[j]|` over the
/// elements it adds.
///
/// Derivation: every output is a sum of its elements in some order, so its error is at most
/// (to first order) the depth of the longest chain of dependent roundings times `EPSILON`
/// times the sum of the magnitudes. Inside a tile (staged in shared memory, blocks of at most
/// 256) the chain is 31 (an earlier thread's run to its total) + 5 (the warp scan of the
/// totals) + 8 (the warps before it) + 2 (the tile's prefix and the lane's) + 32 (the thread's
/// own run to the element) = 78; an earlier tile's aggregate is at most 31 + 5 + 5 (its warps'
/// totals, reduced by warp 0) deep, and the look-back adds windows of 32 in a tree of 5 with at
/// most one rounding per earlier tile on the chain, then 8 + 1 + 32 inside this tile after its
/// prefix: `tile(i) + 41 + 5 + 41` in all, under `tile(i) + 96`.
pub fn f32_bound(index: usize, magnitude: f64) -> f64 {
    let tile = (index / gpu::scan::LOOKBACK_MIN_TILE) as f64;
    (tile + 96.0) * f32::EPSILON as f64 * magnitude
}

/// Compares a GPU `f32` scan with the `f64` reference under [`f32_bound`] (plus the smallest
/// normal `f32` as an absolute floor); NaN passes only where the reference is NaN, an infinity
/// only where the reference is the same infinity.
pub fn check_f32(got: &[f32], input: &[f32], kind: Kind) -> Result<(), Mismatch> {
    let (expected, magnitude) = scan_f32(input, kind);
    crate::verify::same_length(got.len(), expected.len())?;
    let ok = |i: usize, g: f32, e: f64| {
        if e.is_nan() {
            g.is_nan()
        } else if e.is_infinite() {
            g as f64 == e
        } else {
            (g as f64 - e).abs() <= f32_bound(i, magnitude[i]) + f32::MIN_POSITIVE as f64
        }
    };
    let mut bad = got
        .iter()
        .zip(&expected)
        .enumerate()
        .filter(|&(i, (&g, &e))| !ok(i, g, e));
    match bad.next() {
        None => Ok(()),
        Some((index, (g, e))) => Err(Mismatch {
            index,
            got: format!("{g:?}"),
            expected: format!("{e:?} (bound {:e})", f32_bound(index, magnitude[index])),
            count: 1 + bad.count(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inclusive_and_exclusive_are_one_apart() {
        let x = [3, 1, 4, 1, 5];
        assert_eq!(scan_i32(&x, Kind::Inclusive), [3, 4, 8, 9, 14]);
        assert_eq!(scan_i32(&x, Kind::Exclusive), [0, 3, 4, 8, 9]);
        assert_eq!(scan_u32(&[u32::MAX, 2], Kind::Inclusive), [u32::MAX, 1]);
        assert_eq!(section_scan_i32(&[1, 1, 1, 1, 1], 2), [1, 2, 1, 2, 1]);
    }

    #[test]
    fn the_f32_check_fails_outside_the_bound() {
        let x = vec![1.0f32; 10_000];
        let mut got: Vec<f32> = (1..=10_000).map(|i| i as f32).collect();
        assert!(check_f32(&got, &x, Kind::Inclusive).is_ok());
        got[5000] += 1.0;
        let err = check_f32(&got, &x, Kind::Inclusive).unwrap_err();
        assert_eq!(err.index, 5000);
        got[5000] = f32::NAN;
        assert!(check_f32(&got, &x, Kind::Inclusive).is_err());
    }

    #[test]
    fn scans_with_an_operator_and_an_initial_value() {
        let x = [3, 1, 4, 1, 5, 9, 2, 6];
        assert_eq!(
            scan(&x, Kind::Inclusive, i32::MIN, i32::max),
            [3, 3, 4, 4, 5, 9, 9, 9]
        );
        assert_eq!(
            scan(&x, Kind::Exclusive, 10, |a, b| a + b)[..3],
            [10, 13, 14]
        );
        assert_eq!(
            scan(&[2u64, 3, 4], Kind::Inclusive, 1, |a, b| a * b),
            [2, 6, 24]
        );
        assert!(scan::<i32>(&[], Kind::Inclusive, 0, |a, b| a + b).is_empty());
    }

    #[test]
    fn scan_by_key_restarts_where_the_key_changes() {
        let keys = [7, 7, 2, 2, 2, 7, 5];
        let values = [1, 2, 3, 4, 5, 6, 7];
        assert_eq!(
            scan_by_key(&keys, &values, Kind::Inclusive, 0, |a, b| a + b),
            [1, 3, 3, 7, 12, 6, 7]
        );
        assert_eq!(
            scan_by_key(&keys, &values, Kind::Exclusive, 0, |a, b| a + b),
            [0, 1, 0, 3, 7, 0, 0]
        );
    }
}
