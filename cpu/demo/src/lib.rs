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
//! Layout: this file is the top, with [`PATTERNS`] (the one list that names every pattern);
//! `patterns/` holds one folder per pattern (its definition, `Pattern` on its arguments, its
//! tables, sweeps and input and output helpers); `engine/` holds what names no pattern, in
//! layers: the options, argument checks, timing and ceilings, the report ([`report`]), the
//! device's description, the output sink, the harness, the sweep runner ([`sweep`]), the
//! registry ([`registry`]: the `Pattern` trait and the list the engine is handed), the command
//! line and its dispatch. Every import points down (`tests/layers.rs`; see
//! `docs/adding_a_pattern.md`).

mod engine;
mod patterns;
#[cfg(test)]
mod tests;

pub use engine::out::{DumpIndex, DumpedArray, DumpedTable};
pub use engine::{registry, report, sweep, timing};

use crate::engine::registry::{PatternInfo, Patterns};
use crate::patterns::{
    convolution, histogram, md, memory, multi_gpu, reduce, scan, smoke, sort, square_sum,
    transpose, vector_add,
};

/// Runs the `demo` command over [`PATTERNS`]: parses the command line, runs the command or the
/// pattern, and returns the exit status (`engine::run::main`).
pub fn main() -> std::process::ExitCode {
    engine::run::main(Patterns::new(PATTERNS))
}

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
    PatternInfo::of::<sort::Sort>(),
    PatternInfo::of::<convolution::Conv1d>(),
    PatternInfo::of::<convolution::Conv2d>(),
    PatternInfo::of::<md::Md>(),
    PatternInfo::of::<memory::registers::Registers>(),
    PatternInfo::of::<memory::shared_memory::SharedMemory>(),
    PatternInfo::of::<memory::bank_conflicts::BankConflicts>(),
    PatternInfo::of::<memory::constant_memory::ConstantMemory>(),
    PatternInfo::of::<memory::device_globals::DeviceGlobals>(),
    PatternInfo::of::<memory::coalescing::Coalescing>(),
    PatternInfo::of::<memory::layout::Layout>(),
    PatternInfo::of::<memory::bandwidth::Bandwidth>(),
    PatternInfo::of::<memory::texture::Texture>(),
    PatternInfo::of::<multi_gpu::MultiGpu>(),
    PatternInfo::of::<smoke::Smoke>(),
];
