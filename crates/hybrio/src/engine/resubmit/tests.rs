use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::*;
use crate::buf::BufPool;
use crate::engine::inject::{FaultPlan, Inject};
use crate::engine::io_uring::IoUringEngine;
use crate::engine::psync::PsyncEngine;
use crate::engine::retry::RETRY_LIMIT;
use crate::file::OpenOptions;
use crate::probe;
use crate::request::Op;

pub(in crate::engine) use crate::engine::testkit::{
    add, data_file, finish, pattern, read_write, run, scratch, take,
};

pub(in crate::engine) fn plan(text: &str) -> FaultPlan {
    text.parse().unwrap()
}

fn errno(completion: &Completion) -> Option<i32> {
    completion.error().and_then(|e| e.raw_os_error())
}

/// The engine below the layers under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Below {
    /// Synchronous: everything completes inside `queue`.
    Psync,
    /// Asynchronous: completions come from `reap`.
    IoUring,
}

const BELOW: [Below; 2] = [Below::Psync, Below::IoUring];

/// `Resubmit<Inject<below>>` (just `Resubmit<below>` without a plan),
/// retrying at most `retry_limit` times; `None` where io_uring is refused.
fn stack(
    below: Below,
    config: &EngineConfig,
    faults: Option<&str>,
    retry_limit: u32,
    pool: &BufPool,
) -> Option<Box<dyn Engine>> {
    fn wrap<E: Engine + 'static>(
        inner: E,
        config: &EngineConfig,
        faults: Option<&str>,
        retry_limit: u32,
    ) -> Box<dyn Engine> {
        match faults {
            Some(faults) => {
                let mut engine = Resubmit::new(Inject::new(inner, plan(faults)), config);
                engine.retry.limit = retry_limit;
                Box::new(engine)
            }
            None => {
                let mut engine = Resubmit::new(inner, config);
                engine.retry.limit = retry_limit;
                Box::new(engine)
            }
        }
    }
    match below {
        Below::Psync => Some(wrap(
            PsyncEngine::new(config).retried_above(),
            config,
            faults,
            retry_limit,
        )),
        Below::IoUring => {
            if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
                eprintln!("skipping io_uring: {reason}");
                return None;
            }
            let inner = IoUringEngine::new(config, Some(pool))
                .unwrap()
                .retried_above();
            Some(wrap(inner, config, faults, retry_limit))
        }
    }
}

/// Checks that a completion is the whole request, as queued, with the
/// file's bytes.
fn assert_whole_read(done: &Completion, offset: u64, len: usize, contents: &[u8], what: &str) {
    let buf = &done.buf;
    assert_eq!(done.result, len as i64, "{what}: result at {offset}");
    assert_eq!(done.offset, offset, "{what}: offset");
    assert_eq!((buf.start(), buf.len()), (0, len), "{what}: window");
    let at = offset as usize;
    assert!(
        buf.as_slice() == &contents[at..at + len],
        "{what}: data at {offset} differs"
    );
}

#[test]
fn short_transfers_are_sent_again_until_whole() {
    for below in BELOW {
        let pool = BufPool::new(40, 8192).unwrap();
        let config = EngineConfig::with_depth(8);
        let Some(mut engine) = stack(below, &config, Some("short:1.0"), RETRY_LIMIT, &pool) else {
            continue;
        };
        let what = format!("{below:?}");
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "f", 64 * 1024);
        let handle = add(engine.as_mut(), &path, &read_write());
        let blocks = [3u64, 0, 15, 7, 1, 9, 12, 4, 2, 14, 5, 11, 6, 13, 8, 10];
        let reads = blocks
            .iter()
            .map(|&k| Request::read(handle, k * 4096, take(&pool, 4096), k));
        let done = run(engine.as_mut(), reads.collect::<Vec<_>>());
        assert_eq!(done.len(), 16, "{what}");
        for completion in &done {
            assert_whole_read(
                completion,
                completion.user_data * 4096,
                4096,
                &contents,
                &what,
            );
        }
        // 4096 comes back as 2048, the rest 2048 as 1024, the rest 1024
        // as 512; the last 512 cannot be halved.
        let counters = engine.counters();
        assert_eq!(counters.short_ios, [16 * 3, 0], "{what}");
        assert_eq!(counters.injected.short, 16 * 3, "{what}");
        drop(done);

        // An odd length at an odd offset, in a window that does not start
        // at the buffer's start.
        let mut odd = take(&pool, 8192);
        odd.advance(100);
        odd.set_len(5000);
        let done = run(engine.as_mut(), [Request::read(handle, 777, odd, 99)]);
        let buf = &done[0].buf;
        assert_eq!((done[0].result, done[0].offset), (5000, 777), "{what}");
        assert_eq!((buf.start(), buf.len()), (100, 5000), "{what}: window");
        assert!(buf.as_slice() == &contents[777..5777], "{what}: odd read");
        drop(done);

        let mut expected = contents.clone();
        let writes: Vec<Request> = blocks
            .iter()
            .map(|&k| {
                let mut buf = take(&pool, 4096);
                pattern(1000 + k, buf.as_mut_slice());
                let at = k as usize * 4096;
                expected[at..at + 4096].copy_from_slice(buf.as_slice());
                Request::write(handle, k * 4096, buf, k)
            })
            .collect();
        for completion in run(engine.as_mut(), writes) {
            assert_eq!(completion.result, 4096, "{what}: write");
            assert_eq!(completion.offset, completion.user_data * 4096, "{what}");
            assert_eq!(completion.buf.len(), 4096, "{what}");
        }
        let counters = engine.counters();
        assert_eq!(counters.short_ios[1], 16 * 3, "{what}");
        assert_eq!(
            counters.short_ios[0] + counters.short_ios[1],
            counters.injected.short,
            "{what}: one resubmission per shortened request"
        );
        assert!(
            std::fs::read(&path).unwrap() == expected,
            "{what}: file differs"
        );
    }
}

