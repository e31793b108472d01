//! What the reports are made from: a run's jobs, groups and clients, and
//! the figures every format computes alike. Apart from `mod.rs`, which
//! gathers the formats, as each format reads these.

use std::time::SystemTime;

use crate::stats::{GroupSummary, JobStats};

/// What the start banner and the report say about a job's definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobDescription {
    /// Job name.
    pub name: String,
    /// fio's `rw` string, e.g. `randrw`.
    pub rw: String,
    /// Block size range (min, max) for reads, writes and trims.
    pub bs: [(u64, u64); 3],
    /// I/O engine name.
    pub ioengine: String,
    /// Configured queue depth.
    pub iodepth: u32,
    /// fio's `kb_base`: 1000 prints sizes and rates in SI units first.
    pub kb_base: u32,
    /// A network job: rates print in bits per second, as fio's `net` engine's.
    pub bits: bool,
}

/// The report of one job, or of a group of jobs merged for `group_reporting`.
#[derive(Clone, Debug)]
pub struct JobReport {
    /// The job's definition (the first job's, for a merged group).
    pub desc: JobDescription,
    /// Reporting group.
    pub groupid: u32,
    /// Jobs aggregated into this report: 1, or numjobs with group_reporting.
    pub jobs: u32,
    /// Error number (errno), 0 when the job succeeded.
    pub error: i32,
    /// Process id (of the first job).
    pub pid: u32,
    /// Time printed in the normal header (as `ctime()`).
    pub start_time: SystemTime,
    /// JSON `job_start`: start of the job in ms.
    pub job_start_ms: u64,
    /// JSON `elapsed`: seconds since the run started.
    pub elapsed_s: u64,
    /// JSON `job options`: the options set for this job, in order.
    pub options: Vec<(String, String)>,
    /// The statistics.
    pub stats: JobStats,
    /// With `continue_on_error`: how many requests failed, and the first errno.
    pub errors: Option<ErrorCount>,
    /// The engine as set up, in one line (hybrio's own line in the normal output).
    pub engine: Option<String>,
    /// The adaptive engine's choices (summed over a merged group).
    pub paths: Option<hybrio::engine::PathCounts>,
    /// Transfers an error cut short after some bytes, and its errno.
    pub short_errors: hybrio::engine::ShortErrors,
    /// `unified_rw_reporting`: with `Mixed`, `stats` already holds every
    /// direction in the read slot, which the formats name `mixed`.
    pub unified: crate::options::UnifiedRw,
    /// The steady-state window and verdict (`ss_dur`); a merged group's is
    /// its first job's (each job judges its own rate).
    pub steady: Option<crate::stats::SteadyState>,
    /// Where `latency_target`'s search for a depth ended.
    pub latency_target: Option<crate::stats::LatencyTargetReport>,
}

/// Failed requests of a job that went on after them (fio's `total_err`, `first_error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCount {
    /// Requests that failed.
    pub total: u64,
    /// errno of the first, 0 if none.
    pub first: i32,
}

/// One reporting group's "Run status group" figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupReport {
    /// Group id.
    pub groupid: u32,
    /// Figures computed by [`crate::stats::group_summary`].
    pub summary: GroupSummary,
}

/// One client's (an MPI rank's) own job reports, as fio's client mode
/// reports each server's.
#[derive(Clone, Debug)]
pub struct ClientReport {
    /// Its host (JSON `hostname`).
    pub hostname: String,
    /// Its rank (JSON `port`, where fio puts the server's port).
    pub port: u32,
    /// Its jobs, in the run's job order.
    pub jobs: Vec<JobReport>,
    /// What the block devices under its files did (JSON `disk_util`, each
    /// with its `hostname` and `port`).
    pub disk_util: Vec<crate::diskstats::DiskUtil>,
}

