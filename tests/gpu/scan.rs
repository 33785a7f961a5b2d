//! GPU trials of the prefix scan: the look-back entry points for `i32`, `u32` and `f32`,
//! inclusive and exclusive, out of place and in place, on aligned and misaligned views; the
//! look-back under stress (many launches on one workspace, concurrent scans on several
//! streams, 2^31 + 7 elements); every ladder step; and the refusals of bad input (buffers of
//! another context are refused by `Gpu::check_buffer`, tried in `soundness`).

use cpu::scan::{self, Kind, ScanElement, ladder, reference};
use cpu::{Error, Gpu};
use lab_tests::{expect_err, fast_floats, gpu, gpu_trial, large_memory, seed_for};
use libtest_mimic::Trial;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Lengths around the smallest tile (4096), a warp's run (1024) and the vector (4), and long
/// enough for the blocks of 256 and 512 on a GPU of 132 SMs.
const LENGTHS: [(&str, usize); 13] = [
    ("empty", 0),
    ("one", 1),
    ("3", 3),
    ("31", 31),
    ("1025", 1025),
    ("tile_minus_1", 4095),
    ("tile", 4096),
    ("tile_plus_1", 4097),
    ("two_tiles_plus_5", 8197),
    ("prime_100003", 100_003),
    ("2e20_plus_7", (1 << 20) + 7),
    ("blocks_of_256_2e23_plus_5", (1 << 23) + 5),
    ("blocks_of_512_2e24_plus_3", (1 << 24) + 3),
];

fn random_i32(seed: u64, n: usize) -> Vec<i32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = vec![0i32; n];
    rng.fill(&mut v[..]);
    v
}

fn random_u32(seed: u64, n: usize) -> Vec<u32> {
    random_i32(seed, n).into_iter().map(|x| x as u32).collect()
}

/// How a trial hands the data to the entry point.
#[derive(Clone, Copy, Debug)]
enum Placement {
    /// Separate input and output buffers.
    OutOfPlace,
    /// One buffer, scanned in place.
    InPlace,
    /// Views that start one element into their buffers (4-byte loads only).
    Misaligned,
}

/// Runs the entry point for `kind` and `placement` on `input`, with the output poisoned first,
/// and downloads the result.
fn run_scan<T: ScanElement>(
    gpu: &Gpu,
    input: &[T],
    kind: Kind,
    placement: Placement,
    poison: T,
) -> cpu::Result<Vec<T>> {
    let n = input.len();
    let name = T::KERNEL.name();
    match placement {
        Placement::OutOfPlace => {
            let d_in = gpu.upload(input)?;
            let mut d_out = gpu.poisoned(n, poison)?;
            match kind {
                Kind::Inclusive => scan::inclusive_sum(gpu, &d_in, &mut d_out)?,
                Kind::Exclusive => scan::exclusive_sum(gpu, &d_in, &mut d_out)?,
            }
            gpu.download(&d_out, name)
        }
        Placement::InPlace => {
            let mut d = gpu.upload(input)?;
            match kind {
                Kind::Inclusive => scan::inclusive_sum_in_place(gpu, &mut d)?,
                Kind::Exclusive => scan::exclusive_sum_in_place(gpu, &mut d)?,
            }
            gpu.download(&d, name)
        }
        Placement::Misaligned => {
            let mut padded = vec![poison; n + 1];
            padded[1..].copy_from_slice(input);
            let d_in = gpu.upload(&padded)?;
            let mut d_out = gpu.poisoned(n + 1, poison)?;
            let mut out = d_out.slice_mut(1..);
            match kind {
                Kind::Inclusive => scan::inclusive_sum(gpu, &d_in.slice(1..), &mut out)?,
                Kind::Exclusive => scan::exclusive_sum(gpu, &d_in.slice(1..), &mut out)?,
            }
            let all = gpu.download(&d_out, name)?;
            Ok(all[1..].to_vec())
        }
    }
}

fn first_difference<T: PartialEq + std::fmt::Debug>(got: &[T], expected: &[T]) -> Option<String> {
    if got.len() != expected.len() {
        return Some(format!("{} elements, expected {}", got.len(), expected.len()));
    }
    got.iter()
        .zip(expected)
        .position(|(g, e)| g != e)
        .map(|i| {
            let wrong = got.iter().zip(expected).filter(|(g, e)| g != e).count();
            format!(
                "{wrong} wrong, first at {i}: got {:?}, expected {:?}",
                got[i], expected[i]
            )
        })
}

