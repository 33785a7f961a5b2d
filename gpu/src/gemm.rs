//! Matrix multiply on the tensor cores, from the instruction up: test kernels of the kit's
//! warp-level MMA (`gpu_std::mma`). One warp computes one tile `D = A B + C` of each type,
//! loading its fragments from global memory by the maps `gpu_std::mma` documents (the PTX
//! ISA's figures), and one kernel loads a 16 x 16 tile from shared memory with `ldmatrix`
//! (`x1`, `x2.trans`, `x4`, `x4.trans`) and hands back each lane's registers, so that the host
//! can check every lane's map against the ISA's.
//!
//! Every kernel here is declared `#[kernel(min_sm = 80)]`: its PTX for sm_70 is a trap, and the
//! host refuses to launch it on a device older than sm_80 (`cpu::Error::ArchTooOld`).
//!
//! Layouts in global memory: A, B, C row-major (`a[row * cols + col]`), the tile's exact shape
//! ([`TILE_M`] x [`TILE_K_16`] A for f16/bf16, [`TILE_M`] x [`TILE_K_TF32`] for tf32, B
//! `K x TILE_N`, C `TILE_M x TILE_N`); 16-bit elements as their bits (`u16`). D comes back in
//! fragment order: `d[lane]` holds lane `lane`'s four accumulators, element `i` being D's
//! `gpu_std::mma::Acc16x8::coord(lane, i)`.

/// Rows of A, C and D in one `mma.sync` tile (`m16`).
pub const TILE_M: usize = 16;
/// Columns of B, C and D in one tile (`n8`).
pub const TILE_N: usize = 8;
/// The shared dimension of an f16/bf16 tile (`k16`).
pub const TILE_K_16: usize = 16;
/// The shared dimension of a tf32 tile (`k8`).
pub const TILE_K_TF32: usize = 8;
/// Lanes of the one warp of a tile kernel (its launch: one block of 32 threads).
pub const WARP: usize = 32;

/// The kernels (device build only).
pub mod kernels {
    use super::{TILE_K_16, TILE_K_TF32, TILE_N};
    use gpu_std::mma::{
        A16x16, ATf32, Acc16x8, B16x8, BTf32, Bf16, F16, Half16, ldmatrix_x1, ldmatrix_x2_trans,
        ldmatrix_x4, ldmatrix_x4_trans, mma_m16n8k8_tf32, mma_m16n8k16_bf16, mma_m16n8k16_f16,
        to_tf32,
    };
    use gpu_std::{DisjointSlice, kernel, lane_id, syncthreads, thread_idx, thread_index};

    /// Element `(row, col)` of the row-major matrix `m` with `cols` columns, or `zero` past
    /// its end (a launcher passes exact tiles; a shorter buffer reads zeros, never out of
    /// bounds).
    #[inline(always)]
    fn at<T: Copy>(m: &[T], cols: usize, (row, col): (usize, usize), zero: T) -> T {
        m.get(row * cols + col).copied().unwrap_or(zero)
    }

    /// This lane's fragments of A (16 x 16), B (16 x 8) and C (16 x 8), loaded by their maps.
    #[inline(always)]
    fn load_16<T: Half16>(a: &[u16], b: &[u16], c: &[f32]) -> (A16x16<T>, B16x8<T>, Acc16x8) {
        let lane = lane_id();
        let a = A16x16::<T>::from_bits(core::array::from_fn(|i| {
            at(a, TILE_K_16, A16x16::<T>::coord(lane, i), 0)
        }));
        let b = B16x8::<T>::from_bits(core::array::from_fn(|i| {
            at(b, TILE_N, B16x8::<T>::coord(lane, i), 0)
        }));
        let c = Acc16x8 {
            regs: core::array::from_fn(|i| at(c, TILE_N, Acc16x8::coord(lane, i), 0.0)),
        };
        (a, b, c)
    }

    /// Traps (the whole block: the condition is the block's) unless the block is made of full
    /// warps, which `mma.sync.aligned` needs: every lane of every warp then reaches the `mma`.
    #[inline(always)]
    fn full_warps() {
        let b = gpu_std::block_dim();
        assert!((b.x * b.y * b.z).is_multiple_of(gpu_std::WARP_SIZE));
    }

    /// Writes this lane's accumulators as `d[thread_index]` (lane `lane` of the first warp).
    #[inline(always)]
    fn store(d: &mut DisjointSlice<[f32; 4]>, acc: Acc16x8) {
        if let Some(out) = d.get_mut(&thread_index()) {
            *out = acc.regs;
        }
    }

    /// `D = A B + C` for one 16 x 8 tile with f16 inputs and f32 accumulation, one
    /// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`: each lane loads its fragments from
    /// global memory by the documented maps and writes its four accumulators as `d[lane]`.
    ///
    /// Launch: one block of 32 threads (more warps compute the same tile; only the first
    /// 32 threads of the grid write; a block whose size is not a multiple of 32 traps). Parameters: `a` 16 x 16 and `b` 16 x 8 row-major f16
    /// bits, `c` 16 x 8 row-major, `d` 32 fragments.
    /// Performance: a test kernel (1 MMA, 4096 flops).
    #[kernel(min_sm = 80)]
    pub fn gemm_tile_f16(a: &[u16], b: &[u16], c: &[f32], mut d: DisjointSlice<[f32; 4]>) {
        full_warps();
        let (a, b, c) = load_16::<F16>(a, b, c);
        // SAFETY: every warp of the block is full (`full_warps` returned) and every lane
        // reaches this call: no branch above depends on the lane.
        let acc = unsafe { mma_m16n8k16_f16(a, b, c) };
        store(&mut d, acc);
    }

