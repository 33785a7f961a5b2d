//! Where a pattern's output goes: printed as it comes (`--format table`), and always kept as a
//! [`Section`] of the run's [`Report`](crate::report::Report) for `--format json|csv`, `--out DIR`
//! and `demo all`; with `--dump DIR`, arrays written as `.npy` files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::report::profile::Profile;
use crate::report::{Block, CeilingRecord, Section, Table};
use crate::timing::{self, CEILING_COPY_BYTES, Ceiling};
use anyhow::{Context, Result};
use cpu::Gpu;
use indicatif::ProgressBar;
use npyz::WriterBuilder;

/// How results are printed on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines and markdown tables as the run goes, as the seed posts print them.
    Table,
    /// The whole report as JSON at the end (every measurement).
    Json,
    /// One CSV row per measurement at the end.
    Csv,
}

/// One pattern's output sink.
pub struct Out {
    format: Format,
    progress: Option<ProgressBar>,
    section: Section,
    dump: Option<PathBuf>,
    profile: Option<Arc<Profile>>,
    /// The device's theoretical DRAM bandwidth, GB/s, once [`Out::ceiling`] has run.
    theoretical_gbps: Option<f64>,
}

impl Out {
    /// A sink for `pattern`; `dump` is the `--dump` folder (arrays go to `dump/pattern/`).
    pub fn new(
        pattern: &str,
        format: Format,
        progress: Option<ProgressBar>,
        dump: Option<&Path>,
        profile: Option<Arc<Profile>>,
    ) -> Self {
        Self {
            format,
            progress,
            section: Section::new(pattern),
            dump: dump.map(|d| d.join(pattern)),
            profile,
            theoretical_gbps: None,
        }
    }

    fn print(&self, text: &str) {
        if self.format != Format::Table {
            return;
        }
        match &self.progress {
            Some(pb) => pb.suspend(|| println!("{text}")),
            None => println!("{text}"),
        }
    }

    /// A line printed on the terminal only (the report has its own headings).
    pub fn banner(&self, text: &str) {
        self.print(text);
    }

    /// A line of prose: printed, and kept in the report.
    pub fn line(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.print(&text);
        self.section.blocks.push(Block::Line(text));
    }

    /// A finished table: profiler columns added where `--profile` names its kernels, printed
    /// under its title, and kept in the report.
    pub fn table(&mut self, mut table: Table) {
        if let Some(p) = &self.profile {
            p.annotate(&mut table);
        }
        if !table.title.is_empty() {
            self.print(&table.title);
        }
        self.print(&table.markdown());
        let best = self.best_row(&table);
        self.section.blocks.push(Block::Table(table));
        if let Some(line) = best {
            self.line(line);
        }
    }

    /// For a table of DRAM bandwidths (one with a `% of memcpy` column), its fastest row as a
    /// share of this run's memcpy and of the theoretical bandwidth from the clocks.
    fn best_row(&self, table: &Table) -> Option<String> {
        if !table.header.iter().any(|h| h == "% of memcpy") {
            return None;
        }
        let ceiling = self.section.ceiling.as_ref()?;
        let theoretical = self.theoretical_gbps?;
        let (m, gbps) = table
            .measurements
            .iter()
            .filter_map(|m| Some((m, m.gbps?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        Some(format!(
            "best row: {} at {gbps:.1} GB/s, {:.1}% of this run's memcpy ({:.1} GB/s), {:.1}% of \
             the theoretical {theoretical:.0} GB/s (2 x memory clock x bus width / 8)",
            m.key(),
            100.0 * gbps / ceiling.gbps,
            ceiling.gbps,
            100.0 * gbps / theoretical,
        ))
    }

    /// Names the measurement the summary reports for this pattern by table id and
    /// [`Measurement::key`](crate::report::Measurement::key) (by default the passing one with the
    /// highest bandwidth).
    pub fn headline(&mut self, table: &str, key: &str) {
        self.section.headline = Some((table.into(), key.into()));
    }

    /// Measures the device-to-device memcpy ceiling, prints it and keeps it as the section's.
    pub fn ceiling(&mut self, gpu: &Gpu, reps: u32) -> Result<Ceiling> {
        let c = timing::memcpy_ceiling(gpu, CEILING_COPY_BYTES, 3, reps as usize)?;
        self.line(format!(
            "memcpy ceiling: device-to-device copy of {} MiB, median {:.3} ms, {:.1} GB/s (bytes read + written)",
            CEILING_COPY_BYTES >> 20,
            c.timing.median_ms,
            c.gbps
        ));
        self.section.ceiling = Some(CeilingRecord::from(&c));
        self.theoretical_gbps = Some(timing::theoretical_gbps(gpu)?);
        Ok(c)
    }

    /// Whether `--dump` is on (so callers can skip downloads only a dump needs).
    pub fn dumping(&self) -> bool {
        self.dump.is_some()
    }

    /// With `--dump DIR`, writes `data` as `DIR/<pattern>/<name>.npy` with `shape` (row-major;
    /// `&[]` for one dimension of `data.len()`). Without it, does nothing.
    pub fn dump<T: npyz::AutoSerialize>(
        &self,
        name: &str,
        shape: &[u64],
        data: &[T],
    ) -> Result<()> {
        let Some(dir) = &self.dump else {
            return Ok(());
        };
        let path = dir.join(format!("{name}.npy"));
        let len = [data.len() as u64];
        let shape = if shape.is_empty() { &len[..] } else { shape };
        let mut bytes = Vec::with_capacity(std::mem::size_of_val(data) + 128);
        {
            let mut writer = npyz::WriteOptions::<T>::new()
                .default_dtype()
                .shape(shape)
                .writer(&mut bytes)
                .begin_nd()
                .with_context(|| format!("encoding {}", path.display()))?;
            for x in data {
                writer
                    .push(x)
                    .with_context(|| format!("encoding {}", path.display()))?;
            }
            writer
                .finish()
                .with_context(|| format!("encoding {}", path.display()))?;
        }
        crate::report::write_atomically(&path, &bytes)?;
        Ok(())
    }

    /// The section, with `error` recorded if the pattern ended with one.
    pub fn finish(mut self, error: Option<&anyhow::Error>) -> Section {
        self.section.error = error.map(|e| format!("{e:#}"));
        self.section
    }
}
