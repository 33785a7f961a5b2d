//! The PTX builder: compiles the `gpu` crate with rustc's own `nvptx64-nvidia-cuda` backend and
//! writes one PTX file per GPU architecture.
//!
//! Used by `cargo xtask build-ptx` and by `cpu/build.rs` (which embeds the PTX in the host
//! library), so the two always build the same way.
//!
//! Toolchain: the `gpu` crate is always compiled by the nightly pinned in `rust-toolchain.toml`,
//! started through `rustup run <channel> cargo` (installed with `rust-src` when missing), so a
//! build driven from a stable toolchain (a user's crate that depends on `cpu`) works too.
//! Without rustup, the active toolchain is used if it is a nightly with `rust-src`.
//!
//! Prebuilt PTX: [`PtxBuild::record_prebuilt`] keeps the default architectures' PTX in `cpu/ptx/`
//! with the SHA-256 of its inputs ([`PtxBuild::inputs_digest`]); [`PtxBuild::prebuilt`] hands it
//! back only while that digest still matches, which is how a dependent crate builds with no GPU
//! build at all.
//!
//! How (see the repository's README, "How the PTX is made"):
//! `cargo rustc -p gpu --release --crate-type cdylib --target nvptx64-nvidia-cuda
//! -Zbuild-std=core -- --emit=asm -C linker=true` with `-C target-cpu=sm_XX` in the rustflags
//! and the release profile forced to `lto = "fat"`, `codegen-units = 1`, `panic = "abort"`.
//! Fat LTO merges the kernels and `core` into one module; `--emit=asm` writes it as
//! `deps/gpu.s`, which is the PTX. The link step has nothing left to do (`-C linker=true`).
//! The prebuilt `rust-std` of the target and the `llvm-bitcode-linker` are not needed.
//!
//! Launch bounds: rustc has no `__launch_bounds__`, so a kernel declares them with the `gpu`
//! crate's `launch_bounds!(max_threads, min_blocks)`, which leaves the assembler comment
//! `// launch_bounds(max_threads, min_blocks)` in the kernel's body, and
//! [`apply_launch_bounds`] turns it into the entry's `.maxntid` and `.minnctapersm`
//! directives, which `ptxas` (or the driver's JIT) uses to cap registers per thread.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

/// The target triple of rustc's PTX backend.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// What the PTX is made from, relative to the workspace root: [`PtxBuild::inputs`] and
/// [`PtxBuild::inputs_digest`] read these (for the manifest and the lock, only the parts that
/// reach the GPU build).
pub const INPUTS: &[&str] = &[
    "gpu/src",
    "gpu/std",
    "gpu/macros",
    "gpu/Cargo.toml",
    "rust-toolchain.toml",
    "xtask/builder/src",
    "Cargo.toml",
    "Cargo.lock",
];

/// Where the prebuilt PTX of [`DEFAULT_ARCHS`] lives, relative to the workspace root.
pub const PREBUILT_DIR: &str = "cpu/ptx";

/// The file beside the prebuilt PTX that records the digest of the inputs it was built from.
pub const DIGEST_FILE: &str = "inputs.sha256";

/// Architectures built when none is asked for: `sm_70` (portable: the driver JIT-compiles it
/// for Volta and every newer GPU) and `sm_90` (Hopper, H100/H200).
pub const DEFAULT_ARCHS: [Arch; 2] = [Arch(70), Arch(90)];

/// A GPU architecture, `sm_XX`: compute capability `X.X` as one number (`sm_90` is 90).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch(pub u32);

impl Arch {
    /// The PTX file name this builder writes for the architecture: `gpu_sm_XX.ptx`.
    pub fn ptx_file_name(self) -> String {
        format!("gpu_{self}.ptx")
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}", self.0)
    }
}

impl FromStr for Arch {
    type Err = BuildError;

    /// Parses `sm_70`, `70`, or `compute_70`; architectures below `sm_70` are refused (the
    /// kernels use `*.sync` warp intrinsics and `bar.warp.sync`, Volta and newer).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits = s.trim_start_matches("sm_").trim_start_matches("compute_");
        match digits.parse::<u32>() {
            Ok(n) if (70..=199).contains(&n) => Ok(Arch(n)),
            _ => Err(BuildError::InvalidArch(s.to_string())),
        }
    }
}

