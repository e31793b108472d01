//! Jobs that end other jobs (`exitall`, `exit_what`, `exitall_on_error`)
//! and jobs that end themselves (`ratemin`, steady state).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::hybrio;

/// Runs a job file, returns its report, exit status and how long it took.
fn run_file(text: &str) -> (Value, Option<i32>, Duration, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("jobs.fio"), text).unwrap();
    let started = Instant::now();
    let out = hybrio(&["--output-format=json", "jobs.fio"], dir.path());
    let took = started.elapsed();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        doc,
        out.status.code(),
        took,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A job that would run 120 s, unless ended. The tests' bounds on time
/// only tell "ended early" (a second or two) from "ran its whole time": they
/// are far from both, so that a busy machine cannot break them.
const LONG: &str = "rw=read\nsize=1m\ntime_based\nruntime=120\nrate=1m\n";

fn runtime_ms(doc: &Value, job: &str) -> Option<u64> {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == job)
        .map(|j| j["job_runtime"].as_u64().unwrap())
}

#[test]
fn exitall_ends_the_group_when_one_job_ends() {
    let text = format!(
        "[global]\nioengine=psync\nfilename=data\n[short]\nrw=read\nsize=256k\nexitall\n[long]\n{LONG}"
    );
    let (doc, status, took, stderr) = run_file(&text);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let long = runtime_ms(&doc, "long").unwrap();
    assert!(long < 60_000, "the long job ran {long} ms");
    assert_eq!(doc["jobs"][1]["error"], 0, "ended, not failed");
}

#[test]
fn exit_what_stonewall_ends_what_runs_and_all_ends_what_is_to_come() {
    let group = |what: &str| {
        format!(
            "[global]\nfilename=data\nexitall\n[short]\nrw=read\nsize=256k\nexit_what={what}\n[long]\n{LONG}[later]\nstonewall\nrw=read\nsize=256k\n"
        )
    };
    let (doc, status, _, stderr) = run_file(&group("stonewall"));
    assert_eq!(status, Some(0), "{stderr}");
    assert!(runtime_ms(&doc, "long").unwrap() < 60_000);
    assert!(
        runtime_ms(&doc, "later").is_some(),
        "the next group still runs"
    );
    let (doc, status, _, stderr) = run_file(&group("all"));
    assert_eq!(status, Some(0), "{stderr}");
    assert!(
        runtime_ms(&doc, "later").is_none(),
        "the next group never starts"
    );
}

#[test]
fn exitall_on_error_ends_others_only_on_a_failure() {
    // A job whose file ends before its size: it fails (EIO), ending the long one.
    let text = format!(
        "[global]\nfilename=data\n[failing]\nrw=read\nsize=256k\ninject=eio:1\nexitall_on_error\n[long]\n{LONG}"
    );
    let (doc, status, took, _) = run_file(&text);
    assert_eq!(status, Some(1));
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert_eq!(doc["jobs"][0]["error"], 5);
    assert!(runtime_ms(&doc, "long").unwrap() < 60_000);
}

#[test]
fn a_job_below_its_ratemin_ends_with_an_error_and_one_above_does_not() {
    // 1 MiB/s at most, 2 MiB/s at least: it cannot keep it.
    let slow = "[j]\nfilename=data\nrw=read\nsize=1m\ntime_based\nruntime=120\nrate=1m\nratemin=2m\nrate_cycle=500\n";
    let (doc, status, took, stderr) = run_file(slow);
    assert_eq!(status, Some(1), "{stderr}");
    assert_eq!(doc["jobs"][0]["error"], 5);
    assert!(
        stderr.contains("j: rate_min=2097152B/s not met, got"),
        "{stderr}"
    );
    // After fio's 2 s settle and one cycle, not the whole runtime.
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let kept = "[j]\nfilename=data\nrw=read\nsize=1m\ntime_based\nruntime=3\nrate_iops_min=10\n";
    let (doc, status, _, stderr) = run_file(kept);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(doc["jobs"][0]["error"], 0);
}

#[test]
fn wait_for_starts_a_job_once_every_clone_of_its_waitee_ended() {
    let text = "[global]\nfilename=data\nsize=512k\n[w]\nrw=write\nnumjobs=2\nrate=1m\n[r]\nnew_group\nwait_for=w\nrw=read\n";
    let (doc, status, _, stderr) = run_file(text);
    assert_eq!(status, Some(0), "{stderr}");
    let jobs = doc["jobs"].as_array().unwrap();
    let ended = |j: &Value| j["job_start"].as_u64().unwrap() + j["job_runtime"].as_u64().unwrap();
    let writers_end = jobs
        .iter()
        .filter(|j| j["jobname"] == "w")
        .map(ended)
        .max()
        .unwrap();
    let reader = jobs.iter().find(|j| j["jobname"] == "r").unwrap();
    // Half a second of writing at 1 MiB/s, then the reader.
    assert!(
        reader["job_start"].as_u64().unwrap() + 5 >= writers_end,
        "the reader started at {} ms, the writers ended at {writers_end} ms",
        reader["job_start"]
    );
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=r",
            "--filename=d",
            "--size=64k",
            "--wait_for=nobody",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("wait_for=nobody: no job of that name before this one"),
        "{err}"
    );
}

