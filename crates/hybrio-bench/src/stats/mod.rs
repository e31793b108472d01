//! Per-job I/O statistics, recorded the way fio records them.
//!
//! The job loop owns one [`JobStats`] per job and calls its `record_*`
//! methods on the hot path; they are allocation-free and cheap: integer
//! adds, one Welford update per latency kind and one histogram increment per
//! kept histogram (measured at about 10 ns per `record_io` for an I/O without
//! submission latency, where lat is clat and is not stored twice, and about
//! 18 ns with one, on a 2-vCPU EPYC VM). [`JobStats::sample`] is a single
//! comparison until the bandwidth/IOPS window (500 ms by default) has elapsed.
//!
//! Times are nanoseconds on the job's own clock (`start`, `now`), as read
//! from [`hybrio::clock::Clock`]: cheaper than `Instant` on the hot path.
//!
//! After the run, [`JobStats::finish`] stamps the runtimes, jobs of a
//! reporting group are combined with [`JobStats::merge`] (fio's
//! `sum_thread_stats()`), and [`group_summary`] computes fio's
//! "Run status group" figures.
//!
//! Every rule here follows fio's stat.c / io_u.c / ioengines.c: see the
//! documentation of each item for the fio function it mirrors.

mod hist;
mod latstat;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use hist::{
    FIO_PLAT_NR, GROUPING_POWER, LatHistogram, MAX_PERCENTILES, MAX_VALUE_POWER, bucket_value,
    effective_percentiles, fio_percentile_rank,
};
pub use latstat::LatStat;

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Number of buckets in the nsec latency distribution.
pub const LAT_N_NR: usize = 10;
/// Number of buckets in the usec latency distribution.
pub const LAT_U_NR: usize = 10;
/// Number of buckets in the msec latency distribution.
pub const LAT_M_NR: usize = 12;
/// Labels (exclusive upper bounds) of the nsec and usec latency buckets.
pub const LAT_LABELS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
/// Labels of the msec latency buckets.
pub const LAT_M_LABELS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];
/// Number of buckets in the IO depth, submit and complete distributions.
pub const MAP_NR: usize = 7;
/// Labels of the IO depth buckets (1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64).
pub const DEPTH_LABELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// Labels of the submit/complete buckets (0, 1-4, 5-8, 9-16, 17-32, 33-64, >64).
pub const BATCH_LABELS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// Upper bounds of the latency buckets within one unit, msec using all 11.
const LAT_THRESHOLDS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// A data direction, in fio's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataDir {
    /// Reads (index 0).
    Read,
    /// Writes (index 1).
    Write,
    /// Trims / discards (index 2).
    Trim,
}

impl DataDir {
    /// All directions in index order.
    pub const ALL: [DataDir; 3] = [DataDir::Read, DataDir::Write, DataDir::Trim];

    /// Index 0, 1 or 2.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// fio's name of the direction: `read`, `write` or `trim`.
    pub const fn name(self) -> &'static str {
        match self {
            DataDir::Read => "read",
            DataDir::Write => "write",
            DataDir::Trim => "trim",
        }
    }
}

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

/// CPU usage of a job over its run (fio takes it from `getrusage()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuUsage {
    /// User CPU time in ns.
    pub usr_ns: u64,
    /// System CPU time in ns.
    pub sys_ns: u64,
    /// Voluntary plus involuntary context switches.
    pub ctx: u64,
    /// Major page faults.
    pub majf: u64,
    /// Minor page faults.
    pub minf: u64,
}

impl CpuUsage {
    fn add(&mut self, other: &CpuUsage) {
        self.usr_ns = self.usr_ns.saturating_add(other.usr_ns);
        self.sys_ns = self.sys_ns.saturating_add(other.sys_ns);
        self.ctx = self.ctx.saturating_add(other.ctx);
        self.majf = self.majf.saturating_add(other.majf);
        self.minf = self.minf.saturating_add(other.minf);
    }
}

/// Statistics of one data direction of a job (fio's per-`ddir` arrays of
/// `struct thread_stat`).
#[derive(Clone, Debug)]
pub struct DirStats {
    io_bytes: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    slat: LatStat,
    // An I/O without submission latency (completed inside `queue`) has
    // lat = clat, so it is recorded once, in `plain`, whatever the other
    // I/Os of the run did; [`DirStats::clat`] and [`DirStats::lat`] merge it
    // with the statistics of the I/Os that had a slat. An engine that mixes
    // both paths (adaptive) thus pays for a second Welford update only on
    // the I/Os that have a slat.
    /// clat (= lat) of the I/Os without slat.
    plain: LatStat,
    /// clat of the I/Os with slat.
    clat_timed: LatStat,
    /// lat (slat + clat) of the I/Os with slat.
    lat_timed: LatStat,
    clat_hist: LatHistogram,
    lat_hist: Option<LatHistogram>,
    slat_hist: Option<LatHistogram>,
    bw: LatStat,
    iops: LatStat,
    runtime_ms: u64,
    /// While no I/O had a submission latency, the lat histogram equals the
    /// clat histogram and is not filled (saves a histogram increment per I/O
    /// for synchronous engines). Histograms are not split like the Welford
    /// statistics: that would take a second 30 KB clat histogram and a merge
    /// on every read, and `lat_hist` is only kept with `lat_percentiles`.
    lat_hist_is_clat: bool,
}

