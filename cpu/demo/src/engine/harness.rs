//! What every pattern shares: the memory check before any work ([`Footprint`],
//! [`require_memory`]) and the launch-verify-time step behind each table row ([`Plan`]).

use std::mem::size_of;

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::convolution::Comparison;
use cpu::verify::Mismatch;
use cudarc::driver::LaunchConfig;

use crate::engine::options::Options;
use crate::engine::report::Measurement;
use crate::engine::timing::{self, CEILING_COPY_BYTES, Ceiling, Timing};

/// Untimed launches before the timed ones (module load, caches, clocks), unless a pattern
/// says otherwise.
pub const WARMUP: usize = 3;

/// Fixed buffers a footprint does not itemise: partial sums of a grid bounded by the device,
/// masks, counters, the seed's toy launches. At most this many bytes.
pub const SMALL: u64 = 1 << 20;

// ---- Sizes checked before work ------------------------------------------------------------

/// The memory a pattern's run holds at its peak, computed from its sizes alone before
/// anything is built or allocated. Each pattern states its formula beside its code; the
/// arithmetic is checked, so a size whose byte count does not fit in 64 bits is an error,
/// not a panic or a wrapped number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    what: String,
    device: Option<u64>,
    host: Option<u64>,
    device_floor: u64,
}

/// Bytes of `copies` arrays of `n` elements of `T`, `None` if that overflows 64 bits.
pub fn array<T>(copies: u64, n: usize) -> Option<u64> {
    copies
        .checked_mul(n as u64)?
        .checked_mul(size_of::<T>() as u64)
}

fn add(total: Option<u64>, term: Option<u64>) -> Option<u64> {
    total?.checked_add(term?)
}

impl Footprint {
    /// Nothing yet, for the run `what` names ("vector-add of 1024 elements").
    pub fn new(what: impl Into<String>) -> Self {
        Self {
            what: what.into(),
            device: Some(0),
            host: Some(0),
            device_floor: 0,
        }
    }

    /// Plus `copies` device arrays of `n` elements of `T`.
    pub fn device<T>(mut self, copies: u64, n: usize) -> Self {
        self.device = add(self.device, array::<T>(copies, n));
        self
    }

    /// Plus `copies` host arrays of `n` elements of `T`.
    pub fn host<T>(mut self, copies: u64, n: usize) -> Self {
        self.host = add(self.host, array::<T>(copies, n));
        self
    }

    /// Plus `bytes` of device memory (`None`: a count that overflowed).
    pub fn device_bytes(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.device = add(self.device, bytes.into());
        self
    }

    /// At least the memcpy ceiling's two buffers on the device (measured first, freed before
    /// the pattern allocates its own).
    pub fn with_ceiling(mut self) -> Self {
        self.device_floor = 2 * CEILING_COPY_BYTES as u64;
        self
    }

    /// `(device, host)` bytes.
    ///
    /// # Errors
    /// If either count overflows 64 bits.
    pub fn bytes(&self) -> Result<(u64, u64)> {
        match (self.device, self.host) {
            (Some(d), Some(h)) => Ok((d.max(self.device_floor), h)),
            _ => bail!("{} needs more bytes than a 64-bit count holds", self.what),
        }
    }

    /// What the run is, as the messages name it.
    pub fn what(&self) -> &str {
        &self.what
    }
}

/// `rows x cols` elements for `pattern`, or an error if the product overflows.
pub fn elements(pattern: &str, rows: usize, cols: usize) -> Result<usize> {
    match rows.checked_mul(cols) {
        Some(n) => Ok(n),
        None => bail!("{pattern} of {rows} x {cols} elements: the element count overflows"),
    }
}

/// Refuses a run whose [`Footprint`] does not fit: more device memory than is free on `gpu`,
/// or more host memory than the kernel reports available (`MemAvailable` of /proc/meminfo;
/// not checked where that cannot be read). One sentence naming the bytes.
pub fn require_memory(gpu: &Gpu, need: &Footprint) -> Result<()> {
    let (device, host) = need.bytes()?;
    let (free, _) = gpu.memory_info()?;
    fits(need.what(), device, free as u64, host, host_available())
}

