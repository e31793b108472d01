//! The rule that makes every engine answer alike: a short transfer is sent
//! again for the rest, a "try again" error is retried, and the caller gets
//! back its request as it queued it, short only at the end of a file or
//! after an error.
//!
//! * A read or write that moves fewer bytes than its window (and more than
//!   none) is sent again for the rest: the buffer's window is
//!   [advanced](crate::buf::Buf::advance) past what was done and the offset
//!   moved on. A read that returns 0 has met the end of the file; a write
//!   that returns 0 cannot make progress: either ends the request with what
//!   was moved.
//! * A resubmission that fails after some bytes moved completes with those
//!   bytes, as `read(2)` does: the rest of an `O_DIRECT` read that met the
//!   end of a file whose size is not a multiple of 512 starts at an
//!   unaligned offset, which a filesystem may refuse with `EINVAL` rather
//!   than report the end of the file.
//! * `EINTR` is retried, and so is `EAGAIN` unless the caller asked for it
//!   ([`EngineConfig::nowait`](super::EngineConfig::nowait)). A request gets
//!   [`RETRY_LIMIT`] consecutive retries, the later ones after a growing
//!   pause (at most 1 ms, once for all the requests one reap retries), then
//!   completes with the error: nothing spins for ever.
//!
//! Every engine applies it where its requests complete: io_uring and libaio
//! at the completion point, with the request still in its slot, sending it
//! again from there; the synchronous engines around the call, and the
//! pool's workers around theirs; the adaptive engine through the engines
//! inside it. Injected faults ([`inject`](super::inject)) come in below it,
//! as the kernel's answers do.

use std::time::Duration;

use super::api::ShortErrors;
use crate::buf::Buf;
pub(crate) use crate::request::Verdict;
use crate::request::{Completion, Op, Request};

/// Consecutive "try again" answers one request may get before it completes
/// with the error (progress resets the count).
pub(crate) const RETRY_LIMIT: u32 = 1000;

/// Retries sent at once; after these, each waits (see [`backoff`]).
const FREE_RETRIES: u32 = 8;

/// Longest pause between two retries of one request.
const MAX_BACKOFF: Duration = Duration::from_millis(1);

/// The pause before retry number `retries` (1-based) of one request: none for
/// the first few (an interrupted call is worth repeating at once), then 1 us
/// doubling up to [`MAX_BACKOFF`], so that a resource shortage the kernel
/// reports as `EAGAIN` has time to clear, and [`RETRY_LIMIT`] retries take
/// about a second in all.
fn backoff(retries: u32) -> Duration {
    if retries <= FREE_RETRIES {
        return Duration::ZERO;
    }
    let exponent = (retries - FREE_RETRIES - 1).min(20);
    Duration::from_micros(1 << exponent).min(MAX_BACKOFF)
}

/// Sleeps for `pause`, if any.
fn pause(pause: Duration) {
    if !pause.is_zero() {
        std::thread::sleep(pause);
    }
}

/// The bytes a request of `op` on `len` bytes must move to be done: all of
/// them, except for a receive, which is whole at any length (one datagram,
/// or a stream's bytes as they come: asking again would wait for more).
#[inline(always)]
pub(crate) fn owed(op: Op, len: u64) -> u64 {
    if op == Op::Recv { 0 } else { len }
}

/// True for an error the kernel wants the request sent again for, by an
/// engine built with `nowait` (or not).
#[inline]
fn retryable(nowait: bool, result: i64) -> bool {
    result == -i64::from(libc::EINTR) || (result == -i64::from(libc::EAGAIN) && !nowait)
}

/// [`Retry::needs_attention`] without the rule at hand: for a place that
/// builds the rule only when an answer needs it (a pool worker).
#[inline]
pub(crate) fn needs_attention(nowait: bool, result: i64, owed: u64) -> bool {
    if result > 0 {
        (result as u64) < owed
    } else {
        result < 0 && retryable(nowait, result)
    }
}

