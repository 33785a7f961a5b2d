//! Matrix transpose of a row-major `rows x cols` `f32` matrix `a` into the row-major
//! `cols x rows` matrix `b` (`b[c][r] = a[r][c]`): the seed "并行计算(二)——CUDA" (its five
//! 8192 x 8192 versions), NVIDIA's `transpose` sample (copy baseline, padded shared tile) and
//! three 16-byte-access versions beyond both: a tile for multiples of 4 on aligned buffers, a
//! tile for any shape at any element offset, and 4 x 4 blocks in registers for thin matrices
//! (one side at most [`THIN_MAX`]).
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
/// Entry name of [`transpose_thin_vec4`](kernels::transpose_thin_vec4).
pub const TRANSPOSE_THIN_VEC4: &str = "transpose_thin_vec4";

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

/// Largest short side (`min(rows, cols)`) of a *thin* matrix, the shapes of
/// [`transpose_thin_vec4`](kernels::transpose_thin_vec4).
///
/// Why 32: a 64 x 64 tile of [`transpose_tiled_vec4`](kernels::transpose_tiled_vec4) over a
/// matrix with `s <= 32` rows (or columns) holds at most `64 s` elements, half of its threads'
/// loads or stores predicated off, 256 elements per 256-thread block at `s = 4` (block
/// scheduling, not memory, sets its speed there: 15% of the copy bandwidth for 4 x 4194304 on
/// an H200). The thin kernel gives every block about 8192 elements at any `s`, and its
/// accesses fill whole 32-byte sectors on both sides for `s` = 4, 8, 16 and 32 (see [`thin`]).
/// Above 32 the tile is more than half full; where exactly the two cross is a measurement,
/// not yet made.
pub const THIN_MAX: usize = 32;
/// Threads per block of [`transpose_thin_vec4`](kernels::transpose_thin_vec4) (at most: 255
/// or 252 when 256 is not a multiple of the short side's groups of 4, see
/// [`thin::Thin::block`]).
pub const THIN_THREADS: u32 = 256;
/// 4 x 4 blocks (*cells*) each thread of [`transpose_thin_vec4`](kernels::transpose_thin_vec4)
/// moves: all their loads (`4 * THIN_CELLS` float4) are issued before the first store.
pub const THIN_CELLS: usize = 2;
// The kernel names its two cells: an array of `Option` cells mapped over went to a 232-byte
// stack frame (local memory) on sm_90.
const _: () = assert!(
    THIN_CELLS == 2,
    "transpose_thin_vec4 moves cells 0 and 1 by name"
);

/// The geometry of [`transpose_tiled_vec4_any`](kernels::transpose_tiled_vec4_any), shared by
/// the kernel and the host's simulation of it (`cpu::transpose`'s tests), which checks on any
/// machine that every element is read inside the matrix, written exactly once, and that every
/// 16-byte access is aligned.
///
/// A *segment* is the part of one matrix row that one tile covers: `len` consecutive
/// elements starting at element `start` of a buffer whose first element sits at the byte
/// address `base` (a multiple of 4: any element offset of an allocation). The segment's *shift*
/// `s` (0 to 3) is how many elements its first element lies past a 16-byte boundary. The
/// 16-byte-aligned *chunks* `j = 0, 1, ..` cover it: chunk `j` holds the segment positions
/// `4j - s .. 4j - s + 4`, so chunk 0 may begin up to 3 elements before the segment and the
/// last may end up to 3 elements after it.
///
/// *Input segments* are rectangular: the tile at `(row0, col0)` covers columns
/// `col0 .. col0 + 64` of each of its input rows (17 chunks when shifted).
///
/// *Output segments* are a parallelogram: output row `c` (input column `c`) is split at the
/// rows `64k + lead`, where the *lead* `0..8` ([`lead`](any_shape::lead)) puts every split on a 32-byte boundary
/// of `b`. The tile at `row0 = 64k` writes rows `64k + lead .. 64k + 64 + lead` of it (from
/// row 0 for `k = 0`, up to `rows` for the last tile: [`output_span`](any_shape::output_span)), so all its output
/// segments but the matrix's first and last start and end on whole 32-byte sectors: no
/// partial chunk, no sector shared by two blocks. The tile stages the input rows
/// `row0 .. row0 + 71` ([`STAGED_ROWS`](any_shape::STAGED_ROWS)) those segments need.
pub mod any_shape {
    use super::{VEC4_THREADS, VEC4_TILE};

    /// Elements per 32-byte sector: output segments start and end on multiples of it.
    pub const SECTOR: u32 = 8;

    /// Input rows a tile stages: its 64 plus the largest [`lead`], 7.
    pub const STAGED_ROWS: u32 = VEC4_TILE + SECTOR - 1;

    /// Chunks that cover an output segment of up to `64 + 7` elements (the first tile's) at
    /// any shift: its end is on a 32-byte boundary, so `(71 + 1) / 4`.
    pub const OUT_CHUNKS: usize = (VEC4_TILE + SECTOR) as usize / 4;

    /// Tiles of a `rows x cols` matrix, one block each: `ceil(rows/64) * ceil(cols/64)`.
    #[inline(always)]
    pub fn tiles(rows: usize, cols: usize) -> usize {
        rows.div_ceil(VEC4_TILE as usize) * cols.div_ceil(VEC4_TILE as usize)
    }

    /// First input row and column of the tile of block `block` of a one-dimensional grid of
    /// [`tiles`] blocks, numbered column of tiles after column of tiles: consecutive blocks
    /// take tiles down one column strip of the input, so they write neighbouring segments of
    /// the same output rows, and the input rows two tiles share ([`STAGED_ROWS`]) are read
    /// close together in time, the second time from L2. Numbered this way the transpose ran
    /// 10-15% faster on an H200 than numbered row after row (8191 x 8193, before the
    /// parallelogram: 77% of the copy bandwidth against 67%).
    ///
    /// 32-bit arithmetic: `block` is below the grid's 2^31 blocks, so is the number of tiles
    /// down a column.
    #[inline(always)]
    pub fn tile_origin(block: u32, rows: usize) -> (usize, usize) {
        let down = rows.div_ceil(VEC4_TILE as usize) as u32;
        (
            (block % down) as usize * VEC4_TILE as usize,
            (block / down) as usize * VEC4_TILE as usize,
        )
    }

    /// Chunks each thread handles: one in each of 4 segments (tile rows `y + 16k`), and for
    /// all but the block's last two threads one more.
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
    /// (`0..SLOTS`): segment `y + 16k`, chunk `x` for `k < 4`; for `k = 4` and
    /// `t = 16y + x`, chunks 16 and 17 of segments 0..64 (`t < 128`) and chunks 0..18 of
    /// segments 64..71 (`t < 254`); `None` otherwise. Over the block's 256 threads every
    /// pair `(segment 0..71, chunk 0..18)` appears once: enough for the 71 staged input
    /// segments of 17 chunks and the 64 output segments of up to 18.
    #[inline(always)]
    pub fn slot(k: u32, x: u32, y: u32) -> Option<(u32, u32)> {
        const STEP: u32 = VEC4_THREADS;
        const ROWS: u32 = VEC4_TILE;
        const EXTRA: u32 = OUT_CHUNKS as u32;
        let t = STEP * y + x;
        if k < 4 {
            Some((y + STEP * k, x))
        } else if t < 2 * ROWS {
            Some((t % ROWS, 16 + t / ROWS))
        } else if t - 2 * ROWS < (STAGED_ROWS - ROWS) * EXTRA {
            let u = t - 2 * ROWS;
            Some((ROWS + u / EXTRA, u % EXTRA))
        } else {
            None
        }
    }

