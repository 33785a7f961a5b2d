//! `demo shared-memory`: the seed's static and dynamic shared-memory example, then both on random
//! data in blocks of 256.

use anyhow::{Result, bail};
use cpu::lab::memory::shared_memory;
use cpu::{Gpu, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Footprint, SMALL, verdict};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant_name};
use crate::engine::report::{ChartKind, Table};

/// The seed's static and dynamic shared-memory example (`u[i] = tmp[i]^2 + tmp[3-i]`), then
/// both on random data in blocks of 256.
#[derive(clap::Args)]
pub(crate) struct SharedMemory {
    /// Elements of the random check (whole blocks of 256).
    #[arg(long, default_value_t = 1 << 20)]
    size: usize,
}

impl Pattern for SharedMemory {
    const NAME: &'static str = "shared-memory";

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&shared_memory::Variant::ALL, |v| v.kernel_name())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100096".into()]
    }

    /// With n rounded down to whole blocks of 256: the array, updated in place, on the device
    /// (4n); input, reference and output on the host (12n).
    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let n = self.size - self.size % 256;
        Ok(Some(
            Footprint::new(format!("shared-memory of {n} elements"))
                .device::<f32>(1, n)
                .device_bytes(SMALL)
                .host::<f32>(3, n),
        ))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        shared_memory_demo(gpu, out, opts, self.size)
    }
}

fn shared_memory_demo(gpu: &Gpu, out: &mut Out, opts: &Options, size: usize) -> Result<()> {
    // Nothing here is timed: the rows are plain (the verdicts are in the cells, and a failure
    // ends the pattern with an error below).
    let mut table = Table::new(
        "runs",
        "shared memory, the seed's example: tmp[i] = u[i]; __syncthreads(); u[i] = tmp[i]*tmp[i] + \
         tmp[blockDim-1-i] (the seed prints 5 7 11 17; its missing barrier is added)",
        ChartKind::None,
        [
            "declaration",
            "kernel",
            "launch",
            "input",
            "output",
            "verdict",
        ],
    );
    let mut failures = 0;
    out.dump("seed_u", &[], &shared_memory::SEED_U)?;
    let seed_expected = shared_memory::reference(&shared_memory::SEED_U, 4);
    for variant in shared_memory::Variant::ALL {
        let got = shared_memory::run(gpu, variant, &shared_memory::SEED_U, 4)?;
        out.verify(
            &format!("seed_out_{}", variant_name(variant)),
            &[],
            &got,
            |_| (),
        )?;
        let check = verify::exact(&got, &seed_expected);
        failures += check.is_err() as usize;
        table.row([
            variant_name(variant),
            variant.kernel_name().to_string(),
            format!(
                "<<<1, 4{}>>>",
                if variant == shared_memory::Variant::Dynamic {
                    ", 16"
                } else {
                    ""
                }
            ),
            format!("{:?}", shared_memory::SEED_U),
            format!("{got:?}"),
            verdict(&check),
        ]);
    }
    let size = size - size % 256;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let u: Vec<f32> = (0..size).map(|_| rng.random_range(-1e4..1e4)).collect();
    out.dump("u", &[], &u)?;
    let expected = shared_memory::reference(&u, 256);
    for variant in shared_memory::Variant::ALL {
        let got = shared_memory::run(gpu, variant, &u, 256)?;
        out.verify(&format!("out_{}", variant_name(variant)), &[], &got, |_| ())?;
        let check = verify::exact(&got, &expected);
        failures += check.is_err() as usize;
        table.row([
            variant_name(variant),
            variant.kernel_name().to_string(),
            format!("<<<{}, 256>>>", size / 256),
            format!("{size} random floats"),
            "(compared element-wise)".into(),
            verdict(&check),
        ]);
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} shared-memory run(s) disagree with the CPU reference");
    }
    Ok(())
}
