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
//! comes back for them at the latest when the engine answers `Busy`.
//! [`Engine::held`] says how many a reap hands over at once (those whose
//! older asynchronous requests are back), and a caller that reaps only when
//! full should take them when they appear: one that reaps one completion at
//! a time, only when full, otherwise keeps its queue full of them, each
//! waiting for `depth` others (page-cache hits at depth 16 waited 16 times
//! their latency until the benchmark took them so). Answering `Busy` below
//! the depth would end a hold too, and break the promise every caller's wait
//! rests on.
//!
//! A class that follows its choice sends its requests straight along it
//! ([`Lane`]): inline with nothing else in flight, the decision is made inside
//! the caller's call; asynchronous, with no clock read, no slot and nothing
//! recorded. One request in [`TIMED_EVERY`] is timed. The file's timed
//! requests go to a second copy of it in the asynchronous engine, so that a
//! completion says by its file whether it was timed, and the untimed ones
//! keep the caller's `user_data`.
//!
//! Every run reports how many requests took each path, how many were sent
//! the other way to explore, and how often a class changed its choice
//! ([`PathCounts`](super::PathCounts)).

mod asynchronous;
mod policy;

use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;

use super::{Engine, EngineConfig, EngineCounters, EngineKind, PathCounts, QueueOutcome};
use crate::Error;
use crate::buf::BufPool;
use crate::clock::Clock;
use crate::file::FileHandle;
use crate::request::{Completion, Op, Request};
use asynchronous::{Backend, Slot, TwinOf};
#[cfg(not(test))]
use policy::Path;
use policy::{ClassPolicy, GAP_CAP_NS, Occupancy, SLOW_INLINE_CLOCK_READS, SLOW_INLINE_NS};

/// Size classes: powers of two up to 16 MiB, then one for everything larger.
const SIZE_CLASSES: usize = 25;
/// Read, write, sync.
const OPERATION_CLASSES: usize = 3;
/// Classes per file.
const CLASSES: usize = OPERATION_CLASSES * SIZE_CLASSES;
/// One request in this many is timed while its class follows its choice
/// (and, inline, its requests are quick: page-cache hits); a window of 32
/// timed ones then spans 2048 requests, 4 ms of page-cache hits. A timed
/// request costs about 200 instructions more than one that goes straight;
/// one in 8 (as this was) made that 25 a request, a third of the engine's
/// own cost. A timed inline request slow enough to matter (a cache dropped)
/// has every request of its class timed until its window ends, so a change
/// is still seen within a few dozen requests of the first one timed.
const TIMED_EVERY: u32 = 64;

/// Where the engine reads the time.
#[derive(Debug, Clone)]
enum Time {
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
    fn slow_inline_ns(&self) -> f64 {
        match self {
            Time::Real(clock) => SLOW_INLINE_NS.max(SLOW_INLINE_CLOCK_READS * clock.read_cost_ns()),
            #[cfg(test)]
            Time::Virtual { .. } => SLOW_INLINE_NS,
        }
    }

