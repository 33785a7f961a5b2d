//! `--dump DIR` (GPU): for every pattern, every array a table verifies is written, and the
//! names `docs/report.md` lists (its section "`--dump DIR`: arrays for NumPy") for reduce,
//! scan, histogram and conv2d are there with their shapes and types.
//!
//! Each pattern runs at small sizes (its first compute-sanitizer case; scan, histogram and
//! conv2d at sizes of their own) with `--reps 1 --format json --dump DIR`. The checks read
//! `DIR/<pattern>/index.json` ([`DumpIndex`]): every array it lists is a `.npy` file of that
//! shape and type, no name twice, its tables are the report's tables, and each table verified
//! at least as many arrays as it has measurements, except the tables [`EXEMPT`] names with
//! their reason. The binary is `GPU_LAB_DEMO` if set (the bundle's `run.sh` sets it), else the
//! one cargo built. Ignored where there is no NVIDIA driver (`run.sh tests` runs them).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use clap::ValueEnum;
use demo::DumpIndex;
use demo::report::{Block, Report};

/// Tables whose measurements do not each verify an array the demo holds, with the fewest
/// arrays they verify and why (`*`: every table of the pattern).
const EXEMPT: &[(&str, &str, usize, &str)] = &[
    (
        "bank-conflicts",
        "patterns",
        0,
        "bank_conflicts::measure checks the kernel's buffers inside the library: no array comes back",
    ),
    (
        "coalescing",
        "offsets",
        2,
        "the last offset's outputs only (ld.ca, ld.cg): every point's output would be tens of GiB at the default size",
    ),
    (
        "coalescing",
        "strides",
        2,
        "the last stride's outputs only, as the offsets",
    ),
    (
        "bandwidth",
        "*",
        0,
        "byte patterns checked in place and host-device copies of them, a read stream and empty launches",
    ),
    (
        "multi-gpu",
        "all-reduce",
        0,
        "every size up to --max-bytes on every GPU: the inputs are a formula of (seed, rank, index)",
    ),
    (
        "smoke",
        "kernels",
        0,
        "smoke::check downloads and checks inside the library: no array comes back",
    ),
];

fn exe() -> String {
    std::env::var("GPU_LAB_DEMO").unwrap_or_else(|_| env!("CARGO_BIN_EXE_demo").into())
}

fn require_gpu() {
    assert!(
        cpu::Gpu::driver_available(),
        "this test needs an NVIDIA GPU; run it where there is one (run.sh tests)"
    );
}

/// `demo <pattern> <args> --reps 1 --format json --dump DIR`: the report and the index.
fn run_dump(dir: &Path, pattern: &str, args: &[&str]) -> (Report, Option<DumpIndex>) {
    let out = Command::new(exe())
        .arg(pattern)
        .args(args)
        .args(["--reps", "1", "--format", "json", "--dump"])
        .arg(dir)
        .output()
        .expect("the demo binary runs");
    assert!(
        out.status.success(),
        "demo {pattern} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Report = serde_json::from_slice(&out.stdout).expect("stdout is the JSON report");
    let index = std::fs::read_to_string(dir.join(pattern).join("index.json"))
        .ok()
        .map(|s| serde_json::from_str(&s).expect("index.json is a DumpIndex"));
    (report, index)
}

/// A dumped array's header: `(shape, type string)`, and the file's values as `T`.
fn read_npy<T: npyz::Deserialize>(path: &Path) -> (Vec<u64>, String, Vec<T>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let shape = npy.shape().to_vec();
    let dtype = npy.dtype().descr().trim_matches('\'').to_string();
    let values = npy.into_vec::<T>().unwrap_or_default();
    (shape, dtype, values)
}

fn header(path: &Path) -> (Vec<u64>, String) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (
        npy.shape().to_vec(),
        npy.dtype().descr().trim_matches('\'').to_string(),
    )
}

