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
//! - 1.2 basic kernel, mask in global memory: [`convolution_1d_basic`](kernels::convolution_1d_basic);
//! - 2.1.4 mask in `__constant__` memory: [`convolution_1d_constant_mask`](kernels::convolution_1d_constant_mask);
//! - 3.1 tile plus halo cells in shared memory: [`convolution_1d_tiled_halo`](kernels::convolution_1d_tiled_halo);
//! - 3.3 internal cells in shared memory, halo cells from global memory (served by the caches):
//!   [`convolution_1d_tiled_cached_halo`](kernels::convolution_1d_tiled_cached_halo);
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

/// Entry name of [`convolution_1d_basic`](kernels::convolution_1d_basic).
pub const CONVOLUTION_1D_BASIC: &str = "convolution_1d_basic";
/// Entry name of [`convolution_1d_constant_mask`](kernels::convolution_1d_constant_mask).
pub const CONVOLUTION_1D_CONSTANT_MASK: &str = "convolution_1d_constant_mask";
/// Entry name of [`convolution_1d_tiled_halo`](kernels::convolution_1d_tiled_halo).
pub const CONVOLUTION_1D_TILED_HALO: &str = "convolution_1d_tiled_halo";
/// Entry name of [`convolution_1d_tiled_cached_halo`](kernels::convolution_1d_tiled_cached_halo).
pub const CONVOLUTION_1D_TILED_CACHED_HALO: &str = "convolution_1d_tiled_cached_halo";
/// Family name of the `convolution_1d_tiled_vec4_w*` kernels (one entry per mask width).
pub const CONVOLUTION_1D_TILED_VEC4: &str = "convolution_1d_tiled_vec4";
/// Entry names of the `convolution_1d_tiled_vec4_w*` kernels, indexed by the mask radius
/// `w / 2` (the mask width is a compile-time constant of each, so its loops unroll fully).
pub const CONVOLUTION_1D_TILED_VEC4_BY_RADIUS: [&str; MAX_MASK_WIDTH / 2 + 1] = [
    "convolution_1d_tiled_vec4_w1",
    "convolution_1d_tiled_vec4_w3",
    "convolution_1d_tiled_vec4_w5",
    "convolution_1d_tiled_vec4_w7",
    "convolution_1d_tiled_vec4_w9",
    "convolution_1d_tiled_vec4_w11",
    "convolution_1d_tiled_vec4_w13",
    "convolution_1d_tiled_vec4_w15",
    "convolution_1d_tiled_vec4_w17",
    "convolution_1d_tiled_vec4_w19",
    "convolution_1d_tiled_vec4_w21",
    "convolution_1d_tiled_vec4_w23",
    "convolution_1d_tiled_vec4_w25",
    "convolution_1d_tiled_vec4_w27",
    "convolution_1d_tiled_vec4_w29",
    "convolution_1d_tiled_vec4_w31",
];
/// Entry name of [`convolution_2d_basic`](kernels::convolution_2d_basic).
pub const CONVOLUTION_2D_BASIC: &str = "convolution_2d_basic";
/// Entry name of [`convolution_2d_constant_mask`](kernels::convolution_2d_constant_mask).
pub const CONVOLUTION_2D_CONSTANT_MASK: &str = "convolution_2d_constant_mask";
/// Entry name of [`convolution_2d_tiled_halo`](kernels::convolution_2d_tiled_halo).
pub const CONVOLUTION_2D_TILED_HALO: &str = "convolution_2d_tiled_halo";
/// Family name of the `convolution_2d_tiled_vec4_w*` kernels (one entry per mask width).
pub const CONVOLUTION_2D_TILED_VEC4: &str = "convolution_2d_tiled_vec4";
/// Entry names of the `convolution_2d_tiled_vec4_w*` kernels, indexed by the mask radius
/// `w / 2` (the mask width is a compile-time constant of each, so its loops unroll fully).
pub const CONVOLUTION_2D_TILED_VEC4_BY_RADIUS: [&str; MAX_MASK_WIDTH_2D / 2 + 1] = [
    "convolution_2d_tiled_vec4_w1",
    "convolution_2d_tiled_vec4_w3",
    "convolution_2d_tiled_vec4_w5",
    "convolution_2d_tiled_vec4_w7",
    "convolution_2d_tiled_vec4_w9",
];

/// Widest 1D mask (odd; the seed's `MAX_MASK_WIDTH`, 10 there). 31 covers the usual 1D filters
/// (a Gaussian of sigma up to 5) and keeps the halo of the vec4 tile within
/// [`VEC4_HALO_1D`] elements.
pub const MAX_MASK_WIDTH: usize = 31;
/// Widest 2D mask: 9 x 9 (odd; 3 x 3 Sobel, 5 x 5 Gaussian and 7 x 7 fit).
pub const MAX_MASK_WIDTH_2D: usize = 9;

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
/// Output tile width of the `convolution_2d_tiled_vec4_w*` kernels (2 columns per thread).
pub const VEC4_TILE_2D_X: usize = 64;
/// Output tile height of the `convolution_2d_tiled_vec4_w*` kernels (8 rows per thread).
pub const VEC4_TILE_2D_Y: usize = 64;
/// Halo columns staged on each side of the 2D vec4 tile: the largest radius rounded up to a
/// whole `float4`.
pub const VEC4_HALO_2D_X: usize = (MAX_MASK_WIDTH_2D / 2).div_ceil(4) * 4;

crate::constant_memory!(
    /// The 1D mask, `M[0..w]`, read by every 1D kernel but [`convolution_1d_basic`](kernels::convolution_1d_basic)
    /// (the seed's `__constant__ float M[MAX_MASK_WIDTH]`). Only the first `w` entries are used.
    pub C_MASK_1D: [f32; MAX_MASK_WIDTH]
);