/// What can go wrong while building PTX; each message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The architecture string is not `sm_XX` with XX >= 70.
    #[error(
        "invalid GPU architecture `{0}`: expected sm_XX with XX >= 70 (e.g. sm_70, sm_80, sm_90)"
    )]
    InvalidArch(String),
    /// A program (cargo or rustc) could not be started.
    #[error("could not run `{program}`: {source}; is rustup installed and on PATH?")]
    Spawn {
        /// The program that failed to start.
        program: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The pinned nightly is needed, rustup is not on PATH, and the active toolchain is not it.
    #[error(
        "building the GPU kernels needs the Rust toolchain `{channel}` (pinned in rust-toolchain.toml, with rust-src), \
         which this builder installs through rustup, but rustup is not on PATH: install rustup from https://rustup.rs"
    )]
    NoRustup {
        /// The pinned channel.
        channel: String,
    },
    /// `rustup toolchain install` or `rustup component add` failed.
    #[error(
        "could not install the Rust toolchain `{channel}` through rustup ({status}):\n{stderr}"
    )]
    Install {
        /// The pinned channel.
        channel: String,
        /// rustup's exit status.
        status: std::process::ExitStatus,
        /// The end of rustup's error output.
        stderr: String,
    },
    /// `rust-toolchain.toml` is missing or names no `channel`.
    #[error("{path}: no `channel = \"...\"` line; the PTX build needs the pinned toolchain")]
    NoChannel {
        /// The file read.
        path: PathBuf,
    },
    /// The active toolchain has no `rust-src` component, needed to build `core` for the GPU.
    #[error(
        "the Rust toolchain at {sysroot} has no `rust-src` component, which is needed to build `core` for {TARGET}; \
         run `rustup component add rust-src` in this repository (rust-toolchain.toml pins the toolchain)"
    )]
    MissingRustSrc {
        /// The toolchain's sysroot.
        sysroot: String,
    },
    /// The active toolchain is not a nightly (the build needs `-Zbuild-std` and nightly features).
    #[error(
        "the active Rust toolchain is not a nightly (`{version}`); the GPU build needs the nightly pinned in \
         rust-toolchain.toml: run `rustup toolchain install` in this repository"
    )]
    NotNightly {
        /// `rustc --version` of the active toolchain.
        version: String,
    },
    /// Cargo failed to compile the `gpu` crate.
    #[error("building the gpu crate for {arch} failed ({status}):\n{stderr}")]
    Compile {
        /// The architecture being built.
        arch: Arch,
        /// Cargo's exit status.
        status: std::process::ExitStatus,
        /// The end of cargo's error output.
        stderr: String,
    },
    /// The build succeeded but left no PTX where expected.
    #[error("the build for {arch} wrote no PTX at {path}")]
    MissingOutput {
        /// The architecture being built.
        arch: Arch,
        /// Where the PTX was expected.
        path: PathBuf,
    },
    /// The PTX is not usable: wrong target or an unresolved external function.
    #[error("the PTX for {arch} is not usable: {reason}")]
    InvalidPtx {
        /// The architecture being built.
        arch: Arch,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// One PTX build: which workspace, which architectures, where to put the results.
#[derive(Clone, Debug)]
pub struct PtxBuild {
    /// The workspace root holding `gpu/` and `rust-toolchain.toml`.
    pub workspace_root: PathBuf,
    /// Cargo's target directory for the GPU build; must differ from the outer build's (cargo
    /// locks its target directory for the whole build). One subdirectory per architecture.
    pub target_dir: PathBuf,
    /// Where the PTX files are written (`gpu_sm_XX.ptx`).
    pub out_dir: PathBuf,
    /// Architectures to build, in order.
    pub archs: Vec<Arch>,
}

impl PtxBuild {
    /// A build of [`DEFAULT_ARCHS`] for the workspace at `workspace_root`, with the GPU build's
    /// target directory at `target/ptx-build` and output into `out_dir`.
    pub fn new(workspace_root: impl Into<PathBuf>, out_dir: impl Into<PathBuf>) -> Self {
        let workspace_root = workspace_root.into();
        Self {
            target_dir: workspace_root.join("target").join("ptx-build"),
            workspace_root,
            out_dir: out_dir.into(),
            archs: DEFAULT_ARCHS.to_vec(),
        }
    }

    /// Files and folders whose change requires a rebuild (for `cargo:rerun-if-changed`).
    pub fn inputs(&self) -> Vec<PathBuf> {
        INPUTS.iter().map(|p| self.workspace_root.join(p)).collect()
    }

    /// SHA-256 (hex) of everything the PTX of [`DEFAULT_ARCHS`] is made from: every file under
    /// the [`INPUTS`] (hidden files skipped), the `[profile*]` sections of the workspace's
    /// `Cargo.toml`, and the `Cargo.lock` entries of the `gpu` crate's dependency closure.
    /// [`prebuilt`](Self::prebuilt) compares it with the one recorded beside the prebuilt PTX.
    ///
    /// Each file enters as its path relative to the workspace root (`/`-separated), its length
    /// and its bytes, in path order, so the digest is the same on every machine and checkout.
    pub fn inputs_digest(&self) -> Result<String, BuildError> {
        use sha2::{Digest, Sha256};
        let root = &self.workspace_root;
        let mut files = Vec::new();
        for input in INPUTS {
            if matches!(*input, "Cargo.lock" | "Cargo.toml") {
                continue;
            }
            collect_files(&root.join(input), &mut files)?;
        }
        let mut entries: Vec<(String, Vec<u8>)> = files
            .into_iter()
            .map(|path| {
                let bytes = std::fs::read(&path).map_err(|source| BuildError::Io {
                    path: path.clone(),
                    source,
                })?;
                let relative = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                Ok((relative, bytes))
            })
            .collect::<Result<_, BuildError>>()?;
        let read = |name: &str| {
            std::fs::read_to_string(root.join(name)).map_err(|source| BuildError::Io {
                path: root.join(name),
                source,
            })
        };
        entries.push((
            "Cargo.toml [profile*]".into(),
            profile_sections(&read("Cargo.toml")?).into_bytes(),
        ));
        entries.push((
            "Cargo.lock (gpu's closure)".into(),
            lock_closure(&read("Cargo.lock")?, "gpu").into_bytes(),
        ));
        entries.sort();
        let mut hash = Sha256::new();
        for arch in DEFAULT_ARCHS {
            hash.update(arch.to_string().as_bytes());
            hash.update([0]);
        }
        for (name, bytes) in &entries {
            hash.update(name.as_bytes());
            hash.update([0]);
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        }
        Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The folder of the prebuilt PTX: `cpu/ptx` in the workspace.
    pub fn prebuilt_dir(&self) -> PathBuf {
        self.workspace_root.join(PREBUILT_DIR)
    }

    /// The prebuilt PTX files (`cpu/ptx/gpu_sm_XX.ptx`, in `archs` order) if they were made
    /// from exactly today's inputs: `archs` is [`DEFAULT_ARCHS`] and the digest recorded in
    /// `cpu/ptx/inputs.sha256` equals [`inputs_digest`](Self::inputs_digest). `None` when a
    /// fresh build is needed.
    pub fn prebuilt(&self) -> Result<Option<Vec<PathBuf>>, BuildError> {
        if self.archs != DEFAULT_ARCHS {
            return Ok(None);
        }
        let dir = self.prebuilt_dir();
        let Ok(recorded) = std::fs::read_to_string(dir.join(DIGEST_FILE)) else {
            return Ok(None);
        };
        let recorded = recorded
            .lines()
            .find(|l| !l.starts_with('#') && !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        let paths: Vec<PathBuf> = self
            .archs
            .iter()
            .map(|a| dir.join(a.ptx_file_name()))
            .collect();
        if recorded != self.inputs_digest()? || !paths.iter().all(|p| p.is_file()) {
            return Ok(None);
        }
        Ok(Some(paths))
    }

    /// Writes the PTX of `built` (the output of [`build`](Self::build) for [`DEFAULT_ARCHS`])
    /// and today's [`inputs_digest`](Self::inputs_digest) into [`prebuilt_dir`](Self::prebuilt_dir).
    pub fn record_prebuilt(&self, built: &[PathBuf]) -> Result<(), BuildError> {
        let dir = self.prebuilt_dir();
        std::fs::create_dir_all(&dir).map_err(|source| BuildError::Io {
            path: dir.clone(),
            source,
        })?;
        for (arch, path) in self.archs.iter().zip(built) {
            let dest = dir.join(arch.ptx_file_name());
            std::fs::copy(path, &dest).map_err(|source| BuildError::Io { path: dest, source })?;
        }
        let digest = format!(
            "# SHA-256 of the inputs this PTX was built from (ptx_builder::PtxBuild::inputs_digest),\n\
             # written by `cargo xtask build-ptx --prebuilt`.\n{}\n",
            self.inputs_digest()?
        );
        let dest = dir.join(DIGEST_FILE);
        std::fs::write(&dest, digest).map_err(|source| BuildError::Io { path: dest, source })
    }

    /// Builds every architecture and returns the PTX paths written, in `archs` order.
    ///
    /// A file whose content did not change is left untouched (its timestamp too). The `gpu`
    /// crate is compiled by the toolchain pinned in `rust-toolchain.toml`, through rustup
    /// (installed with `rust-src` when missing), whatever toolchain runs this builder.
    pub fn build(&self) -> Result<Vec<PathBuf>, BuildError> {
        let toolchain = Toolchain::pinned(&self.workspace_root)?;
        std::fs::create_dir_all(&self.out_dir).map_err(|source| BuildError::Io {
            path: self.out_dir.clone(),
            source,
        })?;
        self.archs
            .iter()
            .map(|&arch| self.build_arch(&toolchain, arch))
            .collect()
    }

    fn build_arch(&self, toolchain: &Toolchain, arch: Arch) -> Result<PathBuf, BuildError> {
        let target_dir = self.target_dir.join(arch.to_string());
        let mut cmd = toolchain.cargo();
        cmd.current_dir(&self.workspace_root)
            .args([
                "rustc",
                "--locked",
                "--package",
                "gpu",
                "--lib",
                "--release",
            ])
            .args([
                "--crate-type",
                "cdylib",
                "--target",
                TARGET,
                "-Zbuild-std=core",
            ])
            .arg("--target-dir")
            .arg(&target_dir)
            .args(["--", "--emit=asm", "-C", "linker=true"])
            // In the rustflags (not after `--`) so that `core` is built for the same chip.
            .env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={arch}"))
            .env("CARGO_PROFILE_RELEASE_LTO", "fat")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
            .env("CARGO_PROFILE_RELEASE_PANIC", "abort")
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "false");
        let output = cmd.output().map_err(|source| BuildError::Spawn {
            program: toolchain.describe(),
            source,
        })?;
        if !output.status.success() {
            return Err(BuildError::Compile {
                arch,
                status: output.status,
                stderr: tail(&String::from_utf8_lossy(&output.stderr), 60),
            });
        }
        let produced = target_dir
            .join(TARGET)
            .join("release")
            .join("deps")
            .join("gpu.s");
        let ptx = std::fs::read_to_string(&produced).map_err(|_| BuildError::MissingOutput {
            arch,
            path: produced.clone(),
        })?;
        validate_ptx(arch, &ptx)?;
        let ptx =
            apply_launch_bounds(&ptx).map_err(|reason| BuildError::InvalidPtx { arch, reason })?;
        let dest = self.out_dir.join(arch.ptx_file_name());
        if std::fs::read_to_string(&dest).ok().as_deref() != Some(ptx.as_str()) {
            std::fs::write(&dest, &ptx).map_err(|source| BuildError::Io {
                path: dest.clone(),
                source,
            })?;
        }
        Ok(dest)
    }
}

/// Checks that PTX text targets `arch` and calls no function it does not define.
pub fn validate_ptx(arch: Arch, ptx: &str) -> Result<(), BuildError> {
    let target = format!(".target {arch}");
    if !ptx.lines().any(|l| l.trim_start().starts_with(&target)) {
        return Err(BuildError::InvalidPtx {
            arch,
            reason: format!("no `{target}` directive"),
        });
    }
    if let Some(line) = ptx.lines().find(|l| l.contains(".extern .func")) {
        return Err(BuildError::InvalidPtx {
            arch,
            reason: format!("unresolved external function: `{}`", line.trim()),
        });
    }
    Ok(())
}

/// The assembler comment `launch_bounds!` leaves in a kernel's body, before its arguments.
pub const LAUNCH_BOUNDS_MARKER: &str = "// launch_bounds(";

/// Launch bounds one kernel declares: CUDA's `__launch_bounds__(max_threads, min_blocks)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// Most threads per block the kernel is launched with (PTX `.maxntid`).
    pub max_threads: u32,
    /// Fewest resident blocks per SM the registers must allow (PTX `.minnctapersm`).
    pub min_blocks: u32,
}

/// Parses the marker line `// launch_bounds(256, 3)` (surrounding whitespace allowed);
/// `None` if the line is not a marker, an error if it is one with bad arguments.
fn parse_marker(line: &str) -> Option<Result<LaunchBounds, String>> {
    let rest = line.trim().strip_prefix(LAUNCH_BOUNDS_MARKER)?;
    let parsed = rest.strip_suffix(')').and_then(|args| {
        let (a, b) = args.split_once(',')?;
        Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?))
    });
    Some(match parsed {
        Some((max_threads @ 1..=1024, min_blocks @ 1..=64)) => Ok(LaunchBounds {
            max_threads,
            min_blocks,
        }),
        _ => Err(format!(
            "bad launch bounds `{}`: expected `{LAUNCH_BOUNDS_MARKER}max_threads, min_blocks)` with 1 <= max_threads <= 1024 and 1 <= min_blocks <= 64",
            line.trim()
        )),
    })
}

