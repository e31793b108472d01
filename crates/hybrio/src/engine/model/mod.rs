//! A model test of the engine stack: the layers as [`super::open`] stacks
//! them (resubmission over fault injection over the adaptive engine over
//! two asynchronous engines, or over one engine), the engines at the bottom
//! scripted (their every answer drawn by the test, see [`scripted`]) or real
//! (an SQPOLL ring whose thread publishes its SQ head late, the worker pool,
//! libaio), driven by random sequences of
//! `queue`/`commit`/`reap`/drop from a caller that does what the contract
//! says. After every step it checks:
//!
//! - every request completes exactly once, with its own tag, operation, file,
//!   offset and buffer window (a pool's buffer, or a window of the caller's
//!   own memory that other writes in flight share), and a read's bytes are
//!   the file's;
//! - `in_flight()` is exactly what the caller has queued and not seen complete
//!   (so a drained engine reports zero);
//! - `Busy` comes only with `in_flight() >= depth`, the request untouched;
//! - `reap(min >= 1)` with committed requests outstanding returns at least one
//!   or an error within [`MAX_FRUITLESS_REAPS`] calls, and no call spins;
//! - `held()` is at most `in_flight()`, and `reap(0, held())` returns that
//!   many at once (fewer only where a layer sent one of them again);
//! - after a drop every buffer is back in the pool.
//!
//! Seeded and shrinking (proptest). CI runs a fixed budget from a fixed seed;
//! `docs/model-test.md` says how to run it long, from fresh seeds.

macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(TestCaseError::fail(format!($($msg)+)));
        }
    };
}

mod driver;
mod receives;
mod request;
mod scripted;
mod stack;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::adaptive::{ForcedPath, Path};
use super::{Engine, EngineKind, QueueOutcome};
use crate::buf::BufPool;
use crate::file::FileHandle;
use crate::request::Completion;
use request::{Expected, LARGEST, OPS};
use scripted::Script;
use stack::{Bottom, Count, Files, Stack};

/// `reap(min >= 1)` calls in a row that may return nothing while committed
/// requests are outstanding.
const MAX_FRUITLESS_REAPS: u32 = 3;
/// Calls the final drain may take.
const MAX_DRAIN_CALLS: u32 = 10_000;

/// One thing the caller does.
#[derive(Debug, Clone)]
enum Step {
    /// Queue a request: `op` as [`request::OPS`] says; `path` 0 lets the
    /// adaptive engine choose, 1 forces inline, 2 asynchronous.
    Queue {
        file: u8,
        op: u8,
        at: u16,
        size: u8,
        path: u8,
    },
    Commit,
    Reap {
        min: u8,
        max: u8,
    },
    /// Reap what the engine says it holds completed (`reap(0, held())`), as
    /// a caller that reaps only when full takes them.
    ReapHeld,
    /// Drop the engine with whatever it holds.
    Drop,
}

/// One run: the stack's depth and faults, the scripted engines' tape, the
/// caller's steps.
#[derive(Debug, Clone)]
struct Case {
    depth: u32,
    /// 0: no fault injection; 1: light; 2: heavy, with `EIO` and delays.
    faults: u8,
    fault_seed: u64,
    tape: Vec<u8>,
    steps: Vec<Step>,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        60 => (0u8..3, 0u8..OPS, any::<u16>(), any::<u8>(), 0u8..3)
            .prop_map(|(file, op, at, size, path)| Step::Queue { file, op, at, size, path }),
        20 => Just(Step::Commit),
        30 => (0u8..4, 1u8..9).prop_map(|(min, max)| Step::Reap { min, max }),
        10 => Just(Step::ReapHeld),
        1 => Just(Step::Drop),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        1u32..7,
        0u8..3,
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 0..400),
        proptest::collection::vec(step(), 1..120),
    )
        .prop_map(|(depth, faults, fault_seed, tape, mut steps)| {
            // A drop ends the run: keep at most one, last.
            if let Some(first) = steps.iter().position(|s| matches!(s, Step::Drop)) {
                steps.truncate(first + 1);
            }
            Case {
                depth,
                faults,
                fault_seed,
                tape,
                steps,
            }
        })
}