crate::constant_memory!(
    /// The 2D mask, row-major `w x w` in its first `w * w` entries, read by every 2D kernel but
    /// [`convolution_2d_basic`](kernels::convolution_2d_basic).
    pub C_MASK_2D: [f32; MAX_MASK_WIDTH_2D * MAX_MASK_WIDTH_2D]
);

/// The kernels (device build only).
///
/// Loops over per-thread register arrays are written as index loops with constant bounds:
/// LLVM unrolls those fully and the arrays stay in registers; the equivalent iterator chains
/// (`iter_mut().take(..).enumerate()`) were not unrolled here, which put the arrays in local
/// memory (ptxas reported a 96-byte stack frame).
#[cfg(target_arch = "nvptx64")]
#[allow(clippy::needless_range_loop)]
pub mod kernels {
    use core::intrinsics::fmaf32;

    use super::{
        BLOCK_1D, C_MASK_1D, C_MASK_2D, MAX_MASK_WIDTH, MAX_MASK_WIDTH_2D, TILE_2D_X, TILE_2D_Y,
        VEC4_HALO_1D, VEC4_HALO_2D_X, VEC4_TILE_1D, VEC4_TILE_2D_X, VEC4_TILE_2D_Y,
    };
    use crate::device::{
        block_dim, block_idx, global_index_x, global_index_y, grid_dim, load_global_v4,
        store_global_v4, syncthreads, thread_idx,
    };

    /// Reads `input[k]`, or 0 for a ghost element (`k >= n`; a "negative" index wraps to a
    /// huge `usize` and is a ghost too).
    ///
    /// # Safety
    /// `input` is valid for `n` floats.
    #[inline(always)]
    unsafe fn read_or_ghost(input: *const f32, k: usize, n: usize) -> f32 {
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
    unsafe fn load_group(input: *const f32, start: usize, n: usize, vector: bool) -> [f32; 4] {
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

    /// Seed 1.2, `convolution_1D_basic_kernel`: one output per thread, the mask in global
    /// memory, ghost elements skipped by a bounds test inside the loop.
    ///
    /// Algorithm: thread `i = blockIdx.x * blockDim.x + threadIdx.x` sums
    /// `input[i + j - r] * mask[j]` over `j < w` in a register and stores it once.
    ///
    /// Launch: any block size (the host uses [`BLOCK_1D`]); grid covering `n`.
    ///
    /// Parameters: `input`, `output`: `n` floats; `mask`: `mask_width` floats, `mask_width` odd.
    ///
    /// # Safety
    /// The pointers are valid for those lengths; `output` overlaps neither input.
    ///
    /// Performance: per multiply-add two global loads (`N` and `M`): CGMA 1. Neighbouring
    /// threads load overlapping inputs, so L1/L2 absorb most of the `w`-fold re-reading, but
    /// every load is still an instruction through the memory pipeline.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_1d_basic(
        input: *const f32,
        mask: *const f32,
        output: *mut f32,
        mask_width: usize,
        n: usize,
    ) {
        let i = global_index_x();
        if i >= n {
            return;
        }
        let r = mask_width / 2;
        let mut acc = 0.0f32;
        for j in 0..mask_width {
            let k = (i + j).wrapping_sub(r);
            if k < n {
                // SAFETY: `k < n`, `j < mask_width`.
                acc = fmaf32(unsafe { *input.add(k) }, unsafe { *mask.add(j) }, acc);
            }
        }
        // SAFETY: `i < n`.
        unsafe { *output.add(i) = acc };
    }

    /// Seed 2.1.4: [`convolution_1d_basic`] with the mask in `__constant__` memory
    /// ([`C_MASK_1D`]): all lanes of a warp read the same `M[j]`, which the constant cache
    /// broadcasts in one transaction.
    ///
    /// Launch: any block size (the host uses [`BLOCK_1D`]); grid covering `n`. [`C_MASK_1D`]
    /// holds the mask.
    ///
    /// Parameters: `input`, `output`: `n` floats; `mask_width` odd, at most [`MAX_MASK_WIDTH`]
    /// (larger traps).
    ///
    /// # Safety
    /// `input` and `output` are valid for `n` floats and do not overlap.
    ///
    /// Performance: one global load per multiply-add: CGMA 2.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_1d_constant_mask(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        n: usize,
    ) {
        let i = global_index_x();
        if i >= n {
            return;
        }
        let r = mask_width / 2;
        let mut acc = 0.0f32;
        for j in 0..mask_width {
            let k = (i + j).wrapping_sub(r);
            if k < n {
                // SAFETY: `k < n`.
                acc = fmaf32(unsafe { *input.add(k) }, C_MASK_1D::read(j), acc);
            }
        }
        // SAFETY: `i < n`.
        unsafe { *output.add(i) = acc };
    }

