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

mod caching;
mod contract;
mod descriptors;
mod driver;
mod priority;
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

/// Faults the layers above an engine must hide completely: short transfers
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
/// a pipe refuses (`ESPIPE`): the resubmission layer's own tests hand them
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
            uncached: false,
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

/// An io_uring engine built from `config`, or `None` when this system has none.
fn uring(config: EngineConfig, pool: Option<&BufPool>) -> Option<Box<dyn Engine>> {
    Flavour {
        config,
        ..Flavour::new(EngineKind::IoUring, 1)
    }
    .open(pool)
}

#[test]
fn reaping_without_waiting_still_delivers() {
    // With DEFER_TASKRUN completions exist only once an enter runs the task
    // work: a reap(0, ..) poll loop must still see them.
    for flavour in all_flavours() {
        let pool = BufPool::new(1, 4096).unwrap();
        let Some(mut engine) = flavour.open(None) else {
            continue;
        };
        // A new adaptive engine does its first requests inline.
        if engine.is_synchronous() || engine.kind() == EngineKind::Adaptive {
            continue;
        }
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 4096);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let read = Request::read(handle, 0, take(&pool, 4096), 5);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
        assert_eq!(engine.commit().unwrap(), 1);
        let mut done = Vec::new();
        for _ in 0..5000 {
            if engine.reap(0, 8, &mut done).unwrap() > 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(
            done.len(),
            1,
            "{}: polling never saw the completion",
            flavour.name()
        );
        assert_eq!((done[0].user_data, done[0].result), (5, 4096));
    }
}

#[test]
fn io_uring_engine_can_move_to_another_thread() {
    let pool = BufPool::new(16, 4096).unwrap();
    let mut config = EngineConfig::with_depth(8);
    config.fixed_buffers = true;
    config.register_files = true;
    let Some(mut engine) = uring(config, Some(&pool)) else {
        return;
    };
    let dir = scratch();
    let path = dir.path().join("moved");
    // Registered before the move, driven after it.
    let handle = add(engine.as_mut(), &path, &read_write());
    std::thread::spawn(move || {
        engine.remove_file(handle).unwrap();
        round_trip(
            engine.as_mut(),
            &pool,
            &path,
            &read_write(),
            "io_uring on another thread",
        );
    })
    .join()
    .unwrap();
}

#[test]
fn io_uring_registered_file_table_grows() {
    let pool = BufPool::new(2, 4096).unwrap();
    let mut config = EngineConfig::with_depth(2);
    config.register_files = true;
    let Some(mut engine) = uring(config, None) else {
        return;
    };
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 8192);
    let handles: Vec<FileHandle> = (0..150)
        .map(|_| add(engine.as_mut(), &path, &OpenOptions::default()))
        .collect();
    for &handle in [handles[0], handles[63], handles[64], handles[149]].iter() {
        let done = run_one(
            engine.as_mut(),
            Request::read(handle, 4096, take(&pool, 4096), handle.0.into()),
        );
        assert_eq!(done.result, 4096, "handle {}", handle.0);
        assert!(
            done.buf.as_slice() == &contents[4096..],
            "handle {}",
            handle.0
        );
    }
    engine.remove_file(handles[64]).unwrap();
    let done = run_one(
        engine.as_mut(),
        Request::read(handles[64], 0, take(&pool, 4096), 0),
    );
    assert_eq!(errno(&done), Some(libc::EBADF));
    let reused = add(engine.as_mut(), &path, &OpenOptions::default());
    assert_eq!(reused, handles[64]);
    assert_eq!(
        run_one(
            engine.as_mut(),
            Request::read(reused, 0, take(&pool, 4096), 0)
        )
        .result,
        4096
    );
}

