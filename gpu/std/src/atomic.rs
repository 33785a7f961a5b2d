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
