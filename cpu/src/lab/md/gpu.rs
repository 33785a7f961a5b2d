//! Launchers of the GPU force kernels (`gpu::md`): one thread per atom over a full list, or
//! over a half list with atomic adds (Newton's third law on the GPU), each in `f32` and `f64`.
//!
//! Device data: positions and forces packed as `[x, y, z, w]` per atom ([`MD_STRIDE`] values,
//! see [`pack_positions`]); forces' `w` receives the atom's potential energy
//! `1/2 sum_j E(r_ij)`. The neighbour list is a [`DeviceNeighbourList`], which can only be made
//! by uploading a validated [`NeighbourList`], so every index a kernel reads is below its atom
//! count by construction.

use ::gpu::md::{MD_BLOCK, MD_STRIDE, kernels};
use cudarc::driver::{
    CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, ValidAsZeroBits,
};

use super::forces::CUTOFF_SQ;
use super::neighbour::{ListKind, NeighbourList};
use super::system::{CUTOFF, System};
use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
use crate::kernel::{DeviceCopy, Kernel};
use crate::launch;

/// A force kernel in precision `T`: `(positions, n, offsets, neighbours, box_len, cutoff_sq,
/// forces)`.
pub type ForceKernel<T> = Kernel<(*const T, usize, *const u32, *const u32, T, T, *mut T)>;

/// A floating-point type the force kernels exist for: `f32` or `f64`.
pub trait MdReal:
    DeviceRepr + DeviceCopy + ValidAsZeroBits + Default + Clone + Copy + 'static
{
    /// The full-list kernel.
    const FULL: ForceKernel<Self>;
    /// The half-list atomic kernel.
    const HALF_ATOMIC: ForceKernel<Self>;
    /// The unit roundoff (`2^-24`, `2^-53`), for error bounds.
    const UNIT_ROUNDOFF: f64;
    /// The precision, as a value.
    const PRECISION: Precision;
    /// `x` rounded to this type.
    fn from_f64(x: f64) -> Self;
    /// `self` as `f64` (exact).
    fn to_f64(self) -> f64;
}

impl MdReal for f32 {
    const FULL: ForceKernel<f32> = kernels::md_lj_full_f32;
    const HALF_ATOMIC: ForceKernel<f32> = kernels::md_lj_half_atomic_f32;
    const UNIT_ROUNDOFF: f64 = super::forces::F32_UNIT_ROUNDOFF;
    const PRECISION: Precision = Precision::F32;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl MdReal for f64 {
    const FULL: ForceKernel<f64> = kernels::md_lj_full_f64;
    const HALF_ATOMIC: ForceKernel<f64> = kernels::md_lj_half_atomic_f64;
    const UNIT_ROUNDOFF: f64 = super::forces::F64_UNIT_ROUNDOFF;
    const PRECISION: Precision = Precision::F64;
    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// How a kernel splits the pair work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum GpuVariant {
    /// One thread per atom over its full list: each pair computed twice, no race.
    Full,
    /// One thread per atom over its half list, the reaction added with `atomicAdd`.
    HalfAtomic,
}

impl GpuVariant {
    /// The list kind the kernel reads.
    pub fn list_kind(self) -> ListKind {
        match self {
            GpuVariant::Full => ListKind::Full,
            GpuVariant::HalfAtomic => ListKind::Half,
        }
    }

    /// The kernel of this variant in precision `T`.
    pub fn kernel<T: MdReal>(self) -> ForceKernel<T> {
        match self {
            GpuVariant::Full => T::FULL,
            GpuVariant::HalfAtomic => T::HALF_ATOMIC,
        }
    }

    /// The entry name of this variant in precision `T`.
    pub fn kernel_name<T: MdReal>(self) -> &'static str {
        self.kernel::<T>().name()
    }
}

/// Floating-point precision of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// `f32` positions, forces and arithmetic.
    F32,
    /// `f64` throughout.
    F64,
}

/// One force kernel: a variant in a precision. The demo and the tests iterate
/// [`GpuKernel::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuKernel {
    /// Full list or half list with atomics.
    pub variant: GpuVariant,
    /// `f32` or `f64`.
    pub precision: Precision,
}

