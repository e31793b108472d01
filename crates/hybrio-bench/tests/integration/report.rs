//! `--output-format=html` and `hybrio report` on every output hybrio
//! writes: a run, a group-reporting run, several groups, a Ctrl-C-shortened
//! run, a run with errors, `hybrio compare`, and fio's json+. Each page is
//! drawn twice (from the run, and by `hybrio report` from the saved JSON)
//! with the same series, and loaded in headless Chromium where the machine
//! has it (.ci/run installs it): no console error, every series holding as
//! many marks as it has points, a screenshot for a person in
//! `target/tmp/report-<kind>.png`.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{fio_installed, hybrio, interrupted};

/// A chart series of a page: its key, its number of points and the marks
/// (`class="pt"`) drawn inside it.
#[derive(Debug, PartialEq, Eq)]
struct Drawn {
    key: String,
    points: usize,
    marks: usize,
}

/// Every chart series of `page` (HTML as written, or the browser's DOM), in order.
fn series(page: &str) -> Vec<Drawn> {
    let attribute = |text: &str, name: &str| -> String {
        let at = text.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        text[at..at + text[at..].find('"').unwrap()].to_string()
    };
    page.split("<g class=\"series\"")
        .skip(1)
        .map(|rest| {
            let head = &rest[..rest.find('>').unwrap()];
            let body = &rest[..rest.find("</g>").unwrap()];
            Drawn {
                key: attribute(head, "data-key"),
                points: attribute(head, "data-points").parse().unwrap(),
                marks: body.matches("class=\"pt\"").count(),
            }
        })
        .collect()
}

/// The series of the figures whose caption starts with `caption`.
fn series_in(page: &str, caption: &str) -> Vec<usize> {
    page.split("<figure>")
        .filter(|f| f.starts_with(&format!("<figcaption>{caption}")))
        .flat_map(|f| series(f).into_iter().map(|s| s.points))
        .collect()
}

fn run_ok(args: &[&str], dir: &Path) {
    let out = hybrio(args, dir);
    assert!(
        out.status.success(),
        "hybrio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks a page as written: whole, self-contained, every series its marks.
fn check_page(page: &str) -> Vec<Drawn> {
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
    let drawn = series(page);
    assert!(!drawn.is_empty());
    for s in &drawn {
        assert_eq!(s.marks, s.points, "{s:?}");
    }
    drawn
}

/// The page of `json` (a saved report) drawn by `hybrio report`, checked.
fn report_of(json: &str, dir: &Path) -> String {
    let html = format!("{json}.report.html");
    run_ok(&["report", json, "-o", &html], dir);
    let page = std::fs::read_to_string(dir.join(&html)).unwrap();
    check_page(&page);
    page
}

/// Headless Chromium, if this machine has it (.ci/run installs it).
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|name| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Loads `page` in headless Chromium: it must log no console message, and
/// the browser's DOM must hold every series with all its marks. Writes a
/// screenshot for a person. Skips (saying so) without Chromium.
fn in_browser(page: &Path, kind: &str) {
    let Some(browser) = chromium() else {
        eprintln!("skipping the browser for {kind}: no chromium here (.ci/run installs it)");
        return;
    };
    let url = format!("file://{}", page.display());
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("report-{kind}.png"));
    let run = |extra: &str| {
        Command::new(browser)
            .args(["--headless=new", "--no-sandbox", "--disable-gpu"])
            .args([
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1400,1800",
            ])
            .arg(extra)
            .arg(&url)
            .output()
            .unwrap()
    };
    let dom = run("--dump-dom");
    assert!(dom.status.success(), "{kind}");
    let log = String::from_utf8_lossy(&dom.stderr);
    let errors: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(errors.is_empty(), "{kind}: the page logged {errors:?}");
    let written = series(&std::fs::read_to_string(page).unwrap());
    assert_eq!(
        series(&String::from_utf8_lossy(&dom.stdout)),
        written,
        "{kind}: the browser's DOM"
    );
    let shot = run(&format!("--screenshot={}", screenshot.display()));
    assert!(shot.status.success(), "{kind}");
    assert!(
        std::fs::metadata(&screenshot).unwrap().len() > 10_000,
        "{kind}"
    );
    eprintln!("screenshot of {kind}: {}", screenshot.display());
}

/// Runs `job` writing json+ and the page beside it, checks both pages
/// (from the run, and `hybrio report`'s from the JSON) hold the same
/// series, loads it in the browser; returns the page and the document.
fn run_page(job: &[&str], kind: &str, dir: &Path) -> (String, Value) {
    let json = format!("{kind}.json");
    let output = format!("--output={json}");
    let args = [job, &["--output-format=json+,html", &output]].concat();
    let out = hybrio(&args, dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("report page written to {kind}.html")),
        "{stderr}"
    );
    let path = dir.join(format!("{kind}.html"));
    let page = std::fs::read_to_string(&path).unwrap();
    let drawn = check_page(&page);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(&json)).unwrap()).unwrap();
    let again = report_of(&json, dir);
    assert_eq!(series(&again), drawn, "{kind}: drawn from the saved JSON");
    in_browser(&path, kind);
    (page, doc)
}

