//! [`gpu_host::Module`] (the kit's, `cpu::Module`): a kernel crate's PTX loaded on a handle's
//! context, its kernels launched against it: the lab's own `gpu` crate loaded as a module of its
//! own from its PTX table (the architecture picked for the device), `saxpy` (a safe kernel)
//! launched on it without `unsafe` and checked against the CPU at an odd size, and the refusal
//! of a stale PTX before the driver sees it.

use cpu::{Error, Module};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn fail(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

/// The embedded PTX for the device, as a user's program would embed its own.
fn device_ptx(gpu: &cpu::Gpu) -> Result<&'static str, Failed> {
    let (major, minor) = gpu.compute_capability().map_err(fail)?;
    cpu::ptx::for_compute_capability(major, minor)
        .map(|(_, text)| text)
        .ok_or_else(|| "no PTX for this device".into())
}

fn saxpy_on_a_module() -> Result<(), Failed> {
    let gpu = gpu()?;
    let module = Module::from_table(gpu.device(), "gpu", cpu::ptx::PTX_BY_ARCH).map_err(fail)?;
    assert!(module.entries().iter().any(|e| e == "saxpy"));
    let n = 100_003;
    let seed = seed_for("modules::saxpy");
    let mut rng = StdRng::seed_from_u64(seed);
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let d_x = gpu.upload(&x).map_err(fail)?;
    let mut d_y = gpu.upload(&y).map_err(fail)?;
    let cfg = cudarc::driver::LaunchConfig::for_num_elems(n as u32);
    // A safe kernel: no `unsafe`.
    module
        .launch(gpu::saxpy::kernels::saxpy, cfg, (2.5f32, &d_x, &mut d_y))
        .map_err(fail)?;
    let got = gpu.download(&d_y, "y").map_err(fail)?;
    for i in 0..n {
        let expected = 2.5f32.mul_add(x[i], y[i]);
        if got[i] != expected {
            return Err(format!("saxpy on a module, seed {seed}: y[{i}] = {} not {expected}", got[i]).into());
        }
    }
    Ok(())
}

fn stale_ptx_is_refused() -> Result<(), Failed> {
    let gpu = gpu()?;
    let text = device_ptx(&gpu)?;
    let stale = text.replace(".entry saxpy(", ".entry saxpy_old(");
    expect_err(Module::from_ptx(gpu.device(), "gpu", &stale).map_err(Error::from), |e| {
        matches!(e, Error::StalePtx { .. })
    })?;
    expect_err(Module::from_ptx(gpu.device(), "not_linked", text).map_err(Error::from), |e| {
        matches!(e, Error::NoKernels { .. })
    })?;
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        gpu_trial("modules::saxpy_100003".into(), saxpy_on_a_module),
        gpu_trial("modules::stale_ptx_refused".into(), stale_ptx_is_refused),
    ]
}
