//! The libaio engine's own tests, beyond the conformance suite.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use super::*;
use crate::buf::{Buf, BufPool};
use crate::engine::testkit::reads_across_the_end;
use crate::engine::testkit::{add, pattern, scratch, take};
use crate::engine::{Engine, QueueOutcome};
use crate::file::FileHandle;
use crate::file::{self, OpenOptions};
use crate::probe;
use crate::request::Op;
use crate::sys::time::monotonic_ns;

fn engine(config: EngineConfig) -> LibaioEngine {
    LibaioEngine::new(&config).unwrap()
}

fn engine_at(depth: u32) -> LibaioEngine {
    engine(EngineConfig::with_depth(depth))
}

fn device_engine(depth: u32, latency: Duration) -> LibaioEngine {
    let mut config = EngineConfig::with_depth(depth);
    config.completion_latency = Some(latency);
    engine(config)
}

fn read_write(direct: bool) -> OpenOptions {
    OpenOptions {
        read: true,
        write: true,
        create: true,
        direct,
        ..Default::default()
    }
}

/// A file of `len` patterned bytes; returns its contents.
fn data_file(path: &Path, len: usize) -> Vec<u8> {
    let mut contents = vec![0; len];
    pattern(len as u64, &mut contents);
    std::fs::write(path, &contents).unwrap();
    contents
}

fn queued(engine: &mut LibaioEngine, request: Request) {
    match engine.queue(request) {
        QueueOutcome::Queued => {}
        other => panic!("not queued: {other:?}"),
    }
}

/// Queues `requests` (all must fit), commits once, reaps them all.
fn run_batch(engine: &mut LibaioEngine, requests: Vec<Request>) -> Vec<Completion> {
    let n = requests.len();
    for request in requests {
        queued(engine, request);
    }
    assert_eq!(engine.commit().unwrap(), n);
    let mut done = Vec::new();
    while done.len() < n {
        assert!(engine.reap(1, usize::MAX, &mut done).unwrap() >= 1);
    }
    assert_eq!(engine.in_flight(), 0);
    done.sort_by_key(|c| c.user_data);
    done
}

/// Writes 8 patterned blocks in one batch, syncs, reads them back in one
/// batch, byte for byte.
fn round_trip(engine: &mut LibaioEngine, path: &Path, direct: bool) {
    let pool = BufPool::new(8, 4096).unwrap();
    let handle = add(engine, path, &read_write(direct));
    let offset = |i: u64| (i * 3 % 8) * 4096;
    let writes = (0..8)
        .map(|i| {
            let mut buf = take(&pool, 4096);
            pattern(offset(i), buf.as_mut_slice());
            Request::write(handle, offset(i), buf, i)
        })
        .collect();
    for done in run_batch(engine, writes) {
        assert_eq!((done.op, done.result), (Op::Write, 4096), "{done:?}");
    }
    let synced = run_batch(
        engine,
        vec![
            Request::sync(handle, false, 0),
            Request::sync(handle, true, 1),
        ],
    );
    assert_eq!(synced.iter().map(|c| c.result).collect::<Vec<_>>(), [0, 0]);
    let reads = (0..8)
        .map(|i| {
            let mut buf = take(&pool, 4096);
            buf.as_mut_slice().fill(0xEE);
            Request::read(handle, offset(i), buf, i)
        })
        .collect();
    for done in run_batch(engine, reads) {
        assert_eq!((done.op, done.result), (Op::Read, 4096));
        let mut expected = vec![0; 4096];
        pattern(done.offset, &mut expected);
        assert!(
            done.buf.as_slice() == expected,
            "data at {} differs",
            done.offset
        );
    }
    engine.remove_file(handle).unwrap();
    assert_eq!(pool.available(), pool.count(), "buffers not returned");
}

#[test]
fn buffered_pattern_reads_back_byte_exact() {
    let dir = scratch();
    round_trip(&mut engine_at(8), &dir.path().join("f"), false);
}

#[test]
fn o_direct_pattern_reads_back_byte_exact() {
    let dir = scratch();
    if !probe::o_direct_supported(dir.path()) {
        eprintln!("skipping: no O_DIRECT in {}", dir.path().display());
        return;
    }
    let mut engine = engine_at(8);
    round_trip(&mut engine, &dir.path().join("f"), true);
    assert_eq!(engine.description(), "libaio (depth 8)");
}

