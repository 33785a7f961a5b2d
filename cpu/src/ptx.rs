//! The PTX embedded at build time (by `build.rs`, through the same builder as
//! `cargo xtask build-ptx`) and the choice of which one a device loads.

/// PTX of the `gpu` crate per architecture, ascending: `(sm, text)`.
pub static PTX_BY_ARCH: &[(u32, &str)] = include!(concat!(env!("OUT_DIR"), "/gpu_ptx.rs"));

/// The PTX for the highest architecture not above compute capability `major.minor`, as
/// `(sm, text)`: an H100 (9.0) gets `sm_90`, an A100 (8.0) the portable `sm_70`.
/// `None` if every embedded architecture is newer than the device.
pub fn for_compute_capability(major: i32, minor: i32) -> Option<(u32, &'static str)> {
    gpu_host::pick_ptx(PTX_BY_ARCH, major, minor)
}

/// The embedded architectures, e.g. `"sm_70, sm_90"`.
pub fn built_archs() -> String {
    PTX_BY_ARCH
        .iter()
        .map(|(a, _)| format!("sm_{a}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_highest_arch_not_above_the_device() {
        let lowest = PTX_BY_ARCH[0].0;
        let highest = PTX_BY_ARCH[PTX_BY_ARCH.len() - 1].0;
        assert_eq!(for_compute_capability(12, 0).unwrap().0, highest);
        assert_eq!(
            for_compute_capability((lowest / 10) as i32, (lowest % 10) as i32)
                .unwrap()
                .0,
            lowest
        );
        assert!(for_compute_capability(6, 1).is_none());
    }
}
