//! Engines side by side: the default comparison (`hybrio` with no arguments)
//! and `hybrio compare` on the user's own jobs.
//!
//! Both run each cell (a reporting group of jobs) once per engine, cells and
//! engines in alternation (cell A on engine 1, 2, 3, cell B on engine 1, 2, 3,
//! then again) so that a change in what else the machine is doing hits every
//! engine alike; each figure is the median over the rounds.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use hybrio::engine::EngineKind;
use serde::Serialize;

use crate::jobfile::JobDef;
use crate::options::{JobOptions, RwMode};
use crate::output::RunReport;
use crate::run::{self, RunFailure};
use crate::stats::{DataDir, DirStats, JobStats};

/// The engine `hybrio compare` sets against the best static one; known by
/// name so that this code does not depend on when it joins [`EngineKind`].
pub const ADAPTIVE: &str = "adaptive";

/// One cell of a comparison: jobs that run together, once per engine.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The first job's name.
    pub name: String,
    /// What the jobs do, in a few words.
    pub description: String,
    /// The line above the cell's table.
    pub heading: String,
    /// The jobs (engine replaced per run).
    pub jobs: Vec<JobDef>,
    /// Read the jobs' files through the page cache before each run: the
    /// machine's DAMON pageout evicts cold page cache between runs, so a
    /// cached-read cell would otherwise measure whatever the last run left.
    pub warm_cache: bool,
}

impl Cell {
    /// A cell of `jobs` (not empty), headed by the first job's name and a description.
    pub fn new(jobs: Vec<JobDef>) -> Cell {
        let name = jobs
            .first()
            .map_or_else(String::new, |j| j.options.name.clone());
        let description = describe(&jobs);
        Cell {
            heading: format!("{name}: {description}"),
            warm_cache: jobs.iter().any(|j| reads_from_cache(&j.options)),
            name,
            description,
            jobs,
        }
    }
}

/// Buffered reads that keep the page cache: they measure the cache, which
/// must hold the file before the run.
fn reads_from_cache(options: &JobOptions) -> bool {
    options.rw.reads() && !options.direct && !options.invalidate
}

/// Splits jobs into cells as a run splits them into reporting groups: a job
/// with `stonewall` or `new_group` starts a new one.
pub fn cells(jobs: &[JobDef]) -> Vec<Cell> {
    let mut groups: Vec<Vec<JobDef>> = Vec::new();
    for (index, job) in jobs.iter().enumerate() {
        if index == 0 || job.options.stonewall || job.options.new_group {
            groups.push(Vec::new());
        }
        if let Some(group) = groups.last_mut() {
            group.push(job.clone());
        }
    }
    groups.into_iter().map(Cell::new).collect()
}

/// A short description of a cell's jobs: pattern, block size, depth, clones,
/// direct or buffered, and the options that change what every engine faces.
pub fn describe(jobs: &[JobDef]) -> String {
    let mut each: Vec<String> = jobs.iter().map(|j| describe_job(&j.options)).collect();
    each.dedup();
    let text = each.join("; ");
    if jobs.len() > 1 {
        format!("{} jobs: {text}", jobs.len())
    } else {
        text
    }
}

fn describe_job(o: &JobOptions) -> String {
    let mut parts = vec![o.rw.name().to_string()];
    if o.rw.reads() && o.rw.writes() {
        parts.push(format!("rwmixread={}", o.rwmixread));
    }
    parts.push(match (o.rw.reads(), o.rw.writes()) {
        (true, true) if o.block_range(0) != o.block_range(1) => {
            format!("bs={},{}", block_sizes(o, 0), block_sizes(o, 1))
        }
        (false, true) => format!("bs={}", block_sizes(o, 1)),
        _ => format!("bs={}", block_sizes(o, 0)),
    });
    parts.push(format!("iodepth={}", o.iodepth));
    parts.push(format!("numjobs={}", o.numjobs));
    parts.push(if o.direct { "direct" } else { "buffered" }.to_string());
    if !o.direct && !o.invalidate && o.rw.reads() {
        parts.push("invalidate=0".into());
    }
    if o.fsync > 0 {
        parts.push(format!("fsync={}", o.fsync));
    }
    if o.fdatasync > 0 {
        parts.push(format!("fdatasync={}", o.fdatasync));
    }
    if let Some(latency) = o.completion_latency {
        parts.push(format!("completion_latency={}", short_duration(latency)));
    }
    if let Some(plan) = &o.inject {
        parts.push(format!("inject={plan}"));
    }
    parts.join(", ")
}

/// One direction's block size, or its range (a `bssplit` shows as the range
/// of its sizes).
fn block_sizes(o: &JobOptions, dir: usize) -> String {
    match o.block_range(dir) {
        (min, max) if min == max => short_size(min),
        (min, max) => format!("{}-{}", short_size(min), short_size(max)),
    }
}

