use std::time::Duration;

use super::job::{batch_bucket, depth_bucket, lat_bucket};
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

/// Every latency up to 3 s lands where counting fio's thresholds puts it
/// (`io_u_mark_latency()`), at each of the three scales.
#[test]
fn lat_bucket_counts_the_thresholds_a_latency_reaches() {
    const THRESHOLDS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];
    let counted = |ns: u64| {
        let (base, v) = match ns {
            0..1_000 => (0, ns),
            1_000..1_000_000 => (10, ns / 1_000),
            _ => (20, ns / 1_000_000),
        };
        base + THRESHOLDS.iter().filter(|&&t| v >= t).count()
    };
    let values = (0..3_000u64).flat_map(|v| {
        [
            v,
            v * 1_000,
            v * 1_000 + 999,
            v * 1_000_000,
            v * 1_000_000 + 999_999,
        ]
    });
    for ns in values {
        assert_eq!(lat_bucket(ns), counted(ns), "{ns} ns");
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

fn job(bytes_per_io: u64, ios: u64, clat: u64, runtime_ms: u64, bw_samples: &[u64]) -> JobStats {
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

#[test]
fn a_latency_not_measured_stays_empty_and_the_others_are_kept() {
    let cfg = StatsConfig {
        disabled: DisabledLatencies {
            slat: false,
            clat: true,
            lat: false,
        },
        ..StatsConfig::default()
    };
    let mut s = JobStats::new(cfg, 0u64);
    s.record_io(DataDir::Read, 4096, false, Some(100), 1000);
    s.record_io(DataDir::Read, 4096, false, None, 3000);
    let d = s.dir(DataDir::Read);
    assert_eq!(d.total_ios(), 2);
    assert_eq!(d.clat().count(), 0);
    assert_eq!(d.clat_hist().total(), 0);
    assert_eq!(d.slat().count(), 1);
    assert_eq!(d.lat().count(), 2);
    assert_eq!(d.lat().max(), 3000);
}

#[test]
fn a_job_s_statistics_cross_a_process_boundary_whole() {
    // What another process (an MPI rank) sends: every count, sum and bucket
    // comes back as it was, so that merging there equals merging here.
    let cfg = StatsConfig {
        lat_percentiles: true,
        slat_percentiles: true,
        ..StatsConfig::default()
    };
    let mut a = JobStats::new(cfg, 0u64);
    for i in 0..500u64 {
        a.record_io(
            DataDir::Read,
            4096,
            i % 7 == 0,
            Some(300 + i),
            10_000 + i * 37,
        );
        a.record_io(DataDir::Write, 8192, false, None, 20_000 + i * 91);
    }
    a.record_sync(1_234_567);
    let b = job(4096, 300, 5000, 1500, &[10, 20, 30]);
    let text = serde_json::to_string(&a).unwrap();
    let back: JobStats = serde_json::from_str(&text).unwrap();
    assert_eq!(format!("{back:?}"), format!("{a:?}"));
    let mut here = a.clone();
    here.merge(&b);
    let mut there = back;
    there.merge(&b);
    assert_eq!(format!("{there:?}"), format!("{here:?}"));
    let r = there.dir(DataDir::Read);
    assert_eq!((r.total_ios(), r.clat_hist().total()), (800, 800));
    let list = [50.0, 99.0, 99.99];
    assert_eq!(
        r.clat_hist().percentiles(&list),
        here.dir(DataDir::Read).clat_hist().percentiles(&list)
    );
}
