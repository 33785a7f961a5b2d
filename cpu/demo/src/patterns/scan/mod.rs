//! `demo scan`: its definition and tables (the ladder, the entry points, `select_if`; here), the
//! dump names ([`dump`]) and the sweeps ([`sweep`]).

mod dump;
mod ops;
mod sweep;

use anyhow::{Result, bail};
use cpu::scan::{self, Kind, Predicate, ScanElement, SelectElement, ladder, reference};
use cpu::{Gpu, verify};
use gpu::scan::lookback;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::args::refuse;
use crate::engine::harness::{Footprint, Plan, SMALL};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, kernels_each, variant_name};
use crate::engine::report::{ChartKind, Table};
use crate::engine::sweep::{SweepSpec, powers, random_floats};

/// Prefix sum: the textbook ladder (PMPP ch. 11) from Kogge-Stone to the single-pass scan with
/// decoupled look-back, then the library's entry points on i32, u32 and f32, verified and
/// timed beside the copy.
#[derive(clap::Args)]
pub(crate) struct Scan {
    /// Elements (default 2^26: 512 MiB read and written per scan).
    #[arg(long, default_value_t = 1 << 26)]
    size: usize,
    /// Run only this step of the ladder (default: every step, then the entry points).
    #[arg(long, value_enum)]
    variant: Option<ladder::Variant>,
}

impl Pattern for Scan {
    const NAME: &'static str = "scan";
    /// `cpu::scan::inclusive_sum` on i32 and f32 at 2^20, 2^22, ..., 2^30 elements.
    const SWEEPS: &'static [SweepSpec] = &[
        SweepSpec::new(
            "scan-i32",
            "cpu::scan::inclusive_sum::<i32>",
            "8 bytes per element: 1 read + 1 write",
            sweep::sweep_cases,
            sweep::sweep_i32,
        ),
        SweepSpec::new(
            "scan-f32",
            "cpu::scan::inclusive_sum::<f32>",
            "8 bytes per element: 1 read + 1 write",
            sweep::sweep_cases,
            sweep::sweep_f32,
        ),
        SweepSpec::new(
            "scan-max-f32",
            "cpu::scan::cummax::<f32>",
            "8 bytes per element: 1 read + 1 write",
            sweep::sweep_cases,
            sweep::sweep_cummax,
        ),
        SweepSpec::new(
            "select-f32",
            "cpu::scan::select_if::<f32> (x > 0: about half kept)",
            "4 bytes read per element + 4 per kept element",
            |s| powers(24, 28, 2).map(|n| s.case(&[n], None)).collect(),
            sweep::sweep_select,
        ),
    ];

    /// The ladder's steps, then the entry points' other element types.
    fn variants() -> Vec<VariantInfo> {
        let mut v = kernels_each(&ladder::Variant::ALL, |v| v.kernel_names().to_vec());
        v.push(VariantInfo {
            name: "entry-points-u32-f32".into(),
            kernels: vec![u32::KERNEL.name(), f32::KERNEL.name()],
        });
        v.push(VariantInfo {
            name: "operators".into(),
            kernels: ops::kernels(),
        });
        v.push(VariantInfo {
            name: "tile-copy".into(),
            kernels: vec![lookback::scan_tile_copy.name()],
        });
        v.push(VariantInfo {
            name: "select-if".into(),
            kernels: vec![f32::SELECT.name(), i32::SELECT.name()],
        });
        v
    }

    /// Several tiles, none whole at the end, and one tile.
    fn sanitize() -> Vec<String> {
        vec!["--size 20011".into(), "--size 1000".into()]
    }

    /// The compaction counts in u32: a whole run takes at most `u32::MAX` elements (exit
    /// status 2); the ladder alone (`--variant`) any number.
    fn check(&self) -> Result<()> {
        if self.variant.is_none() && self.size > u32::MAX as usize {
            refuse!(
                "demo scan: --size {} is beyond {} (select_if counts in u32): give --variant to run one step of the ladder alone",
                self.size,
                u32::MAX
            );
        }
        Ok(())
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(footprint(self.size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        let mut failures = ladder_table(gpu, opts, out, self.size, self.variant)?;
        if self.variant.is_none() {
            failures += entry_table(gpu, opts, out, self.size)?;
            failures += select_table(gpu, opts, out, self.size)?;
            failures += ops::operator_table(gpu, opts, out, self.size)?;
        }
        if failures > 0 {
            bail!("{failures} scan(s) disagree with the CPU reference");
        }
        Ok(())
    }
}

/// Peak memory: input and output on the device (8n bytes) with the ladder's scratch; input,
/// reference and download on the host (12n bytes, f32's reference in f64 and its magnitudes:
/// 24n).
fn footprint(n: usize) -> Footprint {
    Footprint::new(format!("scan of {n} elements"))
        .device::<i32>(2, n)
        .device_bytes(SMALL + n as u64 / 256)
        .host::<f32>(2, n)
        .host::<f64>(2, n)
        .with_ceiling()
}

fn random_i32(seed: u64, n: usize) -> Vec<i32> {
    let mut v = vec![0i32; n];
    StdRng::seed_from_u64(seed).fill(&mut v[..]);
    v
}

/// The ladder on one i32 input: returns the number of failed checks.
fn ladder_table(
    gpu: &Gpu,
    opts: &Options,
    out: &mut Out,
    n: usize,
    only: Option<ladder::Variant>,
) -> Result<usize> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let input = random_i32(opts.seed, n);
    let full = reference::scan_i32(&input, Kind::Inclusive);
    out.dump("input", &[], &input)?;
    let d_in = gpu.upload(&input)?;
    let mut ladder = ladder::Ladder::new(gpu, n)?;
    let bytes = scan::bytes_moved(n);
    let mut table = Table::new(
        "ladder",
        format!(
            "inclusive scan, N = {n} i32 ({:.0} MiB read + written), median of {} reps; block scans scan each section on its own",
            bytes as f64 / (1 << 20) as f64,
            opts.reps
        ),
        ChartKind::Bars,
        [
            "variant",
            "output",
            "grid x block",
            "median ms",
            "GB/s",
            "% of memcpy",
            "adds / n",
            "steps",
            "speedup",
            "verdict",
        ],
    );
    let mut failures = 0;
    let mut previous: Option<f64> = None;
    let variants: Vec<_> = match only {
        Some(v) => vec![v],
        None => ladder::Variant::ALL.to_vec(),
    };
    for variant in variants {
        let name = variant_name(variant);
        let mut d_out = gpu.poisoned(n, i32::MIN)?;
        let trial = Plan::new(gpu, opts, &name, variant.kernel_name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| ladder.run(gpu, variant, &d_in, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, variant.kernel_name())?;
                    out.verify(
                        &dump::ladder_output(variant),
                        &[],
                        &got,
                        |got| match variant.section() {
                            Some(s) => verify::exact(got, &reference::section_scan_i32(&input, s)),
                            None => verify::exact(got, &full),
                        },
                    )
                },
            )?;
        failures += !trial.passed() as usize;
        let ms = trial.timing.median_ms;
        let gbps = trial.gbps();
        table.measured_row(
            [
                name,
                match variant.section() {
                    Some(s) => format!("sections of {s}"),
                    None => "whole input".into(),
                },
                trial.grid_block(),
                format!("{ms:.4}"),
                format!("{gbps:.1}"),
                format!("{:.1}%", ceiling.percent(gbps)),
                format!("{:.2}", variant.adds(n) as f64 / n.max(1) as f64),
                variant.steps(n).to_string(),
                previous.map_or("-".into(), |p| format!("{:.2}x", p / ms)),
                trial.verdict(),
            ],
            trial.measurement,
        );
        previous = Some(ms);
    }
    out.table(table);
    Ok(failures)
}