    /// The shift of a segment: elements by which element `start` of a buffer at byte address
    /// `base` (a multiple of 4) lies past a 16-byte boundary.
    #[inline(always)]
    pub fn shift(base: usize, start: usize) -> u32 {
        // Only the low two bits matter: 32-bit arithmetic.
        ((base / 4) as u32).wrapping_add(start as u32) % 4
    }

    /// The lead of output row `c`: with `start = c * rows` its first element in `b` (at byte
    /// address `base`), the elements from there to the next 32-byte boundary (`0..8`). Every
    /// row `64k + lead` of output row `c` starts a 32-byte sector.
    #[inline(always)]
    pub fn lead(base: usize, start: usize) -> u32 {
        // Only the low three bits matter: 32-bit arithmetic.
        SECTOR.wrapping_sub(((base / 4) as u32).wrapping_add(start as u32)) % SECTOR
    }

    /// The largest [`lead`] of any output row when output row `c` has lead `lead0`: the
    /// leads of the rows `c + i` are `lead0 - i * rows` modulo 8, that is `lead0` plus every
    /// multiple of `g = gcd(rows, 8)`, whose largest is `8 - g + lead0 % g` (`lead0` itself
    /// when `rows % 8 == 0`, 7 when `rows` is odd).
    #[inline(always)]
    pub fn lead_max(lead0: u32, rows: usize) -> u32 {
        let g = 1u32 << rows.trailing_zeros().min(SECTOR.trailing_zeros());
        SECTOR - g + lead0 % g
    }

    /// The rows `first .. end` of an output row with the given [`lead`] that the tile at
    /// input row `row0` writes: from `row0 + lead` (from 0 for the first tile) to
    /// `row0 + 64 + lead`, clipped to `rows`. Empty (`first >= end`) when the row's
    /// previous tile reached its end.
    #[inline(always)]
    pub fn output_span(row0: usize, rows: usize, lead: u32) -> (usize, usize) {
        let first = if row0 == 0 { 0 } else { row0 + lead as usize };
        (first, (row0 + (VEC4_TILE + lead) as usize).min(rows))
    }

    /// Position in the segment (`0..len`) of element `q` (`0..4`) of chunk `j`, or `None` when
    /// that element lies before or after the segment.
    #[inline(always)]
    pub fn position(j: u32, q: u32, shift: u32, len: u32) -> Option<u32> {
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
    /// its tile's span, so blocks never write the same 16 bytes.
    #[inline(always)]
    pub fn access(j: u32, shift: u32, len: u32, start: usize, bound: usize) -> Access {
        let first = 4 * j; // + start - shift: the chunk's first element in the range
        if first >= len + shift {
            Access::Skip
        } else if start + first as usize >= shift as usize
            && start + first as usize - shift as usize + 4 <= bound
        {
            Access::Vector
        } else {
            Access::Scalar
        }
    }
}

/// The geometry of [`transpose_thin_vec4`](kernels::transpose_thin_vec4), shared by the
/// kernel, its launcher and the host's simulation of it (`cpu::transpose`'s tests).
///
/// A thin matrix has a *short* side `s = min(rows, cols) <= THIN_MAX` and a *long* side `l`,
/// both multiples of 4 (`s = rows` when `rows <= cols`). It is cut into *cells*, 4 x 4 blocks
/// at row group `rg` and column group `cg`: `a[4rg .. 4rg + 4][4cg .. 4cg + 4]`. A thread
/// loads a cell as four `float4` rows, transposes it in registers and stores four `float4`
/// rows of the output `b[4cg .. 4cg + 4][4rg .. 4rg + 4]`.
///
/// Threads: `threadIdx.x` is the cell's group along the short side (`s / 4` of them, 1 to 8:
/// the fast index), `threadIdx.y` its group along the long side. A warp thus holds whole
/// short-side extents of `32 / (s/4)` consecutive long groups: on the side of the matrix whose
/// rows are the short side (the output of a short-wide matrix, the input of a tall-narrow
/// one) each long group is one row of `4s` contiguous bytes, and the warp's rows for one
/// instruction are 4 rows apart; on the other side it touches `s/4` rows, each `512 / (s/4)`
/// contiguous bytes.
///
/// Sectors: when `s/4` divides 32 (`s` = 8, 16, 32) every warp access fills whole 32-byte
/// sectors on both sides. For `s` = 12, 20, 24, 28 a warp's lanes do not split into whole
/// long groups, so the ends of its contiguous runs may share a sector with the next warp's.
///
/// *Staged* side (`s = 4`, [`Thin::staged`](thin::Thin::staged)): there the short side's rows are 16 bytes, so
/// a lane's own cell is 64 contiguous bytes on that side and a warp instruction over the
/// lanes' own cells would touch 16 bytes of each of 32 sectors. Instead the 32 cells of a
/// warp (one cell round `k`) are 128 contiguous `float4` *slots* `t = 0..128` on that side
/// (slot `t` is row `t % 4` of the cell of lane `t / 4`, [`Thin::slot_cell`](thin::Thin::slot_cell)), and lane `l`
/// moves slots `l + 32j`, `j = 0..4` ([`region_slot`](thin::region_slot)): 512 contiguous bytes per
/// instruction. The slots pass through the warp's 2 KiB of shared memory
/// ([`STAGE_SLOTS`](thin::STAGE_SLOTS)), at the swizzled positions [`stage_slot`](thin::stage_slot): the short-wide output is
/// staged before its stores, the tall-narrow input after its loads.
pub mod thin {
    use super::{THIN_CELLS, THIN_MAX, THIN_THREADS};
    use gpu_std::WARP_SIZE;

    /// `float4` slots of one warp's stage on the staged path ([`Thin::staged`]): the 4 rows
    /// of each of its 32 cells on the short side, 2 KiB.
    pub const STAGE_SLOTS: usize = 4 * WARP_SIZE as usize;

    /// `float4` slots of a block's stage: one [`STAGE_SLOTS`] per warp of [`THIN_THREADS`]
    /// threads (16 KiB of static shared memory).
    pub const BLOCK_STAGE_SLOTS: usize = THIN_THREADS as usize / WARP_SIZE as usize * STAGE_SLOTS;

    /// The slot (`0..STAGE_SLOTS`) of a warp's contiguous region that lane `lane` moves in
    /// its global access `j` (`0..4`): `lane + 32j`, so that a warp instruction covers 32
    /// consecutive slots (512 contiguous bytes).
    #[inline(always)]
    pub fn region_slot(lane: usize, j: usize) -> usize {
        lane + WARP_SIZE as usize * j
    }

