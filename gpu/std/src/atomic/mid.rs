//! cuda_std 0.2's `atomic::mid`: atomic operations that take a [`core::sync::atomic::Ordering`]
//! and a scope in their name, under cuda_std's names and signatures.
//!
//! Scopes: `block` (the threads of one block, PTX `.cta`), `device` (every thread of the GPU,
//! `.gpu`), `system` (the GPU, the host and peer GPUs, `.sys`). Each operation is one inline PTX
//! instruction with the ordering's semantics (`atom.relaxed.gpu.add.u32`, ...); `SeqCst` is a
//! `fence.sc` of the scope followed by the `acquire` form (loads and read-modify-writes) or
//! the `relaxed` form (stores), the mapping of the PTX memory model and of libcu++. This crate
//! targets sm_70 and newer, where these forms exist; cuda_std's pre-sm_70 emulation
//! (`membar` and volatile accesses) is not needed.
//!
//! What is offered, as in cuda_std 0.2.2:
//! - `atomic_fetch_{add,sub,and,or,xor,exch}_{u32,u64,i32,i64,f32,f64}_{block,device,system}`
//!   and `atomic_fetch_{min,max}_{u32,u64,i32,i64}_{block,device,system}`:
//!   `(ptr, ordering, val) -> old value`. `sub` adds the negated operand (PTX has no
//!   `atom.sub`; `x + (-y)` is exactly `x - y` for floats, and wraps like `x - y` for
//!   integers); `and`, `or`, `xor` and `exch` act on the bits (`.b32` / `.b64`), floats
//!   included; 64-bit signed adds use `.u64` (two's complement, the same bits).
//! - `atomic_load_{32,64}_{block,device,system}(ptr, ordering)` and
//!   `atomic_store_{32,64}_{block,device,system}(ptr, ordering, val)` on `u32` / `u64`.
//!   A load panics (traps) for `Release` and `AcqRel`, a store for `Acquire` and `AcqRel`.
//! - [`block_thread_fence`], [`device_thread_fence`], [`system_thread_fence`]: nothing for
//!   `Relaxed`, `fence.acq_rel` for `Acquire`, `Release` and `AcqRel`, `fence.sc` for `SeqCst`.
//!
//! An ordering that `core` may add later is treated as `SeqCst`. Every function here is
//! device-only (`unreachable!` on the host, as in cuda_std); the types in
//! [`atomic`](super) also run on the host.
//!
//! # Safety
//! For every `unsafe fn` here: `ptr` is valid for reads and writes of its type, aligned to its
//! size, and in global or shared memory (PTX atomics on local memory are undefined; the safe
//! types of [`atomic`](super) check for it). With a `block` scope, every thread that accesses
//! `*ptr` while others may is in this thread's block; with `device`, on this GPU. Concurrent
//! non-atomic accesses to `*ptr` are data races.

use core::sync::atomic::Ordering;

/// The operand of `sub`: `-val` (wrapping for integers).
trait Negate: Copy {
    fn negate(self) -> Self;
}

macro_rules! negate_int {
    ($($t:ty),*) => {$(
        impl Negate for $t {
            #[inline(always)]
            fn negate(self) -> Self {
                self.wrapping_neg()
            }
        }
    )*};
}
negate_int!(u32, u64, i32, i64);

impl Negate for f32 {
    #[inline(always)]
    fn negate(self) -> Self {
        -self
    }
}

impl Negate for f64 {
    #[inline(always)]
    fn negate(self) -> Self {
        -self
    }
}

/// The operand of every other operation: `val` itself.
#[inline(always)]
fn same<T>(val: T) -> T {
    val
}

