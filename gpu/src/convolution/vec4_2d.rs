//! The 2D convolutions to call: the `convolution_2d_tiled_vec4_w*` family, one entry per mask
//! width, sharing one const-generic body (beyond the seed).

use super::common::{F4, load_group, ordered_fma, ordered_load};
use super::{
    C_MASK_2D, MAX_MASK_WIDTH_2D_VEC4, TILE_2D_X, TILE_2D_Y, VEC4_HALO_2D_X, VEC4_TILE_2D_X,
    VEC4_TILE_2D_Y,
};
use gpu_std::kernel;
use gpu_std::{
    block_dim, block_idx, grid_dim, load_global_v4, store_global_v4, syncthreads, thread_idx,
};

/// Staged columns of the 2D vec4 tile (aligned halo on both sides).
const PITCH_2D: usize = VEC4_TILE_2D_X + 2 * VEC4_HALO_2D_X;
/// `float4` groups per staged row.
const GROUPS_PER_ROW_2D: usize = PITCH_2D / 4;
/// Staged rows for the widest mask.
const MAX_ROWS_2D: usize = VEC4_TILE_2D_Y + MAX_MASK_WIDTH_2D_VEC4 - 1;
/// Threads of a block.
const THREADS_2D: usize = (TILE_2D_X * TILE_2D_Y) as usize;
/// Staged rows one load slot covers in the row-strided staging: `14 x 18 = 252` of the 256
/// threads each take one group of a row, so slot `l` of thread `t` is staged row
/// `t / 18 + 14 l`, group `t % 18`.
const ROWS_PER_SLOT_2D: usize = THREADS_2D / GROUPS_PER_ROW_2D;
/// Threads that stage groups in the row-strided staging (the other 4 only compute).
const STAGING_THREADS_2D: usize = ROWS_PER_SLOT_2D * GROUPS_PER_ROW_2D;
/// The staging of radius `r`: row-strided with an interior fast path for the widths whose
/// multiply-adds bound the kernel (`r >= 3`, 7 x 7 and up); consecutive groups for the
/// memory-bound widths. The split was measured before the kernels had launch bounds: the
/// row-strided staging compiled 1 x 1 to 5 x 5 to 56 registers and 4 blocks per SM, where
/// they ran 5-8% slower than the consecutive staging at 3 (`docs/patterns/convolution.md`).
/// Row-strided staging for those widths at the 3 blocks per SM that the kernels' launch
/// bounds (`#[kernel(launch_bounds(256, 3))]`) now fix has not been measured.
const fn row_strided_2d(r: usize) -> bool {
    r >= 3
}
/// `float4` loads per thread for radius `r`: slots beyond it are never touched, so they
/// take no registers.
const fn loads_2d(r: usize) -> usize {
    let staged_rows = VEC4_TILE_2D_Y + 2 * r;
    if row_strided_2d(r) {
        staged_rows.div_ceil(ROWS_PER_SLOT_2D)
    } else {
        (staged_rows * GROUPS_PER_ROW_2D).div_ceil(THREADS_2D)
    }
}
/// `float4` loads per thread for the widest mask.
const LOADS_2D: usize = loads_2d(MAX_MASK_WIDTH_2D_VEC4 / 2);

/// Slot `l` of thread `tid` in the staging of radius `R`: its staged row, its group in the
/// row and its index in the stage; `None` if the slot is unused. Row-strided: row
/// `tid / 18 + 14 l`, group `tid % 18` (threads `tid >= 252` stage nothing); otherwise
/// consecutive groups: stage group `tid + 256 l`.
#[inline(always)]
fn slot_2d<const R: usize>(tid: usize, l: usize) -> Option<(usize, usize, usize)> {
    let staged_rows = VEC4_TILE_2D_Y + 2 * R;
    if l >= loads_2d(R) {
        return None;
    }
    let (ly, gx, g) = if row_strided_2d(R) {
        if tid >= STAGING_THREADS_2D {
            return None;
        }
        let ly = tid / GROUPS_PER_ROW_2D + l * ROWS_PER_SLOT_2D;
        (ly, tid % GROUPS_PER_ROW_2D, tid + l * STAGING_THREADS_2D)
    } else {
        let g = tid + l * THREADS_2D;
        (g / GROUPS_PER_ROW_2D, g % GROUPS_PER_ROW_2D, g)
    };
    (ly < staged_rows).then_some((ly, gx, g))
}

