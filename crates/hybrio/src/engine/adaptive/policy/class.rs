//! One class's policy: its tuning, its state, and what it answers without
//! measuring or exploring. The methods that take measurements in and explore
//! are in [`measure`](super::measure) and [`explore`](super::explore), which
//! build on this; the fields are theirs too, hence `pub(super)`.

use super::window::{Exploration, Window};
use crate::engine::adaptive::path::Path;
use crate::engine::adaptive::priors::Prior;

/// Completed requests per measurement window of the chosen path...
pub(super) const WINDOW: u32 = 32;
/// ...and the least time it spans: 32 page-cache hits take 30 us, in which
/// one interrupt is a large share.
pub(super) const WINDOW_NS: u64 = 200_000;
/// A class's first window needs only this many (and no least time): it
/// sets the scale for outliers and the class's first price. At depth 1 that
/// price stands until the first exploration, which waits for the learning
/// budget anyway; at depth a full window replaces it before the other path
/// is tried (see [`ClassPolicy::rough`]). (A device read at depth 16 takes 70
/// us inline and 10 through io_uring: such `O_DIRECT` classes start
/// asynchronous, not inline.)
pub(super) const FIRST_WINDOW: u32 = 8;
/// Requests in an inline exploration epoch...
pub(super) const INLINE_EPOCH: u32 = 32;
/// ...of which the first is left out.
pub(super) const INLINE_EPOCH_SKIP: u32 = 1;
/// An inline request taking this long (a typical one, in the class's latest
/// window) is timed every time: the clock costs nothing beside it. At least
/// [`SLOW_INLINE_CLOCK_READS`] reads of the clock, which is the point: where
/// reading the clock is slow (a VM without a usable TSC), or everything is
/// (under valgrind, which runs user code 20-50 times slower than the
/// kernel's), the line moves with it.
pub(crate) const SLOW_INLINE_NS: f64 = 16_000.0;
/// ...in reads of the clock.
pub(crate) const SLOW_INLINE_CLOCK_READS: f64 = 1_000.0;
/// The other path must be this much cheaper to be chosen: a tie is not worth a switch.
pub(super) const MARGIN: f64 = 0.05;
/// ...or as much cheaper as the chosen path's own windows vary, up to this.
pub(super) const MAX_MARGIN: f64 = 0.25;
/// The explorations a switch weighs together at most: beyond, the older
/// half is forgotten (the paths' costs move with the workload).
pub(super) const EVIDENCE_EPOCHS: u32 = 8;
/// No window cost seen yet.
pub(super) const NO_RANGE: (f64, f64) = (f64::INFINITY, 0.0);
/// A window cost within this factor of the chosen path's settled levels is
/// one of them (see [`ClassPolicy::settled`]).
pub(super) const LEVEL_SLACK: f64 = 1.25;
/// An explored path this many times dearer than the chosen one is far off...
pub(super) const FAR: f64 = 1.5;
/// ...and each such exploration in a row doubles the interval to the next,
/// this many times at most (so 400 ms).
pub(super) const MAX_CALM: u32 = 2;
/// Two windows in a row whose cost is this many times the running cost (or
/// this many times less) replace it and start an exploration soon: one such
/// window is noise (a writeback stall), two are a change.
pub(super) const DRIFT: f64 = 1.5;
/// A class's first explorations come back sooner than the regular ones, so
/// that a short job (a copy of a few thousand requests) still looks again
/// when its first look was unlucky: the first after this many epoch lengths,
/// each next one after twice as many, until the regular spacing...
pub(super) const LEARNING_SPACING: u64 = 8;
/// ...and only once the class's time since the last exploration is this many
/// times that exploration's cost (see [`ClassPolicy::last_learning_ns`]): learning
/// takes at most this share of a class's time from its first request on.
pub(super) const LEARNING_TIME_FACTOR: f64 = 50.0;
/// An asynchronous epoch that opened before the engine's asynchronous path
/// had this many completions priced its start, not the path: io_uring makes
/// its kernel workers on first use, and a copy's first writes through it
/// took twice as long as its later ones, for its first 10-40 ms (with 64,
/// a copy's classes came out 1.3 times io_uring's time in 7 rounds; with
/// 256, 1.13). Found dearer, it is looked at again soon, as a close call is
/// (once per class).
pub(super) const COLD_ASYNC_COMPLETIONS: u64 = 256;
/// Before anything is measured, what one request handed to another thread
/// costs the caller: waking a kernel worker and being woken back (about 10
/// us each between this machine's two vCPUs), and more while the worker
/// starts (io_uring's 8 KiB buffered writes on ext4: 4 us at the median, 13
/// on average, 87 at the 99th percentile).
pub(super) const HANDOFF_NS: f64 = 30_000.0;
/// Explorations come back after at least this long...
pub(crate) const EXPLORE_INTERVAL_NS: u64 = 100_000_000;
/// ...and after at least this many epoch lengths of requests, so that they
/// never take more than a fifth of a percent of a class's requests (and so
/// stay out of its 99th percentile, with the completions held behind them).
pub(crate) const EXPLORE_SPACING: u64 = 500;
/// An exploration started by a drift, or looking back at the path just left,
/// waits at least this many epoch lengths after the last one, so that a cost
/// that keeps moving cannot make the engine explore all the time.
pub(super) const DRIFT_SPACING: u64 = 4;
/// Once a class has counted enough requests for its next exploration but not
/// enough time has passed, it looks at the clock again after this many more:
/// the requests between go straight through, and a page-cache hit takes 1-3
/// us, so the exploration starts at most a fraction of a millisecond late.
/// Without this, every request after the count took the slower routed path
/// until the time came: 90% of them at 400 ms between explorations, 10% of
/// the throughput of 8k buffered writes. The engine's timed requests, one
/// of a class in this many, are these looks.
pub(crate) const CLOCK_CHECK_SPACING: u64 = 128;
/// The caller's own time after a timed inline request counted for one such
/// gap at most: a caller that stops for a second is idle, not slow.
pub(crate) const GAP_CAP_NS: u64 = 1_000_000;

