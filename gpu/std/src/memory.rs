//! Global-memory load variants and the SM clock.

/// `__ldg(address)`: loads an `f32` through the read-only (non-coherent texture) data path,
/// PTX `ld.global.nc.f32`.
///
/// # Safety
/// `address` is a valid, aligned pointer into global memory that no thread writes during the
/// launch.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn load_global_nc(address: *const f32) -> f32 {
    let value: f32;
    // SAFETY: the caller guarantees a valid global address that is read-only for this launch;
    // `cvta.to.global` converts the generic pointer to the global state space.
    unsafe {
        core::arch::asm!(
            "cvta.to.global.u64 {g}, {a};\n\tld.global.nc.f32 {v}, [{g}];",
            v = out(reg32) value, a = in(reg64) address, g = out(reg64) _,
            options(pure, readonly, nostack));
    }
    value
}

/// Loads an `f32` with an explicit cache operator: `ld.global.ca` (cached in L1 and L2, the
/// default) or `ld.global.cg` (L2 only, bypassing L1).
macro_rules! cached_load {
    ($(#[$meta:meta])* $name:ident, $op:literal) => {
        $(#[$meta])*
        ///
        /// # Safety
        /// `address` is a valid, 4-byte aligned pointer into global memory that no thread
        /// writes during the launch.
        #[inline(always)]
        #[crate::gpu_only]
        pub unsafe fn $name(address: *const f32) -> f32 {
            let value: f32;
            // SAFETY: the caller guarantees a valid global address that is read-only for this
            // launch; `cvta.to.global` converts the generic pointer to the global state space.
            unsafe {
                core::arch::asm!(
                    concat!("cvta.to.global.u64 {g}, {a};\n\t", $op, " {v}, [{g}];"),
                    v = out(reg32) value, a = in(reg64) address, g = out(reg64) _,
                    options(pure, readonly, nostack));
            }
            value
        }
    };
}

cached_load!(
    /// `ld.global.ca.f32`: a load cached in L1 and L2 (the seed's "缓存加载", 128-byte lines).
    load_global_ca,
    "ld.global.ca.f32"
);
cached_load!(
    /// `ld.global.cg.f32`: a load cached in L2 only (the seed's "非缓存加载", 32-byte sectors).
    load_global_cg,
    "ld.global.cg.f32"
);

/// `tex1Dfetch<float>(texture, index)`: one element of single-channel `f32` linear memory
/// through the texture unit (PTX `tex.1d.v4.f32.s32`; the first of the four components is the
/// value). `texture` is a texture object handle (`cuTexObjectCreate`), passed to the kernel as
/// a `u64`.
///
/// # Safety
/// `texture` is a live texture object over single-channel `f32` linear memory. Indices out of
/// range read 0 (the texture unit clamps; nothing is accessed out of bounds).
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn tex1d_fetch_f32(texture: u64, index: i32) -> f32 {
    let value: f32;
    // SAFETY: the caller guarantees a live texture object; the texture unit bounds-checks the
    // coordinate against the object's width.
    unsafe {
        core::arch::asm!(
            "tex.1d.v4.f32.s32 {{{v}, {b}, {c}, {d}}}, [{t}, {{{i}}}];",
            v = out(reg32) value, b = out(reg32) _, c = out(reg32) _, d = out(reg32) _,
            t = in(reg64) texture, i = in(reg32) index,
            options(pure, readonly, nostack));
    }
    value
}

/// The SM's 64-bit cycle counter (`clock64()`, PTX `%clock64`). Differences between two reads
/// on the same SM count SM clock cycles.
#[inline(always)]
#[crate::gpu_only]
pub fn clock64() -> u64 {
    let cycles: u64;
    // SAFETY: reads a special register. Not `pure`: each read must happen where it is written.
    unsafe { core::arch::asm!("mov.u64 {c}, %clock64;", c = out(reg64) cycles, options(nostack)) }
    cycles
}

/// The GPU's global nanosecond timer (`%globaltimer`, as `cuda::std::chrono::system_clock`
/// reads it): the same clock on every SM, for deadlines and waits measured in time rather than
/// cycles. Its resolution is about a microsecond (the register is updated every 32 ns to 1 us,
/// depending on the GPU).
#[inline(always)]
#[crate::gpu_only]
pub fn globaltimer() -> u64 {
    let ns: u64;
    // SAFETY: reads a special register. Not `pure`: each read must happen where it is written.
    unsafe { core::arch::asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) ns, options(nostack)) }
    ns
}

