//! The report files: `--out DIR` (report.md, report.json, report.csv, charts), and the
//! commands that read reports back without a GPU (`demo render`, `demo compare`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::engine::options::{Format, Options};
use crate::engine::report::Report;

/// Writes report.md, report.json, report.csv and charts/<pattern>-<table>.{svg,png} into
/// `dir`, each whole or not at all, and all of them without an interrupt in between.
pub(crate) fn write_report(dir: &Path, report: &Report) -> Result<usize> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        (dir.join("report.md"), report.markdown().into_bytes()),
        (
            dir.join("report.json"),
            serde_json::to_string_pretty(report)?.into_bytes(),
        ),
        (dir.join("report.csv"), report.csv()?.into_bytes()),
    ];
    for section in &report.sections {
        for chart in crate::engine::report::chart::charts(section)? {
            let stem = dir.join("charts").join(&chart.stem);
            files.push((stem.with_extension("svg"), chart.svg.into_bytes()));
            files.push((stem.with_extension("png"), chart.png));
        }
    }
    crate::engine::report::write_all_atomically(
        files.iter().map(|(p, b)| (p.as_path(), b.as_slice())),
    )?;
    Ok(files.len())
}

fn read_report(p: &Path) -> Result<Report> {
    let text =
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not a report.json written by demo", p.display()))
}

pub(crate) fn render(opts: &Options, path: &Path) -> Result<()> {
    let report = read_report(path)?;
    match opts.format {
        Format::Table => print!("{}", report.markdown()),
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Csv => print!("{}", report.csv()?),
    }
    if let Some(dir) = &opts.out {
        let files = write_report(dir, &report)?;
        eprintln!("wrote {} files to {}", files, dir.display());
    }
    Ok(())
}

pub(crate) fn compare(opts: &Options, old: &Path, new: &Path) -> Result<()> {
    let (old_report, new_report) = (read_report(old)?, read_report(new)?);
    let c = crate::engine::report::compare::compare(&old_report, &new_report);
    if c.changes.is_empty() {
        bail!(
            "{} and {} share no measurement (pattern, table, variant)",
            old.display(),
            new.display()
        );
    }
    let table = c.table(&old_report.device.name, &new_report.device.name);
    match opts.format {
        Format::Table => {
            println!("{}", table.title);
            println!("{}", table.markdown());
            if let Some(g) = c.geomean() {
                println!("geometric mean speedup: {g:.3}x");
            }
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(&c.changes)?),
        Format::Csv => {
            let mut w = csv::Writer::from_writer(std::io::stdout());
            for ch in &c.changes {
                w.serialize(ch)?;
            }
            w.flush()?;
        }
    }
    Ok(())
}
