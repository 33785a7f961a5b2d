//! `demo sort`: the library's radix sort (`cpu::sort`, the one-sweep LSD sort with 8-bit
//! digits) on the key kinds it takes, each output checked against the CPU's stable sort and
//! timed beside the traffic model's floor; then the ladder (`cpu::sort::ladder`: one bit per
//! pass, PMPP 13.3; four bits per pass with tiles sorted in shared memory, 13.4-13.5;
//! reduce-then-scan, CUB's design before one-sweep) against it on the same keys; the
//! segmented sort ([`segmented`]); its sweeps ([`sweep`]). With `--dump DIR`, every input a
//! table sorts is written beside what it verifies ([`dump`] names them).

mod dump;
mod segmented;
mod sweep;

use anyhow::{Result, bail};
use cpu::sort::reference::TorchOrder;
use cpu::sort::{Order, RadixSort, SortKey, reference};
use cpu::{Gpu, launch, verify};
use cudarc::driver::{CudaSlice, LaunchConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::slice::ParallelSliceMut;

use crate::engine::args::count_in;
use crate::engine::harness::{Footprint, Plan, SMALL};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo};
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::SweepSpec;
use crate::engine::timing::{Ceiling, L2Flush};

/// The radix sort's entry points on uniform random keys: `sort::keys` (u32 ascending and
/// descending, f32 with NaNs and signed zeros, u64), `sort::pairs` (u32 keys, u32 values) and
/// `sort::argsort` (f32), each timed on a fresh copy of its input with the L2 flushed.
#[derive(clap::Args)]
pub(crate) struct Sort {
    /// Keys (default 2^24: 64 MiB of u32 keys, beyond the L2 cache; at most 2^30 - 1).
    #[arg(long, default_value_t = 1 << 24, value_parser = count_in::<1, 1073741823>)]
    size: usize,
}

/// The entry points of the table, in order: the row label, the histogram and pass kernels it
/// launches, and its passes (one per 8 bits of the key).
const ENTRIES: [(&str, &str, &str, usize); 6] = [
    ("keys u32", "sort_histogram_u32", "sort_onesweep_u32_v32", 4),
    (
        "keys u32 descending",
        "sort_histogram_u32",
        "sort_onesweep_u32_v32",
        4,
    ),
    ("keys f32", "sort_histogram_u32", "sort_onesweep_u32_v32", 4),
    ("keys u64", "sort_histogram_u64", "sort_onesweep_u64_v32", 8),
    (
        "pairs u32/u32",
        "sort_histogram_u32",
        "sort_onesweep_u32_v32",
        4,
    ),
    (
        "argsort f32",
        "sort_histogram_u32",
        "sort_onesweep_u32_v32",
        4,
    ),
];

impl Pattern for Sort {
    const NAME: &'static str = "sort";
    /// `sort::keys` of u32 and f32, `sort::pairs` of u32/u32 and `sort::argsort` of f32, at
    /// 2^20, 2^22, ..., 2^28 keys.
    const SWEEPS: &'static [SweepSpec] = &[
        SweepSpec::new(
            "sort-keys-u32",
            "cpu::sort::keys::<u32>",
            "traffic model: 4n bytes of digit counts, then 8n per 8-bit pass (4 passes): 36 bytes per key",
            sweep::cases,
            sweep::keys_u32,
        ),
        SweepSpec::new(
            "sort-keys-f32",
            "cpu::sort::keys::<f32>",
            "36 bytes per key, as u32",
            sweep::cases,
            sweep::keys_f32,
        ),
        SweepSpec::new(
            "sort-pairs-u32",
            "cpu::sort::pairs::<u32, u32>",
            "4n for the counts, then 16n per pass (4 passes): 68 bytes per pair",
            sweep::cases,
            sweep::pairs_u32,
        ),
        SweepSpec::new(
            "sort-argsort-f32",
            "cpu::sort::argsort::<f32>",
            "4n for the counts, then the keys and indices moved (the first pass reads no indices): about 64 bytes per key",
            sweep::cases,
            sweep::argsort_f32,
        ),
    ];

    fn variants() -> Vec<VariantInfo> {
        let ladder = [
            VariantInfo {
                name: "ladder-one-bit-per-pass".into(),
                kernels: vec!["sort_ladder_bits", "sort_ladder_split"],
            },
            VariantInfo {
                name: "ladder-four-bits-per-pass".into(),
                kernels: vec!["sort_ladder_local", "sort_ladder_scatter"],
            },
            VariantInfo {
                name: "ladder-reduce-then-scan".into(),
                kernels: vec!["sort_ladder_upsweep", "sort_ladder_downsweep"],
            },
            VariantInfo {
                name: "segmented-keys-u32".into(),
                kernels: vec!["sort_segments_check", "sort_segmented_u32_v32"],
            },
        ];
        ENTRIES
            .iter()
            .map(|(name, histogram, pass, _)| VariantInfo {
                name: name.replace([' ', '/'], "-"),
                kernels: vec![histogram, pass],
            })
            .chain(ladder)
            .collect()
    }

    fn sanitize() -> Vec<String> {
        vec!["--size 100003".into()]
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(footprint(self.size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self.size)
    }
}

