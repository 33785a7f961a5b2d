//! Separable 2D convolutions, `M[jy][jx] = col[jy] row[jx]`: a row pass along x with
//! [`C_MASK_ROW`] then a column pass along y with [`C_MASK_COL`], `2w` multiply-adds per
//! output instead of `w^2`.
//!
//! - `convolution_2d_separable_fused_w{3,5,...,31}`: the one to call, one kernel, one read and
//!   one write of the image (the row pass goes to shared memory, never to DRAM);
//! - [`convolution_2d_separable_rows`] and [`convolution_2d_separable_cols`]: NVIDIA's CUDA
//!   sample `convolutionSeparable` (rows kernel, then columns kernel, through a temporary
//!   image), with a runtime width and ghost cells: the seed-style comparison.

use super::common::{
    F4, load_group, load_shared_f32, load_shared_v4, ordered_fma, ordered_load, store_shared_v4,
};
use super::{C_MASK_COL, C_MASK_ROW, MAX_MASK_WIDTH_2D};
use gpu_std::math::fmaf32;
use gpu_std::{block_dim, block_idx, syncthreads, thread_idx};
use gpu_std::{kernel, load_global_v4};

/// Output columns of a strip of the fused kernels (one block's width).
pub const SEPARABLE_TILE_X: usize = 64;
/// Output rows of one step of the fused kernels' walk down their segment.
pub const SEPARABLE_CHUNK_Y: usize = 32;
/// Threads per block of the fused kernels (one-dimensional blocks).
pub const SEPARABLE_BLOCK: u32 = 256;
/// Largest segment (rows one block walks down) the host asks of the fused kernels; the host
/// picks a multiple of [`SEPARABLE_CHUNK_Y`] between 64 and this for enough blocks.
pub const SEPARABLE_MAX_SEGMENT: usize = 1024;
/// Largest number of rows or columns the fused kernels take (2^31): their coordinates are
/// 32-bit. The launchers reject larger images.
pub const SEPARABLE_MAX_SIDE: usize = 1 << 31;

/// Halo columns staged on each side of the strip: the largest radius rounded up to a
/// `float4`.
const HALO_MAX: usize = (MAX_MASK_WIDTH_2D / 2).div_ceil(4) * 4;
/// `float4` groups per staged input row (64 + 2 x 16 columns = 24 groups, padded to an odd
/// count so that 8 threads reading the same group of 8 different rows hit 8 different bank
/// quads: the row pass's 16-byte reads are conflict-free).
const IN_PITCH_G: usize = (SEPARABLE_TILE_X + 2 * HALO_MAX) / 4 + 1;
/// Floats per row of the row-pass buffer (64 columns, padded to an odd number of `float4`s
/// for the row pass's conflict-free 16-byte stores).
const MID_PITCH: usize = SEPARABLE_TILE_X + 4;
/// Rows of the row-pass buffer: one chunk plus the column pass's halo rows.
const MID_ROWS: usize = SEPARABLE_CHUNK_Y + MAX_MASK_WIDTH_2D - 1;

/// Halo columns staged each side for radius `r`: `r` rounded up to a whole `float4`.
const fn halo(r: usize) -> usize {
    r.div_ceil(4) * 4
}
/// `float4` groups per staged row for radius `r`.
const fn groups_per_row(r: usize) -> usize {
    (SEPARABLE_TILE_X + 2 * halo(r)) / 4
}
/// `float4` loads per thread and chunk for radius `r` (at most 3).
const fn loads(r: usize) -> usize {
    (SEPARABLE_CHUNK_Y * groups_per_row(r)).div_ceil(SEPARABLE_BLOCK as usize)
}

