//! Radix sort of keys, and of keys with values, on the caller's device memory and stream
//! (CUB's `DeviceRadixSort::SortKeys`/`SortPairs`; `torch.sort`, `torch.argsort`): stable,
//! ascending or descending, over `u8`..`u64`, `i8`..`i64`, `f32` and `f64` keys, values of
//! 4 or 8 bytes, an optional bit range (`begin_bit..end_bit`, CUB's).
//!
//! The sort is the one-sweep LSD radix sort of Adinets and Merrill (2022; CUB's since 1.15):
//! one launch counts the digits of every pass (`gpu::sort::onesweep::sort_histogram`), then one
//! launch per 8-bit digit (`sort_onesweep`) moves each key once to its place, ranking each
//! tile's keys in shared memory and finding where each digit's run goes by a decoupled
//! look-back over the digit counts of the tiles before it. Per 8-bit pass it reads and writes
//! each key (and value) once; the up-front count reads the keys once more.
//!
//! Floats are ordered as `torch.sort` orders them: `-0.0` equals `+0.0` (a stable sort keeps
//! their input order), NaN is greater than every number (first in a descending sort) and
//! equal to every other NaN; keys keep their own bits. A NaN is any pattern with an all-ones
//! exponent and a non-zero mantissa whatever its sign bit: a negative NaN (`-f32::NAN`) sorts
//! with the other NaNs above `+inf`, not below `-inf` as in [`f32::total_cmp`], and NaNs of any
//! sign or payload keep their input order among themselves.
//!
//! # The bit pattern a sort orders (and `keys_bits`' bits)
//! Each key is mapped to an unsigned pattern of its width whose unsigned order is the key's
//! order, then inverted (all bits XORed) for a descending sort; the digits, and
//! [`keys_bits`]' `begin_bit..end_bit`, are bits of that pattern, not of the key:
//!
//! | key | pattern |
//! |---|---|
//! | `u8`..`u64` | the key's bits |
//! | `i8`..`i64` | the sign bit flipped (`i32::MIN` is 0, `-1` is `0x7fff_ffff`, `0` is `0x8000_0000`) |
//! | `f32`, `f64`, negative (sign bit set, not NaN) | every bit flipped (`-inf` is `0x007f_ffff`) |
//! | `f32`, `f64`, `+0.0` and `-0.0` | the sign bit alone (`0x8000_0000`) |
//! | `f32`, `f64`, positive | the sign bit set (`+inf` is `0xff80_0000`) |
//! | `f32`, `f64`, any NaN | all ones (`0xffff_ffff`) |
//!
//! So for `f32` the top bit `31..32` separates the negative numbers from the rest, and a sort
//! of `f32` by `0..23` orders by the mantissa bits of the pattern only.
//!
//! ```no_run
//! use cpu::{Gpu, sort::{self, Order}};
//!
//! # fn main() -> cpu::Result<()> {
//! let gpu = Gpu::new(0)?;
//! let mut keys = gpu.upload(&[3.0f32, -1.0, f32::NAN, 0.5])?;
//! let mut values = gpu.upload(&[0u32, 1, 2, 3])?;
//! sort::pairs(&gpu, &mut keys, &mut values, Order::Ascending)?; // [-1, 0.5, 3, NaN], [1, 3, 0, 2]
//! # Ok(())
//! # }
//! ```

pub mod ladder;
pub mod reference;
pub mod segmented;

pub use segmented::{MAX_SEGMENTS, segmented_keys, segmented_pairs};

use std::ops::Range;

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use gpu::sort::onesweep::{self as kernels, sort_histogram};
use gpu::sort::segmented as segmented_kernels;
use gpu::sort::{self as k, RadixBits};
use gpu_std::DeviceCopy;
use gpu_std::host::Kernel;
use segmented::SegmentedKernel;

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result, expect_len};
use crate::kernel::DeviceAddress;
use crate::launch;

pub use gpu::sort::MAX_SORT_LEN;

/// Which way the keys go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Smallest first (`torch.sort`'s default).
    Ascending,
    /// Largest first (`descending=True`; NaN first for floats).
    Descending,
}

mod sealed {
    pub trait Sealed {}
}