/// Bins per direction with I/O in json+ job `job`.
fn bins(job: &Value) -> Vec<usize> {
    ["read", "write", "trim"]
        .iter()
        .filter(|d| job[**d]["total_ios"].as_u64().unwrap_or(0) > 0)
        .map(|d| {
            job[*d]["clat_ns"]["bins"]
                .as_object()
                .map_or(0, |b| b.len())
        })
        .collect()
}

/// Windows of hybrio job `index`'s timeline in `doc`.
fn windows(doc: &Value, index: usize) -> usize {
    doc["hybrio"]["jobs"][index]["timeline"]["points"]
        .as_array()
        .map_or(0, |p| p.len())
}

#[test]
fn a_run_draws_latency_depth_and_the_adaptive_engine_over_time() {
    let dir = tempfile::tempdir().unwrap();
    let (page, doc) = run_page(
        &[
            "--name=h",
            "--filename=f",
            "--size=4m",
            "--rw=randrw",
            "--ioengine=adaptive",
            "--iodepth=4",
            "--time_based",
            "--runtime=1600ms",
        ],
        "run",
        dir.path(),
    );
    // Every bucket of both directions, in the percentile curve and the histogram.
    let job = &doc["jobs"][0];
    assert_eq!(
        series_in(&page, "Completion latency percentiles"),
        bins(job)
    );
    assert_eq!(series_in(&page, "Completion latency histogram"), bins(job));
    // A point per window per direction, and the seven depths.
    let n = windows(&doc, 0);
    assert!(n >= 2, "{n} windows in 1.6 s");
    assert_eq!(series_in(&page, "IOPS over time"), [n, n]);
    assert_eq!(series_in(&page, "I/O depth distribution"), [7]);
    // The adaptive engine's share per window (switches may be none).
    assert_eq!(series_in(&page, "The adaptive engine over time")[0], n);
}

#[test]
fn a_group_is_one_section_with_its_jobs_windows_added() {
    let dir = tempfile::tempdir().unwrap();
    let (page, doc) = run_page(
        &[
            "--name=g",
            "--filename=f",
            "--size=2m",
            "--rw=randread",
            "--numjobs=2",
            "--group_reporting",
            "--time_based",
            "--runtime=1100ms",
        ],
        "group",
        dir.path(),
    );
    assert_eq!(page.matches("<section class=\"job\"").count(), 1);
    assert!(page.contains("2 jobs"));
    let n = windows(&doc, 0).max(windows(&doc, 1));
    assert_eq!(series_in(&page, "IOPS over time"), [n]);
}

