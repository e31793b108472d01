//! The adaptive engine's state: the engine itself and what it keeps per
//! file, per class (its lane), per held completion and per timed inline
//! request; the modules beside this one add its behaviour.

use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;

use super::backend::{Backend, Slot};
use super::caching::{self, AutoCaching};
#[cfg(test)]
use super::path::Path;
use super::policy::{CLOCK_CHECK_SPACING, ClassPolicy, SLOW_INLINE_CLOCK_READS, SLOW_INLINE_NS};
use super::priors::{FileKind, Priors};
use super::readahead::{self, ReadStream};
use crate::clock::Clock;
use crate::engine::api::{Engine, EngineConfig, PathCounts};
use crate::engine::retry::Retry;
use crate::file::FileHandle;
use crate::request::Completion;

/// Size classes: by the power of two at or below the length, up to 16 MiB,
/// then one for everything larger.
pub(super) const SIZE_CLASSES: usize = 25;
/// Read, write, sync, receive, send.
pub(super) const OPERATION_CLASSES: usize = 5;
/// Classes per file.
pub(super) const CLASSES: usize = OPERATION_CLASSES * SIZE_CLASSES;
/// One request of a class in this many is timed while the class follows its
/// choice (and, inline, its requests are quick: page-cache hits); a window
/// of 32 timed ones then spans 4,096 requests, 8 ms of page-cache hits. The
/// timed request asks the class's policy where to go, which is also when an
/// exploration that is due by time starts (the policy's clock checks: the
/// same spacing). A timed request costs several hundred instructions more
/// than one that goes straight; one in 8 (as this was) made that a third of
/// the engine's own cost, one in 64 ten instructions a request. A timed
/// request 4 times off its class's typical one (a cache dropped or filled)
/// has every request of its class timed until its window ends, and the
/// window after it too, so a change is still seen within a few hundred
/// requests.
pub(super) const TIMED_EVERY: u32 = CLOCK_CHECK_SPACING as u32;

/// Where the engine reads the time.
#[derive(Debug, Clone)]
pub(super) enum Time {
    Real(Clock),
    /// A clock the tests move by hand, shared with their synthetic engines,
    /// and how often the engine read it.
    #[cfg(test)]
    Virtual {
        ns: std::sync::Arc<std::sync::atomic::AtomicU64>,
        reads: std::sync::Arc<std::sync::atomic::AtomicU64>,
    },
}

impl Time {
    /// The inline time from which every inline request is timed: reading
    /// the clock is then nothing beside it.
    pub(super) fn slow_inline_ns(&self) -> f64 {
        match self {
            Time::Real(clock) => SLOW_INLINE_NS.max(SLOW_INLINE_CLOCK_READS * clock.read_cost_ns()),
            #[cfg(test)]
            Time::Virtual { .. } => SLOW_INLINE_NS,
        }
    }

    #[inline]
    pub(super) fn now(&self) -> u64 {
        match self {
            Time::Real(clock) => clock.now(),
            #[cfg(test)]
            Time::Virtual { ns, reads } => {
                reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                ns.load(std::sync::atomic::Ordering::Relaxed)
            }
        }
    }
}

/// Which asynchronous engine takes the `O_DIRECT` files written past their
/// end (see [`appends`](super::appends)).
#[derive(Debug)]
pub(super) enum Appends {
    /// None has come yet: the engine for them is made with this when one does.
    NotYet(Box<EngineConfig>),
    /// This one (an index in the engine's `backends`).
    Backend(usize),
    /// The one that takes the other `O_DIRECT` files.
    Same,
}

/// An inline completion held while asynchronous requests are out.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) completion: Completion,
    /// Asynchronous requests handed over before it (see `async_queued`).
    pub(super) after_async: u64,
}

/// A timed inline request, done, whose price waits for the caller's next
/// call: its time in the call plus the caller's own time after it.
#[derive(Debug, Clone, Copy)]
pub(super) struct InlineSample {
    pub(super) file: FileHandle,
    pub(super) class: usize,
    pub(super) epoch: u32,
    pub(super) start: u64,
    pub(super) end: u64,
}

