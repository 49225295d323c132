//! Line charts as SVG, drawn by `plotters`: distinct states per depth, states per second and
//! memory over time. Every data point is also drawn as a dot, so a chart with one point still
//! shows it.

use plotters::prelude::*;

/// One chart: a title, axis descriptions and points (x ascending).
pub struct Chart<'a> {
    /// Caption above the chart.
    pub title: &'a str,
    /// What the x axis measures.
    pub x_label: &'a str,
    /// What the y axis measures.
    pub y_label: &'a str,
    /// The data.
    pub points: Vec<(f64, f64)>,
    /// Label the x axis with whole numbers (depths).
    pub integer_x: bool,
}

/// The chart as an SVG document (640 × 300), or `None` when there is nothing to draw (no
/// points) or the drawing failed.
pub fn chart_svg(chart: &Chart<'_>) -> Option<String> {
    if chart.points.is_empty() {
        return None;
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let (x0, x1) = bounds(chart.points.iter().map(|p| p.0));
        let (_, y1) = bounds(chart.points.iter().map(|p| p.1));
        let mut c = ChartBuilder::on(&root)
            .caption(chart.title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .ok()?;
        c.configure_mesh()
            .x_desc(chart.x_label)
            .y_desc(chart.y_label)
            .y_label_formatter(&|v| short(*v))
            .x_label_formatter(&|v| {
                if chart.integer_x {
                    format!("{v:.0}")
                } else {
                    format!("{v:.1}")
                }
            })
            .draw()
            .ok()?;
        let colour = RGBColor(31, 119, 180);
        c.draw_series(LineSeries::new(chart.points.iter().copied(), &colour))
            .ok()?;
        c.draw_series(
            chart
                .points
                .iter()
                .map(|&p| Circle::new(p, 3, colour.filled())),
        )
        .ok()?;
        root.present().ok()?;
    }
    Some(svg)
}

/// A range covering `values` with a margin, never empty.
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let span = (hi - lo).max(hi.abs() * 0.05).max(1e-9);
    (lo.min(0.0), hi + span * 0.08)
}

/// 1234567 → `1.2M`, for axis labels.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}
