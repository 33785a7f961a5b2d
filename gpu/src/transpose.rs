//! Matrix transpose of a row-major `rows x cols` `f32` matrix `a` into the row-major
//! `cols x rows` matrix `b` (`b[c][r] = a[r][c]`): the seed "并行计算(二)——CUDA" (its five
//! 8192 x 8192 versions), NVIDIA's `transpose` sample (copy baseline, padded shared tile) and
//! two 16-byte-access versions beyond both: one for multiples of 4 on aligned buffers, one for
//! any shape at any element offset.
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
/// Entry name of [`transpose_tiled_vec4_any`](kernels::transpose_tiled_vec4_any).
pub const TRANSPOSE_TILED_VEC4_ANY: &str = "transpose_tiled_vec4_any";

/// Side of the square tile of [`copy`](kernels::copy) and
/// [`transpose_shared_padded`](kernels::transpose_shared_padded) (NVIDIA's `TILE_DIM`).
pub const TILE: u32 = 32;
/// Rows of threads per block of those kernels (NVIDIA's `BLOCK_ROWS`): blocks are
/// `TILE x BLOCK_ROWS` threads, each thread moves `TILE / BLOCK_ROWS` elements.
pub const BLOCK_ROWS: u32 = 8;
/// Side of the tile of [`transpose_tiled_vec4`](kernels::transpose_tiled_vec4) and
/// [`transpose_tiled_vec4_any`](kernels::transpose_tiled_vec4_any).
pub const VEC4_TILE: u32 = 64;
/// Threads per side of the block of [`transpose_tiled_vec4`](kernels::transpose_tiled_vec4)
/// and [`transpose_tiled_vec4_any`](kernels::transpose_tiled_vec4_any)
/// (`VEC4_THREADS x VEC4_THREADS`; each thread moves 4 float4 in and 4 float4 out, plus one
/// more for a quarter of the threads of the `_any` kernel).
pub const VEC4_THREADS: u32 = 16;

/// The geometry of [`transpose_tiled_vec4_any`](kernels::transpose_tiled_vec4_any), shared by
/// the kernel and the host's simulation of it (`cpu::transpose`'s tests), which checks on any
/// machine that every element is read inside the matrix, written exactly once, and that every
/// 16-byte access is aligned.
///
/// A *segment* is the part of one matrix row that one tile covers: `len` (1 to 64) consecutive
/// elements starting at element `start` of a buffer whose first element sits at the byte
/// address `base` (a multiple of 4: any element offset of an allocation). The segment's *shift*
/// `s` (0 to 3) is how many elements its first element lies past a 16-byte boundary. The
/// 16-byte-aligned *chunks* `j = 0..=16` cover it: chunk `j` holds the segment positions
/// `4j - s .. 4j - s + 4`, so chunk 0 may begin up to 3 elements before the segment and chunk
/// 16 (used only when `s > 0`) ends up to 3 elements after position 63.
pub mod any_shape {
    use super::{VEC4_THREADS, VEC4_TILE};

    /// Aligned 16-byte chunks that cover a segment of [`VEC4_TILE`] elements at any shift:
    /// `(64 + 3) / 4` rounded up.
    pub const CHUNKS: usize = VEC4_TILE as usize / 4 + 1;

    /// Tiles of a `rows x cols` matrix, one block each: `ceil(rows/64) * ceil(cols/64)`.
    #[inline(always)]
    pub fn tiles(rows: usize, cols: usize) -> usize {
        rows.div_ceil(VEC4_TILE as usize) * cols.div_ceil(VEC4_TILE as usize)
    }

    /// First input row and column of the tile of block `block` of a one-dimensional grid of
    /// [`tiles`] blocks, numbered row of tiles after row of tiles (as a 2D grid's blocks would
    /// be, `x` fastest).
    #[inline(always)]
    pub fn tile_origin(block: usize, cols: usize) -> (usize, usize) {
        let across = cols.div_ceil(VEC4_TILE as usize);
        (
            block / across * VEC4_TILE as usize,
            block % across * VEC4_TILE as usize,
        )
    }

    /// Chunks each thread handles: one in each of 4 segments (tile rows `y + 16k`), and for
    /// threads `x < 4` chunk 16 of a fifth.
    pub const SLOTS: usize = 5;

