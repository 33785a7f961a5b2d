//! `demo histogram`.

mod dump;
mod equalise;
mod even;
mod sweep;

use even::{EvenCounter, even_kernels, even_table};
use sweep::{sweep_cases, sweep_constant, sweep_uniform};

use std::path::{Path, PathBuf};

use crate::engine::args::refuse;
use crate::engine::harness::{Footprint, Plan, SMALL, Trial, WARMUP};
use crate::engine::registry::{Pattern, VariantInfo, kernels_each, variant};
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::SweepSpec;
use crate::engine::timing::{self, CEILING_READ_BYTES, Ceiling, L2Flush};
use anyhow::{Context, Result, bail};
use cpu::histogram::{self, Counter, Update, ladder, reference};
use cpu::{Gpu, verify};
use cudarc::driver::{CudaSlice, LaunchConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::variant_name;

/// Histogram: the textbook ladder (PMPP ch. 9: global atomics, privatised in shared memory,
/// coarsened with contiguous and interleaved partitions, aggregated runs) up to
/// `histogram::bytes`, on uniform, constant, Zipf, image or text bytes, beside the read-only
/// ceiling; `histogram::bytes` on every input; `histogram::even` (CUB's HistogramEven) on
/// u8, u16, i32 and f32; `--image IN.png --equalise OUT.png` equalises a picture.
#[derive(clap::Args)]
pub(crate) struct Histogram {
    /// Input bytes (default 2^26; at most 2^32 - 1, the counts being u32). A `--file` is
    /// repeated to this length.
    #[arg(long, default_value_t = 1 << 26)]
    size: usize,
    /// Bins of the `even` table's first rows (1..=2^20); rows at 4096 bins and at one bin beyond
    /// what a block's shared memory holds follow.
    #[arg(long, default_value_t = 256)]
    bins: usize,
    /// The bytes of the ladder: uniform random, one value repeated (every atomic on one bin),
    /// Zipf-skewed (exponent 1 over 256 values), a PNG's grey levels, or any file's bytes.
    #[arg(long, value_enum, default_value = "uniform")]
    input: InputKind,
    /// The file `--input image` (a PNG: its 8-bit grey levels) or `--input text` (any file:
    /// its bytes) reads.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// A PNG to equalise (with `--equalise OUT.png`): its histogram on the GPU
    /// (`histogram::bytes`), the lookup table from it, applied, checked against an all-CPU
    /// equalisation.
    #[arg(long, value_name = "PNG", requires = "equalise")]
    image: Option<PathBuf>,
    /// Where to write the equalised picture (8-bit grey PNG).
    #[arg(long, value_name = "PNG", requires = "image")]
    equalise: Option<PathBuf>,
}

/// What the input bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum InputKind {
    /// Uniform random bytes (seeded): every bin equally likely, the least contention.
    Uniform,
    /// Every byte 0: every atomic on one bin, the most contention.
    Constant,
    /// Zipf-like bytes: value k with probability proportional to 1 / (k + 1) (seeded).
    Zipf,
    /// The grey levels (8-bit luma) of the PNG `--file` names.
    Image,
    /// The bytes of the file `--file` names (any file; UTF-8 text, say).
    Text,
}

impl InputKind {
    fn reads_file(self) -> bool {
        matches!(self, InputKind::Image | InputKind::Text)
    }
}

/// The byte every element of the constant input is (and the sweep's `histogram-bytes-constant`,
/// and its peers in `peers.py`).
pub(crate) const CONSTANT_BYTE: u8 = 0;

/// The exponent of the Zipf-like input.
pub(crate) const ZIPF_EXPONENT: f64 = 1.0;

/// Largest `--size`: the counts are u32.
const MAX_SIZE: usize = u32::MAX as usize;

/// Poison of the counts before a launch (a count the kernel forgets to write is caught).
const POISON: u32 = 0xdead_beef;

