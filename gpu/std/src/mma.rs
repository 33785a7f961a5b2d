//! Warp-level matrix multiply-accumulate on the tensor cores (PTX `mma.sync`) and the
//! shared-memory load that feeds it (`ldmatrix`), sm_80 (Ampere) and newer.
//!
//! Each instruction is one function over typed fragments: a fragment is the part of a small
//! matrix one lane of the warp holds in its registers, and its `coord(lane, i)` says which
//! `(row, col)` of the matrix element `i` of lane `lane` is, exactly as the PTX ISA's figures
//! give it (PTX ISA, section 9.7.14.5, "Matrix multiply-accumulate operation using mma
//! instruction"; CUTLASS's `cute/atom/mma_traits_sm80.hpp` writes the same maps as CuTe
//! layouts). A warp of 32 lanes together holds the whole matrix, each element exactly once.
//!
//! | function | PTX | D (f32) | A | B |
//! |---|---|---|---|---|
//! | [`mma_m16n8k16_f16`] | `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` | 16 x 8 [`Acc16x8`] | 16 x 16 [`A16x16<F16>`] | 16 x 8 [`B16x8<F16>`] |
//! | [`mma_m16n8k16_bf16`] | `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` | 16 x 8 [`Acc16x8`] | 16 x 16 [`A16x16<Bf16>`] | 16 x 8 [`B16x8<Bf16>`] |
//! | [`mma_m16n8k8_tf32`] | `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` | 16 x 8 [`Acc16x8`] | 16 x 8 [`ATf32`] | 8 x 8 [`BTf32`] |
//! | [`ldmatrix_x1`], [`ldmatrix_x2`], [`ldmatrix_x4`] (and `_trans`) | `ldmatrix.sync.aligned.m8n8.x{1,2,4}{,.trans}.shared.b16` | | | |
//!
//! The maps, with `group = lane / 4` and `thread = lane % 4` (the ISA's `groupID` and
//! `threadID_in_group`):
//! - A of m16n8k16 (8 elements, two per 32-bit register, element `2j` in the low half of
//!   register `j`): row `group + 8 * ((i / 2) % 2)`, column `2 * thread + i % 2 + 8 * (i / 4)`
//!   ("Matrix Fragments for mma.m16n8k16 with floating point type", figure of the A fragment);
//! - B of m16n8k16 (4 elements): row `2 * thread + i % 2 + 8 * (i / 2)`, column `group`;
//! - C and D, f32 (4 elements): row `group + 8 * (i / 2)`, column `2 * thread + i % 2`;
//! - A of m16n8k8 tf32 (4 elements, one per register): row `group + 8 * (i % 2)`, column
//!   `thread + 4 * (i / 2)` ("Matrix Fragments for mma.m16n8k8", `.tf32`);
//! - B of m16n8k8 tf32 (2 elements): row `thread + 4 * i`, column `group`.
//!
//! # Warp convergence
//! `.sync.aligned` means every lane of the warp executes the same instruction together; in
//! code a lane may skip (a branch on the lane's own data, or a partial last warp of a block
//! whose size is not a multiple of 32) the ISA leaves the behaviour undefined. So the `mma`
//! functions are `unsafe`, their one contract that all 32 lanes of the warp exist and reach the
//! call together (convergent control flow), and a safe kernel that calls them proves it: it
//! refuses a block of partial warps (a trap, before any call) and calls them outside any branch
//! that depends on the lane. The `ldmatrix` functions also read shared memory at addresses the caller gives:
//! with the contract stated once at [`ldmatrix_x4`].
//!
//! # Architectures
//! The instructions exist from sm_80 on (`ldmatrix` from sm_75). Built for an older
//! architecture, each function traps: declare a kernel that uses them
//! `#[kernel(min_sm = 80)]`, so that its PTX below sm_80 is a trap and the host refuses to
//! launch it on an older device (the host build's `gpu_std::host::KernelInfo::min_sm`).

use core::marker::PhantomData;

