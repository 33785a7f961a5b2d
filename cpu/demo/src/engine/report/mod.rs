//! Results of a demo run as data: the tables each pattern prints, every measurement behind them,
//! and the renderings of a run (markdown, JSON, CSV, charts), written so that an interrupted run
//! leaves no half-written file.
//!
//! A [`Report`] holds one [`Section`] per pattern; a section is the run's output in order, prose
//! lines and [`Table`]s, and each table keeps its display cells (as the seed posts print them)
//! beside the [`Measurement`]s they came from (median, min, max, reps, bytes, grid, block, max
//! error). `demo --format json` prints a `Report`, `--format csv` its measurements, and
//! `demo all --out DIR` writes `report.md`, `report.json`, `report.csv` and one chart per
//! table (see [`chart`]).

pub mod chart;
pub mod compare;
pub mod profile;
mod write;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use comfy_table::presets::ASCII_MARKDOWN;
use cudarc::driver::LaunchConfig;
use serde::{Deserialize, Serialize};
pub use write::{WriteError, exit_after_writes, write_all_atomically, write_atomically};

use crate::engine::timing::{Ceiling, Timing};

/// Version of the JSON layout, bumped when a field changes meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// One run of `demo`: the device it ran on and one section per pattern.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Start of the run, UTC, RFC 3339.
    pub date: String,
    /// The command line, as typed.
    pub command: String,
    /// The GPU and its driver.
    pub device: DeviceInfo,
    /// One per pattern, in the order they ran.
    pub sections: Vec<Section>,
    /// Timings of the same operations through other libraries (`run.sh peers`), if given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<Peer>,
}

/// The GPU a report was measured on.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceInfo {
    /// CUDA device index.
    pub index: usize,
    /// Marketing name, as the driver reports it.
    pub name: String,
    /// Compute capability, `"9.0"`.
    pub compute_capability: String,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// CUDA version the driver supports, `"13.0"`.
    pub cuda_driver_version: String,
    /// The kernel driver's version line (`/proc/driver/nvidia/version`), where readable.
    pub kernel_driver: Option<String>,
    /// Peak SM clock, MHz.
    pub sm_clock_mhz: u32,
    /// Peak memory clock, MHz.
    pub memory_clock_mhz: u32,
    /// Memory bus width, bits.
    pub memory_bus_bits: u32,
    /// `2 x memory clock x bus width`, GB/s: the datasheet figure the memcpy ceiling falls
    /// short of.
    pub theoretical_gbps: f64,
    /// L2 cache, bytes.
    pub l2_bytes: usize,
    /// Device memory, bytes.
    pub memory_bytes: usize,
    /// The PTX architecture the kernels were loaded from, `90` for `sm_90`.
    pub ptx_arch: u32,
}

/// The device-to-device memcpy of a section: the ceiling its bandwidths are judged against.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CeilingRecord {
    /// Bytes moved per copy (read plus written).
    pub bytes: u64,
    /// Median copy time, ms.
    pub median_ms: f64,
    /// Bandwidth at the median, GB/s.
    pub gbps: f64,
    /// Timed repetitions.
    pub reps: usize,
}

impl From<&Ceiling> for CeilingRecord {
    fn from(c: &Ceiling) -> Self {
        Self {
            bytes: c.bytes_moved,
            median_ms: c.timing.median_ms,
            gbps: c.gbps,
            reps: c.timing.reps,
        }
    }
}

/// One pattern's output, in the order it was printed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Section {
    /// The demo's name, `"reduce"`.
    pub pattern: String,
    /// The memcpy ceiling measured in this section, if it measured one.
    pub ceiling: Option<CeilingRecord>,
    /// Lines and tables, in order.
    pub blocks: Vec<Block>,
    /// `(table id, key)` of the measurement the summary reports ([`Measurement::key`]: the
    /// variant, with its series and x where it has them); by default the passing measurement
    /// with the highest bandwidth.
    pub headline: Option<(String, String)>,
    /// The error that ended the pattern early, if one did.
    pub error: Option<String>,
}

/// A piece of a section's output.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Block {
    /// A line of prose (a caption, a note, a figure against its target).
    Line(String),
    /// A table.
    Table(Table),
}

