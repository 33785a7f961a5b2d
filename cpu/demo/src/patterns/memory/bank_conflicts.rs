//! `demo bank-conflicts`: shared-memory bank conflicts (strides, an odd stride, the padded tile,
//! broadcast and multicast) in SM cycles per warp access.

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::lab::memory::bank_conflicts;

use crate::engine::harness::{Footprint, SMALL, verdict};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, variant};
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::Timing;

/// Shared-memory bank conflicts: strides, an odd stride, the padded tile, broadcast and
/// multicast, in SM cycles per warp access.
#[derive(clap::Args)]
pub(crate) struct BankConflicts {
    /// Shared loads per thread.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    accesses: u32,
}

impl Pattern for BankConflicts {
    const NAME: &'static str = "bank-conflicts";

    fn variants() -> Vec<VariantInfo> {
        bank_conflicts::PATTERNS
            .iter()
            .map(|p| variant(p.name, bank_conflicts::KERNELS))
            .collect()
    }

    fn sanitize() -> Vec<String> {
        vec!["--accesses 64".into()]
    }

    /// One block per SM, fixed small buffers.
    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let accesses = self.accesses;
        Ok(Some(
            Footprint::new(format!("bank-conflicts of {accesses} accesses")).device_bytes(SMALL),
        ))
    }

    fn run(&self, gpu: &Gpu, _opts: &Options, out: &mut Out) -> Result<()> {
        bank_conflicts_demo(gpu, out, self.accesses)
    }
}

fn bank_conflicts_demo(gpu: &Gpu, out: &mut Out, accesses: u32) -> Result<()> {
    use gpu::memory::bank_conflicts::BLOCK_SIZE;
    use gpu::memory::bank_conflicts::kernels::bank_conflicts_read;
    // The kernel's buffers are downloaded and checked inside `bank_conflicts::measure`; the
    // demo gets no array back, so nothing is dumped.
    let mut table = Table::new(
        "patterns",
        format!(
            "shared-memory bank conflicts: {} threads per block, one block per SM, {accesses} \
             warp-wide 4-byte shared loads per thread; SM cycles (clock64) per warp access, median \
             over blocks; ns at the {} MHz peak SM clock",
            BLOCK_SIZE,
            gpu.sm_clock_khz()? / 1000
        ),
        ChartKind::Bars,
        [
            "pattern",
            "word of lane l",
            "n-way (computed)",
            "cycles/access",
            "ns/access",
            "x stride 1",
            "verdict",
        ],
    )
    .chart_extra("cycles_per_access");
    let warps = f64::from(BLOCK_SIZE / 32);
    let mut failures = 0;
    let mut baseline = None;
    for p in bank_conflicts::PATTERNS {
        let m = bank_conflicts::measure(gpu, p.stride, p.group, accesses)?;
        failures += m.check.is_err() as usize;
        let base = *baseline.get_or_insert(m.cycles_per_access);
        let ways = bank_conflicts::conflict_degree(p.stride, p.group);
        // One launch, timed by clock64 inside each block: the time is the median block's loop
        // (every warp's `accesses` loads) at the peak SM clock. The library returns only the
        // median, so min and max equal it.
        let block_ms = m.ns_per_access * f64::from(accesses) * warps * 1e-6;
        let t = Timing {
            median_ms: block_ms,
            min_ms: block_ms,
            max_ms: block_ms,
            reps: 1,
        };
        table.measured_row(
            [
                p.name.to_string(),
                if p.group == 1 {
                    format!("{} * l", p.stride)
                } else {
                    format!("{} * (l / {})", p.stride, p.group)
                },
                ways.to_string(),
                format!("{:.2}", m.cycles_per_access),
                format!("{:.2}", m.ns_per_access),
                format!("{:.1}", m.cycles_per_access / base),
                verdict(&m.check),
            ],
            Measurement::new(p.name, &t)
                .kernel(bank_conflicts_read.name())
                .extra("conflict_ways", f64::from(ways))
                .extra("cycles_per_access", m.cycles_per_access)
                .extra("ns_per_access", m.ns_per_access)
                .extra("x_stride_1", m.cycles_per_access / base)
                .passed(m.check.is_ok()),
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} bank-conflict run(s) read wrong values");
    }
    Ok(())
}
