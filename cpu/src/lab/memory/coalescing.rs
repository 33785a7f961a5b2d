//! Global-memory coalescing: misalignment offset and stride sweeps with cached (`ld.ca`) and
//! L2-only (`ld.cg`) loads: launchers for the kernels in `gpu::memory::coalescing`, the CPU
//! reference, and the load efficiency each access pattern must reach (the seed's "效率 = 请求加载的
//! 全局内存 / 所需加载的全局内存", `nvprof`'s `gld_efficiency`).

use cudarc::driver::{CudaSlice, LaunchConfig};
use gpu::memory::coalescing::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch;
use crate::verify::Mismatch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::coalescing_read_offset_ca.name(),
    kernels::coalescing_read_offset_cg.name(),
    kernels::coalescing_read_stride_ca.name(),
    kernels::coalescing_read_stride_cg.name(),
];

/// Bytes in a DRAM/L2 sector, the unit global memory moves since Maxwell (the seed's 32-byte
/// "uncached" transaction).
pub const SECTOR_BYTES: usize = 32;
/// Bytes in an L1 cache line (the seed's 128-byte "cached" transaction).
pub const LINE_BYTES: usize = 128;

/// The load path: PTX cache operator of the kernel's global load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Load {
    /// `ld.global.ca`: cached in L1 and L2 (the default for global loads since Volta).
    Ca,
    /// `ld.global.cg`: cached in L2 only, bypassing L1.
    Cg,
}

impl Load {
    /// Both load paths.
    pub const ALL: [Load; 2] = [Load::Ca, Load::Cg];
}

/// The read pattern of `y[i] = x[f(i)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `f(i) = i + offset`, offset in elements, `0..=`[`k::MAX_OFFSET`].
    Offset(usize),
    /// `f(i) = i * stride`, stride in elements, `1..=`[`k::MAX_STRIDE`].
    Stride(usize),
}

impl Access {
    /// The kernel that reads with this pattern through `load`: `(x, y, n, offset_or_stride)`.
    pub fn kernel(self, load: Load) -> Kernel<(*const f32, *mut f32, usize, usize)> {
        match (self, load) {
            (Access::Offset(_), Load::Ca) => kernels::coalescing_read_offset_ca,
            (Access::Offset(_), Load::Cg) => kernels::coalescing_read_offset_cg,
            (Access::Stride(_), Load::Ca) => kernels::coalescing_read_stride_ca,
            (Access::Stride(_), Load::Cg) => kernels::coalescing_read_stride_cg,
        }
    }

    /// The `.entry` name of [`Access::kernel`].
    pub fn kernel_name(self, load: Load) -> &'static str {
        self.kernel(load).name()
    }

    /// Checks the offset or stride against the kernels' range.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] naming the value and the range.
    pub fn validate(self) -> Result<()> {
        match self {
            Access::Offset(o) if o > k::MAX_OFFSET => Err(Error::OutOfRange {
                what: "offset",
                value: o as u64,
                min: 0,
                max: k::MAX_OFFSET as u64,
            }),
            Access::Stride(s) if s == 0 || s > k::MAX_STRIDE => Err(Error::OutOfRange {
                what: "stride",
                value: s as u64,
                min: 1,
                max: k::MAX_STRIDE as u64,
            }),
            _ => Ok(()),
        }
    }

    /// The index read for output `i`.
    pub fn source(self, i: usize) -> usize {
        match self {
            Access::Offset(o) => i + o,
            Access::Stride(s) => i * s,
        }
    }

    /// Outputs a copy from an input of `x_len` elements produces: every `i` whose source is
    /// inside `x` (`x_len - offset`, or `ceil(x_len / stride)`).
    pub fn outputs(self, x_len: usize) -> usize {
        match self {
            Access::Offset(o) => x_len.saturating_sub(o),
            Access::Stride(s) => x_len.div_ceil(s.max(1)),
        }
    }

    /// Input elements needed for `n` outputs.
    pub fn input_len(self, n: usize) -> usize {
        match (self, n) {
            (_, 0) => 0,
            (Access::Offset(o), n) => n + o,
            (Access::Stride(s), n) => (n - 1) * s + 1,
        }
    }

    /// Distinct `granularity`-byte segments one full warp's read touches (warp 0; every full
    /// warp of these patterns touches as many, since warps start 128 or `128 * stride` bytes
    /// apart from a 256-byte aligned base).
    pub fn segments_per_warp(self, granularity: usize) -> usize {
        let mut segments: Vec<usize> = (0..32)
            .map(|lane| 4 * self.source(lane) / granularity)
            .collect();
        segments.dedup();
        segments.len()
    }

    /// Load efficiency of a warp's read: 128 bytes requested over the bytes of the segments it
    /// touches (`gld_efficiency`), with 32-byte sectors or the seed's 128-byte lines.
    pub fn load_efficiency(self, granularity: usize) -> f64 {
        128.0 / (self.segments_per_warp(granularity) * granularity) as f64
    }

    /// Bytes of 32-byte sectors the whole read of `n` outputs must bring from DRAM (each
    /// sector once: neighbouring warps share a misaligned boundary sector through L2).
    pub fn dram_read_bytes(self, n: usize) -> u64 {
        if n == 0 {
            return 0;
        }
        let sectors = match self {
            Access::Offset(o) => (4 * (o + n - 1)) / SECTOR_BYTES - (4 * o) / SECTOR_BYTES + 1,
            Access::Stride(s) if 4 * s >= SECTOR_BYTES => n,
            Access::Stride(s) => 4 * s * (n - 1) / SECTOR_BYTES + 1,
        };
        (sectors * SECTOR_BYTES) as u64
    }
}