#[test]
fn a_read_across_the_end_of_the_file_returns_what_is_there() {
    for below in BELOW {
        let pool = BufPool::new(4, 8192).unwrap();
        let Some(mut engine) = stack(
            below,
            &EngineConfig::with_depth(4),
            None,
            RETRY_LIMIT,
            &pool,
        ) else {
            continue;
        };
        let what = format!("{below:?}");
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "f", 5000);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let done = run(
            engine.as_mut(),
            [
                Request::read(handle, 0, take(&pool, 8192), 0),
                Request::read(handle, 4096, take(&pool, 8192), 1),
                Request::read(handle, 5000, take(&pool, 8192), 2),
                Request::read(handle, 1 << 20, take(&pool, 8192), 3),
            ],
        );
        let by_tag: BTreeMap<u64, &Completion> = done.iter().map(|c| (c.user_data, c)).collect();
        for (tag, offset, result) in [(0, 0, 5000), (1, 4096, 904), (2, 5000, 0), (3, 1 << 20, 0)] {
            let completion = by_tag[&tag];
            let buf = &completion.buf;
            assert_eq!(completion.result, result, "{what}: read at {offset}");
            assert_eq!(completion.offset, offset, "{what}");
            assert_eq!((buf.start(), buf.len()), (0, 8192), "{what}: window");
            assert!(completion.is_short(), "{what}");
            let at = (offset as usize).min(5000);
            assert!(
                buf.as_slice()[..result as usize] == contents[at..at + result as usize],
                "{what}: data at {offset}"
            );
        }
        // The two that met the end were each sent again once, to find it.
        assert_eq!(engine.counters().short_ios, [2, 0], "{what}");
    }
}

#[test]
fn an_o_direct_read_of_a_file_end_off_the_sector_returns_the_bytes_before_it() {
    let dir = scratch();
    if !probe::o_direct_supported(dir.path()) {
        eprintln!(
            "skipping O_DIRECT: not supported in {}",
            dir.path().display()
        );
        return;
    }
    let (path, contents) = data_file(dir.path(), "f", 5000);
    let direct = OpenOptions {
        direct: true,
        ..OpenOptions::default()
    };
    for below in BELOW {
        let pool = BufPool::new(2, 8192).unwrap();
        let Some(mut engine) = stack(
            below,
            &EngineConfig::with_depth(2),
            None,
            RETRY_LIMIT,
            &pool,
        ) else {
            continue;
        };
        let handle = add(engine.as_mut(), &path, &direct);
        let done = run(
            engine.as_mut(),
            [Request::read(handle, 0, take(&pool, 8192), 0)],
        );
        // The rest starts at 5000, which O_DIRECT refuses (EINVAL) or
        // finds at the end: either way, the 5000 bytes are the answer.
        assert_eq!(done[0].result, 5000, "{below:?}");
        assert!(done[0].buf.as_slice()[..5000] == contents[..], "{below:?}");
    }
}

#[test]
fn eagain_is_retried_up_to_the_limit_then_reported() {
    const LIMIT: u32 = 20;
    for below in BELOW {
        let pool = BufPool::new(8, 4096).unwrap();
        let Some(mut engine) = stack(
            below,
            &EngineConfig::with_depth(4),
            Some("eagain:1.0"),
            LIMIT,
            &pool,
        ) else {
            continue;
        };
        let what = format!("{below:?}");
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 16384);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let requests = (0..4).map(|i| Request::read(handle, i * 4096, take(&pool, 4096), i));
        let mut requests: Vec<Request> = requests.collect();
        requests.push(Request::sync(handle, true, 9));
        let done = run(engine.as_mut(), requests);
        assert_eq!(done.len(), 5, "{what}");
        for completion in &done {
            assert_eq!(
                errno(completion),
                Some(libc::EAGAIN),
                "{what}: {}",
                completion.user_data
            );
        }
        let counters = engine.counters();
        assert_eq!(counters.retries, 5 * u64::from(LIMIT), "{what}");
        assert_eq!(counters.injected.eagain, 5 * u64::from(LIMIT + 1), "{what}");
        assert_eq!(engine.in_flight(), 0, "{what}");
    }
}

