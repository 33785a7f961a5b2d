//! The textbook ladder of *Programming Massively Parallel Processors* (4th ed., ch. 9) over
//! bytes into 256 `u32` bins, from one global atomic per byte to [`bytes`](super::bytes),
//! each launched on the caller's buffers by [`run`]; and the microbenchmark of the shared
//! atomics that bound the privatised steps ([`shared_atomic_rate`]).

use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu::histogram::{self as k, bytes as fast, ladder as kernels};

use super::{Update, bytes_config, bytes_with, check_bytes, zero_counts};
use crate::context::Gpu;
use crate::error::{Result, expect_len};
use crate::kernel::Kernel;
use crate::launch;

/// A kernel of the ladder: `(input: *const u8, n: usize, counts: *mut u32)`.
pub type LadderKernel = Kernel<(*const u8, usize, *mut u32)>;

/// The steps of the ladder, in the order of the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// One global atomic per byte (PMPP §9.2).
    GlobalAtomics,
    /// A private 256-bin histogram per block in shared memory, one thread per byte (§9.4).
    Shared,
    /// Privatised, 32 consecutive bytes per thread (§9.5, contiguous partition).
    Contiguous,
    /// Privatised, 32 bytes per thread in a grid-stride loop (§9.5, interleaved partition).
    Interleaved,
    /// Interleaved, with runs of equal bytes counted in a register, one atomic per run
    /// (§9.6).
    Aggregated,
    /// The fast byte histogram [`bytes`](super::bytes) runs: a sub-histogram per warp,
    /// 16-byte loads, runs aggregated per thread.
    Bytes,
}

impl Variant {
    /// Every step, in order.
    pub const ALL: [Variant; 6] = [
        Variant::GlobalAtomics,
        Variant::Shared,
        Variant::Contiguous,
        Variant::Interleaved,
        Variant::Aggregated,
        Variant::Bytes,
    ];

    /// The kernel's handle.
    pub fn kernel(self) -> LadderKernel {
        match self {
            Variant::GlobalAtomics => kernels::histogram_global_atomics,
            Variant::Shared => kernels::histogram_shared,
            Variant::Contiguous => kernels::histogram_contiguous,
            Variant::Interleaved => kernels::histogram_interleaved,
            Variant::Aggregated => kernels::histogram_aggregated,
            Variant::Bytes => fast::histogram_bytes,
        }
    }

    /// The kernel's `.entry` name.
    pub fn kernel_name(self) -> &'static str {
        self.kernel().name()
    }

    /// The launch of this step for `n` bytes: blocks of [`LADDER_BLOCK`](k::LADDER_BLOCK)
    /// (256) threads, `ceil(n / 256)` of them for one byte per thread (global atomics,
    /// shared), `ceil(n / (256 * LADDER_ITEMS))` for 32 bytes per thread (contiguous,
    /// interleaved, aggregated); [`Bytes`](Variant::Bytes) as [`bytes_with`]
    /// (one wave of 512). A grid of 0 blocks for `n == 0`.
    ///
    /// # Errors
    /// [`Error::GridTooLarge`](crate::Error::GridTooLarge) beyond the grid's limit (not for
    /// `n <= u32::MAX`); [`Error::Driver`](crate::Error::Driver) if the occupancy of
    /// `histogram_bytes` cannot be read.
    pub fn launch_config(self, gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
        let per_block = match self {
            Variant::GlobalAtomics | Variant::Shared => k::LADDER_BLOCK as usize,
            Variant::Contiguous | Variant::Interleaved | Variant::Aggregated => {
                k::LADDER_BLOCK as usize * k::LADDER_ITEMS
            }
            Variant::Bytes => return bytes_config::<u32>(gpu, n),
        };
        let grid = launch::blocks_to_cover(self.kernel_name(), n, per_block as u64)?;
        Ok(launch::linear(grid, k::LADDER_BLOCK, 0))
    }

    /// Global plus shared atomics the step issues per input byte on uniform random bytes, in
    /// expectation, for `n` bytes launched as `cfg` (`n == 0`: 0):
    /// - global atomics: 1 per byte;
    /// - the privatised steps: 1 shared atomic per byte ([`Aggregated`](Variant::Aggregated)
    ///   and [`Bytes`](Variant::Bytes): one per run, a thread of `m` bytes having `1 + (m -
    ///   1) * 255/256` runs, `m = n / threads`), plus the merge: each block adds its nonzero
    ///   bins to global memory, `256 * (1 - (255/256)^(n / blocks))` of them in expectation.
    ///
    /// The head and tail bytes of [`Bytes`](Variant::Bytes) (at most 30, one atomic each)
    /// are left out.
    pub fn atomics_per_byte(self, n: usize, cfg: &LaunchConfig) -> f64 {
        if n == 0 {
            return 0.0;
        }
        let n = n as f64;
        let blocks = cfg.grid_dim.0.max(1) as f64;
        let threads = blocks * cfg.block_dim.0.max(1) as f64;
        let stay: f64 = 255.0 / 256.0;
        let merge = blocks * 256.0 * (1.0 - stay.powf(n / blocks));
        let runs = |m: f64| if m <= 1.0 { m } else { 1.0 + (m - 1.0) * stay };
        let total = match self {
            Variant::GlobalAtomics => n,
            Variant::Shared | Variant::Contiguous | Variant::Interleaved => n + merge,
            Variant::Aggregated | Variant::Bytes => threads * runs(n / threads) + merge,
        };
        total / n
    }
}

