//! The `demo` command line: bad input gets one sentence on stderr and a non-zero exit, never a
//! panic. These run on any machine: where there is no NVIDIA driver, the device-dependent
//! cases fail at the driver check instead, with the same shape of message.
//!
//! The binary is `GPU_LAB_DEMO` if set (the bundle's `run.sh` sets it), else the one cargo built.

use std::process::{Command, Output};

fn demo(args: &[&str]) -> Output {
    let exe = std::env::var("GPU_LAB_DEMO").unwrap_or_else(|_| env!("CARGO_BIN_EXE_demo").into());
    Command::new(exe)
        .args(args)
        .output()
        .expect("the demo binary runs")
}

/// Non-zero exit, and stderr is one line starting `error:`, with no panic; returns the line.
fn assert_one_sentence_error(args: &[&str]) -> String {
    let out = demo(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "{args:?}: expected one line, got {stderr:?}"
    );
    assert!(lines[0].starts_with("error: "), "{args:?}: {stderr:?}");
    lines[0].to_string()
}

#[test]
fn device_index_out_of_range() {
    assert_one_sentence_error(&["--device", "4096", "vector-add", "--size", "10"]);
}

/// Exit status 2 and a first line `error: ...` naming the problem, with no panic: an argument
/// error refused before any device work (these run where there is no driver: a refusal that
/// came after opening the device would say so, with status 1).
fn assert_argument_error(args: &[&str], says: &str) {
    let out = demo(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") && first.contains(says),
        "{args:?}: expected `{says}` in {stderr:?}"
    );
}

#[test]
fn reduction_block_not_a_power_of_two() {
    assert_argument_error(
        &["reduce", "--size", "1000", "--block", "100"],
        "not a power of two",
    );
    assert_argument_error(&["reduce", "--block", "2048"], "outside 64..=1024");
}

#[test]
fn conv2d_mask_widths_are_refused_by_the_parser() {
    for w in ["4", "0", "33"] {
        assert_argument_error(
            &["conv2d", "--mask-width", w],
            "the width must be odd, 1 to 31",
        );
    }
    assert_argument_error(&["conv2d", "--mask-width", "x"], "not a whole number");
    for w in ["4", "0", "33"] {
        assert_argument_error(
            &["conv1d", "--mask-width", w],
            "the width must be odd, 1 to 31",
        );
    }
}

/// Every value that is wrong on any machine is refused before the device is opened, with
/// status 2: by the parser, or by the pattern's check of its arguments together.
#[test]
fn bad_values_are_refused_before_any_device_work() {
    const OVER: &str = "8589934592"; // 2^33: 2^66 elements
    let cases: &[(&[&str], &str)] = &[
        (&["conv2d", "--rows", "0"], "less than 1"),
        (&["conv2d", "--cols", "0"], "less than 1"),
        (&["conv2d", "--rows", OVER, "--cols", OVER], "overflows"),
        (&["transpose", "--rows", OVER, "--cols", OVER], "overflows"),
        (&["histogram", "--size", "0"], "--size 0 is outside"),
        (&["histogram", "--bins", "0"], "--bins 0 is outside"),
        (&["histogram", "--input", "image"], "give --file PATH"),
        (
            &["histogram", "--file", "x.txt"],
            "--input image or --input text",
        ),
        (&["md", "--cells", "2"], "outside 3..=400"),
        (&["md", "--threads", "0"], "--threads 0"),
        (&["md", "--threads", "1000000"], "the cores of this machine"),
        (&["multi-gpu", "--devices", "0,1,0"], "names device 0 twice"),
        (&["multi-gpu", "--max-bytes", "1000"], "less than 1024"),
        (&["coalescing", "--max-offset", "33"], "outside 0..=32"),
        (&["coalescing", "--max-stride", "0"], "outside 1..=32"),
        (&["coalescing", "--max-stride", "33"], "outside 1..=32"),
        (&["bandwidth", "--max-size", "1000"], "less than 1024"),
        (&["bandwidth", "--launches", "0"], "less than 1"),
        (&["texture", "--table", "0"], "less than 1"),
        (&["scan", "--size", "4294967296"], "select_if counts in u32"),
        (&["bank-conflicts", "--accesses", "0"], "0"),
        (&["constant-memory", "--reads", "0"], "0"),
    ];
    for (args, says) in cases {
        assert_argument_error(args, says);
    }
}

