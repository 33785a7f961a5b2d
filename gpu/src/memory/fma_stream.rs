//! The memory and FP32 ceilings at once: kernels that read an array once, run `2w`
//! multiply-adds on every element and write it once. That is the traffic and the arithmetic of
//! a fused separable 2D convolution of width `w` (one read and one write of the image, a row
//! pass and a column pass of `w` taps each) with none of its data exchange: no halo, no shared
//! memory, no barrier. So its time is the most any kernel of that traffic and arithmetic gets
//! in the same run: the measured floor of `conv2d`'s separable path, where the computed one is
//! the larger of the memory floor and the FMA floor (`demo sweep fma-stream`).
//!
//! Beyond the seeds: the mixed memory and compute microbenchmark of Konstantinidis and
//! Cotronis, "A quantitative roofline model for GPU kernel performance estimation using
//! micro-benchmarks and hardware metric profiling" (JPDC 2017, `mixbench`), at the operational
//! intensities of the separable convolutions. The host (`cpu::lab::memory::fma_stream`)
//! times it and checks every element.

/// Threads per block the host launches.
pub const FMA_STREAM_BLOCK: u32 = 256;
/// Elements per thread: one `float4`, four independent chains.
pub const FMA_STREAM_ELEMENTS_PER_THREAD: usize = 4;
/// The widest `w` (`2 x 31 = 62` multiply-adds per element), that of the widest separable
/// convolution.
pub const FMA_STREAM_MAX_WIDTH: usize = 31;

/// The coefficient of multiply-add `t` (`1 / (t + 2)`, `t < 62`): an immediate operand of
/// every `fma.rn.f32`, as a mask tap in `__constant__` memory is a constant-bank operand.
pub const FMA_STREAM_COEFFICIENTS: [f32; 2 * FMA_STREAM_MAX_WIDTH] = {
    let mut c = [0.0f32; 2 * FMA_STREAM_MAX_WIDTH];
    let mut t = 0;
    while t < c.len() {
        c[t] = 1.0 / (t as f32 + 2.0);
        t += 1;
    }
    c
};

/// The kernels (device build only).
pub mod kernels {
    use super::{FMA_STREAM_BLOCK, FMA_STREAM_COEFFICIENTS};
    use gpu_std::math::fmaf32;
    use gpu_std::{block_dim, block_idx, kernel, load_global_v4, store_global_v4, thread_idx};

    /// `output[i] = fold(t < 2W: acc <- fma(input[i], c[t], acc))` from `acc = 0`, `c` =
    /// [`FMA_STREAM_COEFFICIENTS`]: thread `g` (`blockIdx.x * 256 + threadIdx.x`) does
    /// elements `4g ..4g + 4` with one 16-byte load, four independent chains written out and
    /// one 16-byte store; the thread holding the last `n % 4` elements does them one by one.
    ///
    /// # Safety
    /// `input` and `output` are valid for `n` floats, 16-byte aligned, and do not overlap;
    /// blocks of 256 threads (asserted); the grid covers `ceil(n / 4)` threads.
    #[inline(always)]
    unsafe fn fma_stream<const W: usize>(input: *const f32, output: *mut f32, n: usize) {
        assert!(block_dim().x == FMA_STREAM_BLOCK);
        // Every tap written out with a constant index, so that each coefficient is an
        // immediate operand (a loop would read them from a global table).
        macro_rules! taps {
            (|$c:ident| $body:expr) => {
                taps!(@ $c $body; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24
                    25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50
                    51 52 53 54 55 56 57 58 59 60 61)
            };
            (@ $c:ident $body:expr; $($t:literal)*) => {$(
                if $t < 2 * W {
                    let $c = const { FMA_STREAM_COEFFICIENTS[$t] };
                    $body;
                }
            )*};
        }

        let g = block_idx().x as usize * FMA_STREAM_BLOCK as usize + thread_idx().x as usize;
        let i = 4 * g;
        if i < n && n - i >= 4 {
            // SAFETY: elements `i ..i + 4 <= n`, 16-byte aligned (`input` is, `i % 4 == 0`).
            let x = unsafe { load_global_v4(input.add(i)) };
            let mut acc = [0.0f32; 4];
            taps!(|c| {
                acc[0] = fmaf32(x[0], c, acc[0]);
                acc[1] = fmaf32(x[1], c, acc[1]);
                acc[2] = fmaf32(x[2], c, acc[2]);
                acc[3] = fmaf32(x[3], c, acc[3]);
            });
            // SAFETY: as the load; one writer per element.
            unsafe { store_global_v4(output.add(i), acc) };
        } else if i < n {
            // The last `n - i < 4` elements.
            for e in i..i + 3 {
                if e < n {
                    // SAFETY: `e < n`.
                    let x = unsafe { *input.add(e) };
                    let mut acc = 0.0f32;
                    taps!(|c| acc = fmaf32(x, c, acc));
                    // SAFETY: `e < n`; one writer per element.
                    unsafe { *output.add(e) = acc };
                }
            }
        }
    }

    macro_rules! fma_stream_kernels {
        ($($name:ident $w:literal)*) => {$(
            /// One read, `2w` multiply-adds and one write of each of `n` floats (`w` in the
            /// name): the traffic and arithmetic of the fused separable convolution of that
            /// width without its data exchange; see the module.
            ///
            /// Launch: blocks of [`FMA_STREAM_BLOCK`] threads (asserted), `ceil(n / 4 / 256)`
            /// blocks.
            ///
            /// # Safety
            /// `input` and `output` are valid for `n` floats, 16-byte aligned, and do not
            /// overlap; the grid covers `ceil(n / 4)` threads.
            #[kernel(launch_bounds(256, 8))]
            pub unsafe fn $name(input: *const f32, output: *mut f32, n: usize) {
                // SAFETY: forwarded.
                unsafe { fma_stream::<$w>(input, output, n) }
            }
        )*};
    }

    fma_stream_kernels!(
        fma_stream_w3 3
        fma_stream_w5 5
        fma_stream_w7 7
        fma_stream_w9 9
        fma_stream_w11 11
        fma_stream_w13 13
        fma_stream_w15 15
        fma_stream_w17 17
        fma_stream_w19 19
        fma_stream_w21 21
        fma_stream_w23 23
        fma_stream_w25 25
        fma_stream_w27 27
        fma_stream_w29 29
        fma_stream_w31 31
    );

    /// The handle of a `fma_stream_w*` kernel (host build): `(input, output, n)`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub type FmaStreamKernel = gpu_std::host::Kernel<(*const f32, *mut f32, usize)>;

    /// The `fma_stream_w*` kernels, indexed by `w / 2` (host build; `None` below width 3).
    #[cfg(not(target_arch = "nvptx64"))]
    pub const FMA_STREAM_BY_RADIUS: [Option<FmaStreamKernel>; super::FMA_STREAM_MAX_WIDTH / 2 + 1] = [
        None,
        Some(fma_stream_w3),
        Some(fma_stream_w5),
        Some(fma_stream_w7),
        Some(fma_stream_w9),
        Some(fma_stream_w11),
        Some(fma_stream_w13),
        Some(fma_stream_w15),
        Some(fma_stream_w17),
        Some(fma_stream_w19),
        Some(fma_stream_w21),
        Some(fma_stream_w23),
        Some(fma_stream_w25),
        Some(fma_stream_w27),
        Some(fma_stream_w29),
        Some(fma_stream_w31),
    ];
}
