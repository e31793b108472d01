//! The default comparison: each engine on the same workloads, side by side.
//!
//! Cells run in alternation (engine A, B, C, then A, B, C again) so that a
//! change in what else the machine is doing hits every engine alike; each
//! figure is the median over the rounds.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use hybrio::engine::EngineKind;

use crate::jobfile::JobDef;
use crate::options::{JobOptions, RwMode};
use crate::run::{self, RunFailure};
use crate::stats::{DataDir, JobStats};

/// One workload of the comparison.
#[derive(Debug, Clone)]
pub struct Workload {
    /// What the row group is called.
    pub title: &'static str,
    /// The seed experiment it comes from.
    pub origin: &'static str,
    /// The job (engine filled in per cell).
    pub options: JobOptions,
    /// Read the whole file through the page cache before each cell, so that
    /// every engine finds it cached, whatever ran before.
    pub warm_cache: bool,
}

/// What one cell measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// I/Os per second (reads + writes).
    pub iops: f64,
    /// Bytes per second.
    pub bandwidth: f64,
    /// Mean total latency (submission + completion), microseconds.
    pub mean_us: f64,
    /// Median total latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile of total latency, microseconds.
    pub p99_us: f64,
    /// CPU time of the job thread per I/O, microseconds.
    pub cpu_us_per_io: f64,
    /// CPU time of the whole process per I/O, microseconds: worker pools and
    /// io_uring's io-wq workers included.
    pub process_cpu_us_per_io: f64,
}

impl Figures {
    /// Reads the figures of one finished job; `process_cpu_ns` is the CPU
    /// time the whole process used while it ran.
    pub fn of(stats: &JobStats, process_cpu_ns: u64) -> Figures {
        let dirs = [stats.dir(DataDir::Read), stats.dir(DataDir::Write)];
        let ios: u64 = dirs.iter().map(|d| d.total_ios()).sum();
        let weighted_mean = dirs
            .iter()
            .map(|d| d.lat().mean() * d.total_ios() as f64)
            .sum::<f64>()
            / ios.max(1) as f64;
        // The direction with the most I/Os speaks for the job's latency distribution.
        let main = dirs
            .iter()
            .max_by_key(|d| d.total_ios())
            .expect("two directions");
        let hist = main.lat_hist().unwrap_or_else(|| main.clat_hist());
        let percentiles = hist.percentiles(&[50.0, 99.0]);
        let cpu = stats.cpu();
        Figures {
            iops: dirs.iter().map(|d| d.iops()).sum(),
            bandwidth: dirs.iter().map(|d| d.bw_bytes_per_sec() as f64).sum(),
            mean_us: weighted_mean / 1000.0,
            p50_us: percentiles.first().map_or(0.0, |p| p.1 as f64 / 1000.0),
            p99_us: percentiles.get(1).map_or(0.0, |p| p.1 as f64 / 1000.0),
            cpu_us_per_io: (cpu.usr_ns + cpu.sys_ns) as f64 / 1000.0 / ios.max(1) as f64,
            process_cpu_us_per_io: process_cpu_ns as f64 / 1000.0 / ios.max(1) as f64,
        }
    }
}

/// The workloads of the default comparison in `directory`: reads on one file
/// of `size` bytes, writes on another (so that writing never evicts the
/// cached reads' data).
pub fn default_workloads(directory: &Path, size: u64, seconds: f64) -> Vec<Workload> {
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
    vec![
        Workload {
            title: "8k buffered sequential writes, 1 in flight",
            origin: "seeds/000",
            options: JobOptions {
                name: "write-8k-qd1".into(),
                rw: RwMode::Write,
                bs: [8192; 3],
                filename: Some(directory.join("write-data").display().to_string()),
                ..base.clone()
            },
            warm_cache: false,
        },
        Workload {
            title: "4k random reads from the page cache, 1 in flight",
            origin: "seeds/003 (cache)",
            options: JobOptions {
                name: "randread-4k-cached-qd1".into(),
                rw: RwMode::RandRead,
                invalidate: false,
                ..base.clone()
            },
            warm_cache: true,
        },
        Workload {
            title: "4k random O_DIRECT reads, 1 in flight",
            origin: "seeds/003 (device)",
            options: JobOptions {
                name: "randread-4k-direct-qd1".into(),
                rw: RwMode::RandRead,
                direct: true,
                ..base.clone()
            },
            warm_cache: false,
        },
        Workload {
            title: "4k random O_DIRECT reads, 16 in flight",
            origin: "seeds/003 (device)",
            options: JobOptions {
                name: "randread-4k-direct-qd16".into(),
                rw: RwMode::RandRead,
                direct: true,
                iodepth: 16,
                ..base
            },
            warm_cache: false,
        },
    ]
}

