//! `Builder::debug`, `Builder::features` and `Builder::rustflags` on a kernel crate of one's
//! own, built from source with the pinned nightly for sm_90 (as `any_crate.rs`; no GPU needed,
//! about a minute): the PTX carries `.loc` lines and the `.file` table naming the crate's
//! source in every module, no DWARF; the feature and the `--cfg` each bring in their kernel;
//! and, where a `ptxas` is found, the SASS keeps the line table.

use std::path::Path;

use ptx_builder::{Arch, Builder, Format};

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

/// Kernels of the feature `extra`: their own module.
#[cfg(feature = "extra")]
pub mod extra {
    use gpu_std::kernel;

    /// `y[i] += x[i]` for `i < x.len()`.
    ///
    /// # Safety
    /// `y` holds `x.len()` floats.
    #[kernel]
    pub unsafe fn accumulate(x: &[f32], y: *mut f32) {
        let i = gpu_std::global_index_x();
        if i < x.len() {
            // SAFETY: `i < x.len()`, which `y` holds.
            unsafe { *y.add(i) += x[i] };
        }
    }
}

/// A kernel of `--cfg with_negate`.
///
/// # Safety
/// `y` holds `n` floats.
#[cfg(with_negate)]
#[kernel]
pub unsafe fn negate(n: usize, y: *mut f32) {
    let i = gpu_std::global_index_x();
    if i < n {
        // SAFETY: `i < n`, which `y` holds.
        unsafe { *y.add(i) = -*y.add(i) };
    }
}
"#;

fn kernel_crate(root: &Path) -> std::path::PathBuf {
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
             [dependencies]\ngpu_std = {{ path = {:?} }}\n\n[features]\nextra = []\n\n\
             [lints.rust]\nunexpected_cfgs = \
             {{ level = \"warn\", check-cfg = ['cfg(with_negate)'] }}\n\n\
             [workspace]\n",
            gpu_std.display().to_string()
        ),
    )
    .unwrap();
    // The lock of this workspace pins gpu_std's host-side dependencies without a download.
    std::fs::copy(repo.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    std::fs::write(krate.join("src/lib.rs"), KERNEL).unwrap();
    krate
}

#[test]
fn debug_features_and_rustflags_reach_the_kernel_build() {
    let root = std::env::temp_dir().join(format!("ptx-debug-build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let krate = kernel_crate(&root);
    let ptxas = ptx_builder::find_ptxas().ok();
    let mut builder = Builder::new(&krate)
        .archs([Arch(90)])
        .debug()
        .features(["extra"])
        .rustflags(["--cfg", "with_negate"])
        .out_dir(root.join("ptx"))
        .target_dir(root.join("target"));
    match &ptxas {
        Some(path) => builder = builder.sass([Arch(90)]).ptxas(path),
        None => eprintln!("no ptxas found: the SASS half of this test is skipped"),
    }
    let built = builder.build().unwrap_or_else(|e| panic!("{e}"));
    // The feature's kernel and the `--cfg`'s kernel are built.
    assert_eq!(built.entries, ["accumulate", "negate", "scale"]);
    let names: Vec<&str> = built.modules.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["extra", "my_kernels"]);

    // Line info: `.loc` lines and a `.file` table naming the crate's source; no DWARF (which
    // `ptxas` refuses) and no `.target sm_90, debug`.
    let whole = std::fs::read_to_string(&built.ptx[0].1).unwrap();
    let lib_rs = krate.join("src/lib.rs");
    let file_line = format!("\"{}\"", lib_rs.display());
    assert!(whole.contains("\t.loc\t"), "no .loc line:\n{whole}");
    assert!(
        whole
            .lines()
            .any(|l| l.trim_start().starts_with(".file") && l.ends_with(&file_line)),
        "no .file line naming {}:\n{whole}",
        lib_rs.display()
    );
    assert!(whole.contains("\n.target sm_90\n"), "{whole}");
    assert!(!whole.contains(".debug_info"), "{whole}");
    // Each module keeps the `.loc` lines of its kernels and the whole `.file` table.
    for module in &built.modules {
        let ptx = module
            .images
            .iter()
            .find(|i| i.format == Format::Ptx)
            .map(|i| std::fs::read_to_string(&i.path).unwrap())
            .unwrap();
        assert!(ptx.contains("\t.loc\t"), "{}:\n{ptx}", module.name);
        assert!(ptx.contains(&file_line), "{}:\n{ptx}", module.name);
    }

    // `ptxas -lineinfo`: each cubin's line table names the source.
    if ptxas.is_some() {
        for module in &built.modules {
            let cubin = module
                .images
                .iter()
                .find(|i| i.format == Format::Cubin)
                .unwrap_or_else(|| panic!("{}: no cubin", module.name));
            let bytes = std::fs::read(&cubin.path).unwrap();
            assert!(
                bytes.windows(b"lib.rs".len()).any(|w| w == b"lib.rs"),
                "{}: the cubin has no line table naming lib.rs",
                cubin.path.display()
            );
        }
    }
    std::fs::remove_dir_all(&root).unwrap();
}