/// Queues `variant` on `input`, overwriting `counts` (a memset, then the launch), and returns
/// the launch's configuration ([`Variant::launch_config`]).
///
/// # Errors
/// As [`bytes`](super::bytes): [`Error::WrongContext`](crate::Error::WrongContext),
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) unless `counts` has 256 elements,
/// [`Error::OutOfRange`](crate::Error::OutOfRange) beyond `u32::MAX` bytes,
/// [`Error::Driver`](crate::Error::Driver).
pub fn run(
    gpu: &Gpu,
    variant: Variant,
    input: &impl DevicePtr<u8>,
    counts: &mut impl DevicePtrMut<u32>,
) -> Result<LaunchConfig> {
    if variant == Variant::Bytes {
        return bytes_with(gpu, input, counts, Update::Overwrite);
    }
    let n = check_bytes(gpu, input, counts)?;
    let cfg = variant.launch_config(gpu, n)?;
    zero_counts(gpu, variant.kernel_name(), counts)?;
    if n == 0 {
        return Ok(cfg);
    }
    // SAFETY: every ladder kernel takes `(input: *const u8, n, counts: *mut u32)`; `input` is
    // a view of `n` bytes and `counts` of 256 `u32` (checked), both in `gpu`'s context
    // (checked), not overlapping (one is borrowed mutably); the grid covers `n` as the
    // kernel's launch rule asks (`launch_config`), blocks of LADDER_BLOCK threads.
    unsafe { gpu.launch_unchecked(variant.kernel(), cfg, (input, n, counts)) }?;
    Ok(cfg)
}

/// Which shared-memory addresses the lanes of a warp hit in [`shared_atomic_rate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum AtomicPattern {
    /// Lane `l` always word `l`: 32 banks, no conflict (the unit's ceiling).
    DistinctBanks,
    /// Every lane the same word (a constant input without aggregation).
    OneAddress,
    /// Each lane a pseudo-random word of its warp's 256 at each step (uniform random bytes,
    /// with their bank conflicts: the ceiling of [`bytes`](super::bytes) on them).
    RandomBins,
}

impl AtomicPattern {
    /// Every pattern.
    pub const ALL: [AtomicPattern; 3] = [
        AtomicPattern::DistinctBanks,
        AtomicPattern::OneAddress,
        AtomicPattern::RandomBins,
    ];

    /// The kernel's `pattern` argument.
    fn code(self) -> u32 {
        match self {
            AtomicPattern::DistinctBanks => k::ATOMIC_DISTINCT_BANKS,
            AtomicPattern::OneAddress => k::ATOMIC_ONE_ADDRESS,
            AtomicPattern::RandomBins => k::ATOMIC_RANDOM_BINS,
        }
    }
}

/// What a launch of [`shared_atomic_rate`] did.
#[derive(Clone, Copy, Debug)]
pub struct AtomicLaunch {
    /// The launch: one wave of [`ATOMIC_RATE_BLOCK`](k::ATOMIC_RATE_BLOCK) (512) threads.
    pub config: LaunchConfig,
    /// Shared atomics issued (lane operations): blocks x threads x `iterations`. Divide by
    /// the kernel's time for the rate.
    pub atomics: u64,
}

/// Queues the shared-atomic microbenchmark `histogram_shared_atomic_rate`: one wave of blocks
/// of 512 threads, each thread issuing `iterations` `red.shared.add.u32` to the addresses
/// `pattern` names in its warp's 256 words; each block then adds one word to `sink[0]`.
/// Time it (events around the call) and divide [`AtomicLaunch::atomics`] by the time: the
/// shared atomics per second the device sustains, the ceiling of the privatised histograms
/// (one atomic per byte on uniform random bytes).
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) unless `sink` holds one `u32`;
/// [`Error::WrongContext`](crate::Error::WrongContext); [`Error::Driver`](crate::Error::Driver)
/// if the occupancy cannot be read or the launch fails.
pub fn shared_atomic_rate(
    gpu: &Gpu,
    pattern: AtomicPattern,
    iterations: u32,
    sink: &mut impl DevicePtrMut<u32>,
) -> Result<AtomicLaunch> {
    gpu.check_buffer("sink", sink)?;
    expect_len("sink", 1, sink.len())?;
    let kernel = fast::histogram_shared_atomic_rate;
    let grid = gpu.one_wave(kernel.name(), k::ATOMIC_RATE_BLOCK, 0)?;
    let config = launch::linear(grid, k::ATOMIC_RATE_BLOCK, 0);
    // SAFETY: `histogram_shared_atomic_rate` takes `(iterations, pattern, sink: *mut u32)`;
    // `sink` holds one `u32` (checked) in `gpu`'s context (checked); blocks of
    // ATOMIC_RATE_BLOCK threads, a multiple of 32.
    unsafe { gpu.launch_unchecked(kernel, config, (iterations, pattern.code(), sink)) }?;
    Ok(AtomicLaunch {
        config,
        atomics: grid as u64 * k::ATOMIC_RATE_BLOCK as u64 * iterations as u64,
    })
}
