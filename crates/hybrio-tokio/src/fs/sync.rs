//! Syncs of one file asked for at once by many tasks share one system call
//! (group commit, as a database's log does).
//!
//! A sync covers what was written before it started. So a task that asks
//! while another task's sync is in flight cannot count on that one: it
//! waits for the next sync, which starts once the one in flight ends and
//! serves every task that asked in the meantime. Sixteen tasks appending to
//! a log and syncing each record then make about one `fdatasync` per
//! journal commit, not sixteen (see docs/tokio-design.md, "The log").
//!
//! A sync ends for the waiting tasks when its completion is reaped, even
//! if the task that made it is no longer polled or was dropped. A failed
//! sync's error goes to every task it served. A task whose sync was
//! followed by more syncs before it looked gets the first error among
//! them, if any: never a success that hides a failure after its call.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

/// Failed syncs remembered for the tasks they served (each looks at once
/// when woken, so a few are plenty).
const FAILURES_KEPT: usize = 16;

/// The syncs of one file, of one kind (data only, or data and metadata).
#[derive(Default)]
pub(crate) struct SyncGroup {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Syncs started so far; each takes the next number.
    started: u64,
    /// The sync in flight, if any.
    in_flight: Option<u64>,
    /// The highest-numbered sync done: each sync covers everything written
    /// before any earlier one started.
    finished: u64,
    /// The last failed syncs, with the kernel's errno.
    failed: VecDeque<(u64, i32)>,
    /// Tasks waiting for a sync to end.
    waiting: Vec<Waker>,
}

impl std::fmt::Debug for SyncGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("SyncGroup")
            .field("started", &state.started)
            .field("in_flight", &state.in_flight)
            .field("finished", &state.finished)
            .finish()
    }
}

/// What a task asking for a sync does next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    /// Make sync number `.0` itself, then report it with [`SyncGroup::end`].
    Lead(u64),
    /// Wait for a sync numbered at least `.0` (one that starts after the ask).
    Wait(u64),
}

/// What a waiting task found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Waited {
    /// A sync that started after its ask ended: `Ok`, or the errno.
    Done(Result<(), i32>),
    /// None is in flight: make sync number `.0` itself.
    Lead(u64),
}

impl SyncGroup {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is changed in whole steps that never panic midway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A task asks for a sync now.
    pub(crate) fn ask(&self) -> Turn {
        let mut state = self.lock();
        match state.in_flight {
            Some(number) => Turn::Wait(number + 1),
            None => Turn::Lead(state.start()),
        }
    }

    /// A waiting task looks again: the result once a sync numbered `needs`
    /// or more has ended (`Ok` or the errno); the lead when none is in
    /// flight (the last one ended, or its task gave up before it did).
    pub(crate) fn poll_wait(&self, needs: u64, cx: &mut Context<'_>) -> Poll<Waited> {
        let mut state = self.lock();
        if state.finished >= needs {
            let failure = state
                .failed
                .iter()
                .find(|(number, _)| (needs..=state.finished).contains(number));
            return Poll::Ready(Waited::Done(match failure {
                Some(&(_, errno)) => Err(errno),
                None => Ok(()),
            }));
        }
        if state.in_flight.is_none() {
            return Poll::Ready(Waited::Lead(state.start()));
        }
        state.waiting.push(cx.waker().clone());
        Poll::Pending
    }