#[test]
fn io_uring_fixed_buffers_accept_foreign_buffers_too() {
    let registered = BufPool::new(2, 8192).unwrap();
    let foreign = BufPool::new(2, 4096).unwrap();
    let mut config = EngineConfig::with_depth(4);
    config.fixed_buffers = true;
    let Some(mut engine) = uring(config, Some(&registered)) else {
        return;
    };
    assert!(
        engine.description().contains("fixed buffers"),
        "{}",
        engine.description()
    );
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16384);
    let handle = add(engine.as_mut(), &path, &OpenOptions::default());
    let done = run(
        engine.as_mut(),
        [
            Request::read(handle, 0, take(&registered, 8192), 0),
            Request::read(handle, 8192, take(&registered, 8192), 1),
            Request::read(handle, 4096, take(&foreign, 4096), 2),
        ],
    );
    for completion in done {
        let buf = &completion.buf;
        let at = completion.offset as usize;
        assert_eq!(
            completion.result,
            buf.len() as i64,
            "request {}",
            completion.user_data
        );
        assert!(
            buf.as_slice() == &contents[at..at + buf.len()],
            "request {}",
            completion.user_data
        );
    }
}

#[test]
fn io_uring_hipri_fails_per_request_on_a_device_without_poll_queues() {
    let pool = BufPool::new(1, 4096).unwrap();
    let mut config = EngineConfig::with_depth(2);
    config.hipri = true;
    let engine = match super::open(EngineKind::IoUring, &config, None) {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("skipping hipri: {e}");
            return;
        }
    };
    let mut engine = engine;
    assert!(
        engine.description().contains("IOPOLL"),
        "{}",
        engine.description()
    );
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "f", 4096);
    let direct = OpenOptions {
        direct: probe::o_direct_supported(dir.path()),
        ..OpenOptions::default()
    };
    let handle = add(engine.as_mut(), &path, &direct);
    let done = run_one(
        engine.as_mut(),
        Request::read(handle, 0, take(&pool, 4096), 1),
    );
    // Polled completion needs a device with poll queues; without, the request fails alone.
    assert!(
        done.result == 4096
            || matches!(
                errno(&done),
                Some(libc::EOPNOTSUPP | libc::EINVAL | libc::EAGAIN)
            ),
        "hipri read: {}",
        done.result
    );
    eprintln!(
        "hipri read on {}: result {}",
        dir.path().display(),
        done.result
    );
}

#[test]
fn io_uring_reports_its_setup() {
    let Some(engine) = uring(EngineConfig::with_depth(4), None) else {
        return;
    };
    let description = engine.description();
    eprintln!("io_uring setup accepted here: {description}");
    assert!(description.starts_with("io_uring ("), "{description}");
    assert!(description.ends_with("depth 4)"), "{description}");
}

#[test]
fn every_flavour_is_built_as_configured() {
    for flavour in all_flavours() {
        let pool = BufPool::new(1, 4096).unwrap();
        let Some(engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let description = engine.description();
        eprintln!("{}: {description}", flavour.name());
        assert_eq!(engine.kind(), flavour.kind);
        assert!(
            description.starts_with(flavour.kind.name()),
            "{description}"
        );
        let c = &flavour.config;
        for (asked, shown) in [
            (c.sq_thread_poll, "SQPOLL"),
            (c.register_files, "registered files"),
            (c.fixed_buffers, "fixed buffers"),
        ] {
            assert_eq!(
                description.contains(shown),
                asked,
                "{}: {description}",
                flavour.name()
            );
        }
    }
}

/// A pipe whose read end never gets data while the test runs: a read from
/// it stays in flight until cancelled.
fn silent_pipe() -> (File, std::io::PipeWriter) {
    let (reader, writer) = std::io::pipe().unwrap();
    (File::from(std::os::fd::OwnedFd::from(reader)), writer)
}

#[test]
fn dropping_an_io_uring_engine_cancels_requests_that_would_never_end() {
    for depth in [1, 4] {
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = uring(EngineConfig::with_depth(depth), None) else {
            return;
        };
        let (read_end, _write_end) = silent_pipe();
        let handle = engine.add_file(read_end, "pipe".into()).unwrap();
        let read = Request::read(handle, 0, take(&pool, 4096), 1);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
        engine.commit().unwrap();
        let mut done = Vec::new();
        assert_eq!(
            engine.reap(0, 1, &mut done).unwrap(),
            0,
            "nothing was written"
        );
        drop(engine);
        assert_eq!(
            pool.available(),
            2,
            "the cancelled read gave its buffer back"
        );
    }
}

#[test]
fn dropping_cancels_on_kernels_without_sync_cancel() {
    if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping io_uring: {reason}");
        return;
    }
    let pool = BufPool::new(2, 4096).unwrap();
    let mut engine =
        super::io_uring::IoUringEngine::new(&EngineConfig::with_depth(2), None).unwrap();
    engine.behave_without_sync_cancel();
    let (read_end, _write_end) = silent_pipe();
    let handle = engine.add_file(read_end, "pipe".into()).unwrap();
    for tag in 0..2 {
        let read = Request::read(handle, 0, take(&pool, 4096), tag);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    }
    engine.commit().unwrap();
    drop(engine);
    assert_eq!(
        pool.available(),
        2,
        "both reads were cancelled one by one and gave their buffers back"
    );
}

