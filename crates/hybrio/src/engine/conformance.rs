//! One suite, every engine: each test runs the same sequence through every
//! engine flavour the system allows and expects the same answers.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::time::Duration;

use super::testkit::{add, data_file, finish, pattern, read_write, round_trip, run, scratch, take};
use super::{Engine, EngineConfig, EngineKind, QueueOutcome};
use crate::Error;
use crate::buf::{Buf, BufPool};
use crate::file::{self, FileHandle, OpenOptions};
use crate::probe;
use crate::request::{Completion, Op, Request};

mod atomic;
mod caching;
mod contract;
mod descriptors;
mod driver;
mod io_uring;
mod priority;
mod random_ops;
mod sockets;
mod space;

/// An engine kind with one configuration.
#[derive(Debug, Clone)]
struct Flavour {
    kind: EngineKind,
    config: EngineConfig,
    /// io_uring only: start the setup ladder at this rung, to run the
    /// fallbacks this kernel would not need.
    rung: Option<usize>,
    /// adaptive only: built as where the kernel refuses io_uring (the pool,
    /// and libaio for O_DIRECT files).
    without_io_uring: bool,
}

impl Flavour {
    fn new(kind: EngineKind, depth: u32) -> Self {
        Flavour {
            kind,
            config: EngineConfig::with_depth(depth),
            rung: None,
            without_io_uring: false,
        }
    }

    fn without_io_uring(depth: u32) -> Self {
        Flavour {
            without_io_uring: true,
            ..Flavour::new(EngineKind::Adaptive, depth)
        }
    }

    fn io_uring_from_rung(depth: u32, rung: usize) -> Self {
        Flavour {
            rung: Some(rung),
            ..Flavour::new(EngineKind::IoUring, depth)
        }
    }

    /// On the emulated device with a 20 us service time.
    fn emulated(kind: EngineKind, depth: u32) -> Self {
        let mut flavour = Flavour::new(kind, depth);
        flavour.config.completion_latency = Some(Duration::from_micros(20));
        flavour
    }

    /// Under fault injection of every recoverable kind: each injected fault
    /// must be invisible in the results.
    fn injected(kind: EngineKind, depth: u32) -> Self {
        let mut flavour = Flavour::new(kind, depth);
        flavour.config.inject = Some(RECOVERABLE_FAULTS.parse().unwrap());
        flavour
    }

    fn name(&self) -> String {
        let c = &self.config;
        let mut name = format!("{} depth {}", self.kind, c.depth);
        if let Some(latency) = c.completion_latency {
            name.push_str(&format!(", emulated device {latency:?}"));
        }
        if c.inject.is_some() {
            name.push_str(", injected faults");
        }
        if let Some(rung) = self.rung {
            name.push_str(&format!(", setup rung {rung}"));
        }
        if self.without_io_uring {
            name.push_str(", without io_uring");
        }
        for (on, what) in [
            (c.fixed_buffers, "fixed buffers"),
            (c.register_files, "registered files"),
            (c.sq_thread_poll, "sqpoll"),
            (c.hipri, "hipri"),
            (c.recv_multishot, "multishot receive"),
            (c.nowait, "nowait"),
        ] {
            if on {
                name.push_str(", ");
                name.push_str(what);
            }
        }
        name
    }

    /// The engine, or `None` (with a note why) when this system cannot run
    /// it, or when `HYBRIO_CONFORMANCE_FLAVOUR` names another flavour (to run
    /// one flavour many times: `tools/conformance-loop.sh`).
    fn open(&self, pool: Option<&BufPool>) -> Option<Box<dyn Engine>> {
        if let Ok(only) = std::env::var("HYBRIO_CONFORMANCE_FLAVOUR") {
            if self.name() != only {
                return None;
            }
            eprintln!("conformance: running {only}");
        }
        if let Err(reason) = probe::engine_available(self.kind) {
            eprintln!("skipping {}: {reason}", self.name());
            return None;
        }
        let engine = match self.rung {
            Some(rung) => {
                super::io_uring::IoUringEngine::starting_at_rung(&self.config, pool, rung)
                    .map(|engine| Box::new(engine) as Box<dyn Engine>)
            }
            None if self.without_io_uring => {
                super::adaptive::open_without_io_uring(&self.config, pool)
            }
            None => super::open(self.kind, &self.config, pool),
        };
        match engine {
            Ok(engine) => Some(engine),
            Err(Error::Engine { source, .. })
                if self.config.sq_thread_poll && source.raw_os_error() == Some(libc::EPERM) =>
            {
                eprintln!(
                    "skipping {}: SQPOLL not permitted here: {source}",
                    self.name()
                );
                None
            }
            Err(e) => panic!("{}: {e}", self.name()),
        }
    }
}

