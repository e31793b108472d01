//! A cheap monotonic clock for timing every request.
//!
//! Timing each I/O takes two or three clock reads; through the vDSO
//! `clock_gettime` costs about 35 ns on a KVM guest, enough to be the largest
//! part of a benchmark's own cost per I/O. Where the kernel itself trusts the
//! CPU's time-stamp counter (its clocksource is `tsc`, which it only keeps
//! when the counter is invariant and synchronised across CPUs), this clock
//! reads the counter directly (about 14 ns) and scales it with a factor
//! calibrated once per process against `CLOCK_MONOTONIC`, as fio does with
//! its default `clocksource=cpu`. Anywhere else it is `Instant`.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::sys::tsc;

/// How long calibration watches both clocks: the relative error is about
/// 2 x 35 ns over this, under 4 parts per million.
const CALIBRATION: Duration = Duration::from_millis(20);

/// Nanoseconds per counter tick, as a 32.32 fixed-point factor, or `None`
/// when the counter is not to be trusted here.
fn tsc_scale() -> Option<u64> {
    static SCALE: OnceLock<Option<u64>> = OnceLock::new();
    *SCALE.get_or_init(|| {
        let source = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .ok()?;
        if source.trim() != "tsc" {
            return None;
        }
        let (start, start_ticks) = paired_reading()?;
        std::thread::sleep(CALIBRATION);
        let (end, end_ticks) = paired_reading()?;
        let ticks = end_ticks.checked_sub(start_ticks).filter(|t| *t > 0)?;
        let nanos = end.duration_since(start).as_nanos();
        u64::try_from((nanos << 32) / u128::from(ticks)).ok()
    })
}

/// A counter reading and the `Instant` it was taken at. A thread preempted
/// between reading one clock and the other would pair them milliseconds
/// apart (on a busy machine, a 20 ms calibration then came out percents
/// off): the counter is read between two `Instant`s, and of a few tries the
/// one whose two `Instant`s are closest is kept, the counter taken as read
/// half way.
fn paired_reading() -> Option<(Instant, u64)> {
    let mut best: Option<(Duration, Instant, u64)> = None;
    for _ in 0..16 {
        let before = Instant::now();
        let ticks = tsc::read()?;
        let after = Instant::now();
        let width = after.duration_since(before);
        if best.is_none_or(|(narrowest, _, _)| width < narrowest) {
            best = Some((width, before + width / 2, ticks));
        }
    }
    best.map(|(_, at, ticks)| (at, ticks))
}

/// A monotonic clock counting nanoseconds from its creation.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch: Instant,
    source: Source,
}

#[derive(Debug, Clone, Copy)]
enum Source {
    Tsc { epoch_ticks: u64, scale: u64 },
    Monotonic,
}

impl Clock {
    /// A clock starting now. The first clock of a process calibrates the
    /// counter (20 ms); later ones reuse it.
    pub fn new() -> Clock {
        let source = match (tsc_scale(), tsc::read()) {
            (Some(scale), Some(epoch_ticks)) => Source::Tsc { epoch_ticks, scale },
            _ => Source::Monotonic,
        };
        Clock {
            epoch: Instant::now(),
            source,
        }
    }

    /// A clock that always uses `CLOCK_MONOTONIC` (through `Instant`).
    pub fn monotonic() -> Clock {
        Clock {
            epoch: Instant::now(),
            source: Source::Monotonic,
        }
    }

    /// Nanoseconds since the clock was made.
    #[inline]
    pub fn now(&self) -> u64 {
        match self.source {
            Source::Tsc { epoch_ticks, scale } => {
                let ticks = tsc::read().unwrap_or(epoch_ticks).wrapping_sub(epoch_ticks);
                ((u128::from(ticks) * u128::from(scale)) >> 32) as u64
            }
            Source::Monotonic => self.epoch.elapsed().as_nanos() as u64,
        }
    }

    /// What one [`now`](Self::now) costs here, in nanoseconds: the least
    /// over a few runs of 256 reads in a row. Measured once per process and
    /// kind of clock.
    pub fn read_cost_ns(&self) -> f64 {
        static TSC: OnceLock<f64> = OnceLock::new();
        static MONOTONIC: OnceLock<f64> = OnceLock::new();
        let cost = match self.source {
            Source::Tsc { .. } => &TSC,
            Source::Monotonic => &MONOTONIC,
        };
        *cost.get_or_init(|| {
            (0..5)
                .map(|_| {
                    let start = self.now();
                    let mut last = start;
                    for _ in 0..256 {
                        last = std::hint::black_box(self.now());
                    }
                    last.saturating_sub(start) as f64 / 256.0
                })
                .fold(f64::INFINITY, f64::min)
        })
    }

    /// The wall-clock `Instant` of a reading.
    pub fn instant(&self, nanos: u64) -> Instant {
        self.epoch + Duration::from_nanos(nanos)
    }

    /// What the clock reads: "tsc" or "monotonic".
    pub fn source(&self) -> &'static str {
        match self.source {
            Source::Tsc { .. } => "tsc",
            Source::Monotonic => "monotonic",
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reading of `clock` and the `Instant` it was taken at, within a
    /// few microseconds: of many tries, the one whose two `Instant`s are
    /// closest (a test preempted between the two clocks would otherwise
    /// compare readings milliseconds apart).
    fn reading(clock: &Clock) -> (Instant, u64) {
        (0..64)
            .map(|_| {
                let before = Instant::now();
                let now = clock.now();
                let after = Instant::now();
                (after.duration_since(before), before, now)
            })
            .min_by_key(|(width, _, _)| *width)
            .map(|(width, before, now)| (before + width / 2, now))
            .unwrap()
    }

    #[test]
    fn agrees_with_the_monotonic_clock() {
        let clock = Clock::new();
        eprintln!("clock source: {}", clock.source());
        let start = reading(&clock);
        let mut last = start.1;
        while start.0.elapsed() < Duration::from_millis(200) {
            let now = clock.now();
            assert!(now >= last, "clock went backwards: {now} < {last}");
            last = now;
        }
        let end = reading(&clock);
        let (wall, ours) = (
            end.0.duration_since(start.0).as_nanos() as f64,
            (end.1 - start.1) as f64,
        );
        assert!(
            (ours / wall - 1.0).abs() < 0.001,
            "{ours} ns measured against {wall} ns of CLOCK_MONOTONIC"
        );
    }

    #[test]
    fn a_clock_read_costs_something_and_not_much() {
        // The least of five runs of 256 reads: a preemption would have to
        // hit all five to break the bound.
        for clock in [Clock::new(), Clock::monotonic()] {
            let cost = clock.read_cost_ns();
            assert!(
                cost > 0.0 && cost < 10_000.0,
                "{}: {cost} ns",
                clock.source()
            );
        }
    }

    #[test]
    fn monotonic_fallback_counts_from_creation() {
        let clock = Clock::monotonic();
        std::thread::sleep(Duration::from_millis(5));
        let before = clock.epoch.elapsed().as_nanos() as u64;
        let now = clock.now();
        let after = clock.epoch.elapsed().as_nanos() as u64;
        assert!(now >= 5_000_000, "{now}");
        assert!((before..=after).contains(&now), "{before} {now} {after}");
        assert_eq!(clock.source(), "monotonic");
    }
}
