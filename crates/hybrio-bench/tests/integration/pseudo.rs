//! fio's engines without I/O: `cpuio` keeps a share of a CPU busy, `exec`
//! runs a program for the job's runtime and ends it.

use std::time::{Duration, Instant};

use super::{hybrio, run_json};

#[test]
fn cpuio_burns_its_share_of_a_cpu_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["noop", "qsort"] {
        let doc = run_json(
            &[
                "--name=burn",
                "--ioengine=cpuio",
                "--cpuload=50",
                &format!("--cpumode={mode}"),
                "--cpuchunks=20000",
                "--time_based",
                "--runtime=1",
            ],
            dir.path(),
        );
        let job = &doc["jobs"][0];
        assert_eq!(job["error"], 0, "{mode}");
        assert!(job["job_runtime"].as_u64().unwrap() >= 1000, "{mode}");
        // Busy half of the wall time, asleep the other half: it burns (an
        // idle job uses hundredths of a percent) and it sleeps (never all of
        // a CPU). How much of the CPU its busy half gets is the scheduler's
        // business: 9% with four other busy processes on two cores.
        let busy = job["usr_cpu"].as_f64().unwrap() + job["sys_cpu"].as_f64().unwrap();
        assert!((1.0..95.0).contains(&busy), "{mode}: {busy}% of a CPU");
        assert_eq!(job["read"]["total_ios"], 0, "{mode}: no I/O");
    }
    let out = hybrio(&["--name=b", "--ioengine=cpuio", "--runtime=1"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ioengine=cpuio needs cpuload="), "{stderr}");
}

#[test]
fn exec_runs_its_program_and_ends_it_with_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("prog.sh");
    // Left alone, the program would run 300 s; the bound below only tells
    // that from being ended at the runtime (1 s and a 1 s grace).
    std::fs::write(&script, "#!/bin/sh\necho \"$@\"\nexec sleep 300\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let started = Instant::now();
    let doc = run_json(
        &[
            "--name=prog",
            "--ioengine=exec",
            &format!("--program={}", script.display()),
            "--arguments=%n ran %r",
            "--runtime=1",
            "--grace_time=1",
        ],
        dir.path(),
    );
    assert_eq!(doc["jobs"][0]["error"], 0);
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "the program was not ended"
    );
    let out = std::fs::read_to_string(dir.path().join("prog.stdout")).unwrap();
    assert_eq!(out, "prog ran 1\n");

    // A program that fails before the runtime is over ends the job, as
    // fio's exec engine lets it, and says so.
    let started = Instant::now();
    let out = hybrio(
        &[
            "--name=f",
            "--ioengine=exec",
            "--program=/bin/false",
            "--runtime=300",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    // Far from both the moment /bin/false takes and the runtime.
    assert!(started.elapsed() < Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/bin/false exited before its runtime was over"),
        "{stderr}"
    );
    let out = hybrio(
        &[
            "--name=m",
            "--ioengine=exec",
            "--program=/no/such/program",
            "--runtime=1",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("run /no/such/program: No such file"),
        "{stderr}"
    );
}
