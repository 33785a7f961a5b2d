#!/usr/bin/env bash
# Checks templates/your-kernels, the template of a project of one's own, as a user gets it: a copy
# outside this checkout whose dependencies on the kit (`gpu_std`, `gpu_host`, `ptx-builder`) point
# at this checkout by absolute paths. No GPU needed.
#
#   1. The kernels build from source with the pinned nightly (the builder's fresh build, recorded
#      into the copy's app/ptx/), and that build equals the committed app/ptx/*.ptx.zst byte for byte.
#   2. The app builds on the stable toolchain against the prebuilt PTX: no GPU build runs (the
#      build script reports the prebuilt PTX, and no ptx-build folder appears).
#   3. The app's tests pass on stable: unit and host tests pass, the GPU tests are ignored (or
#      pass, on a machine with a GPU).
#   4. Nothing was written outside the copy's target folder: no GPU build under CARGO_HOME, the
#      checkout's `git status` unchanged, the copy's files unchanged by steps 2 and 3.
#
# Usage: templates/check.sh [--keep DIR]
#   --keep DIR  build the copy in DIR/your-kernels (DIR new or empty) and leave it there; the last
#               line printed is then the path of the GPU test executable (app/tests/gpu.rs),
#               which runs on a GPU machine with nothing but the NVIDIA driver.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd -P)
template="$repo/templates/your-kernels"

keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --keep)
      [ $# -ge 2 ] || { echo "--keep needs a folder" >&2; exit 2; }
      keep=$2
      shift 2
      ;;
    *)
      echo "usage: $0 [--keep DIR]" >&2
      exit 2
      ;;
  esac
done

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  work=$(cd "$keep" && pwd -P)
  if [ -n "$(ls -A "$work")" ]; then
    echo "--keep $keep: the folder is not empty" >&2
    exit 2
  fi
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
copy="$work/your-kernels"

fail() {
  echo "check.sh: $*" >&2
  exit 1
}

# The outer builds on stable, whatever toolchain the caller's environment or a
# rust-toolchain.toml above the copy names; the kernels' nightly is the builder's business.
stable() {
  (cd "$copy" && env -u RUSTUP_TOOLCHAIN -u CARGO_TARGET_DIR -u CARGO_BUILD_TARGET_DIR \
    -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS cargo +stable "$@")
}
rustup run stable rustc --version >/dev/null 2>&1 || rustup toolchain install stable --profile minimal

cargo_home="${CARGO_HOME:-$HOME/.cargo}"
git_status() {
  git --no-optional-locks -C "$repo" status --porcelain
  git --no-optional-locks -C "$repo" status --porcelain --ignored -- templates
}
git_before=$(git_status)

# The copy: the template without its build folder, its kit dependencies at this checkout (the
# workspace's dependency lines; kernels/Cargo.toml, which the PTX digest reads, stays as it is).
tar -C "$repo/templates" --exclude='your-kernels/target' -cf - your-kernels | tar -C "$work" -xf -
sed -i "s|path = \"\\.\\./\\.\\./|path = \"$repo/|" "$copy/Cargo.toml"
if grep -q '"\.\./\.\./' "$copy/Cargo.toml"; then
  fail "a relative path to the lab is left in $copy/Cargo.toml"
fi
for crate in gpu/std gpu/host xtask/builder; do
  grep -q "path = \"$repo/$crate\"" "$copy/Cargo.toml" || fail "no dependency on $repo/$crate"
done
cmp -s "$template/kernels/Cargo.toml" "$copy/kernels/Cargo.toml" || fail "kernels/Cargo.toml changed"
echo "copy: $copy (the kit from $repo)"

step() {
  echo
  echo "== $1"
  started=$SECONDS
}
took() {
  echo "-- $(( SECONDS - started )) s"
}

