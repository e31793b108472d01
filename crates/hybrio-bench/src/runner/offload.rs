//! `io_submit_mode=offload`: the job's engine runs in a thread of its own.
//! The job's thread plans, paces and times its I/O and hands each request
//! over; the submitting thread queues, commits and reaps on the engine and
//! hands the completions back. A job whose submissions may block (a full
//! device queue, a buffered write that waits for writeback) then still
//! issues on its schedule (`rate_iops`, `rate_process=poisson`), which is
//! what fio's offload mode is for. fio hands each I/O to one of `iodepth`
//! worker threads, each with an engine of its own at depth 1; hybrio keeps
//! one engine at the job's depth in one thread, so that the engine works as
//! it does without offload.

use std::fs::File;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};

use hybrio::engine::{Engine, EngineCounters, EngineKind, QueueOutcome};
use hybrio::file::{Caching, FileHandle};
use hybrio::request::{Completion, Request};

/// Work for the submitting thread, done on its engine.
type Call = Box<dyn FnOnce(&mut dyn Engine) + Send>;

enum ToSubmitter {
    /// Queue this request.
    Request(Request),
    /// Commit what is queued.
    Commit,
    /// Run this on the engine and answer.
    Call(Call),
}

/// The job's side of an engine that runs in a submitting thread.
#[derive(Debug)]
pub struct OffloadEngine {
    kind: EngineKind,
    depth: usize,
    in_flight: usize,
    to_submitter: Option<Sender<ToSubmitter>>,
    completions: Receiver<Result<Completion, String>>,
    submitter: Option<std::thread::JoinHandle<()>>,
    description: String,
}

impl std::fmt::Debug for ToSubmitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToSubmitter::Request(_) => "Request",
            ToSubmitter::Commit => "Commit",
            ToSubmitter::Call(_) => "Call",
        })
    }
}

impl OffloadEngine {
    /// Starts the submitting thread, which builds its engine with `open`
    /// (an io_uring ring belongs to the thread that made it).
    pub fn start(
        depth: u32,
        open: impl FnOnce() -> Result<Box<dyn Engine>, hybrio::Error> + Send + 'static,
    ) -> Result<OffloadEngine, hybrio::Error> {
        let (to_submitter, requests) = channel::<ToSubmitter>();
        let (done, completions) = channel();
        let (ready, started) = channel();
        let submitter = std::thread::Builder::new()
            .name("hybrio-submit".into())
            .spawn(move || match open() {
                Ok(engine) => {
                    let _ = ready.send(Ok((engine.kind(), engine.description())));
                    submit(engine, &requests, &done);
                }
                Err(error) => {
                    let _ = ready.send(Err(error));
                }
            })
            .map_err(|e| hybrio::Error::io("start the submitting thread", "offload", e))?;
        let (kind, description) = started.recv().map_err(|_| gone())??;
        Ok(OffloadEngine {
            kind,
            depth: depth.max(1) as usize,
            in_flight: 0,
            to_submitter: Some(to_submitter),
            completions,
            submitter: Some(submitter),
            description: format!(
                "{description}; submitted from its own thread (io_submit_mode=offload)"
            ),
        })
    }

    /// Runs `work` on the engine in the submitting thread and waits for its answer.
    fn call<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn Engine) -> T + Send + 'static,
    ) -> Option<T> {
        let (answer, answered) = channel();
        let call: Call = Box::new(move |engine| {
            let _ = answer.send(work(engine));
        });
        self.to_submitter
            .as_ref()?
            .send(ToSubmitter::Call(call))
            .ok()?;
        answered.recv().ok()
    }
}

/// The submitting thread gave up (its engine failed, or it ended).
fn gone() -> hybrio::Error {
    hybrio::Error::io(
        "hand a request to the submitting thread",
        "offload",
        std::io::Error::from_raw_os_error(32),
    )
}

