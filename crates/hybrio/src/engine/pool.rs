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
//!   worker wakes up to [`FAN_OUT`] more before starting its own request (as
//!   PostgreSQL's workers fan out). Still one wake-up per request, lowest
//!   idle worker first; it only moves off the submitting thread.
//! * **One worker lingers.** Parking and unparking a thread costs a futex
//!   round trip and, on an idle vCPU here, a ~10 us wake-up: more than a
//!   cached read. So the worker that just ran out of work spins for up to
//!   [`LINGER`] before parking, and commit hands the next request straight to
//!   it, without a system call (libuv's threadpool linger took a serial round
//!   trip from 67k to 593k/s). The reaper does the same on its side:
//!   `reap(min > 0)` spins on the completion count for up to [`REAP_SPIN`]
//!   before it blocks. Only one worker lingers at a time, and each side
//!   keeps the odds of its recent spins paying off ([`odds_after`]): below
//!   5/8 it stops spinning but for one probe in [`PROBE_EVERY`] chances, so
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

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::ops::Deref;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

use super::alias::SharesFiles;
use super::api::{Engine, EngineConfig, EngineCounters, EngineKind, PREALLOCATED, QueueOutcome};
use super::retry::{self, Retry, Verdict, owed};
use crate::Error;
use crate::blocking;
use crate::device::{self, EmulatedDevice};
use crate::file::{Caching, FileHandle, FileTable};
use crate::request::{Completion, Request};

const ENGINE: &str = "pool";

/// Most workers: one bit each in the idle and alive masks.
const MAX_WORKERS: usize = 64;

/// How long a worker may sit idle before it exits (not worker 0).
const IDLE_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the worker that just ran out of work spins before parking.
/// Longer than a futex sleep and wake (~10-15 us here) costs, short enough
/// that a request stream slightly too sparse to catch burns little: libuv
/// measured +40% CPU per request at a 50 us window with 20-45 us gaps, about
/// nothing at 10-20 us.
const LINGER: Duration = Duration::from_micros(20);

/// How long `reap(min > 0)` spins on the completion count before blocking.
const REAP_SPIN: Duration = Duration::from_micros(20);

/// Certainty, in the fixed point of [`odds_after`].
const ODDS_ONE: u32 = 1024;

/// The odds of a spin paying off above which a side spins. A miss burns
/// the whole window (20 us of CPU); a hit saves a futex sleep and wake-up,
/// 10-15 us of CPU here and as much latency: spinning pays above ~5/8.
const WORTH_SPINNING: u32 = ODDS_ONE * 5 / 8;

/// A request that took longer than this (or a batch this old) is posted at
/// once: holding its completion would delay it by the next request's time.
const HOLD: Duration = Duration::from_micros(10);

/// Most completions a worker holds before posting them.
const MAX_BATCH: usize = 32;

/// How many more workers a woken worker wakes for requests whose wake-up
/// commit left to it (PostgreSQL's I/O workers fan out the same way).
const FAN_OUT: usize = 2;

/// Spins between two clock reads while spinning.
const SPINS_PER_CLOCK_READ: u32 = 16;

/// A value alone on its cache line (and the adjacent one, which x86 fetches
/// in pairs), so that what one side writes does not evict what the other
/// side spins on.
#[repr(align(128))]
#[derive(Default)]
struct Padded<T>(T);

impl<T> Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// One committed request, with what a worker needs to run it without the
/// engine's file table.
struct Job {
    request: Request,
    /// The file's descriptor: the file stays open while the job exists,
    /// because [`PoolEngine::remove_file`] refuses with requests in flight
    /// and the engine closes its files only after joining the workers.
    fd: RawFd,
    /// The file was O_DIRECT when added (the emulated device keeps its rules).
    direct: bool,
    /// The file is a block device (a trim is a discard).
    block_device: bool,
    /// The emulated device the file is on, if any.
    device: Option<EmulatedDevice>,
    /// Emulated device only: `CLOCK_MONOTONIC` time (ns) the request
    /// completes at, fixed at commit.
    deadline: Option<u64>,
    /// The file's `RWF_*` flags (uncached I/O): its reads and writes are
    /// then `preadv2`/`pwritev2`.
    rw_flags: i32,
    /// Whether the worker applies the retry rule.
    rule: Rule,
}