/// One pass of the one-sweep sort of keys `B` with values `V`: `(keys_in, keys_out, values_in,
/// values_out, n, kind, flip, shift, mask, digit_counts, status, counter)`.
pub type OnesweepKernel<B, V> = Kernel<(
    *const B,
    *mut B,
    *const V,
    *mut V,
    usize,
    u32,
    B,
    u32,
    u32,
    *const u32,
    *mut u32,
    *mut u32,
)>;

/// The digit count of every pass of keys `B`: `(keys, n, kind, flip, begin_bit, end_bit,
/// passes, counts)`.
pub type HistogramKernel<B> = Kernel<(*const B, usize, u32, B, u32, u32, u32, *mut u32)>;

/// The unsigned key bits the kernels sort (`u8`, `u16`, `u32`, `u64`) and their instances.
pub trait KeyBits: RadixBits + DeviceCopy + DeviceRepr + sealed::Sealed {
    /// The digit count.
    const HISTOGRAM: HistogramKernel<Self>;
    /// One pass with 4-byte values (or none).
    const ONESWEEP_V32: OnesweepKernel<Self, u32>;
    /// One pass with 8-byte values.
    const ONESWEEP_V64: OnesweepKernel<Self, u64>;
    /// The segmented sort with 4-byte values (or none).
    const SEGMENTED_V32: SegmentedKernel<Self, u32>;
    /// The segmented sort with 8-byte values.
    const SEGMENTED_V64: SegmentedKernel<Self, u64>;
}

macro_rules! key_bits {
    ($($t:ty => $h:ident, $v32:ident, $v64:ident, $s32:ident, $s64:ident;)*) => {$(
        impl KeyBits for $t {
            const HISTOGRAM: HistogramKernel<$t> = kernels::$h;
            const ONESWEEP_V32: OnesweepKernel<$t, u32> = kernels::$v32;
            const ONESWEEP_V64: OnesweepKernel<$t, u64> = kernels::$v64;
            const SEGMENTED_V32: SegmentedKernel<$t, u32> = segmented_kernels::$s32;
            const SEGMENTED_V64: SegmentedKernel<$t, u64> = segmented_kernels::$s64;
        }
    )*};
}
key_bits! {
    u8 => sort_histogram_u8, sort_onesweep_u8_v32, sort_onesweep_u8_v64,
        sort_segmented_u8_v32, sort_segmented_u8_v64;
    u16 => sort_histogram_u16, sort_onesweep_u16_v32, sort_onesweep_u16_v64,
        sort_segmented_u16_v32, sort_segmented_u16_v64;
    u32 => sort_histogram_u32, sort_onesweep_u32_v32, sort_onesweep_u32_v64,
        sort_segmented_u32_v32, sort_segmented_u32_v64;
    u64 => sort_histogram_u64, sort_onesweep_u64_v32, sort_onesweep_u64_v64,
        sort_segmented_u64_v32, sort_segmented_u64_v64;
}

/// A key type the sort takes: `u8`..`u64`, `i8`..`i64`, `f32`, `f64`.
pub trait SortKey:
    DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + 'static + sealed::Sealed
{
    /// The unsigned type of the same width that the kernels sort.
    type Bits: KeyBits;
    /// How the bits map to the unsigned order (`gpu::sort::KEY_*`).
    const KIND: u32;
}

/// The unsigned value bits the kernels move (`u32`, `u64`).
pub trait ValueWidth: DeviceRepr + sealed::Sealed {
    /// The pass for keys `B` with values of these bits.
    fn onesweep<B: KeyBits>() -> OnesweepKernel<B, Self>;
    /// The segmented sort of keys `B` with values of these bits.
    fn segmented<B: KeyBits>() -> SegmentedKernel<B, Self>;
}

impl ValueWidth for u32 {
    fn onesweep<B: KeyBits>() -> OnesweepKernel<B, u32> {
        B::ONESWEEP_V32
    }
    fn segmented<B: KeyBits>() -> SegmentedKernel<B, u32> {
        B::SEGMENTED_V32
    }
}

impl ValueWidth for u64 {
    fn onesweep<B: KeyBits>() -> OnesweepKernel<B, u64> {
        B::ONESWEEP_V64
    }
    fn segmented<B: KeyBits>() -> SegmentedKernel<B, u64> {
        B::SEGMENTED_V64
    }
}

/// A value type the sort carries with its keys: any 4- or 8-byte primitive.
pub trait SortValue:
    DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + 'static + sealed::Sealed
{
    /// The unsigned type of the same width that the kernels move.
    type Bits: ValueWidth;
}

