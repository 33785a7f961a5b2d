//! The LJ-melt system (LAMMPS `bench/in.lj`) in reduced units: an fcc lattice at density
//! 0.8442 in a periodic cube, seeded random velocities at temperature 3.0, and the small
//! deterministic generator ([`SplitMix64`]) they are drawn from.
//!
//! Units are Lennard-Jones reduced units: lengths in sigma, energies in epsilon, masses in the
//! atom's mass (all atoms have mass 1), temperature in epsilon / k_B, time in
//! `sigma sqrt(m / epsilon)`.

use crate::error::{Error, Result};

/// Reduced number density of LJ-melt (`lattice fcc 0.8442`).
pub const DENSITY: f64 = 0.8442;
/// Cutoff radius `rc` of the pair potential, sigma (`pair_style lj/cut 2.5`). Plain
/// truncation: no energy shift, no tail correction.
pub const CUTOFF: f64 = 2.5;
/// Neighbour-list skin, sigma (`neighbor 0.3 bin`): the list holds pairs within
/// `CUTOFF + SKIN`.
pub const SKIN: f64 = 0.3;
/// Time step of velocity Verlet (`timestep 0.005` in LJ units).
pub const DT: f64 = 0.005;
/// Initial temperature (`velocity all create 3.0 87287`).
pub const TEMPERATURE: f64 = 3.0;
/// Mass of every atom (`mass 1 1.0`).
pub const MASS: f64 = 1.0;
/// Atoms per fcc unit cell.
pub const ATOMS_PER_CELL: usize = 4;
/// Fewest unit cells per side: with 3, the box (5.04 sigma) is still wider than twice the
/// cutoff, so the minimum image is the only image within `rc` and the lattice sum is the
/// infinite lattice's.
pub const MIN_CELLS: usize = 3;
/// Most unit cells per side: `4 * 400^3 = 256 * 10^6` atoms, so that atom indices fit the
/// `u32` neighbour lists.
pub const MAX_CELLS: usize = 400;
/// Potential energy per atom of the perfect LJ-melt lattice (the step-0 `E_pair` that the
/// LJ-melt benchmark's log prints for 20 cells), for any size from [`MIN_CELLS`] up: the fcc
/// lattice sum of `4 (r^-12 - r^-6)` over the 54 neighbours within 2.5 sigma (shells 1..4 of
/// the lattice), halved.
pub const LATTICE_ENERGY_PER_ATOM: f64 = -6.7733681;

/// The fcc lattice constant at [`DENSITY`]: `(4 / 0.8442)^(1/3)` = 1.6796 sigma.
pub fn lattice_constant() -> f64 {
    (ATOMS_PER_CELL as f64 / DENSITY).cbrt()
}

/// SplitMix64 (Steele, Lea and Flood 2014; the seeding generator of `java.util.SplittableRandom`
/// and of xoshiro): a 64-bit counter passed through a mixing function. Tiny, fast, and the same
/// stream on every machine, which is all the initial velocities and lattice perturbations need.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` from the top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[-0.5, 0.5)`.
    pub fn next_centred(&mut self) -> f64 {
        self.next_f64() - 0.5
    }
}

/// Atoms in a periodic cube: positions and velocities in `f64`, reduced units.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    cells: usize,
    box_len: f64,
    /// Positions, sigma, each coordinate in `[0, box_len)`: wrapped after every move; call
    /// [`System::wrap`] after changing them.
    pub positions: Vec<[f64; 3]>,
    /// Velocities, `sigma / tau`.
    pub velocities: Vec<[f64; 3]>,
}

