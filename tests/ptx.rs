//! The embedded kernels, checked on any machine: one PTX module per top-level module of the
//! `gpu` crate, each with PTX for every architecture (the right `.target`, no unresolved
//! external function) and, from the prebuilt kernels, SASS for sm_80 and sm_90; an `.entry`
//! for every typed kernel handle, in the module of its Rust module, with the same parameters
//! (count, order, byte sizes), and a handle for every `.entry`.

use cpu::kernel::{KERNELS, KernelInfo};
use cpu::ptx::KERNELS as TABLE;
use gpu_host::ImageFormat;
use ptx_builder::{Arch, EntryParam, entry_params, module_of_path, validate_ptx};

/// `(sm, every module's PTX for it)` for each embedded PTX architecture, decompressed.
fn ptx_by_arch() -> Vec<(u32, Vec<(&'static str, String)>)> {
    TABLE
        .ptx_sms()
        .into_iter()
        .map(|sm| (sm, TABLE.ptx_texts(sm).unwrap_or_else(|e| panic!("{e}"))))
        .collect()
}

/// Every module's PTX for each architecture, as one text (the entries of all of them).
fn whole_by_arch() -> Vec<(u32, String)> {
    ptx_by_arch()
        .into_iter()
        .map(|(sm, modules)| (sm, modules.into_iter().map(|(_, t)| t).collect()))
        .collect()
}

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
    assert!(TABLE.modules.len() >= 10, "{} modules", TABLE.modules.len());
    let sass = TABLE
        .modules
        .iter()
        .any(|m| m.images.iter().any(|i| i.format == ImageFormat::Cubin));
    for module in TABLE.modules {
        let of = |format| -> Vec<u32> {
            module
                .images
                .iter()
                .filter(|i| i.format == format)
                .map(|i| i.sm)
                .collect()
        };
        let ptx = of(ImageFormat::Ptx);
        assert!(!ptx.is_empty(), "{}: no PTX embedded", module.name);
        assert!(
            ptx.windows(2).all(|w| w[0] < w[1]),
            "{}: {ptx:?}",
            module.name
        );
        if std::env::var_os("GPU_LAB_PTX_ARCHS").is_none() {
            assert_eq!(ptx, [70, 80, 90], "{}", module.name);
        }
        // SASS comes with the prebuilt kernels, for every module or none.
        if sass {
            assert_eq!(of(ImageFormat::Cubin), [80, 90], "{}", module.name);
        }
    }
}

#[test]
fn every_ptx_targets_its_arch_and_is_self_contained() {
    for (arch, modules) in ptx_by_arch() {
        for (module, text) in modules {
            validate_ptx(Arch(arch), &text).unwrap_or_else(|e| panic!("{module}: {e}"));
            assert!(
                text.contains(".address_size 64"),
                "sm_{arch} {module}: not 64-bit"
            );
        }
    }
}

/// Each kernel is in the module of its Rust module (`gpu::sort::...` in `sort`), in one module
/// only, and the table records the parameters its PTX declares.
#[test]
fn every_kernel_is_in_the_module_of_its_rust_module() {
    for handle in handles() {
        let module = TABLE
            .module_of(handle.name)
            .unwrap_or_else(|| panic!("{} is in no module", handle.name));
        assert_eq!(
            module.name,
            module_of_path("gpu", handle.module),
            "{}",
            handle.name
        );
    }
    for (arch, modules) in ptx_by_arch() {
        let mut seen: Vec<&str> = Vec::new();
        for (name, text) in &modules {
            let table = TABLE.module(name).expect("a module of the table");
            let entries = entry_params(text).unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
            let recorded: Vec<(&str, Vec<usize>)> = table
                .entries
                .iter()
                .map(|e| (e.name, e.params.to_vec()))
                .collect();
            let read: Vec<(&str, Vec<usize>)> = entries
                .iter()
                .map(|(n, p)| (*n, p.iter().map(|p: &EntryParam| p.bytes).collect()))
                .collect();
            assert_eq!(recorded, read, "sm_{arch} {name}");
            for (entry, _) in entries {
                assert!(!seen.contains(&entry), "sm_{arch}: {entry} in two modules");
                seen.push(entry);
            }
        }
    }
    gpu_host::Library::check(&TABLE).unwrap_or_else(|e| panic!("{e}"));
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
    for (arch, text) in whole_by_arch() {
        let entries = entry_params(&text).unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
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
    for (arch, text) in whole_by_arch() {
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

/// A kernel declared `#[kernel(min_sm = SM)]` has, in the PTX of every architecture below
/// `sm_SM`, an entry whose body is a trap (no tensor-core instruction anywhere in that PTX of
/// its module), and from `sm_SM` on the instructions it is written with: the `gpu::gemm` tiles'
/// `mma.sync` and `ldmatrix`.
#[test]
fn min_sm_kernels_trap_below_their_architecture() {
    let gated: Vec<(&str, u32)> = handles()
        .into_iter()
        .filter_map(|h| Some((h.name, h.min_sm?)))
        .collect();
    assert!(
        gated
            .iter()
            .any(|(n, sm)| *n == "gemm_tile_f16" && *sm == 80),
        "{gated:?}"
    );
    let instructions = [
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
        "cvt.rna.tf32.f32",
    ];
    for (arch, text) in whole_by_arch() {
        for (name, sm) in &gated {
            let start = text
                .find(&format!(".entry {name}("))
                .unwrap_or_else(|| panic!("sm_{arch}: no .entry {name}"));
            let body = &text[start..];
            let body = &body[..body.find("\n}").unwrap_or(body.len())];
            if arch < *sm {
                assert!(body.contains("trap;"), "sm_{arch}: {name} does not trap");
            }
        }
        let gemm = ptx_by_arch()
            .into_iter()
            .find(|(a, _)| *a == arch)
            .and_then(|(_, m)| m.into_iter().find(|(m, _)| *m == "gemm"))
            .expect("the gemm module")
            .1;
        for instruction in instructions {
            assert_eq!(
                gemm.contains(instruction),
                arch >= 80,
                "sm_{arch}: `{instruction}` in the gemm module's PTX"
            );
        }
    }
}

#[test]
fn constant_and_shared_declarations_are_present() {
    for (arch, modules) in ptx_by_arch() {
        let text = &modules
            .iter()
            .find(|(m, _)| *m == "smoke")
            .expect("the smoke module")
            .1;
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
    for (arch, text) in whole_by_arch() {
        let entries = entry_params(&text).unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
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
    let whole = whole_by_arch();
    for (arch, text) in &whole {
        cpu::Module::check("gpu", text).unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
    }
    let text = &whole.last().unwrap().1;
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
    // The table's check: a module without one of the crate's entries is refused the same way.
    static PARTIAL: gpu_host::KernelTable = gpu_host::KernelTable {
        krate: "gpu",
        modules: &[],
    };
    let e = gpu_host::Library::check(&PARTIAL).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::StalePtx {
                mismatch: EntryMismatch::Missing { .. },
                ..
            }
        ),
        "{e:?}"
    );
    static NONE: gpu_host::KernelTable = gpu_host::KernelTable {
        krate: "no_such_crate",
        modules: &[],
    };
    let e = gpu_host::Library::check(&NONE).unwrap_err();
    assert!(matches!(e, Error::NoKernels { .. }), "{e:?}");
    // Every handle knows its crate.
    let all: Vec<&'static KernelInfo> = handles();
    assert!(
        all.iter().all(|k| k.crate_name() == "gpu"),
        "{:?}",
        all.iter().map(|k| k.module).collect::<Vec<_>>()
    );
}
