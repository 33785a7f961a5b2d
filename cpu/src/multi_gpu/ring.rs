//! The teaching all-reduce: a ring, reduce-scatter then all-gather, as NCCL's ring algorithm
//! does it (one process, one thread, every GPU), over NVLink (or PCIe) peer access. NCCL's
//! all-reduce ([`GpuGroup::all_reduce_sum`]) stays the one to call: it fuses every step into one
//! persistent kernel that signals its neighbours through flags in memory and picks a tree or
//! other protocols for small sizes; this one shows the data movement plainly, one kernel per
//! step, and is measured against it by `demo multi-gpu`.
//!
//! # Algorithm
//! `n` GPUs in a ring (rank `r` receives from `r - 1 mod n`), each buffer split into `n` chunks
//! (chunk `c` is elements `c * len / n .. (c + 1) * len / n`, each start rounded down to a
//! multiple of 32 elements, 128 bytes: [`aligned_chunk`]).
//! - Reduce-scatter, steps `s = 0 .. n - 1`: rank `q` adds chunk `(q - 1 - s) mod n` of rank
//!   `q - 1`'s buffer into its own (`ring_reduce_peer`: the kernel reads the neighbour's memory
//!   directly, 16 bytes per load, and adds as the bytes arrive). After `n - 1` steps rank `r`
//!   holds the full sum of chunk `(r + 1) mod n`.
//! - All-gather, steps `t = 0 .. n - 1`: rank `q` copies the finished chunk `(q - t) mod n`
//!   from rank `q - 1` over its own (`ring_copy_peer`).
//!
//! Each rank receives `2 (n - 1)` chunks of `len / n` elements: `2 (n - 1) / n` of its buffer,
//! the minimum for an all-reduce and the factor behind nccl-tests' busbw
//! ([`all_reduce_bus_factor`](super::all_reduce_bus_factor)); every byte crosses one link once,
//! and every link of the ring carries the same bytes at the same time, so the all-reduce runs
//! at the bandwidth of one link. Every element is the sum of the `n` inputs in ring order,
//! `n - 1` roundings, identical on every rank.
//!
//! # Ordering
//! Before each step every rank records an event on its stream and waits for its two
//! neighbours' (no host synchronisation): the previous rank's (the chunk it reads was finished
//! by that rank's previous step) and the next rank's (that rank's reads of this rank's buffer
//! are done before this rank writes it again).
//!
//! Peer access covers two kinds of memory: `cuCtxEnablePeerAccess` the context's own
//! allocations, and `cuMemPoolSetAccess` those of the device's memory pool, which is where
//! cudarc allocates (`cuMemAllocAsync`); making the workspace does both for every pair of ring
//! neighbours (the pool's grant holds for every allocation of the pool, then and later).
//!
//! # Without peer access
//! Where `cuDeviceCanAccessPeer` denies a pair, the ring stages each chunk instead: a
//! `cuMemcpyPeerAsync` into a staging buffer on the receiver (the driver routes it through the
//! host), then the `add_into` kernel; correct, slow.

use cudarc::driver::{CudaEvent, CudaSlice, DevicePtrMut, LaunchConfig, SyncOnDrop, sys};
use gpu::multi_gpu::{ADD_INTO_BLOCK, RING_BLOCK, kernels};

use crate::kernel::DeviceAddress;

use super::{GpuGroup, check_equal};
use crate::error::{DriverContext, Error, Result};
use crate::launch;

/// The ring all-reduce's workspace on every GPU of a group: an event per GPU (and, only where
/// peer access is denied, a staging buffer of one chunk), for buffers of up to
/// [`RingAllReduce::capacity`] elements. Making it enables peer access between ring neighbours.
pub struct RingAllReduce {
    staging: Vec<CudaSlice<f32>>,
    events: Vec<CudaEvent>,
    max_grid: Vec<u32>,
    /// One wave of [`RING_BLOCK`]-thread blocks per GPU (the peer-to-peer steps' grid).
    ring_grid: Vec<u32>,
    capacity: usize,
    peer_access: bool,
}

/// Elements `c * len / n .. (c + 1) * len / n` of a buffer of `len` split in `n` chunks.
pub fn chunk(len: usize, n: usize, c: usize) -> std::ops::Range<usize> {
    let at = |c: usize| (c as u128 * len as u128 / n.max(1) as u128) as usize;
    at(c)..at(c + 1)
}