/// Faults an engine's retry rule must hide completely: short transfers
/// (sent again for the rest), EAGAIN (retried) and late completions.
const RECOVERABLE_FAULTS: &str = "short:0.2,eagain:0.1,delay:0.02@100us,seed:7";

/// Every flavour that does real I/O.
fn io_flavours() -> Vec<Flavour> {
    let uring = |depth, tweak: fn(&mut EngineConfig)| {
        let mut flavour = Flavour::new(EngineKind::IoUring, depth);
        tweak(&mut flavour.config);
        flavour
    };
    vec![
        Flavour::new(EngineKind::Sync, 1),
        Flavour::new(EngineKind::Sync, 8),
        Flavour::new(EngineKind::Psync, 1),
        Flavour::new(EngineKind::Psync, 8),
        Flavour::new(EngineKind::Pvsync2, 1),
        Flavour::new(EngineKind::Pool, 1),
        Flavour::new(EngineKind::Pool, 8),
        Flavour::new(EngineKind::Libaio, 1),
        Flavour::new(EngineKind::Libaio, 8),
        Flavour::new(EngineKind::Posixaio, 1),
        Flavour::new(EngineKind::Posixaio, 8),
        Flavour::new(EngineKind::Adaptive, 1),
        Flavour::new(EngineKind::Adaptive, 8),
        Flavour::emulated(EngineKind::Adaptive, 4),
        Flavour::injected(EngineKind::Adaptive, 8),
        Flavour::without_io_uring(8),
        Flavour::emulated(EngineKind::Psync, 1),
        Flavour::emulated(EngineKind::Pool, 4),
        Flavour::emulated(EngineKind::Libaio, 4),
        Flavour::emulated(EngineKind::IoUring, 4),
        Flavour::injected(EngineKind::Psync, 1),
        Flavour::injected(EngineKind::Pool, 8),
        Flavour::injected(EngineKind::Libaio, 8),
        Flavour::injected(EngineKind::Posixaio, 8),
        Flavour::injected(EngineKind::IoUring, 8),
        uring(1, |_| {}),
        uring(8, |_| {}),
        uring(8, |c| {
            c.fixed_buffers = true;
            c.register_files = true;
        }),
        uring(3, |c| c.fixed_buffers = true),
        uring(8, |c| c.sq_thread_poll = true),
        uring(1, |c| c.recv_multishot = true),
        uring(8, |c| {
            c.recv_multishot = true;
            c.register_files = true;
        }),
        uring(4, |c| {
            c.recv_multishot = true;
            c.sq_thread_poll = true;
        }),
        // COOP_TASKRUN|TASKRUN_FLAG, then no task-run flags, then not disabled.
        Flavour::io_uring_from_rung(8, 1),
        Flavour::io_uring_from_rung(8, 2),
        Flavour::io_uring_from_rung(4, 3),
    ]
}

/// Every flavour, the null engine included.
fn all_flavours() -> Vec<Flavour> {
    let mut flavours = io_flavours();
    flavours.extend([
        Flavour::new(EngineKind::Null, 1),
        Flavour::new(EngineKind::Null, 4),
    ]);
    flavours
}

/// Runs one request and returns its completion.
fn run_one(engine: &mut dyn Engine, request: Request) -> Completion {
    let mut done = run(engine, [request]);
    assert_eq!(done.len(), 1);
    done.pop().unwrap()
}

fn errno(completion: &Completion) -> Option<i32> {
    completion.error().and_then(|e| e.raw_os_error())
}

