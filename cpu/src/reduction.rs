//! Parallel reduction (sum): launchers for the nine seed kernels of "cuda 并行归约"
//! (*Professional CUDA C Programming*, chapter 3) and for [`ReduceSum`], the one-launch
//! reduction a user should call, with their CPU references and error bounds.
//!
//! The seed kernels reduce a zero-padded working copy of the input in place and leave one
//! partial sum per block; [`SeedWork`] owns that copy and the partials, and the host adds the
//! partials as the book does. [`ReduceSum`] reads the input once and writes the total.

use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits};
use gpu::reduce as k;

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
use crate::launch;
use crate::verify::Mismatch;

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

    /// The kernel's `.entry` name at the seed's block size (512); see [`Variant::kernel_for`].
    pub fn kernel_name(self) -> &'static str {
        self.kernel_for(k::SEED_BLOCK)
            .expect("the seed's block size has a kernel for every variant")
    }

    /// The `.entry` name this variant launches for blocks of `block` threads, if it has one
    /// (the template kernel exists for 64, 128, 256, 512 and 1024 only).
    pub fn kernel_for(self, block: u32) -> Option<&'static str> {
        Some(match self {
            Variant::Neighbored => k::REDUCE_NEIGHBORED,
            Variant::NeighboredLess => k::REDUCE_NEIGHBORED_LESS,
            Variant::Interleaved => k::REDUCE_INTERLEAVED,
            Variant::Unroll2 => k::REDUCE_UNROLL2,
            Variant::Unroll4 => k::REDUCE_UNROLL4,
            Variant::Unroll8 => k::REDUCE_UNROLL8,
            Variant::UnrollWarps8 => k::REDUCE_UNROLL_WARPS8,
            Variant::CompleteUnrollWarps8 => k::REDUCE_COMPLETE_UNROLL_WARPS8,
            Variant::CompleteUnroll => {
                return k::REDUCE_COMPLETE_UNROLL
                    .iter()
                    .find(|(b, _)| *b == block)
                    .map(|(_, name)| *name);
            }
        })
    }

    /// Every `.entry` name of the seed kernels (the template once per block size).
    pub fn all_kernel_names() -> Vec<&'static str> {
        let mut names: Vec<_> = Self::ALL[..8].iter().map(|v| v.kernel_name()).collect();
        names.extend(k::REDUCE_COMPLETE_UNROLL.iter().map(|(_, name)| *name));
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

    /// The seed's row: its name for the kernel and the K80 time in seconds for 2^24 ints.
    pub fn seed(self) -> (&'static str, f64) {
        match self {
            Variant::Neighbored => ("相邻(分化)", 0.008459),
            Variant::NeighboredLess => ("相邻(无分化)", 0.007832),
            Variant::Interleaved => ("交错", 0.005033),
            Variant::Unroll2 => ("展开2块", 0.002877),
            Variant::Unroll4 => ("展开4块", 0.001452),
            Variant::Unroll8 => ("展开8块", 0.000892),
            Variant::UnrollWarps8 => ("展开8块+最后的线程束", 0.000813),
            Variant::CompleteUnrollWarps8 => ("展开8块+循环+最后的线程束", 0.000789),
            Variant::CompleteUnroll => ("模板化内核", 0.000777),
        }
    }
}