/// Moves each kernel's `launch_bounds!` marker into `.maxntid max_threads, 1, 1` and
/// `.minnctapersm min_blocks` after its parameter list. Kernels without a marker are left as
/// they are.
///
/// # Errors
/// A message naming the kernel if a marker is malformed, if one kernel carries two different
/// bounds, if a marker sits outside an `.entry`, or if the entry already has performance
/// directives.
pub fn apply_launch_bounds(ptx: &str) -> Result<String, String> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut out = String::with_capacity(ptx.len() + 1024);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let is_entry = line.starts_with(".visible .entry ") || line.starts_with(".entry ");
        if !is_entry {
            if let Some(marker) = parse_marker(line) {
                marker?;
                return Err(format!(
                    "launch bounds outside a kernel (line {}): `launch_bounds!` belongs in an `extern \"ptx-kernel\"` function",
                    i + 1
                ));
            }
            out.push_str(line);
            out.push('\n');
            i += 1;
            continue;
        }
        let name = entry_names(line)
            .first()
            .copied()
            .unwrap_or("?")
            .to_string();
        // The parameter list ends at the first line that is `)`; the body is from the `{`
        // after it to the next `}` in column 0.
        let close = (i..lines.len())
            .find(|&j| lines[j].trim_end().ends_with(')'))
            .ok_or_else(|| format!("kernel `{name}`: no end of its parameter list"))?;
        let end = (close..lines.len())
            .find(|&j| lines[j].starts_with('}'))
            .ok_or_else(|| format!("kernel `{name}`: no end of its body"))?;
        let mut bounds: Option<LaunchBounds> = None;
        for body_line in &lines[close + 1..end] {
            if let Some(marker) = parse_marker(body_line) {
                let marker = marker.map_err(|e| format!("kernel `{name}`: {e}"))?;
                if bounds.is_some_and(|b| b != marker) {
                    return Err(format!(
                        "kernel `{name}` declares two launch bounds: {bounds:?} and {marker:?}"
                    ));
                }
                bounds = Some(marker);
            }
        }
        for header_line in &lines[i..=close] {
            out.push_str(header_line);
            out.push('\n');
        }
        if let Some(b) = bounds {
            let directive = lines[close + 1..end]
                .iter()
                .take_while(|l| !l.starts_with('{'))
                .find(|l| {
                    l.trim_start().starts_with(".max")
                        || l.trim_start().starts_with(".min")
                        || l.trim_start().starts_with(".reqntid")
                });
            if let Some(d) = directive {
                return Err(format!(
                    "kernel `{name}` has launch bounds and already carries `{}`",
                    d.trim()
                ));
            }
            out.push_str(&format!(
                ".maxntid {}, 1, 1\n.minnctapersm {}\n",
                b.max_threads, b.min_blocks
            ));
        }
        for body_line in &lines[close + 1..=end] {
            out.push_str(body_line);
            out.push('\n');
        }
        i = end + 1;
    }
    Ok(out)
}

