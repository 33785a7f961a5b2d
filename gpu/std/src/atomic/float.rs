//! cuda_std 0.2's atomic floats: `AtomicF32`, `AtomicF64` and their block- and system-scoped
//! twins, under cuda_std's names and signatures.

use core::cell::UnsafeCell;
use core::sync::atomic::Ordering;

use core::sync::atomic::{AtomicU32, AtomicU64};

use super::mid;

/// The ordering of the load that a failed compare-exchange of the host emulation does
/// (`Release` and `AcqRel` are not allowed there).
#[inline(always)]
fn fail_order(order: Ordering) -> Ordering {
    match order {
        Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
        Ordering::Acquire | Ordering::AcqRel => Ordering::Acquire,
        _ => Ordering::SeqCst,
    }
}

/// Whether `ptr` points into this thread's local memory (PTX `isspacep.local`), where PTX
/// atomics are undefined: an atomic float that lives on a kernel's stack. Only this thread can
/// reach local memory, so a plain read-modify-write is atomic there.
#[inline(always)]
#[crate::gpu_only]
fn is_local<T>(ptr: *const T) -> bool {
    let local: u32;
    // SAFETY: `isspacep` inspects the address only; no memory is accessed.
    unsafe {
        core::arch::asm!(
            "{{\n\t.reg .pred p;\n\tisspacep.local p, {a};\n\tselp.u32 {r}, 1, 0, p;\n\t}}",
            a = in(reg64) ptr.addr() as u64, r = out(reg32) local,
            options(pure, nomem, nostack));
    }
    local != 0
}

