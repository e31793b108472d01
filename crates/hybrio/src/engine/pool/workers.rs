//! The pool's workers and what they share with the engine: the queue of
//! committed requests, the roster of idle and lingering workers, the posted
//! completions, and each worker's life (see the [engine](super)'s
//! documentation for the design and its measurements).

use std::collections::VecDeque;
use std::ops::Deref;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use crate::blocking;
use crate::device::{self, EmulatedDevice};
use crate::engine::api::EngineCounters;
use crate::engine::inject::{self, FaultEffects, InjectedCounts};
use crate::engine::retry::{self, Retry, Verdict, owed};
use crate::request::{Completion, Marks, Request};
use crate::sys::Readiness;

/// Most workers: one bit each in the idle and alive masks.
pub(super) const MAX_WORKERS: usize = 64;

/// How long a worker may sit idle before it exits (not worker 0).
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the worker that just ran out of work spins before parking.
/// Longer than a futex sleep and wake (~10-15 us here) costs, short enough
/// that a request stream slightly too sparse to catch burns little: libuv
/// measured +40% CPU per request at a 50 us window with 20-45 us gaps, about
/// nothing at 10-20 us.
pub(super) const LINGER: Duration = Duration::from_micros(20);

/// How long `reap(min > 0)` spins on the completion count before blocking.
pub(super) const REAP_SPIN: Duration = Duration::from_micros(20);

/// Certainty, in the fixed point of [`odds_after`].
pub(super) const ODDS_ONE: u32 = 1024;

/// The odds of a spin paying off above which a side spins. A miss burns
/// the whole window (20 us of CPU); a hit saves a futex sleep and wake-up,
/// 10-15 us of CPU here and as much latency: spinning pays above ~5/8.
pub(super) const WORTH_SPINNING: u32 = ODDS_ONE * 5 / 8;

/// A request that took longer than this (or a batch this old) is posted at
/// once: holding its completion would delay it by the next request's time.
pub(super) const HOLD: Duration = Duration::from_micros(10);

/// Most completions a worker holds before posting them.
pub(super) const MAX_BATCH: usize = 32;

/// How many more workers a woken worker wakes for requests whose wake-up
/// commit left to it (PostgreSQL's I/O workers fan out the same way).
pub(super) const FAN_OUT: usize = 2;

/// Spins between two clock reads while spinning.
pub(super) const SPINS_PER_CLOCK_READ: u32 = 16;

/// A value alone on its cache line (and the adjacent one, which x86 fetches
/// in pairs), so that what one side writes does not evict what the other
/// side spins on.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Padded<T>(T);

impl<T> Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// One committed request, with what a worker needs to run it without the
/// engine's file table.
pub(super) struct Job {
    pub(super) request: Request,
    /// The file's descriptor: the file stays open while the job exists,
    /// because [`PoolEngine::remove_file`](super::PoolEngine) refuses with requests in flight
    /// and the engine closes its files only after joining the workers.
    pub(super) fd: RawFd,
    /// The file was O_DIRECT when added (the emulated device keeps its rules).
    pub(super) direct: bool,
    /// The file is a block device (a trim is a discard).
    pub(super) block_device: bool,
    /// The emulated device the file is on, if any.
    pub(super) device: Option<EmulatedDevice>,
    /// Emulated device only: `CLOCK_MONOTONIC` time (ns) the request
    /// completes at, fixed at commit.
    pub(super) deadline: Option<u64>,
    /// The file's `RWF_*` flags (uncached I/O): its reads and writes are
    /// then `preadv2`/`pwritev2`.
    pub(super) rw_flags: i32,
    /// `EAGAIN` is the caller's answer, not one the worker retries.
    pub(super) nowait: bool,
}

impl Job {
    /// Does the request, sending it again while the [retry
    /// rule](crate::engine::retry) says so; returns its completion. What the
    /// rule counted goes to `counts`, and so does what the faults marked on
    /// the request injected (`faults`: the pool's).
    pub(super) fn run(
        mut self,
        counts: &Mutex<EngineCounters>,
        faults: Option<FaultEffects>,
    ) -> Completion {
        let result = self.send(self.deadline);
        if self.request.marks.any(Marks::FAULTS) {
            return self.run_with_faults(result, counts, faults);
        }
        let result = self.settle(result, counts);
        self.request.complete(result)
    }

    /// [`Job::run`] for a request marked with faults to inject: its first
    /// answer shortened before the rule, its bit flipped or its delay slept
    /// after it.
    #[cold]
    fn run_with_faults(
        mut self,
        result: i64,
        counts: &Mutex<EngineCounters>,
        faults: Option<FaultEffects>,
    ) -> Completion {
        let (result, shortened) = inject::shorten(&mut self.request, result);
        let result = self.settle(result, counts);
        let mut injected = InjectedCounts {
            short: u64::from(shortened),
            ..InjectedCounts::default()
        };
        if let Some(effects) = faults {
            injected = injected + inject::finish_away(effects, &mut self.request, result);
        }
        {
            let mut counts = lock(counts);
            counts.injected = counts.injected + injected;
        }
        self.request.complete(result)
    }

