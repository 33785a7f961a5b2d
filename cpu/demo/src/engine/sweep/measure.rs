//! The measuring of a case, shared by every sweep: admitted if it fits ([`Sweep::admit`]), the
//! library's entry point launched once and its output checked against the CPU reference, then
//! timed with the L2 flushed before every launch ([`Sweep::measure`], through
//! [`Plan::run_with_setup`]). Each pattern's sweep (its inputs, its check) calls these.

use anyhow::Result;
use cpu::Gpu;
use cpu::error::DriverContext;
use cudarc::driver::{CudaSlice, LaunchConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::peers::{self, PeerRow};
use super::{Case, CaseError, Ceilings, FloorRecord, Row, SameSizeCopy, Skipped, SweepSpec};
use crate::engine::harness::{self, Footprint, Plan, Verdict, WARMUP};
use crate::engine::options::Options;
use crate::engine::timing::{self, Ceiling, Floor, Fp32Throughput, L2Flush};

/// A sweep in progress: the device, the run's ceilings, the L2 flush, the peers' timings, and
/// the rows measured so far.
pub(crate) struct Sweep<'a> {
    gpu: &'a Gpu,
    opts: &'a Options,
    flush: L2Flush,
    copy: Ceiling,
    ceilings: &'a Ceilings,
    fp32: Fp32Throughput,
    peers: &'a [PeerRow],
    max_elements: Option<u64>,
    rows: Vec<Row>,
    skipped: Vec<Skipped>,
    errors: Vec<CaseError>,
}

impl<'a> Sweep<'a> {
    /// A sweep on `gpu` judged against `copy` (the copy ceiling, also in `ceilings`) and
    /// `fp32` (the peak the convolutions' FMA floor assumes, also in `ceilings`).
    ///
    /// # Errors
    /// If the flush buffer cannot be allocated.
    pub(super) fn new(
        gpu: &'a Gpu,
        opts: &'a Options,
        copy: Ceiling,
        fp32: Fp32Throughput,
        ceilings: &'a Ceilings,
        peers: &'a [PeerRow],
        max_elements: Option<u64>,
    ) -> Result<Self> {
        Ok(Self {
            gpu,
            opts,
            flush: L2Flush::new(gpu)?,
            copy,
            ceilings,
            fp32,
            peers,
            max_elements,
            rows: Vec::new(),
            skipped: Vec::new(),
            errors: Vec::new(),
        })
    }

    /// The rows measured so far.
    pub(super) fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The cases whose entry point returned an error so far.
    pub(super) fn errors(&self) -> &[CaseError] {
        &self.errors
    }

    /// The rows, the skipped cases and the cases that ended in an error.
    pub(super) fn finish(self) -> (Vec<Row>, Vec<Skipped>, Vec<CaseError>) {
        (self.rows, self.skipped, self.errors)
    }

    /// Runs every case of `pattern` that fits.
    ///
    /// # Errors
    /// A library or driver error (a case whose output disagrees with the CPU is a failed row,
    /// not an error).
    pub(super) fn run(&mut self, spec: &SweepSpec) -> Result<()> {
        (spec.measure)(self, spec.cases())
    }

