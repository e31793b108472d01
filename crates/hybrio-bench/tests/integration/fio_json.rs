//! hybrio's JSON against fio's for the same job files: every key path fio
//! writes is in hybrio's document, with fio's JSON type, so that tools
//! written for fio's JSON find what they read, and hybrio writes no other key
//! but its own `hybrio` object. Against fio 3.33's documents (the fixtures in
//! `tests/fio-3.33/`, and Debian's fio where it is installed) with
//! `--fio-compat=3.33`, hybrio also writes the keys fio added since, which a
//! reader of 3.33's JSON skips; against fio 3.42 (where it is built), exactly
//! 3.42's keys.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// Key path -> JSON type, arrays' elements merged under `[]`.
pub(super) fn shape(value: &Value, path: String, out: &mut BTreeMap<String, &'static str>) {
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

/// Key paths of fio 3.42 that fio 3.33 lacks, written whatever fio hybrio
/// speaks as: `job_start` (3.35), the disks' sectors (3.36), the latency
/// target and window under their units' names (3.42). `parent` is `jobs[]`,
/// or `client_stats[]` in client mode.
pub(super) fn since_3_33(path: &str, parent: &str) -> bool {
    let job = ["job_start", "latency_target_ns", "latency_window_us"];
    let disk = ["read_sectors", "write_sectors"];
    path.strip_prefix(parent)
        .and_then(|rest| rest.strip_prefix('.'))
        .is_some_and(|key| job.contains(&key))
        || path
            .strip_prefix("disk_util[].")
            .is_some_and(|key| disk.contains(&key))
}

/// The key paths of fio's document `theirs` that hybrio's `ours` lacks or
/// types otherwise, and those hybrio writes beyond fio's but its own and
/// those `extra` allows.
pub(super) fn shape_problems(
    theirs: &Value,
    ours: &Value,
    extra: &dyn Fn(&str) -> bool,
) -> (usize, Vec<String>) {
    let (mut fio, mut mine) = (BTreeMap::new(), BTreeMap::new());
    shape(theirs, String::new(), &mut fio);
    shape(ours, String::new(), &mut mine);
    let mut problems = Vec::new();
    for (path, kind) in &fio {
        match mine.get(path) {
            None => problems.push(format!("missing: {path} ({kind})")),
            Some(ours) if ours != kind => {
                problems.push(format!("{path}: fio {kind}, hybrio {ours}"))
            }
            Some(_) => {}
        }
    }
    let own = |path: &str| path == "hybrio" || path.starts_with("hybrio.");
    for path in mine.keys() {
        if !fio.contains_key(path) && !own(path) && !extra(path) {
            problems.push(format!("not in fio's document: {path}"));
        }
    }
    (fio.len(), problems)
}

/// The JSON document in fio's output: fio may write notes ahead of it (fio #731).
pub(super) fn fio_document(stdout: &[u8]) -> Value {
    let text = String::from_utf8_lossy(stdout);
    let start = text
        .find("\n{")
        .map(|i| i + 1)
        .or_else(|| text.starts_with('{').then_some(0))
        .unwrap_or_else(|| panic!("no JSON document in fio's output: {text}"));
    serde_json::from_str(&text[start..]).unwrap_or_else(|e| panic!("fio's document ({e}): {text}"))
}

/// hybrio's document for `job_file` of `tests/fio-3.33/`, run in a
/// directory of its own as fio `version`.
fn hybrio_document(job_file: &str, format: &str, version: &str) -> (Value, bool) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-3.33");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixtures.join(job_file), dir.path().join(job_file)).unwrap();
    let out = super::hybrio(
        &[
            &format!("--output-format={format}"),
            &format!("--fio-compat={version}"),
            job_file,
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let on_device = hybrio_bench::diskstats::stat_file_for(dir.path()).is_some();
    (serde_json::from_slice(&out.stdout).unwrap(), on_device)
}

/// Compares hybrio's document with fio's, which are `what`; `on_device`:
/// hybrio's files were on a block device (a run on tmpfs writes no
/// `disk_util`, fio's machine had one).
fn compare(what: &str, fio: &Value, version: &str, ours: &Value, on_device: bool) {
    let mut fio = fio.clone();
    if !on_device {
        eprintln!("{what}: on no block device, disk_util not compared");
        if let Some(root) = fio.as_object_mut() {
            root.remove("disk_util");
        }
    }
    let old = version == "3.33";
    let (count, problems) = shape_problems(&fio, ours, &|path| old && since_3_33(path, "jobs[]"));
    assert!(
        count > 200,
        "{what}: only {count} key paths in fio's document"
    );
    assert!(
        problems.is_empty(),
        "{what}: {} of fio's {count} key paths:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Compares hybrio on `job_file` with `format` against fio 3.33's `fixture`
/// (when given) and against every fio here, run on the same job file;
/// returns hybrio's document as fio 3.42.
fn check(job_file: &str, format: &str, fixture: Option<&str>) -> Value {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-3.33");
    if let Some(fixture) = fixture {
        let text = std::fs::read_to_string(fixtures.join(fixture)).unwrap();
        let fio: Value = serde_json::from_str(&text).unwrap();
        let (ours, on_device) = hybrio_document(job_file, format, "3.33");
        compare(fixture, &fio, "3.33", &ours, on_device);
    }
    for fio in super::fios() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(fixtures.join(job_file), dir.path().join(job_file)).unwrap();
        let out = std::process::Command::new(&fio.path)
            .args([&format!("--output-format={format}"), job_file])
            .current_dir(dir.path())
            .output()
            .expect("fio runs");
        assert!(
            out.status.success(),
            "fio {}: {}",
            fio.version,
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs = fio_document(&out.stdout);
        let (ours, on_device) = hybrio_document(job_file, format, fio.version);
        let what = format!("{job_file} ({format}) against fio {}", fio.version);
        compare(&what, &theirs, fio.version, &ours, on_device);
    }
    hybrio_document(job_file, format, "3.42").0
}

#[test]
fn json_has_every_key_fio_writes_for_a_mixed_job_with_fsync() {
    check("randrw-fsync.fio", "json", Some("randrw-fsync.json"));
}

#[test]
fn json_has_every_key_fio_writes_for_reporting_groups() {
    check("two-groups.fio", "json", Some("two-groups.json"));
}

/// fio 3.42's steady state prints `lat_mean` and `lat_ns` for `ss=lat`
/// alone, which hybrio lacks: for `iops` the keys are 3.33's.
#[test]
fn json_has_every_key_fio_writes_for_steady_state() {
    let ours = check("steady.fio", "json", Some("steady.json"));
    let data = &ours["jobs"][0]["steadystate"]["data"];
    assert_eq!(data["iops"].as_array().map(Vec::len), Some(2), "{data}");
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
    let ours = check("randrw-fsync.fio", "json+", Some("randrw-fsync-plus.json"));
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
    let ours = check(
        "percentiles-both.fio",
        "json",
        Some("percentiles-both.json"),
    );
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
        Some("percentiles-both-plus.json"),
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
