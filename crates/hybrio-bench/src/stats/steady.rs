//! fio's steady state (`ss`, `ss_dur`, `ss_ramp`): once a second the job's
//! IOPS and bandwidth over that second are kept in a window of `ss_dur`
//! seconds; when the window's spread (the largest distance from its mean)
//! or its least-squares slope falls under the limit, the job has reached
//! steady state and ends. The arithmetic is fio's (steadystate.c): the same
//! window, the same sums, so that the same samples give the same verdict.

use serde::{Deserialize, Serialize};

/// What is judged: IOPS or bandwidth, by its spread or its slope.
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
}

impl Criterion {
    fn on_iops(self) -> bool {
        matches!(self, Criterion::Iops | Criterion::IopsSlope)
    }

    fn by_slope(self) -> bool {
        matches!(self, Criterion::IopsSlope | Criterion::BwSlope)
    }
}

/// A job's steady-state settings, as the options give them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadySettings {
    /// What is judged.
    pub criterion: Criterion,
    /// The limit: IOPS, bytes/s, or (with `percent`) a share of the mean.
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
    /// The window, in seconds (`ss_dur`); 0: no steady-state check.
    pub seconds: u64,
    /// Seconds after the job's start before samples are kept (`ss_ramp`).
    pub ramp_seconds: u64,
}

