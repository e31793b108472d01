//! What every kind of job does as it ends: its CPU use, its engine's line in
//! the report, and, for jobs that ran no engine of the library's, their
//! outcome handed on as an engine job's is.

use std::time::SystemTime;

use hybrio::engine::{Engine, EngineCounters};

use crate::options::JobOptions;
use crate::outcome::{IoFailure, JobOutcome};
use crate::progress::Progress;
use crate::stats::{CpuUsage, JobStats};

/// The outcome of a job that ran no engine of the library's (the file
/// operations, cpuio, exec): its figures, its requests submitted and
/// completed, its failure (one more request, failed), handed to `progress`
/// as a job's outcome is.
pub(super) fn finish_without_engine(
    progress: &Progress,
    stats: JobStats,
    started: SystemTime,
    engine: String,
    (submitted, completed): (u64, u64),
    failure: Option<IoFailure>,
) -> JobOutcome {
    let outcome = JobOutcome {
        stats,
        started,
        submitted,
        completed,
        failed: u64::from(failure.is_some()),
        first_error: failure.as_ref().map_or(0, |f| f.errno),
        failure,
        counters: EngineCounters::default(),
        engine,
        cache_dropped_at: None,
        abandoned: 0,
        verify: None,
        steady: None,
        latency_target: None,
        intervals: Vec::new(),
    };
    progress.put_outcome(outcome.clone());
    progress.finish();
    outcome
}

/// The engine's line in the report: fio's `net` engine is `psync`'s calls.
pub(super) fn engine_line(options: &JobOptions, engine: &dyn Engine) -> String {
    if options.ioengine == "net" {
        format!("net ({}: recv/send)", engine.description())
    } else {
        engine.description()
    }
}

/// The calling thread's CPU use since `before` (zeros if either reading failed).
pub(super) fn cpu_since(before: Option<&hybrio::rusage::ThreadUsage>) -> CpuUsage {
    match (before, hybrio::rusage::thread_usage().ok()) {
        (Some(before), Some(after)) => {
            let used = after.since(before);
            CpuUsage {
                usr_ns: used.user_ns,
                sys_ns: used.system_ns,
                ctx: used.voluntary_ctx + used.involuntary_ctx,
                majf: used.major_faults,
                minf: used.minor_faults,
            }
        }
        _ => CpuUsage {
            usr_ns: 0,
            sys_ns: 0,
            ctx: 0,
            majf: 0,
            minf: 0,
        },
    }
}
