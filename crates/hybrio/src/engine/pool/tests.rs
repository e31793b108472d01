//! The pool engine's tests.

use std::collections::BTreeMap;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::sync::mpsc;

use super::*;
use crate::buf::BufPool;
use crate::engine::testkit::{add, read_write, run, scratch, take};
use crate::file::OpenOptions;
use crate::request::Op;

/// A file of `len` patterned bytes.
fn data_file(dir: &Path, len: usize) -> (PathBuf, Vec<u8>) {
    crate::engine::testkit::data_file(dir, "data", len)
}

fn engine(depth: u32, latency: Option<Duration>) -> PoolEngine {
    let mut config = EngineConfig::with_depth(depth);
    config.completion_latency = latency;
    PoolEngine::new(&config).unwrap()
}

/// The suite's round trip on a pool engine.
fn round_trip(engine: &mut PoolEngine, pool: &BufPool, path: &Path, opts: &OpenOptions) {
    let name = engine.description();
    crate::engine::testkit::round_trip(engine, pool, path, opts, &name);
}

/// A read across the end of the file comes back short from the
/// kernel: the worker sends the rest again itself, meets the end, and
/// answers with the bytes there and the offset and window as queued,
/// counted once each; on the emulated device too.
#[test]
fn a_read_across_the_end_of_the_file_is_sent_again_by_the_worker() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), 10_000);
    for latency in [None, Some(Duration::from_micros(50))] {
        let what = format!("latency {latency:?}");
        let pool = BufPool::new(8, 8192).unwrap();
        let mut engine = engine(2, latency);
        crate::engine::testkit::reads_across_the_end(&mut engine, &pool, &path, &contents, &what);
        assert_eq!(engine.counters().short_ios, [2, 0], "{what}");
    }
}

/// A receive on a non-blocking socket nobody writes to answers EAGAIN:
/// the worker retries it up to the limit, then hands the error back;
/// with `nowait`, EAGAIN is the caller's answer at once. With a
/// datagram waiting, the receive gets it.
#[test]
fn eagain_is_retried_by_the_worker_up_to_the_limit_unless_nowait() {
    for nowait in [false, true] {
        let mut config = EngineConfig::with_depth(2);
        config.nowait = nowait;
        let mut engine = PoolEngine::new(&config).unwrap();
        let (ours, peer) = UnixDatagram::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let socket = engine
            .add_socket(std::os::fd::OwnedFd::from(ours), "datagrams")
            .unwrap();
        let pool = BufPool::new(2, 64).unwrap();
        let done = run(&mut engine, [Request::recv(socket, take(&pool, 64), 1)]);
        assert_eq!(done[0].result, -i64::from(libc::EAGAIN), "nowait {nowait}");
        let retries = if nowait {
            0
        } else {
            u64::from(crate::engine::retry::RETRY_LIMIT)
        };
        assert_eq!(engine.counters().retries, retries, "nowait {nowait}");
        peer.send(b"hello").unwrap();
        let done = run(&mut engine, [Request::recv(socket, take(&pool, 64), 2)]);
        assert_eq!(done[0].result, 5, "nowait {nowait}");
        assert_eq!(&done[0].buf.as_slice()[..5], b"hello");
    }
}

#[test]
fn written_data_reads_back_byte_exact() {
    let dir = scratch();
    let pool = BufPool::new(16, 4096).unwrap();
    for depth in [1, 3, 8] {
        let mut engine = engine(depth, None);
        let path = dir.path().join(format!("buffered-{depth}"));
        round_trip(&mut engine, &pool, &path, &read_write());
        let direct = OpenOptions {
            direct: true,
            ..read_write()
        };
        let path = dir.path().join(format!("direct-{depth}"));
        round_trip(&mut engine, &pool, &path, &direct);
        // The emulated device moves the same bytes.
        let mut emulated = self::engine(depth, Some(Duration::from_micros(30)));
        let path = dir.path().join(format!("emulated-{depth}"));
        round_trip(&mut emulated, &pool, &path, &direct);
    }
    assert_eq!(pool.available(), pool.count());
}

