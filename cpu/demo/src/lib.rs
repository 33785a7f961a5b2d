//! The `demo` command: runs the lab's patterns on an NVIDIA GPU, checks every output against the CPU
//! reference and prints tables like the seed posts', with each bandwidth beside the same run's
//! device-to-device memcpy bandwidth.
//!
//! `cargo run --release --bin demo -- <pattern> [--size N] [--reps R] [--device D]`;
//! `demo list` lists the patterns and their variants; `demo all --out DIR` runs every pattern
//! and writes `report.md`, `report.json`, `report.csv` and the charts; `demo compare OLD.json
//! NEW.json` prints the speedup of every measurement two runs share.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod convolution;
mod md;
mod memory_on_chip;
mod memory_traffic;
mod out;
mod reduction;
pub mod report;
mod smoke;
pub mod timing;
mod transpose;
mod vector_add;

use crate::report::profile::Profile;
use crate::report::{DeviceInfo, Peer, Report, SCHEMA_VERSION};
use anyhow::{Context, Result, bail};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use comfy_table::{Table, presets::ASCII_MARKDOWN};
use cpu::{Gpu, verify};
use indicatif::{ProgressBar, ProgressStyle};

pub(crate) use out::{Format, Out};

#[derive(Parser)]
#[command(
    version,
    about = "GPU parallel patterns in Rust: run, verify and time each kernel"
)]
pub(crate) struct Cli {
    /// CUDA device index.
    #[arg(long, global = true, default_value_t = 0)]
    pub device: usize,
    /// Timed repetitions per kernel (the median is reported).
    #[arg(long, global = true, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// Seed of the random inputs.
    #[arg(long, global = true, default_value_t = 2026)]
    pub seed: u64,
    /// How results are printed: tables as the run goes, or JSON / CSV of every measurement at
    /// the end.
    #[arg(long, global = true, value_enum, default_value = "table")]
    pub format: Format,
    /// Folder to write report.md, report.json, report.csv and charts/ (SVG and PNG) into.
    #[arg(long, global = true, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Folder to write each variant's input and output arrays into, as .npy files
    /// (DIR/<pattern>/<name>.npy).
    #[arg(long, global = true, value_name = "DIR")]
    pub dump: Option<PathBuf>,
    /// Nsight Compute CSV (`ncu --csv --metrics ...`, see `run.sh profile`) whose load/store
    /// efficiency and bank-conflict figures are added to the tables as columns.
    #[arg(long, global = true, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Peer timings (`run.sh peers`: PyTorch on the same operations and sizes), JSON, shown
    /// beside our best variants in the summary.
    #[arg(long, global = true, value_name = "FILE")]
    pub peers: Option<PathBuf>,
    #[command(subcommand)]
    pattern: Pattern,
}

