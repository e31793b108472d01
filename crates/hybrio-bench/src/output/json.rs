//! `--output-format=json`, as fio's `show_thread_status_json()` builds it and
//! json.c prints it: `"key" : value` pairs, two spaces of indent per level,
//! floats as `%f`, keys in fio's order.

use std::fmt::Write as _;

use super::localtime::{ctime, unix_secs};
use super::report::{JobReport, RunReport, percent_of_agg, summary_of_group};
use crate::options::UnifiedRw;
use crate::stats::{
    BATCH_LABELS, DEPTH_LABELS, DataDir, DirStats, GroupSummary, JobStats, LAT_LABELS,
    LAT_M_LABELS, LatHistogram, LatStat, StatsConfig,
};

/// The whole report as one JSON document (ends with a newline).
///
/// Top level: `fio version`, `timestamp`, `timestamp_ms`, `time`,
/// `global options` (only when there are any), `jobs`, and `hybrio` with
/// [`RunReport::extra`] when present.
pub fn render(report: &RunReport) -> String {
    render_with(report, false)
}

/// `--output-format=json+`: as [`render`], and each latency object with
/// percentiles also has fio's `bins`: every non-empty histogram bucket, keyed
/// by the bucket's value in ns as fio's `plat_idx_to_val()` gives it.
pub fn render_plus(report: &RunReport) -> String {
    render_with(report, true)
}

fn render_with(report: &RunReport, plus: bool) -> String {
    let mut root = Obj::default();
    root.str("fio version", &report.version);
    let secs = unix_secs(report.time);
    let ms = match report.time.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i128::try_from(d.as_millis()).unwrap_or(i128::MAX),
        Err(e) => -i128::try_from(e.duration().as_millis()).unwrap_or(i128::MAX),
    };
    root.int("timestamp", i128::from(secs));
    // fio's client mode writes no timestamp_ms.
    if report.clients.is_empty() {
        root.int("timestamp_ms", ms);
    }
    root.str("time", &ctime(report.time));
    if let Some(opts) = options(&report.global_options) {
        root.obj("global options", opts);
    }
    if report.clients.is_empty() {
        let jobs = report
            .jobs
            .iter()
            .map(|job| Json::Obj(job_object(job, report.group(job.groupid), plus)))
            .collect();
        root.push("jobs", Json::Arr(jobs));
    } else {
        root.push("client_stats", Json::Arr(client_stats(report, plus)));
    }
    // fio's client mode: every client's devices, each with its client.
    let disks: Vec<Json> = if report.clients.is_empty() {
        report
            .disk_util
            .iter()
            .map(|d| Json::Obj(disk_object(d)))
            .collect()
    } else {
        report
            .clients
            .iter()
            .flat_map(|client| {
                client.disk_util.iter().map(|d| {
                    let mut o = disk_object(d);
                    o.str("hostname", &client.hostname);
                    o.uint("port", u64::from(client.port));
                    Json::Obj(o)
                })
            })
            .collect()
    };
    if !disks.is_empty() {
        root.push("disk_util", Json::Arr(disks));
    }
    if let Some(extra) = &report.extra {
        root.push("hybrio", Json::from_serde(extra));
    }
    let mut out = String::new();
    print_value(&mut out, &Json::Obj(root), 0);
    out.push('\n');
    out
}

/// fio's client mode: every client's jobs, each with its `hostname` and
/// `port`, then the jobs of all clients merged, named `All clients`.
fn client_stats(report: &RunReport, plus: bool) -> Vec<Json> {
    let mut out = Vec::new();
    for client in &report.clients {
        for job in &client.jobs {
            // Its share of its own group, as each fio server reports it.
            let group = summary_of_group(&client.jobs, job.groupid);
            let mut o = job_object(job, Some(&group), plus);
            o.str("hostname", &client.hostname);
            o.uint("port", u64::from(client.port));
            out.push(Json::Obj(o));
        }
    }
    let host = report.clients.first().map_or("", |c| c.hostname.as_str());
    for job in &report.jobs {
        let mut merged = job.clone();
        merged.desc.name = "All clients".into();
        let mut o = job_object(&merged, report.group(job.groupid), plus);
        o.str("hostname", host);
        o.uint("port", 0);
        out.push(Json::Obj(o));
    }
    out
}

