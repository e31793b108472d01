//! `hybrio compare`'s pictures, drawn from its JSON document (the same for
//! `hybrio compare --output-format=html` and `hybrio report compare.json`):
//! per cell the engines side by side, each round's value over its median
//! (so the spread shows) and the ratio to the best; CPU per I/O; and the
//! adaptive engine's inline share and switches over time, each round a line.
//! [`results_svg`] draws a whole document as one SVG for the results'
//! markdown.

use std::fmt::Write;

use serde_json::Value;

use super::adaptive::inline_share;
use super::chart::{self, Chart, Point, Scale, Series, Style, escape, in_band, legend};
use crate::stats::Timeline;

/// Whether `doc` is a `hybrio compare` document.
pub fn is_comparison(doc: &Value) -> bool {
    doc["cells"].is_array() && doc["engines"].is_array()
}

/// A colour per engine, in the document's order.
fn colour(index: usize) -> &'static str {
    const PALETTE: [&str; 8] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    ];
    PALETTE[index % PALETTE.len()]
}

fn engines(doc: &Value) -> Vec<String> {
    doc["engines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect()
}

/// A figure of each engine of a cell: its median and each round's value.
struct Figure {
    /// `hybrio report --svg --figure=` names it so.
    name: &'static str,
    /// The page's chart title.
    title: &'static str,
    /// The results chart's title.
    short: &'static str,
    field: &'static str,
    unit: &'static str,
    /// Higher is better (IOPS) or lower is (latency, CPU).
    higher_better: bool,
    /// Drawn for each cell on the page.
    on_page: bool,
    /// Drawn by `hybrio report --svg --figure=NAME`.
    in_svg: bool,
}

const FIGURES: [Figure; 4] = [
    Figure {
        name: "iops",
        title: "IOPS",
        short: "IOPS",
        field: "iops",
        unit: "IOPS",
        higher_better: true,
        on_page: true,
        in_svg: true,
    },
    Figure {
        name: "p99",
        title: "Completion latency p99",
        short: "p99 latency",
        field: "lat_p99_us",
        unit: "us",
        higher_better: false,
        on_page: true,
        in_svg: true,
    },
    Figure {
        name: "cpu",
        title: "CPU time per I/O, the job's threads",
        short: "CPU time per I/O",
        field: "cpu_us_per_io_thread",
        unit: "us",
        higher_better: false,
        on_page: true,
        in_svg: false,
    },
    Figure {
        name: "mean",
        title: "Mean completion latency",
        short: "mean latency",
        field: "lat_mean_us",
        unit: "us",
        higher_better: false,
        on_page: false,
        in_svg: true,
    },
];

/// The page's section for one comparison document.
pub fn section(name: &str, doc: &Value, document: usize) -> String {
    let names = engines(doc);
    let mut out = format!(
        "<section class=\"compare\"><h2>{} <small>(hybrio compare, median of {} alternating round{})</small></h2>\n",
        escape(name),
        doc["rounds"],
        if doc["rounds"].as_u64() == Some(1) {
            ""
        } else {
            "s"
        }
    );
    for (c, cell) in doc["cells"].as_array().into_iter().flatten().enumerate() {
        let key = |e: usize| format!("cmp{document}-{c}-{e}");
        let _ = writeln!(
            out,
            "<h3>{} <small>({})</small></h3>",
            escape(cell["name"].as_str().unwrap_or("cell")),
            escape(cell["description"].as_str().unwrap_or(""))
        );
        let results: Vec<&Value> = cell["results"].as_array().into_iter().flatten().collect();
        out.push_str(
            "<table><tr><th>engine</th><th>IOPS</th><th>IOPS vs best</th><th>p99 us</th>\
             <th>p99 vs best</th><th>CPU us/IO</th><th>rounds' IOPS</th><th>paths</th></tr>\n",
        );
        for r in &results {
            let rounds: Vec<String> = samples(r)
                .map(|s| chart::number(s["iops"].as_f64().unwrap_or(0.0)))
                .collect();
            let paths = &r["paths"];
            let paths = if paths.is_object() {
                format!(
                    "{} inline, {} async, {} switches",
                    paths["inline"], paths["async"], paths["switches"]
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td></tr>",
                escape(r["engine"].as_str().unwrap_or("")),
                chart::number(r["iops"].as_f64().unwrap_or(0.0)),
                ratio(&r["iops_vs_best"]),
                r["lat_p99_us"].as_f64().unwrap_or(0.0),
                ratio(&r["p99_vs_best"]),
                r["cpu_us_per_io_thread"].as_f64().unwrap_or(0.0),
                rounds.join(" "),
                escape(&paths)
            );
        }
        out.push_str("</table>\n");
        if let Some(v) = cell["adaptive_vs_best_static"].as_object() {
            let _ = writeln!(
                out,
                "<p>adaptive against the best fixed engine ({}): IOPS {}, p99 {}</p>",
                escape(v.get("engine").and_then(|e| e.as_str()).unwrap_or("")),
                ratio(v.get("iops").unwrap_or(&Value::Null)),
                ratio(v.get("p99").unwrap_or(&Value::Null))
            );
        }
        let entries: Vec<(String, &str, &'static str)> = results
            .iter()
            .filter_map(|r| {
                let e = names
                    .iter()
                    .position(|n| Some(n.as_str()) == r["engine"].as_str())?;
                Some((key(e), names[e].as_str(), colour(e)))
            })
            .collect();
        legend(&mut out, &entries);
        for figure in FIGURES.iter().filter(|f| f.on_page) {
            out.push_str(&figure_chart(&names, &results, figure, &key).draw_figure());
        }
        for r in &results {
            if let Some(chart) = adaptive_rounds(r, &format!("cmp{document}-{c}")) {
                out.push_str(&chart);
            }
        }
    }
    out.push_str("</section>\n");
    out
}

fn samples(result: &Value) -> impl Iterator<Item = &Value> {
    result["samples"].as_array().into_iter().flatten()
}

fn ratio(value: &Value) -> String {
    value
        .as_f64()
        .map_or_else(|| "-".into(), |v| format!("{v:.2}x"))
}

/// A chart and its series, drawn on demand.
struct Drawn {
    caption: String,
    x: Scale,
    y: Scale,
    y_title: String,
    series: Vec<Series>,
}

impl Drawn {
    fn draw_figure(&self) -> String {
        Chart {
            caption: &self.caption,
            x: self.x.clone(),
            y: self.y.clone(),
            x_title: "engine",
            y_title: &self.y_title,
            marks: &[],
            legend: &[],
            size: chart::SIZE,
        }
        .draw(&self.series)
    }
}

/// One figure of every engine of a cell: a bar at the median, a dot per round.
fn figure_chart(
    names: &[String],
    results: &[&Value],
    figure: &Figure,
    key: &dyn Fn(usize) -> String,
) -> Drawn {
    let best = results
        .iter()
        .filter_map(|r| r[figure.field].as_f64())
        .filter(|v| *v > 0.0)
        .fold(None, |best: Option<f64>, v| {
            Some(best.map_or(v, |b| {
                if figure.higher_better {
                    b.max(v)
                } else {
                    b.min(v)
                }
            }))
        });
    let mut series = Vec::new();
    let mut all = Vec::new();
    for (band, r) in results.iter().enumerate() {
        let engine = r["engine"].as_str().unwrap_or("");
        let e = names.iter().position(|n| n == engine).unwrap_or(band);
        let median = r[figure.field].as_f64().unwrap_or(0.0);
        let versus = best
            .filter(|b| *b > 0.0)
            .map(|b| format!(", {:.2}x the best", median / b))
            .unwrap_or_default();
        all.push(median);
        series.push(Series {
            key: key(e),
            colour: colour(e),
            style: Style::Bars,
            points: vec![Point {
                x: band as f64,
                y: median,
                tip: format!(
                    "{engine}: {} {} (median){versus}",
                    chart::number(median),
                    figure.unit
                ),
            }],
        });
        let rounds: Vec<Point> = samples(r)
            .enumerate()
            .filter_map(|(i, s)| {
                let v = s[figure.field].as_f64()?;
                all.push(v);
                Some(Point {
                    x: band as f64,
                    y: v,
                    tip: format!(
                        "{engine} round {}: {} {}",
                        i + 1,
                        chart::number(v),
                        figure.unit
                    ),
                })
            })
            .collect();
        series.push(Series {
            key: key(e),
            colour: colour(e),
            style: Style::Dots,
            points: rounds,
        });
    }
    Drawn {
        caption: format!(
            "{}: each engine's median (bar) and each round (dot); {} is better",
            figure.title,
            if figure.higher_better {
                "higher"
            } else {
                "lower"
            }
        ),
        x: Scale::Bands(
            results
                .iter()
                .map(|r| r["engine"].as_str().unwrap_or("").to_string())
                .collect(),
        ),
        y: Scale::from_zero(all.into_iter()),
        y_title: figure.unit.to_string(),
        series,
    }
}

/// The adaptive engine's inline share over time, a line per round, and its
/// switches, from the timelines `hybrio compare` keeps for engines that
/// report their paths.
fn adaptive_rounds(result: &Value, prefix: &str) -> Option<String> {
    let engine = result["engine"].as_str().unwrap_or("");
    let mut series = Vec::new();
    let mut switched = Vec::new();
    for (round, sample) in samples(result).enumerate() {
        let Ok(timeline) = serde_json::from_value::<Timeline>(sample["timeline"].clone()) else {
            continue;
        };
        let (inline, switches) = inline_share(&timeline);
        if inline.is_empty() {
            continue;
        }
        series.push(Series {
            key: format!("{prefix}-round{}", round + 1),
            colour: colour(round),
            style: Style::Line,
            points: inline,
        });
        if !switches.is_empty() {
            switched.push(Series {
                key: format!("{prefix}-round{}", round + 1),
                colour: colour(round),
                style: Style::Bars,
                points: switches,
            });
        }
    }
    if series.is_empty() {
        return None;
    }
    // The lines first, then the switches' bars.
    series.append(&mut switched);
    let x = Scale::from_zero(series.iter().flat_map(|s| s.points.iter().map(|p| p.x)));
    let caption = format!(
        "The {engine} engine over time, each round a colour: the share of requests done inline per window; a bar where a class of requests switched its choice"
    );
    let mut out = String::new();
    let rounds: Vec<(String, String, &'static str)> = series
        .iter()
        .filter(|s| s.style == Style::Line)
        .enumerate()
        .map(|(i, s)| (s.key.clone(), format!("round {}", i + 1), s.colour))
        .collect();
    let entries: Vec<(String, &str, &'static str)> = rounds
        .iter()
        .map(|(k, n, c)| (k.clone(), n.as_str(), *c))
        .collect();
    legend(&mut out, &entries);
    out.push_str(
        &Chart {
            caption: &caption,
            x,
            y: Scale::Linear {
                min: 0.0,
                max: 100.0,
            },
            x_title: "time, s",
            y_title: "inline, %",
            marks: &[],
            legend: &[],
            size: chart::SIZE,
        }
        .draw(&series),
    );
    Some(out)
}

/// A whole comparison as one SVG: per cell, each engine's median of
/// `figure` (iops, p99 or mean: [`FIGURES`]) as a bar against the cell's best
/// engine's (so cells of any size share the axis), each round a dot; the
/// legend in the picture. For the results' markdown.
pub fn results_svg(doc: &Value, figure: &str) -> Result<String, String> {
    if !is_comparison(doc) {
        return Err("not a hybrio compare document (no \"cells\" and \"engines\")".into());
    }
    let Some(figure) = FIGURES.iter().find(|f| f.in_svg && f.name == figure) else {
        return Err(format!(
            "unknown figure '{figure}' (allowed: iops, p99, mean)"
        ));
    };
    let field = figure.field;
    let names = engines(doc);
    let cells: Vec<&Value> = doc["cells"].as_array().into_iter().flatten().collect();
    let mut series: Vec<Series> = Vec::new();
    let mut all = Vec::new();
    for (e, engine) in names.iter().enumerate() {
        let mut bars = Vec::new();
        let mut dots = Vec::new();
        for (c, cell) in cells.iter().enumerate() {
            let results: Vec<&Value> = cell["results"].as_array().into_iter().flatten().collect();
            let values = results
                .iter()
                .filter_map(|r| r[field].as_f64())
                .filter(|v| *v > 0.0);
            let best = if figure.higher_better {
                values.fold(0.0f64, f64::max)
            } else {
                values.fold(f64::INFINITY, f64::min)
            };
            let Some(r) = results
                .iter()
                .find(|r| r["engine"].as_str() == Some(engine))
            else {
                continue;
            };
            if !(best > 0.0 && best.is_finite()) {
                continue;
            }
            let x = in_band(c, e, names.len());
            let median = r[field].as_f64().unwrap_or(0.0) / best;
            all.push(median);
            let cell_name = cell["name"].as_str().unwrap_or("");
            bars.push(Point {
                x: c as f64,
                y: median,
                tip: format!(
                    "{cell_name}, {engine}: {median:.2}x the best engine's {}",
                    figure.short
                ),
            });
            for (round, s) in samples(r).enumerate() {
                if let Some(v) = s[field].as_f64() {
                    all.push(v / best);
                    dots.push(Point {
                        x,
                        y: v / best,
                        tip: format!(
                            "{cell_name}, {engine}, round {}: {:.2}x",
                            round + 1,
                            v / best
                        ),
                    });
                }
            }
        }
        series.push(Series {
            key: engine.clone(),
            colour: colour(e),
            style: Style::Bars,
            points: bars,
        });
        series.push(Series {
            key: format!("{engine}-rounds"),
            colour: colour(e),
            style: Style::Dots,
            points: dots,
        });
    }
    let legend: Vec<(String, &'static str)> = names
        .iter()
        .enumerate()
        .map(|(e, n)| (n.clone(), colour(e)))
        .collect();
    let width = (160.0 + cells.len() as f64 * (names.len() as f64 * 16.0 + 24.0)).max(560.0);
    let caption = format!(
        "{} of each engine against the best engine of its cell ({} is better): the median of the rounds (bar) and each round (dot)",
        figure.short,
        if figure.higher_better {
            "higher"
        } else {
            "lower"
        }
    );
    let y_title = format!("{} / best engine's", figure.short);
    Ok(Chart {
        caption: &caption,
        x: Scale::Bands(
            cells
                .iter()
                .map(|c| c["name"].as_str().unwrap_or("").to_string())
                .collect(),
        ),
        y: Scale::from_zero(all.into_iter().chain([1.0])),
        x_title: "cell (reporting group of the job file)",
        y_title: &y_title,
        marks: &[(1.0, "best")],
        legend: &legend,
        size: (width, 300.0),
    }
    .svg(&series)
        + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        serde_json::from_str(
            r#"{
            "hybrio_version": "0.1.0", "rounds": 2, "engines": ["psync", "adaptive"],
            "cells": [{
                "name": "c1", "description": "randread", "jobs": ["c1"],
                "best_static": "psync",
                "adaptive_vs_best_static": {"engine": "psync", "iops": 1.1, "p99": 0.9, "lat_mean": 0.9},
                "results": [
                    {"engine": "psync", "iops": 100.0, "lat_p99_us": 10.0, "cpu_us_per_io_thread": 2.0,
                     "iops_vs_best": 0.9, "p99_vs_best": 1.1,
                     "samples": [{"iops": 90.0, "lat_p99_us": 11.0, "cpu_us_per_io_thread": 2.1},
                                 {"iops": 110.0, "lat_p99_us": 9.0, "cpu_us_per_io_thread": 1.9}]},
                    {"engine": "adaptive", "iops": 110.0, "lat_p99_us": 9.0, "cpu_us_per_io_thread": 1.5,
                     "iops_vs_best": 1.0, "p99_vs_best": 1.0,
                     "paths": {"inline": 10, "async": 5, "switches": 1},
                     "samples": [{"iops": 110.0, "lat_p99_us": 9.0, "cpu_us_per_io_thread": 1.5,
                                  "timeline": {"interval_ms": 500, "points": [
                                      {"t_ms": 500, "ios": [10, 0, 0], "bytes": [0, 0, 0],
                                       "clat_count": [0, 0, 0], "clat_sum_ns": [0, 0, 0],
                                       "paths": {"inline": 8, "async": 2, "switches": 0}},
                                      {"t_ms": 1000, "ios": [5, 0, 0], "bytes": [0, 0, 0],
                                       "clat_count": [0, 0, 0], "clat_sum_ns": [0, 0, 0],
                                       "paths": {"inline": 10, "async": 5, "switches": 1}}]}},
                                 {"iops": 105.0, "lat_p99_us": 9.5, "cpu_us_per_io_thread": 1.6}]}
                ]
            }]
        }"#,
        )
        .unwrap()
    }

    #[test]
    fn a_cell_shows_every_round_and_the_adaptive_engine_over_time() {
        let page = section("cmp.json", &doc(), 0);
        // Per figure: a median bar and two round dots per engine.
        assert_eq!(page.matches("data-points=\"2\"").count(), 3 * 2 + 1);
        assert!(page.contains("0.90x"));
        // Round 1's timeline: two windows of inline share (80%, then 40%)
        // and one switch; round 2 has none.
        assert!(page.contains("80.0% inline") && page.contains("40.0% inline"));
        assert!(page.contains("1 switch<"));
    }

    #[test]
    fn the_results_chart_is_relative_to_each_cells_best() {
        let svg = results_svg(&doc(), "iops").unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<style>"));
        assert!(svg.contains("c1, psync: 0.91x"));
        assert!(svg.contains("c1, adaptive, round 2: 0.95x"));
        assert!(results_svg(&serde_json::json!({"jobs": []}), "iops").is_err());
        assert!(results_svg(&doc(), "bogus").is_err());
        // Lower is better: psync's p99 (10) against adaptive's (9).
        let svg = results_svg(&doc(), "p99").unwrap();
        assert!(svg.contains("c1, psync: 1.11x the best engine's p99 latency"));
    }
}
