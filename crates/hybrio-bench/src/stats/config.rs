//! What a job's statistics record and how they are reported (fio's
//! `percentile_list`, `bwavgtime`, `disable_*lat`...).

use serde::{Deserialize, Serialize};

use super::hist::MAX_PERCENTILES;

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// What to record and how to report it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatsConfig {
    /// Report completion-latency percentiles (fio `clat_percentiles`, default on).
    pub clat_percentiles: bool,
    /// Keep a total-latency histogram and report its percentiles (`lat_percentiles`).
    pub lat_percentiles: bool,
    /// Keep a submission-latency histogram and report its percentiles (`slat_percentiles`).
    pub slat_percentiles: bool,
    /// Percentiles to report (`percentile_list`), in percent.
    pub percentile_list: Vec<f64>,
    /// Decimals printed for the percentile labels in the normal output; fio
    /// takes the most decimals written in `percentile_list` (2 for the
    /// default list). [`StatsConfig::set_percentile_list`] sets it.
    pub percentile_precision: u32,
    /// Width of the bandwidth/IOPS sampling window in ms (fio `bwavgtime`
    /// and `iopsavgtime`); 0 disables sampling.
    pub sample_interval_ms: u64,
    /// Latencies not measured (fio's `disable_slat`, `disable_clat`,
    /// `disable_lat`, `gtod_reduce`): their statistics stay empty.
    #[serde(default)]
    pub disabled: DisabledLatencies,
}

/// Which latencies a job does not measure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisabledLatencies {
    /// Submission latency.
    pub slat: bool,
    /// Completion latency (and the latency distribution, made from it).
    pub clat: bool,
    /// Total latency.
    pub lat: bool,
}

impl DisabledLatencies {
    /// Whether any is off (asked on every completion: the three read at
    /// once, without a branch each).
    #[inline]
    pub fn any(self) -> bool {
        self.slat | self.clat | self.lat
    }
}

impl Default for StatsConfig {
    fn default() -> Self {
        Self {
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            percentile_precision: 2,
            sample_interval_ms: 500,
            disabled: DisabledLatencies::default(),
        }
    }
}

impl StatsConfig {
    /// Sets `percentile_list` and `percentile_precision` from fio's option
    /// syntax, a `:`-separated list such as `99.5:99.999:50`; the precision
    /// is the most digits written after a decimal point, as fio's parser
    /// computes it.
    pub fn set_percentile_list(&mut self, text: &str) -> Result<(), String> {
        let mut list = Vec::new();
        let mut precision = 0u32;
        for item in text.split(':').map(str::trim).filter(|s| !s.is_empty()) {
            let p: f64 = item
                .parse()
                .map_err(|_| format!("percentile_list: bad value '{item}'"))?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!("percentile_list: {item} is not in (0, 100]"));
            }
            if let Some((_, frac)) = item.split_once('.') {
                let digits = frac.chars().take_while(char::is_ascii_digit).count() as u32;
                precision = precision.max(digits);
            }
            list.push(p);
        }
        if list.is_empty() {
            return Err("percentile_list: empty list".to_string());
        }
        if list.len() > MAX_PERCENTILES {
            return Err(format!(
                "percentile_list: at most {MAX_PERCENTILES} entries, got {}",
                list.len()
            ));
        }
        self.percentile_list = list;
        self.percentile_precision = precision;
        Ok(())
    }
}
