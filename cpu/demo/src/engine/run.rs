//! Running the command: [`main`] (errors printed once, as one sentence), the report of a run,
//! `demo all` over the binary's [`Patterns`], and the dispatch of one pattern to its
//! definition.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use cpu::Gpu;
use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::cli::{self, Builtin, Invocation};
use crate::engine::options::{Format, Options};
use crate::engine::out::Out;
use crate::engine::registry::{PatternInfo, Patterns};
use crate::engine::report::profile::Profile;
use crate::engine::report::{Peer, Report, SCHEMA_VERSION};
use crate::engine::report_files::{compare, render, write_report};
use crate::engine::sweep;

/// The `demo` command over `patterns`: parses the arguments, runs, prints one sentence and exits non-zero on
/// error: 2 for an argument error (clap's, or an [`ArgError`](crate::engine::args::ArgError) of a
/// pattern's check, both before any device work), 1 for a run-time failure
/// ([`EXIT_STATUS`](crate::engine::cli::EXIT_STATUS), the end of `demo --help`).
pub fn main(patterns: Patterns) -> ExitCode {
    // SAFETY: the first statement of main: no other thread exists yet to touch the environment.
    unsafe { cpu::multi_gpu::keep_nvls_off() };
    let matches = cli::command(patterns).get_matches();
    let (opts, invocation) = match cli::parse(patterns, &matches) {
        Ok(parsed) => parsed,
        Err(e) => e.exit(),
    };
    // Ctrl-C (or SIGTERM) waits for a report file being written, then exits: files are whole
    // or absent.
    if let Err(e) = ctrlc::set_handler(|| crate::engine::report::exit_after_writes(130)) {
        eprintln!("warning: cannot install the interrupt handler: {e}");
    }
    match run(&opts, patterns, invocation) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(crate::engine::args::exit_status(&e))
        }
    }
}

/// What `demo` runs on the GPU: every pattern, or one with its arguments.
enum Work {
    All,
    One(&'static PatternInfo, clap::ArgMatches),
}

fn run(opts: &Options, patterns: Patterns, invocation: Invocation) -> Result<()> {
    let work = match invocation {
        Invocation::Builtin(Builtin::List {
            names,
            sanitize_args,
        }) => {
            patterns.print_list(names, sanitize_args);
            return Ok(());
        }
        Invocation::Builtin(Builtin::Compare { old, new }) => return compare(opts, &old, &new),
        Invocation::Builtin(Builtin::Render { report }) => return render(opts, &report),
        Invocation::Builtin(Builtin::Sweep {
            patterns: names,
            max_elements,
            list_cases,
        }) => {
            return sweep::run(
                opts,
                sweep::Args {
                    sweeps: patterns.parse_sweeps(&names)?,
                    every: patterns.sweeps().collect(),
                    max_elements,
                    list_cases,
                },
            );
        }
        Invocation::Builtin(Builtin::All) => Work::All,
        Invocation::Pattern(pattern, matches) => {
            // What the parsers could not check, before the device is opened.
            pattern.check(&matches)?;
            Work::One(pattern, matches)
        }
    };
    // Inputs are read before the GPU work starts, so a bad file fails in a second.
    let (profile, peers) = read_inputs(opts)?;
    let gpu = Gpu::new(opts.device)?;
    let mut report = new_report(&gpu, opts, peers)?;
    let single_error = match work {
        Work::All => {
            run_all(&gpu, opts, patterns, profile, &mut report);
            None
        }
        Work::One(pattern, matches) => {
            let mut out = Out::new(
                pattern.name,
                opts.format,
                None,
                opts.dump.as_deref(),
                profile,
            )
            .silenced(opts.quiet);
            let result = pattern.run(&gpu, opts, &mut out, &matches);
            let section = out.finish(result.as_ref().err());
            // A pattern refused before it measured anything leaves no report.
            if section.blocks.is_empty() {
                return result;
            }
            report.sections.push(section);
            result.err()
        }
    };
    if opts.quiet {
        // A rank other than 0: rank 0 prints and writes the report.
        return single_error.map_or_else(|| all_passed(&report), Err);
    }
    print_report(opts, &report)?;
    if let Some(dir) = &opts.out {
        let files = write_report(dir, &report)?;
        eprintln!("wrote {} files to {}", files, dir.display());
    }
    match single_error {
        Some(e) => Err(e),
        None => all_passed(&report),
    }
}

/// The `--profile` and `--peers` files, parsed.
fn read_inputs(opts: &Options) -> Result<(Option<Arc<Profile>>, Vec<Peer>)> {
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
    };
    let profile = match &opts.profile {
        Some(p) => Some(Arc::new(
            Profile::parse(&read(p)?).with_context(|| format!("{}", p.display()))?,
        )),
        None => None,
    };
    let peers = match &opts.peers {
        Some(p) => serde_json::from_str(&read(p)?)
            .with_context(|| format!("{} is not a peers file (a JSON list)", p.display()))?,
        None => Vec::new(),
    };
    Ok((profile, peers))
}

/// An empty report of this run on `gpu` (the device line printed with `--format table`).
fn new_report(gpu: &Gpu, opts: &Options, peers: Vec<Peer>) -> Result<Report> {
    let device = crate::engine::device::info(gpu, opts.device)?;
    if opts.format == Format::Table && !opts.quiet {
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
fn print_report(opts: &Options, report: &Report) -> Result<()> {
    match opts.format {
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

/// `demo all`: every pattern of `patterns` with its defaults, in that order; a pattern that
/// fails is recorded and the run goes on.
fn run_all(
    gpu: &Gpu,
    opts: &Options,
    patterns: Patterns,
    profile: Option<Arc<Profile>>,
    report: &mut Report,
) {
    let pb = ProgressBar::new(patterns.iter().len() as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    for pattern in patterns.iter() {
        let name = pattern.name;
        pb.set_message(name);
        if let Some(why) = pattern.unavailable() {
            pb.suspend(|| eprintln!("{name}: skipped: {why}"));
            pb.inc(1);
            continue;
        }
        let defaults = pattern
            .command()
            .no_binary_name(true)
            .try_get_matches_from(std::iter::empty::<String>())
            .unwrap_or_else(|e| unreachable!("{name} does not parse at its defaults: {e}"));
        let mut out = Out::new(
            name,
            opts.format,
            Some(pb.clone()),
            opts.dump.as_deref(),
            profile.clone(),
        )
        .silenced(opts.quiet);
        out.banner(&format!("== {name} =="));
        let result = pattern.run(gpu, opts, &mut out, &defaults);
        if let Err(e) = &result {
            let msg = format!("{name}: error: {e:#}");
            pb.suspend(|| eprintln!("{msg}"));
        }
        report.sections.push(out.finish(result.as_ref().err()));
        pb.inc(1);
    }
    pb.finish_and_clear();
}
