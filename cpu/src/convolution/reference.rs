//! The CPU references of the convolutions (in `f64`, with the scale of the terms summed per
//! output), the comparison of a GPU result with them, and the bytes a convolution moves.

use crate::verify::Mismatch;

/// Relative tolerance of a GPU output against the `f64` reference, scaled per output by
/// `sum |M[j] N[i + j - r]|` (the size of the terms summed, which bounds the `f32` rounding).
pub const RELATIVE_TOLERANCE: f64 = 1e-5;

/// The CPU reference: exact-ish values in `f64`, and per output the scale
/// `sum |M N|` of the terms summed, which the comparison's tolerance is relative to.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The convolution in `f64`.
    pub values: Vec<f64>,
    /// `sum_j |M[j] N[i + j - r]|` per output.
    pub scale: Vec<f64>,
}

/// CPU reference of the 1D convolution, ghosts as 0, in `f64`.
///
/// # Panics
/// If the mask width is even.
pub fn reference_1d(input: &[f32], mask: &[f32]) -> Reference {
    assert!(mask.len() % 2 == 1, "mask width must be odd");
    let (n, r) = (input.len() as isize, (mask.len() / 2) as isize);
    let mut values = Vec::with_capacity(input.len());
    let mut scale = Vec::with_capacity(input.len());
    for i in 0..n {
        let (mut sum, mut abs) = (0.0f64, 0.0f64);
        for (j, &m) in mask.iter().enumerate() {
            let k = i + j as isize - r;
            if (0..n).contains(&k) {
                let term = m as f64 * input[k as usize] as f64;
                sum += term;
                abs += term.abs();
            }
        }
        values.push(sum);
        scale.push(abs);
    }
    Reference { values, scale }
}

/// CPU reference of the 2D convolution of a row-major `rows x cols` image with a row-major
/// `w x w` mask, ghosts as 0, in `f64`.
///
/// # Panics
/// If the shapes do not match or `w` is even.
pub fn reference_2d(input: &[f32], rows: usize, cols: usize, mask: &[f32], w: usize) -> Reference {
    assert_eq!(input.len(), rows * cols, "input is not rows x cols");
    assert!(
        w % 2 == 1 && mask.len() == w * w,
        "mask is not w x w with w odd"
    );
    let r = (w / 2) as isize;
    let mut values = Vec::with_capacity(input.len());
    let mut scale = Vec::with_capacity(input.len());
    for y in 0..rows as isize {
        for x in 0..cols as isize {
            let (mut sum, mut abs) = (0.0f64, 0.0f64);
            for jy in 0..w as isize {
                let yy = y + jy - r;
                if !(0..rows as isize).contains(&yy) {
                    continue;
                }
                for jx in 0..w as isize {
                    let xx = x + jx - r;
                    if (0..cols as isize).contains(&xx) {
                        let m = mask[(jy * w as isize + jx) as usize] as f64;
                        let term = m * input[yy as usize * cols + xx as usize] as f64;
                        sum += term;
                        abs += term.abs();
                    }
                }
            }
            values.push(sum);
            scale.push(abs);
        }
    }
    Reference { values, scale }
}

