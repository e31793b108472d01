//! `--output-format=terse` (`--minimal`): fio's semicolon-separated format,
//! version 3, one line per reported job, field for field as fio 3.33 prints
//! it (`show_thread_status_terse_all()`), so that scripts which cut fields out
//! of fio's terse lines by position read hybrio's the same way.
//!
//! Layout: version, fio version, job name, group, error; then for reads and
//! for writes (version 3 has no trim fields) total KiB, KiB/s, IOPS, runtime,
//! slat/clat min-max-mean-stdev in usec, 20 `P%=usec` percentile fields, lat
//! min-max-mean-stdev, bandwidth min-max-percent of group-mean-stdev; then
//! CPU, 7 I/O-depth shares, 10 usec and 12 msec latency shares, each disk's
//! counters, and, with `continue_on_error`, the error count and first error.

use std::fmt::Write;

use crate::diskstats::DiskUtil;
use crate::options::UnifiedRw;
use crate::stats::{DataDir, GroupSummary, JobStats, LatStat};

use super::report::{JobReport, RunReport};

/// The terse format's version: the one fio writes by default.
pub const TERSE_VERSION: u32 = 3;

/// fio writes exactly this many percentile fields, padding with `0%=0`.
const PERCENTILE_FIELDS: usize = 20;

/// Renders every reported job as one terse line, in job order. Jobs that did
/// no I/O are written too: fio's terse output, unlike its normal output, has
/// a line for every job.
pub fn render(report: &RunReport) -> String {
    let mut out = String::new();
    for job in &report.jobs {
        job_line(&mut out, job, report.group(job.groupid), &report.disk_util);
    }
    out
}

fn job_line(out: &mut String, job: &JobReport, group: Option<&GroupSummary>, disks: &[DiskUtil]) {
    let s = &job.stats;
    let _ = write!(
        out,
        "{TERSE_VERSION};{};{};{};{}",
        fio_version(),
        job.desc.name,
        job.groupid,
        job.error
    );
    // unified_rw_reporting: with mixed, the summed directions take the read
    // fields and there are no write fields; with both, they follow the
    // write fields (fio's order).
    dir_fields(out, s, DataDir::Read, group);
    if job.unified != UnifiedRw::Mixed {
        dir_fields(out, s, DataDir::Write, group);
    }
    if job.unified == UnifiedRw::Both {
        dir_fields(out, &s.clone().into_mixed(), DataDir::Read, group);
    }
    let _ = write!(
        out,
        ";{:.6}%;{:.6}%;{};{};{}",
        s.usr_cpu_percent(),
        s.sys_cpu_percent(),
        s.cpu().ctx,
        s.cpu().majf,
        s.cpu().minf
    );
    for share in s.io_depth_distribution().iter().take(7) {
        let _ = write!(out, ";{share:3.1}%");
    }
    let lat = s.lat_distribution();
    // Terse keeps the usec buckets of fio before nanosecond buckets existed:
    // everything under a microsecond counts in the first (<= 2 us) one.
    let mut usec = lat.usec;
    usec[0] += lat.nsec.iter().sum::<f64>();
    for share in usec.iter().chain(lat.msec.iter()) {
        let _ = write!(out, ";{share:3.2}%");
    }
    for disk in disks {
        let c = &disk.counters;
        let _ = write!(
            out,
            ";{};{};{};{};{};{};{};{};{:3.2}%",
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
            let _ = write!(
                out,
                ";slaves;{};{};{};{};{};{};{};{:3.2}%",
                m.read_ios,
                m.write_ios,
                m.read_merges,
                m.write_merges,
                m.read_ticks,
                m.write_ticks,
                m.time_in_queue,
                slaves.max_util
            );
        }
    }
    if let Some(errors) = job.errors {
        let _ = write!(out, ";{};{}", errors.total, errors.first);
    }
    out.push('\n');
}

/// fio prints its own version string here (`fio-3.33`); hybrio prints its.
fn fio_version() -> String {
    format!("hybrio-{}", env!("CARGO_PKG_VERSION"))
}