/// Who applies the [retry rule](super::retry) to a pool's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// The worker, around its call; with `nowait`, `EAGAIN` is the answer.
    Here { nowait: bool },
    /// A layer above: the worker passes every answer up as it is.
    Above,
}

impl Job {
    /// Does the request, sending it again while the rule says so; returns
    /// its completion. What the rule counted goes to `counts`.
    fn run(mut self, counts: &Mutex<EngineCounters>) -> Completion {
        let result = self.send(self.deadline);
        let result = match self.rule {
            Rule::Here { nowait }
                if retry::needs_attention(
                    nowait,
                    result,
                    owed(self.request.op, self.request.len() as u64),
                ) =>
            {
                self.send_again(nowait, result, counts)
            }
            _ => result,
        };
        self.request.complete(result)
    }

    /// One system call for the request as it stands (on the emulated
    /// device, completing at `deadline`); returns its answer.
    fn send(&mut self, deadline: Option<u64>) -> i64 {
        let fd = self.fd;
        match deadline {
            Some(deadline) => {
                let result = EmulatedDevice::transfer(fd, self.direct, &mut self.request);
                device::wait_until(deadline);
                result
            }
            None => {
                let rw_flags = self.rw_flags;
                blocking::run(
                    fd,
                    self.block_device,
                    &mut self.request,
                    |_, op, buf, offset| blocking::positioned(fd, op, buf, offset, rw_flags),
                )
            }
        }
    }

    /// [`Job::run`] for a request whose first answer was short or "try
    /// again": sends it again from this worker until the rule is done.
    #[cold]
    fn send_again(&mut self, nowait: bool, mut result: i64, counts: &Mutex<EngineCounters>) -> i64 {
        let mut rule = Retry::new(nowait);
        let mut track = None;
        let result = loop {
            match rule.settle_request(&mut self.request, &mut track, result) {
                Verdict::Done(result) => break result,
                Verdict::Again => {
                    rule.take_pause();
                    // Each send on the emulated device takes its latency.
                    let deadline = self.device.map(|device| device.deadline());
                    result = self.send(deadline);
                }
            }
        };
        let mut counts = lock(counts);
        *counts = *counts + rule.counters();
        result
    }
}

/// Posted completions and what the reaper waits for, under one lock.
#[derive(Default)]
struct Done {
    list: Vec<Completion>,
    /// How many completions the blocked reaper needs; 0 when none is blocked.
    need: usize,
}

/// Which workers exist and which are free, and the lingering switch: what
/// commit reads to route requests, and workers change as they go idle.
#[derive(Default)]
struct Roster {
    /// Bit `i`: worker `i` is parked (or about to park) and may be claimed.
    /// Whoever clears a bit owns the transition: commit, to hand the worker
    /// work; the worker itself, to go back to work or to exit.
    idle: AtomicU64,
    /// Bit `i`: worker `i` exists (its slot is taken).
    alive: AtomicU64,
    /// A worker is spinning for work. Commit clears it to hand that worker
    /// its first request; the worker clears it when it stops spinning.
    lingering: AtomicBool,
    /// How often lingering paid off lately ([`odds_after`]).
    linger_odds: AtomicU32,
    /// Chances to linger skipped because it did not pay ([`spin_now`]).
    linger_skipped: AtomicU32,
    /// Workers claimed and unparked that have not yet looked at the queue.
    waking: AtomicUsize,
    /// Queued requests whose wake-up commit left to a waking worker.
    unwoken: AtomicUsize,
}

