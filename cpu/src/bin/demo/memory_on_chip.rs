//! `demo registers`, `demo shared-memory`, `demo bank-conflicts`, `demo constant-memory`,
//! `demo device-globals`: the on-chip topics of the memory hierarchy lab.

use anyhow::{Result, bail};
use clap::Subcommand;
use comfy_table::{Table, presets::ASCII_MARKDOWN};
use cpu::memory::{bank_conflicts, constant_memory, device_globals, registers, shared_memory};
use cpu::{Gpu, launch, timing, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Cli, Out, variant_name, verdict};

/// The on-chip memory topics.
#[derive(Subcommand)]
pub enum Topic {
    /// Registers vs local memory: a private array indexed at compile time vs at run time,
    /// timed, with each kernel's registers and local memory as the driver reports them.
    Registers {
        /// Threads (one element each; default 2^24).
        #[arg(long, default_value_t = 1 << 24)]
        size: usize,
    },
    /// The seed's static and dynamic shared-memory example (`u[i] = tmp[i]^2 + tmp[3-i]`),
    /// then both on random data in blocks of 256.
    SharedMemory {
        /// Elements of the random check (whole blocks of 256).
        #[arg(long, default_value_t = 1 << 20)]
        size: usize,
    },
    /// Shared-memory bank conflicts: strides, an odd stride, the padded tile, broadcast and
    /// multicast, in SM cycles per warp access.
    BankConflicts {
        /// Shared loads per thread.
        #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
        accesses: u32,
    },
    /// Constant memory: a table read uniformly and divergently from `__constant__`, global
    /// and read-only memory; and the seed's `devVar` example.
    ConstantMemory {
        /// Threads (default 2^20).
        #[arg(long, default_value_t = 1 << 20)]
        size: usize,
        /// Table reads per thread.
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
        reads: u32,
    },
    /// The seed's `__device__` globals example: `devU += devV` by symbol and by pointer.
    DeviceGlobals,
}

pub fn run(gpu: &Gpu, cli: &Cli, out: &mut Out, topic: &Topic) -> Result<()> {
    match *topic {
        Topic::Registers { size } => registers_demo(gpu, out, cli, size),
        Topic::SharedMemory { size } => shared_memory_demo(gpu, out, cli, size),
        Topic::BankConflicts { accesses } => bank_conflicts_demo(gpu, out, accesses),
        Topic::ConstantMemory { size, reads } => constant_memory_demo(gpu, out, cli, size, reads),
        Topic::DeviceGlobals => device_globals_demo(gpu, out, cli),
    }
}