/// How a table is charted.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    /// Not charted.
    #[default]
    None,
    /// One bar per measurement, against the section's memcpy ceiling where it has bandwidths.
    Bars,
    /// Lines over [`Measurement::x`], one per [`Measurement::series`].
    Sweep {
        /// What `x` is, with its unit.
        x_label: String,
        /// Plot `x` on a log2 axis (sizes).
        log2_x: bool,
    },
}

/// A printed table and the measurements behind its rows.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Table {
    /// Short name, unique within its section (file names of charts, `compare` keys).
    pub id: String,
    /// The caption printed above the table.
    pub title: String,
    /// How the table is charted.
    pub chart: ChartKind,
    /// Column headers.
    pub header: Vec<String>,
    /// Cells as displayed.
    pub rows: Vec<Vec<String>>,
    /// The measurements, each pointing at its row.
    pub measurements: Vec<Measurement>,
    /// The [`Measurement::extra`] figure the chart plots instead of bandwidth or time (cycles
    /// per access, for an experiment timed by `clock64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_value: Option<String>,
    /// Horizontal lines a sweep chart draws across the plot (ceilings: copy, read-only,
    /// theoretical), each `(label, value)` in the chart's unit (GB/s for bandwidth charts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_lines: Vec<(String, f64)>,
}

impl Table {
    /// An empty table.
    pub fn new(
        id: impl Into<String>,
        title: impl Into<String>,
        chart: ChartKind,
        header: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            chart,
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            measurements: Vec::new(),
            chart_value: None,
            reference_lines: Vec::new(),
        }
    }

    /// Draws a labelled horizontal line at `value` (in the chart's unit) across a sweep chart.
    pub fn reference_line(mut self, label: impl Into<String>, value: f64) -> Self {
        self.reference_lines.push((label.into(), value));
        self
    }

    /// Charts `extra[name]` of each measurement instead of its bandwidth or time.
    pub fn chart_extra(mut self, name: impl Into<String>) -> Self {
        self.chart_value = Some(name.into());
        self
    }

    /// A row with no measurement behind it (a reference line, a count).
    pub fn row(&mut self, cells: impl IntoIterator<Item = impl Into<String>>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// A row and the measurement it displays.
    pub fn measured_row(
        &mut self,
        cells: impl IntoIterator<Item = impl Into<String>>,
        mut measurement: Measurement,
    ) {
        measurement.row = self.rows.len();
        self.row(cells);
        self.measurements.push(measurement);
    }

    /// Adds a column: `cell(row)` for each row, by row index.
    pub fn add_column(&mut self, header: &str, mut cell: impl FnMut(usize) -> String) {
        self.header.push(header.into());
        for (i, row) in self.rows.iter_mut().enumerate() {
            row.push(cell(i));
        }
    }

    /// The table as markdown (a pipe table, columns aligned).
    pub fn markdown(&self) -> String {
        let mut t = comfy_table::Table::new();
        t.load_preset(ASCII_MARKDOWN).set_header(&self.header);
        for row in &self.rows {
            t.add_row(row);
        }
        t.to_string()
    }

    /// True when no measurement failed verification.
    pub fn passed(&self) -> bool {
        self.measurements.iter().all(|m| m.passed)
    }
}

/// One timed and verified kernel (or copy) at one configuration.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Measurement {
    /// Row label: the variant (kernel, layout, transfer kind).
    pub variant: String,
    /// The kernel launched, where one is (the key `run.sh profile` joins on).
    pub kernel: Option<String>,
    /// Line of a sweep this point belongs to.
    pub series: Option<String>,
    /// Position in a sweep (stride, offset, bytes, block size), or the problem size.
    pub x: Option<f64>,
    /// Median time of the timed repetitions, ms.
    pub median_ms: f64,
    /// Fastest repetition, ms.
    pub min_ms: f64,
    /// Slowest repetition, ms.
    pub max_ms: f64,
    /// Timed repetitions.
    pub reps: usize,
    /// Bytes the operation must move through DRAM (or the bus) per repetition.
    pub bytes: Option<u64>,
    /// `bytes` over the median time, GB/s.
    pub gbps: Option<f64>,
    /// `gbps` as a percentage of the section's memcpy ceiling.
    pub percent_of_memcpy: Option<f64>,
    /// Grid dimensions `[x, y, z]`.
    pub grid: Option<[u32; 3]>,
    /// Block dimensions `[x, y, z]`.
    pub block: Option<[u32; 3]>,
    /// Largest error against the CPU reference (absolute, relative, or against a bound: the
    /// table's header says which).
    pub max_error: Option<f64>,
    /// Whether the output matched the CPU reference.
    pub passed: bool,
    /// Index of the table row that displays this measurement.
    pub row: usize,
    /// Further per-measurement figures (profiler metrics, occupancy), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, f64>,
}

