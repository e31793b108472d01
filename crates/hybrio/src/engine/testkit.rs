//! Helpers the engines' tests share: scratch files, patterned data, and
//! driving requests through an engine the way a benchmark does.

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::{Engine, QueueOutcome};
use crate::buf::{Buf, BufPool};
use crate::file::{self, FileHandle, OpenOptions};
use crate::request::{Completion, Op, Request};

/// A scratch directory on the disk filesystem (/tmp), not tmpfs.
pub(crate) fn scratch() -> TempDir {
    tempfile::tempdir_in(std::env::temp_dir()).unwrap()
}

/// Fills `out` with bytes that differ for every `seed` (xorshift64*).
pub(crate) fn pattern(seed: u64, out: &mut [u8]) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in out.chunks_mut(8) {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

pub(crate) fn read_write() -> OpenOptions {
    OpenOptions {
        read: true,
        write: true,
        create: true,
        direct: false,
        ..Default::default()
    }
}

/// A file of `len` patterned bytes; returns its path and contents.
pub(crate) fn data_file(dir: &Path, name: &str, len: usize) -> (PathBuf, Vec<u8>) {
    let path = dir.join(name);
    let mut contents = vec![0; len];
    pattern(len as u64, &mut contents);
    fs::write(&path, &contents).unwrap();
    (path, contents)
}

pub(crate) fn add(engine: &mut dyn Engine, path: &Path, opts: &OpenOptions) -> FileHandle {
    let file = file::open(path, opts).unwrap();
    engine.add_file(file, path.to_owned()).unwrap()
}

pub(crate) fn take(pool: &BufPool, len: usize) -> Buf {
    let mut buf = pool.take().expect("pool has a free buffer");
    buf.set_len(len);
    buf
}

/// Drives `requests` through the engine the way a benchmark does (queue;
/// when busy, commit and reap) and returns every completion.
pub(crate) fn run(
    engine: &mut dyn Engine,
    requests: impl IntoIterator<Item = Request>,
) -> Vec<Completion> {
    let mut done = Vec::new();
    for mut request in requests {
        loop {
            match engine.queue(request) {
                QueueOutcome::Completed(completion) => done.push(completion),
                QueueOutcome::Queued => {}
                QueueOutcome::Busy(back) => {
                    request = back;
                    engine.commit().unwrap();
                    assert!(
                        engine.reap(1, usize::MAX, &mut done).unwrap() >= 1,
                        "a full engine reaped nothing"
                    );
                    continue;
                }
            }
            break;
        }
    }
    finish(engine, &mut done);
    done
}

/// Commits and reaps until nothing is in flight.
pub(crate) fn finish(engine: &mut dyn Engine, done: &mut Vec<Completion>) {
    engine.commit().unwrap();
    while engine.in_flight() > 0 {
        assert!(
            engine.reap(1, usize::MAX, done).unwrap() >= 1,
            "reap(1) returned nothing with requests in flight"
        );
    }
    assert_eq!(
        engine.reap(0, usize::MAX, done).unwrap(),
        0,
        "completions after the last one"
    );
}

/// Writes patterned blocks at scattered offsets (odd lengths and offsets
/// included unless `direct`), syncs, and reads them back byte for byte.
pub(crate) fn round_trip(
    engine: &mut dyn Engine,
    pool: &BufPool,
    path: &Path,
    opts: &OpenOptions,
    name: &str,
) {
    let handle = add(engine, path, opts);
    let mut blocks: Vec<(u64, usize)> = [0u64, 5, 2, 9, 7, 12, 1, 30, 64, 3, 17, 4]
        .iter()
        .map(|&k| (k * 4096, 4096))
        .collect();
    if !opts.direct {
        blocks.extend([
            (40 * 4096 + 512, 1000),
            (41 * 4096 + 17, 4096),
            (50 * 4096 + 4095, 1),
        ]);
    }
    let writes = blocks.iter().enumerate().map(|(i, &(offset, len))| {
        let mut buf = take(pool, len);
        pattern(offset, buf.as_mut_slice());
        Request::write(handle, offset, buf, i as u64)
    });
    for done in run(engine, writes.collect::<Vec<_>>()) {
        let (_, len) = blocks[done.user_data as usize];
        assert_eq!(done.op, Op::Write);
        assert_eq!(done.result, len as i64, "{name}: write {}", done.user_data);
    }
    let synced = run(
        engine,
        [
            Request::sync(handle, false, 100),
            Request::sync(handle, true, 101),
        ],
    );
    assert_eq!(synced.len(), 2);
    for done in &synced {
        assert_eq!(done.result, 0, "{name}: {:?}", done.op);
    }
    let reads: Vec<Request> = blocks
        .iter()
        .enumerate()
        .map(|(i, &(offset, len))| {
            let mut buf = take(pool, len);
            buf.as_mut_slice().fill(0xEE);
            Request::read(handle, offset, buf, i as u64)
        })
        .collect();
    let done = run(engine, reads);
    assert_eq!(done.len(), blocks.len());
    for done in done {
        let (offset, len) = blocks[done.user_data as usize];
        assert_eq!((done.op, done.offset), (Op::Read, offset));
        assert_eq!(done.result, len as i64, "{name}: read at {offset}");
        let mut expected = vec![0; len];
        pattern(offset, &mut expected);
        assert!(
            done.buf.as_slice() == expected,
            "{name}: data at {offset} differs"
        );
    }
    engine.remove_file(handle).unwrap();
}

/// Reads of a 10,000-byte file (`contents` at `path`, added to `engine`)
/// at and across its end, the kernel answering two of them short: checks
/// that each comes back whole where the file has the bytes, with those
/// bytes, at the end with what is there (one past it with 0), its offset
/// and window as queued, and every buffer back in `pool` (8 buffers of 8192
/// bytes at least) once the completions are dropped. The caller checks the
/// counters: whether the engine sent the short reads again itself.
pub(crate) fn reads_across_the_end(
    engine: &mut dyn Engine,
    pool: &BufPool,
    path: &Path,
    contents: &[u8],
    what: &str,
) {
    assert_eq!(contents.len(), 10_000, "{what}: the file this expects");
    let file = add(engine, path, &read_write());
    let mut odd = take(pool, 8192);
    odd.advance(100);
    odd.set_len(5000);
    let requests = vec![
        Request::read(file, 0, take(pool, 4096), 1),
        Request::read(file, 8192, take(pool, 4096), 2),
        Request::read(file, 7000, odd, 3),
        Request::read(file, 12_288, take(pool, 4096), 4),
    ];
    let mut done = run(engine, requests);
    done.sort_by_key(|c| c.user_data);
    let answers: Vec<(u64, i64, u64, usize, usize)> = done
        .iter()
        .map(|c| (c.user_data, c.result, c.offset, c.buf.start(), c.buf.len()))
        .collect();
    assert_eq!(
        answers,
        [
            (1, 4096, 0, 0, 4096),
            (2, 10_000 - 8192, 8192, 0, 4096),
            (3, 3000, 7000, 100, 5000),
            (4, 0, 12_288, 0, 4096),
        ],
        "{what}"
    );
    assert!(done[0].buf.as_slice() == &contents[..4096], "{what}");
    assert!(done[1].buf.as_slice()[..1808] == contents[8192..], "{what}");
    assert!(done[2].buf.as_slice()[..3000] == contents[7000..], "{what}");
    drop(done);
    assert_eq!(pool.available(), pool.count(), "{what}: buffers back");
    engine.remove_file(file).unwrap();
}

/// Whether `fd` polls readable within `timeout`.
pub(crate) fn readable_within(
    fd: std::os::fd::BorrowedFd<'_>,
    timeout: std::time::Duration,
) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let timeout = Timespec::try_from(timeout).expect("a timeout that fits");
    poll(&mut fds, Some(&timeout)).expect("poll") == 1 && fds[0].revents().contains(PollFlags::IN)
}

