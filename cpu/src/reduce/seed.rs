//! The seed's nine reductions (*Professional CUDA C Programming*, chapter 3, `reduceInteger.cu`,
//! as the seed "cuda 并行归约" runs them): each block reduces its slice of a zero-padded working
//! copy of the input in place and leaves one partial sum; the host adds the partials, as the
//! book does. [`SeedWork`] owns the copy and the partials.

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig};
use gpu::reduce::{self as k, seed as kernels};

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
use crate::kernel::Kernel;
use crate::launch;

use super::reference::sum_i32;

/// The parameters every seed kernel takes: `(data: *mut i32, partials: *mut i32)`.
pub type SeedKernel = Kernel<(*mut i32, *mut i32)>;

/// The seed's nine kernels, in the order of its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// 1: neighbored pairs, `tid % (2s) == 0` works (divergent warps).
    Neighbored,
    /// 2: neighbored pairs, the first `block / 2s` threads work (less divergence).
    NeighboredLess,
    /// 3: interleaved pairs, stride halving from `block / 2`.
    Interleaved,
    /// 4: two data blocks per thread block, then interleaved.
    Unroll2,
    /// 5: four data blocks per thread block.
    Unroll4,
    /// 6: eight data blocks per thread block.
    Unroll8,
    /// 7: eight data blocks, last warp unrolled (with `__syncwarp`).
    UnrollWarps8,
    /// 8: eight data blocks, tree completely unrolled, last warp unrolled.
    CompleteUnrollWarps8,
    /// 9: as 8 with the block size a compile-time constant (one kernel per block size).
    CompleteUnroll,
}

impl Variant {
    /// Every variant, in the seed's order.
    pub const ALL: [Variant; 9] = [
        Variant::Neighbored,
        Variant::NeighboredLess,
        Variant::Interleaved,
        Variant::Unroll2,
        Variant::Unroll4,
        Variant::Unroll8,
        Variant::UnrollWarps8,
        Variant::CompleteUnrollWarps8,
        Variant::CompleteUnroll,
    ];

    /// The kernel's `.entry` name at the seed's block size (512); see [`Variant::kernel`].
    pub fn kernel_name(self) -> &'static str {
        self.kernel(k::SEED_BLOCK)
            .expect("the seed's block size has a kernel for every variant")
            .name()
    }

    /// The kernel this variant launches for blocks of `block` threads, if it has one (the
    /// template kernel exists for 64, 128, 256, 512 and 1024 only).
    pub fn kernel(self, block: u32) -> Option<SeedKernel> {
        Some(match self {
            Variant::Neighbored => kernels::reduce_neighbored,
            Variant::NeighboredLess => kernels::reduce_neighbored_less,
            Variant::Interleaved => kernels::reduce_interleaved,
            Variant::Unroll2 => kernels::reduce_unroll2,
            Variant::Unroll4 => kernels::reduce_unroll4,
            Variant::Unroll8 => kernels::reduce_unroll8,
            Variant::UnrollWarps8 => kernels::reduce_unroll_warps8,
            Variant::CompleteUnrollWarps8 => kernels::reduce_complete_unroll_warps8,
            Variant::CompleteUnroll => {
                return k::REDUCE_COMPLETE_UNROLL
                    .iter()
                    .find(|(b, _)| *b == block)
                    .map(|&(_, kernel)| kernel);
            }
        })
    }

    /// The `.entry` name of [`Variant::kernel`] for blocks of `block` threads, if it has one.
    pub fn kernel_for(self, block: u32) -> Option<&'static str> {
        self.kernel(block).map(|kernel| kernel.name())
    }

    /// Every `.entry` name of the seed kernels (the template once per block size).
    pub fn all_kernel_names() -> Vec<&'static str> {
        let mut names: Vec<_> = Self::ALL[..8].iter().map(|v| v.kernel_name()).collect();
        names.extend(
            k::REDUCE_COMPLETE_UNROLL
                .iter()
                .map(|(_, kernel)| kernel.name()),
        );
        names
    }

    /// Data blocks each thread block reduces (the unrolling factor).
    pub fn unroll(self) -> usize {
        match self {
            Variant::Neighbored | Variant::NeighboredLess | Variant::Interleaved => 1,
            Variant::Unroll2 => 2,
            Variant::Unroll4 => 4,
            _ => 8,
        }
    }

    /// Smallest block size the kernel accepts (the unrolled last warp reads 64 words).
    pub fn min_block(self) -> u32 {
        match self {
            Variant::UnrollWarps8 | Variant::CompleteUnrollWarps8 | Variant::CompleteUnroll => 64,
            _ => 1,
        }
    }
}

