//! What one engine measured on one cell, and how engines compare: figures
//! per round and their medians, the best engine, ratios to it.

use serde::Serialize;

use crate::output::RunReport;
use crate::stats::{DataDir, DirStats, JobStats};

/// The engine `hybrio compare` sets against the best static one; known by
/// name so that this code does not depend on when it joins [`EngineKind`](hybrio::engine::EngineKind).
pub const ADAPTIVE: &str = "adaptive";

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
    /// Each round's windows (its jobs' summed), when the engine reports its
    /// paths: the adaptive engine's choices over time.
    pub timelines: Vec<Option<crate::stats::Timeline>>,
}

impl Measured {
    /// Medians of `samples`, which come with the paths of each round.
    pub fn new(samples: Vec<Figures>, paths: Vec<Option<Paths>>) -> Measured {
        Measured {
            median: median(&samples),
            timelines: vec![None; samples.len()],
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

pub(super) fn median(runs: &[Figures]) -> Figures {
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
