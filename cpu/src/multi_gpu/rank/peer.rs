//! [`PeerAllReduce`]: the all-reduce (sum) of one `f64` over peer memory, for the ranks of one
//! machine. Every rank's GPU reads every other rank's small mailbox directly (CUDA IPC maps it
//! into this process, peer access carries the loads over NVLink or PCIe), so the combine of a
//! sharded sum costs one kernel and a round trip over the links, about 2 us, where NCCL's
//! all-reduce of 8 bytes costs 10-14 us on 2-4 H200s (a ring or tree of several hops, each a
//! flag written and polled, in a kernel with many channels).
//!
//! The mailboxes come from `cuMemAlloc` (IPC does not export pool memory, where cudarc
//! allocates), their handles travel over the communicator (`cuIpcGetMemHandle`, an all-gather,
//! `cuIpcOpenMemHandle`), and each rank keeps its peers' mapped until it is dropped.
//! [`PeerAllReduce::new`] returns `None`, on every rank alike, where that cannot work: ranks on
//! several machines, more than 32 ranks, or a pair of GPUs without peer access.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig, sys};
use gpu::multi_gpu::{PEER_ALL_REDUCE_MAX_RANKS, PEER_MAILBOX_WORDS, kernels};
use gpu::reduce::REDUCE_SUM_BLOCK;

use super::RankCommunicator;
use crate::error::{DriverContext, Result, expect_len};
use crate::launch;
use crate::reduce::sum::one_launch_config;
use crate::reduce::{ReduceSum, SumF32F64};

/// Bytes of one rank's mailbox.
const MAILBOX_BYTES: usize = PEER_MAILBOX_WORDS * 8;

/// The all-reduce (sum) of one `f64` device scalar over the ranks of a [`RankCommunicator`],
/// through each other's memory: one launch of `gpu::multi_gpu::peer_all_reduce_f64` (one warp)
/// per call, on the communicator's stream. Every rank gets the same bits: the `k` values added
/// in rank order (`k - 1` roundings).
///
/// A rank that does not take part in a call within the communicator's timeout ends the others'
/// waits: their value becomes NaN, and [`PeerAllReduce::wait`] returns
/// [`Error::CollectiveTimeout`](crate::Error::CollectiveTimeout) (and aborts the communicator).
///
/// Every rank makes it, calls it the same number of times and drops it (a barrier: a rank's
/// mailbox is freed only after every rank has read it).
pub struct PeerAllReduce<'c> {
    comm: &'c RankCommunicator,
    /// This rank's mailbox (`cuMemAlloc`).
    own: sys::CUdeviceptr,
    /// The other ranks' mailboxes, mapped into this process (`cuIpcOpenMemHandle`).
    opened: Vec<sys::CUdeviceptr>,
    /// Every rank's mailbox address in this process, by rank.
    table: CudaSlice<u64>,
    status: CudaSlice<u32>,
    epoch: u64,
    /// The sharded sum's workspace, made on its first call.
    sum: Option<SumWorkspace>,
}

/// [`PeerAllReduce::sum_f32_into`]'s reduction workspace.
enum SumWorkspace {
    /// Over one rank: the plain reduction.
    Alone(ReduceSum<SumF32F64>),
    /// The fused kernel's: one `f64` partial per block of its one-wave grid and the last-block
    /// counter.
    Fused {
        partials: CudaSlice<f64>,
        counter: CudaSlice<u32>,
        sms: u32,
        max_grid: u32,
    },
}

