//! Convolution of `f32` data with a small odd-width mask: the seed "大规模并行处理器编程实战 第八章
//! 并行模式: 卷积" (PMPP chapter 8): 1D convolution of an input `N` with a mask `M` into `P`,
//!
//! ```text
//! P[i] = sum_{j < w} N[i + j - r] * M[j],     r = w / 2,
//! ```
//!
//! where "ghost" elements outside the input read as 0; and its 2D counterpart on row-major
//! images, `P[y][x] = sum_{jy, jx < w} N[y + jy - r][x + jx - r] * M[jy][jx]`.
//!
//! The versions follow the seed's sections, each changing one thing:
//! - 1.2 basic kernel, mask in global memory: [`convolution_1d_basic`](basic::convolution_1d_basic);
//! - 2.1.4 mask in `__constant__` memory: [`convolution_1d_constant_mask`](basic::convolution_1d_constant_mask);
//! - 3.1 tile plus halo cells in shared memory: [`convolution_1d_tiled_halo`](tiled::convolution_1d_tiled_halo);
//! - 3.3 internal cells in shared memory, halo cells from global memory (served by the caches):
//!   [`convolution_1d_tiled_cached_halo`](tiled::convolution_1d_tiled_cached_halo);
//! - the 2D counterparts of the first three (the seed: tiling "matters more in 2D and 3D");
//! - beyond the seed, the kernels to call: the `convolution_1d_tiled_vec4_w*` and
//!   `convolution_2d_tiled_vec4_w*` families (one entry per mask width, so that the mask loops
//!   unroll), with 16-byte global and shared accesses, several outputs per thread from register
//!   windows, and the next tile's loads in flight while one is computed.
//!
//! Arithmetic against memory: each output costs `w` (1D) or `w^2` (2D) multiply-adds. The basic
//! kernel makes two global loads per multiply-add (CGMA 1); with the mask in constant memory one
//! (CGMA 2); tiling divides the loads of `N` by the seed's ratio `B (2n + 1) / (B + 2n)` (block
//! `B`, radius `n`). Once loads are tiled, every kernel here is bound by DRAM bandwidth: 8 bytes
//! per output (one read, one write), the device-to-device copy bandwidth is the ceiling.
//!
//! # Files
//! One file per kernel family (the kernels in the device build, their typed handles on the
//! host):
//! - [`basic`]: the basic and constant-mask kernels, 1D and 2D;
//! - [`tiled`]: the seed's tiled kernels (tile plus halo in shared memory, 1D and 2D; cached
//!   halo, 1D);
//! - [`vec4_1d`], [`vec4_2d`]: the `convolution_*_tiled_vec4_w*` families.
//!
//! This module holds what host and device share: mask widths, block and tile sizes, and the
//! `__constant__` masks.

/// Family name of the `convolution_1d_tiled_vec4_w*` kernels (not an entry: the host picks the
/// entry for a mask width from `vec4_1d::CONVOLUTION_1D_TILED_VEC4_BY_RADIUS`).
pub const CONVOLUTION_1D_TILED_VEC4: &str = "convolution_1d_tiled_vec4";
/// Family name of the `convolution_2d_tiled_vec4_w*` kernels (not an entry: the host picks the
/// entry for a mask width from `vec4_2d::CONVOLUTION_2D_TILED_VEC4_BY_RADIUS`).
pub const CONVOLUTION_2D_TILED_VEC4: &str = "convolution_2d_tiled_vec4";
/// Family name of the `convolution_2d_wide_w*` kernels (not an entry: the host picks the
/// entry for a mask width from `wide::CONVOLUTION_2D_WIDE_BY_WIDTH`).
pub const CONVOLUTION_2D_WIDE: &str = "convolution_2d_wide";
/// Family name of the `convolution_2d_separable_fused_w*` kernels (not an entry: the host
/// picks the entry for a mask width from
/// `separable::CONVOLUTION_2D_SEPARABLE_FUSED_BY_RADIUS`).
pub const CONVOLUTION_2D_SEPARABLE_FUSED: &str = "convolution_2d_separable_fused";
/// Name of the two-pass separable convolution (NVIDIA's `convolutionSeparable`): not an
/// entry, the pair `convolution_2d_separable_rows`, `convolution_2d_separable_cols`.
pub const CONVOLUTION_2D_SEPARABLE_TWO_PASS: &str = "convolution_2d_separable_two_pass";