#[test]
fn several_groups_and_a_job_with_errors_each_get_a_section() {
    let dir = tempfile::tempdir().unwrap();
    let (page, _) = run_page(
        &[
            "--name=first",
            "--filename=a",
            "--size=1m",
            "--rw=randread",
            "--name=erring",
            "--stonewall",
            "--filename=b",
            "--size=1m",
            "--rw=randread",
            "--inject=eio:0.25,seed:9",
            "--continue_on_error=all",
            "--name=failed",
            "--stonewall",
            "--filename=c",
            "--size=256k",
            "--rw=write",
            "--inject=eio:1",
        ],
        "groups",
        dir.path(),
    );
    assert_eq!(page.matches("<section class=\"job\"").count(), 3);
    assert!(page.contains("requests failed (continue_on_error), the first with errno 5"));
    assert!(page.contains("error 5: Input/output error"));
    // The run's own failure line, above the jobs.
    assert!(page.contains("job &#39;failed&#39;") || page.contains("job 'failed'"));
}

#[test]
fn a_run_cut_short_by_ctrl_c_says_so_on_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let out = interrupted(
        &[
            "--name=long",
            "--filename=f",
            "--size=2m",
            "--rw=randread",
            "--time_based",
            "--runtime=60",
            "--output-format=html,json+",
            "--output=cut.json",
        ],
        dir.path(),
        1800,
        "hybrio did not stop within 20 s of SIGINT",
    );
    assert_eq!(out.status.code(), Some(130));
    let path = dir.path().join("cut.html");
    let page = std::fs::read_to_string(&path).unwrap();
    check_page(&page);
    assert!(page.contains("Interrupted: the figures cover the run until the interrupt."));
    assert!(report_of("cut.json", dir.path()).contains("Interrupted"));
    in_browser(&path, "interrupted");
}

