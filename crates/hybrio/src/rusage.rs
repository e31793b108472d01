//! CPU time and scheduling counters of the calling thread, as fio reports them
//! (`usr_cpu`, `sys_cpu`, `ctx`, `minf`, `majf`).
//!
//! `RUSAGE_THREAD` counts only the calling thread: work done for it by io_uring's
//! io-wq workers, an SQPOLL thread or a worker pool is not included;
//! [`process_usage`] counts the whole process, those included.

use std::io;

/// Resource usage of one thread, or the difference between two samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadUsage {
    /// CPU time in user mode, nanoseconds.
    pub user_ns: u64,
    /// CPU time in the kernel, nanoseconds.
    pub system_ns: u64,
    /// Voluntary context switches (the thread blocked).
    pub voluntary_ctx: u64,
    /// Involuntary context switches (the thread was preempted).
    pub involuntary_ctx: u64,
    /// Page faults served without I/O.
    pub minor_faults: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
}

impl ThreadUsage {
    /// What happened between `earlier` and `self`; counters that went
    /// backwards (they never should) give 0.
    pub fn since(&self, earlier: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            system_ns: self.system_ns.saturating_sub(earlier.system_ns),
            voluntary_ctx: self.voluntary_ctx.saturating_sub(earlier.voluntary_ctx),
            involuntary_ctx: self.involuntary_ctx.saturating_sub(earlier.involuntary_ctx),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }

    /// User plus system time, nanoseconds.
    pub fn cpu_ns(&self) -> u64 {
        self.user_ns.saturating_add(self.system_ns)
    }
}

/// Usage of the calling thread so far (`getrusage(RUSAGE_THREAD)`).
pub fn thread_usage() -> io::Result<ThreadUsage> {
    Ok(usage_of(&crate::sys::thread_rusage()?))
}

/// Usage of the whole process so far (`getrusage(RUSAGE_SELF)`): every
/// thread, including worker pools and io_uring's io-wq workers, which are
/// threads of the process.
pub fn process_usage() -> io::Result<ThreadUsage> {
    Ok(usage_of(&crate::sys::process_rusage()?))
}

fn usage_of(usage: &libc::rusage) -> ThreadUsage {
    let count = |value: libc::c_long| u64::try_from(value).unwrap_or(0);
    ThreadUsage {
        user_ns: timeval_ns(&usage.ru_utime),
        system_ns: timeval_ns(&usage.ru_stime),
        voluntary_ctx: count(usage.ru_nvcsw),
        involuntary_ctx: count(usage.ru_nivcsw),
        minor_faults: count(usage.ru_minflt),
        major_faults: count(usage.ru_majflt),
    }
}

fn timeval_ns(tv: &libc::timeval) -> u64 {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000)
        .saturating_add(micros * 1_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;

    #[test]
    fn cpu_time_grows_after_a_busy_loop() {
        use crate::sys::time::thread_cpu_ns;
        // Spins for 60 ms of this thread's own CPU time, not of the wall
        // clock: on a busy machine the thread may get a fraction of that.
        let first = thread_cpu_ns();
        let before = thread_usage().unwrap();
        let start = thread_cpu_ns();
        let mut x = 0u64;
        while thread_cpu_ns() - start < 60_000_000 {
            for _ in 0..1000 {
                x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        let delta = thread_usage().unwrap().since(&before);
        let spun = thread_cpu_ns() - first;
        // RUSAGE_THREAD is tick-sampled, so ask for much less than the 60 ms spun.
        assert!(
            delta.cpu_ns() >= 10_000_000,
            "only {} ns of CPU after 60 ms of spinning",
            delta.cpu_ns()
        );
        // And no more than the thread had (plus the sampling's rounding).
        assert!(
            delta.cpu_ns() <= spun + 10_000_000,
            "{} ns of CPU in {spun} ns of the thread's CPU time",
            delta.cpu_ns()
        );
    }

    #[test]
    fn since_saturates() {
        let later = ThreadUsage {
            user_ns: 5,
            voluntary_ctx: 2,
            ..ThreadUsage::default()
        };
        let earlier = ThreadUsage {
            user_ns: 7,
            voluntary_ctx: 1,
            ..ThreadUsage::default()
        };
        let delta = later.since(&earlier);
        assert_eq!((delta.user_ns, delta.voluntary_ctx), (0, 1));
    }
}