#[derive(Subcommand)]
enum Pattern {
    /// List the patterns and their variants (kernels).
    List,
    /// Every pattern with its defaults, a progress bar, and a summary table: pattern, best
    /// variant, GB/s, % of memcpy, verdict. With --out DIR, the report files and charts.
    All,
    /// Renders a report.json again, without a GPU: report.md on stdout (or JSON / CSV), and with
    /// --out DIR every report file and chart.
    Render {
        /// A report.json written by `demo ... --out DIR` or `--format json`.
        report: PathBuf,
    },
    /// Speedup of every measurement two report.json files share (another GPU, another commit).
    Compare {
        /// The baseline run's report.json.
        old: PathBuf,
        /// The run compared with it.
        new: PathBuf,
    },
    /// z = x + y on f32: the seed's toy launch, then every variant at a large size, timed.
    VectorAdd {
        /// Elements (default 2^26: 768 MiB moved per launch, far beyond the L2 cache).
        #[arg(long, default_value_t = 1 << 26)]
        size: usize,
    },
    /// Matrix transpose: the seed's five versions, a copy baseline and the tiled kernels, timed.
    Transpose {
        /// Rows of the input matrix.
        #[arg(long, default_value_t = 8192)]
        rows: usize,
        /// Columns of the input matrix.
        #[arg(long, default_value_t = 8192)]
        cols: usize,
    },
    /// Parallel reduction: the seed's nine kernels (table as in the seed), the template kernel
    /// per block size, and `reduce_sum` (i32, f32, f32 in f64) at 2^20 and 2^26 elements.
    #[command(alias = "reduction")]
    Reduce {
        /// Elements (default 2^24 i32, as the seed).
        #[arg(long, default_value_t = gpu::reduce::SEED_N)]
        size: usize,
        /// Threads per block of the seed kernels (a power of two, 64..=1024 for all of them).
        #[arg(long, default_value_t = gpu::reduce::SEED_BLOCK)]
        block: u32,
    },
    /// Sum of squares: the seed's seven versions and the one-launch version.
    SquareSum {
        /// Elements (default 1048576 i32, the seed's DATA_SIZE).
        #[arg(long, default_value_t = gpu::reduce::square_sum::DATA_SIZE)]
        size: usize,
    },
    #[command(flatten)]
    OnChip(memory_on_chip::Topic),
    #[command(flatten)]
    Traffic(memory_traffic::Topic),
    /// 1D convolution: the seed's four kernels (basic, __constant__ mask, tiled halo, cached
    /// halo) and the vec4 tile, verified and timed.
    Conv1d {
        /// Elements (default 2^26: 512 MiB moved per launch).
        #[arg(long, default_value_t = 1 << 26)]
        size: usize,
        /// Mask width (odd, 1..=31).
        #[arg(long, default_value_t = 7)]
        mask_width: usize,
    },
    /// 2D convolution: basic, __constant__ mask, tiled halo and the vec4 tile on a random image,
    /// timed; then a PNG (or a generated picture) filtered with a named mask.
    Conv2d {
        /// Rows of the random image of the timed table.
        #[arg(long, default_value_t = 4096)]
        rows: usize,
        /// Columns of the random image of the timed table.
        #[arg(long, default_value_t = 4096)]
        cols: usize,
        /// Mask width of the timed table (odd, 1..=9).
        #[arg(long, default_value_t = 5)]
        mask_width: usize,
        /// PNG to filter (read as grayscale); without it, a generated 640 x 480 test picture.
        #[arg(long)]
        image: Option<PathBuf>,
        /// Named mask the picture is filtered with.
        #[arg(long, value_enum, default_value = "sobel-x")]
        mask: cpu::convolution::NamedMask,
        /// Where to write the filtered picture (grayscale PNG; derivative masks as magnitude).
        #[arg(long, value_name = "PNG")]
        image_out: Option<PathBuf>,
    },
    /// Molecular dynamics force reduction (LJ-melt): the OpenMP paper's critical and triangle
    /// methods and the no-lock reduction on CPU threads, the GPU force kernels, the step-0
    /// potential energy per atom and the energy drift.
    Md {
        /// fcc unit cells per side, 4 atoms each (20: 32000 atoms; the paper's sizes: 35, 55).
        #[arg(long, default_value_t = 20)]
        cells: usize,
        /// Thread counts of the CPU table, comma-separated (default: 1 to all cores).
        #[arg(long, value_delimiter = ',')]
        threads: Vec<usize>,
        /// Velocity Verlet steps of the energy-drift run.
        #[arg(long, default_value_t = 100)]
        steps: usize,
    },
    /// One kernel per device-support feature, each checked against the CPU.
    Smoke {
        /// Elements per smoke kernel (not a multiple of the block size by default).
        #[arg(long, default_value_t = 100_003)]
        size: usize,
    },
}

/// The patterns `demo all` runs, in order, each with its defaults.
const ALL: [&str; 16] = [
    "vector-add",
    "transpose",
    "reduce",
    "square-sum",
    "conv1d",
    "conv2d",
    "registers",
    "shared-memory",
    "bank-conflicts",
    "constant-memory",
    "device-globals",
    "coalescing",
    "layout",
    "bandwidth",
    "texture",
    "smoke",
];

