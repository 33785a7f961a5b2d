//! Convolution masks: [`Mask1d`] and [`Mask2d`], validated once and placed on one device, and
//! the named image masks of `demo conv2d`.

use cudarc::driver::CudaSlice;
use gpu::convolution as k;

use super::{MAX_MASK_WIDTH, MAX_MASK_WIDTH_2D};
use crate::context::{ConstantMemory, Gpu, new_constant_tag};
use crate::error::{Error, Result};

/// Checks the width of a `dims`-D mask (1 or 2): odd and `1..=`[`MAX_MASK_WIDTH`] in 1D,
/// `1..=`[`MAX_MASK_WIDTH_2D`] in 2D (a `w x w` mask).
///
/// # Errors
/// [`Error::OutOfRange`] (`what: "mask dimensions"`) if `dims` is neither 1 nor 2;
/// [`Error::MaskWidth`] naming the dimensions, the width and the range `1..=max`.
pub fn validate_mask_width(dims: u32, width: usize) -> Result<()> {
    let (max, kernels) = match dims {
        1 => (MAX_MASK_WIDTH, "the 1D kernels"),
        2 => (MAX_MASK_WIDTH_2D, "the 2D kernels"),
        _ => {
            return Err(Error::OutOfRange {
                what: "mask dimensions",
                value: dims.into(),
                min: 1,
                max: 2,
            });
        }
    };
    if width == 0 || width.is_multiple_of(2) || width > max {
        return Err(Error::MaskWidth {
            dims,
            width,
            kernels,
            min: 1,
            max,
        });
    }
    Ok(())
}

/// A validated 1D mask `M[0..w]` (`w` odd, at most [`MAX_MASK_WIDTH`]) placed on one device.
///
/// It holds the host values, a copy in global memory (read by
/// [`Variant1d::Convolution1dBasic`](super::Variant1d::Convolution1dBasic)), and a tag from
/// [`new_constant_tag`]. It is immutable and holds no lock: each launch of a kernel that reads
/// the `__constant__` mask ([`k::C_MASK_1D`]) takes [`Gpu::constant_memory`], writes the values
/// there unless that symbol already holds this mask (the tag), queues the kernel and releases
/// the guard; launches from any thread, stream or handle on the same context are ordered by it.
/// So any number of masks, 1D and 2D, may live at once and be shared between threads (`Mask1d`
/// is `Send + Sync`).
///
/// The global copy lives in the context of the handle that made the mask: launching with a
/// handle of another context (another device) is refused with [`Error::WrongContext`].
#[derive(Debug)]
pub struct Mask1d {
    values: Vec<f32>,
    global: CudaSlice<f32>,
    tag: u64,
}

impl Mask1d {
    /// Validates `values` (one per tap) and copies them to `gpu`'s device. The copy is queued
    /// on `gpu`'s stream; nothing synchronises.
    ///
    /// # Errors
    /// [`Error::MaskWidth`] if the width is even, 0 or over [`MAX_MASK_WIDTH`];
    /// [`Error::OutOfMemory`] / [`Error::Driver`] from the copy.
    pub fn new(gpu: &Gpu, values: &[f32]) -> Result<Self> {
        validate_mask_width(1, values.len())?;
        Ok(Self {
            values: values.to_vec(),
            global: gpu.upload(values)?,
            tag: new_constant_tag(),
        })
    }

    /// Taps, `w = 2r + 1`.
    pub fn width(&self) -> usize {
        self.values.len()
    }

    /// The mask's values, `M[0..w]`.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// The copy in global memory (`w` floats).
    pub fn device(&self) -> &CudaSlice<f32> {
        &self.global
    }

    /// Places the mask in [`k::C_MASK_1D`] under `constants` (skipped if it is there already).
    pub(super) fn write_constant(&self, constants: &mut ConstantMemory) -> Result<()> {
        constants.write_constant_tagged(k::C_MASK_1D, self.tag, &self.values)
    }
}

/// Tolerance of the rank-1 detection of [`Mask2d::new`], in units of `f32::EPSILON`: a mask
/// is kept as separable when every entry satisfies
/// `|M[y][x] - col[y] row[x]| <= RANK1_TOLERANCE_EPS * f32::EPSILON * |M[y][x]|` (in `f64`,
/// with the `f32` factors), so the separable path computes the same mask up to a relative
/// `8 eps` per tap, which the `f32` error bound of the comparison covers.
pub const RANK1_TOLERANCE_EPS: f64 = 8.0;