/// CPU reference of the separable 2D convolution with `M[jy][jx] = col[jy] row[jx]`: the row
/// pass (along x, `row`) then the column pass (along y, `col`), ghosts as 0, in `f64`; the
/// scale is `sum |col[jy]| |row[jx]| |N|` (the same passes over the absolute values), which
/// is the dense reference's scale for the product mask.
///
/// # Panics
/// If the shapes do not match, the factors differ in length or their width is even.
pub fn reference_2d_separable(
    input: &[f32],
    rows: usize,
    cols: usize,
    row: &[f32],
    col: &[f32],
) -> Reference {
    assert_eq!(input.len(), rows * cols, "input is not rows x cols");
    let w = row.len();
    assert!(
        w % 2 == 1 && col.len() == w,
        "factors are not of one odd width"
    );
    let r = (w / 2) as isize;
    let pass = |data: &[f64], taps: &[f32], along_x: bool, abs: bool| -> Vec<f64> {
        let mut out = vec![0.0f64; rows * cols];
        for y in 0..rows as isize {
            for x in 0..cols as isize {
                let mut sum = 0.0f64;
                for (j, &m) in taps.iter().enumerate() {
                    let (yy, xx) = if along_x {
                        (y, x + j as isize - r)
                    } else {
                        (y + j as isize - r, x)
                    };
                    if (0..rows as isize).contains(&yy) && (0..cols as isize).contains(&xx) {
                        let m = if abs { (m as f64).abs() } else { m as f64 };
                        sum += m * data[yy as usize * cols + xx as usize];
                    }
                }
                out[y as usize * cols + x as usize] = sum;
            }
        }
        out
    };
    let n: Vec<f64> = input.iter().map(|&v| v as f64).collect();
    let n_abs: Vec<f64> = input.iter().map(|&v| (v as f64).abs()).collect();
    let values = pass(&pass(&n, row, true, false), col, false, false);
    let scale = pass(&pass(&n_abs, row, true, true), col, false, true);
    Reference { values, scale }
}

/// The `f32` rounding bound of a sum of `terms` products, relative to `sum |M N|`:
/// `terms * f32::EPSILON` (each multiply-add rounds once, by at most half an ulp, and the
/// partial sums are bounded by the scale; `f32::EPSILON` = 2 u gives room for the second
/// order). `terms` is `w^2` for a dense `w x w` mask and `2w` for the two passes of a
/// separable one (the row pass's error is multiplied by `|col|` in the second).
pub fn f32_error_bound(terms: usize) -> f64 {
    terms as f64 * f32::EPSILON as f64
}

/// Compares `got` with `reference` within the `f32` bound for sums of `terms` products:
/// `|got - expected| <= f32_error_bound(terms) * scale + terms * f32::MIN_POSITIVE` (the last
/// term, tiny, covers subnormal partial sums). NaN never passes.
pub fn compare_within(got: &[f32], reference: &Reference, terms: usize) -> Comparison {
    compare_with(
        got,
        reference,
        f32_error_bound(terms),
        terms as f64 * f32::MIN_POSITIVE as f64,
    )
}

/// A GPU result compared with the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// `Ok` if every output is within `RELATIVE_TOLERANCE * scale` (plus a denormal floor).
    pub result: Result<(), Mismatch>,
    /// Largest `|got - expected| / scale` (0 where the scale is 0 and the output exact; NaN
    /// if any output is NaN).
    pub max_relative_error: f64,
}

/// Compares `got` with `reference`: `|got - expected| <= RELATIVE_TOLERANCE * scale + 1e-30`.
/// NaN never passes.
pub fn compare(got: &[f32], reference: &Reference) -> Comparison {
    compare_with(got, reference, RELATIVE_TOLERANCE, 1e-30)
}

/// `|got - expected| <= relative * scale + absolute` per output; NaN never passes.
fn compare_with(got: &[f32], reference: &Reference, relative: f64, absolute: f64) -> Comparison {
    if got.len() != reference.values.len() {
        return Comparison {
            result: Err(Mismatch {
                index: got.len().min(reference.values.len()),
                got: format!("{} elements", got.len()),
                expected: format!("{} elements", reference.values.len()),
                count: got.len().abs_diff(reference.values.len()),
            }),
            max_relative_error: f64::NAN,
        };
    }
    let mut first = None;
    let mut count = 0;
    let mut worst = 0.0f64;
    for (i, ((&g, &e), &s)) in got
        .iter()
        .zip(&reference.values)
        .zip(&reference.scale)
        .enumerate()
    {
        let err = (g as f64 - e).abs();
        let ok = err <= relative * s + absolute;
        let rel = if s > 0.0 {
            err / s
        } else if err == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        worst = if rel.is_nan() || worst.is_nan() {
            f64::NAN
        } else {
            worst.max(rel)
        };
        if !ok {
            count += 1;
            first.get_or_insert((i, g, e));
        }
    }
    Comparison {
        result: match first {
            None => Ok(()),
            Some((index, g, e)) => Err(Mismatch {
                index,
                got: format!("{g:e}"),
                expected: format!("{e:e}"),
                count,
            }),
        },
        max_relative_error: worst,
    }
}

