//! One direction's statistics (reads, writes or trims) and the sync calls'.

use serde::{Deserialize, Serialize};

use super::config::StatsConfig;
use super::hist::LatHistogram;
use super::latstat::LatStat;

/// Statistics of one data direction of a job (fio's per-`ddir` arrays of
/// `struct thread_stat`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DirStats {
    pub(super) io_bytes: u64,
    pub(super) total_ios: u64,
    pub(super) short_ios: u64,
    pub(super) drop_ios: u64,
    pub(super) slat: LatStat,
    // An I/O without submission latency (completed inside `queue`) has
    // lat = clat, so it is recorded once, in `plain`, whatever the other
    // I/Os of the run did; [`DirStats::clat`] and [`DirStats::lat`] merge it
    // with the statistics of the I/Os that had a slat. An engine that mixes
    // both paths (adaptive) thus pays for a second Welford update only on
    // the I/Os that have a slat.
    /// clat (= lat) of the I/Os without slat.
    pub(super) plain: LatStat,
    /// clat of the I/Os with slat.
    pub(super) clat_timed: LatStat,
    /// lat (slat + clat) of the I/Os with slat.
    pub(super) lat_timed: LatStat,
    pub(super) clat_hist: LatHistogram,
    pub(super) lat_hist: Option<LatHistogram>,
    pub(super) slat_hist: Option<LatHistogram>,
    pub(super) bw: LatStat,
    pub(super) iops: LatStat,
    pub(super) runtime_ms: u64,
    /// While no I/O had a submission latency, the lat histogram equals the
    /// clat histogram and is not filled (saves a histogram increment per I/O
    /// for synchronous engines). Histograms are not split like the Welford
    /// statistics: that would take a second 30 KB clat histogram and a merge
    /// on every read, and `lat_hist` is only kept with `lat_percentiles`.
    pub(super) lat_hist_is_clat: bool,
}

impl DirStats {
    pub(super) fn new(config: &StatsConfig) -> Self {
        Self {
            io_bytes: 0,
            total_ios: 0,
            short_ios: 0,
            drop_ios: 0,
            slat: LatStat::new(),
            plain: LatStat::new(),
            clat_timed: LatStat::new(),
            lat_timed: LatStat::new(),
            clat_hist: LatHistogram::new(),
            lat_hist: config.lat_percentiles.then(LatHistogram::new),
            slat_hist: config.slat_percentiles.then(LatHistogram::new),
            bw: LatStat::new(),
            iops: LatStat::new(),
            runtime_ms: 0,
            lat_hist_is_clat: true,
        }
    }

    /// Stops mirroring the clat histogram: the lat histogram starts as a
    /// copy of it.
    #[cold]
    pub(super) fn split_lat_hist(&mut self) {
        if !self.lat_hist_is_clat {
            return;
        }
        if let Some(h) = &mut self.lat_hist {
            h.reset();
            h.merge(&self.clat_hist);
        }
        self.lat_hist_is_clat = false;
    }

    pub(super) fn reset(&mut self) {
        self.io_bytes = 0;
        self.total_ios = 0;
        self.short_ios = 0;
        self.drop_ios = 0;
        self.slat = LatStat::new();
        self.plain = LatStat::new();
        self.clat_timed = LatStat::new();
        self.lat_timed = LatStat::new();
        self.clat_hist.reset();
        if let Some(h) = &mut self.lat_hist {
            h.reset();
        }
        if let Some(h) = &mut self.slat_hist {
            h.reset();
        }
        self.bw = LatStat::new();
        self.iops = LatStat::new();
        self.runtime_ms = 0;
        self.lat_hist_is_clat = true;
    }

    pub(super) fn merge(&mut self, other: &DirStats) {
        self.io_bytes = self.io_bytes.saturating_add(other.io_bytes);
        self.total_ios = self.total_ios.saturating_add(other.total_ios);
        self.short_ios = self.short_ios.saturating_add(other.short_ios);
        self.drop_ios = self.drop_ios.saturating_add(other.drop_ios);
        if self.lat_hist_is_clat && other.lat_hist_is_clat {
            // the lat histogram stays a mirror of the merged clat histogram
            if self.lat_hist.is_none() && other.lat_hist.is_some() {
                self.lat_hist = Some(LatHistogram::new());
            }
        } else {
            self.split_lat_hist();
            match (&mut self.lat_hist, other.lat_hist()) {
                (Some(d), Some(s)) => d.merge(s),
                (d @ None, Some(s)) => *d = Some(s.clone()),
                _ => {}
            }
        }
        self.slat.merge(&other.slat);
        self.plain.merge(&other.plain);
        self.clat_timed.merge(&other.clat_timed);
        self.lat_timed.merge(&other.lat_timed);
        self.clat_hist.merge(&other.clat_hist);
        merge_opt_hist(&mut self.slat_hist, &other.slat_hist);
        self.bw.sum_merge(&other.bw);
        self.iops.sum_merge(&other.iops);
        self.runtime_ms = self.runtime_ms.max(other.runtime_ms);
    }

