//! Scans with CUB's operators over every primitive type (`DeviceScan::InclusiveScan`,
//! `ExclusiveScan` with an initial value; PyTorch's `cumsum`, `cumprod`, `cummax`, `cummin`):
//! the [`ScanKind`]s `Sum<T>`, `Product<T>`, `Min<T>` and `Max<T>` of `i8`..`i64`,
//! `u8`..`u64`, `f32`, `f64` and `F16` (`half::f16`), each one launch of the look-back scan
//! (`gpu::scan::lookback::scan_lookback_<op>_<type>`).
//!
//! The output has the input's type. `i8`, `i16`, `u8`, `u16` and `f16` are scanned in 32 bits
//! and narrowed as they are stored: wrapping sums and products give the narrow type's own bits
//! (CUB's result for an output of the input's type; PyTorch's `cumsum` of `int8` widens to
//! `int64` instead), and `f16` outputs are each rounded once from an `f32` scan (PyTorch's
//! `cumsum` of `half`). `Min`/`Max` of floats propagate NaN, as `torch.cummax`'s values; a
//! negative NaN (the sign bit set) is a NaN like any other.
//!
//! ```no_run
//! use cpu::{Gpu, scan};
//! use cpu::reduce::{Max, Product};
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = Gpu::new(0)?;
//! let x = gpu.upload(&[3i8, -1, 4, 1, -5])?;
//! let mut y = gpu.zeros::<i8>(5)?;
//! scan::cummax(&gpu, &x, &mut y)?; // [3, 3, 4, 4, 4]
//! scan::exclusive_scan::<Product<i8>>(&gpu, &x, 2, &mut y)?; // [2, 6, -6, -24, -24]
//! scan::inclusive_scan::<Max<i8>>(&gpu, &x, &mut y)?; // as cummax
//! # Ok(())
//! # }
//! ```

use cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr};
use gpu::scan::ScanOp;
use gpu_std::DeviceCopy;

use super::{Kind, ScanWorkspace};
use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::reduce::ops::Scannable;
use crate::reduce::ops::sealed::Instances;
use crate::reduce::{Element, Max, Min, Product, Sum};

/// The kernel instances `scan_by_key` has.
use gpu::scan::by_key::__gpu_std_instance_of_scan_by_key as ByKeyInstance;
use gpu::scan::by_key::scan_by_key;

/// A look-back scan kernel over `T` with accumulator `A`: `(input: *const T, output: *mut T, n:
/// usize, status: *mut u64, counter: *mut u32, epoch: u32, exclusive: u32, init: A)`.
pub type ScanKernel<T, A> = Kernel<(*const T, *mut T, usize, *mut u64, *mut u32, u32, u32, A)>;

/// A scan the library runs: an operator of `gpu::scan::ScanOp` with its kernel instance
/// (`Sum<T>`, `Product<T>`, `Min<T>`, `Max<T>` of every [`Element`] `T`, the accumulator
/// [`Scannable::Acc`]).
pub trait ScanKind: 'static {
    /// The element type of input and output.
    type Item: DeviceRepr + Copy + Send + Sync;
    /// The accumulator the kernel scans in (and takes its initial value as).
    type Acc: DeviceCopy;
    /// The kernel.
    const KERNEL: ScanKernel<Self::Item, Self::Acc>;
    /// The operator's identity (the initial value of a plain scan).
    const IDENTITY: Self::Acc;
    /// An element as an accumulator (exact).
    fn lift(x: Self::Item) -> Self::Acc;
}

/// Every operator of every [`Element`] is a [`ScanKind`], so `T: Element` is the only bound
/// generic code writes.
macro_rules! scan_kind {
    ($($op:ident => $kernel:ident;)*) => {$(
        impl<T: Element> ScanKind for $op<T> {
            type Item = T;
            type Acc = <T as Scannable>::Acc;
            const KERNEL: ScanKernel<T, Self::Acc> = <T as Instances>::$kernel;
            const IDENTITY: Self::Acc = <$op<T> as ScanOp>::IDENTITY;
            fn lift(x: T) -> Self::Acc {
                <$op<T> as ScanOp>::lift(x)
            }
        }
    )*};
}
scan_kind! {
    Sum => SCAN_SUM; Product => SCAN_PRODUCT; Min => SCAN_MIN; Max => SCAN_MAX;
}