impl GpuKernel {
    /// Every force kernel.
    pub const ALL: [GpuKernel; 4] = [
        GpuKernel::new(GpuVariant::Full, Precision::F32),
        GpuKernel::new(GpuVariant::Full, Precision::F64),
        GpuKernel::new(GpuVariant::HalfAtomic, Precision::F32),
        GpuKernel::new(GpuVariant::HalfAtomic, Precision::F64),
    ];

    /// The kernel of `variant` in `precision`.
    pub const fn new(variant: GpuVariant, precision: Precision) -> Self {
        Self { variant, precision }
    }

    /// Its `.entry` name.
    pub fn kernel_name(self) -> &'static str {
        match self.precision {
            Precision::F32 => self.variant.kernel_name::<f32>(),
            Precision::F64 => self.variant.kernel_name::<f64>(),
        }
    }

    /// Unit roundoff of its precision.
    pub fn unit_roundoff(self) -> f64 {
        match self.precision {
            Precision::F32 => f32::UNIT_ROUNDOFF,
            Precision::F64 => f64::UNIT_ROUNDOFF,
        }
    }
}

/// Every force kernel's `.entry` name.
pub fn kernel_names() -> Vec<&'static str> {
    GpuKernel::ALL.iter().map(|k| k.kernel_name()).collect()
}

/// A validated [`NeighbourList`] in device memory (CSR, `u32`). Made only by
/// [`DeviceNeighbourList::upload`], so its indices are below [`DeviceNeighbourList::atoms`].
pub struct DeviceNeighbourList {
    kind: ListKind,
    atoms: usize,
    entries: usize,
    offsets: CudaSlice<u32>,
    neighbours: CudaSlice<u32>,
}

impl DeviceNeighbourList {
    /// Copies `list` to `gpu`'s device (an empty list gets a one-element buffer, never read).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] or [`Error::Driver`] from the copies.
    pub fn upload(gpu: &Gpu, list: &NeighbourList) -> Result<Self> {
        let neighbours = if list.neighbours().is_empty() {
            gpu.zeros(1)?
        } else {
            gpu.upload(list.neighbours())?
        };
        Ok(Self {
            kind: list.kind(),
            atoms: list.atoms(),
            entries: list.entries(),
            offsets: gpu.upload(list.offsets())?,
            neighbours,
        })
    }

    /// Half or full.
    pub fn kind(&self) -> ListKind {
        self.kind
    }

    /// Number of atoms.
    pub fn atoms(&self) -> usize {
        self.atoms
    }

    /// Total entries.
    pub fn entries(&self) -> usize {
        self.entries
    }
}

/// Positions packed for the kernels: `[x, y, z, 0]` per atom, rounded to `T`.
pub fn pack_positions<T: MdReal>(system: &System) -> Vec<T> {
    let mut packed = Vec::with_capacity(MD_STRIDE * system.len());
    for p in &system.positions {
        packed.extend([
            T::from_f64(p[0]),
            T::from_f64(p[1]),
            T::from_f64(p[2]),
            T::default(),
        ]);
    }
    packed
}

/// The launch for `atoms` atoms: blocks of [`MD_BLOCK`] (128) threads, `ceil(atoms / 128)`
/// blocks, one thread per atom.
///
/// # Errors
/// [`Error::GridTooLarge`] if that is more blocks than a grid holds.
pub fn launch_config(kernel: &'static str, atoms: usize) -> Result<LaunchConfig> {
    let grid = launch::blocks_to_cover(kernel, atoms, MD_BLOCK as u64)?;
    Ok(launch::linear(grid, MD_BLOCK, 0))
}