#[test]
fn compare_draws_every_round_of_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let job = [
        "compare",
        "--engines=psync,adaptive",
        "--rounds=2",
        "--name=c",
        "--filename=f",
        "--size=2m",
        "--rw=randread",
        "--time_based",
        "--runtime=700ms",
    ];
    run_ok(
        &[&job[..], &["--output-format=json", "--output=c.json"]].concat(),
        dir.path(),
    );
    let page = report_of("c.json", dir.path());
    // Per figure (IOPS, p99, CPU): per engine a median bar and two rounds.
    for caption in ["IOPS:", "Completion latency p99:", "CPU time per I/O"] {
        assert_eq!(series_in(&page, caption), [1, 2, 1, 2], "{caption}");
    }
    // The adaptive engine's inline share over time, a line per round.
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("c.json")).unwrap()).unwrap();
    let adaptive = &doc["cells"][0]["results"][1];
    assert_eq!(adaptive["engine"], "adaptive");
    let lines: Vec<usize> = (0..2)
        .map(|r| {
            adaptive["samples"][r]["timeline"]["points"]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    let drawn = series_in(&page, "The adaptive engine over time");
    assert_eq!(
        &drawn[..2],
        &lines[..],
        "one line per round, a point per window"
    );
    let path = dir.path().join("c.json.report.html");
    in_browser(&path, "compare");

    // The same document as one SVG for the results' markdown.
    run_ok(&["report", "--svg", "c.json", "-o", "c.svg"], dir.path());
    let svg = std::fs::read_to_string(dir.path().join("c.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(
        series(&svg).iter().map(|s| s.points).collect::<Vec<_>>(),
        [1, 2, 1, 2]
    );
    // --svg on a run's report: one line, status 1.
    run_ok(
        &[
            "--name=r",
            "--filename=r",
            "--size=64k",
            "--output-format=json",
            "--output=r.json",
        ],
        dir.path(),
    );
    let out = hybrio(&["report", "--svg", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

#[test]
fn fio_json_plus_is_drawn_and_a_bad_document_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    if fio_installed() {
        let status = Command::new("fio")
            .args([
                "--name=f",
                "--filename=f",
                "--size=1m",
                "--rw=randread",
                "--bs=4k",
            ])
            .args(["--output-format=json+", "--output=f.json"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("f.json")).unwrap())
                .unwrap();
        let page = report_of("f.json", dir.path());
        assert_eq!(
            series_in(&page, "Completion latency percentiles"),
            bins(&doc["jobs"][0])
        );
        assert_eq!(series_in(&page, "I/O depth distribution"), [7]);
        in_browser(&dir.path().join("f.json.report.html"), "fio");
    }
    std::fs::write(dir.path().join("bad.json"), "not json").unwrap();
    let out = hybrio(&["report", "bad.json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

/// A Python with pandas and numpy, which fio's fiologparser_hist.py imports.
fn python_with_pandas() -> Option<std::path::PathBuf> {
    let venv = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".cache/hybrio-fio-tests-venv/bin/python"));
    // The path's python3 may be a toolchain's; Debian's has python3-pandas.
    [
        Some(std::path::PathBuf::from("python3")),
        Some(std::path::PathBuf::from("/usr/bin/python3")),
        venv,
    ]
    .into_iter()
    .flatten()
    .find(|python| {
        Command::new(python)
            .args(["-c", "import pandas, numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn fios_histogram_parser_reads_the_histogram_log_and_agrees_on_each_window() {
    let Some(fio) = super::fios().into_iter().find(|f| f.version == "3.42") else {
        return;
    };
    let parser = fio.path.with_file_name("tools/hist/fiologparser_hist.py");
    if !parser.exists() {
        eprintln!("skipping: no {} beside fio 3.42", parser.display());
        return;
    }
    let Some(python) = python_with_pandas() else {
        eprintln!("skipping: no Python with pandas and numpy (.ci/run installs python3-pandas)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let doc = super::run_json(
        &[
            "--name=h",
            "--filename=data",
            "--size=8m",
            "--bs=4k",
            "--rw=randrw",
            "--runtime=1",
            "--time_based",
            "--write_hist_log=h",
            "--log_hist_msec=100",
            "--percentile_list=50:99",
        ],
        dir.path(),
    );
    let windows = doc["hybrio"]["jobs"][0]["percentiles_over_time"]["windows"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!windows.is_empty(), "no window closed");
    let out = Command::new(&python)
        .arg(&parser)
        .args([
            "--noweight",
            "-i",
            "100",
            "--percentiles",
            "50:99",
            "--directions",
            "rw",
        ])
        .arg(dir.path().join("h_clat_hist.1.log"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // "end-time, dir, samples, min, avg, median, 50%, 99%, max".
    let rows: Vec<Vec<String>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(", ").map(str::to_string).collect())
        .collect();
    // --noweight puts a line of time T in the first interval whose end is
    // past T + 10 ms (the parser's shift); two windows of a direction may
    // land in one interval, whose counts then add.
    let mut by_interval: Vec<((u64, &str), Vec<&serde_json::Value>)> = Vec::new();
    for window in &windows {
        let t_ms = window["t_ms"].as_u64().unwrap();
        let dir = if window["dir"] == "read" { "r" } else { "w" };
        let end = ((t_ms + 10) / 100 + 1) * 100;
        match by_interval.iter_mut().find(|(k, _)| *k == (end, dir)) {
            Some((_, list)) => list.push(window),
            None => by_interval.push(((end, dir), vec![window])),
        }
    }
    let mut compared = 0;
    for ((end, dir), list) in &by_interval {
        let row = rows
            .iter()
            .find(|r| r[0] == end.to_string() && r[1] == *dir)
            .unwrap_or_else(|| panic!("no parser row for {dir} ending {end} ms:\n{text}"));
        let count: u64 = list.iter().map(|w| w["count"].as_u64().unwrap()).sum();
        assert_eq!(row[2], count.to_string(), "{dir} ending {end} ms: {row:?}");
        compared += 1;
        // The median of a window alone in its interval and large enough
        // that the parser's interpolation between buckets and fio's rank
        // rule land in the same or the next bucket (a bucket is 1/64 of its
        // power of two: two are within 1/16 of the value). In the tail the
        // parser interpolates across empty buckets (p99: 8,000 against
        // 7,520 in a run of CI's), so a tail percentile is no check.
        let [window] = list[..] else { continue };
        if window["count"].as_u64().unwrap() < 1000 {
            continue;
        }
        let theirs: f64 = row[6].parse().unwrap();
        let ours = window["percentiles"]["50.000000"].as_f64().unwrap();
        assert!(
            (theirs - ours).abs() <= ours / 16.0,
            "{dir} ending {end} ms, median: parser {theirs}, hybrio {ours}"
        );
    }
    assert_eq!(compared, by_interval.len());
}