#[test]
fn thinktime_stalls_after_every_thinktime_blocks_ios() {
    // 40 I/Os, a 10 ms stall every 2: at least 20 stalls' worth.
    let text = "[t]\nfilename=data\nsize=1m\nrw=randread\nthinktime=10ms\nthinktime_spin=1ms\nthinktime_blocks=2\nnumber_ios=40\n";
    let (doc, status, _, stderr) = run_file(text);
    assert_eq!(status, Some(0), "{stderr}");
    let job = &doc["jobs"][0];
    assert_eq!(job["read"]["total_ios"], 40);
    let ms = job["job_runtime"].as_u64().unwrap();
    assert!(ms >= 195, "20 stalls of 10 ms took {ms} ms");
}

#[test]
fn a_job_runs_where_its_placement_says_or_says_why_it_cannot() {
    let text = "[p]\nfilename=data\nsize=256k\nrw=randread\ncpus_allowed=0\nnice=3\nprioclass=2\nprio=6\nnuma_cpu_nodes=0\nnuma_mem_policy=bind:0\n";
    let (doc, status, _, stderr) = run_file(text);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 64);
    let dir = tempfile::tempdir().unwrap();
    for (option, says) in [
        ("--numa_cpu_nodes=0-4096", "this machine has no NUMA node"),
        ("--cpus_allowed=4095", "this machine has no CPU 4095"),
        ("--numa_mem_policy=spread", "expected default, local"),
        ("--nice=40", "out of range"),
    ] {
        let out = hybrio(
            &["--name=p", "--filename=d", "--size=64k", option],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(1), "{option}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{option}: {err}"
        );
    }
}

#[test]
fn nrfiles_and_filename_format_name_a_jobs_files_as_fio() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=j",
            "--size=1m",
            "--rw=write",
            "--nrfiles=4",
            "--numjobs=2",
            "--filename_format=f.$jobname.$jobnum.$filenum",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for job in 0..2 {
        for file in 0..4 {
            let path = dir.path().join(format!("f.j.{job}.{file}"));
            assert_eq!(
                std::fs::metadata(&path).map(|m| m.len()).ok(),
                Some(256 << 10),
                "{path:?}"
            );
        }
    }
}

#[test]
fn openfiles_keeps_that_many_open_and_every_block_is_still_written_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    for (rw, service) in [
        ("randwrite", "roundrobin"),
        ("write", "random"),
        ("randwrite", "random"),
    ] {
        let out = hybrio(
            &[
                "--output-format=json",
                "--name=o",
                "--size=2m",
                "--nrfiles=8",
                "--openfiles=2",
                "--bs=4k",
                &format!("--rw={rw}"),
                &format!("--file_service_type={service}"),
                "--verify=crc32c",
                "--verify_state_save=0",
                "--ioengine=io_uring",
                "--iodepth=4",
            ],
            dir.path(),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{rw} {service}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["jobs"][0]["write"]["total_ios"], 512, "{rw} {service}");
        let verify = &doc["hybrio"]["jobs"][0]["verify"];
        assert_eq!(verify["blocks"], 512, "{rw} {service}");
        assert_eq!(verify["bad_blocks"], 0, "{rw} {service}");
        for file in 0..8 {
            let path = dir.path().join(format!("o.0.{file}"));
            assert_eq!(
                std::fs::metadata(&path).unwrap().len(),
                256 << 10,
                "{path:?}"
            );
        }
    }
}

