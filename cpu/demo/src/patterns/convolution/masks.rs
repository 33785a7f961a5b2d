//! The masks of the command line: the named image masks, `gaussian:SIGMA`, `box:W` and `.npy`
//! files (`--mask`), parsed before any device work.

use super::*;

/// Named 2D masks for filtering images (`demo conv2d --mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub(crate) enum NamedMask {
    /// 1 x 1 identity.
    Identity,
    /// 3 x 3 box blur (all 1/9).
    Box3,
    /// 5 x 5 box blur.
    Box5,
    /// 5 x 5 Gaussian, binomial weights `[1 4 6 4 1]^T [1 4 6 4 1] / 256`.
    Gaussian5,
    /// 7 x 7 Gaussian, binomial weights `[1 6 15 20 15 6 1]` outer product `/ 4096`.
    Gaussian7,
    /// 3 x 3 sharpen: `5` at the centre, `-1` at the four neighbours.
    Sharpen3,
    /// 3 x 3 Sobel, horizontal derivative (responds to vertical edges).
    SobelX,
    /// 3 x 3 Sobel, vertical derivative (responds to horizontal edges).
    SobelY,
    /// 3 x 3 Laplacian (4-neighbour).
    Laplacian3,
}

impl NamedMask {
    /// `(width, row-major values)`.
    pub(crate) fn values(self) -> (usize, Vec<f32>) {
        let outer = |v: &[f32], norm: f32| -> Vec<f32> {
            v.iter()
                .flat_map(|a| v.iter().map(move |b| a * b / norm))
                .collect()
        };
        match self {
            NamedMask::Identity => (1, vec![1.0]),
            NamedMask::Box3 => (3, vec![1.0 / 9.0; 9]),
            NamedMask::Box5 => (5, vec![1.0 / 25.0; 25]),
            NamedMask::Gaussian5 => (5, outer(&[1.0, 4.0, 6.0, 4.0, 1.0], 256.0)),
            NamedMask::Gaussian7 => (7, outer(&[1.0, 6.0, 15.0, 20.0, 15.0, 6.0, 1.0], 4096.0)),
            NamedMask::Sharpen3 => (3, vec![0.0, -1.0, 0.0, -1.0, 5.0, -1.0, 0.0, -1.0, 0.0]),
            NamedMask::SobelX => (3, vec![-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0]),
            NamedMask::SobelY => (3, vec![-1.0, -2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0]),
            NamedMask::Laplacian3 => (3, vec![0.0, 1.0, 0.0, 1.0, -4.0, 1.0, 0.0, 1.0, 0.0]),
        }
    }

    /// Whether the mask is a derivative (its weights sum to 0): its output is signed and is
    /// shown as a magnitude.
    pub(crate) fn is_derivative(self) -> bool {
        matches!(
            self,
            NamedMask::SobelX | NamedMask::SobelY | NamedMask::Laplacian3
        )
    }
}

/// What `demo conv2d --mask` names: a [`NamedMask`], `gaussian:SIGMA`, `box:W` or a square f32
/// `FILE.npy`. The parser ([`parse_mask`]) checks the syntax and the widths it can; the file
/// is read when the pattern runs ([`MaskArg::check`], before any GPU work).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MaskArg {
    /// A named mask.
    Named(NamedMask),
    /// [`Mask2d::gaussian`] of this standard deviation (separable).
    Gaussian(f32),
    /// [`Mask2d::box_filter`] of this odd width (separable).
    Box(usize),
    /// A square f32 `.npy` array of odd width up to 31 (separable if it is rank 1).
    Npy(PathBuf),
}

impl std::fmt::Display for MaskArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaskArg::Named(m) => f.write_str(&variant_name(*m)),
            MaskArg::Gaussian(sigma) => write!(f, "gaussian:{sigma}"),
            MaskArg::Box(w) => write!(f, "box:{w}"),
            MaskArg::Npy(path) => write!(f, "{}", path.display()),
        }
    }
}

/// The radius SciPy's `gaussian_filter(..., truncate=3.0)` gives a Gaussian of standard
/// deviation `sigma`: `floor(3 sigma + 0.5)` (`int(truncate * sigma + 0.5)`), the radius of
/// [`Mask2d::gaussian`]; `None` beyond the widest mask.
pub(super) fn gaussian_radius(sigma: f32) -> Option<usize> {
    let radius = (3.0 * f64::from(sigma) + 0.5).floor();
    (radius <= (convolution::MAX_MASK_WIDTH_2D / 2) as f64).then_some(radius as usize)
}

