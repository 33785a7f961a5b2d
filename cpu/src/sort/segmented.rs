//! Segmented radix sort over CSR offsets (CUB's `DeviceSegmentedRadixSort` and
//! `DeviceSegmentedSort`): segment `s` of the keys is `keys[offsets[s]..offsets[s + 1]]`, and
//! each segment is sorted on its own, stably, in place, ascending or descending, with its
//! values when there are values; keys outside every segment are left as they are.
//!
//! Two launches: `gpu::sort::segmented::sort_segments_check` checks the offsets (no offset
//! below the one before it, none past the keys' end, so that the segments are disjoint), then
//! `sort_segmented` gives each segment a block of 256 threads, which sorts it by 8-bit digits,
//! least significant first, ranking and placing each tile of 4096 keys as a one-sweep pass
//! does (see [`gpu::sort::segmented`]). The sort waits for the check's verdict, so a bad offset
//! is an [`Error::InvalidOffsets`] and nothing is written.
//!
//! ```no_run
//! use cpu::{Gpu, sort::{self, Order}};
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = Gpu::new(0)?;
//! let mut keys = gpu.upload(&[3u32, 1, 2, 9, 7, 8, 5])?;
//! let offsets = gpu.upload(&[0u64, 3, 3, 6])?; // [3, 1, 2], [], [9, 7, 8]; 5 is in none
//! sort::segmented_keys(&gpu, &mut keys, &offsets, Order::Ascending)?; // [1, 2, 3, 7, 8, 9, 5]
//! # Ok(())
//! # }
//! ```

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu::sort::segmented::sort_segments_check;
use gpu::sort::{self as k, RadixBits};
use gpu_std::host::Kernel;

use super::{Order, RadixSort, SortKey, SortValue, ValueWidth, address, check_values};
use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
use crate::launch;

/// The sort of every segment of keys `B` with values `V`: `(keys, alt_keys, values,
/// alt_values, offsets, bad, kind, flip, passes)`.
pub type SegmentedKernel<B, V> = Kernel<(
    *mut B,
    *mut B,
    *mut V,
    *mut V,
    *const u64,
    *const u64,
    u32,
    B,
    u32,
)>;

/// The most segments one sort takes: one block each, and a grid's width.
pub const MAX_SEGMENTS: usize = (1 << 31) - 1;

/// Threads per block of the offsets' check.
pub(super) const CHECK_BLOCK: u32 = 256;

/// The device memory of one segmented sort, checked and bound by the caller: addresses (0:
/// no values), the keys' length, the segments.
struct Segmented {
    keys: u64,
    values: u64,
    offsets: u64,
    n: usize,
    segments: usize,
}

impl RadixSort {
    /// Sorts each segment `keys[offsets[s]..offsets[s + 1]]` in place, stably (see the
    /// [module docs](self)); `offsets` holds `segments + 1` offsets on the device. Queued on
    /// `gpu`'s stream, then waits for it to learn the offsets' check.
    ///
    /// Launch: the check (a grid-stride loop, 256 threads a block), then one block of 256
    /// threads per segment; a segment of fewer than 2 keys costs its block one read of its
    /// offsets.
    ///
    /// # Errors
    /// [`Error::InvalidOffsets`] (naming a segment) if an offset is below the one before it or
    /// past the keys' end: nothing is written; [`Error::LengthMismatch`] for an empty
    /// `offsets`; [`Error::OutOfRange`] for more than [`MAX_SORT_LEN`](super::MAX_SORT_LEN)
    /// keys or [`MAX_SEGMENTS`] segments; [`Error::WrongContext`] if a buffer lives on another
    /// device; [`Error::OutOfMemory`] if the workspace cannot grow; [`Error::Driver`] if a
    /// launch or copy fails.
    pub fn segmented_keys<K: SortKey>(
        &mut self,
        gpu: &Gpu,
        keys: &mut impl DevicePtrMut<K>,
        offsets: &impl DevicePtr<u64>,
        order: Order,
    ) -> Result<()> {
        let segments = check::<K>(gpu, keys, offsets)?;
        let n = keys.len();
        let (keys, offsets_at) = (gpu.bind_mut(keys), gpu.bind(offsets).address());
        let plan = Segmented {
            keys: keys.address(),
            values: 0,
            offsets: offsets_at,
            n,
            segments,
        };
        self.segmented::<K, u32>(gpu, plan, order, offsets)
    }

    /// Sorts each segment of `keys` in place and moves `values[i]` with `keys[i]`, stably. As
    /// [`RadixSort::segmented_keys`] otherwise.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `values` is not as long as `keys`; as
    /// [`RadixSort::segmented_keys`] otherwise.
    pub fn segmented_pairs<K: SortKey, V: SortValue>(
        &mut self,
        gpu: &Gpu,
        keys: &mut impl DevicePtrMut<K>,
        values: &mut impl DevicePtrMut<V>,
        offsets: &impl DevicePtr<u64>,
        order: Order,
    ) -> Result<()> {
        let segments = check::<K>(gpu, keys, offsets)?;
        let n = keys.len();
        check_values(gpu, "values", n, values)?;
        let keys = gpu.bind_mut(keys);
        let values = gpu.bind_mut(values);
        let plan = Segmented {
            keys: keys.address(),
            values: values.address(),
            offsets: gpu.bind(offsets).address(),
            n,
            segments,
        };
        self.segmented::<K, V>(gpu, plan, order, offsets)
    }