impl Pattern for Histogram {
    const NAME: &'static str = "histogram";
    /// `cpu::histogram::bytes` on 2^24, 2^26, 2^28 and 2^30 bytes, uniform and constant.
    const SWEEPS: &'static [SweepSpec] = &[
        SweepSpec::new(
            "histogram-bytes",
            "cpu::histogram::bytes (uniform random bytes)",
            "1 byte read per element (256 u32 counts written)",
            sweep_cases,
            sweep_uniform,
        )
        .reads_only(),
        SweepSpec::new(
            "histogram-bytes-constant",
            "cpu::histogram::bytes (every byte the same: one bin)",
            "1 byte read per element (256 u32 counts written)",
            sweep_cases,
            sweep_constant,
        )
        .reads_only(),
    ];

    /// The ladder's steps (the last is the kernel behind `histogram::bytes`), the same into
    /// u64 counts, then `histogram::even`'s kernels and the shared-atomic microbenchmark.
    fn variants() -> Vec<VariantInfo> {
        let mut v = kernels_each(&ladder::Variant::ALL, |v| vec![v.kernel_name()]);
        v.push(variant("bytes-u64", &[u64::BYTES.name()]));
        v.push(variant("even", &even_kernels()));
        v.push(variant(
            "shared-atomic-rate",
            &[gpu::histogram::bytes::histogram_shared_atomic_rate.name()],
        ));
        v
    }

    /// Several blocks with a partial one at the end; a small constant input (every atomic on
    /// one bin).
    fn sanitize() -> Vec<String> {
        vec![
            "--size 100003".into(),
            "--size 1000 --input constant".into(),
        ]
    }

    /// The arguments ([`Histogram::check_args`]: exit status 2), then the files' sizes (exit
    /// status 1 if unreadable).
    fn check(&self) -> Result<()> {
        self.check_args()?;
        if let (true, Some(path)) = (self.input.reads_file(), self.file.as_deref()) {
            file_bytes(self.input, path)?;
        }
        if let Some(path) = self.image.as_deref() {
            png_dims(path)?;
        }
        Ok(())
    }

    fn footprint(&self, gpu: &Gpu) -> Result<Option<Footprint>> {
        self.check_args()?;
        let file = match (self.input.reads_file(), self.file.as_deref()) {
            (true, Some(path)) => file_bytes(self.input, path)?,
            _ => 0,
        };
        let picture = match self.image.as_deref() {
            Some(path) => {
                let (cols, rows) = png_dims(path)?;
                rows * cols
            }
            None => 0,
        };
        Ok(Some(footprint(
            self.size,
            file,
            picture,
            L2Flush::bytes(gpu)?,
        )))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self)
    }
}

impl Histogram {
    /// The arguments' own consistency, before anything is read or allocated: argument errors
    /// (exit status 2).
    fn check_args(&self) -> Result<()> {
        if self.size == 0 || self.size > MAX_SIZE {
            refuse!(
                "demo histogram: --size {} is outside 1..={MAX_SIZE} (the counts are u32)",
                self.size
            );
        }
        if self.bins == 0 || self.bins > histogram::MAX_BINS {
            refuse!(
                "demo histogram: --bins {} is outside 1..={}",
                self.bins,
                histogram::MAX_BINS
            );
        }
        match (self.input.reads_file(), &self.file) {
            (true, None) => refuse!(
                "demo histogram: --input {} reads a file: give --file PATH",
                variant_name(self.input)
            ),
            (false, Some(path)) => refuse!(
                "demo histogram: --file {} is read by --input image or --input text only",
                path.display()
            ),
            _ => Ok(()),
        }
    }
}

/// Peak memory of `demo histogram --size n` with a file of `file` bytes in memory (decoded)
/// and a picture of `picture` pixels to equalise; `flush` bytes of L2 flush buffer held
/// throughout. Device: the input (n bytes: the `even` table's inputs are n bytes too), the
/// flush buffer, the counts and the picture; at least the ceilings' 1 GiB (measured first,
/// freed before). Host: the input, the file, and the picture with its two equalisations.
pub(crate) fn footprint(n: usize, file: usize, picture: usize, flush: usize) -> Footprint {
    Footprint::new(format!("histogram of {n} bytes"))
        .device::<u8>(1, n)
        .device::<u8>(1, picture)
        .device_bytes(flush as u64 + SMALL)
        .host::<u8>(1, n)
        .host::<u8>(1, file)
        .host::<u8>(7, picture)
        .with_ceiling()
}

/// Bytes the file of `--input kind --file path` takes in memory: a PNG decoded (up to 4
/// bytes a pixel, then 1), any other file as it is.
fn file_bytes(kind: InputKind, path: &Path) -> Result<usize> {
    match kind {
        InputKind::Image => {
            let (cols, rows) = png_dims(path)?;
            Ok(rows.saturating_mul(cols).saturating_mul(5))
        }
        _ => {
            let meta = std::fs::metadata(path)
                .with_context(|| format!("demo histogram: reading {}", path.display()))?;
            Ok(usize::try_from(meta.len()).unwrap_or(usize::MAX))
        }
    }
}

