//! Jobs that change files' space and the files themselves: trims (`rw=trim`,
//! `randtrim`, `trimwrite`) through every engine, fio's `falloc` and
//! `ftruncate` engines, `fallocate=`, and the file-operation engines
//! (`filecreate`, `filestat`, `filedelete`). Checked by what is on disk
//! afterwards: blocks allocated, sizes, bytes, files there or gone.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{ScratchFs, engines, hybrio, run_json};

/// Bytes of the file at `path` that hold storage (`st_blocks`).
fn allocated(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn a_random_trim_gives_back_every_block_of_the_file_on_every_engine() {
    for engine in engines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let doc = run_json(
            &[
                "--name=t",
                "--filename=f",
                "--size=1m",
                "--bs=64k",
                "--rw=randtrim",
                "--iodepth=4",
                &format!("--ioengine={engine}"),
            ],
            dir.path(),
        );
        let trim = &doc["jobs"][0]["trim"];
        assert_eq!(trim["total_ios"], 16, "{engine}");
        assert_eq!(trim["io_bytes"], 1 << 20, "{engine}");
        assert_eq!(doc["jobs"][0]["write"]["total_ios"], 0, "{engine}");
        if engine == "null" {
            // The null engine has no files.
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 1 << 20, "{engine}: a trim keeps the size");
        assert!(
            bytes.iter().all(|&b| b == 0),
            "{engine}: trimmed data is not zeros"
        );
        assert_eq!(allocated(&path), 0, "{engine}: blocks left after the trims");
    }
}

#[test]
fn trimwrite_writes_each_block_again_after_its_trim() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let doc = run_json(
        &[
            "--name=t",
            "--filename=f",
            "--size=1m",
            "--bs=64k",
            "--rw=randtrimwrite",
            "--ioengine=io_uring",
            "--iodepth=1",
        ],
        dir.path(),
    );
    let job = &doc["jobs"][0];
    // As fio: the size counts the trims, each followed by its write.
    assert_eq!(job["trim"]["total_ios"], 16);
    assert_eq!(job["write"]["total_ios"], 16);
    let bytes = std::fs::read(&path).unwrap();
    // Every 64 KiB block holds written (random) data again.
    for (i, block) in bytes.chunks(64 << 10).enumerate() {
        assert!(block.iter().any(|&b| b != 0), "block {i} left a hole");
    }
    assert_eq!(allocated(&path), 1 << 20);
}

