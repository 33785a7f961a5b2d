//! Parallel reduction (sum) of device memory: the entry points to call, the seed's versions,
//! and their CPU references.
//!
//! # Calling it
//! ```no_run
//! use cpu::Gpu;
//! use cpu::reduce::{self, SumF32};
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = Gpu::new(0)?; // or Gpu::from_stream(your_stream)?
//! let data = gpu.upload(&vec![0.5f32; 1 << 20])?;
//! let total: f32 = reduce::sum::<SumF32>(&gpu, &data.slice(1000..))?; // any sub-slice
//! let mut scalar = gpu.zeros::<f32>(1)?;
//! reduce::sum_into::<SumF32>(&gpu, &data, &mut scalar)?; // stays on the device, no sync
//! let squares: i32 = reduce::square_sum(&gpu, &gpu.upload(&[1, 2, 3])?)?; // 14
//! let bytes = gpu.upload(&[7u8, 200, 3, 200])?;
//! let (index, largest) = reduce::argmax(&gpu, &bytes)?; // (1, 200): the first of the ties
//! let total: u64 = reduce::sum::<reduce::Sum<u8>>(&gpu, &bytes)?; // 410, accumulated in u64
//! # Ok(())
//! # }
//! ```
//!
//! - [`sum`](fn@sum) / [`sum_into`]: one launch of [`ReduceSum`] (`gpu::reduce::sum`): each block
//!   reads an even share of the input with 16-byte loads, warp shuffles, the last block adds the block partials. Kinds: [`SumI32`]
//!   (wrapping, exact), [`SumF32`], [`SumF32F64`] (f32 read, f64 accumulated). The handle
//!   keeps the scratch for its stream, so only the first call of a kind allocates; a
//!   [`ReduceSum`] of one's own does the same without the handle's lock.
//! - [`reduce`](fn@reduce) / [`reduce_into`] and [`min`](fn@min), [`max`](fn@max),
//!   [`argmin`], [`argmax`], [`product`]: CUB's and PyTorch's operators over every primitive type
//!   ([`ops`]: `Sum`, `Product`, `Min`, `Max`, `ArgMin`, `ArgMax` of `i8`..`i64`, `u8`..`u64`,
//!   `f32`, `f64`, `f16`), the same one launch (`gpu_std::reduce::device_reduce`). Generic
//!   code bounds the element type by [`Element`] only: it implies every operator, and the
//!   accumulators are [`Arithmetic`]'s and [`Ordered`]'s associated types, re-exported here.
//! - [`segmented_reduce`] / [`segmented_reduce_into`]: every operator over the segments of CSR
//!   offsets (CUB's `DeviceSegmentedReduce`).
//! - [`square_sum`](fn@square_sum) / [`square_sum_into`]: `sum(x * x)` of `i32` the same way
//!   ([`square_sum::SquareSumI32`]).
//! - [`seed`]: the nine kernels of the seed "cuda 并行归约" (*Professional CUDA C
//!   Programming*, ch. 3), which reduce a padded copy in place and leave partials for the host.
//! - [`square_sum`](mod@square_sum): the seven versions of the seed "【转】CUDA优化小记录".
//! - [`reference`](mod@reference): CPU references and the error bounds float sums are checked with.
//!
//! Empty input sums to 0. Input views may start at any element: the kernel adds the elements
//! before the first 16-byte boundary one by one.

pub mod ops;
pub mod reference;
#[cfg(feature = "rand")]
pub mod samples;
pub mod seed;
pub mod segmented;
pub mod square_sum;
pub mod sum;

use cudarc::driver::{DevicePtr, DevicePtrMut};

use crate::context::Gpu;
use crate::error::Result;

pub use ops::{
    ArgMax, ArgMin, ArgPair, Arithmetic, Element, F16, Max, Min, Ordered, Product, Scannable, Sum,
    argmax, argmin, max, min, product,
};
pub use segmented::{SegmentedKernel, SegmentedKind, segmented_reduce, segmented_reduce_into};
pub use square_sum::SquareSumI32;
pub use sum::{
    Reduce, ReduceKernel, ReduceKind, ReduceSum, SumF32, SumF32F64, SumI32, SumKernel, SumKind,
    SumVariant,
};

