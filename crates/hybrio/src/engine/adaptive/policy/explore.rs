//! A class's explorations: where each request goes (its epoch's path while
//! one runs), when the next is due, and what one decides when it ends.

use super::class::{
    CLOCK_CHECK_SPACING, COLD_ASYNC_COMPLETIONS, ClassPolicy, DRIFT_SPACING, EVIDENCE_EPOCHS,
    EXPLORE_INTERVAL_NS, EXPLORE_SPACING, FAR, HANDOFF_NS, INLINE_EPOCH, INLINE_EPOCH_SKIP,
    LEARNING_SPACING, LEARNING_TIME_FACTOR, MARGIN, MAX_CALM, NO_RANGE, Route,
};
use super::window::{EARLY_FIRST_SAMPLES, Exploration, Tally, Window, early_far};
use crate::engine::adaptive::path::Path;

impl ClassPolicy {
    /// Where the next request of the class goes, at `now`; an exploration
    /// due starts only if `may_explore` (no other class of the engine is
    /// exploring), else it waits for the class's next timed request.
    #[inline]
    pub(crate) fn route(&mut self, now: u64, tally: Tally, may_explore: bool) -> Route {
        if self.born_ns.is_none() {
            // The first window opens with the class's first request: an
            // asynchronous price is its span over its completions.
            self.born_ns = Some(now);
            self.window = Window::open(now, tally);
        }
        if let Some(exploration) = &mut self.exploring {
            // An inline epoch under an asynchronous choice at depth records
            // few samples (those beside the class's own asynchronous requests
            // measure the contention, not the path) while it drains the
            // device's queue: its time per request routed so far says sooner
            // whether it is far dearer (each blocks the caller throughout).
            if exploration.path == Path::Inline
                && exploration.to_route > 0
                && exploration.routed >= EARLY_FIRST_SAMPLES
                && let Some(current) = self.cost[Path::Async.index()]
            {
                let per_request = exploration.time_per_routed(now);
                if per_request > early_far(exploration.routed) * current {
                    exploration.to_route = 0;
                    exploration.early_price = Some(per_request);
                }
            }
            if exploration.to_route > 0 {
                exploration.to_route -= 1;
                exploration.routed += 1;
                return Route {
                    path: exploration.path,
                    epoch: exploration.epoch,
                    switched: false,
                };
            }
            // Every request of the epoch has gone; it ends with what it measured.
            let before = self.chosen;
            let path = self.finish_exploration(now, tally);
            return Route {
                path,
                epoch: 0,
                switched: path != before,
            };
        }
        self.since_exploration += 1;
        if may_explore && self.exploration_due(now) {
            self.start_exploration(now, tally);
            return self.route(now, tally, true);
        }
        if self.next_check != 0 && self.since_exploration >= self.next_check {
            self.next_check = self.since_exploration + CLOCK_CHECK_SPACING;
        }
        Route {
            path: self.chosen,
            epoch: 0,
            switched: false,
        }
    }

    #[inline]
    pub(super) fn exploration_due(&self, now: u64) -> bool {
        let length = u64::from(self.epoch_length);
        let lived = now.saturating_sub(self.born_ns.unwrap_or(now));
        if self.cost[self.chosen.other().index()].is_none() {
            // Price the other path as soon as this one has a first figure...
            let Some(chosen) = self.cost[self.chosen.index()] else {
                return false;
            };
            if self.depth > 1 && self.chosen == Path::Inline {
                // ...once a full window, not the first eight requests alone,
                // says what inline costs (see `rough`).
                return !self.rough;
            }
            // ...except at depth 1, where the other path overlaps nothing of
            // the caller's (it wins little if at all) and an epoch of it can
            // cost many times its requests (an 8 KiB buffered write through
            // io_uring's kernel worker: 15-90 us against 2.5 inline), and
            // for a look at inline from an asynchronous start at depth (each
            // inline request holds the caller for a device's service time,
            // while the queue drains): there the first waits until the class
            // can afford its least cost, its first samples at a handoff's
            // price each (inline: at the asynchronous path's latency, the
            // most one can take), within the learning share of its time
            // (6 ms at depth 1; 28 ms for O_DIRECT reads at depth 16 of 140
            // us, which a 500-read job, 5 ms, never pays: it paid 3-5%).
            let (skip, each) = match self.chosen {
                Path::Inline => (self.skip, chosen.max(HANDOFF_NS)),
                Path::Async => {
                    let latency = self.typical[Path::Async.index()];
                    let each = if latency.is_finite() { latency } else { chosen };
                    (INLINE_EPOCH_SKIP, each)
                }
            };
            let least = f64::from(skip + EARLY_FIRST_SAMPLES) * each;
            return lived as f64 >= least * LEARNING_TIME_FACTOR;
        }
        // An exploration waits while the class's explorations so far, and
        // one more like the last, would cost more than their share of its
        // time from its first request, unless it is expected to cost little
        // (see `recheck_free`): a cold epoch at depth 1 (8 KiB buffered
        // writes handed to a kernel worker being made, 80 us each against
        // 3.5 inline) was looked at again at once, and 2,000 such writes
        // paid 9% of their time for the two.
        let affordable =
            (self.learning_spent_ns + self.last_spent_ns) * LEARNING_TIME_FACTOR <= lived as f64;
        if self.recheck
            && self.since_exploration >= DRIFT_SPACING * length
            && (affordable || self.recheck_free)
        {
            return true;
        }
        if !affordable {
            return false;
        }
        let learning_spacing = LEARNING_SPACING << self.explorations.saturating_sub(1).min(16);
        if learning_spacing < EXPLORE_SPACING
            && self.since_exploration >= learning_spacing * length
            && now.saturating_sub(self.last_exploration_ns) as f64
                >= self.last_learning_ns * LEARNING_TIME_FACTOR
        {
            return true;
        }
        self.since_exploration >= EXPLORE_SPACING * length
            && now.saturating_sub(self.last_exploration_ns) >= EXPLORE_INTERVAL_NS << self.calm
    }

