//! What a running job tells the status line, and the stall watchdog.

use std::time::Duration;

use super::state::IoLoop;
use crate::outcome::JobOutcome;
use crate::progress::PUBLISH_INTERVAL_NS;
use crate::runner::finish::{cpu_since, engine_line};
use crate::stats::{DataDir, PathPoint};

/// Reaps in a row that return nothing at once (a wait in the kernel returns
/// with a completion, however long it takes), together with the job's stall
/// limit in time, after which the job has stopped making progress. Both: a
/// thread that loses its CPU to others sees long gaps, but not this many
/// empty reaps in a row unless it spins.
const MAX_EMPTY_REAPS: u32 = 1000;

/// What a job that stopped making progress fails with.
const ETIMEDOUT: i32 = 110;

impl IoLoop<'_> {
    /// Publishes the totals for the status line, with how far the job is:
    /// by time when it has a deadline, by bytes when it is limited by size.
    #[cold]
    pub(super) fn publish(&mut self, deadline: Option<u64>) {
        // The report's picture of the adaptive engine's choices over time.
        if let Some(paths) = self.job.engine.counters().paths {
            self.stats.note_paths(PathPoint {
                inline: paths.inline,
                asynchronous: paths.asynchronous,
                switches: paths.switches,
            });
        }
        let by_time = deadline.map_or(0.0, |d| self.now as f64 / d.max(1) as f64);
        let by_size = if self.job.options.time_based {
            0.0
        } else {
            self.issued_bytes as f64 / self.job.total_bytes.max(1) as f64
        };
        self.progress.publish(&self.stats, by_time.max(by_size));
        if self.progress.outcome_wanted() {
            self.progress.put_outcome(self.outcome_so_far());
        }
        self.next_publish = self.now + PUBLISH_INTERVAL_NS;
    }

    /// The job's figures until now, as if it ended here (requests in flight
    /// are not in them yet).
    #[cold]
    pub(super) fn outcome_so_far(&self) -> JobOutcome {
        let mut stats = self.stats.clone();
        let counters = self.job.engine.counters();
        stats.add_short_ios(DataDir::Read, counters.short_ios[0]);
        stats.add_short_ios(DataDir::Write, counters.short_ios[1]);
        stats.finish(
            Duration::from_nanos(self.now.saturating_sub(self.measured_from)),
            cpu_since(self.usage_before.as_ref()),
        );
        JobOutcome {
            stats,
            failure: self.failure.clone(),
            started: self.started,
            submitted: self.submitted,
            completed: self.completed,
            failed: self.failed,
            first_error: self.first_error,
            counters,
            engine: engine_line(&self.job.options, self.job.engine.as_ref()),
            cache_dropped_at: self.cache_dropped_at.map(Duration::from_nanos),
            abandoned: self.abandoned,
            verify: self.verify.as_ref().map(|v| v.counts()),
            steady: self.steady.clone(),
            latency_target: self.latency_target.as_ref().map(|t| t.report()),
            // A status report's figures so far: the windows are reported once, at the end.
            intervals: Vec::new(),
        }
    }

    /// Starts the watchdog's counts afresh if requests completed since it
    /// last looked.
    #[cold]
    pub(super) fn notice_progress(&mut self, now: u64) {
        let completions = self.completed + self.failed;
        if completions != self.progress_mark {
            self.progress_mark = completions;
            self.last_progress = now;
            self.empty_reaps = 0;
            self.errors_since_progress = 0;
        }
    }

    /// A reap that should have waited for a completion came back without
    /// one: the engine is briefly busy, or no longer makes progress. After
    /// the job's stall limit and [`MAX_EMPTY_REAPS`] of that, the job ends,
    /// naming the engine's state.
    #[cold]
    pub(super) fn fruitless_reap(&mut self, min: usize, now: u64) {
        self.notice_progress(now);
        self.empty_reaps = self.empty_reaps.saturating_add(1);
        let stalled_for = now.saturating_sub(self.last_progress);
        if stalled_for < self.job.stall_limit_ns
            || self.empty_reaps < MAX_EMPTY_REAPS
            || self.stalled
        {
            std::thread::yield_now();
            return;
        }
        self.stalled = true;
        let in_flight = self.slots.len() - self.free.len();
        let message = format!(
            "no progress for {:.1} s: {} reaps in a row returned no completion (reap({min})) with {in_flight} requests in flight ({}; {})",
            stalled_for as f64 / 1e9,
            self.empty_reaps,
            self.job.engine.description(),
            self.job.engine.state()
        );
        if let Some(failure) = &mut self.failure {
            failure.message = format!("{}; then {message}", failure.message);
        } else {
            self.fail(ETIMEDOUT, message);
        }
    }
}