    /// The device.
    pub(crate) fn gpu(&self) -> &'a Gpu {
        self.gpu
    }

    /// The run's copy ceiling.
    pub(crate) fn copy(&self) -> &Ceiling {
        &self.copy
    }

    /// The peak FP32 rate the convolutions' FMA floor assumes.
    pub(crate) fn fp32(&self) -> &Fp32Throughput {
        &self.fp32
    }

    /// A line about a case: on stdout with the tables, else on stderr.
    pub(crate) fn note(&self, text: &str) {
        match self.opts.format {
            crate::engine::options::Format::Table => println!("{text}"),
            _ => eprintln!("{text}"),
        }
    }

    /// A seed for `case`'s inputs: `--seed` mixed with the case, so every case gets its own.
    pub(crate) fn seed_for(&self, case: &Case, salt: u64) -> u64 {
        let key = format!("{} {:?} {:?} {salt}", case.pattern, case.shape, case.width);
        key.bytes().fold(self.opts.seed, |h, b| {
            h.wrapping_mul(0x100_0000_01b3).wrapping_add(u64::from(b))
        })
    }

    /// The element count of `case` if it runs: not beyond `--max-elements`, and `footprint(n)`
    /// fits comfortably ([`harness::roomy`]). Otherwise records and prints why not.
    pub(crate) fn admit(
        &mut self,
        case: &Case,
        footprint: impl Fn(usize) -> Footprint,
    ) -> Result<Option<usize>> {
        let reason = match case.elements() {
            None => Some("the element count overflows".to_string()),
            Some(n) => match self.max_elements {
                Some(max) if n as u64 > max => Some(format!("more than --max-elements {max}")),
                _ => harness::roomy(self.gpu, &footprint(n))?,
            },
        };
        match reason {
            None => Ok(case.elements()),
            Some(reason) => {
                self.note(&format!(
                    "sweep: {} {}: skipped: {reason}",
                    case.pattern,
                    case.label()
                ));
                self.skipped.push(Skipped {
                    case: case.clone(),
                    reason,
                });
                Ok(None)
            }
        }
    }

    /// Launches once through `launch` and checks the output with `verify`, then times
    /// `launch` (the L2 flushed before every warm-up and timed launch) and adds the row.
    /// `x` is what both closures work on (the output buffer, the workspace). An error from
    /// the entry point (a shape it refuses, a fault) is recorded as the case's error, and the
    /// sweep goes on.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn measure<X, V: Verdict>(
        &mut self,
        case: Case,
        kernel: &str,
        bytes: u64,
        floor: Option<Floor>,
        x: &mut X,
        launch: impl FnMut(&mut X) -> cpu::Result<LaunchConfig>,
        verify: impl FnOnce(&mut X, &LaunchConfig) -> Result<V>,
    ) -> Result<()> {
        self.measure_with_setup(case, kernel, bytes, floor, x, |_| Ok(()), launch, verify)
    }

    /// As [`Sweep::measure`], with `setup` queued before every warm-up and timed launch (before
    /// the flush, outside the timed interval): restoring an input the entry point changes in
    /// place, such as the keys of an in-place sort. The first, verified launch runs on `x` as
    /// given.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn measure_with_setup<X, V: Verdict>(
        &mut self,
        case: Case,
        kernel: &str,
        bytes: u64,
        floor: Option<Floor>,
        x: &mut X,
        mut setup: impl FnMut(&mut X) -> cpu::Result<()>,
        mut launch: impl FnMut(&mut X) -> cpu::Result<LaunchConfig>,
        verify: impl FnOnce(&mut X, &LaunchConfig) -> Result<V>,
    ) -> Result<()> {
        let gpu = self.gpu;
        let mut state = (&mut self.flush, x);
        let trial = match Plan::new(gpu, self.opts, case.label(), kernel)
            .bytes(bytes, Some(&self.copy))
            .run_with_setup(
                &mut state,
                |s| {
                    setup(s.1)?;
                    s.0.flush(gpu)
                },
                |s| launch(s.1),
                |s, cfg| verify(s.1, cfg),
            ) {
            Ok(trial) => trial,
            Err(e) => {
                let error = format!("{e:#}");
                self.note(&format!(
                    "sweep: {} {}: error: {error}",
                    case.pattern,
                    case.label()
                ));
                self.errors.push(CaseError {
                    case,
                    kernel: kernel.to_string(),
                    error,
                });
                return Ok(());
            }
        };
        let t = trial.timing;
        let gbps = t.gbps(bytes);
        let (gx, gy, gz) = trial.cfg.grid_dim;
        let (bx, by, bz) = trial.cfg.block_dim;
        let peers = peers::matching(self.peers, &case);
        let row = Row {
            elements: case.elements().unwrap_or_default() as u64,
            kernel: kernel.to_string(),
            grid: [gx, gy, gz],
            block: [bx, by, bz],
            median_ms: t.median_ms,
            min_ms: t.min_ms,
            max_ms: t.max_ms,
            reps: t.reps,
            bytes,
            gbps,
            percent_of_copy: 100.0 * gbps / self.copy.gbps,
            percent_of_read: 100.0 * gbps / self.ceilings.read.gbps,
            percent_of_theoretical: 100.0 * gbps / self.ceilings.theoretical_gbps,
            floor: floor.map(|f| FloorRecord {
                memory_ms: f.memory_ms,
                fma_ms: f.fma_ms,
                floor_ms: f.ms(),
                bound: f.bound().into(),
                ratio: f.ratio(t.median_ms),
            }),
            same_size_copy: None,
            max_error: trial.check.max_error(),
            passed: trial.passed(),
            verdict: trial.verdict(),
            peers,
            case,
        };
        eprintln!(
            "sweep: {} {}: {:.4} ms, {:.1} GB/s, {}",
            row.case.pattern,
            row.case.label(),
            row.median_ms,
            row.gbps,
            row.verdict
        );
        self.rows.push(row);
        Ok(())
    }

    /// Times a device-to-device copy of `from` into `to` the way the cases are timed (the L2
    /// flushed before every launch) and records it beside the last row, if that row is
    /// `case`'s (it is not when the case ended in an error).
    ///
    /// # Errors
    /// A driver error.
    pub(crate) fn same_size_copy(
        &mut self,
        case: &Case,
        from: &CudaSlice<f32>,
        to: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let gpu = self.gpu;
        let Some(row) = self.rows.last_mut().filter(|r| r.case == *case) else {
            return Ok(());
        };
        let copy = timing::time_gpu_with_setup(
            gpu,
            "same-size device-to-device memcpy",
            WARMUP,
            self.opts.reps as usize,
            &mut (&mut self.flush, to),
            |s| s.0.flush(gpu),
            |s| {
                gpu.stream()
                    .memcpy_dtod(from, s.1)
                    .during("same-size device-to-device memcpy")
            },
        )?;
        row.same_size_copy = Some(SameSizeCopy {
            median_ms: copy.median_ms,
            percent: 100.0 * copy.median_ms / row.median_ms,
        });
        Ok(())
    }
}

/// `n` floats uniform in `[-1, 1)` from 24 random bits each (fast enough for 2^30 elements).
pub(crate) fn random_floats(seed: u64, n: usize) -> Vec<f32> {
    let mut bits = vec![0u32; n];
    StdRng::seed_from_u64(seed).fill(&mut bits[..]);
    bits.into_iter()
        .map(|b| (b >> 8) as f32 * (2.0 / (1u32 << 24) as f32) - 1.0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_floats_are_in_range_and_seeded() {
        let a = random_floats(9, 1000);
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)));
        assert_eq!(a, random_floats(9, 1000));
        assert_ne!(a, random_floats(10, 1000));
    }
}
