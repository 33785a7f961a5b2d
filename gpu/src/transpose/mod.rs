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
//!
//! # Files
//! One file per kernel family:
//! - [`seed`]: the seed's five versions and the two kernels of NVIDIA's sample, the copy
//!   baseline and the padded shared tile (one 4-byte element per access);
//! - [`tiled`]: the 64 x 64 tile with 16-byte accesses for multiples of 4 on aligned buffers,
//!   [`transpose_tiled_vec4`](tiled::transpose_tiled_vec4);
//! - [`any_shape`]: the 64 x 64 tile for any shape at any element offset,
//!   [`transpose_tiled_vec4_any`](any_shape::kernels::transpose_tiled_vec4_any), and its
//!   geometry;
//! - [`thin`]: 4 x 4 blocks in registers for thin matrices,
//!   [`transpose_thin_vec4`](thin::kernels::transpose_thin_vec4), and its geometry.
//!
//! This module holds what host and device share: block and tile sizes. The
//! geometry of [`any_shape`] and [`thin`] is host code too (their launchers in `cpu` use it,
//! and their unit tests run the kernels' plans on the CPU); their kernels, and those of
//! [`seed`] and [`tiled`], are PTX entries in the device build and typed handles on the host.

/// Side of the square tile of [`copy`](seed::copy) and
/// [`transpose_shared_padded`](seed::transpose_shared_padded) (NVIDIA's `TILE_DIM`).
pub const TILE: u32 = 32;
/// Rows of threads per block of those kernels (NVIDIA's `BLOCK_ROWS`): blocks are
/// `TILE x BLOCK_ROWS` threads, each thread moves `TILE / BLOCK_ROWS` elements.
pub const BLOCK_ROWS: u32 = 8;
/// Side of the tile of [`transpose_tiled_vec4`](tiled::transpose_tiled_vec4) and
/// [`transpose_tiled_vec4_any`](any_shape::kernels::transpose_tiled_vec4_any).
pub const VEC4_TILE: u32 = 64;
/// Threads per side of the block of [`transpose_tiled_vec4`](tiled::transpose_tiled_vec4)
/// and [`transpose_tiled_vec4_any`](any_shape::kernels::transpose_tiled_vec4_any)
/// (`VEC4_THREADS x VEC4_THREADS`; each thread moves 4 float4 in and 4 float4 out, plus one
/// more for a quarter of the threads of the `_any` kernel).
pub const VEC4_THREADS: u32 = 16;

/// Largest short side (`min(rows, cols)`) of a *thin* matrix, the shapes of
/// [`transpose_thin_vec4`](thin::kernels::transpose_thin_vec4).
///
/// Why 32: a 64 x 64 tile of [`transpose_tiled_vec4`](tiled::transpose_tiled_vec4) over a
/// matrix with `s <= 32` rows (or columns) holds at most `64 s` elements, half of its threads'
/// loads or stores predicated off, 256 elements per 256-thread block at `s = 4` (block
/// scheduling, not memory, sets its speed there: 15% of the copy bandwidth for 4 x 4194304 on
/// an H200). The thin kernel gives every block about 8192 elements at any `s`, and its
/// accesses fill whole 32-byte sectors on both sides for `s` = 4, 8, 16 and 32 (see [`thin`]).
/// Above 32 the tile is more than half full; where exactly the two cross is a measurement,
/// not yet made.
pub const THIN_MAX: usize = 32;
/// Threads per block of [`transpose_thin_vec4`](thin::kernels::transpose_thin_vec4) (at most:
/// 255 or 252 when 256 is not a multiple of the short side's groups of 4, see
/// [`thin::Thin::block`]).
pub const THIN_THREADS: u32 = 256;
/// 4 x 4 blocks (*cells*) each thread of
/// [`transpose_thin_vec4`](thin::kernels::transpose_thin_vec4) moves: all their loads
/// (`4 * THIN_CELLS` float4) are issued before the first store.
pub const THIN_CELLS: usize = 2;
// The kernel names its two cells: an array of `Option` cells mapped over went to a 232-byte
// stack frame (local memory) on sm_90.
const _: () = assert!(
    THIN_CELLS == 2,
    "transpose_thin_vec4 moves cells 0 and 1 by name"
);

// The kernel families. `seed` and `tiled` hold kernels only (typed handles on the host);
// `any_shape` and `thin` also hold the geometry host and device share, with their kernels in
// `any_shape::kernels` and `thin::kernels`.
pub mod any_shape;
pub mod seed;
pub mod thin;
pub mod tiled;

/// The transpose on the host (`b[c][r] = a[r][c]`), which the simulations in the tests of
/// [`any_shape`] and [`thin`] are checked against.
#[cfg(test)]
fn reference(input: &[f32], rows: usize, cols: usize) -> std::vec::Vec<f32> {
    assert_eq!(input.len(), rows * cols, "input is not rows x cols");
    let mut out = std::vec![0.0; input.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}
