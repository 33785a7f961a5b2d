//! Verlet neighbour lists built from a cell list, and the rule that says when to rebuild them.
//!
//! - [`CellList`]: the box cut into `m^3` cubic cells of side `>= rc + skin` (counting sort of
//!   the atoms by cell), so that every neighbour of an atom lies in its own cell or one of the
//!   26 around it (the paper's 元胞法).
//! - [`NeighbourList`]: for each atom, the atoms within `rc + skin` (the paper's 近邻列表法), as
//!   CSR arrays of `u32` (`offsets`, `neighbours`), [`Half`](ListKind::Half) (each pair once,
//!   for Newton's third law) or [`Full`](ListKind::Full) (each pair twice, once per atom).
//!   Built from a [`CellList`] ([`NeighbourList::build`]), by brute force over all pairs
//!   ([`NeighbourList::brute_force`], the check), or from caller's CSR arrays
//!   ([`NeighbourList::from_csr`]); every constructor validates, so every index in a
//!   `NeighbourList` is below its atom count and the GPU kernels can trust it.
//! - [`VerletList`]: a list and the positions it was built at; rebuilt when any atom has moved
//!   more than `skin / 2` since the last build (the displacement check of LAMMPS's
//!   `neigh_modify check yes`, checked every step). Two atoms that were farther apart than
//!   `rc + skin` at the build cannot then have come within `rc`, so no interacting pair is
//!   missed. (LJ-melt's input rebuilds every 20 steps without a check, `neigh_modify every 20
//!   check no`; the check is the safe rule.)

use super::system::System;
use crate::error::{Error, Result};

/// Which pairs an atom's list holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListKind {
    /// Each pair `{i, j}` once, in the list of one of the two atoms (Newton's third law: the
    /// force is added to both). The owner is the lower index when `i + j` is odd and the
    /// higher when it is even, so that every atom owns about half of its pairs whatever its
    /// index (a plain `j > i` rule would give the first atoms all their pairs, the last none).
    Half,
    /// Each pair twice: `j` in the list of `i` and `i` in the list of `j`.
    Full,
}

impl ListKind {
    /// Whether the list of atom `i` holds `j` (for `i != j`).
    #[inline]
    pub fn keeps(self, i: usize, j: usize) -> bool {
        match self {
            ListKind::Full => true,
            ListKind::Half => (i < j) == ((i + j) % 2 == 1),
        }
    }
}

/// A cell list: atoms sorted by the cell they are in, `m^3` cells of side `box / m >= radius`.
#[derive(Clone, Debug)]
pub struct CellList {
    per_side: usize,
    side: f64,
    /// `start[c]..start[c + 1]` index `atoms` for cell `c`.
    start: Vec<usize>,
    atoms: Vec<u32>,
}

impl CellList {
    /// Sorts the atoms of `system` into cells of side at least `radius` (at least one cell per
    /// side). Cell `(cx, cy, cz)` is number `cx + m (cy + m cz)`.
    pub fn new(system: &System, radius: f64) -> Self {
        let l = system.box_len();
        let per_side = ((l / radius).floor() as usize).max(1);
        let side = l / per_side as f64;
        let cells = per_side.pow(3);
        let cell_of: Vec<usize> = system
            .positions
            .iter()
            .map(|p| Self::index(per_side, side, p))
            .collect();
        let mut start = vec![0usize; cells + 1];
        for &c in &cell_of {
            start[c + 1] += 1;
        }
        for c in 0..cells {
            start[c + 1] += start[c];
        }
        let mut fill = start.clone();
        let mut atoms = vec![0u32; cell_of.len()];
        for (i, &c) in cell_of.iter().enumerate() {
            atoms[fill[c]] = i as u32;
            fill[c] += 1;
        }
        Self {
            per_side,
            side,
            start,
            atoms,
        }
    }

    fn coordinate(per_side: usize, side: f64, x: f64) -> usize {
        // Positions are wrapped into [0, box); clamp the last cell against rounding.
        ((x / side).floor().max(0.0) as usize).min(per_side - 1)
    }

