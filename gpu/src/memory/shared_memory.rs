//! Shared memory declared statically and dynamically: the seed's example kernel
//! (`cuda 学习之内存层次结构`, "static variable使用shared memory" and "dynamic variable使用shared
//! memory"): `tmp[i] = u[i]; u[i] = tmp[i] * tmp[i] + tmp[3 - i]` with `int tmp[]` and
//! `float u[]`, launched as `<<<1, 4>>>` on `{1, 2, 3, 4}` (result `{5, 7, 11, 17}`).
//!
//! Generalised to any block of up to [`MAX_BLOCK`] threads (the mirror index is
//! `blockDim.x - 1 - i`, which is `3 - i` for the seed's 4 threads) and to many blocks, each on
//! its own slice of `u`. The seed reads `tmp[3 - i]` right after the writes with no barrier: a
//! race (another thread's write may not have happened yet); a `__syncthreads()` separates them
//! here. The `float` to `int` conversion truncates toward zero (C's rule; PTX `cvt.rzi`), the
//! integer arithmetic wraps and the result is converted back to `float`.

/// Largest block (the static array's size).
pub const MAX_BLOCK: u32 = 1024;

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use gpu_std::static_shared;
    use gpu_std::{DynamicShared, block_dim, block_idx, syncthreads, thread_idx};

    /// `tmp[i] = u[i]` (truncated to `int`), barrier, `u[i] = tmp[i]^2 + tmp[mirror]`, where
    /// `tmp` is any shared array of at least `blockDim.x` ints given by `store`/`load`.
    ///
    /// # Safety
    /// `u` is valid for `gridDim.x * blockDim.x` floats; every thread of the block calls it.
    #[inline(always)]
    unsafe fn example(u: *mut f32, store: impl Fn(usize, i32), load: impl Fn(usize) -> i32) {
        let i = thread_idx().x as usize;
        let block = block_dim().x as usize;
        // SAFETY: the caller guarantees `u` covers every block's `block` elements.
        let u = unsafe { u.add(block_idx().x as usize * block) };
        // SAFETY: `i < block`.
        store(i, unsafe { *u.add(i) } as i32);
        syncthreads();
        let t = load(i);
        let value = t.wrapping_mul(t).wrapping_add(load(block - 1 - i));
        // SAFETY: `i < block`; each thread writes its own element.
        unsafe { *u.add(i) = value as f32 };
    }

    /// The seed's static version: `__shared__ int tmp[MAX_BLOCK]` declared in the kernel,
    /// sized at compile time (it counts in `ptxas -v`'s `smem`).
    ///
    /// Launch: any grid; blocks of 1..=1024 threads; no dynamic shared memory.
    ///
    /// # Safety
    /// `u` is valid for `gridDim.x * blockDim.x` floats.
    #[kernel]
    pub unsafe fn shared_memory_static(u: *mut f32) {
        let tmp = static_shared!(s_shared_memory_static: [i32; 1024]);
        // SAFETY: indices are below `blockDim.x <= 1024`; each thread writes only its slot,
        // and reads happen after the barrier in `example`.
        unsafe {
            example(u, |i, v| tmp.write(i, v), |i| tmp.read(i));
        }
    }

    /// The seed's dynamic version: `extern __shared__ int tmp[]`, sized by the launch's third
    /// parameter (`blockDim.x * 4` bytes).
    ///
    /// Launch: any grid; blocks of 1..=1024 threads; at least `blockDim.x * 4` bytes of
    /// dynamic shared memory (an index beyond it traps).
    ///
    /// # Safety
    /// `u` is valid for `gridDim.x * blockDim.x` floats.
    #[kernel]
    pub unsafe fn shared_memory_dynamic(u: *mut f32) {
        let tmp = DynamicShared::<i32>::get();
        // SAFETY: as in `shared_memory_static`; the dynamic array holds `blockDim.x` ints.
        unsafe {
            example(u, |i, v| tmp.write(i, v), |i| tmp.read(i));
        }
    }
}