/// The launch of a seed kernel over `n` elements: blocks of `block` threads, `grid` blocks of
/// `block * unroll` elements each, and the working array padded with zeros to `padded_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedLaunch {
    /// The kernel launched.
    pub kernel: SeedKernel,
    /// Blocks (`ceil(n / (block * unroll))`; 0 for an empty input: nothing is launched).
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Elements of the working array: `grid * block * unroll >= n`.
    pub padded_len: usize,
}

impl SeedLaunch {
    /// Validates `block` for `variant` and sizes the grid for `n` elements.
    ///
    /// # Errors
    /// [`Error::InvalidBlock`] if `block` is not a power of two between the variant's
    /// [`min_block`](Variant::min_block) and 1024 or if the template kernel has no instance for
    /// it; [`Error::GridTooLarge`] if `n` needs more blocks than a grid holds.
    pub fn new(variant: Variant, n: usize, block: u32) -> Result<Self> {
        let kernel = variant.kernel_name();
        if !block.is_power_of_two() || block < variant.min_block() || block > 1024 {
            return Err(Error::InvalidBlock {
                kernel,
                block,
                requirement: if variant.min_block() > 1 {
                    "the block size must be a power of two from 64 to 1024"
                } else {
                    "the block size must be a power of two from 1 to 1024"
                },
            });
        }
        let kernel = variant
            .kernel(block)
            .ok_or(Error::InvalidBlock {
                kernel,
                block,
                requirement: "the template kernel is instantiated for 64, 128, 256, 512 and 1024 threads",
            })?;
        let per_block = block as u64 * variant.unroll() as u64;
        let grid = launch::blocks_to_cover(kernel.name(), n, per_block)?;
        Ok(Self {
            kernel,
            grid,
            block,
            padded_len: (grid as u64 * per_block) as usize,
        })
    }

    /// The launch configuration.
    pub fn config(&self) -> LaunchConfig {
        launch::linear(self.grid, self.block, 0)
    }
}

/// A seed kernel's working state on the device: the zero-padded copy of the input it reduces
/// in place, and one partial sum per block.
pub struct SeedWork {
    variant: Variant,
    launch: SeedLaunch,
    n: usize,
    data: CudaSlice<i32>,
    partials: CudaSlice<i32>,
}

impl SeedWork {
    /// Allocates the working array and partials for `variant` at `block` threads and fills the
    /// working array from `input` ([`SeedWork::restore`]).
    ///
    /// # Errors
    /// As [`SeedLaunch::new`]; [`Error::Driver`] if allocation or the copy fails.
    pub fn new(
        gpu: &Gpu,
        variant: Variant,
        input: &impl DevicePtr<i32>,
        block: u32,
    ) -> Result<Self> {
        gpu.check_buffer("input", input)?;
        let launch = SeedLaunch::new(variant, input.len(), block)?;
        let mut work = Self {
            variant,
            launch,
            n: input.len(),
            data: gpu.zeros(launch.padded_len.max(1))?,
            partials: gpu.poisoned(launch.grid.max(1) as usize, i32::MIN)?,
        };
        work.restore(gpu, input)?;
        Ok(work)
    }

    /// The launch this work was sized for.
    pub fn launch_info(&self) -> SeedLaunch {
        self.launch
    }

