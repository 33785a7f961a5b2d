//! Across several GPUs: the one kernel of the lab's teaching all-reduce (a ring of peer-to-peer
//! copies, `cpu::multi_gpu::ring`), the elementwise accumulation `dst += src` of a chunk that
//! arrived from the previous GPU of the ring. The collective a user should call is NCCL's
//! (`cpu::multi_gpu::GpuGroup::all_reduce_sum`), which needs no kernel of ours; the sharded sum
//! reuses [`reduce`](crate::reduce)'s `reduce_sum_f32_f64`.
//!
//! Each element costs one add and 12 bytes of DRAM traffic (two 4-byte loads, one 4-byte
//! store), as [`vector_add`](crate::vector_add): memory-bound, and in the ring far cheaper than
//! the copy over NVLink or PCIe before it.

/// Threads per block the host launches [`add_into`](kernels::add_into) with.
pub const ADD_INTO_BLOCK: u32 = 256;

/// Threads per block the host launches the peer-to-peer ring steps
/// ([`ring_reduce_peer`](kernels::ring_reduce_peer), [`ring_copy_peer`](kernels::ring_copy_peer))
/// with.
pub const RING_BLOCK: u32 = 512;

/// Threads per block (one warp) and the most ranks the one-shot all-reduce over peer memory
/// ([`peer_all_reduce_f64`](kernels::peer_all_reduce_f64)) serves: one lane per rank.
pub const PEER_ALL_REDUCE_MAX_RANKS: u32 = 32;

/// 64-bit words of one rank's mailbox for
/// [`peer_all_reduce_f64`](kernels::peer_all_reduce_f64): two slots (by the parity of the
/// call's epoch), each a value and the epoch that published it.
pub const PEER_MAILBOX_WORDS: usize = 4;

/// The kernels (device build only).
pub mod kernels {
    use core::sync::atomic::Ordering;
    use gpu_std::atomic::mid::{atomic_load_64_system, atomic_store_64_system};
    use gpu_std::reduce::device_reduce_last;
    use gpu_std::warp::shfl_idx_sync;
    use gpu_std::{kernel, static_shared};

    use super::PEER_ALL_REDUCE_MAX_RANKS;
    use crate::reduce::sum::WideF32;
    use gpu_std::{
        DisjointSlice, global_index_x, globaltimer, grid_stride, grid_stride_x, load_global_v4,
        store_global_v4, thread_idx,
    };

    /// `dst[i] += src[i]` for `i < n`: one reduce-scatter step of the ring all-reduce adds the
    /// chunk received from the previous GPU (`src`, a staging buffer on this GPU) into this
    /// GPU's own chunk (`dst`).
    ///
    /// Algorithm: a grid-stride loop (the seed `vector_add_grid_stride` with `z = x`): thread
    /// `i` handles `i, i + stride, ...`; a warp reads 128 contiguous bytes of each input and
    /// writes 128 contiguous bytes. Scalar accesses, so the chunk may start at any element
    /// (the ring splits buffers at arbitrary element boundaries).
    ///
    /// Launch: [`ADD_INTO_BLOCK`](super::ADD_INTO_BLOCK) threads per block, any grid (the host
    /// uses at most one wave of resident blocks).
    ///
    /// Parameters: `dst` and `src` hold `n` floats each in this GPU's device memory (the host
    /// passes each with its length; elements of `dst` past `src.len()` are left alone).
    ///
    /// A safe kernel: each thread updates only its own elements of `dst`.
    ///
    /// Performance: 12 bytes per element, one FADD: memory-bound.
    #[kernel]
    pub fn add_into(mut dst: DisjointSlice<f32>, src: &[f32]) {
        for i in grid_stride(dst.len().min(src.len())) {
            let s = src[i.get()];
            if let Some(d) = dst.get_mut(&i) {
                *d += s;
            }
        }
    }