/// Names of the kernels (`.entry` directives) in PTX text, in order of appearance.
pub fn entry_names(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| {
            let rest = l
                .trim_start()
                .strip_prefix(".visible .entry ")
                .or_else(|| l.trim_start().strip_prefix(".entry "))?;
            Some(rest.split(['(', ' ']).next().unwrap_or(rest).trim())
        })
        .collect()
}

/// One `.param` of a PTX `.entry`: its name and size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryParam {
    /// The parameter's PTX name (`<entry>_param_<i>`).
    pub name: String,
    /// Size in bytes: the width of a scalar type (`.u64` 8, `.f32` 4, ...), or `N` of a
    /// `.b8 name[N]` byte array (a struct passed by value).
    pub bytes: usize,
}

/// The `.param` list of every `.entry` in `ptx`, in order: `(entry name, parameters)`.
///
/// # Errors
/// A message naming the entry if a parameter line cannot be read.
pub fn entry_params(ptx: &str) -> Result<Vec<(&str, Vec<EntryParam>)>, String> {
    let mut entries = Vec::new();
    let mut lines = ptx.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let Some(rest) = line
            .strip_prefix(".visible .entry ")
            .or_else(|| line.strip_prefix(".entry "))
        else {
            continue;
        };
        let name = rest.split(['(', ' ']).next().unwrap_or(rest).trim();
        let mut params = Vec::new();
        if !rest.contains(')') {
            for param in lines.by_ref() {
                let param = param.trim().trim_end_matches(',');
                if param.starts_with(')') {
                    break;
                }
                params.push(parse_param(param).ok_or_else(|| {
                    format!(".entry {name}: cannot read the parameter `{param}`")
                })?);
            }
        }
        entries.push((name, params));
    }
    Ok(entries)
}

