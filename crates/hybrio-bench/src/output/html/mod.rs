//! `--output-format=html` and `hybrio report`: one self-contained page a
//! person looks at. Per job (or group): its figures per direction; the
//! completion-latency percentile curve (log latency, the tail spread out as
//! nines, 50/99/99.9/99.99 marked) and histogram, from fio-exact buckets;
//! IOPS, bandwidth and mean latency over time, from the job's windows; the
//! I/O depth distribution; and for the adaptive engine its share of inline
//! requests and its switches over time. For `hybrio compare`, engines side
//! by side (module `compare`).
//!
//! The charts are SVG drawn here (module `chart`): no charting library, no
//! script or style from the network. SVG from Rust keeps the page small
//! and readable without JavaScript and lets the results' markdown embed
//! the same charts (GitHub renders SVG, not scripts); hovering a point shows
//! its value (`<title>`), and the legend's boxes show or hide a series (a
//! few lines of inline script).

mod adaptive;
mod chart;
mod compare;
mod over_time;

use std::fmt::Write;

use adaptive::inline_share;
use chart::{Chart, Point, Scale, Series, Style, colour, escape, legend};

use super::report::{JobReport, RunReport};
use crate::stats::{DEPTH_LABELS, DataDir, Timeline};

/// One job (or group) as the page shows it, from a run or from a JSON
/// document.
struct PageJob {
    title: String,
    detail: String,
    error: i64,
    /// Failed requests of a job that went on after errors, and the first errno.
    failed: Option<(u64, i64)>,
    dirs: Vec<PageDir>,
    /// fio's I/O depth distribution, percent of I/Os at 1, 2, 4 ... >=64.
    depth: Option<Vec<f64>>,
    timeline: Option<Timeline>,
    /// `log_hist_msec`'s windows' percentiles.
    percentiles: Option<over_time::Windows>,
}

/// One direction of a job: its figures and its histogram's buckets
/// (`(value_ns, count)`, fio's json+ `bins`).
struct PageDir {
    dir: DataDir,
    total_ios: u64,
    iops: f64,
    mib_s: f64,
    clat_mean_us: f64,
    buckets: Vec<(u64, u64)>,
}

/// What the page says about the whole run above its jobs.
#[derive(Default)]
struct RunNotes {
    interrupted: bool,
    errors: Vec<String>,
}