/// The submitting thread: takes requests and calls, and hands completions
/// back as they come. It waits on the job's messages while nothing is in
/// flight, and on the engine while something is (a message then waits for
/// the next completion, as a request waits for a free worker in fio's).
fn submit(
    mut engine: Box<dyn Engine>,
    requests: &Receiver<ToSubmitter>,
    done: &Sender<Result<Completion, String>>,
) {
    let mut completions = Vec::new();
    let mut backlog: Vec<Request> = Vec::new();
    loop {
        let message = if engine.in_flight() == 0 && backlog.is_empty() {
            match requests.recv() {
                Ok(message) => Some(message),
                Err(_) => return,
            }
        } else {
            match requests.try_recv() {
                Ok(message) => Some(message),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return,
            }
        };
        match message {
            Some(ToSubmitter::Request(request)) => backlog.push(request),
            Some(ToSubmitter::Commit) => {
                if let Err(error) = hand_over(engine.as_mut(), &mut backlog, &mut completions) {
                    let _ = done.send(Err(error.to_string()));
                    return;
                }
            }
            Some(ToSubmitter::Call(call)) => call(engine.as_mut()),
            None => {
                let min = usize::from(engine.in_flight() > 0);
                if let Err(error) = engine.reap(min, usize::MAX, &mut completions) {
                    let _ = done.send(Err(error.to_string()));
                    return;
                }
                // A request the engine was too full for goes in now.
                if !backlog.is_empty()
                    && let Err(error) = hand_over(engine.as_mut(), &mut backlog, &mut completions)
                {
                    let _ = done.send(Err(error.to_string()));
                    return;
                }
            }
        }
        for completion in completions.drain(..) {
            if done.send(Ok(completion)).is_err() {
                return;
            }
        }
    }
}

/// Queues the requests waiting in `backlog` (those the engine is too full
/// for stay there) and commits them.
fn hand_over(
    engine: &mut dyn Engine,
    backlog: &mut Vec<Request>,
    completions: &mut Vec<Completion>,
) -> Result<usize, hybrio::Error> {
    for request in std::mem::take(backlog) {
        match engine.queue(request) {
            QueueOutcome::Completed(completion) => completions.push(completion),
            QueueOutcome::Queued => {}
            QueueOutcome::Busy(request) => backlog.push(request),
        }
    }
    engine.commit()
}

impl Drop for OffloadEngine {
    fn drop(&mut self) {
        // The thread ends once its messages stop; its engine is dropped
        // there (and waits for what it still has in flight).
        self.to_submitter = None;
        if let Some(submitter) = self.submitter.take() {
            let _ = submitter.join();
        }
    }
}

impl Engine for OffloadEngine {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn add_file(&mut self, file: File, path: PathBuf) -> Result<FileHandle, hybrio::Error> {
        self.call(move |engine| engine.add_file(file, path))
            .unwrap_or_else(|| Err(gone()))
    }

    fn remove_file(&mut self, handle: FileHandle) -> Result<File, hybrio::Error> {
        self.call(move |engine| engine.remove_file(handle))
            .unwrap_or_else(|| Err(gone()))
    }

    fn set_caching(&mut self, handle: FileHandle, caching: Caching) -> Result<(), hybrio::Error> {
        self.call(move |engine| engine.set_caching(handle, caching))
            .unwrap_or_else(|| Err(gone()))
    }

    fn set_atomic_writes(&mut self, handle: FileHandle, atomic: bool) -> Result<(), hybrio::Error> {
        self.call(move |engine| engine.set_atomic_writes(handle, atomic))
            .unwrap_or_else(|| Err(gone()))
    }

    fn queue(&mut self, request: Request) -> QueueOutcome {
        if self.in_flight >= self.depth {
            return QueueOutcome::Busy(request);
        }
        let Some(to_submitter) = &self.to_submitter else {
            return QueueOutcome::Completed(request.complete(-32));
        };
        match to_submitter.send(ToSubmitter::Request(request)) {
            Ok(()) => {
                self.in_flight += 1;
                QueueOutcome::Queued
            }
            Err(returned) => match returned.0 {
                // The thread is gone: the request fails (EPIPE).
                ToSubmitter::Request(request) => QueueOutcome::Completed(request.complete(-32)),
                _ => unreachable!("the message sent was a request"),
            },
        }
    }

    fn commit(&mut self) -> Result<usize, hybrio::Error> {
        let to_submitter = self.to_submitter.as_ref().ok_or_else(gone)?;
        to_submitter.send(ToSubmitter::Commit).map_err(|_| gone())?;
        Ok(self.in_flight)
    }

    fn reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, hybrio::Error> {
        let mut got = 0;
        while got < max {
            let next = if got < min.min(self.in_flight + got) {
                self.completions.recv().map_err(|_| gone())?
            } else {
                match self.completions.try_recv() {
                    Ok(next) => next,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return Err(gone()),
                }
            };
            let completion = next.map_err(|message| {
                hybrio::Error::io(
                    "submit from the offload thread",
                    "offload",
                    std::io::Error::other(message),
                )
            })?;
            self.in_flight -= 1;
            out.push(completion);
            got += 1;
        }
        Ok(got)
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn is_synchronous(&self) -> bool {
        false
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn counters(&self) -> EngineCounters {
        self.call(|engine| engine.counters()).unwrap_or_default()
    }
}
