//! A class's measurements coming in: each timed request's cost, the
//! chosen path's windows closing into its price, and drifts.

use super::class::{ClassPolicy, DRIFT, FAR, FIRST_WINDOW, LEVEL_SLACK, MARGIN, WINDOW, WINDOW_NS};
use super::window::{OUTLIER, Tally, Window, early_far};
use crate::engine::adaptive::path::Path;

impl ClassPolicy {
    /// Records what one request of the class cost on `path`: for inline, its
    /// time in the call plus the caller's own time after it, until it called
    /// the engine again; for asynchronous, its latency from queue to reap.
    /// `epoch` is what [`route`](Self::route) said for it, `started_ns` when
    /// it was queued, `now` the time, with the engine at `tally` (of every
    /// class).
    pub(crate) fn record(
        &mut self,
        path: Path,
        epoch: u32,
        started_ns: u64,
        ns: u64,
        now: u64,
        tally: Tally,
    ) {
        if let Some(exploration) = &mut self.exploring
            && exploration.epoch == epoch
            && exploration.path == path
        {
            if exploration.to_skip > 0 {
                exploration.to_skip -= 1;
                if exploration.to_skip == 0 {
                    exploration.window = Window::open(now, tally);
                }
            } else {
                exploration
                    .window
                    .add(started_ns, ns, self.typical[path.index()]);
                let current = self.cost[self.chosen.index()];
                let far = early_far(exploration.window.samples);
                if let (Some(cost), Some(current)) =
                    (exploration.window.cost(path, now, tally), current)
                    && cost > far * current
                {
                    // Far dearer already: the epoch ends at the class's next
                    // request.
                    exploration.to_route = 0;
                }
            }
            return;
        }
        if epoch != 0 || path != self.chosen {
            // A straggler from an epoch that has ended, or from before a switch.
            return;
        }
        if self.first_skip_left > 0 {
            self.first_skip_left -= 1;
            if self.first_skip_left == 0 {
                self.window = Window::open(now, tally);
            }
            return;
        }
        let typical = self.typical[path.index()];
        if self.window.add(started_ns, ns, typical) && typical.is_infinite() {
            self.scale_first_window(path, ns);
        }
        let sample = ns as f64;
        let odd = sample > OUTLIER * typical || sample * OUTLIER < typical;
        if !self.escalated && (odd || (path == Path::Inline && sample >= self.slow_inline_ns)) {
            self.escalated = true;
            self.next_check = 0;
        }
        // A first window closes on its count alone: its median caps its
        // samples already, and 200 us of page-cache hits, every one timed,
        // were a tenth of a 1,000-read job.
        let (samples, span_ns) = if self.cost[path.index()].is_some() {
            (WINDOW, WINDOW_NS)
        } else {
            (FIRST_WINDOW, 0)
        };
        if self.window.samples < samples || now.saturating_sub(self.window.opened_ns) < span_ns {
            return;
        }
        self.close_window(path, now, tally);
        self.refresh_next_check();
    }

    /// Ends a full window of the chosen path: its cost, a drift, the range.
    fn close_window(&mut self, path: Path, now: u64, tally: Tally) {
        self.escalated = false;
        let Some(cost) = self.window.cost(path, now, tally) else {
            self.window = Window::open(now, tally);
            return;
        };
        self.typical[path.index()] = self.window.mean().unwrap_or(f64::INFINITY);
        self.window = Window::open(now, tally);
        let slot = &mut self.cost[path.index()];
        let Some(previous) = *slot else {
            *slot = Some(cost);
            self.remember(cost, true);
            self.rough = true;
            self.escalated = true;
            return;
        };
        if std::mem::take(&mut self.rough) {
            // The first window priced the class's cold start: replaced
            // whole, not a drift from it.
            self.remember(cost, true);
            return;
        }
        let ratio = cost / previous.max(1.0);
        let direction = if ratio > DRIFT {
            1
        } else if ratio < 1.0 / DRIFT {
            -1
        } else {
            0
        };
        if std::mem::take(&mut self.from_prior) && direction != 0 {
            // The prior no longer fits: dropped, the class goes on as a new
            // one whose first window just closed (with a stale price kept
            // until a second window confirmed the drift, an exploration
            // meanwhile compared the other path against it).
            self.refuted = true;
            let other = path.other().index();
            self.cost[other] = None;
            self.typical[other] = f64::INFINITY;
            self.compared = false;
            self.explorations = 0;
            self.evidence = (0.0, 0);
            self.left_margin = MARGIN;
            self.remember(cost, true);
            self.refresh_next_check();
            return;
        }
        if direction != 0 && direction == self.drift.0 {
            // The world changed: follow it now, and look at the other path soon.
            let earlier = self.drift.1;
            self.remember(earlier, true);
            self.remember(cost, false);
            self.range = (earlier.min(cost), earlier.max(cost));
            self.evidence = (0.0, 0);
            self.left_margin = MARGIN;
            if !self.is_settled_level(earlier) || !self.is_settled_level(cost) {
                self.recheck = true;
                self.recheck_free = false;
                self.calm = 0;
            }
            self.drift = (0, 0.0);
        } else {
            if direction == 0
                && self.cost[path.other().index()].is_some_and(|other| cost * FAR < other)
            {
                self.settled = (self.settled.0.min(cost), self.settled.1.max(cost));
            }
            self.remember(cost, false);
            self.range = (self.range.0.min(cost), self.range.1.max(cost));
            self.drift = (direction, cost);
            // A first drifting window is confirmed or refuted by the next:
            // every request of it timed, so that it comes in a few dozen
            // requests rather than 32 one-in-64 samples (2,048 requests).
            self.escalated = direction != 0;
        }
    }

    /// Takes a sample of the path's first window, while the path has no
    /// scale for outliers yet: the median of the first [`FIRST_WINDOW`] sets
    /// it, and caps those samples in the window as it caps every later one
    /// (a preemption among a class's first eight page-cache hits would make
    /// its first price ten times too high).
    fn scale_first_window(&mut self, path: Path, ns: u64) {
        let len = self.first_samples.1;
        if len >= self.first_samples.0.len() {
            return;
        }
        self.first_samples.0[len] = ns;
        self.first_samples.1 = len + 1;
        if len + 1 < self.first_samples.0.len() {
            return;
        }
        let mut sorted = self.first_samples.0;
        sorted.sort_unstable();
        let median = sorted[sorted.len() / 2] as f64;
        self.typical[path.index()] = median;
        let capped: f64 = sorted
            .iter()
            .map(|&s| (s as f64).min(OUTLIER * median))
            .sum();
        self.window.sum_ns = capped;
    }

    /// Whether `cost` is one of the chosen path's [settled](Self::settled) levels.
    fn is_settled_level(&self, cost: f64) -> bool {
        let (low, high) = self.settled;
        cost >= low / LEVEL_SLACK && cost <= high * LEVEL_SLACK
    }

    /// Adds a window cost of the chosen path (after forgetting the others,
    /// with `afresh`) and sets the path's cost to the median of the latest three.
    fn remember(&mut self, cost: f64, afresh: bool) {
        if afresh {
            self.recent_len = 0;
        }
        if self.recent_len == self.recent.len() {
            self.recent.rotate_left(1);
            self.recent_len -= 1;
        }
        self.recent[self.recent_len] = cost;
        self.recent_len += 1;
        let mut sorted = self.recent;
        let held = &mut sorted[..self.recent_len];
        held.sort_by(f64::total_cmp);
        let median = match held.len() {
            2 => (held[0] + held[1]) / 2.0,
            n => held[n / 2],
        };
        self.cost[self.chosen.index()] = Some(median);
    }
}
