//! Sum of squares of `i32` (seed "【转】CUDA优化小记录", seven versions): launchers for the
//! kernels in `gpu::reduce::square_sum`, the host-side addition of their partial sums (as the seed
//! does), and the one-launch version ([`SquareSumI32`], what
//! [`reduce::square_sum`](super::square_sum()) runs). The seed's version numbers v1..v7 are
//! labels ([`Variant::seed_version`]); the names say what each changes.

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig};
use gpu::reduce::square_sum::{self as k, kernels};

use super::sum::{ReduceKind, ReduceSum};
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch;

/// The seed's seven versions and the one-launch version, in order, each named for what it
/// changes (kernel `square_sum_<name>`); [`Variant::seed_version`] gives the seed's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// 1: one thread.
    SingleThread,
    /// 2: one block, a contiguous chunk per thread.
    OneBlockChunked,
    /// 3: one block, strided (coalesced) access.
    OneBlockStrided,
    /// 4: 32 blocks x 256 threads, one partial per thread.
    GridStride,
    /// 5: shared memory, thread 0 adds its block.
    SharedSerial,
    /// 6: tree reduction in shared memory.
    SharedTree,
    /// 7: unrolled tree, last warp with `__syncwarp` only.
    SharedTreeUnrolled,
    /// Beyond the seed: one launch, `int4` loads, warp shuffles, last block adds the partials.
    Reduce,
}

/// [`ReduceKind`] of the one-launch square sum (same arguments as `reduce_sum_i32`).
pub struct SquareSumI32;

super::sum::sum_kind! {
    SquareSumI32 => i32, i32, kernels::square_sum_reduce;
}

impl Variant {
    /// Every variant, in order.
    pub const ALL: [Variant; 8] = [
        Variant::SingleThread,
        Variant::OneBlockChunked,
        Variant::OneBlockStrided,
        Variant::GridStride,
        Variant::SharedSerial,
        Variant::SharedTree,
        Variant::SharedTreeUnrolled,
        Variant::Reduce,
    ];

    /// The seed's version number, 1 to 7 (its label in the docs and the demo's table); `None`
    /// for the one-launch version, which is beyond the seed.
    pub fn seed_version(self) -> Option<u32> {
        match self {
            Variant::SingleThread => Some(1),
            Variant::OneBlockChunked => Some(2),
            Variant::OneBlockStrided => Some(3),
            Variant::GridStride => Some(4),
            Variant::SharedSerial => Some(5),
            Variant::SharedTree => Some(6),
            Variant::SharedTreeUnrolled => Some(7),
            Variant::Reduce => None,
        }
    }

    /// The seed version's kernel, `(input: *const i32, n: usize, out: *mut i32)`; `None` for
    /// the one-launch version, whose kernel is [`SquareSumI32`]'s (it takes a workspace too).
    pub fn seed_kernel(self) -> Option<Kernel<(*const i32, usize, *mut i32)>> {
        Some(match self {
            Variant::SingleThread => kernels::square_sum_single_thread,
            Variant::OneBlockChunked => kernels::square_sum_one_block_chunked,
            Variant::OneBlockStrided => kernels::square_sum_one_block_strided,
            Variant::GridStride => kernels::square_sum_grid_stride,
            Variant::SharedSerial => kernels::square_sum_shared_serial,
            Variant::SharedTree => kernels::square_sum_shared_tree,
            Variant::SharedTreeUnrolled => kernels::square_sum_shared_tree_unrolled,
            Variant::Reduce => return None,
        })
    }

    /// The kernel's `.entry` name in the PTX.
    pub fn kernel_name(self) -> &'static str {
        match self.seed_kernel() {
            Some(kernel) => kernel.name(),
            None => SquareSumI32::KERNEL_NAME,
        }
    }

    /// What the version changes, in a few words (the demo's table).
    pub fn idea(self) -> &'static str {
        match self {
            Variant::SingleThread => "one thread",
            Variant::OneBlockChunked => "1 block, contiguous chunk per thread",
            Variant::OneBlockStrided => "1 block, strided: coalesced",
            Variant::GridStride => "32 blocks, partial per thread",
            Variant::SharedSerial => "shared memory, thread 0 adds",
            Variant::SharedTree => "tree in shared memory",
            Variant::SharedTreeUnrolled => "unrolled tree, syncwarp last warp",
            Variant::Reduce => "one launch: int4, shuffles, last block",
        }
    }

    /// The seed's launch (grid, block) for versions 1 to 7; `None` for the one-launch version
    /// (sized by [`ReduceSum::launch_config`]).
    pub fn seed_launch(self) -> Option<(u32, u32)> {
        match self {
            Variant::SingleThread => Some((1, 1)),
            Variant::OneBlockChunked | Variant::OneBlockStrided => Some((1, k::THREAD_NUM)),
            Variant::Reduce => None,
            _ => Some((k::BLOCK_NUM, k::THREAD_NUM)),
        }
    }

    /// Partial sums the version leaves for the host (1 for the one-launch version: the total).
    pub fn partials(self) -> usize {
        match self {
            Variant::SingleThread | Variant::Reduce => 1,
            Variant::OneBlockChunked | Variant::OneBlockStrided => k::THREAD_NUM as usize,
            Variant::GridStride => (k::BLOCK_NUM * k::THREAD_NUM) as usize,
            _ => k::BLOCK_NUM as usize,
        }
    }
}

