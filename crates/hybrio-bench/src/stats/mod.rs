//! Per-job I/O statistics, recorded the way fio records them.
//!
//! The job loop owns one [`JobStats`] per job and calls its `record_*`
//! methods on the hot path; they are allocation-free and cheap: integer
//! adds, one Welford update per latency kind and one histogram increment per
//! kept histogram (measured at about 10 ns per `record_io` for an I/O without
//! submission latency, where lat is clat and is not stored twice, and about
//! 18 ns with one, on a 2-vCPU EPYC VM). [`JobStats::sample`] is a single
//! comparison until the bandwidth/IOPS window (500 ms by default) has elapsed.
//!
//! Times are nanoseconds on the job's own clock (`start`, `now`), as read
//! from [`hybrio::clock::Clock`]: cheaper than `Instant` on the hot path.
//!
//! After the run, [`JobStats::finish`] stamps the runtimes, jobs of a
//! reporting group are combined with [`JobStats::merge`] (fio's
//! `sum_thread_stats()`), and [`group_summary`] computes fio's
//! "Run status group" figures.
//!
//! Every rule here follows fio's stat.c / io_u.c / ioengines.c: see the
//! documentation of each item for the fio function it mirrors.

mod config;
mod dir;
mod group;
mod hist;
mod job;
mod latstat;
mod steady;
mod timeline;

pub use config::{DEFAULT_PERCENTILES, DisabledLatencies, StatsConfig};
pub use dir::{DirStats, SyncStats};
pub use group::{GroupDirSummary, GroupSummary, group_summary};
pub use hist::{
    FIO_PLAT_NR, GROUPING_POWER, LatHistogram, MAX_PERCENTILES, MAX_VALUE_POWER, bucket_value,
    effective_percentiles, fio_percentile_rank,
};
pub use job::{
    BATCH_LABELS, CpuUsage, DEPTH_LABELS, DataDir, JobStats, LAT_LABELS, LAT_M_LABELS, LAT_M_NR,
    LAT_N_NR, LAT_U_NR, LatencyDistribution, LatencyTargetReport, MAP_NR,
};
pub use latstat::LatStat;
pub use steady::{Criterion, DEFAULT_INTERVAL_US, Measure, SteadySettings, SteadyState, Totals};
pub use timeline::{PathPoint, Timeline, TimelinePoint};

#[cfg(test)]
mod tests;
