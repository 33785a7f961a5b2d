//! What a sweep prints and writes: the ceilings, a table per pattern (two for the
//! convolutions: by size, by mask width), the summary against the peers, and with `--out DIR`
//! `sweep.json`, `sweep.csv`, `sweep.md` and a chart per table (GB/s against size on a log2
//! axis, ours and each peer as lines, the three ceilings as labelled dashed lines).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{Case, CaseError, Ceilings, Row, SweepReport, SweepSpec};
use crate::engine::report::{ChartKind, Measurement, Section, Table, chart};
use crate::engine::timing::Timing;

/// The ceilings, as printed at the start of a sweep and in `sweep.md`.
/// `"fma_rate (16 independent FMA chains a thread, nothing else): 31.20 TFMA/s, 93.3% of the
/// FP32 peak"`, when the run measured it.
fn measured_fma_text(c: &Ceilings) -> Option<String> {
    (c.fp32_measured_fma_per_second > 0.0 && c.fp32_peak_fma_per_second > 0.0).then(|| {
        format!(
            "fma_rate (16 independent FMA chains a thread, 8 blocks of 256 per SM, nothing \
             else): {:.2} TFMA/s, {:.1}% of the FP32 peak",
            c.fp32_measured_fma_per_second / 1e12,
            100.0 * c.fp32_measured_fma_per_second / c.fp32_peak_fma_per_second
        )
    })
}

pub(super) fn ceilings_text(c: &Ceilings) -> String {
    let tried: Vec<String> = c
        .read
        .tried
        .iter()
        .map(|(shape, launch, ms, gbps)| format!("{shape} ({launch}): {ms:.3} ms, {gbps:.1} GB/s"))
        .collect();
    format!(
        "ceilings of this run:\n\
         - copy: device-to-device memcpy of {} MiB, median {:.3} ms, {:.1} GB/s (bytes read + written)\n\
         - read-only: read stream of {} MiB, median {:.3} ms, {:.1} GB/s (bytes read); fastest of {} shapes: {} ({})\n\
         {}\n\
         - theoretical: {:.1} GB/s (2 x memory clock x bus width / 8)\n\
         - FP32 peak: {:.2} TFMA/s (SMs x FP32 lanes x SM clock; the convolutions' FMA floor){}{}",
        (c.copy.bytes / 2) >> 20,
        c.copy.median_ms,
        c.copy.gbps,
        c.read.bytes >> 20,
        c.read.median_ms,
        c.read.gbps,
        c.read.tried.len(),
        c.read.shape,
        c.read.launch,
        tried
            .iter()
            .map(|t| format!("    - {t}"))
            .collect::<Vec<_>>()
            .join("\n"),
        c.theoretical_gbps,
        c.fp32_peak_fma_per_second / 1e12,
        measured_fma_text(c)
            .map(|m| format!("\n- FP32 measured: {m}"))
            .unwrap_or_default(),
        gemm_text(c)
            .map(|g| format!("\n- FP32 matrix product (peer): {g}"))
            .unwrap_or_default()
    )
}

/// cuBLAS SGEMM's rate from the peers file, as `"<operation>: <ms> ms, <rate> TFMA/s, <p>% of
/// the FP32 peak"`.
fn gemm_text(c: &Ceilings) -> Option<String> {
    let g = c.fp32_gemm.as_ref()?;
    let rate = g.fma_per_second();
    Some(format!(
        "{}: median {:.3} ms, {:.2} TFMA/s, {:.1}% of the FP32 peak",
        g.operation,
        g.median_ms,
        rate / 1e12,
        100.0 * rate / c.fp32_peak_fma_per_second
    ))
}

/// The header cell of the speed ratio, saying which way it reads.
const SPEED: &str = "speed vs peer (peer ms / ours ms; >= 1: ours faster)";

fn pct(x: f64) -> String {
    format!("{x:.1}%")
}

/// Whether `case` of `pattern` belongs in a table: for a convolution `by_width` picks the
/// mask-width sweep (at its one shape), else the size sweep (at the default width).
fn in_view(pattern: &SweepSpec, case: &Case, by_width: bool) -> bool {
    if case.pattern != pattern.name {
        return false;
    }
    let Some(width) = pattern.default_width else {
        return !by_width;
    };
    if by_width {
        // The width sweep's shape: the shape of the last case (the widths come last).
        pattern.cases().last().map(|c| &c.shape) == Some(&case.shape)
    } else {
        case.width == Some(width)
    }
}