fn lookback_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let placements = [
        Placement::OutOfPlace,
        Placement::InPlace,
        Placement::Misaligned,
    ];
    for (case, n) in LENGTHS {
        for kind in [Kind::Inclusive, Kind::Exclusive] {
            for placement in placements {
                let tag = format!("{kind:?}::{placement:?}::{case}").to_lowercase();
                let name = format!("scan::lookback_i32::{tag}");
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let input = random_i32(seed, n);
                    let got = run_scan(&gpu, &input, kind, placement, i32::MIN)
                        .map_err(|e| e.to_string())?;
                    match first_difference(&got, &reference::scan_i32(&input, kind)) {
                        None => Ok(()),
                        Some(d) => Err(format!("n={n} seed={seed}: {d}").into()),
                    }
                }));
                let name = format!("scan::lookback_u32::{tag}");
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let input = random_u32(seed, n);
                    let got = run_scan(&gpu, &input, kind, placement, 0xdead_beef)
                        .map_err(|e| e.to_string())?;
                    match first_difference(&got, &reference::scan_u32(&input, kind)) {
                        None => Ok(()),
                        Some(d) => Err(format!("n={n} seed={seed}: {d}").into()),
                    }
                }));
                let name = format!("scan::lookback_f32::{tag}");
                let seed = seed_for(&name);
                trials.push(gpu_trial(name, move || {
                    let gpu = gpu()?;
                    let input = fast_floats(seed, n);
                    let got = run_scan(&gpu, &input, kind, placement, f32::NAN)
                        .map_err(|e| e.to_string())?;
                    reference::check_f32(&got, &input, kind)
                        .map_err(|m| format!("n={n} seed={seed}: {m}").into())
                }));
            }
        }
    }
    trials.push(gpu_trial(
        "scan::lookback_f32::nan_and_infinities".into(),
        || {
            let gpu = gpu()?;
            let n = 3 * 4096 + 11;
            let mut input = fast_floats(seed_for("scan::nan"), n);
            input[5000] = f32::INFINITY;
            let got = run_scan(&gpu, &input, Kind::Inclusive, Placement::OutOfPlace, 0.0)
                .map_err(|e| e.to_string())?;
            reference::check_f32(&got, &input, Kind::Inclusive).map_err(|m| m.to_string())?;
            input[9000] = f32::NAN;
            let got = run_scan(&gpu, &input, Kind::Inclusive, Placement::OutOfPlace, 0.0)
                .map_err(|e| e.to_string())?;
            reference::check_f32(&got, &input, Kind::Inclusive).map_err(|m| m.to_string().into())
        },
    ));
    trials
}

/// The look-back under stress: many launches on one workspace (each a fresh epoch), several
/// streams scanning at once, and more than 2^31 elements.
fn stress_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let name = "scan::lookback_i32::stress::one_workspace_200_launches".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let gpu = gpu()?;
        let mut ws = scan::ScanWorkspace::<i32>::new(&gpu).map_err(|e| e.to_string())?;
        let mut rng = StdRng::seed_from_u64(seed);
        for launch in 0..200 {
            let n = rng.random_range(1..(1 << 18));
            let input = random_i32(seed ^ launch, n);
            let kind = if launch % 2 == 0 {
                Kind::Inclusive
            } else {
                Kind::Exclusive
            };
            let got = (|| {
                let d_in = gpu.upload(&input)?;
                let mut d_out = gpu.poisoned(n, i32::MIN)?;
                ws.scan(&gpu, kind, &d_in, &mut d_out)?;
                gpu.download(&d_out, "scan_lookback_i32")
            })()
            .map_err(|e| e.to_string())?;
            if let Some(d) = first_difference(&got, &reference::scan_i32(&input, kind)) {
                return Err(format!("launch {launch}, n={n} seed={seed}: {d}").into());
            }
        }
        Ok(())
    }));
    let name = "scan::lookback_i32::stress::four_streams_at_once".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let base = gpu()?;
        let n = (1 << 22) + 13;
        let streams: Vec<Gpu> = (0..4)
            .map(|_| base.with_new_stream())
            .collect::<cpu::Result<_>>()
            .map_err(|e| e.to_string())?;
        let inputs: Vec<Vec<i32>> = (0..4).map(|s| random_i32(seed + s, n)).collect();
        let run = || -> cpu::Result<Vec<Vec<i32>>> {
            let mut buffers = Vec::new();
            for (g, input) in streams.iter().zip(&inputs) {
                buffers.push((g.upload(input)?, g.poisoned(n, i32::MIN)?));
            }
            // Queue every scan before waiting for any.
            for _round in 0..3 {
                for (g, (d_in, d_out)) in streams.iter().zip(buffers.iter_mut()) {
                    scan::inclusive_sum(g, &*d_in, d_out)?;
                }
            }
            streams
                .iter()
                .zip(&buffers)
                .map(|(g, (_, d_out))| g.download(d_out, "scan_lookback_i32"))
                .collect()
        };
        let outputs = run().map_err(|e| e.to_string())?;
        for (s, (got, input)) in outputs.iter().zip(&inputs).enumerate() {
            if let Some(d) = first_difference(got, &reference::scan_i32(input, Kind::Inclusive)) {
                return Err(format!("stream {s}, n={n} seed={seed}: {d}").into());
            }
        }
        Ok(())
    }));
    let name = "scan::lookback_i32::inclusive::in_place::2e31_plus_7".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let _big = large_memory();
        let gpu = gpu()?;
        let n = (1usize << 31) + 7;
        // A cheap hash of the index and the seed: 2^31 random draws would dominate the trial.
        let input: Vec<i32> = (0..n as u64)
            .map(|i| ((i ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as i32 - (1 << 23))
            .collect();
        let got = run_scan(&gpu, &input, Kind::Inclusive, Placement::InPlace, 0)
            .map_err(|e| e.to_string())?;
        match first_difference(&got, &reference::scan_i32(&input, Kind::Inclusive)) {
            None => Ok(()),
            Some(d) => Err(format!("n={n} seed={seed}: {d}").into()),
        }
    }));
    trials
}