/// The engine stack under test, and what the caller knows of it.
struct Caller<'a> {
    engine: Option<Box<dyn Engine>>,
    stack: Stack,
    script: Arc<Script>,
    files: &'a Files,
    forced: Option<ForcedPath>,
    clock: Arc<AtomicU64>,
    pool: BufPool,
    pool_size: usize,
    depth: usize,
    handles: Vec<(FileHandle, u8, bool)>,
    outstanding: HashMap<u64, Expected>,
    next_tag: u64,
    fruitless: u32,
    done: Vec<Completion>,
    tally: &'a Tally,
    /// Fault injection is in the stack.
    injecting: bool,
}

type Checked = Result<(), TestCaseError>;

/// Checks what a successful `reap(min, max)` returned (`n`, having
/// appended `appended`), and counts in `fruitless` the reaps in a row that
/// brought nothing though they waited (`min >= 1`) with committed requests
/// out: more than [`MAX_FRUITLESS_REAPS`] fail, `why` and `engine` said.
fn check_reaped(
    n: usize,
    appended: usize,
    (min, max): (usize, usize),
    committed: bool,
    fruitless: &mut u32,
    why: &str,
    engine: &dyn std::fmt::Debug,
) -> Checked {
    check!(n == appended, "reap returned {n} but appended {appended}");
    check!(n <= max, "reap returned {n}, more than max {max}");
    if n == 0 && min >= 1 && committed {
        *fruitless += 1;
        check!(
            *fruitless <= MAX_FRUITLESS_REAPS,
            "reap({min}) returned nothing {fruitless} times in a row with committed requests out{why}: {engine:?}"
        );
    } else {
        *fruitless = 0;
    }
    Ok(())
}

/// What the runs did, to see that they reach what they should.
#[derive(Debug, Default)]
struct Tally {
    steps: Count,
    completions: Count,
    failed: Count,
    busy: Count,
    reap_errors: Count,
    drops_with_requests_out: Count,
    held_reaps: Count,
    /// Writes of a file's mirror, the caller's memory that others share.
    mirror_writes: Count,
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} steps, {} completions ({} failed), {} writes of shared caller memory, {} Busy, {} reap errors, {} reaps of held completions, {} drops with requests out",
            self.steps,
            self.completions,
            self.failed,
            self.mirror_writes,
            self.busy,
            self.reap_errors,
            self.held_reaps,
            self.drops_with_requests_out
        )
    }
}

