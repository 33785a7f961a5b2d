//! The embedded PTX, checked on any machine: one file per architecture, each with the right
//! `.target`, no unresolved external function, and an `.entry` for every typed kernel handle
//! with the same parameters (count, order, byte sizes), and a handle for every `.entry`.

use cpu::kernel::{KERNELS, KernelInfo};
use cpu::ptx::PTX_BY_ARCH;
use ptx_builder::{Arch, EntryParam, entry_params, validate_ptx};

/// Every kernel the host has a typed handle for (`#[kernel]` lists them all at link time),
/// by name.
fn handles() -> Vec<&'static KernelInfo> {
    // The test refers to the crate so that its handles are linked in.
    let _ = gpu::saxpy::kernels::saxpy;
    let mut all: Vec<&'static KernelInfo> = KERNELS.iter().collect();
    all.sort_by_key(|k| k.name);
    all
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
fn kernel_names_are_unique() {
    let all = handles();
    assert!(all.len() >= 80, "only {} kernel handles linked", all.len());
    for pair in all.windows(2) {
        assert_ne!(pair[0].name, pair[1].name, "two handles for one entry");
    }
}

/// Both ways: every handle has its `.entry` with the same parameters (count, order, byte
/// sizes), and every `.entry` has its handle.
#[test]
fn every_entry_matches_its_handle() {
    let all = handles();
    for (arch, text) in PTX_BY_ARCH {
        let entries = entry_params(text).unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
        for handle in &all {
            let Some((_, params)) = entries.iter().find(|(name, _)| *name == handle.name) else {
                panic!("sm_{arch}: no .entry {} for its handle", handle.name);
            };
            let ptx: Vec<usize> = params.iter().map(|p: &EntryParam| p.bytes).collect();
            let host: Vec<usize> = handle.params.iter().map(|p| p.bytes).collect();
            assert_eq!(
                ptx, host,
                "sm_{arch}: .entry {} takes parameters of {ptx:?} bytes, its handle {host:?} ({:?})",
                handle.name, handle.params
            );
        }
        for (entry, _) in &entries {
            assert!(
                all.iter().any(|h| h.name == *entry),
                "sm_{arch}: .entry {entry} has no typed handle"
            );
        }
    }
}

/// A kernel declared with `#[kernel(launch_bounds(T, B))]` carries `.maxntid T, 1, 1` and
/// `.minnctapersm B` in every PTX.
#[test]
fn launch_bounds_reach_the_ptx() {
    let bounded: Vec<_> = handles()
        .into_iter()
        .filter_map(|h| Some((h.name, h.launch_bounds?)))
        .collect();
    for (arch, text) in PTX_BY_ARCH {
        for (name, (threads, blocks)) in &bounded {
            let start = text
                .find(&format!(".entry {name}("))
                .unwrap_or_else(|| panic!("sm_{arch}: no .entry {name}"));
            let body = &text[start..];
            let header = &body[..body.find('{').unwrap_or(body.len())];
            assert!(
                header.contains(&format!(".maxntid {threads}, 1, 1"))
                    && header.contains(&format!(".minnctapersm {blocks}")),
                "sm_{arch}: {name} lacks its launch bounds ({threads}, {blocks}):\n{header}"
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

/// The compaction kernels of every element type `cpu::scan` offers are linked, and each
/// `.entry` takes the ten parameters of `(input, n, op, lower, upper, output, count, status,
/// counter, epoch)`, the bounds of the element's four bytes.
#[test]
fn every_select_element_has_its_kernel_with_two_bounds() {
    use cpu::scan::SelectElement;
    let names = [
        <f32 as SelectElement>::SELECT.name(),
        <i32 as SelectElement>::SELECT.name(),
        <u32 as SelectElement>::SELECT.name(),
    ];
    assert_eq!(names, ["select_if_f32", "select_if_i32", "select_if_u32"]);
    for (arch, text) in PTX_BY_ARCH {
        let entries = entry_params(text).unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
        for name in names {
            let Some((_, params)) = entries.iter().find(|(entry, _)| *entry == name) else {
                panic!("sm_{arch}: no .entry {name}");
            };
            let bytes: Vec<usize> = params.iter().map(|p: &EntryParam| p.bytes).collect();
            assert_eq!(bytes, [8, 8, 4, 4, 4, 8, 8, 8, 8, 4], "sm_{arch}: {name}");
        }
    }
}

/// The loader's check ([`cpu::Module::check`]) on any machine: the lab's own PTX matches every
/// handle of the crate `gpu`; a PTX whose entry takes another parameter size, or lacks an
/// entry, is refused with a typed error naming the kernel and the parameter; a crate with no
/// linked kernel is refused.
#[test]
fn the_loader_refuses_a_stale_ptx() {
    use cpu::kernel::KernelInfo;
    use gpu_host::Error;
    use gpu_std::host::EntryMismatch;
    let _ = handles();
    for (arch, text) in PTX_BY_ARCH {
        cpu::Module::check("gpu", text).unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
    }
    let (_, text) = PTX_BY_ARCH.last().unwrap();
    // saxpy(a: f32, x: &[f32], y: *mut f32): make `a` an 8-byte parameter, as a PTX built from
    // another signature would have it.
    let start = text
        .find(".visible .entry saxpy(")
        .expect("the saxpy entry");
    let first = start
        + text[start..]
            .find(".param .f32")
            .expect("saxpy's f32 parameter");
    let stale = format!(
        "{}.param .u64{}",
        &text[..first],
        &text[first + ".param .f32".len()..]
    );
    match cpu::Module::check("gpu", &stale) {
        Err(Error::StalePtx {
            mismatch:
                EntryMismatch::Parameter {
                    kernel: "saxpy",
                    index: 0,
                    name: Some("a"),
                    handle_bytes: Some(4),
                    ptx_bytes: Some(8),
                },
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    let renamed = text.replace(".entry saxpy(", ".entry saxpy_old(");
    let e = cpu::Module::check("gpu", &renamed).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::StalePtx {
                mismatch: EntryMismatch::Missing { kernel: "saxpy" },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("no `.entry saxpy`"), "{e}");
    let e = cpu::Module::check("no_such_crate", text).unwrap_err();
    assert!(matches!(e, Error::NoKernels { .. }), "{e:?}");
    // Every handle knows its crate.
    let all: Vec<&'static KernelInfo> = handles();
    assert!(
        all.iter().all(|k| k.crate_name() == "gpu"),
        "{:?}",
        all.iter().map(|k| k.module).collect::<Vec<_>>()
    );
}
