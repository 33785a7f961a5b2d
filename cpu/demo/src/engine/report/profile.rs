//! Nsight Compute figures joined onto a pattern's tables (`run.sh profile <pattern>`): the
//! equivalents of nvprof's `gld_efficiency` and `gst_efficiency`, which the seed's reduction
//! table prints, and shared-memory bank conflicts.
//!
//! `run.sh profile` runs the demo under `ncu --csv --metrics` ([`METRICS`]), then runs it again
//! (timed, without the profiler) with `--profile ncu.csv`; [`Profile::parse`] reads the CSV and
//! [`Profile::annotate`] adds one column per metric to each table whose rows name a kernel.

use std::collections::{BTreeMap, HashMap};

use super::Table;

/// Global load efficiency: requested bytes / bytes of the sectors moved, per load instruction
/// (nvprof `gld_efficiency`).
pub const GLD_EFFICIENCY: &str = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct";
/// Global store efficiency (nvprof `gst_efficiency`).
pub const GST_EFFICIENCY: &str = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct";
/// Shared-memory bank conflicts on loads (extra wavefronts).
pub const SHARED_LD_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
/// Shared-memory bank conflicts on stores.
pub const SHARED_ST_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";

/// The metrics `run.sh profile` collects, with the column each becomes.
pub const METRICS: [(&str, &str); 4] = [
    (GLD_EFFICIENCY, "gld eff %"),
    (GST_EFFICIENCY, "gst eff %"),
    (SHARED_LD_CONFLICTS, "smem ld conflicts"),
    (SHARED_ST_CONFLICTS, "smem st conflicts"),
];

/// Metric values per kernel, averaged over the kernel's profiled launches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    by_kernel: HashMap<String, BTreeMap<String, f64>>,
}

/// An `ncu --csv` file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// No header row with "Kernel Name", "Metric Name" and "Metric Value".
    #[error(
        "no ncu CSV header (\"Kernel Name\", \"Metric Name\", \"Metric Value\") found; was the file written by `ncu --csv`?"
    )]
    NoHeader,
    /// A malformed CSV record.
    #[error("malformed ncu CSV: {0}")]
    Csv(#[from] csv::Error),
}

impl Profile {
    /// Parses the output of `ncu --csv --metrics ...` (the "raw" long layout: one row per
    /// kernel launch and metric). Lines before the header (the profiler's `==PROF==` lines, the
    /// program's own output) are skipped; values that are not numbers (`n/a`) are ignored.
    ///
    /// # Errors
    /// [`ProfileError`] if there is no header or a record is malformed.
    pub fn parse(text: &str) -> Result<Self, ProfileError> {
        let start = text
            .lines()
            .scan(0usize, |offset, line| {
                let at = *offset;
                *offset += line.len() + 1;
                Some((at, line))
            })
            .find(|(_, l)| {
                l.starts_with('"')
                    && l.contains("\"Kernel Name\"")
                    && l.contains("\"Metric Name\"")
                    && l.contains("\"Metric Value\"")
            })
            .map(|(at, _)| at)
            .ok_or(ProfileError::NoHeader)?;
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(&text.as_bytes()[start..]);
        let headers = reader.headers()?.clone();
        let col = |name: &str| headers.iter().position(|h| h == name);
        let (Some(k), Some(n), Some(v)) =
            (col("Kernel Name"), col("Metric Name"), col("Metric Value"))
        else {
            return Err(ProfileError::NoHeader);
        };
        let mut sums: HashMap<String, BTreeMap<String, (f64, usize)>> = HashMap::new();
        for record in reader.records() {
            let record = record?;
            let (Some(kernel), Some(metric), Some(value)) =
                (record.get(k), record.get(n), record.get(v))
            else {
                continue;
            };
            // ncu prints thousands separators in counts.
            let Ok(value) = value.replace(',', "").parse::<f64>() else {
                continue;
            };
            // Demangled names may carry a parameter list; ours are unmangled.
            let kernel = kernel
                .split('(')
                .next()
                .unwrap_or(kernel)
                .trim()
                .to_string();
            let e = sums
                .entry(kernel)
                .or_default()
                .entry(metric.to_string())
                .or_insert((0.0, 0));
            e.0 += value;
            e.1 += 1;
        }
        Ok(Self {
            by_kernel: sums
                .into_iter()
                .map(|(k, m)| {
                    (
                        k,
                        m.into_iter().map(|(n, (s, c))| (n, s / c as f64)).collect(),
                    )
                })
                .collect(),
        })
    }