fn short_size(bytes: u64) -> String {
    match bytes {
        0 => "0".into(),
        b if b.is_multiple_of(1 << 30) => format!("{}g", b >> 30),
        b if b.is_multiple_of(1 << 20) => format!("{}m", b >> 20),
        b if b.is_multiple_of(1 << 10) => format!("{}k", b >> 10),
        b => b.to_string(),
    }
}

fn short_duration(d: Duration) -> String {
    match d.as_nanos() {
        n if n > 0 && n.is_multiple_of(1_000_000_000) => format!("{}s", n / 1_000_000_000),
        n if n > 0 && n.is_multiple_of(1_000_000) => format!("{}ms", n / 1_000_000),
        n if n > 0 && n.is_multiple_of(1_000) => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// What one run of a cell measured.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Figures {
    /// I/Os per second (reads + writes), summed over the cell's jobs.
    pub iops: f64,
    /// Bytes per second, summed over the cell's jobs.
    #[serde(rename = "bw_bytes")]
    pub bandwidth: f64,
    /// Mean total latency (submission + completion), microseconds, weighted by I/O count.
    #[serde(rename = "lat_mean_us")]
    pub mean_us: f64,
    /// Median total latency, microseconds, from the jobs' merged histograms.
    #[serde(rename = "lat_p50_us")]
    pub p50_us: f64,
    /// 99th percentile of total latency, microseconds, from the merged histograms.
    #[serde(rename = "lat_p99_us")]
    pub p99_us: f64,
    /// CPU time of the job threads per I/O, microseconds.
    #[serde(rename = "cpu_us_per_io_thread")]
    pub cpu_us_per_io: f64,
    /// CPU time of the whole process per I/O, microseconds: worker pools and
    /// io_uring's io-wq workers included.
    #[serde(rename = "cpu_us_per_io_all")]
    pub process_cpu_us_per_io: f64,
}

fn data_dirs(stats: &JobStats) -> [&DirStats; 2] {
    [stats.dir(DataDir::Read), stats.dir(DataDir::Write)]
}

impl Figures {
    /// Reads the figures of one finished job; `process_cpu_ns` is the CPU
    /// time the whole process used while it ran.
    pub fn of(stats: &JobStats, process_cpu_ns: u64) -> Figures {
        Figures::of_jobs(&[stats], process_cpu_ns)
    }

    /// The figures of jobs that ran together, as one: rates summed over the
    /// jobs, latencies from their merged statistics, CPU summed over I/Os
    /// summed; `process_cpu_ns` is the CPU time the whole process used.
    pub fn of_jobs(jobs: &[&JobStats], process_cpu_ns: u64) -> Figures {
        let Some((first, rest)) = jobs.split_first() else {
            return Figures::default();
        };
        let mut merged = (*first).clone();
        for stats in rest {
            merged.merge(stats);
        }
        // Rates per job, then summed: the merged runtime is the longest job's,
        // which would undercount jobs that finished early. Each over the
        // job's runtime to the microsecond: fio's whole milliseconds are most
        // of a short job (a thousand page-cache hits take 1 ms on every engine).
        let rate = |stats: &JobStats, amount: fn(&DirStats) -> u64| -> f64 {
            let seconds = stats.job_runtime_us() as f64 / 1e6;
            let total: u64 = data_dirs(stats).iter().map(|d| amount(d)).sum();
            if seconds > 0.0 {
                total as f64 / seconds
            } else {
                0.0
            }
        };
        let iops: f64 = jobs.iter().map(|s| rate(s, DirStats::total_ios)).sum();
        let bandwidth: f64 = jobs.iter().map(|s| rate(s, DirStats::io_bytes)).sum();
        let dirs = data_dirs(&merged);
        let ios: u64 = dirs.iter().map(|d| d.total_ios()).sum();
        let weighted_mean = dirs
            .iter()
            .map(|d| d.lat().mean() * d.total_ios() as f64)
            .sum::<f64>()
            / ios.max(1) as f64;
        // The direction with the most I/Os speaks for the latency distribution.
        let main = if dirs[1].total_ios() > dirs[0].total_ios() {
            dirs[1]
        } else {
            dirs[0]
        };
        let hist = main.lat_hist().unwrap_or_else(|| main.clat_hist());
        let percentiles = hist.percentiles(&[50.0, 99.0]);
        let cpu = merged.cpu();
        Figures {
            iops,
            bandwidth,
            mean_us: weighted_mean / 1000.0,
            p50_us: percentiles.first().map_or(0.0, |p| p.1 as f64 / 1000.0),
            p99_us: percentiles.get(1).map_or(0.0, |p| p.1 as f64 / 1000.0),
            cpu_us_per_io: (cpu.usr_ns + cpu.sys_ns) as f64 / 1000.0 / ios.max(1) as f64,
            process_cpu_us_per_io: process_cpu_ns as f64 / 1000.0 / ios.max(1) as f64,
        }
    }
}

/// Which way an engine that chooses per request sent its requests (the
/// adaptive engine's `paths` in the report's per-job objects).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Paths {
    /// Requests run inline, on the submitting thread.
    pub inline: u64,
    /// Requests handed to the asynchronous path.
    #[serde(rename = "async")]
    pub asynchronous: u64,
    /// Of all requests, those sent against their class's choice to keep the
    /// other path's price current.
    pub explored: u64,
    /// Times the engine changed path.
    pub switches: u64,
}

