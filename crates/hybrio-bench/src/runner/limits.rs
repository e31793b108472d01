//! The system's limits, checked before a run starts (seeds/001: hundreds of
//! jobs, each with its own engine context): what the jobs that run at once
//! need at the least, against what the process and the system allow. A run
//! that cannot fit stops here, in one line naming the limit and the setting
//! that raises it, before any job has made an engine; what only an engine's
//! set-up can tell (a descriptor more here or there) still stops it with the
//! kernel's error, also before any I/O.

use hybrio::engine::EngineKind;
use hybrio::probe::Limits;

use crate::options::JobOptions;

/// What the jobs that run at once need at the least.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// File descriptors: each job's files (and the copies a job that drops
    /// their cache keeps), each ring that keeps its descriptor, and libaio's
    /// timers on the emulated device.
    pub descriptors: u64,
    /// Linux AIO events: a libaio engine of depth `d` asks `io_setup` for `d`.
    pub aio_events: u64,
    /// Bytes of buffers registered with io_uring (`fixedbufs`).
    pub pinned_bytes: u64,
    /// Jobs, for the message.
    pub jobs: u64,
}

impl Needs {
    /// What one job (one clone) of `kind` needs; `rings_give_back`: this
    /// kernel lets a ring that stays on its thread give its descriptor back
    /// ([`hybrio::probe::ring_gives_descriptor_back`]), which a job's ring
    /// does before its work begins, unless it polls with SQPOLL.
    pub fn of_job(
        options: &JobOptions,
        kind: EngineKind,
        files: u64,
        rings_give_back: bool,
    ) -> Needs {
        let ring = u64::from(
            matches!(kind, EngineKind::IoUring | EngineKind::Adaptive)
                && (!rings_give_back || options.sqthread_poll),
        );
        // A job that drops its files' cached pages keeps a copy of each
        // descriptor to do it with (see `PreparedJob::new`).
        let drops_cache = (options.invalidate || options.drop_cache_after.is_some())
            && kind != EngineKind::Null
            && options.completion_latency.is_none();
        // libaio completes an emulated device's requests by polling a timer
        // each: one descriptor for each request it can have in flight.
        let timers = if kind == EngineKind::Libaio && options.completion_latency.is_some() {
            u64::from(options.iodepth.max(1))
        } else {
            0
        };
        let descriptors = files * (1 + u64::from(drops_cache)) + ring + timers;
        let fixed = options.fixedbufs && matches!(kind, EngineKind::IoUring);
        Needs {
            descriptors,
            aio_events: if kind == EngineKind::Libaio {
                u64::from(options.iodepth.max(1))
            } else {
                0
            },
            pinned_bytes: if fixed {
                u64::from(options.iodepth) * options.max_block_size()
            } else {
                0
            },
            jobs: 1,
        }
    }

    /// Both together.
    pub fn and(self, other: Needs) -> Needs {
        Needs {
            descriptors: self.descriptors + other.descriptors,
            aio_events: self.aio_events + other.aio_events,
            pinned_bytes: self.pinned_bytes + other.pinned_bytes,
            jobs: self.jobs + other.jobs,
        }
    }
}

/// Why a run cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LimitError(pub String);

/// Checks `needs` (of the jobs that run at once) against `limits`, with
/// `open_now` descriptors already open and `root` for a process whose
/// locked memory is not limited (CAP_IPC_LOCK).
pub fn check(needs: Needs, limits: &Limits, open_now: u64, root: bool) -> Result<(), LimitError> {
    let jobs = needs.jobs;
    if let Some((used, max)) = limits.aio_events {
        let free = max.saturating_sub(used);
        if needs.aio_events > free {
            return Err(LimitError(format!(
                "the run's libaio jobs need {} Linux AIO events at once ({jobs} jobs' iodepth), and fs.aio-max-nr = {max} with {used} in use leaves {free}: raise it with `sysctl -w fs.aio-max-nr={}` (as root)",
                needs.aio_events,
                used + needs.aio_events
            )));
        }
    }
    if let Some((soft, hard)) = limits.open_files {
        let wanted = open_now + needs.descriptors;
        if wanted > soft {
            let how = if wanted <= hard {
                format!("`ulimit -n {wanted}` or more (the hard limit is {hard})")
            } else {
                format!(
                    "the hard limit ({hard}) too, as root (`ulimit -Hn {wanted}`, or LimitNOFILE in a systemd unit)"
                )
            };
            return Err(LimitError(format!(
                "the run's {jobs} jobs need at least {} file descriptors at once, {open_now} are open, and RLIMIT_NOFILE is {soft}: raise it with {how}",
                needs.descriptors
            )));
        }
    }
    if let Some((soft, _)) = limits.locked_memory
        && !root
        && needs.pinned_bytes > soft
    {
        return Err(LimitError(format!(
            "the run's fixedbufs jobs register {} KiB of buffers with io_uring, locked memory, and RLIMIT_MEMLOCK is {} KiB: raise it with `ulimit -l {}` (or drop fixedbufs)",
            needs.pinned_bytes >> 10,
            soft >> 10,
            needs.pinned_bytes.div_ceil(1024)
        )));
    }
    Ok(())
}