    /// The averaged value of `metric` for `kernel`.
    pub fn get(&self, kernel: &str, metric: &str) -> Option<f64> {
        self.by_kernel.get(kernel)?.get(metric).copied()
    }

    /// Kernels profiled.
    pub fn kernels(&self) -> usize {
        self.by_kernel.len()
    }

    /// Adds a column per [`METRICS`] entry to `table` when any of its measurements names a
    /// profiled kernel, and records the values in the measurements' `extra`. Rows without a
    /// profiled kernel show `-`.
    pub fn annotate(&self, table: &mut Table) {
        let kernels: Vec<Option<String>> = {
            let mut by_row = vec![None; table.rows.len()];
            for m in &table.measurements {
                if let Some(slot) = by_row.get_mut(m.row) {
                    *slot = m.kernel.clone();
                }
            }
            by_row
        };
        if !kernels
            .iter()
            .flatten()
            .any(|k| self.by_kernel.contains_key(k))
        {
            return;
        }
        for (metric, column) in METRICS {
            table.add_column(column, |row| {
                kernels[row]
                    .as_deref()
                    .and_then(|k| self.get(k, metric))
                    .map(|v| {
                        if metric.ends_with(".pct") {
                            format!("{v:.1}%")
                        } else {
                            format!("{v:.0}")
                        }
                    })
                    .unwrap_or_else(|| "-".into())
            });
            for m in &mut table.measurements {
                if let Some(v) = m.kernel.as_deref().and_then(|k| self.get(k, metric)) {
                    m.extra.insert(metric.to_string(), v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ChartKind, Measurement};
    use super::*;

    const NCU: &str = r#"==PROF== Connected to process 123 (/bundle/demo)
some demo output
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","123","demo","127.0.0.1","reduce_neighbored","1","7","(512, 1, 1)","(32768, 1, 1)","0","9.0","Command line profiler metrics","smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct","%","25"
"0","123","demo","127.0.0.1","reduce_neighbored","1","7","(512, 1, 1)","(32768, 1, 1)","0","9.0","Command line profiler metrics","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","","1,024"
"1","123","demo","127.0.0.1","reduce_neighbored","1","7","(512, 1, 1)","(32768, 1, 1)","0","9.0","Command line profiler metrics","smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct","%","35"
"1","123","demo","127.0.0.1","reduce_neighbored","1","7","(512, 1, 1)","(32768, 1, 1)","0","9.0","Command line profiler metrics","smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct","%","n/a"
"#;

    #[test]
    fn averages_launches_and_skips_preamble() {
        let p = Profile::parse(NCU).unwrap();
        assert_eq!(p.kernels(), 1);
        assert_eq!(p.get("reduce_neighbored", GLD_EFFICIENCY), Some(30.0));
        assert_eq!(
            p.get("reduce_neighbored", SHARED_LD_CONFLICTS),
            Some(1024.0)
        );
        assert_eq!(p.get("reduce_neighbored", GST_EFFICIENCY), None);
    }

    #[test]
    fn annotates_rows_by_kernel() {
        let p = Profile::parse(NCU).unwrap();
        let mut t = Table::new("seed", "", ChartKind::Bars, ["kernel"]);
        t.measured_row(
            ["reduce_neighbored"],
            Measurement::default().kernel("reduce_neighbored"),
        );
        t.row(["reference"]);
        p.annotate(&mut t);
        assert_eq!(t.header.len(), 1 + METRICS.len());
        assert_eq!(t.rows[0][1], "30.0%");
        assert_eq!(t.rows[0][3], "1024");
        assert_eq!(t.rows[1][1], "-");
        assert_eq!(t.measurements[0].extra[GLD_EFFICIENCY], 30.0);
    }

    #[test]
    fn rejects_text_without_header() {
        assert!(matches!(
            Profile::parse("not a profile"),
            Err(ProfileError::NoHeader)
        ));
    }
}