impl Measurement {
    /// A passing measurement of `variant` with `timing`'s statistics; the builder methods add
    /// the rest.
    pub fn new(variant: impl Into<String>, timing: &Timing) -> Self {
        Self {
            variant: variant.into(),
            median_ms: timing.median_ms,
            min_ms: timing.min_ms,
            max_ms: timing.max_ms,
            reps: timing.reps,
            passed: true,
            ..Self::default()
        }
    }

    /// Names the kernel launched.
    pub fn kernel(mut self, name: impl Into<String>) -> Self {
        self.kernel = Some(name.into());
        self
    }

    /// Bytes moved per repetition; sets the bandwidth, and its share of `ceiling` if given.
    pub fn bytes(mut self, bytes: u64, ceiling: Option<&Ceiling>) -> Self {
        let gbps = crate::engine::timing::gbps(bytes, self.median_ms);
        self.bytes = Some(bytes);
        self.gbps = Some(gbps);
        self.percent_of_memcpy = ceiling.map(|c| c.percent(gbps));
        self
    }

    /// The launch configuration.
    pub fn launch(mut self, cfg: &LaunchConfig) -> Self {
        let (gx, gy, gz) = cfg.grid_dim;
        let (bx, by, bz) = cfg.block_dim;
        self.grid = Some([gx, gy, gz]);
        self.block = Some([bx, by, bz]);
        self
    }

    /// The largest error against the reference.
    pub fn error(mut self, max_error: f64) -> Self {
        self.max_error = Some(max_error);
        self
    }

    /// The verdict of the check against the reference.
    pub fn passed(mut self, passed: bool) -> Self {
        self.passed = passed;
        self
    }

    /// Position in a sweep.
    pub fn at(mut self, x: f64) -> Self {
        self.x = Some(x);
        self
    }

    /// The sweep line this point belongs to.
    pub fn series(mut self, series: impl Into<String>) -> Self {
        self.series = Some(series.into());
        self
    }

    /// A further named figure.
    pub fn extra(mut self, name: impl Into<String>, value: f64) -> Self {
        self.extra.insert(name.into(), value);
        self
    }

    /// The key `compare` matches measurements of two runs by: variant, series and x.
    pub fn key(&self) -> String {
        let mut key = self.variant.clone();
        if let Some(s) = &self.series {
            let _ = write!(key, " [{s}]");
        }
        if let Some(x) = self.x {
            let _ = write!(key, " @ {x}");
        }
        key
    }
}

/// A peer library's timing of an operation one of our measurements also does (`run.sh peers`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Peer {
    /// The pattern it belongs beside, `"reduce"`.
    pub pattern: String,
    /// Table id of our measurement of the same operation, sizes and types.
    pub table: String,
    /// Its [`Measurement::key`].
    pub variant: String,
    /// The call timed, `"torch.sum"`.
    pub operation: String,
    /// Library and version, `"torch 2.9.0"`.
    pub library: String,
    /// Median time, ms.
    pub median_ms: f64,
    /// Timed repetitions.
    pub reps: usize,
}

/// The summary line of one section: its headline measurement and verdict.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// The pattern.
    pub pattern: String,
    /// Variant of the headline measurement.
    pub best_variant: Option<String>,
    /// Its median time, ms.
    pub median_ms: Option<f64>,
    /// Its bandwidth.
    pub gbps: Option<f64>,
    /// Its share of the memcpy ceiling.
    pub percent_of_memcpy: Option<f64>,
    /// `PASS`, `FAIL (n)` or `ERROR: ...`.
    pub verdict: String,
    /// The peer timing of the same operation, if there is one.
    pub peer: Option<Peer>,
}

