//! Matrix transpose of a row-major `rows x cols` `f32` matrix `a` into the row-major
//! `cols x rows` matrix `b` (`b[c][r] = a[r][c]`): the seed "并行计算(二)——CUDA" (its five
//! 8192 x 8192 versions), NVIDIA's `transpose` sample (copy baseline, padded shared tile) and a
//! 16-byte-access version beyond both.
//!
//! A transpose does no arithmetic: each element is read once and written once (8 bytes), so the
//! ceiling is the copy bandwidth. What separates the versions is how many DRAM sectors
//! (32 bytes) each warp instruction touches: a warp reading 32 consecutive floats uses 4 full
//! sectors; a warp reading 32 floats down a column touches 32 sectors and uses 4 bytes of each.
//! One side of a transpose is always strided in global memory unless the block stages a tile
//! on chip (shared memory, or the L1 cache as the seed's versions 4 and 5 do).
//!
//! All kernels take `(a, b, rows, cols)` and guard every access, so any shape works.

/// Entry name of [`copy`](kernels::copy).
pub const COPY: &str = "copy";
/// Entry name of [`transpose_naive_row`](kernels::transpose_naive_row).
pub const TRANSPOSE_NAIVE_ROW: &str = "transpose_naive_row";
/// Entry name of [`transpose_naive_col`](kernels::transpose_naive_col).
pub const TRANSPOSE_NAIVE_COL: &str = "transpose_naive_col";
/// Entry name of [`transpose_shared_tile`](kernels::transpose_shared_tile).
pub const TRANSPOSE_SHARED_TILE: &str = "transpose_shared_tile";
/// Entry name of [`transpose_l1_8x32`](kernels::transpose_l1_8x32).
pub const TRANSPOSE_L1_8X32: &str = "transpose_l1_8x32";
/// Entry name of [`transpose_l1_4x32`](kernels::transpose_l1_4x32).
pub const TRANSPOSE_L1_4X32: &str = "transpose_l1_4x32";
/// Entry name of [`transpose_shared_padded`](kernels::transpose_shared_padded).
pub const TRANSPOSE_SHARED_PADDED: &str = "transpose_shared_padded";
/// Entry name of [`transpose_tiled_vec4`](kernels::transpose_tiled_vec4).
pub const TRANSPOSE_TILED_VEC4: &str = "transpose_tiled_vec4";

/// Side of the square tile of [`copy`](kernels::copy) and
/// [`transpose_shared_padded`](kernels::transpose_shared_padded) (NVIDIA's `TILE_DIM`).
pub const TILE: u32 = 32;
/// Rows of threads per block of those kernels (NVIDIA's `BLOCK_ROWS`): blocks are
/// `TILE x BLOCK_ROWS` threads, each thread moves `TILE / BLOCK_ROWS` elements.
pub const BLOCK_ROWS: u32 = 8;
/// Side of the tile of [`transpose_tiled_vec4`](kernels::transpose_tiled_vec4).
pub const VEC4_TILE: u32 = 64;
/// Threads per side of the block of [`transpose_tiled_vec4`](kernels::transpose_tiled_vec4)
/// (`VEC4_THREADS x VEC4_THREADS`; each thread moves 4 float4 in and 4 float4 out).
pub const VEC4_THREADS: u32 = 16;

/// The kernels (device build only).
#[cfg(target_arch = "nvptx64")]
pub mod kernels {
    use super::{BLOCK_ROWS, TILE, VEC4_THREADS, VEC4_TILE};
    use crate::device::{
        block_dim, block_idx, load_global_v4, store_global_v4, syncthreads, thread_idx,
    };

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
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn copy(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
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
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_naive_row(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
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
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_naive_col(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
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
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_shared_tile(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let t = crate::static_shared!(s_transpose_shared_tile: [f32; 32 * 8]);
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
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_l1_8x32(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
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
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_l1_4x32(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
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
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_shared_padded(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        const PITCH: usize = TILE as usize + 1;
        let tile = crate::static_shared!(s_transpose_padded: [f32; 32 * 33]);
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

    /// The transpose to call: a 64 x 64 tile, 16 x 16 threads, every global access a 16-byte
    /// `float4` (4 loads and 4 stores per thread, all issued before their first use).
    ///
    /// Algorithm: thread `(x, y)` loads `float4`s at input row `row0 + y + 16k`, columns
    /// `col0 + 4x ..+4` (a warp: 2 rows of 256 contiguous bytes), and stores the scalars into
    /// `tile[64][65]`. After the barrier it gathers output row `col0 + y + 16k`, columns
    /// `row0 + 4x ..+4`, from `tile[4x + q][y + 16k]`, `q = 0..4`, and stores them as one
    /// `float4`. Gather reads hit banks `(4x + q + y) % 32`: 2-way conflicts at most.
    ///
    /// Launch: block 16 x 16; grid `(ceil(cols/64), ceil(rows/64))`; requires `rows % 4 == 0`,
    /// `cols % 4 == 0` and 16-byte aligned `a`, `b` (the host checks), so each `float4` is
    /// wholly inside or wholly outside the matrix.
    ///
    /// # Safety
    /// `a` and `b` hold `rows * cols` floats each, are 16-byte aligned and do not overlap;
    /// `rows` and `cols` are multiples of 4; block 16 x 16.
    ///
    /// Performance: 8 bytes per element; twice the bytes in flight per instruction of the
    /// scalar tiles, a quarter of the load/store instructions.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_tiled_vec4(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        const N: usize = VEC4_TILE as usize;
        const PITCH: usize = N + 1;
        const STEP: usize = VEC4_THREADS as usize;
        let tile = crate::static_shared!(s_transpose_vec4: [f32; 64 * 65]);
        let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
        let col0 = block_idx().x as usize * N;
        let row0 = block_idx().y as usize * N;

        let mut loaded = [[0.0f32; 4]; 4];
        let c = col0 + 4 * tx;
        for (k, v) in loaded.iter_mut().enumerate() {
            let r = row0 + ty + STEP * k;
            if r < rows && c < cols {
                // SAFETY: `c + 3 < cols` because `cols % 4 == 0`; 16-byte aligned since
                // `cols` and `c` are multiples of 4 and `a` is aligned.
                *v = unsafe { load_global_v4(a.add(r * cols + c)) };
            }
        }
        for (k, v) in loaded.iter().enumerate() {
            let base = (ty + STEP * k) * PITCH + 4 * tx;
            for (q, &x) in v.iter().enumerate() {
                // SAFETY: one writer per slot; slots of elements outside the matrix are never read.
                unsafe { tile.write(base + q, x) };
            }
        }
        syncthreads();
        let c = row0 + 4 * tx;
        for k in 0..4 {
            let r = col0 + ty + STEP * k;
            if r < cols && c < rows {
                let mut v = [0.0f32; 4];
                for (q, x) in v.iter_mut().enumerate() {
                    // SAFETY: tile[4tx + q][ty + 16k] = a[row0 + 4tx + q][col0 + ty + 16k],
                    // inside the matrix here, written before the barrier.
                    *x = unsafe { tile.read((4 * tx + q) * PITCH + ty + STEP * k) };
                }
                // SAFETY: `c + 3 < rows` (`rows % 4 == 0`), 16-byte aligned as above.
                unsafe { store_global_v4(b.add(r * rows + c), v) };
            }
        }
    }
}
