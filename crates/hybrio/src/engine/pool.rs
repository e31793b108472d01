//! `pool`: worker threads doing `pread(2)`/`pwrite(2)`, the user-space
//! counterpart of the kernel's io-wq, PostgreSQL 18's `io_method=worker` and
//! QEMU's `aio=threads`.
//!
//! [`commit`](Engine::commit) puts every queued request on one shared queue
//! and wakes workers; each worker takes one request at a time, makes the
//! blocking system call, and posts the completion to a list that
//! [`reap`](Engine::reap) collects. The design follows what the pools above
//! learnt the hard way:
//!
//! * **It sizes itself.** PostgreSQL users' first complaint is `io_workers`:
//!   too few and I/O silently serialises, too many and wake-ups are wasted
//!   (PostgreSQL 19 made its pool self-sizing). This one starts with one
//!   worker, adds workers at commit when new requests find no idle one (up to
//!   the depth, at most 64: more workers than requests in flight could never
//!   be busy), and lets a worker that sat idle for a second exit. Worker 0
//!   never does, so a request always has a thread to run on.
//! * **One wake-up per request, lowest-numbered idle worker first.** Idle
//!   workers are bits in one `AtomicU64`; commit claims the lowest set bit
//!   with a compare-and-swap and unparks that worker only, so no herd wakes
//!   up to fight over one request, and work concentrates on a few hot threads
//!   while the rest age out. Thomas Munro found this the best routing for
//!   PostgreSQL's workers in both mean and spread of latency. Waking a
//!   thread whose vCPU is idle costs the waker ~12 us here (a futex wake
//!   and an IPI), which a caller reaping and resubmitting one request at a
//!   time would pay per request; so while a woken worker is still on its way
//!   to the queue, commit leaves the next wake-ups to it, and each woken
//!   worker wakes up to [`FAN_OUT`](workers::FAN_OUT) more before starting its own request (as
//!   PostgreSQL's workers fan out). Still one wake-up per request, lowest
//!   idle worker first; it only moves off the submitting thread.
//! * **One worker lingers.** Parking and unparking a thread costs a futex
//!   round trip and, on an idle vCPU here, a ~10 us wake-up: more than a
//!   cached read. So the worker that just ran out of work spins for up to
//!   [`LINGER`](workers::LINGER) before parking, and commit hands the next request straight to
//!   it, without a system call (libuv's threadpool linger took a serial round
//!   trip from 67k to 593k/s). The reaper does the same on its side:
//!   `reap(min > 0)` spins on the completion count for up to [`REAP_SPIN`]
//!   before it blocks. Only one worker lingers at a time, and each side
//!   keeps the odds of its recent spins paying off ([`odds_after`]): below
//!   5/8 it stops spinning but for one probe in [`PROBE_EVERY`](workers::PROBE_EVERY) chances, so
//!   a workload where spinning does not pay (O_DIRECT reads of 50 us, or a
//!   caller that thinks between requests) costs almost nothing, and one
//!   where it starts to pay again is noticed. A depth-1 round trip on cached
//!   data settles into both sides spinning (no system call but the `pread`);
//!   a deep O_DIRECT queue mostly into sleeping (QEMU's adaptive polling
//!   follows the same idea).
//! * **Completions are posted in batches.** A worker that runs quick requests
//!   back to back (cached reads) keeps their completions and publishes them
//!   with one lock and at most one wake-up of the reaper, instead of paying a
//!   barrier per completion (the io_uring CQ commit cost, seeds/004). It
//!   never sits on a finished completion while running a slow request: it
//!   posts as soon as a request took longer than [`HOLD`], the batch is that
//!   old, or the queue is empty. The reaper is woken only once enough
//!   completions for its `min` are there.
//! * **Submission and completion share nothing.** The request queue and the
//!   completion list have separate locks on separate cache lines (the
//!   io-wq queue-lock contention of seeds/000); reaping first reads an atomic
//!   count and takes no lock at all when it is zero, and it takes every posted
//!   completion in one swap, so reaps of one at a time (fio's default) are
//!   served from the engine's own list.
//!
//! What it costs, measured on this project's 2-vCPU VM (release build, the
//! benchmark alternating engines, medians of 50-60 pairs): a depth-1 cached
//! 4 KiB random read takes 1.6x psync's round trip (3.9 vs 2.5 us), with
//! two threads spinning; 32 O_DIRECT 4 KiB random reads in flight reach
//! 0.86x io_uring's IOPS. Each request there costs two context switches and
//! a cross-vCPU wake-up more than io_uring's, and the virtio disk completes
//! in bursts, so the requests of a burst queue up behind those wake-ups
//! (~100 us from commit to a worker starting, ~85 us from posting to reap).
//!
//! Like QEMU's `aio=threads`, the pool drives the emulated device with real
//! threads blocking: a worker moves the data, then sleeps until the request's
//! completion time, fixed at commit.
//!
//! A worker applies the [retry rule](super::retry) around its call: a short
//! transfer is sent again for the rest and a "try again" error retried by
//! the worker that ran it, so the request never goes back through the
//! queue (on the emulated device, each send takes the device's latency).
//!
//! A request a worker has taken cannot be cancelled: dropping the engine
//! waits for every committed request (a read that never ends, e.g. from a
//! silent pipe, keeps the drop waiting), then stops and joins the workers.
//! Requests queued but not committed are not performed. A worker that panics
//! loses its request; [`reap`](Engine::reap) then fails instead of waiting
//! for it.

