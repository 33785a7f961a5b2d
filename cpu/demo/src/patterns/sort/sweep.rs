//! The sweeps of `demo sort`: `sort::keys` of u32 and f32, `sort::pairs` of u32 keys with u32
//! values and `sort::argsort` of f32 from 2^20 to 2^28 keys, each rep on a fresh copy of the
//! keys (restored before the L2 flush, outside the timed region), each case checked against the
//! CPU's stable sort.

use anyhow::Result;
use cpu::sort::{self, Order};
use cpu::verify;
use cudarc::driver::CudaSlice;

use super::{
    Key, check_keys, model_bytes, pass_launch, random_f32, random_u32, reference_order, restore,
};
use crate::engine::harness::{Footprint, SMALL};
use crate::engine::sweep::{Case, Sweep, SweepSpec, powers};

/// 2^20, 2^22, ..., 2^28 keys.
pub(super) fn cases(s: &SweepSpec) -> Vec<Case> {
    powers(20, 28, 2).map(|n| s.case(&[n], None)).collect()
}

/// Device: the pristine keys (and values), the sorted ones, the workspace's second buffers and
/// status words. Host: the keys, the reference order, the download.
fn footprint(case: &Case, n: usize, pairs: bool) -> Footprint {
    let copies = if pairs { 6 } else { 3 };
    Footprint::new(format!("{} of {n} keys", case.pattern))
        .device::<u32>(copies, n)
        .device_bytes(SMALL + n as u64)
        .host::<u32>(4, n)
}

pub(super) fn keys_u32(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    keys(sweep, cases, random_u32)
}

pub(super) fn keys_f32(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    keys(sweep, cases, random_f32)
}

/// `sort::keys` (ascending) over the cases, the keys from `make(seed, n)`.
fn keys<K: Key>(
    sweep: &mut Sweep<'_>,
    cases: Vec<Case>,
    make: fn(u64, usize) -> Vec<K>,
) -> Result<()> {
    let gpu = sweep.gpu();
    let kernel = "sort_onesweep_u32_v32";
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| footprint(&case, n, false))? else {
            continue;
        };
        let keys = make(sweep.seed_for(&case, 0), n);
        let index = reference_order(&keys, Order::Ascending);
        let pristine = gpu.upload(&keys)?;
        let mut d_keys: CudaSlice<K> = gpu.upload(&keys)?;
        let cfg = pass_launch(n, size_of::<K>(), 0);
        sweep.measure_with_setup(
            case,
            kernel,
            model_bytes::<K>(n, 0),
            None,
            &mut d_keys,
            |d| restore(gpu, &pristine, d),
            |d| sort::keys(gpu, d, Order::Ascending).map(|()| cfg),
            |d, _| Ok(check_keys(&gpu.download(d, kernel)?, &keys, &index)),
        )?;
    }
    Ok(())
}

/// `sort::pairs` of u32 keys with each key's index as its value, ascending.
pub(super) fn pairs_u32(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    let kernel = "sort_onesweep_u32_v32";
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| footprint(&case, n, true))? else {
            continue;
        };
        let keys = random_u32(sweep.seed_for(&case, 0), n);
        let index = reference_order(&keys, Order::Ascending);
        let pristine_keys = gpu.upload(&keys)?;
        let values: Vec<u32> = (0..n as u32).collect();
        let pristine_values = gpu.upload(&values)?;
        let mut d = (gpu.upload(&keys)?, gpu.upload(&values)?);
        let cfg = pass_launch(n, 4, 4);
        sweep.measure_with_setup(
            case,
            kernel,
            model_bytes::<u32>(n, 4),
            None,
            &mut d,
            |d| {
                restore(gpu, &pristine_keys, &mut d.0)?;
                restore(gpu, &pristine_values, &mut d.1)
            },
            |d| sort::pairs(gpu, &mut d.0, &mut d.1, Order::Ascending).map(|()| cfg),
            |d, _| {
                let got = gpu.download(&d.0, kernel)?;
                let got_values = gpu.download(&d.1, kernel)?;
                Ok(check_keys(&got, &keys, &index).and(verify::exact(&got_values, &index)))
            },
        )?;
    }
    Ok(())
}

/// `sort::argsort` of f32 into poisoned indices, ascending.
pub(super) fn argsort_f32(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    let kernel = "sort_onesweep_u32_v32";
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| footprint(&case, n, true))? else {
            continue;
        };
        let keys = random_f32(sweep.seed_for(&case, 0), n);
        let index = reference_order(&keys, Order::Ascending);
        let d_keys = gpu.upload(&keys)?;
        let mut indices = gpu.poisoned(n, u32::MAX)?;
        let cfg = pass_launch(n, 4, 4);
        sweep.measure(
            case,
            kernel,
            model_bytes::<f32>(n, 4) - 4 * n as u64,
            None,
            &mut indices,
            |i| sort::argsort(gpu, &d_keys, i, Order::Ascending).map(|()| cfg),
            |i, _| Ok(verify::exact(&gpu.download(i, kernel)?, &index)),
        )?;
    }
    Ok(())
}
