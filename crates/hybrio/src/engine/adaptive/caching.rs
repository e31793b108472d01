//! The caching of the files the caller lets the engine choose it for
//! ([`Caching::Auto`](crate::file::Caching::Auto)).
//!
//! A file's writes stay cached unless they stream (each continues the
//! file's run of sequential writes) past what the page cache takes without
//! writing back beside them. A run goes cached chunk by chunk
//! ([`Room::chunk`] bytes each) up to [`Room::cached_run`], a sixth of the
//! dirty pages at which the kernel starts writing back in the background;
//! before each chunk after the first, the engine reads the machine's dirty
//! pages (`/proc/vmstat`, once a chunk), and stops if one more chunk would
//! take them past half that threshold (several streams at once, other
//! programs' dirty pages). The rest of the run goes uncached
//! (`RWF_DONTCACHE`).
//!
//! Why these bounds. Below them a cached write is the cheapest there is: it
//! returns once its data is copied and leaves the writing back for later (a
//! 300 MiB copy here took half the time cached that it took uncached, with
//! no fsync, and the same with one). A long stream pays that bill while it
//! runs: once the dirty pages reach the background threshold the flusher
//! writes the file back beside the stream, and past the dirty limit every
//! writer of the machine is throttled to its pace. Streaming 10 GiB past
//! the dirty limit here, uncached writes ran at 2.7x (8 KiB), 3.6x
//! (32 KiB), 6.9x (128 KiB) and 9.7x (1 MiB) cached ones (seeds/002); and
//! the same 1 MiB stream cached for its first 256-300 MiB ran as fast as
//! one uncached throughout, for its first 600 MiB at 0.95 of its speed
//! (median of three), 1 GiB at 0.85-0.9, and up to the background
//! threshold (2.3 GiB) at 0.45. A cgroup's own dirty limits (memory.max)
//! are not read.
//!
//! A read of what the run wrote uncached says the data is read again, and a
//! new run that goes back into a run that went uncached, no longer than
//! what the kernel lets be dirty before it starts writing back, says the
//! data is written again (a region rewritten in place, which the cache
//! absorbs): either way the file's writes stay cached from then on. Writes
//! that do not stream (random overwrites) stay cached. Reads stay cached (a
//! stream of them is read ahead of: [`readahead`](super::readahead)); cold
//! sequential reads ran faster uncached here at 128 KiB and 1 MiB (1.2x,
//! 1.9x) and slower at 8 KiB (0.7x), and a cached read keeps the data for
//! whoever reads it again: choosing for reads is not built yet.

use super::run::Run;
use crate::sys::host::{self, DirtyState};

/// The longest chunk of a write run between two looks at the machine's
/// dirty pages: what the run may take them past the kernel's background
/// threshold by, when another stream fills them as fast (a look reads
/// `/proc/vmstat`, tens of microseconds, once in 16 MiB).
const LONGEST_CHUNK: u64 = 16 << 20;
/// The least (a machine with little memory).
const SHORTEST_CHUNK: u64 = 4 << 20;
/// The longest cached run is this share of the kernel's background
/// threshold (see the module's docs for what longer ones cost).
const RUN_SHARE: u64 = 6;
/// A run stays cached while the machine's dirty pages stay within this
/// share of the background threshold.
const MACHINE_SHARE: u64 = 2;

/// The page cache's room for one file's writes, from the kernel's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Room {
    /// A write run's chunk, cached before the engine looks at the dirty
    /// pages again: a sixty-fourth of the dirty cache at which the kernel
    /// starts writing back in the background, between [`SHORTEST_CHUNK`]
    /// and [`LONGEST_CHUNK`].
    pub(crate) chunk: u64,
    /// The longest write run that stays cached ([`RUN_SHARE`]).
    pub(crate) cached_run: u64,
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
        let threshold = host::dirty_state().map(|state| state.background_threshold);
        Room {
            chunk: threshold
                .map_or(LONGEST_CHUNK, |threshold| threshold / 64)
                .clamp(SHORTEST_CHUNK, LONGEST_CHUNK),
            cached_run: threshold.map_or(LONGEST_CHUNK, |threshold| threshold / RUN_SHARE),
            rewritable: threshold.unwrap_or(LONGEST_CHUNK * 16),
            read_ahead: super::readahead::window(threshold),
        }
    }
}

/// The machine's dirty pages now, as the kernel says them; in tests, as
/// the test has set them for its thread ([`pretend_dirty_pages`]).
pub(super) fn machine_dirty_state() -> Option<DirtyState> {
    #[cfg(test)]
    if let Some(state) = PRETENDED.with(std::cell::Cell::get) {
        return Some(state);
    }
    host::dirty_state()
}

#[cfg(test)]
thread_local! {
    static PRETENDED: std::cell::Cell<Option<DirtyState>> = const { std::cell::Cell::new(None) };
}

