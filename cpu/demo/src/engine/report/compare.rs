//! `demo compare OLD.json NEW.json`: the speedup of every measurement present in both runs
//! (another GPU, another commit), matched by pattern, table id, variant, series and x.

use std::collections::HashMap;

use super::{ChartKind, Report, Table};

/// One measurement found in both reports.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Change {
    /// Pattern.
    pub pattern: String,
    /// Table id.
    pub table: String,
    /// [`super::Measurement::key`].
    pub key: String,
    /// Median of the old run, ms.
    pub old_ms: f64,
    /// Median of the new run, ms.
    pub new_ms: f64,
    /// Whether both runs passed verification.
    pub both_passed: bool,
}

impl Change {
    /// `old / new`: above 1 the new run is faster.
    pub fn speedup(&self) -> f64 {
        self.old_ms / self.new_ms
    }
}

/// The matched measurements, in the new report's order, and how many of each side had no match.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Present in both.
    pub changes: Vec<Change>,
    /// Only in the old report.
    pub only_old: usize,
    /// Only in the new report.
    pub only_new: usize,
}

/// Matches the measurements of `old` and `new`.
pub fn compare(old: &Report, new: &Report) -> Comparison {
    let key = |p: &str, t: &str, k: String| (p.to_string(), t.to_string(), k);
    let mut old_by_key = HashMap::new();
    for s in &old.sections {
        for (t, m) in s.measurements() {
            old_by_key
                .entry(key(&s.pattern, &t.id, m.key()))
                .or_insert(m);
        }
    }
    let mut changes = Vec::new();
    let mut only_new = 0;
    for s in &new.sections {
        for (t, m) in s.measurements() {
            // Removed when matched: a key twice in `new` matches once.
            match old_by_key.remove(&key(&s.pattern, &t.id, m.key())) {
                Some(o) => changes.push(Change {
                    pattern: s.pattern.clone(),
                    table: t.id.clone(),
                    key: m.key(),
                    old_ms: o.median_ms,
                    new_ms: m.median_ms,
                    both_passed: o.passed && m.passed,
                }),
                None => only_new += 1,
            }
        }
    }
    Comparison {
        only_old: old_by_key.len(),
        changes,
        only_new,
    }
}

impl Comparison {
    /// The comparison as a table: pattern, table, variant, old ms, new ms, speedup.
    pub fn table(&self, old_device: &str, new_device: &str) -> Table {
        let mut t = Table::new(
            "compare",
            format!(
                "speedup = old median / new median (old: {old_device}; new: {new_device}); {} matched, {} only in old, {} only in new",
                self.changes.len(),
                self.only_old,
                self.only_new
            ),
            ChartKind::None,
            [
                "pattern", "table", "variant", "old ms", "new ms", "speedup", "verified",
            ],
        );
        for c in &self.changes {
            t.row([
                c.pattern.clone(),
                c.table.clone(),
                c.key.clone(),
                format!("{:.4}", c.old_ms),
                format!("{:.4}", c.new_ms),
                format!("{:.2}x", c.speedup()),
                if c.both_passed { "both" } else { "NOT both" }.into(),
            ]);
        }
        t
    }

    /// Geometric mean of the speedups, if any matched.
    pub fn geomean(&self) -> Option<f64> {
        let logs: Vec<f64> = self
            .changes
            .iter()
            .map(|c| c.speedup())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(f64::ln)
            .collect();
        (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use super::super::{Block, Measurement};
    use super::*;

    #[test]
    fn matches_by_key_and_counts_the_rest() {
        let old = sample();
        let mut new = sample();
        if let Block::Table(t) = &mut new.sections[0].blocks[1] {
            t.measurements[1].median_ms = 0.5;
            t.measurements.push(Measurement {
                variant: "newcomer".into(),
                median_ms: 1.0,
                ..Default::default()
            });
        }
        let c = compare(&old, &new);
        assert_eq!(c.changes.len(), 2);
        assert_eq!(c.only_new, 1);
        assert_eq!(c.only_old, 0);
        let fast = c.changes.iter().find(|c| c.key == "fast").unwrap();
        assert!((fast.speedup() - 2.0).abs() < 1e-12);
        let g = c.geomean().unwrap();
        assert!((g - 2f64.sqrt()).abs() < 1e-12, "{g}");
        assert_eq!(c.table("a", "b").rows.len(), 2);
    }
}
