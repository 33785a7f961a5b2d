//! Builds the kernel crate `../kernels` to PTX for sm_70 and sm_90 and writes
//! `OUT_DIR/kernels.rs`, the `gpu_host::KernelTable` `src/lib.rs` embeds: one PTX module per
//! top-level module of the kernel crate, each with its PTX per architecture
//! (`ptx_builder::Built::write_table`).
//!
//! Two sources, decided per build by `ptx_builder`:
//! - **Prebuilt** (`ptx/kernels-<module>_sm_XX.ptx.zst`, zstd-compressed): while `ptx/inputs.sha256` is the digest of today's
//!   inputs (the kernel crate's `src/` and `Cargo.toml`, `gpu_std`, the pinned toolchain file,
//!   the lock entries of the kernels' dependencies, the builder's own source). No nightly, no
//!   GPU build, nothing written: a stable toolchain builds the project.
//! - **Fresh**: otherwise (a kernel changed), the builder compiles `../kernels` with the nightly
//!   that `../kernels/rust-toolchain.toml` pins, through rustup, into this build's target
//!   folder, and says so in a warning.
//!
//! `KERNELS_RECORD_PTX=1 cargo build` builds the kernels afresh and records them, with their
//! digest, in `ptx/`: run it after changing a kernel, and commit `ptx/`.

use std::path::PathBuf;

use ptx_builder::{Arch, Builder};

/// The architectures built: sm_70 (the portable one: the driver JIT-compiles it for Volta and
/// every newer GPU) and sm_90 (Hopper, H100 and H200). At run time the device loads the highest
/// one not above its own.
const ARCHS: [Arch; 2] = [Arch(70), Arch(90)];

fn main() {
    println!("cargo:rerun-if-env-changed=KERNELS_RECORD_PTX");
    // `locked`: the GPU build uses this workspace's Cargo.lock as it is.
    let kernels = || Builder::new("../kernels").archs(ARCHS).locked();
    let builder = kernels().prebuilt("ptx");
    if std::env::var_os("KERNELS_RECORD_PTX").is_some() {
        let fresh = kernels().build().unwrap_or_else(|e| fail(&e.to_string()));
        let dir = builder
            .record_prebuilt(&fresh)
            .unwrap_or_else(|e| fail(&e.to_string()));
        println!(
            "cargo:warning=recorded the PTX of the kernels and its digest in {}",
            dir.display()
        );
    }
    let built = builder.build().unwrap_or_else(|e| fail(&e.to_string()));
    if !built.prebuilt {
        println!(
            "cargo:warning=the prebuilt PTX in app/ptx is older than the kernels: built them \
             afresh with the pinned nightly (run `KERNELS_RECORD_PTX=1 cargo build` and commit \
             app/ptx to update it)"
        );
    }
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    built
        .write_table(out_dir.join("kernels.rs"))
        .unwrap_or_else(|e| fail(&e.to_string()));
    println!("cargo:rustc-env=KERNELS_PTX_PREBUILT={}", built.prebuilt);
}

/// Stops the build with one sentence (the builder's errors are one sentence each).
fn fail(message: &str) -> ! {
    eprintln!("error: could not build the kernels to PTX: {message}");
    std::process::exit(1);
}