/// Queues the Lennard-Jones forces of `positions` on `gpu`'s stream with the kernel of
/// `variant` in precision `T`, into `forces`, and returns the launch configuration. The
/// half-list variant first queues a memset of `forces` to zero (its atomics add into it).
/// Nothing is launched for zero atoms.
///
/// `positions`: `4 N` values (`[x, y, z, ignored]` per atom, sigma; any finite values, the
/// kernels take the minimum image); `list`: the full list for [`GpuVariant::Full`], the half
/// list for [`GpuVariant::HalfAtomic`], radius at least [`CUTOFF`] (plus the skin the
/// positions have moved since it was built); `box_len`: the cube's side, sigma; `forces`:
/// `4 N` values, written as `[f_x, f_y, f_z, 1/2 sum_j E(r_ij)]` per atom. Cutoff
/// [`CUTOFF`] (2.5 sigma, plain truncation).
///
/// # Errors
/// [`Error::LengthMismatch`] if `positions` or `forces` do not hold `4 N` values;
/// [`Error::Unsupported`] if the list's kind is not the variant's, or the box is not finite
/// and wider than twice the cutoff; [`Error::Misaligned`] if a view does not start on an
/// atom boundary (16 bytes for `f32`, 32 for `f64`); [`Error::WrongContext`] if a buffer
/// lives on another device; [`Error::GridTooLarge`]; [`Error::Driver`] if the launch fails.
pub fn launch<T: MdReal>(
    gpu: &Gpu,
    variant: GpuVariant,
    positions: &impl DevicePtr<T>,
    list: &DeviceNeighbourList,
    box_len: f64,
    forces: &mut impl DevicePtrMut<T>,
) -> Result<LaunchConfig> {
    let kernel = variant.kernel::<T>();
    let n = list.atoms;
    for (what, len) in [
        ("positions (4 values per atom)", positions.len()),
        ("forces (4 values per atom)", forces.len()),
    ] {
        if len != MD_STRIDE * n {
            return Err(Error::LengthMismatch {
                what,
                expected: MD_STRIDE * n,
                actual: len,
            });
        }
    }
    if list.kind != variant.list_kind() {
        return Err(Error::Unsupported {
            what: "neighbour list",
            requirement: match variant {
                GpuVariant::Full => "the full-list kernels need a full neighbour list",
                GpuVariant::HalfAtomic => "the half-list kernels need a half neighbour list",
            },
        });
    }
    if !(box_len.is_finite() && box_len > 2.0 * CUTOFF) {
        return Err(Error::Unsupported {
            what: "box_len",
            requirement: "a finite box side above twice the cutoff (5 sigma): the minimum image must be the only image within it",
        });
    }
    gpu.check_buffer("positions", positions)?;
    gpu.check_buffer("forces", forces)?;
    gpu.check_buffer("neighbour list", &list.offsets)?;
    let alignment = MD_STRIDE * std::mem::size_of::<T>();
    // The positions' address is taken once, for the check and the launch; the forces' is taken
    // again by the launch, after the half-list kernel's zeroing.
    let positions = gpu.bind(positions);
    let (positions_at, forces_at) = (positions.address(), gpu.bind_mut(forces).address());
    let name = kernel.name();
    launch::check_aligned(name, "positions", positions_at, alignment)?;
    launch::check_aligned(name, "forces", forces_at, alignment)?;
    let cfg = launch_config(name, n)?;
    if n == 0 {
        return Ok(cfg);
    }
    if variant == GpuVariant::HalfAtomic {
        gpu.stream()
            .memset_zeros(forces)
            .during(format!("zeroing the forces for {name}"))?;
    }
    let (box_len, cutoff_sq) = (T::from_f64(box_len), T::from_f64(CUTOFF_SQ));
    let (offsets, neighbours) = (&list.offsets, &list.neighbours);
    // SAFETY: `md_lj_*(positions, n, offsets, neighbours, box_len, cutoff_sq, forces)`:
    // `positions` and `forces` hold `4 n` values of `T` (checked), start on an atom boundary
    // (checked) and do not overlap (one is borrowed mutably); `offsets` and `neighbours` come
    // from a validated `NeighbourList` of `n` atoms (`n + 1` nondecreasing offsets ending at the
    // entry count, every index `< n`); the half-list kernel's `forces` was zeroed on the same
    // stream just before; the grid covers `n` threads and the kernels return past `n`.
    unsafe {
        gpu.launch_unchecked(
            kernel,
            cfg,
            (
                positions, n, offsets, neighbours, box_len, cutoff_sq, forces,
            ),
        )
    }?;
    Ok(cfg)
}

