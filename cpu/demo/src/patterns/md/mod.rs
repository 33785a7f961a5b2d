//! `demo md`: molecular-dynamics force reduction (seed "cuda 并行归约", part 1: the OpenMP MD
//! paper's Critical and Triangle methods). On this machine's CPU cores: the paper's table of
//! force-part time and speedup per thread count for the critical, triangle and no-lock
//! reduction methods, and the idle time in and before the critical section against the
//! model; then the GPU force kernels' times and their speedup over the best CPU run; the
//! step-0 potential energy per atom (LJ-melt's check value) and the energy drift of a run.

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::lab::md::forces::{
    ErrorScales, F64_UNIT_ROUNDOFF, check_forces, per_atom_energies, serial,
};
use cpu::lab::md::gpu::{self as md_gpu, DeviceNeighbourList, GpuForces, GpuKernel, Precision};
use cpu::lab::md::team::{self, Method, Partition, TeamRun, TriangleModel, model_idle};
use cpu::lab::md::{
    CUTOFF, LATTICE_ENERGY_PER_ATOM, ListKind, NeighbourList, SKIN, System, energy_drift, system,
};
use cudarc::driver::CudaSlice;

use crate::engine::args::{count_in, refuse};
use crate::engine::harness::Footprint;
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, variant};
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::{self, Timing};

/// Untimed GPU launches before the timed ones.
const WARMUP: usize = 3;
/// At most this many timed force evaluations per CPU method and thread count (each is a full
/// force computation: 0.1 s serial at 55 cells).
const MAX_CPU_REPS: usize = 20;

/// Peak memory of `demo md --cells N` on a machine of `cores` cores, per atom (`4 N^3` atoms,
/// about 78 neighbours each within `rc + skin`): on the host, positions, velocities and forces
/// (3 x 24 bytes), one `f_local` per thread (24 bytes each), the half and full neighbour lists
/// and the cell list (under 1 KiB); on the device, packed positions and forces (2 x 32 bytes)
/// and a full neighbour list (under 512 bytes).
///
/// # Errors
/// If `4 N^3` overflows.
pub fn footprint(cells: usize, cores: usize) -> Result<Footprint> {
    let atoms = cells
        .checked_pow(3)
        .and_then(|c| c.checked_mul(4))
        .ok_or_else(|| {
            anyhow::anyhow!("md of {cells} cells per side: 4 x {cells}^3 atoms overflow")
        })?;
    Ok(
        Footprint::new(format!("md of {cells} cells per side ({atoms} atoms)"))
            .device::<u8>(576, atoms)
            .host::<u8>(72 + 24 * cores as u64 + 1024, atoms),
    )
}

/// Molecular dynamics force reduction (LJ-melt): the OpenMP paper's critical and triangle
/// methods and the lock-free reduction on CPU threads, then the GPU force kernels.
#[derive(clap::Args)]
pub(crate) struct Md {
    /// fcc unit cells per side, 4 atoms each (20: 32000 atoms; the paper's sizes: 35, 55).
    #[arg(
        long,
        default_value_t = 20,
        value_parser = count_in::<{ system::MIN_CELLS as u64 }, { system::MAX_CELLS as u64 }>
    )]
    cells: usize,
    /// Thread counts of the CPU table, comma-separated (default: 1 to all cores).
    #[arg(long, value_delimiter = ',')]
    threads: Vec<usize>,
    /// Velocity Verlet steps of the energy-drift run.
    #[arg(long, default_value_t = 100)]
    steps: usize,
}

impl Pattern for Md {
    const NAME: &'static str = "md";

    /// The CPU methods (no kernel), then the GPU force kernels.
    fn variants() -> Vec<VariantInfo> {
        let mut v: Vec<VariantInfo> = Method::ALL
            .iter()
            .map(|m| variant(format!("cpu-{}", m.name()), &[]))
            .collect();
        v.extend(GpuKernel::ALL.iter().map(|k| {
            let kernel = k.kernel_name();
            variant(kernel.replace('_', "-"), &[kernel])
        }));
        v
    }

    fn sanitize() -> Vec<String> {
        vec!["--cells 3 --steps 10 --threads 2".into()]
    }

    /// Each thread count `1..=` the cores of this machine (exit status 2).
    fn check(&self) -> Result<()> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        check_threads(&self.threads, cores)
    }

    fn footprint(&self, _gpu: &Gpu) -> Result<Option<Footprint>> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        footprint(self.cells, cores).map(Some)
    }

    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()> {
        run(gpu, opts, out, self.cells, &self.threads, self.steps)
    }
}

