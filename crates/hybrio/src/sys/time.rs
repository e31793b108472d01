//! Kernel time: `CLOCK_MONOTONIC` readings, absolute sleeps, timerfds, and
//! the thread's timer slack (which decides how late an `hrtimer` sleep may end).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

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

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) in
/// nanoseconds: exact, where `getrusage` is sampled.
#[cfg(test)]
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live, writable timespec; the calling thread's CPU
    // clock always exists, so the call cannot fail on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
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

/// A new `CLOCK_MONOTONIC` timerfd (close-on-exec, non-blocking), disarmed.
pub(crate) fn timerfd() -> io::Result<OwnedFd> {
    // SAFETY: timerfd_create takes integers only and touches no memory.
    let fd = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just made `fd` for us; nothing else owns or closes it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Arms `timer` to expire once, when `CLOCK_MONOTONIC` reads `deadline_ns`
/// (at once if that has passed).
///
/// Arming also resets the expiration count (timerfd_create(2): `read`
/// counts expirations "since its settings were last modified"), so a timerfd
/// that fired and was never read is not readable again until the new deadline.
pub(crate) fn arm_timerfd_at(timer: BorrowedFd<'_>, deadline_ns: u64) -> io::Result<()> {
    let spec = libc::itimerspec {
        it_interval: timespec(0),
        // An all-zero it_value would disarm the timer instead.
        it_value: timespec(deadline_ns.max(1)),
    };
    // SAFETY: `spec` is a valid itimerspec the kernel only reads; the
    // old-value pointer may be null.
    let ret = unsafe {
        libc::timerfd_settime(
            timer.as_raw_fd(),
            libc::TFD_TIMER_ABSTIME,
            &spec,
            std::ptr::null_mut(),
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;
    use crate::sys;

    /// Expirations counted on `timer` so far (0: not readable).
    fn expirations(timer: &OwnedFd) -> u64 {
        let mut count = [0u8; 8];
        match sys::read(timer.as_raw_fd(), &mut count) {
            Ok(8) => u64::from_ne_bytes(count),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            other => panic!("timerfd read: {other:?}"),
        }
    }

    #[test]
    fn rearming_a_fired_timerfd_clears_it() {
        let timer = timerfd().unwrap();
        assert_eq!(expirations(&timer), 0, "a new timerfd is disarmed");
        arm_timerfd_at(timer.as_fd(), monotonic_ns()).unwrap();
        sleep_until(monotonic_ns() + 1_000_000);
        // Fired and unread; re-arming for later must not leave it readable.
        arm_timerfd_at(timer.as_fd(), monotonic_ns() + 10_000_000_000).unwrap();
        assert_eq!(expirations(&timer), 0);
        arm_timerfd_at(timer.as_fd(), monotonic_ns()).unwrap();
        sleep_until(monotonic_ns() + 1_000_000);
        assert_eq!(expirations(&timer), 1);
    }
}