/// With `nowait`, a read that would block comes back as `EAGAIN`, once:
/// the engine hands it to the caller rather than sending it again; with bytes there, the same read gets them. An empty pipe is such
/// a read every time (a file's page-cache miss is not: the kernel may serve
/// it, when the readahead it started lands before it looks again).
/// pvsync2, and the adaptive engine's inline path, read at an offset, which
/// a pipe refuses (`ESPIPE`): the fault injection's own tests hand them
/// an injected `EAGAIN` instead, and the pool's a non-blocking socket.
#[test]
fn nowait_hands_a_read_that_would_block_back_as_eagain() {
    use std::os::fd::OwnedFd;
    for kind in [EngineKind::Libaio, EngineKind::IoUring] {
        for depth in [1, 4] {
            let mut flavour = Flavour::new(kind, depth);
            flavour.config.nowait = true;
            let name = flavour.name();
            let pool = BufPool::new(2, 4096).unwrap();
            let Some(mut engine) = flavour.open(Some(&pool)) else {
                continue;
            };
            let (reader, mut writer) = std::io::pipe().unwrap();
            let pipe = engine
                .add_file(File::from(OwnedFd::from(reader)), "pipe".into())
                .unwrap();
            let done = run_one(
                engine.as_mut(),
                Request::read(pipe, 0, take(&pool, 4096), 1),
            );
            if errno(&done) == Some(libc::EOPNOTSUPP) {
                eprintln!("skipping {name}: no RWF_NOWAIT read of a pipe here");
                continue;
            }
            assert_eq!(errno(&done), Some(libc::EAGAIN), "{name}: {done:?}");
            assert_eq!(engine.counters().retries, 0, "{name}: EAGAIN sent again");
            let mut sent = vec![0; 4096];
            pattern(6, &mut sent);
            std::io::Write::write_all(&mut writer, &sent).unwrap();
            let done = run_one(
                engine.as_mut(),
                Request::read(pipe, 0, take(&pool, 4096), 2),
            );
            assert_eq!(done.result, 4096, "{name}: {done:?}");
            assert!(done.buf.as_slice() == sent.as_slice(), "{name}: the bytes");
        }
    }
}