impl SteadySettings {
    /// fio's `ss=` text: `iops`, `iops_slope`, `bw` or `bw_slope`, then
    /// `:` and the limit (a number, bytes with a unit for bandwidth, or a
    /// percentage).
    pub fn parse_criterion(text: &str) -> Result<(Criterion, f64, bool), String> {
        let (word, limit) = text.split_once(':').ok_or_else(|| {
            format!("'{text}': give the criterion and its limit, e.g. iops_slope:0.1%")
        })?;
        let criterion = match word {
            "iops" => Criterion::Iops,
            "iops_slope" => Criterion::IopsSlope,
            "bw" => Criterion::Bw,
            "bw_slope" => Criterion::BwSlope,
            // fio 3.42's latency criteria (commit e6ef1c10).
            "lat" | "lat_slope" => {
                return Err(format!(
                    "'{word}': fio 3.42's latency steady state is not implemented by hybrio (iops, iops_slope, bw, bw_slope are)"
                ));
            }
            other => {
                return Err(format!(
                    "'{other}' is not a criterion (iops, iops_slope, bw, bw_slope)"
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
        let value = if criterion.on_iops() {
            limit
                .parse()
                .map_err(|_| format!("'{limit}' is not a number of IOPS"))?
        } else {
            crate::units::parse_size(limit).map_err(|e| e.to_string())? as f64
        };
        Ok((criterion, value, false))
    }
}

/// The window and the verdict, fio's `struct steadystate_data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// The settings it runs by.
    pub settings: SteadySettings,
    /// Per second of the window: IOPS and bytes/s, a ring from `head`.
    iops: Vec<u64>,
    bw: Vec<u64>,
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
    /// Where the last sample was taken: job clock (ns), I/Os, bytes.
    prev_ns: u64,
    prev_ios: u64,
    prev_bytes: u64,
}

impl SteadyState {
    /// An empty window, for a job whose clock starts now; an error, not an
    /// abort, when there is no memory for one sample per second of it.
    pub fn new(settings: SteadySettings) -> Result<SteadyState, String> {
        let seconds = settings.seconds.max(1);
        let window = || {
            let len = usize::try_from(seconds).ok()?;
            let mut samples = Vec::new();
            samples.try_reserve_exact(len).ok()?;
            samples.resize(len, 0);
            Some(samples)
        };
        let (Some(iops), Some(bw)) = (window(), window()) else {
            return Err(format!(
                "steadystate_duration={seconds}s: no memory for its window (a sample per second)"
            ));
        };
        Ok(SteadyState {
            settings,
            iops,
            bw,
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
        })
    }

    /// Takes the second's sample at `now_ns` on the job's clock, from the
    /// job's totals (I/Os and bytes done); true when steady state is
    /// reached. As fio, samples count from one second after `ss_ramp`.
    pub fn sample(&mut self, now_ns: u64, ios: u64, bytes: u64) -> bool {
        let ms = (now_ns.saturating_sub(self.prev_ns) / 1_000_000).max(1);
        // The job's figures start again after its ramp_time: no negative rate.
        let d_ios = ios.saturating_sub(self.prev_ios);
        let d_bytes = bytes.saturating_sub(self.prev_bytes);
        (self.prev_ns, self.prev_ios, self.prev_bytes) = (now_ns, ios, bytes);
        let ramp = self.settings.ramp_seconds;
        if ramp > 0 && now_ns < (ramp + 1) * 1_000_000_000 {
            return false;
        }
        let iops = 1000 * d_ios / ms;
        let bw = 1000 * d_bytes / ms;
        self.attained = if self.settings.criterion.by_slope() {
            self.add_for_slope(iops, bw)
        } else {
            self.add_for_deviation(iops, bw)
        };
        self.attained
    }

    fn value(&self, i: usize) -> u64 {
        if self.settings.criterion.on_iops() {
            self.iops[i]
        } else {
            self.bw[i]
        }
    }

    fn dur(&self) -> usize {
        self.iops.len()
    }

    /// The window moves on by one second.
    fn advance(&mut self) {
        let dur = self.dur();
        self.tail = (self.tail + 1) % dur;
        if self.tail <= self.head {
            self.head = (self.head + 1) % dur;
        }
    }

    fn add_for_slope(&mut self, iops: u64, bw: u64) -> bool {
        let dur = self.dur();
        (self.iops[self.tail], self.bw[self.tail]) = (iops, bw);
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
            self.criterion_value = if self.settings.percent {
                100.0 * self.slope / (self.sum_y as f64 / n)
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

    fn add_for_deviation(&mut self, iops: u64, bw: u64) -> bool {
        let dur = self.dur();
        (self.iops[self.tail], self.bw[self.tail]) = (iops, bw);
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

    /// The window's samples, oldest first (IOPS, bytes/s), as fio lists them.
    pub fn window(&self) -> (Vec<u64>, Vec<u64>) {
        let dur = self.dur();
        // Attained or not yet full: `head` is the oldest; else the window
        // moved on past it.
        let first = if self.attained || !self.full {
            self.head
        } else {
            (self.head + dur - 1) % dur
        };
        (0..dur)
            .map(|l| {
                let k = (first + l) % dur;
                (self.iops[k], self.bw[k])
            })
            .unzip()
    }

    /// The means of the window's IOPS and bandwidth (bytes/s), over all its
    /// seconds, filled or not, as fio takes them.
    pub fn means(&self) -> (u64, u64) {
        let dur = self.dur() as u64;
        (
            self.iops.iter().sum::<u64>() / dur,
            self.bw.iter().sum::<u64>() / dur,
        )
    }

    /// fio's `ss` text in the report, e.g. `iops_slope:0.100000%`.
    pub fn label(&self) -> String {
        let s = &self.settings;
        format!(
            "{}{}:{:.6}{}",
            if s.criterion.on_iops() { "iops" } else { "bw" },
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

    /// Judged on IOPS (else on bandwidth).
    pub fn on_iops(&self) -> bool {
        self.settings.criterion.on_iops()
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
            ramp_seconds: 0,
        }
    }

    /// Feeds one sample a second of `per_second` I/Os each; the second at
    /// which steady state was reached.
    fn run(ss: &mut SteadyState, per_second: &[u64]) -> Option<usize> {
        let mut ios = 0;
        for (i, &n) in per_second.iter().enumerate() {
            ios += n;
            if ss.sample((i as u64 + 1) * 1_000_000_000, ios, ios * 4096) {
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
            "steadystate_duration=18446744073709551615s: no memory for its window (a sample per second)"
        );
    }

    #[test]
    fn a_flat_rate_is_steady_once_the_window_is_full() {
        let mut ss = SteadyState::new(settings(Criterion::IopsSlope, 0.1, true, 5)).unwrap();
        assert_eq!(run(&mut ss, &[1000; 10]), Some(5));
        assert_eq!(ss.slope, 0.0);
        assert!(ss.attained);
        let (iops, bw) = ss.window();
        assert_eq!(iops, vec![1000; 5]);
        assert_eq!(bw, vec![1000 * 4096; 5]);
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

    fn run_from(ss: &mut SteadyState, start: u64, per_second: &[u64]) -> Option<usize> {
        let mut ios: u64 = [90, 110, 90, 110].iter().sum();
        for (i, &n) in per_second.iter().enumerate() {
            ios += n;
            if ss.sample((start + i as u64 + 1) * 1_000_000_000, ios, ios * 4096) {
                return Some(i + 1);
            }
        }
        None
    }

    #[test]
    fn samples_start_a_second_after_the_ramp() {
        let mut s = settings(Criterion::Bw, 1.0, true, 2);
        s.ramp_seconds = 3;
        let mut ss = SteadyState::new(s).unwrap();
        assert_eq!(run(&mut ss, &[100; 10]), Some(5));
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
        assert!(p("iops").is_err());
        assert!(
            p("lat:1")
                .unwrap_err()
                .contains("not implemented by hybrio")
        );
        assert!(p("lat_slope:1%").unwrap_err().contains("fio 3.42"));
        assert!(p("latt:1").unwrap_err().contains("is not a criterion"));
    }
}
