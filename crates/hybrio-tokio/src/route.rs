//! Which reads of a file are tried inline first.
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

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Read classes: by the power of two at or below the length, up to 16 MiB,
/// then one for everything larger (the adaptive engine's size classes).
const CLASSES: usize = 25;
/// The longest run of reads sent straight asynchronous: 2^7.
const MOST_MISSES: u32 = 7;

/// What a file's reads have found, by class. Shared by every task that
/// reads the file; updates from several at once may overwrite each other,
/// which costs at most a try more or less.
#[derive(Debug, Default)]
pub(crate) struct Route {
    /// Per class: the reads left to send straight asynchronous (low 16 bits)
    /// and the misses in a row (high bits).
    classes: [AtomicU32; CLASSES],
    pub(crate) counts: Counts,
}

/// How a file's requests went.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) inline: AtomicU64,
    pub(crate) missed: AtomicU64,
    pub(crate) asynchronous: AtomicU64,
}

fn class_of(len: usize) -> usize {
    let size = (usize::BITS - 1 - (len | 1).leading_zeros()) as usize;
    size.min(CLASSES - 1)
}

impl Route {
    /// Whether a read of `len` bytes is tried inline first.
    pub(crate) fn try_inline(&self, len: usize) -> bool {
        let class = &self.classes[class_of(len)];
        let state = class.load(Ordering::Relaxed);
        let left = state & 0xffff;
        if left == 0 {
            return true;
        }
        class.store(state - 1, Ordering::Relaxed);
        false
    }

    /// A read of `len` bytes tried inline found the page cache.
    pub(crate) fn hit(&self, len: usize) {
        let class = &self.classes[class_of(len)];
        if class.load(Ordering::Relaxed) != 0 {
            class.store(0, Ordering::Relaxed);
        }
        self.counts.inline.fetch_add(1, Ordering::Relaxed);
    }

    /// A read of `len` bytes tried inline would have waited on the device.
    pub(crate) fn miss(&self, len: usize) {
        let class = &self.classes[class_of(len)];
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
    fn misses_in_a_row_send_more_reads_straight_asynchronous_and_a_hit_ends_them() {
        let route = Route::default();
        assert!(route.try_inline(4096));
        let straight = |route: &Route| (0..1000).take_while(|_| !route.try_inline(4096)).count();
        route.miss(4096);
        assert_eq!(straight(&route), 2);
        route.miss(4096);
        assert_eq!(straight(&route), 4);
        for _ in 0..20 {
            route.miss(4096);
        }
        assert_eq!(straight(&route), 128);
        // Another size is another class.
        assert!(route.try_inline(1 << 20));
        route.hit(4096);
        assert!(route.try_inline(4096));
        route.miss(4096);
        assert_eq!(straight(&route), 2);
        assert_eq!(route.counts.missed.load(Ordering::Relaxed), 23);
        assert_eq!(route.counts.inline.load(Ordering::Relaxed), 1);
    }
}
