//! The one-launch reduction, [`Reduce`] (`gpu_std::reduce::device_reduce`): the version to call
//! (beyond the seed), here in the three sum kinds ([`SumI32`], [`SumF32`], [`SumF32F64`]); the
//! square sum and the [`ops`](super::ops) are kinds of the same workspace.

use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig};
use gpu::reduce::{self as k, sum as kernels};
use gpu_std::Pod;

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch;

/// A one-launch reduction kernel (`gpu_std::reduce::device_reduce`) over `In` accumulating in
/// `Acc`: `(input: *const In, n: usize, partials: *mut Acc, counter: *mut u32, result: *mut
/// Acc)`.
pub type ReduceKernel<In, Acc> = Kernel<(*const In, usize, *mut Acc, *mut u32, *mut Acc)>;
/// The sums' name for [`ReduceKernel`].
pub type SumKernel<In, Acc> = ReduceKernel<In, Acc>;

/// One kind of [`Reduce`]: element type, accumulator type, kernel, and the value the host gets.
///
/// Implemented by the sums [`SumI32`], [`SumF32`], [`SumF32F64`] and
/// [`SquareSumI32`](super::square_sum::SquareSumI32) (the result is the accumulator), and by
/// every instance of `gpu::reduce::ops::reduce_op` ([`ops`](super::ops): `Sum<T>`,
/// `Product<T>`, `Min<T>`, `Max<T>`, `ArgMin<T>`, `ArgMax<T>` of every primitive `T`).
pub trait ReduceKind: 'static {
    /// Element type of the input.
    type Input: DeviceRepr + Copy;
    /// Accumulator: plain words, which the kernel writes and the host reads back as bytes.
    type Acc: Pod;
    /// What [`Reduce::reduce`] returns: the accumulator, or its value narrowed back to the
    /// element type (`Min<i8>`), or an index and a value (`ArgMax<T>`).
    type Output;
    /// The kernel.
    const KERNEL: ReduceKernel<Self::Input, Self::Acc>;
    /// The kernel's `.entry` name.
    const KERNEL_NAME: &'static str = Self::KERNEL.name();
    /// The result of an accumulator over `n` elements.
    ///
    /// # Errors
    /// [`Error::EmptyInput`] where no value is defined for `n = 0` (the arg-reductions).
    fn output(acc: Self::Acc, n: usize) -> Result<Self::Output>;
}

/// The sums' name for [`ReduceKind`].
pub use ReduceKind as SumKind;

/// `i32` summed modulo 2^32.
pub struct SumI32;
/// `f32` summed in `f32`.
pub struct SumF32;
/// `f32` summed in `f64`.
pub struct SumF32F64;

/// A [`ReduceKind`] whose result is its accumulator.
macro_rules! sum_kind {
    ($($kind:ty => $in:ty, $acc:ty, $kernel:expr;)*) => {$(
        impl ReduceKind for $kind {
            type Input = $in;
            type Acc = $acc;
            type Output = $acc;
            const KERNEL: $crate::reduce::ReduceKernel<$in, $acc> = $kernel;
            fn output(acc: $acc, _n: usize) -> Result<$acc> {
                Ok(acc)
            }
        }
    )*};
}
pub(crate) use sum_kind;