/// What the engine and its workers share.
struct Shared {
    /// Committed requests no worker has taken yet.
    queue: Padded<Mutex<VecDeque<Job>>>,
    /// `queue.len()`, readable without the lock (set under it).
    queued: Padded<AtomicUsize>,
    roster: Padded<Roster>,
    /// Each worker's thread, registered by the worker itself before it can
    /// ever be idle, so that whoever claims it can unpark it.
    threads: [Mutex<Option<Thread>>; MAX_WORKERS],
    done: Padded<Mutex<Done>>,
    /// `done.list.len()`, readable without the lock (set under it).
    ready: Padded<AtomicUsize>,
    /// Signalled when `done.list` reaches `done.need`, or a worker died.
    done_ready: Condvar,
    /// What the workers' retry rule counted (taken only when an answer
    /// needed the rule: a short transfer or a "try again").
    retry_counts: Mutex<EngineCounters>,
    /// A worker panicked: its request will never complete.
    failed: AtomicBool,
    /// The engine is being dropped: drain the queue and exit.
    shutdown: AtomicBool,
    idle_timeout: Duration,
    /// [`HOLD`], in nanoseconds (tests set it to either extreme).
    hold_ns: u64,
    /// Origin of the `*_ns` times.
    epoch: Instant,
    /// Requests each worker ran, to test the wake-up order.
    #[cfg(test)]
    runs: [AtomicU64; MAX_WORKERS],
    /// Batches posted, to test that quick requests share one.
    #[cfg(test)]
    posts: AtomicU64,
    /// The shortest time a worker sat idle before it exited (ns), to test
    /// the idle timeout without timing the test itself.
    #[cfg(test)]
    shortest_idle_exit_ns: AtomicU64,
    /// Test hook: the worker that takes the request with this user_data panics.
    #[cfg(test)]
    panic_on: Mutex<Option<u64>>,
}

/// Locks a mutex whatever a panicking worker left behind: every critical
/// section here is a push, a pop, an append or a swap, never half done.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// With spinning off, one chance in this many spins anyway, to notice when
/// it would pay again.
const PROBE_EVERY: u32 = 32;

/// How often a spin paid off lately: an exponentially weighted average of
/// hits over about the last 8 spins, in 1/[`ODDS_ONE`]ths.
fn odds_after(odds: u32, hit: bool) -> u32 {
    odds - odds / 8 + if hit { ODDS_ONE / 8 } else { 0 }
}

/// Whether to spin, given the odds and how many chances were skipped:
/// always while spinning pays, else once every [`PROBE_EVERY`] chances.
/// Only real spins teach anything (whether a spin would have caught a
/// wake-up depends on whether the other side was spinning too), so a side
/// that has stopped must try now and then to find out the workload changed.
fn spin_now(odds: u32, skipped: u32) -> bool {
    odds >= WORTH_SPINNING || skipped % PROBE_EVERY == PROBE_EVERY - 1
}

/// Decrements `count` unless it is zero; returns the old value if it did.
fn take_one(count: &AtomicUsize) -> Option<usize> {
    count
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .ok()
}

/// Spins until `ready()` is true or `window` has passed; returns whether it became true.
fn spin_until(window: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..SPINS_PER_CLOCK_READ {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= window {
            return ready();
        }
    }
}

/// Why a worker stopped waiting.
enum Wake {
    /// Someone claimed it and counts it in [`Roster::waking`].
    Claimed,
    /// It found requests to run on its own.
    Work,
    /// Idle too long (or shutting down with nothing queued): exit.
    Exit,
}

impl Shared {
    fn new(idle_timeout: Duration, hold: Duration) -> Shared {
        Shared {
            queue: Padded::default(),
            queued: Padded::default(),
            roster: Padded(Roster {
                linger_odds: AtomicU32::new(ODDS_ONE),
                ..Roster::default()
            }),
            threads: std::array::from_fn(|_| Mutex::new(None)),
            done: Padded::default(),
            ready: Padded::default(),
            done_ready: Condvar::new(),
            retry_counts: Mutex::new(EngineCounters::default()),
            failed: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            idle_timeout,
            hold_ns: hold.as_nanos() as u64,
            epoch: Instant::now(),
            #[cfg(test)]
            runs: std::array::from_fn(|_| AtomicU64::new(0)),
            #[cfg(test)]
            posts: AtomicU64::new(0),
            #[cfg(test)]
            shortest_idle_exit_ns: AtomicU64::new(u64::MAX),
            #[cfg(test)]
            panic_on: Mutex::new(None),
        }
    }

