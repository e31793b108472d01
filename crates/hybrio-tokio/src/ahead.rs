//! Reading ahead of a stream. A file read in large requests, each starting
//! where the last one ended, has the bytes of its next few requests asked
//! of the kernel (`posix_fadvise(POSIX_FADV_WILLNEED)`) by a thread of the
//! crate's own. So the device reads them while the task waits for or copies
//! the current one. The kernel's own readahead keeps about one request
//! ahead; a cold 4 GiB stream in 1 MiB reads ran at 1.10-1.35x
//! `spawn_blocking` with 8 requests asked ahead, against 0.95-1.29x without
//! (docs/tokio-design.md, "Reading ahead of a stream").
//!
//! The ask runs on the thread, not in the task: `WILLNEED` allocates the
//! pages and submits their reads, which may wait for memory and for the
//! device's queue.

use std::any::Any;
use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};

/// How many requests ahead of a stream's current one are asked for.
const REQUESTS_AHEAD: u64 = 8;

/// At most this many bytes ahead, whatever the size of the requests.
const MOST_AHEAD: u64 = 64 << 20;

/// Where one file's large reads have been going.
#[derive(Debug)]
pub(crate) struct Stream {
    /// Where the last large read ended.
    next: AtomicU64,
    /// How far ahead has been asked for.
    asked_to: AtomicU64,
}

impl Default for Stream {
    fn default() -> Stream {
        Stream {
            next: AtomicU64::new(u64::MAX),
            asked_to: AtomicU64::new(0),
        }
    }
}

impl Stream {
    /// A large read of `len` bytes at `offset`: the range to ask for now,
    /// as `(offset, len)`, when it continues the last one. Tasks reading
    /// the file at once may overwrite each other's notes: that costs at
    /// most an ask more or less.
    pub(crate) fn read(&self, offset: u64, len: u64) -> Option<(u64, u64)> {
        let end = offset.saturating_add(len);
        if self.next.swap(end, Ordering::Relaxed) != offset {
            self.asked_to.store(end, Ordering::Relaxed);
            return None;
        }
        let want = end.saturating_add(len.saturating_mul(REQUESTS_AHEAD).min(MOST_AHEAD));
        let from = self.asked_to.fetch_max(want, Ordering::Relaxed).max(end);
        (from < want).then(|| (from, want - from))
    }
}

/// One ask: a range of the file open as `fd`, and what keeps `fd` open
/// until the ask is done.
struct Ask {
    fd: RawFd,
    offset: u64,
    len: u64,
    keep: Box<dyn Any + Send>,
}

/// Has the crate's thread ask the kernel to read `len` bytes of `fd` at
/// `offset` into the page cache; `keep` (the file) is dropped once it has.
/// Nothing is asked where the thread could not be started.
pub(crate) fn ask(fd: RawFd, offset: u64, len: u64, keep: Box<dyn Any + Send>) {
    static THREAD: OnceLock<Option<Sender<Ask>>> = OnceLock::new();
    let thread = THREAD.get_or_init(|| {
        let (asks, asked) = channel::<Ask>();
        std::thread::Builder::new()
            .name("hybrio-tokio-ahead".into())
            .spawn(move || {
                for ask in asked {
                    // Advice: a failure reads nothing ahead, and the reads
                    // themselves still read what they need.
                    let _ = crate::sys::will_need(ask.fd, ask.offset, ask.len);
                    drop(ask.keep);
                }
            })
            .ok()
            .map(|_| asks)
    });
    if let Some(asks) = thread {
        let _ = asks.send(Ask {
            fd,
            offset,
            len,
            keep,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_stream_is_asked_ahead_by_a_sliding_window_and_a_jump_starts_over() {
        let stream = Stream::default();
        // The first read is not yet a stream.
        assert_eq!(stream.read(0, MIB), None);
        // The second continues it: eight requests ahead of its end.
        assert_eq!(stream.read(MIB, MIB), Some((2 * MIB, 8 * MIB)));
        // Each next one slides the window by one request.
        assert_eq!(stream.read(2 * MIB, MIB), Some((10 * MIB, MIB)));
        assert_eq!(stream.read(3 * MIB, MIB), Some((11 * MIB, MIB)));
        // A jump back is a new stream: nothing until it continues.
        assert_eq!(stream.read(0, MIB), None);
        assert_eq!(stream.read(MIB, MIB), Some((2 * MIB, 8 * MIB)));
        // Random large reads ask for nothing.
        for offset in [40 * MIB, 7 * MIB, 90 * MIB, 3 * MIB] {
            assert_eq!(stream.read(offset, MIB), None);
        }
        // Large requests are asked at most 64 MiB ahead.
        assert_eq!(stream.read(0, 16 * MIB), None);
        assert_eq!(
            stream.read(16 * MIB, 16 * MIB),
            Some((32 * MIB, MOST_AHEAD))
        );
    }
}