/// `output[i] = input[0] ⊕ ... ⊕ input[i]` with the operator `K` ([`ScanKind`]), queued on
/// `gpu`'s stream (no host synchronisation). `input` and `output` are device memory of `gpu`'s
/// context of the same length (views included). One launch of the look-back scan: one block per
/// tile of 32 elements per thread (8 of 8-byte types, 16 of 1-byte ones), 16-byte loads and stores where both
/// views start on a 16-byte boundary. An empty input launches nothing. Uses the scan workspace
/// `gpu` keeps for its stream and element type ([`ScanWorkspace`]).
///
/// # Errors
/// As [`inclusive_sum`](super::inclusive_sum).
pub fn inclusive_scan<K: ScanKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Item>,
    output: &mut impl DevicePtrMut<K::Item>,
) -> Result<()> {
    scan::<K>(gpu, Kind::Inclusive, None, input, output)
}

/// `output[i] = init ⊕ input[0] ⊕ ... ⊕ input[i]` (CUB's `InclusiveScanInit`). As
/// [`inclusive_scan`] otherwise.
///
/// # Errors
/// As [`inclusive_scan`].
pub fn inclusive_scan_init<K: ScanKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Item>,
    init: K::Item,
    output: &mut impl DevicePtrMut<K::Item>,
) -> Result<()> {
    scan::<K>(gpu, Kind::Inclusive, Some(init), input, output)
}

/// `output[i] = init ⊕ input[0] ⊕ ... ⊕ input[i - 1]`, `output[0] = init` (CUB's
/// `ExclusiveScan` with an initial value). As [`inclusive_scan`] otherwise.
///
/// # Errors
/// As [`inclusive_scan`].
pub fn exclusive_scan<K: ScanKind>(
    gpu: &Gpu,
    input: &impl DevicePtr<K::Item>,
    init: K::Item,
    output: &mut impl DevicePtrMut<K::Item>,
) -> Result<()> {
    scan::<K>(gpu, Kind::Exclusive, Some(init), input, output)
}

/// One scan on `gpu`'s kept workspace.
fn scan<K: ScanKind>(
    gpu: &Gpu,
    kind: Kind,
    init: Option<K::Item>,
    input: &impl DevicePtr<K::Item>,
    output: &mut impl DevicePtrMut<K::Item>,
) -> Result<()> {
    gpu.with_workspace(ScanWorkspace::<K::Item>::new, |ws| {
        ws.scan_with::<K>(gpu, kind, init, input, output).map(drop)
    })
}

/// `torch.cumsum` in the input's type: [`inclusive_scan`] of [`Sum<T>`].
///
/// # Errors
/// As [`inclusive_scan`].
pub fn cumsum<T: Element>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    output: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    inclusive_scan::<Sum<T>>(gpu, input, output)
}

/// `torch.cumprod` in the input's type: [`inclusive_scan`] of [`Product<T>`].
///
/// # Errors
/// As [`inclusive_scan`].
pub fn cumprod<T: Element>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    output: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    inclusive_scan::<Product<T>>(gpu, input, output)
}

/// `torch.cummax`'s values: [`inclusive_scan`] of [`Max<T>`] (a NaN and every output after it
/// are NaN).
///
/// # Errors
/// As [`inclusive_scan`].
pub fn cummax<T: Element>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    output: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    inclusive_scan::<Max<T>>(gpu, input, output)
}

/// `torch.cummin`'s values: [`inclusive_scan`] of [`Min<T>`].
///
/// # Errors
/// As [`inclusive_scan`].
pub fn cummin<T: Element>(
    gpu: &Gpu,
    input: &impl DevicePtr<T>,
    output: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    inclusive_scan::<Min<T>>(gpu, input, output)
}

