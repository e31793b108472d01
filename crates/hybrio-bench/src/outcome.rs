//! What a job hands to the report when it ends: its figures, its first
//! failure, what the engine and verify counted.
//!
//! A module of its own, below the runner and the status line alike: the
//! status line holds a running job's figures so far (`--status-interval`)
//! while the runner publishes to it, so neither may own the type.

use std::time::{Duration, SystemTime};

use hybrio::engine::EngineCounters;

use crate::stats::{JobStats, LatencyTargetReport, SteadyState};

/// A failed request that stopped the job, as fio reports `err=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoFailure {
    /// errno.
    pub errno: i32,
    /// A one-line description: op, file, offset and the error.
    pub message: String,
}

/// What one finished job hands to the report (or a running one, for a
/// `--status-interval` report: its figures so far).
#[derive(Debug, Clone)]
pub struct JobOutcome {
    /// Statistics.
    pub stats: JobStats,
    /// The first failed request, if any.
    pub failure: Option<IoFailure>,
    /// Wall-clock time the job started.
    pub started: SystemTime,
    /// Requests submitted: must equal `completed + failed` at the end.
    pub submitted: u64,
    /// Requests that completed without error.
    pub completed: u64,
    /// Requests that completed with an error (stopping the job, or counted
    /// under `continue_on_error`).
    pub failed: u64,
    /// errno of the first failed request, 0 if none.
    pub first_error: i32,
    /// What the engine counted: resubmitted short transfers, retries, injected faults.
    pub counters: EngineCounters,
    /// The engine as set up, e.g. which io_uring ring flags the kernel took.
    pub engine: String,
    /// When `drop_cache_after` dropped the files' page cache, counted from
    /// the job's I/O start; `None` if it never did.
    pub cache_dropped_at: Option<Duration>,
    /// Requests the engine still held when the job gave up on them (it
    /// stopped making progress, or kept failing); 0 normally.
    pub abandoned: u64,
    /// What verify checked, when the job verifies.
    pub verify: Option<VerifyCounts>,
    /// The steady-state window and verdict, when the job checks it (`ss_dur`).
    pub steady: Option<SteadyState>,
    /// Where `latency_target`'s search for a depth ended.
    pub latency_target: Option<LatencyTargetReport>,
    /// `log_hist_msec`'s windows: each one's completion latency percentiles.
    pub intervals: Vec<crate::hist_log::IntervalPercentiles>,
}

/// What verify adds to a job's outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyCounts {
    /// Blocks (verify intervals) read back and checked.
    pub blocks: u64,
    /// Those that failed.
    pub bad_blocks: u64,
}
