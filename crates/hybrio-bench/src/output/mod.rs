//! Reports in fio's formats: the normal text output ([`normal`]),
//! `--output-format=json` ([`json`], with fio 3.42's keys) and `terse` ([`terse`]), laid out as
//! fio does, with fio's
//! number formatting in [`num`]; and hybrio's page for a person, [`html`].
//!
//! The input is a [`RunReport`]: one [`JobReport`] per reported job (a job,
//! or a whole group merged with
//! [`JobStats::merge`](crate::stats::JobStats::merge) for `group_reporting`)
//! and one [`GroupReport`] per reporting group.

pub mod html;
pub mod interval;
pub mod json;
mod localtime;
pub mod normal;
pub mod num;
mod report;
pub mod terse;

pub use report::{
    ClientReport, ErrorCount, GroupReport, JobDescription, JobReport, RunReport, json_line,
    summary_of_group,
};

#[cfg(test)]
pub(crate) mod testutil {
    //! A synthetic report shared by the normal and JSON tests.

    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::stats::{CpuUsage, DataDir, JobStats, StatsConfig, group_summary};

    /// A QD8 randrw job: 1000 reads and 1000 writes with known latencies,
    /// samples, submissions and syncs, finished after 2000 ms.
    pub(crate) fn stats(config: StatsConfig) -> JobStats {
        let t0 = 0u64;
        let mut s = JobStats::new(config, t0);
        for i in 0..1000u64 {
            // reads: clat 1000..1999 ns, slat 100 + i % 10
            s.record_io(DataDir::Read, 4096, false, Some(100 + i % 10), 1000 + i);
            // writes: clat 20 us .. 30 us
            s.record_io(DataDir::Write, 4096, i == 0, Some(200), 20_000 + i * 10);
            if i % 4 == 0 {
                s.record_submit(8, 8);
                s.record_complete(8);
            }
            if i == 499 {
                s.sample(t0 + 500_000_000);
            }
        }
        s.sample(t0 + 1_000_000_000);
        for ns in [150_000u64, 250_000, 350_000] {
            s.record_sync(ns);
        }
        s.finish(
            Duration::from_millis(2000),
            CpuUsage {
                usr_ns: 1_500_000_000,
                sys_ns: 250_000_000,
                ctx: 42,
                majf: 0,
                minf: 12,
            },
        );
        s
    }

    pub(crate) fn report(config: StatsConfig) -> RunReport {
        let stats = stats(config);
        let summary = group_summary(&[&stats]);
        let job = JobReport {
            desc: JobDescription {
                name: "j1".to_string(),
                rw: "randrw".to_string(),
                bs: [(4096, 4096); 3],
                ioengine: "io_uring".to_string(),
                iodepth: 8,
                kb_base: 1024,
                bits: false,
            },
            groupid: 0,
            jobs: 1,
            error: 0,
            pid: 4242,
            start_time: UNIX_EPOCH + Duration::from_secs(1_581_708_125),
            job_start_ms: 123_456,
            elapsed_s: 3,
            options: vec![
                ("name".to_string(), "j1".to_string()),
                ("rw".to_string(), "randrw".to_string()),
                ("iodepth".to_string(), "8".to_string()),
            ],
            stats,
            errors: None,
            engine: None,
            paths: None,
            short_errors: Default::default(),
            unified: crate::options::UnifiedRw::None,
            steady: None,
            latency_target: None,
        };
        RunReport {
            version: "hybrio-0.1.0".to_string(),
            time: UNIX_EPOCH + Duration::from_millis(1_581_708_125_678),
            global_options: vec![("ioengine".to_string(), "io_uring".to_string())],
            jobs: vec![job],
            disk_util: Vec::new(),
            groups: vec![GroupReport {
                groupid: 0,
                summary,
            }],
            extra: Some(serde_json::json!({"engine": {"sync_ios": 12, "ratio": 0.25}})),
            clients: Vec::new(),
            fio_compat: crate::fio_version::FioVersion::NEWEST,
        }
    }
}