/// One PTX instruction (or `fence.sc` and one instruction) per ordering, with the operands
/// bound by the caller; the asm clobbers memory (no `nomem`), so the compiler keeps other
/// accesses on their side of it as the ordering requires.
#[cfg_attr(not(target_arch = "nvptx64"), allow(unused_macros))]
macro_rules! by_ordering {
    ($ordering:expr, $old:ident, $class:ident, $ptr:ident, $val:ident,
     $scope:literal, $op:literal, $ty:literal) => {
        // SAFETY (every arm): the caller guarantees a valid, aligned global or shared address
        // (the functions' `# Safety`).
        match $ordering {
            Ordering::Relaxed => unsafe {
                core::arch::asm!(
                    concat!("atom.relaxed.", $scope, ".", $op, ".", $ty, " {o}, [{a}], {v};"),
                    o = out($class) $old, a = in(reg64) $ptr, v = in($class) $val,
                    options(nostack))
            },
            Ordering::Release => unsafe {
                core::arch::asm!(
                    concat!("atom.release.", $scope, ".", $op, ".", $ty, " {o}, [{a}], {v};"),
                    o = out($class) $old, a = in(reg64) $ptr, v = in($class) $val,
                    options(nostack))
            },
            Ordering::Acquire => unsafe {
                core::arch::asm!(
                    concat!("atom.acquire.", $scope, ".", $op, ".", $ty, " {o}, [{a}], {v};"),
                    o = out($class) $old, a = in(reg64) $ptr, v = in($class) $val,
                    options(nostack))
            },
            Ordering::AcqRel => unsafe {
                core::arch::asm!(
                    concat!("atom.acq_rel.", $scope, ".", $op, ".", $ty, " {o}, [{a}], {v};"),
                    o = out($class) $old, a = in(reg64) $ptr, v = in($class) $val,
                    options(nostack))
            },
            _ => unsafe {
                core::arch::asm!(
                    concat!("fence.sc.", $scope, ";\n\tatom.acquire.", $scope, ".", $op, ".", $ty,
                        " {o}, [{a}], {v};"),
                    o = out($class) $old, a = in(reg64) $ptr, v = in($class) $val,
                    options(nostack))
            },
        }
    };
}

/// `atomic_fetch_<op>_<type>_{block,device,system}`: one function per scope.
macro_rules! fetch {
    (@one $what:ident, $op:literal, $t:ty, $ty:literal, $class:ident, $map:path, $name:ident,
     $scope:literal, $scope_name:literal) => {
        #[doc = concat!("Atomic `", stringify!($what), "` of `val` into `*ptr` at ", $scope_name,
            " scope with `ordering`; returns the value before (PTX `atom.<sem>.", $scope, ".",
            $op, ".", $ty, "`", fetch!(@note $what), ").")]
        ///
        /// # Safety
        /// See the [module docs](self): `ptr` valid, aligned, in global or shared memory; the
        /// scope covers every thread that accesses `*ptr` concurrently.
        #[inline(always)]
        #[crate::gpu_only]
        pub unsafe fn $name(ptr: *mut $t, ordering: Ordering, val: $t) -> $t {
            let operand: $t = $map(val);
            let old: $t;
            by_ordering!(ordering, old, $class, ptr, operand, $scope, $op, $ty);
            old
        }
    };
    (@note sub) => {
        " of `-val`"
    };
    (@note $what:ident) => {
        ""
    };
    ($($what:ident($op:literal), $t:ty, $ty:literal, $class:ident, $map:path =>
        $block:ident, $device:ident, $system:ident;)*) => {$(
        fetch!(@one $what, $op, $t, $ty, $class, $map, $block, "cta", "block");
        fetch!(@one $what, $op, $t, $ty, $class, $map, $device, "gpu", "device");
        fetch!(@one $what, $op, $t, $ty, $class, $map, $system, "sys", "system");
    )*};
}

