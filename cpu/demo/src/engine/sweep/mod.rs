//! `demo sweep [PATTERN]...`: every pattern's library entry point (the call a user makes, so
//! a better kernel behind it shows here by itself) over a range of sizes and shapes, each
//! verified once against the CPU reference and then timed, beside this run's ceilings (the
//! device-to-device copy, the read-only stream, the datasheet bandwidth, the FP32 peak; for
//! each transpose, a copy of its own bytes) and, with `--peers FILE` (`peers.py --sweep`),
//! PyTorch / CuPy on the same sizes and cuBLAS SGEMM's multiply-add rate.
//!
//! Timing, the same for every case: CUDA events, [`WARMUP`](crate::engine::harness::WARMUP) untimed
//! launches, the median of `--reps` timed launches, and the L2 cache flushed
//! ([`L2Flush`](crate::engine::timing::L2Flush): a read of twice its size) before every warm-up and
//! timed launch, at every size, so that small inputs are read from DRAM as large ones are.
//! `peers.py --sweep` times its calls the same way.
//!
//! Layout: this file (what a sweep is, the registry of them, the command), [`measure`] (the
//! measuring of a case, which each pattern's sweep calls), [`output`] (tables, summary, files
//! and charts), [`peers`] (the peers file). The sweeps themselves (cases, inputs, checks) are
//! defined with their patterns (`registry::Pattern::SWEEPS`).

mod measure;
mod output;
mod peers;

use anyhow::{Context, Result, bail};
use cpu::Gpu;
pub(crate) use measure::{Sweep, random_floats};
pub use peers::{GemmTiming, PeerRow, PeerTiming, PeersFile};
use serde::{Deserialize, Serialize};

use crate::engine::harness::WARMUP;
use crate::engine::options::{Format, Options};
use crate::engine::report::{CeilingRecord, DeviceInfo, SCHEMA_VERSION};
use crate::engine::timing::{self, CEILING_COPY_BYTES, CEILING_READ_BYTES, ReadCeiling};