    /// The request's answer given its first, `result`: as it is, or, when
    /// short or "try again", what sending it again from here brings.
    #[inline(always)]
    fn settle(&mut self, result: i64, counts: &Mutex<EngineCounters>) -> i64 {
        let owed = owed(self.request.op, self.request.len() as u64);
        if retry::needs_attention(self.nowait, result, owed) {
            self.send_again(result, counts)
        } else {
            result
        }
    }

    /// One system call for the request as it stands (on the emulated
    /// device, completing at `deadline`); returns its answer.
    pub(super) fn send(&mut self, deadline: Option<u64>) -> i64 {
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
    pub(super) fn send_again(&mut self, mut result: i64, counts: &Mutex<EngineCounters>) -> i64 {
        let mut rule = Retry::new(self.nowait);
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
pub(super) struct Done {
    pub(super) list: Vec<Completion>,
    /// How many completions the blocked reaper needs; 0 when none is blocked.
    pub(super) need: usize,
}

/// Which workers exist and which are free, and the lingering switch: what
/// commit reads to route requests, and workers change as they go idle.
#[derive(Default)]
pub(super) struct Roster {
    /// Bit `i`: worker `i` is parked (or about to park) and may be claimed.
    /// Whoever clears a bit owns the transition: commit, to hand the worker
    /// work; the worker itself, to go back to work or to exit.
    pub(super) idle: AtomicU64,
    /// Bit `i`: worker `i` exists (its slot is taken).
    pub(super) alive: AtomicU64,
    /// A worker is spinning for work. Commit clears it to hand that worker
    /// its first request; the worker clears it when it stops spinning.
    pub(super) lingering: AtomicBool,
    /// How often lingering paid off lately ([`odds_after`]).
    pub(super) linger_odds: AtomicU32,
    /// Chances to linger skipped because it did not pay ([`spin_now`]).
    pub(super) linger_skipped: AtomicU32,
    /// Workers claimed and unparked that have not yet looked at the queue.
    pub(super) waking: AtomicUsize,
    /// Queued requests whose wake-up commit left to a waking worker.
    pub(super) unwoken: AtomicUsize,
}

/// What the engine and its workers share.
pub(super) struct Shared {
    /// Committed requests no worker has taken yet.
    pub(super) queue: Padded<Mutex<VecDeque<Job>>>,
    /// `queue.len()`, readable without the lock (set under it).
    pub(super) queued: Padded<AtomicUsize>,
    pub(super) roster: Padded<Roster>,
    /// Each worker's thread, registered by the worker itself before it can
    /// ever be idle, so that whoever claims it can unpark it.
    pub(super) threads: [Mutex<Option<Thread>>; MAX_WORKERS],
    pub(super) done: Padded<Mutex<Done>>,
    /// `done.list.len()`, readable without the lock (set under it).
    pub(super) ready: Padded<AtomicUsize>,
    /// Signalled when `done.list` reaches `done.need`, or a worker died.
    pub(super) done_ready: Condvar,
    /// Raised when completions are posted or a worker died, once a reaper
    /// elsewhere asked for it ([`Engine::completion_fd`](crate::engine::Engine::completion_fd)).
    pub(super) readiness: OnceLock<Readiness>,
    /// What the workers' retry rule counted (taken only when an answer
    /// needed the rule: a short transfer or a "try again").
    pub(super) retry_counts: Mutex<EngineCounters>,
    /// What the workers need to inject the faults marked on requests.
    pub(super) faults: Option<FaultEffects>,
    /// A worker panicked: its request will never complete.
    pub(super) failed: AtomicBool,
    /// The engine is being dropped: drain the queue and exit.
    pub(super) shutdown: AtomicBool,
    pub(super) idle_timeout: Duration,
    /// [`HOLD`], in nanoseconds (tests set it to either extreme).
    pub(super) hold_ns: u64,
    /// Origin of the `*_ns` times.
    pub(super) epoch: Instant,
    /// Requests each worker ran, to test the wake-up order.
    #[cfg(test)]
    pub(super) runs: [AtomicU64; MAX_WORKERS],
    /// Batches posted, to test that quick requests share one.
    #[cfg(test)]
    pub(super) posts: AtomicU64,
    /// The shortest time a worker sat idle before it exited (ns), to test
    /// the idle timeout without timing the test itself.
    #[cfg(test)]
    pub(super) shortest_idle_exit_ns: AtomicU64,
    /// Test hook: the worker that takes the request with this user_data panics.
    #[cfg(test)]
    pub(super) panic_on: Mutex<Option<u64>>,
}

/// Locks a mutex whatever a panicking worker left behind: every critical
/// section here is a push, a pop, an append or a swap, never half done.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// With spinning off, one chance in this many spins anyway, to notice when
/// it would pay again.
pub(super) const PROBE_EVERY: u32 = 32;

/// How often a spin paid off lately: an exponentially weighted average of
/// hits over about the last 8 spins, in 1/[`ODDS_ONE`]ths.
pub(super) fn odds_after(odds: u32, hit: bool) -> u32 {
    odds - odds / 8 + if hit { ODDS_ONE / 8 } else { 0 }
}

/// Whether to spin, given the odds and how many chances were skipped:
/// always while spinning pays, else once every [`PROBE_EVERY`] chances.
/// Only real spins teach anything (whether a spin would have caught a
/// wake-up depends on whether the other side was spinning too), so a side
/// that has stopped must try now and then to find out the workload changed.
pub(super) fn spin_now(odds: u32, skipped: u32) -> bool {
    odds >= WORTH_SPINNING || skipped % PROBE_EVERY == PROBE_EVERY - 1
}

/// Decrements `count` unless it is zero; returns the old value if it did.
pub(super) fn take_one(count: &AtomicUsize) -> Option<usize> {
    count
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .ok()
}

/// Spins until `ready()` is true or `window` has passed; returns whether it became true.
pub(super) fn spin_until(window: Duration, mut ready: impl FnMut() -> bool) -> bool {
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
pub(super) enum Wake {
    /// Someone claimed it and counts it in [`Roster::waking`].
    Claimed,
    /// It found requests to run on its own.
    Work,
    /// Idle too long (or shutting down with nothing queued): exit.
    Exit,
}

impl Shared {
    pub(super) fn new(
        idle_timeout: Duration,
        hold: Duration,
        faults: Option<FaultEffects>,
    ) -> Shared {
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
            readiness: OnceLock::new(),
            retry_counts: Mutex::new(EngineCounters::default()),
            faults,
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
    pub(super) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// The oldest queued request, if any; no lock when the queue is empty.
    pub(super) fn pop(&self) -> Option<Job> {
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
    pub(super) fn post(&self, batch: &mut Vec<Completion>) {
        #[cfg(test)]
        self.posts.fetch_add(1, Ordering::Relaxed);
        let (wake, readiness) = {
            let mut done = lock(&self.done);
            done.list.append(batch);
            self.ready.store(done.list.len(), Ordering::Release);
            let wake = done.need > 0 && done.list.len() >= done.need;
            if wake {
                done.need = 0;
            }
            // Looked at under the lock `completion_fd` makes it under: either
            // this batch sees it, or it sees this batch.
            (wake, self.readiness.get())
        };
        if wake {
            self.done_ready.notify_one();
        }
        if let Some(readiness) = readiness {
            readiness.raise();
        }
    }

    /// Runs queued requests until the queue is empty, posting completions in
    /// batches of quick ones.
    pub(super) fn run_queue(&self, me: usize, batch: &mut Vec<Completion>, claimed: bool) {
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
            batch.push(job.run(&self.retry_counts, self.faults));
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
    pub(super) fn wake_lowest_idle(&self) -> bool {
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
    pub(super) fn defer_wake(&self) -> bool {
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
    pub(super) fn fan_out(&self) {
        for _ in 0..FAN_OUT {
            // With no idle worker left, the request waits for a busy one.
            if take_one(&self.roster.unwoken).is_none() || !self.wake_lowest_idle() {
                return;
            }
        }
    }

    #[cfg(test)]
    pub(super) fn test_hooks(&self, me: usize, job: &Job) {
        self.runs[me].fetch_add(1, Ordering::Relaxed);
        if *lock(&self.panic_on) == Some(job.request.user_data) {
            panic!("pool worker {me}: panic asked for by a test");
        }
    }

    /// Spins for work as the one lingering worker; returns whether there is
    /// work to do (false: lingering is off, taken, or found nothing).
    pub(super) fn linger(&self) -> bool {
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
    pub(super) fn sleep(&self, me: usize) -> Wake {
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
pub(super) fn worker(shared: &Shared, me: usize) {
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
pub(super) struct DeathNotice<'a> {
    pub(super) shared: &'a Shared,
    pub(super) me: usize,
}

impl Drop for DeathNotice<'_> {
    fn drop(&mut self) {
        let shared = self.shared;
        if thread::panicking() {
            shared.failed.store(true, Ordering::SeqCst);
            let _done = lock(&shared.done);
            shared.done_ready.notify_all();
            if let Some(readiness) = shared.readiness.get() {
                readiness.raise();
            }
        }
        // Last: from here commit may reuse the slot (joining this thread).
        shared
            .roster
            .alive
            .fetch_and(!(1u64 << self.me), Ordering::SeqCst);
    }
}
