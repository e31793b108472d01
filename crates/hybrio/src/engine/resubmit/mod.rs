//! The resubmission layer, over injected faults (every engine applies the
//! [rule](super::retry) itself, but not to faults injected above it): short
//! transfers are sent again for the rest and "try again" errors retried, so
//! that an engine under injected faults answers as it does without them.
//!
//! The caller gets back its request as it queued it: original offset, the
//! buffer's window exactly as it was, its `user_data`, and the total number
//! of bytes moved. A request is reported once, when finished, never in part.
//!
//! Requests being resubmitted are recognised by their buffer, unique among
//! requests in flight (the caller's `user_data` may be anything, twice the
//! same included). Only requests that came back short or were retried get a
//! record, so the common path costs a test of the result and no lookup.

use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;

use super::api::{Engine, EngineConfig, EngineCounters, EngineKind, QueueOutcome};
use super::inflight::{InFlight, Key};
use super::retry::{Retry, Track, Verdict, owed};
use crate::Error;
use crate::file::{Caching, FileHandle};
use crate::request::{Completion, Request};

/// A request to send again once the engine below has room.
#[derive(Debug)]
struct Pending {
    request: Request,
    track: Track,
    /// Queued by the caller but not yet committed by it: its commit counts
    /// it (and this layer commits it after that).
    fresh: bool,
}

/// What a completion from below means for the caller.
#[derive(Debug)]
enum Settled {
    /// The request is finished: hand this to the caller.
    Done(Completion),
    /// The request goes down again, as it is now.
    Again(Request, Track),
}

/// Sends short transfers again for the rest and retries "try again" errors,
/// over any engine. See the [module documentation](self).
#[derive(Debug)]
pub(crate) struct Resubmit<E> {
    inner: E,
    /// The rule, and what it counted.
    pub(super) retry: Retry,
    depth: usize,
    /// Records of the requests being sent again that are inside `inner`.
    tracker: InFlight<Track>,
    /// Requests to send again that `inner` had no room for yet.
    requeue: VecDeque<Pending>,
    /// Requests finished outside [`Engine::reap`], waiting to be reaped.
    ready: VecDeque<Completion>,
    /// Resubmissions queued in `inner` and not committed: `inner`'s next
    /// commit counts them, the caller's must not.
    dirty: usize,
    /// Caller's requests this layer committed with its resubmissions: the
    /// caller's next commit counts them.
    early: usize,
    /// Completions being sorted, kept to reuse the allocation.
    scratch: Vec<Completion>,
}

impl<E: Engine> Resubmit<E> {
    /// Wraps `inner`, built with `config`.
    pub(crate) fn new(inner: E, config: &EngineConfig) -> Self {
        Resubmit {
            inner,
            retry: Retry::new(config.nowait),
            depth: config.depth.max(1) as usize,
            tracker: InFlight::new(),
            requeue: VecDeque::new(),
            ready: VecDeque::new(),
            dirty: 0,
            early: 0,
            scratch: Vec::new(),
        }
    }

    /// True when a completion fresh from below is not the caller's answer
    /// as it stands: short, or "try again".
    #[inline]
    fn needs_attention(&self, completion: &Completion) -> bool {
        let len = completion.buf.len() as u64;
        self.needs_attention_given(completion.result, owed(completion.op, len))
    }

    /// [`Self::needs_attention`] for a request of `len` bytes.
    #[inline]
    fn needs_attention_given(&self, result: i64, len: u64) -> bool {
        self.retry.needs_attention(result, len)
    }

    /// Decides what a completion from below means. `track` is the request's
    /// record if it was sent again before.
    fn settle(&mut self, mut completion: Completion, mut track: Option<Track>) -> Settled {
        match self.retry.settle_completion(&mut completion, &mut track) {
            Verdict::Done(_) => Settled::Done(completion),
            Verdict::Again => Settled::Again(
                completion.into_request(),
                track.expect("a request sent again keeps its record"),
            ),
        }
    }

    /// Finishes, inline, a request `inner` completed inline: sends it again
    /// for as long as it needs and `inner` keeps completing it inline.
    #[cold]
    fn complete_inline(&mut self, mut completion: Completion) -> QueueOutcome {
        let mut track = None;
        loop {
            match self.settle(completion, track) {
                Settled::Done(done) => return QueueOutcome::Completed(done),
                Settled::Again(request, again) => {
                    self.retry.take_pause();
                    // Named as it goes down: the caller's memory is known by
                    // the rest's offset and window, not by where it starts.
                    let key = Key::of_request(&request);
                    match self.inner.queue(request) {
                        QueueOutcome::Completed(next) => {
                            completion = next;
                            track = Some(again);
                        }
                        QueueOutcome::Queued => {
                            self.tracker.insert(key, again);
                            return QueueOutcome::Queued;
                        }
                        QueueOutcome::Busy(request) => {
                            // The caller's request is accepted: it goes down
                            // at the next commit or reap.
                            self.requeue.push_back(Pending {
                                request,
                                track: again,
                                fresh: true,
                            });
                            return QueueOutcome::Queued;
                        }
                    }
                }
            }
        }
    }