    fn index(per_side: usize, side: f64, p: &[f64; 3]) -> usize {
        let c = |x| Self::coordinate(per_side, side, x);
        c(p[0]) + per_side * (c(p[1]) + per_side * c(p[2]))
    }

    /// Cells per side.
    pub fn per_side(&self) -> usize {
        self.per_side
    }

    /// Side of a cell, sigma.
    pub fn side(&self) -> f64 {
        self.side
    }

    /// The atoms in cell `c`.
    pub fn atoms_in(&self, c: usize) -> &[u32] {
        &self.atoms[self.start[c]..self.start[c + 1]]
    }

    /// Cell `c` and the 26 around it (periodic), each once: with fewer than three cells per
    /// side the 27 offsets wrap onto the same cells, which are then listed once.
    pub fn neighbourhood(&self, c: usize) -> Vec<usize> {
        let m = self.per_side as isize;
        let (cx, cy, cz) = (c as isize % m, (c as isize / m) % m, c as isize / (m * m));
        let mut cells = Vec::with_capacity(27);
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let w = |x: isize| (x + m) % m;
                    cells.push((w(cx + dx) + m * (w(cy + dy) + m * w(cz + dz))) as usize);
                }
            }
        }
        cells.sort_unstable();
        cells.dedup();
        cells
    }
}

/// For each atom, its neighbours within a radius, as validated CSR arrays of `u32`: the
/// neighbours of atom `i` are `neighbours[offsets[i]..offsets[i + 1]]`, ascending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighbourList {
    kind: ListKind,
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
}

impl NeighbourList {
    /// The list of the atoms of `system` within `radius` (minimum image) of each other, from a
    /// [`CellList`] of cells of side `>= radius`: each atom looks in its cell and the 26
    /// around it. `O(N)` for a fixed density.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if the system has more atoms than `u32` indexes, or more list
    /// entries than `u32` offsets can count.
    pub fn build(system: &System, kind: ListKind, radius: f64) -> Result<Self> {
        Self::build_parallel(system, kind, radius, 1)
    }

