//! `null`: completes every request without doing I/O, as fio's `null` engine.
//! What a benchmark measures with it is its own overhead.

use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;

use super::api::{Engine, EngineConfig, EngineKind, PREALLOCATED, QueueOutcome};
use crate::Error;
use crate::file::{FileHandle, FileTable};
use crate::request::{Completion, Request};

/// Completes reads and writes with their full length and syncs with 0.
///
/// At depth 1 requests complete inside [`Engine::queue`]. Deeper, they queue
/// until [`Engine::commit`], which completes them all at once, and come back
/// from [`Engine::reap`] in queue order. Requests still uncommitted are never
/// waited for: a reap returns only committed ones.
#[derive(Debug)]
pub struct NullEngine {
    files: FileTable,
    depth: usize,
    /// Queued requests, oldest first, already turned into their completions
    /// (nothing about them changes by waiting); the first `committed` are
    /// ready to reap. A ring, so that reaping one at a time (fio's default
    /// `iodepth_batch_complete_max=1`) does not shift the rest each time.
    pending: VecDeque<Completion>,
    committed: usize,
}

impl NullEngine {
    /// A null engine holding up to `config.depth` requests.
    pub fn new(config: &EngineConfig) -> Self {
        let depth = config.depth.max(1) as usize;
        NullEngine {
            files: FileTable::new(),
            depth,
            pending: VecDeque::with_capacity(depth.min(PREALLOCATED)),
            committed: 0,
        }
    }
}

/// The result a request gets: its length, or the same early errors as the real engines.
#[inline]
fn outcome(files: &FileTable, request: Request) -> Completion {
    let result = if files.get(request.file).is_none() {
        -i64::from(libc::EBADF)
    } else if let Some(errno) = request.malformed() {
        -i64::from(errno)
    } else {
        request.len() as i64
    };
    request.complete(result)
}

impl Engine for NullEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Null
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        Ok(self.files.insert(file, path))
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.files.remove_idle(handle, self.pending.len())
    }

    #[inline]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        if self.depth == 1 {
            return QueueOutcome::Completed(outcome(&self.files, request));
        }
        if self.pending.len() >= self.depth {
            return QueueOutcome::Busy(request);
        }
        self.pending.push_back(outcome(&self.files, request));
        QueueOutcome::Queued
    }

    #[inline]
    fn commit(&mut self) -> Result<usize, Error> {
        let newly = self.pending.len() - self.committed;
        self.committed = self.pending.len();
        Ok(newly)
    }

    #[inline]
    fn reap(&mut self, _min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        let n = max.min(self.committed);
        // Popping one by one: `extend(drain(..n))` costs several times more
        // per element, and reaps of one are fio's default.
        out.reserve(n);
        for completion in std::iter::from_fn(|| self.pending.pop_front()).take(n) {
            out.push(completion);
        }
        self.committed -= n;
        Ok(n)
    }

    fn in_flight(&self) -> usize {
        self.pending.len()
    }

    fn is_synchronous(&self) -> bool {
        self.depth == 1
    }
}