/// `(cols, rows)` of a picture, from its header alone.
fn png_dims(path: &Path) -> Result<(usize, usize)> {
    let (cols, rows) = image::ImageReader::open(path)
        .with_context(|| format!("opening {}", path.display()))?
        .with_guessed_format()?
        .into_dimensions()
        .with_context(|| format!("reading the size of {} (PNG expected)", path.display()))?;
    Ok((cols as usize, rows as usize))
}

/// A picture's grey levels (8-bit luma): `(pixels, cols, rows)`.
fn load_grey(path: &Path) -> Result<(Vec<u8>, usize, usize)> {
    let image = image::ImageReader::open(path)
        .with_context(|| format!("opening {}", path.display()))?
        .with_guessed_format()?
        .decode()
        .with_context(|| format!("decoding {} (PNG expected)", path.display()))?
        .to_luma8();
    let (cols, rows) = image.dimensions();
    Ok((image.into_raw(), cols as usize, rows as usize))
}

// ---- Inputs ---------------------------------------------------------------------------------

/// `n` uniform random bytes.
pub(crate) fn uniform_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    StdRng::seed_from_u64(seed).fill(&mut v[..]);
    v
}

/// `n` bytes, every one [`CONSTANT_BYTE`].
pub(crate) fn constant_bytes(_seed: u64, n: usize) -> Vec<u8> {
    vec![CONSTANT_BYTE; n]
}

/// The Zipf-like sampling table: 2^16 entries, value k filling a share of them proportional to
/// `1 / (k + 1)^ZIPF_EXPONENT` (rounded to whole entries, at least one each), in order.
fn zipf_table() -> Vec<u8> {
    const ENTRIES: usize = 1 << 16;
    let weights: Vec<f64> = (0..256)
        .map(|k| 1.0 / ((k + 1) as f64).powf(ZIPF_EXPONENT))
        .collect();
    let total: f64 = weights.iter().sum();
    // Every value at least one entry; the rest by the largest remainders' order of value,
    // which for decreasing weights is simply: cumulative rounding.
    let mut table = Vec::with_capacity(ENTRIES);
    let mut cumulative = 0.0;
    for (k, w) in weights.iter().enumerate() {
        cumulative += w;
        let end = ((cumulative / total * ENTRIES as f64).round() as usize)
            .max(table.len() + 1)
            .min(ENTRIES - (255 - k));
        table.resize(end, k as u8);
    }
    table.resize(ENTRIES, 255);
    table
}

/// `n` Zipf-like bytes (seeded): value k with probability about `1 / (k + 1)` over the
/// harmonic number H_256 = 6.12 (value 0 about 16% of the bytes, the 128 largest values
/// together about 11%), sampled through [`zipf_table`] (each probability rounded to a
/// multiple of 2^-16).
pub(crate) fn zipf_bytes(seed: u64, n: usize) -> Vec<u8> {
    let table = zipf_table();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let bits: u64 = rng.random();
        for k in 0..4 {
            if v.len() < n {
                v.push(table[((bits >> (16 * k)) & 0xffff) as usize]);
            }
        }
    }
    v
}

/// `source` repeated (and cut) to `n` bytes.
fn repeated(source: &[u8], n: usize) -> Vec<u8> {
    source.iter().copied().cycle().take(n).collect()
}

/// The chosen input, and its description for the tables.
struct Input {
    bytes: Vec<u8>,
    what: String,
}

/// The bytes of `--input kind`: generated from `seed`, or the file's repeated to `n`.
fn make_input(kind: InputKind, file: Option<&Path>, seed: u64, n: usize) -> Result<Input> {
    let name = variant_name(kind);
    Ok(match (kind, file) {
        (InputKind::Uniform, _) => Input {
            bytes: uniform_bytes(seed, n),
            what: format!("{name}: uniform random bytes"),
        },
        (InputKind::Constant, _) => Input {
            bytes: constant_bytes(seed, n),
            what: format!("{name}: every byte {CONSTANT_BYTE}"),
        },
        (InputKind::Zipf, _) => Input {
            bytes: zipf_bytes(seed, n),
            what: format!("{name}: P(k) ~ 1/(k+1)^{ZIPF_EXPONENT} over 256 values"),
        },
        (InputKind::Image | InputKind::Text, Some(path)) => {
            let (source, what) = if kind == InputKind::Image {
                let (pixels, cols, rows) = load_grey(path)?;
                (
                    pixels,
                    format!("{cols} x {rows} grey levels of {}", path.display()),
                )
            } else {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("demo histogram: reading {}", path.display()))?;
                let len = bytes.len();
                (bytes, format!("the {len} bytes of {}", path.display()))
            };
            if source.is_empty() {
                bail!("demo histogram: {} has no bytes to count", path.display());
            }
            let what = if source.len() == n {
                format!("{name}: {what}")
            } else {
                format!("{name}: {what}, repeated to {n} bytes")
            };
            Input {
                bytes: repeated(&source, n),
                what,
            }
        }
        (InputKind::Image | InputKind::Text, None) => {
            bail!("demo histogram: --input {name} reads a file: give --file PATH")
        }
    })
}

