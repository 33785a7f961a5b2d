//! `demo sweep vector-add`: the library's `vector_add` over sizes, each case checked and timed.

use anyhow::Result;
use cpu::launch::{VEC4_ALIGNMENT, is_aligned};
use cpu::{vector_add, verify};

use crate::engine::harness::Footprint;
use crate::engine::sweep::{Case, Sweep, random_floats};

/// The sweep: each case's inputs, the entry point on them, and its check.
pub(super) fn measure(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    for case in cases {
        // Device: x, y, z. Host: x, y, the output and the reference.
        let Some(n) = sweep.admit(&case, |n| {
            Footprint::new(format!("vector-add of {n} elements"))
                .device::<f32>(3, n)
                .host::<f32>(4, n)
        })?
        else {
            continue;
        };
        let x = random_floats(sweep.seed_for(&case, 0), n);
        let y = random_floats(sweep.seed_for(&case, 1), n);
        let (d_x, d_y) = (gpu.upload(&x)?, gpu.upload(&y)?);
        let mut d_z = gpu.poisoned(n, f32::NAN)?;
        let aligned = [gpu.address(&d_x), gpu.address(&d_y), gpu.address(&d_z)]
            .into_iter()
            .all(|a| is_aligned(a, VEC4_ALIGNMENT));
        let variant = vector_add::Variant::fastest(aligned);
        let (kernel, launch) = (variant.kernel_name(), variant.launch_config(gpu, n)?);
        sweep.measure(
            case,
            kernel,
            vector_add::bytes_moved(n),
            None,
            &mut d_z,
            |z| vector_add::add(gpu, &d_x, &d_y, z).map(|()| launch),
            |z, _| {
                let got = gpu.download(z, kernel)?;
                Ok(verify::exact(&got, &vector_add::reference(&x, &y)))
            },
        )?;
    }
    Ok(())
}
