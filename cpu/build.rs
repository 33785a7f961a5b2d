//! Embeds the kernels of the `gpu` crate in the library: writes `gpu_kernels.rs` (the builder's
//! `Built::write_table`, a `gpu_host::KernelTable`), which `src/ptx.rs` includes: one PTX
//! module per top-level module of the crate (a pattern), each with its images.
//!
//! Two sources, decided per build:
//! - **Prebuilt** (`cpu/ptx/gpu-<module>_sm_XX.ptx.zst`, and SASS as `.cubin.zst` for sm_80
//!   and sm_90, zstd-compressed, read by the pure-Rust decoder): used when the architectures
//!   are the default ones and
//!   the digest recorded in `cpu/ptx/inputs.sha256` equals the digest of today's inputs (the
//!   kernels, `gpu_std`, the builder, the pinned toolchain, the relevant lock entries). This is
//!   what a crate that depends on `cpu` gets: no nightly, no GPU build, nothing written.
//! - **Fresh**: otherwise (a kernel was edited, or `GPU_LAB_PTX_ARCHS` asks for other
//!   architectures), the same builder as `cargo xtask build-ptx` compiles the `gpu` crate with
//!   the toolchain pinned in `rust-toolchain.toml`, through rustup. Its cargo target folder is
//!   `<target dir>/ptx-build/<checkout>` of the outer build (found from `OUT_DIR`), and its PTX
//!   goes to `OUT_DIR`: nothing is written outside the outer build's target folder.
//!
//! CI checks that the prebuilt images decompress to a fresh build's bytes
//! (`cargo xtask build-ptx --prebuilt --check`).
//!
//! With `GPU_LAB_KERNEL_FILES=1` the images are not embedded: they are copied into
//! `OUT_DIR/kernels/` and read from a `kernels/` folder beside the executable's folder at run
//! time (`gpu_host::ImageBytes::File`), so that the many executables of a bundle share one copy.

use std::path::PathBuf;

use ptx_builder::{Arch, Builder, DEFAULT_ARCHS};

fn main() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-env-changed=GPU_LAB_PTX_ARCHS");
    println!("cargo:rerun-if-env-changed=GPU_LAB_KERNEL_FILES");
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
            "cargo:warning=the prebuilt kernels in cpu/ptx are older than the kernels: building them afresh \
             (run `cargo xtask build-ptx --prebuilt` to update them)"
        );
    }
    let table = out_dir.join("gpu_kernels.rs");
    let files = std::env::var_os("GPU_LAB_KERNEL_FILES").is_some_and(|v| !v.is_empty() && v != "0");
    if files {
        built.write_table_beside(&table, out_dir.join("kernels"))
    } else {
        built.write_table(&table)
    }
    .unwrap_or_else(|e| fail(&e.to_string()));
}

fn fail(message: &str) -> ! {
    eprintln!("error: could not build the GPU kernels to PTX: {message}");
    std::process::exit(1);
}
