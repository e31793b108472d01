//! Engines whose every answer the model test draws: each choice reads one
//! byte of a tape the test generates, and a byte of 0 (what shrinking
//! tends to) is always the plain answer. They keep the engine contract (a
//! reap returns at least `min(min, committed)` unless it fails, `Busy` only
//! at the depth) and answer everything else the contract allows. Their
//! "kernel" answers short and "try again" too, and they apply the [retry
//! rule](crate::engine::retry) to that where the request lies, as every
//! engine does.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::Error;
use crate::engine::retry::{Retry, Track};
use crate::engine::{Engine, EngineKind, QueueOutcome};
use crate::file::FileHandle;
use crate::request::{Completion, Op, Request, Verdict};

/// Calls into the scripted engines within one step of the caller past
/// which the step counts as a spin.
const SPIN_LIMIT: u64 = 100_000;

/// The byte every model file holds at `offset`; `salt` tells the files apart.
pub(super) fn byte_at(salt: u8, offset: u64) -> u8 {
    (offset.wrapping_mul(31) ^ (offset >> 9) ^ u64::from(salt).wrapping_mul(73)) as u8
}

/// What the scripted engines share with the test: the tape of answers and
/// a count of calls since the caller's last step.
#[derive(Debug)]
pub(super) struct Script {
    tape: Mutex<(Vec<u8>, usize)>,
    calls: AtomicU64,
    /// A scripted engine answered `Busy` below its depth in this step.
    refused_below_depth: AtomicBool,
}

impl Script {
    pub(super) fn new(tape: Vec<u8>) -> Arc<Script> {
        Arc::new(Script {
            tape: Mutex::new((tape, 0)),
            calls: AtomicU64::new(0),
            refused_below_depth: AtomicBool::new(false),
        })
    }

    /// The next byte of the tape; 0 once it has run out.
    fn draw(&self) -> u8 {
        let mut tape = self.tape.lock().unwrap();
        let (bytes, at) = &mut *tape;
        let byte = bytes.get(*at).copied().unwrap_or(0);
        *at += 1;
        byte
    }

    /// Counts a call into a scripted engine; panics when one step of the
    /// caller makes too many (an engine going round in circles).
    pub(super) fn call(&self, what: &str) {
        let calls = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        assert!(
            calls <= SPIN_LIMIT,
            "spin: {calls} calls into the scripted engines in one step of the caller (last: {what})"
        );
    }

    /// The caller takes a new step.
    pub(super) fn step(&self) {
        self.calls.store(0, Ordering::Relaxed);
        self.refused_below_depth.store(false, Ordering::Relaxed);
    }

    /// True when a scripted engine answered `Busy` below its depth in this step.
    pub(super) fn refused_below_depth(&self) -> bool {
        self.refused_below_depth.load(Ordering::Relaxed)
    }
}

/// How a scripted request ends, drawn from one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Whole,
    Short,
    Again,
    Interrupted,
    Failed,
}

impl Answer {
    fn from_byte(byte: u8) -> Answer {
        match byte {
            0..170 => Answer::Whole,
            170..205 => Answer::Short,
            205..225 => Answer::Again,
            225..240 => Answer::Interrupted,
            _ => Answer::Failed,
        }
    }
}

/// The files an engine was given: each one's salt (from its name, `f<salt>`)
/// and whether it is `O_DIRECT` (`d<salt>`).
#[derive(Debug, Default)]
struct Files(Vec<(u8, bool)>);

impl Files {
    fn add(&mut self, path: &std::path::Path) -> FileHandle {
        let name = path.file_name().unwrap().to_str().unwrap();
        let salt = name[1..]
            .parse()
            .expect("model files are named f<n> or d<n>");
        self.0.push((salt, name.starts_with('d')));
        FileHandle(self.0.len() as u32 - 1)
    }

    /// Does `request` as the tape says, and again while the rule says so;
    /// returns its answer.
    fn perform_whole(&self, script: &Script, retry: &mut Retry, request: &mut Request) -> i64 {
        let mut track = None;
        loop {
            let answer = Answer::from_byte(script.draw());
            let result = self.perform_in_place(request, answer);
            match retry.decide_request(request, &mut track, result) {
                Verdict::Done(result) => return result,
                Verdict::Again => script.call("send again"),
            }
        }
    }