/// Refuses a thread count of 0 or beyond `cores` (an argument error).
fn check_threads(threads: &[usize], cores: usize) -> Result<()> {
    if let Some(&t) = threads.iter().find(|&&t| t == 0 || t > cores) {
        refuse!("--threads {t}: each thread count must be 1..={cores} (the cores of this machine)");
    }
    Ok(())
}

/// `demo md --cells N --threads LIST --steps S` (see the module docs). `threads` empty means
/// `1..=` the available cores; each must be `1..=` the available cores (more threads than
/// cores would time the scheduler, not the method).
fn run(
    gpu: &Gpu,
    opts: &Options,
    out: &mut Out,
    cells: usize,
    threads: &[usize],
    steps: usize,
) -> Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = if threads.is_empty() {
        (1..=cores).collect()
    } else {
        threads.to_vec()
    };
    check_threads(&threads, cores)?;
    let system = System::lj_melt(cells, opts.seed)?;
    let n = system.len();
    let list = NeighbourList::build_parallel(&system, ListKind::Half, CUTOFF + SKIN, cores)?;
    let reps = (opts.reps as usize).min(MAX_CPU_REPS);
    let mut failures = 0;
    out.line(format!(
        "md: LJ-melt (LAMMPS bench/in.lj), {cells}^3 fcc cells = {n} atoms in a periodic cube of {:.4} sigma, \
         density 0.8442, Lennard-Jones cut at 2.5 sigma (no shift), half list of radius 2.8 (skin 0.3): \
         {} pairs, {:.1} per atom; {cores} CPU cores; seed {}",
        system.box_len(),
        list.entries(),
        list.entries() as f64 / n as f64,
        opts.seed
    ));

    // Step 0: the serial reference, timed, and the benchmark's check value.
    let mut serial_s = Vec::with_capacity(reps);
    let mut reference = serial(&system, &list);
    for _ in 0..reps {
        let t = std::time::Instant::now();
        reference = serial(&system, &list);
        serial_s.push(t.elapsed().as_secs_f64());
    }
    let serial_s = team::median(&mut serial_s);
    let pe = reference.potential_per_atom();
    let pe_ok = (pe - LATTICE_ENERGY_PER_ATOM).abs() < 5e-8;
    failures += usize::from(!pe_ok);
    out.line(format!(
        "step 0 (perfect lattice): potential energy per atom {pe:.7} (LJ-melt's log prints {LATTICE_ENERGY_PER_ATOM:.7}): {}",
        if pe_ok { "PASS" } else { "FAIL" }
    ));
    out.line(format!(
        "serial reference (one pass over the half list, no team): median {:.3} ms of {reps}",
        serial_s * 1e3
    ));
    out.dump("positions", &[n as u64, 3], &system.positions.concat())?;
    out.dump(
        "forces_reference",
        &[n as u64, 3],
        &reference.forces.concat(),
    )?;

    let scales = ErrorScales::new(&system, &list);
    let (cpu_rows, best_cpu_s) = cpu_tables(
        out,
        &system,
        &list,
        &threads,
        reps,
        serial_s,
        &scales,
        &reference.forces,
    )?;
    failures += cpu_rows;

    failures += gpu_table(gpu, opts, out, &system, &list, cores, best_cpu_s, serial_s)?;

    failures += drift(
        out,
        cells,
        opts.seed,
        steps,
        *threads.iter().max().unwrap_or(&1),
    )?;
    if failures > 0 {
        bail!("{failures} md result(s) disagree with the CPU reference or the benchmark");
    }
    Ok(())
}