/// One sweep: a library entry point over sizes and shapes, as a pattern defines it
/// (`registry::Pattern::SWEEPS`): its name, what the tables say of it,
/// its cases, and how one case is measured.
#[derive(Debug)]
pub(crate) struct SweepSpec {
    /// The name on the command line, in the tables and in the peers file.
    pub name: &'static str,
    /// The library call timed.
    pub entry_point: &'static str,
    /// The bytes each element moves, in words, for the table titles.
    pub bytes: &'static str,
    /// Whether the operation only reads (its ceiling is the read-only stream, not the copy).
    pub reads_only: bool,
    /// The mask width a convolution's size sweep runs at (`None` for the others); a sweep
    /// with one has a second table and chart, by mask width.
    pub default_width: Option<usize>,
    /// What the size table's title says of the sizes (`"by size"`, `"by size, 5 x 5 mask"`).
    pub size_view: &'static str,
    /// Whether a convolution has a size table (`false`: every case at one shape, the width
    /// table only, [`SweepSpec::widths_only`]).
    pub size_table: bool,
    /// What the width table's title says of the widths (`"by mask width"`).
    pub width_view: &'static str,
    /// A convolution's multiply-adds per output, in words, for the titles (`"width^d"`; the
    /// separable sweep: `"2 x width"`).
    pub fmas_per_output: &'static str,
    /// Whether each case is timed beside a device-to-device copy of its own bytes (a column of
    /// its table).
    pub same_size_copy: bool,
    /// The suffix of a case's chart line, for shapes that must not share one (`""`: one line).
    pub series: fn(&[usize]) -> &'static str,
    make_cases: fn(&SweepSpec) -> Vec<Case>,
    measure: fn(&mut Sweep<'_>, Vec<Case>) -> Result<()>,
}

impl SweepSpec {
    /// A sweep of `entry_point` moving `bytes` per element over `cases`, each case measured by
    /// `measure` (through [`Sweep::measure`]).
    pub(crate) const fn new(
        name: &'static str,
        entry_point: &'static str,
        bytes: &'static str,
        cases: fn(&SweepSpec) -> Vec<Case>,
        measure: fn(&mut Sweep<'_>, Vec<Case>) -> Result<()>,
    ) -> Self {
        Self {
            name,
            entry_point,
            bytes,
            reads_only: false,
            default_width: None,
            size_view: "by size",
            size_table: true,
            width_view: "by mask width",
            fmas_per_output: "width^d",
            same_size_copy: false,
            series: |_| "",
            make_cases: cases,
            measure,
        }
    }

    /// The operation only reads.
    pub(crate) const fn reads_only(mut self) -> Self {
        self.reads_only = true;
        self
    }

    /// A convolution: its size sweep at `width`, described as `size_view`, then its mask
    /// widths (the cases at the shape of the last case).
    pub(crate) const fn convolution(mut self, width: usize, size_view: &'static str) -> Self {
        self.default_width = Some(width);
        self.size_view = size_view;
        self
    }

    /// A convolution whose cases are all at one shape: only the table by mask width, described
    /// as `width_view`.
    pub(crate) const fn widths_only(mut self, width_view: &'static str) -> Self {
        self.size_table = false;
        self.width_view = width_view;
        self
    }

    /// A convolution of `per_output` multiply-adds per output (in words, for the titles).
    pub(crate) const fn fmas_per_output(mut self, per_output: &'static str) -> Self {
        self.fmas_per_output = per_output;
        self
    }

    /// Each case is timed beside a copy of its bytes, and charted on the line `series` names.
    pub(crate) const fn same_size_copy(mut self, series: fn(&[usize]) -> &'static str) -> Self {
        self.same_size_copy = true;
        self.series = series;
        self
    }

    /// Every case, in the order they run.
    pub fn cases(&self) -> Vec<Case> {
        (self.make_cases)(self)
    }

    /// A case of this sweep: `[n]` or `[rows, cols]`, and a convolution's mask width.
    pub fn case(&self, shape: &[usize], width: Option<usize>) -> Case {
        Case {
            pattern: self.name.into(),
            shape: shape.to_vec(),
            width,
        }
    }
}

/// One size or shape of a pattern: `[n]` elements, or `[rows, cols]`, and the mask width of a
/// convolution. The key rows and peer timings are matched by.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Case {
    /// The sweep's [`SweepSpec::name`].
    pub pattern: String,
    /// `[n]` (1D) or `[rows, cols]` (2D, row-major).
    pub shape: Vec<usize>,
    /// Mask width (taps per dimension) of a convolution.
    #[serde(default)]
    pub width: Option<usize>,
}

impl Case {
    /// Elements (`n`, or `rows x cols`), `None` if the product overflows.
    pub fn elements(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
    }

    /// `"2^20"` for a power of two, `"100003"`, or `"8191 x 8193"`.
    pub fn shape_label(&self) -> String {
        match self.shape[..] {
            [n] => size_label(n),
            [rows, cols] => format!("{rows} x {cols}"),
            _ => format!("{:?}", self.shape),
        }
    }