/// Loads into `regs` the groups thread `tid` stages for the input rows `y0 .. y0 + n` (`n <=
/// 32`; `y0` may have wrapped below 0: those rows are ghosts) of the strip whose first output
/// column is `x0`: group `g = tid + 256 l` is staged row `g / G`, group `g % G` (`G` groups a
/// row). Groups past the chunk are not loaded.
///
/// # Safety
/// `input` is valid for `rows * cols` floats, 16-byte aligned if `cols % 4 == 0`.
#[inline(always)]
unsafe fn load_chunk<const R: usize>(
    input: *const f32,
    (rows, cols): (u32, u32),
    (y0, n, x0): (u32, u32, u32),
    tid: u32,
    regs: &mut [[f32; 4]; 3],
) {
    let g_row = groups_per_row(R) as u32;
    let vector = cols.is_multiple_of(4);
    // The same for the whole block: a whole chunk of rows inside the image (a wrapped `y0` is
    // above `rows`).
    let interior = n == SEPARABLE_CHUNK_Y as u32 && y0 <= rows && rows - y0 >= n;
    unroll!(l in [0 1 2] {
        if l < loads(R) {
            let g = tid + (l as u32) * SEPARABLE_BLOCK;
            let (ly, gx) = (g / g_row, g % g_row);
            let y = y0.wrapping_add(ly);
            let x = (x0 + 4 * gx).wrapping_sub(halo(R) as u32);
            if interior && vector && x < cols && cols - x >= 4 {
                // The common case: the group is inside the image, one 16-byte load and no
                // tests but the thread's own `ly < 32` (the same for every chunk).
                if ly < n {
                    // SAFETY: row `y < y0 + n <= rows` and columns `x ..+4 <= cols` lie
                    // inside `input`, 16-byte aligned (`cols % 4 == 0`, `x % 4 == 0`).
                    regs[l] = unsafe {
                        load_global_v4(input.add(y as usize * cols as usize + x as usize))
                    };
                }
            } else if ly < n {
                regs[l] = if y < rows {
                    // SAFETY: row `y < rows` starts inside `input`; `load_group` reads only
                    // the columns below `cols` (ghosts read 0; a column "below 0" wraps to at
                    // least 2^32 - 16 > `cols`, a ghost too); `x` is a multiple of 4, so with
                    // `cols % 4 == 0` the row and the group are 16-byte aligned.
                    unsafe {
                        load_group(
                            input.add(y as usize * cols as usize),
                            x as usize,
                            cols as usize,
                            vector,
                        )
                    }
                } else {
                    [0.0; 4]
                };
            }
        }
    });
}