/// Elements per alignment unit of [`aligned_chunk`]: 32 `f32`, 128 bytes (a cache line).
pub const CHUNK_ALIGN: usize = 32;

/// As [`chunk`], with every boundary but the last rounded down to a multiple of
/// [`CHUNK_ALIGN`] elements, so that each chunk of an aligned buffer starts on a 128-byte
/// boundary: the peer-to-peer steps' `float4` accesses need 16, and a warp's 512-byte load
/// covers 16 sectors of 32 bytes only from a sector boundary (`demo multi-gpu` shards its sums
/// with it).
pub fn aligned_chunk(len: usize, n: usize, c: usize) -> std::ops::Range<usize> {
    rounded_chunk(len, n, c, CHUNK_ALIGN)
}

/// Elements per 2 MiB of `f32`: the GPU's large page, [`shard`]'s alignment for large shards.
pub const SHARD_PAGE: usize = (2 << 20) / size_of::<f32>();

/// The `c`-th of `n` shards of a buffer of `len` `f32` for a sharded sum: as [`aligned_chunk`],
/// but where every shard spans at least 256 pages of 2 MiB, every boundary but the last is
/// rounded down to a multiple of [`SHARD_PAGE`] instead, so that each shard starts on a page
/// boundary (shards then differ by at most one page, 0.4% of the smallest). `demo multi-gpu`
/// shards its strong-scaling sums with it.
pub fn shard(len: usize, n: usize, c: usize) -> std::ops::Range<usize> {
    let align = if len / n.max(1) >= 256 * SHARD_PAGE {
        SHARD_PAGE
    } else {
        CHUNK_ALIGN
    };
    rounded_chunk(len, n, c, align)
}

/// [`chunk`] with every boundary but the last rounded down to a multiple of `align`.
fn rounded_chunk(len: usize, n: usize, c: usize, align: usize) -> std::ops::Range<usize> {
    let at = |c: usize| {
        if c >= n {
            len
        } else {
            chunk(len, n, c).start / align * align
        }
    };
    at(c)..at(c + 1)
}

impl RingAllReduce {
    /// The workspace for buffers of up to `capacity` elements on every GPU of `group`: peer
    /// access enabled between ring neighbours where the devices allow it, and where they do not
    /// a staging buffer of `ceil(capacity / n)` floats per GPU.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; [`Error::Driver`] if a query, the peer-access setup or an
    /// allocation fails.
    pub fn new(group: &GpuGroup, capacity: usize) -> Result<Self> {
        let n = group.len();
        let staging_len = if n > 1 {
            capacity.div_ceil(n).max(1)
        } else {
            1
        };
        let gpus = group.gpus();
        let peer_access = enable_peer_access(group)?;
        // Staging only where a chunk must be copied before it is added.
        let staging_len = if peer_access { 1 } else { staging_len };
        Ok(Self {
            staging: gpus
                .iter()
                .map(|g| g.zeros(staging_len))
                .collect::<Result<_>>()?,
            events: gpus
                .iter()
                .map(|g| g.context().new_event(None).during("creating an event"))
                .collect::<Result<_>>()?,
            max_grid: gpus
                .iter()
                .map(|g| Ok(g.sm_count()? * (g.max_threads_per_sm()? / ADD_INTO_BLOCK).max(1)))
                .collect::<Result<_>>()?,
            ring_grid: gpus
                .iter()
                .map(|g| Ok(g.sm_count()? * (g.max_threads_per_sm()? / RING_BLOCK).max(1)))
                .collect::<Result<_>>()?,
            capacity,
            peer_access,
        })
    }

    /// The longest buffers this workspace takes, in elements.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether every rank can read its ring neighbours' memory directly (peer access enabled);
    /// `false` means the driver stages the copies through the host.
    pub fn peer_access(&self) -> bool {
        self.peer_access
    }

