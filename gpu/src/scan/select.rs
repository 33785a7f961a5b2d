//! Stream compaction on the look-back scan (CUB's `DeviceSelect::If`): the elements of the
//! input that pass a predicate, in their order, packed at the start of the output, and their
//! count. One pass: each block takes a tile as the scan does, evaluates the predicate on its
//! elements in registers, scans the 0/1 flags (in each thread, across the lanes with warp
//! shuffles, across the warps through shared memory), finds the number of selected elements
//! before its tile by the decoupled look-back over the tiles' counts, and writes each selected
//! element at its rank. The input is read once; the output written once per selected element.

use super::lookback::{MAX_WARPS, block_look_back, take_ticket};
use super::{LOOKBACK_VECTORS, LOOKBACK_WARP_ITEMS, warp_inclusive};
use gpu_std::{
    FULL_MASK, SharedArray, block_dim, grid_dim, kernel, load_global_nc_v4_u32, shfl_idx_sync,
    shfl_up_sync, static_shared, syncthreads, thread_idx,
};

/// Vectors per thread: the scan's, 8 (`ranks!` and `scatter!` below write them out one by one).
const V: usize = 8;
const _: () = assert!(V == LOOKBACK_VECTORS && 4 * V <= 32);

/// `x > threshold`.
pub const SELECT_GREATER: u32 = 0;
/// `x < threshold`.
pub const SELECT_LESS: u32 = 1;
/// `x != threshold` (for `f32`, NaN is never equal: NaN passes).
pub const SELECT_NOT_EQUAL: u32 = 2;

/// An element type of the compaction and its predicate.
pub(crate) trait Selectable: Copy {
    fn from_bits(bits: u32) -> Self;
    /// Whether `self op threshold` holds (`op` one of the `SELECT_*` constants; any other
    /// value selects nothing).
    fn passes(self, op: u32, threshold: Self) -> bool;
}

macro_rules! selectable {
    ($($t:ty => $from:expr;)*) => {$(
        impl Selectable for $t {
            #[inline(always)]
            fn from_bits(bits: u32) -> Self {
                $from(bits)
            }
            #[inline(always)]
            fn passes(self, op: u32, threshold: Self) -> bool {
                match op {
                    SELECT_GREATER => self > threshold,
                    SELECT_LESS => self < threshold,
                    SELECT_NOT_EQUAL => self != threshold,
                    _ => false,
                }
            }
        }
    )*};
}
selectable! {
    f32 => f32::from_bits;
    i32 => |b: u32| b as i32;
}

/// The compaction of `n` elements of `T` (see the module docs).
///
/// # Safety
/// See [`select_if_f32`]; the shared arrays are this block's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn select_if<T: Selectable>(
    input: *const u32,
    n: usize,
    op: u32,
    threshold: T,
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
        let flag = |k: usize, j: usize, bits: u32| {
            (full || index(k, j) < n) && T::from_bits(bits).passes(op, threshold)
        };

        // Ranks: the selected elements before each vector of this thread in its warp.
        let mut before = [0u32; V];
        let mut warp_sum = 0u32;
        let mut flags = 0u32; // bit 4 k + j: element j of vector k is selected
        // Written out vector by vector (`ranks!`), so that `x` and `before` stay in registers.
        macro_rules! ranks {
            ($($k:literal)*) => {$(
                let mut c = 0u32;
                for j in 0..4 {
                    let f = flag($k, j, x[$k][j]);
                    flags |= (f as u32) << (4 * $k + j);
                    c += f as u32;
                }
                let scanned = warp_inclusive(c, lane);
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
                block_look_back(warp_totals, warps, status, tile, epoch, lane);
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

macro_rules! select_kernel {
    ($name:ident, $t:ty, $shared:ident, $warps:ident, $prefix:ident) => {
        #[doc = concat!("Stream compaction of `n` `", stringify!($t), "`: writes the elements `x` ",
            "with `x op threshold` (`op`: [`SELECT_GREATER`], [`SELECT_LESS`] or ",
            "[`SELECT_NOT_EQUAL`]) to the start of `output` in their order, and their number to ",
            "`*count` (see the [module docs](self)).")]
        ///
        /// Launch: as the look-back scan: blocks of any multiple of 32 threads up to 1024, one
        /// per tile of [`lookback_tile(blockDim.x)`](super::lookback_tile) elements, at least
        /// one (also for `n = 0`, which writes `*count = 0`).
        ///
        /// # Safety
        /// `input` is valid for `n` elements, 4-byte aligned, not written during the launch;
        /// `output` is valid for `n` elements and overlaps neither `input` nor `count`;
        /// `n <= u32::MAX`; `status` holds `gridDim.x` 8-byte aligned words, none carrying
        /// `epoch`; `counter` is 0 and used by no concurrent launch.
        ///
        /// Performance: reads each element once and writes each selected one once.
        #[kernel]
        pub unsafe fn $name(
            input: *const $t,
            n: usize,
            op: u32,
            threshold: $t,
            output: *mut $t,
            count: *mut u32,
            status: *mut u64,
            counter: *mut u32,
            epoch: u32,
        ) {
            let ticket = static_shared!($shared: [u32; 1]);
            let warp_totals = static_shared!($warps: [u32; MAX_WARPS]);
            let tile_prefix = static_shared!($prefix: [u32; 1]);
            // SAFETY: forwarded to the caller's contract.
            unsafe {
                select_if::<$t>(
                    input.cast(),
                    n,
                    op,
                    threshold,
                    output.cast(),
                    count,
                    status,
                    counter,
                    epoch,
                    (&ticket, &warp_totals, &tile_prefix),
                )
            }
        }
    };
}

select_kernel!(
    select_if_f32,
    f32,
    s_select_if_f32_ticket,
    s_select_if_f32_warps,
    s_select_if_f32_prefix
);
select_kernel!(
    select_if_i32,
    i32,
    s_select_if_i32_ticket,
    s_select_if_i32_warps,
    s_select_if_i32_prefix
);
