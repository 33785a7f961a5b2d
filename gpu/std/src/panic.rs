//! The panic handler of the device build.
//!
//! Kernels never panic on purpose (out-of-range threads return early). A panic that does happen
//! (an out-of-bounds slice or shared-array index) executes PTX `trap`: the launch fails with
//! `CUDA_ERROR_ILLEGAL_INSTRUCTION` / `CUDA_ERROR_LAUNCH_FAILED`, which the host reports as an
//! error, instead of the kernel reading or writing out of bounds.

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
