//! Dense 2D convolutions with wide masks, 11 x 11 to 31 x 31: the
//! `convolution_2d_wide_w{11,13,...,31}` family, one entry per width sharing one
//! const-generic, register-blocked body. At these widths the `w^2` multiply-adds per output,
//! not memory, bound the kernel: the body is written so that nearly every instruction is an
//! FFMA whose mask operand is a constant-bank operand.

use super::common::{F4, load_group, load_shared_v4, opaque_usize, store_shared_v4};
use super::{C_MASK_2D, MAX_MASK_WIDTH_2D};
use gpu_std::kernel;
use gpu_std::math::fmaf32;
use gpu_std::{block_dim, block_idx, syncthreads, thread_idx};

/// Output columns of a tile of the wide kernels.
pub const WIDE_TILE_X: usize = 64;
/// Output rows of a tile of the wide kernels.
pub const WIDE_TILE_Y: usize = 64;
/// Threads per block of the wide kernels (one-dimensional blocks).
pub const WIDE_BLOCK: u32 = 256;
/// Narrowest mask of the wide kernels (narrower ones take the `convolution_2d_tiled_vec4_w*`
/// kernels).
pub const WIDE_MIN_WIDTH: usize = 11;

/// Halo columns staged on each side of the tile for the widest mask (15 rounded up to 16).
const HALO_MAX: usize = (MAX_MASK_WIDTH_2D / 2).div_ceil(4) * 4;
/// `float4` groups per staged row: 64 + 2 x 16 columns = 24, padded to an odd count so that
/// the 8 lanes of a quarter-warp, reading the same group of 8 consecutive rows, hit 8
/// different bank quads (conflict-free 16-byte reads).
const PITCH_G: usize = (WIDE_TILE_X + 2 * HALO_MAX) / 4 + 1;
/// Staged rows for the widest mask.
const MAX_ROWS: usize = WIDE_TILE_Y + MAX_MASK_WIDTH_2D - 1;

/// Halo columns staged each side for radius `r`: `r` rounded up to a whole `float4`.
const fn halo(r: usize) -> usize {
    r.div_ceil(4) * 4
}

/// The body of the `convolution_2d_wide_w*` kernels for radius `R` (`W = 2R + 1`).
///
/// Algorithm: block `(bx, by)` computes the 64 x 64 outputs at `(64 by, 64 bx)`. The
/// `(64 + 2R) x (64 + 2H)` input tile (`H` = `R` rounded up to 4; ghosts as 0) is staged in
/// shared memory with `ld.global.v4` / `st.shared.v4` (scalar loads when `cols % 4 != 0`).
/// Thread `(ry, cx)`, `ry = lane % 8 + 8 (warp % 4)`, `cx = lane / 8 + 4 (warp / 4)`, then
/// computes 8 consecutive outputs, columns `8 cx ..+8` of tile rows `ry` and `ry + 32` (two
/// passes of a runtime loop, so the code is one pass long). For each mask row `jy` (written
/// out) it reads its window of `8 + 2R` inputs of stage row `ry + jy` once, `(8 + H + R) / 4`
/// 16-byte loads at constant offsets from one address (the lanes of a quarter-warp read 8
/// rows of an odd pitch: conflict-free), and issues the `8 W` multiply-adds of that mask row,
/// each `fma(input, M[jy][jx], acc[j])` with `M[jy][jx]` a constant-bank operand. Per pass a
/// thread issues `8 W^2` FFMAs against `W (8 + H + R) / 4` shared loads (4% for 31 x 31), with
/// 8 accumulators and one `float4` live.
///
/// # Safety
/// `input` and `output` are valid for `rows * cols` floats and do not overlap; `input` is
/// 16-byte aligned if `cols % 4 == 0`; blocks of 256 threads (asserted); the grid covers
/// `ceil(cols / 64)` x `ceil(rows / 64)`.
#[inline(always)]
unsafe fn wide<const R: usize>(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
) {
    assert!(mask_width == 2 * R + 1 && block_dim().x == WIDE_BLOCK && block_dim().y == 1);
    let w = 2 * R + 1;
    let stage = gpu_std::static_shared!(s_convolution_2d_wide: [F4; MAX_ROWS * PITCH_G]);
    let tid = thread_idx().x as usize;
    // SAFETY: blocks of 256 threads (asserted).
    unsafe { core::hint::assert_unchecked(tid < WIDE_BLOCK as usize) };
    let x0 = block_idx().x as usize * WIDE_TILE_X;
    let y0 = block_idx().y as usize * WIDE_TILE_Y;
    if x0 >= cols || y0 >= rows {
        return;
    }
    let base = stage.shared_address();
    // Staging: `64 + 2R` rows of `G` groups, group `g` of the block-stride loop is staged row
    // `g / G`, group `g % G`.
    let g_row = (WIDE_TILE_X + 2 * halo(R)) / 4;
    let total = (WIDE_TILE_Y + 2 * R) * g_row;
    let vector = cols.is_multiple_of(4);
    let mut g = tid;
    while g < total {
        let (ly, gx) = (g / g_row, g % g_row);
        let y = (y0 + ly).wrapping_sub(R);
        let v = if y < rows {
            let x = (x0 + 4 * gx).wrapping_sub(halo(R));
            // SAFETY: row `y < rows` starts inside `input`; `load_group` reads only columns
            // below `cols` (ghosts 0); `x` is a multiple of 4 (aligned when `cols % 4 == 0`).
            unsafe { load_group(input.add(y * cols), x, cols, vector) }
        } else {
            [0.0; 4]
        };
        // SAFETY: `ly < 64 + 2R <= MAX_ROWS`, `gx < 24 < PITCH_G`; one writer per group.
        unsafe { store_shared_v4(base + (16 * (ly * PITCH_G + gx)) as u32, v) };
        g += WIDE_BLOCK as usize;
    }
    syncthreads();
    let (lane, warp) = (tid % 32, tid / 32);
    let (ry, cx) = (lane % 8 + 8 * (warp % 4), lane / 8 + 4 * (warp / 4));
    let x = x0 + 8 * cx;
    // Window element `e` of a stage row is column `8 cx + e`; output `j` takes mask column
    // `e - e0 - j`.
    let e0 = halo(R) - R;
    // Two passes, rows `ry` and `ry + 32`: a loop the compiler is told nothing about, so it
    // stays a loop and the written-out pass is in the code once.
    let mut pass = 0;
    while pass < opaque_usize(2) {
        let row = ry + 32 * pass;
        let read = base + (16 * (row * PITCH_G + 2 * cx)) as u32;
        let mut acc = [0.0f32; 8];
        unroll!(jy in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30] {
            if jy < w {
                unroll!(gi in [0 1 2 3 4 5 6 7 8 9] {
                    if 4 * gi <= e0 + 7 + 2 * R {
                        // SAFETY: stage row `row + jy < 64 + 2R`, groups `2 cx + gi < 24`,
                        // written before the barrier.
                        let v = unsafe {
                            load_shared_v4(read + (16 * (jy * PITCH_G + gi)) as u32)
                        };
                        unroll!(q in [0 1 2 3] {
                            let e = 4 * gi + q;
                            unroll!(j in [0 1 2 3 4 5 6 7] {
                                if e >= e0 + j && e - e0 - j < w {
                                    acc[j] = fmaf32(
                                        v[q],
                                        C_MASK_2D::read(jy * w + e - e0 - j),
                                        acc[j],
                                    );
                                }
                            });
                        });
                    }
                });
            }
        });
        let y = y0 + row;
        if y < rows {
            let at = y * cols + x;
            if cols.is_multiple_of(4)
                && (output as usize).is_multiple_of(16)
                && x < cols
                && cols - x >= 8
            {
                // SAFETY: columns `x ..+8 <= cols` of row `y < rows`; `cols % 4 == 0`, a
                // 16-byte aligned `output` and `x % 8 == 0`: both `float4`s are aligned.
                unsafe {
                    gpu_std::store_global_v4(output.add(at), [acc[0], acc[1], acc[2], acc[3]]);
                    gpu_std::store_global_v4(output.add(at + 4), [acc[4], acc[5], acc[6], acc[7]]);
                }
            } else {
                unroll!(j in [0 1 2 3 4 5 6 7] {
                    if x + j < cols {
                        // SAFETY: `y < rows`, `x + j < cols`; one writer per output.
                        unsafe { *output.add(at + j) = acc[j] };
                    }
                });
            }
        }
        pass += 1;
    }
}

