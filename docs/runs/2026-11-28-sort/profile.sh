#!/bin/bash
# ncu --set full over one sort_onesweep pass (2^24 u32 keys) of the first variant in
# .gpu/v.tar.xz; the SASS source page (per-instruction executed counts and stall samples) as CSV.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
tar xJf .gpu/v.tar.xz
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
first=$(ls variants | head -1)
timeout 300 ncu -k regex:sort_onesweep --launch-skip 97 --launch-count 1 --set full \
  --import-source no -o /tmp/prof variants/$first 16777216 1 > "$OUT/ncu_full.log" 2>&1
echo "exit $?"
ncu -i /tmp/prof.ncu-rep --page details > "$OUT/details.txt" 2>&1
ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > "$OUT/sass.csv" 2>&1
ls -la "$OUT"
grep -E "Duration|Executed Ipc|Issue Slots|Registers|Achieved Occupancy|Executed Instructions  " "$OUT/details.txt" | head