/// Peak memory of `demo sort --size n` (the u64 row): the pristine keys, the keys sorted, the
/// workspace's second buffer (8 bytes a key each) and its status words; on the host the keys,
/// the reference and the download (and an index per key for the argsort's reference).
fn footprint(n: usize) -> Footprint {
    Footprint::new(format!("sort of {n} keys"))
        .device::<u64>(4, n)
        .device_bytes(SMALL + n as u64)
        .host::<u64>(5, n)
        .with_ceiling()
}

/// The bits of a key, to compare outputs exactly (NaN payloads and signed zeros included).
pub(crate) trait Key: SortKey + TorchOrder + Default + npyz::AutoSerialize {
    /// The key's bits, widened.
    fn bits(self) -> u64;
}

macro_rules! key {
    ($($t:ty => |$x:ident| $e:expr;)*) => {$(
        impl Key for $t {
            fn bits(self) -> u64 {
                let $x = self;
                $e
            }
        }
    )*};
}
key! {
    u32 => |x| x as u64;
    u64 => |x| x;
    f32 => |x| x.to_bits() as u64;
}

/// `n` uniform random u32 keys from `seed`.
pub(crate) fn random_u32(seed: u64, n: usize) -> Vec<u32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random()).collect()
}

/// `n` uniform random u64 keys from `seed`.
fn random_u64(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random()).collect()
}

/// `n` f32 keys uniform in [-1, 1) from `seed`, with a NaN, a -0.0, a +0.0 and a -inf in every
/// 1024 (at 3, 5, 7 and 11 mod 1024): the keys whose order `torch.sort` defines.
pub(crate) fn random_f32(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| match i % 1024 {
            3 => f32::NAN,
            5 => -0.0,
            7 => 0.0,
            11 => f32::NEG_INFINITY,
            _ => rng.random_range(-1.0..1.0),
        })
        .collect()
}

/// The stable order of `keys` (`torch.argsort(stable=True)`), on every core.
pub(crate) fn reference_order<K: Key>(keys: &[K], order: Order) -> Vec<u32> {
    let mut index: Vec<u32> = (0..keys.len() as u32).collect();
    index.par_sort_by(|&a, &b| {
        let c = keys[a as usize].torch_cmp(&keys[b as usize]);
        if order == Order::Descending {
            c.reverse()
        } else {
            c
        }
    });
    index
}

/// `got` against the keys of `keys` in the order `index`, bit for bit.
pub(crate) fn check_keys<K: Key>(
    got: &[K],
    keys: &[K],
    index: &[u32],
) -> Result<(), verify::Mismatch> {
    let got: Vec<u64> = got.iter().map(|k| k.bits()).collect();
    let want: Vec<u64> = index.iter().map(|&i| keys[i as usize].bits()).collect();
    verify::exact(&got, &want)
}

/// The launch of one pass of a sort of `n` keys: one 256-thread block per tile, the dynamic
/// shared memory of a tile of keys and values (what the table's grid column shows).
pub(crate) fn pass_launch(n: usize, key_bytes: usize, value_bytes: usize) -> LaunchConfig {
    use gpu::sort::{ONESWEEP_BLOCK, ONESWEEP_TILE, onesweep_shared_bytes};
    launch::linear(
        n.div_ceil(ONESWEEP_TILE).max(1) as u32,
        ONESWEEP_BLOCK,
        onesweep_shared_bytes(key_bytes, value_bytes) as u32,
    )
}

/// The bytes a sort of `n` keys of `K` (with values of `value_bytes`) must move: the traffic
/// model of [`reference::bytes_moved`], one pass per 8 bits.
pub(crate) fn model_bytes<K>(n: usize, value_bytes: usize) -> u64 {
    reference::bytes_moved(n, size_of::<K>(), value_bytes, size_of::<K>() as u32)
}

/// One row's measurement and its cells.
struct Row {
    label: &'static str,
    kernel: &'static str,
    /// Its part of the names its input and output are dumped as (`--dump`: [`dump::row_name`]).
    dump: String,
    n: usize,
    passes: usize,
    bytes: u64,
}