/// What the engine keeps per class of a file for the requests that follow
/// the class's choice without asking its policy: all but one in
/// [`TIMED_EVERY`], while no exploration is running or due.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Lane {
    /// Requests that may still go straight inline...
    pub(super) inline_left: u32,
    /// ...or to the asynchronous engine (one of the two is 0).
    pub(super) async_left: u32,
    /// How many the policy allowed when it last looked: `granted - left` went.
    pub(super) granted: u32,
    /// The choice is the asynchronous engine: `backend`.
    pub(super) asynchronous: bool,
    pub(super) backend: u8,
    /// What one of the class's inline requests costs the caller (its
    /// policy's [`inline_price_ns`](ClassPolicy::inline_price_ns)), added to
    /// the engine's inline time for each that goes straight.
    pub(super) inline_ns: u32,
    /// `async_queued` once the class's latest asynchronous request went: while
    /// fewer asynchronous completions than that have been reaped, some of its
    /// requests may be out, and an inline request timed beside them measures
    /// the contention with them (ext4's inode lock, held by a kernel worker
    /// writing the same file), not the inline path: it is not recorded. (By
    /// count, not by request: completions come in any order, so this errs
    /// towards recording, for at most the requests still out.)
    pub(super) async_mark: u64,
}

impl Lane {
    /// Requests that went straight since the lane was granted them.
    #[inline]
    pub(super) fn went(&self) -> u32 {
        self.granted - self.inline_left - self.async_left
    }

    /// Adds the requests that went straight to the path counts.
    pub(super) fn count_went(&self, counts: &mut PathCounts) {
        let went = u64::from(self.went());
        if self.asynchronous {
            counts.asynchronous += went;
        } else {
            counts.inline += went;
        }
    }
}

