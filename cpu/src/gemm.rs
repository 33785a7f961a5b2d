//! Matrix multiply on the tensor cores, from the instruction up (`gpu::gemm`): one warp's
//! `mma.sync` tile `D = A B + C` in f16, bf16 and tf32 with f32 accumulation, and the
//! `ldmatrix` loads that feed it, each beside its CPU reference.
//!
//! [`mma_tile`] runs one tile and returns D row-major; [`ldmatrix_tile`] returns every lane's
//! registers of the four `ldmatrix` forms; [`mma_tile_reference`], [`mma_tile_error_bound`] and
//! [`ldmatrix_reference`] are what they are checked against. The kernels need sm_80 (Ampere)
//! or newer: on an older device the launch is refused with [`Error::ArchTooOld`](crate::Error::ArchTooOld) before
//! anything is queued.
//!
//! ```no_run
//! # fn main() -> cpu::Result<()> {
//! use cpu::gemm::{TileType, mma_tile};
//! let gpu = cpu::Gpu::new(0)?;
//! let (a, b, c) = (vec![1.0f32; 16 * 16], vec![0.5f32; 16 * 8], vec![2.0f32; 16 * 8]);
//! let d = mma_tile(&gpu, TileType::F16, &a, &b, &c)?;
//! assert!(d.iter().all(|&x| x == 10.0)); // 16 x (1 x 0.5) + 2
//! # Ok(())
//! # }
//! ```

use cudarc::driver::LaunchConfig;
use gpu::gemm::{TILE_K_16, TILE_K_TF32, TILE_M, TILE_N, WARP, kernels};
use gpu_std::mma::{A16x16, Acc16x8, B16x8, F16, ldmatrix_coord, unpack_b16x2};

use crate::context::Gpu;
use crate::error::{Result, expect_len};

/// The input type of an `mma.sync` tile; the accumulator is f32 for all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileType {
    /// IEEE binary16 inputs, `m16n8k16`.
    F16,
    /// bfloat16 inputs, `m16n8k16`.
    Bf16,
    /// tf32 inputs (f32 rounded to 10 mantissa bits on the device), `m16n8k8`.
    Tf32,
}

impl TileType {
    /// Every type, for tests and tables.
    pub const ALL: [TileType; 3] = [TileType::F16, TileType::Bf16, TileType::Tf32];

    /// The tile's shared dimension `K`: 16 for f16 and bf16, 8 for tf32.
    pub const fn k(self) -> usize {
        match self {
            TileType::F16 | TileType::Bf16 => TILE_K_16,
            TileType::Tf32 => TILE_K_TF32,
        }
    }

    /// The kernel's name.
    pub const fn kernel_name(self) -> &'static str {
        match self {
            TileType::F16 => kernels::gemm_tile_f16.name(),
            TileType::Bf16 => kernels::gemm_tile_bf16.name(),
            TileType::Tf32 => kernels::gemm_tile_tf32.name(),
        }
    }

    /// `x` rounded to this input type, as the value the tensor core multiplies: to nearest,
    /// ties to even for f16 and bf16 (as the host's conversion does), to nearest, ties away
    /// from zero for tf32 (the device's `cvt.rna.tf32.f32`).
    pub fn round(self, x: f32) -> f32 {
        match self {
            TileType::F16 => half::f16::from_f32(x).to_f32(),
            TileType::Bf16 => half::bf16::from_f32(x).to_f32(),
            TileType::Tf32 => round_tf32(x),
        }
    }
}

/// `x` rounded to tf32 as `cvt.rna.tf32.f32` does: 10 mantissa bits, to nearest, ties away
/// from zero (a carry into the exponent is the correct rounding up, to infinity past the
/// largest value); NaN stays NaN, and infinities stay.
pub fn round_tf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    f32::from_bits((x.to_bits() + 0x1000) & !0x1fff)
}

/// One launch of a tile kernel: one block of one warp.
const ONE_WARP: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (WARP as u32, 1, 1),
    shared_mem_bytes: 0,
};