fn run(gpu: &Gpu, opts: &Options, out: &mut Out, n: usize) -> Result<()> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut b = Bench {
        gpu,
        opts,
        ceiling: &ceiling,
        ws: RadixSort::new(gpu)?,
        flush: L2Flush::new(gpu)?,
    };
    let mut table = Table::new(
        "entry-points",
        format!(
            "radix sort of {n} keys (one-sweep, 8-bit digits: one histogram launch, then one launch per pass), uniform random keys (f32: a NaN, -0.0, +0.0 and -inf in every 1024); each rep sorts a fresh copy with the L2 flushed, both outside the timed region; median of {} reps; GB/s of the traffic model (the keys read once for the counts, then every key and value read and written once per pass), floor = those bytes at the copy bandwidth",
            opts.reps
        ),
        ChartKind::Bars,
        [
            "entry point",
            "passes",
            "grid x block",
            "median ms",
            "Gkeys/s",
            "GB/s",
            "% of memcpy",
            "floor ms",
            "verdict",
        ],
    );
    let mut failures = 0;
    let mut keys_ms = f64::NAN;
    let seed = opts.seed;
    let mut add = |table: &mut Table, row: Row, trial: crate::engine::harness::Trial<_>| {
        let trial: crate::engine::harness::Trial<Result<(), verify::Mismatch>> = trial;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        if row.label == "keys u32" {
            keys_ms = ms;
        }
        let gbps = trial.gbps();
        table.measured_row(
            [
                row.label.to_string(),
                row.passes.to_string(),
                trial.grid_block(),
                format!("{ms:.4}"),
                format!("{:.2}", row.n as f64 / ms / 1e6),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                format!("{:.4}", row.bytes as f64 / ceiling.gbps / 1e6),
                trial.verdict(),
            ],
            trial.measurement,
        );
    };
    for (i, &(label, _, kernel, passes)) in ENTRIES.iter().enumerate() {
        let row = |bytes| Row {
            label,
            kernel,
            dump: dump::row_name(label),
            n,
            passes,
            bytes,
        };
        let case_seed = seed ^ (i as u64 + 1);
        let (row, trial) = match label {
            "keys u32" | "keys u32 descending" => {
                let order = if label == "keys u32" {
                    Order::Ascending
                } else {
                    Order::Descending
                };
                let row = row(model_bytes::<u32>(n, 0));
                let t = b.keys(out, &row, &random_u32(case_seed, n), order)?;
                (row, t)
            }
            "keys f32" => {
                let row = row(model_bytes::<f32>(n, 0));
                let t = b.keys(out, &row, &random_f32(case_seed, n), Order::Ascending)?;
                (row, t)
            }
            "keys u64" => {
                let row = row(model_bytes::<u64>(n, 0));
                let t = b.keys(out, &row, &random_u64(case_seed, n), Order::Ascending)?;
                (row, t)
            }
            "pairs u32/u32" => {
                let row = row(model_bytes::<u32>(n, 4));
                let t = b.pairs(out, &row, &random_u32(case_seed, n))?;
                (row, t)
            }
            _ => {
                // The first pass reads no indices: 4n fewer bytes than a sort of pairs.
                let row = row(model_bytes::<f32>(n, 4) - 4 * n as u64);
                let t = b.argsort(out, &row, &random_f32(case_seed, n))?;
                (row, t)
            }
        };
        add(&mut table, row, trial);
    }
    out.table(table);
    failures += ladder(&mut b, out, n)?;
    failures += segmented::segmented(&mut b, out, n, keys_ms)?;
    if failures > 0 {
        bail!("{failures} sort entry point(s) disagree with the CPU's stable sort");
    }
    Ok(())
}

type Trial = crate::engine::harness::Trial<Result<(), verify::Mismatch>>;

