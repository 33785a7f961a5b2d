//! `demo sweep [PATTERN]...`: every pattern's library entry point (the call a user makes, so
//! a better kernel behind it shows here by itself) over a range of sizes and shapes, each
//! verified once against the CPU reference and then timed, beside this run's ceilings (the
//! device-to-device copy, the read-only stream, the datasheet bandwidth, the FP32 peak; for
//! each transpose, a copy of its own bytes) and, with `--peers FILE` (`peers.py --sweep`),
//! PyTorch / CuPy on the same sizes and cuBLAS SGEMM's multiply-add rate.
//!
//! Timing, the same for every case: CUDA events, [`WARMUP`](crate::harness::WARMUP) untimed
//! launches, the median of `--reps` timed launches, and the L2 cache flushed
//! ([`L2Flush`](crate::timing::L2Flush): a read of twice its size) before every warm-up and
//! timed launch, at every size, so that small inputs are read from DRAM as large ones are.
//! `peers.py --sweep` times its calls the same way.
//!
//! Layout: this file (the patterns, their cases, the command), [`measure`] (one runner per
//! pattern), [`output`] (tables, summary, files and charts), [`peers`] (the peers file).

mod measure;
mod output;
mod peers;

use anyhow::{Context, Result, bail};
use cpu::Gpu;
use serde::{Deserialize, Serialize};

use crate::harness::WARMUP;
use crate::report::{CeilingRecord, DeviceInfo, SCHEMA_VERSION};
use crate::timing::{self, CEILING_COPY_BYTES, CEILING_READ_BYTES, ReadCeiling};
use crate::{Cli, Format};

pub use peers::{GemmTiming, PeerRow, PeerTiming, PeersFile};

/// The patterns a sweep runs, in this order when none is named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SweepPattern {
    /// `cpu::reduce::ReduceSum::<SumI32>` (wrapping `i32` sum).
    ReduceI32,
    /// `cpu::reduce::ReduceSum::<SumF32>` (`f32` summed in `f32`).
    ReduceF32,
    /// `cpu::vector_add::add`.
    VectorAdd,
    /// `cpu::transpose::transpose`.
    Transpose,
    /// `cpu::convolution::conv1d`.
    Conv1d,
    /// `cpu::convolution::conv2d`.
    Conv2d,
}

impl SweepPattern {
    /// Every pattern.
    pub const ALL: [SweepPattern; 6] = [
        SweepPattern::ReduceI32,
        SweepPattern::ReduceF32,
        SweepPattern::VectorAdd,
        SweepPattern::Transpose,
        SweepPattern::Conv1d,
        SweepPattern::Conv2d,
    ];

    /// The name on the command line, in the tables and in the peers file.
    pub fn name(self) -> &'static str {
        match self {
            SweepPattern::ReduceI32 => "reduce-i32",
            SweepPattern::ReduceF32 => "reduce-f32",
            SweepPattern::VectorAdd => "vector-add",
            SweepPattern::Transpose => "transpose",
            SweepPattern::Conv1d => "conv1d",
            SweepPattern::Conv2d => "conv2d",
        }
    }

    /// The library call timed.
    pub fn entry_point(self) -> &'static str {
        match self {
            SweepPattern::ReduceI32 => "cpu::reduce::ReduceSum::<SumI32>::launch",
            SweepPattern::ReduceF32 => "cpu::reduce::ReduceSum::<SumF32>::launch",
            SweepPattern::VectorAdd => "cpu::vector_add::add",
            SweepPattern::Transpose => "cpu::transpose::transpose",
            SweepPattern::Conv1d => "cpu::convolution::conv1d",
            SweepPattern::Conv2d => "cpu::convolution::conv2d",
        }
    }

    /// Whether the operation only reads (its ceiling is the read-only stream, not the copy).
    pub fn reads_only(self) -> bool {
        matches!(self, SweepPattern::ReduceI32 | SweepPattern::ReduceF32)
    }

    /// The mask width a convolution's size sweep runs at (`None` for the others).
    pub fn default_width(self) -> Option<usize> {
        match self {
            SweepPattern::Conv1d => Some(7),
            SweepPattern::Conv2d => Some(5),
            _ => None,
        }
    }
}

/// The patterns named on the command line, each once, in the order given; every pattern if
/// none is.
///
/// # Errors
/// One sentence naming an unknown pattern and the known ones.
pub fn parse_patterns(names: &[String]) -> Result<Vec<SweepPattern>> {
    if names.is_empty() {
        return Ok(SweepPattern::ALL.to_vec());
    }
    let mut patterns = Vec::new();
    for name in names {
        let Some(p) = SweepPattern::ALL.into_iter().find(|p| p.name() == name) else {
            let known: Vec<&str> = SweepPattern::ALL.iter().map(|p| p.name()).collect();
            bail!(
                "demo sweep: unknown pattern `{name}` (the sweep knows {})",
                known.join(", ")
            );
        };
        if !patterns.contains(&p) {
            patterns.push(p);
        }
    }
    Ok(patterns)
}

