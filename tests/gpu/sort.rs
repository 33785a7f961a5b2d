//! GPU trials of the radix sort: every key type, both orders, keys alone, keys with values,
//! `sort_with_indices` and `argsort`, against the standard library's stable sort in
//! `torch.sort`'s order (`cpu::sort::reference`), on inputs uniform, all equal, already
//! sorted, reverse sorted, of few distinct values and of the special values (NaNs of both
//! signs, signed zeros, infinities; each integer type's extremes), at lengths around the tile
//! (4096) and the warp, bit exact; outputs poisoned first; bit ranges; many sorts on one
//! workspace; and the refusals of bad arguments. The segmented sort: every key type, both
//! orders, segments of many lengths (empty, one key, around the tile, a million keys) with
//! keys outside every segment left alone, keys alone and with 4- and 8-byte values, and bad
//! offsets refused with nothing written.

use cpu::Error;
use cpu::sort::reference::{self, TorchOrder};
use cpu::sort::{self, Order, RadixSort, SortKey};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The lengths every key type is sorted at.
const LENGTHS: [usize; 8] = [0, 1, 2, 31, 4095, 4097, 100_003, 1_000_003];
/// The long length, for the 4- and 8-byte keys.
const LONG: usize = (1 << 24) + 1;

/// A key type under test: its bits, for exact comparison and for making inputs.
trait TestKey: SortKey + TorchOrder + std::fmt::Debug + Default {
    /// The key from the low bits of `b`.
    fn from_bits(b: u64) -> Self;
    /// The key's bits.
    fn bits(self) -> u64;
    /// The values that test the order's corners.
    fn specials() -> Vec<Self>;
}

macro_rules! int_key {
    ($($t:ty as $u:ty),*) => {$(
        impl TestKey for $t {
            fn from_bits(b: u64) -> Self { b as $u as $t }
            fn bits(self) -> u64 { self as $u as u64 }
            fn specials() -> Vec<Self> { vec![<$t>::MIN, <$t>::MAX, 0, 1, (0 as $t).wrapping_sub(1)] }
        }
    )*};
}
int_key!(u8 as u8, u16 as u16, u32 as u32, u64 as u64, i8 as u8, i16 as u16, i32 as u32, i64 as u64);

macro_rules! float_key {
    ($($t:ty as $u:ty),*) => {$(
        impl TestKey for $t {
            fn from_bits(b: u64) -> Self { <$t>::from_bits(b as $u) }
            fn bits(self) -> u64 { self.to_bits() as u64 }
            fn specials() -> Vec<Self> {
                vec![<$t>::NAN, -<$t>::NAN, <$t>::from_bits(<$t>::NAN.to_bits() | 5), -0.0, 0.0,
                     <$t>::INFINITY, <$t>::NEG_INFINITY, 1.0, -1.0, <$t>::MIN_POSITIVE,
                     -<$t>::MIN_POSITIVE, <$t>::from_bits(1), <$t>::MAX, <$t>::MIN]
            }
        }
    )*};
}
float_key!(f32 as u32, f64 as u64);

/// The inputs.
#[derive(Clone, Copy, Debug)]
enum Input {
    Uniform,
    AllEqual,
    Sorted,
    Reversed,
    FewDistinct,
    Specials,
}

const INPUTS: [Input; 6] = [
    Input::Uniform,
    Input::AllEqual,
    Input::Sorted,
    Input::Reversed,
    Input::FewDistinct,
    Input::Specials,
];

fn make<K: TestKey>(input: Input, seed: u64, n: usize) -> Vec<K> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut random = || K::from_bits(rng.random::<u64>());
    match input {
        Input::Uniform => (0..n).map(|_| random()).collect(),
        Input::AllEqual => vec![random(); n],
        Input::Sorted | Input::Reversed => {
            let v: Vec<K> = (0..n).map(|_| random()).collect();
            let order = if matches!(input, Input::Sorted) {
                Order::Ascending
            } else {
                Order::Descending
            };
            reference::sort_keys(&v, order)
        }
        Input::FewDistinct => {
            let pool: Vec<K> = (0..5).map(|_| random()).collect();
            let mut rng = StdRng::seed_from_u64(seed ^ 1);
            (0..n).map(|_| pool[rng.random_range(0..5)]).collect()
        }
        Input::Specials => {
            let mut pool = K::specials();
            pool.extend((0..4).map(|_| random()));
            let mut rng = StdRng::seed_from_u64(seed ^ 2);
            (0..n).map(|_| pool[rng.random_range(0..pool.len())]).collect()
        }
    }
}

