//! [`Builder`]: the PTX build of any kernel crate, from a build script or a tool.

use std::path::{Path, PathBuf};

use crate::digest::{collect_files, profile_sections};
use crate::images::{BuiltModule, assemble, find_ptxas, read_prebuilt, split_into, table_source};
use crate::options::KernelOptions;
use crate::toolchain::Toolchain;
use crate::{
    Arch, BuildError, DEFAULT_ARCHS, DIGEST_FILE, TARGET, apply_launch_bounds, validate_ptx,
};

/// The PTX build of one kernel crate (a `no_std` crate of `#[kernel]` functions, built for
/// `nvptx64-nvidia-cuda` by the nightly its `rust-toolchain.toml` pins), as rust-cuda's
/// `cuda_builder::CudaBuilder` does it for `rustc_codegen_nvvm`, on rustc's own NVPTX backend.
///
/// From a build script:
///
/// ```no_run
/// let built = ptx_builder::Builder::new("kernels") // relative to this crate's manifest
///     .prebuilt("ptx") // use ptx/ when its digest is today's, else build afresh
///     .build()
///     .unwrap_or_else(|e| panic!("{e}"));
/// for (arch, path) in &built.ptx {
///     println!("cargo:rustc-env=KERNELS_PTX_{}={}", arch.0, path.display());
/// }
/// ```
///
/// [`build`](Self::build) prints the `cargo:rerun-if-changed` lines of every input when it runs
/// in a build script (`OUT_DIR` set): the kernel crate, the local crates it depends on, the
/// toolchain file and the prebuilt folder.
#[derive(Clone, Debug)]
pub struct Builder {
    crate_dir: PathBuf,
    archs: Vec<Arch>,
    out_dir: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    prebuilt: Option<PathBuf>,
    locked: bool,
    sass: Vec<Arch>,
    ptxas: Option<PathBuf>,
    options: KernelOptions,
}

/// What a [`Builder`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    /// The kernel crate's library name (`my-kernels` is `my_kernels`).
    pub lib_name: String,
    /// The whole crate's PTX, one file per architecture in the order asked for (a fresh build's;
    /// empty when the modules are the prebuilt ones).
    pub ptx: Vec<(Arch, PathBuf)>,
    /// The crate's PTX modules, one per top-level Rust module of its kernels
    /// ([`split_modules`](crate::split_modules)), sorted by name, each with its images.
    pub modules: Vec<BuiltModule>,
    /// The `.entry` names of every module (every kernel), module by module.
    pub entries: Vec<String>,
    /// Whether the modules are the prebuilt ones ([`Builder::prebuilt`]) rather than a fresh
    /// build.
    pub prebuilt: bool,
}

impl Built {
    /// Writes `path`, a Rust expression of type `gpu_host::KernelTable`: one
    /// `gpu_host::ModuleTable` per module with its entries' signatures, its host-visible
    /// globals and its images, each an `include_bytes!` of its file. A build script writes it
    /// into `OUT_DIR` and the crate embeds it with
    /// `static KERNELS: gpu_host::KernelTable = include!(concat!(env!("OUT_DIR"), "/kernels.rs"));`;
    /// `gpu_host::Module::from_table(&device, &KERNELS)` then loads each module on first use.
    /// The file is rewritten only when its text changes, so an unchanged build rebuilds nothing.
    ///
    /// # Errors
    /// [`BuildError::Io`] if the file cannot be written.
    pub fn write_table(&self, path: impl AsRef<Path>) -> Result<(), BuildError> {
        let text = table_source(&self.lib_name, &self.modules, None)?;
        crate::images::write_if_changed(path.as_ref(), text.as_bytes())
    }

    /// As [`write_table`](Self::write_table), with the images copied into the folder `dir`
    /// instead of embedded: the table names each file with its length and hash, and
    /// `gpu_host` reads it at run time from `$GPU_HOST_KERNEL_DIR`, else from `kernels/`
    /// beside the executable's folder. For many executables that share one copy (a bundle).
    ///
    /// # Errors
    /// [`BuildError::Io`] if a file cannot be read or written.
    pub fn write_table_beside(
        &self,
        path: impl AsRef<Path>,
        dir: impl AsRef<Path>,
    ) -> Result<(), BuildError> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|source| BuildError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let text = table_source(&self.lib_name, &self.modules, Some(dir))?;
        crate::images::write_if_changed(path.as_ref(), text.as_bytes())
    }
}