    /// The shape and, for a convolution, the mask: `"2^26, w 7"`, `"8192 x 8192, 5 x 5"`.
    pub fn label(&self) -> String {
        match (self.width, self.shape.len()) {
            (Some(w), 1) => format!("{}, w {w}", self.shape_label()),
            (Some(w), _) => format!("{}, {w} x {w}", self.shape_label()),
            (None, _) => self.shape_label(),
        }
    }
}

/// `2^k` for a power of two, else the number.
pub fn size_label(n: usize) -> String {
    if n.is_power_of_two() && n >= 1024 {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// Powers of two `2^lo, 2^(lo + step), ..., 2^hi`.
pub(crate) fn powers(lo: u32, hi: u32, step: usize) -> impl Iterator<Item = usize> {
    (lo..=hi).step_by(step).map(|k| 1usize << k)
}

/// The read-only ceiling as the JSON keeps it: the winner, and every shape tried.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ReadRecord {
    /// Bytes read per launch.
    pub bytes: u64,
    /// Median time of the fastest shape, ms.
    pub median_ms: f64,
    /// Its bandwidth (bytes read), GB/s.
    pub gbps: f64,
    /// Timed repetitions per shape.
    pub reps: usize,
    /// The fastest shape, in words (loads in flight, blocks per SM).
    pub shape: String,
    /// Its launch, `"1056 x 256"`.
    pub launch: String,
    /// Every shape tried: `(shape, launch, median ms, GB/s)`.
    pub tried: Vec<(String, String, f64, f64)>,
}

impl From<&ReadCeiling> for ReadRecord {
    fn from(r: &ReadCeiling) -> Self {
        let bytes = r.ceiling.bytes_moved;
        Self {
            bytes,
            median_ms: r.ceiling.timing.median_ms,
            gbps: r.ceiling.gbps,
            reps: r.ceiling.timing.reps,
            shape: r.shape.describe(),
            launch: crate::engine::harness::describe(&r.launch),
            tried: r
                .tried
                .iter()
                .map(|(s, l, t)| {
                    (
                        s.describe(),
                        crate::engine::harness::describe(l),
                        t.median_ms,
                        t.gbps(bytes),
                    )
                })
                .collect(),
        }
    }
}

/// The three ceilings of a sweep, measured (or read) at its start.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Ceilings {
    /// Device-to-device memcpy (bytes read + written).
    pub copy: CeilingRecord,
    /// The read stream (bytes read).
    pub read: ReadRecord,
    /// `2 x memory clock x bus width / 8`, GB/s.
    pub theoretical_gbps: f64,
    /// The peak FP32 multiply-add rate, FMA/s (SMs x FP32 lanes x SM clock,
    /// [`timing::Fp32Throughput`]): the rate the convolutions' FMA floor assumes.
    #[serde(default)]
    pub fp32_peak_fma_per_second: f64,
    /// The FP32 multiply-add rate measured in this run, FMA/s ([`timing::fma_ceiling`]: 16
    /// independent FMA chains a thread and nothing else); 0 in files written before it.
    #[serde(default)]
    pub fp32_measured_fma_per_second: f64,
    /// cuBLAS SGEMM from the peers file (`peers.py --sweep`), when it has one: the rate a
    /// vendor's FMA-bound kernel reaches in this run.
    #[serde(default)]
    pub fp32_gemm: Option<GemmTiming>,
}

/// A case the sweep did not run, and why.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Skipped {
    /// The case.
    pub case: Case,
    /// One sentence.
    pub reason: String,
}

/// A case the library refused or failed on (its entry point returned an error: a shape beyond
/// a grid limit, a fault): the sweep records it and goes on.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CaseError {
    /// The case.
    pub case: Case,
    /// The kernel the entry point was expected to choose.
    pub kernel: String,
    /// The error, one sentence.
    pub error: String,
}

/// The floor of a convolution case ([`timing::conv_floor`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FloorRecord {
    /// Bytes moved at the copy ceiling's bandwidth, ms.
    pub memory_ms: f64,
    /// FMAs at the peak FP32 rate, ms.
    pub fma_ms: f64,
    /// The larger of the two, ms.
    pub floor_ms: f64,
    /// `"memory"` or `"FMA"`.
    pub bound: String,
    /// Our median over the floor (1 at the floor).
    pub ratio: f64,
}

/// A device-to-device copy of a case's bytes (`cuMemcpyDtoDAsync` of its input into its
/// output), timed as the case was (the L2 flushed before every launch): the copy speed of
/// that size, beside the run's copy ceiling of [`CEILING_COPY_BYTES`] (on an H200 a copy
/// of 64 MiB runs a few % below one of 512 MiB).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SameSizeCopy {
    /// Median of the timed copies, ms.
    pub median_ms: f64,
    /// Our bandwidth as a share of the copy's: its median over ours, %.
    pub percent: f64,
}