    /// One reduce-scatter step of the peer-to-peer ring all-reduce: `dst[i] += src[i]` for
    /// `i < n`, where `src` is the previous GPU's copy of the same chunk, read directly from its
    /// memory over NVLink (or PCIe) through peer access, with no staging copy: the kernel pulls
    /// the bytes a copy engine would have pushed, and adds them as they arrive.
    ///
    /// Algorithm: groups of four floats with one 16-byte load from each side and one 16-byte
    /// store (a warp instruction moves 512 contiguous bytes, which keeps many NVLink reads in
    /// flight), in a grid-stride loop; the last `n % 4` floats one by one. Where either pointer
    /// is not 16-byte aligned every float is done one by one.
    ///
    /// Launch: [`RING_BLOCK`](super::RING_BLOCK) threads per block, a grid of one wave of
    /// resident blocks (any grid is correct).
    ///
    /// # Safety
    /// `dst` holds `n` floats of this GPU's memory that no other thread or GPU accesses during
    /// the launch; `src` holds `n` floats readable from this GPU (its own memory, or a peer's
    /// with peer access enabled) that nothing writes during the launch.
    ///
    /// Performance: 4 bytes over the link and 8 bytes of local DRAM per element; link-bound.
    #[kernel]
    pub unsafe fn ring_reduce_peer(dst: *mut f32, src: *const f32, n: usize) {
        let aligned = (dst as usize | src as usize).is_multiple_of(16);
        let groups = if aligned { n / 4 } else { 0 };
        let stride = grid_stride_x();
        let mut g = global_index_x();
        while g < groups {
            // SAFETY: `4g + 3 < n`; both bases 16-byte aligned (checked), so is `4g` floats on.
            unsafe {
                let a = load_global_v4(dst.add(4 * g));
                let b = load_global_v4(src.add(4 * g));
                store_global_v4(
                    dst.add(4 * g),
                    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]],
                );
            }
            g += stride;
        }
        let mut i = 4 * groups + global_index_x();
        while i < n {
            // SAFETY: `i < n`.
            unsafe { *dst.add(i) += *src.add(i) };
            i += stride;
        }
    }

    /// One all-gather step of the peer-to-peer ring all-reduce: `dst[i] = src[i]` for `i < n`,
    /// `src` the previous GPU's finished chunk read over peer access; as
    /// [`ring_reduce_peer`] without the add.
    ///
    /// Launch: as [`ring_reduce_peer`].
    ///
    /// # Safety
    /// As [`ring_reduce_peer`].
    ///
    /// Performance: 4 bytes over the link and 4 bytes of local DRAM per element; link-bound.
    #[kernel]
    pub unsafe fn ring_copy_peer(dst: *mut f32, src: *const f32, n: usize) {
        let aligned = (dst as usize | src as usize).is_multiple_of(16);
        let groups = if aligned { n / 4 } else { 0 };
        let stride = grid_stride_x();
        let mut g = global_index_x();
        while g < groups {
            // SAFETY: as ring_reduce_peer.
            unsafe { store_global_v4(dst.add(4 * g), load_global_v4(src.add(4 * g))) };
            g += stride;
        }
        let mut i = 4 * groups + global_index_x();
        while i < n {
            // SAFETY: `i < n`.
            unsafe { *dst.add(i) = *src.add(i) };
            i += stride;
        }
    }

    /// One-shot all-reduce (sum) of one `f64` over peer memory, for the latency-bound
    /// all-reduce of a scalar (the sharded sum's partials): every rank publishes its value in
    /// its own mailbox, then reads every rank's mailbox (its peers' over NVLink through peer
    /// access or CUDA IPC) and adds the `k` values in rank order, so every rank gets the same
    /// bits. No staging, no second kernel, no proxy thread: one write and `k` reads of 16
    /// bytes, against the several hops and launches of NCCL's ring or tree for 8 bytes.
    ///
    /// Algorithm (NCCL's LL protocol reduced to one value): the mailbox of rank `q` is
    /// [`PEER_MAILBOX_WORDS`](super::PEER_MAILBOX_WORDS) words: for each parity `p` of the
    /// call's `epoch`, a value (word `2p`) and the epoch that wrote it (word `2p + 1`). Lane 0
    /// stores the value, then the epoch with a system-scope release; lane `q < k` polls rank
    /// `q`'s epoch word with a system-scope acquire until it equals `epoch`, then reads the
    /// value; lane 0 adds the `k` values (warp shuffles) and writes the sum over `value`. Two
    /// slots suffice:
    /// a rank publishes epoch `e + 2` only after reading every rank's `e + 1`, which each
    /// publishes only after reading everything of `e`.
    ///
    /// A rank that does not publish within `timeout_ns` nanoseconds of this kernel's start
    /// (`%globaltimer`) ends the wait: `value` becomes NaN and `status` 1 (the host reads it),
    /// so a missing rank costs a timeout, never a hang.
    ///
    /// Launch: one block of [`PEER_ALL_REDUCE_MAX_RANKS`]
    /// (32) threads.
    ///
    /// # Safety
    /// `mailboxes` holds `k` addresses (`1 <= k <= 32`), entry `q` the mailbox of rank `q`
    /// (entry `rank` this rank's own), each [`PEER_MAILBOX_WORDS`](super::PEER_MAILBOX_WORDS)
    /// 8-byte aligned words readable from this GPU, this rank's own also writable, written only
    /// by this kernel on its owner's GPU; `value` and `status` point to one element each of this
    /// GPU's memory, which nothing else accesses during the launch; every rank's calls pass
    /// epochs 1, 2, 3,
    /// ... in order, and no two calls on one mailbox run at once.
    ///
    /// Performance: one 16-byte store and `k` 16-byte loads over the links; latency-bound
    /// (a round trip over NVLink, about a microsecond, once every rank has arrived).
    #[kernel]
    pub unsafe fn peer_all_reduce_f64(
        value: *mut f64,
        mailboxes: *const u64,
        k: u32,
        rank: u32,
        epoch: u64,
        timeout_ns: u64,
        status: *mut u32,
    ) {
        // SAFETY: `value` is one f64 of this GPU's memory (the caller's contract).
        let mine = unsafe { *value };
        // SAFETY: the whole block (one warp) calls it; the caller's contract covers the rest.
        let total = unsafe { peer_exchange(mine, mailboxes, k, rank, epoch, timeout_ns) };
        if thread_idx().x == 0 {
            // SAFETY: `value` and `status` are one element each of this GPU's memory.
            unsafe { finish(total, value, status) };
        }
    }

    /// The sharded sum of `f32` across the ranks of one machine in one launch: this GPU's
    /// `reduce_sum_f32_f64` (the lab's one-launch reduction, `gpu_std::reduce`), whose last
    /// block then runs [`peer_all_reduce_f64`]'s exchange in its first warp, so the grid's
    /// total goes to the other ranks without a second kernel (no launch gap between the
    /// reduction and the combine). `*result` receives the sum of every rank's shard, the same
    /// bits on every rank (each rank's total, added in rank order).
    ///
    /// Launch: as `reduce_sum_f32_f64` (blocks of a multiple of 32 threads, at most one wave of
    /// resident blocks).
    ///
    /// # Safety
    /// As `reduce_sum_f32_f64` for `input`, `n`, `partials`, `counter` and `result`, and as
    /// [`peer_all_reduce_f64`] for `mailboxes`, `k`, `rank`, `epoch`, `timeout_ns` and
    /// `status`.
    ///
    /// Performance: reads each element once (4 bytes), bound by DRAM bandwidth; then one
    /// round trip over the links.
    #[kernel]
    pub unsafe fn reduce_sum_peer_f32_f64(
        input: *const f32,
        n: usize,
        partials: *mut f64,
        counter: *mut u32,
        result: *mut f64,
        mailboxes: *const u64,
        k: u32,
        rank: u32,
        epoch: u64,
        timeout_ns: u64,
        status: *mut u32,
    ) {
        let warp_totals = static_shared!(s_reduce_sum_peer: [f64; 32]);
        // SAFETY: forwarded to the caller's contract.
        let last =
            unsafe { device_reduce_last::<WideF32>(input, n, partials, counter, &warp_totals) };
        let Some(total) = last else {
            return;
        };
        if thread_idx().x >= PEER_ALL_REDUCE_MAX_RANKS {
            return;
        }
        // Thread 0 holds the grid's total; warp 0 exchanges it.
        let mine = shfl_idx_sync(u32::MAX, total, 0);
        // SAFETY: the whole of warp 0 calls it; the caller's contract covers the rest.
        let sum = unsafe { peer_exchange(mine, mailboxes, k, rank, epoch, timeout_ns) };
        if thread_idx().x == 0 {
            // SAFETY: `result` and `status` are one element each of this GPU's memory.
            unsafe { finish(sum, result, status) };
        }
    }

    /// The exchange of [`peer_all_reduce_f64`], run by one whole warp: lane 0 publishes `mine`
    /// in this rank's mailbox, lane `q < k` waits for rank `q`'s, and every lane returns the
    /// `k` values added in rank order, or `None` if some rank did not publish in time.
    ///
    /// # Safety
    /// Every lane of the warp calls it with the same arguments; `mailboxes`, `k`, `rank` and
    /// `epoch` as [`peer_all_reduce_f64`] requires.
    #[inline(always)]
    unsafe fn peer_exchange(
        mine: f64,
        mailboxes: *const u64,
        k: u32,
        rank: u32,
        epoch: u64,
        timeout_ns: u64,
    ) -> Option<f64> {
        let started = globaltimer();
        let lane = thread_idx().x % 32;
        let slot = 2 * (epoch & 1) as usize;
        if lane == 0 {
            // SAFETY: entry `rank` of `mailboxes` is this rank's own mailbox, written by this
            // kernel only (the caller's contract).
            unsafe {
                let own = *mailboxes.add(rank as usize) as *mut u64;
                atomic_store_64_system(own.add(slot), Ordering::Relaxed, mine.to_bits());
                atomic_store_64_system(own.add(slot + 1), Ordering::Release, epoch);
            }
        }
        let mut theirs_value = 0.0f64;
        let mut late = false;
        if lane < k {
            // SAFETY: entry `lane < k` of `mailboxes` is rank `lane`'s mailbox, readable here;
            // the acquire of its epoch word orders the value's read after that rank's release.
            unsafe {
                let theirs = *mailboxes.add(lane as usize) as *mut u64;
                loop {
                    if atomic_load_64_system(theirs.add(slot + 1), Ordering::Acquire) == epoch {
                        theirs_value = f64::from_bits(atomic_load_64_system(
                            theirs.add(slot),
                            Ordering::Relaxed,
                        ));
                        break;
                    }
                    if globaltimer().wrapping_sub(started) > timeout_ns {
                        late = true;
                        break;
                    }
                }
            }
        }
        let mut total = 0.0f64;
        for q in 0..k {
            total += shfl_idx_sync(u32::MAX, theirs_value, q);
        }
        if gpu_std::warp::ballot_sync(u32::MAX, late) != 0 {
            None
        } else {
            Some(total)
        }
    }

    /// Writes the exchange's outcome: the sum over `value`, or NaN and `status = 1`.
    ///
    /// # Safety
    /// `value` and `status` point to one element each of this GPU's memory.
    #[inline(always)]
    unsafe fn finish(total: Option<f64>, value: *mut f64, status: *mut u32) {
        // SAFETY: the caller's contract.
        unsafe {
            match total {
                Some(t) => *value = t,
                None => {
                    *status = 1;
                    *value = f64::NAN;
                }
            }
        }
    }
}
