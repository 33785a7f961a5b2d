//! `demo sweep scan-i32 scan-f32 scan-max-f32 select-f32`: the scans and `select_if` over sizes, each case
//! checked and timed.

use anyhow::Result;
use cpu::reduce::Max;
use cpu::scan::{self, Kind, Predicate, ScanElement, ScanKind, SelectElement, reference};
use cpu::verify;

use super::*;
use crate::engine::harness::{Footprint, SMALL};
use crate::engine::sweep::{Case, Sweep, SweepSpec, powers, random_floats};

pub(super) fn sweep_cases(s: &SweepSpec) -> Vec<Case> {
    powers(20, 30, 2).map(|n| s.case(&[n], None)).collect()
}

/// Device: input and output. Host: input, reference and output (f32: the reference in f64
/// with its magnitudes).
pub(super) fn sweep_footprint(case: &Case, n: usize) -> Footprint {
    Footprint::new(format!("{} of {n} elements", case.pattern))
        .device::<i32>(2, n)
        .device_bytes(SMALL + n as u64 / 256)
        .host::<f32>(2, n)
        .host::<f64>(2, n)
}

pub(super) fn sweep_i32(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    sweep_scan(sweep, cases, random_i32, i32::MIN, |got, input| {
        verify::exact(got, &reference::scan_i32(input, Kind::Inclusive))
    })
}

pub(super) fn sweep_f32(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    sweep_scan(sweep, cases, random_floats, f32::NAN, |got, input| {
        reference::check_f32(got, input, Kind::Inclusive)
    })
}

/// The inclusive scan of `T` over the cases: inputs from `make`, outputs poisoned with
/// `poison`, checked by `check(got, input)`.
pub(super) fn sweep_scan<T: ScanElement>(
    sweep: &mut Sweep<'_>,
    cases: Vec<Case>,
    make: fn(u64, usize) -> Vec<T>,
    poison: T,
    check: fn(&[T], &[T]) -> Result<(), verify::Mismatch>,
) -> Result<()> {
    let gpu = sweep.gpu();
    let mut ws = scan::ScanWorkspace::<T>::new(gpu)?;
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| sweep_footprint(&case, n))? else {
            continue;
        };
        let input = make(sweep.seed_for(&case, 0), n);
        let d_in = gpu.upload(&input)?;
        let mut d_out = gpu.poisoned(n, poison)?;
        sweep.measure(
            case,
            T::KERNEL.name(),
            scan::bytes_moved(n),
            None,
            &mut d_out,
            |d_out| ws.scan(gpu, Kind::Inclusive, &d_in, d_out),
            |d_out, _| Ok(check(&gpu.download(d_out, T::KERNEL.name())?, &input)),
        )?;
    }
    Ok(())
}

/// `cummax` of `f32` (the inclusive scan of `Max<f32>`) over the cases, checked exactly.
pub(super) fn sweep_cummax(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    let mut ws = scan::ScanWorkspace::<f32>::new(gpu)?;
    let kernel = <Max<f32> as ScanKind>::KERNEL.name();
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| sweep_footprint(&case, n))? else {
            continue;
        };
        let input = random_floats(sweep.seed_for(&case, 0), n);
        let expected: Vec<f32> = input
            .iter()
            .scan(f32::NEG_INFINITY, |m, &x| {
                *m = m.max(x);
                Some(*m)
            })
            .collect();
        let d_in = gpu.upload(&input)?;
        let mut d_out = gpu.poisoned(n, f32::NAN)?;
        sweep.measure(
            case,
            kernel,
            scan::bytes_moved(n),
            None,
            &mut d_out,
            |d_out| ws.scan_with::<Max<f32>>(gpu, Kind::Inclusive, None, &d_in, d_out),
            |d_out, _| Ok(verify::exact(&gpu.download(d_out, kernel)?, &expected)),
        )?;
    }
    Ok(())
}

pub(super) fn sweep_select(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    let mut ws = scan::ScanWorkspace::<f32>::new(gpu)?;
    for case in cases {
        let Some(n) = sweep.admit(&case, |n| sweep_footprint(&case, n))? else {
            continue;
        };
        let input = random_floats(sweep.seed_for(&case, 0), n);
        let predicate = Predicate::Greater(0.0);
        let expected = reference::select_if(&input, predicate);
        let d_in = gpu.upload(&input)?;
        let mut state = (gpu.poisoned(n, f32::NAN)?, gpu.poisoned(1, u32::MAX)?);
        sweep.measure(
            case,
            f32::SELECT.name(),
            select_bytes(n, expected.len()),
            None,
            &mut state,
            |(d_out, d_count)| ws.select_if(gpu, &d_in, predicate, d_out, d_count),
            |(d_out, d_count), _| {
                let count = gpu.download(d_count, "select_if_f32")?[0] as usize;
                let got = gpu.download(d_out, "select_if_f32")?;
                Ok(check_selected(&got, count, &expected))
            },
        )?;
    }
    Ok(())
}