impl<'a> Caller<'a> {
    /// The stack for `case`, or `None` when the system refuses its bottom.
    fn new(stack: Stack, case: &Case, files: &'a Files, tally: &'a Tally) -> Option<Caller<'a>> {
        let depth = case.depth;
        let script = Script::new(case.tape.clone());
        let built = stack::build(stack, depth, case.faults, case.fault_seed, &script, files)?;
        let pool_size = depth as usize + 2;
        Some(Caller {
            engine: Some(built.engine),
            stack,
            script,
            files,
            forced: built.forced,
            clock: built.clock,
            pool: BufPool::new(pool_size, LARGEST).unwrap(),
            pool_size,
            depth: depth as usize,
            handles: built.handles,
            outstanding: HashMap::new(),
            next_tag: 1,
            fruitless: 0,
            done: Vec::new(),
            tally,
            injecting: case.faults != 0,
        })
    }

    fn engine(&mut self) -> &mut dyn Engine {
        self.engine.as_deref_mut().expect("not dropped")
    }

    fn step(&mut self, step: &Step) -> Checked {
        self.script.step();
        self.tally.steps.add();
        self.clock.fetch_add(2_000, Ordering::Relaxed);
        match *step {
            Step::Queue {
                file,
                op,
                at,
                size,
                path,
            } => self.queue(file, op, at, size, path)?,
            Step::Commit => {
                if self.engine().commit().is_ok() {
                    for expected in self.outstanding.values_mut() {
                        expected.committed = true;
                    }
                }
            }
            Step::Reap { min, max } => self.reap(usize::from(min), usize::from(max))?,
            Step::ReapHeld => self.reap_held()?,
            Step::Drop => return self.drop_engine(),
        }
        self.check_in_flight()
    }

    fn queue(&mut self, file: u8, op: u8, at: u16, size: u8, path: u8) -> Checked {
        let tag = self.next_tag;
        self.next_tag += 1;
        let made = request::make(
            self.files,
            &self.handles,
            &self.pool,
            file,
            op,
            at,
            size,
            tag,
        );
        let Some((request, expected)) = made else {
            return Err(TestCaseError::fail(format!(
                "no free buffer with {} requests out of a depth of {}",
                self.outstanding.len(),
                self.depth
            )));
        };
        let (handle, offset, len) = (expected.file, expected.offset, expected.len);
        let mirror = expected.mirror.is_some();
        if let Some(forced) = &self.forced {
            forced.set(match path {
                1 => Some(Path::Inline),
                2 => Some(Path::Async),
                _ => None,
            });
        }
        match self.engine().queue(request) {
            QueueOutcome::Completed(completion) => {
                self.tally.mirror_writes.add_if(mirror);
                self.outstanding.insert(tag, expected);
                self.check_completion(completion)?;
            }
            QueueOutcome::Queued => {
                self.tally.mirror_writes.add_if(mirror);
                self.outstanding.insert(tag, expected);
            }
            QueueOutcome::Busy(back) => {
                self.tally.busy.add();
                let in_flight = self.engine().in_flight();
                // A scripted engine's SQ that looks full is the bottom's
                // refusal, passed on; the adaptive engine has another way.
                let passed_on = !self.stack.adaptive
                    && self.stack.bottom == Bottom::Scripted
                    && self.script.refused_below_depth();
                check!(
                    in_flight >= self.depth || passed_on,
                    "Busy with {in_flight} in flight, below the depth of {}",
                    self.depth
                );
                check!(
                    back.user_data == tag
                        && back.offset == offset
                        && back.file == handle
                        && back.len() == len,
                    "Busy handed back another request: {back:?}"
                );
            }
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, max: usize) -> Checked {
        let committed = self.outstanding.values().any(|e| e.committed);
        let mut done = std::mem::take(&mut self.done);
        let reaped = self.engine().reap(min, max, &mut done);
        let appended = done.len();
        for completion in done.drain(..) {
            self.check_completion(completion)?;
        }
        self.done = done;
        match reaped {
            Ok(n) => check_reaped(
                n,
                appended,
                (min, max),
                committed,
                &mut self.fruitless,
                "",
                &self.engine.as_deref(),
            )?,
            Err(_) => {
                self.tally.reap_errors.add();
                self.fruitless = 0;
            }
        }
        Ok(())
    }

    fn reap_held(&mut self) -> Checked {
        let held = self.engine().held();
        if held == 0 {
            return Ok(());
        }
        self.tally.held_reaps.add();
        // What makes a layer send a completion again instead of returning it.
        let sent_again = |engine: &dyn Engine| {
            let counters = engine.counters();
            (counters.short_ios, counters.retries, counters.injected)
        };
        let before = sent_again(self.engine());
        let mut done = std::mem::take(&mut self.done);
        let reaped = self.engine().reap(0, held, &mut done);
        let appended = done.len();
        for completion in done.drain(..) {
            self.check_completion(completion)?;
        }
        self.done = done;
        // Fault injection may also hold one back on its way up (a delay).
        let again = sent_again(self.engine()) != before || self.injecting;
        check!(
            reaped.is_err() || again || appended == held,
            "reap(0, {held}) with {held} held returned {appended}: {:?}",
            self.engine.as_deref()
        );
        Ok(())
    }

    fn check_completion(&mut self, completion: Completion) -> Checked {
        let tag = completion.user_data;
        let Some(expected) = self.outstanding.remove(&tag) else {
            return Err(TestCaseError::fail(format!(
                "a completion for no request out (unknown or completed twice): {completion:?}"
            )));
        };
        self.tally.completions.add();
        if completion.result < 0 {
            self.tally.failed.add();
        }
        request::check(&expected, &completion)
    }

    fn check_in_flight(&mut self) -> Checked {
        let in_flight = self.engine().in_flight();
        check!(
            in_flight == self.outstanding.len(),
            "in_flight() is {in_flight} with {} requests out: {:?}",
            self.outstanding.len(),
            self.engine.as_deref()
        );
        let held = self.engine().held();
        check!(
            held <= in_flight,
            "held() is {held} with {in_flight} in flight: {:?}",
            self.engine.as_deref()
        );
        Ok(())
    }

    /// Commits and reaps until nothing is out.
    fn drain(&mut self) -> Checked {
        let mut calls = 0;
        while !self.outstanding.is_empty() {
            calls += 1;
            check!(
                calls <= MAX_DRAIN_CALLS,
                "{} requests still out after {MAX_DRAIN_CALLS} rounds of commit and reap: {:?}",
                self.outstanding.len(),
                self.engine.as_deref()
            );
            self.script.step();
            self.step(&Step::Commit)?;
            self.script.step();
            self.reap(1, usize::MAX)?;
            self.check_in_flight()?;
        }
        let mut done = Vec::new();
        let late = self.engine().reap(0, usize::MAX, &mut done);
        // A scripted reap may still fail; it must bring nothing.
        check!(
            matches!(late, Ok(0) | Err(_)) && done.is_empty(),
            "completions after the last one: {done:?}"
        );
        Ok(())
    }

    fn drop_engine(&mut self) -> Checked {
        self.script.step();
        if !self.outstanding.is_empty() {
            self.tally.drops_with_requests_out.add();
        }
        drop(self.engine.take());
        self.outstanding.clear();
        let available = self.pool.available();
        check!(
            available == self.pool_size,
            "after the drop {available} of {} buffers are back",
            self.pool_size
        );
        Ok(())
    }
}

