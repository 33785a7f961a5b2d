//! The GPU tables of `demo md`: the force kernels' times and their speedup over the best CPU run,
//! and the energy drift of a run.

use anyhow::Result;
use cpu::Gpu;
use cpu::lab::md::forces::{ErrorScales, check_forces, per_atom_energies, serial};
use cpu::lab::md::gpu::{self as md_gpu, DeviceNeighbourList, GpuForces, GpuKernel, Precision};
use cpu::lab::md::{CUTOFF, ListKind, NeighbourList, SKIN, System, energy_drift};
use cudarc::driver::CudaSlice;

use super::*;
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::{self, Timing};

/// Device buffers of one precision: packed positions and a force buffer.
pub(super) struct Buffers<T> {
    positions: CudaSlice<T>,
    forces: CudaSlice<T>,
}

impl<T: md_gpu::MdReal> Buffers<T> {
    fn new(gpu: &Gpu, system: &System) -> Result<Self> {
        Ok(Self {
            positions: gpu.upload(&md_gpu::pack_positions::<T>(system))?,
            forces: gpu.poisoned(4 * system.len(), T::from_f64(f64::NAN))?,
        })
    }

    /// Times the kernel, then returns its forces of one more launch into a poisoned buffer.
    fn time(
        &mut self,
        gpu: &Gpu,
        opts: &Options,
        kernel: GpuKernel,
        list: &DeviceNeighbourList,
        box_len: f64,
    ) -> Result<(Timing, cudarc::driver::LaunchConfig, GpuForces)> {
        let name = kernel.kernel_name();
        let (positions, forces) = (&self.positions, &mut self.forces);
        let t = timing::time_gpu(gpu, name, WARMUP, opts.reps as usize, || {
            md_gpu::launch::<T>(gpu, kernel.variant, positions, list, box_len, forces).map(drop)
        })?;
        *forces = gpu.poisoned(forces.len(), T::from_f64(f64::NAN))?;
        let cfg = md_gpu::launch::<T>(gpu, kernel.variant, positions, list, box_len, forces)?;
        let packed = gpu.download(forces, name)?;
        Ok((t, cfg, GpuForces::unpack(&packed)))
    }
}

