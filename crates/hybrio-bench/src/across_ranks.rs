//! `hybrio --mpi`: one run across the ranks of `mpirun`. Every rank runs
//! the same jobs (`$rank`, `$nranks` and fio's `$clientuid` in `filename`,
//! `filename_format` and `directory` name each rank's own files); each
//! group of jobs starts after a barrier across the ranks; at the end every
//! rank sends its jobs' statistics to rank 0, which merges them job by job
//! (histograms bucket by bucket, so the percentiles are those of every
//! rank's latencies pooled, and each direction's time is the slowest
//! rank's) and reports them with a line per rank.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cluster::{Cluster, ClusterError};
use crate::jobfile::{GlobalOptions, JobDef};
use crate::output::{ClientReport, RunReport};
use crate::run::{self, RunFailure};
use crate::stats::{self, DataDir, JobStats};

/// How long a rank waits for the others at a barrier: a group starts when
/// the slowest rank ended the last one, so this also bounds how far behind
/// a rank may fall before the run is given up.
const BARRIER_BOUND: Duration = Duration::from_secs(600);

/// What ended a run across ranks.
#[derive(Debug, thiserror::Error)]
pub enum AcrossRanksError {
    /// The ranks lost each other.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// This rank's run failed.
    #[error("{0}")]
    Run(#[from] RunFailure),
    /// A rank sent what rank 0 cannot read (a different hybrio?).
    #[error("rank {rank}'s results cannot be read: {message}")]
    Results {
        /// Which rank.
        rank: usize,
        /// Why.
        message: String,
    },
}

/// One rank's results, as it sends them to rank 0.
#[derive(Debug, Serialize, Deserialize)]
struct RankResults {
    rank: usize,
    host: String,
    /// Each job report's statistics and errno, in report order.
    jobs: Vec<(JobStats, i32)>,
}

/// The merged report (rank 0), or `None` on the other ranks.
pub fn run(
    jobs: &[JobDef],
    globals: &GlobalOptions,
    notice: &mut dyn FnMut(&str),
) -> Result<Option<RunReport>, AcrossRanksError> {
    let cluster = Cluster::join()?;
    let jobs = for_rank(jobs, cluster.rank(), cluster.size());
    let report = run::run_coordinated(&jobs, globals, notice, None, &mut |group| {
        cluster
            .barrier(&format!("start of group {group}"), BARRIER_BOUND)
            .map_err(|e| RunFailure::Ranks(e.to_string()))
    })?;
    let mine = RankResults {
        rank: cluster.rank(),
        host: cluster.host().to_owned(),
        jobs: report
            .jobs
            .iter()
            .map(|job| (job.stats.clone(), job.error))
            .collect(),
    };
    let bytes = serde_json::to_vec(&mine).expect("statistics serialize");
    let Some(all) = cluster.gather(&bytes, BARRIER_BOUND)? else {
        return Ok(None);
    };
    let mut ranks = Vec::with_capacity(all.len());
    for (rank, bytes) in all.iter().enumerate() {
        let results: RankResults =
            serde_json::from_slice(bytes).map_err(|e| AcrossRanksError::Results {
                rank,
                message: e.to_string(),
            })?;
        if results.jobs.len() != report.jobs.len() {
            return Err(AcrossRanksError::Results {
                rank,
                message: format!(
                    "{} job reports where rank 0 has {}",
                    results.jobs.len(),
                    report.jobs.len()
                ),
            });
        }
        ranks.push(results);
    }
    Ok(Some(merged(report, &ranks)))
}

/// The jobs with `$rank`, `$nranks` and `$clientuid` replaced where files
/// are named.
fn for_rank(jobs: &[JobDef], rank: usize, size: usize) -> Vec<JobDef> {
    let name = |text: &mut Option<String>| {
        if let Some(text) = text {
            *text = text
                .replace("$nranks", &size.to_string())
                .replace("$rank", &rank.to_string())
                .replace("$clientuid", &rank.to_string());
        }
    };
    jobs.iter()
        .cloned()
        .map(|mut job| {
            name(&mut job.options.filename);
            name(&mut job.options.filename_format);
            name(&mut job.options.directory);
            job
        })
        .collect()
}

/// Rank 0's report with every rank's statistics merged into it, the groups'
/// figures made again from them, and each rank's own jobs as a client's
/// (fio's client mode: JSON `client_stats`).
fn merged(mut report: RunReport, ranks: &[RankResults]) -> RunReport {
    // Every rank ran the same jobs: rank 0's reports, with each rank's figures.
    report.clients = ranks
        .iter()
        .map(|rank| ClientReport {
            hostname: rank.host.clone(),
            port: rank.rank as u32,
            jobs: report
                .jobs
                .iter()
                .zip(&rank.jobs)
                .map(|(job, (stats, error))| {
                    let mut own = job.clone();
                    own.stats = stats.clone();
                    own.error = *error;
                    own
                })
                .collect(),
        })
        .collect();
    for (index, job) in report.jobs.iter_mut().enumerate() {
        let mut stats = ranks[0].jobs[index].0.clone();
        for other in &ranks[1..] {
            stats.merge(&other.jobs[index].0);
        }
        job.stats = stats;
        job.jobs *= ranks.len() as u32;
        if job.error == 0 {
            job.error = ranks
                .iter()
                .map(|r| r.jobs[index].1)
                .find(|&e| e != 0)
                .unwrap_or(0);
        }
    }
    for group in &mut report.groups {
        let members: Vec<&JobStats> = report
            .jobs
            .iter()
            .filter(|j| j.groupid == group.groupid)
            .map(|j| &j.stats)
            .collect();
        group.summary = stats::group_summary(&members);
    }
    let mpi = serde_json::json!({"ranks": ranks.len()});
    match &mut report.extra {
        Some(serde_json::Value::Object(extra)) => {
            extra.insert("mpi".into(), mpi);
        }
        extra => *extra = Some(serde_json::json!({"mpi": mpi})),
    }
    report
}

/// The normal output's lines per rank: each rank's host and, per job and
/// direction, its IOPS, bandwidth and time.
pub fn rank_lines(report: &RunReport) -> String {
    if report.clients.is_empty() {
        return String::new();
    }
    let mut text = String::from("\nRanks (each rank's own figures):\n");
    for client in &report.clients {
        let mut parts = Vec::new();
        for job in &client.jobs {
            for dir in DataDir::ALL {
                let d = job.stats.dir(dir);
                if d.total_ios() == 0 {
                    continue;
                }
                let ms = d.runtime_ms().max(1) as f64;
                parts.push(format!(
                    "{} {}: IOPS={:.0}, BW={:.1}MiB/s, {}ms",
                    job.desc.name,
                    dir.name(),
                    d.total_ios() as f64 * 1000.0 / ms,
                    d.io_bytes() as f64 * 1000.0 / ms / f64::from(1 << 20),
                    d.runtime_ms(),
                ));
            }
        }
        text.push_str(&format!(
            "  rank {} ({}): {}\n",
            client.port,
            client.hostname,
            parts.join("; ")
        ));
    }
    text
}
