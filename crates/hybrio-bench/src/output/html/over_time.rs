//! Percentiles over time (`log_hist_msec`): each window's p50, p99 and
//! p99.9 of completion latency, per direction, from hybrio's section of a
//! report (`hybrio.jobs[].percentiles_over_time`).

use super::chart::{self, Chart, Point, Scale, Series, Style, colour};
use crate::stats::DataDir;

/// The percentiles drawn, as the report keys them.
const DRAWN: [(f64, &str); 3] = [(50.0, "p50"), (99.0, "p99"), (99.9, "p99.9")];

/// One window: its end (ms), direction and `(percentile, ns)` pairs.
type WindowPoint = (u64, DataDir, Vec<(f64, u64)>);

/// One job's windows.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Windows {
    pub interval_ms: u64,
    pub points: Vec<WindowPoint>,
}

impl Windows {
    /// From a job's `percentiles_over_time` object; `None` when absent.
    pub(super) fn of(value: &serde_json::Value) -> Option<Windows> {
        let interval_ms = value["interval_ms"].as_u64()?;
        let points = value["windows"]
            .as_array()?
            .iter()
            .filter_map(|w| {
                let dir = DataDir::ALL
                    .into_iter()
                    .find(|d| Some(d.name()) == w["dir"].as_str())?;
                let percentiles = w["percentiles"]
                    .as_object()?
                    .iter()
                    .filter_map(|(p, ns)| Some((p.parse().ok()?, ns.as_u64()?)))
                    .collect();
                Some((w["t_ms"].as_u64()?, dir, percentiles))
            })
            .collect();
        Some(Windows {
            interval_ms,
            points,
        })
    }
}

/// hybrio's per-job windows in a report, handed out to its reported jobs
/// in order; a report that merges a group's jobs into one (group_reporting)
/// gets none for it: percentiles of different jobs' windows do not add.
pub(super) struct PerJob {
    groups: Vec<(i64, Vec<Option<Windows>>)>,
    reported: Vec<(i64, usize)>,
}

impl PerJob {
    /// From a report's `hybrio` section and its `jobs` (group ids).
    pub(super) fn of(hybrio: Option<&serde_json::Value>, reported_groups: &[i64]) -> PerJob {
        let mut groups: Vec<(i64, Vec<Option<Windows>>)> = Vec::new();
        for job in hybrio
            .and_then(|h| h["jobs"].as_array())
            .into_iter()
            .flatten()
        {
            let id = job["groupid"].as_i64().unwrap_or(0);
            let windows = Windows::of(&job["percentiles_over_time"]);
            match groups.iter_mut().find(|g| g.0 == id) {
                Some(g) => g.1.push(windows),
                None => groups.push((id, vec![windows])),
            }
        }
        let mut reported: Vec<(i64, usize)> = Vec::new();
        for &id in reported_groups {
            match reported.iter_mut().find(|g| g.0 == id) {
                Some(g) => g.1 += 1,
                None => reported.push((id, 1)),
            }
        }
        PerJob { groups, reported }
    }

    /// The next reported job of group `id`'s windows.
    pub(super) fn take(&mut self, id: i64) -> Option<Windows> {
        let reported = self.reported.iter().find(|g| g.0 == id)?.1;
        let (_, list) = self.groups.iter_mut().find(|g| g.0 == id)?;
        if list.is_empty() || reported < list.len() {
            return None;
        }
        list.remove(0)
    }
}

/// The charts: one per percentile drawn, the directions as lines.
pub(super) fn charts(windows: &Windows, key: &dyn Fn(DataDir) -> String) -> String {
    let dirs: Vec<DataDir> = DataDir::ALL
        .into_iter()
        .filter(|d| windows.points.iter().any(|p| p.1 == *d))
        .collect();
    let x = Scale::from_zero(windows.points.iter().map(|p| p.0 as f64 / 1000.0));
    let mut out = String::new();
    for (percentile, name) in DRAWN {
        let series: Vec<Series> = dirs
            .iter()
            .map(|&dir| Series {
                key: key(dir),
                colour: colour(dir),
                style: Style::Line,
                points: windows
                    .points
                    .iter()
                    .filter(|p| p.1 == dir)
                    .filter_map(|(t_ms, _, list)| {
                        let ns = list.iter().find(|(p, _)| (p - percentile).abs() < 1e-9)?.1;
                        let (t, us) = (*t_ms as f64 / 1000.0, ns as f64 / 1000.0);
                        Some(Point {
                            x: t,
                            y: us,
                            tip: format!(
                                "{} {name} at {t:.1} s: {} us",
                                dir.name(),
                                chart::number(us)
                            ),
                        })
                    })
                    .collect(),
            })
            .collect();
        if series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        let caption = format!(
            "Completion latency {name} over time, per {} ms window (log_hist_msec)",
            windows.interval_ms
        );
        out.push_str(
            &Chart {
                caption: &caption,
                x: x.clone(),
                y: Scale::from_zero(series.iter().flat_map(|s| s.points.iter().map(|p| p.y))),
                x_title: "time, s",
                y_title: &format!("{name} clat, us"),
                marks: &[],
                legend: &[],
                size: chart::SIZE,
            }
            .draw(&series),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(t_ms: u64, dir: &str, p50: u64, p99: u64) -> serde_json::Value {
        serde_json::json!({"t_ms": t_ms, "dir": dir, "count": 10,
            "percentiles": {"50.000000": p50, "99.000000": p99, "99.900000": p99 + 1}})
    }

    #[test]
    fn each_percentile_is_a_chart_of_its_windows() {
        let doc = serde_json::json!({"interval_ms": 500, "windows": [
            window(500, "read", 40_000, 90_000),
            window(1000, "read", 41_000, 95_000),
            window(1000, "write", 70_000, 300_000),
        ]});
        let windows = Windows::of(&doc).unwrap();
        assert_eq!(windows.points.len(), 3);
        let page = charts(&windows, &|d| format!("job0-{}", d.name()));
        assert_eq!(page.matches("<svg").count(), 3, "{page}");
        assert!(page.contains("read p99 at 1.0 s: 95"), "{page}");
        assert!(page.contains("write p50 at 1.0 s: 70"), "{page}");
        assert!(page.contains("per 500 ms window"), "{page}");
    }

    #[test]
    fn a_merged_group_gets_no_windows() {
        let hybrio = serde_json::json!({"jobs": [
            {"groupid": 0, "percentiles_over_time": {"interval_ms": 100, "windows": []}},
            {"groupid": 0, "percentiles_over_time": {"interval_ms": 100, "windows": []}},
            {"groupid": 1, "percentiles_over_time": {"interval_ms": 200, "windows": []}},
        ]});
        // Group 0 reported as one job, group 1 as its own.
        let mut per_job = PerJob::of(Some(&hybrio), &[0, 1]);
        assert_eq!(per_job.take(0), None);
        assert_eq!(per_job.take(1).map(|w| w.interval_ms), Some(200));
        let mut per_job = PerJob::of(Some(&hybrio), &[0, 0, 1]);
        assert_eq!(per_job.take(0).map(|w| w.interval_ms), Some(100));
    }
}