/// SciPy's default `truncate` of `gaussian_filter` (4.0: the taps reach 4 standard
/// deviations). The demo's `gaussian:SIGMA` masks use 3.0, as NVIDIA's and OpenCV's samples do.
pub const SCIPY_TRUNCATE: f32 = 4.0;

/// The widest `sigma` [`Mask2d::gaussian`] takes at `truncate`: radius
/// `floor(truncate sigma + 0.5) <= 15` (31 taps), so `sigma < 15.5 / truncate` (about 5.17 at
/// truncate 3, 3.87 at SciPy's 4).
pub fn max_gaussian_sigma(truncate: f32) -> f32 {
    15.5 / truncate
}

/// The two factors of a separable 2D mask, named by the axis each runs along:
/// `M[y][x] = y[y] * x[x]`. `x` is applied along a row (over the columns), `y` along a column
/// (over the rows); both have the mask's width.
///
/// ```
/// # use cpu::convolution::Factors;
/// // The Sobel x-derivative: a difference along x, a smoothing along y.
/// let sobel_x = Factors { x: &[-1.0, 0.0, 1.0], y: &[1.0, 2.0, 1.0] };
/// # let _ = sobel_x;
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Factors<'a> {
    /// The factor along x (over the columns of a row).
    pub x: &'a [f32],
    /// The factor along y (over the rows of a column).
    pub y: &'a [f32],
}

/// A validated `w x w` 2D mask, row-major (`w` odd, at most [`MAX_MASK_WIDTH_2D`]), placed on
/// one device: as [`Mask1d`] (host values, a global-memory copy read by
/// [`Variant2d::Convolution2dBasic`](super::Variant2d::Convolution2dBasic), a tag, no lock),
/// with the `__constant__` symbol [`k::C_MASK_2D`].
///
/// A separable mask, `M[y][x] = y[y] x[x]` (made by [`Mask2d::separable`],
/// [`Mask2d::gaussian`], [`Mask2d::box_filter`], or detected by [`Mask2d::new`]), also keeps
/// its [`Factors`] ([`Mask2d::factors`]), which the separable kernels read from
/// [`k::C_MASK_ROW`] (the x factor) and [`k::C_MASK_COL`] (the y factor). [`Mask2d::dense`]
/// keeps none, whatever the values, so that [`conv2d`](super::conv2d) takes the dense path.
#[derive(Debug)]
pub struct Mask2d {
    values: Vec<f32>,
    width: usize,
    factors: Option<(Vec<f32>, Vec<f32>)>,
    global: CudaSlice<f32>,
    tag: u64,
}

impl Mask2d {
    /// Validates the row-major `width x width` mask in `values` and copies it to `gpu`'s
    /// device. The copy is queued on `gpu`'s stream; nothing synchronises.
    ///
    /// A mask of width 3 or more that is an outer product within
    /// [`RANK1_TOLERANCE_EPS`] (see [`rank1_factors`]) keeps its factors: [`conv2d`](super::conv2d)
    /// then takes the separable kernel (`2w` multiply-adds per output instead of `w^2`). Use
    /// [`Mask2d::dense`] to keep the dense path for such values.
    ///
    /// # Errors
    /// [`Error::MaskWidth`] if `width` is even, 0 or over [`MAX_MASK_WIDTH_2D`];
    /// [`Error::LengthMismatch`] (`what: "mask"`) if `values` does not hold `width^2` floats;
    /// [`Error::OutOfMemory`] / [`Error::Driver`] from the copy.
    pub fn new(gpu: &Gpu, values: &[f32], width: usize) -> Result<Self> {
        Self::checked_values(values, width)?;
        let factors = if width >= 3 {
            rank1_factors(values, width)
        } else {
            None
        };
        Self::with_factors(gpu, values.to_vec(), width, factors)
    }