/// fio's t0023 (`t/jobs/t0023.fio`): randtrimwrite writes each trimmed block
/// at the trim's offset and the trim's size, whatever `bs` says for writes
/// (fio's `get_next_buflen` takes the write's length from the trim). With
/// `bs=4k,4k,8k` the writes are 8 KiB, twice their buffers' size before.
#[test]
fn randtrimwrite_writes_each_trim_again_at_the_trims_size() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t0023.fio"),
        "[global]\nfilesize=1M\nioengine=null\nrw=randtrimwrite\nrandrepeat=0\n\
         log_offset=1\nwrite_lat_log=lat\n\
         [bs]\nbs=8k,8k,8k\n\
         [bs_no_rm]\nbs=4k,4k,8k\nnorandommap=1\n\
         [bs_rm]\nbs=4k,4k,8k\n\
         [bsrange_no_rm]\nbsrange=512-4k\nnorandommap=1\n",
    )
    .unwrap();
    let out = hybrio(&["--output-format=json", "t0023.fio"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (n, (name, trim_size)) in [
        ("bs", Some(8192)),
        ("bs_no_rm", Some(8192)),
        ("bs_rm", Some(8192)),
        ("bsrange_no_rm", None),
    ]
    .into_iter()
    .enumerate()
    {
        let job = &doc["jobs"][n];
        assert_eq!(job["jobname"], name);
        // The size counts the trims; each trim's write comes with it. As
        // fio, a size drawn at random without the map may take the last
        // trim past the size.
        let trimmed = job["trim"]["io_bytes"].as_u64().unwrap();
        assert!(
            (1 << 20..(1 << 20) + 4096).contains(&trimmed),
            "{name}: {trimmed}"
        );
        if trim_size.is_some() {
            assert_eq!(trimmed, 1 << 20, "{name}");
        }
        assert_eq!(job["write"]["io_bytes"], trimmed, "{name}");
        assert_eq!(
            job["write"]["total_ios"], job["trim"]["total_ios"],
            "{name}"
        );
        // The lat log: time, latency, direction (1 write, 2 trim), size, offset.
        let log =
            std::fs::read_to_string(dir.path().join(format!("lat_lat.{}.log", n + 1))).unwrap();
        let ios: Vec<(u64, u64, u64)> = log
            .lines()
            .map(|line| {
                let f: Vec<u64> = line.split(',').map(|f| f.trim().parse().unwrap()).collect();
                (f[2], f[3], f[4])
            })
            .collect();
        assert!(!ios.is_empty(), "{name}: no I/O logged");
        let mut trimmed = Vec::new();
        for pair in ios.chunks(2) {
            let [(trim, len, at), write] = pair else {
                panic!("{name}: a trim without its write: {pair:?}")
            };
            assert_eq!(*trim, 2, "{name}: {pair:?}");
            assert_eq!(
                *write,
                (1, *len, *at),
                "{name}: the write is not the trim's"
            );
            if let Some(size) = trim_size {
                assert_eq!(*len, size, "{name}: {pair:?}");
            }
            trimmed.push((*at, *len));
        }
        if name.ends_with("_no_rm") {
            continue;
        }
        // With the random map every block is trimmed (and written) once.
        trimmed.sort_unstable();
        let mut end = 0;
        for (at, len) in trimmed {
            assert_eq!(at, end, "{name}: a block trimmed twice or not at all");
            end += len;
        }
        assert_eq!(end, 1 << 20, "{name}");
    }
}

#[test]
fn falloc_allocates_and_ftruncate_sets_the_size() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        &[
            "--name=a",
            "--filename=alloc",
            "--size=2m",
            "--bs=64k",
            "--rw=randwrite",
            "--ioengine=falloc",
        ],
        dir.path(),
    );
    assert_eq!(doc["jobs"][0]["write"]["total_ios"], 32);
    let alloc = dir.path().join("alloc");
    assert_eq!(std::fs::metadata(&alloc).unwrap().len(), 2 << 20);
    assert!(allocated(&alloc) >= 2 << 20, "{}", allocated(&alloc));
    // Reads are fallocate(KEEP_SIZE): counted as reads, the size kept.
    let doc = run_json(
        &[
            "--name=k",
            "--filename=alloc",
            "--size=2m",
            "--bs=256k",
            "--rw=read",
            "--ioengine=falloc",
        ],
        dir.path(),
    );
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 8);
    assert_eq!(std::fs::metadata(&alloc).unwrap().len(), 2 << 20);

    let doc = run_json(
        &[
            "--name=t",
            "--filename=trunc",
            "--size=1m",
            "--bs=4k",
            "--rw=write",
            "--ioengine=ftruncate",
        ],
        dir.path(),
    );
    assert_eq!(doc["jobs"][0]["write"]["total_ios"], 256);
    // The last write truncates the file to its offset, as fio's engine does.
    let size = std::fs::metadata(dir.path().join("trunc")).unwrap().len();
    assert_eq!(size, (1 << 20) - 4096);

    let out = hybrio(
        &[
            "--name=t",
            "--filename=trunc",
            "--size=1m",
            "--rw=randrw",
            "--ioengine=ftruncate",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ioengine=ftruncate truncates the file on writes only"),
        "{stderr}"
    );
}

#[test]
fn fallocate_gives_a_new_file_its_space_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    // (mode, size after, allocated at least) for a job that writes one
    // 4 KiB block of a 2 MiB file.
    for (mode, size, at_least) in [
        ("none", 4096, 4096),
        ("native", 2 << 20, 2 << 20),
        ("posix", 2 << 20, 2 << 20),
        ("keep", 4096, 2 << 20),
        ("truncate", 2 << 20, 4096),
    ] {
        let name = format!("f-{mode}");
        run_json(
            &[
                "--name=t",
                &format!("--filename={name}"),
                "--size=2m",
                "--bs=4k",
                "--rw=write",
                "--number_ios=1",
                &format!("--fallocate={mode}"),
            ],
            dir.path(),
        );
        let path = dir.path().join(&name);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size, "{mode}");
        assert!(allocated(&path) >= at_least, "{mode}: {}", allocated(&path));
        if mode == "truncate" || mode == "none" {
            assert!(
                allocated(&path) < 1 << 20,
                "{mode}: allocated {}",
                allocated(&path)
            );
        }
    }
}

