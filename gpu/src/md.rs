//! Molecular dynamics: Lennard-Jones forces from a neighbour list, the GPU side of the pattern
//! `md` (seed "cuda 并行归约", part 1: the paper 《基于OpenMP的分子动力学并行算法的性能分析与优化》,
//! 2012, whose CPU thread-team reductions live in `cpu::md::team`).
//!
//! The system is the LJ-melt benchmark of LAMMPS (`bench/in.lj`) in reduced units
//! (sigma = epsilon = mass = 1): pair energy `E(r) = 4 (r^-12 - r^-6)` for `r < rc`, plainly
//! truncated (no shift), so the force on atom `i` from atom `j` is
//! `F_ij = 48 r^-2 r^-6 (r^-6 - 1/2) (x_i - x_j)`, with the minimum image of `x_i - x_j` in a
//! periodic cubic box.
//!
//! Two kernel families, each in `f32` and `f64`:
//! - [`md_lj_full_f32`](kernels::md_lj_full_f32) / `_f64`: one thread per atom over its FULL
//!   neighbour list (both `j` of `i` and `i` of `j`): each pair is computed twice, once by each
//!   atom, and every thread writes only its own atom, so there is no race and no atomic.
//! - [`md_lj_half_atomic_f32`](kernels::md_lj_half_atomic_f32) / `_f64`: one thread per atom
//!   over its HALF list (each pair once): Newton's third law on the GPU, the reaction `-F_ij`
//!   added to atom `j` with `atomicAdd`; half the pair work, but contended atomics and a
//!   summation order that varies from run to run.
//!
//! Memory layout shared with the host (`cpu::md::gpu`): positions and forces packed as four
//! values per atom, `[x, y, z, w]` ([`MD_STRIDE`]); positions' `w` is ignored (padding, so an
//! `f32` atom is one 16-byte load); forces' `w` receives the atom's potential energy,
//! `1/2 sum_j E(r_ij)`, so that the sum of `w` over atoms is the total potential energy. The
//! neighbour list is CSR: `offsets[i]..offsets[i + 1]` index `neighbours`, both `u32`.

/// Threads per block the host launches the force kernels with (four warps; any block size
/// works: one thread per atom, threads past the last atom return).
pub const MD_BLOCK: u32 = 128;

/// Values per atom in the packed position and force arrays: `x, y, z, w`.
pub const MD_STRIDE: usize = 4;

/// The kernels (device build only).
pub mod kernels {
    use core::ops::{Add, Mul, Sub};
    use gpu_std::kernel;

    use super::MD_STRIDE;
    use gpu_std::{AtomicAdd, atomic_add, global_index_x, load_global_v4, store_global_v4};

    /// Four `f64` with the alignment of one 32-byte atom, so the compiler may load and store
    /// them with vector accesses.
    #[derive(Clone, Copy)]
    #[repr(C, align(32))]
    struct Atom64([f64; 4]);

    /// The arithmetic a force kernel needs, for `f32` and `f64`.
    trait Real:
        Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + AtomicAdd
    {
        const ZERO: Self;
        const ONE: Self;
        const HALF: Self;
        const FOUR: Self;
        const FORTY_EIGHT: Self;
        /// `1 / self`.
        fn recip(self) -> Self;
        /// Round to the nearest integer, ties to even (`cvt.rni`).
        fn round_even(self) -> Self;
        /// `x, y, z` of atom `i` of a packed array.
        ///
        /// # Safety
        /// `p` is the 16-byte (`f32`) or 32-byte (`f64`) aligned start of a packed array of
        /// more than `i` atoms in global memory.
        unsafe fn load_xyz(p: *const Self, i: usize) -> [Self; 3];
        /// Writes `v` as atom `i` of a packed array.
        ///
        /// # Safety
        /// As [`Real::load_xyz`], for writing, and no other thread accesses atom `i`.
        unsafe fn store_atom(p: *mut Self, i: usize, v: [Self; 4]);
    }

