use std::time::{Duration, Instant};

use super::*;
use crate::buf::BufPool;
use crate::engine::EngineConfig;
use crate::engine::io_uring::IoUringEngine;
use crate::engine::null::NullEngine;
use crate::engine::psync::PsyncEngine;
use crate::engine::resubmit::tests::{add, data_file, finish, plan, run, scratch, take};
use crate::file::OpenOptions;
use crate::probe;
use crate::request::Op;

#[test]
fn a_plan_reads_back_as_it_shows() {
    let text = "eio:0.001,short:0.01,eagain:0.01,delay:0.001@5ms";
    let parsed = plan(text);
    assert_eq!(
        parsed,
        FaultPlan {
            eio: 0.001,
            short: 0.01,
            eagain: 0.01,
            delay: 0.001,
            delay_by: Duration::from_millis(5),
            corrupt: 0.0,
            seed: DEFAULT_SEED,
        }
    );
    assert_eq!(parsed.to_string(), text);
    for (given, shown) in [
        ("none", "none"),
        (" eagain : 1 , seed:42 ", "eagain:1,seed:42"),
        ("delay:0.5@250us", "delay:0.5@250us"),
        ("delay:1@2s", "delay:1@2s"),
        ("delay:0.1@1.5ms", "delay:0.1@1500us"),
        ("delay:0.1@7ns", "delay:0.1@7ns"),
        ("short:0.25,eio:0.75", "eio:0.75,short:0.25"),
        ("corrupt:0.5,eio:0.25", "eio:0.25,corrupt:0.5"),
        (
            "eio:0.1,short:0.2,eagain:0.3,delay:0.4@1ms",
            "eio:0.1,short:0.2,eagain:0.3,delay:0.4@1ms",
        ),
    ] {
        let parsed = plan(given);
        assert_eq!(parsed.to_string(), shown, "{given}");
        assert_eq!(plan(shown), parsed, "{given}: round trip");
    }
    assert_eq!(plan("none"), FaultPlan::default());
}

#[test]
fn a_bad_plan_is_refused_naming_the_bad_part() {
    for (text, part, says) in [
        ("eio:2", "eio:2", "not between 0 and 1"),
        ("eio:-0.1", "eio:-0.1", "not between 0 and 1"),
        ("eio:NaN", "eio:NaN", "not between 0 and 1"),
        ("eio:lots", "eio:lots", "not a probability"),
        ("foo:0.1", "foo:0.1", "unknown fault `foo`"),
        ("eio", "eio", "expected fault:probability"),
        ("delay:0.1", "delay:0.1", "delay needs a duration"),
        ("delay:0.1@5", "delay:0.1@5", "give a unit"),
        ("delay:0.1@fastms", "delay:0.1@fastms", "expected a number"),
        ("delay:0.1@-5ms", "delay:0.1@-5ms", "out of range"),
        ("eio:0.6,short:0.6", "eio:0.6,short:0.6", "add up to 1.2"),
        ("eio:0.1,eio:0.2", "eio:0.2", "given twice"),
        ("eio:0.1,", "", "expected fault:probability"),
        ("seed:x", "seed:x", "not a seed"),
        ("", "", "empty"),
    ] {
        let err = text.parse::<FaultPlan>().unwrap_err();
        assert_eq!(err.part, part, "{text}: {err}");
        assert!(err.reason.contains(says), "{text}: {err}");
        let line = err.to_string();
        assert!(
            !line.contains('\n') && line.contains(&format!("`{part}`")),
            "{line}"
        );
    }
}

/// An engine that completes everything inline and moves no data.
fn null() -> NullEngine {
    NullEngine::new(&EngineConfig::with_depth(1))
}

