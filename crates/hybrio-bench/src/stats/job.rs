//! One job's statistics ([`JobStats`]), fio's `struct thread_stat`, and the
//! distributions and CPU figures that go with them. Apart from `mod.rs`,
//! which gathers the statistics' parts, as the group figures (`group.rs`)
//! are made from these.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::config::StatsConfig;
use super::dir::{DirStats, SyncStats};
use super::latstat::LatStat;
use super::timeline::{PathPoint, Timeline, TimelinePoint};

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

/// fio's `latency_target` outcome: the depth the search ended at, and what
/// it searched for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyTargetReport {
    /// The queue depth reached (fio's `latency_depth`).
    pub depth: u32,
    /// `latency_target`, in ns.
    pub target_ns: u64,
    /// `latency_window`, in us.
    pub window_us: u64,
    /// `latency_percentile`.
    pub percentile: f64,
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

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Sampler {
    /// Window in ns; `None` when sampling is off.
    interval: Option<u64>,
    next: u64,
    last: u64,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
    /// Start of the measured time, the timeline's zero.
    origin: u64,
    last_clat_count: [u64; 3],
    last_clat_sum: [f64; 3],
    /// The adaptive engine's path counts as last noted.
    paths: Option<PathPoint>,
    timeline: Timeline,
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
            origin: now,
            last_clat_count: [0; 3],
            last_clat_sum: [0.0; 3],
            paths: None,
            timeline: Timeline::new(interval_ms),
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
pub(super) fn depth_bucket(depth: usize) -> usize {
    let d = depth.max(1);
    ((usize::BITS - 1 - d.leading_zeros()) as usize).min(MAP_NR - 1)
}

/// Index of the submit/complete bucket for a batch of `n` (fio
/// `__io_u_mark_map()`: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64).
#[inline]
pub(super) fn batch_bucket(n: usize) -> usize {
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
pub(super) fn lat_bucket(ns: u64) -> usize {
    let (base, v) = if ns < 1_000 {
        (0, ns)
    } else if ns < 1_000_000 {
        (LAT_N_NR, ns / 1_000)
    } else {
        (LAT_N_NR + LAT_U_NR, ns / 1_000_000)
    };
    base + match LAT_STEPS.get(v as usize) {
        Some(&steps) => usize::from(steps),
        None => LAT_THRESHOLDS.len(),
    }
}

/// For each value below the last threshold, how many of [`LAT_THRESHOLDS`]
/// it reaches: one load on every completion's path instead of eleven
/// comparisons.
static LAT_STEPS: [u8; LAT_THRESHOLDS[LAT_THRESHOLDS.len() - 1] as usize] = {
    let mut steps = [0u8; LAT_THRESHOLDS[LAT_THRESHOLDS.len() - 1] as usize];
    let mut v = 0;
    while v < steps.len() {
        let mut reached = 0;
        let mut i = 0;
        while i < LAT_THRESHOLDS.len() {
            if v as u64 >= LAT_THRESHOLDS[i] {
                reached += 1;
            }
            i += 1;
        }
        steps[v] = reached;
        v += 1;
    }
    steps
};

/// Percentages of `total`, a non-zero bucket showing at least `floor`:
/// fio's `stat_calc_dist()` with a floor of 0.1, its `stat_calc_lat()` with
/// 0.01.
fn percentages<const N: usize>(counts: &[u64], total: u64, floor: f64) -> [f64; N] {
    let mut out = [0.0; N];
    if total == 0 {
        return out;
    }
    for (o, &c) in out.iter_mut().zip(counts) {
        *o = c as f64 / total as f64 * 100.0;
        if *o < floor && c > 0 {
            *o = floor;
        }
    }
    out
}

/// All statistics of one job (or of a group of jobs merged for
/// `group_reporting`): fio's `struct thread_stat`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobStats {
    config: StatsConfig,
    pub(super) dirs: [DirStats; 3],
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
    #[inline(always)]
    pub fn record_io(
        &mut self,
        dir: DataDir,
        bytes: u64,
        short: bool,
        slat_ns: Option<u64>,
        clat_ns: u64,
    ) {
        if self.config.disabled.any() {
            self.record_io_reduced(dir, bytes, short, slat_ns, clat_ns);
            return;
        }
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

    /// [`JobStats::record_io`] with some latencies not measured: each kept
    /// one is recorded on its own (the one-update shortcut for lat = clat
    /// would fill a disabled one).
    #[cold]
    fn record_io_reduced(
        &mut self,
        dir: DataDir,
        bytes: u64,
        short: bool,
        slat_ns: Option<u64>,
        clat_ns: u64,
    ) {
        let off = self.config.disabled;
        let d = &mut self.dirs[dir.index()];
        d.io_bytes = d.io_bytes.wrapping_add(bytes);
        d.total_ios += 1;
        d.short_ios += u64::from(short);
        d.split_lat_hist();
        if let Some(slat) = slat_ns
            && !off.slat
        {
            d.slat.add(slat);
            if let Some(h) = &mut d.slat_hist {
                h.record(slat);
            }
        }
        if !off.clat {
            d.clat_timed.add(clat_ns);
            d.clat_hist.record(clat_ns);
            self.lat_buckets[lat_bucket(clat_ns)] += 1;
        }
        if !off.lat {
            let lat_ns = slat_ns.unwrap_or(0).saturating_add(clat_ns);
            d.lat_timed.add(lat_ns);
            if let Some(h) = &mut d.lat_hist {
                h.record(lat_ns);
            }
        }
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
        let mut point = TimelinePoint {
            t_ms: now.saturating_sub(self.sampler.origin) / 1_000_000,
            paths: self.sampler.paths,
            ..TimelinePoint::default()
        };
        for (i, d) in self.dirs.iter_mut().enumerate() {
            point.ios[i] = d.total_ios.wrapping_sub(self.sampler.last_ios[i]);
            point.bytes[i] = d.io_bytes.wrapping_sub(self.sampler.last_bytes[i]);
            let clat = d.clat();
            let sum = clat.mean() * clat.count() as f64;
            point.clat_count[i] = clat.count().saturating_sub(self.sampler.last_clat_count[i]);
            point.clat_sum_ns[i] = (sum - self.sampler.last_clat_sum[i]).max(0.0).round() as u64;
            self.sampler.last_clat_count[i] = clat.count();
            self.sampler.last_clat_sum[i] = sum;
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
        self.sampler.timeline.push(point);
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
        // The adaptive engine's counts go on from the ramp: the timeline
        // starts from where they stood.
        let paths = self.sampler.paths;
        self.sampler = Sampler::new(self.config.sample_interval_ms, now);
        self.sampler.paths = paths;
        self.sampler.timeline.paths_at_start = paths;
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
        self.sampler.timeline.merge(&other.sampler.timeline);
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

    /// The job's windows so far (empty when bandwidth sampling is off).
    pub fn timeline(&self) -> &Timeline {
        &self.sampler.timeline
    }

    /// Notes the adaptive engine's path counts so far: the next window's
    /// point carries them (called off the hot path, when the job publishes
    /// its progress).
    pub fn note_paths(&mut self, paths: PathPoint) {
        self.sampler.paths = Some(paths);
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
            nsec: percentages(n, total, 0.01),
            usec: percentages(u, total, 0.01),
            msec: percentages(m, total, 0.01),
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
        percentages(&self.io_depth, self.issued_rw_ios(), 0.1)
    }
    /// Submit batch sizes in percent of the submissions.
    pub fn submit_distribution(&self) -> [f64; MAP_NR] {
        percentages(&self.submit, self.total_submit, 0.1)
    }
    /// Reap batch sizes in percent of the reap calls.
    pub fn complete_distribution(&self) -> [f64; MAP_NR] {
        percentages(&self.complete, self.total_complete, 0.1)
    }
}
