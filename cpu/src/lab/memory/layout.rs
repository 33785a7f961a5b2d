//! Array of structs against struct of arrays (*Professional CUDA C Programming*'s
//! `simpleMathAoS` / `simpleMathSoA`): launchers for the kernels in `gpu::memory::layout` and
//! their CPU reference.
//!
//! The host keeps the data as [`InnerStruct`]s (the type the kernels use) and lays it out per
//! variant: interleaved `x y x y ...` floats for the arrays of structs (the same bytes as
//! `[InnerStruct]`, whose `#[repr(C)]` layout is two packed `f32`), two separate arrays for the
//! struct of arrays.

use cudarc::driver::{CudaSlice, LaunchConfig};
use gpu::memory::layout::{self as k, InnerStruct, InnerStructAligned, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::launch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::layout_aos.name(),
    kernels::layout_aos_aligned.name(),
    kernels::layout_soa.name(),
];

/// The data layouts, in the order the demo and the tests run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// Array of 4-byte aligned structs (the book's `simpleMathAoS`): two 4-byte accesses per
    /// struct, each warp instruction using half of the 256 bytes it touches.
    Aos,
    /// Array of 8-byte aligned structs (`__align__(8)`): one 8-byte access per struct.
    AosAligned,
    /// Struct of arrays (the book's `simpleMathSoA`): every access of a warp 128 contiguous bytes.
    Soa,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Aos, Variant::AosAligned, Variant::Soa];

    /// The kernel's `.entry` name in the PTX (the kernels' signatures differ:
    /// [`DeviceData::launch`] launches each by its own).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant::Aos => kernels::layout_aos.name(),
            Variant::AosAligned => kernels::layout_aos_aligned.name(),
            Variant::Soa => kernels::layout_soa.name(),
        }
    }
}

/// The data on the device in one variant's layout, with an output of the same layout.
pub struct DeviceData {
    variant: Variant,
    n: usize,
    /// `2n` interleaved floats (AoS) or `x` then `y`, `n` each (SoA).
    input: CudaSlice<f32>,
    output: CudaSlice<f32>,
}

impl DeviceData {
    /// Uploads `data` in `variant`'s layout; the output is poisoned with NaN.
    ///
    /// # Errors
    /// [`crate::Error::Driver`] if an allocation or copy fails.
    pub fn new(gpu: &Gpu, variant: Variant, data: &[InnerStruct]) -> Result<Self> {
        let n = data.len();
        let host: Vec<f32> = match variant {
            Variant::Aos | Variant::AosAligned => data.iter().flat_map(|s| [s.x, s.y]).collect(),
            Variant::Soa => data
                .iter()
                .map(|s| s.x)
                .chain(data.iter().map(|s| s.y))
                .collect(),
        };
        Ok(Self {
            variant,
            n,
            input: gpu.upload(&host)?,
            output: gpu.poisoned(2 * n, f32::NAN)?,
        })
    }

