//! The system calls the crate makes itself: the inline read that never
//! waits on the device, and the driver thread's wait for completions.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

/// Runs a system call returning a count or -1 until it is not interrupted.
fn again_if_interrupted(mut call: impl FnMut() -> isize) -> io::Result<usize> {
    loop {
        let n = call();
        if n >= 0 {
            return Ok(n as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

fn offset_arg(offset: u64) -> io::Result<i64> {
    i64::try_from(offset).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// `preadv2(fd, buf, offset, RWF_NOWAIT)`: what the page cache holds of
/// `buf.len()` bytes at `offset`, or `EAGAIN` where getting them would wait on the
/// device (the kernel then starts reading them ahead). `EINTR` is retried.
pub(crate) fn read_nowait(fd: RawFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let offset = offset_arg(offset)?;
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: `iov` names `buf`, borrowed mutably for the call (nothing else
    // touches it), and lives across the call.
    again_if_interrupted(|| unsafe { libc::preadv2(fd, &iov, 1, offset, libc::RWF_NOWAIT) })
}

/// Waits until `nudge` or, if given, `completions` polls readable (no
/// timeout), retrying on `EINTR`.
pub(crate) fn wait_readable_either(
    nudge: BorrowedFd<'_>,
    completions: Option<BorrowedFd<'_>>,
) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, poll};
    let watched = usize::from(completions.is_some()) + 1;
    loop {
        let mut fds = [
            PollFd::new(&nudge, PollFlags::IN),
            PollFd::new(completions.as_ref().unwrap_or(&nudge), PollFlags::IN),
        ];
        match poll(&mut fds[..watched], None) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(error) => return Err(error.into()),
        }
    }
}

/// A descriptor that one thread raises to wake another sleeping in
/// [`wait_readable_either`] (an eventfd, non-blocking).
pub(crate) fn nudge_fd() -> io::Result<OwnedFd> {
    use rustix::event::{EventfdFlags, eventfd};
    Ok(eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?)
}

/// Raises `nudge` (made by [`nudge_fd`]). Its counter cannot overflow
/// before the sleeper clears it, and nothing else can fail on a valid
/// eventfd.
pub(crate) fn raise(nudge: BorrowedFd<'_>) {
    let _ = rustix::io::write(nudge, &1u64.to_ne_bytes());
}

/// Clears `nudge` if raised.
pub(crate) fn clear(nudge: BorrowedFd<'_>) {
    let mut count = [0u8; 8];
    let _ = rustix::io::read(nudge, &mut count);
}

/// Registers `fd` for readability in the reactor of the runtime this
/// thread runs in, which owns it from then on; `None` where that runtime
/// has no reactor (built without `enable_io`).
///
/// tokio offers no way to ask whether a runtime has an I/O driver short of
/// registering and catching its panic: the panic message (tokio's) is
/// followed by a line saying what the crate does instead. Under
/// `panic = "abort"` no registration is tried: every runtime is then served
/// by the driver's thread.
pub(crate) fn register_in_reactor(fd: OwnedFd) -> Option<tokio::io::unix::AsyncFd<OwnedFd>> {
    #[cfg(panic = "unwind")]
    {
        use tokio::io::{Interest, unix::AsyncFd};
        let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: the `AsyncFd` owns `fd` (an `OwnedFd`), which stays open
            // and names the same descriptor until the `AsyncFd` is dropped
            // (tokio's promise needs only that).
            unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
        }));
        match attempt {
            Ok(Ok(registered)) => Some(registered),
            Ok(Err(refused)) => {
                eprintln!(
                    "hybrio-tokio: the runtime's reactor refused the completion descriptor ({}): its requests' completions come through hybrio-tokio's own thread",
                    refused
                );
                None
            }
            Err(_) => {
                eprintln!(
                    "hybrio-tokio: (the panic above is tokio's, caught) this runtime has no I/O driver: its requests' completions come through hybrio-tokio's own thread, one wake-up more each; build the runtime with enable_io() or enable_all() to have them reaped in its reactor"
                );
                None
            }
        }
    }
    #[cfg(not(panic = "unwind"))]
    {
        drop(fd);
        None
    }
}

/// `posix_fadvise(fd, offset, len, POSIX_FADV_WILLNEED)`: the kernel starts
/// reading the range into the page cache (and may wait for memory and the
/// device's queue to do so, not for the reads).
pub(crate) fn will_need(fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
    let offset = offset_arg(offset)?;
    let len = offset_arg(len)?;
    // SAFETY: no memory is passed; the caller keeps `fd` open for the call.
    match unsafe { libc::posix_fadvise(fd, offset, len, libc::POSIX_FADV_WILLNEED) } {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// `fstat` of `fd`, which the caller keeps open for the call.
pub(crate) fn metadata(fd: RawFd) -> io::Result<std::fs::Metadata> {
    use std::os::fd::FromRawFd;
    // SAFETY: the caller's `fd` is open for the call (the engine holds its
    // file); the `File` over it is never dropped, so never closes it.
    let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    file.metadata()
}

/// Whether `fd` was opened with `O_DIRECT`.
pub(crate) fn is_direct(fd: RawFd) -> io::Result<bool> {
    // SAFETY: F_GETFL takes no argument and touches no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(flags & libc::O_DIRECT != 0)
}

/// Whether `fd`'s file lives in memory only (tmpfs, ramfs): reading it
/// never waits on a device, and such filesystems refuse `RWF_NOWAIT`.
pub(crate) fn in_memory(fd: RawFd) -> io::Result<bool> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    // SAFETY: the caller keeps `fd` open for the call.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let stat = rustix::fs::fstatfs(fd)?;
    let kind = stat.f_type as i64;
    Ok(kind == TMPFS_MAGIC || kind == RAMFS_MAGIC)
}

/// `pread(fd, buf, offset)`, for files in memory only, retrying `EINTR`.
pub(crate) fn read(fd: RawFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let offset = offset_arg(offset)?;
    // SAFETY: `buf` is borrowed mutably for the call: its `len()` bytes are
    // writable and nothing else touches them.
    again_if_interrupted(|| unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), offset) })
}

/// `pwritev2(fd, bytes, offset, RWF_NOWAIT)`: `EAGAIN` where writing would
/// wait (the filesystem's locks, its allocation), `EOPNOTSUPP` where the
/// filesystem cannot tell (ext4's and tmpfs's buffered writes here).
/// `EINTR` is retried.
pub(crate) fn write_nowait(fd: RawFd, bytes: &[u8], offset: u64) -> io::Result<usize> {
    let offset = offset_arg(offset)?;
    let iov = libc::iovec {
        iov_base: bytes.as_ptr().cast_mut().cast(),
        iov_len: bytes.len(),
    };
    // SAFETY: `iov` names `bytes`, borrowed for the call, which the kernel
    // only reads; `iov` lives across the call.
    again_if_interrupted(|| unsafe { libc::pwritev2(fd, &iov, 1, offset, libc::RWF_NOWAIT) })
}

/// `pwrite(fd, bytes, offset)`, retrying `EINTR`.
pub(crate) fn write(fd: RawFd, bytes: &[u8], offset: u64) -> io::Result<usize> {
    let offset = offset_arg(offset)?;
    // SAFETY: `bytes` is borrowed for the call; the kernel only reads it.
    again_if_interrupted(|| unsafe { libc::pwrite(fd, bytes.as_ptr().cast(), bytes.len(), offset) })
}
