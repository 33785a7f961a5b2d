//! What is built on a rank's collectives: values gathered from every rank to the host, a check
//! that every rank passed the same value, a barrier on the GPU, and communicators of subsets of
//! the ranks.

use std::cell::RefCell;

use cudarc::nccl::result as nccl;
use cudarc::nccl::sys as nccl_sys;

use super::config::nccl_config;
use super::watchdog::CommPtr;
use super::{NcclType, RankCommunicator, ReduceOp};
use crate::error::{DriverContext, Error, Result};
use crate::multi_gpu::nccl_error;

impl RankCommunicator {
    /// Every rank's `value`, gathered to every rank and waited for (a small all-gather on the
    /// device, then [`synchronize`](Self::synchronize)): for values the ranks exchange on the
    /// host, such as their timings.
    ///
    /// # Errors
    /// As [`all_gather`](Self::all_gather) and [`synchronize`](Self::synchronize); [`Error::OutOfMemory`].
    pub fn gather_host<T: NcclType + Default + cudarc::driver::ValidAsZeroBits>(
        &self,
        values: &[T],
    ) -> Result<Vec<Vec<T>>> {
        let n = values.len();
        self.agree("values gathered to the host (count)", n as u64)?;
        let input = self.gpu.upload(values)?;
        let mut output = self.gpu.zeros::<T>(n * self.world_size)?;
        self.all_gather(&input, &mut output)?;
        self.synchronize("gathering values to the host")?;
        let all = self.gpu.download(&output, "the gathered values")?;
        Ok(all.chunks(n.max(1)).map(<[T]>::to_vec).collect())
    }

    /// Checks that every rank passed the same `value` (a length, a size, a step number): a
    /// max and a min all-reduce of one `u64`, waited for.
    ///
    /// # Errors
    /// [`Error::RanksDisagree`] with the smallest and largest values; as
    /// [`all_reduce`](Self::all_reduce) and [`synchronize`](Self::synchronize).
    pub fn agree(&self, what: &'static str, value: u64) -> Result<()> {
        let mut both = self.gpu.upload(&[value, u64::MAX - value])?;
        self.all_reduce_in_place(&mut both, ReduceOp::Max)?;
        self.synchronize(what)?;
        let got = self.gpu.download(&both, what)?;
        let (max, min) = (got[0], u64::MAX - got[1]);
        if min == max {
            Ok(())
        } else {
            Err(Error::RanksDisagree {
                rank: self.rank,
                world_size: self.world_size,
                what,
                value,
                min,
                max,
            })
        }
    }

    /// Every rank's stream aligned: an all-reduce of one byte, queued (the GPU-side barrier
    /// before a timed region: no rank's stream passes it before every rank's has reached it).
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce).
    pub fn barrier_on_stream(&self) -> Result<()> {
        let mut flag = self.flag.borrow_mut();
        self.all_reduce_in_place(&mut *flag, ReduceOp::Max)
    }

    /// A communicator of the ranks that pass the same `color` (`ncclCommSplit`), ordered by
    /// `key` then by rank; `None` for a rank that passes no color (it takes part in the call and
    /// gets no communicator). Collective over this communicator: every rank calls it. The new
    /// communicator runs on this one's GPU handle (the same stream, so work on the two stays in
    /// order) and has this one's timeout.
    ///
    /// # Errors
    /// [`Error::CommunicatorAborted`]; [`Error::OutOfRange`] for a color above `i32::MAX`;
    /// [`Error::CollectiveTimeout`]; [`Error::Nccl`].
    pub fn split(&self, color: Option<u32>, key: u32) -> Result<Option<Self>> {
        self.check_alive()?;
        let color = match color {
            // NCCL_SPLIT_NOCOLOR.
            None => -1,
            Some(c) if c <= i32::MAX as u32 => c as i32,
            Some(c) => {
                return Err(Error::OutOfRange {
                    what: "split color",
                    value: c as u64,
                    min: 0,
                    max: i32::MAX as u64,
                });
            }
        };
        let gpu = self.gpu.clone();
        let flag = RefCell::new(gpu.zeros::<u8>(1)?);
        let mut config = nccl_config(true);
        let mut comm: nccl_sys::ncclComm_t = std::ptr::null_mut();
        gpu.context()
            .bind_to_thread()
            .during("binding the rank's context")?;
        let parent = self.comm();
        let split = self.guarded("splitting the communicator", || {
            // SAFETY: `parent` is a live communicator (not aborted: checked; the watchdog may
            // abort it only to end this very call); `comm` and `config` are valid for the call.
            unsafe {
                nccl_sys::ncclCommSplit(
                    parent,
                    color,
                    key.min(i32::MAX as u32) as i32,
                    &mut comm,
                    &mut config,
                )
            }
            .result()
        })?;
        let during = format!(
            "splitting rank {} of {}'s communicator",
            self.rank, self.world_size
        );
        if let Err(e) = split {
            let error = self.nccl_failed(&during, e);
            self.abort(&error);
            return Err(error);
        }
        if comm.is_null() {
            return Ok(None);
        }
        // SAFETY: a communicator NCCL just made; read its rank and size.
        let (rank, size) = unsafe { (nccl::comm_user_rank(comm), nccl::comm_count(comm)) };
        let (rank, size) = match (rank, size) {
            (Ok(r), Ok(n)) => (r.max(0) as usize, n.max(0) as usize),
            (Err(e), _) | (_, Err(e)) => {
                // SAFETY: the communicator just made, which nobody else holds.
                let _ = unsafe { nccl::comm_abort(comm) };
                return Err(nccl_error(during)(e));
            }
        };
        Self::watched(CommPtr(comm), gpu, rank, size, self.timeout, flag).map(Some)
    }
}
