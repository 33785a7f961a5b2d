//! `demo smoke`.

use anyhow::{Context, Result, bail};
use comfy_table::{Table, presets::ASCII_MARKDOWN};
use cpu::{Gpu, smoke};

use crate::{Cli, Out, verdict};

pub fn run(gpu: &Gpu, cli: &Cli, out: &mut Out, size: usize) -> Result<()> {
    let mut table = Table::new();
    table
        .load_preset(ASCII_MARKDOWN)
        .set_header(["kernel", "feature", "n", "seed", "verdict"]);
    let mut failures = 0;
    for variant in smoke::Variant::ALL {
        let outcome = smoke::check(gpu, variant, size, cli.seed)
            .with_context(|| format!("smoke kernel {}", variant.kernel_name()))?;
        failures += outcome.result.is_err() as usize;
        table.add_row([
            variant.kernel_name().to_string(),
            variant.feature().to_string(),
            outcome.n.to_string(),
            outcome.seed.to_string(),
            verdict(&outcome.result),
        ]);
    }
    println!("{table}");
    if failures > 0 {
        bail!("{failures} smoke kernel(s) disagree with the CPU reference");
    }
    Ok(())
}