    /// Nanoseconds since the engine was built.
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// The oldest queued request, if any; no lock when the queue is empty.
    fn pop(&self) -> Option<Job> {
        if self.queued.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut queue = lock(&self.queue);
        let job = queue.pop_front();
        self.queued.store(queue.len(), Ordering::SeqCst);
        job
    }

    /// Publishes `batch` (emptied) with one lock, waking the reaper once if
    /// that gives it what it waits for.
    fn post(&self, batch: &mut Vec<Completion>) {
        #[cfg(test)]
        self.posts.fetch_add(1, Ordering::Relaxed);
        let wake = {
            let mut done = lock(&self.done);
            done.list.append(batch);
            self.ready.store(done.list.len(), Ordering::Release);
            let wake = done.need > 0 && done.list.len() >= done.need;
            if wake {
                done.need = 0;
            }
            wake
        };
        if wake {
            self.done_ready.notify_one();
        }
    }

    /// Runs queued requests until the queue is empty, posting completions in
    /// batches of quick ones.
    fn run_queue(&self, me: usize, batch: &mut Vec<Completion>, claimed: bool) {
        let hold_ns = self.hold_ns;
        let mut batch_start = 0;
        let mut first = self.pop();
        if claimed {
            // Looked at the queue: no longer waking. Wake others for the
            // requests commit left to us, before our own request blocks.
            self.roster.waking.fetch_sub(1, Ordering::SeqCst);
            self.fan_out();
        }
        while let Some(job) = first.take().or_else(|| self.pop()) {
            #[cfg(test)]
            self.test_hooks(me, &job);
            #[cfg(not(test))]
            let _ = me;
            let start = self.now_ns();
            if batch.is_empty() {
                batch_start = start;
            }
            batch.push(job.run(&self.retry_counts));
            let end = self.now_ns();
            // Hold on only if the next request is likely as quick as this
            // one was (the same workload, most of the time) and is already
            // there to run.
            let hold = end - start < hold_ns
                && end - batch_start < hold_ns
                && batch.len() < MAX_BATCH
                && self.queued.load(Ordering::Relaxed) > 0;
            if !hold {
                self.post(batch);
            }
        }
        if !batch.is_empty() {
            // Another worker took the request this batch waited for.
            self.post(batch);
        }
    }

    /// Claims the lowest-numbered idle worker and unparks it; false if none is idle.
    fn wake_lowest_idle(&self) -> bool {
        let roster = &self.roster;
        // Counted before the claim: the worker may run and uncount itself
        // before this thread gets past the unpark.
        roster.waking.fetch_add(1, Ordering::SeqCst);
        let mut mask = roster.idle.load(Ordering::SeqCst);
        while mask != 0 {
            let lowest = mask.trailing_zeros() as usize;
            match roster.idle.compare_exchange_weak(
                mask,
                mask & !(1u64 << lowest),
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => {
                    // An idle worker has registered its thread.
                    if let Some(thread) = lock(&self.threads[lowest]).as_ref() {
                        thread.unpark();
                    }
                    return true;
                }
                Err(now) => mask = now,
            }
        }
        roster.waking.fetch_sub(1, Ordering::SeqCst);
        false
    }

