//! Embeds the PTX of the `gpu` crate in the library: writes `ptx_table.rs`, which `src/ptx.rs`
//! includes, one `(sm, text)` row per architecture.
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

use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let workspace_root = manifest_dir
        .parent()
        .expect("cpu/ lives in the workspace root")
        .to_path_buf();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    let mut build = ptx_builder::PtxBuild::new(&workspace_root, out_dir.join("ptx"));
    build.target_dir = nested_target_dir(&out_dir, &workspace_root);
    println!("cargo:rerun-if-env-changed=GPU_LAB_PTX_ARCHS");
    if let Ok(list) = std::env::var("GPU_LAB_PTX_ARCHS") {
        match list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect()
        {
            Ok(archs) => build.archs = archs,
            Err(e) => fail(&format!("GPU_LAB_PTX_ARCHS: {e}")),
        }
    }
    build.archs.sort();
    build.archs.dedup();
    for input in build.inputs() {
        println!("cargo:rerun-if-changed={}", input.display());
    }
    println!("cargo:rerun-if-changed={}", build.prebuilt_dir().display());

    let prebuilt = build.prebuilt().unwrap_or_else(|e| fail(&e.to_string()));
    let paths = match prebuilt {
        Some(paths) => paths,
        None => {
            if build.archs == ptx_builder::DEFAULT_ARCHS && build.prebuilt_dir().is_dir() {
                println!(
                    "cargo:warning=the prebuilt PTX in {} is older than the kernels: building them afresh \
                     (run `cargo xtask build-ptx --prebuilt` to update it)",
                    build.prebuilt_dir().display()
                );
            }
            build.build().unwrap_or_else(|e| fail(&e.to_string()))
        }
    };
    let mut table = String::from(
        "/// PTX of the `gpu` crate per architecture, ascending: `(sm, text)`.\npub static PTX_BY_ARCH: &[(u32, &str)] = &[\n",
    );
    for (arch, path) in build.archs.iter().zip(&paths) {
        table.push_str(&format!(
            "    ({}, include_str!({:?})),\n",
            arch.0,
            path.display().to_string()
        ));
    }
    table.push_str("];\n");
    let table_path = out_dir.join("ptx_table.rs");
    if std::fs::read_to_string(&table_path).ok().as_deref() != Some(table.as_str()) {
        std::fs::write(&table_path, table)
            .unwrap_or_else(|e| fail(&format!("{}: {e}", table_path.display())));
    }
}

/// The nested GPU build's cargo target folder: `ptx-build/<checkout>` in the outer build's
/// target folder (the nearest ancestor of `OUT_DIR` holding cargo's `CACHEDIR.TAG`), shared by
/// the outer build's profiles; `OUT_DIR/ptx-build` if none is found. One folder per checkout,
/// so that git worktrees sharing a target folder do not overwrite each other's `gpu.s`.
fn nested_target_dir(out_dir: &Path, workspace_root: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut checkout = std::collections::hash_map::DefaultHasher::new();
    workspace_root.hash(&mut checkout);
    let target = out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .unwrap_or(out_dir);
    target
        .join("ptx-build")
        .join(format!("{:016x}", checkout.finish()))
}

fn fail(message: &str) -> ! {
    eprintln!("error: could not build the GPU kernels to PTX: {message}");
    std::process::exit(1);
}
