//! The geometry of [`transpose_tiled_vec4_any`](kernels::transpose_tiled_vec4_any), shared by
//! the kernel and the host's simulation of it (this module's tests), which checks on any
//! machine that every element is read inside the matrix, written exactly once, and that every
//! 16-byte access is aligned.
//!
//! A *segment* is the part of one matrix row that one tile covers: `len` consecutive
//! elements starting at element `start` of a buffer whose first element sits at the byte
//! address `base` (a multiple of 4: any element offset of an allocation). The segment's *shift*
//! `s` (0 to 3) is how many elements its first element lies past a 16-byte boundary. The
//! 16-byte-aligned *chunks* `j = 0, 1, ..` cover it: chunk `j` holds the segment positions
//! `4j - s .. 4j - s + 4`, so chunk 0 may begin up to 3 elements before the segment and the
//! last may end up to 3 elements after it.
//!
//! *Input segments* are rectangular: the tile at `(row0, col0)` covers columns
//! `col0 .. col0 + 64` of each of its input rows (17 chunks when shifted).
//!
//! *Output segments* are a parallelogram: output row `c` (input column `c`) is split at the
//! rows `64k + lead`, where the *lead* `0..8` ([`lead`]) puts every split on a 32-byte boundary
//! of `b`. The tile at `row0 = 64k` writes rows `64k + lead .. 64k + 64 + lead` of it (from
//! row 0 for `k = 0`, up to `rows` for the last tile: [`output_span`]), so all its output
//! segments but the matrix's first and last start and end on whole 32-byte sectors: no
//! partial chunk, no sector shared by two blocks. The tile stages the input rows
//! `row0 .. row0 + 71` ([`STAGED_ROWS`]) those segments need.
//!
//! The kernel is [`kernels::transpose_tiled_vec4_any`] (device build only). The tests run its
//! general path's plan on the CPU, block by block and thread by thread.

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

/// The shapes the any-shape plan is simulated on in the unit tests (odd sides, single rows and
/// columns, partial tiles); `cpu`'s tests check its launch configuration on the same shapes.
#[doc(hidden)]
pub const PLAN_SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (1, 1000),
    (1000, 1),
    (5, 5),
    (3, 8191),
    (8193, 7),
    (63, 65),
    (65, 63),
    (127, 129),
    (1001, 3),
    (64, 64),
    (68, 36),
    (130, 67),
];

/// The kernel (device build only).
pub mod kernels {
    use crate::transpose::any_shape::{self, Access};
    use crate::transpose::{VEC4_THREADS, VEC4_TILE};
    use gpu_std::kernel;
    use gpu_std::{block_idx, load_global_v4, store_global_v4, syncthreads, thread_idx};

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
    ///
    /// [`transpose_tiled_vec4`]: crate::transpose::tiled::transpose_tiled_vec4
    #[kernel]
    pub unsafe fn transpose_tiled_vec4_any(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
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
}

// The geometry checked on the host, and the general path's plan run on the CPU.
#[cfg(test)]
mod tests {
    use std::{vec, vec::Vec};

    use super::*;
    use crate::transpose::reference;