#[test]
fn every_request_completes_once_with_its_user_data() {
    const N: u64 = 300;
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), 256 * 1024);
    let pool = BufPool::new(N as usize, 4096).unwrap();
    for depth in [1, 2, 16, 64] {
        let mut engine = engine(depth, None);
        let handle = add(&mut engine, &path, &OpenOptions::default());
        let tag = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(depth);
        let offset = |i: u64| (i * 7919) % (250 * 1024);
        let len = |i: u64| 512 + (i as usize % 5) * 300;
        let requests: Vec<Request> = (0..N)
            .map(|i| Request::read(handle, offset(i), take(&pool, len(i)), tag(i)))
            .collect();
        let done = run(&mut engine, requests);
        assert_eq!(done.len(), N as usize, "depth {depth}");
        let by_tag: BTreeMap<u64, &Completion> = done.iter().map(|c| (c.user_data, c)).collect();
        assert_eq!(
            by_tag.len(),
            N as usize,
            "depth {depth}: a user_data repeated"
        );
        for i in 0..N {
            let completion = by_tag.get(&tag(i)).expect("user_data lost");
            let at = offset(i) as usize;
            assert_eq!(
                completion.result,
                len(i) as i64,
                "depth {depth}, request {i}"
            );
            assert!(
                completion.buf.as_slice() == &contents[at..at + len(i)],
                "depth {depth}, request {i}: data"
            );
        }
        assert_eq!(engine.in_flight(), 0);
        drop(done);
        assert_eq!(
            pool.available(),
            pool.count(),
            "depth {depth}: buffers kept"
        );
    }
}

#[test]
fn early_errors_complete_inline() {
    let pool = BufPool::new(2, 4096).unwrap();
    let mut engine = engine(4, None);
    let QueueOutcome::Completed(done) =
        engine.queue(Request::read(FileHandle(9), 0, take(&pool, 4096), 1))
    else {
        panic!("an unknown handle completes at once")
    };
    assert_eq!(
        done.error().and_then(|e| e.raw_os_error()),
        Some(libc::EBADF)
    );
    let handle = engine
        .add_file(File::open("/dev/null").unwrap(), "/dev/null".into())
        .unwrap();
    let mut bufless = Request::read(handle, 0, take(&pool, 1), 2);
    bufless.buf = crate::buf::Buf::empty();
    let QueueOutcome::Completed(done) = engine.queue(bufless) else {
        panic!("a malformed request completes at once")
    };
    assert_eq!(
        done.error().and_then(|e| e.raw_os_error()),
        Some(libc::EINVAL)
    );
    let QueueOutcome::Completed(done) =
        engine.queue(Request::read(handle, u64::MAX, take(&pool, 1), 3))
    else {
        panic!("an offset past i64::MAX completes at once")
    };
    assert_eq!(
        done.error().and_then(|e| e.raw_os_error()),
        Some(libc::EINVAL)
    );
    assert_eq!(engine.in_flight(), 0);
}

#[test]
fn busy_at_depth_hands_the_request_back_untouched() {
    let dir = scratch();
    let (path, _) = data_file(dir.path(), 64 * 1024);
    let pool = BufPool::new(8, 4096).unwrap();
    let mut engine = engine(4, Some(Duration::from_millis(5)));
    let handle = add(&mut engine, &path, &OpenOptions::default());
    for tag in 0..4 {
        let read = Request::read(handle, tag * 4096, take(&pool, 4096), tag);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    }
    let QueueOutcome::Busy(back) = engine.queue(Request::read(handle, 8192, take(&pool, 100), 99))
    else {
        panic!("not busy at depth 4")
    };
    assert_eq!(
        (back.user_data, back.offset, back.len(), back.op),
        (99, 8192, 100, Op::Read)
    );
    assert!(matches!(
        engine.remove_file(handle),
        Err(Error::FileBusy { in_flight: 4, .. })
    ));
    assert_eq!(engine.commit().unwrap(), 4);
    assert_eq!(engine.commit().unwrap(), 0);
    let QueueOutcome::Busy(back) = engine.queue(back) else {
        panic!("committed requests count against the depth")
    };
    let mut done = Vec::new();
    assert_eq!(engine.reap(1, 1, &mut done).unwrap(), 1);
    assert!(matches!(engine.queue(back), QueueOutcome::Queued));
    assert_eq!(engine.in_flight(), 4);
    done.extend(run(&mut engine, Vec::new()));
    assert_eq!(done.len(), 5);
    assert!(done.iter().any(|c| c.user_data == 99 && c.result == 100));
    engine.remove_file(handle).unwrap();
}