/// The adaptive engine, with `I` for the inline path and `B` for the
/// asynchronous engines (concrete types: on a page-cache hit or a fast
/// device the engine's own cost shows, and a call through a box moved every
/// request once more).
#[derive(Debug)]
pub(crate) struct AdaptiveEngine<I, B = Box<dyn Engine>> {
    pub(super) inline: I,
    /// The asynchronous engines: io_uring for every file, and libaio once
    /// an `O_DIRECT` file to be written past its end comes; or, where the
    /// kernel refuses io_uring, the pool, and libaio for `O_DIRECT` files.
    pub(super) backends: Vec<Backend<B>>,
    /// Which engine takes the `O_DIRECT` files written past their end (and
    /// with the first of them, every `O_DIRECT` file).
    pub(super) appends: Appends,
    pub(super) depth: u32,
    /// The caller's files, by handle. Declared after the engines, which
    /// drop first: their aliases name these files' descriptors.
    pub(super) routes: Vec<Option<FileRoute>>,
    /// Per file and class (`file * CLASSES + class`).
    pub(super) lanes: Vec<Lane>,
    pub(super) slots: Vec<Slot>,
    pub(super) free_slots: Vec<u32>,
    /// Timed requests the asynchronous engines hold: while there are none,
    /// a reap has nothing to record.
    pub(super) timed_out: usize,
    /// Inline completions held back while asynchronous requests are outstanding.
    pub(super) ready: VecDeque<Held>,
    /// Requests handed to the asynchronous engines so far, and completions
    /// reaped from them: a held completion notes the first, and once the
    /// second reaches it, every asynchronous request older than it is back.
    pub(super) async_queued: u64,
    pub(super) async_reaped: u64,
    /// The caller's time in inline requests so far, by their prices: a
    /// class's asynchronous windows leave it out (see [`Tally`](super::policy::Tally)).
    pub(super) inline_spent_ns: u64,
    pub(super) held_since_commit: usize,
    /// The lane whose class is exploring, and since when: one class explores
    /// at a time. Two at once priced each path beside the other's
    /// exploration: a copy's reads and writes, both sent to io_uring, made
    /// each other's asynchronous path look dear, and every regular
    /// exploration (the classes count alike) came at once again.
    pub(super) explorer: Option<(usize, u64)>,
    /// A timed inline request waiting for the caller's next call.
    pub(super) pending: Option<InlineSample>,
    pub(super) time: Time,
    pub(super) counts: PathCounts,
    /// The retry rule, for what the engines inside do not finish: a send
    /// tried inline that went in part (its rest goes asynchronous).
    pub(super) retry: Retry,
    /// See [`Time::slow_inline_ns`].
    pub(super) slow_inline_ns: f64,
    /// What classes of each kind settled on, to start new ones from.
    pub(super) priors: Priors,
    /// The emulated device's latency (0: real I/O), part of a file's kind.
    pub(super) emulated_ns: u64,
    /// Where the table of priors is saved when the engine is dropped.
    pub(super) save_to: Option<PathBuf>,
    /// Files whose caching the engine chooses ([`caching`]): while there are
    /// none, no request asks.
    pub(super) auto_files: usize,
    /// The page cache's room for one such file's writes, read from the
    /// kernel's settings with the first.
    pub(super) auto_room: Option<caching::Room>,
    /// The thread that reads ahead of those files' read streams.
    pub(super) readahead: readahead::Helper,
    /// Tests: the path every request takes, whatever its class chose.
    #[cfg(test)]
    pub(super) route_override: ForcedPath,
    /// Tests: inline requests of exploration epochs that were timed.
    #[cfg(test)]
    pub(super) explored_inline_samples: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// What the engine keeps per file: which asynchronous engine takes it and
/// the decision state of each class of its requests.
#[derive(Debug)]
pub(super) struct FileRoute {
    /// The caller's file: the one descriptor every engine inside names it
    /// by. (The engine's fields drop in order, these after the engines.)
    pub(super) file: File,
    /// Which asynchronous engine takes the file's requests (its alias there
    /// has the caller's handle, as the inline engine's has).
    pub(super) backend: usize,
    /// Opened `O_DIRECT`, and where: what its aliases are moved with (see
    /// [`gather_direct_files`](AdaptiveEngine::gather_direct_files)).
    pub(super) direct: bool,
    pub(super) path: PathBuf,
    /// What its requests run on, for the table of priors; `None` if the
    /// file could not say (its classes then start from nothing).
    pub(super) kind: Option<FileKind>,
    pub(super) classes: Vec<Option<Box<ClassPolicy>>>,
    /// For a socket: what its receives and sends have shown.
    pub(super) socket: Option<super::sockets::SocketRoute>,
    /// For a file whose caching the engine chooses: its write stream.
    pub(super) auto: Option<AutoCaching>,
    /// And its read stream, read ahead of by the engine's helper.
    pub(super) reads: Option<ReadStream>,
}

impl<I, B> Drop for AdaptiveEngine<I, B> {
    fn drop(&mut self) {
        // The helper reads ahead through the caller's descriptors, which
        // close with the routes: it stops first.
        self.readahead.stop();
        // The table is a cache of prices: one that cannot be written is
        // learned again, so a failure here loses nothing the caller has.
        if let Some(path) = &self.save_to {
            let _ = self.priors.save(path);
        }
    }
}

/// Tests: the path the adaptive engine sends every request, whatever its
/// class chose; shared, so it can be changed while the engine is inside others.
#[cfg(test)]
#[derive(Debug, Clone, Default)]
pub(crate) struct ForcedPath(std::sync::Arc<std::sync::atomic::AtomicU8>);

#[cfg(test)]
impl ForcedPath {
    pub(crate) fn set(&self, path: Option<Path>) {
        let code = match path {
            None => 0,
            Some(Path::Inline) => 1,
            Some(Path::Async) => 2,
        };
        self.0.store(code, std::sync::atomic::Ordering::Relaxed);
    }

    pub(super) fn get(&self) -> Option<Path> {
        match self.0.load(std::sync::atomic::Ordering::Relaxed) {
            1 => Some(Path::Inline),
            2 => Some(Path::Async),
            _ => None,
        }
    }
}
