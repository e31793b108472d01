//! What changes a job's course while it runs: strided zones
//! (`zonemode=strided`), the search for a depth (`latency_target`), the
//! end of a ramp counted in bytes (`ramp_size`), and steady state (`ss`),
//! which may end it.

use super::latency_target;
use super::state::IoLoop;

impl IoLoop<'_> {
    /// `zonemode=strided`, as fio's `setup_strided_zone_mode`: after
    /// `zonesize` bytes the next zone, `zonerange + zoneskip` further on
    /// (from the start again past the end); the plan starts afresh in each
    /// zone, and again each time a zone's range has been walked.
    #[inline]
    pub(super) fn enter_zone(&mut self) {
        let Some((zones, span)) = &self.job.zones else {
            return;
        };
        let (zones, span) = (*zones, *span);
        if self.zone_bytes >= zones.size {
            self.zone_bytes = 0;
            self.zone_base += zones.range + zones.skip;
            if self.zone_base >= span {
                self.zone_base = 0;
            }
            self.job.plan.reset_zone();
        } else if self.zone_bytes > 0 && self.zone_bytes.is_multiple_of(zones.range) {
            self.job.plan.reset_zone();
        }
    }

    /// `latency_target`: at the end of each window, the depth goes up or
    /// down; a lower depth lets what is in flight complete first, and a
    /// settled one runs a last window with its figures started afresh.
    pub(super) fn check_latency_target(&mut self) {
        use latency_target::Verdict;
        let completed = self.completed;
        let Some(target) = self.latency_target.as_mut() else {
            return;
        };
        let verdict = target
            .check(self.now, completed)
            .unwrap_or(Verdict::Continue);
        if std::mem::take(&mut self.latency_quiesce) || verdict == Verdict::Quiesce {
            self.drain();
        }
        match verdict {
            Verdict::FinalWindow => {
                self.drain();
                self.now = self.clock.now();
                self.stats.reset(self.now);
                self.measured_from = self.now;
            }
            Verdict::Done => self.latency_done = true,
            Verdict::Continue | Verdict::Quiesce => {}
        }
    }

    /// Takes the steady-state window's sample of the interval just past:
    /// the job's totals, its completion latencies' too (fio sums each
    /// direction's mean times its count).
    #[cold]
    pub(super) fn sample_steady_state(&mut self) {
        let Some(steady) = &mut self.steady else {
            self.next_steady_sample = u64::MAX;
            return;
        };
        self.next_steady_sample = self.now + steady.settings.interval_ns();
        let mut at = crate::stats::Totals {
            now_ns: self.now,
            ..Default::default()
        };
        for &dir in crate::stats::DataDir::ALL.iter() {
            let d = self.stats.dir(dir);
            let clat = d.clat();
            at.ios += d.total_ios();
            at.bytes += d.io_bytes();
            at.lat_sum += clat.mean() * clat.count() as f64;
            at.lat_samples += clat.count();
        }
        steady.sample(at);
    }
}

/// How often fio 3.42 looks whether a `ramp_size` ramp is over (its
/// helper thread's `RAMP_PERIOD_CHECK_MSEC`).
const RAMP_CHECK_NS: u64 = 1_000_000_000;

/// fio 3.42's `ramp_size`: the ramp is over at the first of its checks,
/// once a second, that finds at least that many bytes done, so that the
/// statistics start where fio's start, not at the byte.
#[derive(Debug)]
pub(super) struct RampBySize {
    bytes: u64,
    next_check: u64,
}

impl RampBySize {
    pub(super) fn new(bytes: u64) -> RampBySize {
        RampBySize {
            bytes,
            next_check: RAMP_CHECK_NS,
        }
    }

    /// Whether the ramp is over at `now` (the job's clock, ns); `done`
    /// gives the bytes completed, asked only when a check is due.
    pub(super) fn over(&mut self, now: u64, done: impl FnOnce() -> u64) -> bool {
        if now < self.next_check {
            return false;
        }
        while self.next_check <= now {
            self.next_check += RAMP_CHECK_NS;
        }
        done() >= self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_by_size_ends_at_the_first_check_past_its_bytes() {
        let mut ramp = RampBySize::new(1 << 20);
        // Done long before the first check: still ramping until it.
        assert!(!ramp.over(999_999_999, || 4 << 20));
        assert!(!ramp.over(1_000_000_000, || (1 << 20) - 1));
        // Not checked again within the second, whatever is done.
        assert!(!ramp.over(1_500_000_000, || 4 << 20));
        assert!(ramp.over(2_000_000_001, || 1 << 20));
    }
}
