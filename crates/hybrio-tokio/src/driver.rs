//! The process's engine for requests that go asynchronous, and the thread
//! that waits for their completions.
//!
//! One io_uring engine (where the kernel refuses io_uring, hybrio's worker
//! pool) serves every runtime of the process (a library cannot tell tokio's
//! runtimes apart without `tokio_unstable`), behind a mutex held only to
//! queue, commit and reap, never across a wait. A
//! request's future queues it, commits, and takes whatever has completed
//! already (a request the kernel finished inside the submit is `Ready`
//! without a wake). The rest are reaped by a task in the reactor of the
//! runtime the future runs in or, where there is none, by a thread of the
//! driver's own ([`reapers`]).
//!
//! A future dropped while its request is in the engine leaves what the
//! request uses (its buffer, its file) in the request's slot; the driver
//! drops them when the completion comes, never before: the kernel may write
//! into the buffer until then.

use std::any::Any;
use std::future::Future;
use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};

use hybrio::engine::{self, Engine, EngineConfig, EngineKind, QueueOutcome};
use hybrio::file::FileHandle;
use hybrio::request::{Completion, Request};

mod reapers;
use reapers::{Harvest, Reaper, Reapers};

/// Requests the engine holds at once. A request beyond it waits in its
/// future for room, woken when completions free some.
const DEPTH: u32 = 256;

/// The process's driver, made with the first request that needs it.
pub(crate) struct Driver {
    state: Mutex<State>,
    description: String,
    reapers: Reapers,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.description)
    }
}

struct State {
    engine: Box<dyn Engine>,
    /// By the requests' `user_data`.
    slots: Vec<Slot>,
    free: Vec<u32>,
    reaped: Vec<Completion>,
    /// Futures waiting for the engine to have room.
    room: Vec<Waker>,
    /// Completions reaped, by [`Reaper`].
    reaped_by: [u64; 3],
    /// Requests queued and not yet committed: a commit failed, and the
    /// next poll of any future tries again.
    uncommitted: bool,
}

/// Called with a request's result (a count, or `-errno`) when its
/// completion is reaped, whether or not its future is still there to take
/// it; with `-ECANCELED` if the request never reached the engine.
pub(crate) type OnDone = Box<dyn FnOnce(i64) + Send + Sync>;

enum Slot {
    Free,
    /// In the engine; the future's waker once it has been polled.
    Waiting(Option<Waker>, Option<OnDone>),
    /// Completed, not yet taken by its future.
    Done(i64),
    /// In the engine, its future dropped: what the request uses, kept
    /// until its completion comes.
    Orphan(
        #[allow(
            dead_code,
            reason = "held, never read: dropped when the request completes"
        )]
        Box<dyn Any + Send>,
        Option<OnDone>,
    ),
}

/// What a reap collected, to hand over once the driver's lock is let go.
#[derive(Default)]
struct Collected {
    /// Of the futures now done, and of those waiting for room.
    wakers: Vec<Waker>,
    /// What dropped futures left with their requests.
    orphans: Vec<Box<dyn Any + Send>>,
    on_done: Vec<(OnDone, i64)>,
}

impl Driver {
    /// Hands over what a reap collected, outside the lock.
    fn hand_over(&self, collected: Collected) {
        let Collected {
            wakers,
            orphans,
            on_done,
        } = collected;
        on_done
            .into_iter()
            .for_each(|(on_done, result)| on_done(result));
        wakers.into_iter().for_each(Waker::wake);
        self.reapers.orphans_reaped(orphans.len());
        drop(orphans);
    }
}

static DRIVER: OnceLock<Result<Driver, (io::ErrorKind, String)>> = OnceLock::new();

/// The process's driver, made (and its thread started) at the first call.
pub(crate) fn driver() -> io::Result<&'static Driver> {
    match DRIVER.get_or_init(|| Driver::start().map_err(|e| (e.kind(), e.to_string()))) {
        Ok(driver) => Ok(driver),
        Err((kind, message)) => Err(io::Error::new(*kind, message.clone())),
    }
}

