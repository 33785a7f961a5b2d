//! Stream compaction on the look-back scan (CUB's `DeviceSelect::If`): the elements of the
//! input that pass a predicate, in their order, packed at the start of the output, and their
//! count. One pass: each block takes a tile as the scan does, evaluates the predicate on its
//! elements in registers, scans the 0/1 flags (in each thread, across the lanes with warp
//! shuffles, across the warps through shared memory), finds the number of selected elements
//! before its tile by the decoupled look-back over the tiles' counts, and writes each selected
//! element at its rank. The input is read once; the output written once per selected element.
//!
//! The predicate is a comparison with `lower` or the half-open range `lower <= x < upper`,
//! chosen by `op` ([`passes`]: the `SELECT_*` constants, shared with the host). `op` is the
//! same in every thread, so each thread switches on it once, around the comparisons of all 32
//! of its elements, which leave a 32-bit mask (a compare, a select and an or per element).

use super::lookback::{MAX_WARPS, block_look_back, take_ticket};
use super::{LOOKBACK_VECTORS, LOOKBACK_WARP_ITEMS, warp_inclusive};
use crate::reduce::ops::Sum;
use gpu_std::{
    FULL_MASK, SharedArray, block_dim, grid_dim, kernel, load_global_nc_v4_u32, shfl_idx_sync,
    shfl_up_sync, static_shared, syncthreads, thread_idx,
};

/// Vectors per thread: the scan's, 8 (`ranks!` and `scatter!` below write them out one by one).
const V: usize = 8;
const _: () = assert!(V == LOOKBACK_VECTORS && 4 * V <= 32);

/// `x > lower` (`upper` unused).
pub const SELECT_GREATER: u32 = 0;
/// `x < lower` (`upper` unused).
pub const SELECT_LESS: u32 = 1;
/// `x != lower` (`upper` unused; for `f32`, NaN is never equal: NaN passes).
pub const SELECT_NOT_EQUAL: u32 = 2;
/// `x >= lower` (`upper` unused).
pub const SELECT_GREATER_EQUAL: u32 = 3;
/// `x <= lower` (`upper` unused).
pub const SELECT_LESS_EQUAL: u32 = 4;
/// `x == lower` (`upper` unused; for `f32`, `-0.0 == 0.0` and NaN equals nothing).
pub const SELECT_EQUAL: u32 = 5;
/// `lower <= x < upper`: the half-open range of a histogram bin (`(lower..upper).contains(&x)`;
/// empty when `lower >= upper` or a bound is NaN).
pub const SELECT_IN_RANGE: u32 = 6;

/// An element type of the compaction and its predicate (`f32`, `i32`, `u32`, the instances of
/// `select_if`: [`select_if_f32`], [`select_if_i32`], [`select_if_u32`]). Every comparison is IEEE's for `f32`: a NaN (element or bound) fails every one
/// but `!=`.
pub trait Selectable: Copy + PartialOrd {
    /// The element whose 32 bits are `bits`.
    fn from_bits(bits: u32) -> Self;
}

impl Selectable for f32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

impl Selectable for i32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
}

impl Selectable for u32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits
    }
}

/// Bit `4 k + j` set where element `j` of vector `k` of `x` passes `f`.
#[inline(always)]
fn mask_of<T: Selectable>(x: &[[u32; 4]; V], f: impl Fn(T) -> bool) -> u32 {
    let mut mask = 0u32;
    for (k, xk) in x.iter().enumerate() {
        for (j, &bits) in xk.iter().enumerate() {
            mask |= (f(T::from_bits(bits)) as u32) << (4 * k + j);
        }
    }
    mask
}

/// Whether `x` passes `op` (one of the `SELECT_*` constants; any other value passes nothing)
/// with the bounds `lower` and `upper`: the kernels' predicate, callable on the host too (the
/// host's `Predicate` is checked against it). `PartialOrd`'s comparisons: IEEE's for `f32`.
#[inline(always)]
pub fn passes<T: PartialOrd>(op: u32, x: T, lower: T, upper: T) -> bool {
    match op {
        SELECT_GREATER => x > lower,
        SELECT_LESS => x < lower,
        SELECT_NOT_EQUAL => x != lower,
        SELECT_GREATER_EQUAL => x >= lower,
        SELECT_LESS_EQUAL => x <= lower,
        SELECT_EQUAL => x == lower,
        SELECT_IN_RANGE => lower <= x && x < upper,
        _ => false,
    }
}

/// Which of this thread's 32 elements pass `op` ([`passes`]), as [`mask_of`]'s bits. The
/// switch on `op`, the same in every thread, is taken once per thread, around all 32
/// comparisons (one arm per constant, each with its comparison folded in), not once per
/// element.
#[inline(always)]
fn pass_mask<T: Selectable>(x: &[[u32; 4]; V], op: u32, lower: T, upper: T) -> u32 {
    macro_rules! arms {
        ($($op:ident)*) => {
            match op {
                $($op => mask_of(x, |v: T| passes($op, v, lower, upper)),)*
                _ => 0,
            }
        };
    }
    arms!(
        SELECT_GREATER
        SELECT_LESS
        SELECT_NOT_EQUAL
        SELECT_GREATER_EQUAL
        SELECT_LESS_EQUAL
        SELECT_EQUAL
        SELECT_IN_RANGE
    )
}

