//! GPU trials of the prefix scan: the look-back entry points for `i32`, `u32` and `f32`,
//! inclusive and exclusive, out of place and in place, on aligned and misaligned views; the
//! look-back under stress (many launches on one workspace, concurrent scans on several
//! streams, 2^31 + 7 elements); every ladder step; stream compaction (every predicate of
//! every type, both forms of the count, outputs longer than the input); and the refusals of
//! bad input (buffers of another context are refused by `Gpu::check_buffer`, tried in
//! `soundness`).

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
    compare_selected(&got, count as usize, input, predicate, poison, &bits)
}

/// A compaction's output and count against the CPU's filter of `input`: the count, the kept
/// elements bit for bit, and every element past the count still `poison`.
fn compare_selected<T: scan::SelectElement + PartialOrd>(
    got: &[T],
    count: usize,
    input: &[T],
    predicate: scan::Predicate<T>,
    poison: T,
    bits: impl Fn(T) -> u32,
) -> Result<(), String> {
    let expected = reference::select_if(input, predicate);
    if count != expected.len() {
        return Err(format!("count {count}, expected {}", expected.len()));
    }
    let kept: Vec<u32> = got[..count].iter().map(|&x| bits(x)).collect();
    let want: Vec<u32> = expected.iter().map(|&x| bits(x)).collect();
    if let Some(d) = first_difference(&kept, &want) {
        return Err(format!("selected elements (as bits): {d}"));
    }
    if let Some(i) = got[count..].iter().position(|&x| bits(x) != bits(poison)) {
        return Err(format!(
            "output {} past the count (of {}) was written",
            count + i,
            got.len()
        ));
    }
    Ok(())
}

/// Elements past the input's length in the outputs of [`select_matrix_trials`]: an output
/// longer than the input is accepted, and its tail stays untouched.
const SELECT_EXTRA: usize = 37;

/// An element type of the compaction matrix: seeded inputs that hit the predicates' bounds
/// often, the seven predicates (one of each kind), a poison, and the bits compared.
trait SelectCase: scan::SelectElement + PartialOrd + std::fmt::Debug + Sync {
    const NAME: &'static str;
    const POISON: Self;
    /// Half of the elements drawn from the bounds and the type's special values, half from
    /// the whole type (or `fast_floats`).
    fn input(seed: u64, n: usize) -> Vec<Self>;
    fn predicates() -> [(&'static str, scan::Predicate<Self>); 7];
    fn bits(self) -> u32;
}

/// Draws `n` elements: with probability 1/2 one of `special`, otherwise `any(bits)`.
fn mixed<T: Copy>(seed: u64, n: usize, special: &[T], any: impl Fn(u32) -> T) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let r: u64 = rng.random();
            if r & 1 == 0 {
                special[(r >> 1) as usize % special.len()]
            } else {
                any((r >> 32) as u32)
            }
        })
        .collect()
}