impl Driver {
    fn start() -> io::Result<Driver> {
        let config = EngineConfig {
            // Tasks move between a runtime's workers, and the driver's
            // thread reaps what they submit: a completion must not wait for
            // its submitting worker's next system call (under COOP_TASKRUN,
            // 4 KiB O_DIRECT reads at 32 in flight ran at 6-7k a second
            // here, against 38-42k).
            any_thread: true,
            reaped_elsewhere: true,
            ..EngineConfig::with_depth(DEPTH)
        };
        // Where the kernel refuses io_uring (a seccomp profile, an old or
        // locked-down kernel), hybrio's worker pool, whose workers raise an
        // eventfd as its completion descriptor.
        let engine = engine::open(EngineKind::IoUring, &config, None)
            .or_else(|refused| {
                engine::open(EngineKind::Pool, &config, None).map_err(|pool| {
                    io::Error::other(format!(
                        "hybrio-tokio has no engine for requests that go asynchronous: {refused}; and the worker pool: {pool}"
                    ))
                })
            })?;
        let description = engine.description();
        let completions: OwnedFd = engine
            .completion_fd()
            .ok_or_else(|| {
                io::Error::other(format!(
                    "{description} has no completion descriptor to wait on"
                ))
            })?
            .try_clone_to_owned()?;
        let reapers = Reapers::new(completions)?;
        std::thread::Builder::new()
            .name("hybrio-tokio".into())
            .spawn(|| {
                // The driver lives as long as the process: so does this thread.
                if let Ok(driver) = driver() {
                    reapers::reap_forever(&driver.reapers, driver);
                }
            })?;
        Ok(Driver {
            state: Mutex::new(State {
                engine,
                slots: Vec::new(),
                free: Vec::new(),
                reaped: Vec::with_capacity(DEPTH as usize),
                room: Vec::new(),
                uncommitted: false,
                reaped_by: [0; 3],
            }),
            description,
            reapers,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock left the state as it was between
        // two whole steps (no step panics midway): carry on.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `file` to the engine: the one descriptor every request names.
    pub(crate) fn add_file(
        &self,
        file: std::fs::File,
        path: std::path::PathBuf,
    ) -> io::Result<FileHandle> {
        self.lock()
            .engine
            .add_file(file, path)
            .map_err(io::Error::other)
    }

    /// Takes `handle`'s file back from the engine (no request of it in flight).
    pub(crate) fn remove_file(&self, handle: FileHandle) -> io::Result<std::fs::File> {
        self.lock()
            .engine
            .remove_file(handle)
            .map_err(io::Error::other)
    }

    /// The engine, as set up.
    pub(crate) fn description(&self) -> &str {
        &self.description
    }

    /// How many completions each kind of reaper took so far.
    pub(crate) fn reaped(&self) -> Reaped {
        let [in_polls, in_reactors, by_thread] = self.lock().reaped_by;
        Reaped {
            in_polls,
            in_reactors,
            by_thread,
        }
    }
}

/// How the asynchronous requests' completions reached their futures so
/// far, in the whole process ([`reaped`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reaped {
    /// Taken by a future's own poll: the request completed inside its
    /// submission (or by the time its future, or another, looked again).
    pub in_polls: u64,
    /// Taken by a task in a runtime's reactor, woken by the engine's
    /// completion descriptor: the futures it wakes run on that worker.
    pub in_reactors: u64,
    /// Taken by hybrio-tokio's own thread, for futures waiting outside a
    /// runtime, in a runtime built without an I/O driver, or after their
    /// runtime shut down: one thread wake-up more each.
    pub by_thread: u64,
}

/// How the asynchronous requests' completions have reached their futures
/// so far, in the whole process: a runtime built without an I/O driver
/// shows as completions reaped by hybrio-tokio's own thread. All zero
/// before the first file is opened.
pub fn reaped() -> Reaped {
    DRIVER
        .get()
        .and_then(|driver| driver.as_ref().ok())
        .map(Driver::reaped)
        .unwrap_or_default()
}

impl Harvest for Driver {
    /// Reaps what completed and wakes its futures, outside the lock.
    fn wake_completed(&self, by: Reaper) {
        let collected = self.lock().harvest(by);
        self.hand_over(collected);
    }
}

impl State {
    fn take_slot(&mut self) -> u32 {
        match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(Slot::Free);
                (self.slots.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, slot: u32) {
        self.slots[slot as usize] = Slot::Free;
        self.free.push(slot);
    }

    /// Reaps what has completed, without waiting: what to hand over
    /// outside the lock.
    fn harvest(&mut self, by: Reaper) -> Collected {
        let mut collected = Collected::default();
        // A failed reap still hands over what it took first; what it could
        // not take waits for the next one (the descriptor stays readable).
        let _ = self.engine.reap(0, DEPTH as usize, &mut self.reaped);
        let came = self.reaped.len();
        self.reaped_by[by as usize] += came as u64;
        let mut reaped = std::mem::take(&mut self.reaped);
        for completion in reaped.drain(..) {
            let slot = completion.user_data as u32;
            let on_done = match std::mem::replace(&mut self.slots[slot as usize], Slot::Free) {
                Slot::Waiting(waker, on_done) => {
                    self.slots[slot as usize] = Slot::Done(completion.result);
                    collected.wakers.extend(waker);
                    on_done
                }
                Slot::Orphan(keep, on_done) => {
                    self.free.push(slot);
                    collected.orphans.push(keep);
                    on_done
                }
                other => {
                    self.slots[slot as usize] = other;
                    None
                }
            };
            if let Some(on_done) = on_done {
                collected.on_done.push((on_done, completion.result));
            }
        }
        self.reaped = reaped;
        if came > 0 {
            collected.wakers.append(&mut self.room);
        }
        collected
    }
}

/// A completion's result as the caller sees it: the bytes moved, or the
/// kernel's error.
fn result_of(result: i64) -> io::Result<usize> {
    if result < 0 {
        Err(io::Error::from_raw_os_error((-result) as i32))
    } else {
        Ok(result as usize)
    }
}

/// A request on its way through the engine, and what it uses (`K`: its
/// buffer, its file), which comes back with its result.
pub(crate) struct Op<K: Send + Unpin + 'static> {
    driver: &'static Driver,
    request: Option<Request>,
    keep: Option<K>,
    slot: Option<u32>,
    /// Called with the result when the completion is reaped (moved to the
    /// request's slot when queued).
    on_done: Option<OnDone>,
    /// This future waits where no reactor task reaps for it (counted in
    /// [`Reapers`], for the driver's thread to watch).
    unwatched: bool,
}

impl<K: Send + Unpin + 'static> Future for Op<K> {
    /// The request's result (bytes moved, or the kernel's error), and what it used.
    type Output = (io::Result<usize>, K);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let poll = this.poll_engine(cx);
        let waits = poll.is_pending() && (this.slot.is_some() || this.request.is_some());
        this.watch(waits);
        poll
    }
}