impl sealed::Sealed for u8 {}
impl sealed::Sealed for u16 {}
impl sealed::Sealed for u32 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for i8 {}
impl sealed::Sealed for i16 {}
impl sealed::Sealed for i32 {}
impl sealed::Sealed for i64 {}
impl sealed::Sealed for f32 {}
impl sealed::Sealed for f64 {}

macro_rules! keys {
    ($($t:ty => $b:ty, $kind:ident;)*) => {$(
        impl SortKey for $t {
            type Bits = $b;
            const KIND: u32 = k::$kind;
        }
    )*};
}
keys! {
    u8 => u8, KEY_UNSIGNED; u16 => u16, KEY_UNSIGNED; u32 => u32, KEY_UNSIGNED;
    u64 => u64, KEY_UNSIGNED; i8 => u8, KEY_SIGNED; i16 => u16, KEY_SIGNED;
    i32 => u32, KEY_SIGNED; i64 => u64, KEY_SIGNED; f32 => u32, KEY_FLOAT; f64 => u64, KEY_FLOAT;
}

macro_rules! values {
    ($($t:ty => $b:ty;)*) => {$(
        impl SortValue for $t {
            type Bits = $b;
        }
    )*};
}
values! { u32 => u32; i32 => u32; f32 => u32; u64 => u64; i64 => u64; f64 => u64; }

/// The radix sort's scratch on one device: the second buffer of keys and of values (the
/// passes go back and forth between the output and these), a buffer for the sorted keys of an
/// argsort, the digit counts of every pass, the tiles' look-back status words (256 per tile of
/// 4096 keys: 256 KiB per 2^20 keys), and the tile ticket. It grows to the longest input it has
/// sorted.
///
/// One workspace serves one sort at a time: cudarc's stream synchronisation orders sorts that
/// share it, also across streams.
pub struct RadixSort {
    keys: CudaSlice<u64>,
    values: CudaSlice<u64>,
    sorted: Option<CudaSlice<u64>>,
    counts: CudaSlice<u32>,
    status: CudaSlice<u32>,
    counter: CudaSlice<u32>,
    /// The segmented sort's verdict on its offsets (0, or a bad segment plus one).
    bad: CudaSlice<u64>,
    histogram_wave: u32,
    /// The segmented sort's offsets check: one wave of its blocks.
    check_wave: u32,
}

/// The passes of a sort of the bits `bits` (8 bits per pass, the last narrower).
fn passes(bits: &Range<u32>) -> u32 {
    (bits.end - bits.start).div_ceil(k::RADIX_BITS)
}

/// The whole key's bits.
fn all_bits<K>() -> Range<u32> {
    0..8 * size_of::<K>() as u32
}

/// Where one sort reads and writes: device addresses (0: none).
struct Plan {
    keys_in: u64,
    keys_out: u64,
    /// 0 with `values_out` set: each key's index (an argsort).
    values_in: u64,
    values_out: u64,
    n: usize,
}