/// Runs `n` 4096-byte reads through `engine`; returns their results.
fn results(engine: &mut Inject<NullEngine>, n: usize) -> Vec<i64> {
    let pool = BufPool::new(1, 4096).unwrap();
    let handle = engine
        .add_file(File::open("/dev/null").unwrap(), "/dev/null".into())
        .unwrap();
    (0..n)
        .map(
            |i| match engine.queue(Request::read(handle, 0, take(&pool, 4096), i as u64)) {
                QueueOutcome::Completed(done) => {
                    assert_eq!(done.buf.len(), 4096, "window restored");
                    done.result
                }
                other => panic!("{other:?}"),
            },
        )
        .collect()
}

#[test]
fn draws_follow_the_plan_and_its_seed() {
    const N: usize = 20_000;
    let faults = "eio:0.1,eagain:0.2,short:0.3";
    let mut engine = Inject::new(null(), plan(faults));
    let first = results(&mut engine, N);
    let counts = engine.counters().injected;
    let count = |r: i64| first.iter().filter(|&&x| x == r).count() as u64;
    assert_eq!(count(-i64::from(libc::EIO)), counts.eio);
    assert_eq!(count(-i64::from(libc::EAGAIN)), counts.eagain);
    assert_eq!(count(2048), counts.short);
    assert_eq!(
        count(4096) as usize,
        N - (counts.eio + counts.eagain + counts.short) as usize
    );
    // Within 5 standard deviations of what the probabilities say.
    for (got, p) in [(counts.eio, 0.1), (counts.eagain, 0.2), (counts.short, 0.3)] {
        let expected = N as f64 * p;
        let sd = (N as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (got as f64 - expected).abs() < 5.0 * sd,
            "{got} for p = {p}: {counts:?}"
        );
    }
    assert_eq!(counts.delay, 0);
    let again = results(&mut Inject::new(null(), plan(faults)), N);
    assert!(first == again, "the same seed gives the same faults");
    let other = results(
        &mut Inject::new(null(), plan(&format!("{faults},seed:1"))),
        N,
    );
    assert!(first != other, "another seed gives other faults");
}

#[test]
fn nothing_is_injected_without_a_plan() {
    let mut engine = Inject::new(null(), FaultPlan::default());
    assert!(results(&mut engine, 1000).iter().all(|&r| r == 4096));
    assert_eq!(engine.counters().injected, InjectedCounts::default());
    let mut engine = Inject::new(null(), plan("eio:1"));
    assert!(
        results(&mut engine, 1000)
            .iter()
            .all(|&r| r == -i64::from(libc::EIO))
    );
}

#[test]
fn a_shortened_request_comes_back_short_with_its_window() {
    let pool = BufPool::new(4, 8192).unwrap();
    let mut engine = Inject::new(PsyncEngine::new(&EngineConfig::default()), plan("short:1"));
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16384);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    let one = |engine: &mut Inject<PsyncEngine>, request| match engine.queue(request) {
        QueueOutcome::Completed(done) => done,
        other => panic!("{other:?}"),
    };
    let done = one(
        &mut engine,
        Request::read(handle, 4096, take(&pool, 4096), 0),
    );
    let buf = &done.buf;
    assert_eq!((done.result, buf.start(), buf.len()), (2048, 0, 4096));
    assert!(done.is_short());
    assert!(buf.as_slice()[..2048] == contents[4096..6144]);
    // A window that starts further in: halved and rounded down to 512.
    let mut inside = take(&pool, 8192);
    inside.advance(512);
    inside.set_len(3584);
    let done = one(&mut engine, Request::read(handle, 0, inside, 1));
    let buf = &done.buf;
    assert_eq!((done.result, buf.start(), buf.len()), (1536, 512, 3584));
    assert!(buf.as_slice()[..1536] == contents[..1536]);
    assert_eq!(engine.counters().injected.short, 2);
    // Too small to halve, or nothing to halve: left alone, not counted.
    let done = one(&mut engine, Request::read(handle, 0, take(&pool, 1023), 2));
    assert_eq!(done.result, 1023);
    let done = one(&mut engine, Request::sync(handle, true, 3));
    assert_eq!((done.op, done.result), (Op::Fdatasync, 0));
    assert_eq!(engine.counters().injected.short, 2);
}

