//! GPU trials of the molecular-dynamics pattern: every force kernel (full list, half list with
//! atomics; `f32` and `f64`) against the CPU serial reference on the LJ-melt lattice of 3, 5
//! and 20 cells per side, perfect and perturbed (seeded displacements of up to 0.05 sigma per
//! component), into force buffers poisoned with NaN; and the launcher's refusals.
//!
//! Tolerance: the reference is computed in `f64` on the inputs exactly as the kernel sees
//! them (positions and box rounded to `f32` for the `f32` kernels), so what remains is the
//! kernels' own rounding, bounded per atom by
//! [`ErrorScales::recomputed_force_bound`](cpu::lab::md::forces::ErrorScales::recomputed_force_bound):
//! `u (12 sum_j G(r_ij) + (m_i + 1) sum_j |F_ij|)` with `u = 2^-24` or `2^-53`, `m_i` the
//! atom's pairs within the cutoff and `G(r) = 720 r^-13 + 216 r^-7` the pair force's
//! sensitivity to rounding of `r`. The `f64` kernels are thereby checked to about `1e-12`
//! of the force scale (a missed or doubled pair, even at the cutoff, is far outside); the
//! `f32` ones to their precision. The per-atom energies (the fourth value) are checked the same
//! way.

use cpu::Error;
use cpu::lab::md::forces::{
    ErrorScales, F64_UNIT_ROUNDOFF, check_forces, per_atom_energies, serial,
};
use cpu::lab::md::gpu::{self as md_gpu, DeviceNeighbourList, GpuKernel, GpuVariant, as_seen_by};
use cpu::lab::md::{CUTOFF, ListKind, NeighbourList, SKIN, System};
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};

/// `(name, cells per side, perturbed)`.
const CASES: [(&str, usize, bool); 5] = [
    ("3_cells", 3, false),
    ("3_cells_perturbed", 3, true),
    ("5_cells", 5, false),
    ("5_cells_perturbed", 5, true),
    ("20_cells_perturbed", 20, true),
];

/// Every GPU force kernel on every case.
pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for kernel in GpuKernel::ALL {
        for (case, cells, perturbed) in CASES {
            let name = format!("md::{}::{case}", kernel.kernel_name());
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                check_kernel(kernel, cells, perturbed, seed)
                    .map_err(|m| format!("{} {case} seed={seed}: {m}", kernel.kernel_name()).into())
            }));
        }
    }
    trials.extend(error_trials());
    trials
}

fn check_kernel(kernel: GpuKernel, cells: usize, perturbed: bool, seed: u64) -> Result<(), String> {
    let gpu = gpu().map_err(|e| format!("{e:?}"))?;
    let mut system = System::lj_melt(cells, seed).map_err(|e| e.to_string())?;
    if perturbed {
        // Components uniform in [-0.05, 0.05) sigma.
        system.perturb(seed, 0.1);
    }
    let got = md_gpu::run_kernel(&gpu, kernel, &system).map_err(|e| e.to_string())?;
    let seen = as_seen_by(&system, kernel.precision);
    let half =
        NeighbourList::build(&seen, ListKind::Half, CUTOFF + SKIN).map_err(|e| e.to_string())?;
    let reference = serial(&seen, &half);
    let scales = ErrorScales::new(&seen, &half);
    let u = kernel.unit_roundoff();
    check_forces(
        &got.forces,
        &reference.forces,
        &scales.recomputed_force_bound(u),
    )
    .map_err(|m| format!("forces: {m}"))?;
    let energies = per_atom_energies(&seen, &half);
    let bound = scales.recomputed_energy_bound(u);
    if let Some(i) = (0..energies.len()).find(|&i| {
        let e = got.energies[i];
        e.is_nan() || (e - energies[i]).abs() > bound[i]
    }) {
        return Err(format!(
            "energy of atom {i}: got {}, expected {} (bound {:e})",
            got.energies[i], energies[i], bound[i]
        ));
    }
    // The kernel's per-atom errors, the host's f64 sum of its per-atom energies, and the
    // reference's own sequential f64 sum over the pairs (the same terms in another order).
    let pe_bound: f64 = bound.iter().sum::<f64>()
        + u * got.energies.len() as f64 * reference.potential.abs()
        + scales.potential_reordering_bound(F64_UNIT_ROUNDOFF, got.energies.len());
    if (got.potential() - reference.potential).abs() > pe_bound {
        return Err(format!(
            "potential energy {} against {} (bound {pe_bound:e})",
            got.potential(),
            reference.potential
        ));
    }
    Ok(())
}

