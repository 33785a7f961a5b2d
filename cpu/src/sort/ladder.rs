//! The textbook ladder below the one-sweep sort: the radix sorts a course builds first, each
//! correct and each slower than the next, measured by `demo sort` beside [`super::keys`].
//!
//! - [`one_bit_per_pass`]: *Programming Massively Parallel Processors* (4th ed., §13.2-13.3),
//!   one bit per pass, each pass a stable split by an exclusive scan of the bit
//!   (`gpu::sort::ladder`): 32 passes of three launches for `u32` keys.
//! - [`several_bits_per_pass`]: PMPP §13.4-13.5, four bits per pass: each tile of 256 keys
//!   sorted by the digit in shared memory, the tiles' digit counts scanned, the tiles' runs
//!   written out coalesced: 8 passes of three launches.
//! - [`reduce_then_scan`]: CUB's design before one-sweep (Merrill and Grimshaw, 2011): per
//!   4-bit digit an upsweep that only counts each tile's digits, the scan, and a downsweep that
//!   sorts each tile in shared memory and scatters it, so no sorted tile goes through global
//!   memory: 8 passes of three launches.

use cudarc::driver::{CudaSlice, DevicePtrMut};
use gpu::sort::ladder::{
    LADDER_BLOCK, LADDER_DIGIT_BITS, LADDER_DIGITS, LADDER_TILE, sort_ladder_bits,
    sort_ladder_downsweep, sort_ladder_local, sort_ladder_scatter, sort_ladder_split,
    sort_ladder_upsweep,
};

use super::{MAX_SORT_LEN, copy};
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::launch;
use crate::scan;

/// Sorts `u32` keys in place, ascending and stable, one bit per pass (PMPP's first radix sort):
/// for each of the 32 bits, `sort_ladder_bits` writes every key's bit, the library's
/// [`scan::exclusive_sum`] counts the ones before each key, and `sort_ladder_split` moves each
/// key to its place (the zeros first, then the ones, each in input order). Queued on `gpu`'s
/// stream.
///
/// Memory: four buffers of `n` `u32` allocated per call (two for the keys, the bits, the scan);
/// the keys are copied into the first and back at the end. Launches: two copies, and per pass
/// two kernels of `ceil(n / 256)` blocks of 256 threads and a scan. An input of 0 or 1 key
/// launches nothing.
///
/// # Errors
/// [`Error::OutOfRange`] for more than [`MAX_SORT_LEN`] keys; [`Error::WrongContext`] if
/// `keys` lives on another device; [`Error::OutOfMemory`] for the buffers; [`Error::Driver`]
/// if a launch or copy fails.
pub fn one_bit_per_pass(gpu: &Gpu, keys: &mut impl DevicePtrMut<u32>) -> Result<()> {
    let n = keys.len();
    check(gpu, keys)?;
    if n <= 1 {
        return Ok(());
    }
    let mut a: CudaSlice<u32> = gpu.zeros(n)?;
    let mut b: CudaSlice<u32> = gpu.zeros(n)?;
    let mut bits: CudaSlice<u32> = gpu.zeros(n)?;
    let mut ones_before: CudaSlice<u32> = gpu.zeros(n)?;
    let stream = gpu.stream();
    let user = gpu.bind_mut(keys).address();
    let bytes = n * size_of::<u32>();
    // SAFETY: `user` holds `n` keys (its length) in this context (checked); `a` is a fresh
    // allocation of `n` keys: they do not overlap.
    unsafe { copy(stream, user, gpu.address(&a), bytes)? };
    let cfg = launch::linear(n.div_ceil(LADDER_BLOCK as usize) as u32, LADDER_BLOCK, 0);
    for shift in 0..32 {
        gpu.launch(sort_ladder_bits, cfg, (&a, shift, &mut bits))?;
        scan::exclusive_sum(gpu, &bits, &mut ones_before)?;
        // SAFETY: `a`, `b` and `ones_before` hold `n >= 2` elements each in this context; `b`
        // does not overlap `a`; `ones_before` is the exclusive sum of bit `shift` of `a` (the
        // two launches before, queued on the same stream), as the kernel requires; the grid
        // covers `n` with 256-thread blocks.
        unsafe {
            gpu.launch_unchecked(sort_ladder_split, cfg, (&a, &mut b, &ones_before, n, shift))?;
        }
        std::mem::swap(&mut a, &mut b);
    }
    // SAFETY: after 32 passes (an even count) `a` holds the sorted keys; it does not overlap
    // the caller's buffer, which holds `n` keys.
    unsafe { copy(stream, gpu.address(&a), user, bytes) }
}