/// The body of the `convolution_2d_separable_fused_w*` kernels for radius `R` (`W = 2R + 1`,
/// a compile-time constant: every tap loop is written out and every mask read is a
/// constant-bank operand).
///
/// Algorithm: block `(bx, by)` owns the strip of 64 output columns at `x0 = 64 bx` and the
/// segment of `segment` rows at `y_start = segment * by`, which it walks down in chunks of 32
/// rows, keeping in shared memory `mid`, the row pass of the `32 + 2R` rows the current chunk's
/// column pass needs. Per chunk:
/// 1. the 32 new input rows (`64 + 2H` columns, `H` = `R` rounded up to 4, ghosts as 0), loaded
///    with `ld.global.v4` into registers during the previous chunk (an untested load per group
///    when the whole chunk lies inside the image), go to the input stage with 16-byte shared
///    stores; barrier; the next chunk's loads are issued;
/// 2. row pass: thread `(ry, cx)` (`ry = lane % 8 + 8 (warp % 4)`, `cx = lane / 8 + 4 (warp /
///    4)`) computes the 8 row-pass values at columns `8 cx ..+8` of stage row `ry`, reading its
///    window of `8 + 2R` inputs once with `(8 + H + R) / 4` 16-byte loads (the 8 lanes of a
///    quarter-warp read 8 rows of an odd pitch: no bank conflicts) and `8 W` multiply-adds, and
///    stores them to `mid` row `2R + ry` with two 16-byte stores; barrier;
/// 3. column pass: thread `(c, s)` (`c = tid % 64`, `s = tid / 64`) computes the 8 outputs of
///    column `x0 + c`, rows `Y + 8 s ..+8`, from the `8 + 2R` values of `mid` rows `8 s ..`
///    (`ld.shared.f32` at constant offsets from one address; a warp reads 32 consecutive
///    floats), `8 W` multiply-adds kept in program order (`ordered_fma`: one value of the
///    window live at a time, 64 registers at every width), and stores them with one test for
///    the 8 rows (a warp writes 128 contiguous bytes a row); barrier;
/// 4. `mid` rows `32 .. 32 + 2R` move to rows `0 .. 2R` (the next chunk's upper halo).
///
/// Before the first chunk the `2R` rows above the segment go through the row pass into `mid`
/// rows `0 .. 2R`. So each input row is loaded and row-filtered once per segment (plus `2R`
/// rows per segment), each output written once.
///
/// # Safety
/// `input` and `output` are valid for `rows * cols` floats and do not overlap; `input` is
/// 16-byte aligned if `cols % 4 == 0`; `rows`, `cols` and `segment` are at most
/// [`SEPARABLE_MAX_SIDE`]; `segment` is a positive multiple of 32; blocks of 256
/// threads (asserted); the grid covers `ceil(cols / 64)` x `ceil(rows / segment)`.
#[inline(always)]
unsafe fn separable_fused<const R: usize>(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
    segment: usize,
) {
    const CH: u32 = SEPARABLE_CHUNK_Y as u32;
    const BLOCK: u32 = SEPARABLE_BLOCK;
    const TILE_X: u32 = SEPARABLE_TILE_X as u32;
    const IN_PITCH: u32 = IN_PITCH_G as u32;
    const PITCH: u32 = MID_PITCH as u32;
    assert!(
        mask_width == 2 * R + 1
            && block_dim().x == SEPARABLE_BLOCK
            && block_dim().y == 1
            && segment > 0
            && segment.is_multiple_of(SEPARABLE_CHUNK_Y)
    );
    // SAFETY: the caller's contract: both sides and the segment are at most 2^31, so every
    // coordinate below (up to a side plus a segment) fits in 32 bits.
    unsafe {
        core::hint::assert_unchecked(
            rows <= SEPARABLE_MAX_SIDE
                && cols <= SEPARABLE_MAX_SIDE
                && segment <= SEPARABLE_MAX_SIDE,
        )
    };
    let (rows, cols, segment) = (rows as u32, cols as u32, segment as u32);
    let r = R as u32;
    let w = 2 * R + 1;
    let stage = gpu_std::static_shared!(
        s_convolution_2d_separable_fused_in: [F4; SEPARABLE_CHUNK_Y * IN_PITCH_G]
    );
    let mid = gpu_std::static_shared!(
        s_convolution_2d_separable_fused_mid: [F4; MID_ROWS * MID_PITCH / 4]
    );
    let tid = thread_idx().x;
    // SAFETY: blocks of 256 threads (asserted).
    unsafe { core::hint::assert_unchecked(tid < BLOCK) };
    let x0 = block_idx().x * TILE_X;
    let y_start = block_idx().y * segment;
    if x0 >= cols || y_start >= rows {
        return;
    }
    let y_end = if rows - y_start > segment {
        y_start + segment
    } else {
        rows
    };
    let out_chunks = (y_end - y_start).div_ceil(CH);
    let (lane, warp) = (tid % 32, tid / 32);
    // Row pass: stage row `ry`, output columns `8 cx ..+8`.
    let (ry, cx) = (lane % 8 + 8 * (warp % 4), lane / 8 + 4 * (warp / 4));
    // Column pass: column `cc`, rows `8 cs ..+8` of the chunk.
    let (cc, cs) = (tid % TILE_X, tid / TILE_X);
    let stage_base = stage.shared_address();
    let mid_base = mid.shared_address();
    let row_read = stage_base + 16 * (ry * IN_PITCH + 2 * cx);
    let col_read = mid_base + 4 * (8 * cs * PITCH + cc);
    let col_out = x0 + cc;

    // Chunk `k` of the row pass: input rows from `first_row(k)`, `chunk_rows(k)` of them,
    // written to `mid` rows from 0 (chunk 0) or `2R`. Chunk 0 is the `2R` rows above the
    // segment; chunk `k >= 1` the 32 rows from `R` below output chunk `k - 1`'s first.
    let first_row = |k: u32| {
        if k == 0 {
            y_start.wrapping_sub(r)
        } else {
            y_start + r + CH * (k - 1)
        }
    };
    let chunk_rows = |k: u32| {
        if k == 0 {
            2 * r
        } else {
            // Rows past `y_end + R` feed no output of this segment.
            CH.min(y_end + r - first_row(k))
        }
    };
    let mut regs = [[0.0f32; 4]; 3];
    // SAFETY: `input` is valid and aligned when `cols % 4 == 0` (caller).
    unsafe {
        load_chunk::<R>(
            input,
            (rows, cols),
            (first_row(0), chunk_rows(0), x0),
            tid,
            &mut regs,
        )
    };
    let g_row = groups_per_row(R) as u32;
    let mut k = 0;
    loop {
        let n = chunk_rows(k);
        unroll!(l in [0 1 2] {
            if l < loads(R) {
                let g = tid + (l as u32) * BLOCK;
                let (ly, gx) = (g / g_row, g % g_row);
                if ly < n {
                    // SAFETY: `ly < 32`, `gx < 24 < IN_PITCH_G`: inside the stage; one writer
                    // per group; the previous chunk's row pass read the stage before the
                    // barrier that followed it.
                    unsafe { store_shared_v4(stage_base + 16 * (ly * IN_PITCH + gx), regs[l]) };
                }
            }
        });
        syncthreads();
        if k < out_chunks {
            // SAFETY: as above.
            unsafe {
                load_chunk::<R>(
                    input,
                    (rows, cols),
                    (first_row(k + 1), chunk_rows(k + 1), x0),
                    tid,
                    &mut regs,
                )
            };
        }
        // Row pass.
        if ry < n {
            let mut acc = [0.0f32; 8];
            // The window's elements are stage columns `8 cx + e`, `e` from `H - R`; output `j`
            // takes tap `e - (H - R) - j`.
            let e0 = halo(R) - R;
            unroll!(gi in [0 1 2 3 4 5 6 7 8 9] {
                if 4 * gi <= e0 + 7 + 2 * R {
                    // SAFETY: stage row `ry < 32`, groups `2 cx + gi < 24`, written before the
                    // barrier.
                    let v = unsafe { ordered_load(row_read + (16 * gi) as u32) };
                    unroll!(q in [0 1 2 3] {
                        let e = 4 * gi + q;
                        unroll!(j in [0 1 2 3 4 5 6 7] {
                            if e >= e0 + j && e - e0 - j < w {
                                acc[j] = fmaf32(v[q], C_MASK_ROW::read(e - e0 - j), acc[j]);
                            }
                        });
                    });
                }
            });
            let m = if k == 0 { ry } else { 2 * r + ry };
            let at = mid_base + 4 * (m * PITCH + 8 * cx);
            // SAFETY: `mid` row `m < 32 + 2R`, columns `8 cx ..+8 < 64`; one writer; the
            // column pass and the halo move that read these rows ended at earlier barriers.
            unsafe {
                store_shared_v4(at, [acc[0], acc[1], acc[2], acc[3]]);
                store_shared_v4(at + 16, [acc[4], acc[5], acc[6], acc[7]]);
            }
        }
        syncthreads();
        if k >= 1 {
            // Column pass of output chunk `k - 1`.
            let y0 = y_start + CH * (k - 1) + 8 * cs;
            let mut acc = [0.0f32; 8];
            unroll!(t in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37] {
                if t < 8 + 2 * R {
                    // SAFETY: `mid` row `8 cs + t < 32 + 2R`, written before the barrier.
                    let v = unsafe { load_shared_f32(col_read + (4 * t * MID_PITCH) as u32) };
                    unroll!(i in [0 1 2 3 4 5 6 7] {
                        if t >= i && t - i < w {
                            acc[i] = ordered_fma(v, C_MASK_COL::read(t - i), acc[i]);
                        }
                    });
                }
            });
            if col_out < cols {
                // Row `y0` may lie past the image (the last chunk's rows below `y_end` are not
                // stored): a wrapping address, dereferenced only below.
                let out = output.wrapping_add(y0 as usize * cols as usize + col_out as usize);
                // One test for the whole group in the common case: a test per output lets
                // LLVM sink each output's multiply-adds into its own branch, one serial chain
                // of `W` at a time behind a branch (w31: 728 instructions a warp per chunk
                // for 496 multiply-adds).
                if y0 + 8 <= y_end {
                    unroll!(i in [0 1 2 3 4 5 6 7] {
                        // SAFETY: row `y0 + i < y_end <= rows`, column `col_out < cols`:
                        // inside `output`; each output has one writer.
                        unsafe { *out.add(i * cols as usize) = acc[i] };
                    });
                } else {
                    unroll!(i in [0 1 2 3 4 5 6 7] {
                        if y0 + (i as u32) < y_end {
                            // SAFETY: as above, row `y0 + i < y_end`.
                            unsafe { *out.add(i * cols as usize) = acc[i] };
                        }
                    });
                }
            }
        }
        if k >= out_chunks {
            break;
        }
        if k >= 1 && R > 0 {
            // The next chunk's upper halo: `mid` rows `32 ..32 + 2R` to rows `0 .. 2R`.
            syncthreads();
            unroll!(l in [0 1] {
                let g = tid + (l as u32) * BLOCK;
                if g < 2 * r * TILE_X / 4 {
                    let (row, gx) = (g / (TILE_X / 4), g % (TILE_X / 4));
                    let from = mid_base + 4 * ((CH + row) * PITCH + 4 * gx);
                    let to = mid_base + 4 * (row * PITCH + 4 * gx);
                    // SAFETY: rows `32 + row < 32 + 2R` and `row < 2R`, disjoint (`2R < 32`);
                    // one writer per group; every read of rows `0 .. 2R` (the column pass)
                    // ended at the barrier above, and the next writes of rows `32 ..` (the
                    // row pass) follow the next barrier.
                    unsafe { store_shared_v4(to, load_shared_v4(from)) };
                }
            });
        }
        k += 1;
    }
}