/// Widest 1D mask (odd; the seed's `MAX_MASK_WIDTH`, 10 there). 31 covers the usual 1D filters
/// (a Gaussian of sigma up to 5) and keeps the halo of the vec4 tile within
/// [`VEC4_HALO_1D`] elements.
pub const MAX_MASK_WIDTH: usize = 31;
/// Widest 2D mask: 31 x 31 (odd), dense or separable. The `convolution_2d_tiled_vec4_w*`
/// kernels take widths up to [`MAX_MASK_WIDTH_2D_VEC4`], the `convolution_2d_wide_w*` kernels
/// the wider dense masks, the `convolution_2d_separable_*` kernels separable masks of every
/// width.
pub const MAX_MASK_WIDTH_2D: usize = 31;
/// Widest mask of the `convolution_2d_tiled_vec4_w*` kernels: 9 x 9 (their stage, halo and
/// load slots are sized for it).
pub const MAX_MASK_WIDTH_2D_VEC4: usize = 9;

/// Threads per block of every 1D kernel; also the seed's `TILE_SIZE` (outputs per block) of the
/// two tiled seed kernels.
pub const BLOCK_1D: u32 = 256;
/// Outputs per thread and tile of the `convolution_1d_tiled_vec4_w*` kernels.
pub const VEC4_OUTPUTS_PER_THREAD_1D: usize = 16;
/// Outputs per tile of the `convolution_1d_tiled_vec4_w*` kernels:
/// `BLOCK_1D * VEC4_OUTPUTS_PER_THREAD_1D` = 4096.
pub const VEC4_TILE_1D: usize = BLOCK_1D as usize * VEC4_OUTPUTS_PER_THREAD_1D;
/// Halo cells staged on each side of the vec4 tile: the largest radius rounded up to a whole
/// `float4` (16 >= 15), so the halo loads are aligned 16-byte loads too.
pub const VEC4_HALO_1D: usize = (MAX_MASK_WIDTH / 2).div_ceil(4) * 4;

/// Block of the seed-style 2D kernels: `TILE_2D_X x TILE_2D_Y` threads, one output each (a warp
/// is one row of 32 outputs).
pub const TILE_2D_X: u32 = 32;
/// See [`TILE_2D_X`].
pub const TILE_2D_Y: u32 = 8;
/// Output tile width of the `convolution_2d_tiled_vec4_w*` kernels (16 threads of 4 columns).
pub const VEC4_TILE_2D_X: usize = 64;
/// Output tile height of the `convolution_2d_tiled_vec4_w*` kernels (16 threads of 4 rows).
pub const VEC4_TILE_2D_Y: usize = 64;
/// Halo columns staged on each side of the 2D vec4 tile: the largest radius rounded up to a
/// whole `float4`.
pub const VEC4_HALO_2D_X: usize = (MAX_MASK_WIDTH_2D_VEC4 / 2).div_ceil(4) * 4;
/// Largest number of rows or columns the `convolution_2d_tiled_vec4_w*` kernels take (2^31):
/// their tile coordinates are 32-bit, which saves the 64-bit compares and adds of the tile
/// walk, the interior checks and the stores. The launchers reject larger images.
pub const VEC4_MAX_SIDE_2D: usize = 1 << 31;

gpu_std::constant_memory!(
    /// The 1D mask, `M[0..w]`, read by every 1D kernel but [`convolution_1d_basic`](basic::convolution_1d_basic)
    /// (the seed's `__constant__ float M[MAX_MASK_WIDTH]`). Only the first `w` entries are used.
    pub C_MASK_1D: [f32; MAX_MASK_WIDTH]
);

gpu_std::constant_memory!(
    /// The 2D mask, row-major `w x w` in its first `w * w` entries, read by every 2D kernel but
    /// [`convolution_2d_basic`](basic::convolution_2d_basic).
    pub C_MASK_2D: [f32; MAX_MASK_WIDTH_2D * MAX_MASK_WIDTH_2D]
);