macro_rules! wide_kernels {
    ($($name:ident $r:literal)*) => {$(
        /// The dense 2D convolution to call for this mask width (`2R + 1`, 11 to 31, mask in
        /// [`C_MASK_2D`]): 64 x 64 output tiles, the input tile plus halo staged with 16-byte
        /// loads, each thread 2 x 8 outputs (two passes of 8 consecutive outputs), every
        /// multiply-add an FFMA with the mask value as a constant-bank operand; see the shared
        /// body `wide::<R>`.
        ///
        /// Launch: blocks of [`WIDE_BLOCK`] threads (asserted); grid `ceil(cols / 64)` x
        /// `ceil(rows / 64)`; launch bounds 256 threads, 4 blocks per SM.
        ///
        /// # Safety
        /// `input` and `output` are valid for `rows * cols` floats and do not overlap; if
        /// `cols % 4 == 0`, `input` is 16-byte aligned (`output` takes `float4` stores only
        /// where it is 16-byte aligned).
        #[kernel(launch_bounds(256, 4))]
        pub unsafe fn $name(
            input: *const f32,
            output: *mut f32,
            mask_width: usize,
            rows: usize,
            cols: usize,
        ) {
            // SAFETY: forwarded.
            unsafe { wide::<$r>(input, output, mask_width, rows, cols) }
        }
    )*};
}

wide_kernels!(
    convolution_2d_wide_w11 5
    convolution_2d_wide_w13 6
    convolution_2d_wide_w15 7
    convolution_2d_wide_w17 8
    convolution_2d_wide_w19 9
    convolution_2d_wide_w21 10
    convolution_2d_wide_w23 11
    convolution_2d_wide_w25 12
    convolution_2d_wide_w27 13
    convolution_2d_wide_w29 14
    convolution_2d_wide_w31 15
);

/// The handle of a `convolution_2d_wide_w*` kernel (host build): `(input, output, mask_width,
/// rows, cols)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type WideKernel2d = gpu_std::host::Kernel<(*const f32, *mut f32, usize, usize, usize)>;

/// The `convolution_2d_wide_w*` kernels, indexed by `(w - 11) / 2` (host build).
#[cfg(not(target_arch = "nvptx64"))]
pub const CONVOLUTION_2D_WIDE_BY_WIDTH: [WideKernel2d;
    (MAX_MASK_WIDTH_2D - WIDE_MIN_WIDTH) / 2 + 1] = [
    convolution_2d_wide_w11,
    convolution_2d_wide_w13,
    convolution_2d_wide_w15,
    convolution_2d_wide_w17,
    convolution_2d_wide_w19,
    convolution_2d_wide_w21,
    convolution_2d_wide_w23,
    convolution_2d_wide_w25,
    convolution_2d_wide_w27,
    convolution_2d_wide_w29,
    convolution_2d_wide_w31,
];
