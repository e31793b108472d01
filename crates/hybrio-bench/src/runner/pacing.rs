//! `rate` and `rate_iops`: when each direction's next I/O may go.

use crate::offsets::Direction;
use crate::options::JobOptions;

/// `rate` / `rate_iops`: when each direction's next I/O may go.
#[derive(Debug)]
pub(super) struct Pacing {
    /// Nanoseconds an I/O of each direction takes up: per I/O, and per byte.
    per_io_ns: [f64; 3],
    per_byte_ns: [f64; 3],
    /// When the next I/O of each direction is due (ns on the job's clock).
    due: [f64; 3],
    /// Poisson arrivals: exponential gaps of the same mean.
    poisson: Option<crate::offsets::Rng>,
}

impl Pacing {
    pub(super) fn new(options: &JobOptions) -> Option<Pacing> {
        let per = |limit: Option<u64>| limit.map_or(0.0, |l| 1e9 / l as f64);
        let per_io_ns = options.rate_iops.map(per);
        let per_byte_ns = options.rate.map(per);
        if per_io_ns.iter().chain(&per_byte_ns).all(|&ns| ns == 0.0) {
            return None;
        }
        Some(Pacing {
            per_io_ns,
            per_byte_ns,
            due: [0.0; 3],
            poisson: options
                .rate_poisson
                .then(|| crate::offsets::Rng::new(options.randseed ^ 0x9055)),
        })
    }

    /// The direction of the next I/O and when it may go, as fio's
    /// `rate_ddir()` decides: `wanted` if it is due; else, in a job that mixes
    /// directions, the other if that one is due (an unlimited direction
    /// always is), or whichever comes due first. As in fio, a job that fell
    /// behind its schedule issues at once until it has caught up.
    pub(super) fn pick(&self, wanted: Direction, now: u64, mixes: bool) -> (Direction, u64) {
        let due = |d: Direction| self.due[d.index()] as u64;
        let other = match wanted {
            Direction::Read => Direction::Write,
            Direction::Write => Direction::Read,
            // A trimming job does not mix.
            Direction::Trim => Direction::Trim,
        };
        if due(wanted) <= now || !mixes {
            (wanted, due(wanted))
        } else if due(other) <= now || due(other) < due(wanted) {
            (other, due(other))
        } else {
            (wanted, due(wanted))
        }
    }

    /// Books an I/O of `len` bytes in `direction`: the next one of that
    /// direction is due one gap later. With both limits the stricter spacing
    /// holds.
    pub(super) fn book(&mut self, direction: Direction, len: u64) {
        let dir = direction.index();
        let mut gap = self.per_io_ns[dir].max(self.per_byte_ns[dir] * len as f64);
        if let Some(rng) = &mut self.poisson {
            gap *= -(1.0 - rng.unit_interval()).ln();
        }
        self.due[dir] += gap;
    }

    /// After the ramp: the schedule starts again.
    pub(super) fn restart(&mut self, now: u64) {
        self.due = [now as f64; 3];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pacing(rate_iops: [Option<u64>; 3]) -> Pacing {
        let options = JobOptions {
            rate_iops,
            ..JobOptions::default()
        };
        Pacing::new(&options).expect("a limit")
    }

    #[test]
    fn pacing_spaces_io_and_turns_to_a_direction_that_is_due() {
        assert!(Pacing::new(&JobOptions::default()).is_none());
        // Reads at 1000 IOPS: one each millisecond.
        let mut p = pacing([Some(1000), None, None]);
        let ms = 1_000_000;
        assert_eq!(p.pick(Direction::Read, 0, false), (Direction::Read, 0));
        p.book(Direction::Read, 4096);
        assert_eq!(p.pick(Direction::Read, 0, false), (Direction::Read, ms));
        // In a mixed job, unlimited writes go while reads wait.
        assert_eq!(p.pick(Direction::Read, 0, true), (Direction::Write, 0));
        // Both limited and both ahead: whichever comes due first.
        let mut p = pacing([Some(1000), Some(500), None]);
        p.book(Direction::Read, 4096);
        p.book(Direction::Write, 4096);
        assert_eq!(p.pick(Direction::Write, 0, true), (Direction::Read, ms));
        // Behind schedule: at once, until caught up.
        assert_eq!(
            p.pick(Direction::Write, 10 * ms, true),
            (Direction::Write, 2 * ms)
        );
    }
}