impl Paths {
    /// The sum of the `paths` objects of the run's jobs; `None` when no job has
    /// one (every engine but the adaptive one).
    pub fn of_report(report: &RunReport) -> Option<Paths> {
        Paths::of_extra(report.extra.as_ref()?)
    }

    /// As [`Paths::of_report`], from the report's `extra` object.
    pub fn of_extra(extra: &serde_json::Value) -> Option<Paths> {
        let jobs = extra.get("jobs")?.as_array()?;
        let mut total: Option<Paths> = None;
        // Engines that do not choose report `"paths": null`.
        let counted = jobs
            .iter()
            .filter_map(|job| job.get("paths").filter(|p| p.is_object()));
        for paths in counted {
            let count = |key: &str| paths.get(key).and_then(|v| v.as_u64()).unwrap_or(0);
            let sum = total.get_or_insert_default();
            sum.inline += count("inline");
            sum.asynchronous += count("async");
            sum.explored += count("explored");
            sum.switches += count("switches");
        }
        total
    }

    fn add(self, other: Paths) -> Paths {
        Paths {
            inline: self.inline + other.inline,
            asynchronous: self.asynchronous + other.asynchronous,
            explored: self.explored + other.explored,
            switches: self.switches + other.switches,
        }
    }

    /// "inline 97.1%, 3 switches".
    pub fn summary(&self) -> String {
        let total = self.inline + self.asynchronous;
        let share = if total > 0 {
            self.inline as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        let plural = if self.switches == 1 { "" } else { "es" };
        format!("inline {share:.1}%, {} switch{plural}", self.switches)
    }
}

/// What one engine measured on one cell over every round.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Each figure's median over the rounds.
    pub median: Figures,
    /// The figures of each round, in order.
    pub samples: Vec<Figures>,
    /// The paths of each round, when the engine reports them.
    pub paths: Vec<Option<Paths>>,
}

impl Measured {
    /// Medians of `samples`, which come with the paths of each round.
    pub fn new(samples: Vec<Figures>, paths: Vec<Option<Paths>>) -> Measured {
        Measured {
            median: median(&samples),
            samples,
            paths,
        }
    }

    /// The lowest and highest round's IOPS over the median: how much the
    /// rounds disagree. `None` when the median is 0.
    pub fn spread(&self) -> Option<(f64, f64)> {
        let low = self.samples.iter().map(|f| f.iops).reduce(f64::min)?;
        let high = self.samples.iter().map(|f| f.iops).reduce(f64::max)?;
        Some((
            ratio(low, self.median.iops)?,
            ratio(high, self.median.iops)?,
        ))
    }

    /// The paths summed over every round (not the median round's: a switch is
    /// an event, and a rare one would vanish in a median); `None` when no
    /// round reported paths.
    pub fn total_paths(&self) -> Option<Paths> {
        self.paths.iter().flatten().copied().reduce(Paths::add)
    }
}

/// `a / b`, or `None` when `b` is not positive.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// The index of the result with the highest median IOPS (the first on a tie).
pub fn best(row: &[Measured]) -> Option<usize> {
    best_of(row, |_| true)
}

/// The index of the engine other than the adaptive one with the highest median IOPS.
pub fn best_static(engines: &[&str], row: &[Measured]) -> Option<usize> {
    best_of(row, |i| engines.get(i).is_some_and(|&e| e != ADAPTIVE))
}

fn best_of(row: &[Measured], eligible: impl Fn(usize) -> bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, m) in row.iter().enumerate() {
        if eligible(i) && best.is_none_or(|b| m.median.iops > row[b].median.iops) {
            best = Some(i);
        }
    }
    best
}

/// A result's ratios to the best of its cell: IOPS to the best IOPS, and p99
/// to the p99 of the engine with the best IOPS.
pub fn versus_best(row: &[Measured], index: usize) -> (Option<f64>, Option<f64>) {
    let Some(b) = best(row) else {
        return (None, None);
    };
    let (this, top) = (&row[index].median, &row[b].median);
    (ratio(this.iops, top.iops), ratio(this.p99_us, top.p99_us))
}