    pub(super) fn start_exploration(&mut self, now: u64, tally: Tally) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
        let path = self.chosen.other();
        // An inline epoch has no queue to fill: each request is priced as it
        // returns, and a short one keeps a deep device queue from draining.
        let (to_route, to_skip) = match path {
            Path::Inline => (INLINE_EPOCH, INLINE_EPOCH_SKIP),
            Path::Async => (self.epoch_length, self.skip),
        };
        self.exploring = Some(Exploration {
            path,
            to_route,
            routed: 0,
            to_skip,
            window: Window::open(now, tally),
            epoch: self.epoch,
            started_ns: now,
            early_price: None,
        });
        self.last_exploration_ns = now;
        self.recheck = false;
    }

    /// Ends the exploration: prices the other path and keeps the cheaper.
    /// Returns the path now chosen.
    pub(super) fn finish_exploration(&mut self, now: u64, tally: Tally) -> Path {
        let chosen = self.finish_epoch(now, tally);
        self.refresh_next_check();
        chosen
    }

    pub(super) fn finish_epoch(&mut self, now: u64, tally: Tally) -> Path {
        let Some(exploration) = self.exploring.take() else {
            return self.chosen;
        };
        self.since_exploration = 0;
        // An inline epoch beside the class's own asynchronous requests may
        // have recorded no sample (see `route`): its time per request routed
        // prices it then, or it would be explored again and again.
        let per_routed = (exploration.path == Path::Inline && exploration.routed > 0)
            .then(|| exploration.time_per_routed(now));
        let explored = exploration.window.cost(exploration.path, now, tally);
        let Some(explored) = explored.or(exploration.early_price).or(per_routed) else {
            return self.chosen;
        };
        if let Some(mean) = exploration.window.mean() {
            self.typical[exploration.path.index()] = mean;
        }
        self.cost[exploration.path.index()] = Some(explored);
        let current = self.cost[self.chosen.index()].unwrap_or(f64::INFINITY);
        self.explorations = self.explorations.saturating_add(1);
        let learning_ns = if current.is_finite() {
            f64::from(exploration.routed) * (explored - current).max(0.0)
        } else {
            0.0
        };
        self.unreported_learning_ns += learning_ns;
        self.learning_spent_ns += learning_ns;
        self.last_spent_ns = learning_ns;
        let cold = exploration.path == Path::Async
            && exploration.window.opened.reaped < COLD_ASYNC_COMPLETIONS;
        // A cold epoch's cost says nothing of the next one's, nor is its
        // price one for other classes to start from.
        self.last_learning_ns = if cold { 0.0 } else { learning_ns };
        self.learned = !cold && current.is_finite();
        // A path far dearer than the chosen one is looked at less often (up
        // to 2^MAX_CALM times the interval): an inline epoch on a deep
        // device queue drains it, and costs more the more often it runs. A
        // drift still brings the next exploration soon.
        self.calm = if explored > current * FAR {
            (self.calm + 1).min(MAX_CALM)
        } else {
            self.settled = NO_RANGE;
            0
        };
        // A cold epoch that found its path dearer says nothing (it looked
        // dearer than it is): it is no comparison, the next is still the
        // first, and no evidence. One that found it cheaper is, all the more.
        let cold_and_dearer = cold && explored >= current;
        let first = !self.compared;
        self.compared |= !cold_and_dearer;
        // One epoch is a few dozen requests: a switch needs two or more to
        // agree (see `weigh`), or noise (a preemption, a writeback stall)
        // would flip the class back and forth, paying the worse path each time. The very
        // first comparison decides on one when the other path is far cheaper
        // (a device at depth 4): the path the class started on was no choice
        // at all, and a wrong first pick is looked back at. A close first
        // call waits for a second epoch like any other (eight threads on two
        // CPUs flipped classes back and forth on one).
        let margin = self.margin().max(self.left_margin);
        let (low, high) = self.range;
        // (No range yet, as in a class started from a prior: none to halve;
        // halving infinity made the margin NaN, and no switch ever passed it.)
        if current.is_finite() && low <= high {
            self.range = (low + (current - low) / 2.0, high - (high - current) / 2.0);
        }
        let (leaning, convinced) = if cold_and_dearer {
            (false, false)
        } else {
            self.weigh(explored / current, margin)
        };
        if convinced || (first && explored * FAR < current) {
            self.chosen = exploration.path;
            self.left_margin = margin;
            self.range = NO_RANGE;
            self.settled = NO_RANGE;
            // The epoch's price stands until the path's first window, every
            // request of it timed, replaces it: at one request in 64 that
            // window took 2,048 requests, and the look-back compared the
            // path left against the price of an epoch long past (a copy's
            // first, beside writes still inline, three times too dear).
            self.recent_len = 0;
            self.cost[self.chosen.index()] = Some(explored);
            self.escalated = true;
            self.evidence = (0.0, 0);
            // Two epochs can still be unlucky: look back soon, and come
            // back (on two epochs again) if the old path was better after all.
            self.recheck = true;
            self.recheck_free = true;
        } else if leaning {
            // The evidence is not in yet: the next epoch comes soon.
            self.recheck = true;
            self.recheck_free = true;
        } else {
            // A cold epoch that came out close is looked at again soon (a
            // copy's writes, on a kernel worker still starting, came out 1.2
            // times dearer than inline, and 2.5 times cheaper once it ran);
            // a far dearer one once the class can afford it.
            self.recheck_free = cold && explored <= current * FAR;
            if cold && !self.cold_rechecked {
                self.cold_rechecked = true;
                self.recheck = true;
                self.calm = 0;
            }
        }
        self.drift = (0, 0.0);
        // The chosen path's window starts afresh: the epoch changed what was
        // in flight while it ran, and would read as a drift.
        self.window = Window::open(now, tally);
        self.chosen
    }

    /// Adds an exploration's price of the other path over the chosen path's
    /// to the [evidence](Self::evidence). Whether the epochs so far lean
    /// towards the other path (it or this one found it cheaper by more than
    /// [`MARGIN`]) so that the next should come soon, and whether they prove
    /// it: at least two, their mean cheaper by `margin` over the fourth root
    /// of half their number (two epochs by the whole margin, eight by 0.7 of
    /// it: a path cheaper by less than the chosen one varies needs many
    /// epochs to agree, and one that is cheaper only in some phases of the
    /// other's never gets them).
    pub(super) fn weigh(&mut self, ratio: f64, margin: f64) -> (bool, bool) {
        if !ratio.is_finite() || ratio <= 0.0 {
            self.evidence = (0.0, 0);
            return (false, false);
        }
        let (mut sum, mut epochs) = self.evidence;
        if epochs >= EVIDENCE_EPOCHS {
            sum /= 2.0;
            epochs /= 2;
        }
        sum += ratio.ln();
        epochs += 1;
        self.evidence = (sum, epochs);
        let mean = (sum / f64::from(epochs)).exp();
        // Hurried along only until the evidence fills: a path a little
        // cheaper than the margin can prove is then looked at on the
        // regular schedule (each look halves the evidence, and brings three
        // more soon).
        let leaning = (ratio < 1.0 - MARGIN || mean < 1.0 - MARGIN) && epochs < EVIDENCE_EPOCHS;
        let needed = margin * (2.0 / f64::from(epochs)).sqrt().sqrt();
        (leaning, epochs >= 2 && mean < 1.0 - needed)
    }
}