/// What is remembered of a request that is being sent again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Track {
    /// The offset the caller asked for.
    offset: u64,
    /// The buffer's window as the caller queued it.
    start: usize,
    len: usize,
    /// Bytes moved so far.
    done: u64,
    /// "Try again" answers since the last progress.
    pub(crate) retries: u32,
}

impl Track {
    /// The record of a request not sent again yet: as the caller queued it.
    fn of(buf: &Buf, offset: u64) -> Track {
        Track {
            offset,
            start: buf.start(),
            len: buf.len(),
            done: 0,
            retries: 0,
        }
    }

    /// Puts the offset and the window back as the caller queued them.
    fn restore(&self, buf: &mut Buf, offset: &mut u64) {
        if buf.start() != self.start || buf.len() != self.len {
            // From the buffer's start, so that no step leaves the window
            // inside out whatever was done to it on the way.
            buf.rewind();
            buf.set_len(self.start + self.len);
            buf.advance(self.start);
        }
        *offset = self.offset;
    }
}

/// The rule, with what it counted. See the [module documentation](self).
#[derive(Debug)]
pub(crate) struct Retry {
    /// `EAGAIN` is what the caller asked for: pass it through.
    nowait: bool,
    pub(crate) limit: u32,
    /// The longest pause the retries decided since it was last taken
    /// ([`Retry::take_pause`]): one wait for all the requests sent again together.
    pause: Duration,
    pub(crate) short_ios: [u64; 2],
    pub(crate) short_errors: ShortErrors,
    pub(crate) retries: u64,
}

impl Retry {
    /// The rule for an engine built with `nowait` (or not).
    pub(crate) fn new(nowait: bool) -> Retry {
        Retry {
            nowait,
            limit: RETRY_LIMIT,
            pause: Duration::ZERO,
            short_ios: [0; 2],
            short_errors: ShortErrors::default(),
            retries: 0,
        }
    }

    /// True for an error the kernel wants the request sent again for.
    #[inline]
    fn retryable(&self, result: i64) -> bool {
        retryable(self.nowait, result)
    }

    /// True when `result`, for a request that owes `owed` bytes and was not
    /// sent again before, is not the caller's answer as it stands: short,
    /// or "try again".
    #[inline]
    pub(crate) fn needs_attention(&self, result: i64, owed: u64) -> bool {
        needs_attention(self.nowait, result, owed)
    }

    /// The answer `result` to a request whose window is `buf` at `offset`,
    /// still in its slot; `track` is its record, `None` until it is first
    /// sent again. The common case, a whole answer to a request never sent
    /// again, costs a test.
    #[inline(always)]
    pub(crate) fn decide(
        &mut self,
        op: Op,
        buf: &mut Buf,
        offset: &mut u64,
        track: &mut Option<Track>,
        result: i64,
    ) -> Verdict {
        let len = if op.moves_data() { buf.len() as u64 } else { 0 };
        if track.is_none() && !self.needs_attention(result, owed(op, len)) {
            return Verdict::Done(result);
        }
        self.settle(op, buf, offset, track, result)
    }

    /// [`Retry::decide`]'s other cases: moves the window past a short
    /// transfer, counts a retry, or finishes the request.
    #[cold]
    pub(crate) fn settle(
        &mut self,
        op: Op,
        buf: &mut Buf,
        offset: &mut u64,
        track: &mut Option<Track>,
        result: i64,
    ) -> Verdict {
        let record = track.get_or_insert_with(|| Track::of(buf, *offset));
        if result > 0 && op != Op::Recv && op.moves_data() {
            let moved = result as u64;
            record.done += moved;
            record.retries = 0;
            if moved < buf.len() as u64 {
                buf.advance(moved as usize);
                *offset += moved;
                self.short_ios[usize::from(op == Op::Write)] += 1;
                return Verdict::Again;
            }
        } else if result < 0 && self.retryable(result) && record.retries < self.limit {
            record.retries += 1;
            self.retries += 1;
            self.pause = self.pause.max(backoff(record.retries));
            return Verdict::Again;
        }
        Verdict::Done(self.finish(op, buf, offset, track, result))
    }

