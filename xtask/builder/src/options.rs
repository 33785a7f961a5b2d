//! The kernel build's own options ([`Builder::debug`](crate::Builder::debug),
//! [`features`](crate::Builder::features), [`rustflags`](crate::Builder::rustflags)): what each
//! adds to the nested `cargo rustc`, the rustflags refused because the build sets them itself,
//! and the text of them all that enters the prebuilt digest.

use crate::{Arch, BuildError};

/// rustc's `-C debuginfo` level of [`Builder::debug`](crate::Builder::debug): LLVM's
/// `DebugDirectivesOnly`, the `.loc` / `.file` directives and no DWARF sections (what nvcc's
/// `-lineinfo` makes). `line-tables-only` and `full` add `.target sm_XX, debug` and DWARF
/// sections that `ptxas` 12.9 refuses (`Parsing error near '$L__sec_end0'`).
pub(crate) const DEBUG_INFO: &str = "line-directives-only";

/// The `ptxas` flag that keeps the `.loc` lines in the SASS (`--generate-line-info`).
pub(crate) const PTXAS_LINE_INFO: &str = "-lineinfo";

/// The options of one kernel build beyond its architectures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KernelOptions {
    /// Line info: `-C debuginfo=line-directives-only` for every crate, `ptxas -lineinfo`.
    pub(crate) debug: bool,
    /// The kernel crate's features to enable, sorted, each once.
    pub(crate) features: Vec<String>,
    /// Extra rustc arguments, in order, for every crate of the build.
    pub(crate) rustflags: Vec<String>,
}

/// A `-C` option (or another rustc flag) the build sets itself, and why it is refused.
const RESERVED_CODEGEN: &[(&str, &str)] = &[
    (
        "target-cpu",
        "the builder sets it for each architecture: use Builder::archs",
    ),
    (
        "debuginfo",
        "use Builder::debug (line info; DWARF sections make PTX that ptxas refuses)",
    ),
    (
        "lto",
        "the build is fat LTO, which merges the kernels and core into one PTX",
    ),
    (
        "codegen-units",
        "the build has one codegen unit, so that it writes one PTX",
    ),
    ("panic", "the build aborts on panic; the GPU cannot unwind"),
    (
        "linker",
        "the build links nothing (`-C linker=true`): the PTX is rustc's assembly",
    ),
    (
        "linker-flavor",
        "the build links nothing (`-C linker=true`): the PTX is rustc's assembly",
    ),
    ("embed-bitcode", "fat LTO needs the crates' bitcode"),
];

/// rustc flags (not `-C`) the build sets itself.
const RESERVED_FLAGS: &[(&str, &str)] = &[
    ("--target", "the build's target is nvptx64-nvidia-cuda"),
    (
        "--emit",
        "the build emits the kernel crate's assembly, which is the PTX",
    ),
    ("--crate-type", "the build makes the kernel crate a cdylib"),
    (
        "--crate-name",
        "the PTX is named after the kernel crate's library",
    ),
    ("-o", "the builder reads the PTX from cargo's target folder"),
    (
        "--out-dir",
        "the builder reads the PTX from cargo's target folder",
    ),
    (
        "-g",
        "use Builder::debug (line info; DWARF sections make PTX that ptxas refuses)",
    ),
];

impl KernelOptions {
    /// Adds features, each string split at commas and spaces as cargo's `--features` does.
    pub(crate) fn add_features<S: AsRef<str>>(&mut self, features: impl IntoIterator<Item = S>) {
        for list in features {
            self.features.extend(
                list.as_ref()
                    .split([',', ' ', '\t', '\n'])
                    .filter(|f| !f.is_empty())
                    .map(str::to_string),
            );
        }
        self.features.sort();
        self.features.dedup();
    }

