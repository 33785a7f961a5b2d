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

mod digest;
mod error;
mod ptx;
mod toolchain;

pub use error::BuildError;
pub use ptx::{
    EntryParam, LAUNCH_BOUNDS_MARKER, LaunchBounds, apply_launch_bounds, entry_names, entry_params,
    validate_ptx,
};

use digest::{collect_files, lock_closure, profile_sections};
use toolchain::Toolchain;

use std::fmt;
use std::path::PathBuf;
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

pub(crate) fn tail(text: &str, lines: usize) -> String {
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
