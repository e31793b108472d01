//! SVG charts drawn in Rust: a frame, two axes and series of points, for the
//! report page and for the charts embedded in the results (GitHub renders
//! SVG; no script is needed to read one).
//!
//! Every series is a `<g class="series" data-key=K data-points=N>` holding
//! N marks of class `pt` (a circle or a bar), each with a `<title>` that a
//! browser shows on hover; the page's legend hides and shows series by key,
//! and the tests count the marks against `data-points`.

use std::fmt::Write;

/// Size of a chart, in pixels.
pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 48.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// How values map onto an axis.
#[derive(Clone, Debug)]
pub enum Scale {
    /// From `min` to `max`, ticks at round steps.
    Linear { min: f64, max: f64 },
    /// Powers of ten from `lo` to `hi` (latencies in ns).
    LogNs { lo: f64, hi: f64 },
    /// A share in percent, spread as nines: 50% at 0.3, 99% at 2, 99.9%
    /// at 3, up to five nines, so the tail gets the room.
    Nines,
    /// Named bands, value `i` in the middle of band `i`.
    Bands(Vec<String>),
}

impl Scale {
    /// A linear scale from zero to a little above the largest of `values`.
    pub fn from_zero(values: impl Iterator<Item = f64>) -> Scale {
        let max = values.filter(|v| v.is_finite()).fold(0.0f64, f64::max);
        let step = nice_step(max / 5.0);
        Scale::Linear {
            min: 0.0,
            // The next round step at or above the largest value.
            max: if max > 0.0 {
                (max / step).ceil() * step * 1.0001
            } else {
                1.0
            },
        }
    }

    /// A latency scale around `values` (ns), powers of ten.
    pub fn latency(values: impl Iterator<Item = f64>) -> Scale {
        let (lo, hi) = values.fold((f64::MAX, 1.0f64), |(lo, hi), v| {
            (lo.min(v.max(1.0)), hi.max(v))
        });
        let lo = 10f64.powf(lo.min(hi).log10().floor());
        let hi = 10f64.powf(hi.log10().ceil()).max(lo * 10.0);
        Scale::LogNs { lo, hi }
    }

    /// Position of `value` between `from` and `to` (pixels).
    fn place(&self, value: f64, from: f64, to: f64) -> f64 {
        let share = match self {
            Scale::Linear { min, max } => (value - min) / (max - min).max(f64::MIN_POSITIVE),
            Scale::LogNs { lo, hi } => {
                (value.max(*lo).log10() - lo.log10()) / (hi.log10() - lo.log10())
            }
            Scale::Nines => nines(value) / 5.0,
            Scale::Bands(names) => (value + 0.5) / names.len().max(1) as f64,
        };
        from + share.clamp(0.0, 1.0) * (to - from)
    }

    /// The ticks: value and label.
    fn ticks(&self) -> Vec<(f64, String)> {
        match self {
            Scale::Linear { min, max } => {
                let step = nice_step((max - min) / 5.0);
                let mut tick = (min / step).ceil() * step;
                let mut ticks = Vec::new();
                while tick <= *max && ticks.len() < 12 {
                    ticks.push((tick, number(tick)));
                    tick += step;
                }
                ticks
            }
            Scale::LogNs { lo, hi } => {
                let mut ticks = Vec::new();
                let mut tick = *lo;
                while tick <= hi * 1.0001 {
                    ticks.push((tick, latency(tick)));
                    tick *= 10.0;
                }
                ticks
            }
            Scale::Nines => [50.0, 90.0, 99.0, 99.9, 99.99, 99.999]
                .into_iter()
                .map(|p| (p, format!("{p}%")))
                .collect(),
            Scale::Bands(names) => names
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64, n.clone()))
                .collect(),
        }
    }

    /// Width of one band, for bars (pixels over `span`).
    fn band(&self, span: f64) -> f64 {
        match self {
            Scale::Bands(names) => span / names.len().max(1) as f64,
            _ => 6.0,
        }
    }
}

/// Nines of a share in percent: 90% is one, 99% two.
fn nines(pct: f64) -> f64 {
    -(1.0 - pct / 100.0).max(1e-5).log10()
}

/// 1, 2 or 5 times a power of ten, at least `rough`.
fn nice_step(rough: f64) -> f64 {
    if rough <= 0.0 || !rough.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= rough)
        .unwrap_or(10.0 * power)
}

/// How a series draws its points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A line through dots.
    Line,
    /// A bar from the axis up to each point.
    Bars,
    /// Dots alone (each round of a comparison over its median's bar).
    Dots,
}

/// One point: where, and what hovering it says.
#[derive(Clone, Debug)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub tip: String,
}

/// A series of points, shown and hidden together by its key.
#[derive(Clone, Debug)]
pub struct Series {
    /// The legend's key (unique in the page).
    pub key: String,
    pub colour: &'static str,
    pub style: Style,
    pub points: Vec<Point>,
}

