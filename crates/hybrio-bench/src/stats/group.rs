//! fio's "Run status group" figures: a reporting group's totals.

use serde::{Deserialize, Serialize};

use super::job::{DataDir, JobStats};

/// One direction of a "Run status group" line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDirSummary {
    /// Aggregate bandwidth in bytes/s: total bytes * 1000 / longest runtime.
    pub agg_bw: u64,
    /// Lowest per-job bandwidth in bytes/s.
    pub min_bw: u64,
    /// Highest per-job bandwidth in bytes/s.
    pub max_bw: u64,
    /// Total bytes of the group.
    pub io_bytes: u64,
    /// Shortest job runtime in ms.
    pub min_run_ms: u64,
    /// Longest job runtime in ms.
    pub max_run_ms: u64,
}

/// fio's per-group run statistics (`struct group_run_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSummary {
    /// Per direction; `None` where no job of the group has runtime.
    pub dirs: [Option<GroupDirSummary>; 3],
}

impl GroupSummary {
    /// The summary of one direction, if any job did it.
    pub fn dir(&self, dir: DataDir) -> Option<&GroupDirSummary> {
        self.dirs[dir.index()].as_ref()
    }
}

/// Computes the "Run status group" figures from the statistics of the jobs
/// of one group, as `__show_run_stats()` does from its per-report stats:
/// a direction counts for a job when its runtime is non-zero; per-job
/// bandwidth is `io_bytes * 1000 / runtime_ms`; the aggregate is the group's
/// bytes * 1000 / the longest runtime.
///
/// Pass the unmerged per-job stats for fio's behaviour without
/// `group_reporting`. (With `group_reporting` fio computes these from the
/// merged report, so min and max then both equal the aggregate; pass the
/// merged stats to reproduce that.)
pub fn group_summary(jobs: &[&JobStats]) -> GroupSummary {
    let mut out = GroupSummary::default();
    for dir in DataDir::ALL {
        let mut acc: Option<GroupDirSummary> = None;
        for job in jobs {
            let d = job.dir(dir);
            if d.runtime_ms == 0 {
                continue;
            }
            let bw = d.bw_bytes_per_sec();
            let g = acc.get_or_insert(GroupDirSummary {
                agg_bw: 0,
                min_bw: u64::MAX,
                max_bw: 0,
                io_bytes: 0,
                min_run_ms: u64::MAX,
                max_run_ms: 0,
            });
            g.min_bw = g.min_bw.min(bw);
            g.max_bw = g.max_bw.max(bw);
            g.min_run_ms = g.min_run_ms.min(d.runtime_ms);
            g.max_run_ms = g.max_run_ms.max(d.runtime_ms);
            g.io_bytes = g.io_bytes.saturating_add(d.io_bytes);
        }
        if let Some(g) = &mut acc {
            g.agg_bw = u64::try_from(u128::from(g.io_bytes) * 1000 / u128::from(g.max_run_ms))
                .unwrap_or(u64::MAX);
        }
        out.dirs[dir.index()] = acc;
    }
    out
}
