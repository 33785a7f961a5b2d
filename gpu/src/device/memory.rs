//! Global-memory load variants and the SM clock.

/// `__ldg(address)`: loads an `f32` through the read-only (non-coherent texture) data path,
/// PTX `ld.global.nc.f32`.
///
/// # Safety
/// `address` is a valid, aligned pointer into global memory that no thread writes during the
/// launch.
#[inline(always)]
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

/// The SM's 64-bit cycle counter (`clock64()`, PTX `%clock64`). Differences between two reads
/// on the same SM count SM clock cycles.
#[inline(always)]
pub fn clock64() -> u64 {
    let cycles: u64;
    // SAFETY: reads a special register. Not `pure`: each read must happen where it is written.
    unsafe { core::arch::asm!("mov.u64 {c}, %clock64;", c = out(reg64) cycles, options(nostack)) }
    cycles
}

/// Loads four consecutive `f32` with one 16-byte access (`float4` load, PTX `ld.global.v4.f32`).
///
/// # Safety
/// `address` points into global memory, is 16-byte aligned and valid for four floats.
#[inline(always)]
pub unsafe fn load_global_v4(address: *const f32) -> [f32; 4] {
    let (a, b, c, d): (f32, f32, f32, f32);
    // SAFETY: the caller guarantees a valid, 16-byte aligned global address; the asm does not
    // claim `pure` so it is not moved across barriers or stores.
    unsafe {
        core::arch::asm!(
            "cvta.to.global.u64 {g}, {p};\n\tld.global.v4.f32 {{{a}, {b}, {c}, {d}}}, [{g}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            p = in(reg64) address, g = out(reg64) _,
            options(readonly, nostack));
    }
    [a, b, c, d]
}

/// Stores four consecutive `f32` with one 16-byte access (`float4` store, PTX `st.global.v4.f32`).
///
/// # Safety
/// `address` points into global memory, is 16-byte aligned and valid for four floats, and no
/// other thread accesses them concurrently.
#[inline(always)]
pub unsafe fn store_global_v4(address: *mut f32, value: [f32; 4]) {
    // SAFETY: the caller guarantees a valid, 16-byte aligned, exclusively owned global address.
    unsafe {
        core::arch::asm!(
            "cvta.to.global.u64 {g}, {p};\n\tst.global.v4.f32 [{g}], {{{a}, {b}, {c}, {d}}};",
            a = in(reg32) value[0], b = in(reg32) value[1], c = in(reg32) value[2], d = in(reg32) value[3],
            p = in(reg64) address, g = out(reg64) _,
            options(nostack));
    }
}

/// Loads four consecutive 32-bit words with one 16-byte access through the read-only data
/// path (PTX `ld.global.nc.v4.u32`, CUDA's `__ldg` of an `int4`/`float4`). The caller
/// reinterprets the bits (`i32::from_ne_bytes`, `f32::from_bits`).
///
/// # Safety
/// `address` points into global memory, is 16-byte aligned, is valid for four words, and no
/// thread writes them during the launch.
#[inline(always)]
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