/// One measured case: our entry point's launch, timing and verdict, its share of each
/// ceiling, its floor (convolutions), and the peers' timings of the same case.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// The case.
    pub case: Case,
    /// Elements (outputs of a convolution, inputs of a reduction).
    pub elements: u64,
    /// The kernel the entry point chose.
    pub kernel: String,
    /// Its grid `[x, y, z]`.
    pub grid: [u32; 3],
    /// Its block `[x, y, z]`.
    pub block: [u32; 3],
    /// Median of the timed launches, ms.
    pub median_ms: f64,
    /// Fastest, ms.
    pub min_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
    /// Timed launches.
    pub reps: usize,
    /// Bytes the operation must move (each input read once, each output written once).
    pub bytes: u64,
    /// `bytes` over the median, GB/s.
    pub gbps: f64,
    /// Share of the copy ceiling, %.
    pub percent_of_copy: f64,
    /// Share of the read-only ceiling, %.
    pub percent_of_read: f64,
    /// Share of the theoretical bandwidth, %.
    pub percent_of_theoretical: f64,
    /// The floor (convolutions).
    pub floor: Option<FloorRecord>,
    /// A copy of the same bytes, timed the same way (transposes).
    #[serde(default)]
    pub same_size_copy: Option<SameSizeCopy>,
    /// Largest error against the CPU reference where the check has one (relative for the
    /// convolutions, |error| / bound for the float sum).
    pub max_error: Option<f64>,
    /// Whether the output matched the CPU reference.
    pub passed: bool,
    /// `PASS` or `FAIL: <first mismatch>`.
    pub verdict: String,
    /// Every peer timing of this case, fastest first.
    pub peers: Vec<PeerTiming>,
}

impl Row {
    /// The fastest peer.
    pub fn best_peer(&self) -> Option<&PeerTiming> {
        self.peers.first()
    }

    /// Speed against the fastest peer: `peer ms / our ms` (above 1: ours is faster).
    pub fn speed_vs_peer(&self) -> Option<f64> {
        self.best_peer().map(|p| p.median_ms / self.median_ms)
    }
}

/// A whole sweep: what `--format json` prints and `--out DIR` writes as `sweep.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SweepReport {
    /// The report schema's version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Start of the run, UTC, RFC 3339.
    pub date: String,
    /// The command line.
    pub command: String,
    /// The GPU.
    pub device: DeviceInfo,
    /// The ceilings every row is a share of.
    pub ceilings: Ceilings,
    /// Timing method, in words.
    pub method: String,
    /// The peers file given, if one was.
    pub peers_file: Option<String>,
    /// Every measured case, pattern by pattern.
    pub rows: Vec<Row>,
    /// Cases not run.
    pub skipped: Vec<Skipped>,
    /// Cases whose entry point returned an error.
    #[serde(default)]
    pub errors: Vec<CaseError>,
}

/// What a sweep needs of the command line.
pub(crate) struct Args {
    /// The sweeps to run, in order (the names on the command line, through
    /// `registry::Patterns::parse_sweeps`).
    pub sweeps: Vec<&'static SweepSpec>,
    /// Every sweep the binary has, in the order the summary, files and charts list them
    /// (`registry::Patterns::sweeps`).
    pub every: Vec<&'static SweepSpec>,
    /// Skip cases with more elements than this.
    pub max_elements: Option<u64>,
    /// Only print the cases, as JSON.
    pub list_cases: bool,
}