/// Runs `body` on a thread of its own; fails if it has not returned
/// within a minute. For tests whose failure is a wait that never ends.
fn within_a_minute(what: &str, body: impl FnOnce() + Send + 'static) {
    let (finished, done) = mpsc::channel();
    let runner = thread::spawn(move || {
        body();
        let _ = finished.send(());
    });
    match done.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => runner.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(runner.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still waiting after a minute"),
    }
}

/// A datagram socket in `engine`, and its peer outside.
fn socket_in(engine: &mut PoolEngine) -> (FileHandle, UnixDatagram) {
    let (ours, peer) = UnixDatagram::pair().unwrap();
    let handle = engine
        .add_socket(std::os::fd::OwnedFd::from(ours), "datagrams")
        .unwrap();
    (handle, peer)
}

/// Commits `n` receives on `socket` and waits until workers have taken
/// them all and counted each; returns the requests each of the first
/// `slots` workers took. Nothing has been sent, so each worker that took
/// one is blocked in it: `n` taken are `n` workers side by side, whatever
/// the scheduler did.
fn receives_taken(
    engine: &mut PoolEngine,
    pool: &BufPool,
    socket: FileHandle,
    n: u64,
    slots: usize,
) -> Vec<u64> {
    let before = engine.runs();
    for tag in 0..n {
        let receive = Request::recv(socket, take(pool, 64), tag);
        assert!(matches!(engine.queue(receive), QueueOutcome::Queued));
    }
    assert_eq!(engine.commit().unwrap(), n as usize);
    taken_and_counted(engine, &before, n);
    let after = engine.runs();
    after
        .iter()
        .zip(&before)
        .map(|(a, b)| a - b)
        .take(slots)
        .collect()
}

/// Waits until workers have taken every committed request and counted
/// the `n` taken since the counts were `before`. A worker counts its
/// request after it took it off the queue (and, woken by commit, after it
/// woke others for the rest): without waiting for the counts, a worker
/// still on its way reads as one that took none.
fn taken_and_counted(engine: &PoolEngine, before: &[u64], n: u64) {
    engine.all_taken();
    let counted = before.iter().sum::<u64>() + n;
    wait_until("every request taken counted", || {
        engine.runs().iter().sum::<u64>() == counted
    });
}

/// Sends `n` one-byte datagrams to the receives out, and reaps them.
fn answer(engine: &mut PoolEngine, peer: &UnixDatagram, n: u64) {
    for tag in 0..n {
        peer.send(&[tag as u8]).unwrap();
    }
    let done = run(engine, Vec::new());
    assert_eq!(done.len(), n as usize);
    let mut got: Vec<u8> = done
        .iter()
        .map(|c| {
            assert_eq!(c.result, 1, "{c:?}");
            c.buf.as_slice()[0]
        })
        .collect();
    got.sort_unstable();
    assert_eq!(got, (0..n as u8).collect::<Vec<_>>());
}

