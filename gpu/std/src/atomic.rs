//! Atomic read-modify-write on global or shared memory (CUDA's `atomicAdd`, `atomicMax`,
//! `atomicMin`, `atomicCAS`), and cuda_std 0.2's atomics under its names: the atomic floats
//! ([`AtomicF32`], [`AtomicF64`], [`BlockAtomicF32`], [`BlockAtomicF64`], [`SystemAtomicF32`],
//! [`SystemAtomicF64`]) and the ordered, scoped functions of [`mid`].
//!
//! PTX `atom` with generic addressing: the same function works on a pointer into global memory
//! and one into shared memory (the hardware resolves the state space). Semantics of the
//! CUDA-named functions ([`atomic_add`], ...) are CUDA's defaults: relaxed ordering, GPU scope.
//! The exception is [`atomic_add_acq_rel`], global memory only, which also orders memory
//! around it. Each returns the value held before the operation.

mod float;
pub mod mid;

pub use float::{
    AtomicF32, AtomicF64, BlockAtomicF32, BlockAtomicF64, SystemAtomicF32, SystemAtomicF64,
};

/// Types with a hardware `atom.add`.
pub trait AtomicAdd: Copy {
    /// `atom.add` on `address`; returns the old value.
    ///
    /// # Safety
    /// `address` is valid, aligned, and in global or shared memory.
    unsafe fn atom_add(address: *mut Self, value: Self) -> Self;
}

/// Types with a hardware `atom.max` / `atom.min`.
pub trait AtomicMinMax: Copy {
    /// `atom.max` on `address`; returns the old value.
    ///
    /// # Safety
    /// As [`AtomicAdd::atom_add`].
    unsafe fn atom_max(address: *mut Self, value: Self) -> Self;
    /// `atom.min` on `address`; returns the old value.
    ///
    /// # Safety
    /// As [`AtomicAdd::atom_add`].
    unsafe fn atom_min(address: *mut Self, value: Self) -> Self;
}

#[cfg_attr(not(target_arch = "nvptx64"), allow(unused_macros))]
macro_rules! atom {
    ($op:literal, $t:ty, $ptx:literal, $class:ident, $address:ident, $value:ident) => {{
        let old: $t;
        // SAFETY: the caller guarantees a valid, aligned global or shared address.
        unsafe {
            core::arch::asm!(concat!("atom.", $op, ".", $ptx, " {o}, [{a}], {v};"),
                o = out($class) old, a = in(reg64) $address, v = in($class) $value,
                options(nostack));
        }
        old
    }};
}

macro_rules! atomic_add_impl {
    ($($t:ty => $ptx:literal, $class:ident;)*) => {$(
        impl AtomicAdd for $t {
            #[inline(always)]
            #[crate::gpu_only]
            unsafe fn atom_add(address: *mut Self, value: Self) -> Self {
                atom!("add", $t, $ptx, $class, address, value)
            }
        }
    )*};
}
atomic_add_impl! {
    u32 => "u32", reg32;
    i32 => "s32", reg32;
    u64 => "u64", reg64;
    f32 => "f32", reg32;
    f64 => "f64", reg64;
}

macro_rules! atomic_min_max_impl {
    ($($t:ty => $ptx:literal, $class:ident;)*) => {$(
        impl AtomicMinMax for $t {
            #[inline(always)]
            #[crate::gpu_only]
            unsafe fn atom_max(address: *mut Self, value: Self) -> Self {
                atom!("max", $t, $ptx, $class, address, value)
            }
            #[inline(always)]
            #[crate::gpu_only]
            unsafe fn atom_min(address: *mut Self, value: Self) -> Self {
                atom!("min", $t, $ptx, $class, address, value)
            }
        }
    )*};
}
atomic_min_max_impl! {
    u32 => "u32", reg32;
    i32 => "s32", reg32;
    u64 => "u64", reg64;
    i64 => "s64", reg64;
}

/// Types with a hardware `red.add` (an atomic add that returns nothing): `u32` and `u64`.
pub trait ReduceAdd: Copy {
    /// `red.shared.add` at the shared-window address `address`.
    ///
    /// # Safety
    /// `address` is a shared-window address of this block's shared memory, aligned for
    /// `Self`, inside an array the caller may update.
    unsafe fn red_shared_add(address: u32, value: Self);
    /// `red.global.add` at the generic address `address` of global memory.
    ///
    /// # Safety
    /// `address` is valid for reads and writes, aligned, and in global memory.
    unsafe fn red_global_add(address: *mut Self, value: Self);
}

macro_rules! reduce_add_impl {
    ($($t:ty => $ptx:literal, $class:ident;)*) => {$(
        impl ReduceAdd for $t {
            #[inline(always)]
            #[crate::gpu_only]
            unsafe fn red_shared_add(address: u32, value: Self) {
                // SAFETY: the caller guarantees a valid, aligned shared-window address.
                unsafe {
                    core::arch::asm!(concat!("red.shared.add.", $ptx, " [{a}], {v};"),
                        a = in(reg32) address, v = in($class) value, options(nostack));
                }
            }
            #[inline(always)]
            #[crate::gpu_only]
            unsafe fn red_global_add(address: *mut Self, value: Self) {
                // SAFETY: the caller guarantees a valid, aligned global address.
                unsafe {
                    core::arch::asm!(
                        concat!("{{ .reg .u64 g; cvta.to.global.u64 g, {p}; red.global.add.",
                            $ptx, " [g], {v}; }}"),
                        p = in(reg64) address, v = in($class) value, options(nostack));
                }
            }
        }
    )*};
}
reduce_add_impl! {
    u32 => "u32", reg32;
    u64 => "u64", reg64;
}

