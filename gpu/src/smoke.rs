//! Smoke kernels: each exercises one feature of the [`gpu_std`] support crate
//! end to end (declaration in Rust, PTX, launch from the host, result checked on the CPU), so a
//! broken feature shows up here by name before a pattern that relies on it fails.

/// Threads per block of [`smoke_static_shared_reverse`](kernels::smoke_static_shared_reverse),
/// which is also the length of its static shared array.
pub const STATIC_REVERSE_BLOCK: u32 = 256;
/// Bins of [`smoke_shared_atomic_histogram`](kernels::smoke_shared_atomic_histogram); value `v`
/// counts in bin `v % HISTOGRAM_BINS`.
pub const HISTOGRAM_BINS: usize = 64;
/// Slots written by [`smoke_global_atomics`](kernels::smoke_global_atomics): sum, max, min,
/// and a count made with compare-and-swap.
pub const GLOBAL_ATOMICS_SLOTS: usize = 4;

gpu_std::constant_memory!(
    /// Coefficients `c[0..8]` of the polynomial `c[0] + c[1] x + ... + c[7] x^7` that
    /// [`smoke_constant_polynomial`](kernels::smoke_constant_polynomial) evaluates.
    pub C_SMOKE_COEFFICIENTS: [f32; 8]
);

/// The kernels (device build only).
pub mod kernels {
    use super::{C_SMOKE_COEFFICIENTS, HISTOGRAM_BINS, STATIC_REVERSE_BLOCK};
    use gpu_std::kernel;
    use gpu_std::{
        DynamicShared, FULL_MASK, WARP_SIZE, atomic_add, atomic_cas, atomic_max, atomic_min,
        block_dim, block_idx, global_index_x, grid_stride_x, lane_id, shfl_down_sync,
        shfl_idx_sync, shfl_up_sync, shfl_xor_sync, syncthreads, thread_idx,
    };

    /// Length of the segment of `n` elements that block `block` of `block_size` threads owns.
    #[inline(always)]
    fn segment(block: usize, block_size: usize, n: usize) -> (usize, usize) {
        let base = block * block_size;
        (base, n.saturating_sub(base).min(block_size))
    }

    /// The body of both reverse kernels: stage the block's segment in shared memory through
    /// `write`, barrier, read it back reversed through `read`.
    ///
    /// # Safety
    /// `input` and `output` are valid for `n` floats and do not overlap; `write` and `read`
    /// access a shared array of at least `blockDim.x` elements (unsafe calls inside the closures
    /// are covered by this function's contract: one writer per slot, reads after the barrier).
    #[inline(always)]
    unsafe fn reverse_segment(
        input: *const f32,
        output: *mut f32,
        n: usize,
        write: impl Fn(usize, f32),
        read: impl Fn(usize) -> f32,
    ) {
        let t = thread_idx().x as usize;
        let (base, len) = segment(block_idx().x as usize, block_dim().x as usize, n);
        if t < len {
            // SAFETY: `base + t < n`; each thread writes its own shared slot.
            write(t, unsafe { *input.add(base + t) });
        }
        syncthreads();
        if t < len {
            // SAFETY: `base + t < n`; slot `len-1-t` was written before the barrier.
            unsafe { *output.add(base + t) = read(len - 1 - t) };
        }
    }

    /// Static shared memory: each block reverses its segment of `input` into `output` through a
    /// `__shared__ float s[256]`, with a barrier between the writes and the reads.
    ///
    /// Launch: block [`STATIC_REVERSE_BLOCK`] threads, grid `ceil(n / block)`, no dynamic shared
    /// memory. The last block's segment may be shorter (it is reversed on its own).
    ///
    /// # Safety
    /// `input` and `output` are valid for `n` floats and do not overlap; the block size is
    /// [`STATIC_REVERSE_BLOCK`] (a larger one traps on the shared-array bound).
    #[kernel]
    pub unsafe fn smoke_static_shared_reverse(input: *const f32, output: *mut f32, n: usize) {
        let s = gpu_std::static_shared!(s_smoke_reverse: [f32; STATIC_REVERSE_BLOCK as usize]);
        // SAFETY: forwarded; the block size is at most the array's length (else the bound traps).
        unsafe { reverse_segment(input, output, n, |i, v| s.write(i, v), |i| s.read(i)) }
    }