    /// [`Files::perform`] on the request where it lies: its answer.
    fn perform_in_place(&self, request: &mut Request, answer: Answer) -> i64 {
        let errno = match answer {
            Answer::Again => Some(libc::EAGAIN),
            Answer::Interrupted => Some(libc::EINTR),
            Answer::Failed => Some(libc::EIO),
            Answer::Whole | Answer::Short => None,
        };
        if let Some(errno) = errno {
            return -i64::from(errno);
        }
        let (salt, direct) = self.0[request.file.index()];
        let len = request.len();
        let mut moved = len;
        if answer == Answer::Short {
            let half = if direct { len / 2 / 512 * 512 } else { len / 2 };
            if half > 0 {
                moved = half;
            }
        }
        if direct {
            assert!(
                request.offset.is_multiple_of(512) && moved.is_multiple_of(512),
                "O_DIRECT request off the sector: offset {} length {moved}",
                request.offset
            );
        }
        let offset = request.offset;
        match (request.op, request.buffer_mut()) {
            (Op::Read, Some(buf)) => {
                for (i, byte) in buf.as_mut_slice()[..moved].iter_mut().enumerate() {
                    *byte = byte_at(salt, offset + i as u64);
                }
            }
            (Op::Write, Some(buf)) => {
                for (i, &byte) in buf.as_slice()[..moved].iter().enumerate() {
                    assert_eq!(
                        byte,
                        byte_at(salt, offset + i as u64),
                        "a write puts the wrong byte at offset {}",
                        offset + i as u64
                    );
                }
            }
            _ => moved = 0,
        }
        moved as i64
    }
}

fn refused(op: &'static str, errno: i32) -> Error {
    Error::Engine {
        engine: "scripted",
        op,
        source: io::Error::from_raw_os_error(errno),
    }
}

/// A synchronous engine: every request completes inside `queue`, whole,
/// short, or failed as the tape says.
#[derive(Debug)]
pub(super) struct ScriptedInline {
    script: Arc<Script>,
    files: Files,
    retry: Retry,
}

impl ScriptedInline {
    pub(super) fn new(script: Arc<Script>) -> Self {
        ScriptedInline {
            script,
            files: Files::default(),
            retry: Retry::new(false),
        }
    }
}

impl Engine for ScriptedInline {
    fn kind(&self) -> EngineKind {
        EngineKind::Psync
    }
    fn add_file(&mut self, _file: File, path: PathBuf) -> Result<FileHandle, Error> {
        Ok(self.files.add(&path))
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        Err(Error::BadHandle(handle.0))
    }
    fn queue(&mut self, mut request: Request) -> QueueOutcome {
        self.script.call("inline queue");
        let result = self
            .files
            .perform_whole(&self.script, &mut self.retry, &mut request);
        QueueOutcome::Completed(request.complete(result))
    }
    fn commit(&mut self) -> Result<usize, Error> {
        Ok(0)
    }
    fn reap(&mut self, _: usize, _: usize, _: &mut Vec<Completion>) -> Result<usize, Error> {
        Ok(0)
    }
    fn in_flight(&self) -> usize {
        0
    }
    fn is_synchronous(&self) -> bool {
        true
    }
}

impl crate::engine::alias::SharesFiles for ScriptedInline {}

impl crate::engine::inline::InlinePath for ScriptedInline {
    fn run_in_place(&mut self, request: &mut Request) -> i64 {
        self.script.call("inline queue");
        self.files
            .perform_whole(&self.script, &mut self.retry, request)
    }
}