macro_rules! fused_kernels {
    ($($name:ident $r:literal)*) => {$(
        /// The separable 2D convolution to call for this mask width (`2R + 1` columns and rows,
        /// the factors in [`C_MASK_ROW`] and [`C_MASK_COL`]): one read and one write of the
        /// image.
        ///
        /// Algorithm: 64-column strips walked down in chunks of 32 rows; per chunk the new
        /// input rows staged with 16-byte loads, the row pass into shared memory (8 outputs a
        /// thread from one register window), then the column pass (8 outputs a thread, a
        /// column each), the next chunk's loads in flight meanwhile; see the shared body
        /// `separable_fused::<R>`.
        ///
        /// Launch: blocks of [`SEPARABLE_BLOCK`] threads (asserted); grid `ceil(cols / 64)` x
        /// `ceil(rows / segment)`, `segment` a positive multiple of 32 (asserted); launch
        /// bounds 256 threads and 4 blocks per SM (64 registers, no spills at any width: the
        /// column pass's multiply-adds are kept in program order, so its window is not all
        /// live at once).
        ///
        /// # Safety
        /// `input` and `output` are valid for `rows * cols` floats and do not overlap; if
        /// `cols % 4 == 0`, `input` is 16-byte aligned.
        #[kernel(launch_bounds(256, 4))]
        pub unsafe fn $name(
            input: *const f32,
            output: *mut f32,
            mask_width: usize,
            rows: usize,
            cols: usize,
            segment: usize,
        ) {
            // SAFETY: forwarded.
            unsafe { separable_fused::<$r>(input, output, mask_width, rows, cols, segment) }
        }
    )*};
}

