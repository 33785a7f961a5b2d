//! The command line: the global options ([`Options`]), the commands ([`Builtin`]), and one
//! subcommand per pattern, each from the pattern's own arguments ([`command`]).

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::engine::options::Options;
use crate::engine::registry::{PatternInfo, Patterns};

/// The command line: the global options, then a command or a pattern. The patterns'
/// subcommands are not in this type: [`command`] adds one per entry of
/// [`Patterns`] the binary gives, built from the pattern's own arguments.
#[derive(Parser)]
#[command(
    version,
    about = "GPU parallel patterns in Rust: run, verify and time each kernel",
    after_help = EXIT_STATUS
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub opts: Options,
    /// The command, or `None` for a pattern (its subcommand is in the matches).
    #[command(subcommand)]
    pub command: Option<Builtin>,
}

/// The end of `demo --help`: what the exit status says.
pub(crate) const EXIT_STATUS: &str = "\
Exit status:
  0    every run passed (every output matched the CPU reference)
  1    a run-time failure: no driver or no such device, not enough memory for the sizes, a file \
that cannot be read, a driver or library error, an output that disagrees with the CPU reference
  2    an argument error (an unknown option, a value out of range, arguments that do not go \
together), refused before any device work
  130  interrupted (Ctrl-C or SIGTERM); report files are whole or absent";

/// The commands that are not patterns.
#[derive(Subcommand)]
pub(crate) enum Builtin {
    /// List every pattern, its variants and their kernels (no GPU needed).
    List {
        /// Only the pattern names, one per line: what `demo all` and `run.sh demo` run.
        #[arg(long, conflicts_with = "sanitize_args")]
        names: bool,
        /// Only the compute-sanitizer cases, one `PATTERN ARGS...` per line (small sizes):
        /// what `run.sh sanitize` runs.
        #[arg(long)]
        sanitize_args: bool,
    },
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
    /// Each pattern's library entry point over a range of sizes and shapes, verified once per
    /// size, timed with the L2 flushed before every launch, beside this run's copy, read-only
    /// and theoretical ceilings and (--peers FILE from `peers.py --sweep`) PyTorch / CuPy.
    Sweep {
        // Its help, naming the sweeps, is set by [`command`].
        #[arg(value_name = "PATTERN")]
        patterns: Vec<String>,
        /// Skip the cases with more elements than this (a quick run); by default every case
        /// runs whose memory fits comfortably in the free device and host memory.
        #[arg(long, value_name = "N")]
        max_elements: Option<u64>,
        /// Print the cases of the patterns named (none: all) as JSON, one object per case
        /// (`pattern`, `shape`, `width`) in the order they run, and exit (no GPU needed):
        /// what `peers.py --sweep` times.
        #[arg(long, conflicts_with = "max_elements")]
        list_cases: bool,
    },
}

/// The whole command line: [`Cli`] with one subcommand per pattern of `patterns`, in their
/// order, after the commands; `demo sweep --help` names the sweeps.
pub(crate) fn command(patterns: Patterns) -> clap::Command {
    let sweeps: Vec<&str> = patterns.sweeps().map(|s| s.name).collect();
    let sweep_help = format!(
        "Patterns to sweep: {} (none: all of them, in that order)",
        sweeps.join(", ")
    );
    patterns
        .iter()
        .fold(Cli::command(), |cmd, p| cmd.subcommand(p.command()))
        .mut_subcommand("sweep", |s| s.mut_arg("patterns", |a| a.help(sweep_help)))
        .subcommand_required(true)
        .arg_required_else_help(true)
}

/// What the command line asks for: a command, or a pattern with its subcommand's matches.
pub(crate) enum Invocation {
    /// One of the [`Builtin`] commands.
    Builtin(Builtin),
    /// A pattern and its arguments.
    Pattern(&'static PatternInfo, clap::ArgMatches),
}

/// Parses `matches` (of [`command`]) into the global options and what to run.
///
/// # Errors
/// clap's error, for arguments clap accepted but the types refuse (none expected).
pub(crate) fn parse(
    patterns: Patterns,
    matches: &clap::ArgMatches,
) -> Result<(Options, Invocation), clap::Error> {
    let cli = Cli::from_arg_matches(matches)?;
    let invocation = match (cli.command, matches.subcommand()) {
        (Some(b), _) => Invocation::Builtin(b),
        (None, Some((name, sub))) => match patterns.find(name) {
            Some(p) => Invocation::Pattern(p, sub.clone()),
            None => {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::InvalidSubcommand,
                    format!("`{name}` is neither a command nor a pattern\n"),
                ));
            }
        },
        (None, None) => {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::MissingSubcommand,
                "a command or a pattern is required\n",
            ));
        }
    };
    let device_given =
        matches.value_source("device") == Some(clap::parser::ValueSource::CommandLine);
    Ok((cli.opts.for_rank(device_given), invocation))
}