/// The sum of `input` (a `CudaSlice`, `CudaView` or `CudaViewMut` on `gpu`'s device), as a
/// host value: `K` is [`SumI32`] (`i32`, wrapping), [`SumF32`] (`f32`) or [`SumF32F64`] (`f32`
/// summed in `f64`). Waits for `gpu`'s stream. One launch of [`ReduceSum`], whose scratch
/// (about 4 KiB to 8 KiB) `gpu` keeps for its stream: the first call of a kind on a handle
/// allocates it, the next calls reuse it. Clones of a handle share it and take turns (the
/// call holds it until its result is downloaded); handles on other streams
/// ([`Gpu::with_new_stream`], [`Gpu::from_stream`]) have their own, so concurrent sums on
/// different streams never share scratch.
///
/// Rounding (floats): each thread adds its elements in order, then trees; the error is at most
/// [`reference::reduce_sum_depth`] roundings of `sum |x|`. Deterministic for a given device and
/// length.
///
/// # Errors
/// [`Error::WrongContext`](crate::Error::WrongContext) if `input` lives on another device;
/// [`Error::OutOfMemory`](crate::Error::OutOfMemory) for the scratch;
/// [`Error::Driver`](crate::Error::Driver) if the launch fails or the kernel faults.
pub fn sum<K: ReduceKind>(gpu: &Gpu, input: &impl DevicePtr<K::Input>) -> Result<K::Output> {
    reduce::<K>(gpu, input)
}

/// The reduction `K` of `input` as a host value: any [`ReduceKind`], the sums above and the
/// [`ops`] (`reduce::<Max<f32>>(&gpu, &x)` is [`max`](fn@max)). Waits for `gpu`'s stream. One
/// launch of [`Reduce`], whose scratch `gpu` keeps for its stream, as [`sum`](fn@sum).
///
/// # Errors
/// As [`sum`](fn@sum); [`Error::EmptyInput`](crate::Error::EmptyInput) for an arg-reduction of
/// an empty input.
pub fn reduce<K: ReduceKind>(gpu: &Gpu, input: &impl DevicePtr<K::Input>) -> Result<K::Output> {
    // The result is downloaded before the workspace is given back, so no other call can
    // overwrite it first.
    gpu.with_workspace(Reduce::<K>::new, |ws| ws.reduce(gpu, input))
}

/// Queues the reduction `K` of `input` into the device scalar `result` (one accumulator of
/// `K`'s type: `i64` for `Sum<i8>`, `f32` for `Max<f32>`) on `gpu`'s stream, without a host
/// synchronisation. An empty input writes the identity. The arg-reductions' pairs have no
/// `DeviceRepr` buffer of their own: [`Reduce::launch`] keeps them in the workspace.
///
/// # Errors
/// As [`sum_into`].
pub fn reduce_into<K: ReduceKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Input>,
    result: &mut impl DevicePtrMut<K::Acc>,
) -> Result<()>
where
    K::Acc: cudarc::driver::DeviceRepr,
{
    gpu.with_workspace(Reduce::<K>::new, |ws| ws.reduce_into(gpu, input, result))
        .map(drop)
}

/// Queues the sum of `input` into the device scalar `result` (a one-element buffer) on `gpu`'s
/// stream, without a host synchronisation. An empty input writes 0. Reuses `gpu`'s scratch as
/// [`sum`](fn@sum) does; [`ReduceSum::sum_into`] is the form with a workspace of your own, and
/// returns the launch configuration.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) if `result` is not one element;
/// otherwise as [`sum`](fn@sum).
pub fn sum_into<K: ReduceKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Input>,
    result: &mut impl DevicePtrMut<K::Acc>,
) -> Result<()> {
    gpu.with_workspace(Reduce::<K>::new, |ws| ws.reduce_into(gpu, input, result))
        .map(drop)
}

/// `sum(x * x)` of `input` in `i32` modulo 2^32 (the seed "【转】CUDA优化小记录" computed in
/// one launch: the `square_sum_reduce` kernel), as a host value. Waits for `gpu`'s stream.
///
/// # Errors
/// As [`sum`](fn@sum).
pub fn square_sum(gpu: &Gpu, input: &impl DevicePtr<i32>) -> Result<i32> {
    sum::<SquareSumI32>(gpu, input)
}

/// Queues `sum(x * x)` of `input` into the device scalar `result`, without a host
/// synchronisation.
///
/// # Errors
/// As [`sum_into`].
pub fn square_sum_into(
    gpu: &Gpu,
    input: &impl DevicePtr<i32>,
    result: &mut impl DevicePtrMut<i32>,
) -> Result<()> {
    sum_into::<SquareSumI32>(gpu, input, result)
}
