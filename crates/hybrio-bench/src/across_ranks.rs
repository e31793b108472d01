//! `hybrio --mpi`: one run across the ranks of `mpirun`. Every rank runs
//! the same jobs (`$rank` and `$nranks` in their values, read when the jobs
//! were read, give each rank its files or its part of a shared one); each
//! group of jobs starts after the ranks agree, and a rank that stops early
//! stops the others; at the end every rank sends its jobs' statistics to
//! rank 0, which merges them job by job (histograms bucket by bucket, so
//! the percentiles are those of every rank's latencies pooled, and each
//! direction's time is the slowest rank's) and reports them as fio's client
//! mode does, with a line per rank. [`compare_runner`] makes each run of
//! `hybrio compare --mpi` such a run.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cluster::{ClockOffset, Cluster, ClusterError, LostRank};
use crate::jobfile::{GlobalOptions, JobDef};
use crate::output::{ClientReport, RunReport};
use crate::run::{self, GroupStart, RunFailure};
use crate::stats::{DataDir, JobStats};

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
    /// The launcher's environment does not give this process's rank, which
    /// `$rank` and `$nranks` were read from when the jobs were read.
    #[error(
        "the MPI launcher's environment says rank {said:?} where MPI says {rank} of {size} (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE or SLURM_PROCID/NTASKS): $rank and $nranks cannot be known"
    )]
    Launcher {
        /// What the environment said (rank, ranks), if anything.
        said: Option<(u64, u64)>,
        /// MPI's rank.
        rank: usize,
        /// MPI's number of ranks.
        size: usize,
    },
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
    /// Each job report's statistics and errno, in report order (none when
    /// this rank's run failed).
    jobs: Vec<(JobStats, i32)>,
    /// What failed on this rank, a line each.
    failures: Vec<String>,
    /// What the block devices under this rank's files did.
    disks: Vec<crate::diskstats::DiskUtil>,
}

/// What rank 0 has at the end.
#[derive(Debug)]
pub struct RanksReport {
    /// Every rank's figures merged (the ranks whose run failed left out);
    /// `None` when rank 0's own run failed, as its report is the frame.
    pub report: Option<RunReport>,
    /// What failed, each line naming its rank and host.
    pub failures: Vec<String>,
}

/// A rank's state at an agreement: all went well so far.
const GOING: u32 = 0;
/// A rank's state at an agreement: it has ended early (a failure, Ctrl-C,
/// `exitall`), and so do the others.
const STOPPED: u32 = 1;

/// This rank's part of one run across the ranks.
#[derive(Debug)]
pub struct RankRun {
    /// This rank's own report (`None` when its run failed).
    pub own: Option<RunReport>,
    /// At rank 0: every rank's figures merged, and what failed.
    pub merged: Option<RanksReport>,
}

/// Joins the ranks, checking that the launcher's environment (which
/// `$rank` and `$nranks` were read from when the jobs were read) names
/// this rank as MPI does.
pub fn join() -> Result<Cluster, AcrossRanksError> {
    let cluster = Cluster::join()?;
    let said = crate::jobfile::launcher_rank();
    let truth = (cluster.rank() as u64, cluster.size() as u64);
    if said.unwrap_or((0, 1)) != truth {
        return Err(AcrossRanksError::Launcher {
            said,
            rank: cluster.rank(),
            size: cluster.size(),
        });
    }
    Ok(cluster)
}

/// A runner for `hybrio compare` across the ranks: each run made by
/// [`run_with`], rank 0's report being every rank's merged. After each run
/// the ranks agree whether any failed, so that all go on or all stop.
pub fn compare_runner(
    cluster: &Cluster,
) -> impl FnMut(&[JobDef]) -> Result<RunReport, RunFailure> + '_ {
    move |jobs| {
        let run = run_with(cluster, jobs, &Vec::new(), &mut |_| {})
            .map_err(|e| RunFailure::Ranks(e.to_string()))?;
        let failures = run
            .merged
            .as_ref()
            .map(|m| m.failures.clone())
            .unwrap_or_default();
        let failed = run.own.is_none() || !failures.is_empty();
        let anyone = cluster
            .agree("end of a compared run", u32::from(failed), BARRIER_BOUND)
            .map_err(|e| RunFailure::Ranks(e.to_string()))?;
        if anyone != 0 {
            return Err(RunFailure::Ranks(if failures.is_empty() {
                "a rank's run failed (rank 0 names it)".into()
            } else {
                failures.join("; ")
            }));
        }
        match (run.merged.and_then(|m| m.report), run.own) {
            (Some(report), _) | (None, Some(report)) => Ok(report),
            (None, None) => Err(RunFailure::Ranks("this rank's run failed".into())),
        }
    }
}