    /// Refuses a rustflag the build sets itself ([`BuildError::ReservedRustflag`]).
    pub(crate) fn check_rustflags(&self) -> Result<(), BuildError> {
        let refuse =
            |flag: String, reason: &'static str| BuildError::ReservedRustflag { flag, reason };
        let mut flags = self.rustflags.iter().map(|f| f.trim());
        while let Some(flag) = flags.next() {
            // `-Cname=v`, `-C name=v`, `--codegen name=v`, `--codegen=name=v`.
            let codegen = if flag == "-C" || flag == "--codegen" {
                flags
                    .next()
                    .map(|value| (format!("{flag} {value}"), value.to_string()))
            } else {
                flag.strip_prefix("--codegen=")
                    .or_else(|| flag.strip_prefix("-C"))
                    .map(|value| (flag.to_string(), value.trim_start().to_string()))
            };
            if let Some((whole, value)) = codegen {
                let name = value
                    .split('=')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .replace('_', "-");
                if let Some((_, reason)) = RESERVED_CODEGEN.iter().find(|(n, _)| *n == name) {
                    return Err(refuse(whole, reason));
                }
                continue;
            }
            // `--emit=asm`, `--emit asm`, `-o file`, `-ofile`.
            let name = flag.split(['=', ' ']).next().unwrap_or(flag);
            let reserved = RESERVED_FLAGS.iter().find(|(n, _)| {
                *n == name || (*n == "-o" && name.starts_with("-o") && !name.starts_with("--"))
            });
            if let Some((_, reason)) = reserved {
                return Err(refuse(flag.to_string(), reason));
            }
        }
        Ok(())
    }

    /// Refuses a feature the kernel crate `krate` does not declare
    /// ([`BuildError::UnknownFeature`]); a dependency's feature (`dep/feature`) is cargo's to
    /// check.
    pub(crate) fn check_features(
        &self,
        krate: &str,
        declared: &[String],
    ) -> Result<(), BuildError> {
        match self
            .features
            .iter()
            .find(|f| !f.contains('/') && !declared.contains(f))
        {
            Some(feature) => Err(BuildError::UnknownFeature {
                feature: feature.clone(),
                krate: krate.to_string(),
                declared: if declared.is_empty() {
                    "none".into()
                } else {
                    declared.join(", ")
                },
            }),
            None => Ok(()),
        }
    }

    /// `CARGO_ENCODED_RUSTFLAGS` of the build of `arch`: the target CPU, then the extra flags.
    pub(crate) fn encoded_rustflags(&self, arch: Arch) -> String {
        std::iter::once(format!("-Ctarget-cpu={arch}"))
            .chain(self.rustflags.iter().cloned())
            .collect::<Vec<_>>()
            .join("\u{1f}")
    }

    /// The arguments before `--` that select the features (none without features).
    pub(crate) fn cargo_args(&self) -> Vec<String> {
        if self.features.is_empty() {
            return Vec::new();
        }
        vec!["--features".into(), self.features.join(",")]
    }