/// A small filesystem made on a file and mounted through a loop device,
/// unmounted (which frees the loop device) and removed when dropped: for a
/// test that needs what the scratch directory's filesystem lacks (ext4's
/// extent moves on a fresh ext4, XFS's atomic writes).
pub(crate) struct ScratchFs {
    /// Holds the image and the mount point; removed after the unmount.
    _dir: TempDir,
    /// Where it is mounted.
    pub(crate) mount: PathBuf,
}

impl ScratchFs {
    /// Makes a `kind` filesystem (`mkfs.<kind>`) of `size` bytes and mounts
    /// it, or says why it cannot here (no mkfs, not root).
    pub(crate) fn mount(kind: &str, size: u64) -> Result<ScratchFs, String> {
        use std::process::Command;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let (image, mount) = (dir.path().join("fs.img"), dir.path().join("mnt"));
        fs::create_dir(&mount).map_err(|e| e.to_string())?;
        fs::File::create(&image)
            .and_then(|f| f.set_len(size))
            .map_err(|e| e.to_string())?;
        let run = |cmd: &mut Command| match cmd.output() {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
            Err(e) => Err(format!("{:?}: {e}", cmd.get_program())),
        };
        let force = if kind == "xfs" { "-f" } else { "-F" };
        run(Command::new(format!("mkfs.{kind}"))
            .args(["-q", force])
            .arg(&image))?;
        run(Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&mount))?;
        Ok(ScratchFs { _dir: dir, mount })
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
