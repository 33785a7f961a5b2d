//! Floating-point operations the kernels need from `core` intrinsics (unstable on the host,
//! hence wrapped here): fused multiply-add and round-half-to-even.

/// `a * b + c` rounded once (`fma.rn.f32`, CUDA's `fmaf` / `__fmaf_rn`).
#[inline(always)]
#[crate::gpu_only]
pub fn fmaf32(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}

/// `a * b + c` rounded once (`fma.rn.f64`, CUDA's `fma`).
#[inline(always)]
#[crate::gpu_only]
pub fn fmaf64(a: f64, b: f64, c: f64) -> f64 {
    core::intrinsics::fmaf64(a, b, c)
}

/// `x` rounded to the nearest integer, ties to even (`cvt.rni.f32.f32`, CUDA's `rintf`).
#[inline(always)]
#[crate::gpu_only]
pub fn round_ties_even_f32(x: f32) -> f32 {
    core::intrinsics::round_ties_even_f32(x)
}

/// `x` rounded to the nearest integer, ties to even (`cvt.rni.f64.f64`, CUDA's `rint`).
#[inline(always)]
#[crate::gpu_only]
pub fn round_ties_even_f64(x: f64) -> f64 {
    core::intrinsics::round_ties_even_f64(x)
}
