//! `demo registers`, `demo shared-memory`, `demo bank-conflicts`, `demo constant-memory`,
//! `demo device-globals`: the on-chip topics of the memory hierarchy lab.

use crate::engine::harness::{Footprint, Plan, SMALL};
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant};
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::Timing;
use anyhow::{Result, bail};
use cpu::lab::memory::{bank_conflicts, constant_memory, device_globals, registers, shared_memory};
use cpu::{Gpu, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::verdict;
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::variant_name;

/// Registers vs local memory: a private array indexed at compile time vs at run time, timed,
/// with each kernel's registers and local memory as the driver reports them.
#[derive(clap::Args)]
pub(crate) struct Registers {
    /// Threads (one element each; default 2^24).
    #[arg(long, default_value_t = 1 << 24)]
    size: usize,
}

impl Pattern for Registers {
    const NAME: &'static str = "registers";

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&registers::Variant::ALL, |v| v.kernel_name())
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003".into()]
    }

    /// Input and output on the device (8n bytes); input, reference and one downloaded output
    /// on the host (12n).
    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let size = self.size;
        Ok(Some(
            Footprint::new(format!("registers of {size} threads"))
                .device::<u32>(2, size)
                .host::<u32>(3, size)
                .with_ceiling(),
        ))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        registers_demo(gpu, out, opts, self.size)
    }
}

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

/// Shared-memory bank conflicts: strides, an odd stride, the padded tile, broadcast and
/// multicast, in SM cycles per warp access.
#[derive(clap::Args)]
pub(crate) struct BankConflicts {
    /// Shared loads per thread.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    accesses: u32,
}

impl Pattern for BankConflicts {
    const NAME: &'static str = "bank-conflicts";

    fn variants() -> Vec<VariantInfo> {
        bank_conflicts::PATTERNS
            .iter()
            .map(|p| variant(p.name, bank_conflicts::KERNELS))
            .collect()
    }

    fn sanitize() -> Vec<String> {
        vec!["--accesses 64".into()]
    }

    /// One block per SM, fixed small buffers.
    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let accesses = self.accesses;
        Ok(Some(
            Footprint::new(format!("bank-conflicts of {accesses} accesses")).device_bytes(SMALL),
        ))
    }

    fn run(&self, gpu: &Gpu, _opts: &Options, out: &mut Out) -> Result<()> {
        bank_conflicts_demo(gpu, out, self.accesses)
    }
}

/// Constant memory: a table read uniformly and divergently from `__constant__`, global and
/// read-only memory; and the seed's `devVar` example.
#[derive(clap::Args)]
pub(crate) struct ConstantMemory {
    /// Threads (default 2^20).
    #[arg(long, default_value_t = 1 << 20)]
    size: usize,
    /// Table reads per thread.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    reads: u32,
}

impl Pattern for ConstantMemory {
    const NAME: &'static str = "constant-memory";

    fn variants() -> Vec<VariantInfo> {
        let mut v = one_kernel_each(&constant_memory::Variant::ALL, |v| v.kernel_name());
        v.push(variant(
            "dev-var (seed example)",
            &[gpu::memory::constant_memory::kernels::constant_memory_dev_var.name()],
        ));
        v
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003 --reads 64".into()]
    }

    /// One output on the device (4n, and the 4 KiB table); one reference and one downloaded
    /// output on the host (8n).
    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let size = self.size;
        Ok(Some(
            Footprint::new(format!("constant-memory of {size} threads"))
                .device::<f32>(1, size)
                .device_bytes(SMALL)
                .host::<f32>(2, size),
        ))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        constant_memory_demo(gpu, out, opts, self.size, self.reads)
    }
}

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

