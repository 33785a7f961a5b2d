//! Lennard-Jones forces on the CPU: the pair function, the serial reference every parallel
//! method and GPU kernel is checked against, a brute-force all-pairs version that checks the
//! reference, and the error bounds of those checks.
//!
//! Pair potential (LJ-melt, reduced units): `E(r) = 4 (r^-12 - r^-6)` for `r < rc = 2.5`, 0
//! beyond (plain truncation, `pair_style lj/cut 2.5`, no `pair_modify shift`, no tail
//! correction). Force on `i` from `j`: `F_ij = phi(r) d` with `d = x_i - x_j` (minimum image)
//! and `phi(r) = 48 r^-2 r^-6 (r^-6 - 1/2)`.

use super::neighbour::{ListKind, NeighbourList};
use super::system::{CUTOFF, System};
use crate::verify::Mismatch;

/// `rc^2` for [`CUTOFF`].
pub const CUTOFF_SQ: f64 = CUTOFF * CUTOFF;

/// `(phi, E)` of one pair at squared distance `r2`, or `None` at or beyond the cutoff:
/// `phi = F / r = 48 r^-2 r^-6 (r^-6 - 1/2)` (so `F_ij = phi d`), `E = 4 r^-6 (r^-6 - 1)`.
/// Written in the same operation order as the GPU kernels.
#[inline(always)]
pub fn lj_pair(r2: f64) -> Option<(f64, f64)> {
    if r2 < CUTOFF_SQ {
        let sr2 = 1.0 / r2;
        let sr6 = sr2 * sr2 * sr2;
        Some((48.0 * sr2 * sr6 * (sr6 - 0.5), 4.0 * sr6 * (sr6 - 1.0)))
    } else {
        None
    }
}

/// `a += b`, per component.
#[inline(always)]
pub(crate) fn add(a: &mut [f64; 3], b: [f64; 3]) {
    a[0] += b[0];
    a[1] += b[1];
    a[2] += b[2];
}

/// `a -= b`, per component.
#[inline(always)]
pub(crate) fn sub(a: &mut [f64; 3], b: [f64; 3]) {
    a[0] -= b[0];
    a[1] -= b[1];
    a[2] -= b[2];
}

/// Forces, potential energy and virial of a configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Forces {
    /// Force on each atom, epsilon / sigma.
    pub forces: Vec<[f64; 3]>,
    /// Total potential energy, epsilon.
    pub potential: f64,
    /// Virial `sum_pairs F_ij . d_ij`, epsilon (pressure `= (2 KE + virial) / (3 V)`).
    pub virial: f64,
}

impl Forces {
    /// Zero forces for `n` atoms.
    pub fn zeros(n: usize) -> Self {
        Self {
            forces: vec![[0.0; 3]; n],
            potential: 0.0,
            virial: 0.0,
        }
    }

    /// Potential energy per atom.
    pub fn potential_per_atom(&self) -> f64 {
        self.potential / self.forces.len().max(1) as f64
    }

    /// `sum_i f_i`: zero up to rounding by Newton's third law.
    pub fn total(&self) -> [f64; 3] {
        let mut t = [0.0; 3];
        for f in &self.forces {
            for c in 0..3 {
                t[c] += f[c];
            }
        }
        t
    }

    /// The largest `|f_i|` component.
    pub fn max_component(&self) -> f64 {
        self.forces
            .iter()
            .flatten()
            .fold(0.0f64, |m, x| m.max(x.abs()))
    }
}

/// The serial reference: one pass over `list` in atom order. A half list uses Newton's third
/// law (`+F_ij` to `i`, `-F_ij` to `j`, the whole pair energy); a full list adds `F_ij` to `i`
/// only and half of each pair energy. `O(pairs)`.
pub fn serial(system: &System, list: &NeighbourList) -> Forces {
    let mut out = Forces::zeros(system.len());
    let newton = list.kind() == ListKind::Half;
    let share = if newton { 1.0 } else { 0.5 };
    for i in 0..system.len() {
        let pi = system.positions[i];
        let mut fi = [0.0; 3];
        for &j in list.of(i) {
            let j = j as usize;
            let d = system.separation(&pi, &system.positions[j]);
            if let Some((phi, e)) = lj_pair(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) {
                let f = [phi * d[0], phi * d[1], phi * d[2]];
                add(&mut fi, f);
                if newton {
                    sub(&mut out.forces[j], f);
                }
                out.potential += share * e;
                out.virial += share * (f[0] * d[0] + f[1] * d[1] + f[2] * d[2]);
            }
        }
        add(&mut out.forces[i], fi);
    }
    out
}

