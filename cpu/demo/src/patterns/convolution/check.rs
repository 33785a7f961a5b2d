//! The CPU checks of the convolutions: the `f64` references computed in bands on every core
//! (rayon) and compared with the GPU's output chunk by chunk.

use rayon::prelude::*;

use super::*;

/// Outputs per chunk of the parallel convolution checks (each chunk's `f64` reference and
/// scale, 16 bytes per output, exist only while it is compared).
pub(super) const CHECK_CHUNK: usize = 1 << 20;

/// Threads the convolution checks use: rayon's pool, one per core.
pub(super) fn check_threads() -> usize {
    rayon::current_num_threads()
}

/// Runs `check(i)` for chunks `0..chunks` on every core and merges the comparisons in chunk
/// order; `check` returns the chunk's first output index and its comparison.
pub(super) fn parallel_compare(
    chunks: usize,
    check: impl Fn(usize) -> (usize, Comparison) + Sync,
) -> Comparison {
    let parts: Vec<(usize, Comparison)> = (0..chunks).into_par_iter().map(&check).collect();
    merge(parts.into_iter())
}

/// One comparison of consecutive chunks: the first mismatch (its index offset by its chunk's
/// start), the mismatches counted, the largest relative error (NaN if any is NaN).
pub(super) fn merge(parts: impl Iterator<Item = (usize, Comparison)>) -> Comparison {
    let mut result = Ok(());
    let mut worst = 0.0f64;
    for (start, part) in parts {
        worst = if worst.is_nan() || part.max_relative_error.is_nan() {
            f64::NAN
        } else {
            worst.max(part.max_relative_error)
        };
        if let Err(mut m) = part.result {
            match &mut result {
                Ok(()) => {
                    m.index += start;
                    result = Err(m);
                }
                Err(first) => first.count += m.count,
            }
        }
    }
    Comparison {
        result,
        max_relative_error: worst,
    }
}

/// `got` against [`convolution::reference_1d`] of `input` and `mask`, chunk by chunk on every
/// core: each chunk's reference is computed on its input window (the chunk and `r` elements
/// either side, clipped to the input, so the ghosts are where the whole input has them) and
/// compared with [`convolution::compare`].
pub(super) fn compare_1d(got: &[f32], input: &[f32], mask: &[f32]) -> Comparison {
    compare_1d_in(got, input, mask, CHECK_CHUNK)
}

/// [`compare_1d`] in chunks of `chunk` outputs.
pub(super) fn compare_1d_in(got: &[f32], input: &[f32], mask: &[f32], chunk: usize) -> Comparison {
    let (n, r) = (input.len(), mask.len() / 2);
    if got.len() != n {
        return length_mismatch(got.len(), n);
    }
    parallel_compare(n.div_ceil(chunk), |i| {
        let (a, b) = (i * chunk, ((i + 1) * chunk).min(n));
        let (lo, hi) = (a.saturating_sub(r), (b + r).min(n));
        let window = convolution::reference_1d(&input[lo..hi], mask);
        (
            a,
            convolution::compare(&got[a..b], &slice(&window, a - lo, b - lo)),
        )
    })
}

/// A 2D mask as the CPU checks see it: `w x w` values, or a separable mask's factors (whose
/// reference costs `2w` per output, not `w^2`).
#[derive(Clone, Copy, Debug)]
pub(super) enum CheckMask<'a> {
    /// Row-major `w x w` values.
    Dense(&'a [f32], usize),
    /// `M[y][x] = col[y] row[x]`.
    Separable { row: &'a [f32], col: &'a [f32] },
}

impl<'a> CheckMask<'a> {
    /// `mask`'s factors if it has them, else its values.
    pub(super) fn of(mask: &'a Mask2d) -> Self {
        match mask.factors() {
            Some(Factors { x: row, y: col }) => CheckMask::Separable { row, col },
            None => CheckMask::Dense(mask.values(), mask.width()),
        }
    }

    pub(super) fn width(self) -> usize {
        match self {
            CheckMask::Dense(_, w) => w,
            CheckMask::Separable { row, .. } => row.len(),
        }
    }