    /// [`NeighbourList::build`] on `threads` threads (`std::thread::scope`): thread `t` lists
    /// the atoms of its contiguous share, and the shares are joined in order, so the list is
    /// the same for any thread count.
    ///
    /// # Errors
    /// As [`NeighbourList::build`]; [`Error::OutOfRange`] for 0 threads.
    pub fn build_parallel(
        system: &System,
        kind: ListKind,
        radius: f64,
        threads: usize,
    ) -> Result<Self> {
        let n = system.len();
        check_atoms(n)?;
        if threads == 0 {
            return Err(Error::OutOfRange {
                what: "threads",
                value: 0,
                min: 1,
                max: u64::MAX,
            });
        }
        let cells = CellList::new(system, radius);
        let r2 = radius * radius;
        let neighbourhoods: Vec<Vec<usize>> = (0..cells.per_side.pow(3))
            .map(|c| cells.neighbourhood(c))
            .collect();
        // The atoms of `range`: per-atom counts and their neighbours, ascending.
        let list_range = |range: std::ops::Range<usize>| {
            let mut counts = Vec::with_capacity(range.len());
            let mut neighbours = Vec::new();
            for i in range {
                let c = CellList::index(cells.per_side, cells.side, &system.positions[i]);
                let first = neighbours.len();
                for &nc in &neighbourhoods[c] {
                    for &j in cells.atoms_in(nc) {
                        let j = j as usize;
                        if j != i && kind.keeps(i, j) && system.distance_sq(i, j) < r2 {
                            neighbours.push(j as u32);
                        }
                    }
                }
                neighbours[first..].sort_unstable();
                counts.push(neighbours.len() - first);
            }
            (counts, neighbours)
        };
        let threads = threads.min(n.max(1));
        let parts: Vec<(Vec<usize>, Vec<u32>)> = if threads == 1 {
            vec![list_range(0..n)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let list_range = &list_range;
                        scope.spawn(move || list_range(t * n / threads..(t + 1) * n / threads))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        let mut neighbours = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
        let mut total = 0usize;
        for (counts, part) in parts {
            for c in counts {
                total += c;
                offsets.push(entry_count(total)?);
            }
            neighbours.extend(part);
        }
        Ok(Self {
            kind,
            offsets,
            neighbours,
        })
    }

    /// The same list by brute force: every pair of atoms tested, `O(N^2)` (the check of
    /// [`NeighbourList::build`]).
    ///
    /// # Errors
    /// As [`NeighbourList::build`].
    pub fn brute_force(system: &System, kind: ListKind, radius: f64) -> Result<Self> {
        let n = system.len();
        check_atoms(n)?;
        let r2 = radius * radius;
        let mut offsets = vec![0u32];
        let mut neighbours = Vec::new();
        for i in 0..n {
            for j in 0..n {
                if j != i && kind.keeps(i, j) && system.distance_sq(i, j) < r2 {
                    neighbours.push(j as u32);
                }
            }
            offsets.push(entry_count(neighbours.len())?);
        }
        Ok(Self {
            kind,
            offsets,
            neighbours,
        })
    }

    /// A list from CSR arrays the caller built: `offsets` has `atoms + 1` entries, starts at
    /// 0, never decreases and ends at `neighbours.len()`; every neighbour index is below
    /// `atoms` and differs from its own atom. A half list must hold each pair once (not
    /// checked: a pair listed twice is counted twice).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for `offsets` of the wrong length or a last offset other than
    /// `neighbours.len()`; [`Error::OutOfRange`] for a first offset other than 0, a decreasing
    /// offset, a neighbour index `>= atoms`, more atoms than `u32` indexes; [`Error::Unsupported`]
    /// for an atom listed as its own neighbour.
    pub fn from_csr(
        kind: ListKind,
        atoms: usize,
        offsets: Vec<u32>,
        neighbours: Vec<u32>,
    ) -> Result<Self> {
        check_atoms(atoms)?;
        if offsets.len() != atoms + 1 {
            return Err(Error::LengthMismatch {
                what: "offsets",
                expected: atoms + 1,
                actual: offsets.len(),
            });
        }
        if offsets[0] != 0 {
            return Err(Error::OutOfRange {
                what: "offsets",
                value: offsets[0] as u64,
                min: 0,
                max: 0,
            });
        }
        if offsets[atoms] as usize != neighbours.len() {
            return Err(Error::LengthMismatch {
                what: "neighbours",
                expected: offsets[atoms] as usize,
                actual: neighbours.len(),
            });
        }
        // Nondecreasing from 0 to `neighbours.len()`: every range below is in bounds.
        if let Some(w) = offsets.windows(2).find(|w| w[1] < w[0]) {
            return Err(Error::OutOfRange {
                what: "offsets",
                value: w[1] as u64,
                min: w[0] as u64,
                max: neighbours.len() as u64,
            });
        }
        for i in 0..atoms {
            let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
            for &j in &neighbours[a..b] {
                if j as usize >= atoms {
                    return Err(Error::OutOfRange {
                        what: "neighbour index",
                        value: j as u64,
                        min: 0,
                        max: atoms as u64 - 1,
                    });
                }
                if j as usize == i {
                    return Err(Error::Unsupported {
                        what: "neighbour list",
                        requirement: "an atom cannot be its own neighbour",
                    });
                }
            }
        }
        Ok(Self {
            kind,
            offsets,
            neighbours,
        })
    }

    /// Half or full.
    pub fn kind(&self) -> ListKind {
        self.kind
    }

    /// Number of atoms.
    pub fn atoms(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Total entries (pairs for a half list, twice the pairs for a full one).
    pub fn entries(&self) -> usize {
        self.neighbours.len()
    }

    /// The neighbours of atom `i`.
    #[inline]
    pub fn of(&self, i: usize) -> &[u32] {
        &self.neighbours[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The CSR offsets, `atoms + 1` of them.
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// The CSR neighbour indices, each `< atoms`.
    pub fn neighbours(&self) -> &[u32] {
        &self.neighbours
    }
}

fn check_atoms(n: usize) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::OutOfRange {
            what: "atoms",
            value: n as u64,
            min: 0,
            max: u32::MAX as u64,
        });
    }
    Ok(())
}

fn entry_count(len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| Error::OutOfRange {
        what: "neighbour list entries",
        value: len as u64,
        min: 0,
        max: u32::MAX as u64,
    })
}

/// A neighbour list with the rule that keeps it valid: built with radius `CUTOFF + SKIN` and
/// rebuilt (from a new [`CellList`]) when any atom has moved more than `SKIN / 2` since the
/// last build, measured as the minimum image of its displacement.
#[derive(Clone, Debug)]
pub struct VerletList {
    list: NeighbourList,
    cutoff: f64,
    skin: f64,
    threads: usize,
    at_build: Vec<[f64; 3]>,
    builds: usize,
}

impl VerletList {
    /// Builds the list of `kind` for `system` with radius `cutoff + skin`, on `threads`
    /// threads (this and every rebuild, [`NeighbourList::build_parallel`]).
    ///
    /// # Errors
    /// As [`NeighbourList::build_parallel`].
    pub fn new(
        system: &System,
        kind: ListKind,
        cutoff: f64,
        skin: f64,
        threads: usize,
    ) -> Result<Self> {
        Ok(Self {
            list: NeighbourList::build_parallel(system, kind, cutoff + skin, threads)?,
            cutoff,
            skin,
            threads,
            at_build: system.positions.clone(),
            builds: 1,
        })
    }