/// Every pair `i < j` of the system tested against the cutoff, no list: `O(N^2)`, the check of
/// the neighbour lists and of [`serial`].
pub fn brute_force(system: &System) -> Forces {
    let n = system.len();
    let mut out = Forces::zeros(n);
    for i in 0..n {
        for j in i + 1..n {
            let d = system.separation(&system.positions[i], &system.positions[j]);
            if let Some((phi, e)) = lj_pair(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) {
                let f = [phi * d[0], phi * d[1], phi * d[2]];
                add(&mut out.forces[i], f);
                sub(&mut out.forces[j], f);
                out.potential += e;
                out.virial += phi * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            }
        }
    }
    out
}

/// Each atom's share of the potential energy, `1/2 sum_j E(r_ij)` over its pairs within the
/// cutoff (what the GPU kernels write as an atom's fourth value); the shares add up to the
/// total. Either list kind.
pub fn per_atom_energies(system: &System, list: &NeighbourList) -> Vec<f64> {
    let mut e = vec![0.0; system.len()];
    let both = list.kind() == ListKind::Half;
    for i in 0..system.len() {
        for &j in list.of(i) {
            let j = j as usize;
            if let Some((_, ep)) = lj_pair(system.distance_sq(i, j)) {
                e[i] += 0.5 * ep;
                if both {
                    e[j] += 0.5 * ep;
                }
            }
        }
    }
    e
}

/// Per-atom magnitudes the force checks scale their tolerance with, over the pairs within the
/// cutoff: how many terms each force sums, the sum of their sizes, and of the pair forces'
/// sensitivity to rounding.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorScales {
    /// `m_i`: pairs of atom `i` within the cutoff (the terms its force sums).
    pub terms: Vec<usize>,
    /// `sum_j |F_ij|`, epsilon / sigma.
    pub force_sum: Vec<f64>,
    /// `sum_j G(r_ij)` with `G(r) = 720 r^-13 + 216 r^-7 >= |phi| r + |phi'(r)| r^2`: a bound
    /// on how much `|F_ij|` moves per unit relative error of `d` (large near the potential's
    /// minimum, where `F` is zero but not its slope).
    pub stiffness_sum: Vec<f64>,
    /// `sum_j |E(r_ij)| / 2`, epsilon.
    pub energy_sum: Vec<f64>,
    /// `sum_j (48 r^-12 + 24 r^-6) / 2 >= |r E'(r)| / 2`, epsilon.
    pub energy_stiffness_sum: Vec<f64>,
}

impl ErrorScales {
    /// The scales of `system` over the pairs of `list` (half or full; each pair counted for
    /// both atoms).
    pub fn new(system: &System, list: &NeighbourList) -> Self {
        let n = system.len();
        let mut s = Self {
            terms: vec![0; n],
            force_sum: vec![0.0; n],
            stiffness_sum: vec![0.0; n],
            energy_sum: vec![0.0; n],
            energy_stiffness_sum: vec![0.0; n],
        };
        let both = list.kind() == ListKind::Half;
        for i in 0..n {
            for &j in list.of(i) {
                let j = j as usize;
                let r2 = system.distance_sq(i, j);
                let Some((phi, e)) = lj_pair(r2) else {
                    continue;
                };
                let r = r2.sqrt();
                let (r6, r7) = (r2 * r2 * r2, r2 * r2 * r2 * r);
                let g = 720.0 / (r6 * r7) + 216.0 / r7;
                let ge = 0.5 * (48.0 / (r6 * r6) + 24.0 / r6);
                let atoms: &[usize] = if both { &[i, j] } else { &[i] };
                for &a in atoms {
                    s.terms[a] += 1;
                    s.force_sum[a] += phi.abs() * r;
                    s.stiffness_sum[a] += g;
                    s.energy_sum[a] += 0.5 * e.abs();
                    s.energy_stiffness_sum[a] += ge;
                }
            }
        }
        s
    }

