//! fio's file-operation engines: `filecreate`, `filestat`, `filedelete`,
//! and fio 3.37's `dircreate`, `dirstat`, `dirdelete`. Each I/O of such a
//! job is one of its files created (`open(O_CREAT)`, `mkdir`), looked up
//! (`stat`, `lstat` or `statx`) or deleted (`unlink`, `rmdir`), one after
//! another in the job's thread, timed as fio times them: the system call
//! alone is the I/O's completion latency. Metadata-heavy workloads (a mail
//! spool, a build tree, an object store's index) are made of these.
//!
//! As fio counts them, each file is `filesize` bytes of I/O in the job's
//! direction (reads, unless the job writes); fio splits a file into
//! `filesize / bs` I/Os that do nothing and counts one latency per file,
//! hybrio counts one I/O per file.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use hybrio::clock::Clock;

use super::finish::{cpu_since, finish_without_engine};
use super::stop::JobStop;
use crate::layout::FilePlan;
use crate::logs::JobLogs;
use crate::options::{FileOp, JobOptions, StatType};
use crate::outcome::{IoFailure, JobOutcome};
use crate::progress::Progress;
use crate::stats::{DataDir, JobStats};

/// How often the status line hears from the job.
const PUBLISH_INTERVAL_NS: u64 = 100_000_000;

/// A job of a file-operation engine, ready to run.
#[derive(Debug)]
pub struct FileOpsJob {
    options: JobOptions,
    op: FileOp,
    files: Vec<(PathBuf, u64)>,
    stop: Option<JobStop>,
    /// The job's number in the run, from 1 (its logs' names).
    number: usize,
}

impl FileOpsJob {
    /// The job over the files `plans` names.
    pub fn new(options: JobOptions, op: FileOp, plans: &[FilePlan], number: usize) -> FileOpsJob {
        FileOpsJob {
            options,
            op,
            files: plans.iter().map(|p| (p.path.clone(), p.size)).collect(),
            stop: None,
            number,
        }
    }

    /// What other jobs end it by (`exitall`).
    pub fn set_stop(&mut self, stop: JobStop) {
        self.stop = Some(stop);
    }

    fn stopping(&self) -> bool {
        hybrio::interrupt::requested() || self.stop.as_ref().is_some_and(JobStop::requested)
    }

    /// Does the operation on one file.
    fn apply(&self, path: &PathBuf) -> std::io::Result<()> {
        use rustix::fs::{AtFlags, CWD, Mode, OFlags, StatxFlags};
        let done = match self.op {
            // Closed after the clock is read: fio times the open alone.
            FileOp::Create => rustix::fs::open(
                path,
                OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
            .map(drop),
            FileOp::Stat(StatType::Stat) | FileOp::DirStat(StatType::Stat) => {
                rustix::fs::stat(path).map(drop)
            }
            FileOp::Stat(StatType::Lstat) | FileOp::DirStat(StatType::Lstat) => {
                rustix::fs::lstat(path).map(drop)
            }
            FileOp::Stat(StatType::Statx) | FileOp::DirStat(StatType::Statx) => {
                rustix::fs::statx(CWD, path, AtFlags::empty(), StatxFlags::ALL).map(drop)
            }
            FileOp::Delete => rustix::fs::unlink(path),
            // fio 3.42 asks mkdir for mode S_IFDIR, which leaves a directory
            // no one may enter (d---------); hybrio makes it 0700, as fio's
            // own setup of dirstat's directories does.
            FileOp::DirCreate => rustix::fs::mkdir(path, Mode::from_raw_mode(0o700)),
            FileOp::DirDelete => rustix::fs::rmdir(path),
        };
        done.map_err(std::io::Error::from)
    }

    /// Runs the job: its files in order, `loops` times, or until its
    /// runtime is over with `time_based`.
    pub fn run(self, progress: &Progress) -> JobOutcome {
        let options = &self.options;
        let usage_before = hybrio::rusage::thread_usage().ok();
        let started = SystemTime::now();
        let clock = Clock::new();
        let mut stats = JobStats::new(super::io_loop::stats_config(options), 0);
        let dir = if options.rw.reads() {
            DataDir::Read
        } else {
            DataDir::Write
        };
        let deadline = options.runtime.map(|r| r.as_nanos() as u64);
        let passes = if options.time_based {
            u64::MAX
        } else {
            u64::from(options.loops.max(1))
        };
        let total = self.files.len() as u64 * passes.min(u64::from(options.loops.max(1)));
        let (mut done, mut next_publish) = (0u64, 0u64);
        let mut failure = None;
        // fio logs each operation's latency (write_lat_log's clat log).
        let mut logs = match JobLogs::open(options, self.number) {
            Ok(logs) => logs,
            Err(error) => {
                failure = Some(log_failure(&error));
                None
            }
        };
        let passes = if failure.is_some() { 0 } else { passes };
        'passes: for _ in 0..passes {
            for (path, size) in &self.files {
                let now = clock.now();
                if deadline.is_some_and(|d| now >= d) || self.stopping() {
                    break 'passes;
                }
                if now >= next_publish {
                    let by_time = deadline.map_or(0.0, |d| now as f64 / d.max(1) as f64);
                    progress.publish(&stats, by_time.max(done as f64 / total.max(1) as f64));
                    next_publish = now + PUBLISH_INTERVAL_NS;
                }
                let result = self.apply(path);
                let latency = clock.now() - now;
                match result {
                    Ok(()) => {
                        stats.record_io(dir, *size, false, None, latency);
                        if let Some(log) = logs.as_mut()
                            && let Err(error) = log.record_file_op(now + latency, dir, latency)
                        {
                            failure = Some(log_failure(&error));
                            break 'passes;
                        }
                    }
                    Err(error) => {
                        failure = Some(IoFailure {
                            errno: error
                                .raw_os_error()
                                .unwrap_or(rustix::io::Errno::IO.raw_os_error()),
                            message: format!("{} of {}: {error}", self.op.name(), path.display()),
                        });
                        break 'passes;
                    }
                }
                done += 1;
            }
            if self.files.is_empty() {
                break;
            }
        }
        let runtime = Duration::from_nanos(clock.now());
        if let Some(log) = logs
            && let Err(error) = log.finish(clock.now())
        {
            failure.get_or_insert(log_failure(&error));
        }
        stats.finish(runtime, cpu_since(usage_before.as_ref()));
        let submitted = done + u64::from(failure.is_some());
        let engine = self.op.engine().to_string();
        finish_without_engine(progress, stats, started, engine, (submitted, done), failure)
    }
}

/// A log that could not be written fails the job, as fio's does.
fn log_failure(error: &crate::logs::LogError) -> IoFailure {
    IoFailure {
        errno: error
            .source
            .raw_os_error()
            .unwrap_or(rustix::io::Errno::IO.raw_os_error()),
        message: error.to_string(),
    }
}
