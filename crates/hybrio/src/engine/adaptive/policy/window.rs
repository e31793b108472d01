//! What one path costs, measured: a window of samples, the engine's tally
//! it is read against, and an exploration epoch's state.

use crate::engine::adaptive::path::Path;

/// An asynchronous window's cost is at least its span over this many, per
/// completion, whatever inline time of other classes it leaves out.
pub(super) const ASYNC_FLOOR_SHARE: u64 = 16;
/// One sample counts for at most this many times the path's typical sample:
/// a thread preempted for 100 us in the middle of a 2 us read says nothing
/// about reads, and would otherwise move a whole window. A real change still
/// shows: two windows of capped samples are a drift, and the cap follows.
pub(super) const OUTLIER: f64 = 4.0;
/// An exploration epoch ends early once this many of its samples price the
/// other path [`EARLY_FIRST_FAR`] times dearer than the chosen one...
pub(super) const EARLY_FIRST_SAMPLES: u32 = 3;
pub(super) const EARLY_FIRST_FAR: f64 = 4.0;
/// ...or once this many of its samples...
pub(super) const EARLY_SAMPLES: u32 = 8;
/// ...price the other path this many times dearer than the chosen one: the
/// rest of the epoch would only add to its cost (a sequential test).
pub(super) const EARLY_FAR: f64 = 2.0;

/// Samples of one path, turning into one cost.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Window {
    pub(super) sum_ns: f64,
    pub(super) samples: u32,
    /// Requests started before this are left out: they waited through
    /// whatever came before the window.
    pub(super) opened_ns: u64,
    /// What the engine had done when the window opened.
    pub(super) opened: Tally,
}

/// What the engine has done so far, across all classes: the clock a window's
/// asynchronous cost is read against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Asynchronous completions reaped.
    pub(crate) reaped: u64,
    /// Time the caller spent in inline requests, by their prices (nanoseconds).
    pub(crate) inline_ns: u64,
}

impl Tally {
    /// `reaped` completions, and no inline time.
    #[cfg(test)]
    pub(crate) fn reaped(reaped: u64) -> Tally {
        Tally {
            reaped,
            inline_ns: 0,
        }
    }
}

impl Window {
    /// A window opening at `now`, with the engine at `tally`.
    pub(super) fn open(now: u64, tally: Tally) -> Window {
        Window {
            opened_ns: now,
            opened: tally,
            ..Window::default()
        }
    }

    /// Adds a sample, at most `OUTLIER` times `typical` (the path's mean
    /// sample in its latest window; infinite before it has one).
    /// Whether it counted (it started after the window opened).
    pub(super) fn add(&mut self, started_ns: u64, ns: u64, typical: f64) -> bool {
        let counts = started_ns >= self.opened_ns;
        if counts {
            self.sum_ns += (ns as f64).min(OUTLIER * typical);
            self.samples += 1;
        }
        counts
    }

    /// The mean sample (for asynchronous, the latency).
    pub(super) fn mean(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sum_ns / f64::from(self.samples))
    }

    /// Time per request up to `now`, with the engine at `tally` by then, in
    /// nanoseconds.
    ///
    /// Asynchronous, the span leaves out the caller's time in inline requests
    /// (of other classes) meanwhile: that time is theirs, priced on their
    /// inline path, and the caller spends it whichever path this class
    /// takes. What is left is what this class adds to the caller's life: a
    /// copy's writes handed to kernel workers while its reads run inline
    /// cost only what the reads do not hide (counted whole, they looked
    /// dearer than inline writes, and the copy ran its writes inline at two
    /// thirds of io_uring's speed).
    pub(super) fn cost(&self, path: Path, now: u64, tally: Tally) -> Option<f64> {
        let mean = self.mean()?;
        match path {
            Path::Inline => Some(mean),
            Path::Async => {
                let completions = tally.reaped.checked_sub(self.opened.reaped)?;
                let span = now.checked_sub(self.opened_ns)?;
                let others = tally.inline_ns.saturating_sub(self.opened.inline_ns);
                // Prices are estimates: what they leave is never less than
                // a sixteenth of the span.
                let own = span.saturating_sub(others).max(span / ASYNC_FLOOR_SHARE);
                (completions > 0).then(|| own as f64 / completions as f64)
            }
        }
    }
}

/// An epoch of requests sent the other way, to price that path.
#[derive(Debug, Clone, Copy)]
pub(super) struct Exploration {
    pub(super) path: Path,
    /// Requests still to send the other way...
    pub(super) to_route: u32,
    /// ...and sent so far.
    pub(super) routed: u32,
    /// Completions still to leave out while the caller's queue fills.
    pub(super) to_skip: u32,
    pub(super) window: Window,
    /// Tells this epoch's requests from earlier ones.
    pub(super) epoch: u32,
    /// When the epoch began.
    pub(super) started_ns: u64,
    /// An inline epoch ended by its own time per request (see
    /// [`ClassPolicy::route`](super::ClassPolicy::route)): its price, if its samples give none.
    pub(super) early_price: Option<f64>,
}

impl Exploration {
    /// The epoch's time so far over the requests it routed (at least one).
    pub(super) fn time_per_routed(&self, now: u64) -> f64 {
        now.saturating_sub(self.started_ns) as f64 / f64::from(self.routed.max(1))
    }
}

/// How many times dearer than the chosen path an epoch's first `n` samples
/// (or requests) must price the other path to end it early (see
/// [`EARLY_SAMPLES`]); never below [`EARLY_FIRST_SAMPLES`].
pub(super) fn early_far(n: u32) -> f64 {
    match n {
        n if n >= EARLY_SAMPLES => EARLY_FAR,
        n if n >= EARLY_FIRST_SAMPLES => EARLY_FIRST_FAR,
        _ => f64::INFINITY,
    }
}