/// The 16-bit input types of `m16n8k16`: [`F16`] and [`Bf16`], fragments of one not mixable
/// with the other's.
pub trait Half16: Copy + sealed::Sealed {
    /// The PTX type name, `f16` or `bf16`.
    const PTX: &'static str;
}

mod sealed {
    pub trait Sealed {}
}

/// IEEE binary16 elements (`.f16`): 1 sign, 5 exponent, 10 mantissa bits.
#[derive(Clone, Copy, Debug)]
pub enum F16 {}
/// bfloat16 elements (`.bf16`): 1 sign, 8 exponent, 7 mantissa bits (the top half of an
/// `f32`).
#[derive(Clone, Copy, Debug)]
pub enum Bf16 {}

impl sealed::Sealed for F16 {}
impl sealed::Sealed for Bf16 {}
impl Half16 for F16 {
    const PTX: &'static str = "f16";
}
impl Half16 for Bf16 {
    const PTX: &'static str = "bf16";
}

/// `group = lane / 4`, `thread = lane % 4`: the ISA's `groupID` and `threadID_in_group`.
const fn split(lane: u32) -> (u32, u32) {
    (lane / 4, lane % 4)
}

/// Two 16-bit elements in one 32-bit register, `low` in bits 0..16 (the element of the lower
/// index, as `mma` and `ldmatrix` read and write them).
#[inline(always)]
pub const fn pack_b16x2(low: u16, high: u16) -> u32 {
    low as u32 | (high as u32) << 16
}

/// The two 16-bit elements of a register, `(low, high)` ([`pack_b16x2`]'s inverse).
#[inline(always)]
pub const fn unpack_b16x2(register: u32) -> (u16, u16) {
    (register as u16, (register >> 16) as u16)
}

/// One lane's part of the 16 x 16 A matrix of `m16n8k16` (row-major, `.row`): 8 elements of
/// type `T` as their bits, two per register, element `2j` in the low half of `regs[j]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct A16x16<T: Half16> {
    /// The four `.b32` registers the instruction reads.
    pub regs: [u32; 4],
    _type: PhantomData<T>,
}

impl<T: Half16> A16x16<T> {
    /// Elements per lane.
    pub const ELEMENTS: usize = 8;

    /// The `(row, col)` of element `i` (`0..8`) of lane `lane` (`0..32`) in the 16 x 16 A:
    /// row `group + 8 * ((i / 2) % 2)`, column `2 * thread + i % 2 + 8 * (i / 4)`.
    pub const fn coord(lane: u32, i: usize) -> (usize, usize) {
        let (group, thread) = split(lane);
        let i = i as u32;
        let row = group + 8 * ((i / 2) % 2);
        let col = 2 * thread + i % 2 + 8 * (i / 4);
        (row as usize, col as usize)
    }

    /// The fragment of these registers (from [`ldmatrix_x4`] of the four 8 x 8 quarters in
    /// the order top-left, bottom-left, top-right, bottom-right).
    #[inline(always)]
    pub const fn from_regs(regs: [u32; 4]) -> Self {
        Self {
            regs,
            _type: PhantomData,
        }
    }

    /// The fragment holding `elements[i]` (the bits of an element of type `T`) as element `i`.
    #[inline(always)]
    pub const fn from_bits(e: [u16; 8]) -> Self {
        Self::from_regs([
            pack_b16x2(e[0], e[1]),
            pack_b16x2(e[2], e[3]),
            pack_b16x2(e[4], e[5]),
            pack_b16x2(e[6], e[7]),
        ])
    }
}

/// One lane's part of the 16 x 8 B matrix of `m16n8k16` (column-major, `.col`): 4 elements of
/// type `T` as their bits, element `2j` in the low half of `regs[j]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct B16x8<T: Half16> {
    /// The two `.b32` registers the instruction reads.
    pub regs: [u32; 2],
    _type: PhantomData<T>,
}

impl<T: Half16> B16x8<T> {
    /// Elements per lane.
    pub const ELEMENTS: usize = 4;