/// One run across the ranks: this rank's report, and at rank 0 every
/// rank's merged.
///
/// The ranks agree before each group and once at the end: a rank whose run
/// ended early (it failed, or was interrupted) sends the others a stop
/// notice, which stops their jobs as Ctrl-C does, and says so at its next
/// agreement, which is the one the others reach next; every rank then
/// stops there and sends what it measured. A rank lost meanwhile (killed,
/// its host down) is found by rank 0's watch, which stops the others' jobs
/// too: they regroup without it and report what they measured.
pub fn run_with(
    cluster: &Cluster,
    jobs: &[JobDef],
    globals: &GlobalOptions,
    notice: &mut dyn FnMut(run::Notice<'_>),
) -> Result<RankRun, AcrossRanksError> {
    let groups = group_count(jobs);
    let mut started = 0;
    let mut told_to_stop = false;
    let outcome = run::run_coordinated(jobs, globals, notice, None, None, &mut |group, ready| {
        // A rank whose group could not get ready says so here, where the
        // others wait to start the group's I/O.
        let state = if ready { GOING } else { STOPPED };
        match cluster.agree(
            &format!("start of group {group}'s I/O"),
            state,
            BARRIER_BOUND,
        ) {
            Ok(GOING) => {
                started += 1;
                Ok(GroupStart::Go)
            }
            Ok(_) => {
                told_to_stop = true;
                Ok(GroupStart::Stop)
            }
            // The ranks still answering meet again at the end.
            Err(ClusterError::Lost { .. }) => Ok(GroupStart::Stop),
            Err(e) => Err(RunFailure::Ranks(e.to_string())),
        }
    });
    // The groups that ran, and what ended the run early, if anything did.
    let (report, failure) = match outcome {
        Ok(run::Ended { report, failure }) => (Some(report), failure),
        Err(failure) => (None, Some(failure)),
    };
    if let Some(RunFailure::Ranks(message)) = &failure {
        // The ranks have lost each other: no agreement is left to make.
        return Err(AcrossRanksError::Run(RunFailure::Ranks(message.clone())));
    }
    let lost_before = !cluster.lost().is_empty();
    let whole = failure.is_none()
        && report.is_some()
        && started == groups
        && !lost_before
        && !hybrio::interrupt::requested();
    if !told_to_stop && !whole && !cluster.stop_heard() && !lost_before {
        // This rank ended early on its own: the others stop now, not at
        // the end of the group they are in. (Another rank's notice, or a
        // lost rank, names what stopped the run.)
        cluster.tell_others_to_stop();
    }
    let mut mine = RankResults {
        rank: cluster.rank(),
        host: cluster.host().to_owned(),
        jobs: Vec::new(),
        failures: Vec::new(),
        disks: Vec::new(),
    };
    if let Some(report) = &report {
        mine.jobs = report
            .jobs
            .iter()
            .map(|job| (job.stats.clone(), job.error))
            .collect();
        mine.failures = run::failures(report);
        mine.disks = report.disk_util.clone();
    }
    mine.failures
        .extend(failure.iter().map(ToString::to_string));
    let bytes = serde_json::to_vec(&mine).expect("statistics serialize");
    let (clocks, gathered) = finish(cluster, told_to_stop, whole, &bytes)?;
    let own = report.clone();
    let Some(all) = gathered else {
        return Ok(RankRun { own, merged: None });
    };
    let mut ranks = Vec::with_capacity(all.len());
    for bytes in &all {
        let results: RankResults =
            serde_json::from_slice(bytes).map_err(|e| AcrossRanksError::Results {
                rank: ranks.len(),
                message: e.to_string(),
            })?;
        ranks.push(results);
    }
    let lost = cluster.lost();
    let mut failures: Vec<String> = lost
        .iter()
        .map(|l| {
            format!(
                "rank {} ({}): not heard from since {:.1} s after the ranks joined (killed, or its host is down): its figures are left out",
                l.rank,
                l.host,
                l.last_heard_ms as f64 / 1e3
            )
        })
        .collect();
    failures.extend(ranks.iter().flat_map(|r| {
        r.failures
            .iter()
            .map(move |line| format!("rank {} ({}): {line}", r.rank, r.host))
    }));
    let Some(report) = report else {
        return Ok(RankRun {
            own,
            merged: Some(RanksReport {
                report: None,
                failures,
            }),
        });
    };
    // A rank whose run failed before any group has no figures to merge;
    // one that ran other jobs than rank 0 (another job file?) neither.
    let (complete, left_out): (Vec<RankResults>, Vec<RankResults>) = ranks
        .into_iter()
        .partition(|r| r.jobs.len() == report.jobs.len());
    for rank in &left_out {
        if !rank.jobs.is_empty() {
            failures.push(format!(
                "rank {} ({}): {} job reports where rank 0 has {}: left out of the report",
                rank.rank,
                rank.host,
                rank.jobs.len(),
                report.jobs.len()
            ));
        }
    }
    Ok(RankRun {
        own,
        merged: Some(RanksReport {
            report: Some(merged(report, &complete, &clocks, &lost)),
            failures,
        }),
    })
}

/// The ranks' clocks and, at rank 0, every rank's results as it sent them.
type Finished = (Vec<ClockOffset>, Option<Vec<Vec<u8>>>);

/// The run's end among the ranks still answering: they agree the run is
/// over (unless they already did, stopping at a group's start), rank 0
/// measures their clocks and collects their results. A rank lost
/// meanwhile makes them regroup without it and start this again.
fn finish(
    cluster: &Cluster,
    told_to_stop: bool,
    whole: bool,
    bytes: &[u8],
) -> Result<Finished, AcrossRanksError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        cluster.regroup()?;
        // Once a rank is lost, every rank agrees here again, whatever it
        // did before: not every rank may have heard of the loss at the
        // same agreement.
        let agree = !told_to_stop || !cluster.lost().is_empty();
        let tried = (|| {
            if agree {
                cluster.agree(
                    "end of the run",
                    if whole { GOING } else { STOPPED },
                    BARRIER_BOUND,
                )?;
            }
            let clocks = cluster.clock_offsets(BARRIER_BOUND)?.unwrap_or_default();
            let gathered = cluster.gather(bytes, BARRIER_BOUND)?;
            Ok((clocks, gathered))
        })();
        match tried {
            Err(ClusterError::Lost { .. }) if attempt < cluster.size() => continue,
            other => return other.map_err(AcrossRanksError::Cluster),
        }
    }
}

