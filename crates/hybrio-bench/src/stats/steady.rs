//! fio's steady state (`ss`, `ss_dur`, `ss_ramp`, `ss_interval`): every
//! `ss_interval` (1 s by default) the job's IOPS, bandwidth and mean
//! completion latency over that interval are kept in a window of `ss_dur`;
//! when the window's spread (the largest distance from its mean) or its
//! least-squares slope falls under the limit, the job has reached steady
//! state and ends. The arithmetic is fio 3.42's (steadystate.c): the same
//! window, the same sums, so that the same samples give the same verdict.

use serde::{Deserialize, Serialize};

/// What is judged: IOPS, bandwidth or latency, by its spread or its slope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Criterion {
    /// `iops`: the largest deviation of the IOPS from their mean.
    Iops,
    /// `iops_slope`: the slope of the IOPS over the window.
    IopsSlope,
    /// `bw`: the largest deviation of the bandwidth from its mean.
    Bw,
    /// `bw_slope`: the slope of the bandwidth.
    BwSlope,
    /// `lat` (fio 3.40): the largest deviation of the intervals' mean
    /// completion latencies from their mean.
    Lat,
    /// `lat_slope`: the slope of the mean completion latency.
    LatSlope,
}

/// The measure a criterion judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// I/Os per second.
    Iops,
    /// Bytes per second.
    Bw,
    /// The mean completion latency of the interval's I/Os, ns.
    Lat,
}

impl Criterion {
    /// The measure judged.
    pub fn measure(self) -> Measure {
        match self {
            Criterion::Iops | Criterion::IopsSlope => Measure::Iops,
            Criterion::Bw | Criterion::BwSlope => Measure::Bw,
            Criterion::Lat | Criterion::LatSlope => Measure::Lat,
        }
    }

    fn by_slope(self) -> bool {
        matches!(
            self,
            Criterion::IopsSlope | Criterion::BwSlope | Criterion::LatSlope
        )
    }
}

/// fio's sampling period when `ss_interval` is not given, µs.
pub const DEFAULT_INTERVAL_US: u64 = 1_000_000;

/// A job's steady-state settings, as the options give them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadySettings {
    /// What is judged.
    pub criterion: Criterion,
    /// The limit: IOPS, bytes/s, a latency, or (with `percent`) a share of
    /// the mean.
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
    /// The window, in whole seconds (`ss_dur`); 0: no steady-state check.
    pub seconds: u64,
    /// The window as given, µs (fio checks it against `ss_interval`).
    pub duration_us: u64,
    /// Seconds after the job's start before samples are kept (`ss_ramp`).
    pub ramp_seconds: u64,
    /// The sampling period, µs (`ss_interval`).
    pub interval_us: u64,
}

impl SteadySettings {
    /// fio's `ss=` text: `iops`, `iops_slope`, `bw`, `bw_slope`, `lat` or
    /// `lat_slope`, then `:` and the limit (a number, bytes with a unit for
    /// bandwidth, a time for latency, or a percentage).
    pub fn parse_criterion(text: &str) -> Result<(Criterion, f64, bool), String> {
        let (word, limit) = text.split_once(':').ok_or_else(|| {
            format!("'{text}': give the criterion and its limit, e.g. iops_slope:0.1%")
        })?;
        let criterion = match word {
            "iops" => Criterion::Iops,
            "iops_slope" => Criterion::IopsSlope,
            "bw" => Criterion::Bw,
            "bw_slope" => Criterion::BwSlope,
            "lat" => Criterion::Lat,
            "lat_slope" => Criterion::LatSlope,
            other => {
                return Err(format!(
                    "'{other}' is not a criterion (iops, iops_slope, bw, bw_slope, lat, lat_slope)"
                ));
            }
        };
        let limit = limit.trim();
        if let Some(percent) = limit.strip_suffix('%') {
            let value: f64 = percent
                .trim()
                .parse()
                .map_err(|_| format!("'{limit}' is not a percentage"))?;
            return Ok((criterion, value, true));
        }
        let value = match criterion.measure() {
            Measure::Iops => limit
                .parse()
                .map_err(|_| format!("'{limit}' is not a number of IOPS"))?,
            // fio 3.42 reads the time in µs (a bare number too) and judges
            // the ns latencies by that number: lat:1ms allows 1000 ns. The
            // same job file must end where fio's ends, so hybrio does too.
            Measure::Lat => crate::units::parse_time(limit, std::time::Duration::from_micros(1))
                .map_err(|e| e.to_string())?
                .as_micros() as f64,
            Measure::Bw => crate::units::parse_size(limit).map_err(|e| e.to_string())? as f64,
        };
        Ok((criterion, value, false))
    }