/// The `demo` command: parses the arguments, runs, prints one sentence and exits non-zero on
/// error.
pub fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // The canonical name (`reduce` for the alias `reduction`) names the report section.
    let name = matches.subcommand_name().unwrap_or("pattern").to_string();
    // Ctrl-C (or SIGTERM) waits for a report file being written, then exits: files are whole
    // or absent.
    if let Err(e) = ctrlc::set_handler(|| crate::report::exit_after_writes(130)) {
        eprintln!("warning: cannot install the interrupt handler: {e}");
    }
    match run(&cli, &name) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli, name: &str) -> Result<()> {
    match &cli.pattern {
        Pattern::List => {
            list();
            return Ok(());
        }
        Pattern::Compare { old, new } => return compare(cli, old, new),
        Pattern::Render { report } => return render(cli, report),
        _ => {}
    }
    // Inputs are read before the GPU work starts, so a bad file fails in a second.
    let profile = match &cli.profile {
        Some(p) => Some(Arc::new(
            Profile::parse(
                &std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            )
            .with_context(|| format!("{}", p.display()))?,
        )),
        None => None,
    };
    let peers: Vec<Peer> = match &cli.peers {
        Some(p) => serde_json::from_str(
            &std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        )
        .with_context(|| format!("{} is not a peers file (a JSON list)", p.display()))?,
        None => Vec::new(),
    };
    let gpu = Gpu::new(cli.device)?;
    let device = device_info(&gpu, cli.device)?;
    if cli.format == Format::Table {
        println!(
            "device {}: {} (compute capability {}, {} SMs), PTX sm_{}",
            device.index, device.name, device.compute_capability, device.sm_count, device.ptx_arch
        );
    }
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        device,
        sections: Vec::new(),
        peers,
    };
    let single_error = if let Pattern::All = cli.pattern {
        run_all(&gpu, cli, profile, &mut report);
        None
    } else {
        let mut out = Out::new(name, cli.format, None, cli.dump.as_deref(), profile);
        let result = run_pattern(&gpu, cli, &cli.pattern, &mut out);
        let section = out.finish(result.as_ref().err());
        // A pattern refused before it measured anything leaves no report.
        if section.blocks.is_empty() {
            return result;
        }
        report.sections.push(section);
        result.err()
    };
    match cli.format {
        Format::Table => {
            if report.sections.len() > 1 {
                println!("\nsummary ({})", report.device.name);
                println!("{}", report.summary_table().markdown());
            }
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Csv => print!("{}", report.csv()?),
    }
    if let Some(dir) = &cli.out {
        let files = write_report(dir, &report)?;
        eprintln!("wrote {} files to {}", files, dir.display());
    }
    if let Some(e) = single_error {
        return Err(e);
    }
    if !report.passed() {
        let failed: Vec<String> = report
            .sections
            .iter()
            .filter(|s| s.error.is_some() || s.failures() > 0)
            .map(|s| format!("{} ({})", s.pattern, s.verdict()))
            .collect();
        bail!(
            "{} of {} patterns did not pass: {}",
            failed.len(),
            report.sections.len(),
            failed.join("; ")
        );
    }
    Ok(())
}

