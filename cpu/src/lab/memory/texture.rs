//! Texture memory: a 1D lookup `out[i] = table[idx[i]]` through a CUDA texture object
//! (`tex1Dfetch`), plain global loads and the read-only data path (`__ldg`): launchers for the
//! kernels in `gpu::memory::texture`, the texture object, and the CPU reference.

use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, sys};
use gpu::memory::texture::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
use crate::launch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::texture_lookup_tex1d.name(),
    kernels::texture_lookup_global.name(),
    kernels::texture_lookup_ldg.name(),
];

/// The lookup paths, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// Through a texture object (`tex1Dfetch`, PTX `tex.1d.v4.f32.s32`).
    Tex1d,
    /// Plain global loads (`ld.global`, cached in L1).
    Global,
    /// The read-only data path (`__ldg`, `ld.global.nc`).
    Ldg,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Tex1d, Variant::Global, Variant::Ldg];

    /// The kernel's `.entry` name in the PTX (the texture kernel takes a handle where the
    /// others take the table: [`Lookup::launch`] launches each by its own signature).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant::Tex1d => kernels::texture_lookup_tex1d.name(),
            Variant::Global => kernels::texture_lookup_global.name(),
            Variant::Ldg => kernels::texture_lookup_ldg.name(),
        }
    }
}

/// A texture object over a device buffer of `f32` (`cuTexObjectCreate` with a linear resource,
/// point sampling, unnormalized integer coordinates), destroyed on drop; it borrows the buffer,
/// so the buffer outlives it.
pub struct TextureObject<'a> {
    handle: sys::CUtexObject,
    _table: PhantomData<&'a CudaSlice<f32>>,
}

impl<'a> TextureObject<'a> {
    /// Creates the texture object over all of `table`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if `table` is empty or longer than the device's largest 1D
    /// linear texture; [`Error::Driver`] if the driver refuses.
    pub fn new(gpu: &Gpu, table: &'a CudaSlice<f32>) -> Result<Self> {
        let max = max_linear_width(gpu)?;
        if table.is_empty() || table.len() > max {
            return Err(Error::OutOfRange {
                what: "elements",
                value: table.len() as u64,
                min: 1,
                max: max as u64,
            });
        }
        let (ptr, _read) = table.device_ptr(gpu.stream());
        // SAFETY: all-zero bytes are valid for these plain C structs (enums with a zero
        // variant, integers, floats, a union of integers).
        let mut resource: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        resource.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
        resource.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
            devPtr: ptr,
            format: sys::CUarray_format::CU_AD_FORMAT_FLOAT,
            numChannels: 1,
            sizeInBytes: table.len() * 4,
        };
        // SAFETY: as above; zero is point filtering, wrap addressing (ignored for linear
        // memory), unnormalized coordinates, no flags.
        let mut texture: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
        texture.filterMode = sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT;
        let mut handle: sys::CUtexObject = 0;
        gpu.context()
            .bind_to_thread()
            .during("binding the CUDA context")?;
        // SAFETY: the descriptors are initialised above and describe `table`'s live allocation;
        // no resource view is needed for linear memory (null).
        unsafe { sys::cuTexObjectCreate(&mut handle, &resource, &texture, std::ptr::null()) }
            .result()
            .during("creating a texture object")?;
        Ok(Self {
            handle,
            _table: PhantomData,
        })
    }

    /// The handle the kernel takes (`cudaTextureObject_t`).
    pub fn handle(&self) -> u64 {
        self.handle
    }
}

impl Drop for TextureObject<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from `cuTexObjectCreate` and is destroyed once. A failure
        // cannot be reported from `drop`.
        let _ = unsafe { sys::cuTexObjectDestroy(self.handle) };
    }
}

/// The device's largest 1D texture over linear memory, in elements.
///
/// # Errors
/// [`Error::Driver`] if the attribute cannot be read.
pub fn max_linear_width(gpu: &Gpu) -> Result<usize> {
    let w = gpu
        .context()
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)
        .during("reading the largest 1D linear texture")?;
    Ok(w as usize)
}

/// A lookup table and its indices on the device, with the texture object over the table.
pub struct Lookup<'a> {
    table: &'a CudaSlice<f32>,
    texture: TextureObject<'a>,
    idx: CudaSlice<u32>,
    /// The output, `idx.len()` floats.
    pub out: CudaSlice<f32>,
}

