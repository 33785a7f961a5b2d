//! The FP32 multiply-add ceiling: a kernel that does nothing but independent `fma.rn.f32`s,
//! so that an FMA-bound kernel (the wide dense 2D convolutions, `2 x w` separable passes) is
//! judged against the rate the GPU sustains in the same run, beside the nominal peak (SMs x
//! FP32 lanes x the peak SM clock), which assumes that clock under full load.
//!
//! Beyond the seeds: the FP32 half of the peak-throughput microbenchmarks of the CUDA samples
//! and of Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"
//! (2018). The host (`cpu::lab::memory::fma_rate`) times it and checks every thread's result.

/// Threads per block the host launches.
pub const FMA_RATE_BLOCK: u32 = 256;
/// Independent dependency chains per thread: enough that the 4-cycle FMA latency never stalls
/// a scheduler even with one warp on it.
pub const FMA_RATE_CHAINS: usize = 16;
/// Steps of every chain per loop iteration (written out): `16 x 8 = 128` FMAs against the
/// loop's counter and branch.
pub const FMA_RATE_UNROLL: usize = 8;
/// The multiplier of every step, `x <- x * A + B`: below 1 so the chains stay bounded.
pub const FMA_RATE_A: f32 = 0.999_9;
/// The addend of every step (the chains converge towards `B / (1 - A)` = 1).
pub const FMA_RATE_B: f32 = 1.0e-4;

/// The first value of chain `k` of thread `t` (in `[0, 1)`).
#[inline(always)]
pub fn fma_rate_start(t: usize, k: usize) -> f32 {
    ((t * FMA_RATE_CHAINS + k) % 1024) as f32 * (1.0 / 1024.0)
}

/// The kernels (device build only).
pub mod kernels {
    use super::{
        FMA_RATE_A, FMA_RATE_B, FMA_RATE_BLOCK, FMA_RATE_CHAINS, FMA_RATE_UNROLL, fma_rate_start,
    };
    use gpu_std::kernel;
    use gpu_std::math::fmaf32;
    use gpu_std::{block_dim, block_idx, thread_idx};

    /// Runs, in each thread `t` (`t = blockIdx.x * blockDim.x + threadIdx.x`), 16 independent
    /// chains `x <- fma(x, A, B)` of `8 * iterations` steps each from
    /// [`fma_rate_start`]`(t, k)`, and writes their sum (chains 0 to 15 in order) to
    /// `output[t]` for `t < n`: every FMA feeds the output, so none can be dropped.
    ///
    /// Launch: blocks of [`FMA_RATE_BLOCK`] threads (asserted), any grid
    /// (the host launches 8 blocks per SM).
    ///
    /// Parameters: `output`, `n` floats; `iterations`, loop trips (128 FMAs per thread each).
    ///
    /// # Safety
    /// `output` is valid for `n` floats that nothing else touches during the launch.
    ///
    /// Performance: `128 x iterations` FMAs per thread and 4 bytes written: bound by the FP32
    /// pipes (one FFMA per lane and clock).
    #[kernel]
    pub unsafe fn fma_rate(output: *mut f32, n: usize, iterations: u32) {
        assert!(block_dim().x == FMA_RATE_BLOCK);
        let t = block_idx().x as usize * FMA_RATE_BLOCK as usize + thread_idx().x as usize;
        // Each chain a scalar register: the steps written out, every index a constant.
        macro_rules! chains {
            ($($c:literal)*) => {{
                let mut x = [$(fma_rate_start(t, $c)),*];
                let mut i = 0;
                while i < iterations {
                    // FMA_RATE_UNROLL (8) steps of every chain.
                    chains!(@step x; $($c)*); chains!(@step x; $($c)*);
                    chains!(@step x; $($c)*); chains!(@step x; $($c)*);
                    chains!(@step x; $($c)*); chains!(@step x; $($c)*);
                    chains!(@step x; $($c)*); chains!(@step x; $($c)*);
                    i += 1;
                }
                0.0f32 $(+ x[$c])*
            }};
            (@step $x:ident; $($c:literal)*) => {
                $($x[$c] = fmaf32($x[$c], FMA_RATE_A, FMA_RATE_B);)*
            };
        }
        const _: () = assert!(FMA_RATE_UNROLL == 8 && FMA_RATE_CHAINS == 16);
        let sum = chains!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        if t < n {
            // SAFETY: `t < n`; one writer per element (the caller's contract).
            unsafe { *output.add(t) = sum };
        }
    }
}
