//! The geometry of [`transpose_thin_vec4`](kernels::transpose_thin_vec4), shared by the
//! kernel, its launcher and the host's simulation of it (this module's tests).
//!
//! A thin matrix has a *short* side `s = min(rows, cols) <= THIN_MAX` and a *long* side `l`,
//! both multiples of 4 (`s = rows` when `rows <= cols`). It is cut into *cells*, 4 x 4 blocks
//! at row group `rg` and column group `cg`: `a[4rg .. 4rg + 4][4cg .. 4cg + 4]`. A thread
//! loads a cell as four `float4` rows, transposes it in registers and stores four `float4`
//! rows of the output `b[4cg .. 4cg + 4][4rg .. 4rg + 4]`.
//!
//! Threads: `threadIdx.x` is the cell's group along the short side (`s / 4` of them, 1 to 8:
//! the fast index), `threadIdx.y` its group along the long side. A warp thus holds whole
//! short-side extents of `32 / (s/4)` consecutive long groups: on the side of the matrix whose
//! rows are the short side (the output of a short-wide matrix, the input of a tall-narrow
//! one) each long group is one row of `4s` contiguous bytes, and the warp's rows for one
//! instruction are 4 rows apart; on the other side it touches `s/4` rows, each `512 / (s/4)`
//! contiguous bytes.
//!
//! Sectors: when `s/4` divides 32 (`s` = 8, 16, 32) every warp access fills whole 32-byte
//! sectors on both sides. For `s` = 12, 20, 24, 28 a warp's lanes do not split into whole
//! long groups, so the ends of its contiguous runs may share a sector with the next warp's.
//!
//! *Staged* side (`s = 4`, [`Thin::staged`]): there the short side's rows are 16 bytes, so
//! a lane's own cell is 64 contiguous bytes on that side and a warp instruction over the
//! lanes' own cells would touch 16 bytes of each of 32 sectors. Instead the 32 cells of a
//! warp (one cell round `k`) are 128 contiguous `float4` *slots* `t = 0..128` on that side
//! (slot `t` is row `t % 4` of the cell of lane `t / 4`, [`Thin::slot_cell`]), and lane `l`
//! moves slots `l + 32j`, `j = 0..4` ([`region_slot`]): 512 contiguous bytes per
//! instruction. The slots pass through the warp's 2 KiB of shared memory
//! ([`STAGE_SLOTS`]), at the swizzled positions [`stage_slot`]: the short-wide output is
//! staged before its stores, the tall-narrow input after its loads.
//!
//! The kernel is [`kernels::transpose_thin_vec4`] (device build only). The tests run its plan
//! on the CPU, warp by warp in its instruction order.

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
    pub fn slot_cell(&self, block: usize, y0: usize, t: usize, k: usize) -> Option<(usize, usize)> {
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

/// The shapes the thin plan is simulated on in the unit tests (thin and square multiples of 4,
/// up to and past [`THIN_MAX`](super::THIN_MAX)); `cpu`'s tests check its launch configuration on
/// the same shapes.
#[doc(hidden)]
pub const PLAN_SHAPES: &[(usize, usize)] = &[
    (4, 4),
    (4, 8),
    (8, 4),
    (4, 1000),
    (1000, 4),
    (16, 4092),
    (4092, 16),
    (12, 1000),
    (1000, 12),
    (20, 20),
    (28, 8),
    (24, 2052),
    (2052, 24),
    (THIN_MAX, THIN_MAX),
    (THIN_MAX, 4100),
    (4100, THIN_MAX),
    (THIN_MAX, THIN_MAX + 4),
    (THIN_MAX + 4, THIN_MAX),
    (4, 4096 + 4),
    (4, 3236),
    (3236, 4),
    (4, 4 * 512 * 3),
    (4 * 512 * 3, 4),
];

/// The kernel (device build only).
pub mod kernels {
    use crate::transpose::THIN_THREADS;
    use crate::transpose::thin::{self, Thin};
    use gpu_std::kernel;
    use gpu_std::{
        FULL_MASK, WARP_SIZE, block_dim, block_idx, load_global_v4, store_global_v4, syncwarp,
        thread_idx,
    };

    /// The transpose of a thin matrix (one side at most
    /// [`THIN_MAX`](crate::transpose::THIN_MAX), both multiples of 4): each thread transposes
    /// 4 x 4 blocks of `float4`s in registers; at `s = 4` the short side's 16-byte rows pass
    /// through a warp-private shared-memory stage so that every warp access is 512 contiguous
    /// bytes. No block barrier.
    ///
    /// Algorithm: the matrix is cut into *cells* `a[4rg .. 4rg + 4][4cg .. 4cg + 4]`
    /// ([`thin`]). A thread holds its cell as four `float4`s
    /// `v[i] = a[4rg + i][4cg .. 4cg + 4]`, `i = 0..4`, and its output is the four `float4`s
    /// `b[4cg + q][4rg .. 4rg + 4] = (v[0][q], v[1][q], v[2][q], v[3][q])`, `q = 0..4`: the
    /// transpose of the 4 x 4 block is only a choice of registers. Each thread moves
    /// [`THIN_CELLS`](crate::transpose::THIN_CELLS) cells (*rounds* `k`), `blockDim.y` long
    /// groups apart, all eight loads issued before the first store (128 bytes in flight per
    /// thread).
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
    pub unsafe fn transpose_thin_vec4(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
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

// The kernel's plan run on the CPU, warp by warp in its instruction order.
#[cfg(test)]
mod tests {
    use std::{vec, vec::Vec};

    use super::*;
    use crate::transpose::reference;

    /// One warp instruction of a simulated `transpose_thin_vec4` launch: the byte offsets of
    /// its lanes' 16-byte accesses in the input (loads) or output (stores) buffer.
    #[derive(Debug)]
    struct WarpAccess {
        store: bool,
        /// Whether all 32 lanes of the warp take part.
        full: bool,
        offsets: Vec<usize>,
    }

    impl WarpAccess {
        /// 32-byte sectors touched, and whether each is filled whole by this instruction.
        fn sectors(&self) -> (usize, bool) {
            let mut bytes = std::collections::BTreeMap::<usize, usize>::new();
            for &o in &self.offsets {
                *bytes.entry(o / 32).or_default() += 16;
            }
            (bytes.len(), bytes.values().all(|&b| b == 32))
        }
    }

    /// One `float4` store of the thin kernel, simulated: output row `4 cg + q` of the 4 x 4
    /// cell `(rg, cg)` whose input rows are `v`, written into `out` (counted in `writes`) after
    /// the bounds and alignment checks; returns the store's byte offset.
    fn store_cell_row(
        out: &mut [f32],
        writes: &mut [u8],
        rows: usize,
        cols: usize,
        (rg, cg, v): (usize, usize, &[[f32; 4]; 4]),
        q: usize,
    ) -> usize {
        let (r, c) = (4 * cg + q, 4 * rg);
        assert!(r < cols && c + 4 <= rows, "store outside the output");
        let e = r * rows + c;
        assert_eq!((4 * e) % 16, 0, "misaligned store");
        for (p, row) in v.iter().enumerate() {
            out[e + p] = row[q];
            writes[e + p] += 1;
        }
        4 * e
    }

    /// `transpose_thin_vec4` on the CPU, block by block, warp by warp, in the kernel's
    /// instruction order, with the geometry the kernel uses (this module's), on the launch
    /// [`Thin::block`], [`Thin::blocks`] (the launcher's: `cpu::transpose`'s tests check
    /// it). Checks that every `float4` lies inside its matrix and is 16-byte aligned (buffers
    /// at offset 0 of an allocation), every output element is written exactly once; returns
    /// the output and every warp instruction.
    fn simulate_thin(input: &[f32], rows: usize, cols: usize) -> (Vec<f32>, Vec<WarpAccess>) {
        let n = rows * cols;
        let thin = Thin::new(rows, cols);
        let (bx, by) = thin.block();
        let (bx, threads) = (bx as usize, (bx * by) as usize);
        let mut out = vec![f32::NAN; n];
        let mut writes = vec![0u8; n];
        let mut accesses = Vec::new();
        // s = 4: the staged path; its blocks are simulated there, none here.
        let register_blocks = if thin.staged() {
            simulate_thin_staged(input, rows, cols, &mut out, &mut writes, &mut accesses);
            0
        } else {
            thin.blocks()
        };
        for block in 0..register_blocks {
            for warp in 0..threads.div_ceil(32) {
                let lanes: Vec<(usize, usize)> = (32 * warp..threads.min(32 * warp + 32))
                    .map(|t| (t % bx, t / bx))
                    .collect();
                let cells = |k| lanes.iter().map(move |&(x, y)| thin.cell(block, x, y, k));
                let mut held = vec![[[0.0f32; 4]; 4]; lanes.len() * THIN_CELLS];
                for k in 0..THIN_CELLS {
                    let full = lanes.len() == 32 && cells(k).all(|c| c.is_some());
                    // One instruction per row `i` of the cell.
                    let mut offsets: [Vec<usize>; 4] = Default::default();
                    for (lane, cell) in cells(k).enumerate() {
                        let Some((rg, cg)) = cell else { continue };
                        let rows_held = &mut held[lane * THIN_CELLS + k];
                        for (i, (row, offsets)) in
                            rows_held.iter_mut().zip(&mut offsets).enumerate()
                        {
                            let (r, c) = (4 * rg + i, 4 * cg);
                            assert!(r < rows && c + 4 <= cols, "load outside the matrix");
                            let e = r * cols + c;
                            assert_eq!((4 * e) % 16, 0, "misaligned load");
                            row.copy_from_slice(&input[e..e + 4]);
                            offsets.push(4 * e);
                        }
                    }
                    accesses.extend(offsets.map(|offsets| WarpAccess {
                        store: false,
                        full,
                        offsets,
                    }));
                }
                for k in 0..THIN_CELLS {
                    let full = lanes.len() == 32 && cells(k).all(|c| c.is_some());
                    // One instruction per output row `4cg + q`.
                    let mut offsets: [Vec<usize>; 4] = Default::default();
                    for (lane, cell) in cells(k).enumerate() {
                        let Some((rg, cg)) = cell else { continue };
                        let v = &held[lane * THIN_CELLS + k];
                        for (q, offsets) in offsets.iter_mut().enumerate() {
                            let cell = (rg, cg, v);
                            offsets.push(store_cell_row(
                                &mut out,
                                &mut writes,
                                rows,
                                cols,
                                cell,
                                q,
                            ));
                        }
                    }
                    accesses.extend(offsets.map(|offsets| WarpAccess {
                        store: true,
                        full,
                        offsets,
                    }));
                }
            }
        }
        assert!(
            writes.iter().all(|&w| w == 1),
            "an element not written exactly once"
        );
        (out, accesses)
    }

    /// Checks that one warp instruction's 16-byte shared accesses, at the given stage
    /// positions (`None`: lane not taking part), are conflict-free: served 8 lanes at a time,
    /// each octet's positions differ modulo 8 (8 x 16 bytes span the 32 banks once).
    fn assert_conflict_free(positions: &[Option<usize>]) {
        for octet in positions.chunks(8) {
            let mut banks = [false; 8];
            for &p in octet.iter().flatten() {
                assert!(!banks[p % 8], "bank conflict: {positions:?}");
                banks[p % 8] = true;
            }
        }
    }

    /// The staged path of `transpose_thin_vec4` (`s = 4`), block by block, warp by warp, in
    /// the kernel's instruction order, with the geometry the kernel uses
    /// (`Thin::region`, `region_slot`, `stage_slot`): all loads first, then per cell round
    /// the stage writes, `syncwarp`, the stage reads and the stores. Checks, besides what
    /// [`simulate_thin`] checks, that `Thin::region`'s slots are the rows of
    /// `Thin::slot_cell`'s cells, that every stage read finds what this round's writer put
    /// there (the lane and round it expects), that no two lanes write one stage position in a
    /// round, and that every shared access is free of bank conflicts.
    fn simulate_thin_staged(
        input: &[f32],
        rows: usize,
        cols: usize,
        out: &mut [f32],
        writes: &mut [u8],
        accesses: &mut Vec<WarpAccess>,
    ) {
        let n = rows * cols;
        let thin = Thin::new(rows, cols);
        assert!(thin.staged() && thin.block() == (1, 256));
        let wide = thin.short_rows;
        // `float4` `f` of the short side's buffer (the output of a short-wide matrix, the input
        // of a tall-narrow one) as `(rg, cg, row of the cell on the short side)`.
        let slot_of = |block: usize, y0: usize, k: usize, t: usize| {
            let (first, slots) = thin.region(block, y0, k);
            (t < slots).then(|| {
                let (rg, cg) = thin
                    .slot_cell(block, y0, t, k)
                    .expect("a slot past the matrix");
                // Slot `t` is row `t % 4` (short side) of that cell: element offset
                // `4 (first + t)` in the short side's buffer.
                let e = if wide {
                    (4 * cg + t % 4) * rows + 4 * rg
                } else {
                    (4 * rg + t % 4) * cols + 4 * cg
                };
                assert_eq!(e, 4 * (first + t), "region and cells disagree");
                assert!(e + 4 <= n, "access outside the matrix");
                assert_eq!((4 * e) % 16, 0, "misaligned access");
                e
            })
        };
        for block in 0..thin.blocks() {
            for warp in 0..8 {
                let y0 = 32 * warp;
                if thin.cell(block, 0, y0, 0).is_none() {
                    // The kernel's warp-uniform early return.
                    assert!((0..32).all(|l| {
                        (0..THIN_CELLS).all(|k| thin.cell(block, 0, y0 + l, k).is_none())
                    }));
                    continue;
                }
                let own = |lane: usize, k| thin.cell(block, 0, y0 + lane, k);
                // Loads, both rounds, into per-lane registers `held[lane][k][i]`.
                let mut held = vec![[[[0.0f32; 4]; 4]; THIN_CELLS]; 32];
                for k in 0..THIN_CELLS {
                    for i in 0..4 {
                        let mut offsets = Vec::new();
                        for (lane, held) in held.iter_mut().enumerate() {
                            let e = if wide {
                                // The lane's own cell, input row `4rg + i` (`rg = 0`).
                                own(lane, k).map(|(rg, cg)| {
                                    let (r, c) = (4 * rg + i, 4 * cg);
                                    assert!(r < rows && c + 4 <= cols, "load outside");
                                    r * cols + c
                                })
                            } else {
                                slot_of(block, y0, k, region_slot(lane, i))
                            };
                            if let Some(e) = e {
                                assert_eq!((4 * e) % 16, 0, "misaligned load");
                                held[k][i].copy_from_slice(&input[e..e + 4]);
                                offsets.push(4 * e);
                            }
                        }
                        accesses.push(WarpAccess {
                            store: false,
                            full: offsets.len() == 32,
                            offsets,
                        });
                    }
                }
                for k in 0..THIN_CELLS {
                    // The stage: per position, (writer lane, contents); cleared per round
                    // (the `syncwarp` between rounds orders reads before rewrites).
                    let mut stage: Vec<Option<(usize, [f32; 4])>> = vec![None; STAGE_SLOTS];
                    // Writes: short-wide, lane `l` writes its cell's column `q` to slot
                    // `4l + q`; tall-narrow, its loaded slot `l + 32j`. Every lane writes.
                    for step in 0..4 {
                        let mut positions = Vec::new();
                        for (lane, held) in held.iter().enumerate() {
                            let (t, v) = if wide {
                                let c = &held[k];
                                (4 * lane + step, c.map(|row| row[step]))
                            } else {
                                (region_slot(lane, step), held[k][step])
                            };
                            let p = stage_slot(t);
                            assert!(p < STAGE_SLOTS);
                            assert!(stage[p].is_none(), "two writers of one stage slot");
                            stage[p] = Some((lane, v));
                            positions.push(Some(p));
                        }
                        assert_conflict_free(&positions);
                    }
                    // `syncwarp`, then reads and stores.
                    if wide {
                        // Lane `l` reads slot `l + 32j` (written by lane `(l + 32j) / 4`)
                        // and stores it to `float4` `first + l + 32j` of the output.
                        for j in 0..4 {
                            let mut positions = vec![None; 32];
                            let mut offsets = Vec::new();
                            for (lane, position) in positions.iter_mut().enumerate() {
                                let t = region_slot(lane, j);
                                let Some(e) = slot_of(block, y0, k, t) else {
                                    continue;
                                };
                                let p = stage_slot(t);
                                *position = Some(p);
                                let (writer, v) = stage[p].expect("stage read before its write");
                                assert_eq!(writer, t / 4, "stage slot from the wrong lane");
                                out[e..e + 4].copy_from_slice(&v);
                                for w in &mut writes[e..e + 4] {
                                    *w += 1;
                                }
                                offsets.push(4 * e);
                            }
                            assert_conflict_free(&positions);
                            accesses.push(WarpAccess {
                                store: true,
                                full: offsets.len() == 32,
                                offsets,
                            });
                        }
                    } else {
                        // Lane `l` with a cell reads its input rows `i` from slots `4l + i`
                        // (written by lane `(4l + i) % 32`), then stores them transposed.
                        let mut cell_rows = vec![[[0.0f32; 4]; 4]; 32];
                        for i in 0..4 {
                            let mut positions = vec![None; 32];
                            for (lane, rows_held) in cell_rows.iter_mut().enumerate() {
                                if own(lane, k).is_none() {
                                    continue;
                                }
                                let t = 4 * lane + i;
                                let p = stage_slot(t);
                                positions[lane] = Some(p);
                                let (writer, v) = stage[p].expect("stage read before its write");
                                assert_eq!(writer, t % 32, "stage slot from the wrong lane");
                                rows_held[i] = v;
                            }
                            assert_conflict_free(&positions);
                        }
                        for q in 0..4 {
                            let mut offsets = Vec::new();
                            for (lane, v) in cell_rows.iter().enumerate() {
                                let Some((rg, cg)) = own(lane, k) else {
                                    continue;
                                };
                                let cell = (rg, cg, v);
                                offsets.push(store_cell_row(out, writes, rows, cols, cell, q));
                            }
                            accesses.push(WarpAccess {
                                store: true,
                                full: offsets.len() == 32,
                                offsets,
                            });
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn thin_plan_is_exact() {
        for &(rows, cols) in PLAN_SHAPES {
            let input: Vec<f32> = (0..rows * cols).map(|e| e as f32).collect();
            let (got, _) = simulate_thin(&input, rows, cols);
            assert!(got == reference(&input, rows, cols), "{rows}x{cols}");
        }
    }

    #[test]
    fn thin_accesses_fill_whole_sectors() {
        for s in [8, 16, 32] {
            for (rows, cols) in [(s, 4096), (4096, s)] {
                let input = vec![0.0; rows * cols];
                let (_, accesses) = simulate_thin(&input, rows, cols);
                for a in accesses.iter().filter(|a| a.full) {
                    let (sectors, whole) = a.sectors();
                    assert!(whole, "{rows}x{cols}: {a:?}");
                    assert_eq!(sectors, 16, "{rows}x{cols}");
                }
            }
        }
        // s = 4 (the staged path): on both sides every warp instruction is 32 consecutive
        // float4s, 512 contiguous bytes (16 whole sectors when the long side's rows start on
        // sector boundaries, `l` a multiple of 8); the partial ones (the last warp's region)
        // contiguous too. On the staged side (short-wide stores, tall-narrow loads) each
        // starts on a 512-byte boundary whatever `l`.
        for (rows, cols) in [
            (4, 4096),
            (4096, 4),
            (4, 3236),
            (3236, 4),
            (4, 1000),
            (1000, 4),
        ] {
            let input = vec![0.0; rows * cols];
            let (_, accesses) = simulate_thin(&input, rows, cols);
            let long = rows.max(cols);
            for a in &accesses {
                assert!(a.offsets.windows(2).all(|w| w[1] == w[0] + 16), "{a:?}");
                let staged_side = a.store == (rows == 4);
                if staged_side && let Some(&o) = a.offsets.first() {
                    assert_eq!(o % 512, 0, "{rows}x{cols}: {a:?}");
                }
                if a.full && (staged_side || long % 8 == 0) {
                    let (sectors, whole) = a.sectors();
                    assert!(whole && sectors == 16, "{rows}x{cols}: {a:?}");
                }
            }
            assert!(accesses.iter().any(|a| a.full && a.store));
            assert!(accesses.iter().any(|a| a.full && !a.store));
        }
    }
}
