//! Forces on a fixed team of CPU threads (an OpenMP-like parallel region: `std::thread::scope`
//! and `std::sync::Barrier`), Newton's third law on a half neighbour list, each thread
//! accumulating into a private `f_local` array of all `N` atoms, and the three ways of adding
//! the `f_local` arrays into `f` that the paper compares (seed "cuda 并行归约", part 1:
//! 《基于OpenMP的分子动力学并行算法的性能分析与优化》, 2012):
//!
//! - [`Method::Critical`] (the paper's Critical method): each thread, when its force work is
//!   done, adds its whole `f_local` into `f` under one lock. With `Nth` threads arriving at
//!   once and `Tc` the time of one add, thread `k` waits `k Tc` before entering and
//!   `(Nth - 1 - k) Tc` after leaving (for the last one): the team idles `Nth (Nth - 1) Tc` in
//!   all, `Nth (Nth - 1) Tc / 2` of it before the lock.
//! - [`Method::Triangle`] (the paper's 三角形法): the same lock, but thread `k` gets
//!   `n_k = n_0 + k D` particles with `D = Tc / t_p` (`t_p` the measured force time per
//!   particle), so thread `k` finishes its forces `Tc` after thread `k - 1` and reaches the lock
//!   just as `k - 1` leaves it: nobody waits before the lock and the idle time halves to
//!   `Nth (Nth - 1) Tc / 2` (`Nth = 8`: 56 Tc -> 28 Tc). `n_0 = N / Nth - (Nth - 1) D / 2`
//!   keeps the total `N` ([`Partition::triangle`]).
//! - [`Method::Reduction`] (the one to call, [`md::forces`](fn@super::forces)): no critical section.
//!   After a barrier, thread `t` sums every thread's `f_local` over its own range of atoms
//!   (`f[i] = sum_t f_local_t[i]` for `i` in its range): the same `Nth N` additions as the
//!   critical section, but spread over the threads instead of serialised, so the add costs
//!   about one `Tc` of wall time instead of `Nth Tc`, and no thread idles in a queue.
//!
//! Every method computes the same pair terms, bit for bit, as the serial reference
//! ([`serial`](super::forces::serial)); only the order of the additions differs.
//!
//! Timing ([`measure`]): all repetitions run inside one parallel region, so thread start-up is
//! not timed (as OpenMP's pool). Per repetition and thread: force work, wait before the lock
//! (or at the barrier after the force work), time inside the lock (or in the reduction pass),
//! wait after it until the last thread is done. The force part is the wall time of thread 0
//! from the start barrier to the end barrier; zeroing the shared `f` before a repetition of the
//! lock-based methods is outside it.

use std::ops::Range;
use std::sync::{Barrier, Mutex, RwLock};
use std::time::Instant;

use super::forces::{Forces, lj_pair};
use super::neighbour::{ListKind, NeighbourList};
use super::system::System;
use crate::error::{Error, Result};

/// Most threads a team may have. More threads than cores is allowed (the results are the
/// same) but then time measurements mean little.
pub const MAX_THREADS: usize = 1024;

/// How the threads' `f_local` arrays are added into `f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Method {
    /// Each thread adds its whole `f_local` into `f` under one lock (the paper's method).
    Critical,
    /// The lock, with particle counts rising thread by thread so that threads reach it one
    /// after another (the paper's 三角形法).
    Triangle,
    /// No lock: after a barrier each thread sums all `f_local` over its own atoms.
    Reduction,
}

impl Method {
    /// Every method, in the paper's order, the no-lock one last.
    pub const ALL: [Method; 3] = [Method::Critical, Method::Triangle, Method::Reduction];

    /// Lower-case name, as the tables print it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Critical => "critical",
            Method::Triangle => "triangle",
            Method::Reduction => "reduction",
        }
    }

    /// Whether the method adds under a lock.
    pub fn locks(self) -> bool {
        self != Method::Reduction
    }
}

/// The particles each thread of a team computes: thread `t` owns atoms `bounds[t]..bounds[t+1]`
/// (their half lists).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    bounds: Vec<usize>,
}

impl Partition {
    /// `n` atoms in `threads` contiguous ranges of sizes differing by at most one.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] unless `1 <= threads <= MAX_THREADS`.
    pub fn even(n: usize, threads: usize) -> Result<Self> {
        check_threads(threads)?;
        Ok(Self {
            bounds: (0..=threads).map(|t| t * n / threads).collect(),
        })
    }

