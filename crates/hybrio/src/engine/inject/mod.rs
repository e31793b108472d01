//! Fault injection: any engine, made to fail, come back short or late now and
//! then, to test what sits above the kernel's answers (each engine's retry
//! rule, the benchmark's error handling) on demand
//! rather than when a disk happens to misbehave.
//!
//! A [`FaultPlan`] gives each fault a probability, e.g.
//! `eio:0.001,short:0.01,eagain:0.01,delay:0.001@5ms,corrupt:0.001`. An
//! engine built with one ([`EngineConfig::inject`]) draws once for every
//! request the caller queues, from a small seeded generator (SplitMix64), so
//! a plan and a seed give the same faults run after run. It injects them
//! where its requests are queued and where they complete, below its retry
//! rule, which treats them as it treats the kernel's answers: the faults are
//! a hook of each engine, not a layer over it. Without a plan an engine pays
//! one test a request.
//!
//! * `eio`: the request is not performed; it completes with `-EIO`.
//! * `eagain`: not performed this time; the rule tries it again at once (a
//!   draw of its own), up to its limit, unless the caller asked for
//!   `nowait`: then `-EAGAIN` is the answer.
//! * `short`: a read or write is performed whole and its first answer
//!   reported as half its window (rounded down to a multiple of 512, so that
//!   the rest of an `O_DIRECT` request stays aligned): the rule sends the
//!   rest again, as it does when the kernel moves less than asked. Requests
//!   under 1024 bytes cannot be halved that way and are left alone, and so
//!   are receives and sends: half a datagram cannot be made whole again.
//! * `delay:P@D`: performed normally, its completion delivered at least `D`
//!   later than it would have been: a synchronous engine (and the pool's
//!   worker that ran it) sleeps `D` after the call; io_uring and libaio hold
//!   the completion back, counted in [`Engine::in_flight`](super::Engine::in_flight)
//!   and so against the depth; the null engine, which has no I/O to hold
//!   back, blocks the caller.
//! * `corrupt`: a read is performed normally and comes back with one bit of
//!   what it read flipped (where, the seed and the request say), as from a
//!   disk or a path that corrupts silently: what verifying data exists to
//!   catch. Other requests are left alone.

pub(super) mod plan;

pub use plan::{DEFAULT_SEED, FaultPlan, FaultPlanError, InjectedCounts};

use std::collections::VecDeque;
use std::time::Duration;

use super::api::{EngineConfig, EngineCounters, QueueOutcome};
use super::retry::RETRY_LIMIT;
use crate::Error;
use crate::request::{Completion, Marks, Op, Request};
use crate::sys::time;

/// Draws are 53-bit, the precision of an `f64` probability.
const DRAW_BITS: u32 = 53;
const ONE: u64 = 1 << DRAW_BITS;

/// Smallest window `short` halves: half of it is the smallest multiple of 512.
const SHORTEST_SHORTENED: usize = 1024;

/// `O_DIRECT`'s alignment, which the rest of a shortened request keeps.
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

/// The fault a draw picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Eio,
    Eagain,
    Short,
    Delay,
    Corrupt,
}

const FAULTS: [Fault; 5] = [
    Fault::Eio,
    Fault::Eagain,
    Fault::Short,
    Fault::Delay,
    Fault::Corrupt,
];

/// What the engines' faults need away from the engine that drew them (a
/// pool's worker): where to flip a bit, how long to delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FaultEffects {
    pub(crate) seed: u64,
    pub(crate) delay: Duration,
}

/// One engine's faults, as its [`FaultPlan`] says. See the [module
/// documentation](self).
#[derive(Debug)]
pub(crate) struct Faults {
    plan: FaultPlan,
    rng: SplitMix64,
    /// A draw below `below[i]` (and above the one before) picks fault `i`
    /// of [`FAULTS`]; at or above the last, none.
    below: [u64; 5],
    /// `EAGAIN` is the caller's answer.
    nowait: bool,
    /// Injected "try again" answers one request may get in a row (the
    /// rule's limit).
    pub(crate) limit: u32,
    pub(crate) counts: InjectedCounts,
    /// Injected `EAGAIN`s the rule tried again.
    retried: u64,
    /// Completions held back, with the `CLOCK_MONOTONIC` time (ns) they are
    /// due; in due order, as every delay is the same.
    delayed: VecDeque<(u64, Completion)>,
}

impl Faults {
    /// The faults of `config`'s plan; `None` without one.
    pub(crate) fn of(config: &EngineConfig) -> Option<Box<Faults>> {
        config
            .inject
            .as_ref()
            .map(|plan| Box::new(Faults::new(plan.clone(), config.nowait)))
    }

    /// The faults of `plan`, for an engine built with `nowait` (or not).
    pub(crate) fn new(plan: FaultPlan, nowait: bool) -> Faults {
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
        Faults {
            rng: SplitMix64(plan.seed),
            below,
            nowait,
            limit: RETRY_LIMIT,
            plan,
            counts: InjectedCounts::default(),
            retried: 0,
            delayed: VecDeque::new(),
        }
    }