    /// Queues the requests waiting to be sent again, as many as `inner` takes.
    fn requeue_into_inner(&mut self) {
        while let Some(Pending {
            request,
            track,
            fresh,
        }) = self.requeue.pop_front()
        {
            let key = Key::of_request(&request);
            match self.inner.queue(request) {
                QueueOutcome::Queued => {
                    self.tracker.insert(key, track);
                    if !fresh {
                        self.dirty += 1;
                    }
                }
                QueueOutcome::Busy(request) => {
                    self.requeue.push_front(Pending {
                        request,
                        track,
                        fresh,
                    });
                    return;
                }
                QueueOutcome::Completed(completion) => match self.settle(completion, Some(track)) {
                    Settled::Done(done) => self.ready.push_back(done),
                    Settled::Again(request, track) => {
                        self.retry.take_pause();
                        self.requeue.push_front(Pending {
                            request,
                            track,
                            fresh,
                        });
                    }
                },
            }
        }
    }

    /// Sends the waiting resubmissions down and commits them, so that a
    /// reap can wait for them.
    fn flush(&mut self) -> Result<(), Error> {
        if !self.requeue.is_empty() {
            self.requeue_into_inner();
        }
        // When `inner` is full, commit too: what fills it must be in flight,
        // not waiting for a commit, for a reap to free a slot.
        if self.dirty > 0 || !self.requeue.is_empty() {
            let committed = self.inner.commit()?;
            self.early += committed.saturating_sub(self.dirty);
            self.dirty = 0;
        }
        Ok(())
    }

    /// Takes the completions `inner` appended to `out` from `base` on, keeps
    /// in `out` those that finish a request and sends the others again.
    /// Returns how many finished.
    fn sort_out(&mut self, base: usize, out: &mut Vec<Completion>) -> usize {
        if out.len() == base {
            return 0;
        }
        let mut tail = std::mem::take(&mut self.scratch);
        tail.extend(out.drain(base..));
        let mut finished = 0;
        for completion in tail.drain(..) {
            let track = self.tracker.take(&Key::of_completion(&completion));
            if track.is_none() && !self.needs_attention(&completion) {
                out.push(completion);
                finished += 1;
                continue;
            }
            match self.settle(completion, track) {
                Settled::Done(done) => {
                    out.push(done);
                    finished += 1;
                }
                Settled::Again(request, track) => {
                    self.requeue.push_back(Pending {
                        request,
                        track,
                        fresh: false,
                    });
                }
            }
        }
        self.scratch = tail;
        finished
    }

    /// The fast reap's end: the inner engine's `answer`, completions from
    /// `base` on in `out`, sorted out (what came before a failure is reaped
    /// all the same); any that needs this layer goes the slow way.
    #[inline]
    fn after_inner(
        &mut self,
        base: usize,
        answer: Result<usize, Error>,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let reaped = match answer {
            Ok(reaped) => reaped,
            Err(error) => {
                self.sort_out(base, out);
                return Err(error);
            }
        };
        if out[base..].iter().any(|done| self.needs_attention(done)) {
            return self.reap_slow(min, max, out, Some(base));
        }
        Ok(reaped)
    }

    /// [`Engine::reap`] while requests are being sent again: keeps sending
    /// and reaping until `min` requests have finished (or nothing is left
    /// that could finish). `reaped_from`: `inner` was reaped once already and
    /// its completions appended to `out` from there on.
    #[cold]
    fn reap_slow(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
        reaped_from: Option<usize>,
    ) -> Result<usize, Error> {
        let mut got = 0;
        let mut reaped = false;
        if let Some(base) = reaped_from {
            got += self.sort_out(base, out);
            reaped = true;
        }
        let mut stalled = false;
        loop {
            self.retry.take_pause();
            self.flush()?;
            let ready = self.ready.len().min(max - got);
            out.extend(self.ready.drain(..ready));
            got += ready;
            if got >= max {
                break;
            }
            let want = min.saturating_sub(got);
            if reaped && (want == 0 || (self.inner.in_flight() == 0 && self.requeue.is_empty())) {
                break;
            }
            let before = out.len();
            let reaped_now = self.inner.reap(want, max - got, out);
            // What came before a failure is reaped all the same.
            got += self.sort_out(before, out);
            let reaped_now = reaped_now?;
            reaped = true;
            if reaped_now == 0 && want > 0 {
                // `inner` has nothing committed that could complete. Only a
                // resubmission it had no room for could still change that:
                // try once more, then let the caller come back.
                if stalled || self.requeue.is_empty() {
                    break;
                }
                stalled = true;
            } else {
                stalled = false;
            }
        }
        Ok(got)
    }

