//! `demo transpose`: its definition and table (here) and its sweep ([`sweep`]).

mod sweep;

use anyhow::{Result, bail};
use cpu::{Gpu, transpose, verify};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::harness::{Footprint, Plan, elements};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, one_kernel_each, variant_name};
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::{SweepSpec, powers};

/// Peak memory of `demo transpose --rows R --cols C` (n = R x C): the input and one
/// variant's output on the device (8n bytes); the input, the reference and one downloaded
/// output on the host (12n bytes).
pub fn footprint(rows: usize, cols: usize) -> Result<Footprint> {
    let n = elements("transpose", rows, cols)?;
    Ok(
        Footprint::new(format!("transpose of {rows} x {cols} elements"))
            .device::<f32>(2, n)
            .host::<f32>(3, n)
            .with_ceiling(),
    )
}

/// Matrix transpose: the seed's five versions, a copy baseline, the tiled kernels and the
/// thin-matrix kernel, timed.
#[derive(clap::Args)]
pub(crate) struct Transpose {
    /// Rows of the input matrix.
    #[arg(long, default_value_t = 8192)]
    rows: usize,
    /// Columns of the input matrix.
    #[arg(long, default_value_t = 8192)]
    cols: usize,
}

impl Pattern for Transpose {
    const NAME: &'static str = "transpose";
    /// `cpu::transpose::transpose` on 1024^2 .. 16384^2, then the odd shapes 8191 x 8193,
    /// 3 x 8191, 8193 x 7, 16383 x 16385, 4097 x 4095 and the thin 2^24-element 4 x 4194304
    /// and 4194304 x 4; each beside a copy of its bytes.
    const SWEEPS: &'static [SweepSpec] = &[SweepSpec::new(
        "transpose",
        "cpu::transpose::transpose",
        "8 bytes per element: 1 read + 1 write",
        |s| {
            let square = powers(10, 14, 1).map(|n| [n, n]);
            let odd = [
                [8191, 8193],
                [3, 8191],
                [8193, 7],
                [16383, 16385],
                [4097, 4095],
                [4, 1 << 22],
                [1 << 22, 4],
            ];
            square
                .chain(odd)
                .map(|shape| s.case(&shape, None))
                .collect()
        },
        sweep::measure,
    )
    .same_size_copy(sweep::series)];

    fn variants() -> Vec<VariantInfo> {
        one_kernel_each(&transpose::Variant::ALL, |v| v.kernel_name())
    }

    /// Multiples of 4 (the aligned vec4 kernel) and an odd shape (every row shift of the
    /// any-shape kernel), both with partial tiles on both edges; two thin shapes (the thin
    /// kernel, short side 12: blocks of 3 x 85 threads, the last block partial), short-wide
    /// and tall-narrow.
    fn sanitize() -> Vec<String> {
        vec![
            "--rows 1020 --cols 516".into(),
            "--rows 1021 --cols 517".into(),
            "--rows 12 --cols 1028".into(),
            "--rows 1028 --cols 12".into(),
        ]
    }

    /// The element count must fit a `usize` (exit status 2).
    fn check(&self) -> Result<()> {
        elements("transpose", self.rows, self.cols)
            .map(drop)
            .map_err(|e| crate::engine::args::ArgError(e.to_string()).into())
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        footprint(self.rows, self.cols).map(Some)
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self.rows, self.cols)
    }
}

fn run(gpu: &Gpu, opts: &Options, out: &mut Out, rows: usize, cols: usize) -> Result<()> {
    let n = rows * cols;
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.random()).collect();
    let expected = transpose::reference(&input, rows, cols);
    let d_in = gpu.upload(&input)?;
    let bytes = transpose::bytes_moved(rows, cols);
    let seed_size = rows == 8192 && cols == 8192;

    out.dump("input", &[rows as u64, cols as u64], &input)?;
    let best = variant_name(transpose::Variant::fastest(rows, cols, true));
    let mut table = variants_table(rows, cols, bytes, opts.reps, &best);
    out.headline("variants", &best);
    let mut failures = 0;
    for variant in transpose::Variant::ALL {
        let seed_cols = seed_cells(variant, seed_size);
        // A shape the variant does not take, or whose grid it cannot launch (a 2D grid past
        // 65535 blocks along y: the seed's kernels and the tile on tall matrices).
        let skip = if !variant.supports(rows, cols) {
            Some(
                variant
                    .requirement()
                    .unwrap_or("unsupported shape")
                    .to_string(),
            )
        } else {
            variant
                .launch_config(rows, cols)
                .err()
                .map(|e| e.to_string())
        };
        if let Some(why) = skip {
            table.row([
                variant_name(variant),
                seed_cols.0,
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                seed_cols.1,
                format!("skipped: {why}"),
            ]);
            continue;
        }
        let mut d_out = gpu.poisoned(n, f32::NAN)?;
        let name = variant_name(variant);
        let trial = Plan::new(gpu, opts, &name, variant.kernel_name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| transpose::transpose_with(gpu, variant, &d_in, d_out, rows, cols),
                |d_out, _| {
                    let got = gpu.download(d_out, variant.kernel_name())?;
                    let (shape, want) = if variant.transposes() {
                        ([cols as u64, rows as u64], &expected)
                    } else {
                        ([rows as u64, cols as u64], &input)
                    };
                    out.verify(&format!("output_{name}"), &shape, &got, |got| {
                        verify::exact(got, want)
                    })
                },
            )?;
        failures += !trial.passed() as usize;
        let gbps = trial.gbps();
        table.measured_row(
            [
                name,
                seed_cols.0,
                trial.grid_block(),
                format!("{:.3}", trial.timing.median_ms),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                seed_cols.1,
                trial.verdict(),
            ],
            trial.measurement,
        );
    }
    out.table(table);
    if failures > 0 {
        bail!("{failures} transpose variant(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The table of every variant, titled with the shape, the bytes moved and the best variant
/// for the shape.
fn variants_table(rows: usize, cols: usize, bytes: u64, reps: u32, best: &str) -> Table {
    Table::new(
        "variants",
        format!(
            "transpose, {rows} x {cols} f32 ({:.0} MiB moved per launch: 1 read + 1 write), median of {reps} reps; best for this shape: {best}",
            bytes as f64 / (1 << 20) as f64,
        ),
        ChartKind::Bars,
        [
            "variant",
            "seed",
            "grid x block",
            "median ms",
            "GB/s",
            "% of memcpy",
            "seed laptop ms",
            "verdict",
        ],
    )
}

/// The seed's version number of `variant` and its time for 8192 x 8192 on the seed author's
/// laptop (nvprof), for the table's "seed" columns.
fn seed_row(variant: transpose::Variant) -> Option<(u32, f64)> {
    use transpose::Variant;
    match variant {
        Variant::TransposeNaiveCol => Some((1, 66.586)),
        Variant::TransposeNaiveRow => Some((2, 50.46)),
        Variant::TransposeSharedTile => Some((3, 41.09)),
        Variant::TransposeL1_8x32 => Some((4, 43.32)),
        Variant::TransposeL1_4x32 => Some((5, 41.35)),
        _ => None,
    }
}

/// The "seed" and "seed laptop ms" cells of a variant (the laptop time at the seed's 8192 x
/// 8192 only).
fn seed_cells(variant: transpose::Variant, seed_size: bool) -> (String, String) {
    seed_row(variant).map_or(("-".into(), "-".into()), |(v, ms)| {
        (
            format!("v{v}"),
            if seed_size {
                format!("{ms:.2}")
            } else {
                "(8192 only)".into()
            },
        )
    })
}
