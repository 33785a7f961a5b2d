//! `demo md`: molecular-dynamics force reduction (seed "cuda 并行归约", part 1: the OpenMP MD
//! paper's Critical and Triangle methods). On this machine's CPU cores: the paper's table of
//! force-part time and speedup per thread count for the critical, triangle and no-lock
//! reduction methods, and the idle time in and before the critical section against the
//! model; then the GPU force kernels' times and their speedup over the best CPU run; the
//! step-0 potential energy per atom (LJ-melt's check value) and the energy drift of a run.

mod kernels;
mod threads;

use anyhow::{Result, bail};
use cpu::Gpu;
use cpu::lab::md::forces::{ErrorScales, serial};
use cpu::lab::md::gpu::GpuKernel;
use cpu::lab::md::team::{self, Method};
use cpu::lab::md::{
    CUTOFF, LATTICE_ENERGY_PER_ATOM, ListKind, NeighbourList, SKIN, System, system,
};
use kernels::{drift, gpu_table};
use threads::cpu_tables;

use crate::engine::args::{count_in, refuse};
use crate::engine::harness::Footprint;
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::registry::{Pattern, VariantInfo, variant};

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