    /// Sync `number` ended with `result` (an errno on failure), or never
    /// reached the kernel (`None`: its task's future was dropped first):
    /// the waiting tasks look again.
    pub(crate) fn end(&self, number: u64, result: Option<Result<(), i32>>) {
        let wakers = {
            let mut state = self.lock();
            if state.in_flight == Some(number) {
                state.in_flight = None;
            }
            if let Some(result) = result {
                state.finished = state.finished.max(number);
                if let Err(errno) = result {
                    if state.failed.len() == FAILURES_KEPT {
                        state.failed.pop_front();
                    }
                    state.failed.push_back((number, errno));
                }
            }
            std::mem::take(&mut state.waiting)
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl SyncGroup {
    /// A sync's end as [`end`](Self::end) takes it, from its request's
    /// result: `-ECANCELED` is a request that never reached the engine.
    pub(crate) fn outcome(result: i64) -> Option<Result<(), i32>> {
        match result {
            0.. => Some(Ok(())),
            _ if result == -i64::from(libc::ECANCELED) => None,
            _ => Some(Err((-result) as i32)),
        }
    }
}

impl State {
    fn start(&mut self) -> u64 {
        self.started += 1;
        self.in_flight = Some(self.started);
        self.started
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn look(group: &SyncGroup, needs: u64, wakes: &Arc<Wakes>) -> Poll<Waited> {
        let waker = Waker::from(wakes.clone());
        group.poll_wait(needs, &mut Context::from_waker(&waker))
    }

    #[test]
    fn tasks_asking_while_a_sync_is_in_flight_share_the_next_one() {
        let group = SyncGroup::default();
        assert_eq!(group.ask(), Turn::Lead(1));
        // Sync 1 may have started before their writes: they need sync 2.
        let wakes = Arc::new(Wakes::default());
        for _ in 0..15 {
            assert_eq!(group.ask(), Turn::Wait(2));
            assert!(look(&group, 2, &wakes).is_pending());
        }
        group.end(1, Some(Ok(())));
        assert_eq!(
            wakes.0.load(Ordering::SeqCst),
            15,
            "each waiting task woken"
        );
        // The first to look leads sync 2; the others wait for it.
        assert_eq!(look(&group, 2, &wakes), Poll::Ready(Waited::Lead(2)));
        for _ in 0..14 {
            assert!(look(&group, 2, &wakes).is_pending());
        }
        // A task asking now needs sync 3: sync 2 may have started before.
        assert_eq!(group.ask(), Turn::Wait(3));
        group.end(2, Some(Ok(())));
        for _ in 0..14 {
            assert_eq!(look(&group, 2, &wakes), Poll::Ready(Waited::Done(Ok(()))));
        }
        assert_eq!(look(&group, 3, &wakes), Poll::Ready(Waited::Lead(3)));
    }

    #[test]
    fn a_failed_sync_fails_every_task_it_served_and_no_later_success_hides_it() {
        let group = SyncGroup::default();
        assert_eq!(group.ask(), Turn::Lead(1));
        assert_eq!(group.ask(), Turn::Wait(2));
        let wakes = Arc::new(Wakes::default());
        group.end(1, Some(Ok(())));
        assert_eq!(look(&group, 2, &wakes), Poll::Ready(Waited::Lead(2)));
        group.end(2, Some(Err(libc::EIO)));
        assert_eq!(
            look(&group, 2, &wakes),
            Poll::Ready(Waited::Done(Err(libc::EIO)))
        );
        // Sync 3 succeeds before a task needing 2 looks: the failure of 2
        // still reaches it.
        assert_eq!(group.ask(), Turn::Lead(3));
        group.end(3, Some(Ok(())));
        assert_eq!(
            look(&group, 2, &wakes),
            Poll::Ready(Waited::Done(Err(libc::EIO)))
        );
        assert_eq!(look(&group, 3, &wakes), Poll::Ready(Waited::Done(Ok(()))));
    }

    #[test]
    fn a_sync_given_up_by_its_task_hands_the_lead_to_a_waiting_one() {
        let group = SyncGroup::default();
        assert_eq!(group.ask(), Turn::Lead(1));
        assert_eq!(group.ask(), Turn::Wait(2));
        let wakes = Arc::new(Wakes::default());
        assert!(look(&group, 2, &wakes).is_pending());
        // The leader's future dropped before sync 1's result came.
        group.end(1, None);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        assert_eq!(look(&group, 2, &wakes), Poll::Ready(Waited::Lead(2)));
        // Nothing counts as done: sync 1's result never came.
        assert_eq!(group.ask(), Turn::Wait(3));
        group.end(2, Some(Ok(())));
        assert_eq!(look(&group, 2, &wakes), Poll::Ready(Waited::Done(Ok(()))));
    }
}