/// The paper's tables for every thread count: force part (time, speedup; charted against
/// the thread count) and idle time against the model; then the timeline of one evaluation on
/// the largest team. Returns the failures and the best CPU force-part time (s).
#[allow(clippy::too_many_arguments)]
fn cpu_tables(
    out: &mut Out,
    system: &System,
    list: &NeighbourList,
    threads: &[usize],
    reps: usize,
    serial_s: f64,
    scales: &ErrorScales,
    reference: &[[f64; 3]],
) -> Result<(usize, f64)> {
    let n = system.len();
    let mut speed = Table::new(
        "force-part",
        format!(
            "force part on the CPU (half list, Newton's third law, per-thread f_local), median of {reps} in one \
             parallel region; speedup = serial reference {:.3} ms / time",
            serial_s * 1e3
        ),
        ChartKind::Sweep {
            x_label: "threads".into(),
            log2_x: false,
        },
        [
            "threads",
            "critical ms",
            "speedup",
            "triangle ms",
            "speedup",
            "reduction ms",
            "speedup",
            "verdict",
        ],
    )
    .chart_extra("speedup");
    let mut idle = Table::new(
        "idle",
        "idle time of the team per force evaluation (sum over threads, mean of the repetitions) against the \
         paper's model with Tc = the measured median time of one add of f_local into f inside the lock: \
         total Nth(Nth-1)Tc, before the lock Nth(Nth-1)Tc/2; triangle counts n_k = n_0 + k D, D = Tc / t_p",
        ChartKind::None,
        [
            "threads",
            "Tc us",
            "critical idle before us",
            "model Nth(Nth-1)Tc/2",
            "critical idle us",
            "model Nth(Nth-1)Tc",
            "t_p ns",
            "D atoms",
            "triangle n_0..n_last",
            "triangle idle before us",
            "triangle idle us",
            "reduction pass us",
            "reduction barrier wait us",
        ],
    );
    let mut failures = 0;
    let mut best = f64::INFINITY;
    let mut widest: Option<Vec<TeamRun>> = None;
    for &t in threads {
        let model = TriangleModel::calibrate(system, list, t, reps.min(5))?;
        let mut runs: Vec<TeamRun> = Vec::new();
        for method in Method::ALL {
            let partition = match method {
                Method::Triangle => model.partition(n, t)?,
                _ => Partition::even(n, t)?,
            };
            runs.push(team::measure(system, list, method, &partition, 1, reps)?);
        }
        let bound = scales.reordering_bound(F64_UNIT_ROUNDOFF, t);
        let checks = runs
            .iter()
            .map(|r| {
                let check = check_forces(&r.forces.forces, reference, &bound);
                if !out.dumping() {
                    return Ok(check);
                }
                let forces = r.forces.forces.concat();
                let name = format!("forces_{}_{t}_threads", r.method.name());
                out.verify(&name, &[reference.len() as u64, 3], &forces, |_| check)
            })
            .collect::<Result<Vec<_>>>()?;
        let bad: Vec<String> = runs
            .iter()
            .zip(&checks)
            .filter_map(|(r, c)| {
                c.as_ref()
                    .err()
                    .map(|m| format!("{}: {m}", r.method.name()))
            })
            .collect();
        failures += bad.len();
        let mut cells = vec![t.to_string()];
        let row = speed.rows.len();
        for (run, check) in runs.iter().zip(&checks) {
            let median = run.median_s();
            best = best.min(median);
            let (min, max) = run.min_max_s();
            let timing = Timing {
                median_ms: median * 1e3,
                min_ms: min * 1e3,
                max_ms: max * 1e3,
                reps: run.evaluations.len(),
            };
            let mut m = Measurement::new(run.method.name(), &timing)
                .series(run.method.name())
                .at(t as f64)
                .extra("speedup", serial_s / median)
                .extra("idle_us", run.idle_s() * 1e6)
                .extra("idle_before_us", run.idle_before_s() * 1e6)
                .extra("tc_us", run.critical_add_s() * 1e6)
                .passed(check.is_ok());
            if let Ok(worst) = check {
                m = m.error(*worst);
            }
            m.row = row;
            speed.measurements.push(m);
            cells.push(format!("{:.3}", median * 1e3));
            cells.push(format!("{:.2}", serial_s / median));
        }
        cells.push(if bad.is_empty() {
            "PASS".into()
        } else {
            format!("FAIL: {}", bad.join("; "))
        });
        speed.row(cells);

        let (critical, triangle, reduction) = (&runs[0], &runs[1], &runs[2]);
        let tc = critical.critical_add_s();
        let (model_total, model_before) = model_idle(t, tc);
        let sizes = triangle.partition.sizes();
        let us = |s: f64| format!("{:.1}", s * 1e6);
        idle.row([
            t.to_string(),
            us(tc),
            us(critical.idle_before_s()),
            us(model_before),
            us(critical.idle_s()),
            us(model_total),
            format!("{:.1}", model.per_particle_s * 1e9),
            format!("{:.0}", model.step()),
            format!(
                "{}..{}",
                sizes.first().copied().unwrap_or(0),
                sizes.last().copied().unwrap_or(0)
            ),
            us(triangle.idle_before_s()),
            us(triangle.idle_s()),
            us(reduction.critical_add_s()),
            us(reduction.idle_before_s()),
        ]);
        if widest.as_ref().is_none_or(|w| w[0].partition.threads() < t) {
            widest = Some(runs);
        }
    }
    out.table(speed);
    out.table(idle);
    if let Some(runs) = widest {
        out.table(timeline(&runs));
    }
    Ok((failures, best))
}

