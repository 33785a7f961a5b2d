//! Builds the `gpu` crate to PTX (one file per architecture) with the same builder as
//! `cargo xtask build-ptx`, and writes `ptx_table.rs`, which `src/ptx.rs` includes so the PTX is
//! embedded in the library. Architectures: `GPU_LAB_PTX_ARCHS` (comma-separated, e.g.
//! `sm_70,sm_90`), default `sm_70,sm_90`.

use std::path::PathBuf;

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
    if let Some(target_dir) = std::env::var_os("CARGO_TARGET_DIR") {
        // A target folder shared by several checkouts (git worktrees) gets one PTX build per
        // checkout: the GPU build's `gpu.s` would otherwise be the last checkout's.
        use std::hash::{Hash, Hasher};
        let mut checkout = std::collections::hash_map::DefaultHasher::new();
        workspace_root.hash(&mut checkout);
        build.target_dir = PathBuf::from(target_dir)
            .join("ptx-build")
            .join(format!("{:016x}", checkout.finish()));
    }
    println!("cargo:rerun-if-env-changed=GPU_LAB_PTX_ARCHS");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");
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

    let paths = build.build().unwrap_or_else(|e| fail(&e.to_string()));
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

fn fail(message: &str) -> ! {
    eprintln!("error: could not build the GPU kernels to PTX: {message}");
    std::process::exit(1);
}
