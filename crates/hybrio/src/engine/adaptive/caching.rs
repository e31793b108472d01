//! The caching of the files the caller lets the engine choose it for
//! ([`Caching::Auto`](crate::file::Caching::Auto)).
//!
//! **Writes** go uncached (`RWF_DONTCACHE`) once they stream: each
//! continues the file's run of sequential writes, and the run has passed
//! [`Room::headroom`] bytes, what one file may leave dirty in the page
//! cache. Whatever their size: streaming 10 GiB past the dirty limit here,
//! uncached writes ran at 2.7x (8 KiB), 3.6x (32 KiB), 6.9x (128 KiB) and
//! 9.7x (1 MiB) cached ones (seeds/002, each run starting with the same
//! memory). Until then, and for writes that do not stream (random
//! overwrites, which the cache absorbs), they stay cached.
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
//!
//! **Reads** carry no such debt, and are priced by their time: a run of
//! sequential reads past the headroom is read both ways in turn (a trial of
//! four [`READ_EPOCH`]s, uncached, cached, cached, uncached, each timed
//! past its first [`READ_WARM`] bytes, which the way before read ahead),
//! and then the way that took less time per byte, cached on a tie. The
//! answer depends on the request and the depth, not only on the device:
//! cold 1 MiB reads here ran 1.4x faster uncached one at a time and 1.2x
//! slower at depth 16, and 8 KiB ones 1.5x slower uncached. Data already
//! cached reads alike both ways (an uncached read leaves a page it did not
//! bring in where it was), so a re-read file stays cached. The run is tried
//! again after [`FIRST_HOLD`] bytes, then twice as many while the answer
//! holds. Two clock reads an epoch; random reads never pass the headroom.
//!
//! **Kept cached**: a read of what the write run wrote uncached, or a new
//! run that goes back into one that went uncached and that the cache could
//! have held (no longer than what the kernel lets be dirty before it writes
//! back: a region rewritten or read again in place), says the data is used
//! again: the file stays cached from then on.

use crate::probe;

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
}

impl Room {
    /// The room on this machine, now.
    pub(crate) fn now() -> Room {
        let threshold = probe::dirty_background_threshold();
        Room {
            headroom: threshold
                .map_or(MOST_LEFT_DIRTY, |threshold| threshold / 64)
                .clamp(LEAST_LEFT_DIRTY, MOST_LEFT_DIRTY),
            rewritable: threshold.unwrap_or(MOST_LEFT_DIRTY * 16),
        }
    }
}

/// Bytes of a read stream tried one way before it is tried the other, while
/// its caching is chosen. Four of them make a trial.
const READ_EPOCH: u64 = 32 << 20;
/// The head of each epoch that is not timed: what the kernel read ahead for
/// the epoch before is still being consumed (this machine's disk reads ahead
/// 8 MiB).
const READ_WARM: u64 = 8 << 20;
/// The trial's epochs, uncached or not: each way twice, the second pair in
/// the opposite order, so a stream that speeds up or slows down across the
/// trial weighs on both alike.
const TRIAL: [bool; 4] = [true, false, false, true];
/// Uncached reads must be this much cheaper (their time per byte at most
/// this share of cached reads'): on a tie, cached, which keeps the data for
/// whoever reads it next.
const UNCACHED_AT_MOST: f64 = 0.95;
/// Bytes read the chosen way before the next trial; doubled each time a
/// trial agrees with the one before, up to [`LONGEST_HOLD`].
const FIRST_HOLD: u64 = 1 << 30;
const LONGEST_HOLD: u64 = 16 << 30;

/// A run of sequential requests: from `start` to `end`, its latest request
/// at `last`.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    start: u64,
    end: u64,
    last: u64,
}

impl Run {
    /// Takes a request of `len` bytes at `offset`: whether it continues the
    /// run (from the latest request to the run's end, give or take `slack`
    /// bytes: requests in flight together may be offered out of order, and
    /// the same one may be offered twice). One elsewhere starts a new run.
    #[inline]
    fn take(&mut self, offset: u64, len: u64, slack: u64) -> bool {
        let continues =
            offset >= self.last.saturating_sub(slack) && offset <= self.end.saturating_add(slack);
        if !continues {
            *self = Run {
                start: offset,
                end: offset,
                last: offset,
            };
        }
        self.last = offset;
        self.end = self.end.max(offset.saturating_add(len));
        continues
    }