/// Bytes a copy of `n` elements requests: 4 read and 4 written per element.
pub fn bytes_requested(n: usize) -> u64 {
    8 * n as u64
}

/// The launch: blocks of [`k::BLOCK_SIZE`] threads covering `n` outputs.
///
/// # Errors
/// [`Error::GridTooLarge`] if `n` needs more blocks than a grid holds.
pub fn launch_config(kernel: &'static str, n: usize) -> Result<LaunchConfig> {
    let grid = launch::blocks_to_cover(kernel, n, k::BLOCK_SIZE as u64)?;
    Ok(launch::linear(grid, k::BLOCK_SIZE, 0))
}

/// Queues `y[i] = x[access.source(i)]` for every `i < y.len()` on `gpu`'s stream. Nothing is
/// launched for an empty `y`.
///
/// # Errors
/// [`Error::OutOfRange`] for an offset or stride out of range; [`Error::LengthMismatch`] if
/// `x` is shorter than [`Access::input_len`]; [`Error::GridTooLarge`], [`Error::Driver`].
pub fn launch(
    gpu: &Gpu,
    access: Access,
    load: Load,
    x: &CudaSlice<f32>,
    y: &mut CudaSlice<f32>,
) -> Result<LaunchConfig> {
    access.validate()?;
    let kernel = access.kernel(load);
    let n = y.len();
    let needed = access.input_len(n);
    if x.len() < needed {
        return Err(Error::LengthMismatch {
            what: "x",
            expected: needed,
            actual: x.len(),
        });
    }
    let cfg = launch_config(kernel.name(), n)?;
    if n == 0 {
        return Ok(cfg);
    }
    let param = match access {
        Access::Offset(o) => o,
        Access::Stride(s) => s,
    };
    // SAFETY: `coalescing_read_{offset,stride}_{ca,cg}(x, y, n, offset_or_stride)`: `x` holds
    // every index read (checked above), `y` holds `n` floats and is a distinct buffer (borrowed
    // mutably), the grid covers `n` (one element per thread).
    unsafe { gpu.launch_unchecked(kernel, cfg, (x, y, n, param)) }?;
    Ok(cfg)
}

/// Copies `x` to the device, runs the copy for `access.outputs(x.len())` outputs into a buffer
/// poisoned with NaN, and returns it.
///
/// # Errors
/// As [`launch`](fn@launch).
pub fn run(gpu: &Gpu, access: Access, load: Load, x: &[f32]) -> Result<Vec<f32>> {
    access.validate()?;
    let d_x = gpu.upload(x)?;
    let mut d_y = gpu.poisoned(access.outputs(x.len()), f32::NAN)?;
    launch(gpu, access, load, &d_x, &mut d_y)?;
    gpu.download(&d_y, access.kernel_name(load))
}

