//! Static `__device__` globals (seed "cuda 学习之内存层次结构", "static variable使用global
//! memory"): `__device__ float devU[4], devV[4];` are arrays in global memory that belong to
//! the module, named by symbol instead of passed by pointer. The host writes and reads them
//! with `cudaMemcpyToSymbol` / `cudaMemcpyFromSymbol` (here the driver's `cuModuleGetGlobal`
//! and a copy), and the seed's kernel `addUV` does `devU[i] += devV[i]`.
//!
//! The seed's dynamic counterpart (`add4f(float *u, float *v)` on `cudaMalloc`ed buffers) is
//! [`device_globals_add_pointers`](kernels::device_globals_add_pointers). The arrays here hold
//! [`DEVICE_GLOBAL_LEN`] floats so the example can be tested beyond the seed's 4.

/// PTX symbol of the seed's `devU`.
pub const DEV_U: &str = "DEV_U";
/// PTX symbol of the seed's `devV`.
pub const DEV_V: &str = "DEV_V";
/// Elements of each of [`DEV_U`] and [`DEV_V`] (`f32`).
pub const DEVICE_GLOBAL_LEN: usize = 1024;

#[cfg(target_arch = "nvptx64")]
core::arch::global_asm!(
    ".visible .global .align 4 .b8 DEV_U[{bytes}];",
    ".visible .global .align 4 .b8 DEV_V[{bytes}];",
    bytes = const DEVICE_GLOBAL_LEN * 4,
);

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::thread_idx;

    /// Generic pointers to `DEV_U` and `DEV_V`.
    #[inline(always)]
    #[gpu_std::gpu_only]
    fn symbols() -> (*mut f32, *mut f32) {
        let (u, v): (u64, u64);
        // SAFETY: `mov` of a `.global` variable yields its global address and `cvta` turns it
        // into a generic pointer; no memory is accessed.
        unsafe {
            core::arch::asm!(
                "mov.u64 {u}, DEV_U;\n\tcvta.global.u64 {u}, {u};\n\tmov.u64 {v}, DEV_V;\n\tcvta.global.u64 {v}, {v};",
                u = out(reg64) u, v = out(reg64) v,
                options(pure, nomem, nostack));
        }
        (u as *mut f32, v as *mut f32)
    }

    /// The seed's `addUV`: `devU[i] += devV[i]` for `i = threadIdx.x`, on the module's
    /// `__device__` arrays.
    ///
    /// Launch: one block of at most [`DEVICE_GLOBAL_LEN`](super::DEVICE_GLOBAL_LEN) threads
    /// (the seed: `<<<1, 4>>>`).
    ///
    /// # Safety
    /// No other launch uses the symbols concurrently.
    #[kernel]
    pub unsafe fn device_globals_add_symbols() {
        let i = thread_idx().x as usize;
        if i < super::DEVICE_GLOBAL_LEN {
            let (u, v) = symbols();
            // SAFETY: `i` is below the arrays' length; each thread updates its own element.
            unsafe { *u.add(i) += *v.add(i) };
        }
    }

    /// The seed's `add4f(u, v)`: `u[i] += v[i]` on buffers passed by pointer.
    ///
    /// Launch: one block of `n` threads.
    ///
    /// # Safety
    /// `u` and `v` hold `blockDim.x` floats and do not overlap.
    #[kernel]
    pub unsafe fn device_globals_add_pointers(u: *mut f32, v: *const f32) {
        let i = thread_idx().x as usize;
        // SAFETY: `i < blockDim.x`.
        unsafe { *u.add(i) += *v.add(i) };
    }
}
