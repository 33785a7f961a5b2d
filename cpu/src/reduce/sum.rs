//! The one-launch sum, [`ReduceSum`]: the version to call (beyond the seed), in three kinds
//! ([`SumI32`], [`SumF32`], [`SumF32F64`]) and, through the same kernel shape, the square sum.

use cudarc::driver::{
    CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, ValidAsZeroBits,
};
use gpu::reduce::{self as k, sum as kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch;

/// A one-launch sum kernel over `In` accumulating in `Acc`: `(input: *const In, n: usize,
/// partials: *mut Acc, counter: *mut u32, result: *mut Acc)`.
pub type SumKernel<In, Acc> = Kernel<(*const In, usize, *mut Acc, *mut u32, *mut Acc)>;

/// One kind of [`ReduceSum`]: element type, accumulator type and kernel.
///
/// Implemented by [`SumI32`], [`SumF32`], [`SumF32F64`] and
/// [`SquareSumI32`](super::square_sum::SquareSumI32).
pub trait SumKind: 'static {
    /// Element type of the input.
    type Input: DeviceRepr + Copy;
    /// Accumulator and result type.
    type Acc: DeviceRepr + ValidAsZeroBits + Default + Clone + Copy;
    /// The kernel.
    const KERNEL: SumKernel<Self::Input, Self::Acc>;
    /// The kernel's `.entry` name.
    const KERNEL_NAME: &'static str = Self::KERNEL.name();
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
    const KERNEL: SumKernel<i32, i32> = kernels::reduce_sum_i32;
}
impl SumKind for SumF32 {
    type Input = f32;
    type Acc = f32;
    const KERNEL: SumKernel<f32, f32> = kernels::reduce_sum_f32;
}
impl SumKind for SumF32F64 {
    type Input = f32;
    type Acc = f64;
    const KERNEL: SumKernel<f32, f64> = kernels::reduce_sum_f32_f64;
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
            SumVariant::I32 => SumI32::KERNEL_NAME,
            SumVariant::F32 => SumF32::KERNEL_NAME,
            SumVariant::F32F64 => SumF32F64::KERNEL_NAME,
        }
    }
}

/// The one-launch sum (`gpu::reduce::sum::reduce_sum_*`, or `square_sum_reduce` for
/// [`SquareSumI32`](super::square_sum::SquareSumI32)) with its scratch space: one partial per
/// block, the last-block counter and a result scalar, allocated once and reused, so a launch
/// costs no allocation. [`sum`](fn@super::sum) and [`sum_into`](super::sum_into) use one that
/// the [`Gpu`] handle keeps for its stream (made on the first call); keep one of your own to
/// sum without taking the handle's lock.
///
/// Launch: blocks of [`REDUCE_SUM_BLOCK`](k::REDUCE_SUM_BLOCK) (512) threads (256 for inputs
/// with fewer tiles than SMs, see [`ReduceSum::launch_config`]); the grid is one
/// wave of resident blocks, from this device's SM count and the occupancy calculator's blocks
/// per SM for the kernel (528 on an H100 or H200: 132 SMs x 4), fewer when `n` is small (one
/// block per tile of `4 * REDUCE_SUM_UNROLL` elements per thread), at least one. Each block
/// reads an even share of the tiles.
///
/// The input may be any view (any 4-byte boundary): the kernel adds the elements before the
/// first 16-byte boundary one by one. One workspace serves one launch at a time: cudarc's
/// stream synchronisation orders launches that share it, also across streams.
pub struct ReduceSum<K: SumKind> {
    partials: CudaSlice<K::Acc>,
    counter: CudaSlice<u32>,
    result: CudaSlice<K::Acc>,
    max_grid: u32,
    sms: u32,
}

