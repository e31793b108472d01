//! What a user sees when the storage fails under a job: a full filesystem
//! (ENOSPC), a read-only one, a file truncated or deleted while the job
//! runs. Each gives one clear line, a valid report of what was done, and
//! the right exit status. (A run killed outright is in `verify.rs`.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::hybrio;

/// A small tmpfs mounted for a test, unmounted when dropped (also when the
/// test fails).
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    /// `None` (and why, printed) where this machine cannot mount one.
    fn mount(size: &str) -> Option<SmallFs> {
        let dir = tempfile::tempdir().ok()?;
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallFs { dir }),
            Ok(out) => {
                eprintln!(
                    "skipping: cannot mount a tmpfs: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                None
            }
            Err(e) => {
                eprintln!("skipping: cannot run mount: {e}");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount_read_only(&self) -> bool {
        Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_full_filesystem_ends_the_job_unless_enospc_is_ignored() {
    let Some(fs) = SmallFs::mount("1m") else {
        return;
    };
    let job = [
        "--output-format=json",
        "--name=fill",
        "--filename=big",
        "--size=4m",
        "--bs=64k",
        "--rw=write",
    ];
    let out = hybrio(&job, fs.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = report(&out);
    assert_eq!(doc["jobs"][0]["error"], 28);
    let written = doc["jobs"][0]["write"]["io_bytes"].as_u64().unwrap();
    assert!(written > 0 && written <= 1 << 20, "{written} bytes written");
    let err = stderr(&out);
    assert!(err.contains("No space left on device"), "{err}");

    // fio's way to go on: the write errors of the kind listed, counted.
    std::fs::remove_file(fs.path().join("big")).unwrap();
    let mut ignoring = job.to_vec();
    ignoring.extend([
        "--continue_on_error=write",
        "--ignore_error=,ENOSPC",
        "--error_dump=0",
    ]);
    let out = hybrio(&ignoring, fs.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = report(&out);
    let job_report = &doc["jobs"][0];
    assert_eq!(job_report["error"], 0);
    assert!(job_report["total_err"].as_u64().unwrap() > 0);
    assert_eq!(job_report["first_error"], 28);
    assert!(!stderr(&out).contains("io_u error"), "{}", stderr(&out));
    // With error_dump (the default) each is printed as fio prints it.
    ignoring.pop();
    let out = hybrio(&ignoring, fs.path());
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out)
            .contains("fio: io_u error on file big: No space left on device: write offset="),
        "{}",
        stderr(&out)
    );
    // Verifying what it wrote: only the writes that completed are read
    // back, and none is a false alarm.
    let mut verifying = ignoring.clone();
    verifying.extend(["--error_dump=0", "--verify=crc32c", "--verify_state_save=0"]);
    std::fs::remove_file(fs.path().join("big")).unwrap();
    let out = hybrio(&verifying, fs.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = report(&out);
    let counts = &doc["hybrio"]["jobs"][0]["verify"];
    assert!(counts["blocks"].as_u64().unwrap() >= 8, "{counts}");
    assert_eq!(counts["bad_blocks"], 0);
    // continue_on_error alone goes on after EIO and EILSEQ only, as fio's.
    let mut not_listed = job.to_vec();
    not_listed.push("--continue_on_error=write");
    let out = hybrio(&not_listed, fs.path());
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn fill_device_writes_until_the_filesystem_is_full_and_is_not_an_error() {
    let Some(fs) = SmallFs::mount("2m") else {
        return;
    };
    // A size that cannot fit: the writes meet ENOSPC, which ends the job.
    for size in [None, Some("--size=8m")] {
        let _ = std::fs::remove_file(fs.path().join("fill"));
        let mut job = vec![
            "--output-format=json",
            "--name=fill",
            "--filename=fill",
            "--bs=64k",
            "--rw=write",
            "--fill_device=1",
            "--verify=crc32c",
            "--verify_state_save=0",
        ];
        job.extend(size);
        let out = hybrio(&job, fs.path());
        assert_eq!(out.status.code(), Some(0), "{size:?}: {}", stderr(&out));
        let doc = report(&out);
        assert_eq!(doc["jobs"][0]["error"], 0, "{size:?}");
        let written = doc["jobs"][0]["write"]["io_bytes"].as_u64().unwrap();
        // All of the 2 MiB, to the last 64 KiB block that fit.
        assert!(
            written > (2 << 20) - (128 << 10) && written <= 2 << 20,
            "{size:?}: {written}"
        );
        let counts = &doc["hybrio"]["jobs"][0]["verify"];
        assert_eq!(counts["bad_blocks"], 0, "{size:?}");
        assert_eq!(
            counts["blocks"].as_u64().unwrap() * (64 << 10),
            written,
            "{size:?}"
        );
    }
}

#[test]
fn a_read_only_filesystem_is_one_clear_line() {
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    std::fs::write(fs.path().join("data"), vec![0u8; 1 << 20]).unwrap();
    if !fs.remount_read_only() {
        eprintln!("skipping: cannot remount read-only");
        return;
    }
    let out = hybrio(
        &["--name=w", "--filename=data", "--size=1m", "--rw=write"],
        fs.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("Read-only file system"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // Reading it is fine.
    let out = hybrio(
        &["--name=r", "--filename=data", "--size=1m", "--rw=read"],
        fs.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Starts a rate-limited job (about 4 s) in `dir`.
fn slow_job(dir: &Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_hybrio"))
        .args([
            "--output-format=json",
            "--name=j",
            "--filename=data",
            "--size=32m",
            "--bs=64k",
            "--rate=8m",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_file_truncated_under_a_reading_job_fails_it_naming_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("data");
    std::fs::write(&path, vec![1u8; 32 << 20]).unwrap();
    let child = slow_job(dir.path(), &["--rw=read"]);
    std::thread::sleep(Duration::from_millis(1500));
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = report(&out);
    assert_eq!(doc["jobs"][0]["error"], 5);
    let read = doc["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert!(read > 0 && read < 32 << 20, "{read}");
    let err = stderr(&out);
    assert!(
        err.contains("the file ends") && err.contains("truncated"),
        "{err}"
    );
}

#[test]
fn a_file_deleted_under_a_job_is_still_the_jobs_until_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let child = slow_job(
        dir.path(),
        &["--rw=write", "--verify=crc32c", "--verify_state_save=0"],
    );
    std::thread::sleep(Duration::from_millis(1500));
    std::fs::remove_file(dir.path().join("data")).unwrap();
    let out = child.wait_with_output().unwrap();
    // As on any POSIX system: the open file lives on until it is closed,
    // so every block written reads back right.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = report(&out);
    assert_eq!(doc["jobs"][0]["write"]["io_bytes"], 32 << 20);
    assert_eq!(doc["hybrio"]["jobs"][0]["verify"]["bad_blocks"], 0);
    assert_eq!(doc["hybrio"]["jobs"][0]["verify"]["blocks"], 512);
}
