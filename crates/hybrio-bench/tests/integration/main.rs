//! End-to-end tests of the `hybrio` binary: real runs on real files.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

mod atomic;
mod bad_input;
mod buffers;
mod exits;
mod failures;
mod fio_golden;
mod fio_json;
mod fio_order;
mod iolog;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(feature = "mpi")]
mod mpi_client;
mod network;
mod pseudo;
mod report;
mod space;
mod steady;
mod verify;
mod verify_state;

fn hybrio(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("hybrio runs")
}

/// A small filesystem on a loop device, unmounted (which frees the loop
/// device) when dropped: for a test that needs what the scratch
/// directory's filesystem lacks.
struct ScratchFs {
    _dir: tempfile::TempDir,
    mount: std::path::PathBuf,
}

impl ScratchFs {
    /// A fresh `kind` filesystem (`mkfs.<kind>`), or `None` after saying
    /// why not (no mkfs, not root).
    fn mount(kind: &str) -> Option<ScratchFs> {
        let dir = tempfile::tempdir().unwrap();
        let (image, mount) = (dir.path().join("fs.img"), dir.path().join("mnt"));
        std::fs::create_dir(&mount).unwrap();
        std::fs::File::create(&image)
            .unwrap()
            .set_len(320 << 20)
            .unwrap();
        let ok = |cmd: &mut Command| cmd.output().is_ok_and(|o| o.status.success());
        let force = if kind == "xfs" { "-f" } else { "-F" };
        if !ok(Command::new(format!("mkfs.{kind}"))
            .args(["-q", force])
            .arg(&image))
            || !ok(Command::new("mount")
                .args(["-o", "loop"])
                .arg(&image)
                .arg(&mount))
        {
            eprintln!("skipping: cannot make and mount {kind} here (needs mkfs.{kind} and root)");
            return None;
        }
        Some(ScratchFs { _dir: dir, mount })
    }
}

impl Drop for ScratchFs {
    /// Unmounts, waiting a few seconds at most while the filesystem is busy
    /// (a ring closed just before lets go of its files a little later, in
    /// the kernel's own time), then detaches it lazily: never left mounted.
    fn drop(&mut self) {
        use std::process::{Command, Stdio};
        for _ in 0..50 {
            let unmounted = Command::new("umount")
                .arg(&self.mount)
                .stderr(Stdio::null())
                .status();
            if unmounted.is_ok_and(|status| status.success()) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

/// Runs hybrio with JSON output and returns the parsed document.
fn run_json(args: &[&str], dir: &Path) -> Value {
    let mut all = vec!["--output-format=json"];
    all.extend_from_slice(args);
    let out = hybrio(&all, dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "hybrio {args:?} failed: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A fio to compare with, and the version hybrio speaks as beside it.
struct Fio {
    /// The binary.
    path: std::path::PathBuf,
    /// `3.33` or `3.42`: what `--fio-compat` names for it.
    version: &'static str,
}

/// The fios here to compare with: Debian's 3.33 (`fio` on the path) and
/// 3.42 built from the project's copy (`$HYBRIO_FIO_342`, else where
/// `../shared/fio/build.sh` builds it). Says which are missing.
fn fios() -> Vec<Fio> {
    let says = |path: &Path, version: &str| {
        Command::new(path).arg("--version").output().is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout).trim() == format!("fio-{version}")
        })
    };
    let mut found = Vec::new();
    let debian = std::path::PathBuf::from("fio");
    if says(&debian, "3.33") {
        found.push(Fio {
            path: debian,
            version: "3.33",
        });
    } else {
        eprintln!(
            "skipping fio 3.33: `fio` on the path is not fio-3.33 (.ci/run installs Debian's)"
        );
    }
    let built = std::env::var_os("HYBRIO_FIO_342")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/fio-3.42/fio")));
    match built.filter(|p| says(p, "3.42")) {
        Some(path) => found.push(Fio {
            path,
            version: "3.42",
        }),
        None => {
            eprintln!("skipping fio 3.42: not built (../shared/fio/build.sh; .ci/run builds it)")
        }
    }
    found
}

/// Whether fio is here to compare with; says so when it is not.
fn fio_installed() -> bool {
    let found = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipping: fio is not installed (.ci/run installs it)");
    }
    found
}

fn io_uring_reason() -> Option<String> {
    hybrio::probe::engine_available(hybrio::engine::EngineKind::IoUring)
        .err()
        .map(|e| e.to_string())
}

fn engines() -> Vec<&'static str> {
    use hybrio::engine::EngineKind;
    EngineKind::ALL
        .into_iter()
        .filter(|&kind| match hybrio::probe::engine_available(kind) {
            Ok(()) => true,
            Err(reason) => {
                eprintln!("skipping {kind}: {reason}");
                false
            }
        })
        .map(EngineKind::name)
        .collect()
}