impl DirStats {
    fn new(config: &StatsConfig) -> Self {
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
    fn split_lat_hist(&mut self) {
        if !self.lat_hist_is_clat {
            return;
        }
        if let Some(h) = &mut self.lat_hist {
            h.reset();
            h.merge(&self.clat_hist);
        }
        self.lat_hist_is_clat = false;
    }

    fn reset(&mut self) {
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

    fn merge(&mut self, other: &DirStats) {
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
    /// [`JobStats::finish`]; the maximum over merged jobs).
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

fn merge_opt_hist(dst: &mut Option<LatHistogram>, src: &Option<LatHistogram>) {
    match (dst.as_mut(), src) {
        (Some(d), Some(s)) => d.merge(s),
        (None, Some(s)) => *dst = Some(s.clone()),
        _ => {}
    }
}

/// fio's "sync" statistics: fsync/fdatasync calls and their latency.
#[derive(Clone, Debug)]
pub struct SyncStats {
    total_ios: u64,
    lat: LatStat,
    hist: LatHistogram,
}

impl SyncStats {
    fn new() -> Self {
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

/// fio's latency distribution (`lat (nsec)/(usec)/(msec)` lines), each entry
/// a percentage of all issued read/write/trim I/Os.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatencyDistribution {
    /// Buckets labelled by [`LAT_LABELS`] in ns.
    pub nsec: [f64; LAT_N_NR],
    /// Buckets labelled by [`LAT_LABELS`] in us.
    pub usec: [f64; LAT_U_NR],
    /// Buckets labelled by [`LAT_M_LABELS`] in ms.
    pub msec: [f64; LAT_M_NR],
}

#[derive(Clone, Debug)]
struct Sampler {
    /// Window in ns; `None` when sampling is off.
    interval: Option<u64>,
    next: u64,
    last: u64,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
}

impl Sampler {
    fn new(interval_ms: u64, now: u64) -> Self {
        let interval = (interval_ms > 0).then(|| interval_ms.saturating_mul(1_000_000));
        Self {
            interval,
            next: next_deadline(now, interval),
            last: now,
            last_bytes: [0; 3],
            last_ios: [0; 3],
        }
    }
}

/// `now + interval`, or a point far enough in the future to never be reached
/// when sampling is off.
fn next_deadline(now: u64, interval: Option<u64>) -> u64 {
    interval.map_or(u64::MAX, |step| now.saturating_add(step))
}

/// Index of the IO-depth bucket for `depth` in flight (fio `io_u_mark_depth()`:
/// 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64). fio never records a depth of 0;
/// it is counted as 1 here.
#[inline]
fn depth_bucket(depth: usize) -> usize {
    let d = depth.max(1);
    ((usize::BITS - 1 - d.leading_zeros()) as usize).min(MAP_NR - 1)
}

/// Index of the submit/complete bucket for a batch of `n` (fio
/// `__io_u_mark_map()`: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64).
#[inline]
fn batch_bucket(n: usize) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// Index into the 32 latency-distribution counters (10 ns, 10 us, 12 ms) of a
/// completion latency (fio `io_u_mark_latency()`).
#[inline]
fn lat_bucket(ns: u64) -> usize {
    let (base, v) = if ns < 1_000 {
        (0, ns)
    } else if ns < 1_000_000 {
        (LAT_N_NR, ns / 1_000)
    } else {
        (LAT_N_NR + LAT_U_NR, ns / 1_000_000)
    };
    base + LAT_THRESHOLDS
        .iter()
        .map(|&t| usize::from(v >= t))
        .sum::<usize>()
}

/// fio's `stat_calc_dist()`: percentages of `total`, a non-zero bucket
/// showing at least 0.1%.
fn calc_dist(map: &[u64; MAP_NR], total: u64) -> [f64; MAP_NR] {
    let mut out = [0.0; MAP_NR];
    if total == 0 {
        return out;
    }
    for (o, &m) in out.iter_mut().zip(map) {
        *o = m as f64 / total as f64 * 100.0;
        if *o < 0.1 && m > 0 {
            *o = 0.1;
        }
    }
    out
}

/// fio's `stat_calc_lat()`: percentages of `total`, a non-zero bucket
/// showing at least 0.01%.
fn calc_lat<const N: usize>(src: &[u64], total: u64) -> [f64; N] {
    let mut out = [0.0; N];
    if total == 0 {
        return out;
    }
    for (o, &c) in out.iter_mut().zip(src) {
        *o = c as f64 / total as f64 * 100.0;
        if *o < 0.01 && c > 0 {
            *o = 0.01;
        }
    }
    out
}

/// All statistics of one job (or of a group of jobs merged for
/// `group_reporting`): fio's `struct thread_stat`.
#[derive(Clone, Debug)]
pub struct JobStats {
    config: StatsConfig,
    dirs: [DirStats; 3],
    sync: SyncStats,
    lat_buckets: [u64; LAT_N_NR + LAT_U_NR + LAT_M_NR],
    io_depth: [u64; MAP_NR],
    submit: [u64; MAP_NR],
    complete: [u64; MAP_NR],
    total_submit: u64,
    total_complete: u64,
    cpu: CpuUsage,
    job_runtime_ms: u64,
    /// The job's runtime to the microsecond (fio's figures round it up to
    /// whole milliseconds, which is most of a short job's time).
    job_runtime_us: u64,
    sampler: Sampler,
}

impl JobStats {
    /// Empty statistics for a job starting at `start` (the first bandwidth
    /// window starts there). Allocates the histograms; nothing allocates
    /// afterwards.
    pub fn new(config: StatsConfig, start: u64) -> JobStats {
        let dirs = [
            DirStats::new(&config),
            DirStats::new(&config),
            DirStats::new(&config),
        ];
        let sampler = Sampler::new(config.sample_interval_ms, start);
        JobStats {
            config,
            dirs,
            sync: SyncStats::new(),
            lat_buckets: [0; LAT_N_NR + LAT_U_NR + LAT_M_NR],
            io_depth: [0; MAP_NR],
            submit: [0; MAP_NR],
            complete: [0; MAP_NR],
            total_submit: 0,
            total_complete: 0,
            cpu: CpuUsage::default(),
            job_runtime_ms: 0,
            job_runtime_us: 0,
            sampler,
        }
    }

    /// Counts `n` more short transfers in direction `dir` (resubmitted by the engine).
    pub fn add_short_ios(&mut self, dir: DataDir, n: u64) {
        let d = &mut self.dirs[dir.index()];
        d.short_ios = d.short_ios.saturating_add(n);
    }

    /// Records one completed I/O of `bytes` (fio `io_completed()` +
    /// `account_io_completion()`).
    ///
    /// `slat_ns` is the submission latency, `None` for synchronous engines
    /// (no slat sample is taken and lat = clat, as fio's sync engines print no
    /// slat line). lat = slat + clat. The latency distribution is tallied
    /// from clat, as fio does.
    #[inline]
    pub fn record_io(
        &mut self,
        dir: DataDir,
        bytes: u64,
        short: bool,
        slat_ns: Option<u64>,
        clat_ns: u64,
    ) {
        let d = &mut self.dirs[dir.index()];
        d.io_bytes = d.io_bytes.wrapping_add(bytes);
        d.total_ios += 1;
        d.short_ios += u64::from(short);
        let lat_ns = match slat_ns {
            Some(slat) => {
                if d.lat_hist_is_clat {
                    d.split_lat_hist();
                }
                d.slat.add(slat);
                if let Some(h) = &mut d.slat_hist {
                    h.record(slat);
                }
                let lat_ns = slat.saturating_add(clat_ns);
                d.clat_timed.add(clat_ns);
                d.lat_timed.add(lat_ns);
                lat_ns
            }
            // lat = clat: one update serves both (see `DirStats::plain`)
            None => {
                d.plain.add(clat_ns);
                clat_ns
            }
        };
        d.clat_hist.record(clat_ns);
        if !d.lat_hist_is_clat
            && let Some(h) = &mut d.lat_hist
        {
            h.record(lat_ns);
        }
        self.lat_buckets[lat_bucket(clat_ns)] += 1;
    }

    /// The I/Os of `dir` dropped so far (fio `drop_io_u`, e.g. lost UDP
    /// datagrams): a count, not an increment, as it can also fall (a
    /// datagram taken for lost comes late).
    pub fn set_dropped(&mut self, dir: DataDir, count: u64) {
        self.dirs[dir.index()].drop_ios = count;
    }

    /// Records one completed fsync/fdatasync of latency `lat_ns` (fio
    /// `add_sync_clat_sample()`).
    #[inline]
    pub fn record_sync(&mut self, lat_ns: u64) {
        self.sync.total_ios += 1;
        self.sync.lat.add(lat_ns);
        self.sync.hist.record(lat_ns);
    }

    /// Records one submission of `ios` requests after which `depth` requests
    /// were in flight, the submitted ones included.
    ///
    /// As fio: `ios` is added to the IO-depth bucket of `depth`
    /// (`io_u_mark_depth()`, called by `td_io_commit()` with the number
    /// queued), and the call is counted once in the submit bucket of `ios`
    /// (`io_u_mark_submit()`). For a synchronous engine fio counts every I/O
    /// as one submission of 1 at depth 1 and one completion of 1, so call
    /// `record_submit(1, 1)` and `record_complete(1)` per I/O.
    #[inline]
    pub fn record_submit(&mut self, ios: usize, depth: usize) {
        self.io_depth[depth_bucket(depth)] += ios as u64;
        self.submit[batch_bucket(ios)] += 1;
        self.total_submit += 1;
    }

    /// Records one reap call that returned `ios` completions, 0 included
    /// (fio `io_u_mark_complete()` from `td_io_getevents()`).
    #[inline]
    pub fn record_complete(&mut self, ios: usize) {
        self.complete[batch_bucket(ios)] += 1;
        self.total_complete += 1;
    }

    /// Takes the bandwidth and IOPS samples when the sampling window has
    /// elapsed; otherwise costs one comparison. Call after every completion
    /// batch.
    ///
    /// As fio's `__add_samples()`: for each direction that completed I/O in
    /// the window, one bandwidth sample `bytes * 1000 / window_ms / 1024`
    /// (KiB/s) and one IOPS sample `ios * 1000 / window_ms`, in integers,
    /// over the actual elapsed window; a direction with nothing in the window
    /// gets no sample (so a read-only job never samples writes). The next
    /// window starts now.
    #[inline]
    pub fn sample(&mut self, now: u64) {
        if now < self.sampler.next {
            return;
        }
        self.take_sample(now);
    }

    #[cold]
    fn take_sample(&mut self, now: u64) {
        let Some(interval) = self.sampler.interval else {
            self.sampler.next = next_deadline(now, None);
            return;
        };
        let spent = u128::from(now.saturating_sub(self.sampler.last) / 1_000_000);
        for (i, d) in self.dirs.iter_mut().enumerate() {
            let delta = d.io_bytes.wrapping_sub(self.sampler.last_bytes[i]);
            if delta != 0 {
                let rate = (u128::from(delta) * 1000)
                    .checked_div(spent)
                    .map_or(0, |r| r / 1024);
                d.bw.add(u64::try_from(rate).unwrap_or(u64::MAX));
                self.sampler.last_bytes[i] = d.io_bytes;
            }
            let delta = d.total_ios.wrapping_sub(self.sampler.last_ios[i]);
            if delta != 0 {
                let rate = (u128::from(delta) * 1000).checked_div(spent).unwrap_or(0);
                d.iops.add(u64::try_from(rate).unwrap_or(u64::MAX));
                self.sampler.last_ios[i] = d.total_ios;
            }
        }
        self.sampler.last = now;
        self.sampler.next = next_deadline(now, Some(interval));
    }

    /// Discards everything recorded so far (end of `ramp_time`), keeping the
    /// configuration and the allocations; the next sampling window starts at
    /// `now`.
    pub fn reset(&mut self, now: u64) {
        for d in &mut self.dirs {
            d.reset();
        }
        self.sync.total_ios = 0;
        self.sync.lat = LatStat::new();
        self.sync.hist.reset();
        self.lat_buckets = [0; LAT_N_NR + LAT_U_NR + LAT_M_NR];
        self.io_depth = [0; MAP_NR];
        self.submit = [0; MAP_NR];
        self.complete = [0; MAP_NR];
        self.total_submit = 0;
        self.total_complete = 0;
        self.cpu = CpuUsage::default();
        self.job_runtime_ms = 0;
        self.job_runtime_us = 0;
        self.sampler = Sampler::new(self.config.sample_interval_ms, now);
    }

    /// Ends the job: `runtime` becomes the job runtime and the runtime of
    /// each direction that transferred data (fio sets `runtime[ddir]` only
    /// for directions with `io_bytes`), and `cpu` its CPU usage. No final
    /// partial-window sample is taken (fio takes none either).
    pub fn finish(&mut self, runtime: Duration, cpu: CpuUsage) {
        // fio rounds a direction's runtime up to whole ms (backend.c
        // update_runtime), so a job shorter than 1 ms still reports 1 ms.
        let ms = u64::try_from(runtime.as_micros().div_ceil(1000)).unwrap_or(u64::MAX);
        self.job_runtime_ms = ms;
        self.job_runtime_us = u64::try_from(runtime.as_micros()).unwrap_or(u64::MAX);
        for d in &mut self.dirs {
            if d.io_bytes > 0 {
                d.runtime_ms = ms;
            }
        }
        self.cpu = cpu;
    }

    /// Adds another job's statistics into this one for `group_reporting`,
    /// as fio's `sum_thread_stats()`: I/O and byte counts, distributions,
    /// CPU usage and job runtimes are summed; latency statistics are merged
    /// (parallel Welford) and histograms added; each direction's runtime is
    /// the maximum; the bandwidth and IOPS sample statistics are summed term
    /// by term ([`LatStat::sum_merge`]), so they describe the group's
    /// aggregate rate.
    pub fn merge(&mut self, other: &JobStats) {
        for (d, o) in self.dirs.iter_mut().zip(&other.dirs) {
            d.merge(o);
        }
        self.sync.total_ios = self.sync.total_ios.saturating_add(other.sync.total_ios);
        self.sync.lat.merge(&other.sync.lat);
        self.sync.hist.merge(&other.sync.hist);
        for (a, b) in self.lat_buckets.iter_mut().zip(&other.lat_buckets) {
            *a = a.saturating_add(*b);
        }
        for (dst, src) in [
            (&mut self.io_depth, &other.io_depth),
            (&mut self.submit, &other.submit),
            (&mut self.complete, &other.complete),
        ] {
            for (a, b) in dst.iter_mut().zip(src) {
                *a = a.saturating_add(*b);
            }
        }
        self.total_submit = self.total_submit.saturating_add(other.total_submit);
        self.total_complete = self.total_complete.saturating_add(other.total_complete);
        self.cpu.add(&other.cpu);
        self.job_runtime_ms = self.job_runtime_ms.saturating_add(other.job_runtime_ms);
        self.job_runtime_us = self.job_runtime_us.saturating_add(other.job_runtime_us);
    }

    /// Reads, writes and trims summed into one direction, as fio sums them for
    /// `unified_rw_reporting` (its `mixed` statistics).
    pub fn mixed(&self) -> DirStats {
        let mut mixed = self.dirs[0].clone();
        mixed.merge(&self.dirs[1]);
        mixed.merge(&self.dirs[2]);
        mixed
    }

    /// These statistics with every direction's in the read slot and the
    /// others empty: what `unified_rw_reporting=mixed` reports.
    pub fn into_mixed(mut self) -> JobStats {
        self.dirs[0] = self.mixed();
        self.dirs[1] = DirStats::new(&self.config);
        self.dirs[2] = DirStats::new(&self.config);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &StatsConfig {
        &self.config
    }
    /// Statistics of one direction.
    pub fn dir(&self, dir: DataDir) -> &DirStats {
        &self.dirs[dir.index()]
    }
    /// The sync (fsync/fdatasync) statistics.
    pub fn sync(&self) -> &SyncStats {
        &self.sync
    }
    /// CPU usage (summed over merged jobs).
    pub fn cpu(&self) -> &CpuUsage {
        &self.cpu
    }
    /// Job runtime in microseconds (summed over merged jobs).
    pub fn job_runtime_us(&self) -> u64 {
        self.job_runtime_us
    }

    /// Job runtime in ms (fio `total_run_time`; summed over merged jobs).
    pub fn job_runtime_ms(&self) -> u64 {
        self.job_runtime_ms
    }
    /// User CPU as a percentage of the job runtime (fio: whole ms of CPU
    /// time * 100 / runtime ms).
    pub fn usr_cpu_percent(&self) -> f64 {
        self.cpu_percent(self.cpu.usr_ns)
    }
    /// System CPU as a percentage of the job runtime.
    pub fn sys_cpu_percent(&self) -> f64 {
        self.cpu_percent(self.cpu.sys_ns)
    }
    fn cpu_percent(&self, ns: u64) -> f64 {
        if self.job_runtime_ms == 0 {
            return 0.0;
        }
        (ns / 1_000_000) as f64 * 100.0 / self.job_runtime_ms as f64
    }
    /// Read + write + trim I/Os (fio `ddir_rw_sum(total_io_u)`), the base of
    /// the IO-depth and latency percentages.
    pub fn issued_rw_ios(&self) -> u64 {
        self.dirs
            .iter()
            .fold(0u64, |a, d| a.saturating_add(d.total_ios))
    }
    /// Raw latency-distribution counters: 10 nsec, 10 usec, 12 msec buckets.
    pub fn lat_bucket_counts(&self) -> &[u64; LAT_N_NR + LAT_U_NR + LAT_M_NR] {
        &self.lat_buckets
    }
    /// The latency distribution in percent (fio `stat_calc_lat_n/u/m()`).
    pub fn lat_distribution(&self) -> LatencyDistribution {
        let total = self.issued_rw_ios();
        let (n, rest) = self.lat_buckets.split_at(LAT_N_NR);
        let (u, m) = rest.split_at(LAT_U_NR);
        LatencyDistribution {
            nsec: calc_lat(n, total),
            usec: calc_lat(u, total),
            msec: calc_lat(m, total),
        }
    }
    /// Raw IO-depth counters (I/Os per depth bucket).
    pub fn io_depth_counts(&self) -> &[u64; MAP_NR] {
        &self.io_depth
    }
    /// Raw submit counters (calls per batch-size bucket).
    pub fn submit_counts(&self) -> &[u64; MAP_NR] {
        &self.submit
    }
    /// Raw complete counters (reap calls per batch-size bucket).
    pub fn complete_counts(&self) -> &[u64; MAP_NR] {
        &self.complete
    }
    /// Number of submissions recorded.
    pub fn total_submit(&self) -> u64 {
        self.total_submit
    }
    /// Number of reap calls recorded.
    pub fn total_complete(&self) -> u64 {
        self.total_complete
    }
    /// IO depths in percent of the issued read/write/trim I/Os.
    pub fn io_depth_distribution(&self) -> [f64; MAP_NR] {
        calc_dist(&self.io_depth, self.issued_rw_ios())
    }
    /// Submit batch sizes in percent of the submissions.
    pub fn submit_distribution(&self) -> [f64; MAP_NR] {
        calc_dist(&self.submit, self.total_submit)
    }
    /// Reap batch sizes in percent of the reap calls.
    pub fn complete_distribution(&self) -> [f64; MAP_NR] {
        calc_dist(&self.complete, self.total_complete)
    }
}

/// One direction of a "Run status group" line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDirSummary {
    /// Aggregate bandwidth in bytes/s: total bytes * 1000 / longest runtime.
    pub agg_bw: u64,
    /// Lowest per-job bandwidth in bytes/s.
    pub min_bw: u64,
    /// Highest per-job bandwidth in bytes/s.
    pub max_bw: u64,
    /// Total bytes of the group.
    pub io_bytes: u64,
    /// Shortest job runtime in ms.
    pub min_run_ms: u64,
    /// Longest job runtime in ms.
    pub max_run_ms: u64,
}

/// fio's per-group run statistics (`struct group_run_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSummary {
    /// Per direction; `None` where no job of the group has runtime.
    pub dirs: [Option<GroupDirSummary>; 3],
}

impl GroupSummary {
    /// The summary of one direction, if any job did it.
    pub fn dir(&self, dir: DataDir) -> Option<&GroupDirSummary> {
        self.dirs[dir.index()].as_ref()
    }
}

/// Computes the "Run status group" figures from the statistics of the jobs
/// of one group, as `__show_run_stats()` does from its per-report stats:
/// a direction counts for a job when its runtime is non-zero; per-job
/// bandwidth is `io_bytes * 1000 / runtime_ms`; the aggregate is the group's
/// bytes * 1000 / the longest runtime.
///
/// Pass the unmerged per-job stats for fio's behaviour without
/// `group_reporting`. (With `group_reporting` fio computes these from the
/// merged report, so min and max then both equal the aggregate; pass the
/// merged stats to reproduce that.)
pub fn group_summary(jobs: &[&JobStats]) -> GroupSummary {
    let mut out = GroupSummary::default();
    for dir in DataDir::ALL {
        let mut acc: Option<GroupDirSummary> = None;
        for job in jobs {
            let d = job.dir(dir);
            if d.runtime_ms == 0 {
                continue;
            }
            let bw = d.bw_bytes_per_sec();
            let g = acc.get_or_insert(GroupDirSummary {
                agg_bw: 0,
                min_bw: u64::MAX,
                max_bw: 0,
                io_bytes: 0,
                min_run_ms: u64::MAX,
                max_run_ms: 0,
            });
            g.min_bw = g.min_bw.min(bw);
            g.max_bw = g.max_bw.max(bw);
            g.min_run_ms = g.min_run_ms.min(d.runtime_ms);
            g.max_run_ms = g.max_run_ms.max(d.runtime_ms);
            g.io_bytes = g.io_bytes.saturating_add(d.io_bytes);
        }
        if let Some(g) = &mut acc {
            g.agg_bw = u64::try_from(u128::from(g.io_bytes) * 1000 / u128::from(g.max_run_ms))
                .unwrap_or(u64::MAX);
        }
        out.dirs[dir.index()] = acc;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> u64 {
        n * 1_000_000
    }

    #[test]
    fn record_io_sync_engine_has_no_slat() {
        let t0 = 0u64;
        let mut s = JobStats::new(StatsConfig::default(), t0);
        s.record_io(DataDir::Write, 8192, false, None, 3000);
        s.record_io(DataDir::Write, 8192, true, None, 5000);
        let w = s.dir(DataDir::Write);
        assert_eq!((w.io_bytes(), w.total_ios(), w.short_ios()), (16384, 2, 1));
        assert!(w.slat().is_empty());
        assert_eq!(w.clat().count(), 2);
        assert_eq!(w.lat(), w.clat());
        assert_eq!(w.clat_hist().total(), 2);
        assert!(w.lat_hist().is_none() && w.slat_hist().is_none());
        assert_eq!(s.dir(DataDir::Read).total_ios(), 0);
    }

    #[test]
    fn lat_mirrors_clat_until_the_first_slat() {
        let cfg = StatsConfig {
            lat_percentiles: true,
            ..StatsConfig::default()
        };
        let mut s = JobStats::new(cfg.clone(), 0u64);
        s.record_io(DataDir::Read, 1, false, None, 1000);
        s.record_io(DataDir::Read, 1, false, None, 3000);
        assert_eq!(s.dir(DataDir::Read).lat(), s.dir(DataDir::Read).clat());
        assert_eq!(s.dir(DataDir::Read).lat_hist().unwrap().total(), 2);
        // a mixed stream: the same as recording every lat separately
        s.record_io(DataDir::Read, 1, false, Some(500), 2000);
        s.record_io(DataDir::Read, 1, false, None, 4000);
        let r = s.dir(DataDir::Read);
        let mut want = LatStat::new();
        [1000, 3000, 2500, 4000].iter().for_each(|&v| want.add(v));
        assert_eq!(r.lat(), want);
        assert_eq!(r.clat().count(), 4);
        let mut h = LatHistogram::new();
        [1000, 3000, 2500, 4000].iter().for_each(|&v| h.record(v));
        assert_eq!(r.lat_hist().unwrap(), &h);
        // merging a mirrored job into a split one and the other way round
        let mut sync_job = JobStats::new(cfg.clone(), 0u64);
        sync_job.record_io(DataDir::Read, 1, false, None, 7000);
        let mut a = s.clone();
        a.merge(&sync_job);
        let mut b = sync_job.clone();
        b.merge(&s);
        want.add(7000);
        h.record(7000);
        for m in [&a, &b] {
            let r = m.dir(DataDir::Read);
            assert_eq!(r.lat().count(), 5);
            assert_eq!((r.lat().min(), r.lat().max()), (1000, 7000));
            assert!((r.lat().mean() - want.mean()).abs() < 1e-9);
            assert!((r.lat().stddev() - want.stddev()).abs() < 1e-9);
            assert_eq!(r.lat_hist().unwrap(), &h);
        }
        // two mirrored jobs stay mirrored
        let mut c = sync_job.clone();
        c.merge(&sync_job);
        assert_eq!(c.dir(DataDir::Read).lat(), c.dir(DataDir::Read).clat());
        assert_eq!(c.dir(DataDir::Read).lat_hist().unwrap().total(), 2);
    }

    /// Asserts that `stat` describes `values`: count, min and max exactly,
    /// mean and sample stddev (two-pass) up to floating rounding.
    fn assert_describes(stat: LatStat, values: &[u64]) {
        let n = values.len() as f64;
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
        let ss: f64 = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
        let stddev = (ss / (n - 1.0)).sqrt();
        assert_eq!(stat.count(), values.len() as u64);
        assert_eq!(stat.min(), *values.iter().min().unwrap());
        assert_eq!(stat.max(), *values.iter().max().unwrap());
        assert!(
            (stat.mean() - mean).abs() <= 1e-9 * mean,
            "{stat:?} vs {mean}"
        );
        assert!(
            (stat.stddev() - stddev).abs() <= 1e-9 * stddev,
            "{stat:?} vs {stddev}"
        );
    }

    #[test]
    fn mixed_slat_and_no_slat_samples_give_exact_clat_and_lat() {
        let cfg = StatsConfig {
            lat_percentiles: true,
            slat_percentiles: true,
            ..StatsConfig::default()
        };
        // (slat, clat): mostly without slat, as the adaptive engine's inline
        // requests; the first one without, so lat starts as clat's mirror
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let samples: Vec<(Option<u64>, u64)> = (0..5_000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let clat = 500 + x % 2_000_000;
                let slat = (i > 0 && x.is_multiple_of(8)).then_some(100 + (x >> 20) % 50_000);
                (slat, clat)
            })
            .collect();
        let clats: Vec<u64> = samples.iter().map(|&(_, c)| c).collect();
        let lats: Vec<u64> = samples.iter().map(|&(s, c)| s.unwrap_or(0) + c).collect();
        let slats: Vec<u64> = samples.iter().filter_map(|&(s, _)| s).collect();
        assert!(slats.len() > 100 && slats.len() < samples.len() / 4);
        let mut clat_hist = LatHistogram::new();
        clats.iter().for_each(|&v| clat_hist.record(v));
        let mut lat_hist = LatHistogram::new();
        lats.iter().for_each(|&v| lat_hist.record(v));

        let record = |part: &[(Option<u64>, u64)]| {
            let mut s = JobStats::new(cfg.clone(), 0u64);
            for &(slat, clat) in part {
                s.record_io(DataDir::Read, 4096, false, slat, clat);
            }
            s
        };
        let check = |s: &JobStats| {
            let r = s.dir(DataDir::Read);
            assert_describes(r.clat(), &clats);
            assert_describes(r.lat(), &lats);
            assert_describes(r.slat(), &slats);
            assert_eq!(r.clat_hist(), &clat_hist);
            assert_eq!(r.lat_hist().unwrap(), &lat_hist);
            assert_eq!(r.slat_hist().unwrap().total(), slats.len() as u64);
        };
        check(&record(&samples));
        // group_reporting: one job without any slat merged with a mixed one,
        // in both orders, and two mixed jobs
        let (head, tail) = samples.split_at(1);
        let (a, b) = (record(head), record(tail));
        let mut m = a.clone();
        m.merge(&b);
        check(&m);
        let mut m = b.clone();
        m.merge(&a);
        check(&m);
        let (first, second) = samples.split_at(2_345);
        let mut m = record(first);
        m.merge(&record(second));
        check(&m);
    }

    #[test]
    fn record_io_async_lat_is_slat_plus_clat() {
        let cfg = StatsConfig {
            lat_percentiles: true,
            slat_percentiles: true,
            ..StatsConfig::default()
        };
        let mut s = JobStats::new(cfg, 0u64);
        s.record_io(DataDir::Read, 4096, false, Some(100), 900);
        s.record_io(DataDir::Read, 4096, false, Some(300), 1700);
        let r = s.dir(DataDir::Read);
        assert_eq!((r.slat().min(), r.slat().max()), (100, 300));
        assert_eq!((r.lat().min(), r.lat().max()), (1000, 2000));
        assert_eq!(r.lat().mean(), 1500.0);
        assert_eq!(r.lat_hist().unwrap().total(), 2);
        assert_eq!(r.slat_hist().unwrap().total(), 2);
    }

    #[test]
    fn latency_buckets_follow_fio() {
        // (clat ns, index in the 32 counters)
        let cases = [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 1),
            (4, 2),
            (9, 2),
            (10, 3),
            (49, 4),
            (50, 5),
            (249, 6),
            (250, 7),
            (500, 8),
            (750, 9),
            (999, 9),
            (1_000, 10),
            (1_999, 10),
            (2_000, 11),
            (9_999, 12),
            (999_999, 19),
            (1_000_000, 20),
            (1_999_999, 20),
            (2_000_000, 21),
            (999_999_999, 29),
            (1_000_000_000, 30),
            (1_999_999_999, 30),
            (2_000_000_000, 31),
            (u64::MAX, 31),
        ];
        for (ns, idx) in cases {
            assert_eq!(lat_bucket(ns), idx, "{ns} ns");
        }
    }

    #[test]
    fn lat_distribution_percentages() {
        let mut s = JobStats::new(StatsConfig::default(), 0u64);
        for _ in 0..9_999 {
            s.record_io(DataDir::Read, 512, false, None, 300);
        }
        s.record_io(DataDir::Read, 512, false, None, 5_000_000);
        let d = s.lat_distribution();
        assert!((d.nsec[7] - 99.99).abs() < 1e-9);
        assert_eq!(d.msec[2], 0.01);
        assert_eq!(d.usec, [0.0; 10]);
        // a tiny non-zero share is shown as 0.01%
        for _ in 0..100_000 {
            s.record_io(DataDir::Read, 512, false, None, 300);
        }
        assert_eq!(s.lat_distribution().msec[2], 0.01);
    }

    #[test]
    fn depth_and_batch_buckets_follow_fio() {
        let depth = [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 1),
            (4, 2),
            (7, 2),
            (8, 3),
            (15, 3),
            (16, 4),
            (31, 4),
            (32, 5),
            (63, 5),
            (64, 6),
            (100_000, 6),
        ];
        for (d, i) in depth {
            assert_eq!(depth_bucket(d), i, "depth {d}");
        }
        let batch = [
            (0, 0),
            (1, 1),
            (4, 1),
            (5, 2),
            (8, 2),
            (9, 3),
            (16, 3),
            (17, 4),
            (32, 4),
            (33, 5),
            (64, 5),
            (65, 6),
            (1000, 6),
        ];
        for (n, i) in batch {
            assert_eq!(batch_bucket(n), i, "batch {n}");
        }
    }

    #[test]
    fn submit_complete_and_depth_distributions() {
        let mut s = JobStats::new(StatsConfig::default(), 0u64);
        // the seed's batched io_uring run: submits of 16 and 32 at depth 32
        // and 64, completions of 16
        for _ in 0..100 {
            s.record_submit(16, 32);
            s.record_submit(32, 64);
            s.record_complete(16);
            s.record_complete(16);
            s.record_complete(16);
            for _ in 0..48 {
                s.record_io(DataDir::Write, 8192, false, Some(1000), 10_000);
            }
        }
        s.record_complete(32);
        assert_eq!(
            s.submit_distribution(),
            [0.0, 0.0, 0.0, 50.0, 50.0, 0.0, 0.0]
        );
        let c = s.complete_distribution();
        assert!((c[3] - 30000.0 / 301.0).abs() < 1e-9);
        assert_eq!(c[4], 0.33222591362126247);
        let d = s.io_depth_distribution();
        assert!((d[5] - 100.0 / 3.0).abs() < 1e-9 && (d[6] - 200.0 / 3.0).abs() < 1e-9);
        assert_eq!(s.total_submit(), 200);
        assert_eq!(s.total_complete(), 301);
        // tiny shares show as 0.1%
        let mut t = JobStats::new(StatsConfig::default(), 0u64);
        for _ in 0..5000 {
            t.record_complete(1);
        }
        t.record_complete(0);
        assert_eq!(t.complete_distribution()[0], 0.1);
        // nothing recorded: all zero
        assert_eq!(t.submit_distribution(), [0.0; 7]);
    }

    #[test]
    fn sampling_windows() {
        let t0 = 0u64;
        let mut s = JobStats::new(StatsConfig::default(), t0);
        for _ in 0..1000 {
            s.record_io(DataDir::Read, 4096, false, None, 1000);
        }
        s.sample(t0 + ms(499));
        assert_eq!(s.dir(DataDir::Read).bw_samples().count(), 0);
        s.sample(t0 + ms(500));
        let r = s.dir(DataDir::Read);
        // 4096000 B in 500 ms = 8000 KiB/s, 2000 IOPS
        assert_eq!(r.bw_samples().count(), 1);
        assert_eq!(r.bw_samples().min(), 8000);
        assert_eq!(r.iops_samples().min(), 2000);
        // writes did nothing: no sample
        assert_eq!(s.dir(DataDir::Write).bw_samples().count(), 0);
        // the next window is measured from the actual sample time
        for _ in 0..1000 {
            s.record_io(DataDir::Read, 4096, false, None, 1000);
        }
        s.sample(t0 + ms(999));
        assert_eq!(s.dir(DataDir::Read).bw_samples().count(), 1);
        s.sample(t0 + ms(1250));
        let r = s.dir(DataDir::Read);
        assert_eq!(r.bw_samples().count(), 2);
        // 4096000 B in 750 ms -> 5333 KiB/s (integer division)
        assert_eq!(r.bw_samples().min(), 5333);
        assert_eq!(r.bw_samples().max(), 8000);
        assert_eq!(r.iops_samples().min(), 1333);
        // idle window: no sample for the read direction either
        s.sample(t0 + ms(2000));
        assert_eq!(s.dir(DataDir::Read).bw_samples().count(), 2);
    }

    #[test]
    fn sampling_disabled() {
        let t0 = 0u64;
        let cfg = StatsConfig {
            sample_interval_ms: 0,
            ..StatsConfig::default()
        };
        let mut s = JobStats::new(cfg, t0);
        s.record_io(DataDir::Read, 4096, false, None, 1000);
        s.sample(t0 + 3_600 * 1_000_000_000);
        assert_eq!(s.dir(DataDir::Read).bw_samples().count(), 0);
    }

    #[test]
    fn reset_discards_everything() {
        let t0 = 0u64;
        let cfg = StatsConfig {
            lat_percentiles: true,
            ..StatsConfig::default()
        };
        let mut s = JobStats::new(cfg.clone(), t0);
        s.record_io(DataDir::Read, 4096, false, Some(5), 1000);
        s.record_sync(100);
        s.record_submit(1, 1);
        s.record_complete(1);
        s.set_dropped(DataDir::Read, 3);
        s.sample(t0 + ms(600));
        s.reset(t0 + ms(700));
        let r = s.dir(DataDir::Read);
        assert_eq!((r.io_bytes(), r.total_ios(), r.drop_ios()), (0, 0, 0));
        assert!(r.clat().is_empty() && r.slat().is_empty() && r.bw_samples().is_empty());
        assert!(r.lat().is_empty());
        assert_eq!(r.clat_hist().total(), 0);
        assert_eq!(r.lat_hist().unwrap().total(), 0);
        assert_eq!(s.sync().total_ios(), 0);
        assert_eq!(s.total_submit() + s.total_complete(), 0);
        assert_eq!(s.lat_bucket_counts().iter().sum::<u64>(), 0);
        assert_eq!(s.config(), &cfg);
        // the window restarts at the reset time
        s.record_io(DataDir::Read, 4096, false, None, 1000);
        s.sample(t0 + ms(1100));
        assert_eq!(s.dir(DataDir::Read).bw_samples().count(), 0);
        s.sample(t0 + ms(1200));
        assert_eq!(s.dir(DataDir::Read).bw_samples().min(), 8);
    }

    #[test]
    fn finish_sets_runtime_of_active_directions() {
        let mut s = JobStats::new(StatsConfig::default(), 0u64);
        s.record_io(DataDir::Write, 4096, false, None, 1000);
        let cpu = CpuUsage {
            usr_ns: 250_999_999,
            sys_ns: 1_000_000_000,
            ctx: 7,
            majf: 1,
            minf: 9,
        };
        s.finish(Duration::from_millis(2000), cpu);
        assert_eq!(s.dir(DataDir::Write).runtime_ms(), 2000);
        assert_eq!(s.dir(DataDir::Read).runtime_ms(), 0);
        assert_eq!(s.job_runtime_ms(), 2000);
        assert_eq!(s.usr_cpu_percent(), 12.5);
        assert_eq!(s.sys_cpu_percent(), 50.0);
        assert_eq!(s.dir(DataDir::Write).bw_bytes_per_sec(), 2048);
        assert_eq!(s.dir(DataDir::Write).iops(), 0.5);
    }

    fn job(
        bytes_per_io: u64,
        ios: u64,
        clat: u64,
        runtime_ms: u64,
        bw_samples: &[u64],
    ) -> JobStats {
        let t0 = 0u64;
        let mut s = JobStats::new(StatsConfig::default(), t0);
        for i in 0..ios {
            s.record_io(DataDir::Read, bytes_per_io, false, Some(10), clat + i);
            s.record_submit(1, 1);
            s.record_complete(1);
        }
        s.record_sync(1000);
        s.finish(
            Duration::from_millis(runtime_ms),
            CpuUsage {
                usr_ns: 1_000_000,
                sys_ns: 2_000_000,
                ctx: 1,
                majf: 0,
                minf: 2,
            },
        );
        for &b in bw_samples {
            s.dirs[0].bw.add(b);
        }
        s
    }

    #[test]
    fn merge_follows_sum_thread_stats() {
        let a = job(4096, 100, 1000, 1000, &[100, 200]);
        let b = job(4096, 300, 5000, 1500, &[10, 20, 30]);
        let mut m = a.clone();
        m.merge(&b);
        let r = m.dir(DataDir::Read);
        assert_eq!(r.total_ios(), 400);
        assert_eq!(r.io_bytes(), 400 * 4096);
        assert_eq!(r.runtime_ms(), 1500);
        assert_eq!(r.clat().count(), 400);
        assert_eq!((r.clat().min(), r.clat().max()), (1000, 5299));
        let mut all = LatStat::new();
        (0..100).for_each(|i| all.add(1000 + i));
        (0..300).for_each(|i| all.add(5000 + i));
        assert!((r.clat().mean() - all.mean()).abs() < 1e-9);
        assert!((r.clat().stddev() - all.stddev()).abs() < 1e-9);
        assert_eq!(r.clat_hist().total(), 400);
        // bw samples: pure sum (fio sum_stat(.., true))
        let bw = r.bw_samples();
        assert_eq!((bw.min(), bw.max(), bw.count()), (110, 230, 5));
        assert_eq!(bw.mean(), 150.0 + 20.0);
        assert_eq!(m.job_runtime_ms(), 2500);
        assert_eq!(m.cpu().usr_ns, 2_000_000);
        assert_eq!(m.cpu().minf, 4);
        assert_eq!(m.sync().total_ios(), 2);
        assert_eq!(m.sync().hist().total(), 2);
        assert_eq!(m.total_submit(), 400);
        assert_eq!(m.io_depth_counts()[0], 400);
        assert_eq!(m.lat_bucket_counts().iter().sum::<u64>(), 400);
    }

    #[test]
    fn merge_into_job_without_lat_hist() {
        let mut a = JobStats::new(StatsConfig::default(), 0u64);
        let cfg = StatsConfig {
            lat_percentiles: true,
            ..StatsConfig::default()
        };
        let mut b = JobStats::new(cfg, 0u64);
        b.record_io(DataDir::Read, 1, false, None, 5);
        a.merge(&b);
        assert_eq!(a.dir(DataDir::Read).lat_hist().unwrap().total(), 1);
    }

    #[test]
    fn group_summary_follows_show_run_stats() {
        let a = job(4096, 1000, 1000, 1000, &[]);
        let b = job(4096, 3000, 1000, 2000, &[]);
        let g = group_summary(&[&a, &b]);
        let r = g.dir(DataDir::Read).unwrap();
        assert_eq!(r.io_bytes, 4000 * 4096);
        assert_eq!((r.min_run_ms, r.max_run_ms), (1000, 2000));
        assert_eq!(r.min_bw, 4_096_000);
        assert_eq!(r.max_bw, 6_144_000);
        assert_eq!(r.agg_bw, 8_192_000);
        assert!(g.dir(DataDir::Write).is_none());
        assert!(group_summary(&[]).dirs.iter().all(Option::is_none));
    }

    #[test]
    fn percentile_list_parsing() {
        let mut c = StatsConfig::default();
        c.set_percentile_list("99.999:50:1").unwrap();
        assert_eq!(c.percentile_list, vec![99.999, 50.0, 1.0]);
        assert_eq!(c.percentile_precision, 3);
        c.set_percentile_list("50:90").unwrap();
        assert_eq!(c.percentile_precision, 0);
        assert!(c.set_percentile_list("50:abc").is_err());
        assert!(c.set_percentile_list("101").is_err());
        assert!(c.set_percentile_list("").is_err());
        assert_eq!(StatsConfig::default().percentile_precision, 2);
    }
}