impl Section {
    /// An empty section for `pattern`.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            pattern: pattern.into(),
            ..Self::default()
        }
    }

    /// The section's tables.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            Block::Line(_) => None,
        })
    }

    /// Every measurement, with the id of its table.
    pub fn measurements(&self) -> impl Iterator<Item = (&Table, &Measurement)> {
        self.tables()
            .flat_map(|t| t.measurements.iter().map(move |m| (t, m)))
    }

    /// Measurements that failed verification.
    pub fn failures(&self) -> usize {
        self.measurements().filter(|(_, m)| !m.passed).count()
    }

    /// The measurement the summary reports: the one named by [`Section::headline`], else the
    /// passing one with the highest bandwidth, else none.
    pub fn best(&self) -> Option<(&Table, &Measurement)> {
        if let Some((table, variant)) = &self.headline {
            return self
                .measurements()
                .find(|(t, m)| &t.id == table && &m.key() == variant);
        }
        self.measurements()
            .filter(|(_, m)| m.passed && m.gbps.is_some())
            .max_by(|a, b| a.1.gbps.unwrap_or(0.0).total_cmp(&b.1.gbps.unwrap_or(0.0)))
    }

    /// `PASS`, `FAIL (n of m)` or `ERROR: ...`.
    pub fn verdict(&self) -> String {
        if let Some(e) = &self.error {
            return format!("ERROR: {e}");
        }
        match self.failures() {
            0 => "PASS".into(),
            n => format!("FAIL ({n} of {})", self.measurements().count()),
        }
    }
}

impl Report {
    /// One summary line per section, with the matching peer timing.
    pub fn summary(&self) -> Vec<Summary> {
        self.sections
            .iter()
            .map(|s| {
                let best = s.best();
                let peer = best.and_then(|(t, m)| {
                    self.peers
                        .iter()
                        .find(|p| p.pattern == s.pattern && p.table == t.id && p.variant == m.key())
                        .cloned()
                });
                Summary {
                    pattern: s.pattern.clone(),
                    best_variant: best.map(|(_, m)| m.key()),
                    median_ms: best.map(|(_, m)| m.median_ms),
                    gbps: best.and_then(|(_, m)| m.gbps),
                    percent_of_memcpy: best.and_then(|(_, m)| m.percent_of_memcpy),
                    verdict: s.verdict(),
                    peer,
                }
            })
            .collect()
    }

    /// True when every section passed.
    pub fn passed(&self) -> bool {
        self.sections
            .iter()
            .all(|s| s.error.is_none() && s.failures() == 0)
    }

    /// The summary as a table: pattern, best variant, GB/s, % of memcpy, % of the theoretical
    /// DRAM bandwidth from the clocks, verdict, and the peer columns when any peer timing is
    /// present.
    pub fn summary_table(&self) -> Table {
        let with_peers = !self.peers.is_empty();
        let mut header = vec![
            "pattern",
            "best variant",
            "median ms",
            "GB/s",
            "% of memcpy",
            "% of theoretical",
            "verdict",
        ];
        if with_peers {
            header.extend(["peer", "peer ms", "speedup vs peer"]);
        }
        let mut table = Table::new("summary", "summary", ChartKind::None, header);
        let opt = |v: Option<f64>, f: fn(f64) -> String| v.map(f).unwrap_or_else(|| "-".into());
        for s in self.summary() {
            let mut row = vec![
                s.pattern.clone(),
                s.best_variant.clone().unwrap_or_else(|| "-".into()),
                opt(s.median_ms, |v| format!("{v:.4}")),
                opt(s.gbps, |v| format!("{v:.1}")),
                opt(s.percent_of_memcpy, |v| format!("{v:.1}%")),
                match (s.gbps, s.percent_of_memcpy) {
                    // Device-memory bandwidths only (rows with a memcpy share).
                    (Some(g), Some(_)) if self.device.theoretical_gbps > 0.0 => {
                        format!("{:.1}%", 100.0 * g / self.device.theoretical_gbps)
                    }
                    _ => "-".into(),
                },
                s.verdict.clone(),
            ];
            if with_peers {
                match (&s.peer, s.median_ms) {
                    (Some(p), Some(ours)) => row.extend([
                        format!("{} ({})", p.operation, p.library),
                        format!("{:.4}", p.median_ms),
                        format!("{:.2}x", p.median_ms / ours),
                    ]),
                    _ => row.extend(["-".into(), "-".into(), "-".into()]),
                }
            }
            table.row(row);
        }
        table
    }