gpu_std::constant_memory!(
    /// The row factor of a separable 2D mask, `row[0..w]` (`M[jy][jx] = col[jy] row[jx]`),
    /// read by the `convolution_2d_separable_*` kernels' row pass (along x).
    pub C_MASK_ROW: [f32; MAX_MASK_WIDTH_2D]
);

gpu_std::constant_memory!(
    /// The column factor of a separable 2D mask, `col[0..w]`, read by the
    /// `convolution_2d_separable_*` kernels' column pass (along y).
    pub C_MASK_COL: [f32; MAX_MASK_WIDTH_2D]
);

/// Repeats `$body` with `$i` bound to each listed constant: a loop written out, so that every
/// register index and mask offset in it is a constant (LLVM leaves some such loops rolled, and
/// their arrays then go to local memory). Defined before the kernel modules, which use it.
macro_rules! unroll {
    ($i:ident in [$($n:literal)*] $body:block) => {
        $({
            let $i: usize = $n;
            $body
        })*
    };
}

// The kernels (on the host, their typed handles), one module per family.
pub mod basic;
pub mod tiled;
// Loops over per-thread register arrays are written as index loops with constant bounds:
// LLVM unrolls those fully and the arrays stay in registers; the equivalent iterator chains
// (`iter_mut().take(..).enumerate()`) were not unrolled here, which put the arrays in local
// memory (ptxas reported a 96-byte stack frame).
#[allow(clippy::needless_range_loop)]
pub mod separable;
#[allow(clippy::needless_range_loop)]
pub mod vec4_1d;
#[allow(clippy::needless_range_loop)]
pub mod vec4_2d;
#[allow(clippy::needless_range_loop)]
pub mod wide;

/// Device helpers the kernel families share: ghost-aware reads of the input and the `float4`
/// element of the vec4 kernels' shared stages.
#[allow(clippy::needless_range_loop)]
mod common {
    use gpu_std::load_global_v4;

    /// Reads `input[k]`, or 0 for a ghost element (`k >= n`; a "negative" index wraps to a
    /// huge `usize` and is a ghost too).
    ///
    /// # Safety
    /// `input` is valid for `n` floats.
    #[inline(always)]
    pub(super) unsafe fn read_or_ghost(input: *const f32, k: usize, n: usize) -> f32 {
        if k < n {
            // SAFETY: `k < n`.
            unsafe { *input.add(k) }
        } else {
            0.0
        }
    }

    /// Reads the four elements `input[start..start + 4]` (ghosts read as 0), with one 16-byte
    /// load when all four are inside the input and `vector` allows it, element by element
    /// otherwise. `start` may have wrapped below 0 (then the elements below 0 are ghosts).
    ///
    /// # Safety
    /// `input` is valid for `n` floats; if `vector`, `input` is 16-byte aligned and `start` a
    /// multiple of 4.
    #[inline(always)]
    pub(super) unsafe fn load_group(
        input: *const f32,
        start: usize,
        n: usize,
        vector: bool,
    ) -> [f32; 4] {
        if vector && start < n && n - start >= 4 {
            // SAFETY: `start + 3 < n`; 16-byte aligned by the caller's guarantee.
            unsafe { load_global_v4(input.add(start)) }
        } else {
            let mut v = [0.0f32; 4];
            for q in 0..4 {
                // SAFETY: forwarded; out-of-range indices read as 0.
                v[q] = unsafe { read_or_ghost(input, start.wrapping_add(q), n) };
            }
            v
        }
    }

    /// `a * b + c` (`fma.rn.f32`) kept in program order: an `asm!` without `pure` is not moved
    /// across another, so LLVM cannot interleave the multiply-adds of later input rows with
    /// earlier ones, which kept every row of the 9 x 9 2D body live at once (242 registers;
    /// 80 with `ordered_load` as well).
    #[inline(always)]
    #[gpu_std::gpu_only]
    pub(super) fn ordered_fma(a: f32, b: f32, c: f32) -> f32 {
        let d: f32;
        // SAFETY: arithmetic on registers only.
        unsafe {
            core::arch::asm!("fma.rn.f32 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a,
                b = in(reg32) b, c = in(reg32) c, options(nomem, nostack));
        }
        d
    }