    /// Queues a copy of `input` into the working array and zeros in its padding (the kernels
    /// destroy the working array, so each run starts with this).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `input` is not the length this work was made for;
    /// [`Error::Driver`] if the copy fails.
    pub fn restore(&mut self, gpu: &Gpu, input: &impl DevicePtr<i32>) -> Result<()> {
        if input.len() != self.n {
            return Err(Error::LengthMismatch {
                what: "input",
                expected: self.n,
                actual: input.len(),
            });
        }
        if self.n == 0 {
            return Ok(());
        }
        let stream = gpu.stream();
        let mut head = self.data.slice_mut(..self.n);
        stream
            .memcpy_dtod(input, &mut head)
            .during("copying the reduction input")?;
        if self.launch.padded_len > self.n {
            let mut tail = self.data.slice_mut(self.n..self.launch.padded_len);
            stream
                .memset_zeros(&mut tail)
                .during("zeroing the reduction padding")?;
        }
        Ok(())
    }

    /// Queues the kernel over the working array (after a [`SeedWork::restore`]).
    ///
    /// # Errors
    /// [`Error::Driver`] if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu) -> Result<LaunchConfig> {
        let cfg = self.launch.config();
        if self.launch.grid == 0 {
            return Ok(cfg);
        }
        let kernel = self.launch.kernel;
        // SAFETY: the kernels take `(data: *mut i32, partials: *mut i32)`; `data` holds
        // `grid * block * unroll` elements and `partials` `grid` (sized by `SeedLaunch::new`
        // for this variant and block, which also validated the block for the kernel).
        unsafe { gpu.launch_unchecked(kernel, cfg, (&mut self.data, &mut self.partials)) }?;
        debug_assert_eq!(self.variant.kernel(self.launch.block), Some(kernel));
        Ok(cfg)
    }

    /// Downloads the partials and adds them on the host (as the seed does): the sum.
    ///
    /// # Errors
    /// [`Error::Driver`] if the copy fails or a queued kernel faulted.
    pub fn sum(&self, gpu: &Gpu) -> Result<i32> {
        if self.launch.grid == 0 {
            return Ok(0);
        }
        let partials = gpu.download(&self.partials, self.launch.kernel.name())?;
        Ok(sum_i32(&partials))
    }
}

/// Uploads `input`, reduces it with `variant` at `block` threads and returns the sum (partials
/// added on the host).
///
/// # Errors
/// As [`SeedWork::new`] and [`SeedWork::launch`].
pub fn run_seed(gpu: &Gpu, variant: Variant, input: &[i32], block: u32) -> Result<i32> {
    let d_input = gpu.upload(input)?;
    let mut work = SeedWork::new(gpu, variant, &d_input, block)?;
    work.launch(gpu)?;
    work.sum(gpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_launch_pads_the_tail() {
        let l = SeedLaunch::new(Variant::Unroll8, 1 << 24, 512).unwrap();
        assert_eq!((l.grid, l.padded_len), (4096, 1 << 24));
        let l = SeedLaunch::new(Variant::Unroll4, 513, 64).unwrap();
        assert_eq!((l.grid, l.padded_len), (3, 768));
        let l = SeedLaunch::new(Variant::Neighbored, 0, 512).unwrap();
        assert_eq!((l.grid, l.padded_len), (0, 0));
        assert_eq!(
            SeedLaunch::new(Variant::CompleteUnroll, 10, 256)
                .unwrap()
                .kernel,
            kernels::reduce_complete_unroll_256
        );
    }

    #[test]
    fn seed_launch_refuses_bad_blocks() {
        for (v, b) in [
            (Variant::Neighbored, 0),
            (Variant::Neighbored, 384),
            (Variant::Interleaved, 2048),
            (Variant::UnrollWarps8, 32),
            (Variant::CompleteUnroll, 32),
        ] {
            assert!(
                matches!(SeedLaunch::new(v, 100, b), Err(Error::InvalidBlock { .. })),
                "{v:?} block {b}"
            );
        }
    }

    #[test]
    fn every_kernel_is_named() {
        assert_eq!(Variant::all_kernel_names().len(), 13);
    }
}