/// One `disk_util` entry, with fio 3.33's keys in its order.
fn disk_object(disk: &crate::diskstats::DiskUtil) -> Obj {
    let c = &disk.counters;
    let mut o = Obj::default();
    o.str("name", &disk.name);
    o.uint("read_ios", c.read_ios);
    o.uint("write_ios", c.write_ios);
    o.uint("read_merges", c.read_merges);
    o.uint("write_merges", c.write_merges);
    o.uint("read_ticks", c.read_ticks);
    o.uint("write_ticks", c.write_ticks);
    o.uint("in_queue", c.time_in_queue);
    o.float("util", disk.util);
    o
}

/// fio's `json_add_job_opts()`: nothing when there are no options.
fn options(list: &[(String, String)]) -> Option<Obj> {
    if list.is_empty() {
        return None;
    }
    let mut o = Obj::default();
    for (k, v) in list {
        o.str(k, v);
    }
    Some(o)
}

fn job_object(job: &JobReport, rs: Option<&GroupSummary>, plus: bool) -> Obj {
    let s = &job.stats;
    let cfg = s.config();
    let mut o = Obj::default();
    o.str("jobname", &job.desc.name);
    o.int("groupid", i128::from(job.groupid));
    o.int("job_start", i128::from(job.job_start_ms));
    o.int("error", i128::from(job.error));
    if let Some(errors) = job.errors {
        o.int("total_err", i128::from(errors.total));
        o.int("first_error", i128::from(errors.first));
    }
    // fio reports its ETA to the end of the run; the report is made at the end
    o.int("eta", 0);
    o.int("elapsed", i128::from(job.elapsed_s));
    if let Some(opts) = options(&job.options) {
        o.obj("job options", opts);
    }
    let agg_bw = |dir: DataDir| rs.and_then(|g| g.dir(dir)).map(|g| g.agg_bw);
    // unified_rw_reporting=mixed: fio writes the summed directions as
    // "mixed" in the place of "read", and no write, trim or sync object.
    let mixed_only = job.unified == UnifiedRw::Mixed;
    for dir in DataDir::ALL {
        let name = match (mixed_only, dir) {
            (false, _) => dir.name(),
            (true, DataDir::Read) => "mixed",
            (true, _) => continue,
        };
        o.obj(name, dir_object(cfg, s.dir(dir), agg_bw(dir), plus));
    }
    if !mixed_only {
        o.obj("sync", sync_object(s, plus));
    }
    if job.unified == UnifiedRw::Both {
        // Its share of the group is taken against the group's reads, as fio takes it.
        o.obj(
            "mixed",
            dir_object(cfg, &s.mixed(), agg_bw(DataDir::Read), plus),
        );
    }
    o.uint("job_runtime", s.job_runtime_ms());
    o.float("usr_cpu", s.usr_cpu_percent());
    o.float("sys_cpu", s.sys_cpu_percent());
    o.uint("ctx", s.cpu().ctx);
    o.uint("majf", s.cpu().majf);
    o.uint("minf", s.cpu().minf);
    o.obj(
        "iodepth_level",
        labelled(&DEPTH_LABELS, &s.io_depth_distribution()),
    );
    o.obj(
        "iodepth_submit",
        labelled(&BATCH_LABELS, &s.submit_distribution()),
    );
    o.obj(
        "iodepth_complete",
        labelled(&BATCH_LABELS, &s.complete_distribution()),
    );
    let lat = s.lat_distribution();
    o.obj("latency_ns", labelled(&LAT_LABELS, &lat.nsec));
    o.obj("latency_us", labelled(&LAT_LABELS, &lat.usec));
    o.obj("latency_ms", labelled(&LAT_M_LABELS, &lat.msec));
    match &job.latency_target {
        Some(t) => {
            o.uint("latency_depth", u64::from(t.depth));
            o.uint("latency_target", t.target_ns);
            o.float("latency_percentile", t.percentile);
            o.uint("latency_window", t.window_us);
        }
        None => {
            o.uint("latency_depth", u64::from(job.desc.iodepth));
            o.int("latency_target", 0);
            o.float("latency_percentile", 100.0);
            o.int("latency_window", 0);
        }
    }
    if let Some(steady) = &job.steady {
        o.obj("steadystate", steady_object(steady));
    }
    o
}

