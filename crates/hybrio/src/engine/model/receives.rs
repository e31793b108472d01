//! A model of standing receives: the plain stack (resubmission over fault
//! injection) over a real io_uring ring with `recv_multishot`, given a few
//! Unix datagram sockets (as many as the depth, or more) besides the model
//! files, driven by random receives and sends on each socket, datagrams
//! its peer sends in, file reads, commits, reaps and a drop.
//!
//! Unix datagrams, not UDP: one is in the receiver's queue when `send`
//! returns, so what a receive can get never depends on timing. Before a
//! reap that may wait, and in the final drain, each socket is given as many
//! datagrams as it has receives waiting beyond those already sent, so that
//! no wait is for data that never comes; the datagrams waiting on a socket
//! stay under its queue's limit (`net.unix.max_dgram_qlen`), so that no
//! send of the peer blocks.
//!
//! After every step it checks that `Busy` comes only with `in_flight() >=
//! depth`, the request untouched; that `in_flight()` is exact; that every
//! request completes once, with its own tag, operation and file; that a
//! receive gets a whole datagram of its socket's, the next one its peer
//! sent; that a completed send's datagram is in the peer's queue; that a
//! file read gets the file's bytes; that only injected faults (`EIO`) fail
//! a receive or a send; and that `reap(min >= 1)` with
//! committed requests out returns one within a few calls. At the end every
//! datagram sent has been received, nothing more comes, and (after a drop,
//! too) every buffer is back in the pool.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixDatagram;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::request::{self, Expected, LARGEST};
use super::stack::{self, Count, Files};
use super::{MAX_DRAIN_CALLS, check_reaped};
use crate::buf::BufPool;
use crate::engine::io_uring::IoUringEngine;
use crate::engine::{Engine, EngineConfig, EngineKind, QueueOutcome};
use crate::file::FileHandle;
use crate::request::{Completion, Op, Request};

type Checked = Result<(), TestCaseError>;

/// Datagrams sent into a socket and not yet received, at most: under the
/// socket's queue limit (10 by default, checked), above the depth.
const MOST_WAITING: u32 = 8;

/// A datagram's size, at most; every receive is longer.
const LONGEST_DATAGRAM: usize = 64;

/// Receive lengths a socket may have (each socket keeps its first: a
/// longer one on a Unix socket completes with `EMSGSIZE`).
const RECEIVE_LENGTHS: [usize; 3] = [LONGEST_DATAGRAM, 200, LARGEST];

/// One thing the caller does; sockets are taken modulo their count.
#[derive(Debug, Clone)]
enum Step {
    /// Queue a receive on the socket.
    Receive {
        socket: u8,
    },
    /// Queue a send of `size` bytes (1 to 64) on the socket.
    Send {
        socket: u8,
        size: u8,
    },
    /// The socket's peer sends it `count` datagrams (fewer if that many
    /// would be waiting).
    PeerSends {
        socket: u8,
        count: u8,
    },
    /// Queue a read of a model file.
    Read {
        file: u8,
        at: u16,
        size: u8,
    },
    Commit,
    Reap {
        min: u8,
        max: u8,
    },
    /// Drop the engine with whatever it holds.
    Drop,
}

#[derive(Debug, Clone)]
struct Case {
    depth: u32,
    /// Each socket's receive length, an index into [`RECEIVE_LENGTHS`].
    sockets: Vec<u8>,
    /// 0: no fault injection; 1: `EAGAIN` and `EIO` (which a request meets
    /// before it reaches the ring) and short file reads; no delays, which
    /// would reorder a socket's receives.
    faults: u8,
    fault_seed: u64,
    steps: Vec<Step>,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        30 => any::<u8>().prop_map(|socket| Step::Receive { socket }),
        10 => (any::<u8>(), any::<u8>()).prop_map(|(socket, size)| Step::Send { socket, size }),
        20 => (any::<u8>(), 1u8..4).prop_map(|(socket, count)| Step::PeerSends { socket, count }),
        12 => (0u8..3, any::<u16>(), any::<u8>())
            .prop_map(|(file, at, size)| Step::Read { file, at, size }),
        15 => Just(Step::Commit),
        25 => (0u8..4, 1u8..9).prop_map(|(min, max)| Step::Reap { min, max }),
        1 => Just(Step::Drop),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        1u32..7,
        proptest::collection::vec(0u8..RECEIVE_LENGTHS.len() as u8, 1..5),
        0u8..2,
        any::<u64>(),
        proptest::collection::vec(step(), 1..100),
    )
        .prop_map(|(depth, sockets, faults, fault_seed, mut steps)| {
            // A drop ends the run: keep at most one, last.
            if let Some(first) = steps.iter().position(|s| matches!(s, Step::Drop)) {
                steps.truncate(first + 1);
            }
            Case {
                depth,
                sockets,
                faults,
                fault_seed,
                steps,
            }
        })
}