// ---- Checks ---------------------------------------------------------------------------------

/// The CPU's 256 counts of `input`, widened to u64.
fn expected_bytes(input: &[u8]) -> Vec<u64> {
    reference::bytes(input).to_vec()
}

/// Downloaded u32 counts against the reference's.
fn check_counts<C: Copy + Into<u64>>(got: &[C], expected: &[u64]) -> Result<(), verify::Mismatch> {
    let got: Vec<u64> = got.iter().map(|&c| c.into()).collect();
    verify::exact(&got, expected)
}

/// `x` atomics per byte: three significant figures.
fn per_byte(x: f64) -> String {
    if x == 0.0 || x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.2e}")
    }
}

/// Bins holding at least one count, and the share of the largest bin.
fn spread(counts: &[u64]) -> (usize, f64) {
    let total: u64 = counts.iter().sum();
    let used = counts.iter().filter(|&&c| c > 0).count();
    let top = counts.iter().copied().max().unwrap_or(0);
    (used, 100.0 * top as f64 / total.max(1) as f64)
}

// ---- The demo -------------------------------------------------------------------------------

/// What every timed row shares: the device, the options, the copy ceiling (the section's, for
/// the report) and the read-only ceiling (the tables' `% of read ceiling`), the L2 flush.
struct Bench<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    copy: Ceiling,
    read: Ceiling,
    flush: L2Flush,
}

impl Bench<'_> {
    /// One 256-bin launch over `d_in` by `launch` into poisoned counts: verified against
    /// `expected` (counts start at `start` where given: `Update::Accumulate`) and dumped as
    /// `dump`, then timed with the L2 flushed before each launch; `bytes` read per launch.
    fn bytes_trial<C: EvenCounter + npyz::AutoSerialize>(
        &mut self,
        out: &Out,
        (label, kernel, dump): (&str, &'static str, &str),
        expected: &[u64],
        start: Option<u32>,
        mut launch: impl FnMut(&mut CudaSlice<C>) -> cpu::Result<LaunchConfig>,
        bytes: u64,
    ) -> Result<Trial<Result<(), verify::Mismatch>>> {
        let gpu = self.gpu;
        let counts = match start {
            Some(s) => gpu.upload(&[C::from(s); histogram::BYTE_BINS])?,
            None => gpu.poisoned(histogram::BYTE_BINS, C::from(POISON))?,
        };
        let expected: Vec<u64> = match start {
            Some(s) => expected.iter().map(|&c| c + u64::from(s)).collect(),
            None => expected.to_vec(),
        };
        let mut state = (counts, &mut self.flush);
        Plan::new(gpu, self.opts, label, kernel)
            .bytes(bytes, Some(&self.copy))
            .run_with_setup(
                &mut state,
                |(_, flush)| flush.flush(gpu),
                |(counts, _)| launch(counts),
                |(counts, _), _| {
                    let got = gpu.download(counts, kernel)?;
                    out.verify(dump, &[], &got, |got| check_counts(got, &expected))
                },
            )
    }
}