/// fio's `steadystate` object: the criterion, the verdict and the window.
fn steady_object(steady: &crate::stats::SteadyState) -> Obj {
    let mut o = Obj::default();
    o.str("ss", &steady.label());
    o.uint("duration", steady.settings.seconds);
    o.uint("attained", u64::from(steady.attained));
    o.str("criterion", &steady.criterion_text());
    o.float("max_deviation", steady.deviation);
    o.float("slope", steady.slope);
    let (iops, bw, lat) = steady.window();
    let (iops_mean, bw_mean, lat_mean) = steady.means();
    let mut data = Obj::default();
    data.uint("bw_mean", bw_mean);
    data.uint("iops_mean", iops_mean);
    let ints = |v: Vec<u64>| Json::Arr(v.into_iter().map(|x| Json::Int(i128::from(x))).collect());
    // fio 3.42 lists the latencies only when they are judged.
    if steady.measure() == crate::stats::Measure::Lat {
        data.uint("lat_mean", lat_mean);
        data.push("lat_ns", ints(lat));
    }
    data.push("iops", ints(iops));
    data.push("bw", ints(bw));
    o.obj("data", data);
    o
}

/// The `sync` object: fsync/fdatasync count and latency.
fn sync_object(s: &JobStats, plus: bool) -> Obj {
    let cfg = s.config();
    let mut sync = Obj::default();
    sync.uint("total_ios", s.sync().total_ios());
    sync.obj(
        "lat_ns",
        lat_object(
            cfg,
            cfg.lat_percentiles || cfg.clat_percentiles,
            s.sync().lat(),
            Some(s.sync().hist()),
            plus,
        ),
    );
    sync
}

fn labelled(labels: &[&str], values: &[f64]) -> Obj {
    let mut o = Obj::default();
    for (l, &v) in labels.iter().zip(values) {
        o.float(l, v);
    }
    o
}

/// fio's `add_ddir_status_json()` for read, write and trim.
fn dir_object(cfg: &StatsConfig, d: &DirStats, agg_bw: Option<u64>, plus: bool) -> Obj {
    let mut o = Obj::default();
    o.uint("io_bytes", d.io_bytes());
    o.uint("io_kbytes", d.io_bytes() >> 10);
    let bw_bytes = d.bw_bytes_per_sec();
    o.uint("bw_bytes", bw_bytes);
    o.uint("bw", bw_bytes / 1024);
    o.float("iops", d.iops());
    o.uint("runtime", d.runtime_ms());
    o.uint("total_ios", d.total_ios());
    o.uint("short_ios", d.short_ios());
    o.uint("drop_ios", d.drop_ios());
    o.obj(
        "slat_ns",
        lat_object(cfg, cfg.slat_percentiles, &d.slat(), d.slat_hist(), plus),
    );
    o.obj(
        "clat_ns",
        lat_object(
            cfg,
            cfg.clat_percentiles,
            &d.clat(),
            Some(d.clat_hist()),
            plus,
        ),
    );
    o.obj(
        "lat_ns",
        lat_object(cfg, cfg.lat_percentiles, &d.lat(), d.lat_hist(), plus),
    );
    let bw = d.bw_samples();
    let agg = if bw.is_empty() {
        0.0
    } else {
        percent_of_agg(agg_bw, bw.mean())
    };
    o.uint("bw_min", bw.min());
    o.uint("bw_max", bw.max());
    o.float("bw_agg", agg);
    o.float("bw_mean", bw.mean());
    o.float("bw_dev", bw.stddev());
    o.uint("bw_samples", bw.count());
    let iops = d.iops_samples();
    o.uint("iops_min", iops.min());
    o.uint("iops_max", iops.max());
    o.float("iops_mean", iops.mean());
    o.float("iops_stddev", iops.stddev());
    o.uint("iops_samples", iops.count());
    o
}

