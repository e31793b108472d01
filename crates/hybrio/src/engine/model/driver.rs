//! A model of [`Driver`]s taking turns over one engine stack: each round
//! makes a driver (in submission or completion order), submits reads and
//! writes through it, takes some completions, and drops it with the rest in
//! flight; the last round takes all of its own. The engine keeps what a
//! dropped driver left, and the next driver meets those completions.
//!
//! It checks that every completion a driver hands back is one of its own
//! round's requests, with that request's tag, operation, file, offset,
//! window and bytes, none twice and (in submission order) in the order
//! submitted; that `outstanding()` counts exactly its requests not handed
//! back; that the last round gets all of its own back; that no driver call
//! panics or spins (every call into the stack counts, see
//! [`Script`](super::scripted::Script)); and that after the engine is
//! dropped every buffer is back in the pool. A driver call may fail (a
//! scripted engine fails a reap, say): that ends the round.

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::request::{self, Expected, LARGEST, OPS};
use super::scripted::Script;
use super::stack::{self, Bottom, Count, Files, Stack};
use crate::Error;
use crate::buf::BufPool;
use crate::driver::{Driver, Order};
use crate::engine::adaptive::Path;
use crate::engine::{Engine, EngineCounters, EngineKind, QueueOutcome};
use crate::file::{Caching, FileHandle};
use crate::request::{Completion, Request};

type Checked = Result<(), TestCaseError>;

/// One call of the caller into its round's driver.
#[derive(Debug, Clone)]
enum Action {
    /// Submit a request (`op` as [`request::OPS`] says; `path` 0 lets the
    /// adaptive engine choose, 1 forces inline, 2 asynchronous).
    Submit {
        file: u8,
        op: u8,
        at: u16,
        size: u8,
        path: u8,
    },
    /// `next_completion`.
    Next,
    /// `ready_completion`.
    Ready,
}

/// One driver's life.
#[derive(Debug, Clone)]
struct Round {
    order: Order,
    actions: Vec<Action>,
}

#[derive(Debug, Clone)]
struct Case {
    depth: u32,
    /// As in [`stack::fault_plan`].
    faults: u8,
    fault_seed: u64,
    tape: Vec<u8>,
    rounds: Vec<Round>,
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        6 => (0u8..3, 0u8..OPS, any::<u16>(), any::<u8>(), 0u8..3)
            .prop_map(|(file, op, at, size, path)| Action::Submit { file, op, at, size, path }),
        3 => Just(Action::Next),
        2 => Just(Action::Ready),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let round = (
        prop_oneof![Just(Order::Submission), Just(Order::Completion)],
        proptest::collection::vec(action(), 0..24),
    )
        .prop_map(|(order, actions)| Round { order, actions });
    (
        1u32..7,
        0u8..3,
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 0..400),
        proptest::collection::vec(round, 1..6),
    )
        .prop_map(|(depth, faults, fault_seed, tape, rounds)| Case {
            depth,
            faults,
            fault_seed,
            tape,
            rounds,
        })
}

/// What the runs did, to see that they reach what they should.
#[derive(Debug, Default)]
struct Tally {
    rounds: Count,
    submitted: Count,
    handed_back: Count,
    errors: Count,
    dropped_with_requests_out: Count,
    no_buffer: Count,
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rounds, {} requests submitted, {} handed back, {} driver errors, {} drivers dropped with requests out, {} submits skipped for want of a buffer",
            self.rounds,
            self.submitted,
            self.handed_back,
            self.errors,
            self.dropped_with_requests_out,
            self.no_buffer
        )
    }
}

/// The stack as the drivers see it: every call into it counts towards the
/// script's spin limit, so that a driver going round in circles over a real
/// engine fails the case instead of hanging the test.
#[derive(Debug)]
struct Counted {
    inner: Box<dyn Engine>,
    script: Arc<Script>,
}

impl Engine for Counted {
    fn kind(&self) -> EngineKind {
        self.inner.kind()
    }
    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, Error> {
        self.inner.add_file(file, path)
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.inner.remove_file(handle)
    }
    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), Error> {
        self.inner.set_caching(handle, caching)
    }
    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), Error> {
        self.inner.set_atomic_writes(handle, atomic)
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.script.call("queue, from a driver");
        self.inner.queue(request)
    }
    fn commit(&mut self) -> Result<usize, Error> {
        self.script.call("commit, from a driver");
        self.inner.commit()
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        self.script.call("reap, from a driver");
        self.inner.reap(min, max, out)
    }
    fn commit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, Error> {
        self.script.call("commit_and_reap, from a driver");
        self.inner.commit_and_reap(min, max, out)
    }
    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }
    fn held(&self) -> usize {
        self.inner.held()
    }
    fn is_synchronous(&self) -> bool {
        self.inner.is_synchronous()
    }
    fn state(&self) -> String {
        self.inner.state()
    }
    fn counters(&self) -> EngineCounters {
        self.inner.counters()
    }
}

/// A round's requests the driver has not handed back, by tag.
struct Mine {
    round: usize,
    out: HashMap<u64, Expected>,
    /// Submission order: the tag handed back last.
    last: u64,
}