fn run(gpu: &Gpu, opts: &Options, out: &mut Out, args: &Histogram) -> Result<()> {
    args.check_args()?;
    let copy = out.ceiling(gpu, opts.reps)?;
    let read = timing::read_ceiling(gpu, CEILING_READ_BYTES, WARMUP, opts.reps as usize)?;
    out.line(format!(
        "read-only ceiling: read stream of {} MiB, median {:.3} ms, {:.1} GB/s (bytes read; fastest of {} launch shapes: {}, {})",
        CEILING_READ_BYTES >> 20,
        read.ceiling.timing.median_ms,
        read.ceiling.gbps,
        read.tried.len(),
        read.shape.describe(),
        crate::engine::harness::describe(&read.launch),
    ));
    let mut bench = Bench {
        gpu,
        opts,
        copy,
        read: read.ceiling,
        flush: L2Flush::new(gpu)?,
    };
    let mut failures = ladder_table(&mut bench, out, args)?;
    failures += inputs_table(&mut bench, out, args)?;
    failures += even_table(&mut bench, out, args)?;
    failures += shared_atomics(&bench, out, args.size)?;
    if let (Some(image), Some(path)) = (args.image.as_deref(), args.equalise.as_deref()) {
        failures += equalise::equalise(&mut bench, out, image, path)?;
    }
    if failures > 0 {
        bail!("{failures} histogram(s) disagree with the CPU reference");
    }
    Ok(())
}

/// The columns the ladder and the inputs tables share.
fn bytes_header(last: &'static str) -> [&'static str; 9] {
    [
        "variant",
        "input",
        "grid x block",
        "median ms",
        "GB/s",
        "% of read ceiling",
        "atomics / byte",
        last,
        "verdict",
    ]
}

/// One row of the ladder or the inputs table.
fn bytes_row(
    table: &mut Table,
    bench: &Bench,
    trial: Trial<Result<(), verify::Mismatch>>,
    (label, input): (&str, &str),
    atomics: f64,
    speedup: Option<f64>,
) {
    let gbps = trial.gbps();
    let read = 100.0 * gbps / bench.read.gbps;
    table.measured_row(
        [
            label.to_string(),
            input.to_string(),
            trial.grid_block(),
            format!("{:.4}", trial.timing.median_ms),
            format!("{gbps:.1}"),
            format!("{read:.1}%"),
            per_byte(atomics),
            speedup.map_or("-".into(), |s| format!("{s:.2}x")),
            trial.verdict(),
        ],
        trial
            .measurement
            .extra("percent_of_read_ceiling", read)
            .extra("atomics_per_byte", atomics),
    );
}

/// Every step of the ladder on the `--input` bytes: returns the failed checks.
fn ladder_table(bench: &mut Bench, out: &mut Out, args: &Histogram) -> Result<usize> {
    let n = args.size;
    let input = make_input(args.input, args.file.as_deref(), bench.opts.seed, n)?;
    let expected = expected_bytes(&input.bytes);
    let (used, top) = spread(&expected);
    let d_in = bench.gpu.upload(&input.bytes)?;
    out.dump("input", &[], &input.bytes)?;
    drop(input.bytes);
    let mut table = Table::new(
        "ladder",
        format!(
            "histogram of {n} bytes into 256 u32 bins ({}; {used} bins used, the largest {top:.1}% of the bytes), \
             median of {} reps, L2 flushed before each; GB/s = bytes read / time; atomics / byte: \
             global + shared atomics per input byte on uniform bytes (the variant's formula)",
            input.what, bench.opts.reps
        ),
        ChartKind::Bars,
        bytes_header("speedup"),
    );
    let mut failures = 0;
    let mut previous: Option<f64> = None;
    let short = variant_name(args.input);
    for variant in ladder::Variant::ALL {
        let name = variant_name(variant);
        let gpu = bench.gpu;
        let trial = bench.bytes_trial(
            out,
            (&name, variant.kernel_name(), &dump::ladder_output(variant)),
            &expected,
            None,
            |counts| ladder::run(gpu, variant, &d_in, counts),
            n as u64,
        )?;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        let atomics = variant.atomics_per_byte(n, &trial.cfg);
        let speedup = previous.map(|p| p / ms);
        bytes_row(&mut table, bench, trial, (&name, &short), atomics, speedup);
        previous = Some(ms);
    }
    out.table(table);
    Ok(failures)
}