/// A chart's axes and text.
pub struct Chart<'a> {
    /// What it shows, in a sentence (a caption above, the SVG's description).
    pub caption: &'a str,
    pub x: Scale,
    pub y: Scale,
    pub x_title: &'a str,
    pub y_title: &'a str,
    /// Dashed horizontal lines with a label at the right (percentile marks).
    pub marks: &'a [(f64, &'a str)],
    /// A legend drawn in the picture (for SVG read without the page's).
    pub legend: &'a [(String, &'static str)],
    /// Width and height in pixels.
    pub size: (f64, f64),
}

/// The usual size of a chart on the page.
pub const SIZE: (f64, f64) = (WIDTH, HEIGHT);

/// Where, within band `i` of a [`Scale::Bands`], the `k`th of `n` bar
/// series is centred (in the scale's units).
pub fn in_band(i: usize, k: usize, n: usize) -> f64 {
    i as f64 - 0.35 + 0.7 / n.max(1) as f64 * (k as f64 + 0.5)
}

impl Chart<'_> {
    /// The chart as a `<figure>` holding an `<svg>`.
    pub fn draw(&self, series: &[Series]) -> String {
        format!(
            "<figure><figcaption>{}</figcaption>{}</figure>\n",
            escape(self.caption),
            self.svg(series)
        )
    }

    /// The chart as a standalone `<svg>` document, styled without the page.
    pub fn svg(&self, series: &[Series]) -> String {
        let (width, height) = self.size;
        let top = TOP + if self.legend.is_empty() { 0.0 } else { 16.0 };
        let (x0, x1, y0, y1) = (LEFT, width - RIGHT, height - BOTTOM, top);
        let mut svg = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
             viewBox=\"0 0 {width} {height}\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\
             <desc>{caption}</desc><style>{SVG_STYLE}</style>\
             <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
             <rect class=\"frame\" x=\"{x0}\" y=\"{y1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
            x1 - x0,
            y0 - y1,
            caption = escape(self.caption),
        );
        let mut at = x0;
        for (name, colour) in self.legend {
            let _ = write!(
                svg,
                "<rect x=\"{at:.1}\" y=\"4\" width=\"10\" height=\"10\" fill=\"{colour}\"/>\
                 <text x=\"{:.1}\" y=\"13\">{}</text>",
                at + 13.0,
                escape(name)
            );
            at += 13.0 + 7.0 * name.len() as f64 + 14.0;
        }
        for (value, label) in self.x.ticks() {
            let x = self.x.place(value, x0, x1);
            let _ = write!(
                svg,
                "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{y1}\" x2=\"{x:.1}\" y2=\"{y0}\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                y0 + 14.0,
                escape(&label)
            );
        }
        for (value, label) in self.y.ticks() {
            let y = self.y.place(value, y0, y1);
            let _ = write!(
                svg,
                "<line class=\"grid\" x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                x0 - 4.0,
                y + 4.0,
                escape(&label)
            );
        }
        for &(value, label) in self.marks {
            let y = self.y.place(value, y0, y1);
            let _ = write!(
                svg,
                "<line class=\"mark\" x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                x1 + 4.0,
                y + 4.0,
                escape(label)
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text transform=\"rotate(-90)\" x=\"{:.1}\" y=\"12\" text-anchor=\"middle\">{}</text>",
            (x0 + x1) / 2.0,
            height - 6.0,
            escape(self.x_title),
            -(y0 + y1) / 2.0,
            escape(self.y_title)
        );
        // Bar series share a band side by side when two of them have a bar
        // in one band; otherwise each bar is centred in its own.
        let bar_series: Vec<&Series> = series.iter().filter(|s| s.style == Style::Bars).collect();
        let grouped = matches!(self.x, Scale::Bands(_))
            && bar_series.iter().enumerate().any(|(i, a)| {
                bar_series[i + 1..].iter().any(|b| {
                    a.points
                        .iter()
                        .any(|p| b.points.iter().any(|q| (p.x - q.x).abs() < 0.5))
                })
            });
        let bars = if grouped { bar_series.len() } else { 1 };
        let band = self.x.band(x1 - x0);
        let mut nth_bars = 0;
        for s in series {
            let _ = write!(
                svg,
                "<g class=\"series\" data-key=\"{}\" data-points=\"{}\" fill=\"{}\">",
                escape(&s.key),
                s.points.len(),
                s.colour
            );
            let place = |p: &Point| (self.x.place(p.x, x0, x1), self.y.place(p.y, y0, y1));
            match s.style {
                Style::Line => {
                    let path: Vec<String> = s
                        .points
                        .iter()
                        .map(|p| {
                            let (x, y) = place(p);
                            format!("{x:.1},{y:.1}")
                        })
                        .collect();
                    let _ = write!(
                        svg,
                        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>",
                        s.colour,
                        path.join(" ")
                    );
                    for p in &s.points {
                        let (x, y) = place(p);
                        let _ = write!(
                            svg,
                            "<circle class=\"pt\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2.5\">\
                             <title>{}</title></circle>",
                            escape(&p.tip)
                        );
                    }
                }
                Style::Dots => {
                    for p in &s.points {
                        let (x, y) = place(p);
                        let _ = write!(
                            svg,
                            "<circle class=\"pt\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2.5\" fill=\"#222\" \
                             fill-opacity=\"0.7\"><title>{}</title></circle>",
                            escape(&p.tip)
                        );
                    }
                }
                Style::Bars => {
                    // Bars of several series share a band side by side.
                    let width = (band * 0.7 / bars as f64).max(1.5);
                    let offset = if grouped {
                        -band * 0.35 + width * nth_bars as f64
                    } else {
                        -width / 2.0
                    };
                    nth_bars += 1;
                    for p in &s.points {
                        let (x, y) = place(p);
                        let _ = write!(
                            svg,
                            "<rect class=\"pt\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" \
                             height=\"{:.1}\"><title>{}</title></rect>",
                            x + offset,
                            (y0 - y).max(0.0),
                            escape(&p.tip)
                        );
                    }
                }
            }
            svg.push_str("</g>");
        }
        svg.push_str("</svg>");
        svg
    }
}

