//! fio's normal (human-readable) output, laid out as fio 3.33's
//! `show_thread_status_normal()` and `show_group_stats()` in stat.c.

use crate::options::UnifiedRw;
use std::fmt::Write as _;

use super::localtime::ctime;
use super::num::{self, Unit, num2str};
use super::report::{JobDescription, JobReport, RunReport, percent_of_agg, strerror};
use crate::stats::{
    BATCH_LABELS, DEPTH_LABELS, DataDir, GroupDirSummary, GroupSummary, JobStats, LAT_LABELS,
    LAT_M_LABELS, LatHistogram, LatStat,
};

/// The line fio prints for each job before it starts (`init.c`), without a
/// newline:
/// `t: (g=0): rw=write, bs=(R) 8192B-8192B, (W) 8192B-8192B, (T) 8192B-8192B, ioengine=psync, iodepth=1`.
pub fn banner(desc: &JobDescription, groupid: u32) -> String {
    let b = |v: u64| num2str(v, num::SIG_FIGS, 1, true, Unit::Byte);
    let [r, w, t] = desc.bs;
    format!(
        "{}: (g={}): rw={}, bs=(R) {}-{}, (W) {}-{}, (T) {}-{}, ioengine={}, iodepth={}",
        desc.name,
        groupid,
        desc.rw,
        b(r.0),
        b(r.1),
        b(w.0),
        b(w.1),
        b(t.0),
        b(t.1),
        desc.ioengine,
        desc.iodepth
    )
}

/// The end-of-run report: every job's block, then every group's
/// "Run status group" lines.
///
/// Starts with an empty line, as fio's report does after the progress
/// output. A job that did no I/O at all (and did not fail) prints nothing, and a direction is
/// shown only with bytes and runtime, as in fio.
pub fn render(report: &RunReport) -> String {
    let mut out = String::from("\n");
    for job in &report.jobs {
        job_status(&mut out, job, report.group(job.groupid), report.fio_compat);
    }
    for group in &report.groups {
        // fio takes a group's units and unified reporting from its first job.
        let first = report.jobs.iter().find(|j| j.groupid == group.groupid);
        let rates = Rates {
            iec_first: first.map_or(1024, |j| j.desc.kb_base) == 1024,
            bits: first.is_some_and(|j| j.desc.bits),
        };
        let unified = first.map_or(UnifiedRw::None, |j| j.unified);
        group_status(&mut out, group.groupid, &group.summary, rates, unified);
    }
    if !report.disk_util.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for disk in &report.disk_util {
            // A device made of others is indented once more, as fio does.
            let indent = if disk.slaves.is_some() { "    " } else { "  " };
            out.push_str(&format!("{indent}{}\n", disk_line(disk, report.fio_compat)));
        }
    }
    out
}

/// A device's line of fio's "Disk stats", without its indent, as the fio
/// `fio` writes it (sectors since 3.36), with its slaves' mean and busiest
/// utilization for a device made of others.
pub fn disk_line(disk: &crate::diskstats::DiskUtil, fio: crate::fio_version::FioVersion) -> String {
    let c = &disk.counters;
    let sectors = if fio.disk_sectors() {
        format!(", sectors={}/{}", c.read_sectors, c.write_sectors)
    } else {
        String::new()
    };
    let mut line = format!(
        "{}: ios={}/{}{sectors}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
        disk.name,
        c.read_ios,
        c.write_ios,
        c.read_merges,
        c.write_merges,
        c.read_ticks,
        c.write_ticks,
        c.time_in_queue,
        disk.util
    );
    if let Some(slaves) = &disk.slaves {
        let m = slaves.mean();
        let sectors = if fio.disk_sectors() {
            format!(", aggsectors={}/{}", m.read_sectors, m.write_sectors)
        } else {
            String::new()
        };
        line.push_str(&format!(
            ", aggrios={}/{}{sectors}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={:.2}%",
            m.read_ios,
            m.write_ios,
            m.read_merges,
            m.write_merges,
            m.read_ticks,
            m.write_ticks,
            m.time_in_queue,
            slaves.max_util
        ));
    }
    line
}

