//! Timing with CUDA events, and the ceilings every bandwidth figure is judged against: the
//! device-to-device memcpy ([`memcpy_ceiling`]), the fastest read-only kernel
//! ([`read_ceiling`]) and the datasheet figure ([`theoretical_gbps`]); and the floor of a
//! convolution ([`conv_floor`]: memory or FMA throughput, whichever is slower).
//!
//! Method: `warmup` untimed runs (module JIT, caches, clocks), then `reps` runs each between two
//! events created with timing enabled, recorded on the same stream; the median is the figure
//! reported, min and max show the spread. Bandwidth counts the bytes a kernel must move through
//! DRAM (each input read once, each output written once) over the median time. Inputs are sized
//! beyond the L2 cache (50 MB on an H100) by the callers that report bandwidth.

use cpu::Gpu;
use cpu::error::{DriverContext, Error, Result};
use cpu::lab::memory::fma_rate::FmaRate;
use cpu::lab::memory::read_stream::{self, ReadShape, ReadStream};
use cpu::multi_gpu::GpuGroup;
use cpu::multi_gpu::rank::RankCommunicator;
use cpu::reduce::{ReduceSum, SumI32};
use cudarc::driver::{CudaEvent, CudaSlice, LaunchConfig, sys};

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

/// Times `work` on one rank of a multi-process job as [`time_group_per_gpu`] times a group in
/// one process: each run bracketed by two CUDA events on this rank's stream, runs queued back
/// to back, and each sample is the slowest rank's time (gathered over `comm`). With `align`,
/// a barrier on the GPU ([`RankCommunicator::barrier_on_stream`]) precedes each run, outside
/// the brackets, so every rank starts together. A rank that is not `timed` takes part in the
/// barriers only (it runs nothing and counts as 0). `warmup` untimed runs first; every rank
/// must call this with the same `warmup`, `reps` and `align`.
///
/// # Errors
/// As [`time_gpu`]; the communicator's errors (a rank that exited ends in
/// [`cpu::Error::CollectiveTimeout`]).
pub fn time_rank(
    comm: &RankCommunicator,
    during: &str,
    warmup: usize,
    reps: usize,
    align: bool,
    timed: bool,
    mut work: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    check_reps(reps)?;
    let gpu = comm.gpu();
    for _ in 0..warmup {
        if align {
            comm.barrier_on_stream()?;
        }
        if timed {
            work()?;
        }
    }
    let events = event_pairs(gpu, reps)?;
    comm.synchronize(during)?;
    for (start, end) in &events {
        if align {
            comm.barrier_on_stream()?;
        }
        if timed {
            start.record(gpu.stream()).during("recording an event")?;
            work()?;
            end.record(gpu.stream()).during("recording an event")?;
        }
    }
    comm.synchronize(during)?;
    let mine = if timed {
        elapsed_ms(&events)?
    } else {
        vec![0.0; reps]
    };
    let every = comm.gather_host(&mine)?;
    let samples = (0..reps)
        .map(|k| every.iter().map(|t| t[k]).fold(0.0, f64::max))
        .collect();
    Ok(Timing::from_samples(samples))
}

