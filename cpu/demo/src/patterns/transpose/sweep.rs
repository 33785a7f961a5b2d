//! `demo sweep transpose`: `cpu::transpose` over square, wide, tall and odd shapes, each timed
//! beside a copy of its own bytes.

use anyhow::Result;
use cpu::launch::{VEC4_ALIGNMENT, is_aligned};
use cpu::{transpose, verify};

use crate::engine::harness::Footprint;
use crate::engine::sweep::{Case, Sweep, random_floats};

/// The chart line a swept shape belongs to (its suffix): square, odd near-square, wide (at
/// most 8 rows) or tall (at most 8 columns), so that no line holds two shapes of one size.
pub(super) fn series(shape: &[usize]) -> &'static str {
    match *shape {
        [rows, cols] if rows == cols => "",
        [rows, cols] if rows.min(cols) <= 8 && rows < cols => " (wide: <= 8 rows)",
        [rows, cols] if rows.min(cols) <= 8 => " (tall: <= 8 columns)",
        _ => " (odd, near-square)",
    }
}

/// The sweep: each case's input, the entry point on it, its check, and the copy of its bytes.
pub(super) fn measure(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    for case in cases {
        let (rows, cols) = (case.shape[0], case.shape[1]);
        // Device: input and output. Host: input, output and reference.
        let Some(n) = sweep.admit(&case, |n| {
            Footprint::new(format!("transpose of {rows} x {cols}"))
                .device::<f32>(2, n)
                .host::<f32>(3, n)
        })?
        else {
            continue;
        };
        let input = random_floats(sweep.seed_for(&case, 0), n);
        let d_in = gpu.upload(&input)?;
        let mut d_out = gpu.poisoned(n, f32::NAN)?;
        let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT)
            && is_aligned(gpu.address(&d_out), VEC4_ALIGNMENT);
        let variant = transpose::Variant::fastest(rows, cols, aligned);
        let (kernel, launch) = (variant.kernel_name(), variant.launch_config(rows, cols)?);
        let label = case.clone();
        sweep.measure(
            case,
            kernel,
            transpose::bytes_moved(rows, cols),
            None,
            &mut d_out,
            |o| transpose::transpose(gpu, &d_in, o, rows, cols).map(|()| launch),
            |o, _| {
                let got = gpu.download(o, kernel)?;
                Ok(verify::exact(
                    &got,
                    &transpose::reference(&input, rows, cols),
                ))
            },
        )?;
        // The copy of the same bytes, once the output has been checked.
        sweep.same_size_copy(&label, &d_in, &mut d_out)?;
    }
    Ok(())
}