#[test]
fn file_engines_create_look_up_and_delete_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let files = |dir: &Path| std::fs::read_dir(dir).unwrap().count();
    let common = ["--nrfiles=50", "--filesize=4k", "--numjobs=2"];
    let run = |engine: &str, extra: &[&str]| {
        let mut args = vec!["--name=t", engine];
        args.extend(common);
        args.extend(extra);
        run_json(&args, dir.path())
    };
    let doc = run("--ioengine=filecreate", &["--openfiles=1", "--rw=write"]);
    assert_eq!(files(dir.path()), 100, "two jobs of 50 files each");
    for job in doc["jobs"].as_array().unwrap() {
        assert_eq!(job["write"]["total_ios"], 50);
        assert_eq!(job["write"]["io_bytes"], 50 * 4096);
        assert!(job["write"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
    }
    for stat_type in ["stat", "lstat", "statx"] {
        let doc = run(
            "--ioengine=filestat",
            &[&format!("--stat_type={stat_type}")],
        );
        for job in doc["jobs"].as_array().unwrap() {
            assert_eq!(job["read"]["total_ios"], 50, "{stat_type}");
            assert_eq!(job["error"], 0, "{stat_type}");
        }
    }
    let doc = run("--ioengine=filedelete", &[]);
    for job in doc["jobs"].as_array().unwrap() {
        assert_eq!(job["read"]["total_ios"], 50);
    }
    assert_eq!(files(dir.path()), 0, "every file deleted");

    // A file that is not there is the job's error, in one line.
    let out = hybrio(
        &[
            "--name=t",
            "--ioengine=filestat",
            "--filename=gone",
            "--filesize=4k",
            "--allow_file_create=1",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(dir.path().join("gone")).unwrap();
    let out = hybrio(
        &[
            "--name=t",
            "--ioengine=filedelete",
            "--filename=gone",
            "--filesize=4k",
            "--allow_file_create=0",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    // A file that cannot be created is the job's error, named.
    let out = hybrio(
        &[
            "--name=t",
            "--ioengine=filecreate",
            "--nrfiles=2",
            "--filesize=4k",
            "--directory=/nonexistent",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("create of /nonexistent/t.0.0: No such file"),
        "{stderr}"
    );
}

#[test]
fn directory_engines_make_look_up_and_remove_each_directory_and_log_it() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_type().unwrap().is_dir())
            .count()
    };
    let run = |engine: &str, extra: &[&str]| {
        let mut args = vec![
            "--name=d",
            engine,
            "--nrfiles=20",
            "--filesize=4k",
            "--write_lat_log=d",
        ];
        args.extend(extra);
        run_json(&args, dir.path())
    };
    let doc = run("--ioengine=dircreate", &["--rw=write"]);
    assert_eq!(dirs(dir.path()), 20);
    assert_eq!(doc["jobs"][0]["write"]["total_ios"], 20);
    // fio's clat log of each operation: block size 0.
    let log = std::fs::read_to_string(dir.path().join("d_clat.1.log")).unwrap();
    assert_eq!(log.lines().count(), 20, "{log}");
    assert!(log.lines().all(|l| l.ends_with(", 1, 0, 0")), "{log}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d_lat.1.log")).unwrap(),
        ""
    );
    let doc = run("--ioengine=dirstat", &["--stat_type=statx"]);
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 20);
    let doc = run("--ioengine=dirdelete", &[]);
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 20);
    assert_eq!(dirs(dir.path()), 0, "every directory removed");
    // dirdelete makes its directories first, as fio's does: 20 to remove.
    let doc = run("--ioengine=dirdelete", &[]);
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 20);
    assert_eq!(dirs(dir.path()), 0);
    // A directory that exists is dircreate's error, named.
    std::fs::create_dir(dir.path().join("d.0.0")).unwrap();
    let out = hybrio(
        &[
            "--name=d",
            "--ioengine=dircreate",
            "--nrfiles=2",
            "--filesize=4k",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("mkdir of ./d.0.0: File exists"), "{stderr}");
}