impl<K: Send + Unpin + 'static> Op<K> {
    pub(crate) fn new(driver: &'static Driver, request: Request, keep: K) -> Op<K> {
        Op {
            driver,
            request: Some(request),
            keep: Some(keep),
            slot: None,
            on_done: None,
            unwatched: false,
        }
    }

    /// Has `on_done` called with the result when the completion is reaped,
    /// even if this future is dropped before then or never polled again.
    pub(crate) fn on_done(mut self, on_done: OnDone) -> Op<K> {
        self.on_done = Some(on_done);
        self
    }

    /// Tells the reapers whether this future now waits where no reactor
    /// task reaps for it.
    fn watch(&mut self, waits: bool) {
        let reapers = &self.driver.reapers;
        let unwatched = waits && !reapers.reaped_here(self.driver);
        if unwatched != self.unwatched {
            reapers.set_unwatched(unwatched);
            self.unwatched = unwatched;
        }
    }

    fn poll_engine(&mut self, cx: &mut Context<'_>) -> Poll<(io::Result<usize>, K)> {
        let this = self;
        let mut state = this.driver.lock();
        let slot = match this.slot {
            Some(slot) => slot,
            None => {
                let Some(mut request) = this.request.take() else {
                    // Polled after it returned Ready: nothing more comes.
                    return Poll::Pending;
                };
                let slot = state.take_slot();
                request.user_data = u64::from(slot);
                match state.engine.queue(request) {
                    QueueOutcome::Queued => {
                        this.slot = Some(slot);
                        state.slots[slot as usize] =
                            Slot::Waiting(Some(cx.waker().clone()), this.on_done.take());
                        state.uncommitted = true;
                        slot
                    }
                    QueueOutcome::Completed(completion) => {
                        state.free.push(slot);
                        drop(state);
                        if let Some(on_done) = this.on_done.take() {
                            on_done(completion.result);
                        }
                        let keep = this.keep.take().expect("kept until the result");
                        return Poll::Ready((result_of(completion.result), keep));
                    }
                    QueueOutcome::Busy(request) => {
                        state.free.push(slot);
                        this.request = Some(request);
                        state.room.push(cx.waker().clone());
                        return Poll::Pending;
                    }
                }
            }
        };
        if state.uncommitted {
            // At once, not batched with the requests of the other tasks
            // ready now: waiting for them cost `O_DIRECT` reads at 32 in
            // flight a tenth of their rate once completions are reaped in
            // the runtime's reactor (docs/tokio-design.md).
            match state.engine.commit() {
                Ok(_) => state.uncommitted = false,
                // The engine retries transient refusals itself: this one
                // lasted. The requests stay queued (their buffers with their
                // futures); the next poll of any future tries again.
                Err(error) => {
                    eprintln!("hybrio-tokio: commit failed, trying again: {error}");
                    cx.waker().wake_by_ref();
                }
            }
        }
        // What completed inside the submit (a page-cache hit), or since.
        let collected = state.harvest(Reaper::Poll);
        let result = match &mut state.slots[slot as usize] {
            Slot::Done(result) => Some(*result),
            Slot::Waiting(waker, _) => {
                *waker = Some(cx.waker().clone());
                None
            }
            Slot::Free | Slot::Orphan(..) => unreachable!("a live future's slot is its own"),
        };
        if result.is_some() {
            state.release(slot);
            this.slot = None;
        }
        drop(state);
        this.driver.hand_over(collected);
        match result {
            Some(result) => Poll::Ready((
                result_of(result),
                this.keep.take().expect("kept until the result"),
            )),
            None => Poll::Pending,
        }
    }
}

impl<K: Send + Unpin + 'static> Drop for Op<K> {
    fn drop(&mut self) {
        self.watch(false);
        let Some(slot) = self.slot else {
            if self.request.is_some()
                && let Some(on_done) = self.on_done.take()
            {
                // Never queued: no result will come.
                on_done(-i64::from(libc::ECANCELED));
            }
            return;
        };
        let mut state = self.driver.lock();
        if state.uncommitted && state.engine.commit().is_ok() {
            // A commit that failed before, tried once more: this future's
            // request may be among those still queued.
            state.uncommitted = false;
        }
        match std::mem::replace(&mut state.slots[slot as usize], Slot::Free) {
            Slot::Done(_) => state.release(slot),
            Slot::Waiting(_, on_done) => {
                // Still in the engine: the kernel may use the buffer until
                // the completion comes, which frees it.
                let keep: Box<dyn Any + Send> = Box::new(self.keep.take());
                state.slots[slot as usize] = Slot::Orphan(keep, on_done);
                self.driver.reapers.orphaned();
            }
            Slot::Free | Slot::Orphan(..) => unreachable!("a live future's slot is its own"),
        }
    }
}