fn dir_fields(out: &mut String, s: &JobStats, dir: DataDir, group: Option<&GroupSummary>) {
    let d = s.dir(dir);
    let runtime = d.runtime_ms();
    let (kib_per_sec, iops) = if runtime == 0 {
        (0, 0)
    } else {
        let per_sec = |n: u64| u64::try_from(1000 * u128::from(n) / u128::from(runtime));
        (
            per_sec(d.io_bytes()).unwrap_or(u64::MAX) / 1024,
            per_sec(d.total_ios()).unwrap_or(u64::MAX),
        )
    };
    let _ = write!(
        out,
        ";{};{kib_per_sec};{iops};{runtime}",
        d.io_bytes() >> 10
    );
    lat_fields(out, &d.slat());
    lat_fields(out, &d.clat());
    // fio reports total-latency percentiles here when they are on, else
    // completion-latency ones, else none (all padding).
    let cfg = s.config();
    let hist = if cfg.lat_percentiles {
        d.lat_hist()
    } else if cfg.clat_percentiles {
        Some(d.clat_hist())
    } else {
        None
    };
    let mut fields = match hist {
        Some(h) => {
            let values = h.percentiles(&cfg.percentile_list);
            // An empty histogram still lists the percentiles, each at 0.
            let list = crate::stats::effective_percentiles(&cfg.percentile_list);
            list.iter()
                .map(|&p| {
                    let ns = values.iter().find(|v| v.0 == p).map_or(0, |v| v.1);
                    format!("{p:.6}%={}", ns / 1000)
                })
                .collect::<Vec<_>>()
        }
        None => Vec::new(),
    };
    fields.resize(PERCENTILE_FIELDS, "0%=0".to_string());
    for field in &fields {
        let _ = write!(out, ";{field}");
    }
    lat_fields(out, &d.lat());
    let bw = d.bw_samples();
    if bw.is_empty() {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    } else {
        // Terse's share of the group: the mean over the group's aggregate in
        // whole KiB/s, 100 when the group has none (not the JSON's formula).
        let share = match group.and_then(|g| g.dir(dir)).map(|g| g.agg_bw / 1024) {
            Some(agg_kib) if agg_kib > 0 => (bw.mean() * 100.0 / agg_kib as f64).min(100.0),
            _ => 100.0,
        };
        let _ = write!(
            out,
            ";{};{};{share:.6}%;{:.6};{:.6}",
            bw.min(),
            bw.max(),
            bw.mean(),
            bw.stddev()
        );
    }
}