#[test]
fn a_run_of_n_ios_reports_exactly_n_for_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    for engine in engines() {
        for depth in ["1", "8"] {
            let engine_opt = format!("--ioengine={engine}");
            let depth_opt = format!("--iodepth={depth}");
            let args = [
                "--name=r",
                "--filename=data",
                "--size=1m",
                "--bs=4k",
                "--rw=randread",
                &engine_opt,
                &depth_opt,
            ];
            let doc = run_json(&args, dir.path());
            let job = &doc["jobs"][0];
            assert_eq!(job["read"]["total_ios"], 256, "{engine} depth {depth}");
            assert_eq!(job["read"]["io_bytes"], 1 << 20, "{engine} depth {depth}");
            assert_eq!(job["write"]["total_ios"], 0);
            assert_eq!(job["error"], 0);
            assert_eq!(job["read"]["clat_ns"]["N"], 256);
        }
    }
}

#[test]
fn mixed_workload_with_fsync_counts_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    for engine in engines().into_iter().filter(|e| *e != "null") {
        let engine_opt = format!("--ioengine={engine}");
        let args = [
            "--name=m",
            "--filename=mixed",
            "--size=2m",
            "--bs=4k",
            "--rw=randrw",
            "--rwmixread=70",
            "--fsync=8",
            "--iodepth=4",
            &engine_opt,
        ];
        let doc = run_json(&args, dir.path());
        let job = &doc["jobs"][0];
        let reads = job["read"]["total_ios"].as_u64().unwrap();
        let writes = job["write"]["total_ios"].as_u64().unwrap();
        assert_eq!(reads + writes, 512, "{engine}");
        assert!(
            (300..420).contains(&reads),
            "{engine}: {reads} reads at rwmixread=70"
        );
        // One fsync after every 8th write, except after the very last I/O.
        let syncs = job["sync"]["total_ios"].as_u64().unwrap();
        assert!(
            (writes / 8 - 1..=writes / 8).contains(&syncs),
            "{engine}: {syncs} fsyncs for {writes} writes"
        );
    }
}

#[test]
fn write_job_writes_the_whole_size() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        &[
            "--name=w",
            "--filename=out",
            "--size=3m",
            "--bs=64k",
            "--rw=write",
            "--end_fsync=1",
        ],
        dir.path(),
    );
    assert_eq!(doc["jobs"][0]["write"]["io_bytes"], 3 << 20);
    assert_eq!(
        std::fs::metadata(dir.path().join("out")).unwrap().len(),
        3 << 20
    );
}

#[test]
fn json_has_fio_keys_with_fio_types() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        &[
            "--name=k",
            "--filename=keys",
            "--size=256k",
            "--rw=read",
            "--bs=4k",
        ],
        dir.path(),
    );
    for key in ["fio version", "timestamp", "timestamp_ms", "time", "jobs"] {
        assert!(doc.get(key).is_some(), "top-level key {key} missing");
    }
    let job = &doc["jobs"][0];
    assert_eq!(job["jobname"], "k");
    assert!(job["job options"].is_object());
    for key in [
        "groupid",
        "error",
        "elapsed",
        "job_runtime",
        "ctx",
        "majf",
        "minf",
    ] {
        assert!(
            job[key].is_u64() || job[key].is_i64(),
            "{key} should be an integer: {}",
            job[key]
        );
    }
    for key in ["usr_cpu", "sys_cpu"] {
        assert!(job[key].is_f64(), "{key} should be a float");
    }
    for key in [
        "iodepth_level",
        "iodepth_submit",
        "iodepth_complete",
        "latency_ns",
        "latency_us",
        "latency_ms",
    ] {
        assert!(job[key].is_object(), "{key} should be an object");
    }
    assert!(job["iodepth_level"]["1"].is_number());
    for dir in ["read", "write", "trim"] {
        let d = &job[dir];
        for key in [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
        ] {
            assert!(
                d[key].is_u64(),
                "{dir}.{key} should be an integer: {}",
                d[key]
            );
        }
        assert!(d["iops"].is_f64(), "{dir}.iops should be a float");
        for lat in ["slat_ns", "clat_ns", "lat_ns"] {
            for key in ["min", "max", "N"] {
                assert!(d[lat][key].is_u64(), "{dir}.{lat}.{key}");
            }
            for key in ["mean", "stddev"] {
                assert!(d[lat][key].is_f64(), "{dir}.{lat}.{key}");
            }
        }
    }
    let percentiles = job["read"]["clat_ns"]["percentile"]
        .as_object()
        .expect("clat percentiles");
    assert!(percentiles.contains_key("99.000000") && percentiles.contains_key("50.000000"));
    assert!(job["sync"]["total_ios"].is_u64());
    match hybrio_bench::diskstats::stat_file_for(dir.path()) {
        Some(_) => {
            let disk = &doc["disk_util"][0];
            assert!(disk["name"].is_string());
            for key in [
                "read_ios",
                "write_ios",
                "read_merges",
                "write_merges",
                "read_ticks",
                "write_ticks",
                "in_queue",
            ] {
                assert!(disk[key].is_u64(), "disk_util.{key}");
            }
            assert!(disk["util"].is_f64());
        }
        None => eprintln!(
            "{} is on no block device: no disk_util to check",
            dir.path().display()
        ),
    }
}

