//! Radix sort: least-significant-digit first, 8-bit digits, stable (PMPP 4th ed., ch. 13;
//! CUB's `DeviceRadixSort`), up to the one-sweep digit binning of Adinets and Merrill
//! ("Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022).
//!
//! - [`onesweep`]: the sort a user should call. One launch reads the keys once and counts the
//!   digits of every pass ([`sort_histogram_u32`](onesweep::sort_histogram_u32) and the other key widths); then one launch per 8-bit digit
//!   ([`sort_onesweep_u32_v32`](onesweep::sort_onesweep_u32_v32) and the others) reads each key once and writes it once to its place: each
//!   block ranks its tile's keys by digit in shared memory, learns where each digit's run of
//!   the tile starts in the output by a decoupled look-back over the digit counts of the tiles
//!   before it, and scatters the tile from shared memory in digit order.
//!
//! Keys are sorted as unsigned bit patterns ([`RadixBits`]) of 1, 2, 4 or 8 bytes, mapped so
//! that the unsigned order is the key type's order ([`KEY_UNSIGNED`], [`KEY_SIGNED`],
//! [`KEY_FLOAT`]) and inverted for a descending sort. Floats are ordered as `torch.sort`
//! orders them: `-0.0` and `+0.0` are equal (a stable sort keeps their input order), every NaN
//! is greater than `+inf` and equal to every other NaN; the keys are written back with their
//! own bits.
//!
//! This module holds what host and device share: the digit width, the tile and the layout of
//! the look-back's status words.

pub mod ladder;
pub mod onesweep;
pub mod segmented;

use core::marker::PhantomData;

use gpu_std::Pod;

/// Bits per digit: one pass per 8 bits of the key.
pub const RADIX_BITS: u32 = 8;
/// Digit values per pass.
pub const RADIX: usize = 1 << RADIX_BITS;
/// Threads per block of `sort_onesweep`: at least [`RADIX`], a multiple of 32 (threads
/// `d < 256` each own digit `d` for the counts and the look-back).
pub const ONESWEEP_BLOCK: u32 = 256;
/// Keys per thread of `sort_onesweep`.
pub const ONESWEEP_ITEMS: usize = 16;
/// Keys per tile (per block) of `sort_onesweep`: 4096.
pub const ONESWEEP_TILE: usize = ONESWEEP_BLOCK as usize * ONESWEEP_ITEMS;
/// Bytes of dynamic shared memory `sort_onesweep` takes for keys of `key_bytes`
/// and values of `value_bytes` (0 for none): a tile of the larger of the two.
pub const fn onesweep_shared_bytes(key_bytes: usize, value_bytes: usize) -> usize {
    ONESWEEP_TILE
        * if key_bytes > value_bytes {
            key_bytes
        } else {
            value_bytes
        }
}

/// Threads per block of `sort_histogram`.
pub const HISTOGRAM_BLOCK: u32 = 256;
/// Keys per thread per step of `sort_histogram`'s block-stride loop.
pub const HISTOGRAM_UNROLL: usize = 4;

/// The longest input the sort takes: digit counts and positions live in the 30 low bits of a
/// status word.
pub const MAX_SORT_LEN: usize = (1 << 30) - 1;
/// A status word's flag: the tile's own count of this digit is published.
pub const STATUS_AGGREGATE: u32 = 1 << 30;
/// A status word's flag: the count of this digit in every tile up to and including this one,
/// plus the digit's global start, is published.
pub const STATUS_PREFIX: u32 = 2 << 30;
/// A status word's value bits.
pub const STATUS_VALUE: u32 = (1 << 30) - 1;

/// How a key type's bits map to the unsigned order: unsigned integers as they are.
pub const KEY_UNSIGNED: u32 = 0;
/// Signed integers: the sign bit flipped.
pub const KEY_SIGNED: u32 = 1;
/// IEEE floats: negative ones all bits flipped, others the sign bit set; `-0.0` as `+0.0` and
/// every NaN as the largest pattern.
pub const KEY_FLOAT: u32 = 2;

/// The unsigned bit pattern of a key: what the sort's digits are taken from.
pub trait RadixBits: gpu_std::DeviceCopy + Copy {
    /// Bits in the pattern (8, 16, 32 or 64).
    const BITS: u32;
    /// All bits clear, and all bits set (a descending sort's `flip`).
    const ZERO: Self;
    /// See [`RadixBits::ZERO`].
    const ONES: Self;
    /// The pattern in the unsigned order of a key of kind `kind` ([`KEY_UNSIGNED`],
    /// [`KEY_SIGNED`], [`KEY_FLOAT`]), then XORed with `flip` (all ones: descending).
    fn ordered(self, kind: u32, flip: Self) -> Self;
    /// The digit at bit `shift` of the pattern, `mask` the digit's width's mask.
    fn digit(self, shift: u32, mask: u32) -> u32;
}

macro_rules! radix_bits {
    ($($t:ty;)*) => {$(
        impl RadixBits for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: $t = 0;
            const ONES: $t = <$t>::MAX;
            #[inline(always)]
            fn ordered(self, kind: u32, flip: $t) -> $t {
                const SIGN: $t = 1 << (<$t>::BITS - 1);
                // The exponent all ones: the infinities' magnitude (0 for 8 bits, no float).
                const INF: $t = (<$t>::MAX >> 1) & !(<$t>::MAX >> (1 + float_exponent_bits(<$t>::BITS)));
                let b = self;
                let o = if kind == KEY_UNSIGNED {
                    b
                } else if kind == KEY_SIGNED {
                    b ^ SIGN
                } else if (b & !SIGN) > INF {
                    <$t>::MAX
                } else if (b & !SIGN) == 0 {
                    SIGN
                } else if b & SIGN != 0 {
                    !b
                } else {
                    b | SIGN
                };
                o ^ flip
            }
            #[inline(always)]
            fn digit(self, shift: u32, mask: u32) -> u32 {
                (self >> shift) as u32 & mask
            }
        }
    )*};
}
radix_bits! { u8; u16; u32; u64; }

/// Exponent bits of the IEEE binary format of `bits` bits (16: 5, 32: 8, 64: 11; 7 for 8 bits,
/// which has no float, so that the shift stays in range).
pub const fn float_exponent_bits(bits: u32) -> u32 {
    match bits {
        16 => 5,
        32 => 8,
        64 => 11,
        _ => 6,
    }
}

/// The key bits and the value type one instance of `sort_onesweep` moves:
/// `Pair<u32, u32>` sorts 32-bit keys with 4-byte values (or none: a null `values_in`).
pub struct Pair<B, V>(PhantomData<(B, V)>);

/// What [`Pair`] names: the key bits and the value type.
pub trait SortPair {
    /// The keys' unsigned bits.
    type Bits: RadixBits;
    /// The values' type (`u32` or `u64`: any 4- or 8-byte value's bits).
    type Value: ValueBits;
}

/// The bits of a value the sort moves: `u32` or `u64`.
pub trait ValueBits: Pod + Copy {
    /// The index `i` as a value (an argsort's indices; the host keeps `i` below 2^30).
    fn from_index(i: usize) -> Self;
}

impl ValueBits for u32 {
    #[inline(always)]
    fn from_index(i: usize) -> Self {
        i as u32
    }
}

impl ValueBits for u64 {
    #[inline(always)]
    fn from_index(i: usize) -> Self {
        i as u64
    }
}

impl<B: RadixBits, V: ValueBits> SortPair for Pair<B, V> {
    type Bits = B;
    type Value = V;
}