    /// [`Engine::queue`] when requests wait to be sent again or the depth
    /// is reached: they go first, and take the room they had.
    #[cold]
    fn queue_behind(&mut self, request: Request) -> QueueOutcome {
        if !self.requeue.is_empty() {
            self.requeue_into_inner();
        }
        if !self.requeue.is_empty() || self.in_flight() >= self.depth {
            return QueueOutcome::Busy(request);
        }
        match self.inner.queue(request) {
            QueueOutcome::Completed(done) if self.needs_attention(&done) => {
                self.complete_inline(done)
            }
            outcome => outcome,
        }
    }
}

impl<E: Engine> Engine for Resubmit<E> {
    fn kind(&self) -> EngineKind {
        self.inner.kind()
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        self.inner.add_file(file, path)
    }

    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        self.inner.set_caching(handle, caching)
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        if !self.requeue.is_empty() || !self.ready.is_empty() {
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight: self.in_flight(),
            });
        }
        self.inner.remove_file(handle)
    }

    #[inline]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        // The depth counts what this layer holds and what the engine below
        // holds beyond its own depth (fault injection's delayed completions).
        if !self.requeue.is_empty() || self.inner.in_flight() + self.ready.len() >= self.depth {
            return self.queue_behind(request);
        }
        // The completion was just stored by the engine below in pieces:
        // reading it back in other pieces (the buffer's window, or the whole
        // outcome copied at once) stalls store forwarding, which cost 15-20
        // ns an I/O on this machine's EPYC. So the length is the request's
        // (engines hand the window back as they got it), and the outcome is
        // moved field by field.
        let len = owed(request.op, request.len() as u64);
        match self.inner.queue(request) {
            QueueOutcome::Completed(done) if self.needs_attention_given(done.result, len) => {
                self.complete_inline(done)
            }
            QueueOutcome::Completed(Completion {
                op,
                file,
                offset,
                buf,
                user_data,
                span,
                result,
            }) => QueueOutcome::Completed(Completion {
                op,
                file,
                offset,
                buf,
                user_data,
                span,
                result,
            }),
            QueueOutcome::Queued => QueueOutcome::Queued,
            QueueOutcome::Busy(request) => QueueOutcome::Busy(request),
        }
    }

    #[inline]
    fn commit(&mut self) -> Result<usize, Error> {
        if !self.requeue.is_empty() {
            self.requeue_into_inner();
        }
        let committed = self.inner.commit()?;
        // The caller's requests still waiting for room below are handed over
        // too: from now on they are this layer's to commit when they go down.
        let waiting = self
            .requeue
            .iter_mut()
            .map(|pending| usize::from(std::mem::replace(&mut pending.fresh, false)))
            .sum::<usize>();
        let handed_over = committed.saturating_sub(self.dirty) + self.early + waiting;
        self.dirty = 0;
        self.early = 0;
        Ok(handed_over)
    }

    #[inline]
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        if !(self.tracker.is_empty() && self.requeue.is_empty() && self.ready.is_empty()) {
            return self.reap_slow(min, max, out, None);
        }
        let base = out.len();
        let answer = self.inner.reap(min, max, out);
        self.after_inner(base, answer, min, max, out)
    }

    fn commit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        if !(self.tracker.is_empty() && self.requeue.is_empty() && self.ready.is_empty()) {
            self.commit()?;
            return self.reap(min, max, out);
        }
        // Nothing of this layer's waits: what commit would count is done with.
        self.dirty = 0;
        self.early = 0;
        let base = out.len();
        match self.inner.commit_and_reap(min, max, out) {
            // The common end, without moving the answer around.
            Ok(reaped) if !out[base..].iter().any(|done| self.needs_attention(done)) => Ok(reaped),
            answer => self.after_inner(base, answer, min, max, out),
        }
    }

    #[inline]
    fn in_flight(&self) -> usize {
        self.inner.in_flight() + self.requeue.len() + self.ready.len()
    }

    fn held(&self) -> usize {
        // A reap hands this layer's finished requests over first.
        self.ready.len() + self.inner.held()
    }

    fn is_synchronous(&self) -> bool {
        self.inner.is_synchronous()
    }

    fn description(&self) -> String {
        self.inner.description()
    }

    fn state(&self) -> String {
        format!(
            "{} waiting to be sent again, {} ready, {} sent again and in flight, {} not yet committed; {}",
            self.requeue.len(),
            self.ready.len(),
            self.tracker.len(),
            self.dirty,
            self.inner.state()
        )
    }

    fn counters(&self) -> EngineCounters {
        self.inner.counters() + self.retry.counters()
    }
}

#[cfg(test)]
pub(super) mod tests;