/// The decision state of one class of requests (one file, one operation,
/// one size class).
#[derive(Debug, Clone)]
pub(crate) struct ClassPolicy {
    pub(super) chosen: Path,
    /// Latest cost per path, nanoseconds per request; `None`: never measured.
    /// The chosen path's is a running average of its windows.
    pub(super) cost: [Option<f64>; 2],
    /// The last window drifted: +1 up, -1 down, 0 not; and its cost.
    pub(super) drift: (i8, f64),
    /// The chosen path's latest window costs, oldest first (up to three):
    /// its cost is their median, which one window with a writeback stall or
    /// a burst of preemptions cannot move.
    pub(super) recent: [f64; 3],
    pub(super) recent_len: usize,
    /// Per path, the mean sample of its latest window (latency, for
    /// asynchronous): the scale for outliers.
    pub(super) typical: [f64; 2],
    pub(super) window: Window,
    pub(super) exploring: Option<Exploration>,
    pub(super) epoch: u32,
    /// Requests of the class since the last exploration ended.
    pub(super) since_exploration: u64,
    /// Explorations the class has finished.
    pub(super) explorations: u32,
    /// What the explorations cost beyond the chosen path: each request sent
    /// the other way times how much dearer that way came out, nanoseconds of
    /// the caller's time; the last one's, and the total not yet reported.
    pub(super) last_learning_ns: f64,
    pub(super) unreported_learning_ns: f64,
    /// ...and the total since the class's first request, cold epochs'
    /// included: the explorations' share of its time, kept within
    /// [`LEARNING_TIME_FACTOR`].
    pub(super) learning_spent_ns: f64,
    /// ...and the last exploration's, cold or not: what the next may cost.
    pub(super) last_spent_ns: f64,
    /// An exploration priced both paths since [`take_learned`](Self::take_learned) last looked.
    pub(super) learned: bool,
    /// The class started from a prior whose price its first window has not
    /// yet checked; and that window found it far off.
    pub(super) from_prior: bool,
    pub(super) refuted: bool,
    /// A cold asynchronous epoch (see [`COLD_ASYNC_COMPLETIONS`]) was looked
    /// at again soon: once per class.
    pub(super) cold_rechecked: bool,
    /// The chosen path's first samples, and how many, until they set its
    /// scale ([`scale_first_window`](Self::scale_first_window)).
    pub(super) first_samples: ([u64; FIRST_WINDOW as usize], usize),
    /// A class starting asynchronous leaves its first completions out of its
    /// first window, as an asynchronous epoch does, while the queue fills:
    /// 8 completions from a standing start priced a device read at depth 16
    /// at 35-50 us, against 9 once the queue is full.
    pub(super) first_skip_left: u32,
    /// Below this many requests since the last exploration, none can be
    /// due, so a request follows the choice without looking further
    /// ([`straight_allowance`](Self::straight_allowance)); 0 while a path is unpriced.
    pub(super) next_check: u64,
    /// Explorations that found the other path far dearer in a row (at most
    /// [`MAX_CALM`]): each doubles the time to the next regular one.
    pub(super) calm: u32,
    /// The class has compared its paths at least once.
    pub(super) compared: bool,
    /// The lowest and highest window cost of the chosen path seen while the
    /// other path's latest price was far above it (by [`FAR`]), in steady
    /// windows (not drifting): levels the path is known to move between
    /// without the choice being in question. A drift to one of them brings
    /// no exploration: ext4's buffered writes swing between about 1.1 and
    /// 2.7 us every 60 ms or so as writeback comes and goes, and exploring
    /// at each swing sent a tenth of a percent of the requests to kernel
    /// workers 20 times slower, costing 5-9% of the throughput. A level
    /// outside them (a cache dropped, or filled under an asynchronous class)
    /// still does. Forgotten on a switch, and when an exploration finds the
    /// other path no longer far dearer.
    pub(super) settled: (f64, f64),
    /// The lowest and highest window cost of the chosen path lately (since
    /// it was chosen or drifted; each exploration halves the range towards
    /// the current cost, so it remembers a few hundred milliseconds): how
    /// much the path varies by itself, which sets the [`margin`](Self::margin).
    pub(super) range: (f64, f64),
    pub(super) last_exploration_ns: u64,
    /// An exploration is wanted soon: the cost drifted, the epochs so far
    /// lean to the other path and more must confirm it (see
    /// [`evidence`](Self::evidence)), a cold epoch is looked at again, or the
    /// class just switched and looks back once at the path it left.
    pub(super) recheck: bool,
    /// The [`recheck`](Self::recheck) wanted is expected to cost little:
    /// the evidence leans to the other path, it looks back at the path just
    /// left, or a cold epoch came out close. It comes soon whatever the
    /// explorations have cost so far; the others (after a cold epoch far
    /// dearer, after a drift) wait for the class's learning budget.
    pub(super) recheck_free: bool,
    /// What the explorations since the class last switched (or its cost
    /// last moved to a new level) said of the other path: the sum of the
    /// logarithms of its price over the chosen path's, and how many. A
    /// switch needs their mean to clear the margin, by less the more epochs
    /// agree: one epoch's price is a few dozen requests, and a path 20%
    /// cheaper in a class whose windows vary by 25% (a copy's reads beside
    /// its writes on a kernel worker) never came out cheaper by the margin
    /// twice in a row, so the class kept the dearer path for good.
    pub(super) evidence: (f64, u32),
    /// The margin when the class last switched: how much the path it left
    /// varied by itself. A look back at that path needs as much, or a path
    /// that swings between a good phase and a bad one would win back the
    /// class in each good phase against a steady path cheaper on average.
    pub(super) left_margin: f64,
    /// Requests in an asynchronous epoch: four depths, so that the caller's
    /// queue fills, and the unit of the spacing between explorations.
    pub(super) epoch_length: u32,
    /// Completions an asynchronous epoch leaves out while the queue fills.
    pub(super) skip: u32,
    /// The caller's depth.
    pub(super) depth: u32,
    /// When the class's first request was routed.
    pub(super) born_ns: Option<u64>,
    /// An inline request taking this long is timed every time (see
    /// [`SLOW_INLINE_NS`]).
    pub(super) slow_inline_ns: f64,
    /// A timed request of the chosen path took
    /// [`OUTLIER`](super::window::OUTLIER) times more or less than its
    /// typical one, or inline that long: every request is timed until the
    /// window ends, which then says whether it was one odd request or a
    /// change (the engine times one request in 64 while a class follows its
    /// choice, so a change would otherwise take 64 times as many requests to
    /// see).
    pub(super) escalated: bool,
    /// The chosen path's price is its first window's alone (see
    /// [`FIRST_WINDOW`]): eight requests, which the cold start of
    /// everything beneath them can make dearer than the path is (4 KiB
    /// page-cache hits on tmpfs: 2.4-4.8 us, then 1.3-1.6). Every request is
    /// timed until a full window replaces it whole, and a class starting
    /// inline at depth explores only then: at depth 32 an epoch against the
    /// first window's price found io_uring's kernel workers (2.2 us) 1.5
    /// times cheaper, and the next window, timed one request in 128, came
    /// 4-8 ms later; the look back at inline from there (draining 32
    /// requests on workers) priced it too dear to come back, and a job ran
    /// at 0.7 of psync's speed.
    pub(super) rough: bool,
}

