//! One chart per charted table, as SVG and PNG (plotters): bars per variant against the
//! section's memcpy ceiling, or a line per series over a sweep (strides, offsets, transfer
//! sizes, block sizes, problem sizes) with the table's labelled reference lines (ceilings). Text is drawn with the DejaVu Sans font embedded in the binary, so PNGs
//! render the same on a machine without fonts.

use std::sync::Once;

use image::ImageEncoder;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{ChartKind, Section, Table};

static FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// A chart that could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart of table {table}: {reason}")]
pub struct ChartError {
    /// Table id.
    pub table: String,
    /// What the drawing library or the encoder said.
    pub reason: String,
}

/// A rendered chart.
pub struct Chart {
    /// File stem: `<pattern>-<table id>`.
    pub stem: String,
    /// The SVG document.
    pub svg: String,
    /// The PNG file.
    pub png: Vec<u8>,
}

/// Renders every charted table of `section` that has measurements.
///
/// # Errors
/// [`ChartError`] if drawing or PNG encoding fails.
pub fn charts(section: &Section) -> Result<Vec<Chart>, ChartError> {
    REGISTER.call_once(|| {
        // The embedded font parses; a failure would only leave text undrawn.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
    let ceiling = section.ceiling.map(|c| c.gbps);
    section
        .tables()
        .filter(|t| t.chart != ChartKind::None && !t.measurements.is_empty())
        .map(|t| render(&section.pattern, t, ceiling))
        .collect()
}

/// What a chart plots: the table's chosen extra figure, else bandwidth where every
/// measurement has one, else the median time.
struct Values {
    unit: String,
    ceiling: Option<f64>,
    pick: Box<dyn Fn(&super::Measurement) -> f64>,
}

fn values(table: &Table, ceiling: Option<f64>) -> Values {
    if let Some(name) = &table.chart_value {
        let key = name.clone();
        Values {
            unit: name.replace('_', " "),
            ceiling: None,
            pick: Box::new(move |m| m.extra.get(&key).copied().unwrap_or(0.0)),
        }
    } else if table.measurements.iter().all(|m| m.gbps.is_some()) {
        Values {
            unit: "GB/s (median)".into(),
            ceiling,
            pick: Box::new(|m| m.gbps.unwrap_or(0.0)),
        }
    } else {
        Values {
            unit: "median ms".into(),
            ceiling: None,
            pick: Box::new(|m| m.median_ms),
        }
    }
}

fn render(pattern: &str, table: &Table, ceiling: Option<f64>) -> Result<Chart, ChartError> {
    let err = |reason: String| ChartError {
        table: table.id.clone(),
        reason,
    };
    let size = match table.chart {
        ChartKind::Bars => (1100, (120 + 30 * table.measurements.len() as u32).max(260)),
        _ => (1100, 620),
    };
    let title = format!("{pattern}: {}", table.id);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(root, &title, table, ceiling).map_err(err)?;
    }
    let mut rgb = vec![0u8; (size.0 * size.1 * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw(root, &title, table, ceiling).map_err(err)?;
    }
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgb, size.0, size.1, image::ExtendedColorType::Rgb8)
        .map_err(|e| err(e.to_string()))?;
    Ok(Chart {
        stem: format!("{pattern}-{}", table.id),
        svg,
        png,
    })
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    table: &Table,
    ceiling: Option<f64>,
) -> Result<(), String> {
    let v = values(table, ceiling);
    match &table.chart {
        ChartKind::Sweep { x_label, log2_x } => sweep(&root, title, table, &v, x_label, *log2_x),
        _ => bars(&root, title, table, &v),
    }
    .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    table: &Table,
    v: &Values,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let ms = &table.measurements;
    let n = ms.len();
    let labels: Vec<String> = ms.iter().map(|m| m.key()).collect();
    let vals: Vec<f64> = ms.iter().map(|m| (v.pick)(m)).collect();
    let max = vals
        .iter()
        .copied()
        .fold(v.ceiling.unwrap_or(0.0), f64::max)
        .max(f64::MIN_POSITIVE)
        * 1.12;
    let label_px = (labels.iter().map(String::len).max().unwrap_or(8) as u32 * 7 + 16).min(520);
    // Row i of the table is drawn at the top: segment n - 1 - i.
    let at = |i: usize| n - 1 - i;
    let caption = match v.ceiling {
        Some(c) => format!("{title} (red line: device-to-device memcpy, {c:.0} GB/s)"),
        None => title.to_string(),
    };
    let mut chart = ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(label_px)
        // `a..b` segmented has a segment for every value of a..=b: n bars need 0..n - 1.
        .build_cartesian_2d(0f64..max, (0..n.saturating_sub(1)).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .y_labels(n)
        .y_label_formatter(&|s| match s {
            SegmentValue::CenterOf(k) if *k < n => labels[at(*k)].clone(),
            _ => String::new(),
        })
        .x_desc(&v.unit)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()?;
    chart.draw_series(ms.iter().zip(&vals).enumerate().map(|(i, (m, &val))| {
        let color = if m.passed {
            RGBColor(66, 110, 180)
        } else {
            RGBColor(200, 40, 40)
        };
        let mut bar = Rectangle::new(
            [
                (0.0, SegmentValue::Exact(at(i))),
                (val, SegmentValue::Exact(at(i) + 1)),
            ],
            color.filled(),
        );
        bar.set_margin(4, 4, 0, 0);
        bar
    }))?;
    // The ceiling under the labels, so a bar reaching it keeps its label readable.
    if let Some(c) = v.ceiling {
        chart.draw_series(LineSeries::new(
            [(c, SegmentValue::Exact(0)), (c, SegmentValue::Last)],
            RED.stroke_width(2),
        ))?;
    }
    chart.draw_series(vals.iter().enumerate().map(|(i, &val)| {
        let text = match &v.ceiling {
            Some(c) => format!(" {val:.0} ({:.0}%)", 100.0 * val / c),
            None => format!(" {}", short(val)),
        };
        Text::new(
            text,
            (val, SegmentValue::CenterOf(at(i))),
            TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
        )
    }))?;
    Ok(())
}

fn short(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

fn axis_value(x: f64, log2_x: bool, bytes: bool) -> String {
    if !log2_x {
        return if x.fract() == 0.0 {
            format!("{x:.0}")
        } else {
            short(x)
        };
    }
    if (x - x.round()).abs() > 1e-9 {
        return String::new();
    }
    let v = x.exp2();
    if bytes {
        let units = ["B", "KiB", "MiB", "GiB"];
        let mut v = v;
        let mut u = 0;
        while v >= 1024.0 && u + 1 < units.len() {
            v /= 1024.0;
            u += 1;
        }
        let v = if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            short(v)
        };
        format!("{v} {}", units[u])
    } else {
        format!("2^{x:.0}")
    }
}

/// The points of a sweep chart, one line per series (else variant) in the order the lines
/// first appear; x as log2 with `log2_x`.
fn sweep_lines(table: &Table, v: &Values, log2_x: bool) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for m in &table.measurements {
        let Some(x) = m.x else { continue };
        let x = if log2_x { x.max(1.0).log2() } else { x };
        let name = m.series.clone().unwrap_or_else(|| m.variant.clone());
        let point = (x, (v.pick)(m));
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some((_, points)) => points.push(point),
            None => lines.push((name, vec![point])),
        }
    }
    lines
}