fn job_status(
    out: &mut String,
    job: &JobReport,
    rs: Option<&GroupSummary>,
    fio: crate::fio_version::FioVersion,
) {
    let s = &job.stats;
    let io_bytes: u64 = DataDir::ALL.iter().map(|&d| s.dir(d).io_bytes()).sum();
    // fio prints nothing for a job without I/O; a job that failed is shown
    // anyway, so that its err= line is not lost, and so are cpuio and exec
    // jobs, whose CPU line is what they did.
    let without_io = crate::options::PseudoEngine::named(&job.desc.ioengine).is_some();
    if io_bytes == 0 && s.issued_rw_ios() == 0 && job.error == 0 && !without_io {
        return;
    }
    let time = ctime(job.start_time);
    if job.error == 0 {
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={:2}: pid={}: {}",
            job.desc.name, job.groupid, job.jobs, job.error, job.pid, time
        );
    } else {
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={:2} (error={}): pid={}: {}",
            job.desc.name,
            job.groupid,
            job.jobs,
            job.error,
            strerror(job.error),
            job.pid,
            time
        );
    }
    let rates = Rates {
        iec_first: job.desc.kb_base == 1024,
        bits: job.desc.bits,
    };
    for dir in DataDir::ALL {
        if s.dir(dir).io_bytes() > 0 {
            let label = match (job.unified, dir) {
                (UnifiedRw::Mixed, DataDir::Read) => "mixed",
                _ => dir.name(),
            };
            dir_status(out, s, dir, rs, rates, label, fio);
        }
    }
    if job.unified == UnifiedRw::Both {
        let mixed = s.clone().into_mixed();
        if mixed.dir(DataDir::Read).io_bytes() > 0 {
            dir_status(out, &mixed, DataDir::Read, rs, rates, "mixed", fio);
        }
    }
    latencies(out, s);
    if !s.sync().lat().is_empty() {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        out.push_str(&lat_line("sync", s.sync().lat()));
        percentile_block(
            out,
            "sync",
            &s.sync().hist().percentiles(&s.config().percentile_list),
            s.config().percentile_precision,
        );
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        s.usr_cpu_percent(),
        s.sys_cpu_percent(),
        s.cpu().ctx,
        s.cpu().majf,
        s.cpu().minf
    );
    dist_line(
        out,
        "  IO depths    : ",
        &DEPTH_LABELS,
        &s.io_depth_distribution(),
    );
    dist_line(
        out,
        "     submit    : ",
        &BATCH_LABELS,
        &s.submit_distribution(),
    );
    dist_line(
        out,
        "     complete  : ",
        &BATCH_LABELS,
        &s.complete_distribution(),
    );
    let (r, w, t) = (
        s.dir(DataDir::Read),
        s.dir(DataDir::Write),
        s.dir(DataDir::Trim),
    );
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        r.total_ios(),
        w.total_ios(),
        t.total_ios(),
        s.sync().total_ios(),
        r.short_ios(),
        w.short_ios(),
        t.short_ios(),
        r.drop_ios(),
        w.drop_ios(),
        t.drop_ios()
    );
    if let Some(errors) = job.errors {
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            errors.total,
            errors.first,
            strerror(errors.first)
        );
    }
    // hybrio's own line: transfers that came back short because the rest
    // failed (a write that filled the disk), which `short=` alone hides.
    let cut = &job.short_errors;
    if !cut.is_empty() {
        let first = if cut.first_errno[0] != 0 {
            cut.first_errno[0]
        } else {
            cut.first_errno[1]
        };
        let _ = writeln!(
            out,
            "     short by error: read={}, write={}, first_error={}/<{}>",
            cut.count[0],
            cut.count[1],
            first,
            strerror(first)
        );
    }
    let (target, window, percentile, depth) = match &job.latency_target {
        Some(t) => (t.target_ns, t.window_us, t.percentile, t.depth),
        None => (0, 0, 100.0, job.desc.iodepth),
    };
    let _ = writeln!(
        out,
        "     latency   : target={target}, window={window}, percentile={percentile:.2}%, depth={depth}"
    );
    if let Some(steady) = &job.steady {
        let (iops_mean, bw_mean, lat_mean) = steady.means();
        let rate = |pow2| num2str(bw_mean / 1024, num::SIG_FIGS, 1024, pow2, Unit::BytePerSec);
        // fio 3.42 picks the unit with no deviation, so always nsec.
        let lat = if steady.measure() == crate::stats::Measure::Lat {
            format!(
                ", lat={}nsec",
                num2str(lat_mean, num::SIG_FIGS, 1, false, Unit::None)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  steadystate  : attained={}, bw={} ({}), iops={}{lat}, {}{}={:.3}{}",
            if steady.attained { "yes" } else { "no" },
            rate(true),
            rate(false),
            num2str(iops_mean, num::SIG_FIGS, 1, false, Unit::None),
            steady.measure_name(),
            if steady.by_slope() {
                " slope"
            } else {
                " mean dev"
            },
            steady.criterion_value,
            if steady.settings.percent { "%" } else { "" },
        );
    }
    // hybrio's own line: the engine as the system set it up (io_uring's ring
    // flags, libaio's synchronous buffered I/O, the emulated device).
    if let Some(engine) = &job.engine {
        let _ = writeln!(out, "     engine    : {engine}");
    }
    // The adaptive engine's choices: what it did, not only how fast.
    if let Some(p) = &job.paths {
        let total = (p.inline + p.asynchronous).max(1) as f64;
        // What exploring cost, against the job's time (merged jobs add both).
        let job_ns = job.stats.job_runtime_ms().max(1) as f64 * 1e6;
        let _ = writeln!(
            out,
            "     paths     : inline={} ({:.1}%), async={} ({:.1}%), explored={}, switches={}, learning={:.2}ms ({:.1}% of the job)",
            p.inline,
            100.0 * p.inline as f64 / total,
            p.asynchronous,
            100.0 * p.asynchronous as f64 / total,
            p.explored,
            p.switches,
            p.learning_ns as f64 / 1e6,
            100.0 * p.learning_ns as f64 / job_ns,
        );
        if p.uncached > 0 || p.read_ahead > 0 {
            let _ = writeln!(
                out,
                "     caching   : uncached={} ({:.1}%) by the engine's choice, read ahead={} (uncached=auto)",
                p.uncached,
                100.0 * p.uncached as f64 / total,
                super::num::bytes(p.read_ahead, true),
            );
        }
    }
}

