//! The safe API's guarantees that need a device: byte counts that overflow are typed errors
//! before the driver is called, a buffer of a second context on the same device is refused
//! with an error that names the two contexts apart, downloads and uploads of views, and the
//! sum's kept workspace shared by threads without a race.

use std::sync::Arc;

use cpu::reduce::{self, reference};
use cpu::{Error, Gpu, vector_add};
use cudarc::driver::CudaContext;
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn fail(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

/// 2^62 elements of 4 bytes: 2^64 bytes, one more than `usize` holds.
fn size_overflow() -> Result<(), Failed> {
    let gpu = gpu()?;
    let overflow = |e: &Error| {
        matches!(
            e,
            Error::SizeOverflow {
                count,
                element_bytes: 4,
                ..
            } if *count == 1 << 62
        )
    };
    expect_err(gpu.zeros::<f32>(1 << 62), overflow)?;
    expect_err(gpu.poisoned::<f32>(1 << 62, 0.0), overflow)?;
    let symbol = gpu::smoke::C_SMOKE_COEFFICIENTS::SYMBOL;
    let mut constants = gpu.constant_memory().map_err(fail)?;
    expect_err(constants.read::<f32>(symbol, 1 << 62), overflow)?;
    drop(constants);
    // Nothing reached the driver: the handle still works.
    let d = gpu.upload(&[1.0f32, 2.0]).map_err(fail)?;
    match gpu.download(&d, "upload").map_err(fail)? {
        got if got == [1.0, 2.0] => Ok(()),
        got => Err(format!("downloaded {got:?}").into()),
    }
}

/// A second, non-primary context on device 0 (`cuCtxCreate`): its buffers are refused by a
/// handle on the primary context, and the message tells the two contexts apart.
fn second_context_on_one_device() -> Result<(), Failed> {
    let gpu = gpu()?;
    let other_ctx = CudaContext::new_non_primary(gpu.ordinal(), 0).map_err(fail)?;
    let other = Gpu::from_stream(other_ctx.new_stream().map_err(fail)?).map_err(fail)?;
    if other.context().cu_ctx() == gpu.context().cu_ctx() {
        return Err("cuCtxCreate returned the primary context".into());
    }
    let foreign = other.upload(&[1.0f32; 16]).map_err(fail)?;
    let mine = gpu.upload(&[1.0f32; 16]).map_err(fail)?;
    let mut out = gpu.poisoned(16, f32::NAN).map_err(fail)?;
    let expected_context = gpu.context().cu_ctx() as usize;
    let actual_context = other.context().cu_ctx() as usize;
    let refused = |what: &'static str| {
        move |e: &Error| {
            matches!(
                e,
                Error::WrongContext { what: w, expected: 0, actual: 0, expected_context: ec, actual_context: ac, .. }
                    if *w == what && *ec == expected_context && *ac == actual_context
            ) && e
                .to_string()
                .contains("a different context on the same device 0")
        }
    };
    expect_err(
        vector_add::add(&gpu, &foreign, &mine, &mut out),
        refused("x"),
    )?;
    expect_err(
        gpu.download(&foreign, "download"),
        refused("downloaded buffer"),
    )?;
    // The output was not written.
    let got = gpu.download(&out, "poisoned").map_err(fail)?;
    if got.iter().all(|x| x.is_nan()) {
        Ok(())
    } else {
        Err("the refused launch wrote its output".into())
    }
}

/// `download` of `slice(3..10)` is the host range; `upload_into` and `download_into` on views.
fn views() -> Result<(), Failed> {
    let gpu = gpu()?;
    let host: Vec<f32> = (0..20).map(|i| i as f32 * 1.5).collect();
    let mut d = gpu.upload(&host).map_err(fail)?;
    let got = gpu.download(&d.slice(3..10), "view").map_err(fail)?;
    if got != host[3..10] {
        return Err(format!(
            "slice(3..10) downloaded {got:?}, expected {:?}",
            &host[3..10]
        )
        .into());
    }
    let got = gpu.download(&d.slice_mut(15..), "view").map_err(fail)?;
    if got != host[15..] {
        return Err(format!("slice_mut(15..) downloaded {got:?}").into());
    }
    let patch = [-1.0f32, -2.0, -3.0];
    gpu.upload_into(&patch, &mut d.slice_mut(5..8))
        .map_err(fail)?;
    let mut expected = host.clone();
    expected[5..8].copy_from_slice(&patch);
    let mut whole = vec![0.0f32; 20];
    gpu.download_into(&d, &mut whole, "upload_into")
        .map_err(fail)?;
    if whole != expected {
        return Err(format!("after upload_into into 5..8: {whole:?}").into());
    }
    let mut short = [0.0f32; 6];
    expect_err(
        gpu.download_into(&d.slice(3..10), &mut short, "view"),
        |e| {
            matches!(
                e,
                Error::LengthMismatch {
                    what: "download destination",
                    expected: 7,
                    actual: 6, ..
                }
            )
        },
    )?;
    expect_err(gpu.upload_into(&patch, &mut d.slice_mut(0..2)), |e| {
        matches!(
            e,
            Error::LengthMismatch {
                what: "upload destination",
                expected: 3,
                actual: 2, ..
            }
        )
    })
}

/// Threads summing through clones of one handle (one kept workspace, taking turns) and through
/// handles of their own streams (one workspace each), every result exact.
fn shared_workspace() -> Result<(), Failed> {
    let gpu = gpu()?;
    let seed = seed_for("soundness::reduce_sum_shared_workspace");
    let inputs: Arc<Vec<Vec<i32>>> = Arc::new(
        (0..8)
            .map(|t| {
                let mut rng = StdRng::seed_from_u64(seed ^ t);
                (0..100_000 + 4099 * t as usize)
                    .map(|_| rng.random())
                    .collect()
            })
            .collect(),
    );
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let inputs = Arc::clone(&inputs);
            let handle = if t % 2 == 0 {
                Ok(gpu.clone())
            } else {
                gpu.with_new_stream()
            };
            std::thread::spawn(move || -> Result<(), String> {
                let handle = handle.map_err(|e| e.to_string())?;
                let input = &inputs[t];
                let d = handle.upload(input).map_err(|e| e.to_string())?;
                let mut scalar = handle.zeros::<i32>(1).map_err(|e| e.to_string())?;
                let expected = reference::sum_i32(input);
                for rep in 0..50 {
                    let got = if rep % 2 == 0 {
                        reduce::sum::<reduce::SumI32>(&handle, &d).map_err(|e| e.to_string())?
                    } else {
                        reduce::sum_into::<reduce::SumI32>(&handle, &d, &mut scalar)
                            .and_then(|_| handle.download(&scalar, "sum_into"))
                            .map_err(|e| e.to_string())?[0]
                    };
                    if got != expected {
                        return Err(format!(
                            "thread {t} rep {rep} seed={seed}: {got}, expected {expected}"
                        ));
                    }
                }
                Ok(())
            })
        })
        .collect();
    for t in threads {
        t.join().map_err(|_| "a thread panicked")??;
    }
    Ok(())
}

/// Every soundness trial.
pub fn trials() -> Vec<Trial> {
    vec![
        gpu_trial("soundness::size_overflow_2e62_f32".into(), size_overflow),
        gpu_trial(
            "soundness::second_context_on_one_device".into(),
            second_context_on_one_device,
        ),
        gpu_trial("soundness::download_and_upload_views".into(), views),
        gpu_trial(
            "soundness::reduce_sum_shared_workspace".into(),
            shared_workspace,
        ),
    ]
}