/// `histogram::bytes` on every input kind (the file's where one is given), and once adding
/// to counts already there: returns the failed checks.
fn inputs_table(bench: &mut Bench, out: &mut Out, args: &Histogram) -> Result<usize> {
    let n = args.size;
    let mut table = Table::new(
        "inputs",
        format!(
            "histogram::bytes on {n} bytes of each input, median of {} reps, L2 flushed before each; \
             atomics / byte as on uniform bytes; vs uniform: uniform's time over this one's",
            bench.opts.reps
        ),
        ChartKind::Bars,
        bytes_header("vs uniform"),
    );
    let mut kinds = vec![InputKind::Uniform, InputKind::Constant, InputKind::Zipf];
    if args.input.reads_file() {
        kinds.push(args.input);
    }
    let kernel = ladder::Variant::Bytes.kernel_name();
    let mut failures = 0;
    let mut uniform_ms = None;
    for (i, kind) in kinds.iter().copied().enumerate() {
        let input = make_input(kind, args.file.as_deref(), bench.opts.seed ^ 1, n)?;
        let expected = expected_bytes(&input.bytes);
        let (used, top) = spread(&expected);
        let d_in = bench.gpu.upload(&input.bytes)?;
        let short = variant_name(kind);
        out.dump(&dump::bytes_input(&short), &[], &input.bytes)?;
        drop(input.bytes);
        let gpu = bench.gpu;
        // Uniform three times: overwriting the counts, adding to counts of 1 each, and into
        // u64 counts (`histogram_bytes_u64`, which takes inputs past u32::MAX bytes).
        let updates: &[(Update, Option<u32>, bool)] = if i == 0 {
            &[
                (Update::Overwrite, None, false),
                (Update::Accumulate, Some(1), false),
                (Update::Overwrite, None, true),
            ]
        } else {
            &[(Update::Overwrite, None, false)]
        };
        for &(update, start, wide) in updates {
            let label = match (update, wide) {
                (_, true) => "bytes (u64 counts)".to_string(),
                (Update::Overwrite, _) => "bytes".to_string(),
                (Update::Accumulate, _) => "bytes (Update::Accumulate)".to_string(),
            };
            let dump = dump::bytes_output(&short, update == Update::Accumulate);
            let name = format!("{label} [{short}]");
            let trial = if wide {
                bench.bytes_trial::<u64>(
                    out,
                    (&name, u64::BYTES.name(), &dump::bytes_output_u64(&short)),
                    &expected,
                    start,
                    |counts| histogram::bytes_with(gpu, &d_in, counts, update),
                    n as u64,
                )?
            } else {
                bench.bytes_trial::<u32>(
                    out,
                    (&name, kernel, &dump),
                    &expected,
                    start,
                    |counts| histogram::bytes_with(gpu, &d_in, counts, update),
                    n as u64,
                )?
            };
            failures += !trial.passed() as usize;
            let ms = trial.timing.median_ms;
            let atomics = ladder::Variant::Bytes.atomics_per_byte(n, &trial.cfg);
            let vs = uniform_ms.map(|u: f64| u / ms);
            uniform_ms.get_or_insert(ms);
            let what = format!("{} ({used} bins, top {top:.1}%)", input.what);
            bytes_row(&mut table, bench, trial, (&label, &what), atomics, vs);
        }
    }
    out.table(table);
    // The summary's row for this pattern: the entry point on uniform bytes.
    out.headline("inputs", "bytes [uniform]");
    Ok(failures)
}

/// Shared atomics each thread of the microbenchmark issues: `--size / 2^14`, from 16 to 4096
/// (4096 at the default size: a launch of a fraction of a millisecond on an H100 without
/// conflicts; small sizes, as the sanitizer runs, stay small).
fn atomic_iterations(size: usize) -> u32 {
    (size >> 14).clamp(16, 4096) as u32
}