/// How rates print: binary prefixes first (fio's default `kb_base`) or
/// decimal ones, and bytes or, for a network job, bits per second (fio's
/// `unit_base` for its bit-based `net` engine).
#[derive(Debug, Clone, Copy)]
struct Rates {
    iec_first: bool,
    bits: bool,
}

impl Rates {
    fn rate(self, bytes_per_sec: u64, iec: bool) -> String {
        if self.bits {
            num::bw_bits(bytes_per_sec, iec)
        } else {
            num::bw(bytes_per_sec, iec)
        }
    }

    /// The rate as printed first.
    fn first(self, bytes_per_sec: u64) -> String {
        self.rate(bytes_per_sec, self.iec_first)
    }

    /// The rate as printed second, in parentheses.
    fn second(self, bytes_per_sec: u64) -> String {
        self.rate(bytes_per_sec, !self.iec_first)
    }
}

/// `iec_first`: rates and sizes in KiB/MiB first and kB/MB in parentheses, as
/// fio prints them with its default `kb_base`; the other way round with 1000.
fn dir_status(
    out: &mut String,
    s: &JobStats,
    dir: DataDir,
    rs: Option<&GroupSummary>,
    rates: Rates,
    label: &str,
    fio: crate::fio_version::FioVersion,
) {
    let iec_first = rates.iec_first;
    let d = s.dir(dir);
    let runt = d.runtime_ms();
    if runt == 0 {
        return;
    }
    let bw = d.bw_bytes_per_sec();
    let iops =
        u64::try_from(1000 * u128::from(d.total_ios()) / u128::from(runt)).unwrap_or(u64::MAX);
    // fio before 3.42 appends the zone reset count to every write line.
    let post = if dir == DataDir::Write && fio.zone_resets_on_every_write_line() {
        "; 0 zone resets"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec){}",
        label,
        num::count(iops),
        rates.first(bw),
        rates.second(bw),
        num::bytes(d.io_bytes(), iec_first),
        runt,
        post
    );
    for (name, stat) in [("slat", d.slat()), ("clat", d.clat()), (" lat", d.lat())] {
        if !stat.is_empty() {
            out.push_str(&lat_line(name, &stat));
        }
    }
    let cfg = s.config();
    let kinds: [(&str, bool, LatStat, Option<&LatHistogram>); 3] = [
        ("slat", cfg.slat_percentiles, d.slat(), d.slat_hist()),
        ("clat", cfg.clat_percentiles, d.clat(), Some(d.clat_hist())),
        ("lat", cfg.lat_percentiles, d.lat(), d.lat_hist()),
    ];
    for (name, enabled, stat, hist) in kinds {
        if let (true, false, Some(h)) = (enabled, stat.is_empty(), hist) {
            percentile_block(
                out,
                name,
                &h.percentiles(&cfg.percentile_list),
                cfg.percentile_precision,
            );
        }
    }
    let bws = d.bw_samples();
    if !bws.is_empty() {
        let agg = rs.and_then(|g| g.dir(dir)).map(|g| g.agg_bw);
        out.push_str(&bw_line(
            bws.min(),
            bws.max(),
            percent_of_agg(agg, bws.mean()),
            bws.mean(),
            bws.stddev(),
            bws.count(),
        ));
    }
    let io = d.iops_samples();
    if !io.is_empty() {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            io.min(),
            io.max(),
            io.mean(),
            io.stddev(),
            io.count()
        );
    }
}

/// A `display_lat()` line, the unit chosen as fio's `nsec_to_msec()` /
/// `nsec_to_usec()` do.
fn lat_line(name: &str, stat: &LatStat) -> String {
    lat_line_values(name, stat.min(), stat.max(), stat.mean(), stat.stddev())
}

fn lat_line_values(name: &str, min: u64, max: u64, mean: f64, dev: f64) -> String {
    let (unit, div) = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        ("msec", 1_000_000u64)
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    format!(
        "    {name} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}\n",
        num::lat_minmax(min / div),
        num::lat_minmax(max / div),
        mean / div as f64,
        dev / div as f64
    )
}

/// The `bw (  KiB/s):` line from samples in KiB/s; shown in MiB/s (min and
/// max truncated) when the mean exceeds 1024 * 1024 KiB/s, as fio does.
fn bw_line(min: u64, max: u64, per: f64, mean: f64, dev: f64, samples: u64) -> String {
    let (mut min, mut max, mut mean, mut dev, mut unit) = (min, max, mean, dev, "KiB");
    if mean > 1024.0 * 1024.0 {
        min = (min as f64 / 1024.0) as u64;
        max = (max as f64 / 1024.0) as u64;
        mean /= 1024.0;
        dev /= 1024.0;
        unit = "MiB";
    }
    format!(
        "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={per:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={samples}\n"
    )
}