fn ladder_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let lengths = [
        ("one", 1),
        ("31", 31),
        ("1023", 1023),
        ("1024", 1024),
        ("1025", 1025),
        ("4097", 4097),
        ("prime_100003", 100_003),
        ("2e20_plus_7", (1 << 20) + 7),
        ("three_levels_2e24_plus_9", (1 << 24) + 9),
    ];
    for variant in ladder::Variant::ALL {
        for (case, n) in lengths {
            let name = format!("scan::ladder::{variant:?}::{case}");
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let gpu = gpu()?;
                let input = random_i32(seed, n);
                let got = (|| {
                    let mut ladder = ladder::Ladder::new(&gpu, n)?;
                    let d_in = gpu.upload(&input)?;
                    let mut d_out = gpu.poisoned(n, i32::MIN)?;
                    // Twice: the second launch reuses the scratch (counters, epochs).
                    ladder.run(&gpu, variant, &d_in, &mut d_out)?;
                    gpu.upload_into(&vec![i32::MIN; n], &mut d_out)?;
                    ladder.run(&gpu, variant, &d_in, &mut d_out)?;
                    gpu.download(&d_out, variant.kernel_name())
                })()
                .map_err(|e| e.to_string())?;
                let expected = match variant.section() {
                    Some(section) => reference::section_scan_i32(&input, section),
                    None => reference::scan_i32(&input, Kind::Inclusive),
                };
                match first_difference(&got, &expected) {
                    None => Ok(()),
                    Some(d) => Err(format!("n={n} seed={seed}: {d}").into()),
                }
            }));
        }
    }
    trials
}

/// Stream compaction: `f32 > 0` (about half kept), `i32 < 0`, `i32 != 2` over values 0..4
/// (three quarters kept, in runs), each against the CPU's filter, bit for bit, with the count
/// and the untouched rest of the poisoned output checked too.
fn select_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (case, n) in LENGTHS {
        let name = format!("scan::select_if_f32::greater_than_0::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let input = fast_floats(seed, n);
            check_select(&input, scan::Predicate::Greater(0.0), f32::NAN, |x| x.to_bits())
                .map_err(|e| format!("n={n} seed={seed}: {e}").into())
        }));
        let name = format!("scan::select_if_i32::less_than_0::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let input = random_i32(seed, n);
            check_select(&input, scan::Predicate::Less(0), i32::MIN, |x| x as u32)
                .map_err(|e| format!("n={n} seed={seed}: {e}").into())
        }));
        let name = format!("scan::select_if_i32::not_equal_2_of_0_to_3::{case}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let input: Vec<i32> = random_i32(seed, n).iter().map(|x| x.rem_euclid(4)).collect();
            check_select(&input, scan::Predicate::NotEqual(2), -7, |x| x as u32)
                .map_err(|e| format!("n={n} seed={seed}: {e}").into())
        }));
    }
    trials
}