/// `demo all`: every pattern of [`ALL`] with its defaults; a pattern that fails is recorded
/// and the run goes on.
fn run_all(gpu: &Gpu, cli: &Cli, profile: Option<Arc<Profile>>, report: &mut Report) {
    let pb = ProgressBar::new(ALL.len() as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    for name in ALL {
        pb.set_message(name);
        let pattern = Cli::try_parse_from(["demo", name])
            .map(|c| c.pattern)
            .unwrap_or_else(|e| unreachable!("ALL names a pattern clap does not know: {e}"));
        let mut out = Out::new(
            name,
            cli.format,
            Some(pb.clone()),
            cli.dump.as_deref(),
            profile.clone(),
        );
        out.banner(&format!("== {name} =="));
        let result = run_pattern(gpu, cli, &pattern, &mut out);
        if let Err(e) = &result {
            let msg = format!("{name}: error: {e:#}");
            pb.suspend(|| eprintln!("{msg}"));
        }
        report.sections.push(out.finish(result.as_ref().err()));
        pb.inc(1);
    }
    pb.finish_and_clear();
}

fn run_pattern(gpu: &Gpu, cli: &Cli, pattern: &Pattern, out: &mut Out) -> Result<()> {
    match *pattern {
        Pattern::List | Pattern::All | Pattern::Compare { .. } | Pattern::Render { .. } => {
            unreachable!("not a pattern")
        }
        Pattern::VectorAdd { size } => vector_add::run(gpu, cli, out, size),
        Pattern::Smoke { size } => smoke::run(gpu, cli, out, size),
        Pattern::Reduce { size, block } => reduction::run(gpu, cli, out, size, block),
        Pattern::SquareSum { size } => reduction::run_square_sum(gpu, cli, out, size),
        Pattern::OnChip(ref topic) => memory_on_chip::run(gpu, cli, out, topic),
        Pattern::Traffic(ref topic) => memory_traffic::run(gpu, cli, out, topic),
        Pattern::Transpose { rows, cols } => transpose::run(gpu, cli, out, rows, cols),
        Pattern::Md {
            cells,
            ref threads,
            steps,
        } => md::run(gpu, cli, out, cells, threads, steps),
        Pattern::Conv1d { size, mask_width } => {
            convolution::run_1d(gpu, cli, out, size, mask_width)
        }
        Pattern::Conv2d {
            rows,
            cols,
            mask_width,
            ref image,
            mask,
            ref image_out,
        } => convolution::run_2d(
            gpu,
            cli,
            out,
            convolution::Conv2dArgs {
                rows,
                cols,
                mask_width,
                image: image.as_deref(),
                mask,
                out: image_out.as_deref(),
            },
        ),
    }
}

fn device_info(gpu: &Gpu, index: usize) -> Result<DeviceInfo> {
    let (major, minor) = gpu.compute_capability()?;
    let (cuda_major, cuda_minor) = gpu.driver_version()?;
    let memory_clock_khz = gpu.memory_clock_khz()?;
    let memory_bus_bits = gpu.memory_bus_bits()?;
    let kernel_driver = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|v| {
            let line = v.lines().next()?.to_string();
            let version = line
                .split_whitespace()
                .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))?
                .to_string();
            Some(format!("NVIDIA kernel driver {version}"))
        });
    Ok(DeviceInfo {
        index,
        name: gpu.name()?,
        compute_capability: format!("{major}.{minor}"),
        sm_count: gpu.sm_count()?,
        cuda_driver_version: format!("{cuda_major}.{cuda_minor}"),
        kernel_driver,
        sm_clock_mhz: gpu.sm_clock_khz()? / 1000,
        memory_clock_mhz: memory_clock_khz / 1000,
        memory_bus_bits,
        // Double data rate: two transfers per clock.
        theoretical_gbps: 2.0 * f64::from(memory_clock_khz) * 1e3 * f64::from(memory_bus_bits)
            / 8.0
            / 1e9,
        l2_bytes: gpu.l2_cache_bytes()?,
        memory_bytes: gpu.memory_info()?.1,
        ptx_arch: gpu.ptx_arch(),
    })
}

/// Writes report.md, report.json, report.csv and charts/<pattern>-<table>.{svg,png} into
/// `dir`, each whole or not at all, and all of them without an interrupt in between.
fn write_report(dir: &Path, report: &Report) -> Result<usize> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        (dir.join("report.md"), report.markdown().into_bytes()),
        (
            dir.join("report.json"),
            serde_json::to_string_pretty(report)?.into_bytes(),
        ),
        (dir.join("report.csv"), report.csv()?.into_bytes()),
    ];
    for section in &report.sections {
        for chart in crate::report::chart::charts(section)? {
            let stem = dir.join("charts").join(&chart.stem);
            files.push((stem.with_extension("svg"), chart.svg.into_bytes()));
            files.push((stem.with_extension("png"), chart.png));
        }
    }
    crate::report::write_all_atomically(files.iter().map(|(p, b)| (p.as_path(), b.as_slice())))?;
    Ok(files.len())
}

