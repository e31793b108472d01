//! Small items the ring's modules share: how an SQE names its file, what a
//! push did, and the limits and tags the ring and its drop agree on.

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use crate::request::Request;

/// Consecutive `EAGAIN`/`EBUSY` answers after which submitting or waiting gives up.
pub(super) const MAX_STALLS: u32 = 1000;

/// What [`Ring::push`](super::ring::Ring::push) did with a request.
#[derive(Debug)]
pub(crate) enum Push {
    /// In the SQ.
    Queued,
    /// Every slot is taken: the request is handed back untouched.
    Full(Request),
    /// A slot was free but the SQ had no room for it, even after waiting:
    /// the request is handed back with the reason.
    Refused(Request, io::Error),
}

/// How an SQE names its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileRef {
    /// A plain descriptor.
    Fd(RawFd),
    /// An index into the ring's registered-file table.
    Fixed(u32),
}

/// user_data of the cancel requests `settle` sends on kernels without a
/// synchronous cancel; no slot has it (slots are < capacity < 2^32).
pub(super) const CANCEL_TAG: u64 = u64::MAX;

/// How long dropping a ring waits, in all, for the requests the kernel has:
/// past it, the ones still out are leaked with their buffers.
pub(super) const SETTLE_LIMIT: Duration = Duration::from_secs(10);

/// While dropping, the longest single wait for completions.
pub(super) const WAIT_SLICE: Duration = Duration::from_millis(100);

/// `EAGAIN` or `EBUSY`: the kernel is short of resources for the moment.
pub(super) fn is_transient(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY))
}