/// The kernel crate as `cargo metadata` describes it: its names, and what its PTX is made from.
#[derive(Clone, Debug)]
struct KernelCrate {
    /// Its directory (holding `Cargo.toml`).
    dir: PathBuf,
    /// Its library name.
    lib_name: String,
    /// The root of its workspace (the crate's own directory if it is not in one).
    workspace_root: PathBuf,
    /// The directories of the local crates of its dependency closure, itself first.
    local: Vec<PathBuf>,
    /// The `Cargo.lock` entries of its dependency closure.
    registry: String,
}

impl Builder {
    /// The build of the kernel crate at `kernel_crate`: a path relative to the manifest of the
    /// crate whose build script runs this (`CARGO_MANIFEST_DIR`), else to the working directory;
    /// [`DEFAULT_ARCHS`]; output into `OUT_DIR/ptx` (outside a build script: `target/ptx` of
    /// the kernel crate's workspace).
    pub fn new(kernel_crate: impl AsRef<Path>) -> Self {
        Self {
            crate_dir: from_manifest(kernel_crate.as_ref()),
            archs: DEFAULT_ARCHS.to_vec(),
            out_dir: None,
            target_dir: None,
            prebuilt: None,
            locked: false,
            sass: Vec::new(),
            ptxas: None,
            options: KernelOptions::default(),
        }
    }

    /// Line info: the PTX carries `.loc` and `.file` directives (rustc's
    /// `-C debuginfo=line-directives-only`, for the kernel crate and `core`), and
    /// [`sass`](Self::sass) runs `ptxas -lineinfo`, so that Nsight Compute, compute-sanitizer
    /// and cuda-gdb show the Rust source line of each instruction. The code is the same
    /// optimised code (no DWARF, no `.target sm_XX, debug`: `ptxas` refuses the DWARF
    /// sections LLVM writes for PTX); the `.file` table names the sources by absolute path
    /// (add `--remap-path-prefix` with [`rustflags`](Self::rustflags) to shorten them). A
    /// prebuilt folder recorded without it is not used with it, nor the reverse.
    pub fn debug(mut self) -> Self {
        self.options.debug = true;
        self
    }

    /// Enables these cargo features of the kernel crate (each string may hold several,
    /// separated by commas or spaces, as cargo's `--features`); kept sorted, each once, and
    /// added to those of earlier calls. A feature the kernel crate does not declare stops the
    /// build ([`BuildError::UnknownFeature`]); `dependency/feature` is passed on for cargo to
    /// check. Part of the prebuilt digest.
    pub fn features<S: AsRef<str>>(mut self, features: impl IntoIterator<Item = S>) -> Self {
        self.options.add_features(features);
        self
    }

    /// Appends these arguments to the rustflags of every crate of the kernel build (`core`
    /// included), after the builder's `-C target-cpu=sm_XX`: each string is one argument,
    /// as in `CARGO_ENCODED_RUSTFLAGS` (so `["--cfg", "fast"]`, or `["-Cllvm-args=..."]`);
    /// added to those of earlier calls, in order. Flags the build sets itself stop it with
    /// [`BuildError::ReservedRustflag`] naming the flag: `-C target-cpu` (use
    /// [`archs`](Self::archs)), `-C debuginfo` and `-g` (use [`debug`](Self::debug)),
    /// `-C lto`, `-C codegen-units`, `-C panic`, `-C linker`, `-C linker-flavor`,
    /// `-C embed-bitcode`, `--target`, `--emit`, `--crate-type`, `--crate-name`, `-o`,
    /// `--out-dir`. Part of the prebuilt digest.
    pub fn rustflags<S: Into<String>>(mut self, flags: impl IntoIterator<Item = S>) -> Self {
        self.options
            .rustflags
            .extend(flags.into_iter().map(Into::into));
        self
    }

