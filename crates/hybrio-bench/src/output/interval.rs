//! `--status-interval`'s figures of the interval itself: fio reports only
//! what each job did from its start, so a slowdown late in a long run hides
//! in the average. Each status report of hybrio's JSON also gives, per job
//! and direction, what the job did since the report before: its I/Os,
//! bytes, IOPS, bandwidth, and the completion latency percentiles of those
//! I/Os alone (the difference of fio's histograms, by fio's rules).

use crate::stats::{DataDir, JobStats};

/// A job's figures of the interval between `before` (its figures at the
/// last report; none: from its start) and `now`, `seconds` long.
pub fn figures(
    now: &JobStats,
    before: Option<&JobStats>,
    seconds: f64,
    percentile_list: &[f64],
) -> serde_json::Value {
    let mut object = serde_json::Map::new();
    object.insert("seconds".into(), seconds.into());
    for dir in DataDir::ALL {
        let (d, earlier) = (now.dir(dir), before.map(|b| b.dir(dir)));
        let ios = d.total_ios() - earlier.map_or(0, |e| e.total_ios().min(d.total_ios()));
        let bytes = d.io_bytes() - earlier.map_or(0, |e| e.io_bytes().min(d.io_bytes()));
        let latencies = match earlier {
            Some(e) => d.clat_hist().since(e.clat_hist()),
            None => d.clat_hist().clone(),
        };
        let percentiles: serde_json::Map<String, serde_json::Value> = latencies
            .percentiles(percentile_list)
            .into_iter()
            .map(|(p, ns)| (format!("{p:.6}"), ns.into()))
            .collect();
        let per_second = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        object.insert(
            dir.name().into(),
            serde_json::json!({
                "total_ios": ios,
                "io_bytes": bytes,
                "iops": per_second(ios),
                "bw_bytes": per_second(bytes),
                "clat_ns": {"percentile": percentiles},
            }),
        );
    }
    serde_json::Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::StatsConfig;

    #[test]
    fn an_interval_has_its_own_ios_and_percentiles() {
        let mut stats = JobStats::new(StatsConfig::default(), 0);
        for _ in 0..100 {
            stats.record_io(DataDir::Read, 4096, false, None, 10_000);
        }
        let before = stats.clone();
        // The interval's 50 reads took 1 ms each: its percentiles are theirs
        // alone, where the job's from its start mix both.
        for _ in 0..50 {
            stats.record_io(DataDir::Read, 4096, false, None, 1_000_000);
        }
        let interval = figures(&stats, Some(&before), 0.5, &[50.0]);
        assert_eq!(interval["read"]["total_ios"], 50);
        assert_eq!(interval["read"]["io_bytes"], 50 * 4096);
        assert_eq!(interval["read"]["iops"], 100.0);
        let p50 = interval["read"]["clat_ns"]["percentile"]["50.000000"]
            .as_u64()
            .unwrap();
        assert!((990_000..=1_010_000).contains(&p50), "{p50}");
        let whole = figures(&stats, None, 1.5, &[50.0]);
        assert_eq!(whole["read"]["total_ios"], 150);
        let p50 = whole["read"]["clat_ns"]["percentile"]["50.000000"]
            .as_u64()
            .unwrap();
        assert!(p50 < 11_000, "{p50}");
        assert_eq!(interval["write"]["total_ios"], 0);
    }
}
