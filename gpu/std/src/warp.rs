//! Warp-level operations: shuffles, lanes of one warp exchanging registers without shared
//! memory (CUDA's `__shfl_*_sync`, PTX `shfl.sync`, through the `llvm.nvvm.shfl.sync.*`
//! intrinsics; also at the crate root), and cuda_std 0.2's `warp` functions under its names:
//! [`sync_warp`] and [`lane_id`].
//!
//! Every lane named in `mask` must execute the same shuffle. A lane whose source lies outside
//! the warp gets its own value back (CUDA semantics with `width = 32`).

pub use crate::index::lane_id;

/// Synchronises the lanes of this warp named in `mask` (`__syncwarp(mask)`, PTX
/// `bar.warp.sync`), cuda_std's name for [`syncwarp`](crate::syncwarp): they wait for each
/// other, and their memory accesses before it are ordered before those after it.
///
/// # Safety
/// The behaviour is undefined if a lane named in `mask` has exited, if the executing lane is
/// not in `mask` (cuda_std's two conditions), or if the lanes named in `mask` do not all
/// execute a `sync_warp` with the same `mask` (CUDA's rule for `__syncwarp`).
#[inline(always)]
#[crate::gpu_only]
pub unsafe fn sync_warp(mask: u32) {
    crate::syncwarp(mask)
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_sync_down_i32(mask: u32, value: i32, delta: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_sync_up_i32(mask: u32, value: i32, delta: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_sync_bfly_i32(mask: u32, value: i32, lane_mask: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_sync_idx_i32(mask: u32, value: i32, lane: u32, clamp: u32) -> i32;
}

/// `c` operand of `shfl.sync` for a full 32-lane segment: clamp at lane 31 for down/xor/idx,
/// at lane 0 for up.
const CLAMP_HIGH: u32 = 0x1f;
const CLAMP_LOW: u32 = 0;

#[derive(Clone, Copy)]
#[doc(hidden)]
pub enum Mode {
    Down,
    Up,
    Xor,
    Idx,
}

#[inline(always)]
#[crate::gpu_only]
fn shuffle_word(mode: Mode, mask: u32, word: i32, operand: u32) -> i32 {
    // SAFETY: `shfl.sync` reads only registers; the caller's lanes agree on `mask`
    // (a mismatch is undefined in CUDA too and reported by compute-sanitizer's synccheck).
    unsafe {
        match mode {
            Mode::Down => shfl_sync_down_i32(mask, word, operand, CLAMP_HIGH),
            Mode::Up => shfl_sync_up_i32(mask, word, operand, CLAMP_LOW),
            Mode::Xor => shfl_sync_bfly_i32(mask, word, operand, CLAMP_HIGH),
            Mode::Idx => shfl_sync_idx_i32(mask, word, operand, CLAMP_HIGH),
        }
    }
}

/// Values that can cross lanes: every [`Pod`] type, one `shfl.sync` per 32-bit word (one for
/// `i32`, `u32` and `f32`, two for `i64`, `u64` and `f64`, three for a `#[repr(C)]` struct of
/// three 4-byte fields).
pub trait WarpShuffle: Copy {
    #[doc(hidden)]
    fn shuffle(self, mode: Mode, mask: u32, operand: u32) -> Self;
}

/// Plain old data (bytemuck's `Pod`): a value is its bytes and nothing else, so it can cross
/// lanes word by word ([`WarpShuffle`]), be loaded from global memory word by word
/// ([`load_relaxed_gpu_words`](crate::load_relaxed_gpu_words)) and be read back on the host
/// from the bytes the device wrote. Implemented for the 32- and 64-bit primitives and arrays of
/// `Pod`; implement it for an accumulator or element type of your own (a reduction's
/// [`Monoid`](crate::reduce::Monoid)):
///
/// ```
/// #[repr(C)]
/// #[derive(Clone, Copy)]
/// struct MinMax { min: f32, max: f32 }
/// // SAFETY: two `f32`s, no padding, any bits are a value.
/// unsafe impl gpu_std::Pod for MinMax {}
/// ```
///
/// # Safety
/// The type has no padding bytes (`#[repr(C)]` or `#[repr(transparent)]` over fields that are
/// `Pod`, laid out without gaps), its size is a non-zero multiple of 4 bytes (checked when a
/// shuffle is compiled), its alignment is at least 4, and every bit pattern of its size is a
/// valid value (no `bool`, `char`, enum or reference fields).
pub unsafe trait Pod: Copy + 'static {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive of 4 or 8 bytes, aligned to its size; every bit pattern is a value.
        unsafe impl Pod for $t {}
    )*};
}
pod!(i32, u32, f32, i64, u64, f64);
// SAFETY: an array of `Pod` has no padding between its elements and their size and alignment.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

impl<T: Pod> WarpShuffle for T {
    #[inline(always)]
    #[crate::gpu_only]
    fn shuffle(self, mode: Mode, mask: u32, operand: u32) -> Self {
        const {
            assert!(
                size_of::<T>() > 0 && size_of::<T>().is_multiple_of(4),
                "a `Pod` type is whole 32-bit words"
            )
        };
        let mut out = core::mem::MaybeUninit::<T>::uninit();
        let src = (&raw const self).cast::<u32>();
        let dst = out.as_mut_ptr().cast::<u32>();
        let mut w = 0;
        while w < size_of::<T>() / 4 {
            // SAFETY: `T: Pod` is `size_of::<T>() / 4` initialised, 4-byte aligned words (no
            // padding), and every bit pattern written back is a value of `T`.
            unsafe {
                let word = shuffle_word(mode, mask, src.add(w).read() as i32, operand);
                dst.add(w).write(word as u32);
            }
            w += 1;
        }
        // SAFETY: every word of `out` was written above.
        unsafe { out.assume_init() }
    }
}