/// The launch of a seed kernel over `n` elements: blocks of `block` threads, `grid` blocks of
/// `block * unroll` elements each, and the working array padded with zeros to `padded_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedLaunch {
    /// The kernel launched.
    pub kernel: &'static str,
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
    /// [`Error::InvalidLaunch`] if `block` is not a power of two between the variant's
    /// [`min_block`](Variant::min_block) and 1024, if the template kernel has no instance for
    /// it, or if `n` needs more blocks than a grid holds.
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
            .kernel_for(block)
            .ok_or(Error::InvalidBlock {
                kernel,
                block,
                requirement: "the template kernel is instantiated for 64, 128, 256, 512 and 1024 threads",
            })?;
        let per_block = block as u64 * variant.unroll() as u64;
        let grid = launch::blocks_to_cover(kernel, n, per_block)?;
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
    pub fn new(gpu: &Gpu, variant: Variant, input: &CudaSlice<i32>, block: u32) -> Result<Self> {
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
    pub fn restore(&mut self, gpu: &Gpu, input: &CudaSlice<i32>) -> Result<()> {
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
        let f = gpu.function(kernel)?;
        let mut args = gpu.stream().launch_builder(&f);
        args.arg(&mut self.data).arg(&mut self.partials);
        // SAFETY: the kernels take `(data: *mut i32, partials: *mut i32)`; `data` holds
        // `grid * block * unroll` elements and `partials` `grid` (sized by `SeedLaunch::new`
        // for this variant and block, which also validated the block for the kernel).
        unsafe { args.launch(cfg) }.during(format!("launching {kernel}"))?;
        debug_assert_eq!(self.variant.kernel_for(self.launch.block), Some(kernel));
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
        let partials = gpu.download(&self.partials, self.launch.kernel)?;
        Ok(reference(&partials))
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

/// CPU reference for the `i32` reductions: the sum modulo 2^32 (the GPU's integer add wraps,
/// and wrapping addition is associative, so it is exact for every summation order).
pub fn reference(input: &[i32]) -> i32 {
    input.iter().fold(0i32, |a, &x| a.wrapping_add(x))
}

/// Bytes a reduction of `n` 4-byte elements must read: each element once.
pub fn bytes_read(n: usize) -> u64 {
    4 * n as u64
}

/// One kind of [`ReduceSum`]: element type, accumulator type and kernel.
pub trait SumKind {
    /// Element type of the input.
    type Input: DeviceRepr + Copy;
    /// Accumulator and result type.
    type Acc: DeviceRepr + ValidAsZeroBits + Default + Clone + Copy;
    /// The kernel's `.entry` name.
    const KERNEL: &'static str;
}

/// `i32` summed modulo 2^32.
pub struct SumI32;
/// `f32` summed in `f32`.
pub struct SumF32;
/// `f32` summed in `f64`.
pub struct SumF32F64;

impl SumKind for SumI32 {
    type Input = i32;
    type Acc = i32;
    const KERNEL: &'static str = k::REDUCE_SUM_I32;
}
impl SumKind for SumF32 {
    type Input = f32;
    type Acc = f32;
    const KERNEL: &'static str = k::REDUCE_SUM_F32;
}
impl SumKind for SumF32F64 {
    type Input = f32;
    type Acc = f64;
    const KERNEL: &'static str = k::REDUCE_SUM_F32_F64;
}

/// The `reduce_sum` kernels, for listings and tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum SumVariant {
    /// `i32` input, sum modulo 2^32.
    I32,
    /// `f32` input, `f32` accumulation.
    F32,
    /// `f32` input, `f64` accumulation.
    F32F64,
}

impl SumVariant {
    /// Every `reduce_sum` kernel.
    pub const ALL: [SumVariant; 3] = [SumVariant::I32, SumVariant::F32, SumVariant::F32F64];

    /// The kernel's `.entry` name.
    pub fn kernel_name(self) -> &'static str {
        match self {
            SumVariant::I32 => SumI32::KERNEL,
            SumVariant::F32 => SumF32::KERNEL,
            SumVariant::F32F64 => SumF32F64::KERNEL,
        }
    }
}

/// The one-launch sum (`gpu::reduce::sum::reduce_sum_*`) with its scratch space: one
/// partial per block, the last-block counter and the result, allocated once and reused, so a
/// launch costs no allocation.
///
/// Launch: blocks of [`REDUCE_SUM_BLOCK`](k::REDUCE_SUM_BLOCK) (256) threads; the grid is one
/// wave of resident blocks (SMs x the occupancy calculator's blocks per SM: 1056 on an H100
/// for the 32-register kernels), fewer when `n` is small (each thread gets at least
/// `4 * REDUCE_SUM_UNROLL` elements), at least one.
pub struct ReduceSum<K: SumKind> {
    partials: CudaSlice<K::Acc>,
    counter: CudaSlice<u32>,
    result: CudaSlice<K::Acc>,
    max_grid: u32,
}

impl<K: SumKind> ReduceSum<K> {
    /// Allocates the scratch space for `gpu`.
    ///
    /// # Errors
    /// [`Error::Driver`] if a device query or allocation fails.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let max_grid =
            gpu.sm_count()? * gpu.resident_blocks_per_sm(K::KERNEL, k::REDUCE_SUM_BLOCK, 0)?;
        Ok(Self {
            partials: gpu.zeros(max_grid as usize)?,
            counter: gpu.zeros(1)?,
            result: gpu.zeros(1)?,
            max_grid,
        })
    }

    /// The launch for `n` elements.
    pub fn launch_config(&self, n: usize) -> LaunchConfig {
        let per_block = k::REDUCE_SUM_BLOCK as usize * 4 * k::REDUCE_SUM_UNROLL;
        let grid = n.div_ceil(per_block).clamp(1, self.max_grid as usize) as u32;
        launch::linear(grid, k::REDUCE_SUM_BLOCK, 0)
    }

    /// Queues the sum of `input` into the result ([`ReduceSum::result`]), one launch.
    ///
    /// # Errors
    /// [`Error::Driver`] if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu, input: &CudaSlice<K::Input>) -> Result<LaunchConfig> {
        let cfg = self.launch_config(input.len());
        let n = input.len();
        let f = gpu.function(K::KERNEL)?;
        let mut args = gpu.stream().launch_builder(&f);
        args.arg(input)
            .arg(&n)
            .arg(&mut self.partials)
            .arg(&mut self.counter)
            .arg(&mut self.result);
        // SAFETY: the kernels take `(input: *const In, n: usize, partials: *mut Acc,
        // counter: *mut u32, result: *mut Acc)`; `input` holds `n` elements and is a whole
        // allocation (256-byte aligned, as the 16-byte loads need) that the kernel only reads;
        // `partials` holds `max_grid >= grid` accumulators; `counter` was zeroed at allocation
        // and each launch leaves it zero; launches on one stream do not overlap.
        unsafe { args.launch(cfg) }.during(format!("launching {}", K::KERNEL))?;
        Ok(cfg)
    }

    /// Downloads the result of the last launch.
    ///
    /// # Errors
    /// [`Error::Driver`] if the copy fails or the kernel faulted.
    pub fn result(&self, gpu: &Gpu) -> Result<K::Acc> {
        Ok(gpu.download(&self.result, K::KERNEL)?[0])
    }
}