impl Mine {
    fn check(&mut self, order: Order, completion: Completion, tally: &Tally) -> Checked {
        let tag = completion.user_data;
        let Some(expected) = self.out.remove(&tag) else {
            return Err(TestCaseError::fail(format!(
                "round {}'s driver handed back a completion of none of its requests out (another round's, or one handed back already): {completion:?}",
                self.round
            )));
        };
        tally.handed_back.add();
        if order == Order::Submission {
            check!(
                tag > self.last,
                "round {}'s driver handed back {tag} after {} in submission order",
                self.round,
                self.last
            );
            self.last = tag;
        }
        request::check(&expected, &completion)
    }
}

/// Runs `case` on `stack`; `Ok` also when the system refuses it.
fn run_case(stack: Stack, case: &Case, files: &Files, tally: &Tally) -> Checked {
    let script = Script::new(case.tape.clone());
    let Some(built) = stack::build(
        stack,
        case.depth,
        case.faults,
        case.fault_seed,
        &script,
        files,
    ) else {
        return Ok(());
    };
    let mut engine = Counted {
        inner: built.engine,
        script: script.clone(),
    };
    let pool = BufPool::new(2 * case.depth as usize + 2, LARGEST).unwrap();
    let mut next_tag = 1;
    for (round, Round { order, actions }) in case.rounds.iter().enumerate() {
        tally.rounds.add();
        let last = round + 1 == case.rounds.len();
        let mut driver = Driver::new(&mut engine, *order);
        let mut mine = Mine {
            round,
            out: HashMap::new(),
            last: 0,
        };
        let mut failed = false;
        for action in actions {
            script.step();
            built.clock.fetch_add(2_000, Ordering::Relaxed);
            let taken = match *action {
                Action::Submit {
                    file,
                    op,
                    at,
                    size,
                    path,
                } => {
                    let tag = next_tag;
                    next_tag += 1;
                    let made = request::make(files, &built.handles, &pool, file, op, at, size, tag);
                    let Some((request, expected)) = made else {
                        tally.no_buffer.add();
                        continue;
                    };
                    if let Some(forced) = &built.forced {
                        forced.set(match path {
                            1 => Some(Path::Inline),
                            2 => Some(Path::Async),
                            _ => None,
                        });
                    }
                    mine.out.insert(tag, expected);
                    let submitted = driver.submit(request);
                    if submitted.is_err() {
                        // Never submitted: not the driver's to hand back.
                        mine.out.remove(&tag);
                    } else {
                        tally.submitted.add();
                    }
                    submitted.map(|()| None)
                }
                Action::Next => driver.next_completion(),
                Action::Ready => driver.ready_completion(),
            };
            match taken {
                Ok(Some(completion)) => mine.check(*order, completion, tally)?,
                Ok(None) => {}
                Err(_) => {
                    tally.errors.add();
                    failed = true;
                }
            }
            check!(
                driver.outstanding() == mine.out.len(),
                "round {round}'s driver counts {} outstanding with {} of its requests not handed back",
                driver.outstanding(),
                mine.out.len()
            );
            if failed {
                break;
            }
        }
        if last && !failed {
            loop {
                script.step();
                match driver.next_completion() {
                    Ok(Some(completion)) => mine.check(*order, completion, tally)?,
                    Ok(None) => break,
                    Err(_) => {
                        tally.errors.add();
                        failed = true;
                        break;
                    }
                }
            }
            check!(
                failed || mine.out.is_empty(),
                "the last driver ended with {} of its requests not handed back: {:?}",
                mine.out.len(),
                mine.out.keys()
            );
        }
        if driver.outstanding() > 0 {
            tally.dropped_with_requests_out.add();
        }
    }
    script.step();
    drop(engine);
    check!(
        pool.available() == pool.count(),
        "after the engine's drop {} of {} buffers are back",
        pool.available(),
        pool.count()
    );
    Ok(())
}

/// Runs the model on `stack` for `cases` cases (`HYBRIO_MODEL_CASES` overrides).
fn model(stack: Stack, cases: u32) {
    stack::run(
        &format!("driver model {stack:?}"),
        cases,
        &case(),
        |case, files, tally| run_case(stack, case, files, tally),
    );
}

#[test]
fn model_of_drivers_taking_turns_over_scripted_stacks() {
    let stacks = [false, true].map(|adaptive| {
        let bottom = Bottom::Scripted;
        (Stack { adaptive, bottom }, 1024)
    });
    stack::on_each(stacks, model);
}

#[test]
fn model_of_drivers_taking_turns_over_real_engines() {
    let mut stacks = Vec::new();
    if crate::engine::io_uring::tests::sqpoll_engine(1, None).is_some() {
        stacks.extend([(false, Bottom::SqpollRing), (true, Bottom::SqpollRing)]);
    }
    stacks.push((false, Bottom::Pool));
    if crate::probe::engine_available(EngineKind::Libaio).is_ok() {
        stacks.extend([(false, Bottom::Libaio), (true, Bottom::Pool)]);
    }
    let stacks = stacks
        .into_iter()
        .map(|(adaptive, bottom)| (Stack { adaptive, bottom }, 64));
    stack::on_each(stacks, model);
}