fn error_trials() -> Vec<Trial> {
    /// A 3-cell lattice, its full list on the device, and a zeroed device buffer maker.
    fn setup() -> Result<(cpu::Gpu, System, DeviceNeighbourList), Failed> {
        let gpu = gpu()?;
        let system = System::fcc(3).map_err(|e| e.to_string())?;
        let list = NeighbourList::build(&system, ListKind::Full, CUTOFF + SKIN)
            .map_err(|e| e.to_string())?;
        let d_list = DeviceNeighbourList::upload(&gpu, &list).map_err(|e| e.to_string())?;
        Ok((gpu, system, d_list))
    }
    fn zeros<T: DeviceRepr + ValidAsZeroBits>(
        gpu: &cpu::Gpu,
        n: usize,
    ) -> Result<CudaSlice<T>, Failed> {
        Ok(gpu.zeros::<T>(n).map_err(|e| e.to_string())?)
    }
    vec![
        gpu_trial("errors::md_positions_length_mismatch".into(), || {
            let (gpu, system, d_list) = setup()?;
            let positions = zeros::<f32>(&gpu, 4 * system.len() - 1)?;
            let mut forces = zeros::<f32>(&gpu, 4 * system.len())?;
            expect_err(
                md_gpu::launch(
                    &gpu,
                    GpuVariant::Full,
                    &positions,
                    &d_list,
                    system.box_len(),
                    &mut forces,
                ),
                |e| matches!(e, Error::LengthMismatch { expected, .. } if *expected == 4 * 108),
            )
        }),
        gpu_trial("errors::md_half_kernel_given_a_full_list".into(), || {
            let (gpu, system, d_list) = setup()?;
            let positions = gpu
                .upload(&md_gpu::pack_positions::<f64>(&system))
                .map_err(|e| e.to_string())?;
            let mut forces = zeros::<f64>(&gpu, 4 * system.len())?;
            expect_err(
                md_gpu::launch(
                    &gpu,
                    GpuVariant::HalfAtomic,
                    &positions,
                    &d_list,
                    system.box_len(),
                    &mut forces,
                ),
                |e| {
                    matches!(
                        e,
                        Error::Unsupported {
                            what: "neighbour list",
                            ..
                        }
                    )
                },
            )
        }),
        gpu_trial(
            "errors::md_box_narrower_than_twice_the_cutoff".into(),
            || {
                let (gpu, system, d_list) = setup()?;
                let positions = gpu
                    .upload(&md_gpu::pack_positions::<f32>(&system))
                    .map_err(|e| e.to_string())?;
                let mut forces = zeros::<f32>(&gpu, 4 * system.len())?;
                expect_err(
                    md_gpu::launch(
                        &gpu,
                        GpuVariant::Full,
                        &positions,
                        &d_list,
                        4.9,
                        &mut forces,
                    ),
                    |e| {
                        matches!(
                            e,
                            Error::Unsupported {
                                what: "box_len",
                                ..
                            }
                        )
                    },
                )
            },
        ),
        gpu_trial(
            "errors::md_positions_not_on_an_atom_boundary".into(),
            || {
                let (gpu, system, d_list) = setup()?;
                let buffer = zeros::<f32>(&gpu, 4 * system.len() + 1)?;
                let mut forces = zeros::<f32>(&gpu, 4 * system.len())?;
                expect_err(
                    md_gpu::launch(
                        &gpu,
                        GpuVariant::Full,
                        &buffer.slice(1..),
                        &d_list,
                        system.box_len(),
                        &mut forces,
                    ),
                    |e| matches!(e, Error::Misaligned { alignment: 16, .. }),
                )
            },
        ),
    ]
}
