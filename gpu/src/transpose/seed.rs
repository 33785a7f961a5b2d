//! The seed's five versions (seed "并行计算(二)——CUDA") and the two kernels of NVIDIA's
//! `transpose` sample they are measured against, the copy baseline and the padded shared tile:
//! one 4-byte element per access (see the [`transpose`](super) module docs for the pattern).

use super::{BLOCK_ROWS, TILE};
use gpu_std::{block_dim, block_idx, kernel, syncthreads, thread_idx};

/// Global index along x and y: `(blockIdx.x * blockDim.x + threadIdx.x, ... y ...)`.
#[inline(always)]
fn global_xy() -> (usize, usize) {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    (
        b.x as usize * d.x as usize + t.x as usize,
        b.y as usize * d.y as usize + t.y as usize,
    )
}

/// One element per thread, input row on x: thread `(x, y)` copies `a[x][y]` to `b[y][x]`.
/// The body of the seed's versions 1, 4 and 5, which differ only in the block shape.
///
/// # Safety
/// `a` and `b` hold `rows * cols` floats each and do not overlap.
#[inline(always)]
unsafe fn transpose_row_on_x(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
    let (r, c) = global_xy();
    if r < rows && c < cols {
        // SAFETY: `r < rows`, `c < cols`.
        unsafe { *b.add(c * rows + r) = *a.add(r * cols + c) };
    }
}

/// Copy baseline with the access pattern of the tiled transposes (NVIDIA's `copy` kernel):
/// `b[r][c] = a[r][c]`, a 32 x 32 tile per block, 4 rows per thread.
///
/// Per warp: one row of 32 consecutive floats read and written (128 bytes each, 4 full
/// sectors): the best a transpose can hope for.
///
/// Launch: block `TILE x BLOCK_ROWS` (32 x 8); grid `(ceil(cols/32), ceil(rows/32))`.
///
/// # Safety
/// `a` and `b` hold `rows * cols` floats each and do not overlap.
///
/// Performance: 8 bytes per element, memory-bound.
#[kernel]
pub unsafe fn copy(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
    let c = block_idx().x as usize * TILE as usize + thread_idx().x as usize;
    let r0 = block_idx().y as usize * TILE as usize + thread_idx().y as usize;
    let mut k = 0;
    while k < TILE as usize {
        let r = r0 + k;
        if r < rows && c < cols {
            // SAFETY: `r < rows`, `c < cols`.
            unsafe { *b.add(r * cols + c) = *a.add(r * cols + c) };
        }
        k += BLOCK_ROWS as usize;
    }
}

/// Seed version 2 ("read columns, write rows" in its text; its code reads rows): thread
/// `(x, y)` copies `a[y][x]` to `b[x][y]`.
///
/// Per warp: reads 32 consecutive floats of one input row (4 full sectors, coalesced);
/// writes 32 floats down an output column, 32 different rows `rows * 4` bytes apart: 32
/// sectors of which 4 bytes each are used. The writes are the cost.
///
/// Launch: block 32 x 32 (the seed's); grid `(ceil(cols/32), ceil(rows/32))`.
///
/// # Safety
/// `a` and `b` hold `rows * cols` floats each and do not overlap.
#[kernel]
pub unsafe fn transpose_naive_row(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
    let (c, r) = global_xy();
    if r < rows && c < cols {
        // SAFETY: `r < rows`, `c < cols`.
        unsafe { *b.add(c * rows + r) = *a.add(r * cols + c) };
    }
}

/// Seed version 1 ("read rows, write columns" in its text; its code puts `threadIdx.x` on
/// the input row): thread `(x, y)` copies `a[x][y]` to `b[y][x]`.
///
/// Per warp: reads 32 floats down an input column (32 sectors, 4 bytes used of each);
/// writes 32 consecutive floats of an output row (coalesced). Strided reads cost less than
/// strided writes when the other warps of the block read the neighbouring columns from L1.
///
/// Launch: block 32 x 32 (the seed's); grid `(ceil(rows/32), ceil(cols/32))`.
///
/// # Safety
/// `a` and `b` hold `rows * cols` floats each and do not overlap.
#[kernel]
pub unsafe fn transpose_naive_col(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
    // SAFETY: forwarded.
    unsafe { transpose_row_on_x(a, b, rows, cols) }
}