/// One `.param` line: `.param .u64 .ptr .align 1 NAME` or `.param .align 4 .b8 NAME[8]`.
fn parse_param(line: &str) -> Option<EntryParam> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.first() != Some(&".param") {
        return None;
    }
    let last = *tokens.last()?;
    if let Some((name, count)) = last.split_once('[') {
        let count: usize = count.strip_suffix(']')?.parse().ok()?;
        let element = tokens.iter().find_map(|t| scalar_bytes(t))?;
        return Some(EntryParam {
            name: name.to_string(),
            bytes: element * count,
        });
    }
    Some(EntryParam {
        name: last.to_string(),
        bytes: scalar_bytes(tokens.get(1)?)?,
    })
}

/// The width in bytes of a PTX fundamental type (`.u64`, `.f32`, `.b8`, ...).
fn scalar_bytes(token: &str) -> Option<usize> {
    let bits = token
        .strip_prefix(".u")
        .or_else(|| token.strip_prefix(".s"))
        .or_else(|| token.strip_prefix(".b"))
        .or_else(|| token.strip_prefix(".f"))?;
    match bits {
        "8" => Some(1),
        "16" => Some(2),
        "32" => Some(4),
        "64" => Some(8),
        _ => None,
    }
}

/// How the nested cargo is started: through rustup with the pinned channel, or (no rustup,
/// but the active toolchain is a nightly with `rust-src`) the active cargo itself.
enum Toolchain {
    Rustup { channel: String },
    Active,
}

