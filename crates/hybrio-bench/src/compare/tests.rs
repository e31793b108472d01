use super::*;
use crate::stats::{CpuUsage, DataDir, StatsConfig};

fn figures(iops: f64, p99_us: f64, mean_us: f64) -> Figures {
    Figures {
        iops,
        bandwidth: iops * 4096.0,
        mean_us,
        p50_us: mean_us,
        p99_us,
        cpu_us_per_io: 1.0,
        process_cpu_us_per_io: 2.0,
    }
}

fn once(f: Figures) -> Measured {
    Measured::new(vec![f], vec![None])
}

#[test]
fn every_cell_is_measured_and_ranked() {
    let dir = tempfile::tempdir().unwrap();
    let mut cells = default_cells(dir.path(), 1 << 20, 0.05);
    cells.retain(|c| !c.jobs[0].options.direct);
    assert_eq!(cells.len(), 2);
    assert!(cells[1].warm_cache && !cells[0].warm_cache);
    let engines = [EngineKind::Psync, EngineKind::Null];
    let results = measure(&cells, &engines, 1, &mut |_| {}, &mut |jobs| {
        run::run(jobs, &Vec::new(), &mut |_| {})
    })
    .unwrap();
    assert_eq!(results.len(), cells.len());
    for row in &results {
        assert!(
            row.iter().all(|m| m.samples.len() == 1
                && m.median.iops > 0.0
                && m.median.mean_us > 0.0
                && m.median.p99_us >= m.median.p50_us
                && m.paths == [None]),
            "{row:?}"
        );
    }
    let text = table(&cells, &["psync", "null"], &results, Columns::Default);
    assert_eq!(text.matches("| psync |").count(), cells.len());
    assert!(
        text.contains("| 1.00 |"),
        "the best engine of each workload is ranked 1.00: {text}"
    );
    assert!(text.starts_with("8k buffered sequential writes, 1 in flight (seeds/000)\n"));
    assert!(
        std::fs::metadata(dir.path().join("read-data"))
            .unwrap()
            .len()
            >= 1 << 20
    );
}

#[test]
fn median_of_each_figure() {
    let f = |x: f64| Figures {
        iops: x,
        bandwidth: x,
        mean_us: x,
        p50_us: x,
        p99_us: x,
        cpu_us_per_io: x,
        process_cpu_us_per_io: x,
    };
    assert_eq!(median(&[f(3.0), f(1.0), f(2.0)]), f(2.0));
    assert_eq!(median(&[f(4.0), f(1.0), f(2.0), f(3.0)]), f(2.5));
    assert_eq!(median(&[]), Figures::default());
}

#[test]
fn spread_is_the_extreme_rounds_over_the_median() {
    let m = Measured::new(
        vec![
            figures(100.0, 10.0, 5.0),
            figures(80.0, 30.0, 7.0),
            figures(125.0, 20.0, 6.0),
        ],
        vec![None; 3],
    );
    assert_eq!(m.median, figures(100.0, 20.0, 6.0));
    let (low, high) = m.spread().unwrap();
    assert!((low - 0.80).abs() < 1e-9 && (high - 1.25).abs() < 1e-9);
    assert_eq!(once(figures(0.0, 1.0, 1.0)).spread(), None);
}

#[test]
fn ratios_are_to_the_engine_with_the_best_iops() {
    let row = [
        once(figures(50.0, 40.0, 8.0)),
        once(figures(200.0, 10.0, 2.0)),
        once(figures(100.0, 5.0, 4.0)),
    ];
    assert_eq!(best(&row), Some(1));
    assert_eq!(versus_best(&row, 0), (Some(0.25), Some(4.0)));
    assert_eq!(versus_best(&row, 1), (Some(1.0), Some(1.0)));
    // p99 is set against the best-IOPS engine's p99, not the lowest p99.
    assert_eq!(versus_best(&row, 2), (Some(0.5), Some(0.5)));
    let idle = [once(figures(0.0, 0.0, 0.0))];
    assert_eq!(versus_best(&idle, 0), (None, None));
    assert_eq!(ratio(1.0, 0.0), None);
}