    /// The triangle method's counts: thread `k` gets `n_0 + k step` atoms, with
    /// `n_0 = n / threads - (threads - 1) step / 2` so that they add up to `n` (rounded so
    /// that the ranges tile `0..n`). `step` is `Tc / t_p`, in particles
    /// ([`TriangleModel::step`]); it is clamped to `[0, 2 (n / threads - 1) / (threads - 1)]`
    /// so that the first thread still gets at least one atom (when the lock is slow against
    /// the force work, the full stagger does not fit in `n` atoms).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] unless `1 <= threads <= MAX_THREADS`.
    pub fn triangle(n: usize, threads: usize, step: f64) -> Result<Self> {
        check_threads(threads)?;
        if threads == 1 {
            return Self::even(n, 1);
        }
        let k = threads as f64;
        let mean = n as f64 / k;
        let max_step = (2.0 * (mean - 1.0) / (k - 1.0)).max(0.0);
        let step = if step.is_finite() {
            step.clamp(0.0, max_step)
        } else {
            max_step
        };
        let n0 = mean - (k - 1.0) * step / 2.0;
        let mut bounds: Vec<usize> = (0..threads)
            .map(|t| {
                let t = t as f64;
                ((t * n0 + step * t * (t - 1.0) / 2.0).round().max(0.0) as usize).min(n)
            })
            .collect();
        bounds.push(n);
        // Rounding cannot reorder them, but keep the invariant explicit.
        for t in 1..bounds.len() {
            bounds[t] = bounds[t].max(bounds[t - 1]);
        }
        Ok(Self { bounds })
    }

    /// Number of threads.
    pub fn threads(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Number of atoms.
    pub fn atoms(&self) -> usize {
        self.bounds[self.bounds.len() - 1]
    }

    /// Atoms of thread `t`.
    pub fn range(&self, t: usize) -> Range<usize> {
        self.bounds[t]..self.bounds[t + 1]
    }

    /// Atoms per thread.
    pub fn sizes(&self) -> Vec<usize> {
        self.bounds.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

fn check_threads(threads: usize) -> Result<()> {
    if !(1..=MAX_THREADS).contains(&threads) {
        return Err(Error::OutOfRange {
            what: "threads",
            value: threads as u64,
            min: 1,
            max: MAX_THREADS as u64,
        });
    }
    Ok(())
}

/// The two measured times the triangle method's counts come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleModel {
    /// `t_p`: force work per particle (half list, Newton's third law), seconds.
    pub per_particle_s: f64,
    /// `Tc`: one thread's add of its `f_local` into `f` inside the lock, seconds.
    pub critical_add_s: f64,
}

impl TriangleModel {
    /// Measures `t_p` and `Tc` with the critical method on an even partition of `threads`
    /// threads (so that memory traffic is as in the real run): `t_p` is the median over
    /// repetitions of the threads' mean force time per particle, `Tc` the median time inside
    /// the lock.
    ///
    /// # Errors
    /// As [`measure`].
    pub fn calibrate(
        system: &System,
        list: &NeighbourList,
        threads: usize,
        reps: usize,
    ) -> Result<Self> {
        let partition = Partition::even(system.len(), threads)?;
        let m = measure(system, list, Method::Critical, &partition, 1, reps.max(1))?;
        let mut per_particle: Vec<f64> = m
            .evaluations
            .iter()
            .map(|e| {
                let (time, atoms) = e.threads.iter().fold((0.0, 0usize), |(t, a), th| {
                    (t + th.force_s, a + th.particles)
                });
                time / atoms.max(1) as f64
            })
            .collect();
        let mut inside: Vec<f64> = m
            .evaluations
            .iter()
            .flat_map(|e| e.threads.iter().map(|t| t.inside_s))
            .collect();
        Ok(Self {
            per_particle_s: median(&mut per_particle),
            critical_add_s: median(&mut inside),
        })
    }

    /// `D = Tc / t_p`: how many more particles each thread gets than the one before.
    pub fn step(&self) -> f64 {
        if self.per_particle_s > 0.0 {
            self.critical_add_s / self.per_particle_s
        } else {
            0.0
        }
    }

    /// [`Partition::triangle`] with this model's step.
    ///
    /// # Errors
    /// As [`Partition::triangle`].
    pub fn partition(&self, n: usize, threads: usize) -> Result<Partition> {
        Partition::triangle(n, threads, self.step())
    }
}

/// The paper's model of the critical method's idle time: `Nth (Nth - 1) Tc` in total, of
/// which `Nth (Nth - 1) Tc / 2` before entering (`(total, before)`, seconds).
pub fn model_idle(threads: usize, critical_add_s: f64) -> (f64, f64) {
    let pairs = (threads * threads.saturating_sub(1)) as f64;
    (pairs * critical_add_s, pairs * critical_add_s / 2.0)
}

/// One thread's timeline in one force evaluation, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadTimes {
    /// Atoms it computed.
    pub particles: usize,
    /// Zeroing its `f_local` and the pair forces of its atoms.
    pub force_s: f64,
    /// Waiting for the lock (lock methods) or at the barrier after the force work
    /// (reduction).
    pub wait_before_s: f64,
    /// Adding its `f_local` into `f` under the lock, or its share of the reduction pass.
    pub inside_s: f64,
    /// Waiting at the end barrier for the last thread.
    pub wait_after_s: f64,
}

/// One force evaluation by the team.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Force part, wall time of thread 0 from the start barrier to the end barrier, seconds.
    pub wall_s: f64,
    /// Per thread.
    pub threads: Vec<ThreadTimes>,
}