impl Toolchain {
    /// The toolchain pinned in `workspace_root/rust-toolchain.toml`, installed through rustup
    /// (with `rust-src`) if it is not yet.
    fn pinned(workspace_root: &Path) -> Result<Self, BuildError> {
        let file = workspace_root.join("rust-toolchain.toml");
        let channel = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    let value = l.trim().strip_prefix("channel")?.trim().strip_prefix('=')?;
                    Some(value.trim().trim_matches('"').to_string())
                })
            })
            .filter(|c| !c.is_empty())
            .ok_or(BuildError::NoChannel { path: file })?;
        let rustup = |args: &[&str]| {
            let mut cmd = Command::new("rustup");
            clean_environment(&mut cmd);
            cmd.current_dir(workspace_root).args(args).output()
        };
        let Ok(list) = rustup(&["toolchain", "list"]) else {
            // No rustup: the active toolchain will do if it is a nightly with rust-src.
            return match check_active_toolchain(workspace_root) {
                Ok(()) => Ok(Toolchain::Active),
                Err(_) => Err(BuildError::NoRustup { channel }),
            };
        };
        let installed = String::from_utf8_lossy(&list.stdout).lines().any(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|t| t == channel || t.starts_with(&format!("{channel}-")))
        });
        let install = |args: &[&str]| -> Result<(), BuildError> {
            let out = rustup(args).map_err(|source| BuildError::Spawn {
                program: "rustup".into(),
                source,
            })?;
            if out.status.success() {
                Ok(())
            } else {
                Err(BuildError::Install {
                    channel: channel.clone(),
                    status: out.status,
                    stderr: tail(&String::from_utf8_lossy(&out.stderr), 20),
                })
            }
        };
        if !installed {
            install(&[
                "toolchain",
                "install",
                &channel,
                "--profile",
                "minimal",
                "--component",
                "rust-src",
            ])?;
        }
        let sysroot = rustup(&["run", &channel, "rustc", "--print", "sysroot"])
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        if !has_rust_src(&sysroot) {
            install(&["component", "add", "rust-src", "--toolchain", &channel])?;
        }
        Ok(Toolchain::Rustup { channel })
    }

    /// `cargo` of this toolchain, with the outer build's environment removed.
    fn cargo(&self) -> Command {
        let mut cmd = match self {
            Toolchain::Rustup { channel } => {
                let mut cmd = Command::new("rustup");
                cmd.args(["run", channel, "cargo"]);
                cmd
            }
            Toolchain::Active => {
                Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
            }
        };
        clean_environment(&mut cmd);
        if let Toolchain::Active = self {
            // The active toolchain is the one wanted: keep the outer build's compiler.
            if let Some(rustc) = std::env::var_os("RUSTC") {
                cmd.env("RUSTC", rustc);
            }
        }
        cmd
    }

    fn describe(&self) -> String {
        match self {
            Toolchain::Rustup { channel } => format!("rustup run {channel} cargo"),
            Toolchain::Active => "cargo".into(),
        }
    }
}

