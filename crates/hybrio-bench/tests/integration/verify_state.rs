//! fio's verify state (`verify_state_save`, `verify_state_load`): hybrio
//! saves it as the fio it speaks as saves it (version 3 as fio 3.33, 5 as
//! fio 3.42), each fio reads it, hybrio reads each fio's, and a run killed
//! outright is checked up to what completed.

use std::process::Command;

use super::verify::{fio_job, with_strs};
use super::{Fio, fios, hybrio, run_json};

/// A writing job killed outright (SIGKILL) saved how far it got a moment
/// before: verify_state_load reads back what completed and nothing after
/// it, and finds nothing wrong.
#[test]
fn a_write_run_killed_outright_is_checked_up_to_what_completed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // Laid out whole first, as a disk is: what was never written reads as zeros.
    std::fs::File::create(&data)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let job = [
        "--name=k",
        "--filename=data",
        "--size=8m",
        "--bs=64k",
        "--rw=write",
        "--verify=crc32c",
    ];
    let mut writer = Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .args(job)
        .arg("--rate=2m")
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2200));
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert!(
        dir.path().join("local-k-0-verify.state").exists(),
        "no state saved"
    );

    let mut only = job.to_vec();
    only.extend(["--verify_only=1", "--verify_state_load=1"]);
    let doc = run_json(&only, dir.path());
    let counts = &doc["hybrio"]["jobs"][0]["verify"];
    let checked = counts["blocks"].as_u64().unwrap();
    assert!(
        (16..128).contains(&checked),
        "{checked} of 128 blocks checked"
    );
    assert_eq!(counts["bad_blocks"], 0);
    // Without the state, the blocks never written fail.
    let out = hybrio(
        &job.iter()
            .copied()
            .chain(["--verify_only=1"])
            .collect::<Vec<_>>(),
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad magic header 0"));
}

/// Each fio reads the state hybrio saves speaking as it (version 3 as fio
/// 3.33, 5 as fio 3.42), and hybrio reads it too, up to the same write.
#[test]
fn each_fio_reads_the_state_hybrio_saves_as_it() {
    for fio in fios() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::File::create(dir.path().join("data"))
            .unwrap()
            .set_len(8 << 20)
            .unwrap();
        let compat = format!("--fio-compat={}", fio.version);
        let job = [
            "--name=s",
            "--filename=data",
            "--size=8m",
            "--bs=64k",
            "--rw=write",
            "--verify=crc32c",
        ];
        // Cut short at its runtime, a quarter in: the state is saved as it ends.
        let cut_short = with_strs(
            &job,
            &["--rate=4m", "--runtime=1", "--do_verify=0", &compat],
        );
        let doc = run_json(&cut_short, dir.path());
        let written = doc["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
        assert!(written > 0 && written < 128, "{written}");
        let state = std::fs::read(dir.path().join("local-s-0-verify.state")).unwrap();
        let version = if fio.version == "3.33" { 3 } else { 5 };
        assert_eq!(
            state[0], version,
            "fio {}: the state's version",
            fio.version
        );
        let only = with_strs(&job, &["--verify_only=1", "--verify_state_load=1"]);
        let doc = run_json(&only, dir.path());
        let counts = &doc["hybrio"]["jobs"][0]["verify"];
        assert_eq!(counts["bad_blocks"], 0);
        let by_hybrio = counts["blocks"].as_u64().unwrap();
        assert!(
            by_hybrio + 1 >= written && by_hybrio <= written,
            "fio {}: hybrio checked {by_hybrio} of {written}",
            fio.version
        );
        // fio's verify_only run would save a state of its own over it.
        let by_fio = with_strs(&only, &["--verify_state_save=0"]);
        let checked = fio_job(&fio, &by_fio, dir.path());
        assert_eq!(
            checked["error"], 0,
            "fio {} read hybrio's state",
            fio.version
        );
        assert_eq!(
            checked["read"]["total_ios"], by_hybrio,
            "fio {}: where the check stops",
            fio.version
        );
    }
}

/// hybrio reads the state each fio saves (version 3 from fio 3.33, 5 from
/// fio 3.42), whatever it speaks as.
#[test]
fn hybrio_reads_fios_saved_state() {
    for fio in fios() {
        reads_the_state_of(&fio);
    }
}

fn reads_the_state_of(fio: &Fio) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("data"))
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let job = [
        "--name=f",
        "--filename=data",
        "--size=8m",
        "--bs=64k",
        "--rw=write",
        "--verify=md5",
    ];
    // fio saves its state when the job ends: here, at its runtime, a quarter in.
    let mut cut_short = job.to_vec();
    cut_short.extend(["--rate=4m", "--runtime=1", "--do_verify=0"]);
    let written = fio_job(fio, &cut_short, dir.path());
    let blocks = written["write"]["total_ios"].as_u64().unwrap();
    assert!(blocks > 0 && blocks < 128, "{blocks}");
    let state = std::fs::read(dir.path().join("local-f-0-verify.state")).unwrap();
    let version = if fio.version == "3.33" { 3 } else { 5 };
    assert_eq!(state[0], version, "fio {}'s state", fio.version);
    let mut only = job.to_vec();
    only.extend(["--verify_only=1", "--verify_state_load=1"]);
    let doc = run_json(&only, dir.path());
    let counts = &doc["hybrio"]["jobs"][0]["verify"];
    assert_eq!(counts["bad_blocks"], 0);
    // Reading back stops at the first of the last 1 (iodepth) writes not
    // completed, or (version 5) at the first not issued.
    let checked = counts["blocks"].as_u64().unwrap();
    assert!(
        checked + 1 >= blocks && checked <= blocks,
        "fio {}: {counts} of {blocks}",
        fio.version
    );
}

#[test]
fn verify_state_load_without_a_saved_state_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = hybrio(
        &[
            "--name=nothing",
            "--filename=data",
            "--size=64k",
            "--rw=write",
            "--verify=crc32c",
            "--verify_only=1",
            "--verify_state_load=1",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("verify_state_load: no saved state ./local-nothing-0-verify.state"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