#[test]
fn adaptive_is_set_against_the_best_static_engine() {
    let names = ["psync", ADAPTIVE, "io_uring"];
    let paths = Paths {
        inline: 300,
        asynchronous: 100,
        explored: 0,
        switches: 2,
    };
    let row = vec![
        once(figures(100.0, 10.0, 5.0)),
        Measured::new(
            vec![figures(220.0, 10.0, 4.0), figures(220.0, 10.0, 4.0)],
            vec![
                Some(paths),
                Some(Paths {
                    switches: 1,
                    ..paths
                }),
            ],
        ),
        once(figures(200.0, 20.0, 5.0)),
    ];
    assert_eq!(best_static(&names, &row), Some(2));
    assert_eq!(best(&row), Some(1));
    let v = adaptive_versus_static(&names, &row).unwrap();
    assert_eq!(v.engine, "io_uring");
    assert!((v.iops.unwrap() - 1.1).abs() < 1e-9);
    assert_eq!((v.p99, v.lat_mean), (Some(0.5), Some(0.8)));
    assert_eq!(
        adaptive_versus_static(&["psync", "io_uring"], &row[..2]),
        None
    );

    let cells = [Cell::new(vec![JobDef {
        options: JobOptions {
            name: "r".into(),
            ..JobOptions::default()
        },
        own_options: Vec::new(),
    }])];
    let text = table(&cells, &names, &[row], Columns::Full);
    assert!(
        text.contains("adaptive vs best static (io_uring): IOPS 1.10, p99 0.50, mean lat 0.80"),
        "{text}"
    );
    let adaptive_row = text
        .lines()
        .find(|l| l.starts_with("| adaptive |"))
        .unwrap();
    assert!(
        adaptive_row.ends_with("| 1.00 | 1.00 | 1.00-1.00 | inline 75.0%, 3 switches |"),
        "{adaptive_row}"
    );
    let psync_row = text.lines().find(|l| l.starts_with("| psync |")).unwrap();
    assert!(
        psync_row.ends_with("| 0.45 | 1.00 | 1.00-1.00 |  |"),
        "{psync_row}"
    );
}

#[test]
fn paths_are_summed_over_the_jobs_that_report_them() {
    let extra = serde_json::json!({"jobs": [
        {"jobname": "a", "paths": {"inline": 10, "async": 5, "explored": 4, "switches": 1}},
        {"jobname": "a", "paths": {"inline": 7, "async": 0, "explored": 0, "switches": 2}},
        {"jobname": "b"},
        {"jobname": "c", "paths": null},
    ]});
    assert_eq!(
        Paths::of_extra(&extra),
        Some(Paths {
            inline: 17,
            asynchronous: 5,
            explored: 4,
            switches: 3
        })
    );
    assert_eq!(
        Paths::of_extra(&serde_json::json!({"jobs": [{"jobname": "a"}]})),
        None
    );
    let m = Measured::new(
        vec![Figures::default(); 2],
        vec![
            None,
            Some(Paths {
                inline: 1,
                asynchronous: 1,
                explored: 0,
                switches: 0,
            }),
        ],
    );
    assert_eq!(
        m.total_paths().unwrap().summary(),
        "inline 50.0%, 0 switches"
    );
}

#[test]
fn jobs_of_a_cell_add_up() {
    let config = StatsConfig {
        lat_percentiles: true,
        ..StatsConfig::default()
    };
    let job = |ios: u64, clat_ns: u64, runtime_ms: u64, cpu_ns: u64| {
        let mut stats = JobStats::new(config.clone(), 0);
        for _ in 0..ios {
            stats.record_io(DataDir::Read, 4096, false, None, clat_ns);
        }
        stats.finish(
            Duration::from_millis(runtime_ms),
            CpuUsage {
                usr_ns: cpu_ns,
                ..CpuUsage::default()
            },
        );
        stats
    };
    let (a, b) = (
        job(100, 10_000, 1000, 1_000_000),
        job(300, 30_000, 500, 3_000_000),
    );
    let f = Figures::of_jobs(&[&a, &b], 8_000_000);
    // 100/s and 600/s: each job's own rate, summed.
    assert!((f.iops - 700.0).abs() < 1e-9, "{f:?}");
    assert!((f.bandwidth - 700.0 * 4096.0).abs() < 1e-6, "{f:?}");
    assert!((f.mean_us - 25.0).abs() < 1e-9, "{f:?}");
    assert!((29.0..=31.0).contains(&f.p50_us), "{f:?}");
    assert!((9.0..=10.5).contains(&Figures::of(&a, 0).p50_us));
    assert!((f.cpu_us_per_io - 10.0).abs() < 1e-9, "{f:?}");
    assert!((f.process_cpu_us_per_io - 20.0).abs() < 1e-9, "{f:?}");
    assert_eq!(Figures::of_jobs(&[], 5), Figures::default());
}

