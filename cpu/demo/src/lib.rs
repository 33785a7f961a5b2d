//! The `demo` command: runs the lab's patterns on an NVIDIA GPU, checks every output against the CPU
//! reference and prints tables like the seed posts', with each bandwidth beside the same run's
//! device-to-device memcpy bandwidth.
//!
//! `cargo run --release --bin demo -- <pattern> [--size N] [--reps R] [--device D]`;
//! `demo list` lists every pattern of [`PATTERNS`] with its variants and kernels (`--names`,
//! `--sanitize-args`: the lists `run.sh` is generated with); `demo all --out DIR` runs every
//! pattern and writes `report.md`, `report.json`, `report.csv` and the charts; `demo compare
//! OLD.json NEW.json` prints the speedup of every measurement two runs share; `demo sweep
//! [PATTERN]...` runs each pattern's entry point over sizes and shapes beside the run's
//! ceilings and the peers ([`sweep`]).
//!
//! Layout: [`PATTERNS`] (the one list of patterns), [`registry`] (what a pattern is: the
//! `Pattern` trait), `cli` (the global options and the commands; the patterns' subcommands come
//! from the list), `run` (the command, `demo all`, the dispatch), `device` (the device's
//! description), `report_files`, [`sweep`], then one module per pattern family named after its
//! patterns, each defining its patterns (`Pattern` on its arguments).

mod args;
mod cli;
mod convolution;
mod device;
mod harness;
mod histogram;
mod md;
mod memory;
mod multi_gpu;
mod out;
mod reduce;
pub mod registry;
pub mod report;
mod report_files;
mod run;
mod scan;
mod smoke;
mod square_sum;
pub mod sweep;
pub mod timing;
mod transpose;
mod vector_add;

pub use run::main;

pub(crate) use cli::Options;
pub use out::{DumpIndex, DumpedArray, DumpedTable};
pub(crate) use out::{Format, Out};
pub(crate) use registry::variant_name;

use registry::PatternInfo;

/// Every pattern, in the order `demo all`, `demo list` and `run.sh demo` run them (and
/// `demo --help` lists them); `demo sweep` runs their sweeps in this order, the read-only ones
/// (the reductions) first. A new pattern's definition gets its line here.
pub static PATTERNS: &[PatternInfo] = &[
    PatternInfo::of::<vector_add::VectorAdd>(),
    PatternInfo::of::<transpose::Transpose>(),
    PatternInfo::of::<reduce::Reduce>(),
    PatternInfo::of::<square_sum::SquareSum>(),
    PatternInfo::of::<scan::Scan>(),
    PatternInfo::of::<histogram::Histogram>(),
    PatternInfo::of::<convolution::Conv1d>(),
    PatternInfo::of::<convolution::Conv2d>(),
    PatternInfo::of::<md::Md>(),
    PatternInfo::of::<memory::on_chip::Registers>(),
    PatternInfo::of::<memory::on_chip::SharedMemory>(),
    PatternInfo::of::<memory::on_chip::BankConflicts>(),
    PatternInfo::of::<memory::on_chip::ConstantMemory>(),
    PatternInfo::of::<memory::on_chip::DeviceGlobals>(),
    PatternInfo::of::<memory::traffic::Coalescing>(),
    PatternInfo::of::<memory::traffic::Layout>(),
    PatternInfo::of::<memory::traffic::Bandwidth>(),
    PatternInfo::of::<memory::traffic::Texture>(),
    PatternInfo::of::<multi_gpu::MultiGpu>(),
    PatternInfo::of::<smoke::Smoke>(),
];

use cpu::verify;

pub(crate) fn verdict(check: &Result<(), verify::Mismatch>) -> String {
    match check {
        Ok(()) => "PASS".into(),
        Err(m) => format!("FAIL: {m}"),
    }
}