/// What [`ClassPolicy::route`] decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Route {
    /// Where the request goes.
    pub(crate) path: Path,
    /// The exploration epoch it belongs to, 0 when it follows the choice.
    pub(crate) epoch: u32,
    /// An exploration just ended by switching the class to the other path.
    pub(crate) switched: bool,
}

impl ClassPolicy {
    /// A class whose caller keeps at most `depth` requests outstanding, its
    /// inline requests all timed from `slow_inline_ns` on.
    pub(crate) fn new(depth: u32, slow_inline_ns: f64) -> ClassPolicy {
        let epoch_length = depth.saturating_mul(4).clamp(INLINE_EPOCH, 128);
        ClassPolicy {
            chosen: Path::Inline,
            cost: [None; 2],
            drift: (0, 0.0),
            recent: [0.0; 3],
            recent_len: 0,
            typical: [f64::INFINITY; 2],
            window: Window::default(),
            exploring: None,
            epoch: 0,
            since_exploration: 0,
            explorations: 0,
            last_learning_ns: 0.0,
            unreported_learning_ns: 0.0,
            learning_spent_ns: 0.0,
            last_spent_ns: 0.0,
            learned: false,
            cold_rechecked: false,
            from_prior: false,
            refuted: false,
            first_samples: ([0; FIRST_WINDOW as usize], 0),
            first_skip_left: 0,
            next_check: 0,
            calm: 0,
            compared: false,
            range: NO_RANGE,
            settled: NO_RANGE,
            last_exploration_ns: 0,
            recheck: false,
            evidence: (0.0, 0),
            recheck_free: false,
            left_margin: MARGIN,
            epoch_length,
            skip: depth.min(epoch_length / 4),
            depth,
            born_ns: None,
            slow_inline_ns,
            escalated: false,
            rough: false,
        }
    }