    impl Real for f32 {
        const ZERO: f32 = 0.0;
        const ONE: f32 = 1.0;
        const HALF: f32 = 0.5;
        const FOUR: f32 = 4.0;
        const FORTY_EIGHT: f32 = 48.0;
        #[inline(always)]
        fn recip(self) -> f32 {
            1.0 / self
        }
        #[inline(always)]
        fn round_even(self) -> f32 {
            gpu_std::math::round_ties_even_f32(self)
        }
        #[inline(always)]
        unsafe fn load_xyz(p: *const f32, i: usize) -> [f32; 3] {
            // SAFETY: the caller's contract: 16-byte aligned atom `i` in global memory.
            let [x, y, z, _] = unsafe { load_global_v4(p.add(MD_STRIDE * i)) };
            [x, y, z]
        }
        #[inline(always)]
        unsafe fn store_atom(p: *mut f32, i: usize, v: [f32; 4]) {
            // SAFETY: the caller's contract: 16-byte aligned atom `i`, owned by this thread.
            unsafe { store_global_v4(p.add(MD_STRIDE * i), v) }
        }
    }

    impl Real for f64 {
        const ZERO: f64 = 0.0;
        const ONE: f64 = 1.0;
        const HALF: f64 = 0.5;
        const FOUR: f64 = 4.0;
        const FORTY_EIGHT: f64 = 48.0;
        #[inline(always)]
        fn recip(self) -> f64 {
            1.0 / self
        }
        #[inline(always)]
        fn round_even(self) -> f64 {
            gpu_std::math::round_ties_even_f64(self)
        }
        #[inline(always)]
        unsafe fn load_xyz(p: *const f64, i: usize) -> [f64; 3] {
            // SAFETY: the caller's contract: 32-byte aligned atom `i` in global memory.
            let Atom64([x, y, z, _]) = unsafe { p.add(MD_STRIDE * i).cast::<Atom64>().read() };
            [x, y, z]
        }
        #[inline(always)]
        unsafe fn store_atom(p: *mut f64, i: usize, v: [f64; 4]) {
            // SAFETY: the caller's contract: 32-byte aligned atom `i`, owned by this thread.
            unsafe { p.add(MD_STRIDE * i).cast::<Atom64>().write(Atom64(v)) }
        }
    }

    /// The parameters every force kernel shares.
    #[derive(Clone, Copy)]
    struct PeriodicBox<T> {
        len: T,
        inv_len: T,
        cutoff_sq: T,
    }

    /// `(F / r, E)` of one pair at squared distance `r2`, or `None` at or beyond the cutoff:
    /// `F / r = 48 r^-2 r^-6 (r^-6 - 1/2)`, `E = 4 r^-6 (r^-6 - 1)`. One division, six
    /// multiplies, two subtractions.
    #[inline(always)]
    fn lj<T: Real>(r2: T, cutoff_sq: T) -> Option<(T, T)> {
        if r2 < cutoff_sq {
            let sr2 = r2.recip();
            let sr6 = sr2 * sr2 * sr2;
            Some((
                T::FORTY_EIGHT * sr2 * sr6 * (sr6 - T::HALF),
                T::FOUR * sr6 * (sr6 - T::ONE),
            ))
        } else {
            None
        }
    }

