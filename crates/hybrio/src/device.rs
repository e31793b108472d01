//! An emulated storage device: every request completes a set time after it is
//! submitted, many at once, like a device with that service time and unlimited
//! internal parallelism (null_blk's `completion_nsec` with `irqmode=2`, which
//! this project's machines do not have).
//!
//! Any engine can drive it ([`EngineConfig::completion_latency`](crate::engine::EngineConfig::completion_latency)),
//! each through its own completion path, so that engines are compared on the
//! same device: the synchronous engines block the caller until the deadline
//! (`clock_nanosleep`), the pool blocks a worker, io_uring waits for a kernel
//! timeout request, libaio for a timerfd to fire. The data moves through the
//! page cache at submission (the device's "DMA"), so bytes written read back
//! exactly; a flush completes after the same latency without touching the
//! disk. A file opened with `O_DIRECT` keeps O_DIRECT's alignment rules
//! (`EINVAL` for a buffer, offset or length not a multiple of 512), but its
//! data goes through the page cache too.
//!
//! Kernel timers end late: this machine's wake-up from an idle vCPU adds a few
//! microseconds. The device measures that once per process and schedules
//! completions that much early, so that a synchronous caller sees the latency
//! asked for; the asynchronous paths pay their own real costs on top.

use std::cell::Cell;
use std::fs::File;
use std::io;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::Error;
use crate::blocking;
use crate::file::{FileHandle, FileTable};
use crate::request::{Op, Request};
use crate::sys::{self, retry_on_interrupt, time};

/// O_DIRECT's alignment for buffers, offsets and lengths (the logical block
/// size of the devices here).
pub(crate) const DIRECT_ALIGN: u64 = 512;

/// A device whose requests complete `latency` after submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EmulatedDevice {
    latency_ns: u64,
    /// How much earlier than the deadline the kernel timer is set.
    lead_ns: u64,
}

impl EmulatedDevice {
    /// A device with the given service time. The first device of a process
    /// measures how late kernel timers end here (about 2 ms).
    pub(crate) fn new(latency: Duration) -> EmulatedDevice {
        let latency_ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        EmulatedDevice {
            latency_ns,
            lead_ns: timer_lateness_ns().min(latency_ns / 2),
        }
    }

    /// The service time.
    pub(crate) fn latency(&self) -> Duration {
        Duration::from_nanos(self.latency_ns)
    }

    /// The `CLOCK_MONOTONIC` time (ns) at which to end the wait of a request
    /// submitted now.
    #[inline]
    pub(crate) fn deadline(&self) -> u64 {
        time::monotonic_ns() + self.latency_ns - self.lead_ns
    }

    /// Adds a file of an emulated device to `table`: the entry remembers
    /// whether it was opened `O_DIRECT` (whose alignment rules the device
    /// keeps), then `O_DIRECT` is turned off so that its data lives in the
    /// page cache.
    pub(crate) fn insert(
        table: &mut FileTable,
        file: File,
        path: PathBuf,
    ) -> Result<FileHandle, Error> {
        let handle = table.insert(file, path);
        if let Some(Err(error)) = table
            .get(handle)
            .map(|entry| Self::take_over(entry.fd(), entry.path()))
        {
            return Err(table.refuse(handle, |_| error));
        }
        Ok(handle)
    }

    /// Makes the file `fd` (at `path`) one of this device's, as
    /// [`adopt`](Self::adopt) does; a socket is refused. The error says why.
    pub(crate) fn take_over(fd: RawFd, path: &Path) -> Result<(), Error> {
        if sys::is_socket(fd).unwrap_or(false) {
            return Err(refuses_sockets(path));
        }
        Self::adopt(fd).map(drop).map_err(|e| {
            Error::io(
                "make an emulated-device file (clear O_DIRECT, read into the page cache)",
                path,
                e,
            )
        })
    }

    /// Makes `fd` a file of this device: O_DIRECT is turned off so its data
    /// lives in the page cache, and the file is read once so that it is all
    /// there (kernels that page out cold memory, as DAMON's `pageout` does on
    /// this machine, would otherwise put the real disk under the device).
    /// Returns whether it was O_DIRECT, whose alignment rules
    /// [`transfer`](Self::transfer) then keeps.
    pub(crate) fn adopt(fd: RawFd) -> io::Result<bool> {
        let direct = sys::is_direct(fd)?;
        if direct {
            sys::clear_direct(fd)?;
        }
        let mut chunk = vec![0; 1 << 20];
        let mut offset = 0;
        loop {
            match retry_on_interrupt(|| sys::pread(fd, &mut chunk, offset)) {
                Ok(0) => break,
                Ok(n) => offset += n as u64,
                // A write-only file cannot be read into the cache; its
                // requests will say what they say.
                Err(e) if e.raw_os_error() == Some(libc::EBADF) => break,
                Err(e) => return Err(e),
            }
        }
        Ok(direct)
    }

