//! The pattern registry: one row per pattern, the only list of them. It drives `demo list`,
//! `demo all` (its order), the bundle's `run.sh` (`demo list --names` and
//! `demo list --sanitize-args`, read by `cargo xtask bundle`) and the PTX test (every kernel
//! named here is an `.entry` of every PTX, and every `.entry` is named here).
//!
//! Adding a pattern: its kernels (`gpu`), its library module (`cpu`), its subcommand
//! (`Pattern` in `cli.rs`) and demo module, a row here, tests and docs. The unit
//! tests below fail until the subcommand and the row agree.

use clap::{CommandFactory, ValueEnum};
use comfy_table::{Table, presets::ASCII_MARKDOWN};
use cpu::lab::memory::{
    bandwidth, bank_conflicts, coalescing, constant_memory, layout, registers, shared_memory,
    texture,
};
use cpu::lab::{md, smoke};
use cpu::reduce::{self, square_sum};
use cpu::{convolution, multi_gpu, transpose, vector_add};

use crate::cli::Cli;

/// One variant of a pattern, as `demo list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantInfo {
    /// The variant's name (the library's `Variant` name, kebab-case, where it has one).
    pub name: String,
    /// The `.entry` names it launches: several for a family with one entry per block size or
    /// mask width; none for a copy the driver does.
    pub kernels: Vec<&'static str>,
}

/// One pattern: what every tool that iterates the patterns needs to know of it.
#[derive(Debug)]
pub struct PatternInfo {
    /// The subcommand (`demo <name>`), the report section and the `run.sh` name.
    pub name: &'static str,
    /// Its variants and their kernels, in the order the demo runs them.
    pub variants: fn() -> Vec<VariantInfo>,
    /// The arguments (after the name) compute-sanitizer runs it with: small sizes that still
    /// cover partial blocks and tiles. Several cases where the kernel launched depends on an
    /// argument (the vec4 convolutions' mask widths).
    pub sanitize: fn() -> Vec<String>,
}

impl PatternInfo {
    /// What the pattern runs: its subcommand's help line.
    pub fn summary(&self) -> String {
        Cli::command()
            .find_subcommand(self.name)
            .and_then(|c| c.get_about().map(|a| a.to_string()))
            .unwrap_or_default()
    }

    /// Why `demo all` cannot run the pattern on this machine (a run-time library it needs is
    /// absent), or `None`. Asked for by name (`demo multi-gpu`), the pattern still runs and
    /// fails with the library's error.
    pub fn unavailable(&self) -> Option<String> {
        match self.name {
            "multi-gpu" if !multi_gpu::nccl_available() => Some(format!(
                "NCCL could not be loaded (looked for {})",
                multi_gpu::nccl_library_names().join(", ")
            )),
            _ => None,
        }
    }

    /// Every `.entry` its variants launch, each once.
    pub fn kernels(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        for v in (self.variants)() {
            for k in v.kernels {
                if !names.contains(&k) {
                    names.push(k);
                }
            }
        }
        names
    }
}

