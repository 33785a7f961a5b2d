//! `demo bandwidth`: host-device bandwidth like bandwidthTest (pageable, pinned, write-combined,
//! zero-copy; [`transfers`]), device-to-device beside the memcpy ceiling, the read-only ceiling
//! and the launch overhead of an empty kernel.

mod transfers;

use std::time::Instant;

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::error::DriverContext;
use cpu::lab::memory::bandwidth::{self, Direction, HostBuffer, HostMemory};
use cudarc::driver::CudaSlice;
use gpu::memory::bandwidth::kernels::bandwidth_copy_v4;
use transfers::*;

use super::cells::multi_row;
use crate::engine::args::count_in;
use crate::engine::harness::{Footprint, WARMUP};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, variant, variant_name};
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::{self, Ceiling, Timing};

/// Host-device bandwidth like bandwidthTest: pageable, pinned, write-combined and zero-copy,
/// at the seed's 32 MiB and over 1 KiB .. --max-size; device-to-device beside the memcpy
/// ceiling; the read-only ceiling (a read stream); the launch overhead of an empty kernel.
#[derive(clap::Args)]
pub(crate) struct Bandwidth {
    /// Largest transfer of the sweep in bytes (powers of 4 from 1 KiB; default 1 GiB; at least
    /// 1024).
    #[arg(long, default_value_t = 1 << 30, value_parser = count_in::<1024, { u64::MAX }>)]
    max_size: usize,
    /// Back-to-back launches of the empty kernel (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = count_in::<1, { u64::MAX }>)]
    launches: usize,
}

impl Pattern for Bandwidth {
    const NAME: &'static str = "bandwidth";

    /// The host memory kinds (driver copies, and the zero-copy kernel), device to device, the
    /// empty kernel of the launch overhead, and the read stream of the read-only ceiling.
    fn variants() -> Vec<VariantInfo> {
        use gpu::memory::bandwidth::kernels::bandwidth_empty_kernel;
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

    fn sanitize() -> Vec<String> {
        vec!["--max-size 1048576 --launches 50".into()]
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        Ok(Some(bandwidth_footprint(self.max_size)))
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run_bandwidth(gpu, out, opts, self.max_size, self.launches)
    }
}

/// Peak memory of `demo bandwidth --max-size B`, with buffers of b = max(the sweep's largest
/// size, 32 MiB) bytes: two on the device (2b) and the read-only ceiling's buffer (1 GiB); one
/// per host memory kind (pageable, pinned, write-combined, zero-copy) and the check buffer on
/// the host (5b).
fn bandwidth_footprint(max_size: usize) -> Footprint {
    let largest = bandwidth::sweep_sizes(max_size).last().copied();
    let b = largest.unwrap_or(1024).max(SEED_BYTES);
    Footprint::new(format!("bandwidth up to {max_size} bytes"))
        .device::<u8>(2, b)
        .device_bytes(timing::CEILING_READ_BYTES as u64)
        .host::<u8>(5, b)
        .with_ceiling()
}