impl<'c> PeerAllReduce<'c> {
    /// The mailboxes of every rank of `comm`, mapped into every rank's process. Collective:
    /// every rank calls it. `None` on every rank where some rank cannot use them: ranks on
    /// different machines (by host name and boot id), more than 32 ranks, or a mailbox that
    /// does not map (no peer access between two of the GPUs); use the communicator's
    /// [`all_reduce_in_place`](RankCommunicator::all_reduce_in_place) there.
    ///
    /// # Errors
    /// As [`RankCommunicator::gather_host`]; [`Error::Driver`](crate::Error::Driver) if the
    /// allocation or the export of this rank's mailbox fails.
    pub fn new(comm: &'c RankCommunicator) -> Result<Option<Self>> {
        let (k, rank) = (comm.world_size(), comm.rank());
        if k > PEER_ALL_REDUCE_MAX_RANKS as usize {
            return Ok(None);
        }
        let hosts = comm.gather_host(&[host_id()])?;
        if hosts.iter().any(|h| h[0] == 0 || h[0] != hosts[0][0]) {
            return Ok(None);
        }
        let gpu = comm.gpu();
        let (table, status) = (gpu.zeros(k)?, gpu.zeros(1)?);
        gpu.context()
            .bind_to_thread()
            .during("binding the context")?;
        let mut own: sys::CUdeviceptr = 0;
        // SAFETY: writes one address through the valid pointer, in the bound context.
        unsafe { sys::cuMemAlloc_v2(&mut own, MAILBOX_BYTES) }
            .result()
            .during("allocating the peer all-reduce's mailbox")?;
        let mut this = Self {
            comm,
            own,
            opened: Vec::with_capacity(k - 1),
            table,
            status,
            epoch: 0,
            sum: None,
        };
        let mut handle = sys::CUipcMemHandle { reserved: [0; 64] };
        // SAFETY: `own` is a live allocation of `MAILBOX_BYTES` in the bound context; the
        // memset is waited for before any rank can read the mailbox (the all-gather below
        // follows a context synchronisation); the handle is written through a valid pointer.
        unsafe {
            sys::cuMemsetD8_v2(own, 0, MAILBOX_BYTES)
                .result()
                .during("zeroing the mailbox")?;
            sys::cuCtxSynchronize()
                .result()
                .during("zeroing the mailbox")?;
            sys::cuIpcGetMemHandle(&mut handle, own)
                .result()
                .during("exporting the mailbox (cuIpcGetMemHandle)")?;
        }
        let bytes: Vec<u8> = handle.reserved.iter().map(|&c| c as u8).collect();
        let handles = comm.gather_host(&bytes)?;
        let mut table = vec![0u64; k];
        table[rank] = own;
        let mut mapped = true;
        for (q, h) in handles.iter().enumerate() {
            if q == rank {
                continue;
            }
            let mut theirs = sys::CUipcMemHandle { reserved: [0; 64] };
            for (d, &b) in theirs.reserved.iter_mut().zip(h) {
                *d = b as core::ffi::c_char;
            }
            let mut ptr: sys::CUdeviceptr = 0;
            // SAFETY: `theirs` is rank q's exported handle; the address is written through a
            // valid pointer; the mapping is closed on drop.
            let opened = unsafe {
                sys::cuIpcOpenMemHandle_v2(
                    &mut ptr,
                    theirs,
                    sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
                )
            };
            if opened.result().is_err() {
                mapped = false;
                continue;
            }
            this.opened.push(ptr);
            table[q] = ptr;
        }
        let every = comm.gather_host(&[mapped as u8])?;
        if every.iter().any(|m| m[0] == 0) {
            return Ok(None);
        }
        this.table = gpu.upload(&table)?;
        Ok(Some(this))
    }