/// Device memory a sweep keeps free beyond a case's footprint: 256 MiB (the driver's and
/// the libraries' own allocations), plus an eighth of the footprint itself.
pub const HEADROOM: u64 = 256 << 20;

/// Why a run whose [`Footprint`] is `need` does not fit comfortably (with [`HEADROOM`] on the
/// device and an eighth of the host bytes spare), as one sentence; `None` if it does. For a
/// sweep that skips the sizes that do not fit instead of refusing the whole run.
///
/// # Errors
/// If the device's free memory cannot be queried.
pub fn roomy(gpu: &Gpu, need: &Footprint) -> Result<Option<String>> {
    let (device, host) = match need.bytes() {
        Ok(b) => b,
        Err(e) => return Ok(Some(e.to_string())),
    };
    let (free, _) = gpu.memory_info()?;
    let pad = |b: u64| b.saturating_add(b / 8);
    Ok(fits(
        need.what(),
        pad(device).saturating_add(HEADROOM),
        free as u64,
        pad(host),
        host_available(),
    )
    .err()
    .map(|e| format!("{e} (headroom included)")))
}

/// The comparison behind [`require_memory`], without the device.
fn fits(what: &str, device: u64, free: u64, host: u64, available: Option<u64>) -> Result<()> {
    if device > free {
        bail!("{what} needs {device} bytes of device memory, {free} are free");
    }
    if let Some(available) = available
        && host > available
    {
        bail!("{what} needs {host} bytes of host memory, {available} are available");
    }
    Ok(())
}