    /// What a worker needs to apply the faults marked on a request.
    pub(crate) fn effects(&self) -> FaultEffects {
        FaultEffects {
            seed: self.plan.seed,
            delay: self.plan.delay_by,
        }
    }

    /// Draws for a request the caller queued, as the engine takes it: marks
    /// it with a fault to apply where it completes, or answers it now
    /// without its being performed (`Some`: `-EIO`, or `-EAGAIN` when the
    /// rule does not try again).
    pub(crate) fn draw(&mut self, request: &mut Request) -> Option<i64> {
        // A request handed back (`Busy`) and queued again draws anew.
        request.marks.set(Marks::FAULTS, false);
        let mut tries = 0;
        loop {
            let draw = self.rng.draw();
            // At or above the last bound: no fault.
            let i = self.below.iter().position(|&below| draw < below)?;
            match FAULTS[i] {
                Fault::Eio => {
                    self.counts.eio += 1;
                    return Some(-i64::from(libc::EIO));
                }
                Fault::Eagain => {
                    self.counts.eagain += 1;
                    if self.nowait || tries >= self.limit {
                        return Some(-i64::from(libc::EAGAIN));
                    }
                    tries += 1;
                    self.retried += 1;
                }
                Fault::Short => {
                    let halved = request.op.moves_data()
                        && !request.op.is_socket()
                        && request.len() >= SHORTEST_SHORTENED;
                    request.marks.set(Marks::SHORT, halved);
                    return None;
                }
                Fault::Delay => {
                    request.marks.set(Marks::DELAY, true);
                    return None;
                }
                Fault::Corrupt => {
                    request.marks.set(Marks::CORRUPT, request.op == Op::Read);
                    return None;
                }
            }
        }
    }

    /// [`shorten`], counted.
    #[inline]
    pub(crate) fn shorten(&mut self, request: &mut Request, result: i64) -> i64 {
        let (result, shortened) = shorten(request, result);
        self.counts.short += u64::from(shortened);
        result
    }

    /// Once the rule is done with a request marked corrupt or delayed (its
    /// window and offset as queued): flips the bit; says whether its
    /// completion is to be delivered late, and counts it so.
    pub(crate) fn finish(&mut self, request: &mut Request, result: i64) -> bool {
        let done = after_rule(self.plan.seed, request, result);
        self.counts = self.counts + done;
        done.delay > 0
    }

    /// [`Faults::finish`] for a synchronous engine: the caller waits out
    /// the delay.
    pub(crate) fn finish_here(&mut self, request: &mut Request, result: i64) {
        if self.finish(request, result) {
            std::thread::sleep(self.plan.delay_by);
        }
    }

    /// Holds `completion` back for the delay.
    pub(crate) fn hold(&mut self, completion: Completion) {
        let due = time::monotonic_ns()
            .saturating_add(u64::try_from(self.plan.delay_by.as_nanos()).unwrap_or(u64::MAX));
        self.delayed.push_back((due, completion));
    }

    /// Completions held back.
    #[inline]
    pub(crate) fn held_back(&self) -> usize {
        self.delayed.len()
    }

    /// Moves the held-back completions that are due to `out`, at most `room`.
    pub(crate) fn deliver_due(&mut self, room: usize, out: &mut Vec<Completion>) -> usize {
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

    /// Sleeps until the first held-back completion is due.
    pub(crate) fn sleep_until_due(&self) {
        if let Some(&(due, _)) = self.delayed.front() {
            time::sleep_until(due);
        }
    }

    /// Adds what it injected, and the retries of what it injected, to an
    /// engine's counters.
    pub(crate) fn add_to(&self, counters: &mut EngineCounters) {
        counters.injected = counters.injected + self.counts;
        counters.retries += self.retried;
    }
}

/// An asynchronous engine that holds back the completions of injected
/// delays (io_uring, libaio).
pub(crate) trait HoldsBack: Sized {
    /// Its faults.
    fn faults(&mut self) -> &mut Option<Box<Faults>>;
    /// Tells it how many completions its faults hold back now (each one
    /// takes a place of its depth).
    fn holding_back(&mut self, held: usize);
    /// Requests it has in flight, but for those held back.
    fn below(&self) -> usize;
    /// Its reap of what the kernel has, holding back the completions
    /// `faults` delay.
    fn reap_below(
        &mut self,
        faults: &mut Faults,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error>;

    /// [`Engine::reap`](super::Engine::reap) of an engine with faults (none:
    /// nothing): waits for `min` completions the caller may see (the due
    /// ones among those held back, and those the kernel brings), sleeping
    /// until one held back is due when nothing else is left to wait for.
    #[cold]
    fn reap_holding_back(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        let Some(mut faults) = self.faults().take() else {
            return Ok(0);
        };
        let result = reap_holding_back(self, &mut faults, min, max, out);
        self.holding_back(faults.held_back());
        *self.faults() = Some(faults);
        result
    }
}

/// [`HoldsBack::reap_holding_back`], with the faults taken out of `engine`.
fn reap_holding_back<E: HoldsBack>(
    engine: &mut E,
    faults: &mut Faults,
    min: usize,
    max: usize,
    out: &mut Vec<Completion>,
) -> Result<usize, Error> {
    let mut got = 0;
    let mut reaped = false;
    loop {
        got += faults.deliver_due(max - got, out);
        if got >= max || (reaped && got >= min) {
            break;
        }
        let want = min.saturating_sub(got);
        if engine.below() == 0 {
            if want == 0 || faults.held_back() == 0 {
                break;
            }
            faults.sleep_until_due();
            continue;
        }
        // What came before a failure is reaped all the same.
        let reaped_now = engine.reap_below(faults, want, max - got, out)?;
        got += reaped_now;
        reaped = true;
        if reaped_now == 0 && want > 0 {
            // Nothing committed below: only held-back completions can come.
            if faults.held_back() == 0 {
                break;
            }
            faults.sleep_until_due();
        }
    }
    Ok(got)
}

/// An engine's description, naming the plan it injects, if any.
/// An engine whose faults may answer a request before it queues it.
pub(crate) trait FaultsFirst: Sized {
    /// Its faults, if the caller asked for any.
    fn faults_mut(&mut self) -> Option<&mut Faults>;