    /// Queues the ring all-reduce (sum) of `buffers` in place: one `f32` buffer or view per
    /// GPU (`buffers[r]` on rank `r`'s device), all of one length; every buffer becomes the
    /// elementwise sum of all of them. No host synchronisation. One GPU, or empty buffers:
    /// nothing to do.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless one buffer per GPU (or if the workspace was made for
    /// another group size); [`Error::UnequalLengths`]; [`Error::OutOfRange`] for buffers
    /// longer than the capacity; [`Error::WrongContext`]; [`Error::Driver`] if a copy, launch
    /// or event fails.
    pub fn all_reduce_sum<D: DevicePtrMut<f32>>(
        &mut self,
        group: &GpuGroup,
        buffers: &mut [D],
    ) -> Result<()> {
        let n = group.len();
        group.check_count("buffers", buffers.len())?;
        group.check_count(
            "RingAllReduce workspaces (made for another group)",
            self.staging.len(),
        )?;
        let lengths: Vec<usize> = buffers.iter().map(|b| b.len()).collect();
        check_equal("buffers", &lengths)?;
        let len = lengths[0];
        if len > self.capacity {
            return Err(Error::OutOfRange {
                what: "length",
                value: len as u64,
                min: 0,
                max: self.capacity as u64,
            });
        }
        let gpus = group.gpus();
        for (gpu, buffer) in gpus.iter().zip(buffers.iter()) {
            gpu.check_buffer("buffer", buffer)?;
        }
        if n == 1 || len == 0 {
            return Ok(());
        }
        // The kernel is looked up on every GPU before anything is queued (cached per context).
        for g in gpus {
            g.function(kernels::add_into.name())?;
            g.function(kernels::ring_reduce_peer.name())?;
            g.function(kernels::ring_copy_peer.name())?;
        }
        // Pointers of every buffer and staging buffer, with cudarc's tracking of them recorded
        // when the guards drop, after the last barrier (which covers every stream's use).
        let mut guards: Vec<SyncOnDrop<'_>> = Vec::with_capacity(2 * n);
        let mut bufs = Vec::with_capacity(n);
        let mut stage = Vec::with_capacity(n);
        for ((gpu, buffer), staging) in gpus.iter().zip(buffers.iter_mut()).zip(&mut self.staging) {
            let (ptr, g) = buffer.device_ptr_mut(gpu.stream());
            bufs.push(ptr);
            guards.push(g);
            let (ptr, g) = staging.device_ptr_mut(gpu.stream());
            stage.push(ptr);
            guards.push(g);
        }
        let events = &self.events;
        let barrier = || -> Result<()> {
            for (gpu, event) in gpus.iter().zip(events) {
                event
                    .record(gpu.stream())
                    .during("recording a ring event")?;
            }
            for (r, gpu) in gpus.iter().enumerate() {
                for peer in [(r + n - 1) % n, (r + 1) % n] {
                    gpu.stream()
                        .wait(&events[peer])
                        .during("waiting for a ring neighbour")?;
                }
            }
            Ok(())
        };
        let f4 = std::mem::size_of::<f32>() as u64;
        let copy = |from: usize, to: usize, src: u64, dst: u64, elements: usize| -> Result<()> {
            let (a, b) = (gpus[from].context(), gpus[to].context());
            b.bind_to_thread().during("binding the context")?;
            // SAFETY: `src` is `elements` floats of rank `from`'s buffer (a chunk within its
            // length), `dst` as many of rank `to`'s buffer or staging buffer (at least one
            // chunk long); the contexts are the ones the pointers belong to and the stream is
            // rank `to`'s; the barriers order the copy after the writes of `src` and before
            // any later write of either.
            unsafe {
                cudarc::driver::result::memcpy_peer_async(
                    b.cu_ctx(),
                    dst,
                    a.cu_ctx(),
                    src,
                    elements * f4 as usize,
                    gpus[to].stream().cu_stream(),
                )
            }
            .during(format!(
                "copying {elements} floats from device {} to device {}",
                gpus[from].ordinal(),
                gpus[to].ordinal()
            ))
        };
        if self.peer_access {
            // Pull: every step is one kernel per GPU that reads the previous GPU's chunk
            // directly (peer access), in 16-byte aligned chunks.
            let grids = &self.ring_grid;
            let step = |q: usize, c: std::ops::Range<usize>, reduce: bool| -> Result<()> {
                let r = (q + n - 1) % n;
                let count = c.len();
                if count == 0 {
                    return Ok(());
                }
                let offset = c.start as u64 * f4;
                let stream = gpus[q].stream();
                let grid = count
                    .div_ceil(4 * RING_BLOCK as usize)
                    .clamp(1, grids[q] as usize) as u32;
                let cfg = launch::linear(grid, RING_BLOCK, 0);
                // SAFETY: `dst` is `count` floats of rank q's own buffer (chunk c, within its
                // length) and `src` the same chunk of rank r's buffer, readable from rank q's
                // context because peer access is enabled between ring neighbours; the guards
                // keep both buffers borrowed. The barrier before this step ordered every write
                // of `src` before it and every other GPU's reads of `dst` (earlier steps) or
                // later writes (the next barrier) away from it, so nothing else touches them.
                let (mut dst, src) = unsafe {
                    (
                        DeviceAddress::<f32>::new(bufs[q] + offset, count, stream),
                        DeviceAddress::<f32>::new(bufs[r] + offset, count, stream),
                    )
                };
                let kernel = if reduce {
                    kernels::ring_reduce_peer
                } else {
                    kernels::ring_copy_peer
                };
                // SAFETY: as above: `dst` this GPU's, `src` readable through peer access, `count`
                // floats each, neither touched by anything else during the launch.
                unsafe { gpus[q].launch_unchecked(kernel, cfg, (&mut dst, &src, count)) }?;
                Ok(())
            };
            for s in 0..n - 1 {
                barrier()?;
                for q in 0..n {
                    let r = (q + n - 1) % n;
                    step(q, aligned_chunk(len, n, (r + n - s) % n), true)?;
                }
            }
            for t in 0..n - 1 {
                barrier()?;
                for q in 0..n {
                    let r = (q + n - 1) % n;
                    step(q, aligned_chunk(len, n, (r + 1 + n - t) % n), false)?;
                }
            }
            barrier()?;
            drop(guards);
            return Ok(());
        }
        for s in 0..n - 1 {
            barrier()?;
            for r in 0..n {
                let q = (r + 1) % n;
                let c = chunk(len, n, (r + n - s) % n);
                if c.is_empty() {
                    continue;
                }
                let offset = c.start as u64 * f4;
                copy(r, q, bufs[r] + offset, stage[q], c.len())?;
                let count = c.len();
                let per_block = ADD_INTO_BLOCK as usize;
                let grid = count
                    .div_ceil(per_block)
                    .clamp(1, self.max_grid[q] as usize) as u32;
                let cfg: LaunchConfig = launch::linear(grid, ADD_INTO_BLOCK, 0);
                let stream = gpus[q].stream();
                // SAFETY: `dst` is `count` floats of rank q's buffer (chunk c) and `src` the
                // staging buffer (it holds `ceil(capacity / n)` >= `count` floats), both in
                // rank q's context; the guards taken above keep both buffers borrowed and
                // record their use once the last barrier covers every stream's.
                let (mut dst, src) = unsafe {
                    (
                        DeviceAddress::<f32>::new(bufs[q] + offset, count, stream),
                        DeviceAddress::<f32>::new(stage[q], count, stream),
                    )
                };
                // A safe kernel; `dst` is chunk c of rank q's buffer, `src` the staging buffer
                // that the copy just queued on the same stream filled with `count` floats.
                gpus[q].launch(kernels::add_into, cfg, (&mut dst, &src))?;
            }
        }
        for t in 0..n - 1 {
            barrier()?;
            for r in 0..n {
                let q = (r + 1) % n;
                let c = chunk(len, n, (r + 1 + n - t) % n);
                if c.is_empty() {
                    continue;
                }
                let offset = c.start as u64 * f4;
                copy(r, q, bufs[r] + offset, bufs[q] + offset, c.len())?;
            }
        }
        barrier()?;
        drop(guards);
        Ok(())
    }
}