    /// Per-atom bound on the difference between two sums of the same, bit-identical pair
    /// forces in different orders (the thread-team methods against [`serial`]): each force
    /// sums at most `m_i + extra_terms` terms (`extra_terms`: the per-thread partial sums a
    /// reduction adds), so the orders differ by at most `(m_i + extra_terms) u sum_j |F_ij|`
    /// (Higham, *Accuracy and Stability of Numerical Algorithms*, 4.2), `u` the unit
    /// roundoff (`2^-53` for `f64`).
    pub fn reordering_bound(&self, unit_roundoff: f64, extra_terms: usize) -> Vec<f64> {
        self.terms
            .iter()
            .zip(&self.force_sum)
            .map(|(&m, &s)| unit_roundoff * (m + extra_terms) as f64 * s)
            .collect()
    }

    /// Bound on the difference between two sums of the same, bit-identical pair energies in
    /// different orders (the total potential energy): `(P + extra_terms) u sum_pairs |E_ij|`,
    /// `P` the number of pairs within the cutoff.
    pub fn potential_reordering_bound(&self, unit_roundoff: f64, extra_terms: usize) -> f64 {
        let pairs = self.terms.iter().sum::<usize>() / 2;
        unit_roundoff * (pairs + extra_terms) as f64 * self.energy_sum.iter().sum::<f64>()
    }

    /// Per-atom bound on the force error of a kernel that recomputes every pair in a
    /// precision of unit roundoff `u` (`2^-24` for `f32`) from the same positions and box,
    /// exactly represented in it: `u (12 sum_j G(r_ij) + (m_i + 1) sum_j |F_ij|)`. The first
    /// term bounds the pair forces' own rounding (the minimum image `d` within `2u` relative
    /// per component, `r^2` within `3u`, the `1/r^2`, `r^-6` and `phi` products within `6u`:
    /// about `12u` of `G`); the second, summing `m_i` terms in any order (the atomics' order
    /// varies).
    pub fn recomputed_force_bound(&self, unit_roundoff: f64) -> Vec<f64> {
        (0..self.terms.len())
            .map(|i| {
                unit_roundoff
                    * (12.0 * self.stiffness_sum[i]
                        + (self.terms[i] + 1) as f64 * self.force_sum[i])
            })
            .collect()
    }

    /// The same bound for the per-atom energy `1/2 sum_j E(r_ij)`:
    /// `u (12 sum_j (48 r^-12 + 24 r^-6) / 2 + (m_i + 1) sum_j |E_ij| / 2)`.
    pub fn recomputed_energy_bound(&self, unit_roundoff: f64) -> Vec<f64> {
        (0..self.terms.len())
            .map(|i| {
                unit_roundoff
                    * (12.0 * self.energy_stiffness_sum[i]
                        + (self.terms[i] + 1) as f64 * self.energy_sum[i])
            })
            .collect()
    }
}

/// Unit roundoff of `f64`, `2^-53`.
pub const F64_UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
/// Unit roundoff of `f32`, `2^-24`.
pub const F32_UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;

