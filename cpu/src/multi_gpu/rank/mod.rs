//! One rank of a job of one process per GPU: NCCL's communicator for this process's GPU
//! (`ncclCommInitRank`), its unique id agreed through the [`rendezvous`](super::rendezvous),
//! and the five collectives on the caller's device memory and stream. This is how NCCL is used
//! past one machine: the same program runs under `torchrun --nproc-per-node N --no-python`
//! (or MPI, or Slurm, with the variables [`RankEnv`] reads) on one node or many.
//!
//! # Calling it
//! ```no_run
//! use cpu::multi_gpu::rank::{RankCommunicator, ReduceOp};
//!
//! # fn main() -> cpu::Result<()> {
//! // SAFETY: the first statement of main, before any thread exists (see keep_nvls_off).
//! unsafe { cpu::multi_gpu::keep_nvls_off() };
//! // RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT as torchrun sets them; the GPU is
//! // LOCAL_RANK's.
//! let comm = RankCommunicator::from_env()?;
//! let gpu = comm.gpu();
//! let mut grads = gpu.upload(&vec![1.0f32; 1 << 20])?;
//! comm.all_reduce_in_place(&mut grads, ReduceOp::Sum)?; // queued on gpu's stream
//! comm.synchronize("the all-reduce")?; // every element = WORLD_SIZE
//! # Ok(())
//! # }
//! ```
//!
//! For the latency-bound all-reduce of one `f64` (a sharded sum's partials) between the ranks
//! of one machine, [`PeerAllReduce`] reads every rank's mailbox over peer memory in one small
//! kernel: about 2 us where NCCL's all-reduce of 8 bytes takes 10-14 us.
//!
//! # A rank that dies never hangs the others
//! NCCL's kernels wait on the GPU for their peers' data; a peer that has exited never sends
//! it, and a plain `cuStreamSynchronize` would wait forever. Every wait here is bounded by the
//! communicator's [`timeout`](RankCommunicator::timeout):
//! - the rendezvous has the deadline, and `ncclCommInitRankConfig` runs on a thread of its own
//!   that the caller waits for until the deadline ([`Error::CollectiveTimeout`] after it);
//! - the communicator is a *blocking* one, as PyTorch's are: NCCL queues a collective from the
//!   calling thread (a non-blocking communicator hands every call to a thread of NCCL's: a
//!   small all-reduce over 4 H200s took 80-100 us through one, against 57 us for the blocking
//!   communicators of one process). A blocking call can still block
//!   the host, while NCCL connects to a peer for the first time; so each call runs with a
//!   watchdog thread armed, which calls `ncclCommAbort` at the deadline and so ends the call;
//! - [`synchronize`](RankCommunicator::synchronize) polls an event and
//!   `ncclCommGetAsyncError` (spinning for 200 us, then yielding, then sleeping) and aborts at
//!   the deadline: the abort stops this rank's NCCL kernels.
//!
//! Each returns [`Error::CollectiveTimeout`]; every later call on an aborted communicator
//! returns [`Error::CommunicatorAborted`]. (PyTorch's process groups do the same with their
//! watchdog thread and `TORCH_NCCL_ASYNC_ERROR_HANDLING`.)
//!
//! What NCCL cannot see, nothing here can either: ranks that call collectives with different
//! counts, types or orders exchange the wrong bytes or wait for each other forever. The
//! second case ends at the watchdog's deadline; the first is the caller's contract, as with
//! NCCL itself. [`RankCommunicator::agree`] is a cheap check of a value every rank must share
//! (a length, a size), with [`Error::RanksDisagree`] naming both values.

use std::cell::RefCell;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, DevicePtrMut, DeviceSlice};
use cudarc::nccl::result::{self as nccl, NcclError, NcclStatus};
use cudarc::nccl::sys as nccl_sys;

mod config;
mod host;
mod peer;
mod types;
mod watchdog;

pub use peer::PeerAllReduce;
pub use types::{NcclType, ReduceOp};

use config::nccl_config;
use watchdog::{Backoff, CommPtr, Shared, WatchState, watch};