/// The shared-memory atomic microbenchmark (`ladder::shared_atomic_rate`): each pattern's
/// atomics per second, per SM and per SM clock, and the bytes per second they allow at one
/// atomic per byte, beside the read-only ceiling. The sink (one launch's sum of each block's
/// word 0) is checked where the pattern predicts it.
fn shared_atomics(bench: &Bench, out: &mut Out, size: usize) -> Result<usize> {
    let gpu = bench.gpu;
    let sms = gpu.sm_count()?;
    let clock_khz = gpu.sm_clock_khz()?;
    let iterations = atomic_iterations(size);
    let kernel = gpu::histogram::bytes::histogram_shared_atomic_rate.name();
    let mut table = Table::new(
        "shared-atomics",
        format!(
            "shared-memory atomics (red.shared.add.u32), one wave of blocks of {} threads, {iterations} per thread, \
             median of {} reps; {sms} SMs at {} MHz; GB/s at one atomic per byte = atomics/s / 1e9",
            gpu::histogram::ATOMIC_RATE_BLOCK,
            bench.opts.reps,
            clock_khz / 1000
        ),
        ChartKind::Bars,
        [
            "pattern",
            "grid x block",
            "median ms",
            "atomics / s / SM",
            "atomics / SM clock",
            "GB/s at 1 atomic / byte",
            "% of read ceiling",
            "sink",
        ],
    )
    .chart_extra("atomics_per_sm_clock");
    let mut failures = 0;
    for pattern in ladder::AtomicPattern::ALL {
        let mut sink = gpu.zeros::<u32>(1)?;
        let mut atomics = 0u64;
        let trial = Plan::new(gpu, bench.opts, variant_name(pattern), kernel).run(
            &mut sink,
            |sink| {
                let launch = ladder::shared_atomic_rate(gpu, pattern, iterations, sink)?;
                atomics = launch.atomics;
                Ok(launch.config)
            },
            |sink, cfg| {
                let sink = gpu.download(sink, kernel)?;
                out.verify(&dump::shared_atomics_output(pattern), &[], &sink, |_| ())?;
                let got = sink[0];
                // Each block adds its word 0: `iterations` from lane 0 of warp 0 when every lane
                // has its own bank, 32 times that when every lane hits word 0.
                let per_block = match pattern {
                    ladder::AtomicPattern::DistinctBanks => Some(iterations),
                    ladder::AtomicPattern::OneAddress => Some(32u32.wrapping_mul(iterations)),
                    ladder::AtomicPattern::RandomBins => None,
                };
                Ok(match per_block {
                    Some(p) => verify::exact(&[got], &[p.wrapping_mul(cfg.grid_dim.0)]),
                    None => Ok(()),
                })
            },
        )?;
        failures += !trial.passed() as usize;
        let per_second = atomics as f64 / (trial.timing.median_ms * 1e-3);
        let per_sm = per_second / f64::from(sms);
        let per_clock = per_sm / (f64::from(clock_khz) * 1e3);
        let gbps = per_second / 1e9;
        let read = 100.0 * gbps / bench.read.gbps;
        let sink = match (pattern, trial.check.as_ref()) {
            (ladder::AtomicPattern::RandomBins, _) => "not predicted".to_string(),
            (_, Ok(())) => "PASS".to_string(),
            (_, Err(m)) => format!("FAIL: {m}"),
        };
        table.measured_row(
            [
                variant_name(pattern),
                trial.grid_block(),
                format!("{:.4}", trial.timing.median_ms),
                format!("{per_sm:.3e}"),
                format!("{per_clock:.2}"),
                format!("{gbps:.1}"),
                format!("{read:.1}%"),
                sink,
            ],
            trial
                .measurement
                .extra("atomics_per_second", per_second)
                .extra("atomics_per_sm_clock", per_clock)
                .extra("percent_of_read_ceiling", read),
        );
    }
    out.table(table);
    Ok(failures)
}