fn read_report(p: &Path) -> Result<Report> {
    let text =
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not a report.json written by demo", p.display()))
}

fn render(cli: &Cli, path: &Path) -> Result<()> {
    let report = read_report(path)?;
    match cli.format {
        Format::Table => print!("{}", report.markdown()),
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Csv => print!("{}", report.csv()?),
    }
    if let Some(dir) = &cli.out {
        let files = write_report(dir, &report)?;
        eprintln!("wrote {} files to {}", files, dir.display());
    }
    Ok(())
}

fn compare(cli: &Cli, old: &Path, new: &Path) -> Result<()> {
    let (old_report, new_report) = (read_report(old)?, read_report(new)?);
    let c = crate::report::compare::compare(&old_report, &new_report);
    if c.changes.is_empty() {
        bail!(
            "{} and {} share no measurement (pattern, table, variant)",
            old.display(),
            new.display()
        );
    }
    let table = c.table(&old_report.device.name, &new_report.device.name);
    match cli.format {
        Format::Table => {
            println!("{}", table.title);
            println!("{}", table.markdown());
            if let Some(g) = c.geomean() {
                println!("geometric mean speedup: {g:.3}x");
            }
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(&c.changes)?),
        Format::Csv => {
            let mut w = csv::Writer::from_writer(std::io::stdout());
            for ch in &c.changes {
                w.serialize(ch)?;
            }
            w.flush()?;
        }
    }
    Ok(())
}

fn list() {
    let mut table = Table::new();
    table
        .load_preset(ASCII_MARKDOWN)
        .set_header(["pattern", "variant", "kernel"]);
    for v in cpu::vector_add::Variant::ALL {
        table.add_row(["vector-add", &variant_name(v), v.kernel_name()]);
    }
    for v in cpu::transpose::Variant::ALL {
        table.add_row(["transpose", &variant_name(v), v.kernel_name()]);
    }
    for v in cpu::reduce::seed::Variant::ALL {
        let kernels = match v {
            cpu::reduce::seed::Variant::CompleteUnroll => gpu::reduce::REDUCE_COMPLETE_UNROLL
                .iter()
                .map(|(_, name)| *name)
                .collect::<Vec<_>>()
                .join(", "),
            _ => v.kernel_name().to_string(),
        };
        table.add_row(["reduce", &variant_name(v), &kernels]);
    }
    for v in cpu::reduce::SumVariant::ALL {
        table.add_row(["reduce", "reduce-sum", v.kernel_name()]);
    }
    for v in cpu::reduce::square_sum::Variant::ALL {
        table.add_row(["square-sum", &variant_name(v), v.kernel_name()]);
    }
    for v in cpu::convolution::Variant1d::ALL {
        let kernel = match v {
            cpu::convolution::Variant1d::Convolution1dTiledVec4 => {
                format!("{}_w{{1,3,...,31}}", v.kernel_name())
            }
            _ => v.kernel_name().to_string(),
        };
        table.add_row(["conv1d", &variant_name(v), &kernel]);
    }
    for v in cpu::convolution::Variant2d::ALL {
        let kernel = match v {
            cpu::convolution::Variant2d::Convolution2dTiledVec4 => {
                format!("{}_w{{1,3,5,7,9}}", v.kernel_name())
            }
            _ => v.kernel_name().to_string(),
        };
        table.add_row(["conv2d", &variant_name(v), &kernel]);
    }
    for v in cpu::smoke::Variant::ALL {
        table.add_row(["smoke", &variant_name(v), v.kernel_name()]);
    }
    println!("{table}");
}

pub(crate) fn variant_name(v: impl clap::ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

pub(crate) fn verdict(check: &Result<(), verify::Mismatch>) -> String {
    match check {
        Ok(()) => "PASS".into(),
        Err(m) => format!("FAIL: {m}"),
    }
}
