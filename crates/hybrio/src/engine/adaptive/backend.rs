//! The adaptive engine's asynchronous engines, and what it keeps of the
//! requests it hands them: the slots of timed requests (and of the rests of
//! sends). Their files are aliases of the caller's at the caller's handles,
//! so a completion comes back naming its file as the caller does.

use std::fs::File;
use std::path::PathBuf;

use crate::Error;
use crate::engine::alias::SharesFiles;
use crate::engine::api::{Engine, EngineConfig, EngineCounters, EngineKind, QueueOutcome};
use crate::engine::inject::FaultsFirst;
use crate::engine::io_uring::IoUringEngine;
use crate::engine::libaio::LibaioEngine;
use crate::engine::pool::PoolEngine;
use crate::engine::retry::Track;
use crate::file::{Caching, FileHandle};
use crate::request::{Completion, Request};

/// What the adaptive engine asks of its asynchronous engines beyond
/// [`Engine`].
pub(crate) trait AsyncBackend: SharesFiles + Sized {
    /// An engine of the same type for `O_DIRECT` files written past their
    /// end (see [`appends`](super::appends)), if there is a better one for
    /// them than this; asked once, when the first such file comes.
    fn for_appends(_config: &EngineConfig) -> Option<Self> {
        None
    }
}

/// The tests' engines, boxed.
#[cfg(test)]
impl AsyncBackend for Box<dyn Engine> {}

/// io_uring, or libaio for the `O_DIRECT` files io_uring would hand to a
/// kernel worker; where the kernel refuses io_uring, the pool, and libaio
/// for `O_DIRECT` files: one type, so that the engine calls any of them
/// without a box (a call through a box moved every request once more).
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "one per engine, in its vector of one or two: boxing the ring would add a load to every request"
)]
pub(crate) enum AsyncEngine {
    IoUring(IoUringEngine),
    Libaio(Box<LibaioEngine>),
    Pool(Box<PoolEngine>),
}

impl AsyncBackend for AsyncEngine {
    fn for_appends(config: &EngineConfig) -> Option<Self> {
        crate::sys::aio::status()
            .as_ref()
            .ok()
            .and_then(|_| LibaioEngine::new(config).ok())
            .map(|engine| AsyncEngine::Libaio(Box::new(engine)))
    }
}

/// Calls `$call` on whichever engine `$self` is.
macro_rules! either {
    ($self:expr, $engine:ident => $call:expr) => {
        match $self {
            AsyncEngine::IoUring($engine) => $call,
            AsyncEngine::Libaio($engine) => $call,
            AsyncEngine::Pool($engine) => $call,
        }
    };
}

impl AsyncEngine {
    /// [`Engine::queue`] of libaio or the pool. (Apart from io_uring's, so
    /// that a request for io_uring is handed over as it came, not copied
    /// first for a call that is not its.)
    #[inline(never)]
    fn queue_elsewhere(&mut self, request: Request) -> QueueOutcome {
        either!(self, engine => engine.queue(request))
    }

    /// [`Engine::commit`] of libaio or the pool (apart, as
    /// [`queue_elsewhere`](Self::queue_elsewhere)).
    #[inline(never)]
    fn commit_elsewhere(&mut self) -> Result<usize, Error> {
        either!(self, engine => engine.commit())
    }

    /// [`Engine::reap`] of libaio or the pool (apart, as
    /// [`queue_elsewhere`](Self::queue_elsewhere)).
    #[inline(never)]
    fn reap_elsewhere(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        either!(self, engine => engine.reap(min, max, out))
    }
}

impl SharesFiles for AsyncEngine {
    fn add_alias(
        &mut self,
        at: FileHandle,
        file: &File,
        path: &std::path::Path,
        direct: bool,
    ) -> Result<(), Error> {
        either!(self, engine => engine.add_alias(at, file, path, direct))
    }
    fn remove_alias(&mut self, handle: FileHandle) -> Result<(), Error> {
        either!(self, engine => engine.remove_alias(handle))
    }
}

impl Engine for AsyncEngine {
    fn kind(&self) -> EngineKind {
        either!(self, engine => engine.kind())
    }
    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        either!(self, engine => engine.add_file(file, path))
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        either!(self, engine => engine.remove_file(handle))
    }
    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        either!(self, engine => engine.set_caching(handle, caching))
    }
    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        either!(self, engine => engine.set_atomic_writes(handle, atomic))
    }
    #[inline(always)]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        match self {
            AsyncEngine::IoUring(engine) if !engine.has_faults() => engine.queue_plain(request),
            AsyncEngine::IoUring(engine) => engine.queue(request),
            _ => self.queue_elsewhere(request),
        }
    }
    #[inline(always)]
    fn commit(&mut self) -> Result<usize, Error> {
        match self {
            AsyncEngine::IoUring(engine) => engine.commit(),
            _ => self.commit_elsewhere(),
        }
    }
    #[inline(always)]
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        match self {
            AsyncEngine::IoUring(engine) => engine.reap(min, max, out),
            _ => self.reap_elsewhere(min, max, out),
        }
    }
    #[inline(always)]
    fn in_flight(&self) -> usize {
        either!(self, engine => engine.in_flight())
    }
    fn is_synchronous(&self) -> bool {
        either!(self, engine => engine.is_synchronous())
    }
    fn description(&self) -> String {
        either!(self, engine => engine.description())
    }
    fn state(&self) -> String {
        either!(self, engine => engine.state())
    }
    fn counters(&self) -> EngineCounters {
        either!(self, engine => engine.counters())
    }
}

/// A timed asynchronous request's bookkeeping while the other engine holds
/// it (marked [`Marks::TIMED`](crate::request::Marks::TIMED), its
/// `user_data` there the slot's index), or that of the rest of a send tried
/// inline that went in part. The others go with the caller's `user_data`
/// and need none.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub(super) user_data: u64,
    pub(super) class: u16,
    pub(super) epoch: u32,
    pub(super) queued_ns: u64,
    /// The rest of a send: what went inline, and the caller's window and
    /// offset. Its time prices nothing.
    pub(super) sent: Option<Track>,
}

impl Slot {
    /// A timed request of `class` in exploration `epoch` (0: none), queued at `now`.
    pub(super) fn timed(epoch: u32, now: u64, class: usize) -> Slot {
        Slot {
            user_data: 0,
            class: class as u16,
            epoch,
            queued_ns: now,
            sent: None,
        }
    }
}

/// One asynchronous engine and what the adaptive engine has handed it. (How
/// many requests it holds, it says itself: [`Engine::in_flight`].)
#[derive(Debug)]
pub(super) struct Backend<B> {
    pub(super) engine: B,
    /// Requests queued since its last successful commit: a reap of this
    /// engine need not wait for them (and may not: they may never come).
    /// It may still count some that completed without a commit (an SQPOLL
    /// thread takes them as they come; a request sent again takes the
    /// queued ones down with it) until the next commit.
    pub(super) uncommitted: usize,
    /// Committed at least once: its ring (if it has one) belongs to the
    /// thread that did.
    pub(super) bound: bool,
}

impl<B: Engine> Backend<B> {
    pub(super) fn new(engine: B) -> Backend<B> {
        Backend {
            engine,
            uncommitted: 0,
            bound: false,
        }
    }

    /// Requests it holds.
    #[inline(always)]
    pub(super) fn in_flight(&self) -> usize {
        self.engine.in_flight()
    }

    /// Requests it holds that a reap can wait for; it may have more, when
    /// some of those counted uncommitted completed early.
    pub(super) fn committed(&self) -> usize {
        self.in_flight().saturating_sub(self.uncommitted)
    }
}