    /// The `(row, col)` of element `i` (`0..4`) of lane `lane` in the 16 x 8 B: row
    /// `2 * thread + i % 2 + 8 * (i / 2)`, column `group`.
    pub const fn coord(lane: u32, i: usize) -> (usize, usize) {
        let (group, thread) = split(lane);
        let i = i as u32;
        ((2 * thread + i % 2 + 8 * (i / 2)) as usize, group as usize)
    }

    /// The fragment of these registers (from [`ldmatrix_x2_trans`] of a row-major B's two
    /// 8 x 8 halves, top then bottom).
    #[inline(always)]
    pub const fn from_regs(regs: [u32; 2]) -> Self {
        Self {
            regs,
            _type: PhantomData,
        }
    }

    /// The fragment holding `elements[i]` as element `i`.
    #[inline(always)]
    pub const fn from_bits(e: [u16; 4]) -> Self {
        Self::from_regs([pack_b16x2(e[0], e[1]), pack_b16x2(e[2], e[3])])
    }
}

/// One lane's part of the 16 x 8 f32 accumulator, C or D, of `m16n8k16` and `m16n8k8`: 4
/// elements.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Acc16x8 {
    /// The four `.f32` registers.
    pub regs: [f32; 4],
}

impl Acc16x8 {
    /// Elements per lane.
    pub const ELEMENTS: usize = 4;

    /// The `(row, col)` of element `i` (`0..4`) of lane `lane` in the 16 x 8 C or D: row
    /// `group + 8 * (i / 2)`, column `2 * thread + i % 2`.
    pub const fn coord(lane: u32, i: usize) -> (usize, usize) {
        let (group, thread) = split(lane);
        let i = i as u32;
        (
            (group + 8 * (i / 2)) as usize,
            (2 * thread + i % 2) as usize,
        )
    }

    /// Zeros.
    pub const ZERO: Self = Self { regs: [0.0; 4] };
}

/// One lane's part of the 16 x 8 A matrix of `m16n8k8` `.tf32` (row-major): 4 tf32 elements,
/// one per register ([`to_tf32`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct ATf32 {
    /// The four `.b32` registers, each an `f32` whose low 13 mantissa bits are zero.
    pub regs: [u32; 4],
}

impl ATf32 {
    /// Elements per lane.
    pub const ELEMENTS: usize = 4;

    /// The `(row, col)` of element `i` (`0..4`) of lane `lane` in the 16 x 8 A: row
    /// `group + 8 * (i % 2)`, column `thread + 4 * (i / 2)`.
    pub const fn coord(lane: u32, i: usize) -> (usize, usize) {
        let (group, thread) = split(lane);
        let i = i as u32;
        (
            (group + 8 * (i % 2)) as usize,
            (thread + 4 * (i / 2)) as usize,
        )
    }
}

/// One lane's part of the 8 x 8 B matrix of `m16n8k8` `.tf32` (column-major): 2 tf32
/// elements ([`to_tf32`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct BTf32 {
    /// The two `.b32` registers.
    pub regs: [u32; 2],
}

impl BTf32 {
    /// Elements per lane.
    pub const ELEMENTS: usize = 2;

    /// The `(row, col)` of element `i` (`0..2`) of lane `lane` in the 8 x 8 B: row
    /// `thread + 4 * i`, column `group`.
    pub const fn coord(lane: u32, i: usize) -> (usize, usize) {
        let (group, thread) = split(lane);
        ((thread + 4 * i as u32) as usize, group as usize)
    }
}