/// The entry points (look-back) on i32, u32 and f32, inclusive and exclusive: returns the
/// number of failed checks.
fn entry_table(gpu: &Gpu, opts: &Options, out: &mut Out, n: usize) -> Result<usize> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let bytes = scan::bytes_moved(n);
    let mut table = Table::new(
        "entry-points",
        format!(
            "cpu::scan entry points (decoupled look-back), N = {n}, median of {} reps",
            opts.reps
        ),
        ChartKind::Bars,
        [
            "call",
            "median ms",
            "GB/s",
            "% of memcpy",
            "max error / bound",
            "verdict",
        ],
    );
    let mut failures = 0;
    let ints = random_i32(opts.seed ^ 1, n);
    out.dump(&dump::entry_input("i32"), &[], &ints)?;
    for kind in [Kind::Inclusive, Kind::Exclusive] {
        let expected = reference::scan_i32(&ints, kind);
        let d_in = gpu.upload(&ints)?;
        let mut d_out = gpu.poisoned(n, i32::MIN)?;
        let label = format!("{}_sum::<i32>", kind_name(kind));
        let trial = Plan::new(gpu, opts, &label, i32::KERNEL.name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| call(gpu, kind, &d_in, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, "scan")?;
                    out.verify(&dump::entry_output(kind, "i32"), &[], &got, |got| {
                        verify::exact(got, &expected)
                    })
                },
            )?;
        failures += !trial.passed() as usize;
        push_entry_row(&mut table, &label, &trial, &ceiling, None);
    }
    let uints: Vec<u32> = ints.iter().map(|&x| x as u32).collect();
    drop(ints);
    out.dump(&dump::entry_input("u32"), &[], &uints)?;
    {
        let expected = reference::scan_u32(&uints, Kind::Inclusive);
        let d_in = gpu.upload(&uints)?;
        let mut d_out = gpu.poisoned(n, 0xdead_beef_u32)?;
        let label = "inclusive_sum::<u32>".to_string();
        let trial = Plan::new(gpu, opts, &label, u32::KERNEL.name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| call(gpu, Kind::Inclusive, &d_in, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, "scan")?;
                    out.verify(
                        &dump::entry_output(Kind::Inclusive, "u32"),
                        &[],
                        &got,
                        |got| verify::exact(got, &expected),
                    )
                },
            )?;
        failures += !trial.passed() as usize;
        push_entry_row(&mut table, &label, &trial, &ceiling, None);
        // The floor of the scan's tile shape: the same launch, loads and stores, no scan.
        let mut ws = scan::ScanWorkspace::<u32>::new(gpu)?;
        let mut d_out = gpu.poisoned(n, 0xdead_beef_u32)?;
        let label = "tile copy (the look-back's traffic, no scan)".to_string();
        let trial = Plan::new(gpu, opts, &label, lookback::scan_tile_copy.name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| ws.tile_copy(gpu, &d_in, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, "tile copy")?;
                    out.verify(dump::TILE_COPY, &[], &got, |got| verify::exact(got, &uints))
                },
            )?;
        failures += !trial.passed() as usize;
        push_entry_row(&mut table, &label, &trial, &ceiling, None);
    }
    drop(uints);
    let floats = random_floats(opts.seed ^ 2, n);
    out.dump(&dump::entry_input("f32"), &[], &floats)?;
    for kind in [Kind::Inclusive, Kind::Exclusive] {
        let d_in = gpu.upload(&floats)?;
        let mut d_out = gpu.poisoned(n, f32::NAN)?;
        let label = format!("{}_sum::<f32>", kind_name(kind));
        let mut worst = 0.0f64;
        let trial = Plan::new(gpu, opts, &label, f32::KERNEL.name())
            .bytes(bytes, Some(&ceiling))
            .run(
                &mut d_out,
                |d_out| call(gpu, kind, &d_in, d_out),
                |d_out, _| {
                    let got = gpu.download(d_out, "scan")?;
                    out.verify(&dump::entry_output(kind, "f32"), &[], &got, |got| {
                        let (exact, magnitude) = reference::scan_f32(&floats, kind);
                        worst = got
                            .iter()
                            .zip(exact.iter().zip(&magnitude))
                            .enumerate()
                            .map(|(i, (&g, (&e, &m)))| {
                                (g as f64 - e).abs()
                                    / reference::f32_bound(i, m).max(f64::MIN_POSITIVE)
                            })
                            .fold(0.0, f64::max);
                        reference::check_f32(got, &floats, kind)
                    })
                },
            )?;
        failures += !trial.passed() as usize;
        push_entry_row(&mut table, &label, &trial, &ceiling, Some(worst));
    }
    out.table(table);
    Ok(failures)
}

