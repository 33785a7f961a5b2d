//! Where a pattern's output goes: printed as it comes (`--format table`), and always kept as a
//! [`Section`] of the run's [`Report`](crate::engine::report::Report) for `--format json|csv`, `--out DIR`
//! and `demo all`; with `--dump DIR`, arrays written as `.npy` files, with an `index.json`
//! naming each array and the table that verified it ([`DumpIndex`]).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use cpu::Gpu;
use indicatif::ProgressBar;
use npyz::WriterBuilder;
use serde::{Deserialize, Serialize};

use crate::engine::options::Format;
use crate::engine::report::profile::Profile;
use crate::engine::report::{Block, CeilingRecord, Section, Table};
use crate::engine::timing::{self, CEILING_COPY_BYTES, Ceiling};

/// One pattern's output sink.
pub struct Out {
    format: Format,
    progress: Option<ProgressBar>,
    section: Section,
    dump: Option<PathBuf>,
    profile: Option<Arc<Profile>>,
    /// The device's theoretical DRAM bandwidth, GB/s, once [`Out::ceiling`] has run.
    theoretical_gbps: Option<f64>,
    /// With `--dump`: what has been written, for `index.json`.
    index: RefCell<DumpIndex>,
    /// Prints nothing (a rank other than 0 of a multi-process job).
    silent: bool,
}

/// `DIR/<pattern>/index.json` of a `--dump DIR` run: every array written, in order, and every
/// table with its measurements and the arrays it verified. An array belongs to the table
/// printed next after it was written; inputs are written before the table that reads them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpIndex {
    /// The pattern (the folder's name).
    pub pattern: String,
    /// Every array written, in order.
    pub arrays: Vec<DumpedArray>,
    /// Every table, in order.
    pub tables: Vec<DumpedTable>,
}

/// One array of a [`DumpIndex`]: `<name>.npy`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpedArray {
    /// The file's stem.
    pub name: String,
    /// NumPy's shape.
    pub shape: Vec<u64>,
    /// NumPy's type string (`<f4`, `<i4`, `<u4`, `|u1`, ...).
    pub dtype: String,
    /// Whether a table verified it ([`Out::verify`]: an output) or not ([`Out::dump`]: an
    /// input, a mask).
    pub verified: bool,
    /// The table printed next after it was written (`None`: none was).
    pub table: Option<String>,
}

