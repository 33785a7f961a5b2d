//! Project tasks, run as `cargo xtask <task>`:
//! - `build-ptx [--arch sm_XX]... [--out DIR]`: builds the `gpu` crate to one PTX file per
//!   architecture (default sm_70, sm_80 and sm_90) and prints the paths written, one per line, last.
//!   `build-ptx --prebuilt [--check]`: records (or checks) the prebuilt PTX in `cpu/ptx/` (and
//!   records the template's, `templates/your-kernels/app/ptx/`).
//! - `bundle [--out DIR] [--archive]`: release `demo`, every test executable and the PTX in one
//!   folder with a `run.sh`, to run on a machine that has an NVIDIA driver but no Rust; run.sh's
//!   demo and sanitizer lists are the pattern registry's, as the built `demo list --names` and
//!   `demo list --sanitize-args` print them. `--archive` also packs it into `DIR.tar.gz`.
//! - `ptx-report [--arch sm_XX]... [--ptxas PATH] [--check]`: registers, shared memory, stack and
//!   spills per kernel from `ptxas -v` (no GPU needed); `--check` fails on a kernel that spills.

mod ptx_report;
mod run_sh;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use ptx_builder::{Arch, Builder, Built, DEFAULT_ARCHS, DEFAULT_SASS, PREBUILT_DIR, read_image};

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
        /// Architecture (sm_XX, XX >= 70); repeat for several. Default: sm_70, sm_80 and sm_90.
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
        /// Architecture (sm_XX, XX >= 70); repeat for several. Default: sm_70, sm_80 and sm_90.
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

/// Builds the default architectures afresh, cut into modules, with SASS for
/// [`DEFAULT_SASS`], then records them as the prebuilt kernels (or, with `check`, fails unless
/// every recorded image decompresses to the fresh build's bytes and the digest is today's).
fn prebuilt_ptx(root: &Path, check: bool) -> Result<()> {
    let (builder, _) = kernels(root, Vec::new(), root.join("target/ptx"));
    eprintln!(
        "building PTX of {} ({}) and SASS ({})",
        builder.crate_dir().display(),
        names(&DEFAULT_ARCHS),
        names(&DEFAULT_SASS)
    );
    let fresh = builder.clone().sass(DEFAULT_SASS).build()?;
    let builder = builder.prebuilt(root.join(PREBUILT_DIR));
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
    let stale = |what: String| {
        anyhow::anyhow!(
            "{what}: run `cargo xtask build-ptx --prebuilt` and commit {}",
            dir.display()
        )
    };
    let recorded = builder
        .recorded_prebuilt()?
        .ok_or_else(|| stale(format!("{} holds no prebuilt kernels", dir.display())))?;
    let modules =
        |m: &[ptx_builder::BuiltModule]| m.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
    if modules(&recorded) != modules(&fresh.modules) {
        return Err(stale(format!(
            "the recorded modules {:?} are not the fresh build's {:?}",
            modules(&recorded),
            modules(&fresh.modules)
        )));
    }
    let mut images = 0;
    for (old, new) in recorded.iter().zip(&fresh.modules) {
        let kinds = |m: &ptx_builder::BuiltModule| {
            m.images
                .iter()
                .map(|i| (i.arch, i.format))
                .collect::<Vec<_>>()
        };
        if kinds(old) != kinds(new) {
            return Err(stale(format!(
                "module {}: recorded images {:?}, fresh {:?}",
                old.name,
                kinds(old),
                kinds(new)
            )));
        }
        for (a, b) in old.images.iter().zip(&new.images) {
            if read_image(a)? != read_image(b)? {
                return Err(stale(format!(
                    "{} differs from a fresh build ({})",
                    a.path.display(),
                    b.path.display()
                )));
            }
            images += 1;
        }
    }
    if !builder.prebuilt_is_current()? {
        return Err(stale(format!(
            "{} does not record today's inputs",
            dir.join(ptx_builder::DIGEST_FILE).display()
        )));
    }
    println!(
        "{}: {} modules, {images} images, each byte-identical to a fresh build once decompressed; digest of today's inputs",
        dir.display(),
        fresh.modules.len()
    );
    Ok(())
}

