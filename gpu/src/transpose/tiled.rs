//! [`transpose_tiled_vec4`], the 64 x 64 tile with 16-byte accesses, for matrices whose sides
//! are multiples of 4 on 16-byte aligned buffers (see the [`transpose`](super) module docs).
//! [`any_shape`](super::any_shape) holds its counterpart for any shape and element offset.

use super::{VEC4_THREADS, VEC4_TILE};
use gpu_std::{block_idx, kernel, load_global_v4, store_global_v4, syncthreads, thread_idx};

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
pub unsafe fn transpose_tiled_vec4(a: *const f32, b: *mut f32, rows: usize, cols: usize) {
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
