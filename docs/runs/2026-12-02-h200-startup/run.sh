#!/usr/bin/env bash
# Issue 56, one device call over `bundle.tar.gz` of the submitted code (carried): the bundle is
# unpacked at a path unlike the build machine's, then
#   1. `run.sh startup`: process start to exit of every pattern's demo at its smallest size, of
#      `demo vector-add --size 1` and of `examples/01_reduce_a_sub_slice`, each with an empty
#      JIT cache (cold) and a filled one (warm): the kernels load from SASS;
#   2. the same for three commands with GPU_HOST_JIT=1 (PTX only, JIT-compiled per module):
#      what the SASS saves;
#   3. `run.sh tests`: every test executable of the bundle with --include-ignored.
# Everything lands in $OUT (the tables as files, the logs in one archive).
set -u
out=${OUT:-/tmp/out}
mkdir -p /tmp/elsewhere/deep && tar -xzf bundle.tar.gz -C /tmp/elsewhere/deep || exit 1
cd /tmp/elsewhere/deep/bundle || exit 1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "bundle: $(du -sb . | cut -f1) bytes unpacked; kernels/: $(ls kernels | wc -l) images, $(du -sb kernels | cut -f1) bytes"
} | tee "$out/machine.txt"
timeout 120 ./run.sh startup /tmp/res/sass >/tmp/res-sass.log 2>&1; echo "startup rc=$?" | tee -a "$out/machine.txt"
cp /tmp/res/sass/startup.md "$out/startup_sass.md" 2>/dev/null
GPU_HOST_JIT=1 timeout 60 ./run.sh startup /tmp/res/jit vector-add conv2d >/tmp/res-jit.log 2>&1; echo "jit rc=$?" | tee -a "$out/machine.txt"
cp /tmp/res/jit/startup.md "$out/startup_jit.md" 2>/dev/null
timeout 250 ./run.sh tests >/tmp/res/tests.log 2>&1; echo "tests rc=$?" | tee -a "$out/machine.txt"
grep -E "^test result|run.sh tests" /tmp/res/tests.log > "$out/tests_summary.txt"
cp /tmp/res-sass.log /tmp/res-jit.log /tmp/res/ 2>/dev/null
tar -cJf "$out/raw.tar.xz" -C /tmp res
tail -3 /tmp/res/tests.log
echo "== SASS (default)"; cat "$out/startup_sass.md"
echo "== PTX only (GPU_HOST_JIT=1)"; cat "$out/startup_jit.md"