    /// The minimum image of `a - b` in the periodic cube and its squared length.
    #[inline(always)]
    fn separation<T: Real>(a: [T; 3], b: [T; 3], bx: PeriodicBox<T>) -> ([T; 3], T) {
        let image = |d: T| d - bx.len * (d * bx.inv_len).round_even();
        let d = [image(a[0] - b[0]), image(a[1] - b[1]), image(a[2] - b[2])];
        (d, d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    }

    /// Body of the full-list kernels: thread `i` sums `F_ij` over its whole list and writes
    /// `[f_x, f_y, f_z, 1/2 sum_j E(r_ij)]` as atom `i` of `forces`.
    ///
    /// # Safety
    /// As [`md_lj_full_f32`], for `T`.
    #[inline(always)]
    unsafe fn lj_full<T: Real>(
        positions: *const T,
        n: usize,
        offsets: *const u32,
        neighbours: *const u32,
        bx: PeriodicBox<T>,
        forces: *mut T,
    ) {
        let i = global_index_x();
        if i >= n {
            return;
        }
        // SAFETY: `i < n`; the caller's contract covers the arrays and the list's indices.
        unsafe {
            let pi = T::load_xyz(positions, i);
            let (start, end) = (*offsets.add(i) as usize, *offsets.add(i + 1) as usize);
            let (mut f, mut e) = ([T::ZERO; 3], T::ZERO);
            let mut k = start;
            while k < end {
                let j = *neighbours.add(k) as usize;
                let (d, r2) = separation(pi, T::load_xyz(positions, j), bx);
                if let Some((fr, ep)) = lj(r2, bx.cutoff_sq) {
                    f = [f[0] + fr * d[0], f[1] + fr * d[1], f[2] + fr * d[2]];
                    e = e + ep;
                }
                k += 1;
            }
            T::store_atom(forces, i, [f[0], f[1], f[2], T::HALF * e]);
        }
    }

    /// Body of the half-list kernels: thread `i` sums `F_ij` over its half list in registers,
    /// adds `-F_ij` and `E/2` to atom `j` with `atomicAdd` as it goes, and finally adds its own
    /// sum and energy share to atom `i`.
    ///
    /// # Safety
    /// As [`md_lj_half_atomic_f32`], for `T`.
    #[inline(always)]
    unsafe fn lj_half_atomic<T: Real>(
        positions: *const T,
        n: usize,
        offsets: *const u32,
        neighbours: *const u32,
        bx: PeriodicBox<T>,
        forces: *mut T,
    ) {
        let i = global_index_x();
        if i >= n {
            return;
        }
        // SAFETY: `i < n`; the caller's contract covers the arrays and the list's indices;
        // every write to `forces` is atomic.
        unsafe {
            let pi = T::load_xyz(positions, i);
            let (start, end) = (*offsets.add(i) as usize, *offsets.add(i + 1) as usize);
            let (mut f, mut e) = ([T::ZERO; 3], T::ZERO);
            let mut k = start;
            while k < end {
                let j = *neighbours.add(k) as usize;
                let (d, r2) = separation(pi, T::load_xyz(positions, j), bx);
                if let Some((fr, ep)) = lj(r2, bx.cutoff_sq) {
                    let fd = [fr * d[0], fr * d[1], fr * d[2]];
                    f = [f[0] + fd[0], f[1] + fd[1], f[2] + fd[2]];
                    let half = T::HALF * ep;
                    e = e + half;
                    let fj = forces.add(MD_STRIDE * j);
                    atomic_add(fj, T::ZERO - fd[0]);
                    atomic_add(fj.add(1), T::ZERO - fd[1]);
                    atomic_add(fj.add(2), T::ZERO - fd[2]);
                    atomic_add(fj.add(3), half);
                }
                k += 1;
            }
            let fi = forces.add(MD_STRIDE * i);
            atomic_add(fi, f[0]);
            atomic_add(fi.add(1), f[1]);
            atomic_add(fi.add(2), f[2]);
            atomic_add(fi.add(3), e);
        }
    }

    /// Lennard-Jones forces, `f32`, one thread per atom over a FULL neighbour list: atom `i`'s
    /// force is summed by thread `i` alone (each pair computed twice, by both atoms), so the
    /// kernel has no race, no atomic, and the same bits on every run.
    ///
    /// Algorithm: thread `i` loads its position (one 16-byte load), then for each neighbour
    /// `j` of `offsets[i]..offsets[i + 1]` gathers `x_j` (one 16-byte load), takes the minimum
    /// image `d = x_i - x_j - L rint((x_i - x_j) / L)` and, for `|d|^2 < cutoff_sq`, adds
    /// `48 r^-2 r^-6 (r^-6 - 1/2) d` to its force and `4 r^-6 (r^-6 - 1)` to its energy.
    ///
    /// Launch: blocks of [`MD_BLOCK`](super::MD_BLOCK) threads (any size works), grid
    /// `ceil(n / block)`; no shared memory.
    ///
    /// Parameters: `positions`: `4 n` floats, atom `i` at `[4i, 4i + 4)` as `x, y, z, (ignored)`,
    /// in units of sigma; `offsets`: `n + 1` nondecreasing `u32`, `offsets[n]` the length of
    /// `neighbours`; `neighbours`: atom indices `< n`; `box_len`: the periodic cube's side;
    /// `cutoff_sq`: `rc^2` (6.25 for LJ-melt); `forces`: `4 n` floats, written as
    /// `f_x, f_y, f_z` (epsilon / sigma) and the atom's energy `1/2 sum_j E(r_ij)` (epsilon).
    ///
    /// # Safety
    /// `positions` and `forces` are 16-byte aligned and valid for `4 n` floats, and do not
    /// overlap; `offsets` is valid for `n + 1` values that never decrease, and `neighbours`
    /// for `offsets[n]` values, each `< n`.
    ///
    /// Performance: per pair, a 16-byte gather and a 4-byte index load (L1/L2 hits for a
    /// spatially sorted system), about 20 flops including one division: bound by the gathers'
    /// latency and, in `f64`, by FP64 throughput on consumer GPUs.
    #[kernel]
    pub unsafe fn md_lj_full_f32(
        positions: *const f32,
        n: usize,
        offsets: *const u32,
        neighbours: *const u32,
        box_len: f32,
        cutoff_sq: f32,
        forces: *mut f32,
    ) {
        let bx = PeriodicBox {
            len: box_len,
            inv_len: 1.0 / box_len,
            cutoff_sq,
        };
        // SAFETY: forwarded to the caller's contract.
        unsafe { lj_full(positions, n, offsets, neighbours, bx, forces) }
    }

    /// [`md_lj_full_f32`] in `f64`: positions and forces are `4 n` doubles, atom `i` one
    /// 32-byte record.
    ///
    /// Launch: as [`md_lj_full_f32`].
    ///
    /// # Safety
    /// As [`md_lj_full_f32`], with `positions` and `forces` 32-byte aligned and valid for `4 n`
    /// doubles.
    #[kernel]
    pub unsafe fn md_lj_full_f64(
        positions: *const f64,
        n: usize,
        offsets: *const u32,
        neighbours: *const u32,
        box_len: f64,
        cutoff_sq: f64,
        forces: *mut f64,
    ) {
        let bx = PeriodicBox {
            len: box_len,
            inv_len: 1.0 / box_len,
            cutoff_sq,
        };
        // SAFETY: forwarded to the caller's contract.
        unsafe { lj_full(positions, n, offsets, neighbours, bx, forces) }
    }

    /// Lennard-Jones forces, `f32`, one thread per atom over a HALF neighbour list (each pair
    /// once): Newton's third law on the GPU. Thread `i` keeps `sum_j F_ij` in registers and
    /// adds the reaction `-F_ij` (and half the pair energy) to atom `j` with `atomicAdd`
    /// (`atom.global.add.f32`) as it goes; at the end it adds its own sum to atom `i`, also
    /// atomically, since other threads add into atom `i` too.
    ///
    /// Algorithm: as [`md_lj_full_f32`] over half as many pairs, plus four atomics per pair
    /// within the cutoff and four per atom. The order of the atomic adds varies from run to
    /// run, so the last bits of the forces do too.
    ///
    /// Launch: as [`md_lj_full_f32`]. `forces` must be zero before the launch (the host
    /// launcher queues the memset).
    ///
    /// Parameters: as [`md_lj_full_f32`], with a half list (`j` in the list of `i` means `i`
    /// is not in the list of `j`); `forces` receives the same values.
    ///
    /// # Safety
    /// As [`md_lj_full_f32`]; and no other kernel accesses `forces` during the launch.
    ///
    /// Performance: half the gathers and flops of the full list, but the atomics serialise in
    /// L2 where neighbouring threads hit the same atom.
    #[kernel]
    pub unsafe fn md_lj_half_atomic_f32(
        positions: *const f32,
        n: usize,
        offsets: *const u32,
        neighbours: *const u32,
        box_len: f32,
        cutoff_sq: f32,
        forces: *mut f32,
    ) {
        let bx = PeriodicBox {
            len: box_len,
            inv_len: 1.0 / box_len,
            cutoff_sq,
        };
        // SAFETY: forwarded to the caller's contract.
        unsafe { lj_half_atomic(positions, n, offsets, neighbours, bx, forces) }
    }

    /// [`md_lj_half_atomic_f32`] in `f64` (`atom.global.add.f64`, compute capability 6.0 and
    /// newer).
    ///
    /// Launch: as [`md_lj_half_atomic_f32`].
    ///
    /// # Safety
    /// As [`md_lj_half_atomic_f32`], with `positions` and `forces` 32-byte aligned and valid
    /// for `4 n` doubles.
    #[kernel]
    pub unsafe fn md_lj_half_atomic_f64(
        positions: *const f64,
        n: usize,
        offsets: *const u32,
        neighbours: *const u32,
        box_len: f64,
        cutoff_sq: f64,
        forces: *mut f64,
    ) {
        let bx = PeriodicBox {
            len: box_len,
            inv_len: 1.0 / box_len,
            cutoff_sq,
        };
        // SAFETY: forwarded to the caller's contract.
        unsafe { lj_half_atomic(positions, n, offsets, neighbours, bx, forces) }
    }
}
