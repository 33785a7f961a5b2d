//! The PTX builder: compiles a kernel crate with rustc's own `nvptx64-nvidia-cuda` backend and
//! writes one PTX file per GPU architecture ([`Builder`]), from any crate's build script.
//!
//! This project's `cpu/build.rs` (which embeds the PTX of the `gpu` crate in the host library)
//! and `cargo xtask build-ptx` use it, so the two always build the same way.
//!
//! Toolchain: the kernel crate is always compiled by the nightly its `rust-toolchain.toml` pins,
//! started through `rustup run <channel> cargo` (installed with `rust-src` when missing), so a
//! build driven from a stable toolchain (a user's crate that depends on `cpu`) works too.
//! Without rustup, the active toolchain is used if it is a nightly with `rust-src`.
//!
//! Modules: the crate's PTX is cut into one PTX module per top-level Rust module of its
//! kernels ([`split_modules`], from the marker `#[kernel]` leaves in each entry), each holding
//! only what its kernels reach, so that a program JIT-compiles or loads only the modules it
//! uses. [`Builder::sass`] also assembles each module to SASS (cubins, with `ptxas`), which a
//! device of that architecture loads with no JIT at all.
//!
//! Prebuilt kernels: [`Builder::record_prebuilt`] keeps every module's images zstd-compressed
//! in a folder of the crate (this project's `cpu/ptx/`) with the SHA-256 of its inputs;
//! [`Builder::build`] hands them back only while that digest still matches, which is how a
//! dependent crate builds with no GPU build at all. [`Built::write_table`] writes the
//! `gpu_host::KernelTable` a crate embeds.
//!
//! How (see the repository's README, "How the PTX is made"):
//! `cargo rustc --manifest-path <kernels>/Cargo.toml --lib --release --crate-type cdylib --target nvptx64-nvidia-cuda
//! -Zbuild-std=core -- --emit=asm -C linker=true` with `-C target-cpu=sm_XX` in the rustflags
//! and the release profile forced to `lto = "fat"`, `codegen-units = 1`, `panic = "abort"`.
//! Fat LTO merges the kernels and `core` into one module; `--emit=asm` writes it as
//! `deps/<lib>.s`, which is the PTX. The link step has nothing left to do (`-C linker=true`).
//! The prebuilt `rust-std` of the target and the `llvm-bitcode-linker` are not needed.
//!
//! Options of the kernel build, each part of the prebuilt digest: [`Builder::debug`] (line
//! info, `-C debuginfo=line-directives-only` and `ptxas -lineinfo`: `.loc` / `.file` that
//! Nsight Compute and compute-sanitizer map to Rust lines), [`Builder::features`] (the kernel
//! crate's cargo features, checked against those it declares) and [`Builder::rustflags`]
//! (extra rustc arguments; those the build sets itself are refused with
//! [`BuildError::ReservedRustflag`]).
//!
//! Launch bounds: rustc has no `__launch_bounds__`, so a kernel declares them with the `gpu`
//! crate's `launch_bounds!(max_threads, min_blocks)`, which leaves the assembler comment
//! `// launch_bounds(max_threads, min_blocks)` in the kernel's body, and
//! [`apply_launch_bounds`] turns it into the entry's `.maxntid` and `.minnctapersm`
//! directives, which `ptxas` (or the driver's JIT) uses to cap registers per thread.

mod builder;
mod digest;
mod error;
mod images;
mod options;
mod ptx;
mod split;
mod toolchain;

pub use builder::{Builder, Built};
pub use error::BuildError;
pub use gpu_std::host::{EntryParam, entry_names, entry_params};
pub use images::{BuiltImage, BuiltModule, Format, find_ptxas, image_file, read_image};
pub use ptx::{LAUNCH_BOUNDS_MARKER, LaunchBounds, apply_launch_bounds, validate_ptx};
pub use split::{MODULE_MARKER, PtxModule, module_of_path, split_modules};

use std::fmt;
use std::str::FromStr;

/// The target triple of rustc's PTX backend.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Where this project's prebuilt PTX of [`DEFAULT_ARCHS`] lives, relative to its workspace root.
pub const PREBUILT_DIR: &str = "cpu/ptx";