/// Loads four consecutive 32-bit words with one 16-byte access (`uint4` load, PTX
/// `ld.global.v4.u32`). Works on device memory and on mapped (zero-copy) host memory.
///
/// # Safety
/// `address` points into global memory, is 16-byte aligned and valid for four words.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn load_global_v4_u32(address: *const u32) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller guarantees a valid, 16-byte aligned global address; the asm does not
    // claim `pure` so it is not moved across barriers or stores.
    unsafe {
        core::arch::asm!(
            "cvta.to.global.u64 {g}, {p};\n\tld.global.v4.u32 {{{a}, {b}, {c}, {d}}}, [{g}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            p = in(reg64) address, g = out(reg64) _,
            options(readonly, nostack));
    }
    [a, b, c, d]
}

/// Loads four consecutive `f32` with one 16-byte access (`float4` load, PTX `ld.global.v4`).
///
/// # Safety
/// `address` points into global memory, is 16-byte aligned and valid for four floats.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn load_global_v4(address: *const f32) -> [f32; 4] {
    // SAFETY: forwarded; `f32` and `u32` have the same size and alignment.
    unsafe { load_global_v4_u32(address.cast()) }.map(f32::from_bits)
}

/// Stores four consecutive 32-bit words with one 16-byte access (`uint4` store, PTX
/// `st.global.v4.u32`). Works on device memory and on mapped (zero-copy) host memory.
///
/// # Safety
/// `address` points into global memory, is 16-byte aligned and valid for four words, and no
/// other thread accesses them concurrently.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn store_global_v4_u32(address: *mut u32, value: [u32; 4]) {
    // SAFETY: the caller guarantees a valid, 16-byte aligned, exclusively owned global address.
    unsafe {
        core::arch::asm!(
            "cvta.to.global.u64 {g}, {p};\n\tst.global.v4.u32 [{g}], {{{a}, {b}, {c}, {d}}};",
            a = in(reg32) value[0], b = in(reg32) value[1], c = in(reg32) value[2], d = in(reg32) value[3],
            p = in(reg64) address, g = out(reg64) _,
            options(nostack));
    }
}

/// Stores four consecutive `f32` with one 16-byte access (`float4` store, PTX `st.global.v4`).
///
/// # Safety
/// As [`store_global_v4_u32`].
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn store_global_v4(address: *mut f32, value: [f32; 4]) {
    // SAFETY: forwarded; `f32` and `u32` have the same size and alignment.
    unsafe { store_global_v4_u32(address.cast(), value.map(f32::to_bits)) }
}

/// Loads four consecutive 32-bit words with one 16-byte access through the read-only data
/// path (PTX `ld.global.nc.v4.u32`, CUDA's `__ldg` of an `int4`/`float4`). The caller
/// reinterprets the bits (`i32::from_ne_bytes`, `f32::from_bits`).
///
/// # Safety
/// `address` points into global memory, is 16-byte aligned, is valid for four words, and no
/// thread writes them during the launch.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn load_global_nc_v4_u32(address: *const u32) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller guarantees a valid, 16-byte aligned global address that is read-only
    // for this launch, so the load may be treated as pure.
    unsafe {
        core::arch::asm!(
            "cvta.to.global.u64 {g}, {p};\n\tld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [{g}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            p = in(reg64) address, g = out(reg64) _,
            options(pure, readonly, nostack));
    }
    [a, b, c, d]
}

/// Types with a relaxed, GPU-scope global load ([`load_relaxed_gpu`]).
pub trait RelaxedLoad: Copy {
    /// `ld.relaxed.gpu.global` of one value.
    ///
    /// # Safety
    /// As [`load_relaxed_gpu`].
    unsafe fn ld_relaxed_gpu(address: *const Self) -> Self;
}