impl SelectCase for i32 {
    const NAME: &'static str = "i32";
    const POISON: i32 = i32::MIN + 7;
    fn input(seed: u64, n: usize) -> Vec<i32> {
        mixed(seed, n, &[-2, -1, 0, 1, 2, 3, i32::MIN, i32::MAX], |b| b as i32)
    }
    fn predicates() -> [(&'static str, scan::Predicate<i32>); 7] {
        use scan::Predicate::*;
        [
            ("greater_0", Greater(0)),
            ("greater_equal_1", GreaterEqual(1)),
            ("less_0", Less(0)),
            ("less_equal_minus_1", LessEqual(-1)),
            ("equal_2", Equal(2)),
            ("not_equal_2", NotEqual(2)),
            ("in_range_minus_1_to_2", InRange { lower: -1, upper: 2 }),
        ]
    }
    fn bits(self) -> u32 {
        self as u32
    }
}

impl SelectCase for u32 {
    const NAME: &'static str = "u32";
    const POISON: u32 = 0xdead_beef;
    fn input(seed: u64, n: usize) -> Vec<u32> {
        mixed(seed, n, &[0, 1, 2, 3, 4, 0x8000_0000, u32::MAX], |b| b)
    }
    fn predicates() -> [(&'static str, scan::Predicate<u32>); 7] {
        use scan::Predicate::*;
        [
            ("greater_2", Greater(2)),
            ("greater_equal_0x80000000", GreaterEqual(0x8000_0000)),
            ("less_2", Less(2)),
            ("less_equal_1", LessEqual(1)),
            ("equal_max", Equal(u32::MAX)),
            ("not_equal_0", NotEqual(0)),
            ("in_range_1_to_4", InRange { lower: 1, upper: 4 }),
        ]
    }
    fn bits(self) -> u32 {
        self
    }
}

impl SelectCase for f32 {
    const NAME: &'static str = "f32";
    const POISON: f32 = -1234.5;
    fn input(seed: u64, n: usize) -> Vec<f32> {
        let special = [
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            0.5,
            -0.5,
            1.0,
        ];
        // The other half uniform in [-1, 1), as `fast_floats`.
        mixed(seed, n, &special, |b| {
            (b >> 8) as f32 * (2.0 / (1u32 << 24) as f32) - 1.0
        })
    }
    fn predicates() -> [(&'static str, scan::Predicate<f32>); 7] {
        use scan::Predicate::*;
        [
            ("greater_0", Greater(0.0)),
            ("greater_equal_0", GreaterEqual(0.0)),
            ("less_minus_0", Less(-0.0)),
            ("less_equal_0", LessEqual(0.0)),
            ("equal_0", Equal(0.0)),
            ("not_equal_0", NotEqual(0.0)),
            ("in_range_minus_half_to_half", InRange { lower: -0.5, upper: 0.5 }),
        ]
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

/// Both forms of the compaction on `input` (views starting `offset` elements into their
/// buffers): [`scan::select_if`] into a poisoned device count, and [`scan::select_if_count`],
/// each into an output [`SELECT_EXTRA`] elements longer than the input, poisoned.
fn check_select_both<T: SelectCase>(
    input: &[T],
    predicate: scan::Predicate<T>,
    offset: usize,
) -> Result<(), String> {
    let gpu = gpu().map_err(|e| format!("{e:?}"))?;
    let n = input.len();
    let m = n + SELECT_EXTRA;
    let ((device, device_count), (host, host_count)) = (|| {
        let mut padded = vec![T::POISON; offset];
        padded.extend_from_slice(input);
        let d_in = gpu.upload(&padded)?;
        let d_in = d_in.slice(offset..);
        let mut d_out = gpu.poisoned(offset + m, T::POISON)?;
        let mut d_count = gpu.poisoned(1, u32::MAX)?;
        scan::select_if(
            &gpu,
            &d_in,
            predicate,
            &mut d_out.slice_mut(offset..),
            &mut d_count,
        )?;
        let device = (
            gpu.download(&d_out.slice(offset..), "select_if")?,
            gpu.download(&d_count, "select_if")?[0] as usize,
        );
        let mut d_out = gpu.poisoned(offset + m, T::POISON)?;
        let count = scan::select_if_count(&gpu, &d_in, predicate, &mut d_out.slice_mut(offset..))?;
        let host = (gpu.download(&d_out.slice(offset..), "select_if_count")?, count);
        Ok::<_, Error>((device, host))
    })()
    .map_err(|e| e.to_string())?;
    compare_selected(&device, device_count, input, predicate, T::POISON, T::bits)
        .map_err(|e| format!("select_if: {e}"))?;
    compare_selected(&host, host_count, input, predicate, T::POISON, T::bits)
        .map_err(|e| format!("select_if_count: {e}"))
}

/// Every predicate of every type at every length, both forms, outputs longer than the input;
/// and each type's range on views one element off the 16-byte boundary (4-byte loads).
fn select_matrix_trials<T: SelectCase>() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (tag, predicate) in T::predicates() {
        for (case, n) in LENGTHS {
            let name = format!("scan::select_if::{}::{tag}::{case}", T::NAME);
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                let input = T::input(seed, n);
                check_select_both(&input, predicate, 0)
                    .map_err(|e| format!("n={n} seed={seed}: {e}").into())
            }));
        }
    }
    let (tag, range) = T::predicates()[6];
    for (case, n) in [("one", 1), ("tile_plus_1", 4097), ("prime_100003", 100_003)] {
        let name = format!("scan::select_if::{}::{tag}::misaligned::{case}", T::NAME);
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || {
            let input = T::input(seed, n);
            check_select_both(&input, range, 1)
                .map_err(|e| format!("n={n} seed={seed}: {e}").into())
        }));
    }
    trials
}