    /// As [`Mask2d::new`], but the mask keeps no factors even when its values are an outer
    /// product: [`conv2d`](super::conv2d) runs it with a dense kernel (`w^2` multiply-adds per
    /// output, the products rounded as the values are given), and the separable variants
    /// refuse it.
    ///
    /// # Errors
    /// As [`Mask2d::new`].
    pub fn dense(gpu: &Gpu, values: &[f32], width: usize) -> Result<Self> {
        Self::checked_values(values, width)?;
        Self::with_factors(gpu, values.to_vec(), width, None)
    }

    /// The checks of [`Mask2d::new`].
    fn checked_values(values: &[f32], width: usize) -> Result<()> {
        validate_mask_width(2, width)?;
        if values.len() != width * width {
            return Err(Error::LengthMismatch {
                what: "mask",
                expected: width * width,
                actual: values.len(),
            });
        }
        Ok(())
    }

    /// The separable mask `M[y][x] = factors.y[y] * factors.x[x]` (`f32` products) from its
    /// [`Factors`], of the same odd width.
    ///
    /// ```no_run
    /// # use cpu::{Gpu, convolution::{Factors, Mask2d}};
    /// # fn main() -> cpu::Result<()> {
    /// # let gpu = Gpu::new(0)?;
    /// // Sobel x: [-1, 0, 1] along x, smoothed by [1, 2, 1] along y.
    /// let sobel_x = Mask2d::separable(&gpu, Factors { x: &[-1.0, 0.0, 1.0], y: &[1.0, 2.0, 1.0] })?;
    /// assert_eq!(&sobel_x.values()[..3], &[-1.0, 0.0, 1.0]); // row y = 0: y[0] * x
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::MaskWidth`] if `factors.x.len()` is even, 0 or over [`MAX_MASK_WIDTH_2D`];
    /// [`Error::LengthMismatch`] (`what: "mask factor y"`) if `factors.y` is not as long as
    /// `factors.x`; [`Error::OutOfMemory`] / [`Error::Driver`] from the copy.
    pub fn separable(gpu: &Gpu, factors: Factors<'_>) -> Result<Self> {
        let Factors { x, y } = factors;
        let width = x.len();
        validate_mask_width(2, width)?;
        if y.len() != width {
            return Err(Error::LengthMismatch {
                what: "mask factor y",
                expected: width,
                actual: y.len(),
            });
        }
        let values = y
            .iter()
            .flat_map(|&fy| x.iter().map(move |&fx| fy * fx))
            .collect();
        Self::with_factors(gpu, values, width, Some((x.to_vec(), y.to_vec())))
    }

    /// The Gaussian blur of standard deviation `sigma` (pixels), separable, as SciPy's
    /// `gaussian_filter(..., truncate=truncate)`: radius `floor(truncate sigma + 0.5)`, taps
    /// `exp(-x^2 / (2 sigma^2))` for `x` in `-radius..=radius`, normalised to sum 1 per axis
    /// (SciPy's `_gaussian_kernel1d`; computed in `f64`, rounded to `f32`). The same factor
    /// along both axes. See [`gaussian_taps`]; [`SCIPY_TRUNCATE`] (4.0) is SciPy's default.
    ///
    /// # Errors
    /// [`Error::Unsupported`] (`what: "gaussian sigma"` or `"gaussian truncate"`) if `sigma`
    /// or `truncate` is NaN, infinite or not positive; [`Error::MaskWidth`] if the mask would
    /// be wider than [`MAX_MASK_WIDTH_2D`] (`sigma` at or over [`max_gaussian_sigma`]); as
    /// [`Mask2d::separable`].
    pub fn gaussian(gpu: &Gpu, sigma: f32, truncate: f32) -> Result<Self> {
        let taps = gaussian_taps(sigma, truncate)?;
        Self::separable(gpu, Factors { x: &taps, y: &taps })
    }

    /// The `width x width` box filter (mean), separable: `1 / width` per axis.
    ///
    /// # Errors
    /// [`Error::MaskWidth`] if `width` is even, 0 or over [`MAX_MASK_WIDTH_2D`]; as
    /// [`Mask2d::separable`].
    pub fn box_filter(gpu: &Gpu, width: usize) -> Result<Self> {
        validate_mask_width(2, width)?;
        let taps = vec![1.0 / width as f32; width];
        Self::separable(gpu, Factors { x: &taps, y: &taps })
    }

    fn with_factors(
        gpu: &Gpu,
        values: Vec<f32>,
        width: usize,
        factors: Option<(Vec<f32>, Vec<f32>)>,
    ) -> Result<Self> {
        Ok(Self {
            global: gpu.upload(&values)?,
            values,
            width,
            factors,
            tag: new_constant_tag(),
        })
    }

    /// Taps along one side, `w = 2r + 1`.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The mask's values, row-major `w x w`.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// The [`Factors`] of a separable mask (`M[y][x] ~= y[y] x[x]`); `None` for a dense one.
    pub fn factors(&self) -> Option<Factors<'_>> {
        self.factors.as_ref().map(|(x, y)| Factors { x, y })
    }

    /// Whether the mask has factors ([`Mask2d::factors`]).
    pub fn is_separable(&self) -> bool {
        self.factors.is_some()
    }

    /// The copy in global memory (`w^2` floats).
    pub fn device(&self) -> &CudaSlice<f32> {
        &self.global
    }

    /// Places the mask in [`k::C_MASK_2D`] under `constants` (skipped if it is there already).
    pub(super) fn write_constant(&self, constants: &mut ConstantMemory) -> Result<()> {
        constants.write_constant_tagged(k::C_MASK_2D, self.tag, &self.values)
    }

    /// Places the factors in [`k::C_MASK_ROW`] and [`k::C_MASK_COL`] under `constants`
    /// (each skipped if there already).
    ///
    /// # Panics
    /// If the mask has no factors (launchers check first).
    pub(super) fn write_factors(&self, constants: &mut ConstantMemory) -> Result<()> {
        let (row, col) = self.factors.as_ref().expect("a separable mask");
        constants.write_constant_tagged(k::C_MASK_ROW, self.tag, row)?;
        constants.write_constant_tagged(k::C_MASK_COL, self.tag, col)
    }
}

/// The factors `(row, col)` of a row-major `width x width` mask if it is an outer product:
/// `col` is the column of the largest `|M|` entry `M[p][q]`, `row = M[p][..] / M[p][q]` (in
/// `f32`), accepted if every entry satisfies `|M[y][x] - col[y] row[x]| <=
/// RANK1_TOLERANCE_EPS * f32::EPSILON * |M[y][x]|` (in `f64`). `None` for other masks, and for
/// an all-zero or non-finite one.
///
/// # Panics
/// If `values.len() != width * width`.
pub fn rank1_factors(values: &[f32], width: usize) -> Option<(Vec<f32>, Vec<f32>)> {
    assert_eq!(values.len(), width * width, "mask is not width x width");
    if values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let (at, &pivot) = values
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))?;
    if pivot == 0.0 {
        return None;
    }
    let (p, q) = (at / width, at % width);
    let col: Vec<f32> = (0..width).map(|y| values[y * width + q]).collect();
    let row: Vec<f32> = (0..width).map(|x| values[p * width + x] / pivot).collect();
    let tolerance = RANK1_TOLERANCE_EPS * f32::EPSILON as f64;
    let rank1 = values.iter().enumerate().all(|(i, &m)| {
        let product = col[i / width] as f64 * row[i % width] as f64;
        (m as f64 - product).abs() <= tolerance * (m as f64).abs()
    });
    rank1.then_some((row, col))
}

