//! What can go wrong while building PTX ([`BuildError`]).

use crate::{Arch, TARGET};
use std::path::PathBuf;

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
    /// Cargo failed to compile the kernel crate.
    #[error("building the kernel crate for {arch} failed ({status}):\n{stderr}")]
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
    /// The kernel crate's folder has no `Cargo.toml`.
    #[error("no kernel crate at {path}: it has no Cargo.toml")]
    NoKernelCrate {
        /// The folder given to `Builder::new`.
        path: PathBuf,
    },
    /// `cargo metadata` failed or said something this builder cannot read.
    #[error("cargo metadata for {manifest} failed: {reason}")]
    Metadata {
        /// The kernel crate's manifest.
        manifest: PathBuf,
        /// Cargo's error output, or what is missing from its answer.
        reason: String,
    },
    /// `Builder::record_prebuilt` was called on a builder without `Builder::prebuilt`.
    #[error("no prebuilt folder to record the PTX into: call Builder::prebuilt(dir) first")]
    NoPrebuiltDir,
    /// A SASS architecture below every PTX architecture built.
    #[error(
        "no PTX of {arch} or older to assemble {arch} SASS from: build that architecture's PTX too"
    )]
    NoPtxForSass {
        /// The SASS architecture.
        arch: Arch,
    },
    /// `ptxas` refused a module.
    #[error("ptxas -arch={arch} {ptx} failed:\n{stderr}")]
    Ptxas {
        /// The SASS architecture.
        arch: Arch,
        /// The module's PTX file.
        ptx: PathBuf,
        /// The end of its output.
        stderr: String,
    },
    /// A thread running `ptxas` panicked.
    #[error("a thread running ptxas panicked")]
    PtxasPanicked,
    /// No `ptxas` to assemble SASS with.
    #[error(
        "ptxas not found (PTXAS, PATH, CUDA_HOME, /usr/local/cuda, the nvidia-cuda-nvcc-cu12 wheel): \
         install a CUDA toolkit or `python3 -m pip install nvidia-cuda-nvcc-cu12` (no GPU needed)"
    )]
    NoPtxas,
    /// A prebuilt image that does not decompress.
    #[error("{path} does not decompress: {reason}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        reason: String,
    },
    /// A rustflag of `Builder::rustflags` that the build sets itself.
    #[error("the rustflag `{flag}` cannot be added to the kernel build: {reason}")]
    ReservedRustflag {
        /// The flag as given (with its value, when given as a separate argument).
        flag: String,
        /// What the build does instead.
        reason: &'static str,
    },
    /// A feature of `Builder::features` that the kernel crate does not declare.
    #[error("the kernel crate {krate} has no feature `{feature}` (its features: {declared})")]
    UnknownFeature {
        /// The feature asked for.
        feature: String,
        /// The kernel crate's package name.
        krate: String,
        /// The features it declares, comma-separated (`none` if it declares none).
        declared: String,
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
