//! hybrio-tokio's files inside tokio runtimes: real bytes read back, the
//! path each request took, buffers kept while the kernel holds them, one
//! descriptor per file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hybrio::buf::BufPool;
use hybrio_tokio::fs::File;

mod cancel;
mod reaping;
mod syncs;

/// The byte at `offset` of every test file.
fn pattern(offset: u64) -> u8 {
    (offset % 251) as u8 ^ (offset >> 12) as u8
}

fn write_pattern(path: &Path, len: u64) {
    let bytes: Vec<u8> = (0..len).map(pattern).collect();
    std::fs::write(path, bytes).unwrap();
}

/// A directory on tmpfs, where written pages stay cached: reads of them
/// find the page cache, whatever else the machine does.
fn tmpfs_dir() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir_in("/dev/shm").ok();
    if dir.is_none() {
        eprintln!("skipped: no /dev/shm to hold a file that stays cached");
    }
    dir
}

/// `path` opened for reading and writing, created if missing.
async fn open_read_write(path: &Path) -> File {
    let opened = File::options()
        .read(true)
        .write(true)
        .create(true)
        .open(path)
        .await;
    opened.unwrap()
}

/// A FIFO in `dir`: a read of it waits in the kernel until data comes.
fn mkfifo(dir: &Path) -> PathBuf {
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    fifo
}

/// Whether `done` comes true within a minute (a hang guard: what the tests
/// wait for comes at once when it comes), looking every millisecond.
fn within_a_minute(mut done: impl FnMut() -> bool) -> bool {
    (0..60_000).any(|_| {
        done() || {
            std::thread::sleep(Duration::from_millis(1));
            false
        }
    })
}