impl Evaluation {
    /// Idle time of the whole team: waiting before and after the add, summed over threads.
    pub fn idle_s(&self) -> f64 {
        self.threads
            .iter()
            .map(|t| t.wait_before_s + t.wait_after_s)
            .sum()
    }

    /// Waiting before the add, summed over threads.
    pub fn idle_before_s(&self) -> f64 {
        self.threads.iter().map(|t| t.wait_before_s).sum()
    }
}

/// The result of [`measure`]: the forces of the last repetition and every timed evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct TeamRun {
    /// The method.
    pub method: Method,
    /// The partition used.
    pub partition: Partition,
    /// Forces, potential energy and virial (of the last repetition; all are equal up to the
    /// order of the lock's additions).
    pub forces: Forces,
    /// The timed repetitions, in order.
    pub evaluations: Vec<Evaluation>,
}

impl TeamRun {
    /// Median force-part time, seconds.
    pub fn median_s(&self) -> f64 {
        median(
            &mut self
                .evaluations
                .iter()
                .map(|e| e.wall_s)
                .collect::<Vec<_>>(),
        )
    }

    /// Fastest and slowest force part, seconds.
    pub fn min_max_s(&self) -> (f64, f64) {
        self.evaluations
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), e| {
                (lo.min(e.wall_s), hi.max(e.wall_s))
            })
    }

    /// `Tc` of this run: the median over repetitions and threads of the time inside the lock
    /// (or in the reduction pass).
    pub fn critical_add_s(&self) -> f64 {
        median(
            &mut self
                .evaluations
                .iter()
                .flat_map(|e| e.threads.iter().map(|t| t.inside_s))
                .collect::<Vec<_>>(),
        )
    }

    /// Mean over repetitions of the team's idle time (before plus after the add), seconds.
    pub fn idle_s(&self) -> f64 {
        mean(self.evaluations.iter().map(Evaluation::idle_s))
    }

    /// Mean over repetitions of the team's waiting before the add, seconds.
    pub fn idle_before_s(&self) -> f64 {
        mean(self.evaluations.iter().map(Evaluation::idle_before_s))
    }
}

fn mean(values: impl ExactSizeIterator<Item = f64>) -> f64 {
    let n = values.len().max(1) as f64;
    values.sum::<f64>() / n
}

/// The median of `values` (0 for none); sorts them.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Forces of `system` by `method` on a team of `partition.threads()` threads, once.
///
/// # Errors
/// As [`measure`].
pub fn forces(
    system: &System,
    list: &NeighbourList,
    method: Method,
    partition: &Partition,
) -> Result<Forces> {
    Ok(measure(system, list, method, partition, 0, 1)?.forces)
}

/// Runs `warmup + reps` force evaluations by `method` inside one parallel region of
/// `partition.threads()` threads and times the last `reps` (see the module docs).
///
/// # Errors
/// [`Error::Unsupported`] for a full list (the methods use Newton's third law);
/// [`Error::LengthMismatch`] if the list or the partition has another atom count than the
/// system; [`Error::OutOfRange`] for `reps = 0`.
pub fn measure(
    system: &System,
    list: &NeighbourList,
    method: Method,
    partition: &Partition,
    warmup: usize,
    reps: usize,
) -> Result<TeamRun> {
    let n = system.len();
    if list.kind() != ListKind::Half {
        return Err(Error::Unsupported {
            what: "neighbour list",
            requirement: "the thread-team methods use Newton's third law: build a half list",
        });
    }
    for (what, atoms) in [
        ("neighbour list atoms", list.atoms()),
        ("partition atoms", partition.atoms()),
    ] {
        if atoms != n {
            return Err(Error::LengthMismatch {
                what,
                expected: n,
                actual: atoms,
            });
        }
    }
    if reps == 0 {
        return Err(Error::OutOfRange {
            what: "timed repetitions",
            value: 0,
            min: 1,
            max: u64::MAX,
        });
    }
    Ok(region(system, list, method, partition, warmup, reps))
}