/// How many groups of jobs run one after the other (a new one at each
/// `stonewall`), as the run counts them.
fn group_count(jobs: &[JobDef]) -> usize {
    usize::from(!jobs.is_empty())
        + jobs
            .iter()
            .skip(1)
            .filter(|job| job.options.stonewall)
            .count()
}

/// Rank 0's report with every rank's statistics merged into it, the groups'
/// figures made again from them, and each rank's own jobs as a client's
/// (fio's client mode: JSON `client_stats`).
fn merged(
    mut report: RunReport,
    ranks: &[RankResults],
    clocks: &[ClockOffset],
    lost: &[LostRank],
) -> RunReport {
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
            disk_util: rank.disks.clone(),
        })
        .collect();
    // Each rank's devices are its own client's: none stands for all.
    report.disk_util.clear();
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
        group.summary = crate::output::summary_of_group(&report.jobs, group.groupid);
    }
    let mpi = serde_json::json!({
        "ranks": ranks.len(),
        "clocks": {
            "method": "rank 0 sends each rank 8 messages; the rank's CLOCK_REALTIME less the middle of the shortest round trip",
            "offsets": clocks,
        },
        "stragglers": stragglers(&report),
        "lost": lost,
    });
    match &mut report.extra {
        Some(serde_json::Value::Object(extra)) => {
            extra.insert("mpi".into(), mpi);
        }
        extra => *extra = Some(serde_json::json!({"mpi": mpi})),
    }
    report
}