fn check_select<T: scan::SelectElement + PartialOrd + std::fmt::Debug>(
    input: &[T],
    predicate: scan::Predicate<T>,
    poison: T,
    bits: impl Fn(T) -> u32,
) -> Result<(), String> {
    let gpu = gpu().map_err(|e| format!("{e:?}"))?;
    let n = input.len();
    let (got, count) = (|| {
        let d_in = gpu.upload(input)?;
        let mut d_out = gpu.poisoned(n, poison)?;
        let mut d_count = gpu.poisoned(1, u32::MAX)?;
        scan::select_if(&gpu, &d_in, predicate, &mut d_out, &mut d_count)?;
        Ok::<_, Error>((
            gpu.download(&d_out, "select_if")?,
            gpu.download(&d_count, "select_if")?[0],
        ))
    })()
    .map_err(|e| e.to_string())?;
    let expected = reference::select_if(input, predicate);
    if count as usize != expected.len() {
        return Err(format!("count {count}, expected {}", expected.len()));
    }
    let kept: Vec<u32> = got[..expected.len()].iter().map(|&x| bits(x)).collect();
    let want: Vec<u32> = expected.iter().map(|&x| bits(x)).collect();
    if let Some(d) = first_difference(&kept, &want) {
        return Err(format!("selected elements (as bits): {d}"));
    }
    if let Some(i) = got[expected.len()..]
        .iter()
        .position(|&x| bits(x) != bits(poison))
    {
        return Err(format!("output {} past the count was written", expected.len() + i));
    }
    Ok(())
}

/// The tile-copy microbenchmark copies exactly, at every length, on one workspace; a view
/// off the 16-byte boundary is refused.
fn tile_copy_trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = LENGTHS
        .iter()
        .map(|&(label, n)| {
            let name = format!("scan::tile_copy::{label}");
            let seed = seed_for(&name);
            gpu_trial(name, move || {
                let gpu = gpu()?;
                let input = random_u32(seed, n);
                let got = (|| {
                    let mut ws = scan::ScanWorkspace::<u32>::new(&gpu)?;
                    let d_in = gpu.upload(&input)?;
                    let mut d_out = gpu.poisoned(n, 0xdead_beef_u32)?;
                    for _ in 0..2 {
                        ws.tile_copy(&gpu, &d_in, &mut d_out)?;
                    }
                    gpu.download(&d_out, "scan_tile_copy")
                })()
                .map_err(|e| e.to_string())?;
                match first_difference(&got, &input) {
                    Some(d) => Err(format!("n={n} seed={seed}: {d}").into()),
                    None => Ok(()),
                }
            })
        })
        .collect();
    trials.push(gpu_trial("scan::tile_copy::refuses_misaligned_view".into(), || {
        let gpu = gpu()?;
        let x = gpu.upload(&[1u32; 9]).map_err(|e| e.to_string())?;
        let mut y = gpu.zeros::<u32>(8).map_err(|e| e.to_string())?;
        let mut ws = scan::ScanWorkspace::<u32>::new(&gpu).map_err(|e| e.to_string())?;
        expect_err(ws.tile_copy(&gpu, &x.slice(1..), &mut y), |e| {
            matches!(e, Error::Misaligned { what: "input", alignment: 16, .. })
        })
    }));
    trials
}

fn refusal_trials() -> Vec<Trial> {
    vec![
        gpu_trial("scan::refuses::lengths_that_differ".into(), || {
            let gpu = gpu()?;
            let x = gpu.upload(&[1i32, 2, 3]).map_err(|e| e.to_string())?;
            let mut y = gpu.zeros::<i32>(2).map_err(|e| e.to_string())?;
            expect_err(scan::inclusive_sum(&gpu, &x, &mut y), |e| {
                matches!(
                    e,
                    Error::LengthMismatch {
                        expected: 3,
                        actual: 2,
                        ..
                    }
                )
            })
        }),
        gpu_trial("scan::refuses::select_if_count_of_two".into(), || {
            let gpu = gpu()?;
            let x = gpu.upload(&[1i32, 2, 3]).map_err(|e| e.to_string())?;
            let mut y = gpu.zeros::<i32>(3).map_err(|e| e.to_string())?;
            let mut c = gpu.zeros::<u32>(2).map_err(|e| e.to_string())?;
            expect_err(
                scan::select_if(&gpu, &x, scan::Predicate::Greater(1), &mut y, &mut c),
                |e| {
                    matches!(
                        e,
                        Error::LengthMismatch {
                            expected: 1,
                            actual: 2,
                            ..
                        }
                    )
                },
            )
        }),
        gpu_trial("scan::refuses::ladder_input_beyond_capacity".into(), || {
            let gpu = gpu()?;
            let mut ladder = ladder::Ladder::new(&gpu, 100).map_err(|e| e.to_string())?;
            let x = gpu.upload(&[1i32; 101]).map_err(|e| e.to_string())?;
            let mut y = gpu.zeros::<i32>(101).map_err(|e| e.to_string())?;
            expect_err(
                ladder.run(&gpu, ladder::Variant::Coarsened, &x, &mut y),
                |e| matches!(e, Error::OutOfRange { value: 101, .. }),
            )
        }),
    ]
}

pub fn trials() -> Vec<Trial> {
    let mut trials = lookback_trials();
    trials.extend(stress_trials());
    trials.extend(ladder_trials());
    trials.extend(select_trials());
    trials.extend(tile_copy_trials());
    trials.extend(refusal_trials());
    trials
}