/// Whether this system lets the test make io_uring engines.
fn io_uring_missing() -> bool {
    match hybrio::probe::engine_available(hybrio::engine::EngineKind::IoUring) {
        Ok(_) => false,
        Err(reason) => {
            eprintln!("skipped: io_uring is not available here: {reason}");
            true
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_reads_complete_inline_with_the_files_bytes() {
    let Some(dir) = tmpfs_dir() else { return };
    if io_uring_missing() {
        return;
    }
    let path = dir.path().join("cached");
    write_pattern(&path, 1 << 20);
    let file = File::open(&path).await.unwrap();
    for block in [0u64, 7, 255, 100] {
        let (result, buf) = file.read_at(vec![0u8; 4096], block * 4096).await;
        assert_eq!(result.unwrap(), 4096);
        let expected: Vec<u8> = (block * 4096..(block + 1) * 4096).map(pattern).collect();
        assert_eq!(buf, expected, "block {block}");
    }
    // Across the end: what there is; past it: nothing.
    let (result, buf) = file.read_at(vec![0u8; 8192], (1 << 20) - 4096).await;
    assert_eq!(result.unwrap(), 4096);
    assert_eq!(
        buf[..4096],
        ((1 << 20) - 4096..1 << 20)
            .map(pattern)
            .collect::<Vec<u8>>()
    );
    let (result, _) = file.read_at(vec![0u8; 4096], 1 << 20).await;
    assert_eq!(result.unwrap(), 0);
    let counts = file.counts();
    assert_eq!(
        (counts.inline, counts.missed, counts.asynchronous),
        (6, 0, 0),
        "{counts:?}"
    );
    // A read of 1 MiB is never tried inline, cached or not: it goes to the
    // kernel's workers (a read that large sets off readahead in its thread).
    let (result, buf) = file.read_at(vec![0u8; 1 << 20], 0).await;
    assert_eq!(result.unwrap(), 1 << 20);
    assert!(buf.iter().zip(0..).all(|(&b, at)| b == pattern(at)));
    let counts = file.counts();
    assert_eq!((counts.inline, counts.asynchronous), (6, 1), "{counts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_large_reads_is_read_ahead_and_scattered_ones_are_not() {
    if io_uring_missing() {
        return;
    }
    const MIB: u64 = 1 << 20;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stream");
    write_pattern(&path, 16 * MIB);
    let file = File::open(&path).await.unwrap();
    for chunk in 0..16 {
        let (result, buf) = file.read_at(vec![0u8; MIB as usize], chunk * MIB).await;
        assert_eq!(result.unwrap(), MIB as usize);
        assert!(
            buf.iter()
                .zip(chunk * MIB..)
                .all(|(&b, at)| b == pattern(at))
        );
    }
    // The second read continues the first: 8 MiB past its end are asked
    // for; each later one slides that window by its own MiB.
    assert_eq!(file.counts().read_ahead, (8 + 14) * MIB);
    let scattered = File::open(&path).await.unwrap();
    for chunk in [8, 3, 12, 0, 5] {
        let (result, _) = scattered
            .read_at(vec![0u8; MIB as usize], chunk * MIB)
            .await;
        assert_eq!(result.unwrap(), MIB as usize);
    }
    assert_eq!(scattered.counts().read_ahead, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_syncs_and_truncation_go_through_the_engine() {
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("written");
    let file = File::create(&path).await.unwrap();
    let data: Vec<u8> = (0..8192u64).map(pattern).collect();
    let (result, data) = file.write_all_at(data, 4096).await;
    result.unwrap();
    file.sync_data().await.unwrap();
    assert_eq!(file.metadata().await.unwrap().len(), 4096 + 8192);
    let on_disk = std::fs::read(&path).unwrap();
    assert_eq!(&on_disk[4096..], &data[..]);
    assert!(on_disk[..4096].iter().all(|&b| b == 0));
    file.set_len(5000).await.unwrap();
    file.sync_all().await.unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 5000);
    // Opened write-only, a read is refused with the kernel's answer (tried
    // inline: a read of a file on a device is), not a panic.
    let (result, _) = file.read_at(vec![0u8; 16], 0).await;
    assert_eq!(result.unwrap_err().raw_os_error(), Some(libc::EBADF));
    // The write went inline, into the page cache; the two syncs and the
    // truncation to the engine.
    let counts = file.counts();
    assert_eq!((counts.inline, counts.asynchronous), (1, 3), "{counts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o_direct_reads_go_to_the_engine_and_never_inline() {
    if io_uring_missing() {
        return;
    }
    // tmpfs refuses O_DIRECT: the scratch directory on the root filesystem.
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = dir.path().join("direct");
    write_pattern(&path, 1 << 20);
    let file = match File::options().read(true).direct(true).open(&path).await {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            eprintln!("skipped: {} refuses O_DIRECT", dir.path().display());
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let pool = BufPool::new(4, 4096).unwrap();
    for block in [3u64, 0, 200] {
        let (result, buf) = file.read_at(pool.take().unwrap(), block * 4096).await;
        assert_eq!(result.unwrap(), 4096);
        let expected: Vec<u8> = (block * 4096..(block + 1) * 4096).map(pattern).collect();
        assert_eq!(buf.as_slice(), &expected[..], "block {block}");
    }
    let counts = file.counts();
    assert_eq!(
        (counts.inline, counts.missed, counts.asynchronous),
        (0, 0, 3),
        "{counts:?}"
    );
    assert!(
        file.engine_description().starts_with("io_uring"),
        "{}",
        file.engine_description()
    );
}

/// 64 tasks reading random blocks of one 4 MiB file at once, each block checked.
async fn many_tasks_read_one_file() {
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared");
    write_pattern(&path, 4 << 20);
    let file = Arc::new(File::open(&path).await.unwrap());
    let tasks: Vec<_> = (0..64u64)
        .map(|task| {
            let file = file.clone();
            tokio::spawn(async move {
                let mut seed = task * 0x9E37_79B9 + 1;
                let mut buf = vec![0u8; 4096];
                for _ in 0..200 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let offset = (seed % 1024) * 4096;
                    let (result, back) = file.read_at(buf, offset).await;
                    assert_eq!(result.unwrap(), 4096);
                    assert!(
                        back.iter().zip(offset..).all(|(&b, at)| b == pattern(at)),
                        "task {task}, offset {offset}"
                    );
                    buf = back;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let counts = file.counts();
    // Each read once: inline, or asynchronous (after a miss or not).
    assert_eq!(counts.inline + counts.asynchronous, 64 * 200, "{counts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tasks_on_a_multi_thread_runtime_read_the_right_bytes() {
    many_tasks_read_one_file().await;
}

#[tokio::test(flavor = "current_thread")]
async fn many_tasks_on_a_current_thread_runtime_read_the_right_bytes() {
    many_tasks_read_one_file().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_read_leaves_its_buffer_with_the_engine_until_it_completes() {
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(dir.path());
    // Read and write: opening a FIFO so does not wait for a writer.
    let file = File::options()
        .read(true)
        .write(true)
        .open(&fifo)
        .await
        .unwrap();
    let pool = BufPool::new(1, 4096).unwrap();
    // No data comes while the read waits: it is in the kernel when dropped.
    let read = file.read_at(pool.take().unwrap(), 0);
    assert!(
        tokio::time::timeout(Duration::from_millis(50), read)
            .await
            .is_err()
    );
    assert_eq!(pool.available(), 0, "the kernel may still write the buffer");
    assert_eq!(file.counts().asynchronous, 1);
    // The data comes: the request completes, and only then is the buffer freed.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    std::io::Write::write_all(&mut writer, &[9u8; 4096]).unwrap();
    // A hang guard: the completion comes at once.
    let freed = within_a_minute(|| pool.available() == 1);
    assert!(freed, "the completed request's buffer was never freed");
    // The file still works.
    std::io::Write::write_all(&mut writer, b"more").unwrap();
    let (result, buf) = file.read_at(vec![0u8; 4], 0).await;
    assert_eq!(result.unwrap(), 4);
    assert_eq!(&buf, b"more");
}

/// Runs this binary's test `inner` again, alone in its process (other
/// tests open descriptors of their own at any time), and checks it passed.
fn run_alone(inner: &str) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", inner, "--nocapture"])
        .env(ALONE, inner)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the inner test must have run: {stdout}"
    );
}

/// Set in the environment of this binary run again for one test alone.
const ALONE: &str = "HYBRIO_TOKIO_TEST_ALONE";

#[test]
fn a_file_is_one_descriptor_however_many_tasks_use_it() {
    if std::env::var_os(ALONE).is_none() {
        run_alone("descriptors_alone");
    }
}

/// Runs only alone in its process (see above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptors_alone() {
    if std::env::var(ALONE).ok().as_deref() != Some("descriptors_alone") || io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = (0..10).map(|i| dir.path().join(format!("f{i}"))).collect();
    for path in &paths {
        write_pattern(path, 64 << 10);
    }
    // The driver's own descriptors come with the first file.
    drop(File::open(&paths[0]).await.unwrap());
    let descriptors = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    // The runtime's reaper task, started by the first request that waits in
    // it, holds one more: its copy of the ring's, in the runtime's reactor.
    let without_reaper = descriptors();
    let fifo = mkfifo(dir.path());
    let pipe = open_read_write(&fifo).await;
    reaping::round_trip(&pipe, &fifo, 7).await;
    drop(pipe);
    assert_eq!(descriptors() - without_reaper, 1);
    let before = descriptors();
    let mut files = Vec::new();
    for path in &paths {
        files.push(Arc::new(File::open(path).await.unwrap()));
    }
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let file = files[i % files.len()].clone();
            tokio::spawn(async move {
                let (result, _) = file.read_at(vec![0u8; 4096], (i as u64 % 16) * 4096).await;
                result.unwrap();
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(descriptors() - before, 10);
    drop(files);
    assert_eq!(descriptors(), before);
}

/// Set in the environment of this binary run again under the seccomp
/// filter that refuses io_uring.
const UNDER_FILTER: &str = "HYBRIO_TOKIO_TEST_UNDER_FILTER";

#[test]
fn with_io_uring_refused_the_worker_pool_serves() {
    if std::env::var_os(UNDER_FILTER).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("deny.c");
    std::fs::write(&source, include_str!("../../../../tools/deny-io-uring.c")).unwrap();
    let deny = dir.path().join("deny");
    let built = std::process::Command::new("gcc")
        .arg("-O1")
        .arg("-o")
        .arg(&deny)
        .arg(&source)
        .output();
    if !built.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: cannot build the seccomp helper with gcc ({built:?})");
        return;
    }
    let out = std::process::Command::new(&deny)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "io_uring_refused_inner", "--nocapture"])
        .env(UNDER_FILTER, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(125) {
        eprintln!("skipped: this kernel refuses seccomp filters: {stderr}");
        return;
    }
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the inner test must have run: {stdout}"
    );
}

/// Runs only under the filter (see above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn io_uring_refused_inner() {
    if std::env::var_os(UNDER_FILTER).is_none() {
        return;
    }
    assert!(
        hybrio::probe::engine_available(hybrio::engine::EngineKind::IoUring).is_err(),
        "the filter refuses io_uring"
    );
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = dir.path().join("pool");
    let file = open_read_write(&path).await;
    assert!(
        file.engine_description().starts_with("pool"),
        "{}",
        file.engine_description()
    );
    let data: Vec<u8> = (0..(64u64 << 10)).map(pattern).collect();
    let (result, _) = file.write_all_at(data, 0).await;
    result.unwrap();
    file.sync_data().await.unwrap();
    // Many reads at once from many tasks, every byte checked; where the
    // page cache has them they complete inline, the rest in the pool.
    let file = Arc::new(file);
    let tasks: Vec<_> = (0..32u64)
        .map(|task| {
            let file = file.clone();
            tokio::spawn(async move {
                let offset = (task % 16) * 4096;
                let (result, buf) = file.read_at(vec![0u8; 4096], offset).await;
                assert_eq!(result.unwrap(), 4096);
                assert!(buf.iter().zip(offset..).all(|(&b, at)| b == pattern(at)));
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    // O_DIRECT reads always go to the engine: here, the pool's workers.
    if let Ok(direct) = File::options().read(true).direct(true).open(&path).await {
        let pool = BufPool::new(1, 4096).unwrap();
        let (result, buf) = direct.read_at(pool.take().unwrap(), 8192).await;
        assert_eq!(result.unwrap(), 4096);
        assert!(
            buf.as_slice()
                .iter()
                .zip(8192..)
                .all(|(&b, at)| b == pattern(at))
        );
        assert_eq!(direct.counts().asynchronous, 1);
    }
}

/// Code written for `tokio::fs::File` (here, any reader that can seek, as
/// the `parquet` crate's async reader takes) runs over hybrio's unchanged.
async fn tail_of<R: tokio::io::AsyncRead + tokio::io::AsyncSeek + Unpin>(
    reader: &mut R,
    n: i64,
) -> std::io::Result<Vec<u8>> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    reader.seek(std::io::SeekFrom::End(-n)).await?;
    let mut tail = Vec::new();
    reader.read_to_end(&mut tail).await?;
    Ok(tail)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cursor_reads_writes_and_seeks_as_tokio_fs_does() {
    use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
    if io_uring_missing() {
        return;
    }
    // On a device (reads tried inline, then through the engine if the
    // page cache has not the bytes) and on tmpfs (read in the task).
    let device = tempfile::tempdir_in("/var/tmp").unwrap();
    let memory = tmpfs_dir();
    let dirs = [Some(device.path()), memory.as_ref().map(|d| d.path())];
    for dir in dirs.into_iter().flatten() {
        let path = dir.join("cursor");
        let mut file = open_read_write(&path).await;
        let data: Vec<u8> = (0..(3u64 << 20) + 123).map(pattern).collect();
        file.write_all(&data).await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), data, "{}", dir.display());
        assert_eq!(
            file.seek(std::io::SeekFrom::Current(0)).await.unwrap(),
            data.len() as u64
        );
        file.seek(std::io::SeekFrom::Start(0)).await.unwrap();
        let mut back = Vec::new();
        file.read_to_end(&mut back).await.unwrap();
        assert!(
            back == data,
            "{}: read back {} bytes",
            dir.display(),
            back.len()
        );
        assert_eq!(
            tail_of(&mut file, 10).await.unwrap(),
            &data[data.len() - 10..]
        );
        file.seek(std::io::SeekFrom::Start(4096)).await.unwrap();
        let mut block = [0u8; 4096];
        file.read_exact(&mut block).await.unwrap();
        assert_eq!(&block[..], &data[4096..8192]);
        // Before the start of the file: refused, the position unchanged.
        let error = file
            .seek(std::io::SeekFrom::Current(-100_000))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(file.stream_position().await.unwrap(), 8192);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_cursor_writes_error_comes_back_at_flush() {
    use tokio::io::AsyncWriteExt;
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let path = dir.path().join("read-only");
    std::fs::write(&path, b"x").unwrap();
    // O_DIRECT: its writes always go to the engine (a buffered one would be
    // tried inline, and fail there at once).
    let mut file = match File::options().read(true).direct(true).open(&path).await {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            eprintln!("skipped: {} refuses O_DIRECT", dir.path().display());
            return;
        }
        Err(e) => panic!("{e}"),
    };
    // Copied and sent: the write returns at once, as tokio::fs's does...
    assert_eq!(file.write(b"abc").await.unwrap(), 3);
    // ...and its error (the file is open for reading only) comes at flush.
    let error = file.flush().await.unwrap_err();
    assert_eq!(error.raw_os_error(), Some(libc::EBADF));
    assert_eq!(std::fs::read(&path).unwrap(), b"x");
    // A buffered file's write is tried inline: its error comes at once.
    let mut buffered = File::open(&path).await.unwrap();
    let error = buffered.write(b"abc").await.unwrap_err();
    assert_eq!(error.raw_os_error(), Some(libc::EBADF));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_write_and_copy_as_tokio_fs_has_them() {
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    // Not a whole number of the copy's 1 MiB chunks, nor of pages.
    let data: Vec<u8> = (0..(9u64 << 20) + 4097).map(pattern).collect();
    hybrio_tokio::fs::write(&a, &data).await.unwrap();
    assert!(std::fs::read(&a).unwrap() == data);
    assert!(hybrio_tokio::fs::read(&a).await.unwrap() == data);
    assert_eq!(
        hybrio_tokio::fs::copy(&a, &b).await.unwrap(),
        data.len() as u64
    );
    assert!(std::fs::read(&b).unwrap() == data);
    // An empty file, and one that is not there.
    hybrio_tokio::fs::write(&a, b"").await.unwrap();
    assert!(hybrio_tokio::fs::read(&a).await.unwrap().is_empty());
    assert_eq!(hybrio_tokio::fs::copy(&a, &b).await.unwrap(), 0);
    assert_eq!(std::fs::metadata(&b).unwrap().len(), 0);
    let missing = hybrio_tokio::fs::read(dir.path().join("none"))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    assert!(missing.to_string().contains("none"), "{missing}");
}

#[test]
fn with_few_descriptors_left_opening_fails_in_one_clear_error() {
    if std::env::var_os(ALONE).is_none() {
        run_alone("nofile_alone");
    }
}

/// Runs only alone in its process (it lowers the process's descriptor limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nofile_alone() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    if std::env::var(ALONE).ok().as_deref() != Some("nofile_alone") || io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    write_pattern(&path, 4096);
    // The driver's own descriptors come with the first file.
    let first = File::open(&path).await.unwrap();
    let open_now = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    let limit = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(open_now + 4),
            maximum: limit.maximum,
        },
    )
    .unwrap();
    let mut files = vec![first];
    let error = loop {
        match File::open(&path).await {
            Ok(file) => files.push(file),
            Err(error) => break error,
        }
        assert!(files.len() < 100, "the limit never came");
    };
    // The kernel's errno is the error's source; the message names the path.
    let errno = error
        .get_ref()
        .and_then(|inner| inner.source())
        .and_then(|source| source.downcast_ref::<std::io::Error>())
        .and_then(std::io::Error::raw_os_error);
    assert_eq!(errno, Some(libc::EMFILE), "{error}");
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    // The files opened before still read.
    let (result, buf) = files[1].read_at(vec![0u8; 16], 0).await;
    assert_eq!(result.unwrap(), 16);
    assert_eq!(buf, (0..16).map(pattern).collect::<Vec<u8>>());
    setrlimit(Resource::Nofile, limit).unwrap();
}

#[test]
fn opening_a_file_never_blocks_the_runtimes_worker() {
    if io_uring_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(dir.path());
    // Opening a FIFO for reading waits until a writer opens it. On a
    // runtime of one worker thread, the writer is another task: it runs
    // only if the reader's open is not on that thread.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let opened = runtime.block_on(async {
            let reader = tokio::spawn({
                let fifo = fifo.clone();
                async move { File::options().read(true).open(&fifo).await }
            });
            tokio::task::yield_now().await;
            let writer = tokio::spawn(async move {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&fifo)
                    .map(drop)
            });
            writer.await.unwrap().unwrap();
            reader.await.unwrap().map(drop)
        });
        let _ = done.send(opened);
    });
    // A hang guard: the two opens meet at once.
    let opened = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the reader's open blocked the runtime's only worker");
    opened.unwrap();
}
