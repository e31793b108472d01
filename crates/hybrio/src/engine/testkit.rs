//! Helpers the engines' tests share: scratch files, patterned data, and
//! driving requests through an engine the way a benchmark does.

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::{Engine, QueueOutcome};
use crate::buf::{Buf, BufPool};
use crate::file::{self, FileHandle, OpenOptions};
use crate::request::{Completion, Request};

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
