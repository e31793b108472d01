//! `adaptive`: each request runs inline (a `pread`/`pwrite` in the caller)
//! or goes to an asynchronous engine (io_uring where the kernel allows it;
//! else libaio for `O_DIRECT` files and the worker pool for the others),
//! whichever has cost less lately for requests like it. No option tunes it.
//!
//! Requests are told apart by class: file, operation (read, write, sync) and
//! size (by powers of two); a file opened with `O_DIRECT` is its own file, so
//! buffered and direct I/O are learned apart. Each class learns on its own
//! ([`policy`]): ext4's buffered writes, which io_uring hands to a kernel
//! worker, come out inline; page-cache hits come out inline; a device with
//! several requests outstanding comes out asynchronous. Nothing is probed per
//! request (no `fincore`, no `RWF_NOWAIT` try): the engine prices each path
//! from the completions it already has.
//!
//! An inline request completes inside [`Engine::queue`], unless asynchronous
//! requests are outstanding: then its completion waits in the engine and
//! comes out of the next [`Engine::reap`], with the others. A caller that
//! reaps only when its queue is full would otherwise never reap the
//! asynchronous requests again once the class turned inline. While
//! completions are held, later inline ones are held behind them, until the
//! caller reaps: held completions count against the depth, so such a caller
//! comes back for them at the latest when the engine answers `Busy`. (A
//! caller that reaps one completion at a time, and only when full, then sees
//! its inline completions wait behind up to `depth` others until asynchronous
//! requests go out again: 8k buffered writes at depth 4 showed about twice
//! the completion latency at the same IOPS. Reaping what is ready, up to the
//! depth, avoids that; answering `Busy` below the depth, which did, would
//! break the promise every caller's wait rests on.)
//!
//! Every run reports how many requests took each path, how many were sent
//! the other way to explore, and how often a class changed its choice
//! ([`PathCounts`](super::PathCounts)).

mod policy;

use std::collections::VecDeque;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use super::{Engine, EngineConfig, EngineCounters, EngineKind, PathCounts, QueueOutcome};
use crate::Error;
use crate::buf::BufPool;
use crate::clock::Clock;
use crate::file::FileHandle;
use crate::request::{Completion, Op, Request};
#[cfg(not(test))]
use policy::Path;
use policy::{ClassPolicy, GAP_CAP_NS, Occupancy};

/// Size classes: powers of two up to 16 MiB, then one for everything larger.
const SIZE_CLASSES: usize = 25;
/// Read, write, sync.
const OPERATION_CLASSES: usize = 3;
/// One inline request in this many is timed while its class follows its
/// choice and its requests are quick (page-cache hits); a window of 32
/// timed ones then spans 256 requests, half a millisecond.
const TIMED_INLINE: u32 = 8;

/// Where the engine reads the time.
#[derive(Debug, Clone)]
enum Time {
    Real(Clock),
    /// A clock the tests move by hand, shared with their synthetic engines.
    #[cfg(test)]
    Virtual(std::sync::Arc<std::sync::atomic::AtomicU64>),
}

impl Time {
    #[inline]
    fn now(&self) -> u64 {
        match self {
            Time::Real(clock) => clock.now(),
            #[cfg(test)]
            Time::Virtual(ns) => ns.load(std::sync::atomic::Ordering::Relaxed),
        }
    }
}

/// What the engine keeps per file: its handle in the asynchronous engine
/// and the decision state of each class of its requests.
#[derive(Debug)]
struct FileRoute {
    /// Which asynchronous engine takes the file's requests, and its handle there.
    backend: usize,
    handle: FileHandle,
    classes: Vec<Option<Box<ClassPolicy>>>,
}

/// An asynchronous request's bookkeeping while the other engine holds it.
#[derive(Debug, Clone, Copy)]
struct Slot {
    user_data: u64,
    file: FileHandle,
    class: u16,
    epoch: u32,
    queued_ns: u64,
}

impl Slot {
    /// A slot no request holds.
    const FREE: Slot = Slot {
        user_data: 0,
        file: FileHandle(u32::MAX),
        class: 0,
        epoch: 0,
        queued_ns: 0,
    };
}

