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

use crate::jobfile::JobDef;
use crate::options::{JobOptions, RwMode};
use crate::output::RunReport;
use crate::run::{self, RunFailure};
use crate::stats::JobStats;

mod cell;
mod figures;
mod report;

use cell::reads_from_cache;
pub use cell::{Cell, cells, describe};
use figures::median;
pub use figures::{
    ADAPTIVE, AdaptiveVersusStatic, Figures, Measured, Paths, adaptive_versus_static, best,
    best_static, ratio, versus_best,
};
pub use report::{Columns, Comparison, table};

/// The engines a comparison uses unless told otherwise: every one this
/// system allows but `null` (no I/O), `pvsync2` (without its flags, psync
/// by another call) and `posixaio` (the C library's threads taking one
/// request of a file at a time: the pool's job, done worse by design).
pub fn default_engines() -> Vec<EngineKind> {
    hybrio::probe::available_engines()
        .into_iter()
        .filter(|k| {
            !matches!(
                k,
                EngineKind::Null | EngineKind::Pvsync2 | EngineKind::Posixaio
            )
        })
        .collect()
}

/// The jobs of one run of `cell` on `engine`.
fn jobs_on(cell: &Cell, engine: EngineKind) -> Vec<JobDef> {
    cell.jobs
        .iter()
        .map(|job| JobDef {
            options: JobOptions {
                // A network cell's peer (its fixed sender) keeps its engine.
                ioengine: if job.options.net.peer {
                    job.options.ioengine.clone()
                } else {
                    engine.name().into()
                },
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

/// The pause before each run: the last run's engine, dropped, leaves work
/// to the kernel (a Linux AIO context and an io_uring ring are freed by
/// deferred work, their kernel threads exit), and a run that starts at once
/// pays for it. 1,000 page-cache reads (1 ms) run right after libaio's ran at
/// 0.72-0.75 of psync's speed on the adaptive engine, which makes the same
/// calls; 20 ms later, at 1.00 (20 rounds each). Every engine waits alike.
const SETTLE: Duration = Duration::from_millis(20);

/// The order of the engines in `round`: a balanced Latin square (Williams'
/// design), in which over every `n` rounds (`2n` for an odd number of
/// engines) each engine runs right after every other one equally often.
/// Each round starting one engine further on kept every engine behind the
/// same one (the adaptive engine behind io_uring), and so behind the same
/// teardown (see [`SETTLE`]).
fn engine_order(n: usize, round: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    // 0, 1, n-1, 2, n-2, ...: the steps between neighbours are all different.
    let first = (0..n).map(|i| {
        if i % 2 == 1 {
            i.div_ceil(2)
        } else {
            (n - i / 2) % n
        }
    });
    let cycle = if n.is_multiple_of(2) { n } else { 2 * n };
    let row = round % cycle;
    let mut order: Vec<usize> = first.map(|e| (e + row) % n).collect();
    if row >= n {
        order.reverse();
    }
    order
}

/// Runs each cell once per engine, `rounds` times in alternation, and
/// returns what each engine measured on each cell (`[cell][engine]`).
pub fn measure(
    cells: &[Cell],
    engines: &[EngineKind],
    rounds: usize,
    notice: &mut dyn FnMut(&str),
    runner: &mut dyn FnMut(&[JobDef]) -> Result<RunReport, RunFailure>,
) -> Result<Vec<Vec<Measured>>, RunFailure> {
    let mut results: Vec<Vec<Measured>> =
        vec![vec![Measured::new(Vec::new(), Vec::new()); engines.len()]; cells.len()];
    for round in 0..rounds {
        for (c, cell) in cells.iter().enumerate() {
            for e in engine_order(engines.len(), round) {
                let engine = engines[e];
                if hybrio::interrupt::requested() {
                    return Err(RunFailure::Interrupted);
                }
                std::thread::sleep(SETTLE);
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
                let report = runner(&jobs_on(cell, engine))?;
                if let Some(failure) = run::failures(&report).first() {
                    notice(&format!("  {failure}"));
                }
                let process_cpu_ns = match (before, hybrio::rusage::process_usage().ok()) {
                    (Some(before), Some(after)) => after.since(&before).cpu_ns(),
                    _ => 0,
                };
                // A peer's I/O is not the cell's (its CPU is the process's all the same).
                let peers: Vec<&str> = cell
                    .jobs
                    .iter()
                    .filter(|j| j.options.net.peer)
                    .map(|j| j.options.name.as_str())
                    .collect();
                let stats: Vec<&JobStats> = report
                    .jobs
                    .iter()
                    .filter(|j| !peers.contains(&j.desc.name.as_str()))
                    .map(|j| &j.stats)
                    .collect();
                let measured = &mut results[c][e];
                measured
                    .samples
                    .push(Figures::of_jobs(&stats, process_cpu_ns));
                measured.paths.push(Paths::of_report(&report));
                // Kept for engines with paths only: the picture of their
                // choices over time (the others' would only grow the document).
                let paths = measured.paths.last().copied().flatten();
                measured.timelines.push(paths.map(|_| {
                    let mut sum = crate::stats::Timeline::default();
                    for stats in &stats {
                        sum.merge(stats.timeline());
                    }
                    sum
                }));
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
    for job in jobs
        .iter()
        .filter(|j| j.options.rw.writes() && j.options.network().is_none())
    {
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
                ramp_size: None,
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

/// `hybrio compare`: runs every reporting group of `jobs` as a cell on each
/// engine, `rounds` times in alternation.
pub fn compare(
    jobs: &[JobDef],
    engines: &[EngineKind],
    rounds: usize,
    notice: &mut dyn FnMut(&str),
) -> Result<Comparison, RunFailure> {
    compare_with(jobs, engines, rounds, notice, &mut |jobs| {
        run::run(jobs, &Vec::new(), &mut |_| {})
    })
}

/// [`compare`], each run made by `runner` (under MPI: across the ranks,
/// every rank's figures merged).
pub fn compare_with(
    jobs: &[JobDef],
    engines: &[EngineKind],
    rounds: usize,
    notice: &mut dyn FnMut(&str),
    runner: &mut dyn FnMut(&[JobDef]) -> Result<RunReport, RunFailure>,
) -> Result<Comparison, RunFailure> {
    let cells = cells(jobs);
    let engines = engines_for(jobs, engines, notice)?;
    let results = measure(&cells, &engines, rounds, notice, runner)?;
    Ok(Comparison {
        rounds,
        engines,
        cells,
        results,
    })
}

/// The engines that can run `jobs`: neither AIO interface takes sockets
/// (Linux AIO has no socket commands; hybrio's posixaio refuses them), so
/// libaio and posixaio are left out (with a notice) where the jobs include
/// network jobs, rather than ending the comparison at its first network cell.
fn engines_for(
    jobs: &[JobDef],
    engines: &[EngineKind],
    notice: &mut dyn FnMut(&str),
) -> Result<Vec<EngineKind>, RunFailure> {
    if !jobs.iter().any(|j| j.options.network().is_some()) {
        return Ok(engines.to_vec());
    }
    let (left_out, kept): (Vec<EngineKind>, Vec<EngineKind>) = engines
        .iter()
        .partition(|&&e| matches!(e, EngineKind::Libaio | EngineKind::Posixaio));
    if kept.is_empty() {
        return Err(RunFailure::NoEngine(
            "no engine left to compare: the AIO engines take no sockets (Linux AIO has no socket commands; name others with --engines=)".into(),
        ));
    }
    if !left_out.is_empty() {
        let names: Vec<&str> = left_out.iter().map(|e| e.name()).collect();
        notice(&format!(
            "{} left out: the AIO engines take no sockets (Linux AIO has no socket commands), and the jobs include network jobs",
            names.join(" and ")
        ));
    }
    Ok(kept)
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
                hybrio::Error::io("create temporary directory in", directory, e).into(),
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
    let mut here = |jobs: &[JobDef]| run::run(jobs, &Vec::new(), &mut |_| {});
    let results = measure(&cells, &engines, ROUNDS, notice, &mut here)?;
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
        &mut here,
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
mod tests;