impl System {
    /// The LJ-melt lattice: `cells^3` fcc unit cells of side [`lattice_constant`] (4 atoms
    /// each, basis `(0,0,0)`, `(1/2,1/2,0)`, `(1/2,0,1/2)`, `(0,1/2,1/2)`), atoms numbered cell
    /// by cell with `x` fastest; velocities zero. 20 cells give 32000 atoms in a box of
    /// 33.59 sigma.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] unless `MIN_CELLS <= cells <= MAX_CELLS`.
    pub fn fcc(cells: usize) -> Result<Self> {
        if !(MIN_CELLS..=MAX_CELLS).contains(&cells) {
            return Err(Error::OutOfRange {
                what: "cells per side",
                value: cells as u64,
                min: MIN_CELLS as u64,
                max: MAX_CELLS as u64,
            });
        }
        let a = lattice_constant();
        const BASIS: [[f64; 3]; 4] = [
            [0.0, 0.0, 0.0],
            [0.5, 0.5, 0.0],
            [0.5, 0.0, 0.5],
            [0.0, 0.5, 0.5],
        ];
        let mut positions = Vec::with_capacity(ATOMS_PER_CELL * cells.pow(3));
        for k in 0..cells {
            for j in 0..cells {
                for i in 0..cells {
                    for b in BASIS {
                        positions.push([
                            (i as f64 + b[0]) * a,
                            (j as f64 + b[1]) * a,
                            (k as f64 + b[2]) * a,
                        ]);
                    }
                }
            }
        }
        let n = positions.len();
        Ok(Self {
            cells,
            box_len: cells as f64 * a,
            positions,
            velocities: vec![[0.0; 3]; n],
        })
    }

    /// [`System::fcc`] with [`System::thermalise`]d velocities at [`TEMPERATURE`]: the
    /// LJ-melt starting point.
    ///
    /// # Errors
    /// As [`System::fcc`].
    pub fn lj_melt(cells: usize, seed: u64) -> Result<Self> {
        let mut s = Self::fcc(cells)?;
        s.thermalise(seed, TEMPERATURE);
        Ok(s)
    }

    /// Unit cells per side.
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Number of atoms.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no atoms (never, for a lattice).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Side of the periodic cube, sigma.
    pub fn box_len(&self) -> f64 {
        self.box_len
    }

    /// Degrees of freedom of the kinetic temperature: `3 N - 3` (total momentum is zero), as
    /// LAMMPS's `compute temp` counts them.
    pub fn degrees_of_freedom(&self) -> f64 {
        (3 * self.len()).saturating_sub(3).max(1) as f64
    }

    /// Draws each velocity component uniform in `[-1/2, 1/2)` from [`SplitMix64`] seeded
    /// with `seed`, removes the centre-of-mass velocity and scales to `temperature`
    /// (`velocity all create T seed`, with LAMMPS's uniform distribution; the random stream
    /// is ours, so the velocities are not LAMMPS's).
    pub fn thermalise(&mut self, seed: u64, temperature: f64) {
        let mut rng = SplitMix64::new(seed);
        for v in &mut self.velocities {
            *v = [rng.next_centred(), rng.next_centred(), rng.next_centred()];
        }
        let n = self.len() as f64;
        let mut mean = [0.0; 3];
        for v in &self.velocities {
            for c in 0..3 {
                mean[c] += v[c] / n;
            }
        }
        for v in &mut self.velocities {
            for c in 0..3 {
                v[c] -= mean[c];
            }
        }
        let t = self.temperature();
        if t > 0.0 {
            let scale = (temperature / t).sqrt();
            for v in &mut self.velocities {
                for x in v.iter_mut() {
                    *x *= scale;
                }
            }
        }
    }

    /// Moves every atom by a random vector with components uniform in `[-amplitude/2,
    /// amplitude/2)` and wraps it into the box (a perturbed lattice, whose forces are not
    /// zero).
    pub fn perturb(&mut self, seed: u64, amplitude: f64) {
        let mut rng = SplitMix64::new(seed);
        for p in &mut self.positions {
            for x in p.iter_mut() {
                *x += amplitude * rng.next_centred();
            }
        }
        self.wrap();
    }

    /// The system as another precision holds it: the box side and every position and
    /// velocity passed through `round` (e.g. `|x| x as f32 as f64`), so that an `f64`
    /// reference computed on it sees exactly the inputs an `f32` kernel gets.
    pub fn rounded(&self, round: impl Fn(f64) -> f64) -> Self {
        let r3 = |v: &[f64; 3]| [round(v[0]), round(v[1]), round(v[2])];
        Self {
            cells: self.cells,
            box_len: round(self.box_len),
            positions: self.positions.iter().map(r3).collect(),
            velocities: self.velocities.iter().map(r3).collect(),
        }
    }

    /// Puts every coordinate back into `[0, box_len)`.
    pub fn wrap(&mut self) {
        let l = self.box_len;
        for p in &mut self.positions {
            for x in p.iter_mut() {
                *x = wrap(*x, l);
            }
        }
    }

