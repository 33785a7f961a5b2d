//! Scan by key (CUB's `DeviceScan::InclusiveSumByKey` and `InclusiveScanByKey`): an inclusive
//! scan that restarts wherever the key changes, on the same one-pass look-back as
//! [`scan_lookback`](super::lookback): each element is lifted into a [`Keyed`] accumulator that
//! says whether a segment starts at it (its key differs from the one before), and [`ByKey`]
//! combines those so that a head discards what came before it. The operator is associative (not
//! commutative), which the look-back keeps: every combination takes the earlier elements first.

use core::marker::PhantomData;

use gpu_std::{Pod, kernel, static_shared};

use super::ScanOp;
use super::lookback::{MAX_WARPS, lookback};
use crate::reduce::ops::{Max, Min, Sum};

/// The accumulator of a scan by key: the operator's value over a run of elements, and whether a
/// segment starts inside that run (`head[0] != 0`; the second word keeps the pair free of
/// padding for 8-byte values).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Keyed<A> {
    /// The scan's value since the last segment head in the run (or since its start).
    pub value: A,
    /// `[1, 0]` if a segment starts in the run, `[0, 0]` otherwise.
    pub head: [u32; 2],
}

// SAFETY: a `Pod` value (whole 4-byte words, alignment 4 or 8) followed by two `u32`s: no
// padding whatever `A`'s alignment (an 8-byte aligned `A` is a multiple of 8 bytes), any bits.
unsafe impl<A: Pod> Pod for Keyed<A> {}

/// The by-key form of the scan operator `S`: `a ⊕ b` is `b` when a segment starts in `b`, else
/// `S`'s combination of the values (and `a`'s head).
pub struct ByKey<S>(PhantomData<S>);

impl<S: ScanOp> ScanOp for ByKey<S> {
    type Item = S::Item;
    type Acc = Keyed<S::Acc>;
    const IDENTITY: Keyed<S::Acc> = Keyed {
        value: S::IDENTITY,
        head: [0, 0],
    };
    #[inline(always)]
    fn lift(x: S::Item) -> Keyed<S::Acc> {
        Keyed {
            value: S::lift(x),
            head: [0, 0],
        }
    }
    #[inline(always)]
    fn combine(a: Keyed<S::Acc>, b: Keyed<S::Acc>) -> Keyed<S::Acc> {
        if b.head[0] != 0 {
            b
        } else {
            Keyed {
                value: S::combine(a.value, b.value),
                head: a.head,
            }
        }
    }
    #[inline(always)]
    fn store(a: Keyed<S::Acc>) -> S::Item {
        S::store(a.value)
    }
}

/// Inclusive scan by key of `n` elements with the operator `S`: `output[i]` is `S`'s scan of
/// `input[h..=i]`, where `h <= i` is the last index with `h == 0` or `keys[h] != keys[h - 1]`
/// (keys compared as 32-bit words: `i32` or `u32` keys, equal when their bits are). Entries
/// `scan_by_key_<op>_<type>` for `sum`, `min` and `max` of `i32`, `u32`, `i64`, `u64`, `f32`,
/// `f64`.
///
/// Launch: as [`scan_lookback`](super::lookback) (one block per tile of
/// `blockDim.x * lookback_items(size_of::<S::Item>())` elements), with
/// [`status_words`](super::status_words)`(size_of::<Keyed<S::Acc>>())` status words per tile.
///
/// # Safety
/// `keys`, `input` and `output` are valid for `n` elements, aligned for their types; `output`
/// overlaps neither `keys` nor `input`; `status` holds the status words of `gridDim.x` tiles,
/// none of which carries `epoch`; `counter` points to a `u32` that is 0 and no concurrent launch
/// uses (0 again when the kernel ends).
///
/// Performance: reads each key twice (its own and, for the next element, as the one before:
/// the second read hits the cache), each value once, writes each output once.
#[kernel(instantiate(S =
    Sum<i32>, Sum<u32>, Sum<i64>, Sum<u64>, Sum<f32>, Sum<f64>,
    Min<i32>, Min<u32>, Min<i64>, Min<u64>, Min<f32>, Min<f64>,
    Max<i32>, Max<u32>, Max<i64>, Max<u64>, Max<f32>, Max<f64>,
))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn scan_by_key<S: ScanOp>(
    keys: *const u32,
    input: *const S::Item,
    output: *mut S::Item,
    n: usize,
    status: *mut u64,
    counter: *mut u32,
    epoch: u32,
) {
    let ticket = static_shared!(s_scan_by_key_ticket: [u32; 1]);
    let warp_totals = static_shared!(s_scan_by_key_warps: [Keyed<S::Acc>; MAX_WARPS]);
    let tile_prefix = static_shared!(s_scan_by_key_prefix: [Keyed<S::Acc>; 1]);
    // A segment starts at `i` when `i == 0` or its key differs from the one before.
    let lift = |i: usize, x: <S as ScanOp>::Item| {
        // SAFETY: the kernel lifts only elements `i < n`, and `keys` holds `n` words.
        let head = i == 0 || unsafe { *keys.add(i) != *keys.add(i - 1) };
        Keyed {
            value: S::lift(x),
            head: [head as u32, 0],
        }
    };
    // SAFETY: forwarded to the caller's contract (the output does not overlap the input).
    unsafe {
        lookback::<ByKey<S>>(
            input,
            output,
            n,
            status,
            counter,
            epoch,
            false,
            <ByKey<S> as ScanOp>::IDENTITY,
            lift,
            (&ticket, &warp_totals, &tile_prefix),
        )
    }
}
