//! Who reaps the engine's completions: a task in the reactor of each
//! runtime that has one, and the driver's own thread for everything else.
//!
//! A task registered in a runtime's reactor (`tokio::io::unix::AsyncFd` on
//! the engine's completion descriptor) is woken in the worker that waits in
//! `epoll`, and the futures it wakes run on that worker, with no thread in
//! between. The worker that committed a batch is usually the one the kernel
//! interrupts to post its completions, so a batch often costs one wake-up.
//! The driver's thread, waking futures from outside the runtime, costs one
//! more each time (see docs/tokio-design.md, "Completions in the reactor").
//!
//! The thread watches the engine only while some future waits where no
//! reactor reaps for it (outside a runtime, in a runtime built without an
//! I/O driver), while requests of dropped futures are in the engine (their
//! buffers are freed only when they are reaped, and the runtimes whose
//! reactors could reap them may have shut down or sit undriven), or once
//! the last reactor task is gone.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::io::unix::AsyncFd;
use tokio::runtime::{Handle, Id};

use crate::sys;

/// Who reaps a completion.
#[derive(Clone, Copy)]
pub(super) enum Reaper {
    /// The future whose poll submitted or looked again.
    Poll,
    /// A task in a runtime's reactor.
    Reactor,
    /// The driver's own thread.
    Thread,
}

/// What a reaper does once the engine's completion descriptor is readable
/// (the driver: reap, and wake the futures whose requests are done).
pub(super) trait Harvest: Sync {
    fn wake_completed(&self, by: Reaper);
}

/// Runtimes without an I/O driver remembered at once; one forgotten and
/// met again is probed again.
const REMEMBERED_WITHOUT_REACTOR: usize = 64;

pub(super) struct Reapers {
    /// A clone of the engine's completion descriptor, cloned again for each
    /// registration.
    completions: OwnedFd,
    /// The runtimes with a reaper in their reactor, and those found to
    /// have no reactor.
    runtimes: Mutex<Runtimes>,
    /// Reaper tasks alive.
    live: AtomicUsize,
    /// Futures waiting where no reaper task reaps for them.
    unwatched: AtomicUsize,
    /// Requests in the engine whose futures were dropped: what they hold
    /// is freed only when they are reaped, and a reaper task may sit in a
    /// runtime no one drives (a current-thread runtime outside `block_on`).
    orphans: AtomicUsize,
    /// Raised to have the driver's thread look again at the counts above.
    nudge: OwnedFd,
}

#[derive(Default)]
struct Runtimes {
    reaped: Vec<Id>,
    without_reactor: std::collections::VecDeque<Id>,
}

thread_local! {
    /// The runtime this thread last asked about, and whether a reaper task
    /// reaps in its reactor: a runtime's id is never reused, so the answer
    /// holds while the runtime lives.
    static LAST_ASKED: std::cell::Cell<Option<(Id, bool)>> = const { std::cell::Cell::new(None) };
}

impl Reapers {
    pub(super) fn new(completions: OwnedFd) -> std::io::Result<Reapers> {
        Ok(Reapers {
            completions,
            runtimes: Mutex::default(),
            live: AtomicUsize::new(0),
            unwatched: AtomicUsize::new(0),
            orphans: AtomicUsize::new(0),
            nudge: sys::nudge_fd()?,
        })
    }

    /// Whether a reaper task reaps in the reactor of the runtime this thread
    /// runs in, starting one if the runtime has none yet and has a reactor.
    pub(super) fn reaped_here(&'static self, harvest: &'static dyn Harvest) -> bool {
        let Ok(handle) = Handle::try_current() else {
            return false;
        };
        let id = handle.id();
        if let Some((asked, reaped)) = LAST_ASKED.get()
            && asked == id
        {
            return reaped;
        }
        match self.reaper_for(&handle, id, harvest) {
            Some(reaped) => {
                LAST_ASKED.set(Some((id, reaped)));
                reaped
            }
            None => false,
        }
    }

