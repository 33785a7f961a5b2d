//! The memory and FP32 ceilings at once: the launcher of `gpu::memory::fma_stream` and the CPU
//! reference of what it computes.
//!
//! A fused separable 2D convolution of width `w` reads the image once, writes it once and does
//! `2w` multiply-adds per pixel; its computed floor is the larger of the memory floor (the
//! bytes at the copy's bandwidth) and the FMA floor (the multiply-adds at the FP32 peak).
//! Whether one kernel can keep both the memory system and the FP32 lanes that busy at once is a
//! measurement: [`FmaStream`] does exactly that traffic and arithmetic with nothing else (one
//! 16-byte load, `8w` multiply-adds in four independent chains, one 16-byte store per thread),
//! so its time is the most a kernel of that traffic and arithmetic gets in that run (`demo
//! sweep fma-stream`, beside `demo sweep conv2d-separable`).
//!
//! ```no_run
//! use cpu::lab::memory::fma_stream::FmaStream;
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = cpu::Gpu::new(0)?;
//! let input: Vec<f32> = (0..1000).map(|i| i as f32 / 1000.0).collect();
//! let mut stream = FmaStream::new(&gpu, &input)?;
//! stream.launch(&gpu, 31)?;
//! assert!(stream.check(&gpu, 31, &input, 1)?.is_ok());
//! # Ok(())
//! # }
//! ```

use cudarc::driver::{CudaSlice, LaunchConfig};
use gpu::memory::fma_stream::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::launch;
use crate::verify::Mismatch;

/// The kernels of this topic, by width (3, 5, ..., 31).
pub const KERNELS: &[&str] = &[
    kernels::fma_stream_w3.name(),
    kernels::fma_stream_w5.name(),
    kernels::fma_stream_w7.name(),
    kernels::fma_stream_w9.name(),
    kernels::fma_stream_w11.name(),
    kernels::fma_stream_w13.name(),
    kernels::fma_stream_w15.name(),
    kernels::fma_stream_w17.name(),
    kernels::fma_stream_w19.name(),
    kernels::fma_stream_w21.name(),
    kernels::fma_stream_w23.name(),
    kernels::fma_stream_w25.name(),
    kernels::fma_stream_w27.name(),
    kernels::fma_stream_w29.name(),
    kernels::fma_stream_w31.name(),
];

/// The widest `w` (62 multiply-adds per element).
pub const MAX_WIDTH: usize = k::FMA_STREAM_MAX_WIDTH;

/// The kernel of width `w`.
///
/// # Errors
/// [`Error::OutOfRange`] unless `w` is odd and `3..=31`.
pub fn kernel(w: usize) -> Result<kernels::FmaStreamKernel> {
    match kernels::FMA_STREAM_BY_RADIUS.get(w / 2) {
        Some(Some(kernel)) if w % 2 == 1 => Ok(*kernel),
        _ => Err(Error::OutOfRange {
            what: "width",
            value: w as u64,
            min: 3,
            max: MAX_WIDTH as u64,
        }),
    }
}

/// An input on the device and its output (poisoned with NaN), allocated once, so that a launch
/// allocates nothing.
#[derive(Debug)]
pub struct FmaStream {
    input: CudaSlice<f32>,
    output: CudaSlice<f32>,
}

impl FmaStream {
    /// Uploads `input` and allocates the output (NaN).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if `input` is empty; [`Error::OutOfMemory`] / [`Error::Driver`]
    /// from the allocations.
    pub fn new(gpu: &Gpu, input: &[f32]) -> Result<Self> {
        if input.is_empty() {
            return Err(Error::OutOfRange {
                what: "elements",
                value: 0,
                min: 1,
                max: usize::MAX as u64,
            });
        }
        Ok(Self {
            input: gpu.upload(input)?,
            output: gpu.poisoned(input.len(), f32::NAN)?,
        })
    }

    /// Elements of the input (and the output).
    pub fn len(&self) -> usize {
        self.input.len()
    }

    /// Always `false`: [`FmaStream::new`] refuses an empty input.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// Bytes one launch moves: one read and one write of every element.
    pub fn bytes(&self) -> u64 {
        8 * self.len() as u64
    }

    /// Multiply-adds one launch of width `w` does: `2w` per element.
    pub fn fmas(&self, w: usize) -> u64 {
        2 * w as u64 * self.len() as u64
    }

