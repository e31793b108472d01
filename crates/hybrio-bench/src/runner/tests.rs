//! The I/O loop against engines that misbehave as a buggy engine would: it
//! must end, report, and account for every request, never spin.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use hybrio::buf::BufPool;
use hybrio::engine::{Engine, EngineKind, QueueOutcome};
use hybrio::file::FileHandle;
use hybrio::request::{Completion, Request};

use super::*;
use crate::offsets::{BlockSizing, IoPlan};
use crate::outcome::JobOutcome;
use crate::progress::Progress;
use crate::stats::DataDir;

/// How an engine under test answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Misbehaviour {
    /// Takes requests, commits them, never completes one (a lost wake-up).
    NeverCompletes,
    /// Every commit fails; nothing is ever handed over.
    CommitAlwaysFails,
    /// Every reap appends what it has, then fails.
    ReapFailsAfterAppending,
}

#[derive(Debug)]
struct Misbehaving {
    how: Misbehaviour,
    depth: usize,
    queued: Vec<Request>,
    committed: Vec<Request>,
}

impl Engine for Misbehaving {
    fn kind(&self) -> EngineKind {
        EngineKind::Null
    }
    fn add_file(&mut self, _file: File, _path: PathBuf) -> Result<FileHandle, hybrio::Error> {
        Ok(FileHandle(0))
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, hybrio::Error> {
        Err(hybrio::Error::BadHandle(handle.0))
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        if self.in_flight() >= self.depth {
            return QueueOutcome::Busy(request);
        }
        self.queued.push(request);
        QueueOutcome::Queued
    }
    fn commit(&mut self) -> Result<usize, hybrio::Error> {
        if self.how == Misbehaviour::CommitAlwaysFails {
            return Err(refusal("submit"));
        }
        let n = self.queued.len();
        self.committed.append(&mut self.queued);
        Ok(n)
    }
    fn reap(
        &mut self,
        _min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, hybrio::Error> {
        match self.how {
            Misbehaviour::NeverCompletes | Misbehaviour::CommitAlwaysFails => Ok(0),
            Misbehaviour::ReapFailsAfterAppending => {
                let n = max.min(self.committed.len());
                out.extend(self.committed.drain(..n).map(|r| {
                    let len = r.len() as i64;
                    r.complete(len)
                }));
                Err(refusal("getevents"))
            }
        }
    }
    fn in_flight(&self) -> usize {
        self.queued.len() + self.committed.len()
    }
    fn is_synchronous(&self) -> bool {
        false
    }
}

fn refusal(op: &'static str) -> hybrio::Error {
    hybrio::Error::Engine {
        engine: "misbehaving",
        op,
        source: std::io::Error::from_raw_os_error(5),
    }
}

/// Runs a 1 MiB read job of depth 4 on a misbehaving engine, on a thread
/// the test gives up on after 30 s (the loop must end long before).
fn run_on(how: Misbehaviour) -> JobOutcome {
    run_job(format!("{how:?}"), move |depth| {
        Box::new(Misbehaving {
            how,
            depth,
            queued: Vec::new(),
            committed: Vec::new(),
        })
    })
}

/// Runs a 1 MiB read job of depth 4 named `name` on the engine `engine`
/// makes for that depth, as [`run_on`] does.
fn run_job(
    name: String,
    engine: impl FnOnce(usize) -> Box<dyn Engine> + Send + 'static,
) -> JobOutcome {
    let options = JobOptions {
        name,
        iodepth: 4,
        size: Some(1 << 20),
        ..JobOptions::default()
    };
    let (answer, answered) = mpsc::channel();
    std::thread::spawn(move || {
        let depth = options.iodepth as usize;
        let plan = IoPlan::new(
            options.rw,
            options.rwmixread,
            [0, 1].map(|dir| BlockSizing::of_job(&options, dir)),
            &[1 << 20],
            !options.norandommap,
            1,
        )
        .unwrap();
        let job = PreparedJob {
            engine: engine(depth),
            pool: BufPool::new(depth, 4096).unwrap(),
            files: vec![(FileHandle(0), PathBuf::from("misbehaving"))],
            cache_files: Vec::new(),
            plan,
            steady: None,
            pass_bytes: 1 << 20,
            zones: None,
            regions: Vec::new(),
            total_bytes: 1 << 20,
            logs: None,
            iolog: None,
            replay: None,
            stall_limit_ns: 200_000_000,
            options,
            endpoint: None,
            session: None,
            reply_handle: None,
            number: 1,
            jobs_in_run: 1,
            stop: None,
            flow: None,
            ramp_group: None,
        };
        let _ = answer.send(job.run(&Progress::default()));
    });
    answered
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("the job did not end in 30 s"))
}

/// Completes every request inside `queue`, as the adaptive engine completes
/// an inline one, but holds every completion for a reap (as it does while
/// asynchronous requests are out), and counts what the loop does about it.
#[derive(Debug)]
struct Holding {
    held: std::collections::VecDeque<Completion>,
    /// The most completions held when a request came.
    most_held: Arc<AtomicUsize>,
    /// Reaps asked to wait.
    waits: Arc<AtomicUsize>,
}

impl Engine for Holding {
    fn kind(&self) -> EngineKind {
        EngineKind::Adaptive
    }
    fn add_file(&mut self, _file: File, _path: PathBuf) -> Result<FileHandle, hybrio::Error> {
        Ok(FileHandle(0))
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, hybrio::Error> {
        Err(hybrio::Error::BadHandle(handle.0))
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.most_held.fetch_max(self.held.len(), Ordering::Relaxed);
        let len = request.len() as i64;
        self.held.push_back(request.complete(len));
        QueueOutcome::Queued
    }
    fn commit(&mut self) -> Result<usize, hybrio::Error> {
        Ok(0)
    }
    fn reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, hybrio::Error> {
        if min > 0 {
            self.waits.fetch_add(1, Ordering::Relaxed);
        }
        let n = max.min(self.held.len());
        out.extend(self.held.drain(..n));
        Ok(n)
    }
    fn in_flight(&self) -> usize {
        self.held.len()
    }
    fn held(&self) -> usize {
        self.held.len()
    }
    fn is_synchronous(&self) -> bool {
        false
    }
}

#[test]
fn completions_an_engine_holds_are_taken_at_once_not_when_the_queue_is_full() {
    let most_held = Arc::new(AtomicUsize::new(0));
    let waits = Arc::new(AtomicUsize::new(0));
    let (most, wait) = (most_held.clone(), waits.clone());
    let outcome = run_job("holding".into(), move |_| {
        Box::new(Holding {
            held: Default::default(),
            most_held: most,
            waits: wait,
        })
    });
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    assert_eq!(outcome.completed, 256, "1 MiB of 4 KiB reads");
    // Reaping only when full, as fio does, kept three held behind every new
    // request, each reaped with a wait of its own.
    assert_eq!(most_held.load(Ordering::Relaxed), 0);
    assert_eq!(waits.load(Ordering::Relaxed), 0);
}

#[test]
fn a_job_whose_engine_never_completes_ends_naming_the_engine_state() {
    let outcome = run_on(Misbehaviour::NeverCompletes);
    let failure = outcome.failure.expect("the job fails");
    assert_eq!(failure.errno, 110, "{failure:?}");
    assert!(
        failure.message.starts_with("no progress for ")
            && failure.message.ends_with(
                " reaps in a row returned no completion (reap(1)) with 4 requests in flight (null; 4 in flight)"
            ),
        "{}",
        failure.message
    );
    assert_eq!((outcome.submitted, outcome.abandoned), (4, 4));
    assert_eq!(outcome.completed + outcome.failed, 0);
}

#[test]
fn a_job_whose_commits_fail_leaves_after_repeated_errors() {
    let outcome = run_on(Misbehaviour::CommitAlwaysFails);
    let failure = outcome.failure.expect("the job fails");
    assert!(
        failure
            .message
            .starts_with("commit: ioengine misbehaving: submit"),
        "{}",
        failure.message
    );
    assert_eq!(outcome.abandoned, outcome.submitted);
    assert!(outcome.submitted >= 1);
}

#[test]
fn completions_appended_before_a_reap_error_count_once() {
    let outcome = run_on(Misbehaviour::ReapFailsAfterAppending);
    let failure = outcome.failure.expect("the job fails");
    assert!(failure.message.starts_with("reap: "), "{}", failure.message);
    assert_eq!(outcome.abandoned, 0);
    assert_eq!(outcome.failed, 0);
    assert_eq!(outcome.submitted, outcome.completed);
    assert!(outcome.completed >= 4, "{}", outcome.completed);
    assert_eq!(
        outcome.stats.dir(DataDir::Read).total_ios(),
        outcome.completed
    );
}