/// The rows of `pattern` a table shows ([`in_view`]), by width or by size for a convolution,
/// in the order run for the others.
fn table_rows<'r>(pattern: &SweepSpec, rows: &'r [Row], by_width: bool) -> Vec<&'r Row> {
    let mut picked: Vec<&Row> = rows
        .iter()
        .filter(|r| in_view(pattern, &r.case, by_width))
        .collect();
    if pattern.default_width.is_some() {
        if by_width {
            picked.sort_by_key(|r| r.case.width);
        } else {
            picked.sort_by_key(|r| r.elements);
        }
    }
    picked
}

/// The tables of `pattern` (one; two for a convolution), from the rows measured so far; the
/// cases that ended in an error close their table.
pub(super) fn pattern_tables(
    pattern: &SweepSpec,
    rows: &[Row],
    errors: &[CaseError],
    c: &Ceilings,
) -> Vec<Table> {
    let views: &[bool] = match (pattern.default_width, pattern.size_table) {
        (None, _) => &[false],
        (Some(_), true) => &[false, true],
        (Some(_), false) => &[true],
    };
    views
        .iter()
        .map(|&by_width| {
            let errors: Vec<&CaseError> = errors
                .iter()
                .filter(|e| in_view(pattern, &e.case, by_width))
                .collect();
            table(
                pattern,
                &table_rows(pattern, rows, by_width),
                &errors,
                c,
                by_width,
            )
        })
        .filter(|t| !t.rows.is_empty())
        .collect()
}

fn table(
    pattern: &SweepSpec,
    rows: &[&Row],
    errors: &[&CaseError],
    c: &Ceilings,
    by_width: bool,
) -> Table {
    let conv = pattern.default_width.is_some();
    let (id, what) = match (conv, by_width) {
        (true, true) => (format!("{}-widths", pattern.name), pattern.width_view),
        (true, false) => (pattern.name.to_string(), pattern.size_view),
        _ => (pattern.name.to_string(), "by size"),
    };
    let bytes = pattern.bytes;
    let reps = rows.first().map_or(0, |r| r.reps);
    let mut title = format!(
        "{} {what}: {}, median of {reps} reps, L2 flushed before each; GB/s = {bytes} / median; \
         % of copy {:.1}, read-only {:.1}, theoretical {:.1} GB/s; {SPEED}, against the fastest \
         peer at that size",
        pattern.name, pattern.entry_point, c.copy.gbps, c.read.gbps, c.theoretical_gbps
    );
    let transpose = pattern.same_size_copy;
    if transpose {
        title.push_str(
            "; % of same-size copy = a device-to-device memcpy of the same bytes, timed the same way, \
             over ours",
        );
    }
    if conv {
        title.push_str(&format!(
            "; floor = max(bytes / copy GB/s, {} x outputs FMAs / (SMs x FP32 lanes x SM clock)), \
             ours/floor 1.00x at the floor; % of FP32 peak = our multiply-add rate over the peak \
             {:.2} TFMA/s",
            pattern.fmas_per_output,
            c.fp32_peak_fma_per_second / 1e12
        ));
        if let Some(g) = gemm_text(c) {
            title.push_str(&format!(" (peer in this run: {g})"));
        }
    }
    let mut header = vec![
        "size",
        "kernel",
        "grid x block",
        "ours ms",
        "GB/s",
        "% of copy",
    ];
    if transpose {
        header.push("% of same-size copy");
    }
    if pattern.reads_only {
        header.push("% of read-only");
    }
    header.push("% of theoretical");
    if conv {
        header.extend(["floor ms", "bound", "ours/floor", "% of FP32 peak"]);
    }
    header.extend(["peer", "peer ms", SPEED, "verdict"]);
    let mut t = Table::new(id, title, ChartKind::None, header);
    for r in rows {
        let mut cells = vec![
            r.case.label(),
            r.kernel.clone(),
            launch(r),
            format!("{:.4}", r.median_ms),
            format!("{:.1}", r.gbps),
            pct(r.percent_of_copy),
        ];
        if transpose {
            cells.push(
                r.same_size_copy
                    .as_ref()
                    .map_or("-".into(), |c| pct(c.percent)),
            );
        }
        if pattern.reads_only {
            cells.push(pct(r.percent_of_read));
        }
        cells.push(pct(r.percent_of_theoretical));
        if conv {
            match &r.floor {
                Some(f) => cells.extend([
                    format!("{:.4}", f.floor_ms),
                    f.bound.clone(),
                    format!("{:.2}x", f.ratio),
                    pct(100.0 * f.fma_ms / r.median_ms),
                ]),
                None => cells.extend(["-".into(), "-".into(), "-".into(), "-".into()]),
            }
        }
        match r.best_peer() {
            Some(p) => cells.extend([
                p.peer.clone(),
                format!("{:.4}", p.median_ms),
                format!("{:.2}", p.median_ms / r.median_ms),
            ]),
            None => cells.extend(["-".into(), "-".into(), "-".into()]),
        }
        cells.push(r.verdict.clone());
        t.row(cells);
    }
    let width = t.header.len();
    for e in errors {
        let mut cells = vec![e.case.label(), e.kernel.clone()];
        cells.resize(width - 1, "-".into());
        cells.push(format!("ERROR: {}", e.error));
        t.row(cells);
    }
    t
}