    /// The `f64` reference of a `rows x cols` image.
    pub(super) fn reference(self, input: &[f32], rows: usize, cols: usize) -> Reference {
        match self {
            CheckMask::Dense(values, w) => convolution::reference_2d(input, rows, cols, values, w),
            CheckMask::Separable { row, col } => {
                convolution::reference_2d_separable(input, rows, cols, row, col)
            }
        }
    }
}

/// Rows `a..b` of the reference of a `rows x cols` image: computed on the band and `r` rows
/// above and below (clipped to the image, so the ghosts are where the whole image has them).
pub(super) fn band_reference(
    input: &[f32],
    (rows, cols): (usize, usize),
    mask: CheckMask<'_>,
    (a, b): (usize, usize),
) -> Reference {
    let r = mask.width() / 2;
    let (lo, hi) = (a.saturating_sub(r), (b + r).min(rows));
    let window = mask.reference(&input[lo * cols..hi * cols], hi - lo, cols);
    slice(&window, (a - lo) * cols, (b - lo) * cols)
}

/// The whole reference of a `rows x cols` image, in bands of rows on every core, each band
/// written straight into its place: the peak is the whole reference and one band a thread
/// (collecting every band first, then copying, took twice the reference, more than
/// [`footprint_2d`] counts).
pub(super) fn reference_2d_parallel(
    input: &[f32],
    (rows, cols): (usize, usize),
    mask: CheckMask<'_>,
) -> Reference {
    let n = rows * cols;
    let mut whole = Reference {
        values: vec![0.0; n],
        scale: vec![0.0; n],
    };
    if cols == 0 {
        return whole;
    }
    let band = (CHECK_CHUNK / cols).max(1);
    let bands = whole
        .values
        .par_chunks_mut(band * cols)
        .zip(whole.scale.par_chunks_mut(band * cols))
        .enumerate();
    bands.for_each(|(i, (values, scale))| {
        let (a, b) = (i * band, ((i + 1) * band).min(rows));
        let part = band_reference(input, (rows, cols), mask, (a, b));
        values.copy_from_slice(&part.values);
        scale.copy_from_slice(&part.scale);
    });
    whole
}

/// As [`compare_1d`] for a `rows x cols` image, in bands of rows (each band's reference on
/// the band and `r` rows above and below, clipped to the image).
pub(super) fn compare_2d(
    got: &[f32],
    input: &[f32],
    rows: usize,
    cols: usize,
    mask: CheckMask<'_>,
) -> Comparison {
    compare_2d_in(got, input, (rows, cols), mask, CHECK_CHUNK)
}

/// [`compare_2d`] in bands of about `chunk` outputs (whole rows, at least one).
pub(super) fn compare_2d_in(
    got: &[f32],
    input: &[f32],
    (rows, cols): (usize, usize),
    mask: CheckMask<'_>,
    chunk: usize,
) -> Comparison {
    if got.len() != input.len() {
        return length_mismatch(got.len(), input.len());
    }
    if cols == 0 {
        return merge(std::iter::empty());
    }
    let band = (chunk / cols).max(1);
    parallel_compare(rows.div_ceil(band), |i| {
        let (a, b) = (i * band, ((i + 1) * band).min(rows));
        let reference = band_reference(input, (rows, cols), mask, (a, b));
        (
            a * cols,
            convolution::compare(&got[a * cols..b * cols], &reference),
        )
    })
}

/// A result of the wrong length.
pub(super) fn length_mismatch(got: usize, expected: usize) -> Comparison {
    Comparison {
        result: Err(Mismatch {
            index: got.min(expected),
            got: format!("{got} elements"),
            expected: format!("{expected} elements"),
            count: got.abs_diff(expected),
        }),
        max_relative_error: f64::NAN,
    }
}

/// Elements `from..to` of a reference.
pub(super) fn slice(r: &Reference, from: usize, to: usize) -> Reference {
    Reference {
        values: r.values[from..to].to_vec(),
        scale: r.scale[from..to].to_vec(),
    }
}