    /// Queues the check and the sort of `plan`, then waits for the check's verdict.
    fn segmented<K: SortKey, V: SortValue>(
        &mut self,
        gpu: &Gpu,
        plan: Segmented,
        order: Order,
        offsets: &impl DevicePtr<u64>,
    ) -> Result<()> {
        let Segmented {
            keys,
            values,
            offsets: offsets_at,
            n,
            segments,
        } = plan;
        if segments == 0 {
            return Ok(());
        }
        let with_values = values != 0;
        self.grow(
            gpu,
            n,
            size_of::<K>(),
            with_values.then_some(size_of::<V>()),
            0,
        )?;
        let stream = gpu.stream();
        stream
            .memset_zeros(&mut self.bad)
            .during("zeroing the segmented sort's verdict")?;
        let grid = segments
            .div_ceil(CHECK_BLOCK as usize)
            .clamp(1, self.check_wave as usize) as u32;
        // SAFETY: `sort_segments_check` takes `(offsets, segments, n, bad)`; `offsets` holds
        // `segments + 1` words (checked) and is only read; `bad` is one word.
        unsafe {
            gpu.launch_unchecked(
                sort_segments_check,
                launch::linear(grid, CHECK_BLOCK, 0),
                (
                    &address::<u64>(offsets_at, segments + 1, stream),
                    segments,
                    n,
                    &mut self.bad,
                ),
            )?;
        }
        let flip = if order == Order::Descending {
            K::Bits::ONES
        } else {
            K::Bits::ZERO
        };
        let value_bytes = if with_values { size_of::<V>() } else { 0 };
        let smem = k::onesweep_shared_bytes(size_of::<K>(), value_bytes);
        let vlen = if with_values { n } else { 0 };
        let (alt_keys, _alt_keys) = self.keys.device_ptr_mut(stream);
        let (alt_values, _alt_values) = self.values.device_ptr_mut(stream);
        // SAFETY: `sort_segmented` takes `(keys, alt_keys, values, alt_values, offsets, bad,
        // kind, flip, passes)`; the keys and the workspace's second buffer hold `n` keys each and do not
        // overlap (the caller's buffer is borrowed mutably), as do the values (or both are
        // null); `offsets` holds `segments + 1` words, one block per segment; `bad` is the
        // check's word over these offsets and `n`, queued before on the same stream; the
        // blocks are 256 threads with the dynamic shared memory of a tile of keys and values.
        unsafe {
            gpu.launch_unchecked(
                V::Bits::segmented::<K::Bits>(),
                launch::linear(segments as u32, k::ONESWEEP_BLOCK, smem as u32),
                (
                    &mut address::<K::Bits>(keys, n, stream),
                    &mut address::<K::Bits>(alt_keys, n, stream),
                    &mut address::<V::Bits>(values, vlen, stream),
                    &mut address::<V::Bits>(if with_values { alt_values } else { 0 }, vlen, stream),
                    &address::<u64>(offsets_at, segments + 1, stream),
                    &self.bad,
                    K::KIND,
                    flip,
                    super::passes(&super::all_bits::<K>()),
                ),
            )?;
        }
        verdict(gpu, &self.bad, offsets, n)
    }
}

/// The checks before any device work: the keys' length and device, the offsets' count and
/// device. Returns the count of segments.
fn check<K: SortKey>(
    gpu: &Gpu,
    keys: &impl cudarc::driver::DeviceSlice<K>,
    offsets: &impl DevicePtr<u64>,
) -> Result<usize> {
    super::check::<K>(gpu, keys.len(), &super::all_bits::<K>(), keys)?;
    gpu.check_buffer("offsets", offsets)?;
    let segments = offsets.len().checked_sub(1).ok_or(Error::LengthMismatch {
        what: "offsets",
        expected: 1,
        actual: 0,
    })?;
    if segments > MAX_SEGMENTS {
        return Err(Error::OutOfRange {
            what: "segments",
            value: segments as u64,
            min: 0,
            max: MAX_SEGMENTS as u64,
        });
    }
    Ok(segments)
}

/// [`Error::InvalidOffsets`] naming the segment the check reported, if any.
fn verdict(gpu: &Gpu, bad: &CudaSlice<u64>, offsets: &impl DevicePtr<u64>, n: usize) -> Result<()> {
    let reported = gpu.download(bad, "the segmented sort's verdict")?[0];
    if reported == 0 {
        return Ok(());
    }
    let segment = (reported - 1) as usize;
    let all = gpu.download(offsets, "the segment offsets")?;
    Err(Error::InvalidOffsets {
        segment,
        begin: all[segment],
        end: all[segment + 1],
        len: n,
    })
}

/// [`RadixSort::segmented_keys`] on the sort workspace `gpu` keeps for its stream.
///
/// # Errors
/// As [`RadixSort::segmented_keys`].
pub fn segmented_keys<K: SortKey>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    offsets: &impl DevicePtr<u64>,
    order: Order,
) -> Result<()> {
    gpu.with_workspace(RadixSort::new, |ws| {
        ws.segmented_keys(gpu, keys, offsets, order)
    })
}

/// [`RadixSort::segmented_pairs`] on the sort workspace `gpu` keeps for its stream.
///
/// # Errors
/// As [`RadixSort::segmented_pairs`].
pub fn segmented_pairs<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    offsets: &impl DevicePtr<u64>,
    order: Order,
) -> Result<()> {
    gpu.with_workspace(RadixSort::new, |ws| {
        ws.segmented_pairs(gpu, keys, values, offsets, order)
    })
}
