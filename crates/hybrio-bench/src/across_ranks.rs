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
use crate::output::RunReport;
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
/// figures made again from them, and a line per rank under `hybrio.mpi`.
fn merged(mut report: RunReport, ranks: &[RankResults]) -> RunReport {
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
    let per_rank: Vec<serde_json::Value> = ranks
        .iter()
        .map(|r| {
            let jobs: Vec<serde_json::Value> = r
                .jobs
                .iter()
                .map(|(stats, error)| rank_job(stats, *error))
                .collect();
            serde_json::json!({"rank": r.rank, "host": r.host, "jobs": jobs})
        })
        .collect();
    let mpi = serde_json::json!({"ranks": ranks.len(), "per_rank": per_rank});
    match &mut report.extra {
        Some(serde_json::Value::Object(extra)) => {
            extra.insert("mpi".into(), mpi);
        }
        extra => *extra = Some(serde_json::json!({"mpi": mpi})),
    }
    report
}

/// One rank's figures of one job: per direction its I/Os, bytes, time and
/// completion-latency buckets (value in ns: count), which pooled over the
/// ranks give the merged percentiles.
fn rank_job(stats: &JobStats, error: i32) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for dir in DataDir::ALL {
        let d = stats.dir(dir);
        if d.total_ios() == 0 {
            continue;
        }
        let bins: serde_json::Map<String, serde_json::Value> = d
            .clat_hist()
            .buckets()
            .map(|(value, count)| (value.to_string(), count.into()))
            .collect();
        out.insert(
            dir.name().into(),
            serde_json::json!({
                "total_ios": d.total_ios(),
                "io_bytes": d.io_bytes(),
                "runtime_ms": d.runtime_ms(),
                "clat_bins": bins,
            }),
        );
    }
    out.insert("error".into(), error.into());
    serde_json::Value::Object(out)
}

/// The normal output's lines per rank: each rank's host and, per job and
/// direction, its IOPS, bandwidth and time.
pub fn rank_lines(report: &RunReport) -> String {
    let Some(per_rank) = report
        .extra
        .as_ref()
        .and_then(|extra| extra.get("mpi"))
        .and_then(|mpi| mpi.get("per_rank"))
        .and_then(|p| p.as_array())
    else {
        return String::new();
    };
    let mut text = String::from("\nRanks (each rank's own figures):\n");
    for rank in per_rank {
        let host = rank["host"].as_str().unwrap_or("?");
        let mut parts = Vec::new();
        for (index, job) in rank["jobs"].as_array().into_iter().flatten().enumerate() {
            for dir in DataDir::ALL {
                let Some(d) = job.get(dir.name()) else {
                    continue;
                };
                let ios = d["total_ios"].as_u64().unwrap_or(0);
                let bytes = d["io_bytes"].as_u64().unwrap_or(0);
                let ms = d["runtime_ms"].as_u64().unwrap_or(0).max(1);
                parts.push(format!(
                    "job {index} {}: IOPS={:.0}, BW={:.1}MiB/s, {ms}ms",
                    dir.name(),
                    ios as f64 * 1000.0 / ms as f64,
                    bytes as f64 * 1000.0 / ms as f64 / (1 << 20) as f64,
                ));
            }
        }
        text.push_str(&format!(
            "  rank {} ({host}): {}\n",
            rank["rank"],
            parts.join("; ")
        ));
    }
    text
}
