//! The textbook ladder of *Programming Massively Parallel Processors* (4th ed., ch. 11) on `i32`,
//! from Kogge-Stone in one block to the single-pass scan with decoupled look-back, each
//! launched on the caller's buffers through a [`Ladder`] that holds their scratch.
//!
//! The four block scans ([`Variant::section`] is `Some`) scan each block's section on its own,
//! as the book's first kernels do; the last three scan the whole input.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig};
use gpu::scan::{self as k, ladder as kernels};

use super::{Kind, ScanWorkspace};
use crate::context::Gpu;
use crate::error::{Error, Result, expect_len};
use crate::kernel::{DeviceAddress, Kernel};
use crate::launch;

/// A block scan: `(input: *const i32, output: *mut i32, n: usize, sums: *mut i32)`.
pub type BlockScanKernel = Kernel<(*const i32, *mut i32, usize, *mut i32)>;

/// The steps of the ladder, in the order of the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// Kogge-Stone in one block of 1024 (PMPP Fig. 11.3): sections of 1024.
    KoggeStone,
    /// Kogge-Stone with two shared buffers, one barrier per step (PMPP §11.3).
    KoggeStoneDoubleBuffer,
    /// Brent-Kung, 512 threads for sections of 1024 (PMPP Fig. 11.7).
    BrentKung,
    /// The coarsened three-phase block scan, 256 threads for sections of 4096 (PMPP §11.6).
    Coarsened,
    /// The hierarchical scan for any length: coarsened block scans, the section totals scanned
    /// the same way (recursively), then added back (PMPP §11.7).
    Hierarchical,
    /// The single-pass stream-based scan: each block waits for its left neighbour's prefix
    /// (PMPP §11.8).
    StreamBased,
    /// The single-pass scan with decoupled look-back (Merrill and Garland 2016): the version
    /// [`inclusive_sum`](super::inclusive_sum) runs.
    DecoupledLookback,
}

impl Variant {
    /// Every step, in order.
    pub const ALL: [Variant; 7] = [
        Variant::KoggeStone,
        Variant::KoggeStoneDoubleBuffer,
        Variant::BrentKung,
        Variant::Coarsened,
        Variant::Hierarchical,
        Variant::StreamBased,
        Variant::DecoupledLookback,
    ];