/// `D = A B + C` for one tile on the tensor cores (one `mma.sync` of one warp), with `A`
/// `16 x K` (`K` = [`TileType::k`]), `B` `K x 8`, `C` and the returned `D` `16 x 8`, all
/// row-major f32 on the host. The inputs are rounded to `ty` ([`TileType::round`]: on the host
/// for f16 and bf16, on the device for tf32); the accumulation is in f32. Synchronises (it
/// returns the result).
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) (`what: "a"`, `"b"`, `"c"`) if an
/// input is not its tile's size, before any device work;
/// [`Error::ArchTooOld`](crate::Error::ArchTooOld) on a device older than sm_80;
/// [`Error::Driver`](crate::Error::Driver) if a copy or the launch fails.
pub fn mma_tile(gpu: &Gpu, ty: TileType, a: &[f32], b: &[f32], c: &[f32]) -> Result<Vec<f32>> {
    let k = ty.k();
    expect_len("a", TILE_M * k, a.len())?;
    expect_len("b", k * TILE_N, b.len())?;
    expect_len("c", TILE_M * TILE_N, c.len())?;
    let c_d = gpu.upload(c)?;
    // Poisoned: a fragment the kernel does not write stays NaN.
    let mut d_d = gpu.upload(&[[f32::NAN; 4]; WARP])?;
    match ty {
        TileType::F16 | TileType::Bf16 => {
            let bits = |x: &[f32]| -> Vec<u16> {
                x.iter()
                    .map(|&v| match ty {
                        TileType::F16 => half::f16::from_f32(v).to_bits(),
                        _ => half::bf16::from_f32(v).to_bits(),
                    })
                    .collect()
            };
            let (a_d, b_d) = (gpu.upload(&bits(a))?, gpu.upload(&bits(b))?);
            let kernel = match ty {
                TileType::F16 => kernels::gemm_tile_f16,
                _ => kernels::gemm_tile_bf16,
            };
            gpu.launch(kernel, ONE_WARP, (&a_d, &b_d, &c_d, &mut d_d))?;
        }
        TileType::Tf32 => {
            let (a_d, b_d) = (gpu.upload(a)?, gpu.upload(b)?);
            gpu.launch(
                kernels::gemm_tile_tf32,
                ONE_WARP,
                (&a_d, &b_d, &c_d, &mut d_d),
            )?;
        }
    }
    let fragments = gpu.download(&d_d, ty.kernel_name())?;
    let mut d = vec![f32::NAN; TILE_M * TILE_N];
    for (lane, fragment) in fragments.iter().enumerate() {
        for (i, &value) in fragment.iter().enumerate() {
            let (row, col) = Acc16x8::coord(lane as u32, i);
            d[row * TILE_N + col] = value;
        }
    }
    Ok(d)
}

