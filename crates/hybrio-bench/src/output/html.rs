//! `--output-format=html`: one self-contained page a person looks at. Per
//! job (or group), its figures per direction and two pictures drawn here as
//! SVG from fio-exact histograms: the completion-latency percentile curve on
//! a logarithmic latency axis (50, 99, 99.9, 99.99 marked) and the latency
//! histogram. Nothing is fetched when the page is viewed: no script or
//! style from the network, no charting library (SVG from Rust keeps the
//! file small and the page readable without JavaScript); hovering a point
//! shows its value (SVG `<title>`), and the legend's boxes show or hide a
//! direction (a few lines of inline script).

use std::fmt::Write;

use super::{JobReport, RunReport};
use crate::stats::DataDir;

/// Drawing area of a chart, in pixels.
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 260.0;
const MARGIN: f64 = 48.0;

/// Each direction's colour.
fn colour(dir: DataDir) -> &'static str {
    match dir {
        DataDir::Read => "#1f77b4",
        DataDir::Write => "#d62728",
        DataDir::Trim => "#2ca02c",
    }
}

/// One job (or group) as the page shows it, from a run or from a JSON
/// document.
struct PageJob {
    title: String,
    detail: String,
    error: i64,
    dirs: Vec<PageDir>,
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

/// The page for `report`.
pub fn render(report: &RunReport) -> String {
    let jobs: Vec<PageJob> = report.jobs.iter().map(page_job).collect();
    page(&report.version, &jobs)
}

/// The page for saved JSON documents (`hybrio report`): hybrio's or fio's
/// `json+`, whose `bins` the charts are drawn from (plain `json` has the
/// figures but no histogram).
pub fn render_documents(documents: &[(String, serde_json::Value)]) -> Result<String, String> {
    let mut jobs = Vec::new();
    for (name, doc) in documents {
        let list = doc["jobs"]
            .as_array()
            .ok_or_else(|| format!("{name}: not fio's or hybrio's JSON (no \"jobs\" list)"))?;
        for job in list {
            jobs.push(json_job(name, job));
        }
    }
    let version = documents
        .first()
        .and_then(|(_, d)| d["fio version"].as_str())
        .unwrap_or("hybrio")
        .to_string();
    Ok(page(&version, &jobs))
}

fn page_job(job: &JobReport) -> PageJob {
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
        dirs: DataDir::ALL
            .into_iter()
            .filter(|&d| job.stats.dir(d).total_ios() > 0)
            .map(|dir| {
                let d = job.stats.dir(dir);
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
    }
}

fn json_job(document: &str, job: &serde_json::Value) -> PageJob {
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
    PageJob {
        title: job["jobname"].as_str().unwrap_or("job").to_string(),
        detail: format!("{document}, group {}", job["groupid"]),
        error: job["error"].as_i64().unwrap_or(0),
        dirs,
    }
}

fn page(version: &str, jobs: &[PageJob]) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{} report</title>\n<style>{STYLE}</style></head>\n<body>\n<h1>{} report</h1>\n",
        escape(version),
        escape(version)
    );
    for (index, job) in jobs.iter().enumerate() {
        job_section(&mut page, job, index);
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
        let _ = writeln!(page, "<p class=\"error\">error {}</p>", job.error);
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
    let series: Vec<(DataDir, &[(u64, u64)])> = job
        .dirs
        .iter()
        .filter(|d| !d.buckets.is_empty())
        .map(|d| (d.dir, d.buckets.as_slice()))
        .collect();
    if series.is_empty() {
        page.push_str(
            "<p>No latency histogram (a JSON report needs json+'s bins).</p>\n</section>\n",
        );
        return;
    }
    let legend: String = series
        .iter()
        .map(|&(d, _)| {
            format!(
                "<label><input type=\"checkbox\" checked data-job=\"{index}\" data-dir=\"{}\"> \
                 <span style=\"color:{}\">{}</span></label> ",
                d.name(),
                colour(d),
                d.name()
            )
        })
        .collect();
    let _ = writeln!(page, "<p class=\"legend\">{legend}</p>");
    percentile_chart(page, index, &series);
    histogram_chart(page, index, &series);
    page.push_str("</section>\n");
}

/// The range of latencies drawn (ns), as powers of ten around the data.
fn latency_range(series: &[(DataDir, &[(u64, u64)])]) -> (f64, f64) {
    let values = series
        .iter()
        .flat_map(|(_, b)| b.iter().map(|&(v, _)| v.max(1)));
    let (lo, hi) = values.fold((u64::MAX, 1), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let lo = 10f64.powf((lo.max(1) as f64).log10().floor());
    let hi = 10f64.powf((hi as f64).log10().ceil()).max(lo * 10.0);
    (lo, hi)
}

/// x of latency `ns` on the logarithmic axis from `lo` to `hi`.
fn x_of(ns: f64, (lo, hi): (f64, f64)) -> f64 {
    MARGIN + (ns.max(lo).log10() - lo.log10()) / (hi.log10() - lo.log10()) * (WIDTH - 2.0 * MARGIN)
}

/// The latency axis: a tick at each power of ten, labelled in ns, us or ms.
fn latency_axis(svg: &mut String, range: (f64, f64)) {
    let mut tick = range.0;
    while tick <= range.1 * 1.0001 {
        let x = x_of(tick, range);
        let label = match tick {
            t if t >= 1e6 => format!("{}ms", t / 1e6),
            t if t >= 1e3 => format!("{}us", t / 1e3),
            t => format!("{t}ns"),
        };
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{MARGIN}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
            HEIGHT - MARGIN,
            HEIGHT - MARGIN + 16.0
        );
        tick *= 10.0;
    }
}

/// The completion-latency percentile curve: each bucket's cumulative share
/// (0..100%) against its latency, the 50/99/99.9/99.99 marks as lines.
fn percentile_chart(page: &mut String, job: usize, series: &[(DataDir, &[(u64, u64)])]) {
    let range = latency_range(series);
    let mut svg = open_svg(
        "Completion latency percentiles: x the latency (log scale), y the share of I/Os at or below it, in nines",
    );
    latency_axis(&mut svg, range);
    // The tail spread out: y counts nines (50% 0.3, 99% 2, 99.9% 3), up to five.
    let y_of = |pct: f64| {
        let nines = -(1.0 - pct / 100.0).max(1e-5).log10();
        HEIGHT - MARGIN - nines / 5.0 * (HEIGHT - 2.0 * MARGIN)
    };
    for mark in [50.0, 99.0, 99.9, 99.99] {
        let y = y_of(mark);
        let _ = write!(
            svg,
            "<line class=\"mark\" x1=\"{MARGIN}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{mark}</text>",
            WIDTH - MARGIN,
            WIDTH - MARGIN + 4.0,
            y + 4.0
        );
    }
    for (dir, hist) in series {
        let total = hist.iter().map(|b| b.1).sum::<u64>().max(1) as f64;
        let mut cumulative = 0u64;
        let mut points = Vec::new();
        for &(value, count) in hist.iter() {
            cumulative += count;
            points.push((value, 100.0 * cumulative as f64 / total));
        }
        let path: Vec<String> = points
            .iter()
            .map(|&(v, p)| format!("{:.1},{:.1}", x_of(v as f64, range), y_of(p)))
            .collect();
        let _ = write!(
            svg,
            "<g class=\"series\" data-job=\"{job}\" data-dir=\"{}\" data-points=\"{}\">\
             <polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>",
            dir.name(),
            points.len(),
            colour(*dir),
            path.join(" ")
        );
        for &(v, p) in &points {
            let _ = write!(
                svg,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{}\"><title>{} {}: {:.4}% at or below</title></circle>",
                x_of(v as f64, range),
                y_of(p),
                colour(*dir),
                dir.name(),
                latency(v),
                p
            );
        }
        svg.push_str("</g>");
    }
    svg.push_str("</svg></figure>\n");
    page.push_str(&svg);
}

/// The latency histogram: each bucket's count, as a bar at its latency.
fn histogram_chart(page: &mut String, job: usize, series: &[(DataDir, &[(u64, u64)])]) {
    let range = latency_range(series);
    let mut svg = open_svg(
        "Completion latency histogram: x the latency (log scale), y the I/Os in each of fio's buckets",
    );
    latency_axis(&mut svg, range);
    let most = series
        .iter()
        .flat_map(|(_, h)| h.iter().map(|b| b.1))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    for (dir, hist) in series {
        let buckets: Vec<(u64, u64)> = hist.to_vec();
        let _ = write!(
            svg,
            "<g class=\"series\" data-job=\"{job}\" data-dir=\"{}\" data-points=\"{}\">",
            dir.name(),
            buckets.len()
        );
        for (value, count) in buckets {
            let x = x_of(value as f64, range);
            let h = count as f64 / most * (HEIGHT - 2.0 * MARGIN);
            let _ = write!(
                svg,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"2\" height=\"{h:.1}\" fill=\"{}\">\
                 <title>{} {}: {count} I/Os</title></rect>",
                x - 1.0,
                HEIGHT - MARGIN - h,
                colour(*dir),
                dir.name(),
                latency(value)
            );
        }
        svg.push_str("</g>");
    }
    svg.push_str("</svg></figure>\n");
    page.push_str(&svg);
}

fn open_svg(caption: &str) -> String {
    format!("<figure><figcaption>{}</figcaption>", escape(caption))
        + &format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\">\
         <rect class=\"frame\" x=\"{MARGIN}\" y=\"{MARGIN}\" width=\"{:.1}\" height=\"{:.1}\"/>",
            WIDTH - 2.0 * MARGIN,
            HEIGHT - 2.0 * MARGIN
        )
        + &format!("<desc>{}</desc>", escape(caption))
}

/// A latency in the unit that reads best.
fn latency(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000 => format!("{:.2}ms", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.2}us", n as f64 / 1e3),
        n => format!("{n}ns"),
    }
}

/// Text made safe for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
th{background:#f4f4f4}svg text{font-size:11px;fill:#444}.frame{fill:none;stroke:#999}\
.grid{stroke:#eee}.mark{stroke:#bbb;stroke-dasharray:3 3}figure{margin:0.5em 0}.error{color:#b00}";

/// The legend's boxes show or hide a direction's series in the job's charts.
const SCRIPT: &str = "document.querySelectorAll('.legend input').forEach(function(box){\
box.addEventListener('change',function(){\
document.querySelectorAll('g.series[data-job=\"'+box.dataset.job+'\"][data-dir=\"'+box.dataset.dir+'\"]')\
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
            let marker = format!("data-dir=\"{}\" data-points=\"{buckets}\"", dir.name());
            assert_eq!(page.matches(&marker).count(), 2, "{}", dir.name());
        }
        assert!(page.contains("<title>read "));
        assert_eq!(page.matches("<svg").count(), 2 * report.jobs.len());
    }
}