use super::rendezvous::{RankEnv, UNIQUE_ID_BYTES};
use super::{nccl_error, require_nccl, require_nvls_setting};
use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result, expect_len};

/// The watchdog's default deadline for the rendezvous, the communicator's initialisation and
/// every wait: long enough for a 4 GiB collective on a slow link, short enough that a job
/// whose rank died ends within a minute.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A fresh NCCL unique id (`ncclGetUniqueId`): what rank 0 serves at the rendezvous.
///
/// # Errors
/// [`Error::NcclNotFound`]; [`Error::Nccl`].
pub fn unique_id() -> Result<[u8; UNIQUE_ID_BYTES]> {
    require_nccl()?;
    let id = nccl::get_uniqueid().map_err(nccl_error("making an NCCL unique id"))?;
    Ok(id.internal.map(|b| b as u8))
}

/// This process's rank of a job of one process per GPU: its GPU (a [`Gpu`] handle whose
/// stream the collectives run on) and its NCCL communicator, aborted when dropped.
///
/// Every collective checks its buffers (device, lengths) before NCCL sees them and queues the
/// work on [`gpu`](Self::gpu)'s stream without a host synchronisation; wait with
/// [`synchronize`](Self::synchronize) (the watchdog), never with the stream's own
/// synchronisation, so that a dead peer ends in an error. Every rank must call the same
/// collectives in the same order with the same counts (NCCL's contract).
///
/// Not `Send`: the communicator is used from the thread that made it.
#[derive(Debug)]
pub struct RankCommunicator {
    /// The communicator and the watchdog's state, shared with the watchdog thread.
    shared: Arc<Shared>,
    watchdog: Option<JoinHandle<()>>,
    gpu: Gpu,
    rank: usize,
    world_size: usize,
    timeout: Duration,
    /// One byte, for [`barrier_on_stream`](Self::barrier_on_stream).
    flag: RefCell<CudaSlice<u8>>,
    /// The event [`synchronize`](Self::synchronize) records and polls (made once).
    done: CudaEvent,
}

impl RankCommunicator {
    /// This process's rank as torchrun's environment describes it ([`RankEnv::from_env`]): on
    /// device `LOCAL_RANK` (a new handle), with [`DEFAULT_TIMEOUT`].
    ///
    /// # Errors
    /// [`Error::RankEnvironment`]; as [`Gpu::new`] and [`RankCommunicator::new`].
    pub fn from_env() -> Result<Self> {
        let env = RankEnv::from_env()?;
        let gpu = Gpu::new(env.local_rank)?;
        Self::new(gpu, &env, DEFAULT_TIMEOUT)
    }

    /// Rank `env.rank` of `env.world_size` on `gpu`: the rendezvous at `env`'s address for the
    /// unique id (rank 0 makes it), then the communicator, each within `timeout`, which also
    /// bounds every later [`synchronize`](Self::synchronize).
    ///
    /// Needs `NCCL_NVLS_ENABLE` set in the environment (see
    /// [`keep_nvls_off`](super::keep_nvls_off)).
    ///
    /// # Errors
    /// [`Error::NcclNotFound`]; [`Error::NcclEnvironment`]; [`Error::Rendezvous`];
    /// [`Error::CollectiveTimeout`] if a rank does not join the communicator in time;
    /// [`Error::Nccl`].
    pub fn new(gpu: Gpu, env: &RankEnv, timeout: Duration) -> Result<Self> {
        require_nccl()?;
        require_nvls_setting()?;
        let id = env.exchange_unique_id(timeout, unique_id)?;
        Self::with_unique_id(gpu, env.rank, env.world_size, &id, timeout)
    }