#[test]
fn reap_zero_never_blocks_and_reap_waits_only_for_committed_requests() {
    // What must not be waited for here never completes: a wrong wait
    // hangs, so the test runs on a thread of its own.
    within_a_minute("reap", || {
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), 8192);
        let pool = BufPool::new(2, 4096).unwrap();
        let mut engine = engine(2, None);
        let file = add(&mut engine, &path, &OpenOptions::default());
        let (socket, peer) = socket_in(&mut engine);
        let mut done = Vec::new();
        assert!(matches!(
            engine.queue(Request::recv(socket, take(&pool, 4096), 1)),
            QueueOutcome::Queued
        ));
        assert_eq!(
            engine.reap(1, 4, &mut done).unwrap(),
            0,
            "nothing committed"
        );
        assert_eq!(engine.commit().unwrap(), 1);
        assert!(matches!(
            engine.queue(Request::read(file, 4096, take(&pool, 4096), 2)),
            QueueOutcome::Queued
        ));
        // The receive waits for a datagram nobody has sent.
        for _ in 0..100 {
            assert_eq!(engine.reap(0, 4, &mut done).unwrap(), 0);
        }
        peer.send(b"late").unwrap();
        // Waits for the committed one only, although two are in flight.
        assert_eq!(engine.reap(2, 4, &mut done).unwrap(), 1);
        assert_eq!((done[0].user_data, done[0].result), (1, 4));
        assert_eq!(&done[0].buf.as_slice()[..4], b"late");
        assert_eq!(engine.in_flight(), 1);
        done.extend(run(&mut engine, Vec::new()));
        assert_eq!(done.len(), 2);
        assert!(done[1].buf.as_slice() == &contents[4096..]);
    });
}

#[test]
fn the_pool_grows_under_load_and_shrinks_when_idle() {
    let idle_timeout = Duration::from_millis(50);
    let pool = BufPool::new(8, 64).unwrap();
    let config = EngineConfig::with_depth(8);
    let mut engine = PoolEngine::with_timing(&config, idle_timeout, HOLD).unwrap();
    let (socket, peer) = socket_in(&mut engine);
    assert_eq!(engine.description(), "pool (workers 1-8, now 1)");
    for round in 0..2 {
        let before = engine.runs();
        for tag in 0..8 {
            let receive = Request::recv(socket, take(&pool, 64), tag);
            assert!(matches!(engine.queue(receive), QueueOutcome::Queued));
        }
        engine.commit().unwrap();
        assert_eq!(
            engine.workers(),
            8,
            "round {round}: 8 waiting requests, 8 workers"
        );
        assert_eq!(engine.description(), "pool (workers 1-8, now 8)");
        // Each blocks in its receive: all 8 taken means 8 side by side.
        taken_and_counted(&engine, &before, 8);
        let ran: Vec<u64> = engine
            .runs()
            .iter()
            .zip(&before)
            .map(|(a, b)| a - b)
            .collect();
        assert_eq!(ran[..8], [1; 8], "round {round}: {ran:?}");
        assert!(ran[8..].iter().all(|&r| r == 0));
        answer(&mut engine, &peer, 8);
        // Idle, all but worker 0 exit, none before its idle timeout.
        wait_until("the pool shrinking", || engine.workers() == 1);
        assert_eq!(
            engine.shared.roster.alive.load(Ordering::SeqCst),
            1,
            "worker 0 stays"
        );
        let shortest = engine.shared.shortest_idle_exit_ns.load(Ordering::Relaxed);
        assert!(
            shortest >= idle_timeout.as_nanos() as u64,
            "round {round}: a worker exited after {shortest} ns idle"
        );
    }
    engine.remove_file(socket).unwrap();
}

#[test]
fn the_lowest_numbered_idle_worker_is_woken() {
    // Idle workers never time out here, so only a commit wakes one.
    let config = EngineConfig::with_depth(4);
    let mut engine = PoolEngine::with_timing(&config, Duration::from_secs(3600), HOLD).unwrap();
    let pool = BufPool::new(4, 64).unwrap();
    let (socket, peer) = socket_in(&mut engine);
    let burst = |engine: &mut PoolEngine, n: u64| {
        let taken = receives_taken(engine, &pool, socket, n, 4);
        answer(engine, &peer, n);
        engine.settle();
        taken
    };
    assert_eq!(burst(&mut engine, 4), [1, 1, 1, 1], "grown to 4");
    assert_eq!(engine.workers(), 4);
    // One at a time, every worker parked: worker 0 takes them all.
    for _ in 0..5 {
        assert_eq!(burst(&mut engine, 1), [1, 0, 0, 0]);
    }
    // Two at once: workers 0 and 1, never 2 or 3.
    for _ in 0..3 {
        assert_eq!(burst(&mut engine, 2), [1, 1, 0, 0]);
    }
    assert_eq!(burst(&mut engine, 3), [1, 1, 1, 0]);
}