/// Datagram `n` of the peer of socket `socket`: the socket, the number,
/// then bytes that depend on both; 8 to [`LONGEST_DATAGRAM`] bytes.
fn datagram(socket: usize, n: u32) -> Vec<u8> {
    let len = 8 + (n as usize * 13 + socket) % (LONGEST_DATAGRAM - 7);
    let mut bytes: Vec<u8> = (0..len)
        .map(|i| (i as u32 * 7 + n * 3 + socket as u32) as u8)
        .collect();
    bytes[0] = socket as u8;
    bytes[1..5].copy_from_slice(&n.to_le_bytes());
    bytes
}

/// What the engine sends for request `tag` on socket `socket`: `len`
/// bytes (at least 1) told apart by the tag.
fn message(socket: usize, tag: u64, len: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..len.max(10))
        .map(|i| (i as u64 * 11 + tag) as u8)
        .collect();
    bytes[0] = 0xee;
    bytes[1] = socket as u8;
    bytes[2..10].copy_from_slice(&tag.to_le_bytes());
    bytes.truncate(len);
    bytes
}

/// One of the engine's sockets and its peer.
struct Socket {
    handle: FileHandle,
    peer: UnixDatagram,
    /// Every receive's length.
    len: usize,
    /// Datagrams the peer sent in.
    sent: u32,
    /// Datagrams receives got.
    received: u32,
    /// Datagrams the engine sent that the peer has read and no completed
    /// send has claimed yet.
    at_peer: Vec<Vec<u8>>,
}

impl Socket {
    fn waiting(&self) -> u32 {
        self.sent - self.received
    }
}

/// A request the caller has out.
#[derive(Debug)]
enum What {
    Receive(usize),
    Send(usize, Vec<u8>),
    Read(Expected),
}

/// What the runs did, to see that they reach what they should.
#[derive(Debug, Default)]
struct Tally {
    steps: Count,
    datagrams_received: Count,
    received_in_queue: Count,
    sends: Count,
    reads: Count,
    failed: Count,
    busy: Count,
    more_sockets_than_depth: Count,
    drops_with_requests_out: Count,
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} steps, {} datagrams received ({} inside queue), {} sends, {} file reads, {} failed completions, {} Busy, {} cases with more sockets than the depth, {} drops with requests out",
            self.steps,
            self.datagrams_received,
            self.received_in_queue,
            self.sends,
            self.reads,
            self.failed,
            self.busy,
            self.more_sockets_than_depth,
            self.drops_with_requests_out
        )
    }
}

/// The stack under test and what the caller knows of it.
struct Caller<'a> {
    engine: Option<Box<dyn Engine>>,
    pool: BufPool,
    depth: usize,
    sockets: Vec<Socket>,
    handles: Vec<(FileHandle, u8, bool)>,
    files: &'a Files,
    /// By tag: the request, and whether a commit has handed it over.
    outstanding: HashMap<u64, (What, bool)>,
    next_tag: u64,
    fruitless: u32,
    injecting: bool,
    tally: &'a Tally,
}

