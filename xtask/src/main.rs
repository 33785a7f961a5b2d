//! Project tasks, run as `cargo xtask <task>`:
//! - `build-ptx [--arch sm_XX]... [--out DIR]`: builds the `gpu` crate to one PTX file per
//!   architecture (default sm_70 and sm_90) and prints the paths written, one per line, last.
//!   `build-ptx --prebuilt [--check]`: records (or checks) the prebuilt PTX in `cpu/ptx/` (and
//!   records the template's, `templates/your-kernels/app/ptx/`).
//! - `bundle [--out DIR] [--archive]`: release `demo`, every test executable and the PTX in one
//!   folder with a `run.sh`, to run on a machine that has an NVIDIA driver but no Rust; run.sh's
//!   demo and sanitizer lists are the pattern registry's, as the built `demo list --names` and
//!   `demo list --sanitize-args` print them. `--archive` also packs it into `DIR.tar.gz`.
//! - `ptx-report [--arch sm_XX]... [--ptxas PATH] [--check]`: registers, shared memory, stack and
//!   spills per kernel from `ptxas -v` (no GPU needed); `--check` fails on a kernel that spills.

mod ptx_report;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use ptx_builder::{Arch, Builder, Built, DEFAULT_ARCHS, PREBUILT_DIR};

#[derive(Parser)]
#[command(about = "Project tasks: build-ptx, bundle, ptx-report")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build the gpu crate to PTX, one file per architecture.
    BuildPtx {
        /// Architecture (sm_XX, XX >= 70); repeat for several. Default: sm_70 and sm_90.
        #[arg(long = "arch", value_parser = parse_arch)]
        archs: Vec<Arch>,
        /// Output folder (default target/ptx).
        #[arg(long, conflicts_with = "prebuilt")]
        out: Option<PathBuf>,
        /// Also record the PTX of the default architectures as the prebuilt PTX the `cpu`
        /// crate embeds without a GPU build (cpu/ptx/, with the digest of its inputs).
        #[arg(long, conflicts_with = "archs")]
        prebuilt: bool,
        /// With --prebuilt: write nothing, and fail unless cpu/ptx/ is byte-identical to this
        /// fresh build and records today's inputs.
        #[arg(long, requires = "prebuilt")]
        check: bool,
    },
    /// Build release binaries, test executables and PTX into a folder with run.sh.
    Bundle {
        /// Output folder (default bundle/, git-ignored).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also pack the folder into `<folder>.tar.gz` beside it (about a quarter of its size:
        /// one file to copy to a GPU machine).
        #[arg(long)]
        archive: bool,
    },
    /// Registers, shared memory, stack frame and spills per kernel and PTX architecture, from
    /// `ptxas -v` (a CUDA toolkit's, or PyPI's nvidia-cuda-nvcc-cu12 wheel; no GPU needed).
    PtxReport {
        /// Architecture (sm_XX, XX >= 70); repeat for several. Default: sm_70 and sm_90.
        #[arg(long = "arch", value_parser = parse_arch)]
        archs: Vec<Arch>,
        /// The ptxas to use (default: $PTXAS, PATH, /usr/local/cuda, the Python wheel).
        #[arg(long)]
        ptxas: Option<PathBuf>,
        /// Exit non-zero if a kernel spills, or has a stack frame without using local memory
        /// by design.
        #[arg(long)]
        check: bool,
    },
}

fn parse_arch(s: &str) -> Result<Arch, String> {
    s.parse()
        .map_err(|e: ptx_builder::BuildError| e.to_string())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ lives in the workspace root")
        .to_path_buf()
}

fn run(cli: Cli) -> Result<()> {
    let root = workspace_root();
    match cli.task {
        Task::BuildPtx {
            prebuilt: true,
            check,
            ..
        } => prebuilt_ptx(&root, check),
        Task::BuildPtx { archs, out, .. } => {
            let paths = build_ptx(&root, archs, out.unwrap_or_else(|| root.join("target/ptx")))?;
            for p in paths {
                println!("{}", p.display());
            }
            Ok(())
        }
        Task::Bundle { out, archive } => {
            let out = out.unwrap_or_else(|| root.join("bundle"));
            bundle(&root, &out)?;
            if archive {
                pack(&out)?;
            }
            Ok(())
        }
        Task::PtxReport {
            archs,
            ptxas,
            check,
        } => ptx_report(&root, archs, ptxas, check),
    }
}