/// `"1056 x 256"`, `"(256,256) x (32,8)"`.
fn launch(r: &Row) -> String {
    crate::engine::harness::describe(&cudarc::driver::LaunchConfig {
        grid_dim: (r.grid[0], r.grid[1], r.grid[2]),
        block_dim: (r.block[0], r.block[1], r.block[2]),
        shared_mem_bytes: 0,
    })
}

/// Per pattern: cases measured, skipped and ended in an error, how many had a peer, the worst
/// and best speed against the fastest peer (and at which size), and the verdict.
pub(super) fn summary_table(report: &SweepReport, specs: &[&SweepSpec]) -> Table {
    let mut t = Table::new(
        "summary",
        format!("summary: {SPEED}, over the sizes with a peer timing"),
        ChartKind::None,
        [
            "pattern",
            "cases",
            "skipped",
            "with a peer",
            "worst speed vs peer",
            "at",
            "best speed vs peer",
            "at",
            "verdict",
        ],
    );
    for &p in specs {
        let mine: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| r.case.pattern == p.name)
            .collect();
        let skips = report
            .skipped
            .iter()
            .filter(|s| s.case.pattern == p.name)
            .count();
        let errors = report
            .errors
            .iter()
            .filter(|e| e.case.pattern == p.name)
            .count();
        if mine.is_empty() && skips == 0 && errors == 0 {
            continue;
        }
        let ratios: Vec<(f64, String)> = mine
            .iter()
            .filter_map(|r| r.speed_vs_peer().map(|s| (s, r.case.label())))
            .collect();
        let worst = ratios.iter().min_by(|a, b| a.0.total_cmp(&b.0));
        let best = ratios.iter().max_by(|a, b| a.0.total_cmp(&b.0));
        let cell = |x: Option<&(f64, String)>| match x {
            Some((s, at)) => (format!("{s:.2}"), at.clone()),
            None => ("-".into(), "-".into()),
        };
        let (worst, worst_at) = cell(worst);
        let (best, best_at) = cell(best);
        let failed = mine.iter().filter(|r| !r.passed).count();
        let mut verdict = Vec::new();
        if failed > 0 {
            verdict.push(format!("FAIL ({failed})"));
        }
        if errors > 0 {
            verdict.push(format!("ERROR ({errors})"));
        }
        t.row([
            p.name.to_string(),
            (mine.len() + errors).to_string(),
            skips.to_string(),
            ratios.len().to_string(),
            worst,
            worst_at,
            best,
            best_at,
            if verdict.is_empty() {
                "PASS".into()
            } else {
                verdict.join(", ")
            },
        ]);
    }
    t
}