    /// Where slot `t` (`0..STAGE_SLOTS`) sits in its warp's stage: `t ^ ((t >> 3) & 3)`, an
    /// XOR swizzle that makes both shared-memory access patterns conflict-free. A 16-byte
    /// shared access is served 8 lanes at a time, and is conflict-free when those 8 lanes'
    /// positions differ modulo 8 (8 x 16 bytes = the 32 banks). The region side (lanes `l`
    /// of one octet at slots `l + 32j`) is one row of 8 positions, xored by a constant;
    /// the cell side (lanes `l` at slots `4l + i`, a fixed `i`) is rows `r = l / 2` of an
    /// octet at columns `i` and `i + 4`: without the swizzle 4-way conflicts, with it
    /// columns `i ^ (r & 3)` and `(i + 4) ^ (r & 3)`, eight different ones.
    #[inline(always)]
    pub fn stage_slot(t: usize) -> usize {
        t ^ ((t >> 3) & 3)
    }

    /// The thin shape's sides in groups of 4, and which side is short.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Thin {
        /// Groups of 4 along the short side: `s / 4`, `blockDim.x`.
        pub short_groups: usize,
        /// Groups of 4 along the long side: `l / 4`.
        pub long_groups: usize,
        /// Whether the short side is the rows (a short-wide matrix; also a square one).
        pub short_rows: bool,
    }

    /// Whether `rows x cols` is a thin shape: both multiples of 4 and one of them at most
    /// [`THIN_MAX`].
    #[inline(always)]
    pub fn is_thin(rows: usize, cols: usize) -> bool {
        rows.is_multiple_of(4) && cols.is_multiple_of(4) && rows.min(cols) <= THIN_MAX
    }

    impl Thin {
        /// The geometry of a `rows x cols` matrix (meaningful for a thin shape, [`is_thin`]).
        #[inline(always)]
        pub fn new(rows: usize, cols: usize) -> Thin {
            let short_rows = rows <= cols;
            let (short, long) = if short_rows {
                (rows, cols)
            } else {
                (cols, rows)
            };
            Thin {
                short_groups: short / 4,
                long_groups: long / 4,
                short_rows,
            }
        }

        /// The block: `(s/4, 256 / (s/4))` threads, the short side's groups along x; 256
        /// threads when `s/4` divides 256 (`s` = 4, 8, 16, 32), 255 or 252 otherwise. An empty
        /// short side gives `(1, 256)` (nothing to launch then), a short side over 1024
        /// elements (not thin) `(256, 1)`.
        #[inline(always)]
        pub fn block(&self) -> (u32, u32) {
            // 1..=256 (an empty or oversized short side still gives a valid block): no
            // division by zero.
            let x = self.short_groups.clamp(1, THIN_THREADS as usize) as u32;
            (x, THIN_THREADS / x)
        }

        /// Whether the kernel stages the short side through shared memory: `s = 4` (one
        /// short group), where the short side's rows are 16 bytes (see [`thin`](self)).
        #[inline(always)]
        pub fn staged(&self) -> bool {
            self.short_groups == 1
        }

        /// On the staged path, the cell that holds slot `t` (`0..STAGE_SLOTS`) of cell round
        /// `k` of the warp whose lane 0 is thread `(0, y0)`: the cell of lane `t / 4`
        /// ([`Thin::cell`] of thread `(0, y0 + t / 4)`), whose row `t % 4` on the short side
        /// the slot is; `None` past the matrix.
        #[inline(always)]
        pub fn slot_cell(
            &self,
            block: usize,
            y0: usize,
            t: usize,
            k: usize,
        ) -> Option<(usize, usize)> {
            self.cell(block, 0, y0 + t / 4, k)
        }

        /// On the staged path, the region of cell round `k` of the warp whose lane 0 is
        /// thread `(0, y0)`: its first `float4` in the short side's buffer (the output of a
        /// short-wide matrix, the input of a tall-narrow one; `4 x` the first long group, as
        /// the short side's rows are one `float4`) and its slots (`0..=STAGE_SLOTS`: 4 per
        /// cell inside the matrix). Slot `t < slots` is `float4` `first + t` of that buffer,
        /// row `t % 4` of [`Thin::slot_cell`]`(.., t, k)`.
        #[inline(always)]
        pub fn region(&self, block: usize, y0: usize, k: usize) -> (usize, usize) {
            let long = block * self.long_groups_per_block() + k * self.block().1 as usize + y0;
            let cells = self
                .long_groups
                .saturating_sub(long)
                .min(WARP_SIZE as usize);
            (4 * long, 4 * cells)
        }

        /// Long groups one block covers: `blockDim.y` per cell, [`THIN_CELLS`] cells per thread.
        #[inline(always)]
        pub fn long_groups_per_block(&self) -> usize {
            self.block().1 as usize * THIN_CELLS
        }

        /// Blocks of the one-dimensional grid: enough to cover the long side (0 for an empty
        /// matrix).
        #[inline(always)]
        pub fn blocks(&self) -> usize {
            if self.short_groups == 0 {
                0
            } else {
                self.long_groups.div_ceil(self.long_groups_per_block())
            }
        }

        /// The cell `(rg, cg)` that thread `(x, y)` of block `block` moves as its cell `k`
        /// (`0..THIN_CELLS`): short group `x`, long group `block * long_groups_per_block + k *
        /// blockDim.y + y`; `None` past the matrix (and for a thread outside [`Thin::block`],
        /// so that no launch shape makes two threads write the same cell). Over the grid every
        /// cell of the matrix appears once.
        #[inline(always)]
        pub fn cell(&self, block: usize, x: usize, y: usize, k: usize) -> Option<(usize, usize)> {
            let height = self.block().1 as usize;
            let long = block * self.long_groups_per_block() + k * height + y;
            if x >= self.short_groups || y >= height || long >= self.long_groups {
                return None;
            }
            Some(if self.short_rows {
                (x, long)
            } else {
                (long, x)
            })
        }
    }
}

