//! fio's `ratemin` and `rate_iops_min`: a job that cannot keep at least
//! this rate, measured over each `rate_cycle`, ends with an error (EIO),
//! after a two-second settle, as fio's `check_min_rate`.

use crate::options::JobOptions;
use crate::stats::{DataDir, JobStats};

/// fio lets a job settle this long before holding it to its minimum.
const SETTLE_NS: u64 = 2_000_000_000;

/// One direction's last measurement: when, bytes and I/Os then.
type Mark = Option<(u64, u64, u64)>;

#[derive(Debug)]
pub(super) struct MinRate {
    name: String,
    bytes: [Option<u64>; 2],
    iops: [Option<u64>; 2],
    cycle_ns: u64,
    since: u64,
    marks: [Mark; 2],
}

impl MinRate {
    /// `None` when the job sets no minimum.
    pub(super) fn new(options: &JobOptions) -> Option<MinRate> {
        let bytes = [options.ratemin[0], options.ratemin[1]];
        let iops = [options.rate_iops_min[0], options.rate_iops_min[1]];
        (bytes.iter().chain(&iops).any(Option::is_some)).then(|| MinRate {
            name: options.name.clone(),
            bytes,
            iops,
            cycle_ns: options.rate_cycle_ms.max(1) * 1_000_000,
            since: 0,
            marks: [None; 2],
        })
    }

    /// Measures from `now` afresh (the ramp ended, the figures restarted).
    pub(super) fn restart(&mut self, now: u64) {
        self.since = now;
        self.marks = [None; 2];
    }

    /// fio's words for a rate not kept, if one was not.
    pub(super) fn check(&mut self, now: u64, stats: &JobStats) -> Option<String> {
        if now.saturating_sub(self.since) < SETTLE_NS {
            return None;
        }
        for (i, dir) in [DataDir::Read, DataDir::Write].into_iter().enumerate() {
            let (bytes, ios) = (stats.dir(dir).io_bytes(), stats.dir(dir).total_ios());
            if bytes == 0 || (self.bytes[i].is_none() && self.iops[i].is_none()) {
                continue;
            }
            if let Some((at, bytes_then, ios_then)) = self.marks[i] {
                let spent_ms = now.saturating_sub(at) / 1_000_000;
                if now.saturating_sub(at) < self.cycle_ns || spent_ms == 0 {
                    continue;
                }
                if let Some(min) = self.bytes[i] {
                    let rate = (bytes - bytes_then) * 1000 / spent_ms;
                    if rate < min {
                        return Some(format!(
                            "{}: rate_min={min}B/s not met, got {rate}B/s",
                            self.name
                        ));
                    }
                } else if let Some(min) = self.iops[i] {
                    let rate = (ios - ios_then) * 1000 / spent_ms;
                    if rate < min {
                        return Some(format!(
                            "{}: rate_iops_min={min} not met, got {rate} IOPS",
                            self.name
                        ));
                    }
                }
            }
            self.marks[i] = Some((now, bytes, ios));
        }
        None
    }
}
