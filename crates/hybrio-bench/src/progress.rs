//! The live status line on a terminal, like fio's
//! `Jobs: 1 (f=1): [W(1)][45.0%][w=897MiB/s][w=115k IOPS][eta 00m:05s]`.
//!
//! Each job publishes its totals every quarter second from its own loop (a
//! few atomic stores, off the per-I/O path); the main thread turns them into
//! rates once a second. Nothing is printed unless stderr is a terminal.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::options::JobOptions;
use crate::outcome::JobOutcome;
use crate::output::num;
use crate::stats::{DataDir, JobStats};

/// How often a job publishes its totals, in ns.
pub const PUBLISH_INTERVAL_NS: u64 = 250_000_000;

/// A running job's totals, as last published.
#[derive(Debug, Default)]
pub struct Progress {
    /// Reads, writes, trims.
    bytes: [AtomicU64; 3],
    ios: [AtomicU64; 2],
    /// How far the job is, in millionths.
    done_ppm: AtomicU64,
    finished: AtomicU64,
    /// A `--status-interval` report wants the job's figures so far.
    outcome_wanted: AtomicBool,
    /// The figures so far (or, once the job finished, its final ones).
    outcome: Mutex<Option<JobOutcome>>,
    /// Its group's `ramp_size` ramp is over (`group_reporting`).
    ramp_over: AtomicBool,
}

impl Progress {
    /// Publishes the job's totals and how far it is (0.0 to 1.0).
    pub fn publish(&self, stats: &JobStats, done: f64) {
        for (i, dir) in [DataDir::Read, DataDir::Write].into_iter().enumerate() {
            self.ios[i].store(stats.dir(dir).total_ios(), Ordering::Relaxed);
        }
        for (i, dir) in [DataDir::Read, DataDir::Write, DataDir::Trim]
            .into_iter()
            .enumerate()
        {
            self.bytes[i].store(stats.dir(dir).io_bytes(), Ordering::Relaxed);
        }
        self.done_ppm
            .store((done.clamp(0.0, 1.0) * 1e6) as u64, Ordering::Relaxed);
    }

    /// Marks the job done.
    pub fn finish(&self) {
        self.finished.store(1, Ordering::Release);
    }

    /// Whether the job is done (its final figures are then in [`Self::outcome`]).
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire) != 0
    }

    /// Asks the job for its figures so far; it leaves them within one
    /// publishing interval.
    pub fn want_outcome(&self) {
        self.outcome_wanted.store(true, Ordering::Release);
    }

    /// Whether figures were asked for and not yet left.
    pub fn outcome_wanted(&self) -> bool {
        self.outcome_wanted.load(Ordering::Acquire)
    }

    /// Leaves the job's figures for whoever asked.
    pub fn put_outcome(&self, outcome: JobOutcome) {
        *self.outcome.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
        self.outcome_wanted.store(false, Ordering::Release);
    }

    /// The figures last left, if any.
    pub fn outcome(&self) -> Option<JobOutcome> {
        self.outcome
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Bytes done as last published: reads, writes, trims.
    pub fn bytes(&self) -> [u64; 3] {
        self.bytes.each_ref().map(|b| b.load(Ordering::Relaxed))
    }

    /// Whether another job of its group found the group's ramp over.
    pub fn ramp_over(&self) -> bool {
        self.ramp_over.load(Ordering::Relaxed)
    }

    fn totals(&self) -> [u64; 4] {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        [
            load(&self.bytes[0]),
            load(&self.bytes[1]),
            load(&self.ios[0]),
            load(&self.ios[1]),
        ]
    }
}

/// The jobs of a reporting group that ramp together (`ramp_size` with
/// `group_reporting`): fio 3.42 ends their ramp once their bytes together
/// reach it.
#[derive(Debug, Clone)]
pub struct RampGroup(pub Vec<Arc<Progress>>);