/// A rank whose time in a job's direction is this many times the ranks'
/// median or more is a straggler.
const STRAGGLER: f64 = 1.5;

/// The ranks whose time in a job's direction is [`STRAGGLER`] times the
/// median of the ranks' or more.
fn stragglers(report: &RunReport) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for (index, job) in report.jobs.iter().enumerate() {
        for dir in DataDir::ALL {
            let mut times: Vec<(u32, &str, u64)> = report
                .clients
                .iter()
                .map(|c| {
                    (
                        c.port,
                        c.hostname.as_str(),
                        c.jobs[index].stats.dir(dir).runtime_ms(),
                    )
                })
                .filter(|&(_, _, ms)| ms > 0)
                .collect();
            if times.len() < 2 {
                continue;
            }
            let mut sorted: Vec<u64> = times.iter().map(|t| t.2).collect();
            sorted.sort_unstable();
            let median = sorted[sorted.len() / 2];
            times.retain(|&(_, _, ms)| ms as f64 >= STRAGGLER * median as f64);
            for (rank, host, ms) in times {
                out.push(serde_json::json!({
                    "rank": rank, "host": host, "job": job.desc.name, "dir": dir.name(),
                    "runtime_ms": ms, "median_ms": median,
                }));
            }
        }
    }
    out
}

/// The normal output's lines per rank: each rank's host and, per job and
/// direction, its IOPS, bandwidth and time; its clock against rank 0's;
/// the stragglers.
pub fn rank_lines(report: &RunReport) -> String {
    if report.clients.is_empty() {
        return String::new();
    }
    let mpi = report.extra.as_ref().and_then(|e| e.get("mpi"));
    let clock_of = |rank: u32| {
        mpi.and_then(|m| m["clocks"]["offsets"].as_array())
            .and_then(|list| list.iter().find(|o| o["rank"] == rank))
            .map(|o| {
                format!(
                    "; clock {:+.0} us from rank 0's (+-{:.0} us)",
                    o["offset_ns"].as_i64().unwrap_or(0) as f64 / 1e3,
                    o["round_trip_ns"].as_i64().unwrap_or(0) as f64 / 2e3
                )
            })
            .unwrap_or_default()
    };
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
            "  rank {} ({}): {}{}\n",
            client.port,
            client.hostname,
            parts.join("; "),
            clock_of(client.port)
        ));
        for disk in &client.disk_util {
            text.push_str(&format!(
                "    disk {}\n",
                crate::output::normal::disk_line(disk, crate::fio_version::FioVersion::NEWEST)
            ));
        }
    }
    for lost in mpi.and_then(|m| m["lost"].as_array()).into_iter().flatten() {
        text.push_str(&format!(
            "  rank {} ({}): lost, not heard from since {:.1} s after the ranks joined\n",
            lost["rank"],
            lost["host"].as_str().unwrap_or("?"),
            lost["last_heard_ms"].as_u64().unwrap_or(0) as f64 / 1e3
        ));
    }
    for straggler in mpi
        .and_then(|m| m["stragglers"].as_array())
        .into_iter()
        .flatten()
    {
        text.push_str(&format!(
            "  straggler: rank {} ({}), {} {}: {} ms, the ranks' median {} ms\n",
            straggler["rank"],
            straggler["host"].as_str().unwrap_or("?"),
            straggler["job"].as_str().unwrap_or("?"),
            straggler["dir"].as_str().unwrap_or("?"),
            straggler["runtime_ms"],
            straggler["median_ms"]
        ));
    }
    text
}