#[test]
fn a_shortened_request_comes_back_short_from_an_asynchronous_engine() {
    if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping io_uring: {reason}");
        return;
    }
    let pool = BufPool::new(4, 4096).unwrap();
    let config = EngineConfig::with_depth(4);
    let mut engine = Inject::new(
        IoUringEngine::new(&config, Some(&pool)).unwrap(),
        plan("short:1"),
    );
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16384);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    let done = run(
        &mut engine,
        (0..4)
            .map(|k| Request::read(handle, k * 4096, take(&pool, 4096), k))
            .collect::<Vec<_>>(),
    );
    assert_eq!(done.len(), 4);
    for done in &done {
        let buf = &done.buf;
        assert_eq!((done.result, buf.start(), buf.len()), (2048, 0, 4096));
        let at = done.offset as usize;
        assert!(buf.as_slice()[..2048] == contents[at..at + 2048]);
    }
    assert_eq!(engine.counters().injected.short, 4);
}

#[test]
fn errors_from_below_pass_through() {
    let pool = BufPool::new(20, 4096).unwrap();
    let mut engine = Inject::new(
        PsyncEngine::new(&EngineConfig::default()),
        plan("short:0.5,delay:0.5@1us"),
    );
    let done = run(
        &mut engine,
        (0..20)
            .map(|k| Request::read(FileHandle(7), 0, take(&pool, 4096), k))
            .collect::<Vec<_>>(),
    );
    assert_eq!(done.len(), 20);
    for done in &done {
        assert_eq!(done.result, -i64::from(libc::EBADF));
        assert_eq!(done.buf.len(), 4096);
    }
    let counts = engine.counters().injected;
    assert_eq!((counts.eio, counts.eagain), (0, 0));
    assert_eq!(counts.short + counts.delay, 20);
}

#[test]
fn a_delayed_request_blocks_a_synchronous_caller() {
    let pool = BufPool::new(1, 4096).unwrap();
    let mut engine = Inject::new(
        PsyncEngine::new(&EngineConfig::default()),
        plan("delay:1@3ms"),
    );
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "f", 4096);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    for k in 0..3 {
        let start = Instant::now();
        let QueueOutcome::Completed(done) =
            engine.queue(Request::read(handle, 0, take(&pool, 4096), k))
        else {
            panic!("a synchronous engine stays synchronous")
        };
        assert!(
            start.elapsed() >= Duration::from_millis(3),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(done.result, 4096);
    }
    assert_eq!(engine.counters().injected.delay, 3);
    assert!(engine.is_synchronous());
}

#[test]
fn a_delayed_completion_is_held_back_and_still_in_flight() {
    if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping io_uring: {reason}");
        return;
    }
    let pool = BufPool::new(2, 4096).unwrap();
    let config = EngineConfig::with_depth(2);
    let mut engine = Inject::new(
        IoUringEngine::new(&config, Some(&pool)).unwrap(),
        // Long enough that the checks made while it is held back run before
        // it is due even on a busy machine; the reap waits it out.
        plan("delay:1@1s"),
    );
    let dir = scratch();
    let (path, _) = data_file(dir.path(), "f", 8192);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    let start = Instant::now();
    assert!(matches!(
        engine.queue(Request::read(handle, 0, take(&pool, 4096), 1)),
        QueueOutcome::Queued
    ));
    engine.commit().unwrap();
    let mut done = Vec::new();
    assert_eq!(engine.reap(0, 4, &mut done).unwrap(), 0, "not yet due");
    assert_eq!(engine.in_flight(), 1);
    assert!(matches!(
        engine.remove_file(handle),
        Err(Error::FileBusy { .. })
    ));
    // Only the held-back completion is left: the reap sleeps until it is due.
    assert_eq!(engine.reap(1, 4, &mut done).unwrap(), 1);
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!((done[0].user_data, done[0].result), (1, 4096));
    assert_eq!(engine.in_flight(), 0);
    finish(&mut engine, &mut done);
    engine.remove_file(handle).unwrap();
}

