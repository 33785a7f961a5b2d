//! `demo device-globals`: the seed's `__device__` globals example, `devU += devV` by symbol and
//! by pointer.

use anyhow::{Result, bail};
use cpu::lab::memory::device_globals;
use cpu::{Gpu, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Footprint, SMALL, verdict};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, variant};
use crate::engine::report::{ChartKind, Table};

/// The seed's `__device__` globals example: `devU += devV` by symbol and by pointer.
#[derive(clap::Args)]
pub(crate) struct DeviceGlobals {}

impl Pattern for DeviceGlobals {
    const NAME: &'static str = "device-globals";

    fn variants() -> Vec<VariantInfo> {
        use gpu::memory::device_globals::kernels;
        vec![
            variant("by-symbol", &[kernels::device_globals_add_symbols.name()]),
            variant("by-pointer", &[kernels::device_globals_add_pointers.name()]),
        ]
    }

    fn sanitize() -> Vec<String> {
        vec![String::new()]
    }

    /// Fixed 1024-element arrays.
    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(Footprint::new("device-globals").device_bytes(SMALL)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        device_globals_demo(gpu, out, opts)
    }
}

fn device_globals_demo(gpu: &Gpu, out: &mut Out, opts: &Options) -> Result<()> {
    use device_globals::{SEED_U, SEED_V};
    let expected = device_globals::reference(&SEED_U, &SEED_V);
    let by_symbol = device_globals::add_by_symbol(gpu, &SEED_U, &SEED_V)?;
    let by_pointer = device_globals::add_by_pointer(gpu, &SEED_U, &SEED_V)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let n = gpu::memory::device_globals::DEVICE_GLOBAL_LEN;
    let u: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
    let v: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
    let random_expected = device_globals::reference(&u, &v);
    out.dump("seed_u", &[], &SEED_U)?;
    out.dump("seed_v", &[], &SEED_V)?;
    out.dump("u", &[], &u)?;
    out.dump("v", &[], &v)?;
    // Nothing here is timed: the rows are plain (the verdicts are in the cells, and a failure
    // ends the pattern with an error below).
    let mut table = Table::new(
        "versions",
        "device globals: the seed's addUV (devU[i] += devV[i]) through cudaMemcpyToSymbol / \
         FromSymbol, and add4f on device pointers (the seed prints 6 8 10 12)",
        ChartKind::None,
        ["version", "kernel", "input", "hostU after", "verdict"],
    );
    let mut failures = 0;
    let runs = [
        (
            "static: __device__ devU, devV by symbol",
            "seed_out_by_symbol",
            gpu::memory::device_globals::kernels::device_globals_add_symbols.name(),
            by_symbol,
            &expected,
            "seed's {1,2,3,4} + {5,6,7,8}",
        ),
        (
            "dynamic: cudaMalloc'd buffers by pointer",
            "seed_out_by_pointer",
            gpu::memory::device_globals::kernels::device_globals_add_pointers.name(),
            by_pointer,
            &expected,
            "seed's {1,2,3,4} + {5,6,7,8}",
        ),
        (
            "static, by symbol",
            "out_by_symbol",
            gpu::memory::device_globals::kernels::device_globals_add_symbols.name(),
            device_globals::add_by_symbol(gpu, &u, &v)?,
            &random_expected,
            "1024 random floats",
        ),
    ];
    for (version, dump_name, kernel, got, want, input) in runs {
        out.verify(dump_name, &[], &got, |_| ())?;
        let check = verify::exact(&got, want);
        failures += check.is_err() as usize;
        let shown = if got.len() <= 4 {
            format!("{got:?}")
        } else {
            "(compared element-wise)".into()
        };
        table.row([
            version.to_string(),
            kernel.to_string(),
            input.to_string(),
            shown,
            verdict(&check),
        ]);
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} device-globals run(s) disagree with the CPU reference");
    }
    Ok(())
}