#[test]
fn quick_requests_are_posted_in_batches_and_slow_ones_at_once() {
    let dir = scratch();
    let (path, _) = data_file(dir.path(), 256 * 1024);
    let pool = BufPool::new(32, 4096).unwrap();
    // How quick a request is depends on the machine and its load: the
    // hold is set so that every request is quick, then so that none is.
    for (hold, posts_per_round) in [(Duration::from_secs(3600), 1), (Duration::ZERO, 32)] {
        let config = EngineConfig::with_depth(32);
        let mut engine = PoolEngine::with_timing(&config, IDLE_TIMEOUT, hold).unwrap();
        // One worker, so that it runs all 32 back to back.
        engine.max_workers = 1;
        let handle = add(&mut engine, &path, &OpenOptions::default());
        for round in 0..3 {
            let posts = engine.shared.posts.load(Ordering::Relaxed);
            let reads =
                (0..32).map(|tag| Request::read(handle, tag * 4096, take(&pool, 4096), tag));
            let done = run(&mut engine, reads);
            assert!(done.iter().all(|c| c.result == 4096));
            assert_eq!(
                engine.shared.posts.load(Ordering::Relaxed) - posts,
                posts_per_round,
                "hold {hold:?}, round {round}: posts of 32 reads"
            );
        }
        assert_eq!(engine.workers(), 1);
    }
}

#[test]
fn dropping_waits_for_committed_requests_and_skips_the_others() {
    let latency = Duration::from_millis(50);
    let dir = scratch();
    let path = dir.path().join("f");
    let pool = BufPool::new(4, 4096).unwrap();
    let mut engine = engine(4, Some(latency));
    let handle = add(&mut engine, &path, &read_write());
    for tag in 0..4u64 {
        let mut buf = take(&pool, 4096);
        buf.as_mut_slice().fill(tag as u8 + 1);
        assert!(matches!(
            engine.queue(Request::write(handle, tag * 4096, buf, tag)),
            QueueOutcome::Queued
        ));
        if tag == 1 {
            engine.commit().unwrap();
        }
    }
    let start = Instant::now();
    drop(engine);
    assert!(
        start.elapsed() >= latency / 2,
        "did not wait: {:?}",
        start.elapsed()
    );
    assert_eq!(pool.available(), 4, "buffers lost");
    let written = std::fs::read(&path).unwrap();
    assert_eq!(written.len(), 8192, "only the two committed writes happen");
    assert!(written[..4096].iter().all(|&b| b == 1) && written[4096..].iter().all(|&b| b == 2));
}

#[test]
fn an_engine_moved_to_another_thread_works() {
    let dir = scratch();
    let pool = BufPool::new(16, 4096).unwrap();
    let path = dir.path().join("moved");
    let mut engine = engine(8, None);
    let handle = add(&mut engine, &path, &read_write());
    let engine = thread::spawn(move || {
        engine.remove_file(handle).unwrap();
        round_trip(&mut engine, &pool, &path, &read_write());
        engine
    })
    .join()
    .unwrap();
    // And dropped back on this one.
    drop(engine);
}

