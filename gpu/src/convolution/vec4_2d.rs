//! The 2D convolutions to call: the `convolution_2d_tiled_vec4_w*` family, one entry per mask
//! width, sharing one const-generic body (beyond the seed).

use super::common::{F4, load_group, ordered_fma, ordered_load};
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
/// the threads issue the loads of the next tile, and while they are in flight thread `tid`
/// computes the 4 x 4 outputs at tile columns `4 cg ..+4` and rows `4 rg ..+4`
/// (`cg = tid % 16`, `rg = tid / 16`: a half-warp covers one row of 64 columns). Each of
/// its `4 + 2R` input rows is read once, with three 16-byte shared loads (one for 1 x 1),
/// and multiplied into every output row that uses it (mask row `ii - r` for output row
/// `r`), with the mask value as an immediate constant-bank operand; no multiply-add is
/// spent outside the thread's outputs. Outputs go out as `float4` stores when
/// `cols % 4 == 0` and `output` is 16-byte aligned, one float at a time otherwise.
/// Shared reads per output: `3 (4 + 2R) / 16` 16-byte reads instead of `W^2` words.
///
/// The loads and multiply-adds are emitted in program order (`ordered_load`,
/// `ordered_fma`): left to LLVM, the rows were interleaved and every row of a 9 x 9 tile
/// was live at once (242 registers, one block per SM); in order the 9 x 9 body takes 80.
/// This body replaced a rolling window of accumulators (2 columns x 8 rows per thread) that
/// spent `2R / (8 + 2R)` of its multiply-adds on rows outside the thread's outputs: at
/// 8192 x 8192 on an H200, 0.571 -> 0.275 ms for 9 x 9, 0.341 -> 0.207 ms for 7 x 7,
/// 0.190 -> 0.142 ms for 5 x 5 (`docs/patterns/convolution.md`).
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
                        let f = unsafe { ordered_load(stage.shared_address() + 16 * (group + q) as u32) };
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
/// while one is computed; each thread computes a 4 x 4 block of outputs, reading each staged
/// input row it needs once.
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