/// `atomicAdd` on shared memory whose result is not used, as PTX `red.shared.add` at a 32-bit
/// shared-window address (what `nvcc` emits for an `atomicAdd` on `__shared__` memory whose
/// return value is discarded): no register waits for the old value, and the 32-bit address
/// needs no generic-to-shared conversion. The address comes from
/// [`SharedArray::shared_address`](crate::SharedArray::shared_address) or
/// [`DynamicShared::shared_address`](crate::DynamicShared::shared_address) plus the element's
/// byte offset. `u32` and `u64`. Relaxed, as every CUDA atomic: order it before other
/// threads' reads with a barrier.
///
/// # Safety
/// `address` is a shared-window address of this block's shared memory, aligned for `T`,
/// inside an array the caller may update.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn red_shared_add<T: ReduceAdd>(address: u32, value: T) {
    // SAFETY: forwarded from the caller.
    unsafe { T::red_shared_add(address, value) }
}

/// `atomicAdd` on a `u32` of shared memory that returns the old value, as PTX
/// `atom.shared.add.u32` at a 32-bit shared-window address (what `nvcc` emits for an
/// `atomicAdd` on `__shared__` memory whose result is used): a radix sort's warp-level ranking,
/// where the lowest lane of each digit's peers adds their number to the warp's counter of that
/// digit and hands the old count to the others. Relaxed; a warp's atomics on one address take
/// effect in the order the warp issues them.
///
/// # Safety
/// As [`red_shared_add`].
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn atomic_shared_add(address: u32, value: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees a valid, aligned shared-window address.
    unsafe {
        core::arch::asm!("atom.shared.add.u32 {o}, [{a}], {v};",
            o = out(reg32) old, a = in(reg32) address, v = in(reg32) value, options(nostack));
    }
    old
}

/// `atomicAdd` on global memory whose result is not used, as PTX `red.global.add` (relaxed,
/// GPU scope; what `nvcc` emits for a discarded `atomicAdd`): `u32` and `u64`.
///
/// # Safety
/// `address` is valid for reads and writes, aligned, and in global memory.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn red_global_add<T: ReduceAdd>(address: *mut T, value: T) {
    // SAFETY: forwarded from the caller.
    unsafe { T::red_global_add(address, value) }
}

/// `atomicAdd(address, value)`: adds `value` to `*address` atomically; returns the old value.
/// `u32`, `i32`, `u64`, `f32` and `f64` (the float adds round to nearest; their order, and so
/// the last bits of a float sum, vary from run to run).
///
/// # Safety
/// `address` is valid for reads and writes, aligned, and in global or shared memory.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn atomic_add<T: AtomicAdd>(address: *mut T, value: T) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::atom_add(address, value) }
}

/// `atomicMax(address, value)`; returns the old value.
///
/// # Safety
/// As [`atomic_add`].
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn atomic_max<T: AtomicMinMax>(address: *mut T, value: T) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::atom_max(address, value) }
}

/// `atomicMin(address, value)`; returns the old value.
///
/// # Safety
/// As [`atomic_add`].
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn atomic_min<T: AtomicMinMax>(address: *mut T, value: T) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::atom_min(address, value) }
}

/// `atomicCAS(address, compare, value)`: stores `value` if `*address == compare`; returns the
/// old value either way.
///
/// # Safety
/// As [`atomic_add`].
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn atomic_cas(address: *mut u32, compare: u32, value: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees a valid, aligned global or shared address.
    unsafe {
        core::arch::asm!("atom.cas.b32 {o}, [{a}], {c}, {v};",
            o = out(reg32) old, a = in(reg64) address, c = in(reg32) compare, v = in(reg32) value,
            options(nostack));
    }
    old
}

/// `atomicAdd` with acquire-release ordering at GPU scope on a global `u32` (PTX
/// `atom.acq_rel.gpu.global.add.u32`, `cuda::atomic_ref<unsigned, thread_scope_device>::
/// fetch_add(v, memory_order_acq_rel)`); returns the old value.
///
/// Release: this thread's earlier writes are visible to any thread that later acquires the
/// counter. Acquire: after it, this thread sees every write released by earlier adders. This
/// is the ticket of a last-block-done pattern without the two full `__threadfence()`s (PTX
/// `membar.gl`, a sequentially consistent fence) of the CUDA sample `threadFenceReduction`.
///
/// # Safety
/// `address` is valid for reads and writes, 4-byte aligned, and in global memory.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn atomic_add_acq_rel(address: *mut u32, value: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees a valid, aligned global address; the asm clobbers memory
    // (no `nomem`) so accesses stay on their side of it, as the ordering requires.
    unsafe {
        core::arch::asm!(
            "cvta.to.global.u64 {g}, {p};\n\tatom.acq_rel.gpu.global.add.u32 {o}, [{g}], {v};",
            o = out(reg32) old, p = in(reg64) address, v = in(reg32) value, g = out(reg64) _,
            options(nostack));
    }
    old
}
