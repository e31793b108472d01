//! The process's engine for requests that go asynchronous, and the thread
//! that waits for their completions.
//!
//! One io_uring engine (where the kernel refuses io_uring, hybrio's worker
//! pool) serves every runtime of the process (a library cannot tell tokio's
//! runtimes apart without `tokio_unstable`), behind a mutex held only to
//! queue, commit and reap, never across a wait. A
//! request's future queues it, commits, and takes whatever has completed
//! already (a request the kernel finished inside the submit is `Ready`
//! without a wake). The rest are reaped by a thread of the driver's own,
//! which sleeps in `poll(2)` on the engine's completion descriptor and
//! wakes the futures whose requests are done: it works under any runtime,
//! of any flavour, and after a runtime has shut down.
//!
//! A future dropped while its request is in the engine leaves what the
//! request uses (its buffer, its file) in the request's slot; the driver
//! drops them when the completion comes, never before: the kernel may write
//! into the buffer until then.

use std::any::Any;
use std::future::Future;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};

use hybrio::engine::{self, Engine, EngineConfig, EngineKind, QueueOutcome};
use hybrio::file::FileHandle;
use hybrio::request::{Completion, Request};

/// Requests the engine holds at once. A request beyond it waits in its
/// future for room, woken when completions free some.
const DEPTH: u32 = 256;

/// The process's driver, made with the first request that needs it.
pub(crate) struct Driver {
    state: Mutex<State>,
    description: String,
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
    /// A future that queued a request will commit at its next poll: those
    /// that queue before then leave their requests to its commit.
    commit_due: bool,
}

enum Slot {
    Free,
    /// In the engine; the future's waker once it has been polled.
    Waiting(Option<Waker>),
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
    ),
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
        std::thread::Builder::new()
            .name("hybrio-tokio".into())
            .spawn(move || reap_forever(completions))?;
        Ok(Driver {
            state: Mutex::new(State {
                engine,
                slots: Vec::new(),
                free: Vec::new(),
                reaped: Vec::with_capacity(DEPTH as usize),
                room: Vec::new(),
                commit_due: false,
            }),
            description,
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
}

/// The driver's thread: waits for completions and hands them to their futures.
fn reap_forever(completions: OwnedFd) {
    // The driver lives as long as the process: so does this thread.
    let Ok(driver) = driver() else { return };
    loop {
        if let Err(error) = crate::sys::wait_readable(completions.as_fd()) {
            // Nothing sensible is left to wait on: futures still waiting are
            // woken by the next submission's harvest.
            eprintln!("hybrio-tokio: waiting for completions failed: {error}");
            return;
        }
        let (wakers, orphans) = driver.lock().harvest();
        wakers.into_iter().for_each(Waker::wake);
        drop(orphans);
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

    /// Reaps what has completed, without waiting: the wakers of the futures
    /// now done (and of those waiting for room, when some came free), and
    /// what dropped futures left, to drop outside the lock.
    fn harvest(&mut self) -> (Vec<Waker>, Vec<Box<dyn Any + Send>>) {
        let mut wakers = Vec::new();
        let mut orphans = Vec::new();
        // A failed reap still hands over what it took first; what it could
        // not take waits for the next one (the descriptor stays readable).
        let _ = self.engine.reap(0, DEPTH as usize, &mut self.reaped);
        let came = self.reaped.len();
        let mut reaped = std::mem::take(&mut self.reaped);
        for completion in reaped.drain(..) {
            let slot = completion.user_data as u32;
            match std::mem::replace(&mut self.slots[slot as usize], Slot::Free) {
                Slot::Waiting(waker) => {
                    self.slots[slot as usize] = Slot::Done(completion.result);
                    wakers.extend(waker);
                }
                Slot::Orphan(keep) => {
                    self.free.push(slot);
                    orphans.push(keep);
                }
                other => self.slots[slot as usize] = other,
            }
        }
        self.reaped = reaped;
        if came > 0 {
            wakers.append(&mut self.room);
        }
        (wakers, orphans)
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
    /// This future commits what is queued at its next poll (see
    /// [`State::commit_due`]).
    committer: bool,
}

impl<K: Send + Unpin + 'static> Op<K> {
    pub(crate) fn new(driver: &'static Driver, request: Request, keep: K) -> Op<K> {
        Op {
            driver,
            request: Some(request),
            keep: Some(keep),
            slot: None,
            committer: false,
        }
    }
}

impl<K: Send + Unpin + 'static> Future for Op<K> {
    /// The request's result (bytes moved, or the kernel's error), and what it used.
    type Output = (io::Result<usize>, K);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
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
                        state.slots[slot as usize] = Slot::Waiting(Some(cx.waker().clone()));
                        if state.commit_due {
                            // Another future's commit takes it down.
                            return Poll::Pending;
                        }
                        // Commit at the next poll, after the other tasks
                        // ready now have queued theirs: one system call for
                        // all (32 reads woken by one harvest made 32 before).
                        state.commit_due = true;
                        this.committer = true;
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    QueueOutcome::Completed(completion) => {
                        state.free.push(slot);
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
        if this.committer {
            match state.engine.commit() {
                Ok(_) => {
                    this.committer = false;
                    state.commit_due = false;
                }
                // The engine retries transient refusals itself: this one
                // lasted. The requests stay queued (their buffers with their
                // futures); the next poll tries again.
                Err(error) => {
                    eprintln!("hybrio-tokio: commit failed, trying again: {error}");
                    cx.waker().wake_by_ref();
                }
            }
        }
        // What completed inside the submit (a page-cache hit), or since.
        let (wakers, orphans) = state.harvest();
        let result = match &mut state.slots[slot as usize] {
            Slot::Done(result) => Some(*result),
            Slot::Waiting(waker) => {
                *waker = Some(cx.waker().clone());
                None
            }
            Slot::Free | Slot::Orphan(_) => unreachable!("a live future's slot is its own"),
        };
        if result.is_some() {
            state.release(slot);
            this.slot = None;
        }
        drop(state);
        wakers.into_iter().for_each(Waker::wake);
        drop(orphans);
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
        let Some(slot) = self.slot else { return };
        let mut state = self.driver.lock();
        if self.committer {
            // The others' requests wait for this commit: it happens now. A
            // failure leaves them queued, for the next future's commit.
            state.commit_due = false;
            let _ = state.engine.commit();
        }
        match &state.slots[slot as usize] {
            Slot::Done(_) => state.release(slot),
            _ => {
                // Still in the engine: the kernel may use the buffer until
                // the completion comes, which frees it.
                let keep: Box<dyn Any + Send> = Box::new(self.keep.take());
                state.slots[slot as usize] = Slot::Orphan(keep);
            }
        }
    }
}