#[test]
fn uncommitted_requests_are_not_performed_when_an_io_uring_engine_is_dropped() {
    if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping io_uring: {reason}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Repeated: the old behaviour (submit, then cancel) raced and wrote now and then.
    for round in 0..20 {
        let path = dir.path().join(format!("f{round}"));
        let pool = BufPool::new(2, 4096).unwrap();
        let Some(mut engine) = uring(EngineConfig::with_depth(2), None) else {
            return;
        };
        let opts = OpenOptions {
            read: true,
            write: true,
            create: true,
            direct: false,
            ..Default::default()
        };
        let handle = engine
            .add_file(file::open(&path, &opts).unwrap(), path.clone())
            .unwrap();
        // One committed request enables the ring; the second is never committed.
        let mut first = take(&pool, 4096);
        first.as_mut_slice().fill(1);
        let done = run(engine.as_mut(), [Request::write(handle, 0, first, 0)]);
        assert_eq!(done[0].result, 4096);
        drop(done);
        let mut second = take(&pool, 4096);
        second.as_mut_slice().fill(2);
        assert!(matches!(
            engine.queue(Request::write(handle, 4096, second, 1)),
            QueueOutcome::Queued
        ));
        drop(engine);
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            4096,
            "round {round}: the uncommitted write must not happen"
        );
        assert_eq!(pool.available(), 2);
    }
}

#[test]
fn io_uring_dropped_by_a_foreign_thread_never_frees_in_flight_buffers() {
    for any_thread in [false, true] {
        dropped_by_a_foreign_thread(any_thread);
    }
}

/// Issue 44, defect 6: an engine made for `any_thread` is driven by one
/// thread, then another, and dropped by a third that cancels and waits.
fn dropped_by_a_foreign_thread(any_thread: bool) {
    let pool = BufPool::new(2, 4096).unwrap();
    let config = EngineConfig {
        any_thread,
        ..EngineConfig::with_depth(2)
    };
    let Some(mut engine) = uring(config, None) else {
        return;
    };
    let (read_end, write_end) = silent_pipe();
    let handle = engine.add_file(read_end, "pipe".into()).unwrap();
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 8192);
    let data = add(engine.as_mut(), &path, &read_write());
    let read = Request::read(handle, 0, take(&pool, 4096), 1);
    let (send_engine, engine_back) = std::sync::mpsc::channel();
    let (send_done, dropped) = std::sync::mpsc::channel::<()>();
    // Committed on another thread, which a SINGLE_ISSUER ring then belongs to;
    // that thread stays alive (its exit would cancel the read) until the drop.
    let owner = std::thread::spawn(move || {
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
        engine.commit().unwrap();
        send_engine.send(engine).unwrap();
        dropped.recv().unwrap();
    });
    let mut engine = engine_back.recv().unwrap();
    let description = engine.description();
    if any_thread {
        // Driven from here now, with the other thread's read in flight.
        let read = Request::read(data, 4096, take(&pool, 4096), 2);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
        assert_eq!(engine.commit().unwrap(), 1, "{description}");
        let mut done = Vec::new();
        assert_eq!(engine.reap(1, 1, &mut done).unwrap(), 1, "{description}");
        assert_eq!(done[0].result, 4096, "{description}");
        assert_eq!(done[0].data(), &contents[4096..], "{description}");
    }
    drop(engine);
    // A DEFER_TASKRUN ring can be neither cancelled nor waited on from here:
    // its request and buffer must be leaked, not freed. Other rings cancel
    // the read and give the buffer back.
    let expected = if description.contains("DEFER_TASKRUN") {
        assert!(!any_thread, "{description}");
        1
    } else {
        2
    };
    assert_eq!(pool.available(), expected, "{description}");
    send_done.send(()).unwrap();
    owner.join().unwrap();
    drop(write_end);
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