/// Removes what an outer cargo (running a build script, clippy or a test) or rustup sets for
/// itself, so the nested build is configured by this builder alone and runs the pinned
/// toolchain even when the outer build runs another (a stable one, in a user's crate).
/// `CARGO_HOME` and `RUSTUP_HOME` stay: they name the same registry and toolchains.
fn clean_environment(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let outer = (key.contains("CARGO") && key != "CARGO_HOME")
            || matches!(
                key,
                "RUSTC"
                    | "RUSTDOC"
                    | "RUSTUP_TOOLCHAIN"
                    | "RUSTFLAGS"
                    | "RUSTDOCFLAGS"
                    | "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "MAKEFLAGS"
                    | "MFLAGS"
            );
        if outer {
            cmd.env_remove(key);
        }
    }
}

fn has_rust_src(sysroot: &str) -> bool {
    !sysroot.is_empty()
        && Path::new(sysroot)
            .join("lib/rustlib/src/rust/library/core/Cargo.toml")
            .is_file()
}

/// Without rustup: the active toolchain (`$RUSTC`) must be a nightly with `rust-src`.
fn check_active_toolchain(workspace_root: &Path) -> Result<(), BuildError> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let run = |args: &[&str]| -> Result<String, BuildError> {
        let mut cmd = Command::new(&rustc);
        clean_environment(&mut cmd);
        let out = cmd
            .current_dir(workspace_root)
            .args(args)
            .output()
            .map_err(|source| BuildError::Spawn {
                program: rustc.to_string_lossy().into_owned(),
                source,
            })?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let version = run(&["--version"])?;
    if !version.contains("nightly") {
        return Err(BuildError::NotNightly { version });
    }
    let sysroot = run(&["--print", "sysroot"])?;
    if !has_rust_src(&sysroot) {
        return Err(BuildError::MissingRustSrc { sysroot });
    }
    Ok(())
}

/// Every file under `path` (or `path` itself; nothing if it does not exist), hidden files and
/// folders skipped.
fn collect_files(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), BuildError> {
    let io = |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    };
    if !path.exists() {
        return Ok(());
    }
    if path.is_file() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(path).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        collect_files(&entry.path(), files)?;
    }
    Ok(())
}

