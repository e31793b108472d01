//! What changes a job's course while it runs: strided zones
//! (`zonemode=strided`), the search for a depth (`latency_target`), and
//! steady state (`ss`), which may end it.

use super::latency_target;
use super::state::{IoLoop, STEADY_SAMPLE_NS};

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

    /// Takes the steady-state window's sample of the second just past.
    #[cold]
    pub(super) fn sample_steady_state(&mut self) {
        self.next_steady_sample = self.now + STEADY_SAMPLE_NS;
        if let Some(steady) = &mut self.steady {
            let (ios, bytes) =
                crate::stats::DataDir::ALL
                    .iter()
                    .fold((0, 0), |(ios, bytes), &dir| {
                        let d = self.stats.dir(dir);
                        (ios + d.total_ios(), bytes + d.io_bytes())
                    });
            steady.sample(self.now, ios, bytes);
        }
    }
}