#[test]
fn bad_input_exits_1_with_one_line_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--name=t", "--size=1m", "--bs=abc"], "bs"),
        (&["--name=t", "--size=1m", "--rw=sideways"], "rw"),
        (&["--name=t", "--size=1m", "--sideways=1"], "sideways"),
        (&["--name=t", "--size=1m", "--iodepth=0"], "iodepth"),
        (&["--name=t", "--size=-4k"], "size"),
        (&["--name=t", "--size=1m", "--runtime=soon"], "runtime"),
        (
            &["--output-format=xml", "--name=t", "--size=1m"],
            "output-format",
        ),
        (&["--name=t", "--size=1m", "--ioengine=mmap"], "ioengine"),
        (&["missing-job-file.fio"], "missing-job-file.fio"),
    ];
    for (args, names) in cases {
        let out = hybrio(args, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr.lines().count(),
            1,
            "{args:?} should print one line: {stderr}"
        );
        assert!(
            stderr.contains(names),
            "{args:?}: {stderr} should name {names}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

#[test]
fn job_files_with_stonewall_and_group_reporting() {
    let dir = tempfile::tempdir().unwrap();
    let job = "[global]\nfilename=shared\nsize=512k\nbs=4k\nrw=randread\nthread\n\n[one]\nioengine=psync\n\n[two]\nstonewall\nnumjobs=2\ngroup_reporting\nioengine=sync\n";
    std::fs::write(dir.path().join("t.fio"), job).unwrap();
    let doc = run_json(&["t.fio"], dir.path());
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(
        jobs.len(),
        2,
        "group_reporting folds the two clones into one report"
    );
    assert_eq!(
        (jobs[0]["jobname"].as_str(), jobs[0]["groupid"].as_u64()),
        (Some("one"), Some(0))
    );
    assert_eq!(
        (jobs[1]["jobname"].as_str(), jobs[1]["groupid"].as_u64()),
        (Some("two"), Some(1))
    );
    assert_eq!(jobs[1]["read"]["total_ios"], 256);
    assert_eq!(doc["global options"]["size"], "512k");

    // Two different jobs in one group: the merged object's name and options
    // are both the first job's (fio mixes the first's name with the last's
    // options), and hybrio's own list names every job with its options.
    let job = "[global]\nsize=256k\nioengine=null\ngroup_reporting\n\n[a]\nbs=4k\n\n[b]\nbs=8k\n";
    std::fs::write(dir.path().join("g.fio"), job).unwrap();
    let doc = run_json(&["g.fio"], dir.path());
    let merged = &doc["jobs"][0];
    assert_eq!(doc["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(
        (
            merged["jobname"].as_str(),
            merged["job options"]["bs"].as_str()
        ),
        (Some("a"), Some("4k"))
    );
    let members = doc["hybrio"]["jobs"].as_array().unwrap();
    let listed: Vec<(&str, &str, u64)> = members
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap(),
                j["job options"]["bs"].as_str().unwrap(),
                j["groupid"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed, [("a", "4k", 0), ("b", "8k", 0)]);
}

#[test]
fn normal_output_looks_like_fio() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=n",
            "--filename=n",
            "--size=256k",
            "--rw=write",
            "--bs=4k",
        ],
        dir.path(),
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("n: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1"), "{text}");
    assert!(
        text.contains("n: (groupid=0, jobs=1): err= 0: pid="),
        "{text}"
    );
    assert!(text.contains("  write: IOPS="), "{text}");
    assert!(
        text.contains("issued rwts: total=0,64,0,0 short=0,0,0,0 dropped=0,0,0,0"),
        "{text}"
    );
    assert!(text.contains("Run status group 0 (all jobs):"), "{text}");
}

#[test]
fn time_based_runs_for_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        &[
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=700ms",
            "--rw=randread",
        ],
        dir.path(),
    );
    let runtime = doc["jobs"][0]["read"]["runtime"].as_u64().unwrap();
    assert!(
        (700..1500).contains(&runtime),
        "runtime {runtime} ms for runtime=700ms"
    );
    assert!(
        doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 256,
        "time_based repeats the workload"
    );
}

/// Runs a program with io_uring_setup refused by a seccomp filter, as a
/// container runtime's default profile does.
const DENY_IO_URING_C: &str = include_str!("../../../../tools/deny-io-uring.c");

#[test]
fn io_uring_refused_by_seccomp_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("deny.c"), DENY_IO_URING_C).unwrap();
    let built = Command::new("gcc")
        .args(["-O1", "-o", "deny", "deny.c"])
        .current_dir(dir.path())
        .output();
    if !built.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipping: cannot build the seccomp helper with gcc ({built:?})");
        return;
    }
    let out = Command::new(dir.path().join("deny"))
        .args([
            env!("CARGO_BIN_EXE_hybrio"),
            "--name=t",
            "--size=1m",
            "--filename=f",
            "--ioengine=io_uring",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(125) {
        eprintln!("skipping: this kernel refuses seccomp filters: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("io_uring") && stderr.contains("seccomp"),
        "the cause must be named: {stderr}"
    );
    // psync still works under the same filter.
    let out = Command::new(dir.path().join("deny"))
        .args([
            env!("CARGO_BIN_EXE_hybrio"),
            "--name=t",
            "--size=1m",
            "--filename=f",
            "--ioengine=psync",
            "--output-format=json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn loops_repeat_the_workload() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        &[
            "--name=l",
            "--filename=l",
            "--size=256k",
            "--bs=4k",
            "--rw=read",
            "--loops=3",
        ],
        dir.path(),
    );
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 192);
}

#[test]
fn unavailable_engine_is_one_clear_line() {
    // A kernel without io_uring must give a one-line reason, never a crash.
    if let Some(reason) = io_uring_reason() {
        let dir = tempfile::tempdir().unwrap();
        let out = hybrio(
            &["--name=t", "--size=1m", "--ioengine=io_uring"],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(1));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("io_uring"),
            "{reason}"
        );
    } else {
        eprintln!(
            "io_uring is available here: the refusal path is covered by the library's probe tests"
        );
    }
}