    /// [`gemm_tile_f16`] with bf16 inputs (`mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`).
    ///
    /// Launch and parameters as [`gemm_tile_f16`], `a` and `b` as bf16 bits.
    #[kernel(min_sm = 80)]
    pub fn gemm_tile_bf16(a: &[u16], b: &[u16], c: &[f32], mut d: DisjointSlice<[f32; 4]>) {
        full_warps();
        let (a, b, c) = load_16::<Bf16>(a, b, c);
        // SAFETY: every warp of the block is full (`full_warps` returned) and every lane
        // reaches this call: no branch above depends on the lane.
        let acc = unsafe { mma_m16n8k16_bf16(a, b, c) };
        store(&mut d, acc);
    }

    /// `D = A B + C` for one 16 x 8 tile with tf32 inputs (f32 values rounded on the device with
    /// `cvt.rna.tf32.f32`), one `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`.
    ///
    /// Launch as [`gemm_tile_f16`]. Parameters: `a` 16 x 8 and `b` 8 x 8 row-major f32, `c`
    /// 16 x 8 row-major, `d` 32 fragments.
    #[kernel(min_sm = 80)]
    pub fn gemm_tile_tf32(a: &[f32], b: &[f32], c: &[f32], mut d: DisjointSlice<[f32; 4]>) {
        full_warps();
        let lane = lane_id();
        let fa = ATf32 {
            regs: core::array::from_fn(|i| to_tf32(at(a, TILE_K_TF32, ATf32::coord(lane, i), 0.0))),
        };
        let fb = BTf32 {
            regs: core::array::from_fn(|i| to_tf32(at(b, TILE_N, BTf32::coord(lane, i), 0.0))),
        };
        let fc = Acc16x8 {
            regs: core::array::from_fn(|i| at(c, TILE_N, Acc16x8::coord(lane, i), 0.0)),
        };
        // SAFETY: every warp of the block is full (`full_warps` returned) and every lane
        // reaches this call: no branch above depends on the lane.
        let acc = unsafe { mma_m16n8k8_tf32(fa, fb, fc) };
        store(&mut d, acc);
    }

    /// One row of eight 16-bit elements, the unit `ldmatrix` reads (16 bytes, 16-byte aligned).
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct Row8([u16; 8]);

    /// Loads the 16 x 16 row-major tile `a` (16-bit elements) into shared memory, then reads
    /// it back with `ldmatrix`: `x4[lane]` from `ldmatrix.x4` of its quarters in the order
    /// top-left, bottom-left, top-right, bottom-right (the `mma` A fragment), `x4_trans[lane]`
    /// the same with `.trans`, `x2_trans[lane]` from `ldmatrix.x2.trans` of the left 16 x 8 half
    /// (as a row-major B: the `mma` B fragment), `x1[lane]` from `ldmatrix.x1` of the top-left
    /// quarter.
    ///
    /// Launch: one block of 32 threads (any block whose `x` size is a multiple of 32 works: its
    /// first warp stages the tile, every warp reads it; only the first 32 threads of the grid
    /// write; another block traps). Shared memory: 512 bytes, static.
    #[kernel(min_sm = 80)]
    pub fn gemm_ldmatrix(
        a: &[u16],
        mut x4: DisjointSlice<[u32; 4]>,
        mut x4_trans: DisjointSlice<[u32; 4]>,
        mut x2_trans: DisjointSlice<[u32; 2]>,
        mut x1: DisjointSlice<u32>,
    ) {
        // Whole warps along x (so at least 32 threads stage the 32 rows, and every warp is
        // full for the `.sync.aligned` loads); otherwise the block traps before any of them.
        assert!(gpu_std::block_dim().x.is_multiple_of(gpu_std::WARP_SIZE));
        let tile = gpu_std::static_shared!(s_gemm_ldmatrix: [Row8; 32]);
        let t = thread_idx().x as usize;
        if t < 32 {
            // Thread t stages row t / 2, columns 8 (t % 2) .. 8 (t % 2) + 8.
            let row = Row8(core::array::from_fn(|j| {
                at(a, 16, (t / 2, 8 * (t % 2) + j), 0)
            }));
            // SAFETY: `t < 32`, the array's length; each slot has one writer, and the barrier
            // below orders the writes before every read.
            unsafe { tile.write(t, row) };
        }
        syncthreads();
        // Lane l gives row r = l % 8 of matrix m = l / 8: quarter m's origin is row 8 (m % 2),
        // column 8 (m / 2), so its row r is the slot 2 (8 (m % 2) + r) + m / 2.
        let lane = lane_id() as usize;
        let (m, r) = (lane / 8, lane % 8);
        let slot = 2 * (8 * (m % 2) + r) + m / 2;
        let address = tile.shared_address() + (slot * size_of::<Row8>()) as u32;
        // SAFETY: every warp is full (asserted above) and all its lanes reach these calls
        // together (no branch above depends on the lane); `address` is the shared-window address of slot `slot < 32` of
        // `tile`, 16-byte aligned (`Row8`'s alignment, which the declaration keeps) and valid
        // for its 16 bytes; nothing writes the tile after the barrier.
        let (r4, r4t, r2t, r1) = unsafe {
            (
                ldmatrix_x4(address),
                ldmatrix_x4_trans(address),
                ldmatrix_x2_trans(address),
                ldmatrix_x1(address),
            )
        };
        let i = thread_index();
        if let Some(out) = x4.get_mut(&i) {
            *out = r4;
        }
        if let Some(out) = x4_trans.get_mut(&i) {
            *out = r4t;
        }
        if let Some(out) = x2_trans.get_mut(&i) {
            *out = r2t;
        }
        if let Some(out) = x1.get_mut(&i) {
            *out = r1[0];
        }
    }
}