    /// Also assembles every module to SASS for these architectures (a cubin each, with
    /// `ptxas` from the PTX of the highest architecture not above it), so that a device of that
    /// architecture loads its kernels without a JIT: an sm_80 cubin serves every 8.x device,
    /// an sm_90 one the H100 and H200. Only a fresh build assembles; a prebuilt folder hands
    /// back the cubins it recorded. A crate with `#[kernel(min_sm = SM)]` kernels builds PTX
    /// for `sm_SM` too ([`Builder::archs`]): a cubin assembled from older PTX would hold those
    /// kernels' trap bodies (this project builds sm_70, sm_80 and sm_90 PTX for its sm_80 and
    /// sm_90 cubins).
    pub fn sass(mut self, archs: impl IntoIterator<Item = Arch>) -> Self {
        self.sass = archs.into_iter().collect();
        self.sass.sort();
        self.sass.dedup();
        self
    }

    /// The `ptxas` that [`sass`](Self::sass) runs (default: [`find_ptxas`]).
    pub fn ptxas(mut self, path: impl Into<PathBuf>) -> Self {
        self.ptxas = Some(path.into());
        self
    }

    /// Builds with `--locked`: the GPU build fails rather than change the kernel crate's
    /// `Cargo.lock` (what a reproducible build, this project's, asks for).
    pub fn locked(mut self) -> Self {
        self.locked = true;
        self
    }

    /// Builds these architectures (sorted, each once) instead of [`DEFAULT_ARCHS`].
    pub fn archs(mut self, archs: impl IntoIterator<Item = Arch>) -> Self {
        self.archs = archs.into_iter().collect();
        self.archs.sort();
        self.archs.dedup();
        self
    }

    /// Writes the PTX files into `dir`.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Cargo's target directory for the GPU build (one subdirectory per architecture). By
    /// default `ptx-build/<hash of the crate's path>` in the outer build's target directory, or
    /// `target/ptx-build` of the kernel crate's workspace outside a build script.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Prebuilt kernels: `dir` (relative like [`new`](Self::new)'s path) holds every module's
    /// images zstd-compressed, `<lib>-<module>_sm_XX.ptx.zst` per architecture (and any
    /// `.cubin.zst`), and [`DIGEST_FILE`], the digest of the inputs they were made from
    /// ([`record_prebuilt`](Self::record_prebuilt) writes them). [`build`](Self::build) returns
    /// them, building nothing, while that digest is today's; so a crate built on a stable
    /// toolchain needs no nightly as long as the kernels do not change.
    pub fn prebuilt(mut self, dir: impl AsRef<Path>) -> Self {
        self.prebuilt = Some(from_manifest(dir.as_ref()));
        self
    }

    /// The kernel crate's directory.
    pub fn crate_dir(&self) -> &Path {
        &self.crate_dir
    }

    /// The PTX of every architecture: the prebuilt files if they are current, else a fresh
    /// build (a file whose content did not change is left untouched). Prints the
    /// `cargo:rerun-if-changed` lines when run by a build script.
    ///
    /// # Errors
    /// One sentence each: no rustup and no usable active nightly ([`BuildError::NoRustup`]), no
    /// `rust-src`, a kernel crate that does not build (its compiler message,
    /// [`BuildError::Compile`]), `cargo metadata` failing, a reserved rustflag
    /// ([`BuildError::ReservedRustflag`]) or an unknown feature
    /// ([`BuildError::UnknownFeature`]), PTX that is unusable, a file that cannot be read or
    /// written.
    pub fn build(&self) -> Result<Built, BuildError> {
        let krate = self.metadata()?;
        if std::env::var_os("OUT_DIR").is_some() {
            for input in self.inputs(&krate) {
                println!("cargo:rerun-if-changed={}", input.display());
            }
        }
        if let Some(modules) = self.current_prebuilt(&krate)? {
            return Ok(finish(krate.lib_name, Vec::new(), modules, true));
        }
        let out_dir = self.resolved_out_dir(&krate);
        std::fs::create_dir_all(&out_dir).map_err(|source| BuildError::Io {
            path: out_dir.clone(),
            source,
        })?;
        let target_dir = self.resolved_target_dir(&krate);
        let toolchain = Toolchain::pinned(&self.toolchain_dir())?;
        let ptx = self
            .archs
            .iter()
            .map(|&arch| {
                let path = build_arch(self, &toolchain, &krate, arch, &target_dir, &out_dir)?;
                Ok((arch, path))
            })
            .collect::<Result<Vec<_>, BuildError>>()?;
        let mut modules = split_into(&krate.lib_name, &ptx, &out_dir)?;
        if !self.sass.is_empty() {
            let ptxas = match &self.ptxas {
                Some(p) => p.clone(),
                None => find_ptxas()?,
            };
            let lineinfo = self.options.debug;
            assemble(
                &krate.lib_name,
                &mut modules,
                &self.sass,
                &ptxas,
                lineinfo,
                &out_dir,
            )?;
        }
        Ok(finish(krate.lib_name, ptx, modules, false))
    }