impl<'a> Lookup<'a> {
    /// Checks every index against `table` and uploads them; the output is poisoned with NaN.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if an index is out of range or the table does not fit a texture
    /// (see [`TextureObject::new`]); [`Error::Driver`].
    pub fn new(gpu: &Gpu, table: &'a CudaSlice<f32>, idx: &[u32]) -> Result<Self> {
        if let Some((_, &bad)) = idx
            .iter()
            .enumerate()
            .find(|(_, v)| **v as usize >= table.len())
        {
            return Err(Error::OutOfRange {
                what: "lookup index",
                value: bad as u64,
                min: 0,
                max: table.len() as u64 - 1,
            });
        }
        Ok(Self {
            texture: TextureObject::new(gpu, table)?,
            table,
            idx: gpu.upload(idx)?,
            out: gpu.poisoned(idx.len(), f32::NAN)?,
        })
    }

    /// Queues `variant`'s lookup kernel: blocks of [`k::BLOCK_SIZE`] covering the indices.
    ///
    /// # Errors
    /// [`Error::GridTooLarge`], [`Error::Driver`].
    pub fn launch(&mut self, gpu: &Gpu, variant: Variant) -> Result<LaunchConfig> {
        let kernel = variant.kernel_name();
        let n = self.idx.len();
        let grid = launch::blocks_to_cover(kernel, n, k::BLOCK_SIZE as u64)?;
        let cfg = launch::linear(grid, k::BLOCK_SIZE, 0);
        if n == 0 {
            return Ok(cfg);
        }
        let (table, idx, out) = (self.table, &self.idx, &mut self.out);
        match variant {
            // SAFETY: `texture_lookup_tex1d(table, idx, out, n)` with `table` a live texture
            // object over the table (it lives as long as `self`); every index is inside the
            // table (checked in `new`), `idx` and `out` hold `n` elements, `out` is a distinct
            // buffer and the table is only read.
            Variant::Tex1d => unsafe {
                gpu.launch_unchecked(
                    kernels::texture_lookup_tex1d,
                    cfg,
                    (self.texture.handle(), idx, out, n),
                )
            },
            // SAFETY: `texture_lookup_global(table, idx, out, n)`: as `Tex1d`, with the table
            // itself.
            Variant::Global => unsafe {
                gpu.launch_unchecked(kernels::texture_lookup_global, cfg, (table, idx, out, n))
            },
            // SAFETY: `texture_lookup_ldg(table, idx, out, n)`: as `Global`; nothing writes the
            // table during the launch, as the read-only path requires.
            Variant::Ldg => unsafe {
                gpu.launch_unchecked(kernels::texture_lookup_ldg, cfg, (table, idx, out, n))
            },
        }?;
        Ok(cfg)
    }
}

/// Uploads `table` and `idx`, runs `variant` and returns the output.
///
/// # Errors
/// As [`Lookup::new`] and [`Lookup::launch`].
pub fn run(gpu: &Gpu, variant: Variant, table: &[f32], idx: &[u32]) -> Result<Vec<f32>> {
    let d_table = gpu.upload(table)?;
    let mut lookup = Lookup::new(gpu, &d_table, idx)?;
    lookup.launch(gpu, variant)?;
    gpu.download(&lookup.out, variant.kernel_name())
}

/// CPU reference: `out[i] = table[idx[i]]`.
pub fn reference(table: &[f32], idx: &[u32]) -> Vec<f32> {
    idx.iter().map(|&i| table[i as usize]).collect()
}

/// Bytes a lookup moves at least: 4 of index, 4 of table, 4 of output.
pub fn bytes_moved(n: usize) -> u64 {
    12 * n as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_gathers() {
        assert_eq!(reference(&[1.0, 2.0, 3.0], &[2, 0, 2]), [3.0, 1.0, 3.0]);
        assert_eq!(bytes_moved(2), 24);
    }

    #[test]
    fn variants_name_their_kernels() {
        let names: Vec<_> = Variant::ALL.iter().map(|v| v.kernel_name()).collect();
        assert_eq!(names, KERNELS);
    }
}