/// The compaction of `n` elements of `T` (see the module docs).
///
/// # Safety
/// See [`select_if`]; the shared arrays are this block's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn select_body<T: Selectable>(
    input: *const u32,
    n: usize,
    op: u32,
    lower: T,
    upper: T,
    output: *mut u32,
    count: *mut u32,
    status: *mut u64,
    counter: *mut u32,
    epoch: u32,
    shared: (
        &SharedArray<u32, 1>,
        &SharedArray<u32, MAX_WARPS>,
        &SharedArray<u32, 1>,
    ),
) {
    let (ticket, warp_totals, tile_prefix) = shared;
    let tid = thread_idx().x as usize;
    let lane = (tid % 32) as u32;
    let warp = tid / 32;
    let warps = block_dim().x as usize / 32;
    let tile_items = warps * LOOKBACK_WARP_ITEMS;
    // SAFETY (the whole body): the caller's contract covers the pointers; reads are inside a
    // whole tile or guarded by `< n`; a selected element's rank is below the number selected,
    // which is at most `n`, the output's length.
    unsafe {
        let tile = take_ticket(counter, ticket);
        let base = tile * tile_items;
        let seg = base + warp * LOOKBACK_WARP_ITEMS;
        let full = base + tile_items <= n;
        let index = |k: usize, j: usize| seg + 4 * (32 * k + lane as usize) + j;

        let mut x = [[0u32; 4]; V];
        if full && (input as usize & 15) == 0 {
            for (k, xk) in x.iter_mut().enumerate() {
                *xk = load_global_nc_v4_u32(input.add(index(k, 0)));
            }
        } else {
            for (k, xk) in x.iter_mut().enumerate() {
                for (j, xkj) in xk.iter_mut().enumerate() {
                    if index(k, j) < n {
                        *xkj = *input.add(index(k, j));
                    }
                }
            }
        }
        // Bit 4 k + j: element j of vector k is selected (it passes and lies below `n`).
        let mut flags = pass_mask(&x, op, lower, upper);
        if !full {
            let mut inside = 0u32;
            for k in 0..V {
                for j in 0..4 {
                    inside |= ((index(k, j) < n) as u32) << (4 * k + j);
                }
            }
            flags &= inside;
        }

        // Ranks: the selected elements before each vector of this thread in its warp.
        let mut before = [0u32; V];
        let mut warp_sum = 0u32;
        // Written out vector by vector (`ranks!`), so that `x` and `before` stay in registers.
        macro_rules! ranks {
            ($($k:literal)*) => {$(
                let c = ((flags >> (4 * $k)) & 0xf).count_ones();
                let scanned = warp_inclusive::<Sum<u32>>(c, lane);
                let lanes = shfl_up_sync(FULL_MASK, scanned, 1);
                before[$k] = warp_sum + if lane == 0 { 0 } else { lanes };
                warp_sum += shfl_idx_sync(FULL_MASK, scanned, 31);
            )*};
        }
        ranks!(0 1 2 3 4 5 6 7);
        if lane == 0 {
            warp_totals.write(warp, warp_sum);
        }
        syncthreads();
        if warp == 0 {
            let (prefix, aggregate) =
                block_look_back::<Sum<u32>>(warp_totals, warps, status, tile, epoch, 0, lane);
            if lane == 0 {
                tile_prefix.write(0, prefix);
                if tile == grid_dim().x as usize - 1 {
                    // The last tile: everything before it and its own.
                    *count = prefix + aggregate;
                }
            }
        }
        syncthreads();
        let mut offset = tile_prefix.read(0);
        for w in 0..warp {
            offset += warp_totals.read(w);
        }
        // Each vector's selected elements at their ranks; the vectors written out one by one
        // (`vectors!`), so that `x` and `before` stay in registers.
        macro_rules! scatter {
            ($($k:literal)*) => {$(
                let mut rank = (offset + before[$k]) as usize;
                for j in 0..4 {
                    if flags & (1 << (4 * $k + j)) != 0 {
                        *output.add(rank) = x[$k][j];
                        rank += 1;
                    }
                }
            )*};
        }
        scatter!(0 1 2 3 4 5 6 7);
    }
}

