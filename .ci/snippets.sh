#!/usr/bin/env bash
# The kit's README snippets, as a user copies them, built as a project of their own outside the
# checkout (no GPU needed):
#   - kernels/src/lib.rs: gpu/std/README.md's kernel crate;
#   - app/build.rs: xtask/builder/README.md's build script;
#   - app/src/main.rs: gpu/host/README.md's program, inside `fn main`;
#   - calls/src/main.rs: README.md's "Calling the kernels" block, in a function whose parameters
#     are the buffers it names (README.md's first program is a step of .ci/run itself).
# The app builds on stable (the kernels built to PTX by the builder with the pinned nightly) and
# runs (here: the kit's no-driver error). Then `cargo check` of the kernel crate with a type error
# put inside a kernel body must fail and name the line: kernel bodies are checked on the host.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd -P)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "snippets.sh: $*" >&2
  exit 1
}

# The first ```rust block of a Markdown file (its fence may carry attributes: ```rust,ignore).
block() {
  awk '/^```rust/ {p=1; next} p && /^```/ {exit} p' "$1"
}

mkdir -p "$work/kernels/src" "$work/app/src"
cat > "$work/Cargo.toml" <<EOF
[workspace]
resolver = "3"
members = ["kernels", "app"]
EOF
cat > "$work/kernels/Cargo.toml" <<EOF
[package]
name = "kernels"
version = "0.1.0"
edition = "2024"

[dependencies]
gpu_std = { path = "$repo/gpu/std" }
EOF
cp "$repo/rust-toolchain.toml" "$work/kernels/rust-toolchain.toml"
cat > "$work/app/Cargo.toml" <<EOF
[package]
name = "app"
version = "0.1.0"
edition = "2024"

[dependencies]
kernels = { path = "../kernels" }
gpu_host = { path = "$repo/gpu/host" }

[build-dependencies]
ptx-builder = { path = "$repo/xtask/builder" }
EOF
block "$repo/gpu/std/README.md" > "$work/kernels/src/lib.rs"
block "$repo/xtask/builder/README.md" > "$work/app/build.rs"
{
  echo 'fn main() -> Result<(), Box<dyn std::error::Error>> {'
  block "$repo/gpu/host/README.md"
  echo '    let _ = (z, particles);'
  echo '    Ok(())'
  echo '}'
} > "$work/app/src/main.rs"
for f in kernels/src/lib.rs app/build.rs app/src/main.rs; do
  [ -s "$work/$f" ] || fail "no rust block for $f"
done
grep -q '#\[kernel\]' "$work/kernels/src/lib.rs" || fail "gpu/std/README.md's block has no kernel"

stable() {
  (cd "$work" && env -u RUSTUP_TOOLCHAIN -u CARGO_TARGET_DIR -u CARGO_BUILD_TARGET_DIR \
    -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS cargo +stable "$@")
}

echo "== the README snippets as a project (kernels built with the pinned nightly, the app on stable)"
stable build --quiet --package app
if out=$("$work/target/debug/app" 2>&1); then
  echo "$out"
else
  echo "$out"
  echo "$out" | grep -qE 'NoDriver|no NVIDIA driver|no CUDA device' || fail "the README program failed: $out"
fi

echo "== cargo check reports an error inside a kernel body"
line=$(grep -n 'let dt = C_DT::read(0);' "$work/kernels/src/lib.rs" | cut -d: -f1)
[ -n "$line" ] || fail "gpu/std/README.md's step kernel changed: update this check"
sed -i "${line}s/let dt = C_DT::read(0);/let dt: u32 = C_DT::read(0);/" "$work/kernels/src/lib.rs"
if out=$(stable check --package kernels --message-format short 2>&1); then
  fail "cargo check accepted a kernel with a type error"
fi
echo "$out" | grep -q "kernels/src/lib.rs:$line:.*mismatched types" \
  || fail "cargo check did not name the kernel's line $line: $out"
echo "$out" | grep "kernels/src/lib.rs:$line:" | head -1

echo "== README.md's calls into the library (its \"Calling the kernels\" block, in a function)"
# The block's names are the caller's buffers: declared here as the parameters of one function.
mkdir -p "$work/calls/src"
cat > "$work/calls/Cargo.toml" <<TOML
[package]
name = "calls"
version = "0.1.0"
edition = "2024"

[dependencies]
cpu = { path = "$repo/cpu" }

[workspace]
TOML
{
  cat <<'RUST'
#![allow(unused_variables, clippy::too_many_arguments)]
use cpu::cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

fn calls(
    my_stream: Arc<CudaStream>,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
    mut z: CudaSlice<f32>,
    mut scalar: CudaSlice<f64>,
    image: CudaSlice<f32>,
    mut image_t: CudaSlice<f32>,
    mut blurred: CudaSlice<f32>,
    gaussian_5x5: Vec<f32>,
    rows: usize,
    cols: usize,
    mut prefix: CudaSlice<f32>,
    mut kept: CudaSlice<f32>,
    mut count: CudaSlice<u32>,
    text: CudaSlice<u8>,
    mut counts: CudaSlice<u32>,
    mut bins: CudaSlice<u32>,
    mut keys: CudaSlice<u32>,
    mut indices: CudaSlice<u32>,
) -> Result<(), cpu::Error> {
RUST
  awk '/^## Calling the kernels from your program/ {f=1} f && /^```rust/ {p=1; next} p && /^```/ {exit} p' "$repo/README.md"
  echo '    Ok(())'
  echo '}'
  echo
  echo 'fn main() {'
  echo '    let _ = calls;'
  echo '}'
} > "$work/calls/src/main.rs"
grep -q 'reduce::sum' "$work/calls/src/main.rs" || fail "README.md's calls block not found"
(cd "$work/calls" && env -u RUSTUP_TOOLCHAIN -u CARGO_TARGET_DIR -u CARGO_BUILD_TARGET_DIR \
  -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS cargo +stable check --quiet) \
  || fail "README.md's calls block does not compile"
echo "README.md's calls: they compile"
echo "README snippets: OK"