impl RadixSort {
    /// An empty workspace (it grows on the first sort).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; [`Error::Driver`] if a query or allocation fails.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Self {
            keys: gpu.zeros(1)?,
            values: gpu.zeros(1)?,
            sorted: None,
            counts: gpu.zeros(8 * k::RADIX)?,
            status: gpu.zeros(k::RADIX)?,
            counter: gpu.zeros(1)?,
            bad: gpu.zeros(1)?,
            histogram_wave: gpu.one_wave(sort_histogram::<u32>().name(), k::HISTOGRAM_BLOCK, 0)?,
            check_wave: gpu.one_wave(
                gpu::sort::segmented::sort_segments_check.name(),
                segmented::CHECK_BLOCK,
                0,
            )?,
        })
    }

    /// Sorts `keys` in place, stably (see the [module docs](self)); queued on `gpu`'s stream.
    ///
    /// Launches: one histogram, then one pass per 8 bits of the key (4 for 32-bit keys), and a
    /// device copy back into `keys` when that count is odd (1-byte keys). An input of 0 or 1
    /// key launches nothing.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for more than [`MAX_SORT_LEN`] keys; [`Error::WrongContext`] if
    /// `keys` lives on another device; [`Error::OutOfMemory`] if the workspace cannot grow;
    /// [`Error::Driver`] if a launch or copy fails.
    pub fn keys<K: SortKey>(
        &mut self,
        gpu: &Gpu,
        keys: &mut impl DevicePtrMut<K>,
        order: Order,
    ) -> Result<()> {
        self.keys_bits(gpu, keys, order, all_bits::<K>())
    }

    /// Sorts `keys` in place by the bits `bits` of their ordered pattern only (CUB's
    /// `begin_bit..end_bit`: bits of the key mapped to the unsigned order, descending ones
    /// inverted, as the [module](self#the-bit-pattern-a-sort-orders-and-keys_bits-bits) table
    /// maps them: signed keys with the sign bit flipped, floats with negative ones inverted,
    /// zeros of both signs equal and every NaN all ones; `0..8 * size_of::<K>()` is the whole
    /// key): fewer passes when the keys are known to differ only there. As
    /// [`RadixSort::keys`] otherwise.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for an empty bit range or one past the key's width; as
    /// [`RadixSort::keys`] otherwise.
    pub fn keys_bits<K: SortKey>(
        &mut self,
        gpu: &Gpu,
        keys: &mut impl DevicePtrMut<K>,
        order: Order,
        bits: Range<u32>,
    ) -> Result<()> {
        let n = keys.len();
        check::<K>(gpu, n, &bits, keys)?;
        let bound = gpu.bind_mut(keys);
        let at = bound.address();
        let plan = Plan {
            keys_in: at,
            keys_out: at,
            values_in: 0,
            values_out: 0,
            n,
        };
        self.run::<K, u32>(gpu, plan, order, bits)
    }

    /// Sorts `keys` in place and moves `values[i]` with `keys[i]`, stably. As
    /// [`RadixSort::keys`] otherwise.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `values` is not as long as `keys`; as [`RadixSort::keys`]
    /// otherwise.
    pub fn pairs<K: SortKey, V: SortValue>(
        &mut self,
        gpu: &Gpu,
        keys: &mut impl DevicePtrMut<K>,
        values: &mut impl DevicePtrMut<V>,
        order: Order,
    ) -> Result<()> {
        let n = keys.len();
        check::<K>(gpu, n, &all_bits::<K>(), keys)?;
        check_values(gpu, "values", n, values)?;
        let keys = gpu.bind_mut(keys);
        let values = gpu.bind_mut(values);
        let plan = Plan {
            keys_in: keys.address(),
            keys_out: keys.address(),
            values_in: values.address(),
            values_out: values.address(),
            n,
        };
        self.run::<K, V>(gpu, plan, order, all_bits::<K>())
    }

    /// `sorted = keys` sorted stably and `indices[i]` the index in `keys` of `sorted[i]`
    /// (`torch.sort(stable=True)`); `keys` is left as it is. As [`RadixSort::keys`] otherwise.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `sorted` or `indices` is not as long as `keys`; as
    /// [`RadixSort::keys`] otherwise.
    pub fn sort_with_indices<K: SortKey>(
        &mut self,
        gpu: &Gpu,
        keys: &impl DevicePtr<K>,
        sorted: &mut impl DevicePtrMut<K>,
        indices: &mut impl DevicePtrMut<u32>,
        order: Order,
    ) -> Result<()> {
        let n = keys.len();
        check_values(gpu, "sorted", n, sorted)?;
        check::<K>(gpu, n, &all_bits::<K>(), keys)?;
        check_values(gpu, "indices", n, indices)?;
        let keys = gpu.bind(keys);
        let sorted = gpu.bind_mut(sorted);
        let indices = gpu.bind_mut(indices);
        let plan = Plan {
            keys_in: keys.address(),
            keys_out: sorted.address(),
            values_in: 0,
            values_out: indices.address(),
            n,
        };
        self.run::<K, u32>(gpu, plan, order, all_bits::<K>())
    }

    /// `indices[i]` the index in `keys` of the `i`-th key in stable sorted order
    /// (`torch.argsort(stable=True)`, as `u32`); `keys` is left as it is. The sorted keys go to
    /// the workspace. As [`RadixSort::keys`] otherwise.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `indices` is not as long as `keys`; as [`RadixSort::keys`]
    /// otherwise.
    pub fn argsort<K: SortKey>(
        &mut self,
        gpu: &Gpu,
        keys: &impl DevicePtr<K>,
        indices: &mut impl DevicePtrMut<u32>,
        order: Order,
    ) -> Result<()> {
        let n = keys.len();
        check::<K>(gpu, n, &all_bits::<K>(), keys)?;
        check_values(gpu, "indices", n, indices)?;
        let words = (n * size_of::<K>()).div_ceil(8);
        let mut sorted = match self.sorted.take() {
            Some(b) if b.len() >= words => b,
            _ => gpu.zeros(words.max(1))?,
        };
        let result = self.argsort_into(gpu, keys, &mut sorted, indices, order);
        self.sorted = Some(sorted);
        result
    }

    /// [`RadixSort::argsort`] with the sorted keys into `sorted`'s first `n` keys.
    fn argsort_into<K: SortKey>(
        &mut self,
        gpu: &Gpu,
        keys: &impl DevicePtr<K>,
        sorted: &mut CudaSlice<u64>,
        indices: &mut impl DevicePtrMut<u32>,
        order: Order,
    ) -> Result<()> {
        let room = sorted.len() * 8 / size_of::<K>();
        // SAFETY: `sorted` is 8-byte aligned, which covers `K`'s alignment, and any bits are a
        // valid `K` to overwrite; `transmute_mut` checks that it holds `n` of them.
        let view = unsafe { sorted.transmute_mut::<K>(keys.len()) };
        let mut view = view.ok_or(Error::LengthMismatch {
            what: "workspace",
            expected: keys.len(),
            actual: room,
        })?;
        self.sort_with_indices(gpu, keys, &mut view, indices, order)
    }

    /// Queues the sort of `plan` (its buffers checked and bound by the caller).
    fn run<K: SortKey, V: SortValue>(
        &mut self,
        gpu: &Gpu,
        plan: Plan,
        order: Order,
        bits: Range<u32>,
    ) -> Result<()> {
        let n = plan.n;
        if n <= 1 {
            // Nothing to order; what an out-of-place sort owes its outputs is still written.
            return self.trivial::<K, V>(gpu, &plan);
        }
        let tiles = n.div_ceil(k::ONESWEEP_TILE);
        let with_values = plan.values_out != 0;
        self.grow(
            gpu,
            n,
            size_of::<K>(),
            with_values.then_some(size_of::<V>()),
            tiles,
        )?;
        let passes = passes(&bits);
        let flip = if order == Order::Descending {
            K::Bits::ONES
        } else {
            K::Bits::ZERO
        };
        let stream = gpu.stream();
        stream
            .memset_zeros(&mut self.counts)
            .during("zeroing the sort's digit counts")?;
        let (alt_keys, _alt_keys) = self.keys.device_ptr_mut(stream);
        let (alt_values, _alt_values) = self.values.device_ptr_mut(stream);
        let in_place = plan.keys_in == plan.keys_out;
        // Pass `p` writes the output or the workspace, so that the last pass writes the output
        // (in place with an odd count of passes: the workspace, then a copy back).
        let to_output = |p: u32| {
            if in_place {
                !p.is_multiple_of(2)
            } else {
                (passes - 1 - p).is_multiple_of(2)
            }
        };
        let pick = |out: bool| {
            if out {
                (plan.keys_out, plan.values_out)
            } else {
                (alt_keys, if with_values { alt_values } else { 0 })
            }
        };
        let vlen = if with_values { n } else { 0 };
        let blocks = n.div_ceil(k::HISTOGRAM_BLOCK as usize * k::HISTOGRAM_UNROLL);
        let cfg = launch::linear(
            (blocks as u32).clamp(1, self.histogram_wave),
            k::HISTOGRAM_BLOCK,
            0,
        );
        // SAFETY: `sort_histogram` takes `(keys, n, kind, flip, begin_bit, end_bit, passes,
        // counts)`; `keys_in` holds `n` keys; `counts` holds `8 * 256 >= passes * 256` zeroed
        // words; `passes <= 8` and the bit range lies within the key (checked).
        unsafe {
            gpu.launch_unchecked(
                K::Bits::HISTOGRAM,
                cfg,
                (
                    &address::<K::Bits>(plan.keys_in, n, stream),
                    n,
                    K::KIND,
                    flip,
                    bits.start,
                    bits.end,
                    passes,
                    &mut self.counts,
                ),
            )?;
        }
        let value_bytes = if with_values { size_of::<V>() } else { 0 };
        let smem = k::onesweep_shared_bytes(size_of::<K>(), value_bytes);
        let cfg = launch::linear(tiles as u32, k::ONESWEEP_BLOCK, smem as u32);
        let status_words = tiles * k::RADIX;
        let (mut keys_in, mut values_in) = (plan.keys_in, plan.values_in);
        for p in 0..passes {
            let shift = bits.start + p * k::RADIX_BITS;
            let mask = (1u32 << (bits.end - shift).min(k::RADIX_BITS)) - 1;
            stream
                .memset_zeros(&mut self.status.slice_mut(0..status_words))
                .during("zeroing the sort's look-back status")?;
            let (keys_out, values_out) = pick(to_output(p));
            let counts = self
                .counts
                .slice(p as usize * k::RADIX..(p as usize + 1) * k::RADIX);
            // SAFETY: `sort_onesweep` takes `(keys_in, keys_out, values_in, values_out, n,
            // kind, flip, shift, mask, digit_counts, status, counter)`; the key buffers hold
            // `n` keys each and do not overlap (one is the workspace's, the other the caller's:
            // `to_output` alternates), as do the value buffers, or `values_out` is null, or
            // `values_in` is (indices); `counts` are this pass's digit counts of these keys
            // (the histogram's of the same multiset of keys, which each pass keeps); `status`
            // holds `256 * tiles` zeroed words; `counter` is 0 (zeroed at allocation, left 0 by
            // each launch); the grid is one 256-thread block per tile, with the dynamic shared
            // memory of a tile of keys and values (`onesweep_shared_bytes`).
            unsafe {
                gpu.launch_unchecked(
                    V::Bits::onesweep::<K::Bits>(),
                    cfg,
                    (
                        &address::<K::Bits>(keys_in, n, stream),
                        &mut address::<K::Bits>(keys_out, n, stream),
                        &address::<V::Bits>(
                            values_in,
                            if values_in == 0 { 0 } else { vlen },
                            stream,
                        ),
                        &mut address::<V::Bits>(values_out, vlen, stream),
                        n,
                        K::KIND,
                        flip,
                        shift,
                        mask,
                        &counts,
                        &mut self.status,
                        &mut self.counter,
                    ),
                )?;
            }
            (keys_in, values_in) = (keys_out, values_out);
        }
        if keys_in != plan.keys_out {
            // SAFETY: the workspace holds the sorted keys (values), `n` of them, and does not
            // overlap the caller's buffers.
            unsafe {
                copy(stream, keys_in, plan.keys_out, n * size_of::<K>())?;
                if with_values {
                    copy(stream, values_in, plan.values_out, n * size_of::<V>())?;
                }
            }
        }
        Ok(())
    }

    /// A sort of 0 or 1 key: the output is the input, and an argsort's one index is 0.
    fn trivial<K: SortKey, V: SortValue>(&mut self, gpu: &Gpu, plan: &Plan) -> Result<()> {
        if plan.n == 0 {
            return Ok(());
        }
        let stream = gpu.stream();
        // SAFETY: the plan's buffers hold one key (value) each, checked by the caller.
        unsafe {
            if plan.keys_in != plan.keys_out {
                copy(stream, plan.keys_in, plan.keys_out, size_of::<K>())?;
            }
            if plan.values_out != 0 {
                if plan.values_in == 0 {
                    cudarc::driver::result::memset_d8_async(
                        plan.values_out,
                        0,
                        size_of::<V>(),
                        stream.cu_stream(),
                    )
                    .during("writing an argsort's one index")?;
                } else if plan.values_in != plan.values_out {
                    copy(stream, plan.values_in, plan.values_out, size_of::<V>())?;
                }
            }
        }
        Ok(())
    }

    /// Grows the buffers to hold `n` keys of `key_bytes` (and values of `value_bytes`) and the
    /// status of `tiles` tiles.
    fn grow(
        &mut self,
        gpu: &Gpu,
        n: usize,
        key_bytes: usize,
        value_bytes: Option<usize>,
        tiles: usize,
    ) -> Result<()> {
        let words = |bytes: usize| (n * bytes).div_ceil(8);
        if self.keys.len() < words(key_bytes) {
            self.keys = gpu.zeros(words(key_bytes))?;
        }
        if let Some(b) = value_bytes
            && self.values.len() < words(b)
        {
            self.values = gpu.zeros(words(b))?;
        }
        if self.status.len() < tiles * k::RADIX {
            self.status = gpu.zeros(tiles * k::RADIX)?;
        }
        Ok(())
    }
}

