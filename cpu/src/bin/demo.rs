//! `demo`: runs the lab's patterns on an NVIDIA GPU, checks every output against the CPU
//! reference and prints tables like the seed posts', with each bandwidth beside the same run's
//! device-to-device memcpy bandwidth.
//!
//! `cargo run --release --bin demo -- <pattern> [--size N] [--reps R] [--device D]`;
//! `demo list` lists the patterns and their variants.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use comfy_table::{Table, presets::ASCII_MARKDOWN};
use cpu::timing::{self, CEILING_COPY_BYTES, Ceiling};
use cpu::{Gpu, launch, smoke, transpose, vector_add, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Parser)]
#[command(
    version,
    about = "GPU parallel patterns in Rust: run, verify and time each kernel"
)]
struct Cli {
    /// CUDA device index.
    #[arg(long, global = true, default_value_t = 0)]
    device: usize,
    /// Timed repetitions per kernel (the median is reported).
    #[arg(long, global = true, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Seed of the random inputs.
    #[arg(long, global = true, default_value_t = 2026)]
    seed: u64,
    #[command(subcommand)]
    pattern: Pattern,
}

#[derive(Subcommand)]
enum Pattern {
    /// List the patterns and their variants (kernels).
    List,
    /// z = x + y on f32: the seed's toy launch, then every variant at a large size, timed.
    VectorAdd {
        /// Elements (default 2^26: 768 MiB moved per launch, far beyond the L2 cache).
        #[arg(long, default_value_t = 1 << 26)]
        size: usize,
    },
    /// Matrix transpose: the seed's five versions, a copy baseline and the tiled kernels, timed.
    Transpose {
        /// Rows of the input matrix.
        #[arg(long, default_value_t = 8192)]
        rows: usize,
        /// Columns of the input matrix.
        #[arg(long, default_value_t = 8192)]
        cols: usize,
    },
    /// One kernel per device-support feature, each checked against the CPU.
    Smoke {
        /// Elements per smoke kernel (not a multiple of the block size by default).
        #[arg(long, default_value_t = 100_003)]
        size: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<()> {
    if let Pattern::List = cli.pattern {
        list();
        return Ok(());
    }
    let gpu = Gpu::new(cli.device)?;
    let (major, minor) = gpu.compute_capability()?;
    println!(
        "device {}: {} (compute capability {major}.{minor}, {} SMs), PTX sm_{}",
        cli.device,
        gpu.name()?,
        gpu.sm_count()?,
        gpu.ptx_arch()
    );
    match cli.pattern {
        Pattern::List => unreachable!("handled above"),
        Pattern::VectorAdd { size } => vector_add_demo(&gpu, cli, size),
        Pattern::Smoke { size } => smoke_demo(&gpu, cli, size),
        Pattern::Transpose { rows, cols } => transpose_demo(&gpu, cli, rows, cols),
    }
}

fn list() {
    let mut table = Table::new();
    table
        .load_preset(ASCII_MARKDOWN)
        .set_header(["pattern", "variant", "kernel"]);
    for v in vector_add::Variant::ALL {
        table.add_row(["vector-add", &variant_name(v), v.kernel_name()]);
    }
    for v in transpose::Variant::ALL {
        table.add_row(["transpose", &variant_name(v), v.kernel_name()]);
    }
    for v in smoke::Variant::ALL {
        table.add_row(["smoke", &variant_name(v), v.kernel_name()]);
    }
    println!("{table}");
}

fn variant_name(v: impl clap::ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

fn ceiling(gpu: &Gpu, reps: u32) -> Result<Ceiling> {
    let c = timing::memcpy_ceiling(gpu, CEILING_COPY_BYTES, 3, reps as usize)?;
    println!(
        "memcpy ceiling: device-to-device copy of {} MiB, median {:.3} ms, {:.1} GB/s (bytes read + written)",
        CEILING_COPY_BYTES >> 20,
        c.timing.median_ms,
        c.gbps
    );
    Ok(c)
}

fn vector_add_demo(gpu: &Gpu, cli: &Cli, size: usize) -> Result<()> {
    use gpu::vector_add::{SEED_BLOCK, SEED_GRID, SEED_N};
    let mut rng = StdRng::seed_from_u64(cli.seed);

    // The seed's toy: N = 1024, x[10] = y[10] = 100, add<<<8, 128>>>, print z[10].
    let mut x: Vec<f32> = (0..SEED_N).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut y: Vec<f32> = (0..SEED_N).map(|_| rng.random_range(-1.0..1.0)).collect();
    (x[10], y[10]) = (100.0, 100.0);
    let (d_x, d_y) = (gpu.upload(&x)?, gpu.upload(&y)?);
    let mut d_z = gpu.poisoned(SEED_N, f32::NAN)?;
    let toy = launch::linear(SEED_GRID, SEED_BLOCK, 0);
    vector_add::launch_with_config(
        gpu,
        vector_add::Variant::VectorAdd,
        &d_x,
        &d_y,
        &mut d_z,
        toy,
    )?;
    let z = gpu.download(&d_z, "vector_add")?;
    let toy_check = verify::exact(&z, &vector_add::reference(&x, &y));
    println!(
        "seed toy: N = {SEED_N}, add<<<{SEED_GRID}, {SEED_BLOCK}>>>: z[10] = {} (seed prints 200); all {SEED_N} outputs vs CPU: {}",
        z[10],
        verdict(&toy_check)
    );

    let ceiling = ceiling(gpu, cli.reps)?;
    let x: Vec<f32> = (0..size).map(|_| rng.random_range(-1.0..1.0)).collect();
    let y: Vec<f32> = (0..size).map(|_| rng.random_range(-1.0..1.0)).collect();
    let expected = vector_add::reference(&x, &y);
    let (d_x, d_y) = (gpu.upload(&x)?, gpu.upload(&y)?);
    let bytes = vector_add::bytes_moved(size);

    let mut table = Table::new();
    table.load_preset(ASCII_MARKDOWN).set_header([
        "variant",
        "grid x block",
        "median ms",
        "min ms",
        "GB/s",
        "% of memcpy",
        "max abs err",
        "verdict",
    ]);
    let mut failures = 0;
    for variant in vector_add::Variant::ALL {
        let mut d_z = gpu.poisoned(size, f32::NAN)?;
        let cfg = vector_add::launch(gpu, variant, &d_x, &d_y, &mut d_z)?;
        let got = gpu.download(&d_z, variant.kernel_name())?;
        let check = verify::exact(&got, &expected);
        failures += check.is_err() as usize;
        let t = timing::time_gpu(gpu, variant.kernel_name(), 3, cli.reps as usize, || {
            vector_add::launch(gpu, variant, &d_x, &d_y, &mut d_z).map(drop)
        })?;
        let gbps = t.gbps(bytes);
        let err = got
            .iter()
            .zip(&expected)
            .map(|(g, e)| (g - e).abs())
            .fold(0.0f32, f32::max);
        table.add_row([
            variant_name(variant),
            launch::describe(&cfg),
            format!("{:.3}", t.median_ms),
            format!("{:.3}", t.min_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            format!("{err:e}"),
            verdict(&check),
        ]);
    }
    println!(
        "vector add, N = {size} f32 ({:.0} MiB moved per launch: 2 reads + 1 write), {} reps",
        bytes as f64 / (1 << 20) as f64,
        cli.reps
    );
    println!("{table}");
    if failures > 0 || toy_check.is_err() {
        bail!("{failures} vector-add variant(s) disagree with the CPU reference");
    }
    Ok(())
}

fn transpose_demo(gpu: &Gpu, cli: &Cli, rows: usize, cols: usize) -> Result<()> {
    let n = rows.checked_mul(cols).context("rows x cols overflows")?;
    let ceiling = ceiling(gpu, cli.reps)?;
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.random()).collect();
    let expected = transpose::reference(&input, rows, cols);
    let d_in = gpu.upload(&input)?;
    let bytes = transpose::bytes_moved(rows, cols);
    let seed_size = rows == 8192 && cols == 8192;

    let mut table = Table::new();
    table.load_preset(ASCII_MARKDOWN).set_header([
        "variant",
        "seed",
        "grid x block",
        "median ms",
        "GB/s",
        "% of memcpy",
        "seed laptop ms",
        "verdict",
    ]);
    let mut failures = 0;
    for variant in transpose::Variant::ALL {
        let seed_cols = variant.seed().map_or(("-".into(), "-".into()), |(v, ms)| {
            (
                format!("v{v}"),
                if seed_size {
                    format!("{ms:.2}")
                } else {
                    "(8192 only)".into()
                },
            )
        });
        if !variant.supports(rows, cols) {
            table.add_row([
                variant_name(variant),
                seed_cols.0,
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                seed_cols.1,
                "skipped: needs rows, cols multiples of 4".into(),
            ]);
            continue;
        }
        let mut d_out = gpu.poisoned(n, f32::NAN)?;
        let cfg = transpose::launch(gpu, variant, &d_in, &mut d_out, rows, cols)?;
        let got = gpu.download(&d_out, variant.kernel_name())?;
        let check = verify::exact(
            &got,
            if variant.transposes() {
                &expected
            } else {
                &input
            },
        );
        failures += check.is_err() as usize;
        let t = timing::time_gpu(gpu, variant.kernel_name(), 3, cli.reps as usize, || {
            transpose::launch(gpu, variant, &d_in, &mut d_out, rows, cols).map(drop)
        })?;
        let gbps = t.gbps(bytes);
        table.add_row([
            variant_name(variant),
            seed_cols.0,
            launch::describe(&cfg),
            format!("{:.3}", t.median_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            seed_cols.1,
            verdict(&check),
        ]);
    }
    println!(
        "transpose, {rows} x {cols} f32 ({:.0} MiB moved per launch: 1 read + 1 write), {} reps; best for this shape: {}",
        bytes as f64 / (1 << 20) as f64,
        cli.reps,
        variant_name(transpose::best_variant(rows, cols))
    );
    println!("{table}");
    if failures > 0 {
        bail!("{failures} transpose variant(s) disagree with the CPU reference");
    }
    Ok(())
}

fn smoke_demo(gpu: &Gpu, cli: &Cli, size: usize) -> Result<()> {
    let mut table = Table::new();
    table
        .load_preset(ASCII_MARKDOWN)
        .set_header(["kernel", "feature", "n", "seed", "verdict"]);
    let mut failures = 0;
    for variant in smoke::Variant::ALL {
        let outcome = smoke::check(gpu, variant, size, cli.seed)
            .with_context(|| format!("smoke kernel {}", variant.kernel_name()))?;
        failures += outcome.result.is_err() as usize;
        table.add_row([
            variant.kernel_name().to_string(),
            variant.feature().to_string(),
            outcome.n.to_string(),
            outcome.seed.to_string(),
            verdict(&outcome.result),
        ]);
    }
    println!("{table}");
    if failures > 0 {
        bail!("{failures} smoke kernel(s) disagree with the CPU reference");
    }
    Ok(())
}

fn verdict(check: &Result<(), verify::Mismatch>) -> String {
    match check {
        Ok(()) => "PASS".into(),
        Err(m) => format!("FAIL: {m}"),
    }
}