/// `x` rounded to tf32 (PTX `cvt.rna.tf32.f32`, ISA instruction "cvt"): to 10 mantissa
/// bits, to the nearest, ties away from zero, as the bits of an `f32` whose low 13 bits are
/// zero; what an [`ATf32`] or [`BTf32`] register holds.
#[inline(always)]
#[cfg_attr(not(target_feature = "sm_80"), allow(unused_variables))]
#[crate::gpu_only]
pub fn to_tf32(x: f32) -> u32 {
    #[cfg(target_feature = "sm_80")]
    {
        let out: u32;
        // SAFETY: a conversion between registers; no memory access.
        unsafe {
            core::arch::asm!("cvt.rna.tf32.f32 {o}, {x};", o = out(reg32) out, x = in(reg32) x,
                options(pure, nomem, nostack));
        }
        out
    }
    #[cfg(not(target_feature = "sm_80"))]
    crate::__below_min_sm()
}

/// `D = A B + C` on one 16 x 16 f16 A, one 16 x 8 f16 B and a 16 x 8 f32 C, products exact and
/// sums in f32 (PTX `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`, ISA section
/// 9.7.14.5, instruction "mma"; fragments: "Matrix Fragments for mma.m16n8k16 with floating point
/// type"). Every lane of the warp calls it together (the [module](self)'s note on convergence).
#[inline(always)]
#[cfg_attr(not(target_feature = "sm_80"), allow(unused_variables))]
///
/// # Safety
/// All 32 lanes of the warp exist and execute this call together (convergent control flow;
/// the [module](self)'s note on convergence).
#[crate::gpu_only]
pub unsafe fn mma_m16n8k16_f16(a: A16x16<F16>, b: B16x8<F16>, c: Acc16x8) -> Acc16x8 {
    #[cfg(target_feature = "sm_80")]
    {
        let mut d = c;
        // SAFETY: the whole warp executes it together (the caller's contract); it reads and
        // writes registers only, and every bit pattern of the outputs is a valid `f32`.
        unsafe {
            core::arch::asm!(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \
                 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, \
                 {{{d0}, {d1}, {d2}, {d3}}};",
                d0 = inout(reg32) d.regs[0], d1 = inout(reg32) d.regs[1],
                d2 = inout(reg32) d.regs[2], d3 = inout(reg32) d.regs[3],
                a0 = in(reg32) a.regs[0], a1 = in(reg32) a.regs[1],
                a2 = in(reg32) a.regs[2], a3 = in(reg32) a.regs[3],
                b0 = in(reg32) b.regs[0], b1 = in(reg32) b.regs[1],
                options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_feature = "sm_80"))]
    crate::__below_min_sm()
}

/// `D = A B + C` as [`mma_m16n8k16_f16`] with bf16 inputs (PTX
/// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`, the same section and fragments).
#[inline(always)]
#[cfg_attr(not(target_feature = "sm_80"), allow(unused_variables))]
///
/// # Safety
/// All 32 lanes of the warp exist and execute this call together (convergent control flow;
/// the [module](self)'s note on convergence).
#[crate::gpu_only]
pub unsafe fn mma_m16n8k16_bf16(a: A16x16<Bf16>, b: B16x8<Bf16>, c: Acc16x8) -> Acc16x8 {
    #[cfg(target_feature = "sm_80")]
    {
        let mut d = c;
        // SAFETY: the whole warp executes it together (the caller's contract); it reads and
        // writes registers only, and every bit pattern of the outputs is a valid `f32`.
        unsafe {
            core::arch::asm!(
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 \
                 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, \
                 {{{d0}, {d1}, {d2}, {d3}}};",
                d0 = inout(reg32) d.regs[0], d1 = inout(reg32) d.regs[1],
                d2 = inout(reg32) d.regs[2], d3 = inout(reg32) d.regs[3],
                a0 = in(reg32) a.regs[0], a1 = in(reg32) a.regs[1],
                a2 = in(reg32) a.regs[2], a3 = in(reg32) a.regs[3],
                b0 = in(reg32) b.regs[0], b1 = in(reg32) b.regs[1],
                options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_feature = "sm_80"))]
    crate::__below_min_sm()
}