    /// Reads a staged `float4` (`ld.shared.v4.f32` at its 32-bit shared-window address) kept
    /// in program order with [`ordered_fma`]: the window's loads are not hoisted above the
    /// multiply-adds of the previous group, so only one window is live at a time.
    ///
    /// # Safety
    /// `p` is the shared-window address of a staged group, written before the last barrier.
    #[inline(always)]
    #[gpu_std::gpu_only]
    pub(super) unsafe fn ordered_load(p: u32) -> [f32; 4] {
        let (a, b, c, d): (f32, f32, f32, f32);
        // SAFETY: a valid, 16-byte aligned address (caller); not `pure`, so it keeps its
        // place among the other ordered operations.
        unsafe {
            core::arch::asm!("ld.shared.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
                p = in(reg32) p, options(readonly, nostack));
        }
        [a, b, c, d]
    }

    /// `ld.shared.v4.f32` at the 32-bit shared-window address `p` (free to be scheduled
    /// among other reads; barriers and stores keep their order with it).
    ///
    /// # Safety
    /// `p` is 16-byte aligned, inside a shared declaration, written before the last barrier.
    #[inline(always)]
    #[gpu_std::gpu_only]
    pub(super) unsafe fn load_shared_v4(p: u32) -> [f32; 4] {
        let (a, b, c, d): (f32, f32, f32, f32);
        // SAFETY: a valid, aligned shared address (caller).
        unsafe {
            core::arch::asm!("ld.shared.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
                p = in(reg32) p, options(pure, readonly, nostack));
        }
        [a, b, c, d]
    }

    /// `ld.shared.f32` at the 32-bit shared-window address `p`, kept in program order with
    /// the other such loads and every non-`pure` `asm!` (not hoisted above the multiply-adds
    /// of the previous values, so that a column pass keeps one value live, not all of its
    /// window).
    ///
    /// # Safety
    /// `p` is 4-byte aligned, inside a shared declaration, written before the last barrier.
    #[inline(always)]
    #[gpu_std::gpu_only]
    pub(super) unsafe fn load_shared_f32(p: u32) -> f32 {
        let a: f32;
        // SAFETY: a valid, aligned shared address (caller).
        unsafe {
            core::arch::asm!("ld.shared.f32 {a}, [{p}];", a = out(reg32) a, p = in(reg32) p,
                options(readonly, nostack));
        }
        a
    }

    /// `n`, opaque to the compiler (a `mov` it cannot see through): a loop bound that keeps a
    /// short loop a loop, where unrolling would repeat a long body.
    #[inline(always)]
    #[gpu_std::gpu_only]
    pub(super) fn opaque_usize(n: usize) -> usize {
        let m: usize;
        // SAFETY: a register move.
        unsafe {
            core::arch::asm!("mov.u64 {m}, {n};", m = out(reg64) m, n = in(reg64) n,
                options(pure, nomem, nostack));
        }
        m
    }

    /// `st.shared.v4.f32` of `v` at the 32-bit shared-window address `p`.
    ///
    /// # Safety
    /// `p` is 16-byte aligned, inside a shared declaration; no other thread accesses those
    /// 16 bytes between the barriers around the store.
    #[inline(always)]
    #[gpu_std::gpu_only]
    pub(super) unsafe fn store_shared_v4(p: u32, v: [f32; 4]) {
        // SAFETY: a valid, aligned, race-free shared address (caller).
        unsafe {
            core::arch::asm!("st.shared.v4.f32 [{p}], {{{a}, {b}, {c}, {d}}};",
                a = in(reg32) v[0], b = in(reg32) v[1], c = in(reg32) v[2], d = in(reg32) v[3],
                p = in(reg32) p, options(nostack));
        }
    }

    /// Four consecutive floats, 16-byte aligned: the element of the vec4 kernels' shared
    /// stages, so that staging and window reads are single 16-byte shared accesses
    /// (`st.v4` / `ld.v4`: a warp moves 512 contiguous bytes in 4 conflict-free wavefronts).
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    pub(super) struct F4(pub(super) [f32; 4]);
}