/// The file beside the prebuilt PTX that records the digest of the inputs it was built from.
pub const DIGEST_FILE: &str = "inputs.sha256";

/// Architectures built when none is asked for: `sm_70` (portable: the driver JIT-compiles it
/// for Volta and every newer GPU), `sm_80` (Ampere and Ada: the tensor-core kernels, declared
/// `#[kernel(min_sm = 80)]`, have their bodies from sm_80 on, and [`DEFAULT_SASS`]'s sm_80
/// cubins are assembled from this PTX) and `sm_90` (Hopper, H100/H200).
pub const DEFAULT_ARCHS: [Arch; 3] = [Arch(70), Arch(80), Arch(90)];

/// Architectures this project's prebuilt kernels carry SASS for ([`Builder::sass`]): `sm_80`
/// (every Ampere and Ada GPU, 8.x) and `sm_90` (Hopper, H100/H200), which load with no JIT.
pub const DEFAULT_SASS: [Arch; 2] = [Arch(80), Arch(90)];

/// A GPU architecture, `sm_XX`: compute capability `X.X` as one number (`sm_90` is 90).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch(pub u32);

impl Arch {
    /// The PTX file name [`Builder`] writes for the kernel library `lib` on this architecture:
    /// `<lib>_sm_XX.ptx`.
    pub fn ptx_file(self, lib: &str) -> String {
        format!("{lib}_{self}.ptx")
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

pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::profile_sections;

    #[test]
    fn arch_parses_and_rejects() {
        assert_eq!("sm_90".parse::<Arch>().unwrap(), Arch(90));
        assert_eq!("70".parse::<Arch>().unwrap(), Arch(70));
        assert_eq!("compute_80".parse::<Arch>().unwrap(), Arch(80));
        assert!("sm_61".parse::<Arch>().is_err());
        assert!("sm_x".parse::<Arch>().is_err());
        assert_eq!(Arch(90).ptx_file("gpu"), "gpu_sm_90.ptx");
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
    fn profile_sections_only() {
        let manifest = "[workspace]\nmembers = []\n[profile.release]\nlto = true\n[profile.dev.package.x]\nopt-level = 1\n[workspace.dependencies]\nrand = \"1\"\n";
        assert_eq!(
            profile_sections(manifest),
            "[profile.release]\nlto = true\n[profile.dev.package.x]\nopt-level = 1\n"
        );
    }

    /// A kernel crate of one's own, outside this workspace: the prebuilt PTX is used while the
    /// digest of its inputs is today's, and only an edit of an input changes that digest.
    /// Needs the pinned toolchain (for `cargo metadata`), as every build of this workspace does.
    #[test]
    #[cfg(feature = "record")]
    fn prebuilt_ptx_follows_the_inputs() {
        let root = std::env::temp_dir().join(format!("ptx-builder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let krate = root.join("kernels");
        std::fs::create_dir_all(krate.join("src")).unwrap();
        let pinned = concat!(env!("CARGO_MANIFEST_DIR"), "/../../rust-toolchain.toml");
        std::fs::copy(pinned, root.join("rust-toolchain.toml")).unwrap();
        std::fs::write(
            krate.join("Cargo.toml"),
            "[package]\nname = \"my-kernels\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
             [features]\nfast = []\n[workspace]\n",
        )
        .unwrap();
        std::fs::write(krate.join("src/lib.rs"), "#![no_std]\n").unwrap();
        let builder = Builder::new(&krate).prebuilt(root.join("ptx"));
        assert!(!builder.prebuilt_is_current().unwrap(), "nothing recorded");
        // Record a module's PTX for both architectures as if built, then read it back
        // without a build.
        let ptx = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry saxpy(\n)\n{\n\t// kernel_module(my_kernels::saxpy)\n\tret;\n}\n";
        let whole: Vec<(Arch, std::path::PathBuf)> = DEFAULT_ARCHS
            .iter()
            .map(|&a| {
                let path = root.join(a.ptx_file("x"));
                std::fs::write(&path, ptx).unwrap();
                (a, path)
            })
            .collect();
        let modules = crate::images::split_into("my_kernels", &whole, &root).unwrap();
        assert_eq!(modules.len(), 1);
        assert_eq!(modules[0].name, "saxpy");
        let built = Built {
            lib_name: "my_kernels".into(),
            ptx: whole,
            modules,
            entries: vec!["saxpy".into()],
            prebuilt: false,
        };
        builder.record_prebuilt(&built).unwrap();
        assert!(root.join("ptx/my_kernels-saxpy_sm_90.ptx.zst").is_file());
        let again = builder.build().unwrap();
        assert!(again.prebuilt);
        assert_eq!(again.lib_name, "my_kernels");
        assert_eq!(again.entries, ["saxpy"]);
        assert_eq!(again.modules[0].entries, [("saxpy".to_string(), vec![])]);
        let text = read_image(&again.modules[0].images[1]).unwrap();
        assert_eq!(
            text,
            ptx.as_bytes(),
            "the recorded PTX decompresses to the built one"
        );
        // The table a crate embeds names the module, its entry and each compressed image.
        let table = root.join("kernels.rs");
        again.write_table(&table).unwrap();
        let table = std::fs::read_to_string(&table).unwrap();
        assert!(table.contains("krate: \"my_kernels\""), "{table}");
        assert!(table.contains("name: \"saxpy\", params: &[]"), "{table}");
        assert!(
            table.contains(
                "sm: 90, format: ::gpu_host::ImageFormat::Ptx, encoding: ::gpu_host::Encoding::Zstd"
            ),
            "{table}"
        );
        // Each option of the kernel build is an input: a build asking for one does not take
        // the PTX recorded without it.
        let with = || Builder::new(&krate).prebuilt(root.join("ptx"));
        assert!(!with().debug().prebuilt_is_current().unwrap(), "debug");
        assert!(
            !with().features(["fast"]).prebuilt_is_current().unwrap(),
            "features"
        );
        let cfg = with().rustflags(["--cfg", "fast"]);
        assert!(!cfg.prebuilt_is_current().unwrap(), "rustflags");
        // Nor the reverse: what a debug build recorded is not taken without it.
        let debug = Builder::new(&krate)
            .prebuilt(root.join("ptx-debug"))
            .debug();
        debug.record_prebuilt(&built).unwrap();
        assert!(debug.prebuilt_is_current().unwrap());
        let plain = Builder::new(&krate).prebuilt(root.join("ptx-debug"));
        assert!(!plain.prebuilt_is_current().unwrap(), "recorded with debug");
        // Refused options stop every call alike, before any build.
        let e = with().features(["slow"]).build().unwrap_err();
        assert!(
            matches!(&e, BuildError::UnknownFeature { feature, krate, .. }
                if feature == "slow" && krate == "my-kernels"),
            "{e}"
        );
        let e = with()
            .rustflags(["-C", "target-cpu=sm_80"])
            .prebuilt_is_current()
            .unwrap_err();
        assert!(
            matches!(&e, BuildError::ReservedRustflag { flag, .. } if flag == "-C target-cpu=sm_80"),
            "{e}"
        );
        // A hidden file is no input; an edit of the source is.
        std::fs::write(krate.join("src/.lib.rs.swp"), "x").unwrap();
        assert!(builder.prebuilt_is_current().unwrap());
        std::fs::write(krate.join("src/lib.rs"), "#![no_std]\npub fn a() {}\n").unwrap();
        assert!(!builder.prebuilt_is_current().unwrap());
        // Other architectures than the recorded ones are not prebuilt.
        let other = Builder::new(&krate)
            .prebuilt(root.join("ptx"))
            .archs([Arch(80)]);
        assert!(!other.prebuilt_is_current().unwrap());
        // No crate, no prebuilt folder: one sentence each.
        let e = Builder::new(root.join("none"))
            .build()
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("no kernel crate at"), "{e}");
        let e = Builder::new(&krate).record_prebuilt(&built).unwrap_err();
        assert!(matches!(e, BuildError::NoPrebuiltDir), "{e}");
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