/// `D = A B + C` on one 16 x 8 tf32 A, one 8 x 8 tf32 B and a 16 x 8 f32 C (PTX
/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`, ISA section 9.7.14.5, instruction "mma";
/// fragments: "Matrix Fragments for mma.m16n8k8", `.tf32`). The inputs are [`to_tf32`]'s
/// roundings, so each product is exact in f32 and only the sums round.
#[inline(always)]
#[cfg_attr(not(target_feature = "sm_80"), allow(unused_variables))]
///
/// # Safety
/// All 32 lanes of the warp exist and execute this call together (convergent control flow;
/// the [module](self)'s note on convergence).
#[crate::gpu_only]
pub unsafe fn mma_m16n8k8_tf32(a: ATf32, b: BTf32, c: Acc16x8) -> Acc16x8 {
    #[cfg(target_feature = "sm_80")]
    {
        let mut d = c;
        // SAFETY: the whole warp executes it together (the caller's contract); it reads and
        // writes registers only, and every bit pattern of the outputs is a valid `f32`.
        unsafe {
            core::arch::asm!(
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \
                 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, \
                 {{{d0}, {d1}, {d2}, {d3}}};",
                d0 = inout(reg32) d.regs[0], d1 = inout(reg32) d.regs[1],
                d2 = inout(reg32) d.regs[2], d3 = inout(reg32) d.regs[3],
                a0 = in(reg32) a.regs[0], a1 = in(reg32) a.regs[1],
                a2 = in(reg32) a.regs[2], a3 = in(reg32) a.regs[3],
                b0 = in(reg32) b.regs[0], b1 = in(reg32) b.regs[1],
                options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_feature = "sm_80"))]
    crate::__below_min_sm()
}

/// The `(row, col)` within its 8 x 8 matrix of the 16-bit element `half` (0: the low half of
/// the register, 1: the high) that lane `lane` receives from `ldmatrix` (ISA section
/// 9.7.14.5.15 "ldmatrix", figure "ldmatrix fragment layout"): row `lane / 4`, column
/// `2 * (lane % 4) + half`; with `.trans` (`trans`), row `2 * (lane % 4) + half`, column
/// `lane / 4`, of the matrix as it lies in shared memory. Matrix `m` of an `x2`/`x4` load goes
/// into register `m`, and its row `r` is read from the address lane `8 * m + r` gives.
pub const fn ldmatrix_coord(lane: u32, half: usize, trans: bool) -> (usize, usize) {
    let (group, thread) = split(lane);
    let (row, col) = (group as usize, 2 * thread as usize + half);
    if trans { (col, row) } else { (row, col) }
}

macro_rules! ldmatrix {
    ($(#[$doc:meta])* $name:ident, $shape:literal, [$($r:ident),+], $n:literal) => {
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_feature = "sm_80"), allow(unused_variables))]
        #[crate::gpu_only]
        pub unsafe fn $name(address: u32) -> [u32; $n] {
            #[cfg(target_feature = "sm_80")]
            {
                $(let $r: u32;)+
                // SAFETY: the caller's contract (at `ldmatrix_x4`): each address lane 8 m + r
                // gives is a 16-byte aligned shared-window address valid for 16 bytes that no
                // thread writes unordered with this read. Not `nomem`: it reads shared memory.
                unsafe {
                    core::arch::asm!(
                        concat!("ldmatrix.sync.aligned.m8n8.", $shape, ".shared.b16 {{",
                            ldmatrix!(@list $($r),+), "}}, [{address}];"),
                        $($r = out(reg32) $r,)+
                        address = in(reg32) address,
                        options(readonly, nostack));
                }
                [$($r),+]
            }
            #[cfg(not(target_feature = "sm_80"))]
            crate::__below_min_sm()
        }
    };
    (@list $first:ident $(, $rest:ident)*) => {
        concat!("{", stringify!($first), "}" $(, ", {", stringify!($rest), "}")*)
    };
}

ldmatrix!(
    /// One 8 x 8 matrix of 16-bit elements from shared memory, row `r` at the address lane `r`
    /// gives (lanes 0..8), into one register per lane ([`ldmatrix_coord`]); PTX
    /// `ldmatrix.sync.aligned.m8n8.x1.shared.b16`.
    ///
    /// # Safety
    /// As [`ldmatrix_x4`], for lanes 0..8.
    ldmatrix_x1, "x1", [r0], 1
);
ldmatrix!(
    /// The same with `.trans`: each lane receives a column's pair instead of a row's
    /// ([`ldmatrix_coord`] with `trans`); PTX `ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16`.
    ///
    /// # Safety
    /// As [`ldmatrix_x4`], for lanes 0..8.
    ldmatrix_x1_trans, "x1.trans", [r0], 1
);
ldmatrix!(
    /// Two 8 x 8 matrices, matrix `m` into register `m`, its row `r` at the address lane
    /// `8 * m + r` gives (lanes 0..16); PTX `ldmatrix.sync.aligned.m8n8.x2.shared.b16`.
    ///
    /// # Safety
    /// As [`ldmatrix_x4`], for lanes 0..16.
    ldmatrix_x2, "x2", [r0, r1], 2
);
ldmatrix!(
    /// [`ldmatrix_x2`] with `.trans`: a row-major 16 x 8 B (its top and bottom 8 x 8) as the
    /// [`B16x8`] fragment of `m16n8k16`; PTX `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16`.
    ///
    /// # Safety
    /// As [`ldmatrix_x4`], for lanes 0..16.
    ldmatrix_x2_trans, "x2.trans", [r0, r1], 2
);
ldmatrix!(
    /// Four 8 x 8 matrices of 16-bit elements from shared memory, matrix `m` into register
    /// `m`, its row `r` (16 bytes) at the address lane `8 * m + r` gives; each lane receives
    /// of each matrix the pair [`ldmatrix_coord`] names. With the quarters of a row-major
    /// 16 x 16 A in the order top-left, bottom-left, top-right, bottom-right it yields the
    /// [`A16x16`] fragment of `m16n8k16`. PTX `ldmatrix.sync.aligned.m8n8.x4.shared.b16`
    /// (ISA section 9.7.14.5.15).
    ///
    /// # Safety
    /// Every lane of the warp calls it together (`.sync.aligned`), and the address of each lane
    /// the shape reads (0..8 for `x1`, 0..16 for `x2`, all 32 for `x4`) is a shared-window
    /// address ([`SharedArray::shared_address`](crate::SharedArray::shared_address) plus an
    /// offset), 16-byte aligned, of 16 bytes inside one shared allocation that no thread writes
    /// unordered with this read (a barrier between). The other lanes' addresses are not read.
    ldmatrix_x4, "x4", [r0, r1, r2, r3], 4
);
ldmatrix!(
    /// [`ldmatrix_x4`] with `.trans`; PTX `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`.
    ///
    /// # Safety
    /// As [`ldmatrix_x4`].
    ldmatrix_x4_trans, "x4.trans", [r0, r1, r2, r3], 4
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `(row, col)` of a `rows x cols` matrix is held by exactly one (lane, element).
    fn covers_once(
        rows: usize,
        cols: usize,
        elements: usize,
        coord: fn(u32, usize) -> (usize, usize),
    ) {
        let mut seen = [[0u32; 16]; 16];
        for lane in 0..32 {
            for i in 0..elements {
                let (r, c) = coord(lane, i);
                assert!(r < rows && c < cols, "lane {lane} element {i}: ({r}, {c})");
                seen[r][c] += 1;
            }
        }
        assert_eq!(32 * elements, rows * cols);
        for (r, row) in seen.iter().enumerate().take(rows) {
            for (c, &n) in row.iter().enumerate().take(cols) {
                assert_eq!(n, 1, "({r}, {c}) held {n} times");
            }
        }
    }

    #[test]
    fn every_fragment_covers_its_matrix_once() {
        covers_once(16, 16, A16x16::<F16>::ELEMENTS, A16x16::<F16>::coord);
        covers_once(16, 8, B16x8::<Bf16>::ELEMENTS, B16x8::<Bf16>::coord);
        covers_once(16, 8, Acc16x8::ELEMENTS, Acc16x8::coord);
        covers_once(16, 8, ATf32::ELEMENTS, ATf32::coord);
        covers_once(8, 8, BTf32::ELEMENTS, BTf32::coord);
        covers_once(8, 8, 2, |lane, h| ldmatrix_coord(lane, h, false));
        covers_once(8, 8, 2, |lane, h| ldmatrix_coord(lane, h, true));
    }

    /// The ISA's figures, lane by lane for a few lanes.
    #[test]
    fn fragments_match_the_isa_figures() {
        // A (m16n8k16): lane 0 holds a0,a1 = (0,0),(0,1); a2,a3 = (8,0),(8,1);
        // a4,a5 = (0,8),(0,9); a6,a7 = (8,8),(8,9).
        let a: [(usize, usize); 8] = core::array::from_fn(|i| A16x16::<F16>::coord(0, i));
        assert_eq!(
            a,
            [
                (0, 0),
                (0, 1),
                (8, 0),
                (8, 1),
                (0, 8),
                (0, 9),
                (8, 8),
                (8, 9)
            ]
        );
        // Lane 7 (group 1, thread 3): a0 = (1, 6), a7 = (9, 15).
        assert_eq!(A16x16::<F16>::coord(7, 0), (1, 6));
        assert_eq!(A16x16::<F16>::coord(7, 7), (9, 15));
        // B (m16n8k16): lane 5 (group 1, thread 1): b0..b3 = (2,1),(3,1),(10,1),(11,1).
        let b: [(usize, usize); 4] = core::array::from_fn(|i| B16x8::<F16>::coord(5, i));
        assert_eq!(b, [(2, 1), (3, 1), (10, 1), (11, 1)]);
        // C/D: lane 31 (group 7, thread 3): (7,6),(7,7),(15,6),(15,7).
        let c: [(usize, usize); 4] = core::array::from_fn(|i| Acc16x8::coord(31, i));
        assert_eq!(c, [(7, 6), (7, 7), (15, 6), (15, 7)]);
        // tf32 A: lane 6 (group 1, thread 2): (1,2),(9,2),(1,6),(9,6); B: (2,1),(6,1).
        let a: [(usize, usize); 4] = core::array::from_fn(|i| ATf32::coord(6, i));
        assert_eq!(a, [(1, 2), (9, 2), (1, 6), (9, 6)]);
        assert_eq!([BTf32::coord(6, 0), BTf32::coord(6, 1)], [(2, 1), (6, 1)]);
    }

    /// `ldmatrix_x4` of the quarters (top-left, bottom-left, top-right, bottom-right) is the A
    /// fragment, and `ldmatrix_x2_trans` of a row-major B's halves the B fragment.
    #[test]
    fn ldmatrix_yields_the_mma_fragments() {
        for lane in 0..32 {
            for i in 0..8 {
                let (register, half) = (i / 2, i % 2);
                let (r, c) = ldmatrix_coord(lane, half, false);
                let quarter = (8 * (register % 2), 8 * (register / 2));
                assert_eq!(
                    (quarter.0 + r, quarter.1 + c),
                    A16x16::<F16>::coord(lane, i)
                );
            }
            for i in 0..4 {
                let (register, half) = (i / 2, i % 2);
                let (r, c) = ldmatrix_coord(lane, half, true);
                assert_eq!((8 * register + r, c), B16x8::<F16>::coord(lane, i));
            }
        }
    }

    #[test]
    fn packing_puts_the_lower_index_low() {
        assert_eq!(pack_b16x2(0x1234, 0xabcd), 0xabcd_1234);
        assert_eq!(unpack_b16x2(0xabcd_1234), (0x1234, 0xabcd));
        let a = A16x16::<Bf16>::from_bits([1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(a.regs, [0x0002_0001, 0x0004_0003, 0x0006_0005, 0x0008_0007]);
    }
}