/// Host memory available for new allocations without swapping, in bytes.
fn host_available() -> Option<u64> {
    mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable:  123456 kB` of /proc/meminfo, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

// ---- One verify-time-measure step -------------------------------------------------------

/// What a verification returns: the check, and the largest error where the table shows one.
pub trait Verdict {
    /// The comparison with the CPU reference.
    fn result(&self) -> &Result<(), Mismatch>;
    /// The largest error recorded in the measurement (`None`: not reported).
    fn max_error(&self) -> Option<f64> {
        None
    }
}

impl Verdict for Result<(), Mismatch> {
    fn result(&self) -> &Result<(), Mismatch> {
        self
    }
}

impl Verdict for Comparison {
    fn result(&self) -> &Result<(), Mismatch> {
        &self.result
    }
    fn max_error(&self) -> Option<f64> {
        Some(self.max_relative_error)
    }
}

/// A check with the error its table shows (absolute, relative or against a bound).
impl<E: Copy + Into<f64>> Verdict for (Result<(), Mismatch>, E) {
    fn result(&self) -> &Result<(), Mismatch> {
        &self.0
    }
    fn max_error(&self) -> Option<f64> {
        Some(self.1.into())
    }
}

/// One variant, launched once and verified, then timed: what its table row shows.
pub struct Trial<V> {
    /// The launch configuration of the verified launch.
    pub cfg: LaunchConfig,
    /// The timed launches' statistics.
    pub timing: Timing,
    /// The verification.
    pub check: V,
    /// The row's measurement: label, kernel, timing, launch, bytes and share of the ceiling
    /// (where the plan gave them), error (where the verdict has one) and verdict. Builder
    /// methods add the rest.
    pub measurement: Measurement,
}

impl<V: Verdict> Trial<V> {
    /// Whether the output matched the CPU reference.
    pub fn passed(&self) -> bool {
        self.check.result().is_ok()
    }

    /// Bandwidth at the median time (0 without bytes).
    pub fn gbps(&self) -> f64 {
        self.measurement.gbps.unwrap_or_default()
    }

    /// The "grid x block" cell.
    pub fn grid_block(&self) -> String {
        describe(&self.cfg)
    }

    /// The verdict cell: `PASS` or `FAIL: <first mismatch>`.
    pub fn verdict(&self) -> String {
        verdict(self.check.result())
    }
}

/// How one variant runs: the label and kernel of its row, warm-up and timed repetitions
/// (`--reps` by default), the bytes it moves.
pub struct Plan<'a> {
    gpu: &'a Gpu,
    label: String,
    kernel: &'a str,
    warmup: usize,
    reps: usize,
    bytes: Option<(u64, Option<&'a Ceiling>)>,
}

impl<'a> Plan<'a> {
    /// The row `label` of `kernel`, [`WARMUP`] untimed and `--reps` timed launches.
    pub fn new(gpu: &'a Gpu, opts: &Options, label: impl Into<String>, kernel: &'a str) -> Self {
        Self {
            gpu,
            label: label.into(),
            kernel,
            warmup: WARMUP,
            reps: opts.reps as usize,
            bytes: None,
        }
    }

    /// Untimed launches before the timed ones.
    pub fn warmup(mut self, warmup: usize) -> Self {
        self.warmup = warmup;
        self
    }

    /// Timed launches.
    pub fn reps(mut self, reps: usize) -> Self {
        self.reps = reps;
        self
    }

    /// Bytes moved per launch (the bandwidth), and the ceiling its share is of.
    pub fn bytes(mut self, bytes: u64, ceiling: Option<&'a Ceiling>) -> Self {
        self.bytes = Some((bytes, ceiling));
        self
    }

    /// Launches once, verifies that launch's output, then times the launch (warm-up, then the
    /// median of the timed launches between CUDA events). `state` is what both closures work
    /// on (the output buffer, a kernel's working set).
    pub fn run<S, V: Verdict>(
        self,
        state: &mut S,
        launch: impl FnMut(&mut S) -> cpu::error::Result<LaunchConfig>,
        verify: impl FnOnce(&mut S, &LaunchConfig) -> Result<V>,
    ) -> Result<Trial<V>> {
        self.run_with_setup(state, |_| Ok(()), launch, verify)
    }

    /// As [`Plan::run`], with `setup` queued before each warm-up and timed launch, outside
    /// the timed interval (flushing the L2, restoring an input reduced in place). The first,
    /// verified launch runs on `state` as given.
    pub fn run_with_setup<S, V: Verdict>(
        self,
        state: &mut S,
        setup: impl FnMut(&mut S) -> cpu::error::Result<()>,
        mut launch: impl FnMut(&mut S) -> cpu::error::Result<LaunchConfig>,
        verify: impl FnOnce(&mut S, &LaunchConfig) -> Result<V>,
    ) -> Result<Trial<V>> {
        let cfg = launch(state)?;
        let check = verify(state, &cfg)?;
        let timing = timing::time_gpu_with_setup(
            self.gpu,
            self.kernel,
            self.warmup,
            self.reps,
            state,
            setup,
            |s| launch(s).map(drop),
        )?;
        let mut m = Measurement::new(self.label, &timing)
            .kernel(self.kernel)
            .launch(&cfg);
        if let Some((bytes, ceiling)) = self.bytes {
            m = m.bytes(bytes, ceiling);
        }
        if let Some(e) = check.max_error() {
            m = m.error(e);
        }
        let measurement = m.passed(check.result().is_ok());
        Ok(Trial {
            cfg,
            timing,
            check,
            measurement,
        })
    }
}

/// Step and cumulative speedups down a table of versions: each row against the one before
/// and against the first.
#[derive(Default)]
pub struct Speedups {
    first: Option<f64>,
    previous: Option<f64>,
}

impl Speedups {
    /// The step and cumulative speedups of the next row, timed at `ms` (none for the first
    /// row), also added to `m` as `step_speedup` and `cumulative_speedup`.
    pub fn next(&mut self, ms: f64, m: Measurement) -> (Option<f64>, Option<f64>, Measurement) {
        let step = self.previous.map(|p| p / ms);
        let cumulative = self.first.map(|f| f / ms);
        self.first.get_or_insert(ms);
        self.previous = Some(ms);
        let m = match step {
            Some(x) => m.extra("step_speedup", x),
            None => m,
        };
        let m = match cumulative {
            Some(x) => m.extra("cumulative_speedup", x),
            None => m,
        };
        (step, cumulative, m)
    }
}

/// `"8 x 128"` for a 1D launch, `"(256,256) x (32,32)"` for a 2D one.
pub(crate) fn describe(cfg: &LaunchConfig) -> String {
    let dims = |(x, y, z): (u32, u32, u32)| match (y, z) {
        (1, 1) => x.to_string(),
        (_, 1) => format!("({x},{y})"),
        _ => format!("({x},{y},{z})"),
    };
    format!("{} x {}", dims(cfg.grid_dim), dims(cfg.block_dim))
}

/// The verdict cell of a check: `PASS`, or `FAIL: <first mismatch>`.
pub(crate) fn verdict(check: &Result<(), Mismatch>) -> String {
    match check {
        Ok(()) => "PASS".into(),
        Err(m) => format!("FAIL: {m}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_launches() {
        assert_eq!(describe(&cpu::launch::linear(8, 128, 0)), "8 x 128");
        let cfg = LaunchConfig {
            grid_dim: (256, 256, 1),
            block_dim: (32, 32, 1),
            shared_mem_bytes: 0,
        };
        assert_eq!(describe(&cfg), "(256,256) x (32,32)");
    }

    #[test]
    fn footprint_sums_arrays() {
        let f = Footprint::new("x").device::<f32>(3, 10).host::<u64>(2, 5);
        assert_eq!(f.bytes().unwrap(), (120, 80));
        let f = f.device_bytes(5);
        assert_eq!(f.bytes().unwrap(), (125, 80));
        assert!(f.device_bytes(None).bytes().is_err(), "an overflowed term");
    }

    #[test]
    fn the_ceiling_is_a_floor_not_a_term() {
        let small = Footprint::new("x").device::<f32>(1, 1).with_ceiling();
        assert_eq!(small.bytes().unwrap().0, 2 * CEILING_COPY_BYTES as u64);
        let big = Footprint::new("x").device::<f32>(3, 1 << 40).with_ceiling();
        assert_eq!(big.bytes().unwrap().0, 12 << 40);
    }

    #[test]
    fn overflow_is_an_error_not_a_panic() {
        for f in [
            Footprint::new("a").device::<f32>(3, usize::MAX),
            Footprint::new("b").host::<f64>(1, usize::MAX / 4),
            Footprint::new("c")
                .device::<u8>(1, usize::MAX)
                .device_bytes(2),
            Footprint::new("d").device_bytes(u64::MAX).device_bytes(1),
        ] {
            let e = f.bytes().unwrap_err().to_string();
            assert!(e.contains("64-bit"), "{e}");
        }
        assert!(elements("transpose", usize::MAX, 2).is_err());
        assert_eq!(elements("transpose", 3, 4).unwrap(), 12);
    }

    #[test]
    fn fits_names_the_bytes() {
        let e = fits(
            "vector-add of 1099511627776 elements",
            13194139533312,
            150_000_000_000,
            0,
            None,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "vector-add of 1099511627776 elements needs 13194139533312 bytes of device memory, 150000000000 are free"
        );
        let e = fits("p", 1, 2, 10, Some(5)).unwrap_err().to_string();
        assert_eq!(e, "p needs 10 bytes of host memory, 5 are available");
        assert!(fits("p", 2, 2, 5, Some(5)).is_ok());
        assert!(fits("p", 2, 2, u64::MAX, None).is_ok());
    }

    #[test]
    fn mem_available_reads_kib() {
        let meminfo = "MemTotal:       16384 kB\nMemFree:  100 kB\nMemAvailable:    2048 kB\n";
        assert_eq!(mem_available(meminfo), Some(2 << 20));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn speedups_against_the_previous_and_the_first_row() {
        let t = Timing {
            median_ms: 1.0,
            min_ms: 1.0,
            max_ms: 1.0,
            reps: 1,
        };
        let mut s = Speedups::default();
        let (step, cumulative, m) = s.next(4.0, Measurement::new("a", &t));
        assert_eq!((step, cumulative), (None, None));
        assert!(m.extra.is_empty());
        let (step, cumulative, _) = s.next(2.0, Measurement::new("b", &t));
        assert_eq!((step, cumulative), (Some(2.0), Some(2.0)));
        let (step, cumulative, m) = s.next(1.0, Measurement::new("c", &t));
        assert_eq!((step, cumulative), (Some(2.0), Some(4.0)));
        assert_eq!(m.extra["cumulative_speedup"], 4.0);
    }
}
