#!/usr/bin/env bash
# Runs this bundle on a machine with an NVIDIA driver (no Rust needed).
#   ./run.sh            all GPU tests (ignored ones included), the examples, then every pattern's demo
#   ./run.sh tests      only the test executables
#   ./run.sh examples   the library's numbered examples (cpu/examples), each checking its result
#   ./run.sh demo [PATTERN]...      only the demos (all, or the patterns named)
#   ./run.sh sanitize [PATTERN]...  compute-sanitizer memcheck, racecheck, synccheck, initcheck over the
#                       demos at small sizes (all, or the patterns named; SANITIZE_TOOLS="memcheck"
#                       narrows the tools)
#   ./run.sh resources  ptxas -v over the PTX (registers, shared memory, spills), where ptxas exists;
#                       every PTX is assembled for PTXAS_ARCH (default sm_90: CUDA 13 no longer targets sm_70)
#   ./run.sh report [DIR]   peers (where PyTorch is), then `demo all --out DIR` (default ./report):
#                       report.md, report.json, report.csv, charts/*.svg and *.png
#   ./run.sh peers [FILE]   PyTorch / CuPy timings of the same operations (default ./peers.json)
#   ./run.sh multi-gpu [DIR]  torch.distributed's NCCL all-reduce on every GPU (peers.py --only
#                       multi-gpu), then `demo multi-gpu --peers ... --out DIR` (default ./multi-gpu)
#   ./run.sh multi-process [DIR]  one process per GPU: torch.distributed's all-reduce (peers.py
#                       --only multi-gpu), then `demo multi-gpu --processes N` and the same demo
#                       under `torchrun --standalone --nproc-per-node N --no-python`, each beside the
#                       peer (DIR/processes, DIR/torchrun; default ./multi-process; N = GPUS or every
#                       GPU; MULTI_ARGS adds arguments); their `results:` lines must be equal
#   ./run.sh sweep [DIR [PATTERN]...]  PyTorch / CuPy on demo sweep's sizes (peers.py --sweep
#                       DIR/sweep-peers.json, the cases as `demo sweep --list-cases` prints them,
#                       where python3 and PyTorch are), then `demo sweep
#                       [PATTERN]... --peers ... --out DIR` (default ./sweep): every entry point over
#                       sizes and shapes beside the copy, read-only and theoretical ceilings;
#                       sweep.md, sweep.json, sweep.csv, charts/*.svg and *.png
# NCCL (for demo multi-gpu and its tests) is loaded by the name libnccl.so: where python3 finds
# PyTorch's libnccl.so.2 (the nvidia-nccl wheel), a libnccl.so link to it is put on
# LD_LIBRARY_PATH. NCCL_NVLS_ENABLE=0 (NVLink SHARP off) is exported for everything started here.
#   ./run.sh profile PATTERN...  the demo under Nsight Compute (ncu): global load/store sector
#                       efficiency and shared-memory bank conflicts added to its tables
#   ./run.sh photos     demo conv2d on the photographs in data/ (vec4, wide and separable kernels)
#                       against SciPy's ndimage.correlate (scipy_check.py), within the f32 bound
#   ./run.sh dumps      demo scan, histogram, conv2d and sort with --dump, every dumped output recomputed
#                       with NumPy from the dumped inputs (check_dumps.py)
#   ./run.sh startup [DIR [PATTERN]...]  process start to exit, wall clock, of bin/demo vector-add
#                       --size 1, every pattern's demo at its smallest sizes with --reps 1 (or the
#                       patterns named) and examples/01_reduce_a_sub_slice; each with an empty JIT
#                       cache (a fresh CUDA_CACHE_PATH) and a warm one (the same CUDA_CACHE_PATH
#                       as a run before it); the table in DIR/startup.md (default ./startup), each
#                       command's output in DIR/logs/
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-all}
shift || true
only=("$@")
failed=()