mod workers;

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::alias::SharesFiles;
use super::api::{Engine, EngineConfig, EngineCounters, EngineKind, PREALLOCATED, QueueOutcome};
use super::inject::{self, Faults, FaultsFirst};
use crate::Error;
use crate::device::EmulatedDevice;
use crate::file::{Caching, FileHandle, FileTable};
use crate::request::{Completion, Request};
use crate::sys::Readiness;
use workers::{
    HOLD, IDLE_TIMEOUT, Job, MAX_WORKERS, ODDS_ONE, REAP_SPIN, Shared, WORTH_SPINNING, lock,
    odds_after, spin_now, spin_until, worker,
};

const ENGINE: &str = "pool";

/// The pool engine. See the [module documentation](self).
pub(crate) struct PoolEngine {
    shared: Arc<Shared>,
    /// Worker threads by slot; an exited worker's handle stays until its
    /// slot is reused (or the engine is dropped).
    workers: Vec<Option<JoinHandle<()>>>,
    /// Most workers: the depth, at most [`MAX_WORKERS`].
    max_workers: usize,
    depth: usize,
    files: FileTable,
    device: Option<EmulatedDevice>,
    /// Queued, not committed.
    pending: Vec<Job>,
    /// Committed and not yet reaped (posted or not).
    committed: usize,
    /// Completions taken from the workers, not yet handed out.
    ready: VecDeque<Completion>,
    /// An empty list (with capacity) to swap with the workers' one.
    spare: Vec<Completion>,
    /// How often spinning for completions paid off lately ([`odds_after`]).
    reap_odds: u32,
    /// Chances to spin for completions skipped ([`spin_now`]).
    reap_skipped: u32,
    /// `EAGAIN` is the caller's answer, not one the workers retry.
    nowait: bool,
    /// Injected faults ([`inject`](super::inject)), if the caller asked:
    /// drawn here, applied by the workers.
    faults: Option<Box<Faults>>,
}

impl std::fmt::Debug for PoolEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolEngine")
            .field("workers", &self.workers())
            .field("max_workers", &self.max_workers)
            .field("depth", &self.depth)
            .field("pending", &self.pending.len())
            .field("committed", &self.committed)
            .finish_non_exhaustive()
    }
}

impl PoolEngine {
    /// [`Engine::reap`] of the completions the workers posted.
    fn reap_posted(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        if self.shared.failed.load(Ordering::Relaxed) {
            return Err(worker_died());
        }
        let want = min.min(max).min(self.committed);
        let mut got = self.hand_out(max, out);
        if got < max && self.shared.ready.load(Ordering::Acquire) > 0 {
            self.collect();
            got += self.hand_out(max - got, out);
        }
        while got < want {
            if self.shared.failed.load(Ordering::Relaxed) {
                return Err(worker_died());
            }
            if self.spin_for_completions() {
                self.collect();
            } else {
                self.wait_for(want - got)?;
            }
            got += self.hand_out(max - got, out);
        }
        Ok(got)
    }

    /// A pool for `config.depth` requests in flight, with one worker to start.
    /// With `config.completion_latency`, its files are an emulated device.
    pub(crate) fn new(config: &EngineConfig) -> Result<PoolEngine, Error> {
        Self::with_timing(config, IDLE_TIMEOUT, HOLD)
    }