    /// Rank `rank` of `world_size` on `gpu` from a unique id the caller has given every rank
    /// (rank 0's [`unique_id`], sent by MPI or a file): `ncclCommInitRankConfig`, non-blocking,
    /// waited for until `timeout`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for `world_size` 0 or above `i32::MAX`, or `rank` not below it;
    /// [`Error::NcclNotFound`]; [`Error::NcclEnvironment`]; [`Error::CollectiveTimeout`];
    /// [`Error::Nccl`].
    pub fn with_unique_id(
        gpu: Gpu,
        rank: usize,
        world_size: usize,
        id: &[u8; UNIQUE_ID_BYTES],
        timeout: Duration,
    ) -> Result<Self> {
        if world_size == 0 || world_size > i32::MAX as usize {
            return Err(Error::OutOfRange {
                what: "world size",
                value: world_size as u64,
                min: 1,
                max: i32::MAX as u64,
            });
        }
        if rank >= world_size {
            return Err(Error::OutOfRange {
                what: "rank",
                value: rank as u64,
                min: 0,
                max: world_size as u64 - 1,
            });
        }
        require_nccl()?;
        require_nvls_setting()?;
        let unique = nccl_sys::ncclUniqueId {
            internal: id.map(|b| b as _),
        };
        let flag = RefCell::new(gpu.zeros::<u8>(1)?);
        let during = format!("making rank {rank} of {world_size}'s NCCL communicator");
        // A blocking ncclCommInitRankConfig on a thread of its own, waited for until the
        // timeout: a rank that never joins cannot hold this one. (At the deadline the thread is
        // left blocked, and aborts the communicator if it ever returns one.)
        let ctx = gpu.context().clone();
        let (sent, received) = std::sync::mpsc::channel();
        let init = move || {
            let made = ctx
                .bind_to_thread()
                .map_err(|_| NcclError(nccl_sys::ncclResult_t::ncclUnhandledCudaError))
                .and_then(|()| {
                    let mut config = nccl_config(true);
                    let mut comm: nccl_sys::ncclComm_t = std::ptr::null_mut();
                    // SAFETY: `comm` and `config` are valid for the call (config is a complete
                    // ncclConfig_t of the 2.28 layout, see nccl_config); `rank` < `world_size`
                    // <= i32::MAX (checked above); NCCL takes the runtime's current device,
                    // the context bound above.
                    unsafe {
                        nccl::comm_init_rank_config(
                            &mut comm,
                            world_size as i32,
                            unique,
                            rank as i32,
                            &mut config,
                        )
                    }
                    .map(|_| CommPtr(comm))
                });
            if let Err(std::sync::mpsc::SendError(Ok(comm))) = sent.send(made) {
                // SAFETY: the communicator just made, which nobody else holds.
                let _ = unsafe { nccl::comm_abort(comm.0) };
            }
        };
        std::thread::Builder::new()
            .name(format!("nccl-init-rank-{rank}"))
            .spawn(init)
            .map_err(|e| Error::Nccl {
                during: during.clone(),
                code: 0,
                message: format!("cannot start the initialisation thread: {e}"),
            })?;
        let comm = match received.recv_timeout(timeout) {
            Ok(Ok(comm)) if !comm.0.is_null() => comm,
            Ok(Ok(_)) => {
                return Err(Error::Nccl {
                    during,
                    code: 0,
                    message: "NCCL returned no communicator".into(),
                });
            }
            Ok(Err(e)) => {
                return Err(nccl_error(format!("rank {rank} of {world_size}: {during}"))(e));
            }
            Err(_) => {
                return Err(Error::CollectiveTimeout {
                    rank,
                    world_size,
                    during,
                    timeout,
                });
            }
        };
        Self::watched(comm, gpu, rank, world_size, timeout, flag)
    }