    /// Records `built`'s modules in the [`prebuilt`](Self::prebuilt) folder, every image
    /// zstd-compressed (level 19), with today's digest; removes the crate's other images there.
    /// Needs the crate feature `record` (the C zstd library, which only the recording needs:
    /// reading the folder is pure Rust).
    ///
    /// # Errors
    /// No prebuilt folder was set, `cargo metadata` failed, or a file cannot be written.
    #[cfg(feature = "record")]
    pub fn record_prebuilt(&self, built: &Built) -> Result<PathBuf, BuildError> {
        let krate = self.metadata()?;
        let dir = self.prebuilt.clone().ok_or(BuildError::NoPrebuiltDir)?;
        std::fs::create_dir_all(&dir).map_err(|source| BuildError::Io {
            path: dir.clone(),
            source,
        })?;
        crate::images::record(&dir, &krate.lib_name, &built.modules, &self.digest(&krate)?)?;
        Ok(dir)
    }

    /// The modules the [`prebuilt`](Self::prebuilt) folder records, whatever its digest
    /// (`None` if it holds none for every architecture): what a check compares with a fresh
    /// build.
    ///
    /// # Errors
    /// `cargo metadata` failed, or a file cannot be read or decompressed.
    pub fn recorded_prebuilt(&self) -> Result<Option<Vec<BuiltModule>>, BuildError> {
        let krate = self.metadata()?;
        let dir = self.prebuilt.clone().ok_or(BuildError::NoPrebuiltDir)?;
        read_prebuilt(&dir, &krate.lib_name, &self.archs)
    }

    /// Whether the [`prebuilt`](Self::prebuilt) folder holds PTX of today's inputs.
    ///
    /// # Errors
    /// As [`record_prebuilt`](Self::record_prebuilt).
    pub fn prebuilt_is_current(&self) -> Result<bool, BuildError> {
        let krate = self.metadata()?;
        Ok(self.current_prebuilt(&krate)?.is_some())
    }

    /// The folder whose `rust-toolchain.toml` pins the toolchain: the nearest from the kernel
    /// crate upwards.
    fn toolchain_dir(&self) -> PathBuf {
        self.crate_dir
            .ancestors()
            .find(|d| d.join("rust-toolchain.toml").is_file())
            .unwrap_or(&self.crate_dir)
            .to_path_buf()
    }