    #[inline]
    fn now(&self) -> u64 {
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

/// What the engine keeps per file: its handle in the asynchronous engine
/// and the decision state of each class of its requests.
#[derive(Debug)]
struct FileRoute {
    /// Which asynchronous engine takes the file's requests, and its handles
    /// there: one for the requests that go untimed, one for the timed ones,
    /// so that a completion says by its file which it was.
    backend: usize,
    handle: FileHandle,
    timed_handle: FileHandle,
    classes: Vec<Option<Box<ClassPolicy>>>,
}

/// An inline completion held while asynchronous requests are out.
#[derive(Debug)]
struct Held {
    completion: Completion,
    /// Asynchronous requests handed over before it (see `async_queued`).
    after_async: u64,
}

/// What the engine keeps per class of a file for the requests that follow
/// the class's choice without asking its policy: every one but the timed
/// (one in [`TIMED_EVERY`]), while no exploration is running or due.
#[derive(Debug, Clone, Copy)]
struct Lane {
    /// Requests that may still go straight inline...
    inline_left: u32,
    /// ...or to the asynchronous engine (one of the two is 0).
    async_left: u32,
    /// How many the policy allowed when it last looked: `granted - left` went.
    granted: u32,
    /// The choice is the asynchronous engine: `backend`, the file there `twin`.
    asynchronous: bool,
    backend: u8,
    twin: FileHandle,
    /// Requests of the class the asynchronous engine holds: an inline
    /// request timed beside them measures the contention with them (ext4's
    /// inode lock, held by a kernel worker writing the same file), not the
    /// inline path, and is not recorded.
    async_out: u32,
}

impl Lane {
    /// Requests that went straight since the lane was granted them.
    #[inline]
    fn went(&self) -> u32 {
        self.granted - self.inline_left - self.async_left
    }

    /// Adds the requests that went straight to the path counts.
    fn count_went(&self, counts: &mut PathCounts) {
        let went = u64::from(self.went());
        if self.asynchronous {
            counts.asynchronous += went;
        } else {
            counts.inline += went;
        }
    }
}

impl Default for Lane {
    fn default() -> Lane {
        Lane {
            inline_left: 0,
            async_left: 0,
            granted: 0,
            asynchronous: false,
            backend: 0,
            twin: FileHandle(u32::MAX),
            async_out: 0,
        }
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
    /// Per asynchronous engine, by its file handle: whose file it is.
    twins: Vec<Vec<Option<TwinOf>>>,
    /// Reopen files for the asynchronous engine instead of duplicating the
    /// descriptor (the emulated device changes a file's flags).
    reopen_files: bool,
    depth: u32,
    routes: Vec<Option<FileRoute>>,
    /// Per file and class (`file * CLASSES + class`).
    lanes: Vec<Lane>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    async_in_flight: usize,
    /// Inline completions held back while asynchronous requests are outstanding.
    ready: VecDeque<Held>,
    /// Requests handed to the asynchronous engines so far, and completions
    /// reaped from them: a held completion notes the first, and once the
    /// second reaches it, every asynchronous request older than it is back.
    async_queued: u64,
    async_reaped: u64,
    held_since_commit: usize,
    occupancy: Occupancy,
    /// When the engine last returned to its caller.
    last_return_ns: u64,
    time: Time,
    counts: PathCounts,
    /// Requests until the next timed one (one in [`TIMED_EVERY`], whatever its
    /// class: the end of the request before it is read too, for its gap).
    untimed_left: u32,
    /// See [`Time::slow_inline_ns`].
    slow_inline_ns: f64,
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
        let slow_inline_ns = time.slow_inline_ns();
        AdaptiveEngine {
            inline,
            twins: backends.iter().map(|_| Vec::new()).collect(),
            backends: backends.into_iter().map(Backend::new).collect(),
            reopen_files: config.completion_latency.is_some(),
            depth: config.depth.max(1),
            routes: Vec::new(),
            lanes: Vec::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            async_in_flight: 0,
            ready: VecDeque::new(),
            async_queued: 0,
            async_reaped: 0,
            held_since_commit: 0,
            occupancy: Occupancy::default(),
            last_return_ns,
            time,
            counts: PathCounts::default(),
            untimed_left: 1,
            slow_inline_ns,
            #[cfg(test)]
            route_override: ForcedPath::default(),
        }
    }

    /// Which class `request` belongs to.
    #[inline]
    fn class_of(request: &Request) -> usize {
        Self::class_of_parts(request.op, request.len())
    }

    /// Which class a request of `op` on `len` bytes belongs to.
    #[inline]
    fn class_of_parts(op: Op, len: usize) -> usize {
        let operation = match op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Fsync | Op::Fdatasync => 2,
        };
        let len = len.max(1) as u64;
        let size = (u64::BITS - (len - 1).leading_zeros()) as usize;
        operation * SIZE_CLASSES + size.min(SIZE_CLASSES - 1)
    }

    /// Where the lane of `file`'s `class` is in [`lanes`](Self::lanes).
    #[inline]
    fn lane_of(file: FileHandle, class: usize) -> usize {
        file.index() * CLASSES + class
    }

    /// Where the lanes of all of `file`'s classes are.
    fn lanes_of(file: FileHandle) -> std::ops::Range<usize> {
        Self::lane_of(file, 0)..Self::lane_of(file, CLASSES)
    }

    /// Moves up to `max` held completions to `out`, oldest first; with
    /// `only_older`, only those whose older asynchronous requests are back.
    fn pop_held(&mut self, max: usize, only_older: bool, out: &mut Vec<Completion>) -> usize {
        let mut got = 0;
        while got < max
            && let Some(front) = self.ready.front()
            && (!only_older || front.after_async <= self.async_reaped)
        {
            if let Some(held) = self.ready.pop_front() {
                out.push(held.completion);
                got += 1;
            }
        }
        got
    }

    /// Hands a completion over now, or holds it for the next reap while
    /// asynchronous requests are outstanding or completions are held.
    #[inline]
    fn deliver(&mut self, completion: Completion) -> QueueOutcome {
        if self.async_in_flight == 0 && self.ready.is_empty() {
            QueueOutcome::Completed(completion)
        } else {
            self.ready.push_back(Held {
                completion,
                after_async: self.async_queued,
            });
            self.held_since_commit += 1;
            QueueOutcome::Queued
        }
    }

    /// Whether `request` goes straight inline with nothing else in flight:
    /// its class follows an inline choice, and neither it nor the one after
    /// it is timed (the one before the timed one reads the clock at its end,
    /// for its gap). Counts it if so.
    #[inline(always)]
    fn goes_straight_inline(&mut self, request: &Request) -> bool {
        let key = Self::lane_of(request.file, Self::class_of(request));
        if self.untimed_left > 2
            && self.async_in_flight == 0
            && self.ready.is_empty()
            && let Some(lane) = self.lanes.get_mut(key)
            && lane.inline_left > 0
        {
            lane.inline_left -= 1;
            self.untimed_left -= 1;
            return true;
        }
        false
    }

    /// [`Engine::queue`] for every request but an inline one that goes
    /// straight with nothing else in flight.
    #[inline(never)]
    fn queue_other(&mut self, request: Request) -> QueueOutcome {
        let class = Self::class_of(&request);
        let key = Self::lane_of(request.file, class);
        if self.ready.len() + self.async_in_flight >= self.depth as usize {
            // Full. While completions are held, new inline ones join them, so
            // that a caller that reaps only when full comes back for them.
            return QueueOutcome::Busy(request);
        }
        self.untimed_left -= 1;
        #[cfg(test)]
        if self.route_override.get().is_some() {
            self.untimed_left = 0;
        }
        if self.untimed_left != 0
            && let Some(lane) = self.lanes.get_mut(key)
        {
            if lane.async_left > 0 {
                lane.async_left -= 1;
                let twin = (usize::from(lane.backend), lane.twin);
                return self.queue_async(request, twin, key, class, None);
            }
            if lane.inline_left > 0 {
                lane.inline_left -= 1;
                let outcome = self.inline.queue(request);
                if self.untimed_left == 1 {
                    // The next one is timed, with the caller's time before it.
                    self.last_return_ns = self.time.now();
                }
                return match outcome {
                    QueueOutcome::Completed(completion) => self.deliver(completion),
                    other => other,
                };
            }
        }
        let sampled = self.untimed_left == 0;
        if sampled {
            self.untimed_left = TIMED_EVERY;
        }
        self.queue_routed(request, class, sampled)
    }

    /// [`Engine::queue`] for a request that explores, is timed, or starts a
    /// class, or whose class must be looked at again: asks the class's
    /// policy, records what the request cost, and tells the class's lane how
    /// many of the next requests may go straight.
    #[inline(never)]
    fn queue_routed(&mut self, request: Request, class: usize, sampled: bool) -> QueueOutcome {
        let Some(route) = self
            .routes
            .get_mut(request.file.index())
            .and_then(Option::as_mut)
        else {
            return QueueOutcome::Completed(request.complete(-i64::from(libc::EBADF)));
        };
        let (depth, slow_inline_ns) = (self.depth, self.slow_inline_ns);
        let policy = route.classes[class]
            .get_or_insert_with(|| Box::new(ClassPolicy::new(depth, slow_inline_ns)));
        let key = Self::lane_of(request.file, class);
        let lane = &mut self.lanes[key];
        // The requests that went straight since the lane was granted them
        // (the lane is granted anew below).
        policy.went_straight(lane.went());
        lane.count_went(&mut self.counts);
        let timed = sampled || policy.times_every_request();
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
        // Exploration epochs time every request.
        let timed = timed || decision.epoch != 0;
        match decision.path {
            Path::Inline => {
                self.counts.inline += 1;
                let start = if timed && !clock_read {
                    self.time.now()
                } else {
                    now
                };
                let gap = start.saturating_sub(self.last_return_ns).min(GAP_CAP_NS);
                let outcome = self.inline.queue(request);
                let end = if timed || self.untimed_left == 1 {
                    let end = self.time.now();
                    self.last_return_ns = end;
                    end
                } else {
                    now
                };
                if let QueueOutcome::Completed(completion) = &outcome
                    && timed
                    && completion.result >= 0
                    && lane.async_out == 0
                {
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
                Self::grant(lane, policy);
                match outcome {
                    QueueOutcome::Completed(completion) => self.deliver(completion),
                    other => other,
                }
            }
            Path::Async => {
                self.counts.asynchronous += 1;
                Self::grant(lane, policy);
                let twin = if timed { route.timed_handle } else { lane.twin };
                let twin = (usize::from(lane.backend), twin);
                let now = if timed && !clock_read {
                    self.time.now()
                } else {
                    now
                };
                self.queue_async(
                    request,
                    twin,
                    key,
                    class,
                    timed.then_some((decision.epoch, now)),
                )
            }
        }
    }

    /// Tells `lane` how many of its class's next requests may follow the
    /// choice without asking `policy`.
    #[inline]
    fn grant(lane: &mut Lane, policy: &ClassPolicy) {
        let (path, allowed) = policy.straight_allowance();
        lane.asynchronous = path == Path::Async;
        lane.granted = allowed;
        (lane.inline_left, lane.async_left) = if lane.asynchronous {
            (0, allowed)
        } else {
            (allowed, 0)
        };
    }

    fn route_of(&self, handle: FileHandle) -> Option<&FileRoute> {
        self.routes.get(handle.index()).and_then(Option::as_ref)
    }
}

/// The policy of `file`'s `class`, if it has one.
#[inline]
fn policy_in(
    routes: &mut [Option<FileRoute>],
    file: FileHandle,
    class: usize,
) -> Option<&mut ClassPolicy> {
    let route = routes.get_mut(file.index())?.as_mut()?;
    route.classes[class].as_deref_mut()
}

impl<I: Engine> Engine for AdaptiveEngine<I> {
    fn kind(&self) -> EngineKind {
        EngineKind::Adaptive
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        let (backend, twin, timed_twin) = match self.add_twins(&file, &path) {
            Ok(added) => added,
            // The twins, if any, are closed; the caller's file goes back.
            Err(reason) => return Err(Error::refusing(file, path, reason)),
        };
        let handle = match self.inline.add_file(file, path) {
            Ok(handle) => handle,
            Err(error) => {
                let _ = self.backends[backend].engine.remove_file(twin);
                let _ = self.backends[backend].engine.remove_file(timed_twin);
                return Err(error);
            }
        };
        let of = |timed| {
            Some(TwinOf {
                caller: handle,
                timed,
            })
        };
        self.set_twin(backend, twin, of(false));
        self.set_twin(backend, timed_twin, of(true));
        if self.routes.len() <= handle.index() {
            self.routes.resize_with(handle.index() + 1, || None);
        }
        let lanes = Self::lanes_of(handle);
        if self.lanes.len() < lanes.end {
            self.lanes.resize(lanes.end, Lane::default());
        }
        self.lanes[lanes].fill(Lane {
            backend: backend as u8,
            twin,
            ..Lane::default()
        });
        self.routes[handle.index()] = Some(FileRoute {
            backend,
            handle: twin,
            timed_handle: timed_twin,
            classes: (0..CLASSES).map(|_| None).collect(),
        });
        Ok(handle)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        let route = self.route_of(handle).ok_or(Error::BadHandle(handle.0))?;
        let (backend, twin, timed_twin) = (route.backend, route.handle, route.timed_handle);
        let lanes = Self::lanes_of(handle);
        let busy = self.ready.iter().any(|held| held.completion.file == handle)
            || self.lanes[lanes.clone()]
                .iter()
                .any(|lane| lane.async_out > 0);
        if busy {
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight: self.in_flight(),
            });
        }
        self.backends[backend].engine.remove_file(twin)?;
        self.set_twin(backend, twin, None);
        // The timed twin goes too; if it cannot, the file is still removed
        // here, and that copy of the descriptor stays with the engine.
        if self.backends[backend]
            .engine
            .remove_file(timed_twin)
            .is_ok()
        {
            self.set_twin(backend, timed_twin, None);
        }
        self.routes[handle.index()] = None;
        self.lanes[lanes].fill(Lane::default());
        self.inline.remove_file(handle)
    }