fused_kernels!(
    convolution_2d_separable_fused_w3 1
    convolution_2d_separable_fused_w5 2
    convolution_2d_separable_fused_w7 3
    convolution_2d_separable_fused_w9 4
    convolution_2d_separable_fused_w11 5
    convolution_2d_separable_fused_w13 6
    convolution_2d_separable_fused_w15 7
    convolution_2d_separable_fused_w17 8
    convolution_2d_separable_fused_w19 9
    convolution_2d_separable_fused_w21 10
    convolution_2d_separable_fused_w23 11
    convolution_2d_separable_fused_w25 12
    convolution_2d_separable_fused_w27 13
    convolution_2d_separable_fused_w29 14
    convolution_2d_separable_fused_w31 15
);

/// The handle of a `convolution_2d_separable_fused_w*` kernel (host build): `(input, output,
/// mask_width, rows, cols, segment)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type SeparableFusedKernel2d =
    gpu_std::host::Kernel<(*const f32, *mut f32, usize, usize, usize, usize)>;

/// The `convolution_2d_separable_fused_w*` kernels, indexed by the mask radius `w / 2` (host
/// build; radius 0, a 1 x 1 mask, has none: `None`).
#[cfg(not(target_arch = "nvptx64"))]
pub const CONVOLUTION_2D_SEPARABLE_FUSED_BY_RADIUS: [Option<SeparableFusedKernel2d>;
    MAX_MASK_WIDTH_2D / 2 + 1] = [
    None,
    Some(convolution_2d_separable_fused_w3),
    Some(convolution_2d_separable_fused_w5),
    Some(convolution_2d_separable_fused_w7),
    Some(convolution_2d_separable_fused_w9),
    Some(convolution_2d_separable_fused_w11),
    Some(convolution_2d_separable_fused_w13),
    Some(convolution_2d_separable_fused_w15),
    Some(convolution_2d_separable_fused_w17),
    Some(convolution_2d_separable_fused_w19),
    Some(convolution_2d_separable_fused_w21),
    Some(convolution_2d_separable_fused_w23),
    Some(convolution_2d_separable_fused_w25),
    Some(convolution_2d_separable_fused_w27),
    Some(convolution_2d_separable_fused_w29),
    Some(convolution_2d_separable_fused_w31),
];