    /// The kernel crate and the local crates of its dependency closure, from `cargo metadata
    /// --no-deps` (the outer build's cargo: no nightly, no download) of it and of each path
    /// dependency outside its workspace; the registry crates from its workspace's `Cargo.lock`.
    /// Checks the [`rustflags`](Self::rustflags) first and the [`features`](Self::features)
    /// against the crate's, so that every public call refuses them alike.
    fn metadata(&self) -> Result<KernelCrate, BuildError> {
        self.options.check_rustflags()?;
        let manifest = self.crate_dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::NoKernelCrate {
                path: self.crate_dir.clone(),
            });
        }
        let root = workspace_packages(&manifest)?;
        let package = root
            .packages
            .iter()
            .find(|p| same_path(&p.dir, &self.crate_dir))
            .ok_or_else(|| BuildError::Metadata {
                manifest: manifest.clone(),
                reason: "the kernel crate is not among its workspace's packages".into(),
            })?
            .clone();
        let package_name = package.name.clone();
        self.options
            .check_features(&package_name, &package.features)?;
        let lib_name = package
            .lib_name
            .clone()
            .ok_or_else(|| BuildError::Metadata {
                manifest: manifest.clone(),
                reason: "the kernel crate has no library target".into(),
            })?;
        // Path dependencies, followed through every workspace they lead to.
        let mut known: Vec<Package> = root.packages.clone();
        let mut local = vec![package.dir.clone()];
        let mut queue = vec![package];
        while let Some(p) = queue.pop() {
            for dir in &p.path_deps {
                if local.iter().any(|d| same_path(d, dir)) {
                    continue;
                }
                if !known.iter().any(|k| same_path(&k.dir, dir)) {
                    known.extend(workspace_packages(&dir.join("Cargo.toml"))?.packages);
                }
                let Some(dep) = known.iter().find(|k| same_path(&k.dir, dir)).cloned() else {
                    continue;
                };
                local.push(dep.dir.clone());
                queue.push(dep);
            }
        }
        local[1..].sort();
        let lock = root.workspace_root.join("Cargo.lock");
        let registry = std::fs::read_to_string(&lock)
            .map(|text| crate::digest::lock_closure(&text, &package_name))
            .unwrap_or_default();
        Ok(KernelCrate {
            dir: self.crate_dir.clone(),
            lib_name,
            workspace_root: root.workspace_root,
            local,
            registry,
        })
    }

    /// The files and folders whose change requires a rebuild.
    fn inputs(&self, krate: &KernelCrate) -> Vec<PathBuf> {
        let mut inputs: Vec<PathBuf> = krate
            .local
            .iter()
            .flat_map(|d| [d.join("src"), d.join("Cargo.toml")])
            .collect();
        inputs.push(krate.workspace_root.join("Cargo.toml"));
        inputs.push(krate.workspace_root.join("Cargo.lock"));
        inputs.push(self.toolchain_dir().join("rust-toolchain.toml"));
        if let Some(dir) = &self.prebuilt {
            inputs.push(dir.clone());
        }
        inputs
    }

    /// SHA-256 (hex) of everything the PTX is made from: the architectures, the
    /// [`debug`](Self::debug), [`features`](Self::features) and [`rustflags`](Self::rustflags)
    /// options, this builder's own source, the toolchain file, the workspace manifest's
    /// `[profile*]` sections, the registry crates of the closure (name, version, source), and
    /// every file of the local crates' `src/` and `Cargo.toml` (hidden files skipped), each as
    /// its path relative to the workspace root (`/`-separated; for a path dependency outside
    /// the workspace, its folder's name and the path inside it), its length and its bytes, in
    /// path order: the same on every machine and checkout.
    fn digest(&self, krate: &KernelCrate) -> Result<String, BuildError> {
        use sha2::{Digest, Sha256};
        let root = &krate.workspace_root;
        let read = |path: &Path| {
            std::fs::read(path).map_err(|source| BuildError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        let slash = |path: &Path| {
            path.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        };
        let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
        for dir in &krate.local {
            let mut files = Vec::new();
            collect_files(&dir.join("src"), &mut files)?;
            collect_files(&dir.join("Cargo.toml"), &mut files)?;
            for path in files {
                // Inside the workspace: relative to its root. A path dependency outside it (a
                // kit checked out elsewhere): its folder's name and the path inside it, so the
                // digest does not depend on where either is checked out.
                let relative = match path.strip_prefix(root) {
                    Ok(inside) => slash(inside),
                    Err(_) => {
                        let name = dir
                            .file_name()
                            .map(|n| n.to_string_lossy())
                            .unwrap_or_default();
                        let inside = path.strip_prefix(dir).unwrap_or(&path);
                        format!("<path dependency>/{name}/{}", slash(inside))
                    }
                };
                entries.push((relative, read(&path)?));
            }
        }
        let toolchain = self.toolchain_dir().join("rust-toolchain.toml");
        if toolchain.is_file() {
            entries.push(("rust-toolchain.toml".into(), read(&toolchain)?));
        }
        let manifest = String::from_utf8_lossy(&read(&root.join("Cargo.toml"))?).into_owned();
        entries.push((
            "Cargo.toml [profile*]".into(),
            profile_sections(&manifest).into_bytes(),
        ));
        entries.push((
            "Cargo.lock (the closure)".into(),
            krate.registry.clone().into_bytes(),
        ));
        entries.push(("ptx_builder".into(), BUILDER_SOURCE.concat().into_bytes()));
        entries.push((
            "Builder options".into(),
            self.options.digest_text().into_bytes(),
        ));
        entries.sort();
        let mut hash = Sha256::new();
        for arch in &self.archs {
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

    /// The prebuilt modules if the folder holds every architecture and today's digest.
    fn current_prebuilt(
        &self,
        krate: &KernelCrate,
    ) -> Result<Option<Vec<BuiltModule>>, BuildError> {
        let Some(dir) = &self.prebuilt else {
            return Ok(None);
        };
        let Ok(recorded) = std::fs::read_to_string(dir.join(DIGEST_FILE)) else {
            return Ok(None);
        };
        let recorded = recorded
            .lines()
            .find(|l| !l.starts_with('#') && !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string();
        if recorded != self.digest(krate)? {
            return Ok(None);
        }
        read_prebuilt(dir, &krate.lib_name, &self.archs)
    }

    fn resolved_out_dir(&self, krate: &KernelCrate) -> PathBuf {
        self.out_dir.clone().unwrap_or_else(|| {
            std::env::var_os("OUT_DIR").map_or_else(
                || krate.workspace_root.join("target").join("ptx"),
                |out| PathBuf::from(out).join("ptx"),
            )
        })
    }

    fn resolved_target_dir(&self, krate: &KernelCrate) -> PathBuf {
        if let Some(dir) = &self.target_dir {
            return dir.clone();
        }
        match std::env::var_os("OUT_DIR") {
            Some(out) => nested_target_dir(Path::new(&out), &krate.dir),
            None => krate.workspace_root.join("target").join("ptx-build"),
        }
    }
}

/// This builder's source, which decides what it does to the PTX: part of every digest.
const BUILDER_SOURCE: &[&str] = &[
    include_str!("lib.rs"),
    include_str!("builder.rs"),
    include_str!("ptx.rs"),
    include_str!("toolchain.rs"),
    include_str!("digest.rs"),
    include_str!("error.rs"),
    include_str!("split.rs"),
    include_str!("images.rs"),
    include_str!("options.rs"),
];

fn finish(
    lib_name: String,
    ptx: Vec<(Arch, PathBuf)>,
    modules: Vec<BuiltModule>,
    prebuilt: bool,
) -> Built {
    let entries = modules
        .iter()
        .flat_map(|m| m.entries.iter().map(|(name, _)| name.clone()))
        .collect();
    Built {
        lib_name,
        ptx,
        modules,
        entries,
        prebuilt,
    }
}

/// The nested GPU build's cargo target folder: `ptx-build/<hash of the kernel crate's path>`
/// in the outer build's target folder (the nearest ancestor of `OUT_DIR` holding cargo's
/// `CACHEDIR.TAG`), shared by the outer build's profiles; `OUT_DIR/ptx-build` if none is found.
/// One folder per checkout, so that git worktrees sharing a target folder do not overwrite
/// each other's output.
fn nested_target_dir(out_dir: &Path, crate_dir: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut checkout = std::collections::hash_map::DefaultHasher::new();
    crate_dir.hash(&mut checkout);
    let target = out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .unwrap_or(out_dir);
    target
        .join("ptx-build")
        .join(format!("{:016x}", checkout.finish()))
}

fn build_arch(
    builder: &Builder,
    toolchain: &Toolchain,
    krate: &KernelCrate,
    arch: Arch,
    target_dir: &Path,
    out_dir: &Path,
) -> Result<PathBuf, BuildError> {
    let target_dir = target_dir.join(arch.to_string());
    let mut cmd = toolchain.cargo();
    cmd.current_dir(&krate.dir).args(["rustc"]);
    if builder.locked {
        cmd.arg("--locked");
    }
    cmd.args(builder.options.cargo_args());
    cmd.arg("--manifest-path")
        .arg(krate.dir.join("Cargo.toml"))
        .args(["--lib", "--release"])
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
        .env(
            "CARGO_ENCODED_RUSTFLAGS",
            builder.options.encoded_rustflags(arch),
        )
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .env("CARGO_PROFILE_RELEASE_PANIC", "abort")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")
        .env(
            "CARGO_PROFILE_RELEASE_DEBUG",
            builder.options.profile_debug(),
        )
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "false");
    let output = cmd.output().map_err(|source| BuildError::Spawn {
        program: toolchain.describe(),
        source,
    })?;
    if !output.status.success() {
        return Err(BuildError::Compile {
            arch,
            status: output.status,
            stderr: crate::tail(&String::from_utf8_lossy(&output.stderr), 60),
        });
    }
    let produced = target_dir
        .join(TARGET)
        .join("release")
        .join("deps")
        .join(format!("{}.s", krate.lib_name));
    let ptx = std::fs::read_to_string(&produced).map_err(|_| BuildError::MissingOutput {
        arch,
        path: produced.clone(),
    })?;
    validate_ptx(arch, &ptx)?;
    let ptx =
        apply_launch_bounds(&ptx).map_err(|reason| BuildError::InvalidPtx { arch, reason })?;
    let dest = out_dir.join(arch.ptx_file(&krate.lib_name));
    if std::fs::read_to_string(&dest).ok().as_deref() != Some(ptx.as_str()) {
        std::fs::write(&dest, &ptx).map_err(|source| BuildError::Io {
            path: dest.clone(),
            source,
        })?;
    }
    Ok(dest)
}

/// A package of a workspace, as `cargo metadata --no-deps` lists it.
#[derive(Clone, Debug)]
struct Package {
    name: String,
    dir: PathBuf,
    lib_name: Option<String>,
    /// The features it declares (with those cargo makes of its optional dependencies).
    features: Vec<String>,
    /// The directories of its path dependencies (not dev-dependencies).
    path_deps: Vec<PathBuf>,
}

/// A workspace's root and packages.
struct Workspace {
    workspace_root: PathBuf,
    packages: Vec<Package>,
}

/// `cargo metadata --no-deps` of the workspace of `manifest`, run by the outer build's cargo.
fn workspace_packages(manifest: &Path) -> Result<Workspace, BuildError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(&cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .map_err(|source| BuildError::Spawn {
            program: cargo.to_string_lossy().into_owned(),
            source,
        })?;
    let fail = |reason: String| BuildError::Metadata {
        manifest: manifest.to_path_buf(),
        reason,
    };
    if !output.status.success() {
        return Err(fail(crate::tail(
            &String::from_utf8_lossy(&output.stderr),
            20,
        )));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| fail(e.to_string()))?;
    let packages = meta["packages"]
        .as_array()
        .ok_or_else(|| fail("no packages".into()))?
        .iter()
        .filter_map(|p| {
            let dir = PathBuf::from(p["manifest_path"].as_str()?)
                .parent()?
                .to_path_buf();
            let lib_name = p["targets"].as_array().and_then(|ts| {
                ts.iter()
                    .find(|t| {
                        t["kind"]
                            .as_array()
                            .is_some_and(|k| k.iter().any(|k| k == "lib" || k == "rlib"))
                    })
                    .and_then(|t| t["name"].as_str())
                    .map(|n| n.replace('-', "_"))
            });
            let path_deps = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"] != "dev")
                .filter_map(|d| d["path"].as_str().map(PathBuf::from))
                .collect();
            let features = p["features"]
                .as_object()
                .map(|f| f.keys().cloned().collect())
                .unwrap_or_default();
            Some(Package {
                name: p["name"].as_str()?.to_string(),
                dir,
                lib_name,
                features,
                path_deps,
            })
        })
        .collect();
    Ok(Workspace {
        workspace_root: meta["workspace_root"]
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| fail("no workspace_root".into()))?,
        packages,
    })
}

/// Whether two paths name the same file (after resolving links and `..`).
fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// `path` relative to the manifest of the crate whose build script runs (`CARGO_MANIFEST_DIR`),
/// else to the working directory; an absolute `path` as it is.
fn from_manifest(path: &Path) -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
        .join(path)
}
