//! cuda_std 0.2's `misc` functions: the SM clock and the debugger breakpoint
//! (`profiler_counter` is not offered: see the crate docs).

/// The SM's 64-bit cycle counter (PTX `%clock64`), cuda_std's name for
/// [`clock64`](crate::clock64).
#[inline(always)]
#[crate::gpu_only]
pub fn clock() -> u64 {
    crate::clock64()
}

/// Stops the kernel at this point for a debugger (PTX `brkpt`); without one attached the
/// launch fails, as with a trap.
#[inline(always)]
#[crate::gpu_only]
pub fn breakpoint() {
    // SAFETY: `brkpt` only suspends the thread (or fails the launch); no memory is accessed.
    unsafe { core::arch::asm!("brkpt;", options(nostack)) }
}