/// Loads into `v` the `float4` groups thread `tid` stages for the tile whose first output is
/// `(row0, col0)`: the groups of its slots (`slot_2d`) of the `(64 + 2R) x 18` staged groups,
/// ghosts as 0. Slots that are not used are left as they are (they are never staged), so
/// the interior path spends no instructions on them.
///
/// With the row-strided staging, a tile whose staged rows and columns are all inside the
/// image (`interior`) takes one unchecked `ld.global.v4` per slot, `14 l` rows from the
/// thread's first, instead of about 60 instructions of bounds checks and 64-bit index
/// arithmetic per group.
///
/// # Safety
/// `input` is valid for `rows * cols` floats, and 16-byte aligned if `cols % 4 == 0` (the
/// only case in which it loads `float4`s); `tid < 256`.
#[inline(always)]
unsafe fn load_tile_2d<const R: usize>(
    input: *const f32,
    rows: u32,
    cols: u32,
    (row0, col0): (u32, u32),
    tid: usize,
    v: &mut [[f32; 4]; LOADS_2D],
) {
    const HALO: u32 = VEC4_HALO_2D_X as u32;
    const TILE_X: u32 = VEC4_TILE_2D_X as u32;
    const TILE_Y: u32 = VEC4_TILE_2D_Y as u32;
    let r = R as u32;
    const _: () = assert!(LOADS_2D <= 6);
    let vector = cols.is_multiple_of(4);
    if row_strided_2d(R) && tid >= STAGING_THREADS_2D {
        return;
    }
    let interior = row_strided_2d(R)
        && vector
        && row0 >= r
        && rows - row0 >= TILE_Y + r
        && col0 >= HALO
        && cols - col0 >= TILE_X + HALO;
    if interior {
        let (ly0, gx) = (
            (tid / GROUPS_PER_ROW_2D) as u32,
            (tid % GROUPS_PER_ROW_2D) as u32,
        );
        let cols = cols as usize;
        // SAFETY: `row0 >= R`, `col0 >= 4` and the staged rows and columns are inside the
        // image, so this thread's first staged float, image row `row0 - R + ly0`, column
        // `col0 - 4 + 4 gx`, is inside `input`.
        let first = unsafe {
            input.add((row0 - r + ly0) as usize * cols + (col0 - HALO + 4 * gx) as usize)
        };
        unroll!(l in [0 1 2 3 4 5] {
            if slot_2d::<R>(tid, l).is_some() {
                // SAFETY: staged row `ly0 + 14 l < 64 + 2R` is image row
                // `row0 - R + ly0 + 14 l < rows`, its columns `4 gx ..+4 < 72` image columns
                // below `cols`; `cols % 4 == 0` and `col0 - 4 + 4 gx` is a multiple of 4, so
                // the address is 16-byte aligned (`input` is, by the caller's guarantee).
                v[l] = unsafe { load_global_v4(first.add(l * ROWS_PER_SLOT_2D * cols)) };
            }
        });
        return;
    }
    unroll!(l in [0 1 2 3 4 5] {
        if let Some((ly, gx, _)) = slot_2d::<R>(tid, l) {
            let yy = (row0 + ly as u32).wrapping_sub(r);
            v[l] = if yy < rows {
                let xx = (col0 + 4 * gx as u32).wrapping_sub(HALO);
                // SAFETY: row `yy` holds `cols` floats from `yy * cols`; with `vector`,
                // `cols % 4 == 0` and `xx % 4 == 0`, so the start is 16-byte aligned.
                unsafe {
                    load_group(
                        input.add(yy as usize * cols as usize),
                        xx as usize,
                        cols as usize,
                        vector,
                    )
                }
            } else {
                [0.0; 4]
            };
        }
    });
}

