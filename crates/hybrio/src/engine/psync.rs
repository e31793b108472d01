//! `psync`: `pread(2)`/`pwrite(2)`, one request at a time, as fio's `psync` engine.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use super::{Engine, EngineConfig, EngineKind, QueueOutcome, malformed};
use crate::Error;
use crate::file::{FileEntry, FileHandle, FileTable};
use crate::request::{Completion, Op, Request};
use crate::sys::{self, negative_errno, retry_on_interrupt};

/// Runs every request inline with one positioned system call.
#[derive(Debug)]
pub struct PsyncEngine {
    files: FileTable,
}

impl PsyncEngine {
    /// A psync engine; no setting of `config` applies to it.
    pub fn new(_config: &EngineConfig) -> Self {
        PsyncEngine {
            files: FileTable::new(),
        }
    }

    /// Does the request; returns bytes transferred or a negative errno.
    fn execute(&self, request: &mut Request) -> i64 {
        let Some(entry) = self.files.get(request.file) else {
            return -i64::from(libc::EBADF);
        };
        if let Some(errno) = malformed(request) {
            return -i64::from(errno);
        }
        let fd = entry.fd();
        let offset = request.offset;
        let outcome = match (request.op, request.buf.as_mut()) {
            (Op::Fsync, _) => retry_on_interrupt(|| sys::fsync(fd)).map(|()| 0),
            (Op::Fdatasync, _) => retry_on_interrupt(|| sys::fdatasync(fd)).map(|()| 0),
            (Op::Read, Some(buf)) => {
                retry_on_interrupt(|| sys::pread(fd, buf.as_mut_slice(), offset))
            }
            (Op::Write, Some(buf)) => {
                retry_on_interrupt(|| sys::pwrite(fd, buf.as_slice(), offset))
            }
            (Op::Read | Op::Write, None) => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        };
        match outcome {
            Ok(n) => n as i64,
            Err(e) => negative_errno(&e),
        }
    }
}

impl Engine for PsyncEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Psync
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        Ok(self.files.insert(file, path))
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