fn check_reps(reps: usize) -> Result<()> {
    if reps == 0 {
        return Err(Error::out_of_range("timed repetitions", 0, 1, u64::MAX));
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

/// Bytes read by the default [`read_ceiling`]: 1 GiB, twenty times an H100's L2 (a launch of
/// a few hundred microseconds, so the grid's ramp-up and tail cost about 1%).
pub const CEILING_READ_BYTES: usize = 1 << 30;

/// The read-only ceiling of this run: the fastest of the read stream's launch shapes.
#[derive(Clone, Debug)]
pub struct ReadCeiling {
    /// The winning shape's timing; `bytes_moved` counts bytes read only.
    pub ceiling: Ceiling,
    /// The winning shape.
    pub shape: ReadShape,
    /// Its launch.
    pub launch: LaunchConfig,
    /// Every shape tried, in order, with its launch and timing.
    pub tried: Vec<(ReadShape, LaunchConfig, Timing)>,
}

/// Times the read stream ([`cpu::lab::memory::read_stream`]) over a zeroed buffer of `bytes` bytes
/// (rounded down to whole 16-byte groups) with every shape of [`ReadShape::candidates`] (4
/// and 8 loads in flight per thread; one wave of resident blocks and twice that), `warmup`
/// untimed and `reps` timed launches each, and keeps the fastest: the best read bandwidth a
/// kernel reaches in this run, the ceiling of the reductions (which only read). Bandwidth
/// counts bytes read. The buffer is far beyond the L2, so no flush is needed; each launch's
/// sum is checked to be 0 (the kernels' arithmetic is checked on random words by the GPU
/// tests).
///
/// # Errors
/// [`Error::OutOfRange`] if `bytes` is under 16 or `reps` is 0; [`Error::OutOfMemory`] /
/// [`Error::Driver`] from the allocation, the launches or the events; [`Error::Unsupported`]
/// if a launch's sum is not 0.
pub fn read_ceiling(gpu: &Gpu, bytes: usize, warmup: usize, reps: usize) -> Result<ReadCeiling> {
    let words = bytes / 16 * 4;
    if words == 0 {
        return Err(Error::out_of_range(
            "read-ceiling bytes",
            bytes as u64,
            16,
            u64::MAX,
        ));
    }
    check_reps(reps)?;
    let input = gpu.zeros::<u32>(words)?;
    let bytes_moved = read_stream::bytes_read(words);
    let mut best: Option<ReadCeiling> = None;
    let mut tried = Vec::new();
    for shape in ReadShape::candidates(gpu)? {
        let mut stream = ReadStream::new(gpu, shape)?;
        let launch = stream.launch_config();
        let timing = time_gpu(gpu, shape.in_flight.kernel_name(), warmup, reps, || {
            stream.launch(gpu, &input).map(drop)
        })?;
        if stream.sum(gpu)? != 0 {
            return Err(Error::unsupported(
                "read stream",
                "the sum of a zeroed buffer must be 0",
            ));
        }
        tried.push((shape, launch, timing));
        if best
            .as_ref()
            .is_none_or(|b| timing.median_ms < b.ceiling.timing.median_ms)
        {
            best = Some(ReadCeiling {
                ceiling: Ceiling {
                    bytes_moved,
                    timing,
                    gbps: timing.gbps(bytes_moved),
                },
                shape,
                launch,
                tried: Vec::new(),
            });
        }
    }
    // `candidates` returns at least one shape per entry.
    let mut best = best.ok_or(Error::unsupported(
        "read ceiling",
        "at least one read-stream launch shape",
    ))?;
    best.tried = tried;
    Ok(best)
}

/// The datasheet DRAM bandwidth of `gpu` in GB/s: `2 x memory clock x bus width / 8` (double
/// data rate), from the peak memory clock and bus width the driver reports. No kernel reaches
/// it; the copy and read-only ceilings say how far off the best ones stay.
///
/// # Errors
/// [`Error::Driver`] if an attribute cannot be read.
pub fn theoretical_gbps(gpu: &Gpu) -> Result<f64> {
    Ok(theoretical_from_clocks(
        gpu.memory_clock_khz()?,
        gpu.memory_bus_bits()?,
    ))
}

/// `2 x memory_clock_khz x 10^3 x bus_bits / 8 / 10^9` GB/s.
pub fn theoretical_from_clocks(memory_clock_khz: u32, bus_bits: u32) -> f64 {
    2.0 * f64::from(memory_clock_khz) * 1e3 * f64::from(bus_bits) / 8.0 / 1e9
}

/// FP32 lanes (FMA units) per SM for compute capability `major.minor`: 64 on Volta, Turing
/// and the A100 (7.x, 8.0), 128 on the other Ampere, Ada, Hopper and Blackwell parts.
pub fn fp32_lanes_per_sm(major: i32, minor: i32) -> u32 {
    match (major, minor) {
        (..=7, _) | (8, 0) => 64,
        _ => 128,
    }
}

/// What the FMA floor needs to know of a device: its peak FP32 FMA rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fp32Throughput {
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Peak SM clock, kHz.
    pub sm_clock_khz: u32,
    /// FP32 lanes per SM ([`fp32_lanes_per_sm`]).
    pub lanes_per_sm: u32,
}

impl Fp32Throughput {
    /// `gpu`'s SM count, peak clock and lanes per SM.
    ///
    /// # Errors
    /// [`Error::Driver`] if a device query fails.
    pub fn of(gpu: &Gpu) -> Result<Self> {
        let (major, minor) = gpu.compute_capability()?;
        Ok(Self {
            sm_count: gpu.sm_count()?,
            sm_clock_khz: gpu.sm_clock_khz()?,
            lanes_per_sm: fp32_lanes_per_sm(major, minor),
        })
    }

    /// FMAs per second: SMs x lanes x clock.
    pub fn fma_per_second(&self) -> f64 {
        f64::from(self.sm_count) * f64::from(self.lanes_per_sm) * f64::from(self.sm_clock_khz) * 1e3
    }
}

/// Blocks per SM of the FMA-rate ceiling (2048 threads an SM: full occupancy on sm_80 and
/// sm_90 at the kernel's registers).
pub const FMA_CEILING_BLOCKS_PER_SM: u32 = 8;
/// Loop trips per thread of the FMA-rate ceiling: 128 x 1024 FMAs a thread, about 1 ms a
/// launch on an H100.
pub const FMA_CEILING_ITERATIONS: u32 = 1024;

/// The measured FP32 multiply-add ceiling: [`FmaRate`] (16 independent FMA chains a thread,
/// nothing else) timed as every kernel is, its outputs checked against the CPU at every 997th
/// thread.
#[derive(Clone, Copy, Debug)]
pub struct FmaCeiling {
    /// Multiply-adds per launch.
    pub fmas: u64,
    /// Timing of the launch.
    pub timing: Timing,
    /// The launch.
    pub launch: LaunchConfig,
}

impl FmaCeiling {
    /// Multiply-adds per second at the median.
    pub fn fma_per_second(&self) -> f64 {
        self.fmas as f64 / (self.timing.median_ms * 1e-3)
    }
}

/// Times [`FmaRate`] with [`FMA_CEILING_BLOCKS_PER_SM`] blocks per SM and
/// [`FMA_CEILING_ITERATIONS`] trips.
///
/// # Errors
/// As [`FmaRate::new`] and [`time_gpu`]; [`Error::Unsupported`] if a checked output differs
/// from the CPU's.
pub fn fma_ceiling(gpu: &Gpu, warmup: usize, reps: usize) -> Result<FmaCeiling> {
    let mut rate = FmaRate::new(gpu, FMA_CEILING_BLOCKS_PER_SM, FMA_CEILING_ITERATIONS)?;
    let launch = rate.launch_config();
    let timing = time_gpu(gpu, "fma_rate", warmup, reps, || rate.launch(gpu).map(drop))?;
    if rate.mismatches(gpu, 997)? != 0 {
        return Err(Error::unsupported(
            "FMA-rate ceiling",
            "every checked thread's chains equal to the CPU's",
        ));
    }
    Ok(FmaCeiling {
        fmas: rate.fmas(),
        timing,
        launch,
    })
}

/// The least time an operation can take on this device: the slower of moving its bytes at the
/// run's copy bandwidth and issuing its FMAs at the peak FP32 rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Floor {
    /// Bytes moved over the copy ceiling's bandwidth, ms.
    pub memory_ms: f64,
    /// FMAs over [`Fp32Throughput::fma_per_second`], ms.
    pub fma_ms: f64,
}