#[test]
fn the_default_retry_limit_ends_too() {
    let pool = BufPool::new(1, 4096).unwrap();
    let config = EngineConfig::default();
    let mut engine = stack(
        Below::Psync,
        &config,
        Some("eagain:1.0"),
        RETRY_LIMIT,
        &pool,
    )
    .unwrap();
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "f", 4096);
    let handle = add(engine.as_mut(), &path, &OpenOptions::default());
    let start = Instant::now();
    let done = run(
        engine.as_mut(),
        [Request::read(handle, 0, take(&pool, 4096), 0)],
    );
    eprintln!("{RETRY_LIMIT} retries took {:?}", start.elapsed());
    assert_eq!(errno(&done[0]), Some(libc::EAGAIN));
    assert_eq!(engine.counters().retries, u64::from(RETRY_LIMIT));
}

#[test]
fn eagain_now_and_then_still_gives_the_right_data() {
    for below in BELOW {
        let pool = BufPool::new(72, 4096).unwrap();
        let faults = "eagain:0.3,seed:7";
        let Some(mut engine) = stack(
            below,
            &EngineConfig::with_depth(8),
            Some(faults),
            RETRY_LIMIT,
            &pool,
        ) else {
            continue;
        };
        let what = format!("{below:?}");
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "f", 64 * 4096);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let reads =
            (0..64).map(|k| Request::read(handle, (k * 37 % 64) * 4096, take(&pool, 4096), k));
        let done = run(engine.as_mut(), reads.collect::<Vec<_>>());
        assert_eq!(done.len(), 64, "{what}");
        for completion in &done {
            let offset = (completion.user_data * 37 % 64) * 4096;
            assert_whole_read(completion, offset, 4096, &contents, &what);
        }
        let counters = engine.counters();
        assert!(counters.retries > 0, "{what}: {counters:?}");
        assert_eq!(counters.retries, counters.injected.eagain, "{what}");
    }
}

#[test]
fn with_nowait_eagain_is_the_callers_answer() {
    for below in BELOW {
        let pool = BufPool::new(4, 4096).unwrap();
        let mut config = EngineConfig::with_depth(4);
        config.nowait = true;
        let Some(mut engine) = stack(below, &config, Some("eagain:1.0"), RETRY_LIMIT, &pool) else {
            continue;
        };
        let dir = scratch();
        let (path, _) = data_file(dir.path(), "f", 8192);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let done = run(
            engine.as_mut(),
            [
                Request::read(handle, 0, take(&pool, 4096), 0),
                Request::read(handle, 4096, take(&pool, 4096), 1),
            ],
        );
        for completion in &done {
            assert_eq!(errno(completion), Some(libc::EAGAIN), "{below:?}");
        }
        let counters = engine.counters();
        assert_eq!(
            (counters.retries, counters.injected.eagain),
            (0, 2),
            "{below:?}"
        );
    }
}

#[test]
fn eio_fails_every_request_and_writes_nothing() {
    for below in BELOW {
        let pool = BufPool::new(16, 4096).unwrap();
        let Some(mut engine) = stack(
            below,
            &EngineConfig::with_depth(4),
            Some("eio:1.0"),
            RETRY_LIMIT,
            &pool,
        ) else {
            continue;
        };
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "f", 8 * 4096);
        let handle = add(engine.as_mut(), &path, &read_write());
        let mut requests: Vec<Request> = (0..8)
            .map(|k| {
                let mut buf = take(&pool, 4096);
                buf.as_mut_slice().fill(0xAB);
                Request::write(handle, k * 4096, buf, k)
            })
            .collect();
        requests.extend((0..4).map(|k| Request::read(handle, k * 4096, take(&pool, 4096), 10 + k)));
        requests.push(Request::sync(handle, false, 20));
        let done = run(engine.as_mut(), requests);
        assert_eq!(done.len(), 13, "{below:?}");
        for completion in &done {
            assert_eq!(
                errno(completion),
                Some(libc::EIO),
                "{below:?}: {}",
                completion.user_data
            );
        }
        let counters = engine.counters();
        assert_eq!(
            (counters.injected.eio, counters.retries),
            (13, 0),
            "{below:?}"
        );
        assert!(
            std::fs::read(&path).unwrap() == contents,
            "{below:?}: the file changed"
        );
    }
}