    /// Seed 3.1: each block stages its tile of `blockDim.x` inputs plus `r` halo cells on each
    /// side in `__shared__ float N_ds[TILE_SIZE + MAX_MASK_WIDTH - 1]`; boundary blocks write
    /// 0 for the ghost cells, so the compute loop has no bounds test.
    ///
    /// Algorithm (the seed's): the last `r` threads load the left halo (the previous tile's
    /// last elements), every thread its internal element, the first `r` threads the right halo;
    /// barrier; thread `t` sums `N_ds[t + j] * M[j]`. The seed assumes `n` is a multiple of the
    /// block; here elements past `n` are staged as 0 and their outputs not stored.
    ///
    /// Launch: block [`BLOCK_1D`] (the shared array is sized for it; a larger block traps);
    /// grid `ceil(n / BLOCK_1D)`. [`C_MASK_1D`] holds the mask.
    ///
    /// Parameters: as [`convolution_1d_constant_mask`].
    ///
    /// # Safety
    /// `input` and `output` are valid for `n` floats and do not overlap.
    ///
    /// Performance: `B + 2r` global loads of `N` per block of `B` outputs instead of `B w`:
    /// the seed's ratio `B (2n + 1) / (B + 2n)`, 6.84 for `B` = 256, `w` = 7.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_1d_tiled_halo(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        n: usize,
    ) {
        let n_ds = crate::static_shared!(
            s_convolution_1d_tiled_halo: [f32; BLOCK_1D as usize + MAX_MASK_WIDTH - 1]
        );
        let b = block_idx().x as usize;
        let block = BLOCK_1D as usize;
        let t = thread_idx().x as usize;
        let r = mask_width / 2;
        let i = b * block + t;
        if t >= block - r {
            // The previous tile's element `t` (`i - block`); block 0 has ghosts there (the
            // index wraps below 0 and reads as a ghost).
            // SAFETY: slot `t - (block - r) < r` has this one writer.
            unsafe {
                n_ds.write(
                    t - (block - r),
                    read_or_ghost(input, i.wrapping_sub(block), n),
                )
            };
        }
        // SAFETY: slot `r + t` has this one writer; out-of-range reads are ghosts.
        unsafe { n_ds.write(r + t, read_or_ghost(input, i, n)) };
        if t < r {
            // SAFETY: slot `r + block + t` has this one writer.
            unsafe { n_ds.write(r + block + t, read_or_ghost(input, i + block, n)) };
        }
        syncthreads();
        if i < n {
            let mut acc = 0.0f32;
            for j in 0..mask_width {
                // SAFETY: slots `t .. t + 2r` were written before the barrier.
                acc = fmaf32(unsafe { n_ds.read(t + j) }, C_MASK_1D::read(j), acc);
            }
            // SAFETY: `i < n`.
            unsafe { *output.add(i) = acc };
        }
    }

    /// Seed 3.3: only the block's internal elements go to shared memory
    /// (`__shared__ float N_ds[TILE_SIZE]`); halo cells are read from global memory, where the
    /// neighbouring block's loads have usually left them in L2 (and L1).
    ///
    /// Algorithm (the seed's): stage `N_ds[t] = N[i]`; barrier; for each tap, read the element
    /// from `N_ds` if it lies in this tile, from `N` if it is a halo cell, skip it if a ghost.
    ///
    /// Launch: block [`BLOCK_1D`] (larger traps); grid `ceil(n / BLOCK_1D)`. [`C_MASK_1D`]
    /// holds the mask.
    ///
    /// Parameters: as [`convolution_1d_constant_mask`].
    ///
    /// # Safety
    /// `input` and `output` are valid for `n` floats and do not overlap.
    ///
    /// Performance: `B` staged loads plus `r (r + 1)` halo loads per block (cache hits):
    /// ratio `B (2n + 1) / (B + n (n + 1))`, simpler code than [`convolution_1d_tiled_halo`]
    /// at the price of a branch per tap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_1d_tiled_cached_halo(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        n: usize,
    ) {
        let n_ds =
            crate::static_shared!(s_convolution_1d_tiled_cached_halo: [f32; BLOCK_1D as usize]);
        let block = BLOCK_1D as usize;
        let t = thread_idx().x as usize;
        let tile_start = block_idx().x as usize * block;
        let i = tile_start + t;
        // SAFETY: slot `t` has this one writer; past `n` it holds a ghost.
        unsafe { n_ds.write(t, read_or_ghost(input, i, n)) };
        syncthreads();
        if i < n {
            let r = mask_width / 2;
            let next_tile_start = tile_start + block;
            let mut acc = 0.0f32;
            for j in 0..mask_width {
                let k = (i + j).wrapping_sub(r);
                if k < n {
                    let v = if k >= tile_start && k < next_tile_start {
                        // SAFETY: `k - tile_start < block`, written before the barrier.
                        unsafe { n_ds.read(k - tile_start) }
                    } else {
                        // SAFETY: `k < n`.
                        unsafe { *input.add(k) }
                    };
                    acc = fmaf32(v, C_MASK_1D::read(j), acc);
                }
            }
            // SAFETY: `i < n`.
            unsafe { *output.add(i) = acc };
        }
    }

    /// Repeats `$body` with `$i` bound to each listed constant: a loop written out, for loops
    /// that must be unrolled and that LLVM leaves rolled.
    macro_rules! unroll {
        ($i:ident in [$($n:literal)*] $body:block) => {
            $({
                let $i: usize = $n;
                $body
            })*
        };
    }

    /// Four consecutive floats, 16-byte aligned: the element of the vec4 kernels' shared
    /// stages, so that staging and window reads are single 16-byte shared accesses
    /// (`st.v4` / `ld.v4`: a warp moves 512 contiguous bytes in 4 conflict-free wavefronts).
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct F4([f32; 4]);

    /// `float4` groups of a 1D vec4 tile.
    const TILE_GROUPS_1D: usize = VEC4_TILE_1D / 4;
    /// `float4` groups of each 1D halo.
    const HALO_GROUPS_1D: usize = VEC4_HALO_1D / 4;
    /// `float4` groups of the interior each thread stages per tile.
    const GROUPS_PER_THREAD_1D: usize = TILE_GROUPS_1D / BLOCK_1D as usize;

    /// Loads into registers what thread `t` stages for tile `tile`: the interior groups
    /// `t + h B` (`h < 4`), and for the first 8 threads one group of the 16-cell halos.
    ///
    /// # Safety
    /// `input` is valid for `n` floats and 16-byte aligned.
    #[inline(always)]
    unsafe fn load_tile_1d(
        input: *const f32,
        n: usize,
        tile: usize,
        t: usize,
    ) -> [[f32; 4]; GROUPS_PER_THREAD_1D + 1] {
        let base = tile * VEC4_TILE_1D;
        let mut v = [[0.0f32; 4]; GROUPS_PER_THREAD_1D + 1];
        for h in 0..GROUPS_PER_THREAD_1D {
            let start = base + 4 * (t + h * BLOCK_1D as usize);
            // SAFETY: `start` is a multiple of 4; `input` is aligned.
            v[h] = unsafe { load_group(input, start, n, true) };
        }
        if t < 2 * HALO_GROUPS_1D {
            let start = if t < HALO_GROUPS_1D {
                base.wrapping_sub(VEC4_HALO_1D) + 4 * t
            } else {
                base + VEC4_TILE_1D + 4 * (t - HALO_GROUPS_1D)
            };
            // SAFETY: `start` is a multiple of 4 (or wrapped below 0: all ghosts).
            v[GROUPS_PER_THREAD_1D] = unsafe { load_group(input, start, n, true) };
        }
        v
    }

    /// The body of the `convolution_1d_tiled_vec4_w*` kernels, for radius `R` (mask width
    /// `2R + 1`), a compile-time constant so that the mask loops unroll, the window stays in
    /// registers and every mask read is an immediate constant-bank operand.
    ///
    /// Algorithm: a grid-stride loop over tiles of [`VEC4_TILE_1D`] = 4096 outputs. Each
    /// thread holds in registers four `float4` groups of the tile (`t + 256 h`) and, for the
    /// first 8 threads, one group of the 16-cell halos, all loaded with `ld.global.v4` (ghost
    /// cells as 0, the ragged end element by element). After a barrier the registers go to the
    /// shared stage with 16-byte stores; the thread then issues the loads of the next tile and,
    /// while they are in flight, computes its four output groups: for group `p` it reads the
    /// aligned window of groups `p - G ..= p + G` (`G = ceil(R / 4)`) with 16-byte shared loads
    /// (consecutive lanes, consecutive 16 bytes: no bank conflicts), forms the 4 outputs
    /// `sum_j M[j] x[4p + q + j - R]` in registers and stores them with one `st.global.v4`.
    ///
    /// # Safety
    /// `input` and `output` are valid for `n` floats, do not overlap, and are 16-byte aligned;
    /// block [`BLOCK_1D`] (asserted).
    #[inline(always)]
    unsafe fn convolution_1d_tiled_vec4<const R: usize>(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        n: usize,
    ) {
        const B: usize = BLOCK_1D as usize;
        const HG: usize = HALO_GROUPS_1D;
        const GPT: usize = GROUPS_PER_THREAD_1D;
        /// Window groups for the widest mask.
        const MAX_WINDOW: usize = 2 * HALO_GROUPS_1D + 1;
        assert!(block_dim().x == BLOCK_1D && mask_width == 2 * R + 1 && R <= VEC4_HALO_1D);
        let g = R.div_ceil(4);
        let stage = crate::static_shared!(
            s_convolution_1d_tiled_vec4: [F4; TILE_GROUPS_1D + 2 * HALO_GROUPS_1D]
        );
        let t = thread_idx().x as usize;
        let tiles = n.div_ceil(VEC4_TILE_1D);
        let stride = grid_dim().x as usize;
        let mut tile = block_idx().x as usize;
        if tile >= tiles {
            return;
        }
        // SAFETY: `input` is valid for `n` floats and aligned (caller).
        let mut regs = unsafe { load_tile_1d(input, n, tile, t) };
        loop {
            for h in 0..GPT {
                // SAFETY: one writer per group; the previous tile's reads ended at the barrier
                // at the bottom of the loop.
                unsafe { stage.write(HG + t + h * B, F4(regs[h])) };
            }
            if t < 2 * HG {
                let slot = if t < HG {
                    t
                } else {
                    HG + TILE_GROUPS_1D + (t - HG)
                };
                // SAFETY: halo groups, one writer each.
                unsafe { stage.write(slot, F4(regs[GPT])) };
            }
            syncthreads();
            let next = tile + stride;
            if next < tiles {
                // SAFETY: as above.
                regs = unsafe { load_tile_1d(input, n, next, t) };
            }
            let base = tile * VEC4_TILE_1D;
            for h in 0..GPT {
                let p = t + h * B;
                // window[4 i + e] = x[4 (p - G + i) + e], i.e. window[4 G + k] = x[4p + k].
                let mut window = [0.0f32; 4 * MAX_WINDOW];
                for i in 0..2 * g + 1 {
                    // SAFETY: staged before the barrier; `HG + p - G + i` lies in the stage
                    // because `G <= HG`.
                    let F4(v) = unsafe { stage.read(HG + p - g + i) };
                    for e in 0..4 {
                        window[4 * i + e] = v[e];
                    }
                }
                let mut out = [0.0f32; 4];
                for q in 0..4 {
                    for j in 0..2 * R + 1 {
                        // Output `4p + q` takes `x[4p + q + j - R] = window[4G + q + j - R]`.
                        out[q] = fmaf32(window[4 * g + q + j - R], C_MASK_1D::read(j), out[q]);
                    }
                }
                let o = base + 4 * p;
                if o < n && n - o >= 4 {
                    // SAFETY: `o + 3 < n`; 16-byte aligned (`o % 4 == 0`, aligned base).
                    unsafe { store_global_v4(output.add(o), out) };
                } else {
                    for q in 0..4 {
                        if o + q < n {
                            // SAFETY: `o + q < n`.
                            unsafe { *output.add(o + q) = out[q] };
                        }
                    }
                }
            }
            if next >= tiles {
                break;
            }
            // Every read of this tile's stage is done before the next tile overwrites it.
            syncthreads();
            tile = next;
        }
    }

    /// Defines one `convolution_1d_tiled_vec4_w*` entry per mask width.
    macro_rules! convolution_1d_tiled_vec4_entries {
        ($(($name:ident, $width:literal, $radius:literal)),* $(,)?) => {$(
            #[doc = concat!(
                "The 1D convolution to call, for a mask of width ", stringify!($width),
                ": a 4096-output tile per block and loop step (16 outputs per thread), staged ",
                "with 16-byte loads and stores, the next tile's loads in flight while this one ",
                "is computed from 16-byte shared windows; outputs stored as `float4`.\n\n",
                "Algorithm: see the shared body `convolution_1d_tiled_vec4::<R>` (here `R` = ",
                stringify!($radius), ").\n\n",
                "Launch: block [`BLOCK_1D`] (asserted); any grid (the host uses one wave of ",
                "resident blocks, at most one per tile); [`C_MASK_1D`] holds the mask; ",
                "`mask_width` must be ", stringify!($width), " (asserted).\n\n",
                "Parameters: `input`, `output`: `n` floats, any `n`.\n\n",
                "# Safety\n`input` and `output` are valid for `n` floats, do not overlap, and ",
                "are 16-byte aligned (device allocations are).\n\n",
                "Performance: `4096 + 32` loads of `N` per 4096 outputs: ratio ",
                "`4096 w / 4128`; 8 bytes of DRAM traffic per output, so the copy bandwidth is ",
                "the limit; shared memory moves 16 bytes per lane per access."
            )]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(
                input: *const f32,
                output: *mut f32,
                mask_width: usize,
                n: usize,
            ) {
                // SAFETY: forwarded.
                unsafe { convolution_1d_tiled_vec4::<$radius>(input, output, mask_width, n) }
            }
        )*};
    }

    convolution_1d_tiled_vec4_entries!(
        (convolution_1d_tiled_vec4_w1, 1, 0),
        (convolution_1d_tiled_vec4_w3, 3, 1),
        (convolution_1d_tiled_vec4_w5, 5, 2),
        (convolution_1d_tiled_vec4_w7, 7, 3),
        (convolution_1d_tiled_vec4_w9, 9, 4),
        (convolution_1d_tiled_vec4_w11, 11, 5),
        (convolution_1d_tiled_vec4_w13, 13, 6),
        (convolution_1d_tiled_vec4_w15, 15, 7),
        (convolution_1d_tiled_vec4_w17, 17, 8),
        (convolution_1d_tiled_vec4_w19, 19, 9),
        (convolution_1d_tiled_vec4_w21, 21, 10),
        (convolution_1d_tiled_vec4_w23, 23, 11),
        (convolution_1d_tiled_vec4_w25, 25, 12),
        (convolution_1d_tiled_vec4_w27, 27, 13),
        (convolution_1d_tiled_vec4_w29, 29, 14),
        (convolution_1d_tiled_vec4_w31, 31, 15),
    );

    /// Seed chapter 8's 2D counterpart of [`convolution_1d_basic`]: one output per thread,
    /// the row-major `w x w` mask in global memory, ghost cells skipped.
    ///
    /// Launch: any 2D block (the host uses [`TILE_2D_X`] x [`TILE_2D_Y`]); grid covering
    /// `cols` along x and `rows` along y.
    ///
    /// Parameters: `input`, `output`: row-major `rows x cols`; `mask`: `mask_width^2` floats.
    ///
    /// # Safety
    /// The pointers are valid for those lengths; `output` overlaps neither input.
    ///
    /// Performance: two global loads per multiply-add (CGMA 1).
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_2d_basic(
        input: *const f32,
        mask: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        let (x, y) = (global_index_x(), global_index_y());
        if x >= cols || y >= rows {
            return;
        }
        let r = mask_width / 2;
        let mut acc = 0.0f32;
        for jy in 0..mask_width {
            let yy = (y + jy).wrapping_sub(r);
            if yy >= rows {
                continue;
            }
            for jx in 0..mask_width {
                let xx = (x + jx).wrapping_sub(r);
                if xx < cols {
                    // SAFETY: `yy < rows`, `xx < cols`, `jy, jx < mask_width`.
                    let (v, m) =
                        unsafe { (*input.add(yy * cols + xx), *mask.add(jy * mask_width + jx)) };
                    acc = fmaf32(v, m, acc);
                }
            }
        }
        // SAFETY: `y < rows`, `x < cols`.
        unsafe { *output.add(y * cols + x) = acc };
    }

    /// [`convolution_2d_basic`] with the mask in `__constant__` memory ([`C_MASK_2D`]).
    ///
    /// Launch: as [`convolution_2d_basic`]. [`C_MASK_2D`] holds the mask.
    ///
    /// Parameters: `input`, `output`: row-major `rows x cols`; `mask_width` odd, at most
    /// [`MAX_MASK_WIDTH_2D`] (larger traps).
    ///
    /// # Safety
    /// `input` and `output` are valid for `rows * cols` floats and do not overlap.
    ///
    /// Performance: one global load per multiply-add (CGMA 2).
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_2d_constant_mask(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        let (x, y) = (global_index_x(), global_index_y());
        if x >= cols || y >= rows {
            return;
        }
        let r = mask_width / 2;
        let mut acc = 0.0f32;
        for jy in 0..mask_width {
            let yy = (y + jy).wrapping_sub(r);
            if yy >= rows {
                continue;
            }
            for jx in 0..mask_width {
                let xx = (x + jx).wrapping_sub(r);
                if xx < cols {
                    // SAFETY: `yy < rows`, `xx < cols`.
                    let v = unsafe { *input.add(yy * cols + xx) };
                    acc = fmaf32(v, C_MASK_2D::read(jy * mask_width + jx), acc);
                }
            }
        }
        // SAFETY: `y < rows`, `x < cols`.
        unsafe { *output.add(y * cols + x) = acc };
    }

    /// Seed 3.1 in 2D: each block stages its `32 x 8` output tile plus `r` halo cells on every
    /// side in shared memory, ghost cells as 0, then computes from shared memory alone.
    ///
    /// Algorithm: the `(32 + 2r) x (8 + 2r)` input tile is loaded by the block's 256 threads in
    /// a block-stride loop (consecutive threads, consecutive columns: coalesced); barrier;
    /// thread `(tx, ty)` sums `tile[ty + jy][tx + jx] * M[jy][jx]` (a warp reads 32 consecutive
    /// words: no bank conflicts).
    ///
    /// Launch: block [`TILE_2D_X`] x [`TILE_2D_Y`]; grid `(ceil(cols / 32), ceil(rows / 8))`.
    /// [`C_MASK_2D`] holds the mask.
    ///
    /// Parameters: as [`convolution_2d_constant_mask`].
    ///
    /// # Safety
    /// `input` and `output` are valid for `rows * cols` floats and do not overlap; the block
    /// is 32 x 8.
    ///
    /// Performance: `(32 + 2r)(8 + 2r)` loads per 256 outputs instead of `256 w^2`: ratio
    /// `256 w^2 / ((32 + 2r)(8 + 2r))`, 14.8 for a 5 x 5 mask. Thin tiles pay a large halo; the
    /// ratio grows with the tile, as the seed notes.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_2d_tiled_halo(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        const TX: usize = TILE_2D_X as usize;
        const TY: usize = TILE_2D_Y as usize;
        const PITCH: usize = TX + MAX_MASK_WIDTH_2D - 1;
        let n_ds = crate::static_shared!(
            s_convolution_2d_tiled_halo: [f32; (TILE_2D_X as usize + MAX_MASK_WIDTH_2D - 1)
                * (TILE_2D_Y as usize + MAX_MASK_WIDTH_2D - 1)]
        );
        let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
        let col0 = block_idx().x as usize * TX;
        let row0 = block_idx().y as usize * TY;
        let r = mask_width / 2;
        let (in_w, in_h) = (TX + 2 * r, TY + 2 * r);
        let mut e = ty * TX + tx;
        while e < in_w * in_h {
            let (ly, lx) = (e / in_w, e % in_w);
            let (yy, xx) = ((row0 + ly).wrapping_sub(r), (col0 + lx).wrapping_sub(r));
            let v = if yy < rows && xx < cols {
                // SAFETY: in bounds.
                unsafe { *input.add(yy * cols + xx) }
            } else {
                0.0
            };
            // SAFETY: slot `(ly, lx)` has this one writer (`e` is distinct per thread and step).
            unsafe { n_ds.write(ly * PITCH + lx, v) };
            e += TX * TY;
        }
        syncthreads();
        let (x, y) = (col0 + tx, row0 + ty);
        if x < cols && y < rows {
            let mut acc = 0.0f32;
            for jy in 0..mask_width {
                for jx in 0..mask_width {
                    // SAFETY: written before the barrier.
                    let v = unsafe { n_ds.read((ty + jy) * PITCH + tx + jx) };
                    acc = fmaf32(v, C_MASK_2D::read(jy * mask_width + jx), acc);
                }
            }
            // SAFETY: `y < rows`, `x < cols`.
            unsafe { *output.add(y * cols + x) = acc };
        }
    }

    /// Rows of outputs per thread of the 2D vec4 kernels.
    const ROWS_2D: usize = VEC4_TILE_2D_Y / TILE_2D_Y as usize;
    /// Output columns per thread of the 2D vec4 kernels (`2 tx`, `2 tx + 1` or `tx`, `tx + 32`).
    const COLS_2D: usize = VEC4_TILE_2D_X / TILE_2D_X as usize;
    /// Staged columns of the 2D vec4 tile (aligned halo on both sides).
    const PITCH_2D: usize = VEC4_TILE_2D_X + 2 * VEC4_HALO_2D_X;
    /// `float4` groups per staged row.
    const GROUPS_PER_ROW_2D: usize = PITCH_2D / 4;
    /// Staged rows for the widest mask.
    const MAX_ROWS_2D: usize = VEC4_TILE_2D_Y + MAX_MASK_WIDTH_2D - 1;
    /// `float4` loads per thread for the widest mask.
    /// `float4` loads per thread for radius `r`: slots beyond it are never touched, so they
    /// take no registers.
    const fn loads_2d(r: usize) -> usize {
        ((VEC4_TILE_2D_Y + 2 * r) * GROUPS_PER_ROW_2D).div_ceil((TILE_2D_X * TILE_2D_Y) as usize)
    }
    const LOADS_2D: usize =
        (MAX_ROWS_2D * GROUPS_PER_ROW_2D).div_ceil((TILE_2D_X * TILE_2D_Y) as usize);

    /// Loads into registers the `float4` groups thread `tid` stages for the tile whose first
    /// output is `(row0, col0)`: groups `tid + 256 l` of the `(64 + 2R) x 18` staged groups.
    ///
    /// # Safety
    /// `input` is valid for `rows * cols` floats, and 16-byte aligned if `cols % 4 == 0` (the
    /// only case in which it loads `float4`s).
    #[inline(always)]
    unsafe fn load_tile_2d<const R: usize>(
        input: *const f32,
        rows: usize,
        cols: usize,
        (row0, col0): (usize, usize),
        tid: usize,
    ) -> [[f32; 4]; LOADS_2D] {
        const THREADS: usize = (TILE_2D_X * TILE_2D_Y) as usize;
        let groups = (VEC4_TILE_2D_Y + 2 * R) * GROUPS_PER_ROW_2D;
        let vector = cols.is_multiple_of(4);
        let mut v = [[0.0f32; 4]; LOADS_2D];
        const _: () = assert!(LOADS_2D <= 6);
        unroll!(l in [0 1 2 3 4 5] {
            let g = tid + l * THREADS;
            let (ly, gx) = (g / GROUPS_PER_ROW_2D, g % GROUPS_PER_ROW_2D);
            let yy = (row0 + ly).wrapping_sub(R);
            if l < loads_2d(R) && g < groups && yy < rows {
                let xx = (col0 + 4 * gx).wrapping_sub(VEC4_HALO_2D_X);
                // SAFETY: row `yy` holds `cols` floats from `yy * cols`; with `vector`,
                // `cols % 4 == 0` and `xx % 4 == 0`, so the start is 16-byte aligned.
                v[l] = unsafe { load_group(input.add(yy * cols), xx, cols, vector) };
            }
        });
        v
    }

    /// The body of the `convolution_2d_tiled_vec4_w*` kernels, for radius `R` (mask width
    /// `W = 2R + 1`), a compile-time constant so that every loop over the mask unrolls and every
    /// mask read is an immediate constant-bank operand.
    ///
    /// Algorithm: a grid-stride loop over 64 x 64 output tiles, row-major over the image. For
    /// each tile the block's 256 threads hold in registers the `(64 + 2R) x 72` input tile (64
    /// columns plus a 4-column aligned halo each side) as `float4` groups loaded with
    /// `ld.global.v4` (ghosts as 0; images whose width is not a multiple of 4 fall back to
    /// scalar loads). After a barrier the groups go to the shared stage with 16-byte stores;
    /// the threads issue the loads of the next tile, and while they are in flight thread
    /// `(tx, ty)` walks down staged rows `8 ty .. 8 ty + 8 + 2R` of two output columns (the
    /// adjacent `2 tx`, `2 tx + 1` for masks of 5 x 5 and wider, whose `W + 1` inputs per row
    /// feed both; `tx` and `tx + 32` for smaller masks): each input value is read from shared
    /// memory once and multiplied into the outputs that use it, held in a rolling window of `W`
    /// accumulators per column (one per mask row), with the mask value as an immediate
    /// constant-bank operand; when a row's window is complete, the oldest accumulator is an
    /// output and the window shifts. Shared reads per output: `(W + 1)(8 + 2R) / 16` (adjacent
    /// columns) or `W (8 + 2R) / 8` instead of `W^2`. For masks of 5 x 5 and wider the price is
    /// `2R / (8 + 2R)` of the multiply-adds spent on rows above and below the thread's 8 (the
    /// rows written out without them needed 100 registers per thread and measured slower); for
    /// 1 x 1 and 3 x 3 the rows are written out and none is wasted.
    ///
    /// # Safety
    /// `input` and `output` are valid for `rows * cols` floats, do not overlap, `input` is
    /// 16-byte aligned if `cols % 4 == 0`; block 32 x 8 (asserted).
    #[inline(always)]
    unsafe fn convolution_2d_tiled_vec4<const R: usize>(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        const TX: usize = TILE_2D_X as usize;
        assert!(
            mask_width == 2 * R + 1 && block_dim().x == TILE_2D_X && block_dim().y == TILE_2D_Y
        );
        let w = 2 * R + 1;
        let stage = crate::static_shared!(
            s_convolution_2d_tiled_vec4: [F4; MAX_ROWS_2D * GROUPS_PER_ROW_2D]
        );
        let words = stage.as_ptr() as *const f32;
        let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
        let tid = ty * TX + tx;
        let groups = (VEC4_TILE_2D_Y + 2 * R) * GROUPS_PER_ROW_2D;
        let tiles_x = cols.div_ceil(VEC4_TILE_2D_X);
        let tiles = tiles_x * rows.div_ceil(VEC4_TILE_2D_Y);
        let origin = |tile: usize| {
            (
                tile / tiles_x * VEC4_TILE_2D_Y,
                tile % tiles_x * VEC4_TILE_2D_X,
            )
        };
        let stride = grid_dim().x as usize;
        let mut tile = block_idx().x as usize;
        if tile >= tiles {
            return;
        }
        // SAFETY: `input` is valid, and aligned if `cols % 4 == 0` (caller).
        let mut regs = unsafe { load_tile_2d::<R>(input, rows, cols, origin(tile), tid) };
        loop {
            for l in 0..loads_2d(R) {
                let g = tid + l * (TX * TILE_2D_Y as usize);
                if g < groups {
                    // SAFETY: group `g` has this one writer; the previous tile's reads ended
                    // at the barrier at the bottom of the loop.
                    unsafe { stage.write(g, F4(regs[l])) };
                }
            }
            syncthreads();
            let next = tile + stride;
            if next < tiles {
                // SAFETY: as above.
                regs = unsafe { load_tile_2d::<R>(input, rows, cols, origin(next), tid) };
            }
            let (row0, col0) = origin(tile);
            // window[c][m]: the partial sum of output row `ir - 2R + m` (thread rows), column `c`.
            let mut window = [[0.0f32; MAX_MASK_WIDTH_2D]; COLS_2D];
            let first = ty * ROWS_2D;
            // One input row: multiply it into the window, emit the finished output, shift.
            // Which two columns thread `tx` computes: for masks of 5 x 5 and wider, the adjacent
            // columns `2 tx` and `2 tx + 1`, whose `w + 1` inputs of a row are read once each
            // and feed both (`w + 1` shared loads per row instead of `2 w`, at the price of a
            // 2-way bank conflict); for 1 x 1 and 3 x 3, columns `tx` and `tx + 32`
            // (conflict-free; with few multiply-adds per load the conflict costs more than the
            // saved loads). On an H100 the adjacent columns measured faster for 5 x 5 and slower
            // for 3 x 3 (docs/patterns/convolution.md).
            let adjacent = R >= 2;
            let column = |c: usize| {
                if adjacent {
                    COLS_2D * tx + c
                } else {
                    tx + TX * c
                }
            };
            let mut step = |ir: usize| {
                if adjacent {
                    let row = (first + ir) * PITCH_2D + COLS_2D * tx + VEC4_HALO_2D_X - R;
                    for i in 0..w + COLS_2D - 1 {
                        // SAFETY: staged before the barrier; inside the stage because `ty < 8`,
                        // `tx < 32` (the block shape is asserted), `ir < 8 + 2R` and
                        // `2 tx + i + 4 - R < 72`: at most `(63 + 2R) * 72 + 71` words.
                        let v = unsafe { words.add(row + i).read() };
                        for c in 0..COLS_2D {
                            if i >= c && i - c < w {
                                let jx = i - c;
                                for m in 0..w {
                                    // Input row `ir` is mask row `jy = 2R - m` of output row
                                    // `ir - 2R + m`.
                                    window[c][m] = fmaf32(
                                        v,
                                        C_MASK_2D::read((w - 1 - m) * w + jx),
                                        window[c][m],
                                    );
                                }
                            }
                        }
                    }
                } else {
                    let row = (first + ir) * PITCH_2D + tx + VEC4_HALO_2D_X - R;
                    for jx in 0..w {
                        for c in 0..COLS_2D {
                            // SAFETY: as above, with `jx + 32 c + tx + 4 - R < 72`.
                            let v = unsafe { words.add(row + jx + TX * c).read() };
                            for m in 0..w {
                                window[c][m] =
                                    fmaf32(v, C_MASK_2D::read((w - 1 - m) * w + jx), window[c][m]);
                            }
                        }
                    }
                }
                if ir >= 2 * R {
                    let y = row0 + first + ir - 2 * R;
                    for c in 0..COLS_2D {
                        let x = col0 + column(c);
                        if y < rows && x < cols {
                            // SAFETY: `y < rows`, `x < cols`.
                            unsafe { *output.add(y * cols + x) = window[c][0] };
                        }
                    }
                }
                for c in 0..COLS_2D {
                    for m in 0..w - 1 {
                        window[c][m] = window[c][m + 1];
                    }
                    window[c][w - 1] = 0.0;
                }
            };
            if R <= 1 {
                // Written out per input row (8 + 2R <= 10 of them): the window's rotation
                // becomes a renaming of registers, the accumulators of rows outside the
                // thread's 8 are never computed, and the stage offsets are immediates. For
                // R = 2 the same costs 100 registers per thread (2 blocks per SM instead of 3)
                // and measured slower on an H100 (61.7% of memcpy against 66.9%), so wider
                // masks keep the loop.
                unroll!(ir in [0 1 2 3 4 5 6 7 8 9] {
                    if ir < ROWS_2D + 2 * R {
                        step(ir);
                    }
                });
            } else {
                for ir in 0..ROWS_2D + 2 * R {
                    step(ir);
                }
            }
            if next >= tiles {
                break;
            }
            // Every read of this tile's stage is done before the next tile overwrites it.
            syncthreads();
            tile = next;
        }
    }

    /// The 2D convolution to call for a 1 x 1 mask (a scaling): see
    /// [`convolution_2d_tiled_vec4_w5`].
    ///
    /// # Safety
    /// As [`convolution_2d_tiled_vec4_w5`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_2d_tiled_vec4_w1(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        // SAFETY: forwarded.
        unsafe { convolution_2d_tiled_vec4::<0>(input, output, mask_width, rows, cols) }
    }

    /// The 2D convolution to call for a 3 x 3 mask: see [`convolution_2d_tiled_vec4_w5`].
    ///
    /// # Safety
    /// As [`convolution_2d_tiled_vec4_w5`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_2d_tiled_vec4_w3(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        // SAFETY: forwarded.
        unsafe { convolution_2d_tiled_vec4::<1>(input, output, mask_width, rows, cols) }
    }

    /// The 2D convolution to call, here for a 5 x 5 mask: a grid-stride loop over 64 x 64
    /// output tiles, staged with 16-byte loads and stores, the next tile's loads in flight
    /// while one is computed; each thread computes 2 columns x 8 rows from a rolling window of
    /// accumulators, reading each staged value once.
    ///
    /// Algorithm: see the shared body `convolution_2d_tiled_vec4::<R>` (radius `R` = 2 here).
    ///
    /// Launch: block [`TILE_2D_X`] x [`TILE_2D_Y`] (asserted); a one-dimensional grid of any
    /// size (the host uses one wave of resident blocks, at most one per tile); [`C_MASK_2D`]
    /// holds the mask; `mask_width` must be this kernel's (asserted).
    ///
    /// Parameters: `input`, `output`: row-major `rows x cols` floats, any shape (16-byte loads
    /// when `cols % 4 == 0`, scalar loads otherwise).
    ///
    /// # Safety
    /// `input` and `output` are valid for `rows * cols` floats and do not overlap; if
    /// `cols % 4 == 0`, `input` is 16-byte aligned (device allocations are; rows of other
    /// widths are loaded element by element). `output` is stored one float at a time and
    /// needs no more than `f32` alignment.
    ///
    /// Performance: `72 (64 + 2R)` loads of `N` per 4096 outputs: ratio
    /// `4096 w^2 / (72 (64 + 2R))`, 20.9 for 5 x 5; 8 bytes of DRAM traffic per output.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_2d_tiled_vec4_w5(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        // SAFETY: forwarded.
        unsafe { convolution_2d_tiled_vec4::<2>(input, output, mask_width, rows, cols) }
    }

    /// The 2D convolution to call for a 7 x 7 mask: see [`convolution_2d_tiled_vec4_w5`].
    ///
    /// # Safety
    /// As [`convolution_2d_tiled_vec4_w5`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_2d_tiled_vec4_w7(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        // SAFETY: forwarded.
        unsafe { convolution_2d_tiled_vec4::<3>(input, output, mask_width, rows, cols) }
    }

    /// The 2D convolution to call for a 9 x 9 mask: see [`convolution_2d_tiled_vec4_w5`].
    ///
    /// # Safety
    /// As [`convolution_2d_tiled_vec4_w5`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn convolution_2d_tiled_vec4_w9(
        input: *const f32,
        output: *mut f32,
        mask_width: usize,
        rows: usize,
        cols: usize,
    ) {
        // SAFETY: forwarded.
        unsafe { convolution_2d_tiled_vec4::<4>(input, output, mask_width, rows, cols) }
    }
}
