//! `demo sort`'s segmented table: `sort::segmented_keys` of the same `n` u32 keys cut into
//! segments of several lengths, each output checked segment by segment against the CPU's
//! stable sort, beside the traffic model's floor and the time of one `sort::keys` of all `n`.

use anyhow::Result;
use cpu::sort::Order;
use cudarc::driver::CudaSlice;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use super::{Bench, dump, random_u32, restore};
use crate::engine::harness::Plan;
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Table};

/// The rows: a label, the layout's part of its dumped names (`--dump`: [`dump::segmented_offsets`],
/// [`dump::segmented_output`]) and the longest segment (lengths uniform in `1..=longest`; 0: one
/// segment of every key).
pub(super) const LAYOUTS: [(&str, &str, usize); 5] = [
    ("segments of 1 to 64 keys", "1_to_64", 64),
    ("segments of 1 to 2048 keys", "1_to_2048", 2048),
    ("segments of 1 to 65536 keys", "1_to_65536", 65536),
    ("segments of 1 to 2^20 keys", "1_to_2p20", 1 << 20),
    ("one segment of every key", "one", 0),
];

/// CSR offsets over `n` keys, segment lengths uniform in `1..=longest` (0: one segment).
fn offsets(seed: u64, n: usize, longest: usize) -> Vec<u64> {
    if longest == 0 {
        return vec![0, n as u64];
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut offsets = vec![0u64];
    let mut at = 0;
    while at < n {
        at = (at + rng.random_range(1..=longest)).min(n);
        offsets.push(at as u64);
    }
    offsets
}

/// The table; returns the rows that disagree with the CPU. `keys_ms`: the same run's time of
/// `sort::keys` of `n` u32 keys, ascending.
pub(super) fn segmented(b: &mut Bench<'_>, out: &mut Out, n: usize, keys_ms: f64) -> Result<usize> {
    let (gpu, opts, ceiling) = (b.gpu, b.opts, b.ceiling);
    let keys = random_u32(opts.seed ^ 0x5e6, n);
    out.dump(dump::SEGMENTED_INPUT, &[], &keys)?;
    let pristine = gpu.upload(&keys)?;
    let mut table = Table::new(
        "segmented",
        format!(
            "sort::segmented_keys of {n} uniform random u32 keys, ascending, one 256-thread block per segment: each rep sorts a fresh copy with the L2 flushed, median of {} reps; GB/s of the traffic model (per 8-bit pass each key read for the counts, then read and written: 48 bytes per key, and the offsets), floor = those bytes at the copy bandwidth; the last column is sort::keys of all {n} keys in this run ({keys_ms:.4} ms) over this row",
            opts.reps
        ),
        ChartKind::Bars,
        [
            "segments",
            "count",
            "median ms",
            "Gkeys/s",
            "GB/s",
            "% of memcpy",
            "floor ms",
            "sort::keys / this",
            "verdict",
        ],
    );
    let mut failures = 0;
    for (i, &(label, layout, longest)) in LAYOUTS.iter().enumerate() {
        let offsets = offsets(opts.seed ^ i as u64, n, longest);
        out.dump(&dump::segmented_offsets(layout), &[], &offsets)?;
        let segments = offsets.len() - 1;
        let mut want = keys.clone();
        let mut rest: &mut [u32] = &mut want;
        let mut pieces = Vec::with_capacity(segments);
        for w in offsets.windows(2) {
            let (piece, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
            pieces.push(piece);
            rest = tail;
        }
        pieces.into_par_iter().for_each(|p| p.sort());
        let d_offsets = gpu.upload(&offsets)?;
        let mut d_keys: CudaSlice<u32> = gpu.upload(&keys)?;
        let bytes = 48 * n as u64 + 16 * offsets.len() as u64;
        let cfg = cpu::launch::linear(
            segments as u32,
            gpu::sort::ONESWEEP_BLOCK,
            gpu::sort::onesweep_shared_bytes(4, 0) as u32,
        );
        let mut state = (&mut d_keys, &mut b.ws, &mut b.flush);
        let kernel = "sort_segmented_u32_v32";
        let trial = Plan::new(gpu, opts, label, kernel)
            .bytes(bytes, Some(ceiling))
            .run_with_setup(
                &mut state,
                |s| {
                    restore(gpu, &pristine, s.0)?;
                    s.2.flush(gpu)
                },
                |s| {
                    s.1.segmented_keys(gpu, s.0, &d_offsets, Order::Ascending)
                        .map(|()| cfg)
                },
                |s, _| {
                    let got = gpu.download(s.0, kernel)?;
                    out.verify(&dump::segmented_output(layout), &[], &got, |got| {
                        cpu::verify::exact(got, &want)
                    })
                },
            )?;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        let gbps = trial.gbps();
        table.measured_row(
            [
                label.to_string(),
                segments.to_string(),
                format!("{ms:.4}"),
                format!("{:.2}", n as f64 / ms / 1e6),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                format!("{:.4}", bytes as f64 / ceiling.gbps / 1e6),
                format!("{:.2}x", keys_ms / ms),
                trial.verdict(),
            ],
            trial.measurement,
        );
    }
    out.table(table);
    Ok(failures)
}
