//! The embedded PTX, checked on any machine: one file per architecture, each with the right
//! `.target`, no unresolved external function, and an `.entry` for every kernel the host knows.

use cpu::ptx::PTX_BY_ARCH;
use ptx_builder::{Arch, entry_names, validate_ptx};

fn host_kernel_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = cpu::vector_add::Variant::ALL
        .iter()
        .map(|v| v.kernel_name())
        .collect();
    names.extend(cpu::smoke::Variant::ALL.iter().map(|v| v.kernel_name()));
    names.extend(cpu::transpose::Variant::ALL.iter().map(|v| v.kernel_name()));
    names.extend(cpu::reduce::seed::Variant::all_kernel_names());
    names.extend(cpu::reduce::SumVariant::ALL.iter().map(|v| v.kernel_name()));
    names.extend(
        cpu::reduce::square_sum::Variant::ALL
            .iter()
            .map(|v| v.kernel_name()),
    );
    names.extend(cpu::memory::kernel_names());
    names.push(gpu::smoke::SMOKE_TRAP_OUT_OF_BOUNDS);
    // The kernel of docs/writing_a_kernel.md, launched by cpu/examples/04_your_own_kernel.rs.
    names.push(gpu::saxpy::SAXPY);
    names.extend(cpu::convolution::entry_names());
    names.extend(cpu::md::kernel_names());
    names
}

#[test]
fn default_architectures_are_embedded() {
    let archs: Vec<u32> = PTX_BY_ARCH.iter().map(|(a, _)| *a).collect();
    assert!(!archs.is_empty(), "no PTX embedded");
    assert!(
        archs.windows(2).all(|w| w[0] < w[1]),
        "architectures not ascending: {archs:?}"
    );
    if std::env::var_os("GPU_LAB_PTX_ARCHS").is_none() {
        assert_eq!(archs, [70, 90]);
    }
}

#[test]
fn every_ptx_targets_its_arch_and_is_self_contained() {
    for (arch, text) in PTX_BY_ARCH {
        validate_ptx(Arch(*arch), text).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.contains(".address_size 64"), "sm_{arch}: not 64-bit");
    }
}

#[test]
fn every_host_kernel_is_an_entry() {
    for (arch, text) in PTX_BY_ARCH {
        let entries = entry_names(text);
        for name in host_kernel_names() {
            assert!(
                entries.contains(&name),
                "sm_{arch}: no .entry {name} (entries: {entries:?})"
            );
        }
    }
}

#[test]
fn every_entry_is_known_to_the_host() {
    let known = host_kernel_names();
    for (arch, text) in PTX_BY_ARCH {
        for entry in entry_names(text) {
            assert!(
                known.contains(&entry),
                "sm_{arch}: .entry {entry} has no host launcher"
            );
        }
    }
}

#[test]
fn constant_and_shared_declarations_are_present() {
    for (arch, text) in PTX_BY_ARCH {
        let symbol = gpu::smoke::C_SMOKE_COEFFICIENTS::SYMBOL;
        let decl = format!(
            ".visible .const .align 8 .b8 {symbol}[{}]",
            gpu::smoke::C_SMOKE_COEFFICIENTS::BYTES
        );
        assert!(text.contains(&decl), "sm_{arch}: missing `{decl}`");
        assert!(
            text.contains(".shared .align 4 .b8 s_smoke_reverse[1024]"),
            "sm_{arch}: static shared array missing"
        );
    }
}