/// The paper's timeline figure as a table, for the largest team: per thread, its atoms and
/// the phases of the repetition with the median force part, for each method.
fn timeline(runs: &[TeamRun]) -> Table {
    let threads = runs.first().map_or(0, |r| r.partition.threads());
    let mut table = Table::new(
        "timeline",
        format!(
            "timeline of one force evaluation (the repetition with the median force part) on {threads} threads: \
             per thread, its atoms, force work, wait before the lock (reduction: at the barrier), inside the lock \
             (reduction: its share of the sum), wait for the last thread; us"
        ),
        ChartKind::None,
        [
            "method",
            "thread",
            "atoms",
            "force us",
            "wait before us",
            "inside us",
            "wait after us",
        ],
    );
    for run in runs {
        let mut order: Vec<usize> = (0..run.evaluations.len()).collect();
        order.sort_by(|&a, &b| {
            run.evaluations[a]
                .wall_s
                .total_cmp(&run.evaluations[b].wall_s)
        });
        let Some(&median) = order.get(order.len() / 2) else {
            continue;
        };
        for (k, t) in run.evaluations[median].threads.iter().enumerate() {
            let us = |s: f64| format!("{:.1}", s * 1e6);
            table.row([
                run.method.name().to_string(),
                k.to_string(),
                t.particles.to_string(),
                us(t.force_s),
                us(t.wait_before_s),
                us(t.inside_s),
                us(t.wait_after_s),
            ]);
        }
    }
    table
}

/// Device buffers of one precision: packed positions and a force buffer.
struct Buffers<T> {
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
fn gpu_table(
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
fn drift(out: &mut Out, cells: usize, seed: u64, steps: usize, threads: usize) -> Result<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::options::Format;
    use crate::engine::report::Block;

    /// The CPU half of `demo md` (no GPU needed): the paper's tables and the drift run, at the
    /// compute-sanitizer size (3 cells, threads 1 and 2, 10 steps).
    #[test]
    fn cpu_tables_and_drift_at_the_sanitizer_size() {
        let mut out = Out::new("md", Format::Json, None, None, None);
        let system = System::lj_melt(3, 2026).unwrap();
        let list = NeighbourList::build(&system, ListKind::Half, CUTOFF + SKIN).unwrap();
        let reference = serial(&system, &list);
        let scales = ErrorScales::new(&system, &list);
        let (failures, best) = cpu_tables(
            &mut out,
            &system,
            &list,
            &[1, 2],
            2,
            1e-3,
            &scales,
            &reference.forces,
        )
        .unwrap();
        assert_eq!(failures, 0);
        assert!(best > 0.0 && best.is_finite());
        assert_eq!(drift(&mut out, 3, 2026, 10, 2).unwrap(), 0);
        let section = out.finish(None);
        let tables: Vec<_> = section.tables().collect();
        assert_eq!(tables.len(), 4);
        let speed = tables[0];
        assert_eq!((speed.id.as_str(), speed.rows.len()), ("force-part", 2));
        // One measurement per method and thread count, each a point of the speedup chart.
        assert_eq!(speed.measurements.len(), 6);
        assert!(
            speed
                .measurements
                .iter()
                .all(|m| m.passed && m.x.is_some() && m.extra.contains_key("speedup"))
        );
        assert_eq!(tables[1].rows.len(), 2);
        // The timeline of the 2-thread runs: 3 methods x 2 threads.
        assert_eq!(tables[2].rows.len(), 6);
        assert_eq!(tables[3].rows.len(), 11);
        assert!(
            section.blocks.iter().any(
                |b| matches!(b, Block::Line(l) if l.starts_with("energy drift over 10 steps"))
            )
        );
        // The chart renders.
        assert_eq!(
            crate::engine::report::chart::charts(&section)
                .unwrap()
                .len(),
            1
        );
    }
}