/// Stream compaction of `n` elements of `T` (entries `select_if_f32`, `select_if_i32`,
/// `select_if_u32`): writes the elements `x` that pass `op` to the start of `output` in their
/// order, and their number to `*count` (see the [module docs](self)). `op` is one of
/// [`SELECT_GREATER`], [`SELECT_LESS`], [`SELECT_NOT_EQUAL`], [`SELECT_GREATER_EQUAL`],
/// [`SELECT_LESS_EQUAL`], [`SELECT_EQUAL`] (each `x op lower`, `upper` unused) or
/// [`SELECT_IN_RANGE`] (`lower <= x < upper`); any other value selects nothing.
///
/// Launch: as the look-back scan: blocks of any multiple of 32 threads up to 1024, one per tile
/// of [`lookback_tile(blockDim.x)`](super::lookback_tile) elements, at least one (also for
/// `n = 0`, which writes `*count = 0`).
///
/// # Safety
/// `input` is valid for `n` elements, 4-byte aligned, not written during the launch; `output`
/// is valid for `n` elements (only the first `*count` are written) and overlaps neither `input`
/// nor `count`; `n <= u32::MAX`; `status` holds `gridDim.x` 8-byte aligned words, none carrying
/// `epoch`; `counter` is 0 and used by no concurrent launch.
///
/// Performance: reads each element once and writes each selected one once.
#[kernel(instantiate(T = f32, i32, u32))]
pub unsafe fn select_if<T: Selectable>(
    input: *const T,
    n: usize,
    op: u32,
    lower: T,
    upper: T,
    output: *mut T,
    count: *mut u32,
    status: *mut u64,
    counter: *mut u32,
    epoch: u32,
) {
    let ticket = static_shared!(s_select_if_ticket: [u32; 1]);
    let warp_totals = static_shared!(s_select_if_warps: [u32; MAX_WARPS]);
    let tile_prefix = static_shared!(s_select_if_prefix: [u32; 1]);
    // SAFETY: forwarded to the caller's contract.
    unsafe {
        select_body::<T>(
            input.cast(),
            n,
            op,
            lower,
            upper,
            output.cast(),
            count,
            status,
            counter,
            epoch,
            (&ticket, &warp_totals, &tile_prefix),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPS: [u32; 7] = [
        SELECT_GREATER,
        SELECT_LESS,
        SELECT_NOT_EQUAL,
        SELECT_GREATER_EQUAL,
        SELECT_LESS_EQUAL,
        SELECT_EQUAL,
        SELECT_IN_RANGE,
    ];

    /// The 32 elements `values` (cycled) as one thread's vectors.
    fn vectors<T: Copy>(values: &[T], bits: impl Fn(T) -> u32) -> [[u32; 4]; V] {
        let mut x = [[0u32; 4]; V];
        for (i, v) in x.iter_mut().flatten().enumerate() {
            *v = bits(values[i % values.len()]);
        }
        x
    }

    #[test]
    fn the_ops_are_distinct_and_an_unknown_one_passes_nothing() {
        let mut ops = OPS;
        ops.sort();
        assert_eq!(ops, [0, 1, 2, 3, 4, 5, 6]);
        assert!(!passes(7, 1, 0, 2));
        assert_eq!(pass_mask(&[[1u32; 4]; V], 7, 0u32, 2), 0);
    }

    #[test]
    fn the_mask_holds_each_elements_predicate_in_its_bit() {
        let ints = [-3, -1, 0, 1, 2, 3, 5, i32::MIN, i32::MAX];
        let x = vectors(&ints, |v| v as u32);
        for op in OPS {
            for (lower, upper) in [(0, 3), (2, 2), (3, 0), (i32::MIN, i32::MAX)] {
                let mask = pass_mask(&x, op, lower, upper);
                for i in 0..32 {
                    let want = passes(op, ints[i % ints.len()], lower, upper);
                    assert_eq!(
                        mask >> i & 1 == 1,
                        want,
                        "op {op}, [{lower}, {upper}), bit {i}"
                    );
                }
            }
        }
        let floats = [
            f32::NAN,
            -0.0,
            0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let x = vectors(&floats, f32::to_bits);
        for op in OPS {
            for (lower, upper) in [(0.0, 1.0), (-1.0, f32::INFINITY), (f32::NAN, 1.0)] {
                let mask = pass_mask(&x, op, lower, upper);
                for i in 0..32 {
                    let want = passes(op, floats[i % floats.len()], lower, upper);
                    assert_eq!(
                        mask >> i & 1 == 1,
                        want,
                        "op {op}, [{lower}, {upper}), bit {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn nan_passes_only_not_equal() {
        for op in OPS {
            let want = op == SELECT_NOT_EQUAL;
            assert_eq!(passes(op, f32::NAN, 0.0, 1.0), want, "NaN element, op {op}");
            assert_eq!(
                passes(op, 0.5, f32::NAN, f32::NAN),
                want,
                "NaN bound, op {op}"
            );
        }
        assert!(passes(SELECT_EQUAL, -0.0f32, 0.0, 0.0));
        assert!(passes(SELECT_IN_RANGE, 0.0f32, -0.0, 1.0));
        assert!(!passes(SELECT_IN_RANGE, 1.0f32, 0.0, 1.0));
    }
}