fetch! {
    add("add"), u32, "u32", reg32, same =>
        atomic_fetch_add_u32_block, atomic_fetch_add_u32_device, atomic_fetch_add_u32_system;
    add("add"), u64, "u64", reg64, same =>
        atomic_fetch_add_u64_block, atomic_fetch_add_u64_device, atomic_fetch_add_u64_system;
    add("add"), i32, "s32", reg32, same =>
        atomic_fetch_add_i32_block, atomic_fetch_add_i32_device, atomic_fetch_add_i32_system;
    add("add"), i64, "u64", reg64, same =>
        atomic_fetch_add_i64_block, atomic_fetch_add_i64_device, atomic_fetch_add_i64_system;
    add("add"), f32, "f32", reg32, same =>
        atomic_fetch_add_f32_block, atomic_fetch_add_f32_device, atomic_fetch_add_f32_system;
    add("add"), f64, "f64", reg64, same =>
        atomic_fetch_add_f64_block, atomic_fetch_add_f64_device, atomic_fetch_add_f64_system;

    sub("add"), u32, "u32", reg32, Negate::negate =>
        atomic_fetch_sub_u32_block, atomic_fetch_sub_u32_device, atomic_fetch_sub_u32_system;
    sub("add"), u64, "u64", reg64, Negate::negate =>
        atomic_fetch_sub_u64_block, atomic_fetch_sub_u64_device, atomic_fetch_sub_u64_system;
    sub("add"), i32, "s32", reg32, Negate::negate =>
        atomic_fetch_sub_i32_block, atomic_fetch_sub_i32_device, atomic_fetch_sub_i32_system;
    sub("add"), i64, "u64", reg64, Negate::negate =>
        atomic_fetch_sub_i64_block, atomic_fetch_sub_i64_device, atomic_fetch_sub_i64_system;
    sub("add"), f32, "f32", reg32, Negate::negate =>
        atomic_fetch_sub_f32_block, atomic_fetch_sub_f32_device, atomic_fetch_sub_f32_system;
    sub("add"), f64, "f64", reg64, Negate::negate =>
        atomic_fetch_sub_f64_block, atomic_fetch_sub_f64_device, atomic_fetch_sub_f64_system;

    and("and"), u32, "b32", reg32, same =>
        atomic_fetch_and_u32_block, atomic_fetch_and_u32_device, atomic_fetch_and_u32_system;
    and("and"), u64, "b64", reg64, same =>
        atomic_fetch_and_u64_block, atomic_fetch_and_u64_device, atomic_fetch_and_u64_system;
    and("and"), i32, "b32", reg32, same =>
        atomic_fetch_and_i32_block, atomic_fetch_and_i32_device, atomic_fetch_and_i32_system;
    and("and"), i64, "b64", reg64, same =>
        atomic_fetch_and_i64_block, atomic_fetch_and_i64_device, atomic_fetch_and_i64_system;
    and("and"), f32, "b32", reg32, same =>
        atomic_fetch_and_f32_block, atomic_fetch_and_f32_device, atomic_fetch_and_f32_system;
    and("and"), f64, "b64", reg64, same =>
        atomic_fetch_and_f64_block, atomic_fetch_and_f64_device, atomic_fetch_and_f64_system;

    or("or"), u32, "b32", reg32, same =>
        atomic_fetch_or_u32_block, atomic_fetch_or_u32_device, atomic_fetch_or_u32_system;
    or("or"), u64, "b64", reg64, same =>
        atomic_fetch_or_u64_block, atomic_fetch_or_u64_device, atomic_fetch_or_u64_system;
    or("or"), i32, "b32", reg32, same =>
        atomic_fetch_or_i32_block, atomic_fetch_or_i32_device, atomic_fetch_or_i32_system;
    or("or"), i64, "b64", reg64, same =>
        atomic_fetch_or_i64_block, atomic_fetch_or_i64_device, atomic_fetch_or_i64_system;
    or("or"), f32, "b32", reg32, same =>
        atomic_fetch_or_f32_block, atomic_fetch_or_f32_device, atomic_fetch_or_f32_system;
    or("or"), f64, "b64", reg64, same =>
        atomic_fetch_or_f64_block, atomic_fetch_or_f64_device, atomic_fetch_or_f64_system;

    xor("xor"), u32, "b32", reg32, same =>
        atomic_fetch_xor_u32_block, atomic_fetch_xor_u32_device, atomic_fetch_xor_u32_system;
    xor("xor"), u64, "b64", reg64, same =>
        atomic_fetch_xor_u64_block, atomic_fetch_xor_u64_device, atomic_fetch_xor_u64_system;
    xor("xor"), i32, "b32", reg32, same =>
        atomic_fetch_xor_i32_block, atomic_fetch_xor_i32_device, atomic_fetch_xor_i32_system;
    xor("xor"), i64, "b64", reg64, same =>
        atomic_fetch_xor_i64_block, atomic_fetch_xor_i64_device, atomic_fetch_xor_i64_system;
    xor("xor"), f32, "b32", reg32, same =>
        atomic_fetch_xor_f32_block, atomic_fetch_xor_f32_device, atomic_fetch_xor_f32_system;
    xor("xor"), f64, "b64", reg64, same =>
        atomic_fetch_xor_f64_block, atomic_fetch_xor_f64_device, atomic_fetch_xor_f64_system;

    exch("exch"), u32, "b32", reg32, same =>
        atomic_fetch_exch_u32_block, atomic_fetch_exch_u32_device, atomic_fetch_exch_u32_system;
    exch("exch"), u64, "b64", reg64, same =>
        atomic_fetch_exch_u64_block, atomic_fetch_exch_u64_device, atomic_fetch_exch_u64_system;
    exch("exch"), i32, "b32", reg32, same =>
        atomic_fetch_exch_i32_block, atomic_fetch_exch_i32_device, atomic_fetch_exch_i32_system;
    exch("exch"), i64, "b64", reg64, same =>
        atomic_fetch_exch_i64_block, atomic_fetch_exch_i64_device, atomic_fetch_exch_i64_system;
    exch("exch"), f32, "b32", reg32, same =>
        atomic_fetch_exch_f32_block, atomic_fetch_exch_f32_device, atomic_fetch_exch_f32_system;
    exch("exch"), f64, "b64", reg64, same =>
        atomic_fetch_exch_f64_block, atomic_fetch_exch_f64_device, atomic_fetch_exch_f64_system;

    min("min"), u32, "u32", reg32, same =>
        atomic_fetch_min_u32_block, atomic_fetch_min_u32_device, atomic_fetch_min_u32_system;
    min("min"), u64, "u64", reg64, same =>
        atomic_fetch_min_u64_block, atomic_fetch_min_u64_device, atomic_fetch_min_u64_system;
    min("min"), i32, "s32", reg32, same =>
        atomic_fetch_min_i32_block, atomic_fetch_min_i32_device, atomic_fetch_min_i32_system;
    min("min"), i64, "s64", reg64, same =>
        atomic_fetch_min_i64_block, atomic_fetch_min_i64_device, atomic_fetch_min_i64_system;

    max("max"), u32, "u32", reg32, same =>
        atomic_fetch_max_u32_block, atomic_fetch_max_u32_device, atomic_fetch_max_u32_system;
    max("max"), u64, "u64", reg64, same =>
        atomic_fetch_max_u64_block, atomic_fetch_max_u64_device, atomic_fetch_max_u64_system;
    max("max"), i32, "s32", reg32, same =>
        atomic_fetch_max_i32_block, atomic_fetch_max_i32_device, atomic_fetch_max_i32_system;
    max("max"), i64, "s64", reg64, same =>
        atomic_fetch_max_i64_block, atomic_fetch_max_i64_device, atomic_fetch_max_i64_system;
}

