//! The device's description, for the report of a run and of a sweep.

use anyhow::Result;
use cpu::Gpu;

use crate::engine::report::DeviceInfo;

/// The device's description for a report (name, clocks, theoretical bandwidth, L2, PTX).
pub(crate) fn info(gpu: &Gpu, index: usize) -> Result<DeviceInfo> {
    let (major, minor) = gpu.compute_capability()?;
    let (cuda_major, cuda_minor) = gpu.driver_version()?;
    let memory_clock_khz = gpu.memory_clock_khz()?;
    let memory_bus_bits = gpu.memory_bus_bits()?;
    let kernel_driver = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|v| {
            let line = v.lines().next()?.to_string();
            let version = line
                .split_whitespace()
                .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))?
                .to_string();
            Some(format!("NVIDIA kernel driver {version}"))
        });
    Ok(DeviceInfo {
        index,
        name: gpu.name()?,
        compute_capability: format!("{major}.{minor}"),
        sm_count: gpu.sm_count()?,
        cuda_driver_version: format!("{cuda_major}.{cuda_minor}"),
        kernel_driver,
        sm_clock_mhz: gpu.sm_clock_khz()? / 1000,
        memory_clock_mhz: memory_clock_khz / 1000,
        memory_bus_bits,
        // Double data rate: two transfers per clock.
        theoretical_gbps: crate::engine::timing::theoretical_from_clocks(
            memory_clock_khz,
            memory_bus_bits,
        ),
        l2_bytes: gpu.l2_cache_bytes()?,
        memory_bytes: gpu.memory_info()?.1,
        ptx_arch: gpu.ptx_arch(),
    })
}
