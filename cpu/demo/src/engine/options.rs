//! The global options every command and pattern gets ([`Options`]; a pattern reads them as its
//! context), and how results are printed ([`Format`]).

use std::path::PathBuf;

/// How results are printed on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines and markdown tables as the run goes, as the seed posts print them.
    Table,
    /// The whole report as JSON at the end (every measurement).
    Json,
    /// One CSV row per measurement at the end.
    Csv,
}

// The global options every command and pattern gets (a pattern reads them as its context). No
// doc comment: a flattened struct's doc comment would become the command's help.
#[derive(clap::Args, Clone, Debug)]
pub struct Options {
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
    /// Set for a rank other than 0 of a multi-process job (torchrun's `RANK`): it prints
    /// nothing on stdout and writes no report files (rank 0 does).
    #[arg(skip)]
    pub quiet: bool,
}

impl Options {
    /// These options for one rank of a job of one process per GPU, as torchrun describes it in
    /// the environment: with `RANK` set and not 0 the run is [`quiet`](Self::quiet), and with
    /// `LOCAL_RANK` set the device is that rank's unless `--device` was given
    /// (`device_given`), as a PyTorch program calls `torch.cuda.set_device(local_rank)`.
    /// Without those variables, unchanged.
    pub fn for_rank(mut self, device_given: bool) -> Self {
        let var = |name| std::env::var(name).ok().map(|v| v.trim().to_string());
        if let Some(rank) = var("RANK") {
            self.quiet = rank != "0";
        }
        if !device_given && let Some(local) = var("LOCAL_RANK").and_then(|v| v.parse().ok()) {
            self.device = local;
        }
        self
    }
}