fn registers_demo(gpu: &Gpu, out: &mut Out, cli: &Cli, size: usize) -> Result<()> {
    let ceiling = out.ceiling(gpu, cli.reps)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let x: Vec<u32> = (0..size).map(|_| rng.random()).collect();
    let expected = registers::reference(&x);
    let d_x = gpu.upload(&x)?;
    let mut table = Table::new();
    table.load_preset(ASCII_MARKDOWN).set_header([
        "kernel",
        "registers/thread",
        "local bytes/thread",
        "grid x block",
        "median ms",
        "GB/s (DRAM)",
        "% of memcpy",
        "verdict",
    ]);
    let mut failures = 0;
    for variant in registers::Variant::ALL {
        let kernel = variant.kernel_name();
        let resources = gpu.kernel_resources(kernel)?;
        let mut d_out = gpu.poisoned(size, 0xDEAD_BEEFu32)?;
        let cfg = registers::launch(gpu, variant, &d_x, &mut d_out)?;
        let check = verify::exact(&gpu.download(&d_out, kernel)?, &expected);
        failures += check.is_err() as usize;
        let t = timing::time_gpu(gpu, kernel, 3, cli.reps as usize, || {
            registers::launch(gpu, variant, &d_x, &mut d_out).map(drop)
        })?;
        let gbps = t.gbps(registers::bytes_moved(size));
        table.add_row([
            kernel.to_string(),
            resources.registers.to_string(),
            resources.local_bytes.to_string(),
            launch::describe(&cfg),
            format!("{:.3}", t.median_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            verdict(&check),
        ]);
    }
    println!(
        "registers vs local memory: {size} threads, a private array of {} u32 each (seed: \"local \
         memory ... 编译期无法确定数组的大小 / 运行时索引\"); registers and local bytes from the \
         driver (cuFuncGetAttribute, the loaded code); {} reps",
        gpu::memory::registers::ARRAY_LEN,
        cli.reps
    );
    println!("{table}");
    if failures > 0 {
        bail!("{failures} registers kernel(s) disagree with the CPU reference");
    }
    Ok(())
}

fn shared_memory_demo(gpu: &Gpu, out: &mut Out, cli: &Cli, size: usize) -> Result<()> {
    let mut table = Table::new();
    table.load_preset(ASCII_MARKDOWN).set_header([
        "declaration",
        "kernel",
        "launch",
        "input",
        "output",
        "verdict",
    ]);
    let mut failures = 0;
    let seed_expected = shared_memory::reference(&shared_memory::SEED_U, 4);
    for variant in shared_memory::Variant::ALL {
        let got = shared_memory::run(gpu, variant, &shared_memory::SEED_U, 4)?;
        let check = verify::exact(&got, &seed_expected);
        failures += check.is_err() as usize;
        table.add_row([
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
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let u: Vec<f32> = (0..size).map(|_| rng.random_range(-1e4..1e4)).collect();
    let expected = shared_memory::reference(&u, 256);
    for variant in shared_memory::Variant::ALL {
        let got = shared_memory::run(gpu, variant, &u, 256)?;
        let check = verify::exact(&got, &expected);
        failures += check.is_err() as usize;
        table.add_row([
            variant_name(variant),
            variant.kernel_name().to_string(),
            format!("<<<{}, 256>>>", size / 256),
            format!("{size} random floats"),
            "(compared element-wise)".into(),
            verdict(&check),
        ]);
    }
    println!(
        "shared memory, the seed's example: tmp[i] = u[i]; __syncthreads(); u[i] = tmp[i]*tmp[i] + \
         tmp[blockDim-1-i] (the seed prints 5 7 11 17; its missing barrier is added)"
    );
    println!("{table}");
    if failures > 0 {
        bail!("{failures} shared-memory run(s) disagree with the CPU reference");
    }
    Ok(())
}

fn bank_conflicts_demo(gpu: &Gpu, out: &mut Out, accesses: u32) -> Result<()> {
    let mut table = Table::new();
    table.load_preset(ASCII_MARKDOWN).set_header([
        "pattern",
        "word of lane l",
        "n-way (computed)",
        "cycles/access",
        "ns/access",
        "x stride 1",
        "verdict",
    ]);
    let mut failures = 0;
    let mut baseline = None;
    for p in bank_conflicts::PATTERNS {
        let m = bank_conflicts::measure(gpu, p.stride, p.group, accesses)?;
        failures += m.check.is_err() as usize;
        let base = *baseline.get_or_insert(m.cycles_per_access);
        table.add_row([
            p.name.to_string(),
            if p.group == 1 {
                format!("{} * l", p.stride)
            } else {
                format!("{} * (l / {})", p.stride, p.group)
            },
            bank_conflicts::conflict_degree(p.stride, p.group).to_string(),
            format!("{:.2}", m.cycles_per_access),
            format!("{:.2}", m.ns_per_access),
            format!("{:.1}", m.cycles_per_access / base),
            verdict(&m.check),
        ]);
    }
    println!(
        "shared-memory bank conflicts: {} threads per block, one block per SM, {accesses} \
         warp-wide 4-byte shared loads per thread; SM cycles (clock64) per warp access, median \
         over blocks; ns at the {} MHz peak SM clock",
        gpu::memory::bank_conflicts::BLOCK_SIZE,
        gpu.sm_clock_khz()? / 1000
    );
    println!("{table}");
    if failures > 0 {
        bail!("{failures} bank-conflict run(s) read wrong values");
    }
    Ok(())
}

fn constant_memory_demo(
    gpu: &Gpu,
    out: &mut Out,
    cli: &Cli,
    size: usize,
    reads: u32,
) -> Result<()> {
    use constant_memory::{Access, Table as ConstTable, Variant};
    let dev_var = constant_memory::dev_var_example(gpu, 100, 4)?;
    let seed_check = verify::exact(&dev_var, &[100, 101, 102, 103]);
    println!(
        "seed example: __constant__ int devVar = 100; xminus<<<1, 4>>>: {dev_var:?} (seed prints 100 101 102 103): {}",
        verdict(&seed_check)
    );
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let values: Vec<f32> = (0..gpu::memory::constant_memory::TABLE_LEN)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let table_data = ConstTable::new(gpu, &values)?;
    let mut table = Table::new();
    table.load_preset(ASCII_MARKDOWN).set_header([
        "table in",
        "lanes read",
        "kernel",
        "median ms",
        "G reads/s",
        "x constant uniform",
        "verdict",
    ]);
    let mut failures = seed_check.is_err() as usize;
    let mut baseline = None;
    let _lock = gpu.lock_constant_memory();
    table_data.write_constant(gpu)?;
    for access in Access::ALL {
        let expected = table_data.reference(size, access, reads);
        for variant in Variant::ALL {
            let kernel = variant.kernel_name();
            let mut out = gpu.poisoned(size, f32::NAN)?;
            table_data.launch(gpu, variant, access, reads, &mut out)?;
            let check = verify::exact(&gpu.download(&out, kernel)?, &expected);
            failures += check.is_err() as usize;
            let t = timing::time_gpu(gpu, kernel, 3, cli.reps as usize, || {
                table_data
                    .launch(gpu, variant, access, reads, &mut out)
                    .map(drop)
            })?;
            let base = *baseline.get_or_insert(t.median_ms);
            let greads = size as f64 * reads as f64 / (t.median_ms * 1e-3) / 1e9;
            table.add_row([
                variant_name(variant),
                match access {
                    Access::Uniform => "one word per warp".to_string(),
                    Access::Divergent => "32 words per warp".to_string(),
                },
                kernel.to_string(),
                format!("{:.3}", t.median_ms),
                format!("{greads:.1}"),
                format!("{:.2}", t.median_ms / base),
                verdict(&check),
            ]);
        }
    }
    println!(
        "constant memory: {size} threads x {reads} reads of a {}-float table (4 KiB, cached on \
         chip in every case); {} reps",
        gpu::memory::constant_memory::TABLE_LEN,
        cli.reps
    );
    println!("{table}");
    if failures > 0 {
        bail!("{failures} constant-memory run(s) disagree with the CPU reference");
    }
    Ok(())
}

fn device_globals_demo(gpu: &Gpu, out: &mut Out, cli: &Cli) -> Result<()> {
    use device_globals::{SEED_U, SEED_V};
    let expected = device_globals::reference(&SEED_U, &SEED_V);
    let by_symbol = device_globals::add_by_symbol(gpu, &SEED_U, &SEED_V)?;
    let by_pointer = device_globals::add_by_pointer(gpu, &SEED_U, &SEED_V)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let n = gpu::memory::device_globals::DEVICE_GLOBAL_LEN;
    let u: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
    let v: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
    let random_expected = device_globals::reference(&u, &v);
    let mut table = Table::new();
    table.load_preset(ASCII_MARKDOWN).set_header([
        "version",
        "kernel",
        "input",
        "hostU after",
        "verdict",
    ]);
    let mut failures = 0;
    let runs = [
        (
            "static: __device__ devU, devV by symbol",
            gpu::memory::device_globals::DEVICE_GLOBALS_ADD_SYMBOLS,
            by_symbol,
            &expected,
            "seed's {1,2,3,4} + {5,6,7,8}",
        ),
        (
            "dynamic: cudaMalloc'd buffers by pointer",
            gpu::memory::device_globals::DEVICE_GLOBALS_ADD_POINTERS,
            by_pointer,
            &expected,
            "seed's {1,2,3,4} + {5,6,7,8}",
        ),
        (
            "static, by symbol",
            gpu::memory::device_globals::DEVICE_GLOBALS_ADD_SYMBOLS,
            device_globals::add_by_symbol(gpu, &u, &v)?,
            &random_expected,
            "1024 random floats",
        ),
    ];
    for (version, kernel, got, want, input) in runs {
        let check = verify::exact(&got, want);
        failures += check.is_err() as usize;
        let shown = if got.len() <= 4 {
            format!("{got:?}")
        } else {
            "(compared element-wise)".into()
        };
        table.add_row([
            version.to_string(),
            kernel.to_string(),
            input.to_string(),
            shown,
            verdict(&check),
        ]);
    }
    println!(
        "device globals: the seed's addUV (devU[i] += devV[i]) through cudaMemcpyToSymbol / \
         FromSymbol, and add4f on device pointers (the seed prints 6 8 10 12)"
    );
    println!("{table}");
    if failures > 0 {
        bail!("{failures} device-globals run(s) disagree with the CPU reference");
    }
    Ok(())
}