    /// Each peer timing beside our measurement of the same operation.
    pub fn peers_table(&self) -> Table {
        let mut table = Table::new(
            "peers",
            "peers",
            ChartKind::None,
            [
                "pattern",
                "ours",
                "our ms",
                "peer",
                "peer ms",
                "speedup vs peer",
            ],
        );
        for p in &self.peers {
            let ours = self
                .sections
                .iter()
                .filter(|s| s.pattern == p.pattern)
                .flat_map(|s| s.measurements())
                .find(|(t, m)| t.id == p.table && m.key() == p.variant)
                .map(|(_, m)| m.median_ms);
            table.row([
                p.pattern.clone(),
                p.variant.clone(),
                ours.map_or_else(|| "(not run)".into(), |v| format!("{v:.4}")),
                format!("{} ({})", p.operation, p.library),
                format!("{:.4}", p.median_ms),
                ours.map_or_else(|| "-".into(), |v| format!("{:.2}x", p.median_ms / v)),
            ]);
        }
        table
    }

    /// The report as markdown: device, summary, then each section's lines and tables in order.
    pub fn markdown(&self) -> String {
        let d = &self.device;
        let mut md = String::new();
        let _ = writeln!(md, "# GPU parallel patterns in Rust: benchmark report\n");
        let _ = writeln!(md, "- date: {}", self.date);
        let _ = writeln!(md, "- command: `{}`", self.command);
        let _ = writeln!(
            md,
            "- device {}: {} (compute capability {}, {} SMs, {} MiB, L2 {} MiB), PTX sm_{}",
            d.index,
            d.name,
            d.compute_capability,
            d.sm_count,
            d.memory_bytes >> 20,
            d.l2_bytes >> 20,
            d.ptx_arch
        );
        let _ = writeln!(
            md,
            "- driver: CUDA {}{}",
            d.cuda_driver_version,
            d.kernel_driver
                .as_deref()
                .map(|k| format!(", {k}"))
                .unwrap_or_default()
        );
        let _ = writeln!(
            md,
            "- clocks: SM {} MHz, memory {} MHz on a {}-bit bus ({:.0} GB/s theoretical)\n",
            d.sm_clock_mhz, d.memory_clock_mhz, d.memory_bus_bits, d.theoretical_gbps
        );
        if self.sections.len() > 1 || !self.peers.is_empty() {
            let _ = writeln!(md, "## Summary\n\n{}\n", self.summary_table().markdown());
        }
        if !self.peers.is_empty() {
            let _ = writeln!(
                md,
                "## Peers\n\nThe same operations, sizes and types through the libraries users would call instead (`run.sh peers`), timed the same way; speedup = peer median / our median.\n\n{}\n",
                self.peers_table().markdown()
            );
        }
        for s in &self.sections {
            let _ = writeln!(md, "## {}\n", s.pattern);
            for b in &s.blocks {
                match b {
                    Block::Line(l) => {
                        let _ = writeln!(md, "{l}\n");
                    }
                    Block::Table(t) => {
                        if !t.title.is_empty() {
                            let _ = writeln!(md, "{}\n", t.title);
                        }
                        let _ = writeln!(md, "{}\n", t.markdown());
                    }
                }
            }
            if let Some(e) = &s.error {
                let _ = writeln!(md, "**error:** {e}\n");
            }
        }
        md
    }