impl RunNotes {
    /// From hybrio's own section of a report (absent in fio's).
    fn of(hybrio: Option<&serde_json::Value>) -> RunNotes {
        let Some(h) = hybrio else {
            return RunNotes::default();
        };
        RunNotes {
            interrupted: h["interrupted"].as_bool().unwrap_or(false),
            errors: h["errors"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .filter_map(|e| e.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// A `hybrio compare` document as one SVG (for the results' markdown): per
/// cell each engine's `figure` (iops, p99 or mean latency) against the
/// cell's best, rounds as dots.
pub fn results_svg(doc: &serde_json::Value, figure: &str) -> Result<String, String> {
    compare::results_svg(doc, figure)
}

/// Whether `doc` is a `hybrio compare` document.
pub fn is_comparison(doc: &serde_json::Value) -> bool {
    compare::is_comparison(doc)
}

/// The page for `report`.
pub fn render(report: &RunReport) -> String {
    let groups: Vec<i64> = report.jobs.iter().map(|j| i64::from(j.groupid)).collect();
    let mut per_job = over_time::PerJob::of(report.extra.as_ref(), &groups);
    let jobs: Vec<PageJob> = report
        .jobs
        .iter()
        .map(|job| page_job(job, &mut per_job))
        .collect();
    let notes = RunNotes::of(report.extra.as_ref());
    page(&report.version, &[("".into(), notes, jobs)])
}

/// The page for saved JSON documents (`hybrio report`): a run's (hybrio's
/// or fio's; `json+` has the histograms' buckets, plain `json` the figures
/// only) or `hybrio compare`'s.
pub fn render_documents(documents: &[(String, serde_json::Value)]) -> Result<String, String> {
    let mut runs = Vec::new();
    let mut comparisons = Vec::new();
    for (name, doc) in documents {
        if compare::is_comparison(doc) {
            comparisons.push((name.as_str(), doc));
            continue;
        }
        let list = doc["jobs"].as_array().ok_or_else(|| {
            format!(
                "{name}: not a report of fio, hybrio or hybrio compare (no \"jobs\" or \"cells\")"
            )
        })?;
        let mut timelines = Timelines::of(doc);
        let groups: Vec<i64> = list
            .iter()
            .map(|job| job["groupid"].as_i64().unwrap_or(0))
            .collect();
        let mut per_job = over_time::PerJob::of(doc.get("hybrio"), &groups);
        let jobs = list
            .iter()
            .map(|job| json_job(job, &mut timelines, &mut per_job))
            .collect();
        runs.push((name.clone(), RunNotes::of(doc.get("hybrio")), jobs));
    }
    let version = documents
        .first()
        .and_then(|(_, d)| {
            d["fio version"]
                .as_str()
                .map(str::to_string)
                .or_else(|| d["hybrio_version"].as_str().map(|v| format!("hybrio-{v}")))
        })
        .unwrap_or_else(|| "hybrio".into());
    let mut text = page(&version, &runs);
    if !comparisons.is_empty() {
        let at = text.rfind("<script>").unwrap_or(text.len());
        let sections: String = comparisons
            .iter()
            .enumerate()
            .map(|(i, (name, doc))| compare::section(name, doc, i))
            .collect();
        text.insert_str(at, &sections);
    }
    Ok(text)
}

fn page_job(job: &JobReport, per_job: &mut over_time::PerJob) -> PageJob {
    let stats = &job.stats;
    PageJob {
        title: job.desc.name.clone(),
        detail: format!(
            "group {}, {} job{}, rw={}, ioengine={}, iodepth={}",
            job.groupid,
            job.jobs,
            if job.jobs == 1 { "" } else { "s" },
            job.desc.rw,
            job.desc.ioengine,
            job.desc.iodepth
        ),
        error: i64::from(job.error),
        failed: job
            .errors
            .filter(|e| e.total > 0)
            .map(|e| (e.total, i64::from(e.first))),
        dirs: DataDir::ALL
            .into_iter()
            .filter(|&d| stats.dir(d).total_ios() > 0)
            .map(|dir| {
                let d = stats.dir(dir);
                PageDir {
                    dir,
                    total_ios: d.total_ios(),
                    iops: d.iops(),
                    mib_s: d.bw_bytes_per_sec() as f64 / 1048576.0,
                    clat_mean_us: d.clat().mean() / 1000.0,
                    buckets: d.clat_hist().buckets().collect(),
                }
            })
            .collect(),
        depth: (stats.issued_rw_ios() > 0).then(|| stats.io_depth_distribution().to_vec()),
        timeline: Some(stats.timeline().clone()).filter(|t| !t.is_empty()),
        percentiles: per_job.take(i64::from(job.groupid)),
    }
}

/// hybrio's per-job timelines in a JSON report, handed out to its reported
/// jobs: one each, or all of a group's summed for a group_reporting report.
struct Timelines {
    /// Per group id, the timelines of its jobs in job order.
    groups: Vec<(i64, Vec<Timeline>)>,
    /// Per group id, how many reported jobs the document has.
    reported: Vec<(i64, usize)>,
}

impl Timelines {
    fn of(doc: &serde_json::Value) -> Timelines {
        let mut groups: Vec<(i64, Vec<Timeline>)> = Vec::new();
        for job in doc["hybrio"]["jobs"].as_array().into_iter().flatten() {
            let id = job["groupid"].as_i64().unwrap_or(0);
            let timeline = serde_json::from_value(job["timeline"].clone()).unwrap_or_default();
            match groups.iter_mut().find(|g| g.0 == id) {
                Some(g) => g.1.push(timeline),
                None => groups.push((id, vec![timeline])),
            }
        }
        let mut reported: Vec<(i64, usize)> = Vec::new();
        for job in doc["jobs"].as_array().into_iter().flatten() {
            let id = job["groupid"].as_i64().unwrap_or(0);
            match reported.iter_mut().find(|g| g.0 == id) {
                Some(g) => g.1 += 1,
                None => reported.push((id, 1)),
            }
        }
        Timelines { groups, reported }
    }

    /// The next reported job of group `id`'s timeline.
    fn take(&mut self, id: i64) -> Option<Timeline> {
        let reported = self.reported.iter().find(|g| g.0 == id)?.1;
        let (_, list) = self.groups.iter_mut().find(|g| g.0 == id)?;
        if list.is_empty() {
            return None;
        }
        let timeline = if reported >= list.len() {
            list.remove(0)
        } else {
            // One report for the whole group: its jobs' windows added up.
            let mut sum = list.remove(0);
            for other in list.drain(..) {
                sum.merge(&other);
            }
            sum
        };
        Some(timeline).filter(|t| !t.is_empty())
    }
}

fn json_job(
    job: &serde_json::Value,
    timelines: &mut Timelines,
    per_job: &mut over_time::PerJob,
) -> PageJob {
    let dirs = DataDir::ALL
        .into_iter()
        .filter_map(|dir| {
            let d = &job[dir.name()];
            let total_ios = d["total_ios"].as_u64().unwrap_or(0);
            (total_ios > 0).then(|| {
                let clat = &d["clat_ns"];
                let mut buckets: Vec<(u64, u64)> = clat["bins"]
                    .as_object()
                    .map(|bins| {
                        bins.iter()
                            .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
                            .collect()
                    })
                    .unwrap_or_default();
                buckets.sort_unstable();
                PageDir {
                    dir,
                    total_ios,
                    iops: d["iops"].as_f64().unwrap_or(0.0),
                    mib_s: d["bw_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
                    clat_mean_us: clat["mean"].as_f64().unwrap_or(0.0) / 1000.0,
                    buckets,
                }
            })
        })
        .collect();
    let groupid = job["groupid"].as_i64().unwrap_or(0);
    let depth = job["iodepth_level"].as_object().map(|levels| {
        DEPTH_LABELS
            .iter()
            .map(|l| levels.get(*l).and_then(|v| v.as_f64()).unwrap_or(0.0))
            .collect::<Vec<f64>>()
    });
    let options = &job["job options"];
    let option = |name: &str| options[name].as_str().map(|v| format!(", {name}={v}"));
    PageJob {
        title: job["jobname"].as_str().unwrap_or("job").to_string(),
        detail: format!(
            "group {groupid}{}{}{}",
            option("rw").unwrap_or_default(),
            option("ioengine").unwrap_or_default(),
            option("iodepth").unwrap_or_default()
        ),
        error: job["error"].as_i64().unwrap_or(0),
        failed: job["total_err"]
            .as_u64()
            .filter(|&n| n > 0)
            .map(|n| (n, job["first_error"].as_i64().unwrap_or(0))),
        dirs,
        depth: depth.filter(|d| d.iter().any(|&p| p > 0.0)),
        timeline: timelines.take(groupid),
        percentiles: per_job.take(groupid),
    }
}

/// The page: per run (a run, or a saved document) its notes and jobs.
fn page(version: &str, runs: &[(String, RunNotes, Vec<PageJob>)]) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{} report</title>\n<style>{STYLE}</style></head>\n<body>\n<h1>{} report</h1>\n",
        escape(version),
        escape(version)
    );
    let mut index = 0;
    for (name, notes, jobs) in runs {
        if !name.is_empty() {
            let _ = writeln!(page, "<h2 class=\"document\">{}</h2>", escape(name));
        }
        if notes.interrupted {
            page.push_str(
                "<p class=\"error\">Interrupted: the figures cover the run until the interrupt.</p>\n",
            );
        }
        for error in &notes.errors {
            let _ = writeln!(page, "<p class=\"error\">{}</p>", escape(error));
        }
        for job in jobs {
            job_section(&mut page, job, index);
            index += 1;
        }
    }
    let _ = write!(page, "<script>{SCRIPT}</script>\n</body></html>\n");
    page
}

/// The value at percentile `p` of `buckets`, ranked as fio ranks it.
fn percentile(buckets: &[(u64, u64)], p: f64) -> f64 {
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    let rank = crate::stats::fio_percentile_rank(p, total);
    let mut sum = 0;
    for &(value, count) in buckets {
        sum += count;
        if sum >= rank {
            return value as f64;
        }
    }
    0.0
}

fn job_section(page: &mut String, job: &PageJob, index: usize) {
    let _ = write!(
        page,
        "<section class=\"job\" id=\"job{index}\">\n<h2>{} <small>({})</small></h2>\n",
        escape(&job.title),
        escape(&job.detail)
    );
    if job.error != 0 {
        let _ = writeln!(
            page,
            "<p class=\"error\">error {}: {}</p>",
            job.error,
            escape(&errno_text(job.error))
        );
    }
    if let Some((count, first)) = job.failed {
        let _ = writeln!(
            page,
            "<p class=\"error\">{count} requests failed (continue_on_error), the first with errno {first}</p>"
        );
    }
    page.push_str(
        "<table><tr><th>direction</th><th>I/Os</th><th>IOPS</th><th>MiB/s</th>\
         <th>clat mean us</th><th>p50 us</th><th>p99 us</th><th>p99.9 us</th></tr>\n",
    );
    for d in &job.dirs {
        let at = |p: f64| percentile(&d.buckets, p) / 1000.0;
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.1}</td><td>{:.2}</td><td>{:.2}</td>\
             <td>{:.2}</td><td>{:.2}</td></tr>",
            d.dir.name(),
            d.total_ios,
            d.iops,
            d.mib_s,
            d.clat_mean_us,
            at(50.0),
            at(99.0),
            at(99.9)
        );
    }
    page.push_str("</table>\n");
    let key = |dir: DataDir| format!("job{index}-{}", dir.name());
    let entries: Vec<(String, &str, &'static str)> = job
        .dirs
        .iter()
        .map(|d| (key(d.dir), d.dir.name(), colour(d.dir)))
        .collect();
    if !entries.is_empty() {
        legend(page, &entries);
    }
    let with_buckets: Vec<&PageDir> = job.dirs.iter().filter(|d| !d.buckets.is_empty()).collect();
    if with_buckets.is_empty() && !job.dirs.is_empty() {
        page.push_str("<p>No latency histogram (a JSON report needs json+'s bins).</p>\n");
    } else if !with_buckets.is_empty() {
        page.push_str(&percentile_chart(&with_buckets, &key));
        page.push_str(&histogram_chart(&with_buckets, &key));
    }
    if let Some(timeline) = &job.timeline {
        page.push_str(&over_time(timeline, &key));
        if let Some(chart) = adaptive_over_time(timeline, index) {
            page.push_str(&chart);
        }
    }
    if let Some(windows) = &job.percentiles {
        page.push_str(&over_time::charts(windows, &key));
    }
    if let Some(depth) = &job.depth {
        page.push_str(&depth_chart(depth, index));
    }
    page.push_str("</section>\n");
}

/// What an errno means, in the system's words.
fn errno_text(errno: i64) -> String {
    let text = std::io::Error::from_raw_os_error(errno as i32).to_string();
    // Rust adds " (os error N)", which the page already says.
    match text.rfind(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The completion-latency percentile curve: each bucket's cumulative share
/// against its latency.
fn percentile_chart(dirs: &[&PageDir], key: &dyn Fn(DataDir) -> String) -> String {
    let series: Vec<Series> = dirs
        .iter()
        .map(|d| {
            let total = d.buckets.iter().map(|b| b.1).sum::<u64>().max(1) as f64;
            let mut cumulative = 0u64;
            let points = d
                .buckets
                .iter()
                .map(|&(value, count)| {
                    cumulative += count;
                    let pct = 100.0 * cumulative as f64 / total;
                    Point {
                        x: value as f64,
                        y: pct,
                        tip: format!(
                            "{} {}: {pct:.4}% at or below",
                            d.dir.name(),
                            chart::latency(value as f64)
                        ),
                    }
                })
                .collect();
            Series {
                key: key(d.dir),
                colour: colour(d.dir),
                style: Style::Line,
                points,
            }
        })
        .collect();
    Chart {
        caption: "Completion latency percentiles: the share of I/Os at or below each latency, the tail spread out in nines",
        x: latency_scale(dirs),
        y: Scale::Nines,
        x_title: "completion latency (log scale)",
        y_title: "percentile",
        marks: &[(50.0, "p50"), (99.0, "p99"), (99.9, "p99.9"), (99.99, "p99.99")],
        legend: &[],
        size: chart::SIZE,
    }
    .draw(&series)
}

fn latency_scale(dirs: &[&PageDir]) -> Scale {
    Scale::latency(
        dirs.iter()
            .flat_map(|d| d.buckets.iter().map(|b| b.0 as f64)),
    )
}

/// The latency histogram: each of fio's buckets as a bar at its latency.
fn histogram_chart(dirs: &[&PageDir], key: &dyn Fn(DataDir) -> String) -> String {
    let series: Vec<Series> = dirs
        .iter()
        .map(|d| Series {
            key: key(d.dir),
            colour: colour(d.dir),
            style: Style::Bars,
            points: d
                .buckets
                .iter()
                .map(|&(value, count)| Point {
                    x: value as f64,
                    y: count as f64,
                    tip: format!(
                        "{} {}: {count} I/Os",
                        d.dir.name(),
                        chart::latency(value as f64)
                    ),
                })
                .collect(),
        })
        .collect();
    Chart {
        caption: "Completion latency histogram: the I/Os in each of fio's buckets",
        x: latency_scale(dirs),
        y: Scale::from_zero(
            dirs.iter()
                .flat_map(|d| d.buckets.iter().map(|b| b.1 as f64)),
        ),
        x_title: "completion latency (log scale)",
        y_title: "I/Os",
        marks: &[],
        legend: &[],
        size: chart::SIZE,
    }
    .draw(&series)
}

/// Each window's length in seconds (the first from the start).
fn window_seconds(timeline: &Timeline) -> Vec<f64> {
    let mut last = 0;
    timeline
        .points
        .iter()
        .map(|p| {
            let spent = p.t_ms.saturating_sub(last).max(1);
            last = p.t_ms;
            spent as f64 / 1000.0
        })
        .collect()
}

/// IOPS, bandwidth and mean completion latency per window, per direction.
fn over_time(timeline: &Timeline, key: &dyn Fn(DataDir) -> String) -> String {
    let seconds = window_seconds(timeline);
    let dirs: Vec<DataDir> = DataDir::ALL
        .into_iter()
        .filter(|d| timeline.points.iter().any(|p| p.ios[d.index()] > 0))
        .collect();
    let x = Scale::from_zero(timeline.points.iter().map(|p| p.t_ms as f64 / 1000.0));
    let figure = |value: &dyn Fn(usize, usize) -> Option<f64>, unit: &str| -> Vec<Series> {
        dirs.iter()
            .map(|&dir| Series {
                key: key(dir),
                colour: colour(dir),
                style: Style::Line,
                points: (0..timeline.points.len())
                    .filter_map(|i| {
                        let v = value(i, dir.index())?;
                        let t = timeline.points[i].t_ms as f64 / 1000.0;
                        Some(Point {
                            x: t,
                            y: v,
                            tip: format!("{} at {t:.1} s: {} {unit}", dir.name(), chart::number(v)),
                        })
                    })
                    .collect(),
            })
            .collect()
    };
    let iops = figure(
        &|i, d| Some(timeline.points[i].ios[d] as f64 / seconds[i]),
        "IOPS",
    );
    let bandwidth = figure(
        &|i, d| Some(timeline.points[i].bytes[d] as f64 / seconds[i] / 1048576.0),
        "MiB/s",
    );
    let latency = figure(
        &|i, d| {
            let p = &timeline.points[i];
            (p.clat_count[d] > 0).then(|| p.clat_sum_ns[d] as f64 / p.clat_count[d] as f64 / 1000.0)
        },
        "us",
    );
    let values = |s: &[Series]| -> Vec<f64> {
        s.iter()
            .flat_map(|s| s.points.iter().map(|p| p.y))
            .collect()
    };
    let window = format!("per {} ms window", timeline.interval_ms);
    let mut out = String::new();
    for (caption, series, y_title) in [
        (format!("IOPS over time, {window}"), &iops, "IOPS"),
        (
            format!("Bandwidth over time, {window}"),
            &bandwidth,
            "MiB/s",
        ),
        (
            format!("Mean completion latency over time, {window}"),
            &latency,
            "mean clat, us",
        ),
    ] {
        if series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        out.push_str(
            &Chart {
                caption: &caption,
                x: x.clone(),
                y: Scale::from_zero(values(series).into_iter()),
                x_title: "time, s",
                y_title,
                marks: &[],
                legend: &[],
                size: chart::SIZE,
            }
            .draw(series),
        );
    }
    out
}

/// The adaptive engine's inline share and switches over time.
fn adaptive_over_time(timeline: &Timeline, index: usize) -> Option<String> {
    let (inline, switches) = inline_share(timeline);
    if inline.is_empty() {
        return None;
    }
    let mut out = String::new();
    legend(
        &mut out,
        &[
            (format!("job{index}-inline"), "inline share", "#9467bd"),
            (format!("job{index}-switches"), "switches", "#ff7f0e"),
        ],
    );
    out.push_str(
        &Chart {
            caption: "The adaptive engine over time: the share of requests it did inline in each window (the rest went asynchronous); a bar where a class of requests switched its choice",
            x: Scale::from_zero(timeline.points.iter().map(|p| p.t_ms as f64 / 1000.0)),
            y: Scale::Linear { min: 0.0, max: 100.0 },
            x_title: "time, s",
            y_title: "inline, %",
            marks: &[],
            legend: &[],
            size: chart::SIZE,
        }
        .draw(&[
            Series {
                key: format!("job{index}-inline"),
                colour: "#9467bd",
                style: Style::Line,
                points: inline,
            },
            Series {
                key: format!("job{index}-switches"),
                colour: "#ff7f0e",
                style: Style::Bars,
                points: switches,
            },
        ]),
    );
    Some(out)
}

/// fio's I/O depth distribution: the share of I/Os issued at each depth.
fn depth_chart(depth: &[f64], index: usize) -> String {
    let points = depth
        .iter()
        .zip(DEPTH_LABELS)
        .enumerate()
        .map(|(i, (&pct, label))| Point {
            x: i as f64,
            y: pct,
            tip: format!("depth {label}: {pct:.1}% of I/Os"),
        })
        .collect();
    Chart {
        caption: "I/O depth distribution: the share of I/Os issued with this many in flight (fio's IO depths)",
        x: Scale::Bands(DEPTH_LABELS.iter().map(|l| l.to_string()).collect()),
        y: Scale::Linear { min: 0.0, max: 100.0 },
        x_title: "requests in flight",
        y_title: "I/Os, %",
        marks: &[],
        legend: &[],
        size: chart::SIZE,
    }
    .draw(&[Series {
        key: format!("job{index}-depth"),
        colour: "#7f7f7f",
        style: Style::Bars,
        points,
    }])
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:1400px}\
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
th{background:#f4f4f4}svg text{font-size:11px;fill:#444}.frame{fill:none;stroke:#999}\
.grid{stroke:#eee}.mark{stroke:#bbb;stroke-dasharray:3 3}figure{margin:0.5em 1em 0.5em 0;display:inline-block}\
figcaption{font-size:13px;max-width:640px}.error{color:#b00}section{border-top:1px solid #ddd;margin-top:1em}";

/// The legend's boxes show or hide the series of their key in every chart.
const SCRIPT: &str = "document.querySelectorAll('.legend input').forEach(function(box){\
box.addEventListener('change',function(){\
document.querySelectorAll('g.series[data-key=\"'+box.dataset.key+'\"]')\
.forEach(function(g){g.style.display=box.checked?'':'none';});});});";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_holds_every_bucket_and_fetches_nothing() {
        let report = super::super::testutil::report(crate::stats::StatsConfig::default());
        let page = render(&report);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
        let job = &report.jobs[0];
        for dir in DataDir::ALL
            .into_iter()
            .filter(|&d| job.stats.dir(d).total_ios() > 0)
        {
            let buckets = job.stats.dir(dir).clat_hist().buckets().count();
            assert!(buckets > 0);
            // One series per chart per direction, each holding every bucket.
            let marker = format!("data-key=\"job0-{}\" data-points=\"{buckets}\"", dir.name());
            assert_eq!(page.matches(&marker).count(), 2, "{}", dir.name());
        }
        assert!(page.contains("<title>read "));
        // Two latency charts, three over time (a point per window) and the
        // depth distribution.
        let windows = job.stats.timeline().points.len();
        assert!(windows > 0);
        assert_eq!(page.matches("<svg").count(), 6 * report.jobs.len());
        assert!(page.contains(&format!("data-key=\"job0-read\" data-points=\"{windows}\"")));
        assert!(page.contains("IOPS over time"));
    }
}