/// One asynchronous engine and what the adaptive engine has handed it.
#[derive(Debug)]
struct Backend {
    engine: Box<dyn Engine>,
    in_flight: usize,
    /// Of those, queued since its last successful commit: a reap of this
    /// engine need not wait for them (and may not: they may never come).
    uncommitted: usize,
}

impl Backend {
    fn new(engine: Box<dyn Engine>) -> Backend {
        Backend {
            engine,
            in_flight: 0,
            uncommitted: 0,
        }
    }

    /// Requests it holds that a reap can wait for.
    fn committed(&self) -> usize {
        self.in_flight - self.uncommitted
    }
}

/// The adaptive engine, with `I` for the inline path (a concrete type: on a
/// page-cache hit the engine's own cost shows, and a call through a box
/// moved every request once more).
#[derive(Debug)]
pub(crate) struct AdaptiveEngine<I> {
    inline: I,
    /// The asynchronous engines: io_uring for every file; or, where the
    /// kernel refuses io_uring, the pool, and libaio for `O_DIRECT` files.
    backends: Vec<Backend>,
    /// Reopen files for the asynchronous engine instead of duplicating the
    /// descriptor (the emulated device changes a file's flags).
    reopen_files: bool,
    depth: u32,
    routes: Vec<Option<FileRoute>>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    async_in_flight: usize,
    /// Inline completions held back while asynchronous requests are outstanding.
    ready: VecDeque<Completion>,
    held_since_commit: usize,
    occupancy: Occupancy,
    /// When the engine last returned to its caller.
    last_return_ns: u64,
    time: Time,
    counts: PathCounts,
    /// Counts requests, to time one inline request in [`TIMED_INLINE`].
    tick: u32,
    /// Tests: the path every request takes, whatever its class chose.
    #[cfg(test)]
    route_override: ForcedPath,
}

/// The adaptive engine, wrapped as [`super::open`] wraps every engine: psync
/// (pvsync2 when `hipri` or `nowait` asks for its flags) inline, and
/// io_uring for the asynchronous path; where the kernel refuses io_uring,
/// the pool, and libaio for `O_DIRECT` files when it is allowed (for
/// buffered files it runs inside `io_submit`, which is no asynchronous path).
pub(crate) fn open(
    config: &EngineConfig,
    pool: Option<&BufPool>,
) -> Result<Box<dyn Engine>, Error> {
    open_with(config, pool, true)
}

/// [`open`], as on a kernel that refuses io_uring.
#[cfg(test)]
pub(crate) fn open_without_io_uring(
    config: &EngineConfig,
    pool: Option<&BufPool>,
) -> Result<Box<dyn Engine>, Error> {
    open_with(config, pool, false)
}

fn open_with(
    config: &EngineConfig,
    pool: Option<&BufPool>,
    try_io_uring: bool,
) -> Result<Box<dyn Engine>, Error> {
    let io_uring = if try_io_uring {
        crate::probe::engine_available(EngineKind::IoUring)
            .and_then(|()| super::io_uring::IoUringEngine::new(config, pool))
            .ok()
    } else {
        None
    };
    let backends: Vec<Box<dyn Engine>> = match io_uring {
        Some(ring) => vec![Box::new(ring)],
        None => {
            let mut backends: Vec<Box<dyn Engine>> =
                vec![Box::new(super::pool::PoolEngine::new(config)?)];
            let libaio = crate::probe::engine_available(EngineKind::Libaio)
                .and_then(|()| super::libaio::LibaioEngine::new(config));
            if let Ok(libaio) = libaio {
                backends.push(Box::new(libaio));
            }
            backends
        }
    };
    let time = Time::Real(Clock::new());
    Ok(if config.hipri || config.nowait {
        let inline = super::pvsync2::Pvsync2Engine::new(config);
        super::wrap(
            AdaptiveEngine::with_engines(inline, backends, config, time),
            config,
        )
    } else {
        let inline = super::psync::PsyncEngine::new(config);
        super::wrap(
            AdaptiveEngine::with_engines(inline, backends, config, time),
            config,
        )
    })
}