/// The checks every pattern's dump passes; returns the arrays by name: `(shape, dtype)`.
fn check_index(
    dir: &Path,
    pattern: &str,
    report: &Report,
    index: &DumpIndex,
) -> BTreeMap<String, (Vec<u64>, String)> {
    assert_eq!(index.pattern, pattern);
    let mut arrays = BTreeMap::new();
    for a in &index.arrays {
        let path = dir.join(pattern).join(format!("{}.npy", a.name));
        let (shape, dtype) = header(&path);
        assert_eq!(
            (&shape, &dtype),
            (&a.shape, &a.dtype),
            "{pattern}/{}: the file's header against the index",
            a.name
        );
        let before = arrays.insert(a.name.clone(), (shape, dtype));
        assert!(before.is_none(), "{pattern}/{} written twice", a.name);
    }
    let section = report
        .sections
        .iter()
        .find(|s| s.pattern == pattern)
        .unwrap_or_else(|| panic!("no section {pattern} in the report"));
    let tables: Vec<(String, usize)> = section
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table(t) => Some((t.id.clone(), t.measurements.len())),
            _ => None,
        })
        .collect();
    let indexed: Vec<(String, usize)> = index
        .tables
        .iter()
        .map(|t| (t.id.clone(), t.measurements))
        .collect();
    assert_eq!(
        indexed, tables,
        "{pattern}: the index's tables are the report's"
    );
    for t in &index.tables {
        let exempt = EXEMPT
            .iter()
            .find(|(p, id, _, _)| *p == pattern && (*id == "*" || *id == t.id));
        let least = match exempt {
            Some(&(_, _, least, _)) => least,
            None => t.measurements,
        };
        assert!(
            t.verified.len() >= least,
            "{pattern}, table {}: {} measurements but {} verified arrays dumped ({:?})",
            t.id,
            t.measurements,
            t.verified.len(),
            t.verified
        );
    }
    arrays
}

