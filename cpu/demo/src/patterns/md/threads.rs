//! The CPU tables of `demo md`: the paper's force-part time and speedup per thread count for the
//! critical, triangle and no-lock methods, and the idle-time timeline against the model.

use anyhow::Result;
use cpu::lab::md::forces::{ErrorScales, F64_UNIT_ROUNDOFF, check_forces};
use cpu::lab::md::team::{self, Method, Partition, TeamRun, TriangleModel, model_idle};
use cpu::lab::md::{NeighbourList, System};

use crate::engine::out::Out;
use crate::engine::report::{ChartKind, Measurement, Table};
use crate::engine::timing::Timing;

/// The paper's tables for every thread count: force part (time, speedup; charted against
/// the thread count) and idle time against the model; then the timeline of one evaluation on
/// the largest team. Returns the failures and the best CPU force-part time (s).
#[allow(clippy::too_many_arguments)]
pub(super) fn cpu_tables(
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
pub(super) fn timeline(runs: &[TeamRun]) -> Table {
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
