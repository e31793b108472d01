//! What the library does with a failed system call: calls it again after
//! `EINTR`, or hands its errno on as a completion's negative result. Apart
//! from `sys/mod.rs`, which also declares the kernel queues (`aio`,
//! `uring`) that use these, so that what lies below those queues can use
//! them without depending on the queues.

use std::io;

/// Runs `call` again for as long as it fails with `EINTR`.
#[inline]
pub(crate) fn retry_on_interrupt<T>(mut call: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match call() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// The errno of an `io::Error` as a negative completion result (`-EIO` when it carries none).
#[inline]
pub(crate) fn negative_errno(err: &io::Error) -> i64 {
    -i64::from(err.raw_os_error().unwrap_or(libc::EIO))
}