    /// A communicator NCCL has made, with its watchdog thread started.
    fn watched(
        comm: CommPtr,
        gpu: Gpu,
        rank: usize,
        world_size: usize,
        timeout: Duration,
        flag: RefCell<CudaSlice<u8>>,
    ) -> Result<Self> {
        let shared = Arc::new(Shared {
            comm,
            state: Mutex::new(WatchState::default()),
            wake: Condvar::new(),
        });
        let done = gpu
            .context()
            .new_event(Some(
                cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING,
            ))
            .during("creating the watchdog's event");
        let done = match done {
            Ok(event) => event,
            Err(e) => {
                let mut state = shared.lock();
                shared.abort_locked(&mut state, "no event".into());
                return Err(e);
            }
        };
        let theirs = Arc::clone(&shared);
        let watchdog = std::thread::Builder::new()
            .name(format!("nccl-watchdog-rank-{rank}"))
            .spawn(move || watch(theirs));
        let watchdog = match watchdog {
            Ok(handle) => handle,
            Err(e) => {
                let mut state = shared.lock();
                shared.abort_locked(&mut state, "no watchdog".into());
                return Err(Error::Nccl {
                    during: format!("starting rank {rank}'s watchdog thread"),
                    code: 0,
                    message: e.to_string(),
                });
            }
        };
        Ok(Self {
            shared,
            watchdog: Some(watchdog),
            gpu,
            rank,
            world_size,
            timeout,
            flag,
            done,
        })
    }

    /// This process's rank, `0..world_size`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks of the job.
    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// The GPU handle whose stream every collective runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The watchdog's deadline for each wait.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the communicator was aborted (a timeout or an NCCL error): it takes no more work.
    pub fn is_aborted(&self) -> bool {
        self.shared.lock().aborted.is_some()
    }

    fn comm(&self) -> nccl_sys::ncclComm_t {
        self.shared.comm.0
    }

    /// Waits, at most [`timeout`](Self::timeout), for everything queued on the rank's stream;
    /// `during` names the work in an error. At the deadline, or on an asynchronous NCCL error,
    /// the communicator is aborted.
    ///
    /// # Errors
    /// [`Error::CommunicatorAborted`]; [`Error::CollectiveTimeout`]; [`Error::Nccl`] for an
    /// error NCCL reports (a peer's connection lost, ...); [`Error::Driver`] if the stream's
    /// work failed.
    pub fn synchronize(&self, during: &str) -> Result<()> {
        self.check_alive()?;
        self.done
            .record(self.gpu.stream())
            .during("recording the watchdog's event")?;
        let mut wait = Backoff::until(self.timeout);
        loop {
            if self.done.try_is_complete().during(during)? {
                return Ok(());
            }
            self.poll_async_error(during)?;
            if !wait.pause() {
                return Err(self.time_out(during));
            }
        }
    }

    /// An all-reduce: every rank's `output` receives the elementwise `op` of every rank's
    /// `input` (`ncclAllReduce`). `input` and `output`: this rank's device, one length on every
    /// rank; they may be the same buffer only through
    /// [`all_reduce_in_place`](Self::all_reduce_in_place). Queued, not waited for.
    ///
    /// # Errors
    /// [`Error::CommunicatorAborted`]; [`Error::WrongContext`]; [`Error::LengthMismatch`]
    /// unless `output` is as long as `input`; [`Error::Nccl`].
    pub fn all_reduce<T: NcclType>(
        &self,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        op: ReduceOp,
    ) -> Result<()> {
        let count = input.len();
        self.out_of_place(
            ("all-reduce", ["input", "output"]),
            input,
            output,
            [
                ("input", count),
                ("all-reduce output (the input's length)", count),
            ],
            // SAFETY: `src` and `dst` hold `count` elements of T on this rank's device (checked
            // by out_of_place); T's DATATYPE is its NCCL type (sealed).
            |src, dst, comm, s| unsafe {
                nccl::all_reduce(src as _, dst as _, count, T::DATATYPE, op.nccl(), comm, s)
            },
        )
    }

