//! Jobs that end other jobs: fio's `exitall` (once any job of the run sets
//! it, every job that ends ends others), `exitall_on_error` (a job that
//! fails ends others), and `exit_what`, which others: those of its
//! reporting group (`group`, the default), every job running (`stonewall`:
//! the groups after it still run), or every job of the run (`all`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::options::ExitWhat;

/// The run's stop signals, shared by its jobs.
#[derive(Debug)]
pub struct RunStops {
    /// Some job sets `exitall`: every job that ends ends others.
    exitall: bool,
    all: AtomicBool,
    running: AtomicBool,
    groups: Vec<AtomicBool>,
}

impl RunStops {
    /// Signals for a run of `groups` reporting groups; `exitall` when any
    /// of its jobs sets it.
    pub fn new(groups: usize, exitall: bool) -> Arc<RunStops> {
        Arc::new(RunStops {
            exitall,
            all: AtomicBool::new(false),
            running: AtomicBool::new(false),
            groups: (0..groups).map(|_| AtomicBool::new(false)).collect(),
        })
    }

    /// The signal one job of `group` heeds.
    pub fn for_job(self: &Arc<RunStops>, group: usize) -> JobStop {
        JobStop {
            stops: Arc::clone(self),
            group,
        }
    }

    /// Whether the jobs not yet started are not to start.
    pub fn all_stopped(&self) -> bool {
        self.all.load(Ordering::Relaxed)
    }

    /// A set of jobs that ran together has ended: a `stonewall` stop was
    /// theirs only.
    pub fn segment_done(&self) {
        self.running.store(false, Ordering::Relaxed);
    }
}

/// What one job heeds, and how it ends others.
#[derive(Debug, Clone)]
pub struct JobStop {
    stops: Arc<RunStops>,
    group: usize,
}

impl JobStop {
    /// Whether another job has ended this one.
    #[inline]
    pub fn requested(&self) -> bool {
        let stops = &self.stops;
        stops.all.load(Ordering::Relaxed)
            || stops.running.load(Ordering::Relaxed)
            || stops
                .groups
                .get(self.group)
                .is_some_and(|g| g.load(Ordering::Relaxed))
    }

    /// This job has ended (`failed` or not): ends others as `exit_what`
    /// says, if `exitall` is on in the run or the job failed with
    /// `exitall_on_error`. Returns whether it ended any.
    pub fn job_ended(&self, failed: bool, on_error: bool, what: ExitWhat) -> bool {
        if !(self.stops.exitall || (on_error && failed)) {
            return false;
        }
        let flag = match what {
            ExitWhat::Group => match self.stops.groups.get(self.group) {
                Some(flag) => flag,
                None => return false,
            },
            ExitWhat::Stonewall => &self.stops.running,
            ExitWhat::All => &self.stops.all,
        };
        flag.store(true, Ordering::Relaxed);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_ends_its_group_the_running_jobs_or_all() {
        let stops = RunStops::new(3, true);
        let (a, b, c) = (stops.for_job(0), stops.for_job(0), stops.for_job(1));
        assert!(!b.requested());
        a.job_ended(false, false, ExitWhat::Group);
        assert!(b.requested() && !c.requested());
        c.job_ended(false, false, ExitWhat::Stonewall);
        assert!(stops.for_job(2).requested());
        stops.segment_done();
        assert!(!stops.for_job(2).requested() && !stops.all_stopped());
        c.job_ended(false, false, ExitWhat::All);
        assert!(stops.all_stopped() && stops.for_job(2).requested());
    }

    #[test]
    fn without_exitall_only_a_failure_with_exitall_on_error_ends_others() {
        let stops = RunStops::new(1, false);
        let job = stops.for_job(0);
        assert!(!job.job_ended(true, false, ExitWhat::Group));
        assert!(!job.job_ended(false, true, ExitWhat::Group));
        assert!(!job.requested());
        assert!(job.job_ended(true, true, ExitWhat::Group));
        assert!(job.requested());
    }
}
