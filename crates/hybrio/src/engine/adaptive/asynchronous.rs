//! The asynchronous side of the adaptive engine: handing requests over to
//! the engines of [`backend`](super::backend), where the caller's files are
//! aliases at the caller's handles, and reaping with the caller's tags put
//! back on the timed requests.

use std::fs::File;

use super::backend::{AsyncBackend, Backend, Slot};
use super::path::Path;
use super::state::{AdaptiveEngine, Appends};
use crate::Error;
use crate::engine::api::QueueOutcome;
use crate::engine::inline::InlinePath;
use crate::engine::retry::{Track, Verdict};
use crate::file::FileHandle;
use crate::request::{Completion, Marks, Op, Request};

impl<I: InlinePath, B: AsyncBackend> AdaptiveEngine<I, B> {
    /// The request's slot for its trip through the asynchronous engine.
    pub(super) fn take_slot(&mut self, slot: Slot) -> u32 {
        match self.free_slots.pop() {
            Some(index) => {
                self.slots[index as usize] = slot;
                index
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Puts the caller's tag back on a completion of a timed request, and
    /// records what it cost, at `now` (read once for the reap, when the
    /// first timed completion needs it).
    #[inline(always)]
    pub(super) fn finish_async(&mut self, completion: &mut Completion, now: &mut Option<u64>) {
        if completion.marks.take(Marks::TIMED) {
            self.finish_timed(completion, now);
        }
    }

    /// [`finish_async`](Self::finish_async) for a timed request: its slot
    /// has the caller's tag and what to record.
    #[inline(never)]
    fn finish_timed(&mut self, completion: &mut Completion, now: &mut Option<u64>) {
        let index = completion.user_data as u32;
        let slot = self.slots[index as usize];
        self.free_slots.push(index);
        self.timed_out -= 1;
        completion.user_data = slot.user_data;
        if let Some(sent) = slot.sent {
            self.finish_rest(completion, sent);
            return;
        }
        // A failure's latency says nothing about the path.
        if completion.result < 0 {
            return;
        }
        let now = *now.get_or_insert_with(|| self.time.now());
        self.record(
            Path::Async,
            (completion.file, usize::from(slot.class)),
            slot.epoch,
            (slot.queued_ns, now.saturating_sub(slot.queued_ns)),
            now,
        );
    }

    /// Reaps from the asynchronous engines, waiting for `min` (at most what
    /// they hold), and gives the completions their caller's tag and handle.
    #[inline(always)]
    pub(super) fn reap_async(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let in_flight = self.async_in_flight();
        if in_flight == 0 || max == 0 {
            return Ok(0);
        }
        let min = min.min(in_flight);
        if self.backends.len() == 1 {
            return self.reap_from(0, min, max, out);
        }
        self.reap_two(min, max, out)
    }

    /// [`reap_async`](Self::reap_async) with two asynchronous engines.
    #[inline(never)]
    fn reap_two(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let mut holding = (0..self.backends.len()).filter(|&b| self.backends[b].in_flight() > 0);
        if let (Some(only), None) = (holding.next(), holding.next()) {
            return self.reap_from(only, min, max, out);
        }
        // Two engines hold requests (buffered and O_DIRECT files at once:
        // with io_uring, once an O_DIRECT file written past its end brought
        // libaio in): take what either has, then wait on the one holding more
        // committed requests. They have no common wait, so a
        // completion of the other can wait behind it; each of them completes
        // on its own, so none is lost.
        let mut got = 0;
        for backend in 0..self.backends.len() {
            if got < max && self.backends[backend].in_flight() > 0 {
                got += self.reap_from(backend, 0, max - got, out)?;
            }
        }
        while got < min && got < max {
            // The one holding more committed requests first. The count kept
            // here can fall short of what an engine has committed: requests
            // handed to it after a commit may complete before the next one
            // (an SQPOLL thread takes them as they come; a request sent
            // again takes the queued ones down with it), and the count is
            // right again only at the next commit. So each engine holding
            // requests is asked in turn for all that is still wanted: an
            // engine waits only for what was committed to it, and one with
            // nothing committed answers at once.
            let first = (0..self.backends.len())
                .rev()
                .max_by_key(|&b| self.backends[b].committed())
                .unwrap_or(0);
            let others = (0..self.backends.len()).filter(|&b| b != first);
            let mut reaped = 0;
            for backend in std::iter::once(first).chain(others) {
                if self.backends[backend].in_flight() > 0 {
                    reaped = self.reap_from(backend, min - got, max - got, out)?;
                    if reaped > 0 {
                        break;
                    }
                }
            }
            if reaped == 0 {
                // Nothing committed anywhere, or an engine that had some
                // waited for none: come back to the caller rather than ask
                // again for ever.
                break;
            }
            got += reaped;
        }
        Ok(got)
    }

    /// Reaps from one asynchronous engine, waiting for `min` of its requests.
    /// When it fails, the completions it appended first are the caller's
    /// all the same: they are translated before the error goes up.
    #[inline(always)]
    pub(super) fn reap_from(
        &mut self,
        backend: usize,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let start = out.len();
        let result = self.backends[backend].engine.reap(min, max, out);
        self.async_reaped += (out.len() - start) as u64;
        // While no timed request is out, the completions are the caller's as
        // they are (nearly every reap of a settled class).
        if self.timed_out > 0 {
            self.finish_timed_from(start, out);
        }
        // The engine's own answer (its count is what it appended): made
        // anew, the result was taken apart and built again.
        result
    }

    /// Gives the timed completions among `out[start..]` their caller's tag
    /// and records what they cost.
    #[inline(never)]
    fn finish_timed_from(&mut self, start: usize, out: &mut [Completion]) {
        let mut now = None;
        for completion in &mut out[start..] {
            self.finish_async(completion, &mut now);
        }
    }

    /// Whether `result` is a send tried inline that went in part, which the
    /// engine finishes itself.
    #[inline]
    pub(super) fn sent_in_part(&self, request: &Request, result: i64) -> bool {
        request.op == Op::Send && result > 0 && (result as u64) < request.len() as u64
    }

    /// Sends the rest of `request`, which went `sent` bytes in part when
    /// tried inline, asynchronous: its completion adds what went inline and
    /// puts the caller's window and offset back ([`Slot::sent`]).
    #[cold]
    pub(super) fn send_rest_async(
        &mut self,
        mut request: Request,
        key: usize,
        sent: i64,
    ) -> QueueOutcome {
        let mut track = None;
        if let Verdict::Done(result) = self.retry.settle_request(&mut request, &mut track, sent) {
            return self.deliver(request.complete(result));
        }
        self.counts.asynchronous += 1;
        let slot = Slot {
            sent: track,
            ..Slot::timed(0, 0, 0)
        };
        self.queue_timed(request, key, slot)
    }

    /// The caller's answer to a send whose rest went asynchronous: what went
    /// inline plus what the rest moved, with the window and offset it was
    /// queued with.
    fn finish_rest(&mut self, completion: &mut Completion, sent: Track) {
        self.retry.end_completion(completion, &mut Some(sent));
    }

    /// Hands `request` to the asynchronous engine of lane `key`'s file with
    /// a slot: timed, or the rest of a send. It goes marked, its
    /// `user_data` the slot's index; the caller's is in the slot.
    #[inline(never)]
    pub(super) fn queue_timed(
        &mut self,
        mut request: Request,
        key: usize,
        slot: Slot,
    ) -> QueueOutcome {
        let slot = self.take_slot(Slot {
            user_data: request.user_data,
            ..slot
        });
        request.user_data = u64::from(slot);
        request.marks.set(Marks::TIMED, true);
        self.timed_out += 1;
        self.queue_async(request, key)
    }

    /// Hands `request` to the asynchronous engine of lane `key`'s file.
    #[inline(always)]
    pub(super) fn queue_async(&mut self, request: Request, key: usize) -> QueueOutcome {
        self.async_queued += 1;
        let lane = &mut self.lanes[key];
        lane.async_mark = self.async_queued;
        let backend = usize::from(lane.backend);
        let target = &mut self.backends[backend];
        target.uncommitted += 1;
        let outcome = target.engine.queue(request);
        if let QueueOutcome::Queued = outcome {
            // Nothing to drop (matched and left, the outcome was dropped by
            // a call; handed on, it was copied whole).
            std::mem::forget(outcome);
            return QueueOutcome::Queued;
        }
        self.handed_back(outcome, backend, key)
    }

    /// The asynchronous engine did not keep a request: it completed it at
    /// once, or refused it for a moment of its own. `key` is its lane.
    #[cold]
    pub(super) fn handed_back(
        &mut self,
        outcome: QueueOutcome,
        backend: usize,
        key: usize,
    ) -> QueueOutcome {
        self.backends[backend].uncommitted -= 1;
        // Back at once, or never gone: either way no longer out.
        self.async_reaped += 1;
        match outcome {
            QueueOutcome::Queued => QueueOutcome::Queued,
            QueueOutcome::Completed(mut completion) => {
                self.finish_async(&mut completion, &mut None);
                self.deliver(completion)
            }
            QueueOutcome::Busy(mut request) => {
                // Counted as asynchronous where it was routed (a timed one
                // in `queue_routed`; one that went straight, when its lane's
                // count is taken): it is not.
                let lane = &mut self.lanes[key];
                let mut sent = None;
                if request.marks.take(Marks::TIMED) {
                    let slot = request.user_data as u32;
                    self.counts.asynchronous -= 1;
                    self.timed_out -= 1;
                    request.user_data = self.slots[slot as usize].user_data;
                    sent = self.slots[slot as usize].sent;
                    self.free_slots.push(slot);
                } else {
                    lane.granted -= 1;
                }
                // The engine is below its depth (`queue` checked), so the
                // backend refused for a moment of its own (an SQ that looks
                // full): the request runs inline instead, never `Busy` below
                // the depth.
                self.counts.inline += 1;
                let result = self.inline.run_in_place(&mut request);
                let mut completion = request.complete(result);
                if let Some(sent) = sent {
                    self.finish_rest(&mut completion, sent);
                }
                self.deliver(completion)
            }
        }
    }

    /// Adds `file` (an alias of its descriptor, at the caller's handle
    /// `handle`) to the asynchronous engine that takes it; returns which.
    pub(super) fn add_async_alias(
        &mut self,
        handle: FileHandle,
        file: &File,
        path: &std::path::Path,
        direct: bool,
    ) -> Result<usize, Error> {
        let backend = match self.appends {
            // With a second asynchronous engine (libaio, no io_uring), it
            // takes the O_DIRECT files.
            Appends::Same => usize::from(direct && self.backends.len() > 1),
            // With io_uring, the O_DIRECT files written past their end, and
            // once there is one, every O_DIRECT file (see
            // `gather_direct_files`).
            Appends::Backend(appends) if direct => appends,
            _ if direct && super::appends::grows_by_direct_writes(file, path) => {
                match self.appends_backend() {
                    Some(appends) => {
                        self.gather_direct_files(appends);
                        appends
                    }
                    None => 0,
                }
            }
            _ => 0,
        };
        self.backends[backend]
            .engine
            .add_alias(handle, file, path, direct)?;
        Ok(backend)
    }

    /// The asynchronous engine for `O_DIRECT` files written past their end,
    /// made with the first of them; `None` where there is none better than
    /// the one for the other files.
    fn appends_backend(&mut self) -> Option<usize> {
        match &self.appends {
            Appends::Backend(backend) => Some(*backend),
            Appends::Same => None,
            Appends::NotYet(config) => match B::for_appends(config) {
                Some(engine) => {
                    self.backends.push(Backend::new(engine));
                    let backend = self.backends.len() - 1;
                    self.appends = Appends::Backend(backend);
                    Some(backend)
                }
                None => {
                    self.appends = Appends::Same;
                    None
                }
            },
        }
    }
}
