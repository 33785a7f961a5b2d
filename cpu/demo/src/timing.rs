//! Timing with CUDA events, and the memcpy ceiling every bandwidth figure is judged against.
//!
//! Method: `warmup` untimed runs (module JIT, caches, clocks), then `reps` runs each between two
//! events created with timing enabled, recorded on the same stream; the median is the figure
//! reported, min and max show the spread. Bandwidth counts the bytes a kernel must move through
//! DRAM (each input read once, each output written once) over the median time. Inputs are sized
//! beyond the L2 cache (50 MB on an H100) by the callers that report bandwidth.

use cudarc::driver::{CudaEvent, CudaSlice, sys};

use cpu::Gpu;
use cpu::error::{DriverContext, Error, Result};
use cpu::multi_gpu::GpuGroup;
use cpu::reduce::{ReduceSum, SumI32};

/// Statistics of one timed operation, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Median of the timed repetitions.
    pub median_ms: f64,
    /// Fastest repetition.
    pub min_ms: f64,
    /// Slowest repetition.
    pub max_ms: f64,
    /// Number of timed repetitions.
    pub reps: usize,
}

impl Timing {
    /// Effective bandwidth in GB/s (10^9 bytes per second) for `bytes` moved per repetition,
    /// at the median time.
    pub fn gbps(&self, bytes: u64) -> f64 {
        gbps(bytes, self.median_ms)
    }

    fn from_samples(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        let n = samples.len();
        let median = if n % 2 == 1 {
            samples[n / 2]
        } else {
            (samples[n / 2 - 1] + samples[n / 2]) / 2.0
        };
        Self {
            median_ms: median,
            min_ms: samples[0],
            max_ms: samples[n - 1],
            reps: n,
        }
    }
}

