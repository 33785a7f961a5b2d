//! The command line: global options ([`Cli`]) and one subcommand per command or pattern
//! ([`Pattern`]).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::Format;
use crate::memory;

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
    /// Folder to write report.md, report.json, report.csv and charts/ (SVG and PNG) into
    /// (`demo sweep`: sweep.md, sweep.json, sweep.csv and charts/).
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
    /// beside our best variants in the summary; for `demo sweep`, the file `peers.py --sweep`
    /// writes.
    #[arg(long, global = true, value_name = "FILE")]
    pub peers: Option<PathBuf>,
    #[command(subcommand)]
    pub pattern: Pattern,
}

/// The commands and the patterns. Every pattern here has its entry in
/// [`PATTERNS`](crate::registry::PATTERNS) (a unit test checks both ways).
#[derive(Subcommand)]
pub(crate) enum Pattern {
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
        /// Patterns to sweep: reduce-i32, reduce-f32, vector-add, transpose, conv1d, conv2d
        /// (none: all of them, in that order).
        #[arg(value_name = "PATTERN")]
        patterns: Vec<String>,
        /// Skip the cases with more elements than this (a quick run); by default every case
        /// runs whose memory fits comfortably in the free device and host memory.
        #[arg(long, value_name = "N")]
        max_elements: Option<u64>,
    },
    /// z = x + y on f32: the seed's toy launch, then every variant at a large size, timed.
    VectorAdd {
        /// Elements (default 2^26: 768 MiB moved per launch, far beyond the L2 cache).
        #[arg(long, default_value_t = 1 << 26)]
        size: usize,
    },
    /// Matrix transpose: the seed's five versions, a copy baseline, the tiled kernels and the
    /// thin-matrix kernel, timed.
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
    OnChip(memory::on_chip::Topic),
    #[command(flatten)]
    Traffic(memory::traffic::Topic),
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
    /// methods and the lock-free reduction on CPU threads, then the GPU force kernels.
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
    /// Reduction across every GPU through NCCL: strong scaling of a sharded sum over 1..N GPUs,
    /// and an all-reduce sweep (NCCL and the lab's ring; algbw, busbw) from 1 KiB up.
    MultiGpu {
        /// Devices of the group, comma-separated (default: every visible GPU).
        #[arg(long, value_delimiter = ',')]
        devices: Vec<usize>,
        /// f32 elements of the sharded sum (default 2^30: 4 GiB, a copy on each GPU).
        #[arg(long, default_value_t = 1 << 30)]
        size: usize,
        /// Largest all-reduce, bytes per GPU (default 4 GiB; capped by the free device memory).
        #[arg(long, default_value_t = 4 << 30)]
        max_bytes: u64,
    },
    /// One kernel per device-support feature, each checked against the CPU.
    Smoke {
        /// Elements per smoke kernel (not a multiple of the block size by default).
        #[arg(long, default_value_t = 100_003)]
        size: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep_args(argv: &[&str]) -> (Cli, Vec<String>, Option<u64>) {
        let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let (patterns, max_elements) = match &cli.pattern {
            Pattern::Sweep {
                patterns,
                max_elements,
            } => (patterns.clone(), *max_elements),
            _ => panic!("{argv:?} is not a sweep"),
        };
        (cli, patterns, max_elements)
    }

    #[test]
    fn sweep_parses_patterns_and_options() {
        let (_, patterns, max) = sweep_args(&["demo", "sweep"]);
        assert!(patterns.is_empty(), "none given: all");
        assert_eq!(max, None);
        let (cli, patterns, max) = sweep_args(&[
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
        assert_eq!(cli.reps, 7);
        assert_eq!(cli.peers.as_deref(), Some(std::path::Path::new("p.json")));
        assert_eq!(cli.out.as_deref(), Some(std::path::Path::new("dir")));
        // Global options before the subcommand too.
        let (cli, patterns, _) = sweep_args(&["demo", "--format", "csv", "sweep", "transpose"]);
        assert_eq!(patterns, ["transpose"]);
        assert_eq!(cli.format, Format::Csv);
    }

    #[test]
    fn sweep_refuses_bad_options_in_the_parser() {
        for argv in [
            &["demo", "sweep", "--max-elements", "many"][..],
            &["demo", "sweep", "--max-elements", "-1"],
            &["demo", "sweep", "--size", "10"],
        ] {
            assert!(Cli::try_parse_from(argv).is_err(), "{argv:?} parsed");
        }
        // Unknown pattern names parse, and the sweep refuses them in one sentence before any
        // GPU work (`sweep::parse_patterns`).
        let (_, patterns, _) = sweep_args(&["demo", "sweep", "no-such"]);
        assert!(crate::sweep::parse_patterns(&patterns).is_err());
    }
}