/// fio's `show_clat_percentiles()`: unit from the smallest and largest
/// reported value, values scaled by rounding up, `per_line` entries a line.
fn percentile_block(out: &mut String, pre: &str, values: &[(f64, u64)], precision: u32) {
    if values.is_empty() {
        return;
    }
    let minv = values.iter().map(|v| v.1).min().unwrap_or(0);
    let maxv = values.iter().map(|v| v.1).max().unwrap_or(0);
    let (scale_down, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    let time_width = ((((maxv / divisor) as f64).log10() + 1.0) as i32).max(5) as usize;
    let precision = precision as usize;
    let per_line = (73 / (precision + 10 + time_width)).max(1);
    for (j, &(p, v)) in values.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let is_last = j == values.len() - 1;
        let mut v = v;
        for _ in 0..scale_down {
            v = v.div_ceil(1000);
        }
        let _ = write!(
            out,
            " {p:>w$.precision$}th=[{v:>time_width$}]{}",
            if is_last { '\n' } else { ',' },
            w = precision + 3
        );
        if is_last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// The `lat (nsec|usec|msec)` lines (fio `show_latencies()`).
fn latencies(out: &mut String, s: &JobStats) {
    let d = s.lat_distribution();
    lat_dist_lines(out, "nsec", &LAT_LABELS, &d.nsec);
    lat_dist_lines(out, "usec", &LAT_LABELS, &d.usec);
    lat_dist_lines(out, "msec", &LAT_M_LABELS, &d.msec);
}

fn lat_dist_lines(out: &mut String, unit: &str, labels: &[&str], values: &[f64]) {
    let mut new_line = true;
    let mut shown = false;
    let mut line = 0;
    for (label, &v) in labels.iter().zip(values) {
        if v <= 0.0 {
            continue;
        }
        shown = true;
        if new_line {
            if line != 0 {
                out.push('\n');
            }
            let _ = write!(out, "  lat ({unit})   : ");
            new_line = false;
            line = 0;
        }
        if line != 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{label}={v:3.2}%");
        line += 1;
        if line == 5 {
            new_line = true;
        }
    }
    if shown {
        out.push('\n');
    }
}

fn dist_line(out: &mut String, head: &str, labels: &[&str], values: &[f64]) {
    out.push_str(head);
    for (i, (label, v)) in labels.iter().zip(values).enumerate() {
        if i != 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{label}={v:3.1}%");
    }
    out.push('\n');
}

/// fio's `show_group_stats()`.
fn group_status(
    out: &mut String,
    groupid: u32,
    g: &GroupSummary,
    rates: Rates,
    unified: UnifiedRw,
) {
    let iec_first = rates.iec_first;
    let _ = write!(out, "\nRun status group {groupid} (all jobs):\n");
    let line = |out: &mut String, label: &str, d: &GroupDirSummary| {
        let _ = writeln!(
            out,
            "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            rates.first(d.agg_bw),
            rates.second(d.agg_bw),
            rates.first(d.min_bw),
            rates.first(d.max_bw),
            rates.second(d.min_bw),
            rates.second(d.max_bw),
            num::bytes(d.io_bytes, iec_first),
            num::bytes(d.io_bytes, !iec_first),
            d.min_run_ms,
            d.max_run_ms
        );
    };
    for (dir, label) in DataDir::ALL
        .into_iter()
        .zip(["   READ", "  WRITE", "   TRIM"])
    {
        if let Some(d) = g.dir(dir) {
            let label = if unified == UnifiedRw::Mixed {
                "  MIXED"
            } else {
                label
            };
            line(out, label, d);
        }
    }
    // With both, fio adds the directions up in one more line: rates and
    // bytes summed, the lowest and highest of their ranges.
    let dirs: Vec<&GroupDirSummary> = DataDir::ALL.iter().filter_map(|&d| g.dir(d)).collect();
    if unified == UnifiedRw::Both && !dirs.is_empty() {
        let sum = GroupDirSummary {
            agg_bw: dirs.iter().map(|d| d.agg_bw).sum(),
            min_bw: dirs.iter().map(|d| d.min_bw).min().unwrap_or(0),
            max_bw: dirs.iter().map(|d| d.max_bw).max().unwrap_or(0),
            io_bytes: dirs.iter().map(|d| d.io_bytes).sum(),
            min_run_ms: dirs.iter().map(|d| d.min_run_ms).min().unwrap_or(0),
            max_run_ms: dirs.iter().map(|d| d.max_run_ms).max().unwrap_or(0),
        };
        line(out, "  MIXED", &sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testutil;
    use crate::stats::{DEFAULT_PERCENTILES, GroupDirSummary, StatsConfig};

    /// A device's "Disk stats" line as each fio writes it: sectors since
    /// 3.36; a device made of others with its slaves' mean and the busiest
    /// one's utilization after its own figures.
    #[test]
    fn a_disk_line_is_the_fio_versions_and_a_made_up_device_carries_its_slaves() {
        use crate::diskstats::{DiskCounters, DiskUtil, SlavesAggregate};
        use crate::fio_version::FioVersion;
        let counters = DiskCounters {
            read_ios: 4,
            write_ios: 2,
            read_sectors: 32,
            write_sectors: 16,
            time_in_queue: 3,
            ..Default::default()
        };
        let mut disk = DiskUtil {
            name: "md0".into(),
            counters,
            util: 12.5,
            slaves: None,
        };
        let v = |s: &str| FioVersion::parse(s).unwrap();
        assert_eq!(
            disk_line(&disk, v("3.42")),
            "md0: ios=4/2, sectors=32/16, merge=0/0, ticks=0/0, in_queue=3, util=12.50%"
        );
        assert_eq!(
            disk_line(&disk, v("3.33")),
            "md0: ios=4/2, merge=0/0, ticks=0/0, in_queue=3, util=12.50%"
        );
        disk.slaves = Some(SlavesAggregate {
            sum: DiskCounters {
                read_ios: 8,
                write_sectors: 64,
                ..counters
            },
            count: 2,
            max_util: 50.0,
        });
        assert!(
            disk_line(&disk, v("3.42")).ends_with(
                ", aggrios=4/1, aggsectors=16/32, aggrmerge=0/0, aggrticks=0/0, aggrin_queue=1, aggrutil=50.00%"
            ),
            "{}",
            disk_line(&disk, v("3.42"))
        );
        assert!(
            disk_line(&disk, v("3.33")).ends_with(
                "util=12.50%, aggrios=4/1, aggrmerge=0/0, aggrticks=0/0, aggrin_queue=1, aggrutil=50.00%"
            )
        );
    }

    fn desc(name: &str, rw: &str, bs: [(u64, u64); 3], engine: &str, depth: u32) -> JobDescription {
        JobDescription {
            name: name.to_string(),
            rw: rw.to_string(),
            bs,
            ioengine: engine.to_string(),
            iodepth: depth,
            kb_base: 1024,
            bits: false,
        }
    }

    #[test]
    fn banner_as_fio() {
        // seed 000 and the distro fio-3.33
        assert_eq!(
            banner(&desc("t", "write", [(8192, 8192); 3], "io_uring", 64), 0),
            "t: (g=0): rw=write, bs=(R) 8192B-8192B, (W) 8192B-8192B, (T) 8192B-8192B, ioengine=io_uring, iodepth=64"
        );
        assert_eq!(
            banner(
                &desc(
                    "b",
                    "randrw",
                    [(4096, 4096), (65536, 65536), (65536, 65536)],
                    "null",
                    1
                ),
                0
            ),
            "b: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 64.0KiB-64.0KiB, (T) 64.0KiB-64.0KiB, ioengine=null, iodepth=1"
        );
        assert_eq!(
            banner(&desc("b", "randrw", [(4096, 16384); 3], "null", 1), 2),
            "b: (g=2): rw=randrw, bs=(R) 4096B-16.0KiB, (W) 4096B-16.0KiB, (T) 4096B-16.0KiB, ioengine=null, iodepth=1"
        );
        assert_eq!(
            banner(&desc("b", "read", [(1 << 20, 1 << 20); 3], "null", 4), 0),
            "b: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=null, iodepth=4"
        );
    }

    #[test]
    fn lat_lines_as_fio() {
        // fio.md 3.33 sample and seed 000
        assert_eq!(
            lat_line_values("slat", 32, 4_050_100, 502.03, 20107.89),
            "    slat (nsec): min=32, max=4050.1k, avg=502.03, stdev=20107.89\n"
        );
        assert_eq!(
            lat_line_values("clat", 40, 1_400_698, 9947.92, 2606.65),
            "    clat (nsec): min=40, max=1400.7k, avg=9947.92, stdev=2606.65\n"
        );
        // min > 2000, max > 99999, stdev > 1000: usec, integer division
        assert_eq!(
            lat_line_values(" lat", 4_321, 1_403_999, 12_940.0, 3_280.0),
            "     lat (usec): min=4, max=1403, avg=12.94, stdev= 3.28\n"
        );
        assert_eq!(
            lat_line_values("clat", 6_100, 25_435_000, 164_910.0, 104_690.0),
            "    clat (usec): min=6, max=25435, avg=164.91, stdev=104.69\n"
        );
        // stdev too small for usec: stays nsec
        assert_eq!(
            lat_line_values("clat", 1612, 6_649_700, 3913.39, 3170.65),
            "    clat (nsec): min=1612, max=6649.7k, avg=3913.39, stdev=3170.65\n"
        );
        assert_eq!(
            lat_line_values("clat", 2_500_000, 900_000_000, 30_000_000.0, 5_000_000.0),
            "    clat (msec): min=2, max=900, avg=30.00, stdev= 5.00\n"
        );
    }

    #[test]
    fn bw_lines_as_fio() {
        assert_eq!(
            bw_line(192_408, 1_031_483, 79.92, 468_998.16, 108_691.70, 199),
            "   bw (  KiB/s): min=192408, max=1031483, per=79.92%, avg=468998.16, stdev=108691.70, samples=199\n"
        );
        // above 1 GiB/s in KiB: MiB/s, min/max truncated
        assert_eq!(
            bw_line(1_012_736, 2_168_832, 82.26, 1_542_430.72, 173_629.44, 193),
            "   bw (  MiB/s): min=  989, max= 2118, per=82.26%, avg=1506.28, stdev=169.56, samples=193\n"
        );
    }

    #[test]
    fn percentile_block_nsec_as_fio_3_33() {
        // fio.md sample (fio-3.33 null engine), nsec, 4 a line
        let vals: Vec<(f64, u64)> = DEFAULT_PERCENTILES
            .iter()
            .copied()
            .zip([
                249, 253, 255, 262, 270, 278, 286, 294, 302, 318, 334, 350, 446, 510, 1160, 7904,
                17280,
            ])
            .collect();
        let mut out = String::new();
        percentile_block(&mut out, "clat", &vals, 2);
        assert_eq!(
            out,
            "    clat percentiles (nsec):\n\
             \x20    |  1.00th=[  249],  5.00th=[  253], 10.00th=[  255], 20.00th=[  262],\n\
             \x20    | 30.00th=[  270], 40.00th=[  278], 50.00th=[  286], 60.00th=[  294],\n\
             \x20    | 70.00th=[  302], 80.00th=[  318], 90.00th=[  334], 95.00th=[  350],\n\
             \x20    | 99.00th=[  446], 99.50th=[  510], 99.90th=[ 1160], 99.95th=[ 7904],\n\
             \x20    | 99.99th=[17280]\n"
        );
    }

    #[test]
    fn percentile_block_usec_rounds_up() {
        // seed 000 batched run: "clat percentiles (usec)", values rounded up
        let ns = [
            59_136, 67_072, 77_312, 93_696, 107_008, 126_464, 142_336, 179_200, 209_920, 226_304,
            264_192, 301_056, 378_880, 440_320, 561_152, 610_304, 815_104,
        ];
        let vals: Vec<(f64, u64)> = DEFAULT_PERCENTILES.iter().copied().zip(ns).collect();
        let mut out = String::new();
        percentile_block(&mut out, "clat", &vals, 2);
        assert_eq!(
            out,
            "    clat percentiles (usec):\n\
             \x20    |  1.00th=[   60],  5.00th=[   68], 10.00th=[   78], 20.00th=[   94],\n\
             \x20    | 30.00th=[  108], 40.00th=[  127], 50.00th=[  143], 60.00th=[  180],\n\
             \x20    | 70.00th=[  210], 80.00th=[  227], 90.00th=[  265], 95.00th=[  302],\n\
             \x20    | 99.00th=[  379], 99.50th=[  441], 99.90th=[  562], 99.95th=[  611],\n\
             \x20    | 99.99th=[  816]\n"
        );
    }

    #[test]
    fn percentile_block_precision_and_width() {
        // distro fio-3.33 with percentile_list=99.999:50:1 and 50:90
        let mut out = String::new();
        percentile_block(
            &mut out,
            "clat",
            &[(1.0, 49), (50.0, 60), (99.999, 9280)],
            3,
        );
        assert_eq!(
            out,
            "    clat percentiles (nsec):\n     |  1.000th=[   49], 50.000th=[   60], 99.999th=[ 9280]\n"
        );
        out.clear();
        percentile_block(&mut out, "clat", &[(50.0, 60), (90.0, 60)], 0);
        assert_eq!(
            out,
            "    clat percentiles (nsec):\n     |  50th=[   60],  90th=[   60]\n"
        );
        // a 7-digit value (nsec kept: the smallest is below 2000) widens the
        // column and leaves 3 a line
        out.clear();
        let vals = [
            (1.0, 1500),
            (5.0, 1_234_567),
            (10.0, 1_234_567),
            (20.0, 1_234_567),
        ];
        percentile_block(&mut out, "lat", &vals, 2);
        assert_eq!(
            out,
            "    lat percentiles (nsec):\n\
             \x20    |  1.00th=[   1500],  5.00th=[1234567], 10.00th=[1234567],\n\
             \x20    | 20.00th=[1234567]\n"
        );
        // scaled to usec when the smallest is above 2000 and the largest above 99999
        out.clear();
        percentile_block(&mut out, "lat", &[(50.0, 123_456), (99.0, 123_456)], 2);
        assert_eq!(
            out,
            "    lat percentiles (usec):\n     | 50.00th=[  124], 99.00th=[  124]\n"
        );
    }

    #[test]
    fn latency_distribution_lines() {
        let mut out = String::new();
        let mut n = [0.0; 10];
        n[4] = 0.01;
        n[5] = 0.01;
        n[6] = 0.01;
        n[7] = 0.01;
        n[8] = 0.01;
        n[9] = 0.01;
        lat_dist_lines(&mut out, "nsec", &LAT_LABELS, &n);
        // seed 000: six buckets wrap after five
        assert_eq!(
            out,
            "  lat (nsec)   : 50=0.01%, 100=0.01%, 250=0.01%, 500=0.01%, 750=0.01%\n  lat (nsec)   : 1000=0.01%\n"
        );
        out.clear();
        lat_dist_lines(&mut out, "usec", &LAT_LABELS, &[0.0; 10]);
        assert_eq!(out, "");
    }

    #[test]
    fn group_lines_as_fio() {
        // seed 000 sync run
        let io = 23_437_892u64 * 8192;
        let bw = 1000 * io / 100_001;
        let g = GroupSummary {
            dirs: [
                None,
                Some(GroupDirSummary {
                    agg_bw: bw,
                    min_bw: bw,
                    max_bw: bw,
                    io_bytes: io,
                    min_run_ms: 100_001,
                    max_run_ms: 100_001,
                }),
                None,
            ],
        };
        let mut out = String::new();
        group_status(
            &mut out,
            0,
            &g,
            Rates {
                iec_first: true,
                bits: false,
            },
            UnifiedRw::None,
        );
        assert_eq!(
            out,
            "\nRun status group 0 (all jobs):\n  WRITE: bw=1831MiB/s (1920MB/s), 1831MiB/s-1831MiB/s (1920MB/s-1920MB/s), io=179GiB (192GB), run=100001-100001msec\n"
        );
    }

    /// The synthetic job of `testutil` (slat percentiles on). Percentile
    /// values were checked against a C transcription of fio's
    /// `plat_val_to_idx()`/`plat_idx_to_val()`/`calc_clat_percentiles()`
    /// fed the same samples; the rest is worked out in the comments.
    const SYNTHETIC: &str = "  read: IOPS=500, BW=2000KiB/s (2048kB/s)(4000KiB/2000msec)
    slat (nsec): min=100, max=109, avg=104.50, stdev= 2.87
    clat (nsec): min=1000, max=1999, avg=1499.50, stdev=288.82
     lat (nsec): min=1100, max=2108, avg=1604.00, stdev=288.86
    slat percentiles (nsec):
     |  1.00th=[  100],  5.00th=[  100], 10.00th=[  100], 20.00th=[  101],
     | 30.00th=[  102], 40.00th=[  103], 50.00th=[  104], 60.00th=[  105],
     | 70.00th=[  106], 80.00th=[  107], 90.00th=[  108], 95.00th=[  109],
     | 99.00th=[  109], 99.50th=[  109], 99.90th=[  109], 99.95th=[  109],
     | 99.99th=[  109]
    clat percentiles (nsec):
     |  1.00th=[ 1012],  5.00th=[ 1048], 10.00th=[ 1096], 20.00th=[ 1192],
     | 30.00th=[ 1304], 40.00th=[ 1400], 50.00th=[ 1496], 60.00th=[ 1592],
     | 70.00th=[ 1704], 80.00th=[ 1800], 90.00th=[ 1896], 95.00th=[ 1944],
     | 99.00th=[ 1992], 99.50th=[ 1992], 99.90th=[ 1992], 99.95th=[ 1992],
     | 99.99th=[ 1992]
   bw (  KiB/s): min= 4000, max= 4000, per=100.00%, avg=4000.00, stdev= 0.00, samples=2
   iops        : min= 1000, max= 1000, avg=1000.00, stdev= 0.00, samples=2
  write: IOPS=500, BW=2000KiB/s (2048kB/s)(4000KiB/2000msec)
    slat (nsec): min=200, max=200, avg=200.00, stdev= 0.00
    clat (nsec): min=20000, max=29990, avg=24995.00, stdev=2888.19
     lat (nsec): min=20200, max=30190, avg=25195.00, stdev=2888.19
    slat percentiles (nsec):
     |  1.00th=[  201],  5.00th=[  201], 10.00th=[  201], 20.00th=[  201],
     | 30.00th=[  201], 40.00th=[  201], 50.00th=[  201], 60.00th=[  201],
     | 70.00th=[  201], 80.00th=[  201], 90.00th=[  201], 95.00th=[  201],
     | 99.00th=[  201], 99.50th=[  201], 99.90th=[  201], 99.95th=[  201],
     | 99.99th=[  201]
    clat percentiles (nsec):
     |  1.00th=[20096],  5.00th=[20608], 10.00th=[20864], 20.00th=[21888],
     | 30.00th=[22912], 40.00th=[23936], 50.00th=[24960], 60.00th=[25984],
     | 70.00th=[27008], 80.00th=[28032], 90.00th=[29056], 95.00th=[29568],
     | 99.00th=[29824], 99.50th=[29824], 99.90th=[30080], 99.95th=[30080],
     | 99.99th=[30080]
   bw (  KiB/s): min= 4000, max= 4000, per=100.00%, avg=4000.00, stdev= 0.00, samples=2
   iops        : min= 1000, max= 1000, avg=1000.00, stdev= 0.00, samples=2
  lat (usec)   : 2=50.00%, 50=50.00%
  fsync/fdatasync/sync_file_range:
    sync (usec): min=150, max=350, avg=250.00, stdev=100.00
    sync percentiles (usec):
     |  1.00th=[  151],  5.00th=[  151], 10.00th=[  151], 20.00th=[  151],
     | 30.00th=[  151], 40.00th=[  251], 50.00th=[  251], 60.00th=[  251],
     | 70.00th=[  351], 80.00th=[  351], 90.00th=[  351], 95.00th=[  351],
     | 99.00th=[  351], 99.50th=[  351], 99.90th=[  351], 99.95th=[  351],
     | 99.99th=[  351]
  cpu          : usr=75.00%, sys=12.50%, ctx=42, majf=0, minf=12
  IO depths    : 1=0.0%, 2=0.0%, 4=0.0%, 8=100.0%, 16=0.0%, 32=0.0%, >=64=0.0%
     submit    : 0=0.0%, 4=0.0%, 8=100.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     complete  : 0=0.0%, 4=0.0%, 8=100.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     issued rwts: total=1000,1000,0,3 short=0,1,0,0 dropped=0,0,0,0
     latency   : target=0, window=0, percentile=100.00%, depth=8

Run status group 0 (all jobs):
   READ: bw=2000KiB/s (2048kB/s), 2000KiB/s-2000KiB/s (2048kB/s-2048kB/s), io=4000KiB (4096kB), run=2000-2000msec
  WRITE: bw=2000KiB/s (2048kB/s), 2000KiB/s-2000KiB/s (2048kB/s-2048kB/s), io=4000KiB (4096kB), run=2000-2000msec
";

    #[test]
    fn synthetic_job_report() {
        // Worked figures: 1000 reads and 1000 writes of 4 KiB in 2000 ms ->
        // IOPS=500, 2048000 B/s = 2000KiB/s = 2048kB/s, 4096000 B = 4000KiB.
        // Read slat 100..109 (each 100x): sd = sqrt(8.25 * 1000/999) = 2.87;
        // clat 1000..1999: sd = sqrt(83333.25 * 1000/999) = 288.82; lat adds
        // var(slat) + 2 cov(i, i%10) = 8.25 + 16.5 -> 288.86. Write clat
        // 20000 + 10i stays in nsec (max 29990 is not above 99999).
        // Samples at 500 and 1000 ms: 500 I/Os each -> 4000 KiB/s and 1000
        // IOPS; 4000 KiB/s is above the 2000 KiB/s aggregate -> per=100.00%.
        // Sync 150/250/350 us: usec (min > 2000, max > 99999, sd > 1000).
        // Latency distribution from clat: reads in 1-2 us, writes in 20-50 us.
        // CPU 1.5 s and 0.25 s of 2 s. 250 submits of 8 at depth 8 = 2000
        // I/Os = all issued ones.
        let cfg = StatsConfig {
            slat_percentiles: true,
            ..StatsConfig::default()
        };
        let text = render(&testutil::report(cfg.clone()));
        let (head, body) = text.split_once("pid=4242: ").unwrap();
        assert_eq!(head, "\nj1: (groupid=0, jobs=1): err= 0: ");
        // the header ends with ctime() of the start time in the local zone
        let (time, body) = body.split_once('\n').unwrap();
        assert_eq!(time.len(), 24, "{time}");
        assert!(time.ends_with(" 2020") && time.contains("Feb 1"), "{time}");
        assert_eq!(body, SYNTHETIC);
        // fio before 3.42 ends each write line with the zone resets.
        let mut older = testutil::report(cfg);
        older.fio_compat = crate::fio_version::FioVersion::OLDEST;
        let write_line = "(4000KiB/2000msec); 0 zone resets\n    slat (nsec): min=200";
        assert!(render(&older).contains(write_line));
    }

    #[test]
    fn idle_job_prints_nothing() {
        let mut report = testutil::report(StatsConfig::default());
        report.jobs[0].stats = JobStats::new(StatsConfig::default(), 0);
        report.groups.clear();
        assert_eq!(render(&report), "\n");
    }

    #[test]
    fn kb_base_1000_prints_si_units_first() {
        let mut report = testutil::report(StatsConfig::default());
        let iec = render(&report);
        report.jobs[0].desc.kb_base = 1000;
        let si = render(&report);
        let line = |text: &str, start: &str| {
            text.lines()
                .find(|l| l.trim_start().starts_with(start))
                .unwrap()
                .to_string()
        };
        // The same figures, the parenthesised unit first.
        assert!(line(&iec, "READ:").contains("KiB/s ("), "{iec}");
        assert!(
            line(&si, "READ:").starts_with("   READ: bw=") && line(&si, "READ:").contains("kB/s ("),
            "{si}"
        );
        assert!(
            line(&si, "read:").contains("kB/s (") && line(&si, "read:").contains("KiB/s)"),
            "{si}"
        );
    }

    #[test]
    fn group_reporting_merge() {
        // two identical jobs merged as with group_reporting: counts double,
        // runtime stays 2000 ms, the bandwidth samples add up (8000 KiB/s
        // from two 4000 KiB/s jobs), and the group line is computed from the
        // merged stats as fio does, so min = max = aggregate
        let mut report = testutil::report(StatsConfig::default());
        let one = report.jobs[0].stats.clone();
        report.jobs[0].stats.merge(&one);
        report.jobs[0].jobs = 2;
        report.groups[0].summary = crate::stats::group_summary(&[&report.jobs[0].stats]);
        let text = render(&report);
        assert!(text.contains("j1: (groupid=0, jobs=2): err= 0: pid=4242: "));
        assert!(text.contains("  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(8000KiB/2000msec)\n"));
        assert!(text.contains(
            "   bw (  KiB/s): min= 8000, max= 8000, per=100.00%, avg=8000.00, stdev= 0.00, samples=4\n"
        ));
        assert!(
            text.contains("  cpu          : usr=75.00%, sys=12.50%, ctx=84, majf=0, minf=24\n")
        );
        assert!(
            text.contains("     issued rwts: total=2000,2000,0,6 short=0,2,0,0 dropped=0,0,0,0\n")
        );
        assert!(text.contains(
            "   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=8000KiB (8192kB), run=2000-2000msec\n"
        ));
    }

    #[test]
    fn transfers_cut_short_by_an_error_show_its_errno() {
        let mut report = testutil::report(StatsConfig::default());
        assert!(!render(&report).contains("short by error"), "none, no line");
        report.jobs[0].short_errors.record(true, 28);
        report.jobs[0].short_errors.record(true, 5);
        let text = render(&report);
        assert!(
            text.contains(
                "     issued rwts: total=1000,1000,0,3 short=0,1,0,0 dropped=0,0,0,0\n     short by error: read=0, write=2, first_error=28/<No space left on device>\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn error_header() {
        let mut report = testutil::report(StatsConfig::default());
        report.jobs[0].error = 5;
        let text = render(&report);
        assert!(
            text.contains("j1: (groupid=0, jobs=1): err= 5 (error=Input/output error): pid=4242: ")
        );
    }
}