fn registers_demo(gpu: &Gpu, out: &mut Out, opts: &Options, size: usize) -> Result<()> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let x: Vec<u32> = (0..size).map(|_| rng.random()).collect();
    out.dump("x", &[], &x)?;
    let expected = registers::reference(&x);
    let d_x = gpu.upload(&x)?;
    let bytes = registers::bytes_moved(size);
    let mut table = Table::new(
        "kernels",
        format!(
            "registers vs local memory: {size} threads, a private array of {} u32 each (seed: \"local \
             memory ... 编译期无法确定数组的大小 / 运行时索引\"); registers and local bytes from the \
             driver (cuFuncGetAttribute, the loaded code); {} reps",
            gpu::memory::registers::ARRAY_LEN,
            opts.reps
        ),
        ChartKind::Bars,
        [
            "kernel",
            "registers/thread",
            "local bytes/thread",
            "grid x block",
            "median ms",
            "GB/s (DRAM)",
            "% of memcpy",
            "verdict",
        ],
    );
    let mut failures = 0;
    for variant in registers::Variant::ALL {
        let kernel = variant.kernel_name();
        let resources = gpu.kernel_resources(kernel)?;
        let mut d_out = gpu.poisoned(size, 0xDEAD_BEEFu32)?;
        let trial = Plan::new(gpu, opts, kernel, kernel)
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| registers::launch(gpu, variant, &d_x, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, kernel)?;
                    out.verify(
                        &format!("out_{}", variant_name(variant)),
                        &[],
                        &got,
                        |got| verify::exact(got, &expected),
                    )
                },
            )?;
        failures += !trial.passed() as usize;
        let gbps = trial.gbps();
        let cells = [
            kernel.to_string(),
            resources.registers.to_string(),
            resources.local_bytes.to_string(),
            trial.grid_block(),
            format!("{:.3}", trial.timing.median_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            trial.verdict(),
        ];
        let m = trial
            .measurement
            .extra("registers_per_thread", f64::from(resources.registers))
            .extra("local_bytes_per_thread", f64::from(resources.local_bytes));
        table.measured_row(cells, m);
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} registers kernel(s) disagree with the CPU reference");
    }
    Ok(())
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

fn bank_conflicts_demo(gpu: &Gpu, out: &mut Out, accesses: u32) -> Result<()> {
    use gpu::memory::bank_conflicts::{BLOCK_SIZE, kernels::bank_conflicts_read};
    // The kernel's buffers are downloaded and checked inside `bank_conflicts::measure`; the
    // demo gets no array back, so nothing is dumped.
    let mut table = Table::new(
        "patterns",
        format!(
            "shared-memory bank conflicts: {} threads per block, one block per SM, {accesses} \
             warp-wide 4-byte shared loads per thread; SM cycles (clock64) per warp access, median \
             over blocks; ns at the {} MHz peak SM clock",
            BLOCK_SIZE,
            gpu.sm_clock_khz()? / 1000
        ),
        ChartKind::Bars,
        [
            "pattern",
            "word of lane l",
            "n-way (computed)",
            "cycles/access",
            "ns/access",
            "x stride 1",
            "verdict",
        ],
    )
    .chart_extra("cycles_per_access");
    let warps = f64::from(BLOCK_SIZE / 32);
    let mut failures = 0;
    let mut baseline = None;
    for p in bank_conflicts::PATTERNS {
        let m = bank_conflicts::measure(gpu, p.stride, p.group, accesses)?;
        failures += m.check.is_err() as usize;
        let base = *baseline.get_or_insert(m.cycles_per_access);
        let ways = bank_conflicts::conflict_degree(p.stride, p.group);
        // One launch, timed by clock64 inside each block: the time is the median block's loop
        // (every warp's `accesses` loads) at the peak SM clock. The library returns only the
        // median, so min and max equal it.
        let block_ms = m.ns_per_access * f64::from(accesses) * warps * 1e-6;
        let t = Timing {
            median_ms: block_ms,
            min_ms: block_ms,
            max_ms: block_ms,
            reps: 1,
        };
        table.measured_row(
            [
                p.name.to_string(),
                if p.group == 1 {
                    format!("{} * l", p.stride)
                } else {
                    format!("{} * (l / {})", p.stride, p.group)
                },
                ways.to_string(),
                format!("{:.2}", m.cycles_per_access),
                format!("{:.2}", m.ns_per_access),
                format!("{:.1}", m.cycles_per_access / base),
                verdict(&m.check),
            ],
            Measurement::new(p.name, &t)
                .kernel(bank_conflicts_read.name())
                .extra("conflict_ways", f64::from(ways))
                .extra("cycles_per_access", m.cycles_per_access)
                .extra("ns_per_access", m.ns_per_access)
                .extra("x_stride_1", m.cycles_per_access / base)
                .passed(m.check.is_ok()),
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} bank-conflict run(s) read wrong values");
    }
    Ok(())
}