    /// Moves a request's data at once; returns bytes moved or a negative errno.
    pub(crate) fn transfer(fd: RawFd, direct: bool, request: &mut Request) -> i64 {
        if direct && request.op.moves_data() {
            let misaligned = request.buffer().is_some_and(|buf| {
                !(buf.as_ptr() as u64).is_multiple_of(DIRECT_ALIGN)
                    || !(buf.len() as u64).is_multiple_of(DIRECT_ALIGN)
            }) || !request.offset.is_multiple_of(DIRECT_ALIGN);
            if misaligned {
                return -i64::from(libc::EINVAL);
            }
        }
        let offset = request.offset;
        // Not `blocking::run`: a flush touches no disk here, a file's
        // `RWF_*` flags are not the device's, and a receive or send on one of
        // its files is no socket call (sockets are refused when added: an
        // emulated device is a disk).
        let outcome = match (request.op, request.buffer_mut()) {
            (Op::Fsync | Op::Fdatasync, _) => Ok(0),
            (Op::Trim | Op::Allocate | Op::AllocateKeepSize | Op::Truncate, _) => {
                let block_device = sys::is_block_device(fd).unwrap_or(false);
                blocking::change_space(fd, block_device, request)
            }
            (op @ (Op::Read | Op::Write), Some(buf)) => {
                blocking::positioned(fd, op, buf, offset, 0)
            }
            (Op::Recv | Op::Send, _) | (Op::Read | Op::Write, None) => {
                Err(io::Error::from_raw_os_error(libc::EINVAL))
            }
        };
        blocking::result(outcome)
    }

    /// The synchronous path: moves the data, then blocks the calling thread
    /// until the request's completion time.
    pub(crate) fn run_blocking(&self, fd: RawFd, direct: bool, request: &mut Request) -> i64 {
        let deadline = self.deadline();
        let result = Self::transfer(fd, direct, request);
        wait_until(deadline);
        result
    }
}

/// Why an emulated device will not take the socket at `path`.
pub(crate) fn refuses_sockets(path: &Path) -> Error {
    Error::Unsupported {
        what: "an emulated device",
        path: path.to_owned(),
        reason: "a socket is not a disk: the device takes files; sockets go to an engine without completion_latency",
    }
}

/// Blocks the calling thread until `CLOCK_MONOTONIC` reads `deadline` (ns),
/// with the thread's timer slack set to 1 ns the first time (the default 50
/// us would swamp a 30 us device).
pub(crate) fn wait_until(deadline: u64) {
    thread_local!(static PRECISE: Cell<bool> = const { Cell::new(false) });
    if !PRECISE.get() {
        // A thread that cannot change its slack sleeps less precisely; that
        // is all.
        let _ = time::set_timer_slack_ns(1);
        PRECISE.set(true);
    }
    time::sleep_until(deadline);
}

/// The median of how late an absolute `clock_nanosleep` of 30 us ends on this
/// machine, measured once per process.
fn timer_lateness_ns() -> u64 {
    static LATENESS: OnceLock<u64> = OnceLock::new();
    *LATENESS.get_or_init(|| {
        const SAMPLES: usize = 63;
        let mut late: Vec<u64> = (0..SAMPLES)
            .map(|_| {
                let deadline = time::monotonic_ns() + 30_000;
                wait_until(deadline);
                time::monotonic_ns().saturating_sub(deadline)
            })
            .collect();
        late.sort_unstable();
        late[SAMPLES / 2]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocking_request_takes_the_latency_asked_for() {
        let device = EmulatedDevice::new(Duration::from_micros(30));
        let mut took: Vec<u64> = (0..101)
            .map(|_| {
                let start = time::monotonic_ns();
                wait_until(device.deadline());
                time::monotonic_ns() - start
            })
            .collect();
        took.sort_unstable();
        let median = took[took.len() / 2];
        eprintln!(
            "30 us device: median {median} ns, lead {} ns",
            device.lead_ns
        );
        // Never early by more than the lead; a loaded machine may make it late.
        assert!(took[0] >= 30_000 - device.lead_ns, "{took:?}");
        assert!(device.lead_ns <= 15_000);
    }
}
