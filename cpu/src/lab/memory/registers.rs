//! Registers and local memory: launchers and CPU reference for `gpu::memory::registers`.

use cudarc::driver::{CudaSlice, LaunchConfig};
use gpu::memory::registers::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::launch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::registers_array.name(),
    kernels::registers_local_array.name(),
];

/// Where the private array lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// Compile-time indices: the array stays in registers.
    Array,
    /// Run-time indices: the array goes to local memory.
    LocalArray,
}

impl Variant {
    /// Both variants.
    pub const ALL: [Variant; 2] = [Variant::Array, Variant::LocalArray];

    /// The kernel's `.entry` name (the local version takes `step` and `offset` too:
    /// [`launch`](fn@launch) launches each by its own signature).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant::Array => kernels::registers_array.name(),
            Variant::LocalArray => kernels::registers_local_array.name(),
        }
    }
}

/// Queues the variant over `x` into `out` (one thread per element, blocks of
/// [`k::BLOCK_SIZE`]).
///
/// # Errors
/// [`Error::LengthMismatch`] if `out` differs in length from `x`; [`Error::GridTooLarge`] if
/// the grid would be too large; [`Error::Driver`] if the launch fails.
pub fn launch(
    gpu: &Gpu,
    variant: Variant,
    x: &CudaSlice<u32>,
    out: &mut CudaSlice<u32>,
) -> Result<LaunchConfig> {
    let n = x.len();
    if out.len() != n {
        return Err(Error::LengthMismatch {
            what: "out",
            expected: n,
            actual: out.len(),
        });
    }
    let kernel = variant.kernel_name();
    let cfg = launch::linear(
        launch::blocks_to_cover(kernel, n, k::BLOCK_SIZE as u64)?,
        k::BLOCK_SIZE,
        0,
    );
    if n == 0 {
        return Ok(cfg);
    }
    match variant {
        // SAFETY: `registers_array(x, out, n)`: both buffers hold `n` elements (checked above)
        // and the grid covers `n`.
        Variant::Array => unsafe {
            gpu.launch_unchecked(kernels::registers_array, cfg, (x, out, n))
        },
        // SAFETY: `registers_local_array(x, out, n, step, offset)`: as `Array`; `STEP` is odd,
        // as the permutation needs.
        Variant::LocalArray => unsafe {
            gpu.launch_unchecked(
                kernels::registers_local_array,
                cfg,
                (x, out, n, k::STEP, k::OFFSET),
            )
        },
    }?;
    Ok(cfg)
}

/// Uploads `x`, runs the variant into a poisoned output and returns it.
///
/// # Errors
/// As [`launch`](fn@launch).
pub fn run(gpu: &Gpu, variant: Variant, x: &[u32]) -> Result<Vec<u32>> {
    let d_x = gpu.upload(x)?;
    let mut d_out = gpu.poisoned(x.len(), 0xDEAD_BEEF)?;
    launch(gpu, variant, &d_x, &mut d_out)?;
    gpu.download(&d_out, variant.kernel_name())
}

/// CPU reference: `sum_k (x ^ (k * 0x9E3779B9)).rotate_left(k)` over `k < ARRAY_LEN`
/// (wrapping; the order does not matter for wrapping addition).
pub fn reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|&v| {
            (0..k::ARRAY_LEN as u32).fold(0u32, |s, j| {
                s.wrapping_add((v ^ j.wrapping_mul(0x9E37_79B9)).rotate_left(j))
            })
        })
        .collect()
}

/// DRAM bytes per element: one 4-byte read, one 4-byte write (the private array itself is
/// on chip or in cache).
pub fn bytes_moved(n: usize) -> u64 {
    8 * n as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_of_zero_is_the_mix_sum() {
        let expected = (0..32u32).fold(0u32, |s, j| {
            s.wrapping_add(j.wrapping_mul(0x9E37_79B9).rotate_left(j))
        });
        assert_eq!(reference(&[0]), vec![expected]);
        assert_eq!(KERNELS.len(), Variant::ALL.len());
    }
}