#[test]
fn written_data_reads_back_byte_exact() {
    for flavour in io_flavours() {
        let pool = BufPool::new(16, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let dir = scratch();
        round_trip(
            engine.as_mut(),
            &pool,
            &dir.path().join("data"),
            &read_write(),
            &flavour.name(),
        );
        assert_eq!(
            pool.available(),
            pool.count(),
            "{}: buffers not returned",
            flavour.name()
        );
    }
}

#[test]
fn o_direct_round_trip_with_aligned_buffers() {
    let dir = scratch();
    if !probe::o_direct_supported(dir.path()) {
        eprintln!(
            "skipping O_DIRECT: not supported in {}",
            dir.path().display()
        );
        return;
    }
    let direct = OpenOptions {
        direct: true,
        ..read_write()
    };
    for flavour in io_flavours() {
        let pool = BufPool::new(16, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = format!("{} O_DIRECT", flavour.name());
        round_trip(
            engine.as_mut(),
            &pool,
            &dir.path().join(flavour.name()),
            &direct,
            &name,
        );
    }
}

#[test]
fn reads_at_and_across_eof() {
    const LEN: usize = 10_000;
    for flavour in io_flavours() {
        let pool = BufPool::new(4, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "short", LEN);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let done = run(
            engine.as_mut(),
            [
                Request::read(handle, LEN as u64, take(&pool, 4096), 0),
                Request::read(handle, 1 << 20, take(&pool, 4096), 1),
                Request::read(handle, 8192, take(&pool, 4096), 2),
            ],
        );
        let by_tag: BTreeMap<u64, &Completion> = done.iter().map(|c| (c.user_data, c)).collect();
        assert_eq!(by_tag[&0].result, 0, "{name}: read at EOF");
        assert_eq!(by_tag[&1].result, 0, "{name}: read past EOF");
        let straddling = by_tag[&2];
        assert_eq!(
            straddling.result,
            (LEN - 8192) as i64,
            "{name}: read across EOF"
        );
        assert!(straddling.is_short());
        let got = &straddling.buf.as_slice()[..LEN - 8192];
        assert!(got == &contents[8192..], "{name}: short read data differs");
    }
}

#[test]
fn bad_handles_complete_with_ebadf() {
    for flavour in all_flavours() {
        let pool = BufPool::new(4, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 4096);
        let removed = add(engine.as_mut(), &path, &OpenOptions::default());
        engine.remove_file(removed).unwrap();
        assert!(
            matches!(engine.remove_file(removed), Err(Error::BadHandle(h)) if h == removed.0),
            "{name}"
        );
        let requests = [
            Request::read(FileHandle(77), 0, take(&pool, 4096), 1),
            Request::write(removed, 0, take(&pool, 512), 2),
            Request::sync(FileHandle(u32::MAX), false, 3),
        ];
        let done = run(engine.as_mut(), requests);
        assert_eq!(done.len(), 3, "{name}");
        for completion in &done {
            assert_eq!(
                errno(completion),
                Some(libc::EBADF),
                "{name}: {:?}",
                completion.op
            );
        }
        let read_back = done.iter().find(|c| c.user_data == 1).unwrap();
        assert_eq!(read_back.buf.len(), 4096, "{name}: buffer handed back");
    }
}

#[test]
fn reading_a_write_only_file_gives_ebadf() {
    for flavour in io_flavours() {
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "wo", 8192);
        let write_only = OpenOptions {
            read: false,
            write: true,
            create: false,
            direct: false,
            ..Default::default()
        };
        let handle = add(engine.as_mut(), &path, &write_only);
        let done = run_one(
            engine.as_mut(),
            Request::read(handle, 0, take(&pool, 4096), 9),
        );
        assert_eq!(errno(&done), Some(libc::EBADF), "{}", flavour.name());
        assert_eq!(done.user_data, 9);
    }
}

#[test]
fn malformed_requests_complete_with_einval() {
    for flavour in all_flavours() {
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 4096);
        let handle = add(engine.as_mut(), &path, &read_write());
        let no_buffer = Request {
            op: Op::Read,
            file: handle,
            offset: 0,
            buf: Buf::empty(),
            user_data: 1,
            span: 0,
            ioprio: 0,
            marks: Default::default(),
        };
        let huge_offset = Request::write(handle, u64::MAX, take(&pool, 4096), 2);
        for done in run(engine.as_mut(), [no_buffer, huge_offset]) {
            assert_eq!(
                errno(&done),
                Some(libc::EINVAL),
                "{}: request {}",
                flavour.name(),
                done.user_data
            );
        }
    }
}

#[test]
fn every_request_completes_once_with_its_user_data() {
    const N: u64 = 100;
    for flavour in all_flavours() {
        // Every request holds its buffer until the test has checked all completions.
        let pool = BufPool::new(N as usize, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "f", 64 * 1024);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let tag = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xDEAD;
        let offset = |i: u64| (i * 7919) % (60 * 1024);
        let requests = (0..N).map(|i| {
            Request::read(
                handle,
                offset(i),
                take(&pool, 512 + (i as usize % 3) * 100),
                tag(i),
            )
        });
        let requests: Vec<Request> = requests.collect();
        let done = run(engine.as_mut(), requests);
        assert_eq!(done.len(), N as usize, "{name}");
        let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
        for completion in &done {
            *seen.entry(completion.user_data).or_default() += 1;
        }
        assert!(
            (0..N).all(|i| seen.get(&tag(i)) == Some(&1)),
            "{name}: user_data lost or repeated"
        );
        for (i, completion) in
            (0..N).map(|i| (i, done.iter().find(|c| c.user_data == tag(i)).unwrap()))
        {
            let len = completion.buf.len();
            assert_eq!(completion.result, len as i64, "{name}");
            if flavour.kind != EngineKind::Null {
                let at = offset(i) as usize;
                assert!(
                    completion.buf.as_slice() == &contents[at..at + len],
                    "{name}: read {i}"
                );
            }
        }
        assert_eq!(engine.in_flight(), 0);
        drop(done);
        assert_eq!(
            pool.available(),
            pool.count(),
            "{name}: buffers not returned"
        );
    }
}

