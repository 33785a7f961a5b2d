//! What a rank's collectives give the host: values gathered from every rank, a check that
//! every rank passed the same value, and a barrier on the GPU.

use super::{NcclType, RankCommunicator, ReduceOp};
use crate::error::{Error, Result};

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
}