/// Tests: the dirty pages, and the kernel's background threshold, that
/// writes offered on this thread see (`None`: the kernel's own).
#[cfg(test)]
pub(crate) fn pretend_dirty_pages(dirty: u64, background_threshold: u64) {
    PRETENDED.with(|pretended| {
        pretended.set(Some(DirtyState {
            dirty,
            background_threshold,
        }))
    });
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
    /// The run's length up to which its writes stay cached; `None`: the
    /// rest of the run goes uncached.
    cached_until: Option<u64>,
    /// Where the run's first uncached write was (`None` while it has had none).
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
            cached_until: Some(room.chunk),
            uncached_from: None,
            kept: false,
        }
    }

    /// Whether a write of `len` bytes at `offset` goes uncached; `dirty`
    /// says the machine's dirty pages (asked once a chunk). A write from
    /// the run's latest one to its end, give or take a depth of writes of
    /// its size, continues it (so does the same request offered twice, or
    /// a short write's rest); one elsewhere starts a new run, and one back
    /// into an uncached run that the cache could have held keeps the file
    /// cached.
    #[inline]
    pub(super) fn write(
        &mut self,
        offset: u64,
        len: u64,
        dirty: impl FnOnce() -> Option<DirtyState>,
    ) -> bool {
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
            self.cached_until = Some(self.room.chunk);
        }
        let at = self.writes.len();
        if let Some(until) = self.cached_until
            && at > until
        {
            self.cached_until = self.next_chunk(at - len.min(at), dirty);
        }
        let uncached = self.cached_until.is_none();
        if uncached && self.uncached_from.is_none() {
            self.uncached_from = Some(offset);
        }
        uncached
    }

    /// Where the run's next cached chunk, from run length `at`, ends: `None`
    /// if it would take the run past [`Room::cached_run`], or the machine's
    /// dirty pages past [`MACHINE_SHARE`] of the kernel's background
    /// threshold, or the kernel does not say.
    #[cold]
    fn next_chunk(&self, at: u64, dirty: impl FnOnce() -> Option<DirtyState>) -> Option<u64> {
        let chunk = self.room.chunk;
        let end = at.saturating_add(chunk);
        if end > self.room.cached_run {
            return None;
        }
        let dirty = dirty()?;
        (dirty.dirty.saturating_add(chunk) <= dirty.background_threshold / MACHINE_SHARE)
            .then_some(end)
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

    fn room(chunk: u64, cached_run: u64, rewritable: u64) -> Room {
        Room {
            chunk,
            cached_run,
            rewritable,
            read_ahead: 64 * MIB,
        }
    }

    /// A writer on a machine whose dirty pages are what it wrote cached
    /// (plus `others`), below a background threshold of `threshold`.
    struct Writer {
        auto: AutoCaching,
        dirty: u64,
        others: u64,
        threshold: Option<u64>,
        looks: u32,
    }

    impl Writer {
        fn new(depth: u32, threshold: u64) -> Writer {
            Writer {
                auto: AutoCaching::new(room(4 * MIB, 1024 * MIB, 64 * MIB), depth),
                dirty: 0,
                others: 0,
                threshold: Some(threshold),
                looks: 0,
            }
        }

        /// Whether the write went uncached.
        fn write(&mut self, offset: u64, len: u64) -> bool {
            let state = self.threshold.map(|threshold| DirtyState {
                dirty: self.dirty + self.others,
                background_threshold: threshold,
            });
            let looks = &mut self.looks;
            let uncached = self.auto.write(offset, len, || {
                *looks += 1;
                state
            });
            if !uncached {
                self.dirty += len;
            }
            uncached
        }

        /// Which of `count` sequential writes of `len` bytes from `from`
        /// went uncached.
        fn stream(&mut self, from: u64, len: u64, count: u64) -> Vec<bool> {
            (0..count)
                .map(|i| self.write(from + i * len, len))
                .collect()
        }
    }

    /// `n` writes cached (`false`) or uncached (`true`), run after run.
    fn pattern(runs: &[(bool, usize)]) -> Vec<bool> {
        runs.iter()
            .flat_map(|&(uncached, n)| std::iter::repeat_n(uncached, n))
            .collect()
    }

    #[test]
    fn a_stream_goes_uncached_where_one_more_chunk_would_pass_half_the_background_threshold() {
        let mut writer = Writer::new(1, 64 * MIB);
        let uncached = writer.stream(0, MIB, 40);
        // Chunks of 4 MiB while the dirty pages stay at or below 32 MiB:
        // eight of them, then the rest.
        assert_eq!(uncached, pattern(&[(false, 32), (true, 8)]));
        // The same request offered again, and a short write's rest.
        assert!(writer.write(39 * MIB, MIB));
        assert!(writer.write(39 * MIB + 4096, MIB - 4096));
        // The dirty pages are read once a chunk, not once a write.
        assert_eq!(writer.looks, 8);
    }

    #[test]
    fn other_dirty_pages_count_against_the_threshold() {
        let mut writer = Writer::new(1, 64 * MIB);
        writer.others = 20 * MIB;
        let uncached = writer.stream(0, MIB, 20);
        assert_eq!(uncached, pattern(&[(false, 12), (true, 8)]));
    }

    #[test]
    fn a_stream_the_cache_takes_whole_stays_cached() {
        let mut writer = Writer::new(1, 4096 * MIB);
        assert!(writer.stream(0, MIB, 300).iter().all(|&u| !u));
    }

    #[test]
    fn a_run_goes_uncached_past_its_own_bound_whatever_the_room() {
        let mut writer = Writer::new(1, 4096 * MIB);
        writer.auto = AutoCaching::new(room(4 * MIB, 24 * MIB, 64 * MIB), 1);
        let uncached = writer.stream(0, MIB, 40);
        assert_eq!(uncached, pattern(&[(false, 24), (true, 16)]));
        // A new run has its own.
        assert!(writer.stream(100 * MIB, MIB, 24).iter().all(|&u| !u));
    }

    #[test]
    fn without_the_kernels_word_a_stream_goes_uncached_past_its_first_chunk() {
        let mut writer = Writer::new(1, 0);
        writer.threshold = None;
        let uncached = writer.stream(0, MIB, 8);
        assert_eq!(uncached, pattern(&[(false, 4), (true, 4)]));
    }

    #[test]
    fn small_writes_stream_too() {
        let mut writer = Writer::new(1, 16 * MIB);
        let small = 8 << 10;
        let uncached = writer.stream(0, small, 2048).iter().filter(|&&u| u).count();
        assert_eq!(uncached, 2048 - 1024, "the first 8 MiB cached");
    }

    #[test]
    fn writes_out_of_order_by_less_than_a_depth_still_stream() {
        let mut writer = Writer::new(4, 4 * MIB);
        let block = 128 << 10;
        // Each group of four written in the order its reads completed.
        let order = [2, 0, 3, 1];
        let uncached = (0..64u64)
            .flat_map(|group| order.map(|i| group * 4 + i))
            .filter(|&i| writer.write(i * block, block))
            .count();
        assert!(uncached >= 256 - 40, "{uncached} of 256 went uncached");
    }

    #[test]
    fn random_writes_stay_cached() {
        let mut writer = Writer::new(1, 0);
        let mut offset = 0u64;
        for _ in 0..1000 {
            offset = (offset + 37 * MIB + 4096) % (1024 * MIB);
            assert!(!writer.write(offset, 128 << 10));
        }
        assert_eq!(writer.looks, 0);
    }

    #[test]
    fn a_new_run_starts_with_a_cached_chunk() {
        let mut writer = Writer::new(1, 0);
        writer.stream(0, MIB, 8);
        assert!(
            !writer.write(100 * MIB, MIB),
            "a jump ahead starts a new run"
        );
        let streamed = writer.stream(101 * MIB, MIB, 5);
        assert_eq!(streamed, [false, false, false, true, true]);
    }

    #[test]
    fn a_region_written_again_stays_cached_if_the_cache_could_hold_it() {
        let mut writer = Writer::new(1, 0);
        writer.stream(0, MIB, 32);
        assert!(!writer.write(0, MIB), "32 MiB rewritten in place");
        assert!(writer.stream(MIB, MIB, 199).iter().all(|&u| !u));
        // A stream longer than the cache holds dirty, written again, goes
        // uncached again.
        let mut writer = Writer::new(1, 0);
        writer.stream(0, MIB, 128);
        let again = writer.stream(0, MIB, 8);
        assert_eq!(again, pattern(&[(false, 4), (true, 4)]));
    }

    #[test]
    fn reading_what_went_uncached_keeps_writes_cached() {
        let mut writer = Writer::new(1, 0);
        writer.stream(0, MIB, 8);
        writer.auto.read(0, MIB);
        assert!(
            writer.write(8 * MIB, MIB),
            "the cached head read again: no change"
        );
        writer.auto.read(6 * MIB, MIB);
        assert!(!writer.write(9 * MIB, MIB));
        assert!(!writer.write(500 * MIB, MIB));
        assert!(writer.stream(501 * MIB, MIB, 99).iter().all(|&u| !u));
    }

    #[test]
    fn the_chunk_is_bounded_and_the_kernel_says_its_dirty_pages() {
        let room = Room::now();
        assert!((SHORTEST_CHUNK..=LONGEST_CHUNK).contains(&room.chunk));
        assert!(room.rewritable >= room.chunk);
        assert!(room.cached_run <= room.rewritable);
        let state = host::dirty_state().expect("/proc/vmstat names the dirty pages");
        assert!(state.background_threshold > 0, "{state:?}");
    }
}