    /// How a chunk is accessed.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Access {
        /// The chunk holds no element of the segment: not touched.
        Skip,
        /// One 16-byte access (`ld.global.v4` / `st.global.v4`) of the whole chunk.
        Vector,
        /// One 4-byte access per element of the chunk that lies in the segment
        /// ([`position`] is `Some`).
        Scalar,
    }

    /// The (segment, chunk) that thread `(x, y)` of the 16 x 16 block handles in its slot `k`
    /// (`0..SLOTS`): segment (tile row on input, tile column on output) `y + 16k`, chunk `x`
    /// for `k < 4`; segment `y + 16x`, chunk 16 for `k = 4` and `x < 4`; `None` otherwise.
    /// Over the block's 256 threads every pair `(segment 0..64, chunk 0..17)` appears once.
    #[inline(always)]
    pub fn slot(k: usize, x: usize, y: usize) -> Option<(usize, usize)> {
        const STEP: usize = VEC4_THREADS as usize;
        if k < 4 {
            Some((y + STEP * k, x))
        } else if x < 4 {
            Some((y + STEP * x, CHUNKS - 1))
        } else {
            None
        }
    }

    /// The shift of a segment: elements by which element `start` of a buffer at byte address
    /// `base` (a multiple of 4) lies past a 16-byte boundary.
    #[inline(always)]
    pub fn shift(base: usize, start: usize) -> usize {
        (base / 4).wrapping_add(start) % 4
    }

    /// Position in the segment (`0..len`) of element `q` (`0..4`) of chunk `j`, or `None` when
    /// that element lies before or after the segment.
    #[inline(always)]
    pub fn position(j: usize, q: usize, shift: usize, len: usize) -> Option<usize> {
        // Before the segment, `4j + q < shift`, wraps to a huge value: `None` too.
        let p = (4 * j + q).wrapping_sub(shift);
        if p < len { Some(p) } else { None }
    }

    /// How chunk `j` of a segment of `len` elements with the given `shift` is accessed when the
    /// segment starts at element `start` of a range `0..bound` that may be touched: whole
    /// ([`Access::Vector`]) when it lies inside the range, element by element
    /// ([`Access::Scalar`]) when it straddles an end, not at all ([`Access::Skip`]) when it
    /// holds no element of the segment.
    ///
    /// Loads pass the matrix (`start` = the segment's first element, `bound = rows * cols`): a
    /// chunk may read up to 3 elements of the neighbouring tile, never outside the matrix.
    /// Stores pass the segment itself (`start = 0`, `bound = len`): no thread writes outside
    /// its tile, so blocks never write the same 16 bytes.
    #[inline(always)]
    pub fn access(j: usize, shift: usize, len: usize, start: usize, bound: usize) -> Access {
        let first = 4 * j; // + start - shift: the chunk's first element in the range
        if first >= len + shift {
            Access::Skip
        } else if start + first >= shift && start + first - shift + 4 <= bound {
            Access::Vector
        } else {
            Access::Scalar
        }
    }
}

/// The kernels (device build only).
#[cfg(target_arch = "nvptx64")]
pub mod kernels {
    use super::any_shape::{self, Access};
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

