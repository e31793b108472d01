//! `adaptive`: each request runs inline (a `pread`/`pwrite` in the caller)
//! or goes to an asynchronous engine (io_uring where the kernel allows it,
//! and libaio for the `O_DIRECT` files it will write past their end, which
//! io_uring hands to a kernel worker one at a time ([`appends`]), and from
//! the first of them on for every `O_DIRECT` file, so that a reap has one
//! engine to wait on for them ([`files`]); else libaio for `O_DIRECT` files
//! and the worker pool for the others), whichever has
//! cost less lately for requests like it. No option tunes it.
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
//! ([`Lane`]): inline, done inside [`Engine::queue`] with no clock read;
//! asynchronous, with no clock read, no slot and nothing recorded. One
//! request of a class in [`TIMED_EVERY`] is timed, and asks the class's
//! policy where to go. A timed asynchronous request goes marked
//! ([`Marks::TIMED`]), its `user_data` the index of the engine's record of
//! it; the mark comes back on its completion, which then gets the caller's
//! tag back. The others keep the caller's `user_data`, and every request its
//! file's handle: the engines inside hold the caller's file as an alias at
//! the caller's handle ([`alias`](crate::engine::alias)), so a completion of
//! a settled class comes back as it is, and a file costs one descriptor (on
//! the emulated device too: the engine makes the caller's file the device's
//! once, and tells the aliases whether it was `O_DIRECT`, which the device
//! clears). A timed
//! inline request ends at the caller's next call, which reads the clock
//! once more: its price is its time in the call plus the caller's own time
//! after it.
//!
//! A file the caller lets the engine choose the caching of
//! ([`Caching::Auto`]) has its writes sent uncached once they stream past
//! what one file should leave dirty, by a rule over their offsets, not by
//! price: a cached write's cost comes later, at writeback ([`caching`]).
//! Its reads stay cached; once they stream, a helper thread reads ahead of
//! them, so that the page cache's work runs beside the reader's copy
//! ([`readahead`]).
//!
//! Every run reports how many requests took each path, how many were sent
//! the other way to explore, how often a class changed its choice, and how
//! many went uncached by the engine's choice ([`PathCounts`](super::PathCounts)).

mod appends;
mod asynchronous;
mod backend;
mod caching;
mod files;
mod open;
mod path;
mod policy;
mod priors;
mod readahead;
mod run;
mod sockets;
mod state;

#[cfg(test)]
pub(crate) use caching::{Room as AutoRoom, pretend_dirty_pages};
pub(crate) use open::open;
#[cfg(test)]
pub(crate) use open::open_without_io_uring;

#[cfg(test)]
pub(crate) use state::ForcedPath;

use std::fs::File;
use std::path::PathBuf;

use crate::Error;
#[cfg(test)]
use crate::engine::api::EngineConfig;
use crate::engine::api::{Engine, EngineCounters, EngineKind, QueueOutcome};
use crate::engine::inline::InlinePath;
use crate::file::{Caching, FileHandle};
use crate::request::{Completion, Marks, Op, Request};
use backend::{AsyncBackend, Slot};
#[cfg(not(test))]
use path::Path;
use policy::{ClassPolicy, GAP_CAP_NS, Tally};
use priors::ClassKind;
#[cfg(test)]
use state::Time;
use state::{
    AdaptiveEngine, Appends, CLASSES, Held, InlineSample, Lane, SIZE_CLASSES, TIMED_EVERY,
};

