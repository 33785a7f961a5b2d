//! The FP32 multiply-add ceiling: the launcher of `gpu::memory::fma_rate` and the CPU
//! reference of what it computes.
//!
//! The FMA floor of a convolution divides its multiply-adds by the nominal peak, SMs x FP32
//! lanes x the peak SM clock. Whether a GPU holds that clock with every FP32 lane busy is a
//! measurement: [`FmaRate`] runs 16 independent `fma.rn.f32` chains per thread on 8 blocks
//! per SM and nothing else (one 4-byte store per thread), so its rate is the most any FP32
//! kernel gets in that run (`demo sweep` and `demo conv2d` print it beside the nominal peak).
//!
//! ```no_run
//! use cpu::lab::memory::fma_rate::FmaRate;
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = cpu::Gpu::new(0)?;
//! let mut rate = FmaRate::new(&gpu, 8, 64)?;
//! rate.launch(&gpu)?;
//! assert_eq!(rate.mismatches(&gpu, 1)?, 0);
//! # Ok(())
//! # }
//! ```

use cudarc::driver::{CudaSlice, LaunchConfig};
use gpu::memory::fma_rate::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::launch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[kernels::fma_rate.name()];

/// Multiply-adds one thread issues per loop iteration (16 chains x 8 steps).
pub const FMAS_PER_ITERATION: u64 = (k::FMA_RATE_CHAINS * k::FMA_RATE_UNROLL) as u64;

/// Most blocks per SM [`FmaRate::new`] takes (a grid of up to 64 waves of 256 threads).
pub const MAX_BLOCKS_PER_SM: u32 = 64;

/// One FMA-rate launch shape with its output (one float per thread), allocated once so that
/// a launch allocates nothing.
#[derive(Debug)]
pub struct FmaRate {
    cfg: LaunchConfig,
    iterations: u32,
    output: CudaSlice<f32>,
}

impl FmaRate {
    /// `blocks_per_sm` blocks of 256 threads per SM, each thread running `iterations` loop
    /// trips (128 FMAs each).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if `blocks_per_sm` is 0 or above [`MAX_BLOCKS_PER_SM`] or
    /// `iterations` is 0; [`Error::Driver`] from the SM count; [`Error::OutOfMemory`] /
    /// [`Error::Driver`] from the allocation.
    pub fn new(gpu: &Gpu, blocks_per_sm: u32, iterations: u32) -> Result<Self> {
        if !(1..=MAX_BLOCKS_PER_SM).contains(&blocks_per_sm) {
            return Err(Error::OutOfRange {
                what: "blocks per SM",
                value: u64::from(blocks_per_sm),
                min: 1,
                max: u64::from(MAX_BLOCKS_PER_SM),
            });
        }
        if iterations == 0 {
            return Err(Error::OutOfRange {
                what: "iterations",
                value: 0,
                min: 1,
                max: u64::from(u32::MAX),
            });
        }
        let grid = gpu.sm_count()?.max(1) * blocks_per_sm;
        let cfg = launch::linear(grid, k::FMA_RATE_BLOCK, 0);
        let threads = grid as usize * k::FMA_RATE_BLOCK as usize;
        Ok(Self {
            cfg,
            iterations,
            output: gpu.poisoned(threads, f32::NAN)?,
        })
    }

    /// The launch configuration every [`FmaRate::launch`] uses.
    pub fn launch_config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Threads of the grid.
    pub fn threads(&self) -> usize {
        self.output.len()
    }

    /// Multiply-adds one launch issues: threads x iterations x 128.
    pub fn fmas(&self) -> u64 {
        self.threads() as u64 * u64::from(self.iterations) * FMAS_PER_ITERATION
    }

    /// Queues one launch; no host synchronisation.
    ///
    /// # Errors
    /// [`Error::Driver`] if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu) -> Result<LaunchConfig> {
        gpu.check_buffer("output", &self.output)?;
        let n = self.output.len();
        // SAFETY: `fma_rate(output, n, iterations)`: `output` holds `n` floats, one per thread
        // of the grid (allocated for this configuration), borrowed mutably; blocks of
        // FMA_RATE_BLOCK threads as the kernel asserts.
        unsafe {
            gpu.launch_unchecked(
                kernels::fma_rate,
                self.cfg,
                (&mut self.output, n, self.iterations),
            )
        }?;
        Ok(self.cfg)
    }

    /// Outputs of the last launch, of every `stride`-th thread and the last one, that differ
    /// from [`reference()`] (bit for bit: both round every FMA once); waits for the stream.
    /// `stride` 1 checks every thread (the reference costs `128 x iterations` FMAs a thread);
    /// 0 is taken as 1.
    ///
    /// # Errors
    /// [`Error::Driver`] if the kernel faulted or the copy fails.
    pub fn mismatches(&self, gpu: &Gpu, stride: usize) -> Result<usize> {
        let got = gpu.download(&self.output, kernels::fma_rate.name())?;
        let last = got.len().saturating_sub(1);
        Ok(got
            .iter()
            .enumerate()
            .filter(|&(t, _)| t % stride.max(1) == 0 || t == last)
            .filter(|&(t, &g)| g.to_bits() != reference(t, self.iterations).to_bits())
            .count())
    }
}

/// CPU reference of thread `t`'s output: its 16 chains of `8 x iterations` steps `x <-
/// x * A + B` (`f32::mul_add`, one rounding as `fma.rn.f32`), added in chain order from 0.
pub fn reference(t: usize, iterations: u32) -> f32 {
    let mut sum = 0.0f32;
    for c in 0..k::FMA_RATE_CHAINS {
        let mut x = k::fma_rate_start(t, c);
        for _ in 0..u64::from(iterations) * k::FMA_RATE_UNROLL as u64 {
            x = x.mul_add(k::FMA_RATE_A, k::FMA_RATE_B);
        }
        sum += x;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_stay_bounded_and_differ_by_thread() {
        let a = reference(0, 100);
        let b = reference(1, 100);
        assert!(a.is_finite() && b.is_finite() && a != b);
        assert!(reference(3, 1000) < 16.0);
        assert_eq!(FMAS_PER_ITERATION, 128);
    }
}
