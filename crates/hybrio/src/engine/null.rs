//! `null`: completes every request without doing I/O, as fio's `null` engine.
//! What a benchmark measures with it is its own overhead.

use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;

use super::api::{Engine, EngineConfig, EngineCounters, EngineKind, PREALLOCATED, QueueOutcome};
use super::inject::{self, Faults};
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
    /// Injected faults ([`inject`](super::inject)), if the caller asked.
    faults: Option<Box<Faults>>,
    /// Short transfers "sent again" (reads, writes): as the retry rule
    /// counts them.
    short_ios: [u64; 2],
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
            faults: Faults::of(config),
            short_ios: [0; 2],
        }
    }
}

/// The result a request gets: its length, or the same early errors as the real engines.
#[inline]
fn outcome(files: &FileTable, request: Request) -> Completion {
    let result = outcome_of(files, &request);
    request.complete(result)
}

/// What the null engine answers `request`.
#[inline]
fn outcome_of(files: &FileTable, request: &Request) -> i64 {
    match request.entry_in(files) {
        Ok(_) => request.len() as i64,
        Err(errno) => errno,
    }
}

impl NullEngine {
    /// A request's completion with faults injected. With no I/O to perform, a
    /// shortened request's rest is "sent again" and done at once, and a
    /// delay blocks the caller: there is no completion to hold back.
    fn outcome_with_faults(&mut self, faults: &mut Faults, mut request: Request) -> Completion {
        if let Some(answer) = faults.draw(&mut request) {
            return request.complete(answer);
        }
        let whole = request.len() as i64;
        let result = outcome_of(&self.files, &request);
        if result == whole && faults.shorten(&mut request, result) < whole {
            self.short_ios[usize::from(request.op == crate::request::Op::Write)] += 1;
        }
        faults.finish_here(&mut request, result);
        request.complete(result)
    }

    /// [`Engine::queue`] with faults: the faults are taken out for the
    /// call, and put back.
    #[cold]
    fn queue_with_faults(&mut self, request: Request) -> QueueOutcome {
        if self.depth > 1 && self.pending.len() >= self.depth {
            return QueueOutcome::Busy(request);
        }
        let mut faults = self.faults.take();
        let completion = match faults.as_deref_mut() {
            Some(faults) => self.outcome_with_faults(faults, request),
            None => outcome(&self.files, request),
        };
        self.faults = faults;
        if self.depth == 1 {
            return QueueOutcome::Completed(completion);
        }
        self.pending.push_back(completion);
        QueueOutcome::Queued
    }
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
        if self.faults.is_some() {
            return self.queue_with_faults(request);
        }
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

    fn counters(&self) -> EngineCounters {
        let mut counters = EngineCounters {
            short_ios: self.short_ios,
            ..EngineCounters::default()
        };
        if let Some(faults) = &self.faults {
            faults.add_to(&mut counters);
        }
        counters
    }

    fn description(&self) -> String {
        inject::described(EngineKind::Null.name().to_owned(), self.faults.as_deref())
    }
}