/// The ladder table: `sort::ladder::one_bit_per_pass` (PMPP §13.3),
/// `sort::ladder::several_bits_per_pass` (§13.4-13.5), `sort::ladder::reduce_then_scan` and the
/// one-sweep `sort::keys` on the same u32 keys, each row's speedup over the one before. Returns the
/// rows that disagree with the CPU.
fn ladder(b: &mut Bench<'_>, out: &mut Out, n: usize) -> Result<usize> {
    let (gpu, opts, ceiling) = (b.gpu, b.opts, b.ceiling);
    let keys = random_u32(opts.seed, n);
    out.dump(dump::LADDER_INPUT, &[], &keys)?;
    let index = reference_order(&keys, Order::Ascending);
    let pristine = gpu.upload(&keys)?;
    let mut table = Table::new(
        "ladder",
        format!(
            "the radix sort ladder on {n} uniform random u32 keys, ascending: each rep sorts a fresh copy with the L2 flushed, median of {} reps; GB/s of each design's own traffic model",
            opts.reps
        ),
        ChartKind::Bars,
        [
            "rung",
            "passes",
            "launches",
            "bytes per key",
            "median ms",
            "Gkeys/s",
            "GB/s",
            "speedup over the rung before",
            "verdict",
        ],
    );
    // One bit per pass: per pass the bits (read 4n, write 4n), the scan (read 4n, write 4n, and
    // its look-back's few bytes), the split (read 8n of keys and scan, write 4n): 28 bytes per
    // key per pass, plus the copies in and out (16 bytes).
    // Four bits per pass: the local sort (read 4n, write 4n, the counts n / 16), the scan of
    // the counts (n / 8), the scatter (read 4n and the counts and starts n / 8, write 4n):
    // about 17 bytes per key per pass, plus the copies. Reduce-then-scan: the count (read 4n,
    // the counts n / 16), the scan (n / 8), the sort and scatter (read 4n and n / 8, write 4n):
    // about 13.
    let rungs: [(&str, &str, u64, u32, u32); 4] = [
        (
            "one bit per pass (PMPP 13.3)",
            "sort_ladder_split",
            28 * 32 + 16,
            32,
            2 + 32 * 3,
        ),
        (
            "four bits per pass, tiles sorted in shared memory (PMPP 13.4-13.5)",
            "sort_ladder_local",
            17 * 8 + 16,
            8,
            2 + 8 * 3,
        ),
        (
            "reduce-then-scan, four bits per pass (CUB before one-sweep)",
            "sort_ladder_downsweep",
            13 * 8 + 16,
            8,
            2 + 8 * 3,
        ),
        (
            "one-sweep, 8-bit digits (sort::keys)",
            "sort_onesweep_u32_v32",
            36,
            4,
            5,
        ),
    ];
    let mut failures = 0;
    let mut before: Option<f64> = None;
    for (i, &(label, kernel, per_key, passes, launches)) in rungs.iter().enumerate() {
        let mut d_keys: CudaSlice<u32> = gpu.upload(&keys)?;
        let bytes = per_key * n as u64;
        let cfg = pass_launch(n, 4, 0);
        let mut state = (&mut d_keys, &mut b.ws, &mut b.flush);
        let trial = Plan::new(gpu, opts, label, kernel)
            .bytes(bytes, Some(ceiling))
            .run_with_setup(
                &mut state,
                |s| {
                    restore(gpu, &pristine, s.0)?;
                    s.2.flush(gpu)
                },
                |s| {
                    match i {
                        0 => cpu::sort::ladder::one_bit_per_pass(gpu, s.0),
                        1 => cpu::sort::ladder::several_bits_per_pass(gpu, s.0),
                        2 => cpu::sort::ladder::reduce_then_scan(gpu, s.0),
                        _ => s.1.keys(gpu, s.0, Order::Ascending),
                    }
                    .map(|()| cfg)
                },
                |s, _| {
                    let got = gpu.download(s.0, kernel)?;
                    out.verify(
                        &dump::ladder_output(dump::LADDER_RUNGS[i]),
                        &[],
                        &got,
                        |got| check_keys(got, &keys, &index),
                    )
                },
            )?;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        table.measured_row(
            [
                label.to_string(),
                passes.to_string(),
                launches.to_string(),
                per_key.to_string(),
                format!("{ms:.4}"),
                format!("{:.2}", n as f64 / ms / 1e6),
                format!("{:.1}", trial.gbps()),
                before.map_or("-".into(), |b| format!("{:.1}x", b / ms)),
                trial.verdict(),
            ],
            trial.measurement,
        );
        before = Some(ms);
    }
    out.table(table);
    Ok(failures)
}

/// What every row of `demo sort` runs with: the device, the options, the run's copy ceiling,
/// one sort workspace and the L2 flush.
struct Bench<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    ceiling: &'a Ceiling,
    ws: RadixSort,
    flush: L2Flush,
}

