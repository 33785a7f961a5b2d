//! The 2D convolutions to call: the `convolution_2d_tiled_vec4_w*` family, one entry per mask
//! width, sharing one const-generic body (beyond the seed).

use core::intrinsics::fmaf32;

use super::common::{F4, load_group};
use super::{
    C_MASK_2D, MAX_MASK_WIDTH_2D, TILE_2D_X, TILE_2D_Y, VEC4_HALO_2D_X, VEC4_TILE_2D_X,
    VEC4_TILE_2D_Y,
};
use crate::device::{block_dim, block_idx, grid_dim, store_global_v4, syncthreads, thread_idx};

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

/// The radius from which the 2D vec4 body computes a 4 x 4 block of outputs per thread
/// directly (every mask row of every input row, no rolling window): for 9 x 9 it measured
/// 0.435 ms against 0.571 ms for the window at 8192 x 8192 on an H200 (the window spends half
/// its multiply-adds on rows outside the thread's 8), and slower for 7 x 7 (0.395 against
/// 0.341 ms), where the direct body's 161 registers leave one block per SM.
const DIRECT_RADIUS_2D: usize = 3;
/// `a * b + c` (`fma.rn.f32`) kept in program order: an `asm!` without `pure` is not moved
/// across another, so LLVM cannot interleave the multiply-adds of later input rows with
/// earlier ones, which kept every row of the 9 x 9 direct body live at once (255 registers).
#[inline(always)]
fn ordered_fma(a: f32, b: f32, c: f32) -> f32 {
    let d: f32;
    // SAFETY: arithmetic on registers only.
    unsafe {
        core::arch::asm!("fma.rn.f32 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a,
            b = in(reg32) b, c = in(reg32) c, options(nomem, nostack));
    }
    d
}

/// Rows of outputs per thread of the 2D vec4 kernels (rolling window).
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
/// From radius `DIRECT_RADIUS_2D` (9 x 9) the window is replaced by a direct 4 x 4 block per
/// thread (columns `4 cg ..+4`, rows `4 rg ..+4`, `cg = tid % 16`, `rg = tid / 16`): each of
/// its `4 + 2R` input rows is read once with three 16-byte shared loads and multiplied into
/// every output row that uses it, no multiply-add wasted; outputs go out as `float4` stores
/// when `cols % 4 == 0` and `output` is 16-byte aligned.
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
    assert!(mask_width == 2 * R + 1 && block_dim().x == TILE_2D_X && block_dim().y == TILE_2D_Y);
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
    // Rows of `cols % 4 == 0` floats from a 16-byte aligned `output` take `float4` stores.
    let vector_out = cols.is_multiple_of(4) && (output as usize).is_multiple_of(16);
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
        if R >= DIRECT_RADIUS_2D {
            // Thread `tid` computes the 4 x 4 outputs at tile rows `4 rg ..+4`, columns
            // `4 cg ..+4`: a half-warp covers one row of 64 columns, so its 16-byte stage reads
            // are 256 contiguous bytes (conflict-free).
            let (cg, rg) = (tid % 16, tid / 16);
            let mut acc = [[0.0f32; 4]; 4];
            // Input rows `4 rg + ii`, `ii < 4 + 2R`: each is read once (three 16-byte reads cover
            // stage columns `4 cg ..+12`, that is image columns `col0 + 4 cg - 4 ..+12`) and
            // multiplied into every output row that uses it, mask row `ii - r` for output row
            // `r`. Everything is written out (`unroll!`), so each register index and each mask
            // offset is a constant.
            unroll!(ii in [0 1 2 3 4 5 6 7 8 9 10 11] {
                if ii < 4 + 2 * R {
                    let group = (4 * rg + ii) * GROUPS_PER_ROW_2D + cg;
                    let mut v = [0.0f32; 12];
                    unroll!(q in [0 1 2] {
                        // Radius 0 needs only the middle group.
                        if R > 0 || q == 1 {
                            // SAFETY: staged before the barrier; `4 rg + ii < 64 + 2R` rows and
                            // `cg + q < 18` groups of the stage.
                            let f = unsafe { stage.read(group + q) }.0;
                            v[4 * q] = f[0];
                            v[4 * q + 1] = f[1];
                            v[4 * q + 2] = f[2];
                            v[4 * q + 3] = f[3];
                        }
                    });
                    unroll!(r in [0 1 2 3] {
                        if ii >= r && ii - r < w {
                            let m = (ii - r) * w;
                            unroll!(j in [0 1 2 3] {
                                unroll!(kx in [0 1 2 3 4 5 6 7 8] {
                                    if kx < w {
                                        acc[r][j] = ordered_fma(
                                            v[j + 4 - R + kx],
                                            C_MASK_2D::read(m + kx),
                                            acc[r][j],
                                        );
                                    }
                                });
                            });
                        }
                    });
                }
            });
            let x = col0 + 4 * cg;
            unroll!(r in [0 1 2 3] {
                let y = row0 + 4 * rg + r;
                if y < rows && x < cols {
                    // SAFETY (all three stores): `y < rows` and the columns written are below
                    // `cols`; `vector_out` means `cols % 4 == 0` and a 16-byte aligned `output`,
                    // so `x + 3 < cols` and the `float4` is aligned.
                    if vector_out {
                        unsafe { store_global_v4(output.add(y * cols + x), acc[r]) };
                    } else {
                        unroll!(j in [0 1 2 3] {
                            if x + j < cols {
                                unsafe { *output.add(y * cols + x + j) = acc[r][j] };
                            }
                        });
                    }
                }
            });
        } else {
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
                                    window[c][m] =
                                        fmaf32(v, C_MASK_2D::read((w - 1 - m) * w + jx), window[c][m]);
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