/// Everything one report prints.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Version string, e.g. `hybrio-0.1.0` (JSON `fio version`).
    pub version: String,
    /// When the report was made (JSON `timestamp`, `timestamp_ms`, `time`).
    pub time: SystemTime,
    /// Options of the `[global]` section, in order (JSON `global options`).
    pub global_options: Vec<(String, String)>,
    /// The job reports, in job order.
    pub jobs: Vec<JobReport>,
    /// The group summaries, in group order.
    pub groups: Vec<GroupReport>,
    /// What the block devices under the jobs' files did (fio's "Disk stats").
    pub disk_util: Vec<crate::diskstats::DiskUtil>,
    /// Emitted as a top-level `hybrio` key in JSON when present.
    pub extra: Option<serde_json::Value>,
    /// fio's client mode (`hybrio --mpi`): each client's own jobs, with
    /// [`RunReport::jobs`] all clients merged. When not empty, JSON has
    /// fio's `client_stats` in the place of `jobs`.
    pub clients: Vec<ClientReport>,
    /// The fio the report is written as (the oldest of the jobs'
    /// `fio_compat`): where fio's formats changed, that fio's.
    pub fio_compat: crate::fio_version::FioVersion,
}

impl RunReport {
    /// The summary of group `groupid`, if the report has it.
    pub fn group(&self, groupid: u32) -> Option<&GroupSummary> {
        self.groups
            .iter()
            .find(|g| g.groupid == groupid)
            .map(|g| &g.summary)
    }
}

/// The group line's figures of the jobs of group `groupid` in `jobs`, made
/// from their statistics (a client's own share of its group, or a group
/// whose jobs' statistics were merged from several processes).
pub fn summary_of_group(jobs: &[JobReport], groupid: u32) -> GroupSummary {
    let members: Vec<&JobStats> = jobs
        .iter()
        .filter(|j| j.groupid == groupid)
        .map(|j| &j.stats)
        .collect();
    crate::stats::group_summary(&members)
}

/// A JSON document on one line, for JSON Lines: the whitespace between
/// tokens goes, strings and numbers stay as written (so fio's number
/// formats, `0.000000`, survive, which a parse and re-print would lose).
pub fn json_line(document: &str) -> String {
    let mut line = String::with_capacity(document.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in document.chars() {
        if in_string {
            line.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            line.push(c);
        } else if !c.is_whitespace() {
            line.push(c);
        }
    }
    line
}

/// fio's share of the group's aggregate bandwidth (`convert_agg_kbytes_percent()`
/// in 3.33): the job's mean KiB/s sample, truncated to an integer, over the
/// group's aggregate KiB/s, capped at 100; 100 when the group's aggregate is
/// at most 1024 B/s or unknown.
pub(crate) fn percent_of_agg(agg_bytes_per_sec: Option<u64>, mean_kib: f64) -> f64 {
    match agg_bytes_per_sec {
        Some(agg) if agg > 1024 => {
            let p = f64::from(mean_kib as i32) * 100.0 / (agg as f64 / 1024.0);
            p.min(100.0)
        }
        _ => 100.0,
    }
}

/// Text for an error number, as `strerror()` gives it.
pub(crate) fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agg_percentage_as_fio() {
        // JSON of the distro fio-3.33: bw_mean 14294192, bw_bytes 17161192471
        // -> "bw_agg" : 85.292748
        let p = percent_of_agg(Some(17_161_192_471), 14_294_192.0);
        assert_eq!(format!("{p:.6}"), "85.292748");
        assert_eq!(percent_of_agg(Some(1024), 5.0), 100.0);
        assert_eq!(percent_of_agg(None, 5.0), 100.0);
        assert_eq!(percent_of_agg(Some(2048), 5.0), 100.0);
        // the mean is truncated to an integer first
        assert_eq!(percent_of_agg(Some(1024 * 1000), 10.9), 1.0);
    }

    #[test]
    fn json_line_keeps_strings_and_number_formats() {
        let doc =
            "{\n  \"fio version\" : \"a \\\" b\",\n  \"iops\" : 0.000000,\n  \"x\" : [ 1, 2 ]\n}\n";
        let line = json_line(doc);
        assert_eq!(
            line,
            r#"{"fio version":"a \" b","iops":0.000000,"x":[1,2]}"#
        );
        let a: serde_json::Value = serde_json::from_str(doc).unwrap();
        let b: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn strerror_text() {
        assert_eq!(strerror(5), "Input/output error");
    }
}