#[test]
fn queue_is_busy_exactly_at_depth() {
    for flavour in all_flavours() {
        let pool = BufPool::new(16, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 128 * 1024);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let depth = flavour.config.depth as usize;
        let offset = |tag: u64| (tag % 32) * 4096;
        let read = |tag: u64| Request::read(handle, offset(tag), take(&pool, 4096), tag);
        let mut done = Vec::new();
        if engine.is_synchronous() {
            for tag in 0..(2 * depth as u64 + 1) {
                match engine.queue(read(tag)) {
                    QueueOutcome::Completed(completion) => {
                        assert_eq!(completion.result, 4096, "{name}")
                    }
                    other => panic!("{name}: a synchronous engine answered {other:?}"),
                }
            }
            assert_eq!(engine.in_flight(), 0);
            continue;
        }
        if engine.kind() == EngineKind::Adaptive {
            // Its first requests complete inline; its own tests fill it with
            // asynchronous ones.
            continue;
        }
        for tag in 0..depth as u64 {
            assert!(
                matches!(engine.queue(read(tag)), QueueOutcome::Queued),
                "{name}: request {tag}"
            );
            assert_eq!(engine.in_flight(), tag as usize + 1, "{name}");
        }
        let QueueOutcome::Busy(back) = engine.queue(read(99)) else {
            panic!("{name}: not busy at depth {depth}")
        };
        assert_eq!(
            (back.user_data, back.offset, back.len()),
            (99, offset(99), 4096),
            "{name}: request changed"
        );
        assert_eq!(engine.commit().unwrap(), depth, "{name}: commit count");
        assert_eq!(engine.commit().unwrap(), 0, "{name}: second commit");
        let QueueOutcome::Busy(back) = engine.queue(back) else {
            panic!("{name}: in-flight requests must count")
        };
        let reaped = engine.reap(1, 1, &mut done).unwrap();
        assert_eq!((reaped, done.len()), (1, 1), "{name}: reap(1, 1)");
        assert!(
            matches!(engine.queue(back), QueueOutcome::Queued),
            "{name}: not accepted after a reap"
        );
        let QueueOutcome::Busy(_) = engine.queue(read(100)) else {
            panic!("{name}: full again")
        };
        finish(engine.as_mut(), &mut done);
        assert_eq!(done.len(), depth + 1, "{name}");
        assert!(
            done.iter().all(|c| c.result == 4096),
            "{name}: {:?}",
            done.iter().map(|c| c.result).collect::<Vec<_>>()
        );
        assert!(done.iter().any(|c| c.user_data == 99), "{name}");
    }
}

#[test]
fn files_cannot_be_removed_with_requests_in_flight() {
    for flavour in all_flavours() {
        let pool = BufPool::new(4, 4096).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        // The adaptive engine may complete the request inline: its own tests
        // hold a file busy with a request it sent asynchronously.
        if engine.is_synchronous() || engine.kind() == EngineKind::Adaptive {
            continue;
        }
        let name = flavour.name();
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 8192);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        assert!(matches!(
            engine.queue(Request::read(handle, 0, take(&pool, 4096), 1)),
            QueueOutcome::Queued
        ));
        match engine.remove_file(handle) {
            Err(Error::FileBusy {
                handle: h,
                in_flight: 1,
            }) => assert_eq!(h, handle.0),
            other => panic!("{name}: expected FileBusy, got {other:?}"),
        }
        let mut done = Vec::new();
        finish(engine.as_mut(), &mut done);
        let file: File = engine.remove_file(handle).unwrap();
        assert_eq!(file.metadata().unwrap().len(), 8192);
    }
}

#[test]
fn dropping_an_engine_waits_for_its_requests() {
    for flavour in all_flavours() {
        let pool = BufPool::new(8, 4096).unwrap();
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 64 * 1024);
        for commit in [false, true] {
            let Some(mut engine) = flavour.open(Some(&pool)) else {
                break;
            };
            let handle = add(engine.as_mut(), &path, &OpenOptions::default());
            let mut inline = Vec::new();
            for tag in 0..4 {
                match engine.queue(Request::read(handle, tag * 4096, take(&pool, 4096), tag)) {
                    QueueOutcome::Completed(completion) => inline.push(completion),
                    QueueOutcome::Queued => {}
                    QueueOutcome::Busy(_) => break,
                }
            }
            if commit {
                engine.commit().unwrap();
            }
            drop(engine);
            drop(inline);
            assert_eq!(
                pool.available(),
                pool.count(),
                "{}: buffers lost (commit {commit})",
                flavour.name()
            );
        }
    }
}

