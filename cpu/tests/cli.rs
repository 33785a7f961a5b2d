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

/// Non-zero exit, and stderr is one line starting `error:`, with no panic.
fn assert_one_sentence_error(args: &[&str]) {
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
}

#[test]
fn device_index_out_of_range() {
    assert_one_sentence_error(&["--device", "4096", "vector-add", "--size", "10"]);
}

#[test]
fn reduction_block_not_a_power_of_two() {
    assert_one_sentence_error(&["reduce", "--size", "1000", "--block", "100"]);
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
fn unknown_pattern_is_refused_by_the_parser() {
    let out = demo(&["no-such-pattern"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn list_needs_no_gpu() {
    let out = demo(&["list"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for pattern in ["vector-add", "transpose", "reduce", "square-sum", "smoke"] {
        assert!(stdout.contains(pattern), "list lacks {pattern}");
    }
}