    fn len(&self) -> u64 {
        self.end - self.start
    }

    fn holds(&self, offset: u64) -> bool {
        (self.start..self.end).contains(&offset)
    }
}

/// Where a read stream's choice of caching is.
#[derive(Debug, Clone, Copy)]
enum ReadChoice {
    /// The run is not past the headroom yet: cached.
    Short,
    /// Trying both ways: epoch `epoch` of [`TRIAL`] began at run length
    /// `from`; its timed part began at `timed` (run length, time in ns)
    /// once past the warm head. `spent` sums the timed parts' ns and bytes,
    /// cached ([0]) and uncached ([1]).
    Trial {
        epoch: usize,
        from: u64,
        timed: Option<(u64, u64)>,
        spent: [(u64, u64); 2],
        /// The trial before's answer, and how long it held.
        before: Option<(bool, u64)>,
    },
    /// Chosen: uncached or not, until the run's length reaches `until`,
    /// after holding for `hold` bytes.
    Chosen {
        uncached: bool,
        until: u64,
        hold: u64,
    },
}

/// One file's streams, for its choice of caching.
#[derive(Debug, Clone)]
pub(super) struct AutoCaching {
    room: Room,
    /// The engine's depth: requests in flight together may be offered out of
    /// order (a copy writes what its reads bring, as they complete), so one
    /// up to this many of its size behind the latest, or ahead of the run's
    /// end, still continues the run.
    depth: u64,
    /// The current run of sequential writes.
    writes: Run,
    /// Where the write run went uncached (`None` while it has not).
    uncached_from: Option<u64>,
    /// The current run of sequential reads.
    reads: Run,
    /// Where the read run first read uncached (`None` while it has not).
    read_uncached_from: Option<u64>,
    read_choice: ReadChoice,
    /// What was read or written uncached was read or written again: the
    /// file stays cached.
    kept: bool,
}

impl AutoCaching {
    pub(super) fn new(room: Room, depth: u32) -> AutoCaching {
        AutoCaching {
            room,
            depth: u64::from(depth.max(1)),
            writes: Run::default(),
            uncached_from: None,
            reads: Run::default(),
            read_uncached_from: None,
            read_choice: ReadChoice::Short,
            kept: false,
        }
    }

    /// Whether the data of a run that went uncached at `from`, and that a
    /// request at `offset` goes back into, is used again: the run could
    /// have stayed in the cache (no longer than what the kernel lets be
    /// dirty before it writes back).
    fn again(&self, run: &Run, from: Option<u64>, offset: u64) -> bool {
        from.is_some() && run.holds(offset) && run.len() <= self.room.rewritable
    }