/// The first index where `got` and `want` differ in their bits.
fn compare<K: TestKey>(what: &str, got: &[K], want: &[K]) -> Result<(), Failed> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} results, not {}", got.len(), want.len()).into());
    }
    match got.iter().zip(want).position(|(a, b)| a.bits() != b.bits()) {
        None => Ok(()),
        Some(i) => Err(format!("{what}[{i}] = {:?}, not {:?}", got[i], want[i]).into()),
    }
}

fn compare_indices(got: &[u32], want: &[usize]) -> Result<(), Failed> {
    match got.iter().zip(want).position(|(&a, &b)| a as usize != b) {
        None if got.len() == want.len() => Ok(()),
        None => Err("index count differs".into()),
        Some(i) => Err(format!("indices[{i}] = {}, not {}", got[i], want[i]).into()),
    }
}

/// One trial of every entry point on one input.
fn check<K: TestKey>(input: Input, seed: u64, n: usize, order: Order) -> Result<(), Failed> {
    let gpu = gpu()?;
    let keys = make::<K>(input, seed, n);
    let index = reference::argsort(&keys, order);
    let want: Vec<K> = index.iter().map(|&i| keys[i]).collect();
    let e = |e: cpu::Error| Failed::from(e.to_string());
    // Keys in place.
    let mut d = gpu.upload(&keys).map_err(e)?;
    sort::keys(&gpu, &mut d, order).map_err(e)?;
    compare("keys", &gpu.download(&d, "sorted keys").map_err(e)?, &want)?;
    // Pairs in place: 4-byte values (the indices), and 8-byte ones.
    let mut d = gpu.upload(&keys).map_err(e)?;
    let values: Vec<u32> = (0..n as u32).collect();
    let mut v = gpu.upload(&values).map_err(e)?;
    sort::pairs(&gpu, &mut d, &mut v, order).map_err(e)?;
    compare("pairs' keys", &gpu.download(&d, "keys").map_err(e)?, &want)?;
    compare_indices(&gpu.download(&v, "values").map_err(e)?, &index)?;
    let mut d = gpu.upload(&keys).map_err(e)?;
    let wide: Vec<u64> = (0..n as u64).map(|i| i << 32 | 0xabcd).collect();
    let mut v = gpu.upload(&wide).map_err(e)?;
    sort::pairs(&gpu, &mut d, &mut v, order).map_err(e)?;
    compare("pairs' keys (8-byte values)", &gpu.download(&d, "keys").map_err(e)?, &want)?;
    let got = gpu.download(&v, "values").map_err(e)?;
    let want_wide: Vec<u64> = index.iter().map(|&i| wide[i]).collect();
    if got != want_wide {
        let i = got.iter().zip(&want_wide).position(|(a, b)| a != b).unwrap_or(0);
        return Err(format!("8-byte values differ first at {i}").into());
    }
    // Out of place: sorted keys and indices into poisoned outputs; the input is left alone.
    let d = gpu.upload(&keys).map_err(e)?;
    let mut sorted = gpu.poisoned(n, K::from_bits(0x5a5a_5a5a_5a5a_5a5a)).map_err(e)?;
    let mut idx = gpu.poisoned(n, u32::MAX).map_err(e)?;
    sort::sort_with_indices(&gpu, &d, &mut sorted, &mut idx, order).map_err(e)?;
    compare("sorted", &gpu.download(&sorted, "sorted").map_err(e)?, &want)?;
    compare_indices(&gpu.download(&idx, "indices").map_err(e)?, &index)?;
    compare("the input", &gpu.download(&d, "input").map_err(e)?, &keys)?;
    let mut idx = gpu.poisoned(n, u32::MAX).map_err(e)?;
    sort::argsort(&gpu, &d, &mut idx, order).map_err(e)?;
    compare_indices(&gpu.download(&idx, "argsort").map_err(e)?, &index)
}

fn type_trials<K: TestKey>(name: &str, long: bool, trials: &mut Vec<Trial>) {
    for order in [Order::Ascending, Order::Descending] {
        for input in INPUTS {
            let mut lengths = LENGTHS.to_vec();
            if long && matches!(input, Input::Uniform | Input::Specials) {
                lengths.push(LONG);
            }
            for n in lengths {
                let trial = format!("sort::{name}::{order:?}::{input:?}::{n}").to_lowercase();
                let seed = seed_for(&trial);
                trials.push(gpu_trial(trial, move || {
                    check::<K>(input, seed, n, order)
                        .map_err(|m| format!("n={n} seed={seed}: {}", m.message().unwrap_or("")).into())
                }));
            }
        }
    }
}

