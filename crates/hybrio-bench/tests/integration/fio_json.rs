//! hybrio's JSON against fio 3.33's for the same job files: every key path
//! fio writes is in hybrio's document, with fio's JSON type, so that tools
//! written for fio's JSON find what they read, and hybrio writes no other key
//! but its own `hybrio` object and later fio's `job_start`. The fixtures and the command
//! that made them are in `tests/fio-3.33/`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// Key path -> JSON type, arrays' elements merged under `[]`.
fn shape(value: &Value, path: String, out: &mut BTreeMap<String, &'static str>) {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(items) => {
            for item in items {
                shape(item, format!("{path}[]"), out);
            }
            "array"
        }
        Value::Object(map) => {
            // json+'s histogram buckets are keyed by their values, which
            // differ run to run: every key of a `bins` object is one path.
            let in_bins = path.ends_with(".bins");
            for (key, item) in map {
                let sub = if path.is_empty() {
                    key.clone()
                } else if in_bins {
                    format!("{path}.<ns>")
                } else {
                    format!("{path}.{key}")
                };
                shape(item, sub, out);
            }
            "object"
        }
    };
    // Elements of one array that disagree on a key's type show as "varies".
    let slot = out.entry(path).or_insert(kind);
    if *slot != kind {
        *slot = "varies";
    }
}

/// Runs hybrio on `job_file` with `format` and compares its document's shape
/// with fio's in `fixture`; returns hybrio's document.
fn check(job_file: &str, format: &str, fixture: &str) -> Value {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-3.33");
    let fio: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join(fixture)).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixtures.join(job_file), dir.path().join(job_file)).unwrap();
    let out = super::hybrio(
        &[&format!("--output-format={format}"), job_file],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (mut theirs, mut mine) = (BTreeMap::new(), BTreeMap::new());
    shape(&fio, String::new(), &mut theirs);
    shape(&ours, String::new(), &mut mine);
    // The block device under the files: fio's machine had one; a run on
    // tmpfs has none, and then neither writes disk_util.
    if hybrio_bench::diskstats::stat_file_for(dir.path()).is_none() {
        eprintln!(
            "{}: on no block device, disk_util not compared",
            dir.path().display()
        );
        theirs.retain(|path, _| !path.starts_with("disk_util"));
    }
    let mut problems = Vec::new();
    for (path, kind) in &theirs {
        match mine.get(path) {
            None => problems.push(format!("missing: {path} ({kind})")),
            Some(ours) if ours != kind => {
                problems.push(format!("{path}: fio {kind}, hybrio {ours}"))
            }
            Some(_) => {}
        }
    }
    // Beyond fio 3.33's keys, hybrio writes its own object and fio 3.35's
    // `job_start` (the job's start, ms since the epoch, where later fio has it).
    let own = |path: &str| path == "hybrio" || path.starts_with("hybrio.");
    for path in mine.keys() {
        if !theirs.contains_key(path) && !own(path) && path != "jobs[].job_start" {
            problems.push(format!("not in fio's document: {path}"));
        }
    }
    assert!(
        theirs.len() > 200,
        "{job_file}: only {} key paths in fio's document",
        theirs.len()
    );
    assert!(
        problems.is_empty(),
        "{job_file}: {} of fio's {} key paths:\n{}",
        problems.len(),
        theirs.len(),
        problems.join("\n")
    );
    ours
}

#[test]
fn json_has_every_key_fio_writes_for_a_mixed_job_with_fsync() {
    check("randrw-fsync.fio", "json", "randrw-fsync.json");
}

#[test]
fn json_has_every_key_fio_writes_for_reporting_groups() {
    check("two-groups.fio", "json", "two-groups.json");
}

/// Each `bins` object counts every I/O of its latency once, in buckets keyed
/// by a value inside the bucket's range.
fn assert_bins_hold_every_sample(lat: &Value, what: &str) {
    let bins = lat["bins"]
        .as_object()
        .unwrap_or_else(|| panic!("{what}: no bins in {lat}"));
    let total: u64 = bins.values().map(|count| count.as_u64().unwrap()).sum();
    assert_eq!(total, lat["N"].as_u64().unwrap(), "{what}: bins {bins:?}");
    let mut values: Vec<u64> = bins.keys().map(|key| key.parse().unwrap()).collect();
    values.sort_unstable();
    let (min, max) = (lat["min"].as_u64().unwrap(), lat["max"].as_u64().unwrap());
    // A bucket's value is its midpoint, so the first may sit above the
    // smallest sample, never above the largest, and likewise the last.
    assert!(
        values[0] <= max && *values.last().unwrap() >= min,
        "{what}: {values:?}"
    );
}

#[test]
fn json_plus_has_every_key_fio_writes_and_bins_count_every_io() {
    let ours = check("randrw-fsync.fio", "json+", "randrw-fsync-plus.json");
    let job = &ours["jobs"][0];
    assert_bins_hold_every_sample(&job["read"]["clat_ns"], "read clat");
    assert_bins_hold_every_sample(&job["write"]["clat_ns"], "write clat");
    assert_bins_hold_every_sample(&job["sync"]["lat_ns"], "sync lat");
    // Without lat_percentiles fio writes neither percentiles nor bins for lat.
    assert!(job["read"]["lat_ns"].get("bins").is_none());
}

/// Every latency with percentiles, submission latencies included (which need
/// an asynchronous engine), a percentile list, and the summed `mixed` object.
#[test]
fn json_has_every_key_fio_writes_for_percentiles_of_every_latency_and_mixed() {
    if let Err(reason) = hybrio::probe::engine_available(hybrio::engine::EngineKind::Libaio) {
        eprintln!("skipped: {reason}");
        return;
    }
    let ours = check("percentiles-both.fio", "json", "percentiles-both.json");
    let read = &ours["jobs"][0]["read"];
    let listed: Vec<&String> = read["lat_ns"]["percentile"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(listed, ["50.000000", "99.000000", "99.900000"]);
    let ours = check(
        "percentiles-both.fio",
        "json+",
        "percentiles-both-plus.json",
    );
    let job = &ours["jobs"][0];
    for direction in ["read", "write", "mixed"] {
        for latency in ["slat_ns", "clat_ns", "lat_ns"] {
            if job[direction][latency].get("percentile").is_some() {
                let what = format!("{direction} {latency}");
                assert_bins_hold_every_sample(&job[direction][latency], &what);
            }
        }
    }
}

#[test]
fn the_bandwidth_log_has_a_file_per_direction_in_fios_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = super::hybrio(
        &[
            "--bandwidth-log=all",
            "--name=r",
            "--ioengine=null",
            "--size=1g",
            "--rw=read",
            "--runtime=1200ms",
            "--time_based",
            "--output-format=terse",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (direction, name) in ["read", "write", "trim"].iter().enumerate() {
        let text = std::fs::read_to_string(dir.path().join(format!("all-{name}_bw.log")))
            .unwrap_or_else(|e| panic!("all-{name}_bw.log: {e}"));
        for line in text.lines() {
            let columns: Vec<u64> = line.split(", ").map(|c| c.parse().unwrap()).collect();
            assert_eq!(columns.len(), 5, "{name}: {line}");
            assert_eq!(columns[2], direction as u64, "{name}: {line}");
            assert_eq!(columns[3..], [0, 0], "{name}: {line}");
            // A read job: nothing written or trimmed.
            if direction > 0 {
                assert_eq!(columns[1], 0, "{name}: {line}");
            }
        }
    }
}