/// Every pattern, in the order `demo all` and `run.sh demo` run them.
pub static PATTERNS: &[PatternInfo] = &[
    PatternInfo {
        name: "vector-add",
        variants: || one_kernel_each(&vector_add::Variant::ALL, |v| v.kernel_name()),
        sanitize: || vec!["--size 100003".into()],
    },
    PatternInfo {
        name: "transpose",
        variants: || one_kernel_each(&transpose::Variant::ALL, |v| v.kernel_name()),
        // Multiples of 4 (the aligned vec4 kernel) and an odd shape (every row shift of the
        // any-shape kernel), both with partial tiles on both edges; two thin shapes (the thin
        // kernel, short side 12: blocks of 3 x 85 threads, the last block partial), short-wide
        // and tall-narrow.
        sanitize: || {
            vec![
                "--rows 1020 --cols 516".into(),
                "--rows 1021 --cols 517".into(),
                "--rows 12 --cols 1028".into(),
                "--rows 1028 --cols 12".into(),
            ]
        },
    },
    PatternInfo {
        name: "reduce",
        variants: reduce_variants,
        sanitize: || vec!["--size 100003 --block 256".into()],
    },
    PatternInfo {
        name: "square-sum",
        variants: || one_kernel_each(&square_sum::Variant::ALL, |v| v.kernel_name()),
        sanitize: || vec!["--size 100003".into()],
    },
    PatternInfo {
        name: "conv1d",
        variants: || {
            kernels_each(&convolution::Variant1d::ALL, |v| {
                widths(convolution::MAX_MASK_WIDTH, |w| v.entry(w))
            })
        },
        sanitize: || {
            mask_width_cases(
                "--size 100003",
                7,
                "--size 20011",
                convolution::MAX_MASK_WIDTH,
            )
        },
    },
    PatternInfo {
        name: "conv2d",
        variants: || {
            kernels_each(&convolution::Variant2d::ALL, |v| {
                widths(convolution::MAX_MASK_WIDTH_2D, |w| v.entry(w))
            })
        },
        sanitize: || {
            // 1023 columns: the scalar edge path (rows not a multiple of 4 floats); 300
            // columns: `float4` rows whose inner tiles take the interior paths.
            mask_width_cases(
                "--rows 517 --cols 1023",
                5,
                "--rows 203 --cols 300",
                convolution::MAX_MASK_WIDTH_2D,
            )
        },
    },
    PatternInfo {
        name: "md",
        variants: || {
            let mut v: Vec<VariantInfo> = md::Method::ALL
                .iter()
                .map(|m| variant(format!("cpu-{}", m.name()), &[]))
                .collect();
            v.extend(md::GpuKernel::ALL.iter().map(|k| {
                let kernel = k.kernel_name();
                variant(kernel.replace('_', "-"), &[kernel])
            }));
            v
        },
        sanitize: || vec!["--cells 3 --steps 10 --threads 2".into()],
    },
    PatternInfo {
        name: "registers",
        variants: || one_kernel_each(&registers::Variant::ALL, |v| v.kernel_name()),
        sanitize: || vec!["--size 100003".into()],
    },
    PatternInfo {
        name: "shared-memory",
        variants: || one_kernel_each(&shared_memory::Variant::ALL, |v| v.kernel_name()),
        sanitize: || vec!["--size 100096".into()],
    },
    PatternInfo {
        name: "bank-conflicts",
        variants: || {
            bank_conflicts::PATTERNS
                .iter()
                .map(|p| variant(p.name, bank_conflicts::KERNELS))
                .collect()
        },
        sanitize: || vec!["--accesses 64".into()],
    },
    PatternInfo {
        name: "constant-memory",
        variants: || {
            let mut v = one_kernel_each(&constant_memory::Variant::ALL, |v| v.kernel_name());
            v.push(variant(
                "dev-var (seed example)",
                &[gpu::memory::constant_memory::kernels::constant_memory_dev_var.name()],
            ));
            v
        },
        sanitize: || vec!["--size 100003 --reads 64".into()],
    },
    PatternInfo {
        name: "device-globals",
        variants: || {
            use gpu::memory::device_globals::kernels;
            vec![
                variant("by-symbol", &[kernels::device_globals_add_symbols.name()]),
                variant("by-pointer", &[kernels::device_globals_add_pointers.name()]),
            ]
        },
        sanitize: || vec![String::new()],
    },
    PatternInfo {
        name: "coalescing",
        variants: coalescing_variants,
        sanitize: || vec!["--size 100003".into()],
    },
    PatternInfo {
        name: "layout",
        variants: || one_kernel_each(&layout::Variant::ALL, |v| v.kernel_name()),
        sanitize: || vec!["--size 100003".into()],
    },
    PatternInfo {
        name: "bandwidth",
        variants: bandwidth_variants,
        sanitize: || vec!["--max-size 1048576 --launches 50".into()],
    },
    PatternInfo {
        name: "texture",
        variants: || one_kernel_each(&texture::Variant::ALL, |v| v.kernel_name()),
        sanitize: || vec!["--size 100003 --table 4099".into()],
    },
    PatternInfo {
        name: "multi-gpu",
        variants: || kernels_each(&multi_gpu::Variant::ALL, |v| v.kernel_names().to_vec()),
        sanitize: || vec!["--size 100003 --max-bytes 1048576".into()],
    },
    PatternInfo {
        name: "smoke",
        variants: || one_kernel_each(&smoke::Variant::ALL, |v| v.kernel_name()),
        sanitize: || vec!["--size 20000".into()],
    },
];

/// The pattern named `name`.
pub fn find(name: &str) -> Option<&'static PatternInfo> {
    PATTERNS.iter().find(|p| p.name == name)
}

/// Every `.entry` any pattern launches, each once.
pub fn kernel_names() -> Vec<&'static str> {
    let mut names = Vec::new();
    for k in PATTERNS.iter().flat_map(PatternInfo::kernels) {
        if !names.contains(&k) {
            names.push(k);
        }
    }
    names
}