/// `atomic_load_<bits>_<scope>` and `atomic_store_<bits>_<scope>`.
macro_rules! load_store {
    ($($t:ty, $ty:literal, $class:ident, $scope:literal, $scope_name:literal =>
        $load:ident, $store:ident;)*) => {$(
        #[doc = concat!("Atomic load of `*ptr` at ", $scope_name, " scope with `ordering` ",
            "(PTX `ld.relaxed.", $scope, ".", $ty, "` or `ld.acquire.", $scope, ".", $ty,
            "`, after a `fence.sc.", $scope, "` for `SeqCst`).")]
        ///
        /// # Panics
        /// Traps for `Release` and `AcqRel`, which a load cannot have.
        ///
        /// # Safety
        /// See the [module docs](self).
        #[inline(always)]
        #[crate::gpu_only]
        pub unsafe fn $load(ptr: *mut $t, ordering: Ordering) -> $t {
            let value: $t;
            // SAFETY (every arm): the caller guarantees a valid, aligned global or shared
            // address; the asm clobbers memory so accesses stay on their side.
            match ordering {
                Ordering::Relaxed => unsafe {
                    core::arch::asm!(
                        concat!("ld.relaxed.", $scope, ".", $ty, " {v}, [{a}];"),
                        v = out($class) value, a = in(reg64) ptr, options(nostack))
                },
                Ordering::Acquire => unsafe {
                    core::arch::asm!(
                        concat!("ld.acquire.", $scope, ".", $ty, " {v}, [{a}];"),
                        v = out($class) value, a = in(reg64) ptr, options(nostack))
                },
                Ordering::Release | Ordering::AcqRel => panic!("Invalid Ordering for atomic load"),
                _ => unsafe {
                    core::arch::asm!(
                        concat!("fence.sc.", $scope, ";\n\tld.acquire.", $scope, ".", $ty,
                            " {v}, [{a}];"),
                        v = out($class) value, a = in(reg64) ptr, options(nostack))
                },
            }
            value
        }

        #[doc = concat!("Atomic store of `val` to `*ptr` at ", $scope_name, " scope with ",
            "`ordering` (PTX `st.relaxed.", $scope, ".", $ty, "` or `st.release.", $scope, ".",
            $ty, "`; `fence.sc.", $scope, "` then the relaxed store for `SeqCst`).")]
        ///
        /// # Panics
        /// Traps for `Acquire` and `AcqRel`, which a store cannot have.
        ///
        /// # Safety
        /// See the [module docs](self).
        #[inline(always)]
        #[crate::gpu_only]
        pub unsafe fn $store(ptr: *mut $t, ordering: Ordering, val: $t) {
            // SAFETY (every arm): as for the load.
            match ordering {
                Ordering::Relaxed => unsafe {
                    core::arch::asm!(
                        concat!("st.relaxed.", $scope, ".", $ty, " [{a}], {v};"),
                        v = in($class) val, a = in(reg64) ptr, options(nostack))
                },
                Ordering::Release => unsafe {
                    core::arch::asm!(
                        concat!("st.release.", $scope, ".", $ty, " [{a}], {v};"),
                        v = in($class) val, a = in(reg64) ptr, options(nostack))
                },
                Ordering::Acquire | Ordering::AcqRel => {
                    panic!("Invalid Ordering for atomic store")
                }
                _ => unsafe {
                    core::arch::asm!(
                        concat!("fence.sc.", $scope, ";\n\tst.relaxed.", $scope, ".", $ty,
                            " [{a}], {v};"),
                        v = in($class) val, a = in(reg64) ptr, options(nostack))
                },
            }
        }
    )*};
}