impl Floor {
    /// The floor, ms: the larger of the two.
    pub fn ms(&self) -> f64 {
        self.memory_ms.max(self.fma_ms)
    }

    /// `"memory"` or `"FMA"`: which of the two sets the floor.
    pub fn bound(&self) -> &'static str {
        if self.fma_ms > self.memory_ms {
            "FMA"
        } else {
            "memory"
        }
    }

    /// `ms / floor`: 1 at the floor, 2 when twice as slow as it.
    pub fn ratio(&self, ms: f64) -> f64 {
        ms / self.ms()
    }
}

/// The floor of a `dims`-dimensional convolution (1 or 2) of `outputs` outputs with a mask
/// of `mask_width` taps per dimension: memory floor = bytes moved (each input read once, each
/// output written once: [`cpu::convolution::bytes_moved`]) / the copy ceiling's bandwidth;
/// FMA floor = `mask_width^dims x outputs` FMAs / (SMs x FP32 lanes x SM clock). The one
/// function every convolution table takes its floor from.
pub fn conv_floor(
    outputs: usize,
    mask_width: usize,
    dims: u32,
    copy: &Ceiling,
    fp32: &Fp32Throughput,
) -> Floor {
    let bytes = cpu::convolution::bytes_moved(outputs) as f64;
    let fmas = (mask_width as f64).powi(dims as i32) * outputs as f64;
    Floor {
        memory_ms: bytes / (copy.gbps * 1e9) * 1e3,
        fma_ms: fmas / fp32.fma_per_second() * 1e3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theoretical_and_lanes() {
        // H100 SXM: 2619 MHz x 5120 bits: 3352 GB/s.
        assert!((theoretical_from_clocks(2_619_000, 5120) - 3352.32).abs() < 1e-6);
        assert_eq!(fp32_lanes_per_sm(9, 0), 128);
        assert_eq!(fp32_lanes_per_sm(8, 0), 64);
        assert_eq!(fp32_lanes_per_sm(8, 6), 128);
        assert_eq!(fp32_lanes_per_sm(7, 0), 64);
    }

    #[test]
    fn floors_take_the_slower_bound() {
        let t = Timing {
            median_ms: 1.0,
            min_ms: 1.0,
            max_ms: 1.0,
            reps: 1,
        };
        let copy = Ceiling {
            bytes_moved: 1,
            timing: t,
            gbps: 1000.0,
        };
        // 132 SMs x 128 lanes x 1.98 GHz = 33.45 TFMA/s.
        let fp32 = Fp32Throughput {
            sm_count: 132,
            sm_clock_khz: 1_980_000,
            lanes_per_sm: 128,
        };
        // 2^26 outputs, width 7: 512 MiB at 1000 GB/s = 0.537 ms; 7 x 2^26 FMAs = 0.014 ms.
        let f = conv_floor(1 << 26, 7, 1, &copy, &fp32);
        assert!((f.memory_ms - 0.536_870_912).abs() < 1e-12);
        assert_eq!(f.bound(), "memory");
        assert_eq!(f.ms(), f.memory_ms);
        // 9 x 9 in 2D: 81 FMAs per output, still under the memory floor at 1000 GB/s.
        let f2 = conv_floor(1 << 26, 9, 2, &copy, &fp32);
        assert!(
            (f2.fma_ms - 81.0 * (1u64 << 26) as f64 / fp32.fma_per_second() * 1e3).abs() < 1e-12
        );
        // At 100000 GB/s the FMAs set the floor.
        let fast = Ceiling {
            gbps: 100_000.0,
            ..copy
        };
        let f3 = conv_floor(1 << 26, 9, 2, &fast, &fp32);
        assert_eq!(f3.bound(), "FMA");
        assert!((f3.ratio(2.0 * f3.ms()) - 2.0).abs() < 1e-12);
    }

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