    /// At commit, leaves the wake-up for one request to a worker already
    /// being woken, if there is one (and an idle worker for it to wake);
    /// returns whether it did. A futex wake that reaches an idle vCPU costs
    /// the waker ~12 us here, which a submitting thread reaping one
    /// completion at a time then pays per request; a woken worker pays it
    /// instead, in parallel, before its own request.
    fn defer_wake(&self) -> bool {
        let roster = &self.roster;
        if roster.waking.load(Ordering::SeqCst) == 0
            || roster.idle.load(Ordering::Relaxed).count_ones() as usize
                <= roster.unwoken.load(Ordering::Relaxed)
        {
            return false;
        }
        roster.unwoken.fetch_add(1, Ordering::SeqCst);
        // Pairs with the waking worker's decrement-then-look (both SeqCst):
        // a worker still waking after our increment will see it.
        if roster.waking.load(Ordering::SeqCst) > 0 {
            return true;
        }
        // They may all have looked already: take it back, unless one of
        // them took it.
        take_one(&roster.unwoken).is_none()
    }

    /// Wakes up to [`FAN_OUT`] idle workers for requests commit left to
    /// the waking ones.
    fn fan_out(&self) {
        for _ in 0..FAN_OUT {
            // With no idle worker left, the request waits for a busy one.
            if take_one(&self.roster.unwoken).is_none() || !self.wake_lowest_idle() {
                return;
            }
        }
    }

    #[cfg(test)]
    fn test_hooks(&self, me: usize, job: &Job) {
        self.runs[me].fetch_add(1, Ordering::Relaxed);
        if *lock(&self.panic_on) == Some(job.request.user_data) {
            panic!("pool worker {me}: panic asked for by a test");
        }
    }

    /// Spins for work as the one lingering worker; returns whether there is
    /// work to do (false: lingering is off, taken, or found nothing).
    fn linger(&self) -> bool {
        let roster = &self.roster;
        let odds = roster.linger_odds.load(Ordering::Relaxed);
        if (odds < WORTH_SPINNING
            && !spin_now(odds, roster.linger_skipped.fetch_add(1, Ordering::Relaxed)))
            || roster
                .lingering
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        let mut handed = false;
        let work = spin_until(LINGER, || {
            // A commit that cleared the flag counted on us for a request.
            handed = !roster.lingering.load(Ordering::Acquire);
            handed
                || self.queued.load(Ordering::Acquire) > 0
                || self.shutdown.load(Ordering::Acquire)
        });
        // Stand down. A commit that cleared the flag meanwhile handed us its
        // request: we must go and get it, whatever the spin saw.
        let handed = handed || !roster.lingering.swap(false, Ordering::SeqCst);
        let found = handed || work;
        let _ = roster
            .linger_odds
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |odds| {
                Some(odds_after(odds, found))
            });
        found
    }

    /// Parks worker `me` until it is handed work, finds some, or has been
    /// idle for `idle_timeout` (worker 0 waits for ever).
    fn sleep(&self, me: usize) -> Wake {
        let roster = &self.roster;
        let bit = 1u64 << me;
        roster.idle.fetch_or(bit, Ordering::SeqCst);
        let parked = Instant::now();
        loop {
            // After setting the bit: a commit that pushed before it saw the
            // bit clear is seen here (both sides SeqCst), so no request waits
            // while this worker sleeps.
            if roster.idle.load(Ordering::SeqCst) & bit == 0 {
                return Wake::Claimed;
            }
            if self.queued.load(Ordering::SeqCst) > 0 || self.shutdown.load(Ordering::SeqCst) {
                // Claim ourselves back, unless someone just did.
                return if roster.idle.fetch_and(!bit, Ordering::SeqCst) & bit == 0 {
                    Wake::Claimed
                } else {
                    Wake::Work
                };
            }
            let idle_for = parked.elapsed();
            if me == 0 {
                thread::park();
            } else if idle_for < self.idle_timeout {
                thread::park_timeout(self.idle_timeout - idle_for);
            } else {
                // Claim ourselves to exit; losing the race to a commit means
                // it just handed us work.
                if roster.idle.fetch_and(!bit, Ordering::SeqCst) & bit == 0 {
                    return Wake::Claimed;
                }
                #[cfg(test)]
                self.shortest_idle_exit_ns
                    .fetch_min(idle_for.as_nanos() as u64, Ordering::Relaxed);
                return Wake::Exit;
            }
        }
    }
}

