//! `--output-format=json`, as fio 3.42's `show_thread_status_json()` builds
//! it and json.c prints it (`printer.rs`), keys in fio's order; with
//! `--fio-compat` naming an older fio, what that fio leaves out where a
//! reader of its JSON would break ([`empty_json_strings`](crate::fio_version::FioVersion::empty_json_strings),
//! [`global_options_per_server`](crate::fio_version::FioVersion::global_options_per_server)).

mod client;
mod job;
mod printer;

use job::{disk_object, job_object, options};
use printer::{Json, Obj, print_value};

use super::localtime::{ctime, unix_secs};
use super::report::RunReport;

/// The whole report as one JSON document (ends with a newline).
///
/// Top level: `fio version`, `timestamp`, `timestamp_ms`, `time`,
/// `global options` (only when there are any), `jobs`, `disk_util` (when
/// there are devices), and `hybrio` with [`RunReport::extra`] when present;
/// in fio's client mode ([`RunReport::clients`]) as fio's client writes it.
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
    if report.clients.is_empty() {
        if let Some(opts) = options(&report.global_options, report.fio_compat) {
            root.obj("global options", opts);
        }
        let jobs = report
            .jobs
            .iter()
            .map(|job| {
                Json::Obj(job_object(
                    job,
                    report.group(job.groupid),
                    plus,
                    report.fio_compat,
                ))
            })
            .collect();
        root.push("jobs", Json::Arr(jobs));
        let disks: Vec<Json> = report
            .disk_util
            .iter()
            .map(|d| Json::Obj(disk_object(d)))
            .collect();
        if !disks.is_empty() {
            root.push("disk_util", Json::Arr(disks));
        }
    } else {
        client::add_clients(&mut root, report, plus);
    }
    if let Some(extra) = &report.extra {
        root.push("hybrio", Json::from_serde(extra));
    }
    let mut out = String::new();
    print_value(&mut out, &Json::Obj(root), 0);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio_version::FioVersion;
    use crate::output::testutil;
    use crate::stats::{BATCH_LABELS, DEPTH_LABELS, LAT_LABELS, LAT_M_LABELS, StatsConfig};
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
            "latency_target_ns",
            "latency_percentile",
            "latency_window",
            "latency_window_us",
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
            "latency_target_ns",
            "latency_window",
            "latency_window_us",
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
        assert!(text.contains("      \"latency_percentile\" : 100.000000,\n      \"latency_window\" : 0,\n      \"latency_window_us\" : 0\n    }\n  ],\n  \"hybrio\" : {\n"));
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
        // An option given bare: fio 3.39 and later write it with "",
        // fio 3.33 dropped it.
        assert_eq!(v["jobs"][0]["job options"]["empty"], "");
        report.fio_compat = FioVersion::parse("3.38").unwrap();
        let v: Value = serde_json::from_str(&render(&report)).unwrap();
        assert!(v["jobs"][0]["job options"].get("empty").is_none());
        report.jobs[0].options.clear();
        let v: Value = serde_json::from_str(&render(&report)).unwrap();
        assert!(v["jobs"][0].get("job options").is_none());
    }

    #[test]
    fn latency_target_and_window_also_under_their_units_names() {
        let mut report = testutil::report(StatsConfig::default());
        report.jobs[0].latency_target = Some(crate::stats::LatencyTargetReport {
            depth: 3,
            target_ns: 2_500_000,
            window_us: 500_000,
            percentile: 99.5,
        });
        let v: Value = serde_json::from_str(&render(&report)).unwrap();
        let job = &v["jobs"][0];
        assert_eq!(job["latency_depth"], 3);
        assert_eq!(job["latency_target"], 2_500_000);
        assert_eq!(job["latency_target_ns"], 2_500_000);
        assert_eq!(job["latency_window"], 500_000);
        assert_eq!(job["latency_window_us"], 500_000);
        assert_eq!(job["latency_percentile"], 99.5);
    }

    #[test]
    fn disk_util_has_the_sectors_in_fio_3_42s_order() {
        let mut report = testutil::report(StatsConfig::default());
        let counters = crate::diskstats::DiskCounters {
            read_ios: 1,
            write_ios: 2,
            read_sectors: 8,
            write_sectors: 16,
            ..Default::default()
        };
        report.disk_util = vec![crate::diskstats::DiskUtil {
            name: "vda".into(),
            counters,
            util: 50.0,
            slaves: None,
        }];
        let text = render(&report);
        let v: Value = serde_json::from_str(&text).unwrap();
        let disk = &v["disk_util"][0];
        assert_eq!(disk["read_sectors"], 8);
        assert_eq!(disk["write_sectors"], 16);
        let from = text.find("\"disk_util\"").unwrap();
        let to = text.find("\"hybrio\"").unwrap();
        assert_eq!(
            ordered_keys(&text[from..to], 6),
            [
                "name",
                "read_ios",
                "write_ios",
                "read_sectors",
                "write_sectors",
                "read_merges",
                "write_merges",
                "read_ticks",
                "write_ticks",
                "in_queue",
                "util"
            ]
        );
    }

    /// A device made of others carries their mean and the busiest one's
    /// utilization after its own, under fio 3.42's `aggr_*` keys.
    #[test]
    fn a_device_made_of_others_has_the_aggregate_keys() {
        let mut report = testutil::report(StatsConfig::default());
        let sum = crate::diskstats::DiskCounters {
            read_ios: 9,
            write_merges: 4,
            time_in_queue: 7,
            ..Default::default()
        };
        report.disk_util = vec![crate::diskstats::DiskUtil {
            name: "md0".into(),
            counters: Default::default(),
            util: 10.0,
            slaves: Some(crate::diskstats::SlavesAggregate {
                sum,
                count: 2,
                max_util: 75.5,
            }),
        }];
        let text = render(&report);
        let v: Value = serde_json::from_str(&text).unwrap();
        let disk = &v["disk_util"][0];
        assert_eq!(disk["aggr_read_ios"], 4);
        assert_eq!(disk["aggr_write_merge"], 2);
        assert_eq!(disk["aggr_in_queue"], 3);
        assert_eq!(disk["aggr_util"], 75.5);
        let from = text.find("\"disk_util\"").unwrap();
        let to = text.find("\"hybrio\"").unwrap();
        let keys = ordered_keys(&text[from..to], 6);
        let util = keys.iter().position(|k| k == "util").unwrap();
        assert_eq!(
            keys[util + 1..],
            [
                "aggr_read_ios",
                "aggr_write_ios",
                "aggr_read_sectors",
                "aggr_write_sectors",
                "aggr_read_merges",
                "aggr_write_merge",
                "aggr_read_ticks",
                "aggr_write_ticks",
                "aggr_in_queue",
                "aggr_util"
            ]
        );
    }

    /// The synthetic report as `clients` ranks' (fio's client mode).
    fn client_report(clients: u32, fio: &str) -> RunReport {
        let mut report = testutil::report(StatsConfig::default());
        report.clients = (0..clients)
            .map(|rank| crate::output::ClientReport {
                hostname: format!("node{rank}"),
                port: rank,
                jobs: report.jobs.clone(),
                disk_util: Vec::new(),
            })
            .collect();
        report.fio_compat = crate::fio_version::FioVersion::parse(fio).unwrap();
        report
    }

    #[test]
    fn client_mode_global_options_are_per_server_from_fio_3_39() {
        let v: Value = serde_json::from_str(&render(&client_report(2, "3.42"))).unwrap();
        let per_server = v["global options"].as_array().expect("an array");
        assert_eq!(per_server.len(), 2);
        for (rank, server) in per_server.iter().enumerate() {
            assert_eq!(server["hostname"], format!("node{rank}"));
            assert_eq!(server["port"], rank);
            assert_eq!(server["ioengine"], "io_uring");
        }
        let text = render(&client_report(2, "3.42"));
        let from = text.find("\"global options\"").unwrap();
        assert_eq!(
            ordered_keys(&text[from..text.find("\"client_stats\"").unwrap()], 6),
            [
                "hostname", "port", "ioengine", "hostname", "port", "ioengine"
            ]
        );
        // One server: one object, as before 3.39; and 3.33 writes one for all.
        for (clients, fio) in [(1, "3.42"), (2, "3.38"), (2, "3.33")] {
            let v: Value = serde_json::from_str(&render(&client_report(clients, fio))).unwrap();
            let globals = &v["global options"];
            assert_eq!(
                globals["ioengine"], "io_uring",
                "{clients} {fio}: {globals}"
            );
            assert!(globals.get("hostname").is_none());
        }
        // fio makes all three before the servers report: there when empty.
        let mut report = client_report(2, "3.42");
        report.global_options.clear();
        let v: Value = serde_json::from_str(&render(&report)).unwrap();
        assert_eq!(v["global options"], serde_json::json!([]));
        assert_eq!(v["disk_util"], serde_json::json!([]));
        assert!(v.get("jobs").is_none() && v.get("timestamp_ms").is_none());
        let entries = v["client_stats"].as_array().unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[2]["jobname"], "All clients");
        // A fio client has no ETA of its servers' jobs.
        for entry in entries {
            assert!(entry.get("eta").is_none() && entry.get("elapsed").is_none());
            assert_eq!(entry["latency_window_us"], 0);
        }
        report.clients.truncate(1);
        let v: Value = serde_json::from_str(&render(&report)).unwrap();
        assert_eq!(v["global options"], serde_json::json!({}));
    }
}
