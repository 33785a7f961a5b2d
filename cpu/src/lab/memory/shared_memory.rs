//! Shared memory declared statically and dynamically: launchers and CPU reference for the
//! seed's example in `gpu::memory::shared_memory`.

use cudarc::driver::{CudaSlice, LaunchConfig};
use gpu::memory::shared_memory::kernels;

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::shared_memory_static.name(),
    kernels::shared_memory_dynamic.name(),
];

/// The seed's input, `float host_u[4] = {1, 2, 3, 4}`, launched `<<<1, 4>>>`.
pub const SEED_U: [f32; 4] = [1.0, 2.0, 3.0, 4.0];

/// How the shared array is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// `__shared__ int tmp[1024];`
    Static,
    /// `extern __shared__ int tmp[];` sized by the launch.
    Dynamic,
}

impl Variant {
    /// Both variants.
    pub const ALL: [Variant; 2] = [Variant::Static, Variant::Dynamic];

    /// The kernel: `(u)`.
    pub fn kernel(self) -> Kernel<(*mut f32,)> {
        match self {
            Variant::Static => kernels::shared_memory_static,
            Variant::Dynamic => kernels::shared_memory_dynamic,
        }
    }

    /// The kernel's `.entry` name.
    pub fn kernel_name(self) -> &'static str {
        self.kernel().name()
    }
}

/// Queues the example in place on `u`, in blocks of `block` threads (one block per `block`
/// elements; the dynamic variant gets `block * 4` bytes of dynamic shared memory).
///
/// # Errors
/// [`Error::InvalidBlock`] if `block` is not 1..=1024; [`Error::NotMultiple`] if `u.len()` is
/// not a multiple of `block` (each block mirrors its own `block` elements); [`Error::Driver`]
/// if the launch fails.
pub fn launch(
    gpu: &Gpu,
    variant: Variant,
    u: &mut CudaSlice<f32>,
    block: u32,
) -> Result<LaunchConfig> {
    let kernel = variant.kernel();
    launch::check_block(kernel.name(), block, false)?;
    if !u.len().is_multiple_of(block as usize) {
        return Err(Error::NotMultiple {
            what: "elements",
            value: u.len(),
            multiple: block as usize,
        });
    }
    let grid = launch::blocks_to_cover(kernel.name(), u.len(), block as u64)?;
    let shared = match variant {
        Variant::Static => 0,
        Variant::Dynamic => block * 4,
    };
    let cfg = launch::linear(grid, block, shared);
    if grid == 0 {
        return Ok(cfg);
    }
    // SAFETY: `shared_memory_{static,dynamic}(u)` with `u` holding `grid * block` floats
    // (checked: whole blocks); the dynamic variant gets `block` ints of dynamic shared memory
    // and the static one's array holds 1024 >= block.
    unsafe { gpu.launch_unchecked(kernel, cfg, (u,)) }?;
    Ok(cfg)
}

/// Uploads `u`, runs the example with blocks of `block` threads and returns the result.
///
/// # Errors
/// As [`launch`](fn@launch).
pub fn run(gpu: &Gpu, variant: Variant, u: &[f32], block: u32) -> Result<Vec<f32>> {
    let mut d_u = gpu.upload(u)?;
    launch(gpu, variant, &mut d_u, block)?;
    gpu.download(&d_u, variant.kernel_name())
}

/// CPU reference: per block of `block` elements, `t = u as i32` (truncation toward zero,
/// saturating, NaN to 0: PTX `cvt.rzi.s32.f32`), `u[i] = (t[i] * t[i] + t[block-1-i]) as f32`
/// with wrapping integer arithmetic.
pub fn reference(u: &[f32], block: usize) -> Vec<f32> {
    u.chunks(block)
        .flat_map(|chunk| {
            let t: Vec<i32> = chunk.iter().map(|&x| x as i32).collect();
            let b = t.len();
            (0..b)
                .map(|i| t[i].wrapping_mul(t[i]).wrapping_add(t[b - 1 - i]) as f32)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_prints_5_7_11_17() {
        assert_eq!(reference(&SEED_U, 4), vec![5.0, 7.0, 11.0, 17.0]);
    }
}