/// The body of the `convolution_2d_tiled_vec4_w*` kernels, for radius `R` (mask width
/// `W = 2R + 1`), a compile-time constant so that every loop over the mask unrolls and every
/// mask read is an immediate constant-bank operand.
///
/// Algorithm: a grid-stride loop over 64 x 64 output tiles, row-major over the image (the
/// walk kept as 32-bit tile coordinates, one division per block; addresses are 64-bit). For
/// each tile the block's 256 threads hold in registers the `(64 + 2R) x 72` input tile (64 columns plus a 4-column
/// aligned halo each side) as `float4` groups loaded with `ld.global.v4` (ghosts as 0;
/// images whose width is not a multiple of 4 fall back to scalar loads; `load_tile_2d`,
/// with an unchecked path for interior tiles from 7 x 7 up). After a barrier the groups go
/// to the shared stage with 16-byte stores; the threads issue the loads of the next tile,
/// and while they are in flight thread `tid`
/// computes the 4 x 4 outputs at tile columns `4 cg ..+4` and rows `4 rg ..+4`
/// (`cg = tid % 16`, `rg = tid / 16`: a half-warp covers one row of 64 columns). Each of
/// its `4 + 2R` input rows is read once, with three 16-byte shared loads (one for 1 x 1),
/// and multiplied into every output row that uses it (mask row `ii - r` for output row
/// `r`), with the mask value as an immediate constant-bank operand; no multiply-add is
/// spent outside the thread's outputs. Outputs go out as `float4` stores when
/// `cols % 4 == 0` and `output` is 16-byte aligned (unchecked for a whole tile), one float at
/// a time otherwise.
/// Shared reads per output: `3 (4 + 2R) / 16` 16-byte reads instead of `W^2` words.
///
/// The loads and multiply-adds are emitted in program order (`ordered_load`,
/// `ordered_fma`): left to LLVM, the rows were interleaved and every row of a 9 x 9 tile
/// was live at once (242 registers, one block per SM); in order the 9 x 9 body takes 80.
/// This body replaced a rolling window of accumulators (2 columns x 8 rows per thread) that
/// spent `2R / (8 + 2R)` of its multiply-adds on rows outside the thread's outputs: at
/// 8192 x 8192 on an H200, 0.571 -> 0.275 ms for 9 x 9, 0.341 -> 0.207 ms for 7 x 7,
/// 0.190 -> 0.142 ms for 5 x 5 (`docs/patterns/convolution.md`). The interior paths (loads
/// from 7 x 7, stores at every width) and unchecked stage writes then took 7 x 7 from 0.189 to
/// 0.165 ms and 9 x 9 from 0.271 to 0.233 ms: about 200 of the 9 x 9 body's 1770 instructions
/// per warp and tile had been bounds checks and 64-bit index arithmetic of the staging.
/// 32-bit tile coordinates (the tile walk, the interior checks, the store addresses' row
/// and column) and launch bounds of 3 blocks per SM then took 7 x 7 to 0.157 ms and 9 x 9
/// to 0.222 ms in a same-run A/B.
///
/// # Safety
/// `input` and `output` are valid for `rows * cols` floats, do not overlap, `input` is
/// 16-byte aligned if `cols % 4 == 0`; `rows, cols <= VEC4_MAX_SIDE_2D`; block 32 x 8
/// (asserted).
#[inline(always)]
unsafe fn convolution_2d_tiled_vec4<const R: usize>(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
) {
    const TX: usize = TILE_2D_X as usize;
    const TILE_X: u32 = VEC4_TILE_2D_X as u32;
    const TILE_Y: u32 = VEC4_TILE_2D_Y as u32;
    assert!(mask_width == 2 * R + 1 && block_dim().x == TILE_2D_X && block_dim().y == TILE_2D_Y);
    // SAFETY: both sides are at most `VEC4_MAX_SIDE_2D` (the caller's contract), so every
    // coordinate below, up to a side plus a tile, fits in 32 bits.
    unsafe {
        core::hint::assert_unchecked(
            rows <= super::VEC4_MAX_SIDE_2D && cols <= super::VEC4_MAX_SIDE_2D,
        )
    };
    let (rows, cols) = (rows as u32, cols as u32);
    let w = 2 * R + 1;
    let stage = gpu_std::static_shared!(
        s_convolution_2d_tiled_vec4: [F4; MAX_ROWS_2D * GROUPS_PER_ROW_2D]
    );
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let tid = ty * TX + tx;
    // SAFETY: the block is 32 x 8 (asserted above).
    unsafe { core::hint::assert_unchecked(tid < THREADS_2D) };
    let tiles_x = cols.div_ceil(TILE_X);
    let tiles_y = rows.div_ceil(TILE_Y);
    // The grid-stride walk over tiles, row-major, as tile coordinates: one division at the
    // start, then a step of `stride` tiles is `stride / tiles_x` tile rows and
    // `stride % tiles_x` tile columns, with a carry.
    let stride = grid_dim().x;
    let (stride_y, stride_x) = (stride / tiles_x, stride % tiles_x);
    let block = block_idx().x;
    let mut tile = (block / tiles_x, block % tiles_x);
    let step = |(y, x): (u32, u32)| {
        let x = x + stride_x;
        if x >= tiles_x {
            (y + stride_y + 1, x - tiles_x)
        } else {
            (y + stride_y, x)
        }
    };
    let origin = |(y, x): (u32, u32)| (y * TILE_Y, x * TILE_X);
    // Rows of `cols % 4 == 0` floats from a 16-byte aligned `output` take `float4` stores.
    let vector_out = cols.is_multiple_of(4) && (output as usize).is_multiple_of(16);
    let row_pitch = cols as usize;
    if tile.0 >= tiles_y {
        return;
    }
    // SAFETY: `input` is valid, and aligned if `cols % 4 == 0` (caller); `tid < 256`.
    let mut regs = [[0.0f32; 4]; LOADS_2D];
    unsafe { load_tile_2d::<R>(input, rows, cols, origin(tile), tid, &mut regs) };
    loop {
        unroll!(l in [0 1 2 3 4 5] {
            if let Some((_, _, g)) = slot_2d::<R>(tid, l) {
                // SAFETY: `g < (64 + 2R) x 18`, inside the stage; stage group `g` has this
                // one writer; the previous tile's reads ended at the barrier at the bottom of
                // the loop.
                unsafe { stage.write_unchecked(g, F4(regs[l])) };
            }
        });
        syncthreads();
        let next = step(tile);
        if next.0 < tiles_y {
            // SAFETY: as above.
            unsafe { load_tile_2d::<R>(input, rows, cols, origin(next), tid, &mut regs) };
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
        let x = col0 + 4 * cg as u32;
        if vector_out && rows - row0 >= TILE_Y && cols - col0 >= TILE_X {
            // A whole tile: four unchecked `float4` stores, a row of `cols` floats apart.
            // SAFETY: rows `row0 + 4 rg ..+4 < rows` and columns `x ..+4 <= col0 + 64 <= cols`;
            // `vector_out` means `cols % 4 == 0` and a 16-byte aligned `output`, and `x` is a
            // multiple of 4, so each `float4` is aligned.
            let first =
                unsafe { output.add((row0 + 4 * rg as u32) as usize * row_pitch + x as usize) };
            unroll!(r in [0 1 2 3] {
                // SAFETY: as above.
                unsafe { store_global_v4(first.add(r * row_pitch), acc[r]) };
            });
        } else {
            unroll!(r in [0 1 2 3] {
                let y = row0 + (4 * rg + r) as u32;
                if y < rows && x < cols {
                    let at = y as usize * row_pitch + x as usize;
                    // SAFETY (both stores): `y < rows` and the columns written are below
                    // `cols`; `vector_out` means `cols % 4 == 0` and a 16-byte aligned
                    // `output`, so `x + 3 < cols` and the `float4` is aligned.
                    if vector_out {
                        unsafe { store_global_v4(output.add(at), acc[r]) };
                    } else {
                        unroll!(j in [0 1 2 3] {
                            if x + (j as u32) < cols {
                                unsafe { *output.add(at + j) = acc[r][j] };
                            }
                        });
                    }
                }
            });
        }
        if next.0 >= tiles_y {
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
#[kernel(launch_bounds(256, 3))]
pub unsafe fn convolution_2d_tiled_vec4_w1(
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
#[kernel(launch_bounds(256, 3))]
pub unsafe fn convolution_2d_tiled_vec4_w3(
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
/// Launch: block [`TILE_2D_X`] x [`TILE_2D_Y`] (asserted); launch bounds 256 threads and
/// 3 blocks per SM (`#[kernel(launch_bounds(256, 3))]` on every width: at most 85 registers,
/// measured faster than four blocks of 64 registers at every width on an H200,
/// `docs/patterns/convolution.md`); a one-dimensional grid
/// of any size (the host uses one wave of resident blocks, at most one per tile);
/// [`C_MASK_2D`] holds the mask; `mask_width` must be this kernel's (asserted).
///
/// Parameters: `input`, `output`: row-major `rows x cols` floats, any shape with both sides
/// at most [`VEC4_MAX_SIDE_2D`](super::VEC4_MAX_SIDE_2D) (16-byte loads when `cols % 4 == 0`,
/// scalar loads otherwise).
///
/// # Safety
/// `input` and `output` are valid for `rows * cols` floats and do not overlap; `rows` and
/// `cols` are at most [`VEC4_MAX_SIDE_2D`](super::VEC4_MAX_SIDE_2D); if `cols % 4 == 0`,
/// `input` is 16-byte aligned (device allocations are; rows of other widths are loaded
/// element by element). `output` takes `float4` stores only where it is 16-byte aligned and
/// needs no more than `f32` alignment.
///
/// Performance: `72 (64 + 2R)` loads of `N` per 4096 outputs: ratio
/// `4096 w^2 / (72 (64 + 2R))`, 20.9 for 5 x 5; 8 bytes of DRAM traffic per output.
#[kernel(launch_bounds(256, 3))]
pub unsafe fn convolution_2d_tiled_vec4_w5(
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
#[kernel(launch_bounds(256, 3))]
pub unsafe fn convolution_2d_tiled_vec4_w7(
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
#[kernel(launch_bounds(256, 3))]
pub unsafe fn convolution_2d_tiled_vec4_w9(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
) {
    // SAFETY: forwarded.
    unsafe { convolution_2d_tiled_vec4::<4>(input, output, mask_width, rows, cols) }
}

/// The handle of a `convolution_2d_tiled_vec4_w*` kernel (host build): `(input, output,
/// mask_width, rows, cols)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type Vec4Kernel2d = gpu_std::host::Kernel<(*const f32, *mut f32, usize, usize, usize)>;

/// The `convolution_2d_tiled_vec4_w*` kernels, indexed by the mask radius `w / 2` (host build:
/// the launcher picks the entry compiled for its mask's width).
#[cfg(not(target_arch = "nvptx64"))]
pub const CONVOLUTION_2D_TILED_VEC4_BY_RADIUS: [Vec4Kernel2d; MAX_MASK_WIDTH_2D_VEC4 / 2 + 1] = [
    convolution_2d_tiled_vec4_w1,
    convolution_2d_tiled_vec4_w3,
    convolution_2d_tiled_vec4_w5,
    convolution_2d_tiled_vec4_w7,
    convolution_2d_tiled_vec4_w9,
];
