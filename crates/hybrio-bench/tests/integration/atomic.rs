//! fio's `atomic`: torn-write protected writes (`RWF_ATOMIC`) on XFS over a
//! loop device, which offers them on any device (Linux 6.16), and the
//! one-line refusals where they cannot run.

use super::{ScratchFs, engines, hybrio, run_json};

/// A fresh XFS whose files take atomic writes of 16 KiB, or `None` after
/// saying why not.
fn xfs() -> Option<ScratchFs> {
    let fs = ScratchFs::mount("xfs")?;
    let probe = fs.mount.join("probe");
    let file = hybrio::file::open(
        &probe,
        &hybrio::file::OpenOptions::new()
            .write(true)
            .create(true)
            .direct(true),
    )
    .unwrap();
    match hybrio::file::atomic_write_units(&file) {
        Ok(Some(units)) if units.fits(0, 16 << 10) => Some(fs),
        other => {
            eprintln!("skipping: XFS here offers no atomic writes of 16 KiB: {other:?}");
            None
        }
    }
}

#[test]
fn atomic_writes_run_and_verify_on_every_engine_that_passes_the_flag() {
    let Some(fs) = xfs() else {
        return;
    };
    let takes = ["pvsync2", "libaio", "io_uring", "pool", "adaptive"];
    for engine in engines().into_iter().filter(|e| takes.contains(e)) {
        let doc = run_json(
            &[
                "--name=atomic",
                "--rw=randwrite",
                "--bs=16k",
                "--size=2m",
                "--direct=1",
                "--atomic=1",
                "--iodepth=4",
                "--verify=crc32c",
                &format!("--ioengine={engine}"),
            ],
            &fs.mount,
        );
        let job = &doc["jobs"][0];
        assert_eq!(job["error"], 0, "{engine}");
        assert_eq!(job["write"]["total_ios"], 128, "{engine}");
        assert_eq!(job["read"]["total_ios"], 128, "{engine}: verified");
    }
}

/// The flag reaches the kernel: a write at an offset that is no multiple
/// of its length lands as an ordinary direct write, and the kernel refuses
/// it as an atomic one, with the job's error naming the request.
#[test]
fn an_atomic_write_the_kernel_refuses_fails_the_job_naming_it() {
    let Some(fs) = xfs() else {
        return;
    };
    let args = |atomic: &'static str| {
        [
            "--name=misaligned",
            "--rw=write",
            "--bs=16k",
            "--offset=4k",
            "--size=64k",
            "--direct=1",
            "--ioengine=pvsync2",
            atomic,
        ]
    };
    let ordinary = hybrio(&args("--atomic=0"), &fs.mount);
    assert!(
        ordinary.status.success(),
        "{}",
        String::from_utf8_lossy(&ordinary.stderr)
    );
    let out = hybrio(&args("--atomic=1"), &fs.mount);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("write of 16384 bytes at offset 4096") && stderr.contains("os error 22"),
        "{stderr}"
    );
}

#[test]
fn atomic_is_refused_in_one_line_where_it_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |extra: &[&str], at: &std::path::Path, why: &str| {
        let mut args = vec![
            "--name=refused",
            "--rw=randwrite",
            "--bs=16k",
            "--size=1m",
            "--atomic=1",
        ];
        args.extend_from_slice(extra);
        let out = hybrio(&args, at);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    };
    refused(
        &["--ioengine=psync", "--direct=1"],
        dir.path(),
        "ioengine=psync passes no flags with its writes",
    );
    refused(&["--ioengine=pvsync2"], dir.path(), "atomic needs direct=1");
    // The scratch directory's filesystem (this machine's ext4 on a disk
    // without atomic writes, or tmpfs) offers none.
    refused(
        &["--ioengine=pvsync2", "--direct=1"],
        dir.path(),
        "offers none for it",
    );
    let Some(fs) = xfs() else {
        return;
    };
    refused(
        &["--ioengine=pvsync2", "--direct=1", "--bs=12k"],
        &fs.mount,
        "writes 12288 bytes at a time",
    );
    refused(
        &["--ioengine=pvsync2", "--direct=1", "--bsrange=8k-16k"],
        &fs.mount,
        "must be at a multiple of its own length",
    );
}
