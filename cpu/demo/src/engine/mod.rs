//! The engine every pattern runs on, which names no pattern: the global options
//! ([`options`]), argument checks ([`args`]), what a pattern is and the list the binary gives
//! ([`registry`]), the command line ([`cli`]) and its dispatch ([`run`]), the device's
//! description ([`device`]), timing and ceilings ([`timing`]), footprints, trials and plans
//! ([`harness`]), a pattern's output sink ([`out`]), the report (tables, writers, charts,
//! compare, profile: [`report`], [`report_files`]) and the sweep runner ([`sweep`]).
//!
//! The layers, each importing only those before it: `options`, `args`, `timing`, `report`,
//! `device`, `out`, `harness`, `sweep`, `registry`, `cli`, `report_files`, `run`.
//! `cpu/demo/tests/layers.rs` checks it.

pub mod args;
pub mod cli;
pub mod device;
pub mod harness;
pub mod options;
pub mod out;
pub mod registry;
pub mod report;
pub mod report_files;
pub mod run;
pub mod sweep;
pub mod timing;