    /// Dynamic shared memory: as [`smoke_static_shared_reverse`], with `extern __shared__`
    /// sized at launch, so any block size works.
    ///
    /// Launch: any block size `B`; grid `ceil(n / B)`; dynamic shared memory `4 * B` bytes.
    ///
    /// # Safety
    /// `input` and `output` are valid for `n` floats and do not overlap.
    #[kernel]
    pub unsafe fn smoke_dynamic_shared_reverse(input: *const f32, output: *mut f32, n: usize) {
        let s = DynamicShared::<f32>::get();
        // SAFETY: forwarded; the launch gives `4 * blockDim.x` bytes (else the bound traps).
        unsafe { reverse_segment(input, output, n, |i, v| s.write(i, v), |i| s.read(i)) }
    }

    /// Constant memory: `y[i] = c[0] + c[1] x[i] + ... + c[7] x[i]^7` by Horner's rule, `c` in
    /// [`C_SMOKE_COEFFICIENTS`] (every lane reads the same coefficient at each step: a
    /// broadcast from the constant cache).
    ///
    /// Launch: any block size, grid covering `n` (grid-stride loop).
    ///
    /// # Safety
    /// `x` and `y` are valid for `n` floats.
    #[kernel]
    pub unsafe fn smoke_constant_polynomial(x: *const f32, y: *mut f32, n: usize) {
        let mut i = global_index_x();
        while i < n {
            // SAFETY: `i < n`.
            let xi = unsafe { *x.add(i) };
            let mut acc = C_SMOKE_COEFFICIENTS::read(C_SMOKE_COEFFICIENTS::LEN - 1);
            let mut k = C_SMOKE_COEFFICIENTS::LEN - 1;
            while k > 0 {
                k -= 1;
                acc = acc * xi + C_SMOKE_COEFFICIENTS::read(k);
            }
            // SAFETY: `i < n`.
            unsafe { *y.add(i) = acc };
            i += grid_stride_x();
        }
    }

    /// Warp shuffles: every warp takes 32 consecutive values of `input` (0 past `n`) and
    /// writes
    /// - `warp_sums[w]`: their sum by a `shfl_down_sync` tree (lane 0 holds it);
    /// - `butterfly[i]`: the same sum by a `shfl_xor_sync` butterfly (every lane holds it);
    /// - `scan[i]`: the inclusive prefix sum within the warp by `shfl_up_sync`;
    /// - `broadcast[i]`: the value of lane `(7 * w) % 32` by `shfl_idx_sync`.
    ///
    /// Integer arithmetic (wrapping), so results are exact.
    ///
    /// Launch: block size a multiple of 32 (whole warps: every lane takes part in each shuffle,
    /// including lanes past `n`); grid covering `n`.
    ///
    /// # Safety
    /// `input`, `butterfly`, `scan`, `broadcast` are valid for `n` elements, `warp_sums` for
    /// `ceil(n / 32)`.
    #[kernel]
    pub unsafe fn smoke_warp_shuffle(
        input: *const i32,
        n: usize,
        warp_sums: *mut i32,
        butterfly: *mut i32,
        scan: *mut i32,
        broadcast: *mut i32,
    ) {
        let i = global_index_x();
        let warp = i / WARP_SIZE as usize;
        let lane = lane_id();
        // SAFETY: read only when `i < n`.
        let v = if i < n { unsafe { *input.add(i) } } else { 0 };

        let mut down = v;
        let mut xor = v;
        let mut offset = WARP_SIZE / 2;
        while offset > 0 {
            down = down.wrapping_add(shfl_down_sync(FULL_MASK, down, offset));
            xor = xor.wrapping_add(shfl_xor_sync(FULL_MASK, xor, offset));
            offset /= 2;
        }
        let mut prefix = v;
        let mut delta = 1;
        while delta < WARP_SIZE {
            let below = shfl_up_sync(FULL_MASK, prefix, delta);
            if lane >= delta {
                prefix = prefix.wrapping_add(below);
            }
            delta *= 2;
        }
        let src_lane = (7 * warp as u32) % WARP_SIZE;
        let picked = shfl_idx_sync(FULL_MASK, v, src_lane);

        if lane == 0 && i < n {
            // SAFETY: `warp < ceil(n / 32)` because `i < n`.
            unsafe { *warp_sums.add(warp) = down };
        }
        if i < n {
            // SAFETY: `i < n`.
            unsafe {
                *butterfly.add(i) = xor;
                *scan.add(i) = prefix;
                *broadcast.add(i) = picked;
            }
        }
    }

