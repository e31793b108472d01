//! Steady state as fio 3.42 judges it: `ss_interval` (samples every N
//! seconds, each a rate per second) and the latency criteria `lat` and
//! `lat_slope`, compared with fio 3.42's report of the same job. The
//! figures depend on timing, so the structure and the arithmetic on each
//! tool's own samples are compared, never when the state was reached.

use std::process::Command;

use serde_json::Value;

use super::hybrio;

/// The job both tools run: paced, so that each sample has I/Os in it.
const JOB: &[&str] = &[
    "--name=ss",
    "--filename=/dev/null",
    "--rw=write",
    "--bs=4k",
    "--size=1g",
    "--time_based",
    "--runtime=7",
    "--rate_iops=2000",
    "--ss=lat_slope:5%",
    "--ss_dur=4",
    "--ss_interval=2",
];

/// The first JSON document in `text` (after the normal report's header).
fn first_document(text: &str) -> Value {
    let at = text
        .find("{\n")
        .unwrap_or_else(|| panic!("no JSON in {text}"));
    let mut docs = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
    docs.next().unwrap().unwrap()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn numbers(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn ss_interval_and_latency_criteria_report_as_fio_342s() {
    let Some(fio) = super::fios().into_iter().find(|f| f.version == "3.42") else {
        eprintln!("skipping: steady state by latency and ss_interval came after fio 3.33");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fio_out = Command::new(&fio.path)
        .args(JOB)
        .arg("--output-format=json")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(fio_out.status.success(), "fio 3.42 failed");
    let by_fio = first_document(&String::from_utf8_lossy(&fio_out.stdout));
    let out = hybrio(
        &[JOB, &["--output-format=json,normal"]].concat(),
        dir.path(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let by_hybrio = first_document(&text);
    let (theirs, ours) = (
        &by_fio["jobs"][0]["steadystate"],
        &by_hybrio["jobs"][0]["steadystate"],
    );
    assert_eq!(keys(ours), keys(theirs), "{ours}\n{theirs}");
    assert_eq!(
        keys(&ours["data"]),
        keys(&theirs["data"]),
        "{ours}\n{theirs}"
    );
    for same in ["ss", "duration"] {
        assert_eq!(ours[same], theirs[same], "{same}");
    }
    // ss_dur=4 at ss_interval=2: two samples, in both.
    let data = &ours["data"];
    for list in ["lat_ns", "iops", "bw"] {
        assert_eq!(numbers(&theirs["data"][list]).len(), 2, "fio's {list}");
        assert_eq!(numbers(&data[list]).len(), 2, "{list}: {ours}");
    }
    let mean = |list: &str| numbers(&data[list]).iter().sum::<u64>() / 2;
    assert_eq!(data["lat_mean"].as_u64(), Some(mean("lat_ns")), "{ours}");
    assert_eq!(data["iops_mean"].as_u64(), Some(mean("iops")), "{ours}");
    // Each sample is a rate per second: 4 KiB I/Os at 2000 a second make
    // 2000 IOPS, not the 4000 I/Os of a two-second interval.
    for (iops, bw) in numbers(&data["iops"]).iter().zip(numbers(&data["bw"])) {
        assert!((1000..3000).contains(iops), "{ours}");
        assert!(bw.abs_diff(iops * 4096) <= 2 * 4096, "{ours}");
    }
    let lat = numbers(&data["lat_ns"]);
    assert!(lat.iter().all(|&ns| ns > 0), "every I/O takes time: {ours}");
    let slope = lat[1] as f64 - lat[0] as f64;
    let judged = ours["slope"].as_f64().unwrap();
    assert!(
        (judged - slope).abs() < 1e-6,
        "the slope of two samples: {ours}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("steadystate  :"))
        .unwrap_or_else(|| panic!("no steadystate line in {text}"));
    assert!(
        line.contains(&format!(", lat={}nsec, lat slope=", data["lat_mean"])),
        "{line}"
    );
}

#[test]
fn steady_state_settings_fio_342_refuses_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let fio = super::fios().into_iter().find(|f| f.version == "3.42");
    let base = [
        "--name=a",
        "--filename=/dev/null",
        "--size=1m",
        "--ss=iops:1",
    ];
    for (wrong, says) in [
        (&["--ss_dur=4", "--ss_interval=0.5"][..], "at least 1s"),
        (
            &["--ss_dur=3", "--ss_interval=2"][..],
            "multiple of ss_interval",
        ),
        (&["--ss_dur=1"][..], "multiple of ss_interval"),
        (
            &[
                "--ss_dur=4",
                "--ss_interval=2",
                "--name=b",
                "--filename=/dev/null",
                "--size=1m",
            ][..],
            "the same in every job",
        ),
    ] {
        let args = [&base[..], wrong].concat();
        if let Some(fio) = &fio {
            let ran = Command::new(&fio.path)
                .args(&args)
                .arg("--output=/dev/null")
                .current_dir(dir.path())
                .status()
                .unwrap();
            assert!(!ran.success(), "fio 3.42 takes {wrong:?}");
        }
        let out = hybrio(&args, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{wrong:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{wrong:?}: {stderr}");
    }
}