    /// A pool whose workers exit after `idle_timeout` idle and hold
    /// completions of requests quicker than `hold`.
    fn with_timing(
        config: &EngineConfig,
        idle_timeout: Duration,
        hold: Duration,
    ) -> Result<Self, Error> {
        let depth = config.depth.max(1) as usize;
        let faults = Faults::of(config);
        let effects = faults.as_ref().map(|faults| faults.effects());
        let mut engine = PoolEngine {
            shared: Arc::new(Shared::new(idle_timeout, hold, effects)),
            workers: (0..MAX_WORKERS).map(|_| None).collect(),
            max_workers: depth.min(MAX_WORKERS),
            depth,
            files: FileTable::new(),
            device: config.completion_latency.map(EmulatedDevice::new),
            pending: Vec::with_capacity(depth.min(PREALLOCATED)),
            committed: 0,
            ready: VecDeque::with_capacity(depth.min(PREALLOCATED)),
            spare: Vec::with_capacity(depth.min(PREALLOCATED)),
            reap_odds: ODDS_ONE,
            reap_skipped: 0,
            nowait: config.nowait,
            faults,
        };
        engine.spawn(0).map_err(|source| Error::Engine {
            engine: ENGINE,
            op: "spawn worker thread",
            source,
        })?;
        // Let the first worker get ready, so that the first commit finds it
        // rather than starting a second one.
        let started = Instant::now();
        while engine.shared.roster.idle.load(Ordering::SeqCst) & 1 == 0
            && started.elapsed() < Duration::from_millis(100)
        {
            thread::yield_now();
        }
        Ok(engine)
    }

    /// Workers alive now.
    fn workers(&self) -> usize {
        self.shared
            .roster
            .alive
            .load(Ordering::Relaxed)
            .count_ones() as usize
    }

    /// Starts worker `slot` (a free one).
    fn spawn(&mut self, slot: usize) -> io::Result<()> {
        let bit = 1u64 << slot;
        let alive = &self.shared.roster.alive;
        alive.fetch_or(bit, Ordering::SeqCst);
        let shared = Arc::clone(&self.shared);
        let spawned = thread::Builder::new()
            .name(format!("hybrio-pool-{slot}"))
            .spawn(move || worker(&shared, slot));
        match spawned {
            Ok(handle) => {
                self.workers[slot] = Some(handle);
                Ok(())
            }
            Err(e) => {
                alive.fetch_and(!bit, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// Starts up to `wanted` more workers, within the cap. A worker that
    /// cannot be started is not an error: the ones there are run the queue.
    fn grow(&mut self, wanted: usize) {
        for _ in 0..wanted {
            let alive = self.shared.roster.alive.load(Ordering::SeqCst);
            if alive.count_ones() as usize >= self.max_workers {
                return;
            }
            // Slots are taken lowest first, so with fewer than the cap
            // alive, the lowest free one is below the cap.
            let slot = (!alive).trailing_zeros() as usize;
            if let Some(exited) = self.workers[slot].take() {
                // It freed its slot as its last act: this returns at once.
                let _ = exited.join();
            }
            if self.spawn(slot).is_err() {
                return;
            }
        }
    }

    /// Moves every posted completion to `ready` with one lock.
    fn collect(&mut self) {
        {
            let mut done = lock(&self.shared.done);
            std::mem::swap(&mut done.list, &mut self.spare);
            self.shared.ready.store(0, Ordering::Release);
        }
        self.ready.extend(self.spare.drain(..));
    }

    /// Appends up to `max` collected completions to `out`; returns how many.
    fn hand_out(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        let n = max.min(self.ready.len());
        out.extend(self.ready.drain(..n));
        self.committed -= n;
        n
    }

    /// Spins briefly for a posted completion, unless spinning has stopped
    /// paying; returns whether one arrived.
    fn spin_for_completions(&mut self) -> bool {
        if self.reap_odds < WORTH_SPINNING {
            self.reap_skipped = self.reap_skipped.wrapping_add(1);
            if !spin_now(self.reap_odds, self.reap_skipped) {
                return false;
            }
        }
        let shared = &self.shared;
        let arrived = spin_until(REAP_SPIN, || {
            shared.ready.load(Ordering::Acquire) > 0 || shared.failed.load(Ordering::Relaxed)
        });
        self.reap_odds = odds_after(self.reap_odds, arrived);
        arrived
    }

    /// Blocks until `need` completions are posted, and collects them.
    fn wait_for(&mut self, need: usize) -> Result<(), Error> {
        {
            let mut done = lock(&self.shared.done);
            while done.list.len() < need {
                if self.shared.failed.load(Ordering::SeqCst) {
                    done.need = 0;
                    return Err(worker_died());
                }
                done.need = need;
                done = self
                    .shared
                    .done_ready
                    .wait(done)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            done.need = 0;
            std::mem::swap(&mut done.list, &mut self.spare);
            self.shared.ready.store(0, Ordering::Release);
        }
        self.ready.extend(self.spare.drain(..));
        Ok(())
    }
}

fn worker_died() -> Error {
    Error::Engine {
        engine: ENGINE,
        op: "worker thread",
        source: io::Error::other("a pool worker panicked; its request is lost"),
    }
}

impl FaultsFirst for PoolEngine {
    fn faults_mut(&mut self) -> Option<&mut Faults> {
        self.faults.as_deref_mut()
    }

    #[inline(always)]
    fn queue_plain(&mut self, request: Request) -> QueueOutcome {
        let entry = match request.entry_in(&self.files) {
            Ok(entry) => entry,
            Err(errno) => return QueueOutcome::Completed(request.complete(errno)),
        };
        if self.in_flight() >= self.depth {
            return QueueOutcome::Busy(request);
        }
        self.pending.push(Job {
            fd: entry.fd(),
            direct: entry.is_direct(),
            block_device: entry.is_block_device(),
            device: self.device,
            deadline: None,
            rw_flags: entry.rw_flags(request.op) | request.rw_flags(),
            nowait: self.nowait,
            request,
        });
        QueueOutcome::Queued
    }
}

impl Engine for PoolEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Pool
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        // Inserted first, so the entry records whether it was O_DIRECT
        // before the emulated device turns that off.
        let handle = if self.device.is_some() {
            EmulatedDevice::insert(&mut self.files, file, path)?
        } else {
            self.files.insert(file, path)
        };
        Ok(handle)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.files.remove_idle(handle, self.in_flight())
    }

    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        self.files
            .set_caching(handle, caching, self.device.is_some())
    }

    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        self.files
            .set_atomic_writes(handle, atomic, self.device.is_some())
    }

    #[inline]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.queue_faults_first(request)
    }