impl Bench<'_> {
    /// `sort::keys` of `keys` in `order`: each rep restores the input from a pristine copy and
    /// flushes the L2 before the timed sort.
    fn keys<K: Key>(&mut self, out: &Out, row: &Row, keys: &[K], order: Order) -> Result<Trial> {
        let gpu = self.gpu;
        out.dump(&dump::entry_input(&row.dump, ""), &[], keys)?;
        let pristine = gpu.upload(keys)?;
        let mut d_keys: CudaSlice<K> = gpu.upload(keys)?;
        let index = reference_order(keys, order);
        let cfg = pass_launch(keys.len(), size_of::<K>(), 0);
        let mut state = (&mut d_keys, &mut self.ws, &mut self.flush);
        Plan::new(gpu, self.opts, row.label, row.kernel)
            .bytes(row.bytes, Some(self.ceiling))
            .run_with_setup(
                &mut state,
                |s| {
                    restore(gpu, &pristine, s.0)?;
                    s.2.flush(gpu)
                },
                |s| s.1.keys(gpu, s.0, order).map(|()| cfg),
                |s, _| {
                    let got = gpu.download(s.0, row.kernel)?;
                    out.verify(&dump::entry_output(&row.dump, ""), &[], &got, |got| {
                        check_keys(got, keys, &index)
                    })
                },
            )
    }

    /// `sort::pairs` of `keys` with each key's index as its value, ascending.
    fn pairs(&mut self, out: &Out, row: &Row, keys: &[u32]) -> Result<Trial> {
        let gpu = self.gpu;
        let values: Vec<u32> = (0..keys.len() as u32).collect();
        out.dump(&dump::entry_input(&row.dump, "keys"), &[], keys)?;
        out.dump(&dump::entry_input(&row.dump, "values"), &[], &values)?;
        let (pristine_keys, pristine_values) = (gpu.upload(keys)?, gpu.upload(&values)?);
        let mut d = (gpu.upload(keys)?, gpu.upload(&values)?);
        let index = reference_order(keys, Order::Ascending);
        let cfg = pass_launch(keys.len(), 4, 4);
        let mut state = (&mut d, &mut self.ws, &mut self.flush);
        Plan::new(gpu, self.opts, row.label, row.kernel)
            .bytes(row.bytes, Some(self.ceiling))
            .run_with_setup(
                &mut state,
                |s| {
                    restore(gpu, &pristine_keys, &mut s.0.0)?;
                    restore(gpu, &pristine_values, &mut s.0.1)?;
                    s.2.flush(gpu)
                },
                |s| {
                    let (k, v) = &mut *s.0;
                    s.1.pairs(gpu, k, v, Order::Ascending).map(|()| cfg)
                },
                |s, _| {
                    let got = gpu.download(&s.0.0, row.kernel)?;
                    let got_values = gpu.download(&s.0.1, row.kernel)?;
                    let keys =
                        out.verify(&dump::entry_output(&row.dump, "keys"), &[], &got, |got| {
                            check_keys(got, keys, &index)
                        })?;
                    let values = out.verify(
                        &dump::entry_output(&row.dump, "values"),
                        &[],
                        &got_values,
                        |got| verify::exact(got, &index),
                    )?;
                    Ok(keys.and(values))
                },
            )
    }

    /// `sort::argsort` of `keys`, ascending, into poisoned indices.
    fn argsort(&mut self, out: &Out, row: &Row, keys: &[f32]) -> Result<Trial> {
        let gpu = self.gpu;
        out.dump(&dump::entry_input(&row.dump, ""), &[], keys)?;
        let d_keys = gpu.upload(keys)?;
        let mut indices = gpu.poisoned(keys.len(), u32::MAX)?;
        let index = reference_order(keys, Order::Ascending);
        let cfg = pass_launch(keys.len(), 4, 4);
        let mut state = (&mut indices, &mut self.ws, &mut self.flush);
        Plan::new(gpu, self.opts, row.label, row.kernel)
            .bytes(row.bytes, Some(self.ceiling))
            .run_with_setup(
                &mut state,
                |s| s.2.flush(gpu),
                |s| {
                    s.1.argsort(gpu, &d_keys, s.0, Order::Ascending)
                        .map(|()| cfg)
                },
                |s, _| {
                    let got = gpu.download(s.0, row.kernel)?;
                    out.verify(&dump::entry_output(&row.dump, ""), &[], &got, |got| {
                        verify::exact(got, &index)
                    })
                },
            )
    }
}

/// Queues a copy of `pristine` over `keys` on `gpu`'s stream.
pub(crate) fn restore<T: cudarc::driver::DeviceRepr>(
    gpu: &Gpu,
    pristine: &CudaSlice<T>,
    keys: &mut CudaSlice<T>,
) -> cpu::Result<()> {
    use cpu::error::DriverContext;
    gpu.stream()
        .memcpy_dtod(pristine, keys)
        .during("restoring the keys before a sort")
}