/// Threads along x of the sample's rows kernel (`ROWS_BLOCKDIM_X`).
pub const ROWS_BLOCKDIM_X: u32 = 16;
/// Threads along y of the sample's rows kernel (`ROWS_BLOCKDIM_Y`).
pub const ROWS_BLOCKDIM_Y: u32 = 4;
/// Outputs per thread of the rows kernel, 16 columns apart (`ROWS_RESULT_STEPS`).
pub const ROWS_RESULT_STEPS: usize = 8;
/// Halo steps of 16 columns each side of the rows kernel (`ROWS_HALO_STEPS`): 16 >= 15.
const ROWS_HALO_STEPS: usize = 1;
/// Threads along x of the sample's columns kernel (`COLUMNS_BLOCKDIM_X`).
pub const COLUMNS_BLOCKDIM_X: u32 = 16;
/// Threads along y of the sample's columns kernel (`COLUMNS_BLOCKDIM_Y`).
pub const COLUMNS_BLOCKDIM_Y: u32 = 8;
/// Outputs per thread of the columns kernel, 8 rows apart (`COLUMNS_RESULT_STEPS`).
pub const COLUMNS_RESULT_STEPS: usize = 8;
/// Halo steps of 8 rows each side of the columns kernel: 2 (16 rows >= 15; the sample's 1
/// covers its radius 8 only).
const COLUMNS_HALO_STEPS: usize = 2;

/// NVIDIA's `convolutionRowsKernel` (CUDA samples, `convolutionSeparable`), the first pass:
/// `tmp[y][x] = sum_j row[j] input[y][x + j - r]` (ghosts 0), row factor in [`C_MASK_ROW`].
///
/// Algorithm (the sample's): a block of 16 x 4 threads stages 4 rows of `(8 + 2) x 16`
/// columns (8 result steps of 16 columns and a 16-column halo each side) in shared memory,
/// one float per thread and step, ghosts as 0; barrier; each thread computes its 8 outputs
/// 16 columns apart with a loop over the `w` taps (runtime width: the sample fixes its radius
/// at compile time).
///
/// Launch: block [`ROWS_BLOCKDIM_X`] x [`ROWS_BLOCKDIM_Y`] (asserted); grid
/// `(ceil(cols / 128), ceil(rows / 4))`.
///
/// # Safety
/// `input` and `output` are valid for `rows * cols` floats and do not overlap;
/// `mask_width` is odd and at most 31 (asserted).
#[kernel]
pub unsafe fn convolution_2d_separable_rows(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
) {
    const BX: usize = ROWS_BLOCKDIM_X as usize;
    const BY: usize = ROWS_BLOCKDIM_Y as usize;
    const STEPS: usize = ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS;
    assert!(
        mask_width % 2 == 1
            && mask_width <= MAX_MASK_WIDTH_2D
            && block_dim().x == ROWS_BLOCKDIM_X
            && block_dim().y == ROWS_BLOCKDIM_Y
    );
    let s = gpu_std::static_shared!(s_convolution_2d_separable_rows: [f32; BY * STEPS * BX]);
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let base_x = (block_idx().x as usize * ROWS_RESULT_STEPS * BX + tx).wrapping_sub(BX);
    let y = block_idx().y as usize * BY + ty;
    for i in 0..STEPS {
        let x = base_x.wrapping_add(i * BX);
        let v = if y < rows && x < cols {
            // SAFETY: in bounds.
            unsafe { *input.add(y * cols + x) }
        } else {
            0.0
        };
        // SAFETY: slot `(ty, tx + 16 i)` has this one writer.
        unsafe { s.write((ty * STEPS + i) * BX + tx, v) };
    }
    syncthreads();
    if y >= rows {
        return;
    }
    let r = mask_width / 2;
    for i in ROWS_HALO_STEPS..ROWS_HALO_STEPS + ROWS_RESULT_STEPS {
        let x = base_x.wrapping_add(i * BX);
        if x < cols {
            let mut sum = 0.0f32;
            for j in 0..mask_width {
                // SAFETY: `tx + 16 i + j - r` lies within the staged `10 x 16` columns
                // (`r <= 15 < 16`), written before the barrier.
                let v = unsafe { s.read((ty * STEPS + i) * BX + tx + j - r) };
                sum = fmaf32(v, C_MASK_ROW::read(j), sum);
            }
            // SAFETY: `y < rows`, `x < cols`.
            unsafe { *output.add(y * cols + x) = sum };
        }
    }
}