/// Device state for one version: the partial sums it writes (or, for
/// [`Variant::Reduce`], the one-launch reducer's scratch space).
pub struct SquareSum {
    variant: Variant,
    partials: CudaSlice<i32>,
    reducer: Option<ReduceSum<SquareSumI32>>,
}

impl SquareSum {
    /// Allocates the partials (poisoned with `i32::MIN`) or the reducer for `variant`.
    ///
    /// # Errors
    /// [`Error::Driver`] if an allocation or device query fails.
    pub fn new(gpu: &Gpu, variant: Variant) -> Result<Self> {
        Ok(Self {
            variant,
            partials: gpu.poisoned(variant.partials(), i32::MIN)?,
            reducer: match variant {
                Variant::Reduce => Some(ReduceSum::new(gpu)?),
                _ => None,
            },
        })
    }

    /// Queues the version over `input` with its seed launch and returns the configuration.
    ///
    /// # Errors
    /// [`Error::Driver`] if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu, input: &impl DevicePtr<i32>) -> Result<LaunchConfig> {
        if let Some(reducer) = self.reducer.as_mut() {
            return reducer.launch(gpu, input);
        }
        gpu.check_buffer("input", input)?;
        let (kernel, (grid, block)) = self
            .variant
            .seed_kernel()
            .zip(self.variant.seed_launch())
            .ok_or(Error::Unsupported {
                what: self.variant.kernel_name(),
                requirement: "a seed kernel with a fixed launch",
            })?;
        let cfg = launch::linear(grid, block, 0);
        let n = input.len();
        // SAFETY: the kernels take `(input: *const i32, n: usize, out: *mut i32)`; `input`
        // holds `n` elements; `out` holds `partials()` elements, which is what the seed launch
        // writes (1 for v1, blockDim for v2/v3, grid*block for v4, grid for v5-v7, whose
        // blocks are the THREAD_NUM threads their shared arrays are sized for).
        unsafe { gpu.launch_unchecked(kernel, cfg, (input, n, &mut self.partials)) }?;
        Ok(cfg)
    }

    /// Downloads the partials and adds them on the host (the one-launch version returns its
    /// total).
    ///
    /// # Errors
    /// [`Error::Driver`] if the copy fails or the kernel faulted.
    pub fn sum(&self, gpu: &Gpu) -> Result<i32> {
        if let Some(reducer) = &self.reducer {
            return reducer.result(gpu);
        }
        let partials = gpu.download(&self.partials, self.variant.kernel_name())?;
        Ok(super::reference::sum_i32(&partials))
    }
}

/// Uploads `input`, runs `variant` and returns the sum of squares.
///
/// # Errors
/// As [`SquareSum::new`] and [`SquareSum::launch`].
pub fn run(gpu: &Gpu, variant: Variant, input: &[i32]) -> Result<i32> {
    let d_input = gpu.upload(input)?;
    let mut s = SquareSum::new(gpu, variant)?;
    s.launch(gpu, &d_input)?;
    s.sum(gpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_squares_and_wraps() {
        assert_eq!(super::super::reference::square_sum_i32(&[1, -2, 3]), 14);
        assert_eq!(super::super::reference::square_sum_i32(&[]), 0);
        assert_eq!(super::super::reference::square_sum_i32(&[1 << 16]), 0);
        assert_eq!(
            super::super::reference::square_sum_i32(&[46341]),
            46341i32.wrapping_mul(46341)
        );
    }

    #[test]
    fn seed_launches() {
        assert_eq!(Variant::SingleThread.seed_launch(), Some((1, 1)));
        assert_eq!(Variant::GridStride.partials(), 8192);
        assert_eq!(Variant::SharedTreeUnrolled.partials(), 32);
        assert_eq!(Variant::ALL.len(), 8);
    }

    #[test]
    #[cfg(feature = "clap")]
    fn names_and_seed_versions() {
        for (i, v) in Variant::ALL.into_iter().enumerate() {
            let value = clap::ValueEnum::to_possible_value(&v).unwrap();
            let name = value.get_name().replace('-', "_");
            assert_eq!(format!("square_sum_{name}"), v.kernel_name());
            let expected = (i < 7).then_some(i as u32 + 1);
            assert_eq!(v.seed_version(), expected, "{v:?}");
        }
    }
}
