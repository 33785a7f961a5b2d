//! Launch bounds (CUDA's `__launch_bounds__`), which rustc's nvptx backend cannot express:
//! the implementation behind `#[kernel(launch_bounds(MAX_THREADS, MIN_BLOCKS))]`.

/// The statement `#[kernel(launch_bounds(max_threads, min_blocks))]` puts first in the entry:
/// CUDA's `__launch_bounds__(max_threads, min_blocks)`. The kernel is launched with at most
/// `max_threads` threads per block, and its registers per thread must leave room for
/// `min_blocks` resident blocks per SM (at most `65536 / (max_threads x min_blocks)` registers
/// on every GPU since Volta), so occupancy is a decision of the kernel's author rather than an
/// accident of register allocation.
///
/// rustc's nvptx backend has no attribute for the PTX directives, so this leaves the assembler
/// comment `// launch_bounds(max_threads, min_blocks)` in the entry's body, which the PTX
/// builder (`xtask/builder`, `apply_launch_bounds`) moves into the entry's
/// `.maxntid max_threads, 1, 1` and `.minnctapersm min_blocks` directives; no instruction is
/// emitted. `1 <= max_threads <= 1024` and `1 <= min_blocks <= 64` (checked by `#[kernel]`).
/// Launching more than `max_threads` threads per block fails with
/// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`. Write the attribute, not this macro.
#[doc(hidden)]
#[macro_export]
macro_rules! launch_bounds {
    ($max_threads:literal, $min_blocks:literal) => {
        // SAFETY: an assembler comment: no instruction, no register, no memory access.
        unsafe {
            ::core::arch::asm!(
                concat!(
                    "// launch_bounds(",
                    stringify!($max_threads),
                    ", ",
                    stringify!($min_blocks),
                    ")"
                ),
                options(nomem, nostack, preserves_flags)
            )
        }
    };
}

/// The statement `#[kernel]` puts first in every entry: the assembler comment
/// `// kernel_module(<module path>)`, which tells the PTX builder (`xtask/builder`,
/// `split_modules`) which module of the kernel crate declares the kernel, so that it can cut
/// the crate's PTX into one loadable module per top-level Rust module (`my_kernels::sort::...`
/// goes into the PTX module `sort`), each loaded on first use. No instruction is emitted.
/// Write `#[kernel]`, not this macro.
#[doc(hidden)]
#[macro_export]
macro_rules! kernel_module_marker {
    () => {
        // SAFETY: an assembler comment: no instruction, no register, no memory access.
        unsafe {
            ::core::arch::asm!(
                concat!("// kernel_module(", module_path!(), ")"),
                options(nomem, nostack, preserves_flags)
            )
        }
    };
}

/// The body `#[kernel(min_sm = SM)]` gives the entry in a build for an architecture below
/// `sm_SM`: PTX `trap`, so the launch fails instead of running code the architecture lacks.
/// The host refuses such a launch before it is queued (`KernelInfo::min_sm`, checked by
/// `gpu_host`'s launches); this is for a launch that bypasses that check. Write the attribute,
/// not this function.
#[doc(hidden)]
#[inline(always)]
#[crate::gpu_only]
pub fn below_min_sm() -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