    /// Shared- and global-memory atomics: a histogram of `values` into [`HISTOGRAM_BINS`]
    /// bins (`v % HISTOGRAM_BINS`). Each block counts into a static shared histogram with
    /// shared-memory `atomicAdd`, then adds its counts to `bins` with global `atomicAdd`
    /// (the privatised histogram of *Programming Massively Parallel Processors*, ch. 9).
    ///
    /// Launch: block size at least [`HISTOGRAM_BINS`]; any grid (grid-stride loop).
    ///
    /// # Safety
    /// `values` is valid for `n` elements, `bins` for [`HISTOGRAM_BINS`] and zeroed by the host.
    #[kernel]
    pub unsafe fn smoke_shared_atomic_histogram(values: *const u32, n: usize, bins: *mut u32) {
        let s = gpu_std::static_shared!(s_smoke_histogram: [u32; HISTOGRAM_BINS]);
        let t = thread_idx().x as usize;
        if t < HISTOGRAM_BINS {
            // SAFETY: one writer per bin before the barrier.
            unsafe { s.write(t, 0) };
        }
        syncthreads();
        let mut i = global_index_x();
        while i < n {
            // SAFETY: `i < n`; the bin index is below `HISTOGRAM_BINS`, so the shared address
            // is in bounds; concurrent updates are atomic.
            unsafe {
                let bin = *values.add(i) as usize % HISTOGRAM_BINS;
                atomic_add(s.as_ptr().add(bin), 1u32);
            }
            i += grid_stride_x();
        }
        syncthreads();
        if t < HISTOGRAM_BINS {
            // SAFETY: all shared updates finished at the barrier; `bins` holds HISTOGRAM_BINS
            // counters updated atomically by every block.
            unsafe { atomic_add(bins.add(t), s.read(t)) };
        }
    }

    /// Global-memory atomics on `i32`: `results[0] += v` (`atomicAdd`, wrapping),
    /// `results[1] = max` (`atomicMax`), `results[2] = min` (`atomicMin`) over `values`, and
    /// `results[3]` counts the elements with an `atomicCAS` retry loop (lane 0 of each warp adds
    /// its warp's count).
    ///
    /// Launch: block size a multiple of 32, any grid (grid-stride loop; the grid stride is then a
    /// multiple of 32, so every warp's lanes share one loop trip count).
    ///
    /// # Safety
    /// `values` is valid for `n` elements; `results` for 4, initialised by the host to
    /// `[0, i32::MIN, i32::MAX, 0]`.
    #[kernel]
    pub unsafe fn smoke_global_atomics(values: *const i32, n: usize, results: *mut i32) {
        let mut i = global_index_x();
        while i < n {
            // SAFETY: `i < n`; `results` has 4 slots, each updated atomically.
            unsafe {
                let v = *values.add(i);
                atomic_add(results, v);
                atomic_max(results.add(1), v);
                atomic_min(results.add(2), v);
            }
            // One compare-and-swap loop per warp (lane 0 adds the warp's count of valid
            // elements): the same retry pattern with 32x less contention on one address.
            if lane_id() == 0 {
                let warp_base = i - i % WARP_SIZE as usize;
                let count = (n - warp_base).min(WARP_SIZE as usize) as u32;
                // SAFETY: slot 3 of `results`, updated only atomically.
                unsafe {
                    let counter = results.add(3) as *mut u32;
                    let mut old = counter.read_volatile();
                    loop {
                        let seen = atomic_cas(counter, old, old.wrapping_add(count));
                        if seen == old {
                            break;
                        }
                        old = seen;
                    }
                }
            }
            i += grid_stride_x();
        }
    }

    /// Global `f32` `atomicAdd`: `sum[0] += x[i]` for every `i` (one atomic per element, so
    /// slow by design; the order of the additions varies between runs).
    ///
    /// Launch: any block size, grid covering `n` (grid-stride loop).
    ///
    /// # Safety
    /// `x` is valid for `n` floats; `sum` for one, zeroed by the host.
    #[kernel]
    pub unsafe fn smoke_global_atomic_add_f32(x: *const f32, n: usize, sum: *mut f32) {
        let mut i = global_index_x();
        while i < n {
            // SAFETY: `i < n`; `sum` is one float updated atomically.
            unsafe { atomic_add(sum, *x.add(i)) };
            i += grid_stride_x();
        }
    }

    /// A deliberate fault, for the tests that check a kernel fault surfaces as an error naming
    /// the kernel: every thread indexes `data[n + i]` through a bounds-checked slice, the
    /// bounds check fails, and the panic handler traps (PTX `trap`). Never launched by the demo.
    ///
    /// Launch: any.
    ///
    /// # Safety
    /// `data` is valid for `n` floats. The launch faults by design and leaves the context
    /// unusable (a sticky error): launch it only in a process of its own.
    #[kernel]
    pub unsafe fn smoke_trap_out_of_bounds(data: *mut f32, n: usize) {
        // SAFETY: the caller guarantees `n` valid elements.
        let slice = unsafe { core::slice::from_raw_parts_mut(data, n) };
        let i = global_index_x();
        slice[n + i] = 1.0;
    }
}