    /// The current list.
    pub fn list(&self) -> &NeighbourList {
        &self.list
    }

    /// Builds so far (the first included).
    pub fn builds(&self) -> usize {
        self.builds
    }

    /// The largest displacement of an atom since the last build, sigma.
    pub fn max_displacement(&self, system: &System) -> f64 {
        system
            .positions
            .iter()
            .zip(&self.at_build)
            .map(|(p, q)| {
                let d = system.separation(p, q);
                d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            })
            .fold(0.0, f64::max)
            .sqrt()
    }

    /// Whether some atom has moved more than `skin / 2` since the last build.
    pub fn needs_rebuild(&self, system: &System) -> bool {
        self.max_displacement(system) > 0.5 * self.skin
    }

    /// Rebuilds the list if [`VerletList::needs_rebuild`]; returns whether it did.
    ///
    /// # Errors
    /// As [`NeighbourList::build`].
    pub fn update(&mut self, system: &System) -> Result<bool> {
        if !self.needs_rebuild(system) {
            return Ok(false);
        }
        self.list = NeighbourList::build_parallel(
            system,
            self.list.kind,
            self.cutoff + self.skin,
            self.threads,
        )?;
        self.at_build.clone_from(&system.positions);
        self.builds += 1;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::system::{CUTOFF, SKIN};
    use super::*;

    #[test]
    fn cell_list_matches_brute_force() {
        for cells in [3, 4, 5] {
            for perturbed in [false, true] {
                let mut s = System::fcc(cells).unwrap();
                if perturbed {
                    s.perturb(11 + cells as u64, 0.1);
                }
                for kind in [ListKind::Half, ListKind::Full] {
                    let fast = NeighbourList::build(&s, kind, CUTOFF + SKIN).unwrap();
                    let slow = NeighbourList::brute_force(&s, kind, CUTOFF + SKIN).unwrap();
                    assert_eq!(fast, slow, "{cells} cells, {kind:?}, perturbed {perturbed}");
                    for threads in [2, 3, 7] {
                        let parallel =
                            NeighbourList::build_parallel(&s, kind, CUTOFF + SKIN, threads)
                                .unwrap();
                        assert_eq!(parallel, fast, "{threads} threads");
                    }
                }
            }
        }
    }

    #[test]
    fn lattice_atoms_have_78_neighbours_and_half_lists_half_of_them() {
        // fcc shells within 2.8 sigma: 12 + 6 + 24 + 12 + 24 = 78.
        let s = System::fcc(5).unwrap();
        let full = NeighbourList::build(&s, ListKind::Full, CUTOFF + SKIN).unwrap();
        assert!((0..s.len()).all(|i| full.of(i).len() == 78));
        let half = NeighbourList::build(&s, ListKind::Half, CUTOFF + SKIN).unwrap();
        assert_eq!(2 * half.entries(), full.entries());
        // Each pair once.
        for i in 0..s.len() {
            for &j in half.of(i) {
                assert!(!half.of(j as usize).contains(&(i as u32)));
            }
        }
        // Balanced: no atom owns fewer than a third or more than two thirds of its pairs.
        assert!((0..s.len()).all(|i| (26..=52).contains(&half.of(i).len())));
    }

    #[test]
    fn neighbourhood_lists_wrapped_cells_once() {
        let s = System::fcc(3).unwrap();
        let cells = CellList::new(&s, CUTOFF + SKIN);
        assert_eq!(cells.per_side(), 1);
        assert_eq!(cells.neighbourhood(0), vec![0]);
        let s = System::fcc(10).unwrap();
        let cells = CellList::new(&s, CUTOFF + SKIN);
        assert_eq!(cells.per_side(), 5);
        assert!(cells.side() >= CUTOFF + SKIN);
        assert_eq!(cells.neighbourhood(0).len(), 27);
    }

    #[test]
    fn csr_is_validated() {
        let ok = NeighbourList::from_csr(ListKind::Full, 2, vec![0, 1, 2], vec![1, 0]).unwrap();
        assert_eq!((ok.atoms(), ok.entries(), ok.of(1)), (2, 2, &[0u32][..]));
        let err = |o: Vec<u32>, n: Vec<u32>| NeighbourList::from_csr(ListKind::Full, 2, o, n);
        assert!(matches!(
            err(vec![0, 1], vec![1]),
            Err(Error::LengthMismatch { .. })
        ));
        assert!(matches!(
            err(vec![0, 1, 2], vec![1, 2]),
            Err(Error::OutOfRange {
                what: "neighbour index",
                value: 2,
                ..
            })
        ));
        assert!(matches!(
            err(vec![0, 2, 1], vec![1]),
            Err(Error::OutOfRange {
                value: 1,
                min: 2,
                ..
            })
        ));
        assert!(matches!(
            err(vec![0, 2, 1], vec![1, 0]),
            Err(Error::LengthMismatch { .. })
        ));
        assert!(matches!(
            err(vec![1, 1, 2], vec![1, 0]),
            Err(Error::OutOfRange { .. })
        ));
        assert!(matches!(
            err(vec![0, 1, 2], vec![0, 0]),
            Err(Error::Unsupported { .. })
        ));
        let decreasing = NeighbourList::from_csr(ListKind::Full, 3, vec![0, 2, 1, 2], vec![1, 2]);
        assert!(matches!(decreasing, Err(Error::OutOfRange { .. })));
        assert_eq!(
            NeighbourList::from_csr(ListKind::Half, 0, vec![0], vec![])
                .unwrap()
                .atoms(),
            0
        );
    }

    #[test]
    fn rebuild_rule_triggers_beyond_half_the_skin() {
        let mut s = System::fcc(4).unwrap();
        let mut v = VerletList::new(&s, ListKind::Half, CUTOFF, SKIN, 2).unwrap();
        s.positions[5][0] += 0.149;
        s.wrap();
        assert!(!v.update(&s).unwrap());
        s.positions[5][0] += 0.002;
        s.wrap();
        assert!(v.needs_rebuild(&s));
        assert!(v.update(&s).unwrap());
        assert_eq!(v.builds(), 2);
        assert_eq!(v.max_displacement(&s), 0.0);
        // Across the periodic boundary: atom 0 sits at the origin.
        s.positions[0][2] = wrap_minus(&s, 0.1);
        assert!((v.max_displacement(&s) - 0.1).abs() < 1e-12);
    }

    fn wrap_minus(s: &System, d: f64) -> f64 {
        super::super::system::wrap(-d, s.box_len())
    }
}