    #[inline(always)]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        // Requests that follow their class's choice go straight, but one in
        // `TIMED_EVERY`, which is timed (with the end of the one before, for
        // its gap). This is the path of a page-cache hit (about 2 us) with
        // nothing else in flight, and it is inlined into the caller, so that
        // the inline engine's completion is handed straight up: the engine's
        // own instructions on each request (class, policy, clock, record)
        // were 4-5% of a page-cache hit before it existed.
        if self.goes_straight_inline(&request) {
            return self.inline.queue(request);
        }
        self.queue_other(request)
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
        if self.ready.is_empty() {
            // Nothing held: what the asynchronous engine has, waiting as asked.
            return self.reap_async(min, max, out);
        }
        // Oldest first, as near as the engine knows: the held completions
        // whose older asynchronous requests are all back; then what the
        // asynchronous engine has ready, without waiting (older than the
        // other held ones); then those. A caller reaping one at a time is
        // served the asynchronous completions it waits for (it may reap
        // only when full), and a held completion does not wait behind
        // asynchronous requests queued after it: while an exploration epoch
        // sent 64 requests to io_uring at depth 16, held ones waited for all
        // of them, and 10% of page-cache hits on tmpfs took 15 times longer.
        let mut got = self.pop_held(max, true, out);
        if got < max {
            got += self.reap_async(0, max - got, out)?;
        }
        got += self.pop_held(max - got, false, out);
        if got < min.min(max) && self.async_in_flight > 0 {
            got += self.reap_async(min - got, max - got, out)?;
        }
        Ok(got)
    }

    fn in_flight(&self) -> usize {
        self.ready.len() + self.async_in_flight
    }

    fn held(&self) -> usize {
        // Those whose older asynchronous requests are back: a reap hands
        // them over first (they are a prefix: each notes the requests handed
        // over before it, which only grows).
        self.ready
            .partition_point(|held| held.after_async <= self.async_reaped)
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
        let mut counts = self.counts;
        for lane in &self.lanes {
            lane.count_went(&mut counts);
        }
        EngineCounters {
            paths: Some(counts),
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
    let time = Time::Virtual {
        ns: clock,
        reads: std::sync::Arc::default(),
    };
    let engine = AdaptiveEngine::with_engines(inline, backends, config, time);
    let forced = engine.route_override.clone();
    (engine, forced)
}

#[cfg(test)]
mod tests;