#[test]
fn a_short_job_is_timed_to_the_microsecond() {
    // A thousand page-cache hits in 1.25 ms: fio's runtime rounds up to
    // 2 ms (500k IOPS); the comparison takes the microseconds (800k).
    let mut stats = JobStats::new(StatsConfig::default(), 0);
    for _ in 0..1000 {
        stats.record_io(DataDir::Read, 4096, false, None, 1_000);
    }
    stats.finish(Duration::from_micros(1250), CpuUsage::default());
    assert_eq!(stats.dir(DataDir::Read).iops(), 500_000.0);
    let f = Figures::of(&stats, 0);
    assert!((f.iops - 800_000.0).abs() < 1e-6, "{f:?}");
}

fn jobs_from(text: &str) -> Vec<JobDef> {
    let sections = crate::jobfile::parse_job_file(Path::new("t.fio"), text).unwrap();
    crate::jobfile::resolve(&[], &[sections], &[]).unwrap().0
}

#[test]
fn cells_end_at_stonewall_and_new_group() {
    let jobs = jobs_from(
        "[global]\nsize=1m\n\
         [a]\nrw=randread\ninvalidate=0\n\
         [b]\nrw=write\nnumjobs=4\n\
         [c]\nstonewall\nrw=randread\ndirect=1\nbs=8k\niodepth=16\n\
         [d]\nnew_group\nrw=randrw\ncompletion_latency=30us\n\
         [e]\nrw=read\n",
    );
    let split = cells(&jobs);
    let names: Vec<Vec<&str>> = split
        .iter()
        .map(|c| c.jobs.iter().map(|j| j.options.name.as_str()).collect())
        .collect();
    assert_eq!(names, [vec!["a", "b"], vec!["c"], vec!["d", "e"]]);
    assert_eq!(
        split.iter().map(|c| c.warm_cache).collect::<Vec<_>>(),
        [true, false, false]
    );
    assert_eq!(
        split[0].heading,
        "a: 2 jobs: randread, bs=4k, iodepth=1, numjobs=1, buffered, invalidate=0; \
         write, bs=4k, iodepth=1, numjobs=4, buffered"
    );
    assert_eq!(
        split[1].description,
        "randread, bs=8k, iodepth=16, numjobs=1, direct"
    );
    assert!(
        split[2]
            .description
            .starts_with("2 jobs: randrw, rwmixread=50, bs=4k, iodepth=1, numjobs=1, buffered, completion_latency=30us; read"),
        "{}",
        split[2].description
    );
    // Without stonewall or new_group, a file is one cell whose jobs run together.
    let one = cells(&jobs_from("[x]\nsize=1m\n[y]\nsize=1m\n"));
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].jobs.len(), 2);
}

#[test]
fn each_run_gets_the_engine_and_total_latency_percentiles() {
    let cell = &cells(&jobs_from("[x]\nsize=1m\ngroup_reporting\nnumjobs=2\n"))[0];
    let jobs = jobs_on(cell, EngineKind::Null);
    assert_eq!(jobs[0].options.ioengine, "null");
    assert!(jobs[0].options.lat_percentiles && !jobs[0].options.group_reporting);
    assert_eq!(jobs[0].options.numjobs, 2);
}

#[test]
fn engines_run_after_every_other_one_equally_often() {
    for n in 1..=7usize {
        let cycle = if n.is_multiple_of(2) { n } else { 2 * n };
        let mut after = vec![vec![0; n]; n];
        for round in 0..cycle {
            let order = engine_order(n, round);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..n).collect::<Vec<_>>(),
                "{n} engines, round {round}"
            );
            for pair in order.windows(2) {
                after[pair[1]][pair[0]] += 1;
            }
        }
        let times = if n.is_multiple_of(2) { 1 } else { 2 };
        for (engine, row) in after.iter().enumerate() {
            for (before, &count) in row.iter().enumerate() {
                let expected = if before == engine { 0 } else { times };
                assert_eq!(count, expected, "{n} engines: {engine} after {before}");
            }
        }
    }
}