#[test]
fn a_failed_request_is_reported_with_op_file_offset_and_errno() {
    let dir = tempfile::tempdir().unwrap();
    // /proc/version refuses positioned writes with ESPIPE: a real kernel error, no mock.
    let out = hybrio(
        &[
            "--output-format=json",
            "--name=e",
            "--size=64k",
            "--filename=/proc/version",
            "--rw=write",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("write of 4096 bytes at offset 0 of /proc/version"),
        "{stderr}"
    );
    let doc: Value =
        serde_json::from_slice(&out.stdout).expect("the report is still one JSON document");
    assert_eq!(doc["jobs"][0]["error"], 29);
    let extra = &doc["hybrio"]["jobs"][0];
    assert_eq!(extra["failed"], 1, "the first failure stops the job");
    assert_eq!(
        extra["submitted"].as_u64().unwrap(),
        extra["completed"].as_u64().unwrap() + 1,
        "nothing lost"
    );
}

#[test]
fn ctrl_c_stops_the_run_and_still_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = interrupted(
        &[
            "--output-format=json",
            "--name=i",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=60",
        ],
        dir.path(),
        500,
        "hybrio did not stop within 20 s of SIGINT",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("the report is one JSON document");
    let read = &doc["jobs"][0]["read"];
    assert!(read["total_ios"].as_u64().unwrap() > 0);
    assert!(
        read["runtime"].as_u64().unwrap() < 20_000,
        "stopped early: {}",
        read["runtime"]
    );
}

#[test]
fn a_later_group_reads_the_file_an_earlier_one_wrote() {
    let dir = tempfile::tempdir().unwrap();
    // The reader gives no size: its file exists only once the writer has run.
    let job =
        "[w]\nfilename=shared\nsize=256k\nrw=write\n\n[r]\nstonewall\nfilename=shared\nrw=read\n";
    std::fs::write(dir.path().join("t.fio"), job).unwrap();
    let doc = run_json(&["t.fio"], dir.path());
    assert_eq!(doc["jobs"][1]["read"]["io_bytes"], 256 << 10);
}

#[test]
fn injected_faults_are_resubmitted_retried_or_counted() {
    let dir = tempfile::tempdir().unwrap();
    for engine in engines().into_iter().filter(|e| *e != "null") {
        let engine_opt = format!("--ioengine={engine}");
        // Every transfer comes back short once (then in full), or EAGAIN then retried:
        // the job still moves exactly its size, and counts the short ones.
        let doc = run_json(
            &[
                "--name=s",
                "--filename=short",
                "--size=1m",
                "--bs=8k",
                "--rw=randrw",
                "--iodepth=4",
                "--inject=short:0.5,eagain:0.2,seed:3",
                &engine_opt,
            ],
            dir.path(),
        );
        let job = &doc["jobs"][0];
        let ios = job["read"]["total_ios"].as_u64().unwrap()
            + job["write"]["total_ios"].as_u64().unwrap();
        let bytes =
            job["read"]["io_bytes"].as_u64().unwrap() + job["write"]["io_bytes"].as_u64().unwrap();
        assert_eq!((ios, bytes), (128, 1 << 20), "{engine}");
        let extra = &doc["hybrio"]["jobs"][0];
        let short =
            extra["short_ios"][0].as_u64().unwrap() + extra["short_ios"][1].as_u64().unwrap();
        assert_eq!(
            extra["injected"]["short"].as_u64().unwrap(),
            short,
            "{engine}: {extra}"
        );
        assert!(short > 20, "{engine}: {extra}");
        assert!(extra["retries"].as_u64().unwrap() > 5, "{engine}: {extra}");
        assert_eq!(extra["failed"], 0, "{engine}");

        // Injected EIO with continue_on_error: every failure counted, none lost.
        let doc = run_json(
            &[
                "--name=e",
                "--filename=eio",
                "--size=1m",
                "--bs=4k",
                "--rw=randread",
                "--iodepth=4",
                "--inject=eio:0.25,seed:9",
                "--continue_on_error=all",
                &engine_opt,
            ],
            dir.path(),
        );
        let job = &doc["jobs"][0];
        let extra = &doc["hybrio"]["jobs"][0];
        let failed = extra["failed"].as_u64().unwrap();
        assert_eq!(job["total_err"].as_u64().unwrap(), failed, "{engine}");
        assert_eq!(job["first_error"], 5, "{engine}: EIO");
        assert_eq!(
            extra["injected"]["eio"].as_u64().unwrap(),
            failed,
            "{engine}"
        );
        assert_eq!(
            extra["submitted"].as_u64().unwrap(),
            extra["completed"].as_u64().unwrap() + failed,
            "{engine}"
        );
        assert_eq!(
            job["read"]["total_ios"].as_u64().unwrap() + failed,
            256,
            "{engine}"
        );
        assert!(failed > 20 && failed < 128, "{engine}: {failed}");
    }
}

#[test]
fn injected_eio_without_continue_on_error_stops_the_job_naming_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=e",
            "--filename=eio",
            "--size=256k",
            "--rw=write",
            "--inject=eio:1",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("write of 4096 bytes at offset 0 of")
            && stderr.contains("Input/output error"),
        "{stderr}"
    );
}

