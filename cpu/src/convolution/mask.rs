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
/// [`Error::MaskWidth`] naming the dimensions, the width and the limit.
pub fn validate_mask_width(dims: u32, width: usize) -> Result<()> {
    let max = match dims {
        1 => MAX_MASK_WIDTH,
        2 => MAX_MASK_WIDTH_2D,
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
        return Err(Error::MaskWidth { dims, width, max });
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
        constants.write_tagged(k::C_MASK_1D::SYMBOL, self.tag, &self.values)
    }
}

/// A validated `w x w` 2D mask, row-major (`w` odd, at most [`MAX_MASK_WIDTH_2D`]), placed on
/// one device: as [`Mask1d`] (host values, a global-memory copy read by
/// [`Variant2d::Convolution2dBasic`](super::Variant2d::Convolution2dBasic), a tag, no lock),
/// with the `__constant__` symbol [`k::C_MASK_2D`].
#[derive(Debug)]
pub struct Mask2d {
    values: Vec<f32>,
    width: usize,
    global: CudaSlice<f32>,
    tag: u64,
}

impl Mask2d {
    /// Validates the row-major `width x width` mask in `values` and copies it to `gpu`'s
    /// device. The copy is queued on `gpu`'s stream; nothing synchronises.
    ///
    /// # Errors
    /// [`Error::MaskWidth`] if `width` is even, 0 or over [`MAX_MASK_WIDTH_2D`];
    /// [`Error::LengthMismatch`] (`what: "mask"`) if `values` does not hold `width^2` floats;
    /// [`Error::OutOfMemory`] / [`Error::Driver`] from the copy.
    pub fn new(gpu: &Gpu, values: &[f32], width: usize) -> Result<Self> {
        validate_mask_width(2, width)?;
        if values.len() != width * width {
            return Err(Error::LengthMismatch {
                what: "mask",
                expected: width * width,
                actual: values.len(),
            });
        }
        Ok(Self {
            values: values.to_vec(),
            width,
            global: gpu.upload(values)?,
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

    /// The copy in global memory (`w^2` floats).
    pub fn device(&self) -> &CudaSlice<f32> {
        &self.global
    }

    /// Places the mask in [`k::C_MASK_2D`] under `constants` (skipped if it is there already).
    pub(super) fn write_constant(&self, constants: &mut ConstantMemory) -> Result<()> {
        constants.write_tagged(k::C_MASK_2D::SYMBOL, self.tag, &self.values)
    }
}

/// Named 2D masks for filtering images (`demo conv2d --mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum NamedMask {
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
    pub fn values(self) -> (usize, Vec<f32>) {
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
    pub fn is_derivative(self) -> bool {
        matches!(
            self,
            NamedMask::SobelX | NamedMask::SobelY | NamedMask::Laplacian3
        )
    }
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
                Err(Error::MaskWidth { dims: 1, width, max: 31 }) if width == bad
            ));
        }
        assert!(matches!(
            validate_mask_width(2, 11),
            Err(Error::MaskWidth {
                dims: 2,
                width: 11,
                max: 9
            })
        ));
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

    #[test]
    fn masks_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Mask1d>();
        send_sync::<Mask2d>();
    }

    #[test]
    #[cfg(feature = "clap")]
    fn named_masks_are_well_formed() {
        for m in <NamedMask as clap::ValueEnum>::value_variants() {
            let (w, v) = m.values();
            assert_eq!(v.len(), w * w);
            assert!(validate_mask_width(2, w).is_ok());
            let sum: f32 = v.iter().sum();
            if m.is_derivative() {
                assert!(sum.abs() < 1e-6, "{m:?}");
            } else {
                assert!((sum - 1.0).abs() < 1e-5, "{m:?}");
            }
        }
    }
}