    /// Bytes transferred by completed I/Os.
    pub fn io_bytes(&self) -> u64 {
        self.io_bytes
    }
    /// Completed I/Os (fio's `total_io_u`, "issued rwts").
    pub fn total_ios(&self) -> u64 {
        self.total_ios
    }
    /// I/Os that transferred less than requested.
    pub fn short_ios(&self) -> u64 {
        self.short_ios
    }
    /// I/Os counted as dropped (fio's `drop_io_u`).
    pub fn drop_ios(&self) -> u64 {
        self.drop_ios
    }
    /// Submission latency (ns); empty for synchronous engines. Returned by
    /// value like [`DirStats::clat`] and [`DirStats::lat`].
    pub fn slat(&self) -> LatStat {
        self.slat
    }
    /// Completion latency (ns) of all I/Os, computed by merging those
    /// without and with slat (exact up to the rounding of the merge; when
    /// one of the two is empty, the other is returned unchanged).
    pub fn clat(&self) -> LatStat {
        let mut clat = self.plain;
        clat.merge(&self.clat_timed);
        clat
    }
    /// Total latency (ns), slat + clat, of all I/Os: as [`DirStats::clat`],
    /// with the lat of the I/Os that had a slat.
    pub fn lat(&self) -> LatStat {
        let mut lat = self.plain;
        lat.merge(&self.lat_timed);
        lat
    }
    /// Completion-latency histogram (always kept).
    pub fn clat_hist(&self) -> &LatHistogram {
        &self.clat_hist
    }
    /// Total-latency histogram, kept with `lat_percentiles`.
    pub fn lat_hist(&self) -> Option<&LatHistogram> {
        match &self.lat_hist {
            Some(_) if self.lat_hist_is_clat => Some(&self.clat_hist),
            h => h.as_ref(),
        }
    }
    /// Submission-latency histogram, kept with `slat_percentiles`.
    pub fn slat_hist(&self) -> Option<&LatHistogram> {
        self.slat_hist.as_ref()
    }
    /// Statistics of the per-window bandwidth samples, in KiB/s.
    pub fn bw_samples(&self) -> &LatStat {
        &self.bw
    }
    /// Statistics of the per-window IOPS samples.
    pub fn iops_samples(&self) -> &LatStat {
        &self.iops
    }
    /// Runtime of this direction in ms, 0 when it did no I/O (set by
    /// [`JobStats::finish`](crate::stats::JobStats::finish); the maximum
    /// over merged jobs).
    pub fn runtime_ms(&self) -> u64 {
        self.runtime_ms
    }
    /// Average bandwidth in bytes/s, `1000 * io_bytes / runtime_ms` in
    /// integers as fio computes it; 0 without runtime.
    pub fn bw_bytes_per_sec(&self) -> u64 {
        if self.runtime_ms == 0 {
            return 0;
        }
        u64::try_from(1000 * u128::from(self.io_bytes) / u128::from(self.runtime_ms))
            .unwrap_or(u64::MAX)
    }
    /// Average IOPS as a float (`1000.0 * total_ios / runtime_ms`, fio's JSON
    /// `iops`); 0 without runtime.
    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            return 0.0;
        }
        1000.0 * self.total_ios as f64 / self.runtime_ms as f64
    }
}

pub(super) fn merge_opt_hist(dst: &mut Option<LatHistogram>, src: &Option<LatHistogram>) {
    match (dst.as_mut(), src) {
        (Some(d), Some(s)) => d.merge(s),
        (None, Some(s)) => *dst = Some(s.clone()),
        _ => {}
    }
}

/// fio's "sync" statistics: fsync/fdatasync calls and their latency.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SyncStats {
    pub(super) total_ios: u64,
    pub(super) lat: LatStat,
    pub(super) hist: LatHistogram,
}

impl SyncStats {
    pub(super) fn new() -> Self {
        Self {
            total_ios: 0,
            lat: LatStat::new(),
            hist: LatHistogram::new(),
        }
    }
    /// Number of sync calls (the fourth "issued rwts" figure).
    pub fn total_ios(&self) -> u64 {
        self.total_ios
    }
    /// Latency of the sync calls (ns).
    pub fn lat(&self) -> &LatStat {
        &self.lat
    }
    /// Latency histogram of the sync calls.
    pub fn hist(&self) -> &LatHistogram {
        &self.hist
    }
}