    /// The release profile's `debug` setting (`CARGO_PROFILE_RELEASE_DEBUG`).
    pub(crate) fn profile_debug(&self) -> &'static str {
        if self.debug { DEBUG_INFO } else { "false" }
    }

    /// The options as the prebuilt digest reads them: one line each, the same for the same
    /// build whatever order the features were given in.
    pub(crate) fn digest_text(&self) -> String {
        format!(
            "debug={}\nfeatures={}\nrustflags={}\n",
            self.debug,
            self.features.join(","),
            self.rustflags.join("\u{1f}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_flags(flags: &[&str]) -> KernelOptions {
        KernelOptions {
            rustflags: flags.iter().map(|f| f.to_string()).collect(),
            ..KernelOptions::default()
        }
    }

    #[test]
    fn reserved_rustflags_are_refused_by_name() {
        for (flags, named) in [
            (&["-Ctarget-cpu=sm_80"][..], "-Ctarget-cpu=sm_80"),
            (&["-C", "target-cpu=sm_80"], "-C target-cpu=sm_80"),
            (&["-C target-cpu=sm_80"], "-C target-cpu=sm_80"),
            (
                &["--codegen", "target_cpu=sm_80"],
                "--codegen target_cpu=sm_80",
            ),
            (&["--codegen=lto=thin"], "--codegen=lto=thin"),
            (&["-Ccodegen-units=16"], "-Ccodegen-units=16"),
            (&["-Cpanic=unwind"], "-Cpanic=unwind"),
            (&["-Cdebuginfo=2"], "-Cdebuginfo=2"),
            (&["-g"], "-g"),
            (&["--cfg", "x", "--emit=llvm-ir"], "--emit=llvm-ir"),
            (
                &["--target=x86_64-unknown-linux-gnu"],
                "--target=x86_64-unknown-linux-gnu",
            ),
            (&["-ofoo.s"], "-ofoo.s"),
            (&["-Clinker=cc"], "-Clinker=cc"),
        ] {
            let e = with_flags(flags).check_rustflags().unwrap_err();
            match &e {
                BuildError::ReservedRustflag { flag, .. } => assert_eq!(flag, named, "{flags:?}"),
                other => panic!("{flags:?}: {other}"),
            }
            let text = e.to_string();
            assert!(text.contains(&format!("`{named}`")), "{text}");
        }
        let e = with_flags(&["-Ctarget-cpu=sm_80"])
            .check_rustflags()
            .unwrap_err();
        assert!(e.to_string().contains("Builder::archs"), "{e}");
    }

    #[test]
    fn other_rustflags_pass_and_follow_the_target_cpu() {
        let options = with_flags(&[
            "--cfg",
            "my_cfg",
            "-Ctarget-feature=+ptx80",
            "-C",
            "opt-level=2",
            "-Zinline-mir",
            "--remap-path-prefix=/home/me=.",
            "-Cllvm-args=-nvptx-sched4reg",
        ]);
        options.check_rustflags().unwrap();
        assert_eq!(
            options.encoded_rustflags(Arch(90)),
            "-Ctarget-cpu=sm_90\u{1f}--cfg\u{1f}my_cfg\u{1f}-Ctarget-feature=+ptx80\u{1f}-C\u{1f}\
             opt-level=2\u{1f}-Zinline-mir\u{1f}--remap-path-prefix=/home/me=.\u{1f}\
             -Cllvm-args=-nvptx-sched4reg"
        );
        assert_eq!(
            KernelOptions::default().encoded_rustflags(Arch(70)),
            "-Ctarget-cpu=sm_70"
        );
    }

    #[test]
    fn features_are_split_sorted_and_checked() {
        let mut options = KernelOptions::default();
        options.add_features(["f16,tiles", "fast"]);
        options.add_features(["tiles gpu_std/extra"]);
        assert_eq!(options.features, ["f16", "fast", "gpu_std/extra", "tiles"]);
        assert_eq!(
            options.cargo_args(),
            ["--features", "f16,fast,gpu_std/extra,tiles"]
        );
        assert!(KernelOptions::default().cargo_args().is_empty());
        let declared: Vec<String> = ["f16", "fast", "tiles"].map(String::from).to_vec();
        options.check_features("my-kernels", &declared).unwrap();
        let e = options
            .check_features("my-kernels", &declared[..2])
            .unwrap_err();
        assert!(
            matches!(&e, BuildError::UnknownFeature { feature, .. } if feature == "tiles"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "the kernel crate my-kernels has no feature `tiles` (its features: f16, fast)"
        );
        let e = options.check_features("k", &[]).unwrap_err().to_string();
        assert!(e.ends_with("(its features: none)"), "{e}");
    }

    #[test]
    fn debug_is_line_directives_only() {
        let debug = KernelOptions {
            debug: true,
            ..KernelOptions::default()
        };
        assert_eq!(debug.profile_debug(), "line-directives-only");
        assert_eq!(KernelOptions::default().profile_debug(), "false");
    }

    /// Every option changes the digest's text, and the order features were given in does not.
    #[test]
    fn every_option_enters_the_digest() {
        let plain = KernelOptions::default();
        let mut debug = plain.clone();
        debug.debug = true;
        let mut features = plain.clone();
        features.add_features(["b", "a"]);
        let mut reordered = plain.clone();
        reordered.add_features(["a,b"]);
        let rustflags = with_flags(&["--cfg", "x"]);
        let split = with_flags(&["--cfg x"]);
        let texts = [&plain, &debug, &features, &rustflags, &split].map(KernelOptions::digest_text);
        for (i, a) in texts.iter().enumerate() {
            for b in &texts[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(features.digest_text(), reordered.digest_text());
    }
}
