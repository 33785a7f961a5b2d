//! [`gpu_host::Module`] (the kit's, `cpu::Module`): a kernel crate's kernels on a handle's
//! context, launched against it: the lab's own `gpu` crate loaded from its kernel table (each
//! PTX module on first use, from the image picked for the device), `saxpy` (a safe kernel)
//! launched on it without `unsafe` and checked against the CPU at an odd size; a new library
//! loads only the module of the kernel launched; a module whose image the driver refuses is an
//! error naming it, at every launch; a stale PTX is refused before the driver sees it.

use cpu::{Error, Module};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn fail(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

/// The device's PTX of the module `name` (not its SASS), decompressed.
fn module_ptx(gpu: &cpu::Gpu, name: &str) -> Result<String, Failed> {
    let (major, minor) = gpu.compute_capability().map_err(fail)?;
    let module = cpu::ptx::KERNELS.module(name).ok_or("no such module")?;
    let image = module.pick(major, minor, false).ok_or("no PTX for this device")?;
    let bytes = image.decode(name).map_err(fail)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn saxpy_on_a_module() -> Result<(), Failed> {
    let gpu = gpu()?;
    let module = Module::from_table(gpu.device(), &cpu::ptx::KERNELS).map_err(fail)?;
    assert!(module.entries().contains(&"saxpy"));
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

/// A library made now has loaded nothing; launching `saxpy` loads its module alone, from the
/// image the device picks (SASS on sm_80 and sm_90 devices).
fn modules_load_on_first_use() -> Result<(), Failed> {
    let gpu = gpu()?;
    let library = std::sync::Arc::new(
        gpu_host::Library::new(gpu.context(), &cpu::ptx::KERNELS).map_err(fail)?,
    );
    if !library.loaded_modules().is_empty() {
        return Err(format!("loaded before any launch: {:?}", library.loaded_modules()).into());
    }
    let module = Module::from_library(gpu.device(), library.clone());
    let x = gpu.upload(&[1.0f32; 33]).map_err(fail)?;
    let mut y = gpu.upload(&[2.0f32; 33]).map_err(fail)?;
    let cfg = cudarc::driver::LaunchConfig::for_num_elems(33);
    module
        .launch(gpu::saxpy::kernels::saxpy, cfg, (3.0f32, &x, &mut y))
        .map_err(fail)?;
    let got = gpu.download(&y, "y").map_err(fail)?;
    if got.iter().any(|&v| v != 5.0) {
        return Err(format!("saxpy through a fresh library: {got:?}").into());
    }
    let loaded = library.loaded_modules();
    let expected = library.image("saxpy").map_err(fail)?.to_string();
    if loaded != [("saxpy", expected.clone())] {
        return Err(format!("loaded {loaded:?}, expected only saxpy from {expected}").into());
    }
    let (major, _) = gpu.compute_capability().map_err(fail)?;
    let sass_built = cpu::ptx::built_archs().contains("SASS");
    if sass_built && (major == 8 || major == 9) && !expected.ends_with("SASS") {
        return Err(format!("an sm_{major}x device loads {expected}, not SASS").into());
    }
    Ok(())
}

/// A module whose image the driver refuses: the launch is [`gpu_host::Error::ModuleLoad`]
/// naming the module and image, every time (the load is tried again), and the other modules
/// still load.
fn a_module_that_fails_to_load_is_named() -> Result<(), Failed> {
    use gpu_host::{Encoding, Image, ImageBytes, ImageFormat, KernelTable, ModuleTable};
    let gpu = gpu()?;
    static GARBAGE: [Image; 1] = [Image {
        sm: 70,
        format: ImageFormat::Ptx,
        encoding: Encoding::Plain,
        bytes: ImageBytes::Embedded(b"this is not PTX"),
    }];
    let modules: Vec<ModuleTable> = cpu::ptx::KERNELS
        .modules
        .iter()
        .map(|m| ModuleTable {
            name: m.name,
            entries: m.entries,
            globals: m.globals,
            images: if m.name == "saxpy" { &GARBAGE } else { m.images },
        })
        .collect();
    let table: &'static KernelTable = Box::leak(Box::new(KernelTable {
        krate: "gpu",
        modules: Box::leak(modules.into_boxed_slice()),
    }));
    let module = Module::from_table(gpu.device(), table).map_err(fail)?;
    let x = gpu.upload(&[1.0f32; 4]).map_err(fail)?;
    let mut y = gpu.upload(&[2.0f32; 4]).map_err(fail)?;
    let cfg = cudarc::driver::LaunchConfig::for_num_elems(4);
    for attempt in 0..2 {
        match module.launch(gpu::saxpy::kernels::saxpy, cfg, (1.0f32, &x, &mut y)) {
            Err(gpu_host::Error::ModuleLoad { module, image, .. })
                if module == "gpu::saxpy" && image == "sm_70 PTX" => {}
            other => return Err(format!("attempt {attempt}: {other:?}").into()),
        }
    }
    module.function("vector_add").map_err(fail)?;
    match module.cuda_module_holding("no_such_kernel") {
        Err(gpu_host::Error::NotInTable { name, .. }) if name == "no_such_kernel" => Ok(()),
        other => Err(format!("{other:?}").into()),
    }
}

fn stale_ptx_is_refused() -> Result<(), Failed> {
    let gpu = gpu()?;
    let text = module_ptx(&gpu, "saxpy")?;
    // One module's PTX lacks the crate's other kernels: refused before the driver sees it.
    expect_err(Module::from_ptx(gpu.device(), "gpu", &text).map_err(Error::from), |e| {
        matches!(e, Error::StalePtx { .. })
    })?;
    expect_err(Module::from_ptx(gpu.device(), "not_linked", &text).map_err(Error::from), |e| {
        matches!(e, Error::NoKernels { .. })
    })?;
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        gpu_trial("modules::saxpy_100003".into(), saxpy_on_a_module),
        gpu_trial("modules::stale_ptx_refused".into(), stale_ptx_is_refused),
        gpu_trial("modules::load_on_first_use".into(), modules_load_on_first_use),
        gpu_trial("modules::failed_load_is_named".into(), a_module_that_fails_to_load_is_named),
    ]
}