    fn commit(&mut self) -> Result<usize, Error> {
        let n = self.pending.len();
        if n == 0 {
            return Ok(0);
        }
        if let Some(device) = &self.device {
            // Submitted together, they complete together.
            let deadline = device.deadline();
            for job in &mut self.pending {
                job.deadline = Some(deadline);
            }
        }
        {
            let mut queue = lock(&self.shared.queue);
            queue.extend(self.pending.drain(..));
            self.shared.queued.store(queue.len(), Ordering::SeqCst);
        }
        self.committed += n;
        let mut unserved = n;
        // The lingering worker takes the first without a system call.
        if self
            .shared
            .roster
            .lingering
            .compare_exchange(true, false, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
        {
            unserved -= 1;
        }
        let unserved = (0..unserved)
            .filter(|_| !(self.shared.defer_wake() || self.shared.wake_lowest_idle()))
            .count();
        if unserved > 0 {
            // Requests wait with every worker busy: the pool grows. (Busy
            // workers would get to them, but only one request later each.)
            self.grow(unserved);
        }
        Ok(n)
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        if let Some(readiness) = self.shared.readiness.get() {
            // Cleared before the completions are collected: one posted
            // after this raises it again, so none is left unannounced.
            readiness.clear();
        }
        let reaped = self.reap_posted(min, max, out);
        if let Some(readiness) = self.shared.readiness.get()
            && (!self.ready.is_empty() || self.shared.ready.load(Ordering::Acquire) > 0)
        {
            // More than `max` were waiting: the rest still are.
            readiness.raise();
        }
        reaped
    }

    fn completion_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        // Made at the first call: an engine nobody waits on elsewhere pays
        // neither the descriptor nor a write a batch.
        if self.shared.readiness.get().is_none() {
            let readiness = Readiness::new().ok()?;
            // Made under the lock the workers post under: a batch posted
            // before it is in the list here, one after it sees it.
            let posted = {
                let done = lock(&self.shared.done);
                let _ = self.shared.readiness.set(readiness);
                !done.list.is_empty()
            };
            // Completions posted before it existed announced nothing.
            if posted || !self.ready.is_empty() {
                self.shared.readiness.get()?.raise();
            }
        }
        self.shared.readiness.get().map(Readiness::as_fd)
    }

