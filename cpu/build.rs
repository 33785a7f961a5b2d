//! Embeds the PTX of the `gpu` crate in the library: writes `gpu_ptx.rs` (the builder's
//! `Built::write_table`), which `src/ptx.rs` includes, one `(sm, text)` row per architecture.
//!
//! Two sources, decided per build:
//! - **Prebuilt** (`cpu/ptx/gpu_sm_XX.ptx`): used when the architectures are the default ones and
//!   the digest recorded in `cpu/ptx/inputs.sha256` equals the digest of today's inputs (the
//!   kernels, `gpu_std`, the builder, the pinned toolchain, the relevant lock entries). This is
//!   what a crate that depends on `cpu` gets: no nightly, no GPU build, nothing written.
//! - **Fresh**: otherwise (a kernel was edited, or `GPU_LAB_PTX_ARCHS` asks for other
//!   architectures), the same builder as `cargo xtask build-ptx` compiles the `gpu` crate with
//!   the toolchain pinned in `rust-toolchain.toml`, through rustup. Its cargo target folder is
//!   `<target dir>/ptx-build/<checkout>` of the outer build (found from `OUT_DIR`), and its PTX
//!   goes to `OUT_DIR`: nothing is written outside the outer build's target folder.
//!
//! CI checks that the prebuilt PTX is byte-identical to a fresh build
//! (`cargo xtask build-ptx --prebuilt --check`).

use std::path::PathBuf;

use ptx_builder::{Arch, Builder, DEFAULT_ARCHS};

fn main() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-env-changed=GPU_LAB_PTX_ARCHS");
    let archs: Vec<Arch> = match std::env::var("GPU_LAB_PTX_ARCHS") {
        Ok(list) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| fail(&format!("GPU_LAB_PTX_ARCHS: {e}"))),
        Err(_) => DEFAULT_ARCHS.to_vec(),
    };
    let default = archs == DEFAULT_ARCHS;
    let built = Builder::new("../gpu")
        .locked()
        .archs(archs)
        .prebuilt("ptx")
        .build()
        .unwrap_or_else(|e| fail(&e.to_string()));
    if !built.prebuilt && default {
        println!(
            "cargo:warning=the prebuilt PTX in cpu/ptx is older than the kernels: building them afresh \
             (run `cargo xtask build-ptx --prebuilt` to update it)"
        );
    }
    built
        .write_table(out_dir.join("gpu_ptx.rs"))
        .unwrap_or_else(|e| fail(&e.to_string()));
}

fn fail(message: &str) -> ! {
    eprintln!("error: could not build the GPU kernels to PTX: {message}");
    std::process::exit(1);
}