load_store! {
    u32, "b32", reg32, "cta", "block" => atomic_load_32_block, atomic_store_32_block;
    u64, "b64", reg64, "cta", "block" => atomic_load_64_block, atomic_store_64_block;
    u32, "b32", reg32, "gpu", "device" => atomic_load_32_device, atomic_store_32_device;
    u64, "b64", reg64, "gpu", "device" => atomic_load_64_device, atomic_store_64_device;
    u32, "b32", reg32, "sys", "system" => atomic_load_32_system, atomic_store_32_system;
    u64, "b64", reg64, "sys", "system" => atomic_load_64_system, atomic_store_64_system;
}

/// `<scope>_thread_fence(ordering)`.
macro_rules! fence {
    ($($name:ident, $scope:literal, $scope_name:literal;)*) => {$(
        #[doc = concat!("A memory fence at ", $scope_name, " scope: nothing for `Relaxed`, ",
            "PTX `fence.acq_rel.", $scope, "` for `Acquire`, `Release` and `AcqRel`, `fence.sc.",
            $scope, "` for `SeqCst`.")]
        #[inline(always)]
        #[crate::gpu_only]
        pub fn $name(ordering: Ordering) {
            // SAFETY (both arms): a fence has no preconditions; it clobbers memory so
            // accesses stay on their side.
            match ordering {
                Ordering::Relaxed => {}
                Ordering::Acquire | Ordering::Release | Ordering::AcqRel => unsafe {
                    core::arch::asm!(concat!("fence.acq_rel.", $scope, ";"), options(nostack))
                },
                _ => unsafe {
                    core::arch::asm!(concat!("fence.sc.", $scope, ";"), options(nostack))
                },
            }
        }
    )*};
}

fence! {
    block_thread_fence, "cta", "block";
    device_thread_fence, "gpu", "device";
    system_thread_fence, "sys", "system";
}