fn ptx_report(root: &Path, archs: Vec<Arch>, ptxas: Option<PathBuf>, check: bool) -> Result<()> {
    let ptxas = ptx_report::find_ptxas(ptxas)?;
    let mut archs_built = archs.clone();
    if archs_built.is_empty() {
        archs_built = DEFAULT_ARCHS.to_vec();
    }
    let paths = build_ptx(root, archs, root.join("target/ptx"))?;
    let mut problems = Vec::new();
    println!("# Kernel resources (ptxas -v, {})\n", ptxas.display());
    for (arch, ptx) in archs_built.iter().zip(&paths) {
        let arch = arch.to_string();
        let kernels = ptx_report::assemble(&ptxas, &arch, ptx)?;
        println!("{}", ptx_report::table(&arch, &kernels));
        problems.extend(
            kernels
                .iter()
                .filter_map(|k| k.problem().map(|p| format!("{arch}: {p}"))),
        );
    }
    if check && !problems.is_empty() {
        bail!(
            "{} kernel(s) fail the check:\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
    if check {
        println!(
            "check: no kernel spills; stack frames only in {:?}",
            ptx_report::LOCAL_MEMORY_BY_DESIGN
        );
    }
    Ok(())
}

/// Builds the default architectures afresh, then records them as the prebuilt PTX (or, with
/// `check`, fails unless the recorded PTX and digest equal the fresh build's).
fn prebuilt_ptx(root: &Path, check: bool) -> Result<()> {
    let fresh = build(root, Vec::new(), root.join("target/ptx"))?;
    let builder = kernels(root, Vec::new(), root.join("target/ptx"))
        .0
        .prebuilt(root.join(PREBUILT_DIR));
    if !check {
        let dir = builder.record_prebuilt(&fresh)?;
        println!("{}", dir.display());
        // The template's prebuilt PTX reads the same kit: record it too (its app's build script
        // builds its kernels afresh and records them when KERNELS_RECORD_PTX is set).
        let template = root.join("templates/your-kernels");
        let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .current_dir(&template)
            .env("KERNELS_RECORD_PTX", "1")
            .args(["build", "--locked", "--package", "app"])
            .status()
            .context("running cargo in templates/your-kernels")?;
        if !status.success() {
            bail!("recording the template's PTX failed ({status})");
        }
        println!("{}", template.join("app/ptx").display());
        return Ok(());
    }
    let dir = root.join(PREBUILT_DIR);
    for (arch, path) in &fresh.ptx {
        let recorded = dir.join(arch.ptx_file(&fresh.lib_name));
        let same = std::fs::read(&recorded).ok() == Some(std::fs::read(path)?);
        if !same {
            bail!(
                "{} differs from a fresh build ({}): run `cargo xtask build-ptx --prebuilt` and commit cpu/ptx",
                recorded.display(),
                path.display()
            );
        }
    }
    if !builder.prebuilt_is_current()? {
        bail!(
            "{} does not record today's inputs: run `cargo xtask build-ptx --prebuilt` and commit cpu/ptx",
            dir.join(ptx_builder::DIGEST_FILE).display()
        );
    }
    println!(
        "{}: byte-identical to a fresh build, digest of today's inputs",
        dir.display()
    );
    Ok(())
}

/// The build of this project's kernel crate, `gpu/`, for `archs` (none: the default ones) into
/// `out`, with its GPU build in `target/ptx-build`; the architectures it builds.
fn kernels(root: &Path, archs: Vec<Arch>, out: PathBuf) -> (Builder, Vec<Arch>) {
    let archs = if archs.is_empty() {
        DEFAULT_ARCHS.to_vec()
    } else {
        archs
    };
    let builder = Builder::new(root.join("gpu"))
        .locked()
        .archs(archs.clone())
        .out_dir(out)
        .target_dir(root.join("target/ptx-build"));
    (builder, archs)
}

fn build(root: &Path, archs: Vec<Arch>, out: PathBuf) -> Result<Built> {
    let (builder, archs) = kernels(root, archs, out);
    let names: Vec<String> = archs.iter().map(|a| a.to_string()).collect();
    eprintln!(
        "building PTX of {} ({})",
        builder.crate_dir().display(),
        names.join(", ")
    );
    Ok(builder.build()?)
}

fn build_ptx(root: &Path, archs: Vec<Arch>, out: PathBuf) -> Result<Vec<PathBuf>> {
    Ok(build(root, archs, out)?
        .ptx
        .into_iter()
        .map(|(_, p)| p)
        .collect())
}

fn cargo(root: &Path, args: &[&str]) -> Result<std::process::Output> {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(program)
        .current_dir(root)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running cargo {}", args.join(" ")))?;
    if !output.status.success() {
        bail!("cargo {} failed ({})", args.join(" "), output.status);
    }
    Ok(output)
}

fn copy_executable(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(())
}

fn bundle(root: &Path, out: &Path) -> Result<()> {
    if out.exists() {
        std::fs::remove_dir_all(out)
            .with_context(|| format!("removing the old {}", out.display()))?;
    }
    for dir in ["bin", "tests", "ptx", "examples"] {
        std::fs::create_dir_all(out.join(dir))
            .with_context(|| format!("creating {}", out.join(dir).display()))?;
    }

    let built = cargo(
        root,
        &[
            "build",
            "--release",
            "--package",
            "demo",
            "--bin",
            "demo",
            "--message-format=json",
        ],
    )?;
    let demo = artifacts(&built.stdout, false)
        .into_iter()
        .map(|(exe, _)| exe)
        .next()
        .context("cargo reported no demo executable")?;
    copy_executable(&demo, &out.join("bin/demo"))?;

    let listing = cargo(
        root,
        &[
            "test",
            "--release",
            "--workspace",
            "--no-run",
            "--message-format=json",
        ],
    )?;
    let mut tests = 0;
    for (exe, name) in artifacts(&listing.stdout, true) {
        // The PTX builder's tests run cargo and the pinned nightly (a GPU machine has no Rust
        // toolchain); they need no GPU, and CI runs them.
        if name.starts_with("builder-") {
            continue;
        }
        copy_executable(&exe, &out.join("tests").join(name))?;
        tests += 1;
    }
    if tests == 0 {
        bail!("cargo reported no test executables");
    }
    // The template of a user's project (its own workspace, its kernels from its prebuilt PTX):
    // its test executables, named `template-<crate>-<target>`, GPU trials included.
    let template = root.join("templates/your-kernels/Cargo.toml");
    let template_tests = cargo(
        root,
        &[
            "test",
            "--release",
            "--locked",
            "--manifest-path",
            &template.to_string_lossy(),
            "--no-run",
            "--message-format=json",
        ],
    )?;
    for (exe, name) in artifacts(&template_tests.stdout, true) {
        copy_executable(&exe, &out.join("tests").join(format!("template-{name}")))?;
    }

    // The library's numbered examples, run by `run.sh examples`.
    let examples = cargo(
        root,
        &[
            "build",
            "--release",
            "--package",
            "cpu",
            "--examples",
            "--message-format=json",
        ],
    )?;
    let mut count = 0;
    for (exe, _) in artifacts(&examples.stdout, false) {
        // Cargo writes examples to `<target>/release/examples/`; skip anything else it reports.
        if exe.parent().and_then(|p| p.file_name()) != Some(std::ffi::OsStr::new("examples")) {
            continue;
        }
        let name = exe
            .file_name()
            .context("an example without a file name")?
            .to_owned();
        copy_executable(&exe, &out.join("examples").join(name))?;
        count += 1;
    }
    if count == 0 {
        bail!("cargo reported no example executables");
    }

    build_ptx(root, Vec::new(), out.join("ptx"))?;
    let run_sh = out.join("run.sh");
    let script = run_sh_from_registry(&demo)?;
    std::fs::write(&run_sh, script).with_context(|| format!("writing {}", run_sh.display()))?;
    let peers = out.join("peers.py");
    std::fs::write(&peers, PEERS_PY).with_context(|| format!("writing {}", peers.display()))?;
    let check = out.join("scipy_check.py");
    std::fs::write(&check, SCIPY_CHECK_PY)
        .with_context(|| format!("writing {}", check.display()))?;
    let dumps = out.join("check_dumps.py");
    std::fs::write(&dumps, CHECK_DUMPS_PY)
        .with_context(|| format!("writing {}", dumps.display()))?;
    // The photographs `run.sh photos` filters (data/README.md: sources and licences).
    let data = out.join("data");
    std::fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
    let source = root.join("data");
    for entry in
        std::fs::read_dir(&source).with_context(|| format!("reading {}", source.display()))?
    {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "png" || e == "md") {
            let name = path.file_name().context("a data file without a name")?;
            std::fs::copy(&path, data.join(name))
                .with_context(|| format!("copying {}", path.display()))?;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&run_sh, std::fs::Permissions::from_mode(0o755))?;
    }
    println!("{}", out.display());
    Ok(())
}

/// Packs the bundle folder `out` into `<out>.tar.gz` beside it with the system's `tar`, the
/// folder's own name as the archive's top folder.
fn pack(out: &Path) -> Result<()> {
    let (Some(parent), Some(name)) = (out.parent(), out.file_name()) else {
        bail!(
            "{} has no parent folder to put its archive in",
            out.display()
        );
    };
    let mut file_name = name.to_owned();
    file_name.push(".tar.gz");
    let archive = parent.join(file_name);
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(parent)
        .arg(name)
        .status()
        .context("running tar")?;
    if !status.success() {
        bail!("tar failed ({status}) packing {}", out.display());
    }
    println!("{}", archive.display());
    Ok(())
}

/// The executables of a `cargo ... --message-format=json` run: each test executable (`tests`)
/// or binary, with `<crate folder>-<target name>` for the bundle's tests/ folder.
fn artifacts(stdout: &[u8], tests: bool) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || (msg["profile"]["test"] == true) != tests {
            continue;
        }
        let Some(exe) = msg["executable"].as_str() else {
            continue;
        };
        let crate_dir = Path::new(msg["manifest_path"].as_str().unwrap_or_default())
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = format!(
            "{crate_dir}-{}",
            msg["target"]["name"].as_str().unwrap_or("test")
        );
        found.push((PathBuf::from(exe), name));
    }
    found
}

