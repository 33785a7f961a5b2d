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