/// A tiny deterministic generator for the random operations (SplitMix64).
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One operation of the random sequence.
#[derive(Debug, Clone, Copy)]
struct Planned {
    op: Op,
    offset: u64,
    len: usize,
}

/// What the model says each request returns, and what every engine must match.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Per operation: (result, FNV-1a hash of the bytes read).
    results: Vec<(i64, u64)>,
    /// The file's bytes at the end.
    file: Vec<u8>,
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// `count` operations over a file that starts `initial` bytes long: reads and
/// writes of 1 byte to 8 KiB at any offset (some across or past the end), and
/// an occasional fsync, fdatasync or trim (a hole punched, any length and offset).
fn plan_operations(count: usize, initial: u64) -> Vec<Planned> {
    let mut draw = Draw(0x5EED);
    (0..count)
        .map(|_| {
            let kind = draw.below(100);
            let len = match draw.below(4) {
                0 => 1 + draw.below(64) as usize,
                1 => 4096,
                _ => 1 + draw.below(8192) as usize,
            };
            // Mostly inside the file, sometimes across its end or past it.
            let span = initial + initial / 4;
            let offset = if draw.below(2) == 0 {
                draw.below(span / 512) * 512
            } else {
                draw.below(span)
            };
            let op = match kind {
                0 => Op::Fsync,
                1 => Op::Fdatasync,
                2..=4 => Op::Trim,
                k if k < 55 => Op::Read,
                _ => Op::Write,
            };
            Planned { op, offset, len }
        })
        .collect()
}

/// What the file model says a planned operation returns; applies writes.
fn apply_to_model(model: &mut Vec<u8>, planned: &Planned) -> (i64, u64) {
    let start = planned.offset as usize;
    match planned.op {
        Op::Fsync | Op::Fdatasync => (0, 0),
        Op::Read => {
            let end = (start + planned.len).min(model.len());
            match model.get(start..end) {
                Some(bytes) if !bytes.is_empty() => (bytes.len() as i64, fnv(bytes)),
                _ => (0, 0),
            }
        }
        Op::Write => {
            let end = start + planned.len;
            if model.len() < end {
                model.resize(end, 0);
            }
            pattern(planned.offset ^ planned.len as u64, &mut model[start..end]);
            (planned.len as i64, 0)
        }
        Op::Trim => {
            // The hole reads as zeros; the size is kept.
            let end = (start + planned.len).min(model.len());
            if let Some(bytes) = model.get_mut(start..end) {
                bytes.fill(0);
            }
            (planned.len as i64, 0)
        }
        // The plan is of reads, writes, syncs and trims only (`plan_operations`).
        Op::Recv | Op::Send | Op::Allocate | Op::AllocateKeepSize | Op::Truncate => {
            (-i64::from(libc::EINVAL), 0)
        }
    }
}

/// Drives planned operations through an engine and records what each returned.
struct PlanDriver<'a> {
    engine: &'a mut dyn Engine,
    /// Byte ranges of the requests in flight, by index.
    in_flight: BTreeMap<u64, (u64, u64)>,
    results: Vec<(i64, u64)>,
    /// The file's size as the completed writes made it.
    size: u64,
    done: Vec<Completion>,
}

impl PlanDriver<'_> {
    /// Records the completions gathered in `done`.
    fn record(&mut self) {
        for completion in self.done.drain(..) {
            self.in_flight.remove(&completion.user_data);
            let hash = match (completion.op, completion.result) {
                (Op::Read, n) if n > 0 => fnv(&completion.buf.as_slice()[..n as usize]),
                _ => 0,
            };
            if completion.op == Op::Write && completion.result > 0 {
                self.size = self.size.max(completion.offset + completion.result as u64);
            }
            self.results[completion.user_data as usize] = (completion.result, hash);
        }
    }

    /// Commits, then waits for one completion, or for all of them.
    fn settle(&mut self, all: bool) {
        self.engine.commit().unwrap();
        let want = if all { self.in_flight.len() } else { 1 };
        let mut got = 0;
        while got < want {
            got += self.engine.reap(1, usize::MAX, &mut self.done).unwrap();
        }
        self.record();
    }
}