/// One trial of the ladder's rungs (u32 keys, ascending) on one input.
fn check_ladder(input: Input, seed: u64, n: usize) -> Result<(), Failed> {
    let gpu = gpu()?;
    let keys = make::<u32>(input, seed, n);
    let want = reference::sort_keys(&keys, Order::Ascending);
    let e = |e: cpu::Error| Failed::from(e.to_string());
    let mut d = gpu.upload(&keys).map_err(e)?;
    sort::ladder::one_bit_per_pass(&gpu, &mut d).map_err(e)?;
    compare("one_bit_per_pass", &gpu.download(&d, "sorted keys").map_err(e)?, &want)?;
    let mut d = gpu.upload(&keys).map_err(e)?;
    sort::ladder::several_bits_per_pass(&gpu, &mut d).map_err(e)?;
    compare("several_bits_per_pass", &gpu.download(&d, "sorted keys").map_err(e)?, &want)?;
    let mut d = gpu.upload(&keys).map_err(e)?;
    sort::ladder::reduce_then_scan(&gpu, &mut d).map_err(e)?;
    compare("reduce_then_scan", &gpu.download(&d, "sorted keys").map_err(e)?, &want)
}

fn ladder_trials(trials: &mut Vec<Trial>) {
    for input in INPUTS {
        for n in [0, 1, 2, 31, 255, 257, 4097, 100_003, 1_000_003] {
            let trial = format!("sort::ladder::{input:?}::{n}").to_lowercase();
            let seed = seed_for(&trial);
            trials.push(gpu_trial(trial, move || {
                check_ladder(input, seed, n)
                    .map_err(|m| format!("n={n} seed={seed}: {}", m.message().unwrap_or("")).into())
            }));
        }
    }
}

/// Segment layouts of the segmented trials: CSR offsets over `n` keys.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Segments of 0 to 40 keys, back to back over all the keys.
    Tiny,
    /// Lengths around the warp and the tile (0, 1, 2, 31, 4095, 4096, 4097, 10000) in turn,
    /// with 3 keys before the first and the last 5 keys in none.
    Mixed,
    /// One segment of all the keys.
    One,
}

/// The offsets of `layout` over `n` keys.
fn offsets(layout: Layout, seed: u64, n: usize) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed ^ 3);
    let mut offsets = Vec::new();
    match layout {
        Layout::Tiny => {
            let mut at = 0;
            while at < n {
                offsets.push(at as u64);
                at = (at + rng.random_range(0..=40)).min(n);
            }
            offsets.push(n as u64);
        }
        Layout::Mixed => {
            let lengths = [0, 1, 2, 31, 4095, 4096, 4097, 10_000];
            let (mut at, end) = (3.min(n), n.saturating_sub(5));
            offsets.push(at as u64);
            for i in 0.. {
                at = (at + lengths[i % lengths.len()]).min(end.max(at));
                offsets.push(at as u64);
                if at >= end {
                    break;
                }
            }
        }
        Layout::One => offsets.extend([0, n as u64]),
    }
    offsets
}

/// `keys` with each segment sorted stably in `order`, and the input index of each key.
fn sort_segments<K: TestKey>(keys: &[K], offsets: &[u64], order: Order) -> (Vec<K>, Vec<usize>) {
    let mut index: Vec<usize> = (0..keys.len()).collect();
    for w in offsets.windows(2) {
        let (b, e) = (w[0] as usize, w[1] as usize);
        for (i, j) in reference::argsort(&keys[b..e], order).into_iter().enumerate() {
            index[b + i] = b + j;
        }
    }
    (index.iter().map(|&i| keys[i]).collect(), index)
}

