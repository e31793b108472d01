//! SCAFFOLD (replaced by the real fault injection before merge).

use std::fs::File;
use std::path::PathBuf;

use super::{Engine, EngineCounters, EngineKind, QueueOutcome};
use crate::Error;
use crate::file::FileHandle;
use crate::request::{Completion, Request};

#[derive(Debug)]
/// SCAFFOLD.
pub struct Inject<E> {
    inner: E,
}

impl<E: Engine> Inject<E> {
    /// SCAFFOLD.
    pub fn new(inner: E, _plan: FaultPlan) -> Self {
        Inject { inner }
    }
}

impl<E: Engine> Engine for Inject<E> {
    fn kind(&self) -> EngineKind {
        self.inner.kind()
    }
    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        self.inner.add_file(file, path)
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.inner.remove_file(handle)
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.inner.queue(request)
    }
    fn commit(&mut self) -> Result<usize, Error> {
        self.inner.commit()
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        self.inner.reap(min, max, out)
    }
    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }
    fn is_synchronous(&self) -> bool {
        self.inner.is_synchronous()
    }
    fn description(&self) -> String {
        self.inner.description()
    }
    fn counters(&self) -> EngineCounters {
        self.inner.counters()
    }
}

/// SCAFFOLD.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// Probability of EIO.
    pub eio: f64,
}

/// SCAFFOLD.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct InjectedCounts {
    /// EIO injected.
    pub eio: u64,
}