/// `bytes / ms` in GB/s (10^9 bytes per second).
pub fn gbps(bytes: u64, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

fn timing_event(gpu: &Gpu) -> Result<CudaEvent> {
    // `None` would create the event with timing disabled; elapsed time then fails.
    gpu.context()
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .during("creating a timing event")
}

/// `reps` pairs of timing events on `gpu`, all created before any is recorded, so no driver
/// call for event creation sits between a start and its end.
fn event_pairs(gpu: &Gpu, reps: usize) -> Result<Vec<(CudaEvent, CudaEvent)>> {
    (0..reps)
        .map(|_| Ok((timing_event(gpu)?, timing_event(gpu)?)))
        .collect()
}

/// The milliseconds between each recorded pair (after the stream has been synchronised).
fn elapsed_ms(pairs: &[(CudaEvent, CudaEvent)]) -> Result<Vec<f64>> {
    pairs
        .iter()
        .map(|(start, end)| {
            start
                .elapsed_ms(end)
                .map(f64::from)
                .during("reading an event time")
        })
        .collect()
}

/// Runs `work` (which queues GPU work on `gpu`'s stream) `warmup` times untimed, then `reps`
/// times between CUDA events, and returns the statistics.
///
/// # Errors
/// [`Error::OutOfRange`] if `reps` is 0; any error `work` returns; driver errors from the
/// events (a kernel fault surfaces at the synchronisation, named `during`).
pub fn time_gpu(
    gpu: &Gpu,
    during: &str,
    warmup: usize,
    reps: usize,
    mut work: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    time_gpu_with_setup(gpu, during, warmup, reps, &mut (), |_| Ok(()), |_| work())
}

/// As [`time_gpu`], with `setup` queued on the same stream before each run, outside the timed
/// interval: restoring an input a kernel reduces in place, or flushing the L2 cache
/// ([`L2Flush`]) so that each timed run starts cold. Both closures get `state`, the mutable
/// state they share (a kernel's working buffers, the flush buffer).
///
/// # Errors
/// As [`time_gpu`]; also any error `setup` returns.
pub fn time_gpu_with_setup<S>(
    gpu: &Gpu,
    during: &str,
    warmup: usize,
    reps: usize,
    state: &mut S,
    mut setup: impl FnMut(&mut S) -> Result<()>,
    mut work: impl FnMut(&mut S) -> Result<()>,
) -> Result<Timing> {
    check_reps(reps)?;
    for _ in 0..warmup {
        setup(state)?;
        work(state)?;
    }
    let events = event_pairs(gpu, reps)?;
    gpu.synchronize(during)?;
    for (start, end) in &events {
        setup(state)?;
        start.record(gpu.stream()).during("recording an event")?;
        work(state)?;
        end.record(gpu.stream()).during("recording an event")?;
    }
    gpu.synchronize(during)?;
    Ok(Timing::from_samples(elapsed_ms(&events)?))
}

/// Times `work`, which queues work on every GPU of `group`, between two CUDA events on GPU 0
/// that bracket every GPU's part: after the start event the other GPUs' streams wait for it
/// (fork), and before the end event GPU 0 waits for an event recorded on each of them after
/// the work (join). So each sample is the time from the first GPU starting to the last one
/// finishing, as GPU 0's clock sees it. `warmup` untimed runs first; the median is reported.
///
/// # Errors
/// As [`time_gpu`].
pub fn time_group(
    group: &GpuGroup,
    during: &str,
    warmup: usize,
    reps: usize,
    mut work: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    check_reps(reps)?;
    let gpus = group.gpus();
    let first = &gpus[0];
    for _ in 0..warmup {
        work()?;
    }
    let events = event_pairs(first, reps)?;
    let joins = gpus[1..]
        .iter()
        .map(|g| g.context().new_event(None).during("creating an event"))
        .collect::<Result<Vec<_>>>()?;
    group.synchronize(during)?;
    for (start, end) in &events {
        start.record(first.stream()).during("recording an event")?;
        for g in &gpus[1..] {
            g.stream().wait(start).during("forking the streams")?;
        }
        work()?;
        for (g, join) in gpus[1..].iter().zip(&joins) {
            join.record(g.stream()).during("recording an event")?;
            first.stream().wait(join).during("joining the streams")?;
        }
        end.record(first.stream()).during("recording an event")?;
    }
    group.synchronize(during)?;
    Ok(Timing::from_samples(elapsed_ms(&events)?))
}

/// Times a collective as nccl-tests and PyTorch users do, per GPU: each run is bracketed by
/// two CUDA events on every GPU's own stream, and its sample is the slowest GPU's time; runs
/// are queued back to back (with `setup` before each, outside the brackets). `warmup` untimed
/// runs first; the median sample is reported.
///
/// # Errors
/// As [`time_gpu_with_setup`].
pub fn time_group_per_gpu<S>(
    group: &GpuGroup,
    during: &str,
    warmup: usize,
    reps: usize,
    state: &mut S,
    mut setup: impl FnMut(&mut S) -> Result<()>,
    mut work: impl FnMut(&mut S) -> Result<()>,
) -> Result<Timing> {
    check_reps(reps)?;
    let gpus = group.gpus();
    for _ in 0..warmup {
        setup(state)?;
        work(state)?;
    }
    let events = gpus
        .iter()
        .map(|g| event_pairs(g, reps))
        .collect::<Result<Vec<_>>>()?;
    group.synchronize(during)?;
    for rep in 0..reps {
        setup(state)?;
        for (g, e) in gpus.iter().zip(&events) {
            e[rep].0.record(g.stream()).during("recording an event")?;
        }
        work(state)?;
        for (g, e) in gpus.iter().zip(&events) {
            e[rep].1.record(g.stream()).during("recording an event")?;
        }
    }
    group.synchronize(during)?;
    let mut samples = vec![0.0f64; reps];
    for e in &events {
        for (sample, ms) in samples.iter_mut().zip(elapsed_ms(e)?) {
            *sample = sample.max(ms);
        }
    }
    Ok(Timing::from_samples(samples))
}

fn check_reps(reps: usize) -> Result<()> {
    if reps == 0 {
        return Err(Error::OutOfRange {
            what: "timed repetitions",
            value: 0,
            min: 1,
            max: u64::MAX,
        });
    }
    Ok(())
}

/// Evicts the L2 cache by reading a buffer twice its size (an H100's L2 is 50 MB), for
/// [`time_gpu_with_setup`]: inputs smaller than the L2 would otherwise be timed from cache.
///
/// The flush reads (with the lab's own `reduce_sum_i32`) rather than writes: a `memset` would
/// leave the L2 full of dirty lines, and the timed kernel would then pay for writing them back
/// to DRAM (about 50 MB, some 17 us on an H100) while it reads its own input.
pub struct L2Flush {
    buffer: CudaSlice<i32>,
    reader: ReduceSum<SumI32>,
}

impl L2Flush {
    /// Allocates twice the device's L2 size (at least 8 MiB), zeroed.
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute query or an allocation fails.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Self {
            buffer: gpu.zeros::<i32>(Self::bytes(gpu)? / 4)?,
            reader: ReduceSum::new(gpu)?,
        })
    }

    /// Bytes of the flush buffer on `gpu` (for footprints, before it is allocated).
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute query fails.
    pub fn bytes(gpu: &Gpu) -> Result<usize> {
        Ok((2 * gpu.l2_cache_bytes()?).max(8 << 20) / 4 * 4)
    }

    /// Queues the flush (one read of the buffer) on `gpu`'s stream.
    ///
    /// # Errors
    /// [`Error::Driver`] if the read cannot be launched.
    pub fn flush(&mut self, gpu: &Gpu) -> Result<()> {
        self.reader.launch(gpu, &self.buffer).map(drop)
    }
}