/// Runs `case` on `stack`; `Ok` also when the system refuses it.
fn run_case(stack: Stack, case: &Case, files: &Files, tally: &Tally) -> Checked {
    let Some(mut caller) = Caller::new(stack, case, files, tally) else {
        return Ok(());
    };
    for step in &case.steps {
        caller.step(step)?;
        if caller.engine.is_none() {
            return Ok(());
        }
    }
    caller.drain()?;
    caller.drop_engine()
}

/// Runs the model on `stack` for `cases` cases (`HYBRIO_MODEL_CASES` overrides).
fn model(stack: Stack, cases: u32) {
    stack::run(
        &format!("model {stack:?}"),
        cases,
        &case(),
        |case, files, tally| run_case(stack, case, files, tally),
    );
}

#[test]
fn model_of_the_adaptive_stack_over_scripted_engines() {
    model(
        Stack {
            adaptive: true,
            bottom: Bottom::Scripted,
        },
        2048,
    );
}

#[test]
fn model_of_the_plain_stack_over_a_scripted_engine() {
    model(
        Stack {
            adaptive: false,
            bottom: Bottom::Scripted,
        },
        2048,
    );
}

#[test]
fn model_of_the_stacks_over_an_sqpoll_ring_that_publishes_late() {
    if super::io_uring::tests::sqpoll_engine(1, None).is_none() {
        return;
    }
    let stacks = [false, true].map(|adaptive| {
        let bottom = Bottom::SqpollRing;
        (Stack { adaptive, bottom }, 128)
    });
    stack::on_each(stacks, model);
}

#[test]
fn model_of_the_stacks_over_the_pool_and_libaio() {
    let libaio = crate::probe::engine_available(EngineKind::Libaio);
    if let Err(reason) = &libaio {
        eprintln!("model: libaio refused here, the pool alone: {reason}");
    }
    let mut stacks = vec![(false, Bottom::Pool)];
    if libaio.is_ok() {
        stacks.extend([(false, Bottom::Libaio), (true, Bottom::Pool)]);
    }
    let stacks = stacks.into_iter().map(|(adaptive, bottom)| {
        // libaio's context setup and teardown make its cases slower.
        let cases = if bottom == Bottom::Pool && !adaptive {
            128
        } else {
            64
        };
        (Stack { adaptive, bottom }, cases)
    });
    stack::on_each(stacks, model);
}