/// An asynchronous engine of `depth`: a request may complete inside
/// `queue`; its SQ may look full for a few calls although it is not (as an
/// SQPOLL ring's did, and as the kernel's may on a ring of another
/// library), the one answer outside the contract: `Busy` below the depth;
/// committing may fail (nothing is handed over then); a reap hands back at
/// least what it must and any more it likes, completes uncommitted requests
/// now and then (as an SQPOLL thread does), and may fail after appending
/// completions.
#[derive(Debug)]
pub(super) struct ScriptedAsync {
    script: Arc<Script>,
    files: Files,
    depth: usize,
    /// Each with its record while it is sent again.
    queued: VecDeque<(Request, Option<Track>)>,
    committed: VecDeque<(Request, Option<Track>)>,
    /// Calls to `queue` that still find the SQ looking full.
    full_for: u8,
    retry: Retry,
}

impl ScriptedAsync {
    pub(super) fn new(script: Arc<Script>, depth: usize) -> Self {
        ScriptedAsync {
            script,
            files: Files::default(),
            depth,
            queued: VecDeque::new(),
            committed: VecDeque::new(),
            full_for: 0,
            retry: Retry::new(false),
        }
    }

    /// Answers a request the kernel has: into `out` when the rule is done
    /// with it, else back to the kernel for what it asks next. Returns
    /// whether it went to `out`.
    fn complete(
        &mut self,
        (mut request, mut track): (Request, Option<Track>),
        out: &mut Vec<Completion>,
    ) -> bool {
        let answer = Answer::from_byte(self.script.draw());
        let result = self.files.perform_in_place(&mut request, answer);
        match self.retry.decide_request(&mut request, &mut track, result) {
            Verdict::Done(result) => {
                out.push(request.complete(result));
                true
            }
            Verdict::Again => {
                self.committed.push_back((request, track));
                false
            }
        }
    }
}

impl Engine for ScriptedAsync {
    fn kind(&self) -> EngineKind {
        EngineKind::Libaio
    }
    fn add_file(&mut self, _file: File, path: PathBuf) -> Result<FileHandle, Error> {
        Ok(self.files.add(&path))
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        Err(Error::BadHandle(handle.0))
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        self.script.call("queue");
        if self.in_flight() >= self.depth {
            return QueueOutcome::Busy(request);
        }
        if self.full_for == 0 {
            match self.script.draw() {
                0..230 => {}
                230..245 => {
                    let mut request = request;
                    let result =
                        self.files
                            .perform_whole(&self.script, &mut self.retry, &mut request);
                    return QueueOutcome::Completed(request.complete(result));
                }
                byte => self.full_for = byte % 4 + 1,
            }
        }
        if self.full_for > 0 {
            self.full_for -= 1;
            self.script
                .refused_below_depth
                .store(true, Ordering::Relaxed);
            return QueueOutcome::Busy(request);
        }
        self.queued.push_back((request, None));
        QueueOutcome::Queued
    }
    fn commit(&mut self) -> Result<usize, Error> {
        self.script.call("commit");
        if self.queued.is_empty() {
            return Ok(0);
        }
        if self.script.draw() >= 240 {
            return Err(refused("submit", libc::EAGAIN));
        }
        let n = self.queued.len();
        self.committed.append(&mut self.queued);
        Ok(n)
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        self.script.call("reap");
        let start = out.len();
        let owed = min.min(max).min(self.committed.len());
        // A few more than owed, as many as the tape says are ready.
        let extra = usize::from(self.script.draw() % 4);
        let count = (owed + extra).min(max).min(self.committed.len());
        let fail_after = match self.script.draw() {
            0..235 => None,
            byte => Some(usize::from(byte) % (count + 1)),
        };
        let mut n = 0;
        while n < count {
            if fail_after == Some(n) {
                return Err(refused("getevents", libc::EIO));
            }
            self.script.call("reap one");
            let request = self.committed.pop_front().expect("counted");
            n += usize::from(self.complete(request, out));
        }
        if fail_after == Some(count) {
            return Err(refused("getevents", libc::EIO));
        }
        // Now and then a request completes before its commit.
        if out.len() - start < max && !self.queued.is_empty() && self.script.draw() >= 235 {
            let request = self.queued.pop_front().expect("not empty");
            self.complete(request, out);
        }
        Ok(out.len() - start)
    }
    fn in_flight(&self) -> usize {
        self.queued.len() + self.committed.len()
    }
    fn is_synchronous(&self) -> bool {
        false
    }
}