#[test]
fn delayed_requests_take_at_least_the_delay() {
    const DELAY: Duration = Duration::from_millis(2);
    for below in BELOW {
        let pool = BufPool::new(8, 4096).unwrap();
        let Some(mut engine) = stack(
            below,
            &EngineConfig::with_depth(8),
            Some("delay:1.0@2ms"),
            RETRY_LIMIT,
            &pool,
        ) else {
            continue;
        };
        let dir = scratch();
        let (path, contents) = data_file(dir.path(), "f", 8 * 4096);
        let handle = add(engine.as_mut(), &path, &OpenOptions::default());
        let mut queued_at = BTreeMap::new();
        let mut took = Vec::new();
        let mut done = Vec::new();
        for k in 0..8u64 {
            queued_at.insert(k, Instant::now());
            match engine.queue(Request::read(handle, k * 4096, take(&pool, 4096), k)) {
                QueueOutcome::Completed(completion) => {
                    took.push(queued_at[&k].elapsed());
                    done.push(completion);
                }
                QueueOutcome::Queued => {}
                QueueOutcome::Busy(_) => panic!("{below:?}: busy below the depth"),
            }
        }
        engine.commit().unwrap();
        while engine.in_flight() > 0 {
            let before = done.len();
            engine.reap(1, 8, &mut done).unwrap();
            for completion in &done[before..] {
                took.push(queued_at[&completion.user_data].elapsed());
            }
        }
        assert_eq!((done.len(), took.len()), (8, 8), "{below:?}");
        for completion in &done {
            assert_whole_read(
                completion,
                completion.user_data * 4096,
                4096,
                &contents,
                "delayed",
            );
        }
        assert!(took.iter().all(|&t| t >= DELAY), "{below:?}: {took:?}");
        assert_eq!(engine.counters().injected.delay, 8, "{below:?}");
    }
}

#[test]
fn delayed_completions_count_against_the_depth() {
    let pool = BufPool::new(8, 4096).unwrap();
    let Some(mut engine) = stack(
        Below::IoUring,
        &EngineConfig::with_depth(4),
        // Long enough that the checks made while they are held back run
        // before they are due even on a busy machine; the reap waits it out.
        Some("delay:1.0@1s"),
        RETRY_LIMIT,
        &pool,
    ) else {
        return;
    };
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "f", 8 * 4096);
    let handle = add(engine.as_mut(), &path, &OpenOptions::default());
    let start = Instant::now();
    for k in 0..4 {
        let outcome = engine.queue(Request::read(handle, k * 4096, take(&pool, 4096), k));
        assert!(matches!(outcome, QueueOutcome::Queued), "request {k}");
    }
    assert_eq!(engine.commit().unwrap(), 4);
    std::thread::sleep(Duration::from_millis(5));
    let mut done = Vec::new();
    // The reads are done, but held back: still in flight.
    assert_eq!(engine.reap(0, 8, &mut done).unwrap(), 0);
    assert_eq!(engine.in_flight(), 4);
    let QueueOutcome::Busy(back) = engine.queue(Request::read(handle, 0, take(&pool, 4096), 9))
    else {
        panic!("held-back completions must count against the depth")
    };
    assert!(matches!(
        engine.remove_file(handle),
        Err(Error::FileBusy { .. })
    ));
    assert_eq!(engine.reap(4, 4, &mut done).unwrap(), 4);
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert!(matches!(engine.queue(back), QueueOutcome::Queued));
    finish(engine.as_mut(), &mut done);
    assert!(done.iter().all(|c| c.result == 4096));
}

/// A tiny xorshift for the tests' random workloads.
pub(in crate::engine) struct TestRng(pub(in crate::engine) u64);