step "1. the kernels from source, with the pinned nightly (KERNELS_RECORD_PTX=1 cargo +stable check)"
# KERNELS_RECORD_PTX makes app/build.rs build the kernels afresh (ignoring app/ptx/) and record
# that build, with the digest of its inputs in this copy, into the copy's app/ptx/.
KERNELS_RECORD_PTX=1 stable check --locked --package app --lib --target-dir target/from-source
[ -d "$copy/target/from-source/ptx-build" ] || fail "step 1 ran no GPU build (no target/from-source/ptx-build)"
committed=$(cd "$template/app/ptx" && ls)
[ "$(cd "$copy/app/ptx" && ls)" = "$committed" ] || fail "app/ptx holds other files than a fresh build"
for file in $committed; do
  case "$file" in
    *.ptx.zst)
      # The same zstd library (the lock's) at the same level: equal text, equal bytes.
      cmp -s "$template/app/ptx/$file" "$copy/app/ptx/$file" \
        || fail "templates/your-kernels/app/ptx/$file differs from a fresh build of the kernels:" \
          "run \`KERNELS_RECORD_PTX=1 cargo build\` in templates/your-kernels and commit app/ptx"
      ;;
  esac
done
echo "app/ptx/*.ptx.zst: byte-identical to a fresh build"
digest() { grep -v '^#' "$1/app/ptx/inputs.sha256"; }
[ "$(digest "$template")" = "$(digest "$copy")" ] \
  || fail "templates/your-kernels/app/ptx/inputs.sha256 is not the digest of today's inputs:" \
    "run \`KERNELS_RECORD_PTX=1 cargo build\` in templates/your-kernels and commit app/ptx"
echo "app/ptx/inputs.sha256: the digest of today's inputs (the same wherever the lab is checked out)"
took

snapshot() {
  (cd "$copy" && find . -path ./target -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)
}
copy_before=$(snapshot)

step "2. the app on stable, against the prebuilt PTX (cargo +stable build)"
stable build --locked
grep -qx 'cargo:rustc-env=KERNELS_PTX_PREBUILT=true' "$copy"/target/debug/build/app-*/output \
  || fail "app/build.rs did not report the prebuilt PTX (Built::prebuilt)"
# The builder's nested GPU build would live in target/ptx-build.
[ ! -e "$copy/target/ptx-build" ] || fail "the stable build ran a GPU build (target/ptx-build)"
echo "app/build.rs: the prebuilt PTX embedded (Built::prebuilt), no GPU build (no target/ptx-build)"
if out=$("$copy/target/debug/app" 2>&1); then
  echo "$out"
else
  echo "$out"
  echo "$out" | grep -qE 'no NVIDIA driver|no CUDA device' || fail "the app failed: $out"
fi
took

step "3. the app's tests on stable (cargo +stable test)"
log="$work/test.log"
stable test --locked 2>&1 | tee "$log"
summary=$(awk '/Running tests\/gpu.rs/ {f=1} f && /^test result:/ {print; exit}' "$log")
[ -n "$summary" ] || fail "no result line for tests/gpu.rs"
if grep -q 'the GPU tests are reported as ignored' "$log"; then
  echo "$summary" | grep -qE ' [1-9][0-9]* ignored' || fail "no GPU test was reported as ignored"
  echo "tests/gpu.rs without a GPU: $summary"
fi
took

step "4. nothing written outside the copy's target folder"
if find "$cargo_home" -path '*ptx-build*' -print -quit | grep -q .; then
  fail "a GPU build was written under $cargo_home"
fi
[ "$(git_status)" = "$git_before" ] || fail "the checkout's git status changed"
[ "$(snapshot)" = "$copy_before" ] || fail "steps 2 and 3 changed the copy outside target/"
echo "CARGO_HOME: no ptx-build; $repo: git status unchanged; the copy: unchanged outside target/"

echo
echo "templates/your-kernels: OK"
if [ -n "$keep" ]; then
  exe=$(sed -n 's|^ *Running tests/gpu.rs (\(.*\))$|\1|p' "$log" | head -1)
  [ -n "$exe" ] && [ -x "$copy/$exe" ] || fail "no GPU test executable in the log"
  echo "$copy/$exe"
fi