/// fio's `add_ddir_lat_json()`: `percentile` only when that kind's
/// percentiles are on and there are samples.
fn lat_object(
    cfg: &StatsConfig,
    percentiles: bool,
    stat: &LatStat,
    hist: Option<&LatHistogram>,
    plus: bool,
) -> Obj {
    let mut o = Obj::default();
    o.uint("min", stat.min());
    o.uint("max", stat.max());
    o.float("mean", stat.mean());
    o.float("stddev", stat.stddev());
    o.uint("N", stat.count());
    if let (true, false, Some(h)) = (percentiles, stat.is_empty(), hist) {
        let mut p = Obj::default();
        for (pct, v) in h.percentiles(&cfg.percentile_list) {
            p.uint(&format!("{pct:.6}"), v);
        }
        o.obj("percentile", p);
        if plus {
            let mut bins = Obj::default();
            for (value, count) in h.buckets() {
                bins.uint(&value.to_string(), count);
            }
            o.obj("bins", bins);
        }
    }
    o
}

/// A JSON value, printed the way fio's json.c prints it.
enum Json {
    Int(i128),
    Float(f64),
    Str(String),
    Raw(String),
    Obj(Obj),
    Arr(Vec<Json>),
}

impl Json {
    fn from_serde(v: &serde_json::Value) -> Json {
        match v {
            serde_json::Value::Object(map) => Json::Obj(Obj(map
                .iter()
                .map(|(k, v)| (k.clone(), Json::from_serde(v)))
                .collect())),
            serde_json::Value::Array(a) => Json::Arr(a.iter().map(Json::from_serde).collect()),
            serde_json::Value::String(s) => Json::Str(s.clone()),
            other => Json::Raw(other.to_string()),
        }
    }
}

/// An object with keys in insertion order.
#[derive(Default)]
struct Obj(Vec<(String, Json)>);