    /// Starts the class from what a class of its kind settled on: its first
    /// choice is made at once, on those prices, and it looks again as rarely
    /// as that class had come to. A prior that no longer fits shows as soon
    /// as the chosen path's windows come in, as any change does: two windows
    /// far from its price replace it and bring an exploration soon.
    pub(crate) fn start_from(&mut self, prior: &Prior) {
        self.chosen = prior.chosen;
        self.cost = prior.cost.map(Some);
        self.typical = prior.typical;
        self.explorations = prior.explorations.max(1);
        // As if two windows had measured the chosen path's price: one window
        // of this class's own cannot replace it, two far from it are a drift.
        let chosen = prior.cost[prior.chosen.index()];
        self.recent = [chosen; 3];
        self.recent_len = 2;
        self.from_prior = true;
        // The prior is checked at once: the first window times every
        // request, as a new class's does, and the class's own first
        // comparison decides on one epoch when it is clear (`compared` stays
        // false): the prices were measured elsewhere.
        self.escalated = true;
        self.refresh_next_check();
    }

    /// Whether the class's first window found the prior it started from far
    /// off (asked once: the prior is then to be forgotten).
    pub(crate) fn take_refuted(&mut self) -> bool {
        std::mem::take(&mut self.refuted)
    }

    /// Starts the class on `path` rather than inline, when what it is says
    /// so before anything is measured.
    pub(crate) fn start_on(&mut self, path: Path) {
        self.chosen = path;
        if path == Path::Async {
            self.first_skip_left = self.skip;
        }
    }

    /// What the class settled on, if an exploration priced both paths since
    /// this was last asked.
    pub(crate) fn take_learned(&mut self) -> Option<Prior> {
        if !std::mem::take(&mut self.learned) {
            return None;
        }
        let [Some(inline), Some(asynchronous)] = self.cost else {
            return None;
        };
        Some(Prior {
            chosen: self.chosen,
            cost: [inline, asynchronous],
            typical: self.typical,
            explorations: self.explorations,
        })
    }

