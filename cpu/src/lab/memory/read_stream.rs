//! The read-only bandwidth ceiling: launchers of `gpu::memory::read_stream`, the launch shapes
//! a ceiling measurement tries, and the CPU reference of what the kernels compute.
//!
//! A reduction reads its input and writes next to nothing, so the device-to-device copy (read
//! plus write) is the wrong yardstick for it: reading alone may go faster or slower than half
//! a copy. [`ReadStream`] reads a buffer with 16-byte loads, several in flight per thread, over
//! a grid-stride loop, and writes one word per block (the sum of what the block read, so no
//! load can be dropped); the fastest of its [shapes](ReadShape::candidates) on a buffer far
//! beyond the L2 is the read-only ceiling (`demo sweep` and `demo bandwidth` time it).
//!
//! ```no_run
//! use cpu::lab::memory::read_stream::{ReadShape, ReadStream};
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = cpu::Gpu::new(0)?;
//! let words = gpu.upload(&vec![3u32; 1 << 20])?;
//! let shape = ReadShape::candidates(&gpu)?[0];
//! let mut stream = ReadStream::new(&gpu, shape)?;
//! stream.launch(&gpu, &words)?;
//! assert_eq!(stream.sum(&gpu)?, 3 << 20);
//! # Ok(())
//! # }
//! ```

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig};
use gpu::memory::read_stream::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch::{self, VEC4_ALIGNMENT};

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::read_stream_x4.name(),
    kernels::read_stream_x8.name(),
];

/// 16-byte loads each thread issues before it adds any of them: one kernel entry each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InFlight {
    /// 4 loads (64 bytes) per thread: `read_stream_x4`.
    X4,
    /// 8 loads (128 bytes) per thread: `read_stream_x8`.
    X8,
}

impl InFlight {
    /// Both entries.
    pub const ALL: [InFlight; 2] = [InFlight::X4, InFlight::X8];

    /// The kernel: `(input, n, partials)`.
    pub fn kernel(self) -> Kernel<(*const u32, usize, *mut u32)> {
        match self {
            InFlight::X4 => kernels::read_stream_x4,
            InFlight::X8 => kernels::read_stream_x8,
        }
    }

    /// The kernel's `.entry` name.
    pub fn kernel_name(self) -> &'static str {
        self.kernel().name()
    }

    /// Loads in flight per thread.
    pub fn loads(self) -> usize {
        match self {
            InFlight::X4 => 4,
            InFlight::X8 => 8,
        }
    }
}

/// How a read stream is launched: the entry (loads in flight) and the blocks per SM of
/// [`k::READ_STREAM_BLOCK`] threads; the grid is SMs x `blocks_per_sm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadShape {
    /// Loads in flight per thread.
    pub in_flight: InFlight,
    /// Blocks per SM (the occupancy calculator's count is one wave; more queue behind it).
    pub blocks_per_sm: u32,
}

impl ReadShape {
    /// The shapes a ceiling measurement tries: each entry at one wave of resident blocks (the
    /// occupancy calculator's blocks per SM) and at twice that.
    ///
    /// # Errors
    /// [`Error::Driver`] if a kernel is missing or an occupancy query fails.
    pub fn candidates(gpu: &Gpu) -> Result<Vec<ReadShape>> {
        let mut shapes = Vec::new();
        for in_flight in InFlight::ALL {
            let resident =
                gpu.resident_blocks_per_sm(in_flight.kernel_name(), k::READ_STREAM_BLOCK, 0)?;
            for blocks_per_sm in [resident, 2 * resident] {
                shapes.push(ReadShape {
                    in_flight,
                    blocks_per_sm,
                });
            }
        }
        Ok(shapes)
    }

    /// The launch on `gpu`: SMs x `blocks_per_sm` blocks of [`k::READ_STREAM_BLOCK`] threads.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if `blocks_per_sm` is 0 or the grid exceeds
    /// [`launch::MAX_GRID_X`]; [`Error::Driver`] if the SM count cannot be read.
    pub fn launch_config(self, gpu: &Gpu) -> Result<LaunchConfig> {
        let sms = u64::from(gpu.sm_count()?.max(1));
        let grid = sms * u64::from(self.blocks_per_sm);
        if self.blocks_per_sm == 0 || grid > launch::MAX_GRID_X {
            return Err(Error::OutOfRange {
                what: "blocks per SM",
                value: u64::from(self.blocks_per_sm),
                min: 1,
                max: launch::MAX_GRID_X / sms,
            });
        }
        Ok(launch::linear(grid as u32, k::READ_STREAM_BLOCK, 0))
    }