/// Sorts `u32` keys in place, ascending and stable, four bits per pass (PMPP §13.4-13.5): for
/// each of the 8 digits, `sort_ladder_local` sorts every tile of 256 keys by the digit in
/// shared memory and counts its digits, the library's [`scan::exclusive_sum`] turns the counts
/// (digit-major) into each tile's start of each digit, and `sort_ladder_scatter` writes each
/// tile's runs there. Queued on `gpu`'s stream.
///
/// Memory: two buffers of `n` `u32` and two of `16 * ceil(n / 256)` allocated per call; the keys
/// are copied into the first and back at the end. Launches: two copies, and per pass two
/// kernels of `ceil(n / 256)` blocks of 256 threads and a scan. An input of 0 or 1 key launches
/// nothing.
///
/// # Errors
/// As [`one_bit_per_pass`].
pub fn several_bits_per_pass(gpu: &Gpu, keys: &mut impl DevicePtrMut<u32>) -> Result<()> {
    tiled(gpu, keys, false)
}

/// Sorts `u32` keys in place, ascending and stable, reduce-then-scan (CUB's `DeviceRadixSort`
/// before one-sweep; Merrill and Grimshaw, "High Performance and Scalable Radix Sorting",
/// 2011), four bits per pass: for each of the 8 digits, `sort_ladder_upsweep` counts every
/// tile's digits, [`scan::exclusive_sum`] turns the counts into each tile's start of each
/// digit, and `sort_ladder_downsweep` reads each tile again, sorts it in shared memory and
/// writes its runs there. Queued on `gpu`'s stream.
///
/// Memory and launches: as [`several_bits_per_pass`].
///
/// # Errors
/// As [`one_bit_per_pass`].
pub fn reduce_then_scan(gpu: &Gpu, keys: &mut impl DevicePtrMut<u32>) -> Result<()> {
    tiled(gpu, keys, true)
}

/// The second rung (`fused` false: the sorted tiles written between the count and the
/// scatter) and the third (`fused` true: counted, then sorted and scattered in one launch).
fn tiled(gpu: &Gpu, keys: &mut impl DevicePtrMut<u32>, fused: bool) -> Result<()> {
    let n = keys.len();
    check(gpu, keys)?;
    if n <= 1 {
        return Ok(());
    }
    let blocks = n.div_ceil(LADDER_TILE);
    let mut a: CudaSlice<u32> = gpu.zeros(n)?;
    let mut b: CudaSlice<u32> = gpu.zeros(n)?;
    let mut counts: CudaSlice<u32> = gpu.zeros(LADDER_DIGITS * blocks)?;
    let mut starts: CudaSlice<u32> = gpu.zeros(LADDER_DIGITS * blocks)?;
    let stream = gpu.stream();
    let user = gpu.bind_mut(keys).address();
    let bytes = n * size_of::<u32>();
    // SAFETY: `user` holds `n` keys in this context (checked); `a` is a fresh allocation.
    unsafe { copy(stream, user, gpu.address(&a), bytes)? };
    let cfg = launch::linear(blocks as u32, LADDER_BLOCK, 0);
    for shift in (0..32).step_by(LADDER_DIGIT_BITS as usize) {
        // SAFETY: `a` and `b` hold `n` keys each and do not overlap; `counts` and `starts` hold
        // `16 * blocks` words; `shift <= 28`; the grid is `blocks` blocks of 256 threads; the
        // scatter's `counts` are the tiles' digit counts at this `shift` and `starts` their
        // exclusive sum (the launches before it, on the same stream), of the tiles it reads
        // (`b`, the sorted tiles, or `a` itself, sorted again the same way).
        unsafe {
            if fused {
                gpu.launch_unchecked(sort_ladder_upsweep, cfg, (&a, &mut counts, n, shift))?;
            } else {
                gpu.launch_unchecked(sort_ladder_local, cfg, (&a, &mut b, &mut counts, n, shift))?;
            }
            scan::exclusive_sum(gpu, &counts, &mut starts)?;
            if fused {
                let args = (&a, &mut b, &counts, &starts, n, shift);
                gpu.launch_unchecked(sort_ladder_downsweep, cfg, args)?;
                std::mem::swap(&mut a, &mut b);
            } else {
                let args = (&b, &mut a, &counts, &starts, n, shift);
                gpu.launch_unchecked(sort_ladder_scatter, cfg, args)?;
            }
        }
    }
    // SAFETY: after 8 passes `a` holds the sorted keys (the fused passes swap an even number
    // of times); it does not overlap the caller's `n` keys.
    unsafe { copy(stream, gpu.address(&a), user, bytes) }
}

/// The checks every rung makes before any device work: the length and the keys' device.
fn check(gpu: &Gpu, keys: &impl DevicePtrMut<u32>) -> Result<()> {
    if keys.len() > MAX_SORT_LEN {
        return Err(Error::OutOfRange {
            what: "keys",
            value: keys.len() as u64,
            min: 0,
            max: MAX_SORT_LEN as u64,
        });
    }
    gpu.check_buffer("keys", keys)
}