/// Queues the ring all-reduce (sum) of `buffers` in place, with a [`RingAllReduce`] made for
/// their length (allocated, and freed after the work).
///
/// # Errors
/// As [`RingAllReduce::new`] and [`RingAllReduce::all_reduce_sum`].
pub fn ring_all_reduce_sum<D: DevicePtrMut<f32>>(
    group: &GpuGroup,
    buffers: &mut [D],
) -> Result<()> {
    let len = buffers.first().map_or(0, |b| b.len());
    RingAllReduce::new(group, len)?.all_reduce_sum(group, buffers)
}

/// Enables peer access both ways between ring neighbours where `cuDeviceCanAccessPeer` allows
/// it; whether every pair could.
fn enable_peer_access(group: &GpuGroup) -> Result<bool> {
    let gpus = group.gpus();
    let n = gpus.len();
    let mut all = true;
    for r in 0..n {
        for peer in [(r + 1) % n, (r + n - 1) % n] {
            if peer == r {
                continue;
            }
            let (ctx, other) = (gpus[r].context(), gpus[peer].context());
            let mut can = 0;
            // SAFETY: writes one int through the valid pointer; both devices exist.
            unsafe { sys::cuDeviceCanAccessPeer(&mut can, ctx.cu_device(), other.cu_device()) }
                .result()
                .during("querying peer access")?;
            if can == 0 {
                all = false;
                continue;
            }
            ctx.bind_to_thread().during("binding the context")?;
            // SAFETY: enables the current context (rank r's, bound above) to access the live
            // context `other`; no pointers are involved.
            let enabled = unsafe { sys::cuCtxEnablePeerAccess(other.cu_ctx(), 0) };
            match enabled {
                sys::cudaError_enum::CUDA_SUCCESS
                | sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                e => {
                    return Err(Error::Driver {
                        during: format!(
                            "enabling peer access from device {} to device {}",
                            gpus[r].ordinal(),
                            gpus[peer].ordinal()
                        ),
                        source: cudarc::driver::DriverError(e),
                    });
                }
            }
            if other.has_async_alloc() {
                grant_pool_access(other.cu_device(), ctx.cu_device()).during(format!(
                    "granting device {} access to device {}'s memory pool",
                    gpus[r].ordinal(),
                    gpus[peer].ordinal()
                ))?;
            }
        }
    }
    Ok(all)
}