macro_rules! relaxed_load_impl {
    ($($t:ty => $ptx:literal, $class:ident;)*) => {$(
        impl RelaxedLoad for $t {
            #[inline(always)]
            #[crate::gpu_only]
            unsafe fn ld_relaxed_gpu(address: *const Self) -> Self {
                let value: $t;
                // SAFETY: the caller guarantees a valid, aligned global address; not `pure`
                // or `readonly`-movable past barriers: the asm clobbers memory.
                unsafe {
                    core::arch::asm!(
                        concat!("cvta.to.global.u64 {g}, {p};\n\tld.relaxed.gpu.global.", $ptx, " {v}, [{g}];"),
                        v = out($class) value, p = in(reg64) address, g = out(reg64) _,
                        options(nostack));
                }
                value
            }
        }
    )*};
}
relaxed_load_impl! {
    u32 => "b32", reg32;
    i32 => "b32", reg32;
    f32 => "b32", reg32;
    u64 => "b64", reg64;
    f64 => "b64", reg64;
}

/// A relaxed load at GPU scope (PTX `ld.relaxed.gpu.global`, `cuda::atomic_ref<T,
/// thread_scope_device>::load(memory_order_relaxed)`): a strong load served by the L2, never
/// by a stale L1 line, that the hardware may keep in flight with others (unlike
/// `ld.volatile`). `u32`, `i32`, `f32` and `f64`.
///
/// # Safety
/// `address` is valid for reads, aligned for `T`, and in global memory.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn load_relaxed_gpu<T: RelaxedLoad>(address: *const T) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::ld_relaxed_gpu(address) }
}

/// [`load_relaxed_gpu`] of any [`Pod`](crate::Pod) value, one relaxed load per 64-bit word when
/// `T` is 8-byte aligned and a multiple of 8 bytes, else per 32-bit word: what the last block of a
/// device-wide reduction reads the other blocks' partials with. Each word is single-copy
/// atomic, the value as a whole is not: read it only after an acquire that orders it after its
/// writer (the ticket of [`reduce::device_reduce`](crate::reduce::device_reduce)).
///
/// # Safety
/// `address` is valid for reads of a `T`, aligned for `T`, and in global memory.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn load_relaxed_gpu_words<T: crate::Pod>(address: *const T) -> T {
    let mut out = core::mem::MaybeUninit::<T>::uninit();
    // SAFETY: `T: Pod` is whole words without padding (8-byte words when its alignment and size
    // allow), every bit pattern is a value, and the caller's address is valid and aligned.
    unsafe {
        if align_of::<T>() >= 8 && size_of::<T>().is_multiple_of(8) {
            let (src, dst) = (address.cast::<u64>(), out.as_mut_ptr().cast::<u64>());
            let mut w = 0;
            while w < size_of::<T>() / 8 {
                dst.add(w).write(load_relaxed_gpu(src.add(w)));
                w += 1;
            }
        } else {
            let (src, dst) = (address.cast::<u32>(), out.as_mut_ptr().cast::<u32>());
            let mut w = 0;
            while w < size_of::<T>() / 4 {
                dst.add(w).write(load_relaxed_gpu(src.add(w)));
                w += 1;
            }
        }
        out.assume_init()
    }
}

