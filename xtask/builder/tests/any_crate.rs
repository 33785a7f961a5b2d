//! `Builder` on a kernel crate of one's own, outside this workspace: a crate named with a dash,
//! depending on `gpu_std` by path (a crate of another workspace), built from source with the
//! pinned nightly to PTX for one architecture; and the same crate with a compile error, which
//! ends in one `BuildError::Compile` carrying the compiler's message. No GPU needed; it runs a
//! nested GPU build (about a minute).

use std::path::{Path, PathBuf};

use ptx_builder::{Arch, BuildError, Builder};

const KERNEL: &str = r#"#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use gpu_std::kernel;

/// `y[i] = a * x[i]` for `i < x.len()`.
///
/// # Safety
/// `y` holds `x.len()` floats.
#[kernel]
pub unsafe fn scale(a: f32, x: &[f32], y: *mut f32) {
    let i = gpu_std::global_index_x();
    if i < x.len() {
        // SAFETY: `i < x.len()`, which `y` holds.
        unsafe { *y.add(i) = a * x[i] };
    }
}
"#;

fn kernel_crate(root: &Path, source: &str) -> PathBuf {
    let krate = root.join("my-kernels");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::copy(
        repo.join("rust-toolchain.toml"),
        root.join("rust-toolchain.toml"),
    )
    .unwrap();
    let gpu_std = repo.join("gpu/std").canonicalize().unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"my-kernels\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\ngpu_std = {{ path = {:?} }}\n\n[workspace]\n",
            gpu_std.display().to_string()
        ),
    )
    .unwrap();
    // The lock of this workspace pins gpu_std's host-side dependencies without a download.
    std::fs::copy(repo.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    std::fs::write(krate.join("src/lib.rs"), source).unwrap();
    krate
}

#[test]
fn a_kernel_crate_of_ones_own_builds_to_ptx() {
    let root = std::env::temp_dir().join(format!("ptx-any-crate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let krate = kernel_crate(&root, KERNEL);
    let builder = Builder::new(&krate)
        .archs([Arch(90)])
        .out_dir(root.join("ptx"))
        .target_dir(root.join("target"));
    let built = builder.build().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(built.lib_name, "my_kernels");
    assert!(!built.prebuilt);
    assert_eq!(built.entries, ["scale"]);
    let (arch, path) = &built.ptx[0];
    assert_eq!(*arch, Arch(90));
    assert_eq!(path, &root.join("ptx/my_kernels_sm_90.ptx"));
    // One module, the crate's root, cut from the whole.
    assert_eq!(built.modules.len(), 1);
    assert_eq!(built.modules[0].name, "my_kernels");
    assert!(root.join("ptx/my_kernels-my_kernels_sm_90.ptx").is_file());
    let ptx = std::fs::read_to_string(path).unwrap();
    let params = ptx_builder::entry_params(&ptx).unwrap();
    let bytes: Vec<usize> = params[0].1.iter().map(|p| p.bytes).collect();
    assert_eq!(bytes, [4, 8, 8, 8], "a, x_ptr, x_len, y");
    // No line info without `Builder::debug`.
    assert!(!ptx.contains(".loc") && !ptx.contains(".file"), "{ptx}");

    // A compile error: one error, with the compiler's message in it.
    std::fs::write(
        krate.join("src/lib.rs"),
        KERNEL.replace("a * x[i]", "a * x[i] + undefined_name"),
    )
    .unwrap();
    let e = builder.build().unwrap_err();
    assert!(matches!(e, BuildError::Compile { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with("building the kernel crate for sm_90 failed")
            && text.contains("undefined_name"),
        "{text}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