/// Bytes stream compaction moves: the input read, the kept elements written, the count.
fn select_bytes(n: usize, kept: usize) -> u64 {
    4 * (n + kept + 1) as u64
}

/// Stream compaction of f32 (`x > 0`, about half kept) and i32 (`x != 2` over 0..4, three
/// quarters kept): returns the number of failed checks.
fn select_table(gpu: &Gpu, opts: &Options, out: &mut Out, n: usize) -> Result<usize> {
    let ceiling = out.ceiling(gpu, opts.reps)?;
    let mut table = Table::new(
        "select-if",
        format!(
            "stream compaction (cpu::scan::select_if), N = {n}; bytes = input read + kept written, median of {} reps",
            opts.reps
        ),
        ChartKind::Bars,
        [
            "call",
            "kept",
            "median ms",
            "GB/s",
            "% of memcpy",
            "verdict",
        ],
    );
    let mut failures = 0;
    let floats = random_floats(opts.seed ^ 3, n);
    let ints: Vec<i32> = random_i32(opts.seed ^ 4, n)
        .into_iter()
        .map(|x| x.rem_euclid(4))
        .collect();
    failures += select_row(
        (gpu, opts, out),
        &mut table,
        &ceiling,
        &floats,
        Predicate::Greater(0.0),
        "select_if::<f32>(x > 0)",
    )?;
    failures += select_row(
        (gpu, opts, out),
        &mut table,
        &ceiling,
        &ints,
        Predicate::NotEqual(2),
        "select_if::<i32>(x != 2), x in 0..4",
    )?;
    out.table(table);
    Ok(failures)
}