impl Obj {
    fn push(&mut self, key: &str, value: Json) {
        self.0.push((key.to_string(), value));
    }
    fn int(&mut self, key: &str, v: i128) {
        self.push(key, Json::Int(v));
    }
    fn uint(&mut self, key: &str, v: u64) {
        self.push(key, Json::Int(i128::from(v)));
    }
    fn float(&mut self, key: &str, v: f64) {
        self.push(key, Json::Float(v));
    }
    /// fio drops a string pair whose value is empty (`strdup_escape()`
    /// returns NULL for ""), so does this.
    fn str(&mut self, key: &str, v: &str) {
        if !v.is_empty() {
            self.push(key, Json::Str(v.to_string()));
        }
    }
    fn obj(&mut self, key: &str, v: Obj) {
        self.push(key, Json::Obj(v));
    }
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// json.c's printer: an object's pairs and an array's elements go one level
/// deeper than the value itself, each on its own line.
fn print_value(out: &mut String, v: &Json, level: usize) {
    match v {
        Json::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Json::Float(f) => {
            // fio prints %f; keep the document valid for non-finite values
            let f = if f.is_finite() { *f } else { 0.0 };
            let _ = write!(out, "{f:.6}");
        }
        Json::Str(s) => escape_into(out, s),
        Json::Raw(s) => out.push_str(s),
        Json::Obj(o) => {
            out.push_str("{\n");
            for (i, (k, v)) in o.0.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                escape_into(out, k);
                out.push_str(" : ");
                print_value(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push('}');
        }
        Json::Arr(a) => {
            out.push_str("[\n");
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                print_value(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push(']');
        }
    }
}

/// A quoted string. fio escapes only `\` and `"`; control characters are
/// escaped too so that the document stays valid JSON.
fn escape_into(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testutil;
    use serde_json::Value;

    fn parse(cfg: StatsConfig) -> (String, Value) {
        let text = render(&testutil::report(cfg));
        let v: Value = serde_json::from_str(&text).expect("valid JSON");
        (text, v)
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    /// Keys in document order (serde_json's map is sorted, so scan the text).
    fn ordered_keys(text: &str, indent: usize) -> Vec<String> {
        let prefix = " ".repeat(indent) + "\"";
        text.lines()
            .filter(|l| l.starts_with(&prefix))
            .filter_map(|l| l[indent + 1..].split('"').next().map(str::to_string))
            .collect()
    }

    #[test]
    fn top_level_and_job_keys_in_fio_order() {
        let (text, v) = parse(StatsConfig::default());
        assert_eq!(
            ordered_keys(&text, 2),
            [
                "fio version",
                "timestamp",
                "timestamp_ms",
                "time",
                "global options",
                "jobs",
                "hybrio"
            ]
        );
        assert_eq!(v["fio version"], "hybrio-0.1.0");
        assert_eq!(v["timestamp"], 1_581_708_125u64);
        assert_eq!(v["timestamp_ms"], 1_581_708_125_678u64);
        assert!(v["time"].as_str().unwrap().ends_with(" 2020"));
        assert_eq!(v["global options"]["ioengine"], "io_uring");
        assert_eq!(v["hybrio"]["engine"]["sync_ios"], 12);
        assert_eq!(v["hybrio"]["engine"]["ratio"], 0.25);
        let jobs_text = &text[text.find("\"jobs\" : [").unwrap()..text.find("\n  ],").unwrap()];
        let job_keys: Vec<String> = ordered_keys(jobs_text, 6);
        let expect = [
            "jobname",
            "groupid",
            "job_start",
            "error",
            "eta",
            "elapsed",
            "job options",
            "read",
            "write",
            "trim",
            "sync",
            "job_runtime",
            "usr_cpu",
            "sys_cpu",
            "ctx",
            "majf",
            "minf",
            "iodepth_level",
            "iodepth_submit",
            "iodepth_complete",
            "latency_ns",
            "latency_us",
            "latency_ms",
            "latency_depth",
            "latency_target",
            "latency_percentile",
            "latency_window",
        ];
        assert_eq!(job_keys, expect);
        let job = &v["jobs"][0];
        assert_eq!(keys(job).len(), expect.len());
        assert_eq!(job["jobname"], "j1");
        assert_eq!(job["job options"]["iodepth"], "8");
        for k in [
            "groupid",
            "job_start",
            "error",
            "eta",
            "elapsed",
            "job_runtime",
            "ctx",
            "majf",
            "minf",
            "latency_depth",
            "latency_target",
            "latency_window",
        ] {
            assert!(job[k].is_u64(), "{k} is an integer");
        }
        for k in ["usr_cpu", "sys_cpu", "latency_percentile"] {
            assert!(job[k].is_f64(), "{k} is a float");
        }
        assert_eq!(job["usr_cpu"], 75.0);
        assert_eq!(job["job_runtime"], 2000);
        assert_eq!(job["latency_depth"], 8);
    }

    #[test]
    fn direction_objects() {
        let (text, v) = parse(StatsConfig::default());
        let dir_keys = [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
            "slat_ns",
            "clat_ns",
            "lat_ns",
            "bw_min",
            "bw_max",
            "bw_agg",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_stddev",
            "iops_samples",
        ];
        // the three direction objects list their keys in this order
        // (the job options come first at this depth)
        let at8 = ordered_keys(&text, 8);
        let at8 = &at8[at8.iter().position(|k| k == "io_bytes").unwrap()..];
        for dir in 0..3 {
            assert_eq!(&at8[dir * 23..dir * 23 + 23], &dir_keys[..], "dir {dir}");
        }
        let floats = [
            "iops",
            "bw_agg",
            "bw_mean",
            "bw_dev",
            "iops_mean",
            "iops_stddev",
        ];
        for dir in ["read", "write", "trim"] {
            let d = &v["jobs"][0][dir];
            assert_eq!(keys(d).len(), dir_keys.len());
            for k in dir_keys {
                if floats.contains(&k) {
                    assert!(d[k].is_f64(), "{dir}.{k} float");
                } else if k.ends_with("_ns") {
                    assert!(d[k].is_object(), "{dir}.{k} object");
                } else {
                    assert!(d[k].is_u64(), "{dir}.{k} integer");
                }
            }
            for k in ["slat_ns", "clat_ns", "lat_ns"] {
                let l = &d[k];
                for (f, is_float) in [
                    ("min", false),
                    ("max", false),
                    ("mean", true),
                    ("stddev", true),
                    ("N", false),
                ] {
                    assert_eq!(l[f].is_f64(), is_float, "{dir}.{k}.{f}");
                    assert!(l[f].is_number());
                }
            }
        }
        let r = &v["jobs"][0]["read"];
        assert_eq!(r["io_bytes"], 4_096_000);
        assert_eq!(r["io_kbytes"], 4000);
        assert_eq!(r["bw_bytes"], 2_048_000);
        assert_eq!(r["bw"], 2000);
        assert_eq!(r["iops"], 500.0);
        assert_eq!(r["runtime"], 2000);
        assert_eq!(r["bw_min"], 4000);
        assert_eq!(r["bw_agg"], 100.0);
        assert_eq!(r["iops_samples"], 2);
        assert_eq!(v["jobs"][0]["write"]["short_ios"], 1);
        // clat percentiles (default) with fio's "%f" keys; slat and lat none
        let p = r["clat_ns"]["percentile"].as_object().unwrap();
        assert_eq!(p.len(), 17);
        assert_eq!(p["1.000000"], 1012);
        assert_eq!(p["70.000000"], 1704);
        assert_eq!(p["99.990000"], 1992);
        assert!(r["slat_ns"].get("percentile").is_none());
        assert!(r["lat_ns"].get("percentile").is_none());
        // nothing trimmed: zeros, and no percentile object without samples
        let t = &v["jobs"][0]["trim"];
        assert_eq!(t["clat_ns"]["N"], 0);
        assert_eq!(t["clat_ns"]["min"], 0);
        assert!(t["clat_ns"].get("percentile").is_none());
        assert_eq!(t["bw_agg"], 0.0);
        assert!(text.contains("\"iops\" : 0.000000,"));
    }

    #[test]
    fn sync_and_distributions() {
        let (_, v) = parse(StatsConfig::default());
        let job = &v["jobs"][0];
        let sync = &job["sync"];
        assert_eq!(keys(sync), ["lat_ns", "total_ios"]);
        assert_eq!(sync["total_ios"], 3);
        assert_eq!(sync["lat_ns"]["N"], 3);
        assert_eq!(sync["lat_ns"]["mean"], 250_000.0);
        assert_eq!(sync["lat_ns"]["percentile"]["50.000000"], 250_880);
        for (k, labels) in [
            ("iodepth_level", &DEPTH_LABELS[..]),
            ("iodepth_submit", &BATCH_LABELS[..]),
            ("iodepth_complete", &BATCH_LABELS[..]),
            ("latency_ns", &LAT_LABELS[..]),
            ("latency_us", &LAT_LABELS[..]),
            ("latency_ms", &LAT_M_LABELS[..]),
        ] {
            let o = job[k].as_object().unwrap();
            assert_eq!(o.len(), labels.len(), "{k}");
            for l in labels {
                assert!(o[*l].is_f64(), "{k}.{l}");
            }
        }
        assert_eq!(job["iodepth_level"]["8"], 100.0);
        assert_eq!(job["latency_us"]["2"], 50.0);
        assert_eq!(job["latency_us"]["50"], 50.0);
        assert_eq!(job["latency_ms"][">=2000"], 0.0);
    }

    #[test]
    fn lat_and_slat_percentiles_when_enabled() {
        let cfg = StatsConfig {
            lat_percentiles: true,
            slat_percentiles: true,
            clat_percentiles: false,
            ..StatsConfig::default()
        };
        let (_, v) = parse(cfg);
        let r = &v["jobs"][0]["read"];
        assert!(r["clat_ns"].get("percentile").is_none());
        // checked against the C transcription of fio's percentile walk
        let lat = r["lat_ns"]["percentile"].as_object().unwrap();
        let want = [
            1112, 1160, 1208, 1304, 1400, 1512, 1608, 1704, 1800, 1912, 2008, 2064, 2096, 2096,
            2096, 2096, 2096,
        ];
        let mut sorted_keys: Vec<f64> = lat.keys().map(|k| k.parse().unwrap()).collect();
        sorted_keys.sort_by(f64::total_cmp);
        let by_p: Vec<u64> = sorted_keys
            .iter()
            .map(|p| lat[&format!("{p:.6}")].as_u64().unwrap())
            .collect();
        assert_eq!(by_p, want);
        assert_eq!(lat.len(), 17);
        assert_eq!(r["slat_ns"]["percentile"]["50.000000"], 104);
        // sync percentiles follow lat_percentiles | clat_percentiles
        assert!(v["jobs"][0]["sync"]["lat_ns"].get("percentile").is_some());
        let none = StatsConfig {
            clat_percentiles: false,
            ..StatsConfig::default()
        };
        let (_, v) = parse(none);
        assert!(v["jobs"][0]["sync"]["lat_ns"].get("percentile").is_none());
    }

    #[test]
    fn layout_matches_fio_printer() {
        let (text, _) = parse(StatsConfig::default());
        assert!(text.starts_with(
            "{\n  \"fio version\" : \"hybrio-0.1.0\",\n  \"timestamp\" : 1581708125,\n"
        ));
        assert!(text.contains(
            "\n  \"jobs\" : [\n    {\n      \"jobname\" : \"j1\",\n      \"groupid\" : 0,\n"
        ));
        assert!(text.contains(
            "      \"sync\" : {\n        \"total_ios\" : 3,\n        \"lat_ns\" : {\n          \"min\" : 150000,\n"
        ));
        assert!(text.contains("      \"usr_cpu\" : 75.000000,\n"));
        assert!(text.contains(
            "        \"clat_ns\" : {\n          \"min\" : 1000,\n          \"max\" : 1999,\n          \"mean\" : 1499.500000,\n          \"stddev\" : 288.819436,\n          \"N\" : 1000,\n          \"percentile\" : {\n            \"1.000000\" : 1012,\n"
        ));
        assert!(text.contains("      \"latency_percentile\" : 100.000000,\n      \"latency_window\" : 0\n    }\n  ],\n  \"hybrio\" : {\n"));
        assert!(text.ends_with("\n}\n"));
    }

    #[test]
    fn no_global_options_no_extra_and_escaping() {
        let mut report = testutil::report(StatsConfig::default());
        report.global_options.clear();
        report.extra = None;
        report.jobs[0].desc.name = "a \"quoted\"\\name\n".to_string();
        report.jobs[0]
            .options
            .push(("empty".to_string(), String::new()));
        let text = render(&report);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(v.get("global options").is_none());
        assert!(v.get("hybrio").is_none());
        assert_eq!(v["jobs"][0]["jobname"], "a \"quoted\"\\name\n");
        // fio drops string pairs with an empty value
        assert!(v["jobs"][0]["job options"].get("empty").is_none());
        report.jobs[0].options.clear();
        let v: Value = serde_json::from_str(&render(&report)).unwrap();
        assert!(v["jobs"][0].get("job options").is_none());
    }

    #[test]
    fn printer_formats() {
        let mut o = Obj::default();
        o.float("f", 1.0 / 3.0);
        o.float("nan", f64::NAN);
        o.int("neg", -5);
        o.push("empty", Json::Obj(Obj::default()));
        o.push(
            "arr",
            Json::Arr(vec![Json::Int(1), Json::Obj(Obj::default())]),
        );
        let mut out = String::new();
        print_value(&mut out, &Json::Obj(o), 0);
        assert_eq!(
            out,
            "{\n  \"f\" : 0.333333,\n  \"nan\" : 0.000000,\n  \"neg\" : -5,\n  \"empty\" : {\n\n  },\n  \"arr\" : [\n    1,\n    {\n\n    }\n  ]\n}"
        );
        serde_json::from_str::<Value>(&out).unwrap();
    }
}
