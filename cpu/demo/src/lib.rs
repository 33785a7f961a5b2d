//! The `demo` command: runs the lab's patterns on an NVIDIA GPU, checks every output against the CPU
//! reference and prints tables like the seed posts', with each bandwidth beside the same run's
//! device-to-device memcpy bandwidth.
//!
//! `cargo run --release --bin demo -- <pattern> [--size N] [--reps R] [--device D]`;
//! `demo list` lists every pattern of the [registry] with its variants and kernels (`--names`,
//! `--sanitize-args`: the lists `run.sh` is generated with); `demo all --out DIR` runs every
//! pattern and writes `report.md`, `report.json`, `report.csv` and the charts; `demo compare
//! OLD.json NEW.json` prints the speedup of every measurement two runs share; `demo sweep
//! [PATTERN]...` runs each pattern's entry point over sizes and shapes beside the run's
//! ceilings and the peers ([`sweep`]).
//!
//! Layout: `cli` (the clap types), [`registry`] (the one table of patterns), `run` (the
//! command, `demo all`, the dispatch), `report_files`, then one module per pattern family
//! named after its patterns, each checking its sizes first (`harness::require_memory`).

mod cli;
mod convolution;
mod harness;
mod md;
mod memory;
mod multi_gpu;
mod out;
mod reduce;
pub mod registry;
pub mod report;
mod report_files;
mod run;
mod smoke;
mod square_sum;
pub mod sweep;
pub mod timing;
mod transpose;
mod vector_add;

pub use run::main;

pub(crate) use cli::Cli;
pub(crate) use out::{Format, Out};
pub(crate) use registry::variant_name;

use cpu::verify;

pub(crate) fn verdict(check: &Result<(), verify::Mismatch>) -> String {
    match check {
        Ok(()) => "PASS".into(),
        Err(m) => format!("FAIL: {m}"),
    }
}