/// The checks every sort makes before any device work: the bit range, the length and the
/// keys' device.
fn check<K: SortKey>(
    gpu: &Gpu,
    n: usize,
    bits: &Range<u32>,
    keys: &impl cudarc::driver::DeviceSlice<K>,
) -> Result<()> {
    let width = 8 * size_of::<K>() as u32;
    if bits.start >= bits.end || bits.end > width {
        return Err(Error::OutOfRange {
            what: "bits",
            value: bits.end as u64,
            min: bits.start as u64 + 1,
            max: width as u64,
        });
    }
    if n > MAX_SORT_LEN {
        return Err(Error::OutOfRange {
            what: "keys",
            value: n as u64,
            min: 0,
            max: MAX_SORT_LEN as u64,
        });
    }
    gpu.check_buffer("keys", keys)
}

/// The check of the values (indices) beside `n` keys.
fn check_values<V>(
    gpu: &Gpu,
    what: &'static str,
    n: usize,
    values: &impl cudarc::driver::DeviceSlice<V>,
) -> Result<()> {
    expect_len(what, n, values.len())?;
    gpu.check_buffer(what, values)
}

/// `len` elements at `ptr` for one launch of the sort.
///
/// # Safety
/// `ptr` is a buffer bound for the sort on `stream` (checked to hold `len` elements of `T`'s
/// size in `stream`'s context) or the workspace's (borrowed mutably, grown to `len`), valid
/// until the launch is queued; or 0 with `len` 0, the null address of no values.
unsafe fn address<T>(
    ptr: u64,
    len: usize,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
) -> DeviceAddress<'_, T> {
    // SAFETY: the caller's contract is `DeviceAddress::new`'s.
    unsafe { DeviceAddress::new(ptr, len, stream) }
}

