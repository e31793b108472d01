//! The system calls the crate makes itself: the inline read that never
//! waits on the device, and the driver thread's wait for completions.

use std::io;
use std::os::fd::{BorrowedFd, RawFd};

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

/// Waits until `fd` polls readable (no timeout), retrying on `EINTR`.
pub(crate) fn wait_readable(fd: BorrowedFd<'_>) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, poll};
    loop {
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, None) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(error) => return Err(error.into()),
        }
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