find_tool() {
  command -v "$1" 2>/dev/null && return
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin /opt/nvidia/*/bin; do
    [ -x "$d/$1" ] && { echo "$d/$1"; return; }
  done
}

export NCCL_NVLS_ENABLE=0

# PyTorch's NCCL (libnccl.so.2, from its nvidia-nccl wheel or torch/lib), linked as libnccl.so
# (the name cudarc loads) in a folder put first on LD_LIBRARY_PATH; nothing if none is found.
setup_nccl() {
  command -v python3 >/dev/null || return 0
  local lib
  lib=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
roots = []
try:
    roots += site.getsitepackages()
except Exception:
    pass
try:
    import nvidia
    roots += [os.path.dirname(p) for p in nvidia.__path__]
except Exception:
    pass
for root in roots:
    hits = sorted(glob.glob(os.path.join(root, "nvidia", "**", "libnccl.so*"), recursive=True))
    hits += sorted(glob.glob(os.path.join(root, "torch", "lib", "libnccl.so*")))
    if hits:
        print(hits[0])
        break
PY
  ) || return 0
  [ -n "$lib" ] && [ -f "$lib" ] || return 0
  local links="$here/lib"
  if ! { mkdir -p "$links" && ln -sf "$lib" "$links/libnccl.so"; } 2>/dev/null; then
    links=$(mktemp -d) && ln -sf "$lib" "$links/libnccl.so" || return 0
  fi
  export LD_LIBRARY_PATH="$links:$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "NCCL: $lib (as $links/libnccl.so on LD_LIBRARY_PATH)"
}
setup_nccl

run_tests() {
  export GPU_LAB_DEMO="$here/bin/demo"
  for t in "$here"/tests/*; do
    echo "== test executable $(basename "$t")"
    "$t" --include-ignored || failed+=("tests/$(basename "$t")")
  done
}

# From the pattern registry (`demo list --names`, `demo list --sanitize-args`, written by
# `cargo xtask bundle`): every pattern, which the demo runs at its defaults, and the arguments
# each is sanitized with (small sizes; the vec4 convolutions once per mask width).
@DEMOS@
@SANITIZE_CASES@
# `run.sh startup`: each pattern's smallest sizes (STARTUP_ARGS in xtask/src/run_sh.rs).
@STARTUP_ARGS@

# Patterns named after the mode (./run.sh demo reduce) narrow the demo and sanitize runs.
selected() {
  [ ${#only[@]} -eq 0 ] && return 0
  local p; for p in "${only[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1
}

run_examples() {
  for e in "$here"/examples/*; do
    echo "== example $(basename "$e")"
    "$e" || failed+=("example $(basename "$e")")
  done
}

run_demo() {
  for d in "${demos[@]}"; do
    selected "$d" || continue
    echo "== demo $d"; "$here/bin/demo" "$d" || failed+=("demo $d")
  done
}

run_sanitize() {
  local cs; cs=$(find_tool compute-sanitizer)
  if [ -z "$cs" ]; then echo "compute-sanitizer not found: skipped"; return; fi
  local summary=() totals=()
  local tool
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    local total=0 uncounted=0
    for pattern in "${sanitize_cases[@]}"; do
      selected "${pattern%% *}" || continue
      local log; log=$(mktemp)
      "$cs" --tool "$tool" --error-exitcode 99 "$here/bin/demo" $pattern --reps 2 >"$log" 2>&1
      local rc=$?
      local errors; errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+')
      [ "$tool" = racecheck ] && errors=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+ hazard' "$log" | grep -Eo '[0-9]+' || echo "${errors:-?}")
      summary+=("$(printf '%-10s %-48s exit %-3s errors %s' "$tool" "demo $pattern" "$rc" "${errors:-?}")")
      if [[ "$errors" =~ ^[0-9]+$ ]]; then total=$((total + errors)); else uncounted=$((uncounted + 1)); fi
      [ "$rc" -eq 0 ] || { failed+=("sanitize $tool $pattern"); tail -30 "$log"; }
      rm -f "$log"
    done
    if [ "$uncounted" -gt 0 ]; then
      totals+=("$(printf '%-10s %s errors, %s run(s) without a count' "$tool" "$total" "$uncounted")")
    else
      totals+=("$(printf '%-10s %s errors' "$tool" "$total")")
    fi
  done
  echo "== compute-sanitizer per run"; printf '%s\n' "${summary[@]}"
  echo "== compute-sanitizer per tool (every kernel the demos launch)"; printf '%s\n' "${totals[@]}"
}

run_resources() {
  local px; px=$(find_tool ptxas)
  if [ -z "$px" ]; then echo "ptxas not found: skipped"; return; fi
  for f in "$here"/ptx/*.ptx; do
    local arch=${PTXAS_ARCH:-sm_90}
    echo "== ptxas -arch=$arch -v $(basename "$f")"
    "$px" -arch="$arch" -v "$f" -o /dev/null 2>&1 | grep -E "Compiling entry|Used|spill|rror" || failed+=("ptxas $(basename "$f")")
  done
}

run_peers() {
  local file=$1
  if ! command -v python3 >/dev/null; then echo "peers: python3 not found: skipped"; return 1; fi
  python3 "$here/peers.py" "$file" || { failed+=("peers"); return 1; }
  [ -f "$file" ]
}

run_report() {
  local dir=${only[0]:-report}
  mkdir -p "$dir"
  local peers=()
  if run_peers "$dir/peers.json"; then peers=(--peers "$dir/peers.json"); fi
  "$here/bin/demo" all --out "$dir" "${peers[@]}" || failed+=("demo all")
}

run_multi_gpu() {
  local dir=${only[0]:-multi-gpu}
  mkdir -p "$dir"
  local peers=()
  if ! command -v python3 >/dev/null; then
    echo "peers: python3 not found: demo multi-gpu runs without the PyTorch peer"
  elif python3 "$here/peers.py" "$dir/peers.json" --only multi-gpu && [ -f "$dir/peers.json" ]; then
    peers=(--peers "$dir/peers.json")
  else
    failed+=("peers multi-gpu")
  fi
  "$here/bin/demo" multi-gpu --out "$dir" "${peers[@]}" || failed+=("demo multi-gpu")
}

run_multi_process() {
  local dir=${only[0]:-multi-process}
  local n=${GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
  mkdir -p "$dir"
  local peers=()
  if ! command -v python3 >/dev/null; then
    echo "peers: python3 not found: the multi-process runs go without the PyTorch peer"
  elif python3 "$here/peers.py" "$dir/peers.json" --only multi-gpu && [ -f "$dir/peers.json" ]; then
    peers=(--peers "$dir/peers.json")
  else
    failed+=("peers multi-process")
  fi
  echo "== demo multi-gpu --processes $n"
  "$here/bin/demo" multi-gpu --processes "$n" --out "$dir/processes" ${peers[@]+"${peers[@]}"} ${MULTI_ARGS:-} \
    > "$dir/processes.txt" || failed+=("demo multi-gpu --processes $n")
  cat "$dir/processes.txt"
  if command -v torchrun >/dev/null; then
    echo "== torchrun --standalone --nproc-per-node $n --no-python demo multi-gpu"
    torchrun --standalone --nproc-per-node "$n" --no-python "$here/bin/demo" multi-gpu \
      --out "$dir/torchrun" ${peers[@]+"${peers[@]}"} ${MULTI_ARGS:-} > "$dir/torchrun.txt" \
      || failed+=("torchrun demo multi-gpu")
    cat "$dir/torchrun.txt"
    if diff <(grep '^results:' "$dir/processes.txt") <(grep '^results:' "$dir/torchrun.txt"); then
      echo "the same results under --processes $n and torchrun"
    else
      failed+=("results differ between --processes and torchrun")
    fi
  else
    echo "torchrun not found: the run under torchrun is skipped"
  fi
}

run_sweep() {
  local dir=${only[0]:-sweep}
  local patterns=("${only[@]:1}")
  mkdir -p "$dir"
  local file="$dir/sweep-peers.json"
  rm -f "$file"
  local peers=()
  if ! command -v python3 >/dev/null; then
    echo "peers: python3 not found: demo sweep runs without peers"
  elif ! python3 -c "import torch" 2>/dev/null; then
    echo "peers: PyTorch not found: demo sweep runs without peers"
  elif python3 "$here/peers.py" --sweep "$file" --demo "$here/bin/demo" ${patterns[@]+--patterns "${patterns[@]}"}; then
    [ -f "$file" ] && peers=(--peers "$file")
  else
    failed+=("peers sweep")
  fi
  "$here/bin/demo" sweep ${patterns[@]+"${patterns[@]}"} --out "$dir" ${peers[@]+"${peers[@]}"} || failed+=("demo sweep")
}

run_profile() {
  local ncu; ncu=$(find_tool ncu)
  if [ -z "$ncu" ]; then echo "ncu (Nsight Compute) not found: profile skipped"; return; fi
  [ ${#only[@]} -gt 0 ] || { echo "usage: $0 profile PATTERN..." >&2; failed+=("profile: no pattern"); return; }
  local metrics=smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  for p in "${only[@]}"; do
    local csv; csv=$(mktemp --suffix=.csv)
    echo "== ncu over demo $p (1 timed rep; every launch profiled)"
    if ! "$ncu" --csv --metrics "$metrics" --log-file "$csv" "$here/bin/demo" "$p" --reps 1 >/dev/null; then
      tail -20 "$csv"; failed+=("profile $p"); continue
    fi
    echo "== demo $p, timed, with the profiler's columns"
    "$here/bin/demo" "$p" --profile "$csv" || failed+=("profile $p")
    rm -f "$csv"
  done
}

# Runs "$@" with CUDA_CACHE_PATH=$2 (the driver's JIT cache of the PTX), its output appended
# to the log $1; prints the seconds from start to exit (wall clock) and returns its exit status.
timed_run() {
  local log=$1 cache=$2; shift 2
  local start end rc
  start=$(date +%s.%N)
  env -u CUDA_CACHE_DISABLE CUDA_CACHE_PATH="$cache" CUDA_CACHE_MAXSIZE=4294967296 "$@" >>"$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
  return $rc
}

run_startup() {
  local dir=${only[0]:-startup}
  local patterns=("${only[@]:1}")
  if ! mkdir -p "$dir/logs"; then failed+=("startup: cannot create $dir/logs"); return; fi
  local cmds=("bin/demo vector-add --size 1") d p
  for d in "${demos[@]}"; do
    if [ ${#patterns[@]} -gt 0 ]; then
      local named=0
      for p in "${patterns[@]}"; do [ "$p" = "$d" ] && named=1; done
      [ "$named" -eq 1 ] || continue
    fi
    if [ -z "${startup_args[$d]+set}" ]; then failed+=("startup: no arguments for demo $d"); continue; fi
    cmds+=("bin/demo $d ${startup_args[$d]}")
  done
  cmds+=("examples/01_reduce_a_sub_slice")
  for p in ${patterns[@]+"${patterns[@]}"}; do
    [[ " ${demos[*]} " == *" $p "* ]] || failed+=("startup: no pattern $p")
  done
  # One cache folder for the warm runs: each command fills it (untimed), then runs again, timed.
  local warm; warm=$(mktemp -d)
  local rows=() c
  for c in "${cmds[@]}"; do
    local log="$dir/logs/${c//[^A-Za-z0-9.-]/_}.log"
    : >"$log"
    echo "== startup: $c"
    local cold; cold=$(mktemp -d)
    local cold_s cold_rc warm_s warm_rc
    echo "== cold: CUDA_CACHE_PATH=$cold (empty)" >>"$log"
    cold_s=$(timed_run "$log" "$cold" "$here"/$c); cold_rc=$?
    rm -rf "$cold"
    echo "== fill: CUDA_CACHE_PATH=$warm" >>"$log"
    timed_run "$log" "$warm" "$here"/$c >/dev/null
    echo "== warm: CUDA_CACHE_PATH=$warm (filled by the run before)" >>"$log"
    warm_s=$(timed_run "$log" "$warm" "$here"/$c); warm_rc=$?
    local status=$cold_rc
    [ "$warm_rc" = "$cold_rc" ] || status="$cold_rc (warm $warm_rc)"
    if [ "$cold_rc" -ne 0 ] || [ "$warm_rc" -ne 0 ]; then
      failed+=("startup $c"); tail -20 "$log"
    fi
    rows+=("| \`$c\` | $cold_s | $warm_s | $status |")
  done
  rm -rf "$warm"
  {
    echo "| command | cold s | warm s | exit |"
    echo "|---|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
  } >"$dir/startup.md"
  echo "== startup: process start to exit, wall clock; cold: an empty JIT cache, warm: the cache"
  echo "   a run before filled (CUDA_CACHE_PATH); $dir/startup.md, each command's output in $dir/logs/"
  cat "$dir/startup.md"
}

case "$mode" in
  all) run_tests; run_examples; run_demo ;;
  examples) run_examples ;;
  report) run_report ;;
  peers) run_peers "${only[0]:-peers.json}" || true ;;
  multi-gpu) run_multi_gpu ;;
  multi-process) run_multi_process ;;
  sweep) run_sweep ;;
  profile) run_profile ;;
  photos)
    if command -v python3 >/dev/null; then
      python3 "$here/scipy_check.py" --demo "$here/bin/demo" --data "$here/data" || failed+=("photos")
    else
      echo "python3 not found: photos skipped"
    fi ;;
  dumps)
    if command -v python3 >/dev/null; then
      python3 "$here/check_dumps.py" --demo "$here/bin/demo" || failed+=("dumps")
    else
      echo "python3 not found: dumps skipped"
    fi ;;
  tests) run_tests ;;
  demo) run_demo ;;
  sanitize) run_sanitize ;;
  resources) run_resources ;;
  startup) run_startup ;;
  *) echo "usage: $0 [all|tests|examples|demo|sanitize|resources|report|peers|multi-gpu|multi-process|sweep|profile|photos|dumps|startup]" >&2; exit 2 ;;
esac

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"; exit 1
fi
echo "run.sh $mode: all passed"