impl RampGroup {
    /// The bytes the group's other jobs have done, as they last published
    /// them (a quarter second old at most).
    pub fn others_bytes(&self, me: &Progress) -> u64 {
        self.0
            .iter()
            .filter(|p| !std::ptr::eq(p.as_ref(), me))
            .map(|p| p.bytes().iter().sum::<u64>())
            .sum()
    }

    /// Ends the ramp of every job of the group.
    pub fn end_ramp(&self) {
        for p in &self.0 {
            p.ramp_over.store(true, Ordering::Relaxed);
        }
    }
}

/// Turns successive looks at the jobs' progress into status lines.
#[derive(Debug)]
pub struct StatusLine {
    started: Instant,
    last: Instant,
    last_totals: [u64; 4],
}

impl Default for StatusLine {
    fn default() -> Self {
        StatusLine {
            started: Instant::now(),
            last: Instant::now(),
            last_totals: [0; 4],
        }
    }
}

impl StatusLine {
    /// The line for now: running jobs, per-direction rates since the last
    /// line, the least advanced job's progress, and its estimated time left.
    pub fn render(&mut self, jobs: &[(&JobOptions, &Progress)]) -> String {
        let now = Instant::now();
        let mut totals = [0u64; 4];
        for (_, progress) in jobs {
            for (sum, value) in totals.iter_mut().zip(progress.totals()) {
                *sum += value;
            }
        }
        let seconds = now.duration_since(self.last).as_secs_f64().max(1e-3);
        let previous = self.last_totals;
        let rate = |i: usize| (totals[i].saturating_sub(previous[i]) as f64 / seconds) as u64;
        let running: Vec<&&JobOptions> = jobs
            .iter()
            .filter(|(_, p)| p.finished.load(Ordering::Relaxed) == 0)
            .map(|(o, _)| o)
            .collect();
        let kinds: String = running
            .iter()
            .map(|o| match (o.rw.reads(), o.rw.writes()) {
                (true, true) => 'M',
                (true, false) => 'R',
                _ => 'W',
            })
            .collect();
        let done = jobs
            .iter()
            .filter(|(_, p)| p.finished.load(Ordering::Relaxed) == 0)
            .map(|(_, p)| p.done_ppm.load(Ordering::Relaxed) as f64 / 1e6)
            .fold(1.0, f64::min);
        let elapsed = now.duration_since(self.started).as_secs_f64();
        let eta = if done > 0.0 {
            (elapsed / done - elapsed).max(0.0) as u64
        } else {
            0
        };
        self.last = now;
        self.last_totals = totals;
        format!(
            "Jobs: {} (f={}): [{}][{:.1}%][r={},w={}][r={},w={} IOPS][eta {:02}m:{:02}s]",
            running.len(),
            running.len(),
            kinds,
            done * 100.0,
            num::bw(rate(0), true),
            num::bw(rate(1), true),
            num::count(rate(2)),
            num::count(rate(3)),
            eta / 60,
            eta % 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::RwMode;
    use crate::stats::StatsConfig;

    #[test]
    fn the_line_shows_rates_progress_and_eta() {
        let reader = JobOptions {
            rw: RwMode::RandRead,
            ..JobOptions::default()
        };
        let progress = Progress::default();
        let mut stats = JobStats::new(StatsConfig::default(), 0);
        let mut line = StatusLine::default();
        for _ in 0..1000 {
            stats.record_io(DataDir::Read, 4096, false, None, 1000);
        }
        progress.publish(&stats, 0.5);
        let text = line.render(&[(&reader, &progress)]);
        assert!(text.starts_with("Jobs: 1 (f=1): [R][50.0%][r="), "{text}");
        assert!(
            text.contains(",w=0B/s]") || text.contains(",w=0KiB/s]"),
            "{text}"
        );
        progress.finish();
        assert!(
            line.render(&[(&reader, &progress)])
                .starts_with("Jobs: 0 (f=0): [][100.0%]")
        );
    }
}