#[test]
fn bad_fault_plans_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    for plan in ["eio:2", "bogus:0.1", "delay:0.1", "eio:0.6,short:0.6"] {
        let option = format!("--inject={plan}");
        let out = hybrio(&["--name=x", "--size=64k", &option], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{plan}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{plan}: {stderr}");
        assert!(stderr.contains("inject"), "{plan}: {stderr}");
    }
}

#[test]
fn the_emulated_device_runs_under_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let device = |engine: &str| {
        [
            "--name=d".to_owned(),
            "--filename=device".to_owned(),
            "--size=256k".to_owned(),
            "--bs=4k".to_owned(),
            "--rw=randread".to_owned(),
            "--iodepth=4".to_owned(),
            "--completion_latency=20us".to_owned(),
            format!("--ioengine={engine}"),
        ]
    };
    // POSIX AIO completes in the C library's threads, which the device
    // cannot time: refused in one line, before any I/O.
    let args = device("posixaio");
    let out = hybrio(&args.each_ref().map(String::as_str), dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.lines().count() == 1
            && stderr.contains("posixaio does not offer the emulated device"),
        "{stderr}"
    );
    for engine in engines()
        .into_iter()
        .filter(|e| !matches!(*e, "null" | "posixaio"))
    {
        let args = device(engine);
        let doc = run_json(&args.each_ref().map(String::as_str), dir.path());
        let job = &doc["jobs"][0];
        assert_eq!(job["read"]["total_ios"], 64, "{engine}");
        let description = doc["hybrio"]["jobs"][0]["ioengine"].as_str().unwrap();
        assert!(
            description.contains("emulated device"),
            "{engine}: {description}"
        );
    }
}

#[test]
fn the_report_names_the_engine_as_set_up() {
    if let Err(reason) = hybrio::probe::engine_available(hybrio::engine::EngineKind::Libaio) {
        eprintln!("skipping libaio: {reason}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=b",
            "--filename=buffered",
            "--size=256k",
            "--ioengine=libaio",
            "--iodepth=4",
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout
            .contains("     engine    : libaio (depth 4; buffered I/O completes inside io_submit)"),
        "{stdout}"
    );
}

const COMPARE_JOB: [&str; 8] = [
    "--name=t",
    "--rw=randread",
    "--bs=4k",
    "--size=1m",
    "--runtime=0.05",
    "--time_based",
    "--filename=data",
    "--thread",
];

/// The cells of a markdown table row, trimmed.
fn table_cells(row: &str) -> Vec<&str> {
    row.trim_matches('|').split('|').map(str::trim).collect()
}

#[test]
fn compare_ranks_each_engine_in_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["compare", "--engines=psync,null", "--rounds=2"];
    args.extend_from_slice(&COMPARE_JOB);
    let out = hybrio(&args, dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("round 2/2: t on null"), "{stderr}");
    assert!(stdout.contains("t: randread, bs=4k, iodepth=1, numjobs=1, buffered"));
    let header = stdout
        .lines()
        .find(|l| l.starts_with("| engine |"))
        .expect("a table");
    let columns = table_cells(header);
    let iops_vs_best = columns.iter().position(|c| *c == "IOPS vs best").unwrap();
    assert_eq!(columns.len(), 12, "{header}");
    let rows: Vec<Vec<&str>> = ["psync", "null"]
        .iter()
        .map(|engine| {
            let prefix = format!("| {engine} |");
            table_cells(
                stdout
                    .lines()
                    .find(|l| l.starts_with(&prefix))
                    .unwrap_or_else(|| panic!("no {engine} row: {stdout}")),
            )
        })
        .collect();
    let iops = |row: &[&str]| row[1].trim_end_matches('k').parse::<f64>().unwrap();
    let ratios: Vec<f64> = rows
        .iter()
        .map(|r| r[iops_vs_best].parse::<f64>().unwrap())
        .collect();
    let best = if iops(&rows[0]) >= iops(&rows[1]) {
        0
    } else {
        1
    };
    assert_eq!(rows[best][iops_vs_best], "1.00", "{stdout}");
    assert!(ratios[1 - best] < 1.0, "{stdout}");
    assert!(!stdout.contains("adaptive vs best static"));
}

