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
    /// Draw each point as a bar from zero (a histogram over whole numbers) instead of a line
    /// through dots.
    pub bars: bool,
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
        // Whole numbers on an integer axis: no more labels than units, so they are whole.
        let (x_axis, x_labels) = if chart.integer_x {
            let units = ((x1 - x0).floor() as usize).max(1);
            let whole = Ticks {
                divisor: 1.0,
                suffix: "",
                decimals: 0,
            };
            (whole, LABELS.min(units))
        } else {
            (Ticks::new(x1 - x0, x1), LABELS)
        };
        let y_axis = Ticks::new(y1, y1);
        c.configure_mesh()
            .x_labels(x_labels)
            .y_labels(LABELS)
            .x_desc(chart.x_label)
            .y_desc(chart.y_label)
            .y_label_formatter(&|v| y_axis.label(*v))
            .x_label_formatter(&|v| x_axis.label(*v))
            .draw()
            .ok()?;
        let colour = RGBColor(31, 119, 180);
        if chart.bars {
            c.draw_series(
                chart
                    .points
                    .iter()
                    .map(|&(x, y)| Rectangle::new([(x - 0.4, 0.0), (x + 0.4, y)], colour.filled())),
            )
            .ok()?;
        } else {
            c.draw_series(LineSeries::new(chart.points.iter().copied(), &colour))
                .ok()?;
            c.draw_series(
                chart
                    .points
                    .iter()
                    .map(|&p| Circle::new(p, 3, colour.filled())),
            )
            .ok()?;
        }
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

/// At most this many labels per axis (plotters picks round values: 1, 2 or 5 times a power
/// of ten apart, so neighbouring labels differ by at least `span / LABELS`).
const LABELS: usize = 10;

/// How an axis writes its labels: one unit (none, k, M or G, chosen by the largest value)
/// and as many decimals as the spacing of the labels needs, so that no two labels read alike
/// (a time axis over 0.45 s reads `0.05 0.10 0.15 …`, not `0.0 0.1 0.1 0.2 …`).
struct Ticks {
    divisor: f64,
    suffix: &'static str,
    decimals: usize,
}

impl Ticks {
    /// Labels for an axis spanning `span` whose largest value is about `largest`.
    fn new(span: f64, largest: f64) -> Ticks {
        let a = largest.abs();
        let (divisor, suffix) = if a >= 1e9 {
            (1e9, "G")
        } else if a >= 1e6 {
            (1e6, "M")
        } else if a >= 1e3 {
            (1e3, "k")
        } else {
            (1.0, "")
        };
        // The smallest spacing plotters may choose, in the axis's unit.
        let step = span / LABELS as f64 / divisor;
        let decimals = if step.is_finite() && step > 0.0 && step < 1.0 {
            (-step.log10()).ceil().min(9.0) as usize
        } else {
            0
        };
        Ticks {
            divisor,
            suffix,
            decimals,
        }
    }

    /// The label of value `v`.
    fn label(&self, v: f64) -> String {
        format!("{:.*}{}", self.decimals, v / self.divisor, self.suffix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts of an SVG's `<text>` elements.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.to_string()))
            .collect()
    }

    fn labels_are_distinct(points: Vec<(f64, f64)>, integer_x: bool) {
        let chart = Chart {
            title: "title",
            x_label: "x axis",
            y_label: "y axis",
            points,
            integer_x,
            bars: false,
        };
        let svg = chart_svg(&chart).expect("a chart");
        let labels = texts(&svg);
        assert!(labels.len() > 6, "too few labels: {labels:?}");
        let mut seen = std::collections::HashSet::new();
        for l in &labels {
            assert!(seen.insert(l), "label {l:?} twice in {labels:?}");
        }
    }

    #[test]
    fn no_two_labels_of_an_axis_read_alike() {
        // The quick report's time axis (0.45 s) and memory (MiB) of a short run.
        labels_are_distinct(vec![(0.0, 0.0), (0.2, 310.0), (0.45, 1_210.0)], false);
        // States per second in the millions, over a few seconds.
        labels_are_distinct(vec![(0.0, 1.1e6), (1.0, 1.25e6), (3.2, 1.3e6)], false);
        // Distinct states per depth.
        labels_are_distinct(
            (0..=23).map(|d| (d as f64, (d * d) as f64 * 1e5)).collect(),
            true,
        );
        // Long runs.
        labels_are_distinct(vec![(0.0, 5.0), (1_500.0, 2.5e9)], false);
    }

    #[test]
    fn a_label_has_the_unit_of_the_largest_value_and_the_decimals_its_spacing_needs() {
        assert_eq!(Ticks::new(0.45, 0.45).label(0.05), "0.05");
        assert_eq!(Ticks::new(20.0, 20.0).label(4.0), "4");
        assert_eq!(Ticks::new(1.3e6, 1.3e6).label(2e5), "0.2M");
        assert_eq!(Ticks::new(2e5, 1.3e6).label(1.22e6), "1.22M");
        assert_eq!(Ticks::new(3e9, 3e9).label(2.5e9), "2.5G");
    }
}
