//! Which reads and writes of a file are tried inline first.
//!
//! A read tried inline is `preadv2(RWF_NOWAIT)` in the polling task: a
//! page-cache hit completes there, with no thread hop, at the rate of a
//! plain `pread`; a miss answers `EAGAIN` (and starts the kernel's
//! readahead) and goes asynchronous. A miss is not free: here it cost the
//! task 13-17 us, a dozen hits' worth (docs/tokio-design.md). So each class
//! of reads (by size, as the adaptive engine's classes) keeps a count of
//! the reads to send straight asynchronous before trying inline again: 0
//! while tries find the page cache; after a miss 2, then 4, ... up to 128
//! after misses in a row, and 0 again at the first hit. A file read at
//! random from the device so pays for one try in 128 reads; a cached one
//! pays for none. Nothing is tuned: the counts follow what the tries find.
//!
//! Writes are tried inline the same way, by their own classes: a buffered
//! write copies into the page cache (`RWF_NOWAIT` where the filesystem
//! takes it, a plain `pwrite` where it does not, as ext4 and tmpfs here).
//! Such a write has no "would wait" answer; one that took longer than
//! [`SLOW_WRITE`] (the kernel's dirty-page throttling, a contended inode
//! lock) counts as a miss, and its class's next writes go to the engine.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Read classes: by the power of two at or below the length, up to 16 MiB,
/// then one for everything larger (the adaptive engine's size classes).
const CLASSES: usize = 25;
/// The longest run of requests sent straight asynchronous: 2^7.
const MOST_MISSES: u32 = 7;

/// An inline write that took longer than this was worse for the caller
/// than the engine's path: the io_uring path's p99 for a cached 4 KiB read
/// was 34-58 us here (docs/tokio-design.md), what the task would have waited
/// with its worker free.
pub(crate) const SLOW_WRITE: std::time::Duration = std::time::Duration::from_micros(50);

/// Reads or writes: each has classes of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
}

/// What a file's reads and writes have found, by class. Shared by every
/// task that uses the file; updates from several at once may overwrite
/// each other, which costs at most a try more or less.
#[derive(Debug, Default)]
pub(crate) struct Route {
    /// Per kind and class: the requests left to send straight asynchronous
    /// (low 16 bits) and the misses in a row (high bits).
    classes: [[AtomicU32; CLASSES]; 2],
    pub(crate) counts: Counts,
}

/// How a file's requests went.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) inline: AtomicU64,
    pub(crate) missed: AtomicU64,
    pub(crate) asynchronous: AtomicU64,
    pub(crate) read_ahead: AtomicU64,
}

fn class_of(len: usize) -> usize {
    let size = (usize::BITS - 1 - (len | 1).leading_zeros()) as usize;
    size.min(CLASSES - 1)
}

impl Route {
    fn class(&self, kind: Kind, len: usize) -> &AtomicU32 {
        &self.classes[kind as usize][class_of(len)]
    }

    /// Whether a request of `len` bytes is tried inline first.
    pub(crate) fn try_inline(&self, kind: Kind, len: usize) -> bool {
        let class = self.class(kind, len);
        let state = class.load(Ordering::Relaxed);
        let left = state & 0xffff;
        if left == 0 {
            return true;
        }
        class.store(state - 1, Ordering::Relaxed);
        false
    }

    /// A request of `len` bytes tried inline completed there, quickly. A
    /// read's hit ends its class's misses (the pages are cached now); a
    /// write's takes one back, so that a class whose writes are often slow
    /// (appends beside syncs of the same file, which take its inode's lock)
    /// keeps sending most of them to the engine.
    pub(crate) fn hit(&self, kind: Kind, len: usize) {
        let class = self.class(kind, len);
        let state = class.load(Ordering::Relaxed);
        if state != 0 {
            let misses = match kind {
                Kind::Read => 0,
                Kind::Write => (state >> 16).saturating_sub(1),
            };
            class.store(misses << 16, Ordering::Relaxed);
        }
        self.counts.inline.fetch_add(1, Ordering::Relaxed);
    }

    /// A request of `len` bytes tried inline would have waited on the
    /// device (a read), or took long (a write).
    pub(crate) fn miss(&self, kind: Kind, len: usize) {
        let class = self.class(kind, len);
        let misses = (class.load(Ordering::Relaxed) >> 16)
            .saturating_add(1)
            .min(MOST_MISSES);
        class.store((misses << 16) | (1 << misses), Ordering::Relaxed);
        self.counts.missed.fetch_add(1, Ordering::Relaxed);
    }

    /// A request went asynchronous.
    pub(crate) fn went_async(&self) {
        self.counts.asynchronous.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_in_a_row_send_more_requests_to_the_engine_and_hits_end_or_ease_them() {
        let route = Route::default();
        assert!(route.try_inline(Kind::Read, 4096));
        let straight = |route: &Route| {
            (0..1000)
                .take_while(|_| !route.try_inline(Kind::Read, 4096))
                .count()
        };
        route.miss(Kind::Read, 4096);
        assert_eq!(straight(&route), 2);
        route.miss(Kind::Read, 4096);
        assert_eq!(straight(&route), 4);
        for _ in 0..20 {
            route.miss(Kind::Read, 4096);
        }
        assert_eq!(straight(&route), 128);
        // Another size is another class.
        assert!(route.try_inline(Kind::Read, 1 << 20));
        // Writes of the same size too.
        assert!(route.try_inline(Kind::Write, 4096));
        route.hit(Kind::Read, 4096);
        assert!(route.try_inline(Kind::Read, 4096));
        route.miss(Kind::Read, 4096);
        assert_eq!(straight(&route), 2);
        // A write's hit takes one miss back, not all: three misses, a hit,
        // and the next miss is the third in a row again.
        let writes = |route: &Route| {
            (0..1000)
                .take_while(|_| !route.try_inline(Kind::Write, 4096))
                .count()
        };
        for expected in [2, 4, 8] {
            route.miss(Kind::Write, 4096);
            assert_eq!(writes(&route), expected);
        }
        route.hit(Kind::Write, 4096);
        assert!(route.try_inline(Kind::Write, 4096));
        route.miss(Kind::Write, 4096);
        assert_eq!(writes(&route), 8);
        assert_eq!(route.counts.missed.load(Ordering::Relaxed), 27);
        assert_eq!(route.counts.inline.load(Ordering::Relaxed), 2);
    }
}