/// One CSV line per row: the case, our launch and timing, the shares of the ceilings, the
/// floor, the fastest peer and the speed against it, every peer, the verdict.
pub(super) fn csv(rows: &[Row]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "pattern",
        "shape",
        "width",
        "elements",
        "kernel",
        "grid",
        "block",
        "median_ms",
        "min_ms",
        "max_ms",
        "reps",
        "bytes",
        "gbps",
        "percent_of_copy",
        "percent_of_read",
        "percent_of_theoretical",
        "percent_of_same_size_copy",
        "floor_ms",
        "floor_bound",
        "ratio_to_floor",
        "peer",
        "peer_ms",
        "speed_vs_peer",
        "all_peers",
        "max_error",
        "verdict",
    ])?;
    let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for r in rows {
        let dims = |d: [u32; 3]| format!("{}x{}x{}", d[0], d[1], d[2]);
        let peers: Vec<String> = r
            .peers
            .iter()
            .map(|p| format!("{}={}", p.peer, p.median_ms))
            .collect();
        w.write_record([
            r.case.pattern.clone(),
            r.case
                .shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("x"),
            r.case.width.map(|w| w.to_string()).unwrap_or_default(),
            r.elements.to_string(),
            r.kernel.clone(),
            dims(r.grid),
            dims(r.block),
            r.median_ms.to_string(),
            r.min_ms.to_string(),
            r.max_ms.to_string(),
            r.reps.to_string(),
            r.bytes.to_string(),
            r.gbps.to_string(),
            r.percent_of_copy.to_string(),
            r.percent_of_read.to_string(),
            r.percent_of_theoretical.to_string(),
            opt(r.same_size_copy.as_ref().map(|c| c.percent)),
            opt(r.floor.as_ref().map(|f| f.floor_ms)),
            r.floor
                .as_ref()
                .map(|f| f.bound.clone())
                .unwrap_or_default(),
            opt(r.floor.as_ref().map(|f| f.ratio)),
            r.best_peer().map(|p| p.peer.clone()).unwrap_or_default(),
            opt(r.best_peer().map(|p| p.median_ms)),
            opt(r.speed_vs_peer()),
            peers.join(";"),
            opt(r.max_error),
            r.verdict.clone(),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The whole sweep as markdown: device, ceilings, method, every table, the skipped cases and
/// the summary.
pub(super) fn markdown(report: &SweepReport, specs: &[&SweepSpec]) -> String {
    let mut md = format!(
        "# demo sweep\n\n{} (compute capability {}, {} SMs), {}\n\n`{}`\n\n{}\n\nmethod: {}\n",
        report.device.name,
        report.device.compute_capability,
        report.device.sm_count,
        report.date,
        report.command,
        ceilings_text(&report.ceilings),
        report.method
    );
    for &p in specs {
        for t in pattern_tables(p, &report.rows, &report.errors, &report.ceilings) {
            md.push_str(&format!(
                "\n## {}\n\n{}\n\n{}\n",
                t.id,
                t.title,
                t.markdown()
            ));
        }
    }
    if !report.skipped.is_empty() {
        md.push_str("\n## skipped\n\n");
        for s in &report.skipped {
            md.push_str(&format!(
                "- {} {}: {}\n",
                s.case.pattern,
                s.case.label(),
                s.reason
            ));
        }
    }
    let summary = summary_table(report, specs);
    md.push_str(&format!(
        "\n## summary\n\n{}\n\n{}\n",
        summary.title,
        summary.markdown()
    ));
    md
}

/// The chart tables: per pattern GB/s against elements (log2), ours and each peer as lines
/// (a sweep with [`SweepSpec::series`], the transpose: one line per kind of shape), the ceilings as reference lines;
/// for a convolution also GB/s against the mask width.
pub(super) fn chart_section(report: &SweepReport, specs: &[&SweepSpec]) -> Section {
    let c = &report.ceilings;
    let mut section = Section::new("sweep");
    for &p in specs {
        for by_width in [false, true] {
            if (by_width && p.default_width.is_none())
                || (!by_width && p.default_width.is_some() && !p.size_table)
            {
                continue;
            }
            let rows = table_rows(p, &report.rows, by_width);
            if rows.is_empty() {
                continue;
            }
            let (id, kind) = if by_width {
                (
                    format!("{}-widths", p.name),
                    ChartKind::Sweep {
                        x_label: "mask width (taps per dimension)".into(),
                        log2_x: false,
                    },
                )
            } else {
                (
                    p.name.to_string(),
                    ChartKind::Sweep {
                        x_label: "elements".into(),
                        log2_x: true,
                    },
                )
            };
            let mut t = Table::new(id, "", kind, ["series", "x", "GB/s"])
                .reference_line("copy ceiling, GB/s", c.copy.gbps)
                .reference_line("read-only ceiling, GB/s", c.read.gbps)
                .reference_line("theoretical, GB/s", c.theoretical_gbps);
            for r in rows {
                let x = if by_width {
                    r.case.width.unwrap_or(0) as f64
                } else {
                    r.elements as f64
                };
                let suffix = (p.series)(&r.case.shape);
                let ours = Timing {
                    median_ms: r.median_ms,
                    min_ms: r.min_ms,
                    max_ms: r.max_ms,
                    reps: r.reps,
                };
                let mut point = |series: String, timing: &Timing, passed: bool| {
                    let m = Measurement::new(r.case.label(), timing)
                        .series(series.clone())
                        .at(x)
                        .bytes(r.bytes, None)
                        .passed(passed);
                    let gbps = m.gbps.unwrap_or_default();
                    t.measured_row([series, x.to_string(), format!("{gbps:.1}")], m);
                };
                point(format!("ours{suffix}"), &ours, r.passed);
                for peer in &r.peers {
                    let timing = Timing {
                        median_ms: peer.median_ms,
                        min_ms: peer.median_ms,
                        max_ms: peer.median_ms,
                        reps: peer.reps,
                    };
                    point(format!("{}{suffix}", peer.peer), &timing, true);
                }
            }
            section.blocks.push(crate::engine::report::Block::Table(t));
        }
    }
    section
}

/// Writes `sweep.json`, `sweep.csv`, `sweep.md` and `charts/sweep-<table>.{svg,png}` into
/// `dir`, each whole or not at all; returns the number of files.
pub(super) fn write_files(dir: &Path, report: &SweepReport, specs: &[&SweepSpec]) -> Result<usize> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        (
            dir.join("sweep.json"),
            serde_json::to_string_pretty(report)?.into_bytes(),
        ),
        (dir.join("sweep.csv"), csv(&report.rows)?.into_bytes()),
        (dir.join("sweep.md"), markdown(report, specs).into_bytes()),
    ];
    for c in chart::charts(&chart_section(report, specs))? {
        let stem = dir.join("charts").join(&c.stem);
        files.push((stem.with_extension("svg"), c.svg.into_bytes()));
        files.push((stem.with_extension("png"), c.png));
    }
    crate::engine::report::write_all_atomically(
        files.iter().map(|(p, b)| (p.as_path(), b.as_slice())),
    )?;
    Ok(files.len())
}

#[cfg(test)]
mod tests {
    use super::super::{FloorRecord, GemmTiming, PeerTiming, ReadRecord, SameSizeCopy, Skipped};
    use super::*;
    use crate::engine::report::{CeilingRecord, DeviceInfo};

    /// Sweeps of the four kinds the tables tell apart, named as the patterns' (the engine's
    /// tests name no pattern): a read-only one, a convolution, a transpose timed beside a copy
    /// of its bytes, and a plain one.
    fn spec(name: &str) -> &'static SweepSpec {
        const fn plain(name: &'static str) -> SweepSpec {
            SweepSpec::new(
                name,
                "op",
                "8 bytes per element",
                |_| Vec::new(),
                |_, _| Ok(()),
            )
        }
        static REDUCE: SweepSpec = plain("reduce-f32").reads_only();
        static CONV: SweepSpec = SweepSpec::new(
            "conv1d",
            "op",
            "8 bytes per element",
            |s| {
                let sizes = [1 << 16, 1 << 26].map(|n| s.case(&[n], Some(7)));
                sizes
                    .into_iter()
                    .chain([s.case(&[1 << 26], Some(3))])
                    .collect()
            },
            |_, _| Ok(()),
        )
        .convolution(7, "by size, mask width 7");
        static TRANSPOSE: SweepSpec = plain("transpose").same_size_copy(|shape| match shape {
            [rows, cols] if rows == cols => "",
            _ => " (wide: <= 8 rows)",
        });
        static PLAIN: SweepSpec = plain("vector-add");
        match name {
            "reduce-f32" => &REDUCE,
            "conv1d" => &CONV,
            "transpose" => &TRANSPOSE,
            "vector-add" => &PLAIN,
            _ => panic!("no sweep {name} in these tests"),
        }
    }

    /// The sweeps in the order the tables come: the read-only one first.
    fn all() -> [&'static SweepSpec; 4] {
        ["reduce-f32", "vector-add", "transpose", "conv1d"].map(spec)
    }

    fn ceilings() -> Ceilings {
        Ceilings {
            copy: CeilingRecord {
                bytes: 1 << 30,
                median_ms: 0.3,
                gbps: 4000.0,
                reps: 5,
            },
            read: ReadRecord {
                bytes: 1 << 30,
                median_ms: 0.25,
                gbps: 4300.0,
                reps: 5,
                shape: "8 loads".into(),
                launch: "1056 x 256".into(),
                tried: vec![("8 loads".into(), "1056 x 256".into(), 0.25, 4300.0)],
            },
            theoretical_gbps: 4800.0,
            fp32_peak_fma_per_second: 33.45e12,
            fp32_measured_fma_per_second: 31.0e12,
            fp32_gemm: Some(GemmTiming {
                operation: "torch.mm".into(),
                library: "torch 2".into(),
                m: 8192,
                n: 8192,
                k: 8192,
                median_ms: 21.4,
                reps: 5,
            }),
        }
    }

    fn row(pattern: &str, shape: &[usize], width: Option<usize>, ms: f64) -> Row {
        let case = Case {
            pattern: pattern.into(),
            shape: shape.to_vec(),
            width,
        };
        let elements = case.elements().unwrap() as u64;
        Row {
            case,
            elements,
            kernel: "k".into(),
            grid: [132, 1, 1],
            block: [256, 1, 1],
            median_ms: ms,
            min_ms: ms,
            max_ms: ms,
            reps: 5,
            bytes: 8 * elements,
            gbps: 8.0 * elements as f64 / (ms * 1e6),
            percent_of_copy: 50.0,
            percent_of_read: 45.0,
            percent_of_theoretical: 40.0,
            floor: width.map(|_| FloorRecord {
                memory_ms: ms / 2.0,
                fma_ms: ms / 4.0,
                floor_ms: ms / 2.0,
                bound: "memory".into(),
                ratio: 2.0,
            }),
            same_size_copy: (pattern == "transpose").then_some(SameSizeCopy {
                median_ms: 0.9 * ms,
                percent: 90.0,
            }),
            max_error: None,
            passed: true,
            verdict: "PASS".into(),
            peers: vec![PeerTiming {
                peer: "torch".into(),
                operation: "op".into(),
                library: "torch 2".into(),
                median_ms: 2.0 * ms,
                reps: 5,
            }],
        }
    }

    fn report() -> SweepReport {
        let mut rows = vec![
            row("reduce-f32", &[1 << 16], None, 0.01),
            row("reduce-f32", &[1 << 18], None, 0.02),
            row("transpose", &[1024, 1024], None, 0.01),
            row("transpose", &[3, 8191], None, 0.01),
            row("conv1d", &[1 << 16], Some(7), 0.01),
            row("conv1d", &[1 << 26], Some(7), 0.2),
            row("conv1d", &[1 << 26], Some(3), 0.2),
        ];
        rows[1].peers.clear();
        rows[0].peers[0].median_ms = 0.005;
        SweepReport {
            schema_version: 1,
            date: "d".into(),
            command: "demo sweep".into(),
            device: DeviceInfo::default(),
            ceilings: ceilings(),
            method: "m".into(),
            peers_file: None,
            rows,
            skipped: vec![Skipped {
                case: Case {
                    pattern: "reduce-f32".into(),
                    shape: vec![1 << 30],
                    width: None,
                },
                reason: "too big".into(),
            }],
            errors: vec![CaseError {
                case: Case {
                    pattern: "transpose".into(),
                    shape: vec![1 << 22, 4],
                    width: None,
                },
                kernel: "transpose_tiled_vec4".into(),
                error: "grid too large".into(),
            }],
        }
    }

    #[test]
    fn tables_have_the_columns_asked_for() {
        let r = report();
        let t = pattern_tables(spec("reduce-f32"), &r.rows, &r.errors, &r.ceilings);
        assert_eq!(t.len(), 1);
        let h = &t[0].header;
        for col in [
            "ours ms",
            "GB/s",
            "% of copy",
            "% of read-only",
            "% of theoretical",
            "peer",
            "peer ms",
            SPEED,
        ] {
            assert!(h.iter().any(|c| c == col), "{col} missing from {h:?}");
        }
        assert_eq!(
            t[0].rows[0][h.iter().position(|c| c == SPEED).unwrap()],
            "0.50"
        );
        assert_eq!(
            t[0].rows[1][h.iter().position(|c| c == "peer").unwrap()],
            "-"
        );
        let conv = pattern_tables(spec("conv1d"), &r.rows, &r.errors, &r.ceilings);
        assert_eq!(conv.len(), 2, "by size and by width");
        assert!(conv[0].header.iter().any(|c| c == "ours/floor"));
        let peak = conv[0]
            .header
            .iter()
            .position(|c| c == "% of FP32 peak")
            .unwrap();
        assert_eq!(
            conv[0].rows[0][peak], "25.0%",
            "fma_ms is a quarter of ours"
        );
        assert!(
            conv[0].title.contains("peer in this run: torch.mm"),
            "{}",
            conv[0].title
        );
        let t = pattern_tables(spec("transpose"), &r.rows, &r.errors, &r.ceilings);
        let same = t[0]
            .header
            .iter()
            .position(|c| c == "% of same-size copy")
            .unwrap();
        assert_eq!(t[0].rows[0][same], "90.0%");
        assert!(ceilings_text(&r.ceilings).contains("FP32 matrix product (peer): torch.mm"));
        assert_eq!(conv[0].rows.len(), 2, "the width-7 rows");
        assert_eq!(conv[1].rows.len(), 2, "the 2^26 rows");
        assert_eq!(conv[1].rows[0][0], "2^26, w 3", "sorted by width");
        assert!(
            !pattern_tables(spec("vector-add"), &r.rows, &r.errors, &r.ceilings)
                .iter()
                .any(|t| !t.rows.is_empty())
        );
    }

    #[test]
    fn summary_names_worst_and_best() {
        let r = report();
        let s = summary_table(&r, &all());
        let reduce = s.rows.iter().find(|row| row[0] == "reduce-f32").unwrap();
        assert_eq!(reduce[1..4], ["2".to_string(), "1".into(), "1".into()]);
        assert_eq!(reduce[4], "0.50");
        assert_eq!(reduce[8], "PASS");
        let conv = s.rows.iter().find(|row| row[0] == "conv1d").unwrap();
        assert_eq!((conv[4].as_str(), conv[6].as_str()), ("2.00", "2.00"));
        let transpose = s.rows.iter().find(|row| row[0] == "transpose").unwrap();
        assert_eq!(transpose[1], "3", "two measured, one error");
        assert_eq!(transpose[8], "ERROR (1)");
        let t = pattern_tables(spec("transpose"), &r.rows, &r.errors, &r.ceilings);
        let last = t[0].rows.last().unwrap();
        assert_eq!(last[0], "4194304 x 4");
        assert_eq!(last.last().unwrap(), "ERROR: grid too large");
        assert_eq!(last.len(), t[0].header.len());
    }

    #[test]
    fn files_render() {
        let r = report();
        let csv = csv(&r.rows).unwrap();
        assert_eq!(csv.lines().count(), 1 + r.rows.len());
        assert!(csv.contains("conv1d,67108864,7,"));
        let md = markdown(&r, &all());
        assert!(
            md.contains("## summary")
                && md.contains("## skipped")
                && md.contains("## conv1d-widths")
        );
        let section = chart_section(&r, &all());
        let charts = chart::charts(&section).unwrap();
        let stems: Vec<&str> = charts.iter().map(|c| c.stem.as_str()).collect();
        assert_eq!(
            stems,
            [
                "sweep-reduce-f32",
                "sweep-transpose",
                "sweep-conv1d",
                "sweep-conv1d-widths"
            ]
        );
        assert!(charts[0].svg.contains("read-only ceiling"));
        assert!(
            charts[1].svg.contains("ours (wide: &lt;= 8 rows)")
                || charts[1].svg.contains("ours (wide: <= 8 rows)")
        );
        let back: SweepReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