#[test]
fn a_batch_goes_to_the_kernel_in_one_io_submit() {
    let dir = scratch();
    let path = dir.path().join("f");
    let contents = data_file(&path, 64 * 1024);
    let pool = BufPool::new(16, 4096).unwrap();
    let mut engine = engine_at(16);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    assert_eq!(engine.commit().unwrap(), 0);
    assert_eq!(
        engine.queue.submit_calls(),
        0,
        "an empty commit makes no call"
    );
    let reads = (0..16)
        .map(|i| Request::read(handle, i * 4096, take(&pool, 4096), i))
        .collect();
    let done = run_batch(&mut engine, reads);
    assert_eq!(engine.queue.submit_calls(), 1, "16 requests, one io_submit");
    for c in &done {
        let at = c.offset as usize;
        assert_eq!(c.result, 4096);
        assert!(c.buf.as_slice() == &contents[at..at + 4096]);
    }
}

#[test]
fn a_refused_iocb_fails_alone_and_the_batch_goes_on() {
    let dir = scratch();
    let path = dir.path().join("f");
    data_file(&path, 8192);
    let pool = BufPool::new(3, 4096).unwrap();
    let mut engine = engine_at(3);
    let readable = add(&mut engine, &path, &OpenOptions::default());
    let write_only = OpenOptions {
        read: false,
        write: true,
        create: false,
        direct: false,
        ..Default::default()
    };
    let unreadable = add(&mut engine, &path, &write_only);
    let done = run_batch(
        &mut engine,
        vec![
            Request::read(readable, 0, take(&pool, 4096), 0),
            Request::read(unreadable, 0, take(&pool, 4096), 1),
            Request::read(readable, 4096, take(&pool, 4096), 2),
        ],
    );
    let results: Vec<i64> = done.iter().map(|c| c.result).collect();
    assert_eq!(results, [4096, -i64::from(libc::EBADF), 4096]);
    // Accepted 1; refused the second (its errno); accepted the third.
    assert_eq!(engine.queue.submit_calls(), 3);
    assert_eq!(engine.counters().retries, 0);
}

#[test]
fn fsync_and_fdatasync_complete_with_zero() {
    let dir = scratch();
    let path = dir.path().join("f");
    data_file(&path, 4096);
    let mut engine = engine_at(2);
    let handle = add(&mut engine, &path, &read_write(false));
    let done = run_batch(
        &mut engine,
        vec![
            Request::sync(handle, false, 0),
            Request::sync(handle, true, 1),
        ],
    );
    let got: Vec<(Op, i64)> = done.iter().map(|c| (c.op, c.result)).collect();
    assert_eq!(got, [(Op::Fsync, 0), (Op::Fdatasync, 0)]);
}