/// Uploads `input` and sums it with one `reduce_sum` launch.
///
/// # Errors
/// [`Error::Driver`] if an allocation, the copy or the launch fails.
pub fn reduce_sum<K: SumKind>(gpu: &Gpu, input: &[K::Input]) -> Result<K::Acc> {
    let d_input = gpu.upload(input)?;
    let mut reducer = ReduceSum::<K>::new(gpu)?;
    reducer.launch(gpu, &d_input)?;
    reducer.result(gpu)
}

/// The sum of `x` in `f64` and the sum of `|x|` (the scale of the rounding error bound).
pub fn reference_f32(input: &[f32]) -> (f64, f64) {
    input.iter().fold((0.0, 0.0), |(s, a), &x| {
        (s + x as f64, a + (x as f64).abs())
    })
}

/// Longest chain of dependent roundings in a `reduce_sum` launch of `cfg` over `n` elements:
/// each thread's sequential sum, the shuffle tree of a warp and of warp 0 (5 each), then in
/// the last block a strided pass over the `gridDim.x` partials and two trees again.
pub fn reduce_sum_depth(n: usize, cfg: &LaunchConfig) -> u64 {
    let threads = cfg.grid_dim.0 as u64 * cfg.block_dim.0 as u64;
    let per_thread = 4 * (n as u64 / 4).div_ceil(threads) + 1;
    per_thread + 10 + (cfg.grid_dim.0 as u64).div_ceil(cfg.block_dim.0 as u64) + 10
}

/// Bound on `|gpu - exact|` for a sum whose longest rounding chain is `depth` additions with
/// unit roundoff `eps / 2`: `depth * eps * sum|x|` (the classic `gamma_depth` bound, first
/// order), plus the same for an `f64` reference of `n` sequential additions.
pub fn sum_error_bound(n: usize, depth: u64, eps: f64, sum_abs: f64) -> f64 {
    (depth as f64 * eps + n as f64 * f64::EPSILON) * sum_abs
}

/// Compares a float sum with its `f64` reference within `bound`; NaN must meet NaN and an
/// infinite reference must be met exactly.
///
/// # Errors
/// A [`Mismatch`] at index 0 describing the difference.
pub fn check_sum(got: f64, expected: f64, bound: f64) -> Result<(), Mismatch> {
    let ok = if expected.is_nan() {
        got.is_nan()
    } else if expected.is_infinite() {
        got == expected
    } else {
        (got - expected).abs() <= bound
    };
    if ok {
        Ok(())
    } else {
        Err(Mismatch {
            index: 0,
            got: format!("{got:e}"),
            expected: format!("{expected:e} (bound {bound:e})"),
            count: 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_wraps() {
        assert_eq!(reference(&[i32::MAX, 1]), i32::MIN);
        assert_eq!(reference(&[]), 0);
        assert_eq!(reference(&[3, -5, 7]), 5);
    }

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
            "reduce_complete_unroll_256"
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
    fn seed_table_speeds_up() {
        let times: Vec<f64> = Variant::ALL.iter().map(|v| v.seed().1).collect();
        assert!(times.windows(2).all(|w| w[1] < w[0]));
        assert_eq!(Variant::all_kernel_names().len(), 13);
    }

    #[test]
    fn float_references_and_bounds() {
        let (s, a) = reference_f32(&[1.0, -2.0, 0.5]);
        assert_eq!((s, a), (-0.5, 3.5));
        assert!(check_sum(1.0, 1.0 + 1e-9, 1e-8).is_ok());
        assert!(check_sum(1.0, 1.1, 1e-8).is_err());
        assert!(check_sum(f64::NAN, f64::NAN, 0.0).is_ok());
        assert!(check_sum(1.0, f64::NAN, 1e9).is_err());
        assert!(check_sum(f64::INFINITY, f64::INFINITY, 0.0).is_ok());
        let cfg = launch::linear(1056, 256, 0);
        // 2^26 elements over 270336 threads: 4 * ceil(2^24 / 270336) + 1 = 253 per thread.
        assert_eq!(reduce_sum_depth(1 << 26, &cfg), 253 + 10 + 5 + 10);
    }
}
