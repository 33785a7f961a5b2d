//! The lab's kernels as the build embedded them (by `build.rs`, through the same builder as
//! `cargo xtask build-ptx`): one PTX module per pattern (per top-level module of the `gpu`
//! crate: `vector_add`, `reduce`, `sort`, ...), each as PTX for sm_70, sm_80 and sm_90 and, from the
//! prebuilt kernels, SASS for sm_80 and sm_90, zstd-compressed. [`Gpu`](crate::Gpu) loads a
//! module the first time one of its kernels is launched.

/// The `gpu` crate's kernel table.
pub static KERNELS: gpu_host::KernelTable = gpu_host::include_kernels!("gpu_kernels.rs");

/// The embedded architectures, e.g. `"sm_70 PTX, sm_80 SASS, sm_90 PTX, sm_90 SASS"`.
pub fn built_archs() -> String {
    KERNELS
        .modules
        .first()
        .map(|m| {
            m.images
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_has_ptx_for_the_default_architectures() {
        assert!(
            KERNELS.modules.len() >= 10,
            "{} modules",
            KERNELS.modules.len()
        );
        for module in KERNELS.modules {
            assert_eq!(
                module.pick(7, 0, true).map(|i| i.sm),
                Some(70),
                "{}",
                module.name
            );
            assert_eq!(
                module.pick(12, 0, true).map(|i| i.sm),
                Some(90),
                "{}",
                module.name
            );
            // Without SASS, an sm_86 device JIT-compiles the sm_80 PTX (the tensor-core
            // kernels' bodies are there, not sm_70's traps).
            assert_eq!(
                module.pick(8, 6, false).map(|i| i.sm),
                Some(80),
                "{}",
                module.name
            );
            assert!(module.pick(6, 1, true).is_none());
        }
        assert!(built_archs().starts_with("sm_70 PTX"), "{}", built_archs());
    }
}