    /// Kinetic energy `sum m v^2 / 2`, epsilon.
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * MASS
            * self
                .velocities
                .iter()
                .map(|v| v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
                .sum::<f64>()
    }

    /// Kinetic temperature `2 KE / dof`, epsilon / k_B.
    pub fn temperature(&self) -> f64 {
        2.0 * self.kinetic_energy() / self.degrees_of_freedom()
    }

    /// Total momentum `sum m v`.
    pub fn momentum(&self) -> [f64; 3] {
        let mut p = [0.0; 3];
        for v in &self.velocities {
            for c in 0..3 {
                p[c] += MASS * v[c];
            }
        }
        p
    }

    /// The minimum image of `a - b` in this box, for points less than one and a half box
    /// sides apart along each axis (any two wrapped positions are): one compare and at most
    /// one add per axis, no rounding call (the GPU kernels, which accept any positions, use
    /// `d - L rint(d / L)`; both give the same image except for components of exactly `L / 2`,
    /// beyond the cutoff).
    #[inline]
    pub fn separation(&self, a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
        let l = self.box_len;
        let h = 0.5 * l;
        let image = |d: f64| {
            if d > h {
                d - l
            } else if d < -h {
                d + l
            } else {
                d
            }
        };
        [image(a[0] - b[0]), image(a[1] - b[1]), image(a[2] - b[2])]
    }

    /// The squared minimum-image distance between atoms `i` and `j`.
    #[inline]
    pub fn distance_sq(&self, i: usize, j: usize) -> f64 {
        let d = self.separation(&self.positions[i], &self.positions[j]);
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    }
}

/// `x` moved by whole box lengths into `[0, l)`.
#[inline]
pub fn wrap(x: f64, l: f64) -> f64 {
    let w = x - l * (x / l).floor();
    // `x` just below 0 can round to exactly `l`.
    if w >= l { w - l } else { w }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_published_stream() {
        // First outputs for seed 1234567 (the reference C implementation by Vigna).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        let x = SplitMix64::new(7).next_f64();
        assert!((0.0..1.0).contains(&x));
    }

    #[test]
    fn lattice_has_the_benchmark_size_and_density() {
        let s = System::fcc(20).unwrap();
        assert_eq!(s.len(), 32000);
        let density = s.len() as f64 / s.box_len().powi(3);
        assert!((density - DENSITY).abs() < 1e-12, "{density}");
        assert!((lattice_constant() - 1.679_596_191_382_507).abs() < 1e-12);
        assert!(
            s.positions
                .iter()
                .flatten()
                .all(|&x| (0.0..s.box_len()).contains(&x))
        );
        // Nearest neighbours at a / sqrt(2).
        let nn = (0..s.len())
            .skip(1)
            .map(|j| s.distance_sq(0, j))
            .fold(f64::INFINITY, f64::min)
            .sqrt();
        assert!((nn - lattice_constant() / 2f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn sizes_outside_the_range_are_refused() {
        assert!(matches!(
            System::fcc(2),
            Err(Error::OutOfRange { value: 2, .. })
        ));
        assert!(System::fcc(MAX_CELLS + 1).is_err());
    }

    #[test]
    fn velocities_have_zero_momentum_and_the_temperature() {
        let s = System::lj_melt(4, 87287).unwrap();
        let p = s.momentum();
        assert!(p.iter().all(|c| c.abs() < 1e-12), "{p:?}");
        assert!((s.temperature() - TEMPERATURE).abs() < 1e-12);
        // Deterministic: the same seed gives the same velocities.
        assert_eq!(s, System::lj_melt(4, 87287).unwrap());
        assert_ne!(s, System::lj_melt(4, 1).unwrap());
    }

    #[test]
    fn minimum_image_and_wrap() {
        let s = System::fcc(3).unwrap();
        let l = s.box_len();
        let d = s.separation(&[0.1, 0.0, l - 0.1], &[l - 0.1, 0.0, 0.1]);
        assert!((d[0] - 0.2).abs() < 1e-12 && d[1] == 0.0 && (d[2] + 0.2).abs() < 1e-12);
        assert_eq!(wrap(-1e-300, l), 0.0);
        assert!(wrap(-1e-17, l) < l);
        assert!((wrap(l + 0.5, l) - 0.5).abs() < 1e-12);
        assert!((wrap(-0.5, l) - (l - 0.5)).abs() < 1e-12);
    }
}