#[test]
fn a_worker_panic_is_reported_not_waited_for() {
    let dir = scratch();
    let (path, _) = data_file(dir.path(), 8192);
    let pool = BufPool::new(2, 4096).unwrap();
    let mut engine = engine(2, None);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    engine.panic_on(7);
    assert!(matches!(
        engine.queue(Request::read(handle, 0, take(&pool, 4096), 7)),
        QueueOutcome::Queued
    ));
    engine.commit().unwrap();
    let (send, outcome) = mpsc::channel();
    thread::spawn(move || {
        let mut done = Vec::new();
        let reaped = engine.reap(1, 1, &mut done).map_err(|e| e.to_string());
        send.send(reaped).unwrap();
        drop(engine);
        send.send(Ok(usize::MAX)).unwrap();
    });
    let reaped = outcome
        .recv_timeout(Duration::from_secs(10))
        .expect("reap hung");
    let error = reaped.expect_err("reap must fail");
    assert!(error.contains("panicked"), "{error}");
    let dropped = outcome
        .recv_timeout(Duration::from_secs(10))
        .expect("drop hung");
    assert_eq!(dropped, Ok(usize::MAX));
    assert_eq!(pool.available(), 2, "the lost request's buffer is freed");
}

#[test]
fn a_file_is_not_closed_under_a_worker() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), 8192);
    let pool = BufPool::new(1, 4096).unwrap();
    let mut engine = engine(1, Some(Duration::from_millis(20)));
    let handle = add(&mut engine, &path, &OpenOptions::default());
    assert!(matches!(
        engine.queue(Request::read(handle, 4096, take(&pool, 4096), 0)),
        QueueOutcome::Queued
    ));
    engine.commit().unwrap();
    assert!(matches!(
        engine.remove_file(handle),
        Err(Error::FileBusy { in_flight: 1, .. })
    ));
    let done = run(&mut engine, Vec::new());
    assert!(done[0].buf.as_slice() == &contents[4096..]);
    let file = engine.remove_file(handle).unwrap();
    let mut first = [0u8; 16];
    file.read_exact_at(&mut first, 0).unwrap();
    assert_eq!(first, contents[..16]);
    assert!(matches!(
        engine.remove_file(handle),
        Err(Error::BadHandle(0))
    ));
}

#[test]
fn dropping_with_a_receive_nothing_answers_does_not_hang() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(peer.local_addr().unwrap()).unwrap();
    let pool = BufPool::new(1, 4096).unwrap();
    let mut engine = engine(2, None);
    let handle = engine
        .add_socket(std::os::fd::OwnedFd::from(socket), "udp")
        .unwrap();
    assert!(matches!(
        engine.queue(Request::recv(handle, take(&pool, 64), 1)),
        QueueOutcome::Queued
    ));
    engine.commit().unwrap();
    // The worker is in recv(2): no datagram will ever come.
    thread::sleep(Duration::from_millis(20));
    drop(engine);
    // Joined once the socket's shutdown woke it: a worker still blocked
    // after DROP_WAIT is left running with its request, and its buffer.
    assert_eq!(pool.available(), 1, "the receive's buffer came back");
}

#[test]
fn the_completion_fd_is_readable_while_completions_wait() {
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), 3 * 4096);
    let mut engine = engine(4, None);
    let handle = add(&mut engine, &path, &read_write());
    let completions = engine
        .completion_fd()
        .unwrap()
        .try_clone_to_owned()
        .unwrap();
    let readable = |timeout| crate::engine::testkit::readable_within(completions.as_fd(), timeout);
    assert!(!readable(Duration::ZERO), "nothing was queued");
    let pool = BufPool::new(3, 4096).unwrap();
    for block in 0..3u64 {
        let read = Request::read(handle, block * 4096, take(&pool, 4096), block);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    }
    engine.commit().unwrap();
    // One at a time: each reap leaves it readable while others wait, and
    // every one is announced (a hang guard of a minute, never reached).
    let mut done = Vec::new();
    while done.len() < 3 {
        assert!(
            readable(Duration::from_secs(60)),
            "{} of 3 announced",
            done.len()
        );
        engine.reap(0, 1, &mut done).unwrap();
    }
    assert!(!readable(Duration::ZERO), "all three were reaped");
    for completion in &done {
        let at = completion.user_data as usize * 4096;
        assert_eq!(completion.result, 4096);
        assert_eq!(completion.data(), &contents[at..at + 4096]);
    }
}