impl TestRng {
    pub(in crate::engine) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn mixed_faults_over_many_requests_complete_each_exactly_once() {
    const N: u64 = 2000;
    const FILE: usize = 1 << 20;
    const DEPTH: u32 = 8;
    let faults = "eio:0.01,short:0.1,eagain:0.05,delay:0.01@200us,seed:42";
    for below in BELOW {
        let pool = BufPool::new(DEPTH as usize + 1, 16384).unwrap();
        let Some(mut engine) = stack(
            below,
            &EngineConfig::with_depth(DEPTH),
            Some(faults),
            RETRY_LIMIT,
            &pool,
        ) else {
            continue;
        };
        let what = format!("{below:?}");
        let dir = scratch();
        // Every write writes what the file holds already, so that any
        // read, in any order, must find the same bytes.
        let (path, contents) = data_file(dir.path(), "f", FILE);
        let handle = add(engine.as_mut(), &path, &read_write());
        let mut rng = TestRng(0x1234_5678);
        let mut seen: BTreeMap<u64, u32> = BTreeMap::new();
        let mut asked: BTreeMap<u64, (Op, u64, usize)> = BTreeMap::new();
        let (mut queued, mut completed, mut failed, mut partial) = (0u64, 0u64, 0u64, 0u64);
        let mut check = |completion: Completion,
                         seen: &mut BTreeMap<u64, u32>,
                         asked: &BTreeMap<u64, (Op, u64, usize)>| {
            completed += 1;
            *seen.entry(completion.user_data).or_default() += 1;
            let (op, offset, len) = asked[&completion.user_data];
            let buf = &completion.buf;
            assert_eq!((completion.op, completion.offset), (op, offset), "{what}");
            assert_eq!((buf.start(), buf.len()), (0, len), "{what}: window");
            match completion.result {
                r if r == len as i64 => {}
                r if r < 0 => {
                    assert_eq!(
                        errno(&completion),
                        Some(libc::EIO),
                        "{what}: {op:?} at {offset}"
                    );
                    failed += 1;
                }
                // Some bytes moved, then an injected EIO stopped the rest.
                r => {
                    assert!(r > 0 && (r as usize) < len, "{what}: {r} of {len}");
                    partial += 1;
                }
            }
            if op == Op::Read && completion.result > 0 {
                let n = completion.result as usize;
                let at = offset as usize;
                assert!(
                    buf.as_slice()[..n] == contents[at..at + n],
                    "{what}: read at {offset}"
                );
            }
        };
        let mut done = Vec::new();
        for i in 0..N {
            let buf = loop {
                if let Some(buf) = pool.take() {
                    break buf;
                }
                engine.commit().unwrap();
                engine.reap(1, 4, &mut done).unwrap();
                for completion in done.drain(..) {
                    check(completion, &mut seen, &asked);
                }
            };
            let len = [512, 4096, 8192, 3000, 16384][rng.below(5) as usize];
            let offset = rng.below((FILE - len) as u64);
            let mut buf = buf;
            buf.set_len(len);
            let mut request = if rng.below(2) == 0 {
                asked.insert(i, (Op::Read, offset, len));
                Request::read(handle, offset, buf, i)
            } else {
                let at = offset as usize;
                buf.as_mut_slice().copy_from_slice(&contents[at..at + len]);
                asked.insert(i, (Op::Write, offset, len));
                Request::write(handle, offset, buf, i)
            };
            loop {
                match engine.queue(request) {
                    QueueOutcome::Completed(completion) => {
                        queued += 1;
                        check(completion, &mut seen, &asked);
                    }
                    QueueOutcome::Queued => queued += 1,
                    QueueOutcome::Busy(back) => {
                        request = back;
                        engine.commit().unwrap();
                        engine.reap(1, 4, &mut done).unwrap();
                        for completion in done.drain(..) {
                            check(completion, &mut seen, &asked);
                        }
                        continue;
                    }
                }
                break;
            }
        }
        finish(engine.as_mut(), &mut done);
        for completion in done.drain(..) {
            check(completion, &mut seen, &asked);
        }
        assert_eq!((queued, completed), (N, N), "{what}: submitted = completed");
        assert!(
            (0..N).all(|i| seen.get(&i) == Some(&1)),
            "{what}: a request completed twice or never"
        );
        let counters = engine.counters();
        eprintln!("{what}: {counters:?}, {failed} failed, {partial} partial");
        assert_eq!(
            counters.short_ios[0] + counters.short_ios[1],
            counters.injected.short,
            "{what}: one resubmission per shortened request"
        );
        assert_eq!(counters.retries, counters.injected.eagain, "{what}");
        assert_eq!(
            failed + partial,
            counters.injected.eio,
            "{what}: every EIO reported"
        );
        let i = counters.injected;
        assert!(
            i.eio > 0 && i.short > 0 && i.eagain > 0 && i.delay > 0,
            "{what}: {i:?}"
        );
        assert!(
            std::fs::read(&path).unwrap() == contents,
            "{what}: the file changed"
        );
        assert_eq!(pool.available(), pool.count(), "{what}: buffers lost");
    }
}

/// An asynchronous in-memory engine with one file, which moves at most
/// `most` bytes a request and can be told to refuse the next requests.
#[derive(Debug)]
struct MemEngine {
    data: Vec<u8>,
    file: Option<File>,
    depth: usize,
    most: usize,
    /// Complete this many queue calls inline (before any refusal).
    inline: usize,
    /// Answer `Busy` to this many queue calls, full or not.
    refuse: usize,
    /// Refuse offsets off the 512-byte sector with `EINVAL`, as `O_DIRECT` does.
    direct: bool,
    /// Writes end here, as on a full disk: what would go past fails with `ENOSPC`.
    space: usize,
    queued: VecDeque<Request>,
    submitted: VecDeque<Request>,
}

impl MemEngine {
    fn new(data: Vec<u8>, depth: usize, most: usize) -> Self {
        MemEngine {
            data,
            file: None,
            depth,
            most,
            inline: 0,
            refuse: 0,
            direct: false,
            space: usize::MAX,
            queued: VecDeque::new(),
            submitted: VecDeque::new(),
        }
    }
}

impl Engine for MemEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Null
    }
    fn add_file(&mut self, file: File, _path: PathBuf) -> Result<FileHandle, Error> {
        self.file = Some(file);
        Ok(FileHandle(0))
    }
    fn remove_file(&mut self, handle: FileHandle) -> Result<File, Error> {
        self.file.take().ok_or(Error::BadHandle(handle.0))
    }
    fn queue(&mut self, request: Request) -> QueueOutcome {
        if self.inline > 0 {
            self.inline -= 1;
            return QueueOutcome::Completed(self.transfer(request));
        }
        if self.refuse > 0 || self.in_flight() >= self.depth {
            self.refuse = self.refuse.saturating_sub(1);
            return QueueOutcome::Busy(request);
        }
        self.queued.push_back(request);
        QueueOutcome::Queued
    }
    fn commit(&mut self) -> Result<usize, Error> {
        let n = self.queued.len();
        self.submitted.extend(self.queued.drain(..));
        Ok(n)
    }
    fn reap(&mut self, _min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize, Error> {
        let n = max.min(self.submitted.len());
        for request in self.submitted.drain(..n).collect::<Vec<_>>() {
            out.push(self.transfer(request));
        }
        Ok(n)
    }
    fn in_flight(&self) -> usize {
        self.queued.len() + self.submitted.len()
    }
    fn is_synchronous(&self) -> bool {
        false
    }
}