impl<'a> Caller<'a> {
    /// The stack for `case`, or `None` where the kernel has no multishot
    /// receive.
    fn new(case: &Case, files: &'a Files, tally: &'a Tally) -> Option<Caller<'a>> {
        let mut config = EngineConfig::with_depth(case.depth);
        config.recv_multishot = true;
        config.inject = (case.faults != 0).then(|| {
            format!("short:0.1,eagain:0.1,eio:0.02,seed:{}", case.fault_seed)
                .parse()
                .unwrap()
        });
        let pool = BufPool::new(case.depth as usize + 2, LARGEST).unwrap();
        // As `engine::open` makes it.
        let mut engine: Box<dyn Engine> = Box::new(IoUringEngine::new(&config, Some(&pool)).ok()?);
        let handles = stack::add_files(engine.as_mut(), files);
        let mut sockets = Vec::new();
        for (k, &len) in case.sockets.iter().enumerate() {
            let (peer, ours) = UnixDatagram::pair().unwrap();
            // Never blocks the test: a datagram it cannot send or find is a failure.
            peer.set_nonblocking(true).unwrap();
            let handle = engine.add_socket(OwnedFd::from(ours), &format!("socket {k}"));
            sockets.push(Socket {
                handle: handle.ok()?,
                peer,
                len: RECEIVE_LENGTHS[usize::from(len)],
                sent: 0,
                received: 0,
                at_peer: Vec::new(),
            });
        }
        if sockets.len() > case.depth as usize {
            tally.more_sockets_than_depth.add();
        }
        Some(Caller {
            engine: Some(engine),
            pool,
            depth: case.depth as usize,
            sockets,
            handles,
            files,
            outstanding: HashMap::new(),
            next_tag: 1,
            fruitless: 0,
            injecting: case.faults != 0,
            tally,
        })
    }

    fn engine(&mut self) -> &mut dyn Engine {
        self.engine.as_deref_mut().expect("not dropped")
    }

    fn step(&mut self, step: &Step) -> Checked {
        self.tally.steps.add();
        let count = self.sockets.len();
        let socket = |k: u8| usize::from(k) % count;
        match *step {
            Step::Receive { socket: k } => self.receive(socket(k))?,
            Step::Send { socket: k, size } => self.send(socket(k), usize::from(size) % 64 + 1)?,
            Step::PeerSends { socket: k, count } => {
                let k = socket(k);
                for _ in 0..count {
                    if self.sockets[k].waiting() < MOST_WAITING {
                        self.peer_sends(k)?;
                    }
                }
            }
            Step::Read { file, at, size } => {
                let tag = self.take_tag();
                let made = request::make(
                    self.files,
                    &self.handles,
                    &self.pool,
                    file,
                    0,
                    at,
                    size,
                    tag,
                );
                let (request, expected) = made.expect("a buffer for each request out, and more");
                self.queue(request, What::Read(expected))?;
            }
            Step::Commit => self.commit(),
            Step::Reap { min, max } => self.reap(usize::from(min), usize::from(max))?,
            Step::Drop => return self.drop_engine(),
        }
        self.check_in_flight()
    }

    fn take_tag(&mut self) -> u64 {
        self.next_tag += 1;
        self.next_tag - 1
    }

    fn buffer(&self, len: usize) -> crate::buf::Buf {
        let mut buf = self
            .pool
            .take()
            .expect("a buffer for each request out, and more");
        buf.set_len(len);
        buf
    }

    fn receive(&mut self, k: usize) -> Checked {
        let tag = self.take_tag();
        let buf = self.buffer(self.sockets[k].len);
        let request = Request::recv(self.sockets[k].handle, buf, tag);
        self.queue(request, What::Receive(k))
    }

    fn send(&mut self, k: usize, len: usize) -> Checked {
        let tag = self.take_tag();
        let bytes = message(k, tag, len);
        let mut buf = self.buffer(len);
        buf.as_mut_slice().copy_from_slice(&bytes);
        let request = Request::send(self.sockets[k].handle, buf, tag);
        self.queue(request, What::Send(k, bytes))
    }

    fn peer_sends(&mut self, k: usize) -> Checked {
        let socket = &mut self.sockets[k];
        let bytes = datagram(k, socket.sent);
        let sent = socket.peer.send(&bytes);
        check!(
            matches!(sent, Ok(n) if n == bytes.len()),
            "the peer of socket {k} could not send datagram {} with {} waiting: {sent:?}",
            socket.sent,
            socket.waiting()
        );
        socket.sent += 1;
        Ok(())
    }

    /// Gives each socket as many datagrams as it has receives out beyond
    /// those waiting, so that every receive out can complete.
    fn top_up(&mut self) -> Checked {
        for k in 0..self.sockets.len() {
            let receives = self
                .outstanding
                .values()
                .filter(|(what, _)| matches!(what, What::Receive(s) if *s == k))
                .count() as u32;
            while self.sockets[k].waiting() < receives {
                self.peer_sends(k)?;
            }
        }
        Ok(())
    }

    fn queue(&mut self, request: Request, what: What) -> Checked {
        let (tag, op, file, len) = (request.user_data, request.op, request.file, request.len());
        let receive = op == Op::Recv;
        match self.engine().queue(request) {
            QueueOutcome::Completed(completion) => {
                self.tally
                    .received_in_queue
                    .add_if(receive && completion.result > 0);
                self.outstanding.insert(tag, (what, false));
                self.check_completion(completion)?;
            }
            QueueOutcome::Queued => {
                self.outstanding.insert(tag, (what, false));
            }
            QueueOutcome::Busy(back) => {
                self.tally.busy.add();
                let in_flight = self.engine().in_flight();
                check!(
                    in_flight >= self.depth,
                    "Busy with {in_flight} in flight, below the depth of {} ({op:?} on {file:?}): {:?}",
                    self.depth,
                    self.engine.as_deref()
                );
                check!(
                    back.user_data == tag
                        && back.op == op
                        && back.file == file
                        && back.len() == len,
                    "Busy handed back another request: {back:?}"
                );
            }
        }
        Ok(())
    }

    fn commit(&mut self) {
        if self.engine().commit().is_ok() {
            for (_, committed) in self.outstanding.values_mut() {
                *committed = true;
            }
        }
    }

    fn reap(&mut self, min: usize, max: usize) -> Checked {
        if min >= 1 {
            self.top_up()?;
        }
        let committed = self.outstanding.values().any(|(_, committed)| *committed);
        let mut done = Vec::new();
        let reaped = self.engine().reap(min, max, &mut done);
        let appended = done.len();
        for completion in done {
            self.check_completion(completion)?;
        }
        let n = match reaped {
            Ok(n) => n,
            Err(e) => return Err(TestCaseError::fail(format!("reap({min}, {max}): {e}"))),
        };
        check_reaped(
            n,
            appended,
            (min, max),
            committed,
            &mut self.fruitless,
            " (every receive's datagram sent)",
            &self.engine.as_deref(),
        )
    }

    fn check_completion(&mut self, completion: Completion) -> Checked {
        let tag = completion.user_data;
        let Some((what, _)) = self.outstanding.remove(&tag) else {
            return Err(TestCaseError::fail(format!(
                "a completion for no request out (unknown or completed twice): {completion:?}"
            )));
        };
        let result = completion.result;
        if result < 0 {
            self.tally.failed.add();
        }
        // Fault injection fails requests with EIO before they reach the
        // ring. Its EAGAIN never comes up: the resubmission layer retries
        // it (a thousand injected in a row are beyond chance).
        let may_fail = |result: i64| self.injecting && result == -i64::from(libc::EIO);
        match what {
            What::Read(expected) => {
                self.tally.reads.add();
                request::check(&expected, &completion)
            }
            What::Receive(k) => {
                let socket = &mut self.sockets[k];
                check!(
                    completion.op == Op::Recv && completion.file == socket.handle,
                    "completion {tag} is not its receive's on socket {k}: {completion:?}"
                );
                check!(
                    completion.buf.start() == 0 && completion.buf.len() == socket.len,
                    "receive {tag}: buffer window {}..{} instead of 0..{}",
                    completion.buf.start(),
                    completion.buf.start() + completion.buf.len(),
                    socket.len
                );
                if result < 0 {
                    check!(
                        may_fail(result),
                        "receive {tag} on socket {k} failed with {result} ({} datagrams waiting)",
                        socket.waiting()
                    );
                    return Ok(());
                }
                let expected = datagram(k, socket.received);
                let got = &completion.buf.as_slice()[..result as usize];
                check!(
                    got == expected.as_slice(),
                    "receive {tag} on socket {k} got {got:?}, not datagram {} {expected:?}",
                    socket.received
                );
                socket.received += 1;
                self.tally.datagrams_received.add();
                Ok(())
            }
            What::Send(k, bytes) => {
                self.tally.sends.add();
                let socket = &mut self.sockets[k];
                check!(
                    completion.op == Op::Send && completion.file == socket.handle,
                    "completion {tag} is not its send's on socket {k}: {completion:?}"
                );
                if result < 0 {
                    check!(
                        may_fail(result),
                        "send {tag} on socket {k} failed with {result}"
                    );
                    return Ok(());
                }
                check!(
                    result as usize == bytes.len(),
                    "send {tag} of {} bytes on socket {k}: result {result}",
                    bytes.len()
                );
                // Sent means in the peer's queue.
                read_peer(socket)?;
                let found = socket.at_peer.iter().position(|d| *d == bytes);
                check!(
                    found.is_some(),
                    "send {tag} on socket {k} completed, but its peer has no such datagram"
                );
                socket.at_peer.swap_remove(found.unwrap_or(0));
                Ok(())
            }
        }
    }

    fn check_in_flight(&mut self) -> Checked {
        let in_flight = self.engine().in_flight();
        check!(
            in_flight == self.outstanding.len(),
            "in_flight() is {in_flight} with {} requests out: {:?}",
            self.outstanding.len(),
            self.engine.as_deref()
        );
        Ok(())
    }

    /// Commits and reaps until nothing is out, then receives every datagram
    /// still waiting.
    fn drain(&mut self) -> Checked {
        let mut calls = 0;
        loop {
            let waiting: Vec<usize> = (0..self.sockets.len())
                .filter(|&k| self.sockets[k].waiting() > 0)
                .collect();
            if self.outstanding.is_empty() && waiting.is_empty() {
                break;
            }
            calls += 1;
            check!(
                calls <= MAX_DRAIN_CALLS,
                "{} requests still out and datagrams waiting on sockets {waiting:?} after {MAX_DRAIN_CALLS} rounds: {:?}",
                self.outstanding.len(),
                self.engine.as_deref()
            );
            if self.outstanding.is_empty() {
                for k in waiting {
                    if self.engine().in_flight() < self.depth {
                        self.receive(k)?;
                    }
                }
            }
            self.commit();
            if !self.outstanding.is_empty() {
                self.reap(1, usize::MAX)?;
            }
            self.check_in_flight()?;
        }
        let mut done = Vec::new();
        let late = self.engine().reap(0, usize::MAX, &mut done);
        check!(
            matches!(late, Ok(0)) && done.is_empty(),
            "completions after the last one: {late:?} {done:?}"
        );
        for (k, socket) in self.sockets.iter_mut().enumerate() {
            read_peer(socket)?;
            check!(
                socket.at_peer.is_empty(),
                "the peer of socket {k} got datagrams no completed send sent: {:?}",
                socket.at_peer
            );
        }
        Ok(())
    }

    fn drop_engine(&mut self) -> Checked {
        if !self.outstanding.is_empty() {
            self.tally.drops_with_requests_out.add();
        }
        drop(self.engine.take());
        self.outstanding.clear();
        check!(
            self.pool.available() == self.pool.count(),
            "after the drop {} of {} buffers are back",
            self.pool.available(),
            self.pool.count()
        );
        Ok(())
    }
}