/// The first sanitizer case of `pattern` (small sizes), as arguments.
fn small_args(pattern: &demo::registry::PatternInfo) -> Vec<String> {
    (pattern.sanitize)()
        .first()
        .map(|a| a.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn every_pattern_dumps_every_array_its_tables_verify() {
    require_gpu();
    let dir = tempfile::tempdir().unwrap();
    let mut skipped = Vec::new();
    for pattern in demo::PATTERNS {
        if let Some(why) = pattern.unavailable() {
            skipped.push(format!("{}: {why}", pattern.name));
            continue;
        }
        let args = small_args(pattern);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (report, index) = run_dump(dir.path(), pattern.name, &args);
        let Some(index) = index else {
            panic!("demo {} {args:?} --dump wrote no index.json", pattern.name);
        };
        check_index(dir.path(), pattern.name, &report, &index);
    }
    for s in skipped {
        eprintln!("skipped {s}");
    }
}

fn names<V: ValueEnum>(all: &[V]) -> Vec<String> {
    all.iter()
        .map(|v| v.to_possible_value().unwrap().get_name().to_string())
        .collect()
}

fn expect(arrays: &BTreeMap<String, (Vec<u64>, String)>, name: &str, shape: &[u64], dtype: &str) {
    match arrays.get(name) {
        Some((s, d)) => assert_eq!(
            (s.as_slice(), d.as_str()),
            (shape, dtype),
            "{name}: shape and type"
        ),
        None => panic!("{name} not dumped; dumped: {:?}", arrays.keys()),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn scan_dumps_the_documented_names() {
    require_gpu();
    let dir = tempfile::tempdir().unwrap();
    let n = 1000u64;
    let (report, index) = run_dump(dir.path(), "scan", &["--size", "1000"]);
    let arrays = check_index(dir.path(), "scan", &report, &index.expect("an index"));
    expect(&arrays, "input", &[n], "<i4");
    for v in names(&cpu::scan::ladder::Variant::ALL) {
        expect(&arrays, &format!("output_{v}"), &[n], "<i4");
    }
    for (ty, dtype) in [("i32", "<i4"), ("u32", "<u4"), ("f32", "<f4")] {
        expect(&arrays, &format!("input_{ty}"), &[n], dtype);
        expect(&arrays, &format!("output_inclusive_sum_{ty}"), &[n], dtype);
        if ty != "u32" {
            expect(&arrays, &format!("output_exclusive_sum_{ty}"), &[n], dtype);
        }
    }
    expect(&arrays, "output_tile_copy_u32", &[n], "<u4");
    // The operator table: every operator of every type, and the scans by key.
    for (ty, dtype) in TYPES {
        expect(&arrays, &format!("input_ops_{ty}"), &[n], dtype);
        expect(&arrays, &format!("input_ops_product_{ty}"), &[n], dtype);
        for op in ["cumsum", "cumprod", "cummin", "cummax"] {
            expect(&arrays, &format!("output_{op}_{ty}"), &[n], dtype);
        }
    }
    expect(&arrays, "input_by_key_keys", &[n], "<u4");
    expect(&arrays, "input_by_key_f32", &[n], "<f4");
    expect(&arrays, "input_by_key_i32", &[n], "<i4");
    expect(&arrays, "output_sum_by_key_f32", &[n], "<f4");
    expect(&arrays, "output_max_by_key_i32", &[n], "<i4");
    let scan = dir.path().join("scan");
    for (ty, dtype) in [("f32", "<f4"), ("i32", "<i4")] {
        expect(&arrays, &format!("input_select_{ty}"), &[n], dtype);
        let (_, _, count) = read_npy::<u32>(&scan.join(format!("output_select_if_{ty}_count.npy")));
        assert_eq!(count.len(), 1);
        let kept = u64::from(count[0]);
        assert!(kept > 0 && kept < n, "{ty}: {kept} kept of {n}");
        expect(&arrays, &format!("output_select_if_{ty}"), &[kept], dtype);
    }
    // The i8 cummax against the dumped input.
    let (_, _, x) = read_npy::<i8>(&scan.join("input_ops_i8.npy"));
    let (_, _, got) = read_npy::<i8>(&scan.join("output_cummax_i8.npy"));
    let mut acc = i8::MIN;
    for (i, (&v, &g)) in x.iter().zip(&got).enumerate() {
        acc = acc.max(v);
        assert_eq!(g, acc, "output_cummax_i8[{i}]");
    }
    // The i32 scans against a wrapping prefix sum of the dumped input.
    let (_, _, input) = read_npy::<i32>(&scan.join("input_i32.npy"));
    let (_, _, inclusive) = read_npy::<i32>(&scan.join("output_inclusive_sum_i32.npy"));
    let mut acc = 0i32;
    for (i, (&x, &got)) in input.iter().zip(&inclusive).enumerate() {
        acc = acc.wrapping_add(x);
        assert_eq!(got, acc, "output_inclusive_sum_i32[{i}]");
    }
}

/// Every primitive type of the operator tables and its NumPy type string.
const TYPES: [(&str, &str); 11] = [
    ("i8", "|i1"),
    ("i16", "<i2"),
    ("i32", "<i4"),
    ("i64", "<i8"),
    ("u8", "|u1"),
    ("u16", "<u2"),
    ("u32", "<u4"),
    ("u64", "<u8"),
    ("f32", "<f4"),
    ("f64", "<f8"),
    ("f16", "<f2"),
];

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn reduce_dumps_every_operator_of_every_type() {
    require_gpu();
    let dir = tempfile::tempdir().unwrap();
    let n = 100_003u64;
    let (report, index) = run_dump(
        dir.path(),
        "reduce",
        &["--size", "100003", "--block", "256"],
    );
    let arrays = check_index(dir.path(), "reduce", &report, &index.expect("an index"));
    for (ty, dtype) in TYPES {
        expect(&arrays, &format!("input_{ty}"), &[n], dtype);
        expect(&arrays, &format!("input_product_{ty}"), &[n], dtype);
        // The accumulators: 64-bit integers; f64 sums of f32 and f64, f32 of f16; products in
        // f32 for f32 and f16.
        let (sum, product) = match ty {
            "f32" => ("<f8", "<f4"),
            "f64" => ("<f8", "<f8"),
            "f16" => ("<f4", "<f4"),
            t if t.starts_with('i') => ("<i8", "<i8"),
            _ => ("<u8", "<u8"),
        };
        expect(&arrays, &format!("output_sum_{ty}"), &[1], sum);
        expect(&arrays, &format!("output_product_{ty}"), &[1], product);
        for op in ["min", "max"] {
            expect(&arrays, &format!("output_{op}_{ty}"), &[1], dtype);
        }
        for op in ["argmin", "argmax"] {
            expect(&arrays, &format!("output_{op}_{ty}"), &[1], "<u8");
            expect(&arrays, &format!("output_{op}_{ty}_value"), &[1], dtype);
        }
    }
    // The u8 argmax against the dumped input: the first of the largest.
    let red = dir.path().join("reduce");
    let (_, _, x) = read_npy::<u8>(&red.join("input_u8.npy"));
    let (_, _, index) = read_npy::<u64>(&red.join("output_argmax_u8.npy"));
    let largest = *x.iter().max().unwrap();
    let first = x.iter().position(|&v| v == largest).unwrap() as u64;
    assert_eq!(index, vec![first], "output_argmax_u8");
    let (_, _, sum) = read_npy::<i64>(&red.join("output_sum_i16.npy"));
    let (_, _, x) = read_npy::<i16>(&red.join("input_i16.npy"));
    assert_eq!(
        sum,
        vec![x.iter().map(|&v| i64::from(v)).sum::<i64>()],
        "output_sum_i16"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn histogram_dumps_the_documented_names() {
    require_gpu();
    let dir = tempfile::tempdir().unwrap();
    let n = 1000u64;
    let (report, index) = run_dump(dir.path(), "histogram", &["--size", "1000", "--bins", "64"]);
    let arrays = check_index(dir.path(), "histogram", &report, &index.expect("an index"));
    expect(&arrays, "input", &[n], "|u1");
    for v in names(&cpu::histogram::ladder::Variant::ALL) {
        expect(&arrays, &format!("output_{v}"), &[256], "<u4");
    }
    let hist = dir.path().join("histogram");
    for input in ["uniform", "constant", "zipf"] {
        expect(&arrays, &format!("input_bytes_{input}"), &[n], "|u1");
        expect(&arrays, &format!("output_bytes_{input}"), &[256], "<u4");
        let (_, _, counts) = read_npy::<u32>(&hist.join(format!("output_bytes_{input}.npy")));
        assert_eq!(
            counts.iter().map(|&c| u64::from(c)).sum::<u64>(),
            n,
            "{input}"
        );
    }
    expect(&arrays, "output_bytes_accumulate_uniform", &[256], "<u4");
    expect(&arrays, "output_bytes_u64_uniform", &[256], "<u8");
    let limit = gpu::histogram::EVEN_SHARED_LIMIT_BYTES / 4 + 1;
    for (ty, len, dtype) in [
        ("u8", n, "|u1"),
        ("u16", n / 2, "<u2"),
        ("i32", n / 4, "<i4"),
        ("f32", n / 4, "<f4"),
    ] {
        expect(&arrays, &format!("input_even_{ty}"), &[len], dtype);
        // The levels: i64 for the integer samples, f32 for f32.
        let level = if ty == "f32" { "<f4" } else { "<i8" };
        expect(&arrays, &format!("range_even_{ty}"), &[2], level);
        for bins in [64, 4096, limit] {
            expect(
                &arrays,
                &format!("output_even_{ty}_{bins}_u32"),
                &[bins as u64],
                "<u4",
            );
            expect(
                &arrays,
                &format!("output_even_{ty}_{bins}_u64"),
                &[bins as u64],
                "<u8",
            );
        }
    }
    for p in names(&cpu::histogram::ladder::AtomicPattern::ALL) {
        expect(&arrays, &format!("output_shared_atomics_{p}"), &[1], "<u4");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn conv2d_dumps_the_separable_mask_and_outputs() {
    require_gpu();
    let (rows, cols) = (67u64, 131u64);
    let separable: Vec<String> = names(&[
        cpu::convolution::Variant2d::Convolution2dSeparableTwoPass,
        cpu::convolution::Variant2d::Convolution2dSeparableFused,
    ]);
    // A random (dense) 5 x 5 mask: the separable table filters with the 5 x 5 Gaussian; then
    // the case, --mask gaussian:2 (13 x 13, separable: the same mask in both tables).
    for (args, w) in [
        (
            &["--rows", "67", "--cols", "131", "--mask-width", "5"][..],
            5u64,
        ),
        (
            &["--rows", "67", "--cols", "131", "--mask", "gaussian:2"],
            13,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (report, index) = run_dump(dir.path(), "conv2d", args);
        let arrays = check_index(dir.path(), "conv2d", &report, &index.expect("an index"));
        expect(&arrays, "input", &[rows, cols], "<f4");
        expect(&arrays, "mask", &[w, w], "<f4");
        expect(&arrays, "mask_separable", &[w, w], "<f4");
        let dense = if w <= 9 {
            "convolution-2d-tiled-vec4"
        } else {
            "convolution-2d-wide"
        };
        expect(
            &arrays,
            &format!("output_separable_{dense}"),
            &[rows, cols],
            "<f4",
        );
        for v in &separable {
            expect(
                &arrays,
                &format!("output_separable_{v}"),
                &[rows, cols],
                "<f4",
            );
        }
        expect(&arrays, "output_separable_fma-stream", &[rows, cols], "<f4");
        expect(&arrays, "image_input", &[480, 640], "<f4");
        expect(&arrays, "image_output", &[480, 640], "<f4");
        // The picture's mask: --mask, else sobel-x.
        let image_w = if w == 13 { 13 } else { 3 };
        expect(&arrays, "image_mask", &[image_w, image_w], "<f4");
        let conv = dir.path().join("conv2d");
        let (_, _, mask) = read_npy::<f32>(&conv.join("mask_separable.npy"));
        let sum: f32 = mask.iter().sum();
        assert!(
            (sum - 1.0).abs() < 1e-4,
            "{args:?}: the Gaussian sums to {sum}"
        );
        if w == 13 {
            let (_, _, given) = read_npy::<f32>(&conv.join("mask.npy"));
            assert_eq!(
                given, mask,
                "a separable --mask is the separable table's mask"
            );
        }
    }
}

/// The segmented table's layouts, as their part of the dumped names.
const SORT_LAYOUTS: [&str; 5] = ["1_to_64", "1_to_2048", "1_to_65536", "1_to_2p20", "one"];

/// Every name `demo sort --size n --dump` writes: each input beside its output, with its shape
/// and type (the offsets' length, one more than the segments, varies with the seed).
fn expect_sort_names(arrays: &BTreeMap<String, (Vec<u64>, String)>, n: u64) {
    for (row, dtype) in [
        ("keys_u32", "<u4"),
        ("keys_u32_descending", "<u4"),
        ("keys_f32", "<f4"),
        ("keys_u64", "<u8"),
    ] {
        expect(arrays, &format!("input_{row}"), &[n], dtype);
        expect(arrays, &format!("output_{row}"), &[n], dtype);
    }
    for part in ["keys", "values"] {
        expect(arrays, &format!("input_pairs_u32_u32_{part}"), &[n], "<u4");
        expect(arrays, &format!("output_pairs_u32_u32_{part}"), &[n], "<u4");
    }
    expect(arrays, "input_argsort_f32", &[n], "<f4");
    expect(arrays, "output_argsort_f32", &[n], "<u4");
    expect(arrays, "input_ladder", &[n], "<u4");
    for rung in [
        "one_bit_per_pass",
        "four_bits_per_pass",
        "reduce_then_scan",
        "onesweep",
    ] {
        expect(arrays, &format!("output_ladder_{rung}"), &[n], "<u4");
    }
    expect(arrays, "input_segmented", &[n], "<u4");
    for layout in SORT_LAYOUTS {
        let name = format!("input_segmented_{layout}_offsets");
        match arrays.get(&name) {
            Some((shape, dtype)) => {
                assert_eq!(dtype, "<u8", "{name}: type");
                assert!(shape.len() == 1 && shape[0] >= 2, "{name}: shape {shape:?}");
            }
            None => panic!("{name} not dumped; dumped: {:?}", arrays.keys()),
        }
        expect(arrays, &format!("output_segmented_{layout}"), &[n], "<u4");
    }
}

/// `torch.sort`'s order of f32 (NaN above every number and equal to every NaN, -0.0 == +0.0),
/// written here again rather than taken from the library.
fn torch_f32(a: &f32, b: &f32) -> std::cmp::Ordering {
    a.partial_cmp(b)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
}

/// The stable ascending order of `keys` under `cmp`, as u32 indices.
fn stable_order<K>(keys: &[K], cmp: impl Fn(&K, &K) -> std::cmp::Ordering) -> Vec<u32> {
    let mut index: Vec<u32> = (0..keys.len() as u32).collect();
    index.sort_by(|&a, &b| cmp(&keys[a as usize], &keys[b as usize]));
    index
}

/// `got` against `want`: the first index that differs, if any.
fn same<T: PartialEq + std::fmt::Debug>(name: &str, got: &[T], want: &[T]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{name}: {} elements, want {}",
            got.len(),
            want.len()
        ));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        Some(i) => Err(format!("{name}[{i}]: {:?}, want {:?}", got[i], want[i])),
        None => Ok(()),
    }
}

/// Recomputes on the CPU, from the inputs in `folder` (`DIR/sort`), every output `demo sort`
/// dumps: the sorted keys of each entry point (f32 bit for bit in the stable order, so a NaN's
/// payload and the order of -0.0 and +0.0 count), the argsort, the pairs' values, the ladder's
/// rungs and each layout's segments sorted on their own. The first difference, if any.
fn recompute_sort(folder: &Path) -> Result<(), String> {
    let load_u32 = |name: &str| read_npy::<u32>(&folder.join(format!("{name}.npy"))).2;
    for (row, descending) in [("keys_u32", false), ("keys_u32_descending", true)] {
        let mut want = load_u32(&format!("input_{row}"));
        want.sort();
        if descending {
            want.reverse();
        }
        same(
            &format!("output_{row}"),
            &load_u32(&format!("output_{row}")),
            &want,
        )?;
    }
    let (_, _, mut want) = read_npy::<u64>(&folder.join("input_keys_u64.npy"));
    want.sort();
    let (_, _, got) = read_npy::<u64>(&folder.join("output_keys_u64.npy"));
    same("output_keys_u64", &got, &want)?;
    let (_, _, keys) = read_npy::<f32>(&folder.join("input_keys_f32.npy"));
    let want: Vec<u32> = stable_order(&keys, torch_f32)
        .iter()
        .map(|&i| keys[i as usize].to_bits())
        .collect();
    let (_, _, got) = read_npy::<f32>(&folder.join("output_keys_f32.npy"));
    let got: Vec<u32> = got.iter().map(|k| k.to_bits()).collect();
    same("output_keys_f32 (bits)", &got, &want)?;
    let (_, _, keys) = read_npy::<f32>(&folder.join("input_argsort_f32.npy"));
    let want = stable_order(&keys, torch_f32);
    same("output_argsort_f32", &load_u32("output_argsort_f32"), &want)?;
    let (keys, values) = (
        load_u32("input_pairs_u32_u32_keys"),
        load_u32("input_pairs_u32_u32_values"),
    );
    let order = stable_order(&keys, u32::cmp);
    let want: Vec<u32> = order.iter().map(|&i| keys[i as usize]).collect();
    same(
        "output_pairs_u32_u32_keys",
        &load_u32("output_pairs_u32_u32_keys"),
        &want,
    )?;
    let want: Vec<u32> = order.iter().map(|&i| values[i as usize]).collect();
    same(
        "output_pairs_u32_u32_values",
        &load_u32("output_pairs_u32_u32_values"),
        &want,
    )?;
    let mut want = load_u32("input_ladder");
    want.sort();
    for rung in [
        "one_bit_per_pass",
        "four_bits_per_pass",
        "reduce_then_scan",
        "onesweep",
    ] {
        let name = format!("output_ladder_{rung}");
        same(&name, &load_u32(&name), &want)?;
    }
    let keys = load_u32("input_segmented");
    for layout in SORT_LAYOUTS {
        let name = format!("input_segmented_{layout}_offsets");
        let (_, _, offsets) = read_npy::<u64>(&folder.join(format!("{name}.npy")));
        let n = keys.len() as u64;
        if offsets.first() != Some(&0)
            || offsets.last() != Some(&n)
            || offsets.windows(2).any(|w| w[0] > w[1])
        {
            return Err(format!("{name}: not CSR offsets over {n} keys"));
        }
        let mut want = keys.clone();
        for w in offsets.windows(2) {
            want[w[0] as usize..w[1] as usize].sort();
        }
        let name = format!("output_segmented_{layout}");
        same(&name, &load_u32(&name), &want)?;
    }
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn sort_dumps_every_input_and_the_cpu_recomputes_every_output() {
    require_gpu();
    let dir = tempfile::tempdir().unwrap();
    let n = 100_003u64;
    let (report, index) = run_dump(dir.path(), "sort", &["--size", "100003"]);
    let arrays = check_index(dir.path(), "sort", &report, &index.expect("an index"));
    expect_sort_names(&arrays, n);
    let inputs = arrays.keys().filter(|k| k.starts_with("input_")).count();
    let outputs = arrays.keys().filter(|k| k.starts_with("output_")).count();
    assert_eq!(
        inputs + outputs,
        arrays.len(),
        "every name is an input_ or an output_: {:?}",
        arrays.keys()
    );
    if let Err(e) = recompute_sort(&dir.path().join("sort")) {
        panic!("the dumped outputs against the dumped inputs: {e}");
    }
}

/// [`recompute_sort`] on a dump written here (no GPU): the library's CPU reference sorts as
/// the outputs pass; each output made wrong in one way (two equal-comparing f32 keys out of
/// their stable order, a value moved, a segment's keys crossing into the next) fails with its
/// name.
#[test]
fn the_sort_dump_check_passes_a_right_dump_and_names_a_wrong_output() {
    use cpu::sort::Order;
    use cpu::sort::reference::{argsort, sort_keys, sort_pairs};
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path();
    let write = |name: &str, data: &[u32]| {
        npyz::to_file_1d(folder.join(format!("{name}.npy")), data.iter().copied()).unwrap()
    };
    let n = 3000u32;
    let u: Vec<u32> = (0..n)
        .map(|i| i.wrapping_mul(2_654_435_761) % 977)
        .collect();
    let f: Vec<f32> = (0..n)
        .map(|i| match i % 7 {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            _ => (u[i as usize] as f32 - 488.0) / 97.0,
        })
        .collect();
    let wide: Vec<u64> = u
        .iter()
        .map(|&x| u64::from(x) << 33 | u64::from(x))
        .collect();
    write("input_keys_u32", &u);
    write("output_keys_u32", &sort_keys(&u, Order::Ascending));
    write("input_keys_u32_descending", &u);
    write(
        "output_keys_u32_descending",
        &sort_keys(&u, Order::Descending),
    );
    let f32_file = |name: &str, data: &[f32]| {
        npyz::to_file_1d(folder.join(format!("{name}.npy")), data.iter().copied()).unwrap()
    };
    f32_file("input_keys_f32", &f);
    f32_file("output_keys_f32", &sort_keys(&f, Order::Ascending));
    f32_file("input_argsort_f32", &f);
    let index: Vec<u32> = argsort(&f, Order::Ascending)
        .into_iter()
        .map(|i| i as u32)
        .collect();
    write("output_argsort_f32", &index);
    npyz::to_file_1d(folder.join("input_keys_u64.npy"), wide.iter().copied()).unwrap();
    let sorted_wide = sort_keys(&wide, Order::Ascending);
    npyz::to_file_1d(folder.join("output_keys_u64.npy"), sorted_wide).unwrap();
    let values: Vec<u32> = (0..n).rev().collect();
    let (k, v) = sort_pairs(&u, &values, Order::Ascending);
    write("input_pairs_u32_u32_keys", &u);
    write("input_pairs_u32_u32_values", &values);
    write("output_pairs_u32_u32_keys", &k);
    write("output_pairs_u32_u32_values", &v);
    write("input_ladder", &u);
    for rung in [
        "one_bit_per_pass",
        "four_bits_per_pass",
        "reduce_then_scan",
        "onesweep",
    ] {
        write(&format!("output_ladder_{rung}"), &k);
    }
    write("input_segmented", &u);
    let mut segmented = BTreeMap::new();
    for (layout, longest) in SORT_LAYOUTS.iter().zip([64u64, 2048, 65536, 1 << 20, 0]) {
        let mut offsets = vec![0u64];
        while *offsets.last().unwrap() < u64::from(n) {
            let len = if longest == 0 {
                u64::from(n)
            } else {
                1 + offsets.len() as u64 * 37 % longest
            };
            offsets.push((offsets.last().unwrap() + len).min(u64::from(n)));
        }
        let mut out = Vec::new();
        for w in offsets.windows(2) {
            out.extend(sort_keys(
                &u[w[0] as usize..w[1] as usize],
                Order::Ascending,
            ));
        }
        npyz::to_file_1d(
            folder.join(format!("input_segmented_{layout}_offsets.npy")),
            offsets.iter().copied(),
        )
        .unwrap();
        write(&format!("output_segmented_{layout}"), &out);
        segmented.insert(*layout, (offsets, out));
    }
    assert_eq!(recompute_sort(folder), Ok(()));

    // -0.0 (at 1) and +0.0 (at 2) compare equal: the stable order keeps -0.0 first.
    let mut sorted = sort_keys(&f, Order::Ascending);
    let zero = sorted.iter().position(|&x| x == 0.0).unwrap();
    assert!(sorted[zero].is_sign_negative() && sorted[zero + 1].is_sign_positive());
    sorted.swap(zero, zero + 1);
    f32_file("output_keys_f32", &sorted);
    let e = recompute_sort(folder).unwrap_err();
    assert!(e.starts_with("output_keys_f32 (bits)"), "{e}");
    f32_file("output_keys_f32", &sort_keys(&f, Order::Ascending));

    let mut wrong = v.clone();
    wrong.swap(0, 1);
    write("output_pairs_u32_u32_values", &wrong);
    let e = recompute_sort(folder).unwrap_err();
    assert!(e.starts_with("output_pairs_u32_u32_values"), "{e}");
    write("output_pairs_u32_u32_values", &v);

    // The whole input sorted is not the 1-to-64 layout's segments each sorted.
    write("output_segmented_1_to_64", &k);
    let e = recompute_sort(folder).unwrap_err();
    assert!(e.starts_with("output_segmented_1_to_64["), "{e}");
    write("output_segmented_1_to_64", &segmented["1_to_64"].1);
    assert_eq!(recompute_sort(folder), Ok(()));
}