/// `D = A B + C` of [`mma_tile`]'s shapes in f64 from the inputs rounded to `ty`: the exact
/// value of what the tensor core computes before its f32 sums round (each product of two
/// rounded inputs is exact in f32: 11 x 11 significand bits for f16 and tf32, 8 x 8 for bf16).
pub fn mma_tile_reference(ty: TileType, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f64> {
    let k = ty.k();
    let mut d = vec![0.0f64; TILE_M * TILE_N];
    for row in 0..TILE_M {
        for col in 0..TILE_N {
            let mut sum = c[row * TILE_N + col] as f64;
            for j in 0..k {
                sum += ty.round(a[row * k + j]) as f64 * ty.round(b[j * TILE_N + col]) as f64;
            }
            d[row * TILE_N + col] = sum;
        }
    }
    d
}

/// The bound on `|D - reference|` for element `(row, col)` of a tile: the products are exact,
/// and the `K` additions of them and `C` in f32 each err by less than `2^-23` of the running
/// magnitude (the tensor core's sums need not round to nearest; truncation errs by up to one
/// unit, twice the rounding's half unit), so `gamma_(K+1) = (K + 1) 2^-23 / (1 - (K + 1)
/// 2^-23)` times `|C| + sum |a_j b_j|`, plus one unit of f32's smallest normal for underflow.
pub fn mma_tile_error_bound(ty: TileType, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f64> {
    let k = ty.k();
    let n = (k + 1) as f64 * f64::from(f32::EPSILON);
    let gamma = n / (1.0 - n);
    let mut bound = vec![0.0f64; TILE_M * TILE_N];
    for row in 0..TILE_M {
        for col in 0..TILE_N {
            let mut magnitude = (c[row * TILE_N + col] as f64).abs();
            for j in 0..k {
                magnitude +=
                    (ty.round(a[row * k + j]) as f64 * ty.round(b[j * TILE_N + col]) as f64).abs();
            }
            bound[row * TILE_N + col] = gamma * magnitude + f64::from(f32::MIN_POSITIVE);
        }
    }
    bound
}

/// Every lane's registers of the four `ldmatrix` forms of [`ldmatrix_tile`], lane `l` at
/// index `l`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LdmatrixRegisters {
    /// `ldmatrix.x4` of the quarters top-left, bottom-left, top-right, bottom-right.
    pub x4: Vec<[u32; 4]>,
    /// The same with `.trans`.
    pub x4_trans: Vec<[u32; 4]>,
    /// `ldmatrix.x2.trans` of the left 16 x 8 half (top quarter, then bottom).
    pub x2_trans: Vec<[u32; 2]>,
    /// `ldmatrix.x1` of the top-left quarter.
    pub x1: Vec<u32>,
}

/// Stages the 16 x 16 row-major tile `a` of 16-bit elements in shared memory and reads it back
/// with `ldmatrix` (`gemm_ldmatrix`): every lane's registers. Synchronises.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) (`what: "a"`) unless `a` has 256
/// elements, before any device work; [`Error::ArchTooOld`](crate::Error::ArchTooOld) on a
/// device older than sm_80; [`Error::Driver`](crate::Error::Driver) if a copy or the launch
/// fails.
pub fn ldmatrix_tile(gpu: &Gpu, a: &[u16]) -> Result<LdmatrixRegisters> {
    expect_len("a", 16 * 16, a.len())?;
    let a_d = gpu.upload(a)?;
    // Poisoned with a pattern no element of a tile of small values makes.
    const POISON: u32 = 0xdead_beef;
    let mut x4 = gpu.upload(&[[POISON; 4]; WARP])?;
    let mut x4_trans = gpu.upload(&[[POISON; 4]; WARP])?;
    let mut x2_trans = gpu.upload(&[[POISON; 2]; WARP])?;
    let mut x1 = gpu.upload(&[POISON; WARP])?;
    gpu.launch(
        kernels::gemm_ldmatrix,
        ONE_WARP,
        (&a_d, &mut x4, &mut x4_trans, &mut x2_trans, &mut x1),
    )?;
    let name = kernels::gemm_ldmatrix.name();
    Ok(LdmatrixRegisters {
        x4: gpu.download(&x4, name)?,
        x4_trans: gpu.download(&x4_trans, name)?,
        x2_trans: gpu.download(&x2_trans, name)?,
        x1: gpu.download(&x1, name)?,
    })
}

/// What [`ldmatrix_tile`] must return for `a` (256 elements, row-major 16 x 16), from the maps
/// `gpu_std::mma` documents: `x4` is the `A16x16` fragment, `x2_trans` the `B16x8` fragment of
/// the left half, and each register of the others the [`ldmatrix_coord`] pairs of its matrix.
pub fn ldmatrix_reference(a: &[u16]) -> LdmatrixRegisters {
    let at = |(row, col): (usize, usize)| a[row * 16 + col];
    let pair = |lane: u32, origin: (usize, usize), trans: bool| -> u32 {
        let [lo, hi] = [0, 1].map(|half| {
            let (r, c) = ldmatrix_coord(lane, half, trans);
            at((origin.0 + r, origin.1 + c))
        });
        u32::from(lo) | u32::from(hi) << 16
    };
    // Matrix m of an x4 load: the quarter at row 8 (m % 2), column 8 (m / 2).
    let quarter = |m: usize| (8 * (m % 2), 8 * (m / 2));
    let lanes = 0..WARP as u32;
    LdmatrixRegisters {
        x4: lanes
            .clone()
            .map(|l| {
                let f = A16x16::<F16>::from_bits(core::array::from_fn(|i| {
                    at(A16x16::<F16>::coord(l, i))
                }));
                f.regs
            })
            .collect(),
        x4_trans: lanes
            .clone()
            .map(|l| core::array::from_fn(|m| pair(l, quarter(m), true)))
            .collect(),
        x2_trans: lanes
            .clone()
            .map(|l| {
                B16x8::<F16>::from_bits(core::array::from_fn(|i| at(B16x8::<F16>::coord(l, i))))
                    .regs
            })
            .collect(),
        x1: lanes.map(|l| pair(l, (0, 0), false)).collect(),
    }
}

/// The first lane and register where `got` and `expected` differ, as a sentence.
pub fn ldmatrix_mismatch(got: &LdmatrixRegisters, expected: &LdmatrixRegisters) -> Option<String> {
    fn first<T: PartialEq + std::fmt::Debug>(form: &str, g: &[T], e: &[T]) -> Option<String> {
        let lane = g.iter().zip(e).position(|(g, e)| g != e)?;
        Some(format!(
            "{form}: lane {lane} got {:x?}, expected {:x?}",
            g[lane], e[lane]
        ))
    }
    first("x4", &got.x4, &expected.x4)
        .or_else(|| first("x4.trans", &got.x4_trans, &expected.x4_trans))
        .or_else(|| first("x2.trans", &got.x2_trans, &expected.x2_trans))
        .or_else(|| first("x1", &got.x1, &expected.x1))
}

/// The register pair of `ldmatrix` as two elements, `(low, high)`.
pub fn elements(register: u32) -> (u16, u16) {
    unpack_b16x2(register)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf32_rounds_to_nearest_ties_away() {
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: away from zero.
        assert_eq!(round_tf32(1.0 + 2f32.powi(-11)), 1.0 + 2f32.powi(-10));
        assert_eq!(round_tf32(-(1.0 + 2f32.powi(-11))), -(1.0 + 2f32.powi(-10)));
        assert_eq!(round_tf32(1.0 + 2f32.powi(-12)), 1.0);
        assert_eq!(round_tf32(1.0 + 3.0 * 2f32.powi(-12)), 1.0 + 2f32.powi(-10));
        assert!(round_tf32(f32::NAN).is_nan());
        assert_eq!(round_tf32(f32::MAX), f32::INFINITY);
    }

    #[test]
    fn the_reference_of_a_hand_tile() {
        // A = 1, B = 0.5, C = 2: every element is K * 0.5 + 2.
        for ty in TileType::ALL {
            let k = ty.k();
            let d = mma_tile_reference(ty, &vec![1.0; 16 * k], &vec![0.5; k * 8], &[2.0; 128]);
            assert!(d.iter().all(|&x| x == k as f64 * 0.5 + 2.0), "{ty:?}");
        }
        // 0.1 rounds differently per type.
        assert_eq!(TileType::F16.round(0.1), half::f16::from_f32(0.1).to_f32());
        assert_ne!(TileType::Bf16.round(0.1), TileType::F16.round(0.1));
    }

    #[test]
    fn the_ldmatrix_reference_is_the_identity_tile_read_by_the_maps() {
        // Element (r, c) holds 16 r + c, so each register names its own coordinates.
        let a: Vec<u16> = (0..256).collect();
        let regs = ldmatrix_reference(&a);
        // Lane 0: x4 register 0 holds (0, 0) and (0, 1); register 1 (bottom-left) (8, 0),
        // (8, 1); x4.trans register 0 holds (0, 0) and (1, 0); x1 = x4 register 0.
        assert_eq!(elements(regs.x4[0][0]), (0, 1));
        assert_eq!(elements(regs.x4[0][1]), (128, 129));
        assert_eq!(elements(regs.x4_trans[0][0]), (0, 16));
        assert_eq!(regs.x1[5], regs.x4[5][0]);
        // x2.trans: lane 5 (group 1, thread 1) holds B rows 2, 3 of column 1.
        assert_eq!(elements(regs.x2_trans[5][0]), (2 * 16 + 1, 3 * 16 + 1));
        // x2.trans is x4.trans's first two registers (the left half's quarters).
        for l in 0..WARP {
            assert_eq!(regs.x2_trans[l], [regs.x4_trans[l][0], regs.x4_trans[l][1]]);
        }
        assert_eq!(ldmatrix_mismatch(&regs, &regs), None);
    }
}