/// Reads what the engine sent to `socket`'s peer into its `at_peer`.
fn read_peer(socket: &mut Socket) -> Checked {
    let mut bytes = [0u8; 128];
    loop {
        match socket.peer.recv(&mut bytes) {
            Ok(n) => socket.at_peer.push(bytes[..n].to_vec()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("the peer's recv: {e}"))),
        }
    }
}

fn run_case(case: &Case, files: &Files, tally: &Tally) -> Checked {
    let Some(mut caller) = Caller::new(case, files, tally) else {
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

/// The most datagrams a Unix datagram socket queues (`net.unix.max_dgram_qlen`).
fn queue_limit() -> u32 {
    std::fs::read_to_string("/proc/sys/net/unix/max_dgram_qlen")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(10)
}

#[test]
fn model_of_standing_receives_on_a_multishot_ring() {
    if let Err(reason) = crate::probe::engine_available(EngineKind::IoUring) {
        eprintln!("receives model: skipped: {reason}");
        return;
    }
    if queue_limit() < MOST_WAITING {
        eprintln!(
            "receives model: skipped: net.unix.max_dgram_qlen is {}, below the {MOST_WAITING} datagrams it keeps waiting",
            queue_limit()
        );
        return;
    }
    stack::run("receives model", 1024, &case(), run_case);
}
