//! `demo`: runs the lab's patterns on an NVIDIA GPU, checks every output against the CPU
//! reference and prints tables like the seed posts', with each bandwidth beside the same run's
//! device-to-device memcpy bandwidth.
//!
//! `cargo run --release --bin demo -- <pattern> [--size N] [--reps R] [--device D]`;
//! `demo list` lists the patterns and their variants.

use std::path::PathBuf;
use std::process::ExitCode;

mod convolution;
mod memory_on_chip;
mod memory_traffic;
mod reduction;
mod smoke;
mod transpose;
mod vector_add;

use anyhow::Result;
use clap::{Parser, Subcommand};
use comfy_table::{Table, presets::ASCII_MARKDOWN};
use cpu::timing::{self, CEILING_COPY_BYTES, Ceiling};
use cpu::{Gpu, verify};

#[derive(Parser)]
#[command(
    version,
    about = "GPU parallel patterns in Rust: run, verify and time each kernel"
)]
pub(crate) struct Cli {
    /// CUDA device index.
    #[arg(long, global = true, default_value_t = 0)]
    pub device: usize,
    /// Timed repetitions per kernel (the median is reported).
    #[arg(long, global = true, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// Seed of the random inputs.
    #[arg(long, global = true, default_value_t = 2026)]
    pub seed: u64,
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
    /// Parallel reduction: the seed's nine kernels (table as in the seed), the template kernel
    /// per block size, and `reduce_sum` (i32, f32, f32 in f64) at 2^20 and 2^26 elements.
    #[command(alias = "reduction")]
    Reduce {
        /// Elements (default 2^24 i32, as the seed).
        #[arg(long, default_value_t = gpu::reduction::SEED_N)]
        size: usize,
        /// Threads per block of the seed kernels (a power of two, 64..=1024 for all of them).
        #[arg(long, default_value_t = gpu::reduction::SEED_BLOCK)]
        block: u32,
    },
    /// Sum of squares: the seed's seven versions and the one-launch version.
    SquareSum {
        /// Elements (default 1048576 i32, the seed's DATA_SIZE).
        #[arg(long, default_value_t = gpu::square_sum::DATA_SIZE)]
        size: usize,
    },
    #[command(flatten)]
    OnChip(memory_on_chip::Topic),
    #[command(flatten)]
    Traffic(memory_traffic::Topic),
    /// 1D convolution: the seed's four kernels (basic, __constant__ mask, tiled halo, cached
    /// halo) and the vec4 tile, verified and timed.
    Conv1d {
        /// Elements (default 2^26: 512 MiB moved per launch).
        #[arg(long, default_value_t = 1 << 26)]
        size: usize,
        /// Mask width (odd, 1..=31).
        #[arg(long, default_value_t = 7)]
        mask_width: usize,
    },
    /// 2D convolution: basic, __constant__ mask, tiled halo and the vec4 tile on a random image,
    /// timed; then a PNG (or a generated picture) filtered with a named mask.
    Conv2d {
        /// Rows of the random image of the timed table.
        #[arg(long, default_value_t = 4096)]
        rows: usize,
        /// Columns of the random image of the timed table.
        #[arg(long, default_value_t = 4096)]
        cols: usize,
        /// Mask width of the timed table (odd, 1..=9).
        #[arg(long, default_value_t = 5)]
        mask_width: usize,
        /// PNG to filter (read as grayscale); without it, a generated 640 x 480 test picture.
        #[arg(long)]
        image: Option<PathBuf>,
        /// Named mask the picture is filtered with.
        #[arg(long, value_enum, default_value = "sobel-x")]
        mask: cpu::convolution::NamedMask,
        /// Where to write the filtered picture (grayscale PNG; derivative masks as magnitude).
        #[arg(long)]
        out: Option<PathBuf>,
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
        Pattern::VectorAdd { size } => vector_add::run(&gpu, cli, size),
        Pattern::Smoke { size } => smoke::run(&gpu, cli, size),
        Pattern::Reduce { size, block } => reduction::run(&gpu, cli, size, block),
        Pattern::SquareSum { size } => reduction::run_square_sum(&gpu, cli, size),
        Pattern::OnChip(ref topic) => memory_on_chip::run(&gpu, cli, topic),
        Pattern::Traffic(ref topic) => memory_traffic::run(&gpu, cli, topic),
        Pattern::Transpose { rows, cols } => transpose::run(&gpu, cli, rows, cols),
        Pattern::Conv1d { size, mask_width } => convolution::run_1d(&gpu, cli, size, mask_width),
        Pattern::Conv2d {
            rows,
            cols,
            mask_width,
            ref image,
            mask,
            ref out,
        } => convolution::run_2d(
            &gpu,
            cli,
            convolution::Conv2dArgs {
                rows,
                cols,
                mask_width,
                image: image.as_deref(),
                mask,
                out: out.as_deref(),
            },
        ),
    }
}