/// What each thread hands back: its energy terms of the last repetition and its timelines
/// (plus thread 0's wall times).
struct ThreadResult {
    potential: f64,
    virial: f64,
    times: Vec<ThreadTimes>,
    walls: Vec<f64>,
}

/// The parallel region: see [`measure`]. Arguments are validated.
fn region(
    system: &System,
    list: &NeighbourList,
    method: Method,
    partition: &Partition,
    warmup: usize,
    reps: usize,
) -> TeamRun {
    let n = system.len();
    let threads = partition.threads();
    let total = warmup + reps;
    // Private accumulators: written by their thread during the force work, read by all in
    // the reduction pass; the barriers order the phases, the locks are never contended.
    let locals: Vec<RwLock<Vec<[f64; 3]>>> = (0..threads)
        .map(|_| RwLock::new(vec![[0.0; 3]; n]))
        .collect();
    let barrier = Barrier::new(threads);
    let mut out = vec![[0.0f64; 3]; n];
    let results: Vec<ThreadResult> = if method.locks() {
        let shared = Mutex::new(out);
        let results = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (locals, barrier, shared) = (&locals, &barrier, &shared);
                    scope.spawn(move || {
                        let mut r = ThreadResult::new(total);
                        let range = partition.range(t);
                        for _ in 0..total {
                            if t == 0 {
                                // Untimed: the previous repetition ended at the end barrier.
                                lock(shared).fill([0.0; 3]);
                            }
                            barrier.wait();
                            let t0 = Instant::now();
                            let mut local = write(&locals[t]);
                            let (pe, w) = half_list_forces(system, list, range.clone(), &mut local);
                            let t1 = Instant::now();
                            let mut f = lock(shared);
                            let t2 = Instant::now();
                            for (fi, li) in f.iter_mut().zip(local.iter()) {
                                fi[0] += li[0];
                                fi[1] += li[1];
                                fi[2] += li[2];
                            }
                            let t3 = Instant::now();
                            drop(f);
                            drop(local);
                            barrier.wait();
                            let t4 = Instant::now();
                            r.record(range.len(), [t0, t1, t2, t3, t4], pe, w);
                        }
                        r
                    })
                })
                .collect();
            join_all(handles)
        });
        out = shared.into_inner().unwrap_or_else(|p| p.into_inner());
        results
    } else {
        // Each thread writes its own range of `f` in the reduction pass.
        let mut chunks = Vec::with_capacity(threads);
        let mut rest: &mut [[f64; 3]] = &mut out;
        for t in 0..threads {
            let (chunk, tail) = rest.split_at_mut(partition.range(t).len());
            chunks.push(chunk);
            rest = tail;
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunks
                .into_iter()
                .enumerate()
                .map(|(t, chunk)| {
                    let (locals, barrier) = (&locals, &barrier);
                    scope.spawn(move || {
                        let mut r = ThreadResult::new(total);
                        let range = partition.range(t);
                        for _ in 0..total {
                            barrier.wait();
                            let t0 = Instant::now();
                            let (pe, w) = {
                                let mut local = write(&locals[t]);
                                half_list_forces(system, list, range.clone(), &mut local)
                            };
                            let t1 = Instant::now();
                            barrier.wait();
                            let t2 = Instant::now();
                            let all: Vec<_> = locals.iter().map(read).collect();
                            for (k, fi) in chunk.iter_mut().enumerate() {
                                let i = range.start + k;
                                let mut s = [0.0; 3];
                                for l in &all {
                                    s[0] += l[i][0];
                                    s[1] += l[i][1];
                                    s[2] += l[i][2];
                                }
                                *fi = s;
                            }
                            drop(all);
                            let t3 = Instant::now();
                            barrier.wait();
                            let t4 = Instant::now();
                            r.record(range.len(), [t0, t1, t2, t3, t4], pe, w);
                        }
                        r
                    })
                })
                .collect();
            join_all(handles)
        })
    };
    let evaluations = (warmup..total)
        .map(|rep| Evaluation {
            wall_s: results[0].walls[rep],
            threads: results.iter().map(|r| r.times[rep]).collect(),
        })
        .collect();
    TeamRun {
        method,
        partition: partition.clone(),
        forces: Forces {
            forces: out,
            potential: results.iter().map(|r| r.potential).sum(),
            virial: results.iter().map(|r| r.virial).sum(),
        },
        evaluations,
    }
}