/// The adaptive engine's figures over the best static engine's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AdaptiveVersusStatic {
    /// The best static engine.
    pub engine: &'static str,
    /// Adaptive IOPS over the static engine's.
    pub iops: Option<f64>,
    /// Adaptive p99 over the static engine's.
    pub p99: Option<f64>,
    /// Adaptive mean latency over the static engine's.
    pub lat_mean: Option<f64>,
}

/// How the adaptive engine did against the best static engine of the cell;
/// `None` without both.
pub fn adaptive_versus_static(
    engines: &[&'static str],
    row: &[Measured],
) -> Option<AdaptiveVersusStatic> {
    let adaptive = engines.iter().position(|&e| e == ADAPTIVE)?;
    let best = best_static(engines, row)?;
    let (a, s) = (&row.get(adaptive)?.median, &row[best].median);
    Some(AdaptiveVersusStatic {
        engine: engines[best],
        iops: ratio(a.iops, s.iops),
        p99: ratio(a.p99_us, s.p99_us),
        lat_mean: ratio(a.mean_us, s.mean_us),
    })
}

/// The engines a comparison uses unless told otherwise: every one this
/// system allows but `null` (no I/O) and `pvsync2` (without its flags, psync
/// by another call).
pub fn default_engines() -> Vec<EngineKind> {
    hybrio::probe::available_engines()
        .into_iter()
        .filter(|k| !matches!(k, EngineKind::Null | EngineKind::Pvsync2))
        .collect()
}

/// The jobs of one run of `cell` on `engine`.
fn jobs_on(cell: &Cell, engine: EngineKind) -> Vec<JobDef> {
    cell.jobs
        .iter()
        .map(|job| JobDef {
            options: JobOptions {
                ioengine: engine.name().into(),
                // Every engine is judged on total latency: clat alone leaves out
                // the submission time an asynchronous engine spends.
                lat_percentiles: true,
                // One report per clone, so that rates are summed per job.
                group_reporting: false,
                ..job.options.clone()
            },
            own_options: job.own_options.clone(),
        })
        .collect()
}

/// Runs each cell once per engine, `rounds` times in alternation, and
/// returns what each engine measured on each cell (`[cell][engine]`).
pub fn measure(
    cells: &[Cell],
    engines: &[EngineKind],
    rounds: usize,
    notice: &mut dyn FnMut(&str),
) -> Result<Vec<Vec<Measured>>, RunFailure> {
    let mut results: Vec<Vec<Measured>> =
        vec![vec![Measured::new(Vec::new(), Vec::new()); engines.len()]; cells.len()];
    for round in 0..rounds {
        for (c, cell) in cells.iter().enumerate() {
            // Each round starts one engine further on, so that no engine always
            // runs right after the same other one (and inherits, say, its dirty pages).
            for e in (0..engines.len()).map(|i| (i + round) % engines.len()) {
                let engine = engines[e];
                if hybrio::interrupt::requested() {
                    return Err(RunFailure::Interrupted);
                }
                if cell.warm_cache {
                    warm(&cell.jobs)?;
                }
                flush_written(&cell.jobs);
                notice(&format!(
                    "round {}/{rounds}: {} on {engine}",
                    round + 1,
                    cell.name
                ));
                let before = hybrio::rusage::process_usage().ok();
                let report = run::run(&jobs_on(cell, engine), &Vec::new(), &mut |_| {})?;
                if let Some(failure) = run::failures(&report).first() {
                    notice(&format!("  {failure}"));
                }
                let process_cpu_ns = match (before, hybrio::rusage::process_usage().ok()) {
                    (Some(before), Some(after)) => after.since(&before).cpu_ns(),
                    _ => 0,
                };
                let stats: Vec<&JobStats> = report.jobs.iter().map(|j| &j.stats).collect();
                let measured = &mut results[c][e];
                measured
                    .samples
                    .push(Figures::of_jobs(&stats, process_cpu_ns));
                measured.paths.push(Paths::of_report(&report));
            }
        }
    }
    for measured in results.iter_mut().flatten() {
        measured.median = median(&measured.samples);
    }
    Ok(results)
}

/// Writes back what the cell's writing jobs left dirty in the page cache, so
/// that the next run does not pay for the last one's writeback. Files that
/// do not exist yet are skipped; a failure only costs fairness, not data.
fn flush_written(jobs: &[JobDef]) {
    for job in jobs.iter().filter(|j| j.options.rw.writes()) {
        for number in 0..job.options.numjobs {
            for path in crate::layout::file_names(&job.options, number) {
                if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&path) {
                    let _ = file.sync_data();
                }
            }
        }
    }
}