    /// `"8 loads x 16 B in flight, 2 blocks/SM"`.
    pub fn describe(self) -> String {
        format!(
            "{} loads x 16 B in flight per thread, {} blocks of {} per SM",
            self.in_flight.loads(),
            self.blocks_per_sm,
            k::READ_STREAM_BLOCK
        )
    }
}

/// A read stream of one [`ReadShape`] with its per-block partial sums (one word per block),
/// allocated once so that a launch allocates nothing.
#[derive(Debug)]
pub struct ReadStream {
    shape: ReadShape,
    cfg: LaunchConfig,
    partials: CudaSlice<u32>,
}

impl ReadStream {
    /// The launch of `shape` on `gpu` and its partials buffer.
    ///
    /// # Errors
    /// As [`ReadShape::launch_config`]; [`Error::OutOfMemory`] / [`Error::Driver`] from the
    /// allocation.
    pub fn new(gpu: &Gpu, shape: ReadShape) -> Result<Self> {
        let cfg = shape.launch_config(gpu)?;
        Ok(Self {
            shape,
            cfg,
            partials: gpu.zeros(cfg.grid_dim.0 as usize)?,
        })
    }

    /// The shape.
    pub fn shape(&self) -> ReadShape {
        self.shape
    }

    /// The launch configuration every [`ReadStream::launch`] uses.
    pub fn launch_config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Queues one read of every word of `input` (its sum, mod 2^32, left in the partials: see
    /// [`ReadStream::sum`]); no host synchronisation. An empty input launches nothing and
    /// leaves the partials as they were.
    ///
    /// # Errors
    /// [`Error::WrongContext`] if `input` lives on another device; [`Error::Misaligned`] if it
    /// does not start on a 16-byte boundary; [`Error::Driver`] if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu, input: &impl DevicePtr<u32>) -> Result<LaunchConfig> {
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("partials", &self.partials)?;
        let n = input.len();
        if n == 0 {
            return Ok(self.cfg);
        }
        let kernel = self.shape.in_flight.kernel();
        // The input's address is taken once, for the check and the launch.
        let input = gpu.bind(input);
        launch::check_aligned(kernel.name(), "input", input.address(), VEC4_ALIGNMENT)?;
        // SAFETY: `read_stream_x{4,8}(input, n, partials)`: `input` is a device view of `n`
        // words in `gpu`'s context (checked), 16-byte aligned (checked), only read (borrowed
        // shared, its use recorded); `partials` holds `grid_dim.0` words (allocated for this
        // configuration) and is borrowed mutably; the block is READ_STREAM_BLOCK, whole warps.
        unsafe { gpu.launch_unchecked(kernel, self.cfg, (input, n, &mut self.partials)) }?;
        Ok(self.cfg)
    }

    /// The sum (mod 2^32) of the words the last [`ReadStream::launch`] read: the partials
    /// downloaded (waits for the stream) and added.
    ///
    /// # Errors
    /// [`Error::Driver`] if the kernel faulted or the copy fails.
    pub fn sum(&self, gpu: &Gpu) -> Result<u32> {
        let partials = gpu.download(&self.partials, self.shape.in_flight.kernel_name())?;
        Ok(reference(&partials))
    }
}

/// Uploads `input`, reads it once with `shape` and returns the sum the kernel computed.
/// Synchronises (it returns a host value).
///
/// # Errors
/// As [`ReadStream::new`] and [`ReadStream::launch`].
pub fn run(gpu: &Gpu, shape: ReadShape, input: &[u32]) -> Result<u32> {
    let mut stream = ReadStream::new(gpu, shape)?;
    if input.is_empty() {
        return Ok(0);
    }
    stream.launch(gpu, &gpu.upload(input)?)?;
    stream.sum(gpu)
}

/// CPU reference: the sum of the words modulo 2^32 (exact for any order of addition).
pub fn reference(words: &[u32]) -> u32 {
    words.iter().fold(0u32, |a, &w| a.wrapping_add(w))
}

/// Bytes a read stream of `n` words moves through DRAM: each word read once (the one word per
/// block written is not counted).
pub fn bytes_read(n: usize) -> u64 {
    4 * n as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_wraps() {
        assert_eq!(reference(&[u32::MAX, 2]), 1);
        assert_eq!(reference(&[]), 0);
        assert_eq!(bytes_read(1 << 20), 4 << 20);
    }

    #[test]
    fn entries_and_loads() {
        let names: Vec<_> = InFlight::ALL.iter().map(|f| f.kernel_name()).collect();
        assert_eq!(names, KERNELS);
        assert_eq!(InFlight::X4.loads(), 4);
        assert_eq!(InFlight::X8.loads(), 8);
        let s = ReadShape {
            in_flight: InFlight::X8,
            blocks_per_sm: 16,
        };
        assert!(s.describe().starts_with("8 loads"));
    }
}