impl ThreadResult {
    fn new(total: usize) -> Self {
        Self {
            potential: 0.0,
            virial: 0.0,
            times: Vec::with_capacity(total),
            walls: Vec::with_capacity(total),
        }
    }

    /// Records one repetition from its five instants: start, force work done, add begun, add
    /// done, end barrier passed.
    fn record(&mut self, particles: usize, t: [Instant; 5], potential: f64, virial: f64) {
        let s = |a: Instant, b: Instant| b.duration_since(a).as_secs_f64();
        self.times.push(ThreadTimes {
            particles,
            force_s: s(t[0], t[1]),
            wait_before_s: s(t[1], t[2]),
            inside_s: s(t[2], t[3]),
            wait_after_s: s(t[3], t[4]),
        });
        self.walls.push(s(t[0], t[4]));
        self.potential = potential;
        self.virial = virial;
    }
}

fn join_all(handles: Vec<std::thread::ScopedJoinHandle<'_, ThreadResult>>) -> Vec<ThreadResult> {
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        .collect()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

/// Zeroes `f_local` and adds the pair forces of the atoms in `range` (their half lists) to it,
/// both atoms of each pair (Newton's third law). Returns the potential energy and virial of
/// those pairs. The pair terms are computed exactly as [`serial`](super::forces::serial) does.
pub fn half_list_forces(
    system: &System,
    list: &NeighbourList,
    range: Range<usize>,
    f_local: &mut [[f64; 3]],
) -> (f64, f64) {
    f_local.fill([0.0; 3]);
    let (mut pe, mut virial) = (0.0, 0.0);
    let positions = &system.positions;
    for i in range {
        let pi = positions[i];
        let mut fi = [0.0; 3];
        for &j in list.of(i) {
            let j = j as usize;
            let d = system.separation(&pi, &positions[j]);
            if let Some((phi, e)) = lj_pair(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) {
                let f = [phi * d[0], phi * d[1], phi * d[2]];
                fi[0] += f[0];
                fi[1] += f[1];
                fi[2] += f[2];
                let fj = &mut f_local[j];
                fj[0] -= f[0];
                fj[1] -= f[1];
                fj[2] -= f[2];
                pe += e;
                virial += f[0] * d[0] + f[1] * d[1] + f[2] * d[2];
            }
        }
        let l = &mut f_local[i];
        l[0] += fi[0];
        l[1] += fi[1];
        l[2] += fi[2];
    }
    (pe, virial)
}

#[cfg(test)]
mod tests {
    use super::super::forces::{ErrorScales, F64_UNIT_ROUNDOFF, check_forces, serial};
    use super::super::system::{CUTOFF, SKIN};
    use super::*;

    fn system(cells: usize, perturbed: bool) -> (System, NeighbourList) {
        let mut s = System::fcc(cells).unwrap();
        if perturbed {
            // Displacements of up to 0.05 sigma per component.
            s.perturb(0x5eed + cells as u64, 0.1);
        }
        let list = NeighbourList::build(&s, ListKind::Half, CUTOFF + SKIN).unwrap();
        (s, list)
    }

    /// Every method on 3 and 5 cells, perfect and perturbed, 1..=5 threads, against the
    /// serial reference: the pair terms are bit-identical, only the order of additions
    /// differs (each force sums its `m_i` pair terms and at most `threads` partial sums),
    /// so the bound is `(m_i + threads) u sum_j |F_ij|` per atom.
    #[test]
    fn every_method_matches_the_serial_reference() {
        for cells in [3, 5] {
            for perturbed in [false, true] {
                let (s, list) = system(cells, perturbed);
                let reference = serial(&s, &list);
                let scales = ErrorScales::new(&s, &list);
                for threads in 1..=5 {
                    let bound = scales.reordering_bound(F64_UNIT_ROUNDOFF, threads);
                    for method in Method::ALL {
                        let partition = match method {
                            // A steep staircase: 0.3 atoms per thread per step of `k`.
                            Method::Triangle => Partition::triangle(s.len(), threads, 7.3).unwrap(),
                            _ => Partition::even(s.len(), threads).unwrap(),
                        };
                        let f = forces(&s, &list, method, &partition).unwrap();
                        let what = format!(
                            "{method:?}, {cells} cells, perturbed {perturbed}, {threads} threads"
                        );
                        check_forces(&f.forces, &reference.forces, &bound)
                            .unwrap_or_else(|m| panic!("{what}: {m}"));
                        let pe_bound =
                            scales.potential_reordering_bound(F64_UNIT_ROUNDOFF, threads);
                        assert!(
                            (f.potential - reference.potential).abs() <= pe_bound,
                            "{what}: {} vs {}",
                            f.potential,
                            reference.potential
                        );
                        // Newton's third law.
                        let scale: f64 = scales.force_sum.iter().sum();
                        assert!(f.total().iter().all(|t| t.abs() < 1e-13 * scale), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_one_to_call_is_the_reduction() {
        let (s, list) = system(4, true);
        let f = super::super::forces(&s, &list, 2).unwrap();
        let m = forces(
            &s,
            &list,
            Method::Reduction,
            &Partition::even(s.len(), 2).unwrap(),
        );
        assert_eq!(f, m.unwrap());
    }

    #[test]
    fn triangle_partition_rises_by_the_step_and_tiles() {
        let p = Partition::triangle(1000, 4, 10.0).unwrap();
        // n0 = 250 - 15 = 235: 235, 245, 255, 265.
        assert_eq!(p.sizes(), vec![235, 245, 255, 265]);
        assert_eq!(p.atoms(), 1000);
        // Clamped so that the first thread keeps an atom: max step 2 (250 - 1) / 3 = 166.
        let p = Partition::triangle(1000, 4, 1e9).unwrap();
        let sizes = p.sizes();
        assert_eq!(sizes.iter().sum::<usize>(), 1000);
        assert!(
            sizes[0] >= 1 && sizes.windows(2).all(|w| w[0] <= w[1]),
            "{sizes:?}"
        );
        assert_eq!(Partition::triangle(7, 1, 3.0).unwrap().sizes(), vec![7]);
        // More threads than atoms: empty ranges, still tiling.
        let p = Partition::triangle(3, 8, 1.0).unwrap();
        assert_eq!(p.sizes().iter().sum::<usize>(), 3);
        assert_eq!(Partition::even(10, 4).unwrap().sizes(), vec![2, 3, 2, 3]);
        assert!(Partition::even(10, 0).is_err());
        assert!(Partition::triangle(10, MAX_THREADS + 1, 1.0).is_err());
    }

    #[test]
    fn model_idle_is_the_papers() {
        // Nth = 8: 56 Tc in all, 28 Tc before the lock.
        assert_eq!(model_idle(8, 1.0), (56.0, 28.0));
        assert_eq!(model_idle(1, 1.0), (0.0, 0.0));
    }

    #[test]
    fn measurement_records_every_thread_and_repetition() {
        let (s, list) = system(4, false);
        let p = Partition::even(s.len(), 3).unwrap();
        for method in Method::ALL {
            let run = measure(&s, &list, method, &p, 1, 4).unwrap();
            assert_eq!(run.evaluations.len(), 4);
            for e in &run.evaluations {
                assert_eq!(e.threads.len(), 3);
                assert_eq!(
                    e.threads.iter().map(|t| t.particles).sum::<usize>(),
                    s.len()
                );
                assert!(e.wall_s > 0.0 && e.threads.iter().all(|t| t.force_s > 0.0));
            }
            assert!(run.median_s() > 0.0 && run.critical_add_s() >= 0.0);
        }
        let model = TriangleModel::calibrate(&s, &list, 2, 3).unwrap();
        assert!(model.per_particle_s > 0.0 && model.step() >= 0.0);
    }

    #[test]
    fn bad_arguments_are_refused() {
        let (s, list) = system(3, false);
        let p = Partition::even(s.len(), 2).unwrap();
        let full = NeighbourList::build(&s, ListKind::Full, CUTOFF + SKIN).unwrap();
        assert!(matches!(
            measure(&s, &full, Method::Reduction, &p, 0, 1),
            Err(Error::Unsupported { .. })
        ));
        let other = Partition::even(s.len() + 1, 2).unwrap();
        assert!(matches!(
            measure(&s, &list, Method::Critical, &other, 0, 1),
            Err(Error::LengthMismatch { .. })
        ));
        assert!(matches!(
            measure(&s, &list, Method::Critical, &p, 0, 0),
            Err(Error::OutOfRange { .. })
        ));
    }
}