impl<I: InlinePath, B: AsyncBackend> AdaptiveEngine<I, B> {
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
            Op::Fsync
            | Op::Fdatasync
            | Op::Trim
            | Op::Allocate
            | Op::AllocateKeepSize
            | Op::Truncate => 2,
            Op::Recv => 3,
            Op::Send => 4,
        };
        // The power of two at or below the length (0 and 1 alike): one bit
        // scan, where the one at or above took twice the instructions.
        let size = (u64::BITS - 1 - (len as u64 | 1).leading_zeros()) as usize;
        operation * SIZE_CLASSES + size.min(SIZE_CLASSES - 1)
    }

    /// For a file whose caching the engine chooses ([`caching`]): whether
    /// this write goes uncached, by its file's write stream; a read is noted
    /// (what went uncached may be read again), stays cached, and may ask the
    /// helper to read ahead of its stream ([`readahead`]).
    #[inline(never)]
    fn choose_caching(&mut self, request: &mut Request) {
        let Some(route) = self
            .routes
            .get_mut(request.file.index())
            .and_then(Option::as_mut)
        else {
            return;
        };
        let Some(auto) = route.auto.as_mut() else {
            return;
        };
        let len = request.len() as u64;
        match request.op {
            Op::Write => request.marks.set(
                Marks::UNCACHED,
                auto.write(request.offset, len, caching::machine_dirty_state),
            ),
            Op::Read => {
                auto.read(request.offset, len);
                if let Some(reads) = route.reads.as_mut()
                    && let Some(step) = reads.read(request.offset, len)
                {
                    let end = step.end();
                    if self.readahead.in_page_cache(&step) || self.readahead.ask(step) {
                        reads.asked(end);
                    }
                }
            }
            _ => {}
        }
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

    /// Whether nothing is out, held or waiting for its price, and no file
    /// has its caching chosen by the engine (and, in tests, no path is
    /// forced): an inline request that goes straight completes at once.
    #[inline(always)]
    fn calm(&self) -> bool {
        #[cfg(test)]
        if self.route_override.get().is_some() {
            return false;
        }
        self.pending.is_none()
            && self.ready.is_empty()
            && self.async_queued == self.async_reaped
            && self.auto_files == 0
    }

    /// Hands a completion over now, or holds it for the next reap while
    /// asynchronous requests are outstanding or completions are held.
    #[inline]
    fn deliver(&mut self, completion: Completion) -> QueueOutcome {
        if self.async_in_flight() == 0 && self.ready.is_empty() {
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

    /// [`Engine::queue`]: a request of a class that follows its choice goes
    /// straight along it, the others ask their class's policy.
    #[inline(always)]
    fn offer(&mut self, request: Request) -> QueueOutcome {
        let class = Self::class_of(&request);
        let key = Self::lane_of(request.file, class);
        // The lanes of receives and sends are never granted requests.
        if let Some(lane) = self.lanes.get(key) {
            // Nothing out, held or waiting for its price, no file whose
            // caching the engine chooses: a request of a class that goes
            // straight inline completes here (every page-cache hit of a
            // settled class).
            if lane.inline_left > 0 && self.calm() {
                return QueueOutcome::Completed(self.run_straight_inline(request, key));
            }
            // One that goes straight asynchronous, with nothing to end or
            // choose first, is handed over as it came: no path of this call
            // borrows its memory, so it moves once, into the engine's slot.
            if lane.async_left > 0
                && self.pending.is_none()
                && self.auto_files == 0
                && !self.forced()
                && self.ready.len() + self.async_in_flight() < self.depth as usize
            {
                self.lanes[key].async_left -= 1;
                return self.queue_async(request, key);
            }
        }
        self.offer_other(request, class, key)
    }

    /// Runs `request` inline as its lane's grant allows (one of them spent).
    #[inline(always)]
    fn run_straight_inline(&mut self, mut request: Request, key: usize) -> Completion {
        let lane = &mut self.lanes[key];
        lane.inline_left -= 1;
        self.inline_spent_ns += u64::from(lane.inline_ns);
        let result = self.inline.run_in_place(&mut request);
        request.complete(result)
    }

    /// Whether a test forces the paths.
    #[inline(always)]
    fn forced(&self) -> bool {
        #[cfg(test)]
        return self.route_override.get().is_some();
        #[cfg(not(test))]
        false
    }

    /// [`Engine::queue`] for what does not go straight at once: a timed
    /// request, one behind a timed inline one or held completions, one whose
    /// caching the engine chooses, a receive or send, and one of a full
    /// engine.
    #[inline(never)]
    fn offer_other(&mut self, mut request: Request, class: usize, key: usize) -> QueueOutcome {
        if self.pending.is_some() {
            self.end_inline_sample();
        }
        if self.ready.len() + self.async_in_flight() >= self.depth as usize {
            // Full. While completions are held, new inline ones join them, so
            // that a caller that reaps only when full comes back for them.
            return QueueOutcome::Busy(request);
        }
        if self.auto_files > 0 {
            self.choose_caching(&mut request);
            self.counts.uncached += u64::from(request.marks.any(Marks::UNCACHED));
        }
        if request.op.is_socket() {
            return self.offer_socket(request, key);
        }
        if !self.forced()
            && let Some(lane) = self.lanes.get_mut(key)
        {
            if lane.async_left > 0 {
                lane.async_left -= 1;
                return self.queue_async(request, key);
            }
            if lane.inline_left > 0 {
                let completion = self.run_straight_inline(request, key);
                return self.deliver(completion);
            }
        }
        self.queue_routed(request, class)
    }

    /// [`Engine::queue`] for a receive or send: inline (`MSG_DONTWAIT`)
    /// while trying finds data waiting (or room to send), asynchronous
    /// otherwise ([`sockets`]). On a stream nothing is tried while
    /// asynchronous requests are out, so that its bytes come back in the
    /// order they were asked for; a datagram socket's receives have no order
    /// among themselves (several outstanding in io_uring complete in any
    /// order), so they are tried beside asynchronous ones, and complete at
    /// once.
    #[inline(never)]
    fn offer_socket(&mut self, mut request: Request, key: usize) -> QueueOutcome {
        let quiet = self.async_in_flight() == 0;
        let Some(route) = self
            .routes
            .get_mut(request.file.index())
            .and_then(Option::as_mut)
            .filter(|_| key < self.lanes.len())
        else {
            return QueueOutcome::Completed(request.complete(-i64::from(libc::EBADF)));
        };
        let Some(socket) = route.socket.as_mut() else {
            // Not a socket: the kernel says so (ENOTSOCK), as it does to
            // the other engines.
            self.counts.asynchronous += 1;
            return self.queue_async(request, key);
        };
        let datagram = socket.datagram;
        let lane = socket.lane(request.op);
        if (datagram || quiet) && lane.try_now() {
            let linger = if quiet && datagram && self.ready.is_empty() {
                sockets::LINGER_NS
            } else {
                0
            };
            let tried = self.inline.try_socket_now(&mut request, linger);
            // Interrupted, it found nothing either: it waits asynchronous.
            let found = tried.is_some_and(|result| {
                result != -i64::from(libc::EAGAIN) && result != -i64::from(libc::EINTR)
            });
            lane.record(found);
            if let (true, Some(result)) = (found, tried) {
                if self.sent_in_part(&request, result) {
                    return self.send_rest_async(request, key, result);
                }
                self.counts.inline += 1;
                let completion = request.complete(result);
                return if datagram {
                    QueueOutcome::Completed(completion)
                } else {
                    self.deliver(completion)
                };
            }
        }
        self.counts.asynchronous += 1;
        self.queue_async(request, key)
    }

    /// [`Engine::queue`] for a request that is timed: it explores, starts a
    /// class, or is its class's one in [`TIMED_EVERY`]. Asks the class's
    /// policy where it goes, times it, and tells the class's lane how many
    /// of the next requests may go straight.
    #[inline(never)]
    fn queue_routed(&mut self, mut request: Request, class: usize) -> QueueOutcome {
        let file = request.file;
        let tally = self.tally();
        let Some(route) = self.routes.get_mut(file.index()).and_then(Option::as_mut) else {
            return QueueOutcome::Completed(request.complete(-i64::from(libc::EBADF)));
        };
        let (depth, slow_inline_ns) = (self.depth, self.slow_inline_ns);
        let kind = route.kind.map(|file| ClassKind {
            file,
            class: class as u16,
        });
        let priors = &self.priors;
        let policy = route.classes[class].get_or_insert_with(|| {
            let mut policy = Box::new(ClassPolicy::new(depth, slow_inline_ns));
            match kind.and_then(|kind| priors.get(&kind)) {
                Some(prior) => policy.start_from(&prior),
                // O_DIRECT requests with others to overlap are what a device
                // queue is for: such a class starts asynchronous (inline, a
                // 500-read job at depth 16 paid its first window at one read
                // at a time, 7 times the asynchronous price).
                None if depth > 1 && kind.is_some_and(|kind| kind.file.direct) => {
                    policy.start_on(Path::Async);
                }
                None => {}
            }
            policy
        });
        let key = Self::lane_of(file, class);
        let lane = &mut self.lanes[key];
        // The requests that went straight since the lane was granted them
        // (the lane is granted anew below).
        policy.went_straight(lane.went());
        lane.count_went(&mut self.counts);
        let now = self.time.now();
        // An exploration that has not ended in the interval between
        // explorations belongs to a class that stopped sending requests.
        let may_explore = self.explorer.is_none_or(|(lane, since)| {
            lane == key || now.saturating_sub(since) > policy::EXPLORE_INTERVAL_NS
        });
        let decision = policy.route(now, tally, may_explore);
        if policy.is_exploring() {
            if self.explorer.is_none_or(|(lane, _)| lane != key) {
                self.explorer = Some((key, now));
            }
        } else if self.explorer.is_some_and(|(lane, _)| lane == key) {
            self.explorer = None;
        }
        #[cfg(test)]
        let decision = policy::Route {
            path: self.route_override.get().unwrap_or(decision.path),
            ..decision
        };
        self.counts.switches += u64::from(decision.switched);
        self.counts.learning_ns += policy.take_learning_ns();
        if let Some(kind) = kind
            && let Some(learned) = policy.take_learned()
        {
            self.priors.put(kind, learned);
        }
        self.counts.explored += u64::from(decision.epoch != 0);
        Self::grant(lane, policy);
        match decision.path {
            Path::Inline => {
                self.counts.inline += 1;
                let price = policy.inline_price_ns();
                // Beside asynchronous requests of its class it measures the
                // contention with them.
                let mark = lane.async_mark;
                let mut alone = mark <= self.async_reaped;
                let mut start = now;
                if !alone && decision.epoch != 0 {
                    // Those that are done contend with nothing.
                    self.hold_finished_async();
                    alone = mark <= self.async_reaped;
                    start = self.time.now();
                }
                let result = self.inline.run_in_place(&mut request);
                if result >= 0 && alone {
                    // Its time is added to the inline time once priced.
                    self.pending = Some(InlineSample {
                        file,
                        class,
                        epoch: decision.epoch,
                        start,
                        end: self.time.now(),
                    });
                } else {
                    self.inline_spent_ns += u64::from(price);
                }
                self.deliver(request.complete(result))
            }
            Path::Async => {
                self.counts.asynchronous += 1;
                self.queue_timed(request, key, Slot::timed(decision.epoch, now, class))
            }
        }
    }

    /// Takes the asynchronous completions that are already there into the
    /// held ones (handed over at the next reap, as inline completions held
    /// behind asynchronous requests are), so that an inline request explored
    /// beside them is timed: done, they contend with nothing. Page-cache hits
    /// through io_uring at depth 32 complete inside the submit; left in the
    /// ring until the caller's queue filled, they kept every inline request
    /// of a look-back untimed, the epoch was priced by its time per request
    /// with the holding in it (1.1-1.3 us against 0.9 inline), and the class
    /// stayed on io_uring at 0.82 of psync's IOPS in 3 of 5 rounds.
    #[cold]
    fn hold_finished_async(&mut self) {
        let mut done = Vec::new();
        // A failure shows again at the caller's next reap; what came before
        // it is held all the same.
        let _ = self.reap_async(0, usize::MAX, &mut done);
        let after_async = self.async_queued;
        self.ready.extend(done.into_iter().map(|completion| Held {
            completion,
            after_async,
        }));
    }

    /// Prices the timed inline request waiting for this call: its time in
    /// the call plus the caller's own time after it, up to now.
    #[inline(never)]
    fn end_inline_sample(&mut self) {
        let Some(sample) = self.pending.take() else {
            return;
        };
        let now = self.time.now();
        let gap = now.saturating_sub(sample.end).min(GAP_CAP_NS);
        let cost = sample.end.saturating_sub(sample.start) + gap;
        self.inline_spent_ns += cost;
        #[cfg(test)]
        if sample.epoch != 0 {
            self.explored_inline_samples
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.record(
            Path::Inline,
            (sample.file, sample.class),
            sample.epoch,
            (sample.start, cost),
            now,
        );
    }

    /// Records what a timed request of `file`'s `class` cost on `path`
    /// (`(started, ns)`, see [`ClassPolicy::record`]), and grants its lane
    /// anew: what it measured may end the straight requests (a slow one has
    /// every request timed until its window ends).
    fn record(
        &mut self,
        path: Path,
        (file, class): (FileHandle, usize),
        epoch: u32,
        (started, ns): (u64, u64),
        now: u64,
    ) {
        let tally = self.tally();
        let Some(route) = self.routes.get_mut(file.index()).and_then(Option::as_mut) else {
            return;
        };
        let kind = route.kind;
        let Some(policy) = route.classes[class].as_deref_mut() else {
            return;
        };
        policy.record(path, epoch, started, ns, now, tally);
        if policy.take_refuted()
            && let Some(file) = kind
        {
            self.priors.forget(&ClassKind {
                file,
                class: class as u16,
            });
        }
        if let Some(lane) = self.lanes.get_mut(Self::lane_of(file, class)) {
            policy.went_straight(lane.went());
            lane.count_went(&mut self.counts);
            Self::grant(lane, policy);
        }
    }

    /// Tells `lane` how many of its class's next requests may follow the
    /// choice without asking `policy`: what the policy allows, and at most up
    /// to the class's next timed request.
    #[inline]
    fn grant(lane: &mut Lane, policy: &ClassPolicy) {
        let (path, allowed) = policy.straight_allowance();
        let allowed = allowed.min(TIMED_EVERY - 1);
        lane.asynchronous = path == Path::Async;
        lane.granted = allowed;
        lane.inline_ns = policy.inline_price_ns();
        (lane.inline_left, lane.async_left) = if lane.asynchronous {
            (0, allowed)
        } else {
            (allowed, 0)
        };
    }

    /// [`Engine::reap`] when completions are held, a timed request waits for
    /// its end, or two asynchronous engines may hold requests.
    #[inline(never)]
    fn reap_other(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        if self.pending.is_some() {
            self.end_inline_sample();
        }
        if self.ready.is_empty() {
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
        if got < min.min(max) && self.async_in_flight() > 0 {
            got += self.reap_async(min - got, max - got, out)?;
        }
        Ok(got)
    }

    /// [`Engine::commit`] with completions held or two asynchronous engines.
    #[inline(never)]
    fn commit_each(&mut self) -> Result<usize, Error> {
        let mut committed = 0;
        for backend in &mut self.backends {
            // The first commit reaches every engine inside, with requests
            // or not: it binds their rings to this thread.
            if backend.uncommitted > 0 || !backend.bound || backend.in_flight() > 0 {
                committed += backend.engine.commit()?;
                backend.uncommitted = 0;
                backend.bound = true;
            }
        }
        let held = std::mem::take(&mut self.held_since_commit);
        Ok(committed + held)
    }

    /// What the engine has done so far, which a class's windows are read
    /// against.
    fn tally(&self) -> Tally {
        Tally {
            reaped: self.async_reaped,
            inline_ns: self.inline_spent_ns,
        }
    }

    /// Requests the asynchronous engines hold.
    #[inline(always)]
    fn async_in_flight(&self) -> usize {
        (self.async_queued - self.async_reaped) as usize
    }
}

impl<I: InlinePath, B: AsyncBackend> Engine for AdaptiveEngine<I, B> {
    fn kind(&self) -> EngineKind {
        EngineKind::Adaptive
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        self.add_caller_file(file, path)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.remove_caller_file(handle)
    }

    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        self.set_caller_caching(handle, caching)
    }

    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        self.set_caller_atomic_writes(handle, atomic)
    }

    #[inline(always)]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.offer(request)
    }

    #[inline]
    fn commit(&mut self) -> Result<usize, Error> {
        if self.held_since_commit == 0
            && let [only] = self.backends.as_mut_slice()
        {
            // One engine inside and nothing held since the last commit (every
            // commit of a settled asynchronous class): its answer is the
            // whole answer, asked with requests or not, as bare io_uring is.
            // Marked committed before it answers, so that its call is the
            // last: should it fail, what it still holds is at most waited
            // for, and each engine waits only for what its kernel has.
            only.uncommitted = 0;
            only.bound = true;
            return only.engine.commit();
        }
        self.commit_each()
    }

    #[inline(always)]
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        if self.pending.is_none() && self.ready.is_empty() && self.backends.len() == 1 {
            // Nothing held, one engine inside (every reap of a settled
            // asynchronous class): what it has, waiting as asked. (An engine
            // waits only for what was committed to it.)
            return self.reap_from(0, min, max, out);
        }
        self.reap_other(min, max, out)
    }

    #[inline]
    fn in_flight(&self) -> usize {
        self.ready.len() + self.async_in_flight()
    }

    #[inline]
    fn held(&self) -> usize {
        if self.ready.is_empty() {
            return 0;
        }
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
                    b.in_flight(),
                    b.uncommitted,
                    b.engine.state()
                )
            })
            .collect();
        format!(
            "adaptive: {} inline completions held, {} asynchronous; {}",
            self.ready.len(),
            self.async_in_flight(),
            backends.join("; ")
        )
    }

    fn description(&self) -> String {
        let asynchronous: Vec<String> = self
            .backends
            .iter()
            .map(|b| b.engine.description())
            .collect();
        let asynchronous = match (asynchronous.as_slice(), &self.appends) {
            ([others, appends], Appends::Backend(_)) => {
                format!("{others}, O_DIRECT (one written past its end) {appends}")
            }
            ([buffered, direct], _) => format!("{buffered}, O_DIRECT {direct}"),
            (all, _) => all.join(", "),
        };
        format!(
            "adaptive (inline {}, async {asynchronous})",
            self.inline.description()
        )
    }

    fn counters(&self) -> EngineCounters {
        let mut counts = self.counts;
        counts.read_ahead = self.readahead.asked;
        for lane in &self.lanes {
            lane.count_went(&mut counts);
        }
        EngineCounters {
            paths: Some(counts),
            ..self
                .backends
                .iter()
                .fold(self.inline.counters() + self.retry.counters(), |sum, b| {
                    sum + b.engine.counters()
                })
        }
    }
}

#[cfg(test)]
pub(crate) use path::Path;

/// Tests: the adaptive engine over the given engines, on a clock the test
/// moves, with the handle that forces its paths.
#[cfg(test)]
pub(crate) fn with_engines_for_tests<I: InlinePath>(
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