    /// The transpose of any shape at any element offset: [`transpose_tiled_vec4`]'s 64 x 64
    /// tile, 16 x 16 block and 16-byte accesses, for matrices whose rows do not start on
    /// 16-byte boundaries (`cols % 4 != 0`, `rows % 4 != 0`, or a view that starts at an
    /// element offset that is not a multiple of 4).
    ///
    /// Algorithm: the tile's part of an input row (a *segment* of up to 64 elements; see
    /// [`any_shape`]) starts `s = (a/4 + r*cols + col0) % 4` elements past a
    /// 16-byte boundary, taken from the actual address, so its 16-byte-aligned chunks are
    /// shifted by `s`: 16 chunks when `s = 0`, 17 otherwise. Thread `(x, y)` loads chunk `x` of
    /// tile rows `y + 16k` (`k = 0..4`) and, if `x < 4`, chunk 16 of tile row `y + 16x`
    /// ([`any_shape::slot`]): at most 5 `ld.global.v4`, all issued before the first use. A
    /// chunk is read whole whenever it lies inside the matrix, even where up to 3 of its
    /// elements belong to the neighbouring tile (they are dropped; its block reads them too,
    /// mostly from L2); only the matrix's first and last chunks, which may straddle its ends,
    /// are read element by element. Each element lands in `tile[64][65]` at its column. After
    /// the barrier the output row `col0 + i` is written the same way, with its own shift `s'`
    /// from `b`'s address: chunks wholly inside the tile's segment `row0 .. row0 + 64` of that
    /// row as one `st.global.v4` of `tile[4j - s' + q][i]`, `q = 0..4`, the partial chunks at
    /// both ends element by element, so no block writes outside its tile. On aligned rows
    /// (`s = 0`) this is exactly [`transpose_tiled_vec4`]'s access pattern.
    ///
    /// Shared memory: 64 x 65 floats (16.6 KB) as in [`transpose_tiled_vec4`]. A warp's two
    /// half-warps touch two neighbouring rows (or columns) of the tile, 2-way conflicts within
    /// each as there; the two hit disjoint banks unless the second's shift is one more than the
    /// first's (`cols % 4 == 1` on loads, `rows % 4 == 1` on stores), then 4-way.
    ///
    /// Launch: block 16 x 16; grid `ceil(rows/64) * ceil(cols/64)` blocks along x, one per
    /// tile ([`any_shape::tile_origin`]), so that neither side meets `gridDim.y`'s 65535
    /// limit. Any `rows`, `cols`.
    ///
    /// # Safety
    /// `a` and `b` hold `rows * cols` floats each, are 4-byte aligned (any element of an
    /// allocation) and do not overlap; `rows * cols` does not overflow; block 16 x 16, grid
    /// of [`any_shape::tiles`]`(rows, cols)` blocks along x.
    ///
    /// Performance: 8 bytes per element. Loads read `64 + 4` elements per tile row when the
    /// row is shifted (the 4 from L2, as a neighbour's); stores of a shifted output row are 15
    /// `float4` and 4 scalars. Each thread has at most 5 chunks in flight each way; 40
    /// registers on sm_90 (32 for [`transpose_tiled_vec4`]), so 6 blocks of 256 per SM.
    ///
    /// Source: this project, beyond the seed's five versions and NVIDIA's sample (whose
    /// `transpose.cu` runs only multiples of its tile); splitting each row into a head,
    /// aligned `float4`s and a tail is the classic treatment of misaligned vector copies.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_tiled_vec4_any(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let tile = crate::static_shared!(s_transpose_vec4_any: [f32; 64 * 65]);
        let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
        let at = AnyTile::new(rows, cols);
        let slot = |k| any_shape::slot(k, tx, ty);
        // All chunks first, as five named values (several 16-byte loads in flight per thread,
        // kept in registers: no array indexed by a loop counter) ...
        // SAFETY: forwarded from the kernel's contract.
        let [v0, v1, v2, v3, v4] = unsafe {
            [
                at.load(a, slot(0)),
                at.load(a, slot(1)),
                at.load(a, slot(2)),
                at.load(a, slot(3)),
                at.load(a, slot(4)),
            ]
        };
        // ... then each element to its column of the tile.
        // SAFETY: the slots of a block are distinct (`any_shape::slot`), so is every element's
        // place; nothing reads the tile before the barrier.
        unsafe {
            at.place(&tile, a, slot(0), v0);
            at.place(&tile, a, slot(1), v1);
            at.place(&tile, a, slot(2), v2);
            at.place(&tile, a, slot(3), v3);
            at.place(&tile, a, slot(4), v4);
        }
        syncthreads();
        // All the tile reads first, then the stores (the stores are `asm` that may write
        // memory, so no read after one could be hoisted above it).
        // SAFETY: the tile was filled before the barrier.
        let [w0, w1, w2, w3, w4] = unsafe {
            [
                at.gather(&tile, b, slot(0)),
                at.gather(&tile, b, slot(1)),
                at.gather(&tile, b, slot(2)),
                at.gather(&tile, b, slot(3)),
                at.gather(&tile, b, slot(4)),
            ]
        };
        // SAFETY: forwarded from the kernel's contract; each block stores only its own tile.
        unsafe {
            at.store(b, slot(0), w0);
            at.store(b, slot(1), w1);
            at.store(b, slot(2), w2);
            at.store(b, slot(3), w3);
            at.store(b, slot(4), w4);
        }
    }

    /// The tile of a block of [`transpose_tiled_vec4_any`]: its place in the matrix and its
    /// extent inside it.
    struct AnyTile {
        rows: usize,
        cols: usize,
        /// First input row and column of the tile.
        row0: usize,
        col0: usize,
        /// The tile's input rows (output segment length) and columns (input segment length,
        /// output rows) inside the matrix: 1 to 64 each, since the grid covers the matrix.
        height: usize,
        width: usize,
    }

    /// `tile[64][65]` of [`transpose_tiled_vec4_any`].
    type AnyShared = crate::device::SharedArray<f32, { 64 * 65 }>;

    impl AnyTile {
        const PITCH: usize = VEC4_TILE as usize + 1;

        #[inline(always)]
        fn new(rows: usize, cols: usize) -> Self {
            const N: usize = VEC4_TILE as usize;
            let (row0, col0) = any_shape::tile_origin(block_idx().x as usize, cols);
            AnyTile {
                rows,
                cols,
                row0,
                col0,
                height: (rows - row0).min(N),
                width: (cols - col0).min(N),
            }
        }

        /// First element of input segment `i` (input row `row0 + i`, from column `col0`).
        #[inline(always)]
        fn input_start(&self, i: usize) -> usize {
            (self.row0 + i) * self.cols + self.col0
        }

        /// Chunk `j` of input segment `i` for `slot = Some((i, j))` (zeros where not read).
        ///
        /// # Safety
        /// `a` holds `rows * cols` floats at a 4-byte aligned address.
        #[inline(always)]
        unsafe fn load(&self, a: *const f32, slot: Option<(usize, usize)>) -> [f32; 4] {
            let mut v = [0.0f32; 4];
            let Some((i, j)) = slot else { return v };
            if i >= self.height {
                return v;
            }
            let start = self.input_start(i);
            let s = any_shape::shift(a.addr(), start);
            match any_shape::access(j, s, self.width, start, self.rows * self.cols) {
                Access::Vector => {
                    // SAFETY: `access` checked `start + 4j - s .. + 4` lies inside the
                    // matrix; the address is 16-byte aligned by the definition of `s`.
                    v = unsafe { load_global_v4(a.add(start + 4 * j - s)) };
                }
                Access::Scalar => {
                    for (q, x) in v.iter_mut().enumerate() {
                        if let Some(p) = any_shape::position(j, q, s, self.width) {
                            // SAFETY: position `p < width` of the segment: inside the matrix.
                            *x = unsafe { *a.add(start + p) };
                        }
                    }
                }
                Access::Skip => {}
            }
            v
        }

        /// Writes the elements of chunk `v` (loaded by [`AnyTile::load`] for `slot`) that lie
        /// in segment `i` to `tile[i][position]`.
        ///
        /// # Safety
        /// No other thread of the block writes the same slot; nothing reads the tile until
        /// the next barrier.
        #[inline(always)]
        unsafe fn place(
            &self,
            tile: &AnyShared,
            a: *const f32,
            slot: Option<(usize, usize)>,
            v: [f32; 4],
        ) {
            let Some((i, j)) = slot else { return };
            if i >= self.height {
                return;
            }
            let s = any_shape::shift(a.addr(), self.input_start(i));
            for (q, &x) in v.iter().enumerate() {
                if let Some(p) = any_shape::position(j, q, s, self.width) {
                    // SAFETY: `i, p < 64`; one writer per element (distinct (segment, chunk,
                    // q) give distinct positions).
                    unsafe { tile.write(i * Self::PITCH + p, x) };
                }
            }
        }

        /// Output segment `i` (output row `col0 + i`, from column `row0`): its first element
        /// in `b` and its shift.
        #[inline(always)]
        fn output_segment(&self, b: *mut f32, i: usize) -> (usize, usize) {
            let start = (self.col0 + i) * self.rows + self.row0;
            (start, any_shape::shift(b.addr(), start))
        }

        /// The elements of chunk `j` of output segment `i` for `slot = Some((i, j))`, read
        /// from `tile[position][i]` (zeros where the chunk leaves the segment).
        ///
        /// # Safety
        /// The tile was filled (every [`AnyTile::place`] of the block) before a barrier.
        #[inline(always)]
        unsafe fn gather(
            &self,
            tile: &AnyShared,
            b: *mut f32,
            slot: Option<(usize, usize)>,
        ) -> [f32; 4] {
            let mut v = [0.0f32; 4];
            let Some((i, j)) = slot else { return v };
            if i >= self.width {
                return v;
            }
            let (_, s) = self.output_segment(b, i);
            for (q, x) in v.iter_mut().enumerate() {
                if let Some(p) = any_shape::position(j, q, s, self.height) {
                    // SAFETY: tile[p][i] = a[row0 + p][col0 + i], `p < height`, `i < width`:
                    // written before the barrier.
                    *x = unsafe { tile.read(p * Self::PITCH + i) };
                }
            }
            v
        }

        /// Writes chunk `j` of output segment `i` for `slot = Some((i, j))`, its elements
        /// `v` from [`AnyTile::gather`]: one 16-byte store if the chunk lies inside the
        /// segment, else one store per element inside it.
        ///
        /// # Safety
        /// `b` holds `rows * cols` floats at a 4-byte aligned address that no other block
        /// writes inside this block's tile.
        #[inline(always)]
        unsafe fn store(&self, b: *mut f32, slot: Option<(usize, usize)>, v: [f32; 4]) {
            let Some((i, j)) = slot else { return };
            if i >= self.width {
                return;
            }
            let len = self.height;
            let (start, s) = self.output_segment(b, i);
            match any_shape::access(j, s, len, 0, len) {
                Access::Vector => {
                    // SAFETY: the chunk `start + 4j - s .. + 4` lies inside the segment, so
                    // inside the matrix and this block's tile; 16-byte aligned by the
                    // definition of `s`.
                    unsafe { store_global_v4(b.add(start + 4 * j - s), v) };
                }
                Access::Scalar => {
                    for (q, &x) in v.iter().enumerate() {
                        if let Some(p) = any_shape::position(j, q, s, len) {
                            // SAFETY: `p < height`: inside the matrix and this block's tile.
                            unsafe { *b.add(start + p) = x };
                        }
                    }
                }
                Access::Skip => {}
            }
        }
    }
}