#[test]
fn compare_json_has_every_round() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "compare",
        "--engines=psync,null",
        "--rounds=2",
        "--output-format=json",
        "--output=report.json",
    ];
    args.extend_from_slice(&COMPARE_JOB);
    let out = hybrio(&args, dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "the report goes to the file");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    assert_eq!(doc["rounds"], 2);
    assert_eq!(doc["engines"], serde_json::json!(["psync", "null"]));
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0]["name"], "t");
    assert_eq!(cells[0]["jobs"], serde_json::json!(["t"]));
    let results = cells[0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for (result, engine) in results.iter().zip(["psync", "null"]) {
        assert_eq!(result["engine"], engine);
        assert!(result["iops"].as_f64().unwrap() > 0.0, "{result}");
        assert!(result["paths"].is_null());
        let samples = result["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2);
        for sample in samples {
            assert!(sample["iops"].as_f64().unwrap() > 0.0, "{sample}");
            assert!(
                sample["lat_p99_us"].as_f64().unwrap() >= sample["lat_p50_us"].as_f64().unwrap()
            );
        }
    }
    let best = results
        .iter()
        .find(|r| r["iops_vs_best"].as_f64() == Some(1.0))
        .expect("one engine is the best");
    assert_eq!(cells[0]["best_static"], best["engine"]);
    assert_eq!(best["p99_vs_best"].as_f64(), Some(1.0));
}

#[test]
fn compare_runs_each_reporting_group_as_a_cell() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cells.fio"),
        "[global]\nsize=1m\nruntime=0.05\ntime_based\nthread\nfilename=data\n\
         [a]\nrw=randread\ninvalidate=0\nnumjobs=2\n\
         [b]\nrw=read\ninvalidate=0\n\
         [c]\nstonewall\nrw=randwrite\nfilename=written\n",
    )
    .unwrap();
    let out = hybrio(
        &[
            "compare",
            "--engines=psync",
            "--rounds=1",
            "--output-format=json",
            "cells.fio",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0]["jobs"], serde_json::json!(["a", "b"]));
    assert_eq!(cells[1]["jobs"], serde_json::json!(["c"]));
    assert!(
        cells[0]["description"]
            .as_str()
            .unwrap()
            .starts_with("2 jobs: randread"),
        "{}",
        cells[0]
    );
    for cell in cells {
        assert!(cell["results"][0]["iops"].as_f64().unwrap() > 0.0, "{cell}");
    }
}

#[test]
fn compare_mistakes_are_one_line_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        &["compare", "--engines=psync,warp"][..],
        &["compare", "--rounds=0"],
        &["compare"],
    ] {
        let mut args = bad.to_vec();
        if bad.len() > 1 {
            args.extend_from_slice(&COMPARE_JOB);
        }
        let out = hybrio(&args, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{bad:?}: {stderr}");
        assert!(stderr.starts_with("hybrio: "), "{stderr}");
        assert!(out.stdout.is_empty(), "{bad:?}");
    }
    let out = hybrio(&["compare", "--help"], dir.path());
    let usage = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        usage.contains("--engines=") && usage.contains("--rounds=N"),
        "{usage}"
    );
    let out = hybrio(&["--help"], dir.path());
    assert!(String::from_utf8_lossy(&out.stdout).contains("hybrio compare"));
}

#[test]
fn startdelay_delays_the_job_and_its_runtime_counts_from_its_own_start() {
    let dir = tempfile::tempdir().unwrap();
    // b starts 0.3 s after a, then runs its own 0.3 s: the run cannot end
    // before 0.6 s. Had its runtime counted from the run's start, b would
    // stop as soon as it started, and the run would end after about 0.3 s.
    let job = "[global]\nfilename=data\nsize=256k\nrw=randread\ntime_based\nruntime=300ms\n\
               [a]\n[b]\nstartdelay=0.3\n";
    std::fs::write(dir.path().join("t.fio"), job).unwrap();
    let begun = std::time::Instant::now();
    let doc = run_json(&["t.fio"], dir.path());
    let wall = begun.elapsed();
    assert!(
        wall >= std::time::Duration::from_millis(600),
        "the run took {wall:?}"
    );
    let b = &doc["jobs"][1];
    assert_eq!(b["jobname"], "b");
    assert!(b["read"]["total_ios"].as_u64().unwrap() > 0);
    assert!(
        b["read"]["runtime"].as_u64().unwrap() >= 300,
        "b ran {} ms",
        b["read"]["runtime"]
    );
}

#[test]
fn ctrl_c_during_startdelay_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = interrupted(
        &[
            "--output-format=json",
            "--name=late",
            "--ioengine=null",
            "--size=1m",
            "--startdelay=1h",
        ],
        dir.path(),
        300,
        "hybrio waited out its startdelay after SIGINT",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
}

#[test]
fn drop_cache_after_records_when_it_dropped_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--name=r",
        "--filename=data",
        "--size=1m",
        "--rw=randread",
        "--invalidate=0",
        "--time_based",
        "--runtime=400ms",
    ];
    let mut args = common.to_vec();
    args.push("--drop_cache_after=0.2");
    let doc = run_json(&args, dir.path());
    let at = doc["hybrio"]["jobs"][0]["cache_dropped_at_ms"]
        .as_f64()
        .expect("a number once the cache was dropped");
    assert!(at >= 200.0, "dropped at {at} ms, before the 200 ms asked");
    assert_eq!(doc["jobs"][0]["error"], 0);

    let doc = run_json(&common, dir.path());
    assert!(doc["hybrio"]["jobs"][0]["cache_dropped_at_ms"].is_null());

    let out = hybrio(
        &[
            "--name=d",
            "--size=1m",
            "--direct=1",
            "--drop_cache_after=1",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("drop_cache_after"), "{stderr}");
}

