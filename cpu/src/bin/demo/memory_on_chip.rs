//! `demo registers`, `demo shared-memory`, `demo bank-conflicts`, `demo constant-memory`,
//! `demo device-globals`: the on-chip topics of the memory hierarchy lab.

use anyhow::Result;
use clap::Subcommand;
use cpu::Gpu;

use crate::Cli;

/// The on-chip memory topics.
#[derive(Subcommand)]
pub enum Topic {}

pub fn run(_gpu: &Gpu, _cli: &Cli, topic: &Topic) -> Result<()> {
    match *topic {}
}