    /// The path this class takes when it is not exploring.
    #[cfg(test)]
    pub(crate) fn chosen(&self) -> Path {
        self.chosen
    }

    /// How many of the class's next requests may follow its choice without
    /// asking [`route`](Self::route): none while it explores, while a path is
    /// unpriced or while its inline requests are all timed; otherwise as many
    /// as are left before an exploration could be due. The engine sends those
    /// straight along the chosen path (a page-cache hit, or a request to a
    /// fast device, where every instruction shows) and says how many went
    /// with [`went_straight`](Self::went_straight).
    #[inline]
    pub(crate) fn straight_allowance(&self) -> (Path, u32) {
        let left = if self.exploring.is_none() && !self.times_every_request() {
            self.next_check.saturating_sub(self.since_exploration)
        } else {
            0
        };
        (self.chosen, u32::try_from(left).unwrap_or(u32::MAX))
    }

    /// What one inline request of the class costs the caller, by its latest
    /// window (0 before it has one): the price of each of its requests that
    /// went straight inline, untimed, in other classes' asynchronous windows.
    #[inline]
    pub(crate) fn inline_price_ns(&self) -> u32 {
        let typical = self.typical[Path::Inline.index()];
        if typical.is_finite() {
            typical.min(f64::from(u32::MAX)) as u32
        } else {
            0
        }
    }

    /// `n` requests of the class followed its choice without [`route`](Self::route).
    #[inline]
    pub(crate) fn went_straight(&mut self, n: u32) {
        self.since_exploration += u64::from(n);
    }

    /// Both paths have a price.
    pub(super) fn priced(&self) -> bool {
        self.cost[0].is_some() && self.cost[1].is_some()
    }

    /// Every request is to be timed: until the chosen path has a price, and
    /// (at depth 2 or more, where the other path is tried at once) until both
    /// have, so that a class decides within a few dozen requests; and while it
    /// follows an inline choice whose requests take long enough (from a
    /// device) that two clock reads are nothing beside them and a window
    /// should fill soon. At depth 1 a class waits for its first exploration
    /// with one request in [`TIMED_EVERY`](super::super::TIMED_EVERY) timed, as a
    /// settled one: timing all of them cost 15% of page-cache hits.
    #[inline]
    pub(crate) fn times_every_request(&self) -> bool {
        self.cost[self.chosen.index()].is_none()
            || (self.depth > 1 && !self.priced())
            || self.escalated
            || (self.chosen == Path::Inline
                && self.typical[Path::Inline.index()] >= self.slow_inline_ns)
    }

    /// Sets [`next_check`](Self::next_check) after the state it depends on changed.
    pub(super) fn refresh_next_check(&mut self) {
        let length = u64::from(self.epoch_length);
        self.next_check = if self.times_every_request() {
            0
        } else if self.recheck {
            DRIFT_SPACING * length
        } else {
            EXPLORE_SPACING * length
        };
    }

    /// How much cheaper the other path must look to be chosen: [`MARGIN`],
    /// or more when the chosen path's own recent windows differ by more
    /// than that, since a difference smaller than a path's own
    /// window-to-window variation is not evidence (buffered writes racing
    /// writeback, where both paths are close, would flap otherwise).
    pub(super) fn margin(&self) -> f64 {
        let (low, high) = self.range;
        if high <= low {
            return MARGIN;
        }
        ((high - low) / high).clamp(MARGIN, MAX_MARGIN)
    }

    /// What the class's explorations cost since this was last asked (see
    /// [`last_learning_ns`](Self::last_learning_ns)), in nanoseconds.
    pub(crate) fn take_learning_ns(&mut self) -> u64 {
        let ns = self.unreported_learning_ns;
        self.unreported_learning_ns = 0.0;
        ns as u64
    }

    /// An exploration epoch is running: its requests are still going, or it
    /// ends at the class's next request.
    #[inline]
    pub(crate) fn is_exploring(&self) -> bool {
        self.exploring.is_some()
    }

    /// The latest cost of each path in nanoseconds (inline, asynchronous).
    #[cfg(test)]
    pub(crate) fn costs(&self) -> [Option<f64>; 2] {
        self.cost
    }
}
