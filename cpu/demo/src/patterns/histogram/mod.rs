//! `demo histogram`: its definition (arguments, `impl Pattern`, the run, here), its inputs
//! ([`inputs`]), the byte-histogram tables ([`tables`]), the `HistogramEven` table ([`even`]),
//! the equalised picture ([`equalise`]), the dump names ([`dump`]) and the sweeps ([`sweep`]).

mod dump;
mod equalise;
mod even;
mod inputs;
mod sweep;
mod tables;

use std::path::PathBuf;

use anyhow::{Result, bail};
use cpu::histogram::{self, Counter, ladder, reference};
use cpu::{Gpu, verify};
use cudarc::driver::{CudaSlice, LaunchConfig};
use even::{EvenCounter, even_kernels, even_table};
use inputs::*;
use sweep::{sweep_cases, sweep_constant, sweep_uniform};
use tables::*;

use crate::engine::args::refuse;
use crate::engine::harness::{Footprint, Plan, SMALL, Trial, WARMUP};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, kernels_each, variant, variant_name};
use crate::engine::sweep::SweepSpec;
use crate::engine::timing::{self, CEILING_READ_BYTES, Ceiling, L2Flush};

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
        let entries: Vec<&str> = cpu::ptx::KERNELS
            .entries()
            .map(|e| e.name)
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
