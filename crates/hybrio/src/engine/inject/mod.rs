//! Fault injection: any engine, made to fail, come back short or late now and
//! then, to test what sits above it (the [resubmission layer](super::open)
//! and the benchmark's error handling) on demand rather than when a disk
//! happens to misbehave.
//!
//! A [`FaultPlan`] gives each fault a probability, e.g.
//! `eio:0.001,short:0.01,eagain:0.01,delay:0.001@5ms,corrupt:0.001`. Every request queued
//! draws once from a small seeded generator (SplitMix64), so a plan and a
//! seed give the same faults run after run, and a request that draws no
//! fault costs the draw and one comparison:
//!
//! * `eio`: the request is not performed; it completes with `-EIO`.
//! * `eagain`: not performed; it completes with `-EAGAIN`, which the
//!   resubmission layer retries (unless the caller asked for `nowait`).
//! * `short`: a read or write is performed with half its window, rounded
//!   down to a multiple of 512 so that `O_DIRECT` stays valid, and completes
//!   with that count and its buffer's window as queued: short. Requests
//!   under 1024 bytes cannot be halved that way and are left alone, and so
//!   are receives and sends: half a datagram cannot be made whole again.
//! * `delay:P@D`: performed normally, its completion delivered at least `D`
//!   later than it would have been: a synchronous engine blocks the caller
//!   for `D` more; an asynchronous one holds the completion back.
//! * `corrupt`: a read is performed normally and comes back with one bit of
//!   what it read flipped, as from a disk or a path that corrupts silently:
//!   what verifying data exists to catch. Other requests are left alone.
//!
//! Faults of `eio` and `eagain` complete inside [`Engine::queue`], as an
//! engine's own early errors do. Errors the engine below produces itself
//! pass through untouched.

pub(super) mod plan;

pub use plan::{DEFAULT_SEED, FaultPlan, FaultPlanError, InjectedCounts};

use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;

use super::api::{Engine, EngineCounters, EngineKind, QueueOutcome};
use super::inflight::{InFlight, Key};
use crate::Error;
use crate::file::{Caching, FileHandle};
use crate::request::{Completion, Request};
use crate::sys::time;

/// Draws are 53-bit, the precision of an `f64` probability.
const DRAW_BITS: u32 = 53;
const ONE: u64 = 1 << DRAW_BITS;

/// Smallest window `short` halves: half of it is the smallest multiple of 512.
const SHORTEST_SHORTENED: usize = 1024;

/// `O_DIRECT`'s alignment, which a shortened window keeps.
const SECTOR: usize = 512;