/// Lets `reader` read and write every allocation of `owner`'s current memory pool
/// (`cuMemPoolSetAccess`). cudarc allocates with `cuMemAllocAsync` from that pool, and pool
/// memory is not covered by `cuCtxEnablePeerAccess`: a kernel on `reader` that loads from it
/// faults until the pool grants access (copies, done by the copy engines, need no grant).
fn grant_pool_access(
    owner: sys::CUdevice,
    reader: sys::CUdevice,
) -> std::result::Result<(), cudarc::driver::DriverError> {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: writes one handle through the valid pointer; `owner` is a device of a live context.
    unsafe { sys::cuDeviceGetMemPool(&mut pool, owner) }.result()?;
    let desc = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: reader,
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: `pool` is the device's live pool and `desc` one valid descriptor for the call.
    unsafe { sys::cuMemPoolSetAccess(pool, &desc, 1) }.result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_chunks_cover_the_buffer_once_on_128_byte_boundaries() {
        for len in [0usize, 1, 5, 7, 100, 1 << 20 | 3, 1_000_003] {
            for n in 1..=8 {
                let mut next = 0;
                for c in 0..n {
                    let r = aligned_chunk(len, n, c);
                    assert_eq!(r.start, next, "len {len} n {n} chunk {c}");
                    assert_eq!(r.start % CHUNK_ALIGN, 0);
                    next = r.end;
                }
                assert_eq!(next, len);
            }
        }
    }

    #[test]
    fn shards_cover_the_buffer_once_and_large_ones_start_on_pages() {
        for len in [0usize, 1, 1_000_003, 1 << 30, (1 << 30) + 7, 3 << 29] {
            for n in 1..=8 {
                let mut next = 0;
                let large = len / n >= 256 * SHARD_PAGE;
                for c in 0..n {
                    let r = shard(len, n, c);
                    assert_eq!(r.start, next, "len {len} n {n} shard {c}");
                    let align = if large { SHARD_PAGE } else { CHUNK_ALIGN };
                    assert_eq!(r.start % align, 0, "len {len} n {n} shard {c}");
                    if large {
                        assert!(r.len().abs_diff(len / n) <= SHARD_PAGE);
                    }
                    next = r.end;
                }
                assert_eq!(next, len);
            }
        }
    }

    #[test]
    fn chunks_cover_the_buffer_once() {
        for len in [0usize, 1, 2, 3, 7, 100, 1 << 20 | 3] {
            for n in 1..=8 {
                let mut next = 0;
                for c in 0..n {
                    let r = chunk(len, n, c);
                    assert_eq!(r.start, next, "len {len} n {n} chunk {c}");
                    assert!(r.len() <= len.div_ceil(n));
                    next = r.end;
                }
                assert_eq!(next, len);
            }
        }
    }
}
