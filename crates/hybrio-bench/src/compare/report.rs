//! `hybrio compare`'s reports: the markdown tables and the JSON document.

use std::fmt::Write as _;

use hybrio::engine::EngineKind;
use serde::Serialize;

use super::cell::Cell;
use super::figures::{
    ADAPTIVE, AdaptiveVersusStatic, Figures, Measured, Paths, adaptive_versus_static, best_static,
    versus_best,
};

/// Which columns a table has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// The default comparison's: figures and IOPS vs best.
    Default,
    /// `hybrio compare`'s: those, then p99 vs best, spread over the rounds and paths.
    Full,
}

fn or_dash(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// The markdown tables of measured figures: per cell, its heading and a row
/// per engine (`engines` are names: the adaptive engine is known by its name).
pub fn table(
    cells: &[Cell],
    engines: &[&'static str],
    results: &[Vec<Measured>],
    columns: Columns,
) -> String {
    let mut out = String::new();
    for (cell, row) in cells.iter().zip(results) {
        let _ = writeln!(out, "{}\n", cell.heading);
        match columns {
            Columns::Default => {
                let _ = writeln!(
                    out,
                    "| engine | IOPS | MiB/s | lat mean us | lat p50 us | lat p99 us | CPU us/IO thread | CPU us/IO all | IOPS vs best |"
                );
                let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
            }
            Columns::Full => {
                let _ = writeln!(
                    out,
                    "| engine | IOPS | MiB/s | lat mean us | p50 us | p99 us | CPU us/IO thread | CPU us/IO all | IOPS vs best | p99 vs best | spread | paths |"
                );
                let _ = writeln!(
                    out,
                    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
                );
            }
        }
        for (index, (engine, m)) in engines.iter().zip(row).enumerate() {
            let f = &m.median;
            let (iops_vs_best, p99_vs_best) = versus_best(row, index);
            let _ = write!(
                out,
                "| {engine} | {:.1}k | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                f.iops / 1000.0,
                f.bandwidth / f64::from(1 << 20),
                f.mean_us,
                f.p50_us,
                f.p99_us,
                f.cpu_us_per_io,
                f.process_cpu_us_per_io,
            );
            match columns {
                Columns::Default => {
                    let _ = writeln!(out, " {:.2} |", iops_vs_best.unwrap_or(0.0));
                }
                Columns::Full => {
                    let spread = m
                        .spread()
                        .map_or_else(|| "-".into(), |(lo, hi)| format!("{lo:.2}-{hi:.2}"));
                    let paths = m.total_paths().map(|p| p.summary()).unwrap_or_default();
                    let _ = writeln!(
                        out,
                        " {} | {} | {spread} | {paths} |",
                        or_dash(iops_vs_best),
                        or_dash(p99_vs_best),
                    );
                }
            }
        }
        if columns == Columns::Full
            && let Some(v) = adaptive_versus_static(engines, row)
        {
            let _ = writeln!(
                out,
                "\n{ADAPTIVE} vs best static ({}): IOPS {}, p99 {}, mean lat {}",
                v.engine,
                or_dash(v.iops),
                or_dash(v.p99),
                or_dash(v.lat_mean)
            );
        }
        out.push('\n');
    }
    out
}

#[derive(Serialize)]
struct JsonDocument<'a> {
    hybrio_version: &'static str,
    rounds: usize,
    engines: Vec<&'static str>,
    cells: Vec<JsonCell<'a>>,
}

#[derive(Serialize)]
struct JsonCell<'a> {
    name: &'a str,
    description: &'a str,
    jobs: Vec<&'a str>,
    best_static: Option<&'static str>,
    adaptive_vs_best_static: Option<AdaptiveVersusStatic>,
    results: Vec<JsonResult<'a>>,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    engine: &'static str,
    #[serde(flatten)]
    figures: Figures,
    iops_vs_best: Option<f64>,
    p99_vs_best: Option<f64>,
    samples: Vec<JsonSample<'a>>,
    paths: Option<Paths>,
}

#[derive(Serialize)]
struct JsonSample<'a> {
    #[serde(flatten)]
    figures: Figures,
    paths: Option<Paths>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeline: Option<&'a crate::stats::Timeline>,
}

/// The outcome of `hybrio compare`.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Rounds run.
    pub rounds: usize,
    /// The engines, in the order they ran.
    pub engines: Vec<EngineKind>,
    /// The cells.
    pub cells: Vec<Cell>,
    /// What each engine measured on each cell (`[cell][engine]`).
    pub results: Vec<Vec<Measured>>,
}

impl Comparison {
    /// The text report: a heading line and a markdown table per cell.
    pub fn text(&self) -> String {
        let mut text = format!(
            "hybrio {}: engines compared (median of {} alternating round{} per cell; spread: \
             lowest and highest round's IOPS over the median; paths: summed over the rounds)\n\n",
            env!("CARGO_PKG_VERSION"),
            self.rounds,
            if self.rounds == 1 { "" } else { "s" },
        );
        text.push_str(&table(
            &self.cells,
            &self.names(),
            &self.results,
            Columns::Full,
        ));
        text
    }

    fn names(&self) -> Vec<&'static str> {
        self.engines.iter().map(|e| e.name()).collect()
    }

    /// The JSON report, one document: `hybrio_version`, `rounds`, `engines`
    /// and per cell `name`, `description`, `jobs`, `best_static` (the best
    /// engine but the adaptive one), `adaptive_vs_best_static` (ratios, or
    /// null) and per engine the median figures, `iops_vs_best`,
    /// `p99_vs_best`, `samples` (each round's figures and paths) and `paths`
    /// (summed over the rounds; null for engines that do not report them).
    pub fn json(&self) -> String {
        let names = self.names();
        let cells = self
            .cells
            .iter()
            .zip(&self.results)
            .map(|(cell, row)| JsonCell {
                name: &cell.name,
                description: &cell.description,
                jobs: cell.jobs.iter().map(|j| j.options.name.as_str()).collect(),
                best_static: best_static(&names, row).map(|i| names[i]),
                adaptive_vs_best_static: adaptive_versus_static(&names, row),
                results: names
                    .iter()
                    .zip(row)
                    .enumerate()
                    .map(|(index, (engine, m))| {
                        let (iops_vs_best, p99_vs_best) = versus_best(row, index);
                        JsonResult {
                            engine,
                            figures: m.median,
                            iops_vs_best,
                            p99_vs_best,
                            samples: m
                                .samples
                                .iter()
                                .zip(&m.paths)
                                .enumerate()
                                .map(|(round, (figures, paths))| JsonSample {
                                    figures: *figures,
                                    paths: *paths,
                                    timeline: m.timelines.get(round).and_then(Option::as_ref),
                                })
                                .collect(),
                            paths: m.total_paths(),
                        }
                    })
                    .collect(),
            })
            .collect();
        let document = JsonDocument {
            hybrio_version: env!("CARGO_PKG_VERSION"),
            rounds: self.rounds,
            engines: names.clone(),
            cells,
        };
        let mut text = serde_json::to_string_pretty(&document)
            .expect("plain structs of numbers and strings serialize");
        text.push('\n');
        text
    }
}