/// [`RadixSort::keys`] on the sort workspace `gpu` keeps for its stream.
///
/// # Errors
/// As [`RadixSort::keys`].
pub fn keys<K: SortKey>(gpu: &Gpu, keys: &mut impl DevicePtrMut<K>, order: Order) -> Result<()> {
    gpu.with_workspace(RadixSort::new, |ws| ws.keys(gpu, keys, order))
}

/// [`RadixSort::keys_bits`] on the sort workspace `gpu` keeps for its stream.
///
/// # Errors
/// As [`RadixSort::keys_bits`].
pub fn keys_bits<K: SortKey>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    order: Order,
    bits: Range<u32>,
) -> Result<()> {
    gpu.with_workspace(RadixSort::new, |ws| ws.keys_bits(gpu, keys, order, bits))
}

/// [`RadixSort::pairs`] on the sort workspace `gpu` keeps for its stream.
///
/// # Errors
/// As [`RadixSort::pairs`].
pub fn pairs<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    order: Order,
) -> Result<()> {
    gpu.with_workspace(RadixSort::new, |ws| ws.pairs(gpu, keys, values, order))
}

/// [`RadixSort::sort_with_indices`] (`torch.sort`) on the sort workspace `gpu` keeps.
///
/// # Errors
/// As [`RadixSort::sort_with_indices`].
pub fn sort_with_indices<K: SortKey>(
    gpu: &Gpu,
    keys: &impl DevicePtr<K>,
    sorted: &mut impl DevicePtrMut<K>,
    indices: &mut impl DevicePtrMut<u32>,
    order: Order,
) -> Result<()> {
    gpu.with_workspace(RadixSort::new, |ws| {
        ws.sort_with_indices(gpu, keys, sorted, indices, order)
    })
}

/// [`RadixSort::argsort`] (`torch.argsort`) on the sort workspace `gpu` keeps.
///
/// # Errors
/// As [`RadixSort::argsort`].
pub fn argsort<K: SortKey>(
    gpu: &Gpu,
    keys: &impl DevicePtr<K>,
    indices: &mut impl DevicePtrMut<u32>,
    order: Order,
) -> Result<()> {
    gpu.with_workspace(RadixSort::new, |ws| ws.argsort(gpu, keys, indices, order))
}

/// Queues a device-to-device copy of `bytes` bytes on `stream`.
///
/// # Safety
/// `src` and `dst` are valid for `bytes` bytes in `stream`'s context and do not overlap.
unsafe fn copy(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    src: u64,
    dst: u64,
    bytes: usize,
) -> Result<()> {
    // SAFETY: the caller's contract; the copy is ordered on `stream`.
    unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }
        .during("copying the sorted keys back")
}