/// Seed version 3: an 8 x 32 tile of the input staged in `__shared__ float t[32][8]`.
///
/// Algorithm: the block (8 x 32 threads) owns input rows `8*blockIdx.x ..+8` and columns
/// `32*blockIdx.y ..+32`. Warp `w` reads input row `w` of the tile, 32 consecutive floats
/// (coalesced), and stores them transposed into `t`; after the barrier, thread `(x, y)`
/// writes `t[y][x]` to output row `32*blockIdx.y + y`, column `8*blockIdx.x + x`: each warp
/// writes 4 output rows of 8 consecutive floats (4 full 32-byte sectors).
///
/// Shared memory: the transposed store `t[8*(y%4) + x][y/4]` has a stride of 8 words, so
/// a warp's 32 stores fall into 4 banks: an 8-way bank conflict (the padded version fixes it).
///
/// Launch: block 8 x 32 (the seed's); grid `(ceil(rows/8), ceil(cols/32))`.
///
/// # Safety
/// `a` and `b` hold `rows * cols` floats each and do not overlap; block 8 x 32.
#[kernel]
pub unsafe fn transpose_shared_tile(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
    let t = gpu_std::static_shared!(s_transpose_shared_tile: [f32; 32 * 8]);
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let row0 = block_idx().x as usize * 8;
    let col0 = block_idx().y as usize * 32;
    // Load: input row row0 + ty/4, column col0 + 8*(ty%4) + tx.
    let (lr, lc) = (ty / 4, 8 * (ty % 4) + tx);
    if row0 + lr < rows && col0 + lc < cols {
        // SAFETY: in bounds; each thread writes its own slot `t[lc][lr]`.
        unsafe { t.write(lc * 8 + lr, *a.add((row0 + lr) * cols + col0 + lc)) };
    }
    syncthreads();
    // Store: output row col0 + ty, column row0 + tx, from t[ty][tx] = a[row0 + tx][col0 + ty].
    if col0 + ty < cols && row0 + tx < rows {
        // SAFETY: in bounds; the slot was written before the barrier by the thread that
        // loaded a[row0 + tx][col0 + ty].
        unsafe { *b.add((col0 + ty) * rows + row0 + tx) = t.read(ty * 8 + tx) };
    }
}

/// Seed version 4: no shared memory; the body of version 1 with 8 x 32 blocks, so one warp
/// (8 lanes along x, 4 along y) transposes an 8 x 4 sub-block through the L1 cache.
///
/// Per warp: reads 8 input rows of 4 consecutive floats (16 bytes of each 32-byte sector;
/// the neighbouring warp uses the other half, often from L1); writes 4 output rows of 8
/// consecutive floats (4 full sectors).
///
/// Launch: block 8 x 32; grid `(ceil(rows/8), ceil(cols/32))`.
///
/// # Safety
/// `a` and `b` hold `rows * cols` floats each and do not overlap.
#[kernel]
pub unsafe fn transpose_l1_8x32(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
    // SAFETY: forwarded.
    unsafe { transpose_row_on_x(a, b, rows, cols) }
}

/// Seed version 5: as version 4 with 4 x 32 blocks: a warp transposes a 4 x 8 sub-block,
/// reading 4 input rows of 8 floats (full sectors) and writing 8 output rows of 4 floats
/// (half sectors).
///
/// Launch: block 4 x 32; grid `(ceil(rows/4), ceil(cols/32))` (the seed's `dim3(12048,256)`
/// is a typo for 2048).
///
/// # Safety
/// `a` and `b` hold `rows * cols` floats each and do not overlap.
#[kernel]
pub unsafe fn transpose_l1_4x32(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
    // SAFETY: forwarded.
    unsafe { transpose_row_on_x(a, b, rows, cols) }
}

/// NVIDIA's `transposeNoBankConflicts`: a 32 x 32 tile in shared memory padded to 32 x 33,
/// 32 x 8 threads, 4 elements per thread.
///
/// Algorithm: each warp reads a row of 32 consecutive input floats (coalesced) into
/// `tile[y][x]`; after the barrier it reads a column `tile[x][y]` and writes 32 consecutive
/// output floats (coalesced). Without the pad, the column read has a stride of 32 words and
/// all 32 lanes hit one bank (32-way conflict); with 33 words per row, lane `x` hits bank
/// `(33 x + y) % 32 = (x + y) % 32`: all different.
///
/// Launch: block `TILE x BLOCK_ROWS` (32 x 8); grid `(ceil(cols/32), ceil(rows/32))`.
///
/// # Safety
/// `a` and `b` hold `rows * cols` floats each and do not overlap; block 32 x 8.
#[kernel]
pub unsafe fn transpose_shared_padded(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
    const PITCH: usize = TILE as usize + 1;
    let tile = gpu_std::static_shared!(s_transpose_padded: [f32; 32 * 33]);
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let col0 = block_idx().x as usize * TILE as usize;
    let row0 = block_idx().y as usize * TILE as usize;
    let mut k = 0;
    while k < TILE as usize {
        let (r, c) = (row0 + ty + k, col0 + tx);
        if r < rows && c < cols {
            // SAFETY: in bounds; each (ty + k, tx) slot has one writer.
            unsafe { tile.write((ty + k) * PITCH + tx, *a.add(r * cols + c)) };
        }
        k += BLOCK_ROWS as usize;
    }
    syncthreads();
    let mut k = 0;
    while k < TILE as usize {
        // Output row col0 + ty + k (an input column), output column row0 + tx (an input row).
        let (r, c) = (col0 + ty + k, row0 + tx);
        if r < cols && c < rows {
            // SAFETY: in bounds; tile[tx][ty + k] = a[row0 + tx][col0 + ty + k] was
            // written before the barrier.
            unsafe { *b.add(r * rows + c) = tile.read(tx * PITCH + ty + k) };
        }
        k += BLOCK_ROWS as usize;
    }
}