impl MemEngine {
    /// Moves at most `most` bytes of `request` from or to `data`.
    fn transfer(&mut self, mut request: Request) -> Completion {
        let at = (request.offset as usize).min(self.data.len());
        let offset = request.offset;
        let result = match (request.op, request.buffer_mut()) {
            _ if self.direct && !offset.is_multiple_of(512) => -i64::from(libc::EINVAL),
            (Op::Read, Some(buf)) => {
                let k = buf.len().min(self.most).min(self.data.len() - at);
                buf.as_mut_slice()[..k].copy_from_slice(&self.data[at..at + k]);
                k as i64
            }
            (Op::Write, Some(buf)) => {
                let room = self.space.saturating_sub(at);
                let k = buf.len().min(self.most).min(self.data.len() - at).min(room);
                if k == 0 && room == 0 && !buf.is_empty() {
                    return request.complete(-i64::from(libc::ENOSPC));
                }
                self.data[at..at + k].copy_from_slice(&buf.as_slice()[..k]);
                k as i64
            }
            _ => 0,
        };
        request.complete(result)
    }
}

fn mem_stack(data: &[u8], depth: usize, most: usize) -> (Resubmit<MemEngine>, FileHandle) {
    let mut engine = Resubmit::new(
        MemEngine::new(data.to_vec(), depth, most),
        &EngineConfig::with_depth(depth as u32),
    );
    let handle = engine
        .add_file(File::open("/dev/null").unwrap(), "mem".into())
        .unwrap();
    (engine, handle)
}

#[test]
fn resubmissions_wait_while_the_engine_below_is_full() {
    let mut contents = vec![0; 16384];
    pattern(5, &mut contents);
    let (mut engine, handle) = mem_stack(&contents, 2, 1000);
    let pool = BufPool::new(2, 4096).unwrap();
    for k in 0..2 {
        let read = Request::read(handle, k * 4096, take(&pool, 4096), k);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    }
    assert_eq!(engine.commit().unwrap(), 2);
    engine.inner.refuse = 5;
    let mut done = Vec::new();
    let mut reaps = 0;
    while engine.in_flight() > 0 {
        engine.reap(1, 2, &mut done).unwrap();
        assert_eq!(engine.in_flight() + done.len(), 2, "nothing lost");
        reaps += 1;
        assert!(reaps < 100, "stuck");
    }
    assert_eq!(done.len(), 2);
    for completion in &done {
        assert_whole_read(
            completion,
            completion.user_data * 4096,
            4096,
            &contents,
            "mem",
        );
    }
    // 4096 bytes, 1000 at a time: sent again 4 times each.
    assert_eq!(engine.counters().short_ios, [8, 0]);
    assert_eq!(engine.inner.refuse, 0);
}