/// One trial of the segmented sort of keys, and of pairs with 4- and 8-byte values.
fn check_segmented<K: TestKey>(
    input: Input,
    layout: Layout,
    seed: u64,
    n: usize,
    order: Order,
) -> Result<(), Failed> {
    let gpu = gpu()?;
    let e = |e: cpu::Error| Failed::from(e.to_string());
    let keys = make::<K>(input, seed, n);
    let offsets = offsets(layout, seed, n);
    let (want, index) = sort_segments(&keys, &offsets, order);
    let d_offsets = gpu.upload(&offsets).map_err(e)?;
    let mut d = gpu.upload(&keys).map_err(e)?;
    sort::segmented_keys(&gpu, &mut d, &d_offsets, order).map_err(e)?;
    compare("segmented keys", &gpu.download(&d, "keys").map_err(e)?, &want)?;
    let mut d = gpu.upload(&keys).map_err(e)?;
    let values: Vec<u32> = (0..n as u32).collect();
    let mut v = gpu.upload(&values).map_err(e)?;
    sort::segmented_pairs(&gpu, &mut d, &mut v, &d_offsets, order).map_err(e)?;
    compare("segmented pairs' keys", &gpu.download(&d, "keys").map_err(e)?, &want)?;
    compare_indices(&gpu.download(&v, "values").map_err(e)?, &index)?;
    let mut d = gpu.upload(&keys).map_err(e)?;
    let wide: Vec<u64> = (0..n as u64).map(|i| i << 32 | 0xabcd).collect();
    let mut v = gpu.upload(&wide).map_err(e)?;
    sort::segmented_pairs(&gpu, &mut d, &mut v, &d_offsets, order).map_err(e)?;
    compare("segmented pairs' keys (8-byte values)", &gpu.download(&d, "keys").map_err(e)?, &want)?;
    let got = gpu.download(&v, "values").map_err(e)?;
    match got.iter().zip(&index).position(|(&a, &i)| a != wide[i]) {
        None => Ok(()),
        Some(i) => Err(format!("8-byte values differ first at {i}").into()),
    }
}

fn segmented_trials<K: TestKey>(name: &str, trials: &mut Vec<Trial>) {
    let cases = [
        (Input::Uniform, Layout::Tiny, 100_003),
        (Input::Specials, Layout::Tiny, 4097),
        (Input::Uniform, Layout::Mixed, 100_003),
        (Input::FewDistinct, Layout::Mixed, 40_000),
        (Input::Specials, Layout::Mixed, 100_003),
        (Input::Uniform, Layout::One, 1_000_003),
        (Input::Reversed, Layout::One, 4097),
        (Input::Uniform, Layout::One, 1),
        (Input::Uniform, Layout::Tiny, 0),
    ];
    for order in [Order::Ascending, Order::Descending] {
        for (input, layout, n) in cases {
            let trial =
                format!("sort::segmented::{name}::{order:?}::{input:?}::{layout:?}::{n}").to_lowercase();
            let seed = seed_for(&trial);
            trials.push(gpu_trial(trial, move || {
                check_segmented::<K>(input, layout, seed, n, order)
                    .map_err(|m| format!("n={n} seed={seed}: {}", m.message().unwrap_or("")).into())
            }));
        }
    }
}