    /// The `.entry` names of the kernels it launches, the main one first.
    pub fn kernel_names(self) -> &'static [&'static str] {
        const KOGGE_STONE: &[&str] = &[kernels::scan_kogge_stone.name()];
        const DOUBLE_BUFFER: &[&str] = &[kernels::scan_kogge_stone_double_buffer.name()];
        const BRENT_KUNG: &[&str] = &[kernels::scan_brent_kung.name()];
        const COARSENED: &[&str] = &[kernels::scan_coarsened.name()];
        const HIERARCHICAL: &[&str] = &[
            kernels::scan_coarsened.name(),
            kernels::scan_add_sums.name(),
        ];
        const STREAM_BASED: &[&str] = &[kernels::scan_stream_based.name()];
        const LOOKBACK: &[&str] = &[gpu::scan::lookback::scan_lookback_i32.name()];
        match self {
            Variant::KoggeStone => KOGGE_STONE,
            Variant::KoggeStoneDoubleBuffer => DOUBLE_BUFFER,
            Variant::BrentKung => BRENT_KUNG,
            Variant::Coarsened => COARSENED,
            Variant::Hierarchical => HIERARCHICAL,
            Variant::StreamBased => STREAM_BASED,
            Variant::DecoupledLookback => LOOKBACK,
        }
    }

    /// The main kernel's `.entry` name.
    pub fn kernel_name(self) -> &'static str {
        self.kernel_names()[0]
    }

    /// For the block scans, the section each block scans on its own; `None` for the scans of
    /// the whole input.
    pub fn section(self) -> Option<usize> {
        match self {
            Variant::KoggeStone | Variant::KoggeStoneDoubleBuffer => {
                Some(k::KOGGE_STONE_BLOCK as usize)
            }
            Variant::BrentKung => Some(2 * k::BRENT_KUNG_BLOCK as usize),
            Variant::Coarsened => Some(k::COARSENED_SECTION),
            _ => None,
        }
    }

    /// Additions the variant performs for `n` elements (the textbook count of its algorithm,
    /// section by section; what `n - 1` sequential adds would do is the work-efficient bar).
    pub fn adds(self, n: usize) -> u64 {
        let n = n as u64;
        let ks = |s: u64| s * s.ilog2() as u64 - (s - 1); // per section of s
        let bk = |s: u64| 2 * (s - 1) - s.ilog2() as u64;
        let (b, c) = (k::COARSENED_BLOCK as u64, k::COARSENED_ITEMS as u64);
        let coarse = b * (c - 1) + ks(b) + (b - 1) * c; // per section of b c
        let sections = |s: u64| n.div_ceil(s);
        match self {
            Variant::KoggeStone | Variant::KoggeStoneDoubleBuffer => {
                let s = k::KOGGE_STONE_BLOCK as u64;
                sections(s) * ks(s)
            }
            Variant::BrentKung => {
                let s = 2 * k::BRENT_KUNG_BLOCK as u64;
                sections(s) * bk(s)
            }
            Variant::Coarsened => sections(b * c) * coarse,
            Variant::Hierarchical => {
                // Each level: the block scans, then the add-back of all but the first section.
                let mut total = 0;
                let mut len = n;
                loop {
                    let s = len.div_ceil(b * c);
                    total += s * coarse;
                    if s <= 1 {
                        break;
                    }
                    total += len - (b * c).min(len);
                    len = s;
                }
                total
            }
            Variant::StreamBased => sections(b * c) * (coarse + 1) + n - (b * c).min(n),
            Variant::DecoupledLookback => {
                // Per thread's run of 32 (the tile staged in shared memory, scanned blocked):
                // 32 for its total, 5 in the warp scan, 1 for its offset, 32 for its outputs.
                n.div_ceil(32) * 70
            }
        }
    }

    /// Dependent parallel steps on the critical path of one section or tile (the textbook
    /// "steps"), and for the whole-input scans the chain across sections: Kogge-Stone
    /// `log2(S)`, Brent-Kung `2 log2(S) - 1`, the coarsened scan `C + log2(B) + C`, the
    /// hierarchical scan that per level, the stream-based scan that plus one per section, the
    /// look-back the in-tile depth plus one look-back per tile.
    pub fn steps(self, n: usize) -> u64 {
        let (b, c) = (k::COARSENED_BLOCK as u64, k::COARSENED_ITEMS as u64);
        let coarse = 2 * c + b.ilog2() as u64;
        let n = n.max(1) as u64;
        match self {
            Variant::KoggeStone | Variant::KoggeStoneDoubleBuffer => {
                (k::KOGGE_STONE_BLOCK as u64).ilog2() as u64
            }
            Variant::BrentKung => 2 * (2 * k::BRENT_KUNG_BLOCK as u64).ilog2() as u64 - 1,
            Variant::Coarsened => coarse,
            Variant::Hierarchical => {
                let mut levels = 1;
                let mut len = n.div_ceil(b * c);
                while len > 1 {
                    levels += 1;
                    len = len.div_ceil(b * c);
                }
                levels * (coarse + 1)
            }
            Variant::StreamBased => coarse + n.div_ceil(b * c),
            // The thread's run, the warp scan, the warp totals' scan, the look-back window's
            // reduction, the outputs.
            Variant::DecoupledLookback => 32 + 5 + 5 + 5 + 32,
        }
    }
}

/// The scratch of every ladder step for inputs up to a length: the section totals of the block
/// scans and of each level of the hierarchical scan, the flags and prefixes of the stream-based
/// scan, and a [`ScanWorkspace`] for the look-back. Allocated once, so a timed launch
/// allocates nothing.
pub struct Ladder {
    capacity: usize,
    sums: CudaSlice<i32>,
    levels: Vec<CudaSlice<i32>>,
    flags: CudaSlice<u32>,
    prefixes: CudaSlice<i32>,
    counter: CudaSlice<u32>,
    epoch: u32,
    lookback: ScanWorkspace<i32>,
}