/// The charts' own style, inside each SVG so that one read alone (an
/// image in markdown) looks as on the page.
const SVG_STYLE: &str = "text{fill:#444}.frame{fill:none;stroke:#999}.grid{stroke:#eee}\
.mark{stroke:#bbb;stroke-dasharray:3 3}";

/// A number with few digits: 12.3k, 4.56M.
pub fn number(value: f64) -> String {
    let a = value.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (value / 1e9, "G")
    } else if a >= 1e6 {
        (value / 1e6, "M")
    } else if a >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    let text = if scaled.abs() >= 100.0 {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    // 0.50 reads as 0.5, 2.00 as 2.
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text}{suffix}")
}

/// A latency in ns, in the unit that reads best.
pub fn latency(ns: f64) -> String {
    match ns {
        n if n >= 1e6 => format!("{}ms", trim(n / 1e6)),
        n if n >= 1e3 => format!("{}us", trim(n / 1e3)),
        n => format!("{}ns", trim(n)),
    }
}

fn trim(v: f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Text made safe for HTML and SVG.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A legend: a box per series key, showing or hiding it in every chart.
pub fn legend(page: &mut String, entries: &[(String, &str, &'static str)]) {
    let boxes: String = entries
        .iter()
        .map(|(key, name, colour)| {
            format!(
                "<label><input type=\"checkbox\" checked data-key=\"{}\"> \
                 <span style=\"color:{colour}\">{}</span></label> ",
                escape(key),
                escape(name)
            )
        })
        .collect();
    let _ = writeln!(page, "<p class=\"legend\">{boxes}</p>");
}

/// Each direction's colour, on every chart.
pub fn colour(dir: crate::stats::DataDir) -> &'static str {
    use crate::stats::DataDir;
    match dir {
        DataDir::Read => "#1f77b4",
        DataDir::Write => "#d62728",
        DataDir::Trim => "#2ca02c",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round_and_ticks_cover_the_range() {
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(130.0), 200.0);
        let ticks = Scale::from_zero([0.0, 730.0].into_iter()).ticks();
        assert_eq!(ticks.first().unwrap().0, 0.0);
        assert!(ticks.last().unwrap().0 >= 600.0);
        assert_eq!(number(12_345.0), "12.3k");
        assert_eq!(latency(1500.0), "1.5us");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(2_000_000.0), "2M");
    }

    #[test]
    fn every_point_is_a_mark_with_its_tip() {
        let chart = Chart {
            caption: "c <&>",
            x: Scale::Bands(vec!["a".into(), "b".into()]),
            y: Scale::from_zero([3.0].into_iter()),
            x_title: "x",
            y_title: "y",
            marks: &[],
            legend: &[],
            size: SIZE,
        };
        let series = Series {
            key: "k".into(),
            colour: "#000",
            style: Style::Bars,
            points: vec![
                Point {
                    x: 0.0,
                    y: 1.0,
                    tip: "one".into(),
                },
                Point {
                    x: 1.0,
                    y: 3.0,
                    tip: "three".into(),
                },
            ],
        };
        let svg = chart.draw(&[series]);
        assert_eq!(svg.matches("class=\"pt\"").count(), 2);
        assert!(svg.contains("data-points=\"2\"") && svg.contains("<title>three</title>"));
        assert!(svg.contains("c &lt;&amp;&gt;"));
    }
}