/// Forces and per-atom energies from a GPU kernel, in `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuForces {
    /// Force on each atom, epsilon / sigma.
    pub forces: Vec<[f64; 3]>,
    /// `1/2 sum_j E(r_ij)` of each atom, epsilon.
    pub energies: Vec<f64>,
}

impl GpuForces {
    /// Total potential energy, summed in `f64`.
    pub fn potential(&self) -> f64 {
        self.energies.iter().sum()
    }

    /// Unpacks `[x, y, z, w]` per atom.
    pub fn unpack<T: MdReal>(packed: &[T]) -> Self {
        let (mut forces, mut energies) = (Vec::new(), Vec::new());
        for a in packed.chunks_exact(MD_STRIDE) {
            forces.push([a[0].to_f64(), a[1].to_f64(), a[2].to_f64()]);
            energies.push(a[3].to_f64());
        }
        Self { forces, energies }
    }
}

/// Host convenience: builds the list the variant needs (radius `CUTOFF + SKIN`) for
/// `system`, uploads it and the positions (rounded to `T`), runs the kernel into a force
/// buffer poisoned with NaN, and downloads the result. Waits for `gpu`'s stream.
///
/// # Errors
/// As [`NeighbourList::build`] and [`launch()`]; [`Error::Driver`] if the kernel faults.
pub fn run<T: MdReal>(gpu: &Gpu, variant: GpuVariant, system: &System) -> Result<GpuForces> {
    let list = NeighbourList::build(system, variant.list_kind(), CUTOFF + super::system::SKIN)?;
    run_with_list::<T>(gpu, variant, system, &list)
}

/// As [`run`], with the caller's list.
///
/// # Errors
/// As [`launch()`]; [`Error::LengthMismatch`] if the list has another atom count than the
/// system.
pub fn run_with_list<T: MdReal>(
    gpu: &Gpu,
    variant: GpuVariant,
    system: &System,
    list: &NeighbourList,
) -> Result<GpuForces> {
    if list.atoms() != system.len() {
        return Err(Error::LengthMismatch {
            what: "neighbour list atoms",
            expected: system.len(),
            actual: list.atoms(),
        });
    }
    let d_positions = gpu.upload(&pack_positions::<T>(system))?;
    let d_list = DeviceNeighbourList::upload(gpu, list)?;
    let poison = T::from_f64(f64::NAN);
    let mut d_forces = gpu.poisoned(MD_STRIDE * system.len(), poison)?;
    launch::<T>(
        gpu,
        variant,
        &d_positions,
        &d_list,
        system.box_len(),
        &mut d_forces,
    )?;
    let packed = gpu.download(&d_forces, variant.kernel_name::<T>())?;
    Ok(GpuForces::unpack(&packed))
}

/// [`run`] for a [`GpuKernel`] value.
///
/// # Errors
/// As [`run`].
pub fn run_kernel(gpu: &Gpu, kernel: GpuKernel, system: &System) -> Result<GpuForces> {
    match kernel.precision {
        Precision::F32 => run::<f32>(gpu, kernel.variant, system),
        Precision::F64 => run::<f64>(gpu, kernel.variant, system),
    }
}