/// One size or shape of a pattern: `[n]` elements, or `[rows, cols]`, and the mask width of a
/// convolution. The key rows and peer timings are matched by.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Case {
    /// The pattern's [`SweepPattern::name`].
    pub pattern: String,
    /// `[n]` (1D) or `[rows, cols]` (2D, row-major).
    pub shape: Vec<usize>,
    /// Mask width (taps per dimension) of a convolution.
    #[serde(default)]
    pub width: Option<usize>,
}

impl Case {
    fn new(pattern: SweepPattern, shape: &[usize], width: Option<usize>) -> Self {
        Self {
            pattern: pattern.name().into(),
            shape: shape.to_vec(),
            width,
        }
    }

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
fn powers(lo: u32, hi: u32, step: usize) -> impl Iterator<Item = usize> {
    (lo..=hi).step_by(step).map(|k| 1usize << k)
}

/// Every case of `pattern`, in the order they run. `peers.py --sweep` lists the same ones.
///
/// - reductions: 2^16, 2^18, ..., 2^30 elements;
/// - vector-add: 2^16, 2^18, ..., 2^28;
/// - transpose: 1024^2 .. 16384^2, then the odd shapes 8191 x 8193, 3 x 8191, 8193 x 7,
///   16383 x 16385, 4097 x 4095 and the thin 2^24-element 4 x 4194304 and 4194304 x 4;
/// - conv1d: 2^16 .. 2^28 (x4) at width 7, then widths 1, 3, ..., 31 at 2^26 (7 once);
/// - conv2d: 1024^2 .. 16384^2 at 5 x 5, then widths 1, 3, ..., 9 at 8192^2 (5 once).
pub fn cases(pattern: SweepPattern) -> Vec<Case> {
    let one = |n| Case::new(pattern, &[n], None);
    match pattern {
        SweepPattern::ReduceI32 | SweepPattern::ReduceF32 => powers(16, 30, 2).map(one).collect(),
        SweepPattern::VectorAdd => powers(16, 28, 2).map(one).collect(),
        SweepPattern::Transpose => {
            let square = powers(10, 14, 1).map(|s| [s, s]);
            let odd = [
                [8191, 8193],
                [3, 8191],
                [8193, 7],
                [16383, 16385],
                [4097, 4095],
                [4, 1 << 22],
                [1 << 22, 4],
            ];
            square
                .chain(odd)
                .map(|s| Case::new(pattern, &s, None))
                .collect()
        }
        SweepPattern::Conv1d => {
            let sizes = powers(16, 28, 2).map(|n| Case::new(pattern, &[n], Some(7)));
            let widths = (1..=31)
                .step_by(2)
                .filter(|&w| w != 7)
                .map(|w| Case::new(pattern, &[1 << 26], Some(w)));
            sizes.chain(widths).collect()
        }
        SweepPattern::Conv2d => {
            let sizes = powers(10, 14, 1).map(|s| Case::new(pattern, &[s, s], Some(5)));
            let widths = (1..=9)
                .step_by(2)
                .filter(|&w| w != 5)
                .map(|w| Case::new(pattern, &[8192, 8192], Some(w)));
            sizes.chain(widths).collect()
        }
    }
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
            launch: cpu::launch::describe(&r.launch),
            tried: r
                .tried
                .iter()
                .map(|(s, l, t)| {
                    (
                        s.describe(),
                        cpu::launch::describe(l),
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
pub(crate) struct Args<'a> {
    /// Pattern names (none: all).
    pub patterns: &'a [String],
    /// Skip cases with more elements than this.
    pub max_elements: Option<u64>,
}

/// `demo sweep`: checks the arguments and reads the peers file before the GPU is touched, then
/// measures the ceilings and every case, printing as it goes; the summary last; with `--out
/// DIR`, the files and charts. Fails (after printing everything) if any case disagreed with
/// the CPU or its entry point returned an error (the other cases still run).
pub(crate) fn run(cli: &Cli, args: Args) -> Result<()> {
    let patterns = parse_patterns(args.patterns)?;
    if cli.dump.is_some() || cli.profile.is_some() {
        bail!("demo sweep takes neither --dump nor --profile");
    }
    let peers = match &cli.peers {
        Some(path) => PeersFile::read(path)?,
        None => PeersFile::default(),
    };
    let gpu = Gpu::new(cli.device)?;
    let device = crate::run::device_info(&gpu, cli.device)?;
    let say = |text: &str| {
        if cli.format == Format::Table {
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
    let reps = cli.reps as usize;
    let copy = timing::memcpy_ceiling(&gpu, CEILING_COPY_BYTES, WARMUP, reps)
        .context("measuring the copy ceiling")?;
    let read = timing::read_ceiling(&gpu, CEILING_READ_BYTES, WARMUP, reps)
        .context("measuring the read-only ceiling")?;
    let fp32 = timing::Fp32Throughput::of(&gpu)?;
    let ceilings = Ceilings {
        copy: CeilingRecord::from(&copy),
        read: ReadRecord::from(&read),
        theoretical_gbps: device.theoretical_gbps,
        fp32_peak_fma_per_second: fp32.fma_per_second(),
        fp32_gemm: peers.fp32_gemm.clone(),
    };
    say(&output::ceilings_text(&ceilings));
    let method = format!(
        "CUDA events; {WARMUP} warm-up launches, then the median of {reps} timed launches; the L2 \
         cache flushed (a read of twice its size) before every launch, at every size; each size \
         checked once against the CPU reference before it is timed"
    );
    say(&format!("method: {method}"));
    if let Some(p) = &cli.peers {
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
        cli,
        copy,
        fp32,
        &ceilings,
        &peers.rows,
        args.max_elements,
    )?;
    for pattern in patterns {
        sweep.run(pattern)?;
        if cli.format == Format::Table {
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
        peers_file: cli.peers.as_ref().map(|p| p.display().to_string()),
        rows,
        skipped,
        errors,
    };
    match cli.format {
        Format::Table => {
            let summary = output::summary_table(&report);
            println!("\n{}\n{}", summary.title, summary.markdown());
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Csv => print!("{}", output::csv(&report.rows)?),
    }
    if let Some(dir) = &cli.out {
        let files = output::write_files(dir, &report)?;
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
    fn patterns_parse_in_order_once_and_all_by_default() {
        assert_eq!(parse_patterns(&[]).unwrap(), SweepPattern::ALL.to_vec());
        let names = ["conv2d", "reduce-i32", "conv2d"].map(String::from);
        assert_eq!(
            parse_patterns(&names).unwrap(),
            [SweepPattern::Conv2d, SweepPattern::ReduceI32]
        );
        let e = parse_patterns(&["reduce".into()]).unwrap_err().to_string();
        assert_eq!(
            e,
            "demo sweep: unknown pattern `reduce` (the sweep knows reduce-i32, reduce-f32, \
             vector-add, transpose, conv1d, conv2d)"
        );
        assert!(!e.contains('\n'), "one sentence: {e}");
    }

    #[test]
    fn the_cases_are_the_ones_asked_for() {
        let n = |p| -> Vec<usize> { cases(p).iter().map(|c| c.elements().unwrap()).collect() };
        assert_eq!(
            n(SweepPattern::ReduceI32),
            [16, 18, 20, 22, 24, 26, 28, 30].map(|k| 1usize << k)
        );
        assert_eq!(
            n(SweepPattern::VectorAdd),
            [16, 18, 20, 22, 24, 26, 28].map(|k| 1usize << k)
        );
        let t = cases(SweepPattern::Transpose);
        assert_eq!(t.len(), 12);
        assert!(t.iter().any(|c| c.shape == [3, 8191]));
        assert!(t.iter().any(|c| c.shape == [1 << 22, 4]));
        assert_eq!(t[4].label(), "16384 x 16384");
        let c1 = cases(SweepPattern::Conv1d);
        assert_eq!(c1.len(), 7 + 15);
        assert_eq!(c1.iter().filter(|c| c.width == Some(7)).count(), 7);
        assert!(
            c1.iter()
                .any(|c| c.shape == [1 << 26] && c.width == Some(31))
        );
        assert_eq!(c1[0].label(), "2^16, w 7");
        let c2 = cases(SweepPattern::Conv2d);
        assert_eq!(c2.len(), 5 + 4);
        assert_eq!(c2.last().unwrap().label(), "8192 x 8192, 9 x 9");
        for p in SweepPattern::ALL {
            let all = cases(p);
            for (i, c) in all.iter().enumerate() {
                assert!(!all[..i].contains(c), "{} twice", c.label());
            }
        }
    }

    /// `peers.py --sweep` lists the same cases (where python3 is here to ask it).
    #[test]
    fn peers_py_times_the_same_cases() {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../xtask/peers/peers.py");
        let code = "import importlib.util, json, sys\n\
                    spec = importlib.util.spec_from_file_location('peers', sys.argv[1])\n\
                    m = importlib.util.module_from_spec(spec)\n\
                    spec.loader.exec_module(m)\n\
                    print(json.dumps({p: m.sweep_cases(p) for p in m.SWEEP_PATTERNS}))";
        let Ok(out) = std::process::Command::new("python3")
            .args(["-c", code, script])
            .output()
        else {
            return; // no python3 here: run.sh's machines check it
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        /// `(shape, width)` per case, per pattern name.
        type Listed = std::collections::BTreeMap<String, Vec<(Vec<usize>, Option<usize>)>>;
        let listed: Listed = serde_json::from_slice(&out.stdout).unwrap();
        let names: Vec<&str> = listed.keys().map(String::as_str).collect();
        let mut ours: Vec<&str> = SweepPattern::ALL.iter().map(|p| p.name()).collect();
        ours.sort();
        assert_eq!(names, ours);
        for p in SweepPattern::ALL {
            let theirs: Vec<Case> = listed[p.name()]
                .iter()
                .map(|(shape, width)| Case::new(p, shape, *width))
                .collect();
            assert_eq!(theirs, cases(p), "{}", p.name());
        }
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(1 << 20), "2^20");
        assert_eq!(size_label(100_003), "100003");
        assert_eq!(size_label(512), "512");
        let c = Case::new(SweepPattern::Conv2d, &[usize::MAX, 2], Some(3));
        assert_eq!(c.elements(), None);
    }
}