impl Ladder {
    /// The scratch for inputs of up to `capacity` elements.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; [`Error::Driver`] if an allocation fails.
    pub fn new(gpu: &Gpu, capacity: usize) -> Result<Self> {
        let smallest = k::KOGGE_STONE_BLOCK as usize;
        let sections = capacity.div_ceil(k::COARSENED_SECTION).max(1);
        let mut levels = Vec::new();
        let mut len = sections;
        loop {
            levels.push(gpu.zeros(len)?);
            if len <= 1 {
                break;
            }
            len = len.div_ceil(k::COARSENED_SECTION);
        }
        Ok(Self {
            capacity,
            sums: gpu.zeros(capacity.div_ceil(smallest).max(1))?,
            levels,
            flags: gpu.zeros(sections + 1)?,
            prefixes: gpu.zeros(sections + 1)?,
            counter: gpu.zeros(1)?,
            epoch: 0,
            lookback: ScanWorkspace::with_capacity(gpu, capacity)?,
        })
    }

    /// Queues `variant` on `input` into `output` (the inclusive scan; for the block scans,
    /// each section's own), and returns the main kernel's launch configuration. An empty input
    /// launches nothing.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if the lengths differ; [`Error::OutOfRange`] if the input is
    /// longer than the ladder's capacity; [`Error::WrongContext`]; [`Error::Driver`] if a
    /// launch fails.
    pub fn run(
        &mut self,
        gpu: &Gpu,
        variant: Variant,
        input: &impl DevicePtr<i32>,
        output: &mut impl DevicePtrMut<i32>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("output", output)?;
        let n = input.len();
        expect_len("output", n, output.len())?;
        if n > self.capacity {
            return Err(Error::OutOfRange {
                what: "input length",
                value: n as u64,
                min: 0,
                max: self.capacity as u64,
            });
        }
        let kernel = variant.kernel_name();
        let block_scan = |kernel: BlockScanKernel, block: u32, section: usize| {
            let grid = launch::blocks_to_cover(kernel.name(), n, section as u64)?;
            Ok::<_, Error>(launch::linear(grid, block, 0))
        };
        if n == 0 {
            return Ok(launch::linear(0, k::LOOKBACK_BLOCK, 0));
        }
        let (kernel_handle, cfg) = match variant {
            Variant::KoggeStone => (
                kernels::scan_kogge_stone,
                block_scan(
                    kernels::scan_kogge_stone,
                    k::KOGGE_STONE_BLOCK,
                    k::KOGGE_STONE_BLOCK as usize,
                )?,
            ),
            Variant::KoggeStoneDoubleBuffer => (
                kernels::scan_kogge_stone_double_buffer,
                block_scan(
                    kernels::scan_kogge_stone_double_buffer,
                    k::KOGGE_STONE_BLOCK,
                    k::KOGGE_STONE_BLOCK as usize,
                )?,
            ),
            Variant::BrentKung => (
                kernels::scan_brent_kung,
                block_scan(
                    kernels::scan_brent_kung,
                    k::BRENT_KUNG_BLOCK,
                    2 * k::BRENT_KUNG_BLOCK as usize,
                )?,
            ),
            Variant::Coarsened => (
                kernels::scan_coarsened,
                block_scan(
                    kernels::scan_coarsened,
                    k::COARSENED_BLOCK,
                    k::COARSENED_SECTION,
                )?,
            ),
            Variant::Hierarchical => {
                let cfg = block_scan(
                    kernels::scan_coarsened,
                    k::COARSENED_BLOCK,
                    k::COARSENED_SECTION,
                )?;
                hierarchical(gpu, &mut self.levels, input, output)?;
                return Ok(cfg);
            }
            Variant::StreamBased => {
                let cfg = block_scan(
                    kernels::scan_coarsened,
                    k::COARSENED_BLOCK,
                    k::COARSENED_SECTION,
                )?;
                if self.epoch >= u32::MAX - 1 {
                    gpu.stream()
                        .memset_zeros(&mut self.flags)
                        .map_err(|source| Error::Driver {
                            during: format!("{kernel}: clearing the flags"),
                            source,
                        })?;
                    self.epoch = 0;
                }
                self.epoch += 1;
                // SAFETY: `scan_stream_based` takes `(input, output, n, flags, prefixes,
                // counter, epoch)`; the views hold `n` elements (checked) and do not overlap
                // (one is borrowed mutably); `flags` and `prefixes` hold `sections + 1 >= grid
                // + 1` words (capacity checked), no flag equals the fresh epoch (flags only
                // ever hold earlier epochs or 0); `counter` is 0 (zeroed, and each launch
                // leaves it 0) and cudarc orders the launches that share it. Blocks of
                // COARSENED_BLOCK threads.
                unsafe {
                    gpu.launch_unchecked(
                        kernels::scan_stream_based,
                        cfg,
                        (
                            input,
                            output,
                            n,
                            &mut self.flags,
                            &mut self.prefixes,
                            &mut self.counter,
                            self.epoch,
                        ),
                    )
                }?;
                return Ok(cfg);
            }
            Variant::DecoupledLookback => {
                return self.lookback.scan(gpu, Kind::Inclusive, input, output);
            }
        };
        // SAFETY: every block scan takes `(input: *const i32, output: *mut i32, n, sums: *mut
        // i32)`; the views hold `n` elements (checked) and do not overlap (one is borrowed
        // mutably); `sums` holds `ceil(capacity / 1024)` >= `grid` words (every section is at
        // least 1024); the block is the kernel's own size, a power of two.
        unsafe { gpu.launch_unchecked(kernel_handle, cfg, (input, output, n, &mut self.sums)) }?;
        Ok(cfg)
    }
}

