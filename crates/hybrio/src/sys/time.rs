//! Kernel time: `CLOCK_MONOTONIC` readings, absolute sleeps, and the
//! thread's timer slack (which decides how late an `hrtimer` sleep may end).

use std::io;

/// `CLOCK_MONOTONIC` in nanoseconds: the clock kernel timers (io_uring
/// timeouts, timerfds, `clock_nanosleep`) count in.
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live, writable timespec; CLOCK_MONOTONIC always
    // exists, so the call cannot fail on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A `CLOCK_MONOTONIC` time in nanoseconds as a `timespec`.
#[inline]
pub(crate) fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Sleeps until `CLOCK_MONOTONIC` reads `deadline_ns` (at once if it has passed).
/// Signals do not cut it short.
pub(crate) fn sleep_until(deadline_ns: u64) {
    let ts = timespec(deadline_ns);
    loop {
        // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be
        // null with TIMER_ABSTIME. clock_nanosleep returns the error number.
        let err = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if err != libc::EINTR {
            return;
        }
    }
}

/// Sets the calling thread's timer slack: how much later than asked the
/// kernel may end its sleeps (50 us by default, to batch wake-ups).
pub(crate) fn set_timer_slack_ns(slack_ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches no memory.
    let ret = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, slack_ns as libc::c_ulong, 0, 0, 0) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