// ---- Sweeps ---------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_is_skewed_seeded_and_covers_every_value() {
        let table = zipf_table();
        assert_eq!(table.len(), 1 << 16);
        assert!(table.windows(2).all(|w| w[0] <= w[1]), "in order");
        for k in 0..=255u8 {
            assert!(table.contains(&k), "{k} never drawn");
        }
        let a = zipf_bytes(5, 1 << 20);
        assert_eq!(a, zipf_bytes(5, 1 << 20));
        assert_ne!(a, zipf_bytes(6, 1 << 20));
        let mut counts = [0u64; 256];
        a.iter().for_each(|&b| counts[b as usize] += 1);
        let share = |k: usize| counts[k] as f64 / a.len() as f64;
        // P(0) = 1 / H_256 = 0.163, P(1) = P(0) / 2.
        assert!((share(0) - 0.163).abs() < 0.005, "{}", share(0));
        assert!((share(1) / share(0) - 0.5).abs() < 0.02);
        assert!(counts[0] > counts[9] && counts[9] > counts[99] && counts[99] > counts[255]);
    }

    #[test]
    fn inputs_have_their_length_and_kind() {
        assert_eq!(uniform_bytes(1, 1000).len(), 1000);
        assert!(constant_bytes(1, 77).iter().all(|&b| b == CONSTANT_BYTE));
        assert_eq!(repeated(b"abc", 7), b"abcabca");
        assert_eq!(repeated(b"abcdef", 4), b"abcd");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        std::fs::write(&path, "直方图 histogram").unwrap();
        let text = make_input(InputKind::Text, Some(&path), 0, 40).unwrap();
        assert_eq!(text.bytes.len(), 40);
        assert_eq!(&text.bytes[..9], "直方图".as_bytes());
        assert!(text.what.contains("repeated to 40 bytes"), "{}", text.what);
        std::fs::write(&path, "").unwrap();
        let e = make_input(InputKind::Text, Some(&path), 0, 40)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no bytes"), "{e}");
    }

    #[test]
    fn the_photograph_in_data_reads_as_grey_levels() {
        // Embedded, so that the test binary needs no source tree (the bundle runs it
        // elsewhere).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("camera.png");
        std::fs::write(&path, include_bytes!("../../../../../data/camera.png")).unwrap();
        let (pixels, cols, rows) = load_grey(&path).unwrap();
        assert_eq!((cols, rows), (512, 512));
        assert_eq!(pixels.len(), 512 * 512);
        assert_eq!(png_dims(&path).unwrap(), (512, 512));
        let (used, _) = spread(&expected_bytes(&pixels));
        assert!(used > 200, "{used} grey levels");
    }

    fn parse(args: &str) -> std::result::Result<Histogram, String> {
        use clap::FromArgMatches;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            h: Histogram,
        }
        let argv = std::iter::once("histogram").chain(args.split_whitespace());
        let m = <Cli as clap::CommandFactory>::command()
            .try_get_matches_from(argv)
            .map_err(|e| e.to_string())?;
        let h = Histogram::from_arg_matches(&m).map_err(|e| e.to_string())?;
        h.check_args().map_err(|e| e.to_string())?;
        Ok(h)
    }

    #[test]
    fn bad_arguments_are_one_sentence() {
        assert!(parse("").is_ok());
        assert!(parse("--size 100003").is_ok());
        assert!(parse("--input text --file x").is_ok());
        for (args, says) in [
            ("--size 0", "--size 0 is outside"),
            ("--size 4294967296", "the counts are u32"),
            ("--bins 0", "--bins 0 is outside"),
            ("--input image", "give --file PATH"),
            (
                "--file x.png",
                "is read by --input image or --input text only",
            ),
        ] {
            let e = parse(args).err().unwrap();
            assert!(e.contains(says), "{args}: {e}");
            assert!(!e.trim_end().contains('\n'), "{args}: one sentence: {e}");
        }
        assert!(parse("--image a.png").is_err(), "--image needs --equalise");
        assert!(
            parse("--equalise b.png").is_err(),
            "--equalise needs --image"
        );
    }

    #[test]
    fn footprint_counts_the_input_the_file_and_the_picture() {
        let (d, h) = footprint(1 << 30, 1000, 10, 100).bytes().unwrap();
        assert_eq!(d, (1 << 30) + 10 + 100 + SMALL);
        assert_eq!(h, (1 << 30) + 1000 + 70);
        let (d, _) = footprint(1000, 0, 0, 0).bytes().unwrap();
        assert_eq!(
            d,
            2 * timing::CEILING_COPY_BYTES as u64,
            "the ceilings' floor"
        );
    }

    /// Every `histogram_*` entry of the embedded PTX is one of the pattern's variants (so the
    /// demo, and the sanitizer cases run through it, launch every histogram kernel).
    #[test]
    fn the_variants_name_every_histogram_kernel() {
        let listed: Vec<&str> = Histogram::variants()
            .into_iter()
            .flat_map(|v| v.kernels)
            .collect();
        let (_, ptx) = cpu::ptx::for_compute_capability(9, 0).expect("an embedded PTX");
        let entries: Vec<&str> = ptx
            .lines()
            .filter_map(|l| l.split(".entry ").nth(1))
            .map(|rest| rest.split(['(', ' ']).next().unwrap_or(rest).trim())
            .filter(|name| name.starts_with("histogram_"))
            .collect();
        assert!(entries.len() >= 23, "{entries:?}");
        for e in entries {
            assert!(
                listed.contains(&e),
                "{e} is in no variant of demo histogram"
            );
        }
    }

    #[test]
    fn sweeps_are_the_issues_sizes() {
        let n: Vec<usize> = sweep_cases(&Histogram::SWEEPS[0])
            .iter()
            .map(|c| c.elements().unwrap())
            .collect();
        assert_eq!(n, [1 << 24, 1 << 26, 1 << 28, 1 << 30]);
        assert!(Histogram::SWEEPS.iter().all(|s| s.reads_only));
        let names: Vec<&str> = Histogram::SWEEPS.iter().map(|s| s.name).collect();
        assert_eq!(names, ["histogram-bytes", "histogram-bytes-constant"]);
    }
}