/// Reads the files of the jobs that read from the page cache once, through it.
fn warm(jobs: &[JobDef]) -> Result<(), RunFailure> {
    let warm_ups: Vec<JobDef> = jobs
        .iter()
        .filter(|j| reads_from_cache(&j.options))
        .map(|job| JobDef {
            // The name stays: files without a `filename` are named after the job.
            options: JobOptions {
                ioengine: "psync".into(),
                rw: RwMode::Read,
                bs: [1 << 20; 3],
                invalidate: false,
                time_based: false,
                runtime: None,
                ramp_time: Duration::ZERO,
                loops: 1,
                iodepth: 1,
                direct: false,
                stonewall: false,
                new_group: false,
                inject: None,
                end_fsync: false,
                fsync: 0,
                fdatasync: 0,
                // The warm-up reads, once, at once: it must not drop what it
                // read (`drop_cache_after`) nor wait for the job's start.
                numjobs: 1,
                startdelay: Duration::ZERO,
                drop_cache_after: None,
                ..job.options.clone()
            },
            own_options: Vec::new(),
        })
        .collect();
    if !warm_ups.is_empty() {
        run::run(&warm_ups, &Vec::new(), &mut |_| {})?;
    }
    Ok(())
}

fn median(runs: &[Figures]) -> Figures {
    if runs.is_empty() {
        return Figures::default();
    }
    let pick = |f: fn(&Figures) -> f64| {
        let mut values: Vec<f64> = runs.iter().map(f).collect();
        values.sort_by(f64::total_cmp);
        let mid = values.len() / 2;
        if values.len().is_multiple_of(2) {
            (values[mid - 1] + values[mid]) / 2.0
        } else {
            values[mid]
        }
    };
    Figures {
        iops: pick(|f| f.iops),
        bandwidth: pick(|f| f.bandwidth),
        mean_us: pick(|f| f.mean_us),
        p50_us: pick(|f| f.p50_us),
        p99_us: pick(|f| f.p99_us),
        cpu_us_per_io: pick(|f| f.cpu_us_per_io),
        process_cpu_us_per_io: pick(|f| f.process_cpu_us_per_io),
    }
}

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

/// `hybrio compare`: runs every reporting group of `jobs` as a cell on each
/// engine, `rounds` times in alternation.
pub fn compare(
    jobs: &[JobDef],
    engines: &[EngineKind],
    rounds: usize,
    notice: &mut dyn FnMut(&str),
) -> Result<Comparison, RunFailure> {
    let cells = cells(jobs);
    let results = measure(&cells, engines, rounds, notice)?;
    Ok(Comparison {
        rounds,
        engines: engines.to_vec(),
        cells,
        results,
    })
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
    results: Vec<JsonResult>,
}

#[derive(Serialize)]
struct JsonResult {
    engine: &'static str,
    #[serde(flatten)]
    figures: Figures,
    iops_vs_best: Option<f64>,
    p99_vs_best: Option<f64>,
    samples: Vec<JsonSample>,
    paths: Option<Paths>,
}

