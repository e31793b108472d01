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