/// `system` as a kernel of `precision` sees it (positions and box rounded to `f32`, or as
/// they are): the input of the `f64` reference a kernel is checked against.
pub fn as_seen_by(system: &System, precision: Precision) -> System {
    match precision {
        Precision::F32 => system.rounded(|x| x as f32 as f64),
        Precision::F64 => system.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::forces::{ErrorScales, check_forces, per_atom_energies, serial};
    use super::super::system::SKIN;
    use super::*;

    #[test]
    fn kernels_are_named_and_distinct() {
        assert_eq!(
            kernel_names(),
            [
                kernels::md_lj_full_f32.name(),
                kernels::md_lj_full_f64.name(),
                kernels::md_lj_half_atomic_f32.name(),
                kernels::md_lj_half_atomic_f64.name(),
            ]
        );
        let mut distinct = kernel_names();
        distinct.dedup();
        assert_eq!(distinct.len(), GpuKernel::ALL.len());
        assert_eq!(GpuKernel::ALL[2].variant.list_kind(), ListKind::Half);
    }

    #[test]
    fn packing_round_trips() {
        let s = System::fcc(3).unwrap();
        let p = pack_positions::<f64>(&s);
        assert_eq!(p.len(), 4 * s.len());
        assert_eq!(&p[4..7], &s.positions[1][..]);
        let u = GpuForces::unpack(&[1.0f32, 2.0, 3.0, 4.0]);
        assert_eq!((u.forces, u.energies), (vec![[1.0, 2.0, 3.0]], vec![4.0]));
    }

    /// The kernels' arithmetic, on the CPU in `T`, in the kernels' operation order (the PTX
    /// has no fused multiply-adds: `mul.rn` and `add.rn` throughout, so the GPU rounds the
    /// same way). Full-list variant.
    fn emulate_full<T>(system: &System, list: &NeighbourList) -> GpuForces
    where
        T: MdReal
            + std::ops::Add<Output = T>
            + std::ops::Sub<Output = T>
            + std::ops::Mul<Output = T>
            + std::ops::Div<Output = T>
            + PartialOrd,
    {
        let c = |x: f64| T::from_f64(x);
        let l = c(system.box_len());
        let inv = c(1.0) / l;
        let rint = |x: T| c(x.to_f64().round_ties_even());
        let p = pack_positions::<T>(system);
        let mut packed = Vec::new();
        for i in 0..system.len() {
            let (mut f, mut e) = ([c(0.0); 3], c(0.0));
            for &j in list.of(i) {
                let j = j as usize;
                let d: [T; 3] = std::array::from_fn(|k| {
                    let d = p[4 * i + k] - p[4 * j + k];
                    d - l * rint(d * inv)
                });
                let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if r2 < c(CUTOFF_SQ) {
                    let sr2 = c(1.0) / r2;
                    let sr6 = sr2 * sr2 * sr2;
                    let phi = c(48.0) * sr2 * sr6 * (sr6 - c(0.5));
                    let ep = c(4.0) * sr6 * (sr6 - c(1.0));
                    f = [f[0] + phi * d[0], f[1] + phi * d[1], f[2] + phi * d[2]];
                    e = e + ep;
                }
            }
            packed.extend([f[0], f[1], f[2], c(0.5) * e]);
        }
        GpuForces::unpack(&packed)
    }

    /// The `f32` tolerance of the GPU tests holds for the kernels' arithmetic: the full-list
    /// kernel emulated in `f32` stays within [`ErrorScales::recomputed_force_bound`] of the
    /// `f64` reference on the rounded inputs, on perfect and perturbed lattices, and `f64`
    /// within its own bound.
    #[test]
    fn f32_tolerance_holds_for_the_kernel_arithmetic() {
        for cells in [3, 5] {
            for amplitude in [0.0, 0.1] {
                let mut s = System::fcc(cells).unwrap();
                s.perturb(99 + cells as u64, amplitude);
                let full = NeighbourList::build(&s, ListKind::Full, CUTOFF + SKIN).unwrap();
                for (precision, emulated) in [
                    (Precision::F32, emulate_full::<f32>(&s, &full)),
                    (Precision::F64, emulate_full::<f64>(&s, &full)),
                ] {
                    let seen = as_seen_by(&s, precision);
                    let reference = serial(&seen, &full);
                    let scales = ErrorScales::new(&seen, &full);
                    let u = GpuKernel::new(GpuVariant::Full, precision).unit_roundoff();
                    let worst = check_forces(
                        &emulated.forces,
                        &reference.forces,
                        &scales.recomputed_force_bound(u),
                    )
                    .unwrap_or_else(|m| panic!("{precision:?} {cells} cells {amplitude}: {m}"));
                    assert!(worst < 0.25, "{precision:?}: error at {worst} of the bound");
                    let energies = per_atom_energies(&seen, &full);
                    let bound = scales.recomputed_energy_bound(u);
                    for i in 0..s.len() {
                        assert!((emulated.energies[i] - energies[i]).abs() <= bound[i]);
                    }
                }
            }
        }
    }
}
