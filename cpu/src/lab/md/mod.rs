//! Molecular dynamics force reduction: Lennard-Jones forces of the LJ-melt benchmark on a team
//! of CPU threads (the paper's Critical and Triangle methods, and a reduction with no critical
//! section) and on the GPU (full list, or half list with atomics).
//!
//! Source: the seed "cuda 并行归约", part 1, summarising 《基于OpenMP的分子动力学并行算法的性能分析与优化》
//! (2012): an OpenMP MD code that applies Newton's third law, so each thread accumulates forces
//! of atoms other threads own in a private `f_local` and adds it into the shared `f` in a
//! critical section. The system is LAMMPS's LJ-melt benchmark (`bench/in.lj`): fcc lattice at
//! reduced density 0.8442, Lennard-Jones cut at 2.5 sigma without shift, skin 0.3, velocity
//! Verlet with dt 0.005, temperature 3.0, periodic cube; `cells` fcc unit cells per side
//! (20 gives 32000 atoms).
//!
//! # Calling it
//! ```
//! use cpu::lab::md::{self, ListKind, NeighbourList, System};
//!
//! # fn main() -> cpu::Result<()> {
//! let system = System::lj_melt(5, 87287)?; // 500 atoms, T = 3
//! let list = NeighbourList::build(&system, ListKind::Half, md::CUTOFF + md::SKIN)?;
//! let f = md::forces(&system, &list, 2)?; // the no-lock reduction on 2 threads
//! assert_eq!(format!("{:.7}", f.potential_per_atom()), "-6.7733681"); // the lattice sum
//! # Ok(())
//! # }
//! ```
//! On the GPU ([`gpu`](mod@gpu)): [`DeviceNeighbourList::upload`], then
//! [`launch`](gpu::launch) on device buffers, or [`gpu::run`] from a [`System`].
//!
//! # Modules
//! - [`system`]: the lattice, box, units, constants and seeded velocities ([`SplitMix64`]).
//! - [`neighbour`]: cell list, half and full Verlet lists, the rebuild rule (any atom moved
//!   more than `SKIN / 2` since the last build).
//! - [`forces`](mod@forces): the pair function, the serial reference, brute force, the error
//!   bounds of the checks.
//! - [`team`]: the thread team and the three reductions, with their timings and the paper's
//!   idle-time model.
//! - [`integrate`]: velocity Verlet and the energy drift.
//! - [`gpu`](mod@gpu): the GPU force kernels' launchers.

pub mod forces;
pub mod gpu;
pub mod integrate;
pub mod neighbour;
pub mod system;
pub mod team;

pub use self::forces::{Forces, serial};
pub use self::gpu::{DeviceNeighbourList, GpuForces, GpuKernel, GpuVariant, Precision};
pub use self::integrate::{Drift, Simulation, Thermo, energy_drift};
pub use self::neighbour::{CellList, ListKind, NeighbourList, VerletList};
pub use self::system::{
    CUTOFF, DENSITY, DT, LATTICE_ENERGY_PER_ATOM, SKIN, SplitMix64, System, TEMPERATURE,
};
pub use self::team::{Method, Partition, TeamRun, TriangleModel};

use crate::error::Result;

/// The forces to call: Lennard-Jones forces, potential energy and virial of `system` over its
/// HALF neighbour `list` (Newton's third law), on a team of `threads` threads with the no-lock
/// reduction ([`Method::Reduction`]: each thread sums every thread's `f_local` over its own
/// equal share of atoms). Equal to [`serial`] up to the order of additions.
///
/// # Errors
/// [`Error::OutOfRange`](crate::Error::OutOfRange) unless `1 <= threads <=
/// team::MAX_THREADS`; [`Error::Unsupported`](crate::Error::Unsupported) for a full list;
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) if the list is of another system
/// size.
pub fn forces(system: &System, list: &NeighbourList, threads: usize) -> Result<Forces> {
    let partition = Partition::even(system.len(), threads)?;
    team::forces(system, list, Method::Reduction, &partition)
}

/// Every GPU kernel's `.entry` name (for the PTX checks).
pub fn kernel_names() -> Vec<&'static str> {
    gpu::kernel_names()
}