/// `demo sweep`: with `--list-cases`, prints the cases and returns; else checks the arguments and reads the peers file before the GPU is touched, then
/// measures the ceilings and every case, printing as it goes; the summary last; with `--out
/// DIR`, the files and charts. Fails (after printing everything) if any case disagreed with
/// the CPU or its entry point returned an error (the other cases still run).
pub(crate) fn run(opts: &Options, args: Args) -> Result<()> {
    let patterns = args.sweeps;
    if args.list_cases {
        let cases: Vec<Case> = patterns.iter().flat_map(|p| p.cases()).collect();
        println!("{}", serde_json::to_string_pretty(&cases)?);
        return Ok(());
    }
    if opts.dump.is_some() || opts.profile.is_some() {
        crate::engine::args::refuse!("demo sweep takes neither --dump nor --profile");
    }
    let peers = match &opts.peers {
        Some(path) => PeersFile::read(path)?,
        None => PeersFile::default(),
    };
    let gpu = Gpu::new(opts.device)?;
    let device = crate::engine::device::info(&gpu, opts.device)?;
    let say = |text: &str| {
        if opts.format == Format::Table {
            println!("{text}");
        }
    };
    say(&format!(
        "device {}: {} (compute capability {}, {} SMs, {} MHz), PTX sm_{}",
        device.index,
        device.name,
        device.compute_capability,
        device.sm_count,
        device.sm_clock_mhz,
        device.ptx_arch
    ));
    let reps = opts.reps as usize;
    let copy = timing::memcpy_ceiling(&gpu, CEILING_COPY_BYTES, WARMUP, reps)
        .context("measuring the copy ceiling")?;
    let read = timing::read_ceiling(&gpu, CEILING_READ_BYTES, WARMUP, reps)
        .context("measuring the read-only ceiling")?;
    let fp32 = timing::Fp32Throughput::of(&gpu)?;
    let fma = timing::fma_ceiling(&gpu, WARMUP, reps).context("measuring the FMA-rate ceiling")?;
    let ceilings = Ceilings {
        copy: CeilingRecord::from(&copy),
        read: ReadRecord::from(&read),
        theoretical_gbps: device.theoretical_gbps,
        fp32_peak_fma_per_second: fp32.fma_per_second(),
        fp32_measured_fma_per_second: fma.fma_per_second(),
        fp32_gemm: peers.fp32_gemm.clone(),
    };
    say(&output::ceilings_text(&ceilings));
    let method = format!(
        "CUDA events; {WARMUP} warm-up launches, then the median of {reps} timed launches; the L2 \
         cache flushed (a read of twice its size) before every launch, at every size; each size \
         checked once against the CPU reference before it is timed"
    );
    say(&format!("method: {method}"));
    if let Some(p) = &opts.peers {
        say(&format!(
            "peers: {} ({} timings{})",
            p.display(),
            peers.rows.len(),
            peers
                .device
                .as_deref()
                .map(|d| format!(", measured on {d}"))
                .unwrap_or_default()
        ));
    }
    let mut sweep = measure::Sweep::new(
        &gpu,
        opts,
        copy,
        fp32,
        &ceilings,
        &peers.rows,
        args.max_elements,
    )?;
    for pattern in patterns {
        sweep.run(pattern)?;
        if opts.format == Format::Table {
            for table in output::pattern_tables(pattern, sweep.rows(), sweep.errors(), &ceilings) {
                println!("\n{}\n{}", table.title, table.markdown());
            }
        }
    }
    let (rows, skipped, errors) = sweep.finish();
    let report = SweepReport {
        schema_version: SCHEMA_VERSION,
        date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        device,
        ceilings,
        method,
        peers_file: opts.peers.as_ref().map(|p| p.display().to_string()),
        rows,
        skipped,
        errors,
    };
    match opts.format {
        Format::Table => {
            let summary = output::summary_table(&report, &args.every);
            println!("\n{}\n{}", summary.title, summary.markdown());
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Csv => print!("{}", output::csv(&report.rows)?),
    }
    if let Some(dir) = &opts.out {
        let files = output::write_files(dir, &report, &args.every)?;
        eprintln!("wrote {files} files to {}", dir.display());
    }
    let failed: Vec<String> = report
        .rows
        .iter()
        .filter(|r| !r.passed)
        .map(|r| format!("{} {} (wrong result)", r.case.pattern, r.case.label()))
        .chain(
            report
                .errors
                .iter()
                .map(|e| format!("{} {} (error)", e.case.pattern, e.case.label())),
        )
        .collect();
    if !failed.is_empty() {
        bail!(
            "{} of {} sweep cases did not pass: {}",
            failed.len(),
            report.rows.len() + report.errors.len(),
            failed.join("; ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(size_label(1 << 20), "2^20");
        assert_eq!(size_label(100_003), "100003");
        assert_eq!(size_label(512), "512");
        let c = Case {
            pattern: "conv2d".into(),
            shape: vec![usize::MAX, 2],
            width: Some(3),
        };
        assert_eq!(c.elements(), None);
    }
}
