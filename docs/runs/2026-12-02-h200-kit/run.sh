#!/usr/bin/env bash
# The GPU run of issue 59's submission (H200): the bundle's tests (every GPU trial, the template's
# included), then compute-sanitizer's four tools over the template's new trials, then the dumps.
# Usage (device machine, in the checkout, bundle.tar.gz carried): bash docs/runs/2026-12-02-h200-kit/run.sh tests|sanitize|gemm
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
[ -d bundle ] || tar xzf bundle.tar.gz
cd bundle
case "${1:-tests}" in
  tests)
    start=$SECONDS
    ./run.sh tests > "$out/tests.log" 2>&1
    rc=$?
    {
      echo "run.sh tests: exit $rc, $((SECONDS - start)) s"
      grep -E '^(== |test result:|tests: |FAILED|failed:)' "$out/tests.log" | tail -40
    } > "$out/summary.txt"
    ;;
  sanitize)
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    for filter in polynomial reduce_monoid add:: axpy block_sum; do
      for tool in memcheck racecheck synccheck initcheck; do
        "$cs" --tool "$tool" --error-exitcode 99 tests/template-app-gpu "$filter" > "$out/san.log" 2>&1
        rc=$?
        errors=$(grep -Eo '(ERROR SUMMARY|RACECHECK SUMMARY): [0-9]+' "$out/san.log" | tail -1)
        passed=$(grep -Eo '[0-9]+ passed' "$out/san.log" | tail -1)
        printf '%-10s template-app-gpu %-14s exit %-3s %s; %s\n' "$tool" "$filter" "$rc" "$errors" "$passed" >> "$out/sanitize.txt"
      done
    done
    rm -f "$out/san.log"
    start=$SECONDS
    ./run.sh dumps > "$out/dumps.log" 2>&1
    echo "run.sh dumps: exit $?, $((SECONDS - start)) s" >> "$out/sanitize.txt"
    tail -25 "$out/dumps.log" >> "$out/sanitize.txt"
    ;;
  gemm)
    # Issue 57's first part: the mma.sync / ldmatrix tile trials under compute-sanitizer.
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    for tool in memcheck racecheck synccheck initcheck; do
      "$cs" --tool "$tool" --error-exitcode 99 tests/tests-gpu gemm > "$out/san.log" 2>&1
      rc=$?
      errors=$(grep -Eo '(ERROR SUMMARY|RACECHECK SUMMARY): [0-9]+' "$out/san.log" | tail -1)
      passed=$(grep -Eo '[0-9]+ passed; [0-9]+ failed' "$out/san.log" | tail -1)
      printf '%-10s tests-gpu gemm exit %-3s %s; %s\n' "$tool" "$rc" "$errors" "$passed" >> "$out/gemm.txt"
    done
    grep -E '^test .*gemm' "$out/san.log" >> "$out/gemm.txt"
    rm -f "$out/san.log"
    ;;
esac