/// `__shfl_down_sync(mask, value, delta)`: the value of lane `lane_id() + delta`
/// (own value where that is past lane 31). The step of a warp tree reduction.
#[inline(always)]
#[crate::gpu_only]
pub fn shfl_down_sync<T: WarpShuffle>(mask: u32, value: T, delta: u32) -> T {
    value.shuffle(Mode::Down, mask, delta)
}

/// `__shfl_up_sync(mask, value, delta)`: the value of lane `lane_id() - delta`
/// (own value below lane `delta`). The step of a warp scan.
#[inline(always)]
#[crate::gpu_only]
pub fn shfl_up_sync<T: WarpShuffle>(mask: u32, value: T, delta: u32) -> T {
    value.shuffle(Mode::Up, mask, delta)
}

/// `__shfl_xor_sync(mask, value, lane_mask)`: the value of lane `lane_id() ^ lane_mask`.
/// A butterfly reduction with it leaves the total in every lane.
#[inline(always)]
#[crate::gpu_only]
pub fn shfl_xor_sync<T: WarpShuffle>(mask: u32, value: T, lane_mask: u32) -> T {
    value.shuffle(Mode::Xor, mask, lane_mask)
}

/// `__shfl_sync(mask, value, src_lane)`: the value of lane `src_lane` (a broadcast when all
/// lanes pass the same `src_lane`).
#[inline(always)]
#[crate::gpu_only]
pub fn shfl_idx_sync<T: WarpShuffle>(mask: u32, value: T, src_lane: u32) -> T {
    value.shuffle(Mode::Idx, mask, src_lane)
}

/// `__ballot_sync(mask, predicate)`: a word whose bit `i` is set when lane `i` (named in
/// `mask`) passed `true` (PTX `vote.sync.ballot.b32`). Every lane gets the same word: the
/// warp-wide "which lanes" of a look-back or a stream compaction.
///
/// Every lane named in `mask` must execute the same ballot (as for the shuffles).
#[inline(always)]
#[crate::gpu_only]
pub fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    let word: u32;
    // SAFETY: `vote.sync` reads only registers; the lanes agree on `mask` (a mismatch is
    // undefined in CUDA too and reported by compute-sanitizer's synccheck).
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {w}, p, {m}; }}",
            w = out(reg32) word, v = in(reg32) predicate as u32, m = in(reg32) mask,
            options(nomem, nostack));
    }
    word
}

/// `__match_any_sync(mask, value)`: a word whose bit `i` is set when lane `i` (named in `mask`)
/// passed the same `value` as this lane (PTX `match.any.sync.b32`, sm_70 and later). Each lane
/// gets its own peers: the lanes holding one digit of a radix sort's warp-level ranking.
///
/// Every lane named in `mask` must execute the same match (as for the shuffles).
#[inline(always)]
#[crate::gpu_only]
pub fn match_any_sync(mask: u32, value: u32) -> u32 {
    let word: u32;
    // SAFETY: `match.sync` reads only registers; the lanes agree on `mask` (a mismatch is
    // undefined in CUDA too and reported by compute-sanitizer's synccheck).
    unsafe {
        core::arch::asm!(
            "match.any.sync.b32 {w}, {v}, {m};",
            w = out(reg32) word, v = in(reg32) value, m = in(reg32) mask,
            options(nomem, nostack));
    }
    word
}

/// The lanes of the full warp whose `value` agrees with this lane's in its low `BITS` bits,
/// found with one ballot per bit (CUB's `MatchAny`): [`match_any_sync`] on a `BITS`-bit label
/// in about four instructions per bit, none of them in the slower `match` pipe. Each lane gets
/// its own peers: the lanes holding one digit of a radix sort's warp-level ranking.
///
/// Every lane of the warp must execute it (as for the shuffles).
#[inline(always)]
#[crate::gpu_only]
pub fn match_bits_sync<const BITS: u32>(value: u32) -> u32 {
    let mut peers = crate::FULL_MASK;
    let mut bit = 0;
    while bit < BITS {
        // SAFETY: `vote.sync` reads only registers; every lane of the warp takes part.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p; .reg .b32 t;",
                "and.b32 t, {v}, {b}; setp.ne.u32 p, t, 0;",
                "vote.sync.ballot.b32 t, p, -1;",
                "@!p not.b32 t, t;",
                "and.b32 {m}, {m}, t; }}",
                m = inout(reg32) peers, v = in(reg32) value, b = in(reg32) 1u32 << bit,
                options(nomem, nostack));
        }
        bit += 1;
    }
    peers
}

/// The lanes below this one, as a mask (PTX `%lanemask_lt`): `(1 << lane) - 1`.
#[inline(always)]
#[crate::gpu_only]
pub fn lanemask_lt() -> u32 {
    let word: u32;
    // SAFETY: reads a special register.
    unsafe {
        core::arch::asm!("mov.u32 {w}, %lanemask_lt;", w = out(reg32) word,
            options(nomem, nostack, pure));
    }
    word
}