    /// Sleeps the pause the retries decided since the last call, if any,
    /// before what they decided goes down again.
    pub(crate) fn take_pause(&mut self) {
        pause(std::mem::take(&mut self.pause));
    }

    /// [`Retry::decide`] for `request`, still where it was sent.
    #[inline(always)]
    pub(crate) fn decide_request(
        &mut self,
        request: &mut Request,
        track: &mut Option<Track>,
        result: i64,
    ) -> Verdict {
        let (op, buf, offset) = request.parts_mut();
        self.decide(op, buf, offset, track, result)
    }

    /// [`Retry::settle`] for `request`.
    pub(crate) fn settle_request(
        &mut self,
        request: &mut Request,
        track: &mut Option<Track>,
        result: i64,
    ) -> Verdict {
        let (op, buf, offset) = request.parts_mut();
        self.settle(op, buf, offset, track, result)
    }

    /// [`Retry::finish`] for `request`.
    pub(crate) fn finish_request(
        &mut self,
        request: &mut Request,
        track: &mut Option<Track>,
        result: i64,
    ) -> i64 {
        let (op, buf, offset) = request.parts_mut();
        self.finish(op, buf, offset, track, result)
    }

    /// [`Retry::settle`] for a request already turned into its completion:
    /// on [`Verdict::Done`] the completion carries the answer.
    pub(crate) fn settle_completion(
        &mut self,
        completion: &mut Completion,
        track: &mut Option<Track>,
    ) -> Verdict {
        self.settle_parts(completion, track, false)
    }

    /// Ends a request already turned into its completion, whose answer is
    /// final (the engine that gave it applied the rule): what moved in all,
    /// with the window and offset as queued. Should the rule still ask for
    /// more, the caller gets what moved.
    pub(crate) fn end_completion(
        &mut self,
        completion: &mut Completion,
        track: &mut Option<Track>,
    ) {
        self.settle_parts(completion, track, true);
    }

    /// [`Retry::settle_completion`], and with `last`, no sending again.
    fn settle_parts(
        &mut self,
        completion: &mut Completion,
        track: &mut Option<Track>,
        last: bool,
    ) -> Verdict {
        let Completion {
            op,
            ref mut buf,
            ref mut offset,
            result,
            ..
        } = *completion;
        let verdict = match self.settle(op, buf, offset, track, result) {
            Verdict::Again if last => Verdict::Done(self.finish(op, buf, offset, track, result)),
            verdict => verdict,
        };
        if let Verdict::Done(answer) = verdict {
            completion.result = answer;
        }
        verdict
    }

    /// Ends a request with `result`, the answer to what it last asked for
    /// (whole, at the end of the file (0), failed, or out of retries): after
    /// progress the bytes moved are the answer, not the error that stopped
    /// the rest. Puts its offset and window back as queued.
    pub(crate) fn finish(
        &mut self,
        op: Op,
        buf: &mut Buf,
        offset: &mut u64,
        track: &mut Option<Track>,
        result: i64,
    ) -> i64 {
        let Some(record) = track.take() else {
            return result;
        };
        record.restore(buf, offset);
        if record.done == 0 {
            return result;
        }
        if result < 0 {
            let errno = i32::try_from(-result).unwrap_or(libc::EIO);
            self.short_errors.record(op == Op::Write, errno);
        }
        record.done as i64
    }

    /// The counters, as an engine reports them.
    pub(crate) fn counters(&self) -> super::EngineCounters {
        super::EngineCounters {
            short_ios: self.short_ios,
            short_errors: self.short_errors,
            retries: self.retries,
            ..super::EngineCounters::default()
        }
    }
}
