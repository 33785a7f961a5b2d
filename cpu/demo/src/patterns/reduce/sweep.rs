//! `demo sweep reduce-i32 reduce-f32`: `ReduceSum` over sizes, each case checked and timed.

use anyhow::Result;
use cpu::reduce::{ReduceSum, SumF32, SumI32, SumKind, reference};
use cudarc::driver::LaunchConfig;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::engine::harness::{Footprint, SMALL};
use crate::engine::sweep::{Case, Sweep, SweepSpec, powers, random_floats};

/// The sweeps' cases: 2^16, 2^18, ..., 2^30 elements.
pub(super) fn sweep_cases(s: &SweepSpec) -> Vec<Case> {
    powers(16, 30, 2).map(|n| s.case(&[n], None)).collect()
}

/// Peak memory of a reduction case of `n` elements of `T`: the input on the device (and the
/// workspace's partials), the input on the host.
pub(super) fn reduce_footprint<T>(case: &Case, n: usize) -> Footprint {
    Footprint::new(format!("{} of {n} elements", case.pattern))
        .device::<T>(1, n)
        .device_bytes(SMALL)
        .host::<T>(1, n)
}

pub(super) fn sweep_i32(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    let mut sum = ReduceSum::<SumI32>::new(gpu)?;
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| reduce_footprint::<i32>(&case, n))? else {
            continue;
        };
        let mut input = vec![0i32; n];
        StdRng::seed_from_u64(sweep.seed_for(&case, 0)).fill(&mut input[..]);
        let expected = reference::sum_i32(&input);
        let d_input = gpu.upload(&input)?;
        drop(input);
        sweep.measure(
            case,
            SumI32::KERNEL_NAME,
            reference::bytes_read(n),
            None,
            &mut sum,
            |s| s.launch(gpu, &d_input),
            |s, _| Ok(exact(s.result(gpu)?, expected)),
        )?;
    }
    Ok(())
}

pub(super) fn sweep_f32(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    let mut sum = ReduceSum::<SumF32>::new(gpu)?;
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| reduce_footprint::<f32>(&case, n))? else {
            continue;
        };
        let input = random_floats(sweep.seed_for(&case, 0), n);
        let (expected, sum_abs) = reference::reference_f32(&input);
        let d_input = gpu.upload(&input)?;
        drop(input);
        // The error over the bound of this launch's rounding chain (below 1 passes).
        let check = move |got: f32, cfg: &LaunchConfig| {
            let depth = reference::reduce_sum_depth(n, cfg);
            let bound = reference::sum_error_bound(n, depth, f64::from(f32::EPSILON), sum_abs);
            let got = f64::from(got);
            (
                reference::check_sum(got, expected, bound),
                (got - expected).abs() / bound,
            )
        };
        sweep.measure(
            case,
            SumF32::KERNEL_NAME,
            reference::bytes_read(n),
            None,
            &mut sum,
            |s| s.launch(gpu, &d_input),
            |s, cfg| Ok(check(s.result(gpu)?, cfg)),
        )?;
    }
    Ok(())
}