/// NVIDIA's `convolutionColumnsKernel` (CUDA samples, `convolutionSeparable`), the second
/// pass: `output[y][x] = sum_j col[j] tmp[y + j - r][x]` (ghosts 0), column factor in
/// [`C_MASK_COL`].
///
/// Algorithm (the sample's): a block of 16 x 8 threads stages 16 columns of `(8 + 2 x 2) x 8`
/// rows (8 result steps of 8 rows, 2 halo steps each side: 16 rows >= the largest radius 15)
/// in shared memory (`[16][12 x 8 + 1]`, padded against bank conflicts), ghosts as 0;
/// barrier; each thread computes 8 outputs 8 rows apart.
///
/// Launch: block [`COLUMNS_BLOCKDIM_X`] x [`COLUMNS_BLOCKDIM_Y`] (asserted); grid
/// `(ceil(cols / 16), ceil(rows / 64))`.
///
/// # Safety
/// As [`convolution_2d_separable_rows`].
#[kernel]
pub unsafe fn convolution_2d_separable_cols(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    rows: usize,
    cols: usize,
) {
    const BX: usize = COLUMNS_BLOCKDIM_X as usize;
    const BY: usize = COLUMNS_BLOCKDIM_Y as usize;
    const STEPS: usize = COLUMNS_RESULT_STEPS + 2 * COLUMNS_HALO_STEPS;
    const PITCH: usize = STEPS * BY + 1;
    assert!(
        mask_width % 2 == 1
            && mask_width <= MAX_MASK_WIDTH_2D
            && block_dim().x == COLUMNS_BLOCKDIM_X
            && block_dim().y == COLUMNS_BLOCKDIM_Y
    );
    let s = gpu_std::static_shared!(s_convolution_2d_separable_cols: [f32; BX * PITCH]);
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let x = block_idx().x as usize * BX + tx;
    let base_y = (block_idx().y as usize * COLUMNS_RESULT_STEPS * BY + ty)
        .wrapping_sub(COLUMNS_HALO_STEPS * BY);
    for i in 0..STEPS {
        let y = base_y.wrapping_add(i * BY);
        let v = if x < cols && y < rows {
            // SAFETY: in bounds.
            unsafe { *input.add(y * cols + x) }
        } else {
            0.0
        };
        // SAFETY: slot `(tx, ty + 8 i)` has this one writer.
        unsafe { s.write(tx * PITCH + ty + i * BY, v) };
    }
    syncthreads();
    if x >= cols {
        return;
    }
    let r = mask_width / 2;
    for i in COLUMNS_HALO_STEPS..COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS {
        let y = base_y.wrapping_add(i * BY);
        if y < rows {
            let mut sum = 0.0f32;
            for j in 0..mask_width {
                // SAFETY: `ty + 8 i + j - r` lies within the staged rows (`r <= 15 < 16`).
                let v = unsafe { s.read(tx * PITCH + ty + i * BY + j - r) };
                sum = fmaf32(v, C_MASK_COL::read(j), sum);
            }
            // SAFETY: `y < rows`, `x < cols`.
            unsafe { *output.add(y * cols + x) = sum };
        }
    }
}