/// A file an argument names is read before the device is opened: unreadable, it is a run-time
/// failure (status 1) said in one sentence, even where there is no driver.
#[test]
fn unreadable_files_fail_before_any_device_work_with_status_1() {
    for (args, says) in [
        (
            &["conv2d", "--mask", "/no/such/mask.npy"][..],
            "cannot read the mask",
        ),
        (&["conv2d", "--image", "/no/such/picture.png"], "opening"),
        (
            &["histogram", "--input", "text", "--file", "/no/such/file"],
            "reading /no/such/file",
        ),
        (
            &[
                "histogram",
                "--image",
                "/no/such/a.png",
                "--equalise",
                "b.png",
            ],
            "opening",
        ),
    ] {
        let line = assert_one_sentence_error(args);
        assert_eq!(demo(args).status.code(), Some(1), "{args:?}");
        assert!(line.contains(says), "{args:?}: {line}");
    }
}

#[test]
fn help_documents_the_exit_status() {
    let out = demo(&["--help"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in [
        "Exit status:",
        "  1    a run-time failure",
        "  2    an argument error",
    ] {
        assert!(stdout.contains(line), "--help lacks `{line}`: {stdout}");
    }
}

#[test]
fn bank_conflict_accesses_zero_is_refused_by_the_parser() {
    let out = demo(&["bank-conflicts", "--accesses", "0"]);
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn zero_reps_is_refused_by_the_parser() {
    let out = demo(&["--reps", "0", "vector-add"]);
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
}

#[test]
fn bad_conv2d_masks_are_refused_by_the_parser_in_one_sentence() {
    for (mask, says) in [
        ("gaussian:9", "wider than 31 x 31"),
        ("gaussian:-1", "positive and finite"),
        ("box:4", "must be odd"),
        ("nosuch", "unknown mask `nosuch`"),
    ] {
        let out = demo(&["conv2d", "--mask", mask]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{mask}: clap's usage error");
        assert!(!stderr.contains("panicked"), "{mask}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: ") && first.contains(says),
            "{mask}: {stderr}"
        );
    }
    let out = demo(&["conv2d", "--mask", "box:3", "--mask-width", "7"]);
    assert_eq!(out.status.code(), Some(2), "--mask replaces --mask-width");
}

#[test]
fn unknown_pattern_is_refused_by_the_parser() {
    let out = demo(&["no-such-pattern"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn list_needs_no_gpu() {
    let out = demo(&["list"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for pattern in demo::PATTERNS {
        assert!(stdout.contains(pattern.name), "list lacks {}", pattern.name);
        for v in (pattern.variants)() {
            assert!(
                stdout.contains(&v.name),
                "list lacks {} {}",
                pattern.name,
                v.name
            );
        }
    }
    let names = demo(&["list", "--names"]);
    let names: Vec<String> = String::from_utf8_lossy(&names.stdout)
        .lines()
        .map(String::from)
        .collect();
    let registry: Vec<&str> = demo::PATTERNS.iter().map(|p| p.name).collect();
    assert_eq!(names, registry, "list --names is the registry, in order");
    let cases = demo(&["list", "--sanitize-args"]);
    assert!(cases.status.success());
    assert!(String::from_utf8_lossy(&cases.stdout).contains("conv1d --size 20011 --mask-width 31"));
}

// ---- Reports: compare, --profile, --peers (no GPU needed), and --out / --dump / Ctrl-C (GPU).

use demo::report::{Block, ChartKind, Measurement, Report, Section, Table};
use demo::timing::Timing;

fn report_with(ms: &[(&str, f64)]) -> Report {
    let mut t = Table::new("variants", "t", ChartKind::Bars, ["variant"]);
    for (name, median) in ms {
        let timing = Timing {
            median_ms: *median,
            min_ms: *median,
            max_ms: *median,
            reps: 20,
        };
        t.measured_row([*name], Measurement::new(*name, &timing));
    }
    let mut s = Section::new("vector-add");
    s.blocks.push(Block::Table(t));
    Report {
        sections: vec![s],
        ..Report::default()
    }
}

fn write_json(dir: &std::path::Path, name: &str, r: &Report) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(r).unwrap()).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn compare_prints_speedups_of_shared_measurements() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_json(
        dir.path(),
        "old.json",
        &report_with(&[("a", 2.0), ("b", 1.0)]),
    );
    let new = write_json(
        dir.path(),
        "new.json",
        &report_with(&[("a", 1.0), ("c", 1.0)]),
    );
    let out = demo(&["compare", &old, &new]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("2.00x"), "{stdout}");
    assert!(
        stdout.contains("1 matched, 1 only in old, 1 only in new"),
        "{stdout}"
    );
    let json = demo(&["compare", &old, &new, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["key"], "a");
}

#[test]
fn compare_refuses_missing_foreign_and_disjoint_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_json(dir.path(), "a.json", &report_with(&[("a", 1.0)]));
    let b = write_json(dir.path(), "b.json", &report_with(&[("b", 1.0)]));
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "[1, 2]").unwrap();
    let junk = junk.to_string_lossy().into_owned();
    assert_one_sentence_error(&["compare", &a, "/no/such/report.json"]);
    assert_one_sentence_error(&["compare", &a, &junk]);
    assert_one_sentence_error(&["compare", &a, &b]);
}

#[test]
fn profile_and_peers_files_are_checked_before_the_gpu_runs() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("not-ncu.csv");
    std::fs::write(&bad, "a,b\n1,2\n").unwrap();
    let bad = bad.to_string_lossy().into_owned();
    assert_one_sentence_error(&["vector-add", "--profile", &bad]);
    assert_one_sentence_error(&["vector-add", "--profile", "/no/such/ncu.csv"]);
    assert_one_sentence_error(&["vector-add", "--peers", &bad]);
}

#[test]
fn sweep_checks_its_patterns_and_peers_file_before_the_gpu_runs() {
    let e = assert_one_sentence_error(&["sweep", "reduce-i32", "reduce"]);
    assert!(e.contains("unknown pattern `reduce`"), "{e}");
    assert_argument_error(&["sweep", "reduce-i32", "reduce"], "unknown pattern");
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("peers.json");
    // `run.sh peers` writes a list for `demo all`: not a sweep's.
    std::fs::write(&list, "[]").unwrap();
    let e = assert_one_sentence_error(&["sweep", "--peers", list.to_str().unwrap()]);
    assert!(e.contains("peers.py --sweep"), "{e}");
    assert_one_sentence_error(&["sweep", "--peers", "/no/such/sweep-peers.json"]);
    assert_one_sentence_error(&["sweep", "--dump", dir.path().to_str().unwrap()]);
    assert_argument_error(
        &["sweep", "--dump", dir.path().to_str().unwrap()],
        "neither --dump nor --profile",
    );
    // A peers file that cannot be read is a run-time failure.
    let out = demo(&["sweep", "--peers", "/no/such/sweep-peers.json"]);
    assert_eq!(out.status.code(), Some(1));
}

fn require_gpu() {
    assert!(
        cpu::Gpu::driver_available(),
        "this test needs an NVIDIA GPU; run it where there is one (run.sh tests)"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn out_writes_report_files_and_dump_writes_npy() {
    require_gpu();
    let dir = tempfile::tempdir().unwrap();
    let (out_dir, dump_dir) = (dir.path().join("out"), dir.path().join("dump"));
    let out = demo(&[
        "vector-add",
        "--size",
        "1000",
        "--reps",
        "3",
        "--format",
        "json",
        "--out",
        out_dir.to_str().unwrap(),
        "--dump",
        dump_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Report = serde_json::from_slice(&out.stdout).expect("stdout is the JSON report");
    let written: Report =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(printed, written);
    let measurements: Vec<_> = written.sections[0].measurements().collect();
    assert_eq!(measurements.len(), cpu::vector_add::Variant::ALL.len());
    assert!(measurements.iter().all(|(_, m)| m.passed && m.reps == 3));
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        md.contains("## vector-add") && md.contains("memcpy ceiling"),
        "{md}"
    );
    let csv = std::fs::read_to_string(out_dir.join("report.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + measurements.len());
    for ext in ["svg", "png"] {
        assert!(
            out_dir
                .join(format!("charts/vector-add-variants.{ext}"))
                .is_file()
        );
    }
    // x.npy: the magic, then a header naming little-endian f32 and the shape.
    let npy = std::fs::read(dump_dir.join("vector-add/x.npy")).unwrap();
    assert_eq!(&npy[..6], b"\x93NUMPY");
    let header = String::from_utf8_lossy(&npy[..128]);
    assert!(
        header.contains("'<f4'") && header.contains("'shape': (1000,"),
        "{header}"
    );
    assert_eq!(
        npy.len() % 64,
        4000 % 64,
        "header padded to 64 bytes, then 1000 f32"
    );
    assert!(dump_dir.join("vector-add/z_vector-add-vec4.npy").is_file());
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn interrupting_demo_all_leaves_no_partial_files() {
    require_gpu();
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::var("GPU_LAB_DEMO").unwrap_or_else(|_| env!("CARGO_BIN_EXE_demo").into());
    let mut child = Command::new(exe)
        .args(["all", "--reps", "3", "--out"])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "exit code after Ctrl-C");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "files left by an interrupted run: {left:?}"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn sizes_beyond_memory_are_refused_before_any_work() {
    require_gpu();
    const HUGE: &str = "1099511627776"; // 2^40
    const SIDE: &str = "1048576"; // 2^20: 2^40 elements
    const OVERFLOW: &str = "8589934592"; // 2^33: 2^66 elements
    let cases: &[&[&str]] = &[
        &["vector-add", "--size", HUGE],
        &["transpose", "--rows", SIDE, "--cols", SIDE],
        &["transpose", "--rows", OVERFLOW, "--cols", OVERFLOW],
        &["reduce", "--size", HUGE],
        &["square-sum", "--size", HUGE],
        &["conv1d", "--size", HUGE],
        &["conv2d", "--rows", SIDE, "--cols", SIDE],
        &["conv2d", "--rows", OVERFLOW, "--cols", OVERFLOW],
        &["registers", "--size", HUGE],
        &["shared-memory", "--size", HUGE],
        &["constant-memory", "--size", HUGE],
        &["coalescing", "--size", HUGE],
        &["layout", "--size", HUGE],
        &["bandwidth", "--max-size", HUGE],
        &["texture", "--size", HUGE],
        &["smoke", "--size", HUGE],
        &["vector-add", "--size", "18446744073709551615"],
    ];
    for args in cases {
        let started = std::time::Instant::now();
        let line = assert_one_sentence_error(args);
        let elapsed = started.elapsed();
        // Work on 2^40 elements would take minutes; the CUDA driver's start-up alone takes
        // about 2 s on a host of four H200s (seen in run.sh tests there), so 10 s separates
        // the two.
        assert!(
            elapsed < std::time::Duration::from_secs(10),
            "{args:?} took {elapsed:?} to refuse"
        );
        assert!(
            line.contains("bytes") || line.contains("overflows"),
            "{args:?}: {line}"
        );
    }
    let line = assert_one_sentence_error(&["vector-add", "--size", HUGE]);
    assert!(
        line.starts_with(
            "error: vector-add of 1099511627776 elements needs 13194139533312 bytes of device memory, "
        ) && line.ends_with(" are free"),
        "{line}"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU (run.sh tests runs it)"]
fn sweep_measures_small_cases_and_writes_its_files() {
    require_gpu();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    // One peer timing to match: the 2^16 reduce-i32 case.
    let peers = dir.path().join("sweep-peers.json");
    std::fs::write(
        &peers,
        r#"{"kind": "demo-sweep-peers", "rows": [{"pattern": "reduce-i32", "shape": [65536],
            "peer": "torch.sum", "operation": "torch.sum(x)", "library": "test", "median_ms": 1.0,
            "reps": 3}]}"#,
    )
    .unwrap();
    let out = demo(&[
        "sweep",
        "reduce-i32",
        "conv1d",
        "transpose",
        "--max-elements",
        "70000",
        "--reps",
        "3",
        "--format",
        "json",
        "--peers",
        peers.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: demo::sweep::SweepReport =
        serde_json::from_slice(&out.stdout).expect("stdout is the sweep JSON");
    // In the order named: reduce-i32 at 2^16; conv1d at 2^16 (width 7); transpose 3 x 8191 and
    // 8193 x 7 (the others are beyond 70000 elements and skipped).
    let labels: Vec<String> = report
        .rows
        .iter()
        .map(|r| format!("{} {}", r.case.pattern, r.case.label()))
        .collect();
    assert_eq!(
        labels,
        [
            "reduce-i32 2^16",
            "conv1d 2^16, w 7",
            "transpose 3 x 8191",
            "transpose 8193 x 7"
        ],
        "{labels:?}"
    );
    assert!(report.rows.iter().all(|r| r.passed && r.reps == 3));
    assert!(
        report
            .skipped
            .iter()
            .all(|s| s.reason.contains("--max-elements"))
    );
    assert!(report.ceilings.read.gbps > 0.0 && report.ceilings.copy.gbps > 0.0);
    assert_eq!(report.ceilings.read.tried.len(), 4);
    assert_eq!(report.rows[0].peers.len(), 1);
    assert!(report.rows[1].floor.is_some());
    for f in [
        "sweep.json",
        "sweep.csv",
        "sweep.md",
        "charts/sweep-reduce-i32.png",
        "charts/sweep-conv1d.svg",
    ] {
        assert!(out_dir.join(f).is_file(), "{f} missing");
    }
}