/// The hierarchical scan of `input` into `output`: coarsened block scans with the section
/// totals into `levels[0]`, the same scan of `levels[0]` in place (recursively, into
/// `levels[1]`, ...), then `levels[0][b - 1]` added to section `b`.
fn hierarchical(
    gpu: &Gpu,
    levels: &mut [CudaSlice<i32>],
    input: &impl DevicePtr<i32>,
    output: &mut impl DevicePtrMut<i32>,
) -> Result<()> {
    let n = input.len();
    let kernel = kernels::scan_coarsened.name();
    let grid = launch::blocks_to_cover(kernel, n, k::COARSENED_SECTION as u64)?;
    let cfg = launch::linear(grid, k::COARSENED_BLOCK, 0);
    let (sums, rest) = levels.split_first_mut().ok_or(Error::Unsupported {
        what: "levels",
        requirement: "a level of section totals for every level of the input",
    })?;
    // SAFETY: `(input, output, n, sums)`: views of `n` elements; `sums` holds `grid` words
    // (the levels are sized by `Ladder::new` for its capacity); blocks of COARSENED_BLOCK.
    unsafe {
        gpu.launch_unchecked(
            kernels::scan_coarsened,
            cfg,
            (input, &mut *output, n, &mut *sums),
        )
    }?;
    if grid > 1 {
        let address = gpu.address(&sums.slice(..grid as usize));
        // SAFETY (both): the address of `sums`' first `grid` elements, valid while `sums` is
        // borrowed here, used on `gpu`'s stream only (stream order is the only order needed);
        // the coarsened kernel reads its whole section into shared memory before it writes any
        // of it, so scanning in place is sound.
        let view = unsafe { DeviceAddress::<i32>::new(address, grid as usize, gpu.stream()) };
        let mut same = unsafe { DeviceAddress::<i32>::new(address, grid as usize, gpu.stream()) };
        hierarchical(gpu, rest, &view, &mut same)?;
        let add = launch::linear(grid, k::ADD_SUMS_BLOCK, 0);
        // SAFETY: `scan_add_sums(output, n, sums, section)`: `output` holds `n` elements,
        // `sums` the `grid` scanned totals; one block per section.
        unsafe {
            gpu.launch_unchecked(
                kernels::scan_add_sums,
                add,
                (output, n, &*sums, k::COARSENED_SECTION),
            )
        }?;
    }
    Ok(())
}