/// Runs `workloads` once per engine, `rounds` times in alternation, and
/// returns the median figures per workload and engine.
pub fn measure(
    workloads: &[Workload],
    engines: &[EngineKind],
    rounds: usize,
    notice: &mut dyn FnMut(&str),
) -> Result<Vec<Vec<Figures>>, RunFailure> {
    let mut samples: Vec<Vec<Vec<Figures>>> =
        vec![vec![Vec::new(); engines.len()]; workloads.len()];
    for round in 0..rounds {
        for (w, workload) in workloads.iter().enumerate() {
            for (e, engine) in engines.iter().enumerate() {
                if hybrio::interrupt::requested() {
                    return Err(RunFailure::Interrupted);
                }
                if workload.warm_cache {
                    warm(&workload.options)?;
                }
                let options = JobOptions {
                    ioengine: engine.name().into(),
                    ..workload.options.clone()
                };
                notice(&format!(
                    "round {}/{rounds}: {} on {engine}",
                    round + 1,
                    workload.options.name
                ));
                let before = hybrio::rusage::process_usage().ok();
                let report = run::run(
                    &[JobDef {
                        options,
                        own_options: Vec::new(),
                    }],
                    &Vec::new(),
                    &mut |_| {},
                )?;
                if let Some(failure) = run::failures(&report).first() {
                    notice(&format!("  {failure}"));
                }
                let process_cpu_ns = match (before, hybrio::rusage::process_usage().ok()) {
                    (Some(before), Some(after)) => after.since(&before).cpu_ns(),
                    _ => 0,
                };
                samples[w][e].push(Figures::of(&report.jobs[0].stats, process_cpu_ns));
            }
        }
    }
    Ok(samples
        .into_iter()
        .map(|per_engine| per_engine.into_iter().map(|runs| median(&runs)).collect())
        .collect())
}

/// Reads the workload's whole file once through the page cache.
fn warm(options: &JobOptions) -> Result<(), RunFailure> {
    let warm_up = JobOptions {
        name: format!("{}-warm-up", options.name),
        ioengine: "psync".into(),
        rw: RwMode::Read,
        bs: [1 << 20; 3],
        invalidate: false,
        time_based: false,
        runtime: None,
        iodepth: 1,
        direct: false,
        ..options.clone()
    };
    run::run(
        &[JobDef {
            options: warm_up,
            own_options: Vec::new(),
        }],
        &Vec::new(),
        &mut |_| {},
    )?;
    Ok(())
}

fn median(runs: &[Figures]) -> Figures {
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

/// The markdown table of measured figures: per workload, a row per engine and its IOPS ratio to the best.
pub fn table(workloads: &[Workload], engines: &[EngineKind], figures: &[Vec<Figures>]) -> String {
    let mut out = String::new();
    for (workload, row) in workloads.iter().zip(figures) {
        let best = row.iter().map(|f| f.iops).fold(0.0, f64::max);
        let _ = writeln!(out, "{} ({})\n", workload.title, workload.origin);
        let _ = writeln!(
            out,
            "| engine | IOPS | MiB/s | lat mean us | lat p50 us | lat p99 us | CPU us/IO thread | CPU us/IO all | IOPS vs best |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (engine, f) in engines.iter().zip(row) {
            let _ = writeln!(
                out,
                "| {engine} | {:.1}k | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                f.iops / 1000.0,
                f.bandwidth / f64::from(1 << 20),
                f.mean_us,
                f.p50_us,
                f.p99_us,
                f.cpu_us_per_io,
                f.process_cpu_us_per_io,
                if best > 0.0 { f.iops / best } else { 0.0 },
            );
        }
        out.push('\n');
    }
    out
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
    // pvsync2 without its flags is psync by another call: left out.
    let engines: Vec<EngineKind> = hybrio::probe::available_engines()
        .into_iter()
        .filter(|k| !matches!(k, EngineKind::Null | EngineKind::Pvsync2))
        .collect();
    let mut workloads = default_workloads(scratch.path(), 256 << 20, seconds);
    if !hybrio::probe::o_direct_supported(scratch.path()) {
        notice(&format!(
            "{}: O_DIRECT is not supported here; skipping the O_DIRECT workloads",
            directory.display()
        ));
        workloads.retain(|w| !w.options.direct);
    }
    let figures = measure(&workloads, &engines, ROUNDS, notice)?;
    let overhead = JobOptions {
        name: "null-overhead".into(),
        ioengine: "null".into(),
        rw: RwMode::RandRead,
        ..workloads[0].options.clone()
    };
    let null = measure(
        &[Workload {
            title: "null engine: the tool's own cost per I/O",
            origin: "no I/O",
            options: overhead,
            warm_cache: false,
        }],
        &[EngineKind::Null],
        ROUNDS,
        notice,
    )?;
    let mut text = format!(
        "hybrio {}: engines compared on {} (median of {ROUNDS} alternating rounds of {seconds} s per cell)\n\n",
        env!("CARGO_PKG_VERSION"),
        directory.display()
    );
    text.push_str(&table(&workloads, &engines, &figures));
    text.push_str(
        "CPU us/IO thread is the job thread's own CPU time (getrusage RUSAGE_THREAD, as fio's usr/sys): it leaves\n\
         out the pool's workers and the kernel workers io_uring hands work to (every buffered ext4 write goes to\n\
         one). CPU us/IO all is the whole process's (RUSAGE_SELF), those workers included.\n\n",
    );
    let n = null[0][0];
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

    #[test]
    fn every_cell_is_measured_and_ranked() {
        let dir = tempfile::tempdir().unwrap();
        let mut workloads = default_workloads(dir.path(), 1 << 20, 0.05);
        workloads.retain(|w| !w.options.direct);
        let engines = [EngineKind::Psync, EngineKind::Null];
        let figures = measure(&workloads, &engines, 1, &mut |_| {}).unwrap();
        assert_eq!(figures.len(), workloads.len());
        for row in &figures {
            assert!(
                row.iter()
                    .all(|f| f.iops > 0.0 && f.mean_us > 0.0 && f.p99_us >= f.p50_us),
                "{row:?}"
            );
        }
        let text = table(&workloads, &engines, &figures);
        assert_eq!(text.matches("| psync |").count(), workloads.len());
        assert!(
            text.contains("| 1.00 |"),
            "the best engine of each workload is ranked 1.00: {text}"
        );
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
    }
}