    /// [`all_reduce`](Self::all_reduce) in place: `buffer` becomes the elementwise `op` of every
    /// rank's `buffer`.
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce).
    pub fn all_reduce_in_place<T: NcclType>(
        &self,
        buffer: &mut impl DevicePtrMut<T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.check_alive()?;
        self.check("buffer", buffer)?;
        let count = buffer.len();
        let (ptr, _write) = buffer.device_ptr_mut(self.gpu.stream());
        // SAFETY: as all_reduce, with `src == dst`, which NCCL allows.
        self.queue("all-reduce (in place)", count, |comm, s| unsafe {
            nccl::all_reduce(ptr as _, ptr as _, count, T::DATATYPE, op.nccl(), comm, s)
        })
    }

    /// A reduce: rank `root`'s `output` receives the elementwise `op` of every rank's `input`
    /// (`ncclReduce`); other ranks' `output` is not written (pass any buffer of the length).
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce); [`Error::OutOfRange`] for a `root` beyond the job.
    pub fn reduce<T: NcclType>(
        &self,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        op: ReduceOp,
        root: usize,
    ) -> Result<()> {
        self.check_root(root)?;
        let count = input.len();
        self.out_of_place(
            ("reduce", ["reduce input", "reduce output"]),
            input,
            output,
            [
                ("reduce input", count),
                ("reduce output (the input's length)", count),
            ],
            // SAFETY: as all_reduce; `root` < world_size (checked).
            |src, dst, comm, s| unsafe {
                nccl::reduce(
                    src as _,
                    dst as _,
                    count,
                    T::DATATYPE,
                    op.nccl(),
                    root as i32,
                    comm,
                    s,
                )
            },
        )
    }

    /// A broadcast, in place: every rank's `buffer` receives rank `root`'s (`ncclBroadcast`).
    ///
    /// # Errors
    /// [`Error::CommunicatorAborted`]; [`Error::OutOfRange`] for a `root` beyond the job;
    /// [`Error::WrongContext`]; [`Error::Nccl`].
    pub fn broadcast<T: NcclType>(
        &self,
        buffer: &mut impl DevicePtrMut<T>,
        root: usize,
    ) -> Result<()> {
        self.check_alive()?;
        self.check_root(root)?;
        self.check("broadcast buffer", buffer)?;
        let count = buffer.len();
        let (ptr, _write) = buffer.device_ptr_mut(self.gpu.stream());
        // SAFETY: `ptr` holds `count` elements of T on this device (checked); in place, which
        // NCCL allows; `root` < world_size.
        self.queue("broadcast", count, |comm, s| unsafe {
            nccl::broadcast(ptr as _, ptr as _, count, T::DATATYPE, root as i32, comm, s)
        })
    }

    /// A reduce-scatter: `input` holds `world_size` blocks of `output.len()` elements, and
    /// rank `r`'s `output` receives the elementwise `op` of block `r` of every rank's `input`
    /// (`ncclReduceScatter`).
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce), with [`Error::LengthMismatch`] unless
    /// `input.len() == world_size * output.len()`.
    pub fn reduce_scatter<T: NcclType>(
        &self,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        op: ReduceOp,
    ) -> Result<()> {
        let count = output.len();
        self.out_of_place(
            (
                "reduce-scatter",
                ["reduce-scatter input", "reduce-scatter output"],
            ),
            input,
            output,
            [
                (
                    "reduce-scatter input (world size x the output's length)",
                    count.saturating_mul(self.world_size),
                ),
                ("reduce-scatter output", count),
            ],
            // SAFETY: `src` holds world_size * count and `dst` count elements of T on this
            // device (checked by out_of_place).
            |src, dst, comm, s| unsafe {
                nccl::reduce_scatter(src as _, dst as _, count, T::DATATYPE, op.nccl(), comm, s)
            },
        )
    }

    /// An all-gather: every rank's `output` receives every rank's `input`, block `r` from rank
    /// `r` (`ncclAllGather`): `output.len() == world_size * input.len()`.
    ///
    /// # Errors
    /// [`Error::CommunicatorAborted`]; [`Error::WrongContext`]; [`Error::LengthMismatch`]
    /// unless the lengths are as above; [`Error::Nccl`].
    pub fn all_gather<T: NcclType>(
        &self,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
    ) -> Result<()> {
        let count = input.len();
        self.out_of_place(
            ("all-gather", ["all-gather input", "all-gather output"]),
            input,
            output,
            [
                ("all-gather input", count),
                (
                    "all-gather output (world size x the input's length)",
                    count.saturating_mul(self.world_size),
                ),
            ],
            // SAFETY: `src` holds count and `dst` world_size * count elements of T on this
            // device (checked by out_of_place).
            |src, dst, comm, s| unsafe {
                nccl::all_gather(src as _, dst as _, count, T::DATATYPE, comm, s)
            },
        )
    }

    /// Runs `call`, one blocking NCCL call on this communicator, with the watchdog armed: if it
    /// has not returned at the timeout, the watchdog aborts the communicator (which ends the
    /// call) and this returns [`Error::CollectiveTimeout`].
    fn guarded<R>(&self, what: &'static str, call: impl FnOnce() -> R) -> Result<R> {
        self.shared.lock().deadline = Some((Instant::now() + self.timeout, what));
        self.shared.wake.notify_one();
        let result = call();
        let aborted = {
            let mut state = self.shared.lock();
            state.deadline = None;
            state.aborted.is_some()
        };
        if aborted {
            return Err(Error::CollectiveTimeout {
                rank: self.rank,
                world_size: self.world_size,
                during: what.to_string(),
                timeout: self.timeout,
            });
        }
        Ok(result)
    }

    /// An out-of-place collective: checks the communicator, both buffers' device and their
    /// lengths (`lengths`: what each must hold, and how many elements), then queues
    /// `call(src, dst, comm, stream)` with the buffers borrowed until it is queued.
    fn out_of_place<T: NcclType>(
        &self,
        (what, names): (&'static str, [&'static str; 2]),
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        lengths: [(&'static str, usize); 2],
        call: impl FnOnce(
            u64,
            u64,
            nccl_sys::ncclComm_t,
            nccl_sys::cudaStream_t,
        ) -> std::result::Result<NcclStatus, NcclError>,
    ) -> Result<()> {
        self.check_alive()?;
        self.check(names[0], input)?;
        self.check(names[1], output)?;
        expect_len(lengths[0].0, lengths[0].1, input.len())?;
        expect_len(lengths[1].0, lengths[1].1, output.len())?;
        let count = input.len().max(output.len());
        let stream = self.gpu.stream();
        let (src, _read) = input.device_ptr(stream);
        let (dst, _write) = output.device_ptr_mut(stream);
        self.queue(what, count, |comm, s| call(src, dst, comm, s))
    }

    /// Queues one NCCL call (`call(comm, stream)`) of `count` elements under the watchdog
    /// (the host call blocks while NCCL connects to a peer for the first time, and a dead peer
    /// would hold it).
    fn queue(
        &self,
        what: &'static str,
        count: usize,
        call: impl FnOnce(
            nccl_sys::ncclComm_t,
            nccl_sys::cudaStream_t,
        ) -> std::result::Result<NcclStatus, NcclError>,
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        self.gpu
            .context()
            .bind_to_thread()
            .during("binding the rank's context")?;
        let (comm, stream) = (self.comm(), self.gpu.stream().cu_stream() as _);
        let called = self.guarded(what, || call(comm, stream))?;
        let during = || format!("NCCL {what} of {count} elements");
        match called {
            Ok(NcclStatus::InProgress) => self.settle(&during()),
            Ok(_) => Ok(()),
            Err(e) => {
                let error = self.nccl_failed(&during(), e);
                self.abort(&error);
                Err(error)
            }
        }
    }

    /// Polls `ncclCommGetAsyncError` until the communicator's last call is done (not
    /// `ncclInProgress`), at most the timeout.
    fn settle(&self, during: &str) -> Result<()> {
        let mut wait = Backoff::until(self.timeout);
        loop {
            if !self.poll_async_error(during)? {
                return Ok(());
            }
            if !wait.pause() {
                return Err(self.time_out(during));
            }
        }
    }

    /// `ncclCommGetAsyncError`: `Ok(true)` while a call is in progress, `Ok(false)` when none
    /// is, an error (and the communicator aborted) for any failure.
    fn poll_async_error(&self, during: &str) -> Result<bool> {
        let mut state = nccl_sys::ncclResult_t::ncclSuccess;
        // SAFETY: a live communicator (every caller checked or just made it); `state` is
        // valid for the write.
        let queried = unsafe { nccl_sys::ncclCommGetAsyncError(self.comm(), &mut state) }.result();
        let outcome = queried.and_then(|_| state.result());
        match outcome {
            Ok(NcclStatus::InProgress) => Ok(true),
            Ok(_) => Ok(false),
            Err(e) => {
                let error = self.nccl_failed(during, e);
                self.abort(&error);
                Err(error)
            }
        }
    }

    fn nccl_failed(&self, during: &str, e: NcclError) -> Error {
        nccl_error(format!(
            "rank {} of {}: {during}",
            self.rank, self.world_size
        ))(e)
    }

    /// Aborts at the deadline and returns the error that says so.
    fn time_out(&self, during: &str) -> Error {
        let error = Error::CollectiveTimeout {
            rank: self.rank,
            world_size: self.world_size,
            during: during.to_string(),
            timeout: self.timeout,
        };
        self.abort(&error);
        error
    }

    /// `ncclCommAbort` once (it stops this rank's NCCL kernels and frees the communicator),
    /// remembering `cause` for later calls.
    fn abort(&self, cause: &Error) {
        let mut state = self.shared.lock();
        self.shared.abort_locked(&mut state, cause.to_string());
    }

    fn check_alive(&self) -> Result<()> {
        match &self.shared.lock().aborted {
            None => Ok(()),
            Some(cause) => Err(Error::CommunicatorAborted {
                rank: self.rank,
                world_size: self.world_size,
                cause: cause.clone(),
            }),
        }
    }

    fn check_root(&self, root: usize) -> Result<()> {
        if root < self.world_size {
            Ok(())
        } else {
            Err(Error::OutOfRange {
                what: "root rank",
                value: root as u64,
                min: 0,
                max: self.world_size as u64 - 1,
            })
        }
    }

    fn check<T>(&self, what: &'static str, buffer: &impl DeviceSlice<T>) -> Result<()> {
        self.gpu.check_buffer(what, buffer)
    }
}