    /// Queues the all-reduce (sum) of `value` (one `f64` on the communicator's GPU) over every
    /// rank, in place (over one rank, nothing: the value is the sum). Not waited for: [`PeerAllReduce::wait`] (or any wait on the stream, then
    /// [`PeerAllReduce::wait`] for the verdict).
    ///
    /// # Errors
    /// [`Error::CommunicatorAborted`](crate::Error::CommunicatorAborted);
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) unless `value` is one element;
    /// [`Error::WrongContext`](crate::Error::WrongContext);
    /// [`Error::Driver`](crate::Error::Driver) if the launch fails.
    pub fn all_reduce_in_place(&mut self, value: &mut impl DevicePtrMut<f64>) -> Result<()> {
        self.comm.check_alive()?;
        expect_len("value", 1, value.len())?;
        let gpu = self.comm.gpu();
        gpu.check_buffer("value", value)?;
        if self.comm.world_size() == 1 {
            // The sum over one rank is its value: nothing to launch.
            return Ok(());
        }
        let (k, rank, epoch, timeout_ns) = next_call(&mut self.epoch, self.comm);
        let cfg = launch::linear(1, PEER_ALL_REDUCE_MAX_RANKS, 0);
        // SAFETY: `table` holds k <= 32 mailbox addresses readable from this GPU (this rank's
        // own, and the peers' mapped through IPC with peer access), each `MAILBOX_BYTES`,
        // written only by this kernel on its owner's GPU; `value` and `status` are one element
        // each of this GPU's memory, borrowed for the launch; epochs count 1, 2, ... on every
        // rank (one per call, every rank calling alike), and calls on one stream do not overlap.
        unsafe {
            gpu.launch_unchecked(
                kernels::peer_all_reduce_f64,
                cfg,
                (
                    value,
                    &self.table,
                    k,
                    rank,
                    epoch,
                    timeout_ns,
                    &mut self.status,
                ),
            )
        }
    }

    /// Queues the sharded sum: `result` (one `f64` on the communicator's GPU) receives the sum
    /// of every rank's `shard`, on every rank, in one launch
    /// (`gpu::multi_gpu::reduce_sum_peer_f32_f64`): this GPU's reduction of its shard (`f32`
    /// accumulated in `f64`, as [`ReduceSum<SumF32F64>`](crate::reduce::ReduceSum)), whose last
    /// block exchanges the shard's total with the other ranks, so the combine costs no second
    /// kernel. Over one rank, the plain reduction. Returns the launch (for the rounding bound:
    /// [`reference::reduce_sum_depth`](crate::reduce::reference::reduce_sum_depth), plus
    /// `k - 1` roundings of the rank-order sum). Not waited for: [`PeerAllReduce::wait`].
    ///
    /// Launch: as [`ReduceSum`](crate::reduce::ReduceSum): blocks of 512 threads (256 for
    /// small shards), at most one wave of the fused kernel's resident blocks.
    ///
    /// # Errors
    /// As [`PeerAllReduce::all_reduce_in_place`]; [`Error::OutOfMemory`](crate::Error::OutOfMemory)
    /// for the workspace on the first call.
    pub fn sum_f32_into(
        &mut self,
        shard: &impl DevicePtr<f32>,
        result: &mut impl DevicePtrMut<f64>,
    ) -> Result<LaunchConfig> {
        self.comm.check_alive()?;
        expect_len("result", 1, result.len())?;
        let comm = self.comm;
        let gpu = comm.gpu();
        gpu.check_buffer("shard", shard)?;
        gpu.check_buffer("result", result)?;
        let ws = match self.sum.take() {
            Some(ws) => ws,
            None if comm.world_size() == 1 => SumWorkspace::Alone(ReduceSum::new(gpu)?),
            None => {
                let name = kernels::reduce_sum_peer_f32_f64.name();
                let max_grid = gpu.one_wave(name, REDUCE_SUM_BLOCK, 0)?;
                SumWorkspace::Fused {
                    partials: gpu.zeros(max_grid as usize)?,
                    counter: gpu.zeros(1)?,
                    sms: gpu.sm_count()?,
                    max_grid,
                }
            }
        };
        let (partials, counter, sms, max_grid) = match self.sum.insert(ws) {
            SumWorkspace::Alone(alone) => return alone.sum_into(gpu, shard, result),
            SumWorkspace::Fused {
                partials,
                counter,
                sms,
                max_grid,
            } => (partials, counter, *sms, *max_grid),
        };
        let (k, rank, epoch, timeout_ns) = next_call(&mut self.epoch, comm);
        let cfg = one_launch_config(shard.len(), 4, sms, max_grid);
        // SAFETY: `shard` is `len` f32 of this GPU (checked), 4-byte aligned, not written
        // during the launch (borrowed); `partials` holds `max_grid >= grid` accumulators;
        // `counter` is 0 (zeroed, and each launch leaves it 0) and used by this workspace's
        // launches only, which one stream orders; `result` and `status` are one element each;
        // the mailboxes as in `all_reduce_in_place`.
        unsafe {
            gpu.launch_unchecked(
                kernels::reduce_sum_peer_f32_f64,
                cfg,
                (
                    shard,
                    shard.len(),
                    partials,
                    counter,
                    result,
                    &self.table,
                    k,
                    rank,
                    epoch,
                    timeout_ns,
                    &mut self.status,
                ),
            )?;
        }
        Ok(cfg)
    }

    /// Waits for the stream (as [`RankCommunicator::synchronize`]) and says whether every call
    /// so far found every rank.
    ///
    /// # Errors
    /// [`Error::CollectiveTimeout`](crate::Error::CollectiveTimeout) if a call waited past the
    /// timeout for a rank (the communicator is then aborted); as
    /// [`RankCommunicator::synchronize`].
    pub fn wait(&self) -> Result<()> {
        let during = "the all-reduce over peer memory";
        self.comm.synchronize(during)?;
        if self.comm.gpu().download(&self.status, during)?[0] != 0 {
            return Err(self.comm.time_out(during));
        }
        Ok(())
    }
}

impl Drop for PeerAllReduce<'_> {
    fn drop(&mut self) {
        // Every rank passes its last call before any mailbox is freed (a failed barrier means a
        // rank is gone, and the communicator is aborted: nothing more to wait for).
        if !self.comm.is_aborted() {
            let _ = self
                .comm
                .barrier_on_stream()
                .and_then(|()| self.comm.synchronize("the peer all-reduce's last call"));
        }
        if self.comm.gpu().context().bind_to_thread().is_err() {
            return;
        }
        // SAFETY: the stream's work is finished (or the communicator aborted, its work given
        // up); each address was opened or allocated here once and is released once.
        unsafe {
            let _ = sys::cuCtxSynchronize();
            for &p in &self.opened {
                let _ = sys::cuIpcCloseMemHandle(p);
            }
            let _ = sys::cuMemFree_v2(self.own);
        }
    }
}

/// A call's kernel arguments: the ranks, this rank, the call's epoch (`epoch` counts the
/// launches from 1) and the timeout in nanoseconds.
fn next_call(epoch: &mut u64, comm: &RankCommunicator) -> (u32, u32, u64, u64) {
    *epoch += 1;
    let timeout_ns = u64::try_from(comm.timeout().as_nanos()).unwrap_or(u64::MAX);
    (
        comm.world_size() as u32,
        comm.rank() as u32,
        *epoch,
        timeout_ns,
    )
}

/// This machine's identity: a hash of its host name and boot id (Linux), 0 where unknown.
fn host_id() -> u64 {
    use std::hash::{Hash, Hasher};
    let read = |p: &str| std::fs::read_to_string(p).ok();
    match (
        read("/proc/sys/kernel/hostname"),
        read("/proc/sys/kernel/random/boot_id"),
    ) {
        (Some(name), Some(boot)) => {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (name.trim(), boot.trim()).hash(&mut h);
            h.finish().max(1)
        }
        _ => 0,
    }
}