fn workspace_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_matrix_job_file_is_accepted() {
    let dir = workspace_root().join("scenarios/matrix");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 9, "matrix job files: {files:?}");
    for file in files {
        let out = hybrio(&["--parse-only", file.to_str().unwrap()], &dir);
        assert!(
            out.status.success(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_matrix_report_passes_its_self_test_on_the_fixture() {
    let script = workspace_root().join("scenarios/matrix_report.py");
    let out = match Command::new("python3")
        .arg(&script)
        .arg("--self-test")
        .output()
    {
        Ok(out) => out,
        Err(error) => {
            eprintln!("skipping: python3 cannot run ({error})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs hybrio with `args` in `dir`, sends it SIGINT after `after_ms`, and
/// returns its output; fails with `stuck` if it has not exited 20 s later.
fn interrupted(args: &[&str], dir: &Path, after_ms: u64, stuck: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(after_ms));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{stuck}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn terse_output_is_one_fio_v3_line_per_job() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--minimal",
            "--ioengine=psync",
            "--name=r",
            "--filename=terse-r",
            "--size=256k",
            "--rw=read",
            "--bs=4k",
            "--name=w",
            "--filename=terse-w",
            "--size=128k",
            "--rw=write",
            "--bs=8k",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
    assert_eq!(lines.len(), 2, "{text}");
    let disks = usize::from(hybrio_bench::diskstats::stat_file_for(dir.path()).is_some());
    for (fields, name) in lines.iter().zip(["r", "w"]) {
        // fio 3.33's v3 layout: 121 fields, then 9 per disk.
        assert_eq!(fields.len(), 121 + 9 * disks, "{fields:?}");
        assert_eq!((fields[0], fields[2], fields[4]), ("3", name, "0"));
    }
    // Read KiB in field 6, write KiB in field 47.
    assert_eq!((lines[0][5], lines[0][46]), ("256", "0"));
    assert_eq!((lines[1][5], lines[1][46]), ("0", "128"));
}

#[test]
fn block_size_ranges_and_splits_do_exactly_the_size() {
    let dir = tempfile::tempdir().unwrap();
    for (rw, sizing) in [
        ("randread", "--bsrange=4k-16k"),
        ("write", "--bssplit=4k/50:64k/50"),
        ("randwrite", "--bssplit=8k/20:32k/"),
    ] {
        let doc = run_json(
            &[
                "--name=v",
                "--filename=varying",
                "--size=1m",
                &format!("--rw={rw}"),
                sizing,
            ],
            dir.path(),
        );
        let job = &doc["jobs"][0];
        let d = if rw.contains("read") {
            &job["read"]
        } else {
            &job["write"]
        };
        let (bytes, ios) = (
            d["io_bytes"].as_u64().unwrap(),
            d["total_ios"].as_u64().unwrap(),
        );
        // Every byte of the size, the last I/O cut to fit, in sizes that vary.
        assert_eq!(bytes, 1 << 20, "{rw} {sizing}");
        let (smallest, largest) = match sizing {
            "--bsrange=4k-16k" => (4096, 16384),
            "--bssplit=4k/50:64k/50" => (4096, 65536),
            _ => (8192, 32768),
        };
        assert!(
            ios > bytes / largest && ios < bytes / smallest,
            "{ios} I/Os for {bytes} bytes with {sizing}"
        );
    }
    assert_eq!(
        std::fs::metadata(dir.path().join("varying")).unwrap().len(),
        1 << 20
    );
}

#[test]
fn status_interval_json_is_one_document_per_line_with_growing_totals() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--output-format=json",
            "--status-interval=200ms",
            "--name=first",
            "--ioengine=null",
            "--size=1m",
            "--runtime=700ms",
            "--time_based",
            "--name=second",
            "--stonewall",
            "--ioengine=null",
            "--size=1m",
            "--runtime=700ms",
            "--time_based",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let docs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one document ({e}): {l}")))
        .collect();
    // Reports every 200 ms over 1.4 s of two groups, and the final one.
    assert!(docs.len() >= 4, "{} lines", docs.len());
    let ios = |doc: &Value, job: usize| doc["jobs"][job]["read"]["total_ios"].as_u64();
    let mut last = 0;
    for doc in &docs {
        let first = ios(doc, 0).expect("the first job in every report");
        assert!(first >= last, "totals go down: {first} after {last}");
        last = first;
    }
    // The second group appears once it has started, and the last line is
    // the final report of both.
    let final_doc = docs.last().unwrap();
    assert_eq!(final_doc["jobs"].as_array().unwrap().len(), 2);
    assert!(ios(final_doc, 1).unwrap() > 0);
    assert!(
        docs.iter()
            .any(|d| d["jobs"].as_array().unwrap().len() == 1)
    );
    // Each status report also has each job's figures since the one before:
    // the first job's I/Os of the interval are the difference of its totals.
    let mut before = 0;
    for doc in &docs[..docs.len() - 1] {
        let total = ios(doc, 0).unwrap();
        let interval = &doc["hybrio"]["jobs"][0]["interval"];
        assert_eq!(interval["read"]["total_ios"], total - before, "{interval}");
        if total > before {
            assert!(
                interval["read"]["clat_ns"]["percentile"]["50.000000"].is_u64(),
                "{interval}"
            );
        }
        before = total;
    }
    assert!(final_doc["hybrio"]["jobs"][0].get("interval").is_none());
}

#[test]
fn unified_rw_reporting_sums_the_directions_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    let job = |mode: &str| {
        vec![
            "--name=u".to_string(),
            "--ioengine=null".to_string(),
            "--size=1m".to_string(),
            "--rw=randrw".to_string(),
            format!("--unified_rw_reporting={mode}"),
        ]
    };
    let json = |mode: &str| {
        let args = job(mode);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_json(&args, dir.path())["jobs"][0].clone()
    };
    let mixed = json("mixed");
    let names: Vec<&str> = ["read", "write", "trim", "sync", "mixed"]
        .into_iter()
        .filter(|k| mixed.get(*k).is_some())
        .collect();
    assert_eq!(names, ["mixed"], "fio writes mixed alone");
    assert_eq!(mixed["mixed"]["io_bytes"], 1 << 20);
    assert_eq!(mixed["mixed"]["total_ios"], 256);
    let both = json("both");
    let reads = both["read"]["total_ios"].as_u64().unwrap();
    let writes = both["write"]["total_ios"].as_u64().unwrap();
    assert!(reads > 0 && writes > 0);
    assert_eq!(both["mixed"]["total_ios"].as_u64(), Some(reads + writes));

    let text = |mode: &str, extra: &str| {
        let mut args = job(mode);
        args.push(extra.to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = hybrio(&args, dir.path());
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let normal = text("mixed", "--output-format=normal");
    assert!(
        normal.contains("  mixed: IOPS=") && normal.contains("  MIXED: bw="),
        "{normal}"
    );
    assert!(
        !normal.contains("  read: IOPS=") && !normal.contains("READ: bw="),
        "{normal}"
    );
    let normal = text("both", "--output-format=normal");
    for line in [
        "  read: IOPS=",
        "  write: IOPS=",
        "  mixed: IOPS=",
        "READ: bw=",
        "MIXED: bw=",
    ] {
        assert!(normal.contains(line), "{line} missing: {normal}");
    }
    // Terse: mixed takes the read fields and drops the write ones (41 each);
    // both adds them after the write ones.
    let fields = |mode: &str| text(mode, "--minimal").trim_end().split(';').count();
    assert_eq!(fields("none") - fields("mixed"), 41);
    assert_eq!(fields("both") - fields("none"), 41);
}

#[test]
fn rate_limits_hold_each_direction_to_its_rate() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        &[
            "--name=r",
            "--ioengine=null",
            "--size=64m",
            "--rw=randrw",
            "--runtime=1",
            "--time_based",
            "--rate_iops=200,,",
            "--rate=,400k",
        ],
        dir.path(),
    );
    let job = &doc["jobs"][0];
    let (reads, writes) = (
        job["read"]["total_ios"].as_u64().unwrap(),
        job["write"]["total_ios"].as_u64().unwrap(),
    );
    // Never above the rate (one I/O of slack for the schedule's first);
    // below it only if this machine could not keep up, hence the wide floor.
    assert!(
        (100..=201).contains(&reads),
        "{reads} reads at 200 IOPS for 1 s"
    );
    assert!(
        (50..=101).contains(&writes),
        "{writes} 4k writes at 400 KiB/s for 1 s"
    );
    let err = hybrio(&["--name=r", "--size=1m", "--rate=abc"], dir.path());
    assert_eq!(err.status.code(), Some(1));
}

#[test]
fn latency_logs_have_a_line_per_io_in_fio_format() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        &[
            "--name=l",
            "--filename=logged",
            "--size=256k",
            "--rw=randrw",
            "--numjobs=2",
            "--write_lat_log",
            "--write_iops_log=counts",
            "--log_offset=1",
        ],
        dir.path(),
    );
    for (number, job) in doc["jobs"].as_array().unwrap().iter().enumerate() {
        let ios = job["read"]["total_ios"].as_u64().unwrap()
            + job["write"]["total_ios"].as_u64().unwrap();
        // Named after the job when no prefix is given, numbered in the run from 1.
        let lat =
            std::fs::read_to_string(dir.path().join(format!("l_lat.{}.log", number + 1))).unwrap();
        assert_eq!(lat.lines().count() as u64, ios);
        for line in lat.lines() {
            let fields: Vec<u64> = line.split(", ").map(|f| f.parse().unwrap()).collect();
            // time, latency (ns), direction, block size, offset, priority
            assert_eq!(fields.len(), 6, "{line}");
            assert!(
                fields[1] > 0 && fields[2] <= 1 && fields[3] == 4096,
                "{line}"
            );
            assert!(
                fields[4].is_multiple_of(4096) && fields[4] < 256 * 1024,
                "{line}"
            );
        }
        let counts =
            std::fs::read_to_string(dir.path().join(format!("counts_iops.{}.log", number + 1)))
                .unwrap();
        assert_eq!(counts.lines().count() as u64, ios);
    }
}