    /// Every measurement as CSV, one row each, with its pattern and table.
    ///
    /// # Errors
    /// Only if the CSV writer fails, which writing to memory does not.
    pub fn csv(&self) -> Result<String, csv::Error> {
        let mut w = csv::Writer::from_writer(Vec::new());
        for s in &self.sections {
            for (t, m) in s.measurements() {
                w.serialize(CsvRow::new(&s.pattern, &t.id, m))?;
            }
        }
        let bytes = w.into_inner().map_err(|e| e.into_error())?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// A measurement flattened for CSV.
#[derive(Serialize)]
struct CsvRow<'a> {
    pattern: &'a str,
    table: &'a str,
    variant: &'a str,
    kernel: Option<&'a str>,
    series: Option<&'a str>,
    x: Option<f64>,
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
    reps: usize,
    bytes: Option<u64>,
    gbps: Option<f64>,
    percent_of_memcpy: Option<f64>,
    grid: Option<String>,
    block: Option<String>,
    max_error: Option<f64>,
    passed: bool,
}

impl<'a> CsvRow<'a> {
    fn new(pattern: &'a str, table: &'a str, m: &'a Measurement) -> Self {
        let dims = |d: Option<[u32; 3]>| d.map(|[x, y, z]| format!("{x}x{y}x{z}"));
        Self {
            pattern,
            table,
            variant: &m.variant,
            kernel: m.kernel.as_deref(),
            series: m.series.as_deref(),
            x: m.x,
            median_ms: m.median_ms,
            min_ms: m.min_ms,
            max_ms: m.max_ms,
            reps: m.reps,
            bytes: m.bytes,
            gbps: m.gbps,
            percent_of_memcpy: m.percent_of_memcpy,
            grid: dims(m.grid),
            block: dims(m.block),
            max_error: m.max_error,
            passed: m.passed,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn timing(ms: f64) -> Timing {
        Timing {
            median_ms: ms,
            min_ms: ms * 0.9,
            max_ms: ms * 1.2,
            reps: 20,
        }
    }

    pub(crate) fn sample() -> Report {
        let mut t = Table::new(
            "kernels",
            "two kernels",
            ChartKind::Bars,
            ["variant", "GB/s"],
        );
        t.measured_row(
            ["slow", "100.0"],
            Measurement::new("slow", &timing(2.0)).bytes(200_000_000, None),
        );
        t.measured_row(
            ["fast", "200.0"],
            Measurement::new("fast", &timing(1.0))
                .bytes(200_000_000, None)
                .kernel("fast_kernel"),
        );
        let mut s = Section::new("copy");
        s.blocks.push(Block::Line("a caption".into()));
        s.blocks.push(Block::Table(t));
        Report {
            schema_version: SCHEMA_VERSION,
            sections: vec![s],
            ..Report::default()
        }
    }

    #[test]
    fn best_is_fastest_passing_unless_named() {
        let mut r = sample();
        assert_eq!(r.sections[0].best().unwrap().1.variant, "fast");
        r.sections[0].headline = Some(("kernels".into(), "slow".into()));
        assert_eq!(r.sections[0].best().unwrap().1.variant, "slow");
        r.sections[0].headline = None;
        if let Block::Table(t) = &mut r.sections[0].blocks[1] {
            t.measurements[1].passed = false;
        }
        assert_eq!(r.sections[0].best().unwrap().1.variant, "slow");
        assert_eq!(r.sections[0].verdict(), "FAIL (1 of 2)");
        assert!(!r.passed());
    }

    #[test]
    fn json_round_trip() {
        let r = sample();
        let json = serde_json::to_string(&r).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn csv_has_one_row_per_measurement() {
        let csv = sample().csv().unwrap();
        let lines: Vec<_> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("pattern,table,variant,kernel"));
        assert!(lines[2].starts_with("copy,kernels,fast,fast_kernel"));
    }

    #[test]
    fn markdown_keeps_order_and_summary_peers() {
        let mut r = sample();
        if let Block::Table(t) = &mut r.sections[0].blocks[1] {
            t.measurements[1].x = Some(1024.0);
        }
        r.peers.push(Peer {
            pattern: "copy".into(),
            table: "kernels".into(),
            variant: "fast @ 1024".into(),
            operation: "x.clone()".into(),
            library: "torch".into(),
            median_ms: 1.5,
            reps: 20,
        });
        let md = r.markdown();
        let section = md.find("## copy").unwrap();
        let caption = md.find("a caption").unwrap();
        let table = md.rfind("| fast").unwrap();
        assert!(section < caption);
        assert!(caption < table);
        assert!(md.contains("1.50x"), "{md}");
        assert_eq!(r.summary()[0].peer.as_ref().map(|p| p.median_ms), Some(1.5));
    }
}