/// SplitMix64: one add and two multiplies a draw, good enough to pick faults.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    #[inline]
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, ONE)`.
    #[inline]
    fn draw(&mut self) -> u64 {
        self.next() >> (64 - DRAW_BITS)
    }
}

/// What an asynchronous request carried down with a fault still has to
/// have done to its completion.
#[derive(Debug, Clone, Copy)]
enum Mark {
    /// Its window was shortened from this length: restore it.
    Short(usize),
    /// Hold it back.
    Delay,
    /// Flip a bit of what it read, where this draw says.
    Corrupt(u64),
}

/// The fault a draw picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Eio,
    Eagain,
    Short,
    Delay,
    Corrupt,
}

/// An engine with faults injected as a [`FaultPlan`] says. See the
/// [module documentation](self).
///
/// Delayed completions count in [`Engine::in_flight`]; the layer above
/// (which knows the depth) counts them against it, as
/// [`open`](super::open)'s engines do.
#[derive(Debug)]
pub struct Inject<E> {
    inner: E,
    plan: FaultPlan,
    rng: SplitMix64,
    /// A draw below `below[i]` (and above the one before) picks fault `i`
    /// of [`Inject::FAULTS`]; at or above the last, none.
    below: [u64; 5],
    /// `delay_by` in nanoseconds.
    delay_ns: u64,
    counts: InjectedCounts,
    /// Shortened or delayed requests inside `inner`.
    marks: InFlight<Mark>,
    /// Completions held back, with the `CLOCK_MONOTONIC` time (ns) they are
    /// due; in due order, as every delay is the same.
    delayed: VecDeque<(u64, Completion)>,
    /// Completions being sorted, kept to reuse the allocation.
    scratch: Vec<Completion>,
}

impl<E: Engine> Inject<E> {
    const FAULTS: [Fault; 5] = [
        Fault::Eio,
        Fault::Eagain,
        Fault::Short,
        Fault::Delay,
        Fault::Corrupt,
    ];

    /// Wraps `inner`, injecting the faults of `plan`.
    pub fn new(inner: E, plan: FaultPlan) -> Self {
        let mut below = [0; 5];
        let mut sum = 0;
        for (i, p) in [plan.eio, plan.eagain, plan.short, plan.delay, plan.corrupt]
            .into_iter()
            .enumerate()
        {
            // NaN becomes 0 here: `as` saturates and maps NaN to 0.
            let share = (p.clamp(0.0, 1.0) * ONE as f64) as u64;
            sum = (sum + share).min(ONE);
            below[i] = sum;
        }
        Inject {
            inner,
            rng: SplitMix64(plan.seed),
            below,
            delay_ns: u64::try_from(plan.delay_by.as_nanos()).unwrap_or(u64::MAX),
            plan,
            counts: InjectedCounts::default(),
            marks: InFlight::new(),
            delayed: VecDeque::new(),
            scratch: Vec::new(),
        }
    }

    /// The plan it injects.
    pub fn plan(&self) -> &FaultPlan {
        &self.plan
    }

    /// Performs a request that drew a fault.
    #[cold]
    fn queue_faulty(&mut self, mut request: Request, draw: u64) -> QueueOutcome {
        let fault = self
            .below
            .iter()
            .position(|&below| draw < below)
            .map_or(Fault::Corrupt, |i| Self::FAULTS[i]);
        match fault {
            Fault::Eio => {
                self.counts.eio += 1;
                QueueOutcome::Completed(request.complete(-i64::from(libc::EIO)))
            }
            Fault::Eagain => {
                self.counts.eagain += 1;
                QueueOutcome::Completed(request.complete(-i64::from(libc::EAGAIN)))
            }
            Fault::Short => {
                let whole = request.len();
                // A datagram cut in half is two datagrams (sent) or half of
                // one lost (received): the layers above cannot hide that.
                if !request.op.moves_data() || request.op.is_socket() || whole < SHORTEST_SHORTENED
                {
                    return self.inner.queue(request);
                }
                if let Some(buf) = request.buffer_mut() {
                    buf.set_len(whole / 2 / SECTOR * SECTOR);
                }
                // Named as it goes down, shortened (the caller's memory is
                // known by its window).
                let key = Key::of_request(&request);
                match self.inner.queue(request) {
                    QueueOutcome::Completed(mut done) => {
                        self.counts.short += 1;
                        done.buf.set_len(whole);
                        QueueOutcome::Completed(done)
                    }
                    QueueOutcome::Queued => {
                        self.counts.short += 1;
                        self.marks.insert(key, Mark::Short(whole));
                        QueueOutcome::Queued
                    }
                    QueueOutcome::Busy(mut back) => {
                        restore(back.buffer_mut(), whole);
                        QueueOutcome::Busy(back)
                    }
                }
            }
            Fault::Corrupt => {
                if request.op != crate::request::Op::Read {
                    return self.inner.queue(request);
                }
                let key = Key::of_request(&request);
                let at = self.rng.next();
                match self.inner.queue(request) {
                    QueueOutcome::Completed(mut done) => {
                        self.corrupt(&mut done, at);
                        QueueOutcome::Completed(done)
                    }
                    QueueOutcome::Queued => {
                        self.marks.insert(key, Mark::Corrupt(at));
                        QueueOutcome::Queued
                    }
                    busy @ QueueOutcome::Busy(_) => busy,
                }
            }
            Fault::Delay => {
                let key = Key::of_request(&request);
                match self.inner.queue(request) {
                    QueueOutcome::Completed(done) => {
                        self.counts.delay += 1;
                        std::thread::sleep(self.plan.delay_by);
                        QueueOutcome::Completed(done)
                    }
                    QueueOutcome::Queued => {
                        self.counts.delay += 1;
                        self.marks.insert(key, Mark::Delay);
                        QueueOutcome::Queued
                    }
                    busy @ QueueOutcome::Busy(_) => busy,
                }
            }
        }
    }

    /// Flips one bit of what a completed read brought, at a place drawn by
    /// `at`; a read that failed or read nothing is left as it is.
    fn corrupt(&mut self, done: &mut Completion, at: u64) {
        let buf = &mut done.buf;
        let read = usize::try_from(done.result).unwrap_or(0).min(buf.len());
        if read == 0 {
            return;
        }
        let byte = (at >> 3) as usize % read;
        buf.as_mut_slice()[byte] ^= 1 << (at & 7);
        self.counts.corrupt += 1;
    }

    /// Moves the delayed completions that are due to `out`, at most `room`.
    fn deliver_due(&mut self, room: usize, out: &mut Vec<Completion>) -> usize {
        if self.delayed.is_empty() || room == 0 {
            return 0;
        }
        let now = time::monotonic_ns();
        let mut delivered = 0;
        while delivered < room
            && let Some(&(due, _)) = self.delayed.front()
            && due <= now
            && let Some((_, done)) = self.delayed.pop_front()
        {
            out.push(done);
            delivered += 1;
        }
        delivered
    }

    /// Sleeps until the first delayed completion is due.
    fn sleep_until_due(&self) {
        if let Some(&(due, _)) = self.delayed.front() {
            time::sleep_until(due);
        }
    }

    /// Takes the completions `inner` appended to `out` from `base` on, undoes
    /// the shortening of shortened ones and holds delayed ones back. Returns
    /// how many stay in `out`.
    fn sort_out(&mut self, base: usize, out: &mut Vec<Completion>) -> usize {
        if self.marks.is_empty() {
            return out.len() - base;
        }
        let mut tail = std::mem::take(&mut self.scratch);
        tail.extend(out.drain(base..));
        let mut now = None;
        for mut done in tail.drain(..) {
            match self.marks.take(&Key::of_completion(&done)) {
                None => out.push(done),
                Some(Mark::Short(whole)) => {
                    done.buf.set_len(whole);
                    out.push(done);
                }
                Some(Mark::Corrupt(at)) => {
                    self.corrupt(&mut done, at);
                    out.push(done);
                }
                Some(Mark::Delay) => {
                    let now = *now.get_or_insert_with(time::monotonic_ns);
                    self.delayed
                        .push_back((now.saturating_add(self.delay_ns), done));
                }
            }
        }
        self.scratch = tail;
        out.len() - base
    }

    /// [`Engine::reap`] with faults on their way: waits for `min` completions
    /// the caller may see, sleeping for delayed ones when nothing else is
    /// left to wait for.
    #[cold]
    fn reap_slow(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let mut got = 0;
        let mut reaped = false;
        loop {
            got += self.deliver_due(max - got, out);
            if got >= max || (reaped && got >= min) {
                break;
            }
            let want = min.saturating_sub(got);
            if self.inner.in_flight() == 0 {
                if want == 0 || self.delayed.is_empty() {
                    break;
                }
                self.sleep_until_due();
                continue;
            }
            let before = out.len();
            let reaped_now = self.inner.reap(want, max - got, out);
            // What came before a failure is reaped all the same.
            got += self.sort_out(before, out);
            let reaped_now = reaped_now?;
            reaped = true;
            if reaped_now == 0 && want > 0 {
                // Nothing committed below: only held-back completions can come.
                if self.delayed.is_empty() {
                    break;
                }
                self.sleep_until_due();
            }
        }
        Ok(got)
    }
}

/// Gives a shortened buffer its window's length back (its start never moved).
fn restore(buf: Option<&mut crate::buf::Buf>, len: usize) {
    if let Some(buf) = buf {
        buf.set_len(len);
    }
}

impl<E: Engine> Engine for Inject<E> {
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
        if !self.delayed.is_empty() {
            return Err(Error::FileBusy {
                handle: handle.0,
                in_flight: self.in_flight(),
            });
        }
        self.inner.remove_file(handle)
    }

    #[inline]
    fn queue(&mut self, request: Request) -> QueueOutcome {
        let draw = self.rng.draw();
        if draw >= self.below[4] {
            return self.inner.queue(request);
        }
        self.queue_faulty(request, draw)
    }

    #[inline]
    fn commit(&mut self) -> Result<usize, Error> {
        self.inner.commit()
    }

    #[inline]
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        if self.marks.is_empty() && self.delayed.is_empty() {
            return self.inner.reap(min, max, out);
        }
        self.reap_slow(min, max, out)
    }

    #[inline]
    fn in_flight(&self) -> usize {
        self.inner.in_flight() + self.delayed.len()
    }

    fn held(&self) -> usize {
        self.inner.held()
    }

    fn is_synchronous(&self) -> bool {
        self.inner.is_synchronous()
    }

    fn description(&self) -> String {
        format!("{} + inject({})", self.inner.description(), self.plan)
    }

    fn state(&self) -> String {
        format!(
            "{} delayed by injection; {}",
            self.delayed.len(),
            self.inner.state()
        )
    }

    fn counters(&self) -> EngineCounters {
        let mut counters = self.inner.counters();
        counters.injected = counters.injected + self.counts;
        counters
    }
}

#[cfg(test)]
mod tests;
