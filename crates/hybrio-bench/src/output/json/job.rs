//! One entry of fio's `jobs` (or a client's `client_stats`), as fio 3.42's
//! `show_thread_status_json()` builds it, and one of `disk_util`.

use super::printer::{Json, Obj};
use crate::fio_version::FioVersion;
use crate::options::UnifiedRw;
use crate::output::report::{JobReport, percent_of_agg};
use crate::stats::{
    BATCH_LABELS, DEPTH_LABELS, DataDir, DirStats, GroupSummary, JobStats, LAT_LABELS,
    LAT_M_LABELS, LatHistogram, LatStat, StatsConfig,
};

/// One `disk_util` entry, with fio 3.42's keys in its order; for a device
/// made of others (md, dm), the mean of what they did (`aggr_*`, fio's
/// `aggr_write_merge` without its `s`) and the busiest one's utilization.
pub(super) fn disk_object(disk: &crate::diskstats::DiskUtil) -> Obj {
    let c = &disk.counters;
    let mut o = Obj::default();
    o.str("name", &disk.name);
    o.uint("read_ios", c.read_ios);
    o.uint("write_ios", c.write_ios);
    // fio 3.36 (commit fc250131); a 3.33 reader skips keys it does not know.
    o.uint("read_sectors", c.read_sectors);
    o.uint("write_sectors", c.write_sectors);
    o.uint("read_merges", c.read_merges);
    o.uint("write_merges", c.write_merges);
    o.uint("read_ticks", c.read_ticks);
    o.uint("write_ticks", c.write_ticks);
    o.uint("in_queue", c.time_in_queue);
    o.float("util", disk.util);
    if let Some(slaves) = &disk.slaves {
        let m = slaves.mean();
        o.uint("aggr_read_ios", m.read_ios);
        o.uint("aggr_write_ios", m.write_ios);
        o.uint("aggr_read_sectors", m.read_sectors);
        o.uint("aggr_write_sectors", m.write_sectors);
        o.uint("aggr_read_merges", m.read_merges);
        o.uint("aggr_write_merge", m.write_merges);
        o.uint("aggr_read_ticks", m.read_ticks);
        o.uint("aggr_write_ticks", m.write_ticks);
        o.uint("aggr_in_queue", m.time_in_queue);
        o.float("aggr_util", slaves.max_util);
    }
    o
}

/// fio's `json_add_job_opts()`: nothing when there are no options; an
/// option given without a value, as the fio of `fio` writes it.
pub(super) fn options(list: &[(String, String)], fio: FioVersion) -> Option<Obj> {
    if list.is_empty() {
        return None;
    }
    let mut o = Obj::default();
    for (k, v) in list {
        if !v.is_empty() || fio.empty_json_strings() {
            o.str(k, v);
        }
    }
    Some(o)
}

pub(super) fn job_object(
    job: &JobReport,
    rs: Option<&GroupSummary>,
    plus: bool,
    fio: FioVersion,
) -> Obj {
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
    if let Some(opts) = options(&job.options, fio) {
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
    let (depth, target_ns, percentile, window_us) = match &job.latency_target {
        Some(t) => (t.depth, t.target_ns, t.percentile, t.window_us),
        None => (job.desc.iodepth, 0, 100.0, 0),
    };
    // fio 3.42 (commit 4db5740d) repeats the target and the window under
    // names that give their units; the old names stay for older readers.
    o.uint("latency_depth", u64::from(depth));
    o.uint("latency_target", target_ns);
    o.uint("latency_target_ns", target_ns);
    o.float("latency_percentile", percentile);
    o.uint("latency_window", window_us);
    o.uint("latency_window_us", window_us);
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