#[test]
fn a_reap_returns_only_finished_requests_and_as_many_as_asked() {
    let mut contents = vec![0; 65536];
    pattern(6, &mut contents);
    let (mut engine, handle) = mem_stack(&contents, 8, 1000);
    let pool = BufPool::new(8, 4096).unwrap();
    for k in 0..8 {
        let read = Request::read(handle, k * 4096, take(&pool, 4096), k);
        assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    }
    assert_eq!(engine.commit().unwrap(), 8);
    let mut done = Vec::new();
    assert_eq!(engine.reap(3, 3, &mut done).unwrap(), 3);
    assert_eq!(done.len(), 3);
    assert_eq!(engine.in_flight(), 5);
    while engine.in_flight() > 0 {
        assert!(engine.reap(1, 8, &mut done).unwrap() >= 1);
    }
    assert_eq!(done.len(), 8);
    for completion in &done {
        assert_whole_read(
            completion,
            completion.user_data * 4096,
            4096,
            &contents,
            "mem",
        );
    }
}

#[test]
fn an_error_after_progress_completes_with_the_progress() {
    let mut contents = vec![0; 5000];
    pattern(9, &mut contents);
    let (mut engine, handle) = mem_stack(&contents, 2, usize::MAX);
    engine.inner.direct = true;
    let pool = BufPool::new(2, 8192).unwrap();
    let done = run(
        &mut engine,
        [
            Request::read(handle, 0, take(&pool, 8192), 0),
            Request::read(handle, 100, take(&pool, 4096), 1),
        ],
    );
    let by_tag: BTreeMap<u64, &Completion> = done.iter().map(|c| (c.user_data, c)).collect();
    // The rest, at 5000, is off the sector: EINVAL, after 5000 bytes.
    let first = by_tag[&0];
    let buf = &first.buf;
    assert_eq!((first.result, first.offset), (5000, 0));
    assert_eq!((buf.start(), buf.len()), (0, 8192));
    assert!(buf.as_slice()[..5000] == contents[..]);
    // Without progress the error is the answer.
    assert_eq!(errno(by_tag[&1]), Some(libc::EINVAL));
    assert_eq!(engine.counters().short_ios, [1, 0]);
    // The error that cut the first one short is kept for the report.
    let short_errors = engine.counters().short_errors;
    assert_eq!(
        (short_errors.count, short_errors.first_errno),
        ([1, 0], [libc::EINVAL, 0])
    );
}

#[test]
fn commit_counts_the_callers_requests_only() {
    let contents = vec![7; 65536];
    let (mut engine, handle) = mem_stack(&contents, 4, 1000);
    let pool = BufPool::new(4, 4096).unwrap();
    for k in 0..2 {
        assert!(matches!(
            engine.queue(Request::read(handle, k * 4096, take(&pool, 4096), k)),
            QueueOutcome::Queued
        ));
    }
    assert_eq!(engine.commit().unwrap(), 2);
    // Queued, not committed: the reap below commits it with its
    // resubmissions, and the caller's next commit counts it.
    assert!(matches!(
        engine.queue(Request::read(handle, 8192, take(&pool, 4096), 2)),
        QueueOutcome::Queued
    ));
    let mut done = Vec::new();
    assert_eq!(engine.reap(2, 4, &mut done).unwrap(), 2);
    assert_eq!(engine.commit().unwrap(), 1);
    assert_eq!(engine.commit().unwrap(), 0);
    finish(&mut engine, &mut done);
    assert_eq!(done.len(), 3);
    assert!(done.iter().all(|c| c.result == 4096));
}

#[test]
fn retries_that_run_out_after_progress_report_the_progress() {
    let mut contents = vec![0; 65536];
    pattern(8, &mut contents);
    let config = EngineConfig::with_depth(4);
    let inner = Inject::new(
        MemEngine::new(contents.clone(), 4, 1000),
        plan("eagain:0.7,seed:3"),
    );
    let mut engine = Resubmit::new(inner, &config);
    engine.retry.limit = 2;
    let handle = engine
        .add_file(File::open("/dev/null").unwrap(), "mem".into())
        .unwrap();
    let pool = BufPool::new(5, 4096).unwrap();
    let (mut whole, mut partial, mut failed) = (0, 0, 0);
    for round in 0..50u64 {
        let reads =
            (0..4).map(|k| Request::read(handle, k * 4096, take(&pool, 4096), round * 4 + k));
        for completion in run(&mut engine, reads.collect::<Vec<_>>()) {
            let buf = &completion.buf;
            assert_eq!((buf.start(), buf.len()), (0, 4096));
            match completion.result {
                4096 => whole += 1,
                r if r > 0 => {
                    assert_eq!(r % 1000, 0, "whole transfers of the engine below");
                    partial += 1;
                }
                _ => {
                    assert_eq!(errno(&completion), Some(libc::EAGAIN));
                    failed += 1;
                }
            }
            let n = completion.result.max(0) as usize;
            let at = completion.offset as usize;
            assert!(buf.as_slice()[..n] == contents[at..at + n]);
        }
    }
    eprintln!("{whole} whole, {partial} partial, {failed} failed");
    assert!(whole > 0 && partial > 0 && failed > 0);
    assert_eq!(engine.in_flight(), 0);
}