#[derive(Serialize)]
struct JsonSample {
    #[serde(flatten)]
    figures: Figures,
    paths: Option<Paths>,
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
                                .map(|(figures, paths)| JsonSample {
                                    figures: *figures,
                                    paths: *paths,
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

/// The cells of the default comparison in `directory`: reads on one file of
/// `size` bytes, writes on another (so that writing never evicts the cached
/// reads' data).
pub fn default_cells(directory: &Path, size: u64, seconds: f64) -> Vec<Cell> {
    let file = directory.join("read-data");
    let base = JobOptions {
        filename: Some(file.display().to_string()),
        size: Some(size),
        time_based: true,
        runtime: Some(Duration::from_secs_f64(seconds)),
        lat_percentiles: true,
        thread: true,
        ..JobOptions::default()
    };
    let cell = |title: &str, origin: &str, options: JobOptions| {
        let mut cell = Cell::new(vec![JobDef {
            options,
            own_options: Vec::new(),
        }]);
        cell.description = format!("{title} ({origin})");
        cell.heading = cell.description.clone();
        cell
    };
    vec![
        cell(
            "8k buffered sequential writes, 1 in flight",
            "seeds/000",
            JobOptions {
                name: "write-8k-qd1".into(),
                rw: RwMode::Write,
                bs: [8192; 3],
                filename: Some(directory.join("write-data").display().to_string()),
                ..base.clone()
            },
        ),
        cell(
            "4k random reads from the page cache, 1 in flight",
            "seeds/003 (cache)",
            JobOptions {
                name: "randread-4k-cached-qd1".into(),
                rw: RwMode::RandRead,
                invalidate: false,
                ..base.clone()
            },
        ),
        cell(
            "4k random O_DIRECT reads, 1 in flight",
            "seeds/003 (device)",
            JobOptions {
                name: "randread-4k-direct-qd1".into(),
                rw: RwMode::RandRead,
                direct: true,
                ..base.clone()
            },
        ),
        cell(
            "4k random O_DIRECT reads, 16 in flight",
            "seeds/003 (device)",
            JobOptions {
                name: "randread-4k-direct-qd16".into(),
                rw: RwMode::RandRead,
                direct: true,
                iodepth: 16,
                ..base
            },
        ),
    ]
}

/// The default run: every available real engine on the default workloads,
/// on a 256 MiB temporary file in `directory`, plus the null engine's figures
/// as the tool's own cost.
pub fn default_comparison(
    directory: &Path,
    seconds: f64,
    notice: &mut dyn FnMut(&str),
) -> Result<String, RunFailure> {
    const ROUNDS: usize = 3;
    let scratch = tempfile::Builder::new()
        .prefix(".hybrio-compare-")
        .tempdir_in(directory)
        .map_err(|e| {
            RunFailure::Layout(
                hybrio::Error::io("create temporary directory in", directory, 0, e).into(),
            )
        })?;
    let engines = default_engines();
    let mut cells = default_cells(scratch.path(), 256 << 20, seconds);
    if !hybrio::probe::o_direct_supported(scratch.path()) {
        notice(&format!(
            "{}: O_DIRECT is not supported here; skipping the O_DIRECT workloads",
            directory.display()
        ));
        cells.retain(|c| !c.jobs.iter().any(|j| j.options.direct));
    }
    let results = measure(&cells, &engines, ROUNDS, notice)?;
    let overhead = JobOptions {
        name: "null-overhead".into(),
        ioengine: "null".into(),
        rw: RwMode::RandRead,
        ..cells[0].jobs[0].options.clone()
    };
    let null = measure(
        &[Cell::new(vec![JobDef {
            options: overhead,
            own_options: Vec::new(),
        }])],
        &[EngineKind::Null],
        ROUNDS,
        notice,
    )?;
    let mut text = format!(
        "hybrio {}: engines compared on {} (median of {ROUNDS} alternating rounds of {seconds} s per cell)\n\n",
        env!("CARGO_PKG_VERSION"),
        directory.display()
    );
    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    text.push_str(&table(&cells, &names, &results, Columns::Full));
    text.push_str(
        "CPU us/IO thread is the job thread's own CPU time (getrusage RUSAGE_THREAD, as fio's usr/sys): it leaves\n\
         out the pool's workers and the kernel workers io_uring hands work to (every buffered ext4 write goes to\n\
         one). CPU us/IO all is the whole process's (RUSAGE_SELF), those workers included.\n\n",
    );
    let n = null[0][0].median;
    let _ = writeln!(
        text,
        "null engine (no I/O, full statistics): {:.2}M IOPS, {:.0} ns per I/O of the tool's own cost",
        n.iops / 1e6,
        1e9 / n.iops.max(1.0)
    );
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{CpuUsage, StatsConfig};

    fn figures(iops: f64, p99_us: f64, mean_us: f64) -> Figures {
        Figures {
            iops,
            bandwidth: iops * 4096.0,
            mean_us,
            p50_us: mean_us,
            p99_us,
            cpu_us_per_io: 1.0,
            process_cpu_us_per_io: 2.0,
        }
    }

    fn once(f: Figures) -> Measured {
        Measured::new(vec![f], vec![None])
    }

    #[test]
    fn every_cell_is_measured_and_ranked() {
        let dir = tempfile::tempdir().unwrap();
        let mut cells = default_cells(dir.path(), 1 << 20, 0.05);
        cells.retain(|c| !c.jobs[0].options.direct);
        assert_eq!(cells.len(), 2);
        assert!(cells[1].warm_cache && !cells[0].warm_cache);
        let engines = [EngineKind::Psync, EngineKind::Null];
        let results = measure(&cells, &engines, 1, &mut |_| {}).unwrap();
        assert_eq!(results.len(), cells.len());
        for row in &results {
            assert!(
                row.iter().all(|m| m.samples.len() == 1
                    && m.median.iops > 0.0
                    && m.median.mean_us > 0.0
                    && m.median.p99_us >= m.median.p50_us
                    && m.paths == [None]),
                "{row:?}"
            );
        }
        let text = table(&cells, &["psync", "null"], &results, Columns::Default);
        assert_eq!(text.matches("| psync |").count(), cells.len());
        assert!(
            text.contains("| 1.00 |"),
            "the best engine of each workload is ranked 1.00: {text}"
        );
        assert!(text.starts_with("8k buffered sequential writes, 1 in flight (seeds/000)\n"));
        assert!(
            std::fs::metadata(dir.path().join("read-data"))
                .unwrap()
                .len()
                >= 1 << 20
        );
    }

    #[test]
    fn median_of_each_figure() {
        let f = |x: f64| Figures {
            iops: x,
            bandwidth: x,
            mean_us: x,
            p50_us: x,
            p99_us: x,
            cpu_us_per_io: x,
            process_cpu_us_per_io: x,
        };
        assert_eq!(median(&[f(3.0), f(1.0), f(2.0)]), f(2.0));
        assert_eq!(median(&[f(4.0), f(1.0), f(2.0), f(3.0)]), f(2.5));
        assert_eq!(median(&[]), Figures::default());
    }

    #[test]
    fn spread_is_the_extreme_rounds_over_the_median() {
        let m = Measured::new(
            vec![
                figures(100.0, 10.0, 5.0),
                figures(80.0, 30.0, 7.0),
                figures(125.0, 20.0, 6.0),
            ],
            vec![None; 3],
        );
        assert_eq!(m.median, figures(100.0, 20.0, 6.0));
        let (low, high) = m.spread().unwrap();
        assert!((low - 0.80).abs() < 1e-9 && (high - 1.25).abs() < 1e-9);
        assert_eq!(once(figures(0.0, 1.0, 1.0)).spread(), None);
    }

    #[test]
    fn ratios_are_to_the_engine_with_the_best_iops() {
        let row = [
            once(figures(50.0, 40.0, 8.0)),
            once(figures(200.0, 10.0, 2.0)),
            once(figures(100.0, 5.0, 4.0)),
        ];
        assert_eq!(best(&row), Some(1));
        assert_eq!(versus_best(&row, 0), (Some(0.25), Some(4.0)));
        assert_eq!(versus_best(&row, 1), (Some(1.0), Some(1.0)));
        // p99 is set against the best-IOPS engine's p99, not the lowest p99.
        assert_eq!(versus_best(&row, 2), (Some(0.5), Some(0.5)));
        let idle = [once(figures(0.0, 0.0, 0.0))];
        assert_eq!(versus_best(&idle, 0), (None, None));
        assert_eq!(ratio(1.0, 0.0), None);
    }

    #[test]
    fn adaptive_is_set_against_the_best_static_engine() {
        let names = ["psync", ADAPTIVE, "io_uring"];
        let paths = Paths {
            inline: 300,
            asynchronous: 100,
            explored: 0,
            switches: 2,
        };
        let row = vec![
            once(figures(100.0, 10.0, 5.0)),
            Measured::new(
                vec![figures(220.0, 10.0, 4.0), figures(220.0, 10.0, 4.0)],
                vec![
                    Some(paths),
                    Some(Paths {
                        switches: 1,
                        ..paths
                    }),
                ],
            ),
            once(figures(200.0, 20.0, 5.0)),
        ];
        assert_eq!(best_static(&names, &row), Some(2));
        assert_eq!(best(&row), Some(1));
        let v = adaptive_versus_static(&names, &row).unwrap();
        assert_eq!(v.engine, "io_uring");
        assert!((v.iops.unwrap() - 1.1).abs() < 1e-9);
        assert_eq!((v.p99, v.lat_mean), (Some(0.5), Some(0.8)));
        assert_eq!(
            adaptive_versus_static(&["psync", "io_uring"], &row[..2]),
            None
        );

        let cells = [Cell::new(vec![JobDef {
            options: JobOptions {
                name: "r".into(),
                ..JobOptions::default()
            },
            own_options: Vec::new(),
        }])];
        let text = table(&cells, &names, &[row], Columns::Full);
        assert!(
            text.contains("adaptive vs best static (io_uring): IOPS 1.10, p99 0.50, mean lat 0.80"),
            "{text}"
        );
        let adaptive_row = text
            .lines()
            .find(|l| l.starts_with("| adaptive |"))
            .unwrap();
        assert!(
            adaptive_row.ends_with("| 1.00 | 1.00 | 1.00-1.00 | inline 75.0%, 3 switches |"),
            "{adaptive_row}"
        );
        let psync_row = text.lines().find(|l| l.starts_with("| psync |")).unwrap();
        assert!(
            psync_row.ends_with("| 0.45 | 1.00 | 1.00-1.00 |  |"),
            "{psync_row}"
        );
    }

    #[test]
    fn paths_are_summed_over_the_jobs_that_report_them() {
        let extra = serde_json::json!({"jobs": [
            {"jobname": "a", "paths": {"inline": 10, "async": 5, "explored": 4, "switches": 1}},
            {"jobname": "a", "paths": {"inline": 7, "async": 0, "explored": 0, "switches": 2}},
            {"jobname": "b"},
            {"jobname": "c", "paths": null},
        ]});
        assert_eq!(
            Paths::of_extra(&extra),
            Some(Paths {
                inline: 17,
                asynchronous: 5,
                explored: 4,
                switches: 3
            })
        );
        assert_eq!(
            Paths::of_extra(&serde_json::json!({"jobs": [{"jobname": "a"}]})),
            None
        );
        let m = Measured::new(
            vec![Figures::default(); 2],
            vec![
                None,
                Some(Paths {
                    inline: 1,
                    asynchronous: 1,
                    explored: 0,
                    switches: 0,
                }),
            ],
        );
        assert_eq!(
            m.total_paths().unwrap().summary(),
            "inline 50.0%, 0 switches"
        );
    }

    #[test]
    fn jobs_of_a_cell_add_up() {
        let config = StatsConfig {
            lat_percentiles: true,
            ..StatsConfig::default()
        };
        let job = |ios: u64, clat_ns: u64, runtime_ms: u64, cpu_ns: u64| {
            let mut stats = JobStats::new(config.clone(), 0);
            for _ in 0..ios {
                stats.record_io(DataDir::Read, 4096, false, None, clat_ns);
            }
            stats.finish(
                Duration::from_millis(runtime_ms),
                CpuUsage {
                    usr_ns: cpu_ns,
                    ..CpuUsage::default()
                },
            );
            stats
        };
        let (a, b) = (
            job(100, 10_000, 1000, 1_000_000),
            job(300, 30_000, 500, 3_000_000),
        );
        let f = Figures::of_jobs(&[&a, &b], 8_000_000);
        // 100/s and 600/s: each job's own rate, summed.
        assert!((f.iops - 700.0).abs() < 1e-9, "{f:?}");
        assert!((f.bandwidth - 700.0 * 4096.0).abs() < 1e-6, "{f:?}");
        assert!((f.mean_us - 25.0).abs() < 1e-9, "{f:?}");
        assert!((29.0..=31.0).contains(&f.p50_us), "{f:?}");
        assert!((9.0..=10.5).contains(&Figures::of(&a, 0).p50_us));
        assert!((f.cpu_us_per_io - 10.0).abs() < 1e-9, "{f:?}");
        assert!((f.process_cpu_us_per_io - 20.0).abs() < 1e-9, "{f:?}");
        assert_eq!(Figures::of_jobs(&[], 5), Figures::default());
    }

    #[test]
    fn a_short_job_is_timed_to_the_microsecond() {
        // A thousand page-cache hits in 1.25 ms: fio's runtime rounds up to
        // 2 ms (500k IOPS); the comparison takes the microseconds (800k).
        let mut stats = JobStats::new(StatsConfig::default(), 0);
        for _ in 0..1000 {
            stats.record_io(DataDir::Read, 4096, false, None, 1_000);
        }
        stats.finish(Duration::from_micros(1250), CpuUsage::default());
        assert_eq!(stats.dir(DataDir::Read).iops(), 500_000.0);
        let f = Figures::of(&stats, 0);
        assert!((f.iops - 800_000.0).abs() < 1e-6, "{f:?}");
    }

    fn jobs_from(text: &str) -> Vec<JobDef> {
        let sections = crate::jobfile::parse_job_file(Path::new("t.fio"), text).unwrap();
        crate::jobfile::resolve(&[], &[sections], &[]).unwrap().0
    }

    #[test]
    fn cells_end_at_stonewall_and_new_group() {
        let jobs = jobs_from(
            "[global]\nsize=1m\n\
             [a]\nrw=randread\ninvalidate=0\n\
             [b]\nrw=write\nnumjobs=4\n\
             [c]\nstonewall\nrw=randread\ndirect=1\nbs=8k\niodepth=16\n\
             [d]\nnew_group\nrw=randrw\ncompletion_latency=30us\n\
             [e]\nrw=read\n",
        );
        let split = cells(&jobs);
        let names: Vec<Vec<&str>> = split
            .iter()
            .map(|c| c.jobs.iter().map(|j| j.options.name.as_str()).collect())
            .collect();
        assert_eq!(names, [vec!["a", "b"], vec!["c"], vec!["d", "e"]]);
        assert_eq!(
            split.iter().map(|c| c.warm_cache).collect::<Vec<_>>(),
            [true, false, false]
        );
        assert_eq!(
            split[0].heading,
            "a: 2 jobs: randread, bs=4k, iodepth=1, numjobs=1, buffered, invalidate=0; \
             write, bs=4k, iodepth=1, numjobs=4, buffered"
        );
        assert_eq!(
            split[1].description,
            "randread, bs=8k, iodepth=16, numjobs=1, direct"
        );
        assert!(
            split[2]
                .description
                .starts_with("2 jobs: randrw, rwmixread=50, bs=4k, iodepth=1, numjobs=1, buffered, completion_latency=30us; read"),
            "{}",
            split[2].description
        );
        // Without stonewall or new_group, a file is one cell whose jobs run together.
        let one = cells(&jobs_from("[x]\nsize=1m\n[y]\nsize=1m\n"));
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].jobs.len(), 2);
    }

    #[test]
    fn each_run_gets_the_engine_and_total_latency_percentiles() {
        let cell = &cells(&jobs_from("[x]\nsize=1m\ngroup_reporting\nnumjobs=2\n"))[0];
        let jobs = jobs_on(cell, EngineKind::Null);
        assert_eq!(jobs[0].options.ioengine, "null");
        assert!(jobs[0].options.lat_percentiles && !jobs[0].options.group_reporting);
        assert_eq!(jobs[0].options.numjobs, 2);
    }
}