    fn in_flight(&self) -> usize {
        self.pending.len() + self.committed
    }

    fn is_synchronous(&self) -> bool {
        false
    }

    fn counters(&self) -> EngineCounters {
        let mut counters = *lock(&self.shared.retry_counts);
        if let Some(faults) = &self.faults {
            faults.add_to(&mut counters);
        }
        counters
    }

    fn description(&self) -> String {
        let device = self
            .device
            .map(|device| format!(", emulated device {:?}", device.latency()))
            .unwrap_or_default();
        let described = format!(
            "pool (workers 1-{}, now {}{device})",
            self.max_workers,
            self.workers()
        );
        inject::described(described, self.faults.as_deref())
    }
}

impl SharesFiles for PoolEngine {
    fn add_alias(
        &mut self,
        at: FileHandle,
        file: &File,
        path: &Path,
        direct: bool,
    ) -> Result<(), Error> {
        self.files.insert_alias(at, file, path, direct)
    }

    fn remove_alias(&mut self, handle: FileHandle) -> Result<(), Error> {
        self.files.discard(handle, self.in_flight())
    }
}

impl Drop for PoolEngine {
    fn drop(&mut self) {
        // Uncommitted requests are not performed; their buffers go back now.
        self.pending.clear();
        // Workers drain what was committed before they see the flag, so
        // joining them waits for every request in flight. The files close
        // after this, when the fields drop.
        self.shared.shutdown.store(true, Ordering::SeqCst);
        for handle in self.workers.iter().flatten() {
            handle.thread().unpark();
        }
        // A worker blocked on a socket (a receive nothing will answer) would
        // keep this waiting for ever: after a moment its socket is shut
        // down, which is how a blocked receive or send is cancelled (the
        // engine closes its sockets now anyway). What still runs after
        // DROP_WAIT is left running, its request keeping its buffer.
        let started = Instant::now();
        let mut sockets_shut = false;
        while !self.workers.iter().flatten().all(JoinHandle::is_finished) {
            let waited = started.elapsed();
            if waited >= DROP_WAIT {
                break;
            }
            if !sockets_shut && waited >= SOCKET_CANCEL_AFTER {
                for fd in self.files.socket_fds() {
                    let _ = crate::sys::shutdown_both(fd);
                }
                sockets_shut = true;
            }
            thread::sleep(Duration::from_millis(1));
        }
        for handle in self.workers.iter_mut().filter_map(Option::take) {
            if handle.is_finished() {
                // A worker that panicked has already been reported by reap.
                let _ = handle.join();
            }
        }
    }
}

/// How long dropping the engine waits for requests in flight.
const DROP_WAIT: Duration = Duration::from_secs(10);

/// How long dropping the engine lets requests finish before shutting its
/// sockets down to cancel receives and sends blocked on them.
const SOCKET_CANCEL_AFTER: Duration = Duration::from_millis(20);

#[cfg(test)]
impl PoolEngine {
    /// Requests each worker slot has run so far.
    fn runs(&self) -> Vec<u64> {
        let runs = &self.shared.runs;
        runs.iter().map(|r| r.load(Ordering::Relaxed)).collect()
    }

    /// Makes the worker that takes the request tagged `user_data` panic.
    fn panic_on(&self, user_data: u64) {
        *lock(&self.shared.panic_on) = Some(user_data);
    }

    /// Waits until every worker is parked.
    fn settle(&self) {
        let roster = &self.shared.roster;
        wait_until("every worker parked", || {
            roster.idle.load(Ordering::SeqCst) == roster.alive.load(Ordering::SeqCst)
        });
    }

    /// Waits until workers have taken every committed request.
    fn all_taken(&self) {
        wait_until("every request taken by a worker", || {
            self.shared.queued.load(Ordering::SeqCst) == 0
        });
    }
}

/// Polls `done` until it is true; fails after a minute. Only for what
/// must come: a minute is not a bound on how long it may take, it turns a
/// wait that would never end into a failure.
#[cfg(test)]
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "still waiting after a minute: {what}"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests;