/// Descriptors the process has open now (0 where /proc does not say).
pub fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count() as u64)
}

/// True for a process whose effective user is root.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Uid:"))?;
            line.split_whitespace().nth(2).map(|euid| euid == "0")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(open_files: u64, aio: (u64, u64), memlock: u64) -> Limits {
        Limits {
            open_files: Some((open_files, 4 * open_files)),
            locked_memory: Some((memlock, memlock)),
            aio_events: Some(aio),
        }
    }

    fn jobs(n: u64, options: &JobOptions, kind: EngineKind) -> Needs {
        (0..n).fold(Needs::default(), |sum, _| {
            sum.and(Needs::of_job(options, kind, 1, false))
        })
    }

    #[test]
    fn aio_events_past_what_aio_max_nr_leaves_are_refused_naming_the_sysctl() {
        let options = JobOptions::default();
        let needs = jobs(512, &options, EngineKind::Libaio);
        assert_eq!(needs.aio_events, 512);
        assert!(check(needs, &limits(1 << 20, (0, 65536), 0), 10, true).is_ok());
        let err = check(needs, &limits(1 << 20, (200, 600), 0), 10, true).unwrap_err();
        assert_eq!(
            err.0,
            "the run's libaio jobs need 512 Linux AIO events at once (512 jobs' iodepth), and fs.aio-max-nr = 600 with 200 in use leaves 400: raise it with `sysctl -w fs.aio-max-nr=712` (as root)"
        );
    }

    #[test]
    fn descriptors_past_the_soft_limit_are_refused_naming_ulimit() {
        // As seeds/001's jobs: their files stay cached.
        let options = JobOptions {
            invalidate: false,
            ..JobOptions::default()
        };
        let needs = jobs(512, &options, EngineKind::Adaptive);
        assert_eq!(needs.descriptors, 512 * 2);
        let err = check(needs, &limits(1024, (0, 65536), 0), 10, true).unwrap_err();
        assert!(err.0.contains("RLIMIT_NOFILE is 1024"), "{}", err.0);
        assert!(err.0.contains("`ulimit -n 1034`"), "{}", err.0);
        assert!(check(needs, &limits(2048, (0, 65536), 0), 10, true).is_ok());
        // Rings that give their descriptor back: a file each.
        let given_back = (0..512).fold(Needs::default(), |sum, _| {
            sum.and(Needs::of_job(&options, EngineKind::Adaptive, 1, true))
        });
        assert_eq!(given_back.descriptors, 512);
        assert!(check(given_back, &limits(1024, (0, 65536), 0), 10, true).is_ok());
        let polling = JobOptions {
            sqthread_poll: true,
            ..options.clone()
        };
        assert_eq!(
            Needs::of_job(&polling, EngineKind::IoUring, 1, true).descriptors,
            2
        );
        let emulated = JobOptions {
            completion_latency: Some(std::time::Duration::from_micros(30)),
            ..options.clone()
        };
        assert_eq!(
            jobs(512, &emulated, EngineKind::Adaptive).descriptors,
            512 * 2
        );
    }

    #[test]
    fn copies_for_dropping_the_cache_and_libaios_emulated_timers_are_counted() {
        let invalidating = JobOptions::default();
        assert!(invalidating.invalidate);
        assert_eq!(
            Needs::of_job(&invalidating, EngineKind::Psync, 3, true).descriptors,
            6
        );
        assert_eq!(
            Needs::of_job(&invalidating, EngineKind::Null, 3, true).descriptors,
            3
        );
        let dropping = JobOptions {
            invalidate: false,
            drop_cache_after: Some(std::time::Duration::from_secs(1)),
            ..JobOptions::default()
        };
        assert_eq!(
            Needs::of_job(&dropping, EngineKind::IoUring, 1, false).descriptors,
            3
        );
        let emulated = JobOptions {
            invalidate: false,
            iodepth: 4,
            completion_latency: Some(std::time::Duration::from_micros(30)),
            ..JobOptions::default()
        };
        assert_eq!(
            Needs::of_job(&emulated, EngineKind::Libaio, 1, true).descriptors,
            5,
            "a timer for each request in flight"
        );
    }

    #[test]
    fn registered_buffers_count_against_memlock_only_without_root() {
        let options = JobOptions {
            fixedbufs: true,
            iodepth: 32,
            ..JobOptions::default()
        };
        let needs = jobs(8, &options, EngineKind::IoUring);
        assert_eq!(needs.pinned_bytes, 8 * 32 * 4096);
        let tight = limits(1 << 20, (0, 65536), 64 << 10);
        assert!(check(needs, &tight, 10, true).is_ok());
        let err = check(needs, &tight, 10, false).unwrap_err();
        assert!(err.0.contains("RLIMIT_MEMLOCK is 64 KiB"), "{}", err.0);
    }
}