/// The taps of [`Mask2d::gaussian`]: radius `floor(truncate sigma + 0.5)`, weights
/// `exp(-x^2 / (2 sigma^2))` normalised to sum 1 (in `f64`, then rounded to `f32`), as SciPy's
/// `scipy.ndimage.gaussian_filter1d(..., truncate=truncate)` (whose default is
/// [`SCIPY_TRUNCATE`], 4.0).
///
/// # Errors
/// [`Error::Unsupported`] (`what: "gaussian sigma"` or `"gaussian truncate"`) if `sigma` or
/// `truncate` is NaN, infinite or not positive; [`Error::MaskWidth`] if the width
/// `2 radius + 1` is over [`MAX_MASK_WIDTH_2D`].
pub fn gaussian_taps(sigma: f32, truncate: f32) -> Result<Vec<f32>> {
    if !sigma.is_finite() || sigma <= 0.0 {
        return Err(Error::Unsupported {
            what: "gaussian sigma",
            requirement: "a finite sigma > 0 (at most 15.5 / truncate: 31 taps)",
        });
    }
    if !truncate.is_finite() || truncate <= 0.0 {
        return Err(Error::Unsupported {
            what: "gaussian truncate",
            requirement: "a finite truncate > 0 (SciPy's default is 4.0)",
        });
    }
    let sigma = sigma as f64;
    let radius = (truncate as f64 * sigma + 0.5).floor();
    if radius > (MAX_MASK_WIDTH_2D / 2) as f64 {
        return Err(Error::MaskWidth {
            dims: 2,
            width: if radius < 1e9 {
                2 * radius as usize + 1
            } else {
                usize::MAX
            },
            kernels: "the 2D kernels",
            min: 1,
            max: MAX_MASK_WIDTH_2D,
        });
    }
    let radius = radius as i64;
    let weights: Vec<f64> = (-radius..=radius)
        .map(|x| (-0.5 / (sigma * sigma) * (x * x) as f64).exp())
        .collect();
    let sum: f64 = weights.iter().sum();
    Ok(weights.iter().map(|w| (w / sum) as f32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_widths_are_validated() {
        assert!(validate_mask_width(1, 1).is_ok());
        assert!(validate_mask_width(1, 31).is_ok());
        assert!(validate_mask_width(2, 9).is_ok());
        for bad in [0, 2, 4, 33] {
            assert!(matches!(
                validate_mask_width(1, bad),
                Err(Error::MaskWidth { dims: 1, width, min: 1, max: 31, .. }) if width == bad
            ));
        }
        assert!(validate_mask_width(2, 31).is_ok());
        assert!(matches!(
            validate_mask_width(2, 33),
            Err(Error::MaskWidth {
                dims: 2,
                width: 33,
                max: 31,
                ..
            })
        ));
        assert_eq!(
            validate_mask_width(2, 4).unwrap_err().to_string(),
            "a 2D mask of width 4: the 2D kernels take odd widths 1..=31 (a centred mask has 2r + \
             1 taps)"
        );
    }

    #[test]
    fn mask_dimensions_other_than_1_or_2_are_refused() {
        for dims in [0, 3, u32::MAX] {
            let e = validate_mask_width(dims, 3).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::OutOfRange {
                        what: "mask dimensions",
                        value,
                        min: 1,
                        max: 2
                    } if value == u64::from(dims)
                ),
                "{e:?}"
            );
        }
    }

    /// `scipy.ndimage._filters._gaussian_kernel1d(sigma, 0, int(3.0 * sigma + 0.5))` (SciPy
    /// 1.17.1, symmetric so not reversed), printed with `repr`; the same as
    /// `gaussian_filter1d(impulse, sigma, truncate=3.0, mode="constant")`.
    #[test]
    fn gaussian_taps_match_scipy() {
        let cases: [(f32, &[f64]); 3] = [
            (1.0, &SCIPY_SIGMA_1),
            (0.5, &SCIPY_SIGMA_0_5),
            (2.5, &SCIPY_SIGMA_2_5),
        ];
        for (sigma, expected) in cases {
            let taps = gaussian_taps(sigma, 3.0).unwrap();
            assert_eq!(taps.len(), expected.len(), "sigma {sigma}");
            for (t, e) in taps.iter().zip(expected) {
                assert!(
                    (*t as f64 - e).abs() <= f32::EPSILON as f64 * e,
                    "sigma {sigma}: {t} vs {e}"
                );
            }
        }
        // The widest: radius floor(3 sigma + 0.5) = 15 (f32 rounds 15.5 / 3 down).
        assert_eq!(
            gaussian_taps(max_gaussian_sigma(3.0), 3.0).unwrap().len(),
            31
        );
        assert_eq!(gaussian_taps(0.1, 3.0).unwrap(), vec![1.0]);
        // SciPy's default truncate: sigma 1 reaches 4 sigma, 9 taps.
        let taps = gaussian_taps(1.0, SCIPY_TRUNCATE).unwrap();
        assert_eq!(taps.len(), 9);
        for (t, e) in taps.iter().zip(SCIPY_SIGMA_1_TRUNCATE_4) {
            assert!(
                (*t as f64 - e).abs() <= f32::EPSILON as f64 * e,
                "{t} vs {e}"
            );
        }
        assert_eq!(gaussian_taps(3.8, SCIPY_TRUNCATE).unwrap().len(), 31);
        assert!(gaussian_taps(3.9, SCIPY_TRUNCATE).is_err());
    }

    #[test]
    fn gaussian_refusals() {
        for sigma in [0.0, -1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert!(
                matches!(
                    gaussian_taps(sigma, 3.0),
                    Err(Error::Unsupported {
                        what: "gaussian sigma",
                        ..
                    })
                ),
                "{sigma}"
            );
        }
        for truncate in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert!(
                matches!(
                    gaussian_taps(1.0, truncate),
                    Err(Error::Unsupported {
                        what: "gaussian truncate",
                        ..
                    })
                ),
                "{truncate}"
            );
        }
        for sigma in [5.2, 100.0, f32::MAX] {
            assert!(
                matches!(
                    gaussian_taps(sigma, 3.0),
                    Err(Error::MaskWidth {
                        dims: 2,
                        max: 31,
                        ..
                    })
                ),
                "{sigma}"
            );
        }
    }

    #[test]
    fn rank1_detection() {
        let row = [0.25f32, -0.5, 1.0, 0.75, -0.125];
        let col = [1.5f32, 0.3, -2.0, 0.1, 0.7];
        let outer: Vec<f32> = col
            .iter()
            .flat_map(|&c| row.iter().map(move |&r| c * r))
            .collect();
        let (r, c) = rank1_factors(&outer, 5).expect("an outer product is rank 1");
        for (i, &m) in outer.iter().enumerate() {
            let p = c[i / 5] as f64 * r[i % 5] as f64;
            assert!((m as f64 - p).abs() <= 8.0 * f32::EPSILON as f64 * (m as f64).abs());
        }
        let mut perturbed = outer.clone();
        perturbed[7] *= 1.0 + 1e-4;
        assert_eq!(rank1_factors(&perturbed, 5), None);
        let mut zeros = outer.clone();
        zeros[0] = 0.0;
        assert_eq!(rank1_factors(&zeros, 5), None);
        assert_eq!(rank1_factors(&[0.0; 9], 3), None);
        assert_eq!(rank1_factors(&[f32::NAN; 9], 3), None);
        // A box is rank 1; a Sobel derivative too (column [1, 2, 1], row [-1, 0, 1]); a
        // Laplacian is not.
        assert!(rank1_factors(&[1.0 / 9.0; 9], 3).is_some());
        assert!(rank1_factors(&[-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0], 3).is_some());
        assert!(rank1_factors(&[0.0, 1.0, 0.0, 1.0, -4.0, 1.0, 0.0, 1.0, 0.0], 3).is_none());
    }

    const SCIPY_SIGMA_1: [f64; 7] = [
        0.004433048175243745,
        0.054005582622414484,
        0.2420362293761143,
        0.3990502796524549,
        0.2420362293761143,
        0.054005582622414484,
        0.004433048175243745,
    ];
    /// `exp(-0.5 x^2)` for `x` in `-4..=4` over its sum, in Python's `f64`: what
    /// `_gaussian_kernel1d(1.0, 0, 4)` computes.
    const SCIPY_SIGMA_1_TRUNCATE_4: [f64; 9] = [
        0.00013383062461474175,
        0.0044318616200312655,
        0.05399112742070441,
        0.24197144565660073,
        0.39894346935609776,
        0.24197144565660073,
        0.05399112742070441,
        0.0044318616200312655,
        0.00013383062461474175,
    ];
    const SCIPY_SIGMA_0_5: [f64; 5] = [
        0.00026386508273735414,
        0.10645077197359151,
        0.7865707258873422,
        0.10645077197359151,
        0.00026386508273735414,
    ];
    const SCIPY_SIGMA_2_5: [f64; 17] = [
        0.0009542270849561244,
        0.003168145492896394,
        0.008963371132443686,
        0.021609788831716978,
        0.04439586785088073,
        0.07772262497331667,
        0.11594853150070399,
        0.14739947215128454,
        0.15967594196360177,
        0.14739947215128454,
        0.11594853150070399,
        0.07772262497331667,
        0.04439586785088073,
        0.021609788831716978,
        0.008963371132443686,
        0.003168145492896394,
        0.0009542270849561244,
    ];

    #[test]
    fn masks_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Mask1d>();
        send_sync::<Mask2d>();
    }
}