impl Drop for RankCommunicator {
    fn drop(&mut self) {
        // Let queued collectives finish (at most the timeout: a dead peer cannot hold the drop),
        // then abort: local, no other rank needed. A failure was or will be reported by the call
        // that queued the work.
        if !self.is_aborted() {
            let _ = self.synchronize("finishing the rank's work");
            let error = Error::CommunicatorAborted {
                rank: self.rank,
                world_size: self.world_size,
                cause: "dropped".into(),
            };
            self.abort(&error);
        }
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(watchdog) = self.watchdog.take() {
            let _ = watchdog.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_is_nccl_2_28s_initializer() {
        let c = nccl_config(true);
        assert_eq!(c.magic, 0xcafe_beef);
        assert_eq!(c.version, 22800);
        assert_eq!(c.blocking, 1);
        assert_eq!(nccl_config(false).blocking, 0);
        // size, magic and version, then 12 ints and 2 pointers: NCCL 2.28's layout.
        assert_eq!(c.size, 8 + 4 + 4 + 4 * 4 + 8 + 2 * 4 + 8 + 6 * 4);
        assert_eq!(c.cgaClusterSize, i32::MIN);
    }

    #[test]
    fn lengths_are_checked() {
        assert!(expect_len("x", 3, 3).is_ok());
        let e = expect_len("x", 8, 7).unwrap_err();
        assert!(matches!(
            e,
            Error::LengthMismatch {
                expected: 8,
                actual: 7,
                ..
            }
        ));
    }

    #[test]
    fn ops_map_to_nccl() {
        assert_eq!(ReduceOp::Sum.nccl(), nccl_sys::ncclRedOp_t::ncclSum);
        assert_eq!(ReduceOp::Avg.nccl(), nccl_sys::ncclRedOp_t::ncclAvg);
        assert_eq!(f64::DATATYPE, nccl_sys::ncclDataType_t::ncclFloat64);
        assert_eq!(u8::DATATYPE, nccl_sys::ncclDataType_t::ncclUint8);
    }
}
