//! `sync`: `lseek` + `read`/`write` on the descriptor, one request at a time,
//! as fio's `sync` engine.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use super::{Engine, EngineConfig, EngineKind, QueueOutcome, malformed};
use crate::Error;
use crate::file::{FileEntry, FileHandle, FileTable};
use crate::request::{Completion, Op, Request};
use crate::sys::{self, negative_errno, retry_on_interrupt};

/// File position not known: the next transfer seeks.
const UNKNOWN_POSITION: u64 = u64::MAX;

/// Runs every request inline with `lseek(2)` then `read(2)`/`write(2)`.
///
/// Like fio, it remembers where each descriptor's position is after a
/// transfer and skips the `lseek` when the next request starts there, so a
/// sequential stream costs one system call per request. The cached position
/// assumes nothing else moves it: do not share the file's description (e.g.
/// through [`File::try_clone`]) with other readers or writers.
#[derive(Debug)]
pub struct SyncEngine {
    files: FileTable,
    /// Known file position per handle.
    positions: Vec<u64>,
}

impl SyncEngine {
    /// A sync engine; no setting of `config` applies to it.
    pub fn new(_config: &EngineConfig) -> Self {
        SyncEngine {
            files: FileTable::new(),
            positions: Vec::new(),
        }
    }

    /// Does the request; returns bytes transferred or a negative errno.
    fn execute(&mut self, request: &mut Request) -> i64 {
        let Some(entry) = self.files.get(request.file) else {
            return -i64::from(libc::EBADF);
        };
        if let Some(errno) = malformed(request) {
            return -i64::from(errno);
        }
        let fd = entry.fd();
        let position = &mut self.positions[request.file.index()];
        let outcome = match (request.op, request.buf.as_mut()) {
            (Op::Fsync, _) => retry_on_interrupt(|| sys::fsync(fd)).map(|()| 0),
            (Op::Fdatasync, _) => retry_on_interrupt(|| sys::fdatasync(fd)).map(|()| 0),
            (Op::Read | Op::Write, None) => Err(io::Error::from_raw_os_error(libc::EINVAL)),
            (op @ (Op::Read | Op::Write), Some(buf)) => {
                let offset = request.offset;
                let seeked = if *position == offset {
                    Ok(offset)
                } else {
                    retry_on_interrupt(|| sys::lseek_set(fd, offset))
                };
                let moved = seeked.and_then(|_| match op {
                    Op::Read => retry_on_interrupt(|| sys::read(fd, buf.as_mut_slice())),
                    _ => retry_on_interrupt(|| sys::write(fd, buf.as_slice())),
                });
                *position = match moved {
                    Ok(n) => offset + n as u64,
                    Err(_) => UNKNOWN_POSITION,
                };
                moved
            }
        };
        match outcome {
            Ok(n) => n as i64,
            Err(e) => negative_errno(&e),
        }
    }
}

impl Engine for SyncEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Sync
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        let handle = self.files.insert(file, path);
        if self.positions.len() <= handle.index() {
            self.positions.resize(handle.index() + 1, UNKNOWN_POSITION);
        }
        // Whatever the file was used for before, its position is not ours to know.
        self.positions[handle.index()] = UNKNOWN_POSITION;
        Ok(handle)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.files
            .remove(handle)
            .map(FileEntry::into_file)
            .ok_or(Error::BadHandle(handle.0))
    }

    fn queue(&mut self, mut request: Request) -> QueueOutcome {
        let result = self.execute(&mut request);
        QueueOutcome::Completed(request.complete(result))
    }

    fn commit(&mut self) -> Result<usize, Error> {
        Ok(0)
    }

    fn reap(
        &mut self,
        _min: usize,
        _max: usize,
        _out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        Ok(0)
    }

    fn in_flight(&self) -> usize {
        0
    }

    fn is_synchronous(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::BufPool;

    /// The cached position must never make a read land elsewhere than asked.
    #[test]
    fn skipped_seeks_never_misplace_a_transfer() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let path = dir.path().join("f");
        let contents: Vec<u8> = (0..5 * 4096)
            .map(|i| (i / 4096 * 37 + i % 251) as u8)
            .collect();
        std::fs::write(&path, &contents).unwrap();
        let pool = BufPool::new(1, 4096).unwrap();
        let mut engine = SyncEngine::new(&EngineConfig::default());
        let handle = engine
            .add_file(File::open(&path).unwrap(), path.clone())
            .unwrap();
        let mut buf = pool.take().unwrap();
        // Sequential, back to the start, past EOF, then where the EOF read left off.
        for (offset, expected) in [
            (0, 4096),
            (4096, 4096),
            (8192, 4096),
            (0, 4096),
            (1 << 20, 0),
            (12288, 4096),
        ] {
            let QueueOutcome::Completed(done) = engine.queue(Request::read(handle, offset, buf, 0))
            else {
                panic!("sync completes inline");
            };
            assert_eq!(done.result, expected, "read at {offset}");
            buf = done.buf.unwrap();
            if expected > 0 {
                let at = offset as usize;
                assert!(
                    buf.as_slice() == &contents[at..at + 4096],
                    "data at {offset}"
                );
            }
        }
    }
}