/// A scan-by-key kernel over values `T`: `(keys: *const u32, input: *const T, output: *mut T, n:
/// usize, status: *mut u64, counter: *mut u32, epoch: u32)`.
pub type ByKeyKernel<T> = Kernel<(*const u32, *const T, *mut T, usize, *mut u64, *mut u32, u32)>;

/// A scan by key the library runs (`gpu::scan::by_key::scan_by_key_<op>_<type>`): `Sum<T>`,
/// `Min<T>` and `Max<T>` of `i32`, `u32`, `i64`, `u64`, `f32`, `f64`.
pub trait ByKeyKind: 'static {
    /// The value type of input and output.
    type Item: DeviceRepr + Copy + Send + Sync;
    /// The kernel.
    const KERNEL: ByKeyKernel<Self::Item>;
    /// Bytes of the kernel's accumulator (the value and its segment head), which set the status
    /// words per tile.
    const ACC_BYTES: usize;
}

impl<S> ByKeyKind for S
where
    S: ScanOp + ByKeyInstance + 'static,
    S::Item: DeviceRepr + Send + Sync,
{
    type Item = S::Item;
    const KERNEL: ByKeyKernel<S::Item> = scan_by_key::<S>();
    const ACC_BYTES: usize = size_of::<gpu::scan::by_key::Keyed<S::Acc>>();
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
}

/// A key type of [`inclusive_scan_by_key`]: `i32` or `u32` (keys are equal when their 32 bits
/// are).
pub trait ScanKey: DeviceRepr + Copy + sealed::Sealed {}
impl ScanKey for i32 {}
impl ScanKey for u32 {}

/// Device memory of [`ScanKey`]s, whose key type [`inclusive_scan_by_key`] infers: a
/// `CudaSlice`, `CudaView` or `CudaViewMut` of `i32` or `u32` keys (and cudarc's unified-memory
/// forms). A device pointer type of one's own takes part by returning itself.
pub trait ScanKeys {
    /// The key type.
    type Key: ScanKey;
    /// The keys as device memory.
    fn device_keys(&self) -> &impl DevicePtr<Self::Key>;
}

macro_rules! scan_keys {
    ($($ptr:ty),*) => {$(
        impl<Key: ScanKey> ScanKeys for $ptr {
            type Key = Key;
            fn device_keys(&self) -> &impl DevicePtr<Key> {
                self
            }
        }
    )*};
}
scan_keys!(
    cudarc::driver::CudaSlice<Key>,
    cudarc::driver::CudaView<'_, Key>,
    cudarc::driver::CudaViewMut<'_, Key>,
    cudarc::driver::UnifiedSlice<Key>,
    cudarc::driver::UnifiedView<'_, Key>,
    cudarc::driver::UnifiedViewMut<'_, Key>
);

/// Inclusive scan by key (CUB's `InclusiveSumByKey` / `InclusiveScanByKey`): `output[i]` is the
/// scan with `K` of `input[h..=i]`, where `h` is the start of `i`'s run of equal consecutive
/// keys (the last `h <= i` with `h == 0` or `keys[h] != keys[h - 1]`). Queued on `gpu`'s stream;
/// one launch of the look-back scan over `(head, value)` pairs, which carries a run across
/// tiles. Uses the scan workspace `gpu` keeps for the value type. The key type (`i32` or
/// `u32`) comes from `keys` ([`ScanKeys`]): only the operator is named,
/// `inclusive_scan_by_key::<Sum<f32>>(&gpu, &keys, &x, &mut y)`.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) unless `keys`, `input` and `output`
/// have one length; otherwise as [`inclusive_scan`].
pub fn inclusive_scan_by_key<K: ByKeyKind>(
    gpu: &Gpu,
    keys: &impl ScanKeys,
    input: &impl DevicePtr<K::Item>,
    output: &mut impl DevicePtrMut<K::Item>,
) -> Result<()> {
    gpu.with_workspace(ScanWorkspace::<K::Item>::new, |ws| {
        ws.scan_by_key::<K>(gpu, keys, input, output).map(drop)
    })
}
