//! Running the command: [`main`] (errors printed once, as one sentence), the report of a run,
//! `demo all` over the [registry](crate::registry), and the dispatch of one pattern to its
//! module.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, FromArgMatches, Parser};
use cpu::Gpu;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{Cli, Pattern};
use crate::registry::{self, PATTERNS};
use crate::report::profile::Profile;
use crate::report::{DeviceInfo, Peer, Report, SCHEMA_VERSION};
use crate::report_files::{compare, render, write_report};
use crate::{Format, Out};
use crate::{
    convolution, md, memory, multi_gpu, reduce, smoke, square_sum, sweep, transpose, vector_add,
};

/// The `demo` command: parses the arguments, runs, prints one sentence and exits non-zero on
/// error.
pub fn main() -> ExitCode {
    // SAFETY: the first statement of main: no other thread exists yet to touch the environment.
    unsafe { cpu::multi_gpu::keep_nvls_off() };
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
        Pattern::List {
            names,
            sanitize_args,
        } => {
            registry::print_list(*names, *sanitize_args);
            return Ok(());
        }
        Pattern::Compare { old, new } => return compare(cli, old, new),
        Pattern::Render { report } => return render(cli, report),
        Pattern::Sweep {
            patterns,
            max_elements,
        } => {
            return sweep::run(
                cli,
                sweep::Args {
                    patterns,
                    max_elements: *max_elements,
                },
            );
        }
        _ => {}
    }
    // Inputs are read before the GPU work starts, so a bad file fails in a second.
    let (profile, peers) = read_inputs(cli)?;
    let gpu = Gpu::new(cli.device)?;
    let mut report = new_report(&gpu, cli, peers)?;
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
    print_report(cli, &report)?;
    if let Some(dir) = &cli.out {
        let files = write_report(dir, &report)?;
        eprintln!("wrote {} files to {}", files, dir.display());
    }
    match single_error {
        Some(e) => Err(e),
        None => all_passed(&report),
    }
}

/// The `--profile` and `--peers` files, parsed.
fn read_inputs(cli: &Cli) -> Result<(Option<Arc<Profile>>, Vec<Peer>)> {
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
    };
    let profile = match &cli.profile {
        Some(p) => Some(Arc::new(
            Profile::parse(&read(p)?).with_context(|| format!("{}", p.display()))?,
        )),
        None => None,
    };
    let peers = match &cli.peers {
        Some(p) => serde_json::from_str(&read(p)?)
            .with_context(|| format!("{} is not a peers file (a JSON list)", p.display()))?,
        None => Vec::new(),
    };
    Ok((profile, peers))
}

/// An empty report of this run on `gpu` (the device line printed with `--format table`).
fn new_report(gpu: &Gpu, cli: &Cli, peers: Vec<Peer>) -> Result<Report> {
    let device = device_info(gpu, cli.device)?;
    if cli.format == Format::Table {
        println!(
            "device {}: {} (compute capability {}, {} SMs), PTX sm_{}",
            device.index, device.name, device.compute_capability, device.sm_count, device.ptx_arch
        );
    }
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        device,
        sections: Vec::new(),
        peers,
    })
}

/// The summary table (several patterns), or the whole report as JSON or CSV.
fn print_report(cli: &Cli, report: &Report) -> Result<()> {
    match cli.format {
        Format::Table => {
            if report.sections.len() > 1 {
                println!("\nsummary ({})", report.device.name);
                println!("{}", report.summary_table().markdown());
            }
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(report)?),
        Format::Csv => print!("{}", report.csv()?),
    }
    Ok(())
}

/// An error naming every pattern that did not pass, if one did not.
fn all_passed(report: &Report) -> Result<()> {
    if report.passed() {
        return Ok(());
    }
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
    )
}

/// `demo all`: every pattern of the registry with its defaults, in the registry's order; a
/// pattern that fails is recorded and the run goes on.
fn run_all(gpu: &Gpu, cli: &Cli, profile: Option<Arc<Profile>>, report: &mut Report) {
    let pb = ProgressBar::new(PATTERNS.len() as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    for info in PATTERNS {
        let name = info.name;
        pb.set_message(name);
        if let Some(why) = info.unavailable() {
            pb.suspend(|| eprintln!("{name}: skipped: {why}"));
            pb.inc(1);
            continue;
        }
        let pattern = Cli::try_parse_from(["demo", name])
            .map(|c| c.pattern)
            .unwrap_or_else(|e| {
                unreachable!("the registry names a pattern clap does not know: {e}")
            });
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

/// Runs one pattern with its arguments.
pub(crate) fn run_pattern(gpu: &Gpu, cli: &Cli, pattern: &Pattern, out: &mut Out) -> Result<()> {
    match *pattern {
        Pattern::List { .. }
        | Pattern::All
        | Pattern::Compare { .. }
        | Pattern::Render { .. }
        | Pattern::Sweep { .. } => {
            unreachable!("not a pattern")
        }
        Pattern::VectorAdd { size } => vector_add::run(gpu, cli, out, size),
        Pattern::Smoke { size } => smoke::run(gpu, cli, out, size),
        Pattern::MultiGpu {
            ref devices,
            size,
            max_bytes,
        } => multi_gpu::run(
            gpu,
            cli,
            out,
            multi_gpu::Args {
                devices,
                size,
                max_bytes,
            },
        ),
        Pattern::Md {
            cells,
            ref threads,
            steps,
        } => md::run(gpu, cli, out, cells, threads, steps),
        Pattern::Reduce { size, block } => reduce::run(gpu, cli, out, size, block),
        Pattern::SquareSum { size } => square_sum::run(gpu, cli, out, size),
        Pattern::OnChip(ref topic) => memory::on_chip::run(gpu, cli, out, topic),
        Pattern::Traffic(ref topic) => memory::traffic::run(gpu, cli, out, topic),
        Pattern::Transpose { rows, cols } => transpose::run(gpu, cli, out, rows, cols),
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

/// The device's description for a report (name, clocks, theoretical bandwidth, L2, PTX).
pub(crate) fn device_info(gpu: &Gpu, index: usize) -> Result<DeviceInfo> {
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
        theoretical_gbps: crate::timing::theoretical_from_clocks(memory_clock_khz, memory_bus_bits),
        l2_bytes: gpu.l2_cache_bytes()?,
        memory_bytes: gpu.memory_info()?.1,
        ptx_arch: gpu.ptx_arch(),
    })
}