/// Compares forces component by component: atom `i` passes when every component is within
/// `bound[i]` of the reference (NaN never passes). Returns the largest `|error| / bound` over
/// all components (below 1 when everything passed), or the first atom that failed.
///
/// # Errors
/// A [`Mismatch`] naming the first failing atom (its index in `index`), its force and the
/// reference, and how many atoms failed; also when the lengths differ.
pub fn check_forces(
    got: &[[f64; 3]],
    expected: &[[f64; 3]],
    bound: &[f64],
) -> Result<f64, Mismatch> {
    if got.len() != expected.len() || bound.len() != expected.len() {
        return Err(Mismatch {
            index: got.len().min(expected.len()),
            got: format!("{} atoms", got.len()),
            expected: format!("{} atoms ({} bounds)", expected.len(), bound.len()),
            count: got.len().abs_diff(expected.len()).max(1),
        });
    }
    let mut worst = 0.0f64;
    let mut first = None;
    let mut count = 0;
    for (i, ((g, e), &b)) in got.iter().zip(expected).zip(bound).enumerate() {
        let err = (0..3).map(|c| (g[c] - e[c]).abs()).fold(0.0f64, |m, x| {
            if x.is_nan() || m.is_nan() {
                f64::NAN
            } else {
                f64::max(m, x)
            }
        });
        let ratio = if err == 0.0 { 0.0 } else { err / b };
        if ratio.is_nan() || ratio > 1.0 {
            count += 1;
            first.get_or_insert(i);
        } else {
            worst = worst.max(ratio);
        }
    }
    match first {
        None => Ok(worst),
        Some(index) => Err(Mismatch {
            index,
            got: format!("{:?}", got[index]),
            expected: format!("{:?} (bound {:e})", expected[index], bound[index]),
            count,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::neighbour::NeighbourList;
    use super::super::system::{LATTICE_ENERGY_PER_ATOM, SKIN};
    use super::*;

    #[test]
    fn pair_function_by_hand() {
        // At r = 1: E = 0, F/r = 48 (1 - 1/2) = 24.
        assert_eq!(lj_pair(1.0), Some((24.0, 0.0)));
        // At the minimum r = 2^(1/6): F = 0, E = -1.
        let (phi, e) = lj_pair(2f64.powf(1.0 / 3.0)).unwrap();
        assert!(phi.abs() < 1e-14 && (e + 1.0).abs() < 1e-14);
        assert_eq!(lj_pair(CUTOFF_SQ), None);
        assert!(lj_pair(CUTOFF_SQ * (1.0 - 1e-15)).is_some());
    }

    /// The step-0 check: LJ-melt's log prints E_pair = -6.7733681 for the perfect lattice.
    #[test]
    fn lattice_potential_energy_per_atom_is_the_benchmarks() {
        for cells in [3, 5, 20] {
            let s = System::fcc(cells).unwrap();
            let list = NeighbourList::build(&s, ListKind::Half, CUTOFF + SKIN).unwrap();
            let f = serial(&s, &list);
            let pe = f.potential_per_atom();
            assert!(
                (pe - LATTICE_ENERGY_PER_ATOM).abs() < 5e-8,
                "{cells} cells: {pe:.10}"
            );
            assert_eq!(format!("{pe:.7}"), "-6.7733681");
            // A perfect lattice feels no force.
            assert!(f.max_component() < 1e-12, "{}", f.max_component());
        }
    }

    #[test]
    fn serial_reference_matches_brute_force_and_newton() {
        for cells in [3, 4, 5] {
            let mut s = System::fcc(cells).unwrap();
            s.perturb(cells as u64, 0.1);
            let half = NeighbourList::build(&s, ListKind::Half, CUTOFF + SKIN).unwrap();
            let full = NeighbourList::build(&s, ListKind::Full, CUTOFF + SKIN).unwrap();
            let brute = brute_force(&s);
            let scales = ErrorScales::new(&s, &half);
            for list in [&half, &full] {
                let f = serial(&s, list);
                // Both sum the same bit-identical pair terms, in different orders.
                let bound = scales.reordering_bound(F64_UNIT_ROUNDOFF, 1);
                check_forces(&f.forces, &brute.forces, &bound)
                    .unwrap_or_else(|m| panic!("{cells} cells, {:?}: {m}", list.kind()));
                let pe_bound = scales.potential_reordering_bound(F64_UNIT_ROUNDOFF, 1);
                assert!((f.potential - brute.potential).abs() <= pe_bound);
                assert!((f.virial - brute.virial).abs() < 1e-10 * s.len() as f64);
            }
            // Newton's third law: the total force is zero up to rounding of the sums.
            let f = serial(&s, &half);
            let total = f.total();
            let scale: f64 = scales.force_sum.iter().sum();
            assert!(total.iter().all(|t| t.abs() < 1e-13 * scale), "{total:?}");
            assert!(f.max_component() > 1.0, "the perturbed lattice has forces");
        }
    }

    #[test]
    fn check_forces_reports_the_first_failure() {
        let e = [[1.0, 2.0, 3.0], [0.0; 3]];
        assert_eq!(check_forces(&e, &e, &[0.0, 0.0]), Ok(0.0));
        let g = [[1.0, 2.0, 3.0], [0.0, 0.5, f64::NAN]];
        let m = check_forces(&g, &e, &[1.0, 1.0]).unwrap_err();
        assert_eq!((m.index, m.count), (1, 1));
        let r = check_forces(&[[1.5, 2.0, 3.0]], &[[1.0, 2.0, 3.0]], &[1.0]).unwrap();
        assert_eq!(r, 0.5);
        assert!(check_forces(&g[..1], &e, &[1.0]).is_err());
    }
}