    /// Why fio 3.42 refuses these settings, if it does: the interval is at
    /// least a second, and the window a multiple of it, longer than it.
    pub fn check(&self) -> Result<(), String> {
        if self.duration_us == 0 {
            return Ok(());
        }
        let secs = |us: u64| us as f64 / 1e6;
        if self.interval_us < 1_000_000 {
            return Err(format!(
                "ss_interval={}s: it must be at least 1s",
                secs(self.interval_us)
            ));
        }
        if !self.duration_us.is_multiple_of(self.interval_us)
            || self.duration_us <= self.interval_us
        {
            return Err(format!(
                "ss_dur={}s must be a multiple of ss_interval={}s, and longer",
                secs(self.duration_us),
                secs(self.interval_us)
            ));
        }
        Ok(())
    }

    /// Samples in the window, as fio counts them: whole seconds of `ss_dur`
    /// over whole seconds of `ss_interval` (so 3s at 1.5s is 3 samples).
    pub fn intervals(&self) -> u64 {
        let interval_s = (self.interval_us / 1000 / 1000).max(1);
        (self.seconds / interval_s).max(1)
    }

    /// The sampling period, ns.
    pub fn interval_ns(&self) -> u64 {
        self.interval_us.max(1) * 1000
    }
}

/// Where the job stands when a sample is taken: its clock and its totals.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    /// The job's clock, ns.
    pub now_ns: u64,
    /// I/Os completed.
    pub ios: u64,
    /// Bytes completed.
    pub bytes: u64,
    /// The sum of the completion latencies, ns (fio's mean times samples).
    pub lat_sum: f64,
    /// The completion latencies summed.
    pub lat_samples: u64,
}

/// The window and the verdict, fio's `struct steadystate_data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// The settings it runs by.
    pub settings: SteadySettings,
    /// Per interval of the window: IOPS, bytes/s and mean completion
    /// latency (ns), a ring from `head`.
    iops: Vec<u64>,
    bw: Vec<u64>,
    lat: Vec<u64>,
    head: usize,
    tail: usize,
    full: bool,
    sum_y: u64,
    sum_xy: u64,
    oldest_y: u64,
    /// The last slope and deviation computed, and the criterion's value.
    pub slope: f64,
    /// See [`slope`](Self::slope).
    pub deviation: f64,
    /// See [`slope`](Self::slope).
    pub criterion_value: f64,
    /// Steady state was reached: the job ended on it.
    pub attained: bool,
    /// Where the last sample was taken: job clock (ns), I/Os, bytes,
    /// latency sum and count.
    prev_ns: u64,
    prev_ios: u64,
    prev_bytes: u64,
    prev_lat_sum: f64,
    prev_lat_samples: u64,
}

impl SteadyState {
    /// An empty window, for a job whose clock starts now; an error, not an
    /// abort, when there is no memory for one sample per interval of it.
    pub fn new(settings: SteadySettings) -> Result<SteadyState, String> {
        let intervals = settings.intervals();
        let window = || {
            let len = usize::try_from(intervals).ok()?;
            let mut samples = Vec::new();
            samples.try_reserve_exact(len).ok()?;
            samples.resize(len, 0);
            Some(samples)
        };
        let (Some(iops), Some(bw), Some(lat)) = (window(), window(), window()) else {
            return Err(format!(
                "steadystate_duration={}s: no memory for its window ({intervals} samples)",
                settings.seconds
            ));
        };
        Ok(SteadyState {
            settings,
            iops,
            bw,
            lat,
            head: 0,
            tail: 0,
            full: false,
            sum_y: 0,
            sum_xy: 0,
            oldest_y: 0,
            slope: 0.0,
            deviation: 0.0,
            criterion_value: 0.0,
            attained: false,
            prev_ns: 0,
            prev_ios: 0,
            prev_bytes: 0,
            prev_lat_sum: 0.0,
            prev_lat_samples: 0,
        })
    }