/// Parses `--mask` (clap's value parser): an error is one sentence.
pub(super) fn parse_mask(s: &str) -> std::result::Result<MaskArg, String> {
    let max = convolution::MAX_MASK_WIDTH_2D;
    if let Ok(named) = <NamedMask as clap::ValueEnum>::from_str(s, false) {
        return Ok(MaskArg::Named(named));
    }
    if let Some(text) = s.strip_prefix("gaussian:") {
        let sigma: f32 = text.parse().map_err(|_| {
            format!("`{text}` is not a number: gaussian:SIGMA takes a standard deviation, such as gaussian:1.5")
        })?;
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(format!(
                "the Gaussian's sigma must be positive and finite, not {text}"
            ));
        }
        return match gaussian_radius(sigma) {
            Some(_) => Ok(MaskArg::Gaussian(sigma)),
            None => Err(format!(
                "gaussian:{text} is wider than {max} x {max} (its radius is floor(3 sigma + 0.5); sigma must be below {:.4})",
                (max / 2) as f64 / 3.0 + 0.5 / 3.0
            )),
        };
    }
    if let Some(text) = s.strip_prefix("box:") {
        let w: usize = text.parse().map_err(|_| {
            format!("`{text}` is not a width: box:W takes an odd width, such as box:7")
        })?;
        if w.is_multiple_of(2) || w > max {
            return Err(format!("box:{w}: the width must be odd, 1 to {max}"));
        }
        return Ok(MaskArg::Box(w));
    }
    if s.ends_with(".npy") {
        return Ok(MaskArg::Npy(PathBuf::from(s)));
    }
    let names: Vec<String> = <NamedMask as clap::ValueEnum>::value_variants()
        .iter()
        .map(|m| variant_name(*m))
        .collect();
    Err(format!(
        "unknown mask `{s}`: give one of {}, gaussian:SIGMA, box:W or FILE.npy",
        names.join(", ")
    ))
}

impl MaskArg {
    /// Checks what the parser could not (reads a `.npy`).
    ///
    /// # Errors
    /// As [`load_npy_mask`].
    pub(super) fn check(&self) -> Result<()> {
        if let MaskArg::Npy(path) = self {
            load_npy_mask(path)?;
        }
        Ok(())
    }

    /// The mask on `gpu`'s device.
    ///
    /// # Errors
    /// As [`load_npy_mask`], or the library's refusal.
    pub(super) fn device(&self, gpu: &Gpu) -> Result<Mask2d> {
        Ok(match self {
            MaskArg::Named(m) => {
                let (w, values) = m.values();
                Mask2d::new(gpu, &values, w)?
            }
            MaskArg::Gaussian(sigma) => Mask2d::gaussian(gpu, *sigma, GAUSSIAN_TRUNCATE)?,
            MaskArg::Box(w) => Mask2d::box_filter(gpu, *w)?,
            MaskArg::Npy(path) => {
                let (w, values) = load_npy_mask(path)?;
                Mask2d::new(gpu, &values, w)?
            }
        })
    }

    /// Whether the filtered picture is signed (shown as a magnitude): a derivative named
    /// mask, or a file whose weights sum to 0.
    pub(super) fn is_derivative(&self, mask: &Mask2d) -> bool {
        match self {
            MaskArg::Named(m) => m.is_derivative(),
            MaskArg::Npy(_) => {
                let sum: f64 = mask.values().iter().map(|&v| f64::from(v)).sum();
                let abs: f64 = mask.values().iter().map(|&v| f64::from(v).abs()).sum();
                sum.abs() <= 1e-6 * abs
            }
            _ => false,
        }
    }
}

/// Reads a mask from a `.npy` file: `(width, row-major values)` of a square f32 array of odd
/// width up to [`convolution::MAX_MASK_WIDTH_2D`], finite (C or Fortran order).
///
/// # Errors
/// One sentence naming the file: unreadable, not `.npy`, not f32, not square, an even or too
/// large width, a value not finite.
pub(super) fn load_npy_mask(path: &Path) -> Result<(usize, Vec<f32>)> {
    let name = path.display();
    let bytes = std::fs::read(path).with_context(|| format!("cannot read the mask {name}"))?;
    let npy = npyz::NpyFile::new(&bytes[..])
        .map_err(|e| anyhow::anyhow!("the mask {name} is not a .npy file ({e})"))?;
    let descr = npy.dtype().descr();
    if descr != "'<f4'" && descr != "'>f4'" {
        bail!(
            "the mask {name} holds {descr}, not f32: save it as numpy.save(path, m.astype(numpy.float32))"
        );
    }
    let (h, w) = match *npy.shape() {
        [h, w] => (h as usize, w as usize),
        ref other => bail!("the mask {name} has shape {other:?}: a square 2D array expected"),
    };
    let max = convolution::MAX_MASK_WIDTH_2D;
    if h != w || w.is_multiple_of(2) || w > max {
        bail!("the mask {name} is {h} x {w}: a square mask of odd width, 1 to {max}, expected");
    }
    let fortran = matches!(npy.order(), npyz::Order::Fortran);
    let stored: Vec<f32> = npy
        .into_vec()
        .map_err(|e| anyhow::anyhow!("cannot read the values of the mask {name} ({e})"))?;
    let values: Vec<f32> = if fortran {
        (0..w * w).map(|i| stored[(i % w) * w + i / w]).collect()
    } else {
        stored
    };
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        bail!(
            "the mask {name} has {} at row {}, column {}: every weight must be finite",
            values[i],
            i / w,
            i % w
        );
    }
    Ok((w, values))
}
