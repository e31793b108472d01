//! `--output-format=html` and `hybrio report`: pages drawn from a run and
//! from saved JSON (hybrio's and fio's json+), every histogram bucket in
//! the charts, nothing fetched from the network.

use std::process::Command;

use serde_json::Value;

use super::{fio_installed, hybrio};

/// The number of points of each chart series in `page`, in order.
fn series_points(page: &str) -> Vec<usize> {
    page.match_indices("data-points=\"")
        .map(|(at, m)| {
            let rest = &page[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

/// Bins per direction with I/O in a json+ document's first job.
fn bins(doc: &Value) -> Vec<usize> {
    ["read", "write", "trim"]
        .iter()
        .filter(|d| doc["jobs"][0][**d]["total_ios"].as_u64().unwrap_or(0) > 0)
        .map(|d| {
            doc["jobs"][0][*d]["clat_ns"]["bins"]
                .as_object()
                .map_or(0, |b| b.len())
        })
        .collect()
}

#[test]
fn a_run_and_saved_reports_become_one_self_contained_page() {
    let dir = tempfile::tempdir().unwrap();
    let job = [
        "--name=h",
        "--filename=f",
        "--size=1m",
        "--rw=randrw",
        "--bs=4k",
    ];
    let out = hybrio(
        &[&job[..], &["--output-format=html", "--output=run.html"]].concat(),
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("run.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
    // Two charts per direction (reads, writes).
    assert_eq!(series_points(&page).len(), 4);

    let out = hybrio(
        &[&job[..], &["--output-format=json+", "--output=h.json"]].concat(),
        dir.path(),
    );
    assert!(out.status.success());
    let mut inputs = vec!["report", "h.json"];
    let hybrio_doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("h.json")).unwrap()).unwrap();
    // Per document: the percentile chart's series, then the histogram's.
    let twice = |b: Vec<usize>| [b.clone(), b].concat();
    let mut expected = twice(bins(&hybrio_doc));
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
        let fio_doc: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("f.json")).unwrap())
                .unwrap();
        inputs.push("f.json");
        expected.extend(twice(bins(&fio_doc)));
    }
    inputs.extend(["-o", "report.html"]);
    let out = hybrio(&inputs, dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    // Every bucket of every direction of every document, in both charts.
    assert_eq!(series_points(&page), expected);

    // Not a report: one line, status 1.
    std::fs::write(dir.path().join("bad.json"), "not json").unwrap();
    let out = hybrio(&["report", "bad.json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
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

#[test]
fn the_page_loads_in_a_real_browser_without_an_error_and_draws_every_point() {
    let Some(browser) = chromium() else {
        eprintln!("skipping: no chromium here (.ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=h",
            "--filename=f",
            "--size=1m",
            "--rw=randrw",
            "--bs=4k",
            "--output-format=html,json+",
            "--output=both",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // html then json+ in one stream: the page is everything before the JSON.
    let both = std::fs::read_to_string(dir.path().join("both")).unwrap();
    let end = both.find("</html>").unwrap() + "</html>".len();
    let page_path = dir.path().join("page.html");
    std::fs::write(&page_path, &both[..end]).unwrap();
    let url = format!("file://{}", page_path.display());
    let screenshot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    let run = |extra: &[String]| {
        Command::new(browser)
            .args(["--headless=new", "--no-sandbox", "--disable-gpu"])
            .args(["--enable-logging=stderr", "--v=0", "--window-size=900,1100"])
            .args(extra)
            .arg(&url)
            .output()
            .unwrap()
    };
    let dom = run(&["--dump-dom".to_string()]);
    assert!(dom.status.success());
    let log = String::from_utf8_lossy(&dom.stderr);
    let errors: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(errors.is_empty(), "the page logged: {errors:?}");
    // The browser's DOM holds a circle per percentile point and a bar per
    // histogram bucket, as many as the page's series say.
    let dom = String::from_utf8_lossy(&dom.stdout);
    let points: usize = series_points(&dom).iter().sum();
    let drawn = dom.matches("<circle").count() + dom.matches("<rect").count()
        - dom.matches("class=\"frame\"").count();
    assert_eq!(drawn, points);
    // For a person to look at.
    let shot = run(&[format!("--screenshot={}", screenshot.display())]);
    assert!(shot.status.success());
    assert!(std::fs::metadata(&screenshot).unwrap().len() > 10_000);
    eprintln!("screenshot: {}", screenshot.display());
}
