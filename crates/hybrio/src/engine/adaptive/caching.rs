//! The caching of the files the caller lets the engine choose it for
//! ([`Caching::Auto`](crate::file::Caching::Auto)).
//!
//! A file's writes go uncached (`RWF_DONTCACHE`) once they stream: each
//! continues the file's run of sequential writes, and the run has passed
//! [`Room::headroom`] bytes, what one file may leave dirty in the page
//! cache. Whatever their size: streaming 10 GiB past the dirty limit here,
//! uncached writes ran at 2.7x (8 KiB), 3.6x (32 KiB), 6.9x (128 KiB) and
//! 9.7x (1 MiB) cached ones (seeds/002, each run starting with the same
//! memory). Until
//! then, and for writes that do not stream (random overwrites, which the
//! cache absorbs), they stay cached. A read of what the run wrote uncached
//! says the data is read again, and a new run that goes back into a run
//! that went uncached, no longer than what the kernel lets be dirty before
//! it starts writing back, says the data is written again (a region
//! rewritten in place, which the cache absorbs): either way the file's
//! writes stay cached from then on. Reads stay cached (a stream of them is
//! read ahead of: [`readahead`](super::readahead)).
//!
//! Why a rule over offsets and not a price from completions, as the
//! inline/asynchronous choice is: a cached write's cost is not in its
//! completion. It returns once its data is copied (a third of an uncached
//! one's time at 128 KiB here) and leaves the writing back for later; the
//! bill comes when the dirty pages pass the kernel's limits, and then every
//! writer of the machine pays it, at the flusher's pace (seeds/002: 10 GiB
//! of 128 KiB writes at 0.4-0.5 GB/s cached, 2.4-2.8 GB/s uncached on this
//! machine's disk). A class that tried both and kept the dearer-looking
//! uncached writes only after that bill came would have paid it first.
//! Reads carry no such debt, and could be priced from their completions;
//! they stay cached for now. Cold sequential reads ran faster uncached here
//! at 128 KiB and 1 MiB (1.2x, 1.9x) and slower at 8 KiB (0.7x), and a
//! cached read keeps the data for whoever reads it again: choosing for
//! reads is not built yet.

use super::run::Run;
use crate::sys::host;

/// The most one file's write stream leaves dirty before it goes uncached.
/// Small, because it is not free even when the stream is long: it is
/// flushed at the end, and on this VM the page cache's first use of free
/// memory costs several times the CPU (the host takes back memory left free
/// for a few seconds), so a cached head of 64 MiB cost 4% of a 10 GiB
/// stream's time; 16 MiB costs 1%, and files up to 16 MiB stay cached.
const MOST_LEFT_DIRTY: u64 = 16 << 20;
/// The least (a machine with little memory).
const LEAST_LEFT_DIRTY: u64 = 4 << 20;

/// The page cache's room for one file's writes, from the kernel's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Room {
    /// What a write stream may leave dirty before it goes uncached: a
    /// sixty-fourth of the dirty cache at which the kernel starts writing
    /// back in the background (so that many files streaming at once stay
    /// below it), between [`LEAST_LEFT_DIRTY`] and [`MOST_LEFT_DIRTY`].
    pub(crate) headroom: u64,
    /// The longest region rewritten in place that stays cached: that
    /// background threshold (the flusher writes it back at its pace, and the
    /// writers are not throttled).
    pub(crate) rewritable: u64,
    /// How far ahead of a read stream the engine reads ([`readahead`](super::readahead)).
    pub(crate) read_ahead: u64,
}

impl Room {
    /// The room on this machine, now.
    pub(crate) fn now() -> Room {
        let threshold = host::dirty_background_threshold();
        Room {
            headroom: threshold
                .map_or(MOST_LEFT_DIRTY, |threshold| threshold / 64)
                .clamp(LEAST_LEFT_DIRTY, MOST_LEFT_DIRTY),
            rewritable: threshold.unwrap_or(MOST_LEFT_DIRTY * 16),
            read_ahead: super::readahead::window(threshold),
        }
    }
}

/// One file's write stream, for its choice of caching.
#[derive(Debug, Clone)]
pub(super) struct AutoCaching {
    room: Room,
    /// The engine's depth: writes in flight together may be offered out of
    /// order (a copy writes what its reads bring, as they complete), so a
    /// write up to this many of its size behind the latest, or ahead of the
    /// run's end, still continues the run.
    depth: u64,
    /// The current run of sequential writes.
    writes: Run,
    /// Where the run went uncached (`None` while it has not).
    uncached_from: Option<u64>,
    /// What was written uncached was read or written again: writes stay
    /// cached.
    kept: bool,
}

impl AutoCaching {
    pub(super) fn new(room: Room, depth: u32) -> AutoCaching {
        AutoCaching {
            room,
            depth: u64::from(depth.max(1)),
            writes: Run::default(),
            uncached_from: None,
            kept: false,
        }
    }