/// [`scan::select_if_count`] again and again on one workspace (its count scalar reused),
/// between scans that share the workspace's epochs, at random lengths and predicates.
fn select_count_stress_trial() -> Trial {
    let name = "scan::select_if_count::stress::one_workspace_100_launches".to_string();
    let seed = seed_for(&name);
    gpu_trial(name, move || {
        let gpu = gpu()?;
        let mut ws = scan::ScanWorkspace::<u32>::new(&gpu).map_err(|e| e.to_string())?;
        let mut rng = StdRng::seed_from_u64(seed);
        let predicates = u32::predicates();
        for launch in 0..100u64 {
            let n = rng.random_range(0..(1 << 17));
            let (_, predicate) = predicates[launch as usize % predicates.len()];
            let input = u32::input(seed ^ launch, n);
            let (got, count, scanned) = (|| {
                let d_in = gpu.upload(&input)?;
                let mut d_out = gpu.poisoned(n + 3, u32::POISON)?;
                let count = ws.select_if_count(&gpu, &d_in, predicate, &mut d_out)?;
                let mut d_scan = gpu.poisoned(n, 0u32)?;
                ws.scan(&gpu, Kind::Inclusive, &d_in, &mut d_scan)?;
                Ok::<_, Error>((
                    gpu.download(&d_out, "select_if_count")?,
                    count,
                    gpu.download(&d_scan, "scan_lookback_u32")?,
                ))
            })()
            .map_err(|e| e.to_string())?;
            compare_selected(&got, count, &input, predicate, u32::POISON, u32::bits)
                .map_err(|e| format!("launch {launch}, n={n} seed={seed}: {e}"))?;
            if let Some(d) = first_difference(&scanned, &reference::scan_u32(&input, Kind::Inclusive)) {
                return Err(format!("scan after launch {launch}, n={n} seed={seed}: {d}").into());
            }
        }
        Ok(())
    })
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
        gpu_trial("scan::refuses::select_if_output_shorter_than_input".into(), || {
            let gpu = gpu()?;
            let x = gpu.upload(&[1u32, 2, 3]).map_err(|e| e.to_string())?;
            let mut y = gpu.zeros::<u32>(2).map_err(|e| e.to_string())?;
            let mut c = gpu.zeros::<u32>(1).map_err(|e| e.to_string())?;
            let short = |e: &Error| {
                matches!(
                    e,
                    Error::LengthMismatch {
                        expected: 3,
                        actual: 2,
                        ..
                    }
                )
            };
            expect_err(
                scan::select_if(&gpu, &x, scan::Predicate::Greater(1), &mut y, &mut c),
                short,
            )?;
            expect_err(
                scan::select_if_count(&gpu, &x, scan::Predicate::Greater(1), &mut y),
                short,
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
    trials.extend(select_matrix_trials::<f32>());
    trials.extend(select_matrix_trials::<i32>());
    trials.extend(select_matrix_trials::<u32>());
    trials.push(select_count_stress_trial());
    trials.extend(tile_copy_trials());
    trials.extend(refusal_trials());
    trials
}