fn list() {
    let mut table = Table::new();
    table
        .load_preset(ASCII_MARKDOWN)
        .set_header(["pattern", "variant", "kernel"]);
    for v in cpu::vector_add::Variant::ALL {
        table.add_row(["vector-add", &variant_name(v), v.kernel_name()]);
    }
    for v in cpu::transpose::Variant::ALL {
        table.add_row(["transpose", &variant_name(v), v.kernel_name()]);
    }
    for v in cpu::reduction::Variant::ALL {
        let kernels = match v {
            cpu::reduction::Variant::CompleteUnroll => gpu::reduction::REDUCE_COMPLETE_UNROLL
                .iter()
                .map(|(_, name)| *name)
                .collect::<Vec<_>>()
                .join(", "),
            _ => v.kernel_name().to_string(),
        };
        table.add_row(["reduce", &variant_name(v), &kernels]);
    }
    for v in cpu::reduction::SumVariant::ALL {
        table.add_row(["reduce", "reduce-sum", v.kernel_name()]);
    }
    for v in cpu::square_sum::Variant::ALL {
        table.add_row(["square-sum", &variant_name(v), v.kernel_name()]);
    }
    for v in cpu::convolution::Variant1d::ALL {
        let kernel = match v {
            cpu::convolution::Variant1d::Convolution1dTiledVec4 => {
                format!("{}_w{{1,3,...,31}}", v.kernel_name())
            }
            _ => v.kernel_name().to_string(),
        };
        table.add_row(["conv1d", &variant_name(v), &kernel]);
    }
    for v in cpu::convolution::Variant2d::ALL {
        let kernel = match v {
            cpu::convolution::Variant2d::Convolution2dTiledVec4 => {
                format!("{}_w{{1,3,5,7,9}}", v.kernel_name())
            }
            _ => v.kernel_name().to_string(),
        };
        table.add_row(["conv2d", &variant_name(v), &kernel]);
    }
    for v in cpu::smoke::Variant::ALL {
        table.add_row(["smoke", &variant_name(v), v.kernel_name()]);
    }
    println!("{table}");
}

pub(crate) fn variant_name(v: impl clap::ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

pub(crate) fn ceiling(gpu: &Gpu, reps: u32) -> Result<Ceiling> {
    let c = timing::memcpy_ceiling(gpu, CEILING_COPY_BYTES, 3, reps as usize)?;
    println!(
        "memcpy ceiling: device-to-device copy of {} MiB, median {:.3} ms, {:.1} GB/s (bytes read + written)",
        CEILING_COPY_BYTES >> 20,
        c.timing.median_ms,
        c.gbps
    );
    Ok(c)
}

pub(crate) fn verdict(check: &Result<(), verify::Mismatch>) -> String {
    match check {
        Ok(()) => "PASS".into(),
        Err(m) => format!("FAIL: {m}"),
    }
}