fn names(archs: &[Arch]) -> String {
    archs
        .iter()
        .map(|a| a.to_string())
        .collect::<Vec<_>>()
        .join(", ")
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
    eprintln!(
        "building PTX of {} ({})",
        builder.crate_dir().display(),
        names(&archs)
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

/// Runs cargo for the bundle: with `GPU_LAB_KERNEL_FILES=1`, so that every executable reads the
/// lab's kernel images from the bundle's one `kernels/` folder rather than embedding its own
/// copy (cpu/build.rs, `gpu_host::ImageBytes::File`).
fn cargo(root: &Path, args: &[&str]) -> Result<std::process::Output> {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(program)
        .current_dir(root)
        .args(args)
        .env("GPU_LAB_KERNEL_FILES", "1")
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
    let mut images = copy_kernels(&built.stdout, out)?;

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
    images += copy_kernels(&listing.stdout, out)?;
    let mut tests = 0;
    let mut skipped = Vec::new();
    for (exe, name) in artifacts(&listing.stdout, true) {
        // The PTX builder's tests run cargo and the pinned nightly (a GPU machine has no Rust
        // toolchain) and read the checkout (`CARGO_MANIFEST_DIR`: gpu/std, rust-toolchain.toml);
        // they need no GPU, and CI runs them.
        if name.starts_with("builder-") {
            continue;
        }
        // Structure checks that read the source tree at run time: CI runs them; in a bundle,
        // away from the build machine's checkout, they could only fail.
        if SOURCE_TREE_TESTS.contains(&name.as_str()) {
            skipped.push(name);
            continue;
        }
        copy_executable(&exe, &out.join("tests").join(name))?;
        tests += 1;
    }
    if tests == 0 {
        bail!("cargo reported no test executables");
    }
    // A renamed structure check would come back into the bundle unnoticed: each one named in
    // SOURCE_TREE_TESTS must still be there to leave out.
    for name in SOURCE_TREE_TESTS {
        if !skipped.iter().any(|s| s == name) {
            bail!(
                "cargo reported no test executable {name} (SOURCE_TREE_TESTS in xtask/src/main.rs)"
            );
        }
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
    images += copy_kernels(&examples.stdout, out)?;
    if images == 0 {
        bail!("the cpu build scripts wrote no kernel images (GPU_LAB_KERNEL_FILES)");
    }
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

    // The whole PTX of each architecture (`run.sh resources` assembles it with ptxas -v).
    for path in build_ptx(root, Vec::new(), root.join("target/ptx"))? {
        let name = path.file_name().context("a PTX file without a name")?;
        std::fs::copy(&path, out.join("ptx").join(name))
            .with_context(|| format!("copying {}", path.display()))?;
    }
    let run_sh = out.join("run.sh");
    let script = run_sh::from_registry(&demo)?;
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

/// The test executables (`<crate folder>-<target>`, as [`artifacts`] names them) that read the
/// workspace's source tree at run time, the bundle leaves out: `demo-layers`
/// (cpu/demo/tests/layers.rs, the demo's import layers, read from `CARGO_MANIFEST_DIR/src`).
/// Every other test reads only what it embeds at compile time (`include_str!`, `include_bytes!`)
/// or writes itself in a temporary folder; `env!("CARGO_BIN_EXE_demo")` is only a fallback for
/// `GPU_LAB_DEMO`, which run.sh sets to the bundle's `bin/demo`.
const SOURCE_TREE_TESTS: &[&str] = &["demo-layers"];

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
/// The `kernels/` folders that the `cpu` build scripts of a `--message-format=json` build wrote
/// (with `GPU_LAB_KERNEL_FILES=1`: the images the executables read at run time).
fn kernel_dirs(stdout: &[u8]) -> Vec<PathBuf> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "build-script-executed")
        .filter_map(|msg| {
            msg["out_dir"]
                .as_str()
                .map(|d| Path::new(d).join("kernels"))
        })
        .filter(|dir| dir.is_dir())
        .collect()
}

/// Copies every file of the `kernels/` folders of `stdout`'s build into `out/kernels`.
fn copy_kernels(stdout: &[u8], out: &Path) -> Result<usize> {
    let dest = out.join("kernels");
    std::fs::create_dir_all(&dest).with_context(|| format!("creating {}", dest.display()))?;
    let mut copied = 0;
    for dir in kernel_dirs(stdout) {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?
        {
            let path = entry?.path();
            let name = path.file_name().context("an image without a name")?;
            std::fs::copy(&path, dest.join(name))
                .with_context(|| format!("copying {}", path.display()))?;
            copied += 1;
        }
    }
    Ok(copied)
}

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
        // A binary's unit tests apart from its library's of the same name (`demo-demo`).
        let bin = tests
            && msg["target"]["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bin"));
        let name = format!(
            "{crate_dir}-{}{}",
            msg["target"]["name"].as_str().unwrap_or("test"),
            if bin { "-bin" } else { "" }
        );
        found.push((PathBuf::from(exe), name));
    }
    found
}

/// `run.sh peers`: the same operations through PyTorch / CuPy, for the report's peer columns.
const PEERS_PY: &str = include_str!("../peers/peers.py");

/// `run.sh photos`: `demo conv2d` on the photographs of `data/` against SciPy's `correlate`.
const SCIPY_CHECK_PY: &str = include_str!("../peers/scipy_check.py");

/// `run.sh dumps`: `demo scan`, `histogram` and `conv2d` with `--dump`, every dumped output
/// recomputed with NumPy from the dumped inputs.
const CHECK_DUMPS_PY: &str = include_str!("../peers/check_dumps.py");

#[cfg(test)]
mod tests {
    use super::*;

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