fn constant_memory_demo(
    gpu: &Gpu,
    out: &mut Out,
    opts: &Options,
    size: usize,
    reads: u32,
) -> Result<()> {
    use constant_memory::{Access, Table as ConstTable, Variant};
    let dev_var = constant_memory::dev_var_example(gpu, 100, 4)?;
    out.verify("dev_var", &[], &dev_var, |_| ())?;
    let seed_check = verify::exact(&dev_var, &[100, 101, 102, 103]);
    out.line(format!(
        "seed example: __constant__ int devVar = 100; xminus<<<1, 4>>>: {dev_var:?} (seed prints 100 101 102 103): {}",
        verdict(&seed_check)
    ));
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let values: Vec<f32> = (0..gpu::memory::constant_memory::TABLE_LEN)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    out.dump("table", &[], &values)?;
    let table_data = ConstTable::new(gpu, &values)?;
    let mut table = reads_table(size, reads, opts.reps);
    let mut failures = seed_check.is_err() as usize;
    let mut baseline = None;
    let mut constants = gpu.constant_memory()?;
    table_data.write_constant(&mut constants)?;
    for access in Access::ALL {
        let expected = table_data.reference(size, access, reads);
        for variant in Variant::ALL {
            let kernel = variant.kernel_name();
            let mut d_out = gpu.poisoned(size, f32::NAN)?;
            let trial = Plan::new(gpu, opts, variant_name(variant), kernel).run(
                &mut d_out,
                |d_out| table_data.launch(gpu, variant, access, reads, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, kernel)?;
                    let name = format!("out_{}_{}", variant_name(variant), variant_name(access));
                    out.verify(&name, &[], &got, |got| verify::exact(got, &expected))
                },
            )?;
            failures += !trial.passed() as usize;
            let ms = trial.timing.median_ms;
            let base = *baseline.get_or_insert(ms);
            let greads = size as f64 * reads as f64 / (ms * 1e-3) / 1e9;
            let cells = [
                variant_name(variant),
                match access {
                    Access::Uniform => "one word per warp".to_string(),
                    Access::Divergent => "32 words per warp".to_string(),
                },
                kernel.to_string(),
                format!("{ms:.3}"),
                format!("{greads:.1}"),
                format!("{:.2}", ms / base),
                trial.verdict(),
            ];
            let m = trial
                .measurement
                .series(variant_name(access))
                .extra("g_reads_per_s", greads)
                .extra("x_constant_uniform", ms / base);
            table.measured_row(cells, m);
        }
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} constant-memory run(s) disagree with the CPU reference");
    }
    Ok(())
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

/// The reads table: one row per access pattern and memory the table is in.
fn reads_table(size: usize, reads: u32, reps: u32) -> Table {
    Table::new(
        "reads",
        format!(
            "constant memory: {size} threads x {reads} reads of a {}-float table (4 KiB, cached on \
         chip in every case); {} reps",
            gpu::memory::constant_memory::TABLE_LEN,
            reps
        ),
        ChartKind::Bars,
        [
            "table in",
            "lanes read",
            "kernel",
            "median ms",
            "G reads/s",
            "x constant uniform",
            "verdict",
        ],
    )
}
