//! Registers and local memory (seed "cuda 学习之内存层次结构", "registers" and "local memory"):
//! a thread's private array stays in registers when every index is known at compile time, and
//! is placed in local memory (per-thread stack in device memory, cached in L1/L2) when it is
//! indexed at run time, because registers cannot be addressed indirectly.
//!
//! Both kernels compute the same thing, so their times compare the storage alone:
//! `a[k] = (x[i] ^ (k * 0x9E3779B9)).rotate_left(k)` for `k < ARRAY_LEN` (a mix the compiler
//! cannot fold into a closed form), then `out[i] = sum_k a[(k * STEP + OFFSET) % ARRAY_LEN]`
//! (wrapping `u32`). The register version has `STEP` and `OFFSET` as constants; the local
//! version receives them as kernel parameters (the host passes the same values).

/// Elements of each thread's private array.
pub const ARRAY_LEN: usize = 32;
/// The permutation's step (odd, so `k * STEP % ARRAY_LEN` visits every element).
pub const STEP: u32 = 7;
/// The permutation's offset.
pub const OFFSET: u32 = 3;

/// Threads per block of both kernels.
pub const BLOCK_SIZE: u32 = 256;

/// The kernels (device build only).
pub mod kernels {
    use super::ARRAY_LEN;
    use gpu_std::global_index_x;
    use gpu_std::kernel;

    /// `a[k]` of the private array: `(x ^ (k * 0x9E3779B9)).rotate_left(k)`.
    #[inline(always)]
    fn mix(x: u32, k: u32) -> u32 {
        (x ^ k.wrapping_mul(0x9E37_79B9)).rotate_left(k)
    }

    /// Fills the private array, one statement per element so that every index is a constant
    /// (a loop the compiler does not unroll would store at run-time indices and keep the
    /// array on the stack even in the register kernel).
    #[inline(always)]
    fn fill(x: u32) -> [u32; ARRAY_LEN] {
        macro_rules! elements {
            ($($k:literal)*) => { [$(mix(x, $k)),*] };
        }
        elements!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28
            29 30 31)
    }

    /// The array in registers: with [`STEP`](super::STEP) and [`OFFSET`](super::OFFSET)
    /// constants every index is known at compile time after unrolling, so the compiler keeps
    /// `a` in registers (`ptxas -v`: no stack frame).
    ///
    /// Launch: blocks of [`BLOCK_SIZE`](super::BLOCK_SIZE), a grid covering `n`.
    ///
    /// # Safety
    /// `x` and `out` are valid for `n` `u32`.
    #[kernel]
    pub unsafe fn registers_array(x: *const u32, out: *mut u32, n: usize) {
        let i = global_index_x();
        if i >= n {
            return;
        }
        // SAFETY: `i < n`.
        let a = fill(unsafe { *x.add(i) });
        // Written out for each `k` so every index is a constant (a loop that is not unrolled
        // would index at run time and put `a` on the stack).
        macro_rules! permuted_sum {
            ($($k:literal)*) => {{
                let mut sum = 0u32;
                $(sum = sum.wrapping_add(
                    a[($k * super::STEP as usize + super::OFFSET as usize) % ARRAY_LEN],
                );)*
                sum
            }};
        }
        let sum = permuted_sum!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
            24 25 26 27 28 29 30 31);
        // SAFETY: `i < n`.
        unsafe { *out.add(i) = sum };
    }

    /// The array in local memory: `a[(k * step + offset) % ARRAY_LEN]` with `step` and
    /// `offset` known only at run time. Registers have no addresses, so the compiler puts `a`
    /// on the thread's stack (`ptxas -v`: `ARRAY_LEN * 4` bytes of stack frame), which lives in
    /// device memory and is cached in L1 and L2: each access is a load instead of a register
    /// read.
    ///
    /// Launch: as [`registers_array`]; with `step = STEP` and `offset = OFFSET` the result
    /// equals it.
    ///
    /// # Safety
    /// `x` and `out` are valid for `n` `u32`.
    #[kernel]
    pub unsafe fn registers_local_array(
        x: *const u32,
        out: *mut u32,
        n: usize,
        step: u32,
        offset: u32,
    ) {
        let i = global_index_x();
        if i >= n {
            return;
        }
        // SAFETY: `i < n`.
        let a = fill(unsafe { *x.add(i) });
        let mut sum = 0u32;
        let mut k = 0u32;
        while (k as usize) < ARRAY_LEN {
            let j = (k.wrapping_mul(step).wrapping_add(offset)) as usize % ARRAY_LEN;
            sum = sum.wrapping_add(a[j]);
            k += 1;
        }
        // SAFETY: `i < n`.
        unsafe { *out.add(i) = sum };
    }
}