/// One table of a [`DumpIndex`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpedTable {
    /// The table's id.
    pub id: String,
    /// Its measurements (a row of two measurements counts twice): each is a timed, and most a
    /// verified, launch.
    pub measurements: usize,
    /// The arrays it verified, as [`Out::verify`] wrote them.
    pub verified: Vec<String>,
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
            index: RefCell::new(DumpIndex {
                pattern: pattern.into(),
                ..DumpIndex::default()
            }),
            silent: false,
        }
    }

    /// This sink, printing nothing when `silent` (the report is still kept).
    pub fn silenced(mut self, silent: bool) -> Self {
        self.silent = silent;
        self
    }

    fn print(&self, text: &str) {
        if self.format != Format::Table || self.silent {
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
        if self.dumping() {
            self.index.borrow_mut().close_table(&table);
        }
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
    /// [`Measurement::key`](crate::engine::report::Measurement::key) (by default the passing one with the
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
    /// `&[]` for one dimension of `data.len()`): an array no table verifies (an input, a mask).
    /// Without it, does nothing.
    pub fn dump<T: npyz::AutoSerialize>(
        &self,
        name: &str,
        shape: &[u64],
        data: &[T],
    ) -> Result<()> {
        self.write(name, shape, data, false)
    }

    /// The one step behind every array a table verifies: `check(got)`, and with `--dump DIR`,
    /// `got` written as `DIR/<pattern>/<name>.npy` (as [`Out::dump`]) and recorded in
    /// `index.json` as verified by the next table. A verification that goes through here
    /// cannot leave its array out of the dump.
    pub fn verify<T: npyz::AutoSerialize, V>(
        &self,
        name: &str,
        shape: &[u64],
        got: &[T],
        check: impl FnOnce(&[T]) -> V,
    ) -> Result<V> {
        let verdict = check(got);
        self.write(name, shape, got, true)?;
        Ok(verdict)
    }

    fn write<T: npyz::AutoSerialize>(
        &self,
        name: &str,
        shape: &[u64],
        data: &[T],
        verified: bool,
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
        crate::engine::report::write_atomically(&path, &bytes)?;
        self.index.borrow_mut().arrays.push(DumpedArray {
            name: name.into(),
            shape: shape.to_vec(),
            dtype: type_string::<T>(),
            verified,
            table: None,
        });
        Ok(())
    }

    /// The section, with `error` recorded if the pattern ended with one. With `--dump DIR`,
    /// writes `DIR/<pattern>/index.json` (a failure to is recorded as the section's error).
    pub fn finish(mut self, error: Option<&anyhow::Error>) -> Section {
        let mut error = error.map(|e| format!("{e:#}"));
        if let Some(dir) = &self.dump
            && let Err(e) = self.index.get_mut().write(dir)
        {
            let e = format!("{e:#}");
            error = Some(error.map_or(e.clone(), |first| format!("{first}; {e}")));
        }
        self.section.error = error;
        self.section
    }
}

impl DumpIndex {
    /// Closes `table`: the arrays written since the previous table are its.
    fn close_table(&mut self, table: &Table) {
        let mut verified = Vec::new();
        for a in self.arrays.iter_mut().filter(|a| a.table.is_none()) {
            a.table = Some(table.id.clone());
            if a.verified {
                verified.push(a.name.clone());
            }
        }
        self.tables.push(DumpedTable {
            id: table.id.clone(),
            measurements: table.measurements.len(),
            verified,
        });
    }

    /// Writes `dir/index.json` (nothing where nothing was dumped and no table printed).
    fn write(&self, dir: &Path) -> Result<()> {
        if self.arrays.is_empty() && self.tables.is_empty() {
            return Ok(());
        }
        let json = serde_json::to_string_pretty(self)?;
        crate::engine::report::write_atomically(&dir.join("index.json"), json.as_bytes())?;
        Ok(())
    }
}

/// NumPy's type string of `T` as `.npy` headers write it (`<f4`).
fn type_string<T: npyz::AutoSerialize>() -> String {
    match T::default_dtype() {
        npyz::DType::Plain(t) => t.to_string(),
        other => other.descr(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::report::{ChartKind, Measurement};
    use crate::engine::timing::Timing;

    fn table(id: &str, rows: usize) -> Table {
        let mut t = Table::new(id, "", ChartKind::None, ["variant"]);
        let timing = Timing {
            median_ms: 1.0,
            min_ms: 1.0,
            max_ms: 1.0,
            reps: 1,
        };
        for r in 0..rows {
            let name = format!("v{r}");
            t.measured_row([name.clone()], Measurement::new(name, &timing));
        }
        t
    }

    /// What `--dump` writes without a GPU: the arrays, and the index tying each verified array
    /// to the table printed next.
    #[test]
    fn the_index_names_each_array_and_its_table() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = Out::new("p", Format::Json, None, Some(dir.path()), None);
        assert!(out.dumping());
        out.dump("input", &[2, 3], &[1i32, 2, 3, 4, 5, 6]).unwrap();
        let verdict = out
            .verify("output_a", &[], &[1.5f32, 2.5], |got| got.len())
            .unwrap();
        assert_eq!(verdict, 2, "the check's own result comes back");
        out.table(table("first", 1));
        out.verify("output_b", &[], &[7u32], |_| ()).unwrap();
        out.verify("output_c", &[], &[8u64], |_| ()).unwrap();
        out.table(table("second", 2));
        let section = out.finish(None);
        assert!(section.error.is_none(), "{:?}", section.error);
        let index: DumpIndex = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("p/index.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(index.pattern, "p");
        let names: Vec<(&str, &str, bool, Option<&str>)> = index
            .arrays
            .iter()
            .map(|a| {
                (
                    a.name.as_str(),
                    a.dtype.as_str(),
                    a.verified,
                    a.table.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("input", "<i4", false, Some("first")),
                ("output_a", "<f4", true, Some("first")),
                ("output_b", "<u4", true, Some("second")),
                ("output_c", "<u8", true, Some("second")),
            ]
        );
        assert_eq!(index.arrays[0].shape, [2, 3]);
        assert_eq!(index.arrays[1].shape, [2], "one dimension of data.len()");
        let tables: Vec<(&str, usize, usize)> = index
            .tables
            .iter()
            .map(|t| (t.id.as_str(), t.measurements, t.verified.len()))
            .collect();
        assert_eq!(tables, [("first", 1, 1), ("second", 2, 2)]);
        for a in &index.arrays {
            let npy = std::fs::read(dir.path().join(format!("p/{}.npy", a.name))).unwrap();
            assert_eq!(&npy[..6], b"\x93NUMPY", "{}", a.name);
        }
    }

    #[test]
    fn without_dump_nothing_is_written_and_the_check_still_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = Out::new("p", Format::Json, None, None, None);
        assert!(!out.dumping());
        let mut ran = false;
        out.verify("output", &[], &[1u8], |_| ran = true).unwrap();
        assert!(ran);
        out.table(table("t", 1));
        let section = out.finish(None);
        assert!(section.error.is_none());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