sum_kind! {
    SumI32 => i32, i32, kernels::reduce_sum_i32;
    SumF32 => f32, f32, kernels::reduce_sum_f32;
    SumF32F64 => f32, f64, kernels::reduce_sum_f32_f64;
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

/// The one-launch reduction (`gpu::reduce::sum::reduce_sum_*`, `square_sum_reduce` for
/// [`SquareSumI32`](super::square_sum::SquareSumI32), `gpu::reduce::ops::reduce_op_*` for the
/// [`ops`](super::ops)) with its scratch space: one partial per block, the last-block counter and
/// a result, allocated once and reused, so a launch costs no allocation.
/// [`sum`](fn@super::sum), [`reduce`](fn@super::reduce) and their `_into` forms use one that the
/// [`Gpu`] handle keeps for its stream (made on the first call); keep one of your own to reduce
/// without taking the handle's lock.
///
/// Launch: blocks of [`REDUCE_SUM_BLOCK`](k::REDUCE_SUM_BLOCK) (512) threads (256 for inputs
/// with fewer tiles than SMs, see [`Reduce::launch_config`]); the grid is one wave of resident
/// blocks, from this device's SM count and the occupancy calculator's blocks per SM for the
/// kernel (528 on an H100 or H200: 132 SMs x 4), fewer when `n` is small (one block per tile of
/// `REDUCE_SUM_UNROLL` 16-byte loads per thread), at least one. Each block reads an even share
/// of the tiles.
///
/// The input may be any view: the kernel reads the elements before the first 16-byte boundary
/// one by one. One workspace serves one launch at a time: cudarc's stream synchronisation
/// orders launches that share it, also across streams.
pub struct Reduce<K: ReduceKind> {
    /// `max_grid` accumulators, as 8-byte words (the accumulator may be a pair).
    partials: CudaSlice<u64>,
    counter: CudaSlice<u32>,
    /// One accumulator, as 8-byte words.
    result: CudaSlice<u64>,
    max_grid: u32,
    sms: u32,
    kind: PhantomData<fn() -> K>,
}

/// The launch of a one-launch reduction (`gpu_std::reduce::device_reduce`) of `n` elements of
/// `elem_size` bytes on a device of `sms` SMs whose one-wave grid is `max_grid` blocks: as
/// [`Reduce::launch_config`] says.
pub(crate) fn one_launch_config(
    n: usize,
    elem_size: usize,
    sms: u32,
    max_grid: u32,
) -> LaunchConfig {
    let per_load = (16 / elem_size.clamp(1, 16)).max(1);
    let per_block = |block: u32| block as usize * per_load * k::REDUCE_SUM_UNROLL;
    let mut block = k::REDUCE_SUM_BLOCK;
    if n.div_ceil(per_block(block)) < sms as usize {
        block /= 2;
    }
    let grid = n.div_ceil(per_block(block)).clamp(1, max_grid as usize) as u32;
    launch::linear(grid, block, 0)
}

/// The sums' name for [`Reduce`].
pub type ReduceSum<K> = Reduce<K>;

/// 8-byte words that hold `count` accumulators of `A`.
fn words<A>(count: usize) -> usize {
    (count * size_of::<A>()).div_ceil(8)
}

impl<K: ReduceKind> Reduce<K> {
    /// Allocates the scratch space on `gpu`'s device: `SMs x blocks per SM` accumulators, a
    /// counter and a result.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; [`Error::Driver`] if a device query or allocation fails.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let max_grid = gpu.one_wave(K::KERNEL_NAME, k::REDUCE_SUM_BLOCK, 0)?;
        Ok(Self {
            partials: gpu.zeros(words::<K::Acc>(max_grid as usize))?,
            counter: gpu.zeros(1)?,
            result: gpu.zeros(words::<K::Acc>(1))?,
            max_grid,
            sms: gpu.sm_count()?,
            kind: PhantomData,
        })
    }

    /// The launch for `n` elements.
    ///
    /// Blocks of [`REDUCE_SUM_BLOCK`](k::REDUCE_SUM_BLOCK) threads, or half as many when `n`
    /// has fewer tiles of that size than the device has SMs (up to 132 x 8192 4-byte elements
    /// on an H200), so that small inputs still spread over every SM; one block per tile of
    /// `REDUCE_SUM_UNROLL` 16-byte loads per thread, at most the one-wave grid.
    pub fn launch_config(&self, n: usize) -> LaunchConfig {
        one_launch_config(n, size_of::<K::Input>(), self.sms, self.max_grid)
    }

    /// Queues the reduction of `input` into the device scalar `result` (one element), one
    /// launch, no host synchronisation. An empty input sets `result` to the identity.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `result` is not one element; [`Error::WrongContext`] if a
    /// buffer lives on another device; [`Error::Driver`] if the launch fails.
    pub fn reduce_into(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<K::Input>,
        result: &mut impl DevicePtrMut<K::Acc>,
    ) -> Result<LaunchConfig> {
        crate::error::expect_len("result", 1, result.len())?;
        gpu.check_buffer("result", result)?;
        let cfg = self.launch_config(input.len());
        // SAFETY: `partials` holds `words::<Acc>(max_grid)` 8-byte words, so `max_grid`
        // accumulators (8-byte aligned, which covers `Acc`'s alignment of 4 or 8).
        let partials = unsafe {
            self.partials
                .transmute_mut::<K::Acc>(self.max_grid as usize)
        };
        let mut partials = partials.ok_or_else(workspace_too_small)?;
        queue::<K>(gpu, cfg, input, &mut partials, &mut self.counter, result)?;
        Ok(cfg)
    }

    /// [`Reduce::reduce_into`] under the sums' name.
    ///
    /// # Errors
    /// As [`Reduce::reduce_into`].
    pub fn sum_into(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<K::Input>,
        result: &mut impl DevicePtrMut<K::Acc>,
    ) -> Result<LaunchConfig> {
        self.reduce_into(gpu, input, result)
    }

    /// Queues the reduction of `input` into this workspace's own result (read it with
    /// [`Reduce::result`]), one launch, no host synchronisation.
    ///
    /// # Errors
    /// As [`Reduce::reduce_into`].
    pub fn launch(&mut self, gpu: &Gpu, input: &impl DevicePtr<K::Input>) -> Result<LaunchConfig> {
        let cfg = self.launch_config(input.len());
        // SAFETY: as in `reduce_into`; the result holds `words::<Acc>(1)` words.
        let (partials, result) = unsafe {
            (
                self.partials
                    .transmute_mut::<K::Acc>(self.max_grid as usize),
                self.result.transmute_mut::<K::Acc>(1),
            )
        };
        let (Some(mut partials), Some(mut result)) = (partials, result) else {
            return Err(workspace_too_small());
        };
        queue::<K>(
            gpu,
            cfg,
            input,
            &mut partials,
            &mut self.counter,
            &mut result,
        )?;
        Ok(cfg)
    }

    /// The reduction of `input`, waiting for it ([`Reduce::launch`], then
    /// [`Reduce::result`]).
    ///
    /// # Errors
    /// As [`Reduce::reduce_into`]; [`Error::Driver`] if the kernel faulted;
    /// [`Error::EmptyInput`] for an arg-reduction of no elements.
    pub fn reduce(&mut self, gpu: &Gpu, input: &impl DevicePtr<K::Input>) -> Result<K::Output> {
        let n = input.len();
        if n == 0 {
            // Checked before any device work: an arg-reduction of nothing has no index.
            K::output(zeroed_acc::<K::Acc>(), 0).map(drop)?;
        }
        self.launch(gpu, input)?;
        K::output(self.result(gpu)?, n)
    }

    /// [`Reduce::reduce`] under the sums' name.
    ///
    /// # Errors
    /// As [`Reduce::reduce`].
    pub fn sum(&mut self, gpu: &Gpu, input: &impl DevicePtr<K::Input>) -> Result<K::Output> {
        self.reduce(gpu, input)
    }

    /// Downloads the accumulator of the last [`Reduce::launch`], waiting for the stream.
    ///
    /// # Errors
    /// [`Error::Driver`] if the copy fails or the kernel faulted.
    pub fn result(&self, gpu: &Gpu) -> Result<K::Acc> {
        let words = gpu.download(&self.result, K::KERNEL_NAME)?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        // SAFETY: the kernel wrote one `Acc` at the start of the words; `Acc: Pod` has no
        // padding and any bits are a value; `read_unaligned` needs no alignment.
        Ok(unsafe { bytes.as_ptr().cast::<K::Acc>().read_unaligned() })
    }
}