/// Bytes a convolution of `n` outputs must move through DRAM: each input read once, each
/// output written once (the mask is negligible).
pub fn bytes_moved(n: usize) -> u64 {
    8 * n as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_1d_by_hand() {
        // [1, 2, 3] * [1, 10, 100] with ghosts: P[0] = 0 + 10 + 200, P[1] = 1 + 20 + 300,
        // P[2] = 2 + 30 + 0.
        let r = reference_1d(&[1.0, 2.0, 3.0], &[1.0, 10.0, 100.0]);
        assert_eq!(r.values, vec![210.0, 321.0, 32.0]);
        assert_eq!(r.scale, r.values);
        let r = reference_1d(&[1.0, -2.0], &[3.0]);
        assert_eq!((r.values, r.scale), (vec![3.0, -6.0], vec![3.0, 6.0]));
    }

    #[test]
    fn reference_2d_by_hand() {
        // 2 x 2 image, 3 x 3 box of ones: every output sums the whole image.
        let r = reference_2d(&[1.0, 2.0, 3.0, 4.0], 2, 2, &[1.0; 9], 3);
        assert_eq!(r.values, vec![10.0; 4]);
        // Sobel-x on a 3 x 2 image of columns 0 | 1: at column 0 the right neighbour is 1
        // (weights 1, 2, 1 over the rows present); at column 1 the right neighbour is a ghost
        // and the left one is 0.
        let sobel = [-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0];
        let r = reference_2d(&[0.0, 1.0, 0.0, 1.0, 0.0, 1.0], 3, 2, &sobel, 3);
        assert_eq!(r.values, vec![3.0, 0.0, 4.0, 0.0, 3.0, 0.0]);
    }

    #[test]
    fn reference_2d_of_one_row_is_1d() {
        let input = [0.5f32, -1.0, 2.0, 4.0, -3.0];
        let mask = [1.0f32, 2.0, 3.0];
        let mut mask_2d = vec![0.0f32; 9];
        mask_2d[3..6].copy_from_slice(&mask);
        assert_eq!(
            reference_2d(&input, 1, 5, &mask_2d, 3).values,
            reference_1d(&input, &mask).values
        );
    }

    #[test]
    fn separable_reference_is_the_dense_one() {
        let row = [0.5f32, -1.0, 2.0];
        let col = [1.0f32, 0.25, -3.0];
        let dense: Vec<f32> = col
            .iter()
            .flat_map(|&c| row.iter().map(move |&r| c * r))
            .collect();
        let input: Vec<f32> = (0..20).map(|i| (i as f32 * 0.7).sin()).collect();
        let a = reference_2d_separable(&input, 4, 5, &row, &col);
        let b = reference_2d(&input, 4, 5, &dense, 3);
        for i in 0..20 {
            assert!((a.values[i] - b.values[i]).abs() < 1e-12);
            assert!((a.scale[i] - b.scale[i]).abs() < 1e-12);
        }
    }

    #[test]
    fn bound_scales_with_terms() {
        let reference = Reference {
            values: vec![1.0],
            scale: vec![100.0],
        };
        // 62 terms: 62 * 1.19e-7 * 100 = 7.4e-4.
        assert!(compare_within(&[1.0007], &reference, 62).result.is_ok());
        assert!(compare_within(&[1.001], &reference, 62).result.is_err());
        assert!(compare_within(&[f32::NAN], &reference, 62).result.is_err());
    }

    #[test]
    fn compare_scales_with_the_terms() {
        let reference = Reference {
            values: vec![1.0, 0.0],
            scale: vec![100.0, 0.0],
        };
        assert!(compare(&[1.0005, 0.0], &reference).result.is_ok());
        assert!(compare(&[1.01, 0.0], &reference).result.is_err());
        assert!(compare(&[1.0, 1e-20], &reference).result.is_err());
        assert!(compare(&[f32::NAN, 0.0], &reference).result.is_err());
        assert!(compare(&[1.0], &reference).result.is_err());
    }
}