    /// Queues the variant's kernel on `gpu`'s stream: blocks of [`k::BLOCK_SIZE`] covering `n`.
    /// Nothing is launched for `n = 0`.
    ///
    /// # Errors
    /// [`crate::Error::GridTooLarge`] if `n` needs more blocks than a grid holds;
    /// [`crate::Error::Driver`] if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu) -> Result<LaunchConfig> {
        let kernel = self.variant.kernel_name();
        let grid = launch::blocks_to_cover(kernel, self.n, k::BLOCK_SIZE as u64)?;
        let cfg = launch::linear(grid, k::BLOCK_SIZE, 0);
        if self.n == 0 {
            return Ok(cfg);
        }
        let n = self.n;
        // Both buffers hold `2n` floats: the bytes of `n` structs of two `f32` (`#[repr(C)]`,
        // 8 bytes, any bits valid; cudarc allocations are 256-byte aligned, as the aligned
        // variant needs), seen as structs by the AoS kernels.
        let actual = self.input.len().min(self.output.len());
        let too_short = || Error::LengthMismatch {
            what: "elements",
            expected: 2 * n,
            actual,
        };
        match self.variant {
            Variant::Aos => {
                // SAFETY: as said above: `n` structs fit in `2n` floats (`None` otherwise).
                let (data, result) = unsafe {
                    (
                        self.input.transmute::<InnerStruct>(n),
                        self.output.transmute_mut::<InnerStruct>(n),
                    )
                };
                let (Some(data), Some(mut result)) = (data, result) else {
                    return Err(too_short());
                };
                // SAFETY: `layout_aos(data, result, n)`: both views hold `n` structs of distinct
                // buffers; the grid covers `n`.
                unsafe { gpu.launch_unchecked(kernels::layout_aos, cfg, (&data, &mut result, n)) }?;
            }
            Variant::AosAligned => {
                // SAFETY: as for `Aos`, with the 8-byte aligned struct (same size).
                let (data, result) = unsafe {
                    (
                        self.input.transmute::<InnerStructAligned>(n),
                        self.output.transmute_mut::<InnerStructAligned>(n),
                    )
                };
                let (Some(data), Some(mut result)) = (data, result) else {
                    return Err(too_short());
                };
                // SAFETY: `layout_aos_aligned(data, result, n)`: both views hold `n` 8-byte
                // aligned structs of distinct buffers; the grid covers `n`.
                unsafe {
                    gpu.launch_unchecked(kernels::layout_aos_aligned, cfg, (&data, &mut result, n))
                }?;
            }
            Variant::Soa => {
                let (x, y) = self.input.split_at(n);
                let (mut x_out, mut y_out) = self.output.split_at_mut(n);
                // SAFETY: `layout_soa(x, y, x_out, y_out, n)`: four disjoint views of `n` floats
                // each; the grid covers `n`.
                unsafe {
                    gpu.launch_unchecked(
                        kernels::layout_soa,
                        cfg,
                        (&x, &y, &mut x_out, &mut y_out, n),
                    )
                }?;
            }
        }
        Ok(cfg)
    }

    /// Copies the output back as structs (waits for the stream).
    ///
    /// # Errors
    /// [`crate::Error::Driver`] if the kernel or the copy failed.
    pub fn result(&self, gpu: &Gpu) -> Result<Vec<InnerStruct>> {
        let host = gpu.download(&self.output, self.variant.kernel_name())?;
        let n = self.n;
        Ok(match self.variant {
            Variant::Aos | Variant::AosAligned => host
                .chunks_exact(2)
                .map(|p| InnerStruct { x: p[0], y: p[1] })
                .collect(),
            Variant::Soa => (0..n)
                .map(|i| InnerStruct {
                    x: host[i],
                    y: host[n + i],
                })
                .collect(),
        })
    }
}

/// Runs one variant on `data` and returns the result.
///
/// # Errors
/// As [`DeviceData::new`] and [`DeviceData::launch`].
pub fn run(gpu: &Gpu, variant: Variant, data: &[InnerStruct]) -> Result<Vec<InnerStruct>> {
    let mut d = DeviceData::new(gpu, variant, data)?;
    d.launch(gpu)?;
    d.result(gpu)
}

/// CPU reference: `x + 10`, `y + 20` (one correctly rounded add each, so the GPU matches
/// exactly).
pub fn reference(data: &[InnerStruct]) -> Vec<InnerStruct> {
    data.iter()
        .map(|s| InnerStruct {
            x: s.x + k::ADD_X,
            y: s.y + k::ADD_Y,
        })
        .collect()
}

/// Bytes each element moves through DRAM: a struct of 8 bytes read and written.
pub fn bytes_moved(n: usize) -> u64 {
    16 * n as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_adds_the_books_constants() {
        assert_eq!(
            reference(&[InnerStruct { x: 1.0, y: -2.0 }]),
            [InnerStruct { x: 11.0, y: 18.0 }]
        );
    }

    #[test]
    fn shared_type_layouts() {
        assert_eq!(std::mem::size_of::<InnerStruct>(), 8);
        assert_eq!(std::mem::align_of::<InnerStruct>(), 4);
        assert_eq!(std::mem::align_of::<InnerStructAligned>(), 8);
        assert_eq!(bytes_moved(2), 32);
    }
}