    /// Takes the interval's sample from the job's totals at the end of it;
    /// true when steady state is reached. As fio, samples count from one
    /// interval after `ss_ramp`.
    pub fn sample(&mut self, at: Totals) -> bool {
        let ms = (at.now_ns.saturating_sub(self.prev_ns) / 1_000_000).max(1);
        // The job's figures start again after its ramp_time: no negative rate.
        let d_ios = at.ios.saturating_sub(self.prev_ios);
        let d_bytes = at.bytes.saturating_sub(self.prev_bytes);
        let (d_lat, d_lat_samples) = if at.lat_samples >= self.prev_lat_samples {
            (
                at.lat_sum - self.prev_lat_sum,
                at.lat_samples - self.prev_lat_samples,
            )
        } else {
            (0.0, 0)
        };
        (self.prev_ns, self.prev_ios, self.prev_bytes) = (at.now_ns, at.ios, at.bytes);
        (self.prev_lat_sum, self.prev_lat_samples) = (at.lat_sum, at.lat_samples);
        let s = &self.settings;
        let ramp_ns = s.ramp_seconds * 1_000_000_000 + s.interval_ns();
        if s.ramp_seconds > 0 && at.now_ns < ramp_ns {
            return false;
        }
        // fio 3.42's per-second rate: the time since the last sample times
        // the change, over the interval squared (the interval in ms).
        // fio squares the interval in an unsigned int: wrapped past 65 s.
        let interval_ms = (s.interval_us / 1000) as u32;
        let per = (u64::from(interval_ms.wrapping_mul(interval_ms)) / 1000).max(1);
        let iops = ms.wrapping_mul(d_ios) / per;
        let bw = ms.wrapping_mul(d_bytes) / per;
        let lat = if d_lat_samples > 0 {
            (d_lat / d_lat_samples as f64) as u64
        } else {
            0
        };
        self.attained = if self.settings.criterion.by_slope() {
            self.add_for_slope(iops, bw, lat)
        } else {
            self.add_for_deviation(iops, bw, lat)
        };
        self.attained
    }

    fn value(&self, i: usize) -> u64 {
        match self.settings.criterion.measure() {
            Measure::Iops => self.iops[i],
            Measure::Bw => self.bw[i],
            Measure::Lat => self.lat[i],
        }
    }

    fn dur(&self) -> usize {
        self.iops.len()
    }

    /// The window moves on by one interval.
    fn advance(&mut self) {
        let dur = self.dur();
        self.tail = (self.tail + 1) % dur;
        if self.tail <= self.head {
            self.head = (self.head + 1) % dur;
        }
    }

    fn store(&mut self, iops: u64, bw: u64, lat: u64) {
        (
            self.iops[self.tail],
            self.bw[self.tail],
            self.lat[self.tail],
        ) = (iops, bw, lat);
    }

    fn add_for_slope(&mut self, iops: u64, bw: u64, lat: u64) -> bool {
        let dur = self.dur();
        self.store(iops, bw, lat);
        let new = self.value(self.tail);
        if self.full || self.tail + 1 == self.head + dur {
            if self.full {
                self.sum_y = self.sum_y - self.oldest_y + new;
                self.sum_xy = (self.sum_xy + dur as u64 * new).wrapping_sub(self.sum_y);
            } else {
                self.sum_y = (0..dur).map(|i| self.value(i)).sum();
                self.sum_xy = (0..dur)
                    .map(|i| i as u64 * self.value((self.head + i) % dur))
                    .sum();
                self.full = true;
            }
            self.oldest_y = self.value(self.head);
            let n = dur as f64;
            let sum_x = (dur * (dur - 1) / 2) as f64;
            let sum_x_sq = ((dur - 1) * dur * (2 * dur - 1) / 6) as f64;
            self.slope = (self.sum_xy as f64 - sum_x * self.sum_y as f64 / n)
                / (sum_x_sq - sum_x * sum_x / n);
            // fio divides by the integer mean (sum_y / intervals, both whole).
            self.criterion_value = if self.settings.percent {
                100.0 * self.slope / (self.sum_y / dur as u64) as f64
            } else {
                self.slope
            };
            if self.criterion_value.abs() < self.settings.limit {
                return true;
            }
        }
        self.advance();
        false
    }

