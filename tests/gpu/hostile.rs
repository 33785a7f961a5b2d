//! Hostile sizes: element counts beyond 2^31 and 2^32 (a 32-bit index would wrap; these trials
//! prove the kernels meant for large inputs index with 64 bits), and requests larger than the
//! device's memory (a typed out-of-memory error, and the context still works afterwards).
//! The large trials hold [`large_memory`] so that only one runs at a time.

use cpu::reduce::{self, reference};
use cpu::{Error, vector_add};
use lab_tests::{expect_err, fast_floats, gpu, gpu_trial, large_memory, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn vector_add_beyond_2e31() -> Result<(), Failed> {
    let _big = large_memory();
    let gpu = gpu()?;
    let n = (1usize << 31) + 3;
    let seed = seed_for("hostile::vector_add");
    let x = fast_floats(seed, n);
    let y = fast_floats(seed ^ 1, n);
    let expected = vector_add::reference(&x, &y);
    let (d_x, d_y) = (
        gpu.upload(&x).map_err(|e| e.to_string())?,
        gpu.upload(&y).map_err(|e| e.to_string())?,
    );
    drop((x, y));
    for variant in [
        vector_add::Variant::VectorAddGridStride,
        vector_add::Variant::VectorAddVec4,
    ] {
        let mut d_z = gpu.poisoned(n, f32::NAN).map_err(|e| e.to_string())?;
        vector_add::add_with(&gpu, variant, &d_x, &d_y, &mut d_z).map_err(|e| e.to_string())?;
        let got = gpu
            .download(&d_z, variant.kernel_name())
            .map_err(|e| e.to_string())?;
        cpu::verify::exact(&got, &expected)
            .map_err(|m| format!("{} n={n} seed={seed}: {m}", variant.kernel_name()))?;
    }
    Ok(())
}

fn reduce_sum_beyond_2e32() -> Result<(), Failed> {
    let _big = large_memory();
    let gpu = gpu()?;
    let n = (1usize << 32) + 5;
    let seed = seed_for("hostile::reduce_sum_i32");
    let mut input = vec![0i32; n];
    StdRng::seed_from_u64(seed).fill(&mut input[..]);
    let expected = reference::sum_i32(&input);
    let got = gpu
        .upload(&input)
        .and_then(|d| reduce::sum::<reduce::SumI32>(&gpu, &d))
        .map_err(|e| e.to_string())?;
    if got == expected {
        Ok(())
    } else {
        Err(format!("reduce_sum_i32 n={n} seed={seed}: got {got}, expected {expected}").into())
    }
}

/// Every hostile-size trial.
pub fn trials() -> Vec<Trial> {
    vec![
        gpu_trial(
            "hostile::vector_add_grid_stride_and_vec4_2e31_plus_3".into(),
            vector_add_beyond_2e31,
        ),
        gpu_trial(
            "hostile::reduce_sum_i32_2e32_plus_5".into(),
            reduce_sum_beyond_2e32,
        ),
        gpu_trial("hostile::out_of_memory_then_usable".into(), || {
            let gpu = gpu()?;
            expect_err(
                gpu.zeros::<u8>(1 << 45),
                |e| matches!(e, Error::OutOfMemory { requested, .. } if *requested == 1 << 45),
            )?;
            expect_err(gpu.poisoned::<f32>(1 << 43, 0.0), |e| {
                matches!(e, Error::OutOfMemory { .. })
            })?;
            // The context is still usable.
            let got = vector_add::run(
                &gpu,
                vector_add::Variant::VectorAdd,
                &[1.0; 1000],
                &[2.0; 1000],
            )
            .map_err(|e| e.to_string())?;
            cpu::verify::exact(&got, &[3.0; 1000]).map_err(|m| m.to_string().into())
        }),
    ]
}