impl<I: Engine> AdaptiveEngine<I> {
    /// The engine with `backends[0]` for every file, or for buffered files
    /// only when `backends[1]` is there for `O_DIRECT` ones.
    fn with_engines(
        inline: I,
        backends: Vec<Box<dyn Engine>>,
        config: &EngineConfig,
        time: Time,
    ) -> Self {
        let last_return_ns = time.now();
        AdaptiveEngine {
            inline,
            backends: backends.into_iter().map(Backend::new).collect(),
            reopen_files: config.completion_latency.is_some(),
            depth: config.depth.max(1),
            routes: Vec::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            async_in_flight: 0,
            ready: VecDeque::new(),
            held_since_commit: 0,
            occupancy: Occupancy::default(),
            last_return_ns,
            time,
            counts: PathCounts::default(),
            tick: 0,
            #[cfg(test)]
            route_override: ForcedPath::default(),
        }
    }

    /// Which class `request` belongs to.
    #[inline]
    fn class_of(request: &Request) -> usize {
        let operation = match request.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Fsync | Op::Fdatasync => 2,
        };
        let len = request.len().max(1) as u64;
        let size = (u64::BITS - (len - 1).leading_zeros()) as usize;
        operation * SIZE_CLASSES + size.min(SIZE_CLASSES - 1)
    }

    /// The request's slot for its trip through the asynchronous engine.
    fn take_slot(&mut self, slot: Slot) -> u32 {
        match self.free_slots.pop() {
            Some(index) => {
                self.slots[index as usize] = slot;
                index
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Hands a completion over now, or holds it for the next reap while
    /// asynchronous requests are outstanding or completions are held.
    #[inline]
    fn deliver(&mut self, completion: Completion) -> QueueOutcome {
        if self.async_in_flight == 0 && self.ready.is_empty() {
            QueueOutcome::Completed(completion)
        } else {
            self.ready.push_back(completion);
            self.held_since_commit += 1;
            QueueOutcome::Queued
        }
    }

    /// Puts the caller's tag and handle back on a completion from the
    /// asynchronous engine, and records what it cost.
    fn finish_async(&mut self, completion: &mut Completion, now: u64) {
        let index = completion.user_data as u32;
        let slot = std::mem::replace(&mut self.slots[index as usize], Slot::FREE);
        self.free_slots.push(index);
        completion.user_data = slot.user_data;
        completion.file = slot.file;
        let policy = self
            .routes
            .get_mut(slot.file.index())
            .and_then(Option::as_mut)
            .and_then(|route| route.classes[usize::from(slot.class)].as_mut());
        let Some(policy) = policy else {
            return;
        };
        policy.async_out = policy.async_out.saturating_sub(1);
        // A failure's latency says nothing about the path.
        if completion.result >= 0 {
            policy.record(
                Path::Async,
                slot.epoch,
                slot.queued_ns,
                now.saturating_sub(slot.queued_ns),
                now,
                &self.occupancy,
            );
        }
    }

    /// Reaps from the asynchronous engines, waiting for `min` (at most what
    /// they hold), and gives the completions their caller's tag and handle.
    fn reap_async(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        if self.async_in_flight == 0 || max == 0 {
            return Ok(0);
        }
        let min = min.min(self.async_in_flight);
        let mut holding = (0..self.backends.len()).filter(|&b| self.backends[b].in_flight > 0);
        if let (Some(only), None) = (holding.next(), holding.next()) {
            return self.reap_from(only, min, max, out);
        }
        // Two engines hold requests (only without io_uring, with buffered and
        // O_DIRECT files at once): take what either has, then wait on the one
        // holding more committed requests. They have no common wait, so a
        // completion of the other can wait behind it; each of them completes
        // on its own, so none is lost.
        let mut got = 0;
        for backend in 0..self.backends.len() {
            if got < max && self.backends[backend].in_flight > 0 {
                got += self.reap_from(backend, 0, max - got, out)?;
            }
        }
        while got < min && got < max {
            let Some(backend) = (0..self.backends.len())
                .filter(|&b| self.backends[b].committed() > 0)
                .max_by_key(|&b| self.backends[b].committed())
            else {
                // Only uncommitted requests are left: nothing to wait for.
                break;
            };
            let wanted = (min - got).min(self.backends[backend].committed());
            let reaped = self.reap_from(backend, wanted, max - got, out)?;
            if reaped == 0 {
                // It had committed requests and waited for none: come back
                // to the caller rather than ask again for ever.
                break;
            }
            got += reaped;
        }
        Ok(got)
    }

    /// Reaps from one asynchronous engine, waiting for `min` of its requests.
    /// When it fails, the completions it appended first are the caller's
    /// all the same: they are translated before the error goes up.
    fn reap_from(
        &mut self,
        backend: usize,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let start = out.len();
        let result = self.backends[backend].engine.reap(min, max, out);
        let reaped = out.len() - start;
        if reaped > 0 {
            let now = self.time.now();
            self.occupancy.remove(now, reaped as u64);
            self.async_in_flight -= reaped;
            let target = &mut self.backends[backend];
            target.in_flight -= reaped;
            // An engine may complete requests it was not asked to commit yet
            // (an SQPOLL thread takes them as they come).
            target.uncommitted = target.uncommitted.min(target.in_flight);
            for completion in &mut out[start..] {
                self.finish_async(completion, now);
            }
            self.last_return_ns = now;
        }
        result.map(|_| reaped)
    }

    /// The policy of a class that has one.
    #[inline]
    fn policy_of(&mut self, file: FileHandle, class: usize) -> Option<&mut ClassPolicy> {
        let route = self.routes.get_mut(file.index())?.as_mut()?;
        route.classes[class].as_deref_mut()
    }

    /// [`Engine::queue`] for a request that explores, is timed, goes
    /// asynchronous, or starts a class: asks the class's policy, and records
    /// what the request cost.
    #[inline(never)]
    fn queue_routed(&mut self, mut request: Request, class: usize, phase: u32) -> QueueOutcome {
        let Some(route) = self
            .routes
            .get_mut(request.file.index())
            .and_then(Option::as_mut)
        else {
            return QueueOutcome::Completed(request.complete(-i64::from(libc::EBADF)));
        };
        let depth = self.depth;
        let policy = route.classes[class].get_or_insert_with(|| Box::new(ClassPolicy::new(depth)));
        let timed = phase == 0 || policy.times_every_request();
        let clock_read = timed;
        let now = if timed {
            self.time.now()
        } else {
            self.last_return_ns
        };
        let decision = policy.route(now, &self.occupancy);
        #[cfg(test)]
        let decision = policy::Route {
            path: self.route_override.get().unwrap_or(decision.path),
            ..decision
        };
        self.counts.switches += u64::from(decision.switched);
        self.counts.explored += u64::from(decision.epoch != 0);
        match decision.path {
            Path::Inline => {
                self.counts.inline += 1;
                // Exploration epochs time every request.
                let timed = timed || decision.epoch != 0;
                let start = if timed && !clock_read {
                    self.time.now()
                } else {
                    now
                };
                let gap = start.saturating_sub(self.last_return_ns).min(GAP_CAP_NS);
                let outcome = self.inline.queue(request);
                let end = if timed || phase == TIMED_INLINE - 1 {
                    let end = self.time.now();
                    self.last_return_ns = end;
                    end
                } else {
                    now
                };
                match outcome {
                    QueueOutcome::Completed(completion) => {
                        if timed && completion.result >= 0 && policy.async_out == 0 {
                            let cost = end.saturating_sub(start) + gap;
                            policy.record(
                                Path::Inline,
                                decision.epoch,
                                start,
                                cost,
                                end,
                                &self.occupancy,
                            );
                        }
                        self.deliver(completion)
                    }
                    other => other,
                }
            }
            Path::Async => {
                // Every asynchronous request is timed: its latency is its price.
                let now = if timed { now } else { self.time.now() };
                let (user_data, file) = (request.user_data, request.file);
                let backend = route.backend;
                request.file = route.handle;
                policy.async_out += 1;
                let slot = self.take_slot(Slot {
                    user_data,
                    file,
                    class: class as u16,
                    epoch: decision.epoch,
                    queued_ns: now,
                });
                request.user_data = u64::from(slot);
                self.occupancy.add(now, 1);
                self.async_in_flight += 1;
                self.last_return_ns = now;
                let target = &mut self.backends[backend];
                target.in_flight += 1;
                match target.engine.queue(request) {
                    QueueOutcome::Queued => {
                        target.uncommitted += 1;
                        self.counts.asynchronous += 1;
                        QueueOutcome::Queued
                    }
                    QueueOutcome::Completed(mut completion) => {
                        target.in_flight -= 1;
                        self.counts.asynchronous += 1;
                        let end = self.time.now();
                        self.occupancy.remove(end, 1);
                        self.async_in_flight -= 1;
                        self.finish_async(&mut completion, end);
                        self.last_return_ns = end;
                        self.deliver(completion)
                    }
                    QueueOutcome::Busy(mut request) => {
                        target.in_flight -= 1;
                        if let Some(policy) = self.routes[file.index()]
                            .as_mut()
                            .and_then(|route| route.classes[class].as_mut())
                        {
                            policy.async_out -= 1;
                        }
                        self.occupancy.remove(now, 1);
                        self.async_in_flight -= 1;
                        self.slots[slot as usize] = Slot::FREE;
                        self.free_slots.push(slot);
                        request.user_data = user_data;
                        request.file = file;
                        // The engine is below its depth (`queue` checked), so
                        // the backend refused for a moment of its own (an SQ
                        // that looks full): the request runs inline instead,
                        // never `Busy` below the depth.
                        self.counts.inline += 1;
                        match self.inline.queue(request) {
                            QueueOutcome::Completed(completion) => self.deliver(completion),
                            other => other,
                        }
                    }
                }
            }
        }
    }

    /// Adds a twin of `file` (a duplicate, or a reopened copy for the
    /// emulated device) to the asynchronous engine that takes it; returns
    /// which engine, and the twin's handle there.
    fn add_twin(
        &mut self,
        file: &File,
        path: &std::path::Path,
    ) -> Result<(usize, FileHandle), Error> {
        let twin = if self.reopen_files {
            crate::file::reopen(file, path)?
        } else {
            file.try_clone()
                .map_err(|e| Error::io("duplicate the descriptor of", path, 0, e))?
        };
        // With a second asynchronous engine (libaio, no io_uring), it takes
        // the O_DIRECT files. The flags are the caller's file's: the emulated
        // device's twin has O_DIRECT cleared.
        let direct = crate::sys::status_flags(file.as_raw_fd())
            .map_err(|e| Error::io("read the flags of", path, 0, e))?
            & libc::O_DIRECT
            != 0;
        let backend = usize::from(direct && self.backends.len() > 1);
        let twin = self.backends[backend]
            .engine
            .add_file(twin, path.to_owned())?;
        Ok((backend, twin))
    }

    fn route_of(&self, handle: FileHandle) -> Option<&FileRoute> {
        self.routes.get(handle.index()).and_then(Option::as_ref)
    }
}

impl<I: Engine> Engine for AdaptiveEngine<I> {
    fn kind(&self) -> EngineKind {
        EngineKind::Adaptive
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        let (backend, twin) = match self.add_twin(&file, &path) {
            Ok(added) => added,
            // The twin, if any, is closed; the caller's file goes back.
            Err(reason) => return Err(Error::refusing(file, path, reason)),
        };
        let handle = match self.inline.add_file(file, path) {
            Ok(handle) => handle,
            Err(error) => {
                let _ = self.backends[backend].engine.remove_file(twin);
                return Err(error);
            }
        };
        if self.routes.len() <= handle.index() {
            self.routes.resize_with(handle.index() + 1, || None);
        }
        self.routes[handle.index()] = Some(FileRoute {
            backend,
            handle: twin,
            classes: (0..OPERATION_CLASSES * SIZE_CLASSES)
                .map(|_| None)
                .collect(),
        });
        Ok(handle)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        let route = self.route_of(handle).ok_or(Error::BadHandle(handle.0))?;
        let (backend, twin) = (route.backend, route.handle);
        let busy = self.ready.iter().any(|c| c.file == handle)
            || self.slots.iter().any(|slot| slot.file == handle);
        if busy {
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight: self.in_flight(),
            });
        }
        self.backends[backend].engine.remove_file(twin)?;
        self.routes[handle.index()] = None;
        self.inline.remove_file(handle)
    }

    #[inline]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        if self.ready.len() + self.async_in_flight >= self.depth as usize {
            // Full. While completions are held, new inline ones join them, so
            // that a caller that reaps only when full comes back for them.
            return QueueOutcome::Busy(request);
        }
        // Quick inline requests that follow the choice are timed one in
        // `TIMED_INLINE` (with the end of the one before, for its gap), and
        // the others go straight through: a page-cache hit costs about 2 us,
        // and the engine's own instructions on each (class, policy, clock,
        // record) were 4-5% of it in callgrind before this path existed.
        self.tick = self.tick.wrapping_add(1);
        let phase = self.tick % TIMED_INLINE;
        let class = Self::class_of(&request);
        #[cfg(test)]
        let phase = if self.route_override.get().is_some() {
            0
        } else {
            phase
        };
        if phase != 0
            && let Some(policy) = self.policy_of(request.file, class)
            && policy.settled_inline()
        {
            // The untimed inline request: as little as possible around the call.
            self.counts.inline += 1;
            let outcome = self.inline.queue(request);
            if phase == TIMED_INLINE - 1 {
                // The next one is timed, with the caller's time before it.
                self.last_return_ns = self.time.now();
            }
            if self.async_in_flight == 0 && self.ready.is_empty() {
                // Nothing to keep order with: hand it over as it is.
                return outcome;
            }
            return match outcome {
                QueueOutcome::Completed(completion) => self.deliver(completion),
                other => other,
            };
        }
        self.queue_routed(request, class, phase)
    }

    fn commit(&mut self) -> Result<usize, Error> {
        let mut committed = 0;
        for backend in &mut self.backends {
            if backend.in_flight > 0 {
                committed += backend.engine.commit()?;
                backend.uncommitted = 0;
            }
        }
        let held = std::mem::take(&mut self.held_since_commit);
        Ok(committed + held)
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        // The asynchronous engine first, without waiting: its requests are
        // older than any held inline completion, and a caller reaping only
        // as many as it has free slots would otherwise always be served
        // from the held ones and never see them.
        let mut got = self.reap_async(0, max, out)?;
        while got < max {
            let Some(completion) = self.ready.pop_front() else {
                break;
            };
            out.push(completion);
            got += 1;
        }
        if got < min.min(max) && self.async_in_flight > 0 {
            got += self.reap_async(min - got, max - got, out)?;
        }
        Ok(got)
    }

    fn in_flight(&self) -> usize {
        self.ready.len() + self.async_in_flight
    }

    fn is_synchronous(&self) -> bool {
        false
    }

    fn state(&self) -> String {
        let backends: Vec<String> = self
            .backends
            .iter()
            .map(|b| {
                format!(
                    "{} handed over ({} not yet committed): {}",
                    b.in_flight,
                    b.uncommitted,
                    b.engine.state()
                )
            })
            .collect();
        format!(
            "adaptive: {} inline completions held, {} asynchronous; {}",
            self.ready.len(),
            self.async_in_flight,
            backends.join("; ")
        )
    }

    fn description(&self) -> String {
        let asynchronous: Vec<String> = self
            .backends
            .iter()
            .map(|b| b.engine.description())
            .collect();
        let asynchronous = match asynchronous.as_slice() {
            [buffered, direct] => format!("{buffered}, O_DIRECT {direct}"),
            all => all.join(", "),
        };
        format!(
            "adaptive (inline {}, async {asynchronous})",
            self.inline.description()
        )
    }

    fn counters(&self) -> EngineCounters {
        EngineCounters {
            paths: Some(self.counts),
            ..self
                .backends
                .iter()
                .fold(self.inline.counters(), |sum, b| sum + b.engine.counters())
        }
    }
}

#[cfg(test)]
pub(crate) use policy::Path;

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

    fn get(&self) -> Option<Path> {
        match self.0.load(std::sync::atomic::Ordering::Relaxed) {
            1 => Some(Path::Inline),
            2 => Some(Path::Async),
            _ => None,
        }
    }
}

/// Tests: the adaptive engine over the given engines, on a clock the test
/// moves, with the handle that forces its paths.
#[cfg(test)]
pub(crate) fn with_engines_for_tests<I: Engine>(
    inline: I,
    backends: Vec<Box<dyn Engine>>,
    config: &EngineConfig,
    clock: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> (AdaptiveEngine<I>, ForcedPath) {
    let engine = AdaptiveEngine::with_engines(inline, backends, config, Time::Virtual(clock));
    let forced = engine.route_override.clone();
    (engine, forced)
}

#[cfg(test)]
mod tests;