/// min, max, mean and standard deviation in usec (min and max truncated), or
/// zeros for a statistic without samples.
fn lat_fields(out: &mut String, stat: &LatStat) {
    if stat.is_empty() {
        out.push_str(";0;0;0.000000;0.000000");
    } else {
        let _ = write!(
            out,
            ";{};{};{:.6};{:.6}",
            stat.min() / 1000,
            stat.max() / 1000,
            stat.mean() / 1000.0,
            stat.stddev() / 1000.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testutil;
    use crate::stats::StatsConfig;

    /// fio 3.33's line for `fio --name=t --filename=f --size=1m --rw=randrw
    /// --bs=4k --output-format=terse` on this project's machine (ext4 on vda).
    const FIO_3_33_LINE: &str = "3;fio-3.33;t;0;0;528;66000;16500;8;0;0;0.000000;0.000000;41;202;50.911765;15.089732;1.000000%=42;5.000000%=43;10.000000%=44;20.000000%=45;30.000000%=46;40.000000%=47;50.000000%=47;60.000000%=48;70.000000%=49;80.000000%=51;90.000000%=57;95.000000%=61;99.000000%=100;99.500000%=201;99.900000%=201;99.950000%=201;99.990000%=201;0%=0;0%=0;0%=0;41;202;50.956902;15.118605;0;0;0.000000%;0.000000;0.000000;496;62000;15500;8;0;0;0.000000;0.000000;2;52;4.010944;4.657308;1.000000%=2;5.000000%=2;10.000000%=2;20.000000%=2;30.000000%=2;40.000000%=3;50.000000%=3;60.000000%=3;70.000000%=3;80.000000%=3;90.000000%=4;95.000000%=6;99.000000%=17;99.500000%=51;99.900000%=51;99.950000%=51;99.990000%=51;0%=0;0%=0;0%=0;2;52;4.078298;4.664371;0;0;0.000000%;0.000000;0.000000;42.857143%;0.000000%;132;0;14;100.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.00%;39.45%;7.81%;0.78%;37.50%;13.67%;0.78%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;vda;0;0;0;0;0;0;0;0.00%";

    /// The kind of a field, for comparing two lines' layouts.
    fn kind(field: &str) -> &'static str {
        if field.contains("%=") {
            "percentile"
        } else if let Some(number) = field.strip_suffix('%') {
            if number.parse::<f64>().is_ok() {
                "percent"
            } else {
                "text"
            }
        } else if field.parse::<u64>().is_ok() {
            "integer"
        } else if field.parse::<f64>().is_ok() {
            "decimal"
        } else {
            "text"
        }
    }

    fn report_with_disk() -> RunReport {
        let mut report = testutil::report(StatsConfig::default());
        report.disk_util = vec![DiskUtil {
            name: "vda".to_string(),
            counters: Default::default(),
            util: 0.0,
            slaves: None,
        }];
        report
    }

    /// A device made of others ends its fields with fio's `slaves` and
    /// their means, the busiest one's utilization last.
    #[test]
    fn a_device_made_of_others_ends_with_its_slaves_mean() {
        let mut report = report_with_disk();
        report.disk_util[0].slaves = Some(crate::diskstats::SlavesAggregate {
            sum: crate::diskstats::DiskCounters {
                read_ios: 10,
                write_ios: 6,
                time_in_queue: 8,
                ..Default::default()
            },
            count: 2,
            max_util: 40.0,
        });
        let text = render(&report);
        assert!(
            text.contains(";vda;0;0;0;0;0;0;0;0.00%;slaves;5;3;0;0;0;0;4;40.00%"),
            "{text}"
        );
    }

    #[test]
    fn fields_line_up_with_fio_3_33() {
        let text = render(&report_with_disk());
        let ours: Vec<&str> = text.trim_end().split(';').collect();
        let fio: Vec<&str> = FIO_3_33_LINE.split(';').collect();
        assert_eq!(ours.len(), fio.len(), "{text}");
        for (i, (a, b)) in ours.iter().zip(&fio).enumerate() {
            // fio's version and the job name differ by content only.
            if i == 1 || i == 2 {
                continue;
            }
            // A zero printed by one and a decimal by the other would still
            // parse differently: compare kinds, which fio fixes per field.
            assert_eq!(
                kind(a),
                kind(b),
                "field {} differs: ours {a}, fio {b}",
                i + 1
            );
        }
    }

    #[test]
    fn values_of_the_synthetic_job() {
        let report = report_with_disk();
        let text = render(&report);
        assert_eq!(text.lines().count(), 1);
        let f: Vec<&str> = text.trim_end().split(';').collect();
        assert_eq!(&f[..5], ["3", "hybrio-0.1.0", "j1", "0", "0"]);
        let s = &report.jobs[0].stats;
        let read = s.dir(DataDir::Read);
        // 1000 reads of 4 KiB.
        assert_eq!(f[5], "4000");
        assert_eq!(f[8], read.runtime_ms().to_string());
        // Read clat 1000..1999 ns: min 1 us, max 1 us (truncated).
        assert_eq!((f[13], f[14]), ("1", "1"));
        assert!(f[17].starts_with("1.000000%="), "{}", f[17]);
        assert_eq!(f[36], "0%=0");
        // Writes start after the 41 read fields: 1000 x 4 KiB.
        assert_eq!(f[46], "4000");
        // Write clat 20..30 us.
        assert_eq!((f[54], f[55]), ("20", "29"));
        // CPU: 1.5 s user and 0.25 s system over 2 s.
        assert_eq!((f[87], f[88]), ("75.000000%", "12.500000%"));
        assert_eq!((f[89], f[90], f[91]), ("42", "0", "12"));
        // Depth 8 throughout.
        assert_eq!(f[95], "100.0%");
        // Reads under 2 us (nanosecond buckets folded into the first usec
        // one) are half the I/O; writes of 20-30 us land in the 50 us bucket
        // (20 us exactly in the 20 us one).
        let first_usec: f64 = f[99].trim_end_matches('%').parse().unwrap();
        assert!((first_usec - 50.0).abs() < 0.01, "{}", f[99]);
        assert_eq!(f[121], "vda");
    }

    #[test]
    fn errors_follow_the_disks_with_continue_on_error() {
        let mut report = report_with_disk();
        report.jobs[0].errors = Some(crate::output::ErrorCount { total: 3, first: 5 });
        let text = render(&report);
        assert!(
            text.trim_end().ends_with(";vda;0;0;0;0;0;0;0;0.00%;3;5"),
            "{text}"
        );
    }
}
