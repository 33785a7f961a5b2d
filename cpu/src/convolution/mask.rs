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
}