impl<K: SumKind> ReduceSum<K> {
    /// Allocates the scratch space on `gpu`'s device: `SMs x blocks per SM` accumulators, a
    /// counter and a result.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; [`Error::Driver`] if a device query or allocation fails.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let max_grid = gpu.one_wave(K::KERNEL_NAME, k::REDUCE_SUM_BLOCK, 0)?;
        Ok(Self {
            partials: gpu.zeros(max_grid as usize)?,
            counter: gpu.zeros(1)?,
            result: gpu.zeros(1)?,
            max_grid,
            sms: gpu.sm_count()?,
        })
    }

    /// The launch for `n` elements.
    ///
    /// Blocks of [`REDUCE_SUM_BLOCK`](k::REDUCE_SUM_BLOCK) threads, or half as many when `n`
    /// has fewer tiles of that size than the device has SMs (up to 132 x 8192 elements on
    /// an H200), so that small sums still spread over every SM; one block per tile of
    /// `4 * REDUCE_SUM_UNROLL` elements per thread, at most the one-wave grid.
    pub fn launch_config(&self, n: usize) -> LaunchConfig {
        let per_block = |block: u32| block as usize * 4 * k::REDUCE_SUM_UNROLL;
        let mut block = k::REDUCE_SUM_BLOCK;
        if n.div_ceil(per_block(block)) < self.sms as usize {
            block /= 2;
        }
        let grid = n
            .div_ceil(per_block(block))
            .clamp(1, self.max_grid as usize) as u32;
        launch::linear(grid, block, 0)
    }

    /// Queues the sum of `input` into the device scalar `result` (one element), one launch,
    /// no host synchronisation. An empty input sets `result` to 0.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `result` is not one element; [`Error::WrongContext`] if a
    /// buffer lives on another device; [`Error::Driver`] if the launch fails.
    pub fn sum_into(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<K::Input>,
        result: &mut impl DevicePtrMut<K::Acc>,
    ) -> Result<LaunchConfig> {
        if result.len() != 1 {
            return Err(Error::LengthMismatch {
                what: "result",
                expected: 1,
                actual: result.len(),
            });
        }
        gpu.check_buffer("result", result)?;
        let cfg = self.launch_config(input.len());
        queue::<K>(
            gpu,
            cfg,
            input,
            &mut self.partials,
            &mut self.counter,
            result,
        )?;
        Ok(cfg)
    }

    /// Queues the sum of `input` into this workspace's own result (read it with
    /// [`ReduceSum::result`]), one launch, no host synchronisation.
    ///
    /// # Errors
    /// As [`ReduceSum::sum_into`].
    pub fn launch(&mut self, gpu: &Gpu, input: &impl DevicePtr<K::Input>) -> Result<LaunchConfig> {
        let cfg = self.launch_config(input.len());
        queue::<K>(
            gpu,
            cfg,
            input,
            &mut self.partials,
            &mut self.counter,
            &mut self.result,
        )?;
        Ok(cfg)
    }

    /// The sum of `input`, waiting for it ([`ReduceSum::launch`], then
    /// [`ReduceSum::result`]).
    ///
    /// # Errors
    /// As [`ReduceSum::sum_into`]; [`Error::Driver`] if the kernel faulted.
    pub fn sum(&mut self, gpu: &Gpu, input: &impl DevicePtr<K::Input>) -> Result<K::Acc> {
        self.launch(gpu, input)?;
        self.result(gpu)
    }

    /// Downloads the result of the last [`ReduceSum::launch`], waiting for the stream.
    ///
    /// # Errors
    /// [`Error::Driver`] if the copy fails or the kernel faulted.
    pub fn result(&self, gpu: &Gpu) -> Result<K::Acc> {
        Ok(gpu.download(&self.result, K::KERNEL_NAME)?[0])
    }
}

/// Queues one `K::KERNEL` launch of `cfg` (see [`ReduceSum`]).
fn queue<K: SumKind>(
    gpu: &Gpu,
    cfg: LaunchConfig,
    input: &impl DevicePtr<K::Input>,
    partials: &mut CudaSlice<K::Acc>,
    counter: &mut CudaSlice<u32>,
    result: &mut impl DevicePtrMut<K::Acc>,
) -> Result<()> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("workspace", partials)?;
    let n = input.len();
    // SAFETY: the kernels take `(input: *const In, n: usize, partials: *mut Acc,
    // counter: *mut u32, result: *mut Acc)` (`SumKernel`); `input` is a view of `n` elements
    // (4-byte aligned as its element type; the kernel handles any 16-byte misalignment) that
    // the kernel only reads; `partials` holds `max_grid >= grid` accumulators; `counter` was
    // zeroed at allocation and each launch leaves it zero, and cudarc orders launches that
    // share it; `result` is one accumulator (checked by the callers), distinct from the
    // input (one is borrowed mutably).
    unsafe { gpu.launch_unchecked(K::KERNEL, cfg, (input, n, partials, counter, result)) }
}