#[test]
fn unknown_handles_complete_at_once_with_ebadf() {
    let pool = BufPool::new(1, 4096).unwrap();
    let mut engine = engine_at(2);
    match engine.queue(Request::read(FileHandle(5), 0, take(&pool, 4096), 7)) {
        QueueOutcome::Completed(done) => {
            assert_eq!((done.user_data, done.result), (7, -i64::from(libc::EBADF)));
            assert_eq!(done.buf.len(), 4096);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(engine.in_flight(), 0);
    assert_eq!(engine.commit().unwrap(), 0);
}

#[test]
fn queue_is_busy_exactly_at_depth() {
    let dir = scratch();
    let path = dir.path().join("f");
    data_file(&path, 32 * 1024);
    let pool = BufPool::new(6, 4096).unwrap();
    let mut engine = engine_at(4);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    for tag in 0..4 {
        queued(
            &mut engine,
            Request::read(handle, tag * 4096, take(&pool, 4096), tag),
        );
    }
    let QueueOutcome::Busy(back) = engine.queue(Request::read(handle, 0, take(&pool, 512), 9))
    else {
        panic!("not busy at depth 4");
    };
    assert_eq!((back.user_data, back.len()), (9, 512), "request changed");
    assert_eq!(engine.commit().unwrap(), 4);
    let QueueOutcome::Busy(back) = engine.queue(back) else {
        panic!("in-flight requests must count");
    };
    let mut done = Vec::new();
    assert_eq!(engine.reap(1, 1, &mut done).unwrap(), 1);
    queued(&mut engine, back);
    assert_eq!(engine.commit().unwrap(), 1);
    while engine.in_flight() > 0 {
        engine.reap(1, usize::MAX, &mut done).unwrap();
    }
    assert_eq!(done.len(), 5);
}

#[test]
fn reap_without_min_never_blocks() {
    let dir = scratch();
    let path = dir.path().join("f");
    data_file(&path, 4096);
    let pool = BufPool::new(2, 4096).unwrap();
    // Requests that take 300 ms: a reap(0) that waited would show.
    let latency = Duration::from_millis(300);
    let mut engine = device_engine(2, latency);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    let mut done = Vec::new();
    assert_eq!(
        engine.reap(0, 8, &mut done).unwrap(),
        0,
        "nothing in flight"
    );
    queued(&mut engine, Request::read(handle, 0, take(&pool, 4096), 0));
    let start = monotonic_ns();
    assert_eq!(engine.reap(1, 8, &mut done).unwrap(), 0, "uncommitted");
    assert_eq!(engine.commit().unwrap(), 1);
    // Had it waited, it would have waited for the request, and got it.
    assert_eq!(engine.reap(0, 8, &mut done).unwrap(), 0);
    assert_eq!(engine.reap(1, 8, &mut done).unwrap(), 1);
    assert!(monotonic_ns() - start >= latency.as_nanos() as u64 / 2);
    assert_eq!(done[0].result, 4096);
}

#[test]
fn dropping_the_engine_waits_for_reads_in_flight() {
    const LEN: usize = 1 << 20;
    let dir = scratch();
    let path = dir.path().join("f");
    let direct = probe::o_direct_supported(dir.path());
    if !direct {
        eprintln!("no O_DIRECT: the reads complete inside io_submit");
    }
    data_file(&path, 8 * LEN);
    let pool = BufPool::new(8, LEN).unwrap();
    for round in 0..3 {
        let mut engine = engine_at(8);
        let opts = OpenOptions {
            direct,
            ..OpenOptions::default()
        };
        let handle = add(&mut engine, &path, &opts);
        if !direct {
            let file = file::open(&path, &opts).unwrap();
            file::drop_page_cache(&file, &path).unwrap();
        }
        for i in 0..8 {
            queued(
                &mut engine,
                Request::read(handle, i * LEN as u64, take(&pool, LEN), i),
            );
        }
        assert_eq!(engine.commit().unwrap(), 8);
        drop(engine);
        assert_eq!(pool.available(), 8, "round {round}: buffers lost");
        // Had the drop not waited, the disk would still be writing into
        // these buffers, now the pool's again.
        let mut bufs: Vec<Buf> = (0..8).map(|_| pool.take().unwrap()).collect();
        for buf in &mut bufs {
            buf.as_mut_slice().fill(0x5A);
        }
        std::thread::sleep(Duration::from_millis(50));
        for buf in &bufs {
            assert!(
                buf.as_slice().iter().all(|&b| b == 0x5A),
                "round {round}: a buffer changed after the engine was dropped"
            );
        }
    }
}

#[test]
fn requests_never_committed_are_not_performed() {
    let dir = scratch();
    let path = dir.path().join("f");
    data_file(&path, 4096);
    let pool = BufPool::new(2, 4096).unwrap();
    let mut engine = engine_at(2);
    let handle = add(&mut engine, &path, &read_write(false));
    let mut buf = take(&pool, 4096);
    buf.as_mut_slice().fill(0xAB);
    queued(&mut engine, Request::write(handle, 0, buf, 0));
    drop(engine);
    assert_eq!(pool.available(), 2);
    let mut expected = vec![0; 4096];
    pattern(4096, &mut expected);
    assert!(
        std::fs::read(&path).unwrap() == expected,
        "the write happened"
    );
}

#[test]
fn description_notes_that_buffered_io_completes_inside_io_submit() {
    let dir = scratch();
    let path = dir.path().join("f");
    data_file(&path, 4096);
    let mut engine = engine_at(8);
    assert_eq!(engine.description(), "libaio (depth 8)");
    if probe::o_direct_supported(dir.path()) {
        let direct = OpenOptions {
            direct: true,
            ..OpenOptions::default()
        };
        add(&mut engine, &path, &direct);
        assert_eq!(engine.description(), "libaio (depth 8)");
    }
    add(&mut engine, &path, &OpenOptions::default());
    assert_eq!(
        engine.description(),
        "libaio (depth 8; buffered I/O completes inside io_submit)"
    );
    let device = device_engine(4, Duration::from_micros(30));
    assert_eq!(
        device.description(),
        "libaio (depth 4; emulated device, 30 us latency)"
    );
}

#[test]
fn nowait_read_that_would_block_is_handed_back_as_eagain_not_retried() {
    // An empty pipe: an RWF_NOWAIT read of it would block, every time.
    // (A page-cache miss of a file is no such case: the kernel may serve
    // it, when the readahead it started lands before it looks again.)
    let (reader, mut writer) = std::io::pipe().unwrap();
    let pool = BufPool::new(2, 4096).unwrap();
    let mut config = EngineConfig::with_depth(2);
    config.nowait = true;
    let mut engine = engine(config);
    let pipe = File::from(std::os::fd::OwnedFd::from(reader));
    let handle = engine.add_file(pipe, "pipe".into()).unwrap();
    let done = run_batch(
        &mut engine,
        vec![Request::read(handle, 0, take(&pool, 4096), 0)],
    );
    if done[0].result == -i64::from(libc::EOPNOTSUPP) {
        eprintln!("skipping: this kernel's AIO takes no RWF_NOWAIT read of a pipe");
        return;
    }
    assert_eq!(done[0].result, -i64::from(libc::EAGAIN));
    assert_eq!(
        engine.queue.submit_calls(),
        1,
        "a nowait EAGAIN is not retried"
    );
    assert_eq!(engine.counters().retries, 0);
    // With bytes waiting, the same read gets them.
    let mut sent = vec![0; 4096];
    pattern(5, &mut sent);
    std::io::Write::write_all(&mut writer, &sent).unwrap();
    let done = run_batch(
        &mut engine,
        vec![Request::read(handle, 0, take(&pool, 4096), 1)],
    );
    assert_eq!(done[0].result, 4096);
    assert!(
        done[0].buf.as_slice() == sent.as_slice(),
        "the pipe's bytes"
    );
    assert_eq!(engine.counters().retries, 0);
}

#[test]
fn nowait_o_direct_read_completes() {
    let dir = scratch();
    if !probe::o_direct_supported(dir.path()) {
        eprintln!("skipping: no O_DIRECT in {}", dir.path().display());
        return;
    }
    let path = dir.path().join("f");
    let contents = data_file(&path, 8192);
    let pool = BufPool::new(1, 4096).unwrap();
    let mut config = EngineConfig::with_depth(1);
    config.nowait = true;
    let mut engine = engine(config);
    let direct = OpenOptions {
        direct: true,
        ..OpenOptions::default()
    };
    let handle = add(&mut engine, &path, &direct);
    let done = run_batch(
        &mut engine,
        vec![Request::read(handle, 4096, take(&pool, 4096), 0)],
    );
    // An O_DIRECT read may still find the inode lock taken (EAGAIN) on a busy system.
    assert!(
        done[0].result == 4096 || done[0].result == -i64::from(libc::EAGAIN),
        "{}",
        done[0].result
    );
    if done[0].result == 4096 {
        assert!(done[0].buf.as_slice() == &contents[4096..]);
    }
}

/// Runs `rounds` batches of `depth` reads through a device engine;
/// returns each batch's time from commit to its last completion (ns), sorted.
fn device_batches(latency: Duration, depth: u32, rounds: usize) -> Vec<u64> {
    let dir = scratch();
    let path = dir.path().join("f");
    let contents = data_file(&path, 64 * 1024);
    let pool = BufPool::new(depth as usize, 4096).unwrap();
    let mut engine = device_engine(depth, latency);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    let mut took = Vec::with_capacity(rounds);
    let mut done = Vec::new();
    for round in 0..rounds as u64 {
        for i in 0..u64::from(depth) {
            let offset = ((round * 7 + i * 3) % 16) * 4096;
            let mut buf = take(&pool, 4096);
            buf.as_mut_slice().fill(0xEE);
            queued(&mut engine, Request::read(handle, offset, buf, i));
        }
        let start = monotonic_ns();
        assert_eq!(engine.commit().unwrap(), depth as usize);
        while done.len() < depth as usize {
            engine.reap(depth as usize, usize::MAX, &mut done).unwrap();
        }
        took.push(monotonic_ns() - start);
        for c in done.drain(..) {
            let at = c.offset as usize;
            assert_eq!(c.result, 4096);
            assert!(
                c.buf.as_slice() == &contents[at..at + 4096],
                "data at {at} differs"
            );
        }
    }
    took.sort_unstable();
    took
}

#[test]
fn emulated_device_completes_requests_in_flight_together() {
    let latency = Duration::from_micros(30);
    let single = device_batches(latency, 1, 201);
    let four = device_batches(latency, 4, 201);
    let median = |took: &[u64]| took[took.len() / 2];
    eprintln!(
        "30 us device through libaio: depth 1 median {} ns, depth 4 (4 reads in flight) median {} ns",
        median(&single),
        median(&four)
    );
    // That four in flight overlap is checked with a long latency below
    // (emulated_device_overlaps_long_requests), where a loaded machine
    // cannot blur one latency into four; here the figures are printed.
    // Never early: the timers are re-armed, not left readable.
    let device = EmulatedDevice::new(latency);
    // (Preempted between the two reads of the clock, the floor is 0.)
    let floor = device.deadline().saturating_sub(monotonic_ns());
    assert!(single[0] + 1_000 >= floor, "{single:?}");
}

#[test]
fn emulated_device_overlaps_long_requests() {
    let latency = Duration::from_millis(50);
    let four = device_batches(latency, 4, 5);
    eprintln!("50 ms device, 4 reads in flight: {four:?} ns");
    let span = latency.as_nanos() as u64;
    // One after the other they would take 4 x 50 ms in every round; a
    // busy machine only makes a round slower, so the fastest of five
    // tells overlap from none, 2 x 50 ms of room for a late wake-up.
    assert!(four[0] < 3 * span, "{four:?}");
    assert!(four[0] >= span / 2, "{four:?}");
}

#[test]
fn emulated_device_reuses_timers_without_early_completions() {
    let latency = Duration::from_millis(2);
    let took = device_batches(latency, 1, 20);
    // A timerfd left readable by its previous request would complete at once.
    assert!(took[0] >= latency.as_nanos() as u64 / 2, "{took:?}");
}

#[test]
fn emulated_device_writes_read_back_and_keep_o_direct_rules() {
    let dir = scratch();
    let path = dir.path().join("f");
    data_file(&path, 8192);
    let pool = BufPool::new(4, 4096).unwrap();
    let mut engine = device_engine(4, Duration::from_micros(50));
    let direct = probe::o_direct_supported(dir.path());
    let handle = add(&mut engine, &path, &read_write(direct));
    let mut out = take(&pool, 4096);
    pattern(1, out.as_mut_slice());
    let mut done = run_batch(
        &mut engine,
        vec![
            Request::write(handle, 4096, out, 0),
            Request::sync(handle, true, 1),
        ],
    );
    assert_eq!(done.iter().map(|c| c.result).collect::<Vec<_>>(), [4096, 0]);
    let written = done.remove(0).buf;
    let mut requests = vec![Request::read(handle, 4096, take(&pool, 4096), 0)];
    if direct {
        requests.push(Request::read(handle, 100, take(&pool, 4096), 1));
    }
    let done = run_batch(&mut engine, requests);
    assert_eq!(done[0].result, 4096);
    assert!(done[0].buf.as_slice() == written.as_slice());
    if direct {
        assert_eq!(
            done[1].result,
            -i64::from(libc::EINVAL),
            "misaligned O_DIRECT"
        );
    }
}

/// Issue 44, defect 8: a pipe was taken, and the commit of a read of it
/// waited inside io_submit for data that never came.
#[test]
fn pipes_fifos_and_character_devices_are_refused_and_given_back() {
    if probe::engine_available(EngineKind::Libaio).is_err() {
        eprintln!("skipping: libaio is not available here");
        return;
    }
    let dir = scratch();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|status| status.success()), "mkfifo");
    let (pipe, _writer) = std::io::pipe().unwrap();
    let opened = [
        (File::from(std::os::fd::OwnedFd::from(pipe)), "pipe"),
        (
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&fifo)
                .unwrap(),
            "fifo",
        ),
        (
            File::open("/dev/tty")
                .or_else(|_| File::open("/dev/zero"))
                .unwrap(),
            "chr",
        ),
    ];
    let mut engine = engine_at(2);
    for (file, what) in opened {
        let fd = file.as_raw_fd();
        match engine.add_file(file, what.into()) {
            Err(Error::FileRefused { file, reason, .. }) => {
                assert_eq!(file.as_raw_fd(), fd, "{what}: the same file back");
                let text = reason.to_string();
                assert!(text.contains("io_submit"), "{what}: {text}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    assert_eq!(engine.in_flight(), 0);
}

#[test]
fn setup_beyond_the_system_limit_names_the_sysctl() {
    let Ok(max) = std::fs::read_to_string("/proc/sys/fs/aio-max-nr") else {
        return;
    };
    let max: u64 = max.trim().parse().unwrap();
    // Far past the limit the kernel answers EINVAL (its ring would be too big).
    let Some(depth) = u32::try_from(max + 1).ok().filter(|&d| d <= 1 << 22) else {
        return;
    };
    match LibaioEngine::new(&EngineConfig::with_depth(depth)) {
        Err(e @ Error::Limit { .. }) => {
            let text = e.to_string();
            assert!(text.contains("fs.aio-max-nr"), "{text}");
        }
        other => panic!("depth {depth} > aio-max-nr: {other:?}"),
    }
}

/// A read across the end of the file comes back short from the kernel: the
/// engine, as `open` makes it, sends the rest again from the request's slot
/// of the context, meets the end (0), and hands back the bytes there with
/// the offset and the window as queued; on the emulated device too, whose
/// data moves again at the resubmission's commit.
#[test]
fn a_read_across_the_end_of_the_file_is_sent_again_from_its_slot() {
    let dir = scratch();
    let (path, contents) = crate::engine::testkit::data_file(dir.path(), "f", 10_000);
    for latency in [None, Some(Duration::from_micros(200))] {
        let what = format!("latency {latency:?}");
        let pool = BufPool::new(8, 8192).unwrap();
        let mut config = EngineConfig::with_depth(4);
        config.completion_latency = latency;
        let mut engine = crate::engine::open(EngineKind::Libaio, &config, Some(&pool)).unwrap();
        reads_across_the_end(engine.as_mut(), &pool, &path, &contents, &what);
        assert_eq!(engine.counters().short_ios, [2, 0], "{what}");
    }
}

/// An answer "try again" (`EAGAIN`; emulated in the context, as no kernel
/// gives it on demand) is sent again from its slot up to the rule's limit,
/// then the error is the caller's; within it, the read gets its data.
#[test]
fn try_again_is_sent_again_from_its_slot_up_to_the_limit() {
    let dir = scratch();
    let path = dir.path().join("f");
    let contents = data_file(&path, 8192);
    let pool = BufPool::new(2, 4096).unwrap();
    let mut engine = engine_at(2);
    engine.retry.limit = 5;
    let file = add(&mut engine, &path, &read_write(false));
    let read = |engine: &mut LibaioEngine, eagain: u32| {
        engine.queue.answer_eagain = eagain;
        let done =
            crate::engine::testkit::run(engine, [Request::read(file, 4096, take(&pool, 4096), 1)]);
        if done[0].result == 4096 {
            assert!(done[0].buf.as_slice() == &contents[4096..]);
        }
        (done[0].result, done[0].offset, done[0].buf.len())
    };
    assert_eq!(read(&mut engine, 3), (4096, 4096, 4096));
    assert_eq!(engine.retry.retries, 3);
    let eagain = -i64::from(libc::EAGAIN);
    assert_eq!(read(&mut engine, 7), (eagain, 4096, 4096));
    assert_eq!(engine.retry.retries, 3 + 5);
    assert_eq!(
        engine.queue.answer_eagain, 1,
        "one answer past the limit untaken"
    );
}