/// Worker `me`'s life: run what is queued, linger, park; exit when idle
/// too long or when the engine is dropped and the queue is empty.
fn worker(shared: &Shared, me: usize) {
    let _guard = DeathNotice { shared, me };
    *lock(&shared.threads[me]) = Some(thread::current());
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut claimed = false;
    loop {
        shared.run_queue(me, &mut batch, claimed);
        if shared.shutdown.load(Ordering::SeqCst) {
            // Every committed request was queued before the flag was set,
            // and the queue is empty now.
            return;
        }
        if shared.linger() {
            claimed = false;
            continue;
        }
        claimed = match shared.sleep(me) {
            Wake::Claimed => true,
            Wake::Work => false,
            Wake::Exit => return,
        };
    }
}

/// Frees a worker's slot when it exits; if it panicked, marks the engine
/// failed and wakes the reaper, which would otherwise wait for ever for the
/// lost request.
struct DeathNotice<'a> {
    shared: &'a Shared,
    me: usize,
}

impl Drop for DeathNotice<'_> {
    fn drop(&mut self) {
        let shared = self.shared;
        if thread::panicking() {
            shared.failed.store(true, Ordering::SeqCst);
            let _done = lock(&shared.done);
            shared.done_ready.notify_all();
        }
        // Last: from here commit may reuse the slot (joining this thread).
        shared
            .roster
            .alive
            .fetch_and(!(1u64 << self.me), Ordering::SeqCst);
    }
}

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
    /// Who applies the retry rule to the workers' answers.
    rule: Rule,
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
        let mut engine = PoolEngine {
            shared: Arc::new(Shared::new(idle_timeout, hold)),
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
            rule: Rule::Here {
                nowait: config.nowait,
            },
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

    /// The engine under a layer that applies the retry rule (the
    /// adaptive engine's, or the one above injected faults): its workers
    /// pass every answer up as it is.
    pub(crate) fn retried_above(mut self) -> Self {
        self.rule = Rule::Above;
        self
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

    #[inline]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        let Some(entry) = self.files.get(request.file) else {
            return QueueOutcome::Completed(request.complete(-i64::from(libc::EBADF)));
        };
        if let Some(errno) = request.malformed() {
            return QueueOutcome::Completed(request.complete(-i64::from(errno)));
        }
        if self.in_flight() >= self.depth {
            return QueueOutcome::Busy(request);
        }
        self.pending.push(Job {
            fd: entry.fd(),
            direct: entry.is_direct(),
            block_device: entry.is_block_device(),
            device: self.device,
            deadline: None,
            rw_flags: entry.caching_flags() | request.rw_flags(),
            rule: self.rule,
            request,
        });
        QueueOutcome::Queued
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

    fn in_flight(&self) -> usize {
        self.pending.len() + self.committed
    }

    fn is_synchronous(&self) -> bool {
        false
    }

    fn counters(&self) -> EngineCounters {
        *lock(&self.shared.retry_counts)
    }

    fn description(&self) -> String {
        let device = self
            .device
            .map(|device| format!(", emulated device {:?}", device.latency()))
            .unwrap_or_default();
        format!(
            "pool (workers 1-{}, now {}{device})",
            self.max_workers,
            self.workers()
        )
    }
}

impl SharesFiles for PoolEngine {
    fn add_alias(&mut self, file: &File, path: &Path) -> Result<FileHandle, Error> {
        if self.device.is_some() {
            // The emulated device changes its files' flags: a file of its own.
            let copy = crate::file::reopen(file, path)?;
            return self.add_file(copy, path.to_owned());
        }
        Ok(self
            .files
            .insert_alias(std::os::fd::AsRawFd::as_raw_fd(file), path.to_owned()))
    }

    fn remove_alias(&mut self, handle: FileHandle) -> Result<(), Error> {
        match self.files.get(handle) {
            Some(entry) if entry.is_alias() => self.files.remove_alias(handle, self.in_flight()),
            _ => self.remove_file(handle).map(drop),
        }
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