/// Every GPU force kernel: time, check against the `f64` reference on the inputs it sees,
/// speedup over the best CPU run and over the serial reference.
#[allow(clippy::too_many_arguments)]
pub(super) fn gpu_table(
    gpu: &Gpu,
    opts: &Options,
    out: &mut Out,
    system: &System,
    half: &NeighbourList,
    cores: usize,
    best_cpu_s: f64,
    serial_s: f64,
) -> Result<usize> {
    let full = NeighbourList::build_parallel(system, ListKind::Full, CUTOFF + SKIN, cores)?;
    let (d_half, d_full) = (
        DeviceNeighbourList::upload(gpu, half)?,
        DeviceNeighbourList::upload(gpu, &full)?,
    );
    let mut f32s = Buffers::<f32>::new(gpu, system)?;
    let mut f64s = Buffers::<f64>::new(gpu, system)?;
    let mut table = Table::new(
        "gpu",
        format!(
            "GPU force kernels, one thread per atom, median of {} (CUDA events); speedup over the best CPU run \
             ({:.3} ms) and the serial reference; error = largest |f - f_ref| / bound (bound: the kernel's own \
             rounding, per atom, on the inputs it sees)",
            opts.reps,
            best_cpu_s * 1e3
        ),
        ChartKind::Bars,
        [
            "kernel",
            "list",
            "grid x block",
            "median ms",
            "speedup vs best CPU",
            "speedup vs serial",
            "error / bound",
            "verdict",
        ],
    );
    let mut failures = 0;
    let mut best: Option<(f64, String)> = None;
    for kernel in GpuKernel::ALL {
        let list = match kernel.variant.list_kind() {
            ListKind::Half => &d_half,
            ListKind::Full => &d_full,
        };
        let (t, cfg, got) = match kernel.precision {
            Precision::F32 => f32s.time(gpu, opts, kernel, list, system.box_len())?,
            Precision::F64 => f64s.time(gpu, opts, kernel, list, system.box_len())?,
        };
        let seen = md_gpu::as_seen_by(system, kernel.precision);
        let reference = serial(&seen, half);
        let scales = ErrorScales::new(&seen, half);
        let u = kernel.unit_roundoff();
        let mut check = check_forces(
            &got.forces,
            &reference.forces,
            &scales.recomputed_force_bound(u),
        );
        let energies = per_atom_energies(&seen, half);
        let energy_bound = scales.recomputed_energy_bound(u);
        if let Some(i) = (0..energies.len()).find(|&i| {
            let e = got.energies[i];
            e.is_nan() || (e - energies[i]).abs() > energy_bound[i]
        }) {
            check = Err(cpu::verify::Mismatch {
                index: i,
                got: format!("energy {}", got.energies[i]),
                expected: format!("{} (bound {:e})", energies[i], energy_bound[i]),
                count: 1,
            });
        }
        failures += usize::from(check.is_err());
        let name = kernel.kernel_name();
        out.verify(
            &format!("forces_{name}"),
            &[system.len() as u64, 3],
            &got.forces.concat(),
            |_| (),
        )?;
        let s = t.median_ms * 1e-3;
        let mut m = Measurement::new(name, &t)
            .kernel(name)
            .launch(&cfg)
            .extra("speedup_vs_best_cpu", best_cpu_s / s)
            .extra("speedup_vs_serial", serial_s / s)
            .passed(check.is_ok());
        if let Ok(worst) = check {
            m = m.error(worst);
        }
        if check.is_ok() && best.as_ref().is_none_or(|(b, _)| t.median_ms < *b) {
            best = Some((t.median_ms, m.key()));
        }
        table.measured_row(
            [
                name.to_string(),
                format!(
                    "{:?} ({} entries)",
                    kernel.variant.list_kind(),
                    list.entries()
                ),
                crate::engine::harness::describe(&cfg),
                format!("{:.4}", t.median_ms),
                format!("{:.1}", best_cpu_s / s),
                format!("{:.1}", serial_s / s),
                check
                    .as_ref()
                    .map_or_else(|_| "-".into(), |w| format!("{w:.2e}")),
                crate::engine::harness::verdict(&check.map(drop)),
            ],
            m,
        );
    }
    out.table(table);
    if let Some((_, key)) = best {
        out.headline("gpu", &key);
    }
    Ok(failures)
}

/// The run of `steps` velocity Verlet steps (no-lock reduction on `threads` threads): thermo
/// lines and the total-energy drift.
pub(super) fn drift(
    out: &mut Out,
    cells: usize,
    seed: u64,
    steps: usize,
    threads: usize,
) -> Result<usize> {
    let every = (steps / 10).max(1);
    let start = std::time::Instant::now();
    let d = energy_drift(cells, seed, steps, threads, every)?;
    let elapsed = start.elapsed().as_secs_f64();
    let mut table = Table::new(
        "thermo",
        format!(
            "velocity Verlet, dt 0.005, {steps} steps on {threads} threads (reduction method), list rebuilt when an \
             atom has moved more than skin/2 (LJ-melt's thermo output; energies per atom)"
        ),
        ChartKind::None,
        ["step", "temp", "E_pair", "E_kin", "TotEng", "press"],
    );
    for t in &d.thermo {
        table.row([
            t.step.to_string(),
            format!("{:.7}", t.temperature),
            format!("{:.7}", t.potential),
            format!("{:.7}", t.kinetic),
            format!("{:.7}", t.total),
            format!("{:.7}", t.pressure),
        ]);
    }
    out.table(table);
    // The bound of the library's drift test, scaled to the run: truncation noise of a melt.
    let ok = d.relative.is_finite() && d.relative.abs() < 0.01;
    out.line(format!(
        "energy drift over {steps} steps: (E - E0) / |E0| = {:+.3e} (largest at any step {:.3e}), {} list builds, \
         {:.2} s: {}",
        d.relative,
        d.max_relative,
        d.list_builds,
        elapsed,
        if ok { "PASS (below 1 %)" } else { "FAIL (1 % or more)" }
    ));
    Ok(usize::from(!ok))
}
