//! The command line: the global options ([`Options`]), the commands ([`Builtin`]), and one
//! subcommand per pattern, each from the pattern's own arguments ([`command`]).

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::Format;
use crate::registry::PatternInfo;

/// The command line: the global options, then a command or a pattern. The patterns'
/// subcommands are not in this type: [`command`] adds one per entry of
/// [`PATTERNS`](crate::PATTERNS), built from the pattern's own arguments.
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

// The global options every command and pattern gets (a pattern reads them as its context). No
// doc comment: a flattened struct's doc comment would become the command's help.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct Options {
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
    /// Folder to write report.md, report.json, report.csv and charts/ (SVG and PNG) into
    /// (`demo sweep`: sweep.md, sweep.json, sweep.csv and charts/).
    #[arg(long, global = true, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Folder to write each variant's input and output arrays into, as .npy files
    /// (DIR/<pattern>/<name>.npy): every array a table verifies, listed with its table in
    /// DIR/<pattern>/index.json (the names: docs/report.md).
    #[arg(long, global = true, value_name = "DIR")]
    pub dump: Option<PathBuf>,
    /// Nsight Compute CSV (`ncu --csv --metrics ...`, see `run.sh profile`) whose load/store
    /// efficiency and bank-conflict figures are added to the tables as columns.
    #[arg(long, global = true, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Peer timings (`run.sh peers`: PyTorch on the same operations and sizes), JSON, shown
    /// beside our best variants in the summary; for `demo sweep`, the file `peers.py --sweep`
    /// writes.
    #[arg(long, global = true, value_name = "FILE")]
    pub peers: Option<PathBuf>,
}

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
        // Its help names the patterns of the sweep registry.
        #[arg(value_name = "PATTERN", help = sweep_patterns_help())]
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

/// The sweep's pattern list, for `demo sweep --help`.
fn sweep_patterns_help() -> String {
    let names: Vec<&str> = crate::sweep::specs().map(|s| s.name).collect();
    format!(
        "Patterns to sweep: {} (none: all of them, in that order)",
        names.join(", ")
    )
}

/// The whole command line: [`Cli`] with one subcommand per pattern of
/// [`PATTERNS`](crate::PATTERNS), in their order, after the commands.
pub(crate) fn command() -> clap::Command {
    crate::PATTERNS
        .iter()
        .fold(Cli::command(), |cmd, p| cmd.subcommand(p.command()))
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
pub(crate) fn parse(matches: &clap::ArgMatches) -> Result<(Options, Invocation), clap::Error> {
    let cli = Cli::from_arg_matches(matches)?;
    let invocation = match (cli.command, matches.subcommand()) {
        (Some(b), _) => Invocation::Builtin(b),
        (None, Some((name, sub))) => match crate::registry::find(name) {
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
    Ok((cli.opts, invocation))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_argv(argv: &[&str]) -> Result<(Options, Invocation), clap::Error> {
        parse(&command().try_get_matches_from(argv)?)
    }

    fn sweep_args(argv: &[&str]) -> (Options, Vec<String>, Option<u64>) {
        let (opts, invocation) = parse_argv(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let (patterns, max_elements) = match invocation {
            Invocation::Builtin(Builtin::Sweep {
                patterns,
                max_elements,
                ..
            }) => (patterns, max_elements),
            _ => panic!("{argv:?} is not a sweep"),
        };
        (opts, patterns, max_elements)
    }

    #[test]
    fn sweep_parses_patterns_and_options() {
        let (_, patterns, max) = sweep_args(&["demo", "sweep"]);
        assert!(patterns.is_empty(), "none given: all");
        assert_eq!(max, None);
        let (opts, patterns, max) = sweep_args(&[
            "demo",
            "sweep",
            "conv1d",
            "reduce-f32",
            "--max-elements",
            "1048576",
            "--reps",
            "7",
            "--peers",
            "p.json",
            "--out",
            "dir",
        ]);
        assert_eq!(patterns, ["conv1d", "reduce-f32"]);
        assert_eq!(max, Some(1 << 20));
        assert_eq!(opts.reps, 7);
        assert_eq!(opts.peers.as_deref(), Some(std::path::Path::new("p.json")));
        assert_eq!(opts.out.as_deref(), Some(std::path::Path::new("dir")));
        // Global options before the subcommand too.
        let (opts, patterns, _) = sweep_args(&["demo", "--format", "csv", "sweep", "transpose"]);
        assert_eq!(patterns, ["transpose"]);
        assert_eq!(opts.format, Format::Csv);
    }

    #[test]
    fn sweep_refuses_bad_options_in_the_parser() {
        for argv in [
            &["demo", "sweep", "--max-elements", "many"][..],
            &["demo", "sweep", "--max-elements", "-1"],
            &["demo", "sweep", "--size", "10"],
            &["demo", "sweep", "--list-cases", "--max-elements", "10"],
        ] {
            assert!(parse_argv(argv).is_err(), "{argv:?} parsed");
        }
        // Unknown pattern names parse, and the sweep refuses them in one sentence before any
        // GPU work (`sweep::parse_patterns`).
        let (_, patterns, _) = sweep_args(&["demo", "sweep", "no-such"]);
        assert!(crate::sweep::parse_patterns(&patterns).is_err());
    }

    #[test]
    fn a_pattern_parses_with_the_global_options_on_either_side() {
        for argv in [
            &["demo", "--reps", "3", "reduce", "--size", "1000"][..],
            &["demo", "reduce", "--size", "1000", "--reps", "3"],
            // The alias names the canonical pattern.
            &["demo", "reduction", "--reps", "3", "--size", "1000"],
        ] {
            let (opts, invocation) = parse_argv(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            assert_eq!(opts.reps, 3, "{argv:?}");
            match invocation {
                Invocation::Pattern(p, matches) => {
                    assert_eq!(p.name, "reduce");
                    assert_eq!(matches.get_one::<usize>("size"), Some(&1000));
                }
                Invocation::Builtin(_) => panic!("{argv:?} is not a pattern"),
            }
        }
        for argv in [
            &["demo"][..],
            &["demo", "no-such-pattern"],
            &["demo", "vector-add", "--rows", "3"],
            &["demo", "--reps", "0", "vector-add"],
        ] {
            assert!(parse_argv(argv).is_err(), "{argv:?} parsed");
        }
    }
}