    /// The launch configuration of every launch: blocks of 256 threads, one thread per 4
    /// elements.
    ///
    /// # Errors
    /// [`Error::GridTooLarge`] if the grid would pass the driver's limit.
    pub fn launch_config(&self) -> Result<LaunchConfig> {
        let threads = self
            .len()
            .div_ceil(k::FMA_STREAM_ELEMENTS_PER_THREAD)
            .max(1);
        let blocks = launch::blocks_to_cover(
            kernels::fma_stream_w3.name(),
            threads,
            u64::from(k::FMA_STREAM_BLOCK),
        )?;
        Ok(launch::linear(blocks, k::FMA_STREAM_BLOCK, 0))
    }

    /// Queues one launch of width `w`; no host synchronisation.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a width without a kernel; [`Error::GridTooLarge`] from
    /// [`FmaStream::launch_config`]; [`Error::Driver`] if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu, w: usize) -> Result<LaunchConfig> {
        let kernel = kernel(w)?;
        let cfg = self.launch_config()?;
        gpu.check_buffer("input", &self.input)?;
        gpu.check_buffer("output", &self.output)?;
        let n = self.len();
        // SAFETY: `fma_stream_w*(input, output, n)`: both buffers hold `n` floats, are separate
        // allocations (16-byte aligned, no overlap), the output borrowed mutably; blocks of
        // 256 threads covering `ceil(n / 4)` threads (`launch_config`).
        unsafe { gpu.launch_unchecked(kernel, cfg, (&self.input, &mut self.output, n)) }?;
        Ok(cfg)
    }

    /// The output of the last launch; waits for the stream.
    ///
    /// # Errors
    /// [`Error::Driver`] if the kernel faulted or the copy fails.
    pub fn output(&self, gpu: &Gpu) -> Result<Vec<f32>> {
        gpu.download(&self.output, kernels::fma_stream_w3.name())
    }

    /// Checks the last launch (of width `w`, over `input`, the slice given to
    /// [`FmaStream::new`]) against [`reference()`], bit for bit (both round every FMA once, in
    /// the same order), at every `stride`-th element and the last 4; waits for the stream.
    /// `stride` 1 checks every element; 0 is taken as 1. The inner `Err` names the first
    /// element that differs and counts them.
    ///
    /// # Errors
    /// As [`FmaStream::output`].
    pub fn check(
        &self,
        gpu: &Gpu,
        w: usize,
        input: &[f32],
        stride: usize,
    ) -> Result<std::result::Result<(), Mismatch>> {
        let got = self.output(gpu)?;
        if got.len() != input.len() {
            return Ok(crate::verify::same_length(got.len(), input.len()));
        }
        let tail = got.len().saturating_sub(4);
        let mut wrong = got
            .iter()
            .zip(input)
            .enumerate()
            .filter(|&(i, _)| i % stride.max(1) == 0 || i >= tail)
            .map(|(i, (&g, &x))| (i, g, reference(x, w)))
            .filter(|&(_, g, e)| g.to_bits() != e.to_bits());
        let Some((index, g, e)) = wrong.next() else {
            return Ok(Ok(()));
        };
        Ok(Err(Mismatch {
            index,
            got: format!("{g:?}"),
            expected: format!("{e:?}"),
            count: 1 + wrong.count(),
        }))
    }
}

/// CPU reference of one element: `2w` steps `acc <- x * c[t] + acc` from 0 (`f32::mul_add`,
/// one rounding as `fma.rn.f32`), `c` = [`k::FMA_STREAM_COEFFICIENTS`].
pub fn reference(x: f32, w: usize) -> f32 {
    k::FMA_STREAM_COEFFICIENTS
        .iter()
        .take(2 * w)
        .fold(0.0f32, |acc, &c| x.mul_add(c, acc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_the_chain_of_fmas() {
        let x = 0.75f32;
        let mut acc = 0.0f32;
        for t in 0..6 {
            acc = x.mul_add(1.0 / (t as f32 + 2.0), acc);
        }
        assert_eq!(reference(x, 3).to_bits(), acc.to_bits());
        assert!(reference(1.0, 31) > reference(1.0, 3));
    }

    #[test]
    fn widths_without_a_kernel_are_refused() {
        for w in [0, 1, 2, 4, 30, 33, 1 << 40] {
            assert!(matches!(kernel(w), Err(Error::OutOfRange { .. })), "{w}");
        }
        for w in (3..=MAX_WIDTH).step_by(2) {
            assert_eq!(kernel(w).unwrap().name(), KERNELS[w / 2 - 1]);
        }
    }
}