    fn keep(&mut self) {
        self.kept = true;
        self.uncached_from = None;
        self.read_uncached_from = None;
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
            if self.again(&before, self.uncached_from, offset) {
                self.keep();
                return false;
            }
            self.uncached_from = None;
        }
        if self.uncached_from.is_none() && self.writes.len() > self.room.headroom {
            self.uncached_from = Some(offset);
        }
        self.uncached_from.is_some()
    }

    /// Whether a read of `len` bytes at `offset` goes uncached, `now`
    /// giving the time in ns (read only where a trial's epoch is timed). A
    /// read of what the write run wrote uncached, or one back into a read
    /// run that read uncached and that the cache could have held, keeps the
    /// file cached. Otherwise a read run past the headroom is tried both
    /// ways, and read the way that took less time per byte, tried again
    /// after [`FIRST_HOLD`] bytes, then twice as many while the answer
    /// holds.
    #[inline]
    pub(super) fn read(&mut self, offset: u64, len: u64, now: impl FnOnce() -> u64) -> bool {
        if self.kept {
            return false;
        }
        if let Some(from) = self.uncached_from
            && offset < self.writes.end
            && offset.saturating_add(len) > from
        {
            self.keep();
            return false;
        }
        let before = self.reads;
        if !self.reads.take(offset, len, len.saturating_mul(self.depth)) {
            if self.again(&before, self.read_uncached_from, offset) {
                self.keep();
                return false;
            }
            self.read_uncached_from = None;
            self.read_choice = ReadChoice::Short;
        }
        let run = self.reads.len();
        let uncached = self.read_choice(run, now);
        if uncached && self.read_uncached_from.is_none() {
            self.read_uncached_from = Some(offset);
        }
        uncached
    }

    /// The read run's choice once it is `run` bytes long.
    fn read_choice(&mut self, run: u64, now: impl FnOnce() -> u64) -> bool {
        match &mut self.read_choice {
            ReadChoice::Short => {
                if run <= self.room.headroom {
                    return false;
                }
                self.read_choice = ReadChoice::Trial {
                    epoch: 0,
                    from: run,
                    timed: None,
                    spent: [(0, 0); 2],
                    before: None,
                };
                TRIAL[0]
            }
            ReadChoice::Chosen {
                uncached,
                until,
                hold,
            } => {
                if run < *until {
                    return *uncached;
                }
                self.read_choice = ReadChoice::Trial {
                    epoch: 0,
                    from: run,
                    timed: None,
                    spent: [(0, 0); 2],
                    before: Some((*uncached, *hold)),
                };
                TRIAL[0]
            }
            ReadChoice::Trial {
                epoch,
                from,
                timed,
                spent,
                before,
            } => {
                let into = run.saturating_sub(*from);
                if into < READ_WARM {
                    return TRIAL[*epoch];
                }
                let Some((timed_from, started)) = *timed else {
                    *timed = Some((run, now()));
                    return TRIAL[*epoch];
                };
                if into < READ_EPOCH {
                    return TRIAL[*epoch];
                }
                let way = &mut spent[usize::from(TRIAL[*epoch])];
                way.0 += now().saturating_sub(started);
                way.1 += run - timed_from;
                if *epoch + 1 < TRIAL.len() {
                    *epoch += 1;
                    *from = run;
                    *timed = None;
                    return TRIAL[*epoch];
                }
                let per_byte = |(ns, bytes): (u64, u64)| ns as f64 / bytes.max(1) as f64;
                let uncached = per_byte(spent[1]) <= UNCACHED_AT_MOST * per_byte(spent[0]);
                let hold = match *before {
                    Some((was, hold)) if was == uncached => (hold * 2).min(LONGEST_HOLD),
                    _ => FIRST_HOLD,
                };
                self.read_choice = ReadChoice::Chosen {
                    uncached,
                    until: run.saturating_add(hold),
                    hold,
                };
                uncached
            }
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
        assert!(!auto.read(0, MIB, || 0));
        assert!(
            auto.write(8 * MIB, MIB),
            "the cached head read again: no change"
        );
        assert!(!auto.read(6 * MIB, MIB, || 0));
        assert!(!auto.write(9 * MIB, MIB));
        assert!(!auto.write(500 * MIB, MIB));
        for i in 501..600 {
            assert!(!auto.write(i * MIB, MIB));
        }
    }

    /// Reads `count` requests of `len` bytes from `from` on, each taking
    /// `ns_per_mib(uncached)` per MiB on a clock of its own: the choices.
    fn stream_reads(
        auto: &mut AutoCaching,
        clock: &mut u64,
        from: u64,
        count: u64,
        len: u64,
        ns_per_mib: impl Fn(bool) -> u64,
    ) -> Vec<bool> {
        (0..count)
            .map(|i| {
                let now = *clock;
                let uncached = auto.read(from + i * len, len, || now);
                *clock += ns_per_mib(uncached) * len / MIB;
                uncached
            })
            .collect()
    }

    /// Where the stream's choices changed: (request, now uncached).
    fn changes(choices: &[bool]) -> Vec<(usize, bool)> {
        let mut changes = vec![(0, choices[0])];
        changes.extend(
            choices
                .windows(2)
                .enumerate()
                .filter(|(_, pair)| pair[0] != pair[1])
                .map(|(i, pair)| (i + 1, pair[1])),
        );
        changes
    }

    #[test]
    fn a_read_stream_is_tried_both_ways_past_the_headroom_and_takes_the_faster() {
        let epoch = (READ_EPOCH / MIB) as usize;
        for (uncached_ns, cached_ns, chosen) in [(1000, 2000, true), (3000, 2000, false)] {
            let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
            let mut clock = 0;
            let choices = stream_reads(&mut auto, &mut clock, 0, 1024, MIB, |uncached| {
                if uncached { uncached_ns } else { cached_ns }
            });
            // Cached to 4 MiB, then the trial's epochs: uncached, cached
            // twice, uncached; then the choice, held for the rest.
            let mut expected = vec![
                (0, false),
                (4, true),
                (4 + epoch, false),
                (4 + 3 * epoch, true),
            ];
            if !chosen {
                expected.push((4 + 4 * epoch, false));
            }
            assert_eq!(
                changes(&choices),
                expected,
                "uncached {uncached_ns} ns/MiB, cached {cached_ns}"
            );
        }
    }

    #[test]
    fn a_read_tie_stays_cached() {
        // Data in the cache reads alike both ways.
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        let mut clock = 0;
        let choices = stream_reads(&mut auto, &mut clock, 0, 1024, MIB, |_| 1000);
        assert!(choices[200..].iter().all(|&uncached| !uncached));
        // Small reads too, and uncached 3% cheaper is a tie.
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        let small = 8 << 10;
        let choices = stream_reads(&mut auto, &mut clock, 0, 40_000, small, |uncached| {
            if uncached { 970_000 } else { 1_000_000 }
        });
        assert!(choices[30_000..].iter().all(|&uncached| !uncached));
    }

    #[test]
    fn a_read_stream_is_tried_again_later_and_follows_a_change() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        let mut clock = 0;
        let gib = (FIRST_HOLD / MIB) as usize;
        let trial = (4 * READ_EPOCH / MIB) as usize;
        // Uncached is faster for the first 3 GiB, then cached is.
        let choices: Vec<bool> = (0..6 * gib as u64)
            .map(|i| {
                let now = clock;
                let uncached = auto.read(i * MIB, MIB, || now);
                let faster = if i < 3 * gib as u64 {
                    uncached
                } else {
                    !uncached
                };
                clock += if faster { 1000 } else { 2000 };
                uncached
            })
            .collect();
        let first = 4 + trial;
        // Held 1 GiB, tried again and held 2 GiB (the same answer): then
        // tried again past the change and held cached.
        let second = first + gib + trial;
        let third = second + 2 * gib + trial;
        assert!(choices[first..first + gib].iter().all(|&u| u));
        assert!(choices[second..second + 2 * gib].iter().all(|&u| u));
        assert!(third < choices.len());
        assert!(
            choices[third..third + gib].iter().all(|&u| !u),
            "cached after the change"
        );
    }

    #[test]
    fn reading_again_what_was_read_uncached_keeps_the_file_cached() {
        let mut auto = AutoCaching::new(room(4 * MIB, 256 * MIB), 1);
        let mut clock = 0;
        let faster_uncached = |uncached| if uncached { 1000 } else { 2000 };
        let choices = stream_reads(&mut auto, &mut clock, 0, 200, MIB, faster_uncached);
        assert!(choices[199]);
        // 200 MiB read again from the start: cached for good.
        let again = stream_reads(&mut auto, &mut clock, 0, 1024, MIB, faster_uncached);
        assert!(again.iter().all(|&u| !u));
        assert!(!auto.write(2048 * MIB, MIB));
        // A run longer than the cache could hold, read again, is tried again.
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        stream_reads(&mut auto, &mut clock, 0, 200, MIB, faster_uncached);
        let again = stream_reads(&mut auto, &mut clock, 0, 200, MIB, faster_uncached);
        assert_eq!(&again[..5], [false, false, false, false, true]);
    }

    #[test]
    fn random_reads_stay_cached_and_read_no_clock() {
        let mut auto = AutoCaching::new(room(4 * MIB, 64 * MIB), 1);
        let mut offset = 0u64;
        for _ in 0..1000 {
            offset = (offset + 37 * MIB + 4096) % (1024 * MIB);
            assert!(!auto.read(offset, 128 << 10, || panic!("no clock read")));
        }
    }

    #[test]
    fn the_headroom_is_bounded() {
        let room = Room::now();
        assert!((LEAST_LEFT_DIRTY..=MOST_LEFT_DIRTY).contains(&room.headroom));
        assert!(room.rewritable >= room.headroom);
    }
}