#[test]
fn files_are_created_kept_or_removed_as_the_job_says() {
    let dir = tempfile::tempdir().unwrap();
    // unlink: gone once the job is done.
    let out = hybrio(
        &[
            "--name=u",
            "--filename=gone",
            "--size=256k",
            "--rw=write",
            "--unlink=1",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.path().join("gone").exists());
    // allow_file_create=0: a missing file is an error, in one line.
    let out = hybrio(
        &[
            "--name=a",
            "--filename=missing",
            "--size=256k",
            "--rw=write",
            "--allow_file_create=0",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("missing does not exist, and allow_file_create=0"),
        "{err}"
    );
    // create_on_open and pre_read run, and leave the files.
    for option in ["--create_on_open=1", "--pre_read=1"] {
        let out = hybrio(
            &[
                "--name=c",
                "--filename=kept",
                "--size=256k",
                "--rw=randrw",
                option,
            ],
            dir.path(),
        );
        assert!(
            out.status.success(),
            "{option}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::metadata(dir.path().join("kept")).unwrap().len(),
            256 << 10
        );
    }
}

#[test]
fn flow_keeps_jobs_to_their_weights() {
    // Flow holds them to 8:1 of its iterations, however fast each could
    // go, though b starts late. exitall: the first to end ends the other,
    // which would otherwise run alone, free of the flow, for as long as the
    // scheduler started it after the first (a flake hunt's run saw 2.85:1).
    let text = "[global]\nioengine=null\nsize=1g\ntime_based\nruntime=1\nthread\nexitall\n[a]\nrw=randread\nflow=8\n[b]\nrw=write\nflow=1\nstartdelay=300ms\n";
    let (doc, status, _, stderr) = run_file(text);
    assert_eq!(status, Some(0), "{stderr}");
    let a = doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap() as f64;
    let b = doc["jobs"][1]["write"]["total_ios"].as_u64().unwrap() as f64;
    assert!((7.0..9.0).contains(&(a / b)), "{a} against {b}");
}

#[test]
fn size_as_a_share_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("data"))
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let doc = super::run_json(
        &["--name=s", "--filename=data", "--size=25%", "--rw=randread"],
        dir.path(),
    );
    assert_eq!(doc["jobs"][0]["read"]["io_bytes"], 1 << 20);
    let out = hybrio(&["--name=s", "--size=25%"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("size=N% is a share of the job's files"));
}

#[test]
fn a_job_at_a_steady_rate_ends_once_its_window_says_so() {
    // 2000 IOPS paced: steady from the first full window of 2 seconds
    // after a 1-second ramp, long before the 120 seconds of runtime.
    let (doc, status, took, stderr) = run_file(
        "[steady]\nfilename=/dev/null\nrw=write\nbs=4k\nsize=1g\ntime_based\nruntime=120\n\
         rate_iops=2000\nss=iops:20%\nss_dur=2\nss_ramp=1\n",
    );
    assert_eq!(status, Some(0), "{stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let ss = &doc["jobs"][0]["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["duration"], 2);
    assert_eq!(ss["ss"], "iops:20.000000%");
    let iops = ss["data"]["iops"].as_array().unwrap();
    assert_eq!(iops.len(), 2);
    for sample in iops {
        let v = sample.as_u64().unwrap();
        assert!((1000..=3000).contains(&v), "a second's IOPS {v}");
    }
    // A limit no rate can meet: the job runs its whole time, not attained.
    let (doc, status, _, stderr) = run_file(
        "[never]\nfilename=/dev/null\nrw=write\nbs=4k\nsize=1g\ntime_based\nruntime=3\n\
         rate_iops=2000\nss=iops_slope:0%\nss_dur=2\n",
    );
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(doc["jobs"][0]["steadystate"]["attained"], 0);
    assert!(doc["jobs"][0]["job_runtime"].as_u64().unwrap() >= 2900);
}

#[test]
fn latency_target_settles_on_a_depth_or_fails_the_job() {
    // Every I/O well within the target: the depth doubles to iodepth and the
    // job ends after one last window there, long before its runtime. (A
    // read of /dev/zero takes microseconds; the target is seconds, so that
    // a loaded machine's scheduling delays, which a 50 ms target met in one
    // run of a busy flake hunt, cannot fail a window.)
    let (doc, status, took, stderr) = run_file(
        "[deep]\nfilename=/dev/zero\nrw=randread\nbs=4k\nsize=1g\niodepth=16\nioengine=io_uring\n\
         time_based\nruntime=120\nlatency_target=5s\nlatency_window=100ms\n",
    );
    assert_eq!(status, Some(0), "{stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let job = &doc["jobs"][0];
    assert_eq!(job["latency_depth"], 16);
    assert_eq!(job["latency_target"], 5_000_000_000u64);
    assert_eq!(job["latency_window"], 100_000);
    // The figures are those of the last window only.
    assert!(
        job["job_runtime"].as_u64().unwrap() < 1000,
        "{}",
        job["job_runtime"]
    );
    // A device slower than the target even at depth 1: the job fails.
    let (doc, status, _, stderr) = run_file(
        "[slow]\nfilename=slow\nrw=randread\nbs=4k\nsize=1m\nioengine=psync\n\
         completion_latency=2ms\nlatency_target=100us\nlatency_window=100ms\nruntime=5\n",
    );
    assert_eq!(status, Some(1), "{stderr}");
    assert_eq!(doc["jobs"][0]["error"], 110);
    assert!(
        stderr.contains("exceeds specified max (100000 nsec)"),
        "{stderr}"
    );
}

#[test]
fn comm_names_the_jobs_thread() {
    // The job thinks for a minute after its first I/O: its thread is there,
    // under its comm, until the test has seen it and stops the run.
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .args([
            "--name=t",
            "--comm=hybrio-comm-t",
            "--size=8k",
            "--bs=4k",
            "--thinktime=60s",
            "--output-format=terse",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tasks = format!("/proc/{}/task", child.id());
    let named = |tasks: &str| {
        std::fs::read_dir(tasks)
            .into_iter()
            .flatten()
            .flatten()
            .any(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.trim() == "hybrio-comm-t")
            })
    };
    // A guard against a hang, not a measure: the thread is named when it starts.
    let found = (0..1200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        named(&tasks)
    });
    let _ = std::process::Command::new("kill")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
    assert!(found, "no thread of the run was named hybrio-comm-t");
}

/// The bytes `fio` reads measured running the job file `job`.
fn read_bytes_by(fio: &super::Fio, job: &str) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.fio"), job).unwrap();
    let out = std::process::Command::new(&fio.path)
        .args(["--output-format=json", "r.fio"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let by_fio: Value = serde_json::from_slice(&out.stdout).unwrap();
    by_fio["jobs"][0]["read"]["io_bytes"].as_u64().unwrap()
}

/// A ramp by time counts its bytes in a size-limited job's size, as both
/// fios count them: at 8 MiB a second, a 1 s ramp takes about 8 of the
/// job's 16 MiB (hybrio measured all 16 after the ramp before); a job whose
/// size runs out during the ramp ends then, its 4 MiB reported. fio 3.42
/// looks whether the ramp is over once a second, from its helper thread:
/// its first case ends the ramp anywhere from 1 to 2 s in, or never (the
/// job done first), so it is compared on the second case only.
#[test]
fn a_ramp_by_time_counts_its_bytes_in_the_size_as_fio_does() {
    let cases = [
        (
            "[r]\nioengine=null\nsize=16m\nrate=8m\nramp_time=1\n",
            1..12 << 20,
            false,
        ),
        (
            "[r]\nioengine=null\nsize=4m\nrate=8m\nramp_time=1\n",
            4 << 20..(4 << 20) + 1,
            true,
        ),
    ];
    for (job, expected, with_342) in cases {
        let (doc, status, _, stderr) = run_file(job);
        assert_eq!(status, Some(0), "{stderr}");
        let measured = doc["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
        assert!(
            expected.contains(&measured),
            "{job}: {measured} bytes measured"
        );
        for fio in super::fios() {
            if fio.version == "3.42" && !with_342 {
                continue;
            }
            let measured = read_bytes_by(&fio, job);
            assert!(
                expected.contains(&measured),
                "fio {}: {job}: {measured}",
                fio.version
            );
        }
    }
}

#[test]
fn ramp_size_ramps_by_bytes_and_counts_them_in_the_size_as_fio_342() {
    // 8 MiB a second: the first check, at 1 s, finds 8 MiB done, at least
    // the 6 MiB of the ramp; the ramp's bytes count in the job's 32 MiB, as
    // fio 3.42 counts them, so fewer than 32 MiB are measured.
    let job = "[r]\nioengine=null\nsize=32m\nrate=8m\nramp_size=6m\n";
    let (doc, status, _, stderr) = run_file(job);
    assert_eq!(status, Some(0), "{stderr}");
    let measured = doc["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert!(
        (1..26 << 20).contains(&measured),
        "{measured} bytes measured"
    );
    if let Some(fio) = super::fios().into_iter().find(|f| f.version == "3.42") {
        let measured = read_bytes_by(&fio, job);
        assert!((1..26 << 20).contains(&measured), "fio 3.42: {measured}");
    }
    // With group_reporting the group's bytes count together, as fio 3.42
    // counts them: two jobs at 4 MiB a second reach 6 MiB by the check at
    // 1 s, where one alone needs until 2 s, and the two then measure more
    // than the 2 x 8 MiB left after a ramp of 2 s.
    let (doc, status, _, stderr) = run_file(
        "[g]\nioengine=null\nsize=16m\nrate=4m\nramp_size=6m\nnumjobs=2\ngroup_reporting\n",
    );
    assert_eq!(status, Some(0), "{stderr}");
    let measured = doc["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert!(measured > 20 << 20, "the group measured {measured} bytes");
    // 12 MiB is not done by the check at 1 s: the ramp lasts 2 s at least,
    // and the job's 2 s of runtime start after it.
    let (doc, status, took, stderr) =
        run_file("[t]\nioengine=null\nsize=1g\ntime_based\nruntime=2\nrate=8m\nramp_size=12m\n");
    assert_eq!(status, Some(0), "{stderr}");
    assert!(took >= Duration::from_millis(3900), "took {took:?}");
    assert!(doc["jobs"][0]["read"]["runtime"].as_u64().unwrap() >= 1900);
}