    /// [`Engine::queue`](super::Engine::queue) without faults.
    fn queue_plain(&mut self, request: Request) -> QueueOutcome;

    /// [`Engine::queue`](super::Engine::queue): a fault drawn answers the
    /// request, the others go on through [`queue_plain`](Self::queue_plain).
    /// The faults are drawn in a call of their own, so that on the plain
    /// path the request's memory is borrowed nowhere and moves once, into
    /// its slot.
    #[inline(always)]
    fn queue_faults_first(&mut self, request: Request) -> QueueOutcome {
        if self.faults_mut().is_some() {
            return queue_drawing(self, request);
        }
        self.queue_plain(request)
    }
}

/// [`FaultsFirst::queue_faults_first`] with faults.
#[cold]
#[inline(never)]
fn queue_drawing<E: FaultsFirst>(engine: &mut E, mut request: Request) -> QueueOutcome {
    if let Some(answer) = engine
        .faults_mut()
        .and_then(|faults| faults.draw(&mut request))
    {
        return QueueOutcome::Completed(request.complete(answer));
    }
    engine.queue_plain(request)
}

pub(crate) fn described(description: String, faults: Option<&Faults>) -> String {
    match faults {
        Some(faults) => format!("{description} + inject({})", faults.plan),
        None => description,
    }
}

/// At the completion point, before the retry rule: the first answer of a
/// request marked short, reported as half its window when it moved more.
/// Returns the answer, and whether it was shortened. Clears the mark, so
/// that the rest goes as it is.
#[inline]
pub(crate) fn shorten(request: &mut Request, result: i64) -> (i64, bool) {
    if !request.marks.take(Marks::SHORT) {
        return (result, false);
    }
    let half = (request.len() / 2 / SECTOR * SECTOR) as i64;
    if result > half {
        (half, true)
    } else {
        (result, false)
    }
}

/// Once the rule is done with a read marked corrupt: flips one bit of what
/// it read, at a place drawn from `seed` and the request; a read that
/// failed or read nothing is left as it is. Returns whether it flipped one.
pub(crate) fn corrupt(seed: u64, request: &mut Request, result: i64) -> bool {
    if !request.marks.take(Marks::CORRUPT) {
        return false;
    }
    let at = SplitMix64(seed ^ request.offset ^ request.user_data.rotate_left(32)).next();
    let Some(buf) = request.buffer_mut() else {
        return false;
    };
    let read = usize::try_from(result).unwrap_or(0).min(buf.len());
    if read == 0 {
        return false;
    }
    let byte = (at >> 3) as usize % read;
    buf.as_mut_slice()[byte] ^= 1 << (at & 7);
    true
}

/// Once the rule is done with a request: its bit flipped if it was marked
/// corrupt, its delay mark taken; what that injected (a delay of 1: its
/// completion is to be late).
fn after_rule(seed: u64, request: &mut Request, result: i64) -> InjectedCounts {
    InjectedCounts {
        corrupt: u64::from(corrupt(seed, request, result)),
        delay: u64::from(request.marks.take(Marks::DELAY)),
        ..InjectedCounts::default()
    }
}

/// What a worker does with the faults marked on a request it ran, once
/// the rule is done: flips the bit, sleeps the delay; what it injected.
pub(crate) fn finish_away(
    effects: FaultEffects,
    request: &mut Request,
    result: i64,
) -> InjectedCounts {
    let done = after_rule(effects.seed, request, result);
    if done.delay > 0 {
        std::thread::sleep(effects.delay);
    }
    done
}

#[cfg(test)]
mod tests;