    fn add_for_deviation(&mut self, iops: u64, bw: u64, lat: u64) -> bool {
        let dur = self.dur();
        self.store(iops, bw, lat);
        if self.full || self.tail + 1 == self.head + dur {
            if self.full {
                self.sum_y = self.sum_y - self.oldest_y + self.value(self.tail);
            } else {
                self.sum_y = (0..dur).map(|i| self.value(i)).sum();
                self.full = true;
            }
            self.oldest_y = self.value(self.head);
            let mean = self.sum_y as f64 / dur as f64;
            self.deviation = (0..dur)
                .map(|i| (self.value(i) as f64 - mean).abs())
                .fold(0.0, f64::max);
            self.criterion_value = if self.settings.percent {
                100.0 * self.deviation / mean
            } else {
                self.deviation
            };
            if self.criterion_value < self.settings.limit {
                return true;
            }
        }
        self.advance();
        false
    }

    /// The window's samples, oldest first (IOPS, bytes/s, latency in ns),
    /// as fio lists them.
    pub fn window(&self) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
        let dur = self.dur();
        // Attained or not yet full: `head` is the oldest; else the window
        // moved on past it.
        let first = if self.attained || !self.full {
            self.head
        } else {
            (self.head + dur - 1) % dur
        };
        let order = |v: &[u64]| (0..dur).map(|l| v[(first + l) % dur]).collect();
        (order(&self.iops), order(&self.bw), order(&self.lat))
    }

    /// The means of the window's IOPS, bandwidth (bytes/s) and latency
    /// (ns), over all its intervals, filled or not, as fio takes them.
    pub fn means(&self) -> (u64, u64, u64) {
        let dur = self.dur() as u64;
        let mean = |v: &[u64]| v.iter().sum::<u64>() / dur;
        (mean(&self.iops), mean(&self.bw), mean(&self.lat))
    }

    /// The measure's name in fio's report: `iops`, `bw` or `lat`.
    pub fn measure_name(&self) -> &'static str {
        match self.settings.criterion.measure() {
            Measure::Iops => "iops",
            Measure::Bw => "bw",
            Measure::Lat => "lat",
        }
    }

    /// fio's `ss` text in the report, e.g. `iops_slope:0.100000%`.
    pub fn label(&self) -> String {
        let s = &self.settings;
        format!(
            "{}{}:{:.6}{}",
            self.measure_name(),
            if s.criterion.by_slope() { "_slope" } else { "" },
            s.limit as f32,
            if s.percent { "%" } else { "" }
        )
    }

    /// What was judged last, e.g. `0.012345%`.
    pub fn criterion_text(&self) -> String {
        format!(
            "{:.6}{}",
            self.criterion_value as f32,
            if self.settings.percent { "%" } else { "" }
        )
    }

    /// Judged by the slope (else by the deviation).
    pub fn by_slope(&self) -> bool {
        self.settings.criterion.by_slope()
    }

    /// What is judged.
    pub fn measure(&self) -> Measure {
        self.settings.criterion.measure()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(criterion: Criterion, limit: f64, percent: bool, seconds: u64) -> SteadySettings {
        SteadySettings {
            criterion,
            limit,
            percent,
            seconds,
            duration_us: seconds.saturating_mul(1_000_000),
            ramp_seconds: 0,
            interval_us: DEFAULT_INTERVAL_US,
        }
    }

    /// Feeds one sample an interval of `per_interval` I/Os each, every I/O
    /// of 4 KiB and taking as many µs as its index in the slice, plus one;
    /// the sample at which steady state was reached.
    fn run(ss: &mut SteadyState, per_interval: &[u64]) -> Option<usize> {
        run_from(ss, 0, per_interval)
    }

    fn run_from(ss: &mut SteadyState, start: usize, per_interval: &[u64]) -> Option<usize> {
        let step = ss.settings.interval_ns();
        let mut at = Totals {
            now_ns: start as u64 * step,
            ios: ss.prev_ios,
            bytes: ss.prev_bytes,
            lat_sum: ss.prev_lat_sum,
            lat_samples: ss.prev_lat_samples,
        };
        for (i, &n) in per_interval.iter().enumerate() {
            at.now_ns += step;
            at.ios += n;
            at.bytes += n * 4096;
            at.lat_sum += (n * 1000 * (start + i + 1) as u64) as f64;
            at.lat_samples += n;
            if ss.sample(at) {
                return Some(i + 1);
            }
        }
        None
    }

    #[test]
    fn a_window_too_large_for_memory_is_an_error_not_an_abort() {
        let err = SteadyState::new(settings(Criterion::Iops, 1.0, false, u64::MAX)).unwrap_err();
        assert_eq!(
            err,
            "steadystate_duration=18446744073709551615s: no memory for its window (18446744073709551615 samples)"
        );
    }

    #[test]
    fn a_flat_rate_is_steady_once_the_window_is_full() {
        let mut ss = SteadyState::new(settings(Criterion::IopsSlope, 0.1, true, 5)).unwrap();
        assert_eq!(run(&mut ss, &[1000; 10]), Some(5));
        assert_eq!(ss.slope, 0.0);
        assert!(ss.attained);
        let (iops, bw, lat) = ss.window();
        assert_eq!(iops, vec![1000; 5]);
        assert_eq!(bw, vec![1000 * 4096; 5]);
        assert_eq!(lat, vec![1000, 2000, 3000, 4000, 5000]);
    }

    #[test]
    fn a_rising_rate_is_not_steady_until_it_levels_off() {
        let mut ss = SteadyState::new(settings(Criterion::IopsSlope, 1.0, true, 4)).unwrap();
        let rising: Vec<u64> = (1..=8).map(|i| i * 100).chain([800; 8]).collect();
        // Rising 100 per second, 12-25% of the mean: not steady; then flat.
        assert_eq!(run(&mut ss, &rising), Some(11));
        // The slope of 1, 2, 3, 4 is 1.
        let mut ss = SteadyState::new(settings(Criterion::IopsSlope, 0.5, false, 4)).unwrap();
        assert_eq!(run(&mut ss, &[1, 1, 1, 1]), Some(4));
        let mut ss = SteadyState::new(settings(Criterion::IopsSlope, 0.5, false, 4)).unwrap();
        assert_eq!(run(&mut ss, &[1, 2, 3, 4, 5, 6]), None);
        assert!((ss.slope - 1.0).abs() < 1e-9, "{}", ss.slope);
    }

    #[test]
    fn the_deviation_is_the_largest_distance_from_the_mean() {
        let mut ss = SteadyState::new(settings(Criterion::Iops, 10.0, true, 4)).unwrap();
        // 90, 110, 90, 110: mean 100, 10% off at most: not under 10%.
        assert_eq!(run(&mut ss, &[90, 110, 90, 110]), None);
        assert!((ss.deviation - 10.0).abs() < 1e-9);
        assert!((ss.criterion_value - 10.0).abs() < 1e-9);
        // Then 100, 100, 100: the window 110, 100, 100, 100.
        assert_eq!(run_from(&mut ss, 4, &[100, 100, 100]), Some(3));
    }

    #[test]
    fn samples_start_an_interval_after_the_ramp() {
        let mut s = settings(Criterion::Bw, 1.0, true, 2);
        s.ramp_seconds = 3;
        let mut ss = SteadyState::new(s).unwrap();
        assert_eq!(run(&mut ss, &[100; 10]), Some(5));
        // With 2 s samples: the ramp is over at 5 s, the samples at 6 and 8 s.
        let mut s = settings(Criterion::Bw, 1.0, true, 4);
        (s.ramp_seconds, s.interval_us) = (3, 2_000_000);
        let mut ss = SteadyState::new(s).unwrap();
        assert_eq!(run(&mut ss, &[100; 10]), Some(4));
    }

    #[test]
    fn latency_is_the_mean_of_the_intervals_completions() {
        // Each interval's I/Os take 1, 2, 3... µs (see `run`): the window
        // of lat_slope rises by 1000 ns a sample, whatever the rate.
        let mut ss = SteadyState::new(settings(Criterion::LatSlope, 999.0, false, 3)).unwrap();
        assert_eq!(run(&mut ss, &[10, 500, 7, 7, 7]), None);
        assert!((ss.slope - 1000.0).abs() < 1e-9, "{}", ss.slope);
        let (_, _, lat) = ss.window();
        assert_eq!(lat, vec![3000, 4000, 5000]);
        assert_eq!(ss.means().2, 4000);
        // The deviation from the mean of 1000, 2000, 3000 is 1000 ns: under
        // 1001 (fio's lat:1001, µs as written, judged against ns), not 1000.
        let mut ss = SteadyState::new(settings(Criterion::Lat, 1001.0, false, 3)).unwrap();
        assert_eq!(run(&mut ss, &[5, 5, 5]), Some(3));
        assert!((ss.deviation - 1000.0).abs() < 1e-9);
        let mut ss = SteadyState::new(settings(Criterion::Lat, 1000.0, false, 3)).unwrap();
        assert_eq!(run(&mut ss, &[5, 5, 5]), None);
        assert_eq!(ss.label(), "lat:1000.000000");
        // No I/O in an interval: a latency of 0, as fio's.
        let mut ss = SteadyState::new(settings(Criterion::LatSlope, 1.0, true, 2)).unwrap();
        run(&mut ss, &[0, 4]);
        assert_eq!(ss.window().2, vec![0, 2000]);
    }

    #[test]
    fn an_interval_of_seconds_makes_a_window_of_samples_per_second() {
        // ss_dur=6s, ss_interval=2s: 3 samples, each a rate per second.
        let mut s = settings(Criterion::IopsSlope, 0.1, true, 6);
        s.interval_us = 2_000_000;
        let mut ss = SteadyState::new(s).unwrap();
        assert_eq!(run(&mut ss, &[2000, 2000, 2000, 2000]), Some(3));
        let (iops, bw, _) = ss.window();
        assert_eq!(iops, vec![1000; 3]);
        assert_eq!(bw, vec![1000 * 4096; 3]);
        // As fio counts: whole seconds over whole seconds.
        s.interval_us = 1_500_000;
        s.seconds = 3;
        assert_eq!(s.intervals(), 3);
    }

    #[test]
    fn a_late_sample_counts_as_fio_342_counts_it() {
        // fio 3.42 multiplies the change by the time since the last sample:
        // 1000 I/Os over 1.1 s of a 1 s interval make 1100 IOPS.
        let mut ss = SteadyState::new(settings(Criterion::Iops, 1.0, false, 2)).unwrap();
        let at = |now_ns, ios| Totals {
            now_ns,
            ios,
            ..Totals::default()
        };
        ss.sample(at(1_100_000_000, 1000));
        ss.sample(at(2_100_000_000, 2000));
        assert_eq!(ss.window().0, vec![1100, 1000]);
    }

    #[test]
    fn intervals_and_windows_fio_refuses_are_refused() {
        let mut s = settings(Criterion::Iops, 1.0, false, 1);
        assert_eq!(
            s.check().unwrap_err(),
            "ss_dur=1s must be a multiple of ss_interval=1s, and longer"
        );
        (s.seconds, s.duration_us, s.interval_us) = (3, 3_000_000, 2_000_000);
        assert!(s.check().is_err());
        s.interval_us = 500_000;
        assert_eq!(
            s.check().unwrap_err(),
            "ss_interval=0.5s: it must be at least 1s"
        );
        s.interval_us = 1_500_000;
        assert_eq!(s.check(), Ok(()));
        s.duration_us = 0;
        s.interval_us = 1;
        assert_eq!(s.check(), Ok(()), "no window, nothing to check");
    }

    #[test]
    fn criteria_parse_as_fio_reads_them() {
        let p = SteadySettings::parse_criterion;
        assert_eq!(p("iops:10%").unwrap(), (Criterion::Iops, 10.0, true));
        assert_eq!(p("bw_slope:1%").unwrap(), (Criterion::BwSlope, 1.0, true));
        assert_eq!(
            p("iops_slope:0.5").unwrap(),
            (Criterion::IopsSlope, 0.5, false)
        );
        assert_eq!(p("bw:1m").unwrap(), (Criterion::Bw, 1048576.0, false));
        assert_eq!(p("lat:1ms").unwrap(), (Criterion::Lat, 1000.0, false));
        assert_eq!(p("lat:250").unwrap(), (Criterion::Lat, 250.0, false));
        assert_eq!(p("lat_slope:2%").unwrap(), (Criterion::LatSlope, 2.0, true));
        assert!(p("iops").is_err());
        assert!(p("clat:1").is_err());
    }
}