/// Issue 20, bug 3: a resubmission that found the engine below full was
/// marked as the caller's (its commit counts it); moved down by a reap after
/// that commit, it was committed by no one: 1,000 `reap(1)` calls returned 0.
#[test]
fn a_resubmission_moved_down_after_the_callers_commit_is_committed() {
    let mut contents = vec![0; 8192];
    pattern(11, &mut contents);
    let (mut engine, handle) = mem_stack(&contents, 2, 1000);
    // Short inline, then `Busy` twice (resubmission, caller's commit), then queued.
    engine.inner.inline = 1;
    engine.inner.refuse = 2;
    let pool = BufPool::new(1, 4096).unwrap();
    let read = Request::read(handle, 4096, take(&pool, 4096), 5);
    assert!(matches!(engine.queue(read), QueueOutcome::Queued));
    assert_eq!(
        engine.commit().unwrap(),
        1,
        "the caller's request is handed over"
    );
    let mut done = Vec::new();
    let mut reaps = 0;
    while done.is_empty() {
        reaps += 1;
        assert!(reaps <= 1_000, "1,000 reap(1) calls and no completion");
        engine.reap(1, 1, &mut done).unwrap();
    }
    assert_whole_read(&done[0], 4096, 4096, &contents, "mem");
    assert_eq!(engine.in_flight(), 0);
    assert_eq!(engine.commit().unwrap(), 0, "counted once");
}

#[test]
fn a_write_that_runs_out_of_space_half_way_completes_short_and_keeps_enospc() {
    let contents = vec![0; 16384];
    let (mut engine, handle) = mem_stack(&contents, 2, usize::MAX);
    engine.inner.space = 5000;
    let pool = BufPool::new(2, 8192).unwrap();
    let mut buf = take(&pool, 8192);
    pattern(12, buf.as_mut_slice());
    let written = buf.as_slice().to_vec();
    let done = run(&mut engine, [Request::write(handle, 0, buf, 1)]);
    assert_eq!(done[0].result, 5000, "the bytes that made it");
    assert!(engine.inner.data[..5000] == written[..5000]);
    let short_errors = engine.counters().short_errors;
    assert_eq!(
        (short_errors.count, short_errors.first_errno),
        ([0, 1], [0, libc::ENOSPC])
    );
    // Out of space from the start: the error is the answer, not a short count.
    let done = run(
        &mut engine,
        [Request::write(handle, 6000, take(&pool, 100), 2)],
    );
    assert_eq!(errno(&done[0]), Some(libc::ENOSPC));
    assert_eq!(engine.counters().short_errors.count, [0, 1]);
}

/// Issue 44, defect 1: records were named by the buffer's first byte, so
/// with two writes of one caller's buffer in flight, the whole one took the
/// record of the one sent again for its rest: it came back with the other's
/// offset and 6144 bytes, and the other's rest as its error.
#[test]
fn two_writes_of_one_callers_buffer_each_get_their_own_completion() {
    use crate::buf::caller::Caller;
    let contents = vec![0; 16384];
    let (mut engine, handle) = mem_stack(&contents, 2, usize::MAX);
    // Writes end at 6144 (as RLIMIT_FSIZE ends them): the first write gets
    // 2048 bytes in, and its rest fails.
    engine.inner.space = 6144;
    let source = Caller::new(8192);
    let window = |len: usize| {
        let mut buf = source.buf();
        buf.set_len(len);
        buf
    };
    for request in [
        Request::write(handle, 4096, window(4096), 1),
        Request::write(handle, 0, window(4096), 2),
    ] {
        assert!(matches!(engine.queue(request), QueueOutcome::Queued));
    }
    assert_eq!(engine.commit().unwrap(), 2);
    let mut done = Vec::new();
    while engine.in_flight() > 0 {
        let before = done.len();
        engine.reap(1, 1, &mut done).unwrap();
        assert!(done.len() <= before + 1, "reaped more than asked");
    }
    let by_tag: BTreeMap<u64, &Completion> = done.iter().map(|c| (c.user_data, c)).collect();
    assert_eq!(by_tag.len(), 2, "{done:?}");
    let cut = by_tag[&1];
    assert_eq!((cut.result, cut.offset), (2048, 4096), "{cut:?}");
    assert_eq!((cut.buf.start(), cut.buf.len()), (0, 4096));
    let whole = by_tag[&2];
    assert_eq!((whole.result, whole.offset), (4096, 0), "{whole:?}");
    assert_eq!((whole.buf.start(), whole.buf.len()), (0, 4096));
    assert_eq!(engine.counters().short_errors.count, [0, 1]);
}