/// The `[profile...]` sections of a `Cargo.toml`, as written.
fn profile_sections(manifest: &str) -> String {
    let mut inside = false;
    let mut out = String::new();
    for line in manifest.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            inside = trimmed.starts_with("[profile");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The `[[package]]` entries of a `Cargo.lock` reachable from the package `root` through their
/// `dependencies` lists (every version of a name, to stay on the safe side), in lock order.
fn lock_closure(lock: &str, root: &str) -> String {
    let blocks: Vec<&str> = lock.split("[[package]]").skip(1).map(str::trim).collect();
    let name_of = |block: &str| -> String {
        block
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .unwrap_or("")
            .trim_matches('"')
            .to_string()
    };
    let dependencies_of = |block: &str| -> Vec<String> {
        let Some(start) = block.find("dependencies = [") else {
            return Vec::new();
        };
        let list = &block[start + "dependencies = [".len()..];
        let list = &list[..list.find(']').unwrap_or(list.len())];
        list.split(',')
            .filter_map(|d| {
                d.trim()
                    .trim_matches('"')
                    .split(' ')
                    .next()
                    .map(str::to_string)
            })
            .filter(|d| !d.is_empty())
            .collect()
    };
    let mut wanted = std::collections::BTreeSet::from([root.to_string()]);
    let mut queue = vec![root.to_string()];
    while let Some(name) = queue.pop() {
        for block in blocks.iter().filter(|b| name_of(b) == name) {
            for dep in dependencies_of(block) {
                if wanted.insert(dep.clone()) {
                    queue.push(dep);
                }
            }
        }
    }
    blocks
        .iter()
        .filter(|b| wanted.contains(&name_of(b)))
        .map(|b| format!("{b}\n"))
        .collect()
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_parses_and_rejects() {
        assert_eq!("sm_90".parse::<Arch>().unwrap(), Arch(90));
        assert_eq!("70".parse::<Arch>().unwrap(), Arch(70));
        assert_eq!("compute_80".parse::<Arch>().unwrap(), Arch(80));
        assert!("sm_61".parse::<Arch>().is_err());
        assert!("sm_x".parse::<Arch>().is_err());
        assert_eq!(Arch(90).ptx_file_name(), "gpu_sm_90.ptx");
    }

    #[test]
    fn launch_bounds_become_directives() {
        let ptx = ".target sm_90\n.visible .entry k(\n\t.param .u64 a\n)\n{\n\t// begin inline asm\n\t// launch_bounds(256, 3)\n\t// end inline asm\n\tret;\n}\n.visible .entry plain(\n)\n{\n\tret;\n}\n";
        let out = apply_launch_bounds(ptx).unwrap();
        assert!(
            out.contains(")\n.maxntid 256, 1, 1\n.minnctapersm 3\n{\n"),
            "{out}"
        );
        assert_eq!(out.matches(".maxntid").count(), 1, "{out}");
        // Everything else is kept, line for line.
        assert_eq!(out.lines().count(), ptx.lines().count() + 2);
        // Applying twice is refused rather than doubled.
        assert!(
            apply_launch_bounds(&out)
                .unwrap_err()
                .contains("already carries")
        );
    }

    #[test]
    fn bad_launch_bounds_are_refused() {
        let with = |marker: &str| format!(".visible .entry k(\n)\n{{\n\t{marker}\n}}\n");
        for bad in [
            "// launch_bounds(0, 3)",
            "// launch_bounds(256)",
            "// launch_bounds(2048, 1)",
            "// launch_bounds(256, x)",
        ] {
            let err = apply_launch_bounds(&with(bad)).unwrap_err();
            assert!(
                err.contains("kernel `k`") && err.contains("bad launch bounds"),
                "{err}"
            );
        }
        let two =
            ".visible .entry k(\n)\n{\n// launch_bounds(256, 3)\n// launch_bounds(256, 2)\n}\n";
        assert!(
            apply_launch_bounds(two)
                .unwrap_err()
                .contains("two launch bounds")
        );
        let outside = ".func f(\n)\n{\n// launch_bounds(256, 3)\n}\n";
        assert!(
            apply_launch_bounds(outside)
                .unwrap_err()
                .contains("outside a kernel")
        );
    }

    #[test]
    fn lock_closure_follows_dependencies_only() {
        let lock = "version = 4\n\n[[package]]\nname = \"gpu\"\nversion = \"0.1.0\"\ndependencies = [\n \"gpu_std\",\n]\n\n\
                    [[package]]\nname = \"gpu_std\"\nversion = \"0.1.0\"\ndependencies = [\n \"syn 2.0.1\",\n]\n\n\
                    [[package]]\nname = \"syn\"\nversion = \"2.0.1\"\n\n\
                    [[package]]\nname = \"demo\"\nversion = \"0.1.0\"\ndependencies = [\n \"gpu\",\n]\n";
        let closure = lock_closure(lock, "gpu");
        for name in ["\"gpu\"", "\"gpu_std\"", "\"syn\""] {
            assert!(closure.contains(&format!("name = {name}")), "{closure}");
        }
        assert!(!closure.contains("name = \"demo\""), "{closure}");
    }

    #[test]
    fn profile_sections_only() {
        let manifest = "[workspace]\nmembers = []\n[profile.release]\nlto = true\n[profile.dev.package.x]\nopt-level = 1\n[workspace.dependencies]\nrand = \"1\"\n";
        assert_eq!(
            profile_sections(manifest),
            "[profile.release]\nlto = true\n[profile.dev.package.x]\nopt-level = 1\n"
        );
    }

    #[test]
    fn the_digest_follows_the_inputs() {
        let root = std::env::temp_dir().join(format!("ptx-digest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("gpu/src")).unwrap();
        std::fs::write(root.join("gpu/src/lib.rs"), "fn a() {}\n").unwrap();
        std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
        std::fs::write(root.join("Cargo.lock"), "version = 4\n").unwrap();
        let build = PtxBuild::new(&root, root.join("out"));
        let first = build.inputs_digest().unwrap();
        assert_eq!(first, build.inputs_digest().unwrap());
        // An edit, a hidden file and a dependency of another crate: only the edit counts.
        std::fs::write(root.join("gpu/src/.lib.rs.swp"), "x").unwrap();
        std::fs::write(root.join("Cargo.toml"), "[workspace]\nmembers = [\"x\"]\n").unwrap();
        assert_eq!(first, build.inputs_digest().unwrap());
        std::fs::write(root.join("gpu/src/lib.rs"), "fn b() {}\n").unwrap();
        let edited = build.inputs_digest().unwrap();
        assert_ne!(first, edited);
        // Nothing recorded: no prebuilt PTX.
        assert!(build.prebuilt().unwrap().is_none());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn entries_and_validation() {
        let ptx = ".version 7.8\n.target sm_90\n.address_size 64\n\n.visible .entry vector_add(\n\t.param .u64 a\n)\n{\n}\n.entry other( )\n";
        assert_eq!(entry_names(ptx), vec!["vector_add", "other"]);
        assert!(validate_ptx(Arch(90), ptx).is_ok());
        assert!(validate_ptx(Arch(70), ptx).is_err());
        let bad = format!("{ptx}.extern .func foo();\n");
        assert!(validate_ptx(Arch(90), &bad).is_err());
    }
}