/// Lines the built `demo` prints for `demo list <flag>` (it needs no GPU).
fn demo_list(demo: &Path, flag: &str) -> Result<Vec<String>> {
    let output = Command::new(demo)
        .args(["list", flag])
        .output()
        .with_context(|| format!("running {} list {flag}", demo.display()))?;
    if !output.status.success() {
        bail!(
            "{} list {flag} failed ({}): {}",
            demo.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    // The lines become bash words and quoted strings: nothing that needs escaping.
    let plain = |c: char| c.is_ascii_alphanumeric() || " .-_:".contains(c);
    if lines.is_empty() || lines.iter().any(|l| l.is_empty() || !l.chars().all(plain)) {
        bail!("{} list {flag} printed {lines:?}", demo.display());
    }
    Ok(lines)
}

/// [`RUN_SH`] with the demo and sanitizer lists of the pattern registry, as the built `demo`
/// prints them.
fn run_sh_from_registry(demo: &Path) -> Result<String> {
    fill_run_sh(
        &demo_list(demo, "--names")?,
        &demo_list(demo, "--sanitize-args")?,
    )
}

/// [`RUN_SH`] with `names` as its `demos` array and `cases` as its `sanitize_cases` array.
fn fill_run_sh(names: &[String], cases: &[String]) -> Result<String> {
    let demos = format!("demos=(\n  {}\n)", names.join("\n  "));
    let sanitize = format!(
        "sanitize_cases=(\n{}\n)",
        cases
            .iter()
            .map(|c| format!("  \"{c}\""))
            .collect::<Vec<_>>()
            .join("\n")
    );
    for placeholder in ["@DEMOS@", "@SANITIZE_CASES@"] {
        if !RUN_SH.contains(placeholder) {
            bail!("run.sh template lacks {placeholder}");
        }
    }
    Ok(RUN_SH
        .replace("@DEMOS@", &demos)
        .replace("@SANITIZE_CASES@", &sanitize))
}

/// `run.sh peers`: the same operations through PyTorch / CuPy, for the report's peer columns.
const PEERS_PY: &str = include_str!("../peers/peers.py");

/// `run.sh photos`: `demo conv2d` on the photographs of `data/` against SciPy's `correlate`.
const SCIPY_CHECK_PY: &str = include_str!("../peers/scipy_check.py");

/// `run.sh dumps`: `demo scan`, `histogram` and `conv2d` with `--dump`, every dumped output
/// recomputed with NumPy from the dumped inputs.
const CHECK_DUMPS_PY: &str = include_str!("../peers/check_dumps.py");

/// The bundle's entry point (see README "Running on a GPU machine without Rust").
const RUN_SH: &str = r#"#!/usr/bin/env bash
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
#   ./run.sh dumps      demo scan, histogram and conv2d with --dump, every dumped output recomputed
#                       with NumPy from the dumped inputs (check_dumps.py)
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
  *) echo "usage: $0 [all|tests|examples|demo|sanitize|resources|report|peers|multi-gpu|multi-process|sweep|profile|photos|dumps]" >&2; exit 2 ;;
esac

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"; exit 1
fi
echo "run.sh $mode: all passed"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_sh_gets_the_lists_and_is_valid_bash() {
        let names = vec!["vector-add".to_string(), "device-globals".into()];
        let cases = vec![
            "vector-add --size 100003".to_string(),
            "device-globals".into(),
        ];
        let script = fill_run_sh(&names, &cases).unwrap();
        assert!(script.contains("demos=(\n  vector-add\n  device-globals\n)"));
        assert!(script.contains("  \"vector-add --size 100003\"\n  \"device-globals\"\n)"));
        assert!(
            !script.contains("@DEMOS@") && !script.contains("@SANITIZE_CASES@"),
            "a placeholder is left"
        );
        assert!(
            script.contains("  sweep) run_sweep ;;")
                && script.contains("peers.py\" --sweep \"$file\" --demo \"$here/bin/demo\"")
                && script.contains("#   ./run.sh sweep [DIR"),
            "run.sh has the sweep mode, documented"
        );
        let Ok(mut bash) = Command::new("bash")
            .args(["-n", "/dev/stdin"])
            .stdin(std::process::Stdio::piped())
            .spawn()
        else {
            return; // no bash here: the syntax check is run.sh's own first run
        };
        use std::io::Write;
        bash.stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        assert!(bash.wait().unwrap().success(), "bash -n rejects run.sh");
    }

    /// `peers.py --sweep` takes its cases from the demo (`demo sweep --list-cases`), found
    /// where the bundle puts it (`bin/demo` beside the script): here a stand-in that prints
    /// two cases, and refuses an unknown pattern as the demo does.
    #[test]
    fn peers_py_reads_the_cases_from_the_demo() {
        let dir = std::env::temp_dir().join(format!("peers-py-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("peers.py"), PEERS_PY).unwrap();
        let demo = dir.join("bin/demo");
        std::fs::write(
            &demo,
            "#!/bin/sh\n\
             [ \"$2\" = nope ] && { echo 'error: unknown pattern' >&2; exit 1; }\n\
             echo '[{\"pattern\": \"conv1d\", \"shape\": [1024], \"width\": 7},'\n\
             echo ' {\"pattern\": \"transpose\", \"shape\": [3, 5], \"width\": null}]'\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&demo, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let code = "import importlib.util, json, sys\n\
                    spec = importlib.util.spec_from_file_location('peers', sys.argv[1])\n\
                    m = importlib.util.module_from_spec(spec)\n\
                    spec.loader.exec_module(m)\n\
                    print(json.dumps(m.sweep_cases(m.default_demo(), sys.argv[2:] or None)))";
        let script = dir.join("peers.py");
        let run = |patterns: &[&str]| {
            Command::new("python3")
                .args(["-c", code])
                .arg(&script)
                .args(patterns)
                .env_remove("GPU_LAB_DEMO")
                .output()
        };
        let Ok(out) = run(&[]) else {
            let _ = std::fs::remove_dir_all(&dir);
            return; // no python3 here: run.sh's machines run it
        };
        let refused = run(&["nope"]).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cases: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            cases,
            serde_json::json!([["conv1d", [1024], 7], ["transpose", [3, 5], null]])
        );
        assert!(!refused.status.success());
        assert!(String::from_utf8_lossy(&refused.stderr).contains("unknown pattern"));
    }
}