    /// Whether a reaper task reaps in the reactor of runtime `id`; `None`
    /// when that is not known yet (no descriptor was left to register: the
    /// driver's thread serves this wait, and the next one asks again).
    fn reaper_for(
        &'static self,
        handle: &Handle,
        id: Id,
        harvest: &'static dyn Harvest,
    ) -> Option<bool> {
        let completions = {
            let mut runtimes = self.runtimes.lock().unwrap_or_else(PoisonError::into_inner);
            if runtimes.reaped.contains(&id) {
                return Some(true);
            }
            if runtimes.without_reactor.contains(&id) {
                return Some(false);
            }
            let fd = self.completions.try_clone().ok()?;
            let Some(completions) = sys::register_in_reactor(fd) else {
                if runtimes.without_reactor.len() == REMEMBERED_WITHOUT_REACTOR {
                    runtimes.without_reactor.pop_front();
                }
                runtimes.without_reactor.push_back(id);
                return Some(false);
            };
            runtimes.reaped.push(id);
            if self.live.fetch_add(1, Ordering::SeqCst) == 0 {
                // The driver's thread stops watching the engine.
                sys::raise(self.nudge.as_fd());
            }
            completions
        };
        // Spawned outside the lock: a runtime shutting down drops the task
        // at once, and `Alive` takes the lock to hand its work back to the
        // driver's thread.
        let alive = Alive { reapers: self, id };
        drop(handle.spawn(reap_in_reactor(harvest, completions, alive)));
        Some(true)
    }

    /// A future now waits (`true`) or no longer waits (`false`) where no
    /// reaper task reaps for it.
    pub(super) fn set_unwatched(&self, unwatched: bool) {
        if unwatched {
            if self.unwatched.fetch_add(1, Ordering::SeqCst) == 0 {
                sys::raise(self.nudge.as_fd());
            }
        } else {
            self.unwatched.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// A future was dropped while its request is in the engine.
    pub(super) fn orphaned(&self) {
        if self.orphans.fetch_add(1, Ordering::SeqCst) == 0 {
            sys::raise(self.nudge.as_fd());
        }
    }

    /// `count` requests of dropped futures were reaped.
    pub(super) fn orphans_reaped(&self, count: usize) {
        if count > 0 {
            self.orphans.fetch_sub(count, Ordering::SeqCst);
        }
    }

    /// Whether the driver's thread must watch the engine itself.
    fn thread_watches(&self) -> bool {
        self.live.load(Ordering::SeqCst) == 0
            || self.unwatched.load(Ordering::SeqCst) > 0
            || self.orphans.load(Ordering::SeqCst) > 0
    }
}

/// Held by a reaper task while it lives.
struct Alive {
    reapers: &'static Reapers,
    id: Id,
}

impl Drop for Alive {
    fn drop(&mut self) {
        let reapers = self.reapers;
        reapers
            .runtimes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .reaped
            .retain(|id| *id != self.id);
        if reapers.live.fetch_sub(1, Ordering::SeqCst) == 1 {
            sys::raise(reapers.nudge.as_fd());
        }
    }
}

/// A runtime's reaper: waits in the runtime's reactor for the completion
/// descriptor to be readable, then hands what completed to the futures.
async fn reap_in_reactor(
    harvest: &'static dyn Harvest,
    completions: AsyncFd<OwnedFd>,
    _alive: Alive,
) {
    loop {
        let Ok(mut ready) = completions.readable().await else {
            // The reactor is gone (its runtime shutting down): the driver's
            // thread takes over when `_alive` is dropped.
            return;
        };
        // Cleared before reaping: a completion posted after the reap sets
        // the readiness again.
        ready.clear_ready();
        harvest.wake_completed(Reaper::Reactor);
    }
}

/// The driver's thread: reaps while some future waits where no reaper task
/// does, and otherwise sleeps until told to look again.
pub(super) fn reap_forever(reapers: &Reapers, harvest: &dyn Harvest) {
    loop {
        let watches = reapers.thread_watches();
        let completions = watches.then(|| reapers.completions.as_fd());
        if let Err(error) = sys::wait_readable_either(reapers.nudge.as_fd(), completions) {
            // Nothing sensible is left to wait on: futures still waiting are
            // woken by the next submission's harvest.
            eprintln!("hybrio-tokio: waiting for completions failed: {error}");
            return;
        }
        sys::clear(reapers.nudge.as_fd());
        if watches {
            harvest.wake_completed(Reaper::Thread);
        }
    }
}