/// [`Error::Unsupported`] for a workspace whose words cannot hold its accumulators (never: they
/// are sized for them at allocation).
fn workspace_too_small() -> Error {
    Error::Unsupported {
        what: "workspace",
        requirement: "room for one accumulator per block",
    }
}

/// An accumulator of zero bits (only passed to [`ReduceKind::output`] with `n = 0`, which
/// ignores it or fails).
fn zeroed_acc<A: Pod>() -> A {
    // SAFETY: `A: Pod`: any bits, zeros included, are a value.
    unsafe { std::mem::zeroed() }
}

/// Queues one `K::KERNEL` launch of `cfg` (see [`Reduce`]).
fn queue<K: ReduceKind>(
    gpu: &Gpu,
    cfg: LaunchConfig,
    input: &impl DevicePtr<K::Input>,
    partials: &mut impl DevicePtrMut<K::Acc>,
    counter: &mut CudaSlice<u32>,
    result: &mut impl DevicePtrMut<K::Acc>,
) -> Result<()> {
    gpu.check_buffer("input", input)?;
    gpu.check_buffer("workspace", partials)?;
    let n = input.len();
    // SAFETY: the kernels take `(input: *const In, n: usize, partials: *mut Acc,
    // counter: *mut u32, result: *mut Acc)` (`ReduceKernel`); `input` is a view of `n` elements
    // (aligned for its element type) that the kernel only reads; `partials` holds
    // `max_grid >= grid` accumulators; `counter` was zeroed at allocation and each launch
    // leaves it zero, and cudarc orders launches that share it; `result` is one accumulator
    // (checked by the callers), distinct from the input (one is borrowed mutably).
    unsafe { gpu.launch_unchecked(K::KERNEL, cfg, (input, n, partials, counter, result)) }
}