macro_rules! atomic_float {
    (@safety $unsafety:ident) => {
        concat!(
            "\n# Safety\n`", stringify!($unsafety), "` because the operation is atomic within ",
            "one block only: every thread that accesses this value while others may is in the ",
            "same block."
        )
    };
    (
        $(#[$meta:meta])*
        $atomic:ident($float:ident, $host:ident, $align:literal)
        $(unsafe: $unsafety:ident)?
        {
            add: $add:path, sub: $sub:path, and: $and:path, or: $or:path, xor: $xor:path,
            load: $load:path, store: $store:path $(,)?
        }
    ) => {
        $(#[$meta])*
        ///
        /// The value is stored as the plain float (`#[repr(C)]`, aligned to its size), so a
        #[doc = concat!("`*mut ", stringify!($float), "` into device memory can be viewed as `&",
            stringify!($atomic), "` (`&*ptr.cast()`).")]
        ///
        /// On the GPU every operation is one PTX instruction (`atom`, `ld`, `st` with the
        /// ordering's semantics, see [`mid`](super::mid)); an instance on a kernel's stack (local
        /// memory, where PTX atomics are undefined) is updated with plain loads and stores,
        /// which only its thread can reach. On the host the operations are emulated with
        /// `core`'s atomics on the bits, as in cuda_std.
        #[repr(C, align($align))]
        pub struct $atomic {
            v: UnsafeCell<$float>,
        }

        // SAFETY: every access to `v` is atomic (or, in local memory, private to one thread).
        unsafe impl Sync for $atomic {}

        impl $atomic {
            /// A new atomic float holding `v`.
            #[inline(always)]
            pub const fn new(v: $float) -> Self {
                Self { v: UnsafeCell::new(v) }
            }

            /// Consumes the atomic and returns its value.
            #[inline(always)]
            pub fn into_inner(self) -> $float {
                self.v.into_inner()
            }

            /// The bits as `core`'s atomic integer (the host emulation).
            #[inline(always)]
            fn bits(&self) -> &$host {
                // SAFETY: `v` is valid for the life of `&self`, aligned to the integer's size
                // (`repr(align)` above), and only ever accessed atomically.
                unsafe { $host::from_ptr(self.v.get().cast()) }
            }

            /// Host emulation of a read-modify-write: a compare-exchange loop on the bits.
            #[inline(always)]
            fn update(&self, order: Ordering, f: impl Fn($float) -> $float) -> $float {
                let previous = self
                    .bits()
                    .fetch_update(order, fail_order(order), |b| {
                        Some(f($float::from_bits(b)).to_bits())
                    })
                    .unwrap_or_else(|b| b);
                $float::from_bits(previous)
            }

            /// Device read-modify-write: `atomic` on global or shared memory; on this thread's
            /// local memory `plain` (old value to new value), not atomic.
            #[inline(always)]
            fn rmw(
                &self,
                atomic: impl FnOnce(*mut $float) -> $float,
                plain: impl FnOnce($float) -> $float,
            ) -> $float {
                let ptr = self.v.get();
                if is_local(ptr) {
                    // SAFETY: `ptr` is valid and aligned (from `&self`), and local memory is
                    // private to this thread: no other access races.
                    unsafe {
                        let old = ptr.read();
                        ptr.write(plain(old));
                        old
                    }
                } else {
                    atomic(ptr)
                }
            }

            /// Adds `val`; returns the value before the addition.
            $(#[doc = atomic_float!(@safety $unsafety)])?
            #[inline(always)]
            pub $($unsafety)? fn fetch_add(&self, val: $float, order: Ordering) -> $float {
                if cfg!(target_arch = "nvptx64") {
                    // SAFETY: `p` is valid, aligned (from `&self`) and not local, so global or
                    // shared; the scope's contract is the type's.
                    self.rmw(|p| unsafe { $add(p, order, val) }, |v| v + val)
                } else {
                    self.update(order, |v| v + val)
                }
            }

            /// Subtracts `val` (adds `-val`: PTX has no atomic subtraction); returns the value
            /// before.
            $(#[doc = atomic_float!(@safety $unsafety)])?
            #[inline(always)]
            pub $($unsafety)? fn fetch_sub(&self, val: $float, order: Ordering) -> $float {
                if cfg!(target_arch = "nvptx64") {
                    // SAFETY: as in `fetch_add`.
                    self.rmw(|p| unsafe { $sub(p, order, val) }, |v| v - val)
                } else {
                    self.update(order, |v| v - val)
                }
            }

            /// Bitwise "and" of the bits with `val`'s; returns the value before.
            $(#[doc = atomic_float!(@safety $unsafety)])?
            #[inline(always)]
            pub $($unsafety)? fn fetch_and(&self, val: $float, order: Ordering) -> $float {
                if cfg!(target_arch = "nvptx64") {
                    // SAFETY: as in `fetch_add`.
                    self.rmw(|p| unsafe { $and(p, order, val) }, |v| {
                        $float::from_bits(v.to_bits() & val.to_bits())
                    })
                } else {
                    $float::from_bits(self.bits().fetch_and(val.to_bits(), order))
                }
            }

            /// Bitwise "or" of the bits with `val`'s; returns the value before.
            $(#[doc = atomic_float!(@safety $unsafety)])?
            #[inline(always)]
            pub $($unsafety)? fn fetch_or(&self, val: $float, order: Ordering) -> $float {
                if cfg!(target_arch = "nvptx64") {
                    // SAFETY: as in `fetch_add`.
                    self.rmw(|p| unsafe { $or(p, order, val) }, |v| {
                        $float::from_bits(v.to_bits() | val.to_bits())
                    })
                } else {
                    $float::from_bits(self.bits().fetch_or(val.to_bits(), order))
                }
            }

            /// Bitwise "xor" of the bits with `val`'s; returns the value before.
            $(#[doc = atomic_float!(@safety $unsafety)])?
            #[inline(always)]
            pub $($unsafety)? fn fetch_xor(&self, val: $float, order: Ordering) -> $float {
                if cfg!(target_arch = "nvptx64") {
                    // SAFETY: as in `fetch_add`.
                    self.rmw(|p| unsafe { $xor(p, order, val) }, |v| {
                        $float::from_bits(v.to_bits() ^ val.to_bits())
                    })
                } else {
                    $float::from_bits(self.bits().fetch_xor(val.to_bits(), order))
                }
            }

            /// Atomically loads the value. `order` is `Relaxed`, `Acquire` or `SeqCst`.
            ///
            /// # Panics
            /// If `order` is `Release` or `AcqRel` (on the GPU: the kernel traps).
            $(#[doc = atomic_float!(@safety $unsafety)])?
            #[inline(always)]
            pub $($unsafety)? fn load(&self, order: Ordering) -> $float {
                if cfg!(target_arch = "nvptx64") {
                    let ptr = self.v.get();
                    if is_local(ptr) {
                        // SAFETY: valid and aligned; local memory is private to this thread.
                        unsafe { ptr.read() }
                    } else {
                        // SAFETY: valid, aligned, global or shared (as in `fetch_add`).
                        $float::from_bits(unsafe { $load(ptr.cast(), order) })
                    }
                } else {
                    $float::from_bits(self.bits().load(order))
                }
            }

            /// Atomically stores `val`. `order` is `Relaxed`, `Release` or `SeqCst`.
            ///
            /// # Panics
            /// If `order` is `Acquire` or `AcqRel` (on the GPU: the kernel traps).
            $(#[doc = atomic_float!(@safety $unsafety)])?
            #[inline(always)]
            pub $($unsafety)? fn store(&self, val: $float, order: Ordering) {
                if cfg!(target_arch = "nvptx64") {
                    let ptr = self.v.get();
                    if is_local(ptr) {
                        // SAFETY: valid and aligned; local memory is private to this thread.
                        unsafe { ptr.write(val) }
                    } else {
                        // SAFETY: valid, aligned, global or shared (as in `fetch_add`).
                        unsafe { $store(ptr.cast(), order, val.to_bits()) }
                    }
                } else {
                    self.bits().store(val.to_bits(), order)
                }
            }
        }
    };
}

atomic_float! {
    /// A 32-bit float shared between threads, atomic across the GPU (device scope, PTX `.gpu`):
    /// cuda_std's `AtomicF32`.
    AtomicF32(f32, AtomicU32, 4) {
        add: mid::atomic_fetch_add_f32_device, sub: mid::atomic_fetch_sub_f32_device,
        and: mid::atomic_fetch_and_f32_device, or: mid::atomic_fetch_or_f32_device,
        xor: mid::atomic_fetch_xor_f32_device,
        load: mid::atomic_load_32_device, store: mid::atomic_store_32_device,
    }
}

atomic_float! {
    /// A 64-bit float shared between threads, atomic across the GPU (device scope, PTX `.gpu`):
    /// cuda_std's `AtomicF64`.
    AtomicF64(f64, AtomicU64, 8) {
        add: mid::atomic_fetch_add_f64_device, sub: mid::atomic_fetch_sub_f64_device,
        and: mid::atomic_fetch_and_f64_device, or: mid::atomic_fetch_or_f64_device,
        xor: mid::atomic_fetch_xor_f64_device,
        load: mid::atomic_load_64_device, store: mid::atomic_store_64_device,
    }
}

atomic_float! {
    /// A 32-bit float atomic within one block (block scope, PTX `.cta`): cuda_std's
    /// `BlockAtomicF32`. Its operations are `unsafe`: only threads of one block may share it.
    BlockAtomicF32(f32, AtomicU32, 4) unsafe: unsafe {
        add: mid::atomic_fetch_add_f32_block, sub: mid::atomic_fetch_sub_f32_block,
        and: mid::atomic_fetch_and_f32_block, or: mid::atomic_fetch_or_f32_block,
        xor: mid::atomic_fetch_xor_f32_block,
        load: mid::atomic_load_32_block, store: mid::atomic_store_32_block,
    }
}

atomic_float! {
    /// A 64-bit float atomic within one block (block scope, PTX `.cta`): cuda_std's
    /// `BlockAtomicF64`. Its operations are `unsafe`: only threads of one block may share it.
    BlockAtomicF64(f64, AtomicU64, 8) unsafe: unsafe {
        add: mid::atomic_fetch_add_f64_block, sub: mid::atomic_fetch_sub_f64_block,
        and: mid::atomic_fetch_and_f64_block, or: mid::atomic_fetch_or_f64_block,
        xor: mid::atomic_fetch_xor_f64_block,
        load: mid::atomic_load_64_block, store: mid::atomic_store_64_block,
    }
}

atomic_float! {
    /// A 32-bit float atomic across the system: the GPU, the host and peer GPUs (system scope,
    /// PTX `.sys`), for values in mapped host memory or reached through peer access:
    /// cuda_std's `SystemAtomicF32` (whose 0.2.2 implementation uses device scope; this one
    /// uses the scope its name promises).
    SystemAtomicF32(f32, AtomicU32, 4) {
        add: mid::atomic_fetch_add_f32_system, sub: mid::atomic_fetch_sub_f32_system,
        and: mid::atomic_fetch_and_f32_system, or: mid::atomic_fetch_or_f32_system,
        xor: mid::atomic_fetch_xor_f32_system,
        load: mid::atomic_load_32_system, store: mid::atomic_store_32_system,
    }
}

atomic_float! {
    /// A 64-bit float atomic across the system (system scope, PTX `.sys`): cuda_std's
    /// `SystemAtomicF64` (device scope in 0.2.2; system scope here).
    SystemAtomicF64(f64, AtomicU64, 8) {
        add: mid::atomic_fetch_add_f64_system, sub: mid::atomic_fetch_sub_f64_system,
        and: mid::atomic_fetch_and_f64_system, or: mid::atomic_fetch_or_f64_system,
        xor: mid::atomic_fetch_xor_f64_system,
        load: mid::atomic_load_64_system, store: mid::atomic_store_64_system,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_emulation_matches_the_operations() {
        let a = AtomicF32::new(1.5);
        assert_eq!(a.fetch_add(2.0, Ordering::Relaxed), 1.5);
        assert_eq!(a.fetch_sub(0.5, Ordering::AcqRel), 3.5);
        assert_eq!(a.load(Ordering::SeqCst), 3.0);
        a.store(-0.0, Ordering::Release);
        assert_eq!(
            a.fetch_and(f32::from_bits(0x7fff_ffff), Ordering::SeqCst)
                .to_bits(),
            0x8000_0000
        );
        assert_eq!(a.load(Ordering::Acquire).to_bits(), 0);
        assert_eq!(
            a.fetch_or(f32::from_bits(0x3f80_0000), Ordering::Relaxed),
            0.0
        );
        assert_eq!(
            a.fetch_xor(f32::from_bits(0x8000_0000), Ordering::Relaxed),
            1.0
        );
        assert_eq!(a.into_inner(), -1.0);

        let b = AtomicF64::new(0.25);
        assert_eq!(b.fetch_add(0.5, Ordering::SeqCst), 0.25);
        assert_eq!(b.into_inner(), 0.75);

        let c = BlockAtomicF64::new(2.0);
        // SAFETY: one thread.
        unsafe {
            assert_eq!(c.fetch_sub(3.0, Ordering::Relaxed), 2.0);
            assert_eq!(c.load(Ordering::Relaxed), -1.0);
        }
        let s = SystemAtomicF32::new(0.0);
        s.store(4.0, Ordering::SeqCst);
        assert_eq!(s.load(Ordering::Relaxed), 4.0);
    }

    #[test]
    fn host_emulation_is_atomic_across_threads() {
        let total = AtomicF64::new(0.0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..1000 {
                        total.fetch_add(1.0, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(total.into_inner(), 4000.0);
    }

    #[test]
    #[should_panic]
    fn a_load_cannot_release() {
        AtomicF32::new(0.0).load(Ordering::Release);
    }

    #[test]
    fn layout_is_the_float() {
        assert_eq!(core::mem::size_of::<AtomicF32>(), 4);
        assert_eq!(core::mem::align_of::<AtomicF32>(), 4);
        assert_eq!(core::mem::size_of::<AtomicF64>(), 8);
        assert_eq!(core::mem::align_of::<AtomicF64>(), 8);
    }
}