/// The kernels (device build only).
pub mod kernels {
    use gpu_std::kernel;
    use super::any_shape::{self, Access};
    use super::thin::{self, Thin};
    use super::{BLOCK_ROWS, THIN_THREADS, TILE, VEC4_THREADS, VEC4_TILE};
    use gpu_std::{
        FULL_MASK, WARP_SIZE, block_dim, block_idx, load_global_v4, store_global_v4, syncthreads,
        syncwarp, thread_idx,
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
    pub unsafe fn transpose_naive_row(
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
    #[kernel]
    pub unsafe fn transpose_naive_col(
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
    #[kernel]
    pub unsafe fn transpose_shared_tile(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
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
    pub unsafe fn transpose_l1_8x32(
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
    #[kernel]
    pub unsafe fn transpose_l1_4x32(
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
    #[kernel]
    pub unsafe fn transpose_shared_padded(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
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
    #[kernel]
    pub unsafe fn transpose_tiled_vec4(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        const N: usize = VEC4_TILE as usize;
        const PITCH: usize = N + 1;
        const STEP: usize = VEC4_THREADS as usize;
        let tile = gpu_std::static_shared!(s_transpose_vec4: [f32; 64 * 65]);
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
                // SAFETY: `tx, ty < 16` (block 16 x 16, the caller's contract), so the index is
                // below 64 x 65; one writer per slot; slots of elements outside the matrix are
                // never read.
                unsafe { tile.write_unchecked(base + q, x) };
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
                    // inside the tile (`tx, ty < 16`) and the matrix here, written before the
                    // barrier.
                    *x = unsafe { tile.read_unchecked((4 * tx + q) * PITCH + ty + STEP * k) };
                }
                // SAFETY: `c + 3 < rows` (`rows % 4 == 0`), 16-byte aligned as above.
                unsafe { store_global_v4(b.add(r * rows + c), v) };
            }
        }
    }

    /// The transpose of any shape at any element offset: [`transpose_tiled_vec4`]'s 64 x 64
    /// tile, 16 x 16 block and 16-byte accesses, for matrices whose rows do not start on
    /// 16-byte boundaries (`cols % 4 != 0`, `rows % 4 != 0`, or a view that starts at an
    /// element offset that is not a multiple of 4); the host's choice for every shape with
    /// both sides at least 64.
    ///
    /// Algorithm (the geometry is [`any_shape`]'s): the block of the tile at `(row0, col0)`
    /// stages input rows `row0 .. row0 + 64 + L` (`L` = [`any_shape::lead_max`], at most 7),
    /// columns `col0 .. col0 + 64`, in `tile[71][65]`. An input row's segment starts
    /// `s = (a/4 + r*cols + col0) % 4` elements past a 16-byte boundary, taken from the actual
    /// address, so its 16-byte-aligned chunks are shifted by `s`: 16 chunks when `s = 0`, 17
    /// otherwise. A chunk is loaded whole whenever it lies inside the matrix, even where up
    /// to 3 of its elements belong to the neighbouring tile (they are dropped; its block
    /// reads them too, mostly from L2); each element lands in the tile at its column. After
    /// the barrier, output row `col0 + i` receives tile column `i` for its rows
    /// `row0 + lead .. row0 + 64 + lead` ([`any_shape::output_span`]), where the row's lead
    /// (`0..8`, [`any_shape::lead`]) puts both ends on 32-byte boundaries of `b`: the span is
    /// 16 whole `st.global.v4` and shares no 32-byte sector with another block's. Only an
    /// output row's first span (from row 0) and its last (to `rows`) can have partial chunks
    /// at the row's ends, stored element by element.
    ///
    /// Two paths, chosen per block (a uniform branch):
    /// - tiles whose staged rows and 64 columns lie inside the matrix (all but the first and
    ///   last tile of each column strip, and the last strip) take the whole-tile path,
    ///   `AnyTile::interior_transpose`: no bounds checks, 4 or 5 chunk loads and exactly 4
    ///   `float4` stores per thread. On rows of `b` that are whole 32-byte sectors (`rows % 8
    ///   == 0` on an aligned `b`) every lead is 0, only 64 rows are staged, and on aligned
    ///   input rows this is [`transpose_tiled_vec4`]'s access pattern.
    /// - the others take the general path: each `(segment, chunk)` pair of
    ///   [`any_shape::slot`], its access chosen by [`any_shape::access`].
    ///
    /// Shared memory: 71 x 65 floats (18.5 KB). A warp's two half-warps touch two neighbouring
    /// rows (or columns) of the tile, 2-way conflicts within each as in
    /// [`transpose_tiled_vec4`]; the two hit disjoint banks unless their shifts (on loads) or
    /// leads (on stores) differ by one less than a multiple of 4, then 4-way.
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
    /// Performance: 8 bytes per element to DRAM. Loads read up to `71 x 68` elements per
    /// 64 x 64 tile (the rows and chunks beyond the tile from L2, as a neighbour's). With
    /// rectangular output spans (before this parallelogram) a shifted output segment was 15
    /// `float4` and 4 scalar stores spread over three 128-byte lines, two of them shared with
    /// the neighbouring blocks, and 8191 x 8193 ran at 77% of the copy bandwidth on an H200,
    /// its L2 at 92% of its request throughput.
    ///
    /// Source: this project, beyond the seed's five versions and NVIDIA's sample (whose
    /// `transpose.cu` runs only multiples of its tile); splitting each row into a head,
    /// aligned `float4`s and a tail is the classic treatment of misaligned vector copies.
    #[kernel]
    pub unsafe fn transpose_tiled_vec4_any(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let tile = gpu_std::static_shared!(s_transpose_vec4_any: [f32; ANY_TILE_FLOATS]);
        let (tx, ty) = (thread_idx().x, thread_idx().y);
        let at = AnyTile::new(b, rows, cols);
        if at.interior() {
            // SAFETY: forwarded from the kernel's contract; `interior` checked the tile.
            unsafe { at.interior_transpose(a, b, &tile, tx, ty) };
            return;
        }
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
        // SAFETY: forwarded from the kernel's contract; each block stores only its own spans.
        unsafe {
            at.store(b, slot(0), w0);
            at.store(b, slot(1), w1);
            at.store(b, slot(2), w2);
            at.store(b, slot(3), w3);
            at.store(b, slot(4), w4);
        }
    }

    /// Floats of the shared tile of [`transpose_tiled_vec4_any`]: [`any_shape::STAGED_ROWS`]
    /// rows of 64 plus one of padding.
    const ANY_TILE_FLOATS: usize = (any_shape::STAGED_ROWS * AnyTile::PITCH) as usize;

    /// The tile of a block of [`transpose_tiled_vec4_any`]: its place in the matrix and its
    /// extent inside it. In-tile quantities (segment, chunk, position, shift, lead, extent)
    /// are `u32`; only element offsets into the matrix are 64-bit.
    struct AnyTile {
        rows: usize,
        cols: usize,
        /// First input row and column of the tile.
        row0: usize,
        col0: usize,
        /// The input rows it stages (`64 + lead_max`, clipped to the matrix) and its columns
        /// (input segment length, output rows) inside the matrix, 1 to 64.
        staged: u32,
        width: u32,
        /// The lead of output row `col0` and the largest lead of any output row.
        lead0: u32,
        lead_max: u32,
    }

    /// `tile[71][65]` of [`transpose_tiled_vec4_any`].
    type AnyShared = gpu_std::SharedArray<f32, ANY_TILE_FLOATS>;

    impl AnyTile {
        const PITCH: u32 = VEC4_TILE + 1;

        #[inline(always)]
        fn new(b: *mut f32, rows: usize, cols: usize) -> Self {
            const N: usize = VEC4_TILE as usize;
            let (row0, col0) = any_shape::tile_origin(block_idx().x, rows);
            let lead0 = any_shape::lead(b.addr(), col0 * rows);
            let lead_max = any_shape::lead_max(lead0, rows);
            AnyTile {
                rows,
                cols,
                row0,
                col0,
                staged: (rows - row0).min(N + lead_max as usize) as u32,
                width: (cols - col0).min(N) as u32,
                lead0,
                lead_max,
            }
        }

        /// The lead of output row `col0 + i`: `lead0 - i * rows` modulo 8 (32-bit wrapping
        /// arithmetic keeps the low bits exact).
        #[inline(always)]
        fn lead(&self, i: u32) -> u32 {
            self.lead0.wrapping_sub(i.wrapping_mul(self.rows as u32)) % any_shape::SECTOR
        }

        /// Whether the block's tile is whole (64 columns and `64 + lead_max` staged rows
        /// inside the matrix, not the first tile of its column strip unless every lead is 0)
        /// and every chunk its segments load (from up to 3 elements before a segment to up to
        /// 3 after it) lies inside the matrix: then [`AnyTile::interior_transpose`] moves it.
        /// The same for every thread of the block (a uniform branch).
        #[inline(always)]
        fn interior(&self) -> bool {
            const N: u32 = VEC4_TILE;
            let first = self.input_start(0);
            let last = self.input_start(N + self.lead_max - 1) + N as usize;
            (self.row0 > 0 || self.lead_max == 0)
                && self.staged == N + self.lead_max
                && self.width == N
                && first >= 3
                && last + 3 <= self.rows * self.cols
        }

        /// The whole-tile path of [`transpose_tiled_vec4_any`]: the accesses of
        /// [`any_shape`] for a whole interior tile, with the decisions that are constant
        /// there taken once (every load is a whole chunk; every output span is 64 elements
        /// from a 32-byte boundary, 16 whole chunks) and 32-bit shift arithmetic.
        ///
        /// Loads: thread `(x, y)` loads chunk `x` of rows `y + 16k`, `k = 0..4`; thread
        /// `t = 16y + x` one more: chunk 16 of row `t` for `t < 64 + lead_max` (when that
        /// row is shifted), chunk `u % 16` of row `64 + u / 16` for `u = t - 128 <
        /// 16 lead_max`. Stores: chunk `x` of output rows `col0 + y + 16k`.
        ///
        /// # Safety
        /// As the kernel; [`AnyTile::interior`] holds; `tx, ty < 16`.
        #[inline(always)]
        unsafe fn interior_transpose(
            &self,
            a: *const f32,
            b: *mut f32,
            tile: &AnyShared,
            tx: u32,
            ty: u32,
        ) {
            const STEP: u32 = VEC4_THREADS;
            const N: u32 = VEC4_TILE;
            let t = STEP * ty + tx;
            // Segment i's shift is (shift of segment 0 + i * row length) % 4.
            let s_in0 = any_shape::shift(a.addr(), self.input_start(0));
            let cols32 = self.cols as u32;
            let s_in = |i: u32| (s_in0 + i * cols32) % 4;
            // Element offset of chunk `j` of input segment `i`, whose shift is `s`: inside the
            // matrix (`interior`), 16-byte aligned by the definition of the shift.
            let chunk_in =
                |i: u32, j: u32, s: u32| self.input_start(i) + (4 * j) as usize - s as usize;
            let load = |i: u32, j: u32, s: u32| {
                // SAFETY: see `chunk_in`.
                unsafe { load_global_v4(a.add(chunk_in(i, j, s))) }
            };
            let (i0, i1, i2, i3) = (ty, ty + STEP, ty + 2 * STEP, ty + 3 * STEP);
            let (s0, s1, s2, s3) = (s_in(i0), s_in(i1), s_in(i2), s_in(i3));
            let v0 = load(i0, tx, s0);
            let v1 = load(i1, tx, s1);
            let v2 = load(i2, tx, s2);
            let v3 = load(i3, tx, s3);
            // The fifth chunk: chunk 16 of row `t` (threads below 128), or a chunk of the
            // rows past the 64th (threads from 128 on).
            let u = t.wrapping_sub(2 * N);
            let (i4, j4) = if t < 2 * N {
                (t, 16)
            } else {
                (N + u / 16, u % 16)
            };
            let s4 = s_in(i4);
            let has4 = if t < 2 * N {
                t < N + self.lead_max && s4 > 0
            } else {
                u < 16 * self.lead_max
            };
            let v4 = if has4 { load(i4, j4, s4) } else { [0.0; 4] };
            // SAFETY (places): segments `i0..i3` and `i4 < 64 + lead_max <= 71`, one writer
            // per element (`any_shape::slot`'s pairs, restricted to the interior).
            unsafe {
                Self::place_chunk(tile, i0, tx, s0, N, v0);
                Self::place_chunk(tile, i1, tx, s1, N, v1);
                Self::place_chunk(tile, i2, tx, s2, N, v2);
                Self::place_chunk(tile, i3, tx, s3, N, v3);
                if has4 {
                    Self::place_chunk(tile, i4, j4, s4, N, v4);
                }
            }
            syncthreads();
            // Output row col0 + i takes tile column i, rows lead(i) .. lead(i) + 64: chunk
            // `tx` is tile rows `lead + 4 tx .. + 4`.
            let gather = |i: u32| {
                let r = self.lead(i) + 4 * tx;
                let mut v = [0.0f32; 4];
                for (q, x) in (0..4).zip(v.iter_mut()) {
                    // SAFETY: `r + q < 7 + 64 = 71` rows, `i < 64`: inside the tile, staged
                    // before the barrier (`lead <= lead_max`).
                    *x = unsafe { tile.read_unchecked(((r + q) * Self::PITCH + i) as usize) };
                }
                (v, r)
            };
            let (w0, r0) = gather(i0);
            let (w1, r1) = gather(i1);
            let (w2, r2) = gather(i2);
            let (w3, r3) = gather(i3);
            let out =
                |i: u32, r: u32| (self.col0 + i as usize) * self.rows + self.row0 + r as usize;
            // SAFETY: each chunk `out(i, r) .. + 4` lies in this block's span of output row
            // `col0 + i` (rows `row0 + lead .. row0 + 64 + lead`, inside the matrix by
            // `interior`), 16-byte aligned as the span starts on a 32-byte boundary.
            unsafe {
                store_global_v4(b.add(out(i0, r0)), w0);
                store_global_v4(b.add(out(i1, r1)), w1);
                store_global_v4(b.add(out(i2, r2)), w2);
                store_global_v4(b.add(out(i3, r3)), w3);
            }
        }

        /// Writes the elements of chunk `j` (shift `s`) that lie in segment `i` of `len`
        /// elements to `tile[i][position]` ([`any_shape::position`]).
        ///
        /// # Safety
        /// `i < 71`, `len <= 64`; no other thread writes those elements before the next
        /// barrier.
        #[inline(always)]
        unsafe fn place_chunk(tile: &AnyShared, i: u32, j: u32, s: u32, len: u32, v: [f32; 4]) {
            for (q, &x) in (0..4).zip(v.iter()) {
                if let Some(p) = any_shape::position(j, q, s, len) {
                    // SAFETY: `i < 71`, `p < 64`: inside the 71 x 65 tile; one writer (caller).
                    unsafe { tile.write_unchecked((i * Self::PITCH + p) as usize, x) };
                }
            }
        }

        /// First element of input segment `i` (input row `row0 + i`, from column `col0`).
        #[inline(always)]
        fn input_start(&self, i: u32) -> usize {
            (self.row0 + i as usize) * self.cols + self.col0
        }

        /// Chunk `j` of input segment `i` for `slot = Some((i, j))` (zeros where not read).
        ///
        /// # Safety
        /// `a` holds `rows * cols` floats at a 4-byte aligned address.
        #[inline(always)]
        unsafe fn load(&self, a: *const f32, slot: Option<(u32, u32)>) -> [f32; 4] {
            let mut v = [0.0f32; 4];
            let Some((i, j)) = slot else { return v };
            if i >= self.staged {
                return v;
            }
            let start = self.input_start(i);
            let s = any_shape::shift(a.addr(), start);
            match any_shape::access(j, s, self.width, start, self.rows * self.cols) {
                Access::Vector => {
                    // SAFETY: `access` checked `start + 4j - s .. + 4` lies inside the
                    // matrix; the address is 16-byte aligned by the definition of `s`.
                    v = unsafe { load_global_v4(a.add(start + 4 * j as usize - s as usize)) };
                }
                Access::Scalar => {
                    for (q, x) in (0..4).zip(v.iter_mut()) {
                        if let Some(p) = any_shape::position(j, q, s, self.width) {
                            // SAFETY: position `p < width` of the segment: inside the matrix.
                            *x = unsafe { *a.add(start + p as usize) };
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
            slot: Option<(u32, u32)>,
            v: [f32; 4],
        ) {
            let Some((i, j)) = slot else { return };
            if i >= self.staged {
                return;
            }
            let s = any_shape::shift(a.addr(), self.input_start(i));
            // SAFETY: `i < staged <= 71`, `width <= 64`; one writer per element (caller).
            unsafe { Self::place_chunk(tile, i, j, s, self.width, v) }
        }

        /// This tile's span of output row `col0 + i` ([`any_shape::output_span`]): its first
        /// element in `b`, its first tile row, its length and its shift; `None` when empty.
        #[inline(always)]
        fn output_segment(&self, b: *mut f32, i: u32) -> Option<(usize, u32, u32, u32)> {
            let (first, end) = any_shape::output_span(self.row0, self.rows, self.lead(i));
            if first >= end {
                return None;
            }
            let start = (self.col0 + i as usize) * self.rows + first;
            let s = any_shape::shift(b.addr(), start);
            Some((start, (first - self.row0) as u32, (end - first) as u32, s))
        }

        /// The elements of chunk `j` of output segment `i` for `slot = Some((i, j))`, read
        /// from `tile[off + position][i]` (zeros where the chunk leaves the segment).
        ///
        /// # Safety
        /// The tile was filled (every [`AnyTile::place`] of the block) before a barrier.
        #[inline(always)]
        unsafe fn gather(
            &self,
            tile: &AnyShared,
            b: *mut f32,
            slot: Option<(u32, u32)>,
        ) -> [f32; 4] {
            let mut v = [0.0f32; 4];
            let Some((i, j)) = slot else { return v };
            if i >= self.width {
                return v;
            }
            let Some((_, off, len, s)) = self.output_segment(b, i) else {
                return v;
            };
            for (q, x) in (0..4).zip(v.iter_mut()) {
                if let Some(p) = any_shape::position(j, q, s, len) {
                    // SAFETY: `off + p < staged <= 71` (the span lies in the staged rows),
                    // `i < width <= 64`: inside the tile, written before the barrier.
                    *x = unsafe { tile.read_unchecked(((off + p) * Self::PITCH + i) as usize) };
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
        /// writes inside this block's spans.
        #[inline(always)]
        unsafe fn store(&self, b: *mut f32, slot: Option<(u32, u32)>, v: [f32; 4]) {
            let Some((i, j)) = slot else { return };
            if i >= self.width {
                return;
            }
            let Some((start, _, len, s)) = self.output_segment(b, i) else {
                return;
            };
            // The span `start .. + len` is inside the matrix and this block's alone.
            match any_shape::access(j, s, len, 0, len as usize) {
                Access::Vector => {
                    // SAFETY: the chunk `start + 4j - s .. + 4` lies inside the span; 16-byte
                    // aligned by the definition of `s`.
                    unsafe { store_global_v4(b.add(start + 4 * j as usize - s as usize), v) };
                }
                Access::Scalar => {
                    for (q, &x) in (0..4).zip(v.iter()) {
                        if let Some(p) = any_shape::position(j, q, s, len) {
                            // SAFETY: `p < len`: inside the span.
                            unsafe { *b.add(start + p as usize) = x };
                        }
                    }
                }
                Access::Skip => {}
            }
        }
    }

    /// The transpose of a thin matrix (one side at most [`THIN_MAX`](super::THIN_MAX), both
    /// multiples of 4): each thread transposes 4 x 4 blocks of `float4`s in registers; at
    /// `s = 4` the short side's 16-byte rows pass through a warp-private shared-memory stage
    /// so that every warp access is 512 contiguous bytes. No block barrier.
    ///
    /// Algorithm: the matrix is cut into *cells* `a[4rg .. 4rg + 4][4cg .. 4cg + 4]`
    /// ([`thin`]). A thread holds its cell as four `float4`s
    /// `v[i] = a[4rg + i][4cg .. 4cg + 4]`, `i = 0..4`, and its output is the four `float4`s
    /// `b[4cg + q][4rg .. 4rg + 4] = (v[0][q], v[1][q], v[2][q], v[3][q])`, `q = 0..4`: the
    /// transpose of the 4 x 4 block is only a choice of registers. Each thread moves
    /// [`THIN_CELLS`](super::THIN_CELLS) cells (*rounds* `k`), `blockDim.y` long groups apart,
    /// all eight loads issued before the first store (128 bytes in flight per thread).
    /// Against a 64 x 64 tile, which a thin matrix leaves mostly empty (256 elements per
    /// 256-thread block at 4 x N), every block moves about `THIN_CELLS * 16 * 256` elements
    /// whatever the short side.
    ///
    /// Thread mapping: `threadIdx.x` is the short side's group (`s/4` lanes, the fast index),
    /// `threadIdx.y` the long side's; consecutive lanes of one short group take consecutive
    /// long groups. Register path (`s >= 8`): a thread loads its cell's four input rows and
    /// stores its four output rows. Short-wide (`s = rows`): a load instruction reads `s/4`
    /// input rows, each `2048 / s` contiguous bytes; a store writes whole output rows (`4s`
    /// bytes each, `32 / (s/4)` of them, 4 rows apart). Tall-narrow (`s = cols`): the mirror
    /// image. With the short groups on the fastest lanes a warp moves whole short-side rows,
    /// and both sides fill whole 32-byte sectors (`s` = 8, 16, 32).
    ///
    /// Staged path (`s = 4`, [`Thin::staged`], with the block [`Thin::block`] = `(1, 256)`):
    /// one short group, so the lanes are consecutive long groups; the long side already moves
    /// 512 contiguous bytes per instruction, but the short side's rows are 16 bytes, a lane's
    /// cell there 64 contiguous bytes, and a per-cell access would touch 16 bytes of each of
    /// 32 sectors. Per round, a warp's 32 cells are 128 contiguous `float4` slots on the short
    /// side ([`Thin::region`]); lane `l` moves slots `l + 32j` (`j = 0..4`), 512 contiguous
    /// bytes per instruction, 16 whole sectors. Short-wide: lane `l` writes its cell's output
    /// rows to its warp's stage at slots `4l + q`, `syncwarp`, then reads and stores slots
    /// `l + 32j`. Tall-narrow: lane `l` loads slots `l + 32j` of both rounds, writes a round's
    /// to the stage, `syncwarp`, reads its cell's input rows (slots `4l + i`) and stores its
    /// output rows as the register path does. A `syncwarp` between the rounds orders round
    /// 0's reads before round 1's writes. A warp whose lane 0 has no cell leaves whole (no
    /// lane of it has one); every other warp's lanes all reach each `syncwarp`. Any other
    /// block shape at `s = 4` takes the register path (`syncwarp(FULL_MASK)` needs whole
    /// warps).
    ///
    /// Launch: block [`Thin::block`] `= (s/4, 256 / (s/4))`; grid
    /// `ceil((l/4) / (2 * blockDim.y))` blocks along x ([`Thin::blocks`]): one-dimensional, so
    /// no side meets `gridDim.y`'s 65535 limit (4194304 x 4 is 2048 blocks). Index arithmetic
    /// in 64 bits.
    ///
    /// Shared memory: 16 KiB static ([`thin::BLOCK_STAGE_SLOTS`] `float4`s: 2 KiB per warp,
    /// [`thin::STAGE_SLOTS`] slots; the register path does not touch it). Slot `t` sits at
    /// [`thin::stage_slot`]`(t) = t ^ ((t >> 3) & 3)`: both the cell-side (`4l + i`) and the
    /// region-side (`l + 32j`) 16-byte accesses are conflict-free (each octet of lanes on 8
    /// different 16-byte bank groups), checked by the CPU simulation. Only warp barriers
    /// (`bar.warp.sync`); no `bar.sync`.
    ///
    /// Parameters: `a` row-major `rows x cols`, `b` row-major `cols x rows`, `f32`.
    ///
    /// # Safety
    /// `a` and `b` hold `rows * cols` floats each, are 16-byte aligned and do not overlap;
    /// `rows` and `cols` are multiples of 4 (so every `float4` lies inside the matrix and on a
    /// 16-byte boundary) and `rows * cols` does not overflow. Any launch shape is memory-safe
    /// ([`Thin::cell`] gives each cell to at most one thread; the staged path runs only in
    /// its own block); [`Thin::block`] and [`Thin::blocks`] cover every cell.
    ///
    /// Performance: 8 bytes per element, memory-bound; 4 `ld.global.v4` and 4 `st.global.v4`
    /// per 16 elements, plus at `s = 4` 4 `st.v4` and 4 `ld.v4` to shared memory. About 8192
    /// elements (32 KiB read, 32 KiB written) per block. 62 registers on sm_90 (`cargo xtask
    /// ptx-report`; the register path alone took 48), so 4 blocks of 256 threads per SM, each
    /// thread with 128 bytes of loads in flight (128 KiB per SM). The expected limit is DRAM
    /// bandwidth: at `s = 4` the register path's 16-byte short-side accesses (stores of
    /// 4 x N, loads of N x 4) took 32 half sectors per instruction; 4 x 4194304 ran at 56.5%
    /// of the copy bandwidth on an H200 (4194304 x 4, whose half sectors were loads completed
    /// from L1, at 92.8%). The staged path makes every access 16 whole sectors.
    ///
    /// Source: this project, beyond the seed's five versions and NVIDIA's sample (which tiles
    /// every shape alike). The in-register 4 x 4 transpose of four vector rows is the SIMD
    /// idiom of `_MM_TRANSPOSE4_PS` (`xmmintrin.h`), here on `float4` loads and stores; the
    /// warp-private stage is the CUB `WarpExchange` idea (blocked to striped arrangement).
    #[kernel]
    pub unsafe fn transpose_thin_vec4(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let thin = Thin::new(rows, cols);
        let (x, y) = (thread_idx().x as usize, thread_idx().y as usize);
        let d = block_dim();
        // The staged path's `syncwarp(FULL_MASK)` needs whole warps: only with its own block
        // (`(1, 256)`, 8 whole warps); any other launch shape takes the register path below.
        if thin.staged() && (d.x, d.y, d.z) == (1, THIN_THREADS, 1) {
            // SAFETY: forwarded; the block is `(1, THIN_THREADS)`.
            unsafe { thin_staged(a, b, rows, cols, thin, block_idx().x as usize, y) };
            return;
        }
        let cell = |k| thin.cell(block_idx().x as usize, x, y, k);
        // Cell 1 lies `blockDim.y` long groups past cell 0: if cell 0 is past the matrix, so
        // is cell 1.
        let Some((rg0, cg0)) = cell(0) else { return };
        match cell(1) {
            Some((rg1, cg1)) => {
                // Both cells' loads first (8 float4 in flight per thread), then the stores
                // (`asm` that may write memory: no load could move below one).
                // SAFETY: cell 0 lies inside the matrix (`Thin::cell`); `a` as the contract.
                let v0 = unsafe { load_cell(a, cols, rg0, cg0) };
                // SAFETY: so does cell 1.
                let v1 = unsafe { load_cell(a, cols, rg1, cg1) };
                // SAFETY: cell 0 is this thread's alone (`Thin::cell`); `b` as the contract.
                unsafe { store_cell(b, rows, rg0, cg0, &v0) };
                // SAFETY: so is cell 1.
                unsafe { store_cell(b, rows, rg1, cg1, &v1) };
            }
            None => {
                // SAFETY: cell 0 lies inside the matrix; `a` as the contract.
                let v0 = unsafe { load_cell(a, cols, rg0, cg0) };
                // SAFETY: cell 0 is this thread's alone; `b` as the contract.
                unsafe { store_cell(b, rows, rg0, cg0, &v0) };
            }
        }
    }

    /// The cell `a[4rg .. 4rg + 4][4cg .. 4cg + 4]` of the `rows x cols` matrix `a` (row
    /// pitch `cols`), as four rows.
    ///
    /// # Safety
    /// `a` is 16-byte aligned and holds the matrix; `cols % 4 == 0`; the cell lies inside it.
    #[inline(always)]
    unsafe fn load_cell(a: *const f32, cols: usize, rg: usize, cg: usize) -> [[f32; 4]; 4] {
        let first = 4 * rg * cols + 4 * cg;
        core::array::from_fn(|i| {
            // SAFETY: row `4rg + i`, columns `4cg .. 4cg + 4`: inside the matrix; 16-byte
            // aligned, `cols` and `4cg` being multiples of 4 and `a` aligned.
            unsafe { load_global_v4(a.add(first + i * cols)) }
        })
    }

    /// Stores the transpose of cell `v` (rows of `a[4rg ..][4cg ..]`) to
    /// `b[4cg .. 4cg + 4][4rg .. 4rg + 4]` (row pitch `rows`): output row `4cg + q` gets
    /// column `q` of `v`.
    ///
    /// # Safety
    /// `b` is 16-byte aligned and holds the `cols x rows` output; `rows % 4 == 0`; the cell
    /// lies inside the matrix and no other thread writes it.
    #[inline(always)]
    unsafe fn store_cell(b: *mut f32, rows: usize, rg: usize, cg: usize, v: &[[f32; 4]; 4]) {
        let first = 4 * cg * rows + 4 * rg;
        for q in 0..4 {
            let column = v.map(|row| row[q]);
            // SAFETY: output row `4cg + q`, columns `4rg .. 4rg + 4`: inside the output,
            // 16-byte aligned (`rows`, `4rg` multiples of 4, `b` aligned), this thread's alone.
            unsafe { store_global_v4(b.add(first + q * rows), column) };
        }
    }

    /// Four floats, 16-byte aligned: a slot of [`transpose_thin_vec4`]'s stage, moved by one
    /// 16-byte shared access (`st.v4` / `ld.v4`).
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct Quad([f32; 4]);

    /// The staged path of [`transpose_thin_vec4`] (`s = 4`, block `(1, THIN_THREADS)`):
    /// every global access of a warp covers 32 consecutive `float4` slots, 512 contiguous
    /// bytes, on both sides ([`thin`]'s staged side).
    ///
    /// Short-wide (`4 x l`): the loads are the register path's (lane `l` reads its cell's
    /// four input rows; lanes on consecutive long groups: 512 contiguous bytes per row). Per
    /// cell round `k`, lane `l` writes its cell's output rows `4cg + q` to the warp's stage at
    /// slots `4l + q`; after `syncwarp` it stores slots `l + 32j` of the warp's output
    /// region. Tall-narrow (`l x 4`): lane `l` loads slots `l + 32j` of the warp's input
    /// region (both rounds' loads first), writes them to the stage; after `syncwarp` it reads
    /// its cell's input rows (slots `4l + i`) and stores them transposed as the register path
    /// does (512 contiguous bytes per output row). A second `syncwarp` separates round 0's
    /// reads from round 1's writes.
    ///
    /// # Safety
    /// As [`transpose_thin_vec4`]; the block is `(1, THIN_THREADS)` (whole warps, all of
    /// whose lanes reach every `syncwarp`), `thin = Thin::new(rows, cols)` with
    /// `thin.staged()`, `block` is `blockIdx.x` and `y` is `threadIdx.y`.
    #[inline(always)]
    unsafe fn thin_staged(
        a: *const f32,
        b: *mut f32,
        rows: usize,
        cols: usize,
        thin: Thin,
        block: usize,
        y: usize,
    ) {
        const W: usize = WARP_SIZE as usize;
        const ZERO: [[f32; 4]; 4] = [[0.0; 4]; 4];
        let stage = gpu_std::static_shared!(s_transpose_thin: [Quad; thin::BLOCK_STAGE_SLOTS]);
        let lane = y % W;
        let y0 = y - lane;
        // This warp's stage: slots `base .. base + STAGE_SLOTS`, no other warp's.
        let base = y0 / W * thin::STAGE_SLOTS;
        let at = |t: usize| base + thin::stage_slot(t);
        // Lane 0 holds the warp's first long group: without a cell 0 there, no lane has a
        // cell, and the whole warp leaves together (no `syncwarp` is left waiting).
        if thin.cell(block, 0, y0, 0).is_none() {
            return;
        }
        let own = |k| thin.cell(block, 0, y, k);
        // This lane's region slots `lane + 32j` of round `k`: `float4`s `4 * first + 4t` of
        // the short side's buffer, inside the matrix for `t < slots` (`Thin::region`).
        let region = |k| {
            let (first, slots) = thin.region(block, y0, k);
            (4 * first, slots)
        };
        if thin.short_rows {
            // Short-wide: all eight loads first (a lane without a cell holds zeros, staged
            // and never stored).
            // SAFETY: each cell lies inside the matrix (`Thin::cell`); `a` as the contract.
            let load = |k| own(k).map_or(ZERO, |(rg, cg)| unsafe { load_cell(a, cols, rg, cg) });
            let (v0, v1) = (load(0), load(1));
            let round = |k, v: &[[f32; 4]; 4]| {
                for q in 0..4 {
                    // SAFETY: slot `4 lane + q` of this warp's stage, this lane's alone; the
                    // previous round's reads ended at the `syncwarp` before this round.
                    unsafe { stage.write(at(4 * lane + q), Quad(v.map(|row| row[q]))) };
                }
                syncwarp(FULL_MASK);
                let (first, slots) = region(k);
                for j in 0..4 {
                    let t = thin::region_slot(lane, j);
                    if t < slots {
                        // SAFETY: written by lane `t / 4` before the `syncwarp`.
                        let Quad(row) = unsafe { stage.read(at(t)) };
                        // SAFETY: output row `first / 4 + t` (4 floats, `rows = 4`) of a cell
                        // inside the matrix (`Thin::region`), 16-byte aligned (`b` aligned),
                        // stored by this lane alone.
                        unsafe { store_global_v4(b.add(first + 4 * t), row) };
                    }
                }
            };
            round(0, &v0);
            syncwarp(FULL_MASK);
            round(1, &v1);
        } else {
            // Tall-narrow: all eight loads first, slots `lane + 32j` of both rounds' regions.
            let load = |k| {
                let (first, slots) = region(k);
                let slot = |j| {
                    let t = thin::region_slot(lane, j);
                    if t < slots {
                        // SAFETY: input row `first / 4 + t` (4 floats, `cols = 4`) of a cell
                        // inside the matrix (`Thin::region`); 16-byte aligned (`a` aligned).
                        unsafe { load_global_v4(a.add(first + 4 * t)) }
                    } else {
                        [0.0; 4]
                    }
                };
                [slot(0), slot(1), slot(2), slot(3)]
            };
            let (r0, r1) = (load(0), load(1));
            let round = |k, r: &[[f32; 4]; 4]| {
                for (j, &row) in r.iter().enumerate() {
                    // SAFETY: slot `lane + 32j` of this warp's stage, this lane's alone; the
                    // previous round's reads ended at the `syncwarp` before this round.
                    unsafe { stage.write(at(thin::region_slot(lane, j)), Quad(row)) };
                }
                syncwarp(FULL_MASK);
                if let Some((rg, cg)) = own(k) {
                    let v: [[f32; 4]; 4] = core::array::from_fn(|i| {
                        // SAFETY: slot `4 lane + i`, written before the `syncwarp`.
                        unsafe { stage.read(at(4 * lane + i)) }.0
                    });
                    // SAFETY: the cell lies inside the matrix and is this lane's alone; `b` as
                    // the contract.
                    unsafe { store_cell(b, rows, rg, cg, &v) };
                }
            };
            round(0, &r0);
            syncwarp(FULL_MASK);
            round(1, &r1);
        }
    }
}