/// One compaction row; its input, kept elements and count dumped as `input_select_<type>`,
/// `output_select_if_<type>` and `output_select_if_<type>_count`.
fn select_row<T: SelectElement + PartialOrd + std::fmt::Debug + npyz::AutoSerialize>(
    (gpu, opts, out): (&Gpu, &Options, &Out),
    table: &mut Table,
    ceiling: &crate::engine::timing::Ceiling,
    input: &[T],
    predicate: Predicate<T>,
    label: &str,
) -> Result<usize> {
    let n = input.len();
    let ty = std::any::type_name::<T>();
    out.dump(&dump::select_input(ty), &[], input)?;
    let expected = reference::select_if(input, predicate);
    let d_in = gpu.upload(input)?;
    let poison = input.first().copied().unwrap_or_default();
    let mut state = (gpu.poisoned(n, poison)?, gpu.poisoned(1, u32::MAX)?);
    let trial = Plan::new(gpu, opts, label, T::SELECT.name())
        .bytes(select_bytes(n, expected.len()), Some(ceiling))
        .run(
            &mut state,
            |(d_out, d_count)| {
                scan::select_if(gpu, &d_in, predicate, d_out, d_count)?;
                scan::ScanWorkspace::<T>::select_launch_config(gpu, n)
            },
            |(d_out, d_count), _| {
                let count = gpu.download(d_count, "select_if")?;
                let got = gpu.download(d_out, "select_if")?;
                out.verify(&dump::select_count(ty), &[], &count, |_| ())?;
                let kept = &got[..(count[0] as usize).min(n)];
                out.verify(&dump::select_output(ty), &[], kept, |_| {
                    check_selected(&got, count[0] as usize, &expected)
                })
            },
        )?;
    let gbps = trial.gbps();
    table.measured_row(
        [
            label.to_string(),
            format!(
                "{} ({:.1}%)",
                expected.len(),
                100.0 * expected.len() as f64 / n.max(1) as f64
            ),
            format!("{:.4}", trial.timing.median_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            trial.verdict(),
        ],
        trial.measurement.clone(),
    );
    Ok(!trial.passed() as usize)
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Inclusive => "inclusive",
        Kind::Exclusive => "exclusive",
    }
}

/// One entry-point call, returning the launch configuration it used (for the tables).
fn call<T: ScanElement>(
    gpu: &Gpu,
    kind: Kind,
    input: &cudarc::driver::CudaSlice<T>,
    output: &mut cudarc::driver::CudaSlice<T>,
) -> cpu::Result<cudarc::driver::LaunchConfig> {
    match kind {
        Kind::Inclusive => scan::inclusive_sum(gpu, input, output)?,
        Kind::Exclusive => scan::exclusive_sum(gpu, input, output)?,
    }
    scan::ScanWorkspace::<T>::launch_config(gpu, input.len())
}

fn push_entry_row<V: crate::engine::harness::Verdict>(
    table: &mut Table,
    label: &str,
    trial: &crate::engine::harness::Trial<V>,
    ceiling: &crate::engine::timing::Ceiling,
    worst: Option<f64>,
) {
    let gbps = trial.gbps();
    table.measured_row(
        [
            label.to_string(),
            format!("{:.4}", trial.timing.median_ms),
            format!("{gbps:.1}"),
            format!("{:.1}%", ceiling.percent(gbps)),
            worst.map_or("exact".into(), |w| format!("{w:.2e}")),
            trial.verdict(),
        ],
        trial.measurement.clone(),
    );
}

/// The compaction's output against the CPU's: the count, then the kept elements.
fn check_selected<T: PartialEq + std::fmt::Debug>(
    got: &[T],
    count: usize,
    expected: &[T],
) -> Result<(), verify::Mismatch> {
    if count != expected.len() {
        return Err(verify::Mismatch {
            index: 0,
            got: format!("count {count}"),
            expected: format!("count {}", expected.len()),
            count: 1,
        });
    }
    verify::exact(&got[..count], expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_run_counts_in_u32_the_ladder_alone_does_not() {
        let scan = |size, variant| Scan { size, variant };
        let big = u32::MAX as usize + 1;
        let e = scan(big, None).check().unwrap_err();
        assert_eq!(crate::engine::args::exit_status(&e), 2, "{e}");
        assert!(scan(u32::MAX as usize, None).check().is_ok());
        assert!(scan(big, Some(ladder::Variant::KoggeStone)).check().is_ok());
    }
}