/// Bytes copied by the default [`memcpy_ceiling`]: 512 MiB, ten times an H100's L2.
pub const CEILING_COPY_BYTES: usize = 512 << 20;

/// The device-to-device copy bandwidth of this run: the ceiling for memory-bound kernels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ceiling {
    /// Bytes moved per copy, counting read plus written (twice the buffer size).
    pub bytes_moved: u64,
    /// Timing of the copy.
    pub timing: Timing,
    /// Bandwidth in GB/s at the median time.
    pub gbps: f64,
}

impl Ceiling {
    /// `gbps` as a percentage of this ceiling.
    pub fn percent(&self, gbps: f64) -> f64 {
        100.0 * gbps / self.gbps
    }
}

/// Times a device-to-device `cuMemcpyDtoDAsync` of `bytes` bytes (`cudaMemcpy` D2D), the
/// ceiling reported beside every kernel's bandwidth.
pub fn memcpy_ceiling(gpu: &Gpu, bytes: usize, warmup: usize, reps: usize) -> Result<Ceiling> {
    let words = bytes / 4;
    let src = gpu.zeros::<u32>(words)?;
    let mut dst = gpu.zeros::<u32>(words)?;
    let timing = time_gpu(gpu, "device-to-device memcpy", warmup, reps, || {
        gpu.stream()
            .memcpy_dtod(&src, &mut dst)
            .during("device-to-device memcpy")
    })?;
    let bytes_moved = 2 * (words as u64) * 4;
    Ok(Ceiling {
        bytes_moved,
        timing,
        gbps: timing.gbps(bytes_moved),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        let t = Timing::from_samples(vec![3.0, 1.0, 2.0]);
        assert_eq!(
            (t.median_ms, t.min_ms, t.max_ms, t.reps),
            (2.0, 1.0, 3.0, 3)
        );
        let t = Timing::from_samples(vec![4.0, 1.0, 2.0, 3.0]);
        assert_eq!(t.median_ms, 2.5);
    }

    #[test]
    fn bandwidth_units() {
        // 1 GB in 1 ms is 1000 GB/s.
        assert!((gbps(1_000_000_000, 1.0) - 1000.0).abs() < 1e-9);
    }
}