/// CPU reference: `y[i] = x[access.source(i)]` for `access.outputs(x.len())` outputs.
pub fn reference(access: Access, x: &[f32]) -> Vec<f32> {
    (0..access.outputs(x.len()))
        .map(|i| x[access.source(i)])
        .collect()
}

/// Compares a GPU copy with `x` bit for bit without building the reference (the demo's
/// inputs are hundreds of MiB).
pub fn check(access: Access, x: &[f32], y: &[f32]) -> Result<(), Mismatch> {
    let n = access.outputs(x.len());
    if y.len() != n {
        return crate::verify::exact(&vec![0u8; y.len()], &vec![0u8; n]);
    }
    let bad = |i: &usize| y[*i].to_bits() != x[access.source(*i)].to_bits();
    match (0..n).find(bad) {
        None => Ok(()),
        Some(index) => Err(Mismatch {
            index,
            got: format!("{:?}", y[index]),
            expected: format!("{:?}", x[access.source(index)]),
            count: (index..n).filter(bad).count(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_efficiencies() {
        // Aligned and coalesced: one 128-byte line, four sectors, 100%.
        let aligned = Access::Offset(0);
        assert_eq!(
            (
                aligned.segments_per_warp(LINE_BYTES),
                aligned.segments_per_warp(32)
            ),
            (1, 4)
        );
        assert_eq!(aligned.load_efficiency(LINE_BYTES), 1.0);
        // Misaligned: two lines (50%, the seed's cached case), five sectors (80%, uncached).
        let misaligned = Access::Offset(1);
        assert_eq!(misaligned.load_efficiency(LINE_BYTES), 0.5);
        assert_eq!(misaligned.load_efficiency(SECTOR_BYTES), 0.8);
        // Offsets of 8 floats stay sector-aligned.
        assert_eq!(Access::Offset(8).load_efficiency(SECTOR_BYTES), 1.0);
        assert_eq!(Access::Offset(8).load_efficiency(LINE_BYTES), 0.5);
        // Stride 2: 8 sectors; stride 8 and beyond: one sector per lane (12.5%).
        assert_eq!(Access::Stride(2).load_efficiency(SECTOR_BYTES), 0.5);
        assert_eq!(Access::Stride(8).load_efficiency(SECTOR_BYTES), 0.125);
        assert_eq!(Access::Stride(32).load_efficiency(SECTOR_BYTES), 0.125);
        assert_eq!(Access::Stride(32).load_efficiency(LINE_BYTES), 4.0 / 128.0);
    }

    #[test]
    fn dram_bytes() {
        assert_eq!(Access::Offset(0).dram_read_bytes(64), 256);
        assert_eq!(Access::Offset(1).dram_read_bytes(64), 288);
        assert_eq!(Access::Stride(2).dram_read_bytes(64), 512);
        assert_eq!(Access::Stride(16).dram_read_bytes(64), 64 * 32);
        assert_eq!(Access::Stride(16).dram_read_bytes(0), 0);
    }

    #[test]
    fn lengths_and_reference() {
        let x: Vec<f32> = (0..10).map(|v| v as f32).collect();
        assert_eq!(
            reference(Access::Offset(3), &x),
            [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
        );
        assert_eq!(reference(Access::Stride(4), &x), [0.0, 4.0, 8.0]);
        assert_eq!(Access::Stride(4).input_len(3), 9);
        assert_eq!(Access::Offset(2).input_len(0), 0);
        assert!(check(Access::Stride(4), &x, &[0.0, 4.0, 8.0]).is_ok());
        assert_eq!(
            check(Access::Stride(4), &x, &[0.0, 5.0, 9.0])
                .unwrap_err()
                .count,
            2
        );
    }

    #[test]
    fn out_of_range_is_refused() {
        assert!(Access::Offset(33).validate().is_err());
        assert!(Access::Stride(0).validate().is_err());
        assert!(Access::Stride(33).validate().is_err());
        assert!(Access::Stride(32).validate().is_ok());
    }
}