fn sweep<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    table: &Table,
    v: &Values,
    x_label: &str,
    log2_x: bool,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let lines = sweep_lines(table, v, log2_x);
    let points = || lines.iter().flat_map(|(_, p)| p);
    // A ceiling far above every point (host transfers against the device's memcpy) would
    // flatten the lines: it is drawn only when the sweep reaches a fifth of it.
    let top = points().map(|p| p.1).fold(0.0, f64::max);
    let ceiling = v.ceiling.filter(|c| top >= 0.2 * c);
    let (lo, hi) = points().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
        (a.min(p.0), b.max(p.0))
    });
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let lines_top = table
        .reference_lines
        .iter()
        .map(|l| l.1)
        .fold(0.0, f64::max);
    let ymax = top
        .max(ceiling.unwrap_or(0.0))
        .max(lines_top)
        .max(f64::MIN_POSITIVE)
        * 1.12;
    let bytes = x_label.contains("bytes");
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .margin_right(48)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .build_cartesian_2d(lo..hi, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(&v.unit)
        .light_line_style(WHITE)
        .x_labels(if log2_x {
            ((hi - lo) as usize + 1).min(13)
        } else {
            10
        })
        .x_label_formatter(&|x| axis_value(*x, log2_x, bytes))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()?;
    for (k, (name, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let mut pts = pts.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
    }
    if let Some(c) = ceiling {
        chart
            .draw_series(DashedLineSeries::new(
                [(lo, c), (hi, c)],
                8,
                5,
                BLACK.stroke_width(1),
            ))?
            .label(format!("device-to-device memcpy: {c:.0} GB/s (dashed)"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(1)));
    }
    // The table's own reference lines (ceilings), dashed, in black and greys (the data lines
    // are coloured), labelled with their value.
    const GREYS: [RGBColor; 3] = [
        RGBColor(0, 0, 0),
        RGBColor(105, 105, 105),
        RGBColor(165, 165, 165),
    ];
    for (k, (label, value)) in table.reference_lines.iter().enumerate() {
        let color = GREYS[k % GREYS.len()];
        chart
            .draw_series(DashedLineSeries::new(
                [(lo, *value), (hi, *value)],
                8,
                5,
                color.stroke_width(2),
            ))?
            .label(format!("{label}: {value:.0} (dashed)"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 13))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{sample, timing};
    use super::super::{Block, CeilingRecord, Measurement};
    use super::*;

    #[test]
    fn bars_and_sweeps_render_to_svg_and_png() {
        let mut r = sample();
        let s = &mut r.sections[0];
        s.ceiling = Some(CeilingRecord {
            gbps: 300.0,
            ..Default::default()
        });
        let mut sweep = Table::new(
            "strides",
            "",
            ChartKind::Sweep {
                x_label: "transfer bytes".into(),
                log2_x: true,
            },
            ["x"],
        );
        for (i, series) in ["a", "b"].iter().enumerate() {
            for k in 10..14 {
                sweep.measured_row(
                    ["."],
                    Measurement::new("copy", &timing(1.0 + i as f64))
                        .bytes(1 << k, None)
                        .at(f64::from(1u32 << k))
                        .series(*series),
                );
            }
        }
        s.blocks.push(Block::Table(
            sweep.reference_line("read-only ceiling, GB/s", 250.0),
        ));
        let charts = charts(s).unwrap();
        assert_eq!(charts.len(), 2);
        assert_eq!(charts[0].stem, "copy-kernels");
        for c in &charts {
            assert!(c.svg.starts_with("<svg"), "{}", &c.svg[..40]);
            assert!(c.svg.contains("<text"));
            assert_eq!(&c.png[1..4], b"PNG");
        }
        assert!(charts[0].svg.contains("memcpy, 300 GB/s"));
        assert!(charts[1].svg.contains("KiB"));
        assert!(charts[1].svg.contains("read-only ceiling, GB/s: 250"));
    }
}