/// Starts a copy of 16 bytes from global to shared memory that does not pass through the
/// thread's registers (PTX `cp.async.cg.shared.global` on sm_80 and newer, CUDA's
/// `__pipeline_memcpy_async` of 16 bytes; cached in L2 only): the thread goes on at once, and
/// the bytes land in shared memory by the next [`copy_async_wait_all`] of this thread. Before
/// sm_80 it is a 16-byte load and a shared store, done when it returns.
///
/// `shared` is a shared-window address
/// ([`DynamicShared::shared_address`](crate::DynamicShared::shared_address) or
/// [`SharedArray`](crate::SharedArray)'s, plus an offset).
///
/// # Safety
/// `global` points into global memory, 16-byte aligned, valid for 16 bytes that no thread
/// writes before the copy completes; `shared` is a 16-byte aligned shared-window address valid
/// for 16 bytes that nothing reads or writes until this thread's [`copy_async_wait_all`] (and,
/// for other threads, a barrier after it).
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn copy_async_16(shared: u32, global: *const u8) {
    // SAFETY: the caller's contract; not `nomem`: the asm writes shared memory.
    unsafe {
        #[cfg(target_feature = "sm_80")]
        core::arch::asm!(
            "cvta.to.global.u64 {g}, {p};\n\tcp.async.cg.shared.global [{s}], [{g}], 16;",
            s = in(reg32) shared, p = in(reg64) global, g = out(reg64) _,
            options(nostack));
        #[cfg(not(target_feature = "sm_80"))]
        core::arch::asm!(
            "{{ .reg .b32 a, b, c, d;\n\tcvta.to.global.u64 {g}, {p};\n\t\
             ld.global.v4.u32 {{a, b, c, d}}, [{g}];\n\tst.shared.v4.u32 [{s}], {{a, b, c, d}}; }}",
            s = in(reg32) shared, p = in(reg64) global, g = out(reg64) _,
            options(nostack));
    }
}

/// Waits until every [`copy_async_16`] this thread started has landed in shared memory (PTX
/// `cp.async.wait_all`, which also commits them; nothing before sm_80, whose copies are done
/// when they return). Other threads see the bytes after a barrier that follows it.
#[inline(always)]
#[crate::gpu_only]
pub fn copy_async_wait_all() {
    // SAFETY: waits for this thread's own copies; not `nomem`, so no shared access moves
    // across it.
    #[cfg(target_feature = "sm_80")]
    unsafe {
        core::arch::asm!("cp.async.wait_all;", options(nostack));
    }
}

/// Closes this thread's batch of [`copy_async_16`] calls started since the last commit (PTX
/// `cp.async.commit_group`), for [`copy_async_wait_prior`] to wait on; nothing before sm_80.
#[inline(always)]
#[crate::gpu_only]
pub fn copy_async_commit() {
    // SAFETY: only groups this thread's pending copies.
    #[cfg(target_feature = "sm_80")]
    unsafe {
        core::arch::asm!("cp.async.commit_group;", options(nostack));
    }
}

/// Waits until at most `N` of this thread's committed batches ([`copy_async_commit`]) are still
/// in flight, the older ones having landed in shared memory (PTX `cp.async.wait_group N`);
/// nothing before sm_80. Other threads see the bytes after a barrier that follows it.
#[inline(always)]
#[crate::gpu_only]
pub fn copy_async_wait_prior<const N: u32>() {
    // SAFETY: waits for this thread's own copies; not `nomem`.
    #[cfg(target_feature = "sm_80")]
    unsafe {
        core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack));
    }
}

/// Loads 16 bytes from shared memory at the shared-window address `shared` (PTX
/// `ld.shared.v4.u32` with a 32-bit address: half the address registers of a generic pointer's
/// arithmetic).
///
/// # Safety
/// `shared` is a 16-byte aligned shared-window address valid for 16 bytes, and no thread writes
/// them unordered with this read (a barrier between).
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn load_shared_v4_u32(shared: u32) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller's contract; not `pure`, so it is not moved across barriers.
    unsafe {
        core::arch::asm!(
            "ld.shared.v4.u32 {{{a}, {b}, {c}, {d}}}, [{s}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            s = in(reg32) shared,
            options(readonly, nostack));
    }
    [a, b, c, d]
}

/// Stores 16 bytes to shared memory at the shared-window address `shared` (PTX
/// `st.shared.v4.u32` with a 32-bit address).
///
/// # Safety
/// `shared` is a 16-byte aligned shared-window address valid for 16 bytes, and no other thread
/// accesses them unordered with this write.
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn store_shared_v4_u32(shared: u32, value: [u32; 4]) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "st.shared.v4.u32 [{s}], {{{a}, {b}, {c}, {d}}};",
            a = in(reg32) value[0], b = in(reg32) value[1],
            c = in(reg32) value[2], d = in(reg32) value[3],
            s = in(reg32) shared,
            options(nostack));
    }
}
