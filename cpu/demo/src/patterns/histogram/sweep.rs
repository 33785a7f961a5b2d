//! The sweeps of `demo histogram`: `histogram::bytes` on uniform and on constant bytes from
//! 2^24 to 2^30, each checked against the CPU's counts.

use anyhow::Result;
use cpu::histogram::{self, Update, ladder};

use super::{POISON, check_counts, constant_bytes, expected_bytes, uniform_bytes};
use crate::engine::harness::{Footprint, SMALL};
use crate::engine::sweep::{Case, Sweep, SweepSpec, powers};

/// 2^24, 2^26, 2^28 and 2^30 bytes.
pub(super) fn sweep_cases(s: &SweepSpec) -> Vec<Case> {
    powers(24, 30, 2).map(|n| s.case(&[n], None)).collect()
}

/// Device: the input and the counts. Host: the input.
fn sweep_footprint(case: &Case, n: usize) -> Footprint {
    Footprint::new(format!("{} of {n} bytes", case.pattern))
        .device::<u8>(1, n)
        .device_bytes(SMALL)
        .host::<u8>(1, n)
}

pub(super) fn sweep_uniform(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    sweep_bytes(sweep, cases, uniform_bytes)
}

pub(super) fn sweep_constant(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    sweep_bytes(sweep, cases, constant_bytes)
}

/// `histogram::bytes` over the cases: inputs from `make(seed, n)`, counts poisoned, checked
/// against the CPU's.
fn sweep_bytes(
    sweep: &mut Sweep<'_>,
    cases: Vec<Case>,
    make: fn(u64, usize) -> Vec<u8>,
) -> Result<()> {
    let gpu = sweep.gpu();
    let kernel = ladder::Variant::Bytes.kernel_name();
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| sweep_footprint(&case, n))? else {
            continue;
        };
        let input = make(sweep.seed_for(&case, 0), n);
        let expected = expected_bytes(&input);
        let d_in = gpu.upload(&input)?;
        drop(input);
        let mut counts = gpu.poisoned(histogram::BYTE_BINS, POISON)?;
        sweep.measure(
            case,
            kernel,
            n as u64,
            None,
            &mut counts,
            |counts| histogram::bytes_with(gpu, &d_in, counts, Update::Overwrite),
            |counts, _| Ok(check_counts(&gpu.download(counts, kernel)?, &expected)),
        )?;
    }
    Ok(())
}
