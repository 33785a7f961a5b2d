//! `demo coalescing`, `demo layout`, `demo bandwidth`, `demo texture`: the global-memory
//! and transfer topics of the memory hierarchy lab.

use anyhow::Result;
use clap::Subcommand;
use cpu::Gpu;

use crate::Cli;

/// The global-memory and transfer topics.
#[derive(Subcommand)]
pub enum Topic {}

pub fn run(_gpu: &Gpu, _cli: &Cli, topic: &Topic) -> Result<()> {
    match *topic {}
}