    #[test]
    fn any_shape_slots_cover_each_chunk_once() {
        let staged = STAGED_ROWS as usize;
        let mut seen = vec![0u32; staged * OUT_CHUNKS];
        for y in 0..16 {
            for x in 0..16 {
                for k in 0..SLOTS as u32 {
                    if let Some((i, j)) = slot(k, x, y) {
                        seen[i as usize * OUT_CHUNKS + j as usize] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
    }

    #[test]
    fn any_shape_leads_put_spans_on_sectors() {
        for rows in [1, 2, 3, 4, 6, 8, 12, 64, 71, 8191, 8192, 8196] {
            for base in (0..32).map(|e| 0x100 + 4 * e) {
                let leads: Vec<u32> = (0..16).map(|c| lead(base, c * rows)).collect();
                assert_eq!(
                    leads.iter().max().copied(),
                    Some(lead_max(leads[0], rows)),
                    "rows {rows} base {base:#x}"
                );
                for (c, &l) in leads.iter().enumerate() {
                    assert!(l < SECTOR);
                    let row0 = 64;
                    let (first, end) = output_span(row0, 1 << 20, l);
                    assert_eq!((base + 4 * (c * rows + first)) % 32, 0);
                    assert_eq!((base + 4 * (c * rows + end)) % 32, 0);
                    assert!(end - row0 <= STAGED_ROWS as usize);
                }
            }
        }
    }

    /// Every thread `(x, y)` of a 16 x 16 block with each of its slots `k`, as `(y, x, k)`.
    fn threads() -> impl Iterator<Item = (u32, u32, u32)> {
        let slots = SLOTS as u32;
        (0..16).flat_map(move |y| (0..16).flat_map(move |x| (0..slots).map(move |k| (y, x, k))))
    }

    /// Elements a simulated launch moved with 16-byte and with 4-byte accesses.
    #[derive(Debug, Default)]
    struct Moved {
        vector_loads: usize,
        scalar_loads: usize,
        vector_stores: usize,
        scalar_stores: usize,
    }

    /// `transpose_tiled_vec4_any` on the CPU, block by block and thread by thread, with the
    /// geometry the kernel's general path uses (this module's), on the launch of [`tiles`]
    /// blocks of 16 x 16 threads (the launcher's: `cpu::transpose`'s tests check it): the
    /// input view starts `in_offset` floats and the output view `out_offset` floats into
    /// 256-byte aligned allocations. Checks that every read lies inside the input view, every
    /// 16-byte access is aligned, every tile slot read was written once, every output element
    /// is written exactly once by the block whose span holds it; returns the output and the
    /// access counts.
    fn simulate_any(
        input: &[f32],
        rows: usize,
        cols: usize,
        in_offset: usize,
        out_offset: usize,
    ) -> (Vec<f32>, Moved) {
        const N: usize = 64;
        const PITCH: usize = N + 1;
        let n = rows * cols;
        let (a, b) = (0x1000 + 4 * in_offset, 0x9_0000 + 4 * out_offset);
        let mut out = vec![f32::NAN; n];
        let mut writes = vec![0u8; n];
        let mut moved = Moved::default();
        for block in 0..tiles(rows, cols) {
            let (row0, col0) = tile_origin(block as u32, rows);
            let lead_of = |i: usize| lead(b, (col0 + i) * rows);
            let most = lead_max(lead_of(0), rows) as usize;
            let (staged, width) = ((rows - row0).min(N + most), (cols - col0).min(N));
            assert!(staged <= STAGED_ROWS as usize);
            let width32 = width as u32;
            let mut tile: Vec<Option<f32>> = vec![None; STAGED_ROWS as usize * PITCH];
            for (ty, tx, k) in threads() {
                let Some((i, j)) = slot(k, tx, ty) else {
                    continue;
                };
                let (i, j) = (i as usize, j as usize);
                if i >= staged {
                    continue;
                }
                let start = (row0 + i) * cols + col0;
                let s = shift(a, start);
                let mut v = [None; 4];
                match access(j as u32, s, width32, start, n) {
                    Access::Vector => {
                        let first = start + 4 * j - s as usize;
                        assert_eq!((a + 4 * first) % 16, 0, "misaligned load");
                        assert!(first + 4 <= n, "load past the matrix");
                        for (q, x) in v.iter_mut().enumerate() {
                            *x = Some(input[first + q]);
                        }
                        moved.vector_loads += 4;
                    }
                    Access::Scalar => {
                        for (q, x) in (0..4).zip(v.iter_mut()) {
                            if let Some(p) = position(j as u32, q, s, width32) {
                                *x = Some(input[start + p as usize]);
                                moved.scalar_loads += 1;
                            }
                        }
                    }
                    Access::Skip => {}
                }
                for (q, x) in (0..4).zip(v.iter()) {
                    if let Some(p) = position(j as u32, q, s, width32) {
                        let slot = &mut tile[i * PITCH + p as usize];
                        assert!(slot.is_none(), "tile[{i}][{p}] written twice");
                        *slot = Some(x.expect("placed an element that was not loaded"));
                    }
                }
            }
            for (ty, tx, k) in threads() {
                let Some((i, j)) = slot(k, tx, ty) else {
                    continue;
                };
                let (i, j) = (i as usize, j as usize);
                if i >= width {
                    continue;
                }
                let (first, end) = output_span(row0, rows, lead_of(i));
                if first >= end {
                    continue;
                }
                let (len, off) = ((end - first) as u32, first - row0);
                let start = (col0 + i) * rows + first;
                let s = shift(b, start);
                let mut store = |p: usize| {
                    assert!(p < len as usize, "store outside the span");
                    writes[start + p] += 1;
                    out[start + p] =
                        tile[(off + p) * PITCH + i].expect("read a tile slot never written");
                };
                match access(j as u32, s, len, 0, len as usize) {
                    Access::Vector => {
                        let p = 4 * j - s as usize;
                        assert_eq!((b + 4 * (start + p)) % 16, 0, "misaligned store");
                        for q in 0..4 {
                            store(p + q);
                        }
                        moved.vector_stores += 4;
                    }
                    Access::Scalar => {
                        for q in 0..4 {
                            if let Some(p) = position(j as u32, q, s, len) {
                                store(p as usize);
                                moved.scalar_stores += 1;
                            }
                        }
                    }
                    Access::Skip => {}
                }
            }
        }
        assert!(
            writes.iter().all(|&w| w == 1),
            "an element not written exactly once"
        );
        (out, moved)
    }

    #[test]
    fn any_shape_tiles_walk_down_columns() {
        // Column of tiles after column of tiles: 8191 rows are 128 tiles down.
        assert_eq!(tile_origin(1, 8191), (64, 0));
        assert_eq!(tile_origin(127, 8191), (127 * 64, 0));
        assert_eq!(tile_origin(128, 8191), (0, 64));
        assert_eq!(tile_origin(130, 8191), (128, 64));
    }

    #[test]
    fn any_shape_plan_is_exact_at_every_offset() {
        for &(rows, cols) in PLAN_SHAPES {
            let input: Vec<f32> = (0..rows * cols).map(|e| e as f32).collect();
            let expected = reference(&input, rows, cols);
            for in_offset in 0..4 {
                for out_offset in 0..4 {
                    let (got, _) = simulate_any(&input, rows, cols, in_offset, out_offset);
                    assert!(
                        got == expected,
                        "{rows}x{cols} in+{in_offset} out+{out_offset}"
                    );
                }
            }
        }
    }

    #[test]
    fn any_shape_moves_almost_everything_in_16_byte_accesses() {
        let (rows, cols) = (1025, 1027);
        let input: Vec<f32> = (0..rows * cols).map(|e| e as f32).collect();
        let (got, m) = simulate_any(&input, rows, cols, 1, 3);
        assert!(got == reference(&input, rows, cols));
        let n = rows * cols;
        // Loads: every chunk inside the matrix is read whole (the first and last may not be).
        assert!(m.scalar_loads <= 6, "{m:?}");
        // Stores: spans start and end on 32-byte boundaries, so only an output row's two
        // ends (at most 3 + 3 elements) are stored element by element.
        assert!(m.scalar_stores <= 6 * cols, "{m:?}");
        assert_eq!(m.vector_stores + m.scalar_stores, n);
        // Aligned multiples of 4: nothing but float4s. Output rows of 132 floats alternate
        // leads 0 and 4, so the tiles stage 4 rows more than their 64 (read twice, the
        // second time from L2); rows of a multiple of 8 floats on an aligned `b` have lead
        // 0, and the tile moves exactly transpose_tiled_vec4's float4s.
        for (rows, extra) in [(132, 4), (136, 0)] {
            let cols = 200;
            let input: Vec<f32> = (0..rows * cols).map(|e| e as f32).collect();
            let (_, m) = simulate_any(&input, rows, cols, 4, 0);
            assert_eq!((m.scalar_loads, m.scalar_stores), (0, 0), "{m:?}");
            let restaged = (rows.div_ceil(64) - 1) * extra * cols;
            assert_eq!(
                (m.vector_loads, m.vector_stores),
                (rows * cols + restaged, rows * cols)
            );
        }
    }
}
