//! fio's `latency_target`: find the deepest queue whose I/Os still complete
//! within a latency. The job starts at depth 1; after each `latency_window`
//! it doubles the depth while `latency_percentile` of the window's I/Os met
//! the target, then bisects between the last depth that met it and the first
//! that did not; an I/O over the target at 100% halves the depth at once.
//! Once the depth stops moving, the statistics start afresh for one last
//! window at that depth, and the job ends (unless `latency_run`, which keeps
//! adjusting for the whole run). fio's arithmetic (io_u.c), step by step.

/// What the I/O loop does after a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Go on at the (possibly new) depth.
    Continue,
    /// The depth went down: let what is in flight complete first.
    Quiesce,
    /// The depth settled: complete what is in flight, start the figures
    /// afresh, and run one last window.
    FinalWindow,
    /// The last window is over: the job is done.
    Done,
}

/// The search, as fio's `td->latency_*`.
#[derive(Debug, Clone)]
pub(crate) struct LatencyTarget {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    keep_running: bool,
    max_depth: usize,
    /// The depth now, and the bounds of the search.
    pub(super) depth: usize,
    high: usize,
    low: usize,
    stable: u32,
    final_window: bool,
    /// The window: when it began, I/Os completed before it, and those
    /// over the target in it.
    since_ns: u64,
    ios_before: u64,
    failed: u64,
}

impl LatencyTarget {
    /// The search for a job of `max_depth`, its clock at `now_ns`.
    pub(super) fn new(
        target_ns: u64,
        window_ns: u64,
        percentile: f64,
        keep_running: bool,
        max_depth: usize,
        now_ns: u64,
    ) -> LatencyTarget {
        LatencyTarget {
            target_ns,
            window_ns,
            percentile,
            keep_running,
            max_depth: max_depth.max(1),
            depth: 1,
            high: max_depth.max(1),
            low: 1,
            stable: 0,
            final_window: false,
            since_ns: now_ns,
            ios_before: 0,
            failed: 0,
        }
    }

    /// The target, in ns.
    pub(super) fn target_ns(&self) -> u64 {
        self.target_ns
    }

    /// An I/O completed in `latency_ns` (total latency); `ios` completed
    /// so far. `Err` when it is over the target at depth 1 with a 100%
    /// percentile: nothing can meet the target, and the job fails.
    pub(super) fn completed(
        &mut self,
        latency_ns: u64,
        now_ns: u64,
        ios: u64,
    ) -> Result<Verdict, ()> {
        if latency_ns <= self.target_ns {
            return Ok(Verdict::Continue);
        }
        if self.percentile < 100.0 {
            self.failed += 1;
            return Ok(Verdict::Continue);
        }
        self.ramp_down(now_ns, ios)
    }

    fn ramp_down(&mut self, now_ns: u64, ios: u64) -> Result<Verdict, ()> {
        if self.depth == 1 {
            return Err(());
        }
        self.high = self.depth;
        if self.depth == self.low {
            self.low -= 1;
        }
        self.depth = (self.depth + self.low) / 2;
        self.stable = 0;
        self.new_window(now_ns, ios);
        Ok(Verdict::Quiesce)
    }

    fn new_window(&mut self, now_ns: u64, ios: u64) {
        self.since_ns = now_ns;
        self.ios_before = ios;
        self.failed = 0;
    }

    /// fio's `lat_target_check`, with `ios` completed so far: once a window
    /// is over, up or down.
    pub(super) fn check(&mut self, now_ns: u64, ios: u64) -> Result<Verdict, ()> {
        if now_ns.saturating_sub(self.since_ns) < self.window_ns {
            return Ok(Verdict::Continue);
        }
        let done = ios.saturating_sub(self.ios_before);
        if done == 0 {
            return Ok(Verdict::Continue);
        }
        let met = 100.0 * (done.saturating_sub(self.failed)) as f64 / done as f64;
        if met >= self.percentile {
            Ok(self.ramp_up(now_ns, ios))
        } else if self.depth == 1 {
            // As fio: nothing lower to go to; the window goes on.
            Ok(Verdict::Continue)
        } else {
            self.ramp_down(now_ns, ios)
        }
    }

    fn ramp_up(&mut self, now_ns: u64, ios: u64) -> Verdict {
        let before = self.depth;
        self.low = self.depth;
        if self.depth + 1 == self.high {
            // Stuck one below the bound: after three such windows, the
            // bound moves up by one (fio's heuristic).
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.depth = if self.high != self.max_depth {
            (self.depth + self.high) / 2
        } else {
            self.depth * 2
        }
        .min(self.max_depth);
        let mut verdict = Verdict::Continue;
        if !self.keep_running && self.depth == before {
            if self.final_window {
                verdict = Verdict::Done;
            } else {
                self.final_window = true;
                verdict = Verdict::FinalWindow;
            }
        }
        self.new_window(now_ns, ios);
        verdict
    }

    /// What the report says: the depth reached, the target, the window
    /// (us) and the percentile.
    pub(crate) fn report(&self) -> crate::stats::LatencyTargetReport {
        crate::stats::LatencyTargetReport {
            depth: self.depth as u32,
            target_ns: self.target_ns,
            window_us: self.window_ns / 1000,
            percentile: self.percentile,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_depth_doubles_while_the_target_is_met_and_settles() {
        let mut t = LatencyTarget::new(MS, 10 * MS, 100.0, false, 16, 0);
        let mut ios = 0;
        let mut depths = vec![t.depth];
        for window in 1..=8u64 {
            ios += 100;
            let verdict = t.check(window * 10 * MS, ios).unwrap();
            depths.push(t.depth);
            if verdict == Verdict::Done {
                break;
            }
        }
        // 1, 2, 4, 8, 16, then at the maximum: a last window, then done.
        assert_eq!(depths, vec![1, 2, 4, 8, 16, 16, 16]);
    }

    #[test]
    fn an_io_over_the_target_bisects_down_and_fails_at_depth_one() {
        let mut t = LatencyTarget::new(MS, 10 * MS, 100.0, false, 16, 0);
        for window in 1..=3u64 {
            t.check(window * 10 * MS, window * 100).unwrap();
        }
        assert_eq!(t.depth, 8);
        assert_eq!(t.completed(2 * MS, 31 * MS, 310), Ok(Verdict::Quiesce));
        // Between the last depth that met it (4) and 8.
        assert_eq!(t.depth, 6);
        let mut t = LatencyTarget::new(MS, 10 * MS, 100.0, false, 16, 0);
        assert_eq!(t.completed(2 * MS, 1, 1), Err(()));
        // Below 100%: counted against the window, no failure at once.
        let mut t = LatencyTarget::new(MS, 10 * MS, 99.0, false, 16, 0);
        assert_eq!(t.completed(2 * MS, 1, 1), Ok(Verdict::Continue));
        // 1 slow of 50: 98% < 99%, the window fails; at depth 1 it stays.
        assert_eq!(t.check(10 * MS, 50), Ok(Verdict::Continue));
        assert_eq!(t.depth, 1);
    }
}
