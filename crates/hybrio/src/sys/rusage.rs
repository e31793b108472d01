//! `getrusage(RUSAGE_THREAD)` and `getrusage(RUSAGE_SELF)`, and the process's
//! resource limits (`getrlimit`).

use std::io;
use std::mem::MaybeUninit;

/// Resource usage of the calling thread.
pub(crate) fn thread_rusage() -> io::Result<libc::rusage> {
    rusage(libc::RUSAGE_THREAD)
}

/// Resource usage of the whole process: every thread, io_uring's io-wq
/// workers (threads of the process since Linux 5.12) included.
pub(crate) fn process_rusage() -> io::Result<libc::rusage> {
    rusage(libc::RUSAGE_SELF)
}

fn rusage(who: libc::c_int) -> io::Result<libc::rusage> {
    let mut usage = MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `usage` is valid for writes of one `rusage`, which is all
    // getrusage writes.
    let ret = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getrusage returned 0, so it filled the whole struct.
    Ok(unsafe { usage.assume_init() })
}

/// The soft and hard limit on the process's open file descriptors
/// (`RLIMIT_NOFILE`); `RLIM_INFINITY` where there is none.
pub(crate) fn open_file_limit() -> io::Result<(u64, u64)> {
    limit(libc::RLIMIT_NOFILE)
}

/// The soft and hard limit on the process's locked memory, bytes
/// (`RLIMIT_MEMLOCK`); `RLIM_INFINITY` where there is none.
pub(crate) fn locked_memory_limit() -> io::Result<(u64, u64)> {
    limit(libc::RLIMIT_MEMLOCK)
}

fn limit(resource: libc::__rlimit_resource_t) -> io::Result<(u64, u64)> {
    let mut limit = MaybeUninit::<libc::rlimit>::uninit();
    // SAFETY: `limit` is valid for writes of one `rlimit`, which is all
    // getrlimit writes.
    let ret = unsafe { libc::getrlimit(resource, limit.as_mut_ptr()) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getrlimit returned 0, so it filled the whole struct.
    let limit = unsafe { limit.assume_init() };
    Ok((limit.rlim_cur, limit.rlim_max))
}