/// Bad offsets are refused, naming the segment, and nothing is written.
fn segmented_refusals() -> Result<(), Failed> {
    let gpu = gpu()?;
    let e = |e: cpu::Error| Failed::from(e.to_string());
    let keys = [5u32, 4, 3, 2, 1, 0, 9, 8];
    let mut d = gpu.upload(&keys).map_err(e)?;
    let mut values = gpu.upload(&[0u32; 8]).map_err(e)?;
    // An offset below the one before it (segment 1), and an end past the keys (segment 2).
    for (bad, segment) in [(vec![0u64, 6, 2, 8], 1), (vec![0u64, 2, 4, 9], 2)] {
        let offsets = gpu.upload(&bad).map_err(e)?;
        expect_err(sort::segmented_keys(&gpu, &mut d, &offsets, Order::Ascending), |e| {
            matches!(e, Error::InvalidOffsets { segment: s, .. } if *s == segment)
        })?;
        expect_err(
            sort::segmented_pairs(&gpu, &mut d, &mut values, &offsets, Order::Ascending),
            |e| matches!(e, Error::InvalidOffsets { segment: s, .. } if *s == segment),
        )?;
    }
    let empty = gpu.zeros::<u64>(0).map_err(e)?;
    expect_err(sort::segmented_keys(&gpu, &mut d, &empty, Order::Ascending), |e| {
        matches!(e, Error::LengthMismatch { .. })
    })?;
    let offsets = gpu.upload(&[0u64, 8]).map_err(e)?;
    let mut short = gpu.zeros::<u32>(7).map_err(e)?;
    expect_err(
        sort::segmented_pairs(&gpu, &mut d, &mut short, &offsets, Order::Ascending),
        |e| matches!(e, Error::LengthMismatch { .. }),
    )?;
    compare("keys", &gpu.download(&d, "keys").map_err(e)?, &keys)?;
    compare("values", &gpu.download(&values, "values").map_err(e)?, &[0u32; 8])
}

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    ladder_trials(&mut trials);
    segmented_trials::<u8>("u8", &mut trials);
    segmented_trials::<u16>("u16", &mut trials);
    segmented_trials::<u32>("u32", &mut trials);
    segmented_trials::<u64>("u64", &mut trials);
    segmented_trials::<i8>("i8", &mut trials);
    segmented_trials::<i16>("i16", &mut trials);
    segmented_trials::<i32>("i32", &mut trials);
    segmented_trials::<i64>("i64", &mut trials);
    segmented_trials::<f32>("f32", &mut trials);
    segmented_trials::<f64>("f64", &mut trials);
    trials.push(gpu_trial("sort::segmented::refusals".into(), segmented_refusals));
    type_trials::<u8>("u8", false, &mut trials);
    type_trials::<u16>("u16", false, &mut trials);
    type_trials::<u32>("u32", true, &mut trials);
    type_trials::<u64>("u64", true, &mut trials);
    type_trials::<i8>("i8", false, &mut trials);
    type_trials::<i16>("i16", false, &mut trials);
    type_trials::<i32>("i32", true, &mut trials);
    type_trials::<i64>("i64", false, &mut trials);
    type_trials::<f32>("f32", true, &mut trials);
    type_trials::<f64>("f64", true, &mut trials);
    trials.push(gpu_trial("sort::bit_ranges".into(), || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| Failed::from(e.to_string());
        let n = 300_007;
        let keys = make::<u32>(Input::Uniform, seed_for("sort::bit_ranges"), n);
        for (bits, order) in [(0..12, Order::Ascending), (4..20, Order::Descending), (31..32, Order::Ascending)] {
            let field = |x: u32| (x >> bits.start) & ((1u64 << (bits.end - bits.start)) - 1) as u32;
            let mut index: Vec<usize> = (0..n).collect();
            match order {
                Order::Ascending => index.sort_by_key(|&i| field(keys[i])),
                Order::Descending => index.sort_by_key(|&i| std::cmp::Reverse(field(keys[i]))),
            }
            let want: Vec<u32> = index.iter().map(|&i| keys[i]).collect();
            let mut d = gpu.upload(&keys).map_err(e)?;
            sort::keys_bits(&gpu, &mut d, order, bits.clone()).map_err(e)?;
            compare(&format!("bits {bits:?}"), &gpu.download(&d, "keys").map_err(e)?, &want)?;
        }
        Ok(())
    }));
    let name = "sort::one_workspace_100_sorts".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| Failed::from(e.to_string());
        let mut ws = RadixSort::new(&gpu).map_err(e)?;
        let mut rng = StdRng::seed_from_u64(seed);
        for i in 0..100u64 {
            let n = rng.random_range(0..300_000);
            let keys = make::<f32>(INPUTS[i as usize % 6], seed ^ i, n);
            let order = if i % 3 == 0 { Order::Descending } else { Order::Ascending };
            let want = reference::sort_keys(&keys, order);
            let mut d = gpu.upload(&keys).map_err(e)?;
            ws.keys(&gpu, &mut d, order).map_err(e)?;
            compare(&format!("sort {i} of {n}"), &gpu.download(&d, "keys").map_err(e)?, &want)?;
        }
        Ok(())
    }));
    trials.push(gpu_trial("sort::refusals".into(), || {
        let gpu = gpu()?;
        let e = |e: cpu::Error| Failed::from(e.to_string());
        let mut keys = gpu.upload(&[3u32, 1, 2]).map_err(e)?;
        let mut values = gpu.zeros::<u32>(2).map_err(e)?;
        expect_err(sort::pairs(&gpu, &mut keys, &mut values, Order::Ascending), |e| {
            matches!(e, Error::LengthMismatch { .. })
        })?;
        expect_err(sort::argsort(&gpu, &keys, &mut values, Order::Ascending), |e| {
            matches!(e, Error::LengthMismatch { .. })
        })?;
        // Empty, past the key's width, and reversed.
        #[allow(clippy::reversed_empty_ranges)]
        let refused = [0..0, 0..33, 8..4];
        for bits in refused {
            expect_err(sort::keys_bits(&gpu, &mut keys, Order::Ascending, bits), |e| {
                matches!(e, Error::OutOfRange { .. })
            })?;
        }
        // Nothing was written by the refused calls.
        compare("keys", &gpu.download(&keys, "keys").map_err(e)?, &[3u32, 1, 2])
    }));
    trials
}