#[test]
fn the_description_names_the_plan() {
    let engine = Inject::new(null(), plan("eio:0.5,delay:0.25@5ms"));
    assert_eq!(
        engine.description(),
        "null + inject(eio:0.5,delay:0.25@5ms)"
    );
    assert_eq!(engine.kind(), EngineKind::Null);
    assert_eq!(engine.plan(), &plan("delay:0.25@5ms,eio:0.5"));
}

/// Bits that differ between two buffers.
fn bits_apart(a: &[u8], b: &[u8]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

#[test]
fn a_corrupted_read_comes_back_with_one_bit_flipped_and_writes_are_untouched() {
    let pool = BufPool::new(4, 4096).unwrap();
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16384);
    let mut engine = Inject::new(
        PsyncEngine::new(&EngineConfig::default()),
        plan("corrupt:1"),
    );
    let read_write = OpenOptions {
        write: true,
        ..OpenOptions::default()
    };
    let handle = add(&mut engine, &path, &read_write);
    for i in 0..4u64 {
        let done = match engine.queue(Request::read(handle, i * 4096, take(&pool, 4096), i)) {
            QueueOutcome::Completed(done) => done,
            other => panic!("{other:?}"),
        };
        assert_eq!(done.result, 4096);
        let at = (i * 4096) as usize;
        let read = done.buf.as_slice();
        assert_eq!(bits_apart(read, &contents[at..at + 4096]), 1, "read {i}");
    }
    // A write is not a read: it goes down as it came.
    let mut buf = take(&pool, 4096);
    buf.as_mut_slice().fill(7);
    match engine.queue(Request::write(handle, 0, buf, 9)) {
        QueueOutcome::Completed(done) => assert_eq!(done.result, 4096),
        other => panic!("{other:?}"),
    }
    assert!(
        std::fs::read(&path).unwrap()[..4096]
            .iter()
            .all(|&b| b == 7)
    );
    assert_eq!(engine.counters().injected.corrupt, 4);
}

#[test]
fn a_corrupted_read_comes_back_with_one_bit_flipped_from_an_asynchronous_engine() {
    if let Err(reason) = probe::engine_available(EngineKind::IoUring) {
        eprintln!("skipping io_uring: {reason}");
        return;
    }
    let pool = BufPool::new(4, 4096).unwrap();
    let config = EngineConfig::with_depth(4);
    let mut engine = Inject::new(
        IoUringEngine::new(&config, Some(&pool)).unwrap(),
        plan("corrupt:0.5"),
    );
    let dir = scratch();
    let (path, contents) = data_file(dir.path(), "f", 16384);
    let handle = add(&mut engine, &path, &OpenOptions::default());
    let mut flipped = 0;
    for round in 0..25u64 {
        for i in 0..4u64 {
            match engine.queue(Request::read(handle, i * 4096, take(&pool, 4096), i)) {
                QueueOutcome::Queued => {}
                other => panic!("{other:?}"),
            }
        }
        engine.commit().unwrap();
        let mut out = Vec::new();
        while out.len() < 4 {
            engine.reap(1, 4, &mut out).unwrap();
        }
        for done in out {
            let at = (done.offset) as usize;
            let apart = bits_apart(done.buf.as_slice(), &contents[at..at + 4096]);
            assert!(apart <= 1, "round {round}: {apart} bits");
            flipped += u64::from(apart);
        }
    }
    assert_eq!(flipped, engine.counters().injected.corrupt);
    assert!(flipped > 20 && flipped < 80, "{flipped} of 100 at p = 0.5");
}