#[test]
fn e4defrag_moves_the_donors_extents_under_each_write_and_keeps_the_data() {
    // This machine's root ext4 refuses to move extents; a fresh one takes it.
    let Some(fs) = ScratchFs::mount("ext4") else {
        return;
    };
    let data: Vec<u8> = (0..8u32 << 20).map(|i| (i % 253) as u8).collect();
    std::fs::write(fs.mount.join("file1"), &data).unwrap();
    for inplace in ["0", "1"] {
        let doc = run_json(
            &[
                "--name=d",
                "--ioengine=e4defrag",
                "--filename=file1",
                "--size=8m",
                "--bs=32k",
                "--rw=write",
                "--donorname=file.def",
                &format!("--inplace={inplace}"),
            ],
            &fs.mount,
        );
        let job = &doc["jobs"][0];
        assert_eq!(job["error"], 0, "inplace={inplace}");
        assert_eq!(job["write"]["total_ios"], 256, "inplace={inplace}");
        assert_eq!(job["write"]["io_bytes"], 8 << 20, "inplace={inplace}");
        // Extents moved, data kept: the file reads as it was written.
        assert!(
            std::fs::read(fs.mount.join("file1")).unwrap() == data,
            "inplace={inplace}"
        );
    }
    // A read is no defragmentation: refused, as fio refuses it.
    let out = hybrio(
        &[
            "--name=d",
            "--ioengine=e4defrag",
            "--filename=file1",
            "--size=1m",
            "--rw=read",
            "--donorname=x",
        ],
        &fs.mount,
    );
    assert_eq!(out.status.code(), Some(1));
    let out = hybrio(
        &[
            "--name=d",
            "--ioengine=e4defrag",
            "--filename=file1",
            "--size=1m",
        ],
        &fs.mount,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ioengine=e4defrag needs donorname="),
        "{stderr}"
    );
}

#[test]
fn unlink_each_loop_makes_the_files_again_for_each_loop() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    for rw in ["write", "randread"] {
        let path = dir.path().join(format!("f-{rw}"));
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        // A second name for the first loop's file: once the loop removes
        // it, the next loop's file is another inode.
        let first = dir.path().join(format!("first-{rw}"));
        std::fs::hard_link(&path, &first).unwrap();
        let doc = run_json(
            &[
                "--name=u",
                &format!("--filename=f-{rw}"),
                "--size=1m",
                "--bs=64k",
                &format!("--rw={rw}"),
                "--loops=3",
                "--unlink_each_loop=1",
            ],
            dir.path(),
        );
        let job = &doc["jobs"][0];
        assert_eq!(job["error"], 0, "{rw}");
        let dir_of = if rw == "write" { "write" } else { "read" };
        assert_eq!(job[dir_of]["io_bytes"], 3 << 20, "{rw}: three loops");
        // The first file lost its other name; the last loop's is gone too.
        assert_eq!(std::fs::metadata(&first).unwrap().nlink(), 1, "{rw}");
        assert!(!path.exists(), "{rw}: the last loop's file is left");
    }
}

#[test]
fn filetype_is_checked_against_what_each_file_is() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plain"), vec![0u8; 1 << 16]).unwrap();
    let run = |filetype: &str| {
        hybrio(
            &[
                "--name=f",
                "--filename=plain",
                "--size=64k",
                &format!("--filetype={filetype}"),
                "--output-format=terse",
            ],
            dir.path(),
        )
    };
    for fits in ["none", "file"] {
        let out = run(fits);
        assert!(
            out.status.success(),
            "{fits}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run("block");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("filetype=block, but ./plain is a regular file")
            || stderr.contains("filetype=block, but plain is a regular file"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