    /// Whether a write of `len` bytes at `offset` goes uncached. A write
    /// from the run's latest one to its end, give or take a depth of writes
    /// of its size, continues it (so does the same request offered twice, or
    /// a short write's rest); one elsewhere starts a new run, and one back
    /// into an uncached run that the cache could have held keeps the file
    /// cached.
    #[inline]
    pub(super) fn write(&mut self, offset: u64, len: u64) -> bool {
        if self.kept {
            return false;
        }
        let before = self.writes;
        if !self
            .writes
            .take(offset, len, len.saturating_mul(self.depth))
        {
            if self.uncached_from.is_some()
                && before.holds(offset)
                && before.len() <= self.room.rewritable
            {
                // Kept for good: the run is not looked at again.
                self.kept = true;
                self.uncached_from = None;
                return false;
            }
            self.uncached_from = None;
        }
        if self.uncached_from.is_none() && self.writes.len() > self.room.headroom {
            self.uncached_from = Some(offset);
        }
        self.uncached_from.is_some()
    }

    /// Notes a read of `len` bytes at `offset`: one of what the run wrote
    /// uncached keeps the file's writes cached from now on.
    #[inline]
    pub(super) fn read(&mut self, offset: u64, len: u64) {
        if let Some(from) = self.uncached_from
            && offset < self.writes.end()
            && offset.saturating_add(len) > from
        {
            self.kept = true;
            self.uncached_from = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn room(headroom: u64, rewritable: u64) -> Room {
        Room {
            headroom,
            rewritable,
            read_ahead: 64 * MIB,
        }
    }

    #[test]
    fn a_stream_goes_uncached_past_the_headroom_and_stays() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        let uncached: Vec<bool> = (0..8).map(|i| auto.write(i * MIB, MIB)).collect();
        // The fifth write takes the run to 5 MiB, past 4.
        assert_eq!(
            uncached,
            [false, false, false, false, true, true, true, true]
        );
        // The same request offered again, and a short write's rest.
        assert!(auto.write(7 * MIB, MIB));
        assert!(auto.write(7 * MIB + 4096, MIB - 4096));
    }

    #[test]
    fn small_writes_stream_too() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        let small = 8 << 10;
        let uncached = (0..1024).filter(|i| auto.write(i * small, small)).count();
        assert_eq!(uncached, 1024 - 512, "the first 4 MiB cached");
    }

    #[test]
    fn writes_out_of_order_by_less_than_a_depth_still_stream() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 4);
        let block = 128 << 10;
        // Each group of four written in the order its reads completed.
        let order = [2, 0, 3, 1];
        let uncached = (0..64u64)
            .flat_map(|group| order.map(|i| group * 4 + i))
            .filter(|&i| auto.write(i * block, block))
            .count();
        assert!(uncached >= 256 - 40, "{uncached} of 256 went uncached");
    }

    #[test]
    fn random_writes_stay_cached() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        let mut offset = 0u64;
        for _ in 0..1000 {
            offset = (offset + 37 * MIB + 4096) % (1024 * MIB);
            assert!(!auto.write(offset, 128 << 10));
        }
    }

    #[test]
    fn a_new_run_starts_cached() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        for i in 0..8 {
            auto.write(i * MIB, MIB);
        }
        assert!(!auto.write(100 * MIB, MIB), "a jump ahead starts a new run");
        let streamed: Vec<bool> = (101..106).map(|i| auto.write(i * MIB, MIB)).collect();
        assert_eq!(streamed, [false, false, false, true, true]);
    }

    #[test]
    fn a_region_written_again_stays_cached_if_the_cache_could_hold_it() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        for i in 0..32 {
            auto.write(i * MIB, MIB);
        }
        assert!(!auto.write(0, MIB), "32 MiB rewritten in place");
        for i in 1..200 {
            assert!(!auto.write(i * MIB, MIB));
        }
        // A stream longer than the cache holds dirty, written again, goes
        // uncached again.
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        for i in 0..128 {
            auto.write(i * MIB, MIB);
        }
        let again: Vec<bool> = (0..8).map(|i| auto.write(i * MIB, MIB)).collect();
        assert_eq!(again, [false, false, false, false, true, true, true, true]);
    }

    #[test]
    fn reading_what_went_uncached_keeps_writes_cached() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        for i in 0..8 {
            auto.write(i * MIB, MIB);
        }
        auto.read(0, MIB);
        assert!(
            auto.write(8 * MIB, MIB),
            "the cached head read again: no change"
        );
        auto.read(6 * MIB, MIB);
        assert!(!auto.write(9 * MIB, MIB));
        assert!(!auto.write(500 * MIB, MIB));
        for i in 501..600 {
            assert!(!auto.write(i * MIB, MIB));
        }
    }

    #[test]
    fn the_headroom_is_bounded() {
        let room = Room::now();
        assert!((LEAST_LEFT_DIRTY..=MOST_LEFT_DIRTY).contains(&room.headroom));
        assert!(room.rewritable >= room.headroom);
    }
}