#[test]
fn null_engine_completes_with_the_request_length() {
    let pool = BufPool::new(4, 4096).unwrap();
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "f", 0);
    for depth in [1, 4] {
        let mut engine =
            super::open(EngineKind::Null, &EngineConfig::with_depth(depth), None).unwrap();
        assert_eq!(engine.is_synchronous(), depth == 1);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let done = run(
            engine.as_mut(),
            [
                Request::read(handle, 1 << 40, take(&pool, 100), 0),
                Request::write(handle, 0, take(&pool, 4096), 1),
                Request::sync(handle, true, 2),
            ],
        );
        let results: Vec<(u64, i64)> = done.iter().map(|c| (c.user_data, c.result)).collect();
        assert_eq!(
            results,
            [(0, 100), (1, 4096), (2, 0)],
            "depth {depth}: in queue order"
        );
    }
}

#[test]
fn null_engine_reaps_only_committed_requests() {
    let pool = BufPool::new(4, 4096).unwrap();
    let mut engine = super::open(EngineKind::Null, &EngineConfig::with_depth(4), None).unwrap();
    let handle = engine
        .add_file(File::open("/dev/null").unwrap(), "/dev/null".into())
        .unwrap();
    let mut done = Vec::new();
    assert!(matches!(
        engine.queue(Request::read(handle, 0, take(&pool, 1), 0)),
        QueueOutcome::Queued
    ));
    assert_eq!(
        engine.reap(1, 4, &mut done).unwrap(),
        0,
        "uncommitted requests are not complete"
    );
    assert_eq!(engine.commit().unwrap(), 1);
    assert!(matches!(
        engine.queue(Request::read(handle, 0, take(&pool, 2), 1)),
        QueueOutcome::Queued
    ));
    assert_eq!(engine.reap(0, 4, &mut done).unwrap(), 1);
    assert_eq!(engine.in_flight(), 1);
    assert_eq!(engine.commit().unwrap(), 1);
    assert_eq!(engine.reap(1, 4, &mut done).unwrap(), 1);
    assert_eq!(done.iter().map(|c| c.result).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn o_direct_unaligned_requests_fail_with_einval() {
    let dir = scratch();
    if !probe::o_direct_supported(dir.path()) {
        eprintln!(
            "skipping O_DIRECT: not supported in {}",
            dir.path().display()
        );
        return;
    }
    let direct = OpenOptions {
        direct: true,
        ..read_write()
    };
    for flavour in io_flavours() {
        let pool = BufPool::new(8, 8192).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        let (path, _) = data_file(dir.path(), &format!("unaligned-{name}"), 64 * 1024);
        let handle = add(engine.as_mut(), &path, &direct);
        let shifted = || {
            // The window starts one byte into the buffer: a misaligned address.
            let mut buf = take(&pool, 4097);
            buf.advance(1);
            buf
        };
        let requests = [
            Request::read(handle, 0, take(&pool, 1000), 1),
            Request::read(handle, 100, take(&pool, 4096), 2),
            Request::read(handle, 0, shifted(), 3),
            Request::write(handle, 0, take(&pool, 1000), 4),
            Request::write(handle, 4096 + 7, take(&pool, 4096), 5),
            Request::write(handle, 0, shifted(), 6),
            Request::read(handle, 4096, take(&pool, 4096), 7),
        ];
        let done = run(engine.as_mut(), requests);
        assert_eq!(done.len(), 7, "{name}");
        for completion in &done {
            if completion.user_data == 7 {
                assert_eq!(completion.result, 4096, "{name}: aligned read");
            } else {
                assert_eq!(
                    errno(completion),
                    Some(libc::EINVAL),
                    "{name}: request {}",
                    completion.user_data
                );
            }
        }
        let shifted_back = done.iter().find(|c| c.user_data == 3).unwrap();
        assert_eq!(
            (shifted_back.buf.start(), shifted_back.buf.len()),
            (1, 4096),
            "{name}: the buffer's window comes back as it was queued"
        );
    }
}