/// The kebab-case name clap gives a `Variant`.
pub(crate) fn variant_name(v: impl ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

fn variant(name: impl Into<String>, kernels: &[&'static str]) -> VariantInfo {
    VariantInfo {
        name: name.into(),
        kernels: kernels.to_vec(),
    }
}

fn kernels_each<V: ValueEnum + Copy>(
    all: &[V],
    kernels: impl Fn(V) -> Vec<&'static str>,
) -> Vec<VariantInfo> {
    all.iter()
        .map(|&v| VariantInfo {
            name: variant_name(v),
            kernels: kernels(v),
        })
        .collect()
}

fn one_kernel_each<V: ValueEnum + Copy>(
    all: &[V],
    kernel: impl Fn(V) -> &'static str,
) -> Vec<VariantInfo> {
    kernels_each(all, |v| vec![kernel(v)])
}

/// The entries `entry` gives for every odd mask width up to `max`, each once.
fn widths(max: usize, entry: impl Fn(usize) -> &'static str) -> Vec<&'static str> {
    let mut names = Vec::new();
    for w in (1..=max).step_by(2) {
        let name = entry(w);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The sanitizer cases of a convolution: `args` at the default `width`, then `small` at every
/// other odd width (the vec4 kernels are one entry per width).
fn mask_width_cases(args: &str, width: usize, small: &str, max: usize) -> Vec<String> {
    let mut cases = vec![format!("{args} --mask-width {width}")];
    cases.extend(
        (1..=max)
            .step_by(2)
            .filter(|&w| w != width)
            .map(|w| format!("{small} --mask-width {w}")),
    );
    cases
}

/// The seed kernels (the template once per block size it is instantiated for), then the
/// `reduce_sum` kernels.
fn reduce_variants() -> Vec<VariantInfo> {
    let blocks = (0..=10).map(|b| 1u32 << b);
    let mut v = kernels_each(&reduce::seed::Variant::ALL, |v| {
        let mut names: Vec<&'static str> = Vec::new();
        for name in blocks.clone().filter_map(|b| v.kernel_for(b)) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    });
    v.extend(reduce::SumVariant::ALL.iter().map(|&s| {
        variant(
            format!("reduce-sum-{}", variant_name(s)),
            &[s.kernel_name()],
        )
    }));
    v
}

/// Both sweeps (misaligned, strided), each through both load paths.
fn coalescing_variants() -> Vec<VariantInfo> {
    use coalescing::{Access, Load};
    let mut v = Vec::new();
    for (sweep, access) in [
        ("misaligned", Access::Offset(0)),
        ("strided", Access::Stride(1)),
    ] {
        for load in Load::ALL {
            v.push(variant(
                format!("{sweep} ld.{}", variant_name(load)),
                &[access.kernel_name(load)],
            ));
        }
    }
    v
}

/// The host memory kinds (driver copies, and the zero-copy kernel), device to device, the
/// empty kernel of the launch overhead, and the read stream of the read-only ceiling.
fn bandwidth_variants() -> Vec<VariantInfo> {
    use gpu::memory::bandwidth::kernels::{bandwidth_copy_v4, bandwidth_empty_kernel};
    let mut v: Vec<VariantInfo> = bandwidth::HostMemory::ALL
        .iter()
        .map(|&kind| {
            if kind == bandwidth::HostMemory::ZeroCopy {
                variant(variant_name(kind), &[bandwidth_copy_v4.name()])
            } else {
                variant(format!("{} (driver copy)", variant_name(kind)), &[])
            }
        })
        .collect();
    v.push(variant("device-to-device memcpy (driver copy)", &[]));
    v.push(variant(
        "device-to-device copy kernel",
        &[bandwidth_copy_v4.name()],
    ));
    v.push(variant("launch overhead", &[bandwidth_empty_kernel.name()]));
    v.push(variant(
        "device read stream (read-only ceiling)",
        cpu::lab::memory::read_stream::KERNELS,
    ));
    v
}

/// A family of entries that differ in a trailing number (`..._w1`, `..._w3`) as
/// `..._w{1,3}`; other lists joined by commas.
fn compact(kernels: &[&str]) -> String {
    if kernels.is_empty() {
        return "-".into();
    }
    let first = kernels[0];
    let mut prefix = first.len();
    for k in &kernels[1..] {
        prefix = prefix.min(
            first
                .bytes()
                .zip(k.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    // The prefix must not end inside a number (`_1024`, `_128` share `_1`).
    let prefix = first[..prefix].trim_end_matches(|c: char| c.is_ascii_digit());
    let numbered = kernels.iter().all(|k| {
        let rest = &k[prefix.len()..];
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
    });
    if kernels.len() < 3 || !numbered {
        return kernels.join(", ");
    }
    let numbers: Vec<&str> = kernels.iter().map(|k| &k[prefix.len()..]).collect();
    format!("{prefix}{{{}}}", numbers.join(","))
}

/// `demo list`: the patterns and what they run, then every variant with its kernels; with
/// `names`, only the names; with `sanitize`, only the sanitizer cases (`PATTERN ARGS...`).
pub(crate) fn print_list(names: bool, sanitize: bool) {
    if names {
        for p in PATTERNS {
            println!("{}", p.name);
        }
        return;
    }
    if sanitize {
        for p in PATTERNS {
            for args in (p.sanitize)() {
                println!("{}", format!("{} {args}", p.name).trim_end());
            }
        }
        return;
    }
    let mut patterns = Table::new();
    patterns
        .load_preset(ASCII_MARKDOWN)
        .set_header(["pattern", "what it runs"]);
    let mut variants = Table::new();
    variants
        .load_preset(ASCII_MARKDOWN)
        .set_header(["pattern", "variant", "kernels"]);
    for p in PATTERNS {
        patterns.add_row([p.name.to_string(), p.summary()]);
        for v in (p.variants)() {
            variants.add_row([p.name.to_string(), v.name, compact(&v.kernels)]);
        }
    }
    println!("{patterns}\n\n{variants}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Pattern;
    use clap::Parser;

    /// The subcommands that are not patterns.
    const COMMANDS: [&str; 5] = ["list", "all", "render", "compare", "sweep"];

    #[test]
    fn every_subcommand_pattern_is_registered_and_vice_versa() {
        let command = Cli::command();
        let subcommands: Vec<&str> = command
            .get_subcommands()
            .map(|c| c.get_name())
            .filter(|n| *n != "help")
            .collect();
        for name in &subcommands {
            assert!(
                COMMANDS.contains(name) || find(name).is_some(),
                "demo {name} is a subcommand with no registry entry"
            );
        }
        for p in PATTERNS {
            assert!(
                subcommands.contains(&p.name),
                "registry entry {} has no subcommand",
                p.name
            );
            let cli = Cli::try_parse_from(["demo", p.name])
                .unwrap_or_else(|e| panic!("demo {} does not parse: {e}", p.name));
            assert!(
                !matches!(
                    cli.pattern,
                    Pattern::List { .. }
                        | Pattern::All
                        | Pattern::Render { .. }
                        | Pattern::Compare { .. }
                        | Pattern::Sweep { .. }
                ),
                "{} is a command, not a pattern",
                p.name
            );
            assert!(!p.summary().is_empty(), "{} has no help line", p.name);
        }
        for name in COMMANDS {
            assert!(find(name).is_none(), "{name} is a command, not a pattern");
        }
    }

    #[test]
    fn names_are_unique_and_every_pattern_has_kernels_and_sanitizer_cases() {
        for (i, p) in PATTERNS.iter().enumerate() {
            assert!(
                PATTERNS[..i].iter().all(|q| q.name != p.name),
                "{} twice",
                p.name
            );
            assert!(!(p.variants)().is_empty(), "{} has no variants", p.name);
            assert!(!p.kernels().is_empty(), "{} launches no kernel", p.name);
            assert!(
                !(p.sanitize)().is_empty(),
                "{} has no sanitizer case",
                p.name
            );
        }
    }

    #[test]
    fn sanitizer_cases_parse() {
        for p in PATTERNS {
            for args in (p.sanitize)() {
                let argv = ["demo", p.name].into_iter().chain(args.split_whitespace());
                if let Err(e) = Cli::try_parse_from(argv) {
                    panic!("demo {} {args}: {e}", p.name);
                }
            }
        }
    }

    #[test]
    fn the_memory_topics_name_every_kernel_of_cpu_memory() {
        let known = kernel_names();
        for k in cpu::lab::memory::kernel_names() {
            assert!(known.contains(&k), "{k} is in no registry entry");
        }
    }

    #[test]
    fn the_convolutions_sanitize_every_vec4_width() {
        let cases = (find("conv1d").unwrap().sanitize)();
        assert_eq!(cases.len(), convolution::MAX_MASK_WIDTH / 2 + 1);
        assert_eq!(cases[0], "--size 100003 --mask-width 7");
        let cases = (find("conv2d").unwrap().sanitize)();
        assert_eq!(cases.len(), convolution::MAX_MASK_WIDTH_2D / 2 + 1);
    }

    #[test]
    fn compact_families() {
        assert_eq!(compact(&[]), "-");
        assert_eq!(compact(&["a", "b"]), "a, b");
        assert_eq!(compact(&["k_w1", "k_w3", "k_w11"]), "k_w{1,3,11}");
        assert_eq!(compact(&["r_64", "r_128", "r_1024"]), "r_{64,128,1024}");
        assert_eq!(compact(&["x_a", "x_b", "x_c"]), "x_a, x_b, x_c");
    }
}