/// Runs the planned operations through `engine`, keeping as many in flight as
/// the pool allows, except that requests whose byte ranges overlap never are,
/// and an operation reaching past the end of the file (or a sync) is alone in
/// flight: the outcome is then the same whatever order the engine completes
/// them in.
fn run_planned(
    engine: &mut dyn Engine,
    pool: &BufPool,
    handle: FileHandle,
    plan: &[Planned],
    initial_len: u64,
) -> Vec<(i64, u64)> {
    let mut driver = PlanDriver {
        engine,
        in_flight: BTreeMap::new(),
        results: vec![(i64::MIN, 0); plan.len()],
        size: initial_len,
        done: Vec::new(),
    };
    for (index, planned) in plan.iter().enumerate() {
        let range = (planned.offset, planned.offset + planned.len as u64);
        let alone = !planned.op.moves_data() || range.1 > driver.size;
        loop {
            let overlaps = driver
                .in_flight
                .values()
                .any(|&(a, b)| a < range.1 && range.0 < b);
            let full = driver.in_flight.len() >= pool.count() - 1;
            if driver.in_flight.is_empty() || !(alone || overlaps || full) {
                break;
            }
            driver.settle(alone);
        }
        let tag = index as u64;
        let mut request = Some(match planned.op {
            Op::Read => Request::read(handle, planned.offset, take(pool, planned.len), tag),
            Op::Write => {
                let mut buf = take(pool, planned.len);
                pattern(planned.offset ^ planned.len as u64, buf.as_mut_slice());
                Request::write(handle, planned.offset, buf, tag)
            }
            Op::Trim => Request::trim(handle, planned.offset, planned.len as u64, tag),
            op => Request::sync(handle, op == Op::Fdatasync, tag),
        });
        driver.in_flight.insert(tag, range);
        while let Some(next) = request.take() {
            match driver.engine.queue(next) {
                QueueOutcome::Completed(completion) => driver.done.push(completion),
                QueueOutcome::Queued => {}
                QueueOutcome::Busy(back) => {
                    request = Some(back);
                    driver.in_flight.remove(&tag);
                    driver.settle(false);
                    driver.in_flight.insert(tag, range);
                }
            }
        }
        driver.record();
        if alone && !driver.in_flight.is_empty() {
            driver.settle(true);
        }
    }
    if !driver.in_flight.is_empty() {
        driver.settle(true);
    }
    driver.results
}

#[test]
fn random_mixed_operations_match_a_model_of_the_file() {
    const OPERATIONS: usize = 10_000;
    const INITIAL: usize = 256 * 1024;
    let plan = plan_operations(OPERATIONS, INITIAL as u64);
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "model-seed", INITIAL);
    let mut model = contents.clone();
    let expected = Outcome {
        results: plan.iter().map(|p| apply_to_model(&mut model, p)).collect(),
        file: model,
    };
    for flavour in io_flavours() {
        let pool = BufPool::new(9, 8192).unwrap();
        let Some(mut engine) = flavour.open(Some(&pool)) else {
            continue;
        };
        let name = flavour.name();
        fs::write(&path, &contents).unwrap();
        let handle = add(engine.as_mut(), &path, &read_write());
        let results = run_planned(engine.as_mut(), &pool, handle, &plan, INITIAL as u64);
        engine.remove_file(handle).unwrap();
        let outcome = Outcome {
            results,
            file: fs::read(&path).unwrap(),
        };
        if let Some(i) = (0..plan.len()).find(|&i| outcome.results[i] != expected.results[i]) {
            panic!(
                "{name}: operation {i} {:?} gave {:?}, the model {:?}",
                plan[i], outcome.results[i], expected.results[i]
            );
        }
        assert!(
            outcome.file == expected.file,
            "{name}: file contents differ"
        );
        assert_eq!(
            pool.available(),
            pool.count(),
            "{name}: buffers not returned"
        );
    }
}
